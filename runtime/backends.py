"""The backends: what each one can do, and the registry that names them.

    from tidal.runtime import backends
    backends.names()                  # ('jax', 'numpy', 'reference')
    jax = backends.get("jax")         # a Backend; get() of an unknown name raises UnknownBackend
    jax.jit_kernels, jax.devices      # True, ('cpu', 'gpu')

A backend is chosen once, when a program is compiled; from then on the compiler
and the runtime ask it what it can do (its capabilities below) and never compare
its name. Adding a backend is a module with what it adds (its kernel provider, as
`scheduled/jax_backend.py` is the jax one's) and one `register(Backend(...))` here.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Backend", "UnknownBackend", "register", "unregister", "get", "names", "JAX", "NUMPY", "REFERENCE"]


@dataclass(frozen=True)
class Backend:
    """A backend's name and capabilities.

    scheduled: compiled once (isl schedule, scf loops, a generated host program)
        and run for any bounds; False: the SDG is evaluated on demand (the
        reference interpreter, the oracle the others are tested against).
    devices: the device kinds it runs on ("cpu", "gpu").
    kernel_providers: where operators' kernels come from: "xla" (a fused island
        is one jitted XLA kernel), "numpy" (NumPy calls on the host).
    device_arrays: stores hold device arrays (inputs may be given as ones, host
        operators read them through a copy to the host); False: NumPy arrays in
        host memory, written in place.
    traces_loops: a loop whose body JAX can trace runs as one `lax.fori_loop`.
    memory_budget: `p.compile(device_memory=...)` keeps the stores on the
        device within a budget by swapping.
    """

    name: str
    summary: str
    scheduled: bool
    devices: tuple[str, ...]
    kernel_providers: tuple[str, ...]
    device_arrays: bool = False
    traces_loops: bool = False
    memory_budget: bool = False

    @property
    def jit_kernels(self) -> bool:
        """Fused islands and single operators compile to jitted XLA kernels."""
        return "xla" in self.kernel_providers

    def array_module(self):
        """The array namespace stores are allocated with (numpy or jax.numpy)."""
        if self.device_arrays:
            import jax.numpy as jnp
            return jnp
        import numpy as np
        return np

    def __str__(self) -> str:
        return self.name


class UnknownBackend(ValueError):
    """A backend name the registry does not hold (the frontend reports it as a
    TidalError at the user's line)."""


_REGISTRY: dict[str, Backend] = {}


def register(backend: Backend) -> Backend:
    if backend.name in _REGISTRY and _REGISTRY[backend.name] != backend:
        raise ValueError(f"a different backend named {backend.name!r} is registered already")
    _REGISTRY[backend.name] = backend
    return backend


def unregister(name: str) -> None:
    """Removes a backend registered by `register` (a plugin's, or a test's)."""
    _REGISTRY.pop(name, None)


def get(backend: "str | Backend") -> Backend:
    """The registered backend of that name (a Backend is returned as it is)."""
    if isinstance(backend, Backend):
        return backend
    found = _REGISTRY.get(backend) if isinstance(backend, str) else None
    if found is None:
        raise UnknownBackend(f"unknown backend {backend!r}: use one of {', '.join(names())}")
    return found


def names(*capabilities: str) -> tuple[str, ...]:
    """The registered backends' names, in registration order (the default first);
    with `capabilities` ("scheduled", "memory_budget", ...), those that have all."""
    return tuple(n for n, b in _REGISTRY.items() if all(getattr(b, c) for c in capabilities))


JAX = register(Backend(
    "jax", "compiled once; fused islands as XLA kernels, loops as lax.fori_loop where they trace",
    scheduled=True, devices=("cpu", "gpu"), kernel_providers=("xla",), device_arrays=True,
    traces_loops=True, memory_budget=True))
NUMPY = register(Backend(
    "numpy", "compiled once; every operator a NumPy call on the host",
    scheduled=True, devices=("cpu",), kernel_providers=("numpy",)))
REFERENCE = register(Backend(
    "reference", "the reference interpreter: evaluates the SDG on demand, the oracle the others are tested "
    "against", scheduled=False, devices=("cpu",), kernel_providers=("numpy",)))
