"""Run-time loops doing scalar work (element reads and writes, arithmetic, nested loops, ifs):
pyjitc's native loops (one dispatch, pyjitc/lowering/scalar_loop.py) against the same code as
host loops (PYJITC_NATIVE_LOOPS=0: a stablehlo.while that IREE steps from the host), against
numba.njit when installed, and against the plain Python/NumPy function, in one process.
Reports steady-state times (best of --repeat), ratios to numba, and the cost per loop step.
Run: python bench/bench_scalar_loops.py [--n 2000] [--repeat 5] [--no-host]"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import pyjitc  # noqa: E402
from bench.bench_shrinking_slices import timed  # noqa: E402
from tests.test_scalar_loops import (collatz_steps, crc32, insertion_sort, lcs_length, matmul_loops,  # noqa: E402
                                     popcounts, recurrence, sum_positive_squares)


def cases(n, rng):
    """(name, function, arguments maker, loop steps per call)."""
    m = int(round(n ** (1 / 3) * 4))
    return [
        ("sum of positive squares", sum_positive_squares, lambda: (rng.standard_normal(100 * n),), 100 * n),
        ("recurrence y[i] = a*y[i-1] + x[i]", recurrence, lambda: (rng.standard_normal(100 * n), 0.9), 100 * n),
        ("crc32 (bit loop)", crc32, lambda: (rng.integers(0, 256, 10 * n).astype(np.uint8),), 80 * n),
        ("popcount (while v)", popcounts, lambda: (rng.integers(0, 2 ** 40, 2 * n),), 80 * n),
        ("collatz steps", collatz_steps, lambda: (rng.integers(1, 1000, n),), None),
        ("lcs (dynamic programming)", lcs_length, lambda: (rng.integers(0, 4, n // 4), rng.integers(0, 4, n // 4)),
         (n // 4) ** 2),
        ("matmul as three loops", matmul_loops, lambda: (rng.random((m, m)), rng.random((m, m))), m ** 3),
        ("insertion sort", insertion_sort, lambda: (rng.standard_normal(n // 2),), None),
    ]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-host", action="store_true", help="skip the host-loop column (slow)")
    opts = parser.parse_args()
    numba = importlib.import_module("numba") if importlib.util.find_spec("numba") else None
    rng = np.random.default_rng(0)
    head = f"{'case':34s} {'Python':>9s} {'numba':>9s} {'native':>9s} {'host':>9s} {'native/numba':>12s} {'ns/step':>8s}"
    print(head)
    for name, fn, make, steps in cases(opts.n, rng):
        t_py = timed(fn, make, 1)
        t_nb = t_host = None
        if numba is not None:
            nb = numba.njit(fn)
            nb(*make())
            t_nb = timed(nb, make, opts.repeat)
        native = pyjitc.jit(fn)
        native(*make())
        t_native = timed(native, make, opts.repeat)
        if not opts.no_host:
            os.environ["PYJITC_NATIVE_LOOPS"] = "0"
            try:
                host = pyjitc.jit(fn)
                host(*make())
                t_host = timed(host, make, max(1, opts.repeat // 2))
            finally:
                del os.environ["PYJITC_NATIVE_LOOPS"]
        ms = lambda t: f"{t * 1e3:8.2f}m" if t is not None else f"{'-':>9s}"
        ratio = f"{t_native / t_nb:11.2f}x" if t_nb else f"{'-':>12s}"
        per_step = f"{t_native / steps * 1e9:8.1f}" if steps else f"{'-':>8s}"
        print(f"{name:34s} {ms(t_py)} {ms(t_nb)} {ms(t_native)} {ms(t_host)} {ratio} {per_step}")
    print("times in ms (best of --repeat); native = pyjitc default, host = PYJITC_NATIVE_LOOPS=0; "
          "native/numba below 1: pyjitc faster; ns/step = native time / loop steps")


if __name__ == "__main__":
    main()
