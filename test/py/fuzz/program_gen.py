"""A hypothesis strategy for random, valid Tidal programs (as `Desc`s).

`programs()` draws the dims ((t,) or (i, t)), 1-3 inputs of any dtype, then a
few *steps*, each one feature (elementwise expressions, spatial reductions,
matmul with params, clamped/constant point reads, windows, prefixes,
suffixes, n-step and full slices reduced over time, recurrences by cases
forward or backward of order 1-3 with base cases and conditional resets,
conditional definitions, UDFs, random ops, symbols), then outputs (some
conditional) and, for some float programs, gradients of a sum of an output.

Valid by construction: every node tracks the rim of its domain where it is
undefined (`margin`: reads `x[t + 1]` are undefined at t = T - 1); only
total nodes are output, fed to UDFs, sliced or clamped, and the values of
recurrence cases read shifted points only where the case applies. Constant
reads raise `min_bound`. Values are kept tame (tanh/sin squashing, `% m`
for integers, safe log/sqrt/div) so floats stay finite and ints in range.

`EXCLUDE` (env TIDAL_FUZZ_EXCLUDE=feat,feat) switches features off while a
defect is being fixed; it is empty by default, so every feature is drawn.
"""
from __future__ import annotations

import os

import numpy as np
from hypothesis import strategies as st

from program_desc import SLICES, UDFS, Desc, Node, kind_of, weak

EXCLUDE = {f for f in os.environ.get("TIDAL_FUZZ_EXCLUDE", "").split(",") if f}
# Features drawn only on request (TIDAL_FUZZ_INCLUDE=feat,feat): `slice_elementwise`
# (an elementwise op on a slice whose size varies with the point: padded values on
# jax) is off by default until the open finding it hit is fixed (issue 8 notes, F4).
INCLUDE = {f for f in os.environ.get("TIDAL_FUZZ_INCLUDE", "").split(",") if f}
SHAPES = [(), (3,), (2,), (2, 3)]
FLOAT_UNARY = ["tanh", "sin", "neg", "abs", "sigmoid", "relu", "cos", "square", "exp", "log",
               "sqrt", "rsqrt", "reciprocal", "floor", "ceil", "sign"]
STEP_FEATURES = {  # feature: weight
    "elementwise": 6, "slice": 6, "recurrence": 6, "point": 3, "reduce": 2, "matmul": 2,
    "cond_def": 3, "udf": 3, "random": 3, "symbol": 1, "const_pair": 1,
}


def probe(fn, *dtypes, lit=None):
    """The result dtype of `fn` on tensors of `dtypes` (a Python scalar `lit` joins weakly), by
    the rules of python/tidal/frontend/dtypes.py: NumPy's, except that float64 only comes from
    float64 (int / int, int64 + float32, mean of ints are the default float32)."""
    if lit is not None:
        dtypes = (weak(dtypes[0], lit),) * 2
    with np.errstate(all="ignore"):
        out = str(np.asarray(fn(*[np.zeros(1, d) for d in dtypes])).dtype)
    return "float32" if out == "float64" and "float64" not in dtypes else out


class Gen:
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
    def index(self, src, comps):
        n = self.n(src)
        domain, lead, margin = [], [], {}
        for d, c in zip(n.domain, comps):
            if c[0] in SLICES:
                lead.append("S")
            if c[0] in SLICES or c[0] in ("id", "shift", "lclamp", "rclamp", "div"):
                if c[0] not in ("full",):
                    domain.append(d)
            lo, hi = n.margin.get(d, (0, 0))
            if c[0] in ("id", "shift"):
                k = c[1] if c[0] == "shift" else 0
                margin[d] = (max(0, lo - k), max(0, hi + k))
            elif c[0] in ("window_excl", "prefix_excl"):  # self reads before t: need t >= 1
                margin[d] = (1, 0)
            elif c[0] in ("suffix_excl", "nstep_excl"):  # self reads after t: need t <= T - 2
                margin[d] = (0, 1)
            elif c[0] == "const":
                self.desc.min_bound[d] = max(self.desc.min_bound[d], c[1] + 1)
            elif c[0] == "last":
                self.desc.min_bound[d] = max(self.desc.min_bound[d], c[1] + 1)
        dom = tuple(d for d in self.desc.dims if d in domain)
        return self.add("index", [src], {"comps": tuple(comps)}, n.dtype, tuple(lead) + n.shape, dom,
                        margin)

    def treduce(self, ix, prefix_dim=None):
        n = self.n(ix)
        nlead = sum(1 for s in n.shape if s == "S")
        base = n.shape[nlead:]
        table = {"f": ["sum", "mean", "max", "min", "prod", "dsum"], "i": ["sum", "max", "min", "mean", "dsum"],
                 "b": ["any", "all", "sum"]}[n.kind]
        if prefix_dim is not None and n.kind == "f" and self.chance(0.5):
            table = ["cumsum_take"]
        read = ix if self.n(ix).op == "index" else self.n(ix).args[0]
        if "empty_extremum" in EXCLUDE and any(c[0].endswith("_excl") for c in self.n(read).attrs["comps"]):
            table = [x for x in table if x not in ("max", "min")]  # F1 (numpy backend)
        k = self.pick(table)
        if nlead > 1 and k in ("dsum", "cumsum_take"):
            k = "sum"
        attrs = {"kind": k, "nlead": nlead}
        if k == "dsum":
            attrs["gamma"] = self.pick([0.9, 0.5])
            dtype = weak(n.dtype, attrs["gamma"])
        elif k == "cumsum_take":
            attrs.update(dim=prefix_dim, short=len(n.domain) == 1 and self.chance(0.5))
            dtype = probe(lambda z: np.cumsum(z, axis=0), n.dtype)
        else:
            fn = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
                  "any": np.any, "all": np.all}[k]
            dtype = probe(lambda z: fn(z, axis=0), n.dtype)
        return self.add("treduce", [ix], attrs, dtype, base)

    def temporal_nodes(self, pool=None):
        return [i for i in (self.pool if pool is None else pool) if self.n(i).domain]

    def point_read(self):
        cands = self.temporal_nodes()
        if not cands:
            return None
        src = self.pick(cands)
        n = self.n(src)
        d = self.pick(n.domain)
        c = self.pick([("lclamp", -1), ("rclamp", 1), ("const", 0), ("div", 2), ("last", 0), ("lclamp", -2),
                       ("const", 1), ("div", 3), ("rclamp", 2), ("last", 1)])
        return self.index(src, [c if x == d else ("id",) for x in n.domain])

    def slice_read(self, src=None, dims=None):
        cands = self.temporal_nodes() if src is None else [src]
        if not cands:
            return None
        src = self.pick(cands)
        n = self.n(src)
        ds = [self.pick(n.domain if dims is None else dims)]
        if len(n.domain) == 2 and dims is None and self.chance(0.15):
            ds = list(n.domain)
        comps = []
        for x in n.domain:
            if x in ds:
                comps.append(self.pick([("window", 3), ("prefix",), ("suffix",), ("nstep", 2), ("full", 1),
                                        ("window", 2), ("prefix",), ("nstep", 3), ("suffix",), ("full", 2),
                                        ("window", 1)]))
            else:
                comps.append(("id",))
        ix = self.index(src, comps)
        pdim = ds[0] if len(ds) == 1 and comps[n.domain.index(ds[0])] == ("prefix",) else None
        if "slice_elementwise" in INCLUDE and self.chance(0.3):   # padded values (jax backend)
            ix = self.slice_elementwise(ix)
        return self.treduce(ix, pdim)

    def slice_elementwise(self, ix):
        """An elementwise op on a slice whose size varies with the point."""
        kind = self.n(ix).kind
        if kind == "b":
            return self.unary("not", ix)
        if kind == "f" and self.chance(0.5):
            return self.unary(self.pick(["tanh", "sin", "square", "abs"]), ix)
        return self.binary(self.pick(["mul", "add"]), ix, lit=self.pick([2, -1]) if kind == "i" else
                           self.pick([0.5, -1.25]), side=self.pick([0, 1]))

    def const_pair(self):
        """`x[0] + x[1]`-style reads of constant points (min bound 2)."""
        cands = [i for i in self.temporal_nodes() if self.n(i).kind != "b"]
        if not cands:
            return None
        src = self.pick(cands)
        n = self.n(src)
        d = self.pick(n.domain)
        a = self.index(src, [("const", 0) if x == d else ("id",) for x in n.domain])
        b = self.index(src, [self.pick([("const", 1), ("last", 0)]) if x == d else ("id",) for x in n.domain])
        return self.binary(self.pick(["add", "mul", "sub"]), a, b)

    # -- recurrences ------------------------------------------------------------------------------
    def rec_domain(self):
        dims = self.desc.dims
        if len(dims) == 1:
            return dims, dims[0]
        dom = self.pick([("i", "t"), ("i", "t"), ("t",), ("i",)])
        rd = self.pick(["t", "i"]) if len(dom) == 2 else dom[0]
        return dom, rd

    def fits(self, i, dom, shape):
        n = self.n(i)
        return set(n.domain) <= set(dom) and _compatible(n.shape, shape) and \
            np.broadcast_shapes(n.shape, shape) == shape

    def base_value(self, dom, rd, comp, dtype, shape):
        """A base case's value: a literal, or a total node read at the same constant point."""
        rest = tuple(d for d in dom if d != rd)
        cands = [i for i in self.pool if rd in self.n(i).domain and set(self.n(i).domain) <= set(dom)
                 and self.fits(i, dom, shape)]
        if cands and self.chance(0.7):
            src = self.pick(cands)
            n = self.n(src)
            v = self.index(src, [comp if d == rd else ("id",) for d in n.domain])
            return self.to_kind(v, kind_of(dtype))
        other = [i for i in self.pool if set(self.n(i).domain) <= set(rest) and self.fits(i, dom, shape)]
        if other and self.chance(0.5):
            return self.to_kind(self.pick(other), kind_of(dtype))
        return ("lit", {"f": 0.5, "i": 1, "b": True}[kind_of(dtype)])

    def recurrence(self):
        """One recurrence (or, with "rec_pair", two mutually recursive ones) by cases."""
        dom, rd = self.rec_domain()
        style = self.pick(["fwd", "bwd", "fwd_id", "bwd_shift"])
        order = self.pick([1, 1, 1, 2, 2, 3])
        pair = "rec_pair" not in EXCLUDE and self.chance(0.3)
        recs = []
        for _ in range(2 if pair else 1):
            dtype = self.dpick(["float32", "float32", "float64", "int32", "int64", "bool"])
            recs.append(self.add("recurrent", [], {"style": style, "order": order, "rd": rd, "pair": pair},
                                 dtype, self.pick(SHAPES), dom))
        fwd = style.startswith("fwd")
        saved_min = dict(self.desc.min_bound)
        for s in recs:
            for c in range(order):
                comp = ("const", c) if fwd else ("last", c)
                v = self.base_value(dom, rd, comp, self.n(s).dtype, self.n(s).shape)
                self.desc.stmts.append(("define", s, tuple(comp if d == rd else ("id",) for d in dom), None, v))
        self.desc.min_bound = saved_min  # base cases apply only where they define a point
        # where the step case applies, relative to its own point p: reads s and inputs at p + j
        target = {"fwd": order, "fwd_id": 0, "bwd": 0, "bwd_shift": -order}[style]
        offs = {"fwd": range(0, order), "fwd_id": range(-order, 0), "bwd": range(1, order + 1),
                "bwd_shift": range(-order + 1, 1)}[style]
        for k, s in enumerate(recs):
            extra = []
            for r in recs:
                if r != s:  # the partner at the points this one reads itself (and, for the
                    js = list(offs) + ([target] if k == 1 else [])  # second, the point defined)
                    extra.append(self.shifted(r, dom, rd, self.pick(js)))
            self.step_case(s, dom, rd, style, order, target, offs, extra)
        self.pool.extend(recs)
        return recs[-1]

    def shifted(self, s, dom, rd, j):
        return s if j == 0 else self.index(s, [("shift", j) if d == rd else ("id",) for d in dom])

    def step_case(self, s, dom, rd, style, order, target, offs, extra):
        dtype, shape = self.n(s).dtype, self.n(s).shape
        read_offsets = {"fwd": range(0, order + 1), "fwd_id": range(-order, 1),
                        "bwd": range(0, order + 1), "bwd_shift": range(-order, 1)}[style]
        local = [self.shifted(s, dom, rd, j) for j in offs]
        prev = self.pick(local)
        if style != "bwd_shift" and "rec_self_window" not in EXCLUDE and self.chance(0.25):
            comp = self.pick({"fwd": [("window", 2), ("prefix",), ("window", 3)],
                              "fwd_id": [("window_excl", 2), ("prefix_excl",)],
                              "bwd": [("suffix_excl",), ("nstep_excl", 2)]}[style])
            ix = self.index(s, [comp if d == rd else ("id",) for d in dom])
            self.n(ix).attrs["own"] = True
            local.append(self.treduce(ix))
        local += extra
        for i in self.pool:
            n = self.n(i)
            if not set(n.domain) <= set(dom) or not _compatible(n.shape, shape):
                continue
            if rd in n.domain and self.chance(0.5):
                i = self.shifted(i, n.domain, rd, self.pick(list(read_offsets)))
            local.append(i)
        k = kind_of(dtype)
        ok = lambda sh: _compatible(sh, shape) and np.broadcast_shapes(sh, shape) == shape  # noqa: E731
        if len(dom) == 2 and self.chance(0.3):  # reduce over the other dim (e.g. an episode per i)
            other = [d for d in dom if d != rd][0]
            mixed = self.expr(local, k if k != "b" else "f", 1, ok)
            h = self.binary("add", self.to_kind(prev, "f") if k == "b" else prev,
                            self.to_kind(mixed, "f") if k == "b" else mixed)
            if other in self.n(h).domain:
                h = self.slice_read(h, [other])
            prev = self.to_kind(h, k)
        if k == "f" and shape and self.chance(0.3):  # an RNN cell: s[t + 1] = tanh(s[t] @ W + ...)
            prev = self.matmul(prev)
        at_target = tuple(("shift", target) if d == rd else ("id",) for d in dom)
        if self.chance(0.3):  # a conditional reset before the step case
            v = self.fit(self.expr(local, k, 1, ok), shape)
            self.desc.stmts.append(("define", s, at_target, ("mod", rd, target, self.pick([2, 3]), 0),
                                    self.cast(v, dtype) if self.n(v).kind != k else v))
        other = self.fit(self.expr(local, k, 2, ok), shape)
        comb = self.pick({"f": ["add", "mul", "sub"], "i": ["add", "sub", "mul"], "b": ["xor", "and", "or"]}[k])
        v = self.fit(self.binary(comb, self.fit(prev, shape), other), shape)
        if k == "f":
            v = self.unary(self.pick(["tanh", "sin"]), v) if self.chance(0.8) else self.binary("mul", v, lit=0.5)
        elif k == "i":
            v = self.binary("mod", v, lit=self.pick([7, 5, 3]))
        if not np.can_cast(self.n(v).dtype, dtype, "same_kind") or self.chance(0.3):
            v = self.cast(v, dtype)
        self.desc.stmts.append(("define", s, at_target, None, v))

    def reduce_all(self, a):
        n = self.n(a)
        kk = {"f": "sum", "i": "sum", "b": "any"}[n.kind]
        return self.add("reduce", [a], {"kind": kk, "axis": None},
                        probe(lambda z: getattr(np, kk)(z, axis=0), n.dtype), ())

    def cond_def(self):
        dims = self.desc.dims
        dom = self.pick([dims, dims[-1:]]) if len(dims) == 2 else dims
        dtype = self.dpick(["float32", "int64", "bool", "float64", "int32"])
        shape = self.pick(SHAPES)
        y = self.add("recurrent", [], {"style": "cond"}, dtype, shape, dom)
        ok = lambda sh: _compatible(sh, shape) and np.broadcast_shapes(sh, shape) == shape  # noqa: E731
        pool = [i for i in self.pool if set(self.n(i).domain) <= set(dom) and ok(self.n(i).shape)] or \
            [i for i in self.pool if set(self.n(i).domain) <= set(dom)] or [self.input(dom)]
        for _ in range(self.pick([1, 1, 2])):
            d = self.pick(dom)
            c = self.pick([("mod", d, 0, 2, 0), ("mod", d, 1, 3, 0), ("eq_last", d, 0), ("ge", d, 2),
                           ("lt_last", d, 0), ("mod", d, 0, 3, 1)])
            if len(dom) == 2 and self.chance(0.3):
                c = ("and", c, ("mod", [x for x in dom if x != d][0], 0, 2, 1))
            v = self.fit(self.expr(pool, kind_of(dtype), 1, ok), shape)
            self.desc.stmts.append(("define", y, tuple(("id",) for _ in dom), c, self.cast(v, dtype)))
        v = self.fit(self.expr(pool, kind_of(dtype), 1, ok), shape)
        self.desc.stmts.append(("define", y, tuple(("id",) for _ in dom), None, self.cast(v, dtype)))
        self.pool.append(y)
        return y

    # -- sources ---------------------------------------------------------------------------------
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


def _compatible(a, b) -> bool:
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


# -- the strategy --------------------------------------------------------------------------------

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
def programs(draw, max_steps: int = 10):
    """A random valid program description (see the module docstring)."""
    dims = draw(st.sampled_from([("t",), ("t",)] + ([] if "two_dims" in EXCLUDE else [("i", "t")])))
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
            loss, wrt = g.pick(losses)
            chosen = sorted({g.pick(wrt) for _ in range(g.pick([1, 2]))})
            gnames = [f"g{k}" for k in range(len(chosen))]
            desc.stmts.append(("grad", loss, tuple(chosen), tuple(gnames)))
            desc.grads = [(nm, w, loss) for nm, w in zip(gnames, chosen)]
    return desc


def features(desc: Desc) -> set:
    """The features a program uses (for the coverage histogram)."""
    f = set()
    if len(desc.dims) == 2:
        f.add("two_dims")
    for n in desc.nodes:
        f.add(f"dtype:{n.dtype}")
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
        if s[0] == "grad":
            f.add("grad")
    idx = [n for n in desc.nodes if n.op == "index" and all(c[0] in ("const", "last", "id") for c in n.attrs["comps"])]
    srcs = [n.args[0] for n in idx if any(c[0] in ("const", "last") for c in n.attrs["comps"])]
    if len(srcs) != len(set(srcs)):
        f.add("const_pair")
    return f
