"""comparisons: whole-array comparisons (isclose, allclose, array_equal, array_equiv) and np.where,
written as NumPy's own Python code writes them, from the registered ufuncs. Functions that NumPy
makes return a Python bool return one here too (a weak bool, which comes back as Python's bool)."""
from __future__ import annotations

import numpy as np

from ...errors import ShapeError
from ...ir import dims
from ...ir.dims import Dim
from ..operators import apply_operator
from ..registry import FUNCTIONS, register
from ..values import Traced, fold, folding, is_py_scalar, is_static, join_params
from .creation import as_array
from .ufuncs import broadcast_shapes


def python_bool(em, t: Traced) -> Traced:
    """bool(t) for a 0-d boolean value: a weak bool, which NumPy code and callers see as Python's."""
    return Traced(t.value, bool, join_params([t]))


def _all(em, x) -> Traced:
    return python_bool(em, FUNCTIONS["numpy.all"](em, x))


def _float_y(em, y):
    """isclose's y: an array becomes inexact (result_type(y, 1.)), a Python int a Python float."""
    if is_py_scalar(y):
        return float(y) if isinstance(y, int) else y
    if isinstance(y, Traced) and y.weak is not None:
        if y.weak in (int, bool):
            return Traced(em.cast(y, np.float64).value, float, y.params)
        return y
    y = as_array(em, y)
    return em.cast(y, np.result_type(y.dtype, 1.0))


@register("numpy.isclose", complex_ok=True)
@folding(np.isclose)
def isclose(em, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    equal_nan = em.static(equal_nan, "isclose: equal_nan")
    x = a if is_py_scalar(a) or (isinstance(a, Traced) and a.weak) else as_array(em, a)
    y = _float_y(em, b)
    rtol, atol = (v if is_py_scalar(v) or isinstance(v, Traced) else as_array(em, v) for v in (rtol, atol))
    f = FUNCTIONS
    close = f["numpy.less_equal"](em, f["numpy.absolute"](em, apply_operator(em, "Sub", x, y)),
                                  apply_operator(em, "Add", atol, apply_operator(em, "Mult", rtol, f["numpy.absolute"](em, y))))
    result = f["numpy.bitwise_or"](em, f["numpy.bitwise_and"](em, close, f["numpy.isfinite"](em, y)),
                                   f["numpy.equal"](em, x, y))
    if equal_nan:
        result = f["numpy.bitwise_or"](em, result, f["numpy.bitwise_and"](em, f["numpy.isnan"](em, x),
                                                                          f["numpy.isnan"](em, y)))
    return em.cast(em.asarray(result), np.bool_)   # NumPy's bool, also for Python scalar inputs


@register("numpy.allclose", complex_ok=True, note="returns a Python bool, as NumPy")
@folding(np.allclose)
def allclose(em, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _all(em, isclose(em, a, b, rtol, atol, equal_nan))


@register("numpy.array_equal", complex_ok=True, note="returns a Python bool, as NumPy")
@folding(np.array_equal)
def array_equal(em, a1, a2, equal_nan=False):
    equal_nan = em.static(equal_nan, "array_equal: equal_nan")
    if a1 is a2 and equal_nan:
        return True
    x, y = as_array(em, a1), as_array(em, a2)
    if x.shape != y.shape:
        return False
    same = FUNCTIONS["numpy.equal"](em, x, y)
    if not equal_nan or (x.dtype.kind not in "fc" and y.dtype.kind not in "fc"):
        return _all(em, same)
    xnan, ynan = FUNCTIONS["numpy.isnan"](em, x), FUNCTIONS["numpy.isnan"](em, y)
    # NaN at the same places, and the other elements equal
    return _all(em, FUNCTIONS["numpy.logical_and"](em, FUNCTIONS["numpy.equal"](em, xnan, ynan),
                                                   FUNCTIONS["numpy.logical_or"](em, same, xnan)))


@register("numpy.array_equiv", complex_ok=True, note="returns a Python bool, as NumPy")
@folding(np.array_equiv)
def array_equiv(em, a1, a2):
    x, y = as_array(em, a1), as_array(em, a2)
    try:
        dims.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return False
    return _all(em, FUNCTIONS["numpy.equal"](em, x, y))


def _as_c_long(v, dtype):
    """A known Python int that np.where or np.select's default puts into an integer array: NumPy
    converts it as a C long and casts that unsafely, so it wraps (-1 into uint8 is 255); past 64 bits
    it does not convert at all."""
    if type(v) is not int or np.dtype(dtype).kind not in "iu":
        return v
    if not -2**63 <= v < 2**64:
        raise ShapeError("OverflowError: Python int too large to convert to C long")
    return np.array(v % 2**64, np.uint64).astype(dtype).item()


def _python_int_choice(v, dtype):
    """A Python int in select's choicelist becomes an int64 array, copied in with same_kind casting."""
    if type(v) is int and np.dtype(dtype).kind in "iu" and not np.can_cast(np.int64, dtype, "same_kind"):
        raise ShapeError(f"TypeError: Cannot cast array data from dtype('int64') to dtype('{np.dtype(dtype)}') "
                         "according to the rule 'same_kind'")
    return _as_c_long(v, dtype)


@register("numpy.select", complex_ok=True)
@folding(np.select)
def select(em, condlist, choicelist, default=0):
    if not isinstance(condlist, (list, tuple)) or not isinstance(choicelist, (list, tuple)):
        condlist, choicelist = list(em.static(condlist, "select: condlist")), list(em.static(choicelist, "select: choicelist"))
    if len(condlist) != len(choicelist):
        raise ShapeError("select: list of cases must be same length as list of conditions")
    if not condlist:
        raise ShapeError("select: select with an empty condition list is not possible")
    choices = [c if is_py_scalar(c) or (isinstance(c, Traced) and c.weak) else as_array(em, c)
               for c in (*choicelist, default)]
    dtype = em.result_type(*choices)
    conds = [as_array(em, c) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != np.bool_:
            raise ShapeError(f"select: invalid entry {i} in condlist: should be boolean ndarray")
    shape = broadcast_shapes("select", *[c.shape for c in conds], *[em.shape_of(c) for c in choices])
    out = em.operand(_as_c_long(choices[-1], dtype), dtype, shape)
    for choice, cond in zip(choices[-2::-1], conds[::-1]):
        choice = _python_int_choice(choice, dtype)
        out = em.emit("select", em.broadcast(cond, shape), em.operand(choice, dtype, shape), out)
    return em.zero_d_array(out)   # NumPy fills a new array: 0-d stays an array


@register("numpy.where", complex_ok=True,
          note="one argument: as np.nonzero (a 1-D run-time condition is usable as an index)")
def where(em, condition, x=None, y=None):
    if x is None and y is None:
        return FUNCTIONS["numpy.nonzero"](em, condition)
    if x is None or y is None:
        raise ShapeError("TypeError: either both or neither of x and y should be given")
    # (a run-time size, `h + w` of mask.shape under dynamic=True: a Python int known at run time)
    x, y = (em.asarray(v) if isinstance(v, Dim) else v for v in (x, y))
    if is_static(condition, x, y):
        return fold(np.where, condition, x, y)
    try:
        # (a Python number, known or a run-time argument, takes part as a weak scalar: NEP 50)
        weak = lambda v: v if not isinstance(v, Traced) else em.dtype_of(v)(0)
        dt = np.result_type(em.dtype_of(x) if not isinstance(em.dtype_of(x), type) else weak(x),
                            em.dtype_of(y) if not isinstance(em.dtype_of(y), type) else weak(y))
    except TypeError as e:
        raise ShapeError(f"where: {e}") from None
    shape = broadcast_shapes("where", em.shape_of(condition), em.shape_of(x), em.shape_of(y))
    c = em.broadcast(em.cast(em.asarray(condition), np.bool_), shape)
    x, y = _as_c_long(x, dt), _as_c_long(y, dt)
    out = em.emit("select", c, em.operand(x, dt, shape), em.operand(y, dt, shape), sources=(condition, x, y))
    return out
