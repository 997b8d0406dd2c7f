"""Jitted functions that cluster workers import by module name (tests/test_dask.py, test_ray.py,
bench/bench_clusters.py), and the worker-side probes those tests run."""
import numpy as np

import pyjitc


@pyjitc.jit
def scale_add(x, y):
    return x * 2.0 + y


@pyjitc.jit
def smooth(block):
    out = block.copy()
    out[1:-1] = (block[:-2] + block[1:-1] + block[2:]) / 3.0
    return np.tanh(out)


def smooth_numpy(block):
    out = block.copy()
    out[1:-1] = (block[:-2] + block[1:-1] + block[2:]) / 3.0
    return np.tanh(out)


def compiles_here() -> dict:
    """Compiles (or disk-cache loads) this process has made, per function name."""
    from pyjitc import progress
    return dict(progress.COMPILES)
