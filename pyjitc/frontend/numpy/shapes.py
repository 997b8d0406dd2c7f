"""shapes: NumPy's functions that move, join, split and repeat array elements (reshape, transpose,
concatenate, flip, diagonal, pad, ...), and the ndarray attributes shape, ndim, dtype, size and T.
Where NumPy returns a view, so do these (values.make_view): writes through it reach the base."""
from __future__ import annotations

import numpy as np

from ...ir import dims
from ...errors import NotSupportedError, ShapeError
from ..indexing import getitem
from ..masked import Masked, mask
from ..registry import FUNCTIONS, register
from ..values import (FlatIter, Traced, fold, is_static, items_of, join_params, make_view, read_only_view,
                      unchanged_row)
from .dtypes import static_dtype
from .elementwise import cmp, sel

def normalize_axis(axis, ndim, name):
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise ShapeError(f"{name}: axis must be an integer, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ShapeError(f"{name}: axis {axis} is out of bounds for array of dimension {ndim}")
    return int(axis) % ndim if ndim else 0


@register("numpy.lib.array_utils.normalize_axis_index",
          note="compile-time arguments (NumPy's own code calls it: np.rollaxis)")
def normalize_axis_index(em, axis, ndim, msg_prefix=None):
    from numpy.lib.array_utils import normalize_axis_index as numpys
    try:
        return numpys(em.static(axis, "normalize_axis_index: axis"), em.static(ndim, "normalize_axis_index: ndim"),
                      em.static(msg_prefix, "normalize_axis_index: msg_prefix"))
    except np.exceptions.AxisError as e:
        raise ShapeError(f"AxisError: {e}") from None


def normalize_axes(em, axis, ndim, name) -> tuple[int, ...]:
    axis = em.static(axis, f"{name}: axis")
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, np.ndarray) and axis.ndim == 1 and axis.dtype.kind in "iu":   # (NumPy's own code passes these)
        axis = [int(a) for a in axis]
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(normalize_axis(a, ndim, name) for a in axes)
    if len(set(out)) != len(out):
        raise ShapeError(f"{name}: repeated axis in {axis!r}")
    return out


@register("numpy.reshape", method="reshape", complex_ok=True, views=True)
def reshape(em, a, *shape, order="C", newshape=None, copy=None):
    if newshape is not None:
        shape = (newshape,)
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = em.static(shape, "reshape: the new shape")
    order = em.static(order, "reshape: order")
    if order == "F" and not is_static(a):   # Fortran order: the reversed axes, reshaped in C order to the reversed shape
        a = em.asarray(a)
        new = np.empty(a.shape, dtype=np.bool_).reshape(shape, order="F").shape
        flipped = reshape(em, transpose(em, a), tuple(reversed(new)))
        return transpose(em, flipped)
    if order not in ("C", "F"):
        raise NotSupportedError(f"reshape: order={order!r} depends on the memory layout; use order='C' or 'F'")
    if isinstance(a, (list, tuple)) and next(items_of(a, Traced), None) is not None:
        a = em.asarray(a)    # a list holding run-time numbers (np.ravel([i, i]) in np.append)
    if is_static(a):
        return fold(np.reshape, a, shape, order=order)
    a = em.asarray(a)
    try:
        new = dims.reshaped(a.shape, shape)    # NumPy's -1 and size rules
    except (TypeError, ValueError) as e:
        raise ShapeError(f"reshape: {e}") from None
    if new == a.shape:
        return a
    out = em.emit("reshape", a, shape=tuple(new), weak=a.weak)
    if a.view is not None and not _reshapes_only(a) and \
            [d for d in a.shape if d != 1] != [d for d in new if d != 1]:
        # NumPy copies or not depending on the view's memory layout (adding or dropping length-1
        # axes never copies)
        layout = _reshape_is_view(em, a, tuple(new))
        if layout is None:      # an argument's view: its layout is the caller's
            return make_view(a, out, None, None)
        if not layout:          # NumPy copies: a new array
            return Traced(out.value, out.weak, out.params)
    old = a.shape
    # of an argument itself: a view if the caller's array is C-contiguous, as compiled (a write
    # through it is checked against the array passed: Signature.c_order)
    c_order = em.c_order_writes if id(a) in em.arguments and \
        [d for d in a.shape if d != 1] != [d for d in new if d != 1] else None
    return make_view(a, out, lambda base: em.b.emit("reshape", base, shape=tuple(new)),
                     lambda base, v: em.b.emit("reshape", v, shape=old), ("reshape", tuple(new)), c_order)


@register("numpy.transpose", method="transpose", complex_ok=True, views=True)
def transpose(em, a, *axes, **kw):
    if kw:   # np.transpose(a, axes=(1, 0, 2))
        if set(kw) != {"axes"} or axes:
            raise ShapeError(f"transpose() got an unexpected keyword argument {next(iter(set(kw) - {'axes'}), 'axes')!r}")
        axes = (kw["axes"],)
    axes = em.static(axes, "transpose: axes")
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list, np.ndarray))):
        axes = axes[0]
    axes = None if axes is None or len(axes) == 0 else [int(x) for x in axes]
    if is_static(a):
        return fold(np.transpose, a, axes)
    a = em.asarray(a)
    perm = tuple(reversed(range(a.ndim))) if axes is None else tuple(normalize_axis(x, a.ndim, "transpose") for x in axes)
    if sorted(perm) != list(range(a.ndim)):
        raise ShapeError(f"transpose: axes {axes} don't match array of dimension {a.ndim}")
    if perm == tuple(range(a.ndim)):
        return a
    inverse = tuple(int(i) for i in np.argsort(perm))
    return make_view(a, em.emit("transpose", a, perm=perm, weak=a.weak),
                     lambda base: em.b.emit("transpose", base, perm=perm),
                     lambda base, v: em.b.emit("transpose", v, perm=inverse), ("transpose", perm))


@register("numpy.ravel", method="ravel", complex_ok=True, views=True)
def ravel(em, a, order="C"):
    return reshape(em, strong(em, a), -1, order=order)


def strong(em, a):
    """A run-time Python number as NumPy's functions take it: a strongly typed 0-d array (the
    function's result is an array, no longer a weak scalar under NEP 50)."""
    return em.cast(a, a.dtype) if isinstance(a, Traced) and a.weak else a


def _reshape_is_view(em, a, shape) -> bool | None:
    """Whether NumPy's reshape of the view `a` is a view (True) or a copy (False), decided on an
    array of the root's shape laid out as pyjitc lays out the arrays it makes (C order); None
    where that can't be known: the root is an argument (its layout is the caller's) or a view in
    the chain has no recipe."""
    from ...program import view_of
    recipes, t = [], a
    while t.view is not None:
        if t.view.recipe is None:
            return None
        recipes.insert(0, t.view.recipe)
        t = t.view.base
    if id(t) in em.arguments or dims.is_symbolic(t.shape):   # (a run-time size: as for an argument)
        return None
    model = np.empty(t.shape, dtype=np.bool_)
    view = model
    for r in recipes:
        view = view_of(r, view)
    return np.shares_memory(view.reshape(shape), model) if model.size else None


def _reshapes_only(a) -> bool:
    """Whether `a` is its root array seen through reshapes only: C-contiguous, so a reshape of it
    is a view in NumPy too (np.arange(30.0).reshape(5, 6).ravel() shares the arange's memory)."""
    while a.view is not None:
        if a.view.recipe is None or a.view.recipe[0] != "reshape":
            return False
        a = a.view.base
    return True


def take_slice(em, x, ax, start, stop):
    s = [0] * x.ndim
    lim = list(x.shape)
    s[ax], lim[ax] = start, stop
    return em.emit("slice", x, start=tuple(s), limit=tuple(lim), strides=(1,) * x.ndim)


@register("numpy.squeeze", method="squeeze", complex_ok=True, views=True)
def squeeze(em, a, axis=None):
    if is_static(a):
        return fold(np.squeeze, a, axis=em.static(axis, "axis"))
    a = em.asarray(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(a.shape) if d == 1)
    else:
        axes = normalize_axes(em, axis, a.ndim, "squeeze")
        if any(a.shape[i] != 1 for i in axes):
            raise ShapeError("cannot select an axis to squeeze out which has size not equal to one")
    return reshape(em, a, tuple(d for i, d in enumerate(a.shape) if i not in axes))


@register("numpy.expand_dims", complex_ok=True, views=True)
def expand_dims(em, a, axis):
    if is_static(a):
        return fold(np.expand_dims, a, em.static(axis, "axis"))
    a = strong(em, em.asarray(a))
    new = np.expand_dims(np.empty(a.shape, np.bool_), em.static(axis, "expand_dims: axis")).shape
    return reshape(em, a, new)


@register("numpy.swapaxes", method="swapaxes", complex_ok=True, views=True)
def swapaxes(em, a, axis1, axis2):
    a = em.asarray(a)
    i, j = (normalize_axis(em.static(v, "swapaxes: axis"), a.ndim, "swapaxes") for v in (axis1, axis2))
    perm = list(range(a.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(em, a, tuple(perm))


@register("numpy.moveaxis", complex_ok=True, views=True)
def moveaxis(em, a, source, destination):
    a = em.asarray(a)
    src = [normalize_axis(int(v), a.ndim, "moveaxis") for v in np.atleast_1d(em.static(source, "moveaxis: source"))]
    dst = [normalize_axis(int(v), a.ndim, "moveaxis") for v in np.atleast_1d(em.static(destination, "moveaxis: destination"))]
    if len(src) != len(dst):
        raise ShapeError("`source` and `destination` arguments must have the same number of elements")
    order = [n for n in range(a.ndim) if n not in src]
    for d, s_ in sorted(zip(dst, src)):   # NumPy's own algorithm
        order.insert(d, s_)
    return transpose(em, a, tuple(order))


@register("numpy.concatenate", "numpy.concat", complex_ok=True)
def concatenate(em, arrays, axis=0, dtype=None, out=None, casting="same_kind"):
    if out is not None:
        raise NotSupportedError("concatenate: out= is not supported")
    arrays = list(em.static(arrays, "concatenate: the list of arrays") if not isinstance(arrays, (list, tuple)) else arrays)
    if not arrays:
        raise ShapeError("need at least one array to concatenate")
    axis = em.static(axis, "concatenate: axis")
    if all(is_static(x) for x in arrays):
        return fold(np.concatenate, arrays, axis=axis)
    xs = [em.asarray(x) for x in arrays]
    # (a list among them, [i] of a run-time number too, is an array of its own dtype: int64, float64)
    dt = static_dtype(em, dtype) if dtype is not None else \
        np.result_type(*[x.dtype if isinstance(a, (list, tuple)) else em.dtype_of(a) for a, x in zip(arrays, xs)])
    if axis is None:
        xs = [reshape(em, x, -1) for x in xs]
        axis = 0
    nd = xs[0].ndim
    if nd == 0 or any(x.ndim != nd for x in xs):
        raise ShapeError("all the input arrays must have same number of dimensions" if nd else
                         "zero-dimensional arrays cannot be concatenated")
    ax = normalize_axis(axis, nd, "concatenate")
    for x in xs[1:]:
        if any(a != b for i, (a, b) in enumerate(zip(x.shape, xs[0].shape)) if i != ax):
            raise ShapeError("all the input array dimensions except for the concatenation axis must match exactly")
    xs = [em.cast(x, dt) for x in xs if x.shape[ax] > 0] or [em.cast(xs[0], dt)]
    return em.emit("concatenate", *xs, axis=ax) if len(xs) > 1 else xs[0]


def _concatenate_selections(em, arrays, axis=0, dtype=None, out=None, casting="same_kind"):
    """np.concatenate of 1-D arrays among which some are selections or run-time slices (run-length
    encoding: `np.concatenate(([0], np.nonzero(np.diff(b))[0] + 1, [len(b)]))`): a selection
    of the concatenated data, each part's positions selected as in it, the plain parts whole."""
    if out is not None or not isinstance(arrays, (list, tuple)) or em.static(axis, "concatenate: axis") not in (0, -1):
        return NotImplemented
    parts = [x if isinstance(x, Masked) else em.asarray(x) for x in arrays]
    if any(x.data.ndim != 1 or x.where[0] == "grid" if isinstance(x, Masked) else x.ndim != 1 for x in parts):
        return NotImplemented
    data = concatenate(em, [x.data if isinstance(x, Masked) else x for x in parts], dtype=dtype)
    flags = concatenate(em, [mask(em, x.where, x.data.shape, 0) if isinstance(x, Masked)
                             else em.full(True, np.bool_, x.shape) for x in parts])
    return Masked(data, 0, ("flags", flags), ("concatenate", flags.value.id), None)


concatenate.on_masked = _concatenate_selections


def appended_whole(em, arrays):
    """The array a loop appended (appends.py), if `arrays` are all its rows in order (np.array of a
    comprehension over 1000 rows stacked 1000 values by selects: minutes to compile)."""
    found = [em.appended_rows.get(id(a)) for a in arrays]
    if not found or any(f is None or f[0] is not a or not unchanged_row(a, f[3]) for f, a in zip(found, arrays)):
        return None
    buf = found[0][1]
    if any(f[1] is not buf or f[2] != k for k, f in enumerate(found)) or buf.shape[0] != len(arrays):
        return None
    return Traced(buf.value, None, buf.params)


def stack(em, arrays, axis=0):
    if axis == 0 and (whole := appended_whole(em, arrays)) is not None:
        return whole
    arrays = [em.asarray(a) for a in arrays]
    dt = np.result_type(*[a.dtype for a in arrays])
    shape = arrays[0].shape
    if any(a.shape != shape for a in arrays):
        raise ShapeError("all input arrays must have the same shape")
    axis = normalize_axis(axis, len(shape) + 1, "stack")
    if not shape and len(arrays) > STACK_PARTS:
        # many single values (`np.array([i * g for i in range(256)])`, a lookup table): each put at
        # its position by a select, one fused elementwise computation. As a concatenate IREE 3.13
        # gave the values one buffer each, all bound to one dispatch: "binding count 40 > 32" when
        # called (and 224 s to compile 256 of them)
        # (in groups of STACK_PARTS, each group's vector held in a buffer: IREE still joined the
        # values of 40 float powers into one dispatch with a buffer each)
        # (the groups' vectors joined in groups of groups, each behind a barrier: 46 groups read
        # by one dispatch were "binding count 47 > 32", 730 numbers a loop appended as pairs)
        n = len(arrays)
        positions = em.emit("iota", shape=(n,), dim=0, dtype=np.dtype(np.int64))
        pieces = []
        for g in range(0, n, STACK_PARTS):
            part = em.full(0, dt, (n,))
            for k in range(g, min(g + STACK_PARTS, n)):
                at = em.emit("compare", positions, em.full(k, np.int64, (n,)), direction="EQ")
                part = em.emit("select", at, em.broadcast(em.cast(arrays[k], dt), (n,)), part)
            pieces.append((g, min(g + STACK_PARTS, n), part))
        while len(pieces) > 1:
            joined = []
            for g in range(0, len(pieces), STACK_PARTS):
                chunk, out = pieces[g:g + STACK_PARTS], em.full(0, dt, (n,))
                for lo, hi, part in chunk:
                    inside = em.emit("and", em.emit("compare", positions, em.full(lo, np.int64, (n,)), direction="GE"),
                                     em.emit("compare", positions, em.full(hi, np.int64, (n,)), direction="LT"))
                    out = em.emit("select", inside, em.emit("barrier", part), out)
                joined.append((chunk[0][0], chunk[-1][1], out))
            pieces = joined
        return Traced(pieces[0][2].value, None, join_params(arrays))
    parts = [reshape(em, em.cast(a, dt), shape[:axis] + (1,) + shape[axis:]) for a in arrays]
    return em.emit("concatenate", *parts, axis=axis) if len(parts) > 1 else parts[0]


STACK_PARTS = 16    # more single values than this are stacked by selects (above)


register("numpy.stack", complex_ok=True)(lambda em, arrays, axis=0: stack(em, arrays, em.static(axis, "stack: axis")))


def _atleast(em, x, n):
    x = em.asarray(x)
    if n == 1:
        return reshape(em, x, (1,)) if x.ndim == 0 else x
    if x.ndim == 0:
        return reshape(em, x, (1, 1))
    return reshape(em, x, (1,) + x.shape) if x.ndim == 1 else x


def _atleast_nd(n):
    """np.atleast_1d/2d/3d: the array itself when it has enough axes, else a view with size-1 axes
    added where NumPy adds them; several arguments give a tuple."""
    def one(em, x):
        if is_static(x):
            return getattr(np, f"atleast_{n}d")(x)
        x = em.asarray(x)
        if x.weak:   # a Python number becomes a (strongly typed) array, as np.asanyarray makes it
            x = em.cast(x, x.dtype)
        if x.ndim >= n:
            return x
        shape = {0: (1,) * n, 1: ((1,) + x.shape + (1,))[:n] if n == 3 else (1,) + x.shape,
                 2: x.shape + (1,)}[x.ndim]
        return reshape(em, x, shape)

    def impl(em, *arys):
        out = tuple(one(em, x) for x in arys)
        return out[0] if len(out) == 1 else out
    impl.__name__ = impl.__qualname__ = f"atleast_{n}d"
    return impl


for _n in (1, 2, 3):
    register(f"numpy.atleast_{_n}d", complex_ok=True, views=True)(_atleast_nd(_n))


@register("numpy.block", complex_ok=True, note="the nesting of lists known at compile time")
def block(em, arrays):
    """NumPy's block: the innermost lists joined along the last axis, the next ones along the
    axis before it, ...; every piece first given leading size-1 axes up to the result's rank."""
    def depth(x, where):
        if isinstance(x, tuple):
            raise ShapeError(f"TypeError: arrays is a tuple. Only lists can be used to arrange blocks, "
                             f"and np.block does not allow implicit conversion from tuple to ndarray ({where})")
        if not isinstance(x, list):
            return 0, [x]
        if not x:
            raise ShapeError(f"ValueError: List at {where} cannot be empty")
        found = [depth(y, f"{where}[{i}]") for i, y in enumerate(x)]
        if len({d for d, _ in found}) != 1:
            raise ShapeError("ValueError: List depths are mismatched")
        return found[0][0] + 1, [leaf for _, leaves in found for leaf in leaves]

    levels, leaves = depth(arrays, "arrays")
    rank = max([levels] + [len(em.shape_of(x)) for x in leaves])

    def piece(x):
        x = em.asarray(x)
        if x.weak:
            x = em.cast(x, x.dtype)
        return reshape(em, x, (1,) * (rank - x.ndim) + x.shape) if x.ndim < rank else x

    def join(x, level):
        if level == levels:
            return piece(x)
        return concatenate(em, [join(y, level + 1) for y in x], axis=level - levels)
    return join(arrays, 0)


@register("numpy.hstack", complex_ok=True)
def hstack(em, tup, dtype=None):
    return concatenate(em, [_atleast(em, x, 1) for x in tup], axis=0 if all(_atleast(em, x, 1).ndim == 1 for x in tup)
                       else 1, dtype=dtype)


hstack.on_masked = lambda em, tup, dtype=None: _concatenate_selections(
    em, [x if isinstance(x, Masked) else _atleast(em, x, 1) for x in tup], dtype=dtype)


@register("numpy.vstack", "numpy.row_stack", complex_ok=True)
def vstack(em, tup, dtype=None):
    return concatenate(em, [_atleast(em, x, 2) for x in tup], 0, dtype)


@register("numpy.column_stack", complex_ok=True)
def column_stack(em, tup):
    return concatenate(em, [reshape(em, em.asarray(x), (-1, 1)) if em.asarray(x).ndim < 2 else em.asarray(x)
                            for x in tup], 1)


@register("numpy.broadcast_to", complex_ok=True, views=True)
def broadcast_to(em, array, shape):
    shape = tuple(em.static(shape, "broadcast_to: shape")) if not isinstance(shape, int) else (shape,)
    x = em.asarray(array)
    try:
        dims.broadcast_to(x.shape, shape)
    except ValueError as e:
        raise ShapeError(f"broadcast_to: {e}") from None
    if len(shape) > x.ndim:
        x = reshape(em, x, (1,) * (len(shape) - x.ndim) + x.shape)
    grow = lambda t: em.emit("broadcast_in_dim", t, shape=shape, dims=tuple(range(len(shape))))  # noqa: E731
    return read_only_view(x, grow(x), grow, "a broadcast array", ("broadcast_to", tuple(int(d) for d in shape)))


@register("numpy.flip", complex_ok=True, views=True)
def flip(em, m, axis=None):
    x = em.asarray(m)
    axes = tuple(range(x.ndim)) if axis is None else normalize_axes(em, axis, x.ndim, "flip")
    out = em.emit("reverse", x, dims=axes, weak=x.weak) if axes else x
    return make_view(x, out, lambda base: em.b.emit("reverse", base, dims=axes),
                     lambda base, v: em.b.emit("reverse", v, dims=axes), ("flip", axes)) if axes else out


register("numpy.fliplr", complex_ok=True, views=True)(lambda em, m: flip(em, m, 1))
register("numpy.flipud", complex_ok=True, views=True)(lambda em, m: flip(em, m, 0))


@register("numpy.roll", complex_ok=True)
def roll(em, a, shift, axis=None):
    shift = em.static(shift, "roll: shift")
    x = em.asarray(a)
    if axis is None:
        flat = reshape(em, x, -1)
        return reshape(em, roll(em, flat, shift, 0), x.shape)
    axes = normalize_axes(em, axis, x.ndim, "roll")
    shifts = np.broadcast_to(np.asarray(shift), (len(axes),)) if np.ndim(shift) <= 1 else shift
    out = x
    for ax, k in zip(axes, shifts):
        n = out.shape[ax]
        if n == 0:
            continue
        k = int(k) % n
        if k:
            out = em.emit("concatenate", take_slice(em, out, ax, n - k, n), take_slice(em, out, ax, 0, n - k), axis=ax)
    return out if out is not x else Traced(x.value, x.weak, x.params)


def _tri_mask(em, shape, k, lower):
    r = em.emit("iota", shape=shape, dim=len(shape) - 2, dtype=np.dtype(np.int64))
    c = em.emit("iota", shape=shape, dim=len(shape) - 1, dtype=np.dtype(np.int64))
    diff = em.emit("sub", c, r)
    return cmp(em, diff, em.full(k, np.int64, shape), "LE" if lower else "GE")


def _tri(lower):
    def impl(em, m, k=0):
        k = em.static(k, "tril/triu: k")
        if is_static(m):
            return fold(np.tril if lower else np.triu, m, k)
        x = em.asarray(m)
        if x.ndim < 2:
            x = em.broadcast(x, (x.shape[-1] if x.ndim else 1,) * 2)
        mask = _tri_mask(em, x.shape, k, lower)
        return sel(em, mask, x, em.full(0, x.dtype, x.shape))
    return impl


register("numpy.tril", complex_ok=True)(_tri(True))
register("numpy.triu", complex_ok=True)(_tri(False))


@register("numpy.diagonal", method="diagonal", complex_ok=True, views=True)
def diagonal(em, a, offset=0, axis1=0, axis2=1):
    offset = em.static(offset, "diagonal: offset")
    x = em.asarray(a)
    if x.ndim < 2:
        raise ShapeError("diag requires an array of at least two dimensions")
    axis1, axis2 = em.static(axis1, "diagonal: axis1"), em.static(axis2, "diagonal: axis2")
    out = _diagonal(em, x, offset, axis1, axis2)
    return read_only_view(x, out, lambda t: _diagonal(em, t, offset, axis1, axis2), "a diagonal",
                          ("diagonal", (int(offset), int(axis1), int(axis2))))


def _diagonal(em, x, offset, axis1, axis2):
    x = moveaxis(em, x, (axis1, axis2), (-2, -1))
    n, m = x.shape[-2:]
    rows = np.arange(max(0, -offset), n)
    cols = rows + offset
    keep = (cols >= 0) & (cols < m)
    rows, cols = rows[keep], cols[keep]
    if not rows.size:
        return em.full(0, x.dtype, x.shape[:-2] + (0,))
    # the elements r * (m + 1) + offset of the last two axes flattened: a strided slice (a gather
    # of those positions inside a run-time `if` made IREE 3.13 fail to compile, "'arith.cmpi' op
    # requires all operands to have the same type": a tic-tac-toe check, a probe of games)
    flat = em.emit("reshape", x, shape=x.shape[:-2] + (n * m,))
    start = int(rows[0]) * m + int(cols[0])
    lead = (0,) * (x.ndim - 2)
    return em.emit("slice", flat, start=lead + (start,), limit=x.shape[:-2] + (start + (rows.size - 1) * (m + 1) + 1,),
                   strides=(1,) * (x.ndim - 2) + (m + 1,))


@register("numpy.trace", method="trace", complex_ok=True)
def trace(em, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d = diagonal(em, a, offset, axis1, axis2)
    return FUNCTIONS["numpy.sum"](em, d, axis=-1, **({"dtype": dtype} if dtype is not None else {}))


@register("numpy.diag", complex_ok=True, views=True)   # (of a 2-D array: its diagonal, a view)
def diag(em, v, k=0):
    k = em.static(k, "diag: k")
    if is_static(v):
        return fold(np.diag, v, k)
    x = em.asarray(v)
    if x.ndim == 2:
        return diagonal(em, x, k)
    if x.ndim != 1:
        raise ShapeError("Input must be 1- or 2-d.")
    n = x.shape[0] + abs(k)
    r = em.emit("iota", shape=(n, n), dim=0, dtype=np.dtype(np.int64))
    c = em.emit("iota", shape=(n, n), dim=1, dtype=np.dtype(np.int64))
    on = cmp(em, em.emit("sub", c, r), em.full(k, np.int64, (n, n)), "EQ")
    padded = em.emit("concatenate", x, em.full(0, x.dtype, (abs(k),)), axis=0) if k else x
    # k >= 0: row i holds v[i] at column i + k; k < 0: column j holds v[j] at row j - k
    vals = em.emit("broadcast_in_dim", padded, shape=(n, n), dims=(0,) if k >= 0 else (1,))
    return sel(em, on, vals, em.full(0, x.dtype, (n, n)))


@register("numpy.diagflat", complex_ok=True)
def diagflat(em, v, k=0):
    """v flattened, on the k-th diagonal of a square array (NumPy's own code needs the C helper
    _array_converter)."""
    if is_static(v, k):
        return fold(np.diagflat, v, k)
    return diag(em, reshape(em, em.asarray(v), -1), k)


def _split(name, even):
    def impl(em, ary, indices_or_sections, axis=0):
        x = em.asarray(ary)
        ios = em.static(indices_or_sections, f"{name}: indices_or_sections")
        axis = normalize_axis(em.static(axis, f"{name}: axis"), x.ndim, name)
        try:
            parts = getattr(np, name)(np.arange(x.shape[axis]), ios)   # NumPy decides the pieces
        except ValueError as e:
            raise ShapeError(f"{name}: {e}") from None
        # views, as NumPy's pieces are: `a, b = np.split(x, 2); a[0] = 5` writes into x
        return [getitem(em, x, (slice(None),) * axis + (slice(int(p[0]), int(p[-1]) + 1) if p.size else slice(0, 0),))
                for p in parts]
    return impl


register("numpy.split", complex_ok=True, views=True, note="compile-time sections or indices; returns a list")(_split("split", True))
register("numpy.array_split", complex_ok=True, views=True, note="compile-time sections or indices; returns a list")(
    _split("array_split", False))


@register("numpy.tile", complex_ok=True)
def tile(em, A, reps):
    x = em.asarray(A)
    reps = tuple(np.atleast_1d(em.static(reps, "tile: reps")).tolist())
    nd = max(x.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    x = reshape(em, x, (1,) * (nd - x.ndim) + x.shape)
    inter = tuple(v for r, d in zip(reps, x.shape) for v in (r, d))
    y = em.emit("broadcast_in_dim", x, shape=inter, dims=tuple(range(1, 2 * nd, 2)))
    return reshape(em, y, tuple(r * d for r, d in zip(reps, x.shape)))


@register("numpy.repeat", method="repeat", complex_ok=True, note="compile-time repeats")
def repeat(em, a, repeats, axis=None):
    x = em.asarray(a)
    repeats = em.static(repeats, "repeat: repeats")
    if axis is None:
        x, axis = reshape(em, x, -1), 0
    ax = normalize_axis(em.static(axis, "repeat: axis"), x.ndim, "repeat")
    index = np.repeat(np.arange(x.shape[ax]), repeats)
    return getitem(em, x, (slice(None),) * ax + (index,))


PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "maximum", "minimum", "mean", "linear_ramp")


@register("numpy.pad", note="modes constant, edge, reflect, symmetric, wrap, maximum, minimum, mean (over the whole "
                            "axis: no stat_length), linear_ramp (compile-time end_values)")
def pad(em, array, pad_width, mode="constant", constant_values=0, end_values=0, stat_length=None, reflect_type="even"):
    x = em.asarray(array)
    mode = em.static(mode, "pad: mode")
    width = np.broadcast_to(np.asarray(em.static(pad_width, "pad: pad_width")), (x.ndim, 2))
    if mode not in PAD_MODES:
        raise NotSupportedError(f"pad: mode {mode!r} is not supported", hint=", ".join(PAD_MODES) + " are")
    if stat_length is not None or em.static(reflect_type, "pad: reflect_type") != "even":
        raise NotSupportedError("pad: stat_length= and reflect_type='odd' are not supported",
                                hint="statistics over the whole axis and even reflection are")
    for ax in range(x.ndim):
        lo, hi = (int(v) for v in width[ax])
        if not (lo or hi):
            continue
        n = x.shape[ax]
        if mode in ("maximum", "minimum", "mean", "linear_ramp"):
            if n == 0:
                raise ShapeError(f"ValueError: can't extend empty axis {ax} using modes other than 'constant' or 'empty'")
            x = _pad_by_values(em, x, ax, lo, hi, mode, end_values)
            continue
        if mode == "constant":
            cv = np.broadcast_to(np.asarray(em.static(constant_values, "pad: constant_values")), (x.ndim, 2))
            blocks = []
            for w, v in ((lo, cv[ax][0]), (None, None), (hi, cv[ax][1])):
                if w is None:
                    blocks.append(x)
                elif w:
                    shape = list(x.shape)
                    shape[ax] = w
                    blocks.append(em.full(np.asarray(v).astype(x.dtype), x.dtype, tuple(shape)))
            x = em.emit("concatenate", *blocks, axis=ax)
        else:
            index = np.pad(np.arange(n), (lo, hi), mode=mode)   # NumPy's own index pattern
            x = getitem(em, x, (slice(None),) * ax + (index,))
    return x


def _pad_by_values(em, x, ax, lo, hi, mode, end_values):
    """np.pad's statistic modes (the axis's maximum, minimum or mean, NumPy's rounding to an
    integer dtype) and linear_ramp (np.linspace from each end value to the edge, endpoint left
    out, in the array's dtype) along one axis."""
    blocks = []
    if mode == "linear_ramp":
        ev = np.broadcast_to(np.asarray(em.static(end_values, "pad: end_values")), (x.ndim, 2))
        for w, value, edge_at in ((lo, ev[ax][0], 0), (hi, ev[ax][1], -1)):
            if not w:
                blocks.append(None)
                continue
            edge = getitem(em, x, (slice(None),) * ax + (edge_at,))
            ramp = FUNCTIONS["numpy.linspace"](em, np.asarray(value).astype(x.dtype)[()], edge, num=w, endpoint=False,
                                               dtype=x.dtype, axis=ax)
            blocks.append(ramp if edge_at == 0 else FUNCTIONS["numpy.flip"](em, ramp, axis=ax))
    else:
        stat = FUNCTIONS["numpy.max" if mode == "maximum" else "numpy.min" if mode == "minimum" else "numpy.mean"](
            em, x, axis=ax, keepdims=True)
        if mode == "mean" and x.dtype.kind in "iub":
            stat = em.cast(FUNCTIONS["numpy.round"](em, stat), x.dtype)
        stat = em.cast(em.asarray(stat), x.dtype)
        for w in (lo, hi):
            shape = list(x.shape)
            shape[ax] = w
            blocks.append(FUNCTIONS["numpy.broadcast_to"](em, stat, tuple(shape)) if w else None)
    parts = [b for b in (blocks[0], x, blocks[1]) if b is not None]
    return em.emit("concatenate", *[em.asarray(b) for b in parts], axis=ax)


@register("numpy.meshgrid", views="copy")
def meshgrid(em, *xi, indexing="xy", sparse=False, copy=True):
    indexing = em.static(indexing, "meshgrid: indexing")
    xs = [reshape(em, em.asarray(x), -1) for x in xi]
    shape = [x.shape[0] for x in xs]
    if indexing == "xy" and len(xs) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    sparse, copy = em.static(sparse, "meshgrid: sparse"), em.static(copy, "meshgrid: copy")
    out = []
    for i, x in enumerate(xs):
        dim = (1 - i if i < 2 else i) if indexing == "xy" and len(xs) >= 2 else i
        size = tuple(n if d == dim else 1 for d, n in enumerate(shape)) if sparse else tuple(shape)
        if copy is False:   # NumPy's views of the inputs: reshaped (sparse), or broadcast (read-only here)
            view = reshape(em, x, tuple(n if d == dim else 1 for d, n in enumerate(shape)))
            out.append(view if sparse else broadcast_to(em, view, tuple(shape)))
        else:
            out.append(em.emit("broadcast_in_dim", x, shape=size, dims=(dim,)))
    # NumPy 2 returns a tuple; a list where sparse=True, copy=False (its reshaped inputs as they are)
    return out if sparse and copy is False else tuple(out)


register(attribute="shape")(lambda em, a: a.shape)
register(attribute="ndim")(lambda em, a: a.ndim)
register(attribute="dtype")(lambda em, a: a.dtype)
register(attribute="size")(lambda em, a: int(np.prod(a.shape, dtype=np.int64)))
register(attribute="itemsize")(lambda em, a: np.dtype(a.dtype).itemsize)
register(attribute="nbytes")(lambda em, a: int(np.prod(a.shape, dtype=np.int64)) * np.dtype(a.dtype).itemsize)
register(attribute="T")(lambda em, a: transpose(em, a))


@register(attribute="flat", complex_ok=True,
          note="a 1-d view in C order, whatever the layout: reads, writes through it (a.flat[::n + 1] = 0) "
               "and loops; a.flat = v for a scalar or an array of a's size")
def flat(em, a):
    if isinstance(a, np.ndarray):   # known contents: sharing memory, call_known runs this on the array itself
        return a
    a = em.asarray(a)
    new = tuple(dims.reshaped(a.shape, (-1,)))
    old = a.shape
    v = make_view(a, em.emit("reshape", a, shape=new, weak=a.weak),
                  lambda base: em.b.emit("reshape", base, shape=new),
                  lambda base, v: em.b.emit("reshape", v, shape=old), ("reshape", new))
    return FlatIter(v._value, v.weak, v.params, v.view)


@register(method="view", complex_ok=True, views=True,
          note="a view of the same memory: no dtype, the array's own, or one of the same item size (the bits "
               "reinterpreted); writes through it reach the array")
def view(em, a, dtype=None, type=None):
    if type is not None:
        raise NotSupportedError("ndarray.view(type=...): array subclasses are not supported")
    x = em.asarray(a)
    dt = x.dtype if dtype is None else static_dtype(em, dtype)
    if dt == x.dtype:
        return make_view(x, Traced(x.value, x.weak, x.params), lambda base: base, lambda base, v: v,
                         ("reshape", x.shape))
    if dt.itemsize != x.dtype.itemsize or dt.kind in "bc" or x.dtype.kind in "bc":
        raise NotSupportedError(f"ndarray.view({dt}) of a {x.dtype} array: only a dtype of the same item size "
                                "(not bool or complex) is supported", hint="use .astype() to convert the values")
    return make_view(x, em.emit("bitcast", x, dtype=dt), lambda base: em.b.emit("bitcast", base, dtype=dt),
                     lambda base, v: em.b.emit("bitcast", v, dtype=x.dtype), ("view", dt.str))


@register("numpy.matrix_transpose", complex_ok=True, views=True)
def matrix_transpose(em, x):
    """The last two axes swapped (a view, as NumPy's); also the `.mT` attribute."""
    ndim = len(em.shape_of(x))
    if ndim < 2:
        raise ShapeError(f"matrix transpose with ndim < 2 is undefined (got {ndim} dimensions)")
    return swapaxes(em, x, -1, -2)


register(attribute="mT")(matrix_transpose)


@register("numpy.lib.stride_tricks.sliding_window_view", complex_ok=True, views=True,
          note="a read-only view of x, as NumPy's (the windows are gathered; later writes into x show); writeable=True is refused")
def sliding_window_view(em, x, window_shape, axis=None, *, subok=False, writeable=False):
    if em.static(writeable, "sliding_window_view: writeable"):
        raise NotSupportedError("sliding_window_view(writeable=True): writes through overlapping windows are not supported",
                                hint="compute the new values and write them into x with slices")
    x = em.asarray(x)
    ws = em.static(window_shape, "sliding_window_view: window_shape")
    ws = tuple(int(w) for w in (ws if np.iterable(ws) else (ws,)))
    if axis is None:
        if len(ws) != x.ndim:
            raise ShapeError(f"ValueError: Since axis is `None`, must provide window_shape for all dimensions of `x`; "
                             f"got {len(ws)} window_shape elements and `x.ndim` is {x.ndim}.")
        axes = tuple(range(x.ndim))
    else:
        axis = em.static(axis, "sliding_window_view: axis")
        axes = tuple(int(a) % x.ndim for a in (axis if np.iterable(axis) else (axis,)))
        if len(ws) != len(axes):
            raise ShapeError(f"ValueError: Must provide matching length window_shape and axis; got {len(ws)} "
                             f"window_shape elements and {len(axes)} axes elements.")
    if any(w < 0 for w in ws):
        raise ShapeError("ValueError: `window_shape` cannot contain negative values")
    shape = list(x.shape)
    for ax, w in zip(axes, ws):
        if shape[ax] - w + 1 < 1:
            raise ShapeError("ValueError: window shape cannot be larger than input array shape")
        shape[ax] -= w - 1
    if not axes:
        return x
    return read_only_view(x, _windows(em, x, axes, ws), lambda t: _windows(em, t, axes, ws), "sliding windows",
                          ("windows", (ws, axes)))


def _windows(em, x, axes, ws):
    out = x
    for ax, w in zip(axes, ws):
        n = out.shape[ax] - w + 1
        # out[..., i, ..., k] = out[..., i + k, ...]: a gather along the axis brought to the front
        front = moveaxis(em, out, ax, 0)
        start = em.emit("iota", shape=(n, w), dim=0, dtype=np.dtype(np.int64))
        idx = em.emit("add", start, em.emit("iota", shape=(n, w), dim=1, dtype=np.dtype(np.int64)))
        taken = em.emit("take", front, idx, weak=x.weak)            # (n, w, rest...)
        out = moveaxis(em, moveaxis(em, taken, 1, -1), 0, ax)
    return out
