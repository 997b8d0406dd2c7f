"""contractions: matmul, dot, vdot, inner, outer, tensordot and einsum, each as one dot_general (or
a pairwise sequence of them) with NumPy's matmul dtype rules; float16 accumulates in float32."""
from __future__ import annotations

import string

import numpy as np

from ...ir import dims
from ...errors import NotSupportedError, ShapeError
from ...ir.ops import OPS
from ...ir.types import is_bool
from ..indexing import getitem
from ..registry import FUNCTIONS, register
from ..values import fold, is_static
from .creation import as_array
from .dtypes import static_dtype
from .shapes import broadcast_to, moveaxis, normalize_axis, reshape, transpose
from .ufuncs import broadcast_shapes, into_out

@register("numpy.matmul", complex_ok=True,
          note="1-D, 2-D and batched; bool as or-of-ands; empty contractions give zeros")
def matmul(em, a, b, out=None):
    if out is not None:
        return into_out(em, "matmul", out, matmul(em, a, b), "same_kind")
    if is_static(a, b):
        return fold(np.matmul, a, b)
    try:
        loop = np.matmul.resolve_dtypes((em.dtype_of(a), em.dtype_of(b), None))
    except (TypeError, ValueError) as e:
        raise ShapeError(f"matmul: {e}") from None
    a, b = _operand(em, em.asarray(a), loop[0]), _operand(em, em.asarray(b), loop[1])
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError("matmul: Input operand does not have enough dimensions (a scalar can't be matrix-multiplied; use *)")
    if (a.ndim == 1 or b.ndim == 1) and a.ndim <= 2 and b.ndim <= 2 and not is_bool(loop[-1]) \
            and (dims.is_symbolic(a.shape) or dims.is_symbolic(b.shape)) and a.shape[-1] == b.shape[-2 if b.ndim == 2 else 0]:
        # a vector with a run-time length: products and a sum. IREE 3.13 rewrote a dot_general
        # with a dynamic vector into a static reshape of a dynamic tensor and failed to verify
        # (1 x n by n x 1, and n by n)
        if a.ndim == 2:    # (n, k) . (k,)
            prod = em.emit("mul", a, em.emit("broadcast_in_dim", b, shape=a.shape, dims=(1,)))
            return em.emit("reduce", prod, kind="add", axes=(1,))
        if b.ndim == 2:    # (k,) . (k, m)
            prod = em.emit("mul", em.emit("broadcast_in_dim", a, shape=b.shape, dims=(0,)), b)
            return em.emit("reduce", prod, kind="add", axes=(0,))
        return em.emit("reduce", em.emit("mul", a, b), kind="add", axes=(0,))
    a2 = a if a.ndim > 1 else reshape(em, a, (1,) + a.shape)
    b2 = b if b.ndim > 1 else reshape(em, b, b.shape + (1,))
    if a2.shape[-1] != b2.shape[-2]:
        raise ShapeError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"(n?,k),(k,m?)->(n?,m?) (size {b2.shape[-2]} is different from {a2.shape[-1]})")
    batch = broadcast_shapes("matmul", a2.shape[:-2], b2.shape[:-2])
    shape = batch + (a.shape[-2:-1] if a.ndim > 1 else ()) + (b.shape[-1:] if b.ndim > 1 else ())
    out = _one_side_batched(em, a2, b2, batch, loop[-1])
    if out is None:
        a2 = em.broadcast(a2, batch + a2.shape[-2:])
        b2 = em.broadcast(b2, batch + b2.shape[-2:])
        nb = len(batch)
        out = _dot(em, a2, b2, (nb + 1,), (nb,), tuple(range(nb)), tuple(range(nb)), loop[-1])
    return reshape(em, out, shape)


def _one_side_batched(em, a2, b2, batch, out_dtype):
    """A stack of matrices times one matrix (either way round) as one product, without
    broadcasting the single matrix over the stack: the stack's batch axes are free axes of its
    operand. `A.reshape(60, 60, 1, 128) @ C` is one (3600 x 128) @ (128 x 128) product (it was
    3600 products of one row each against C copied 3600 times: 120 ms for NumPy's 2 ms).
    None when both sides are stacks (or boolean, which _dot writes out only for batch dims)."""
    nb = len(batch)
    single = lambda x: int(np.prod(x.shape[:-2], dtype=np.int64)) == 1
    if nb == 0 or is_bool(out_dtype) or single(a2) == single(b2):
        return None
    (m, _), n = a2.shape[-2:], b2.shape[-1]
    if single(b2):     # (batch, m, k) @ (k, n): rows of every matrix of the stack times b
        b2 = reshape(em, b2, b2.shape[-2:])
        return _dot(em, reshape(em, a2, batch + a2.shape[-2:]), b2, (nb + 1,), (0,), (), (), out_dtype)
    # (m, k) @ (batch, k, n): a times every matrix, giving (m, batch, n), then m moved in
    out = _dot(em, reshape(em, a2, a2.shape[-2:]), reshape(em, b2, batch + b2.shape[-2:]), (1,), (nb,), (), (),
               out_dtype)
    if m == 1:
        return reshape(em, out, batch + (1, n))
    return em.emit("transpose", out, perm=tuple(range(1, nb + 1)) + (0, nb + 1), weak=out.weak)


def _dot(em, a, b, lc, rc, lb, rb, out_dtype):
    if any(a.shape[i] == 0 for i in lc):  # an empty sum; IREE crashes on zero-length contractions
        out = OPS["dot_general"].type_rule((a.type, b.type), lhs_contract=lc, rhs_contract=rc,
                                           lhs_batch=lb, rhs_batch=rb)
        return em.full(0, out_dtype, out.shape)
    if is_bool(out_dtype):
        if lc != (a.ndim - 1,) or rc != (b.ndim - 2,) or lb != tuple(range(a.ndim - 2)):
            raise NotSupportedError("dot of boolean arrays with more than 2 dimensions is not supported",
                                    hint="use np.matmul, or cast to an integer dtype")
        # OR of ANDs, written out: IREE can't compile an i1 contraction.
        batch, (m, k), n = a.shape[:-2], a.shape[-2:], b.shape[-1]
        full = batch + (m, k, n)
        x = em.broadcast(reshape(em, a, batch + (m, k, 1)), full)
        y = em.broadcast(reshape(em, b, batch + (1, k, n)), full)
        return em.emit("reduce", em.emit("and", x, y), kind="or", axes=(len(batch) + 1,))
    acc = np.dtype(np.float32) if out_dtype == np.float16 else out_dtype
    out = em.emit("dot_general", _operand(em, a, acc), _operand(em, b, acc),
                  lhs_contract=lc, rhs_contract=rc, lhs_batch=lb, rhs_batch=rb)
    return em.cast(out, out_dtype)


@register("numpy.dot", method="dot", complex_ok=True)
def dot(em, a, b, out=None):
    if out is not None:
        return into_out(em, "dot", out, dot(em, a, b), "equal")
    if is_static(a, b):
        return fold(np.dot, a, b)
    if len(em.shape_of(a)) == 0 or len(em.shape_of(b)) == 0:   # (a Python number: an int64/float64 array)
        return FUNCTIONS["numpy.multiply"](em, as_array(em, a), as_array(em, b))
    if len(em.shape_of(a)) <= 2 and len(em.shape_of(b)) <= 2:
        return matmul(em, a, b)
    loop = np.matmul.resolve_dtypes((em.dtype_of(a), em.dtype_of(b), None))
    a, b = _operand(em, em.asarray(a), loop[0]), _operand(em, em.asarray(b), loop[1])
    rc = 0 if b.ndim == 1 else b.ndim - 2
    if a.shape[-1] != b.shape[rc]:
        raise ShapeError(f"dot: shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != {b.shape[rc]} (dim {rc})")
    return _dot(em, a, b, (a.ndim - 1,), (rc,), (), (), loop[-1])


@register("numpy.outer", complex_ok=True)
def outer(em, a, b, out=None):
    a, b = reshape(em, as_array(em, a), (-1, 1)), reshape(em, as_array(em, b), (1, -1))
    return FUNCTIONS["numpy.multiply"](em, a, b)


@register("numpy.vdot", complex_ok=True)
def vdot(em, a, b):
    """dot of the flattened arrays, the first one conjugated."""
    a, b = reshape(em, em.asarray(a), -1), reshape(em, em.asarray(b), -1)
    return FUNCTIONS["numpy.dot"](em, FUNCTIONS["numpy.conjugate"](em, a), b)


@register("numpy.vecdot", complex_ok=True)
def vecdot(em, x1, x2, axis=-1, out=None):
    """Dot products along `axis`, the first vector conjugated; the other axes broadcast."""
    if out is not None:
        raise NotSupportedError("vecdot: out= is not supported; assign the result instead")
    x1, x2 = em.asarray(x1), em.asarray(x2)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ShapeError("vecdot: scalar arguments are not allowed (NumPy: at least one dimension)")
    axis = em.static(axis, "vecdot: axis")
    a, b = FUNCTIONS["numpy.moveaxis"](em, x1, axis, -1), FUNCTIONS["numpy.moveaxis"](em, x2, axis, -1)
    if a.shape[-1] != b.shape[-1]:
        raise ShapeError(f"vecdot: the contracted axes differ in length ({a.shape[-1]} and {b.shape[-1]})")
    prod = FUNCTIONS["numpy.multiply"](em, FUNCTIONS["numpy.conjugate"](em, a), b)
    return FUNCTIONS["numpy.sum"](em, prod, axis=-1, dtype=prod.dtype)   # a gufunc: no promotion as sum has


@register("numpy.inner", complex_ok=True)
def inner(em, a, b):
    a, b = as_array(em, a), as_array(em, b)
    if a.ndim == 0 or b.ndim == 0:
        return FUNCTIONS["numpy.multiply"](em, a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ShapeError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != "
                         f"{b.shape[-1]} (dim {b.ndim - 1})")
    return _contract(em, a, b, [a.ndim - 1], [b.ndim - 1])   # contracts the last axes of both


def _contract(em, a, b, lc, rc, lb=(), rb=()):
    out_dtype = np.matmul.resolve_dtypes((a.dtype, b.dtype, None))[-1]
    if is_bool(out_dtype):
        raise NotSupportedError("contracting boolean arrays here is not supported", hint="cast to an integer dtype")
    return _dot(em, _operand(em, a, out_dtype), _operand(em, b, out_dtype), tuple(lc), tuple(rc), tuple(lb), tuple(rb),
                out_dtype)


def _operand(em, x, dtype):
    """x cast to a product's dtype. An unsigned x widened is materialised first: IREE 3.13 folds
    the widening into the contraction as a signed one (`int32 @ uint8` read 200 as -56; into float
    too), so the converted values go to the product as an array of their own."""
    out = em.cast(x, dtype)
    if x.dtype.kind == "u" and np.dtype(dtype) != x.dtype:
        out = em.emit("barrier", out)
    return out


@register("numpy.tensordot", complex_ok=True)
def tensordot(em, a, b, axes=2):
    a, b = em.asarray(a), em.asarray(b)
    axes = em.static(axes, "tensordot: axes")
    if isinstance(axes, int):
        lc, rc = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        lc, rc = ([x] if isinstance(x, int) else list(x) for x in axes)
    lc = [normalize_axis(i, a.ndim, "tensordot") for i in lc]
    rc = [normalize_axis(i, b.ndim, "tensordot") for i in rc]
    if len(lc) != len(rc) or any(a.shape[i] != b.shape[j] for i, j in zip(lc, rc)):
        raise ShapeError("shape-mismatch for sum")
    return _contract(em, a, b, lc, rc)


def _einsum_specs(subscripts, xs):
    """Operand and output letters, with each '...' spelled out as letters of its own
    (right-aligned across operands, as NumPy broadcasts them) and NumPy's implicit output."""
    ins, arrow, out_spec = subscripts.partition("->")
    specs = ins.split(",")
    if len(specs) != len(xs):
        raise ShapeError(f"einsum: {len(specs)} operand subscripts for {len(xs)} operands")
    letters = set(subscripts) - set(",->.")
    if any(not c.isalpha() for c in letters):
        raise ShapeError(f"einsum: invalid subscript characters in {subscripts!r}")
    spare = [c for c in string.ascii_letters if c not in letters]
    n_ell = max((x.ndim - len(s.replace("...", "")) for s, x in zip(specs, xs) if "..." in s), default=0)
    ell = "".join(spare[:n_ell])
    full = []
    for s, x in zip(specs, xs):
        if "..." in s:
            k = x.ndim - len(s.replace("...", ""))
            if k < 0:
                raise ShapeError(f"einsum: operand subscripts {s!r} have more letters than the operand has axes")
            s = s.replace("...", ell[n_ell - k:])
        if len(s) != x.ndim:
            raise ShapeError(f"einsum: operand subscripts {s!r} do not match an operand with {x.ndim} axes")
        full.append(s)
    if arrow:
        out_spec = out_spec.replace("...", ell)
    else:
        counts = {c: ins.count(c) for c in letters}
        out_spec = ell + "".join(sorted((c for c, n in counts.items() if n == 1), key=lambda c: (c.islower(), c)))
    if len(set(out_spec)) != len(out_spec) or set(out_spec) - set("".join(full)):
        raise ShapeError(f"einsum: output subscripts {out_spec!r} repeat a letter or name one no operand has")
    return full, out_spec


@register("numpy.einsum", complex_ok=True, views=True,
          note="compile-time subscripts; any number of operands (contracted pairwise, left to right: where an "
               "infinity meets a zero, NaN and inf can differ from NumPy's one-pass sum), '...', "
               "repeated letters (diagonals), dtype=")
def einsum(em, subscripts, *operands, optimize=False, dtype=None, casting="safe", out=None):
    """Any number of operands, '...', repeated letters (diagonals): each operand's diagonals are
    taken and its private letters summed out, then operands are contracted pairwise, left to right."""
    subscripts = em.static(subscripts, "einsum: subscripts").replace(" ", "")
    if out is not None:
        raise NotSupportedError("einsum: out= is not supported")
    xs = [em.asarray(x) for x in operands]
    specs, out_spec = _einsum_specs(subscripts, xs)
    # NumPy returns a view, ignoring dtype=, when one operand is only transposed or diagonalised
    if dtype is not None and not (len(xs) == 1 and set(specs[0]) == set(out_spec)):
        dtype = static_dtype(em, dtype)
        for x in xs:
            if not np.can_cast(x.dtype, dtype, casting=em.static(casting, "einsum: casting")):
                raise ShapeError(f"einsum: cannot cast {x.dtype} to {dtype} under casting={casting!r}")
        xs = [em.cast(x, dtype) for x in xs]
    sizes: dict[str, int] = {}
    for spec, x in zip(specs, xs):
        for c, n in zip(spec, x.shape):
            if n != 1 and sizes.get(c, 1) not in (1, n):
                raise ShapeError(f"einsum: subscript {c!r} has sizes {sizes[c]} and {n}")
            sizes[c] = max(sizes.get(c, 1), n) if n else 0

    def prepare(x, spec, keep):
        """Take diagonals of repeated letters, broadcast size-1 axes, sum out letters not in keep."""
        while len(set(spec)) != len(spec):
            c = next(c for c in spec if spec.count(c) > 1)
            p = spec.index(c)
            q = spec.index(c, p + 1)
            x = FUNCTIONS["numpy.diagonal"](em, x, 0, p, q)
            spec = "".join(ch for i, ch in enumerate(spec) if i not in (p, q)) + c
        want = tuple(sizes[c] for c in spec)
        if x.shape != want:
            x = broadcast_to(em, x, want)
        axes = tuple(i for i, c in enumerate(spec) if c not in keep)
        if axes:   # einsum sums in the operand's dtype (np.sum would widen small integers)
            x = FUNCTIONS["numpy.sum"](em, x, axis=axes, dtype=x.dtype if not is_bool(x.dtype) else None)
            spec = "".join(c for c in spec if c in keep)
        return x, spec

    def later(i):
        return out_spec + "".join(specs[i:])
    a, sa = prepare(xs[0], specs[0], later(1))
    for i in range(1, len(xs)):
        b, sb = prepare(xs[i], specs[i], out_spec + sa + "".join(specs[i + 1:]))
        keep = later(i + 1)
        batch = [c for c in sa if c in sb and c in keep]
        contract = [c for c in sa if c in sb and c not in keep]
        a = _contract(em, a, b, [sa.index(c) for c in contract], [sb.index(c) for c in contract],
                      [sa.index(c) for c in batch], [sb.index(c) for c in batch])
        sa = "".join(batch + [c for c in sa if c not in batch and c not in contract]
                     + [c for c in sb if c not in batch and c not in contract])
    a, sa = prepare(a, sa, out_spec)
    return transpose(em, a, tuple(sa.index(c) for c in out_spec)) if sa != out_spec else a


@register("numpy.cross", note="vectors of 2 or 3 components along an axis; stacks broadcast")
def cross(em, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """NumPy's own steps: components along the last axis, products in the promoted dtype."""
    if is_static(a, b):
        return fold(np.cross, a, b, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)
    if axis is not None:
        axisa = axisb = axisc = em.static(axis, "cross: axis")
    a, b = as_array(em, a), as_array(em, b)
    if a.ndim < 1 or b.ndim < 1:
        raise ShapeError("cross: At least one array has zero dimension")
    a = moveaxis(em, a, normalize_axis(em.static(axisa, "cross: axisa"), a.ndim, "cross"), -1)
    b = moveaxis(em, b, normalize_axis(em.static(axisb, "cross: axisb"), b.ndim, "cross"), -1)
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ShapeError("cross: incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    dtype = np.promote_types(a.dtype, b.dtype)
    a, b = em.cast(a, dtype), em.cast(b, dtype)
    shape = broadcast_shapes("cross", a.shape[:-1], b.shape[:-1])
    ca = [em.broadcast(getitem(em, a, (Ellipsis, i)), shape) for i in range(na)]
    cb = [em.broadcast(getitem(em, b, (Ellipsis, i)), shape) for i in range(nb)]
    mul, sub = FUNCTIONS["numpy.multiply"], FUNCTIONS["numpy.subtract"]
    if na == 2 and nb == 2:   # the z component (an array, also 0-d)
        return em.zero_d_array(em.cast(sub(em, mul(em, ca[0], cb[1]), mul(em, ca[1], cb[0])), dtype))
    if na == 2:
        parts = [mul(em, ca[1], cb[2]), FUNCTIONS["numpy.negative"](em, mul(em, ca[0], cb[2])),
                 sub(em, mul(em, ca[0], cb[1]), mul(em, ca[1], cb[0]))]
    elif nb == 2:
        parts = [FUNCTIONS["numpy.negative"](em, mul(em, ca[2], cb[1])), mul(em, ca[2], cb[0]),
                 sub(em, mul(em, ca[0], cb[1]), mul(em, ca[1], cb[0]))]
    else:
        parts = [sub(em, mul(em, ca[1], cb[2]), mul(em, ca[2], cb[1])),
                 sub(em, mul(em, ca[2], cb[0]), mul(em, ca[0], cb[2])),
                 sub(em, mul(em, ca[0], cb[1]), mul(em, ca[1], cb[0]))]
    out = em.emit("concatenate", *[reshape(em, em.cast(p, dtype), shape + (1,)) for p in parts], axis=len(shape))
    return moveaxis(em, out, -1, normalize_axis(em.static(axisc, "cross: axisc"), out.ndim, "cross"))


@register("numpy.kron", complex_ok=True)
def kron(em, a, b):
    """NumPy's own steps: both operands given interleaved size-1 axes, one broadcast product."""
    if is_static(a, b):
        return fold(np.kron, a, b)
    b, a = as_array(em, b), as_array(em, a)
    if a.ndim < b.ndim:
        a = reshape(em, a, (1,) * (b.ndim - a.ndim) + a.shape)
    nda, ndb = a.ndim, b.ndim
    if nda == 0 or ndb == 0:
        return FUNCTIONS["numpy.multiply"](em, a, b)
    as_ = (1,) * max(0, ndb - nda) + a.shape
    bs = (1,) * max(0, nda - ndb) + b.shape
    a_arr = reshape(em, a, tuple(v for d in as_ for v in (d, 1)))
    b_arr = reshape(em, b, tuple(v for d in bs for v in (1, d)))
    return reshape(em, FUNCTIONS["numpy.multiply"](em, a_arr, b_arr), tuple(x * y for x, y in zip(as_, bs)))
