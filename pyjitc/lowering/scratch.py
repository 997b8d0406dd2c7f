"""scratch: a run-time loop whose body writes into an array values computed from that same array
(`u[1:-1] = 0.25 * u[:-2] + 0.5 * u[1:-1] + 0.25 * u[2:]`, Jacobi and heat steps) cannot run as a
native loop as it is: computed element by element into the array, the values would read
neighbours already overwritten. Rewritten, each such update first computes its values into a
scratch array the loop carries, then copies them in: two updates that each consume the latest
version of their array, which native loops run in place (lowering/native_loops.py)."""
from __future__ import annotations

import numpy as np

from ..ir.graph import Block, Op, Value
from .ir_builders import I64

_MAKERS = {"dynamic_update_slice", "while", "if", "barrier"}


def with_scratch(loop: Op) -> tuple[Op, list[Value]] | None:
    """`loop` with a scratch array for every update at the top of its body whose values are
    computed (not a buffer), and the scratch arrays' initial values (new values the caller gives
    a lowering to); None where there is no such update."""
    cond, body = loop.regions
    made = {r.id: op for op in body.ops for r in op.results}
    params = {p.id for p in body.params}
    ops, inits, scratch_params, scratch_results = [], [], [], []

    def computed(value) -> bool:
        """Made by array work in the body (not a buffer: not a parameter, nor an update's result)."""
        producer = made.get(value.id)
        while producer is not None and producer.name == "barrier":   # (the frontend materialises
            producer = made.get(producer.operands[0].id)            # such values behind one)
        return value.id not in params and producer is not None and producer.name not in _MAKERS

    def into_scratch(value, span):
        """`value` computed into a new scratch array the loop carries: the filled scratch array."""
        space, zero, filled = Value(value.type), Value(I64), Value(value.type)
        ops.append(Op("constant", (), (zero,), {"value": np.asarray(0, np.int64)}, span))
        ops.append(Op("dynamic_update_slice", (space, value) + (zero,) * value.type.ndim, (filled,),
                      {"in_bounds": True}, span))
        inits.append(Value(value.type))
        scratch_params.append(space)
        scratch_results.append(filled)
        return filled, zero

    for op in body.ops:
        if op.name == "dynamic_update_slice" and op.operands[0].type.size > 1 and computed(op.operands[0]):
            # the whole array computed anew (`y[:k] += alpha * y[:k][::-1]` with a run-time k: a
            # select over y) and then updated: computed into scratch, copied over the version of
            # the array it was computed from, then updated there
            base = _version_read(op.operands[0], made, params)
            if base is not None:
                filled, zero = into_scratch(op.operands[0], op.span)
                copied = Value(base.type)
                ops.append(Op("dynamic_update_slice", (base, filled) + (zero,) * base.type.ndim, (copied,),
                              {"in_bounds": True}, op.span))
                op = Op(op.name, (copied,) + op.operands[1:], op.results, op.attrs, op.span)
        if op.name == "dynamic_update_slice" and op.operands[1].type.size > 1 and computed(op.operands[1]):
            filled, _ = into_scratch(op.operands[1], op.span)
            op = Op(op.name, (op.operands[0], filled) + op.operands[2:], op.results, op.attrs, op.span)
        ops.append(op)
    if not inits:
        return None
    cond2 = Block(params=cond.params + [Value(v.type) for v in inits], ops=cond.ops, results=cond.results)
    body2 = Block(params=body.params + scratch_params, ops=ops, results=body.results + scratch_results)
    results = loop.results + tuple(Value(v.type) for v in inits)
    return Op("while", loop.operands + tuple(inits), results, loop.attrs, loop.span, (cond2, body2)), inits


def _version_read(value: Value, made: dict, params: set, depth: int = 12) -> Value | None:
    """The buffer (a loop parameter or an update's result) of `value`'s type that the array work
    computing `value` reads, nearest first: the version of the array it is computed anew from."""
    todo, seen = [(value, 0)], set()
    while todo:
        v, d = todo.pop(0)
        producer = made.get(v.id)
        if v is not value and v.type == value.type and (v.id in params or (producer is not None and producer.name in _MAKERS)):
            return v
        if producer is None or d >= depth or v.id in seen or (v is not value and producer.name in _MAKERS):
            continue
        seen.add(v.id)
        todo.extend((o, d + 1) for o in producer.operands)
    return None
