"""np.linalg: NumPy (LAPACK) against pyjitc (blocked algorithms, pyjitc/frontend/numpy/linalg_blocked.py)
and jax.jit when importable, in one process: cholesky, solve (one right-hand side), inv and det on
well-conditioned float64 matrices at several sizes (and float32 at one). Compile time (first call,
disk cache off) is reported apart from the steady-state time (best of --repeat), with the largest
difference from NumPy's result relative to its largest magnitude.
Run: python bench/bench_linalg.py [--sizes 10 100 500 1000] [--repeat 5] [--only cholesky]"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("PYJITC_CACHE_DIR", "off")   # compile times measured cold
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import pyjitc  # noqa: E402


@pyjitc.jit
def cholesky(a):
    return np.linalg.cholesky(a)


@pyjitc.jit
def solve(a, b):
    return np.linalg.solve(a, b)


@pyjitc.jit
def inv(a):
    return np.linalg.inv(a)


@pyjitc.jit
def det(a):
    return np.linalg.det(a)


CASES = {"cholesky": (cholesky, np.linalg.cholesky, "spd"), "solve": (solve, np.linalg.solve, "ab"),
         "inv": (inv, np.linalg.inv, "a"), "det": (det, np.linalg.det, "a")}


def arguments(kind, n, dtype, rng):
    m = rng.uniform(-1, 1, (n, n))
    if kind == "spd":
        return ((m @ m.T + n * np.eye(n)).astype(dtype),)
    a = (m + n * np.eye(n))[rng.permutation(n)].astype(dtype)   # well conditioned, pivots move
    return (a, rng.uniform(-1, 1, n).astype(dtype)) if kind == "ab" else (a,)


def best(fn, args, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 500, 1000])
    parser.add_argument("--f32-size", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", nargs="+", default=list(CASES))
    opts = parser.parse_args()
    jax = importlib.import_module("jax") if importlib.util.find_spec("jax") else None
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
        jnp = jax.numpy
        jitted = {"cholesky": jax.jit(jnp.linalg.cholesky), "solve": jax.jit(jnp.linalg.solve),
                  "inv": jax.jit(jnp.linalg.inv), "det": jax.jit(jnp.linalg.det)}
    rng = np.random.default_rng(0)
    runs = [(n, np.float64) for n in opts.sizes] + [(opts.f32_size, np.float32)] * bool(opts.f32_size)
    print(f"{'case':10s} {'n':>5s} {'dtype':>7s} {'NumPy':>10s} {'JAX':>10s} {'pyjitc':>10s} "
          f"{'pyjitc/NumPy':>12s} {'compile':>8s} {'rel. diff':>9s}")
    for name in opts.only:
        fn, ref, kind = CASES[name]
        for n, dtype in runs:
            args = arguments(kind, n, dtype, rng)
            t0 = time.perf_counter()
            got = fn(*args)
            compile_s = time.perf_counter() - t0
            want = ref(*args)
            diff = float(np.max(np.abs(got - want)) / max(1e-300, np.max(np.abs(want))))
            t_np, t_pj = best(ref, args, opts.repeat), best(fn, args, opts.repeat)
            t_jax = None
            if jax is not None:
                jf = jitted[name]
                jax.block_until_ready(jf(*args))
                t_jax = best(lambda *a: jax.block_until_ready(jf(*a)), args, opts.repeat)
            ms = lambda t: f"{t * 1e3:9.3f}m" if t is not None else f"{'-':>10s}"
            print(f"{name:10s} {n:5d} {np.dtype(dtype).name:>7s} {ms(t_np)} {ms(t_jax)} {ms(t_pj)} "
                  f"{t_pj / t_np:11.1f}x {compile_s:7.1f}s {diff:9.1e}", flush=True)
    print("times in ms, best of --repeat; compile = first call (trace + IREE), disk cache off")


if __name__ == "__main__":
    main()
