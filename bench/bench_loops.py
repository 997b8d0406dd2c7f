"""Loops, branches and in-place updates: NumPy vs pyjitc (and jax.jit where the code is
expressible unchanged, which for these functions it is not), in one process, as ratios.
Run: python bench/bench_loops.py"""
import time

import numpy as np

import pyjitc


def heat(u, steps, alpha):
    for _ in range(steps):
        lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
        u[1:-1, 1:-1] += alpha * lap
    return u


def forward_substitution(L, b):
    n = b.shape[0]
    x = np.zeros_like(b)
    for i in range(n):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def scalar_loop(x):
    total = np.float64(0.0)
    for i in range(x.shape[0]):
        if x[i] > 0:
            total += x[i] * x[i]
    return total


def best(fn, make_args, repeat=5):
    times = []
    for _ in range(repeat):
        args = make_args()
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    rng = np.random.default_rng(0)
    u0 = rng.random((256, 256))
    n = 200
    L = np.tril(rng.standard_normal((n, n))) + n * np.eye(n)
    b = rng.standard_normal(n)
    x = rng.standard_normal(10_000)
    cases = [
        ("heat 256x256, 200 steps", heat, lambda: (u0.copy(), 200, 0.2)),
        (f"forward substitution n={n} (unrolled)", forward_substitution, lambda: (L, b)),
        ("scalar loop with if, 10k elements", scalar_loop, lambda: (x,)),
    ]
    print(f"{'case':42s} {'NumPy':>10s} {'pyjitc':>10s} {'ratio':>7s} {'compile':>8s}")
    for name, fn, make_args in cases:
        jitted = pyjitc.jit(fn)
        start = time.perf_counter()
        jitted(*make_args())
        first = time.perf_counter() - start
        t_np = best(fn, make_args)
        t_jit = best(jitted, make_args)
        print(f"{name:42s} {t_np * 1e3:8.2f}ms {t_jit * 1e3:8.2f}ms {t_jit / t_np:6.2f}x {first:7.2f}s")
    print("ratio = pyjitc time / NumPy time (below 1: pyjitc faster); compile = first call")


if __name__ == "__main__":
    main()
