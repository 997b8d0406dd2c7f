"""numpy_surface: more of NumPy, each function one registry entry built from the IR primitives.
dtypes come from NumPy's own resolution (ufunc.resolve_dtypes, or NumPy run on a tiny array);
transcendental float32 functions are computed in float64 and rounded, as numpy_api does for sin.
README's table is generated from these registries (python -m pyjitc.doc)."""
from __future__ import annotations

import math
import string

import numpy as np

from ..errors import NotSupportedError, ShapeError
from ..ir.types import is_bool, is_float
from .numpy_api import (FUNCTIONS, Traced, _by_kind, _hypot, _keep, _reduce_dtype, _signbit, apply_ufunc, cast_impl,
                        fold, in_double, is_static, make_view, normalize_axes, normalize_axis, register, reshape,
                        static_dtype, transpose, ufunc)

NOTES: dict[str, str] = {}   # "numpy.x" -> what to know (shown in the generated table)


def note(name, text):
    NOTES[name] = text


# ---------------------------------------------------------------- small helpers

def _c(em, value, like: Traced) -> Traced:
    return em.full(value, like.dtype, like.shape)


def _cmp(em, a, b, d):
    return em.emit("compare", a, b, direction=d)


def _sel(em, p, a, b):
    return em.emit("select", p, a, b)


def _isnan(em, x):
    return _cmp(em, x, x, "NE")


def _identity(em, x, out_dtype):
    return x


# ---------------------------------------------------------------- elementwise

LN2, LN10 = math.log(2.0), math.log(10.0)


def _veltkamp(v: float) -> tuple[float, float]:
    """Veltkamp's split of a float64 into two 26-bit halves (their products are exact)."""
    t = v * 134217729.0
    hi = t - (t - v)
    return hi, v - hi


_LN2_HI, _LN2_LO = _veltkamp(LN2)
_LN2_TAIL = 2.319046813846299558e-17      # ln 2 - float64(ln 2)


def _exp2(em, x):
    """exp(x * ln 2) alone was 720 ulp off near 1024 (the product's rounding, times |x|) and gave
    a finite 2 ** 1024. The product as an exact sum p + e (Dekker's, with ln 2's own tail), then
    exp(p) * (1 + e): within 2 ulp (bench/accuracy.py)."""
    c = lambda v: _c(em, v, x)
    op = em.emit
    xc = op("max", op("min", x, c(1100.0)), c(-1100.0))    # beyond: 0 or inf either way; no overflow below
    t = op("mul", xc, c(134217729.0))
    xh = op("sub", t, op("sub", t, xc))
    xl = op("sub", xc, xh)
    p = op("mul", xc, c(LN2))
    e = op("add", op("add", op("add", op("sub", op("mul", xh, c(_LN2_HI)), p), op("mul", xh, c(_LN2_LO))),
                     op("mul", xl, c(_LN2_HI))), op("mul", xl, c(_LN2_LO)))
    e = op("add", e, op("mul", xc, c(_LN2_TAIL)))
    r = op("exp", p)
    r = _sel(em, op("is_finite", r), op("add", r, op("mul", r, e)), r)   # inf * e may be -inf
    return _sel(em, _isnan(em, x), x, r)


def _log_base(base_log):
    return lambda em, x: em.emit("div", em.emit("log", x), _c(em, base_log, x))


def _exp_half_squared(em, a):
    """exp(a) / 2 for a = |x| in (709, 710.5], where exp(a) overflows but sinh and cosh don't
    (they gave inf there): (exp(a / 2) / 2) * exp(a / 2), as fdlibm."""
    w = em.emit("exp", em.emit("mul", a, _c(em, 0.5, a)))
    return em.emit("mul", em.emit("mul", w, _c(em, 0.5, a)), w)


def _sinh(em, x):   # via expm1: no cancellation near 0
    r = em.emit("mul", em.emit("sub", em.emit("expm1", x), em.emit("expm1", em.emit("neg", x))), _c(em, 0.5, x))
    a = em.emit("abs", x)
    return _sel(em, _cmp(em, a, _c(em, 709.0, x), "GT"), em.emit("mul", em.emit("sign", x), _exp_half_squared(em, a)), r)


def _cosh(em, x):
    r = em.emit("mul", em.emit("add", em.emit("exp", x), em.emit("exp", em.emit("neg", x))), _c(em, 0.5, x))
    a = em.emit("abs", x)
    return _sel(em, _cmp(em, a, _c(em, 709.0, x), "GT"), _exp_half_squared(em, a), r)


def _one_minus_sq(em, x):   # (1 - x)(1 + x): exact near |x| = 1
    one = _c(em, 1.0, x)
    return em.emit("mul", em.emit("sub", one, x), em.emit("add", one, x))


def _arcsin(em, x):
    return em.emit("atan2", x, em.emit("sqrt", _one_minus_sq(em, x)))


def _arccos(em, x):
    return em.emit("atan2", em.emit("sqrt", _one_minus_sq(em, x)), x)


def _arctan(em, x):
    return em.emit("atan2", x, _c(em, 1.0, x))


def _arcsinh(em, x):
    a = em.emit("abs", x)
    sq = em.emit("mul", a, a)
    one = _c(em, 1.0, x)
    inner = em.emit("add", a, em.emit("div", sq, em.emit("add", one, em.emit("sqrt", em.emit("add", one, sq)))))
    big = _cmp(em, a, _c(em, 1e150, x), "GT")   # x*x would overflow: asinh(x) ~ log(2|x|)
    r = _sel(em, big, em.emit("add", em.emit("log", a), _c(em, LN2, x)), em.emit("log1p", inner))
    return em.emit("mul", em.emit("sign", x), r)


def _arccosh(em, x):
    """fdlibm's e_acosh: log1p(t + sqrt(2t + t*t)) with t = x - 1 below 2, log(2x - 1/(x + sqrt(x*x - 1)))
    below 2**28, log(x) + ln 2 above. log(x + sqrt((x-1)(x+1))) was 2.5e7 ulp off at 1 + 2**-52
    (and gave inf at -huge); now within 2 ulp (bench/accuracy.py)."""
    c = lambda v: _c(em, v, x)
    op = em.emit
    t = op("sub", x, c(1.0))
    near = op("log1p", op("add", t, op("sqrt", op("add", op("mul", c(2.0), t), op("mul", t, t)))))
    mid = op("log", op("sub", op("mul", c(2.0), x),
                       op("div", c(1.0), op("add", x, op("sqrt", op("sub", op("mul", x, x), c(1.0)))))))
    big = op("add", op("log", x), c(LN2))
    r = _sel(em, _cmp(em, x, c(2.0), "LT"), near, _sel(em, _cmp(em, x, c(2.0 ** 28), "LT"), mid, big))
    return _sel(em, _cmp(em, x, c(1.0), "LT"), c(np.nan), r)


def _arctanh(em, x):
    """fdlibm's e_atanh, on |x| with the sign put back: 0.5 * log1p(2a + 2a*a / (1 - a)) below 0.5,
    0.5 * log1p(2a / (1 - a)) above. log1p(2x / (1 - x)) for negative x was 1e14 ulp off near -1
    (log1p near -1); now within 2 ulp (bench/accuracy.py)."""
    c = lambda v: _c(em, v, x)
    op = em.emit
    a = op("abs", x)
    two_a = op("mul", c(2.0), a)
    one_m = op("sub", c(1.0), a)
    small = op("add", two_a, op("div", op("mul", two_a, a), one_m))
    r = op("mul", c(0.5), op("log1p", _sel(em, _cmp(em, a, c(0.5), "LT"), small, op("div", two_a, one_m))))
    return op("mul", op("sign", x), r)


def _trunc(em, x, out_dtype):
    return _sel(em, _cmp(em, x, _c(em, 0, x), "LT"), em.emit("ceil", x), em.emit("floor", x))


def _copysign(em, x, y, out_dtype):
    ax = em.emit("abs", x)
    return _sel(em, _signbit(em, y), em.emit("neg", ax), ax)


def _fmax_fmin(kind):
    def lower(em, x, y, out_dtype):
        if not is_float(x.dtype):
            return em.emit(kind, x, y) if not is_bool(x.dtype) else em.emit("or" if kind == "max" else "and", x, y)
        m = em.emit(kind, x, y)
        return _sel(em, _isnan(em, x), y, _sel(em, _isnan(em, y), x, m))
    return lower


def _heaviside(em, x, h, out_dtype):
    zero = _c(em, 0.0, x)
    out = _sel(em, _cmp(em, x, zero, "LT"), zero, _sel(em, _cmp(em, x, zero, "GT"), _c(em, 1.0, x), h))
    return _sel(em, _isnan(em, x), x, out)


def _scale(factor):
    return lambda em, x, out_dtype: em.emit("mul", x, _c(em, factor, x))


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
    return em.emit("div", _c(em, 1.0, x), x)


def _rint(em, x, out_dtype):
    return em.emit("round_even", x) if is_float(x.dtype) else x


for _u, _fn in ((np.exp2, _exp2), (np.log2, _log_base(LN2)), (np.log10, _log_base(LN10)), (np.sinh, _sinh),
                (np.cosh, _cosh), (np.arcsin, _arcsin), (np.arccos, _arccos), (np.arctan, _arctan),
                (np.arcsinh, _arcsinh), (np.arccosh, _arccosh), (np.arctanh, _arctanh)):
    ufunc(_u, in_double(_fn), f"numpy.{_u.__name__}",
          *{np.arcsin: ["numpy.asin"], np.arccos: ["numpy.acos"], np.arctan: ["numpy.atan"],
            np.arcsinh: ["numpy.asinh"], np.arccosh: ["numpy.acosh"], np.arctanh: ["numpy.atanh"]}.get(_u, []))
ufunc(np.trunc, _by_kind(f=_trunc, any=_identity), "numpy.trunc", "numpy.fix")
ufunc(np.rint, _rint, "numpy.rint")
ufunc(np.hypot, _hypot)
ufunc(np.copysign, _copysign)
ufunc(np.fmax, _fmax_fmin("max"))
ufunc(np.fmin, _fmax_fmin("min"))
ufunc(np.heaviside, _heaviside)
ufunc(np.deg2rad, _scale(math.pi / 180), "numpy.deg2rad", "numpy.radians")
ufunc(np.rad2deg, _scale(180 / math.pi), "numpy.rad2deg", "numpy.degrees")
ufunc(np.isnan, _to_bool_ufunc(lambda em, x: _isnan(em, x)))
ufunc(np.isinf, _to_bool_ufunc(lambda em, x: _cmp(em, em.emit("abs", x), _c(em, np.inf, x), "EQ")))
ufunc(np.isfinite, _to_bool_ufunc(lambda em, x: em.emit("is_finite", x), other=True, combine="and"))
ufunc(np.logical_and, _logical("and"))
ufunc(np.logical_or, _logical("or"))
ufunc(np.logical_xor, _logical("xor"))
ufunc(np.reciprocal, _reciprocal)
ufunc(np.sign, _by_kind(b=_identity, u=lambda em, x, out_dtype: em.cast(_cmp(em, x, _c(em, 0, x), "NE"), x.dtype),
                        any=lambda em, x, out_dtype: em.emit("sign", x)))
ufunc(np.left_shift, lambda em, a, b, out_dtype: em.emit("shift_left", a, b), "numpy.left_shift",
      "numpy.bitwise_left_shift")
ufunc(np.right_shift, lambda em, a, b, out_dtype: em.emit(
    "shift_right_arithmetic" if a.dtype.kind == "i" else "shift_right_logical", a, b),
    "numpy.right_shift", "numpy.bitwise_right_shift")
note("numpy.reciprocal", "floats only (integer reciprocal is refused)")
for _n in ("sinh", "cosh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "exp2", "log2", "log10"):
    note(f"numpy.{_n}", "composed from exp/log/atan2; float16/32 computed in float64")


def _float_power(em, a, b):
    return FUNCTIONS["numpy.power"](em, cast_impl(em, a, np.float64) if not is_static(a) else np.float64(a),
                                    cast_impl(em, b, np.float64) if not is_static(b) else np.float64(b))


FUNCTIONS["numpy.float_power"] = _float_power

_clip_ufunc = np._core.umath.clip


@register("numpy.clip", method="clip")
def clip(em, a, a_min=None, a_max=None, out=None, **kwargs):
    if "min" in kwargs or "max" in kwargs:
        a_min, a_max = kwargs.pop("min", a_min), kwargs.pop("max", a_max)
    if out is not None or kwargs:
        raise NotSupportedError("clip: out= and other keywords are not supported")
    if a_min is None and a_max is None:
        raise ShapeError("clip: One of max or min must be given")
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
    if out is not None:
        raise NotSupportedError("round: out= is not supported")
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
        from .numpy_api import apply_operator
        f = 10 ** (-decimals)
        q = apply_operator(em, "FloorDiv", a, f)
        r = apply_operator(em, "Sub", a, apply_operator(em, "Mult", q, f))
        twice = apply_operator(em, "Mult", r, 2)
        up = FUNCTIONS["numpy.logical_or"](em, apply_operator(em, "Gt", twice, f), FUNCTIONS["numpy.logical_and"](
            em, apply_operator(em, "Eq", twice, f), apply_operator(em, "Eq", apply_operator(em, "Mod", q, 2), 1)))
        q = _sel(em, up, apply_operator(em, "Add", q, 1), q)
        return em.cast(apply_operator(em, "Mult", q, f), a.dtype)
    if decimals == 0:
        return em.emit("round_even", a)
    f = _c(em, 10.0 ** abs(decimals), a)     # NumPy: x * 10**d, round half to even, / 10**d
    if decimals > 0:
        return em.emit("div", em.emit("round_even", em.emit("mul", a, f)), f)
    return em.emit("mul", em.emit("round_even", em.emit("div", a, f)), f)


# ---------------------------------------------------------------- reductions

def _axes_and_count(em, a, axis, name):
    axes = normalize_axes(em, axis, a.ndim, name)
    return axes, int(np.prod([a.shape[i] for i in axes], dtype=np.int64))


def _moments(name):
    np_fn = getattr(np, name)

    def impl(em, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None,
             correction=None):
        if out is not None or where is not None or mean is not None:
            raise NotSupportedError(f"{name}: out=, where= and mean= are not supported")
        if correction is not None:
            ddof = correction
        ddof, keepdims = em.static(ddof, f"{name}: ddof"), em.static(keepdims, f"{name}: keepdims")
        dtype = None if dtype is None else static_dtype(em, dtype)
        if is_static(a):
            return fold(np_fn, a, axis=em.static(axis, "axis"), dtype=dtype, ddof=ddof, keepdims=keepdims)
        a = em.asarray(a)
        axes, n = _axes_and_count(em, a, axis, name)
        res = _reduce_dtype(np_fn, a.dtype, dtype)
        acc = np.dtype(np.float64) if a.dtype.kind in "biu" else np.dtype(np.float32) if a.dtype == np.float16 else a.dtype
        if dtype is not None and dtype.kind == "f":
            acc = np.dtype(np.float32) if dtype == np.float16 else dtype
        x = em.cast(a, acc)
        s = em.emit("reduce", x, kind="add", axes=axes) if axes else x
        mean_ = em.emit("div", s, em.full(n, acc, s.shape))
        mean_b = reshape(em, mean_, tuple(1 if i in axes else d for i, d in enumerate(a.shape)))
        d = em.emit("sub", x, em.broadcast(mean_b, a.shape))
        sq = em.emit("reduce", em.emit("mul", d, d), kind="add", axes=axes) if axes else em.emit("mul", d, d)
        out_ = em.emit("div", sq, em.full(max(n - ddof, 0), acc, sq.shape))
        if name == "std":
            out_ = em.emit("sqrt", out_)
        return _keep(em, em.cast(out_, res), a.shape, axes, keepdims)
    impl.__name__ = name
    return impl


register("numpy.var", method="var")(_moments("var"))
register("numpy.std", method="std")(_moments("std"))


def _arg_reduce(name, kind):
    def impl(em, a, axis=None, out=None, keepdims=False):
        if out is not None:
            raise NotSupportedError(f"{name}: out= is not supported")
        keepdims = em.static(keepdims, f"{name}: keepdims")
        axis = em.static(axis, f"{name}: axis")
        if is_static(a):
            return fold(getattr(np, name), a, axis=axis, keepdims=keepdims)
        a = em.asarray(a)
        x = a
        if axis is None:
            x = reshape(em, a, -1)
            ax = 0
        else:
            ax = normalize_axis(axis, a.ndim, name)
        n = x.shape[ax]
        if n == 0:
            raise ShapeError(f"attempt to get {name} of an empty sequence")
        if is_bool(x.dtype):
            x = em.cast(x, np.int8)
        m = em.emit("reduce", x, kind=kind, axes=(ax,))
        mb = em.emit("broadcast_in_dim", m, shape=x.shape, dims=tuple(i for i in range(x.ndim) if i != ax))
        hit = _cmp(em, x, mb, "EQ")
        if is_float(x.dtype):   # the first NaN wins, as in NumPy
            hit = em.emit("or", hit, em.emit("and", _isnan(em, x), _isnan(em, mb)))
        idx = em.emit("iota", shape=x.shape, dim=ax, dtype=np.dtype(np.int64))
        big = em.full(n, np.int64, x.shape)
        first = em.emit("reduce", _sel(em, hit, idx, big), kind="min", axes=(ax,))
        if axis is None:
            return reshape(em, first, (1,) * a.ndim) if keepdims else first
        return _keep(em, first, x.shape, (ax,), keepdims)
    impl.__name__ = name
    return impl


register("numpy.argmax", method="argmax")(_arg_reduce("argmax", "max"))
register("numpy.argmin", method="argmin")(_arg_reduce("argmin", "min"))


@register("numpy.count_nonzero")
def count_nonzero(em, a, axis=None, keepdims=False):
    if is_static(a):
        return fold(np.count_nonzero, a, axis=em.static(axis, "axis"), keepdims=em.static(keepdims, "keepdims"))
    a = em.asarray(a)
    nz = em.cast(a, np.bool_)
    total = FUNCTIONS["numpy.sum"](em, nz, axis=axis, keepdims=keepdims, dtype=np.int64)
    return total


def _nan_reduction(name, base, fill):
    def impl(em, a, axis=None, dtype=None, out=None, keepdims=False, **kw):
        if is_static(a):
            return fold(getattr(np, name), a, axis=em.static(axis, "axis"), keepdims=em.static(keepdims, "keepdims"))
        a = em.asarray(a)
        if not is_float(a.dtype):
            return FUNCTIONS[base](em, a, axis=axis, keepdims=keepdims, **({"dtype": dtype} if dtype else {}))
        nan = _isnan(em, a)
        if name == "nanmean":
            s = FUNCTIONS["numpy.sum"](em, _sel(em, nan, _c(em, 0, a), a), axis=axis, keepdims=keepdims)
            cnt = FUNCTIONS["numpy.sum"](em, em.emit("not", nan), axis=axis, keepdims=keepdims, dtype=s.dtype)
            return em.emit("div", s, cnt)
        filled = _sel(em, nan, _c(em, fill(a.dtype), a), a)
        out_ = FUNCTIONS[base](em, filled, axis=axis, keepdims=keepdims, **({"dtype": dtype} if dtype else {}))
        if name in ("nanmax", "nanmin"):   # all-NaN slices give NaN, as NumPy (which also warns)
            all_nan = FUNCTIONS["numpy.all"](em, nan, axis=axis, keepdims=keepdims)
            out_ = _sel(em, all_nan, em.full(np.nan, out_.dtype, out_.shape), out_)
        return out_
    impl.__name__ = name
    return impl


for _name, _base, _fill in (("nansum", "numpy.sum", lambda dt: 0), ("nanprod", "numpy.prod", lambda dt: 1),
                            ("nanmax", "numpy.max", lambda dt: -np.inf), ("nanmin", "numpy.min", lambda dt: np.inf),
                            ("nanmean", "numpy.mean", None)):
    register(f"numpy.{_name}")(_nan_reduction(_name, _base, _fill))


def _scan(name, prim, identity, np_fn):
    """cumsum/cumprod: log2(n) steps of shift-and-combine (Hillis-Steele)."""
    def impl(em, a, axis=None, dtype=None, out=None):
        if out is not None:
            raise NotSupportedError(f"{name}: out= is not supported")
        axis = em.static(axis, f"{name}: axis")
        dtype = None if dtype is None else static_dtype(em, dtype)
        if is_static(a):
            return fold(np_fn, a, axis=axis, dtype=dtype)
        a = em.asarray(a)
        res = np.asarray(np_fn(np.ones(1, dtype=a.dtype), dtype=dtype)).dtype
        x = em.cast(reshape(em, a, -1) if axis is None else a, res)
        ax = 0 if axis is None else normalize_axis(axis, a.ndim, name)
        n = x.shape[ax]
        kind = prim if not is_bool(res) else {"add": "or", "mul": "and"}[prim]
        step = 1
        while step < n:
            shifted = _take_slice(em, x, ax, 0, n - step)
            pad_shape = list(x.shape)
            pad_shape[ax] = step
            pad = em.full(identity, res, tuple(pad_shape))
            moved = em.emit("concatenate", pad, shifted, axis=ax)
            x = em.emit(kind, x, moved)
            step *= 2
        return x
    impl.__name__ = name
    return impl


def _take_slice(em, x, ax, start, stop):
    s = [0] * x.ndim
    lim = list(x.shape)
    s[ax], lim[ax] = start, stop
    return em.emit("slice", x, start=tuple(s), limit=tuple(lim), strides=(1,) * x.ndim)


register("numpy.cumsum", method="cumsum")(_scan("cumsum", "add", 0, np.cumsum))
register("numpy.cumprod", method="cumprod")(_scan("cumprod", "mul", 1, np.cumprod))
note("numpy.cumsum", "float sums in a different order than NumPy's sequential one (reduction tolerance)")


# ---------------------------------------------------------------- shapes

@register("numpy.squeeze", method="squeeze")
def squeeze(em, a, axis=None):
    if is_static(a):
        return fold(np.squeeze, a, axis=em.static(axis, "axis"))
    a = em.asarray(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(a.shape) if d == 1)
    else:
        axes = normalize_axes(em, axis, a.ndim, "squeeze")
        if any(a.shape[i] != 1 for i in axes):
            raise ShapeError("cannot select an axis to squeeze out which has size not equal to one")
    return reshape(em, a, tuple(d for i, d in enumerate(a.shape) if i not in axes))


@register("numpy.expand_dims")
def expand_dims(em, a, axis):
    if is_static(a):
        return fold(np.expand_dims, a, em.static(axis, "axis"))
    a = em.asarray(a)
    new = np.expand_dims(np.empty(a.shape, np.bool_), em.static(axis, "expand_dims: axis")).shape
    return reshape(em, a, new)


@register("numpy.swapaxes", method="swapaxes")
def swapaxes(em, a, axis1, axis2):
    a = em.asarray(a)
    i, j = (normalize_axis(em.static(v, "swapaxes: axis"), a.ndim, "swapaxes") for v in (axis1, axis2))
    perm = list(range(a.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(em, a, tuple(perm))


@register("numpy.moveaxis")
def moveaxis(em, a, source, destination):
    a = em.asarray(a)
    src = [normalize_axis(int(v), a.ndim, "moveaxis") for v in np.atleast_1d(em.static(source, "moveaxis: source"))]
    dst = [normalize_axis(int(v), a.ndim, "moveaxis") for v in np.atleast_1d(em.static(destination, "moveaxis: destination"))]
    if len(src) != len(dst):
        raise ShapeError("`source` and `destination` arguments must have the same number of elements")
    order = [n for n in range(a.ndim) if n not in src]
    for d, s_ in sorted(zip(dst, src)):   # NumPy's own algorithm
        order.insert(d, s_)
    return transpose(em, a, tuple(order))


@register("numpy.concatenate", "numpy.concat")
def concatenate(em, arrays, axis=0, dtype=None, out=None, casting="same_kind"):
    if out is not None:
        raise NotSupportedError("concatenate: out= is not supported")
    arrays = list(em.static(arrays, "concatenate: the list of arrays") if not isinstance(arrays, (list, tuple)) else arrays)
    if not arrays:
        raise ShapeError("need at least one array to concatenate")
    axis = em.static(axis, "concatenate: axis")
    if all(is_static(x) for x in arrays):
        return fold(np.concatenate, arrays, axis=axis)
    xs = [em.asarray(x) for x in arrays]
    dt = static_dtype(em, dtype) if dtype is not None else np.result_type(*[em.dtype_of(x) for x in arrays])
    if axis is None:
        xs = [reshape(em, x, -1) for x in xs]
        axis = 0
    nd = xs[0].ndim
    if nd == 0 or any(x.ndim != nd for x in xs):
        raise ShapeError("all the input arrays must have same number of dimensions" if nd else
                         "zero-dimensional arrays cannot be concatenated")
    ax = normalize_axis(axis, nd, "concatenate")
    for x in xs[1:]:
        if any(a != b for i, (a, b) in enumerate(zip(x.shape, xs[0].shape)) if i != ax):
            raise ShapeError("all the input array dimensions except for the concatenation axis must match exactly")
    xs = [em.cast(x, dt) for x in xs if x.shape[ax] > 0] or [em.cast(xs[0], dt)]
    return em.emit("concatenate", *xs, axis=ax) if len(xs) > 1 else xs[0]


def _atleast(em, x, n):
    x = em.asarray(x)
    if n == 1:
        return reshape(em, x, (1,)) if x.ndim == 0 else x
    if x.ndim == 0:
        return reshape(em, x, (1, 1))
    return reshape(em, x, (1,) + x.shape) if x.ndim == 1 else x


FUNCTIONS["numpy.hstack"] = lambda em, tup, dtype=None: concatenate(
    em, [_atleast(em, x, 1) for x in tup], axis=0 if all(_atleast(em, x, 1).ndim == 1 for x in tup) else 1, dtype=dtype)
FUNCTIONS["numpy.vstack"] = lambda em, tup, dtype=None: concatenate(em, [_atleast(em, x, 2) for x in tup], 0, dtype)
FUNCTIONS["numpy.row_stack"] = FUNCTIONS["numpy.vstack"]
FUNCTIONS["numpy.column_stack"] = lambda em, tup: concatenate(
    em, [reshape(em, em.asarray(x), (-1, 1)) if em.asarray(x).ndim < 2 else em.asarray(x) for x in tup], 1)


@register("numpy.broadcast_to")
def broadcast_to(em, array, shape):
    shape = tuple(em.static(shape, "broadcast_to: shape")) if not isinstance(shape, int) else (shape,)
    x = em.asarray(array)
    try:
        np.broadcast_to(np.empty(x.shape, np.bool_), shape)
    except ValueError as e:
        raise ShapeError(f"broadcast_to: {e}") from None
    if len(shape) > x.ndim:
        x = reshape(em, x, (1,) * (len(shape) - x.ndim) + x.shape)
    out = em.emit("broadcast_in_dim", x, shape=shape, dims=tuple(range(len(shape))))
    return make_view(x, out, None, None)    # read-only in NumPy: writes are refused


@register("numpy.flip")
def flip(em, m, axis=None):
    x = em.asarray(m)
    axes = tuple(range(x.ndim)) if axis is None else normalize_axes(em, axis, x.ndim, "flip")
    out = em.emit("reverse", x, dims=axes, weak=x.weak) if axes else x
    return make_view(x, out, lambda base: em.b.emit("reverse", base, dims=axes),
                     lambda base, v: em.b.emit("reverse", v, dims=axes), ("flip", axes)) if axes else out


FUNCTIONS["numpy.fliplr"] = lambda em, m: flip(em, m, 1)
FUNCTIONS["numpy.flipud"] = lambda em, m: flip(em, m, 0)


@register("numpy.roll")
def roll(em, a, shift, axis=None):
    shift = em.static(shift, "roll: shift")
    x = em.asarray(a)
    if axis is None:
        flat = reshape(em, x, -1)
        return reshape(em, roll(em, flat, shift, 0), x.shape)
    axes = normalize_axes(em, axis, x.ndim, "roll")
    shifts = np.broadcast_to(np.asarray(shift), (len(axes),)) if np.ndim(shift) <= 1 else shift
    out = x
    for ax, k in zip(axes, shifts):
        n = out.shape[ax]
        if n == 0:
            continue
        k = int(k) % n
        if k:
            out = em.emit("concatenate", _take_slice(em, out, ax, n - k, n), _take_slice(em, out, ax, 0, n - k), axis=ax)
    return out if out is not x else Traced(x.value, x.weak, x.params)


def _tri_mask(em, shape, k, lower):
    r = em.emit("iota", shape=shape, dim=len(shape) - 2, dtype=np.dtype(np.int64))
    c = em.emit("iota", shape=shape, dim=len(shape) - 1, dtype=np.dtype(np.int64))
    diff = em.emit("sub", c, r)
    return _cmp(em, diff, em.full(k, np.int64, shape), "LE" if lower else "GE")


def _tri(lower):
    def impl(em, m, k=0):
        k = em.static(k, "tril/triu: k")
        if is_static(m):
            return fold(np.tril if lower else np.triu, m, k)
        x = em.asarray(m)
        if x.ndim < 2:
            x = em.broadcast(x, (x.shape[-1] if x.ndim else 1,) * 2)
        mask = _tri_mask(em, x.shape, k, lower)
        return _sel(em, mask, x, em.full(0, x.dtype, x.shape))
    return impl


register("numpy.tril")(_tri(True))
register("numpy.triu")(_tri(False))


@register("numpy.diagonal", method="diagonal")
def diagonal(em, a, offset=0, axis1=0, axis2=1):
    from .indexing import getitem
    offset = em.static(offset, "diagonal: offset")
    x = em.asarray(a)
    if x.ndim < 2:
        raise ShapeError("diag requires an array of at least two dimensions")
    x = moveaxis(em, x, (axis1, axis2), (-2, -1))
    n, m = x.shape[-2:]
    rows = np.arange(max(0, -offset), n)
    cols = rows + offset
    keep = (cols >= 0) & (cols < m)
    rows, cols = rows[keep], cols[keep]
    return getitem(em, x, (Ellipsis, rows, cols)) if rows.size else em.full(0, x.dtype, x.shape[:-2] + (0,))


@register("numpy.trace", method="trace")
def trace(em, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d = diagonal(em, a, offset, axis1, axis2)
    return FUNCTIONS["numpy.sum"](em, d, axis=-1, **({"dtype": dtype} if dtype is not None else {}))


@register("numpy.diag")
def diag(em, v, k=0):
    k = em.static(k, "diag: k")
    if is_static(v):
        return fold(np.diag, v, k)
    x = em.asarray(v)
    if x.ndim == 2:
        return diagonal(em, x, k)
    if x.ndim != 1:
        raise ShapeError("Input must be 1- or 2-d.")
    n = x.shape[0] + abs(k)
    r = em.emit("iota", shape=(n, n), dim=0, dtype=np.dtype(np.int64))
    c = em.emit("iota", shape=(n, n), dim=1, dtype=np.dtype(np.int64))
    on = _cmp(em, em.emit("sub", c, r), em.full(k, np.int64, (n, n)), "EQ")
    padded = em.emit("concatenate", x, em.full(0, x.dtype, (abs(k),)), axis=0) if k else x
    # k >= 0: row i holds v[i] at column i + k; k < 0: column j holds v[j] at row j - k
    vals = em.emit("broadcast_in_dim", padded, shape=(n, n), dims=(0,) if k >= 0 else (1,))
    return _sel(em, on, vals, em.full(0, x.dtype, (n, n)))


# ---------------------------------------------------------------- linear algebra

@register("numpy.outer")
def outer(em, a, b, out=None):
    a, b = reshape(em, em.asarray(a), (-1, 1)), reshape(em, em.asarray(b), (1, -1))
    return FUNCTIONS["numpy.multiply"](em, a, b)


@register("numpy.vdot")
def vdot(em, a, b):
    """dot of the flattened arrays, the first one conjugated."""
    a, b = reshape(em, em.asarray(a), -1), reshape(em, em.asarray(b), -1)
    return FUNCTIONS["numpy.dot"](em, FUNCTIONS["numpy.conjugate"](em, a), b)


@register("numpy.inner")
def inner(em, a, b):
    a, b = em.asarray(a), em.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return FUNCTIONS["numpy.multiply"](em, a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ShapeError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != "
                         f"{b.shape[-1]} (dim {b.ndim - 1})")
    return _contract(em, a, b, [a.ndim - 1], [b.ndim - 1])   # contracts the last axes of both


@register("numpy.linalg.norm")
def norm(em, x, ord=None, axis=None, keepdims=False):
    ord, keepdims = em.static(ord, "norm: ord"), em.static(keepdims, "norm: keepdims")
    axis = em.static(axis, "norm: axis")
    x = em.asarray(x)
    if not is_float(x.dtype):
        x = em.cast(x, np.float64)
    if axis is None and ord is None or ord in ("fro",) or (ord == 2 and (x.ndim == 1 if axis is None else np.ndim(axis) == 0)):
        sq = em.emit("mul", x, x)
        return FUNCTIONS["numpy.sqrt"](em, FUNCTIONS["numpy.sum"](em, sq, axis=axis, keepdims=keepdims))
    vector = (x.ndim == 1 and axis is None) or np.ndim(axis) == 0
    if vector and ord in (1, np.inf, -np.inf, float("inf"), float("-inf")):
        a = em.emit("abs", x)
        fn = {1: "numpy.sum", np.inf: "numpy.max", -np.inf: "numpy.min"}[ord]
        return FUNCTIONS[fn](em, a, axis=axis, keepdims=keepdims)
    if vector and ord is None:
        sq = em.emit("mul", x, x)
        return FUNCTIONS["numpy.sqrt"](em, FUNCTIONS["numpy.sum"](em, sq, axis=axis, keepdims=keepdims))
    raise NotSupportedError(f"linalg.norm: ord={ord!r} for these axes is not supported",
                            hint="ord None/'fro'/2 (vectors), 1, inf, -inf (vectors) are")


note("numpy.linalg.norm", "ord None, 'fro', 2 (vectors), 1, inf, -inf (vectors)")


# ---------------------------------------------------------------- sorting and searching

@register("numpy.sort", method="sort")
def sort(em, a, axis=-1, kind=None, order=None, stable=None):
    if order is not None:
        raise NotSupportedError("sort: order= is not supported")
    axis = em.static(axis, "sort: axis")
    if is_static(a):
        return fold(np.sort, a, axis=axis)
    x = em.asarray(a)
    if axis is None:
        x, axis = reshape(em, x, -1), 0
    ax = normalize_axis(axis, x.ndim, "sort")
    return em.emit("sort", x, axis=ax, with_index=False)


@register("numpy.argsort", method="argsort")
def argsort(em, a, axis=-1, kind=None, order=None, stable=None):
    if order is not None:
        raise NotSupportedError("argsort: order= is not supported")
    axis = em.static(axis, "argsort: axis")
    x = em.asarray(a)
    if axis is None:
        x, axis = reshape(em, x, -1), 0
    ax = normalize_axis(axis, x.ndim, "argsort")
    values, idx = em.emit_multi("sort", x, axis=ax, with_index=True)
    return idx


note("numpy.sort", "NaN sorts last, as in NumPy")
note("numpy.argsort", "stable: equal keys keep their order (NumPy's default quicksort leaves their order unspecified; "
                      "kind='stable' matches exactly)")


@register("numpy.take")
def take(em, a, indices, axis=None, out=None, mode=None):
    from .indexing import getitem
    if mode not in (None, "raise"):
        raise NotSupportedError("take: only mode='raise' is supported")
    x = em.asarray(a)
    if axis is None:
        return getitem(em, reshape(em, x, -1), indices if not isinstance(indices, list) else np.asarray(indices))
    ax = normalize_axis(em.static(axis, "take: axis"), x.ndim, "take")
    idx = np.asarray(indices) if isinstance(indices, list) else indices
    return getitem(em, x, (slice(None),) * ax + (idx,))


@register("numpy.nonzero", "numpy.argwhere", "numpy.unique", "numpy.flatnonzero")
def _dynamic_shape(em, *args, **kwargs):
    raise NotSupportedError("this function's result has a shape that depends on the data",
                            hint="use a mask with np.where(mask, x, 0) or a fixed-size computation")


# ---------------------------------------------------------------- notes on functions defined in numpy_api
note("numpy.power", "float: C99 pow special cases, computed in float64 with ln x in double-double (within "
                    "1 ulp); integer ** integer needs a "
                    "compile-time non-negative exponent")
for _n in ("numpy.sin", "numpy.cos", "numpy.tan"):
    note(_n, "float16/32 computed in float64 (IREE's float32 versions are up to 5e5 ulp off)"
         + ("; under @jit, arrays of 16384+ elements vectorised (within 2 ulp), libm if any |x| > 1e6" if _n != "numpy.tan" else ""))
note("numpy.cbrt", "abs(x) ** (1/3) and one Newton step, computed in float64 (within 1 ulp)")
note("numpy.matmul", "1-D, 2-D and batched; bool as or-of-ands; empty contractions give zeros")
note("numpy.where", "three-argument form; the one-argument form's shape depends on the data")
note("numpy.empty", "zero-filled")


# ---------------------------------------------------------------- more shapes and contractions

def _contract(em, a, b, lc, rc, lb=(), rb=()):
    from .numpy_api import _dot
    out_dtype = np.matmul.resolve_dtypes((a.dtype, b.dtype, None))[-1]
    if is_bool(out_dtype):
        raise NotSupportedError("contracting boolean arrays here is not supported", hint="cast to an integer dtype")
    return _dot(em, em.cast(a, out_dtype), em.cast(b, out_dtype), tuple(lc), tuple(rc), tuple(lb), tuple(rb), out_dtype)


@register("numpy.tensordot")
def tensordot(em, a, b, axes=2):
    a, b = em.asarray(a), em.asarray(b)
    axes = em.static(axes, "tensordot: axes")
    if isinstance(axes, int):
        lc, rc = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        lc, rc = ([x] if isinstance(x, int) else list(x) for x in axes)
    lc = [normalize_axis(i, a.ndim, "tensordot") for i in lc]
    rc = [normalize_axis(i, b.ndim, "tensordot") for i in rc]
    if len(lc) != len(rc) or any(a.shape[i] != b.shape[j] for i, j in zip(lc, rc)):
        raise ShapeError("shape-mismatch for sum")
    return _contract(em, a, b, lc, rc)


def _einsum_specs(subscripts, xs):
    """Operand and output letters, with each '...' spelled out as letters of its own
    (right-aligned across operands, as NumPy broadcasts them) and NumPy's implicit output."""
    ins, arrow, out_spec = subscripts.partition("->")
    specs = ins.split(",")
    if len(specs) != len(xs):
        raise ShapeError(f"einsum: {len(specs)} operand subscripts for {len(xs)} operands")
    letters = set(subscripts) - set(",->.")
    if any(not c.isalpha() for c in letters):
        raise ShapeError(f"einsum: invalid subscript characters in {subscripts!r}")
    spare = [c for c in string.ascii_letters if c not in letters]
    n_ell = max((x.ndim - len(s.replace("...", "")) for s, x in zip(specs, xs) if "..." in s), default=0)
    ell = "".join(spare[:n_ell])
    full = []
    for s, x in zip(specs, xs):
        if "..." in s:
            k = x.ndim - len(s.replace("...", ""))
            if k < 0:
                raise ShapeError(f"einsum: operand subscripts {s!r} have more letters than the operand has axes")
            s = s.replace("...", ell[n_ell - k:])
        if len(s) != x.ndim:
            raise ShapeError(f"einsum: operand subscripts {s!r} do not match an operand with {x.ndim} axes")
        full.append(s)
    if arrow:
        out_spec = out_spec.replace("...", ell)
    else:
        counts = {c: ins.count(c) for c in letters}
        out_spec = ell + "".join(sorted((c for c, n in counts.items() if n == 1), key=lambda c: (c.islower(), c)))
    if len(set(out_spec)) != len(out_spec) or set(out_spec) - set("".join(full)):
        raise ShapeError(f"einsum: output subscripts {out_spec!r} repeat a letter or name one no operand has")
    return full, out_spec


@register("numpy.einsum")
def einsum(em, subscripts, *operands, optimize=False, dtype=None, casting="safe", out=None):
    """Any number of operands, '...', repeated letters (diagonals): each operand's diagonals are
    taken and its private letters summed out, then operands are contracted pairwise, left to right."""
    subscripts = em.static(subscripts, "einsum: subscripts").replace(" ", "")
    if out is not None:
        raise NotSupportedError("einsum: out= is not supported")
    xs = [em.asarray(x) for x in operands]
    specs, out_spec = _einsum_specs(subscripts, xs)
    # NumPy returns a view, ignoring dtype=, when one operand is only transposed or diagonalised
    if dtype is not None and not (len(xs) == 1 and set(specs[0]) == set(out_spec)):
        dtype = static_dtype(em, dtype)
        for x in xs:
            if not np.can_cast(x.dtype, dtype, casting=em.static(casting, "einsum: casting")):
                raise ShapeError(f"einsum: cannot cast {x.dtype} to {dtype} under casting={casting!r}")
        xs = [em.cast(x, dtype) for x in xs]
    sizes: dict[str, int] = {}
    for spec, x in zip(specs, xs):
        for c, n in zip(spec, x.shape):
            if n != 1 and sizes.get(c, 1) not in (1, n):
                raise ShapeError(f"einsum: subscript {c!r} has sizes {sizes[c]} and {n}")
            sizes[c] = max(sizes.get(c, 1), n) if n else 0

    def prepare(x, spec, keep):
        """Take diagonals of repeated letters, broadcast size-1 axes, sum out letters not in keep."""
        while len(set(spec)) != len(spec):
            c = next(c for c in spec if spec.count(c) > 1)
            p = spec.index(c)
            q = spec.index(c, p + 1)
            x = FUNCTIONS["numpy.diagonal"](em, x, 0, p, q)
            spec = "".join(ch for i, ch in enumerate(spec) if i not in (p, q)) + c
        want = tuple(sizes[c] for c in spec)
        if x.shape != want:
            x = broadcast_to(em, x, want)
        axes = tuple(i for i, c in enumerate(spec) if c not in keep)
        if axes:   # einsum sums in the operand's dtype (np.sum would widen small integers)
            x = FUNCTIONS["numpy.sum"](em, x, axis=axes, dtype=x.dtype if not is_bool(x.dtype) else None)
            spec = "".join(c for c in spec if c in keep)
        return x, spec

    def later(i):
        return out_spec + "".join(specs[i:])
    a, sa = prepare(xs[0], specs[0], later(1))
    for i in range(1, len(xs)):
        b, sb = prepare(xs[i], specs[i], out_spec + sa + "".join(specs[i + 1:]))
        keep = later(i + 1)
        batch = [c for c in sa if c in sb and c in keep]
        contract = [c for c in sa if c in sb and c not in keep]
        a = _contract(em, a, b, [sa.index(c) for c in contract], [sb.index(c) for c in contract],
                      [sa.index(c) for c in batch], [sb.index(c) for c in batch])
        sa = "".join(batch + [c for c in sa if c not in batch and c not in contract]
                     + [c for c in sb if c not in batch and c not in contract])
    a, sa = prepare(a, sa, out_spec)
    return transpose(em, a, tuple(sa.index(c) for c in out_spec)) if sa != out_spec else a


note("numpy.einsum", "compile-time subscripts; any number of operands (contracted pairwise, left to right: where an "
                     "infinity meets a zero, NaN and inf can differ from NumPy's one-pass sum), '...', "
                     "repeated letters (diagonals), dtype=")


def _split(name, even):
    def impl(em, ary, indices_or_sections, axis=0):
        x = em.asarray(ary)
        ios = em.static(indices_or_sections, f"{name}: indices_or_sections")
        axis = normalize_axis(em.static(axis, f"{name}: axis"), x.ndim, name)
        try:
            parts = getattr(np, name)(np.arange(x.shape[axis]), ios)   # NumPy decides the pieces
        except ValueError as e:
            raise ShapeError(f"{name}: {e}") from None
        return [_take_slice(em, x, axis, int(p[0]) if p.size else 0, int(p[-1]) + 1 if p.size else 0) if p.size
                else _take_slice(em, x, axis, 0, 0) for p in parts]
    return impl


register("numpy.split")(_split("split", True))
register("numpy.array_split")(_split("array_split", False))


@register("numpy.tile")
def tile(em, A, reps):
    x = em.asarray(A)
    reps = tuple(np.atleast_1d(em.static(reps, "tile: reps")).tolist())
    nd = max(x.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    x = reshape(em, x, (1,) * (nd - x.ndim) + x.shape)
    inter = tuple(v for r, d in zip(reps, x.shape) for v in (r, d))
    y = em.emit("broadcast_in_dim", x, shape=inter, dims=tuple(range(1, 2 * nd, 2)))
    return reshape(em, y, tuple(r * d for r, d in zip(reps, x.shape)))


@register("numpy.repeat", method="repeat")
def repeat(em, a, repeats, axis=None):
    from .indexing import getitem
    x = em.asarray(a)
    repeats = em.static(repeats, "repeat: repeats")
    if axis is None:
        x, axis = reshape(em, x, -1), 0
    ax = normalize_axis(em.static(axis, "repeat: axis"), x.ndim, "repeat")
    index = np.repeat(np.arange(x.shape[ax]), repeats)
    return getitem(em, x, (slice(None),) * ax + (index,))


@register("numpy.pad")
def pad(em, array, pad_width, mode="constant", constant_values=0):
    from .indexing import getitem
    x = em.asarray(array)
    mode = em.static(mode, "pad: mode")
    width = np.broadcast_to(np.asarray(em.static(pad_width, "pad: pad_width")), (x.ndim, 2))
    if mode not in ("constant", "edge", "reflect", "symmetric", "wrap"):
        raise NotSupportedError(f"pad: mode {mode!r} is not supported", hint="constant, edge, reflect, symmetric, wrap are")
    for ax in range(x.ndim):
        lo, hi = (int(v) for v in width[ax])
        if not (lo or hi):
            continue
        n = x.shape[ax]
        if mode == "constant":
            cv = np.broadcast_to(np.asarray(em.static(constant_values, "pad: constant_values")), (x.ndim, 2))
            blocks = []
            for w, v in ((lo, cv[ax][0]), (None, None), (hi, cv[ax][1])):
                if w is None:
                    blocks.append(x)
                elif w:
                    shape = list(x.shape)
                    shape[ax] = w
                    blocks.append(em.full(np.asarray(v).astype(x.dtype), x.dtype, tuple(shape)))
            x = em.emit("concatenate", *blocks, axis=ax)
        else:
            index = np.pad(np.arange(n), (lo, hi), mode=mode)   # NumPy's own index pattern
            x = getitem(em, x, (slice(None),) * ax + (index,))
    return x


@register("numpy.meshgrid")
def meshgrid(em, *xi, indexing="xy", sparse=False, copy=True):
    indexing = em.static(indexing, "meshgrid: indexing")
    xs = [reshape(em, em.asarray(x), -1) for x in xi]
    shape = [x.shape[0] for x in xs]
    if indexing == "xy" and len(xs) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xs):
        dim = (1 - i if i < 2 else i) if indexing == "xy" and len(xs) >= 2 else i
        out.append(em.emit("broadcast_in_dim", x, shape=tuple(shape), dims=(dim,)))
    return tuple(out)   # NumPy 2 returns a tuple


@register("numpy.take_along_axis")
def take_along_axis(em, arr, indices, axis):
    from .indexing import getitem
    x = em.asarray(arr)
    axis = em.static(axis, "take_along_axis: axis")
    if axis is None:
        x, axis = reshape(em, x, -1), 0
    ax = normalize_axis(axis, x.ndim, "take_along_axis")
    idx = indices if not isinstance(indices, list) else np.asarray(indices)
    ishape = idx.shape if hasattr(idx, "shape") else np.shape(idx)
    if len(ishape) != x.ndim:
        raise ShapeError("`indices` and `arr` must have the same number of dimensions")
    index = []
    for d in range(x.ndim):
        if d == ax:
            index.append(idx)
        else:
            shape = [1] * x.ndim
            shape[d] = x.shape[d]
            index.append(np.arange(x.shape[d]).reshape(shape))
    return getitem(em, x, tuple(index))


@register("numpy.searchsorted")
def searchsorted(em, a, v, side="left", sorter=None):
    if sorter is not None:
        raise NotSupportedError("searchsorted: sorter= is not supported")
    side = em.static(side, "searchsorted: side")
    a, v = em.asarray(a), em.asarray(v)
    if a.ndim != 1:
        raise ShapeError("object too deep for desired array")
    dt = np.result_type(a.dtype, v.dtype)
    a, v = em.cast(a, dt), em.cast(v, dt)
    full = v.shape + a.shape
    ab = em.emit("broadcast_in_dim", a, shape=full, dims=(len(full) - 1,))
    vb = em.emit("broadcast_in_dim", v, shape=full, dims=tuple(range(v.ndim)))
    # NumPy's order puts NaN last: count the elements that sort before v
    before = _cmp(em, ab, vb, "LT" if side == "left" else "LE")
    if is_float(dt):
        nan_v, num_a = _isnan(em, vb), em.emit("not", _isnan(em, ab))
        before = em.emit("or", before, em.emit("and", nan_v, num_a) if side == "left" else
                         em.emit("or", em.emit("and", nan_v, num_a), em.emit("and", nan_v, _isnan(em, ab))))
    return FUNCTIONS["numpy.sum"](em, before, axis=-1, dtype=np.int64)


note("numpy.searchsorted", "compares every element (O(len(a) * len(v))); no sorter=")
note("numpy.pad", "modes constant, edge, reflect, symmetric, wrap")
note("numpy.repeat", "compile-time repeats")
note("numpy.split", "compile-time sections or indices; returns a list")
note("numpy.array_split", "compile-time sections or indices; returns a list")


def _fmod(em, a, b, out_dtype):
    """C fmod: the remainder has the dividend's sign (stablehlo.remainder). Integers: NumPy gives
    0 for a divisor of 0."""
    if is_float(a.dtype):
        return em.emit("rem", a, b)
    if is_bool(a.dtype):
        raise NotSupportedError("np.fmod of booleans is not supported")
    zero = _c(em, 0, b)
    safe = _sel(em, _cmp(em, b, zero, "EQ"), _c(em, 1, b), b)
    if a.dtype.kind == "i":   # INT_MIN fmod -1 overflows in C: the answer is 0
        safe = _sel(em, _cmp(em, safe, _c(em, -1, b), "EQ"), _c(em, 1, b), safe)
    return _sel(em, _cmp(em, b, zero, "EQ"), zero, em.emit("rem", a, safe))


ufunc(np.fmod, _fmod)


# ---------------------------------------------------------------- the math module on run-time values

def _math(np_name, domain=None, overflow=False, to_int=False):
    """math.f(x) where x is a run-time number (a 0-d array or Python scalar argument): Python
    converts x to float, so this is NumPy's float64 function with a Python float (weak) result;
    where math raises (a domain or range error) the compiled code raises RunError."""
    def impl(em, *args):
        xs = []
        for x in args:
            if isinstance(x, Traced):
                if x.type.size != 1:
                    raise ShapeError("TypeError: only 0-dimensional arrays can be converted to Python scalars")
                x = em.cast(reshape(em, x, ()) if x.ndim else x, np.float64)
                x = Traced(x.value, None, x.params)
            xs.append(x)
        out = FUNCTIONS[np_name](em, *[em.asarray(x, np.float64) for x in xs])
        if domain is not None:
            em.check(domain(em, *[em.asarray(x, np.float64) for x in xs]), "ValueError: math domain error")
        if overflow:
            finite_in = em.asarray(xs[0], np.float64)
            em.check(em.emit("and", em.emit("is_finite", finite_in),
                             em.emit("not", em.emit("is_finite", out))), "OverflowError: math range error")
        if to_int:
            return Traced(em.cast(out, np.int64).value, int, out.params)
        return Traced(out.value, float, out.params)
    return impl


def _below(limit, inclusive=False):
    return lambda em, x: _cmp(em, x, em.full(limit, np.float64, x.shape), "LE" if inclusive else "LT")


MATH = {
    "sqrt": _math("numpy.sqrt", _below(0.0)), "exp": _math("numpy.exp", overflow=True),
    "log": _math("numpy.log", _below(0.0, True)), "log10": _math("numpy.log10", _below(0.0, True)),
    "log2": _math("numpy.log2", _below(0.0, True)), "log1p": _math("numpy.log1p", _below(-1.0, True)),
    "expm1": _math("numpy.expm1", overflow=True), "sin": _math("numpy.sin"), "cos": _math("numpy.cos"),
    "tan": _math("numpy.tan"), "tanh": _math("numpy.tanh"), "atan": _math("numpy.arctan"),
    "atan2": _math("numpy.arctan2"), "hypot": _math("numpy.hypot"), "fabs": _math("numpy.absolute"),
    "floor": _math("numpy.floor", to_int=True), "ceil": _math("numpy.ceil", to_int=True),
    "trunc": _math("numpy.trunc", to_int=True), "sinh": _math("numpy.sinh", overflow=True),
    "cosh": _math("numpy.cosh", overflow=True),
}
