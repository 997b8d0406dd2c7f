"""NumPy functions that call a user's function many times (`np.apply_along_axis`, `np.vectorize`), written here as
the plain NumPy code a user would write: the compiler compiles that code like any helper of the
user's, so the calls become one run-time loop (or an unrolled one where the range is short), and
the user's function is compiled on one slice."""
from __future__ import annotations

import numpy as np

from ...errors import NotSupportedError, ShapeError
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


def _vectorized(pyfunc, otype, arrays):
    """np.vectorize's call: pyfunc on each set of broadcast elements, as Python numbers (NumPy's
    frompyfunc passes `x.item()`); the result dtype that of the first call's result, or otypes[0]."""
    b = np.broadcast_arrays(*arrays)
    flat = [np.ravel(x) for x in b]
    n = flat[0].size
    first = pyfunc(*[x[0].item() for x in flat])
    out = np.empty(n, dtype=np.asarray(first).dtype if otype is None else otype)
    out[0] = first
    for i in range(1, n):
        out[i] = pyfunc(*[x[i].item() for x in flat])
    return out.reshape(b[0].shape)


class Vectorized:
    """np.vectorize(pyfunc, otypes=...) made inside compiled code (or read from a global
    np.vectorize object): called, it is `_vectorized` compiled as a helper (policy.classify_call)."""

    def __init__(self, pyfunc, otypes=None, excluded=None, signature=None):
        self.pyfunc, self.otypes, self.excluded, self.signature = pyfunc, otypes, excluded, signature

    def __call__(self, em, *args, **kwargs):
        if kwargs or self.excluded or self.signature is not None:
            raise NotSupportedError("a np.vectorize function called with keyword arguments, or made with "
                                    "excluded= or signature=, is not supported", hint="write the loop over the elements")
        otypes = self.otypes
        if otypes is not None and len(otypes) != 1:
            raise NotSupportedError("np.vectorize with several otypes (several results) is not supported")
        otype = None if otypes is None else np.dtype(otypes[0] if not isinstance(otypes, str) else otypes)
        arrays = [em.asarray(a) for a in args]
        if not arrays:
            raise ShapeError("TypeError: a vectorized function needs at least one argument")
        shape = np.broadcast_shapes(*[a.shape for a in arrays])
        if int(np.prod(shape)) == 0:
            if otype is None:
                raise ShapeError("ValueError: cannot call `vectorize` on size 0 inputs unless `otypes` is set")
            return em.full(0, otype, shape)
        shown = getattr(self.pyfunc, "__name__", "the function")
        return em.call_function(_vectorized, f"np.vectorize({shown})", [self.pyfunc, otype, arrays], {})

    @classmethod
    def of(cls, v: np.vectorize) -> "Vectorized":
        return cls(v.pyfunc, v.otypes or None, v.excluded, v.signature)


@register("numpy.vectorize", note="called: the function compiled on Python numbers and called in a loop over "
                                  "the broadcast elements (the first result's dtype, or otypes[0]); one result")
def vectorize(em, pyfunc, otypes=None, doc=None, excluded=None, cache=False, signature=None):
    otypes = em.static(otypes, "np.vectorize: otypes")
    return Vectorized(pyfunc, otypes, em.static(excluded, "np.vectorize: excluded"),
                      em.static(signature, "np.vectorize: signature"))
