"""tidal.passes: Tidal's Python passes and the pipeline machinery that runs
them together with upstream MLIR passes.

    from tidal.passes import run_pipeline
    run_pipeline(module, "builtin.module(sdg-dce,canonicalize)")

Passes are looked up by name in a lazy registry (`get_pass`,
`all_pass_names`, `register_pass`); importing this package does not import
any pass module. See `base.ModulePass` for how to write one.
"""
from .base import ModulePass, OptionSpec, PassFailure, option, pass_options
from .pipeline import Pipeline, PipelineError, TidalStep, UpstreamStep, parse_pipeline
from .registry import UnknownPassError, all_pass_names, get_pass, register_pass, unregister_pass
from .runner import build_pass_manager, is_known_pass, run_pipeline, upstream_pass_exists

__all__ = [
    "ModulePass", "OptionSpec", "PassFailure", "option", "pass_options",
    "Pipeline", "PipelineError", "TidalStep", "UpstreamStep", "parse_pipeline",
    "UnknownPassError", "all_pass_names", "get_pass", "register_pass", "unregister_pass",
    "build_pass_manager", "is_known_pass", "run_pipeline", "upstream_pass_exists",
]
