"""Accuracy sweep: every float function pyjitc compiles against NumPy, per dtype, in ulp.

For each function and float16/float32/float64, one input array (so one compile) covering the
hard regions: near 0, near +-1, branch points and poles, multiples of pi/2, overflow and
underflow thresholds, huge and tiny magnitudes (normal ones: IREE flushes subnormals, a
documented limit, so subnormal inputs are left out and subnormal results count as zero), and
+-0, +-inf, NaN. Prints a markdown table: the worst error in ulp of NumPy's result (and the input
where it happened), and whether NaN, infinities and the signs of zeros are where NumPy has them.
The `NumPy itself` column is NumPy's own error, to tell it from ours: for float16/32 against its
float64 result rounded to the dtype (its float32 SIMD loops are a few ulp off), for float64
against mpmath (if installed) at the 8 inputs where pyjitc's error is worst.

Run: python bench/accuracy.py [function ...] [--dtype float32] [--n 20000]"""
from __future__ import annotations

import argparse
import importlib.util
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import pyjitc  # noqa: E402

DTYPES = (np.float16, np.float32, np.float64)
UNARY = ("sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
         "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
         "deg2rad", "rad2deg", "reciprocal")
BINARY = ("arctan2", "hypot", "power", "fmod", "remainder", "floor_divide", "true_divide")


# ---------------------------------------------------------------- inputs

def _uint(dtype):
    return {2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(dtype).itemsize]


def ulps_around(values, dtype, k):
    """Each value and its k neighbours on either side in `dtype` (stepping the bit pattern)."""
    v = np.asarray(values, dtype=np.float64).astype(dtype)
    v = v[np.isfinite(v) & (v != 0)]
    u = _uint(dtype)
    bits = v.view(u).astype(np.int64)[:, None] + np.arange(-k, k + 1)[None, :]
    return bits.clip(0, np.iinfo(u).max).astype(u).view(dtype).ravel()


def finite_range(dtype):
    fi = np.finfo(dtype)
    return float(fi.tiny), float(fi.max)


def magnitudes(dtype, n, rng, lo=None, hi=None):
    """n values log-uniform over the normal range (or [lo, hi]), both signs."""
    tiny, big = finite_range(dtype)
    lo, hi = math.log2(lo or tiny), math.log2(hi or big)
    m = 2.0 ** rng.uniform(lo, hi, n)
    return np.concatenate([m, -m[: n // 2]])


def base_inputs(dtype, n, rng):
    tiny, big = finite_range(dtype)
    eps = float(np.finfo(dtype).eps)
    nexp = int(math.log2(big)) + 1
    pow2 = 2.0 ** np.arange(int(math.log2(tiny)), nexp)
    parts = [
        [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, tiny, -tiny, big, -big, 0.5, -0.5, 2.0, -2.0],
        ulps_around([1.0, -1.0], dtype, 300),                      # near +-1
        1.0 + np.concatenate([pow2, -pow2]), -1.0 + np.concatenate([pow2, -pow2]),
        ulps_around(np.concatenate([pow2, -pow2]), dtype, 3),       # powers of two, tiny and huge
        np.arange(-50, 51) * 0.25, ulps_around(np.arange(-20, 21), dtype, 4),
        magnitudes(dtype, n, rng), rng.uniform(-10, 10, n), rng.uniform(-1, 1, n // 2),
    ]
    return parts


def extra_inputs(name, dtype, n, rng):
    """The function's own hard regions."""
    tiny, big = finite_range(dtype)
    eps = float(np.finfo(dtype).eps)
    ln_big, ln_tiny = math.log(big), math.log(tiny)
    if name in ("exp", "expm1", "sinh", "cosh", "exp2"):
        scale = 1 / math.log(2) if name == "exp2" else 1.0
        thresholds = np.array([ln_big, ln_tiny, ln_big + math.log(2), -ln_big, -ln_big - math.log(2)]) * scale
        return [ulps_around(thresholds, dtype, 200), rng.uniform(-ln_big - 40, ln_big + 40, n) * scale,
                rng.uniform(-1, 1, n) * 2.0 ** rng.uniform(-30, 0, n), np.arange(-60, 61) * 0.5]
    if name in ("log", "log2", "log10", "log1p"):
        x = [1.0 + rng.uniform(-1, 1, n) * 2.0 ** rng.uniform(-60, -1, n), rng.uniform(0, 4, n),
             ulps_around(10.0 ** np.arange(-30, 30), dtype, 2), 2.0 ** np.arange(-100, 100),
             10.0 ** np.arange(-30, 30)]
        if name == "log1p":
            x += [ulps_around([-1.0], dtype, 300), -1.0 + rng.uniform(0, 1, n) * 2.0 ** rng.uniform(-60, 0, n),
                  rng.uniform(-1, 1, n) * 2.0 ** rng.uniform(-60, 0, n)]
        return x
    if name in ("sin", "cos", "tan"):
        k = np.concatenate([np.arange(-200, 201), np.round(rng.uniform(-1e6, 1e6, 400))])
        return [ulps_around(k * (np.pi / 2), dtype, 3), ulps_around(k * (np.pi / 4), dtype, 2),
                rng.uniform(-1e4, 1e4, n), rng.uniform(-1e6, 1e6, n // 4)]
    if name in ("arcsin", "arccos", "arctanh"):
        return [rng.uniform(-1, 1, n), ulps_around([1.0, -1.0, 0.5, -0.5], dtype, 300),
                1.0 - 2.0 ** rng.uniform(-55, -1, n), -1.0 + 2.0 ** rng.uniform(-55, -1, n),
                rng.uniform(-1, 1, n) * 2.0 ** rng.uniform(-60, 0, n)]
    if name == "arccosh":
        return [ulps_around([1.0, 2.0], dtype, 300), 1.0 + 2.0 ** rng.uniform(-55, 2, n),
                rng.uniform(1, 10, n), magnitudes(dtype, n, rng, 1.0, big)]
    if name in ("arcsinh", "arctan", "tanh"):
        return [rng.uniform(-1, 1, n) * 2.0 ** rng.uniform(-60, 5, n), rng.uniform(-25, 25, n),
                ulps_around([0.5, -0.5, 0.55, 19.0, 9.0, 22.0], dtype, 50)]
    if name == "cbrt":
        cubes = np.arange(-40, 41, dtype=np.float64) ** 3
        return [cubes, cubes / 64, rng.uniform(-2, 2, n), magnitudes(dtype, n, rng)]
    return []


def binary_inputs(name, dtype, n, rng):
    tiny, big = finite_range(dtype)
    s = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 1.5, -2.5,
                  tiny, -tiny, big, -big, 1e-3, 7.0])
    sx, sy = np.meshgrid(s, s)
    xs, ys = [sx.ravel()], [sy.ravel()]

    def add(x, y):
        xs.append(np.asarray(x, dtype=np.float64))
        ys.append(np.asarray(y, dtype=np.float64))
    add(magnitudes(dtype, n, rng)[:n], magnitudes(dtype, n, rng)[:n])
    add(rng.uniform(-10, 10, n), rng.uniform(-10, 10, n))
    if name == "power":
        x = ulps_around([1.0], dtype, 200)                     # 1 +- k ulp to big powers
        x = x[x != 1]
        add(x, math.log(big) * rng.uniform(-1, 1, x.size) / np.log(x.astype(np.float64)))
        x = 2.0 ** rng.uniform(-30, 30, n)                      # results up to the overflow threshold
        add(x, math.log(big) * rng.uniform(-1, 1, n) / np.log(x))
        add(-rng.uniform(0.1, 10, n), np.round(rng.uniform(-30, 30, n)))   # negative bases, integer powers
        add(rng.uniform(0, 10, n), rng.choice([0.5, 1 / 3, -0.5, 2.5, 1e-8, -1e-8], n))
        add(rng.uniform(0, 3, n), rng.uniform(-50, 50, n))
    elif name == "hypot":
        add(magnitudes(dtype, n, rng, big / 16, big)[:n], magnitudes(dtype, n, rng, big / 16, big)[:n])
        add(rng.uniform(-1, 1, n), rng.uniform(-1, 1, n) * 2.0 ** rng.uniform(-60, 0, n))
        add(magnitudes(dtype, n, rng, tiny, tiny * 2 ** 20)[:n], magnitudes(dtype, n, rng, tiny, tiny * 2 ** 20)[:n])
    elif name == "arctan2":
        add(rng.uniform(-1, 1, n) * 2.0 ** rng.uniform(-60, 0, n), rng.uniform(-1, 1, n))
        add(rng.uniform(-1, 1, n), rng.uniform(-1, 1, n) * 2.0 ** rng.uniform(-60, 0, n))
        a = rng.uniform(-4, 4, n)
        add(np.sin(a), np.cos(a))
    elif name in ("fmod", "remainder", "floor_divide"):
        add(rng.uniform(-1e6, 1e6, n), rng.uniform(-10, 10, n))
        add(magnitudes(dtype, n, rng, 1.0, big)[:n], rng.uniform(0.1, 10, n))
    return np.concatenate(xs), np.concatenate(ys)


def clean(x, dtype):
    """x in dtype without subnormals (IREE flushes them: README, Known limits)."""
    with np.errstate(all="ignore"):
        x = np.asarray(x, dtype=np.float64).astype(dtype)
    return x[~((x != 0) & (np.abs(x) < np.finfo(dtype).tiny))]


def unary_input(name, dtype, n, seed=0):
    rng = np.random.default_rng(seed)
    return clean(np.concatenate([np.ravel(p) for p in base_inputs(dtype, n, rng) + extra_inputs(name, dtype, n, rng)]), dtype)


def binary_input(name, dtype, n, seed=0):
    x, y = binary_inputs(name, dtype, n, np.random.default_rng(seed))
    with np.errstate(all="ignore"):
        x, y = x.astype(dtype), y.astype(dtype)
    sub = lambda v: (v != 0) & (np.abs(v) < np.finfo(dtype).tiny)
    keep = ~(sub(x) | sub(y))
    if name == "floor_divide":   # a // b is computed from fmod(a, b): a subnormal one is flushed
        with np.errstate(all="ignore"):
            keep &= ~sub(np.fmod(x, y))
    return x[keep], y[keep]


# ---------------------------------------------------------------- measurement

def flush(v, dtype):
    """Subnormal results count as (signed) zero: IREE flushes them."""
    v = np.array(v, dtype=np.float64)
    small = (v != 0) & (np.abs(v) < np.finfo(dtype).tiny)
    v[small] = np.copysign(0.0, v[small])
    return v


def ulp_errors(got, want, dtype):
    """|got - want| in ulp of want (in dtype); NaN where either is not finite."""
    g, w = flush(got, dtype), flush(want, dtype)
    both = np.isfinite(g) & np.isfinite(w)
    sp = np.spacing(np.maximum(np.abs(w), np.finfo(dtype).tiny).astype(dtype)).astype(np.float64)
    err = np.full(g.shape, np.nan)
    err[both] = np.abs(g[both] - w[both]) / sp[both]
    # a value just below the smallest normal number that rounds up to it can be flushed first
    # (float16 power: computed in float64, then converted)
    err[(g == 0) & (np.abs(w) == np.finfo(dtype).tiny)] = 0.0
    return err


def special_mismatches(got, want, dtype):
    """Where NaN, infinities or the sign of a zero differ from NumPy's."""
    g, w = flush(got, dtype), flush(want, dtype)
    nan = np.isnan(g) != np.isnan(w)
    inf = (np.isinf(g) | np.isinf(w)) & ~(np.isnan(g) | np.isnan(w)) & (g != w)
    zero = (g == 0) & (w == 0) & (np.signbit(g) != np.signbit(w))
    return nan | inf | zero


MPMATH = {"sqrt": "sqrt", "cbrt": "cbrt", "exp": "exp", "exp2": lambda m, x: m.power(2, x), "expm1": "expm1",
          "log": "log", "log2": lambda m, x: m.log(x, 2), "log10": "log10", "log1p": "log1p", "sin": "sin",
          "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos", "arctan": "atan", "sinh": "sinh",
          "cosh": "cosh", "tanh": "tanh", "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh",
          "arctan2": "atan2", "hypot": "hypot", "power": "power"}


def numpy_own_error_f64(name, args, want, err, k=8):
    """NumPy's float64 error in ulp against mpmath at the k inputs where pyjitc's is worst."""
    try:
        import mpmath
    except ImportError:
        return None
    f = MPMATH.get(name)
    if f is None:
        return None
    f = (lambda m, *xs, g=getattr(mpmath, f): g(*xs)) if isinstance(f, str) else f
    mpmath.mp.prec = 120
    worst = 0.0
    for i in np.argsort(np.where(np.isnan(err), -1, err))[-k:]:
        w = float(want[i])
        if not np.isfinite(w) or w == 0:
            continue
        try:
            exact = f(mpmath, *[mpmath.mpf(float(a[i])) for a in args])
        except (ValueError, ZeroDivisionError):
            continue
        if not isinstance(exact, mpmath.mpf):
            continue
        worst = max(worst, abs(float((mpmath.mpf(w) - exact) / mpmath.mpf(float(np.spacing(abs(w)))))))
    return worst


def jitted_functions(names, directory):
    src = "import numpy as np\n" + "".join(
        f"\ndef f_{n}(x, y):\n    return np.{n}(x, y)\n" if n in BINARY else f"\ndef f_{n}(x):\n    return np.{n}(x)\n"
        for n in names)
    path = Path(directory) / "accuracy_cases.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("accuracy_cases", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {n: pyjitc.jit(getattr(module, f"f_{n}")) for n in names}


def fmt_args(args, i):
    return ", ".join(np.format_float_positional(a[i], unique=True, trim="-") if abs(float(a[i])) < 1e6 and
                     (a[i] == 0 or abs(float(a[i])) > 1e-6) or not np.isfinite(a[i])
                     else np.format_float_scientific(a[i], unique=True, trim="-") for a in args)


def measure(name, fn, dtype, n):
    args = binary_input(name, dtype, n) if name in BINARY else (unary_input(name, dtype, n),)
    ufunc = getattr(np, name)
    with np.errstate(all="ignore"):
        want = ufunc(*args)
        got = fn(*args)
        own = None
        if dtype != np.float64:   # NumPy's own error: its float64 result rounded to dtype
            ref = ufunc(*[a.astype(np.float64) for a in args]).astype(dtype)
            e = ulp_errors(want, ref, dtype)
            own = np.nanmax(e, initial=0.0)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    err = ulp_errors(got, want, dtype)
    if dtype == np.float64:   # NumPy's own error (against mpmath) where ours is worst
        own = numpy_own_error_f64(name, args, want, err)
    bad = special_mismatches(got, want, dtype)
    worst = int(np.nanargmax(np.where(np.isnan(err), -1, err)))
    row = {"function": name, "dtype": np.dtype(dtype).name, "ulp": float(err[worst]) if np.isfinite(err[worst]) else 0.0,
           "at": f"{fmt_args(args, worst)} -> {got[worst]!r} (NumPy {want[worst]!r})", "own": own,
           "special": "yes" if not bad.any() else
           f"no: {int(bad.sum())}, e.g. ({fmt_args(args, int(np.argmax(bad)))}) -> {got[np.argmax(bad)]!r} (NumPy {want[np.argmax(bad)]!r})",
           "n": args[0].size}
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("functions", nargs="*", help=f"default: all of {' '.join(UNARY + BINARY)}")
    ap.add_argument("--dtype", action="append", choices=[np.dtype(d).name for d in DTYPES])
    ap.add_argument("--n", type=int, default=20000, help="random draws per region (default 20000)")
    ap.add_argument("--bound", type=float, default=4.0, help="flag rows above this many ulp (default 4)")
    opts = ap.parse_args(argv)
    names = opts.functions or list(UNARY + BINARY)
    dtypes = [np.dtype(d).type for d in opts.dtype] if opts.dtype else DTYPES
    rows = []
    np.seterr(all="ignore")
    with tempfile.TemporaryDirectory() as tmp:
        fns = jitted_functions(names, tmp)
        start = time.perf_counter()
        print("| function | dtype | worst ulp | NumPy itself | at | NaN/inf/±0 as NumPy |")
        print("|---|---|---|---|---|---|")
        for name in names:
            for dtype in dtypes:
                if name == "float_power" and dtype != np.float64:
                    continue
                r = measure(name, fns[name], dtype, opts.n)
                rows.append(r)
                flag = " **!**" if r["ulp"] > opts.bound else ""
                own = "" if r["own"] is None else f"{r['own']:.3g}"
                print(f"| {name} | {r['dtype']} | {r['ulp']:.3g}{flag} | {own} | {r['at']} | {r['special']} |", flush=True)
    print(f"\n{len(rows)} rows in {time.perf_counter() - start:.0f} s")
    return rows


if __name__ == "__main__":
    main()
