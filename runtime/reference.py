"""The reference interpreter: the oracle every backend is tested against.

    from tidal.runtime.reference import evaluate
    out = evaluate(text_or_module, bounds={"T": 5}, inputs={"x": x}, udfs={"env.step": step})

It implements "Reference semantics of sdg" in docs/semantics.md with no
schedule at all: to get op `y` at point `p`, evaluate each operand's
dependence expression at `p` (each compiled once with
`tidal.symbolic.compile_expr`), fetch the producers' values at the selected
points (each slice component stacks its points as a leading axis, first
slice outermost), and apply the op's kernel (runtime/kernels.py). A merge
takes its first branch whose condition holds. Values are memoised per
(op, point), and the demand is driven by an explicit work stack, not Python
recursion, so a recurrence over T = 100000 steps is fine.

An rt module is accepted too: it is copied and converted with `rt-to-sdg`
first (the caller's module is left alone).

Order of evaluation, and so of UDF calls: outputs are evaluated in the
graph's op order, each at the points of its domain in lexicographic
(program) order. Demanding a value demands the values it reads depth-first,
operand by operand and, within a slice, in increasing coordinate order;
every op, UDFs included, runs once per point, as soon as everything it
reads is available. UDFs have external effects, so after the outputs every
UDF also runs at the points of its domain no output needed (in graph order,
points in lexicographic order): each UDF runs exactly once per point of its
domain, sinks with no results included. For a recurrence through a UDF it
runs at t = 0, 1, 2, ... UDFs receive NumPy arrays and return one array
(or a tuple of arrays, one per result); results are checked against the
declaration and converted exactly as every backend does
(`run_checks.check_udf_result`).

Errors (a missing input, an input of the wrong shape, a point read outside
its producer's domain, a merge with no true branch, an unknown UDF, a kernel
failure, a cycle with no base case) raise EvaluationError, whose message
starts with the op's location (file:line:col), the op and the point.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Sequence

import numpy as np
from mlir import ir

from tidal.dialects import make_context, ops_named
from tidal.dialects.attrs import derived_bounds
from tidal.passes.rt_to_sdg import rt_to_sdg
from tidal.passes.sdg_inline_islands import inline_islands

from .reference_graph import EvaluationError, Node, decode_graph, format_point
from .run_checks import cast_exact, check_bounds, check_footprint, check_udf_result, param_array

__all__ = ["evaluate", "EvaluationError", "load_graph"]


def evaluate(module: ir.Module | str, bounds: dict[str, int], inputs: dict[str, Any],
             udfs: dict[str, Callable] | None = None, *, graph: str | None = None,
             source_name: str = "<input>", params: dict[str, Any] | None = None,
             steps: dict | None = None) -> dict[str, Any]:
    """Evaluates every output of an `sdg.graph` (or of an `rt.program`,
    converted first). `bounds` maps bound names (`T`) to ints >= 1; `inputs`
    maps `sdg.input` names to arrays whose leading axes are the extents of
    the input's domain (program order), or nested lists of arrays when the
    per-point shape varies; `udfs` maps callee names to host functions;
    `params` maps `sdg.param` names to their values (a param whose value is
    in the IR may be left out).

    Returns {output name: value}: an array with the output's domain extents
    as leading axes (program order); a nested list of arrays when the per-point
    shape varies with the point; with a condition, a dict {point tuple: array}.
    `graph` picks a graph by symbol name when the module has several;
    `source_name` names a text input in locations.

    A graph with `sdg.stop_when` ops is first evaluated for the stops alone:
    each condition at t = 0, 1, ... (the bounds given) until it holds at
    t_stop; then the whole program with that bound t_stop + 1. `steps`, a
    dict, gets {step name: steps run} for every dim.
    """
    root, op = load_graph(module, graph, source_name, inline=True)
    with root.context:
        given, known = bounds, {}
        bounds = stopped_bounds(root, op, bounds, inputs, udfs or {}, params or {}, known)
        if steps is not None:
            checked = _check_bounds(op, bounds)
            names = [ir.StringAttr(a).value for a in ir.ArrayAttr(op.attributes["bounds"])]
            dims = [ir.StringAttr(a).value for a in ir.ArrayAttr(op.attributes["steps"])]
            steps.clear()
            steps.update({d: checked[b] for d, b in zip(dims, names)})
        evaluator = _Evaluator(root, op, bounds, inputs, udfs or {}, params or {}, given)
        for k, values in known.items():   # the conditions' values (UDFs run once per point)
            evaluator.values[k].update({p: v for p, v in values.items() if evaluator.nodes[k].in_domain(p)})
        return evaluator.run()


def stopped_bounds(root, op, bounds: dict, inputs: dict, udfs: dict, params: dict,
                   known: dict | None = None) -> dict:
    """`bounds` with the bound of each `sdg.stop_when`'s dim cut to t_stop + 1,
    t_stop the first point where its condition holds (docs/semantics.md). The
    conditions are evaluated with the bounds given (their values at t do not
    depend on the bound: the frontend checks it); stops are taken in graph
    order, each with the bounds the earlier ones cut. `known` gets {node: {point:
    values}} of what the conditions read, to be reused (not computed again)."""
    stops = [o.operation for o in op.regions[0].blocks[0].operations if o.operation.name == "sdg.stop_when"]
    if not stops:
        return bounds
    bounds = dict(bounds)
    for k, stop in enumerate(stops):
        evaluator = _Evaluator(root, op, bounds, inputs, udfs, params)
        node = [n for n in evaluator.nodes if n.kind == "stop_when"][k]
        step = node.steps[-1]
        bound = evaluator.bound_of[step]
        if len(node.steps) != 1:
            raise EvaluationError(f"sdg.stop_when over an inner dim ({', '.join(node.steps)}) is not supported "
                                  f"yet", node)
        cond = node.operands[0]
        for t in range(evaluator.bounds[bound]):
            operand, points, _ = evaluator.selected(node, cond, (t,))
            (producer, q), = points
            value = evaluator.demand(producer, q)[operand.result]
            if bool(np.asarray(value)):
                bounds[bound] = t + 1
                break
        if known is not None:
            seen, stack = set(), [cond.producer]
            while stack:
                n = stack.pop()
                if n.index not in seen:
                    seen.add(n.index)
                    stack.extend(o.producer for o in n.operands)
            for k in seen:
                known.setdefault(k, {}).update(evaluator.values[k])
    return bounds


def _parse(text: str, source_name: str) -> ir.Module:
    try:
        op = ir.Operation.parse(text, source_name=source_name)
    except ir.MLIRError:
        return ir.Module.parse(text)  # several top-level ops: locations say "-"
    if op.name == "builtin.module":
        return op
    module = ir.Module.create(loc=ir.Location.unknown())
    module.body.append(op)
    return module


def load_graph(module: ir.Module | str, graph: str | None = None, source_name: str = "<input>",
               inline: bool = False) -> tuple[ir.Operation, ir.Operation]:
    """(root, graph): the `sdg.graph` to evaluate and the op that holds it
    (keep it alive). Parses text (in a new context), converts rt programs (on
    a copy), and picks the graph named `graph` (or the only one). With
    `inline`, islands (sdg-fuse) are inlined, on a copy, for op-by-op evaluation."""
    if isinstance(module, str):
        with make_context():
            root = _parse(module, source_name)
            root = root.operation if hasattr(root, "operation") else root
            return _load(root, graph, copy=False, inline=inline)
    root = module.operation if hasattr(module, "operation") else module
    with root.context:
        return _load(root, graph, copy=True, inline=inline)


def _load(root: ir.Operation, graph: str | None, copy: bool, inline: bool) -> tuple[ir.Operation, ir.Operation]:
    if ops_named(root, "rt.program"):
        if copy:
            root, copy = root.clone(), False
        rt_to_sdg(root)
        root.verify()
    if inline and ops_named(root, "sdg.island"):
        if copy:
            root = root.clone()
        inline_islands(root)
    graphs = ops_named(root, "sdg.graph")
    names = [ir.StringAttr(g.attributes["sym_name"]).value for g in graphs]
    if graph is not None:
        if graph not in names:
            raise EvaluationError(f"no sdg.graph named '{graph}' (found: {', '.join(names) or 'none'})")
        chosen = graphs[names.index(graph)]
    elif len(graphs) == 1:
        chosen = graphs[0]
    else:
        raise EvaluationError(f"expected one sdg.graph or rt.program, found {len(graphs)}"
                              + (f" ({', '.join(names)}): pass graph=..." if graphs else ""))
    return root, chosen


def _check_bounds(graph: ir.Operation, bounds: dict[str, int]) -> dict[str, int]:
    names = [ir.StringAttr(a).value for a in ir.ArrayAttr(graph.attributes["bounds"])]
    try:
        return check_bounds(names, bounds, derived_bounds(graph))
    except ValueError as e:
        raise EvaluationError(str(e)) from None


def _footprint(nodes: list[Node]) -> list[tuple[str, int]]:
    """(what, bytes) per node: the interpreter memoises every point it computes.
    A shape that varies with the point is counted at its largest corner."""
    entries = []
    for node in nodes:
        points = int(np.prod(node.extents, dtype=object)) if node.extents else 1
        if not points:
            continue
        corners = [(0,) * len(node.extents), tuple(e - 1 for e in node.extents)]
        per_point = 0
        for shape, dtype in zip(node.shapes, node.dtypes):
            size = max(int(np.prod(shape(*c), dtype=object)) for c in corners)
            per_point += max(size, 1) * dtype.itemsize
        entries.append((f"'{node.op_name}' at {node.loc}", points * per_point))
    return entries


def _points(extents: Sequence[int]):
    return itertools.product(*(range(e) for e in extents))


class _Evaluator:
    def __init__(self, root: ir.Operation, graph: ir.Operation, bounds, inputs, udfs, params, fed=None):
        self.root = root  # keeps the graph's module (and context) alive
        self.bounds = _check_bounds(graph, bounds)
        # the bounds the inputs are fed for (a stopped run reads a prefix of them)
        self.fed = self.bounds if fed is None else _check_bounds(graph, fed)
        steps = [ir.StringAttr(a).value for a in ir.ArrayAttr(graph.attributes["steps"])]
        self.bound_of = dict(zip(steps, self.bounds))    # step -> its bound's name
        self.nodes = decode_graph(graph, self.bounds)
        check_footprint(_footprint(self.nodes))
        self.values: list[dict] = [{} for _ in self.nodes]
        self.inputs = inputs
        self.udfs = udfs
        self.params = params
        self.prepared_inputs: dict[int, Any] = {}

    # -- results -------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        results: dict[str, Any] = {}
        outputs = [n for n in self.nodes if n.kind == "output"]
        for node in outputs:
            name = node.attrs["name"]
            if name in results:
                raise EvaluationError(f"a second output named '{name}'", node)
            cond = node.attrs["cond"]
            values = {}
            for p in _points(node.extents):
                if cond is None or cond(*p):
                    values[p] = self.demand(node, p)[0]
            if cond is not None:
                results[name] = values
            elif node.attrs["varying"]:
                results[name] = _nest(values, node.extents)
            elif not node.steps:
                results[name] = values[()]
            else:
                inner = next(iter(values.values())).shape
                stacked = np.stack(list(values.values())) if values else np.zeros((0,))
                results[name] = stacked.reshape(tuple(node.extents) + inner)
        for node in self.nodes:  # effects: every UDF runs at every point of its domain
            if node.kind == "udf":
                for p in _points(node.extents):
                    self.demand(node, p)
        return results

    # -- the demand loop -----------------------------------------------------------
    def demand(self, node: Node, point: tuple) -> tuple:
        memo = self.values[node.index]
        if point in memo:
            return memo[point]
        stack: list[list] = [[node, point, None]]
        active: set = set()
        while stack:
            frame = stack[-1]
            n, p = frame[0], frame[1]
            if p in self.values[n.index]:
                stack.pop()
                continue
            if frame[2] is None:
                frame[2] = self.reads(n, p)
            missing = [(m, q) for m, q in _flat(frame[2]) if q not in self.values[m.index]]
            key = (n.index, p)
            if missing:
                if key in active:  # a child came back unfinished: cannot happen
                    raise EvaluationError("internal error: unfinished dependence", n, p)
                active.add(key)
                for m, q in reversed(missing):
                    if (m.index, q) in active:
                        raise EvaluationError(
                            f"cyclic dependence: it needs '{m.op_name}' ({m.loc}) at "
                            f"{format_point(m.steps, q)}, which needs this value (a recurrence "
                            f"with no base case?)", n, p)
                    stack.append([m, q, None])
                continue
            active.discard(key)
            self.values[n.index][p] = self.apply(n, p, frame[2])
            stack.pop()
        return memo[point]

    def reads(self, node: Node, p: tuple) -> list:
        """Per operand read: (operand, [(producer, point), ...], slice sizes)."""
        operands = node.operands
        if node.kind == "merge":
            for branch, cond in enumerate(node.conds):
                if cond(*p):
                    operands = [node.operands[branch]]
                    break
            else:
                raise EvaluationError(
                    "no branch condition holds (conditions: "
                    + ", ".join(f"<{c}>" for c in node.cond_texts) + ")", node, p)
        return [self.selected(node, operand, p) for operand in operands]

    def selected(self, node: Node, operand, p: tuple):
        producer = operand.producer
        try:
            coords = operand.dep(*p)
        except Exception as e:  # noqa: BLE001 - e.g. a huge exponent: report where
            raise EvaluationError(f"evaluating operand {operand.number}'s dependence "
                                  f"{operand.text}: {e}", node, p) from None
        axes = [range(c.start, c.stop, c.step or 1) if isinstance(c, slice) else (c,)
                for c in coords]
        for axis, extent, step in zip(axes, producer.extents, producer.steps):
            if len(axis) and (min(axis[0], axis[-1]) < 0 or max(axis[0], axis[-1]) >= extent):
                bad = next(c for c in axis if not 0 <= c < extent)
                shown = "[" + ", ".join(str(c) if not isinstance(c, slice) else
                                        f"{c.start}:{c.stop}" + (f":{c.step}" if c.step else "")
                                        for c in coords) + "]"
                raise EvaluationError(
                    f"operand {operand.number} reads '{producer.op_name}' ({producer.loc}) at "
                    f"{operand.text} = {shown}, outside its domain: it needs {step} = {bad} but "
                    f"{self.bound_of[step]} = {extent} ({step} must be in [0, {self.bound_of[step]}))",
                    node, p)
        if not operand.has_slices:
            return operand, [(producer, coords)], None
        sizes = tuple(len(a) for a, c in zip(axes, coords) if isinstance(c, slice))
        points = list(itertools.product(*axes))
        if not points:  # an empty slice: the producer's shape at a nearby point
            near = tuple(min(max(a.start if isinstance(a, range) else a[0], 0), e - 1)
                         for a, e in zip(axes, producer.extents))
            return operand, [], (sizes, producer.shapes[operand.result](*near))
        return operand, [(producer, q) for q in points], (sizes, None)

    def apply(self, node: Node, p: tuple, reads: list) -> tuple:
        args = [self.gather(node, p, *read) for read in reads]
        try:
            results = node.compute(args, p, self)
        except EvaluationError:
            raise
        except Exception as e:  # noqa: BLE001 - a kernel's complaint, with its place
            raise EvaluationError(f"{type(e).__name__}: {e}", node, p) from None
        for i, value in enumerate(results[:len(node.shapes)]):  # outputs have no results
            expected = tuple(node.shapes[i](*p))
            if tuple(value.shape) != expected:
                raise EvaluationError(
                    f"result {i} has shape {tuple(value.shape)} but its type "
                    f"{node.shape_texts[i]} says {expected}", node, p)
        return tuple(results)

    def gather(self, node: Node, p: tuple, operand, points: list, stacking) -> Any:
        producer, r = operand.producer, operand.result
        values = self.values[producer.index]
        if stacking is None:
            return values[points[0][1]][r]
        sizes, empty_shape = stacking
        if not points:
            return np.zeros(sizes + tuple(empty_shape), dtype=producer.dtypes[r])
        items = [values[q][r] for _, q in points]
        shapes = {v.shape for v in items}
        if len(shapes) > 1:
            raise EvaluationError(
                f"operand {operand.number} ({operand.text}) stacks values of different shapes "
                f"{sorted(shapes)}", node, p)
        return np.stack(items).reshape(sizes + items[0].shape)

    # -- inputs, parameters and UDFs ----------------------------------------------
    def param_value(self, node: Node, default: np.ndarray | None) -> np.ndarray:
        name = node.attrs["name"]
        if name not in self.params:
            if default is None:
                raise EvaluationError(f"no value bound for parameter '{name}'", node)
            return default
        if node.index not in self.prepared_inputs:
            try:
                self.prepared_inputs[node.index] = param_array(name, self.params[name], node.dtypes[0],
                                                               node.shapes[0](*(0,) * len(node.steps)))
            except ValueError as e:
                raise EvaluationError(str(e), node) from None
        return self.prepared_inputs[node.index]

    def input_value(self, node: Node, p: tuple) -> np.ndarray:
        name, dtype = node.attrs["name"], node.dtypes[0]
        if node.index not in self.prepared_inputs:
            if name not in self.inputs:
                raise EvaluationError(f"no value for input '{name}'", node, p)
            given = self.inputs[name]
            fed = tuple(self.fed[self.bound_of[s]] for s in node.steps)
            if not node.varying[0]:
                given = np.asarray(given)
                expected = fed + tuple(node.shapes[0](*(0,) * len(node.steps)))
                if given.shape != expected:
                    raise EvaluationError(
                        f"input '{name}' has shape {given.shape}, expected {expected} (domain "
                        f"extents [{', '.join(map(str, fed))}] then the shape "
                        f"{node.shape_texts[0]})", node, p)
                try:
                    given = cast_exact(given, dtype, f"input '{name}'")
                except ValueError as e:
                    raise EvaluationError(str(e), node, p) from None
            self.prepared_inputs[node.index] = given
        given = self.prepared_inputs[node.index]
        if not node.varying[0]:
            return np.asarray(given[p])
        value = given
        for depth, c in enumerate(p):
            fed = [self.fed[self.bound_of[s]] for s in node.steps]
            if not isinstance(value, (list, tuple)) or len(value) != fed[depth]:
                raise EvaluationError(
                    f"input '{name}' has a per-point shape that varies, so it must be given as "
                    f"nested lists of length {fed}", node, p)
            value = value[c]
        try:
            value = cast_exact(value, dtype, f"input '{name}'")
        except ValueError as e:
            raise EvaluationError(str(e), node, p) from None
        expected = tuple(node.shapes[0](*p))
        if value.shape != expected:
            raise EvaluationError(f"input '{name}' has shape {value.shape} at this point, "
                                  f"expected {expected} ({node.shape_texts[0]})", node, p)
        return value

    def call_udf(self, node: Node, args: list, p: tuple) -> tuple:
        callee = node.attrs["callee"]
        fn = self.udfs.get(callee)
        if fn is None:
            raise EvaluationError(f"no UDF registered under '{callee}' (registered: "
                                  f"{', '.join(sorted(self.udfs)) or 'none'})", node, p)
        out = fn(*args)
        shapes = [tuple(shape(*p)) for shape in node.shapes]
        try:
            return check_udf_result(callee, out, shapes, node.dtypes)
        except ValueError as e:
            raise EvaluationError(str(e), node, p) from None


def _flat(reads: list):
    for _, points, _ in reads:
        yield from points


def _nest(values: dict, extents: Sequence[int]):
    """{point: array} -> nested lists, outermost dim first."""
    def build(prefix: tuple, depth: int):
        if depth == len(extents):
            return values[prefix]
        return [build(prefix + (i,), depth + 1) for i in range(extents[depth])]

    return build((), 0)
