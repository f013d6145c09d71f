"""sdg-simplify: symbolic simplification of the SDG (TEMPO section 5).

Four rewrites, each switchable (option `rewrites`), run to a fixed point:

* `branches`: a merge branch that can never be the first true one (its
  condition, minus those of the branches before it, is empty over the merge's
  domain for every value of the bounds: decided exactly by isl) is dropped. A
  merge left with one branch that holds everywhere is forwarded (below) unless
  it is on a cycle.
* `forward`: an op that computes its operand unchanged is bypassed: its
  readers read the operand directly, with the two dependences composed
  (`y = x[t - 1]` read at `y[0:t]` is `x[-1:t - 1]`). Such ops: a merge with
  one branch (above); `reshape`, `expand` and `cast` to the operand's own type;
  the identity `permute`; `squeeze` of the axis an `unsqueeze` just made;
  `where(c, a, a)` and `where` of a constant condition; `x * 1`, `x / 1`,
  `x ** 1`, `x - 0`, `x + (-0.0)` (and `x + 0` for integers: `-0.0 + 0.0` is
  `0.0`), where the constant is a splat that does not broadcast `x` to a new
  shape or type. A reader whose composed dependence is not an index of the
  operand (a slice of a slice) keeps reading the op.
* `hoist` (domain reduction, loop-invariant code motion): an op over a dim d
  none of whose operands, shapes or index attributes use d computes the same
  value at every point of d. It leaves d's domain (it runs once per point of
  the other dims) and its readers drop their d component. Refused when a
  reader reads it through a slice over d (the read would lose that axis), and
  for random draws, UDFs, merges, inputs, outputs, params and islands.
* `fold` (constant folding): a shape op (`expand`, `reshape`, `(un)squeeze`,
  `permute`, `flip`) of a splat constant is a splat (`sdg.full`) of its result
  shape; `neg`/`abs` of a splat, and `add`/`sub`/`mul`/`max`/`min` of two
  splats, are folded in the element type (float32/64, int32/64: the IEEE and
  two's-complement results every backend computes).

CSE that treats two ops as equal only when their dependences are equal is
upstream `cse` (dependences are attributes); the default pipeline runs it right
after this pass, which is where hoisting makes copies over several dims equal.
Dead code is `sdg-dce`; this pass only erases the ops it bypassed.

Before (a scale by a constant 1 and a reshape to the same shape, both per t, and
a bias that does not vary with t computed at every t; a merge whose second
branch can never hold):

    %one = sdg.full 1.0 domain [] : <[], f32>
    %b2 = sdg.binary mul %b[], %two[] domain [t] : (<[4], f32>, <[], f32>) -> <[4], f32>
    %y = sdg.binary mul %x[t], %one[] domain [t] : (<[4], f32>, <[], f32>) -> <[4], f32>
    %r = sdg.reshape %y[t] domain [t] : (<[4], f32>) -> <[4], f32>
    %m = sdg.merge %r[t] if <t lt T>, %x[t] if <true> domain [t] : ...
    %z = sdg.binary add %m[t], %b2[t] domain [t] : ...

After `sdg-simplify`:

    %b2 = sdg.binary mul %b[], %two[] domain [] : (<[4], f32>, <[], f32>) -> <[4], f32>
    %z = sdg.binary add %x[t], %b2[] domain [t] : ...
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from mlir import ir

from tidal.dialects import enums
from tidal.dialects.attrs import expr_text, index_attr, index_components, tensor_element_type, tensor_shape
from tidal.dialects.element_types import dense_array
from tidal.dialects.op_properties import ops_with
from tidal.symbolic import Dim, SymbolicError, parse, to_text
from tidal.symbolic.isl_bridge import domain_set

from .base import ModulePass, PassFailure, option, sdg_graphs
from .rt_to_sdg_index import compose
from .sccs import strongly_connected
from .sdg_build import mentions as _mentions
from .transform_utils import dep_of, read_type, set_dep

__all__ = ["SdgSimplify", "REWRITES"]

REWRITES = ("branches", "forward", "hoist", "fold")
MAX_ROUNDS = 64
# ops that compute a value from their operands and point only (no state, no draws)
PURE = ops_with("pure")
SHAPE_OPS = ops_with("metadata")
EXPR_ATTRS = ("start", "index", "before", "after", "expr")   # symbolic attributes (slice, take, pad, symbol value)
FOLD_TYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}
EXACT_INT = 2 ** 53                               # sdg.full holds an f64


def _kind(o: ir.Operation) -> str:
    table = {"sdg.unary": enums.UnaryKind, "sdg.binary": enums.BinaryKind}.get(o.name)
    return str(table(ir.IntegerAttr(o.attributes["kind"]).value)) if table and "kind" in o.attributes else ""


def _splat(value: ir.Value) -> float | int | bool | None:
    """The one value of a splat constant (`sdg.full`, a splat `sdg.constant`), else None."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    o = owner.operation
    if o.name == "sdg.full":
        return ir.FloatAttr(o.attributes["value"]).value
    if o.name == "sdg.constant":
        dense = ir.DenseElementsAttr(o.attributes["value"])
        values = dense_array(dense) if dense.is_splat else None
        if values is not None and values.size:
            return values.reshape(-1)[0].item()
    return None


class _Round:
    """One pass over the ops of a graph with a view of its reads; rewrites in place
    until one changes the op list itself (then the caller builds a new view)."""

    def __init__(self, graph: ir.Operation, enabled: set[str], counts: dict[str, int], memo: dict):
        self.enabled, self.counts = enabled, counts
        self.memo = memo   # shared by the rounds: merge reachability, uses of steps
        steps = [ir.StringAttr(a).value for a in ir.ArrayAttr(graph.attributes["steps"])]
        bounds = [ir.StringAttr(a).value for a in ir.ArrayAttr(graph.attributes["bounds"])]
        self.dims = {s: Dim(s, bound=b) for s, b in zip(steps, bounds)}
        self.ops = [o.operation for o in graph.regions[0].blocks[0].operations]
        # Values are keyed by their MLIR handle: an erased op's entries must go before
        # it does, since a new op may be allocated where it was (_erase, _add).
        self.at = {}
        for k, o in enumerate(self.ops):
            for value in o.results:
                self.at[value] = k
        self.readers: list[list[tuple[ir.Operation, int]]] = [[] for _ in self.ops]
        reads: list[list[int]] = [[] for _ in self.ops]
        for k, o in enumerate(self.ops):
            for i, value in enumerate(o.operands):
                src = self.at.get(value)
                if src is not None:
                    self.readers[src].append((o, i))
                    reads[k].append(src)
        comps = strongly_connected(len(self.ops), lambda k: reads[k])
        self.cyclic = {k for c in comps for k in c if len(c) > 1 or k in reads[k]}
        self.erased: set[int] = set()
        self._exprs: dict[str, object] = {}

    def domain(self, k: int) -> list[str] | None:
        o = self.ops[k]
        return index_components(o.attributes["domain"]) if "domain" in o.attributes else None

    def expr(self, text: str):
        if text not in self._exprs:
            self._exprs[text] = parse(text, dims=list(self.dims.values()), validate=False)
        return self._exprs[text]

    def run(self) -> bool:
        """Applies rewrites; True if anything changed."""
        changed = False
        for k in range(len(self.ops)):
            if k in self.erased or not self.ops[k].results or not self.readers[k]:
                continue
            try:
                step = self._simplify(k)
            except SymbolicError:    # an expression the symbolic library cannot handle: leave the op
                continue
            if step == "structural":
                return True
            changed |= step == "changed"
        return changed

    def _simplify(self, k: int) -> str:
        o, on = self.ops[k], self.enabled
        if "branches" in on and o.name == "sdg.merge":
            return self._branches(k)
        if "fold" in on and o.name in PURE and self._fold(k):
            return "changed"
        if "forward" in on and o.name in PURE:
            source = self._identity(k)
            if source is not None and self._forward(k, *source):
                return "changed"
        if "hoist" in on and o.name in PURE and self._hoist(k):
            return "changed"
        return ""

    # ---- forward ------------------------------------------------------------------------------

    def _identity(self, k: int) -> tuple[ir.Value, list[str]] | None:
        """(operand, its dependence) if op k computes that operand unchanged."""
        o = self.ops[k]
        out = o.results[0].type
        n = len(o.operands)
        deps = [dep_of(o, i) for i in range(n)]
        if any(d is None or any(":" in c for c in d) for d in deps):
            return None
        same = [i for i in range(n) if o.operands[i].type == out]
        if o.name in ("sdg.reshape", "sdg.expand", "sdg.cast") and same == [0]:
            return o.operands[0], deps[0]
        if o.name == "sdg.permute" and same == [0] and \
                list(ir.DenseI64ArrayAttr(o.attributes["perm"])) == list(range(len(tensor_shape(out)))):
            return o.operands[0], deps[0]
        if o.name == "sdg.squeeze" and same == [] and n == 1:
            return self._squeezed_unsqueeze(k, deps[0])
        if o.name == "sdg.where":
            if o.operands[1] == o.operands[2] and deps[1] == deps[2] and 1 in same:
                return o.operands[1], deps[1]
            cond = _splat(o.operands[0])
            pick = None if cond is None else (1 if cond else 2)
            if pick in same:
                return o.operands[pick], deps[pick]
        if o.name == "sdg.binary":
            return self._neutral(o, same, deps)
        return None

    def _squeezed_unsqueeze(self, k: int, dep: list[str]):
        o = self.ops[k]
        src = self.at.get(o.operands[0])
        if src is None or self.ops[src].name != "sdg.unsqueeze":
            return None
        inner = self.ops[src]
        axis = ir.IntegerAttr(o.attributes["dim"]).value
        if ir.IntegerAttr(inner.attributes["dim"]).value != axis or inner.operands[0].type != o.results[0].type:
            return None
        inner_dep = dep_of(inner, 0)
        if inner_dep is None or any(":" in c for c in inner_dep):
            return None
        composed = self._compose(inner_dep, self.domain(src), dep)
        return None if composed is None or any(":" in c for c in composed) else (inner.operands[0], composed)

    @staticmethod
    def _neutral(o: ir.Operation, same: list[int], deps) -> tuple[ir.Value, list[str]] | None:
        """x for `x * 1`, `1 * x`, `x / 1`, `x ** 1`, `x - 0`, `x + -0.0` (x + 0 for integers)."""
        kind = _kind(o)
        integer = tensor_element_type(o.results[0].type)[0] in "iu"
        for i in same:
            c = _splat(o.operands[1 - i])
            if c is None or isinstance(c, bool):
                continue
            right = i == 0             # the constant is the second operand
            zero_sign = np.signbit(c) if c == 0 else None
            if (kind == "mul" and c == 1) or (right and kind in ("div", "pow") and c == 1) \
                    or (right and kind == "sub" and c == 0) \
                    or (kind == "add" and c == 0 and (integer or zero_sign)):
                return o.operands[i], deps[i]
        return None

    def _compose(self, inner: list[str], inner_domain: list[str] | None, outer: list[str]) -> list[str] | None:
        """The dependence on x of `y[outer]` when y = x[inner] over `inner_domain`."""
        if inner_domain is None or len(outer) != len(inner_domain):
            return None
        composed = compose([self.expr(c) for c in inner], inner_domain, [self.expr(c) for c in outer])
        return None if composed is None else [to_text(c, mlir=True) for c in composed]

    def _forward(self, k: int, value: ir.Value, inner: list[str]) -> bool:
        """Readers of op k read `value` (op k's operand at `inner`) instead; True if any did."""
        o = self.ops[k]
        src = self.at.get(value)
        moved = False
        for reader, i in list(self.readers[k]):
            outer = dep_of(reader, i)
            if reader == o or outer is None:
                continue
            composed = self._compose(inner, self.domain(k), outer)
            if composed is None or read_type(value, tuple(composed)) != read_type(o.results[0], tuple(outer)):
                continue
            reader.operands[i] = value
            set_dep(reader, i, composed)
            self.readers[k].remove((reader, i))
            if src is not None:
                self.readers[src].append((reader, i))
            moved = True
        if moved:
            self.counts["forwarded"] += 1
            self._erase_if_dead(k)
        return moved

    def _erase_if_dead(self, k: int) -> None:
        o = self.ops[k]
        if self.readers[k] or k in self.erased or any(len(list(r.uses)) for r in o.results):
            return
        sources = [self.at.get(v) for v in o.operands]
        for i, s in enumerate(sources):
            if s is not None and (o, i) in self.readers[s]:
                self.readers[s].remove((o, i))
        self._erase(k)
        for s in sources:
            if s is not None and s not in self.erased and (self.ops[s].name in PURE or self.ops[s].name == "sdg.merge"):
                self._erase_if_dead(s)

    def _erase(self, k: int) -> None:
        for value in self.ops[k].results:
            del self.at[value]
        self.ops[k].erase()
        self.erased.add(k)

    def _add(self, op: ir.Operation, readers: list[tuple[ir.Operation, int]]) -> None:
        """Op `op`, just created, joins the view with `readers` (those of the op it
        replaces; its operands' readers are unchanged: a new op reads nothing new)."""
        self.ops.append(op)
        self.readers.append(list(readers))
        for value in op.results:
            self.at[value] = len(self.ops) - 1

    # ---- branches -------------------------------------------------------------------------------

    def _branches(self, k: int) -> str:
        o = self.ops[k]
        conds = [expr_text(c) for c in ir.ArrayAttr(o.attributes["conds"])]
        domain = self.domain(k)
        key = (tuple(domain), tuple(conds))
        if key not in self.memo:      # isl, once per distinct merge in the pass
            self.memo[key] = _reachable(conds, [self.dims[d] for d in domain], self.expr)
        keep, covers = self.memo[key]
        if len(keep) < len(conds):
            self._rebuild_merge(k, keep)
            self.counts["branches_dropped"] += len(conds) - len(keep)
            return "structural"
        if len(keep) == 1 and covers and k not in self.cyclic and "forward" in self.enabled:
            dep = dep_of(o, 0)
            if dep is not None and self._forward(k, o.operands[0], dep):
                return "changed"
        return ""

    def _rebuild_merge(self, k: int, keep: list[int]) -> None:
        o = self.ops[k]
        deps, conds = list(ir.ArrayAttr(o.attributes["deps"])), list(ir.ArrayAttr(o.attributes["conds"]))
        with o.context, o.location, ir.InsertionPoint(o):
            new = ir.Operation.create(
                "sdg.merge", results=[o.results[0].type], operands=[o.operands[j] for j in keep],
                attributes={"deps": ir.ArrayAttr.get([deps[j] for j in keep]),
                            "conds": ir.ArrayAttr.get([conds[j] for j in keep]),
                            "domain": o.attributes["domain"]})
        for i, value in enumerate(o.operands):
            s = self.at.get(value)
            if s is not None:
                self.readers[s].remove((o, i))
        dropped = [self.at.get(o.operands[j]) for j in range(len(o.operands)) if j not in keep]
        o.results[0].replace_all_uses_with(new.results[0])
        self._add(new, [(r, i) for r, i in self.readers[k] if r != o])   # a read of itself is new's now
        for j, value in enumerate(new.operands):
            s = self.at.get(value)
            if s is not None:
                self.readers[s].append((new, j))
        self.readers[k] = []
        self._erase(k)
        for s in dropped:
            if s is not None and s not in self.erased and self.ops[s].name in PURE:
                self._erase_if_dead(s)

    # ---- hoist ----------------------------------------------------------------------------------

    def _hoist(self, k: int) -> bool:
        o = self.ops[k]
        domain = self.domain(k)
        if not domain or len(o.results) != 1:
            return False
        deps = [dep_of(o, i) for i in range(len(o.operands))]
        if any(dep is None for dep in deps):
            return False
        texts = [c for dep in deps for c in dep]
        texts += [expr_text(o.attributes[a]) for a in EXPR_ATTRS if a in o.attributes]
        shapes = [s for v in list(o.operands) + list(o.results) for s in tensor_shape(v.type)]
        for pos in reversed(range(len(domain))):
            d = domain[pos]
            if any(self._uses(x, d) for x in texts + shapes):
                continue
            reads = [(r, i, dep_of(r, i)) for r, i in self.readers[k]]
            if any(dep is None or len(dep) != len(domain) or ":" in dep[pos] for _, _, dep in reads):
                continue
            o.attributes["domain"] = index_attr(domain[:pos] + domain[pos + 1:], o.context)
            for r, i, dep in reads:
                set_dep(r, i, dep[:pos] + dep[pos + 1:])
            self.counts["hoisted"] += 1
            return True
        return False

    def _uses(self, text: str, step: str) -> bool:
        key = (text, step)
        if key not in self.memo:     # the pass's memo (a word test first: parsing costs)
            self.memo[key] = text == step or (re.search(rf"\b{re.escape(step)}\b", text) is not None
                                                   and _mentions(text, step))
        return self.memo[key]

    # ---- fold -----------------------------------------------------------------------------------

    def _fold(self, k: int) -> bool:
        o = self.ops[k]
        out = o.results[0].type
        value = None
        if o.name in SHAPE_OPS:
            value = _splat(o.operands[0])
        elif o.name == "sdg.unary" and _kind(o) in ("neg", "abs"):
            value = _apply(_kind(o), [_splat(o.operands[0])], tensor_element_type(out))
        elif o.name == "sdg.binary" and _kind(o) in ("add", "sub", "mul", "max", "min"):
            value = _apply(_kind(o), [_splat(v) for v in o.operands], tensor_element_type(out))
        integer = tensor_element_type(out)[0] in "iu"
        if value is None or (integer and abs(float(value)) >= EXACT_INT):   # not exact as sdg.full's f64
            return False
        with o.context, o.location, ir.InsertionPoint(o):
            full = ir.Operation.create("sdg.full", results=[out], operands=[],
                                       attributes={"value": ir.FloatAttr.get_f64(float(value)),
                                                   "domain": o.attributes["domain"]})
        o.results[0].replace_all_uses_with(full.results[0])
        self._add(full, self.readers[k])
        self.readers[k] = []
        self._erase_if_dead(k)
        self.counts["folded"] += 1
        return True


def _apply(kind: str, values: list, element: str):
    """`kind` applied to splat values in the element type, or None (a type not folded)."""
    ty = FOLD_TYPES.get(element)
    if ty is None or any(v is None or isinstance(v, bool) for v in values):
        return None
    with np.errstate(all="ignore"):
        xs = [np.array(v).astype(ty) for v in values]
        if any(float(x) != float(v) for x, v in zip(xs, values)):
            return None      # a value that the element type does not hold exactly
        fn = {"neg": np.negative, "abs": np.abs, "add": np.add, "sub": np.subtract, "mul": np.multiply,
              "max": np.maximum, "min": np.minimum}[kind]
        return fn(*xs).astype(ty).item()


def _reachable(conds: list[str], dims: list[Dim], expr) -> tuple[list[int], bool]:
    """The branches that are the first true one somewhere in the domain, and
    whether those conditions cover it (a point with no true branch would be an
    error). A condition isl cannot express counts as reachable and covers nothing."""
    keep, covered = [], None
    whole = domain_set(dims)
    for j, text in enumerate(conds):
        if covered is not None and whole.is_subset(covered):
            break
        try:
            s = domain_set(dims, expr(text))
        except (SymbolicError, ValueError):
            keep.append(j)
            continue
        if s.is_empty() or (covered is not None and s.is_subset(covered)):
            continue
        keep.append(j)
        covered = s if covered is None else covered.union(s)
    return keep, covered is not None and whole.is_subset(covered)


@dataclass
class SdgSimplify(ModulePass):
    """Symbolic simplification of sdg graphs (see the module doc)."""

    name: ClassVar[str] = "sdg-simplify"
    summary: ClassVar[str] = ("Drop merge branches that never hold, bypass identity ops (composing dependences), "
                              "hoist ops out of dims they do not use, fold splat constants")
    rewrites: list[str] = option(list(REWRITES), "the rewrites to run: " + ", ".join(REWRITES))

    def run(self, op: ir.Operation) -> None:
        unknown = [r for r in self.rewrites if r not in REWRITES]
        if unknown:
            raise PassFailure(f"sdg-simplify: unknown rewrite '{unknown[0]}' (expected some of "
                              f"{', '.join(REWRITES)})")
        self.counts = {"branches_dropped": 0, "forwarded": 0, "hoisted": 0, "folded": 0}
        for graph in sdg_graphs(op, "sdg-simplify"):
            memo: dict = {}
            with graph.context:
                for _ in range(MAX_ROUNDS):
                    if not _Round(graph, set(self.rewrites), self.counts, memo).run():
                        break
