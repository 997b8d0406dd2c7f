"""appends: `results.append(value)` once per pass of a run-time `for` loop over a range of known
length (a loss history, values collected per step), kept as a run-time loop: the list's new items
are rows of an array the loop carries, written at the pass's counter, and become the list's items
after the loop. Without this the loop was unrolled (a list can't be changed at run time): 100
epochs of a logistic regression took 17 s to compile.

Where it applies: the statement is the append itself, directly in the body of the loop (not in a
branch or an inner loop), the loop is the outermost run-time loop, has no break or return, and its
body reads the list nowhere else; the list exists before the loop. The first interpretation of the
body finds the appended value's type and asks for another (AppendPlan); anything else keeps the
old behaviour (the loop unrolled)."""
from __future__ import annotations

import ast

import numpy as np

from .values import NeedStatic, Traced


class AppendPlan(Exception):
    """The type of the values one append statement adds: trace() records it and interprets again."""

    def __init__(self, key, shape, dtype, weak):
        super().__init__(key)
        self.key, self.plan = key, (tuple(shape), np.dtype(dtype), weak)


def _key(marker, node):
    return (marker, node.lineno, node.col_offset)


def _buffer(key) -> str:
    return f"append?{key[0]}:{key[1]}:{key[2]}"


def _appended(node):
    """(list name, value node) of a statement `name.append(value)`, else None."""
    call = node.value if isinstance(node, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append" \
            and isinstance(call.func.value, ast.Name) and len(call.args) == 1 and not call.keywords:
        return call.func.value.id, call.args[0]
    return None


def _eligible(loop, stmt, name) -> bool:
    if not any(s is stmt for s in loop.body):
        return False
    for n in ast.walk(loop):
        if isinstance(n, (ast.Break, ast.Return, ast.Yield)):
            return False
    reads = [n for n in ast.walk(loop) if isinstance(n, ast.Name) and n.id == name]
    return len(reads) == 1      # the append's own `name`


def statement(fc, node) -> bool:
    """Handle `name.append(value)` as a row of a carried array (see the module docstring); False
    where this does not apply (the caller runs the statement as usual)."""
    em = fc.em
    found = _appended(node)
    if found is None or not em.append_loops or em.branch_depth or em.loop_depth != 1:
        return False
    name, value_node = found
    marker, (loop, count, counter) = next(reversed(em.append_loops.items()))
    target = fc.lookup(name)
    if not isinstance(target, list) or not _eligible(loop, node, name):
        return False
    key = _key(marker, node)
    value = fc.visit(value_node)
    t = value if isinstance(value, Traced) else None
    plan = em.append_plans.get(key)
    if t is None or (t.ndim and t.type.size == 0):
        raise NeedStatic({marker})
    if plan is None:
        raise AppendPlan(key, t.shape, t.dtype, t.weak)
    shape, dtype, weak = plan
    if t.shape != shape or t.dtype != dtype or t.weak != weak:
        raise NeedStatic({marker})      # a value of another type on a later pass: unrolled
    k = fc.env[counter]
    row = em.emit("reshape", em.cast(t, dtype), shape=(1,) + shape)
    index = em.cast(em.asarray(k), np.int64)
    zeros = [em.constant(np.int64(0))] * len(shape)
    buf = _buffer(key)
    fc.env[buf] = em.emit("dynamic_update_slice", fc.env[buf], row, index, *zeros)
    em.append_targets[key] = target
    return True


def start(fc, loop, count, marker, counter) -> list:
    """Before a run-time loop's body: the arrays its planned appends fill (bound in the env, so
    the loop carries them). Returns their keys."""
    em = fc.em
    if isinstance(count, Traced) or em.loop_depth or em.branch_depth:
        return []
    em.append_loops[marker] = (loop, count, counter)
    keys = [key for key in em.append_plans if key[0] == marker]
    for key in keys:
        shape, dtype, _ = em.append_plans[key]
        fc.env[_buffer(key)] = em.full(0, dtype, (count,) + shape)
    return keys


def finish(fc, marker, keys, count) -> None:
    """After the loop: each list gets the rows its append wrote, in order."""
    em = fc.em
    em.append_loops.pop(marker, None)
    for key in keys:
        buf = fc.env.pop(_buffer(key))
        target = em.append_targets.pop(key, None)
        if target is None:
            continue
        shape, dtype, weak = em.append_plans[key]
        for k in range(count):
            row = em.emit("reshape", em.emit("slice", buf, start=(k,) + (0,) * len(shape),
                                             limit=(k + 1,) + shape, strides=(1,) * (len(shape) + 1)), shape=shape)
            target.append(Traced(row.value, weak, row.params) if weak is not None else row)
