"""The stages of `p.compile()`, in order: this list is the pipeline.

    rt                 trace the Python program into the rt dialect       (.mlir)
    rt-to-sdg          the symbolic dependence graph                      (.mlir)
    <each sdg pass>    `passes`, by default DEFAULT_SDG_PASSES            (.mlir)
    ... then, for the scheduled backends (tidal.runtime.scheduled.compile_sdg):
    sdg-schedule       isl schedule, as the graph's tidal.schedule attr   (.mlir)
    schedule           the schedule tree and the loop nest                (.txt)
    sdg-lower-to-scf   the scf loops over the bounds                      (.mlir)
    storage            the store of every value, checked                  (.txt)
    memory-plan        the array stores' storages, sizes symbolic         (.txt)
    host               the generated launchers and host program           (.py)
    load               the host program compiled, its kernels wrapped     (.txt: kernel names)

Every stage is timed and kept (`exe.stages`, `exe.timings()`), and written
to a directory with `p.compile(dump=DIR)` or `TIDAL_DUMP=DIR`
(tidal.passes.stages). Each `.mlir` stage re-parses with `tidal-opt`, and a
pass stage is its recorded pipeline applied to the previous `.mlir` file.
"""
from __future__ import annotations

import sys
from typing import Any, Iterable, Mapping, Sequence

from tidal import config
import tidal.lowering.passes  # noqa: F401  (registers sdg-schedule, sdg-lower-to-scf, sdg-view-graph)
from tidal.passes.stages import CompileStages, module_snapshot

from .errors import TidalError

__all__ = ["DEFAULT_SDG_PASSES", "default_passes", "trace_stage", "sdg_stages", "make_stages"]

# The sdg passes every compile runs after rt-to-sdg. The order matters, each pass
# preparing the next: clean-up first (dce, restrict-merges, simplify, cse), so that
# equal ops merge; reassociate while every op still runs per point (its cost model
# sums per-point costs); lift before vectorize (it removes the window reads that stop
# batching); vectorize, accumulate and tile before fuse (tiling splits the freshly
# batched axes, and the ops of a tile fuse); contract after tile (tiling must see the
# sums it splits); fuse last. docs/pipeline.md explains each pass.
DEFAULT_SDG_PASSES: tuple[str, ...] = ("sdg-dce", "sdg-restrict-merges", "sdg-simplify", "cse", "sdg-reassociate",
                                       "sdg-lift", "sdg-vectorize", "sdg-accumulate", "sdg-tile", "sdg-contract",
                                       "sdg-fuse")


def default_passes(*, without: Iterable[str] = (),
                   options: Mapping[str, str | Mapping[str, Any]] | None = None) -> tuple[str, ...]:
    """The default sdg pipeline, DEFAULT_SDG_PASSES, with passes left out or given
    options, for `p.compile(passes=...)` (and `tidal-opt --pass-pipeline`, joined
    with commas):

        td.default_passes(without=["sdg-tile"])                          # no tiling
        td.default_passes(options={"sdg-tile": {"tile": 16, "min-bytes": 0}})
        td.default_passes(options={"sdg-vectorize": "max-block-bytes=0"},
                          without=["sdg-accumulate"])

    An option mapping is written `name{key=value ...}` (booleans as true/false);
    a string is the text between the braces. A name that is not in the default
    pipeline, a pass both left out and given options, or an option the pass
    does not have is a TidalError, raised here.
    """
    without = [without] if isinstance(without, str) else list(without)
    options = dict(options or {})
    named = ", ".join(DEFAULT_SDG_PASSES)
    for name in without + list(options):
        if name not in DEFAULT_SDG_PASSES:
            raise TidalError(f"td.default_passes: {name!r} is not in the default pipeline",
                             f"name one of: {named}")
    both = sorted(set(without) & set(options))
    if both:
        raise TidalError(f"td.default_passes: {both[0]!r} is both left out and given options",
                         "leave it out (without=...) or give it options (options=...), not both")

    def element(name: str) -> str:
        given = options.get(name)
        if given is None:
            return name
        if isinstance(given, Mapping):
            given = " ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in given.items())
        elif not isinstance(given, str):
            raise TidalError(f"td.default_passes: the options of {name!r} are a {type(given).__name__}",
                             "give a mapping ({'tile': 16}) or the text between the braces ('tile=16')")
        return f"{name}{{{given}}}" if given.strip() else name

    passes = tuple(element(name) for name in DEFAULT_SDG_PASSES if name not in without)
    try:                   # an unknown option fails now, at the user's call, not at compile
        _sdg_steps(passes)
    except TidalError as e:
        raise TidalError(e.reason.replace("p.compile(passes=...)", "td.default_passes", 1),
                         "give the pass options it lists (tidal-opt --list-passes shows every pass's)") from None
    return passes




def _plugins(steps) -> tuple:
    """Files of the modules outside Tidal that define the pipeline's passes
    (named in reproducers as --load-pass-plugin)."""
    out = []
    for _, _, step in steps:
        if not hasattr(step, "pass_"):
            continue
        module = type(step.pass_).__module__
        path = getattr(sys.modules.get(module), "__file__", None)
        if path and not module.startswith("tidal.") and path not in out:
            out.append(path)
    return tuple(out)


def _sdg_steps(passes: Sequence[str] | str | None):
    from tidal.passes import PipelineError, parse_pipeline
    from tidal.passes.runner import upstream_pass_exists

    if passes is None:
        passes = DEFAULT_SDG_PASSES
    text = passes if isinstance(passes, str) else ",".join(passes)
    if not text.strip():
        return []
    try:
        pipeline = parse_pipeline(f"builtin.module({text})")
    except PipelineError as e:
        raise TidalError(f"p.compile(passes=...): {e.message} in {text!r}",
                         "name registered passes, e.g. passes=['sdg-dce'] (tidal-opt --list-passes)") from None
    steps = []
    for step in pipeline.steps:   # (stage name, pipeline element text, step)
        if hasattr(step, "pass_"):
            element = pipeline.text[step.ref.start:step.ref.end] if step.ref else step.name
            steps.append((step.name, element, step))
        else:
            unknown = [r.name for r in step.refs if not upstream_pass_exists(r.name)]
            if unknown:
                raise TidalError(f"p.compile(passes=...): '{unknown[0]}' is not a registered pass",
                                 "name Tidal or MLIR passes, e.g. passes=['sdg-dce', 'cse'] "
                                 "(tidal-opt --list-passes lists them)")
            steps.append((step.text, step.text, step))
    return steps


def make_stages(passes, dump, progress):
    steps = _sdg_steps(passes)
    dump = dump if dump is not None else config.dump.value
    progress = bool(progress if progress is not None else config.progress.value)
    return steps, CompileStages(dump, progress=progress, plugins=_plugins(steps), user_errors=(TidalError,))


def _run_step(step, root) -> None:
    from tidal.passes import TidalStep, run_pipeline

    if isinstance(step, TidalStep):
        step.pass_.run(root)
        root.verify()
    else:
        run_pipeline(root, f"builtin.module({step.text})")


def trace_stage(program, stages: CompileStages):
    """The `rt` stage: the traced program."""
    return stages.run("rt", program.module, text=module_snapshot, suffix=".mlir")


def sdg_stages(program, steps, stages: CompileStages):
    """rt-to-sdg and the sdg passes, on a fresh trace; returns the sdg module."""
    from tidal.passes.rt_to_sdg import rt_to_sdg

    sdg = program.module()

    def convert():
        rt_to_sdg(sdg)
        return sdg

    stages.run("rt-to-sdg", convert, text=module_snapshot, suffix=".mlir", pipeline="builtin.module(rt-to-sdg)")
    root = sdg.operation
    for name, element, step in steps:
        stages.run(name, lambda step=step: _run_step(step, root), text=lambda _: module_snapshot(sdg),
                   suffix=".mlir", pipeline=f"builtin.module({element})")
    return sdg
