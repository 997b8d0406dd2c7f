"""broadcast_fanout: reductions whose result is broadcast along two different axis mappings.

IREE 3.13 fuses a reduction into the elementwise consumer of its broadcasts, and where one consumer
reads the reduced values broadcast two ways (`s = X.sum(1); s[:, None] + s[None, :]`, the pairwise
distances `sq[:, None] + sq[None, :] - 2 * X @ X.T`) only the diagonal came out right and the rest
was uninitialised memory: a silent wrong answer (statement fuzzing had not met it; a probe of
pairwise-distance and RBF-kernel code did). Such a reduction's result is put behind a barrier
(lowering/stablehlo.py), so it is computed into a buffer first; reductions broadcast one way
(softmax's `x - x.max(axis, keepdims=True)`) keep the fused form."""
from __future__ import annotations

from ..ir.graph import Block, producers

# ops that carry an array's values to a broadcast unchanged (up to unit axes and the element type)
_THROUGH = ("reshape", "convert", "barrier")


def split_reductions(fns) -> set[int]:
    """Ids of reduce results broadcast along two or more different axis mappings."""
    out: set[int] = set()
    for fn, _ in fns:
        mappings: dict[int, set] = {}
        _collect(fn.body, producers(fn.body), mappings)
        out |= {rid for rid, maps in mappings.items() if len(maps) > 1}
    return out


def _collect(block: Block, made: dict, mappings: dict) -> None:
    for op in block.ops:
        for r in op.regions:
            _collect(r, made, mappings)
        if op.name != "broadcast_in_dim":
            continue
        found = _root_axes(op.operands[0], made)
        if found is None:
            continue
        root, axes = found      # for each of the root's non-unit axes, the operand's axis
        dims = op.attrs["dims"]
        mappings.setdefault(root, set()).add((tuple(dims[a] for a in axes), tuple(op.results[0].type.shape)))


def _root_axes(value, made: dict, depth: int = 8):
    """(the reduce result `value` comes from, through unit-axis reshapes and conversions; where
    each of its non-unit axes is among `value`'s axes), or None."""
    axes = [i for i, d in enumerate(value.type.shape) if d != 1]
    for _ in range(depth):
        op = made.get(value.id)
        if op is None:
            return None
        if op.name == "reduce":
            return value.id, tuple(axes)
        if op.name not in _THROUGH:
            return None
        src = op.operands[0]
        kept = [d for d in src.type.shape if d != 1]
        if kept != [d for d in value.type.shape if d != 1]:
            return None     # a reshape that merges or splits axes: not followed
        value = src
    return None
