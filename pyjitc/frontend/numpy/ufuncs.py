"""ufuncs: NumPy's ufuncs on traced arrays. apply_ufunc gives every ufunc NumPy's semantics (loop
dtypes from NumPy's own resolver, broadcasting, NEP 50 weak Python scalars); each ufunc is then one
registration: its NumPy names and a lowering that sees operands already in the loop dtypes.
Lowerings that need care to match NumPy's float results live in accurate.py."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...ir import dims
from ...errors import NotSupportedError, ShapeError
from ...ir.types import is_bool, is_float
from ..operators import apply_operator
from ..python_ints import is_python_int
from ..registry import FUNCTIONS, register
from ..store_values import python_int_past
from ..values import Emitter, Traced, fold, is_py_scalar, is_static, items_of, join_params
from . import accurate
from .dtypes import cast_impl
from .elementwise import by_kind, cmp, const, identity, in_double, isnan, prim, sel, signbit, via_float64, zero_like


def broadcast_shapes(name, *shapes):
    try:
        return dims.broadcast_shapes(*shapes)
    except ValueError:
        raise ShapeError(f"{name}: operands could not be broadcast together with shapes "
                         + " ".join(str(tuple(s)) for s in shapes)) from None


_PY_DEFAULT = {int: np.dtype(np.int64), float: np.dtype(np.float64), complex: np.dtype(np.complex128)}


def _sizes_as_values(em, ufunc, args) -> tuple:
    """Symbolic sizes among ufunc arguments as run-time Python ints; where the ufunc computes in
    floats (np.sqrt(n), n / x), as a Python float counted on the device (em.full)."""
    try:
        loop = ufunc.resolve_dtypes(tuple(_PY_DEFAULT.get(em.dtype_of(a), em.dtype_of(a)) if
                                          isinstance(em.dtype_of(a), type) else em.dtype_of(a) for a in args)
                                    + (None,) * ufunc.nout)
    except (TypeError, ValueError):
        loop = (None,) * len(args)
    out = []
    for a, dt in zip(args, loop):
        if isinstance(a, dims.Dim):
            if dt is not None and dt.kind in "fc":
                a = Traced(em.full(a, dt, ()).value, complex if dt.kind == "c" else float, frozenset())
            else:
                a = em.asarray(a)
        out.append(a)
    return tuple(out)


def _holds_run_time_values(a) -> bool:
    return isinstance(a, (list, tuple)) and next(items_of(a, Traced), None) is not None


def apply_ufunc(em: Emitter, ufunc: np.ufunc, args, lower) -> Any:
    """NumPy ufunc semantics: loop dtypes from NumPy's own resolver, broadcasting, weak scalars.
    `lower(em, *operands, out_dtype)` emits the computation on operands already in loop dtypes."""
    if any(isinstance(a, dims.Dim) for a in args):   # a run-time size: the Python int it is
        args = _sizes_as_values(em, ufunc, args)
    if any(_holds_run_time_values(a) for a in args):   # np.isnan([lo, hi]) of run-time numbers: an array
        args = tuple(FUNCTIONS["numpy.asarray"].plain(em, a) if _holds_run_time_values(a) else a for a in args)
    if is_static(*args):
        return fold(ufunc, *args)
    beyond = _compare_beyond_range(em, ufunc, args)
    if beyond is not None:
        return beyond
    name = ufunc.__name__
    try:
        dtypes = tuple(em.dtype_of(a) for a in args)
        loop = ufunc.resolve_dtypes(dtypes + (None,) * ufunc.nout)
        if any(d == object for d in loop):   # only Python scalars (e.g. int < int): 64-bit, as Python's
            loop = ufunc.resolve_dtypes(tuple(_PY_DEFAULT.get(d, d) for d in dtypes) + (None,) * ufunc.nout)
    except (TypeError, ValueError) as e:
        raise ShapeError(f"{name}: {e}") from None
    shape = broadcast_shapes(name, *[em.shape_of(a) for a in args])
    narrowed = [i for i, a in enumerate(args) if _run_time_python_int(a) and loop[i].kind in "iu"
                and loop[i] != np.int64 and i < ufunc.nin]
    if narrowed and name in _BELOW and len(args) == 2:
        return _compare_python_int(em, name, args, loop, shape)
    for i in narrowed:   # NumPy (NEP 50) raises OverflowError for a Python int past the array's dtype
        em.check(python_int_past(em, args[i], loop[i]), f"OverflowError: a Python integer is out of bounds for {loop[i]} ({name})")
    ops = [em.operand(a, loop[i], shape) for i, a in enumerate(args)]
    out = lower(em, *ops, out_dtype=loop[-1])
    if out.dtype != loop[-1]:
        out = em.cast(out, loop[-1])
    weak = None
    if all(is_py_scalar(a) or (isinstance(a, Traced) and a.weak) for a in args):
        weak = {"b": bool, "i": int, "u": int, "f": float, "c": complex}[loop[-1].kind]
    return Traced(out.value, weak, join_params(args))


# x OP k for a Python int k past the integer dtype of x: True or False everywhere (NEP 50's
# rule for comparisons: `u > -1` of an unsigned array is all True, where arithmetic would raise)
_BELOW = {"less": True, "less_equal": True, "greater": False, "greater_equal": False, "equal": False, "not_equal": True}
_MIRROR = {"less": "greater", "less_equal": "greater_equal", "greater": "less", "greater_equal": "less_equal",
           "equal": "equal", "not_equal": "not_equal"}


def _run_time_python_int(a) -> bool:
    return isinstance(a, Traced) and is_python_int(a)


def _compare_python_int(em, name, args, loop, shape):
    """x OP a of an integer array and a run-time Python int (NEP 50: exact, whatever a is): in
    int64 for arrays of 32 bits or fewer; a uint64 array against a negative a by its sign."""
    k = 0 if _run_time_python_int(args[0]) else 1
    a, x = args[k], args[1 - k]
    dt = em.dtype_of(x)
    if isinstance(dt, np.dtype) and dt == np.uint64:
        v = em.cast(a, np.int64)
        plain = _compare_as(em, name, args, loop[0], shape)
        side = name if k == 1 else _MIRROR[name]        # as `x OP a`
        negative = em.broadcast(em.emit("compare", v, em.constant(np.int64(0)), direction="LT"), shape)
        below = _BELOW[side] if side in ("equal", "not_equal") else not _BELOW[side]   # (see the table)
        return em.emit("select", negative, em.full(below, np.bool_, shape), plain)
    return _compare_as(em, name, args, np.dtype(np.int64), shape)


def _compare_as(em, name, args, dtype, shape):
    ops = [em.operand(a, dtype, shape) for a in args]
    direction = {"less": "LT", "less_equal": "LE", "greater": "GT", "greater_equal": "GE", "equal": "EQ",
                 "not_equal": "NE"}[name]
    return Traced(em.emit("compare", *ops, direction=direction).value, None, join_params(args))


def _compare_beyond_range(em, ufunc, args):
    if ufunc.__name__ not in _BELOW or len(args) != 2:
        return None
    for k in (0, 1):
        a, x = args[k], args[1 - k]
        if type(a) is not int or not isinstance(x, Traced) or x.weak or x.dtype.kind not in "iu":
            continue
        info = np.iinfo(x.dtype)
        if info.min <= a <= info.max:
            return None
        name = ufunc.__name__ if k == 1 else _MIRROR[ufunc.__name__]    # as `x OP a`
        above = a > info.max or name in ("equal", "not_equal")     # (these two: the same either side)
        return em.full(_BELOW[name] if above else not _BELOW[name], np.bool_, x.shape)
    return None


def ufunc_impl(np_ufunc, lower):
    """The implementation of a ufunc (not registered): `lower` sees operands in its loop dtypes."""
    def impl(em, *args, out=None, where=True, dtype=None, casting="same_kind", **kwargs):
        if out is None and len(args) == np_ufunc.nin + np_ufunc.nout:   # np.add(x, y, z): z is out
            args, out = args[:np_ufunc.nin], args[np_ufunc.nin:]
        casting = em.static(casting, f"{np_ufunc.__name__}: casting")
        if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
            raise ShapeError("ValueError: casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe'")
        if casting not in ("same_kind", "unsafe") and out is None:
            kwargs["casting"] = casting    # (the inputs' casts checked by it: not supported)
        if (where is not True and out is None) or kwargs:   # (without out=, NumPy leaves those places unset)
            raise NotSupportedError(f"{np_ufunc.__name__}: the arguments {', '.join(['where'] * (where is not True) + list(kwargs))} are not supported",
                                    hint="pass out= with where=, or use np.where")
        if out is not None:
            result = impl(em, *args, dtype=dtype)
            if where is not True:     # out keeps its values where `where` is False
                target = _out_array(np_ufunc.__name__, out)
                if isinstance(result, Traced) and result.dtype == target.dtype:
                    result = FUNCTIONS["numpy.where"](em, where, result, target)
            return _into(em, np_ufunc, out, result, casting)
        if len(args) != np_ufunc.nin:
            raise ShapeError(f"{np_ufunc.__name__}() takes {np_ufunc.nin} positional arguments but {len(args)} were given")
        if dtype is not None:
            return impl(em, *[cast_impl(em, a, dtype) for a in args])
        out = apply_ufunc(em, np_ufunc, args, lower)
        # called as a NumPy function on Python numbers alone, a ufunc gives NumPy scalars
        # (np.add(1, 2) is np.int64(3)); the operators (1 + 2) keep Python's (impl.operator)
        return tuple(map(_numpy_scalar, out)) if isinstance(out, tuple) else _numpy_scalar(out)

    def operator(em, *args):
        return apply_ufunc(em, np_ufunc, args, lower)
    impl.__name__ = np_ufunc.__name__
    impl.ufunc = np_ufunc        # elementwise: masked.py applies it to masked arrays
    impl.operator = operator
    return impl


def _numpy_scalar(x):
    """A weakly typed (Python number) result as the NumPy scalar of its dtype."""
    return Traced(x.value, None, x.params) if isinstance(x, Traced) and x.weak is not None and x.view is None else x


def _into(em, np_ufunc, out, result, casting="same_kind"):
    """ufunc(..., out=y): the result written into y in place (views and arguments see it), and y
    returned itself; cast to y's dtype where the rule `casting` (NumPy's default same_kind) allows."""
    from ..assignment import store
    out = _out_array(np_ufunc.__name__, out)
    if np_ufunc.nout != 1 or not isinstance(result, Traced):
        raise NotSupportedError(f"{np_ufunc.__name__}: out= is supported for single-output ufuncs")
    if result.dtype != out.dtype:   # by `casting`, NumPy's default same_kind (np.add(i, 1, out=floats))
        if not np.can_cast(result.dtype, out.dtype, casting=casting):
            raise ShapeError(f"UFuncTypeError: Cannot cast ufunc '{np_ufunc.__name__}' output from "
                             f"dtype('{result.dtype}') to dtype('{out.dtype}') with casting rule '{casting}'")
        result = em.cast(result, out.dtype)
    try:
        fits = dims.broadcast_shapes(result.shape, out.shape) == out.shape
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"ValueError: non-broadcastable output operand with shape {tuple(out.shape)} doesn't match "
                         f"the broadcast shape {tuple(result.shape)}")
    store(em, out, Ellipsis, result, f"np.{np_ufunc.__name__}(..., out=)")
    return out


def _out_array(name, out) -> Traced:
    """The array an `out=` argument names (a one-item tuple unwrapped); NumPy's TypeError otherwise."""
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    if not isinstance(out, Traced) or out.view is None and out.ndim == 0 and out.weak is not None:
        raise ShapeError(f"TypeError: {name}: return arrays must be of ArrayType")
    return out


def into_out(em, name, out, result, casting):
    """f(..., out=y) for a function that is not an elementwise ufunc (a reduction, a scan, a
    contraction): the result, whose shape must be y's, cast to y's dtype by NumPy's rule
    `casting` ("unsafe": reductions and scans, which compute in their own dtype and cast at the
    end; "same_kind": matmul; "equal": np.dot, which needs y's dtype itself), written into y
    (its views and the caller see it); y returned."""
    from ..assignment import store
    out = _out_array(name, out)
    result = em.asarray(result)
    if tuple(result.shape) != tuple(out.shape):
        raise ShapeError(f"ValueError: {name}: out= has shape {tuple(out.shape)}, the result {tuple(result.shape)}")
    if result.dtype != out.dtype and (casting == "equal" or not np.can_cast(result.dtype, out.dtype, casting)):
        raise ShapeError(f"ValueError: {name}: out= of dtype {out.dtype} for a {result.dtype} result (NumPy's "
                         f"rule here: {'the same dtype' if casting == 'equal' else repr(casting)})")
    store(em, out, Ellipsis, em.cast(result, out.dtype), f"np.{name}(..., out=)")
    return out


def ufunc(np_ufunc, lower, *names, method=(), builtin=(), complex_ok=False, note=""):
    """Register a ufunc under its NumPy names (numpy.<its name> if none are given)."""
    impl = register(*(names or (f"numpy.{np_ufunc.__name__}",)), method=method, complex_ok=complex_ok,
                    note=note)(ufunc_impl(np_ufunc, lower))
    if builtin:   # a Python builtin (abs) gives Python numbers for Python numbers
        register(builtin=builtin, complex_ok=complex_ok, note=note)(impl.operator)
    return impl


# ---------------------------------------------------------------- lowerings

def _floor_divide_int(em, a, b, out_dtype):
    zero, one = zero_like(em, b), em.full(1, b.dtype, b.shape)
    bad = cmp(em, b, zero, "EQ")
    signed = a.dtype.kind == "i"
    if signed:  # b == -1 would trap on INT_MIN / -1; NumPy wraps to -a
        minus1 = cmp(em, b, em.full(-1, b.dtype, b.shape), "EQ")
        bad = em.emit("or", bad, minus1)
    safe = sel(em, bad, one, b)
    q, r = em.emit("div", a, safe), em.emit("rem", a, safe)
    if signed:
        q = sel(em, minus1, em.emit("neg", a), q)
        adjust = em.emit("and", cmp(em, r, zero, "NE"),
                         cmp(em, cmp(em, r, zero, "LT"), cmp(em, b, zero, "LT"), "NE"))
        q = sel(em, adjust, em.emit("sub", q, one), q)
    return sel(em, cmp(em, b, zero, "EQ"), zero, q)


def _remainder_int(em, a, b, out_dtype):
    zero, one = zero_like(em, b), em.full(1, b.dtype, b.shape)
    bad = cmp(em, b, zero, "EQ")
    if a.dtype.kind == "i":
        bad = em.emit("or", bad, cmp(em, b, em.full(-1, b.dtype, b.shape), "EQ"))
    r = sel(em, bad, zero, em.emit("rem", a, sel(em, bad, one, b)))
    if a.dtype.kind == "i":
        adjust = em.emit("and", cmp(em, r, zero, "NE"),
                         cmp(em, cmp(em, r, zero, "LT"), cmp(em, b, zero, "LT"), "NE"))
        r = sel(em, adjust, em.emit("add", r, b), r)
    return r


def _float_divmod(em, a, b):
    """NumPy's npy_divmod for floats (fmod-based, so results match NumPy bit for bit in
    the common cases), returning (floor quotient, remainder). float16 is computed in float32, as
    NumPy's half loops do (in float16 itself 1043 // 1.198 gave 869, NumPy 870: bench/accuracy.py)."""
    if a.dtype == np.float16:
        return tuple(em.cast(r, np.float16) for r in _float_divmod(em, em.cast(a, np.float32), em.cast(b, np.float32)))
    zero = zero_like(em, b)
    negzero = em.full(-0.0, b.dtype, b.shape)
    mod = em.emit("rem", a, b)
    div = em.emit("div", em.emit("sub", a, mod), b)
    fix = em.emit("and", cmp(em, mod, zero, "NE"),
                  cmp(em, cmp(em, b, zero, "LT"), cmp(em, mod, zero, "LT"), "NE"))
    mod = sel(em, fix, em.emit("add", mod, b), mod)
    div = sel(em, fix, em.emit("sub", div, em.full(1, b.dtype, b.shape)), div)
    mod = sel(em, cmp(em, mod, zero, "EQ"), sel(em, cmp(em, b, zero, "LT"), negzero, zero), mod)
    floordiv = em.emit("floor", div)
    half = em.full(0.5, b.dtype, b.shape)
    floordiv = sel(em, cmp(em, em.emit("sub", div, floordiv), half, "GT"),
                    em.emit("add", floordiv, em.full(1, b.dtype, b.shape)), floordiv)
    true_q = em.emit("div", a, b)
    floordiv = sel(em, cmp(em, div, zero, "EQ"), sel(em, signbit(em, true_q), negzero, zero), floordiv)
    floordiv = sel(em, cmp(em, b, zero, "EQ"), true_q, floordiv)
    return floordiv, mod


def _compare(direction):
    def lower(em, a, b, out_dtype):
        if a.dtype == b.dtype:
            return cmp(em, a, b, direction)
        # NumPy compares int64 with uint64 exactly (mixed loop); so do we.
        swap = {"LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE", "EQ": "EQ", "NE": "NE"}
        d = direction
        if a.dtype.kind == "u":
            a, b, d = b, a, swap[direction]
        neg = cmp(em, a, zero_like(em, a), "LT")
        same = cmp(em, em.cast(a, b.dtype), b, d)
        if d in ("LT", "LE", "NE"):
            return em.emit("or", neg, same)
        return em.emit("and", em.emit("not", neg), same)
    return lower


def _trunc(em, x, out_dtype):
    return sel(em, cmp(em, x, const(em, 0, x), "LT"), em.emit("ceil", x), em.emit("floor", x))


def _copysign(em, x, y, out_dtype):
    ax = em.emit("abs", x)
    return sel(em, signbit(em, y), em.emit("neg", ax), ax)


def _fmax_fmin(kind):
    def lower(em, x, y, out_dtype):
        if not is_float(x.dtype):
            return em.emit(kind, x, y) if not is_bool(x.dtype) else em.emit("or" if kind == "max" else "and", x, y)
        m = em.emit(kind, x, y)
        return sel(em, isnan(em, x), y, sel(em, isnan(em, y), x, m))
    return lower


def _logaddexp(base):
    """log(base**a + base**b) (base e where base is 1.0), as NumPy's npy_logaddexp: the larger plus
    log1p of the smaller's ratio; a == b (infinities too) gives a + log(2)."""
    def fn(em, a, b):
        m = em.emit("max", a, b)                      # NaN if either is
        d = em.emit("neg", em.emit("abs", em.emit("sub", a, b)))
        if base == 2.0:
            tail = em.emit("mul", em.emit("log1p", accurate.exp2(em, d)), const(em, 1.0 / LN2, d))
            same = em.emit("add", a, const(em, 1.0, a))
        else:
            tail = em.emit("log1p", em.emit("exp", d))
            same = em.emit("add", a, const(em, LN2, a))
        return sel(em, cmp(em, a, b, "EQ"), same, em.emit("add", m, tail))
    return fn


def _heaviside(em, x, h, out_dtype):
    zero = const(em, 0.0, x)
    out = sel(em, cmp(em, x, zero, "LT"), zero, sel(em, cmp(em, x, zero, "GT"), const(em, 1.0, x), h))
    return sel(em, isnan(em, x), x, out)


def _scale(factor):
    return lambda em, x, out_dtype: em.emit("mul", x, const(em, factor, x))


def _to_bool_ufunc(float_fn, other=False, combine="or"):
    """A float predicate; constant `other` for integers and bools; for complex numbers the
    predicate of the real and the imaginary part, combined with `combine`."""
    def lower(em, x, out_dtype):
        if is_float(x.dtype):
            return float_fn(em, x)
        if x.dtype.kind == "c":
            return em.emit(combine, float_fn(em, em.emit("real", x)), float_fn(em, em.emit("imag", x)))
        return em.full(other, np.bool_, x.shape)
    return lower


def _logical(prim):
    return lambda em, a, b, out_dtype: em.emit(prim, em.cast(a, np.bool_), em.cast(b, np.bool_))


def _reciprocal(em, x, out_dtype):
    if not is_float(x.dtype):
        raise NotSupportedError("reciprocal of integers (NumPy's 1 // x) is not supported",
                                hint="use 1.0 / x")
    return em.emit("div", const(em, 1.0, x), x)


def _rint(em, x, out_dtype):
    return em.emit("round_even", x) if is_float(x.dtype) else x


def _fmod(em, a, b, out_dtype):
    """C fmod: the remainder has the dividend's sign (stablehlo.remainder). Integers: NumPy gives
    0 for a divisor of 0."""
    if is_float(a.dtype):
        return em.emit("rem", a, b)
    if is_bool(a.dtype):
        raise NotSupportedError("np.fmod of booleans is not supported")
    zero = const(em, 0, b)
    safe = sel(em, cmp(em, b, zero, "EQ"), const(em, 1, b), b)
    if a.dtype.kind == "i":   # INT_MIN fmod -1 overflows in C: the answer is 0
        safe = sel(em, cmp(em, safe, const(em, -1, b), "EQ"), const(em, 1, b), safe)
    return sel(em, cmp(em, b, zero, "EQ"), zero, em.emit("rem", a, safe))


# ---------------------------------------------------------------- the ufuncs

_TRIG_NOTE = "float16/32 computed in float64 (IREE's float32 versions are up to 5e5 ulp off)"
_COMPOSED_NOTE = "composed from exp/log/atan2; float16/32 computed in float64"
LN2, LN10 = math.log(2.0), math.log(10.0)

# arithmetic
ufunc(np.add, by_kind(b=prim("or"), any=prim("add")), "numpy.add", complex_ok=True)
ufunc(np.subtract, prim("sub"), "numpy.subtract", complex_ok=True)
ufunc(np.multiply, by_kind(b=prim("and"), any=prim("mul")), "numpy.multiply", complex_ok=True)
ufunc(np.true_divide, by_kind(c=accurate.complex_divide, any=prim("div")), "numpy.true_divide", "numpy.divide",
      complex_ok=True)
ufunc(np.floor_divide, by_kind(iu=_floor_divide_int, f=lambda em, a, b, out_dtype: _float_divmod(em, a, b)[0]),
      "numpy.floor_divide")
ufunc(np.remainder, by_kind(iu=_remainder_int, f=lambda em, a, b, out_dtype: _float_divmod(em, a, b)[1]),
      "numpy.remainder", "numpy.mod")
ufunc(np.fmod, _fmod)
ufunc(np.negative, by_kind(u=lambda em, x, out_dtype: em.emit("sub", zero_like(em, x), x), any=prim("neg")),
      "numpy.negative", complex_ok=True)
ufunc(np.positive, lambda em, x, out_dtype: x, "numpy.positive", complex_ok=True)
ufunc(np.absolute, by_kind(b=lambda em, x, out_dtype: x, u=lambda em, x, out_dtype: x,
                           c=lambda em, z, out_dtype: accurate.hypot(em, em.emit("real", z), em.emit("imag", z)),
                           any=prim("abs")),
      "numpy.absolute", "numpy.abs", builtin="abs", complex_ok=True)
ufunc(np.fabs, prim("abs"))   # (its loops are float only: ints come in as float64, as NumPy's)
ufunc(np.square, by_kind(b=prim("and"), any=lambda em, x, out_dtype: em.emit("mul", x, x)), "numpy.square",
      complex_ok=True)
ufunc(np.reciprocal, _reciprocal, note="floats only (integer reciprocal is refused)")
ufunc(np.sign, by_kind(b=identity, u=lambda em, x, out_dtype: em.cast(cmp(em, x, const(em, 0, x), "NE"), x.dtype),
                       # (np.sign(-0.0) is +0.0; stablehlo.sign keeps the zero's sign)
                       f=lambda em, x, out_dtype: sel(em, cmp(em, x, const(em, 0, x), "EQ"), const(em, 0, x),
                                                      em.emit("sign", x)),
                       any=lambda em, x, out_dtype: em.emit("sign", x)))
ufunc(np.maximum, by_kind(b=prim("or"), any=prim("max")), "numpy.maximum")
ufunc(np.minimum, by_kind(b=prim("and"), any=prim("min")), "numpy.minimum")
ufunc(np.fmax, _fmax_fmin("max"))
ufunc(np.fmin, _fmax_fmin("min"))
ufunc(np.heaviside, _heaviside)
ufunc(np.copysign, _copysign)
ufunc(np.signbit, by_kind(f=lambda em, x, out_dtype: signbit(em, x),
                          any=lambda em, x, out_dtype: em.full(False, np.bool_, x.shape)))

# comparisons and predicates
for _u, _d in ((np.equal, "EQ"), (np.not_equal, "NE"), (np.less, "LT"), (np.less_equal, "LE"),
               (np.greater, "GT"), (np.greater_equal, "GE")):
    ufunc(_u, _compare(_d), complex_ok=_d in ("EQ", "NE"))
ufunc(np.isnan, _to_bool_ufunc(lambda em, x: isnan(em, x)), complex_ok=True)
ufunc(np.isinf, _to_bool_ufunc(lambda em, x: cmp(em, em.emit("abs", x), const(em, np.inf, x), "EQ")), complex_ok=True)
ufunc(np.isfinite, _to_bool_ufunc(lambda em, x: em.emit("is_finite", x), other=True, combine="and"), complex_ok=True)

# logical and bitwise
ufunc(np.logical_not, lambda em, x, out_dtype: em.emit("not", em.cast(x, np.bool_)))
ufunc(np.logical_and, _logical("and"))
ufunc(np.logical_or, _logical("or"))
ufunc(np.logical_xor, _logical("xor"))
ufunc(np.bitwise_and, prim("and"))
ufunc(np.bitwise_or, prim("or"))
ufunc(np.bitwise_xor, prim("xor"))
ufunc(np.invert, prim("not"), "numpy.invert", "numpy.bitwise_not")
ufunc(np.left_shift, lambda em, a, b, out_dtype: em.emit("shift_left", a, b), "numpy.left_shift",
      "numpy.bitwise_left_shift")
ufunc(np.right_shift, lambda em, a, b, out_dtype: em.emit(
    "shift_right_arithmetic" if a.dtype.kind == "i" else "shift_right_logical", a, b),
    "numpy.right_shift", "numpy.bitwise_right_shift")

# rounding
for _u, _p in ((np.floor, "floor"), (np.ceil, "ceil")):   # integer loops (NumPy 2.1+): the value itself
    ufunc(_u, by_kind(f=prim(_p), any=lambda em, x, out_dtype: x))
ufunc(np.trunc, by_kind(f=_trunc, any=identity), "numpy.trunc", "numpy.fix")
ufunc(np.rint, _rint, "numpy.rint")

# exponents, logarithms, roots
ufunc(np.exp, by_kind(c=in_double(lambda em, z: accurate.complex_exp(em, z)), any=accurate.exp_f32("exp")), complex_ok=True)
ufunc(np.expm1, accurate.exp_f32("expm1"))
ufunc(np.exp2, in_double(accurate.exp2), note=_COMPOSED_NOTE)
for _u, _p in ((np.log, "log"), (np.sqrt, "sqrt")):
    ufunc(_u, by_kind(c=via_float64(_p), any=prim(_p)), complex_ok=True)
ufunc(np.log1p, prim("log1p"))
ufunc(np.logaddexp, in_double(_logaddexp(2.0 ** 0)), note=_COMPOSED_NOTE)
ufunc(np.logaddexp2, in_double(_logaddexp(2.0)), note=_COMPOSED_NOTE)
ufunc(np.log2, in_double(accurate.log_base(LN2)), note=_COMPOSED_NOTE)
ufunc(np.log10, in_double(accurate.log_base(LN10)), note=_COMPOSED_NOTE)
ufunc(np.cbrt, in_double(accurate.cbrt), note="abs(x) ** (1/3) and one Newton step, computed in float64 (within 1 ulp)")
ufunc(np.hypot, accurate.hypot)

# trigonometric and hyperbolic
for _u, _p in ((np.sin, "sin"), (np.cos, "cos")):
    ufunc(_u, accurate.sincos(_p), note=_TRIG_NOTE + "; under @jit, arrays of 16384+ elements vectorised (within 2 "
                                                      "ulp), libm if any |x| > 1e6")
ufunc(np.tan, via_float64("tan"), note=_TRIG_NOTE)
# IREE's float32 tanh is up to 4 ulp off everywhere (bench/accuracy.py); in float64 and rounded: 1.
ufunc(np.tanh, via_float64("tanh"))
ufunc(np.arctan2, via_float64("atan2"))
for _u, _fn, _alias in ((np.sinh, accurate.sinh, ()), (np.cosh, accurate.cosh, ()),
                        (np.arcsin, accurate.arcsin, ("numpy.asin",)), (np.arccos, accurate.arccos, ("numpy.acos",)),
                        (np.arctan, accurate.arctan, ("numpy.atan",)), (np.arcsinh, accurate.arcsinh, ("numpy.asinh",)),
                        (np.arccosh, accurate.arccosh, ("numpy.acosh",)),
                        (np.arctanh, accurate.arctanh, ("numpy.atanh",))):
    ufunc(_u, in_double(_fn), f"numpy.{_u.__name__}", *_alias, note=_COMPOSED_NOTE)
ufunc(np.deg2rad, _scale(math.pi / 180), "numpy.deg2rad", "numpy.radians")
ufunc(np.rad2deg, _scale(180 / math.pi), "numpy.rad2deg", "numpy.degrees")


@register("numpy.divmod")
def divmod_(em, a, b, **kwargs):
    """(a // b, a % b), as NumPy's divmod ufunc."""
    return FUNCTIONS["numpy.floor_divide"](em, a, b, **kwargs), FUNCTIONS["numpy.remainder"](em, a, b, **kwargs)


@register(builtin="divmod")
def divmod_builtin(em, a, b):
    """Python's divmod: Python numbers for Python numbers, NumPy's on arrays."""
    return (FUNCTIONS["numpy.floor_divide"].operator(em, a, b), FUNCTIONS["numpy.remainder"].operator(em, a, b))


_clip_ufunc = np._core.umath.clip


def _clip_bounds(em, a, a_min, a_max):
    """NumPy 2's clip of an integer array by Python ints past its dtype: a bound past the side it
    limits is that side's end (`np.clip(u8, 0, 300)` is u8's own range), a bound past the other
    side raises OverflowError (compile-time ints here, run-time ones when the function runs)."""
    dt = em.dtype_of(a)
    if not isinstance(dt, np.dtype) or dt.kind not in "iu":
        return a_min, a_max
    info = np.iinfo(dt)
    out = []
    for bound, is_min in ((a_min, True), (a_max, False)):
        if type(bound) is int:
            if (bound > info.max) if is_min else (bound < info.min):
                raise ShapeError(f"OverflowError: Python integer {bound} out of bounds for {dt}")
            bound = max(bound, info.min) if is_min else min(bound, info.max)
        elif _run_time_python_int(bound):
            v = em.cast(bound, np.int64)
            edge, far = (info.min, info.max) if is_min else (info.max, info.min)
            if dt == np.uint64 and not is_min:
                edge = None      # (every int64 is at most uint64's end)
            em.check(em.emit("compare", v, em.constant(np.int64(min(far, np.iinfo(np.int64).max))),
                             direction="GT" if is_min else "LT"),
                     f"OverflowError: a Python integer is out of bounds for {dt} (clip)")
            if edge is not None:
                v = em.emit("max" if is_min else "min", v, em.constant(np.int64(edge)))
            bound = Traced(v.value, int, bound.params)
        out.append(bound)
    return out


@register("numpy.clip", method="clip")
def clip(em, a, a_min=None, a_max=None, out=None, **kwargs):
    if "min" in kwargs or "max" in kwargs:
        a_min, a_max = kwargs.pop("min", a_min), kwargs.pop("max", a_max)
    if kwargs:
        raise NotSupportedError(f"clip: the arguments {', '.join(kwargs)} are not supported")
    if out is not None:   # computed, then written into out (views and arguments see it)
        return _into(em, _clip_ufunc, out, clip(em, a, a_min, a_max))
    if a_min is None and a_max is None:
        raise ShapeError("clip: One of max or min must be given")
    a_min, a_max = _clip_bounds(em, a, a_min, a_max)
    if a_min is None:
        return FUNCTIONS["numpy.minimum"](em, a, a_max)
    if a_max is None:
        return FUNCTIONS["numpy.maximum"](em, a, a_min)

    def lower(em, x, lo, hi, out_dtype):
        if is_bool(x.dtype):
            return em.emit("and", em.emit("or", x, lo), hi)
        return em.emit("min", em.emit("max", x, lo), hi)
    return apply_ufunc(em, _clip_ufunc, (a, a_min, a_max), lower)


@register("numpy.round", "numpy.around", method="round")
def round_(em, a, decimals=0, out=None):
    decimals = em.static(decimals, "round: decimals")
    if out is not None:   # np.round(x / 3, 1, out=x): written by NumPy's ufuncs (same_kind casting)
        return into_out(em, "round", out, round_(em, a, decimals), "same_kind")
    if is_static(a):
        return fold(np.round, a, decimals)
    a = em.asarray(a)
    if is_bool(a.dtype):   # NumPy: rint's float16 loop for decimals=0, a casting error otherwise
        if decimals:
            raise ShapeError("UFuncTypeError: Cannot cast ufunc 'multiply' output from dtype('float64') to "
                             "dtype('bool') with casting rule 'same_kind'")
        return em.cast(a, np.float16)
    if not is_float(a.dtype):
        if decimals >= 0:
            return a
        # to a multiple of 10**-decimals, half to even, in the integer dtype (as NumPy)
        f = 10 ** (-decimals)
        q = apply_operator(em, "FloorDiv", a, f)
        r = apply_operator(em, "Sub", a, apply_operator(em, "Mult", q, f))
        twice = apply_operator(em, "Mult", r, 2)
        up = FUNCTIONS["numpy.logical_or"](em, apply_operator(em, "Gt", twice, f), FUNCTIONS["numpy.logical_and"](
            em, apply_operator(em, "Eq", twice, f), apply_operator(em, "Eq", apply_operator(em, "Mod", q, 2), 1)))
        q = sel(em, up, apply_operator(em, "Add", q, 1), q)
        return em.cast(apply_operator(em, "Mult", q, f), a.dtype)
    if decimals == 0:
        return em.emit("round_even", a)
    f = const(em, 10.0 ** abs(decimals), a)     # NumPy: x * 10**d, round half to even, / 10**d
    if decimals > 0:
        return em.emit("div", em.emit("round_even", em.emit("mul", a, f)), f)
    return em.emit("mul", em.emit("round_even", em.emit("div", a, f)), f)


@register("numpy.nan_to_num", complex_ok=True, views="copy")
def nan_to_num(em, x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NumPy's own steps: NaN, +inf and -inf replaced (in each part of a complex number)."""
    if is_static(x, nan, posinf, neginf):
        return fold(np.nan_to_num, x, copy=copy, nan=nan, posinf=posinf, neginf=neginf)
    given, x = x, FUNCTIONS["numpy.array"].plain(em, x)
    if x.dtype.kind not in "fc":
        return given if copy is False and isinstance(given, Traced) and given.ndim else x

    def replace(d):
        info = np.finfo(d.dtype)
        for value, where in ((nan, isnan(em, d)),
                             (info.max if posinf is None else posinf, cmp(em, d, const(em, np.inf, d), "EQ")),
                             (info.min if neginf is None else neginf, cmp(em, d, const(em, -np.inf, d), "EQ"))):
            d = sel(em, where, em.operand(value, d.dtype, d.shape), d)
        return d
    out = em.emit("complex", replace(em.emit("real", x)), replace(em.emit("imag", x))) if x.dtype.kind == "c" \
        else replace(x)
    if copy is False and isinstance(given, Traced) and given.weak is None and given.ndim:
        from ..assignment import store     # in place, as NumPy: x itself is returned
        store(em, given, Ellipsis, out, "np.nan_to_num(copy=False)")
        return given
    return out


@register("numpy.sinc")
def sinc(em, x):
    if is_static(x):
        return fold(np.sinc, x)
    x = apply_operator(em, "Mult", math.pi, FUNCTIONS["numpy.asarray"].plain(em, x))
    eps = np.finfo(x.dtype).eps if x.dtype.kind == "f" else 1e-20
    y = FUNCTIONS["numpy.where"](em, x, x, x.dtype.type(eps) if x.dtype.kind == "f" else eps)
    return FUNCTIONS["numpy.divide"](em, FUNCTIONS["numpy.sin"](em, y), y)
