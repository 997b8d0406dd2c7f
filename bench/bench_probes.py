"""Cases found by probing NumPy code written the way people write it (this round): pyjitc and NumPy
in one process, best-of timings (ms) and the first call's compile time (s). `python bench/bench_probes.py
[NAME ...]`."""
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import pyjitc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.test_control_flow import fft_stages  # noqa: E402  (the programs the tests check)
from tests.test_native_array_loops import perceptron_steps  # noqa: E402
from tests.test_native_array_loops import rk4_with_array_literals as rk4  # noqa: E402
warnings.simplefilter("ignore")
pyjitc.set_cache_dir(None)

def power_iter(A, tol, maxit):
    v = np.ones(A.shape[0]) / np.sqrt(A.shape[0])
    lam = 0.0
    it = 0
    while it < maxit:
        w = A @ v
        lam_new = v @ w
        v = w / np.linalg.norm(w)
        if abs(lam_new - lam) < tol:
            lam = lam_new
            break
        lam = lam_new
        it += 1
    return lam, v, it
def knapsack(weights, values, cap):
    dp = np.zeros(cap + 1, dtype=np.int64)
    for i in range(weights.shape[0]):
        w = weights[i]
        dp[w:] = np.maximum(dp[w:], dp[:cap + 1 - w] + values[i])
    return dp[cap], dp
def pivots(A):
    n = A.shape[0]
    piv = np.zeros(n, dtype=np.int64)
    for k in range(n - 1):
        piv[k] = np.argmax(np.abs(A[k:, k])) + k
    return piv
def f32sum(x): return x.sum()
def matvec(A, x): return A @ x

rng = np.random.default_rng(0)
B = rng.random((150, 150))
cases = {
    "rk4 500 steps": (rk4, (np.array([1.0, 0.0]), 2.0, 0.01, 500)),
    "power iteration 150x150": (power_iter, (B + B.T, 1e-10, 1000)),
    "knapsack 40 items cap 200": (knapsack, (rng.integers(1, 30, 40), rng.integers(1, 100, 40), 200)),
    "pivot search n=120": (pivots, (rng.random((120, 120)),)),
    "radix-2 FFT n=256": (fft_stages, (rng.random(256) + 1j * rng.random(256),)),
    "f32 sum 1e6": (f32sum, (rng.random(1_000_000).astype(np.float32),)),
    "perceptron 2000 steps": (perceptron_steps, (rng.normal(size=(2000, 3)), np.sign(rng.normal(size=2000)),
                                                 np.zeros(3), 0.1)),
    "f32 A@x 4000x5000": (matvec, (rng.random((4000, 5000)).astype(np.float32), rng.random(5000).astype(np.float32))),
}
only = sys.argv[1:] 
for name, (fn, args) in cases.items():
    if only and not any(o in name for o in only):
        continue
    j = pyjitc.jit(fn)
    t = time.perf_counter()
    try:
        j(*args)
    except Exception as e:
        print(f"{name:<28} failed: {str(e).splitlines()[0][:80]}")
        continue
    compile_s = time.perf_counter() - t
    def best(f, k=7):
        b = 1e9
        for _ in range(k):
            s = time.perf_counter(); f(*args); b = min(b, time.perf_counter() - s)
        return b * 1e3
    tj, tn = best(j), best(fn, 3)
    print(f"{name:<28} compile {compile_s:6.2f} s   pyjitc {tj:9.3f} ms   numpy {tn:9.3f} ms   ratio {tj / tn:.3f}", flush=True)
