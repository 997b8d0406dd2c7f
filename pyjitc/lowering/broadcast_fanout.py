"""broadcast_fanout: reductions whose result is broadcast along two different axis mappings.

IREE 3.13 fuses a reduction into the elementwise consumer of its broadcasts, and where one consumer
reads the reduced values broadcast two ways (`s = X.sum(1); s[:, None] + s[None, :]`, the pairwise
distances `sq[:, None] + sq[None, :] - 2 * X @ X.T`) only the diagonal came out right and the rest
was uninitialised memory: a silent wrong answer (statement fuzzing had not met it; a probe of
pairwise-distance and RBF-kernel code did). The same where the broadcast values reach the consumer
a second way through a transpose (`L = np.diag(A.sum(1)) - A; L + L.T`, a graph Laplacian made
symmetric by np.linalg.eigvalsh: its eigenvalues came out as the degrees'). Such a reduction's
result is put behind a barrier (lowering/stablehlo.py), so it is computed into a buffer first;
reductions broadcast one way (softmax's `x - x.max(axis, keepdims=True)`) keep the fused form."""
from __future__ import annotations

from ..ir.graph import Block, producers
from ..ir.ops import BINARY, UNARY

# ops that carry an array's values to a broadcast unchanged (up to unit axes and the element type)
_THROUGH = ("reshape", "convert", "barrier")
# ops that compute each element from the elements at the same position of their operands
_ELEMENTWISE = {*UNARY, *BINARY, "compare", "select", "convert", "is_finite", "real", "imag", "complex", "barrier"}


def split_reductions(fns) -> set[int]:
    """Ids of reduce results broadcast along two or more different axis mappings."""
    out: set[int] = set()
    for fn, _ in fns:
        mappings: dict[int, set] = {}
        _collect(fn.body, producers(fn.body), mappings, {})
        out |= {rid for rid, maps in mappings.items() if len(maps) > 1}
    return out


def _collect(block: Block, made: dict, mappings: dict, carried: dict) -> None:
    """For each reduce result, the axis mappings its values are read with: where broadcast, and
    then through elementwise work of the broadcast shape and transposes (`carried`: value id ->
    the (reduce result, mapping) pairs its elements carry)."""
    for op in block.ops:
        for r in op.regions:
            _collect(r, made, mappings, carried)
        tags = set()
        if op.name == "broadcast_in_dim":
            found = _root_axes(op.operands[0], made)
            if found is not None:
                root, axes = found      # for each of the root's non-unit axes, the operand's axis
                dims = op.attrs["dims"]
                tags = {(root, (tuple(dims[a] for a in axes), tuple(op.results[0].type.shape)))}
        elif op.name == "transpose" and op.operands[0].id in carried:
            perm = list(op.attrs["perm"])
            tags = {(root, (tuple(perm.index(a) for a in axes), tuple(op.results[0].type.shape)))
                    for root, (axes, _) in carried[op.operands[0].id]}
        elif op.name in _ELEMENTWISE and len(op.results) == 1:
            shape = op.results[0].type.shape
            tags = {t for v in op.operands if v.type.shape == shape for t in carried.get(v.id, ())}
        if tags:
            carried[op.results[0].id] = tags
            for root, mapping in tags:
                mappings.setdefault(root, set()).add(mapping)


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
