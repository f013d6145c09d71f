"""The user-facing frontend: tracing Python into the `rt` dialect.

Modules (one topic each): `program` (td.Program), `tensor` (the graph:
Node, RecurrentTensor, Case), `graph` (node creation, domain inference),
`indexing` (x[...], s[...] = v, outputs), `checks` (definition checks),
`creation`, `ops_elementwise`, `ops_reduce`, `ops_shape`, `ops_sort`,
`ops_sampling`, `methods`
(operators and methods), `dtypes`, `shapes`, `emit` (MLIR text),
`executable` (compile/run), `errors` (TidalError, locations), `protocols` (Python
and NumPy protocols: `if t > 0:`, `range(T)`, `np.exp(x)` raise TidalErrors).
"""
from . import methods as _methods  # noqa: F401  (binds operators and methods)
from .creation import (arange, bernoulli, constant, full, full_like, input, ones, ones_like, param,
                       rand, randn, recurrent, symbol, tensor, udf, zeros, zeros_like)
from .compile_cache import clear as clear_compile_cache, enable_persistent_cache
from .compile_pipeline import DEFAULT_SDG_PASSES, default_passes
from .dtypes import BFLOAT16 as bfloat16
from .errors import SourceLocation, TidalError
from .executable import Executable, backends
from .indexing import Masked
from .methods import max, min
from .ops_elementwise import (abs, add, astype, ceil, clamp, cos, div, eq, exp, floor, floordiv, ge,
                              gt, le, log, logical_and, logical_not, logical_or, logical_xor, lt,
                              maximum, minimum, mod, mul, ne, neg, pow, reciprocal, relu, rsqrt,
                              sigmoid, sign, sin, sqrt, square, sub, tanh, where)
from .ops_reduce import (all, amax, amin, any, argmax, argmin, cummax, cummin, cumprod, cumsum,
                         discounted_sum, linear_scan, log_softmax, logsumexp, matmul, mean, prod, softmax, sum)
from .ops_shape import (cat, expand, flatten, flip, gather, index_select, pad, permute, reshape,
                        scatter_add, slice, squeeze, stack, take, transpose, unsqueeze)
from .ops_sampling import categorical, multinomial
from .ops_sort import SortResult, argsort, sort, topk
from .program import Program, current_program
from .stopping import stop_when
from .tensor import Case, Node, RecurrentTensor

# `0.99 ** i`, `1e-3 * i`: a symbolic integer meeting a float becomes a tensor
# holding its value at each point (paper Alg. 1's learning-rate schedule).
from tidal.symbolic import set_numeric_promotion as _set_numeric_promotion  # noqa: E402

_set_numeric_promotion(symbol)

# `if t > 0:`, `range(T)`, `t / 2`, `max(t, 1)` in user code: TidalErrors at the
# user's line saying what to write instead (protocols.py).
from tidal.symbolic import set_user_error_hook as _set_user_error_hook  # noqa: E402

from .protocols import symbolic_user_error as _symbolic_user_error  # noqa: E402

_set_user_error_hook(_symbolic_user_error)

__all__ = [
    "Program", "current_program", "RecurrentTensor", "Node", "Case", "Masked", "TidalError",
    "SourceLocation", "Executable", "backends", "clear_compile_cache", "enable_persistent_cache",
    "DEFAULT_SDG_PASSES", "default_passes", "bfloat16", "stop_when",
    "input", "param", "recurrent", "constant", "tensor", "zeros", "ones", "full", "zeros_like",
    "ones_like", "full_like", "arange", "rand", "randn", "bernoulli", "symbol", "udf",
    "max", "min", "abs", "add", "astype", "ceil", "clamp", "cos", "div", "eq", "exp", "floor",
    "floordiv", "ge", "gt", "le", "log", "logical_and", "logical_not", "logical_or", "logical_xor",
    "lt", "maximum", "minimum", "mod", "mul", "ne", "neg", "pow", "reciprocal", "relu", "rsqrt",
    "sigmoid", "sign", "sin", "sqrt", "square", "sub", "tanh", "where",
    "all", "amax", "amin", "any", "argmax", "argmin", "cummax", "cummin", "cumprod", "cumsum",
    "discounted_sum", "linear_scan", "log_softmax", "logsumexp", "matmul", "mean", "prod", "softmax", "sum",
    "cat", "expand", "flatten", "flip", "gather", "index_select", "pad", "permute", "reshape",
    "scatter_add", "slice", "squeeze", "stack", "take", "transpose", "unsqueeze",
    "argsort", "sort", "topk", "SortResult", "categorical", "multinomial",
]
