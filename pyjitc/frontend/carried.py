"""carried: the state a run-time loop carries from one iteration to the next, as templates (the
types of its run-time leaves, the values known at compile time), and how values are flattened
into region arguments and rebuilt from them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import tree
from . import masked
from .masked import Masked
from .unify import MISSING, MergeError, TypeOnly, Undefined, _join, _params_of, _same_static, unify
from .values import Traced


def _entry_value(before, key):
    kind, k = key
    if kind == "name":
        return before.env.get(k, MISSING)
    if kind in ("flags", "length"):
        return MISSING     # (computed by _entry_values)
    c, v = before.cells[k]
    return Traced(v, c.weak, c.params)


def _current(env, before, key):
    kind, k = key
    if kind == "name":
        return env.get(k, MISSING)
    if kind == "flags":   # the flags the names of the group share at the end of the body
        return env[k[0]].where[1]
    if kind == "length":  # the run-time length of the group's prefixes (as_prefix: from position 0)
        return env[k[0]].where[2]
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
    except MergeError as e:   # unify speaks of an if's paths: here they are the loop's entry and a pass
        e.message = e.message.replace(" on one path, ", " before the loop or an earlier pass, ") \
            .replace(" on the other", " after a pass through it")
        if e.hint and ", or append to a list" in e.hint:   # (a list can't grow in a run-time loop either)
            e.hint = e.hint[:e.hint.index(", or append to a list")]
        raise


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

    def leaf(s):
        if isinstance(s, Selected):
            return Pending(Traced(next(items), s.weak, s.params), s.group, s.prefix)
        if isinstance(s, Carried):
            return Traced(next(items), s.weak, s.params)
        return MISSING if isinstance(s, Unset) else s.value
    return tree.map(leaf, t)


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
    if isinstance(value, Masked):     # a selection carried (Selected): its data
        value = value.data
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
        value = _entry_flags(em, before, key[1], t.shape) if key[0] == "flags" else \
            _entry_length(em, before, key[1]) if key[0] == "length" else _entry_value(before, key)
        entry.extend(_flatten_as(em, t, value))
        types.extend((c.shape, c.dtype, c.weak) for c in _leaves(t))
    return entry, types, _rebuilders(carried)


# ---------------------------------------------------------------- selections carried by a loop
#
# `Z = Z[abs(Z) < 2]; C = C[abs(Z) < 2]` in a loop (an escape-time Mandelbrot that shrinks its
# arrays each step): a selection (masked.py) keeps its elements at their positions with flags
# saying which belong, so the loop carries each such name's data at full length (a Selected
# leaf) and, once per group of names whose selections are aligned at the end of the body, their
# flags (the key ("flags", group)). An array that enters the loop whole enters with every flag
# set. NumPy moves the kept elements together; nothing here can tell, since a selection is used
# only elementwise, reduced, counted, or written through as the same selection.

@dataclass(frozen=True)
class Selected(Carried):
    """A name carried as a 1-D selection: its data (this leaf's type) and its group's names;
    `prefix`: a prefix of run-time length instead (as_prefix), the group's length carried."""
    group: tuple = ()
    prefix: bool = False


@dataclass
class Pending:
    """A Selected name's data rebuilt from region values, waiting for its group's flags."""
    data: Traced
    group: tuple
    prefix: bool = False


def carries_as_selection(m) -> bool:
    """Whether a value at the end of a loop body can be carried as a selection."""
    return isinstance(m, Masked) and m.where[0] == "flags" and m.axis == 0 and m._data is not None


def plan_selections(em, before, carried: dict, now: dict, marker, touched: set) -> tuple[dict, list]:
    """The templates of the names in `now` (name -> its selection at the end of the body) and of
    their groups' flags, and the names that can't be carried so (their entry value is seen by
    another name or the caller and the body writes it in place, or is a selection of another mask
    than its group's). `touched`: the names carried as selections whose data the body writes in
    place, and the ids of the arrays from before the loop that it writes."""
    groups: dict = {}
    for name, m in now.items():
        groups.setdefault(m.key, []).append(name)
    out, failed = {}, []
    for names in groups.values():
        group = tuple(sorted(names))
        try:
            out.update(_plan_group(em, before, carried, now, group, marker, touched))
        except MergeError:
            failed.extend(group)
    return out, failed


def _plan_group(em, before, carried: dict, now: dict, group: tuple, marker, touched: set) -> dict:
    prefix = now[group[0]].where[0] == "bounds"
    n = now[group[0]].data.shape[0] if prefix else now[group[0]].where[1].shape[0]
    entries = [before.env.get(name, MISSING) for name in group]
    if any(isinstance(e, Masked) for e in entries) and (prefix or not (
            all(carries_as_selection(e) for e in entries) and len({e.key for e in entries}) == 1)):
        raise MergeError(f"'{group[0]}' is a selection of one mask before the loop and of another in it")
    out = {}
    for name, e in zip(group, entries):
        data = e.data if isinstance(e, Masked) else e
        if data is not MISSING:      # (a name the body binds before reading it: no entry value)
            if not isinstance(data, Traced) or data.ndim == 0 or data.shape[0] != n:
                raise MergeError(f"'{name}' becomes a selection in the loop and has no array of its length before it")
            written = name in touched or id(data.root) in touched
            if not isinstance(e, Masked) and written and _seen_elsewhere(em, before, name, data):
                raise MergeError(f"'{name}' becomes a selection in the loop, and the array it names before the loop "
                                 "is written in place there and also seen elsewhere (another name, an argument)")
        old = carried.get(("name", name))
        base = TypeOnly((old.shape, old.dtype, old.weak)) if isinstance(old, Selected) else \
            now[name].data if data is MISSING else data
        shape, dtype, weak = unify(base, now[name].data, name, cross_kind=True)
        out[("name", name)] = Selected(shape, dtype, weak, _param_with(frozenset(), marker), group, prefix)
    if prefix:
        out[("length", group)] = Carried((), np.dtype(np.int64), None, _param_with(frozenset(), marker))
    else:
        out[("flags", group)] = Carried((n,), np.dtype(np.bool_), None, _param_with(frozenset(), marker))
    return out


def shrunk_prefix(em, entry, now) -> Masked | None:
    """A 1-D array that a pass through the loop leaves shorter than it entered (`V = disc * (p *
    V[:-1] + q * V[1:])`, a step back through a binomial tree): a prefix of the entry's length
    (as_prefix) holding it, so that the loop carries it with its length known at run time instead
    of being unrolled, one copy of the body per step (a tree of 200 steps took 43 s to compile).
    None where `now` is not such an array."""
    if not (isinstance(entry, Traced) and isinstance(now, Traced) and entry.ndim == 1 == now.ndim and now.view is None
            and isinstance(entry.shape[0], int) and isinstance(now.shape[0], int) and now.shape[0] < entry.shape[0]):
        return None      # (a view, `V = V[:-1]`, is its base's elements: carried as a copy, a write
        # through it after the loop would miss the base)
    data = _padded(em, now, entry.shape[0])
    return Masked(Traced(data.value, now.weak, now.params), 0, ("bounds", em.constant(np.int64(0)), em.constant(np.int64(now.shape[0]))),
                  ("prefix", object()), None)


def widened_selection(em, m: Masked, entry) -> Masked:
    """A 1-D selection of fewer positions than the array its name entered the loop with (`v =
    v[1:][v[1:] <= thr]`, non-maximum suppression: a selection of a slice) held at the entry's
    length: its data padded, the padding not selected. Else m itself."""
    if not (isinstance(entry, Traced) and entry.ndim == 1 and isinstance(entry.shape[0], int) and m.data.ndim == 1
            and isinstance(m.data.shape[0], int) and m.data.shape[0] < entry.shape[0]):
        return m
    data, flags = _padded(em, m.data, entry.shape[0]), _padded(em, m.where[1], entry.shape[0])
    return Masked(Traced(data.value, m.data.weak, m.data.params), 0, ("flags", flags), ("widened", m.key), m.params)


def _padded(em, x: Traced, n: int) -> Traced:
    """The 1-D x with zeros (False) after its elements up to length n."""
    return em.emit("pad", x, em.constant(np.zeros((), x.dtype)), low=(0,), high=(n - x.shape[0],), interior=(0,))


def carries_as_prefix(m, entry, start) -> bool:
    """Whether a value at the end of a loop body can be carried as a prefix: a 1-D array of
    run-time bounds (masked.py) computed in the body (not a view of another array, nor a slice
    of what the name held when the pass began, `V = V[:-1]`: carried as copies, a write through
    them would miss their base), of a name that enters the loop as an array of its capacity."""
    return isinstance(m, Masked) and m.where[0] == "bounds" and m.axis == 0 and m._data is not None \
        and m._data.ndim == 1 and m._data.view is None and isinstance(entry, Traced) and entry.ndim == 1 \
        and entry.shape == m._data.shape and not (isinstance(start, Masked) and start._data is not None
                                                  and start._data.value is m._data.value)


def as_prefix(em, m: Masked) -> Masked:
    """m with its elements moved to the front of its capacity: bounds (0, its length)."""
    zero = em.constant(np.int64(0))
    data = m.data if _is_zero(em, m.where[1]) else masked.relocated(em, m, zero, m.data.shape[0])
    return Masked(Traced(data.value, m.data.weak, m.data.params), 0, ("bounds", zero, masked.length(em, m)),
                  ("prefix", object()), m.params)


def _is_zero(em, t) -> bool:
    op = em.producer(t.value)
    return op is not None and op.name == "constant" and not np.asarray(op.attrs["value"]).any()


def _seen_elsewhere(em, before, name: str, data: Traced) -> bool:
    """Whether the array `name` holds before the loop (or the array it is a view of) is an argument
    or held by another name: the body's in-place update in the loop's first iteration would reach
    it, and the loop carries a copy from there on."""
    if id(data) in em.arguments or id(data.root) in em.arguments:
        return True
    return any(isinstance(v, Traced) and v.root is data.root
               for k, value in before.env.items() if k != name for v in tree.leaves(value))


def _entry_flags(em, before, group: tuple, shape) -> Traced:
    entry = before.env.get(group[0], MISSING)
    if isinstance(entry, Masked):
        return entry.where[1]
    return em.full(True, np.bool_, shape)


def _entry_length(em, before, group: tuple) -> Traced:
    """The length a group of prefixes enters the loop with: its array's whole length (0 where
    the body binds it before reading it)."""
    entry = before.env.get(group[0], MISSING)
    return em.constant(np.int64(entry.shape[0] if isinstance(entry, Traced) else 0))


def bind_selections(em, env: dict, values: dict, pending: list, marker, inside: bool) -> None:
    """Bind each pending Selected name to a selection of its group's flags (values[("flags",
    group)]): inside the body, a selection that asks for its length at compile time unrolls the
    loop (params: the loop's marker), as before; after the loop, one made by the data. A prefix
    is the slice of its group's length (values[("length", group)]) inside the body, and after the
    loop the selection of the positions before it."""
    for key, p in pending:
        params = frozenset({marker}) if inside else None
        data = Traced(p.data.value, p.data.weak, params)
        if p.prefix:   # (after the loop too, what needs its length at compile time unrolls the loop)
            params = frozenset({marker})
            data = Traced(p.data.value, p.data.weak, params)
            n = values[("length", p.group)]
            if inside:
                where = ("bounds", em.constant(np.int64(0)), n)
            else:
                idx = em.emit("iota", shape=data.shape, dim=0, dtype=np.dtype(np.int64))
                where = ("flags", em.emit("compare", idx, em.broadcast(n, data.shape), direction="LT"))
            env[key[1]] = Masked(data, 0, where, ("carried", marker, p.group, inside), params)
            continue
        flags = values[("flags", p.group)]
        env[key[1]] = Masked(data, 0, ("flags", flags), ("carried", marker, p.group, inside), params)
