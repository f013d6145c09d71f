"""`td.optim`: optimizers whose state lives in the program as recurrences.

As in the paper (Alg. 1, Fig. 8), a parameter that varies with an iteration
dim `i` is a recurrent tensor; the optimizer adds the case that defines the
next iteration's value from this iteration's gradient, and its own state
(momentum, Adam moments) is more recurrent tensors over `i`:

    W[0] = init                 (td.nn.parameter(..., domain=(i,)))
    m[0] = 0;  m[i + 1] = β1 m[i] + (1 - β1) g[i]
    v[0] = 0;  v[i + 1] = β2 v[i] + (1 - β2) g[i]²
    W[i + 1] = W[i] - lr[i] * (m[i + 1] / (1 - β1^(i+1))) / (sqrt(v[i + 1] / (1 - β2^(i+1))) + eps)

Usage, PyTorch-like:

    opt = td.optim.Adam(model.parameters(), lr=1e-3)       # dim inferred from the params
    opt.step(td.grad(loss, model.parameters()))            # or: loss.backward(); opt.step()

`lr` is a float or a tensor, possibly varying with i (a schedule:
`lr = 1e-2 * 0.99 ** td.symbol(i).astype("float32")`). `step` returns the new
values (the tensors that define `W[i + 1]`, at point i); `opt.state[k]` holds
the state tensors of parameter k (`{"m": m, "v": v}` for Adam, `{"momentum":
buf}` for SGD with momentum). `step` can be called once per optimizer: each
parameter gets exactly one update case.
"""
from __future__ import annotations

from .optimizers import SGD, Adam, Optimizer

__all__ = ["Optimizer", "SGD", "Adam"]
