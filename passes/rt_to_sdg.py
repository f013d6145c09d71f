"""rt-to-sdg: recurrent-tensor programs to symbolic dependence graphs.

Implements the "rt-to-sdg" section of docs/semantics.md. Every `rt.program`
becomes an `sdg.graph` with the same symbol name and dims, in place:

* every rt operator becomes the sdg op of the same name, domain, attributes
  and location; each operand gets the dependence that reads it: the identity
  on the producer's dims, or the `rt.index`'s index when the operand is an
  `rt.index` result (an index of an index composes by substitution; when it
  cannot, the inner index is materialised as an `sdg.reshape` at its own
  location);
* `rt.recurrent` and its `rt.define` cases become one `sdg.merge`, one branch
  per case in program order, with condition `q in image(psi) and c(psi^-1(q))`
  and dependence `psi^-1(q)` projected onto the value's domain (a
  recurrence is a cycle through the merge);
* `rt.output "n" %v (if <c>)` becomes `sdg.output "n" %v[dep] domain D(v)`;
  the condition, if any, is kept as the discardable attribute `cond`.

Before:

    rt.program @p dims [t < T] {
      %x = rt.input "x" domain [t] : !tidal.tensor<[4], f32>
      %s = rt.recurrent domain [t] : !tidal.tensor<[4], f32>
      %x0 = rt.index %x[0] domain [] : (...) -> !tidal.tensor<[4], f32>
      rt.define %s[0] = %x0 : ...
      %n = rt.unary tanh %s domain [t] : ...
      rt.define %s[t + 1] = %n : ...
      rt.output "s" %s : !tidal.tensor<[4], f32>
    }

After:

    sdg.graph @p dims [t < T] {
      %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
      %s = sdg.merge %x[0] if <t eq 0>, %n[t - 1] if <t ge 1> domain [t] : ...
      %n = sdg.unary tanh %s[t] domain [t] : ...
      sdg.output "s" %s[t] domain [t] : !tidal.tensor<[4], f32>
    }

Invalid input (a case that is not invertible, an index whose component count
does not match the indexed tensor's domain, an operand whose domain is not
inside the op's, ...) fails the pass with an error at the offending op.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from mlir import ir

from tidal.dialects import ops_named
from tidal.dialects.attrs import expr_attr, expr_text, index_attr, index_components
from tidal.symbolic import Dim, Expr, SymbolicError, parse, simplify, substitute, to_text

from .base import ModulePass, PassFailure
from .rt_to_sdg_index import CaseError, case_condition, compose, invert_case, location_text, step_names

__all__ = ["RtToSdg", "RtToSdgError", "rt_to_sdg"]

# rt ops without operands: their sdg form has no `deps`.
_SOURCE_OPS = frozenset({"input", "param", "constant", "full", "iota", "random", "symbol_value"})
_PLACEHOLDER = "builtin.unrealized_conversion_cast"


class RtToSdgError(PassFailure):
    """An rt program `rt-to-sdg` cannot convert; `op` is the offending rt op
    and `location` its location as `file:line:col`."""

    def __init__(self, message: str, op: ir.Operation):
        super().__init__(message, op)
        self.location = location_text(op.location)

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


def rt_to_sdg(module: ir.Module | ir.Operation) -> None:
    """Converts every `rt.program` in `module` into an `sdg.graph`, in place.
    Raises RtToSdgError (a PassFailure) for invalid input; the program that
    failed is left as it was."""
    for program in ops_named(module, "rt.program"):
        _Converter(program).run()


@dataclass
class RtToSdg(ModulePass):
    """Converts `rt.program`s into `sdg.graph`s (docs/semantics.md, "rt-to-sdg").

    One sdg op per rt operator, with its domain and location; operands read
    through dependence expressions (identity or the `rt.index`'s index);
    `rt.recurrent` + `rt.define` cases become one `sdg.merge` whose branches
    carry conditions and inverted dependences (cycles for recurrences);
    `rt.output` becomes `sdg.output`. See the module docstring for an example.
    """

    name: ClassVar[str] = "rt-to-sdg"
    summary: ClassVar[str] = "Convert rt.program into sdg.graph (merges for recurrent tensors)"

    def run(self, op: ir.Operation) -> None:
        rt_to_sdg(op)


@dataclass
class _View:
    """What a consumer sees of an rt value: read `value` (an sdg value) with
    `dep` (None: the identity on `domain`); `domain` is the rt value's
    domain, onto which a consumer projects its point."""

    value: ir.Value
    domain: tuple[str, ...]
    dep: tuple[Expr, ...] | None = None
    index_op: ir.Operation | None = None  # the rt.index behind a non-identity view

    def dep_texts(self) -> list[str]:
        if self.dep is None:
            return list(self.domain)
        return [to_text(c, mlir=True) for c in self.dep]


@dataclass
class _Merge:
    op: ir.Operation
    domain: tuple[str, ...]
    deps: list = field(default_factory=list)
    conds: list = field(default_factory=list)


def _names(attr: ir.Attribute) -> list[str]:
    return [ir.StringAttr(a).value for a in ir.ArrayAttr(attr)]


def _domain(op: ir.Operation) -> tuple[str, ...]:
    return tuple(index_components(op.attributes["domain"]))


def _show(names) -> str:
    return "[" + ", ".join(names) + "]"


class _Converter:
    def __init__(self, program: ir.Operation):
        self.program = program.operation
        attrs = self.program.attributes
        steps, bounds = _names(attrs["steps"]), _names(attrs["bounds"])
        self.dims = [Dim(s, bound=b) for s, b in zip(steps, bounds)]
        self.dim = {d.name: d for d in self.dims}
        self.views: dict[ir.Value, _View] = {}
        self.merges: dict[ir.Value, _Merge] = {}
        self.placeholders: list[ir.Operation] = []

    # -- driver -------------------------------------------------------------
    def run(self) -> None:
        program = self.program
        block = program.regions[0].blocks[0]
        ops = [o.operation for o in block.operations]
        self.cases: dict[ir.Value, int] = {}
        for op in ops:
            if op.name == "rt.define":
                target = op.operands[0]
                self.cases[target] = self.cases.get(target, 0) + 1
        with ir.InsertionPoint(program):
            graph = ir.Operation.create(
                "sdg.graph", regions=1, loc=program.location,
                attributes={k: program.attributes[k] for k in program.attributes})
        graph_block = graph.regions[0].blocks.append()
        try:
            with ir.InsertionPoint(graph_block):
                for op in ops:
                    self.convert(op)
                self.finish()
        except BaseException:
            graph.erase()
            raise
        program.erase()

    def fail(self, message: str, op: ir.Operation) -> RtToSdgError:
        return RtToSdgError(message, op)

    def parse(self, text: str, op: ir.Operation, what: str) -> Expr:
        try:
            return parse(text, dims=self.dims, validate=False)
        except SymbolicError as e:
            first = str(e).splitlines()[0]
            raise self.fail(f"{what} '{text}' is not a valid symbolic expression: {first}", op) from None

    def condition(self, op: ir.Operation) -> Expr:
        """The op's `cond` attribute: a boolean expression over its steps and bounds."""
        text = expr_text(op.attributes["cond"])
        cond = self.parse(text, op, "condition")
        if cond.kind != "bool":
            raise self.fail(f"condition '{text}' is {'an' if cond.kind[0] in 'aeiou' else 'a'} {cond.kind} "
                            f"expression; a condition must be boolean (e.g. 't ge 1', 't mod 2 eq 0')", op)
        return cond

    def view(self, value: ir.Value, op: ir.Operation, what: str) -> _View:
        found = self.views.get(value)
        if found is None:
            raise self.fail(f"{what} is not defined by an op of the enclosing rt.program", op)
        return found

    def read(self, value: ir.Value, domain: tuple[str, ...], op: ir.Operation, what: str) -> _View:
        """The view of an operand, checking that its domain is inside `domain`."""
        view = self.view(value, op, what)
        outside = [d for d in view.domain if d not in domain]
        if outside:
            raise self.fail(f"{what} has domain {_show(view.domain)}, which is not contained in "
                            f"the op's domain {_show(domain)} (missing '{outside[0]}')", op)
        return view

    def check_steps(self, e: Expr, allowed, op: ir.Operation, what: str) -> None:
        extra = sorted(step_names(e) - set(allowed))
        if extra:
            raise self.fail(f"{what} '{to_text(e, mlir=True)}' uses step '{extra[0]}', which is "
                            f"not in the domain {_show(allowed)}", op)

    def convert(self, op: ir.Operation) -> None:
        name = op.name
        if not name.startswith("rt.") or name == "rt.program":
            raise self.fail(f"'{name}' cannot be converted to sdg: an rt.program holds rt ops only", op)
        kind = name[3:]
        handler = {"index": self.index, "recurrent": self.recurrent, "define": self.define,
                   "output": self.output, "stop_when": self.stop_when}.get(kind)
        if handler is not None:
            handler(op)
        else:
            self.operator(op, kind)

    # -- ops ----------------------------------------------------------------
    def operator(self, op: ir.Operation, kind: str) -> None:
        domain = _domain(op)
        operands, deps = [], []
        for i, value in enumerate(op.operands):
            view = self.read(value, domain, op, f"operand {i}")
            operands.append(view.value)
            deps.append(index_attr(view.dep_texts()))
        attributes = {k: op.attributes[k] for k in op.attributes}
        if kind not in _SOURCE_OPS:
            attributes["deps"] = ir.ArrayAttr.get(deps)
        new = ir.Operation.create(f"sdg.{kind}", results=[r.type for r in op.results],
                                  operands=operands, attributes=attributes, loc=op.location)
        for old, result in zip(op.results, new.results):
            self.views[old] = _View(result, domain)

    def index(self, op: ir.Operation) -> None:
        domain = _domain(op)
        source = self.view(op.operands[0], op, "the indexed tensor")
        texts = index_components(op.attributes["index"])
        if len(texts) != len(source.domain):
            raise self.fail(f"index has {len(texts)} components but the indexed tensor's domain "
                            f"{_show(source.domain)} has {len(source.domain)} dimensions", op)
        phi = tuple(self.parse(t, op, "index component") for t in texts)
        for c in phi:
            self.check_steps(c, domain, op, "index component")
        if source.dep is None:
            self.views[op.result] = _View(source.value, domain, phi, op)
            return
        composed = compose(source.dep, source.domain, phi)
        if composed is None:
            source = self.materialise(op.operands[0])
            composed = phi
        self.views[op.result] = _View(source.value, domain, composed, op)

    def materialise(self, value: ir.Value) -> _View:
        """Turns the view of an rt.index result into an sdg value of its own
        (an `sdg.reshape` to the index's result type, at the index's location)."""
        view = self.views[value]
        attributes = {"deps": ir.ArrayAttr.get([index_attr(view.dep_texts())]),
                      "domain": index_attr(list(view.domain))}
        new = ir.Operation.create("sdg.reshape", results=[value.type], operands=[view.value],
                                  attributes=attributes, loc=view.index_op.location)
        self.views[value] = _View(new.results[0], view.domain)
        return self.views[value]

    def recurrent(self, op: ir.Operation) -> None:
        domain = _domain(op)
        count = self.cases.get(op.result, 0)
        if count == 0:
            raise self.fail("recurrent tensor has no rt.define case", op)
        placeholder = ir.Operation.create(_PLACEHOLDER, results=[op.result.type], loc=op.location)
        self.placeholders.append(placeholder)
        empty = index_attr([])
        merge = ir.Operation.create(
            "sdg.merge", results=[op.result.type], operands=[placeholder.results[0]] * count,
            attributes={"deps": ir.ArrayAttr.get([empty] * count),
                        "conds": ir.ArrayAttr.get([expr_attr("true")] * count),
                        "domain": op.attributes["domain"]},
            loc=op.location)
        self.merges[op.result] = _Merge(merge, domain)
        self.views[op.result] = _View(merge.results[0], domain)

    def define(self, op: ir.Operation) -> None:
        target, value = op.operands[0], op.operands[1]
        merge = self.merges.get(target)
        if merge is None:
            raise self.fail("the target of rt.define must be declared by rt.recurrent", op)
        domain = merge.domain
        psi = [self.parse(t, op, "definition index component")
               for t in index_components(op.attributes["index"])]
        try:
            inverse = invert_case(psi, [self.dim[d] for d in domain])
        except (CaseError, SymbolicError) as e:
            raise self.fail(str(e).splitlines()[0], op) from None
        cond = None
        if "cond" in op.attributes:
            cond = self.condition(op)
            self.check_steps(cond, domain, op, "condition")
            fixed = sorted(step_names(cond) & inverse.constant)
            if fixed:
                raise self.fail(f"the condition uses '{fixed[0]}', in which the definition index "
                                f"is constant: the case is ambiguous", op)
        view = self.view(value, op, "the defining value")
        outside = [d for d in view.domain if d not in domain]
        if outside:
            raise self.fail(f"the defining value has domain {_show(view.domain)}, which is not "
                            f"contained in the recurrent tensor's domain {_show(domain)}", op)
        fixed = [d for d in view.domain if d in inverse.constant]
        if fixed:
            raise self.fail(f"the defining value varies with '{fixed[0]}', in which the "
                            f"definition index is constant: the case is ambiguous", op)
        points = {d: inverse.points[d] for d in view.domain}
        if view.dep is None:
            dep = [points[d] for d in view.domain]
        else:
            dep = [simplify(substitute(c, points)) for c in view.dep]
        branch = len(merge.deps)
        merge.op.operands[branch] = view.value
        merge.deps.append(index_attr([to_text(c, mlir=True) for c in dep]))
        merge.conds.append(expr_attr(to_text(case_condition(inverse, cond), mlir=True)))

    def output(self, op: ir.Operation) -> None:
        view = self.view(op.operands[0], op, "the output value")
        attributes = {"name": op.attributes["name"], "dep": index_attr(view.dep_texts()),
                      "domain": index_attr(list(view.domain))}
        if "cond" in op.attributes:
            cond = self.condition(op)
            self.check_steps(cond, view.domain, op, "condition")
            attributes["cond"] = op.attributes["cond"]
        ir.Operation.create("sdg.output", operands=[view.value], attributes=attributes,
                            loc=op.location)

    def stop_when(self, op: ir.Operation) -> None:
        """`rt.stop_when %c` becomes `sdg.stop_when %c[dep] domain D(c)`."""
        view = self.view(op.operands[0], op, "the stop condition")
        if not view.domain:
            raise self.fail("the stop condition has no temporal dim (its domain is [])", op)
        attributes = {"dep": index_attr(view.dep_texts()), "domain": index_attr(list(view.domain))}
        ir.Operation.create("sdg.stop_when", operands=[view.value], attributes=attributes, loc=op.location)

    def finish(self) -> None:
        for merge in self.merges.values():
            merge.op.attributes["deps"] = ir.ArrayAttr.get(merge.deps)
            merge.op.attributes["conds"] = ir.ArrayAttr.get(merge.conds)
        for placeholder in self.placeholders:
            placeholder.erase()
