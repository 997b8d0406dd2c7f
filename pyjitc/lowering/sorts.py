"""sorts: the IR op `sort` (NumPy's order: ascending, NaN last; with_index: the stable argsort)
lowered by expanding it into other IR ops where IREE's own sort is slow. IREE 3.13's CPU sort
takes time growing as the square of the length (float64: 2,048 elements 18 ms, 16,384 1.1 s).
- Where run-time loops run natively (CPU): a stable bottom-up merge sort of each row inside one
  dispatch, n log2(n) steps, ping-ponging between the array and a scratch array of its size.
- Elsewhere (GPU targets), rows of 4096 or more: Batcher's bitonic network of whole-array
  compare-and-swap steps; shorter rows: IREE's sort (ir/ops.py)."""
from __future__ import annotations

import numpy as np

from ..ir.graph import Block, Builder, Op, Value
from ..ir.types import is_float
from .ir_builders import const, counted_loop, element, while_loop, with_element

BITONIC_FROM = 4096


def expand(op: Op, native: bool) -> Block | None:
    """A block computing `op`'s results from its operand, or None where IREE's sort is used."""
    (x,) = op.operands
    axis, with_index = op.attrs["axis"], op.attrs["with_index"]
    n = x.type.shape[axis] if x.type.ndim else 1
    if n < 2 or (not native and n < BITONIC_FROM) or x.type.size == 0:
        return None
    b = Builder()
    b.span = op.span
    b.open_block()
    last = x.type.ndim - 1
    moved = _move_axis(b, x, axis, last)
    rows = int(np.prod(moved.type.shape[:-1], dtype=np.int64))
    flat = b.emit("reshape", moved, shape=(rows, n))
    values, index = _merge_sort(b, flat, with_index) if native else _bitonic(b, flat)
    outs = [_move_axis(b, b.emit("reshape", v, shape=moved.type.shape), last, axis)
            for v in ((values, index) if with_index else (values,))]
    return b.close_block(outs)


def _move_axis(b: Builder, x: Value, src: int, dst: int) -> Value:
    if src == dst:
        return x
    order = [d for d in range(x.type.ndim) if d != src]
    order.insert(dst, src)
    return b.emit("transpose", x, perm=tuple(order))


def _before(b: Builder, x: Value, y: Value) -> Value:
    """x sorts strictly before y in NumPy's order: x < y, or y is NaN and x is not."""
    if not is_float(x.type.dtype):
        return b.emit("compare", x, y, direction="LT")
    # not (x >= y) holds where x < y or either is NaN; x == x leaves out a NaN x
    return b.emit("and", b.emit("not", b.emit("compare", x, y, direction="GE")), b.emit("compare", x, x, direction="EQ"))


def _merge_sort(b: Builder, x: Value, with_index: bool):
    """Each row of x (rows, n) sorted by merging runs of width w, 2w, ... Passes go in pairs, the
    first from the array into the scratch array and the second back, so every write updates the
    latest version of its array in place (a native loop's rule, lowering/native_loops.py); a pass
    whose width covers the row merges one run: a copy. Keys (and positions) live raveled: IREE
    3.13 broke native loop nests reading a 2-D array (lowering/scans.py)."""
    rows, n = x.type.shape
    total = rows * n
    boolean = x.type.dtype == np.bool_
    keys = b.emit("reshape", b.emit("convert", x, dtype=np.dtype(np.uint8)) if boolean else x, shape=(total,))
    state = [keys]
    if with_index:
        state.append(b.emit("reshape", b.emit("iota", shape=(rows, n), dim=1, dtype=np.dtype(np.int64)), shape=(total,)))
    scratch = [b.emit("broadcast_in_dim", const(b, 0, a.type.dtype), shape=(total,), dims=()) for a in state]
    one, n_ = const(b, 1), const(b, n)
    m = len(state)

    def smaller(u, v):
        return b.emit("select", b.emit("compare", u, v, direction="LT"), u, v)

    def merge_pass(src, dst, width, base):
        """One pass over a row: runs of `width` of src merged into dst."""
        span = b.emit("add", width, width)
        runs = b.emit("div", b.emit("sub", b.emit("add", n_, span), one), span)

        def run(r, dst):
            lo = b.emit("mul", r, span)
            mid = smaller(b.emit("add", lo, width), n_)
            hi = smaller(b.emit("add", lo, span), n_)

            def both_open(vals):
                i, j = vals[m], vals[m + 1]
                return b.emit("and", b.emit("compare", i, mid, direction="LT"), b.emit("compare", j, hi, direction="LT"))

            def step(vals):     # the left run's element unless the right one sorts strictly before it (stable)
                *dst, i, j, k = vals
                at_i, at_j, at = (b.emit("add", base, v) for v in (i, j, k))
                right_first = _before(b, element(b, src[0], at_j), element(b, src[0], at_i))
                at_src = b.emit("select", right_first, at_j, at_i)
                out = [with_element(b, d, element(b, a, at_src), at) for d, a in zip(dst, src)]
                i = b.emit("select", right_first, i, b.emit("add", i, one))
                j = b.emit("select", right_first, b.emit("add", j, one), j)
                return out + [i, j, b.emit("add", k, one)]
            *dst, i, j, k = while_loop(b, list(dst) + [lo, mid, lo], both_open, step)

            def rest(start, stop, dst, k):     # what is left of one run, copied
                def copy(t, vals):
                    *dst, k = vals
                    at = b.emit("add", base, t)
                    return [with_element(b, d, element(b, a, at), b.emit("add", base, k)) for d, a in zip(dst, src)] + [b.emit("add", k, one)]
                *dst, k = counted_loop(b, start, stop, list(dst) + [k], copy)
                return dst, k
            dst, k = rest(i, mid, dst, k)
            dst, _ = rest(j, hi, dst, k)
            return dst
        return counted_loop(b, const(b, 0), runs, list(dst), run)

    def row(r, vals):
        base = b.emit("mul", r, n_)

        def pair(t, vals):     # widths w (array -> scratch) and 2w (scratch -> array), w = 4**t
            arrays, spare, w = vals[:m], vals[m:2 * m], vals[-1]
            spare = merge_pass(arrays, spare, w, base)
            w2 = b.emit("add", w, w)
            arrays = merge_pass(spare, arrays, w2, base)
            return arrays + spare + [b.emit("add", w2, w2)]
        pairs = const(b, ((n - 1).bit_length() + 1) // 2)
        return counted_loop(b, const(b, 0), pairs, list(vals) + [one], pair)[:2 * m]
    out = counted_loop(b, const(b, 0), const(b, rows), state + scratch, row)[:m]
    keys = b.emit("reshape", out[0], shape=(rows, n))
    if boolean:
        keys = b.emit("convert", keys, dtype=np.dtype(np.bool_))
    return keys, (b.emit("reshape", out[1], shape=(rows, n)) if with_index else None)


def _bitonic(b: Builder, x: Value):
    """Each row sorted by Batcher's bitonic network, keys compared as (value in NumPy's order with
    NaN last, original position): the stable order. The row is padded to a power of two with
    elements that sort after every real one (their position is >= n)."""
    rows, n = x.type.shape
    size = 1 << (n - 1).bit_length()
    boolean = x.type.dtype == np.bool_
    key = b.emit("convert", x, dtype=np.dtype(np.uint8)) if boolean else x
    index = b.emit("iota", shape=(rows, size), dim=1, dtype=np.dtype(np.int64))
    if size > n:
        pad = b.emit("broadcast_in_dim", const(b, 0, key.type.dtype), shape=(rows, size - n), dims=())
        key = b.emit("concatenate", key, pad, axis=1)
    k = 2
    while k <= size:
        j = k // 2
        while j >= 1:
            shape = (rows, size // (2 * j), 2, j)
            kv, iv = b.emit("reshape", key, shape=shape), b.emit("reshape", index, shape=shape)
            pk, pi = (b.emit("reverse", v, dims=(2,)) for v in (kv, iv))
            first = _sorts_first(b, pk, pi, kv, iv, n)          # the partner sorts before this element
            blocks = np.arange(size // (2 * j))
            descending = ((blocks * 2 * j) & k) != 0
            flip = descending[:, None, None] ^ (np.arange(2)[None, :, None] == 1)   # upper half keeps the larger
            flip = b.emit("broadcast_in_dim", b.emit("constant", value=np.asarray(flip)), shape=shape, dims=(1, 2, 3))
            take = b.emit("xor", first, flip)
            key = b.emit("reshape", b.emit("select", take, pk, kv), shape=(rows, size))
            index = b.emit("reshape", b.emit("select", take, pi, iv), shape=(rows, size))
            j //= 2
        k *= 2
    if size > n:
        key = b.emit("slice", key, start=(0, 0), limit=(rows, n), strides=(1, 1))
        index = b.emit("slice", index, start=(0, 0), limit=(rows, n), strides=(1, 1))
    return (b.emit("convert", key, dtype=np.dtype(np.bool_)) if boolean else key), index


def _sorts_first(b: Builder, a, ia, c, ic, n: int):
    """(a, ia) comes before (c, ic): padding (position >= n) last, then NumPy's order of the values
    (NaN last), then the position."""
    limit = b.emit("broadcast_in_dim", const(b, n), shape=ia.type.shape, dims=())
    pad_a, pad_c = (b.emit("compare", i, limit, direction="GE") for i in (ia, ic))
    less, equal = b.emit("compare", a, c, direction="LT"), b.emit("compare", a, c, direction="EQ")
    if is_float(a.type.dtype):
        nan_a, nan_c = (b.emit("compare", v, v, direction="NE") for v in (a, c))
        less = b.emit("or", less, b.emit("and", nan_c, b.emit("not", nan_a)))
        equal = b.emit("or", equal, b.emit("and", nan_a, nan_c))
    by_value = b.emit("or", less, b.emit("and", equal, b.emit("compare", ia, ic, direction="LT")))
    return b.emit("or", b.emit("and", b.emit("not", pad_a), pad_c),
                  b.emit("and", b.emit("compare", pad_a, pad_c, direction="EQ"), by_value))


# ---------------------------------------------------------------- short sorts inside loops

NETWORK_MAX = 16   # the longest 1-D sort inside a run-time loop made compare-exchanges


def in_loops_as_networks(block: Block, inside: bool = False) -> Block:
    """`block` with each 1-D sort of 2..NETWORK_MAX elements inside a run-time loop (`order =
    np.argsort(fvals)` of a Nelder-Mead simplex's 3 vertices) written as an odd-even
    transposition network of compare-exchanges on its elements: scalar work a native loop runs
    (a sort op kept the loop on the host, 2x NumPy's time; probe AZ). The network swaps only
    neighbours out of order, so it is stable, as the sort op is everywhere (NumPy's default
    argsort orders ties its own way on SIMD machines: the documented tie-order difference).
    `block` itself where there is none."""
    ops, changed = [], False
    for op in block.ops:
        if op.regions:
            regions = tuple(in_loops_as_networks(r, inside or op.name == "while") for r in op.regions)
            if any(new is not old for new, old in zip(regions, op.regions)):
                op = Op(op.name, op.operands, op.results, op.attrs, op.span, regions)
                changed = True
        elif inside and op.name == "sort" and op.operands[0].type.ndim == 1 \
                and 2 <= op.operands[0].type.shape[0] <= NETWORK_MAX:
            ops.extend(_network(op))
            changed = True
            continue
        ops.append(op)
    return Block(block.params, ops, block.results) if changed else block


def _network(op: Op) -> list[Op]:
    (x,) = op.operands
    n, boolean = x.type.shape[0], x.type.dtype == np.bool_
    b = Builder()
    b.span = op.span
    b.open_block()
    keys = b.emit("convert", x, dtype=np.dtype(np.uint8)) if boolean else x
    vals = [b.emit("reshape", b.emit("slice", keys, start=(k,), limit=(k + 1,), strides=(1,)), shape=()) for k in range(n)]
    index = [const(b, k) for k in range(n)]
    for r in range(n):
        for i in range(r % 2, n - 1, 2):
            swap = _before(b, vals[i + 1], vals[i])
            for seq in (vals, index) if op.attrs["with_index"] else (vals,):
                seq[i], seq[i + 1] = (b.emit("select", swap, seq[i + 1], seq[i]),
                                      b.emit("select", swap, seq[i], seq[i + 1]))
    outs = [b.emit("concatenate", *[b.emit("reshape", v, shape=(1,)) for v in vals], axis=0)]
    if boolean:
        outs[0] = b.emit("convert", outs[0], dtype=np.dtype(np.bool_))
    if op.attrs["with_index"]:
        outs.append(b.emit("concatenate", *[b.emit("reshape", v, shape=(1,)) for v in index], axis=0))
    ops = b.close_block(outs).ops
    # the sort's own results, as the network's (reshapes to the same shape)
    return ops + [Op("reshape", (new,), (old,), {"shape": old.type.shape}, op.span) for new, old in zip(outs, op.results)]
