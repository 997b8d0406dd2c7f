"""index_checks: run-time integer indices and slice starts checked against an axis as NumPy checks
them (IndexError where NumPy raises), left out where the value's compile-time range proves it in
bounds; a loop's ragged last blocks (`A[ii:ii + bs]` past the end) ask for the loop to be unrolled."""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from .values import NeedStatic, Traced


def index_i64(em, i: Traced, n: int, what: str, axis: int = 0) -> Traced:
    """A run-time index as int64, negative values counted from the end; out of range is an error."""
    i_in = i
    i = em.cast(em.asarray(i), np.int64)
    if in_range(em, i_in, n - 1):    # always in range: nothing to check
        return i
    lt = lambda a, b: em.emit("compare", a, b, direction="LT")
    zero, size = em.full(0, np.int64, i.shape), em.full(n, np.int64, i.shape)
    wrapped = em.emit("select", lt(i, zero), em.emit("add", i, size), i)
    bad = em.emit("or", lt(wrapped, zero), em.emit("compare", wrapped, size, direction="GE"))
    # (the call raises; until it returns, an index out of range reads and writes position 0:
    # IREE's scatter does not skip one, and wrote past the array)
    safe = em.emit("select", bad, zero, wrapped)
    if bad.ndim:
        bad = em.emit("reduce", bad, kind="or", axes=tuple(range(bad.ndim)))
    em.check(bad, f"IndexError: {what} is out of bounds for axis {axis} with size {n}")
    return safe


RAGGED_BLOCKS = 64


def dslice_start(em, item, n: int) -> Traced:
    """The start of a slice of compile-time length item.size from a run-time start (index_items.Item
    "dslice"), checked to lie inside an axis of n."""
    start = em.cast(em.asarray(item.value), np.int64)
    if in_range(em, item.value, n - item.size):
        return start
    known = em.range_of(item.value)
    if known is not None and known[1] > n - item.size and item.value.params \
            and (known[1] - known[0]) <= RAGGED_BLOCKS * max(item.size, 1):
        # a loop variable whose last values run past the end (`A[ii:ii + bs]` over range(0, n, bs)
        # where bs does not divide n, blocked code's ragged edge): NumPy's shorter slice, with the
        # loop unrolled so that each slice is known. Where the range holds more than RAGGED_BLOCKS
        # such slices (a sliding window, maybe guarded by an `if`), a run-time check instead
        raise NeedStatic(item.value.params, reason=ShapeError(
            f"a slice of length {item.size} from a run-time start runs past the end of an axis of size {n} "
            "(NumPy returns a shorter slice there)", hint="make the loop's bounds compile-time values"))
    lt = lambda a, b: em.emit("compare", a, b, direction="LT")
    # both bounds negative (`x[i:i + 3]` at i = -5): NumPy counts both from the end, a whole window
    start = em.emit("select", lt(em.emit("add", start, em.constant(np.int64(item.size))), em.constant(np.int64(0))),
                    em.emit("add", start, em.constant(np.int64(n))), start)
    bad = em.emit("or", lt(start, em.constant(np.int64(0))),
                  lt(em.constant(np.int64(n - item.size)), start))
    em.check(bad, f"IndexError: a slice of length {item.size} with a run-time start runs outside an axis of "
                  f"size {n} (NumPy would return a shorter slice)")
    return start


def in_range(em, i, hi: int) -> bool:
    """Whether the run-time integer i is known to lie in [0, hi] (Emitter.range_of)."""
    known = em.range_of(i)
    return known is not None and 0 <= known[0] and known[1] <= hi


def reached_only_at_run_time(em, error: ShapeError) -> bool:
    """Whether `error`, an IndexError found while compiling, belongs to code that may not run: a
    body of a run-time loop or a branch of a run-time if (`if j >= 0: return a[j]` of an empty a,
    `for i in range(k): s += a[i]` with k = 0). NumPy raises it only if that code runs, so the
    compiled function does too."""
    return error.message.startswith("IndexError") and bool(em.loop_depth or em.branch_depth)


def failed_read(em, x: Traced, index, error: ShapeError) -> Traced:
    """x[index] where the index is out of bounds wherever this code runs: the error when it runs,
    and zeros of the shape NumPy's result would have (computed on x with empty axes of length 1
    and the index moved in range), which nothing sees."""
    if any(not isinstance(d, int) for d in x.shape):
        raise error
    items = index if isinstance(index, tuple) else (index,)
    probe = np.zeros(tuple(max(d, 1) for d in x.shape), dtype=np.bool_)
    in_range = []
    for it in items:
        if isinstance(it, Traced) and it.ndim == 0:
            in_range.append(0)
        elif isinstance(it, (int, np.integer)) and not isinstance(it, (bool, np.bool_)):
            in_range.append(0)
        elif it is None or it is Ellipsis or isinstance(it, slice) and not any(
                isinstance(p, Traced) for p in (it.start, it.stop, it.step)):
            in_range.append(it)
        else:
            raise error
    try:
        shape = probe[tuple(in_range)].shape
    except (IndexError, TypeError, ValueError):
        raise error from None
    raise_where_run(em, error)
    return em.full(0, x.dtype, shape)


def raise_where_run(em, error: ShapeError) -> None:
    """`error` raised by the compiled function where the current code runs."""
    em.check(em.constant(np.bool_(True)), error.message)
