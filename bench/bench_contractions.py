"""Matrix-vector and matrix-matrix products: pyjitc against NumPy (OpenBLAS) in one process, best
of --repeat calls, results checked against NumPy's, with the memory floor of each case (reading
the matrix once, as NumPy's own A.sum() does). Matrix-vector products run
as linalg.matvec / linalg.vecmat with measured tile sizes (pyjitc/lowering/tiles.py); run with
PYJITC_TUNED_MATVEC=0 for IREE's default tiling of the same product.
Run: python bench/bench_contractions.py [--repeat 20] [--sizes 1000,2000,4000]"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import pyjitc  # noqa: E402


def matvec(A, x):
    return A @ x


def vecmat(A, x):
    return x @ A


def transposed_matvec(A, x):
    return A.T @ x


def gemm(A, B):
    return A @ B


def best(fn, args, repeat):
    out = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args)
        out = min(out, time.perf_counter() - t)
    return out * 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--sizes", default="1000,2000,4000")
    args = p.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'case':32s} {'NumPy ms':>9s} {'pyjitc ms':>9s} {'ratio':>6s} {'floor ms':>9s}")
    for dtype in (np.float64, np.float32):
        for n in (int(s) for s in args.sizes.split(",")):
            A = rng.random((n, n)).astype(dtype)
            x = rng.random(n).astype(dtype)
            floor = best(A.sum, (), max(3, args.repeat // 4))   # reading the matrix once
            for fn in (matvec, vecmat, transposed_matvec):
                jitted = pyjitc.jit(fn)
                got, want = jitted(A, x), fn(A, x)
                tol = 1e-4 if dtype == np.float32 else 1e-10
                assert got.dtype == want.dtype and np.allclose(got, want, rtol=tol), fn.__name__
                tn, tj = best(fn, (A, x), args.repeat), best(jitted, (A, x), args.repeat)
                name = f"{fn.__name__} {np.dtype(dtype).name} {n}"
                print(f"{name:32s} {tn:9.3f} {tj:9.3f} {tj / tn:6.2f} {floor:9.3f}", flush=True)
        A, B = rng.random((1024, 1024)).astype(dtype), rng.random((1024, 1024)).astype(dtype)
        jitted = pyjitc.jit(gemm)
        jitted(A, B)
        tn, tj = best(gemm, (A, B), args.repeat // 2), best(jitted, (A, B), args.repeat // 2)
        name = f"gemm {np.dtype(dtype).name} 1024"
        print(f"{name:32s} {tn:9.3f} {tj:9.3f} {tj / tn:6.2f} {'':>9s}", flush=True)


if __name__ == "__main__":
    main()
