"""calculus: differences (diff, ediff1d, gradient), integration (trapezoid), interpolation (interp),
polynomials (polyval, vander) and 1-D convolution (convolve, correlate). Each follows NumPy's own
Python code step by step, composed from the registered functions, so dtypes and rounding are
NumPy's; what NumPy does in C (interp, correlate) is written from its C source."""
from __future__ import annotations

import numpy as np

from ...errors import NotSupportedError, ShapeError
from ..indexing import getitem
from ..operators import apply_operator
from ..registry import FUNCTIONS, register
from ..values import folding
from .creation import as_array
from .elementwise import cmp, isnan, sel
from .shapes import concatenate, normalize_axes, normalize_axis, reshape

_NO_VALUE = np._NoValue   # NumPy's own "not given" default, so that fold passes it through unchanged


def _along(axis, ndim, index):
    """The index tuple selecting `index` along `axis` (basic indexing: a view, as NumPy's)."""
    return (slice(None),) * axis + (index,) + (slice(None),) * (ndim - axis - 1)


def _sub(em, a, b):
    return apply_operator(em, "Sub", a, b)


@register("numpy.diff", views=True)   # (n=0: NumPy returns the argument)
@folding(np.diff)
def diff(em, a, n=1, axis=-1, prepend=_NO_VALUE, append=_NO_VALUE):
    n, axis = em.static(n, "diff: n"), em.static(axis, "diff: axis")
    if n == 0:
        return a
    if n < 0:
        raise ShapeError(f"diff: order must be non-negative but got {n!r}")
    a = as_array(em, a)
    if a.ndim == 0:
        raise ShapeError("diff: diff requires input that is at least one dimensional")
    axis = normalize_axis(axis, a.ndim, "diff")
    combined = []
    for extra in (prepend, None, append):
        if extra is None:
            combined.append(a)
        elif extra is not _NO_VALUE:
            extra = as_array(em, extra)
            if extra.ndim == 0:
                extra = em.broadcast(extra, a.shape[:axis] + (1,) + a.shape[axis + 1:])
            combined.append(extra)
    if len(combined) > 1:
        a = concatenate(em, combined, axis)
    op = FUNCTIONS["numpy.not_equal" if a.dtype == np.bool_ else "numpy.subtract"]
    for _ in range(n):
        a = op(em, getitem(em, a, _along(axis, a.ndim, slice(1, None))), getitem(em, a, _along(axis, a.ndim, slice(None, -1))))
    return a


@register("numpy.ediff1d")
@folding(np.ediff1d)
def ediff1d(em, ary, to_end=None, to_begin=None):
    ary = reshape(em, as_array(em, ary), -1)
    d = _sub(em, getitem(em, ary, slice(1, None)), getitem(em, ary, slice(None, -1)))
    if to_begin is None and to_end is None:
        return d
    parts = []
    for extra, name in ((to_begin, "to_begin"), (None, None), (to_end, "to_end")):
        if name is None:
            parts.append(em.cast(d, ary.dtype))
        elif extra is not None:
            extra = as_array(em, extra)
            if not np.can_cast(extra.dtype, ary.dtype, casting="same_kind"):
                raise ShapeError(f"ediff1d: dtype of `{name}` must be compatible with input `ary` under the "
                                 "`same_kind` rule.")
            parts.append(em.cast(reshape(em, extra, -1), ary.dtype))
    return concatenate(em, parts)


@register("numpy.gradient", note="spacing: scalars or coordinate arrays per axis; edge_order 1 or 2 (edges and "
                                 "non-uniform points are sums of three products: reduction tolerance)")
@folding(np.gradient)
def gradient(em, f, *varargs, axis=None, edge_order=1):
    f = as_array(em, f)
    edge_order = em.static(edge_order, "gradient: edge_order")
    axes = normalize_axes(em, axis, f.ndim, "gradient")
    if not varargs:
        dx = [1.0] * len(axes)
    elif len(varargs) == 1 and len(em.shape_of(varargs[0])) == 0:
        dx = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        dx = list(varargs)
    else:
        raise ShapeError("gradient: invalid number of arguments")
    if edge_order > 2:
        raise ShapeError("gradient: 'edge_order' greater than 2 not supported")
    otype = f.dtype if f.dtype.kind in "fc" else np.dtype(np.float64)
    if f.dtype.kind in "iu":
        f = em.cast(f, np.float64)
    outs = []
    for ax, h in zip(axes, dx):
        if len(em.shape_of(h)):
            h = as_array(em, h)
            if h.ndim != 1:
                raise ShapeError("gradient: distances must be either scalars or 1d")
            if h.shape[0] != f.shape[ax]:
                raise ShapeError("gradient: when 1d, distances must match the length of the corresponding dimension")
        if f.shape[ax] < edge_order + 1:
            raise ShapeError("gradient: Shape of array too small to calculate a numerical gradient, at least "
                             "(edge_order + 1) elements are required.")
        if not len(em.shape_of(h)):
            outs.append(_gradient_uniform(em, f, ax, h, edge_order, otype))
            continue
        # coordinates: NumPy takes their differences, and uses the uniform formulas when all are equal
        known = h.const
        diffx = diff(em, em.cast(h, np.float64) if h.dtype.kind in "iu" else h)
        first = getitem(em, diffx, 0)
        if known is not None:   # coordinates known at compile time: NumPy's choice, made now
            d = np.diff(known.astype(np.float64) if known.dtype.kind in "iu" else known)
            outs.append(_gradient_uniform(em, f, ax, first, edge_order, otype) if (d == d[0]).all() else
                        _gradient_coordinates(em, f, ax, diffx, edge_order, otype))
            continue
        equal = FUNCTIONS["numpy.all"](em, FUNCTIONS["numpy.equal"](em, diffx, first))
        outs.append(FUNCTIONS["numpy.where"](em, equal, _gradient_uniform(em, f, ax, first, edge_order, otype),
                                             _gradient_coordinates(em, f, ax, diffx, edge_order, otype)))
    return outs[0] if len(axes) == 1 else tuple(outs)


def _combine(em, terms):
    """a * f1 + b * f2 + c * f3, in NumPy's order, from (coefficient, values) pairs."""
    (a, x), (b, y), (c, z) = terms
    mul = lambda u, v: apply_operator(em, "Mult", u, v)
    return apply_operator(em, "Add", apply_operator(em, "Add", mul(a, x), mul(b, y)), mul(c, z))


def _gradient_uniform(em, f, ax, h, edge_order, otype):
    """np.gradient along one axis with a scalar spacing h (NumPy's formulas and their order)."""
    at = lambda index: getitem(em, f, _along(ax, f.ndim, index))
    div = lambda x, y: apply_operator(em, "Div", x, y)
    inner = div(_sub(em, at(slice(2, None)), at(slice(None, -2))), apply_operator(em, "Mult", 2.0, h))
    if edge_order == 1:
        first = div(_sub(em, at(slice(1, 2)), at(slice(0, 1))), h)
        last = div(_sub(em, at(slice(-1, None)), at(slice(-2, -1))), h)
    else:
        first = _combine(em, [(div(c, h), at(s)) for c, s in ((-1.5, slice(0, 1)), (2.0, slice(1, 2)), (-0.5, slice(2, 3)))])
        last = _combine(em, [(div(c, h), at(s)) for c, s in ((0.5, slice(-3, -2)), (-2.0, slice(-2, -1)),
                                                              (1.5, slice(-1, None)))])
    return concatenate(em, [em.cast(em.asarray(p), otype) for p in (first, inner, last)], ax)


def _gradient_coordinates(em, f, ax, d, edge_order, otype):
    """np.gradient along one axis with coordinate differences d (NumPy's non-uniform formulas)."""
    at = lambda index: getitem(em, f, _along(ax, f.ndim, index))
    op = lambda name, x, y: apply_operator(em, name, x, y)
    add, sub, mul, div = (lambda x, y, n=n: op(n, x, y) for n in ("Add", "Sub", "Mult", "Div"))
    neg = lambda x: FUNCTIONS["numpy.negative"](em, x)
    dx1, dx2 = getitem(em, d, slice(0, -1)), getitem(em, d, slice(1, None))
    along = lambda v: reshape(em, v, tuple(-1 if i == ax else 1 for i in range(f.ndim)))
    a = along(div(neg(dx2), mul(dx1, add(dx1, dx2))))
    b = along(div(sub(dx2, dx1), mul(dx1, dx2)))
    c = along(div(dx1, mul(dx2, add(dx1, dx2))))
    inner = _combine(em, [(a, at(slice(None, -2))), (b, at(slice(1, -1))), (c, at(slice(2, None)))])
    if edge_order == 1:
        first = div(_sub(em, at(slice(1, 2)), at(slice(0, 1))), getitem(em, d, 0))
        last = div(_sub(em, at(slice(-1, None)), at(slice(-2, -1))), getitem(em, d, -1))
    else:
        dx1, dx2 = getitem(em, d, 0), getitem(em, d, 1)
        first = _combine(em, [(div(neg(add(mul(2.0, dx1), dx2)), mul(dx1, add(dx1, dx2))), at(slice(0, 1))),
                              (div(add(dx1, dx2), mul(dx1, dx2)), at(slice(1, 2))),
                              (div(neg(dx1), mul(dx2, add(dx1, dx2))), at(slice(2, 3)))])
        dx1, dx2 = getitem(em, d, -2), getitem(em, d, -1)
        last = _combine(em, [(div(dx2, mul(dx1, add(dx1, dx2))), at(slice(-3, -2))),
                             (div(neg(add(dx2, dx1)), mul(dx1, dx2)), at(slice(-2, -1))),
                             (div(add(mul(2.0, dx2), dx1), mul(dx2, add(dx1, dx2))), at(slice(-1, None)))])
    return concatenate(em, [em.cast(em.asarray(p), otype) for p in (first, inner, last)], ax)


@register("numpy.trapezoid")
@folding(np.trapezoid)
def trapezoid(em, y, x=None, dx=1.0, axis=-1):
    y = as_array(em, y)
    axis = normalize_axis(em.static(axis, "trapezoid: axis"), y.ndim, "trapezoid")
    if x is None:
        d = dx
    else:
        x = as_array(em, x)
        if x.ndim == 1:
            d = diff(em, x)
            d = reshape(em, d, tuple(d.shape[0] if i == axis else 1 for i in range(y.ndim)))
        else:
            d = diff(em, x, axis=axis)
    mid = apply_operator(em, "Add", getitem(em, y, _along(axis, y.ndim, slice(1, None))),
                         getitem(em, y, _along(axis, y.ndim, slice(None, -1))))
    return FUNCTIONS["numpy.sum"](em, apply_operator(em, "Div", apply_operator(em, "Mult", d, mid), 2.0), axis=axis)


@register("numpy.interp", note="left=, right=; xp found by binary search (with NaN in xp, NumPy's result depends "
                               "on the order of x); period= and complex fp are refused")
@folding(np.interp)
def interp(em, x, xp, fp, left=None, right=None, period=None):
    """NumPy's C loop (compiled_base.c arr_interp), elementwise: the interval by comparing x with
    every xp (searchsorted), then the same slope formula and the same NaN fallbacks."""
    if period is not None:
        raise NotSupportedError("interp: period= is not supported")
    fp = as_array(em, fp)
    if fp.dtype.kind == "c":
        raise NotSupportedError("interp: complex fp is not supported")
    f64 = np.dtype(np.float64)
    x, xp, fp = (em.cast(as_array(em, v), f64) for v in (x, xp, fp))
    if xp.ndim != 1 or fp.ndim != 1:
        raise ShapeError("interp: object too deep for desired array" if xp.ndim > 1 or fp.ndim > 1 else
                         "interp: object of too small depth for desired array")
    n = xp.shape[0]
    if n == 0:
        raise ShapeError("interp: array of sample points is empty")
    if fp.shape[0] != n:
        raise ShapeError("interp: fp and xp are not of the same length.")
    full = lambda v: em.broadcast(v, x.shape)
    first, last = getitem(em, fp, 0), getitem(em, fp, -1)
    lval = full(first if left is None else em.cast(as_array(em, left), f64))
    rval = full(last if right is None else em.cast(as_array(em, right), f64))
    if lval.shape != x.shape or rval.shape != x.shape:
        raise ShapeError("interp: left and right must be scalars")
    x0, xn = full(getitem(em, xp, 0)), full(getitem(em, xp, -1))
    if n == 1:   # NumPy's special case: NaN x gives fp[0]
        return sel(em, cmp(em, x, x0, "LT"), lval, sel(em, cmp(em, x, x0, "GT"), rval, full(first)))
    return _interp_between(em, x, xp, fp, n - 2, x0, xn, first, last, lval, rval)


def _interp_between(em, x, xp, fp, most, x0, xn, first, last, lval, rval):
    """interp's values from the interval of each x (j at most `most`, a run-time value for the
    points of a selection), NumPy's slope formula and NaN fallbacks."""
    full = lambda v: em.broadcast(v, x.shape)
    j = _sub(em, FUNCTIONS["numpy.searchsorted"](em, xp, x, side="right"), 1)
    j = FUNCTIONS["numpy.clip"](em, j, 0, most)
    xj, xj1 = getitem(em, xp, j), getitem(em, xp, apply_operator(em, "Add", j, 1))
    fj, fj1 = getitem(em, fp, j), getitem(em, fp, apply_operator(em, "Add", j, 1))
    rise, run = em.emit("sub", fj1, fj), em.emit("sub", xj1, xj)
    slope = em.emit("div", rise, run)
    out = em.emit("add", em.emit("mul", slope, em.emit("sub", x, xj)), fj)
    other = em.emit("add", em.emit("mul", slope, em.emit("sub", x, xj1)), fj1)
    # a subnormal slope (a rise of 1 over a run of 1e308) is flushed to 0 by IREE's CPU code, where
    # NumPy's slope * (x - xp[j]) is still a normal number: there the fraction of the run first
    if x.dtype.kind == "f":
        tiny = em.full(np.finfo(x.dtype).tiny, x.dtype, x.shape)
        small = em.emit("and", cmp(em, em.emit("abs", slope), tiny, "LT"), cmp(em, rise, em.full(0, x.dtype, x.shape), "NE"))
        fraction = em.emit("add", em.emit("mul", em.emit("div", em.emit("sub", x, xj), run), rise), fj)
        out = sel(em, small, fraction, out)
    out = sel(em, isnan(em, out), other, out)
    out = sel(em, em.emit("and", isnan(em, out), cmp(em, fj, fj1, "EQ")), fj, out)
    out = sel(em, cmp(em, x, xj, "EQ"), fj, out)
    out = sel(em, cmp(em, x, xn, "EQ"), full(last), out)
    out = sel(em, cmp(em, x, xn, "GT"), rval, sel(em, cmp(em, x, x0, "LT"), lval, out))   # C's order of tests
    return sel(em, isnan(em, x), x, out)


def _interp_of_selections(em, x, xp, fp, left=None, right=None, period=None):
    """np.interp(x, xp[ok], fp[ok]) (filling gaps: `np.interp(t, t[good], y[good])`): the points
    compacted to the front, the entries past their run-time count made +inf (never at or below an
    x that is not +inf), each x's interval at most count - 2; NumPy's ValueError for no points and
    its special case for one, chosen at run time."""
    from ..masked import Masked, aligned
    from ..values import Traced
    ms = [v for v in (xp, fp) if isinstance(v, Masked)]
    if isinstance(x, Masked) and len(ms) == 0 and x.where[0] != "grid" and x._data is not None:
        # x[nans] at fixed points: elementwise in x (out[nans] = np.interp(x[nans], ...))
        out = interp(em, x.data, xp, fp, left, right, period)
        return Masked(Traced(out.value, None, x.params), x.axis, x.where, x.key, x.params)
    if isinstance(x, Masked) and x.where[0] != "grid" and x._data is not None:
        out = _interp_of_selections(em, x.data, xp, fp, left, right, period)
        if out is NotImplemented:
            return out
        return Masked(Traced(out.value, None, x.params), x.axis, x.where, x.key, x.params)
    if isinstance(x, Masked) or period is not None or len(ms) != 2 or not aligned(xp, fp) \
            or xp.where[0] == "grid" or xp._data is None or fp._data is None or xp.data.ndim != 1 \
            or fp.data.dtype.kind == "c" or any(isinstance(v, Masked) for v in (left, right)):
        return NotImplemented
    from ..compaction import compacted
    f64 = np.dtype(np.float64)
    xpc, count = compacted(em, xp)
    fpc, _ = compacted(em, fp)
    xpc, fpc, x = em.cast(xpc, f64), em.cast(fpc, f64), em.cast(as_array(em, x), f64)
    cap = xpc.shape[0]
    past = cmp(em, em.emit("iota", shape=(cap,), dim=0, dtype=np.dtype(np.int64)), em.broadcast(count, (cap,)), "GE")
    xpc = sel(em, past, em.full(np.inf, f64, (cap,)), xpc)
    em.check(cmp(em, count, em.constant(np.int64(0)), "EQ"), "ValueError: array of sample points is empty")
    full = lambda v: em.broadcast(v, x.shape)
    lastpos = FUNCTIONS["numpy.maximum"](em, _sub(em, count, 1), 0)
    first, last = getitem(em, fpc, 0), getitem(em, fpc, lastpos)
    lval = full(first if left is None else em.cast(as_array(em, left), f64))
    rval = full(last if right is None else em.cast(as_array(em, right), f64))
    if lval.shape != x.shape or rval.shape != x.shape:
        raise ShapeError("interp: left and right must be scalars")
    x0, xn = full(getitem(em, xpc, 0)), full(getitem(em, xpc, lastpos))
    one = sel(em, cmp(em, x, x0, "LT"), lval, sel(em, cmp(em, x, x0, "GT"), rval, full(first)))
    if cap < 2:
        return one
    most = FUNCTIONS["numpy.maximum"](em, _sub(em, count, 2), 0)
    many = _interp_between(em, x, xpc, fpc, most, x0, xn, first, last, lval, rval)
    return sel(em, full(cmp(em, count, em.constant(np.int64(1)), "EQ")), one, many)


interp.on_masked = _interp_of_selections


@register("numpy.polyval")
@folding(np.polyval)
def polyval(em, p, x):
    p = as_array(em, p)
    x = as_array(em, x)
    y = em.full(0, x.dtype, x.shape)
    for i in range(p.shape[0] if p.ndim else 0):
        y = apply_operator(em, "Add", apply_operator(em, "Mult", y, x), getitem(em, p, i))
    return y


@register("numpy.vander")
@folding(np.vander)
def vander(em, x, N=None, increasing=False):
    x = as_array(em, x)
    if x.ndim != 1:
        raise ShapeError("vander: x must be a one-dimensional array or sequence.")
    N = x.shape[0] if N is None else em.static(N, "vander: N")
    increasing = em.static(increasing, "vander: increasing")
    dt = np.promote_types(x.dtype, np.int64)
    col = em.full(1, dt, x.shape)
    x = em.cast(x, dt)
    cols = []
    for k in range(N):   # x, x*x, (x*x)*x, ...: NumPy's multiply.accumulate, in its order
        cols.append(reshape(em, col, (-1, 1)))
        col = em.emit("mul", col, x) if dt != np.bool_ else em.emit("and", col, x)
    if not cols:
        return em.full(0, dt, (x.shape[0], 0))
    return concatenate(em, cols if increasing else cols[::-1], 1)


# The shorter array's length up to which correlate/convolve sum one shifted slice per element of it
# (a 31-tap FIR filter on 20,000 samples: 17 ms as one gather of every window, NumPy 0.7 ms);
# longer float32/float64 ones are one convolution (_correlate_by_convolution: each shifted slice
# costs compile time, 20000 by 128 taps compiled for 18 s); other longer ones take one dot product
# per output in a loop (CPU: correlation_loop), else gather the windows (length x taps elements).
SHIFTED_TAPS = 128
SHIFTED_FLOAT_TAPS = 16


def _correlate_by_shifts(em, a, v, left, length, boolean, acc):
    """out[k] = sum_j a[k + j - left] * v[j], one term per j: the product of a's overlapping slice
    with v[j] (only overlapping elements are multiplied, as NumPy: no inf * 0 from a pad), summed
    in j's order. The outputs every tap overlaps are slices of one length, no pad (with pads IREE
    made a pass per tap: mode="same" of 1e6 by 25 taps took 157 ms, "valid" 2.7 ms); the few at
    each end are padded."""
    n1, n2 = a.shape[0], v.shape[0]
    lo_all, hi_all = left, n1 - n2 + 1 + left        # the k where a's index is inside for every j
    if not 0 <= lo_all < hi_all <= length or (lo_all == 0 and hi_all == length):
        return _shifted_terms(em, a, v, left, 0, length, boolean, acc)
    parts = [_shifted_terms(em, a, v, left, k0, k1, boolean, acc)
             for k0, k1 in ((0, lo_all), (lo_all, hi_all), (hi_all, length)) if k0 < k1]
    return em.emit("concatenate", *parts, axis=0)


def _shifted_terms(em, a, v, left, k0, k1, boolean, acc):
    """_correlate_by_shifts' outputs k0 <= k < k1."""
    n1, n2 = a.shape[0], v.shape[0]
    total = None
    for j in range(n2):
        lo, hi = max(k0, left - j), min(k1, n1 + left - j)    # the k where a's index is inside
        if lo >= hi:
            continue
        part = getitem(em, a, slice(lo + j - left, hi + j - left))
        term = em.emit("and" if boolean else "mul", part, em.broadcast(getitem(em, v, j), part.shape))
        term = em.cast(term, acc)
        if lo > k0 or hi < k1:
            term = em.emit("pad", term, em.full(0, acc, ()), low=(lo - k0,), high=(k1 - hi,), interior=(0,))
        total = term if total is None else em.emit("or" if boolean else "add", total, term)
    return total if total is not None else em.full(0, acc, (k1 - k0,))


def correlation_loop(a, v, left, length):
    """out[k] = a[k + j - left] . v[j] over the j where a's index is inside, one dot product of two
    overlapping slices per output: compiled by pyjitc itself as a run-time loop, which runs as one
    native loop on CPU (np.correlate(x, x, "full") of 2000 samples: 19.8 ms as one gather of every
    window, 3.5 ms so; NumPy 0.46 ms)."""
    n1, n2 = a.shape[0], v.shape[0]
    out = np.zeros(length, dtype=a.dtype)
    for k in range(length):
        lo = max(0, left - k)
        hi = min(n2, n1 + left - k)
        out[k] = np.dot(a[k + lo - left:k + hi - left], v[lo:hi])
    return out


def _correlate(em, a, v, mode, name):
    """NumPy's _pyarray_correlate: the longer array first (reversing the result if swapped),
    out[k] = sum_j a[k + j - left] * v[j] over the j where a's index is inside (NumPy multiplies
    only overlapping elements: a zero pad would turn inf * 0 into NaN); one gather, one reduction."""
    mode = em.static(mode, f"{name}: mode")
    modes = {"valid": 0, "same": 1, "full": 2, 0: 0, 1: 1, 2: 2, "v": 0, "s": 1, "f": 2}
    if mode not in modes:
        raise ShapeError(f"{name}: mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    mode = modes[mode]
    a, v = (as_array(em, t) for t in (a, v))
    if a.ndim != 1 or v.ndim != 1:
        raise ShapeError(f"{name}: object {'too deep' if max(a.ndim, v.ndim) > 1 else 'of too small depth'} for "
                         "desired array")
    dt = np.result_type(a.dtype, v.dtype)
    a, v = em.cast(a, dt), em.cast(v, dt)
    n1, n2 = a.shape[0], v.shape[0]
    if n1 == 0 or n2 == 0:
        raise ShapeError(f"{name}: {'first' if n1 == 0 else 'second'} array argument cannot be empty")
    inverted = n1 < n2
    if inverted:
        a, v, n1, n2 = v, a, n2, n1
    left, length = {0: (0, n1 - n2 + 1), 1: (n2 // 2, n1), 2: (n2 - 1, n1 + n2 - 1)}[mode]
    boolean = dt == np.bool_
    acc = np.dtype(np.float32) if dt == np.float16 else dt     # float16 sums in float32, as NumPy's dot
    static = isinstance(n2, int) and isinstance(n1, int)
    if static and n2 > SHIFTED_FLOAT_TAPS and dt in (np.float32, np.float64):
        out = _correlate_by_convolution(em, a, v, left, length)
        return FUNCTIONS["numpy.flip"](em, out) if inverted else out
    if static and n2 <= SHIFTED_TAPS:
        out = _correlate_by_shifts(em, a, v, left, length, boolean, acc)
        out = em.cast(out, dt)
        return FUNCTIONS["numpy.flip"](em, out) if inverted else out
    if em.element_loops and dt.kind in "iuf" and dt.itemsize >= 4:   # (CPU: the loop is native)
        out = em.call_function(correlation_loop, name, [a, v, left, length], {})
        return FUNCTIONS["numpy.flip"](em, out) if inverted else out
    out = _correlate_by_windows(em, a, v, left, 0, length, boolean, acc, dt)
    return FUNCTIONS["numpy.flip"](em, out) if inverted else out


def _correlate_by_windows(em, a, v, left, k0, k1, boolean, acc, dt):
    """Outputs k0 <= k < k1 as one gather of each output's window (k1 - k0 by n2 elements), the
    products outside a's bounds left out (zeros after the product: NumPy's inf * 0 never made)."""
    n1, n2 = a.shape[0], v.shape[0]
    shape = (k1 - k0, n2)
    i64 = np.dtype(np.int64)
    # index[k, j] = k + j - left, made in the program (as a constant it would be length * n2 integers)
    index = em.emit("sub", em.emit("add", em.emit("iota", shape=shape, dim=0, dtype=i64),
                                   em.emit("iota", shape=shape, dim=1, dtype=i64)), em.full(left - k0, i64, shape))
    inside = em.emit("and", cmp(em, index, em.full(0, i64, shape), "GE"), cmp(em, index, em.full(n1, i64, shape), "LT"))
    windows = em.emit("take", a, sel(em, inside, index, em.full(0, i64, shape)))
    products = em.emit("and" if boolean else "mul", windows, em.broadcast(v, shape))
    products = sel(em, inside, products, em.full(0, dt, shape))
    return em.cast(em.emit("reduce", em.cast(products, acc), kind="or" if boolean else "add", axes=(1,)), dt)


def _correlate_by_convolution(em, a, v, left, length):
    """float32/float64 with more than SHIFTED_FLOAT_TAPS taps: the outputs every tap overlaps
    (k in [left, left + n1 - n2]) as one convolution (the IR op `correlate`), the few at each end,
    which only part of v overlaps, by windows."""
    n1, n2 = a.shape[0], v.shape[0]
    lo_all, hi_all = left, n1 - n2 + 1 + left
    dt = a.dtype
    parts = [_correlate_by_windows(em, a, v, left, 0, lo_all, False, dt, dt)] if lo_all > 0 else []
    parts.append(em.emit("correlate", a, v))
    if hi_all < length:
        parts.append(_correlate_by_windows(em, a, v, left, hi_all, length, False, dt, dt))
    return parts[0] if len(parts) == 1 else em.emit("concatenate", *parts, axis=0)


@register("numpy.correlate", note="1-D; modes valid, same, full; products summed in another order (reduction tolerance)")
@folding(np.correlate)
def correlate(em, a, v, mode="valid"):
    return _correlate(em, a, v, mode, "correlate")


@register("numpy.convolve", note="1-D; modes valid, same, full; products summed in another order (reduction tolerance)")
@folding(np.convolve)
def convolve(em, a, v, mode="full"):
    a, v = as_array(em, a), as_array(em, v)
    a, v = (reshape(em, t, (1,)) if t.ndim == 0 else t for t in (a, v))
    if v.ndim == 1 and a.ndim == 1 and v.shape[0] > a.shape[0]:
        a, v = v, a
    if a.ndim == 1 and a.shape[0] == 0:
        raise ShapeError("convolve: a cannot be empty")
    if v.ndim == 1 and v.shape[0] == 0:
        raise ShapeError("convolve: v cannot be empty")
    return _correlate(em, a, FUNCTIONS["numpy.flip"](em, v) if v.ndim == 1 else v, mode, "convolve")
