"""Loops that sweep along an axis doing array work per step, as people write them: a forward
elimination whose temporary is still read after the column it came from was written, ADI-style
sweeps over scratch arrays the function never returns, and per-bin masked means over a large
array. First-call time (compile) and steady-state time, pyjitc against NumPy (and numba.njit
when installed), in one process; the loops run as native loops (one dispatch each).
Run: python bench/bench_sweeps.py [--n 60 120] [--repeat 5]"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_shrinking_slices import run  # noqa: E402  (the same table)
from tests.test_native_array_loops import adi_sweeps, forward_sweep  # noqa: E402


def radial_means(values, radius, bins):
    out = np.zeros(bins)
    top = radius.max()
    for k in range(bins):
        inside = (radius >= top * k / bins) & (radius < top * (k + 1) / bins)
        count = inside.sum()
        out[k] = np.where(inside, values, 0.0).sum() / count if count else 0.0
    return out


def cases(n, rng):
    return [
        ("forward_sweep", forward_sweep, lambda: (rng.random((n, n, 40)), rng.random((n, n, 40)), 0.3)),
        ("adi_sweeps", adi_sweeps, lambda: (rng.random((n, n)), 5)),
        ("radial_means", radial_means, lambda: (rng.random(n * 1000), rng.random(n * 1000), 100)),
    ]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, nargs="+", default=[60, 120])
    parser.add_argument("--repeat", type=int, default=5)
    opts = parser.parse_args()
    run(cases, opts.n, opts.repeat)


if __name__ == "__main__":
    main()
