"""NumPy functions that call a user's function many times (`np.apply_along_axis`), written here as
the plain NumPy code a user would write: the compiler compiles that code like any helper of the
user's, so the calls become one run-time loop (or an unrolled one where the range is short), and
the user's function is compiled on one slice."""
from __future__ import annotations

import numpy as np

from ...errors import ShapeError
from ..registry import register


def _apply_along_axis(func1d, axis, arr, args, kwargs):
    outer = arr.shape[:axis] + arr.shape[axis + 1:]
    first = np.asarray(func1d(arr[(0,) * axis + (slice(None),) + (0,) * (arr.ndim - 1 - axis)], *args, **kwargs))
    out = np.empty(outer + first.shape, dtype=first.dtype)
    out[(0,) * len(outer)] = first
    for k, idx in enumerate(np.ndindex(outer)):     # the slices are views of arr, as NumPy's
        if k > 0:                                    # (called once per slice, the first one above)
            out[idx] = func1d(arr[idx[:axis] + (slice(None),) + idx[axis:]], *args, **kwargs)
    # NumPy's layout: the function's axes where `axis` was
    return np.moveaxis(out, tuple(range(len(outer), out.ndim)), tuple(range(axis, axis + first.ndim)))


@register("numpy.apply_along_axis", complex_ok=True,
          note="the function compiled on one slice and called in a loop over the others (the first "
               "call's shape and dtype, as NumPy's)")
def apply_along_axis(em, func1d, axis, arr, *args, **kwargs):
    axis = em.static(axis, "apply_along_axis: axis")
    a = em.asarray(arr)
    if not -a.ndim <= axis < a.ndim:
        raise ShapeError(f"AxisError: axis {axis} is out of bounds for array of dimension {a.ndim}")
    if any(d == 0 for i, d in enumerate(a.shape) if i != axis % a.ndim):
        raise ShapeError("ValueError: Cannot apply_along_axis when any iteration dimensions are 0")
    return em.call_function(_apply_along_axis, "np.apply_along_axis",
                            [func1d, axis % a.ndim, a, tuple(args), dict(kwargs)], {})
