"""The public API of `tidal` (the names the issue lists, and their aliases)."""
import subprocess
import sys

import tidal as td


def test_public_names_exist():
    for name in ["Program", "input", "param", "recurrent", "udf", "TidalError", "min", "max", "Dim",
                 "exp", "log", "tanh", "sigmoid", "relu", "sqrt", "abs", "pow", "where", "sum", "mean",
                 "softmax", "log_softmax", "cumsum", "discounted_sum", "matmul", "reshape", "permute",
                 "transpose", "expand", "unsqueeze", "squeeze", "flatten", "cat", "stack", "pad",
                 "index_select", "gather", "scatter_add", "astype", "zeros", "ones", "full", "arange",
                 "rand", "randn", "maximum", "minimum", "RecurrentTensor"]:
        assert callable(getattr(td, name)), name


def test_methods_exist():
    for name in ["exp", "log", "tanh", "sigmoid", "relu", "sqrt", "abs", "pow", "sum", "mean", "max",
                 "min", "softmax", "log_softmax", "cumsum", "discounted_sum", "matmul", "reshape",
                 "permute", "transpose", "expand", "unsqueeze", "squeeze", "flatten", "index_select",
                 "gather", "scatter_add", "astype", "where", "T", "__matmul__", "__rsub__", "__rtruediv__"]:
        assert hasattr(td.RecurrentTensor, name), name


def test_importing_a_lower_layer_does_not_import_the_frontend():
    code = "import tidal.symbolic, sys; assert 'tidal.frontend' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_star_import_does_not_shadow_builtins():
    ns = {}
    exec("from tidal import *", ns)
    assert "Program" in ns and "tanh" in ns and "input" not in ns and "sum" not in ns
