"""Loops that sweep along an axis doing array work per step, as people write them: a forward
elimination whose temporary is still read after the column it came from was written, ADI-style
sweeps over scratch arrays the function never returns, and per-bin masked means over a large
array. First-call time (compile) and steady-state time, pyjitc against NumPy (and numba.njit
when installed), in one process; the loops run as native loops (one dispatch each).
Run: python bench/bench_sweeps.py [--n 60 120] [--repeat 5]"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import pyjitc  # noqa: E402
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


def timed(fn, make, repeat):
    best = float("inf")
    for _ in range(repeat):
        args = make()
        start = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - start)
    return best


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, nargs="+", default=[60, 120])
    parser.add_argument("--repeat", type=int, default=5)
    opts = parser.parse_args()
    numba = importlib.import_module("numba") if importlib.util.find_spec("numba") else None
    rng = np.random.default_rng(0)
    print(f"{'case':14s} {'n':>4s} {'compile':>8s} {'NumPy':>10s} {'pyjitc':>10s} {'ratio':>7s} {'numba':>10s}")
    for n in opts.n:
        for name, fn, make in cases(n, rng):
            jitted = pyjitc.jit(fn)
            start = time.perf_counter()
            jitted(*make())
            first = time.perf_counter() - start
            t_np, t_pj = timed(fn, make, opts.repeat), timed(jitted, make, opts.repeat)
            t_nb = ""
            if numba is not None:
                try:
                    nb = numba.njit(fn)
                    nb(*make())
                    t_nb = f"{timed(nb, make, opts.repeat) * 1e3:8.2f}ms"
                except Exception:   # numba.njit refuses the program
                    t_nb = "refused"
            print(f"{name:14s} {n:4d} {first:7.2f}s {t_np * 1e3:8.2f}ms {t_pj * 1e3:8.2f}ms "
                  f"{t_pj / t_np:6.2f}x {t_nb:>10s}", flush=True)


if __name__ == "__main__":
    main()
