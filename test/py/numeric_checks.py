"""Numeric helpers shared by tests (imported by name: test/py is on sys.path)."""
import numpy as np


def central_differences(f, x, h=1e-6):
    """d f / d x by central differences, one element of x at a time (float64 x)."""
    g = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[k] += h
        down[k] -= h
        g[k] = (f(up) - f(down)) / (2 * h)
    return g
