"""sequences: what a loop can run over at run time (a range with run-time bounds, the rows of an
array, enumerate and zip of those), and the builtins range/enumerate/zip that make them. A loop over
any other Python iterable is unrolled; numpy/builtins.py registers the three builtins. And a list's
items read or written at a run-time position (`moves[d]`, `counts[k] += 1`)."""
from __future__ import annotations

import numpy as np

from ..errors import JitError, NotSupportedError, ShapeError
from ..ir.dims import Dim
from ..ir.types import is_int
from .index_checks import index_i64
from .compaction import compacted
from .indexing import getitem
from .masked import Masked, length
from .operators import apply_operator
from .registry import FUNCTIONS
from .regions import is_marker
from .values import NeedStatic, Traced, fold, is_static, join_params

class Seq:
    """A sequence a loop can run over at run time: a length (int, or a run-time int that may be
    negative for an empty sequence) and the item at a position (int, or the loop's counter)."""

    def count(self, em):
        raise NotImplementedError

    def item(self, em, k):
        raise NotImplementedError

    def materialize(self, em):
        n = self.count(em)
        return [self.item(em, k) for k in range(em.static(n, "the length of this sequence"))]


class RangeSeq(Seq):
    def __init__(self, start, stop, step, sized=False):
        self.start, self.stop, self.step = start, stop, step
        self.sized = sized   # a bound is an array's size known only at run time (dynamic=True)

    def count(self, em):
        if isinstance(self.step, Traced):   # a run-time step (`range(p, n + 1, p)` of an outer loop's p)
            return self._count_by_sign(em)
        if is_static(self.start, self.stop):
            return len(range(self.start, self.stop, self.step))
        k = self.step
        span = apply_operator(em, "Sub", self.stop, self.start) if k > 0 else apply_operator(em, "Sub", self.start, self.stop)
        if abs(k) != 1:
            span = apply_operator(em, "FloorDiv", apply_operator(em, "Add", span, abs(k) - 1), abs(k))
        # a negative count means no iterations: loops only test `k < count`. (No max(count, 0):
        # IREE 3.13 miscompiles nested loops whose entry test is 0 < max(n, 0).)
        return span

    def reversed(self, em) -> "RangeSeq | None":
        """reversed(range(start, stop, step)): range(last, start - step, -step), last the range's
        last value (start - step where it is empty); None for a step known only at run time."""
        if isinstance(self.step, Traced):
            return None
        k = self.step
        if abs(k) == 1:
            return RangeSeq(apply_operator(em, "Sub", self.stop, k), apply_operator(em, "Sub", self.start, k), -k)
        count = self.count(em)   # (a negative count: an empty range, as 0)
        count = apply_operator(em, "Mult", apply_operator(em, "Gt", count, 0), count)
        last = apply_operator(em, "Add", self.start, apply_operator(em, "Mult", apply_operator(em, "Sub", count, 1), k))
        return RangeSeq(last, apply_operator(em, "Sub", self.start, k), -k)

    def _count_by_sign(self, em):
        """len(range(start, stop, step)) for a step known at run time: by its sign."""
        k = self.step
        op = lambda name, a, b: apply_operator(em, name, a, b)
        up = op("FloorDiv", op("Sub", op("Add", op("Sub", self.stop, self.start), k), 1), k)
        down = op("FloorDiv", op("Sub", op("Sub", op("Sub", self.start, self.stop), k), 1), op("Sub", 0, k))
        positive = op("Gt", k, 0)
        up, down = em.asarray(up), em.asarray(down)
        return Traced(em.emit("select", em.asarray(positive), up, em.cast(down, up.dtype)).value, int,
                      join_params([up, down]))

    def item(self, em, k):
        if isinstance(self.step, Traced):
            return apply_operator(em, "Add", self.start, apply_operator(em, "Mult", k, self.step))
        if self.step != 1:
            k = apply_operator(em, "Mult", k, self.step)
        value = k if isinstance(self.start, int) and self.start == 0 else apply_operator(em, "Add", self.start, k)
        start, stop = em.range_of(self.start), em.range_of(self.stop)
        if isinstance(value, Traced) and start is not None and stop is not None:   # every value range() yields
            if start[0] == start[1] and stop[0] == stop[1]:   # compile-time bounds: its last value exactly
                values = range(start[0], stop[0], self.step)
                if len(values):
                    em.ranges[value.value.id] = (min(values[0], values[-1]), max(values[0], values[-1]))
            else:
                em.ranges[value.value.id] = ((start[0], stop[1] - 1) if self.step > 0 else (stop[0] + 1, start[1]))
            base = em.offset_of(value)
            if value.value.id in em.ranges and base is not None and base[0] not in em.ranges:
                # i = start - k (a step of -1) is known as `-k` plus start: `i + 1` is found as -k
                # plus start + 1, so -k gets i's range less start (np.arange(i + 1) then has a capacity)
                lo, hi = em.ranges[value.value.id]
                em.ranges[base[0]] = (lo - base[1], hi - base[1])
        return value


class ArraySeq(Seq):
    def __init__(self, x: Traced):
        if x.ndim == 0:
            raise ShapeError("iteration over a 0-d array")
        self.x = x

    def count(self, em):
        return self.x.shape[0]

    def item(self, em, k):
        return getitem(em, self.x, k)


class ListSeq(Seq):
    def __init__(self, items):
        self.items = list(items)

    def count(self, em):
        return len(self.items)

    def item(self, em, k):
        return self.items[em.static(k, "a position in a Python list")]


class IntsSeq(Seq):
    """A literal tuple or list of Python ints looped over at run time (`for dx in (-1, 0, 1):`
    around a loop, loops.for_loop): its item at the loop's counter is a Python int read from a
    table. Unrolled, each copy of the inner run-time loop costs IREE compile time: a cell list's
    18 copies of its `while` took iree-compile past 5 minutes (probe AY)."""

    def __init__(self, items):
        self.items = tuple(items)

    @staticmethod
    def fits(items) -> bool:
        return len(items) >= 2 and all(type(v) is int and -2 ** 63 <= v < 2 ** 63 for v in items)

    def count(self, em):
        return len(self.items)

    def item(self, em, k):
        if not isinstance(k, Traced):
            return self.items[k]
        value = getitem(em, em.constant(np.array(self.items, np.int64)), k)
        out = Traced(value.value, int, join_params([k]))
        em.ranges[out.value.id] = (min(self.items), max(self.items))
        return out


class EnumerateSeq(Seq):
    def __init__(self, seq: Seq, start):
        self.seq, self.start = seq, start

    def count(self, em):
        return self.seq.count(em)

    def item(self, em, k):
        return (apply_operator(em, "Add", self.start, k), self.seq.item(em, k))


class ZipSeq(Seq):
    def __init__(self, seqs):
        self.seqs = seqs

    def count(self, em):
        counts = [s.count(em) for s in self.seqs]
        if is_static(*counts):
            return min(counts)
        out = counts[0]
        for c in counts[1:]:
            out = FUNCTIONS["numpy.minimum"](em, out, c)
        return out

    def item(self, em, k):
        return tuple(s.item(em, k) for s in self.seqs)


class NdIndexSeq(Seq):
    """np.ndindex(shape): the index tuples of an array of that shape in C order; each item's
    entries are the position's digits (k // stride) % dim, known to lie in [0, dim)."""

    def __init__(self, shape):
        self.shape = tuple(int(d) for d in shape)

    def count(self, em):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def item(self, em, k):
        out, stride = [], self.count(em)
        for d in self.shape:
            stride //= d
            digit = apply_operator(em, "FloorDiv", k, stride) if stride != 1 else k
            digit = apply_operator(em, "Mod", digit, d) if d != 1 else 0
            if isinstance(digit, Traced):
                em.ranges[digit.value.id] = (0, d - 1)
            out.append(digit)
        return tuple(out)


class NdEnumerateSeq(Seq):
    """np.ndenumerate(x): (index tuple, x[index]) pairs in C order."""

    def __init__(self, x: Traced):
        self.x, self.index = x, NdIndexSeq(x.shape)

    def count(self, em):
        return self.index.count(em)

    def item(self, em, k):
        idx = self.index.item(em, k)
        return idx, getitem(em, self.x, idx)


def ndindex(em, *shape):
    shape = em.static(shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape,
                      "np.ndindex: the shape")
    return NdIndexSeq(shape)


def ndenumerate(em, x):
    return NdEnumerateSeq(em.asarray(x))


class SelectionSeq(Seq):
    """The elements (rows) of a selection whose length is known only at run time: a run-time slice
    (`for v in indices[indptr[u]:indptr[u + 1]]`) from its start, or x[mask], np.flatnonzero, ...
    (`for v in np.flatnonzero(adj[u])`) compacted to the front (compaction.compacted)."""

    def __init__(self, em, m: Masked):
        if m._data is not None and m.where[0] == "bounds" and m.axis == 0:
            self.data, self.start, n = m.data, m.where[1], length(em, m)
        else:
            self.data, n = compacted(em, m)   # (asks for the bounds at compile time where it can't)
            self.start = 0
        self.n = Traced(n.value, int, m.params)

    def count(self, em):
        return self.n

    def item(self, em, k):
        return getitem(em, self.data, apply_operator(em, "Add", self.start, k) if isinstance(self.start, Traced) else k)


def as_seq(x, em=None) -> Seq | None:
    """The Seq a loop over x runs over; None for other Python iterables (unrolled as they are)."""
    if isinstance(x, Seq):
        return x
    if isinstance(x, Masked) and em is not None and x.where[0] != "grid":
        return SelectionSeq(em, x)
    if isinstance(x, Traced):
        return ArraySeq(x)
    if isinstance(x, range):
        return RangeSeq(x.start, x.stop, x.step)
    return None


def range_(em, *args):
    sized = any(isinstance(a, Dim) for a in args)
    if sized:   # a symbolic dimension: a run-time bound
        args = tuple(em.asarray(a) if isinstance(a, Dim) else a for a in args)
    if is_static(*args):
        return fold(range, *args)
    for a in args:
        if isinstance(a, Traced) and (a.ndim or a.weak is float or not (a.weak is int or is_int(a.dtype))):
            raise JitError(f"TypeError: range() takes integers, not a {a.dtype}[{','.join(map(str, a.shape))}] value")
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (args + (1,))[:3]
    if isinstance(step, Traced):    # its sign decides the count when the loop runs
        em.check(em.asarray(apply_operator(em, "Eq", step, 0)), "ValueError: range() arg 3 must not be zero")
        return RangeSeq(start, stop, step, sized)
    if step == 0:
        raise JitError("ValueError: range() arg 3 must not be zero")
    return RangeSeq(start, stop, step, sized)


def enumerate_(em, it, start=0):
    if isinstance(it, (Traced, Seq, Masked)):
        return EnumerateSeq(as_seq(it, em), start)
    return list(enumerate(it, start))


def zip_(em, *its):
    if any(isinstance(i, (Traced, Seq, range, Masked)) for i in its) and any(isinstance(i, (Traced, Seq, Masked)) for i in its):
        return ZipSeq([as_seq(i, em) or ListSeq(i) for i in its])
    return list(zip(*its))


# ---------------------------------------------------------------- a list's items at run-time positions

def chosen(em, items, position):
    """items[position] for a run-time position: items of one type and shape (as max/min of them
    needs), or tuples of such items, chosen part by part (`max(pairs, key=lambda t: t[1])`)."""
    if all(isinstance(v, tuple) for v in items) and len({len(v) for v in items}) == 1:
        return tuple(chosen(em, [v[c] for v in items], position) for c in range(len(items[0])))
    types = {em.dtype_of(v) for v in items}
    if len(types) != 1 or len({em.shape_of(v) for v in items}) != 1:
        raise NotSupportedError("max()/min() with key= of items of different types or shapes, chosen by keys "
                                "known only at run time", hint="pick an index instead: max(range(n), key=...)")
    out = _picked(em, items, position)
    weak = next(iter(types))
    if isinstance(out, Traced) and isinstance(position, Traced) and any(isinstance(v, Traced) and em.is_array(v)
                                                                       for v in items):
        out.picked = Picked(em, items, position)
    # (chosen by the position: computed from what it is computed from, an int argument's value
    # included: `x.shape[axis]` as an array's size asks for that argument at compile time)
    return Traced(em.asarray(out).value, weak, join_params([*items, position])) if isinstance(weak, type) else out


class Picked:
    """An array chosen from `items` by a run-time position is the item itself, as in Python: a
    write into it goes to that item (each item takes the new value where the position names it),
    and a read after a write into an item through another name sees it. A write into
    `dst = bufs[1 - cur]` (ping-pong buffers in a list) went into a copy: the buffers came back
    unchanged (a probe's heat solver)."""

    def __init__(self, em, items, position):
        self.em, self.items, self.position = em, list(items), position
        self.seen, self.blocks = self._values(), list(em.b.blocks)   # (where the position can be read)

    def _values(self):
        return [v.value if isinstance(v, Traced) else None for v in self.items]

    def read(self, mine):
        now = self._values()
        if all(a is b for a, b in zip(now, self.seen)):
            return mine
        self._check_readable()
        self.seen = now
        return self.em.asarray(_picked(self.em, self.items, self.position)).value

    def _check_readable(self):
        """The position is read where this is used: the blocks it was picked in must still be open
        (a pick in a loop's body, used after the loop, is not)."""
        open_ = self.em.b.blocks
        if len(open_) < len(self.blocks) or any(a is not b for a, b in zip(open_, self.blocks)):
            raise NotSupportedError("this array was picked from a list or tuple by an index known only at run time "
                                    "inside a loop or branch, and an item of it was changed after that ended",
                                    hint="pick it again where it is used, or index with a compile-time value")

    def write(self, new):
        em = self.em
        self._check_readable()
        for i, item in enumerate(self.items):
            if isinstance(item, Traced) and em.is_array(item):
                at = FUNCTIONS["numpy.equal"](em, self.position, i)
                item.value = em.emit("select", em.broadcast(at, item.shape), Traced(new), item).value
        self.seen = self._values()


PICK_PARTS = 16   # items one chain of selects chooses from (more: in groups, each behind a barrier)


def _picked(em, items, position):
    """items[position] (position in range) by a chain of selects; more than PICK_PARTS items in
    groups, each group's choice behind a barrier, then the group chosen the same way. One chain
    over 40 items was one dispatch with a buffer per item: "binding count 40 > 32" when called
    (a permutation list swapped at run-time positions, `p[k], p[j] = p[j], p[k]`; probe AG)."""
    if len(items) <= PICK_PARTS:
        out = items[0]
        for i, item in enumerate(items[1:], 1):
            out = FUNCTIONS["numpy.where"](em, FUNCTIONS["numpy.equal"](em, position, i), item, out)
        return out
    heads = []
    for g in range(0, len(items), PICK_PARTS):
        head = _picked(em, items[g:g + PICK_PARTS], apply_operator(em, "Sub", position, g))
        heads.append(em.emit("barrier", em.asarray(head)))
    return _picked(em, heads, apply_operator(em, "FloorDiv", position, PICK_PARTS))


def item_at(em, seq, index):
    """seq[i] of a list or tuple of numbers (or of tuples of them) at a run-time int i: the item
    chosen at run time (`dx, dy = moves[d]`), Python's negative indices, its IndexError."""
    position = index_i64(em, index, len(seq), f"{type(seq).__name__} index")
    try:
        return chosen(em, list(seq), position)
    except NotSupportedError:
        reason = NotSupportedError(f"a {type(seq).__name__} indexed by a value known only at run time must hold "
                                   "items of one type and shape", hint="use an array")
        if isinstance(index, Traced) and index.params:   # a loop's index (a Butcher tableau's rows of
            raise NeedStatic(index.params, reason=reason) from None   # each length): that loop unrolled
        raise reason from None


def _number_kind(em, v):
    """A number's type as a list slot holds it: the dtype NumPy sees and its Python type (None for
    a NumPy value); None for anything but a number."""
    if isinstance(v, Traced):
        return (em.dtype_of(v), v.weak) if v.ndim == 0 else None
    if isinstance(v, (bool, int, float, complex)):
        return em.dtype_of(v), type(v)
    return (em.dtype_of(v), None) if isinstance(v, np.generic) else None


def store_at(em, seq, index, value):
    """seq[i] = value for a list of numbers and a run-time int i (`counts[k] += 1`, `dp[j] = ...`):
    each slot takes value where i names it, Python's negative indices and IndexError. Every slot
    and value must have one type, as the list's type may not depend on where i falls."""
    kinds = {_number_kind(em, v) for v in [*seq, value]}
    arguments = {p for p in index.params or () if not is_marker(p)} if isinstance(index, Traced) else set()
    if (None in kinds or len(kinds) != 1) and arguments:
        raise NeedStatic(arguments)   # an int argument (scipy's `tupleset(t, axis, ...)`): compiled per value
    if None in kinds or len(kinds) != 1:
        raise NotSupportedError("a list item written at an index known only at run time: the list must hold numbers "
                                "of one type, and the value must have that type too (the list's types would "
                                "otherwise depend on the index)", hint="use an array: np.zeros(n, dtype=...)")
    weak = next(iter(kinds))[1]
    position = index_i64(em, index, len(seq), "list assignment index")
    if len(seq) > PICK_PARTS:
        # the slots as one array, written at the position, each slot then read back from it: as
        # separate selects IREE fused the slots into one dispatch with a buffer each ("binding
        # count 37 > 32" for a 36-item permutation list swapped at run-time positions; probe AG)
        dt = next(iter(kinds))[0]
        slots = FUNCTIONS["numpy.array"](em, list(seq), dtype=dt)
        at = FUNCTIONS["numpy.equal"](em, FUNCTIONS["numpy.arange"](em, len(seq)), position)
        new = em.emit("barrier", em.asarray(FUNCTIONS["numpy.where"](em, at, em.asarray(value, dt), slots)))
        params = join_params([index, value, *seq])
        for k in range(len(seq)):
            out = em.emit("reshape", em.emit("slice", new, start=(k,), limit=(k + 1,), strides=(1,)), shape=())
            seq[k] = Traced(out.value, weak, params) if weak is not None else out
        return
    for k, old in enumerate(seq):
        out = FUNCTIONS["numpy.where"](em, FUNCTIONS["numpy.equal"](em, position, k), value, old)
        seq[k] = Traced(em.asarray(out).value, weak, join_params([index, value, old])) \
            if weak is not None else out
