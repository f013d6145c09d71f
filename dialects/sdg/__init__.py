"""Python op classes of the `sdg` dialect (generated from sdg/SdgOps.td)."""
from .._sdg_ops_gen import *  # noqa: F401,F403
from .._sdg_ops_gen import _Dialect  # noqa: F401
