"""Loops over shrinking or growing slices (A[i, :j], data[:, i + 1:m]) as people write them:
first-call time (compile) and steady-state time, pyjitc against NumPy (and numba.njit when
installed), in one process. These compile to one run-time loop over masked slices
(pyjitc/frontend/masked.py); before, each loop was unrolled (n**2 copies of the body).
Run: python bench/bench_shrinking_slices.py [--n 60 120] [--repeat 3]"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import pyjitc  # noqa: E402
from tests.test_run_time_length import cholesky, correlation, lu, trisolv, syrk, trmm  # noqa: E402


def cases(n, rng):
    a = rng.random((n, n))
    spd = a @ a.T + n * np.eye(n)
    return [
        ("cholesky", cholesky, lambda: (spd.copy(),)),
        ("lu", lu, lambda: (spd.copy(),)),
        ("trisolv", trisolv, lambda: (np.tril(spd), np.zeros(n), rng.random(n))),
        ("correlation", correlation, lambda: (n, float(n + 3), rng.random((n + 3, n)))),
        ("syrk", syrk, lambda: (1.5, 1.2, rng.random((n, n)), rng.random((n, 8)))),
        ("trmm", trmm, lambda: (1.5, rng.random((n, n)), rng.random((n, n)))),
    ]


def timed(fn, make, repeat):
    best = float("inf")
    for _ in range(repeat):
        args = make()
        start = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - start)
    return best


def run(cases, sizes, repeat):
    """Each case at each size: first call (compile), steady state of NumPy, pyjitc, numba."""
    numba = importlib.import_module("numba") if importlib.util.find_spec("numba") else None
    rng = np.random.default_rng(0)
    print(f"{'case':14s} {'n':>4s} {'compile':>8s} {'NumPy':>10s} {'pyjitc':>10s} {'ratio':>7s} {'numba':>10s}")
    for n in sizes:
        for name, fn, make in cases(n, rng):
            jitted = pyjitc.jit(fn)
            start = time.perf_counter()
            jitted(*make())
            first = time.perf_counter() - start
            t_np, t_pj = timed(fn, make, repeat), timed(jitted, make, repeat)
            t_nb = ""
            if numba is not None:
                try:
                    nb = numba.njit(fn)
                    nb(*make())
                    t_nb = f"{timed(nb, make, repeat) * 1e3:8.2f}ms"
                except Exception:   # numba.njit refuses the program (np.mean with axis=)
                    t_nb = "refused"
            print(f"{name:14s} {n:4d} {first:7.2f}s {t_np * 1e3:8.2f}ms {t_pj * 1e3:8.2f}ms "
                  f"{t_pj / t_np:6.2f}x {t_nb:>10s}", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, nargs="+", default=[60, 120])
    parser.add_argument("--repeat", type=int, default=3)
    opts = parser.parse_args()
    run(cases, opts.n, opts.repeat)


if __name__ == "__main__":
    main()
