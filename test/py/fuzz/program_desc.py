"""The fuzzer's own description of a program, independent of Tidal.

A `Desc` is a list of `Node`s (each a tensor: op, arguments, dtype, domain,
per-point shape) and statements in trace order: node creations, definition
cases of recurrent tensors, outputs and gradients. `program_eval.py`
evaluates a Desc point by point; `Desc.source()` writes it as a Tidal
program (Python text, also the reproducer printed on a failure).

Temporal index components (one per dim of the indexed tensor's domain):

    ("id",)          t                      ("shift", k)   t + k (unclamped)
    ("lclamp", k)    max(0, t + k), k < 0   ("rclamp", k)  min(t + k, T - 1), k > 0
    ("const", c)     c                      ("last", k)    T - 1 - k
    ("div", m)       t // m
    ("window", w)    max(0, t - w + 1):t + 1   ("prefix",)  0:t + 1
    ("suffix",)      t:T                       ("nstep", n) t:min(t + n, T)
    ("full", s)      0:T:s
    ("window_excl", w)  max(0, t - w):t     ("prefix_excl",)  0:t       (a recurrence's own past)
    ("suffix_excl",)    t + 1:T             ("nstep_excl", n) t + 1:min(t + 1 + n, T)

Conditions: ("mod", d, off, m, r): (d + off) % m == r; ("lt_last", d, k):
d < D - 1 - k; ("eq_last", d, k): d == D - 1 - k; ("ge", d, c): d >= c;
("and", c1, c2).
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

BOUND = {"i": "I", "t": "T"}
SLICES = ("window", "prefix", "suffix", "nstep", "full", "window_excl", "prefix_excl", "suffix_excl",
          "nstep_excl")
POINT_USES_STEP = ("id", "shift", "lclamp", "rclamp", "div")


def _dom(domain: tuple) -> str:
    return "(" + ", ".join(domain) + ("," if len(domain) == 1 else "") + ")"


def weak(dtype: str, lit) -> str:
    """The dtype a tensor of `dtype` and a Python scalar compute in (frontend/dtypes.py): the
    tensor's, unless the scalar's kind is higher: then the default of that kind (float32, int64)."""
    lk = 0 if isinstance(lit, bool) else 1 if isinstance(lit, int) else 2
    tk = {"b": 0, "i": 1, "f": 2}[kind_of(dtype)]
    return dtype if lk <= tk else {1: "int64", 2: "float32"}[lk]


def kind_of(dtype: str) -> str:
    return {"float32": "f", "float64": "f", "int32": "i", "int64": "i", "bool": "b"}[dtype]


@dataclasses.dataclass
class Node:
    id: int
    op: str
    args: tuple
    attrs: dict
    dtype: str
    domain: tuple          # dim names in program order
    shape: tuple           # static ints; "S" marks a temporal-slice axis (reduced next)
    margin: dict = dataclasses.field(default_factory=dict)  # dim -> (lo, hi) undefined rim

    @property
    def kind(self) -> str:
        return kind_of(self.dtype)

    @property
    def total(self) -> bool:
        return all(v == (0, 0) for v in self.margin.values())


# -- text of index components and conditions ---------------------------------------------------

def comp_text(d: str, c: tuple) -> str:
    D = BOUND[d]
    k = c[0]
    if k == "id":
        return d
    if k == "shift":
        return d if c[1] == 0 else f"{d} + {c[1]}" if c[1] > 0 else f"{d} - {-c[1]}"
    if k == "lclamp":
        return f"td.max(0, {d} - {-c[1]})"
    if k == "rclamp":
        return f"td.min({d} + {c[1]}, {D} - 1)"
    if k == "const":
        return str(c[1])
    if k == "last":
        return f"{D} - 1" if c[1] == 0 else f"{D} - {1 + c[1]}"
    if k == "div":
        return f"{d} // {c[1]}"
    if k == "window":
        return f"td.max(0, {d} - {c[1] - 1}):{d} + 1" if c[1] > 1 else f"{d}:{d} + 1"
    if k == "prefix":
        return f"0:{d} + 1"
    if k == "suffix":
        return f"{d}:{D}"
    if k == "nstep":
        return f"{d}:td.min({d} + {c[1]}, {D})"
    if k == "full":
        return f"0:{D}" if c[1] == 1 else f"0:{D}:{c[1]}"
    if k == "window_excl":
        return f"td.max(0, {d} - {c[1]}):{d}"
    if k == "prefix_excl":
        return f"0:{d}"
    if k == "suffix_excl":
        return f"{d} + 1:{D}"
    if k == "nstep_excl":
        return f"{d} + 1:td.min({d} + {1 + c[1]}, {D})"
    raise ValueError(c)


def comp_eval(d: str, c: tuple, env: dict) -> Any:
    """An int (a point) or a range (a slice) at the consumer's point `env` (steps and bounds)."""
    D = env[BOUND[d]]
    k = c[0]
    v = env.get(d)
    if k == "id":
        return v
    if k == "shift":
        return v + c[1]
    if k == "lclamp":
        return max(0, v + c[1])
    if k == "rclamp":
        return min(v + c[1], D - 1)
    if k == "const":
        return c[1]
    if k == "last":
        return D - 1 - c[1]
    if k == "div":
        return v // c[1]
    if k == "window":
        return range(max(0, v - c[1] + 1), v + 1)
    if k == "prefix":
        return range(0, v + 1)
    if k == "suffix":
        return range(v, D)
    if k == "nstep":
        return range(v, min(v + c[1], D))
    if k == "full":
        return range(0, D, c[1])
    if k == "window_excl":
        return range(max(0, v - c[1]), v)
    if k == "prefix_excl":
        return range(0, v)
    if k == "suffix_excl":
        return range(v + 1, D)
    if k == "nstep_excl":
        return range(v + 1, min(v + 1 + c[1], D))
    raise ValueError(c)


def cond_text(c: tuple) -> str:
    if c[0] == "and":
        return f"({cond_text(c[1])}) & ({cond_text(c[2])})"
    d = c[1]
    D = BOUND[d]
    if c[0] == "mod":
        e = d if c[2] == 0 else f"({d} + {c[2]})"
        return f"{e} % {c[3]} == {c[4]}"
    if c[0] == "lt_last":
        return f"{d} < {D} - {1 + c[2]}"
    if c[0] == "eq_last":
        return f"{d} == {D} - {1 + c[2]}"
    if c[0] == "ge":
        return f"{d} >= {c[2]}"
    raise ValueError(c)


def cond_eval(c: tuple, env: dict) -> bool:
    if c[0] == "and":
        return cond_eval(c[1], env) and cond_eval(c[2], env)
    v, D = env[c[1]], env[BOUND[c[1]]]
    if c[0] == "mod":
        return (v + c[2]) % c[3] == c[4]
    if c[0] == "lt_last":
        return v < D - 1 - c[2]
    if c[0] == "eq_last":
        return v == D - 1 - c[2]
    if c[0] == "ge":
        return v >= c[2]
    raise ValueError(c)


# -- UDFs: pure NumPy functions (the evaluator calls the same body on float64) -------------------

UDFS = {  # name: (input kind, body in terms of `a`, output kinds ("same", "f32", "scalar"))
    "tanh_affine": ("f", ["np.tanh(a) * 1.5 + 0.25"], ["same"]),
    "sin_cos": ("f", ["np.sin(a)", "np.cos(a) * 2.0"], ["same", "same"]),
    "sq_total": ("f", ["(a * a).sum() * 0.5"], ["scalar"]),
    "int_mix": ("i", ["(a * 3 + 1) % 7"], ["same"]),
    "int_to_float": ("i", ["a * 0.5 - 1.0"], ["f32"]),
    "bool_not": ("b", ["np.logical_not(a)"], ["same"]),
}


def udf_fn(name: str):
    """The pure function of a UDF (for the evaluator)."""
    bodies = UDFS[name][1]
    fns = [eval(f"lambda a: {b}", {"np": np}) for b in bodies]  # noqa: S307 (fixed table)
    if len(fns) == 1:
        return fns[0]
    return lambda a: tuple(f(a) for f in fns)


def udf_source(fname: str, name: str) -> str:
    bodies = UDFS[name][1]
    ret = bodies[0] if len(bodies) == 1 else "(" + ", ".join(bodies) + ")"
    return f"def {fname}(a):\n    CALLS[{fname!r}] += 1\n    return {ret}\n"


# -- the description ---------------------------------------------------------------------------

_UNARY_TD = {"not": "td.logical_not"}
_BINOP = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floordiv": "//", "mod": "%", "pow": "**",
          "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!=",
          "and": "&", "or": "|", "xor": "^"}
_BINFN = {"max": "td.maximum", "min": "td.minimum"}
TREDUCE_METHOD = {"sum": "sum", "mean": "mean", "max": "amax", "min": "amin", "prod": "prod",
                  "any": "any", "all": "all"}


class Desc:
    def __init__(self, dims: tuple):
        self.dims = dims
        self.nodes: list[Node] = []
        self.stmts: list[tuple] = []
        self.params: dict[str, np.ndarray] = {}
        self.min_bound = {d: 1 for d in dims}
        self.grads: list[tuple] = []   # (output name, wrt node id, loss node id)

    def node(self, i: int) -> Node:
        return self.nodes[i]

    def outputs(self) -> list[tuple]:
        return [s for s in self.stmts if s[0] == "output"]

    def inputs(self) -> list[Node]:
        return [n for n in self.nodes if n.op == "input"]

    # -- Python source ---------------------------------------------------------------------
    def _lit(self, v: Any) -> str:
        return repr(v)

    def _expr(self, n: Node) -> str | None:
        a = [f"n{x}" for x in n.args]
        at = n.attrs
        op = n.op
        if op == "input":
            return f'td.input("x{n.id}", shape={n.shape}, dtype="{n.dtype}", domain={_dom(n.domain)})'
        if op == "param":
            return f'td.param("W{n.id}", PARAMS["W{n.id}"])'
        if op == "unary":
            k = at["kind"]
            if k == "neg":
                return f"-{a[0]}"
            return f"{_UNARY_TD.get(k, 'td.' + k)}({a[0]})"
        if op == "binary":
            k = at["kind"]
            if "lit" in at:
                side, v = at["lit"]
                x, y = (self._lit(v), a[0]) if side == 0 else (a[0], self._lit(v))
            else:
                x, y = a
            if k in _BINFN:
                return f"{_BINFN[k]}({x}, {y})"
            return f"{x} {_BINOP[k]} {y}"
        if op == "where":
            return f"td.where({a[0]}, {a[1]}, {a[2]})"
        if op == "cast":
            return f'{a[0]}.astype("{n.dtype}")'
        if op == "reduce":
            ax = "" if at["axis"] is None else str(at["axis"])
            return f"{a[0]}.{TREDUCE_METHOD[at['kind']]}({ax})"
        if op == "matmul":
            return f"{a[0]} @ {a[1]}"
        if op == "shape":
            k = at["kind"]
            if k == "transpose":
                return f"{a[0]}.T"
            if k in ("cat", "stack"):
                return f"td.{k}([{a[0]}, {a[1]}], {at['axis']})"
            if k == "take":
                return f"td.take({a[0]}, {at['axis']}, {at['index']})"
            return f"td.flip({a[0]}, {at['axis']})"
        if op == "index":
            src = self.node(n.args[0])
            comps = ", ".join(comp_text(d, c) for d, c in zip(src.domain, at["comps"]))
            return f"{a[0]}[{comps}]"
        if op == "treduce":
            k, nl = at["kind"], at["nlead"]
            ax = "0" if nl == 1 else "(0, 1)"
            if k == "dsum":
                return f"{a[0]}.discounted_sum({at['gamma']}, dim=0)"
            if k == "dsteps":
                return f"{a[0]}.discounted_sum(td.sigmoid({a[0]}), dim=0)"
            if k == "cumsum_take":
                d = at["dim"]
                lead = "" if at.get("short") else ":, " * len(self.node(n.args[0]).domain)
                return f"{a[0]}.cumsum(0)[{lead}{d}]"
            return f"{a[0]}.{TREDUCE_METHOD[k]}({ax})"
        if op == "recurrent":
            return f'td.recurrent(shape={n.shape}, dtype="{n.dtype}", domain={_dom(n.domain)})'
        if op == "random":
            shape = ", ".join(map(str, n.shape))
            sep = ", " if shape else ""
            fn = {"uniform": "rand", "normal": "randn", "bernoulli": "bernoulli"}[at["dist"]]
            dt = "" if at["dist"] == "bernoulli" else f', dtype="{n.dtype}"'
            return f"td.{fn}({shape}{sep}domain={_dom(n.domain)}{dt}, seed={at['seed']})"
        if op == "symbol":
            d = at["dim"]
            return f"td.symbol({d})" if not at["rev"] else f"td.symbol({BOUND[d]} - 1 - {d})"
        if op == "udfcall":
            outs = [self.node(o) for o in at["outs"]]
            lhs = ", ".join(f"n{o.id}" for o in outs)
            if len(outs) == 1:
                return None, f'{lhs} = td.udf(udf_{n.id}, [{a[0]}], shape={outs[0].shape}, dtype="{outs[0].dtype}")'
            shapes = ", ".join(str(o.shape) for o in outs)
            dtypes = ", ".join(f'"{o.dtype}"' for o in outs)
            return None, f"{lhs} = td.udf(udf_{n.id}, [{a[0]}], shapes=[{shapes}], dtypes=[{dtypes}])"
        if op == "udfo":
            return None, None
        raise ValueError(op)

    def source(self) -> str:
        """The program as Python (builds `p`; needs np, td, PARAMS, CALLS in scope)."""
        lines = []
        for n in self.nodes:
            if n.op == "udfcall":
                lines.append(udf_source(f"udf_{n.id}", n.attrs["udf"]))
        steps = ", ".join(f"({d}, {BOUND[d]})" for d in self.dims)
        names = ", ".join(f'"{d}"' for d in self.dims)
        lines.append('with td.Program("fuzz") as p:')
        lines.append(f"    {steps}{',' if len(self.dims) == 1 else ''} = p.dims({names})")
        for s in self.stmts:
            lines.append("    " + self._stmt(s))
        return "\n".join(lines) + "\n"

    def _stmt(self, s: tuple) -> str:
        if s[0] == "node":
            n = self.node(s[1])
            e = self._expr(n)
            if isinstance(e, tuple):
                return e[1] if e[1] else "pass"
            return f"n{n.id} = {e}"
        if s[0] == "define":
            _, sid, comps, cond, value = s
            rec = self.node(sid)
            key = [comp_text(d, c) for d, c in zip(rec.domain, comps)]
            if cond is not None:
                key = ([] if all(c == ("id",) for c in comps) else key) + [cond_text(cond)]
            v = f"n{value}" if isinstance(value, int) else self._lit(value[1])
            return f"n{sid}[{', '.join(key)}] = {v}"
        if s[0] == "output":
            _, name, nid, cond = s
            v = f"n{nid}" if cond is None else f"n{nid}[{cond_text(cond)}]"
            return f'p.output("{name}", {v})'
        if s[0] == "stop":   # td.stop_when over t: a float's sum above a threshold, or a bool's any
            _, nid, thr = s
            n = self.node(nid)
            cond = f"n{nid}.any()" if n.kind == "b" else f"n{nid}.sum() > {thr!r}"
            return f"td.stop_when({cond})"
        if s[0] == "grad":
            _, loss, wrt, names = s
            ln = self.node(loss)
            lv = f"n{loss}" if ln.shape == () else f"n{loss}.sum()"
            lhs = "".join(f"{nm}_, " for nm in names)
            out = "; ".join(f'p.output("{nm}", {nm}_)' for nm in names)
            return f"{lhs.rstrip(', ')}{',' if len(names) == 1 else ''} = td.grad({lv}, [{', '.join(f'n{w}' for w in wrt)}]); {out}"
        raise ValueError(s)

    def repro(self, bounds: dict | None = None, inputs: dict | None = None) -> str:
        """A standalone script: the program, its params and inputs, a run on each backend."""
        head = ["import collections", "import numpy as np", "import tidal as td", "",
                "CALLS = collections.Counter()",
                "PARAMS = {" + ", ".join(f'"{k}": np.array({v.tolist()!r}, dtype="{v.dtype}")'
                                         for k, v in self.params.items()) + "}"]
        body = self.source()
        tail = []
        if bounds is not None:
            ins = ", ".join(f'"{k}": np.array({np.asarray(v).tolist()!r}, dtype="{np.asarray(v).dtype}")'
                            for k, v in (inputs or {}).items())
            tail = [f"inputs = {{{ins}}}",
                    'for backend in ("reference", "numpy", "jax"):',
                    f"    print(backend, p.compile(backend=backend).run(bounds={bounds!r}, inputs=inputs))"]
        return "\n".join(head) + "\n" + body + "\n".join(tail) + "\n"
