"""compaction: a selection (x[mask], np.nonzero, np.unique, ...) as the caller gets it, its
elements moved to the front of the axis in order with their count (program.Trimmed keeps that
many); reshaped selections (slices, differences of them) are compacted first. Also which of them
the function may return (`returnable`, `returnable_as_copy`)."""
from __future__ import annotations

import numpy as np

from .masked import Masked, _positions_of, length, mask, need
from .values import Traced, items_of


def returnable(m: Masked) -> bool:
    """Whether the function can return `m` as it is: a selection (always a new array in NumPy).
    A run-time slice is not: NumPy returns a view of its base. A list's items that a loop
    appended to (appends.AppendedItems) is returned as a list of its items (outputs.py)."""
    return m.where[0] == "flags" and m.axis == 0 and m._data is not None and (type(m) is Masked or m.list_items)


def returnable_as_copy(em, m: Masked, returned) -> bool:
    """Whether a run-time slice along the first axis (`path[:k]`, k found by a while loop) may be
    returned as a copy (compaction.compacted): NumPy returns a view of its base, which no one
    can tell from a copy when the base is a local array the function does not return otherwise
    (not an argument, nor a global)."""
    if m.where[0] != "bounds" or m.axis != 0 or m._data is None:
        return False
    root = m.data.root
    others = list(items_of(returned, Traced)) + [x.data for x in items_of(returned, Masked) if x is not m]
    return id(root) not in em.arguments and not root.frozen and all(v.root is not root for v in others)


def compacted(em, m: Masked) -> tuple[Traced, Traced]:
    """A selection (x[mask], np.nonzero, np.unique, ...) as the caller gets it: its elements moved
    to the front of the axis in order, and how many there are (int64); the caller keeps that many
    (program.Trimmed). Output position j takes the element whose inclusive count of selected
    elements is j + 1: a prefix sum and a binary search, log2(n) parallel steps each."""
    if m.where[0] == "bounds" and m.axis == 0:     # a run-time slice of a local array (returnable_as_copy)
        m = Masked(m.data, 0, ("flags", mask(em, m.where, (m.data.shape[0],), 0)), m.key, m.params)
    if not returnable(m):
        need(m, "returning it")
    data, flags = m.data, m.where[1]
    n = flags.shape[0]
    bits = _BITS.get(np.dtype(data.dtype).itemsize) if data.dtype.kind in "biuf" else None
    if bits is not None and n and isinstance(n, int) and m.axis == 0 and not em.differentiable:
        # each selected element scattered to its rank (a prefix sum), the others to a spare row
        # n: one pass each, where the binary search for the source of each position took log2(n)
        # gathers (np.nonzero of 1e5 values 4.3 ms, NumPy 0.1 ms). Added as integers of the same
        # width into zeros: the bits come through (a float -0.0 + 0.0 would be +0.0); not under
        # autodiff (bits carry no derivative)
        from .registry import FUNCTIONS
        ranks = em.emit("sub", FUNCTIONS["numpy.cumsum"](em, em.cast(flags, np.int64)), em.full(1, np.int64, (n,)))
        target = em.emit("select", flags, ranks, em.full(n, np.int64, (n,)))
        raw = data if data.dtype == bits else em.emit("bitcast", em.cast(data, np.uint8) if data.dtype == np.bool_ else data,
                                                      dtype=bits)
        spare = em.full(0, bits, (n + 1,) + data.shape[1:])
        out = em.emit("scatter_add", spare, target, raw)
        out = em.emit("slice", out, start=(0,) * data.ndim, limit=(n,) + data.shape[1:], strides=(1,) * data.ndim)
        if data.dtype != bits:
            out = em.emit("bitcast", out, dtype=np.dtype(np.uint8) if data.dtype == np.bool_ else data.dtype)
            out = em.cast(out, np.bool_) if data.dtype == np.bool_ else out
        return Traced(out.value, data.weak, out.params), length(em, m)
    found = _positions_of(em, flags, em.emit("iota", shape=(n,), dim=0, dtype=np.dtype(np.int64)))
    source = em.emit("min", found, em.full(max(n - 1, 0), np.int64, (n,)))
    return em.emit("take", data, source, weak=data.weak), length(em, m)


_BITS = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}
