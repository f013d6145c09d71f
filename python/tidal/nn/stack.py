"""`Stack`: identical blocks as a temporal layer dimension.

    layers = td.nn.Stack([Block(cfg, t, w, f"layers.{i}.") for i in range(L)], name="layers")
    y = layers(x)                 # = layers[L - 1](... layers[0](x))

Unrolling L blocks makes the program (and its compile time) grow with L.
`Stack` instead stacks the blocks' weights along a new leading axis (one
parameter per weight name, shape (L, ...), named `<name>.<weight>`: e.g.
`layers.attn.q.weight`), declares a layer dim `l < L` whose bound is fixed to
L, and traces the first block's `forward` once, reading each weight as its
layer's slice `W[l]` (`rt.take`):

    h[..., l = 0]  = x
    y              = block(h)          (weights W[l], at every (..., l))
    h[..., l + 1]  = y
    result         = y[..., l = L - 1]

Everything the block computes varies over (x's domain, l): attention over t
inside the block reads its keys as `k[0:t + 1]` at the same l, a K/V cache per
(l, t). Gradients (`td.grad`) flow through the layer recurrence to the stacked
weights; `domain=(i,)` makes them iteration-varying (an optimizer steps them).

The blocks must be alike: the same class and the same parameters (names,
shapes, dtypes), each held by a `td.param` (weights given as arrays or drawn at
construction; not `domain=`-varying: give the Stack `domain=` instead). The
blocks' own per-layer params are dropped from the program (unless something
else reads them). A block whose `forward` would read a tensor computed from its
weights at construction (rather than in `forward`) is refused: that tensor
would be layer 0's at every layer.
"""
from __future__ import annotations

import copy
from typing import Any, Sequence

import numpy as np

from tidal.symbolic import min_

from tidal.frontend import creation as C
from tidal.frontend import ops_shape as S
from tidal.frontend.errors import TidalError
from tidal.frontend.indexing import setitem, temporal_index
from tidal.frontend.program import current_program
from tidal.frontend.shapes import static
from tidal.frontend.tensor import RecurrentTensor

from .module import Module, parameter, unique_prefix

__all__ = ["Stack"]


def _layer_dim(program: Any, name: str, n: int):
    """A fresh dim `name` (or name1, name2, ... if taken) with its bound fixed to n."""
    used = {s.name for d in program.dim_list for s in d}
    base, k = name, 0
    while name in used or name.upper() in used:
        k += 1
        name = f"{base}{k}"
    return program.dim(name, size=n)


class Stack(Module):
    """Identical blocks run as a temporal layer dim (see the module doc)."""

    def __init__(self, blocks: Sequence[Module], *, name: str = "stack", dim: str = "l",
                 domain: Any = (), iteration_dim: Any = None):
        program = current_program(what="td.nn.Stack")
        blocks = list(blocks) if isinstance(blocks, (list, tuple)) else blocks
        if not isinstance(blocks, list) or not blocks or not all(isinstance(b, Module) for b in blocks):
            raise TidalError("td.nn.Stack needs a non-empty list of td.nn.Module blocks",
                             "e.g. td.nn.Stack([Block(...) for i in range(L)])")
        first = blocks[0]
        params = list(first.named_parameters())
        if not params:
            raise TidalError(f"the blocks given to td.nn.Stack ({type(first).__name__}) have no "
                             "parameters", "stack blocks with weights; apply a weightless block "
                             "in a plain Python loop")
        per_layer = [_block_weights(b, k, params, type(first)) for k, b in enumerate(blocks)]
        self._old = {id(p.node) for b in blocks for _, p in b.named_parameters()}
        program.discard([p.node for b in blocks for _, p in b.named_parameters()])
        self.name = unique_prefix(name)
        self.n = len(blocks)
        self.layer = _layer_dim(program, dim, self.n)
        self.weights: dict[str, RecurrentTensor] = {}
        replace: dict[int, RecurrentTensor] = {}
        l_step = min_(self.layer.step, self.n - 1)   # = l; the clamp proves the take in range
        for k, (pname, old) in enumerate(params):
            stacked = np.stack([layer[k] for layer in per_layer])
            w = parameter(f"{self.name}.{pname}", stacked, domain, iteration_dim)
            self.weights[pname] = w
            replace[id(old)] = S.take(w, 0, l_step)
        self.block = _rebind(first, replace, {})

    def named_parameters(self, prefix: str = ""):
        for pname, w in self.weights.items():
            yield prefix + pname, w

    def forward(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(x, RecurrentTensor):
            raise TidalError(f"td.nn.Stack's input must be a tensor of the program, got {type(x).__name__}",
                             "pass the activations (e.g. the embedding's output)")
        ldim = self.layer
        if ldim in x.domain:
            raise TidalError(f"the input of td.nn.Stack {self.name!r} already varies over its layer "
                             f"dim {ldim.step.name}", "pass the activations before the stack")
        # h varies over x's dims, l, and what the block reads besides h: the weights
        # (an iteration dim i for trained ones) and tensor arguments
        dims = set(x.domain) | {ldim}
        for v in list(self.weights.values()) + list(args) + list(kwargs.values()):
            if isinstance(v, RecurrentTensor):
                dims |= set(v.domain)
        dom = x.program.canonical_domain(dims)
        h = C.recurrent(shape=x.shape, dtype=x.dtype, domain=dom, name=f"{self.name}.h")
        setitem(h, tuple(0 if d == ldim else slice(None) for d in dom), x)
        y = self.block(h, *args, **kwargs)
        if not isinstance(y, RecurrentTensor) or tuple(y.shape) != tuple(x.shape) or y.dtype != x.dtype:
            what = (f"shape {tuple(str(s) for s in y.shape)} {y.dtype}" if isinstance(y, RecurrentTensor)
                    else type(y).__name__)
            raise TidalError(f"a block of td.nn.Stack {self.name!r} returned {what}, not its input's "
                             f"shape {tuple(str(s) for s in x.shape)} {x.dtype}",
                             "a stacked block maps activations to activations of the same shape")
        _check_no_layer0_weights(y, self._old, self.name)
        setitem(h, tuple(ldim.step + 1 if d == ldim else slice(None) for d in dom), y)
        return temporal_index(y, [ldim.bound - 1 if d == ldim else d.step for d in y.domain])


def _block_weights(block: Module, k: int, params: list, cls: type) -> list[np.ndarray]:
    """The values of `block`'s parameters, checked against the first block's."""
    from .module import param_node

    if type(block) is not cls:
        raise TidalError(f"td.nn.Stack: block {k} is a {type(block).__name__}, block 0 a {cls.__name__}",
                         "stack blocks of one class")
    mine = list(block.named_parameters())
    names = [n for n, _ in params]
    if [n for n, _ in mine] != names:
        raise TidalError(f"td.nn.Stack: block {k}'s parameters {[n for n, _ in mine]} differ from "
                         f"block 0's {names}", "stack blocks built alike")
    out = []
    for (pname, p), (_, ref) in zip(mine, params):
        if p.op != "param" or param_node(p) is None:
            raise TidalError(f"td.nn.Stack: parameter {pname!r} of block {k} is a {p.op}, not a "
                             "td.param", "build the blocks with array weights and without domain=; "
                             "give the Stack domain=(i,) to train the stacked weights")
        shape = tuple(static(s) for s in p.shape)
        if shape != tuple(static(s) for s in ref.shape) or p.dtype != ref.dtype:
            raise TidalError(f"td.nn.Stack: parameter {pname!r} of block {k} has shape {shape} "
                             f"{p.dtype}, block 0's has {tuple(static(s) for s in ref.shape)} "
                             f"{ref.dtype}", "stack blocks with equal weight shapes")
        value = param_node(p).attrs["value"]
        if value is None:
            raise TidalError(f"td.nn.Stack: parameter {pname!r} of block {k} has no value (declared by shape)",
                             "give the blocks their weights before stacking them")
        out.append(value)
    return out


def _rebind(obj: Any, replace: dict[int, RecurrentTensor], memo: dict[int, Any]) -> Any:
    """A copy of a module tree with the tensors in `replace` swapped (shallow
    copies of modules, lists, tuples and dicts; everything else shared)."""
    key = id(obj)
    if key in memo:
        return memo[key]
    if isinstance(obj, RecurrentTensor):
        return replace.get(key, obj)
    if isinstance(obj, Module):
        new = copy.copy(obj)
        memo[key] = new
        for attr, value in vars(obj).items():
            setattr(new, attr, _rebind(value, replace, memo))
        return new
    if isinstance(obj, (list, tuple)):
        new = type(obj)(_rebind(v, replace, memo) for v in obj)
    elif isinstance(obj, dict):
        new = {k: _rebind(v, replace, memo) for k, v in obj.items()}
    else:
        return obj
    memo[key] = new
    return new


def _check_no_layer0_weights(y: RecurrentTensor, old: set[int], name: str) -> None:
    """Refuses a block output that depends on a block's own (unstacked) params."""
    seen, stack = set(), [y]
    while stack:
        x = stack.pop()
        node = x.node
        if id(node) in seen:
            continue
        seen.add(id(node))
        if id(node) in old:
            raise TidalError(f"a block of td.nn.Stack {name!r} reads its parameter "
                             f"{node.attrs.get('name')!r} through a tensor computed when the block "
                             "was built, which would be layer 0's value at every layer",
                             "compute everything that uses the weights inside forward()")
        stack.extend(node.inputs)
        if node.op == "recurrent":
            stack.extend(c.value for c in x.cases if isinstance(c.value, RecurrentTensor))
