"""if_conversion: the `if`s of a run-time loop whose branches are small array work made straight-
line code, both branches computed and each result chosen by a select, where that makes the loop
one native loop (native_loops.eligible). Every IR op is a value (a failed check is an error code
the select chooses like any other result), so computing the branch not taken changes nothing but
time, and SMALL bounds that.

Such a loop (a perceptron's or an SGD step's `if x @ w < 1: w = w + x else: w = w * 0.5`) was a
host loop: each branch computes its array anew, which a native loop can't write in place (the
in-place rules of native_loops/_InPlace). Chosen by select, the new array is computed at the
loop body's top level, where in_place.check_lazy writes it over the carried one (2000 steps of
3-vectors: 16.6 ms as a host loop, NumPy 4.2 ms). The function's IR is not changed: a converted
copy is lowered (it may be lowered again without native loops)."""
from __future__ import annotations

import numpy as np

from ..ir.graph import Block, Op, Value

SMALL = 64     # the most elements of any value in a converted branch


def converted(block: Block, eligible) -> Block:
    """`block` with each run-time loop at its top level that `eligible` refuses, but accepts once
    its small `if`s are straight-line code, replaced by that loop; `block` itself if none is."""
    ops, changed = [], False
    for op in block.ops:
        if op.name == "while" and not eligible(op):
            flat = _flattened_loop(op)
            if flat is not None and eligible(flat):
                ops.append(flat)
                changed = True
                continue
        ops.append(op)
    return Block(block.params, ops, block.results) if changed else block


def _flattened_loop(loop: Op) -> Op | None:
    regions = [_flattened(r) for r in loop.regions]
    if all(new is old for new, old in zip(regions, loop.regions)):
        return None
    return Op(loop.name, loop.operands, loop.results, loop.attrs, loop.span, tuple(regions))


def _flattened(block: Block) -> Block:
    """`block` with its small ifs (innermost first, nested loops included) straight-line code."""
    ops, changed = [], False
    for op in block.ops:
        if op.name == "while":
            new = _flattened_loop(op)
            changed |= new is not None
            ops.append(new or op)
            continue
        if op.name == "if":
            branches = [_flattened(r) for r in op.regions]
            if _small(branches, op):
                ops.extend(_chosen(op, branches))
                changed = True
                continue
            if any(new is not old for new, old in zip(branches, op.regions)):
                op = Op(op.name, op.operands, op.results, op.attrs, op.span, tuple(branches))
                changed = True
        ops.append(op)
    return Block(block.params, ops, block.results) if changed else block


def _small(branches: list[Block], op: Op) -> bool:
    """Two branches of region-free ops whose work is small: every value they make and every array
    they compute from is small (a slice of a large array reads only its own elements)."""
    values = [v for b in branches for o in b.ops
              for v in (o.results if o.name in _READS_ELEMENTS else (*o.operands, *o.results))]
    return len(branches) == 2 and not any(o.regions for b in branches for o in b.ops) \
        and all(v.type.size <= SMALL for v in values + list(op.results))


_READS_ELEMENTS = ("slice", "dynamic_slice", "take")


def _chosen(op: Op, branches: list[Block]) -> list[Op]:
    """Both branches' ops, then a select per result (its value the if's own result)."""
    pred = op.operands[0]
    out = [o for b in branches for o in b.ops]
    then, orelse = (b.results for b in branches)
    for t, f, result in zip(then, orelse, op.results):
        chooser = pred
        if result.type.shape:
            chooser = Value(result.type.with_dtype(np.dtype(np.bool_)))
            out.append(Op("broadcast_in_dim", (pred,), (chooser,), {"shape": result.type.shape, "dims": ()}, op.span))
        out.append(Op("select", (chooser, t, f), (result,), {}, op.span))
    return out
