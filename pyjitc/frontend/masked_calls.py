"""masked_calls: NumPy functions, methods and operators called on masked arrays (masked.py):
elementwise operations on operands with the same bounds, reductions that fill the left-out
positions with a value that never wins, statistics of a selection, contractions, np.unique, the
`ufunc.at` family; anything else asks for the bounds at compile time (deny by default).
Arrays with run-time bounds on two axes take masked_grid.py's rules, reshaped 1-D selections
reshaped_selections.py's."""
from __future__ import annotations

import numpy as np

from ..ir.types import is_complex, is_float
from .masked import (GRIDS, RESHAPED, Masked, _capacity, _common_bounds, _join, _positions_of, _selection_1d, _structure,
                     aligned, checked_ranks, filled, first, fixed_along, flip, length, need, never_wins, reduced_axes,
                     relocated, shape, sorts_last)
from .values import Traced, items_of


def _keeps_rows(m: Masked, shape_args) -> bool:
    """Whether reshaping m (run-time length along its first axis) to `shape_args` is (-1, its
    other axes): every row as it is."""
    shape = shape_args[0] if len(shape_args) == 1 else tuple(shape_args)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else shape
    return m.axis == 0 and m._data is not None and isinstance(shape, tuple) and len(shape) == m.data.ndim \
        and shape[0] == -1 and all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in shape) \
        and tuple(int(d) for d in shape[1:]) == tuple(m.data.shape[1:])


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
    if impl is FUNCTIONS["numpy.reshape"] and len(args) >= 2 and isinstance(args[0], Masked) and set(kwargs) <= {"order"} \
            and kwargs.get("order", "C") == "C" and _keeps_rows(args[0], args[1:]):
        return args[0]   # np.array(pts).reshape(-1, 2): the rows as they are (2-D also where no point was found)
    if impl is BUILTINS.get("len") and len(args) == 1 and isinstance(args[0], Masked) and not kwargs:
        return shape(em, args[0])[0]
    if impl in (BUILTINS.get("enumerate"), BUILTINS.get("zip")):   # a loop over a selection (sequences.SelectionSeq)
        return impl(em, *args, **kwargs)
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
        return flip(em, impl, args[0], axis)
    if impl is FUNCTIONS["numpy.unique"] and len(args) == 1 and isinstance(args[0], Masked) \
            and set(kwargs) <= {"return_counts"}:
        return _unique_of_selection(em, impl, args[0], em.static(kwargs.get("return_counts", False),
                                                                  "np.unique: return_counts"))
    if impl in (FUNCTIONS["numpy.stack"], FUNCTIONS["numpy.column_stack"]) and len(args) == 1 \
            and isinstance(args[0], (list, tuple)) and set(kwargs) <= {"axis"}:
        found = _stacked_selections(em, impl is FUNCTIONS["numpy.stack"], args[0], kwargs.get("axis", 0))
        if found is not None:
            return found
    if getattr(impl, "selections", False) and len(args) == 3 and not kwargs:
        return _at_selected(em, impl, shown, *args)
    if impl in _copies() and len(args) == 1 and isinstance(args[0], Masked) and not kwargs:
        m = args[0]    # x[k:].copy(): the same positions of a copy
        return Masked(impl(em, m.data), m.axis, m.where, m.key, m.params, own=True)
    if impl is FUNCTIONS["numpy.linalg.norm"] and len(args) == 1 and set(kwargs) <= {"axis"} \
            and isinstance(args[0], Masked) and not is_complex(args[0].data.dtype) \
            and (args[0].data.ndim == 1 and kwargs.get("axis") in (None, 0, -1)
                 or args[0].data.ndim == 2 and args[0].axis == 0 and kwargs.get("axis") in (1, -1)):
        # np.linalg.norm(R[k:, k]) (Householder steps), np.linalg.norm(X[i + 1:] - X[i], axis=1)
        # (distances to the later points): sqrt of the sum of squares
        m = args[0]
        x = m.data if is_float(m.data.dtype) else em.cast(m.data, np.float64)
        squares = Masked(em.emit("mul", x, x), m.axis, m.where, m.key, m.params)
        if m.data.ndim == 1:
            return FUNCTIONS["numpy.sqrt"](em, _reduction(em, FUNCTIONS["numpy.sum"], "sum", squares, None))
        return _elementwise(em, FUNCTIONS["numpy.sqrt"], "np.sqrt",
                            [_reduction(em, FUNCTIONS["numpy.sum"], "sum", squares, 1)])
    if impl is astype_method() and len(args) == 2 and isinstance(args[0], Masked) and not kwargs:
        m = args[0]    # x[mask].astype(np.int64): the same positions, converted
        return Masked(impl(em, m.data, args[1]), m.axis, m.where, m.key, m.params)
    if impl in elementwise_functions() and len(args) == 1 and not kwargs:
        return _elementwise(em, impl, shown, args)   # np.real, np.angle: elementwise, not ufuncs
    from .registry import METHODS
    arg_names = {FUNCTIONS[f"numpy.{n}"]: n for n in ("argmax", "argmin")} | \
        {METHODS[n]: n for n in ("argmax", "argmin") if n in METHODS}
    if impl in arg_names and len(args) == 1 and isinstance(args[0], Masked) and set(kwargs) <= {"axis"}:
        return _arg_extreme(em, FUNCTIONS[f"numpy.{arg_names[impl]}"], arg_names[impl], args[0], kwargs.get("axis"))
    names = ("sum", "prod", "max", "min", "mean", "any", "all", "count_nonzero")
    reductions = {FUNCTIONS[f"numpy.{n}"]: n for n in names if f"numpy.{n}" in FUNCTIONS} | \
        {METHODS[n]: n for n in names if n in METHODS}
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
    if impl in (FUNCTIONS["numpy.argsort"], METHODS.get("argsort")) and len(args) == 1 and _selection_1d(args[0]) \
            and args[0].data.ndim == 1 and set(kwargs) <= {"axis", "kind"} and kwargs.get("axis", -1) in (0, -1) \
            and kwargs.get("kind") in (None, "stable", "mergesort"):
        return RESHAPED["argsort"](em, FUNCTIONS["numpy.argsort"], args[0])
    stats = {FUNCTIONS[f"numpy.{n}"]: n for n in ("var", "std", "median", "cumsum")} | \
        {METHODS[n]: n for n in ("var", "std", "cumsum") if n in METHODS}
    if impl in stats and stats[impl] in ("var", "std") and isinstance(args[0], Masked):
        args, kwargs = _moment_arguments(em, args, kwargs)   # `X[m].var(0)`, `np.std(x[m], None, None, None, 1)`
    if impl in stats and len(args) == 1 and isinstance(args[0], Masked) and args[0]._data is not None \
            and args[0].axis == 0 and args[0].data.ndim == 1 and kwargs.get("axis", 0) in (0, -1) \
            and set(kwargs) <= ({"ddof", "axis"} if stats[impl] in ("var", "std") else set()):
        return _selection_statistic(em, stats[impl], args[0], kwargs.get("ddof", 0))
    if impl in stats and stats[impl] in ("var", "std") and len(args) == 1 and isinstance(args[0], Masked) \
            and args[0]._data is not None and args[0].axis == 0 and args[0].where[0] != "grid" \
            and args[0].data.ndim >= 2 and set(kwargs) <= {"ddof", "axis"} and kwargs.get("axis") in (0, -args[0].data.ndim):
        return _moments_along_mask(em, stats[impl], args[0], em.static(kwargs.get("ddof", 0), f"np.{stats[impl]}: ddof"))
    if impl is FUNCTIONS["numpy.cov"] and len(args) == 1 and isinstance(args[0], Masked) \
            and set(kwargs) <= {"rowvar", "bias", "ddof"} and args[0].where[0] != "grid" and args[0]._data is not None:
        found = _covariance_of_selection(em, args[0], **kwargs)
        if found is not None:
            return found
    need(first(args, kwargs), shown)


def _covariance_of_selection(em, m: Masked, rowvar=True, bias=False, ddof=None):
    """np.cov of observations selected at run time (`np.cov(X[y == c].T)`, a class's scatter in
    LDA): deviations from the selection's mean, zero outside it, contracted over the observations
    and divided by max(n - ddof, 0) as NumPy does (inf or NaN where that is 0, as NumPy's
    c * (1 / 0)); None where the observations are not the selected axis."""
    rowvar, bias = em.static(rowvar, "np.cov: rowvar"), em.static(bias, "np.cov: bias")
    ddof = em.static(ddof, "np.cov: ddof")
    ddof = (0 if bias else 1) if ddof is None else ddof
    data = m.data
    observations = 0 if data.ndim == 1 or not rowvar else 1
    if data.ndim > 2 or m.axis != observations:
        return None
    data = em.cast(data, np.result_type(data.dtype, np.float64))
    if observations == 1:
        data = em.emit("transpose", data, perm=(1, 0))
    dev, rest = _centred(em, Masked(data, 0, m.where, m.key, m.params), ddof)
    if data.ndim == 1:
        total = em.emit("reduce", em.emit("mul", dev, dev), kind="add", axes=(0,))
    else:
        total = em.emit("dot_general", dev, dev, lhs_contract=(0,), rhs_contract=(0,), lhs_batch=(), rhs_batch=())
    return em.zero_d_array(em.emit("div", total, em.broadcast(rest, total.shape)))   # (1-D: 0-d array)


def _centred(em, m: Masked, ddof):
    """(m's float data minus the selection's mean along axis 0, zero outside the selection;
    max(n - ddof, 0) in the data's dtype): what var, std and cov divide."""
    from .registry import FUNCTIONS
    data = m.data
    mean = em.asarray(_reduction(em, FUNCTIONS["numpy.mean"], "mean", m, 0))
    dev = em.emit("sub", data, em.broadcast(em.emit("reshape", mean, shape=(1,) + data.shape[1:]), data.shape))
    dev = em.asarray(filled(em, Masked(dev, 0, m.where, m.key, m.params), 0))
    rest = em.emit("max", em.emit("sub", length(em, m), em.constant(np.int64(ddof))), em.constant(np.int64(0)))
    return dev, em.cast(rest, data.dtype)


def _moment_arguments(em, args, kwargs):
    """var/std's positional arguments (axis, dtype, out, ddof) as keywords, those left at their
    defaults dropped; the whole of a selection of rows (axis None) as a 1-D selection of its
    elements."""
    extra = dict(zip(("axis", "dtype", "out", "ddof"), args[1:]))
    if len(args) > 5 or set(extra) & set(kwargs):
        return args, kwargs
    kwargs = {k: v for k, v in {**kwargs, **extra}.items() if not (k in ("dtype", "out") and v is None)}
    m = args[0]
    if kwargs.get("axis") is None:
        kwargs.pop("axis", None)
        if m._data is not None and m.axis == 0 and m.where[0] == "flags" and m.data.ndim >= 2:
            flags = em.broadcast(em.emit("reshape", m.where[1], shape=m.where[1].shape + (1,) * (m.data.ndim - 1)),
                                 m.data.shape)
            size = int(np.prod(m.data.shape))
            flat = em.emit("reshape", flags, shape=(size,))
            m = Masked(em.emit("reshape", m.data, shape=(size,)), 0, ("flags", flat),
                       ("flags", _structure(em, flat.value.id), (size,)), m.params)
    return (m,), kwargs


def _moments_along_mask(em, name: str, m: Masked, ddof):
    """var/std along the masked axis of a selection of rows (`X[y == c].var(axis=0)`, a Gaussian
    naive Bayes' class variances; `.mean(axis=0)` compiled, this was refused): deviations from the
    selection's mean, zero outside it, summed and divided by max(n - ddof, 0) as NumPy does."""
    data = m.data if is_float(m.data.dtype) else em.cast(m.data, np.float64)
    m = Masked(data, 0, m.where, m.key, m.params)
    dev, rest = _centred(em, m, ddof)
    total = em.emit("reduce", em.emit("mul", dev, dev), kind="add", axes=(0,))
    var = em.emit("div", total, em.broadcast(rest, total.shape))
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
    inputs = [a.data if isinstance(a, Masked) else a for a in args]
    out = impl(em, *inputs)
    if not isinstance(out, Traced) or out.ndim != rank:
        need(ref, shown)
    # a ufunc's result is an array of its own in NumPy: `d -= 1.0` of `d = x[i] - x[i + 1:]` (a
    # pairwise force loop; probe AH) writes into it alone
    own = out.view is None and all(out is not x for x in inputs)
    return Masked(out, rank - from_end, ref.where, ref.key, _join(*args), own=own)


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
        fill = never_wins(data.dtype, largest=name == "max")
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
    return impl(em, filled(em, m, 1 if name in ("prod", "all") else 0), axis=axis)


def astype_method():
    from .registry import METHODS
    return METHODS.get("astype")


def elementwise_functions() -> set:
    from .registry import FUNCTIONS
    return {FUNCTIONS[f"numpy.{n}"] for n in ("real", "imag", "angle", "round", "around", "nan_to_num", "fix", "sinc")
            if f"numpy.{n}" in FUNCTIONS}


def _unique_of_selection(em, impl, m: Masked, counts=False):
    """np.unique of a 1-D selection (`len(np.unique(x[x >= 0]))`): the whole array with the left-out
    entries made the largest value (NaN for floats, which sort last), so the selected ones sort
    first; of the unique values, those among the first len(m) sorted entries. `counts`: each
    value's count too (`return_counts=True`, the mode of the selected values), the left-out
    entries taken off the count of the value they were made."""
    data = m.data
    if m.where[0] != "flags" or m.axis != 0 or data.ndim != 1 or is_complex(data.dtype):
        need(m, "np.unique")
    dt = data.dtype
    fill = sorts_last(dt)
    out = impl(em, filled(em, m, fill), return_counts=True) if counts else impl(em, filled(em, m, fill))
    values = out[0] if counts else out
    if not isinstance(values, Masked):   # (an empty array: nothing to select)
        return out
    n = data.shape[0]
    positions = em.emit("iota", shape=(n,), dim=0, dtype=np.dtype(np.int64))
    kept = em.emit("compare", positions, em.broadcast(length(em, m), (n,)), direction="LT")
    flags = em.emit("and", values.where[1], kept)
    key = ("flags", _structure(em, flags.value.id), (n,))
    values_out = Masked(values.data, 0, ("flags", flags), key, None)
    if not counts:
        return values_out
    is_fill = em.emit("is_finite", values.data) if dt.kind == "f" else \
        em.emit("compare", values.data, em.full(fill, dt, (n,)), direction="EQ")
    if dt.kind == "f":
        is_fill = em.emit("not", is_fill)   # (NaN: the only non-finite value that sorts last)
        is_fill = em.emit("and", is_fill, em.emit("compare", values.data, values.data, direction="NE"))
    left_out = em.emit("sub", em.constant(np.int64(n)), length(em, m))
    tally = out[1].data
    tally = em.emit("sub", tally, em.emit("select", is_fill, em.broadcast(em.cast(left_out, tally.dtype), (n,)),
                                          em.full(0, tally.dtype, (n,))))
    return values_out, Masked(tally, 0, ("flags", flags), key, None)


def _stacked_selections(em, stack: bool, items, axis):
    """np.stack([ys, xs], axis=1) / np.column_stack(np.nonzero(m)) of 1-D selections of one mask
    (the coordinates of a mask's pixels, a Hough transform's input): their data stacked, a
    selection of rows. None for anything else."""
    if not items or not all(isinstance(it, Masked) for it in items):
        return None
    ref = items[0]
    if ref.where[0] != "flags" or ref._data is None or any(it._data is None or it.axis != 0 or it.data.ndim != 1
                                                            or not aligned(ref, it) for it in items):
        return None
    if stack and em.static(axis, "np.stack: axis") not in (1, -1):
        return None
    datas = [it.data for it in items]
    dt = np.result_type(*[d.dtype for d in datas])
    out = em.emit("concatenate", *[em.emit("reshape", em.cast(d, dt), shape=d.shape + (1,)) for d in datas], axis=1)
    return Masked(out, 0, ref.where, ref.key, _join(*items))


def _at_selected(em, impl, shown, a, indices, b):
    """ufunc.at(a, idx[ok], w[ok]) (a histogram of the entries in range): the index array and the
    values, selections of one mask, as the whole arrays with the mask saying which entries count."""
    if isinstance(a, Masked) and a.where[0] == "flags" and a.axis == 0 and a.data.ndim >= 1 \
            and not isinstance(indices, Masked) and not isinstance(b, Masked):
        # into an array sized by a selection (`sums = np.zeros(len(u)); np.add.at(sums, inverse, v)`,
        # a group-by after np.unique; rows of np.zeros((len(u), 3)) too): index k is the k-th
        # selected position
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
    fill = never_wins(data.dtype, largest=name == "argmax")
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


def _copies() -> tuple:
    """np.copy and the .copy() method (two registrations: a NumPy scalar's method keeps a scalar)."""
    from .registry import FUNCTIONS, METHODS
    return FUNCTIONS["numpy.copy"], METHODS["copy"]
