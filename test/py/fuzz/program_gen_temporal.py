"""Temporal reads and recurrences of the random-program generator (a mixin of
`program_gen.Gen`), and the generation rules both modules share: the feature
switches, `probe` (result dtypes) and `_compatible` (broadcastable shapes).

The reads: `index` (shifted, clamped, constant and sliced reads, tracking each
node's `margin`), `point_read`, `slice_read` with its time reduction
(`treduce`), `const_pair`; the recurrences by cases (`recurrence`,
`step_case`) and conditional definitions (`cond_def`).
"""
from __future__ import annotations

import numpy as np

from tidal import config

from program_desc import SLICES, kind_of, weak

EXCLUDE = set(config.fuzz_exclude.value)
# Features drawn only on request (TIDAL_FUZZ_INCLUDE=feat,feat): `slice_elementwise`
# (an elementwise op on a slice whose size varies with the point: padded values on
# jax), whose programs make the suite's fuzz budget about 3x slower (make fuzz with
# TIDAL_FUZZ_INCLUDE=slice_elementwise draws them).
INCLUDE = set(config.fuzz_include.value)
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


def _compatible(a, b) -> bool:
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


# -- the strategy --------------------------------------------------------------------------------



class TemporalReads:
    """Methods of `Gen` that read over time; they use its `add`, `pick`, `n`, ... ."""

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
        table = {"f": ["sum", "mean", "max", "min", "prod", "dsum", "dsteps"],
                 "i": ["sum", "max", "min", "mean", "dsum"],
                 "b": ["any", "all", "sum"]}[n.kind]
        if prefix_dim is not None and n.kind == "f" and self.chance(0.5):
            table = ["cumsum_take"]
        read = ix if self.n(ix).op == "index" else self.n(ix).args[0]
        if "empty_extremum" in EXCLUDE and any(c[0].endswith("_excl") for c in self.n(read).attrs["comps"]):
            table = [x for x in table if x not in ("max", "min")]  # F1 (numpy backend)
        k = self.pick(table)
        if nlead > 1 and k in ("dsum", "dsteps", "cumsum_take"):
            k = "sum"
        attrs = {"kind": k, "nlead": nlead}
        if k == "dsum":
            attrs["gamma"] = self.pick([0.9, 0.5])
            dtype = weak(n.dtype, attrs["gamma"])
        elif k == "dsteps":     # per-step discounts sigmoid(x): a reverse linear_scan
            dtype = n.dtype
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
        xs = [i for i in self.pool if self.n(i).op == "input" and rd in self.n(i).domain and shape
              and set(self.n(i).domain) <= set(dom) and len(self.n(i).shape) == len(shape)
              and self.n(i).shape[:-1] == shape[:-1] and self.n(i).kind == "f"]
        if k == "f" and xs and "rec_input_proj" not in EXCLUDE and self.chance(0.5):
            # an RNN's input projection x[t] @ U read at the step's point (sdg-vectorize's "early")
            proj = self.projection(self.pick(xs), shape[-1])
            prev = self.fit(self.binary("add", self.fit(prev, shape), proj), shape)
        comb = self.pick({"f": ["add", "mul", "sub"], "i": ["add", "sub", "mul"], "b": ["xor", "and", "or"]}[k])
        v = self.fit(self.binary(comb, self.fit(prev, shape), other), shape)
        if k == "f":
            v = self.unary(self.pick(["tanh", "sin"]), v) if self.chance(0.8) else self.binary("mul", v, lit=0.5)
        elif k == "i":
            v = self.binary("mod", v, lit=self.pick([7, 5, 3]))
        if not np.can_cast(self.n(v).dtype, dtype, "same_kind") or self.chance(0.3):
            v = self.cast(v, dtype)
        self.desc.stmts.append(("define", s, at_target, None, v))

    def projection(self, a, m):
        """`a @ U` with a new float param U of (a's last axis, m), marked for `features`."""
        n = self.n(a)
        rng = np.random.default_rng(len(self.desc.nodes))
        name = f"W{len(self.desc.nodes)}"
        self.desc.params[name] = (np.round(rng.normal(size=(n.shape[-1], m)) * 0.5, 2)).astype(n.dtype)
        u = self.add("param", [], {"name": name}, n.dtype, (n.shape[-1], m), domain=())
        self.pool.append(u)
        return self.add("matmul", [a, u], {"proj": True}, n.dtype, n.shape[:-1] + (m,))

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
