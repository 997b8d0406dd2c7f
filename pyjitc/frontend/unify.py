"""unify: the one type a value has on several paths (the branches of an `if`, a loop's entry and
its body), as NumPy would see it; the values that have none."""
from __future__ import annotations

import numpy as np

from ..errors import JitError
from ..ir.types import SUPPORTED_DTYPES, short_name
from .values import Traced

MISSING = object()   # a name not bound on a path


class Undefined:
    """A name assigned on only some paths; using it is an error."""

    def __init__(self, name: str, where: str):
        self.name, self.where = name, where

    def error(self) -> JitError:
        return JitError(f"'{self.name}' is assigned on only some paths ({self.where}), so it may be undefined here",
                        hint="assign it before the if/loop")


class Deleted(Undefined):
    """A name unbound by `del`; using it is Python's UnboundLocalError."""

    def __init__(self, name: str):
        super().__init__(name, "deleted with `del`")

    def error(self) -> JitError:
        return JitError(f"UnboundLocalError: cannot access local variable '{self.name}' where it is not associated "
                        "with a value (it was deleted with `del`)")


class MergeError(JitError):
    """A value that would have different types on two paths (`name`: the variable, if one)."""

    def __init__(self, message, span=None, hint=None, name=None):
        super().__init__(message, span, hint)
        self.name = name


class TypeOnly:
    """A stand-in carrying only a leaf type, for folding unify over many paths."""

    def __init__(self, t):
        self.shape, self.dtype, self.weak = t


def _leaf_type(x):
    """(shape, dtype, weak) of a value that can live in a region result; None if it can't."""
    if isinstance(x, TypeOnly):
        return x.shape, x.dtype, x.weak
    if isinstance(x, Traced):
        return x.shape, x.dtype, x.weak
    if type(x) is bool:
        return (), np.dtype(np.bool_), bool
    if type(x) is int:
        return ((), np.dtype(np.int64), int) if -2**63 <= x < 2**63 else None
    if type(x) is float:
        return (), np.dtype(np.float64), float
    if type(x) is complex:
        return (), np.dtype(np.complex128), complex
    if isinstance(x, (np.generic, np.ndarray)) and x.dtype in SUPPORTED_DTYPES:
        return x.shape, x.dtype, None
    return None


def _describe(t) -> str:
    shape, dtype, weak = t
    return f"Python {weak.__name__}" if weak else f"{short_name(dtype)}[{','.join(map(str, shape))}]"


_KIND_ORDER = {bool: 0, int: 1, float: 2, complex: 3}


def unify(a, b, name: str, cross_kind: bool = False):
    """The one type a value has on both paths, or a MergeError. A Python scalar (weak, NEP 50)
    meeting an array scalar of the same kind (int and int32, float and float32) takes that dtype;
    of another kind (int and float64) only where `cross_kind` (loops: the Python scalar survives
    only if the loop runs zero times; a branch would give NumPy's two types at random)."""
    ta, tb = _leaf_type(a), _leaf_type(b)
    if ta is None or tb is None:
        bad = a if ta is None else b
        raise MergeError(f"'{name}' holds a {type(bad).__name__}, which can't change at run time",
                         hint="make the condition or loop bound a compile-time value")
    if ta[0] != tb[0] or (ta[1] != tb[1] and not (ta[2] or tb[2])):
        hint = "give it the same shape and dtype on every path (e.g. with .astype)"
        if ta[0] != tb[0] and len(ta[0]) == len(tb[0]) == 1 and name.startswith("return value"):
            # (`return out[:k]` inside a loop or branch: a length known only at run time)
            hint = ("a slice whose length is known only at run time is returned from the function's top level: "
                    "leave the loop with `break` (or set a flag) and `return out[:k]` after it")
        elif ta[0] != tb[0] and len(ta[0]) == len(tb[0]) == 1:   # (`out = np.append(out, i)` under an if)
            hint = ("a length that depends on a run-time condition: fill a preallocated array and count "
                    "(out[k] = v; k += 1, then out[:k]), or append to a list and make it an array after the loop")
        raise MergeError(f"'{name}' changes type: {_describe(ta)} on one path, {_describe(tb)} on the other",
                         hint=hint, name=name)
    if ta[1] == tb[1]:
        return ta[0], ta[1], ta[2] if ta[2] == tb[2] else None
    if ta[2] and tb[2]:   # two Python scalar types: only a loop may raise the entry's kind
        if _KIND_ORDER[tb[2]] < _KIND_ORDER[ta[2]] or not cross_kind:
            raise MergeError(f"'{name}' changes type: {_describe(ta)} on one path, {_describe(tb)} on the other",
                             hint="give it the same type on every path (e.g. 0.0 instead of 0)", name=name)
        return tb
    weak, strong = (ta, tb) if ta[2] else (tb, ta)
    same_kind = np.dtype(weak[1]).kind == strong[1].kind or (weak[2] is int and strong[1].kind in "iu")
    # in a loop, `a` is the value on entry and `b` after the body: a Python scalar on entry that the
    # body makes a NumPy scalar differs from NumPy only when the loop runs zero times
    cross_ok = cross_kind and weak is ta
    if np.result_type(strong[1], weak[2](0)) != strong[1] or not (same_kind or cross_ok):
        raise MergeError(f"'{name}' changes type: {_describe(ta)} on one path, {_describe(tb)} on the other",
                         hint="give it the same type on every path (e.g. np.float64(0) instead of 0)", name=name)
    return strong[0], strong[1], None


def _same_static(a, b) -> bool:
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _join(params_list):
    out = frozenset()
    for p in params_list:
        if p is None:
            return None
        out |= p
    return out


def _params_of(x):
    return x.params if isinstance(x, Traced) else frozenset()
