"""Pictures of a compiled program: `exe.draw(kind, path, **options)`.

* `exe.draw("sdg", "g.svg")`: the symbolic dependence graph the program was
  compiled from (after the sdg passes), as Graphviz DOT
  (tidal.lowering.sdg_dot): `.dot` writes the text, `.svg`/`.png`/`.pdf` lay
  it out with Graphviz through pygraphviz, whose wheels bundle Graphviz
  (`pip install 'tidal[draw]'`).
* `exe.draw("schedule", "s.png", bounds={T: 8})`: the schedule a run with
  those bounds executes, as a timeline: x is the execution order, y the op,
  one mark per launch labelled with its point, one colour per host loop. It
  is recorded from the generated host program itself
  (tidal.runtime.scheduled.schedule_trace), drawn with matplotlib.
"""
from __future__ import annotations

import os
from typing import Any

from .errors import TidalError

__all__ = ["draw", "sdg_dot", "render_dot"]

_GRAPHVIZ_FORMATS = ("svg", "png", "pdf")


def _extension(path: str, allowed: tuple) -> str:
    ext = os.path.splitext(os.fspath(path))[1].lstrip(".").lower()
    if ext not in allowed:
        raise TidalError(f"cannot draw to {os.fspath(path)!r}: the format follows the extension, "
                         f"one of {', '.join('.' + a for a in allowed)}", "e.g. exe.draw('sdg', 'g.svg')")
    return ext


def sdg_dot(exe: Any) -> str:
    """The DOT text of the program's symbolic dependence graph."""
    from tidal.lowering.graph import graphs_in, read_graph
    from tidal.lowering.sdg_dot import graph_dot

    with exe.module.context:
        return "".join(graph_dot(read_graph(g)) for g in graphs_in(exe.module.operation))


# Graphviz 14 (bundled in pygraphviz's wheels) crashes in gvFreeLayout, after
# rendering, on some graphs with edge labels (a use after free in free_label:
# whether it hits depends on address-space randomisation). Rendering runs in a
# child process that lays out, renders, writes the result and exits without
# freeing the layout: the operating system reclaims the memory. A crash before
# the output is written is retried with other layout settings.
_RENDER = ("import os, sys\n"
           "from pygraphviz import AGraph, graphviz as gv\n"
           "g = AGraph(string=sys.stdin.read())\n"
           "gvc = gv.gvContextWithBuiltins()\n"
           "if gv.gvLayout(gvc, g.handle, b'dot'):\n"
           "    sys.exit('Graphviz could not lay out the graph')\n"
           "err, data = gv.gvRenderData(gvc, g.handle, sys.argv[1].encode())\n"
           "if err:\n"
           "    sys.exit('Graphviz could not render the graph')\n"
           "sys.stdout.buffer.write(data)\n"
           "sys.stdout.flush()\n"
           "os._exit(0)\n")
_RETRIES = ("", 'splines="polyline";', "newrank=true;", 'newrank=true; splines="polyline";')


def render_dot(dot: str, fmt: str) -> bytes:
    """DOT laid out and rendered by Graphviz (pygraphviz, in a child process)."""
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec("pygraphviz") is None:
        raise TidalError(f"rendering .{fmt} needs Graphviz, through pygraphviz (its wheels bundle it)",
                         "pip install 'pygraphviz>=2.0.4' (or 'tidal[draw]'); .dot files need nothing")
    errors = []
    for extra in _RETRIES:
        text = dot.replace("{\n", "{\n  " + extra + "\n", 1) if extra else dot
        r = subprocess.run([sys.executable, "-c", _RENDER, fmt], input=text.encode(), capture_output=True,
                           timeout=300)
        if r.returncode == 0 and r.stdout:
            return r.stdout
        said = r.stderr.decode(errors="replace").strip().splitlines()
        errors.append(said[-1] if r.returncode == 1 and said else f"exit status {r.returncode}")
    raise TidalError(f"Graphviz failed to lay out the graph ({', '.join(errors)})",
                     "draw to .dot and render it with another Graphviz (dot -Tsvg g.dot)")


def _draw_sdg(exe: Any, path: str) -> None:
    ext = _extension(path, ("dot",) + _GRAPHVIZ_FORMATS)
    dot = sdg_dot(exe)
    if ext == "dot":
        with open(path, "w") as f:
            f.write(dot)
        return
    try:
        data = render_dot(dot, ext)
    except TidalError as e:
        fallback = os.path.splitext(os.fspath(path))[0] + ".dot"
        with open(fallback, "w") as f:
            f.write(dot)
        raise TidalError(f"{e.reason}; the DOT text is in {fallback}", e.hint) from None
    with open(path, "wb") as f:
        f.write(data)


def _draw_schedule(exe: Any, path: str, bounds: Any = None, annotate: bool = True) -> None:
    ext = _extension(path, ("png", "svg", "pdf"))
    if exe.compiled is None:
        from .executable import scheduled_backends
        raise TidalError(f"the {exe.backend} backend evaluates on demand and has no schedule to draw",
                         f"compile with {scheduled_backends()}")
    if bounds is None:
        raise TidalError("drawing a schedule needs small bounds", "e.g. exe.draw('schedule', 's.png', "
                         "bounds={T: 8})")
    from .executable import normalize_bounds

    bounds = normalize_bounds(exe.program, bounds)
    launches = exe.compiled.trace(bounds)
    try:
        import matplotlib
        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise TidalError("drawing a schedule needs matplotlib", "pip install matplotlib (or 'tidal[draw]')") from None
    graph = exe.compiled.graph
    nodes = sorted({launch.node for launch in launches})
    row = {k: len(nodes) - 1 - i for i, k in enumerate(nodes)}
    width = min(60.0, max(6.0, 0.28 * len(launches) + 3))
    height = min(40.0, max(2.5, 0.38 * len(nodes) + 1.2))
    fig, ax = plt.subplots(figsize=(width, height))
    colours = plt.get_cmap("tab10")
    loops = sorted({launch.loop for launch in launches})
    for loop in loops:
        xs = [x for x, launch in enumerate(launches) if launch.loop == loop]
        ys = [row[launches[x].node] for x in xs]
        ax.scatter(xs, ys, s=36, color=colours(loops.index(loop) % 10), zorder=2,
                   label="straight-line code" if loop == 0 else f"host loop {loop}")
    if annotate:
        for x, launch in enumerate(launches):
            if launch.point:
                ax.annotate(",".join(map(str, launch.point)), (x, row[launch.node]), fontsize=6,
                            textcoords="offset points", xytext=(0, 5), ha="center")
    ax.set_yticks(range(len(nodes)))
    ax.set_yticklabels([graph.nodes[k].label for k in reversed(nodes)], fontsize=7)
    ax.set_xlabel("execution order (launch number)")
    ax.grid(axis="y", color="#dddddd", zorder=0)
    shown = ", ".join(f"{k} = {v}" for k, v in bounds.items())
    ax.set_title(f"@{graph.name}: executed schedule ({len(launches)} launches, {shown})", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(path, format=ext, dpi=110)
    plt.close(fig)


def draw(exe: Any, kind: str, path: Any, **options: Any) -> None:
    """`exe.draw(kind, path, **options)`; see the module doc."""
    path = os.fspath(path)
    if kind == "sdg":
        if options:
            raise TidalError(f"exe.draw('sdg') takes no options, got {', '.join(options)}", "remove them")
        _draw_sdg(exe, path)
    elif kind == "schedule":
        unknown = set(options) - {"bounds", "annotate"}
        if unknown:
            raise TidalError(f"exe.draw('schedule') does not take {', '.join(sorted(unknown))}",
                             "options: bounds={T: 8}, annotate=True")
        _draw_schedule(exe, path, **options)
    else:
        raise TidalError(f"exe.draw: unknown kind {kind!r}", "draw 'sdg' or 'schedule'")
