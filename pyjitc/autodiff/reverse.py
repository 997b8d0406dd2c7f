"""reverse: typed IR Function -> the same Function extended with its reverse pass (the gradient of
one real scalar result with respect to chosen parameters). Works on the IR the frontend made,
after it: the forward ops stay as they are, the backward ops are appended; both are lowered,
compiled and cached by the usual machinery.

- Straight-line code: one VJP rule per primitive (rules.py), applied in reverse order, cotangents
  summed where a value is read several times. In-place updates are dynamic_update_slice ops in
  the IR (SSA), so they need nothing special.
- `if`: the backward pass is an `if` on the same predicate; each branch recomputes its forward
  ops (cloned) and runs their reverse pass, yielding the cotangents of what the branch read from
  outside.
- `while`: the loop counts its trips N, and is reversed by nested checkpointing on L levels
  (LOOP_LEVELS) of K slots (LOOP_SLOTS, LOOP_MEMORY_BYTES): level l cuts its trips into parts
  of K ** (l - 1), re-runs the loop storing each part's first state, then reverses the parts
  from the last one level down; level 1 recomputes a part's (<= K) states into K slots and
  steps back through them, each step recomputing one body and running its reverse pass.
  Memory: about L * K copies of the loop state whatever N, for N <= K ** L trips; time: one
  forward pass per level a loop needs (a level with a single part costs nothing), plus the
  backward pass. Beyond K ** L trips the gradient is NaN (and a top-level loop raises RunError)."""
from __future__ import annotations

import os

import numpy as np

from ..errors import JitError
from ..ir.graph import Block, Builder, Function, Op, Value, cloned
from ..ir.types import TensorType, is_complex, is_float
from .rules import COMPLEX_OK, inexact
from .linalg import custom_vjp
from .rules import ZERO, Emit, vjp

# K, the checkpoint slots per level: N <= K ** L trips. IREE 3.13 copies a loop-carried buffer on
# every update, so the backward pass moves about N * K copies of the loop state: a small K is
# faster (1-D stencil, 10,000 float64 x 500 steps, one loaded run each: K = 32, L = 3: 36.2x the
# forward time; K = 16, L = 4: 19.2x; K = 8, L = 5: 8.9x; `bench/bench_autodiff.py --case
# stencil` with PYJITC_GRAD_LOOP_SLOTS / _LEVELS), and K = 8 on 5 levels keeps 32,768 trips in
# 40 states instead of 96.
LOOP_SLOTS = int(os.environ.get("PYJITC_GRAD_LOOP_SLOTS", 8))
LOOP_MEMORY_BYTES = int(os.environ.get("PYJITC_GRAD_LOOP_MEMORY", 256 << 20))   # K shrinks to fit 2K states
# L, the checkpoint levels: N <= K ** L trips, with L * K + 1 copies of the loop state. A level
# costs one forward pass more, only for loops that need it (more than K ** (L - 1) trips).
LOOP_LEVELS = int(os.environ.get("PYJITC_GRAD_LOOP_LEVELS", 5))
MIN_SLOTS = 8
I64 = TensorType((), np.dtype(np.int64))


def loop_slots(types) -> int:
    """K for a loop carrying values of `types` (about L * K copies of them kept)."""
    state = sum(t.size * t.dtype.itemsize for t in types) or 1
    return int(max(MIN_SLOTS, min(LOOP_SLOTS, LOOP_MEMORY_BYTES // (max(2, LOOP_LEVELS) * state))))


def _defined(block: Block) -> set[int]:
    ids = {p.id for p in block.params}
    for op in block.ops:
        ids.update(r.id for r in op.results)
        for r in op.regions:
            ids |= _defined(r)
    return ids


def _reads(block: Block) -> list[Value]:
    out = [v for op in block.ops for v in op.operands] + list(block.results)
    for op in block.ops:
        for r in op.regions:
            out += _reads(r)
    return out


def captures(op: Op) -> list[Value]:
    """The values an op's regions read (or yield) that are defined outside them, in first-read order."""
    inside = set()
    for r in op.regions:
        inside |= _defined(r)
    seen, out = set(), []
    for r in op.regions:
        for v in _reads(r):
            if v.id not in inside and v.id not in seen:
                seen.add(v.id)
                out.append(v)
    return out


def activity(block: Block, active: set[int]) -> None:
    """Add to `active` the values that depend on an active one (conservatively: everything a loop
    carries, once anything about the loop is active)."""
    for op in block.ops:
        reads = [v.id for v in op.operands] + ([v.id for v in captures(op)] if op.regions else [])
        if not any(i in active for i in reads):
            continue
        active.update(r.id for r in op.results)
        for region in op.regions:
            active.update(p.id for p in region.params)
            activity(region, active)


class Reverse:
    def __init__(self, builder: Builder, active: set[int], guard_loops: bool = False, custom=None):
        # guard_loops: the recomputation loops yield their counter and state (not the checkpoint
        # buffers) through the while lowering's select guard (ir/ops.py). IREE 3.13 crashed
        # compiling some gradients without it (iree-stream's resource usage analysis of a
        # scf.while whose canonicalized form dropped a folded carried value: 27 of 150 programs
        # of tests/fuzz_gradients.py seed 3); with it, IREE fails on some native loops and the
        # stencil gradient is ~10% slower, so it is the retry after a failed compile (api.py).
        self.guard_loops = guard_loops
        self.b = builder
        self.e = Emit(builder)
        self.active = active
        self.custom = custom or {}        # result id -> a closed-form VJP (linalg.py's CUSTOM)
        self.counted: set[int] = set()    # while ops given a trip counter (its last carried value)
        self.overflows: list = []         # (bool[] "more trips than K * K", message) of top-level loops
        self._pending: list = []          # (while op, the constant op to insert before it)

    # -- cotangent bookkeeping
    def differentiable(self, v: Value) -> bool:
        return v.id in self.active and inexact(v.type.dtype)

    def accumulate(self, cts: dict, v: Value, g: Value | None) -> None:
        if g is None or not self.differentiable(v):
            return
        cts[v.id] = self.e.add(cts[v.id], g) if v.id in cts else g

    def ct_or_zero(self, cts: dict, v: Value, t: TensorType | None = None) -> Value:
        return cts.get(v.id) or self.e.zeros(t or v.type)

    # -- recomputation
    def clone_ops(self, ops, env: dict) -> None:
        self.b.blocks[-1].ops.extend(cloned(op, env) for op in ops)

    # -- the reverse pass
    def backward(self, ops, env: dict, cts: dict) -> None:
        """Run the reverse pass of `ops` (forward ops, their values seen through `env`), turning
        the cotangents in `cts` (by forward value id) into those of what the ops read."""
        for op in reversed(ops):
            gs = [cts.pop(r.id, None) for r in op.results]
            if all(g is None for g in gs) or op.name in ZERO:
                continue
            self.b.span = op.span
            if any(r.id in self.custom for r in op.results):
                gs = self.custom_vjps(op, gs, env, cts)
                if all(g is None for g in gs):
                    continue
            ins = [env.get(v.id, v) for v in op.operands]
            outs = [env.get(v.id, v) for v in op.results]
            if op.name == "if":
                for v, g in self.reverse_if(op, ins, gs, env):
                    self.accumulate(cts, v, g)
                continue
            if op.name == "while":
                for v, g in self.reverse_while(op, ins, outs, gs, env):
                    self.accumulate(cts, v, g)
                continue
            if op.name not in COMPLEX_OK and any(is_complex(v.type.dtype) for v in (*op.operands, *op.results)):
                raise JitError("autodiff: complex numbers are differentiated through arithmetic, exp, log, sqrt, "
                               "abs, real/imag, sums, products of matrices and reshaping only; the IR op "
                               f"{op.name!r} works on complex values here", op.span)
            gs = [g if g is not None or not inexact(r.type.dtype) else self.e.zeros(r.type)
                  for g, r in zip(gs, outs)]
            in_cts = vjp(self.e, op, ins, outs, gs)
            if in_cts is NotImplemented:
                what = f"kind={op.attrs['kind']!r} " if "kind" in op.attrs else ""
                raise JitError(f"autodiff: the IR op {op.name!r} {what}has no derivative rule yet, "
                               "so this function can't be differentiated", op.span)
            for v, g in zip(op.operands, in_cts):
                self.accumulate(cts, v, g)

    def custom_vjps(self, op: Op, gs, env: dict, cts: dict) -> list:
        """Send the cotangents of `op`'s results recorded in `custom` straight to the input they
        were computed from (linalg.py), past the ops in between; returns the others."""
        rest = []
        for r, g in zip(op.results, gs):
            entry = self.custom.get(r.id)
            if entry is None or g is None:
                rest.append(g)
                continue
            if any(self.differentiable(v) for v in entry[1:] if isinstance(v, Value)):
                for v, ct in custom_vjp(self.b, entry, lambda v: env.get(v.id, v), env.get(r.id, r), g):
                    self.accumulate(cts, v, ct)
            rest.append(None)
        return rest

    def check_active_bitcasts(self, block: Block) -> None:
        """A float's bits read as an integer (fdlibm-style code) would lose its derivative silently."""
        for op in block.ops:
            if op.name == "bitcast" and op.operands[0].id in self.active and is_float(op.operands[0].type.dtype) \
                    and not is_float(op.results[0].type.dtype):
                raise JitError("autodiff: this reads a float's bits as an integer (IR op 'bitcast'), "
                               "which has no derivative", op.span)
            for r in op.regions:
                self.check_active_bitcasts(r)

    def reverse_if(self, op: Op, ins, gs, env):
        caps = [c for c in captures(op) if self.differentiable(c)]
        if not caps:
            return []
        branches = []
        for region in op.regions:
            self.b.open_block()
            local = dict(env)
            self.clone_ops(region.ops, local)
            cts: dict = {}
            for r, g in zip(region.results, gs):
                self.accumulate(cts, r, g)
            self.backward(region.ops, local, cts)
            branches.append(self.b.close_block([self.ct_or_zero(cts, c) for c in caps]))
        self.b.span = op.span
        res = self.e("if", ins[0], regions=tuple(branches))
        return list(zip(caps, res if isinstance(res, tuple) else (res,)))

    # -- loops
    def count_trips(self, block: Block) -> None:
        """Give every active while op a trip counter, carried last (the frontend's loops have none
        the reverse pass could rely on: `while` conditions, `break`)."""
        for op in block.ops:
            for r in op.regions:
                self.count_trips(r)
            if op.name != "while" or not any(r.id in self.active for r in op.results):
                continue
            cond, body = op.regions
            self.b.span = op.span
            self.b.reopen(cond)   # the condition doesn't read it
            cond.params.append(Value(I64))
            self.b.close_block(cond.results)
            self.b.reopen(body)
            body.params.append(Value(I64))
            trips = self.e.add(body.params[-1], self.e.i64(1))
            self.b.close_block(body.results + [trips])
            op.operands = op.operands + (self._zero_i64_before(op),)
            op.results = op.results + (Value(I64),)
            self.counted.add(id(op))

    def _zero_i64_before(self, op: Op) -> Value:
        # a constant op placed right before the loop, in the loop's own block
        zero = Value(I64)
        self._pending.append((op, Op("constant", (), (zero,), {"value": np.asarray(0, np.int64)}, op.span)))
        return zero

    def insert_pending(self, block: Block) -> None:
        for op, new in self._pending:
            _insert_before(block, op, new)
        self._pending = []

    def reverse_while(self, op: Op, ins, outs, gs, env):
        if id(op) not in self.counted:
            raise JitError("autodiff: internal error: a loop without a trip counter", op.span)
        e = self.e
        cond, body = op.regions
        types = [r.type for r in op.results]
        flt = [i for i, t in enumerate(types) if inexact(t.dtype) and op.results[i].id in self.active]
        caps = [c for c in captures(op) if self.differentiable(c)]
        n = outs[-1]
        k = loop_slots(types)
        levels = max(2, LOOP_LEVELS)
        limit = min(k ** levels, 1 << 62)
        init = [env.get(v.id, v) for v in op.operands]
        init[-1] = e.i64(0)
        # the loop's first state enters the recomputation behind a barrier: a constant array carried
        # by the loop (`U = np.ones(6)`, then `U = U * 2.5` in it) otherwise failed at run time in
        # IREE 3.13 ("indirect buffer reference slot 0 is out range ... copy_buffer"; found by
        # tests/fuzz_gradients.py)
        init = [e("barrier", v) if v.type.ndim else v for v in init]
        one, zero = e.i64(1), e.i64(0)

        def record_and_step_back(start, length, carried):
            """The innermost level: a part of at most k trips, its states recomputed into k slots,
            then stepped back through (each step one body recomputed and its reverse pass)."""
            seg_types = [t.with_shape((k,) + t.shape) for t in types]

            def record(t, state, segbufs):
                # stored before the step reads it: the step's in-place updates then consume the
                # state last, which keeps the loop a native loop (lowering/native_loops.py)
                segbufs = [_store(e, b, x, t) for b, x in zip(segbufs, state)]
                return self.step(body, state, env), segbufs
            _, _, segbufs = self.counted_loop(zero, length, start, [e.zeros(t) for t in seg_types], record, op.span)

            def back(t, carried):
                state = [_load(e, b, t, ty) for b, ty in zip(segbufs, types)]
                ct_state, ct_caps = carried[:len(flt)], carried[len(flt):]
                new_state, new_caps = self.body_vjp(body, state, ct_state, flt, caps, env)
                return list(new_state) + [e.add(a, b) for a, b in zip(ct_caps, new_caps)]
            return self.down_loop(e("sub", length, one), carried, back, op.span)

        def reverse_part(level, start, length, carried):
            """The reverse pass of `length` trips (<= k ** level) from the state `start`: cut into
            parts of k ** (level - 1) trips, a checkpoint of each part's first state in k slots
            (the pass that stores them runs up to the last part only: nothing when there is one
            part), then each part from the last reversed one level down."""
            if level == 1:
                return record_and_step_back(start, length, carried)
            cap = e.i64(k ** (level - 1))
            nparts = e("div", e.add(length, e.i64(k ** (level - 1) - 1)), cap)
            bufs = [e.zeros(t.with_shape((k + 1,) + t.shape)) for t in types]

            def checkpoint_step(j, state, bufs):   # slot k: a scratch slot for the other trips
                at = e("select", e("compare", e("rem", j, cap), zero, direction="EQ"), e("div", j, cap), e.i64(k))
                bufs = [_store(e, b, x, at) for b, x in zip(bufs, state)]
                return self.step(body, state, env), bufs
            several = e("compare", nparts, one, direction="GT")   # one part: its start is `start`
            _, _, bufs = self.counted_loop(e("select", several, zero, length), length, start, bufs, checkpoint_step,
                                           op.span)

            def part(p, carried):
                first = [_load(e, b, p, t) for b, t in zip(bufs, types)]
                at_start = e("compare", p, zero, direction="EQ")   # part 0 starts from `start`
                first = [e("select", _spread(e, at_start, x.type), s, x) for s, x in zip(start, first)]
                return reverse_part(level - 1, first, e("min", cap, e("sub", length, e.mul(p, cap))), carried)
            return self.down_loop(e("sub", nparts, one), carried, part, op.span)

        ct_state = [self.ct_or_zero({r.id: g for r, g in zip(outs, gs) if g is not None}, outs[i]) for i in flt]
        ct_caps = [e.zeros(c.type) for c in caps]
        carried = reverse_part(levels, init, n, list(ct_state) + list(ct_caps))
        # more trips than the levels cover: NaN rather than a wrong gradient (a top-level loop also raises)
        overflow = e("compare", n, e.i64(limit), direction="GT")
        if len(self.b.blocks) == 1:
            self.overflows.append((overflow, f"{op.span}: autodiff: this loop ran more than {limit} trips, "
                                   f"more than its {levels} levels of {k} checkpoint slots cover; raise "
                                   f"PYJITC_GRAD_LOOP_LEVELS ({LOOP_LEVELS}), PYJITC_GRAD_LOOP_SLOTS "
                                   f"({LOOP_SLOTS}) or PYJITC_GRAD_LOOP_MEMORY ({LOOP_MEMORY_BYTES} bytes)"))
        nan = lambda g: e("select", _spread(e, overflow, g.type), e.like(g, np.nan), g)
        carried = [nan(g) for g in carried]
        ct_state, ct_caps = carried[:len(flt)], carried[len(flt):]
        return [(op.operands[i], g) for i, g in zip(flt, ct_state)] + list(zip(caps, ct_caps))

    def step(self, body: Block, state, env) -> list[Value]:
        local = dict(env)
        for p, x in zip(body.params, state):
            local[p.id] = x
        self.clone_ops(body.ops, local)
        return [local.get(v.id, v) for v in body.results]

    def body_vjp(self, body: Block, state, ct_state, flt, caps, env):
        local = dict(env)
        for p, x in zip(body.params, state):
            local[p.id] = x
        self.clone_ops(body.ops, local)
        cts: dict = {}
        for i, g in zip(flt, ct_state):
            self.accumulate(cts, body.results[i], g)
        self.backward(body.ops, local, cts)
        return ([self.ct_or_zero(cts, body.params[i]) for i in flt], [self.ct_or_zero(cts, c) for c in caps])

    def counted_loop(self, start: Value, stop: Value, state, bufs, step, span):
        """for j in range(start, stop): state, bufs = step(j, state, bufs), as one while op."""
        e = self.e
        carried = [start] + list(state) + list(bufs)
        types = [v.type for v in carried]
        cond = self._cond_block(types, lambda ps: e("compare", ps[0], stop, direction="LT"))
        body = self.b.open_block(types)
        j, st, bf = body.params[0], body.params[1:1 + len(state)], body.params[1 + len(state):]
        new_state, new_bufs = step(j, list(st), list(bf))
        self.b.close_block([e.add(j, e.i64(1))] + list(new_state) + list(new_bufs))
        self.b.span = span
        guard = frozenset(p.id for p in body.params[:1 + len(state)]) if self.guard_loops else frozenset()
        res = e("while", *carried, regions=(cond, body), **({"guard": guard} if guard else {}))
        return res[0], list(res[1:1 + len(state)]), list(res[1 + len(state):])

    def down_loop(self, start: Value, carried, step, span) -> list[Value]:
        """for j in range(start, -1, -1): carried = step(j, carried), as one while op."""
        e = self.e
        types = [start.type] + [v.type for v in carried]
        cond = self._cond_block(types, lambda ps: e("compare", ps[0], e.i64(0), direction="GE"))
        body = self.b.open_block(types)
        new = step(body.params[0], list(body.params[1:]))
        self.b.close_block([e("sub", body.params[0], e.i64(1))] + list(new))
        self.b.span = span
        guard = frozenset(p.id for p in body.params) if self.guard_loops else frozenset()
        res = e("while", start, *carried, regions=(cond, body), **({"guard": guard} if guard else {}))
        return list(res[1:])

    def _cond_block(self, types, make):
        block = self.b.open_block(types)
        return self.b.close_block([make(block.params)])


def _spread(e: Emit, pred: Value, t: TensorType) -> Value:
    return e.scalar_to(pred, t.with_dtype(np.bool_))


def _store(e: Emit, buf: Value, x: Value, at: Value) -> Value:
    """buf[at] = x, for a buffer of shape (n,) + x.shape."""
    row = e("reshape", x, shape=(1,) + x.type.shape)
    return e("dynamic_update_slice", buf, row, at, *[e.i64(0)] * x.type.ndim)


def _load(e: Emit, buf: Value, at: Value, t: TensorType) -> Value:
    row = e("dynamic_slice", buf, at, *[e.i64(0)] * t.ndim, sizes=(1,) + t.shape)
    return e("reshape", row, shape=t.shape)


def _insert_before(block: Block, anchor: Op, new: Op) -> bool:
    for i, op in enumerate(block.ops):
        if op is anchor:
            block.ops.insert(i, new)
            return True
        for r in op.regions:
            if _insert_before(r, anchor, new):
                return True
    return False


def gradients(fn: Function, seeds, wrt: list[Value], guard_loops: bool = False,
              custom: dict | None = None) -> tuple[list[Value], list[Value]]:
    """Append to `fn`'s body the reverse pass of `seeds`, (result, its cotangent) pairs (the
    cotangent a value of the body, or None for 1: the gradient of a real float scalar), with
    respect to the parameters `wrt`; returns their gradients and the run-time "too many loop
    trips" flags of the function's top-level loops (bool[] values). The body's results are left
    to the caller. `custom`: closed-form VJPs recorded while tracing (linalg.CUSTOM), used where
    both the result and the input they name are still in `fn`."""
    builder = Builder()
    active = {p.id for p in wrt}
    activity(fn.body, active)
    defined = _defined(fn.body)
    custom = {k: v for k, v in (custom or {}).items()
              if k in defined and all(u.id in defined for u in v[1:] if isinstance(u, Value))}
    rev = Reverse(builder, active, guard_loops, custom)
    rev.check_active_bitcasts(fn.body)
    builder.reopen(fn.body)
    rev.count_trips(fn.body)
    rev.insert_pending(fn.body)
    cts: dict = {}
    for out, ct in seeds:
        rev.accumulate(cts, out, rev.e.full(1, out.type) if ct is None else ct)
    rev.backward(list(fn.body.ops), {}, cts)
    grads = [rev.ct_or_zero(cts, p) for p in wrt]
    builder.blocks.pop()
    return grads, rev.overflows
