"""statistics: ptp, average, median, percentile, quantile, cov, corrcoef, histogram and bincount.
Each follows NumPy's own Python code (numpy/lib/_function_base_impl.py, _histograms_impl.py),
composed from the registered functions; order statistics sort (NaN last, as NumPy's partition).
Where a result's length would depend on the data (bincount without minlength, histogram with
bins='auto'), the call is refused with a hint; bincount checks its bound at run time."""
from __future__ import annotations

import numpy as np
from numpy.lib import _function_base_impl as _npfb

from ...errors import NotSupportedError, ShapeError
from ..index_checks import index_i64
from ..indexing import getitem
from ..operators import apply_operator
from ..registry import FUNCTIONS, register
from ..values import Traced, folding
from .creation import as_array
from .elementwise import cmp, isnan, sel
from .shapes import normalize_axes, reshape, transpose

_NO_VALUE = np._NoValue


@register("numpy.ptp")
@folding(np.ptp)
def ptp(em, a, axis=None, out=None, keepdims=False):
    if out is not None:
        raise NotSupportedError("ptp: out= is not supported")
    a = as_array(em, a)
    return FUNCTIONS["numpy.subtract"](em, FUNCTIONS["numpy.max"](em, a, axis=axis, keepdims=keepdims),
                                       FUNCTIONS["numpy.min"](em, a, axis=axis, keepdims=keepdims))


@register("numpy.average", note="a zero sum of weights is a run-time error (NumPy's ZeroDivisionError)")
@folding(np.average)
def average(em, a, axis=None, weights=None, returned=False, *, keepdims=_NO_VALUE):
    a = as_array(em, a)
    returned = em.static(returned, "average: returned")
    keep = {} if keepdims is _NO_VALUE else {"keepdims": em.static(keepdims, "average: keepdims")}
    if weights is None:
        avg = FUNCTIONS["numpy.mean"](em, a, axis, **keep)
        size = int(np.prod(avg.shape, dtype=np.int64))
        if size == 0:
            raise ShapeError("average: division by zero (the average is empty)")
        scl = avg.dtype.type(int(np.prod(a.shape, dtype=np.int64)) / size)
    else:
        w = as_array(em, weights)
        result_dtype = np.result_type(a.dtype, w.dtype, "f8") if a.dtype.kind in "biu" else \
            np.result_type(a.dtype, w.dtype)
        if a.shape != w.shape:
            if axis is None:
                raise ShapeError("average: Axis must be specified when shapes of a and weights differ.")
            axes = normalize_axes(em, axis, a.ndim, "average")
            if w.shape != tuple(a.shape[ax] for ax in axes):
                raise ShapeError("average: Shape of weights must be consistent with shape of a along specified axis.")
            w = transpose(em, w, tuple(int(i) for i in np.argsort(axes)))
            w = reshape(em, w, tuple(s if ax in axes else 1 for ax, s in enumerate(a.shape)))
        scl = FUNCTIONS["numpy.sum"](em, w, axis=axis, dtype=result_dtype, **keep)
        if any(w.shape[i] == 0 for i in normalize_axes(em, axis, w.ndim, "average")):
            raise ShapeError("average: ZeroDivisionError: Weights sum to zero, can't be normalized")
        zero = FUNCTIONS["numpy.any"](em, FUNCTIONS["numpy.equal"](em, scl, 0.0))
        em.check(zero, "ZeroDivisionError: Weights sum to zero, can't be normalized")
        prod = FUNCTIONS["numpy.multiply"](em, a, w, dtype=result_dtype)
        avg = FUNCTIONS["numpy.divide"](em, FUNCTIONS["numpy.sum"](em, prod, axis=axis, **keep), scl)
    if not returned:
        return avg
    if np.shape(scl) != avg.shape:
        scl = em.broadcast(em.asarray(scl), avg.shape)
    return avg, scl


def _over_axes(em, a, axis, keepdims, fn, extra_shape=()):
    """NumPy's _ureduce: fn(arr, 0) with the reduced axes moved to the front and merged into one;
    keepdims puts size-1 axes back where they were (after the quantiles' own axes, extra_shape)."""
    axes = normalize_axes(em, axis, a.ndim, "reduction")
    rest = [i for i in range(a.ndim) if i not in axes]
    arr = transpose(em, a, tuple(axes) + tuple(rest)) if axes else a
    arr = reshape(em, arr, (-1,) + tuple(a.shape[i] for i in rest)) if len(axes) != 1 else arr
    r = fn(arr)
    if em.static(keepdims, "keepdims"):
        r = reshape(em, em.asarray(r), tuple(extra_shape) + tuple(1 if i in axes else s for i, s in enumerate(a.shape)))
    return r


@register("numpy.median", note="by sorting along the axis (NaN last: a slice with NaN gives NaN, as NumPy; "
                                "see np.sort for the cost)")
@folding(np.median)
def median(em, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    if out is not None:
        raise NotSupportedError("median: out= is not supported")
    a = as_array(em, a)
    if a.dtype.kind == "c":
        raise NotSupportedError("median of complex numbers is not supported")

    def fn(arr):
        n = arr.shape[0]
        part = FUNCTIONS["numpy.sort"](em, arr, axis=0) if n else arr
        middle = slice(n // 2, n // 2 + 1) if n % 2 else slice(n // 2 - 1, n // 2 + 1)
        r = FUNCTIONS["numpy.mean"](em, getitem(em, part, middle), axis=0)
        if n and a.dtype.kind == "f":
            last = getitem(em, part, -1)
            r = sel(em, isnan(em, last), em.cast(last, r.dtype), r)
        return r
    return _over_axes(em, a, axis, keepdims, fn)


def _quantile(em, a, q, axis, method, keepdims, weights, weak_q, name):
    """NumPy's _quantile: the indices and weights (gamma) of every method are computed by NumPy's
    own helpers at compile time (they depend on q and the axis length only), the values picked
    from the sorted array."""
    if weights is not None:
        raise NotSupportedError(f"{name}: weights= is not supported")
    method = em.static(method, f"{name}: method")
    props = _npfb._QuantileMethods.get(method)
    if props is None:
        raise ShapeError(f"{name}: {method!r} is not a valid method. Use one of: {list(_npfb._QuantileMethods)}")
    q = np.asanyarray(q)
    if q.ndim > 2:
        raise ShapeError(f"{name}: q must be a scalar or 1d")
    nan_ok = a.dtype.kind == "f"

    def fn(arr):
        n = arr.shape[0]
        with np.errstate(all="ignore"):
            virtual = np.asanyarray(props["get_virtual_index"](n, q))
        srt = FUNCTIONS["numpy.sort"](em, arr, axis=0) if n else arr
        if props["fix_gamma"] is None or (method == "linear" and virtual.dtype.kind in "iu"):
            result = getitem(em, srt, virtual)     # the elements themselves
        else:
            prev, nxt = _npfb._get_indexes(np.empty(0, arr.dtype), virtual, n)
            gamma = _npfb._get_gamma(virtual, prev, props)
            gamma = float(gamma) if weak_q else gamma.reshape(virtual.shape + (1,) * (arr.ndim - 1))
            below, above = getitem(em, srt, prev), getitem(em, srt, nxt)
            result = _lerp(em, below, above, gamma)
        if nan_ok and n:
            last = getitem(em, srt, -1)
            if result.ndim == 0 and result.dtype != last.dtype:
                raise NotSupportedError(f"{name}: with a 0-d NumPy-scalar q, NumPy's result dtype depends on "
                                        "whether the data holds NaN", hint="pass q as a Python float or a list")
            nan = em.broadcast(isnan(em, last), result.shape)
            result = sel(em, nan, em.broadcast(em.cast(last, result.dtype), result.shape), result)
        return result
    return _over_axes(em, a, axis, keepdims, fn, q.shape)


def _lerp(em, a, b, t):
    """NumPy's _lerp: a + (b - a) * t, or b - (b - a) * (1 - t) where t >= 0.5 (in its dtype);
    t known at compile time, or a run-time array (nanquantile's)."""
    d = apply_operator(em, "Sub", b, a)
    out = apply_operator(em, "Add", a, apply_operator(em, "Mult", d, t))
    back = em.cast(apply_operator(em, "Sub", b, apply_operator(em, "Mult", d, apply_operator(em, "Sub", 1, t))), out.dtype)
    if isinstance(t, Traced):
        return sel(em, em.broadcast(cmp(em, t, em.full(0.5, t.dtype, t.shape), "GE"), out.shape), back, out)
    upper = np.asarray(t) >= 0.5
    if upper.ndim == 0:
        return back if upper else out
    return sel(em, em.broadcast(em.asarray(upper), out.shape), back, out)


def _quantile_args(em, a, q, name, scale):
    a = as_array(em, a)
    if a.dtype.kind == "c":
        raise ShapeError(f"{name}: a must be an array of real numbers")
    weak_q = type(q) in (int, float)
    q = em.static(q, f"{name}: q")
    with np.errstate(all="ignore"):
        q = np.asanyarray(np.true_divide(q, 100) if scale else q)
    if not _npfb._quantile_is_valid(q):
        raise ShapeError(f"{name}: {'Percentiles' if scale else 'Quantiles'} must be in the range "
                         f"[0, {100 if scale else 1}]")
    return a, q, weak_q


def _quantile_fn(name, scale):
    @register(f"numpy.{name}", note="compile-time q and method; no weights=; by sorting (see np.sort for the cost)")
    @folding(getattr(np, name))
    def impl(em, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
             weights=None):
        if out is not None:
            raise NotSupportedError(f"{name}: out= is not supported")
        a, q, weak_q = _quantile_args(em, a, q, name, scale)
        return _quantile(em, a, q, axis, method, keepdims, weights, weak_q, name)
    impl.__name__ = impl.__qualname__ = name
    return impl


_quantile_fn("quantile", False)
_quantile_fn("percentile", True)


def _nan_quantiles(em, a, q, axis, keepdims, name, weak_q=True, median=False):
    """Quantiles (method 'linear') of each lane's numbers, NaN left out (nanmedian, nanquantile,
    nanpercentile): the lane sorted (NaN last), its count c of numbers, the virtual index
    q * (c - 1) at run time, and NumPy's _lerp between the two elements around it; a lane of
    NaN only gives NaN (NumPy warns). `median`: the mean of the two middle elements instead
    (np.nanmedian is np.ma.median's (low + high) / 2, which can differ from _lerp in the last bit)."""
    a = as_array(em, a)
    if a.dtype.kind not in "f":
        return _quantile(em, a, q, axis, "linear", keepdims, None, weak_q, name)   # no NaN to leave out

    def fn(arr):
        n = arr.shape[0]
        if not n:
            return _quantile(em, arr, q, 0, "linear", False, None, weak_q, name)
        rest = arr.shape[1:]
        if not weak_q and np.result_type(arr.dtype, q.dtype) != arr.dtype:
            raise NotSupportedError(f"{name} of {arr.dtype} data with q of {q.dtype}: NumPy's result dtype depends "
                                    "on whether a lane holds only NaN", hint="pass q as a Python float, or the data as float64")
        srt = FUNCTIONS["numpy.sort"](em, arr, axis=0)
        count = FUNCTIONS["numpy.sum"](em, em.emit("not", isnan(em, arr)), axis=0, dtype=np.int64)
        last = em.emit("max", em.emit("sub", count, em.full(1, np.int64, rest)), em.full(0, np.int64, rest))
        outs = []
        # the virtual index and gamma in q's dtype (float64 for a Python q), gamma then a Python
        # float: NumPy's _quantile on the lane's numbers (in float32 they parted from NumPy's by an
        # ulp or two for about 40% of float32 lanes holding NaN; a probe's winsorizing)
        vt = q.dtype if q.dtype.kind == "f" else np.dtype(np.float64)
        for qk in np.ravel(q):
            virtual = em.emit("mul", em.cast(last, vt), em.full(float(qk), vt, rest))
            prev = em.emit("floor", virtual)
            gamma = em.emit("sub", virtual, prev)
            gamma = Traced(gamma.value, float, gamma.params) if weak_q else em.cast(gamma, arr.dtype)
            i = em.cast(prev, np.int64)
            j = em.emit("min", em.emit("add", i, em.full(1, np.int64, rest)), last)
            pick = lambda k: reshape(em, FUNCTIONS["numpy.take_along_axis"](      # noqa: E731
                em, srt, reshape(em, k, (1,) + rest), axis=0), rest)
            if median:   # np.ma.median's middle pair: (c // 2 - 1 + c % 2, c // 2)
                h = apply_operator(em, "FloorDiv", count, 2)
                low = em.emit("max", apply_operator(em, "Add", apply_operator(em, "Sub", h, 1),
                                                    apply_operator(em, "Mod", count, 2)), em.full(0, np.int64, rest))
                high = em.emit("min", h, em.full(n - 1, np.int64, rest))
                r = apply_operator(em, "Div", apply_operator(em, "Add", pick(low), pick(high)), 2.0)
            else:
                r = _lerp(em, pick(i), pick(j), gamma)
            outs.append(sel(em, cmp(em, count, em.full(0, np.int64, rest), "EQ"), em.full(np.nan, arr.dtype, rest), r))
        out = FUNCTIONS["numpy.stack"](em, outs) if len(outs) > 1 else outs[0]
        return reshape(em, out, np.shape(q) + rest)
    return _over_axes(em, a, axis, keepdims, fn, np.shape(q))


@register("numpy.nanmedian", note="NaN left out of each lane (sorting; a lane of NaN only gives NaN)")
@folding(np.nanmedian)
def nanmedian(em, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    if out is not None:
        raise NotSupportedError("nanmedian: out= is not supported")
    if as_array(em, a).dtype.kind == "c":
        raise NotSupportedError("nanmedian of complex numbers is not supported")
    return _nan_quantiles(em, a, np.asarray(0.5), axis, keepdims, "nanmedian", median=True)


def _nan_quantile_fn(name, scale):
    @register(f"numpy.{name}", note="method 'linear'; NaN left out of each lane (sorting)")
    @folding(getattr(np, name))
    def impl(em, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None):
        if out is not None or weights is not None:
            raise NotSupportedError(f"{name}: out= and weights= are not supported")
        if em.static(method, f"{name}: method") != "linear":
            raise NotSupportedError(f"{name}: only method='linear' (the default) is supported")
        a, q, weak_q = _quantile_args(em, a, q, name, scale)
        return _nan_quantiles(em, a, q, axis, keepdims, name, weak_q)
    impl.__name__ = impl.__qualname__ = name
    return impl


_nan_quantile_fn("nanquantile", False)
_nan_quantile_fn("nanpercentile", True)


@register("numpy.cov", note="fweights/aweights: non-integer or negative weights are run-time errors")
@folding(np.cov)
def cov(em, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    rowvar, bias, ddof = (em.static(v, f"cov: {n}") for v, n in ((rowvar, "rowvar"), (bias, "bias"), (ddof, "ddof")))
    if ddof is not None and ddof != int(ddof):
        raise ShapeError("cov: ddof must be integer")
    m = as_array(em, m)
    if m.ndim > 2:
        raise ShapeError("cov: m has more than 2 dimensions")
    if y is not None:
        y = as_array(em, y)
        if y.ndim > 2:
            raise ShapeError("cov: y has more than 2 dimensions")
    if dtype is None:
        dtype = np.result_type(m.dtype, np.float64) if y is None else np.result_type(m.dtype, y.dtype, np.float64)
    else:
        dtype = np.dtype(em.static(dtype, "cov: dtype"))
    X = _at_least_2d(em, em.cast(m, dtype))
    if not rowvar and m.ndim != 1:
        X = transpose(em, X)
    if X.shape[0] == 0:
        return np.array([]).reshape(0, 0)
    if y is not None:
        y = _at_least_2d(em, em.cast(y, dtype))
        if not rowvar and y.shape[0] != 1:
            y = transpose(em, y)
        X = FUNCTIONS["numpy.concatenate"](em, (X, y), axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    for name, given in (("fweights", fweights), ("aweights", aweights)):
        if given is None:
            continue
        given = em.cast(as_array(em, given), np.float64)
        if given.ndim > 1:
            raise ShapeError(f"cov: cannot handle multidimensional {name}")
        if given.shape[0] != X.shape[1]:
            raise ShapeError(f"cov: incompatible numbers of samples and {name}")
        if name == "fweights":
            em.check(FUNCTIONS["numpy.any"](em, FUNCTIONS["numpy.not_equal"](em, given, FUNCTIONS["numpy.round"](em, given))),
                     "TypeError: fweights must be integer")
        em.check(FUNCTIONS["numpy.any"](em, cmp(em, given, em.full(0.0, np.float64, given.shape), "LT")),
                 f"ValueError: {name} cannot be negative")
        w = given if w is None else FUNCTIONS["numpy.multiply"](em, w, given)
    if w is None:
        avg = FUNCTIONS["numpy.mean"](em, X, axis=1)
        fact = X.shape[1] - ddof
        fact = 0.0 if fact <= 0 else fact
        with np.errstate(divide="ignore"):
            scale = np.true_divide(1, fact)
    else:   # NumPy's normalisation by the weights' sum
        avg, w_sum = average(em, X, axis=1, weights=w, returned=True)
        fact = w_sum = getitem(em, w_sum, 0)
        if ddof and aweights is None:
            fact = FUNCTIONS["numpy.subtract"](em, w_sum, ddof)
        elif ddof:
            spread = FUNCTIONS["numpy.sum"](em, FUNCTIONS["numpy.multiply"](em, w, em.cast(as_array(em, aweights), np.float64)))
            fact = FUNCTIONS["numpy.subtract"](em, w_sum, FUNCTIONS["numpy.divide"](em, FUNCTIONS["numpy.multiply"](
                em, ddof, spread), w_sum))
        fact = FUNCTIONS["numpy.where"](em, FUNCTIONS["numpy.less_equal"](em, fact, 0), 0.0, fact)
        scale = FUNCTIONS["numpy.divide"](em, 1, fact)
    X = FUNCTIONS["numpy.subtract"](em, X, reshape(em, avg, (-1, 1)))
    X_T = transpose(em, X if w is None else FUNCTIONS["numpy.multiply"](em, X, w))
    c = FUNCTIONS["numpy.dot"](em, X, FUNCTIONS["numpy.conjugate"](em, X_T))
    c = em.cast(FUNCTIONS["numpy.multiply"](em, c, scale), c.dtype)   # c *= 1 / fact
    return em.zero_d_array(FUNCTIONS["numpy.squeeze"](em, c))   # one variable: a 0-d array, as NumPy


def _at_least_2d(em, x):
    return reshape(em, x, (1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x


@register("numpy.corrcoef")
@folding(np.corrcoef)
def corrcoef(em, x, y=None, rowvar=True, *, dtype=None):
    c = cov(em, x, y, rowvar, dtype=dtype)
    if not isinstance(c, Traced):   # no variables: NumPy's empty (0, 0) result
        return c
    if c.ndim != 2:   # a scalar covariance
        return FUNCTIONS["numpy.divide"](em, c, c)
    stddev = FUNCTIONS["numpy.sqrt"](em, FUNCTIONS["numpy.diagonal"](em, c))
    c = FUNCTIONS["numpy.divide"](em, c, reshape(em, stddev, (-1, 1)))
    c = FUNCTIONS["numpy.divide"](em, c, reshape(em, stddev, (1, -1)))
    return FUNCTIONS["numpy.clip"](em, c, -1, 1)


@register("numpy.bincount", note="needs a compile-time minlength: the result's length is max(x) + 1 otherwise, "
                                 "which depends on the data; a value >= minlength is a run-time error")
@folding(np.bincount)
def bincount(em, x, weights=None, minlength=0):
    if isinstance(minlength, Traced) and minlength.length_of is not None:
        return _bincount_sized_by_selection(em, x, weights, minlength)
    minlength = em.static(minlength, "bincount: minlength")
    x = as_array(em, x)
    if x.ndim != 1:
        raise ShapeError("bincount: object too deep for desired array" if x.ndim > 1 else
                         "bincount: object of too small depth for desired array")
    if not np.can_cast(x.dtype, np.intp, casting="safe"):
        raise ShapeError(f"bincount: Cannot cast array data from {x.dtype!r} to dtype('int64') according to the "
                         "rule 'safe'")
    if minlength is None or minlength < 0:
        raise ShapeError("bincount: 'minlength' must not be negative")
    if minlength == 0:
        if x.shape[0] == 0:
            return np.zeros(0, np.intp)   # (NumPy's int zeros, weights or not)
        raise NotSupportedError("np.bincount's result has length max(x) + 1, which depends on the data",
                                hint="pass minlength=n (a compile-time bound: values must be below n)")
    x = em.cast(x, np.intp)
    if x.shape[0] == 0:
        return np.zeros(minlength, np.intp)   # NumPy's int zeros, weights or not
    if x.shape[0]:
        em.check(FUNCTIONS["numpy.any"](em, cmp(em, x, em.full(0, np.intp, x.shape), "LT")),
                 "ValueError: 'list' argument must have no negative elements")
        em.check(FUNCTIONS["numpy.any"](em, cmp(em, x, em.full(minlength, np.intp, x.shape), "GE")),
                 f"bincount: a value is >= minlength={minlength}: NumPy would return a longer array, whose length "
                 "depends on the data")
    # a scatter-add into minlength bins: work and memory grow with n + minlength (one compare per
    # value and bin was 1e5 values x 1000 bins: 173 ms against NumPy's 0.09)
    safe = index_i64(em, x, minlength, "a value")   # (out of range: bin 0 until the call raises above)
    if weights is None:
        ones = em.full(1, np.intp, x.shape)
        return em.emit("scatter_add", em.full(0, np.intp, (minlength,)), safe, ones)
    w = em.cast(as_array(em, weights), np.float64)
    if w.shape != x.shape:
        raise ShapeError("bincount: The weights and list don't have the same length.")
    return em.emit("scatter_add", em.full(0.0, np.float64, (minlength,)), safe, w)


def _bincount_sized_by_selection(em, x, weights, minlength: Traced):
    """np.bincount(inverse, weights=v, minlength=len(uniq)) with `uniq` a selection (np.unique's
    values: a group-by): the counts or sums in an array of the selection's run-time length, as
    np.zeros(len(uniq)) and np.add.at make it. A value at or past that length would make NumPy's
    result longer: an error at run time."""
    from .. import masked_calls
    from ..masked import sized_like
    x = as_array(em, x)
    if x.ndim != 1 or not np.can_cast(x.dtype, np.intp, casting="safe"):
        return bincount(em, x, weights)   # (its errors for such x)
    x = em.cast(x, np.intp)
    length = em.broadcast(em.cast(minlength, np.intp), x.shape)
    em.check(FUNCTIONS["numpy.any"](em, cmp(em, x, em.full(0, np.intp, x.shape), "LT")),
             "ValueError: 'list' argument must have no negative elements")
    em.check(FUNCTIONS["numpy.any"](em, cmp(em, x, length, "GE")),
             "bincount: a value is >= minlength (a selection's length here): NumPy would return a longer array, "
             "whose length depends on the data")
    w = em.full(1, np.intp, x.shape) if weights is None else em.cast(as_array(em, weights), np.float64)
    if w.shape != x.shape:
        raise ShapeError("bincount: The weights and list don't have the same length.")
    out = sized_like(em, minlength.length_of, 0, w.dtype)
    masked_calls.call(em, FUNCTIONS["numpy.add.at"], "np.bincount", (out, x, w), {})
    return out


def _bincount_of_selection(em, x, weights=None, minlength=0):
    """np.bincount(k[m], minlength=n) and np.bincount(keys[ok], weights=vals[ok], minlength=n):
    the left-out entries add 0 to bin 0 (0 + w is w, and a bin starts at +0.0, so no sign
    changes); without weights the 0/1 sums are counted exactly in float64 and made integers."""
    from ..masked import Masked, aligned, mask
    if not isinstance(x, Masked) or x.where[0] == "grid" or x._data is None or x.data.ndim != 1 or x.axis != 0 \
            or not (weights is None or isinstance(weights, Masked) and aligned(x, weights) and weights._data is not None
                    and weights.data.shape == x.data.shape):
        return NotImplemented
    shape = x.data.shape
    inside = mask(em, x.where, shape, 0)
    keys = sel(em, inside, x.data, em.full(0, x.data.dtype, shape))
    if weights is None:
        ones = sel(em, inside, em.full(1.0, np.float64, shape), em.full(0.0, np.float64, shape))
        return em.cast(bincount(em, keys, ones, minlength), np.intp)
    w = em.cast(as_array(em, weights.data), np.float64)
    return bincount(em, keys, sel(em, inside, w, em.full(0.0, np.float64, shape)), minlength)


bincount.on_masked = _bincount_of_selection


@register("numpy.histogram", note="bins: a compile-time count, or the edges (an array known only at run time too; "
                                   "not a string); density=; weights=",
          views=True)   # (edges given as an array: NumPy returns that array itself)
@folding(np.histogram)
def histogram(em, a, bins=10, range=None, density=None, weights=None):
    run_time_edges = isinstance(bins, Traced) and bins.const is None and not bins.params
    bins = bins if run_time_edges else em.static(bins, "histogram: bins")
    range, density = em.static(range, "histogram: range"), em.static(density, "histogram: density")
    a = as_array(em, a)
    a_shape, a = a.shape, reshape(em, a, -1)
    if run_time_edges:   # `np.histogram(x, edges)`: NumPy's checks, then the binary search
        edges = _run_time_edges(em, bins)
    elif isinstance(bins, str):
        raise NotSupportedError(f"np.histogram with bins={bins!r}: the number of bins depends on the data",
                                hint="pass the number of bins, or the bin edges")
    elif np.ndim(bins) == 0 and range is None and a.shape[0]:
        edges = _edges_from_data(em, a, bins)     # the edges depend on the data's minimum and maximum
    else:
        try:
            edges = np.histogram_bin_edges(np.zeros(0, a.dtype), bins, range)   # NumPy's edges, exactly
        except (TypeError, ValueError) as e:
            raise ShapeError(f"histogram: {e}") from None
    if isinstance(edges, Traced) and edges.shape[0] < 2:   # no bins: NumPy's empty counts
        dtype = np.float64 if density else np.intp if weights is None else as_array(em, weights).dtype
        return np.zeros(0, dtype), edges
    uniform = not run_time_edges and np.ndim(bins) == 0
    index, nb = _uniform_bin_index(em, a, edges) if uniform else _bin_index(em, a, edges)
    if weights is None:
        counts = _counted(em, index, nb, None, np.dtype(np.intp))
    else:
        w = as_array(em, weights)
        if w.shape != a_shape:
            raise ShapeError("histogram: weights should have the same shape as a.")
        # NumPy sums the weights in float64 (np.bincount) and casts the counts to their dtype
        counts = em.cast(_counted(em, index, nb, em.cast(reshape(em, w, -1), np.float64), np.dtype(np.float64)),
                         w.dtype)
    if density:
        widths = FUNCTIONS["numpy.diff"](em, edges)
        widths = em.cast(em.asarray(widths), np.float64)
        counts = FUNCTIONS["numpy.divide"](em, FUNCTIONS["numpy.divide"](em, counts, widths),
                                           FUNCTIONS["numpy.sum"](em, counts))
    return counts, edges


def _run_time_edges(em, edges):
    """Bin edges known only at run time, checked as NumPy checks them."""
    if edges.ndim != 1:
        raise ShapeError("histogram: `bins` must be 1d, when an array")
    if edges.shape[0] >= 2:
        rising = cmp(em, getitem(em, edges, slice(None, -1)), getitem(em, edges, slice(1, None)), "GT")
        em.check(FUNCTIONS["numpy.any"](em, rising), "ValueError: `bins` must increase monotonically, when an array")
    return edges


def _bin_index(em, a, edges):
    """(each element's bin as int64, the number of bins nb); nb where it is in none: bin i holds
    edges[i] <= a < edges[i + 1], the last one its right edge too (NumPy's rule, by its own
    steps: searchsorted(edges, a, 'right') - 1, the last edge moved into the last bin; NaN and
    values outside in none). Compared in the common type of the data and the edges. A binary
    search over the edges per element (a (elements, bins) table of comparisons took 25 ms for
    200,000 values in 100 bins, NumPy 1.5 ms)."""
    from .sorting import count_before
    edges = em.asarray(edges)
    nb = edges.shape[0] - 1
    common = np.result_type(a.dtype, edges.dtype)
    x, e = em.cast(a, common), em.cast(edges, common)
    n = x.shape[0]
    i64 = lambda v: em.full(v, np.int64, (n,))    # noqa: E731
    index = em.emit("sub", count_before(em, e, x, "right"), i64(1))
    last = em.broadcast(getitem(em, e, -1), (n,))
    index = sel(em, cmp(em, x, last, "EQ"), i64(nb - 1), index)
    outside = em.emit("or", cmp(em, index, i64(0), "LT"), cmp(em, index, i64(nb), "GE"))
    return sel(em, outside, i64(nb), index), nb


def _uniform_bin_index(em, a, edges):
    """_bin_index for edges of equal widths (bins=n), by NumPy's own fast path: the bin computed
    as (a - first) / (last - first) * n, truncated, then moved by one where a comparison with its
    edges says so; the same bins as the binary search, one multiplication and two reads of the
    edges per element (np.histogram of 1e6 values in 50 bins: 25 ms, NumPy 8.5)."""
    edges = em.asarray(edges)
    nb = edges.shape[0] - 1
    common = np.result_type(a.dtype, edges.dtype)
    x, e = em.cast(a, common), em.cast(edges, common)
    n = x.shape[0]
    full = lambda v, dt=np.int64: em.full(v, dt, (n,))    # noqa: E731
    first, last = (em.broadcast(getitem(em, e, k), (n,)) for k in (0, -1))
    keep = em.emit("and", cmp(em, x, first, "GE"), cmp(em, x, last, "LE"))   # (NaN: in no bin)
    inside = sel(em, keep, x, first)
    f = em.emit("mul", em.emit("div", em.emit("sub", inside, first), em.emit("sub", last, first)), full(nb, common))
    index = em.emit("min", em.emit("max", em.cast(f, np.int64), full(0)), full(nb - 1))
    below = cmp(em, inside, em.emit("take", e, index), "LT")
    index = sel(em, below, em.emit("max", em.emit("sub", index, full(1)), full(0)), index)
    above = em.emit("and", cmp(em, inside, em.emit("take", e, em.emit("add", index, full(1))), "GE"),
                    cmp(em, index, full(nb - 1), "NE"))
    index = sel(em, above, em.emit("add", index, full(1)), index)
    return sel(em, keep, index, full(nb)), nb


def _counted(em, index, nb: int, weights, dtype):
    """How many elements (or how much weight) each of nb bins gets: a scatter-add into nb + 1
    slots, the last one for the elements in no bin."""
    n = index.shape[0]
    values = em.full(1, dtype, (n,)) if weights is None else em.cast(weights, dtype)
    total = em.emit("scatter_add", em.full(0, dtype, (nb + 1,)), index, values)
    return em.emit("slice", total, start=(0,), limit=(nb,), strides=(1,))


@register("numpy.histogram2d", note="bins: compile-time counts, or edges per axis (arrays known only at run time "
                                     "too: NumPy's monotonic check, the edges returned as those arrays); range=, "
                                     "density=, weights=", views=True)
@folding(np.histogram2d)
def histogram2d(em, x, y, bins=10, range=None, density=None, weights=None):
    """NumPy's histogramdd for two samples: float64 edges (from the data's minimum and maximum
    without range=), float64 counts; H[i, k] sums the samples in x-bin i and y-bin k: a product
    of the two (samples, bins) one-hot matrices (exact for counts)."""
    run_time = isinstance(bins, (list, tuple)) and len(bins) == 2 and any(isinstance(b, Traced) for b in bins)
    bins = list(bins) if run_time else em.static(bins, "histogram2d: bins")   # ([xedges, yedges] of run-time arrays)
    range = em.static(range, "histogram2d: range")
    density = em.static(density, "histogram2d: density")
    x, y = reshape(em, as_array(em, x), -1), reshape(em, as_array(em, y), -1)
    if x.shape != y.shape:
        raise ShapeError("ValueError: histogram2d: x and y must have the same length")
    per_axis = list(bins) if isinstance(bins, (list, tuple)) and len(bins) == 2 else [bins, bins]
    edges = []
    for i, (v, b) in enumerate(zip((x, y), per_axis)):
        r = None if range is None else range[i]
        if isinstance(b, Traced):   # edges known only at run time: NumPy's check, the array itself returned
            if b.ndim != 1:
                raise ShapeError(f"ValueError: `bins[{i}]` must be a scalar or 1d array")
            if b.shape[0] >= 2:
                falling = cmp(em, getitem(em, b, slice(None, -1)), getitem(em, b, slice(1, None)), "GT")
                em.check(FUNCTIONS["numpy.any"](em, falling),
                         f"ValueError: `bins[{i}]` must be monotonically increasing, when an array")
            edges.append(b)
        elif np.ndim(b) == 0:
            if not isinstance(b, (int, np.integer)) or b < 1:
                raise ShapeError("ValueError: histogram2d: bins must be positive integers or arrays of edges")
            if r is None and v.shape[0]:
                edges.append(_edges_from_data(em, v, int(b), np.dtype(np.float64)))
            else:   # NumPy's edges for the range (or no data), exactly
                try:
                    edges.append(np.histogram_bin_edges(np.zeros(0, np.float64), int(b), r))
                except ValueError as e:
                    raise ShapeError(f"ValueError: {e}") from None
        else:
            e = np.asarray(b, dtype=np.float64)
            if np.any(np.diff(e) < 0):
                raise ShapeError(f"ValueError: `bins[{i}]` must be monotonically increasing, when an array")
            edges.append(e)
    (ix, nx), (iy, ny) = _bin_index(em, em.cast(x, np.float64), edges[0]), _bin_index(em, em.cast(y, np.float64), edges[1])
    n = x.shape[0]
    w = None
    if weights is not None:
        w = reshape(em, em.cast(as_array(em, weights), np.float64), -1)
        if w.shape != x.shape:
            raise ShapeError("ValueError: histogram2d: weights must have the sample's length")
    # the bin (i, k) as i * ny + k, an element outside either axis's bins in none (slot nx * ny)
    outside = em.emit("or", cmp(em, ix, em.full(nx, np.int64, (n,)), "EQ"), cmp(em, iy, em.full(ny, np.int64, (n,)), "EQ"))
    flat = em.emit("add", em.emit("mul", ix, em.full(ny, np.int64, (n,))), iy)
    flat = sel(em, outside, em.full(nx * ny, np.int64, (n,)), flat)
    hist = reshape(em, _counted(em, flat, nx * ny, w, np.dtype(np.float64)), (nx, ny))
    if density:
        total = FUNCTIONS["numpy.sum"](em, hist)
        dx = em.asarray(FUNCTIONS["numpy.diff"](em, edges[0]))
        dy = em.asarray(FUNCTIONS["numpy.diff"](em, edges[1]))
        hist = FUNCTIONS["numpy.divide"](em, hist, reshape(em, dx, (-1, 1)))
        hist = FUNCTIONS["numpy.divide"](em, hist, reshape(em, dy, (1, -1)))
        hist = FUNCTIONS["numpy.divide"](em, hist, total)
    return hist, edges[0], edges[1]


def _edges_from_data(em, a, bins, dtype=None):
    """NumPy's bin edges without range=: linspace(min, max, bins + 1) as np.linspace computes it
    (in the edges' dtype: the data's, float64 for integers), [min - 0.5, max + 0.5] when they are
    equal; a NaN or infinite minimum or maximum is NumPy's ValueError, at run time."""
    if not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ShapeError("histogram: `bins` must be positive, when an integer")
    lo, hi = FUNCTIONS["numpy.min"](em, a), FUNCTIONS["numpy.max"](em, a)
    finite = em.emit("and", em.cast(FUNCTIONS["numpy.isfinite"](em, lo), np.bool_),
                     em.cast(FUNCTIONS["numpy.isfinite"](em, hi), np.bool_))
    em.check(em.emit("not", finite), "ValueError: histogram: the autodetected range of the data is not finite")
    dt = dtype or (a.dtype if a.dtype.kind == "f" else np.dtype(np.float64))
    lo, hi = em.cast(lo, dt), em.cast(hi, dt)
    same = cmp(em, lo, hi, "EQ")
    lo = sel(em, same, em.emit("sub", lo, em.full(0.5, dt, ())), lo)
    hi = sel(em, same, em.emit("add", hi, em.full(0.5, dt, ())), hi)
    return FUNCTIONS["numpy.linspace"](em, lo, hi, bins + 1, endpoint=True, dtype=dt)
