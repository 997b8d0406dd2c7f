"""indexing: NumPy's indexing rules for reading (x[idx]) and writing (x[idx] = v) on traced arrays.
Compile-time ints/slices/None/Ellipsis become slices; run-time integers (loop variables, scalar
arguments) dynamic slices with a bounds check (NumPy would raise IndexError); integer arrays a
gather; writes a dynamic_update_slice, or a select where the positions are irregular."""
from __future__ import annotations

import numpy as np

from ..ir import dims
from ..errors import NotSupportedError, ShapeError
from ..ir.types import is_bool
from . import masked
from .registry import FUNCTIONS
from .store_values import values_for
from .index_checks import dslice_start, failed_read, in_range, index_i64, raise_where_run, reached_only_at_run_time
from .reversed_slices import element_store, forward_of_reversed, run_time_step_mask, unit_step
from .values import Emitter, FlatIter, Traced, make_view
from .write_loops import written_in_order
from .index_items import Item, is_int_scalar, leading_indices, parse, rows_then_window


# ---------------------------------------------------------------- reading

def getitem(em: Emitter, x: Traced, index):
    try:
        out = _getitem(em, x, index)
    except ShapeError as e:     # out of bounds where this code runs, if it runs: an error then
        if not reached_only_at_run_time(em, e):
            raise
        return failed_read(em, x, index, e)
    if isinstance(x, FlatIter) and isinstance(out, Traced) and out.view is not None:
        return Traced(out.value, out.weak, out.params)    # `a.flat[1:4]` is a copy in NumPy
    return out


def _getitem(em: Emitter, x: Traced, index):
    if isinstance(index, tuple) and len(index) > 1 and isinstance(index[0], Traced) and is_bool(index[0].dtype) \
            and index[0].ndim == 1 and x.ndim >= 1 and index[0].shape[0] == x.shape[0] and None in index[1:] \
            and all(it is None or it == slice(None) for it in index[1:]):
        # x[m, None]: the selection, then its new axes (`vn[m, None] * n[m]`, a collision's normals)
        return masked.subscript(em, _getitem(em, x, index[0]), (slice(None),) + index[1:])
    if is_mask(index):
        flags = index[0] if isinstance(index, tuple) else index
        if flags.ndim and flags.shape == x.shape[:flags.ndim]:
            return _read_selection(em, x, flags)
    among = _mask_among(x, index)
    if among is not None:
        return _read_mask_axis(em, x, *among)
    stepped = run_time_step_mask(em, x, index)
    if stepped is not None:    # x[a::i], i a positive run-time step: a selection
        return _read_selection(em, x, stepped)
    strided = unit_step(index)
    if strided is not None:     # x[k::3]: every third element of x[k:], a slice with run-time bounds
        m = _getitem(em, x, strided[0])
        if isinstance(m, masked.Masked) and m.where[0] == "bounds":
            return masked.strided(em, m, strided[1])
        if isinstance(m, masked.Masked):
            masked.need(m, "a strided slice of it")
        if isinstance(m, Traced) and strided[2] < m.ndim:   # x[i:i + 8:3]: a compile-time length
            return _getitem(em, m, (slice(None),) * strided[2] + (slice(None, None, strided[1]),))
    forward = forward_of_reversed(em, x, index)
    if forward is not None:     # x[i::-1]: np.flip(x[:i + 1]), a slice with run-time bounds
        m = _getitem(em, x, forward)
        if isinstance(m, masked.Masked) and m.where[0] != "bounds":
            masked.need(m, "a reversed slice of it")
        if isinstance(m, masked.Masked):
            from .registry import FUNCTIONS
            return masked.flip(em, FUNCTIONS["numpy.flip"], m, (m.axis,))
    items = parse(em, x, index, run_time_length=True)
    if rows_then_window(items):
        whole, axis, (lo, hi, key, params) = _rows_then_window(em, x, items)
        return masked.Masked(_advanced(em, x, whole), axis, ("bounds", lo, hi), key, params, own=True)
    if any(it.kind == "array" for it in items):
        return _advanced(em, x, items)
    if any(it.kind == "mslice" for it in items):
        return _read_run_time_length(em, x, items)
    y = _basic(em, x, items)
    if y.ndim == 0 and all(it.kind in ("int", "dyn") for it in items) and not _has_ellipsis(index):
        return y   # x[i, j] is a NumPy scalar (a copy), not a view
    return _view(em, x, items, y)


def _whole_axis(em, x: Traced, items: list[Item]):
    """The items with the run-time-length slice made the whole axis; that axis's position in x
    and in the result; and the slice's bounds (masked.bounds)."""
    whole, found = _whole_axes(em, x, items)
    return (whole,) + found[0]


def _whole_axes(em, x: Traced, items: list[Item]):
    """The items with each run-time-length slice made the whole axis; per such slice, its axis's
    position in the result and its bounds (masked.bounds)."""
    whole, found = list(items), []
    for k, it in enumerate(items):
        if it.kind != "mslice":
            continue
        dim = sum(1 for i in items[:k] if i.kind != "new")
        axis = sum(1 for i in items[:k] if i.kind in ("new", "slice", "dslice", "mslice"))
        n = x.shape[dim]
        whole[k] = Item("slice", (0, n, 1, n))
        found.append((axis, masked.bounds(em, *it.value, n)))
    return whole, found


def _bounds_params(found):
    """The scalar arguments/loop markers both slices' bounds come from (None: array data)."""
    params = [p for _, (_, _, _, p) in found]
    return None if any(p is None for p in params) else frozenset().union(*params)


def _read_run_time_length(em, x: Traced, items: list[Item]) -> masked.Masked:
    whole, found = _whole_axes(em, x, items)
    view = _view(em, x, whole, _basic(em, x, whole))
    if len(found) == 2:   # A[k + 1:, k + 1:]: masked_grid.py
        return masked.GRIDS["make"](view, [(axis, lo, hi, key) for axis, (lo, hi, key, _) in found],
                                    _bounds_params(found))
    axis, (lo, hi, key, params) = found[0]
    return masked.Masked(view, axis, ("bounds", lo, hi), key, params)


def _mask_among(x: Traced, index):
    """(the index's items padded to x.ndim, position k, mask) for a tuple index holding one 1-D
    run-time bool mask beside integers and slices (`A[:, m]`, `A[m, 1:3]`, `z[1, m]`); else None."""
    if not isinstance(index, tuple) or len(index) > x.ndim:
        return None
    masks = [k for k, it in enumerate(index) if isinstance(it, Traced) and is_bool(it.dtype)]
    if len(masks) != 1 or index[masks[0]].ndim != 1 or len(index) == 1 or not all(
            k in masks or isinstance(it, slice) or isinstance(it, (int, np.integer)) and not isinstance(it, (bool, np.bool_))
            or isinstance(it, Traced) and is_int_scalar(it) for k, it in enumerate(index)):
        return None
    k = masks[0]
    if index[k].shape[0] != x.shape[k]:
        raise _mask_mismatch(k, x.shape[k], index[k].shape[0])
    return tuple(index) + (slice(None),) * (x.ndim - len(index)), k, index[k]


def _mask_mismatch(axis: int, size: int, mask_size: int) -> ShapeError:
    return ShapeError(f"IndexError: boolean index did not match indexed array along axis {axis}; size of axis is "
                      f"{size} but size of corresponding boolean axis is {mask_size}")


def _mask_axis(items, k: int) -> tuple[int, bool]:
    """Where the masked axis is in x[items] with the mask made a slice, and whether NumPy puts it
    first instead (the mask and integer indices apart, with a slice between them)."""
    axis = sum(1 for it in items[:k] if isinstance(it, slice))
    advanced = [i for i, it in enumerate(items) if i == k or not isinstance(it, slice)]
    return axis, max(advanced) - min(advanced) + 1 != len(advanced)


def _read_mask_axis(em, x: Traced, items: tuple, k: int, mask: Traced) -> masked.Masked:
    """x[..., m, ...]: the array with the mask's axis whole, masked by its flags there."""
    plain = getitem(em, x, tuple(slice(None) if i == k else it for i, it in enumerate(items)))
    if isinstance(plain, masked.Masked):
        masked.need(plain, "indexing it with a mask")
    axis, first = _mask_axis(items, k)
    data = Traced(plain.value, None, x.params)
    if first and axis:
        data = em.emit("transpose", data, perm=(axis,) + tuple(i for i in range(data.ndim) if i != axis))
        axis = 0
    return masked.Masked(data, axis, ("flags", mask), ("flags", mask_key(em, mask), mask.shape), None)


def _write_mask_axis(em, x: Traced, items: tuple, k: int, mask: Traced, value, what) -> Traced:
    """x[..., m, ...] = v: v a scalar, an array broadcast along the masked axis, or the same
    selection computed (`z[:, m] *= 2`); the other positions keep their values."""
    plain = tuple(slice(None) if i == k else it for i, it in enumerate(items))
    old = getitem(em, x, plain)
    axis, first = _mask_axis(items, k)
    shape = old.shape
    if isinstance(value, masked.Masked):
        if value.key != ("flags", mask_key(em, mask), mask.shape) or value.axis != (0 if first else axis):
            masked.need(value, f"{what} through another mask")
        v = value.data
        if first and axis:
            v = em.emit("transpose", v, perm=tuple(range(1, axis + 1)) + (0,) + tuple(range(axis + 1, v.ndim)))
        if v.shape != shape:
            masked.need(value, f"{what} of another shape")
    else:
        vshape = value.shape if isinstance(value, Traced) else np.shape(value)
        along = (0 if first else axis) - (len(shape) - len(vshape))     # the masked axis in v's shape
        if 0 <= along < len(vshape) and vshape[along] != 1:
            raise NotSupportedError(f"{what}: the number of values must match the number of True entries, which is "
                                    "known only at run time", hint="assign a scalar, or use np.where(mask, values, x)")
        if first and axis and len(vshape) == len(shape):
            value = em.emit("transpose", em.asarray(value), perm=tuple(range(1, axis + 1)) + (0,) + tuple(range(axis + 1, len(shape))))
        v = values_for(em, value, x.dtype, shape, what)
    m = em.emit("broadcast_in_dim", mask, shape=shape, dims=(axis,))
    return setitem(em, x, plain, em.emit("select", m, em.cast(v, x.dtype), old), what)


def _read_selection(em, x: Traced, flags: Traced) -> masked.Masked:
    """x[mask] with a run-time mask of x's leading axes (all of them, or the rows: X[y == k]):
    those axes flattened into one (a copy, as NumPy's), masked by the flags."""
    n = flags.type.size
    shape = (n,) + x.shape[flags.ndim:]
    flat = em.emit("reshape", x, shape=shape) if x.shape != shape else em.wrap(x.value, x)
    f = em.emit("reshape", flags, shape=(n,)) if flags.ndim != 1 else flags
    return masked.Masked(Traced(flat.value, None, x.params), 0, ("flags", f), ("flags", mask_key(em, flags), flags.shape), None)


def mask_key(em, flags: Traced, depth: int = 6, producers: dict | None = None):
    """What makes two masks the same selection: the same value, or the same op on the same
    operands (SSA values never change, so `x[x > 0] = 1 / x[x > 0]` computes x > 0 twice from
    the same x and selects the same elements). Every op of the current block is looked at, so the
    key of a value does not depend on how many ops came after it (a float power between a read
    and a write through `y[y > 0]` emits about a hundred)."""
    if producers is None:
        producers = {r.id: op for op in em.b.blocks[-1].ops for r in op.results}
    op = producers.get(flags.value.id) if depth else None
    if op is not None and op.name == "constant" and np.asarray(op.attrs["value"]).size <= 64:
        c = np.asarray(op.attrs["value"])
        return ("constant", c.dtype.str, c.shape, c.tobytes())
    if op is None or op.regions or op.name in ("constant", "optimization_barrier"):
        return ("value", flags.value.id)
    attrs = tuple(sorted((k, repr(v)) for k, v in op.attrs.items()))
    return (op.name, attrs, op.results.index(flags.value) if len(op.results) > 1 else 0,
            tuple(mask_key(em, Traced(o), depth - 1, producers) for o in op.operands))


def _rows_then_window(em, x: Traced, items: list[Item]):
    """For `R[[i - 1, i], j:]` (index_items.rows_then_window): the items with the run-time
    slice whole, its axis in the result (after the indices' axes) and its bounds."""
    whole, axis, bounds = _whole_axis(em, x, items)
    shapes = [np.shape(it.value) if isinstance(it.value, np.ndarray) else it.value.shape
              for it in items[:leading_indices(items)] if it.kind == "array"]
    return whole, len(dims.broadcast_shapes(*shapes)) + axis, bounds


def _write_run_time_length(em, x: Traced, items: list[Item], value, what) -> Traced:
    """x[..., lo:hi, ...] = value: a select over the whole axis. The value is a scalar, an array
    of length 1 along that axis, or a masked array with the same bounds. With index arrays on
    the leading axes (`R[[i - 1, i], j:] = G @ R[[i - 1, i], j:]`), the rows they name."""
    if sum(it.kind == "mslice" for it in items) == 2:
        return _write_grid(em, x, items, value, what)
    rows = rows_then_window(items)
    if rows:
        whole, axis, (lo, hi, key, params) = _rows_then_window(em, x, items)
    else:
        whole, axis, (lo, hi, key, params) = _whole_axis(em, x, items)
    old = _basic(em, x, whole) if not rows else _advanced(em, x, whole)
    region = old.shape
    if isinstance(value, masked.Masked):
        if value.data.ndim - value.axis != len(region) - axis:
            masked.need(value, f"{what} into a slice of other bounds")
        if value.key != key:      # `y[1:k + 1] = x[:k]`: moved to the slice's positions
            value = masked.moved_into(em, value, (lo, hi), region[axis], what)
        value = value.data
    else:
        shape = value.shape if isinstance(value, Traced) else np.shape(value)
        if masked.fixed_along(shape, len(region) - axis):
            masked.need(masked.Masked(None, axis, ("bounds", lo, hi), key, params), f"{what} of an array of fixed length")
    v = values_for(em, value, x.dtype, region, what, scalar=True)
    new = em.emit("select", masked.mask(em, ("bounds", lo, hi), region, axis), v, old, sources=(x,), weak=x.weak)
    return _set_region(em, x, whole, new) if not rows else _set_run_time_positions(em, x, whole, new, what)


def _write_grid(em, x: Traced, items: list[Item], value, what) -> Traced:
    """x[lo:hi, lo2:hi2] = value with run-time bounds on both (`A[k + 1:, k + 1:] -= np.outer(...)`): a
    select over both whole axes. The value is a scalar, an array of length 1 along both axes, or an
    array masked along both with the same bounds (masked_grid.py)."""
    whole, found = _whole_axes(em, x, items)
    parts = [(axis, lo, hi, key) for axis, (lo, hi, key, _) in found]
    params = _bounds_params(found)
    region = _result_shape(x, whole)
    expected = masked.GRIDS["make"](None, parts, params)
    if isinstance(value, masked.Masked):
        if value.key != expected.key or any(k is None for _, _, _, k in parts) \
                or value.data.ndim != len(region):
            masked.need(value, f"{what} into a slice of other bounds")
        value = value.data
    else:
        shape = value.shape if isinstance(value, Traced) else np.shape(value)
        if any(masked.fixed_along(shape, len(region) - axis) for axis, _, _, _ in parts):
            masked.need(expected, f"{what} of an array of fixed length")
    v = values_for(em, value, x.dtype, region, what, scalar=True)
    old = _basic(em, x, whole)
    new = em.emit("select", masked.GRIDS["mask"](em, parts, region), v, old, sources=(x,), weak=x.weak)
    return _set_region(em, x, whole, new)


def _view(em, x: Traced, items: list[Item], y: Traced) -> Traced:
    return make_view(x, y,
                     lambda base: _basic(em, Traced(base, x.weak, x.params), items).value,
                     lambda base, new: _set_region(em, Traced(base, x.weak, x.params), items,
                                                   Traced(new)).value,
                     _recipe(items))


def _recipe(items: list[Item]):
    """How NumPy makes this view (program.view_of), where the index is known at compile time."""
    parts = []
    for it in items:
        if it.kind == "int":
            parts.append(("i", it.value))
        elif it.kind == "new":
            parts.append(("n",))
        elif it.kind == "slice":
            s, e, k, count = it.value   # (an empty slice as 0:0: slice(-1, None, -1) would be all of it)
            parts.append(("s", s, e if e >= 0 else None, k) if count else ("s", 0, 0, 1))
        else:
            return None
    return ("index", tuple(parts))


def _has_ellipsis(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(it is Ellipsis for it in items)


def _in_bounds(em, x: Traced, items: list[Item]) -> dict:
    """The attribute marking a dynamic_slice / dynamic_update_slice whose run-time starts are all
    known in range: its native-loop form reads and writes without StableHLO's clamp of the start
    (lowering/scalar_loop.py; the recurrence y[i] = y[i-1] * a + x[i]: 0.95 -> 0.36 ms on 2e5)."""
    dim = 0
    for it in items:
        if it.kind == "new":
            continue
        n = x.shape[dim]
        if it.kind == "dyn" and not in_range(em, it.value, n - 1):
            return {}
        if it.kind == "dslice" and it.size and not in_range(em, it.value, n - it.size):
            return {}
        dim += 1
    return {"in_bounds": True}


def _region(em, x: Traced, items: list[Item]):
    """Per axis of x: (start: int | Traced, size); plus whether steps/reversal are needed."""
    starts, sizes, plain = [], [], True
    dim = 0
    for it in items:
        if it.kind == "new":
            continue
        n = x.shape[dim]
        if it.kind == "int":
            starts.append(it.value); sizes.append(1)
        elif it.kind == "slice":
            s, e, k, count = it.value
            plain &= k == 1 or count <= 1
            starts.append(s if isinstance(count, dims.Dim) or count else 0); sizes.append(count)
        elif it.kind == "dyn":
            starts.append(index_i64(em, it.value, n, "a run-time index", dim)); sizes.append(1)
        elif it.kind == "dslice":
            starts.append(dslice_start(em, it, n) if it.size else 0); sizes.append(it.size)
        dim += 1
    return starts, sizes, plain


def _result_shape(x: Traced, items: list[Item]) -> tuple[int, ...]:
    shape, dim = [], 0
    for it in items:
        if it.kind == "new":
            shape.append(1)
            continue
        if it.kind == "slice":
            shape.append(it.value[3])
        elif it.kind == "dslice":
            shape.append(it.size)
        dim += 1
    return tuple(shape)


def _basic(em, x: Traced, items: list[Item]) -> Traced:
    y = x
    if any(it.kind == "slice" and it.value[2] != 1 for it in items):
        y = _strided(em, x, items)
        items = [Item("slice", (0, d, 1, d)) if it.kind == "slice" and it.value[2] != 1 else it
                 for it, d in zip(items, _axis_sizes(y, items))]
    starts, sizes, _ = _region(em, y, items)
    if any(isinstance(s, Traced) for s in starts):
        idx = [s if isinstance(s, Traced) else em.constant(np.int64(s)) for s in starts]
        y = em.emit("dynamic_slice", y, *idx, sizes=tuple(sizes), weak=x.weak, **_in_bounds(em, y, items))
    elif list(starts) != [0] * y.ndim or tuple(sizes) != y.shape:
        y = em.emit("slice", y, start=tuple(starts), limit=tuple(s + z for s, z in zip(starts, sizes)),
                    strides=(1,) * y.ndim, weak=x.weak)
    shape = _result_shape(x, items)
    if shape != y.shape:
        y = em.emit("reshape", y, shape=shape, weak=x.weak)
    return Traced(y.value, x.weak, x.params) if y is x else y


def _axis_sizes(y, items):
    sizes, dim = [], 0
    for it in items:
        sizes.append(y.shape[dim] if it.kind != "new" else 1)
        dim += it.kind != "new"
    return sizes


def _strided(em, x, items):
    """Apply the compile-time slices with steps != 1 (reversal + strided slice) first."""
    start, limit, strides, reverse, dim = [], [], [], [], 0
    for it in items:
        if it.kind == "new":
            continue
        n = x.shape[dim]
        if it.kind == "slice" and it.value[2] != 1:
            s, e, k, count = it.value
            if k < 0:
                reverse.append(dim)
                s, k = n - 1 - s, -k
            start.append(s if count else 0)
            limit.append(s + (count - 1) * k + 1 if count else 0)
            strides.append(k)
        else:
            start.append(0); limit.append(n); strides.append(1)
        dim += 1
    y = em.emit("reverse", x, dims=tuple(reverse), weak=x.weak) if reverse else x
    return em.emit("slice", y, start=tuple(start), limit=tuple(limit), strides=tuple(strides), weak=x.weak)


def _advanced(em, x: Traced, items: list[Item]) -> Traced:
    """Integer-array indexing: NumPy's rules for where the indexed axes go, via one row gather."""
    if any(it.kind == "new" for it in items):
        raise NotSupportedError("mixing None/np.newaxis with array indices is not supported")
    adv = [d for d, it in enumerate(items) if it.kind in ("array", "int", "dyn")]
    # basic indexing on the other axes first, keeping the indexed axes whole
    keep = [Item("slice", (0, x.shape[d], 1, x.shape[d])) if d in adv else it for d, it in enumerate(items)]
    y = _basic(em, x, keep)
    rest = [d for d in range(x.ndim) if d not in adv]
    perm = adv + rest
    if perm != list(range(x.ndim)):
        y = em.emit("transpose", y, perm=tuple(perm), weak=x.weak)
    lead = [x.shape[d] for d in adv]
    flat = y
    if len(adv) != 1:
        flat = em.emit("reshape", y, shape=(int(np.prod(lead)),) + y.shape[len(adv):], weak=x.weak)
    indices = []
    for d in adv:
        it, n = items[d], x.shape[d]
        if it.kind == "int":
            indices.append(np.int64(it.value))
        elif isinstance(it.value, np.ndarray):
            indices.append(it.value)
        else:
            indices.append(index_i64(em, it.value, n, "an index array entry", d))
    shapes = [np.shape(i) if not isinstance(i, Traced) else i.shape for i in indices]
    try:
        bshape = dims.broadcast_shapes(*shapes)
    except ValueError:
        raise ShapeError("shape mismatch: indexing arrays could not be broadcast together with shapes "
                         + " ".join(str(s) for s in shapes)) from None
    linear = None
    for i, n in zip(indices, lead):
        i = em.broadcast(em.asarray(i, np.int64), bshape)
        linear = i if linear is None else em.emit("add", em.emit("mul", linear, em.full(n, np.int64, bshape)), i)
    out = em.emit("take", flat, linear, weak=x.weak)
    # NumPy: adjacent indexed axes stay in place; separated ones go first
    if adv == list(range(adv[0], adv[0] + len(adv))) and adv[0] > 0:
        k, before = len(bshape), adv[0]
        order = list(range(k, k + before)) + list(range(k)) + list(range(k + before, out.ndim))
        out = em.emit("transpose", out, perm=tuple(order), weak=x.weak)
    return out


# ---------------------------------------------------------------- writing

def is_mask(index) -> bool:
    mask = index[0] if isinstance(index, tuple) and len(index) == 1 else index
    return isinstance(mask, Traced) and is_bool(mask.dtype) and mask.ndim > 0


def setitem(em: Emitter, x: Traced, index, value, what: str) -> Traced:
    """The new value of the whole array x after `x[index] = value`."""
    try:
        return _setitem(em, x, index, value, what)
    except ShapeError as e:     # out of bounds where this code runs, if it runs: an error then
        if not reached_only_at_run_time(em, e) or not isinstance(x, Traced):
            raise
        raise_where_run(em, e)
        return Traced(x.value, x.weak, x.params)


def _setitem(em: Emitter, x: Traced, index, value, what: str) -> Traced:
    if is_mask(index):
        mask = index[0] if isinstance(index, tuple) else index
        return _set_mask(em, x, mask, value, what)
    among = _mask_among(x, index)
    if among is not None:
        return _write_mask_axis(em, x, *among, value, what)
    looped = element_store(em, x, index, value, what)   # x[a::s] = v, s a run-time step: a loop over its elements
    if looped is not None:
        return looped
    stepped = run_time_step_mask(em, x, index)
    if stepped is not None:
        return _set_mask(em, x, stepped, value, what)
    items = parse(em, x, index, run_time_length=True)
    if any(it.kind == "mslice" for it in items):
        return _write_run_time_length(em, x, items, value, what)
    if isinstance(value, masked.Masked):
        masked.need(value, f"{what} into a slice of fixed length")
    if any(it.kind == "array" for it in items):
        if any(it.kind == "array" and isinstance(it.value, Traced) for it in items):
            return _set_run_time_positions(em, x, items, value, what)
        return _set_positions(em, x, items, value, what)
    v = values_for(em, value, x.dtype, _result_shape(x, items), what, scalar=True)
    return _set_region(em, x, items, v)


def _set_run_time_positions(em, x: Traced, items: list[Item], value, what, keep: Traced | None = None) -> Traced:
    """x[i, j, ...] = v with integer index arrays known only at run time on the leading axes (the
    rest whole): where several entries name one position, the last one's value is written, as
    NumPy does (so `x[idx] += v` adds once per distinct position): each position takes the largest
    entry number naming it (a scatter with max), then that entry's value. `keep` (bool, one per
    entry): only those entries write (the index arrays are selections: masked.scatter)."""
    whole = lambda it, axis: it.kind == "slice" and it.value == (0, x.shape[axis], 1, x.shape[axis])  # noqa: E731
    p = 0
    while p < len(items) and whole(items[p], p):
        p += 1
    if 0 < p < len(items) and items[p].kind in ("array", "int", "dyn"):
        return _set_inner_positions(em, x, items, p, value, what, keep)
    k = 0
    while k < len(items) and items[k].kind in ("array", "int", "dyn"):
        k += 1
    rest = items[k:]
    if rest and any(not whole(it, k + i) for i, it in enumerate(rest)) and all(
            it.kind == "slice" and all(isinstance(v, int) for v in it.value) and it.value[2] > 0 for it in rest):
        return _set_positions_in_slices(em, x, items, k, value, what, keep)
    if any(not whole(it, k + i) for i, it in enumerate(rest)):
        raise NotSupportedError(f"{what}: writing through run-time index arrays is supported on the leading axes, "
                                "the other axes whole", hint="use a boolean mask (x[mask] = v) or np.where")
    lead, tail = x.shape[:k], x.shape[k:]
    parts = []
    for axis, it in enumerate(items[:k]):
        if it.kind == "int":
            parts.append(em.constant(np.int64(it.value)))
        elif isinstance(it.value, np.ndarray):
            parts.append(em.constant(it.value))
        else:
            parts.append(index_i64(em, it.value, lead[axis], "an index", axis))
    try:
        shape = dims.broadcast_shapes(*[p.shape for p in parts])
    except ValueError as e:
        raise ShapeError(f"IndexError: shape mismatch: indexing arrays could not be broadcast together ({e})") from None
    m, n = int(np.prod(shape, dtype=np.int64)), int(np.prod(lead, dtype=np.int64))
    linear = None
    for axis, p in enumerate(parts):
        stride = int(np.prod(lead[axis + 1:], dtype=np.int64))
        term = em.emit("reshape", em.broadcast(p, shape), shape=(m,))
        if stride != 1:
            term = em.emit("mul", term, em.full(stride, np.int64, (m,)))
        linear = term if linear is None else em.emit("add", linear, term)
    v = em.emit("reshape", values_for(em, value, x.dtype, shape + tail, what), shape=(m,) + tail)
    flat = em.emit("reshape", x, shape=(n,) + tail)
    if not m:
        return Traced(x.value, x.weak, x.params)
    if em.element_loops:
        new = written_in_order(em, flat, linear, v, keep)
        return em.emit("reshape", new, shape=x.shape, sources=(x,), weak=x.weak)
    order = em.emit("iota", shape=(m,), dim=0, dtype=np.dtype(np.int64))
    if keep is not None:   # an entry not kept writes -1 at position 0: the max leaves it as it was
        order = em.emit("select", keep, order, em.full(-1, np.int64, (m,)))
        linear = em.emit("select", keep, linear, em.full(0, np.int64, (m,)))
    last = em.emit("scatter_max", em.full(-1, np.int64, (n,)), linear, order)
    written = em.emit("compare", last, em.full(0, np.int64, (n,)), direction="GE")
    source = em.emit("take", v, em.emit("max", last, em.full(0, np.int64, (n,))))
    if tail:
        written = em.emit("broadcast_in_dim", written, shape=(n,) + tail, dims=(0,))
    new = em.emit("select", written, source, flat)
    return em.emit("reshape", new, shape=x.shape, sources=(x,), weak=x.weak)


def _set_positions_in_slices(em, x: Traced, items: list[Item], k: int, value, what, keep) -> Traced:
    """x[idx, 1:] = v, run-time index arrays on the k leading axes and compile-time slices of the
    others (a Givens rotation's `R[[i - 1, i], 1:] = G @ R[[i - 1, i], 1:]`): the slices' region
    of x read, written through the indices with its axes whole, and put back."""
    rest = items[k:]
    if any(it.value[3] == 0 for it in rest):
        return Traced(x.value, x.weak, x.params)
    start = (0,) * k + tuple(it.value[0] for it in rest)
    limit = x.shape[:k] + tuple(s + (n - 1) * step + 1 for s, _, step, n in (it.value for it in rest))
    region = em.emit("slice", x, start=start, limit=limit, strides=(1,) * k + tuple(it.value[2] for it in rest))
    whole = [Item("slice", (0, n, 1, n)) for n in region.shape[k:]]
    region = _set_run_time_positions(em, region, items[:k] + whole, value, what, keep)
    lead = [Item("slice", (0, n, 1, n)) for n in x.shape[:k]]
    return _set_region(em, x, lead + rest, region)


def _set_inner_positions(em, x: Traced, items: list[Item], p: int, value, what, keep) -> Traced:
    """x[:, i, j, :] = v with index arrays after p whole axes (`A[:, [i, j]] = A[:, [j, i]]`): the
    indexed axes moved to the front, written there, and moved back. NumPy's result (and so v) has
    the indices' shape where the indexed axes were, as they are adjacent."""
    q = p
    while q < len(items) and items[q].kind in ("array", "int", "dyn"):
        q += 1
    perm = tuple(range(p, q)) + tuple(range(p)) + tuple(range(q, x.ndim))
    moved = em.emit("transpose", x, perm=perm, weak=x.weak)
    front = items[p:q] + items[:p] + items[q:]
    sizes = [() if it.kind in ("int", "dyn") else tuple(it.value.shape) for it in items[p:q]]
    try:
        b = tuple(dims.broadcast_shapes(*sizes))
    except ValueError as e:
        raise ShapeError(f"IndexError: shape mismatch: indexing arrays could not be broadcast together ({e})") from None
    v = values_for(em, value, x.dtype, x.shape[:p] + b + x.shape[q:], what)
    v = em.emit("transpose", v, perm=tuple(range(p, p + len(b))) + tuple(range(p)) +
                tuple(range(p + len(b), v.ndim)))
    out = _set_run_time_positions(em, moved, front, v, what, keep)
    return em.emit("transpose", out, perm=tuple(int(i) for i in np.argsort(perm)), sources=(x,), weak=x.weak)


def set_selected_positions(em, x: Traced, index: tuple, value, what, keep: Traced) -> Traced:
    """x[a, b] = v for run-time index arrays of which only the entries where `keep` holds write."""
    items = parse(em, x, index, run_time_length=True)
    return _set_run_time_positions(em, x, items, value, what, keep)


def _set_region(em, x: Traced, items: list[Item], v: Traced) -> Traced:
    starts, sizes, plain = _region(em, x, items)
    if not plain:
        return _set_positions(em, x, items, v, "assignment")
    if 0 in sizes:
        return Traced(x.value, x.weak, x.params)
    upd = em.emit("reshape", v, shape=tuple(sizes)) if v.shape != tuple(sizes) else v
    if all(not isinstance(s, Traced) for s in starts) and tuple(sizes) == x.shape:
        return Traced(upd.value, x.weak, x.params)
    starts, upd = _compose(em, x, starts, upd)
    if _reads(em, upd.value, x.value) and getattr(_producer(em, upd.value), "name", None) != "barrier":
        upd = _behind_barrier(em, upd)
    idx = [s if isinstance(s, Traced) else em.constant(np.int64(s)) for s in starts]
    proven = _in_bounds(em, x, items) if any(isinstance(s, Traced) for s in starts) else {}
    return em.emit("dynamic_update_slice", x, upd, *idx, weak=x.weak, **proven)


def _behind_barrier(em, upd: Traced) -> Traced:
    """upd materialised behind an optimization barrier; where upd is a reshape, the barrier goes
    on what it reshapes (a barrier over `row[0]` reshaped to 1x1 for `D[0, p] = row[0]`, after
    `D[p, 0] = row[0]`, made IREE 3.13 fail: "expected rank to be smaller or equal to the other
    rank")."""
    op = _producer(em, upd.value)
    if op is not None and op.name == "reshape":
        inner = em.emit("barrier", Traced(op.operands[0], upd.weak, upd.params))
        return em.emit("reshape", inner, shape=upd.shape)
    return em.emit("barrier", upd)


def _producer(em, value):
    return em.producer(value, look_back=64)


def _compose(em, x: Traced, starts, upd: Traced):
    """A write through a view whose new value is the view with a part replaced (y = x[1:3];
    y[1:] += v) stores just that part into x: dynamic_update_slice(x, v, 1 + 1) instead of
    dynamic_update_slice(x, dynamic_update_slice(x[1:3], v, 1), 1). Less copying, and IREE 3.13
    miscompiled the nested form when a loop result also aliased x[1:3] (a silent wrong answer
    found by the statement fuzzer, seed 101 program 681). Compile-time offsets only."""
    if any(isinstance(s, Traced) for s in starts):
        return starts, upd
    inner = _producer(em, upd.value)
    if inner is None or inner.name != "dynamic_update_slice":
        return starts, upd
    region, part, *offsets = inner.operands
    read = _producer(em, region)
    if (read is None or read.name != "slice" or read.operands[0] is not x.value
            or tuple(read.attrs["start"]) != tuple(starts) or any(k != 1 for k in read.attrs["strides"])):
        return starts, upd
    offs = []
    for o in offsets:
        c = _producer(em, o)
        if c is None or c.name != "constant":
            return starts, upd
        offs.append(int(np.asarray(c.attrs["value"])))
    return [s + o for s, o in zip(starts, offs)], Traced(part, upd.weak, upd.params)


def _reads(em, value, source, look_back: int = 64) -> bool:
    """Whether `value` is computed from `source`, or from what `source` is computed from, by recent
    ops of the current block. Writing such a value into `source` (x[1:] = x[:-1], U[1:] -= U[:-1])
    is materialised first (the barrier op): IREE 3.13 otherwise copies between overlapping ranges
    of one buffer (refused at run time) or updates the buffer in place while still reading it
    (wrong values, found by the fuzzer). Shared ancestry counts too: IREE merges equal
    computations, so `u = b.T; u[1:-1] = b.T[2:] - b.T[:-2]` reads u's buffer (fuzzer, seed 303)."""
    producers = {r.id: op for op in em.b.blocks[-1].ops[-look_back:] for r in op.results}

    def ancestors(v) -> set[int]:
        todo, seen = [v], set()
        while todo:
            v = todo.pop()
            if v.id in seen:
                continue
            seen.add(v.id)
            op = producers.get(v.id)
            if op is not None and op.name != "constant":
                todo.extend(op.operands)
        return seen
    return bool(ancestors(value) & ancestors(source))


def _set_positions(em, x: Traced, items: list[Item], value, what) -> Traced:
    """x[idx] = v for any compile-time index: NumPy itself finds which element of v lands where
    (including repeated indices, where the last write wins)."""
    if any(it.kind in ("dyn", "dslice") for it in items):
        raise NotSupportedError(f"{what}: a strided or array index combined with a run-time index is not supported")
    np_index = []
    for it in items:
        if it.kind == "new":
            np_index.append(None)
        elif it.kind == "slice":
            s, e, k, _ = it.value
            np_index.append(slice(s, e if e >= 0 else None, k))
        else:
            np_index.append(it.value)
    pos = np.full(x.shape, -1, np.int64)
    shape = np.empty(x.shape, np.bool_)[tuple(np_index)].shape
    pos[tuple(np_index)] = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    if not isinstance(value, Traced) or value.shape != shape or value.dtype != x.dtype:
        value = values_for(em, value, x.dtype, shape, what)
    if shape == x.shape and x.ndim and x.type.size:
        # x[::-1] = v and the like: every element written in reverse along some axes, a reverse
        # rather than a gather
        ids = np.arange(x.type.size, dtype=np.int64).reshape(x.shape)
        flipped = tuple(d for d in range(x.ndim) if x.shape[d] > 1 and
                        np.take(pos, 0, axis=d).flat[0] > np.take(pos, -1, axis=d).flat[0])
        if flipped and np.array_equal(pos, np.flip(ids, flipped)):
            return em.wrap(em.emit("reverse", value, dims=flipped).value, x, weak=x.weak)
    flat = em.emit("reshape", value, shape=(int(np.prod(shape)),)) if value.ndim != 1 else value
    if flat.shape[0] == 0:
        return Traced(x.value, x.weak, x.params)
    placed = em.emit("take", flat, em.constant(np.maximum(pos, 0)))
    if (pos >= 0).all():   # every element written (x[::-1] = v): the old values are not read
        return em.wrap(placed.value, x, weak=x.weak)
    # the gathered values are materialised: fused into a chain of later reads of the array
    # (`b3[::2] += ...` then `b3 *= 0.5` and `A[:, -3:] += np.floor(b3[0])`, three times),
    # IREE 3.13 ran out of memory compiling a 5x6 program (24 GB: statement fuzzer seed 9101
    # program 4337)
    placed = em.emit("barrier", placed)
    return em.emit("select", em.constant(pos >= 0), placed, x, sources=(x,), weak=x.weak)


def masked_update(em, x: Traced, index, new: Traced) -> Traced:
    """x[mask] op= v, with x op v already computed for every element: keep it where mask is set."""
    mask = index[0] if isinstance(index, tuple) else index
    if mask.shape != x.shape[:mask.ndim]:
        raise ShapeError(f"IndexError: boolean index of shape {mask.shape} does not match the array's shape {x.shape}")
    m = mask if mask.ndim == x.ndim else em.emit("broadcast_in_dim", mask, shape=x.shape, dims=tuple(range(mask.ndim)))
    return em.emit("select", m, new, x, sources=(x,), weak=x.weak)


def _set_mask(em, x: Traced, mask: Traced, value, what) -> Traced:
    k = mask.ndim
    if mask.shape != x.shape[:k]:
        raise _mask_mismatch(0, x.shape[0] if x.ndim else 0, mask.shape[0])
    rest = x.shape[k:]
    if isinstance(value, masked.Masked):     # y[m] = f(x[m]): the same selection
        flat = mask if k == 1 else em.emit("reshape", mask, shape=(mask.type.size,))
        same = value.key == ("flags", mask_key(em, mask), mask.shape) or \
            (value.where[0] == "flags" and value.where[1].value is flat.value)
        if not same or value.data.shape != (mask.type.size,) + rest:
            masked.need(value, f"{what} through another mask")
        v = em.emit("reshape", em.cast(value.data, x.dtype), shape=x.shape)
        m = mask if k == x.ndim else em.emit("broadcast_in_dim", mask, shape=x.shape, dims=tuple(range(k)))
        return em.emit("select", m, v, x, sources=(x,), weak=x.weak)
    vshape = value.shape if isinstance(value, Traced) else np.shape(value)
    if len(vshape) > len(rest) and not all(d == 1 for d in vshape[:len(vshape) - len(rest)]):
        raise NotSupportedError(f"{what}: the number of values must match the number of True entries, which is "
                                "known only at run time", hint="assign a scalar, or use np.where(mask, values, x)")
    v = values_for(em, value, x.dtype, rest, what)
    v = em.broadcast(v, x.shape)
    m = mask if mask.ndim == x.ndim else em.emit(
        "broadcast_in_dim", mask, shape=x.shape, dims=tuple(range(k)))
    return em.emit("select", m, v, x, sources=(x,), weak=x.weak)


def concatenator(em, columns: bool, index):
    """np.r_[a, b, 0:3] / np.c_[a, b] with arrays known only at run time (no string directives)."""
    parts = []
    for it in (index if isinstance(index, tuple) else (index,)):
        if isinstance(it, str):
            raise NotSupportedError("np.r_/np.c_ with a string directive is not supported", hint="use np.concatenate")
        if isinstance(it, slice):
            if any(isinstance(b, Traced) for b in (it.start, it.stop, it.step)):
                raise NotSupportedError("np.r_[a:b:step] with bounds known only at run time has a length that depends "
                                        "on the data", hint="use compile-time bounds, or np.linspace with a fixed count")
            it = np.r_[it]
        part = it
        part = em.asarray(part)
        if part.ndim == 0:
            part = FUNCTIONS["numpy.reshape"](em, part, (1,))
        if columns and part.ndim == 1:
            part = FUNCTIONS["numpy.reshape"](em, part, (-1, 1))
        parts.append(part)
    return FUNCTIONS["numpy.concatenate"](em, parts, axis=-1 if columns else 0)
