"""Gradients of the statement fuzzer's programs (tests/fuzz_statements.py) against central finite
differences of the same program run by NumPy. Each program `fuzzed(x, y, A, n)` (local arrays,
views, in-place writes through them, helpers, run-time loops and branches) is wrapped in a loss,

    def loss(x, y, A, n):
        r = fuzzed(x, y, A, n)
        return np.sum(r[0] * W0) + ... + np.sum(x * Wx) + np.sum(y * Wy) + np.sum(A * WA)

(fixed weights: every float result, and every argument as the call left it), and pyjitc.grad
(loss, argnums=(0, 1, 2)) is compared with central differences in float64 element by element.
Calls passing aliased arguments are made with copies (gradients of arguments sharing memory
are not supported).

Finite differences mean something only where the program is smooth around the point: a branch,
a mask, np.floor, np.abs or np.maximum may switch within the step. An element is compared only
when its one-sided differences (step 1e-6) agree with each other and the central differences
at steps 1e-4 and 1e-6 agree; otherwise it is "unstable" and left out.

Outcomes: agree / nan (a NaN gradient where finite differences see a constant: the chain rule
through sqrt at 0, as in JAX, e.g. np.sqrt(np.abs(A - A))) / refused (a located JitError: the forward refused, or an op without a
derivative rule) / skipped (NumPy raised, a non-finite value, no element stable) / MISMATCH /
internal / iree.

    python -m tests.fuzz_gradients --count 200 --seed 1
In the suite: tests/test_fuzz_gradients.py (a fixed seed, ~30 programs)."""
from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import tempfile
import traceback
import warnings
from pathlib import Path

import numpy as np

import pyjitc
from pyjitc.stages import NativeLoopWarning
from tests.fuzz import load_source
from tests.fuzz_statements import Gen, Program

CLASSES = ["agree", "nan", "refused", "skipped", "MISMATCH", "internal", "iree"]
STEPS = (1e-4, 1e-6)
STABLE = 1e-3        # one-sided and central differences agree within this (relative to 1 + |d|)
RTOL, ATOL = 1e-5, 1e-7


@dataclasses.dataclass
class Outcome:
    kind: str
    detail: str = ""
    compared: int = 0     # elements compared
    unstable: int = 0     # elements left out: the program is not smooth there
    host_loops: bool = False   # IREE failed a native loop of the gradient (NativeLoopWarning)


def _weight(k: int) -> float:
    return round(float(np.cos(k * 1.7 + 0.3)), 3)


def _terms(value, ref: str, k: list) -> list[str]:
    """Loss terms for the float leaves of `value` (the NumPy result), named by `ref`."""
    if isinstance(value, (tuple, list)):
        return [t for i, v in enumerate(value) for t in _terms(v, f"{ref}[{i}]", k)]
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        k[0] += 1
        return [f"np.sum({ref} * np.cos(np.arange({ref}.size) * 1.3 + {k[0]}).reshape({ref}.shape))"]
    if isinstance(value, (float, np.floating)):
        k[0] += 1
        return [f"{ref} * {_weight(k[0])}"]
    return []


def loss_source(prog: Program, result) -> str:
    k = [0]
    terms = _terms(result, "r", k)
    terms += [t for name in ("x", "y", "A") for t in _terms(np.zeros(1), name, k)]
    return prog.text + "\n\ndef loss(x, y, A, n):\n    r = fuzzed(x, y, A, n)\n    return " + " + ".join(terms) + "\n"


def _call(fn, args):
    with np.errstate(all="ignore"):
        return float(fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args]))


def finite_differences(fn, args):
    """Per argument 0..2: the central difference at the smallest step, and a mask of the
    elements where the program is smooth (see the module's docstring)."""
    f0 = _call(fn, args)
    out = []
    for i in range(3):
        x = args[i]
        central = {h: np.zeros(x.shape) for h in STEPS}
        one_sided = [np.zeros(x.shape), np.zeros(x.shape)]
        for j in range(x.size):
            for h in STEPS:
                vals = []
                for step in (h, -h):
                    call = list(args)
                    call[i] = x.copy()
                    call[i].flat[j] += step
                    vals.append(_call(fn, call))
                central[h].flat[j] = (vals[0] - vals[1]) / (2 * h)
                if h == STEPS[-1]:
                    one_sided[0].flat[j] = (vals[0] - f0) / h
                    one_sided[1].flat[j] = (f0 - vals[1]) / h
        d = central[STEPS[-1]]
        with np.errstate(invalid="ignore"):
            tol = STABLE * (1 + np.abs(d))
            stable = (np.abs(central[STEPS[0]] - d) <= tol) & (np.abs(one_sided[0] - one_sided[1]) <= tol)
        out.append((d, stable & np.isfinite(d)))
    return f0, out


def run_gradient(prog: Program, directory: Path, name: str) -> Outcome:
    _, args = prog.args()
    args = tuple(np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args)   # unaliased
    fuzzed = load_source(prog.text, directory, name)
    try:
        with np.errstate(all="ignore"):
            result = fuzzed(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    except Exception as e:
        return Outcome("skipped", f"NumPy raised {type(e).__name__}")
    text = loss_source(prog, result)
    loss = load_source(text, directory, name + "_loss", "loss")
    try:
        f0, fds = finite_differences(loss, args)
    except Exception as e:
        return Outcome("skipped", f"NumPy raised {type(e).__name__}")
    if not np.isfinite(f0):
        return Outcome("skipped", "a non-finite loss")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", NativeLoopWarning)
            got = pyjitc.grad(loss, argnums=(0, 1, 2))(*args)
        host_loops = any(issubclass(w.category, NativeLoopWarning) for w in caught)
    except pyjitc.CompileError as e:
        return Outcome("iree", str(e).splitlines()[0][:200])
    except pyjitc.RunError as e:
        return Outcome("MISMATCH", f"pyjitc raised RunError where NumPy did not: {str(e).splitlines()[0]}")
    except pyjitc.JitError as e:
        if e.span is None or "internal" in e.message:
            return Outcome("internal", f"{type(e).__name__}: {e}")
        return Outcome("refused", f"{type(e).__name__}: {e.message}")
    except Exception as e:
        return Outcome("internal", f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
    compared = unstable = 0
    problems = []
    for name_, g, (d, stable), x in zip("x y A".split(), got, fds, args):
        if g.shape != x.shape or g.dtype != x.dtype:
            problems.append(f"d/d{name_}: {g.dtype}{list(g.shape)}, expected {x.dtype}{list(x.shape)}")
            continue
        compared += int(stable.sum())
        unstable += int((~stable).sum())
        atol = ATOL * max(1.0, abs(f0)) + ATOL
        nan = stable & ~np.isfinite(g)
        if nan.any():   # an infinite derivative times zero (sqrt at 0 reached through abs or a
            # difference that is always 0): NaN, as from JAX, where the program is constant
            return Outcome("nan", f"d/d{name_} at {np.argwhere(nan).tolist()[:4]}: {g[nan][:4]}", compared, unstable)
        bad = stable & ~(np.abs(g - d) <= atol + RTOL * np.abs(d))
        if bad.any():
            problems.append(f"d/d{name_} at {np.argwhere(bad).tolist()[:4]}: pyjitc {g[bad][:4]}, "
                            f"finite differences {d[bad][:4]}")
    if problems:
        return Outcome("MISMATCH", "\n".join(problems), compared, unstable, host_loops)
    if not compared:
        return Outcome("skipped", "no element where the program is smooth", 0, unstable, host_loops)
    return Outcome("agree", "", compared, unstable, host_loops)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--show", action="store_true", help="print every failing program")
    a = ap.parse_args()
    pyjitc.set_cache_dir(None)
    gen = Gen(np.random.default_rng(a.seed))
    counts = dict.fromkeys(CLASSES, 0)
    reasons: dict[str, int] = {}
    compared = unstable = host_loops = 0
    with tempfile.TemporaryDirectory() as d:
        for i in range(a.count):
            prog = gen.program()
            out = run_gradient(prog, Path(d), f"grad_{i}")
            counts[out.kind] += 1
            compared += out.compared
            unstable += out.unstable
            host_loops += out.host_loops
            if out.kind in ("refused", "skipped"):
                key = re.sub(r"/\S+\.py:\d+:\d+: ", "", out.detail.splitlines()[0])[:90]
                reasons[f"{out.kind}: {key}"] = reasons.get(f"{out.kind}: {key}", 0) + 1
            elif out.kind not in ("agree", "nan"):
                print(f"--- {out.kind}: program {i + 1} (seed {a.seed}) ---\n{prog.text}{prog.describe()}\n"
                      f"{out.detail}\n", flush=True)
    print(f"\n{a.count} programs (seed {a.seed}): {counts['agree']} agree, {counts['nan']} NaN (JAX's too), "
          f"{counts['refused']} refused, "
          f"{counts['skipped']} skipped, {counts['MISMATCH']} mismatches, {counts['internal']} internal, "
          f"{counts['iree']} iree failures; {compared} gradient elements compared, {unstable} left out as unstable; "
          f"{host_loops} gradients compiled with host loops (IREE failed their native loop)")
    for k, v in sorted(reasons.items(), key=lambda kv: -kv[1])[:15]:
        print(f"  {v:4d} x {k}")
    return 1 if any(counts[k] for k in ("MISMATCH", "internal", "iree")) else 0


if __name__ == "__main__":
    sys.exit(main())
