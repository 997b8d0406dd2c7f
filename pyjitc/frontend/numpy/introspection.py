"""introspection: NumPy functions that answer from shapes and dtypes alone (np.shape, np.ndim,
np.result_type, np.finfo, np.iscomplexobj, ...), computed at compile time by NumPy itself on
stand-ins that have the arrays' shapes and dtypes but no data; np.broadcast_arrays; and
np.errstate, whose settings change only NumPy's warnings, never a value (a `with` of it compiles
its body)."""
from __future__ import annotations

import numpy as np

from ...errors import ShapeError
from ..registry import FUNCTIONS, register
from ..values import Traced, fold


def stand_in(em, x):
    """A value NumPy's own introspection sees as it would see x: a zero-strided array of x's
    shape and dtype (a NumPy scalar of its type for 0-d NumPy scalars, the Python number for a
    run-time Python scalar); containers item by item."""
    if isinstance(x, Traced):
        if x.weak is not None:
            return x.weak(0)
        if not em.is_array(x):
            return np.dtype(x.dtype).type(0)
        return np.broadcast_to(np.zeros((), x.dtype), x.shape)
    if isinstance(x, (list, tuple)):
        return type(x)(stand_in(em, v) for v in x)
    return x


def _introspect(fn):
    def impl(em, *args, **kwargs):
        return fold(fn, *[stand_in(em, a) for a in args], **{k: stand_in(em, v) for k, v in kwargs.items()})
    impl.__name__ = fn.__name__
    return impl


for _name in ("shape", "ndim", "size", "result_type", "iscomplexobj", "isrealobj", "isscalar", "min_scalar_type",
              "promote_types", "can_cast", "issubdtype", "broadcast_shapes", "finfo", "iinfo", "dtype", "isdtype",
              "common_type", "mintypecode"):
    if hasattr(np, _name):
        register(f"numpy.{_name}", complex_ok=True)(_introspect(getattr(np, _name)))


@register("numpy.broadcast_arrays", complex_ok=True, views=True)
def broadcast_arrays(em, *args, subok=False):
    try:
        shape = np.broadcast_shapes(*[np.shape(stand_in(em, a)) for a in args])
    except ValueError as e:
        raise ShapeError(f"broadcast_arrays: {e}") from None
    return tuple(FUNCTIONS["numpy.broadcast_to"](em, a, shape) for a in args)


class NoEffect:
    """A context manager whose effect compiled code does not have (np.errstate: warnings only)."""

    def __init__(self, what: str):
        self.what = what


@register("_warnings.warn", note="warnings.warn (library code warning about its inputs, np.polyfit's RankWarning): "
                                 "compiled code can't show a warning at run time, so the call compiles to nothing; "
                                 "it never changes a value")
def warn(em, message, category=None, stacklevel=1, source=None, **kwargs):
    return None


@register("numpy.errstate", note="a `with np.errstate(...)` block compiles its body; the settings change only warnings")
def errstate(em, **kwargs):
    return NoEffect("np.errstate")
