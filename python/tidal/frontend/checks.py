"""Checks on definitions by cases, reported at the user's line.

* `check_case_domains`: the value varies only with dims the target has, and
  not with a dim the case fixes to a constant (`s[0] = x[t]` is ambiguous).
* `check_case_reads` (at the `s[...] = v` line): `v` reads `s` (through any
  chain of ops and temporal indices) only inside `s`'s domain and never at
  the point being defined, wherever this case applies, given the earlier
  cases (first match wins). `s[t] = s[t - 1]` with no earlier `s[0]` case
  reads `s[-1]` at t = 0.
* `check_program` (when the program is printed or compiled): every recurrent
  tensor has a case, and every point a case reads is defined by some case.

The read checks evaluate the symbolic expressions on every point of small
domains (bounds 1..7 for one dim, fewer per dim for more dims) and report a
concrete witness; they never report a problem that has no witness.
"""
from __future__ import annotations

import itertools
from typing import Any, Iterator

from tidal.symbolic import Dim, Expr, evaluate, simplify, substitute

from .errors import TidalError
from .tensor import Case, RecurrentTensor

__all__ = ["check_case_domains", "check_case_reads", "check_program", "collect_reads"]

_MAX_BOUND = {0: 1, 1: 7, 2: 5, 3: 4}


def _names(dims) -> str:
    return ", ".join(d.step.name for d in dims) or "none"


def _idx(comps) -> str:
    return ", ".join(str(c) for c in comps)


def check_case_domains(s: RecurrentTensor, psi: list, cond: Expr | None, v: RecurrentTensor) -> None:
    from .indexing import describe

    extra = [d for d in v.domain if d not in s.domain]
    if extra:
        raise TidalError(f"the value of this case varies with {_names(extra)}, but {describe(s)} has "
                         f"domain ({_names(s.domain)})",
                         f"declare the recurrent tensor with domain including {_names(extra)}, or index "
                         f"the value so it does not vary with {_names(extra)} (e.g. x[0])")
    for d, c in zip(s.domain, psi):
        if d.step in c.free_symbols:
            continue
        if d in v.domain:
            raise TidalError(f"this case defines the single point {d.step.name} = {c}, but its value "
                             f"varies with {d.step.name}",
                             f"index the value at that point too (e.g. x[{c}] instead of x)")
        if cond is not None and d.step in cond.free_symbols:
            raise TidalError(f"the condition `{cond}` uses {d.step.name}, which this case fixes to {c}",
                             "drop that part of the condition")


def collect_reads(value: RecurrentTensor, target: RecurrentTensor) -> list[tuple]:
    """Where `value` (at point p) reads `target`: tuples over target's domain of
    points or Slices, as expressions in the steps of p."""
    reads: list[tuple] = []
    seen: set = set()
    stack = [(value, tuple(d.step for d in value.domain))]
    while stack:
        x, coords = stack.pop()
        key = (id(x), coords)
        if key in seen:
            continue
        seen.add(key)
        if x is target:
            reads.append(coords)
            continue
        node = x.node
        if node.op in ("recurrent", "input", "param"):
            continue
        env = {d.step: c for d, c in zip(x.domain, coords)}
        if node.op == "index":
            src = node.inputs[0]
            comps = tuple(simplify(substitute(c, env)) if env else c for c in node.attrs["index"])
            if src is target:
                reads.append(comps)
            elif all(c.kind == "int" for c in comps):
                stack.append((src, comps))
            continue
        for inp in node.inputs:
            stack.append((inp, tuple(env[d.step] for d in inp.domain)))
    return reads


def _grid(dims: list[Dim], point_dims: tuple) -> Iterator[dict]:
    """Name -> value environments: bounds 1..B for `dims`, every point of `point_dims`."""
    top = _MAX_BOUND.get(len(dims), 3)
    for bounds in itertools.product(range(1, top + 1), repeat=len(dims)):
        env = {d.bound.name: b for d, b in zip(dims, bounds)}
        for point in itertools.product(*(range(env[d.bound.name]) for d in point_dims)):
            yield {**env, **{d.step.name: v for d, v in zip(point_dims, point)}}


def _dims(s: RecurrentTensor, exprs: list) -> list[Dim]:
    found = set(s.domain)
    for e in exprs:
        for sym in e.free_symbols:
            if sym.role in ("step", "bound"):
                found.add(sym.dim)
    return sorted(found, key=s.program.order)


def _case_exprs(case: Case) -> list:
    out = list(case.index)
    if case.cond is not None:
        out.append(case.cond)
    return out


def _read_exprs(reads: list) -> list:
    out = []
    for r in reads:
        for c in r:
            out += [c.start, c.stop] if c.kind == "slice" else [c]
    return out


def _source_point(s: RecurrentTensor, case: Case, q: tuple, env: dict) -> dict | None:
    """The point p at which `case` defines q (as a name -> value env), or None."""
    p = dict(env)
    for d, c, qd in zip(s.domain, case.index, q):
        if d.step in c.free_symbols:
            pd = qd - evaluate(simplify(c - d.step), {})
            if not 0 <= pd < env[d.bound.name]:
                return None
            p[d.step.name] = pd
        else:
            if evaluate(c, env) != qd:
                return None
            p[d.step.name] = 0
    if case.cond is not None and not evaluate(case.cond, p):
        return None
    return p


def _applies(s: RecurrentTensor, case: Case, earlier: list, env: dict) -> tuple | None:
    """q = psi(p) when `case` is the first match there, else None."""
    q = tuple(evaluate(c, env) for c in case.index)
    if any(not 0 <= v < env[d.bound.name] for d, v in zip(s.domain, q)):
        return None
    if case.cond is not None and not evaluate(case.cond, env):
        return None
    if any(_source_point(s, e, q, env) is not None for e in earlier):
        return None
    return q


def _where(s: RecurrentTensor, env: dict) -> str:
    steps = ", ".join(f"{d.step.name} = {env[d.step.name]}" for d in s.domain)
    bounds = ", ".join(f"{d.bound.name} = {env[d.bound.name]}" for d in s.domain)
    return f"{steps} ({bounds})" if steps else f"({bounds})"


def _points(r: tuple, env: dict) -> list[tuple]:
    axes = []
    for c in r:
        if c.kind == "slice":
            sl = evaluate(c, env)
            axes.append(list(range(sl.start, sl.stop, sl.step or 1)))
        else:
            axes.append([evaluate(c, env)])
    return list(itertools.product(*axes))


def check_case_reads(s: RecurrentTensor, case: Case) -> None:
    """Out-of-domain and self reads of `s` by a new case (see the module doc)."""
    from .indexing import describe

    reads = collect_reads(case.value, s)
    if not reads:
        return
    dims = _dims(s, _case_exprs(case) + _read_exprs(reads) +
                 [x for e in s.cases for x in _case_exprs(e)])
    domain = ", ".join(f"0 <= {d.step.name} < {d.bound.name}" for d in s.domain)
    for env in _grid(dims, s.domain):
        q = _applies(s, case, s.cases, env)
        if q is None:
            continue
        for r in reads:
            pts = _points(r, env)
            for pt in pts:
                outside = any(not 0 <= v < env[d.bound.name] for d, v in zip(s.domain, pt))
                if outside:
                    base = ", ".join(str(c.start if c.kind == "slice" else c) for c in r)
                    raise TidalError(
                        f"this definition of {describe(s)} reads it at [{_idx(r)}], which is outside its "
                        f"domain ({domain}) at {_where(s, env)}: no earlier case defines that point",
                        f"add a base case before this line (e.g. s[0] = ... for a read of s[{base}]), or "
                        f"shift this case so it only applies where the read is valid (e.g. "
                        f"s[t + 1] = f(s[t]))")
                if pt == q:
                    raise TidalError(
                        f"this definition of {describe(s)} reads the very point it defines "
                        f"([{_idx(r)}] at {_where(s, env)}): a cycle with no base",
                        "read an earlier point (e.g. s[t - 1]) and add a base case, e.g. "
                        "s[0] = ...; s[t + 1] = f(s[t])")


def check_program(program: Any) -> None:
    """Whole-program checks before printing/compiling (see the module doc)."""
    from .indexing import describe

    for node in program.nodes:
        if node.op != "recurrent":
            continue
        s = node.outputs[0]
        if not s.cases:
            raise TidalError(f"{describe(s)} is declared but never defined",
                             "define it by cases, e.g. s[0] = ...; s[t + 1] = f(s[t])",
                             location=s.loc)
        for k, case in enumerate(s.cases):
            reads = collect_reads(case.value, s)
            if not reads:
                continue
            earlier = s.cases[:k]
            dims = _dims(s, _read_exprs(reads) + [x for e in s.cases for x in _case_exprs(e)])
            for env in _grid(dims, s.domain):
                if _applies(s, case, earlier, env) is None:
                    continue
                for r in reads:
                    for pt in _points(r, env):
                        benv = {n: v for n, v in env.items() if n in {d.bound.name for d in dims}}
                        if any(not 0 <= v < env[d.bound.name] for d, v in zip(s.domain, pt)):
                            continue  # reported when the case was traced
                        if not any(_source_point(s, c, pt, benv) is not None for c in s.cases):
                            raise TidalError(
                                f"this definition of {describe(s)} reads it at [{_idx(r)}] = "
                                f"{list(pt)} at {_where(s, env)}, a point that no case defines",
                                "add a case that defines it (e.g. a base case s[0] = ...)",
                                location=case.loc)

