"""The isl AST of a schedule as a small loop tree, and its readable form.

    tree = from_isl(sched.ast())     # [For | If | Exec, ...]; sched.loop_tree() checks it
    print(format_loop_nest(tree, graph))

Expressions are tuples: `("int", 3)`, `("var", "c0")` and `(op, *args)` with
op in `add sub mul neg floordiv mod min max eq ne lt le gt ge and or not
select`. `floordiv` is floor division; isl only emits `mod` on a non-negative
dividend or to compare with zero, so floor and truncating remainders agree.
A `For` runs `var` from `lower` to `upper` (exclusive) by `step`; an `Exec`
runs node `node` at the point `args` (one expression per step of its domain).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

import islpy as isl

__all__ = ["For", "If", "Exec", "from_isl", "plus", "format_expr", "format_loop_nest", "walk"]


@dataclass
class For:
    var: str
    lower: tuple
    upper: tuple     # exclusive
    step: int
    body: list


@dataclass
class If:
    cond: tuple
    then: list
    orelse: list = field(default_factory=list)


@dataclass
class Exec:
    node: int
    args: list
    # a merge's branches that can hold at the instances run here (None: all;
    # merge_branches.py)
    branches: tuple | None = None


Stmt = Union[For, If, Exec]

_OPS = {
    isl.ast_expr_op_type.and_: "and", isl.ast_expr_op_type.and_then: "and",
    isl.ast_expr_op_type.or_: "or", isl.ast_expr_op_type.or_else: "or",
    isl.ast_expr_op_type.max: "max", isl.ast_expr_op_type.min: "min",
    isl.ast_expr_op_type.minus: "neg", isl.ast_expr_op_type.add: "add",
    isl.ast_expr_op_type.sub: "sub", isl.ast_expr_op_type.mul: "mul",
    isl.ast_expr_op_type.div: "floordiv", isl.ast_expr_op_type.fdiv_q: "floordiv",
    isl.ast_expr_op_type.pdiv_q: "floordiv", isl.ast_expr_op_type.pdiv_r: "mod",
    isl.ast_expr_op_type.zdiv_r: "mod", isl.ast_expr_op_type.cond: "select",
    isl.ast_expr_op_type.select: "select", isl.ast_expr_op_type.eq: "eq",
    isl.ast_expr_op_type.le: "le", isl.ast_expr_op_type.lt: "lt",
    isl.ast_expr_op_type.ge: "ge", isl.ast_expr_op_type.gt: "gt",
}


def _expr(e: isl.AstExpr) -> tuple:
    kind = e.get_type()
    if kind == isl.ast_expr_type.int:
        return ("int", e.get_val().to_python())
    if kind == isl.ast_expr_type.id:
        return ("var", e.get_id().get_name())
    op = e.get_op_type()
    if op not in _OPS:
        raise ValueError(f"unsupported isl AST expression {e.to_C_str()}")
    args = [_expr(e.get_op_arg(i)) for i in range(e.get_op_n_arg())]
    name = _OPS[op]
    if name == "add" and args[0][0] == "neg":     # -T + c0 -> c0 - T
        return ("sub", args[1], args[0][1])
    if name in ("min", "max") and len(args) > 2:  # n-ary -> nested binary
        acc = args[0]
        for a in args[1:]:
            acc = (name, acc, a)
        return acc
    return _fold_constant_condition((name, *args))


def _fold_constant_condition(e: tuple) -> tuple:
    """isl writes a condition the context decides as an integer (`1`): a guard
    on a derived bound, N = (T + 63) // 64. Folds and/or/not/select of one."""
    name, args = e[0], e[1:]
    const = [a[1] for a in args if a[0] == "int"]
    if name == "select" and args[0][0] == "int":
        return args[1] if args[0][1] else args[2]
    if name == "not" and const:
        return ("int", int(not const[0]))
    if name in ("and", "or") and const:
        other = args[1] if args[0][0] == "int" else args[0]
        if name == "and":
            return other if const[0] else ("int", 0)
        return ("int", 1) if const[0] else other
    return e


def plus(e: tuple, k: int) -> tuple:
    """`e + k`, folding integer constants (`(T + 1) + 1` -> `T + 2`)."""
    if k == 0:
        return e
    if e[0] == "int":
        return ("int", e[1] + k)
    if e[0] == "add" and e[2][0] == "int":
        return plus(e[1], e[2][1] + k)
    if e[0] == "sub" and e[2][0] == "int":
        return plus(e[1], k - e[2][1])
    return ("add", e, ("int", k)) if k > 0 else ("sub", e, ("int", -k))


def _upper(cond: tuple, var: str) -> tuple:
    """The exclusive upper bound of a for loop from its condition."""
    op = cond[0]
    if op in ("le", "lt") and cond[1] == ("var", var):
        return plus(cond[2], 1) if op == "le" else cond[2]
    if op in ("ge", "gt") and cond[2] == ("var", var):
        return plus(cond[1], 1) if op == "ge" else cond[1]
    raise ValueError(f"unsupported loop condition {format_expr(cond)}")


def _node(n: isl.AstNode) -> list:
    kind = n.get_type()
    if kind == isl.ast_node_type.block:
        children = n.block_get_children()
        out = []
        for i in range(children.n_ast_node()):
            out += _node(children.get_at(i))
        return out
    if kind == isl.ast_node_type.mark:
        return _node(n.mark_get_node())
    if kind == isl.ast_node_type.for_:
        var = n.for_get_iterator().get_id().get_name()
        inc = _expr(n.for_get_inc())
        if inc[0] != "int" or inc[1] <= 0:
            raise ValueError(f"unsupported loop increment {format_expr(inc)}")
        return [For(var, _expr(n.for_get_init()), _upper(_expr(n.for_get_cond()), var), inc[1],
                    _node(n.for_get_body()))]
    if kind == isl.ast_node_type.if_:
        orelse = _node(n.if_get_else_node()) if n.if_has_else_node() else []
        cond = _expr(n.if_get_cond())
        if cond[0] == "int":   # a guard the context decides (a derived bound: N = (T + 63) // 64)
            return _node(n.if_get_then_node()) if cond[1] else orelse
        return [If(cond, _node(n.if_get_then_node()), orelse)]
    if kind == isl.ast_node_type.user:
        call = n.user_get_expr()
        name = call.get_op_arg(0).get_id().get_name()
        args = [_expr(call.get_op_arg(i)) for i in range(1, call.get_op_n_arg())]
        return [Exec(int(name[1:]), args)]
    raise ValueError(f"unsupported isl AST node {n.to_C_str()}")


def from_isl(node: isl.AstNode | None) -> list:
    """The loop tree of an isl AST (None, for an empty schedule, gives [])."""
    return [] if node is None else _node(node)


def walk(tree: list):
    """Every statement of a loop tree, pre-order."""
    for s in tree:
        yield s
        if isinstance(s, For):
            yield from walk(s.body)
        elif isinstance(s, If):
            yield from walk(s.then)
            yield from walk(s.orelse)


_INFIX = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%", "eq": "==", "ne": "!=",
          "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "and": "and", "or": "or"}
_PREC = {"or": 1, "and": 2, "eq": 4, "ne": 4, "lt": 4, "le": 4, "gt": 4, "ge": 4, "add": 5, "sub": 5,
         "mul": 6, "floordiv": 6, "mod": 6, "neg": 7}


def format_expr(e: tuple, prec: int = 0) -> str:
    """Python-like text of an expression (minimal parentheses)."""
    op = e[0]
    if op == "int":
        return str(e[1]) if e[1] >= 0 or prec < 7 else f"({e[1]})"
    if op == "var":
        return e[1]
    if op in ("min", "max"):
        return f"{op}({', '.join(format_expr(a) for a in e[1:])})"
    if op == "select":
        text = f"{format_expr(e[2], 3)} if {format_expr(e[1], 3)} else {format_expr(e[3], 3)}"
        return f"({text})" if prec > 0 else text
    if op == "neg":
        text = f"-{format_expr(e[1], 7)}"
    elif op == "not":
        text = f"not {format_expr(e[1], 3)}"
    else:
        p = _PREC[op]
        left = format_expr(e[1], p)
        right = format_expr(e[2], p + 1)
        if op == "add" and right.startswith("-") and e[2][0] == "int":
            text = f"{left} - {right[1:]}"
        else:
            text = f"{left} {_INFIX[op]} {right}"
    mine = _PREC.get(op, 3)
    return f"({text})" if mine < prec else text


def _range(s: For) -> str:
    lo, hi = format_expr(s.lower), format_expr(s.upper)
    step = f", {s.step}" if s.step != 1 else ""
    return f"range({hi}{step})" if lo == "0" and not step else f"range({lo}, {hi}{step})"


def format_loop_nest(tree: list, graph=None, indent: str = "  ", memory: dict | None = None) -> str:
    """A readable loop nest: `for c0 in range(2, T):` / `if ...:` and one line
    per execution, `%3 = sdg.binary add [t = c0 - 2]`. `memory`: the store
    lifetimes between top-level statements (lifetimes.memory_events), as
    `alloc %3` / `free %3` lines."""
    lines: list[str] = []

    def label(k: int) -> str:
        return graph.nodes[k].label if graph is not None else f"S{k}"

    def emit(stmts: list, depth: int) -> None:
        pad = indent * depth
        for s in stmts:
            if isinstance(s, For):
                lines.append(f"{pad}for {s.var} in {_range(s)}:")
                emit(s.body, depth + 1)
            elif isinstance(s, If):
                lines.append(f"{pad}if {format_expr(s.cond)}:")
                emit(s.then, depth + 1)
                if s.orelse:
                    lines.append(f"{pad}else:")
                    emit(s.orelse, depth + 1)
            else:
                steps = graph.nodes[s.node].domain if graph is not None else [f"d{i}" for i in range(len(s.args))]
                at = ", ".join(f"{n} = {format_expr(a)}" for n, a in zip(steps, s.args))
                lines.append(f"{pad}{label(s.node)}" + (f"  [{at}]" if at else ""))
    for j, stmt in enumerate(tree):
        allocs, frees = (memory or {}).get(j, ((), ()))
        lines += [f"alloc %{k}" for k in allocs]
        emit([stmt], 0)
        lines += [f"free %{k}" for k in frees]
    return "\n".join(lines) + ("\n" if lines else "")
