"""The table of Tidal passes, imported lazily.

Each pass lives in its own module; the table maps its pipeline name to
"module:Class" and the module is imported the first time the pass is asked
for, so `import tidal.passes` (and `tidal-opt --help`) stays cheap however
many passes there are.

    get_pass("sdg-dce")          -> the class SdgDeadCodeElimination
    all_pass_names()             -> ["sdg-dce", ...] (sorted)
    register_pass(MyPass)        -> adds a class (tests, plugins)
    register_pass("x", "pkg.mod:Cls") adds a lazy entry
"""
from __future__ import annotations

import importlib
from typing import Union

from .base import ModulePass

__all__ = ["get_pass", "all_pass_names", "register_pass", "unregister_pass", "is_loaded",
           "UnknownPassError"]

# name -> "module:Class" (absolute module path) of this layer's passes. One pass per module.
_TABLE: dict[str, str] = {
    "rt-to-sdg": "tidal.passes.rt_to_sdg:RtToSdg",
    "sdg-accumulate": "tidal.passes.sdg_accumulate:SdgAccumulate",
    "sdg-contract": "tidal.passes.sdg_contract:SdgContract",
    "sdg-dce": "tidal.passes.sdg_dce:SdgDeadCodeElimination",
    "sdg-fuse": "tidal.passes.sdg_fuse:SdgFuse",
    "sdg-lift": "tidal.passes.sdg_lift:SdgLift",
    "sdg-lift-recurrence": "tidal.passes.sdg_lift_recurrence:SdgLiftRecurrence",
    "sdg-reassociate": "tidal.passes.sdg_reassociate:SdgReassociate",
    "sdg-restrict-merges": "tidal.passes.sdg_restrict_merges:SdgRestrictMerges",
    "sdg-simplify": "tidal.passes.sdg_simplify:SdgSimplify",
    "sdg-tile": "tidal.passes.sdg_tile:SdgTile",
    "sdg-vectorize": "tidal.passes.sdg_vectorize:SdgVectorize",
    "sdg-inline-islands": "tidal.passes.sdg_inline_islands:SdgInlineIslands",
    "sdg-verify-dependences": "tidal.passes.sdg_verify_dependences:SdgVerifyDependences",
}
# The layers above add theirs with register_pass (tidal.lowering.passes: sdg-schedule,
# sdg-lower-to-scf, sdg-view-graph); tidal-opt and the frontend's compile pipeline
# register them when they start.
_LOADED: dict[str, type[ModulePass]] = {}


class UnknownPassError(KeyError):
    """`get_pass` was asked for a name that is not registered."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def all_pass_names() -> list[str]:
    """Names of all registered Tidal passes, sorted."""
    return sorted(set(_TABLE) | set(_LOADED))


def is_loaded(name: str) -> bool:
    """Whether `name`'s class has been imported already (for tests)."""
    return name in _LOADED


def get_pass(name: str) -> type[ModulePass]:
    """The pass class registered under `name`, importing its module on first
    use. Raises UnknownPassError for an unregistered name."""
    cls = _LOADED.get(name)
    if cls is not None:
        return cls
    target = _TABLE.get(name)
    if target is None:
        raise UnknownPassError(f"no Tidal pass named '{name}'")
    module_name, _, class_name = target.partition(":")
    module = importlib.import_module(module_name)
    cls = getattr(module, class_name, None)
    if cls is None:
        raise ImportError(f"pass '{name}': module {module_name} has no class {class_name}")
    _check_pass_class(cls, name)
    _LOADED[name] = cls
    return cls


def _check_pass_class(cls: type, name: str) -> None:
    if not (isinstance(cls, type) and issubclass(cls, ModulePass)):
        raise TypeError(f"pass '{name}': {cls!r} is not a ModulePass subclass")
    if cls.name != name:
        raise TypeError(f"pass '{name}': class {cls.__name__} is named '{cls.name}'")


def register_pass(pass_or_name: Union[type[ModulePass], str], target: str | None = None, *,
                  replace: bool = False) -> None:
    """Registers a pass class (`register_pass(MyPass)`) or a lazy entry
    (`register_pass("my-pass", "pkg.module:MyPass")`). Re-registering an
    existing name needs `replace=True`."""
    if isinstance(pass_or_name, str):
        name = pass_or_name
        if not target or ":" not in target:
            raise ValueError(f"pass '{name}': target must be 'module:Class', got {target!r}")
    else:
        cls = pass_or_name
        if not (isinstance(cls, type) and issubclass(cls, ModulePass)) or not cls.name:
            raise TypeError(f"{cls!r} is not a ModulePass subclass with a name")
        name = cls.name
    if not replace and (name in _TABLE or name in _LOADED):
        raise ValueError(f"a pass named '{name}' is already registered")
    _TABLE.pop(name, None)
    _LOADED.pop(name, None)
    if isinstance(pass_or_name, str):
        _TABLE[name] = target
    else:
        _LOADED[name] = pass_or_name


def unregister_pass(name: str) -> None:
    """Removes a pass (for tests that register temporary ones)."""
    _TABLE.pop(name, None)
    _LOADED.pop(name, None)
