"""Python op classes of the `rt` dialect (generated from rt/RtOps.td)."""
from .._rt_ops_gen import *  # noqa: F401,F403
from .._rt_ops_gen import _Dialect  # noqa: F401
