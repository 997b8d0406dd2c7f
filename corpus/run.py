"""Run the corpus: each function under NumPy (its own code, uncompiled), under pyjitc.jit and under
numba.njit when installed; compare results and every array argument afterwards; time each.

    python -m corpus.run [--only SUBSTRING] [--fast] [--json corpus/results.json] [--no-time]

Per function: ok (compiled, equal to NumPy), refused (a located pyjitc error: its first line),
wrong (a different value, shape or dtype), iree (IREE failed to compile or run what pyjitc made),
internal (any other exception from pyjitc), bad-entry (NumPy itself fails on the inputs). Then a
summary line and, for the ok ones, the geometric mean of the time against NumPy and Numba."""
from __future__ import annotations

import argparse
import copy
import importlib
import json
import math
import sys
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field

import numpy as np

from .entries import ENTRIES, Entry

STATUSES = ("ok", "refused", "wrong", "iree", "internal", "missing", "bad-entry")


@dataclass
class Outcome:
    path: str
    package: str
    status: str
    detail: str = ""
    numpy_s: float | None = None
    pyjitc_s: float | None = None
    numba_s: float | None = None
    numba: str = "not run"
    compile_s: float | None = None


def resolve(path: str):
    module, _, attr = path.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def caller(fn, n_args: int, kwargs: dict):
    """NumPy's own functions are called from a jitted function, as user code calls them (a NumPy
    function is not Python source pyjitc reads: it is pyjitc's registry that compiles it)."""
    kw = dict(kwargs)
    if n_args == 1:
        def call(a):
            return fn(a, **kw)
    elif n_args == 2:
        def call(a, b):
            return fn(a, b, **kw)
    elif n_args == 3:
        def call(a, b, c):
            return fn(a, b, c, **kw)
    elif n_args == 4:
        def call(a, b, c, d):
            return fn(a, b, c, d, **kw)
    else:
        def call(a, b, c, d, e):
            return fn(a, b, c, d, e, **kw)
    call.__name__ = call.__qualname__ = getattr(fn, "__name__", "call")
    return call, ()


def leaves(x):
    if isinstance(x, (tuple, list)):
        return [l for item in x for l in leaves(item)]
    if isinstance(x, dict):
        return [l for k in sorted(x) for l in leaves(x[k])]
    return [x]


def same(expected, got) -> str:
    """'' if got equals expected as NumPy sees it (value to float tolerance, shape, dtype)."""
    a, b = leaves(expected), leaves(got)
    if len(a) != len(b):
        return f"{len(a)} results expected, {len(b)} returned"
    for i, (x, y) in enumerate(zip(a, b)):
        if isinstance(x, (str, type(None))) or isinstance(y, (str, type(None))):
            if x != y:
                return f"result {i}: {y!r} for {x!r}"
            continue
        xa, ya = np.asarray(x), np.asarray(y)
        if xa.shape != ya.shape:
            return f"result {i}: shape {ya.shape} for {xa.shape}"
        if xa.dtype != ya.dtype:
            return f"result {i}: dtype {ya.dtype} for {xa.dtype}"
        if type(x) in (bool, int, float) and type(y) is not type(x) and not isinstance(y, np.generic):
            return f"result {i}: {type(y).__name__} for {type(x).__name__}"
        if xa.dtype.kind in "fc":
            tol = {2: 2e-3, 4: 2e-5, 8: 1e-10, 16: 1e-10}.get(xa.dtype.itemsize if xa.dtype.kind == "f" else xa.dtype.itemsize // 2, 1e-10)
            if not np.allclose(ya, xa, rtol=tol, atol=tol * max(1.0, float(np.nanmax(np.abs(xa))) if xa.size and np.isfinite(xa).any() else 1.0), equal_nan=True):
                return f"result {i}: values differ (max abs diff {np.nanmax(np.abs(ya - xa)) if xa.size else 0:.3g})"
        elif not np.array_equal(xa, ya):
            return f"result {i}: values differ"
    return ""


def timeit(fn, args, kwargs, budget=0.2, repeat=5) -> float:
    """Median seconds per call (after one warm-up call), each sample of enough calls to last a while."""
    fn(*copy.deepcopy(args), **kwargs)
    start = time.perf_counter()
    fn(*args, **kwargs)
    once = max(time.perf_counter() - start, 1e-7)
    n = max(1, min(1000, int(budget / repeat / once)))
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(n):
            fn(*args, **kwargs)
        samples.append((time.perf_counter() - start) / n)
    return float(np.median(samples))


def classify(e: BaseException) -> tuple[str, str]:
    import pyjitc
    first = (str(e).splitlines() or [""])[0]
    if isinstance(e, pyjitc.CompileError) or "IREE" in type(e).__name__ or "iree" in type(e).__module__:
        return "iree", first
    if isinstance(e, pyjitc.JitError):
        if "internal compiler error" in first or ": internal error" in first:
            return "internal", first
        return "refused", first
    return "internal", f"{type(e).__name__}: {first}"


def run_entry(entry: Entry, timing: bool = True, numba_too: bool = True) -> Outcome:
    import pyjitc
    out = Outcome(entry.path, entry.package, "ok")
    try:
        fn = resolve(entry.path)
    except Exception as e:   # the package is not installed
        out.status, out.detail = "missing", f"{type(e).__name__}: {e}"
        return out
    rng = np.random.default_rng(0)
    args, kwargs = entry.build(rng)
    if entry.path.split(":")[0].split(".")[0] == "numpy":   # NumPy itself (not numpy_financial)
        target, kw = caller(fn, len(args), kwargs)[0], {}
    else:
        target, kw = fn, kwargs
    ref_args = copy.deepcopy(args)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = fn(*ref_args, **kwargs)
    except Exception as e:
        out.status, out.detail = "bad-entry", f"NumPy: {type(e).__name__}: {e}"
        return out
    jit_args = copy.deepcopy(args)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            jitted = pyjitc.jit(target)
            start = time.perf_counter()
            got = jitted(*jit_args, **kw)
            out.compile_s = time.perf_counter() - start
    except Exception as e:
        out.status, out.detail = classify(e)
        return out
    problem = same(expected, got) or same(ref_args, jit_args)
    if problem:
        out.status, out.detail = "wrong", problem
        return out
    if timing:
        out.numpy_s = timeit(fn, args, kwargs)
        out.pyjitc_s = timeit(jitted, args, kw)
    if numba_too:
        try:
            import numba
        except ImportError:
            return out
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                nb = numba.njit(target)
                nb_got = nb(*copy.deepcopy(args), **kw)
            out.numba = "wrong: " + problem if (problem := same(expected, nb_got)) else "ok"
            if out.numba == "ok" and timing:
                out.numba_s = timeit(nb, args, kw)
        except Exception as e:
            out.numba = f"fails: {type(e).__name__}"
    return out


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def summary(outcomes: list[Outcome]) -> str:
    counted = [o for o in outcomes if o.status not in ("missing", "bad-entry")]
    counts = {s: sum(o.status == s for o in counted) for s in STATUSES[:5]}
    ok = [o for o in counted if o.status == "ok" and o.pyjitc_s]
    vs_np = geomean([o.pyjitc_s / o.numpy_s for o in ok])
    both = [o for o in ok if o.numba_s]
    vs_nb = geomean([o.pyjitc_s / o.numba_s for o in both])
    share = 100.0 * counts["ok"] / len(counted) if counted else 0.0
    return (f"corpus: {len(counted)} functions: {counts['ok']} ok ({share:.0f}%), {counts['refused']} refused, "
            f"{counts['wrong']} wrong, {counts['iree']} IREE failures, {counts['internal']} internal errors; "
            f"time vs NumPy (geomean over {len(ok)} ok): {vs_np:.2f}x; vs Numba (over {len(both)} both ran): {vs_nb:.2f}x")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default="", help="run entries whose path contains this")
    p.add_argument("--fast", action="store_true", help="the test suite's subset")
    p.add_argument("--no-time", action="store_true", help="correctness only")
    p.add_argument("--no-numba", action="store_true")
    p.add_argument("--json", default="corpus/results.json")
    ns = p.parse_args(argv)
    chosen = [e for e in ENTRIES if ns.only in e.path and (not ns.fast or "fast" in e.tags)]
    outcomes = []
    for entry in chosen:
        o = run_entry(entry, timing=not ns.no_time, numba_too=not ns.no_numba)
        outcomes.append(o)
        times = ""
        if o.pyjitc_s:
            times = f"  {o.pyjitc_s / o.numpy_s:6.2f}x NumPy"
            if o.numba_s:
                times += f"  {o.pyjitc_s / o.numba_s:6.2f}x Numba"
        print(f"{o.status:9s} {o.path:55s}{times}  {o.detail[:160]}", flush=True)
    line = summary(outcomes)
    print(line)
    if ns.json:
        with open(ns.json, "w") as f:
            json.dump({"summary": line, "outcomes": [asdict(o) for o in outcomes]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
