"""index_items: an index as NumPy reads it, one Item per axis (ints, slices, run-time integers,
slices of a run-time start and a compile-time length, slices of a run-time length, integer
arrays, new axes), with NumPy's normalisation and errors; indexing.py reads and writes by them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import dims
from ..errors import NotSupportedError, ShapeError
from ..ir.types import is_bool, is_int
from . import masked
from .values import Emitter, NeedStatic, Traced, items_of


@dataclass
class Item:
    """One index item, normalised. kind: int | slice | dyn (run-time int) | dslice (run-time start,
    compile-time length) | array (integer array, static or traced) | new (None)."""
    kind: str
    value: Any = None          # int, (start, stop, step, count), Traced, np.ndarray
    size: int = 0              # dslice length


def _static_or_need(em, x, what):
    if isinstance(x, Traced):
        if x.params:
            raise NeedStatic(x.params)
        raise ShapeError(f"{what} depends on array values, so the result's shape would depend on the data")
    return x


def is_int_scalar(t: Traced) -> bool:
    return t.ndim == 0 and (t.weak is int or is_int(t.dtype))


def parse(em: Emitter, x: Traced, index, run_time_length=False) -> list[Item]:
    """The index as Items; a slice with a run-time length ("mslice") only where the caller
    handles one (`run_time_length`), otherwise NeedStatic for its bounds (or an error)."""
    out = _parse(em, x, index)
    if not run_time_length or any(it.kind == "array" for it in out) and not rows_then_window(out) \
            or sum(it.kind == "mslice" for it in out) > 2:
        for it in out:
            if it.kind == "mslice":
                _refuse_run_time_length(it)
    return out


def leading_indices(items: list[Item]) -> int:
    """How many items from the first are indices (arrays, ints)."""
    k = 0
    while k < len(items) and items[k].kind in ("array", "int", "dyn"):
        k += 1
    return k


def rows_then_window(items: list[Item]) -> bool:
    """Index arrays on the leading axes, then slices, one of them of run-time length: `R[[i - 1, i], j:]`."""
    k = leading_indices(items)
    return any(it.kind == "array" for it in items[:k]) and \
        all(it.kind in ("slice", "dslice", "mslice") for it in items[k:]) and \
        sum(it.kind == "mslice" for it in items[k:]) == 1


def _parse(em: Emitter, x: Traced, index) -> list[Item]:
    raw = list(index) if isinstance(index, tuple) else [index]
    items: list[Any] = []
    for it in raw:
        if isinstance(it, list):     # (of run-time numbers too: the row swap A[[i, p]] = A[[p, i]])
            if next(items_of(it, Traced), None) is None:
                it = np.asarray(it) if it else np.zeros(0, np.intp)     # known positions
            else:
                it = em.asarray(it)
                it = it.const if it.const is not None else it
        if isinstance(it, np.ndarray) and is_bool(it.dtype):
            if it.ndim == 0:
                raise NotSupportedError("indexing with a boolean scalar is not supported")
            items.extend(np.nonzero(it))      # a compile-time mask is its integer positions
            continue
        items.append(it)
    if sum(1 for it in items if it is Ellipsis) > 1:
        raise ShapeError("an index can only have a single ellipsis ('...')")
    used = sum(1 for it in items if it is not None and it is not Ellipsis)
    if used > x.ndim:
        raise ShapeError(f"too many indices for array: array is {x.ndim}-dimensional, but {used} were indexed")
    if Ellipsis in [it for it in items if not isinstance(it, (np.ndarray, Traced))]:
        i = next(k for k, it in enumerate(items) if it is Ellipsis)
        items[i:i + 1] = [slice(None)] * (x.ndim - used)
    else:
        items += [slice(None)] * (x.ndim - used)

    out, dim = [], 0
    for it in items:
        if it is None:
            out.append(Item("new"))
            continue
        n = x.shape[dim]
        if isinstance(it, Traced):
            if is_bool(it.dtype):
                raise NotSupportedError("x[mask] has a shape that depends on the data",
                                        hint="use np.where(mask, x, 0) instead, or write through the mask: x[mask] = v")
            if it.weak is float or not (it.weak is int or is_int(it.dtype)):
                raise ShapeError("IndexError: only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) "
                               "and integer or boolean arrays are valid indices")
            if it.ndim == 0 and n == 0:    # every index is out of bounds
                raise ShapeError(f"IndexError: index is out of bounds for axis {dim} with size 0")
            out.append(Item("dyn", it) if it.ndim == 0 else Item("array", it))
        elif isinstance(it, (bool, np.bool_)):
            raise NotSupportedError("indexing with a boolean scalar is not supported")
        elif isinstance(it, (int, np.integer)):
            i = int(it)
            if not -n <= i < n:
                raise ShapeError(f"IndexError: index {i} is out of bounds for axis {dim} with size {n}")
            out.append(Item("int", i % n))
        elif isinstance(it, np.ndarray):
            if not is_int(it.dtype):
                raise ShapeError("IndexError: arrays used as indices must be of integer (or boolean) type")
            if it.size and (it.max() >= n or it.min() < -n):
                bad = it.max() if it.max() >= n else it.min()
                raise ShapeError(f"IndexError: index {bad} is out of bounds for axis {dim} with size {n}")
            out.append(Item("array", np.where(it < 0, it + n, it).astype(np.int64)))
        elif isinstance(it, slice):
            out.append(_parse_slice(em, it, n))
        else:
            raise ShapeError(f"IndexError: can't index an array with {type(it).__name__}")
        dim += 1
    return out


def _parse_slice(em, it: slice, n: int) -> Item:
    for part in (it.start, it.stop, it.step):
        if not (part is None or isinstance(part, (int, np.integer, dims.Dim)) or
                isinstance(part, np.ndarray) and part.ndim == 0 and part.dtype.kind in "biu" or
                isinstance(part, Traced) and is_int_scalar(part)):
            raise ShapeError("TypeError: slice indices must be integers or None or have an __index__ method")
    step = _static_or_need(em, it.step, "a slice step")
    start, stop = it.start, it.stop
    if not isinstance(start, Traced) and not isinstance(stop, Traced):
        return Item("slice", dims.slice_indices(start, stop, step, n))
    if step not in (None, 1):
        raise NotSupportedError("a slice with run-time bounds must have step 1")
    a, b = em.offset_of(start), em.offset_of(stop)
    # (the same base: one value, or one computation made twice, as in `x[3 * i:3 * i + 3]`)
    if isinstance(start, Traced) and isinstance(stop, Traced) and a and b and (
            a[0] == b[0] or masked.base_structure(em, a[0]) == masked.base_structure(em, b[0])):
        size = b[1] - a[1]        # x[i:i + 4]: length 4 whatever i is
        r = em.range_of(start)
        if (r is None or r[0] >= 0 or size <= 0) and size <= n:
            return Item("dslice", start, max(size, 0))
        # (longer than the axis: NumPy's result is always shorter, its length the bounds' (an
        # internal error before, `x[i:i + 3]` of 2 elements); a masked slice)
        # a start that may be negative counts from the end (`x[i - 2:i + 1]` at i = 0 is x[-2:1],
        # empty): NumPy's bounds of each, a run-time length (it raised "runs outside the axis")
    return Item("mslice", (start, stop))     # a run-time length: see masked.py


def _refuse_run_time_length(it: Item):
    start, stop = it.value
    moving = stop if isinstance(stop, Traced) else start
    if moving.params:
        raise NeedStatic(moving.params)
    raise ShapeError("this slice's length depends on a value known only at run time, so the result's shape "
                     "would change from call to call",
                     hint="write the bounds as i:i + k with a compile-time k, or mask over the full extent")
