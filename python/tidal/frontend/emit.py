"""Printing a traced Program as `rt` MLIR text, parsing and verifying it.

Every statement becomes one op, in trace order, with the user's source
location: `%v3 = rt.binary add %v1, %v2 domain [t] : (...) -> ... loc("f.py":7:9)`.
The text is parsed with the Tidal dialects loaded and verified; a verifier
failure here is a frontend bug and is reported with MLIR's diagnostics.
"""
from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np
from mlir import ir

from tidal.dialects.element_types import dense_attr
from tidal.symbolic import Expr, to_text

from . import dtypes as dt
from .errors import TidalError
from .program import Output
from .tensor import Case, Node, RecurrentTensor

__all__ = ["program_text", "build_module", "print_module", "tensor_type"]


def _e(e: Expr) -> str:
    return to_text(e, mlir=True)


def tensor_type(x: RecurrentTensor) -> str:
    return f"!tidal.tensor<[{', '.join(_e(s) for s in x.shape)}], {dt.mlir_name(x.dtype)}>"


def _name(x: RecurrentTensor) -> str:
    node = x.node
    return f"%v{node.id}" if len(node.outputs) == 1 else f"%v{node.id}_{x.output_index}"


def _domain(dims) -> str:
    return "[" + ", ".join(d.step.name for d in dims) + "]"


def _float(v: float) -> str:
    if math.isfinite(v):
        return f"{v:.17e}"
    return "0x" + struct.pack(">d", v).hex().upper()


def dense(arr: np.ndarray) -> str:
    """`dense<...> : tensor<AxBxf32>` (hex for numbers, literals for bools)."""
    arr = np.array(arr, order="C")
    ty = "tensor<" + "".join(f"{n}x" for n in arr.shape) + dt.mlir_name(arr.dtype) + ">"
    if arr.size == 0:
        return f"dense<> : {ty}" if arr.ndim == 1 else f"dense<{_nested(arr)}> : {ty}"
    if arr.dtype == np.bool_:
        body = ("true" if arr.reshape(-1)[0] else "false") if arr.ndim == 0 else _nested(arr)
        return f"dense<{body}> : {ty}"
    if arr.dtype == dt.BFLOAT16:   # its bits as uint16, which NumPy orders little-endian below
        arr = arr.view(np.uint16)
    data = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
    return f'dense<"0x{data.hex().upper()}"> : {ty}'


def _nested(a: np.ndarray) -> str:
    if a.ndim == 0:
        return "true" if bool(a) else "false"
    return "[" + ", ".join(_nested(x) for x in a) + "]"


def _sig(inputs, results) -> str:
    ins = ", ".join(tensor_type(x) for x in inputs)
    outs = [tensor_type(x) for x in results]
    out = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
    return f"({ins}) -> {out}"


# Arrays of more elements than this are not printed into the text that is parsed:
# their op gets a zero splat there and the real DenseElementsAttr is set from the
# NumPy buffer after parsing (printing and parsing 100 MB of constants as hex takes
# seconds; building the attribute from the buffer, a copy). Bool arrays (bit
# packed in MLIR) stay in the text.
LARGE_ELEMENTS = 256


def _value_text(arr: np.ndarray, large: list | None) -> str:
    if large is None or arr.size <= LARGE_ELEMENTS or arr.dtype == np.bool_:
        if large is not None:
            large.append(None)
        return dense(arr)
    large.append(arr)
    ty = "tensor<" + "".join(f"{n}x" for n in arr.shape) + dt.mlir_name(arr.dtype) + ">"
    return f"dense<{'0.0' if dt.is_float(arr.dtype) else '0'}> : {ty}"


def _node(node: Node, large: list | None = None) -> str:
    a, op, ins = node.attrs, node.op, node.inputs
    res = ", ".join(_name(x) for x in node.outputs)
    lhs = f"{res} = " if res else ""
    dom = f"domain {_domain(node.domain)}"
    args = ", ".join(_name(x) for x in ins)
    sig = _sig(ins, node.outputs)
    rty = tensor_type(node.outputs[0]) if node.outputs else ""
    if op == "input":
        return f'{lhs}rt.input "{a["name"]}" {dom} : {rty}'
    if op == "param":
        return f'{lhs}rt.param "{a["name"]}" {dom} : {rty}'   # values: bound at run time
    if op == "recurrent":
        return f"{lhs}rt.recurrent {dom} : {rty}"
    if op == "index":
        idx = ", ".join(_e(c) for c in a["index"])
        return f"{lhs}rt.index {args}[{idx}] {dom} : {sig}"
    if op == "constant":
        return f"{lhs}rt.constant {_value_text(a['value'], large)} {dom} : {rty}"
    if op == "full":
        return f"{lhs}rt.full {_float(a['value'])} {dom} : {rty}"
    if op == "iota":
        return f"{lhs}rt.iota {a['dim']} {dom} : {rty}"
    if op == "random":
        return f"{lhs}rt.random {a['dist']} seed {a['seed']} {dom} : {rty}"
    if op == "symbol_value":
        return f"{lhs}rt.symbol_value <{_e(a['expr'])}> {dom} : {rty}"
    if op == "udf":
        return f'{lhs}rt.udf "{a["callee"]}"({args}) {dom} : {sig}'
    if op in ("unary", "binary"):
        prefix = a["kind"]
    elif op == "reduce":
        prefix = f"{a['kind']} [{', '.join(map(str, a['dims']))}]" + (" keepdim" if a["keepdim"] else "")
    elif op == "scan":
        prefix = f"{a['kind']} {a['dim']}" + (" reverse" if a["reverse"] else "")
    elif op == "linear_scan":
        prefix = f"{a['dim']}" + (" reverse" if a["reverse"] else "")
    elif op == "argsort":
        prefix = f"{a['dim']}" + (" descending" if a["descending"] else "")
    elif op == "permute":
        prefix = f"[{', '.join(map(str, a['perm']))}]"
    elif op in ("squeeze", "unsqueeze", "flip", "index_select", "gather", "scatter_add", "concat"):
        prefix = str(a["dim"])
    elif op == "slice":
        prefix = f"{a['dim']} at <{_e(a['start'])}>"
    elif op == "take":
        prefix = f"{a['dim']} at <{_e(a['index'])}>"
    elif op == "pad":
        prefix = f"{a['dim']} <{_e(a['before'])}> <{_e(a['after'])}> value {_float(a['value'])}"
    elif op in ("where", "matmul", "reshape", "expand", "cast"):
        prefix = ""
    else:  # pragma: no cover - every op the frontend makes is listed above
        raise AssertionError(f"no printer for rt.{op}")
    prefix = f"{prefix} " if prefix else ""
    return f"{lhs}rt.{op} {prefix}{args} {dom} : {sig}"


def _case(case: Case) -> str:
    idx = ", ".join(_e(c) for c in case.index)
    cond = f" if <{_e(case.cond)}>" if case.cond is not None else ""
    ty = tensor_type(case.target)
    return f"rt.define {_name(case.target)}[{idx}]{cond} = {_name(case.value)} : {ty}, {tensor_type(case.value)}"


def _output(out: Output) -> str:
    cond = f" if <{_e(out.cond)}>" if out.cond is not None else ""
    return f'rt.output "{out.name}" {_name(out.value)}{cond} : {tensor_type(out.value)}'


def program_text(program: Any, locations: bool = True, large: list | None = None) -> str:
    """The rt module text of a program (not yet parsed). With a list `large`,
    arrays over LARGE_ELEMENTS elements are printed as zero splats and the list
    gets, for each rt.constant in order, its array (or None if printed). A
    param's values are not printed: they are bound to the executable."""
    def loc(location) -> str:
        return f" {location.mlir()}" if locations else ""

    dims = ", ".join(f"{d.step.name} < {d.bound.name}" for d in program.dim_list)
    lines = ["module {", f"  rt.program @{program.name} dims [{dims}] {{"]
    for st in program.statements:
        if isinstance(st, Node):
            lines.append(f"    {_node(st, large)}{loc(st.loc)}")
        elif isinstance(st, Case):
            lines.append(f"    {_case(st)}{loc(st.loc)}")
        elif isinstance(st, Output):
            lines.append(f"    {_output(st)}{loc(st.loc)}")
        else:   # td.stop_when (stopping.Stop)
            lines.append(f"    rt.stop_when {_name(st.value)} : {tensor_type(st.value)}{loc(st.loc)}")
    lines.append(f"  }}{loc(program.loc)}")
    lines.append(f"}}{loc(program.loc)}")
    return "\n".join(lines) + "\n"


def build_module(program: Any, context: ir.Context | None = None) -> ir.Module:
    """Checks the program, prints it, parses and verifies it."""
    from tidal.dialects import make_context

    from .checks import check_program

    check_program(program)
    from .stopping import check_stops
    check_stops(program)
    large: list = []
    text = program_text(program, large=large)
    ctx = context if context is not None else make_context()
    try:
        with ctx:
            module = ir.Module.parse(text)
            if any(arr is not None for arr in large):
                _set_large_values(module, large)
            ok = module.operation.verify()
    except ir.MLIRError as e:
        raise TidalError(f"internal error: the traced rt module does not parse or verify: {e}",
                         "please report this frontend bug with the program",
                         location=program.loc) from None
    if not ok:  # pragma: no cover - verify() raises MLIRError on failure
        raise TidalError("internal error: the traced rt module does not verify", location=program.loc)
    return module


def _set_large_values(module: ir.Module, large: list) -> None:
    """Gives the ops printed with placeholder splats their arrays (see LARGE_ELEMENTS)."""
    ops = [op for op in module.body.operations[0].regions[0].blocks[0].operations
           if op.operation.name == "rt.constant"]
    if len(ops) != len(large):  # pragma: no cover - the printer and this walk disagree
        raise AssertionError(f"{len(ops)} rt.constant ops parsed, {len(large)} printed")
    for op, arr in zip(ops, large):
        if arr is not None:
            old = op.attributes["value"]
            op.attributes["value"] = dense_attr(arr, old.type.element_type)


def print_module(module: ir.Module, locations: bool = True) -> str:
    """Text of a module, with inline `loc(...)` locations when asked."""
    return module.operation.get_asm(enable_debug_info=locations, use_local_scope=True)
