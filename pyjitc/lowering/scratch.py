"""scratch: a run-time loop whose body writes into an array values computed from that same array
(`u[1:-1] = 0.25 * u[:-2] + 0.5 * u[1:-1] + 0.25 * u[2:]`, Jacobi and heat steps) cannot run as a
native loop as it is: computed element by element into the array, the values would read
neighbours already overwritten. Rewritten, each such update first computes its values into a
scratch array the loop carries, then copies them in: two updates that each consume the latest
version of their array, which native loops run in place (lowering/native_loops.py).

The same goes for two more orders of reads and writes (reverse passes of loops make both,
autodiff/reverse.py): array work still read after an array it reads was updated in place (the
cotangent's slice taken before zeros are written over it) is computed into a scratch array where
it is made; an array the body yields computed anew from its own carried array at other positions
(`g = pad(g[1:], ...) + ...`) is computed into a scratch array and copied over the carried one;
and one that takes another carried array's value from before the iteration (`ym2 = ym1`, a delay
line) is copied into a scratch array first and over its own at the end."""
from __future__ import annotations

import numpy as np

from ..ir.graph import Block, Op, Value
from . import in_place
from .ir_builders import I64

_MAKERS = {"dynamic_update_slice", "while", "if", "barrier"}


def _computed_in(body: Block):
    """A test of a value of `body`: made by array work in the body (not a buffer: not a
    parameter, nor an update's or a loop's or a branch's result)."""
    made = {r.id: op for op in body.ops for r in op.results}
    params = {p.id for p in body.params}

    def computed(value) -> bool:
        producer = made.get(value.id)
        while producer is not None and producer.name == "barrier":   # (the frontend materialises
            producer = made.get(producer.operands[0].id)            # such values behind one)
        return value.id not in params and producer is not None and producer.name not in _MAKERS
    return computed


def with_scratch(loop: Op) -> tuple[Op, list[Value]] | None:
    """`loop` with a scratch array for every update at the top of its body whose values are
    computed (not a buffer), and the scratch arrays' initial values (new values the caller gives
    a lowering to); None where there is no such update."""
    cond, body = loop.regions
    made = {r.id: op for op in body.ops for r in op.results}
    params = {p.id for p in body.params}
    ops, inits, scratch_params, scratch_results = [], [], [], []
    computed = _computed_in(body)

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

    # another carried array's value from before the iteration (`ym2 = ym1; ym1 = y[:, j].copy()`,
    # a recursive filter's delay line): copied into scratch before anything writes it, then over
    # this array's latest version at the end
    rotated = {i: into_scratch(v, loop.span)[0] for i, (v, p) in enumerate(zip(body.results, body.params))
               if p.type.size > 1 and v.id in params and v.id != p.id and v.type == p.type}
    stale = _stale_temporaries(body, computed) | reread_heavy(body, computed)
    remade = {}      # a stale temporary's id -> the scratch array holding it
    def branches_into_scratch(op: Op) -> Op:
        """An `if` whose branch yields an array computed anew over the one the other branch yields
        (`if better: tour[i:j + 1] = tour[i:j + 1][::-1].copy()` with run-time bounds, a 2-opt
        move; the masked write reads the array at other positions): that branch computes it into
        a scratch array the loop carries and copies it over its array; the `if` yields the
        scratch array too (the other branch, unchanged)."""
        regions = [Block(r.params, list(r.ops), list(r.results)) for r in op.regions]
        extra = []
        for j, region in enumerate(op.regions):
            other, made_here = op.regions[1 - j], _computed_in(region)
            for k, v in enumerate(region.results):
                buffer = in_place.yielded_buffer(other, other.results[k]) if v.type.size > 1 and made_here(v) else None
                if buffer is None or buffer.type != v.type or any(o.regions for o in region.ops):
                    continue
                space, zero, filled, copied = Value(v.type), Value(I64), Value(v.type), Value(v.type)
                inits.append(Value(v.type))
                scratch_params.append(space)
                zeros = (zero,) * v.type.ndim
                regions[j].ops += [
                    Op("constant", (), (zero,), {"value": np.asarray(0, np.int64)}, op.span),
                    Op("dynamic_update_slice", (space, v) + zeros, (filled,), {"in_bounds": True}, op.span),
                    Op("dynamic_update_slice", (in_place.newest_version(region, buffer), filled) + zeros, (copied,),
                       {"in_bounds": True}, op.span)]
                regions[j].results[k] = copied
                extra.append((j, filled, space))
        if not extra:
            return op
        for j, filled, space in extra:
            regions[j].results.append(filled)
            regions[1 - j].results.append(space)
        out = tuple(Value(filled.type) for _, filled, _ in extra)
        scratch_results.extend(out)
        return Op("if", op.operands, op.results + out, op.attrs, op.span, tuple(regions))

    for op in body.ops:
        op = substituted(op, remade)
        if op.name == "if":
            op = branches_into_scratch(op)
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
            elif not _reads_buffers(op.operands[0], made, params):
                # a new array made in the body and then updated (`f = np.zeros(n); f[1:] -= ...`,
                # a spring chain's forces): made in scratch, updated there (the loop ran on the host)
                filled, _ = into_scratch(op.operands[0], op.span)
                op = Op(op.name, (filled,) + op.operands[1:], op.results, op.attrs, op.span)
        if op.name == "dynamic_update_slice" and op.operands[1].type.size > 1 and computed(op.operands[1]):
            filled, _ = into_scratch(op.operands[1], op.span)
            op = Op(op.name, (op.operands[0], filled) + op.operands[2:], op.results, op.attrs, op.span)
        ops.append(op)
        for r in op.results:
            if r.id in stale:
                remade[r.id], _ = into_scratch(r, op.span)
    results = [remade.get(v.id, v) for v in body.results]
    newest = {p.id: p for p in body.params}     # a carried array -> its latest version in the body
    version_of = {p.id: p.id for p in body.params}
    for op in ops:
        if op.name in ("dynamic_update_slice", "barrier") and op.operands[0].id in version_of:
            version_of[op.results[0].id] = version_of[op.operands[0].id]
            newest[version_of[op.operands[0].id]] = op.results[0]
    def copied_over(p, values):
        """`values` copied over the carried array p's latest version (at the end of the body)."""
        zero, copied = Value(I64), Value(p.type)
        ops.append(Op("constant", (), (zero,), {"value": np.asarray(0, np.int64)}, loop.span))
        ops.append(Op("dynamic_update_slice", (newest[p.id], values) + (zero,) * p.type.ndim, (copied,),
                      {"in_bounds": True}, loop.span))
        return copied

    # another carried array's latest version, updated in the body (`v[1:-1] = ...; u, v = v, u`, a
    # swap): copied over this array's latest version at the end, before that other array takes
    # its own new value (a rotation's copy, next, consumes it)
    moved = [i for i, (v, p) in enumerate(zip(body.results, body.params))
             if i not in rotated and p.type.size > 1 and v.type == p.type
             and _updated_param(v, made, params) not in (None, p.id)]
    for i in moved:
        results[i] = copied_over(body.params[i], results[i])
    for i, filled in rotated.items():
        results[i] = copied_over(body.params[i], filled)
    # a carried array's new value that went into scratch as a stale temporary (`x += alpha * p`
    # before an `if` that writes p: conjugate gradients): copied over the array at the end
    for i, (v, p) in enumerate(zip(body.results, body.params)):
        if v.id in remade and i not in rotated and i not in moved and p.type.size > 1 and v.type == p.type:
            results[i] = copied_over(p, results[i])
            moved.append(i)
    # computed anew from its own array: into scratch, then copied over the array's latest version,
    # every such array filled before any is copied over (V's new values read ST's, a binomial tree)
    anew = [(i, p, *into_scratch(v, loop.span)) for i, (v, p) in enumerate(zip(results, body.params))
            if i not in rotated and i not in moved and p.type.size > 1 and computed(v) and v.type == p.type
            and not _rewritten_in_place(v, p, made)]
    for i, p, filled, zero in anew:
        copied = Value(p.type)
        ops.append(Op("dynamic_update_slice", (newest[p.id], filled) + (zero,) * p.type.ndim, (copied,),
                      {"in_bounds": True}, loop.span))
        results[i] = copied
    if not inits:
        return None
    # each scratch array yielded as its latest version (a new array updated in scratch: its updates')
    version = {v.id: i for i, v in enumerate(scratch_params)}
    for op in ops:
        if op.name in ("dynamic_update_slice", "barrier") and op.operands[0].id in version:
            version[op.results[0].id] = version[op.operands[0].id]
            scratch_results[version[op.operands[0].id]] = op.results[0]
    cond2 = Block(params=cond.params + [Value(v.type) for v in inits], ops=cond.ops, results=cond.results)
    body2 = Block(params=body.params + scratch_params, ops=ops, results=results + scratch_results)
    results = loop.results + tuple(Value(v.type) for v in inits)
    return Op("while", loop.operands + tuple(inits), results, loop.attrs, loop.span, (cond2, body2)), inits


def _reads_buffers(value: Value, made: dict, params: set, depth: int = 12) -> bool:
    """Whether the array work computing `value` reads a carried array or an update's result (not
    only constants and values from outside the loop), or is too deep to tell."""
    todo, seen = [(value, 0)], set()
    while todo:
        v, d = todo.pop()
        producer = made.get(v.id)
        if v.id in params or producer is not None and producer.name in _MAKERS:
            return True
        if producer is None or v.id in seen:
            continue
        if d >= depth:
            return True
        seen.add(v.id)
        todo.extend((o, d + 1) for o in producer.operands)
    return False


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


# ops whose every element costs a contraction, a reduction or a transcendental function
_HEAVY = {"dot_general", "reduce", "exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "logistic", "pow",
          "atan2", "cbrt"}
REREAD_ELEMENTS = 512    # smaller temporaries are recomputed: a scratch array costs a write and a read


def reread_heavy(body: Block, computed=None) -> set[int]:
    """Ids of temporaries at the top of `body` whose elements each cost heavy work (_HEAVY, or
    reading such a temporary) and that are read more than once per element: by two ops, by a
    contraction whose every output reads them (`X.T @ (p - y)` with `p = 1 / (1 + np.exp(-(X @
    w)))`, gradient descent: each of the 16 outputs recomputed the 5000 exps and row products,
    13x NumPy's time), by a broadcast, or inside a nested loop or branch. Computed into a scratch
    array where they are made, they are computed once."""
    computed = computed or _computed_in(body)
    readers: dict[int, list] = {}
    for op in body.ops:
        for vid in {v.id for v in (*op.operands, *in_place._captured_values(op))}:
            readers.setdefault(vid, []).append(op)
    for v in body.results:
        readers.setdefault(v.id, []).append(None)
    heavy, out = set(), set()
    for op in body.ops:
        if op.regions or op.name in _MAKERS:
            continue
        for r in op.results:
            if r.type.size <= 1 or not computed(r) or not (op.name in _HEAVY or any(v.id in heavy for v in op.operands)):
                continue
            if r.type.size >= REREAD_ELEMENTS and _reread(r, readers.get(r.id, [])):
                out.add(r.id)
            else:
                heavy.add(r.id)
    return out


def _reread(r: Value, readers: list) -> bool:
    if len(readers) != 1 or readers[0] is None:
        return len(readers) > 1
    op = readers[0]
    if op.regions:
        return True
    if op.name == "broadcast_in_dim":
        return op.results[0].type.size > r.type.size
    if op.name == "dot_general":
        a, _ = (t.type for t in op.operands)
        k = int(np.prod([a.shape[i] for i in op.attrs["lhs_contract"]], dtype=np.int64))
        return op.results[0].type.size * k > r.type.size
    return False


def _stale_temporaries(body: Block, computed) -> set[int]:
    """Ids of array work at the top of `body` (temporaries: computed element by element where
    they are used) still used after an array they read is updated in place, or handed to a loop
    or branch that may update it."""
    last_use = {}                 # value id -> position of the last op reading it (len(ops): the body's result)
    for k, op in enumerate(body.ops):
        for v in (*op.operands, *in_place._captured_values(op)):
            last_use[v.id] = k
    for v in body.results:
        last_use[v.id] = len(body.ops)
    root: dict[int, int] = {}     # an array's later versions -> its first
    reads: dict[int, set] = {}    # temporary id -> the arrays (first versions) it reads
    defined: dict[int, int] = {}
    for k, op in enumerate(body.ops):
        if op.name in ("dynamic_update_slice", "barrier") and not computed(op.operands[0]):
            root[op.results[0].id] = root.get(op.operands[0].id, op.operands[0].id)
        for r in op.results:
            if r.type.size > 1 and computed(r) and not op.regions:
                defined[r.id] = k
                reads[r.id] = set().union(*[reads.get(u.id, set()) if u.id in reads else
                                            ({root.get(u.id, u.id)} if u.type.size > 1 and not computed(u) else set())
                                            for u in op.operands])
    stale = set()
    for k, op in enumerate(body.ops):
        written = set()
        if op.name in ("dynamic_update_slice", "barrier") and not computed(op.operands[0]):
            written = {root.get(op.operands[0].id, op.operands[0].id)}
        elif op.name in ("while", "if"):
            written = {root.get(v.id, v.id) for v in (*op.operands, *in_place._captured_values(op)) if v.type.size > 1 and not computed(v)}
        if not written:
            continue
        for vid, start in defined.items():
            if start < k and reads[vid] & written and last_use.get(vid, -1) > k:
                stale.add(vid)
    return stale


def substituted(op: Op, sub: dict) -> Op:
    """`op` reading sub[v.id] for every value v it (or an op in its regions) reads that `sub` names."""
    if not sub or not any(v.id in sub for v in (*op.operands, *in_place._captured_values(op))):
        return op
    regions = tuple(Block(r.params, [substituted(o, sub) for o in r.ops], [sub.get(v.id, v) for v in r.results])
                    for r in op.regions)
    return Op(op.name, tuple(sub.get(v.id, v) for v in op.operands), op.results, op.attrs, op.span, regions)


def _updated_param(value: Value, made: dict, params: set) -> int | None:
    """The id of the carried array `value` is a later version of through updates in place
    (dynamic_update_slice, barrier), if it is one and not that array itself."""
    start = value
    while value.id not in params:
        op = made.get(value.id)
        if op is None or op.name not in ("dynamic_update_slice", "barrier"):
            return None
        value = op.operands[0]
    return value.id if value is not start else None


def _rewritten_in_place(value: Value, param: Value, made: dict, depth: int = 24) -> bool:
    """Whether `value` reads its carried array `param` only element for element (elementwise ops,
    reshapes and barriers down to the array itself): native loops write such a value over the
    array in place (in_place._rewrite_ok), no scratch needed."""
    if value.id == param.id or value.type.size == 1:
        return True
    op = made.get(value.id)
    if op is None:
        return True      # from outside the loop
    if not depth:
        return False
    if op.name in ("constant", "iota"):
        return True
    if op.name in ("barrier", "reshape") or op.name in in_place._ELEMENTWISE_NAMES:
        return all(_rewritten_in_place(u, param, made, depth - 1) for u in op.operands)
    return False
