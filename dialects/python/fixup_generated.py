"""Makes mlir-tblgen's Python bindings importable outside the `mlir` package.

The generator assumes its output lives in `mlir/dialects/`; ours lives in
`tidal/dialects/`, so relative imports of MLIR's own modules become absolute.
Usage: fixup_generated.py IN OUT
"""
import sys

REWRITES = {
    "from ._ods_common import": "from mlir.dialects._ods_common import",
    "from ..ir import": "from mlir.ir import",
    "from .._mlir_libs import": "from mlir._mlir_libs import",
}


def main(src: str, dst: str) -> None:
    with open(src) as f:
        text = f.read()
    for old, new in REWRITES.items():
        text = text.replace(old, new)
    with open(dst, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main(*sys.argv[1:])
