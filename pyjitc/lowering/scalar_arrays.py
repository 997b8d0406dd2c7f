"""scalar_arrays: array work inside a native loop (lowering/scalar_loop.py), element by element.

A loop body that computes on small arrays (a row `A[i, :]`, the masked product of two rows in a
Cholesky, `x[:i + 1].max()`) still runs as one native loop: a temporary array is never
materialised. It is a `Lazy`, a rule that gives one element for given indices, composed through
elementwise ops, broadcasts, reshapes, slices and transposes; the ops that consume arrays (a
reduce, a dot_general, a dynamic_update_slice of an array) emit `scf.for` nests that ask for each
element where they need it (so a masked dot product of two rows is one loop over the row).

Which loops qualify is lowering/in_place.py's part: temporaries stay inside the block that makes
them (never carried by a loop or written in place; yielded only as an array computed anew, written
over in place by `rewrite`), and no op between a temporary's definition and its last use consumes
an array it reads (its elements are read where it is used, so that array's buffer must not have
been updated in place by then). Sums are accumulated in
order, element by element (IREE's reduce order differs: float results agree to rounding, the
suite's accumulate tolerance)."""
from __future__ import annotations

import contextlib
import itertools

import numpy as np
from iree.compiler import ir

from ..ir.graph import Op, Value
from ..ir.ops import reduce_identity
from ..ir.types import TensorType
from . import native_loops, scalar_complex

class Lazy:
    """An array inside the region that is not materialised: `elem(S, indices)` emits the register
    value of the element at `indices` (index-typed MLIR values, one per axis). An element asked
    again at the same indices in the same block is the value emitted the first time: a temporary
    used by several others is emitted once per element, not once per path to it (the code would
    grow exponentially with the depth of such sharing: Durbin's loop took 4.5 s to compile)."""
    __slots__ = ("type", "_rule", "heavy", "_memo", "info")

    def __init__(self, type, elem, heavy=False):
        self.type, self._rule, self.heavy = type, elem, heavy   # heavy: an element is a loop
        self._memo = {}
        # what is known of the elements (see _facts): "iota": the axis it counts along; "scalar":
        # the one register it broadcasts; "splat": its constant; "cmp": (direction, axis, scalar)
        # of iota against a scalar; "range": (axis, lo, hi) of a mask lo <= i < hi; "support":
        # (axis, lo, hi, fill): the elements outside lo <= i < hi along axis are `fill`
        self.info = {}

    def elem(self, S, idx):
        key = (ir.InsertionPoint.current.block, tuple(idx), tuple(_CURRENT.items()))
        value = self._memo.get(key)
        if value is None:
            value = self._memo[key] = self._rule(S, idx)
        return value


def index_const(S, i: int) -> ir.Value:
    return S.op("arith.constant", [], [ir.IndexType.get()], {"value": ir.IntegerAttr.get(ir.IndexType.get(), int(i))}).result


# While an update loop writes a buffer whose old elements its new ones read at the very positions
# written (`C[i, :] *= beta`, a masked write's `select(mask, new, old)`): that buffer -> the loop's
# current version of it, so that each element is read just before it is written in place.
_CURRENT: dict = {}
# A buffer updated in place -> (the block of the update, its new version): a temporary still read
# after the update reads only elements the update did not write (in_place.check_lazy, in_place._misses_reads), and
# reads them from the new version, so the buffer stays one (a read of the old version after the
# write would make IREE's bufferization copy it, and fail the loop: "Yield operand #0 is not
# equivalent to the corresponding iter bbArg").
_SUPERSEDED: dict = {}


@contextlib.contextmanager
def superseding():
    """The span of one native loop's lowering: its versions are forgotten after it (the MLIR
    values die with the module, and a later module may reuse their addresses); its temporaries'
    stack bytes start from zero (_on_stack)."""
    _SUPERSEDED.clear()
    _STACK[0] = 0
    try:
        yield
    finally:
        _SUPERSEDED.clear()


ULT = 6   # arith.cmpi's unsigned less-than
SLE = 3   # and signed less-or-equal

# Bytes of temporaries one native loop may put on its dispatch's stack: IREE allows 32 KiB in
# all, and each temporary takes up to BY_ROWS_BYTES; two of them failed ("exceeded stack
# allocation limit": a softmax regression's row maxima and row sums of 2000 rows; probe AI).
STACK_BYTES = 24 << 10
_STACK = [0]


def _on_stack(nbytes: int) -> bool:
    """Whether a temporary of `nbytes` still fits this native loop's stack (and take them)."""
    if _STACK[0] + nbytes > STACK_BYTES:
        return False
    _STACK[0] += nbytes
    return True


def supersede(old: ir.Value, new: ir.Value) -> None:
    _SUPERSEDED[old] = (ir.InsertionPoint.current.block, new)


def _latest(value: ir.Value) -> ir.Value:
    """The version of a buffer to read here: its newest, and inside an update loop of that one,
    the loop's."""
    here = ir.InsertionPoint.current.block
    while value in _SUPERSEDED and _inside(here, _SUPERSEDED[value][0]):
        value = _SUPERSEDED[value][1]
    return _CURRENT.get(value, value)


def block_ancestry(block):
    """`block`, then each block whose op encloses it, up to the function's body."""
    while True:
        yield block
        owner = block.owner
        if owner is None or owner.operation.name in ("func.func", "builtin.module"):
            return    # (asking a module for its block crashes the bindings)
        block = owner.operation.block


def _inside(block, ancestor) -> bool:
    """Whether `block` is `ancestor` or nested in an op of it."""
    return any(b == ancestor for b in block_ancestry(block))


def as_lazy(S, value, t) -> Lazy:
    """`value` (a Lazy, a register value of size 1, or a storage tensor) as a Lazy of type `t`."""
    if isinstance(value, Lazy):
        return value
    if t.size == 1:
        return Lazy(t, lambda S, idx: value)
    kept = [k for k, d in enumerate(t.shape) if d != 1]     # (the region's tensors drop axes of 1)
    return Lazy(t, lambda S, idx: S.to_register(S.extract(_latest(value), [idx[k] for k in kept]), t.dtype))


def loop_nest(S, extents, inits: list, body, ranges=None) -> list:
    """scf.for loops over `extents` carrying `inits`; body(S, ivs, values) -> new values.
    `ranges`: per axis, None or (lo, hi) index values to loop over instead of 0..extent."""
    def nest(dim, ivs, values):
        if dim == len(extents):
            return body(S, ivs, values)
        lo, hi = (ranges[dim] if ranges and ranges[dim] is not None
                  else (index_const(S, 0), index_const(S, extents[dim])))
        loop = S.op("scf.for", [lo, hi, index_const(S, 1), *values],
                    [v.type for v in values], regions=1)
        block = loop.regions[0].blocks.append(ir.IndexType.get(), *[v.type for v in values])
        with ir.InsertionPoint(block):
            S.yield_("scf.yield", nest(dim + 1, ivs + [block.arguments[0]], list(block.arguments[1:])))
        return list(loop.results)
    return nest(0, [], list(inits))


def rewrite(S, buffers: list, values: list, t) -> list:
    """The carried arrays `buffers` written over in place with the Lazy `values`, whose shapes
    are `t`'s up to axes of length 1, in one element loop over the region tensors' shape (see
    in_place._rewrite_ok): each position's new elements are all computed before any is stored."""
    xs = [_latest(b) for b in buffers]

    def full(shape, ivs):
        it = iter(ivs)
        return [next(it) if d != 1 else index_const(S, 0) for d in shape]

    def body(S, ivs, current):
        for x, c in zip(xs, current):
            _CURRENT[x] = c       # (in_place._rewrite_ok: the values read these at `ivs` only)
        try:
            elements = [v.elem(S, full(v.type.shape, ivs)) for v in values]
        finally:
            for x in xs:
                del _CURRENT[x]
        return [S.insert(S.to_storage(e, v.type.dtype), c, ivs) for e, v, c in zip(elements, values, current)]
    out = loop_nest(S, [d for d in t.shape if d != 1], xs, body, _written_range(S, xs, values))
    for x, o in zip(xs, out):
        supersede(x, o)
    return out


def _written_range(S, xs: list, values: list):
    """loop_nest's ranges for writing `values` over the buffers `xs` where each is masked writes
    of run-time lo..hi along one axis, select(lo <= i < hi, new, the buffer itself), perhaps
    several in turn (`buf[k:hi] = src[k:hi]` with run-time bounds, the leftovers of a merge): only
    the span from the lowest non-empty lo to the highest hi (clamped to the axis; each element
    of it still takes the selects' choice), the rest keep their elements. None (all) otherwise."""
    keeps = [v.info.get("keeps") for v in values]
    if any(k is None for k in keeps) or len({k[0] for k in keeps}) != 1 \
            or any(_latest(k[2]) != x for k, x in zip(keeps, xs)):
        return None
    axis = keeps[0][0]
    kept = [i for i, d in enumerate(values[0].type.shape) if d != 1]
    if axis not in kept:
        return None
    zero, n = index_const(S, 0), index_const(S, values[0].type.shape[axis])
    span_lo, span_hi = n, zero
    for lo, hi in (r for k in keeps for r in k[1]):
        lo = S.one("arith.minsi", S.one("arith.maxsi", S.index(lo), zero), n)
        hi = S.one("arith.minsi", S.one("arith.maxsi", S.index(hi), lo), n)
        empty = S.cmpi(SLE, hi, lo)
        span_lo = S.one("arith.minsi", span_lo, S.select(empty, n, lo))
        span_hi = S.one("arith.maxsi", span_hi, S.select(empty, zero, hi))
    ranges = [None] * len(kept)
    ranges[kept.index(axis)] = (span_lo, span_hi)
    return ranges


# ---------------------------------------------------------------- element rules

def lower_vector(L, S, op: Op, args, elementwise_rule):
    """The region value of `op` when an array (size > 1) is among its operands or results: a
    Lazy for an array result, a register value for a single value (a loop emitted here)."""
    name, out = op.name, op.results[0].type
    lz = [as_lazy(S, a, v.type) for a, v in zip(args, op.operands)]
    if name == "dynamic_update_slice":
        return _update(L, S, op, args, lz)
    if name == "barrier":
        lazy = lz[0]
    elif name == "constant":
        lazy = _constant(S, np.asarray(op.attrs["value"]), out)
    elif name == "iota":
        lazy = Lazy(out, _iota(op, register_type))
    elif name == "broadcast_in_dim":
        src, dims = op.operands[0].type, op.attrs["dims"]
        x = lz[0]
        lazy = Lazy(out, lambda S, idx: x.elem(S, [idx[d] if src.shape[i] != 1 else index_const(S, 0)
                                                    for i, d in enumerate(dims)]))
    elif name == "reshape":
        lazy = Lazy(out, _reshaped(lz[0], op.operands[0].type.shape, out.shape))
    elif name == "transpose":
        perm, x = op.attrs["perm"], lz[0]

        def elem(S, idx):
            src = [None] * len(perm)
            for k, p in enumerate(perm):
                src[p] = idx[k]
            return x.elem(S, src)
        lazy = Lazy(out, elem)
        lazy.info["transpose_of"] = (tuple(perm), x, op.operands[0].type)   # (_by_rows_transposed)
    elif name == "reverse":
        x, shape, dims = lz[0], op.operands[0].type.shape, op.attrs["dims"]
        lazy = Lazy(out, lambda S, idx: x.elem(S, [S.one("arith.subi", index_const(S, shape[d] - 1), i) if d in dims else i
                                                   for d, i in enumerate(idx)]))
    elif name == "slice":
        x, start, strides = lz[0], op.attrs["start"], op.attrs["strides"]
        lazy = Lazy(out, lambda S, idx: x.elem(S, [_affine(S, i, k, s) for i, k, s in zip(idx, strides, start)]))
    elif name == "dynamic_slice":
        x = lz[0]
        starts = L.indices(S, op, args[1:], op.operands[0].type.shape, op.attrs["sizes"])
        lazy = Lazy(out, lambda S, idx: x.elem(S, [S.one("arith.addi", s, i) for s, i in zip(starts, idx)]))
    elif name == "pad":
        lazy = Lazy(out, _padded(op, lz[0], lz[1]))
    elif name == "concatenate":
        lazy = Lazy(out, _concatenated(op, lz))
    elif name == "take":
        lazy = Lazy(out, _gathered(op, lz[0], lz[1]))
    elif name == "reduce":
        lazy = Lazy(out, _reduction(op, lz[0], op.attrs["kind"], op.attrs["axes"]), heavy=True)
    elif name == "dot_general":
        lazy = _by_rows(S, op, lz[0], lz[1]) or _by_rows_transposed(S, op, lz[0], lz[1]) or \
            Lazy(out, _contraction(op, lz[0], lz[1]), heavy=True)
    elif name == "select" and any(x.heavy for x in lz[1:]):
        lazy = Lazy(out, _branching_select(*lz), heavy=True)
    else:   # elementwise
        rule = scalar_complex.rule if scalar_complex.is_complex_op(op) else elementwise_rule(name)
        lazy = Lazy(out, lambda S, idx: rule(S, op, [x.elem(S, idx) for x in lz], **op.attrs))
    if name not in ("reduce", "dot_general", "constant", "iota"):
        lazy.heavy = lazy.heavy or any(x.heavy for x in lz)
    if out.size == 1:   # a single value: the element, emitted here
        return lazy.elem(S, [index_const(S, 0)] * out.ndim)
    if name in ("reduce", "dot_general") and lazy.heavy:
        lazy = _materialised(S, lazy, planned=op.results[0].id in native_loops.SNAPSHOTS) or lazy
    _facts(op, args, lz, lazy)
    return lazy


def _constant(S, value: np.ndarray, out) -> Lazy:
    """A splat's one value, or a small table (in_place.TABLE_SIZE) held as a constant tensor."""
    flat = value.reshape(-1)
    if np.all(flat == flat[0]):
        c = S.const(flat[0].item() if flat.dtype.kind != "u" else int(flat[0]), register_type(flat.dtype))
        return Lazy(out, lambda S, idx: c)
    kept = [k for k, d in enumerate(out.shape) if d != 1]
    boolean = value.dtype.kind == "b"     # (stored as i8 in the region, scalar_loop.storage_type)
    stored = ir.RankedTensorType.get([out.shape[k] for k in kept],
                                     ir.IntegerType.get_signless(8) if boolean else register_type(value.dtype))
    data = value.astype(np.int8) if boolean else value
    attr = ir.DenseElementsAttr.get(np.ascontiguousarray(data.reshape(stored.shape)), type=stored.element_type,
                                    shape=list(stored.shape))
    table = S.op("arith.constant", [], [stored], {"value": attr}).result
    return Lazy(out, lambda S, idx: S.to_register(S.extract(table, [idx[k] for k in kept]), out.dtype))


def _facts(op: Op, args, lz, lazy: Lazy) -> None:
    """What a masked run-time slice's temporaries say of their elements: a reduction or dot
    product over such a slice then loops over lo..hi only, not the whole axis (the masked
    positions hold the reduction's identity, so the result is the same)."""
    name, info = op.name, lazy.info
    if name == "iota":
        info["iota"] = op.attrs["dim"]
    elif name == "broadcast_in_dim" and op.operands[0].type.size == 1 and not isinstance(args[0], Lazy):
        info["scalar"] = args[0]
        constant = _constant_of(args[0])
        if constant is not None:
            info["splat"] = constant
    elif name == "constant":
        info["splat"] = np.asarray(op.attrs["value"]).reshape(-1)[0].item()
    elif name == "compare" and op.attrs.get("direction") in ("GE", "LT") and "iota" in lz[0].info \
            and "scalar" in lz[1].info and op.operands[0].type.dtype.kind == "i":
        info["cmp"] = (op.attrs["direction"], lz[0].info["iota"], lz[1].info["scalar"])
    elif name == "and" and all("cmp" in x.info for x in lz):
        (d1, a1, s1), (d2, a2, s2) = lz[0].info["cmp"], lz[1].info["cmp"]
        if a1 == a2 and {d1, d2} == {"GE", "LT"}:
            info["range"] = (a1, s1 if d1 == "GE" else s2, s2 if d1 == "GE" else s1)
    elif name == "select" and "range" in lz[0].info:
        if "splat" in lz[2].info:
            info["support"] = lz[0].info["range"] + (lz[2].info["splat"],)
        axis, lo, hi = lz[0].info["range"]     # (rewrite: writes of lo..hi only, _written_range)
        if not isinstance(args[2], Lazy):
            info["keeps"] = (axis, ((lo, hi),), args[2])
        elif lz[2].info.get("keeps", (None,))[0] == axis:     # masked writes one after another
            info["keeps"] = (axis, lz[2].info["keeps"][1] + ((lo, hi),), lz[2].info["keeps"][2])
    elif name == "barrier":
        info.update(lz[0].info)
    elif name in _FILL_RULES and any("support" in x.info for x in lz):
        _elementwise_support(op, lz, info)
    elif name == "reshape" and "support" in lz[0].info:
        src, out = op.operands[0].type.shape, op.results[0].type.shape
        cs, co = [i for i, d in enumerate(src) if d != 1], [i for i, d in enumerate(out) if d != 1]
        axis, lo, hi, fill = lz[0].info["support"]
        if [src[i] for i in cs] == [out[i] for i in co] and axis in cs:
            info["support"] = (co[cs.index(axis)], lo, hi, fill)


_COMPARE = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
            "GE": np.greater_equal}
_FILL_RULES = {
    "add": lambda a, b, **_: a + b, "sub": lambda a, b, **_: a - b, "mul": lambda a, b, **_: a * b,
    "neg": lambda a, **_: -a, "max": lambda a, b, **_: np.maximum(a, b), "min": lambda a, b, **_: np.minimum(a, b),
    "and": lambda a, b, **_: a & b, "or": lambda a, b, **_: a | b, "not": lambda a, **_: ~a,
    "select": lambda c, a, b, **_: a if c else b, "abs": lambda a, **_: np.abs(a),
    "compare": lambda a, b, direction, **_: _COMPARE[direction](a, b),
    "convert": lambda a, dtype, **_: np.asarray(a).astype(dtype),
}


def _elementwise_support(op: Op, lz, info) -> None:
    """An elementwise op of arrays that are constant outside one lo..hi (and of constants) is
    constant there too: f of those constants, computed in the operands' dtypes by NumPy."""
    supports = {(x.info["support"][0], x.info["support"][1], x.info["support"][2]) for x in lz if "support" in x.info}
    if len(supports) != 1:
        return
    (axis, lo, hi), = supports
    fills = []
    for x, v in zip(lz, op.operands):
        if "support" in x.info:
            fill = x.info["support"][3]
        elif "splat" in x.info:
            fill = x.info["splat"]
        else:
            return
        fills.append(np.asarray(fill).astype(v.type.dtype))
    with np.errstate(all="ignore"):
        out = np.asarray(_FILL_RULES[op.name](*fills, **op.attrs)).astype(op.results[0].type.dtype)
    info["support"] = (axis, lo, hi, out.item())


def _constant_of(value):
    """The number an arith.constant register holds, else None."""
    owner = getattr(value, "owner", None)
    if getattr(owner, "name", None) != "arith.constant":
        return None
    attr = owner.attributes["value"]
    if isinstance(attr, ir.FloatAttr):
        return ir.FloatAttr(attr).value
    if isinstance(attr, ir.IntegerAttr):
        width = ir.IntegerType(attr.type).width if isinstance(attr.type, ir.IntegerType) else 64
        v = ir.IntegerAttr(attr).value
        return bool(v) if width == 1 else v
    return None


def _support_range(S, x: Lazy, axis: int, fill):
    """(lo, hi) as index values when x is `fill` outside lo <= i < hi along `axis`, else None."""
    support = x.info.get("support")
    if support is None or support[0] != axis or support[3] != fill:
        return None
    return S.index(support[1]), S.index(support[2])


def _branching_select(c: Lazy, a: Lazy, b: Lazy):
    """select(c, a, b) computing only the chosen element, where one is a loop (a masked dot
    product: the positions outside the mask never run it)."""
    def elem(S, idx):
        cond = c.elem(S, idx)
        t = register_type(a.type.dtype)
        branch = S.op("scf.if", [cond], [t], regions=2)
        for region, x in zip(branch.regions, (a, b)):
            with ir.InsertionPoint(region.blocks.append()):
                S.yield_("scf.yield", [x.elem(S, idx)])
        return branch.result
    return elem


def _gathered(op: Op, x: Lazy, idx: Lazy):
    """take: out[i..., rest...] = x[idx[i...], rest...], the index clamped into the array as
    StableHLO's gather clamps it (the frontend checks bounds where NumPy would raise)."""
    k, n = op.operands[1].type.ndim, op.operands[0].type.shape[0]

    def elem(S, out_idx):
        i = idx.elem(S, out_idx[:k])
        i = S.one("arith.maxsi", i, S.const(0, i.type))
        i = S.one("arith.minsi", i, S.const(n - 1, i.type))
        return x.elem(S, [S.index(i)] + list(out_idx[k:]))
    return elem




def _padded(op: Op, x: Lazy, fill: Lazy):
    """pad without interior padding: out[i] = x[i - low] where that is inside x, else the fill."""
    shape, low = op.operands[0].type.shape, op.attrs["low"]

    def elem(S, idx):
        inside, src = None, []
        for i, lo, n in zip(idx, low, shape):
            q = i if lo == 0 else S.one("arith.subi", i, index_const(S, lo))
            ok = S.cmpi(ULT, q, index_const(S, n))   # 0 <= q < n, as one unsigned compare
            inside = ok if inside is None else S.one("arith.andi", inside, ok)
            src.append(S.select(ok, q, index_const(S, 0)))
        value = x.elem(S, src)
        return value if inside is None else S.select(inside, value, fill.elem(S, []))
    return elem


def _concatenated(op: Op, parts: list):
    """concatenate: out[..., p, ...] is part k's element at p - (where part k starts) along the
    axis; every part's element is read (its index clamped into it) and the right one selected
    (`np.array([y[1], -a * y[0]])` in an ODE's right-hand side: a few single values)."""
    axis = op.attrs["axis"]
    sizes = [v.type.shape[axis] for v in op.operands]
    starts = list(np.cumsum([0] + sizes[:-1]))

    def elem(S, idx):
        p, value = idx[axis], None
        for part, start, n in zip(parts, starts, sizes):
            q = S.one("arith.subi", p, index_const(S, int(start))) if start else p
            q = S.select(S.cmpi(ULT, q, index_const(S, n)), q, index_const(S, 0)) if len(parts) > 1 else q
            v = part.elem(S, list(idx[:axis]) + [q if n != 1 else index_const(S, 0)] + list(idx[axis + 1:]))
            value = v if value is None else S.select(S.cmpi(ULT, p, index_const(S, int(start))), value, v)
        return value
    return elem


def _affine(S, i, k: int, s: int):
    v = i if k == 1 else S.one("arith.muli", i, index_const(S, k))
    return v if s == 0 else S.one("arith.addi", v, index_const(S, s))


def _iota(op: Op, register_type):
    dim, dtype = op.attrs["dim"], np.dtype(op.attrs["dtype"])

    def elem(S, idx):
        i = S.one("arith.index_cast", idx[dim], type=ir.IntegerType.get_signless(64))
        if dtype.kind == "f":
            return S.one("arith.sitofp", i, type=register_type(dtype))
        if dtype.itemsize != 8:
            return S.one("arith.trunci", i, type=register_type(dtype))
        return i
    return elem


def _reshaped(x: Lazy, src, out):
    """Element rule of a C-order reshape: axes of length 1 dropped or added map directly; other
    reshapes through the linear position."""
    core = lambda shape: [i for i, d in enumerate(shape) if d != 1]
    cs, co = core(src), core(out)
    if [src[i] for i in cs] == [out[i] for i in co]:
        def elem(S, idx):
            full = [None] * len(src)
            for i, j in zip(cs, co):
                full[i] = idx[j]
            return x.elem(S, [v if v is not None else index_const(S, 0) for v in full])
        return elem

    def elem(S, idx):
        linear = None
        for i, d in zip(idx, out):
            linear = i if linear is None else S.one("arith.addi", S.one("arith.muli", linear, index_const(S, d)), i)
        linear = linear if linear is not None else index_const(S, 0)
        full = []
        for d in reversed(src):
            full.append(S.one("arith.remui", linear, index_const(S, d)))
            linear = S.one("arith.divui", linear, index_const(S, d))
        return x.elem(S, list(reversed(full)))
    return elem


def _combine(S, kind: str, dtype, acc, v, reassoc=False):
    k = np.dtype(dtype).kind
    if k == "c" and kind in ("add", "mul"):   # (scalar_complex: sums and products of complex numbers)
        return S.one("complex.add" if kind == "add" else "complex.mul", acc, v)
    if kind == "add":
        if k == "f" and reassoc:
            return S.one("arith.addf", acc, v, fastmath=ir.Attribute.parse("#arith.fastmath<reassoc>"))
        return S.fop("arith.addf", acc, v) if k == "f" else S.one("arith.addi", acc, v)
    if kind == "mul":
        return S.fop("arith.mulf", acc, v) if k == "f" else S.one("arith.muli", acc, v)
    if kind in ("max", "min"):
        if k == "f":
            return S.fop("arith.maximumf" if kind == "max" else "arith.minimumf", acc, v)
        return S.one(f"arith.{kind}{'si' if k == 'i' else 'ui'}", acc, v)
    return S.one({"and": "arith.andi", "or": "arith.ori", "xor": "arith.xori"}[kind], acc, v)


def _identity(S, kind: str, dtype, type):
    return S.const(reduce_identity(kind, dtype), type)


def _reduction(op: Op, x: Lazy, kind: str, axes):
    src = op.operands[0].type
    dtype = src.dtype

    reduced = sorted(axes)

    def elem(S, idx):
        def element(S, ivs):
            full, a, b = [None] * src.ndim, iter(ivs), iter(idx)
            for i in range(src.ndim):
                full[i] = next(a) if i in reduced else next(b)
            return x.elem(S, full)
        ranges = [_support_range(S, x, i, reduce_identity(kind, dtype)) for i in reduced]
        return accumulate(S, kind, dtype, [src.shape[i] for i in reduced], ranges, element, not x.heavy)
    return elem


# Partial results a float reduction keeps (below): IREE 3.13 replaces the fastmath flags of every
# float op with `contract` (iree-codegen-add-fast-math-flags), so LLVM never reassociates a
# running sum, and one sum is a chain of dependent adds, each waiting for the last (~4 cycles).
# Several partial sums, each over every PARTIALS-th element, run side by side. Measured (a native
# loop of 2000 row dot products of 2000 f64, best of 5): one sum 4.98 ms, 4 partial sums 2.88 ms,
# 8: 3.25 ms; correlation's rows as matrix-vector products over a transposed copy 42 -> 12.6 ms.
PARTIALS = 4


def accumulate(S, kind: str, dtype, extents, ranges, element, interleave=True) -> ir.Value:
    """The `kind` reduction of element(S, indices) over a loop nest of `extents` (per axis, the
    range (lo, hi) of index values to loop over, or None for all of it). A float sum, min or max
    over a long innermost axis keeps PARTIALS partial results (see above), combined at the end;
    `interleave=False` (an element that is itself a loop) keeps one."""
    rtype = register_type(dtype)
    init = _identity(S, kind, dtype, rtype)
    last = extents[-1] if extents else 0
    if not (interleave and np.dtype(dtype).kind == "f" and kind in ("add", "max", "min")
            and last >= 2 * PARTIALS):
        def body(S, ivs, values):
            return [_combine(S, kind, dtype, values[0], element(S, ivs), reassoc=True)]
        (acc,) = loop_nest(S, extents, [init], body, ranges)
        return acc
    lo, hi = (ranges[-1] if ranges and ranges[-1] is not None
              else (index_const(S, 0), index_const(S, last)))

    def outer(S, ivs, values):
        n = S.one("arith.maxsi", S.one("arith.subi", hi, lo), index_const(S, 0))
        whole = S.one("arith.muli", S.one("arith.divui", n, index_const(S, PARTIALS)), index_const(S, PARTIALS))
        split = S.one("arith.addi", lo, whole)
        step = S.op("scf.for", [lo, split, index_const(S, PARTIALS), *values], [rtype] * PARTIALS, regions=1)
        block = step.regions[0].blocks.append(ir.IndexType.get(), *[rtype] * PARTIALS)
        with ir.InsertionPoint(block):
            k = block.arguments[0]
            S.yield_("scf.yield", [
                _combine(S, kind, dtype, acc, element(S, ivs + [k if u == 0 else S.one("arith.addi", k, index_const(S, u))]))
                for u, acc in enumerate(block.arguments[1:])])
        partial = list(step.results)
        rest = S.op("scf.for", [split, S.one("arith.maxsi", hi, split), index_const(S, 1), partial[0]], [rtype], regions=1)
        block = rest.regions[0].blocks.append(ir.IndexType.get(), rtype)
        with ir.InsertionPoint(block):
            S.yield_("scf.yield", [_combine(S, kind, dtype, block.arguments[1], element(S, ivs + [block.arguments[0]]))])
        return [rest.result] + partial[1:]
    partial = loop_nest(S, extents[:-1], [init] * PARTIALS, outer, ranges[:-1] if ranges else None)
    while len(partial) > 1:
        partial = [_combine(S, kind, dtype, partial[i], partial[i + 1]) if i + 1 < len(partial) else partial[i]
                   for i in range(0, len(partial), 2)]
    return partial[0]


def register_type(dtype) -> ir.Type:
    """The scalar type a value of `dtype` has inside the region (signless integers, bool as i1)."""
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return scalar_complex.register_type(dt)
    if dt.kind == "b":
        return ir.IntegerType.get_signless(1)
    if dt.kind in "iu":
        return ir.IntegerType.get_signless(dt.itemsize * 8)
    return {2: ir.F16Type, 4: ir.F32Type, 8: ir.F64Type}[dt.itemsize].get()


def _contraction(op: Op, a: Lazy, b: Lazy):
    at, bt = op.operands[0].type, op.operands[1].type
    lc, rc, lb, rb = (op.attrs[k] for k in ("lhs_contract", "rhs_contract", "lhs_batch", "rhs_batch"))
    lfree = [i for i in range(at.ndim) if i not in lc and i not in lb]
    rfree = [i for i in range(bt.ndim) if i not in rc and i not in rb]
    dtype = op.results[0].type.dtype

    def elem(S, idx):
        nb = len(lb)
        batch, lout, rout = idx[:nb], idx[nb:nb + len(lfree)], idx[nb + len(lfree):]

        def element(S, ivs):
            ai, bi = [None] * at.ndim, [None] * bt.ndim
            for k, (i, j) in enumerate(zip(lb, rb)):
                ai[i] = bi[j] = batch[k]
            for i, v in zip(lfree, lout):
                ai[i] = v
            for j, v in zip(rfree, rout):
                bi[j] = v
            for i, j, v in zip(lc, rc, ivs):
                ai[i] = bi[j] = v
            return _combine(S, "mul", dtype, a.elem(S, ai), b.elem(S, bi))
        ranges = None
        if len(lc) == 1:   # masked on both sides: over the union of the two lo..hi only (outside
            # it both factors are 0, so each product is exactly 0)
            range_a, range_b = _support_range(S, a, lc[0], 0), _support_range(S, b, rc[0], 0)
            if range_a is not None and range_b is not None:
                ranges = [(S.one("arith.minsi", range_a[0], range_b[0]), S.one("arith.maxsi", range_a[1], range_b[1]))]
        return accumulate(S, "add", dtype, [at.shape[i] for i in lc], ranges, element, not (a.heavy or b.heavy))
    return elem


# A vector times a matrix over its leading axis (`x[:, i] @ A[:, i + 1:]`, a row of a correlation
# or of Gram-Schmidt's R) asked element by element sums each column down the matrix: strided reads,
# one cache line per product (correlation of 500x400: 46 ms, NumPy 6.8). Up to this many bytes of
# result, it is computed once into a temporary on the dispatch's stack (IREE's limit is 32 KiB), row
# by row of the matrix, the inner loop running along rows.
BY_ROWS_BYTES = 16 << 10
_temporaries = itertools.count()


def _by_rows(S, op: Op, a: Lazy, b: Lazy) -> Lazy | None:
    """The product `a @ b` of a vector `a` (k,) and a matrix `b` (k, n...) computed into a
    temporary row by row of `b` (see BY_ROWS_BYTES), or None (any other contraction)."""
    at, bt, out = op.operands[0].type, op.operands[1].type, op.results[0].type
    lc, rc, lb = op.attrs["lhs_contract"], op.attrs["rhs_contract"], op.attrs["lhs_batch"]
    dt = np.dtype(out.dtype)
    if (lb or len(lc) != 1 or rc != [0] and rc != (0,) or bt.ndim < 2 or at.size != at.shape[lc[0]]
            or dt.kind != "f" or not 8 <= out.size <= BY_ROWS_BYTES // dt.itemsize or a.heavy or b.heavy):
        return None
    # (IREE 3.13 fails on scf.for over tensors with unit axes: "operand does not dominate this
    # use" after it collapses them)
    if 1 in bt.shape[1:] or not _on_stack(out.size * dt.itemsize):
        return None
    rtype = register_type(dt)
    k_range = None
    range_a, range_b = _support_range(S, a, lc[0], 0), _support_range(S, b, 0, 0)
    if range_a is not None and range_b is not None:
        k_range = (S.one("arith.minsi", range_a[0], range_b[0]), S.one("arith.maxsi", range_a[1], range_b[1]))
    free = list(bt.shape[1:])
    free_ranges = [_support_range(S, b, d, 0) for d in range(1, bt.ndim)]
    empty = S.op("tensor.empty", [], [ir.RankedTensorType.get(free, rtype)], {"pyjitc.buffer": ir.IntegerAttr.get(
        ir.IntegerType.get_signless(64), -1 - next(_temporaries))}).result
    (zeroed,) = loop_nest(S, free, [empty], lambda S, ivs, v: [S.insert(S.const(0, rtype), v[0], ivs)])

    def row(S, ivs, values):
        k = ivs[0]
        ai = [index_const(S, 0)] * at.ndim
        ai[lc[0]] = k
        coefficient = a.elem(S, ai)

        def add(S, jvs, acc):
            product = _combine(S, "mul", dt, coefficient, b.elem(S, [k, *jvs]))
            return [S.insert(_combine(S, "add", dt, S.extract(acc[0], jvs), product), acc[0], jvs)]
        return loop_nest(S, free, values, add, free_ranges)
    (total,) = loop_nest(S, [bt.shape[0]], [zeroed], lambda S, ivs, v: row(S, ivs, v), [k_range])
    skip = at.ndim - 1      # the result's leading axes: a's free ones, all of length 1
    lazy = Lazy(out, lambda S, idx: S.extract(total, list(idx[skip:])))
    support = b.info.get("support")
    if support is not None and support[0] > 0 and support[3] == 0:
        lazy.info["support"] = (support[0] - 1 + skip, *support[1:])
    return lazy


def _by_rows_transposed(S, op: Op, a: Lazy, b: Lazy) -> Lazy | None:
    """`X.T @ v` (a gradient `X.T @ (p - y)`): the product `v @ X` by rows of X (_by_rows), so
    each element of v, often computed (`1 / (1 + np.exp(-z))`), is made once, not once per
    element of the result, and X is read along its rows (a logistic regression's epochs: 3.4x
    NumPy's time as a native loop, most of it exp). None for any other contraction."""
    found = a.info.get("transpose_of")
    at, bt, out = op.operands[0].type, op.operands[1].type, op.results[0].type
    lc, rc = tuple(op.attrs["lhs_contract"]), tuple(op.attrs["rhs_contract"])
    if found is None or found[0] != (1, 0) or at.ndim != 2 or lc != (1,) or rc != (0,) or op.attrs["lhs_batch"] \
            or bt.size != bt.shape[0]:
        return None
    _, x, xt = found
    # v (k, 1...) contracted on its axis 0 with X (k, n): a (1..., n) result
    flipped = Op("dot_general", (Value(bt), Value(xt)), (Value(TensorType((1,) * (bt.ndim - 1) + (xt.shape[1],), out.dtype)),),
                 {"lhs_contract": (0,), "rhs_contract": (0,), "lhs_batch": (), "rhs_batch": ()})
    inner = _by_rows(S, flipped, b, x)
    if inner is None:
        return None
    skip = bt.ndim - 1
    return Lazy(out, lambda S, idx: inner.elem(S, [index_const(S, 0)] * skip + [idx[0]]))


def _materialised(S, lazy: Lazy, planned=False) -> Lazy | None:
    """A reduction's or product's array result computed once, where it is made, into a temporary
    on the dispatch's stack (up to BY_ROWS_BYTES): read element by element where it is used, each
    use recomputed every element (`w = A @ v`, then `v @ w`, `norm(w)`, `w / norm(w)`: power
    iteration did each 150-long dot product three times). `planned`: one that the analysis took
    as a value (native_loops.SNAPSHOTS), made whatever the stack budget says (it counts them)."""
    out = lazy.type
    dt = np.dtype(out.dtype)
    kept = [d for d in out.shape if d != 1]   # (no unit axes: see _by_rows)
    nbytes = out.size * dt.itemsize
    if planned:
        _STACK[0] += nbytes
    elif dt.kind not in "fiu" or nbytes > BY_ROWS_BYTES or not kept or not _on_stack(nbytes):
        return None
    rtype = register_type(dt)
    empty = S.op("tensor.empty", [], [ir.RankedTensorType.get(kept, rtype)], {"pyjitc.buffer": ir.IntegerAttr.get(
        ir.IntegerType.get_signless(64), -1 - next(_temporaries))}).result
    axes = [i for i, d in enumerate(out.shape) if d != 1]

    def fill(S, ivs, values):
        full = [index_const(S, 0)] * out.ndim
        for a, i in zip(axes, ivs):
            full[a] = i
        return [S.insert(lazy.elem(S, full), values[0], ivs)]
    (total,) = loop_nest(S, kept, [empty], fill)
    made = Lazy(out, lambda S, idx: S.extract(total, [idx[a] for a in axes]))
    made.info = dict(lazy.info)
    return made


def _update(L, S, op: Op, args, lz):
    """dynamic_update_slice of an array into a buffer: an element-by-element loop nest."""
    x, update = args[0], lz[1]
    ut, xt = op.operands[1].type, op.operands[0].type
    starts = L.indices(S, op, args[2:], xt.shape, ut.shape)

    def body(S, ivs, values):
        at = [S.one("arith.addi", s, i) for s, i in zip(starts, ivs)]
        _CURRENT[x] = values[0]     # (in_place.check_lazy proved any read of x here is at `at`)
        try:
            element = update.elem(S, ivs)
        finally:
            del _CURRENT[x]
        return [S.insert(S.to_storage(element, xt.dtype), values[0], [i for i, d in zip(at, xt.shape) if d != 1])]
    (out,) = loop_nest(S, list(ut.shape), [x], body)
    supersede(x, out)
    return out
