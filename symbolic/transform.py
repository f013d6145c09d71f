"""Structural transformations: substitution and free-symbol queries."""

from __future__ import annotations

from typing import Any, Mapping

from .errors import SymbolicTypeError
from .expr import INT, Expr, FloorDiv, Mod, Symbol, as_expr
from .indexing import IndexSeq, Slice
from .logic import Compare


def free_symbols(e: Any) -> frozenset:
    """The symbols occurring in ``e``.

    Same as ``e.free_symbols``, computed by an explicit-stack walk that visits
    each shared subexpression once: linear in the size of ``e`` and safe for
    deep trees such as a long flat sum (``Expr.free_symbols`` unions the
    children's sets at every node, recursively).  The result is cached on
    ``e`` as the property would.
    """
    root = as_expr(e)
    if root._free is not None or not root.args:
        return root.free_symbols
    found: set = set()
    seen = {id(root)}
    stack = [root]
    while stack:
        x = stack.pop()
        if x._free is not None:
            found.update(x._free)
        elif isinstance(x, Symbol):
            found.add(x)
        else:
            for a in x.args:
                if id(a) not in seen:
                    seen.add(id(a))
                    stack.append(a)
    result = frozenset(found)
    object.__setattr__(root, "_free", result)
    return result


def _replacements(mapping: Mapping) -> dict:
    table: dict = {}
    for key, value in mapping.items():
        name = key.name if isinstance(key, Symbol) else key
        if not isinstance(name, str):
            raise TypeError(f"substitute() keys must be symbols or names, got {key!r}")
        replacement = as_expr(value)
        if replacement.kind != INT:
            raise SymbolicTypeError(f"substitute(): `{name}` can only be replaced by an integer expression, got `{replacement}`")
        table[name] = replacement
    return table


def substitute(e: Any, mapping: Mapping, *, simplify: bool = False) -> Expr:
    """Replace symbols simultaneously: ``substitute(t + T, {t: t + 1})`` -> ``t + 1 + T``.

    Keys are symbols or names, values integer expressions or ints.  Slices are
    rebuilt without validation (a substitution may legitimately produce a
    slice that is empty at some points).  With ``simplify=True`` the result is
    simplified.
    """
    table = _replacements(mapping)
    memo: dict = {}

    def walk(x: Expr) -> Expr:
        if x in memo:
            return memo[x]
        if isinstance(x, Symbol):
            result = table.get(x.name, x)
        elif not x.args or not (x.free_symbols and _mentions(x, table)):
            result = x
        else:
            new_args = tuple(walk(a) for a in x.args)
            result = rebuild(x, new_args)
        memo[x] = result
        return result

    result = walk(as_expr(e))
    if simplify:
        from .simplifier import simplify as simplify_expr

        result = simplify_expr(result)
    return result


def _mentions(x: Expr, table: dict) -> bool:
    return any(s.name in table for s in x.free_symbols)


def rebuild(x: Expr, args: tuple) -> Expr:
    """Rebuild node ``x`` with new children (through the checking constructors)."""
    if isinstance(x, Slice):
        return Slice(args[0], args[1], x.step, validate=False)
    if isinstance(x, IndexSeq):
        return IndexSeq(args, validate=False)
    cls = type(x)
    if cls is FloorDiv or cls is Mod:
        return cls(args[0], x.divisor)
    if cls is Compare:
        return cls(x.op, *args)
    return cls(*args)
