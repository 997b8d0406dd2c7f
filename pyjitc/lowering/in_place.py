"""in_place: which native loops can update their arrays in place (lowering/native_loops.py asks;
lowering/scalar_arrays.py and scalar_loop.py lower them).

Inside a native loop an array is a buffer updated in place, and a temporary array is a rule read
element by element where it is used (scalar_arrays.Lazy). So a loop qualifies only where that
order of reads and writes gives NumPy's answer: temporaries stay inside the block that makes them,
no op between a temporary's definition and its last use writes an element it reads
(`check_lazy`), an update's new value reads its target only at the positions it writes or at
positions the write provably misses (`_same_positions`, `_misses_reads`), and an array the body
computes anew reads the arrays written over with it only element for element (`_rewrite_ok`)."""
from __future__ import annotations

import weakref

import numpy as np

from ..ir.graph import Block, Op

REDUCE_KINDS = ("add", "mul", "max", "min", "and", "or", "xor")   # reductions with an element form


def vector_ok(op: Op, elementwise: set, shape_only: set) -> bool:
    """Whether `op`, with an array (size > 1) among its operands or results, has an element form."""
    name = op.name
    if name in elementwise or name in shape_only or name in ("iota", "slice", "dynamic_slice", "barrier"):
        return True
    if name == "take":
        return op.operands[0].type.shape[0] > 0
    if name == "constant":   # a splat, or a small table (`for dx in (-1, 0, 1)`, frontend/sequences.IntsSeq)
        value = np.asarray(op.attrs["value"])
        return value.size > 0 and (bool(np.all(value == value.reshape(-1)[0]))
                                   or value.size <= TABLE_SIZE and value.dtype.kind in "biuf")
    if name == "reduce":
        return op.attrs["kind"] in REDUCE_KINDS and op.operands[0].type.size > 0
    if name == "dot_general":
        return op.results[0].type.dtype.kind in "iufc" and all(v.type.size > 0 for v in op.operands)
    if name == "dynamic_update_slice":
        return op.operands[1].type.size > 0
    if name == "pad":   # np.flip of a run-time slice (frontend/masked.py)
        return not any(op.attrs["interior"])
    if name == "concatenate":   # np.array([a, b, c]) of single values, np.concatenate of small arrays
        return all(v.type.size > 0 for v in op.operands)
    return False


TENSOR_MAKERS = ("dynamic_update_slice", "while", "if")
TABLE_SIZE = 256    # the most elements of a constant array (not a splat) a native loop reads

# Loop bodies whose arrays computed anew are written over the arrays as they entered the pass,
# not over those arrays' newest versions (newest_version): the new values read a version a
# nested loop left at other positions (`buf[k:hi] = buf[k - 1:hi - 1] + ...` after a loop that
# wrote buf). IREE copies the entry array there (check_lazy decides; scalar_loop.while_ reads).
OVER_ENTRY: weakref.WeakSet = weakref.WeakSet()


def check_lazy(loop: Op, free_ids: set, refuse) -> None:
    """Calls `refuse()` unless every temporary array of `loop` (see the module docstring) stays
    in its block, is not written in place, and is used before any array it reads is updated."""
    tensors = set(free_ids)          # array values that are buffers: the rest are temporaries

    def mark(block: Block):
        tensors.update(p.id for p in block.params if p.type.size != 1)
        for op in block.ops:
            for r in op.regions:
                mark(r)
            if op.name in TENSOR_MAKERS or (op.name == "barrier" and op.operands[0].id in tensors):
                tensors.update(v.id for v in op.results if v.type.size != 1)
    for r in loop.regions:
        mark(r)
    is_lazy = lambda v: v.type.size != 1 and v.id not in tensors

    def walk(block: Block, loop: Op | None = None, buffers: dict | None = None):
        reads: dict[int, set] = {}     # temporary id -> the buffers it reads
        defined: dict[int, int] = {}   # temporary id -> position
        last_use: dict[int, int] = {}
        root: dict[int, int] = {}      # a buffer's later versions (updates in place) -> its first
        updated: dict[int, int] = {}   # the same through updates only, not loops
        for op in block.ops:
            for old, new in _versions(op):
                if old.id in tensors:
                    root[new.id] = root.get(old.id, old.id)
                    if op.name != "while":
                        updated[new.id] = updated.get(old.id, old.id)
        R = lambda i: root.get(i, i)
        for k, op in enumerate(block.ops):
            if op.name in ("while", "if") and any(is_lazy(v) for v in op.operands):
                refuse()
            if op.name == "dynamic_update_slice" and is_lazy(op.operands[0]):
                refuse()
            for j, r in enumerate(op.regions):
                over = None
                if op.name == "if" and any(is_lazy(v) for v in r.results):
                    # an array computed anew in one branch (`dist = np.minimum(dist, ...)` after
                    # `if ...: break`) is written over the buffer the other branch yields
                    other = op.regions[1 - j]
                    over = {i: b for i, v in enumerate(r.results) if is_lazy(v)
                            and (b := yielded_buffer(other, other.results[i])) is not None and b.id in tensors}
                    if len(over) != sum(1 for v in r.results if is_lazy(v)):
                        refuse()
                elif any(is_lazy(v) for v in r.results) and not (op.name == "while" and r is op.regions[1]):
                    refuse()
                walk(r, op if op.name == "while" else None, over)
            used = [v for v in op.operands] + [v for v in _captured_values(op)]
            for v in used:
                if v.id in defined:
                    last_use[v.id] = k
            for v in op.results:
                if is_lazy(v):
                    defined[v.id] = k
                    reads[v.id] = set().union(*([reads.get(u.id, set()) for u in op.operands if u.id in reads]
                                                + [{R(u.id) for u in op.operands if u.id in tensors}]))
        consumers = [(k, {R(i) for i in _consumed(op, tensors)}) for k, op in enumerate(block.ops)]
        producers = {v.id: op for op in block.ops for v in op.results}
        rewritten = [i for i, v in enumerate(block.results) if is_lazy(v)]
        over_params = loop is not None and block is loop.regions[1] and rewritten
        if over_params and not _rewrite_ok(block, rewritten, producers, tensors, R, [block.params[i] for i in rewritten]):
            U = lambda i: updated.get(i, i)
            over_params = _rewrite_ok(block, rewritten, producers, tensors, U, [block.params[i] for i in rewritten], True)
            if over_params:
                OVER_ENTRY.add(block)
        if rewritten and not (over_params or buffers is not None and all(i in buffers for i in rewritten)
                              and _rewrite_ok(block, rewritten, producers, tensors, R, [buffers[i] for i in rewritten])):
            refuse()
        for i in rewritten:   # read at the block's end: no buffer it reads may be updated before
            last_use[block.results[i].id] = len(block.ops)     # (`t1 = t1 * 0.5 + x; x[1:-1] = ...`)
        for vid, start in defined.items():
            end = last_use.get(vid, start)
            for k, consumed in consumers:
                if start < k <= end and consumed & reads[vid]:
                    op = block.ops[k]
                    if not (k == end and op.name == "dynamic_update_slice" and op.operands[1].id == vid
                            and _same_positions(op.operands[1], op, producers, tensors, R)) \
                            and not _misses_reads(op, vid, producers, tensors, R):
                        refuse()
    for r in loop.regions:
        walk(r, loop)


def yielded_buffer(block: Block, value):
    """The array from outside `block` that `block` yields as `value` after updating it in place
    (updates, barriers, loops carrying it), or None where `block` computes it anew: the buffer an
    array computed anew in the other branch of an `if` is written over (`if deg == 0: new += c`
    beside `else: for k in ...: new[idx[k]] += ...`, a PageRank's dangling nodes)."""
    made = {r.id: op for op in block.ops for r in op.results}
    while value.id in made:
        op = made[value.id]
        if op.name in ("dynamic_update_slice", "barrier"):
            value = op.operands[0]
        elif op.name == "while":
            value = op.operands[[r.id for r in op.results].index(value.id)]
        else:
            return None
    return value


def _versions(op: Op):
    """(buffer, its next version) for each array `op` updates in place: a dynamic_update_slice's
    or barrier's target, and each array a loop carries (its result is the array its body left)."""
    if op.name in ("dynamic_update_slice", "barrier"):
        return [(op.operands[0], op.results[0])]
    if op.name == "while":
        return [(v, r) for v, r in zip(op.operands, op.results) if v.type.size != 1]
    return []


def newest_version(block: Block, value):
    """`value`'s last version in `block` (see _versions): what an array computed anew at the
    block's end is written over (a loop that carried the body's array took its buffer)."""
    for op in block.ops:
        for old, new in _versions(op):
            if old.id == value.id:
                value = new
    return value


def _rewrite_ok(block: Block, rewritten: list, producers: dict, tensors: set, R, params: list,
                entry=False) -> bool:
    """Whether the block's results at positions `rewritten`, which it yields computed anew
    (temporaries: a masked update of the whole array, `z = select(abs(z) < 2, z * z + c, z)`),
    can be written over the arrays `params` in place in one element loop (the loop body's carried
    arrays, or what the other branch of an `if` yields): they have one shape, each new value has
    its array's type and reads each of these arrays only as its newest version in the block and
    only at the position it computes, and no inner loop or if touches them. `entry`: written
    over the arrays as they entered (OVER_ENTRY); `R` then follows updates only, a loop's
    result is another array."""
    values = [block.results[i] for i in rewritten]
    # one shape up to axes of length 1 (the region's tensors drop them: scalar_loop.storage_tensor)
    if len({tuple(d for d in v.type.shape if d != 1) for v in values}) != 1 or any(v.type != p.type for v, p in zip(values, params)):
        return False
    for p in params:
        family = {p.id} | {i for i in (r.id for op in block.ops for r in op.results) if R(i) == p.id}
        if any(_mentions(r, family) for op in block.ops for r in op.regions):
            return False
        older = {old.id for op in block.ops for old, _ in _versions(op) if old.id in family
                 and not (entry and op.name == "while")}
        newest = [i for i in family if i not in older]
        if len(newest) != 1 or not all(_elementwise_of(v, p.id, newest[0], producers, tensors, R, 24) for v in values):
            return False
    return True


def _mentions(block: Block, ids: set) -> bool:
    return (any(v.id in ids for v in block.results) or any(v.id in ids for op in block.ops for v in op.operands)
            or any(_mentions(r, ids) for op in block.ops for r in op.regions))


def _elementwise_of(v, t: int, newest: int, producers: dict, tensors: set, R, depth: int) -> bool:
    """Whether `v` reads the buffer `t` only as its version `newest`, element for element."""
    if v.type.size == 1:
        return True       # a single value, computed before the array is written
    if R(v.id) == t:
        return v.id == newest
    if v.id in tensors:
        return True       # another buffer
    op = producers.get(v.id)
    if op is None:
        return True
    if not depth:
        return False
    if op.name in ("constant", "iota"):
        return True
    if op.name in ("barrier", "reshape") or op.name in _ELEMENTWISE_NAMES:   # (a reshape keeps the order)
        return all(_elementwise_of(u, t, newest, producers, tensors, R, depth - 1) for u in op.operands)
    return not _reads_target(v, t, producers, R, depth, tensors)


def _same_positions(v, update: Op, producers: dict, tensors: set, R, depth: int = 24) -> bool:
    """Whether the update's new value `v` reads its target only at the positions it writes:
    through elementwise ops, unit reshapes and barriers down to slices of the target with the
    update's own starts and extents (or reads of other arrays, or single values taken before).
    `R`: a buffer version's id -> its buffer's (earlier versions of the target are the target)."""
    target, starts, shape = update.operands[0], update.operands[2:], update.operands[1].type.shape
    t = R(target.id)
    if v.type.size == 1 or not depth:
        return v.type.size == 1
    if R(v.id) == t:
        return False
    if v.id in tensors:
        return True      # another buffer (the check above made sure it is not consumed meanwhile)
    op = producers.get(v.id)
    if op is None:
        return True
    if op.name == "dynamic_slice" and R(op.operands[0].id) == t:
        # the same region, or (where both are one element thick along an axis: a row or a
        # column) the same region or one disjoint from it: `p[:, j] = f(p[:, j - 1])`. Either way
        # no element is read after this update wrote it
        same = all(_same_value(a, b, producers) or d == 1 for a, b, d in zip(op.operands[1:], starts, shape))
        if tuple(op.attrs["sizes"]) == tuple(shape):
            return same
        # a column written from the row of the same index, or a row from the column, of a square
        # array (`C[i + 1:, i] = C[i, i + 1:]`, the mirror of a symmetric matrix): element k writes
        # (s + k, i) and reads (i, s + k), so the only element read and written both is (i, i),
        # by one step
        square = len(shape) == 2 and target.type.shape[0] == target.type.shape[1]
        return (square and 1 in shape and tuple(op.attrs["sizes"]) == tuple(reversed(shape))
                and _same_value(op.operands[1], starts[1], producers) and _same_value(op.operands[2], starts[0], producers))
    if op.name == "slice" and R(op.operands[0].id) == t:
        # a compile-time slice: the update's region where its starts are constants (`x[:30] =
        # -x[:30]` under an `if`: its loop ran on the host, 26x NumPy's time), or a region the
        # update never writes (`s[j] = s[0] + 0.5 * (s[j] - s[0])`, a Nelder-Mead shrink)
        found = [producers.get(s.id) for s in starts]
        if any(c is None or c.name != "constant" for c in found) or any(k != 1 for k in op.attrs["strides"]):
            return False
        at = tuple(int(np.asarray(c.attrs["value"])) for c in found)
        lo, hi = tuple(op.attrs["start"]), tuple(op.attrs["limit"])
        same = lo == at and tuple(b - a for a, b in zip(lo, hi)) == tuple(shape)
        return same or any(b <= w or w + d <= a for a, b, w, d in zip(lo, hi, at, shape))
    if op.name in ("dynamic_slice", "slice", "iota", "constant") and op.operands[:1] and R(op.operands[0].id) != t:
        return all(_same_positions(u, update, producers, tensors, R, depth - 1) for u in op.operands[:1])
    if op.name in ("iota", "constant"):
        return True
    if op.name in ("barrier", "broadcast_in_dim", "reshape") or op.name in _ELEMENTWISE_NAMES:
        if op.name == "broadcast_in_dim" and op.operands[0].type.size != 1:
            return not _reads_target(op.operands[0], t, producers, R, depth, tensors)
        if op.name == "reshape" and [d for d in op.operands[0].type.shape if d != 1] != [d for d in op.results[0].type.shape if d != 1]:
            return not _reads_target(op.operands[0], t, producers, R, depth, tensors)
        return all(_same_positions(u, update, producers, tensors, R, depth - 1) for u in op.operands)
    return not _reads_target(v, t, producers, R, depth, tensors)


def _misses_reads(update: Op, vid: int, producers: dict, tensors: set, R) -> bool:
    """Whether the in-place `update` (a dynamic_update_slice) writes none of the elements the
    temporary `vid` reads of its target: each read is a dynamic_slice of the target that, along
    an axis where both are one element thick, starts a nonzero constant away from the write
    (`ccol[:, :, k - 1]` read by a temporary still used after `ccol[:, :, k] = ...`). Starts
    proven in range only (a clamped start could meet the other)."""
    if update.name != "dynamic_update_slice" or not update.attrs.get("in_bounds"):
        return False
    target, starts, shape = update.operands[0], update.operands[2:], update.operands[1].type.shape
    reads = _slices_of(producers.get(vid), R(target.id), producers, tensors, R, 24)
    if reads is None:
        return False

    def apart(a, b) -> bool:   # b is a plus or minus a nonzero constant
        op = producers.get(b.id)
        if op is None or op.name not in ("add", "sub"):
            return False
        x, y = op.operands
        const = lambda v: (producers.get(v.id) is not None and producers[v.id].name == "constant"
                           and np.asarray(producers[v.id].attrs["value"]).reshape(-1)[0] != 0)
        return (x.id == a.id and const(y)) or (op.name == "add" and y.id == a.id and const(x))
    return all(r.attrs.get("in_bounds") and any(
        d == 1 and size == 1 and (apart(w, s) or apart(s, w))
        for w, s, d, size in zip(starts, r.operands[1:], shape, r.attrs["sizes"])) for r in reads)


def _slices_of(op, target: int, producers: dict, tensors: set, R, depth: int):
    """The dynamic_slice ops through which the temporary made by `op` reads the buffer
    `target` (any version of it), or None if it may read it another way (or the walk goes too
    deep)."""
    if op is None:
        return []
    if not depth:
        return None
    if op.name == "dynamic_slice" and R(op.operands[0].id) == target:
        return [op]
    out = []
    for u in op.operands:
        if R(u.id) == target:
            return None
        if u.type.size == 1 or u.id in tensors:
            continue
        inner = _slices_of(producers.get(u.id), target, producers, tensors, R, depth - 1)
        if inner is None:
            return None
        out += inner
    return out


def _reads_target(v, target: int, producers: dict, R, depth: int, tensors=frozenset()) -> bool:
    """Whether the temporary `v` reads the buffer `target` (any version of it; conservatively:
    True when unsure). Another buffer (`tensors`: a version of Q made by `Q[:, k] = A[:, k] / r`)
    holds its elements: reading it reads no other."""
    if R(v.id) == target:
        return True
    op = producers.get(v.id)
    if op is None or v.type.size == 1 or v.id in tensors:
        return False
    if not depth:
        return True
    return any(_reads_target(u, target, producers, R, depth - 1, tensors) for u in op.operands)


def _same_value(a, b, producers: dict) -> bool:
    if a.id == b.id:
        return True
    pa, pb = producers.get(a.id), producers.get(b.id)
    return (pa is not None and pb is not None and pa.name == pb.name == "constant"
            and np.array_equal(np.asarray(pa.attrs["value"]), np.asarray(pb.attrs["value"])))


_ELEMENTWISE_NAMES: set = set()   # filled by scalar_loop (its ELEMENTWISE set)


def _captured_values(op: Op) -> list:
    out = []
    for block in op.regions:
        for inner in block.ops:
            out.extend(inner.operands)
            out.extend(_captured_values(inner))
        out.extend(block.results)
    return out


def _consumed(op: Op, tensors: set) -> set:
    """The buffers `op` updates in place (or hands to a loop or branch that may)."""
    if op.name in ("dynamic_update_slice", "barrier"):
        return {op.operands[0].id} & tensors
    if op.name in ("while", "if"):
        ids = {v.id for v in op.operands} | {v.id for v in _captured_values(op)}
        return ids & tensors
    return set()
