"""masked: arrays whose length along one axis is known only at run time: `A[i, :j]`, `x[lo:hi]`,
`data[:, i + 1:m]` with run-time bounds, as loops over shrinking or growing slices (Cholesky, LU,
triangular solves, correlation matrices) write them.

The program holds such an array at its base's positions: `data` is the view with the whole axis
(a static capacity), and only positions lo <= k < hi along `axis` belong to the array. Elementwise
operations, reductions, dot products and writes into a region with the same bounds work on the
capacity with a mask, so the loop around them compiles to one run-time loop instead of being
unrolled. Two masked arrays combine only where their bounds are the same expressions (`A[i, :j]`
and `A[j, :j]`); everything else (an unknown function, indexing it, returning it, bounds that
differ) asks for the bounds at compile time, which unrolls the enclosing loop exactly as before:
deny by default, never a silently wrong shape."""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..ir import dims
from ..ir.types import is_bool, is_complex, is_float, is_int
from .values import NeedStatic, Traced, join_params, items_of


class Masked:
    """data: the base's view over the whole axis; axis: which axis has run-time bounds; where:
    which positions along it belong to the array, ("bounds", lo, hi) with int64 Traced bounds
    already clipped to [0, capacity], or ("flags", f) with a bool Traced f along the axis (x[mask]
    holds x flattened, and the mask); key: what makes two `where`s equal (capacity and each
    bound's expression, or the mask's identity); params: the scalar arguments/loop markers the
    bounds come from (None where they depend on array data)."""
    __slots__ = ("_data", "axis", "where", "key", "params", "positions", "own")

    def __init__(self, data, axis, where, key, params, positions=False, own=False):
        self._data, self.axis, self.where, self.key, self.params = data, axis, where, key, params
        self.positions = positions   # np.nonzero(m)[0]: data is 0..n-1, so x[it] is x[m]
        self.own = own               # data is an array of its own (a copy): writes into it stay there

    @property
    def data(self) -> Traced:
        if self._data is None:
            need(self, "using it after the loop or if that made it")
        return self._data

    def poisoned(self, extra=frozenset()) -> "Masked":
        """A stand-in after the region that made it: any use asks for the bounds at compile time."""
        # a selection by data (params None) still asks for the region's own markers: the loop
        # that carries it is unrolled (np.i0's Chebyshev loop over x[x <= 8.0])
        if extra is None:   # (from a condition on array data: no compile-time value decides it)
            return Masked(None, self.axis, self.where, None, None)
        params = self.params | extra if self.params is not None else (frozenset(extra) if extra else None)
        return Masked(None, self.axis, self.where, None, params)

    def __getattr__(self, name):
        need(self, f"its attribute {name}")

    def __bool__(self):
        need(self, "its truth value")

    def __len__(self):
        need(self, "its length as a Python number")

    def __iter__(self):
        need(self, "iterating over it")

    def __index__(self):
        need(self, "using it as an index")

    def __float__(self):
        need(self, "converting it to a number")

    __int__ = __complex__ = __float__

    def __array__(self, *args, **kwargs):
        need(self, "converting it to a NumPy array")

    def __eq__(self, other):
        need(self, "comparing it")

    __hash__ = object.__hash__

    def __repr__(self):
        return f"Masked({self._data!r}, axis={self.axis})"


def need(m: Masked, what: str):
    """Ask for the bounds at compile time (the enclosing loop is unrolled); an error where they
    depend on array values."""
    kind = getattr(type(m), "what", None) or ("slice's length depends on values known only at run time" if m.where[0] in (
        "bounds", "grid") else "selection's length (x[mask]) depends on the data")
    hint = getattr(type(m), "hint", None) or "compute with it elementwise, reduce it (sum, dot, max, ...) or write it into " + (
        "a slice with the same bounds; or make the bounds compile-time values" if m.where[0] in ("bounds", "grid") else
        "y[mask]; it can be returned from the top level of the function, outside loops and branches")
    reason = ShapeError(f"this {kind}, and {what} needs it at compile time", hint=hint)
    if m.params:
        raise NeedStatic(m.params, reason=reason)
    raise reason


def contains(*values) -> bool:
    return any(True for v in values for _ in items_of(v, Masked))


def first(*values) -> Masked:
    return next(m for v in values for m in items_of(v, Masked))


# ---------------------------------------------------------------- making one

def bounds(em, start, stop, n: int):
    """(lo, hi, key, params) of x[start:stop] along an axis of length n: NumPy's clipping of
    negative and out-of-range bounds, at run time where a bound is a run-time value."""
    parts, key = [], [n]
    for v, default in ((start, 0), (stop, n)):
        if not isinstance(v, Traced):
            iv = v if v is None or isinstance(v, dims.Dim) else int(v)
            c = default if v is None else min(max(iv + n if iv < 0 else iv, 0), n)
            parts.append(_int64(em, c))
            key.append(("c", c))
            continue
        base, offset = em.offset_of(v)
        key.append(("t", _structure(em, base), offset))
        t = em.cast(em.asarray(v), np.int64)
        zero, size = em.constant(np.int64(0)), _int64(em, n)
        t = em.emit("select", em.emit("compare", t, zero, direction="LT"), em.emit("add", t, size), t)
        t = em.emit("max", em.emit("min", t, size), zero)
        parts.append(t)
    return parts[0], parts[1], tuple(key), join_params([v for v in (start, stop) if isinstance(v, Traced)])


def _structure(em, value_id: int, depth: int = 8):
    """A key for the IR value `value_id` equal for equal computations: the op, its attributes and
    its operands' keys (leaves: block parameters, and values beyond `depth`). IR ops are pure and
    an update makes a new value, so `indices[indptr[i]:indptr[i + 1]]` and `data[indptr[i]:indptr[i
    + 1]]`, each reading indptr again, have one key: the same bounds."""
    producers = {}
    for block in em.b.blocks:
        for op in block.ops:        # all of them: a key must not depend on how many ops came after
            for r in op.results:
                producers[r.id] = op

    def key(vid, d):
        op = producers.get(vid)
        if op is None or not d or op.regions or len(op.results) != 1:
            return ("v", vid)
        attrs = tuple(sorted((k, np.asarray(v).tobytes() + str(np.asarray(v).dtype).encode() if isinstance(v, np.ndarray)
                              else repr(v)) for k, v in op.attrs.items()))
        return (op.name, attrs, tuple(key(o.id, d - 1) for o in op.operands))
    return key(value_id, depth)


def mask(em, where, shape, axis) -> Traced:
    """Which elements of an array of `shape` belong to the masked array (bool): positions
    lo <= k < hi along `axis`, or the flags along it."""
    shape = tuple(shape)
    if where[0] == "grid":
        return GRIDS["mask"](em, where[1], shape)
    if where[0] == "flags":
        return em.emit("broadcast_in_dim", where[1], shape=shape, dims=(axis,))
    idx = em.emit("iota", shape=shape, dim=axis, dtype=np.dtype(np.int64))
    lo, hi = em.broadcast(where[1], shape), em.broadcast(where[2], shape)
    return em.emit("and", em.emit("compare", idx, lo, direction="GE"), em.emit("compare", idx, hi, direction="LT"))


def filled(em, m: Masked, value) -> Traced:
    """m's data with `value` outside the bounds."""
    data = m.data
    fill = em.full(value, data.dtype, data.shape)
    return em.emit("select", mask(em, m.where, data.shape, m.axis), data, fill)


def length(em, m: Masked) -> Traced:
    if m.where[0] == "grid":
        need(m, "one length of an array masked along two axes")
    if m.where[0] == "flags":
        return em.emit("reduce", em.cast(m.where[1], np.int64), kind="add", axes=(0,))
    return em.emit("max", em.emit("sub", m.where[2], m.where[1]), em.constant(np.int64(0)))


def _count(m: Masked, n: Traced) -> Traced:
    """A run-time length as NumPy gives it in a shape: a Python int (weak). A selection's length
    remembers the selection: `np.zeros(len(idx))` is an array of that length (sized_like)."""
    t = Traced(n.value, int, m.params)
    if m.where[0] == "flags" and m.axis == 0:
        t.length_of = m
    return t


def sized_like(em, m: Masked, fill, dtype) -> Masked:
    """np.zeros/ones/empty(len(sel)): an array of the selection's run-time length, held as the
    selection is (at its positions, with its flags), so `y[idx] = np.zeros(len(idx))` writes it."""
    data = em.full(fill, dtype, (m.where[1].shape[0],))
    return Masked(Traced(data.value, None, frozenset()), 0, m.where, m.key, None)


def shape(em, m: Masked) -> tuple:
    """m.shape: the masked axis's length is a run-time int."""
    if m.where[0] == "grid":
        return GRIDS["shape"](em, m)
    n = _count(m, length(em, m))
    return tuple(n if i == m.axis else d for i, d in enumerate(m.data.shape))


def size(em, m: Masked) -> Traced:
    if m.where[0] == "grid":
        need(m, "its size")
    n = length(em, m)
    rest = dims.product(d for i, d in enumerate(m.data.shape) if i != m.axis)
    return _count(m, em.emit("mul", n, _int64(em, rest)) if not rest == 1 else n)


def _int64(em, n) -> Traced:
    """An int64 scalar holding n (a compile-time int or a symbolic dimension)."""
    return em.cast(em.dim_value(n), np.int64) if isinstance(n, dims.Dim) else em.constant(np.int64(n))


def fixed_along(shape, from_end: int) -> bool:
    """Whether an array of `shape`, broadcast against a masked array whose masked axis is
    `from_end` from the end, has a fixed length there (NumPy would need the run-time length)."""
    return len(shape) >= from_end and shape[len(shape) - from_end] != 1


def _join(*values):
    out = frozenset()
    for v in values:
        p = v.params if isinstance(v, (Masked, Traced)) else frozenset()
        if p is None:
            return None
        out |= p
    return out


# ---------------------------------------------------------------- operations on it

def call(em, impl, shown: str, args, kwargs):
    """impl(em, *args, **kwargs) where some argument is masked: the rules below, or the bounds at
    compile time."""
    from .registry import BUILTINS, FUNCTIONS
    if any(m.where[0] == "grid" for m in items_of((args, kwargs), Masked)):
        return GRIDS["call"](em, impl, shown, args, kwargs)   # run-time bounds on two axes: masked_grid.py
    if impl is FUNCTIONS["numpy.transpose"] and len(args) == 1 and not kwargs and isinstance(args[0], Masked) \
            and args[0].data.ndim == 2:
        m = args[0]    # A[k:, :].T
        return Masked(impl(em, m.data), 1 - m.axis, m.where, m.key, m.params, own=m.own)
    if impl is FUNCTIONS["numpy.transpose"] and len(args) == 1 and not kwargs and isinstance(args[0], tuple) \
            and all(_selection_1d(m) and m.key == args[0][0].key for m in args[0]):
        ms = args[0]   # np.transpose(np.nonzero(x)): np.argwhere(x), the positions' rows
        data = FUNCTIONS["numpy.stack"](em, [m.data for m in ms], axis=1)
        return Masked(data, 0, ms[0].where, ms[0].key, ms[0].params)
    if impl is BUILTINS.get("len") and len(args) == 1 and isinstance(args[0], Masked) and not kwargs:
        return shape(em, args[0])[0]
    if impl is BUILTINS.get("abs") and len(args) == 1 and not kwargs:
        impl = FUNCTIONS["numpy.absolute"]
    rule = getattr(impl, "on_masked", None)     # a function's own rule for masked arguments
    if rule is not None:
        found = rule(em, *args, **kwargs)
        if found is not NotImplemented:
            return found
    ufunc = getattr(impl, "ufunc", None)
    if ufunc is not None and ufunc.signature is None and ufunc.nout == 1 and not kwargs:
        return _elementwise(em, impl, shown, args)
    if impl in (FUNCTIONS["numpy.where"], FUNCTIONS["numpy.clip"]) and len(args) == 3 and not kwargs:
        return _elementwise(em, impl, shown, args)    # elementwise too: np.where(n % 2 == 0, n // 2, 3 * n + 1)
    if impl in (FUNCTIONS["numpy.dot"], FUNCTIONS["numpy.matmul"]) and len(args) == 2 and not kwargs:
        return _contraction(em, impl, shown, *args)
    if impl is FUNCTIONS["numpy.outer"] and len(args) == 2 and not kwargs:
        return _outer(em, impl, shown, *args)
    if impl is FUNCTIONS["numpy.flip"] and isinstance(args[0], Masked) and args[0].where[0] == "bounds" \
            and len(args) <= 2 and set(kwargs) <= {"axis"}:
        axis = args[1] if len(args) == 2 else kwargs.get("axis")
        return _flip(em, impl, args[0], axis)
    if impl is FUNCTIONS["numpy.unique"] and len(args) == 1 and not kwargs and isinstance(args[0], Masked):
        return _unique_of_selection(em, impl, args[0])
    if getattr(impl, "selections", False) and len(args) == 3 and not kwargs:
        return _at_selected(em, impl, shown, *args)
    if impl is FUNCTIONS["numpy.copy"] and len(args) == 1 and isinstance(args[0], Masked) and not kwargs:
        m = args[0]    # x[k:].copy(): the same positions of a copy
        return Masked(impl(em, m.data), m.axis, m.where, m.key, m.params, own=True)
    if impl is FUNCTIONS["numpy.linalg.norm"] and len(args) == 1 and not kwargs and isinstance(args[0], Masked) \
            and args[0].data.ndim == 1 and not is_complex(args[0].data.dtype):
        m = args[0]    # np.linalg.norm(R[k:, k]): sqrt of the sum of squares (Householder steps)
        x = m.data if is_float(m.data.dtype) else em.cast(m.data, np.float64)
        squares = Masked(em.emit("mul", x, x), 0, m.where, m.key, m.params)
        return FUNCTIONS["numpy.sqrt"](em, _reduction(em, FUNCTIONS["numpy.sum"], "sum", squares, None))
    if impl is _astype_method() and len(args) == 2 and isinstance(args[0], Masked) and not kwargs:
        m = args[0]    # x[mask].astype(np.int64): the same positions, converted
        return Masked(impl(em, m.data, args[1]), m.axis, m.where, m.key, m.params)
    if impl in _elementwise_functions() and len(args) == 1 and not kwargs:
        return _elementwise(em, impl, shown, args)   # np.real, np.angle: elementwise, not ufuncs
    from .registry import METHODS
    arg_names = {FUNCTIONS[f"numpy.{n}"]: n for n in ("argmax", "argmin")} | \
        {METHODS[n]: n for n in ("argmax", "argmin") if n in METHODS}
    if impl in arg_names and len(args) == 1 and isinstance(args[0], Masked) and set(kwargs) <= {"axis"}:
        return _arg_extreme(em, FUNCTIONS[f"numpy.{arg_names[impl]}"], arg_names[impl], args[0], kwargs.get("axis"))
    names = ("sum", "prod", "max", "min", "mean")
    reductions = {FUNCTIONS[f"numpy.{n}"]: n for n in names} | {METHODS[n]: n for n in names if n in METHODS}
    if impl in reductions and 1 <= len(args) <= 2 and isinstance(args[0], Masked) and set(kwargs) <= {"axis"} \
            and not (len(args) == 2 and "axis" in kwargs):   # np.sum(m, axis), m.mean(0), m.max(axis=1)
        axis = args[1] if len(args) == 2 else kwargs.get("axis")
        return _reduction(em, FUNCTIONS[f"numpy.{reductions[impl]}"], reductions[impl], args[0], axis)
    if impl in (FUNCTIONS["numpy.diff"], FUNCTIONS["numpy.sort"]) and len(args) == 1 and _selection_1d(args[0]) \
            and set(kwargs) <= ({"n", "axis"} if impl is FUNCTIONS["numpy.diff"] else {"axis"}) \
            and kwargs.get("axis", -1) in (0, -1):
        if impl is FUNCTIONS["numpy.sort"]:
            return RESHAPED["sort"](em, impl, args[0])
        return RESHAPED["diff"](em, impl, args[0], em.static(kwargs.get("n", 1), "np.diff: n"))
    stats = {FUNCTIONS[f"numpy.{n}"]: n for n in ("var", "std", "median", "cumsum")} | \
        {METHODS[n]: n for n in ("var", "std", "cumsum") if n in METHODS}
    if impl in stats and len(args) == 1 and isinstance(args[0], Masked) and args[0]._data is not None \
            and args[0].axis == 0 and args[0].data.ndim == 1 and set(kwargs) <= ({"ddof"} if stats[impl] in ("var", "std") else set()):
        return _selection_statistic(em, stats[impl], args[0], kwargs.get("ddof", 0))
    if impl in stats and stats[impl] in ("var", "std") and len(args) == 1 and isinstance(args[0], Masked) \
            and args[0]._data is not None and args[0].axis == 0 and args[0].where[0] != "grid" \
            and args[0].data.ndim >= 2 and set(kwargs) <= {"ddof", "axis"} and kwargs.get("axis") in (0, -args[0].data.ndim):
        return _moments_along_mask(em, stats[impl], args[0], em.static(kwargs.get("ddof", 0), f"np.{stats[impl]}: ddof"))
    need(first(args, kwargs), shown)


def _moments_along_mask(em, name: str, m: Masked, ddof):
    """var/std along the masked axis of a selection of rows (`X[y == c].var(axis=0)`, a Gaussian
    naive Bayes' class variances; `.mean(axis=0)` compiled, this was refused): deviations from the
    selection's mean, zero outside it, summed and divided by max(n - ddof, 0) as NumPy does."""
    from .registry import FUNCTIONS
    data = m.data if is_float(m.data.dtype) else em.cast(m.data, np.float64)
    m = Masked(data, 0, m.where, m.key, m.params)
    mean = em.asarray(_reduction(em, FUNCTIONS["numpy.mean"], "mean", m, 0))
    dev = em.emit("sub", data, em.broadcast(em.emit("reshape", mean, shape=(1,) + data.shape[1:]), data.shape))
    dev = filled(em, Masked(dev, 0, m.where, m.key, m.params), 0)
    total = em.emit("reduce", em.emit("mul", dev, dev), kind="add", axes=(0,))
    rest = em.emit("max", em.emit("sub", length(em, m), em.constant(np.int64(ddof))), em.constant(np.int64(0)))
    var = em.emit("div", total, em.broadcast(em.cast(rest, data.dtype), total.shape))
    return em.wrap((em.emit("sqrt", var) if name == "std" else var).value, m)



def _selection_statistic(em, name: str, m: Masked, ddof):
    """var, std, median and cumsum of a 1-D selection (`x[mask].std()`, `np.median(x[x > 0])`) or
    run-time slice (`np.var(x[:i])` in a loop: it was unrolled, 3000 steps in minutes): over the
    whole array with the left-out entries taking no part (var and std: deviations from the selection's
    mean, zero outside; median: the left-out entries sorted last as NaN, then the middle one or two
    of the len(m) first; cumsum: the running sum of the selected entries, itself a selection)."""
    from .registry import FUNCTIONS
    data = m.data
    if not is_float(data.dtype) and name != "cumsum":
        data = em.cast(data, np.float64)
        m = Masked(data, 0, m.where, m.key, m.params)
    if name == "cumsum":
        return Masked(FUNCTIONS["numpy.cumsum"](em, filled(em, m, 0)), 0, m.where, m.key, m.params)
    n = length(em, m)
    count = em.cast(n, data.dtype)
    if name in ("var", "std"):
        ddof = em.static(ddof, f"np.{name}: ddof")
        mean = _reduction(em, FUNCTIONS["numpy.mean"], "mean", m, None)
        dev = filled(em, Masked(em.emit("sub", data, em.broadcast(mean, data.shape)), 0, m.where, m.key, m.params), 0)
        total = em.emit("reduce", em.emit("mul", dev, dev), kind="add", axes=(0,))
        zero = em.constant(np.asarray(0, data.dtype))    # NumPy divides by max(n - ddof, 0): 0 / 0 is NaN
        var = em.emit("div", total, em.emit("max", em.emit("sub", count, em.constant(np.asarray(ddof, data.dtype))), zero))
        empty = em.emit("compare", n, em.constant(np.int64(0)), direction="EQ")   # NumPy: NaN
        var = em.emit("select", empty, em.constant(np.asarray(np.nan, data.dtype)), var)
        return em.wrap((em.emit("sqrt", var) if name == "std" else var).value, m)
    # median
    ordered = FUNCTIONS["numpy.sort"](em, filled(em, m, np.nan), axis=0)
    one = em.constant(np.int64(1))
    lo = em.emit("div", em.emit("sub", n, one), em.constant(np.int64(2)))
    hi = em.emit("div", n, em.constant(np.int64(2)))
    pick = lambda i: em.emit("reshape", em.emit("dynamic_slice", ordered, em.emit("max", i, em.constant(np.int64(0))), sizes=(1,)), shape=())
    a, b = pick(lo), pick(hi)
    mid = em.emit("div", em.emit("add", a, b), em.constant(np.asarray(2, data.dtype)))
    last = pick(em.emit("sub", n, one))     # a NaN among the selected sorts last: NumPy's median is NaN
    out = em.emit("select", em.emit("compare", last, last, direction="NE"), last, mid)
    empty = em.emit("compare", n, em.constant(np.int64(0)), direction="EQ")
    return em.wrap(em.emit("select", empty, em.constant(np.asarray(np.nan, data.dtype)), out).value, m)


def aligned(a: Masked, b: Masked) -> bool:
    return a.key == b.key


def _elementwise(em, impl, shown, args):
    if GRIDS["spans_two_axes"](args):    # A[k + 1:, k:k + 1] * A[k:k + 1, k + 1:]: a grid
        return GRIDS["elementwise"](em, impl, shown, args)
    ms = [a for a in args if isinstance(a, Masked)]
    ref = ms[0]
    for other in ms[1:]:
        if other.data.ndim - other.axis != ref.data.ndim - ref.axis:
            need(other, f"{shown} with a slice of other bounds")
    if not all(aligned(ref, other) for other in ms[1:]) and all(_selection_1d(m) for m in ms):
        args = RESHAPED["together"](em, shown, args)   # pos[1:] - pos[:-1], x[m1] * y[m2]
        ref = next(a for a in args if isinstance(a, Masked))
    elif not all(aligned(ref, other) for other in ms[1:]):
        args = _common_bounds(em, shown, args)
        ref = next(a for a in args if isinstance(a, Masked))
    shapes = [a.data.shape if isinstance(a, Masked) else em.shape_of(a) for a in args]
    rank = max(len(s) for s in shapes)
    from_end = ref.data.ndim - ref.axis     # the masked axis, counted from the end
    for a, s in zip(args, shapes):
        if not isinstance(a, Masked) and fixed_along(s, from_end):
            need(ref, f"{shown} with an array of fixed length on its axis")
    out = impl(em, *[a.data if isinstance(a, Masked) else a for a in args])
    if not isinstance(out, Traced) or out.ndim != rank:
        need(ref, shown)
    return Masked(out, rank - from_end, ref.where, ref.key, _join(*args))


# ---------------------------------------------------------------- slices of other bounds

def _capacity(m: Masked, shown: str) -> int:
    n = m.data.shape[m.axis]
    if m.where[0] != "bounds" or not isinstance(n, int):
        need(m, f"{shown} with a slice of other bounds")
    return n


def relocated(em, m: Masked, lo, capacity: int, n=None) -> Traced:
    """m's data with its element lo_m + t along its axis moved to lo + t, on an axis of
    `capacity`; where m holds one element and `n` (the length it meets) is not 1, that element
    broadcast along the whole axis, as NumPy broadcasts an axis of length 1."""
    data, axis = m.data, m.axis
    zero = em.constant(np.int64(0))
    pads = tuple(capacity if i == axis else 0 for i in range(data.ndim))
    padded = em.emit("pad", data, em.constant(np.zeros((), data.dtype)), low=pads, high=pads,
                     interior=(0,) * data.ndim)
    start = em.emit("add", em.emit("sub", m.where[1], lo), em.constant(np.int64(capacity)))
    shape = tuple(capacity if i == axis else d for i, d in enumerate(data.shape))
    moved = em.emit("dynamic_slice", padded, *[start if i == axis else zero for i in range(data.ndim)], sizes=shape)
    if n is None or data.shape[axis] == 0:   # (an empty axis has no element to broadcast)
        return moved
    first = em.emit("dynamic_slice", data, *[m.where[1] if i == axis else zero for i in range(data.ndim)],
                    sizes=tuple(1 if i == axis else d for i, d in enumerate(data.shape)))
    spread = em.emit("broadcast_in_dim", first, shape=shape, dims=tuple(range(data.ndim)))
    one = em.constant(np.int64(1))
    single = em.emit("and", em.emit("compare", length(em, m), one, direction="EQ"),
                     em.emit("compare", n, one, direction="NE"))
    return em.emit("select", em.broadcast(single, shape), spread, moved)


def _mismatch(em, k, n):
    """Whether a run-time length k neither equals n nor broadcasts (is 1): NumPy's ValueError."""
    return em.emit("and", em.emit("compare", k, n, direction="NE"),
                   em.emit("compare", k, em.constant(np.int64(1)), direction="NE"))


def moved_into(em, m: Masked, bounds, capacity, shown: str) -> Masked:
    """A run-time slice written into a slice of other bounds (lo, hi) on an axis of `capacity`
    (`y[1:k + 1] = x[:k]`): its elements moved there; NumPy's ValueError when the lengths differ
    and m's is not 1 (broadcast)."""
    _capacity(m, shown)
    if not isinstance(capacity, int):
        need(m, f"{shown} into a slice of other bounds")
    lo, hi = bounds
    n = em.emit("max", em.emit("sub", hi, lo), em.constant(np.int64(0)))
    em.check(_mismatch(em, length(em, m), n), f"ValueError: could not broadcast a slice into a slice of another length ({shown})")
    return Masked(relocated(em, m, lo, capacity, n), m.axis, ("bounds", lo, hi), None, m.params)


def _common_bounds(em, shown, args) -> list:
    """Elementwise operands that are slices of other bounds (`x[1:k + 1] - x[:k]`,
    `x[:n - k] * x[k:]`) moved to positions 0..L-1 of one axis, L their common run-time length
    (a slice of length 1 broadcast, as NumPy does; other lengths that differ raise NumPy's
    ValueError when the function runs)."""
    ms = [a for a in args if isinstance(a, Masked)]
    capacity = max(_capacity(m, shown) for m in ms)
    one = em.constant(np.int64(1))
    n = length(em, ms[0])
    for m in ms[1:]:
        n = em.emit("select", em.emit("compare", n, one, direction="EQ"), length(em, m), n)
    bad = None
    for m in ms:
        differs = _mismatch(em, length(em, m), n)
        bad = differs if bad is None else em.emit("or", bad, differs)
    em.check(bad, f"ValueError: operands could not be broadcast together ({shown} of slices of different lengths)")
    zero = em.constant(np.int64(0))
    key = ("common bounds", capacity, tuple(m.key for m in ms))
    where = ("bounds", zero, n)
    return [Masked(relocated(em, a, zero, capacity, n), a.axis, where, key, a.params) if isinstance(a, Masked) else a
            for a in args]


def _never_wins(dt, largest: bool):
    """A fill for the left-out positions that a max (`largest`) or a min never picks over a
    selected value (None for dtypes without one: complex)."""
    if is_float(dt):
        return -np.inf if largest else np.inf
    if is_bool(dt):
        return not largest
    if is_int(dt):
        return np.iinfo(dt).min if largest else np.iinfo(dt).max
    return None


def reduced_axes(em, axis, ndim: int) -> tuple:
    """The axes a reduction's `axis` argument names (None: all), as non-negative ints."""
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in ((axis,) if isinstance(axis, (int, np.integer)) else em.static(axis, "axis")))


def _reduction(em, impl, name: str, m: Masked, axis):
    data = m.data
    axes = reduced_axes(em, axis, data.ndim)
    if m.axis not in axes:        # the masked axis survives: reduce the data as it is
        out = impl(em, data, axis=axis)
        return Masked(out, m.axis - sum(1 for a in axes if a < m.axis), m.where, m.key, m.params)
    if name in ("max", "min"):
        empty = em.emit("compare", length(em, m), em.constant(np.int64(0)), direction="EQ")
        em.check(empty, f"ValueError: zero-size array to reduction operation {'maximum' if name == 'max' else 'minimum'} "
                        "which has no identity")
        fill = _never_wins(data.dtype, largest=name == "max")
        if fill is None:
            need(m, f"np.{name} of {data.dtype}")
        return impl(em, filled(em, m, fill), axis=axis)
    if name == "mean":
        from .registry import FUNCTIONS
        total = em.asarray(FUNCTIONS["numpy.sum"](em, filled(em, m, 0), axis=axis,
                                                  dtype=np.float64 if data.dtype.kind in "biu" else None))
        count = length(em, m)
        for a in axes:
            if a != m.axis:
                count = em.emit("mul", count, em.constant(np.int64(data.shape[a])))
        count = em.broadcast(em.cast(count, total.dtype), total.shape)
        return em.wrap(em.emit("div", total, count).value, m)
    return impl(em, filled(em, m, 1 if name == "prod" else 0), axis=axis)


def sorts_last(dt):
    """A fill for left-out entries that sorts after every selected one (NaN for floats: NumPy sorts
    NaNs last, and a selected NaN ties with it)."""
    return np.nan if is_float(dt) else (True if is_bool(dt) else np.iinfo(dt).max)


def _astype_method():
    from .registry import METHODS
    return METHODS.get("astype")


def _elementwise_functions() -> set:
    from .registry import FUNCTIONS
    return {FUNCTIONS[f"numpy.{n}"] for n in ("real", "imag", "angle", "round", "around", "nan_to_num", "fix", "sinc")
            if f"numpy.{n}" in FUNCTIONS}


def _unique_of_selection(em, impl, m: Masked):
    """np.unique of a 1-D selection (`len(np.unique(x[x >= 0]))`): the whole array with the left-out
    entries made the largest value (NaN for floats, which sort last), so the selected ones sort
    first; of the unique values, those among the first len(m) sorted entries."""
    data = m.data
    if m.where[0] != "flags" or m.axis != 0 or data.ndim != 1 or is_complex(data.dtype):
        need(m, "np.unique")
    dt = data.dtype
    fill = sorts_last(dt)
    out = impl(em, filled(em, m, fill))
    if not isinstance(out, Masked):   # (an empty array: nothing to select)
        return out
    n = data.shape[0]
    positions = em.emit("iota", shape=(n,), dim=0, dtype=np.dtype(np.int64))
    kept = em.emit("compare", positions, em.broadcast(length(em, m), (n,)), direction="LT")
    flags = em.emit("and", out.where[1], kept)
    return Masked(out.data, 0, ("flags", flags), ("flags", _structure(em, flags.value.id), (n,)), None)


def _at_selected(em, impl, shown, a, indices, b):
    """ufunc.at(a, idx[ok], w[ok]) (a histogram of the entries in range): the index array and the
    values, selections of one mask, as the whole arrays with the mask saying which entries count."""
    if isinstance(a, Masked) and a.where[0] == "flags" and a.axis == 0 and a.data.ndim == 1 \
            and not isinstance(indices, Masked) and not isinstance(b, Masked):
        # into an array sized by a selection (`sums = np.zeros(len(u)); np.add.at(sums, inverse, v)`,
        # a group-by after np.unique): index k is the k-th selected position
        ranks = checked_ranks(em, em.asarray(indices), length(em, a),
                              f"IndexError: {shown}: an index is out of bounds for the selection's length")
        return impl(em, a.data, _positions_of(em, a.where[1], ranks), b)
    if isinstance(a, Masked) or not isinstance(indices, Masked) or indices.where[0] != "flags" \
            or indices.axis != 0 or indices.data.ndim != 1:
        need(first(a, indices, b), shown)
    if isinstance(b, Masked):
        if not aligned(indices, b) or b.axis != 0 or b.data.ndim != 1:
            need(b, f"{shown} with values selected by another mask")
        b = b.data
    return impl(em, a, indices.data, b, keep=indices.where[1])


def _arg_extreme(em, impl, name: str, m: Masked, axis):
    """np.argmax / np.argmin of a 1-D slice with run-time bounds (`np.argmax(np.abs(A[k:, k]))`, the
    pivot search): over the whole axis with the outside filled by the extreme that never wins, as
    an index from the slice's start. The winner lands outside only when every element is that
    extreme (-inf for argmax), where NumPy's answer is the slice's first element."""
    data = m.data
    if data.ndim != 1 or m.axis != 0 or axis not in (None, 0, -1):
        need(m, f"np.{name}")
    empty = em.emit("compare", length(em, m), em.constant(np.int64(0)), direction="EQ")
    em.check(empty, f"ValueError: attempt to get {name} of an empty sequence")
    fill = _never_wins(data.dtype, largest=name == "argmax")
    if fill is None:
        need(m, f"np.{name} of {data.dtype}")
    at = em.cast(impl(em, filled(em, m, fill)), np.int64)
    if m.where[0] == "flags":   # a selection: the winner's rank among the selected positions
        flags = m.where[1]
        positions = em.emit("iota", shape=flags.shape, dim=0, dtype=np.dtype(np.int64))
        before = em.emit("and", flags, em.emit("compare", positions, em.broadcast(at, flags.shape), direction="LT"))
        rank = em.emit("reduce", em.cast(before, np.int64), kind="add", axes=(0,))
        hit = em.emit("reduce", em.emit("and", flags, em.emit("compare", positions, em.broadcast(at, flags.shape),
                                                              direction="EQ")), kind="or", axes=(0,))
        return em.wrap(em.emit("select", hit, rank, em.constant(np.int64(0))).value, m, weak=None)
    lo, hi = m.where[1], m.where[2]
    inside = em.emit("and", em.emit("compare", at, lo, direction="GE"), em.emit("compare", at, hi, direction="LT"))
    rel = em.emit("select", inside, em.emit("sub", at, lo), em.constant(np.int64(0)))
    return em.wrap(rel.value, m, weak=None)


def _contraction(em, impl, shown, a, b):
    """dot/matmul of 1-D and 2-D operands: a masked contracted axis (A[i, :j] @ A[:j, j]) is
    zero-filled on both sides; a masked free axis (v @ data[:, i:m]) stays masked in the result."""
    da = a.data if isinstance(a, Masked) else em.asarray(a)
    db = b.data if isinstance(b, Masked) else em.asarray(b)
    if da.ndim not in (1, 2) or db.ndim not in (1, 2):
        need(first(a, b), f"{shown} of arrays with more than 2 dimensions")
    ca, cb = da.ndim - 1, (0 if db.ndim == 1 else db.ndim - 2)
    ma = a.axis if isinstance(a, Masked) else None
    mb = b.axis if isinstance(b, Masked) else None
    if ma == ca or mb == cb:
        if not (ma == ca and mb == cb):
            need(first(a, b), f"{shown} over a slice of other bounds")
        if not aligned(a, b):     # `x[:n - k] @ x[k:]`: b's elements moved to a's positions
            em.check(em.emit("compare", length(em, a), length(em, b), direction="NE"),
                     f"ValueError: {shown}: shapes not aligned (slices of different lengths)")
            _capacity(b, shown)
            b = Masked(relocated(em, b, a.where[1], _capacity(a, shown)), b.axis, a.where, a.key, b.params)
        return impl(em, filled(em, a, 0), filled(em, b, 0))
    if ma is not None and mb is not None:
        need(a, f"{shown} of two slices with run-time lengths")
    out = impl(em, da, db)
    if ma is not None:            # a 2-D, rows masked
        return Masked(out, 0, a.where, a.key, _join(a, b))
    return Masked(out, out.ndim - 1, b.where, b.key, _join(a, b))   # b 2-D, columns masked


def _outer(em, impl, shown, a, b):
    """np.outer of two vectors, one a run-time slice (`np.outer(Q[:, k], R[k, k + 1:])`): the
    product of the whole vectors, masked along that slice's axis."""
    if isinstance(a, Masked) and isinstance(b, Masked) and a.where[0] == b.where[0] == "bounds":
        return GRIDS["outer"](em, impl, shown, a, b)   # np.outer(A[k + 1:, k], A[k, k + 1:])
    if isinstance(a, Masked) == isinstance(b, Masked) or first(a, b).data.ndim != 1:
        need(first(a, b), f"{shown} of {'two slices with run-time lengths' if isinstance(a, Masked) else 'it'}")
    m = first(a, b)
    out = impl(em, a.data if isinstance(a, Masked) else a, b.data if isinstance(b, Masked) else b)
    return Masked(out, 0 if m is a else 1, m.where, m.key, _join(a, b))


def _flip(em, impl, m: Masked, axis):
    """np.flip of a run-time slice (`np.flip(r[:k])`): the positions lo..hi-1 keep their bounds and
    take the elements hi-1..lo. The whole axis reversed holds them at n-hi..n-lo-1, whence they
    are relocated to lo."""
    data = m.data
    axes = tuple(range(data.ndim)) if axis is None else \
        tuple(a % data.ndim for a in ((axis,) if isinstance(axis, int) else axis))
    rev = impl(em, data, axes)
    if m.axis not in axes:
        return Masked(rev, m.axis, m.where, m.key, m.params)
    n = em.constant(np.int64(data.shape[m.axis]))
    _, lo, hi = m.where
    reversed_ = Masked(rev, m.axis, ("bounds", em.emit("sub", n, hi), em.emit("sub", n, lo)), None, m.params)
    return Masked(relocated(em, reversed_, lo, data.shape[m.axis]), m.axis, m.where, m.key, m.params)


def strided(em, m: Masked, step: int) -> Masked:
    """m[::step] (step > 1) of a run-time slice (`x[k::3]`; `x[i::-2]`, every second element of
    x[i::-1]): element t is m's element lo + step * t, gathered to position t of an axis of
    ceil(n / step) positions; its bounds are 0..ceil((hi - lo) / step)."""
    from .registry import FUNCTIONS
    data, axis = m.data, m.axis
    n = data.shape[axis]
    _, lo, hi = m.where
    capacity = -(-n // step)
    at = em.emit("add", em.emit("mul", em.emit("iota", shape=(capacity,), dim=0, dtype=np.dtype(np.int64)),
                                em.full(step, np.int64, (capacity,))), em.broadcast(lo, (capacity,)))
    at = em.emit("min", at, em.full(max(n - 1, 0), np.int64, (capacity,)))
    out = FUNCTIONS["numpy.take"](em, data, Traced(at.value, None, m.params), axis=axis)
    count = em.emit("div", em.emit("add", em.emit("sub", hi, lo), em.constant(np.int64(step - 1))),
                    em.constant(np.int64(step)))
    key = ("strided", m.key, step) if m.key is not None else None
    return Masked(Traced(out.value, data.weak, m.params), axis, ("bounds", em.constant(np.int64(0)), count), key,
                  m.params)


def subscript(em, m: Masked, index):
    """m[::-1], m[:, ::-1], m[::-1, :]: np.flip along the reversed axes (`r[:k][::-1] @ y[:k]`,
    a Levinson-Durbin step); any other index asks for the bounds at compile time."""
    items = index if isinstance(index, tuple) else (index,)
    if _selection_1d(m) and len(items) == 1 and isinstance(items[0], slice):
        return RESHAPED["sliced"](em, m, items[0])
    if len(items) == 1 and element_index(m, items[0]):   # x[0] of x = R[k:, k]
        return em.emit("reshape", em.emit("dynamic_slice", m.data, element_position(em, m, items[0]), sizes=(1,)),
                       shape=(), weak=m.data.weak)
    if m.where[0] != "bounds" or len(items) > m.data.ndim or not all(
            isinstance(it, slice) and it.start is None and it.stop is None and it.step in (None, -1)
            and not isinstance(it.step, bool) for it in items):
        need(m, "indexing it")
    axes = tuple(i for i, it in enumerate(items) if it.step == -1)
    if not axes:
        need(m, "indexing it")
    from .registry import FUNCTIONS
    return _flip(em, FUNCTIONS["numpy.flip"], m, axes)


def element_index(m: Masked, index, writing: bool = False) -> bool:
    """Whether `index` picks one element of the 1-D run-time slice m (an int, or a run-time one);
    for a write, of one whose data is its base seen through a view (the write reaches the base) or
    a copy of its own (not a reversed slice's computed elements: NumPy would write its base)."""
    if writing and not (m._data is not None and (m.own or m.data.view is not None)):
        return False
    return m.where[0] == "bounds" and m._data is not None and m.data.ndim == 1 and (
        isinstance(index, (int, np.integer)) and not isinstance(index, (bool, np.bool_))
        or isinstance(index, Traced) and index.ndim == 0 and (index.weak is int or is_int(index.dtype)))


def element_position(em, m: Masked, index) -> Traced:
    """The position in m's data of m[index] (NumPy's negative indices; IndexError outside)."""
    i = em.asarray(index) if isinstance(index, Traced) else em.constant(np.int64(int(index)))
    i = checked_ranks(em, i, length(em, m), "IndexError: index out of bounds for a slice of the length it has here")
    zero = em.constant(np.int64(0))
    at = em.emit("add", m.where[1], i)
    return em.emit("min", em.emit("max", at, zero), em.constant(np.int64(max(m.data.shape[0] - 1, 0))))


def gather(em, x: Traced, m: Masked):
    """x[idx] for a masked integer index array (`x[indices[lo:hi]]`, CSR rows): the gather at the
    selected positions (the others read position 0), masked as idx is. NumPy's bounds checks apply
    to the selected positions only."""
    from .registry import FUNCTIONS
    if m.data.ndim != 1 or m.axis != 0 or np.dtype(m.data.dtype).kind not in "iu" or x.ndim == 0:
        need(m, "indexing with it")
    inside = mask(em, m.where, m.data.shape, 0)
    safe = em.emit("select", inside, em.cast(m.data, np.int64), em.full(0, np.int64, m.data.shape))
    out = FUNCTIONS["numpy.take"](em, x, Traced(safe.value, None, m.params), axis=0)
    return Masked(Traced(out.value, None, _join(x, m)), 0, m.where, m.key, _join(x, m))


# ---------------------------------------------------------------- returning a selection

def checked_ranks(em, index: Traced, count: Traced, message: str) -> Traced:
    """Integer positions counted in a selection of run-time length `count`, negative ones from its
    end (int64), and a run-time IndexError (`message`) where one is outside it."""
    i = em.cast(index, np.int64)
    size = em.broadcast(count, i.shape)
    wrapped = em.emit("select", em.emit("compare", i, em.full(0, np.int64, i.shape), direction="LT"),
                      em.emit("add", i, size), i)
    bad = em.emit("or", em.emit("compare", wrapped, em.full(0, np.int64, i.shape), direction="LT"),
                  em.emit("compare", wrapped, size, direction="GE"))
    if bad.ndim:
        bad = em.emit("reduce", bad, kind="or", axes=tuple(range(bad.ndim)))
    em.check(bad, message)
    return wrapped


def _positions_of(em, flags: Traced, ranks: Traced) -> Traced:
    """The position of each rank-th (from 0) selected entry: the first whose inclusive count of
    selected entries is rank + 1 (a prefix sum and a binary search; n where there is none)."""
    from .registry import FUNCTIONS
    counts = FUNCTIONS["numpy.cumsum"](em, em.cast(flags, np.int64))
    wanted = em.emit("add", ranks, em.full(1, np.int64, ranks.shape))
    return FUNCTIONS["numpy.searchsorted"](em, counts, wanted, side="left")


# Rules for arrays with run-time bounds along two axes (masked_grid.py adds them: "call", "outer",
# "shape", "mask", "make", "spans_two_axes", "elementwise").
GRIDS: dict = {}


# ---------------------------------------------------------------- reshaped 1-D selections

# Rules for 1-D selections sliced, differenced, sorted and combined across masks, which compact
# them first (reshaped_selections.py adds them: "sliced", "together", "diff", "sort").
RESHAPED: dict = {}


def _selection_1d(m) -> bool:
    return isinstance(m, Masked) and m.where[0] == "flags" and m.axis == 0 and m._data is not None \
        and m.data.ndim == 1


# ---------------------------------------------------------------- np.nonzero of a 1-D run-time mask

def positions(em, flags: Traced, key) -> Masked:
    """np.nonzero(m)[0] / np.flatnonzero(m) for a 1-D run-time mask m: the positions 0..n-1 of
    which those where m holds belong. Used as an index (x[idx], y[idx] = v) it is the mask itself;
    in arithmetic, reductions and len() it is a masked array like x[m]."""
    n = flags.shape[0]
    data = em.emit("iota", shape=(n,), dim=0, dtype=np.dtype(np.int64))
    return Masked(Traced(data.value, None, frozenset()), 0, ("flags", flags), key, None, positions=True)


def as_mask(index):
    """The bool mask an index made by positions() stands for (alone or in a 1-tuple), else None."""
    if isinstance(index, tuple) and len(index) == 1:
        index = index[0]
    if isinstance(index, Masked) and index.positions:
        return index.where[1]
    return None
