"""selections: reads and writes through selections (masked.py's x[mask], carried by loops in
carried.py) as escape-time loops write them: a selection indexed by a mask computed from it
(`Z = Z[I]` after `Z = Z0[m]`), and index arrays that are selections of one mask
(`N[Xi[~I], Yi[~I]] = i`, `Z_[Xi[I], Yi[I]]`)."""
from __future__ import annotations

import numpy as np

from ..ir.types import is_bool
from .indexing import getitem, mask_key, set_selected_positions
from .compaction import compacted
from .compaction import returnable
from .masked import Masked, _join, aligned, checked_ranks, first, need
from .values import Traced


def as_flags(em, m):
    """A 1-D run-time slice (`order[i:j + 1]`) as the selection of the positions inside its bounds
    (the same key), so writes through it as an index array (`ranks[order[i:j + 1]] = r`) are
    scatters of the selected positions; anything else as it is."""
    if isinstance(m, Masked) and m.where[0] == "bounds" and m.axis == 0 and m._data is not None and m.data.ndim == 1 \
            and type(m) is Masked:
        from .masked import mask
        return Masked(m.data, 0, ("flags", mask(em, m.where, m.data.shape, 0)), m.key, m.params)
    return m


def scalars_beside_selection(em, index):
    """`A[i, indices[indptr[i]:indptr[i + 1]]] = v` (CSR to dense), `A[idx[m], j]`: a tuple index of
    integers and one selection or run-time slice of positions, as the index arrays of one
    selection (index_items): each integer repeated along it, under its flags. Any other index as
    it is."""
    if not isinstance(index, tuple) or len(index) < 2:
        return index
    chosen = [it for it in index if isinstance(it, Masked)]
    if len(chosen) != 1:
        return index
    m = as_flags(em, chosen[0])
    if m.where[0] != "flags" or m.axis != 0 or m._data is None or m.data.ndim != 1 or m.positions \
            or np.dtype(m.data.dtype).kind not in "iu":
        return index
    scalar = lambda it: (type(it) is int or isinstance(it, np.integer)
                         or isinstance(it, Traced) and it.ndim == 0 and np.dtype(it.dtype).kind in "iu" and it.weak is not bool)
    if not all(it is chosen[0] or scalar(it) for it in index):
        return index
    number = lambda it: em.cast(it, np.int64) if isinstance(it, Traced) else em.constant(np.int64(it))
    spread = lambda it: Masked(em.broadcast(number(it), m.data.shape), 0, m.where, m.key, m.params)
    return tuple(m if it is chosen[0] else spread(it) for it in index)


def masks_as_positions(em, index):
    """x[m, m] for one run-time 1-D bool mask on several axes (`K[fixed, fixed] = 1.0`, a Dirichlet
    condition's diagonal): NumPy's positions of m on each axis, pairwise, as selections of m (the
    index arrays of one mask, below); any other index as it is."""
    if not (isinstance(index, tuple) and len(index) >= 2 and isinstance(index[0], Traced)
            and is_bool(index[0].dtype) and index[0].ndim == 1
            and all(isinstance(it, Traced) and it.value is index[0].value for it in index)):
        return index
    m = index[0]
    n = m.shape[0]
    positions = em.emit("iota", shape=(n,), dim=0, dtype=np.dtype(np.int64))
    key = _selection_key(em, m)
    return tuple(Masked(Traced(positions.value, None, m.params), 0, ("flags", m), key, m.params) for _ in index)


def index_items(index):
    """The index arrays of x[a[m]] / x[a[m], b[m]] when every item is a selection (else None)."""
    items = index if isinstance(index, tuple) else (index,)
    if items and all(isinstance(it, Masked) and it.where[0] == "flags" and not it.positions for it in items):
        return items
    return None


def _selection_key(em, flags: Traced):
    return ("flags", mask_key(em, flags), flags.shape)


def reselect(em, m: Masked, sel: Masked) -> Masked:
    """m[sel] for a selection m and a bool array computed from it (`Z = Z[abs(Z) < 2]` after `Z =
    Z[I]`): NumPy moves the kept elements together; here they stay at their positions with the
    flags narrowed to those where sel holds too, so `Z[I]`, `C[I]` and `Xi[I]` stay aligned."""
    if m.where[0] == "bounds":
        return select_in_slice(em, m, sel)
    if sel.where[0] == "flags" and sel.axis == 0 and sel.data.ndim == 1 and np.dtype(sel.data.dtype).kind in "iu":
        return _gather_compacted_by_selection(em, m, sel)
    if not (m.where[0] == "flags" and sel.where[0] == "flags" and aligned(m, sel) and m.axis == 0
            and sel.axis == 0 and sel.data.ndim == 1 and is_bool(sel.data.dtype)):
        need(sel, "indexing with it")
    flags = em.emit("and", m.where[1], sel.data)
    return Masked(m.data, 0, ("flags", flags), _selection_key(em, flags), _join(m, sel))


def _gather_compacted_by_selection(em, m: Masked, idx: Masked) -> Masked:
    """m[idx] for a selection m and integer positions in it that are a selection themselves
    (`v[np.argsort(v)]` of v = x[x > 0]; `u[order]` of np.unique's values): m compacted, then
    gathered at idx's selected positions (NumPy's negative indices and IndexError, for those
    only); the result is selected as idx is."""
    if not returnable(m):
        need(m, "indexing it")
    from .masked import mask
    data, count = compacted(em, m)
    inside = mask(em, idx.where, idx.data.shape, 0)
    i = em.cast(idx.data, np.int64)
    shape = i.shape
    n = em.broadcast(count, shape)
    zero = em.full(0, np.int64, shape)
    i = em.emit("select", em.emit("compare", i, zero, direction="LT"), em.emit("add", i, n), i)
    ok = em.emit("and", em.emit("compare", i, zero, direction="GE"), em.emit("compare", i, n, direction="LT"))
    bad = em.emit("and", inside, em.emit("not", ok))
    em.check(em.emit("reduce", bad, kind="or", axes=(0,)),
             "IndexError: an index is out of bounds for a selection (x[mask]) of the length it has here")
    out = em.emit("take", data, em.emit("select", ok, i, zero), weak=data.weak)
    return Masked(Traced(out.value, data.weak, _join(m, idx)), 0, idx.where, idx.key, _join(m, idx))


def select_in_slice(em, m: Masked, sel: Masked) -> Masked:
    """m[sel] for a 1-D slice with run-time bounds and a bool array of the same bounds
    (`d = x[i + 1:] - x[i]; (2 * d)[d < 0.5]`, pairs within a cutoff): the selection of m's
    positions inside the bounds where sel holds."""
    if not (m.where[0] == "bounds" and sel.where[0] == "bounds" and aligned(m, sel) and m.axis == 0
            and sel.axis == 0 and m.data.ndim == 1 and sel.data.ndim == 1 and is_bool(sel.data.dtype)):
        need(sel, "indexing with it")
    from .masked import mask
    flags = em.emit("and", mask(em, m.where, m.data.shape, 0), sel.data)
    return Masked(m.data, 0, ("flags", flags), _selection_key(em, flags), _join(m, sel))


def _aligned_indices(em, items, what: str):
    """The index arrays of x[a[m], b[m]] / x[a[m], b[m]] = v: selections of one mask, 1-D integers."""
    ref = items[0]
    for it in items:
        if not isinstance(it, Masked) or it.where[0] != "flags" or not aligned(ref, it) or it.data.ndim != 1 \
                or np.dtype(it.data.dtype).kind not in "iu":
            need(first(items), what)
    return ref.where[1]


def _where_selected(em, items, flags) -> tuple:
    """The index arrays as int64, 0 where the mask does not hold (their values there are never
    used, and must not fail a bounds check)."""
    return tuple(Traced(em.emit("select", flags, em.cast(it.data, np.int64), em.full(0, np.int64, it.data.shape)).value,
                        None, it.params) for it in items)


def gather_many(em, x: Traced, items: tuple) -> Masked:
    """x[a[m], b[m]]: the gather at every position, reading position 0 where m is false; a
    selection of m as the index arrays are."""
    if not isinstance(x, Traced):   # (an array known at compile time: call_known passes its contents)
        x = em.asarray(x)
    flags = _aligned_indices(em, items, "indexing with it")
    if len(items) > x.ndim or 0 in x.shape[:len(items)]:
        need(items[0], "indexing with it")
    out = getitem(em, x, _where_selected(em, items, flags))
    return Masked(Traced(out.value, None, _join(x, *items)), 0, items[0].where, items[0].key, _join(x, *items))


def scatter(em, x: Traced, items: tuple, value, what: str) -> Traced:
    """The new x after `x[a[m], b[m]] = v` (v a scalar or a selection of the same m): the entries
    where m holds write, the last of several naming one position winning, as in NumPy."""
    flags = _aligned_indices(em, items, what)
    if len(items) > x.ndim or 0 in x.shape[:len(items)]:
        need(items[0], what)
    index = _where_selected(em, items, flags)
    if isinstance(value, Masked):
        if value.where[0] != "flags" or not aligned(value, items[0]) or value.axis != 0:
            need(value, f"{what} from a selection of another mask")
        value = Traced(value.data.value, value.data.weak, value.params)
    return set_selected_positions(em, x, index, value, what, flags)


def gather_compacted(em, m: Masked, index) -> Traced:
    """m[idx] for a selection m and integer positions counted in it (`counts[inverse]` after
    np.unique): m's elements moved to the front (compaction.compacted), then gathered; a position
    outside the selection's run-time length raises IndexError, as NumPy's."""
    idx = index if isinstance(index, Traced) else em.asarray(np.asarray(index))
    if np.dtype(idx.dtype).kind not in "iu" or not returnable(m):
        need(m, "indexing it")
    data, count = compacted(em, m)
    wrapped = checked_ranks(em, idx, count, "IndexError: an index is out of bounds for a selection (x[mask]) of the "
                                            "length it has here")
    shape = wrapped.shape
    safe = em.emit("select", em.emit("compare", wrapped, em.broadcast(count, shape), direction="LT"), wrapped,
                   em.full(0, np.int64, shape))
    return em.emit("take", data, em.emit("max", safe, em.full(0, np.int64, shape)), weak=data.weak)
