"""Registers the lowering passes with `tidal.passes` (lazily, by name) when
imported: the registry of the layer below does not name them (dependencies point
one way). tidal-opt and the frontend's compile pipeline import this module when
they start; code that runs `sdg-schedule` through `tidal.passes` on its own
imports it too (`--load-pass-plugin=tidal.lowering.passes` does so for tidal-opt
by hand). `register()` is idempotent.
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
