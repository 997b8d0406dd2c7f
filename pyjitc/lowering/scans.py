"""scans: the IR op `scan` (cumsum, cumprod, ufunc.accumulate along the last axis of a 2-D array)
lowered by expanding it into other IR ops and lowering those. Where run-time loops run natively
(CPU), each row is one sequential loop inside one dispatch: NumPy's own order, so float results
round exactly as NumPy's accumulate does, in O(n). Elsewhere (GPU targets), log2(n) steps of
shift-and-combine (Hillis-Steele), whole-array ops a GPU runs in parallel."""
from __future__ import annotations

from ..ir.graph import Block, Builder, Op, Value
from .ir_builders import const, counted_loop, element, with_element


def expand(op: Op, native: bool) -> Block:
    """A block computing `op`'s result from its operand (read from outside the block)."""
    b = Builder()
    b.span = op.span
    b.open_block()
    (x,) = op.operands
    kind, identity = op.attrs["kind"], op.attrs["identity"]
    out = _sequential(b, x, kind) if native else _shift_and_combine(b, x, kind, identity)
    return b.close_block([out])


def _sequential(b: Builder, x: Value, kind: str) -> Value:
    """Each row accumulated in order, in one native loop nest over the array raveled: a 2-D array
    read in nested loops broke IREE 3.13's CollapseDimensions pass ("operand does not dominate
    this use"), as in frontend/numpy/linalg_blocked.py."""
    rows, n = x.type.shape
    flat = b.emit("reshape", x, shape=(rows * n,))

    def row(r, vals):
        (a,) = vals
        start = b.emit("mul", r, const(b, n))

        def step(k, vals):
            a, acc = vals
            i = b.emit("add", start, k)
            acc = b.emit(kind, acc, element(b, a, i))   # read before the write: updated in place
            return [with_element(b, a, acc, i), acc]
        a, _ = counted_loop(b, const(b, 1), const(b, n), [a, element(b, a, start)], step)
        return [a]
    (out,) = counted_loop(b, const(b, 0), const(b, rows), [flat], row)
    return b.emit("reshape", out, shape=(rows, n))


def _shift_and_combine(b: Builder, x: Value, kind: str, identity) -> Value:
    rows, n = x.type.shape
    step = 1
    while step < n:
        shifted = b.emit("slice", x, start=(0, 0), limit=(rows, n - step), strides=(1, 1))
        pad = b.emit("broadcast_in_dim", const(b, identity, x.type.dtype), shape=(rows, step), dims=())
        x = b.emit(kind, x, b.emit("concatenate", pad, shifted, axis=1))
        step *= 2
    return x
