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

from ..ir.graph import Block, Op, Value, cloned
from .scratch import substituted

SMALL = 64     # the most elements of any value in a converted branch


def converted(block: Block, eligible, native=None) -> Block:
    """`block` with each run-time loop at its top level that `eligible` refuses, but accepts once
    its small `if`s are straight-line code, replaced by that loop; or, where an `if` in its body
    tests a value the loop does not change, by an `if` choosing between two loops, each `native`
    (default: `eligible`); `block` itself if none is."""
    native = native or eligible
    ops, changed = [], False
    for op in block.ops:
        if op.name == "while" and not eligible(op):
            flat = _flattened_loop(op)
            if flat is not None and eligible(flat):
                ops.append(flat)
                changed = True
                continue
            found = unswitched(op)
            if found is not None and all(native(loop) for loop in found[1]):
                ops.extend(found[0])
                changed = True
                continue
        ops.append(op)
    return Block(block.params, ops, block.results) if changed else block


# ---------------------------------------------------------------- loop unswitching

def unswitched(loop: Op) -> tuple[list[Op], list[Op]] | None:
    """For a loop whose body has an `if` (at its top level) on a value computed from values the
    loop does not change (`if c > 0:` in an upwind scheme's time loop, c an argument): (ops, the
    two loops) where ops compute that condition once and choose between the loop with the `then`
    branch in place of the `if` and the loop with the `else` branch (each branch computed anew an
    array from its own neighbours, which kept the loop on the host: 1.5x NumPy's time). None where
    there is no such `if`."""
    cond, body = loop.regions
    inside = {p.id for r in loop.regions for p in r.params}
    invariant: dict[int, Op] = {}   # value id -> the body's op computing it from invariant values
    for op in body.ops:
        if not op.regions and all(v.id in invariant or v.id not in inside for v in op.operands):
            invariant.update((r.id, op) for r in op.results)
        inside.update(r.id for r in op.results)
        if op.name == "if" and (op.operands[0].id in invariant or op.operands[0].id not in inside):
            break
    else:
        return None
    k = body.ops.index(op)
    env: dict = {}
    hoisted = [cloned(o, env) for o in _computing(op.operands[0], invariant, body.ops[:k])]
    loops = []
    for branch in op.regions:
        sub = {r.id: v for r, v in zip(op.results, branch.results)}
        ops = body.ops[:k] + branch.ops + [substituted(o, sub) for o in body.ops[k + 1:]]
        one = Op("while", loop.operands, loop.results, loop.attrs, loop.span,
                 (cond, Block(body.params, ops, [sub.get(v.id, v) for v in body.results])))
        loops.append(cloned(one, {}))
    regions = tuple(Block([], [one], list(one.results)) for one in loops)
    choice = Op("if", (env.get(op.operands[0].id, op.operands[0]),), loop.results, {}, loop.span, regions)
    return hoisted + [choice], loops


def _computing(value: Value, invariant: dict, ops: list[Op]) -> list[Op]:
    """The ops among `ops` (in order) that `value` is computed by, through `invariant`."""
    needed, todo = set(), [value.id]
    while todo:
        op = invariant.get(todo.pop())
        if op is not None and id(op) not in needed:
            needed.add(id(op))
            todo.extend(v.id for v in op.operands)
    return [o for o in ops if id(o) in needed]
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
