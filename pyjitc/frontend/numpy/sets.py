"""sets: NumPy's set routines on 1-D data (np.intersect1d, np.setdiff1d, np.setxor1d), whose
results' lengths depend on the data: selections over a sorted array (as np.unique's), usable in
elementwise operations, reductions, len() and as results. Each follows NumPy's own algorithm
(numpy/lib/_arraysetops_impl.py) step for step where ties and NaN decide the result: NaN is never
equal to NaN in them, so two arrays' NaNs are not "common", and setxor1d keeps both."""
from __future__ import annotations

import numpy as np

from .. import masked
from ..compaction import compacted
from ..indexing import mask_key
from ..registry import register
from ..values import Traced, fold, is_static
from .elementwise import cmp
from .shapes import reshape
from .sorting import isin, run_starts, searchsorted, sort_along


def _flat(em, x, dt) -> Traced:
    return reshape(em, em.cast(em.asarray(x), dt), (-1,))


def _selection(em, values: Traced, flags: Traced) -> masked.Masked:
    """values[flags] as a selection along its one axis (what np.unique returns)."""
    key = ("flags", mask_key(em, flags), (values.shape[0],))
    return masked.Masked(Traced(values.value, None, values.params), 0, ("flags", flags), key, None)


def _empty(dt) -> np.ndarray:
    return np.zeros((0,), dt)


def _arguments(em, fn, ar1, ar2, **flags):
    """(NumPy's own result where both arrays are known now, else None), the arrays, and the
    flags as compile-time values."""
    flags = {k: bool(em.static(v, f"{fn.__name__}: {k}")) for k, v in flags.items()}
    if is_static(ar1) and is_static(ar2):
        return fold(fn, ar1, ar2, **flags), None, None, flags
    return None, em.asarray(ar1), em.asarray(ar2), flags


def _unique_parts(em, arrays, dt, assume_unique: bool) -> list:
    """Each array as (sorted or raveled values, which of them NumPy keeps): np.unique's runs, or
    every element where the caller says the arrays are unique already."""
    parts = []
    for a in arrays:
        x = _flat(em, a, dt)
        if assume_unique:
            parts.append((x, em.full(True, np.bool_, x.shape)))
        else:
            x = sort_along(em, x, 0, with_index=False)[0]
            parts.append((x, run_starts(em, x, equal_nan=True)))
    return parts


def _sorted_together(em, parts) -> tuple[Traced, Traced, Traced]:
    """NumPy's `aux = np.concatenate(parts); aux.sort()` over the kept elements: the sorted values
    at the front (NaN last), how many there are (int64), and the stable sort's order over the
    whole concatenation (the kept elements first)."""
    z = em.emit("concatenate", *[x for x, _ in parts], axis=0)
    kept = em.emit("concatenate", *[f for _, f in parts], axis=0)
    s, order = sort_along(em, z, 0, with_index=True)
    aux, count = compacted(em, _selection(em, s, em.emit("take", kept, order)))
    return aux, count, order


def _pairs(em, aux: Traced, count: Traced):
    """Over positions 0..n-2 of aux: whether aux[i + 1] is a kept element equal to aux[i]
    (NumPy's `aux[1:] == aux[:-1]`, NaN never equal), and aux[i + 1] != aux[i]."""
    n = aux.shape[0]
    later = em.emit("slice", aux, start=(1,), limit=(n,), strides=(1,))
    earlier = em.emit("slice", aux, start=(0,), limit=(n - 1,), strides=(1,))
    iota = em.emit("iota", shape=(n - 1,), dim=0, dtype=np.dtype(np.int64))
    inside = cmp(em, em.emit("add", iota, em.full(1, np.int64, (n - 1,))), em.broadcast(count, (n - 1,)), "LT")
    eq = cmp(em, later, earlier, "EQ")
    return em.emit("and", eq, inside), em.emit("not", eq)


@register("numpy.intersect1d", note="sorted unique values in both (a selection); return_indices gives the first "
                                    "occurrences in each input, as NumPy")
def intersect1d(em, ar1, ar2, assume_unique=False, return_indices=False):
    folded, a, b, flags = _arguments(em, np.intersect1d, ar1, ar2, assume_unique=assume_unique,
                                     return_indices=return_indices)
    if a is None:
        return folded
    assume_unique, return_indices = flags["assume_unique"], flags["return_indices"]
    dt = em.result_type(a, b)
    na, nb = int(np.prod(a.shape)), int(np.prod(b.shape))
    if not assume_unique:
        # the sorted first elements of a's runs that b holds: NumPy's pairs in aux are these
        x, order = sort_along(em, _flat(em, a, dt), 0, with_index=True)
        if na == 0 or nb == 0:
            empty = em.asarray(_empty(dt))
            return (empty, em.asarray(_empty(np.int64)), em.asarray(_empty(np.int64))) if return_indices else empty
        flags = em.emit("and", run_starts(em, x, equal_nan=True), isin(em, x, b))
        if not return_indices:
            return _selection(em, x, flags)
        y, order_b = sort_along(em, _flat(em, b, dt), 0, with_index=True)
        first_b = em.emit("min", searchsorted(em, y, x), em.full(nb - 1, np.int64, (na,)))
        return (_selection(em, x, flags), _selection(em, order, flags),
                _selection(em, em.emit("take", order_b, first_b), flags))
    if na + nb < 2:
        empty = em.asarray(_empty(dt))
        return (empty, em.asarray(_empty(np.int64)), em.asarray(_empty(np.int64))) if return_indices else empty
    aux, count, order = _sorted_together(em, _unique_parts(em, (a, b), dt, True))
    n = aux.shape[0]
    same, _ = _pairs(em, aux, count)
    values = em.emit("slice", aux, start=(0,), limit=(n - 1,), strides=(1,))
    if not return_indices:
        return _selection(em, values, same)
    first = em.emit("slice", order, start=(0,), limit=(n - 1,), strides=(1,))
    second = em.emit("sub", em.emit("slice", order, start=(1,), limit=(n,), strides=(1,)),
                     em.full(na, np.int64, (n - 1,)))
    return _selection(em, values, same), _selection(em, first, same), _selection(em, second, same)


@register("numpy.setdiff1d", note="sorted unique values of the first array not in the second (a selection); "
                                  "with assume_unique=True the first array's order, as NumPy")
def setdiff1d(em, ar1, ar2, assume_unique=False):
    folded, a, b, flags = _arguments(em, np.setdiff1d, ar1, ar2, assume_unique=assume_unique)
    if a is None:
        return folded
    x = _flat(em, a, a.dtype)
    if x.shape[0] == 0:
        return em.asarray(_empty(a.dtype))
    if flags["assume_unique"]:
        return _selection(em, x, isin(em, x, b, invert=True))
    x = sort_along(em, x, 0, with_index=False)[0]
    return _selection(em, x, em.emit("and", run_starts(em, x, equal_nan=True), isin(em, x, b, invert=True)))


@register("numpy.setxor1d", note="sorted unique values in exactly one of the arrays (a selection); a NaN of "
                                 "each array is kept, as NumPy")
def setxor1d(em, ar1, ar2, assume_unique=False):
    folded, a, b, flags = _arguments(em, np.setxor1d, ar1, ar2, assume_unique=assume_unique)
    if a is None:
        return folded
    dt = em.result_type(a, b)
    if int(np.prod(a.shape)) + int(np.prod(b.shape)) == 0:
        return em.asarray(_empty(dt))
    aux, count, _ = _sorted_together(em, _unique_parts(em, (a, b), dt, flags["assume_unique"]))
    n = aux.shape[0]
    iota = em.emit("iota", shape=(n,), dim=0, dtype=np.dtype(np.int64))
    inside = cmp(em, iota, em.broadcast(count, (n,)), "LT")
    if n == 1:
        return _selection(em, aux, inside)
    _, differ = _pairs(em, aux, count)
    true = em.full(True, np.bool_, (1,))
    # NumPy's flag = [True, aux[1:] != aux[:-1], True] over the kept elements: the last kept one's
    # right neighbour is the end
    left = em.emit("concatenate", true, differ, axis=0)
    last = cmp(em, em.emit("add", iota, em.full(1, np.int64, (n,))), em.broadcast(count, (n,)), "EQ")
    right = em.emit("or", em.emit("concatenate", differ, true, axis=0), last)
    return _selection(em, aux, em.emit("and", inside, em.emit("and", left, right)))

