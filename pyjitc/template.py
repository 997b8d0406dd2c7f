"""template: what a compiled executable is specialised on. Each argument becomes a spec:
an array's shape and dtype, a Python scalar's type (a run-time, weakly typed value), or a
static value. The tuple of specs is the cache key."""
from __future__ import annotations

import operator
import re
import types
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import tree
from .errors import ArgumentError
from .ir import dims
from .ir.dims import Dim
from .ir.types import SUPPORTED_DTYPES, TensorType, as_dtype, dtype_from_short, short_name


@dataclass(frozen=True)
class Template:
    """An array argument's shape and dtype, without data: `Template((1000, 5), np.float32)`,
    or `Template.parse("f32[1000,5]")`."""
    shape: tuple[int, ...]
    dtype: np.dtype
    scalar: bool = False    # a NumPy scalar (np.float64(2.5)): immutable, `x += 1` rebinds x

    def __init__(self, shape, dtype=np.float32, scalar=False):
        if isinstance(shape, (int, str, Dim)):
            shape = (shape,)
        object.__setattr__(self, "shape", tuple(_dimension(d) for d in shape))
        object.__setattr__(self, "scalar", bool(scalar) and self.shape == ())
        try:
            object.__setattr__(self, "dtype", as_dtype(dtype))
        except TypeError as e:
            raise ArgumentError(str(e)) from None

    _PATTERN = re.compile(r"^\s*([a-z]+\d*)\s*(?:\[\s*([\w\s,?]*)\])?\s*$")

    @classmethod
    def parse(cls, text: str) -> "Template":
        """`f32[1000,1000,5]`, `i64[]`, `bool[3]`: dtype short name, then the shape. A dimension
        may be a name (`f32[n,5]`: any size, the same wherever the name is) or `?` (any size).
        The short name alone (`f64`) is a NumPy scalar (np.float64), `f64[]` a 0-d array."""
        m = cls._PATTERN.match(text)
        if not m:
            raise ArgumentError(f"can't read the template {text!r}; write it like f32[1000,5], i64[] or bool[3]")
        dims = [d for d in (m.group(2) or "").replace(" ", "").split(",") if d]
        try:
            dtype = dtype_from_short(m.group(1))
        except TypeError as e:
            raise ArgumentError(f"template {text!r}: {e}") from None
        return cls(tuple(int(d) if d.isdigit() else d for d in dims), dtype, scalar=m.group(2) is None)

    def __str__(self) -> str:
        if self.scalar:
            return short_name(self.dtype)
        return f"{short_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    @property
    def tensor_type(self) -> TensorType:
        return TensorType(self.shape, self.dtype)


def _dimension(d):
    """A template's dimension: an int, a symbolic Dim, or a name / `?` for one."""
    if isinstance(d, Dim):
        return d
    if isinstance(d, str):
        if d == "?":
            return dims.fresh()
        if not d.isidentifier():
            raise ArgumentError(f"a symbolic dimension is a name or '?', not {d!r}")
        return Dim.symbol(d)
    try:
        n = operator.index(d)
    except TypeError:
        raise ArgumentError(f"a dimension is an int, a name or '?', not {d!r}") from None
    if n < 0:
        raise ArgumentError(f"negative dimension {n}")
    return n


# Python scalars passed at run time, and the dtype each computes in (weakly typed, NEP 50).
PY_SCALAR_DTYPES = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float64),
                    complex: np.dtype(np.complex128)}
PY_SCALAR_NAMES = {t.__name__: t for t in PY_SCALAR_DTYPES}


@dataclass(frozen=True)
class ScalarSpec:
    """A Python bool/int/float/complex passed at run time: a 0-d weakly typed value (NEP 50)."""
    pytype: type

    @property
    def tensor_type(self) -> TensorType:
        return TensorType((), PY_SCALAR_DTYPES[self.pytype])

    def __str__(self) -> str:
        return self.pytype.__name__


@dataclass(frozen=True)
class StaticSpec:
    """A value fixed at compile time; part of the cache key (with its type: 3, 3.0 and True
    compile differently)."""
    value: Any

    def __str__(self) -> str:
        return f"static {self.value!r}"

    def __eq__(self, other) -> bool:
        return isinstance(other, StaticSpec) and static_identity(self.value) == static_identity(other.value)

    def __hash__(self) -> int:
        return hash(static_identity(self.value))


def is_function(value) -> bool:
    """A Python function, builtin or NumPy ufunc: an argument holding one is static."""
    return isinstance(value, (types.FunctionType, types.BuiltinFunctionType, np.ufunc))


def function_name(value) -> str:
    """Where a function passed as a static argument is defined: how a saved .vmfb names it."""
    return f"{getattr(value, '__module__', None) or 'numpy'}.{getattr(value, '__qualname__', value.__name__)}"


class FunctionName(str):
    """A function a saved .vmfb was compiled with, read back by name: equal to each function of
    that name (its object is not saved)."""

    def __eq__(self, other):
        return function_name(other) == str(self) if is_function(other) else str.__eq__(self, other)

    def __ne__(self, other):
        return not self == other

    __hash__ = str.__hash__


def static_identity(value):
    """A static value as the cache tells it apart: its type beside its value, through containers
    (3 == 3.0 == np.int64(3) == True in Python, but each gives NumPy another result dtype; a cache
    keyed by value alone returned int16 for `x * 3.0` after `x * 3`)."""
    if isinstance(value, (tuple, list)):
        return type(value), tuple(static_identity(v) for v in value)
    if isinstance(value, dict):
        return dict, tuple((static_identity(k), static_identity(v)) for k, v in value.items())
    return type(value), value


@dataclass(frozen=True)
class TreeSpec:
    """A tuple, list or dict argument holding arrays: its structure and each leaf's spec (a
    leaf is an array, a scalar, or a static value such as a nested container without arrays)."""
    treedef: tree.TreeDef
    specs: tuple

    def __str__(self) -> str:
        return self.treedef.show(self.specs)

    def build(self, items):
        return self.treedef.unflatten(items)

    def leaves(self) -> list[tuple[tuple, Any]]:
        """(key path, spec) of each leaf."""
        return list(zip(self.treedef.paths(), self.specs))


def bind_by_name(fname: str, names: list[str], args, kwargs, defaults: dict | None = None) -> dict:
    """Python's binding of positional and keyword arguments to parameter names (no *args/**kwargs)."""
    if len(args) > len(names):
        raise ArgumentError(f"{fname}() takes {len(names)} arguments but {len(args)} were given")
    values = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names or k in values:
            raise ArgumentError(f"{fname}() got an unexpected or repeated argument {k!r}")
        values[k] = v
    for k, v in (defaults or {}).items():
        values.setdefault(k, v)
    missing = [n for n in names if n not in values]
    if missing:
        raise ArgumentError(f"{fname}() is missing arguments: {', '.join(missing)}")
    return values


def leaves(path: tuple, spec) -> list[tuple[tuple, Any]]:
    """(path, spec) of each run-time leaf: path is (argument name, key, key, ...)."""
    items = spec.leaves() if isinstance(spec, TreeSpec) else [((), spec)]
    return [(path + p, s) for p, s in items if not isinstance(s, StaticSpec)]


def at_path(values: dict, path: tuple):
    value = values[path[0]]
    for k in path[1:]:
        value = value[k]
    return value


def path_name(path: tuple) -> str:
    return path[0] + "".join(f"[{k!r}]" for k in path[1:])


def _has_array(value) -> bool:
    return any(isinstance(v, (np.ndarray, np.generic, Template)) for v in tree.leaves(value))


def spec_of(name: str, value, static: bool):
    """The spec of one call-time argument. Raises ArgumentError naming the argument."""
    if isinstance(value, Template):
        return value
    if not static and (isinstance(value, (list, dict)) or isinstance(value, tuple) and _has_array(value)):
        # containers: arrays inside are run-time inputs; other items are static (part of the key)
        items, treedef = tree.flatten_with_paths(value, is_leaf=lambda v: v is not value and not _has_array(v))
        for path, node in treedef.nodes():
            if node.kind is dict and not all(isinstance(k, (str, int)) for k in node.keys):
                raise ArgumentError(f"argument {path_name((name,) + path)!r}: dict keys must be strings or integers")
        return TreeSpec(treedef, tuple(spec_of(path_name((name,) + p), v, not _has_array(v)) for p, v in items))
    if static:
        try:
            hash(value)
        except TypeError:
            raise ArgumentError(f"argument {name!r} is static but {type(value).__name__} values aren't hashable"
                                + ("; pass a tuple (tuple(a.tolist()))" if isinstance(value, (np.ndarray, list)) else "")) from None
        return StaticSpec(value)
    if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
        return ScalarSpec(type(value) if type(value) in PY_SCALAR_DTYPES else
                          complex if isinstance(value, complex) else float)
    if isinstance(value, (np.ndarray, np.generic)):
        if value.dtype.newbyteorder("=") not in SUPPORTED_DTYPES:
            raise ArgumentError(f"argument {name!r} has dtype {value.dtype}, which pyjitc does not support "
                                f"(supported: {', '.join(d.name for d in SUPPORTED_DTYPES)})")
        return Template(value.shape, value.dtype.newbyteorder("="), scalar=isinstance(value, np.generic))
    if value is None or isinstance(value, (str, bytes, np.dtype, type, tuple)) and _hashable(value):
        return StaticSpec(value)
    if is_function(value):   # `def solve(y0, rhs=decay)`, `h=np.sin`: compiled into the program
        return StaticSpec(value)
    raise ArgumentError(f"argument {name!r} has type {type(value).__name__}; pass a NumPy array, a Python scalar, "
                        f"or mark it static with @jit(static_argnames=...)")


def _hashable(v) -> bool:
    try:
        hash(v)
        return True
    except TypeError:
        return False
