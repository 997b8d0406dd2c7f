"""Classic numerical kernels written the way NumPy users write them (row-by-row triangular linear
algebra with loops over run-time slices, BLAS-like products, stencils with time loops, masked and
elementwise work): for each one, pyjitc.jit(fn) against NumPy on separate copies of the same
inputs (fixed seed), checking the results and every argument array afterwards (values with
rtol=1e-9 for float64, 1e-5 for float32, exact for integers and booleans; shapes; dtypes), then
best-of-5 steady-state time of each in one process after one warm-up call (the first call's time
is the compile column). Status: ok, refused (the pyjitc.JitError's first line), wrong (what
differs) or crash (the exception). Ratio = pyjitc time / NumPy time (below 1: pyjitc faster);
the last line is the geometric mean of the ratios of the ok kernels. The disk cache is off unless
--disk-cache is given, so the compile column is a real compile (about 1.5 min in all; durbin's
loop is unrolled and alone takes ~50 s at n = 250, 163 s at n = 600).
Run: python bench/bench_kernels.py [--quick] [--only NAME [NAME ...]] [--repeat 5] [--disk-cache]"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import pyjitc  # noqa: E402


# ---- triangular / row-by-row linear algebra --------------------------------------------------

def lu(A):
    """Doolittle LU in place, row by row: L below the diagonal (unit diagonal implied), U on and above."""
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, n):
            A[i, j] -= A[i, :i] @ A[:i, j]
    return A


def cholesky(A):
    """Cholesky-Banachiewicz in place: L in the lower triangle, the upper triangle left as it was."""
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[j, :j]
            A[i, j] /= A[j, j]
        A[i, i] -= A[i, :i] @ A[i, :i]
        A[i, i] = np.sqrt(A[i, i])
    return A


def trisolv(L, b):
    """Forward substitution L x = b."""
    n = b.shape[0]
    x = np.zeros_like(b)
    for i in range(n):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def gramschmidt(A):
    """Modified Gram-Schmidt QR, column by column; A is overwritten by the projections."""
    m, n = A.shape
    Q = np.zeros((m, n))
    R = np.zeros((n, n))
    for k in range(n):
        R[k, k] = np.linalg.norm(A[:, k])
        Q[:, k] = A[:, k] / R[k, k]
        for j in range(k + 1, n):
            R[k, j] = Q[:, k] @ A[:, j]
            A[:, j] -= R[k, j] * Q[:, k]
    return Q, R


def durbin(r):
    """Levinson-Durbin recursion: solve the Yule-Walker system T y = -r for a Toeplitz T."""
    n = r.shape[0]
    y = np.zeros_like(r)
    y[0] = -r[0]
    beta = 1.0
    alpha = -r[0]
    for k in range(1, n):
        beta = (1.0 - alpha * alpha) * beta
        alpha = -(r[k] + r[:k][::-1] @ y[:k]) / beta
        y[:k] += alpha * y[:k][::-1]
        y[k] = alpha
    return y


def gauss_seidel(u, sweeps):
    """Gauss-Seidel sweeps of the 2-D Laplace equation: each point reads its already-updated neighbours."""
    n, m = u.shape
    for _ in range(sweeps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                u[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
    return u


def floyd_warshall(path):
    """All-pairs shortest paths, one vectorised relaxation per intermediate node."""
    n = path.shape[0]
    for k in range(n):
        path[:] = np.minimum(path, path[:, k:k + 1] + path[k:k + 1, :])
    return path


# ---- BLAS-like --------------------------------------------------------------------------------

def atax(A, x):
    return A.T @ (A @ x)


def bicg(A, p, r):
    q = A @ p
    s = A.T @ r
    return s, q


def gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    A += np.outer(u1, v1) + np.outer(u2, v2)
    x += beta * (A.T @ y) + z
    w += alpha * (A @ x)
    return A, x, w


def gemm(alpha, beta, C, A, B):
    C *= beta
    C += alpha * A @ B
    return C


def doitgen(A, C4):
    """Multiresolution kernel: every (r, q) row of A times C4, through a reshape to one matmul."""
    nr, nq, np_ = A.shape
    A[:] = (A.reshape(nr * nq, np_) @ C4).reshape(nr, nq, np_)
    return A


def batched_contraction(X, W, V):
    """A batch of small matrices times one shared matrix (broadcast batch), then per-batch products."""
    H = np.tanh(X @ W)                      # (b, s, d) @ (d, h): the batch broadcast over W
    return np.einsum("bsh,bth->bst", H, V)  # per-batch H @ V^T


# ---- stencils with time loops -----------------------------------------------------------------

def jacobi_2d(A, B, steps):
    for _ in range(steps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])
    return A, B


def heat_3d(u, steps, alpha):
    for _ in range(steps):
        lap = (u[2:, 1:-1, 1:-1] + u[:-2, 1:-1, 1:-1] + u[1:-1, 2:, 1:-1] + u[1:-1, :-2, 1:-1]
               + u[1:-1, 1:-1, 2:] + u[1:-1, 1:-1, :-2] - 6.0 * u[1:-1, 1:-1, 1:-1])
        u[1:-1, 1:-1, 1:-1] += alpha * lap
    return u


def fdtd_2d(ex, ey, hz, fict):
    """2-D finite-difference time domain: E then H fields updated in turn, a source row per step."""
    for t in range(fict.shape[0]):
        ey[0, :] = fict[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
    return ex, ey, hz


# ---- statistics, elementwise, reductions ------------------------------------------------------

def covariance(data):
    """Sample covariance of the columns; data is centred in place, the symmetric half filled by a loop."""
    n, m = data.shape
    data -= data.mean(axis=0)
    cov = np.zeros((m, m))
    for i in range(m):
        for j in range(i, m):
            cov[i, j] = data[:, i] @ data[:, j] / (n - 1)
            cov[j, i] = cov[i, j]
    return cov


def correlation(data):
    """Pearson correlation of the columns, one row of the upper triangle per step, mirrored."""
    n, m = data.shape
    mean = data.mean(axis=0)
    std = data.std(axis=0)
    std[std <= 0.1] = 1.0
    data = (data - mean) / (np.sqrt(n) * std)
    corr = np.eye(m)
    for i in range(m - 1):
        corr[i, i + 1:] = data[:, i] @ data[:, i + 1:]
        corr[i + 1:, i] = corr[i, i + 1:]
    return corr


def softmax(x):
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=-1, keepdims=True)


def haversine(lat1, lon1, lat2, lon2):
    """Great-circle distance in km between points given in degrees."""
    lat1, lon1, lat2, lon2 = np.radians(lat1), np.radians(lon1), np.radians(lat2), np.radians(lon2)
    a = np.sin((lat2 - lat1) / 2) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371.0 * np.arcsin(np.sqrt(a))


def mandelbrot(c, maxit):
    """Escape counts on a grid of complex points."""
    z = np.zeros_like(c)
    count = np.zeros(c.shape, dtype=np.int64)
    for it in range(maxit):
        mask = np.abs(z) < 2
        z[mask] = z[mask] ** 2 + c[mask]
        count[mask] += 1
    return count


# ---- inputs -----------------------------------------------------------------------------------

def spd(rng, n):
    a = rng.random((n, n))
    return a @ a.T + n * np.eye(n)


def cases(quick):
    """(name, function, arguments); every argument array is copied afresh for each call."""
    rng = np.random.default_rng(0)
    q = quick
    n3 = 60 if q else 150            # O(n^3) loop kernels
    nb = 400 if q else 2000          # matrix-vector
    ns = 64 if q else 200            # 2-D stencils
    steps = 10 if q else 50
    ne = 100_000 if q else 1_000_000  # elementwise
    nv = 60 if q else 200
    nd = 100 if q else 250           # durbin: its loop is unrolled (a reversed run-time slice)
    lat = lambda k: rng.uniform(-90, 90, k)      # noqa: E731
    lon = lambda k: rng.uniform(-180, 180, k)    # noqa: E731
    re, im = np.meshgrid(np.linspace(-2.0, 0.6, 120 if q else 400), np.linspace(-1.2, 1.2, 100 if q else 300))
    fict = rng.random(steps)
    fdtd_n = ns
    out = [
        ("lu", lu, (spd(rng, n3),)),
        ("cholesky", cholesky, (spd(rng, n3),)),
        ("trisolv", trisolv, (np.tril(spd(rng, 4 * n3)), rng.random(4 * n3))),
        ("gramschmidt", gramschmidt, (rng.random((n3 + 20, n3)),)),
        ("durbin", durbin, (0.5 ** np.arange(1, nd + 1) * (1 + 0.1 * rng.random(nd)),)),
        ("gauss_seidel", gauss_seidel, (rng.random((50 if q else 100, 50 if q else 100)), 2 if q else 5)),
        ("floyd_warshall", floyd_warshall, (rng.uniform(1.0, 100.0, (n3, n3)),)),
        ("atax", atax, (rng.random((nb, nb + 100)), rng.random(nb + 100))),
        ("bicg", bicg, (rng.random((nb, nb + 100)), rng.random(nb + 100), rng.random(nb))),
        ("gemver", gemver, (1.5, 1.2, rng.random((nb // 2, nb // 2)))
         + tuple(rng.random(nb // 2) for _ in range(8))),
        ("gemm", gemm, (1.5, 1.2, rng.random((nb // 5, nb // 5 + 10)), rng.random((nb // 5, nb // 5 + 20)),
                        rng.random((nb // 5 + 20, nb // 5 + 10)))),
        ("doitgen", doitgen, (rng.random((nv // 4, nv // 4 + 5, nv // 2)), rng.random((nv // 2, nv // 2)))),
        ("batched_contraction", batched_contraction,
         (rng.random((32 if q else 128, 64, 48)), rng.random((48, 96)) / 8, rng.random((32 if q else 128, 64, 96)))),
        ("jacobi_2d", jacobi_2d, (rng.random((ns, ns)), rng.random((ns, ns)), steps)),
        ("heat_3d", heat_3d, (rng.random((ns // 5, ns // 5, ns // 5)), steps, 0.1)),
        ("fdtd_2d", fdtd_2d, (rng.random((fdtd_n, fdtd_n + 20)), rng.random((fdtd_n, fdtd_n + 20)),
                              rng.random((fdtd_n, fdtd_n + 20)), fict)),
        ("covariance", covariance, (rng.random((nv + 20, nv // 2)),)),
        ("correlation", correlation, (rng.random((nv + 20, nv)),)),
        ("softmax", softmax, (rng.random((ne // 1000, 1000)),)),
        ("haversine", haversine, (lat(ne), lon(ne), lat(ne), lon(ne))),
        ("mandelbrot", mandelbrot, (re + 1j * im, 20 if q else 30)),
    ]
    return out


# ---- harness ----------------------------------------------------------------------------------

def fresh(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def differs(expected, got, what):
    """None when got matches expected (values, shape, dtype), else a short description."""
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            return f"{what}: {type(got).__name__} instead of {len(expected)}-{type(expected).__name__}"
        for k, (e, g) in enumerate(zip(expected, got)):
            d = differs(e, g, f"{what}[{k}]")
            if d:
                return d
        return None
    e, g = np.asarray(expected), np.asarray(got)
    if e.shape != g.shape:
        return f"{what}: shape {g.shape} instead of {e.shape}"
    if e.dtype != g.dtype:
        return f"{what}: dtype {g.dtype} instead of {e.dtype}"
    if e.dtype.kind in "fc":
        rtol = 1e-9 if e.dtype in (np.float64, np.complex128) else 1e-5
        scale = float(np.max(np.abs(e[np.isfinite(e)]), initial=1.0))
        if not np.allclose(g, e, rtol=rtol, atol=rtol * 1e-3 * scale, equal_nan=True):
            bad = ~np.isclose(g, e, rtol=rtol, atol=rtol * 1e-3 * scale, equal_nan=True)
            at = np.unravel_index(np.argmax(bad), e.shape) if e.ndim else ()
            return (f"{what}: {int(bad.sum())}/{e.size} values differ, max abs err "
                    f"{float(np.nanmax(np.abs(g - e))):.2e}, at {tuple(map(int, at))} {g[at]!r} vs {e[at]!r}")
    elif not np.array_equal(e, g):
        return f"{what}: {int((e != g).sum())}/{e.size} values differ"
    return None


def best(fn, args, repeat):
    times = []
    for _ in range(repeat):
        call_args = fresh(args)
        start = time.perf_counter()
        fn(*call_args)
        times.append(time.perf_counter() - start)
    return min(times)


def first_line(exc):
    text = str(exc).strip().splitlines()
    return text[0] if text else ""


def probe(name, fn, args, repeat):
    """(status, NumPy s, pyjitc s or None, compile s or None)."""
    np_args = fresh(args)
    expected = fn(*np_args)
    t_np = best(fn, args, repeat)
    pj_args = fresh(args)
    start = time.perf_counter()
    try:
        jitted = pyjitc.jit(fn)   # checks the whole function already: may refuse here
        got = jitted(*pj_args)
    except pyjitc.JitError as exc:
        return f"refused: {type(exc).__name__}: {first_line(exc)}", t_np, None, time.perf_counter() - start
    except Exception as exc:  # noqa: BLE001  (the probe reports whatever happens)
        return f"crash: {type(exc).__name__}: {first_line(exc)}", t_np, None, time.perf_counter() - start
    compile_s = time.perf_counter() - start
    problem = differs(expected, got, "result")
    for k, (e, g) in enumerate(zip(np_args, pj_args)):
        if problem is None and isinstance(e, np.ndarray):
            problem = differs(e, g, f"argument {k}")
    t_pj = best(jitted, args, repeat)
    return ("ok" if problem is None else f"wrong: {problem}"), t_np, t_pj, compile_s


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these kernels")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--disk-cache", action="store_true", help="keep pyjitc's disk cache of executables on")
    opts = parser.parse_args()
    if not opts.disk_cache:
        pyjitc.set_cache_dir(None)
    selected = cases(opts.quick)
    if opts.only:
        unknown = set(opts.only) - {name for name, _, _ in selected}
        if unknown:
            parser.error(f"unknown kernel(s) {sorted(unknown)}; known: {[name for name, _, _ in selected]}")
        selected = [case for case in selected if case[0] in opts.only]
    print(f"{'kernel':20s} {'NumPy':>10s} {'pyjitc':>10s} {'ratio':>8s} {'compile':>8s}  status")
    ratios = []
    for name, fn, args in selected:
        status, t_np, t_pj, compile_s = probe(name, fn, args, opts.repeat)
        pj = f"{t_pj * 1e3:8.2f}ms" if t_pj is not None else f"{'-':>10s}"
        ratio = f"{t_pj / t_np:7.2f}x" if t_pj is not None else f"{'-':>8s}"
        comp = f"{compile_s:7.2f}s" if compile_s is not None else f"{'-':>8s}"
        if status == "ok":
            ratios.append(t_pj / t_np)
        print(f"{name:20s} {t_np * 1e3:8.2f}ms {pj} {ratio} {comp}  {status}", flush=True)
    if ratios:
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(f"geometric mean of pyjitc/NumPy over {len(ratios)} ok kernels: {geo:.2f}x")
    print("ratio = pyjitc time / NumPy time (below 1: pyjitc faster); best of "
          f"{opts.repeat}; compile = first call (for refused/crash: time until the error)")


if __name__ == "__main__":
    main()
