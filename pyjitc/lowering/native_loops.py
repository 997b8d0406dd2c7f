"""native_loops: which run-time loops run as native loops (lowering/scalar_loop.py lowers them).

A `while` qualifies when every op in it (nested loops and ifs included) has a scalar form, or is
array work that lowering/scalar_arrays.py does element by element, and every array it writes can
be updated in place: each update consumes the latest version of its array (reads before the
write, no other use after), so bufferization needs no temporary buffers. Not with run-time
sizes."""
from __future__ import annotations

from ..ir.dims import is_symbolic
from ..ir.graph import Block, Op, producers
from ..ir.ops import BINARY, UNARY
from . import in_place, scalar_complex
from .in_place import check_lazy, vector_ok

# ---------------------------------------------------------------- which loops

ELEMENTWISE = {*UNARY, *BINARY, "compare", "select", "convert", "bitcast", "is_finite", "real", "imag", "complex"}
SHAPE_ONLY = {"reshape", "broadcast_in_dim", "transpose", "reverse"}
in_place._ELEMENTWISE_NAMES.update(ELEMENTWISE)


def _size1(v) -> bool:
    return v.type.size == 1


def _op_ok(op: Op) -> bool:
    name = op.name
    types = [v.type for v in (*op.operands, *op.results)]
    if name not in ("if", "while") and any(t.dtype.kind == "c" for t in types) and not scalar_complex.allowed(op):
        return False     # complex numbers: lowering/scalar_complex.py
    if name not in ("if", "while") and any(t.size != 1 for t in types) and \
            vector_ok(op, ELEMENTWISE, SHAPE_ONLY):
        return True     # array work, element by element (lowering/scalar_arrays.py)
    if name in ELEMENTWISE:
        return all(t.size == 1 for t in types)
    if name in ("constant", "iota") or name in SHAPE_ONLY:
        return all(t.size == 1 for t in types)
    if name == "barrier":
        return True
    if name in ("slice", "dynamic_slice"):
        return _size1(op.results[0])
    if name == "dynamic_update_slice":
        return _size1(op.operands[1])
    if name in ("if", "while"):
        return all(_op_ok(inner) for r in op.regions for inner in r.ops)
    return False


op_ok = _op_ok   # (lowering/straight_line.py asks it of the ops it wraps)


def eligible(op: Op) -> bool:
    """Whether the `while` op `op` runs as one native loop: every op has a scalar form and every
    array it writes is updated in place (see the module docstring). Not with run-time sizes."""
    if any(is_symbolic(v.type.shape) for v in (*op.operands, *op.results)):
        return False
    if not all(_op_ok(inner) for r in op.regions for inner in r.ops):
        return False
    snapshots = _snapshots(op)
    try:
        _InPlace(op)
        check_lazy(op, {v.id for v in _free_values(op) if not _size1(v)} | snapshots, _refuse)
    except _Refuse:
        return False
    SNAPSHOTS.update(snapshots)
    return True


# The array results of reductions and contractions in a native loop that scalar_arrays.py computes
# once into a temporary where they are made (instead of element by element where they are used):
# values, not reads of the arrays they come from, so a carried array computed anew from them may
# be written over in place (`w -= lr * (X.T @ (p - y))` in a logistic regression's epochs: its
# loop ran as a host loop, 3.6x NumPy's time; probe AI). Up to SNAPSHOT_BYTES each and
# SNAPSHOTS_BYTES in all per loop, in program order; SNAPSHOTS holds their result ids (lowering
# reads it).
SNAPSHOT_BYTES, SNAPSHOTS_BYTES = 16 << 10, 16 << 10
SNAPSHOTS: set[int] = set()


def snapshot_bytes(op: Op) -> int:
    """The bytes of the temporary a reduction or contraction's array result takes, or 0 where it
    is not computed into one (a single value, a bool or complex dtype, a larger array)."""
    if op.name not in ("reduce", "dot_general"):
        return 0
    t = op.results[0].type
    nbytes = t.size * t.dtype.itemsize
    if t.dtype.kind not in "fiu" or t.size == 1 or nbytes > SNAPSHOT_BYTES:
        return 0
    return nbytes


def _snapshots(loop: Op) -> set[int]:
    out, total = set(), 0

    def walk(block: Block):
        nonlocal total
        for op in block.ops:
            for r in op.regions:
                walk(r)
            nbytes = snapshot_bytes(op)
            if nbytes and total + nbytes <= SNAPSHOTS_BYTES:
                total += nbytes
                out.add(op.results[0].id)
    for r in loop.regions:
        walk(r)
    return out


def _refuse():
    raise _Refuse


class _Refuse(Exception):
    pass


# ops that only read an array operand (element by element, see scalar_arrays.py)
_READS = {"slice", "dynamic_slice", "pad", "concatenate", "reduce", "dot_general", "iota", "take", *ELEMENTWISE, *SHAPE_ONLY}


class _InPlace:
    """Raises _Refuse unless the arrays `loop` writes can be updated in place: each array value
    is used by reads first and then at most once by something that consumes it (an update, a
    yield, a nested loop's initial value), once per path through ifs; a loop's i-th carried
    array is yielded as an update of its own i-th argument; arrays from outside are only read."""

    def __init__(self, loop: Op):
        self.producers = {}
        for r in loop.regions:
            producers(r, self.producers)
        for v in _free_values(loop):
            if not _size1(v) and any(self._linear(r, v.id) for r in loop.regions):
                raise _Refuse
        self._loop(loop)

    def _loop(self, loop: Op):
        cond, body = loop.regions
        for r in loop.regions:
            for p in r.params:
                if not _size1(p) and self._linear(r, p.id) and r is cond:
                    raise _Refuse
        for i, p in enumerate(body.params):
            if not _size1(p) and not self._derives(body.results[i], p.id) and not self._computed(body, i):
                raise _Refuse
        for r in loop.regions:
            self._block(r)

    def _block(self, block: Block):
        for op in block.ops:
            for v in op.results:
                if not _size1(v):
                    self._linear(block, v.id)
            if op.name == "while":
                self._loop(op)
            else:
                for r in op.regions:
                    self._block(r)

    def _linear(self, block: Block, vid: int) -> bool:
        """Whether `block` consumes the array `vid`; _Refuse on any use after that."""
        consumed = False
        for op in block.ops:
            for k, v in enumerate(op.operands):
                if v.id != vid:
                    continue
                if consumed:
                    raise _Refuse
                if op.name in _READS or (op.name == "dynamic_update_slice" and k == 1):
                    continue
                if (op.name == "dynamic_update_slice" and k == 0) or op.name in ("while", "barrier"):
                    consumed = True
                    continue
                raise _Refuse
            if op.regions and any(_uses(r, vid) for r in op.regions):
                if consumed:
                    raise _Refuse
                if op.name == "if":
                    consumed = any([self._linear(r, vid) for r in op.regions])
                elif any([self._linear(r, vid) for r in op.regions]):
                    raise _Refuse     # consumed on every trip of an inner loop
        for v in block.results:
            if v.id == vid:
                if consumed:
                    raise _Refuse
                consumed = True
        return consumed

    def _computed(self, body: Block, i: int) -> bool:
        """Whether the body yields its i-th carried array computed anew by array work at its top
        level (a masked update of the whole array), which in_place.check_lazy may accept as
        written over in place (in_place._rewrite_ok)."""
        value = body.results[i]
        op = next((o for o in body.ops if value.id in {r.id for r in o.results}), None)
        return op is not None and not op.regions and op.name not in ("dynamic_update_slice", "barrier") \
            and value.type == body.params[i].type

    @staticmethod
    def _made_in(block: Block, value) -> bool:
        """Whether `value` is computed anew by array work at the top of `block`."""
        op = next((o for o in block.ops if value.id in {r.id for r in o.results}), None)
        return op is not None and not op.regions and op.name not in ("dynamic_update_slice", "barrier")

    def _derives(self, value, root: int) -> bool:
        """Whether `value` is the array `root` after updates (dynamic_update_slice, barrier,
        and if / while results that are themselves such updates)."""
        while value.id != root:
            op = self.producers.get(value.id)
            if op is None:
                return False
            if op.name in ("dynamic_update_slice", "barrier"):
                value = op.operands[0]
            elif op.name == "while":
                value = op.operands[[r.id for r in op.results].index(value.id)]
            elif op.name == "if":   # in one branch, perhaps computed anew (in_place.check_lazy)
                k = [r.id for r in op.results].index(value.id)
                derived = [self._derives(r.results[k], root) for r in op.regions]
                return any(derived) and all(d or self._made_in(r, r.results[k]) for d, r in zip(derived, op.regions))
            else:
                return False
        return True


def _uses(block: Block, vid: int) -> bool:
    return (any(v.id == vid for v in block.results)
            or any(v.id == vid for op in block.ops for v in op.operands)
            or any(_uses(r, vid) for op in block.ops for r in op.regions))


def _free_values(loop: Op) -> list:
    """The values `loop` reads that are defined outside it (its operands first)."""
    defined, seen, out = set(), set(), []

    def add(v):
        if v.id not in defined and v.id not in seen:
            seen.add(v.id)
            out.append(v)

    for v in loop.operands:
        add(v)

    def walk(block: Block):
        defined.update(p.id for p in block.params)
        for op in block.ops:
            for v in op.operands:
                add(v)
            for r in op.regions:
                walk(r)
            defined.update(v.id for v in op.results)
        for v in block.results:
            add(v)
    for r in loop.regions:
        walk(r)
    return out
