"""registry: the one list of what compiled code can call: NumPy functions, ndarray methods and
attributes, Python builtins. Each name is registered once, with what it means for complex numbers
and a note for users. policy.py (the whitelist), doc.py (the generated table) and the completeness
tests read it; the implementations live in frontend/numpy/, by topic."""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import tree
from ..errors import NotSupportedError
from ..ir.types import is_complex
from .values import Traced


@dataclass(frozen=True)
class Entry:
    """One registered name. kind: "function" ("numpy.exp"), "method" (an ndarray method name),
    "attribute" (an ndarray attribute, computed on access) or "builtin" (a Python builtin's name).
    complex_ok: the implementation handles complex values (all others refuse them, tested by
    tests/test_complex.py); note: what a user should know (the generated table shows it)."""
    kind: str
    name: str
    impl: Callable
    complex_ok: bool = False
    note: str = ""


ENTRIES: dict[tuple[str, str], Entry] = {}   # (kind, name) -> Entry
# The lookup tables the compiler reads, written only by register():
FUNCTIONS: dict[str, Callable] = {}   # "numpy.exp" -> impl(em, *args, **kwargs)
METHODS: dict[str, Callable] = {}     # ndarray method name -> impl(em, self, *args, **kwargs)
PROPERTIES: dict[str, Callable] = {}  # ndarray attribute -> impl(em, self)
BUILTINS: dict[str, Callable] = {}    # Python builtin name -> impl(em, *args, **kwargs)
_TABLES = {"function": FUNCTIONS, "method": METHODS, "attribute": PROPERTIES, "builtin": BUILTINS}
_COMPLEX_OK_IMPLS: set[Callable] = set()   # the implementations that handle complex values


def _names(names) -> tuple[str, ...]:
    return (names,) if isinstance(names, str) else tuple(names)


def _where(impl) -> str:
    code = getattr(impl, "__code__", None)
    line = f" (line {code.co_firstlineno})" if code is not None else ""
    return f"{getattr(impl, '__module__', '?')}.{getattr(impl, '__qualname__', impl)}{line}"


def register(*names: str, method: str | tuple = (), builtin: str | tuple = (), attribute: str | tuple = (),
             complex_ok: bool = False, note: str = "", views: bool | str = False):
    """Register one implementation under NumPy names (and as ndarray methods, attributes, builtins).
    Works as a decorator, or on a lambda: register("numpy.fliplr")(lambda em, m: flip(em, m, 1)).
    A name registered twice is an error at import time, naming both implementations.
    views: NumPy may return an argument itself or a view of it (reshape, transpose, asarray);
    "copy": only where its `copy` argument is not True (np.array, astype). Any other function's
    result never shares an argument's memory (`fresh_results`)."""
    wanted = [(kind, n) for kind, group in (("function", names), ("method", method), ("attribute", attribute),
                                            ("builtin", builtin)) for n in _names(group)]

    def deco(impl):
        for key in wanted:
            if key in ENTRIES:
                raise ValueError(f"register: {key[0]} {key[1]!r} is registered twice: by "
                                 f"{_where(ENTRIES[key].impl)} and by {_where(impl)}")
        for kind, name in wanted:
            ENTRIES[kind, name] = Entry(kind, name, impl, complex_ok, note)
            _TABLES[kind][name] = impl
        if complex_ok:
            _COMPLEX_OK_IMPLS.add(impl)
        if views or any(kind == "builtin" for kind, _ in wanted):   # (a builtin's result is Python's: `sorted`)
            _VIEWS[impl] = views or True
        return impl
    return deco


_VIEWS: dict[Callable, bool | str] = {}   # register(views=...), and builtins


def fresh_results(impl, em, args, kwargs, out):
    """`out` of a registered function or method, with every array in it that shares an argument's
    memory (the argument itself, or a view of it) replaced by a copy, unless NumPy returns views
    there (register(views=...)) or the call writes into `out=`: np.concatenate([a]),
    np.pad(a, 0), np.cumsum along a length-1 axis returned `a`, so writes into the result
    reached the argument (the caller's array too)."""
    views = _VIEWS.get(impl, False)
    if views == "copy":
        try:
            bound = inspect.signature(impl).bind(em, *args, **kwargs)
        except (TypeError, ValueError):
            views = False
        else:
            bound.apply_defaults()
            views = bound.arguments["copy"] is not True
    if views or "out" in kwargs:
        return out
    inputs = {id(a.root) for a in tree.leaves((args, kwargs)) if isinstance(a, Traced)}
    if not inputs or not any(isinstance(v, Traced) and id(v.root) in inputs for v in tree.leaves(out)):
        return out
    leaves, treedef = tree.flatten(out)
    return treedef.unflatten([Traced(v.value, v.weak, v.params) if isinstance(v, Traced) and id(v.root) in inputs
                              else v for v in leaves])


def wrap(kind: str, name: str, wrapper: Callable[[Callable], Callable]) -> None:
    """Replace a registered implementation by wrapper(impl) (autodiff's linalg recorders): the
    table, the Entry and the complex flag together, so that they stay one registry."""
    entry = ENTRIES[kind, name]
    impl = wrapper(entry.impl)
    ENTRIES[kind, name] = Entry(entry.kind, entry.name, impl, entry.complex_ok, entry.note)
    _TABLES[kind][name] = impl
    if entry.complex_ok:
        _COMPLEX_OK_IMPLS.add(impl)
    if entry.impl in _VIEWS:
        _VIEWS[impl] = _VIEWS[entry.impl]


def complex_ok_names(kind: str) -> list[str]:
    """The names of one kind whose implementation handles complex values."""
    return [e.name for e in ENTRIES.values() if e.kind == kind and e.complex_ok]


# ---------------------------------------------------------------- complex numbers: deny by default

def _complex_value(v) -> bool:
    if isinstance(v, Traced):
        return is_complex(v.dtype)
    if isinstance(v, (list, tuple)):
        return any(_complex_value(x) for x in v)
    if isinstance(v, complex):
        return True
    if isinstance(v, (np.ndarray, np.generic)):
        return v.dtype.kind == "c"
    if isinstance(v, (type, np.dtype)):
        try:
            return np.dtype(v).kind == "c"
        except TypeError:
            return False
    return False


def refuse_complex(impl, shown: str, args, kwargs) -> None:
    """Raise the located 'not supported' error for a call that involves complex numbers and whose
    implementation was not registered with complex_ok (deny by default)."""
    if impl in _COMPLEX_OK_IMPLS:
        return
    dtype = kwargs.get("dtype")
    if isinstance(dtype, str):
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            pass
    if any(_complex_value(v) for v in (*args, *kwargs.values(), dtype)):
        raise NotSupportedError(f"{shown} is not supported on complex numbers yet",
                                hint="work on the real and imaginary parts (np.real, np.imag) separately")
