"""ufunc_methods: the methods of NumPy's ufunc objects (np.add.outer, np.maximum.reduce,
np.minimum.accumulate, ...). policy.qualified_name names a ufunc's method "numpy.<ufunc>.<method>",
so each is one registry entry made here by one rule per method from the ufunc's own implementation:
outer applies the ufunc to broadcast operands, reduce is the matching reduction (np.add.reduce is
np.sum with axis=0 by default), accumulate a scan with the ufunc's combining primitive."""
from __future__ import annotations

import numpy as np

from ...errors import NotSupportedError, ShapeError
from ...ir.ops import reduce_identity
from ..index_checks import index_i64
from ..registry import FUNCTIONS, register
from ..values import fold, is_static
from .creation import as_array
from .dtypes import static_dtype
from .reductions import reduction_rule, scan
from .shapes import normalize_axis, reshape, take_slice
from .ufuncs import into_out

# ufunc -> (the reduction it is, the scan primitive and identity of its accumulate by dtype kind)
_IDENTITY_MAX = lambda dt: reduce_identity("or" if dt.kind == "b" else "max", dt)
_IDENTITY_MIN = lambda dt: reduce_identity("and" if dt.kind == "b" else "min", dt)
REDUCIBLE = {
    np.add: ("numpy.sum", "numpy.cumsum", None),
    np.multiply: ("numpy.prod", "numpy.cumprod", None),
    np.maximum: ("numpy.max", None, lambda dt: ("or" if dt.kind == "b" else "max", _IDENTITY_MAX(dt))),
    np.minimum: ("numpy.min", None, lambda dt: ("and" if dt.kind == "b" else "min", _IDENTITY_MIN(dt))),
    np.logical_and: ("numpy.all", None, lambda dt: ("and", True)),
    np.logical_or: ("numpy.any", None, lambda dt: ("or", False)),
}
OUTER = (np.add, np.subtract, np.multiply, np.divide, np.maximum, np.minimum, np.power, np.equal, np.less,
         np.greater, np.logical_and, np.logical_or)


def _outer(ufunc):
    impl = FUNCTIONS[f"numpy.{ufunc.__name__}"]

    def outer(em, A, B, **kwargs):
        """ufunc(A[..., None, ...], B): NumPy converts both operands to arrays first (no weak scalars)."""
        if is_static(A, B):
            return fold(ufunc.outer, A, B, **kwargs)
        a = as_array(em, A)
        b = np.asarray(B) if is_static(B) else as_array(em, B)   # a compile-time B stays known (x ** 2)
        return impl(em, reshape(em, a, a.shape + (1,) * b.ndim), b, **kwargs)
    return outer


# the bitwise ufuncs of integers and bools: reduce and accumulate (an XOR checksum,
# `np.bitwise_xor.reduce(words)`), with the IR reductions and scans of their bit op
BITWISE = {np.bitwise_and: "and", np.bitwise_or: "or", np.bitwise_xor: "xor"}


def _bitwise_reduction(ufunc, kind):
    impl = reduction_rule(ufunc.reduce, lambda dt: kind)

    def reduction(em, a, **kwargs):
        if not is_static(a) and as_array(em, a).dtype.kind not in "biu":
            raise ShapeError(f"TypeError: ufunc '{ufunc.__name__}' not supported for the input types, and the inputs "
                             "could not be safely coerced to any supported types according to the casting rule ''safe''")
        return impl(em, a, **kwargs)
    return reduction


def _reduce(ufunc, reduction):
    def reduce(em, array, axis=0, dtype=None, out=None, keepdims=False, initial=np._NoValue, where=True):
        if out is not None or initial is not np._NoValue or where is not True:
            raise NotSupportedError(f"{ufunc.__name__}.reduce: out=, initial= and where= are not supported")
        if is_static(array):
            return fold(ufunc.reduce, array, axis=em.static(axis, "axis"), dtype=dtype, keepdims=keepdims)
        kw = {} if dtype is None else {"dtype": dtype}
        a = as_array(em, array)
        if a.ndim == 0 and em.static(axis, "axis") in (0, -1, ()):   # NumPy reduces a 0-d array over axis 0 too
            axis = None
        return (reduction if callable(reduction) else FUNCTIONS[reduction])(em, a, axis=axis, keepdims=keepdims, **kw)
    return reduce


def _reduceat(ufunc, reduction, combine):
    name = f"{ufunc.__name__}.reduceat"

    def reduceat(em, array, indices, axis=0, dtype=None, out=None):
        """Segment i is array[idx[i]:idx[i+1]] along axis (the last runs to the end), reduced;
        where idx[i] >= idx[i+1], array[idx[i]] alone. Compile-time indices: one reduction per
        segment; run-time ones: each segment a masked reduction over the whole axis (work:
        segments x length), or where they do not decrease, each element scattered into its
        segment (_segmented)."""
        if out is not None:
            raise NotSupportedError(f"{name}: out= is not supported")
        axis = em.static(axis, f"{name}: axis")
        if is_static(array, indices):
            return fold(ufunc.reduceat, array, indices, axis=axis, dtype=dtype)
        a = as_array(em, array)
        if a.ndim == 0:
            raise ShapeError(f"TypeError: {name}: cannot reduceat a scalar")
        ax = normalize_axis(axis, a.ndim, name)
        n = a.shape[ax]
        kw = {} if dtype is None else {"dtype": dtype}
        reduce = lambda x, **k: FUNCTIONS[reduction](em, x, **kw, **k)
        at = lambda lo, hi: take_slice(em, a, ax, lo, hi)
        if is_static(indices):
            idx = np.asarray(indices)
            if idx.ndim != 1 or idx.dtype.kind not in "iu":
                raise ShapeError(f"TypeError: {name}: indices must be a 1-D array of integers")
            bad = [int(i) for i in idx if not 0 <= i < n]
            if bad:
                raise ShapeError(f"IndexError: index {bad[0]} out-of-bounds in {name} [0, {n})")
            if idx.size == 0:
                return reduce(at(0, 0), axis=ax, keepdims=True)
            ends = list(idx[1:]) + [n]
            pieces = [reduce(at(int(s), int(e)), axis=ax, keepdims=True) if s < e else at(int(s), int(s) + 1)
                      for s, e in zip(idx, ends)]
            dt = next((p.dtype for s, e, p in zip(idx, ends, pieces) if s < e),
                      reduce(at(0, 1), axis=ax, keepdims=True).dtype)
            return FUNCTIONS["numpy.concatenate"](em, [em.cast(p, dt) for p in pieces], axis=ax)
        idx = as_array(em, indices)
        if idx.ndim != 1 or idx.dtype.kind not in "iu":
            raise ShapeError(f"TypeError: {name}: indices must be a 1-D array of integers")
        k = idx.shape[0]
        starts = em.cast(idx, np.int64)
        em.check(FUNCTIONS["numpy.any"](em, FUNCTIONS["numpy.logical_or"](
            em, FUNCTIONS["numpy.less"](em, starts, 0), FUNCTIONS["numpy.greater_equal"](em, starts, n))),
            f"IndexError: an index is out-of-bounds in {name} [0, {n})")
        ends = FUNCTIONS["numpy.concatenate"](em, [em.emit("slice", starts, start=(1,), limit=(k,), strides=(1,)),
                                                   em.full(n, np.int64, (1,))])
        x = FUNCTIONS["numpy.moveaxis"](em, a, ax, -1)                         # (..., n)

        def masked():   # each segment a masked reduction over the whole axis: (..., k)
            pos = em.emit("iota", shape=(k, n), dim=1, dtype=np.dtype(np.int64))
            inside = FUNCTIONS["numpy.logical_and"](
                em, FUNCTIONS["numpy.greater_equal"](em, pos, reshape(em, starts, (k, 1))),
                FUNCTIONS["numpy.less"](em, pos, reshape(em, ends, (k, 1))))
            spread = FUNCTIONS["numpy.broadcast_to"](em, reshape(em, x, x.shape[:-1] + (1, n)), x.shape[:-1] + (k, n))
            # (max and min have no identity: the masked-out elements count as the dtype's lowest/highest)
            first = {"initial": combine(x.dtype)[1]} if reduction in ("numpy.max", "numpy.min") else {}
            return reduce(spread, axis=-1, where=inside, **first)
        reduced = masked() if k * n < SEGMENTED_MIN or reduction not in SEGMENTED else \
            _either(em, _nondecreasing(em, starts), lambda: _segmented(em, reduction, x, starts, k, dtype), masked)
        single = em.cast(FUNCTIONS["numpy.take"](em, x, starts, axis=-1), reduced.dtype)
        empty = FUNCTIONS["numpy.greater_equal"](em, starts, ends)
        return FUNCTIONS["numpy.moveaxis"](em, FUNCTIONS["numpy.where"](em, empty, single, reduced), -1, ax)
    return reduceat


# reduceat with run-time indices over this many (segments x length) or more, where the indices
# do not decrease (CSR row pointers, group starts): each element scattered into its segment, one
# pass (np.add.reduceat of 4e4 values into 2000 rows: 52 ms as masked reductions, NumPy 0.06 ms;
# probe AI); the reduction's combining scatter, and the masked reductions where they decrease
SEGMENTED_MIN = 1 << 14
SEGMENTED = {"numpy.sum": "scatter_add", "numpy.max": "scatter_max", "numpy.min": "scatter_min",
             "numpy.any": "scatter_max", "numpy.all": "scatter_min"}


def _nondecreasing(em, starts):
    k = starts.shape[0]
    before = em.emit("slice", starts, start=(0,), limit=(k - 1,), strides=(1,))
    after = em.emit("slice", starts, start=(1,), limit=(k,), strides=(1,))
    return FUNCTIONS["numpy.all"](em, FUNCTIONS["numpy.less_equal"](em, before, after))


def _segmented(em, reduction, x, starts, k, dtype):
    """The segments' reductions (..., k) of x (..., n) for non-decreasing starts: element j goes
    to the last segment starting at or before it (one before the first start: a spare row)."""
    n = x.shape[-1]
    ones = em.full(1, np.int64, (k,))
    begun = em.emit("scatter_add", em.full(0, np.int64, (n,)), starts, ones)   # segments starting at j
    row = FUNCTIONS["numpy.cumsum"](em, begun)                                 # 1 + the segment of j (0: none)
    rows = FUNCTIONS["numpy.moveaxis"](em, x, -1, 0)                           # (n, ...)
    want = _reduced_dtype(em, reduction, x, dtype)
    # (a barrier: IREE fused a cast of the values into the scatter and kept it on the dispatch's
    # stack, "exceeded stack allocation limit", int32 summed as int64)
    values = em.emit("barrier", em.cast(rows, np.int8 if want == np.bool_ else want))
    # (max and min: every segment that reaches the result holds an element; a spare row 0 for
    # the elements before the first start)
    start = {"numpy.sum": 0, "numpy.any": 0, "numpy.all": 1, "numpy.max": _IDENTITY_MAX(values.dtype),
             "numpy.min": _IDENTITY_MIN(values.dtype)}[reduction]
    init = em.full(start, values.dtype, (k + 1,) + rows.shape[1:])
    out = em.emit(SEGMENTED[reduction], init, row, values)
    out = em.emit("slice", out, start=(1,) + (0,) * (out.ndim - 1), limit=out.shape, strides=(1,) * out.ndim)
    return em.cast(FUNCTIONS["numpy.moveaxis"](em, out, 0, -1), want)


def _reduced_dtype(em, reduction, x, dtype):
    """The dtype the masked reductions give (NumPy's reduction's) for x's dtype and `dtype=`."""
    probe = {"numpy.sum": np.sum, "numpy.max": np.max, "numpy.min": np.min, "numpy.any": np.any,
             "numpy.all": np.all}[reduction]
    kw = {} if dtype is None else {"dtype": static_dtype(em, dtype)}
    return np.asarray(probe(np.zeros(1, x.dtype), **kw)).dtype


def _either(em, pred, then, orelse):
    """then() where the run-time bool `pred` holds, else orelse(): two regions of one `if`, only
    one of which runs (their results of one type)."""
    b = em.b
    blocks, outs = [], []
    for make in (then, orelse):
        b.open_block([])
        out = make()
        outs.append(out)
        blocks.append(b.close_block([out.value]))
    if outs[0].type != outs[1].type:
        raise NotSupportedError(f"internal error: the two paths of a reduceat give {outs[0].type} and {outs[1].type}")
    out = b.emit("if", em.cast(pred, np.bool_).value, regions=tuple(blocks))
    return em.wrap(out[0] if isinstance(out, tuple) else out, pred, *outs)


def _accumulate(ufunc, cumulative, combine):
    def accumulate(em, array, axis=0, dtype=None, out=None):
        if out is not None:   # (`np.maximum.accumulate(idx, out=idx)`, a forward fill)
            result = accumulate(em, array, axis, dtype)
            return into_out(em, f"{ufunc.__name__}.accumulate", out, result, "unsafe")
        axis = em.static(axis, f"{ufunc.__name__}.accumulate: axis")
        if is_static(array):
            return fold(ufunc.accumulate, array, axis=axis, dtype=dtype)
        a = as_array(em, array)
        if axis is None or a.ndim == 0:
            raise ShapeError(f"{ufunc.__name__}.accumulate: " + ("cannot accumulate on a scalar" if a.ndim == 0 else
                                                                 "accumulate does not allow multiple axes"))
        ax = normalize_axis(axis, a.ndim, f"{ufunc.__name__}.accumulate")
        if cumulative is not None:
            return FUNCTIONS[cumulative](em, a, axis=ax, **({} if dtype is None else {"dtype": dtype}))
        try:   # NumPy's loop dtype for the combining step (logical_and gives bool, maximum keeps the dtype)
            dt = a.dtype if dtype is None else static_dtype(em, dtype)
            loop = ufunc.resolve_dtypes((dt, dt, None))
        except (TypeError, ValueError) as e:
            raise ShapeError(f"{ufunc.__name__}.accumulate: {e}") from None
        x = em.cast(a, np.bool_ if loop[-1] == np.bool_ else loop[0])   # logical_and: on truth values
        kind, identity = combine(x.dtype)
        return em.cast(scan(em, x, ax, kind, identity), loop[-1])
    return accumulate


for _u in OUTER:
    register(f"numpy.{_u.__name__}.outer")(_outer(_u))
for _u, _kind in BITWISE.items():
    register(f"numpy.{_u.__name__}.reduce")(_reduce(_u, _bitwise_reduction(_u, _kind)))
    register(f"numpy.{_u.__name__}.accumulate")(_accumulate(_u, None, lambda dt, k=_kind: (k, reduce_identity(k, dt))))
for _u, (_reduction, _cumulative, _combine) in REDUCIBLE.items():
    register(f"numpy.{_u.__name__}.reduce")(_reduce(_u, _reduction))
    register(f"numpy.{_u.__name__}.accumulate")(_accumulate(_u, _cumulative, _combine))
    register(f"numpy.{_u.__name__}.reduceat",
             note="compile-time indices: one reduction per segment; run-time indices (a fixed number of "
                  "them): where they do not decrease, each element scattered into its segment (add, maximum, "
                  "minimum, logical_and/or; add's sums in another order, within the reduction tolerance), else "
                  "masked reductions over the whole axis; out-of-bounds indices raise NumPy's IndexError")(_reduceat(_u, _reduction, _combine))


# ufunc.at(a, indices, b): unbuffered, so a position named k times gets k updates. Along the first
# axis: each position's updates combined first, then applied once: a sum by a scatter-add (np.add.at
# with 2e5 updates into 2e4 positions: 766 ms one-hot, now about NumPy's time), a product, max or
# min over a one-hot comparison of positions with indices (work: positions x indices). Float sums may
# round differently from NumPy's one-by-one updates (within the reduction tolerance).
AT = {np.add: ("numpy.sum", 0), np.subtract: ("numpy.sum", 0), np.multiply: ("numpy.prod", 1),
      np.maximum: ("numpy.max", None), np.minimum: ("numpy.min", None)}


def _flat_positions(em, name, a, indices, b, keep):
    """ufunc.at with a tuple of k integer index arrays (one per leading axis, broadcast together):
    (a with its first k axes made one, the flat positions, b broadcast to the selection and made
    rows of it), so the one-axis rule applies. Each index is checked on its own axis (NumPy's
    IndexError) and negative ones count from that axis's end."""
    k = len(indices)
    if keep is not None or k > a.ndim or any(i is None or i is Ellipsis or isinstance(i, slice) for i in indices):
        raise NotSupportedError(f"{name}.at: a tuple of integer index arrays, one per leading axis, is supported "
                                "(not slices, None or ...)")
    idxs = [as_array(em, i) for i in indices]
    if any(i.dtype.kind not in "iu" for i in idxs):
        raise NotSupportedError(f"{name}.at: the indices must be integer arrays")
    try:
        shape = np.broadcast_shapes(*[i.shape for i in idxs])
    except ValueError as e:
        raise ShapeError(f"IndexError: shape mismatch: indexing arrays could not be broadcast together ({e})") from None
    flat = None
    for axis, i in enumerate(idxs):
        i = index_i64(em, FUNCTIONS["numpy.broadcast_to"](em, i, shape), a.shape[axis], "an index", axis=axis)
        flat = i if flat is None else em.emit("add", em.emit("mul", flat, em.full(a.shape[axis], np.int64, shape)), i)
    rest = a.shape[k:]
    m = int(np.prod(shape, dtype=np.int64))
    rows = reshape(em, a, (int(np.prod(a.shape[:k], dtype=np.int64)),) + rest)
    if b is not None:
        b = np.broadcast_to(np.asarray(b), shape + rest).reshape((m,) + rest) if is_static(b) else \
            reshape(em, FUNCTIONS["numpy.broadcast_to"](em, as_array(em, b), shape + rest), (m,) + rest)
    return rows, reshape(em, flat, (m,)), b


def _scatter_add(em, base, idx, bb):
    """`base` with each row of bb added at its position in idx (IREE's CPU code applies the
    updates in order, as NumPy: tests/test_numpy_more.py); complex values as their real and
    imaginary parts, each a scatter of its own (the sums are the same)."""
    if base.dtype.kind != "c":
        return em.emit("scatter_add", base, idx, bb)
    parts = [_scatter_add(em, FUNCTIONS[f"numpy.{part}"](em, base), idx, FUNCTIONS[f"numpy.{part}"](em, bb))
             for part in ("real", "imag")]
    return em.emit("complex", *parts)


def _at(ufunc, reduction, identity):
    impl = FUNCTIONS[f"numpy.{ufunc.__name__}"]

    def at(em, a, indices, b=None, keep=None):
        """`keep`: a bool array along the indices (masked.py: indices and values that are
        selections, `np.add.at(h, idx[ok], w[ok])`): the entries where it is False take no part."""
        from ..assignment import store
        if b is None:
            raise ShapeError(f"TypeError: {ufunc.__name__}.at() needs the values b for a binary ufunc")
        if not hasattr(a, "dtype") or is_static(a):
            raise NotSupportedError(f"{ufunc.__name__}.at: the first argument must be an array of the program")
        whole = a     # the array written; `a` below may be it with its first axes made one
        if isinstance(indices, tuple) and len(indices) > 1:   # np.add.at(cm, (y_true, y_pred), 1)
            a, indices, b = _flat_positions(em, ufunc.__name__, a, indices, b, keep)
        elif isinstance(indices, tuple):
            indices = indices[0]
        idx = as_array(em, indices)
        if idx.dtype.kind not in "iu" or idx.ndim > 1 or a.ndim == 0:
            raise NotSupportedError(f"{ufunc.__name__}.at: a scalar or 1-D integer index along the first axis is supported")
        n = a.shape[0]
        idx = em.cast(reshape(em, idx, (-1,)), np.int64)
        m = idx.shape[0]
        if m == 0:   # no index: nothing changes (an empty group-by)
            return
        if keep is not None:   # left-out entries: index 0 (always in bounds), then dropped below
            idx = FUNCTIONS["numpy.where"](em, keep, idx, np.int64(0))
        idx = index_i64(em, idx, n, "an index")    # (one out of range: position 0 until the call raises)
        values = impl(em, FUNCTIONS["numpy.take"](em, a, idx, axis=0), b)   # NumPy's dtypes for a op b
        if values.dtype != a.dtype and not np.can_cast(values.dtype, a.dtype, casting="same_kind"):
            # (NumPy casts each update back unsafely: `np.add.at` of 1.7 twice into an int array
            # gives 2, where one cast of the sum gives 3; it said NumPy refuses: probe AJ)
            raise NotSupportedError(f"np.{ufunc.__name__}.at of {values.dtype} values into a {a.dtype} array: NumPy "
                                    "casts the array's element back after each update, which pyjitc does not do",
                                    hint=f"cast the values first (v.astype(a.dtype)) or use a {values.dtype} array")
        bb = FUNCTIONS["numpy.broadcast_to"](em, em.cast(as_array(em, b), values.dtype) if not is_static(b)
                                             else np.asarray(b, values.dtype), (m,) + a.shape[1:])
        if keep is not None:    # an index no position has: no hit (a scatter skips it; adding a 0
            idx = FUNCTIONS["numpy.where"](em, keep, idx, np.int64(n))   # would make -0.0 0.0), and
            if ufunc in (np.add, np.subtract):    # no value either (its cotangent: none)
                rest = (1,) * (a.ndim - 1)
                keep_b = FUNCTIONS["numpy.broadcast_to"](em, reshape(em, keep, (m,) + rest), (m,) + a.shape[1:])
                bb = FUNCTIONS["numpy.where"](em, keep_b, bb, np.asarray(0, values.dtype))
        if ufunc in (np.add, np.subtract) and values.dtype == a.dtype:
            # a scatter-add into a itself, each update in turn as in NumPy (a - b is a + (-b) exactly)
            new = _scatter_add(em, a, idx, bb if ufunc is np.add else FUNCTIONS["numpy.negative"](em, bb))
            store(em, whole, Ellipsis, reshape(em, new, whole.shape), f"np.{ufunc.__name__}.at")
            return
        if ufunc in (np.add, np.subtract):   # a scatter-add: work and memory grow with n + m
            combined = _scatter_add(em, em.full(0, values.dtype, (n,) + a.shape[1:]), idx, bb)
            new = impl(em, a, combined) if ufunc is np.add else FUNCTIONS["numpy.subtract"](em, a, combined)
            store(em, whole, Ellipsis, reshape(em, em.cast(new, a.dtype), whole.shape), f"np.{ufunc.__name__}.at")
            return
        if ufunc in (np.maximum, np.minimum) and values.dtype == a.dtype and values.dtype.kind != "c":
            # each update combined with its position in turn, as NumPy does: one scatter (a table of
            # positions by updates took n * m: np.maximum.at of 1e5 updates into 100 slots 28 ms,
            # NumPy 0.5 ms); an index no position has (`keep`) changes nothing
            new = em.emit("scatter_max" if ufunc is np.maximum else "scatter_min", a, idx, bb)
            store(em, whole, Ellipsis, reshape(em, new, whole.shape), f"np.{ufunc.__name__}.at")
            return
        rest = (1,) * (a.ndim - 1)
        hit = FUNCTIONS["numpy.equal"](em, reshape(em, em.emit("iota", shape=(n,), dim=0, dtype=np.dtype(np.int64)),
                                                     (n, 1) + rest), reshape(em, idx, (1, m) + rest))
        fill = identity if identity is not None else (-np.inf if ufunc is np.maximum else np.inf) \
            if values.dtype.kind == "f" else (np.iinfo(values.dtype).min if ufunc is np.maximum
                                              else np.iinfo(values.dtype).max) if values.dtype.kind in "iu" \
            else ufunc is np.minimum
        picked = FUNCTIONS["numpy.where"](em, hit, reshape(em, bb, (1, m) + a.shape[1:]),
                                          np.asarray(fill, values.dtype))
        combined = FUNCTIONS[reduction](em, picked, axis=1)
        new = impl(em, a, combined) if ufunc is not np.subtract else FUNCTIONS["numpy.subtract"](em, a, combined)
        if ufunc in (np.maximum, np.minimum):   # positions no index names keep their value (NaN too)
            named = FUNCTIONS["numpy.any"](em, hit, axis=1)
            new = FUNCTIONS["numpy.where"](em, reshape(em, named, (n,) + rest), new, a)
        store(em, whole, Ellipsis, reshape(em, em.cast(new, a.dtype), whole.shape), f"np.{ufunc.__name__}.at")
    at.selections = True     # masked.py passes selections of one mask as data and `keep`
    return at


for _u, (_reduction, _identity) in AT.items():
    register(f"numpy.{_u.__name__}.at", complex_ok=_u in (np.add, np.subtract),
             note="along the first axis; positions named several times get every update")(_at(_u, _reduction, _identity))
