"""A hypothesis strategy for random, valid Tidal programs (as `Desc`s).

`programs()` draws the dims ((t,) or (i, t)), 1-3 inputs of any dtype, then a
few *steps*, each one feature (elementwise expressions, spatial reductions,
matmul with params, clamped/constant point reads, windows, prefixes,
suffixes, n-step and full slices reduced over time (sums, extrema, discounted
sums with a constant or per-step discount), recurrences by cases forward or
backward of order 1-3 with base cases and conditional resets, conditional
definitions, UDFs, random ops, symbols), then outputs (some conditional, some
a derived value read over a whole dim or reduced over a prefix/suffix of one)
and, for some float programs, gradients of a sum of an output.

Valid by construction: every node tracks the rim of its domain where it is
undefined (`margin`: reads `x[t + 1]` are undefined at t = T - 1); only
total nodes are output, fed to UDFs, sliced or clamped, and the values of
recurrence cases read shifted points only where the case applies. Constant
reads raise `min_bound`. Values are kept tame (tanh/sin squashing, `% m`
for integers, safe log/sqrt/div) so floats stay finite and ints in range.

`EXCLUDE` (env TIDAL_FUZZ_EXCLUDE=feat,feat) switches features off while a
defect is being fixed; `INCLUDE` (TIDAL_FUZZ_INCLUDE) switches opt-in ones on
(program_gen_temporal.py). Temporal reads and recurrences live in
program_gen_temporal.py (the `TemporalReads` mixin).
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from program_desc import UDFS, Desc, Node

from program_gen_temporal import (EXCLUDE, FLOAT_UNARY, SHAPES, STEP_FEATURES, TemporalReads,
                                  _compatible, probe)


class Gen(TemporalReads):
    def __init__(self, draw, dims):
        self.draw = draw
        self.desc = Desc(dims)
        self.pool: list[int] = []      # total, finished nodes usable anywhere
        self.seed = 0

    # -- drawing helpers -------------------------------------------------------------------
    def pick(self, xs):
        return self.draw(st.sampled_from(list(xs)))

    def weighted(self, table: dict):
        items = [k for k, w in table.items() if k not in EXCLUDE for _ in range(w)]
        return self.pick(items)

    def dpick(self, dtypes):
        """A dtype, skipping excluded ones (float32 is never excluded)."""
        return self.pick([d for d in dtypes if d not in EXCLUDE] or ["float32"])

    def chance(self, p: float) -> bool:
        return self.draw(st.integers(0, 99)) < p * 100

    def n(self, i: int) -> Node:
        return self.desc.nodes[i]

    # -- node creation -----------------------------------------------------------------------
    def add(self, op, args, attrs, dtype, shape, domain=None, margin=None, stmt=True) -> int:
        dims = self.desc.dims
        if domain is None:
            ds = set()
            for a in args:
                ds |= set(self.n(a).domain)
            domain = tuple(d for d in dims if d in ds)
        if margin is None:
            margin = {}
            for a in args:
                for d, (lo, hi) in self.n(a).margin.items():
                    plo, phi = margin.get(d, (0, 0))
                    margin[d] = (max(lo, plo), max(hi, phi))
        node = Node(len(self.desc.nodes), op, tuple(args), attrs, dtype, tuple(domain), tuple(shape),
                    {d: margin.get(d, (0, 0)) for d in domain})
        self.desc.nodes.append(node)
        if stmt:
            self.desc.stmts.append(("node", node.id))
        return node.id

    def unary(self, kind, a):
        n = self.n(a)
        fn = {"not": np.logical_not, "neg": np.negative, "relu": np.positive, "sigmoid": np.exp,
              "rsqrt": np.sqrt}.get(kind) or getattr(np, {"abs": "absolute"}.get(kind, kind))
        return self.add("unary", [a], {"kind": kind}, probe(fn, n.dtype), n.shape)

    def binary(self, kind, a, b=None, lit=None, side=1):
        n = self.n(a)
        fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
              "pow": np.power, "max": np.maximum, "min": np.minimum, "mod": np.mod,
              "floordiv": np.floor_divide, "lt": np.less, "le": np.less_equal, "gt": np.greater,
              "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal, "and": np.logical_and,
              "or": np.logical_or, "xor": np.logical_xor}[kind]
        if b is None:
            dtype = probe(fn, n.dtype, lit=lit)
            return self.add("binary", [a], {"kind": kind, "lit": (side, lit)}, dtype, n.shape)
        if not _compatible(n.shape, self.n(b).shape):
            b = self.reduce_all(b)
        m = self.n(b)
        shape = np.broadcast_shapes(n.shape, m.shape)
        return self.add("binary", [a, b], {"kind": kind}, probe(fn, n.dtype, m.dtype), shape)

    def cast(self, a, dtype):
        return a if self.n(a).dtype == dtype else self.add("cast", [a], {}, dtype, self.n(a).shape)

    # -- leaves and conversions ------------------------------------------------------------------
    def to_kind(self, a, kind):
        n = self.n(a)
        if n.kind == kind:
            return a
        if kind == "f":
            return self.cast(a, self.dpick(["float32", "float64"]))
        if kind == "i":
            if n.kind == "f":  # truncation toward zero
                return self.cast(self.binary("mul", a, lit=2.0), self.dpick(["int32", "int64"]))
            return self.cast(a, self.dpick(["int64", "int32"]))
        return self.binary(self.pick(["gt", "lt"]), a, lit=0.3 if n.kind == "f" else 0)

    def leaf(self, pool, kind=None, shape_ok=None):
        cands = [i for i in pool if shape_ok is None or shape_ok(self.n(i).shape)]
        if not cands:
            cands = list(pool)
        same = [i for i in cands if kind is None or self.n(i).kind == kind]
        if same and self.chance(0.5):  # prefer recent nodes: longer chains of features
            same = same[-2:]
        a = self.pick(same) if same and self.chance(0.85) else self.pick(cands)
        return a if kind is None else self.to_kind(a, kind)

    # -- elementwise expressions -----------------------------------------------------------------
    def expr(self, pool, kind, depth, shape_ok=None):
        """An expression of `kind` ('f', 'i', 'b') over nodes of `pool`."""
        a = self.leaf(pool, kind, shape_ok)
        if depth <= 0 or self.chance(0.25):
            return a
        if kind == "f":
            return self.float_op(pool, a, depth)
        if kind == "i":
            return self.int_op(pool, a, depth)
        return self.bool_op(pool, a, depth)

    def partner(self, pool, a, kind, depth):
        """Another expression broadcastable with `a`, or None (use a literal)."""
        sa = self.n(a).shape
        ok = [i for i in pool if _compatible(sa, self.n(i).shape)]
        if not ok or self.chance(0.35):
            return None
        return self.expr(ok, kind, depth - 1, lambda s: _compatible(sa, s))

    def float_op(self, pool, a, depth):
        op = self.pick(["unary", "binary", "binary", "where", "reduce", "matmul", "shape"])
        if op == "matmul" and self.n(a).shape:
            return self.matmul(a)
        if op == "shape" and self.n(a).shape:
            return self.shape_op(pool, a)
        if op == "unary":
            k = self.pick(FLOAT_UNARY)
            if k in ("exp",):
                a = self.unary("sin", a)
            elif k in ("log", "sqrt", "reciprocal"):
                a = self.binary("add", self.unary("abs", a), lit=0.5)
            elif k == "rsqrt":
                a = self.binary("add", self.unary("square", a), lit=1.0)
            return self.unary(k, a)
        if op == "reduce" and self.n(a).shape:
            return self.reduce(a)
        if op == "where":
            b = self.partner(pool, a, "f", depth)
            c = self.expr(pool, "b", depth - 1, lambda s: s == () or s == self.n(a).shape)
            if b is None:
                b = self.binary("mul", a, lit=-0.5)
            return self.where(c, a, b)
        k = self.pick(["add", "mul", "sub", "max", "min", "div", "pow", "mod"])
        b = self.partner(pool, a, "f", depth)
        if k == "div":
            den = self.binary("add", self.unary("abs", b), lit=1.0) if b is not None else None
            return self.binary("div", a, den, lit=None if den is not None else 1.5)
        if k == "pow":
            return self.binary("pow", a, lit=2)
        if k == "mod":
            return self.binary("mod", a, lit=1.5)
        if b is None:
            return self.binary(k, a, lit=self.pick([0.5, -1.25, 2.0]), side=self.pick([0, 1]))
        return self.binary(k, a, b)

    def int_op(self, pool, a, depth):
        op = self.pick(["binary", "binary", "unary", "where", "reduce", "modlit", "shape"])
        if op == "shape" and self.n(a).shape:
            return self.shape_op(pool, a)
        if op == "unary":
            return self.unary(self.pick(["neg", "abs", "sign", "square"]), a)
        if op == "modlit":
            return self.binary(self.pick(["mod", "floordiv"]), a, lit=self.pick([3, 2, 5]))
        if op == "reduce" and self.n(a).shape:
            return self.reduce(a)
        b = self.partner(pool, a, "i", depth)
        if op == "where":
            c = self.expr(pool, "b", depth - 1, lambda s: s == () or s == self.n(a).shape)
            b = self.binary("add", a, lit=1) if b is None else b
            return self.where(c, a, b)
        k = self.pick(["add", "sub", "mul", "max", "min"])
        if b is None:
            return self.binary(k, a, lit=self.pick([1, -2, 3]), side=self.pick([0, 1]))
        return self.binary(k, a, b)

    def bool_op(self, pool, a, depth):
        op = self.pick(["logic", "compare", "not", "reduce"])
        if op == "not":
            return self.unary("not", a)
        if op == "reduce" and self.n(a).shape:
            return self.reduce(a)
        if op == "compare":
            k = self.pick(["f", "i"])
            x = self.expr(pool, k, depth - 1)
            y = self.partner(pool, x, k, depth)
            cmp = self.pick(["gt", "lt", "ge", "le", "ne", "eq"])
            if y is None:
                return self.binary(cmp, x, lit=0.3 if k == "f" else 1)
            return self.binary(cmp, x, y)
        b = self.partner(pool, a, "b", depth)
        if b is None:
            b = self.unary("not", a)
        return self.binary(self.pick(["and", "or", "xor"]), a, b)

    def shape_op(self, pool, a):
        """flip, transpose, take, or cat/stack with a tensor of the same shape and dtype."""
        n = self.n(a)
        axis = self.pick(range(len(n.shape)))
        same = [i for i in pool if self.n(i).shape == n.shape and self.n(i).dtype == n.dtype]
        k = self.pick(["flip", "take", "cat", "transpose", "stack"])
        if k == "transpose" and len(n.shape) == 2:
            return self.add("shape", [a], {"kind": k}, n.dtype, n.shape[::-1])
        if k in ("cat", "stack") and (k == "cat" or len(n.shape) == 1):
            b = self.pick(same) if same else a
            if k == "stack":
                return self.add("shape", [a, b], {"kind": k, "axis": axis}, n.dtype, (2,) + n.shape)
            sh = tuple(s * 2 if j == axis else s for j, s in enumerate(n.shape))
            return self.add("shape", [a, b], {"kind": k, "axis": axis}, n.dtype, sh)
        if k == "take":
            idx = self.pick([0, -1, 1])
            sh = tuple(s for j, s in enumerate(n.shape) if j != axis)
            return self.add("shape", [a], {"kind": k, "axis": axis, "index": idx}, n.dtype, sh)
        return self.add("shape", [a], {"kind": "flip", "axis": axis}, n.dtype, n.shape)

    def where(self, c, a, b):
        if not _compatible(self.n(a).shape, self.n(b).shape):
            b = self.reduce_all(b)
        if not _compatible(np.broadcast_shapes(self.n(a).shape, self.n(b).shape), self.n(c).shape):
            c = self.reduce_all(c)
        return self.add("where", [c, a, b], {}, probe(np.add, self.n(a).dtype, self.n(b).dtype),
                        np.broadcast_shapes(*(self.n(x).shape for x in (c, a, b))))

    def fit(self, v, shape):
        """v, reduced to a scalar if it does not broadcast to `shape`."""
        sh = self.n(v).shape
        if _compatible(sh, shape) and np.broadcast_shapes(sh, shape) == shape:
            return v
        return self.reduce_all(v)

    def reduce(self, a):
        n = self.n(a)
        kinds = {"f": ["sum", "mean", "max", "min", "prod"], "i": ["sum", "max", "min", "prod", "mean"],
                 "b": ["any", "all"]}[n.kind]
        k = self.pick(kinds)
        axis = self.pick([None] + list(range(len(n.shape))))
        shape = () if axis is None else tuple(s for j, s in enumerate(n.shape) if j != axis)
        fn = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
              "any": np.any, "all": np.all}[k]
        return self.add("reduce", [a], {"kind": k, "axis": axis}, probe(lambda z: fn(z, axis=0), n.dtype), shape)

    def matmul(self, a=None):
        """`a @ W` with a new param W ((k, k) keeps a's shape: `h[t + 1] = tanh(h[t] @ W + ...)`),
        or, at top level, sometimes a dot/matrix-vector product of two tensors."""
        square = a is not None
        cands = [i for i in self.pool if self.n(i).shape and self.n(i).kind != "b"]
        if a is None:
            if not cands:
                return None
            a = self.pick(cands)
        n = self.n(a)
        dots = [i for i in cands if self.n(i).shape == (n.shape[-1],) and self.n(i).kind == n.kind]
        if not square and dots and self.chance(0.25):
            b = self.pick(dots)
            return self.add("matmul", [a, b], {}, probe(np.add, n.dtype, self.n(b).dtype), n.shape[:-1])
        k = n.shape[-1]
        m = k if square else self.pick([3, 2]) if len(n.shape) == 1 else 3
        rng = np.random.default_rng(len(self.desc.nodes))
        w = (np.round(rng.normal(size=(k, m)) * 0.5, 2) if n.kind == "f" else rng.integers(-2, 3, (k, m)))
        name = f"W{len(self.desc.nodes)}"
        self.desc.params[name] = w.astype(n.dtype)
        W = self.add("param", [], {"name": name}, n.dtype, (k, m), domain=())
        self.pool.append(W)
        return self.add("matmul", [a, W], {}, n.dtype, n.shape[:-1] + (m,))

    # -- temporal reads ------------------------------------------------------------------------
    def input(self, domain=None):
        dims = self.desc.dims
        if domain is None:
            doms = [dims, dims, dims[-1:], ()] + ([("i",)] if len(dims) == 2 else [])
            domain = self.pick(doms)
        dtype = self.dpick(["float32", "float32", "float64", "int32", "int64", "bool"])
        i = self.add("input", [], {}, dtype, self.pick(SHAPES), domain)
        self.pool.append(i)
        return i

    def udf(self):
        name = self.pick(list(UDFS))
        kind, _, outs = UDFS[name]
        a = self.leaf(self.pool, kind)
        n = self.n(a)
        call = self.add("udfcall", [a], {"udf": name, "outs": []}, n.dtype, n.shape)
        ids = []
        for j, o in enumerate(outs):
            dt = n.dtype if o != "f32" else "float32"
            sh = () if o == "scalar" else n.shape
            ids.append(self.add("udfo", [call], {"index": j}, dt, sh, stmt=False))
        self.n(call).attrs["outs"] = ids
        self.pool.extend(ids)
        return ids[-1]

    def random(self):
        dims = self.desc.dims
        dom = self.pick([dims, dims[-1:], ()] + ([("i",)] if len(dims) == 2 else []))
        dist = self.pick(["uniform", "normal", "bernoulli"])
        dtype = "bool" if dist == "bernoulli" else self.dpick(["float32", "float64"])
        self.seed += 1
        r = self.add("random", [], {"dist": dist, "seed": self.seed}, dtype, self.pick(SHAPES), dom)
        self.pool.append(r)
        return r

    def symbol(self):
        d = self.pick(self.desc.dims)
        s = self.add("symbol", [], {"dim": d, "rev": self.chance(0.3)}, "int64", (), (d,))
        return s if self.chance(0.5) else self.cast(s, self.dpick(["float32", "float64", "int32"]))


def _step(g: Gen, feat: str):
    if feat == "elementwise":
        return g.expr(g.pool, g.pick(["f", "f", "i", "b"]), g.pick([1, 2, 3]))
    if feat == "reduce":
        shaped = [i for i in g.pool if g.n(i).shape]
        return g.reduce(g.pick(shaped)) if shaped else None
    if feat == "matmul":
        return g.matmul()
    if feat == "point":
        return g.point_read()
    if feat == "slice":
        return g.slice_read()
    if feat == "const_pair":
        return g.const_pair()
    return getattr(g, feat)()


def ancestors(desc: Desc, nid: int) -> set:
    cases = {}
    for s in desc.stmts:
        if s[0] == "define" and isinstance(s[4], int):
            cases.setdefault(s[1], []).append(s[4])
    seen, stack = set(), [nid]
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        stack.extend(desc.nodes[i].args)
        stack.extend(cases.get(i, []))
    return seen


@st.composite
def programs(draw, max_steps: int = 10, stop: float = 0.3):
    """A random valid program description (see the module docstring); `stop`:
    the chance that a program over t alone ends with a `td.stop_when` (1: over t
    alone, always)."""
    dims = draw(st.sampled_from([("t",)] if stop >= 1 else
                                [("t",), ("t",)] + ([] if "two_dims" in EXCLUDE else [("i", "t")])))
    g = Gen(draw, dims)
    for _ in range(draw(st.integers(1, 3))):
        g.input()
    for _ in range(draw(st.integers(2, max_steps))):
        r = _step(g, g.weighted(STEP_FEATURES))
        if r is not None and r not in g.pool:
            g.pool.append(r)
    desc = g.desc
    made = [i for i in g.pool if desc.nodes[i].op not in ("input", "param")] or list(g.pool)
    outs = [made[-1]] + [g.pick(g.pool) for _ in range(draw(st.integers(0, 2)))]
    names = {}
    for i in outs:
        if i not in names:
            names[i] = f"o{len(names)}"
            desc.stmts.append(("output", names[i], i, None))
    temporal = [i for i in made if desc.nodes[i].domain]
    floats = [i for i in temporal if desc.nodes[i].kind == "f"]
    whole_w = None   # the weight of a matmul summed over a whole dim (below)
    if floats and "whole_range" not in EXCLUDE and g.chance(0.3):
        # a derived value read only over all of one dim (a gradient's sum over t):
        # what sdg-vectorize turns into one batched op
        i = g.pick(floats)
        if desc.nodes[i].shape and g.chance(0.5):
            i = g.matmul(i)   # then the loss's weight gradient sums per-step products (sdg-contract)
            whole_w = desc.nodes[i].args[1]
        v = g.unary(g.pick(FLOAT_UNARY), i)
        d = g.pick(desc.nodes[v].domain)
        r = g.treduce(g.index(v, [("full", 1) if x == d else ("id",) for x in desc.nodes[v].domain]))
        desc.stmts.append(("output", "ow", r, None))
        names[r] = "ow"   # a loss for the gradients below: its weight gradients sum per-step products
    if floats and "window_whole" not in EXCLUDE and g.chance(0.3):
        # a reduction over a bounded window (x[t:min(t + n, T)], x[max(0, t - w + 1):t + 1]),
        # maybe through an elementwise op, read only over all of the dim: what
        # sdg-vectorize batches at the window's capacity, padded and masked
        i = g.pick(floats)
        d = g.pick(desc.nodes[i].domain)
        comp = g.pick([("nstep", 2), ("window", 3), ("nstep", 3), ("window", 2)])
        ix = g.index(i, [comp if x == d else ("id",) for x in desc.nodes[i].domain])
        if g.chance(0.5):
            ix = g.unary(g.pick(FLOAT_UNARY), ix)
        r = g.treduce(ix)
        if desc.nodes[r].kind == "f" and d in desc.nodes[r].domain:
            r = g.treduce(g.index(r, [("full", 1) if x == d else ("id",) for x in desc.nodes[r].domain]))
            desc.stmts.append(("output", "ov", r, None))
    if floats and "lift_window" not in EXCLUDE and g.chance(0.3):
        # a reduction over a prefix x[0:t + 1] or suffix x[t:T], maybe through an
        # elementwise op: what sdg-lift turns into one scan over the whole dim
        i = g.pick(floats)
        d = g.pick(desc.nodes[i].domain)
        ix = g.index(i, [g.pick([("prefix",), ("suffix",)]) if x == d else ("id",) for x in desc.nodes[i].domain])
        if g.chance(0.5):
            ix = g.unary(g.pick(FLOAT_UNARY), ix)
        desc.stmts.append(("output", "ol", g.treduce(ix), None))
    if temporal and "cond_output" not in EXCLUDE and g.chance(0.2):
        i = g.pick(temporal)
        d = g.pick(desc.nodes[i].domain)
        desc.stmts.append(("output", "oc", i, g.pick([("mod", d, 0, 2, 0), ("ge", d, 1), ("eq_last", d, 0)])))
    if "grad" not in EXCLUDE and g.chance(0.4):
        losses = []
        for i in names:
            if desc.nodes[i].kind == "f":
                wrt = [a for a in sorted(ancestors(desc, i))
                       if desc.nodes[a].op in ("input", "param") and desc.nodes[a].kind == "f"]
                if wrt:
                    losses.append((i, wrt))
        if losses:
            whole = [(i, w) for i, w in losses if whole_w in w]
            loss, wrt = g.pick(whole) if whole and g.chance(0.7) else g.pick(losses)
            chosen = sorted({g.pick(wrt) for _ in range(g.pick([1, 2]))} | ({whole_w} & set(wrt)))
            gnames = [f"g{k}" for k in range(len(chosen))]
            desc.stmts.append(("grad", loss, tuple(chosen), tuple(gnames)))
            desc.grads = [(nm, w, loss) for nm, w in zip(gnames, chosen)]
    if desc.dims == ("t",) and "stop" not in EXCLUDE and g.chance(stop):
        add_stop(g, made)
    return desc


def add_stop(g: Gen, made: list) -> None:
    """`td.stop_when(n.sum() > thr)` (`n.any()` for a bool) on a value over t that the
    frontend accepts as a condition (no T, no later step), else on an input over t."""
    desc = g.desc
    ok = [i for i in made if desc.nodes[i].domain == ("t",) and desc.nodes[i].total and desc.nodes[i].kind in "fib"]
    inputs = [n.id for n in desc.inputs() if n.domain == ("t",) and n.kind in "fib"]
    for nid in ([g.pick(ok)] if ok else []) + ([g.pick(inputs)] if inputs else []):
        thr = g.pick([-1.0, 0.0, 0.5, 1.5]) if desc.nodes[nid].kind == "f" else g.pick([0, 2, 5])
        desc.stmts.append(("stop", nid, thr))
        if _accepted(desc):
            return
        desc.stmts.pop()


def _accepted(desc) -> bool:
    """Whether the frontend accepts the program's stop condition."""
    import tidal as td
    from fuzz_check import build
    try:
        p, _ = build(desc)
        p.module()
    except td.TidalError as e:
        if "td.stop_when" in str(e):
            return False
        raise
    return True


def features(desc: Desc) -> set:
    """The features a program uses (for the coverage histogram)."""
    f = set()
    if len(desc.dims) == 2:
        f.add("two_dims")
    for n in desc.nodes:
        f.add(f"dtype:{n.dtype}")
        if n.attrs.get("proj"):
            f.add("rec_input_proj")
        if n.op in ("unary", "binary", "where"):
            f.add("elementwise")
        elif n.op == "shape":
            f.add(f"shape:{n.attrs['kind']}")
        elif n.op in ("reduce", "matmul", "cast", "random", "symbol", "param"):
            f.add({"param": "matmul", "random": "random"}.get(n.op, n.op))
        elif n.op == "udfcall":
            f.add("udf")
        elif n.op == "treduce":
            f.add(f"treduce:{n.attrs['kind']}")
            if desc.nodes[n.args[0]].op != "index":
                f.add("slice_elementwise")
        elif n.op == "index":
            for c in n.attrs["comps"]:
                if c[0] != "id":
                    if n.attrs.get("own"):
                        f.add("rec_self_window")
                    f.add({"lclamp": "clamped_shift", "rclamp": "clamped_shift", "last": "const_point",
                           "const": "const_point", "shift": "unclamped_shift", "div": "coarse_read"}.get(c[0], c[0]))
            consts = [c for c in n.attrs["comps"] if c[0] in ("const", "last")]
            if consts:
                f.add("const_point")
        elif n.op == "recurrent":
            st_ = n.attrs["style"]
            f.add({"fwd": "rec_forward", "fwd_id": "rec_forward", "bwd": "rec_backward",
                   "bwd_shift": "rec_backward", "cond": "cond_def"}[st_])
            if n.attrs.get("order", 1) > 1:
                f.add("rec_order>1")
            if n.attrs.get("pair"):
                f.add("rec_pair")
            if len(n.domain) == 2:
                f.add("rec_two_dims")
    for s in desc.stmts:
        if s[0] == "define" and s[3] is not None:
            f.add("cond_def" if desc.nodes[s[1]].attrs["style"] == "cond" else "rec_cond_reset")
        if s[0] == "output" and s[3] is not None:
            f.add("cond_output")
        if s[0] == "output" and s[1] == "ow":
            f.add("whole_range")
        if s[0] == "output" and s[1] == "ol":
            f.add("lift_window")
        if s[0] == "output" and s[1] == "ov":
            f.add("window_whole")
        if s[0] == "grad":
            f.add("grad")
        if s[0] == "stop":
            f.add("stop_when" if desc.nodes[s[1]].op != "input" else "stop_when_input")
    idx = [n for n in desc.nodes if n.op == "index" and all(c[0] in ("const", "last", "id") for c in n.attrs["comps"])]
    srcs = [n.args[0] for n in idx if any(c[0] in ("const", "last") for c in n.attrs["comps"])]
    if len(srcs) != len(set(srcs)):
        f.add("const_pair")
    return f
