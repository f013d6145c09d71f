"""The op-property table (tidal.dialects.op_properties): a row for every op of
the sdg dialect, properties that agree with each other, and passes that read it."""
import pytest

from tidal.dialects import sdg
from tidal.dialects.op_properties import TABLE, ops_with, properties


def dialect_ops() -> set:
    return {getattr(getattr(sdg, n), "OPERATION_NAME", None) for n in dir(sdg)} - {None}


def test_every_op_of_the_dialect_has_a_row_and_no_row_is_stale():
    ops = dialect_ops()
    assert len(ops) > 30
    assert ops - set(TABLE) == set(), "add these ops to dialects/op_properties.py"
    assert set(TABLE) - ops == set(), "these rows name no op of the sdg dialect"


def test_the_properties_agree_with_each_other():
    for name, p in TABLE.items():
        assert not (p.pure and p.side_effects), name
        if p.elementwise or p.metadata or p.fusable:
            assert p.pure, f"{name}: a kernel computes it from its operands alone"
        if p.paddable:
            assert p.fusable, f"{name}: padded ops run in device kernels"
        if p.fusable:
            assert p.kernel not in (None, "host"), name
    assert ops_with("elementwise") == {"sdg.unary", "sdg.binary", "sdg.where", "sdg.cast"}
    assert ops_with("side_effects") == {"sdg.output", "sdg.udf", "sdg.stop_when"}
    assert "sdg.random" not in ops_with("pure") and "sdg.random" in ops_with("source")
    assert properties("sdg.matmul").kernel == "contraction"
    with pytest.raises(ValueError, match="unknown op properties"):
        ops_with("elementwsie")


def test_passes_read_their_op_sets_from_the_table():
    from tidal.passes import sdg_fuse, sdg_lift, sdg_simplify, sdg_tile, sdg_vectorize, vectorize_windows

    assert sdg_fuse.FUSABLE == ops_with("fusable") and sdg_fuse.PADDABLE == ops_with("paddable")
    assert sdg_simplify.PURE == ops_with("pure") and sdg_simplify.SHAPE_OPS == ops_with("metadata")
    assert sdg_lift.ELEMENTWISE == sdg_vectorize.ELEMENTWISE == ops_with("elementwise")
    # the axis ops sdg-vectorize batches, and those the window batching checks along their axis
    assert sdg_vectorize.AXIS_OPS == {"sdg.scan", "sdg.squeeze", "sdg.unsqueeze", "sdg.flip", "sdg.slice",
                                      "sdg.take", "sdg.concat", "sdg.pad"}
    assert vectorize_windows.ALONG_AXIS == ops_with("axis") - ops_with("source") - {"sdg.unsqueeze"}
    assert sdg_tile.ROW_WISE == ops_with("elementwise") | {"sdg.reduce", "sdg.matmul"}
