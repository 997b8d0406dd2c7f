"""carried: the state a run-time loop carries from one iteration to the next, as templates (the
types of its run-time leaves, the values known at compile time), and how values are flattened
into region arguments and rebuilt from them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import tree
from .unify import MISSING, MergeError, TypeOnly, Undefined, _join, _params_of, _same_static, unify
from .values import Traced


def _entry_value(before, key):
    kind, k = key
    if kind == "name":
        return before.env.get(k, MISSING)
    c, v = before.cells[k]
    return Traced(v, c.weak, c.params)


def _current(env, before, key):
    kind, k = key
    if kind == "name":
        return env.get(k, MISSING)
    c = before.cells[k][0]
    return Traced(c._value, c.weak, c.params)


# The carried form of a value: its tuples, lists and dicts (tree.py) with one of these at each leaf.

@dataclass(frozen=True)
class Static:
    """A value known at compile time on every pass so far."""
    value: Any


@dataclass(frozen=True)
class Carried:
    """A run-time value: its type, and the parameters (loop markers) it is computed from."""
    shape: tuple
    dtype: np.dtype
    weak: type | None
    params: frozenset | None


@dataclass(frozen=True)
class Unset:
    """A name not (yet) bound: no type so far."""


UNSET = Unset()


def _as_template(value, marker):
    """The carried form of `value`."""
    return tree.map(lambda v: _leaf_template(v, marker), value)


def _leaf_template(v, marker):
    if v is MISSING or isinstance(v, Undefined):
        return UNSET
    if isinstance(v, Traced):
        return Carried(v.shape, v.dtype, v.weak, _param_with(v.params, marker))
    return Static(v)


def _param_with(params, marker):
    return None if params is None else params | {marker}


def _widen(t, now, name, marker):
    """Template t widened so that `now` fits it."""
    shown = lambda path: name + "".join(f"[{k!r}]" for k in path)
    try:
        return tree.map_with_path(lambda path, s, v: _widen_leaf(s, v, shown(path), marker), t, now)
    except tree.StructureError as e:
        what = "keys" if e.node.kind is dict else "structure"
        raise MergeError(f"'{shown(e.path)}' changes {what} inside the loop") from None


def _widen_leaf(t, now, name, marker):
    if isinstance(t, Unset):
        return _as_template(now, marker)
    if now is MISSING or isinstance(now, Undefined):
        return t
    if isinstance(t, Static):
        if not isinstance(now, Traced) and _same_static(t.value, now):
            return t
        shape, dtype, weak = unify(t.value, now, name, cross_kind=True)
        return Carried(shape, dtype, weak, _param_with(_join([_params_of(t.value), _params_of(now)]), marker))
    s2, d2, w2 = unify(TypeOnly((t.shape, t.dtype, t.weak)), now, name, cross_kind=True)
    return Carried(s2, d2, w2, _param_with(_join([t.params, _params_of(now)]), marker))


def _leaves(t) -> list[Carried]:
    return [s for s in tree.leaves(t) if isinstance(s, Carried)]


def _build(t, values: list):
    """Rebuild a value from its template, taking run-time leaves from `values` (in order)."""
    items = iter(values)
    return tree.map(lambda s: Traced(next(items), s.weak, s.params) if isinstance(s, Carried)
                    else MISSING if isinstance(s, Unset) else s.value, t)


def _rebuilders(carried):
    offset = 0
    out = []
    for key, t in carried.items():
        n = len(_leaves(t))
        out.append((key, lambda res, t=t, o=offset, n=n: _build(t, list(res[o:o + n]))))
        offset += n
    return out


def _flatten_as(em, t, value) -> list:
    """The IR values of `value` in template t's run-time leaf types (zeros where it is unset)."""
    items, treedef = tree.flatten(t)
    parts = treedef.flatten_up_to(value, fill=MISSING, strict=False)
    return [_leaf_as(em, s, v) for s, v in zip(items, parts) if isinstance(s, Carried)]


def _leaf_as(em, t: Carried, value):
    if value is MISSING or isinstance(value, Undefined):
        return em.full(0, t.dtype, t.shape).value
    if isinstance(value, Traced):
        return em.cast(Traced(value.value), t.dtype).value
    return em.broadcast(em.asarray(value, t.dtype), t.shape).value


def _entry_values(em, before, carried: dict):
    """Entry values of the carried state (converted outside the loop), their leaf types, and how
    to bind the region arguments back to names and arrays."""
    entry, types = [], []
    for key, t in carried.items():
        entry.extend(_flatten_as(em, t, _entry_value(before, key)))
        types.extend((c.shape, c.dtype, c.weak) for c in _leaves(t))
    return entry, types, _rebuilders(carried)
