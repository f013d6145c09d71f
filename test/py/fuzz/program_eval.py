"""An independent evaluator of a `Desc`: plain loops over points, float64 and exact ints.

It knows nothing of Tidal: it reads the fuzzer's own description and computes
the value of a node at a point on demand (memoised), following
docs/semantics.md: temporal reads select points or slices (a slice adds a
leading axis), definition cases are tried in order (first match wins), random
ops draw with the counter-based rule (tidal.runtime.counter_random). Floats are computed
in float64 whatever their declared dtype, integers in int64 (checked to fit
the declared dtype), so the backends are compared against a more exact
result. With `xp=jax.numpy` (under `jax.enable_x64`) the same code is the
unrolled float64 program that `jax.grad` differentiates.

Values too close to a discontinuity of the program (a float comparison that
rounding could flip, floor/ceil/int casts of values near an integer, mod of
floats near a multiple) raise `Fragile`: the example is rejected rather than
compared, since float32 rounding may legitimately decide differently.
Near-ties of max/min/relu/abs only matter for gradients and are counted
(`kinks`).
"""
from __future__ import annotations

import itertools

import numpy as np
from tidal.runtime.counter_random import random_draw

from program_desc import BOUND, SLICES, comp_eval, cond_eval, kind_of, udf_fn, weak

WIDE = {"f": np.float64, "i": np.int64, "b": np.bool_}
TOL = {"float32": 2e-5, "float64": 1e-10}
# Integers up to these convert to the float type exactly; beyond, the backends
# round (8589934588 -> 8589934592.0 in float32) where this evaluator does not.
EXACT_INT = {"float32": 2 ** 24, "float64": 2 ** 53}
# A float32 ulp, relative: how far the backends' rounding moves every value.
F32_ULP = 2.0 ** -23


class GeneratorBug(AssertionError):
    """A needed point outside a domain or defined by no case: the generator made an invalid program."""


class Fragile(Exception):
    """Too close to a discontinuity (or out of range) to compare with float32 backends."""


def precisions(desc) -> dict:
    """Per node: "float32" if a float32 value is in its cone (its rounding reaches it), else "float64"."""
    deps = {n.id: list(n.args) for n in desc.nodes}
    for s in desc.stmts:
        if s[0] == "define" and isinstance(s[4], int):
            deps[s[1]].append(s[4])
    out: dict = {}
    for n in desc.nodes:  # iterate to a fixed point (recurrences are cycles)
        out[n.id] = "float32" if n.dtype == "float32" or (n.op == "random" and n.kind == "f") else "float64"
    changed = True
    while changed:
        changed = False
        for n in desc.nodes:
            if out[n.id] == "float64" and any(out[a] == "float32" for a in deps[n.id]):
                out[n.id] = "float32"
                changed = True
    return out


class Evaluator:
    def __init__(self, desc, bounds: dict, inputs: dict, xp=np, frozen: "Evaluator | None" = None,
                 noise: "np.random.Generator | None" = None):
        self.desc = desc
        self.noise = noise  # see noisy_outputs
        self.bounds = dict(bounds)
        self.xp = xp
        self.check = xp is np
        self.frozen = frozen
        self.inputs = {k: xp.asarray(np.asarray(v), dtype=WIDE[kind_of(str(np.asarray(v).dtype))])
                       for k, v in inputs.items()}
        self.prec = precisions(desc)
        self.params = {k: xp.asarray(v, dtype=WIDE[kind_of(str(v.dtype))]) for k, v in desc.params.items()}
        self.memo: dict = {}
        self.mags: dict = {}
        self.kinks = 0
        self.cases: dict = {}
        for s in desc.stmts:
            if s[0] == "define":
                self.cases.setdefault(s[1], []).append(s[2:])

    # -- points ------------------------------------------------------------------------------
    def points(self, domain):
        return itertools.product(*(range(self.bounds[BOUND[d]]) for d in domain))

    def at(self, nid: int, env: dict):
        """The value of node `nid` at the projection of `env` (dim -> step) onto its domain."""
        n = self.desc.nodes[nid]
        pt = tuple(env[d] for d in n.domain)
        key = (nid, pt)
        if key not in self.memo:
            for d, v in zip(n.domain, pt):
                if not 0 <= v < self.bounds[BOUND[d]]:
                    raise GeneratorBug(f"n{nid} needed at {d} = {v}, outside its domain")
            self.memo[key] = None  # cycle guard
            value, mag = self._compute(n, dict(zip(n.domain, pt)))
            self.memo[key] = value
            self.mags[key] = mag
        value = self.memo[key]
        if value is None:
            raise GeneratorBug(f"n{nid} at {pt} depends on itself")
        return value

    def mag(self, nid: int, env: dict) -> float:
        n = self.desc.nodes[nid]
        return self.mags.get((nid, tuple(env[d] for d in n.domain)), 1.0)

    # -- conversions and checks ---------------------------------------------------------------
    def conv(self, x, dtype: str, src_dtype: str | None = None, mag: float = 1.0, pr: str = "float32"):
        xp = self.xp
        k = kind_of(dtype)
        src = kind_of(src_dtype) if src_dtype else None
        if k == "f":
            if self.check and src in ("i", "b") and dtype in EXACT_INT:
                a = np.abs(np.asarray(x, dtype=np.int64))
                if a.size and a.max() > EXACT_INT[dtype]:
                    raise Fragile(f"an integer {dtype} cannot hold exactly is converted (rounded)")
            x = xp.asarray(x, dtype=np.float64)
            if self.check:
                a = np.asarray(x)
                if not np.all(np.isfinite(a)) or (dtype == "float32" and np.any(np.abs(a) > 1e30)):
                    raise Fragile(f"non-finite or huge {dtype} value")
            return x
        if k == "b":
            return xp.asarray(x) != 0 if src != "b" else xp.asarray(x, dtype=bool)
        if src == "f":
            self.near_integer(x, pr, mag)
            x = xp.trunc(x)
        x = xp.asarray(x).astype(np.int64)
        if self.check:
            info = np.iinfo(dtype)
            a = np.asarray(x)
            if a.size and (a.min() < info.min or a.max() > info.max):
                raise Fragile(f"{dtype} overflow")
        return x

    def exact_promotion(self, n, args, dts):
        """An integer operand of an op with a float result is converted to that
        float type by the backends (a mean, a discounted sum, int * float): one
        beyond EXACT_INT is rounded there and not here, so the example is fragile."""
        if not self.check or n.dtype not in EXACT_INT:
            return
        for a, dt in zip(args, dts):
            if kind_of(dt) == "i":
                a = np.abs(np.asarray(a, dtype=np.float64))
                if a.size and a.max() > EXACT_INT[n.dtype]:
                    raise Fragile(f"an integer {n.dtype} cannot hold exactly is promoted (rounded)")

    def near_integer(self, x, dtype, mag):
        if self.check and dtype in TOL:
            a = np.asarray(x, dtype=np.float64)
            d = np.abs(a - np.round(a))
            if np.any((d > 0) & (d <= TOL[dtype] * max(1.0, mag) * 10)):
                raise Fragile("a float next to an integer is rounded")

    def near(self, a, b, dtype, mag, fragile: bool, exact_too: bool = False):
        """`fragile`: a value within rounding of b (but not equal) makes the example
        fragile; with `exact_too` an equal one does too (sign(x) where x is 0 here
        by cancellation but -9.5e-9 in float32: fuzz seed 54, F19)."""
        if not self.check or dtype not in TOL:
            return
        d = np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))
        close = d <= TOL[dtype] * max(1.0, mag) * 10
        if fragile and np.any(close & ((d > 0) | exact_too)):
            raise Fragile("a float comparison within rounding of a tie")
        if np.any(close):
            self.kinks += 1

    # -- ops ------------------------------------------------------------------------------------
    def _compute(self, n, env):
        with np.errstate(all="ignore"):
            return self._compute1(n, env)

    def _compute1(self, n, env):
        xp = self.xp
        op, at = n.op, n.attrs
        if op in ("udfcall", "udfo", "random") and self.frozen is not None:
            return xp.asarray(self.frozen.at(n.id, env)), 1.0
        if op == "input":
            v = self.inputs[f"x{n.id}"]
            return self._finish(n, v[tuple(env[d] for d in n.domain)] if n.domain else v, 1.0)
        if op == "param":
            return self.params[at["name"]], 1.0
        if op == "symbol":
            v = env[at["dim"]]
            return xp.asarray(self.bounds[BOUND[at["dim"]]] - 1 - v if at["rev"] else v, dtype=np.int64), 1.0
        if op == "random":
            draw = random_draw(np, at["dist"], at["seed"], [env[d] for d in n.domain], n.shape)
            return draw, 1.0
        if op == "index":
            return self._index(n, env)
        if op == "recurrent":
            return self._recurrent(n, env)
        args = [self.at(a, env) for a in n.args]
        dts = [self.desc.nodes[a].dtype for a in n.args]
        mag = max([self.mag(a, env) for a in n.args] + [1.0])
        self._pr = pr = self.prec[n.id]
        if op == "udfcall":
            out = udf_fn(at["udf"])(*[np.asarray(a) for a in args])
            return (out if isinstance(out, tuple) else (out,)), mag
        if op == "udfo":
            v = args[0][at["index"]]
            return self._finish(n, self.conv(v, n.dtype, "float64" if np.asarray(v).dtype.kind == "f" else None,
                                             mag), mag)
        self.exact_promotion(n, args, dts)
        if op == "unary":
            v = self._unary(at["kind"], args[0], pr, mag)
        elif op == "binary":
            v = self._binary(n, args, dts, mag)
        elif op == "where":
            v = xp.where(args[0], args[1], args[2])
        elif op == "cast":
            return self._finish(n, self.conv(args[0], n.dtype, dts[0], mag, pr), mag)
        elif op == "reduce":
            v = self._reduce(at["kind"], args[0], None if at["axis"] is None else (at["axis"],), dts[0], mag)
        elif op == "matmul":
            v = xp.matmul(args[0], args[1])
        elif op == "shape":
            k = at["kind"]
            if k == "transpose":
                v = xp.swapaxes(args[0], 0, 1)
            elif k == "cat":
                v = xp.concatenate(args, axis=at["axis"])
            elif k == "stack":
                v = xp.stack(args, axis=at["axis"])
            elif k == "take":
                v = xp.take(args[0], at["index"], axis=at["axis"])
            else:
                v = xp.flip(args[0], axis=at["axis"])
        elif op == "treduce":
            v = self._treduce(n, args[0], env, dts[0], mag)
        else:
            raise ValueError(op)
        return self._finish(n, self.conv(v, n.dtype, None if n.kind != "i" else "int64", mag), mag)

    def _finish(self, n, v, mag):
        if self.noise is not None and n.dtype == "float32" and n.op != "input":  # the backends round here
            a = np.asarray(v, dtype=np.float64)
            v = self.xp.asarray(a * (1.0 + F32_ULP * self.noise.uniform(-1.0, 1.0, a.shape)))
        if self.check and n.kind in "fi":
            a = np.asarray(v)
            if a.size:
                mag = max(mag, float(np.max(np.abs(a))))
        return v, mag

    def _unary(self, k, a, dt, mag):
        xp = self.xp
        if k in ("floor", "ceil"):
            self.near_integer(a, dt, mag)
        if k == "sign":
            self.near(a, 0.0, dt, mag, fragile=True, exact_too=True)
        if k in ("relu", "abs"):
            self.near(a, 0.0, dt, mag, fragile=False)
        fns = {"neg": lambda x: -x, "exp": xp.exp, "log": xp.log, "tanh": xp.tanh,
               "sigmoid": lambda x: 1.0 / (1.0 + xp.exp(-x)), "relu": lambda x: xp.maximum(x, 0),
               "sqrt": xp.sqrt, "rsqrt": lambda x: 1.0 / xp.sqrt(x), "abs": xp.abs, "sign": xp.sign,
               "sin": xp.sin, "cos": xp.cos, "floor": xp.floor, "ceil": xp.ceil, "not": xp.logical_not,
               "reciprocal": lambda x: 1.0 / x, "square": lambda x: x * x}
        return fns[k](a)

    def _binary(self, n, args, dts, mag):
        xp = self.xp
        k = n.attrs["kind"]
        if "lit" in n.attrs:
            side, lit = n.attrs["lit"]
            compute = weak(dts[0], lit)
            a, b = (lit, args[0]) if side == 0 else (args[0], lit)
        else:
            compute = str(np.result_type(*map(np.dtype, dts)))
            a, b = args
        pr = self.prec[n.id] if kind_of(compute) == "f" else None
        if k in ("lt", "le", "gt", "ge", "eq", "ne"):
            self.near(a, b, pr, mag, fragile=True)
        elif k in ("max", "min"):
            self.near(a, b, pr, mag, fragile=False)
        elif k in ("mod", "floordiv") and pr and self.check:
            self.near_integer(np.asarray(a, dtype=np.float64) / np.asarray(b, dtype=np.float64), pr, mag)
        fns = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
               "div": lambda x, y: x / y, "pow": lambda x, y: x ** y, "max": xp.maximum, "min": xp.minimum,
               "mod": xp.mod, "floordiv": xp.floor_divide, "lt": xp.less, "le": xp.less_equal,
               "gt": xp.greater, "ge": xp.greater_equal, "eq": xp.equal, "ne": xp.not_equal,
               "and": xp.logical_and, "or": xp.logical_or, "xor": xp.logical_xor}
        if kind_of(compute) == "f":
            a, b = (xp.asarray(x, dtype=np.float64) for x in (a, b))
        return fns[k](a, b)

    def _reduce(self, k, a, axes, dt, mag):
        xp = self.xp
        if k in ("max", "min") and self.check and kind_of(dt) == "f" and np.asarray(a).size > 1:
            arr = np.asarray(a, dtype=np.float64)
            ext = arr.max(axis=axes, keepdims=True) if k == "max" else arr.min(axis=axes, keepdims=True)
            if np.sum(np.abs(arr - ext) <= TOL[self._pr] * max(1.0, mag) * 10) > (arr.size // ext.size):
                self.kinks += 1
        if k == "mean":
            return xp.mean(xp.asarray(a, dtype=np.float64), axis=axes)
        fn = {"sum": xp.sum, "prod": xp.prod, "max": xp.max, "min": xp.min, "any": xp.any, "all": xp.all}[k]
        if k in ("sum", "prod") and kind_of(dt) != "f":
            a = xp.asarray(a).astype(np.int64)
        return fn(a, axis=axes)

    def _treduce(self, n, x, env, dt, mag):
        xp = self.xp
        k, nl = n.attrs["kind"], n.attrs["nlead"]
        if k == "dsum":
            x = xp.asarray(x, dtype=np.float64)
            w = n.attrs["gamma"] ** np.arange(x.shape[0], dtype=np.float64)
            return xp.sum(x * xp.asarray(w).reshape((-1,) + (1,) * (x.ndim - 1)), axis=0)
        if k == "dsteps":       # sum_k sigmoid(x[0]) ... sigmoid(x[k - 1]) x[k], from the end
            x = xp.asarray(x, dtype=np.float64)
            a, out = 1.0 / (1.0 + xp.exp(-x)), xp.zeros(x.shape[1:])
            for j in range(x.shape[0] - 1, -1, -1):
                out = x[j] + a[j] * out
            return out
        if k == "cumsum_take":
            c = xp.cumsum(xp.asarray(x) if kind_of(dt) == "f" else xp.asarray(x).astype(np.int64), axis=0)
            return c[env[n.attrs["dim"]]]
        return self._reduce(k, x, tuple(range(nl)), dt, mag)

    def _index(self, n, env):
        src = self.desc.nodes[n.args[0]]
        comps = n.attrs["comps"]
        full_env = {**env, **{BOUND[d]: self.bounds[BOUND[d]] for d in self.desc.dims}}
        picks = [comp_eval(d, c, full_env) for d, c in zip(src.domain, comps)]
        lens = [len(p) for p, c in zip(picks, comps) if c[0] in SLICES]
        choices = [list(p) if c[0] in SLICES else [p] for p, c in zip(picks, comps)]
        vals, mag = [], 1.0
        for pt in itertools.product(*choices):
            e = dict(zip(src.domain, pt))
            vals.append(self.at(src.id, e))
            mag = max(mag, self.mag(src.id, e))
        if not lens:
            return vals[0], mag
        v = self.xp.stack([self.xp.asarray(x) for x in vals])
        return v.reshape(tuple(lens) + tuple(v.shape[1:])), mag

    def _recurrent(self, n, env):
        xp = self.xp
        full = {**env, **{BOUND[d]: self.bounds[BOUND[d]] for d in self.desc.dims}}
        for comps, cond, value in self.cases[n.id]:
            p, hit = {}, True
            for d, c in zip(n.domain, comps):
                q, D = env[d], self.bounds[BOUND[d]]
                if c[0] in ("id", "shift"):
                    p[d] = q - (c[1] if c[0] == "shift" else 0)
                    hit = hit and 0 <= p[d] < D
                else:
                    hit = hit and q == (c[1] if c[0] == "const" else D - 1 - c[1])
            if not hit or (cond is not None and not cond_eval(cond, {**full, **p})):
                continue
            if not isinstance(value, int):
                return xp.full(n.shape, value[1], dtype=WIDE[n.kind]), 1.0
            vn = self.desc.nodes[value]
            v = self.at(value, p)
            mag = self.mag(value, p)
            v = self.conv(xp.broadcast_to(xp.asarray(v), n.shape), n.dtype, vn.dtype, mag, self.prec[value])
            return v, mag
        raise GeneratorBug(f"no case of n{n.id} defines {env}")

    # -- results ----------------------------------------------------------------------------------
    def output(self, nid: int, cond=None):
        """The output as a backend returns it: stacked over the domain, or a dict if conditional."""
        n = self.desc.nodes[nid]
        full = {BOUND[d]: self.bounds[BOUND[d]] for d in self.desc.dims}
        if cond is not None:
            return {pt: np.asarray(self.at(nid, dict(zip(n.domain, pt)))) for pt in self.points(n.domain)
                    if cond_eval(cond, {**full, **dict(zip(n.domain, pt))})}
        vals = [np.asarray(self.at(nid, dict(zip(n.domain, pt)))) for pt in self.points(n.domain)]
        lead = tuple(self.bounds[BOUND[d]] for d in n.domain)
        return np.stack(vals).reshape(lead + n.shape) if lead else vals[0]

    def output_mag(self, nid: int) -> float:
        n = self.desc.nodes[nid]
        return max([self.mag(nid, dict(zip(n.domain, pt))) for pt in self.points(n.domain)] + [1.0])

    def loss(self, nid: int):
        """sum over the loss node's domain and shape (what td.grad differentiates)."""
        n = self.desc.nodes[nid]
        return sum(self.xp.sum(self.at(nid, dict(zip(n.domain, pt)))) for pt in self.points(n.domain))


def noisy_outputs(desc, bounds, inputs, seed: int) -> dict:
    """The outputs (name -> value, as `Evaluator.output`) when every float32
    value is moved by up to one float32 ulp (relative, random) as it is
    computed: what the backends' own rounding does, op by op. Where this moves
    an output by a sizeable part of the comparison's tolerance, the output is
    ill-conditioned (a recurrence multiplying by a large factor, sin of a large
    value): float32 backends are then only that accurate, whatever the
    compiler does. May raise Fragile."""
    ev = Evaluator(desc, bounds, inputs, noise=np.random.default_rng(seed))
    return {name: ev.output(nid, cond) for _, name, nid, cond in desc.outputs()}


def jax_grads(desc, bounds, inputs, frozen: Evaluator, loss: int, wrt: tuple, perturb: float = 0.0,
              seed: int = 0):
    """d(sum of the loss node)/d(each wrt input or param), by jax.grad of the
    float64 evaluator; with `perturb`, at the wrt values each moved by that
    relative amount (random signs) -- see `gradient_sensitivity`."""
    import jax
    import jax.numpy as jnp

    names = [f"x{w}" if desc.nodes[w].op == "input" else desc.nodes[w].attrs["name"] for w in wrt]
    with jax.enable_x64(True):
        def f(*vals):
            ins = {k: jnp.asarray(np.asarray(v), dtype=WIDE[kind_of(str(np.asarray(v).dtype))])
                   for k, v in inputs.items()}
            ev = Evaluator(desc, bounds, ins, xp=jnp, frozen=frozen)
            for name, v in zip(names, vals):
                (ev.inputs if name in ev.inputs else ev.params)[name] = v
            return ev.loss(loss)

        x0 = [np.asarray(inputs[nm] if nm in inputs else desc.params[nm], dtype=np.float64) for nm in names]
        if perturb:
            rng = np.random.default_rng(seed)
            x0 = [x * (1 + perturb * rng.choice([-1.0, 1.0], size=x.shape)) for x in x0]
        grads = jax.grad(f, argnums=tuple(range(len(x0))))(*[jnp.asarray(x) for x in x0])
        return [np.asarray(g) for g in grads]


def gradient_sensitivity(desc, bounds, inputs, frozen: Evaluator, loss: int, wrt: tuple, grads: list) -> float:
    """How far the exact gradients move when the differentiated values move by
    one float32 ulp: the largest absolute change. A backward recurrence can
    amplify a rounding error thousands of times; a float32 gradient is then
    only that accurate, whatever the compiler does."""
    moved = jax_grads(desc, bounds, inputs, frozen, loss, wrt, perturb=F32_ULP, seed=1)
    return max((float(np.max(np.abs(a - b))) for a, b in zip(moved, grads) if a.size), default=0.0)


def stopped(desc, bounds: dict, inputs: dict) -> tuple[dict, dict]:
    """(bounds, inputs) as a run of `desc` uses them after its `td.stop_when` (if
    any): T cut to t_stop + 1, t_stop the first step where the condition holds,
    and the inputs over t cut to that many steps (docs/semantics.md). A sum
    within rounding of the threshold raises Fragile."""
    stop = next((s for s in desc.stmts if s[0] == "stop"), None)
    if stop is None:
        return bounds, inputs
    _, nid, thr = stop
    ev = Evaluator(desc, bounds, inputs)
    n = desc.nodes[nid]
    T = bounds["T"]
    for t in range(bounds["T"]):
        v = np.asarray(ev.at(nid, {"t": t}))
        if n.kind == "b":
            holds = bool(v.any())
        else:
            total = float(np.sum(v, dtype=np.float64))
            mag = max(1.0, ev.mag(nid, {"t": t}), float(np.sum(np.abs(v), dtype=np.float64)))
            if n.kind == "f" and abs(total - thr) <= 1e-3 * mag:
                raise Fragile("the stop condition's sum is within rounding of its threshold")
            holds = total > thr
        if holds:
            T = t + 1
            break
    cut = {}
    for x in desc.inputs():
        a = np.asarray(inputs[f"x{x.id}"])
        if "t" in x.domain:
            a = np.take(a, np.arange(T), axis=x.domain.index("t"))
        cut[f"x{x.id}"] = a
    return {**bounds, "T": T}, cut
