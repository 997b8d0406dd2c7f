"""Differential fuzzing against NumPy: random programs in the supported subset (expression trees
over registered ops with broadcasting shapes and mixed dtypes; `if` on array values, loops with
in-place updates), each run by NumPy and by pyjitc.jit. Where NumPy gives an answer pyjitc must
give the same value, shape and dtype; where NumPy raises, pyjitc must raise too (a JitError at
compile time or a RunError at run time). Never a different answer.

In the test suite: tests/test_fuzz.py (a modest number of programs). Standalone, longer:
    python -m tests.fuzz --minutes 10 [--seed 1]
Every mismatch found is printed with its program and becomes a regression test."""
from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

import pyjitc
from tests.reference import assert_same

DTYPES = ["float32", "float64", "int32", "int64", "bool"]
SHAPES = [(), (3,), (4,), (2, 3), (2, 1), (1, 3), (2, 3, 4)]
UNARY = ["np.abs({})", "-({})", "np.square({})", "np.sqrt(np.abs({}) + 1.0)", "np.exp(np.minimum({}, 5))",
         "np.floor({})", "({}).astype(np.float32)", "({}).astype(np.int64)", "np.logical_not({})",
         "np.clip({}, -1, 2)", "np.cumsum({}, axis=-1)", "np.sort({}, axis=-1)", "np.tanh({})", "np.isnan({})",
         "np.round({}, 1)", "np.flip({})", "np.sign({})"]
BINARY = ["({} + {})", "({} - {})", "({} * {})", "({} / ({} + 0.5))", "np.maximum({}, {})",
          "np.minimum({}, {})", "({} > {})", "({} == {})", "np.where({} > 0, {}, {})"]
REDUCE = ["np.sum({}, axis={ax})", "np.max({}, axis={ax})", "np.mean({})", "({}).min()", "np.any({} > 1)",
          "np.var({})", "np.argmax({}, axis={ax})", "np.std({}, axis={ax})", "np.count_nonzero({})"]


class Gen:
    """Random program text from a numpy random generator (reproducible by seed)."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def pick(self, items):
        return items[int(self.rng.integers(len(items)))]

    def expr(self, names, depth):
        r = self.rng.random()
        if depth <= 0 or r < 0.25:
            if self.rng.random() < 0.2:
                return self.pick(["2", "0.5", "-1", "3", "True", "1.5"])
            return self.pick(names)
        if r < 0.5:
            return self.pick(UNARY).format(self.expr(names, depth - 1))
        if r < 0.85:
            t = self.pick(BINARY)
            if t.startswith("np.where"):
                return t.format(*(self.expr(names, depth - 1) for _ in range(3)))
            if "+ 0.5" in t:
                return t.format(self.expr(names, depth - 1), f"np.abs({self.expr(names, depth - 1)})")
            return t.format(self.expr(names, depth - 1), self.expr(names, depth - 1))
        t = self.pick(REDUCE)
        return t.format(self.expr(names, depth - 1), ax=self.pick(["0", "-1", "None"]))

    def program(self):
        lines = ["import numpy as np", "", "", "def fuzzed(x, y, n):"]
        lines.append(f"    a = {self.expr(['x', 'y'], 3)}")
        kind = self.pick(["plain", "if", "loop", "inplace", "while"])
        if kind == "if":
            lines += [f"    if np.sum({self.expr(['a', 'x'], 2)}) > 0:",
                      f"        b = {self.expr(['a', 'y'], 2)}",
                      "    else:",
                      f"        b = {self.expr(['a', 'x'], 2)}"]
        elif kind == "loop":
            lines += ["    b = a",
                      "    for i in range(n):",
                      f"        b = {self.expr(['b', 'x'], 2)}",
                      "        if np.max(b) > 100:",
                      "            break"]
        elif kind == "inplace":
            lines += ["    b = np.zeros(x.shape) + a",
                      "    for i in range(n):",
                      f"        b += {self.expr(['x', 'y'], 2)}",
                      "    b[...] = b * 0.5"]
        elif kind == "while":
            lines += ["    b = a",
                      "    k = 0",
                      "    while k < n and np.all(np.abs(b) < 50):",
                      f"        b = {self.expr(['b', 'y'], 1)} + 1",
                      "        k += 1"]
        else:
            lines += [f"    b = {self.expr(['a', 'x', 'y'], 2)}"]
        lines.append(self.pick(["    return b", "    return a, b", "    return {'b': b, 'n': n}"]))
        return "\n".join(lines) + "\n"

    def inputs(self):
        dx, dy = self.pick(DTYPES), self.pick(DTYPES)
        sx = self.pick(SHAPES)
        sy = self.pick([s for s in SHAPES if _broadcastable(s, sx)])
        return _array(self.rng, sx, dx), _array(self.rng, sy, dy), int(self.rng.integers(0, 4))


def _broadcastable(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def _array(rng, shape, dtype):
    if dtype == "bool":
        return rng.random(shape) < 0.5 if shape else np.bool_(rng.random() < 0.5)
    if dtype.startswith("int"):
        v = rng.integers(-5, 6, size=shape)
    else:
        v = np.round(rng.standard_normal(shape) * 3, 2)
    return np.asarray(v, dtype=dtype) if shape else np.dtype(dtype).type(v)


def load_source(text: str, directory: Path, name: str, function: str = "fuzzed"):
    path = directory / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, function)


REFUSALS: list[str] = []


def check_program(text: str, args, directory: Path, name: str) -> str | None:
    """None if pyjitc agrees with NumPy; else a description of the mismatch."""
    fn = load_source(text, directory, name)
    copy = lambda: [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        with np.errstate(all="ignore"):
            want = fn(*copy())
        numpy_error = None
    except Exception as e:          # NumPy refuses: pyjitc must refuse too
        want, numpy_error = None, e
    try:
        got = pyjitc.jit(fn)(*copy())
    except pyjitc.RunError as e:
        if numpy_error is not None:
            return None
        return f"pyjitc raised at run time where NumPy did not: {e}"
    except pyjitc.JitError as e:
        if numpy_error is not None or e.span is not None and not str(e).startswith("internal"):
            REFUSALS.append(f"{type(e).__name__}: {e.message}")
            return None             # a located refusal at compile time is allowed, never a wrong answer
        return f"pyjitc raised an unlocated or internal error: {type(e).__name__}: {e}"
    except Exception as e:
        return f"pyjitc raised a non-JitError: {type(e).__name__}: {e}\n{traceback.format_exc()}"
    if numpy_error is not None:
        return f"NumPy raised {type(numpy_error).__name__}: {numpy_error}, pyjitc returned {got!r}"
    loops = "for i in range(n)" in text or "while k < n" in text
    want, got = _documented(want, got, zero_trip=args[2] == 0 and loops)
    if _float32_involved(text, args):
        want, got = _as_f32(want), _as_f32(got)
    try:
        if isinstance(want, dict):
            assert isinstance(got, dict) and list(got) == list(want)
            for k in want:
                assert_same(got[k], want[k], accumulate=True)
        else:
            assert_same(got, want, accumulate=True)
    except AssertionError as e:
        return f"mismatch: {e}"
    return None


def _documented(want, got, zero_trip=False):
    """Apply the README's documented differences before comparing: a Python scalar that a
    run-time branch or loop may turn into a NumPy scalar is the NumPy scalar; 0-d results are
    NumPy scalars (where NumPy would return a 0-d array)."""
    if isinstance(want, dict) and isinstance(got, dict):
        pairs = [_documented(want[k], got.get(k), zero_trip) for k in want]
        return dict(zip(want, (p[0] for p in pairs))), dict(zip(want, (p[1] for p in pairs)))
    if isinstance(want, (tuple, list)) and isinstance(got, (tuple, list)) and len(want) == len(got):
        pairs = [_documented(w, g, zero_trip) for w, g in zip(want, got)]
        return type(want)(p[0] for p in pairs), type(got)(p[1] for p in pairs)
    scalar_like = lambda v: type(v) in (bool, int, float) or isinstance(v, np.generic) or \
        (isinstance(v, np.ndarray) and v.ndim == 0)
    if scalar_like(want) and scalar_like(got):
        w, g = np.asarray(want), np.asarray(got)
        if type(want) in (bool, int, float) and (g.dtype.kind == w.dtype.kind or zero_trip):
            w = w.astype(g.dtype)    # a Python scalar that a loop or branch may make a NumPy scalar
        return w[()], g[()]
    return want, got


def _float32_involved(text, args) -> bool:
    """float32 rounding then promoted to float64: compare at float32's tolerance."""
    return "float32" in text or any(np.asarray(a).dtype == np.float32 for a in args)


def _as_f32(v):
    if isinstance(v, dict):
        return {k: _as_f32(x) for k, x in v.items()}
    if isinstance(v, (tuple, list)):
        return type(v)(_as_f32(x) for x in v)
    a = np.asarray(v)
    if a.dtype == np.float64:
        return a.astype(np.float32)[()] if a.ndim == 0 else a.astype(np.float32)
    return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    gen = Gen(rng)
    deadline = time.time() + a.minutes * 60
    count = failures = 0
    with tempfile.TemporaryDirectory() as d:
        while time.time() < deadline:
            text, args = gen.program(), gen.inputs()
            problem = check_program(text, args, Path(d), f"fuzz_{count}")
            count += 1
            if problem:
                failures += 1
                print(f"--- program {count} (seed {a.seed}) ---\n{text}args: {args!r}\n{problem}\n", flush=True)
    print(f"{count} programs, {failures} mismatches, {len(REFUSALS)} located refusals")
    kinds = {}
    for r in REFUSALS:
        kinds[r[:70]] = kinds.get(r[:70], 0) + 1
    for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {v:4d} x {k}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
