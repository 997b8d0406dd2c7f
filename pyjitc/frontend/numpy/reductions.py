"""reductions: sums, products, extrema, means, variances, arg-extrema, NaN-ignoring reductions and
cumulative sums, with NumPy's result dtypes (NumPy run on a one-element array decides them) and its
accumulation dtypes (float16 in float32, integer means in float64)."""
from __future__ import annotations

import numpy as np

from ...ir import dims
from ...errors import NotSupportedError, ShapeError
from ...ir.ops import reduce_identity
from ...ir.types import is_bool, is_complex, is_float, real_dtype
from ..registry import FUNCTIONS, register
from ..values import Traced, fold, is_static
from .accurate import complex_divide
from .dtypes import static_dtype
from .elementwise import cmp, const, isnan, sel
from .shapes import normalize_axes, normalize_axis, reshape, take_slice
from .ufuncs import into_out

def _reduce_dtype(np_fn, dtype, requested):
    kw = {} if requested is None else {"dtype": requested}
    with np.errstate(all="ignore"):
        return np.asarray(np_fn(np.ones(1, dtype=dtype), **kw)).dtype


def _keep(em, out, shape, axes, keepdims):
    if not keepdims:
        return out
    return reshape(em, out, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def _where_mask(em, where, shape, name) -> Traced | None:
    """`where=`: a bool mask broadcast to the reduced array's shape (None: every element)."""
    if where is None or where is True:
        return None
    if not isinstance(where, Traced):
        where = np.asarray(where)
    if where.dtype != np.bool_:
        raise ShapeError(f"{name}: where= must be a boolean array, got dtype {where.dtype}")
    if np.broadcast_shapes(tuple(where.shape), tuple(shape)) != tuple(shape):
        raise ShapeError(f"{name}: where= of shape {tuple(where.shape)} does not broadcast to the "
                         f"array's shape {tuple(shape)}")
    return em.broadcast(em.asarray(where), tuple(shape))


def reduction_rule(np_fn, kind_for):
    """sum/prod/max/min/any/all: NumPy's result dtype, accumulation in it (f16 in f32); `where=`
    puts the reduction's identity in the masked-out places, `initial=` is one more operand."""
    name = np_fn.__name__

    def impl(em, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        if out is not None:
            return into_out(em, name, out, impl(em, a, axis, dtype, None, keepdims, initial, where), "unsafe")
        keepdims = em.static(keepdims, f"{name}: keepdims")
        dtype = None if dtype is None else static_dtype(em, dtype)
        extra = {k: v for k, v in (("dtype", dtype), ("initial", initial), ("where", where)) if v is not None}
        if is_static(a, initial, where):
            return fold(np_fn, a, axis=em.static(axis, "axis"), keepdims=keepdims, **extra)
        initial = None if initial is None else em.static(initial, f"{name}: initial")
        a = em.asarray(a)
        axes = normalize_axes(em, axis, a.ndim, name)
        res = _reduce_dtype(np_fn, a.dtype, dtype) if name not in ("max", "min") else a.dtype
        kind = kind_for(res)
        if kind in ("max", "min") and initial is None and where is not None and where is not True:
            op = {"max": "maximum", "min": "minimum"}[kind]
            raise ShapeError(f"reduction operation '{op}' does not have an identity, so to use a where "
                             "mask one has to specify 'initial'")
        if kind in ("max", "min") and initial is None and any(a.shape[i] == 0 for i in axes):
            op = {"max": "maximum", "min": "minimum"}[kind]
            raise ShapeError(f"zero-size array to reduction operation {op} which has no identity")
        acc = np.dtype(np.float32) if res == np.float16 else res
        x = em.cast(a, acc)
        mask = _where_mask(em, where, a.shape, name)
        if mask is not None:
            x = sel(em, mask, x, em.full(reduce_identity(kind, acc), acc, x.shape))
        # nothing to reduce (a 0-d array): a new value, not the argument itself (NumPy returns a scalar)
        out = em.emit("reduce", x, kind=kind, axes=axes) if axes else Traced(x.value, None, x.params)
        if initial is not None:
            try:
                init = em.full(initial, acc, out.shape)
            except OverflowError as e:     # (NumPy raises it too: uint8's min(initial=-5))
                raise ShapeError(f"OverflowError: {e}") from None
            out = em.emit(kind, out, init)
        return _keep(em, em.cast(out, res), a.shape, axes, keepdims)
    impl.__name__ = name
    return impl


_sum = reduction_rule(np.sum, lambda dt: "or" if is_bool(dt) else "add")
_prod = reduction_rule(np.prod, lambda dt: "and" if is_bool(dt) else "mul")
_max = reduction_rule(np.max, lambda dt: "or" if is_bool(dt) else "max")
_min = reduction_rule(np.min, lambda dt: "and" if is_bool(dt) else "min")
_any = reduction_rule(np.any, lambda dt: "or")
_all = reduction_rule(np.all, lambda dt: "and")
register("numpy.sum", method="sum", complex_ok=True)(_sum)
register("numpy.prod", method="prod", complex_ok=True)(_prod)
register("numpy.max", "numpy.amax", method="max")(_max)
register("numpy.min", "numpy.amin", method="min")(_min)
register("numpy.any", method="any")(_any)
register("numpy.all", method="all")(_all)


@register("numpy.mean", method="mean", complex_ok=True)
def mean(em, a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    if out is not None:
        return into_out(em, "mean", out, mean(em, a, axis, dtype, None, keepdims, where), "unsafe")
    keepdims = em.static(keepdims, "mean: keepdims")
    dtype = None if dtype is None else static_dtype(em, dtype)
    if is_static(a, where):
        extra = {} if where is None else {"where": where}
        return fold(np.mean, a, axis=em.static(axis, "axis"), dtype=dtype, keepdims=keepdims, **extra)
    a = em.asarray(a)
    axes = normalize_axes(em, axis, a.ndim, "mean")
    res = _reduce_dtype(np.mean, a.dtype, dtype)
    # NumPy sums integers in float64 and float16 in float32, then divides and casts back.
    acc = dtype if dtype is not None else (np.dtype(np.float64) if a.dtype.kind in "biu" else
                                          np.dtype(np.float32) if a.dtype == np.float16 else a.dtype)
    if acc.kind not in "fc":
        acc = np.dtype(np.float64)
    n = dims.product(a.shape[i] for i in axes)
    x = em.cast(a, acc)
    mask = _where_mask(em, where, a.shape, "mean")
    if mask is not None:    # the sum and the count of the chosen elements
        x = sel(em, mask, x, em.full(0, acc, x.shape))
    s = em.emit("reduce", x, kind="add", axes=axes) if axes else x
    count = em.full(n, acc, s.shape)
    if mask is not None:
        ones = em.cast(mask, real_dtype(acc) if is_complex(acc) else acc)
        count = em.cast(em.emit("reduce", ones, kind="add", axes=axes) if axes else ones, acc)
    out = complex_divide(em, s, count) if is_complex(acc) else em.emit("div", s, count)
    return _keep(em, em.cast(out, res), a.shape, axes, keepdims)


def _axes_and_count(em, a, axis, name):
    axes = normalize_axes(em, axis, a.ndim, name)
    return axes, dims.product(a.shape[i] for i in axes)


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
        # float16 without dtype=: NumPy rounds the mean, the deviations and their squares to
        # float16 (a square past 65504 is inf), summing in float32
        half = (lambda v: em.cast(em.cast(v, np.float16), acc)) if a.dtype == np.float16 and dtype is None \
            else (lambda v: v)
        s = em.emit("reduce", x, kind="add", axes=axes) if axes else x
        mean_ = half(em.emit("div", half(s), em.full(n, acc, s.shape)))
        mean_b = reshape(em, mean_, tuple(1 if i in axes else d for i, d in enumerate(a.shape)))
        d = half(em.emit("sub", x, em.broadcast(mean_b, a.shape)))
        d2 = half(em.emit("mul", d, d))
        sq = half(em.emit("reduce", d2, kind="add", axes=axes) if axes else d2)
        out_ = em.emit("div", sq, em.full(dims.nonnegative(n - ddof), acc, sq.shape))
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
            return into_out(em, name, out, impl(em, a, axis, None, keepdims), "safe")
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
        hit = cmp(em, x, mb, "EQ")
        if is_float(x.dtype):   # the first NaN wins, as in NumPy
            hit = em.emit("or", hit, em.emit("and", isnan(em, x), isnan(em, mb)))
        idx = em.emit("iota", shape=x.shape, dim=ax, dtype=np.dtype(np.int64))
        big = em.full(n, np.int64, x.shape)
        first = em.emit("reduce", sel(em, hit, idx, big), kind="min", axes=(ax,))
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
        nan = isnan(em, a)
        if name == "nanmean":
            s = FUNCTIONS["numpy.sum"](em, sel(em, nan, const(em, 0, a), a), axis=axis, keepdims=keepdims)
            cnt = FUNCTIONS["numpy.sum"](em, em.emit("not", nan), axis=axis, keepdims=keepdims, dtype=s.dtype)
            return em.emit("div", s, cnt)
        filled = sel(em, nan, const(em, fill(a.dtype), a), a)
        out_ = FUNCTIONS[base](em, filled, axis=axis, keepdims=keepdims, **({"dtype": dtype} if dtype else {}))
        if name in ("nanmax", "nanmin"):   # all-NaN slices give NaN, as NumPy (which also warns)
            all_nan = FUNCTIONS["numpy.all"](em, nan, axis=axis, keepdims=keepdims)
            out_ = sel(em, all_nan, em.full(np.nan, out_.dtype, out_.shape), out_)
        return out_
    impl.__name__ = name
    return impl


for _name, _base, _fill in (("nansum", "numpy.sum", lambda dt: 0), ("nanprod", "numpy.prod", lambda dt: 1),
                            ("nanmax", "numpy.max", lambda dt: -np.inf), ("nanmin", "numpy.min", lambda dt: np.inf),
                            ("nanmean", "numpy.mean", None)):
    register(f"numpy.{_name}")(_nan_reduction(_name, _base, _fill))


def _nan_scan(name, base, fill):
    """np.nancumsum / np.nancumprod: NaN counted as the operation's identity."""
    def impl(em, a, axis=None, dtype=None, out=None):
        if out is not None:
            return into_out(em, name, out, impl(em, a, axis, dtype), "unsafe")
        a = em.asarray(a)
        if is_float(a.dtype):
            a = sel(em, isnan(em, a), const(em, fill, a), a)
        return FUNCTIONS[base](em, a, axis=axis, **({"dtype": dtype} if dtype is not None else {}))
    impl.__name__ = name
    return impl


def _nan_arg(name, base, fill):
    """np.nanargmax / np.nanargmin: NaN never chosen; an all-NaN slice is NumPy's ValueError (at
    run time)."""
    def impl(em, a, axis=None, out=None, *, keepdims=False):
        if out is not None:
            raise NotSupportedError(f"{name}: out= is not supported; assign the result instead")
        a = em.asarray(a)
        if not is_float(a.dtype):
            return FUNCTIONS[base](em, a, axis=axis, keepdims=keepdims)
        nan = isnan(em, a)
        em.check(FUNCTIONS["numpy.any"](em, FUNCTIONS["numpy.all"](em, nan, axis=axis)),
                 "ValueError: All-NaN slice encountered")
        return FUNCTIONS[base](em, sel(em, nan, const(em, fill, a), a), axis=axis, keepdims=keepdims)
    impl.__name__ = name
    return impl


register("numpy.nancumsum")(_nan_scan("nancumsum", "numpy.cumsum", 0))
register("numpy.nancumprod")(_nan_scan("nancumprod", "numpy.cumprod", 1))
register("numpy.nanargmax")(_nan_arg("nanargmax", "numpy.argmax", -np.inf))
register("numpy.nanargmin")(_nan_arg("nanargmin", "numpy.argmin", np.inf))


def _nan_moments(name):
    """np.nanvar / np.nanstd: the moments of the non-NaN entries (NaN where fewer than ddof + 1)."""
    def impl(em, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        axis, keepdims, ddof = em.static(axis, "axis"), em.static(keepdims, "keepdims"), em.static(ddof, "ddof")
        if out is not None or dtype is not None:
            raise NotSupportedError(f"{name}: out= and dtype= are not supported")
        if is_static(a):
            return fold(getattr(np, name), a, axis=axis, ddof=ddof, keepdims=keepdims)
        a = em.asarray(a)
        if not is_float(a.dtype):
            return FUNCTIONS[f"numpy.{name[3:]}"](em, a, axis=axis, ddof=ddof, keepdims=keepdims)
        nan = isnan(em, a)
        zero = const(em, 0, a)
        kept = sel(em, nan, zero, a)
        cnt = FUNCTIONS["numpy.sum"](em, em.emit("not", nan), axis=axis, keepdims=True, dtype=a.dtype)
        mean = em.emit("div", FUNCTIONS["numpy.sum"](em, kept, axis=axis, keepdims=True), cnt)
        dev = sel(em, nan, zero, FUNCTIONS["numpy.subtract"](em, a, mean))
        sq = FUNCTIONS["numpy.sum"](em, em.emit("mul", dev, dev), axis=axis, keepdims=keepdims)
        dof = FUNCTIONS["numpy.subtract"](em, FUNCTIONS["numpy.sum"](em, em.emit("not", nan), axis=axis,
                                                                     keepdims=keepdims, dtype=a.dtype), ddof)
        dof = em.cast(dof, sq.dtype) if isinstance(dof, Traced) else dof
        var = FUNCTIONS["numpy.divide"](em, sq, dof)
        bad = cmp(em, dof, const(em, 0, dof), "LE")
        var = sel(em, bad, const(em, np.nan, var), var)
        return FUNCTIONS["numpy.sqrt"](em, var) if name == "nanstd" else var
    impl.__name__ = name
    return impl


register("numpy.nanvar")(_nan_moments("nanvar"))
register("numpy.nanstd")(_nan_moments("nanstd"))


def _scan(name, prim, identity, np_fn):
    """cumsum/cumprod: log2(n) steps of shift-and-combine (Hillis-Steele)."""
    def impl(em, a, axis=None, dtype=None, out=None):
        if out is not None:
            return into_out(em, name, out, impl(em, a, axis, dtype), "unsafe")
        axis = em.static(axis, f"{name}: axis")
        dtype = None if dtype is None else static_dtype(em, dtype)
        if is_static(a):
            return fold(np_fn, a, axis=axis, dtype=dtype)
        a = em.asarray(a)
        res = np.asarray(np_fn(np.ones(1, dtype=a.dtype), dtype=dtype)).dtype
        x = em.cast(reshape(em, a, -1) if axis is None else a, res)
        ax = 0 if axis is None else normalize_axis(axis, a.ndim, name)
        kind = prim if not is_bool(res) else {"add": "or", "mul": "and"}[prim]
        return scan(em, x, ax, kind, identity)
    impl.__name__ = name
    return impl


def scan(em, x, ax, kind, identity):
    """The inclusive scan of x along ax with the IR primitive `kind` (add, mul, max, ...), whose
    identity element is `identity`. Static shapes: the IR op `scan` on x as (rows, n), a
    sequential loop per row where loops run natively (NumPy's order: the same rounding as its
    accumulate) and shift-and-combine steps elsewhere (lowering/scans.py). With run-time sizes,
    and under autodiff for products and extrema (the op's VJP rule is for sums): log2(n) steps
    of shift-and-combine (Hillis-Steele) here."""
    n = x.shape[ax]
    if (not em.differentiable or kind == "add") and not dims.is_symbolic(x.shape) and n > 1 and 0 not in x.shape:
        moved = FUNCTIONS["numpy.moveaxis"](em, x, ax, -1)
        rows = moved.shape[:-1]
        flat = reshape(em, moved, (int(np.prod(rows, dtype=np.int64)), n))
        out = em.emit("scan", flat, kind=kind, identity=identity)
        return FUNCTIONS["numpy.moveaxis"](em, reshape(em, out, rows + (n,)), -1, ax)
    step = 1
    while step < n:
        shifted = take_slice(em, x, ax, 0, n - step)
        pad_shape = list(x.shape)
        pad_shape[ax] = step
        pad = em.full(identity, x.dtype, tuple(pad_shape))
        moved = em.emit("concatenate", pad, shifted, axis=ax)
        x = em.emit(kind, x, moved)
        step *= 2
    return x


register("numpy.cumsum", method="cumsum",
         note="on CPU in NumPy's sequential order; on GPU targets in log2(n) steps, float sums then "
              "rounded differently (reduction tolerance)")(
    _scan("cumsum", "add", 0, np.cumsum))
register("numpy.cumprod", method="cumprod")(_scan("cumprod", "mul", 1, np.cumprod))
