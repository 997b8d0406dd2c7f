"""masked: arrays whose length along one axis is known only at run time: `A[i, :j]`, `x[lo:hi]`,
`data[:, i + 1:m]` with run-time bounds, as loops over shrinking or growing slices (Cholesky, LU,
triangular solves, correlation matrices) write them.

The program holds such an array at its base's positions: `data` is the view with the whole axis
(a static capacity), and only positions lo <= k < hi along `axis` belong to the array. Elementwise
operations, reductions, dot products and writes into a region with the same bounds work on the
capacity with a mask, so the loop around them compiles to one run-time loop instead of being
unrolled. Two masked arrays combine only where their bounds are the same expressions (`A[i, :j]`
and `A[j, :j]`); everything else (an unknown function, indexing it, returning it, bounds that
differ) asks for the bounds at compile time, which unrolls the enclosing loop exactly as before:
deny by default, never a silently wrong shape."""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..ir import dims
from ..ir.types import is_bool, is_float, is_int
from .index_checks import index_i64
from .values import NeedStatic, Traced, join_params, items_of


class Masked:
    """data: the base's view over the whole axis; axis: which axis has run-time bounds; where:
    which positions along it belong to the array, ("bounds", lo, hi) with int64 Traced bounds
    already clipped to [0, capacity], or ("flags", f) with a bool Traced f along the axis (x[mask]
    holds x flattened, and the mask); key: what makes two `where`s equal (capacity and each
    bound's expression, or the mask's identity); params: the scalar arguments/loop markers the
    bounds come from (None where they depend on array data)."""
    __slots__ = ("_data", "axis", "where", "key", "params", "positions", "own")
    list_items = False   # the items of a Python list (appends.AppendedItems): returned as a list

    def __init__(self, data, axis, where, key, params, positions=False, own=False):
        self._data, self.axis, self.where, self.key, self.params = data, axis, where, key, params
        self.positions = positions   # np.nonzero(m)[0]: data is 0..n-1, so x[it] is x[m]
        self.own = own               # data is an array of its own (a copy): writes into it stay there

    @property
    def data(self) -> Traced:
        if self._data is None:
            need(self, "using it after the loop or if that made it")
        return self._data

    def poisoned(self, extra=frozenset()) -> "Masked":
        """A stand-in after the region that made it: any use asks for the bounds at compile time."""
        # a selection by data (params None) still asks for the region's own markers: the loop
        # that carries it is unrolled (np.i0's Chebyshev loop over x[x <= 8.0])
        if extra is None:   # (from a condition on array data: no compile-time value decides it)
            return Masked(None, self.axis, self.where, None, None)
        params = self.params | extra if self.params is not None else (frozenset(extra) if extra else None)
        return Masked(None, self.axis, self.where, None, params)

    def __getattr__(self, name):
        need(self, f"its attribute {name}")

    def __bool__(self):
        need(self, "its truth value")

    def __len__(self):
        need(self, "its length as a Python number")

    def __iter__(self):
        need(self, "iterating over it")

    def __index__(self):
        need(self, "using it as an index")

    def __float__(self):
        need(self, "converting it to a number")

    __int__ = __complex__ = __float__

    def __array__(self, *args, **kwargs):
        need(self, "converting it to a NumPy array")

    def __eq__(self, other):
        need(self, "comparing it")

    __hash__ = object.__hash__

    def __repr__(self):
        return f"Masked({self._data!r}, axis={self.axis})"


def need(m: Masked, what: str):
    """Ask for the bounds at compile time (the enclosing loop is unrolled); an error where they
    depend on array values."""
    kind = getattr(type(m), "what", None) or ("slice's length depends on values known only at run time" if m.where[0] in (
        "bounds", "grid") else "selection's length (x[mask]) depends on the data")
    hint = getattr(type(m), "hint", None) or "compute with it elementwise, reduce it (sum, dot, max, ...) or write it into " + (
        "a slice with the same bounds; or make the bounds compile-time values" if m.where[0] in ("bounds", "grid") else
        "y[mask]; it can be returned from the top level of the function, outside loops and branches")
    reason = ShapeError(f"this {kind}, and {what} needs it at compile time", hint=hint)
    # (the bounds' own arguments: m.params is None once its data met an array argument's values,
    # `X[:, None] - X[:k][None]`, and the bounds are still the argument k's)
    params = m.params or _join(*[v for v in m.where[1:] if isinstance(v, Traced)])
    if params:
        raise NeedStatic(params, reason=reason)
    raise reason


def contains(*values) -> bool:
    return any(True for v in values for _ in items_of(v, Masked))


def first(*values) -> Masked:
    return next(m for v in values for m in items_of(v, Masked))


# ---------------------------------------------------------------- making one

def bounds(em, start, stop, n: int):
    """(lo, hi, key, params) of x[start:stop] along an axis of length n: NumPy's clipping of
    negative and out-of-range bounds, at run time where a bound is a run-time value."""
    parts, key = [], [n]
    for v, default in ((start, 0), (stop, n)):
        if not isinstance(v, Traced):
            iv = v if v is None or isinstance(v, dims.Dim) else int(v)
            c = default if v is None else min(max(iv + n if iv < 0 else iv, 0), n)
            parts.append(_int64(em, c))
            key.append(("c", c))
            continue
        base, offset = em.offset_of(v)
        key.append(("t", base_structure(em, base), offset))
        t = em.cast(em.asarray(v), np.int64)
        zero, size = em.constant(np.int64(0)), _int64(em, n)
        t = em.emit("select", em.emit("compare", t, zero, direction="LT"), em.emit("add", t, size), t)
        t = em.emit("max", em.emit("min", t, size), zero)
        parts.append(t)
    return parts[0], parts[1], tuple(key), join_params([v for v in (start, stop) if isinstance(v, Traced)])


def base_structure(em, base):
    """_structure of an offset's base (values.Emitter.offset_of): a value, or ("scaled", value, k)."""
    if isinstance(base, tuple):
        return ("scaled", _structure(em, base[1]), base[2])
    return _structure(em, base)


def _structure(em, value_id: int, depth: int = 8):
    """A key for the IR value `value_id` equal for equal computations: the op, its attributes and
    its operands' keys (leaves: block parameters, and values beyond `depth`). IR ops are pure and
    an update makes a new value, so `indices[indptr[i]:indptr[i + 1]]` and `data[indptr[i]:indptr[i
    + 1]]`, each reading indptr again, have one key: the same bounds."""
    producers = {}
    for block in em.b.blocks:
        for op in block.ops:        # all of them: a key must not depend on how many ops came after
            for r in op.results:
                producers[r.id] = op

    def key(vid, d):
        op = producers.get(vid)
        if op is None or not d or op.regions or len(op.results) != 1:
            return ("v", vid)
        attrs = tuple(sorted((k, np.asarray(v).tobytes() + str(np.asarray(v).dtype).encode() if isinstance(v, np.ndarray)
                              else repr(v)) for k, v in op.attrs.items()))
        return (op.name, attrs, tuple(key(o.id, d - 1) for o in op.operands))
    return key(value_id, depth)


def mask(em, where, shape, axis) -> Traced:
    """Which elements of an array of `shape` belong to the masked array (bool): positions
    lo <= k < hi along `axis`, or the flags along it."""
    shape = tuple(shape)
    if where[0] == "grid":
        return GRIDS["mask"](em, where[1], shape)
    if where[0] == "flags":
        return em.emit("broadcast_in_dim", where[1], shape=shape, dims=(axis,))
    idx = em.emit("iota", shape=shape, dim=axis, dtype=np.dtype(np.int64))
    lo, hi = em.broadcast(where[1], shape), em.broadcast(where[2], shape)
    return em.emit("and", em.emit("compare", idx, lo, direction="GE"), em.emit("compare", idx, hi, direction="LT"))


def filled(em, m: Masked, value) -> Traced:
    """m's data with `value` outside the bounds."""
    data = m.data
    fill = em.full(value, data.dtype, data.shape)
    return em.emit("select", mask(em, m.where, data.shape, m.axis), data, fill)


def length(em, m: Masked) -> Traced:
    if m.where[0] == "grid":
        need(m, "one length of an array masked along two axes")
    if m.where[0] == "flags":
        return em.emit("reduce", em.cast(m.where[1], np.int64), kind="add", axes=(0,))
    return em.emit("max", em.emit("sub", m.where[2], m.where[1]), em.constant(np.int64(0)))


def _count(m: Masked, n: Traced) -> Traced:
    """A run-time length as NumPy gives it in a shape: a Python int (weak). A selection's length
    remembers the selection: `np.zeros(len(idx))` is an array of that length (sized_like)."""
    t = Traced(n.value, int, m.params)
    if m.where[0] == "flags" and m.axis == 0:
        t.length_of = m
    return t


def sized_like(em, m: Masked, fill, dtype, rest=()) -> Masked:
    """np.zeros/ones/empty(len(sel)), np.zeros((len(sel), 3)): an array of the selection's run-time
    length (by `rest`), held as the selection is (at its positions, with its flags), so `y[idx] =
    np.zeros(len(idx))` writes it."""
    data = em.full(fill, dtype, (m.where[1].shape[0],) + tuple(rest))
    return Masked(Traced(data.value, None, frozenset()), 0, m.where, m.key, None)


def shape(em, m: Masked) -> tuple:
    """m.shape: the masked axis's length is a run-time int."""
    if m.where[0] == "grid":
        return GRIDS["shape"](em, m)
    n = _count(m, length(em, m))
    return tuple(n if i == m.axis else d for i, d in enumerate(m.data.shape))


def size(em, m: Masked) -> Traced:
    if m.where[0] == "grid":
        need(m, "its size")
    n = length(em, m)
    rest = dims.product(d for i, d in enumerate(m.data.shape) if i != m.axis)
    return _count(m, em.emit("mul", n, _int64(em, rest)) if not rest == 1 else n)


def _int64(em, n) -> Traced:
    """An int64 scalar holding n (a compile-time int or a symbolic dimension)."""
    return em.cast(em.dim_value(n), np.int64) if isinstance(n, dims.Dim) else em.constant(np.int64(n))


def fixed_along(shape, from_end: int) -> bool:
    """Whether an array of `shape`, broadcast against a masked array whose masked axis is
    `from_end` from the end, has a fixed length there (NumPy would need the run-time length)."""
    return len(shape) >= from_end and shape[len(shape) - from_end] != 1


def _join(*values):
    out = frozenset()
    for v in values:
        p = v.params if isinstance(v, (Masked, Traced)) else frozenset()
        if p is None:
            return None
        out |= p
    return out


def aligned(a: Masked, b: Masked) -> bool:
    """Whether two masked arrays hold the same positions (bounds made by the same expressions)."""
    return a.key == b.key


# ---------------------------------------------------------------- slices of other bounds

def _capacity(m: Masked, shown: str) -> int:
    n = m.data.shape[m.axis]
    if m.where[0] != "bounds" or not isinstance(n, int):
        need(m, f"{shown} with a slice of other bounds")
    return n


def relocated(em, m: Masked, lo, capacity: int, n=None) -> Traced:
    """m's data with its element lo_m + t along its axis moved to lo + t, on an axis of
    `capacity`; where m holds one element and `n` (the length it meets) is not 1, that element
    broadcast along the whole axis, as NumPy broadcasts an axis of length 1."""
    data, axis = m.data, m.axis
    zero = em.constant(np.int64(0))
    pads = tuple(capacity if i == axis else 0 for i in range(data.ndim))
    padded = em.emit("pad", data, em.constant(np.zeros((), data.dtype)), low=pads, high=pads,
                     interior=(0,) * data.ndim)
    start = em.emit("add", em.emit("sub", m.where[1], lo), em.constant(np.int64(capacity)))
    shape = tuple(capacity if i == axis else d for i, d in enumerate(data.shape))
    moved = em.emit("dynamic_slice", padded, *[start if i == axis else zero for i in range(data.ndim)], sizes=shape)
    if n is None or data.shape[axis] == 0:   # (an empty axis has no element to broadcast)
        return moved
    first = em.emit("dynamic_slice", data, *[m.where[1] if i == axis else zero for i in range(data.ndim)],
                    sizes=tuple(1 if i == axis else d for i, d in enumerate(data.shape)))
    spread = em.emit("broadcast_in_dim", first, shape=shape, dims=tuple(range(data.ndim)))
    one = em.constant(np.int64(1))
    single = em.emit("and", em.emit("compare", length(em, m), one, direction="EQ"),
                     em.emit("compare", n, one, direction="NE"))
    return em.emit("select", em.broadcast(single, shape), spread, moved)


def _mismatch(em, k, n):
    """Whether a run-time length k neither equals n nor broadcasts (is 1): NumPy's ValueError."""
    return em.emit("and", em.emit("compare", k, n, direction="NE"),
                   em.emit("compare", k, em.constant(np.int64(1)), direction="NE"))


def moved_into(em, m: Masked, bounds, capacity, shown: str) -> Masked:
    """A run-time slice written into a slice of other bounds (lo, hi) on an axis of `capacity`
    (`y[1:k + 1] = x[:k]`): its elements moved there; NumPy's ValueError when the lengths differ
    and m's is not 1 (broadcast)."""
    _capacity(m, shown)
    if not isinstance(capacity, int):
        need(m, f"{shown} into a slice of other bounds")
    lo, hi = bounds
    n = em.emit("max", em.emit("sub", hi, lo), em.constant(np.int64(0)))
    em.check(_mismatch(em, length(em, m), n), f"ValueError: could not broadcast a slice into a slice of another length ({shown})")
    return Masked(relocated(em, m, lo, capacity, n), m.axis, ("bounds", lo, hi), None, m.params)


def _common_bounds(em, shown, args) -> list:
    """Elementwise operands that are slices of other bounds (`x[1:k + 1] - x[:k]`,
    `x[:n - k] * x[k:]`) moved to positions 0..L-1 of one axis, L their common run-time length
    (a slice of length 1 broadcast, as NumPy does; other lengths that differ raise NumPy's
    ValueError when the function runs)."""
    ms = [a for a in args if isinstance(a, Masked)]
    capacity = max(_capacity(m, shown) for m in ms)
    one = em.constant(np.int64(1))
    n = length(em, ms[0])
    for m in ms[1:]:
        n = em.emit("select", em.emit("compare", n, one, direction="EQ"), length(em, m), n)
    bad = None
    for m in ms:
        differs = _mismatch(em, length(em, m), n)
        bad = differs if bad is None else em.emit("or", bad, differs)
    em.check(bad, f"ValueError: operands could not be broadcast together ({shown} of slices of different lengths)")
    zero = em.constant(np.int64(0))
    key = ("common bounds", capacity, tuple(m.key for m in ms))
    where = ("bounds", zero, n)
    return [Masked(relocated(em, a, zero, capacity, n), a.axis, where, key, a.params) if isinstance(a, Masked) else a
            for a in args]


def never_wins(dt, largest: bool):
    """A fill for the left-out positions that a max (`largest`) or a min never picks over a
    selected value (None for dtypes without one: complex)."""
    if is_float(dt):
        return -np.inf if largest else np.inf
    if is_bool(dt):
        return not largest
    if is_int(dt):
        return np.iinfo(dt).min if largest else np.iinfo(dt).max
    return None


def reduced_axes(em, axis, ndim: int) -> tuple:
    """The axes a reduction's `axis` argument names (None: all), as non-negative ints."""
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in ((axis,) if isinstance(axis, (int, np.integer)) else em.static(axis, "axis")))


def sorts_last(dt):
    """A fill for left-out entries that sorts after every selected one (NaN for floats: NumPy sorts
    NaNs last, and a selected NaN ties with it)."""
    return np.nan if is_float(dt) else (True if is_bool(dt) else np.iinfo(dt).max)


def flip(em, impl, m: Masked, axis):
    """np.flip of a run-time slice (`np.flip(r[:k])`): the positions lo..hi-1 keep their bounds and
    take the elements hi-1..lo. The whole axis reversed holds them at n-hi..n-lo-1, whence they
    are relocated to lo."""
    data = m.data
    axes = tuple(range(data.ndim)) if axis is None else \
        tuple(a % data.ndim for a in ((axis,) if isinstance(axis, int) else axis))
    rev = impl(em, data, axes)
    if m.axis not in axes:
        return Masked(rev, m.axis, m.where, m.key, m.params)
    n = em.constant(np.int64(data.shape[m.axis]))
    _, lo, hi = m.where
    reversed_ = Masked(rev, m.axis, ("bounds", em.emit("sub", n, hi), em.emit("sub", n, lo)), None, m.params)
    return Masked(relocated(em, reversed_, lo, data.shape[m.axis]), m.axis, m.where, m.key, m.params)


def strided(em, m: Masked, step: int) -> Masked:
    """m[::step] (step > 1) of a run-time slice (`x[k::3]`; `x[i::-2]`, every second element of
    x[i::-1]): element t is m's element lo + step * t, gathered to position t of an axis of
    ceil(n / step) positions; its bounds are 0..ceil((hi - lo) / step)."""
    from .registry import FUNCTIONS
    data, axis = m.data, m.axis
    n = data.shape[axis]
    _, lo, hi = m.where
    capacity = -(-n // step)
    at = em.emit("add", em.emit("mul", em.emit("iota", shape=(capacity,), dim=0, dtype=np.dtype(np.int64)),
                                em.full(step, np.int64, (capacity,))), em.broadcast(lo, (capacity,)))
    at = em.emit("min", at, em.full(max(n - 1, 0), np.int64, (capacity,)))
    out = FUNCTIONS["numpy.take"](em, data, Traced(at.value, None, m.params), axis=axis)
    count = em.emit("div", em.emit("add", em.emit("sub", hi, lo), em.constant(np.int64(step - 1))),
                    em.constant(np.int64(step)))
    key = ("strided", m.key, step) if m.key is not None else None
    return Masked(Traced(out.value, data.weak, m.params), axis, ("bounds", em.constant(np.int64(0)), count), key,
                  m.params)


def subscript(em, m: Masked, index):
    """m[::-1], m[:, ::-1], m[::-1, :]: np.flip along the reversed axes (`r[:k][::-1] @ y[:k]`,
    a Levinson-Durbin step); any other index asks for the bounds at compile time."""
    items = index if isinstance(index, tuple) else (index,)
    if _selection_1d(m) and len(items) == 1 and isinstance(items[0], slice):
        return RESHAPED["sliced"](em, m, items[0])
    if _selection_1d(m) and not m.list_items and len(items) == 1 and _selection_1d(items[0]) and items[0].key == m.key \
            and is_bool(items[0].data.dtype):
        # a selection of a selection by booleans computed from it (`order = order[1:][ious <= thr]`,
        # non-maximum suppression): the entries selected by both
        flags = em.emit("and", m.where[1], items[0].data)
        return Masked(m.data, 0, ("flags", flags), ("flags", _structure(em, flags.value.id), flags.shape),
                      _join(m, items[0]))
    if _row_index(m, items):   # x[0] of x = R[k:, k]; h[i], h[i, 0] of h = out[:k]
        return _row(em, m, items)
    if _along_others(m, items):   # bs[:, 0] of bs = boxes[order[1:]]
        return _taken_along_others(em, m, items)
    expanded = _new_axes(em, m, items)
    if expanded is not None:
        return expanded
    if _static_slice_along(m, items):
        return _narrowed(em, m, items[m.axis])
    if m.where[0] != "bounds" or len(items) > m.data.ndim or not all(
            isinstance(it, slice) and it.start is None and it.stop is None and it.step in (None, -1)
            and not isinstance(it.step, bool) for it in items):
        need(m, "indexing it")
    axes = tuple(i for i, it in enumerate(items) if it.step == -1)
    if not axes:
        need(m, "indexing it")
    from .registry import FUNCTIONS
    return flip(em, FUNCTIONS["numpy.flip"], m, axes)


def _static_slice_along(m: Masked, items) -> bool:
    """Whether `items` slices m along its run-time axis by compile-time bounds, step 1, and takes
    every other axis whole (`V[:-1]`, `V[1:]`, `x[2:-2]`)."""
    def whole(it):
        return isinstance(it, slice) and it.start is None and it.stop is None and it.step is None
    if m.where[0] != "bounds" or len(items) <= m.axis or len(items) > m.data.ndim:
        return False
    it = items[m.axis]
    static = isinstance(it, slice) and all(v is None or _static_integer(v) for v in (it.start, it.stop))
    return static and it.step in (None, 1) and not isinstance(it.step, bool) and \
        all(whole(x) for i, x in enumerate(items) if i != m.axis)


def _narrowed(em, m: Masked, it: slice) -> Masked:
    """m[a:b] along its run-time axis with compile-time a and b: the bounds narrowed at run time
    (NumPy's clipping against the run-time length); the positions stay the base's."""
    lo, n = m.where[1], length(em, m)
    zero = em.constant(np.int64(0))

    def offset(v, default):
        if v is None:
            return default
        c = em.constant(np.int64(v))
        t = em.emit("add", n, c) if v < 0 else c
        return em.emit("min", em.emit("max", t, zero), n)
    start = offset(it.start, zero)
    stop = em.emit("max", offset(it.stop, n), start)
    key = ("narrowed", object() if m.key is None else m.key, it.start, it.stop)   # (None would match any)
    first = lo if it.start in (None, 0) else em.emit("add", lo, start)
    return Masked(m.data, m.axis, ("bounds", first, em.emit("add", lo, stop)), key, m.params)


def _new_axes(em, m: Masked, items) -> Masked | None:
    """m[:, None], m[..., None], m[None] (`(c / r2)[:, None] * d`, a pairwise force; probe AH):
    the data with axes of length 1 inserted, the run-time bounds or flags on the same axis (a
    selection's stays the first). None for any other index."""
    if m._data is None or sum(it is Ellipsis for it in items) > 1 or not any(it is None for it in items):
        return None
    if any(not (it is None or it is Ellipsis or isinstance(it, slice) and it == slice(None)) for it in items):
        return None
    full = sum(1 for it in items if isinstance(it, slice))
    if full > m.data.ndim:
        return None
    at = next((k for k, it in enumerate(items) if it is Ellipsis), len(items))
    items = [*items[:at], *[slice(None)] * (m.data.ndim - full), *items[at + 1:]]
    shape, axis, old = [], None, 0
    for it in items:
        if it is None:
            shape.append(1)
            continue
        if old == m.axis:
            axis = len(shape)
        shape.append(m.data.shape[old])
        old += 1
    if m.where[0] != "bounds" and axis != m.axis:
        return None
    data = em.emit("reshape", m.data, shape=tuple(shape), weak=m.data.weak)
    return Masked(data, axis, m.where, m.key, m.params, own=m.own)


def element_index(m: Masked, index, writing: bool = False) -> bool:
    """Whether `index` picks one element of the 1-D run-time slice m (an int, or a run-time one);
    for a write, of one whose data is its base seen through a view (the write reaches the base) or
    a copy of its own (not a reversed slice's computed elements: NumPy would write its base)."""
    if writing and not (m._data is not None and (m.own or m.data.view is not None)):
        return False
    return m.where[0] == "bounds" and m._data is not None and m.data.ndim == 1 and _integer(index)


def _integer(index) -> bool:
    """Whether `index` is one integer: a compile-time one, or a run-time 0-d integer value."""
    return _static_integer(index) or isinstance(index, Traced) and index.ndim == 0 and (
        index.weak is int or is_int(index.dtype))


def _static_integer(index) -> bool:
    return isinstance(index, (int, np.integer)) and not isinstance(index, (bool, np.bool_))


def _static_position(it, n: int, axis: int) -> int:
    """A compile-time index on an axis of length n, as a position (NumPy's negative indices and
    IndexError)."""
    if not -n <= int(it) < n:
        raise ShapeError(f"IndexError: index {int(it)} is out of bounds for axis {axis} with size {n}")
    return int(it) % n


def _row_index(m: Masked, items) -> bool:
    """Whether `items` pick an element of a 1-D array of run-time bounds, or a row (and maybe
    elements of it) of one of more axes whose first has run-time bounds: integers (compile-time or
    run-time) only."""
    return m.where[0] == "bounds" and m._data is not None and m.axis == 0 and (
        m.data.ndim == 1 or isinstance(m.data.shape[0], int)) and 1 <= len(items) <= m.data.ndim \
        and all(_integer(it) for it in items)


def _along_others(m: Masked, items) -> bool:
    """Whether `items` take the whole run-time axis (the first) of m and index its other axes by
    compile-time integers and slices of positive step only."""
    def static(it):
        if isinstance(it, slice):
            return all(v is None or _static_integer(v) for v in (it.start, it.stop, it.step)) and (it.step is None or it.step > 0)
        return _static_integer(it)
    return m.axis == 0 and m._data is not None and not m.list_items and m.where[0] in ("flags", "bounds") \
        and 2 <= len(items) <= m.data.ndim \
        and items[0] == slice(None) and all(static(it) for it in items[1:]) \
        and all(isinstance(d, int) for d in m.data.shape[1:len(items)])


def _taken_along_others(em, m: Masked, items) -> Masked:
    """m[:, k], m[:, a:b]: the data indexed so, the first axis and which positions belong kept."""
    data = m.data
    start, limit, strides, drop = [0], [data.shape[0]], [1], []
    for axis, it in enumerate(items[1:], 1):
        n = data.shape[axis]
        if isinstance(it, slice):
            a, b, step = it.indices(n)
            start.append(a), limit.append(max(a, b)), strides.append(step)
            continue
        k = _static_position(it, n, axis)
        start.append(k), limit.append(k + 1), strides.append(1), drop.append(axis)
    rest = data.ndim - len(items)
    start, limit, strides = start + [0] * rest, limit + list(data.shape[len(items):]), strides + [1] * rest
    part = em.emit("slice", data, start=tuple(start), limit=tuple(limit), strides=tuple(strides))
    shape = tuple(d for i, d in enumerate(part.shape) if i not in drop)
    part = em.emit("reshape", part, shape=shape, weak=data.weak) if drop else part
    return Masked(Traced(part.value, data.weak, part.params), 0, m.where, m.key, m.params)   # (the same positions)


def _row(em, m: Masked, items):
    """m[i, ...] for _row_index: the element or row at the slice's position i (NumPy's negative
    indices, IndexError outside the slice), and in it the elements the other integers pick (the
    same)."""
    data = m.data
    starts = [element_position(em, m, items[0])]
    for axis, it in enumerate(items[1:], 1):
        n = data.shape[axis]
        if isinstance(it, Traced):
            starts.append(index_i64(em, it, n, "index", axis))
            continue
        starts.append(em.constant(np.int64(_static_position(it, n, axis))))
    starts += [em.constant(np.int64(0))] * (data.ndim - len(items))
    kept = tuple(data.shape[len(items):])
    part = em.emit("dynamic_slice", data, *starts, sizes=(1,) * len(items) + kept)
    return em.emit("reshape", part, shape=kept, weak=data.weak)


def element_position(em, m: Masked, index) -> Traced:
    """The position in m's data of m[index] (NumPy's negative indices; IndexError outside)."""
    i = em.asarray(index) if isinstance(index, Traced) else em.constant(np.int64(int(index)))
    i = checked_ranks(em, i, length(em, m), "IndexError: index out of bounds for a slice of the length it has here")
    zero = em.constant(np.int64(0))
    at = em.emit("add", m.where[1], i)
    return em.emit("min", em.emit("max", at, zero), em.constant(np.int64(max(m.data.shape[0] - 1, 0))))


def gather(em, x: Traced, m: Masked):
    """x[idx] for a masked integer index array (`x[indices[lo:hi]]`, CSR rows): the gather at the
    selected positions (the others read position 0), masked as idx is. NumPy's bounds checks apply
    to the selected positions only."""
    from .registry import FUNCTIONS
    if m.data.ndim != 1 or m.axis != 0 or np.dtype(m.data.dtype).kind not in "iu" or x.ndim == 0:
        need(m, "indexing with it")
    inside = mask(em, m.where, m.data.shape, 0)
    safe = em.emit("select", inside, em.cast(m.data, np.int64), em.full(0, np.int64, m.data.shape))
    out = FUNCTIONS["numpy.take"](em, x, Traced(safe.value, None, m.params), axis=0)
    return Masked(Traced(out.value, None, _join(x, m)), 0, m.where, m.key, m.params)   # (idx's bounds)


# ---------------------------------------------------------------- returning a selection

def checked_ranks(em, index: Traced, count: Traced, message: str) -> Traced:
    """Integer positions counted in a selection of run-time length `count`, negative ones from its
    end (int64), and a run-time IndexError (`message`) where one is outside it."""
    i = em.cast(index, np.int64)
    size = em.broadcast(count, i.shape)
    wrapped = em.emit("select", em.emit("compare", i, em.full(0, np.int64, i.shape), direction="LT"),
                      em.emit("add", i, size), i)
    bad = em.emit("or", em.emit("compare", wrapped, em.full(0, np.int64, i.shape), direction="LT"),
                  em.emit("compare", wrapped, size, direction="GE"))
    if bad.ndim:
        bad = em.emit("reduce", bad, kind="or", axes=tuple(range(bad.ndim)))
    em.check(bad, message)
    return wrapped


def _positions_of(em, flags: Traced, ranks: Traced) -> Traced:
    """The position of each rank-th (from 0) selected entry: the first whose inclusive count of
    selected entries is rank + 1 (a prefix sum and a binary search; n where there is none)."""
    from .registry import FUNCTIONS
    counts = FUNCTIONS["numpy.cumsum"](em, em.cast(flags, np.int64))
    wanted = em.emit("add", ranks, em.full(1, np.int64, ranks.shape))
    return FUNCTIONS["numpy.searchsorted"](em, counts, wanted, side="left")


# Rules for arrays with run-time bounds along two axes (masked_grid.py adds them: "call", "outer",
# "shape", "mask", "make", "spans_two_axes", "elementwise").
GRIDS: dict = {}


# ---------------------------------------------------------------- reshaped 1-D selections

# Rules for 1-D selections sliced, differenced, sorted and combined across masks, which compact
# them first (reshaped_selections.py adds them: "sliced", "together", "diff", "sort").
RESHAPED: dict = {}


def _selection_1d(m) -> bool:
    return isinstance(m, Masked) and m.where[0] == "flags" and m.axis == 0 and m._data is not None \
        and m.data.ndim == 1


# ---------------------------------------------------------------- np.nonzero of a 1-D run-time mask

def positions(em, flags: Traced, key) -> Masked:
    """np.nonzero(m)[0] / np.flatnonzero(m) for a 1-D run-time mask m: the positions 0..n-1 of
    which those where m holds belong. Used as an index (x[idx], y[idx] = v) it is the mask itself;
    in arithmetic, reductions and len() it is a masked array like x[m]."""
    n = flags.shape[0]
    data = em.emit("iota", shape=(n,), dim=0, dtype=np.dtype(np.int64))
    return Masked(Traced(data.value, None, frozenset()), 0, ("flags", flags), key, None, positions=True)


def as_mask(index):
    """The bool mask an index made by positions() stands for (alone or in a 1-tuple), else None."""
    if isinstance(index, tuple) and len(index) == 1:
        index = index[0]
    if isinstance(index, Masked) and index.positions:
        return index.where[1]
    return None
