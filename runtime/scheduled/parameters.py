"""Parameters: run-time buffers bound to a compiled program by name.

An `sdg.param` names a buffer of static shape and dtype; its values are not
in the IR (a hand-written fixture may give them as the op's `value`, used
when nothing is bound under that name). A program is compiled once for the
params' shapes and dtypes; `ParameterTable.bind` converts a set of values
once (to device arrays on a device backend) into a `Binding`, and every run
given that binding reads its buffers in place: nothing is copied per run,
and binding other values (new weights of the same shapes) recompiles nothing.
A writeable array is copied once when bound (its owner may change it later); a
read-only one (a memory-mapped checkpoint) is used in place, and on jax's CPU
backend the device array aliases it: the weights are never copied.

Param buffers are never donated: a param's launcher stores a reference to
the bound array in the param's point store, and no kernel writes a param's store.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..reference_graph import EvaluationError
from ..run_checks import owned_copy, param_array

__all__ = ["ParameterTable", "Binding"]


class Binding(Mapping):
    """Values bound to a program's params (`ParameterTable.bind`): a read-only {name: array}."""

    def __init__(self, values: dict[str, Any]):
        self._values = values

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


class ParameterTable:
    """The params of a compiled graph: name -> (node, dtype, shape, value in the IR or None)."""

    def __init__(self, graph, opdefs: Mapping[int, Any]):
        self.specs: dict[str, tuple] = {}
        for k, d in opdefs.items():
            if d.kind != "param":
                continue
            node = graph.nodes[k]
            name = d.attrs["name"]
            shape = tuple(int(s) for s in node.result_shapes[0])
            if name in self.specs:
                raise EvaluationError(f"{node.location}: a second parameter named '{name}'")
            self.specs[name] = (k, np.dtype(d.dtypes[0]), shape, d.value)

    def bind(self, values: Mapping[str, Any] | None, device: bool) -> Binding:
        """`values` converted for a run ({name: array}); ValueError for an unknown
        name, a missing value (none in the IR either) or a shape/dtype mismatch.
        With `device`, arrays are placed on the default device once."""
        values = dict(values or {})
        unknown = [n for n in values if n not in self.specs]
        if unknown:
            raise ValueError(f"unknown parameter{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(map(repr, unknown))} (declared: {', '.join(map(repr, self.specs)) or 'none'})")
        missing = [n for n, spec in self.specs.items() if n not in values and spec[3] is None]
        if missing:
            raise ValueError(f"no value for the parameter{'s' if len(missing) > 1 else ''} "
                             f"{', '.join(map(repr, missing))}")
        bound = {}
        for name, (_, dtype, shape, default) in self.specs.items():
            value = param_array(name, values[name], dtype, shape, device) if name in values else default
            value = owned_copy(value)   # the caller may change its array later
            if device:
                import jax
                value = value if isinstance(value, jax.Array) else jax.device_put(value)
            bound[name] = value
        return Binding(bound)

    def install(self, ns: dict, binding: Binding) -> None:
        """Points each param's launcher (`_V<k>`) at the binding's buffer."""
        for name, (k, _, _, _) in self.specs.items():
            ns[f"_V{k}"] = binding[name]
