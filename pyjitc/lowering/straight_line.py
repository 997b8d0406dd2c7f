"""straight_line: long runs of scalar work outside loops (an unrolled dynamic programme over a
Python list, `dp[i][j] = min(dp[i - 1][j] + 1, ...)` for every cell; a recursion unrolled at
compile time) as one native loop that runs once. IREE makes a dispatch of nearly every scalar op
at the top level of a function and its compile time grows faster than their number (an edit
distance of 8 by 7 cells, about 3,000 scalar ops: 370 s); in one native loop they are a few
thousand LLVM instructions (lowering/scalar_loop.py).

A run is a maximal sequence of ops at a function's top level whose values are all single elements
(reads of one element of an array included; ifs and loops of such work too) and that native loops
can lower (native_loops.eligible decides, on the loop made). The loop's body is the run itself; the
run's values that later ops read leave it packed, one array per dtype (each value a buffer of its
own would pass IREE's 64 buffers per dispatch), and are read back one element each."""
from __future__ import annotations

import dataclasses

import numpy as np

from ..ir.dims import is_symbolic
from ..ir.graph import Block, Builder, Op, Value
from ..ir.types import TensorType
from . import native_loops
from .ir_builders import I64, const, with_element

MIN_RUN = 64     # ops; shorter runs stay as they are (IREE compiles them quickly)


def wrapped(block: Block) -> Block:
    """`block` with each long run of scalar ops at its top level made a loop that runs once; the
    block itself where there is none (the function's IR is not changed: it may be lowered again)."""
    ops = block.ops
    runs, start = [], None
    for k, op in enumerate(ops + [None]):
        if op is not None and _scalar(op):
            start = k if start is None else start
            continue
        if start is not None and k - start >= MIN_RUN:
            runs.append((start, k))
        start = None
    if not runs:
        return block
    constants = {v.id for op in ops if op.name == "constant" for v in op.results}
    out, renamed, at = [], {}, 0
    for start, stop in runs:
        out.extend(_renamed(op, renamed) for op in ops[at:start])
        run = [_renamed(op, renamed) for op in ops[start:stop]]
        later = _read_after(ops[stop:], block.results)
        loop_ops, results = _once(run, later, constants)
        if loop_ops is None:
            out.extend(run)
        else:
            out.extend(loop_ops)
            renamed.update(results)
        at = stop
    out.extend(_renamed(op, renamed) for op in ops[at:])
    return Block(block.params, out, [renamed.get(v.id, v) for v in block.results])


def _scalar(op: Op) -> bool:
    """Scalar work: single elements in and out (or one element read from an array); an `if`
    or a loop whose regions are scalar work."""
    if (op.regions and op.name not in ("if", "while")) or not all(map(_single, op.results)):
        return False
    if any(is_symbolic(v.type.shape) for v in op.operands):
        return False
    if not all(map(_single, op.operands)) and op.name not in ("slice", "dynamic_slice"):
        return False
    if not all(_scalar(inner) for r in op.regions for inner in r.ops):
        return False
    return native_loops.op_ok(op)


def _single(v: Value) -> bool:
    """One element (a shape of run-time sizes is not: its size can't be asked)."""
    return not is_symbolic(v.type.shape) and v.type.size == 1


def _read_after(ops: list[Op], results: list[Value]) -> set[int]:
    seen = {v.id for v in results}

    def walk(block_ops):
        for op in block_ops:
            seen.update(v.id for v in op.operands)
            for r in op.regions:
                seen.update(v.id for v in r.results)
                walk(r.ops)
    walk(ops)
    return seen


MAX_INPUTS = 32   # values from outside a run, each an input buffer of the dispatch (IREE allows 64
# buffers: "dispatch requiring 244 bindings exceeds limit of 64"); the values it gives later ops
# leave it packed, one array per dtype


def _once(run: list[Op], later: set[int], constants: set[int]):
    """The ops of a loop running `run` once, and {value id -> its value after the loop} for the
    run's values later ops read (carried out in one array per dtype, each value at its own
    position); (None, None) where native loops can't take it, or it would read more than
    MAX_INPUTS values made outside it (constants are made inside)."""
    made = {v.id for op in run for v in op.results}
    inputs = {v.id for op in run for v in op.operands if v.id not in made and v.id not in constants}
    if len(inputs) > MAX_INPUTS:
        return None, None
    groups: dict = {}
    for v in (v for op in run for v in op.results if v.id in later):
        groups.setdefault(v.type.dtype, []).append(v)
    groups = list(groups.items())
    b = Builder()
    b.span = run[0].span
    b.open_block()
    inits = [b.emit("constant", value=np.zeros(len(vs), dtype)) for dtype, vs in groups]
    zero = const(b, 0)
    types = [I64] + [TensorType((len(vs),), dtype) for dtype, vs in groups]
    cond = b.open_block(types)
    b.close_block([b.emit("compare", cond.params[0], const(b, 1), direction="LT")])
    body = b.open_block(types)
    body.ops.extend(run)
    step = b.emit("add", body.params[0], const(b, 1))
    packed = []
    for (dtype, vs), array in zip(groups, body.params[1:]):
        for k, v in enumerate(vs):
            array = with_element(b, array, v, const(b, k))
        packed.append(array)
    b.close_block([step] + packed)
    outs = b.emit("while", zero, *inits, regions=(cond, body))
    loop = b.blocks[-1].ops[-1]
    if not native_loops.eligible(loop):
        return None, None
    values = {}
    for (dtype, vs), array in zip(groups, outs[1:]):
        for k, v in enumerate(vs):
            item = b.emit("slice", array, start=(k,), limit=(k + 1,), strides=(1,))
            values[v.id] = b.emit("reshape", item, shape=v.type.shape)
    return b.close_block([]).ops, values


def _renamed(op: Op, renamed: dict) -> Op:
    if not renamed:
        return op
    operands = tuple(renamed.get(v.id, v) for v in op.operands)
    regions = tuple(_renamed_block(r, renamed) for r in op.regions)
    if all(a is b for a, b in zip(operands, op.operands)) and all(a is b for a, b in zip(regions, op.regions)):
        return op
    return dataclasses.replace(op, operands=operands, regions=regions)


def _renamed_block(block: Block, renamed: dict) -> Block:
    ops = [_renamed(op, renamed) for op in block.ops]
    results = [renamed.get(v.id, v) for v in block.results]
    if all(a is b for a, b in zip(ops, block.ops)) and all(a is b for a, b in zip(results, block.results)):
        return block
    return Block(block.params, ops, results)
