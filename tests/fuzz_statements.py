"""Differential fuzzing of *statements* against NumPy: random programs that create local arrays
(np.zeros/ones/empty+write/full/eye/arange, .copy(), np.array), take views of them (slices with
steps and negative indices, 2-D interior slices, .T, rows, reshape/ravel of contiguous arrays),
write through those views (v[:] = e, v += e, v[i] = c, v[mask] = c, A[1:-1] = B[2:] - B[:-2]),
call helpers (module level and nested, closures) that write into their parameters, inside
run-time `for` loops and `if` branches, sweep along an axis (each row or column from the one
before it, through a temporary read again after the write), through tuples and lists, and return the base, the view
or both. Calls may pass the same array, or overlapping views of one array, as several arguments.

Each program runs through NumPy (the plain function) and pyjitc.jit on identically built
arguments (aliasing built the same way on both sides); the results (value, shape, dtype, and
which results share memory with each other) and every argument array afterwards must agree.
Outcomes: agree / refused (a located JitError at compile time) / raised (NumPy raised and so did
pyjitc) / MISMATCH / ALIAS (results share memory in one and not the other) / internal (an
unlocated or 'internal' JitError, a non-JitError exception) / iree (pyjitc.CompileError, or IREE's
runtime refusing the compiled program).

Shapes are tracked while generating by evaluating every expression on shadow arrays (real NumPy
views of zero arrays), so programs are valid NumPy with known shapes: x (6,), y (6,) or a view
of x or A, A (5, 6), all float64, and a run-time int n.

    python -m tests.fuzz_statements --minutes 10 --seed 1 [--minimize]
In the suite: tests/test_fuzz_statements.py (a fixed seed, ~40 programs)."""
from __future__ import annotations

import argparse
import itertools
import re
import sys
import tempfile
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import pyjitc
from pyjitc.stages import NativeLoopWarning
from tests.fuzz import _documented, load_source
from tests.reference import assert_same

# ------------------------------------------------------------------------------ helpers library
# name -> (source, parameter kinds). Kinds: "arr" any array; "same" an array of the first
# parameter's shape; "arr3" an array whose first axis has at least 3 items; "s" a float scalar;
# "pair" a list or tuple of two arrays of one shape.
HELPERS = {
    "fill": ("def fill(b, u):\n    b[1:-1] = u[2:] - u[:-2]\n", ["arr3", "same"]),
    "bump": ("def bump(b):\n    b += 1.0\n", ["arr"]),
    "scale": ("def scale(b, s):\n    b *= s\n", ["arr", "s"]),
    "axpy": ("def axpy(y, a, x):\n    y += a * x\n", ["arr", "s", "same"]),
    "clip_neg": ("def clip_neg(b):\n    b[b < 0.0] = 0.0\n", ["arr"]),
    "set_first": ("def set_first(b, v):\n    b[0] = v\n", ["arr", "s"]),
    "copy_into": ("def copy_into(dst, src):\n    dst[:] = src\n", ["arr", "same"]),
    "half_inner": ("def half_inner(b):\n    w = b[1:-1]\n    w *= 0.5\n", ["arr3"]),
    "step": ("def step(b, u):\n    b += 0.25 * u\n    return b.sum()\n", ["arr", "same"]),
    "twice": ("def twice(b):\n    bump(b)\n    bump(b)\n", ["arr"]),
    "reverse": ("def reverse(b):\n    b[:] = b[::-1]\n", ["arr"]),
    "pair_add": ("def pair_add(p):\n    p[0][...] += p[1]\n", ["pair"]),
    "pair_set": ("def pair_set(p):\n    p[1][:] = p[0] * 0.5\n", ["pair"]),
    "swap_ends": ("def swap_ends(b):\n    t = b[0].copy()\n    b[0] = b[-1]\n    b[-1] = t\n", ["arr"]),
}
HELPER_DEPS = {"twice": ["bump"]}

CONSTS = ["0.5", "1.5", "-2.0", "3.0", "0.25", "2.0"]
# (no np.floor: IREE's fused multiply-adds move a value that NumPy computes as exactly -8.0 by an
# ulp, and floor turns that into -9: README "Numerical agreement"; seed 9120 program 32)
UNARY = ["np.abs({})", "np.sin({})", "({} * 0.5)", "-{}", "np.sqrt(np.abs({}))", "np.tanh({})"]
BINARY = ["({} + {})", "({} - {})", "({} * {})", "np.maximum({}, {})", "np.minimum({}, {})"]
SLICES_1D = ["1:-1", "2:", ":-2", "::2", "1::2", "::-1", "-3:", ":3", "1:4", "::-2", "1:-1:2", "-4:-1",
             "::3", "2:5"]
SLICES_2D = ["1:-1, 1:-1", "1:-1", ":, 1:-1", "::2", ":, ::2", "::-1", ":, ::-1", "1:, :-1", ":-1, 1:",
             "1:-1, ::2", "-2:, :", "::2, ::-1", ":, -3:", "2:4, 1:5"]
CREATE_SHAPES = [(6,), (5, 6), (8,), (7, 8), (4,), (6, 5), (3, 6)]
MODES = ["indep", "indep", "indep", "same", "rev", "sub", "step", "row", "col", "xrow"]
# A call that passes aliased arguments: y (and x) built from the other arrays the same way on
# both sides. Each entry: how y and x are made from the owners X, Y, A.
MODE_ARGS = {
    "indep": ("X", "Y"), "same": ("X", "X"), "rev": ("X", "X[::-1]"), "sub": ("X", "X[1:3]"),
    "step": ("X", "X[::2]"), "row": ("X", "A[1]"), "col": ("X", "A[:, 2]"), "xrow": ("A[0]", "Y"),
}


@dataclass
class Program:
    text: str
    mode: str
    n: int
    seed: int            # of the argument values
    helpers: list = field(default_factory=list)

    def args(self):
        """Fresh owner arrays and the call's arguments built from them (aliasing as the mode says)."""
        rng = np.random.default_rng(self.seed)
        owners = {"X": np.round(rng.standard_normal(6) * 3, 2), "Y": np.round(rng.standard_normal(6) * 3, 2),
                  "A": np.round(rng.standard_normal((5, 6)) * 3, 2)}
        xs, ys = MODE_ARGS[self.mode]
        x, y = eval(xs, {}, owners), eval(ys, {}, owners)
        return owners, (x, y, owners["A"], self.n)

    def describe(self):
        xs, ys = MODE_ARGS[self.mode]
        return f"args: fuzzed({xs}, {ys}, A, {self.n}) with X, Y, A from default_rng({self.seed}) (see Program.args)"


class Gen:
    """Random statement programs, reproducible by seed."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    # -------------------------------------------------------------- small random choices
    def pick(self, items):
        return items[int(self.rng.integers(len(items)))]

    def chance(self, p):
        return self.rng.random() < p

    # -------------------------------------------------------------- shadow evaluation
    def shadow(self, text):
        """What `text` evaluates to on the shadow arrays (None where NumPy refuses it)."""
        try:
            with np.errstate(all="ignore"):
                return eval(text, {"np": np}, self.env)
        except Exception:
            return None

    def arrays(self):
        """Texts naming arrays now: names, and items of containers."""
        return [r for r in self.refs if isinstance(self.shadow(r), np.ndarray)]

    # -------------------------------------------------------------- expressions
    def view_text(self, ref, shape_ok=None):
        """A random view of `ref` (basic slice, row, .T, reshape/ravel when contiguous)."""
        a = self.shadow(ref)
        if a is None or not isinstance(a, np.ndarray) or a.ndim == 0:
            return None
        r = self.rng.random()
        if r < 0.12:       # NumPy functions and methods that return views (some read-only)
            if a.ndim == 1:
                text = self.pick([f"np.split({ref}, 2)[{int(self.rng.integers(0, 2))}]" if a.shape[0] % 2 == 0 else f"{ref}.view()",
                                  f"{ref}.view()", f"np.flip({ref})", f"np.atleast_2d({ref})[0]",
                                  f"np.expand_dims({ref}, 0)[0, 1:]", f"{ref}.real", f"np.array_split({ref}, 3)[1]"])
            else:
                text = self.pick([f"np.swapaxes({ref}, 0, 1)", f"np.moveaxis({ref}, 0, -1)", f"{ref}.view()",
                                  f"np.vsplit({ref}, [2])[1]", f"np.hsplit({ref}, [1])[1]", f"np.squeeze({ref}[None])",
                                  f"np.diagonal({ref})", f"np.fliplr({ref})", f"{ref}.real[1:]", f"np.rot90({ref})",
                                  f"np.broadcast_to({ref}[0], {ref}.shape)", f"{ref}.flat[2:9]"])
        elif a.ndim == 1:
            if r < 0.8:
                text = f"{ref}[{self.pick(SLICES_1D)}]"
            elif a.flags.c_contiguous and a.size == 30:
                text = f"{ref}.reshape({self.pick(['5, 6', '6, 5', '(5, 6)'])})"
            else:
                text = f"{ref}[{int(self.rng.integers(-a.shape[0], a.shape[0]))}:]"
        else:
            if r < 0.6:
                text = f"{ref}[{self.pick(SLICES_2D)}]"
            elif r < 0.75:
                text = f"{ref}[{int(self.rng.integers(-a.shape[0], a.shape[0]))}]"
            elif r < 0.85:
                text = f"{ref}.T"
            elif r < 0.92:
                text = f"{ref}[:, {int(self.rng.integers(-a.shape[1], a.shape[1]))}]"
            elif a.flags.c_contiguous:
                text = f"{ref}.{self.pick(['ravel()', 'reshape(-1)', 'reshape(' + str(a.shape[1]) + ', ' + str(a.shape[0]) + ')'])}"
            else:
                text = f"{ref}[1:-1, 1:-1]"
        v = self.shadow(text)
        if not isinstance(v, np.ndarray) or v.size == 0 or not np.shares_memory(v, a):
            return None
        if shape_ok is not None and not shape_ok(v.shape):
            return None
        return text

    def term(self, shape):
        """A leaf of `shape` (or a scalar that broadcasts to it)."""
        r = self.rng.random()
        if r < 0.15:
            return self.pick(CONSTS)
        if r < 0.22:
            ref = self.pick(self.arrays())
            return self.pick([f"{ref}.sum()", f"np.max({ref})", f"{ref}.mean()", f"{ref}[0]" if self.shadow(ref).ndim == 1 else f"{ref}[0, 0]"])
        refs = self.arrays()
        exact = [r for r in refs if self.shadow(r).shape == shape]
        if exact and self.chance(0.45):
            return self.pick(exact)
        for _ in range(25):          # a slice of something that has this shape (B[2:] - B[:-2])
            v = self.view_text(self.pick(refs), lambda s: s == shape)
            if v:
                return v
        return self.pick(exact) if exact else self.pick(CONSTS)

    def expr(self, shape, depth=2):
        r = self.rng.random()
        if depth <= 0 or r < 0.35:
            return self.term(shape)
        if r < 0.55:
            return self.pick(UNARY).format(self.expr(shape, depth - 1))
        return self.pick(BINARY).format(self.expr(shape, depth - 1), self.expr(shape, depth - 1))

    # -------------------------------------------------------------- statements
    def fresh(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"

    def bind(self, name, text):
        value = self.shadow(text)
        self.env[name] = value
        self.refs.append(name)
        return value

    def create(self, ind):
        name = self.fresh(self.pick(["U", "t", "b", "w", "P"]))
        shape = self.pick(CREATE_SHAPES)
        s = repr(shape) if len(shape) > 1 else f"{shape[0]}"
        kind = self.pick(["zeros", "ones", "empty", "full", "eye", "arange", "copy", "array", "padded",
                          "zeros_like", "expr"])
        out = []
        if kind == "zeros":
            text = f"np.zeros({s})"
        elif kind == "ones":
            text = f"np.ones({self.pick([s, 'x.shape', 'A.shape'])})"
        elif kind == "empty":
            text = f"np.empty({s})"
        elif kind == "full":
            text = f"np.full({s}, {self.pick(CONSTS)})"
        elif kind == "eye":
            text = self.pick(["np.eye(5, 6)", "np.eye(6)", "np.eye(6)[:5]", "np.eye(4)"])
        elif kind == "arange":
            text = self.pick(["np.arange(6).astype(float)", "np.arange(30.0).reshape(5, 6)", "np.arange(8) * 0.5",
                              "np.arange(30).astype(np.float64)", "np.arange(1.0, 7.0)"])
        elif kind == "padded":
            text = self.pick(["np.zeros((A.shape[0] + 2, A.shape[1] + 2))", "np.zeros(x.shape[0] + 2)",
                              "np.ones((A.shape[0] + 2, A.shape[1] + 2))"])
        elif kind == "zeros_like":
            text = f"np.{self.pick(['zeros_like', 'ones_like'])}({self.pick(self.arrays())})"
        elif kind in ("copy", "array"):
            src = self.pick(self.arrays())
            if self.chance(0.4):
                src = self.view_text(src) or src
            text = f"{src}.copy()" if kind == "copy" else self.pick([f"np.array({src})", f"np.copy({src})"])
        else:
            src = self.pick(self.arrays())
            text = self.expr(self.shadow(src).shape, 1) + " * 1.0"
        value = self.shadow(text)
        if not isinstance(value, np.ndarray):
            return []
        out.append(f"{ind}{name} = {text}")
        if kind == "empty":          # every element written before any read (the expression can't name it)
            out.append(f"{ind}{name}[{self.pick([':', '...'])}] = {self.expr(value.shape, 1)}")
        self.bind(name, text)
        self.locals.append(name)
        return out

    def view(self, ind):
        src = self.pick(self.locals if self.locals and self.chance(0.8) else self.arrays())
        v = self.view_text(src)
        if not v:
            return []
        name = self.fresh(self.pick(["u", "v", "row", "inner", "s"]))
        self.bind(name, v)
        self.views.append(name)
        return [f"{ind}{name} = {v}"]

    def target(self):
        """Where a write goes: mostly views and locals, sometimes arguments or container items."""
        pool = []
        pool += self.views * 3 + self.locals * 2 + ["x", "y", "A"] + [r for r in self.refs if "[" in r] * 2
        pool = [p for p in pool if isinstance(self.shadow(p), np.ndarray)]
        return self.pick(pool)

    def write(self, ind, in_loop=False):
        t = self.target()
        a = self.shadow(t)
        aug_ok = "[" not in t or t.startswith(tuple(self.lists))   # tuple items: p[0] += e raises
        r = self.rng.random()
        if r < 0.2:
            return [f"{ind}{t}[{self.pick([':', '...'])}] = {self.expr(a.shape)}"]
        if r < 0.4:
            op = self.pick(["+=", "-=", "*="])
            rhs = self.expr(a.shape) if op != "*=" else self.pick(["0.5", "-1.0", f"np.abs({self.term(a.shape)}) * 0.1"])
            return [f"{ind}{t} {op} {rhs}" if aug_ok else f"{ind}{t}[...] {op} {rhs}"]
        if r < 0.55:
            k = int(self.rng.integers(-a.shape[0], a.shape[0]))
            if in_loop and self.chance(0.5):
                k = f"i % {a.shape[0]}"
            sub = self.shadow(f"{t}[0]")
            return [f"{ind}{t}[{k}] {self.pick(['=', '+='])} {self.expr(sub.shape, 1)}"]
        if r < 0.6:        # out= of a ufunc, a reduction, a scan (the target may be an input too)
            other = self.pick([p for p in self.arrays() if self.shadow(p).shape == a.shape] or [t])
            if a.ndim == 2 and self.chance(0.3):
                v = self.view_text(t, lambda s: len(s) == 1 and s[0] == a.shape[1])
                if v and not v.endswith(")"):
                    return [f"{ind}np.{self.pick(['sum', 'max', 'mean'])}({other}, axis=0, out={v})"]
            return [f"{ind}np.{self.pick(['add', 'multiply', 'subtract', 'maximum'])}({other}, "
                    f"{self.term(a.shape)}, out={t}{'[...]' if '(' in t else ''})" if self.chance(0.7)
                    else f"{ind}np.cumsum({other}{'.ravel()' if a.ndim > 1 else ''}, out={t}.reshape(-1))"
                    if a.flags.c_contiguous else f"{ind}np.negative({other}, out={t})"]
        if r < 0.68:
            c = self.pick(["0.0", "1.0", "-0.5"])
            mask_src = self.pick([t] + [p for p in self.arrays() if self.shadow(p).shape == a.shape])
            return [f"{ind}{t}[{mask_src} {self.pick(['>', '<'])} {self.pick(['0.0', '1.0', '-1.0'])}] = {c}"]
        # a slice of the target gets an expression of its shape: A[1:-1] = B[2:] - B[:-2]
        v = self.view_text(t)
        if not v:
            return [f"{ind}{t}[...] = {self.expr(a.shape)}"]
        sub = self.shadow(v)
        if v.endswith(".T") or v.endswith(")"):          # t.T[...] = e, t.ravel()[...] = e
            return [f"{ind}{v}[...] {self.pick(['=', '+='])} {self.expr(sub.shape)}"]
        return [f"{ind}{v} {self.pick(['=', '=', '+=', '-='])} {self.expr(sub.shape)}"]

    def helper_call(self, ind):
        name = self.pick(list(HELPERS))
        kinds = HELPERS[name][1]
        args = []
        for k in kinds:
            if k == "s":
                args.append(self.pick(CONSTS[:5] + ["n * 0.5"]))
                continue
            if k == "pair":
                conts = [c for c in self.containers if self.shadow(f"{c}[0]").shape == self.shadow(f"{c}[1]").shape]
                if not conts:
                    return []
                args.append(self.pick(conts))
                continue
            if k == "same":
                shape = self.shadow(args[0]).shape
                args.append(self.term(shape))
                if args[-1] in CONSTS and name == "fill":
                    return []        # u[2:] of a float
                continue
            t = self.target()
            if k == "arr3" and self.shadow(t).shape[0] < 3:
                return []
            args.append(t)
        self.use_helper(name)
        call = f"{name}({', '.join(args)})"
        if name == "step" and self.chance(0.5):
            s = self.fresh("e")
            return [f"{ind}{s} = {call}"]
        return [f"{ind}{call}"]

    def use_helper(self, name):
        """Helpers are defined at module level or nested in the function (a helper another one
        calls, and the caller, at module level)."""
        for d in HELPER_DEPS.get(name, []):
            self.use_helper(d)
            self.helpers[d] = "module"
        if name not in self.helpers:
            self.helpers[name] = "nested" if self.chance(0.35) and name not in HELPER_DEPS else "module"

    def closure(self, ind):
        """A nested function writing into a local array it captures, called later."""
        if not self.locals:
            return []
        t = self.pick(self.locals)
        a = self.shadow(t)
        name = self.fresh("upd")
        body = self.pick([f"{t}[...] += 1.0", f"{t}[0] = {t}[-1]", f"{t}[...] *= 0.5",
                          f"{t}[1:] -= {t}[:-1]" if a.shape[0] > 1 else f"{t}[...] += 2.0"])
        self.closures.append(name)
        return [f"{ind}def {name}():", f"{ind}    {body}"]

    def container(self, ind):
        arrs = [r for r in self.arrays() if "[" not in r]
        if len(arrs) < 2:
            return []
        a = self.pick(arrs)
        same = [r for r in arrs if r != a and self.shadow(r).shape == self.shadow(a).shape]
        b = self.pick(same) if same and self.chance(0.7) else self.pick([r for r in arrs if r != a])
        name = self.fresh(self.pick(["p", "lst"]))
        text = f"({a}, {b})" if name.startswith("p") else f"[{a}, {b}]"
        self.env[name] = self.shadow(text)
        self.containers.append(name)
        if name.startswith("lst"):
            self.lists.append(name)
        self.refs += [f"{name}[0]", f"{name}[1]"]
        return [f"{ind}{name} = {text}"]

    def rebind(self, ind):
        """Inside a loop or branch: a name bound to an array computed anew from it (`t = np.where(t > 0.5,
        t * 0.5, t + e)`, `t = t * 0.5 + e`), after the body may have written into the array
        the name held (which array a write reaches then depends on the pass), or a masked
        update of the whole array from itself (`t[t > 0.5] = t[t > 0.5] * 0.5 + 1.0`)."""
        names = [r for r in self.locals + ["x", "y", "A"] if isinstance(self.shadow(r), np.ndarray)]
        if not names:
            return []
        t = self.pick(names)
        a = self.shadow(t)
        c = self.pick(["0.5", "0.0", "-0.5"])
        text = self.pick([f"np.where({t} > {c}, {t} * 0.5, {t} + {self.expr(a.shape, 1)})",
                          f"{t} * 0.5 + {self.expr(a.shape, 1)}", f"{self.pick(UNARY).format(t)} - 0.25"])
        if self.chance(0.3):
            m = f"{t} {self.pick(['>', '<'])} {c}"
            return [f"{ind}{t}[{m}] = {t}[{m}] * 0.5 + 1.0"]
        self.env[t] = self.shadow(text)
        return [f"{ind}{t} = {text}"]

    def simple(self, ind, in_loop=False):
        r = self.rng.random()
        if r < (0.12 if in_loop else 0.06):   # (in a branch: which array the name holds depends on it)
            return self.rebind(ind)
        if r < 0.45:
            return self.write(ind, in_loop)
        if r < 0.8 or not self.closures:
            return self.helper_call(ind)
        return [f"{ind}{self.pick(self.closures)}()"]

    def cond(self):
        ref = self.pick(self.arrays())
        a = self.shadow(ref)
        # a sum's threshold lies between the values' 0.01 grid: a sum that cancels exactly
        # (`(A[::-1] - A).sum()`) is 0 only up to rounding, which depends on summation order
        # (seed 7006 program 1022 took the other branch from NumPy over -4e-15 against 6e-16)
        return self.pick([f"{ref}.sum() > {self.pick(['0.005', '1.005', '-0.995'])}",
                          f"np.any({ref} > 2.0)", f"np.max({ref}) < 3.0",
                          f"{ref}[0] > 0.0" if a.ndim == 1 else f"{ref}[0, 0] > 0.0"])

    def block(self, ind, in_loop, size):
        out = []
        for _ in range(size):
            out += self.simple(ind, in_loop)
        return out or [f"{ind}pass"]

    def sweep(self, ind):
        """A loop along an axis of an array, each step computing a row (or column) from the one
        before (or after) it, through a temporary that may be read again after the write:
        `for i in range(1, t.shape[0]): tmp = f(t[i - 1]) + o[i]; t[i] = tmp * 0.5; o[i] -= tmp`."""
        cands = [r for r in self.locals + self.views + ["x", "A"]
                 if isinstance(self.shadow(r), np.ndarray) and self.shadow(r).ndim >= 1 and self.shadow(r).shape[0] >= 3]
        if not cands:
            return []
        t = self.pick(cands)
        a = self.shadow(t)
        axis = 1 if a.ndim == 2 and a.shape[1] >= 3 and self.chance(0.5) else 0
        at = (lambda ref, k: f"{ref}[{k}]") if axis == 0 else (lambda ref, k: f"{ref}[:, {k}]")
        row = self.shadow(at(t, 0))
        others = [r for r in self.arrays() if self.shadow(r).ndim == a.ndim
                  and self.shadow(r).shape[axis] == a.shape[axis] and np.shape(self.shadow(at(r, 0))) == np.shape(row)]
        forward = self.chance(0.6)
        head = (f"{ind}for i in range(1, {t}.shape[{axis}]):" if forward
                else f"{ind}for i in range({t}.shape[{axis}] - 2, -1, -1):")
        prev = "i - 1" if forward else "i + 1"
        tmp = self.fresh("tmp")
        body = [f"{ind}    {tmp} = {self.pick(UNARY).format(at(t, prev))} + {at(self.pick(others), 'i')}"]
        body.append(f"{ind}    {at(t, 'i')} {self.pick(['=', '+=', '-='])} {tmp} * 0.5")
        for _ in range(int(self.rng.integers(0, 3))):   # more writes, some where tmp read
            o = self.pick(others)
            body.append(f"{ind}    {at(o, self.pick(['i', 'i', prev]))} {self.pick(['=', '-='])} "
                        f"{tmp} - {at(t, self.pick([prev, 'i']))}")
        return [head] + body

    def statement(self, ind):
        r = self.rng.random()
        if r < 0.18:
            return self.create(ind)
        if r < 0.33:
            return self.view(ind)
        if r < 0.5:
            return self.write(ind)
        if r < 0.6:
            return self.helper_call(ind)
        if r < 0.72:
            head = self.pick([f"{ind}for i in range(n):", f"{ind}for i in range(n):", f"{ind}for i in range(3):"])
            return [head] + self.block(ind + "    ", True, int(self.rng.integers(1, 4)))
        if r < 0.78:
            return self.sweep(ind)
        if r < 0.86:
            out = [f"{ind}if {self.cond()}:"] + self.block(ind + "    ", False, int(self.rng.integers(1, 3)))
            if self.chance(0.5):
                out += [f"{ind}else:"] + self.block(ind + "    ", False, 1)
            return out
        if r < 0.92:
            return self.container(ind)
        return self.closure(ind)

    def returns(self):
        pool = self.views + self.locals
        r = self.rng.random()
        if not pool or r < 0.1:
            return "    return " + self.pick(["x.sum()", "A.sum() + y.sum()", "None"])
        if r < 0.3:
            return f"    return {self.pick(pool)}"
        if r < 0.45 and self.containers:
            return f"    return {self.pick(self.containers)}"
        items = [self.pick(pool) for _ in range(int(self.rng.integers(2, 4)))]
        if self.chance(0.3):
            items.append(f"{self.pick(pool)}.sum()")
        return f"    return {', '.join(items)}"

    def program(self) -> Program:
        mode = self.pick(MODES)
        n = int(self.rng.integers(0, 4))
        seed = int(self.rng.integers(1 << 30))
        owners, (x, y, A, _) = Program("", mode, n, seed).args()
        self.env = {"x": np.zeros(x.shape), "y": np.zeros(y.shape), "A": np.zeros(A.shape), "n": n}
        self.refs = ["x", "y", "A"]
        self.locals, self.views, self.containers, self.lists, self.closures = [], [], [], [], []
        self.helpers = {}
        self.count = 0
        body = []
        for _ in range(int(self.rng.integers(1, 3))):
            body += self.create("    ")
        for _ in range(int(self.rng.integers(3, 9))):
            body += self.statement("    ")
        body.append(self.returns())
        module, nested = [], []
        for h, where in self.helpers.items():
            src = HELPERS[h][0]
            if where == "module":
                module += [src, ""]
            else:
                nested += ["    " + line for line in src.rstrip("\n").split("\n")]
        text = "\n".join(["import numpy as np", "", ""] + module + ["", "def fuzzed(x, y, A, n):"] + nested + body) + "\n"
        return Program(text, mode, n, seed, list(self.helpers))


# ------------------------------------------------------------------------------ running one program
CLASSES = ["agree", "refused", "raised", "MISMATCH", "ALIAS", "internal", "iree", "native"]


@dataclass
class Outcome:
    kind: str            # one of CLASSES ("native": right, but IREE failed on a native loop first)
    detail: str = ""     # first line of the refusal, the mismatch, the error

    @property
    def signature(self):
        """For deduplication: the class and the detail with names, numbers and values blurred."""
        d = self.detail.split("\n")[0]
        d = re.sub(r"/\S+\.py:\d+:\d+: ", "", d)
        d = re.sub(r"at \[.*", "", d)
        d = re.sub(r"-?\d+(\.\d+)?(e-?\d+)?", "N", d)
        d = re.sub(r"'[A-Za-z_]+\d+'", "'NAME'", d)
        return f"{self.kind}: {d[:100]}"


def _arrays_in(value):
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in _arrays_in(v)]
    return []


def sharing(value):
    """Which pairs of result arrays share memory (NumPy's answer to `is this the same data`)."""
    arrays = _arrays_in(value)
    return {(i, j) for i in range(len(arrays)) for j in range(i + 1, len(arrays))
            if np.shares_memory(arrays[i], arrays[j])}


LARGEST_ARRAY = 56   # elements: the biggest array a generated program makes (7 x 8)


def _summed_magnitude_bound(tree) -> float:
    """The largest finite float magnitude in `tree` (at least 1), times LARGEST_ARRAY."""
    if isinstance(tree, (list, tuple)):
        return max((_summed_magnitude_bound(t) for t in tree), default=LARGEST_ARRAY)
    if isinstance(tree, dict):
        return _summed_magnitude_bound(list(tree.values()))
    a = np.asarray(tree) if isinstance(tree, (np.ndarray, np.generic, float)) else np.zeros(0)
    if a.dtype.kind not in "fc":
        return LARGEST_ARRAY
    with np.errstate(invalid="ignore"):
        finite = np.abs(a[np.isfinite(a)])
    return max(1.0, float(finite.max(initial=0.0))) * LARGEST_ARRAY


# --dynamic: every program compiled with run-time sizes (@jit(dynamic=True)) where it can be, and
# checked at the sizes it was compiled for (a refusal is a located "can't compile with run-time sizes")
DYNAMIC = False


def run_program(prog: Program, directory: Path, name: str, jitted=None) -> Outcome:
    fn = load_source(prog.text, directory, name)
    np_owners, np_args = prog.args()
    try:
        with np.errstate(all="ignore"):
            want = fn(*np_args)
        numpy_error = None
    except Exception as e:
        want, numpy_error = None, e
    jit_owners, jit_args = prog.args()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", NativeLoopWarning)
            got = (jitted or pyjitc.jit(fn, dynamic=True if DYNAMIC else None))(*jit_args)
    except pyjitc.RunError as e:
        if numpy_error is not None:
            return Outcome("raised", f"{type(numpy_error).__name__} / RunError")
        return Outcome("MISMATCH", f"pyjitc raised RunError where NumPy did not: {str(e).splitlines()[0]}")
    except pyjitc.CompileError as e:
        lines = str(e).splitlines()
        why = [l.strip() for l in lines if re.search(r"error:|Error code|Assertion", l)][:2]
        why += [re.sub(r"^#\d+ 0x[0-9a-f]+ ", "", l.strip())[:120] for l in lines if "OpConversion" in l][:1]
        return Outcome("iree", " | ".join([lines[0][:200]] + why))
    except pyjitc.JitError as e:
        if e.span is None or "internal" in e.message:
            return Outcome("internal", f"{type(e).__name__}: {e}")
        if numpy_error is not None:
            return Outcome("raised", f"{type(numpy_error).__name__} / {type(e).__name__}: {e.message}")
        return Outcome("refused", f"{type(e).__name__}: {e.message}")
    except Exception as e:
        if "Error invoking function" in str(e):   # IREE's runtime refused the compiled program: an IREE failure
            return Outcome("iree", f"run time: {type(e).__name__}: {str(e).splitlines()[0][:300]}")
        return Outcome("internal", f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
    if numpy_error is not None:
        return Outcome("MISMATCH", f"NumPy raised {type(numpy_error).__name__}: {numpy_error}; pyjitc returned {got!r}")
    w, g = _documented(want, got, zero_trip=prog.n == 0)
    # a sum that cancels (`(u[2:] - u[:-2]).sum()`) is exact in neither; its rounding error is
    # bounded by the summed magnitude (README, "Numerical agreement"), which is at most the
    # program's largest value times the largest array's size
    scale = _summed_magnitude_bound([want, list(np_owners.values())])
    try:
        assert_same(g, w, accumulate=True, scale=scale)
        for k in np_owners:
            assert_same(jit_owners[k], np_owners[k], accumulate=True, scale=scale,
                        path=f"argument array {k} after the call")
    except AssertionError as e:
        return Outcome("MISMATCH", str(e))
    sw, sg = sharing(want), sharing(got)
    if sw != sg:
        return Outcome("ALIAS", f"result arrays sharing memory: NumPy {sorted(sw)}, pyjitc {sorted(sg)}")
    native = [w for w in caught if issubclass(w.category, NativeLoopWarning)]
    if native:     # the answer is right, but IREE failed on the native loop (a bug, hidden by the fallback)
        message = str(native[0].message)
        return Outcome("native", message[message.find("IREE could not"):][:300])
    return Outcome("agree")


_NAMES = itertools.count()     # module files are never reused: linecache and pyjitc key on the path


def _empty_written(lines):
    """Each `name = np.empty(...)` is followed at once by a write of all of it."""
    for k, line in enumerate(lines):
        m = re.match(r"\s*(\w+) = np\.empty\(", line)
        if m and not (k + 1 < len(lines) and re.match(rf"\s*{m.group(1)}\[(:|\.\.\.)\] = ", lines[k + 1])):
            return False
    return True


def minimize(prog: Program, outcome: Outcome, directory: Path) -> Program:
    """Delete statements (single lines, then whole blocks) while the failure keeps its signature."""
    lines = prog.text.split("\n")
    tries = 0
    changed = True
    while changed and tries < 200:
        changed = False
        start = lines.index("def fuzzed(x, y, A, n):") + 1
        i = len(lines) - 1
        while i >= 0:
            line = lines[i]
            if not line.strip() or line.startswith(("import", "def fuzzed")) or line.strip().startswith("return") and i >= start:
                i -= 1
                continue
            # the line and its indented block (a def, for, if, else)
            j = i + 1
            indent = len(line) - len(line.lstrip())
            while j < len(lines) and lines[j].strip() and len(lines[j]) - len(lines[j].lstrip()) > indent:
                j += 1
            candidate = lines[:i] + lines[j:]
            if not _empty_written(candidate):
                i -= 1
                continue
            cand = Program("\n".join(candidate), prog.mode, prog.n, prog.seed)
            tries += 1
            try:
                compile(cand.text, "<min>", "exec")
                o = run_program(cand, directory, f"min_{next(_NAMES)}")
            except Exception:
                o = None
            if o is not None and o.signature == outcome.signature:
                lines = candidate
                changed = True
            i -= 1
    # simpler call: independent arguments, if that keeps it
    out = Program("\n".join(lines), prog.mode, prog.n, prog.seed)
    if prog.mode != "indep":
        alt = Program(out.text, "indep", prog.n, prog.seed)
        if run_program(alt, directory, f"min_{next(_NAMES)}").signature == outcome.signature:
            out = alt
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=0, help="stop after this many programs (0: only the time limit)")
    ap.add_argument("--minimize", action="store_true", help="shrink the first program of each failure pattern (with --show: that program)")
    ap.add_argument("--quiet-refusals", action="store_true")
    ap.add_argument("--show", type=int, default=0, help="print program SHOW of this seed (1-based) and run it")
    ap.add_argument("--dynamic", action="store_true", help="compile with run-time sizes (@jit(dynamic=True))")
    a = ap.parse_args()
    global DYNAMIC
    DYNAMIC = a.dynamic
    pyjitc.set_cache_dir(None)      # every program is new: no point filling the disk cache
    gen = Gen(np.random.default_rng(a.seed))
    if a.show:
        for _ in range(a.show):
            prog = gen.program()
        print(f"{prog.text}{prog.describe()}")
        with tempfile.TemporaryDirectory() as d:
            outcome = run_program(prog, Path(d), "shown")
            print(f"{outcome.kind}: {outcome.detail}")
            if a.minimize and outcome.kind not in ("agree", "refused", "raised"):
                small = minimize(prog, outcome, Path(d))
                print(f"\n--- minimized ---\n{small.text}{small.describe()}")
        return 0
    deadline = time.time() + a.minutes * 60
    counts = dict.fromkeys(CLASSES, 0)
    patterns: dict[str, list] = {}
    refusals: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as d:
        i = 0
        while time.time() < deadline and (not a.count or i < a.count):
            prog = gen.program()
            try:
                outcome = run_program(prog, Path(d), f"prog_{i}")
            except KeyboardInterrupt:   # Ctrl-C (or SIGINT): the summary of what ran
                break
            i += 1
            counts[outcome.kind] += 1
            if outcome.kind == "refused":
                first = outcome.detail.splitlines()[0]
                refusals[first[:90]] = refusals.get(first[:90], 0) + 1
                if not a.quiet_refusals:
                    print(f"refused (program {i}): {first}", flush=True)
            elif outcome.kind not in ("agree", "raised"):
                new = outcome.signature not in patterns
                patterns.setdefault(outcome.signature, []).append(i)
                print(f"--- {outcome.kind}: program {i} (seed {a.seed}) ---\n{prog.text}{prog.describe()}\n"
                      f"{outcome.detail}\n", flush=True)
                if a.minimize and new:
                    small = minimize(prog, outcome, Path(d))
                    print(f"--- minimized ---\n{small.text}{small.describe()}\n", flush=True)
    print(f"\n{i} programs (seed {a.seed}): {counts['agree']} agree, {counts['refused']} refused, "
          f"{counts['raised']} raised as NumPy did, {counts['MISMATCH']} mismatches, {counts['ALIAS']} result-aliasing "
          f"differences, {counts['internal']} internal, {counts['iree']} iree failures, "
          f"{counts['native']} native-loop fallbacks")
    if refusals:
        print("refusals:")
        for k, v in sorted(refusals.items(), key=lambda kv: -kv[1])[:15]:
            print(f"  {v:4d} x {k}")
    if patterns:
        print("failure patterns (programs):")
        for k, v in sorted(patterns.items(), key=lambda kv: -len(kv[1])):
            print(f"  {len(v):4d} x {k}   e.g. program {v[0]}")
    return 1 if any(counts[k] for k in ("MISMATCH", "ALIAS", "internal", "iree", "native")) else 0


if __name__ == "__main__":
    sys.exit(main())
