"""ir_builders: the typed-IR pieces the lowering's own expansions are built from (lowering/scans.py,
lowering/sorts.py): int64 and other constants, counted and general while loops, and reads and
writes of one element of a 1-D array at a position proven in range (native loops drop the clamp)."""
from __future__ import annotations

import numpy as np

from ..ir.graph import Builder, Value
from ..ir.types import TensorType

I64 = TensorType((), np.dtype(np.int64))


def const(b: Builder, value, dtype=np.int64) -> Value:
    return b.emit("constant", value=np.asarray(value, dtype=dtype))


def counted_loop(b: Builder, lo: Value, hi: Value, init: list, body) -> list:
    """`for k in range(lo, hi): vals = body(k, vals)` as one IR while op."""
    types = [v.type for v in init] + [I64]
    cond = b.open_block(types)
    b.close_block([b.emit("compare", cond.params[-1], hi, direction="LT")])
    block = b.open_block(types)
    *vals, k = block.params
    outs = body(k, list(vals))
    b.close_block(list(outs) + [b.emit("add", k, const(b, 1))])
    return list(b.emit("while", *init, lo, regions=(cond, block))[:-1])


def while_loop(b: Builder, init: list, cond, body) -> list:
    """`while cond(vals): vals = body(vals)` as one IR while op."""
    types = [v.type for v in init]
    test = b.open_block(types)
    b.close_block([cond(list(test.params))])
    step = b.open_block(types)
    b.close_block(body(list(step.params)))
    return list(b.emit("while", *init, regions=(test, step)))


def element(b: Builder, a: Value, i: Value) -> Value:
    """a[i] of a 1-D array, i in range."""
    return b.emit("reshape", b.emit("dynamic_slice", a, i, sizes=(1,), in_bounds=True), shape=())


def with_element(b: Builder, a: Value, v: Value, i: Value) -> Value:
    """a with a[i] = v (a 1-D array, i in range)."""
    return b.emit("dynamic_update_slice", a, b.emit("reshape", v, shape=(1,)), i, in_bounds=True)
