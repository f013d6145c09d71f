"""Running a generated program on every backend and checking the results.

`check(desc, bounds_list, seed)` builds the Tidal program from the
description's source, compiles it once per backend (reference, numpy, jax),
runs it at every bounds, and compares each output with the independent
evaluator (`program_eval.py`) and across backends: integers and bools
exactly, floats with a tolerance for the least precise float dtype in the
output's cone, scaled by the magnitudes it went through. Declared dtypes,
UDF call counts (once per point of the UDF's domain) and the global JAX
config are checked too; gradients (td.grad of a sum of an output) are
compared with jax.grad of the float64 evaluator. A failure raises
AssertionError whose message holds a standalone reproducer.
"""
from __future__ import annotations

import collections
import linecache
import time
import traceback

import numpy as np

import tidal as td
from program_desc import BOUND, kind_of
from program_eval import Evaluator, Fragile, gradient_sensitivity, jax_grads, noisy_outputs, precisions, stopped

BACKENDS = ("reference", "numpy", "jax")
RTOL = {"float32": 1e-4, "float64": 1e-9, "grad": 1e-3}


class Rejected(Exception):
    """The example is too close to a discontinuity to compare (see program_eval.Fragile)."""


def build(desc):
    """Traces the program: (p, namespace) with the UDF call counter in namespace['CALLS']."""
    src = desc.source()
    fname = f"<fuzz-program-{abs(hash(src))}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    ns = {"np": np, "td": td, "PARAMS": {k: v.copy() for k, v in desc.params.items()},
          "CALLS": collections.Counter()}
    exec(compile(src, fname, "exec"), ns)  # noqa: S102 (our own generated program)
    return ns["p"], ns


def make_inputs(desc, bounds: dict, seed: int) -> dict:
    rng = np.random.default_rng([seed, *bounds.values()])
    out = {}
    for n in desc.inputs():
        shape = tuple(bounds[BOUND[d]] for d in n.domain) + n.shape
        if n.kind == "f":
            v = rng.normal(size=shape)
        elif n.kind == "i":
            v = rng.integers(-4, 5, size=shape)
            if n.dtype == "int64" and rng.random() < 0.3:  # beyond int32: narrowing shows
                v = v + rng.integers(-2, 3, size=shape) * 2 ** 33
        else:
            v = rng.random(shape) < 0.5
        out[f"x{n.id}"] = np.asarray(v, dtype=n.dtype)
    return out


class Failure(AssertionError):
    pass


def _show(v) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_show(x)}" for k, x in v.items()) + "}"
    a = np.asarray(v)
    return f"{np.array2string(a, precision=6, threshold=40)} ({a.dtype}, shape {a.shape})"


def _compare(actual, expected, dtype: str, prec: str, mag: float, what: str):
    """Raises Failure unless `actual` equals `expected` (exactly for ints/bools)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or sorted(actual) != sorted(expected):
            raise Failure(f"{what}: points {sorted(actual) if isinstance(actual, dict) else type(actual)} "
                          f"!= expected {sorted(expected)}")
        for k in expected:
            _compare(actual[k], expected[k], dtype, prec, mag, f"{what} at {k}")
        return
    a = np.asarray(actual)
    if str(a.dtype) != dtype:
        raise Failure(f"{what}: dtype {a.dtype}, declared {dtype}")
    e = np.asarray(expected)
    if a.shape != e.shape:
        raise Failure(f"{what}: shape {a.shape}, expected {e.shape}")
    if kind_of(dtype) != "f":
        if not np.array_equal(a, e.astype(a.dtype)):
            raise Failure(f"{what}: {_show(a)}\n  expected {_show(e)}")
        return
    if not _close(a, e, dtype, prec, mag):
        tol = RTOL[prec]
        raise Failure(f"{what}: {_show(a)}\n  expected {_show(e)} (rtol {tol}, atol {tol * mag:.3g})")


def _close(actual, expected, dtype: str, prec: str, mag: float, frac: float = 1.0) -> bool:
    """Equal values (points of a conditional output too): ints and bools
    exactly, floats within `frac` of the tolerance."""
    if isinstance(expected, dict):
        return all(_close(actual[k], v, dtype, prec, mag, frac) for k, v in expected.items())
    a, e = np.asarray(actual), np.asarray(expected)
    if kind_of(dtype) != "f":
        return np.array_equal(a, e)
    tol = RTOL[prec] * frac
    return bool(np.allclose(a.astype(np.float64), e, rtol=tol, atol=tol * mag))


def uncomparable(desc, bounds, inputs) -> str | None:
    """Why two float32 runs of the program that round differently (a pass reorders a
    sum, XLA contracts a product) may legitimately disagree at these bounds, or None:
    an output within rounding of a discontinuity (a floor, ceil, comparison or cast
    next to a tie, where one ulp moves it a whole step), or an ill-conditioned one
    (one float32 ulp per op moves it by a tenth of the tolerance). The main fuzz
    test skips the same cases against the float64 evaluation."""
    try:
        ev = Evaluator(desc, bounds, inputs)
        expected = {s[1]: ev.output(s[2], s[3]) for s in desc.outputs()}
        mags = {s[1]: ev.output_mag(s[2]) for s in desc.outputs()}
        unstable = ill_conditioned(desc, bounds, inputs, expected, mags, precisions(desc))
    except Fragile as e:
        return f"fragile: {e}"
    except Exception:  # noqa: BLE001 - fails at these bounds: the caller checks both runs fail alike
        return None
    return f"ill-conditioned: {', '.join(unstable)}" if unstable else None


def ill_conditioned(desc, bounds, inputs, expected, mags, prec, samples: int = 2) -> list:
    """The outputs that one float32 ulp of rounding per op (noisy_outputs) moves
    by more than a tenth of their tolerance, in any of `samples` draws: a float32
    backend is only that accurate on them (fuzz seed 3: sin((x @ W) * p) with p
    the product of T values, where t = 5 moves by 0.3)."""
    out = set()
    for s in range(samples):
        noisy = noisy_outputs(desc, bounds, inputs, seed=s)
        for _, name, nid, _ in desc.outputs():
            if not _close(noisy[name], expected[name], desc.nodes[nid].dtype, prec[nid], mags[name], 0.1):
                out.add(name)
    return sorted(out)


def _time(log, what, t0):
    if log is not None:
        log.append(f"time {time.time() - t0:7.2f}s {what}")


def _tail(exc: BaseException) -> str:
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return "".join(lines)[-1500:]


def _stopped_too_early(desc, exes: dict, given: dict, fed: dict, cut: dict) -> None:
    """A stop at t_stop + 1 below the generator's least bound (which is
    conservative: a constant read that nothing needs raises it too): every
    backend fails, or every one gives the reference's values."""
    results, failed = {}, {}
    for b, exe in exes.items():
        try:
            results[b] = exe.run(bounds=given, inputs=fed)
        except Exception as e:  # noqa: BLE001 - a refusal, checked below
            failed[b] = e
    if results and failed:
        raise Failure(f"the run at {given} stopped at {cut}, below the least bound {desc.min_bound}: "
                      f"{sorted(failed)} failed ({next(iter(failed.values()))}) but {sorted(results)} did not"
                      f"\n--- reproducer ---\n{desc.repro(given, fed)}")
    ref = results.get(BACKENDS[0])
    for b, out in results.items():
        for _, name, nid, _ in desc.outputs():
            if not _close(out[name], ref[name], desc.nodes[nid].dtype, "float32", 1.0):
                raise Failure(f"output {name} on {b} differs from {BACKENDS[0]} at {given} (stopped at {cut})"
                              f"\n--- reproducer ---\n{desc.repro(given, fed)}")


def check(desc, bounds_list: list, seed: int, backends=BACKENDS, log=None):
    """Runs `desc` everywhere; raises Failure (with a reproducer) or Rejected."""
    import jax

    x64 = jax.config.jax_enable_x64
    try:
        p, ns = build(desc)
    except Exception as e:  # noqa: BLE001
        raise Failure(f"tracing failed:\n{_tail(e)}\n--- program ---\n{desc.repro()}") from None
    prec = precisions(desc)
    exes = {}
    for b in backends:
        try:
            t0 = time.time()
            exes[b] = p.compile(backend=b)
            _time(log, f"compile {b}", t0)
        except Exception as e:  # noqa: BLE001
            raise Failure(f"compile on {b} failed:\n{_tail(e)}\n--- program ---\n{desc.repro()}") from None
    udfs = [n for n in desc.nodes if n.op == "udfcall"]
    checked = 0
    for bounds in bounds_list:
        given, fed = bounds, make_inputs(desc, bounds, seed)
        try:   # a td.stop_when: the run means the program at T = t_stop + 1
            bounds, inputs = stopped(desc, given, fed)
        except Fragile as e:
            if log is not None:
                log.append(f"fragile at {given}: {e}")
            continue
        if any(bounds[BOUND[d]] < desc.min_bound[d] for d in desc.dims):
            _stopped_too_early(desc, exes, given, fed, bounds)   # every backend must refuse it
            checked += 1
            continue
        ev = Evaluator(desc, bounds, inputs)
        t0 = time.time()
        try:
            expected = {s[1]: ev.output(s[2], s[3]) for s in desc.outputs()}
            mags = {s[1]: ev.output_mag(s[2]) for s in desc.outputs()}
            unstable = ill_conditioned(desc, bounds, inputs, expected, mags, prec)
            if unstable and log is not None:
                log.append(f"outputs not compared at {bounds}: {', '.join(unstable)} ill-conditioned "
                           "(one float32 ulp per op moves them by a tenth of the tolerance)")
            grads = {}
            if desc.grads and ev.kinks and log is not None:
                log.append(f"gradient not checked at {bounds}: a max/min/relu/abs near a tie")
            if desc.grads and ev.kinks == 0:
                loss = desc.grads[0][2]
                wrt = tuple(w for _, w, _ in desc.grads)
                ev.loss(loss)
                if ev.kinks == 0:
                    exact = jax_grads(desc, bounds, inputs, ev, loss, wrt)
                    # Ill-conditioned: a float32 ulp in the differentiated values moves the
                    # gradient by more than a tenth of the tolerance (float32 rounding inside
                    # the program, hundreds of ulps, would then move it past the tolerance).
                    scale = max([1.0] + [float(np.max(np.abs(g))) for g in exact if g.size])
                    moved = gradient_sensitivity(desc, bounds, inputs, ev, loss, wrt, exact)
                    if moved > 0.1 * RTOL["grad"] * scale:
                        if log is not None:
                            log.append(f"gradient not checked at {bounds}: ill-conditioned (one float32 ulp "
                                       f"moves it by {moved:.2g})")
                    else:
                        for (name, w, _), g in zip(desc.grads, exact):
                            grads[name] = (w, g)
        except Fragile as e:
            if log is not None:
                log.append(f"fragile at {bounds}: {e}")
            continue
        _time(log, f"evaluator {bounds}", t0)
        checked += 1
        if log is not None and grads:
            log.append("gradient checked")
        results = {}
        for b, exe in exes.items():
            ns["CALLS"].clear()
            try:
                t0 = time.time()
                results[b] = out = exe.run(bounds=given, inputs=fed)
                _time(log, f"run {b} {given}", t0)
            except Exception as e:  # noqa: BLE001
                raise Failure(f"run on {b} at {given} failed:\n{_tail(e)}\n--- reproducer ---\n"
                              f"{desc.repro(given, fed)}") from None
            try:
                if jax.config.jax_enable_x64 != x64:
                    raise Failure(f"running on {b} changed the global jax_enable_x64 to {jax.config.jax_enable_x64}")
                steps = exe.stats().get("steps")
                if steps != {d: bounds[BOUND[d]] for d in desc.dims}:
                    raise Failure(f"exe.stats()['steps'] on {b} is {steps}, expected the bounds {bounds}")
                for n in udfs:
                    want = int(np.prod([bounds[BOUND[d]] for d in n.domain]))
                    if ns["CALLS"][f"udf_{n.id}"] != want:
                        raise Failure(f"udf_{n.id} ran {ns['CALLS'][f'udf_{n.id}']} times on {b}, "
                                      f"expected once per point ({want})")
                for _, name, nid, cond in desc.outputs():
                    if name in unstable:
                        continue
                    node = desc.nodes[nid]
                    _compare(out[name], expected[name], node.dtype, prec[nid], mags[name],
                             f"output {name} (n{nid}) on {b} at {bounds}")
                for name, (w, g) in grads.items():
                    wn = desc.nodes[w]
                    gdom = tuple(d.step.name for d in ns[name + "_"].domain)
                    a = np.asarray(out[name])
                    for j, d in enumerate(wn.domain):  # a gradient may have a smaller domain
                        if d not in gdom:
                            a = np.expand_dims(a, j)
                    a = np.broadcast_to(a, g.shape).astype(a.dtype)
                    scale = max(1.0, float(np.max(np.abs(g))) if g.size else 1.0)
                    _compare(a, g, wn.dtype, "grad", scale,
                             f"gradient {name} (d sum(n{desc.grads[0][2]}) / d n{w}) on {b} at {bounds}")
            except Failure as f:
                raise Failure(f"{f}\n--- reproducer ---\n{desc.repro(given, fed)}") from None
        for b in list(results)[1:]:  # the backends against each other (the reference first)
            for _, name, nid, cond in desc.outputs():
                if name in unstable:
                    continue
                try:
                    _compare(results[b][name], results[backends[0]][name], desc.nodes[nid].dtype,
                             prec[nid], mags[name], f"output {name} on {b} vs {backends[0]} at {bounds}")
                except Failure as f:
                    raise Failure(f"{f}\n--- reproducer ---\n{desc.repro(given, fed)}") from None
    if checked == 0:
        raise Rejected("every bound was too close to a discontinuity")
