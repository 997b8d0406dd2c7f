"""creation: NumPy's functions that make arrays (zeros, arange, full, *_like, array, asarray, copy).
Shapes and dtypes are known at compile time, so NumPy itself makes most of these arrays: the program
holds the result as an array whose contents are known (values.Emitter.array)."""
from __future__ import annotations

import operator

import numpy as np

from ...errors import JitError, NotSupportedError, ShapeError
from ...ir import dims
from ...ir.dims import Dim, NeedsStaticShape
from ...ir.types import SUPPORTED_DTYPES, is_int
from .. import masked
from ..indexing import getitem
from ..registry import FUNCTIONS, register
from ..values import Traced, fold, folding, is_static, join_params, set_sequence_to_array
from .dtypes import cast_impl, static_dtype
from .elementwise import cmp
from .shapes import appended_whole, concatenate, moveaxis, ravel, reshape, stack, strong

def _creation(np_fn, shown=None):
    """Creation functions take compile-time shapes and dtypes; NumPy computes the result. `shown`:
    the name the user called (np.empty is made by np.zeros)."""
    shown = shown or np_fn.__name__

    def impl(em, *args, **kwargs):
        if np_fn in _FILLS and args and _selection_length(args[0]) is not None:
            return _filled_selection(em, np_fn, *args, **kwargs)
        if np_fn in (*_FILLS, np.arange) and args:
            made = _of_loop_length(em, np_fn, args, kwargs)
            if made is not None:
                return made
        try:
            args = em.static(list(args), f"np.{shown}: its arguments")
        except JitError as e:
            if np_fn in _FILLS and type(e) is JitError:   # (a size from array values: `np.ones(m.sum())`)
                e.hint = (f"for an array as long as a selection, np.{np_fn.__name__}_like(x[m]) or "
                          f"np.{np_fn.__name__}(len(x[m]))")
            raise
        kwargs = {k: em.static(v, f"np.{shown}: {k}") for k, v in kwargs.items()}
        if "dtype" in kwargs and kwargs["dtype"] is not None:
            kwargs["dtype"] = static_dtype(em, kwargs["dtype"])
        if np_fn in _FILLS and args and any(isinstance(d, Dim) for d in _as_shape(args[0])):
            return _filled_symbolic(em, np_fn, *args, **kwargs)
        if np_fn in (np.eye, np.identity) and any(isinstance(a, Dim) for a in (*args, *kwargs.values())):
            return _eye_symbolic(em, *args, **kwargs)
        if np_fn is np.arange and any(isinstance(a, Dim) for a in (*args, *kwargs.values())):
            return _arange_symbolic(em, *args, **kwargs)
        out = fold(np_fn, *args, **kwargs)
        if out.dtype not in SUPPORTED_DTYPES:
            raise NotSupportedError(f"np.{shown} made dtype {out.dtype}, which pyjitc does not support")
        return out
    return impl


_FILLS = {np.zeros: 0, np.ones: 1, np.empty: 0}

# Capacity up to which an array whose length is a loop variable is held masked (below)
LOOP_LENGTH_CAPACITY = 1 << 20


def _loop_capacity(em, n) -> int | None:
    """The largest value of the run-time int `n` (a `range` loop's variable plus a constant, with
    compile-time bounds that keep it >= 0), or None."""
    if not isinstance(n, Traced) or n.ndim or n.params is None or not (n.weak is int or is_int(n.dtype)):
        return None
    r = em.range_of(n)
    if r is None or r[0] < 0 or r[1] > LOOP_LENGTH_CAPACITY:
        return None
    return r[1]


def _of_loop_length(em, np_fn, args, kwargs):
    """np.zeros/ones/empty(i + 1), np.arange(i + 1), np.arange(2, i) with i a run-time loop's
    variable: an array of that run-time length, held masked at the capacity i's bounds give (as
    `v[:i + 1]` is), so the loop stays one run-time loop (a binomial tree's `u ** (i -
    np.arange(i + 1))`: unrolled, n = 200 compiled in 43 s and n = 500 did not finish). None where
    the call is not of that form (the ordinary path then asks for compile-time values)."""
    if np_fn is np.arange and (len(args) == 3 or isinstance(args[0] if args else None, Traced) and len(args) == 2):
        return _stepped_loop_range(em, args, kwargs)
    if np_fn is np.arange:
        if len(args) > 2 or set(kwargs) - {"dtype"}:
            return None
        start, stop = (0, args[0]) if len(args) == 1 else args
        if not (isinstance(start, int) and not isinstance(start, bool) and start >= 0):
            return None
        capacity = _loop_capacity(em, stop)
        if capacity is None or em.range_of(stop)[0] < start:
            return None
        dt = np.dtype(np.int64 if kwargs.get("dtype") is None else static_dtype(em, kwargs["dtype"]))
        if dt.kind not in "iuf":
            return None
        data = em.emit("iota", shape=(capacity,), dim=0, dtype=np.dtype(np.int64))
        if start:
            data = em.emit("add", data, em.full(start, np.int64, (capacity,)))
        data = em.cast(data, dt)
        length = stop if not start else em.emit("sub", em.cast(em.asarray(stop), np.int64), em.constant(np.int64(start)))
        if start:
            length = Traced(length.value, int, stop.params)
            em.affine[length.value.id] = (em.offset_of(stop)[0], em.offset_of(stop)[1] - start)
    else:
        shape = args[0]
        items = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        if len(items) != 1 or len(args) > 2 or set(kwargs) - {"dtype"}:
            return None
        length = items[0]
        capacity = _loop_capacity(em, length)
        if capacity is None:
            return None
        dtype = args[1] if len(args) > 1 else kwargs.get("dtype", float)
        dt = np.dtype(static_dtype(em, dtype if dtype is not None else float))
        if dt not in SUPPORTED_DTYPES:
            return None
        data = em.full(_FILLS[np_fn], dt, (capacity,))
    lo, hi, key, params = masked.bounds(em, 0, length, capacity)
    return masked.Masked(Traced(data.value, None, frozenset()), 0, ("bounds", lo, hi), key, params, own=True)


def _stepped_loop_range(em, args, kwargs):
    """np.arange(i, -i - 1, -2), np.arange(j, n): integer bounds from a run-time loop's variable
    (and compile-time ones), a compile-time step: the prices of a binomial tree's row, rebuilt
    each step (`S0 * u ** np.arange(i, -i - 1, -2)`: unrolled, 100 steps took 400 s to compile).
    Held masked at the capacity the bounds' ranges give; None where it is not of that form."""
    start, stop, step = (tuple(args) + (1,))[:3]
    if set(kwargs) - {"dtype"} or not (isinstance(step, (int, np.integer)) and not isinstance(step, bool) and step):
        return None
    ranges = [em.range_of(b) for b in (start, stop)]
    if any(r is None for r in ranges) or not any(isinstance(b, Traced) for b in (start, stop)) or not all(
            isinstance(b, (int, np.integer)) and not isinstance(b, bool) or isinstance(b, Traced) and b.ndim == 0
            and (b.weak is int or is_int(b.dtype)) and b.params is not None for b in (start, stop)):
        return None
    (a_lo, a_hi), (b_lo, b_hi) = ranges
    widest = (b_hi - a_lo) if step > 0 else (a_hi - b_lo)
    capacity = max(-(-widest // abs(step)), 0)
    if capacity > LOOP_LENGTH_CAPACITY:
        return None
    dt = np.dtype(np.int64 if kwargs.get("dtype") is None else static_dtype(em, kwargs["dtype"]))
    if dt.kind not in "iuf":
        return None
    a, b = (em.cast(em.asarray(v), np.int64) if isinstance(v, Traced) else em.constant(np.int64(v)) for v in (start, stop))
    iota = em.emit("iota", shape=(capacity,), dim=0, dtype=np.dtype(np.int64))
    data = em.cast(em.emit("add", em.emit("mul", iota, em.full(int(step), np.int64, (capacity,))),
                           em.broadcast(a, (capacity,))), dt)
    span = em.emit("sub", b, a) if step > 0 else em.emit("sub", a, b)
    count = em.emit("div", em.emit("add", span, em.constant(np.int64(abs(step) - 1))), em.constant(np.int64(abs(step))))
    count = em.emit("max", count, em.constant(np.int64(0)))   # (span >= -|step| + 1 here: the division rounds up)
    length = Traced(count.value, int, join_params([v for v in (start, stop) if isinstance(v, Traced)]))
    lo, hi, key, params = masked.bounds(em, 0, length, capacity)
    return masked.Masked(Traced(data.value, None, frozenset()), 0, ("bounds", lo, hi), key, params, own=True)


def _selection_length(shape):
    """The selection whose run-time length `shape` (or its first item) is (`np.zeros(len(idx))`,
    `np.zeros((len(u), 3))`), or None."""
    items = _as_shape(shape)
    if not items or not isinstance(items[0], Traced) or items[0].length_of is None:
        return None
    if any(not isinstance(d, (int, np.integer)) or isinstance(d, (bool, np.bool_)) for d in items[1:]):
        return None
    return items[0].length_of


def _filled_selection(em, np_fn, shape, dtype=float, order="C", *, like=None, device=None):
    if order not in ("C", "F"):
        raise NotSupportedError(f"np.{np_fn.__name__}: order={order!r}")
    dt = np.dtype(static_dtype(em, dtype))
    return masked.sized_like(em, _selection_length(shape), _FILLS[np_fn], dt, tuple(int(d) for d in _as_shape(shape)[1:]))


def _as_shape(shape) -> tuple:
    return tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)


def _filled_symbolic(em, np_fn, shape, dtype=float, order="C", *, like=None, device=None):
    """np.zeros/ones/empty of a shape with run-time dimensions: a value, its contents not known."""
    if order not in ("C", "F"):
        raise NotSupportedError(f"np.{np_fn.__name__}: order={order!r}")
    dt = np.dtype(dtype)
    if dt not in SUPPORTED_DTYPES:
        raise NotSupportedError(f"np.{np_fn.__name__} made dtype {dt}, which pyjitc does not support")
    out = em.full(_FILLS[np_fn], dt, _as_shape(shape))
    em.held.append(out)
    return out


def _arange_symbolic(em, *args, dtype=None, device=None, like=None, **kwargs):
    """np.arange with a run-time size among integer bounds, step 1 (np.arange(x.shape[0]))."""
    bounds = list(args) + [kwargs[k] for k in ("start", "stop", "step") if k in kwargs]
    if kwargs or not 1 <= len(bounds) <= 3 or (len(bounds) == 3 and not (isinstance(bounds[2], int) and bounds[2] == 1)) \
            or not all(isinstance(b, (int, Dim)) and not isinstance(b, bool) for b in bounds):
        raise NeedsStaticShape("np.arange of a run-time size with a step other than 1 or non-integer bounds")
    start, stop = (0, bounds[0]) if len(bounds) == 1 else (bounds[0], bounds[1])
    length = dims.nonnegative(stop - start)
    dt = np.dtype(np.int64 if dtype is None else dtype)
    out = em.emit("iota", shape=(length,), dim=0, dtype=np.dtype(np.int64))
    if not (isinstance(start, int) and start == 0):
        out = em.emit("add", out, em.full(start, np.int64, (length,)))
    out = em.cast(out, dt)
    em.held.append(out)
    return out


def _eye_symbolic(em, N, M=None, k=0, dtype=float, order="C", *, like=None, device=None):
    """np.eye / np.identity with a run-time size: ones where column - row == k."""
    if order not in ("C", "F") or isinstance(k, Dim):
        raise NeedsStaticShape("np.eye with a run-time diagonal offset")
    shape = (N, N if M is None else M)
    rows = em.emit("iota", shape=shape, dim=0, dtype=np.dtype(np.int64))
    cols = em.emit("iota", shape=shape, dim=1, dtype=np.dtype(np.int64))
    on = em.emit("compare", em.emit("sub", cols, rows), em.full(int(k), np.int64, shape), direction="EQ")
    out = em.cast(on, np.dtype(dtype))
    em.held.append(out)
    return out


for _fn in (np.zeros, np.ones, np.arange, np.eye, np.identity, np.tri):
    register(f"numpy.{_fn.__name__}", complex_ok=_fn is not np.arange)(_creation(_fn))
register("numpy.geomspace", note="compile-time endpoints")(_creation(np.geomspace))


@register("numpy.linspace", note="endpoints known at compile time or at run time (arrays too)")
@folding(np.linspace)
def linspace(em, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """NumPy's own steps with run-time endpoints: y = arange(num) * step + start in the inexact
    result dtype (arange / div * delta where a step is 0), and y[-1] = stop exactly."""
    num, endpoint, retstep = em.static(num, "linspace: num"), em.static(endpoint, "linspace: endpoint"), \
        em.static(retstep, "linspace: retstep")
    num = operator.index(num)
    if num < 0:
        raise ShapeError(f"linspace: Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    dt = em.result_type(start, stop)
    dt = dt if dt.kind in "fc" else np.result_type(dt, 1.0)
    start, stop = (em.asarray(v, dt) if not isinstance(v, Traced) else em.cast(v, dt) for v in (start, stop))
    shape = np.broadcast_shapes(start.shape, stop.shape)
    delta = em.emit("sub", em.broadcast(stop, shape), em.broadcast(start, shape))
    full = (num,) + shape
    y = em.broadcast(reshape(em, em.emit("iota", shape=(num,), dim=0, dtype=dt), (num,) + (1,) * len(shape)), full)
    if div > 0:
        step = em.emit("div", delta, em.full(div, dt, shape))
        zero = FUNCTIONS["numpy.any"](em, em.emit("compare", step, em.full(0, dt, shape), direction="EQ"))
        by_step = em.emit("mul", y, em.broadcast(step, full))
        by_delta = em.emit("mul", em.emit("div", y, em.full(div, dt, full)), em.broadcast(delta, full))
        y = em.emit("select", em.broadcast(zero, full), by_delta, by_step)
    else:
        step = em.full(np.nan, dt, shape)
        y = em.emit("mul", y, em.broadcast(delta, full))
    y = em.emit("add", y, em.broadcast(start, full))
    if endpoint and num > 1:
        y = concatenate(em, [getitem(em, y, slice(None, -1)), reshape(em, em.broadcast(stop, shape), (1,) + shape)])
    if em.static(axis, "linspace: axis") != 0:
        y = moveaxis(em, y, 0, axis)
    if dtype is not None:
        dtype = static_dtype(em, dtype)
        if dtype.kind in "iu":
            y = FUNCTIONS["numpy.floor"](em, y)
        y = em.cast(y, dtype)
    return (y, step) if retstep else y


@register("numpy.logspace", note="endpoints known at compile time or at run time")
@folding(np.logspace)
def logspace(em, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    if not is_static(base) or np.ndim(base):
        raise NotSupportedError("logspace: base must be a compile-time scalar")
    y = linspace(em, start, stop, num=num, endpoint=endpoint, axis=axis)
    out = FUNCTIONS["numpy.power"](em, base, y)
    return out if dtype is None else em.cast(out, static_dtype(em, dtype))
# deterministic: NumPy's empty is uninitialised
register("numpy.empty", complex_ok=True, note="zero-filled")(_creation(np.zeros, "empty"))


@register("numpy.ndarray", complex_ok=True, note="np.ndarray(shape, dtype): as np.empty (zero-filled)")
def ndarray(em, shape, dtype=float, buffer=None, offset=0, strides=None, order=None):
    if buffer is not None or offset != 0 or strides is not None or order not in (None, "C"):
        raise NotSupportedError("np.ndarray(...) is supported with a shape and a dtype only",
                                hint="use np.empty(shape, dtype) or np.frombuffer outside the function")
    return FUNCTIONS["numpy.empty"](em, shape, dtype)


@register("numpy.full", complex_ok=True)
def full(em, shape, fill_value, dtype=None):
    if isinstance(fill_value, Dim):   # a run-time size as the value (dynamic=True)
        fill_value = em.asarray(fill_value)
    if _selection_length(shape) is not None and is_static(fill_value):   # np.full(len(u), -np.inf)
        dt = np.dtype(static_dtype(em, dtype)) if dtype is not None else np.asarray(fill_value).dtype
        return masked.sized_like(em, _selection_length(shape), fill_value, dt,
                                 tuple(int(d) for d in _as_shape(shape)[1:]))
    shape = em.static(shape, "np.full: shape")
    if is_static(fill_value) and any(isinstance(d, Dim) for d in _as_shape(shape)):   # run-time sizes (dynamic=True)
        dt = np.dtype(static_dtype(em, dtype)) if dtype is not None else np.asarray(fill_value).dtype
        out = em.full(np.asarray(fill_value).astype(dt)[()], dt, _as_shape(shape))
        em.held.append(out)
        return out
    if is_static(fill_value):
        return fold(np.full, shape, fill_value, dtype=None if dtype is None else static_dtype(em, dtype))
    dt = static_dtype(em, dtype) if dtype is not None else fill_value.dtype
    shape = _as_shape(shape)
    if isinstance(fill_value, Traced) and fill_value.weak is int and is_int(dt):   # NumPy's OverflowError past dt
        from ..store_values import converted
        return em.broadcast(converted(em, fill_value, dt, "np.full"), shape)
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
        if any(isinstance(d, Dim) for d in _as_shape(shape)):   # run-time sizes (dynamic=True): as np.zeros(x.shape)
            out = em.full(value, dt, _as_shape(shape))
            em.held.append(out)
            return out
        return np.full(shape, value, dtype=dt)
    return impl


register("numpy.zeros_like", "numpy.empty_like", complex_ok=True)(_like(0))
register("numpy.ones_like", complex_ok=True)(_like(1))


@register("numpy.full_like", complex_ok=True)
def full_like(em, a, fill_value, dtype=None, shape=None):
    dt = _like_dtype(em, a, dtype)
    shape = em.shape_of(a) if shape is None else em.static(shape, "np.full_like: shape")
    if is_static(fill_value) and any(isinstance(d, Dim) for d in _as_shape(shape)):   # run-time sizes
        return _like(np.asarray(fill_value).astype(dt)[()])(em, a, dt)
    return full(em, shape, fill_value if not is_static(fill_value) else np.asarray(fill_value).astype(dt), dt)


def _like_a_masked(impl):
    """np.zeros_like(x) and the others of a run-time slice or selection (`e = np.zeros_like(x)` of
    x = A[k:, k] in a Householder step: asked for the slice's length, the loop unrolled): an
    array of its own at the same positions."""
    import inspect

    def rule(em, a, *args, **kwargs):
        if not isinstance(a, masked.Masked) or a._data is None or a.where[0] == "grid" or \
                inspect.signature(impl).bind(em, a, *args, **kwargs).arguments.get("shape") is not None:
            return NotImplemented
        data = em.asarray(impl(em, a.data, *args, **kwargs))
        return masked.Masked(Traced(data.value, None, a.data.params), a.axis, a.where, a.key, a.params, own=True)
    return rule


for _name in ("numpy.zeros_like", "numpy.ones_like", "numpy.full_like"):
    FUNCTIONS[_name].on_masked = _like_a_masked(FUNCTIONS[_name])


@register(method="flatten", complex_ok=True)
def flatten(em, a, order="C"):
    return numpy_copy(em, ravel(em, a, order))


@register(method="copy", complex_ok=True)
def numpy_copy(em, a, order="C"):
    if is_static(a):
        return np.copy(a)
    out = Traced(a.value, None, a.params)   # a new array object: in-place updates don't reach `a`
    return em.zero_d_array(out) if em.is_array(a) else out   # (a NumPy scalar's .copy() is one)


@register("numpy.copy", complex_ok=True)
def copy_function(em, a, order="C", subok=False):
    """np.copy: a new array, 0-d too (np.copy(x.sum()) is array(3.), x.sum().copy() a scalar)."""
    return _zero_d(em, numpy_copy(em, a, order))


def asarray(em, a, dtype=None, copy=None, order=None):
    """np.asarray for the compiler's own use: a 0-d result may be a NumPy scalar (registered_asarray
    is the user's np.asarray)."""
    if isinstance(copy, np._CopyMode):   # the enum array-API layers pass: IF_NEEDED is copy=None
        copy = {np._CopyMode.ALWAYS: True, np._CopyMode.IF_NEEDED: None, np._CopyMode.NEVER: False}[copy]
    if isinstance(a, (list, tuple)) and _holds_run_time_values(a):   # nested lists: rows stacked
        whole = appended_whole(em, a) if a and all(isinstance(r, (list, tuple)) for r in a) else None
        if whole is not None:   # the tuples or lists of numbers a loop appended (`hist.append([S, I])`)
            return whole if dtype is None else cast_impl(em, whole, dtype)
        grid = _single_values(em, a)
        if grid is not None:   # single values in nested lists: stacked all at once, then shaped
            out = reshape(em, stack(em, grid[1]), grid[0])
        else:
            out = stack(em, [asarray(em, r) if isinstance(r, (list, tuple)) else r for r in a])
        return out if dtype is None else cast_impl(em, out, dtype)
    if is_static(a):
        return np.asarray(a, dtype=dtype)
    out = a if dtype is None or static_dtype(em, dtype) == a.dtype else cast_impl(em, a, dtype)
    if isinstance(out, Traced) and out.weak:   # a run-time Python number becomes a strongly typed array
        out = strong(em, out)
        if copy is None:
            return out
    if copy is False and out is not a:
        raise NotSupportedError("copy=False: the dtype can't change without a copy (NumPy raises ValueError)",
                                hint="leave out copy=False, or pass copy=None")
    return numpy_copy(em, out) if copy and out is a else out


set_sequence_to_array(asarray)     # em.asarray of a list holding run-time numbers


def _zero_d(em, out):
    """np.asarray/np.array's result: a NumPy scalar or Python number made a new 0-d array, as NumPy
    makes one (`np.asarray(x.sum())` is array(3.), and `y[...] = v` writes into it)."""
    if isinstance(out, Traced) and out.ndim == 0 and not em.is_array(out):
        return em.zero_d_array(Traced(out.value, None, out.params))
    return out


@register("numpy.asarray", complex_ok=True, views="copy")
def registered_asarray(em, a, dtype=None, copy=None, order=None):
    return _zero_d(em, asarray(em, a, dtype=dtype, copy=copy, order=order))


registered_asarray.plain = asarray     # (the compiler's own conversions: 0-d stays as it is)


@register("numpy.asanyarray", complex_ok=True, views=True)
def asanyarray(em, a, dtype=None, order=None):
    return _zero_d(em, asarray(em, a, dtype=dtype))


@register("numpy.ascontiguousarray", "numpy.asfortranarray", complex_ok=True, views=True,
          note="memory layout has no meaning for compiled arrays; a 0-d input gives shape (1,) as NumPy's")
def ascontiguousarray(em, a, dtype=None):
    out = asarray(em, a, dtype=dtype)
    if is_static(out):
        return np.ascontiguousarray(out)
    return reshape(em, out, (1,)) if out.ndim == 0 else out


@register("numpy.asarray_chkfinite", complex_ok=True, views=True, note="a NaN or infinity raises ValueError at run time")
def asarray_chkfinite(em, a, dtype=None, order=None):
    out = _zero_d(em, asarray(em, a, dtype=dtype))
    if is_static(out):
        return fold(np.asarray_chkfinite, out)
    if np.dtype(out.dtype).kind in "fc":
        finite = em.emit("reduce", em.emit("is_finite", FUNCTIONS["numpy.real"](em, out)
                                           if np.dtype(out.dtype).kind == "c" else out), kind="and",
                         axes=tuple(range(out.ndim))) if out.ndim else em.emit("is_finite", out)
        if np.dtype(out.dtype).kind == "c":
            im = FUNCTIONS["numpy.imag"](em, out)
            finite = em.emit("and", finite, em.emit("reduce", em.emit("is_finite", im), kind="and",
                                                    axes=tuple(range(im.ndim))) if im.ndim else em.emit("is_finite", im))
        em.check(em.emit("not", finite), "ValueError: array must not contain infs or NaNs")
    return out


@register("numpy.array", complex_ok=True, views="copy")
def array(em, a, dtype=None, copy=True, order=None):
    """np.array copies unless told `copy=False`/`None` (then it is np.asarray)."""
    return _zero_d(em, asarray(em, a, dtype=dtype, copy=copy, order=order))


array.plain = lambda em, a, dtype=None: asarray(em, a, dtype=dtype, copy=True)


def _array_of_a_masked(copy_default):
    """np.array / np.asarray of a selection or a run-time slice (`np.array(x[x > 0])`): the same
    positions, copied where NumPy copies (own=True, as .copy()), the masked array itself where it
    does not, converted where a dtype is given."""
    def rule(em, a, dtype=None, copy=copy_default, order=None):
        if not isinstance(a, masked.Masked) or a._data is None or a.where[0] == "grid":
            return NotImplemented
        if type(a) is not masked.Masked and dtype is None and (a.data.dtype != np.float64 or a.data.ndim > 1):
            # a list a loop appended to (appends.AppendedItems): NumPy's array of an empty list is
            # float64 of shape (0,), which pyjitc's can't be where the items are other
            em.check(cmp(em, masked.length(em, a), em.constant(np.int64(0)), "EQ"),
                     f"np.array of this list, empty here, is float64 of shape (0,) in NumPy; pyjitc's has its "
                     f"items' type ({a.data.dtype}, rows of {a.data.shape[1:]}): pass dtype= to choose one")
        data = a.data if dtype is None else cast_impl(em, a.data, dtype)
        if data is a.data and not copy and type(a) is masked.Masked:   # (a list's items: always a new array)
            return a
        data = Traced(data.value, None, a.data.params)   # a new array object (numpy_copy's rule)
        return masked.Masked(data, a.axis, a.where, a.key, a.params, own=True)
    return rule


registered_asarray.on_masked = _array_of_a_masked(None)
array.on_masked = _array_of_a_masked(True)


def as_array(em, a) -> Traced:
    """np.asarray(a) as a traced array, for functions that convert their arguments first: lists of
    arrays are stacked, and a Python scalar becomes a strongly typed 0-d array (int64, float64):
    asarray's rule."""
    return em.asarray(asarray(em, a))


def _single_values(em, a):
    """(shape, values) of nested lists of single values (0-d arrays, numbers), rectangular; else
    None. Stacked row by row, `np.array([[np.sqrt(d @ d) for b in B] for a in A])` gave IREE one
    buffer per value, bound to one dispatch: "binding count 36 > 32" when called (probe R); and
    a skew-symmetric matrix `np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], ...])` failed to
    compile ("'tensor.expand_shape' op expected dimension 0 of collapsed type to be static value
    of 2", a probe of geometry code): all at once, then shaped."""
    def walk(x):
        if not isinstance(x, (list, tuple)):
            single = is_static(x) and np.ndim(x) == 0 or isinstance(x, Traced) and x.ndim == 0
            return ((), [x]) if single else None
        parts = [walk(v) for v in x]
        if not parts or any(p is None or p[0] != parts[0][0] for p in parts):
            return None
        return (len(parts),) + parts[0][0], [v for p in parts for v in p[1]]
    found = walk(a)
    return found if found is not None and len(found[0]) > 1 else None


def _holds_run_time_values(a) -> bool:
    return any(_holds_run_time_values(x) if isinstance(x, (list, tuple)) else not is_static(x) for x in a)


@register("numpy.copyto", complex_ok=True, note="writes into dst in place (views and arguments see it), with NumPy's casting rule")
def copyto(em, dst, src, casting="same_kind", where=True):
    from ..assignment import store
    casting = em.static(casting, "copyto: casting")
    if not isinstance(dst, Traced):
        raise ShapeError("TypeError: copyto() argument 1 must be a numpy.ndarray")
    src_dt = em.dtype_of(src)
    if not np.can_cast(src_dt if isinstance(src_dt, np.dtype) else np.result_type(src_dt(0), dst.dtype),
                       dst.dtype, casting=casting):
        raise ShapeError(f"TypeError: Cannot cast array data from {src_dt} to {dst.dtype} according to the rule "
                         f"'{casting}'")
    value = FUNCTIONS["numpy.broadcast_to"](em, em.asarray(src, dst.dtype) if not isinstance(src, Traced)
                                            else em.cast(src, dst.dtype), dst.shape)
    if where is not True:
        value = FUNCTIONS["numpy.where"](em, where, value, dst)
    store(em, dst, Ellipsis, value, "np.copyto")


@register("numpy.frombuffer", note="a bytes object the program holds (a literal, a global): its array, "
                                   "read-only as NumPy's")
def frombuffer(em, buffer, dtype=float, count=-1, offset=0, *, like=None):
    if isinstance(buffer, Traced) or not isinstance(buffer, (bytes, bytearray)):
        raise NotSupportedError("np.frombuffer of anything but a bytes object known while compiling",
                                hint="pass the array as an argument instead")
    contents = fold(np.frombuffer, bytes(buffer), dtype=static_dtype(em, dtype, "frombuffer"),
                    count=em.static(count, "frombuffer: count"), offset=em.static(offset, "frombuffer: offset"))
    return em.array(contents.copy(), frozen="the array np.frombuffer made of a bytes object (read-only in NumPy)")
