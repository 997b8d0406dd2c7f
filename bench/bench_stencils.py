"""Time-stepping loops whose step reads the array it writes (Jacobi, heat, Durbin's recursion), as
people write them with NumPy slices: pyjitc against NumPy in one process, best of --repeat calls
on fresh copies of the inputs, results checked against NumPy's. These loops run as one native loop
each through scratch arrays (pyjitc/lowering/scratch.py); before, as host loops dispatching
every step. Run: python bench/bench_stencils.py [--repeat 5]"""
from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import pyjitc  # noqa: E402
from tests.test_run_time_length import durbin  # noqa: E402


def jacobi_1d(u, steps):
    for _ in range(steps):
        u[1:-1] = 0.25 * u[:-2] + 0.5 * u[1:-1] + 0.25 * u[2:]
    return u


def jacobi_2d(A, B, steps):
    for _ in range(steps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])
    return A, B


def heat_2d(u, steps):
    for _ in range(steps):
        u[1:-1, 1:-1] += 0.1 * (u[2:, 1:-1] - 2 * u[1:-1, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] - 2 * u[1:-1, 1:-1]
                                + u[1:-1, :-2])
    return u


def heat_3d(A, B, steps):
    def step(src, dst):
        dst[1:-1, 1:-1, 1:-1] = (0.125 * (src[2:, 1:-1, 1:-1] - 2.0 * src[1:-1, 1:-1, 1:-1] + src[:-2, 1:-1, 1:-1])
                                 + 0.125 * (src[1:-1, 2:, 1:-1] - 2.0 * src[1:-1, 1:-1, 1:-1] + src[1:-1, :-2, 1:-1])
                                 + 0.125 * (src[1:-1, 1:-1, 2:] - 2.0 * src[1:-1, 1:-1, 1:-1] + src[1:-1, 1:-1, :-2])
                                 + src[1:-1, 1:-1, 1:-1])
    for _ in range(1, steps):
        step(A, B)
        step(B, A)
    return A, B


def cases(rng):
    return [
        ("Jacobi 1-D, 1,000 points x 500 steps", jacobi_1d, (rng.random(1000), 500)),
        ("Jacobi 1-D, 1e5 points x 50 steps", jacobi_1d, (rng.random(100_000), 50)),
        ("Jacobi 2-D (two arrays), 1000^2 x 10", jacobi_2d, (rng.random((1000, 1000)), rng.random((1000, 1000)), 10)),
        ("heat 2-D +=, 200^2 x 100", heat_2d, (rng.random((200, 200)), 100)),
        ("heat 3-D (two arrays), 40^3 x 50", heat_3d, (rng.random((40, 40, 40)), rng.random((40, 40, 40)), 50)),
        ("Durbin, n = 500", durbin, (rng.random(500) * 0.01,)),
    ]


def best(fn, args, repeat):
    out = float("inf")
    for _ in range(repeat):
        fresh = copy.deepcopy(args)
        start = time.perf_counter()
        fn(*fresh)
        out = min(out, time.perf_counter() - start)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print("| loop | NumPy | pyjitc | pyjitc / NumPy |\n|---|---|---|---|")
    for name, fn, inputs in cases(np.random.default_rng(0)):
        jitted = pyjitc.jit(fn)
        got, want = jitted(*copy.deepcopy(inputs)), fn(*copy.deepcopy(inputs))
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
        t_np, t_jit = best(fn, inputs, args.repeat), best(jitted, inputs, args.repeat)
        print(f"| {name} | {t_np * 1e3:.2f} ms | {t_jit * 1e3:.2f} ms | {t_jit / t_np:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
