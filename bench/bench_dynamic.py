"""Run-time sizes (pyjitc/ir/dims.py, @jit(dynamic=True)) against static executables, in one
process, interleaved, medians: the benchmark suite's cases (the ratio symbolic / static says what
one executable for every size costs), and the loop kernels over shrinking slices against NumPy
and numba.njit (when installed). Also the compiles: a static function called with 10 sizes
compiles 10 times; dynamic=True once; the default (dynamic=None) twice.

    python bench/bench_dynamic.py [--rounds 9] [--quick]
"""
from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import pyjitc  # noqa: E402
from bench.bench_suite import cases as suite_cases  # noqa: E402
from tests.test_run_time_length import KERNELS  # noqa: E402

NUMBA = importlib.util.find_spec("numba") is not None


def median_time(fn, make, rounds) -> float:
    times = []
    for _ in range(rounds):
        args = make()
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def suite(rounds, quick):
    print(f"{'case':44} {'static':>10} {'symbolic':>10} {'ratio':>6}")
    ratios = []
    for name, _, fn, make in suite_cases(quick):
        static, symbolic = pyjitc.jit(fn, dynamic=False), pyjitc.jit(fn, dynamic=True)
        args = make()
        try:
            static(*args), symbolic(*args)
        except pyjitc.JitError as e:
            print(f"{name:44} symbolic refused: {str(e).splitlines()[0][:70]}")
            continue
        kind = "symbolic" if symbolic.cache_info().dynamic else "static (nothing to make symbolic)"
        t_static = median_time(static, make, rounds)
        t_symbolic = median_time(symbolic, make, rounds)
        ratios.append(t_symbolic / t_static)
        print(f"{name:44} {t_static * 1e3:8.3f}ms {t_symbolic * 1e3:8.3f}ms {t_symbolic / t_static:6.2f}"
              + ("" if kind == "symbolic" else f"  ({kind})"))
    if ratios:
        print(f"geometric mean symbolic / static: {np.exp(np.mean(np.log(ratios))):.2f}")


def kernels(rounds, n):
    print(f"\nloop kernels, n = {n}: first call (compile + run) and steady state")
    print(f"{'kernel':14} {'NumPy':>10} {'numba':>10} {'static':>10} {'symbolic':>10} {'compile s/sym':>14}")
    for name, (fn, make) in KERNELS.items():
        args0 = make(n)
        copy = lambda: tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args0)
        row = [median_time(fn, copy, rounds)]
        if NUMBA:
            import numba
            nb = numba.njit(fn)
            try:
                nb(*copy())
                row.append(median_time(nb, copy, rounds))
            except Exception:
                row.append(float("nan"))
        else:
            row.append(float("nan"))
        firsts = []
        for dynamic in (False, True):
            f = pyjitc.jit(fn, dynamic=dynamic)
            start = time.perf_counter()
            try:
                f(*copy())
            except pyjitc.JitError:    # a size the code needs as a number (e.g. an int argument)
                firsts.append(float("nan"))
                row.append(float("nan"))
                continue
            firsts.append(time.perf_counter() - start)
            row.append(median_time(f, copy, rounds))
        print(f"{name:14} " + " ".join(f"{t * 1e3:8.3f}ms" for t in row) + f" {firsts[0]:6.2f}/{firsts[1]:5.2f}")


def compiles():
    def stencil(u):
        return u[1:-1] - 0.5 * (u[2:] + u[:-2])
    sizes = [5, 8, 13, 21, 34, 55, 89, 144, 233, 377]
    print("\ncompiles for 10 sizes of a stencil:")
    for dynamic in (False, None, True):
        f = pyjitc.jit(stencil, dynamic=dynamic)
        pyjitc.set_cache_dir(None)
        start = time.perf_counter()
        for n in sizes:
            f(np.random.rand(n))
        print(f"  dynamic={dynamic!s:5}: {f.cache_info().misses} compiles, {time.perf_counter() - start:.2f} s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--n", type=int, default=120)
    args = ap.parse_args()
    suite(args.rounds, args.quick)
    kernels(args.rounds, args.n)
    compiles()


if __name__ == "__main__":
    main()
