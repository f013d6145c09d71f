"""tidal.lowering: scheduling SDGs with isl and lowering them to scf.

* `graph.read_graph(op)`: a read-only model of one `sdg.graph`;
* `schedule.schedule_graph(graph, ScheduleOptions())`: the isl schedule
  (valid domains, validity/proximity relations, `ScheduleError` for
  unschedulable programs), parametric in the bounds; `sched.check_bounds(
  bounds)` raises `UncomputableError` before a run whose bounds leave a
  point an output or a UDF needs uncomputable; `loop_ast.from_isl` /
  `format_loop_nest`;
* input the scheduler cannot handle (a non-affine dependence, a foreign
  step, ...) raises `graph.GraphError`, a `tidal.passes.base.OpError`
  carrying the op: passes report it at the op's location;
* `storage.plan_storage(sched)`: point/block/window store per value,
  verified against the schedule;
* passes `sdg-schedule` (sdg_schedule.py) and `sdg-lower-to-scf`
  (sdg_lower_to_scf.py, to_scf.py); `passes.py` registers them as a
  `tidal-opt --load-pass-plugin`.

Nothing is imported here: `import tidal.lowering` stays cheap.
"""
