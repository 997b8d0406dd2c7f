"""control: the typed IR's ops with regions, `if` and `while`, and the lowering choices IREE 3.13
needs for them (copies and barriers around the regions; see each rule's comments)."""
from __future__ import annotations

import numpy as np

from .dims import is_symbolic
from .registry import OpTypeError, register_op
from .types import TensorType, is_bool


# ---------------------------------------------------------------- control flow (ops with regions)
# Region blocks may read values defined above them (StableHLO regions are not isolated).

def _block_types(block):
    return tuple(v.type for v in block.results)


def _if_type(ts, regions, **_):
    (pred,) = ts
    then, orelse = regions
    if pred != TensorType((), np.dtype(np.bool_)) or then.params or orelse.params:
        raise OpTypeError(f"if: predicate {pred} must be bool[] and the branches take no arguments")
    if _block_types(then) != _block_types(orelse):
        raise OpTypeError(f"if: branch results {_block_types(then)} and {_block_types(orelse)} differ")
    return _block_types(then)


def _constant_in(block, v, depth: int = 4) -> bool:
    """Whether `v` is a constant made in `block`: a constant, or a splat or reshape of one
    (`A[:] = 3.0` yields a broadcast of 3.0: left uncopied beside a computed array in the other
    branch, IREE 3.13 returned a null buffer, statement fuzzer seed 9110 program 988)."""
    op = next((o for o in block.ops if any(r.id == v.id for r in o.results)), None)
    if op is None:
        return False
    if op.name == "constant":
        return True
    return bool(depth and op.name in ("broadcast_in_dim", "reshape", "convert") and op.operands
                and all(_constant_in(block, u, depth - 1) for u in op.operands))


def _lower_if(ctx, operands, **_):
    op = ctx.op("stablehlo.if", operands, ctx.out_types, regions=2)
    # values from before the if that some branch updates (the other may pass them through)
    updated_in_a_branch = {o.operands[0].id for block in ctx.regions for o in block.ops
                           if o.name == "dynamic_update_slice"}
    # per branch, which results are constants made in it (a folded `U2[:, ::-1]` of U2 = np.eye(6))
    made_constant = [[_constant_in(block, v) for v in block.results] for block in ctx.regions]
    # and which are constants either way: made there or passed through from before the if
    constant = [[made or (v.id in ctx.env and ctx.is_constant_expression(ctx.env[v.id]))
                 for made, v in zip(made_k, block.results)] for made_k, block in zip(made_constant, ctx.regions)]
    for k, (mlir_region, block) in enumerate(zip(op.regions, ctx.regions)):
        produced = {r.id for o in block.ops for r in o.results}
        # (a single value too: `found` passed through the `else` of an unrolled search loop's `if`
        # while the other branch selects between it and the index, IREE 3.13 failed at run time,
        # "indirect buffer reference slot 0 is out range", a probe of valid programs)
        # (a single value the branch computes from values before the if alone counts as passed
        # through: IREE folds it into the same computation before the if, `x[0] / x[1]` returned
        # beside `float(x[0]) / float(x[1]) if x[1] != 0 else -1.0`, and 3.13 then returned a null
        # buffer for the if's result, "ref is null; hal.buffer_view.create", a probe of valid programs)
        invariant = _from_before(block, produced)
        outside = [v.id not in produced or (v.id in invariant and v.type.ndim == 0) for v in block.results]
        returned = [ctx.returned(v.id) for v in block.results]
        updated_elsewhere = [v.id in updated_in_a_branch for v in block.results]
        # an array computed before the if that a branch updates is updated in a copy (an
        # argument is not: its copy made IREE alias `b = A * 1.0` with A, fuzzer seed 2311
        # program 290): IREE 3.13
        # returned a null buffer for the if's result when one branch updated it in place and the
        # other passed a copy through ("ref is null; hal.buffer_view.create", statement fuzzer
        # seed 686758054, with the loop before it compiled as a native loop)
        updated = {o.operands[0].id for o in block.ops
                   if o.name == "dynamic_update_slice" and o.operands[0].id not in produced}
        saved = {vid: ctx.env[vid] for vid in updated
                 if not ctx.view_of_argument(ctx.env[vid]) and not ctx.is_constant_expression(ctx.env[vid])}

        # a gather's result from before the if that the branch reads passes a barrier: IREE 3.13
        # folded a slice of it (`line[0]` of `line = x.ravel()[[0, 4, 8]]`, a loop over a list
        # of rows and diagonals unrolled into ifs) into code that failed to compile ("'arith.cmpi'
        # op requires all operands to have the same type", a tic-tac-toe check, probe AM)
        gathered = {u.id for o in block.ops for u in o.operands
                    if u.id not in produced and u.id not in saved and u.id in ctx.env
                    and ctx.producer_named(ctx.env[u.id], "stablehlo.gather")}
        saved.update({vid: ctx.env[vid] for vid in gathered})

        def enter(args, saved=saved, block=block, gathered=gathered):
            for vid in gathered:
                ctx.env[vid] = ctx.barrier(saved[vid])
            copies = []    # (value before the if, its copy)
            # a value before its slices, each in the order the program made it (the order
            # changed from one lowering to the next: IREE 3.13 ran one and failed the other at run
            # time, "ref is null; hal.buffer.subspan", statement fuzzer seed 9003 program 109)
            for vid in sorted(set(saved) - gathered, key=lambda vid: (ctx.static_slice(saved[vid]) is not None, vid)):
                value = saved[vid]
                # read elsewhere too (b = x[::-1] * 1.0 with y = x[::-1]: IREE folds both to one
                # value): a copy of its own, since IREE wrote through the barrier into the shared
                # buffer (statement fuzzer seed 7005 program 1017, a silent wrong answer)
                t = next(v.type for o in block.ops for v in o.operands if v.id == vid)
                piece = ctx.static_slice(value)
                base = next((c for v, c in copies if piece is not None and v == piece[0]), None)
                if base is not None:   # a slice of a value copied here: that slice of the copy
                    op = value.owner
                    ctx.env[vid] = ctx.hlo("stablehlo.slice", base, type=value.type,
                                           **{k: op.attributes[k] for k in ("start_indices", "limit_indices", "strides")})
                else:
                    ctx.env[vid] = ctx.fresh_copy(value, t, vid) if t.size else ctx.barrier(value)
                copies.append((value, ctx.env[vid]))
            return args

        # a constant made in this branch where the other yields a computed array is copied: IREE
        # 3.13 failed the if whose branches yield a constant and a computed buffer ("successor
        # operand type '!stream.resource<constant>' should match successor input type
        # '!stream.resource<external>'", statement fuzzer seed 7033 program 470). So is a constant
        # made before the if and passed through (`w1 = np.zeros(4)`, replaced by `w1[:] = x[2:]` in
        # the other branch, which also updated an argument in place while this one replaced
        # another): IREE 3.13 returned a null buffer ("ref is null; hal.buffer_view.create",
        # statement fuzzer seed 9104 program 940)
        mixed = [c and not other for c, other in zip(constant[k], constant[1 - k])]

        def leave(results, outside=outside, returned=returned, updated_elsewhere=updated_elsewhere, mixed=mixed):
            # a part of an argument (a slice, a row) passed through is copied too, unless the other
            # branch updates that very value in place (IREE 3.13 read past the end of a buffer at
            # run time, "OUT_OF_RANGE", for y = A[0] passed through while the other branch
            # replaced it, statement fuzzer seed 9311 program 33; copied where the other branch
            # updates it, it returned a null buffer, seed 404 program 528)
            returned = [ret or (ctx.view_of_argument(r) and ctx.view_root(r) != r and not u)
                        for r, ret, u in zip(results, returned, updated_elsewhere)]
            # an array computed before the if and passed through a branch unchanged is copied
            # there: IREE 3.13 otherwise returned a null buffer for the if's result ("ref is null;
            # hal.buffer_view.create", statement fuzzer seed 303 program 934). Not an argument or
            # a slice/reshape of one: copied, that failed the same way (seed 404 program 528)
            # (a constant is not either: the barrier made IREE 3.13 write later updates into the
            # read-only constant, PERMISSION_DENIED at run time, statement fuzzer seed 7002 program 139)
            # A real copy (a dispatch of its own), not a barrier: with the barrier IREE 3.13 still
            # returned a null buffer where the same value was also returned (`w = x.copy()` before
            # an if updating x on one path; statement fuzzer seed 7005 program 1920).
            # A view of an argument that the function also returns as it is, is copied after
            # all: IREE 3.13 returned a null buffer for the if's result (`t2 = np.array(y)` with
            # y = A[:, 2], returned beside the if's t2; statement fuzzer seed 7005 program 1692).
            # A constant is copied only where the other branch updates it (a constant the other
            # branch replaces, copied, failed to compile: "LLVM Translation failed", statement
            # fuzzer seed 7008 program 138; one it updates, left uncopied, gave "ref is null",
            # seed 7006 program 783).
            # Two results that are one argument (U1 = A's values as `reshape(reshape(A))` beside A
            # itself): the second is copied; IREE 3.13 otherwise failed at run time ("indirect
            # buffer reference slot 0 is out range", statement fuzzer seed 9111 program 679)
            roots = [ctx.view_root(r) if ctx.view_of_argument(r) and t.size else None for r, t in zip(results, ctx.out)]
            again = [root is not None and any(other is not None and root == other for other in roots[:i])
                     for i, root in enumerate(roots)]
            # A single value a native loop computed (a flow.dispatch.region's result) passed through
            # unchanged is copied too: IREE 3.13 returned a null buffer for the if's result ("ref is
            # null; hal.buffer_view.create": a loop's error code passed through the `else` of
            # `return s, (math.log(s) if s > 0 else 0.0)`, found by a probe of valid programs)
            native = [v.id not in produced and v.type.ndim == 0 and _from_native_loop(r)
                      for v, r in zip(block.results, results)]
            return [ctx.fresh_copy(r, t, 1_000_000 + i) if t.size and (m or a or n or o and (not ctx.view_of_argument(r) or ret)
                                                                  and (not ctx.is_constant_expression(r) or u)) else r
                    for i, (r, o, t, ret, u, m, a, n) in enumerate(zip(results, outside, ctx.out, returned, updated_elsewhere,
                                                                       mixed, again, native))]
        ctx.lower_region(mlir_region, block, enter=enter, leave=leave)
        ctx.env.update(saved)
    return list(op.results)


def _from_before(block, produced: set) -> set:
    """Ids of the values `block` computes from values made before it alone (through ops without
    regions, at least one such value read: not constants)."""
    out, constants = set(), set()
    for o in block.ops:
        if o.name == "constant":
            constants.update(r.id for r in o.results)
        elif not o.regions and all(v.id not in produced or v.id in out or v.id in constants for v in o.operands) \
                and any(v.id not in produced or v.id in out for v in o.operands):
            out.update(r.id for r in o.results)
    return out


def _from_native_loop(value) -> bool:
    owner = getattr(value, "owner", None)
    return getattr(owner, "name", None) == "flow.dispatch.region"


register_op("if", _if_type, _lower_if)


def _while_type(ts, regions, **_):
    cond, body = regions
    carried = tuple(ts)
    if tuple(p.type for p in cond.params) != carried or tuple(p.type for p in body.params) != carried:
        raise OpTypeError(f"while: region arguments don't match the carried types {carried}")
    if _block_types(cond) != (TensorType((), np.dtype(np.bool_)),):
        raise OpTypeError(f"while: the condition yields {_block_types(cond)}, not bool[]")
    if _block_types(body) != carried:
        raise OpTypeError(f"while: the body yields {_block_types(body)}, not {carried}")
    return carried


def _ignored_arguments(block) -> list[int]:
    """Positions of the block arguments that no op reads and that are not yielded unchanged."""
    used = set()

    def walk(b):
        for op in b.ops:
            used.update(v.id for v in op.operands)
            for r in op.regions:
                walk(r)
    walk(block)
    return [i for i, p in enumerate(block.params) if p.id not in used and block.results[i] is not p]


def _loop_invariant_results(block) -> list[int]:
    """Positions of the block results that depend on none of the block's arguments: a value from
    outside the loop, or one computed from constants only (e.g. `tmp[:, :] = 0.0` ending the body)."""
    variant = {p.id for p in block.params}
    producer = {r.id: op for op in block.ops for r in op.results}

    def constant_int(v):
        op = producer.get(v.id)
        if op is None or op.name != "constant" or np.size(op.attrs["value"]) != 1:
            return None
        return int(np.asarray(op.attrs["value"]).reshape(()))

    def sliced(op):
        """What a slice reads through constant-position updates it lies wholly inside or outside
        of, as the lowering forwards it (ops.py _through_updates): `b[0] = 3.0` then `b[0]` is the
        3.0, which IREE folds (statement fuzzer seed 9107 program 875: iree-compile crashed)."""
        x = op.operands[0]
        start, strides = op.attrs["start"], op.attrs["strides"]
        shape = op.results[0].type.shape
        if not all(isinstance(n, int) and n for n in shape) or any(k < 1 for k in strides):
            return x
        last = [b + (n - 1) * k for b, k, n in zip(start, strides, shape)]
        while (src := producer.get(x.id)) is not None and src.name == "dynamic_update_slice":
            at = [constant_int(v) for v in src.operands[2:]]
            extent = src.operands[1].type.shape
            if None in at or not all(isinstance(n, int) for n in extent):
                break
            if all(a <= b and e < a + u for a, b, e, u in zip(at, start, last, extent)):
                return src.operands[1]
            if not any(e < a or b >= a + u for a, b, e, u in zip(at, start, last, extent)):
                break
            x = src.operands[0]
        return x

    def read(op):
        """The operands `op` may read once IREE has folded constants: a select whose predicate
        does not depend on the loop may fold to either side (a full-coverage write `x[::-1] = v`
        is a select on an all-True mask; `x[m] = 1.0` with a mask computed from constants in the
        body is another), so it reads the loop only if both sides do; an update of every element
        does not read the old value. Such values made loops
        that replace a carried array wholesale crash iree-stream-conversion (found by the fuzzer)."""
        if op.name == "select" and op.operands[0].id not in variant:
            return op.operands[1:] if all(v.id in variant for v in op.operands[1:]) else ()
        if op.name == "dynamic_update_slice" and op.operands[1].type.shape == op.operands[0].type.shape:
            return op.operands[1:]   # the update covers the whole array (`b[i % 1] = v` for a 1-item b)
        if op.name == "slice":
            return (sliced(op),)
        return op.operands

    def reads_variant(op) -> bool:   # its operands, and what its regions read or yield from here
        return (any(v.id in variant for v in read(op))
                or any(v.id in variant for r in op.regions for v in r.results)
                or any(reads_variant(inner) for r in op.regions for inner in r.ops))
    for op in block.ops:
        if reads_variant(op):
            variant.update(v.id for v in op.results)
    return [i for i, v in enumerate(block.results) if v.id not in variant]


def _duplicate_results(block) -> list[int]:
    """Positions of the block results that another position also yields (`u[:, :] = tmp` with both
    carried), the first one (or the one yielded unchanged) left out."""
    producer = {r.id: op for op in block.ops for r in op.results}

    def root(v):
        """What a chain of reshapes ending in v starts from (v itself if none): a reshape is the
        same buffer to IREE, so `t3.ravel()[...] = A.ravel()` yields A twice (IREE folds
        reshape(reshape(x)) to x; statement fuzzer seed 7016 program 23), and yielding `U1` and
        `U1.reshape(5, 6)` (`A[:] = U1.reshape(5, 6)`, both carried) crashed iree-compile's
        resource analysis (code -11, seed 7016 program 2752)."""
        while v.id in producer and producer[v.id].name == "reshape":
            v = producer[v.id].operands[0]
        return v
    first = {root(v).id for v, p in zip(block.results, block.params) if v is p}
    dups = []
    for i, (v, p) in enumerate(zip(block.results, block.params)):
        if v is p:
            continue
        key = root(v).id
        if key in first:
            dups.append(i)
        first.add(key)
    return dups


def _lower_while(ctx, operands, guard=(), **_):
    """Two IREE 3.13 workarounds, both invisible in the results:
    - booleans are carried as ui8: loops carrying i1 tensors fail at run time ("indirect buffer
      reference ... out of range") or copy the wrong buffers;
    - a body that ignores a carried value (replaces it wholesale) fails to compile when the value
      is used after the loop ("region branch point has N operands, but region successor needs M
      inputs"): such values are yielded as select(trip < 0, old, new) with an extra trip counter,
      which is never negative, so the body reads them.
      The same error (IREE 3.13.0rc20261016) comes from a body that yields a value that does not
      depend on the loop (ends with `tmp[:, :] = 0.0`, `x = 1.0`, `tmp = v` for an outer v), or
      the same value in two places (`u[:, :] = tmp` with u and tmp carried): IREE rotates the
      loop into do-while form, its canonicalizer drops such a value from the scf.while results
      and "after" region (fewer arguments there than in "before"), and iree-stream-conversion's
      scf.while pattern then gives the "after" region the "before" region's signature. Those
      values take the same select, which makes each depend on the loop and differ from the rest."""
    carried = [t.with_dtype(np.uint8) if is_bool(t.dtype) else t for t in ctx.out]
    bools = [is_bool(t.dtype) for t in ctx.out]
    to_u8 = lambda v, t: ctx.hlo("stablehlo.convert", v, type=ctx.mlir_type(t))
    to_bool = lambda v, t: ctx.hlo("stablehlo.compare", v, ctx.splat(0, t), type=ctx.mlir_type(t.with_dtype(np.bool_)),
                                   comparison_direction=ctx.attr("#stablehlo<comparison_direction NE>"))
    ir_body = ctx.regions[1]
    guarded = sorted({*_ignored_arguments(ir_body), *_loop_invariant_results(ir_body), *_duplicate_results(ir_body)})
    if any(op.name == "while" for op in ir_body.ops):
        # A loop around loops: its single values too. IREE 3.13 folded one the inner loops leave
        # unchanged (an inner counter's final value) into a constant, dropped it from the "after"
        # region, and then crashed (iree-compile segfault in Stream::ResourceType::getLifetime:
        # `np.linalg.inv(A)` inside two run-time loops, a probe of valid programs)
        guarded = sorted({*guarded, *(i for i, p in enumerate(ir_body.params) if p.type.ndim == 0)})
    if guard:   # body params (ids) to guard too: carried values that may fold in ways the checks
        # above can't see (the loops of autodiff/reverse.py)
        guarded = sorted({*guarded, *(i for i, p in enumerate(ir_body.params) if p.id in guard)})
    trip_t = TensorType((), np.dtype(np.int64))
    arg_types = carried + [trip_t] * bool(guarded)
    # An array entering the loop as a constant (`b = np.full(...)` updated in the loop), or computed
    # before it (`t = x[::-1] * 1.0`; statement fuzzer seed 7005 program 90), enters through an
    # optimization_barrier: IREE 3.13 returned a null buffer for it when the loop ran zero times
    # ("ref is null; while invoking native function hal.buffer_view.create", found by the
    # statement fuzzer). Not an argument or a view of one (those work, and stay uncopied). Constant scalars too: a loop whose carried values all started as
    # constants but one argument array (`y = x.copy()` then `y[i] = y[i - 1] + 1.0`, no bounds
    # check left to carry an error code) failed at run time ("indirect buffer reference slot 0
    # is out range ... copy_buffer").
    # The barrier is one of its own: MLIR's CSE merged the barriers of two equal constants
    # (`np.zeros(8)` entering two loops), and IREE 3.13 then failed to compile the two loops
    # sharing one init ("operand #11 does not dominate this use", statement fuzzer seed 7005
    # program 362).
    # One number per loop: its constant scalars may still share one barrier (given one each,
    # `k = 0` and the trip counter made IREE 3.13 fail the loop at run time: "indirect buffer
    # reference slot 0 is out range", expression fuzzer seed 77 program 69).
    loop_number = ctx.new_number()
    constant = [ctx.is_constant_expression(v) for v in operands]
    # (and a result of an earlier loop: with neither loop running, IREE 3.13 failed the second at
    # run time, "ref is null; while invoking native function hal.buffer.subspan", statement
    # fuzzer seed 9102 program 2255)
    # (and a part of an argument the function returns as the loop's result: with the loop run zero
    # times, IREE 3.13 returned a null buffer for it, "ref is null; hal.buffer_view.create":
    # `a = x[0].copy()` carried by a rotation `a, b = b, a + b` and returned, a probe of valid programs)
    copied = [ctx.view_of_written_argument(v) or ctx.folds_to_written_argument(v)
              or ctx.producer_named(v, "stablehlo.while") is not None
              or (ctx.view_of_argument(v) and ctx.view_root(v) != v and ctx.returned(r))
              for v, r in zip(operands, ctx.result_ids)]
    operands = [ctx.distinct_barrier(v, loop_number) if c
                else ctx.barrier(v) if t.ndim and not ctx.view_of_argument(v) else v
                for v, t, c in zip(operands, ctx.in_types, constant)]
    # An array the loop carries that is also read elsewhere (`U = w.copy()` before the loop, w
    # carried: one value) enters as a copy made in a dispatch of its own: IREE 3.13 otherwise
    # wrote the loop's result, when it ran zero times, in place in that value's buffer (U came
    # back with w's later writes: a silent wrong answer, statement fuzzer seed 7003 program 500).
    # Each copy has a number of its own in the module: two loops copying one input made equal
    # copies, which CSE merged into one buffer for both; with neither loop running, IREE 3.13
    # failed at run time ("ref is null", statement fuzzer seed 7013 program 3243).
    # A view of an argument the function writes elsewhere (`w2 = np.array(y)` of y = x[::2], then
    # `y[1:-1] = ...` in a branch) is copied too: IREE merges the equal slices the loop and the
    # write start from, and the loop's result (when it ran zero times) came back with the write
    # (a silent wrong answer, statement fuzzer seed 7016 program 2722).
    # A constant array enters as such a copy too: two loops starting from equal constants
    # (`b1 = np.zeros(6)`, `w2 = np.zeros_like(x)`) got barriers over one constant buffer, and
    # IREE 3.13 wrote the first loop's result into it, where the second loop then started (a
    # silent wrong answer, statement fuzzer seed 7016 program 5104).
    # So is a value computed from such an argument by ops with constants that IREE folds away
    # (`P1 = y * 1.0` of y = A[1]): the loop's result, when it ran zero times, came back with the
    # later `y[-3:] -= ...` (a silent wrong answer, statement fuzzer seed 9004 program 2333).
    operands = [ctx.fresh_copy(v, t, ctx.new_number())
                if t.ndim and t.size and (c or ctx.shared(i) or f) else v
                for i, (v, t, c, f) in enumerate(zip(operands, ctx.in_types, constant, copied))]
    inits = [to_u8(v, t) if b else v for v, t, b in zip(operands, carried, bools)]
    if guarded:
        inits.append(ctx.distinct_barrier(ctx.splat(0, trip_t), loop_number))   # a constant scalar, as the others
    # Every init passes one barrier together: IREE 3.13 otherwise lost the dependency of the loop
    # on the dispatch that made one of two equal inits (`a = u0.copy(); b = u0.copy()`, rotated
    # `a = b; b = c` with c filled element by element): its stream scheduling dropped that
    # dispatch's timepoint, so the loop read an unwritten buffer (a silent wrong answer that
    # changed from call to call, a probe of physics codes). The barrier waits for all of them.
    # (Arrays only: with the loop's scalars in it, IREE 3.13 failed a loop at run time, "indirect
    # buffer reference slot 0 is out range": the suite's statement fuzzer, seed 20261214. Of
    # static shapes: with run-time sizes IREE failed to compile, "'tensor.dim' op unexpected
    # during shape cleanup", statement fuzzer --dynamic seed 28 program 114.)
    arrays = [k for k, t in enumerate(carried) if t.ndim and not is_symbolic(t.shape)]
    if len(arrays) > 1:
        waited = ctx.op("stablehlo.optimization_barrier", [inits[k] for k in arrays],
                        [inits[k].type for k in arrays]).results
        for k, v in zip(arrays, waited):
            inits[k] = v
    op = ctx.op("stablehlo.while", inits, [ctx.mlir_type(t) for t in arg_types], regions=2)
    raw: list = []   # the body's arguments as the IR sees them (booleans as i1), the trip counter last

    def enter(args):
        raw[:] = [to_bool(a, t) if b else a for a, t, b in zip(args, carried, bools)] + list(args[len(carried):])
        return raw[:len(carried)]

    def leave_body(vals):
        vals = list(vals)
        if guarded:
            trip = ctx.hlo("stablehlo.add", raw[-1], ctx.splat(1, trip_t), type=ctx.mlir_type(trip_t))
            never = ctx.hlo("stablehlo.compare", trip, ctx.splat(0, trip_t), type=ctx.mlir_type(trip_t.with_dtype(np.bool_)),
                            comparison_direction=ctx.attr("#stablehlo<comparison_direction LT>"),
                            compare_type=ctx.attr("#stablehlo<comparison_type SIGNED>"))
            for i in guarded:
                t = ctx.out[i]
                pred = never if not t.shape else ctx.broadcast_to(never, t.with_dtype(np.bool_), ())
                vals[i] = ctx.hlo("stablehlo.select", pred, raw[i], vals[i], type=ctx.mlir_type(t))
        vals = [to_u8(v, t) if b else v for v, t, b in zip(vals, carried, bools)]
        return vals + [trip] if guarded else vals
    cond, body = op.regions
    ctx.lower_region(cond, ctx.regions[0], arg_types=arg_types, enter=enter)
    ctx.lower_region(body, ctx.regions[1], arg_types=arg_types, enter=enter, leave=leave_body)
    results = [to_bool(r, t) if b else r for r, t, b in zip(list(op.results)[:len(carried)], carried, bools)]
    # A single value the function returns straight from the loop is returned as a copy: IREE 3.13
    # failed at run time otherwise ("indirect buffer reference slot 0 is out range ...
    # copy_buffer") on a `while` with a `break` whose body updates elements of an array and reads
    # a copy of it, returning the iteration count (an SOR solver at n = 2, a probe of dense
    # linear algebra kernels)
    # (in the IR's types: a boolean is carried as u8 but returned as i1, `ok = False` in a loop
    # around a loop, a probe of puzzle checkers: the u8 type made a multiply of i1 by u8)
    return [ctx.fresh_copy(r, t, ctx.new_number()) if not t.ndim and ctx.returned(vid) else r
            for r, t, vid in zip(results, ctx.out, ctx.result_ids)]


register_op("while", _while_type, _lower_while)
