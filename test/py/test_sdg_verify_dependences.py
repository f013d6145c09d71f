"""sdg-verify-dependences on graphs built as text: exact messages, and every
graph the frontend's examples use passes it."""
import pathlib

import pytest
from mlir import ir

from tidal.dialects import make_context
from tidal.passes.sdg_verify_dependences import dependence_errors

ROOT = pathlib.Path(__file__).resolve().parents[2]
V4 = "!tidal.tensor<[4], f32>"


def graph(body: str, dims: str = "t < T"):
    ctx = make_context()
    module = ir.Module.parse(f"sdg.graph @g dims [{dims}] {{\n"
                             f'  %x = sdg.input "x" domain [t] : {V4}\n{body}\n}}', ctx)
    return module, module.body.operations[0].operation


def reader(dep: str) -> str:
    """An op reading x[dep]: a slice adds an axis, which the reduce removes."""
    if ":" in dep:
        return f"  %y = sdg.reduce sum [0] %x[{dep}] domain [t] : ({V4}) -> {V4}"
    return f"  %y = sdg.unary exp %x[{dep}] domain [t] : ({V4}) -> {V4}"


def errors(body: str, dims: str = "t < T") -> list[str]:
    _, g = graph(body, dims)
    return [message for _, message in dependence_errors(g)]


@pytest.mark.parametrize("dep", ["t", "t - 1", "t + 2", "0", "T - 1", "max(0, t - 2):t + 1", "t:T",
                                 "t:min(t + 3, T)", "0:t + 1", "0:T", "0:T:2", "t floordiv 2"])
def test_valid_dependences_pass(dep):
    assert errors(reader(dep)) == []


@pytest.mark.parametrize("dep, fragment", [
    ("t + 1:t", "may have a negative size `-1`"),
    ("t:3", "may have a negative size `-t + 3` (e.g. at t=4, T=5)"),
    ("T:0", "may have a negative size"),
    ("i", "uses i, which the consumer's domain does not provide"),
    ("t, t", "the dependence has 2 components but the producer's domain [t] has 1 dimension"),
])
def test_invalid_dependences_are_reported(dep, fragment):
    found = errors(reader(dep), "t < T, i < I")
    assert len(found) == 1 and fragment in found[0], found


def test_the_shipped_example_is_valid():
    ctx = make_context()
    module = ir.Module.parse((ROOT / "examples/recurrence.sdg.mlir").read_text(), ctx)
    assert dependence_errors(module.body.operations[0].operation) == []


def test_every_error_is_reported_not_just_the_first():
    found = errors(reader("t + 1:t") + "\n" + reader("t:3").replace("%y", "%z"))
    assert len(found) == 2
