"""Registers the lowering passes with `tidal.passes` (lazily, by name).

`tidal-opt --load-pass-plugin=tidal.lowering.passes` makes them available
where the registry table does not list them yet; `register()` is idempotent.
"""
from __future__ import annotations

from tidal.passes import register_pass

__all__ = ["PASSES", "register"]

PASSES = {
    "sdg-schedule": "tidal.lowering.sdg_schedule:SdgSchedule",
    "sdg-lower-to-scf": "tidal.lowering.sdg_lower_to_scf:SdgLowerToScf",
    "sdg-view-graph": "tidal.lowering.sdg_view_graph:SdgViewGraph",
}


def register() -> None:
    for name, target in PASSES.items():
        register_pass(name, target, replace=True)


register()
