"""aliasing: which array arguments of one call share memory, and how (run-time side of @jit).
NumPy's answer depends on it (`f(x, x)` with `a += 1` changes what `b` reads), so the sharing
pattern is part of what an executable is specialised on: an argument that is the same memory as
another, or a basic-slice view of it, is compiled as that view of the other; any other overlap is
refused. No sharing (the common case) costs one bounds comparison per pair of arrays."""
from __future__ import annotations

import numpy as np

from . import tree
from .errors import ArgumentError

Alias = tuple   # (path of the view, path of the array it views, index as a hashable tuple)


def array_leaves(values: dict) -> list[tuple[tuple, np.ndarray]]:
    """(path, array) of every NumPy array among the arguments, inside tuples/lists/dicts too."""
    return [(p, v) for p, v in tree.leaves_with_paths(values) if isinstance(v, np.ndarray)]


def _extent(a: np.ndarray) -> tuple[int, int]:
    """[low, high) byte addresses that a's elements can touch."""
    start = a.__array_interface__["data"][0]
    if a.size == 0:
        return start, start
    lo = hi = start
    for n, s in zip(a.shape, a.strides):
        if s >= 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    return lo, hi + a.itemsize


def find_aliases(values: dict, shown=lambda p: p[0]) -> tuple[Alias, ...]:
    """The sharing among array arguments, as (view path, base path, index) triples: the view is
    base[index] (index () for the same memory). Raises ArgumentError for sharing that is not a
    basic-slice view of one of the arrays."""
    leaves = array_leaves(values)
    if len(leaves) < 2:   # the common one-array call: nothing to compare
        return ()
    arrays = [(p, a, _extent(a)) for p, a in leaves if a.size]
    if len(arrays) < 2:
        return ()
    groups: list[list] = []
    for item in sorted(arrays, key=lambda t: t[2]):
        if groups and item[2][0] < max(x[2][1] for x in groups[-1]):
            groups[-1].append(item)
        else:
            groups.append([item])
    out = []
    for group in groups:
        if len(group) < 2:
            continue
        # the base: the array whose memory covers the others' (the first one given, on a tie)
        order = {p: i for i, (p, _) in enumerate(array_leaves(values))}
        base = min(group, key=lambda t: (-(t[2][1] - t[2][0]), order[t[0]]))
        for path, arr, _ in group:
            if path is base[0]:
                continue
            if not np.shares_memory(arr, base[1]):
                continue   # interleaved without touching (x[::2] and x[1::2]): independent
            index = view_index(base[1], arr)
            if index is None:
                raise ArgumentError(
                    f"arguments {shown(path)} and {shown(base[0])} share memory in a way pyjitc can't compile "
                    f"exactly (NumPy's result depends on the overlap); pass a copy of one: {shown(path)}.copy()")
            out.append((path, base[0], index))
    return tuple(out)


def view_index(base: np.ndarray, view: np.ndarray):
    """A basic index (ints and slices, as a hashable tuple of ('i', k) / ('s', start, stop, step))
    such that base[index] is exactly `view` (same memory, shape and strides), or None."""
    if base.dtype != view.dtype or view.ndim > base.ndim:
        return None
    offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    if offset == 0 and view.shape == base.shape and view.strides == base.strides:
        return ()   # the same memory: one array
    if any(s <= 0 for s in base.strides):
        return None
    start = [0] * base.ndim
    rest = offset
    for ax in sorted(range(base.ndim), key=lambda i: -base.strides[i]):
        start[ax], rest = divmod(rest, base.strides[ax])
    if rest or any(not 0 <= s < n for s, n in zip(start, base.shape)):
        return None

    def search(ax, vax, parts):
        if ax == base.ndim:
            return parts if vax == view.ndim else None
        options = []
        if vax < view.ndim:
            n, vs = view.shape[vax], view.strides[vax]
            if n == 1:
                options.append(("s", start[ax], start[ax] + 1, 1))
            elif vs % base.strides[ax] == 0 and vs:
                k = vs // base.strides[ax]
                last = start[ax] + k * (n - 1)
                if 0 <= last < base.shape[ax]:
                    stop = start[ax] + k * n
                    options.append(("s", start[ax], stop if stop >= 0 else None, k))
        if base.ndim - ax > view.ndim - vax:
            options.append(("i", start[ax]))
        for opt in options:
            found = search(ax + 1, vax + (opt[0] == "s"), parts + (opt,))
            if found is not None and _same_view(base, found, view):
                return found
        return None
    return search(0, 0, ()) if base.ndim else (() if offset == 0 else None)


def as_index(index) -> tuple:
    return tuple(slice(p[1], p[2], p[3]) if p[0] == "s" else p[1] for p in index)


def _same_view(base, index, view) -> bool:
    if len(index) < base.ndim:
        return True   # a partial index: checked when complete
    v = base[as_index(index)]
    return (v.shape == view.shape and v.strides == view.strides and
            v.__array_interface__["data"][0] == view.__array_interface__["data"][0])
