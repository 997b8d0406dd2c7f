"""iteration: Python's `itertools` and `functools.reduce` in compiled code. They run while the
program is built, over items known then (a list, a tuple, a compile-time range, an array's rows);
the items themselves may be run-time values. Each result is a list, which every use in compiled
code reads the same way (as `map` and `zip` give). The modules' other functions stay refused
(policy.PYTHON_MODULES: only what is registered here compiles)."""
from __future__ import annotations

import itertools

from ...errors import NotSupportedError, ShapeError
from ..registry import register
from .builtins import _sequence


def _finite(name, fn):
    def impl(em, *args, **kwargs):
        iterables = [_sequence(em, a, list) if not isinstance(a, int) else a for a in args]
        try:
            return list(fn(*iterables, **kwargs))
        except TypeError as e:
            raise ShapeError(f"TypeError: {e}") from None
    impl.__name__ = name
    return impl


for _name in ("product", "combinations", "combinations_with_replacement", "permutations", "pairwise",
              "zip_longest", "chain", "islice"):
    register(f"itertools.{_name}", views=True, note="run while compiling, over items known then; a list")(
        _finite(_name, getattr(itertools, _name)))


@register("itertools.repeat", views=True, note="with `times` only (a list)")
def repeat(em, obj, times=None):
    if times is None or not isinstance(times, int):
        raise NotSupportedError("itertools.repeat without a compile-time `times` never ends",
                                hint="pass times=n, or use range(n)")
    return [obj] * times


@register("_functools.reduce", views=True, note="functools.reduce: the function called on each item now")
def reduce(em, fn, iterable, *initial):
    """functools.reduce(f, items[, initial]): f applied left to right while compiling."""
    items = _sequence(em, iterable, list)
    if len(initial) > 1:
        raise ShapeError(f"TypeError: reduce expected at most 3 arguments, got {2 + len(initial)}")
    if not items and not initial:
        raise ShapeError("TypeError: reduce() of empty iterable with no initial value")
    acc, rest = (initial[0], items) if initial else (items[0], items[1:])
    shown = getattr(fn, "__name__", "the function")
    for x in rest:
        acc = em.call_function(fn, shown, [acc, x], {})
    return acc



@register("itertools.starmap", views=True, note="the function called on each item now")
def starmap(em, fn, iterable):
    shown = getattr(fn, "__name__", "the function")
    return [em.call_function(fn, shown, list(_sequence(em, args, list)), {}) for args in _sequence(em, iterable, list)]
