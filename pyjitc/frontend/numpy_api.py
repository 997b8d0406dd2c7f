"""numpy_api: the NumPy functions, array methods and Python builtins that pyjitc implements.
Each entry maps NumPy's semantics (dtype from NumPy's own type resolution, NEP 50 weak Python
scalars, broadcasting, axis rules) onto the typed IR's primitives. The whitelist (policy.py)
reads FUNCTIONS/METHODS/BUILTINS to know what is implemented: there is no second list."""
from __future__ import annotations

import functools
import operator
import types
from typing import Any, Callable

import numpy as np

from ..errors import JitError, NotSupportedError, ShapeError, ForbiddenError
from ..ir.graph import Builder, Value
from ..ir.ops import OPS
from ..ir.types import TensorType, as_dtype, is_bool, is_complex, is_int, real_dtype, SUPPORTED_DTYPES
from ..program import FAST_TRIG_RETRY, view_of

PY_SCALARS = (bool, int, float, complex)


def is_py_scalar(x) -> bool:
    """A Python bool/int/float/complex (weak, NEP 50). np.float64 subclasses float but is strong."""
    return type(x) in PY_SCALARS


class Traced:
    """An array inside the function being compiled: an IR value plus what NumPy needs to know.
    `weak` is the Python type (int/float/bool) of a weakly typed value (a Python scalar argument),
    `params` the scalar arguments (or loop markers) it was computed from (None when it depends on
    array data), which is what lets the compiler make such a value static when it is needed.
    `view` is set when NumPy would return a view of another array: the value is then recomputed
    from its base when the base changes, and writes through the view go to the base.
    An array whose contents are known at compile time (np.zeros(n), a folded expression) is a
    Traced too, with one identity like any other array: `const` holds its contents for as long as
    its value is the constant it was made from (a write makes it a run-time value for every alias).
    `frozen` names why the array can't be written (a module-level constant), or is None."""
    __slots__ = ("_value", "weak", "params", "view", "_const", "_const_of", "frozen")

    def __init__(self, value: Value, weak=None, params=None, view=None):
        self._value = value
        self.weak = weak
        self.params = params
        self.view = view
        self._const = self._const_of = self.frozen = None

    @property
    def const(self) -> np.ndarray | None:
        """The contents, where they are known at compile time (a read-only NumPy array)."""
        if self.view is not None:
            base = self.view.base.const
            if base is None or self.view.recipe is None:
                return None
            return view_of(self.view.recipe, base)
        return self._const if self._value is self._const_of and self._const_of is not None else None

    @property
    def value(self) -> Value:
        v = self.view
        if v is not None:
            base = v.base.value
            if base is not v.seen or (v.epoch != Builder.epoch and v.forward is not None):
                # the base changed, or this value may belong to a closed or forgotten block
                if base is not v.seen and v.forward is None:
                    raise NotSupportedError(
                        "this array may or may not share memory with an array that was modified since "
                        "(NumPy decides by memory layout), so its value can't be known here",
                        hint="call .copy() when you make it")
                self._value = v.forward(base)
                v.seen, v.epoch = base, Builder.epoch
        return self._value

    @value.setter
    def value(self, new: Value) -> None:
        """An in-place update: a view writes through to its base, as NumPy would."""
        v = self.view
        if self.root.frozen:
            raise NotSupportedError(f"writing into {self.root.frozen}, which compiled code can't change",
                                    hint="copy it into a local array first: a = np.array(CONST)")
        if v is not None:
            if v.backward is None:
                raise NotSupportedError(
                    "writing into this array: NumPy may or may not write through to the array it was "
                    "made from (it depends on memory layout)", hint="call .copy() first, or write into the base")
            v.base.value = v.backward(v.base.value, new)
            v.seen, v.epoch = v.base.value, Builder.epoch
        self._value = new

    @property
    def root(self) -> "Traced":
        t = self
        while t.view is not None:
            t = t.view.base
        return t

    @property
    def type(self) -> TensorType:
        return self.value.type

    @property
    def shape(self):
        return self.type.shape

    @property
    def dtype(self):
        return self.type.dtype

    @property
    def ndim(self):
        return len(self.type.shape)

    def __repr__(self):
        return f"Traced({self.type}{', weak ' + self.weak.__name__ if self.weak else ''})"


class View:
    """How a view relates to its base: forward(base value) -> view value; backward(base value,
    new view value) -> new base value. None where NumPy's aliasing depends on memory layout."""
    __slots__ = ("base", "forward", "backward", "seen", "recipe", "epoch")

    def __init__(self, base: Traced, forward, backward, recipe=None):
        self.base, self.forward, self.backward, self.recipe = base, forward, backward, recipe
        self.seen, self.epoch = base.value, Builder.epoch


def make_view(base: Traced, result: Traced, forward, backward, recipe=None) -> Traced:
    """Mark `result` (already computed from base) as a NumPy view of `base`.
    A view of a view whose aliasing NumPy decides by layout is opaque (no forward/backward).
    `recipe` says how NumPy makes the view from the base's array (see view_of): it keeps a view
    of a known array known, and a returned view of a returned array a view of it."""
    if base.view is not None and base.view.forward is None:
        forward = backward = recipe = None
    return Traced(result._value, result.weak, result.params, View(base, forward, backward, recipe))


class NeedStatic(Exception):
    """Raised when a value computed from scalar arguments is needed at compile time: the
    compiler retries with those arguments static (their values join the cache key)."""

    def __init__(self, params, reason: JitError | None = None):
        super().__init__(sorted(params))
        self.params = frozenset(params)
        self.reason = reason   # what to report if the value can't be made static


def _join_params(sources):
    out = frozenset()
    for s in sources:
        if isinstance(s, Traced):
            if s.params is None:
                return None
            out |= s.params
    return out


class _Guards:
    """(kind, holder, name, value) of each global read, once; modules themselves are not guarded."""

    def __init__(self):
        self.items: dict = {}

    def add(self, guard) -> None:
        kind, holder, name, value = guard
        if isinstance(value, types.ModuleType):
            return
        self.items.setdefault((kind, id(holder), name), guard)


class Emitter:
    """What a library function receives: the IR builder and NumPy-aware helpers."""

    def __init__(self, builder: Builder):
        self.b = builder
        self.checks: list[str] = []   # run-time error messages; the error code is 1 + the index
        self.err: Traced | None = None  # int32[] error code, threaded through control flow like a variable
        self.affine: dict[int, tuple[int, int]] = {}  # value id -> (base value id, offset): i + 4 is i's + 4
        self.loop_depth = 0            # > 0 while interpreting a body that becomes a run-time region
        self.arguments: set[int] = set()   # ids of the argument arrays (0-d ones update in place)
        self.zero_d_arrays: set[int] = set()   # ids of 0-d values that are arrays, not NumPy scalars
        self.guards = _Guards()            # globals and module attributes read while compiling
        self.force_unroll: dict = {}   # loop markers whose loops must run at compile time -> why
        self.fast_trig = False         # vectorised float64 sin/cos, with a retry through libm (see _sincos)
        self.held: list[Traced] = []   # arrays made by em.array (kept alive: their ids are in the sets above)
        self.globals: dict[int, tuple[Any, Traced]] = {}   # id(global array) -> (it, its frozen Traced)

    def guard_list(self) -> list:
        return list(self.guards.items.values())

    def check(self, bad: "Traced", message: str, located=True) -> None:
        """A condition under which NumPy would raise: the compiled function reports the first one
        that happened (with this source location) instead of returning a wrong value."""
        where = f"{self.b.span}: " if self.b.span and located else ""
        self.checks.append(where + message)
        code = self.constant(np.int32(len(self.checks)))
        zero = self.constant(np.int32(0))
        first = self.emit("and", self.cast(bad, np.bool_), self.emit("compare", self.err, zero, direction="EQ"))
        self.err.value = self.emit("select", first, code, self.err).value

    def offset_of(self, x) -> tuple[int, int] | None:
        """(base, offset) if x is a run-time integer known to be base + a constant."""
        if isinstance(x, Traced) and x.ndim == 0 and (x.weak is int or is_int(x.dtype)):
            return self.affine.get(x.value.id, (x.value.id, 0))
        return None

    # -- values
    def wrap(self, value: Value, *sources, weak=None) -> Traced:
        return Traced(value, weak, _join_params(sources))

    def emit(self, name, *operands: Traced, sources=None, weak=None, **attrs) -> Traced:
        out = self.b.emit(name, *[o.value for o in operands], **attrs)
        return self.wrap(out, *(operands if sources is None else sources), weak=weak)

    def emit_multi(self, name, *operands: Traced, **attrs) -> tuple[Traced, ...]:
        outs = self.b.emit(name, *[o.value for o in operands], **attrs)
        return tuple(self.wrap(v, *operands) for v in outs)

    def constant(self, value) -> Traced:
        arr = np.asarray(value)
        as_dtype(arr.dtype)
        return Traced(self.b.emit("constant", value=arr), None, frozenset())

    def set_known(self, t: "Traced", contents: np.ndarray) -> None:
        """An in-place update of `t` (not a view) whose new contents are known at compile time."""
        known = np.array(contents, dtype=t.dtype, copy=True)
        known.flags.writeable = False
        t.value = self.b.emit("constant", value=known)
        t._const, t._const_of = known, t._value

    def array(self, contents: np.ndarray, frozen: str | None = None) -> Traced:
        """A NumPy array the program holds (made by np.zeros, folded, or a global read): a value
        with identity whose contents are known until something writes into it."""
        if contents.dtype == object or contents.dtype not in SUPPORTED_DTYPES:
            raise NotSupportedError(f"can't use an array of dtype {contents.dtype} in compiled code")
        known = contents.view()
        known.flags.writeable = False
        t = Traced(self.b.emit("constant", value=known), None, frozenset())
        t._const, t._const_of, t.frozen = known, t._value, frozen
        self.held.append(t)
        if known.ndim == 0:
            self.zero_d_arrays.add(id(t))
        return t

    def static(self, x, what: str):
        """The compile-time value of `x`; `what` names the use, for the error message."""
        if isinstance(x, Traced):
            if x.const is not None:
                return x.const
            if x.params:
                raise NeedStatic(x.params, reason=JitError(
                    f"{what} must be known at compile time, but it changes at run time", self.b.span))
            raise JitError(f"{what} must be known at compile time, but it depends on array values")
        if isinstance(x, (tuple, list)):
            return type(x)(self.static(v, what) for v in x)
        return x

    def dtype_of(self, x):
        """What NumPy's type resolution sees: a dtype, or a Python type for weak scalars
        (Python bools are simply bool: it is the lowest kind, so it never upcasts)."""
        if isinstance(x, Traced):
            return x.weak if x.weak in (int, float, complex) else x.dtype
        if is_py_scalar(x):
            return type(x) if type(x) in (int, float, complex) else np.dtype(np.bool_)
        return np.asarray(x).dtype

    def shape_of(self, x):
        return x.shape if isinstance(x, Traced) else np.shape(x)

    def asarray(self, x, dtype=None) -> Traced:
        """Lift a static value to an IR constant (Python scalars take `dtype`, checked for range)."""
        if isinstance(x, Traced):
            return x if dtype is None or x.dtype == dtype else self.cast(x, dtype)
        if is_py_scalar(x) and dtype is not None:
            dt = np.dtype(dtype)
            if is_int(dt) and not isinstance(x, bool) and isinstance(x, int):
                info = np.iinfo(dt)
                if not info.min <= x <= info.max:
                    raise ShapeError(f"Python integer {x} out of bounds for {dt}")
            if is_int(dt) and isinstance(x, float):
                raise ShapeError(f"can't use the Python float {x} as {dt}")
            if isinstance(x, complex) and dt.kind != "c":
                raise ShapeError(f"can't use the Python complex {x} as {dt}")
            return self.constant(np.asarray(x, dtype=dt))
        arr = np.asarray(x)
        if arr.dtype == object or arr.dtype not in SUPPORTED_DTYPES:
            raise NotSupportedError(f"can't use a value of type {type(x).__name__} (dtype {arr.dtype}) in compiled code")
        t = self.constant(arr)
        return t if dtype is None else self.cast(t, dtype)

    def cast(self, x: Traced, dtype) -> Traced:
        dtype = np.dtype(dtype)
        if x.dtype == dtype:
            return Traced(x.value, None, x.params) if x.weak else x
        if is_complex(x.dtype):   # NumPy's casts: the real part (a ComplexWarning), bool of either part
            re, im = self.emit("real", x), self.emit("imag", x)
            if is_complex(dtype):
                return self.emit("complex", self.cast(re, real_dtype(dtype)), self.cast(im, real_dtype(dtype)))
            if is_bool(dtype):
                return self.emit("or", self.cast(re, dtype), self.cast(im, dtype))
            return self.cast(re, dtype)
        if is_complex(dtype):
            part = real_dtype(dtype)
            return self.emit("complex", self.cast(x, part), self.full(0, part, x.shape), sources=(x,))
        return self.emit("convert", x, dtype=dtype)

    def broadcast(self, x: Traced, shape) -> Traced:
        shape = tuple(shape)
        if x.shape == shape:
            return x
        dims = tuple(range(len(shape) - x.ndim, len(shape)))
        return self.emit("broadcast_in_dim", x, shape=shape, dims=dims, weak=x.weak)

    def operand(self, x, dtype, shape) -> Traced:
        return self.broadcast(self.asarray(x, dtype), shape)

    def full(self, value, dtype, shape) -> Traced:
        return self.broadcast(self.constant(np.asarray(value, dtype=dtype)), shape)


# ---------------------------------------------------------------- the registries

FUNCTIONS: dict[str, Callable] = {}   # "numpy.exp" -> impl(em, *args, **kwargs)
METHODS: dict[str, Callable] = {}     # ndarray method name -> impl(em, self, *args, **kwargs)
PROPERTIES: dict[str, Callable] = {}  # ndarray attribute -> impl(em, self)
BUILTINS: dict[str, Callable] = {}    # Python builtin name -> impl(em, *args, **kwargs)
OPERATORS: dict[type, str] = {}       # ast operator class -> FUNCTIONS key


def register(*names: str, method: str | tuple = (), builtin: str | None = None):
    """Register one implementation under NumPy names (and as an array method / builtin)."""
    def deco(impl):
        for n in names:
            FUNCTIONS[n] = impl
        for m in (method,) if isinstance(method, str) else method:
            METHODS[m] = impl
        if builtin:
            BUILTINS[builtin] = impl
        return impl
    return deco


def is_static(*xs) -> bool:
    return not any(isinstance(x, Traced) for x in xs)


def fold(fn, *args, **kwargs):
    """Run NumPy itself on compile-time values: exact by construction."""
    with np.errstate(all="ignore"):
        try:
            return fn(*args, **kwargs)
        except (TypeError, ValueError, ArithmeticError, IndexError) as e:
            raise ShapeError(f"{getattr(fn, '__name__', fn)}: {e}") from None


# ---------------------------------------------------------------- ufuncs

def broadcast_shapes(name, *shapes):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ShapeError(f"{name}: operands could not be broadcast together with shapes "
                         + " ".join(str(tuple(s)) for s in shapes)) from None


_PY_DEFAULT = {int: np.dtype(np.int64), float: np.dtype(np.float64), complex: np.dtype(np.complex128)}


def apply_ufunc(em: Emitter, ufunc: np.ufunc, args, lower) -> Any:
    """NumPy ufunc semantics: loop dtypes from NumPy's own resolver, broadcasting, weak scalars.
    `lower(em, *operands, out_dtype)` emits the computation on operands already in loop dtypes."""
    if is_static(*args):
        return fold(ufunc, *args)
    name = ufunc.__name__
    try:
        dtypes = tuple(em.dtype_of(a) for a in args)
        loop = ufunc.resolve_dtypes(dtypes + (None,) * ufunc.nout)
        if any(d == object for d in loop):   # only Python scalars (e.g. int < int): 64-bit, as Python's
            loop = ufunc.resolve_dtypes(tuple(_PY_DEFAULT.get(d, d) for d in dtypes) + (None,) * ufunc.nout)
    except (TypeError, ValueError) as e:
        raise ShapeError(f"{name}: {e}") from None
    shape = broadcast_shapes(name, *[em.shape_of(a) for a in args])
    ops = [em.operand(a, loop[i], shape) for i, a in enumerate(args)]
    out = lower(em, *ops, out_dtype=loop[-1])
    if out.dtype != loop[-1]:
        out = em.cast(out, loop[-1])
    weak = None
    if all(is_py_scalar(a) or (isinstance(a, Traced) and a.weak) for a in args):
        weak = {"b": bool, "i": int, "u": int, "f": float, "c": complex}[loop[-1].kind]
    return Traced(out.value, weak, _join_params(args))


def _prim(name):
    return lambda em, *xs, out_dtype: em.emit(name, *xs)


def ufunc(np_ufunc, lower, *names, method=(), builtin=None):
    """Register a ufunc under its NumPy names; `lower` sees operands in its loop dtypes."""
    def impl(em, *args, out=None, where=True, dtype=None, **kwargs):
        if out is not None or where is not True or kwargs:
            raise NotSupportedError(f"{np_ufunc.__name__}: the arguments {', '.join(['out'] * (out is not None) + ['where'] * (where is not True) + list(kwargs))} are not supported")
        if len(args) != np_ufunc.nin:
            raise ShapeError(f"{np_ufunc.__name__}() takes {np_ufunc.nin} positional arguments but {len(args)} were given")
        if dtype is not None:
            return impl(em, *[cast_impl(em, a, dtype) for a in args])
        return apply_ufunc(em, np_ufunc, args, lower)
    impl.__name__ = np_ufunc.__name__
    register(*(names or (f"numpy.{np_ufunc.__name__}",)), method=method, builtin=builtin)(impl)
    return impl


def _by_kind(**lowers):
    """Pick a lowering by the loop dtype's kind: keys b (bool), i, u, f."""
    def lower(em, *xs, out_dtype):
        kind = xs[0].dtype.kind
        fn = lowers.get(kind) or lowers.get("iu" if kind in "iu" else "_") or lowers["any"]
        return fn(em, *xs, out_dtype=out_dtype)
    return lower


def _zero_like(em, x):
    return em.full(0, x.dtype, x.shape)


def _cmp(em, a, b, d):
    return em.emit("compare", a, b, direction=d)


def _sel(em, p, a, b):
    return em.emit("select", p, a, b)


def _floor_divide_int(em, a, b, out_dtype):
    zero, one = _zero_like(em, b), em.full(1, b.dtype, b.shape)
    bad = _cmp(em, b, zero, "EQ")
    signed = a.dtype.kind == "i"
    if signed:  # b == -1 would trap on INT_MIN / -1; NumPy wraps to -a
        minus1 = _cmp(em, b, em.full(-1, b.dtype, b.shape), "EQ")
        bad = em.emit("or", bad, minus1)
    safe = _sel(em, bad, one, b)
    q, r = em.emit("div", a, safe), em.emit("rem", a, safe)
    if signed:
        q = _sel(em, minus1, em.emit("neg", a), q)
        adjust = em.emit("and", _cmp(em, r, zero, "NE"),
                         _cmp(em, _cmp(em, r, zero, "LT"), _cmp(em, b, zero, "LT"), "NE"))
        q = _sel(em, adjust, em.emit("sub", q, one), q)
    return _sel(em, _cmp(em, b, zero, "EQ"), zero, q)


def _remainder_int(em, a, b, out_dtype):
    zero, one = _zero_like(em, b), em.full(1, b.dtype, b.shape)
    bad = _cmp(em, b, zero, "EQ")
    if a.dtype.kind == "i":
        bad = em.emit("or", bad, _cmp(em, b, em.full(-1, b.dtype, b.shape), "EQ"))
    r = _sel(em, bad, zero, em.emit("rem", a, _sel(em, bad, one, b)))
    if a.dtype.kind == "i":
        adjust = em.emit("and", _cmp(em, r, zero, "NE"),
                         _cmp(em, _cmp(em, r, zero, "LT"), _cmp(em, b, zero, "LT"), "NE"))
        r = _sel(em, adjust, em.emit("add", r, b), r)
    return r


def _signbit(em, x):   # also -0.0: 1/-0.0 = -inf
    zero = _zero_like(em, x)
    neg_zero = em.emit("and", _cmp(em, x, zero, "EQ"),
                       _cmp(em, em.emit("div", em.full(1.0, x.dtype, x.shape), x), zero, "LT"))
    return em.emit("or", _cmp(em, x, zero, "LT"), neg_zero)


def _float_divmod(em, a, b):
    """NumPy's npy_divmod for floats (fmod-based, so results match NumPy bit for bit in
    the common cases), returning (floor quotient, remainder). float16 is computed in float32, as
    NumPy's half loops do (in float16 itself 1043 // 1.198 gave 869, NumPy 870: bench/accuracy.py)."""
    if a.dtype == np.float16:
        return tuple(em.cast(r, np.float16) for r in _float_divmod(em, em.cast(a, np.float32), em.cast(b, np.float32)))
    zero = _zero_like(em, b)
    negzero = em.full(-0.0, b.dtype, b.shape)
    mod = em.emit("rem", a, b)
    div = em.emit("div", em.emit("sub", a, mod), b)
    fix = em.emit("and", _cmp(em, mod, zero, "NE"),
                  _cmp(em, _cmp(em, b, zero, "LT"), _cmp(em, mod, zero, "LT"), "NE"))
    mod = _sel(em, fix, em.emit("add", mod, b), mod)
    div = _sel(em, fix, em.emit("sub", div, em.full(1, b.dtype, b.shape)), div)
    mod = _sel(em, _cmp(em, mod, zero, "EQ"), _sel(em, _cmp(em, b, zero, "LT"), negzero, zero), mod)
    floordiv = em.emit("floor", div)
    half = em.full(0.5, b.dtype, b.shape)
    floordiv = _sel(em, _cmp(em, em.emit("sub", div, floordiv), half, "GT"),
                    em.emit("add", floordiv, em.full(1, b.dtype, b.shape)), floordiv)
    true_q = em.emit("div", a, b)
    floordiv = _sel(em, _cmp(em, div, zero, "EQ"), _sel(em, _signbit(em, true_q), negzero, zero), floordiv)
    floordiv = _sel(em, _cmp(em, b, zero, "EQ"), true_q, floordiv)
    return floordiv, mod


def _compare(direction):
    def lower(em, a, b, out_dtype):
        if a.dtype == b.dtype:
            return _cmp(em, a, b, direction)
        # NumPy compares int64 with uint64 exactly (mixed loop); so do we.
        swap = {"LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE", "EQ": "EQ", "NE": "NE"}
        d = direction
        if a.dtype.kind == "u":
            a, b, d = b, a, swap[direction]
        neg = _cmp(em, a, _zero_like(em, a), "LT")
        same = _cmp(em, em.cast(a, b.dtype), b, d)
        if d in ("LT", "LE", "NE"):
            return em.emit("or", neg, same)
        return em.emit("and", em.emit("not", neg), same)
    return lower


def _two_prod(em, a, b):
    """a * b as p + err exactly (Dekker, Veltkamp's split; no FMA), for |a|, |b| below 2**970."""
    op = em.emit
    c = lambda v: em.full(v, a.dtype, a.shape)

    def split(v):
        t = op("mul", v, c(134217729.0))
        hi = op("sub", t, op("sub", t, v))
        return hi, op("sub", v, hi)
    (ah, al), (bh, bl) = split(a), split(b)
    p = op("mul", a, b)
    err = op("add", op("add", op("add", op("sub", op("mul", ah, bh), p), op("mul", ah, bl)), op("mul", al, bh)),
             op("mul", al, bl))
    return p, err


def _two_sum(em, a, b):
    """a + b as s + err exactly (Knuth)."""
    op = em.emit
    s = op("add", a, b)
    bb = op("sub", s, a)
    return s, op("add", op("sub", a, op("sub", s, bb)), op("sub", b, bb))


def _ln_dd(k: int) -> tuple[float, float]:
    import decimal
    with decimal.localcontext(decimal.Context(prec=50)):
        d = (decimal.Decimal(k) / 8).ln()
        hi = float(d)
        return hi, float(d - decimal.Decimal(hi))


_LN_EIGHTHS = {k: _ln_dd(k) for k in range(9, 16)}          # ln(k/8) as hi + lo
_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10   # fdlibm's: k * _LN2_HI exact


def _log_double_double(em, ax):
    """ln(ax) as hi + lo, to about 2**-70 relative, for positive normal finite float64 ax.
    ax = 2**e * m with m in [0.97, 1.94) (the exponent field), then m = c * (1 + s) / (1 - s) with c
    the nearest eighth: ln(ax) = e ln 2 + ln c + 2 atanh(s), |s| <= 1/32, the leading terms in
    double-double (as fdlibm's pow does with its own table)."""
    op = em.emit
    f = lambda v: em.full(v, np.float64, ax.shape)
    i = lambda v: em.full(v, np.int64, ax.shape)
    bits = op("bitcast", ax, dtype=np.int64)
    e = op("sub", op("shift_right_logical", bits, i(52)), i(1023))
    m = op("bitcast", op("or", op("and", bits, i((1 << 52) - 1)), i(1023 << 52)), dtype=np.float64)   # [1, 2)
    top = _cmp(em, m, f(1.9375), "GE")                     # nearest eighth 2: use m / 2 and c = 1 instead
    m = _sel(em, top, op("mul", m, f(0.5)), m)
    ef = em.cast(_sel(em, top, op("add", e, i(1)), e), np.float64)
    j = op("round_even", op("mul", m, f(8.0)))             # 8 .. 15
    c = op("mul", j, f(0.125))
    lnc_hi, lnc_lo = f(0.0), f(0.0)
    for k, (hi, lo) in _LN_EIGHTHS.items():
        is_k = _cmp(em, j, f(float(k)), "EQ")
        lnc_hi, lnc_lo = _sel(em, is_k, f(hi), lnc_hi), _sel(em, is_k, f(lo), lnc_lo)
    u = op("sub", m, c)                                     # exact
    v, v_lo = _two_sum(em, m, c)
    s = op("div", u, v)
    p, p_err = _two_prod(em, s, v)
    s_lo = op("div", op("sub", op("sub", op("sub", u, p), p_err), op("mul", s, v_lo)), v)
    z = op("mul", s, s)
    poly = f(2 / 11)
    for coef in (2 / 9, 2 / 7, 2 / 5, 2 / 3):
        poly = op("add", f(coef), op("mul", z, poly))
    tail = op("mul", op("mul", s, z), poly)                # 2 atanh(s) - 2 s
    t1, t1_err = _two_sum(em, op("mul", ef, f(_LN2_HI)), lnc_hi)
    t2, t2_err = _two_sum(em, t1, op("mul", f(2.0), s))
    lo = op("add", op("add", op("add", t1_err, t2_err), op("add", op("mul", ef, f(_LN2_LO)), lnc_lo)),
            op("add", op("mul", f(2.0), s_lo), tail))
    hi = op("add", t2, lo)
    return hi, op("sub", lo, op("sub", hi, t2))


def _pow_accurate(em, ax, y):
    """|x| ** y for float64: exp(y * ln|x|) with the product in double-double, exp(t) * (1 + t_lo).
    IREE's pow is exp(y * log x) in plain float64, whose rounding error grows with |y log x|: up to
    1000 ulp for results near 1e300 (bench/accuracy.py); this is within 2. Where |x| is 0, inf,
    NaN or subnormal, or |y| >= 2**66 (|y ln x| > 2**13 unless x is 1: results 0, 1 or inf), IREE's pow."""
    op = em.emit
    f = lambda v: em.full(v, np.float64, ax.shape)
    ok = em.emit("and", em.emit("and", _cmp(em, ax, f(np.finfo(np.float64).tiny), "GE"), em.emit("is_finite", ax)),
                 _cmp(em, op("abs", y), f(2.0 ** 66), "LT"))
    safe_x, safe_y = _sel(em, ok, ax, f(2.0)), _sel(em, ok, y, f(1.0))
    hi, lo = _log_double_double(em, safe_x)
    t, t_err = _two_prod(em, safe_y, hi)
    t_lo = op("add", t_err, op("mul", safe_y, lo))
    r = op("exp", t)
    r = _sel(em, op("is_finite", r), op("add", r, op("mul", r, t_lo)), r)
    return _sel(em, ok, r, op("pow", ax, y))


def _power(em, a, b, out_dtype):
    if a.dtype.kind != "f":
        return em.emit("pow", a, b)
    # IREE lowers float pow to exp(y * log x): wrong for x <= 0 and the IEEE special cases, and
    # imprecise in float32. Compute |x| ** y in float64, then apply C99 pow's rules as NumPy does.
    wide = np.dtype(np.float64)
    x, y = em.cast(a, wide), em.cast(b, wide)
    full = lambda v: em.full(v, wide, x.shape)
    zero, one = full(0.0), full(1.0)
    ax = em.emit("abs", x)
    r = _pow_accurate(em, ax, y)
    y_int = _cmp(em, em.emit("floor", y), y, "EQ")
    half = em.emit("mul", y, full(0.5))
    y_odd = em.emit("and", y_int, _cmp(em, em.emit("floor", half), half, "NE"))
    x_neg = _cmp(em, x, zero, "LT")
    x_finite = em.emit("is_finite", x)
    signed = _sel(em, y_odd, em.emit("neg", r), r)
    r = _sel(em, x_neg, _sel(em, y_int, signed, _sel(em, x_finite, full(np.nan), r)), r)
    # x == +-0: y > 0 -> +0 (x itself when y is odd), y < 0 -> +inf (copysign(inf, x) when odd)
    x_zero = _cmp(em, x, zero, "EQ")
    y_pos = _cmp(em, y, zero, "GT")
    zero_case = _sel(em, y_pos, _sel(em, y_odd, x, zero),
                     _sel(em, y_odd, em.emit("div", one, x), full(np.inf)))
    y_nonzero = em.emit("or", y_pos, _cmp(em, y, zero, "LT"))     # not y != 0: 0 ** nan is nan
    r = _sel(em, em.emit("and", x_zero, y_nonzero), zero_case, r)
    # x == -1 with y = +-inf gives 1; y == 0 and x == 1 give 1 even with NaN on the other side
    r = _sel(em, em.emit("and", _cmp(em, x, full(-1.0), "EQ"), _cmp(em, em.emit("abs", y), full(np.inf), "EQ")), one, r)
    r = _sel(em, em.emit("or", _cmp(em, y, zero, "EQ"), _cmp(em, x, one, "EQ")), one, r)
    return em.cast(r, out_dtype)


def _fast_power(em, base, exponent):
    """NumPy's exact fast paths for array ** scalar (2 -> square, 0.5 -> sqrt, -1 -> 1/x, 1 -> +x)."""
    if not isinstance(base, Traced) or not isinstance(exponent, (int, float)) or isinstance(exponent, bool):
        return None
    loop = np.power.resolve_dtypes((em.dtype_of(base), em.dtype_of(exponent), None))
    x = em.asarray(base, loop[0])
    if exponent == 2:
        return Traced(em.emit("mul", x, x).value, None, x.params)
    if loop[0].kind == "f":
        if exponent == 0.5:
            return em.emit("sqrt", x)
        if exponent == -1:
            return em.emit("div", em.full(1, x.dtype, x.shape), x)
        if exponent == 1:
            return Traced(x.value, None, x.params)
    return None


ufunc(np.add, _by_kind(b=_prim("or"), any=_prim("add")), "numpy.add")
ufunc(np.subtract, _prim("sub"), "numpy.subtract")
ufunc(np.multiply, _by_kind(b=_prim("and"), any=_prim("mul")), "numpy.multiply")


def _hypot(em, x, y, out_dtype=None):
    """C's hypot: +inf where either is infinite (even beside a NaN); float16/32 computed in float64
    (no overflow), float64 scaled by the larger magnitude."""
    ax, ay = em.emit("abs", x), em.emit("abs", y)
    f = lambda v, like=x: em.full(v, like.dtype, like.shape)
    if x.dtype != np.float64:
        wx, wy = em.cast(ax, np.float64), em.cast(ay, np.float64)
        r = em.cast(em.emit("sqrt", em.emit("add", em.emit("mul", wx, wx), em.emit("mul", wy, wy))), x.dtype)
    else:
        hi, lo = em.emit("max", ax, ay), em.emit("min", ax, ay)
        ratio = _sel(em, _cmp(em, hi, f(0.0), "EQ"), f(0.0), em.emit("div", lo, hi))
        r = em.emit("mul", hi, em.emit("sqrt", em.emit("add", f(1.0), em.emit("mul", ratio, ratio))))
    either_inf = em.emit("or", _cmp(em, ax, f(np.inf), "EQ"), _cmp(em, ay, f(np.inf), "EQ"))
    return _sel(em, either_inf, f(np.inf), r)


def _complex_divide(em, a, b, out_dtype=None):
    """NumPy's complex division (Smith's method, as its loops do it), from real operations."""
    ar, ai, br, bi = em.emit("real", a), em.emit("imag", a), em.emit("real", b), em.emit("imag", b)
    f = lambda v: em.full(v, ar.dtype, ar.shape)
    add, sub, mul, div = (lambda x, y, k=k: em.emit(k, x, y) for k in ("add", "sub", "mul", "div"))
    abr, abi = em.emit("abs", br), em.emit("abs", bi)
    rat1 = div(bi, br)
    scl1 = div(f(1), add(br, mul(bi, rat1)))
    re1, im1 = mul(add(ar, mul(ai, rat1)), scl1), mul(sub(ai, mul(ar, rat1)), scl1)
    zero = em.emit("and", _cmp(em, abr, f(0), "EQ"), _cmp(em, abi, f(0), "EQ"))
    re1, im1 = _sel(em, zero, div(ar, abr), re1), _sel(em, zero, div(ai, abr), im1)
    rat2 = div(br, bi)
    scl2 = div(f(1), add(bi, mul(br, rat2)))
    re2, im2 = mul(add(mul(ar, rat2), ai), scl2), mul(sub(mul(ai, rat2), ar), scl2)
    first = _cmp(em, abr, abi, "GE")
    return em.emit("complex", _sel(em, first, re1, re2), _sel(em, first, im1, im2))


ufunc(np.true_divide, _by_kind(c=_complex_divide, any=_prim("div")), "numpy.true_divide", "numpy.divide")
ufunc(np.floor_divide, _by_kind(iu=_floor_divide_int, f=lambda em, a, b, out_dtype: _float_divmod(em, a, b)[0]),
      "numpy.floor_divide")
ufunc(np.remainder, _by_kind(iu=_remainder_int, f=lambda em, a, b, out_dtype: _float_divmod(em, a, b)[1]),
      "numpy.remainder", "numpy.mod")


@register("numpy.divmod", builtin="divmod")
def _divmod(em, a, b, **kwargs):
    """(a // b, a % b), as NumPy's divmod ufunc and Python's builtin on arrays."""
    return FUNCTIONS["numpy.floor_divide"](em, a, b, **kwargs), FUNCTIONS["numpy.remainder"](em, a, b, **kwargs)


_unchecked_power = ufunc(np.power, _power, "numpy.power", "numpy.pow")
ufunc(np.negative, _by_kind(u=lambda em, x, out_dtype: em.emit("sub", _zero_like(em, x), x), any=_prim("neg")),
      "numpy.negative")
ufunc(np.positive, lambda em, x, out_dtype: x, "numpy.positive")
ufunc(np.absolute, _by_kind(b=lambda em, x, out_dtype: x, u=lambda em, x, out_dtype: x,
                            c=lambda em, z, out_dtype: _hypot(em, em.emit("real", z), em.emit("imag", z)),
                            any=_prim("abs")),
      "numpy.absolute", "numpy.abs", builtin="abs")
ufunc(np.square, _by_kind(b=_prim("and"), any=lambda em, x, out_dtype: em.emit("mul", x, x)), "numpy.square")
ufunc(np.maximum, _by_kind(b=_prim("or"), any=_prim("max")), "numpy.maximum")
ufunc(np.minimum, _by_kind(b=_prim("and"), any=_prim("min")), "numpy.minimum")
for _u, _d in ((np.equal, "EQ"), (np.not_equal, "NE"), (np.less, "LT"), (np.less_equal, "LE"),
               (np.greater, "GT"), (np.greater_equal, "GE")):
    ufunc(_u, _compare(_d))
def in_double(fn):
    """A lowering that computes fn(em, *xs) in float64 (complex128 for complex values) and rounds
    back. IREE's float32 sin/cos/tan lose up to ~5e5 ulp near their zeros, and its float32 atan2
    (also inside complex log and sqrt) gives NaN at (0, 0) and at infinities (measured)."""
    def lower(em, *xs, out_dtype=None):
        dt = xs[0].dtype
        if dt in (np.float64, np.complex128):
            return fn(em, *xs)
        wide = np.complex128 if is_complex(dt) else np.float64
        return em.cast(fn(em, *[em.cast(x, wide) for x in xs]), dt)
    return lower


def _via_float64(prim):
    return in_double(lambda em, *xs: em.emit(prim, *xs))


# float64 sin/cos: IREE calls the host libm one element at a time (about 11 ns per element here).
# Under @jit, for arrays of FAST_TRIG_ELEMENTS or more, a vectorised version instead: fdlibm's
# range reduction by pi/2 (three 33-bit pieces of pi/2 and their tails, good for |x| < 2**20 * pi/2)
# and its kernel polynomials on [-pi/4, pi/4], accurate to about an ulp. It is optimistic: a value
# with |x| > FAST_TRIG_LIMIT (or inf) sets the error code to FAST_TRIG_RETRY, and the @jit wrapper
# then compiles the function with libm's sin/cos and runs it again (and keeps that version for
# the template). A run-time `if` instead would split the fused kernel around every sin and cos.
FAST_TRIG_ELEMENTS = 1 << 14
FAST_TRIG_LIMIT = 1e6
_PIO2 = ((1.57079632673412561417e+00, 6.07710050650619224932e-11),    # pio2_1, pio2_1t
         (6.07710050630396597660e-11, 2.02226624879595063154e-21),    # pio2_2, pio2_2t
         (2.02226624871116645580e-21, 8.47842766036889956997e-32))    # pio2_3, pio2_3t
_SIN = (-1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
        2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10)
_COS = (4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
        -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11)
def _sincos_poly(em, x, prim):
    c = lambda v: em.full(v, np.float64, x.shape)
    op = em.emit
    fn = op("round_even", op("mul", x, c(2 / np.pi)))
    r = op("sub", x, op("mul", fn, c(_PIO2[0][0])))          # exact for |n| < 2**20
    w = op("mul", fn, c(_PIO2[0][1]))
    for hi, lo in _PIO2[1:]:                                  # fdlibm's second and third rounds
        t = r
        w = op("mul", fn, c(hi))
        r = op("sub", t, w)
        w = op("sub", op("mul", fn, c(lo)), op("sub", op("sub", t, r), w))
    y = op("sub", r, w)
    small = op("compare", op("abs", x), c(np.pi / 4), direction="LE")
    y = op("select", small, x, y)                            # no reduction: keeps -0.0 and tiny x exact
    fn = op("select", small, c(0.0), fn)
    z = op("mul", y, y)

    def horner(coeffs):
        acc = c(coeffs[-1])
        for k in coeffs[-2::-1]:
            acc = op("add", c(k), op("mul", z, acc))
        return acc
    sin_r = op("add", y, op("mul", op("mul", z, y), horner(_SIN)))
    hz = op("mul", c(0.5), z)
    one_m = op("sub", c(1.0), hz)
    cos_r = op("add", one_m, op("add", op("sub", op("sub", c(1.0), one_m), hz),
                                  op("mul", op("mul", z, z), horner(_COS))))
    n = op("add", fn, c(1.0)) if prim == "cos" else fn      # cos(x) = sin(x + pi/2)
    q = op("sub", n, op("mul", c(4.0), op("floor", op("mul", n, c(0.25)))))     # n mod 4, as a float
    is_q = lambda k: op("compare", q, c(float(k)), direction="EQ")
    # sin(y + n pi/2) by quadrant: sin, cos, -sin, -cos
    out = op("select", is_q(0), sin_r, op("select", is_q(1), cos_r,
                                          op("select", is_q(2), op("neg", sin_r), op("neg", cos_r))))
    if prim == "sin":   # sin(x) = x below 2**-27 (and -0.0 stays -0.0)
        out = op("select", op("compare", op("abs", x), c(2.0 ** -27), direction="LT"), x, out)
    return out


def _sincos(prim):
    def f64(em, x):
        if not em.fast_trig or x.type.size < FAST_TRIG_ELEMENTS:
            return em.emit(prim, x)
        # x > L or x < -L, not |x| > L: the polynomial's own |x| would be shared with it
        limit = lambda v, d: em.emit("compare", x, em.full(v, np.float64, x.shape), direction=d)
        large = FUNCTIONS["numpy.any"](em, em.emit("or", limit(FAST_TRIG_LIMIT, "GT"), limit(-FAST_TRIG_LIMIT, "LT")))
        em.check(large, FAST_TRIG_RETRY, located=False)
        return _sincos_poly(em, x, prim)
    return in_double(f64)


for _u, _p in ((np.sin, "sin"), (np.cos, "cos")):
    ufunc(_u, _sincos(_p))
ufunc(np.tan, _via_float64("tan"))
# IREE's float32 tanh is up to 4 ulp off everywhere (bench/accuracy.py); in float64 and rounded: 1.
ufunc(np.tanh, _via_float64("tanh"))
_E16 = np.float32(np.exp(16.0))
_E16_TAIL = np.float32(np.exp(16.0) - float(_E16))


def _exp_f32(prim):
    """exp/expm1. IREE's float32 ones are within 1-2 ulp except for x in (80, 88.7], just below
    overflow, where they are up to 6 ulp off (bench/accuracy.py): there exp(x) = exp(x - 16) * e**16,
    with x - 16 exact and e**16 as two float32 pieces (one exp either way): 1 ulp, as NumPy."""
    def lower(em, x, out_dtype=None):
        if x.dtype != np.float32:
            return em.emit(prim, x)
        c = lambda v: em.full(v, x.dtype, x.shape)
        big = em.emit("and", _cmp(em, x, c(80.0), "GT"), _cmp(em, x, c(89.0), "LT"))   # above: inf anyway
        p = em.emit(prim, _sel(em, big, em.emit("sub", x, c(16.0)), x))   # expm1: -1 is below an ulp there
        scaled = em.emit("add", em.emit("mul", p, c(_E16)), em.emit("mul", p, c(_E16_TAIL)))
        return _sel(em, big, scaled, p)
    return lower


ufunc(np.exp, _by_kind(c=_via_float64("exp"), any=_exp_f32("exp")))
ufunc(np.expm1, _exp_f32("expm1"))
for _u, _p in ((np.log, "log"), (np.sqrt, "sqrt")):
    ufunc(_u, _by_kind(c=_via_float64(_p), any=_prim(_p)))
ufunc(np.log1p, _prim("log1p"))
for _u, _p in ((np.floor, "floor"), (np.ceil, "ceil")):   # integer loops (NumPy 2.1+): the value itself
    ufunc(_u, _by_kind(f=_prim(_p), any=lambda em, x, out_dtype: x))


def _cbrt(em, x):
    """IREE's CPU backend can't lower float64 cbrt, and its float32 one is 12 ulp off and gives
    NaN at inf. |x| ** (1/3) (345 ulp off: the exponent 1/3 is rounded) and one Newton step,
    y + (|x| / y**2 - y) / 3, with the sign put back: within 1 ulp; float16/32 computed in float64."""
    a = em.emit("abs", x)
    c = lambda v: em.full(v, x.dtype, x.shape)
    y = em.emit("pow", a, c(1.0 / 3.0))
    step = em.emit("add", y, em.emit("div", em.emit("sub", em.emit("div", a, em.emit("mul", y, y)), y), c(3.0)))
    ok = em.emit("and", em.emit("is_finite", y), _cmp(em, y, c(0.0), "NE"))   # 0 and inf: y itself
    return em.emit("mul", em.emit("sign", x), _sel(em, ok, step, y))


ufunc(np.cbrt, in_double(_cbrt))
ufunc(np.arctan2, _via_float64("atan2"))
ufunc(np.logical_not, lambda em, x, out_dtype: em.emit("not", em.cast(x, np.bool_)))
ufunc(np.bitwise_and, _prim("and"))
ufunc(np.bitwise_or, _prim("or"))
ufunc(np.bitwise_xor, _prim("xor"))
ufunc(np.invert, _prim("not"), "numpy.invert", "numpy.bitwise_not")

_UNARY_OPS = {"USub": "numpy.negative", "UAdd": "numpy.positive", "Invert": "numpy.invert"}
_BINARY_OPS = {"Add": "numpy.add", "Sub": "numpy.subtract", "Mult": "numpy.multiply",
               "Div": "numpy.true_divide", "FloorDiv": "numpy.floor_divide", "Mod": "numpy.remainder",
               "Pow": "numpy.power", "MatMult": "numpy.matmul", "BitAnd": "numpy.bitwise_and",
               "BitOr": "numpy.bitwise_or", "BitXor": "numpy.bitwise_xor"}
_COMPARE_OPS = {"Eq": "numpy.equal", "NotEq": "numpy.not_equal", "Lt": "numpy.less",
                "LtE": "numpy.less_equal", "Gt": "numpy.greater", "GtE": "numpy.greater_equal"}
OPERATORS = {**_UNARY_OPS, **_BINARY_OPS, **_COMPARE_OPS}
OPERATOR_SYMBOLS = {"USub": "-", "UAdd": "+", "Invert": "~", "Add": "+", "Sub": "-", "Mult": "*", "Div": "/",
                    "FloorDiv": "//", "Mod": "%", "Pow": "**", "MatMult": "@", "BitAnd": "&", "BitOr": "|",
                    "BitXor": "^", "LShift": "<<", "RShift": ">>", "Eq": "==", "NotEq": "!=", "Lt": "<",
                    "LtE": "<=", "Gt": ">", "GtE": ">="}
_PY_OPERATORS = {"USub": operator.neg, "UAdd": operator.pos, "Invert": operator.invert, "Not": operator.not_,
                 "Add": operator.add, "Sub": operator.sub, "Mult": operator.mul, "Div": operator.truediv,
                 "FloorDiv": operator.floordiv, "Mod": operator.mod, "Pow": operator.pow,
                 "MatMult": operator.matmul, "BitAnd": operator.and_, "BitOr": operator.or_,
                 "BitXor": operator.xor, "LShift": operator.lshift, "RShift": operator.rshift,
                 "Eq": operator.eq, "NotEq": operator.ne, "Lt": operator.lt, "LtE": operator.le,
                 "Gt": operator.gt, "GtE": operator.ge, "Is": operator.is_, "IsNot": operator.is_not,
                 "In": lambda a, b: a in b, "NotIn": lambda a, b: a not in b}


def _known_arrays(x, out: list) -> bool:
    """Collect the Traced values inside x (tuples, lists, dicts, slices); False if one of them
    has contents unknown at compile time."""
    if isinstance(x, Traced):
        out.append(x)
        return x.const is not None
    if isinstance(x, (tuple, list)):
        return all(_known_arrays(v, out) for v in x)
    if isinstance(x, dict):
        return all(_known_arrays(v, out) for v in x.values())
    if isinstance(x, slice):
        return all(_known_arrays(v, out) for v in (x.start, x.stop, x.step))
    return True


def _contains_unknown(x) -> bool:
    return not _known_arrays(x, [])


def known(x):
    """x with every array whose contents are known replaced by those contents (a NumPy array)."""
    if isinstance(x, Traced):
        c = x.const
        return x if c is None else c
    if isinstance(x, tuple):
        return tuple(known(v) for v in x)
    if isinstance(x, list):
        return [known(v) for v in x]
    if isinstance(x, dict):
        return {k: known(v) for k, v in x.items()}
    if isinstance(x, slice):
        return slice(known(x.start), known(x.stop), known(x.step))
    return x


def items_of(x, kind):
    """The values of type `kind` inside x (through tuples, lists and dicts)."""
    if isinstance(x, kind):
        yield x
    elif isinstance(x, (tuple, list)):
        for v in x:
            yield from items_of(v, kind)
    elif isinstance(x, dict):
        for v in x.values():
            yield from items_of(v, kind)


def hold(em: Emitter, x):
    """Every NumPy array in a result becomes an array the program holds (identity, known contents)."""
    if isinstance(x, np.ndarray):
        return em.array(x)
    if isinstance(x, tuple):
        return tuple(hold(em, v) for v in x)
    if isinstance(x, list):
        return [hold(em, v) for v in x]
    if isinstance(x, dict):
        return {k: hold(em, v) for k, v in x.items()}
    return x


def call_known(em: Emitter, fn, args, kwargs=None):
    """fn(em, *args, **kwargs) as NumPy runs it on arrays with identity. Where every array
    argument's contents are known, NumPy computes the result now (exact by construction), unless
    that result shares memory with an argument (a view, or the argument itself): then the call
    runs on the arrays themselves, so that the view writes through to them. Arrays in the result
    are held (see hold)."""
    kwargs = kwargs or {}
    cells: list[Traced] = []
    if _known_arrays(args, cells) and _known_arrays(kwargs, cells) and cells:
        consts = [c.const for c in cells]
        checkpoint, n_checks, err = em.b.checkpoint(), len(em.checks), em.err and em.err.value
        try:
            out = fn(em, *known(args), **known(kwargs))
        except (JitError, NeedStatic):
            out = _FAILED
        if out is not _FAILED:
            made = list(items_of(out, np.ndarray))
            if not any(np.may_share_memory(m, c) for m in made for c in consts):
                return hold(em, out)
        em.b.rollback(checkpoint)
        del em.checks[n_checks:]
        if em.err is not None:
            em.err.value = err
    return hold(em, fn(em, *args, **kwargs))


_FAILED = object()


def apply_operator(em: Emitter, op_name: str, *args):
    """A Python operator: on compile-time values Python/NumPy computes it; on arrays the ufunc."""
    return call_known(em, lambda em, *a: _apply_operator(em, op_name, *a), args)


def _apply_operator(em: Emitter, op_name: str, *args):
    if is_static(*args):
        return fold(_PY_OPERATORS[op_name], *args)
    if op_name not in OPERATORS:
        raise NotSupportedError(f"the operator {op_name} is not supported on arrays")
    refuse_complex(FUNCTIONS[OPERATORS[op_name]], f"the operator {OPERATOR_SYMBOLS.get(op_name, op_name)}",
                   args, {})
    out = FUNCTIONS[OPERATORS[op_name]](em, *args)
    if op_name in ("Add", "Sub") and isinstance(out, Traced):
        _track_offset(em, op_name, *args, out=out)
    return out


def _track_offset(em, op_name, a, b, out):
    """Remember that `i + 4` is i's value plus 4: x[i:i + 4] then has a known length."""
    if isinstance(b, Traced) and op_name == "Add":
        a, b = b, a
    if isinstance(a, Traced) and isinstance(b, (int, np.integer)) and not isinstance(b, (bool, np.bool_)):
        base = em.offset_of(a)
        if base is not None and em.offset_of(out) is not None:
            em.affine[out.value.id] = (base[0], base[1] + (int(b) if op_name == "Add" else -int(b)))


def _check_int_power(em, base, exponent):
    dts = [em.dtype_of(base), em.dtype_of(exponent)]
    if all(d is int or d is bool or (isinstance(d, np.dtype) and d.kind in "biu") for d in dts):
        if isinstance(exponent, Traced):
            raise NotSupportedError(
                "integer ** integer with an exponent known only at run time: NumPy raises for negative "
                "exponents, which compiled code can't", hint="use a constant exponent, or cast to float first")
        if np.any(np.asarray(exponent) < 0):
            raise ShapeError("Integers to negative integer powers are not allowed.")


def _checked_power(em, a, b, **kw):
    _check_int_power(em, a, b)
    fast = None if kw else _fast_power(em, a, b)
    return fast if fast is not None else _unchecked_power(em, a, b, **kw)


FUNCTIONS["numpy.power"] = FUNCTIONS["numpy.pow"] = _checked_power


@register("numpy.where")
def where(em, condition, x=None, y=None):
    if x is None or y is None:
        raise NotSupportedError("np.where(condition) with one argument returns a shape that depends on the data",
                                hint="use the three-argument form np.where(condition, x, y)")
    if is_static(condition, x, y):
        return fold(np.where, condition, x, y)
    try:
        dt = np.result_type(em.dtype_of(x) if not isinstance(em.dtype_of(x), type) else x,
                            em.dtype_of(y) if not isinstance(em.dtype_of(y), type) else y)
    except TypeError as e:
        raise ShapeError(f"where: {e}") from None
    shape = broadcast_shapes("where", em.shape_of(condition), em.shape_of(x), em.shape_of(y))
    c = em.broadcast(em.cast(em.asarray(condition), np.bool_), shape)
    out = em.emit("select", c, em.operand(x, dt, shape), em.operand(y, dt, shape), sources=(condition, x, y))
    return out


# ---------------------------------------------------------------- casts and dtypes

def static_dtype(em, dtype, what="dtype"):
    dtype = em.static(dtype, what)
    try:
        return as_dtype(dtype)
    except TypeError as e:
        raise NotSupportedError(str(e)) from None


@register(method="astype")
def cast_impl(em, x, dtype, order="K", casting="unsafe", subok=True, copy=True):
    dt = static_dtype(em, dtype)
    if is_static(x):
        return np.asarray(x).astype(dt)
    x = em.asarray(x)
    return em.cast(x, dt) if x.dtype != dt else Traced(x.value, None, x.params)


def _scalar_type(dt):
    def impl(em, x=0):
        if is_static(x):
            return fold(dt.type, x)
        return cast_impl(em, x, dt)
    return impl


for _dt in SUPPORTED_DTYPES:
    FUNCTIONS[f"numpy.{_dt.type.__name__}"] = _scalar_type(_dt)
FUNCTIONS["numpy.bool_"] = FUNCTIONS["numpy.bool"]


# ---------------------------------------------------------------- creation

def _creation(np_fn):
    """Creation functions take compile-time shapes and dtypes; NumPy computes the result."""
    def impl(em, *args, **kwargs):
        args = em.static(list(args), f"np.{np_fn.__name__}: its arguments")
        kwargs = {k: em.static(v, f"np.{np_fn.__name__}: {k}") for k, v in kwargs.items()}
        if "dtype" in kwargs and kwargs["dtype"] is not None:
            kwargs["dtype"] = static_dtype(em, kwargs["dtype"])
        out = fold(np_fn, *args, **kwargs)
        if out.dtype not in SUPPORTED_DTYPES:
            raise NotSupportedError(f"np.{np_fn.__name__} made dtype {out.dtype}, which pyjitc does not support")
        return out
    return impl


for _fn in (np.zeros, np.ones, np.arange, np.linspace, np.eye, np.identity):
    FUNCTIONS[f"numpy.{_fn.__name__}"] = _creation(_fn)
FUNCTIONS["numpy.empty"] = _creation(np.zeros)   # deterministic: NumPy's empty is uninitialised


@register("numpy.full")
def full(em, shape, fill_value, dtype=None):
    shape = em.static(shape, "np.full: shape")
    if is_static(fill_value):
        return fold(np.full, shape, fill_value, dtype=None if dtype is None else static_dtype(em, dtype))
    dt = static_dtype(em, dtype) if dtype is not None else fill_value.dtype
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return em.broadcast(em.cast(fill_value, dt), shape)


def _like_dtype(em, a, dtype):
    """The dtype of an np.*_like result: `dtype=` if given, else the prototype's."""
    if dtype is not None:
        return static_dtype(em, dtype)
    return a.dtype if isinstance(a, Traced) else np.asarray(a).dtype


def _like(value):
    def impl(em, a, dtype=None, shape=None):
        dt = _like_dtype(em, a, dtype)
        shape = em.shape_of(a) if shape is None else em.static(shape, "shape")
        return np.full(shape, value, dtype=dt)
    return impl


FUNCTIONS["numpy.zeros_like"] = FUNCTIONS["numpy.empty_like"] = _like(0)
FUNCTIONS["numpy.ones_like"] = _like(1)


@register("numpy.full_like")
def full_like(em, a, fill_value, dtype=None):
    dt = _like_dtype(em, a, dtype)
    return full(em, em.shape_of(a), fill_value if not is_static(fill_value) else np.asarray(fill_value).astype(dt), dt)


# ---------------------------------------------------------------- shapes

def normalize_axis(axis, ndim, name):
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise ShapeError(f"{name}: axis must be an integer, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ShapeError(f"{name}: axis {axis} is out of bounds for array of dimension {ndim}")
    return int(axis) % ndim if ndim else 0


def normalize_axes(em, axis, ndim, name) -> tuple[int, ...]:
    axis = em.static(axis, f"{name}: axis")
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(normalize_axis(a, ndim, name) for a in axes)
    if len(set(out)) != len(out):
        raise ShapeError(f"{name}: repeated axis in {axis!r}")
    return out


@register("numpy.reshape", method="reshape")
def reshape(em, a, *shape, order="C", newshape=None, copy=None):
    if newshape is not None:
        shape = (newshape,)
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = em.static(shape, "reshape: the new shape")
    if order != "C":
        raise NotSupportedError("reshape: only order='C' is supported")
    if is_static(a):
        return fold(np.reshape, a, shape)
    a = em.asarray(a)
    try:
        new = np.empty(a.shape, dtype=np.bool_).reshape(shape).shape  # NumPy's own -1 and size rules
    except (TypeError, ValueError) as e:
        raise ShapeError(f"reshape: {e}") from None
    if new == a.shape:
        return a
    out = em.emit("reshape", a, shape=tuple(new), weak=a.weak)
    if a.view is not None:   # NumPy copies or not depending on the view's memory layout
        return make_view(a, out, None, None)
    old = a.shape
    return make_view(a, out, lambda base: em.b.emit("reshape", base, shape=tuple(new)),
                     lambda base, v: em.b.emit("reshape", v, shape=old), ("reshape", tuple(new)))


@register("numpy.transpose", method="transpose")
def transpose(em, a, *axes):
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    axes = em.static(axes, "transpose: axes") or None
    if is_static(a):
        return fold(np.transpose, a, axes)
    a = em.asarray(a)
    perm = tuple(reversed(range(a.ndim))) if axes is None else tuple(normalize_axis(x, a.ndim, "transpose") for x in axes)
    if sorted(perm) != list(range(a.ndim)):
        raise ShapeError(f"transpose: axes {axes} don't match array of dimension {a.ndim}")
    if perm == tuple(range(a.ndim)):
        return a
    inverse = tuple(int(i) for i in np.argsort(perm))
    return make_view(a, em.emit("transpose", a, perm=perm, weak=a.weak),
                     lambda base: em.b.emit("transpose", base, perm=perm),
                     lambda base, v: em.b.emit("transpose", v, perm=inverse), ("transpose", perm))


@register("numpy.ravel", method="ravel")
def ravel(em, a, order="C"):
    return reshape(em, a, -1, order=order)


@register(method="flatten")
def flatten(em, a, order="C"):
    return numpy_copy(em, ravel(em, a, order))


@register("numpy.copy", method="copy")
def numpy_copy(em, a, order="C"):
    if is_static(a):
        return np.copy(a)
    return Traced(a.value, None, a.params)   # a new array object: in-place updates don't reach `a`


@register("numpy.asarray")
def asarray(em, a, dtype=None, copy=None, order=None):
    if isinstance(a, (list, tuple)) and not is_static(*a):
        return stack(em, a) if dtype is None else cast_impl(em, stack(em, a), dtype)
    if is_static(a):
        return np.asarray(a, dtype=dtype)
    out = a if dtype is None or static_dtype(em, dtype) == a.dtype else cast_impl(em, a, dtype)
    if copy is False and out is not a:
        raise NotSupportedError("copy=False: the dtype can't change without a copy (NumPy raises ValueError)",
                                hint="leave out copy=False, or pass copy=None")
    return numpy_copy(em, out) if copy and out is a else out


@register("numpy.array")
def array(em, a, dtype=None, copy=True, order=None):
    """np.array copies unless told `copy=False`/`None` (then it is np.asarray)."""
    return asarray(em, a, dtype=dtype, copy=copy, order=order)


def stack(em, arrays, axis=0):
    arrays = [em.asarray(a) for a in arrays]
    dt = np.result_type(*[a.dtype for a in arrays])
    shape = arrays[0].shape
    if any(a.shape != shape for a in arrays):
        raise ShapeError("all input arrays must have the same shape")
    axis = normalize_axis(axis, len(shape) + 1, "stack")
    parts = [reshape(em, em.cast(a, dt), shape[:axis] + (1,) + shape[axis:]) for a in arrays]
    return em.emit("concatenate", *parts, axis=axis) if len(parts) > 1 else parts[0]


FUNCTIONS["numpy.stack"] = lambda em, arrays, axis=0: stack(em, arrays, em.static(axis, "stack: axis"))


PROPERTIES.update({
    "shape": lambda em, a: a.shape,
    "ndim": lambda em, a: a.ndim,
    "dtype": lambda em, a: a.dtype,
    "size": lambda em, a: int(np.prod(a.shape, dtype=np.int64)),
    "T": lambda em, a: transpose(em, a),
})


# ---------------------------------------------------------------- reductions

def _reduce_dtype(np_fn, dtype, requested):
    kw = {} if requested is None else {"dtype": requested}
    with np.errstate(all="ignore"):
        return np.asarray(np_fn(np.ones(1, dtype=dtype), **kw)).dtype


def _keep(em, out, shape, axes, keepdims):
    if not keepdims:
        return out
    return reshape(em, out, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def _reduction(np_fn, kind_for):
    """sum/prod/max/min/any/all: NumPy's result dtype, accumulation in it (f16 in f32)."""
    name = np_fn.__name__

    def impl(em, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        if out is not None or initial is not None or where is not None:
            raise NotSupportedError(f"{name}: out=, initial= and where= are not supported")
        keepdims = em.static(keepdims, f"{name}: keepdims")
        dtype = None if dtype is None else static_dtype(em, dtype)
        if is_static(a):
            return fold(np_fn, a, axis=em.static(axis, "axis"), dtype=dtype, keepdims=keepdims) if dtype else \
                fold(np_fn, a, axis=em.static(axis, "axis"), keepdims=keepdims)
        a = em.asarray(a)
        axes = normalize_axes(em, axis, a.ndim, name)
        res = _reduce_dtype(np_fn, a.dtype, dtype) if name not in ("max", "min") else a.dtype
        kind = kind_for(res)
        if kind in ("max", "min") and any(a.shape[i] == 0 for i in axes):
            op = {"max": "maximum", "min": "minimum"}[kind]
            raise ShapeError(f"zero-size array to reduction operation {op} which has no identity")
        acc = np.dtype(np.float32) if res == np.float16 else res
        x = em.cast(a, acc)
        out = em.emit("reduce", x, kind=kind, axes=axes) if axes else x
        return _keep(em, em.cast(out, res), a.shape, axes, keepdims)
    impl.__name__ = name
    return impl


_sum = _reduction(np.sum, lambda dt: "or" if is_bool(dt) else "add")
_prod = _reduction(np.prod, lambda dt: "and" if is_bool(dt) else "mul")
_max = _reduction(np.max, lambda dt: "or" if is_bool(dt) else "max")
_min = _reduction(np.min, lambda dt: "and" if is_bool(dt) else "min")
_any = _reduction(np.any, lambda dt: "or")
_all = _reduction(np.all, lambda dt: "and")
register("numpy.sum", method="sum")(_sum)
register("numpy.prod", method="prod")(_prod)
register("numpy.max", "numpy.amax", method="max")(_max)
register("numpy.min", "numpy.amin", method="min")(_min)
register("numpy.any", method="any")(_any)
register("numpy.all", method="all")(_all)


@register("numpy.mean", method="mean")
def mean(em, a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    if out is not None or where is not None:
        raise NotSupportedError("mean: out= and where= are not supported")
    keepdims = em.static(keepdims, "mean: keepdims")
    dtype = None if dtype is None else static_dtype(em, dtype)
    if is_static(a):
        return fold(np.mean, a, axis=em.static(axis, "axis"), dtype=dtype, keepdims=keepdims)
    a = em.asarray(a)
    axes = normalize_axes(em, axis, a.ndim, "mean")
    res = _reduce_dtype(np.mean, a.dtype, dtype)
    # NumPy sums integers in float64 and float16 in float32, then divides and casts back.
    acc = dtype if dtype is not None else (np.dtype(np.float64) if a.dtype.kind in "biu" else
                                          np.dtype(np.float32) if a.dtype == np.float16 else a.dtype)
    if acc.kind not in "fc":
        acc = np.dtype(np.float64)
    n = int(np.prod([a.shape[i] for i in axes], dtype=np.int64))
    x = em.cast(a, acc)
    s = em.emit("reduce", x, kind="add", axes=axes) if axes else x
    count = em.full(n, acc, s.shape)
    out = _complex_divide(em, s, count) if is_complex(acc) else em.emit("div", s, count)
    return _keep(em, em.cast(out, res), a.shape, axes, keepdims)


# ---------------------------------------------------------------- linear algebra

@register("numpy.matmul")
def matmul(em, a, b):
    if is_static(a, b):
        return fold(np.matmul, a, b)
    try:
        loop = np.matmul.resolve_dtypes((em.dtype_of(a), em.dtype_of(b), None))
    except (TypeError, ValueError) as e:
        raise ShapeError(f"matmul: {e}") from None
    a, b = em.asarray(a, loop[0]), em.asarray(b, loop[1])
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError("matmul: Input operand does not have enough dimensions (a scalar can't be matrix-multiplied; use *)")
    a2 = a if a.ndim > 1 else reshape(em, a, (1,) + a.shape)
    b2 = b if b.ndim > 1 else reshape(em, b, b.shape + (1,))
    if a2.shape[-1] != b2.shape[-2]:
        raise ShapeError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"(n?,k),(k,m?)->(n?,m?) (size {b2.shape[-2]} is different from {a2.shape[-1]})")
    batch = broadcast_shapes("matmul", a2.shape[:-2], b2.shape[:-2])
    a2 = em.broadcast(a2, batch + a2.shape[-2:])
    b2 = em.broadcast(b2, batch + b2.shape[-2:])
    nb = len(batch)
    out = _dot(em, a2, b2, (nb + 1,), (nb,), tuple(range(nb)), tuple(range(nb)), loop[-1])
    shape = batch + (a.shape[-2:-1] if a.ndim > 1 else ()) + (b.shape[-1:] if b.ndim > 1 else ())
    return reshape(em, out, shape)


def _dot(em, a, b, lc, rc, lb, rb, out_dtype):
    if any(a.shape[i] == 0 for i in lc):  # an empty sum; IREE crashes on zero-length contractions
        out = OPS["dot_general"].type_rule((a.type, b.type), lhs_contract=lc, rhs_contract=rc,
                                           lhs_batch=lb, rhs_batch=rb)
        return em.full(0, out_dtype, out.shape)
    if is_bool(out_dtype):
        if lc != (a.ndim - 1,) or rc != (b.ndim - 2,) or lb != tuple(range(a.ndim - 2)):
            raise NotSupportedError("dot of boolean arrays with more than 2 dimensions is not supported",
                                    hint="use np.matmul, or cast to an integer dtype")
        # OR of ANDs, written out: IREE can't compile an i1 contraction.
        batch, (m, k), n = a.shape[:-2], a.shape[-2:], b.shape[-1]
        full = batch + (m, k, n)
        x = em.broadcast(reshape(em, a, batch + (m, k, 1)), full)
        y = em.broadcast(reshape(em, b, batch + (1, k, n)), full)
        return em.emit("reduce", em.emit("and", x, y), kind="or", axes=(len(batch) + 1,))
    acc = np.dtype(np.float32) if out_dtype == np.float16 else out_dtype
    out = em.emit("dot_general", em.cast(a, acc), em.cast(b, acc),
                  lhs_contract=lc, rhs_contract=rc, lhs_batch=lb, rhs_batch=rb)
    return em.cast(out, out_dtype)


@register("numpy.dot", method="dot")
def dot(em, a, b, out=None):
    if out is not None:
        raise NotSupportedError("dot: out= is not supported")
    if is_static(a, b):
        return fold(np.dot, a, b)
    if len(em.shape_of(a)) == 0 or len(em.shape_of(b)) == 0:
        return FUNCTIONS["numpy.multiply"](em, a, b)
    if len(em.shape_of(a)) <= 2 and len(em.shape_of(b)) <= 2:
        return matmul(em, a, b)
    loop = np.matmul.resolve_dtypes((em.dtype_of(a), em.dtype_of(b), None))
    a, b = em.asarray(a, loop[0]), em.asarray(b, loop[1])
    rc = 0 if b.ndim == 1 else b.ndim - 2
    if a.shape[-1] != b.shape[rc]:
        raise ShapeError(f"dot: shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != {b.shape[rc]} (dim {rc})")
    return _dot(em, a, b, (a.ndim - 1,), (rc,), (), (), loop[-1])


# ---------------------------------------------------------------- complex numbers

def _conjugate(em, x, out_dtype):
    return em.emit("complex", em.emit("real", x), em.emit("neg", em.emit("imag", x)))


ufunc(np.conjugate, _by_kind(c=_conjugate, any=lambda em, x, out_dtype: x), "numpy.conjugate", "numpy.conj",
      method=("conj", "conjugate"))


@register("numpy.real")
def real(em, val):
    if is_static(val):
        return fold(np.real, val)
    x = em.asarray(val)
    return em.emit("real", x) if is_complex(x.dtype) else x


@register("numpy.imag")
def imag(em, val):
    if is_static(val):
        return fold(np.imag, val)
    x = em.asarray(val)
    return em.emit("imag", x) if is_complex(x.dtype) else em.full(0, x.dtype, x.shape)


@register("numpy.angle")
def angle(em, z, deg=False):
    """arctan2(imag, real), as NumPy computes it; integers give float64."""
    if is_static(z):
        return fold(np.angle, z, deg=em.static(deg, "angle: deg"))
    x = em.asarray(z)
    if is_complex(x.dtype):
        re, im = em.emit("real", x), em.emit("imag", x)
    else:
        re = em.cast(x, np.result_type(x.dtype, np.float16) if x.dtype.kind == "f" else np.float64)
        im = em.full(0, re.dtype, re.shape)
    a = _via_float64("atan2")(em, im, re, out_dtype=re.dtype)
    if em.static(deg, "angle: deg"):
        a = em.emit("mul", a, em.full(180 / np.pi, a.dtype, a.shape))
    return a


PROPERTIES["real"] = real
PROPERTIES["imag"] = imag

# Deny by default: a NumPy function called with complex values compiles only if it is listed here
# (its implementation handles complex numbers, checked by tests/test_complex.py).
COMPLEX_OK = {
    "numpy." + n for n in """
    add subtract multiply true_divide divide negative positive absolute abs square exp log sqrt equal
    not_equal isnan isinf isfinite conjugate conj real imag angle where sum prod mean matmul dot vdot
    inner outer tensordot einsum reshape ravel transpose swapaxes moveaxis squeeze expand_dims
    concatenate concat stack hstack vstack column_stack row_stack split array_split tile repeat
    broadcast_to flip fliplr flipud roll diag diagonal trace tril triu copy take take_along_axis
    zeros_like ones_like full_like empty_like zeros ones full empty array asarray complex64 complex128""".split()}
COMPLEX_OK_METHODS = {"astype", "reshape", "ravel", "flatten", "transpose", "swapaxes", "squeeze", "copy",
                      "sum", "prod", "mean", "conj", "conjugate", "dot", "repeat", "diagonal", "trace"}
COMPLEX_OK_BUILTINS = {"abs", "len"}


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


@functools.cache
def _complex_ok_impls() -> frozenset:
    """The implementations behind the allowlists (read once every module has registered)."""
    return frozenset([FUNCTIONS[n] for n in COMPLEX_OK if n in FUNCTIONS]
                     + [METHODS[m] for m in COMPLEX_OK_METHODS if m in METHODS]
                     + [BUILTINS[b] for b in COMPLEX_OK_BUILTINS if b in BUILTINS])


def refuse_complex(impl, shown: str, args, kwargs) -> None:
    """Raise the located 'not supported' error for a call that involves complex numbers and whose
    implementation is not known to handle them (deny by default)."""
    if impl in _complex_ok_impls():
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


# ---------------------------------------------------------------- Python builtins

def _static_builtin(fn, what):
    def impl(em, *args, **kwargs):
        if not is_static(*args, *kwargs.values()):
            for x in (*args, *kwargs.values()):
                if isinstance(x, Traced) and x.params:
                    raise NeedStatic(x.params)
            raise ForbiddenError(f"{fn.__name__}() on an array needs its value at compile time, "
                                 f"but it is only known when the compiled code runs", hint=what)
        return fold(fn, *args, **kwargs)
    return impl


BUILTINS.update({
    "int": _static_builtin(int, "use x.astype(np.int64) to stay in compiled code"),
    "float": _static_builtin(float, "use x.astype(np.float64) to stay in compiled code"),
    "bool": _static_builtin(bool, "use a comparison that yields an array, with np.where"),
    "min": _static_builtin(min, "use np.minimum or np.min for arrays"),
    "max": _static_builtin(max, "use np.maximum or np.max for arrays"),
    "round": _static_builtin(round, "use np.round for arrays"),
    "tuple": _static_builtin(tuple, "tuples of arrays are built with (a, b)"),
    "list": _static_builtin(list, "lists of arrays are built with [a, b]"),
    "isinstance": lambda em, x, cls: isinstance(x, cls) if not isinstance(x, Traced) else
        (np.ndarray in (cls if isinstance(cls, tuple) else (cls,))),
})


@register(builtin="len")
def _len(em, x):
    if isinstance(x, Traced):
        if x.ndim == 0:
            raise ShapeError("len() of unsized object")
        return x.shape[0]
    return len(x)


def select_values(em, cond: Traced, a, b):
    """Python's `a if cond else b` for two scalar-like values of one type (as a run-time if would
    merge them); None if their types differ (the caller then builds a real if)."""
    from .regions import MergeError, unify
    try:
        shape, dtype, weak = unify(a, b, "value")
    except MergeError:
        return None
    x, y = em.broadcast(em.asarray(a, dtype), shape), em.broadcast(em.asarray(b, dtype), shape)
    pred = em.broadcast(Traced(cond.value), shape) if shape else cond
    out = em.emit("select", pred, em.cast(x, dtype), em.cast(y, dtype))
    params = _join_params([cond, a, b])
    return Traced(out.value, weak, params)


# ---------------------------------------------------------------- what loops run over

class Seq:
    """A sequence a loop can run over at run time: a length (int, or a run-time int that may be
    negative for an empty sequence) and the item at a position (int, or the loop's counter)."""

    def count(self, em):
        raise NotImplementedError

    def item(self, em, k):
        raise NotImplementedError

    def materialize(self, em):
        n = self.count(em)
        return [self.item(em, k) for k in range(em.static(n, "the length of this sequence"))]


class RangeSeq(Seq):
    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step

    def count(self, em):
        if is_static(self.start, self.stop):
            return len(range(self.start, self.stop, self.step))
        k = self.step
        span = apply_operator(em, "Sub", self.stop, self.start) if k > 0 else apply_operator(em, "Sub", self.start, self.stop)
        if abs(k) != 1:
            span = apply_operator(em, "FloorDiv", apply_operator(em, "Add", span, abs(k) - 1), abs(k))
        # a negative count means no iterations: loops only test `k < count`. (No max(count, 0):
        # IREE 3.13 miscompiles nested loops whose entry test is 0 < max(n, 0).)
        return span

    def item(self, em, k):
        if self.step != 1:
            k = apply_operator(em, "Mult", k, self.step)
        return k if isinstance(self.start, int) and self.start == 0 else apply_operator(em, "Add", self.start, k)


class ArraySeq(Seq):
    def __init__(self, x: Traced):
        if x.ndim == 0:
            raise ShapeError("iteration over a 0-d array")
        self.x = x

    def count(self, em):
        return self.x.shape[0]

    def item(self, em, k):
        from .indexing import getitem
        return getitem(em, self.x, k)


class ListSeq(Seq):
    def __init__(self, items):
        self.items = list(items)

    def count(self, em):
        return len(self.items)

    def item(self, em, k):
        return self.items[em.static(k, "a position in a Python list")]


class EnumerateSeq(Seq):
    def __init__(self, seq: Seq, start):
        self.seq, self.start = seq, start

    def count(self, em):
        return self.seq.count(em)

    def item(self, em, k):
        return (apply_operator(em, "Add", self.start, k), self.seq.item(em, k))


class ZipSeq(Seq):
    def __init__(self, seqs):
        self.seqs = seqs

    def count(self, em):
        counts = [s.count(em) for s in self.seqs]
        if is_static(*counts):
            return min(counts)
        out = counts[0]
        for c in counts[1:]:
            out = FUNCTIONS["numpy.minimum"](em, out, c)
        return out

    def item(self, em, k):
        return tuple(s.item(em, k) for s in self.seqs)


def as_seq(x) -> Seq | None:
    """The Seq a loop over x runs over; None for other Python iterables (unrolled as they are)."""
    if isinstance(x, Seq):
        return x
    if isinstance(x, Traced):
        return ArraySeq(x)
    if isinstance(x, range):
        return RangeSeq(x.start, x.stop, x.step)
    return None


def _range(em, *args):
    if is_static(*args):
        return fold(range, *args)
    for a in args:
        if isinstance(a, Traced) and (a.ndim or a.weak is float or not (a.weak is int or is_int(a.dtype))):
            raise JitError(f"TypeError: range() takes integers, not a {a.dtype}[{','.join(map(str, a.shape))}] value")
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (args + (1,))[:3]
    step = em.static(step, "range(): the step")
    if step == 0:
        raise JitError("ValueError: range() arg 3 must not be zero")
    return RangeSeq(start, stop, step)


def _enumerate(em, it, start=0):
    if isinstance(it, (Traced, Seq)):
        return EnumerateSeq(as_seq(it), start)
    return list(enumerate(it, start))


def _zip(em, *its):
    if any(isinstance(i, (Traced, Seq, range)) for i in its) and any(isinstance(i, (Traced, Seq)) for i in its):
        return ZipSeq([as_seq(i) or ListSeq(i) for i in its])
    return list(zip(*its))


BUILTINS.update({"range": _range, "enumerate": _enumerate, "zip": _zip})


# math functions fold on compile-time values; no math function is called on a traced array.
