"""regions: control flow on run-time values, for the interpreter in codegen.py.
A State is a snapshot of the interpreter (its names, and the arrays that in-place updates change).
Paths through an `if`, or a loop's entry and its body, are merged by unifying each value's type as
NumPy would see it; the `if` and `while` ops are built with regions that yield the merged values.
Loop-carried values are found by interpreting the body, not by reading it."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import tree
from ..errors import JitError, NotSupportedError
from ..ir.types import TensorType
from .carried import (Carried, Pending, Selected, _as_template, _current, _entry_value, _entry_values, _flatten_as,
                      _leaves, _rebuilders, _widen, bind_selections, carries_as_selection, plan_selections,
                      carries_as_prefix, as_prefix, shrunk_prefix, widened_selection)
from .masked import Masked
from .unify import (MISSING, MergeError, TypeOnly, Undefined, _join, _params_of, _same_static, unify,  # noqa: F401
                    _leaf_type)
from .values import Emitter, NeedPeel, NeedStatic, PickedSomewhere, Traced, make_view

# Reserved names in the interpreter's environment (never Python identifiers).
BREAK, CONTINUE, RETURN, RETURN_VALUE, GO = "break?", "continue?", "return?", "return value?", "go?"
BOUND = "bound?"     # env[BOUND + name]: whether `name`, bound on only some paths, is bound (a run-time bool)
FLAGS = (BREAK, CONTINUE, RETURN)
RAISED = object()    # the return value of a path that raised (frontend/raising.py): never read
ZERO = object()      # a placeholder yielded where a value is never read (a return value not yet set)


class Exit(Exception):
    """break / continue / return: the flag is already set in the environment."""


def loop_marker(node) -> str:
    return f"$loop{node.lineno}:{node.col_offset}@{id(node)}"


def is_marker(param: str) -> bool:
    return param.startswith("$loop")


def roots(values) -> list[Traced]:
    """The arrays holding state reachable from `values` (views lead to their base)."""
    found: dict[int, Traced] = {}
    for v in tree.leaves(values):
        if isinstance(v, Masked) and v._data is not None:   # a selection's data updates in place too
            v = v._data
        if isinstance(v, Traced):
            found.setdefault(id(v.root), v.root)
    return list(found.values())


class State:
    def __init__(self, env: dict, em: Emitter):
        self.env = dict(env)
        cells = roots(list(env.values()) + [v for outer in em.enclosing_envs for v in outer.values()] + [em.err])
        self.cells = {id(c): (c, c._value) for c in cells}

    def restore(self, env: dict) -> None:
        env.clear()
        env.update(self.env)
        for c, v in self.cells.values():
            c._value = v

    def changes(self, env: dict, cells) -> list[tuple[Any, Any]]:
        """(key, value now) for each rebound name and each of `cells` (ids) updated in place.
        A name still bound to the same array is not a change: the array is (a cell)."""
        out = []
        for k in list(self.env) + [k for k in env if k not in self.env]:
            if env.get(k, MISSING) is not self.env.get(k, MISSING):
                out.append((("name", k), env.get(k, MISSING)))
        for cid in cells:
            if cid not in self.cells:   # no longer reachable: nothing can have changed it
                continue
            c, v = self.cells[cid]
            if c._value is not v:
                out.append((("cell", cid), Traced(c._value, c.weak, c.params)))
        return out


# ---------------------------------------------------------------- merging paths

class Merge:
    """Plans one value from n paths: returns rebuild(results) and records, per traced leaf, the
    target type and each path's value (yielded from that path's block)."""

    def __init__(self, em: Emitter, n: int, extra_params=frozenset(), inside=frozenset()):
        self.em, self.n = em, n
        self.inside = inside    # ids of the values the paths' own blocks compute
        self.types: list[tuple] = []
        self.sides: list[list] = [[] for _ in range(n)]
        self.extra = extra_params
        self.token = object()   # what makes selections merged here differ from those merged elsewhere

    def plan(self, values: list, name: str) -> Callable[[list], Any]:
        first = values[0]
        if all(v is first for v in values):
            return lambda res: first
        if all(isinstance(v, Traced) and v.view is None and v.weak == first.weak for v in values) and \
                all(v.value is first.value for v in values):
            merged = Traced(first.value, first.weak, _join([v.params for v in values]))
            return lambda res: merged
        if all(carries_as_selection(v) for v in values) and len({v.data.shape for v in values}) == 1:
            # a selection on every path (`if not len(Z): break` before `Z = Z[I]`): its data and its
            # flags merged; names whose selections are aligned on every path stay aligned
            data = self.plan([v.data for v in values], name)
            flags = self.plan([v.where[1] for v in values], f"{name} (its mask)")
            key = ("merged", self.token, tuple(v.key for v in values))
            params = _join([v.params for v in values])
            return lambda res: Masked(data(res), 0, ("flags", flags(res)), key, params)
        if any(isinstance(v, Masked) for v in values):   # its bounds differ by path: known only if static
            poisoned = next(v for v in values if isinstance(v, Masked)).poisoned(self.extra)
            return lambda res: poisoned
        undefined = [v is MISSING or v is RAISED or isinstance(v, Undefined) for v in values]
        if any(undefined):
            defined = [v for v, u in zip(values, undefined) if not u]
            if name == RETURN_VALUE and defined:   # only read where the return flag is set
                values = [ZERO if u else v for v, u in zip(values, undefined)]
                return self.plan(values, name)
            if name == RETURN_VALUE and any(v is RAISED for v in values):   # no path returned a value
                return lambda res: RAISED
            where = "inside the if or loop"
            return lambda res: Undefined(name, where)
        if any(v is ZERO for v in values):   # a path that never reads it (it returned earlier, or raised)
            known = [v for v in values if v is not ZERO]
            if isinstance(known[0], Traced) and known[0].view is None and all(v is known[0] for v in known) \
                    and known[0].value.id not in self.inside:   # (not a view: reading it may rebuild it here)
                # one value from before the paths: itself, which keeps its identity (an argument
                # returned beside a `raise` is the caller's array, as in NumPy)
                return lambda res: known[0]
            if not any(isinstance(x, Traced) for v in known for x in tree.leaves(v)) and \
                    all(_same_static(known[0], v) for v in known):
                return lambda res: known[0]
            shaped = next((v for v in known if isinstance(v, (tuple, list, dict)) or tree.node_parts(v) is not None), None)
            if shaped is not None:
                values = [_zero_tree(shaped) if v is ZERO else v for v in values]
                first = values[0]
        nodes = [tree.node_parts(v) for v in values]
        if all(n is not None for n in nodes) and len({type(v) for v in values}) == 1:   # (stacks.Stack)
            if any(aux != nodes[0][1] for _, aux in nodes):
                raise MergeError(f"'{name}' holds items of different types on different paths")
            parts = [self.plan([children[i] for children, _ in nodes], f"{name}") for i in range(len(nodes[0][0]))]
            kind, aux = type(first), nodes[0][1]
            return lambda res: tree.build_node(kind, aux, [p(res) for p in parts])
        if all(isinstance(v, tuple) for v in values) or all(isinstance(v, list) for v in values):
            if len({len(v) for v in values}) != 1:
                raise MergeError(f"'{name}' has a different length on different paths")
            parts = [self.plan([v[i] for v in values], f"{name}[{i}]") for i in range(len(first))]
            kind = type(first)
            return lambda res: kind(p(res) for p in parts)
        if all(isinstance(v, dict) for v in values):
            if len({tuple(v) for v in values}) != 1:
                raise MergeError(f"'{name}' has different keys on different paths")
            parts = {k: self.plan([v[k] for v in values], f"{name}[{k!r}]") for k in first}
            return lambda res: {k: p(res) for k, p in parts.items()}
        if not any(isinstance(v, Traced) for v in values) and all(_same_static(first, v) for v in values[1:]):
            return lambda res: first
        known = [v for v in values if v is not ZERO]
        if any(v is ZERO for v in values) and any(isinstance(v, (tuple, list, dict)) for v in known):
            raise MergeError("this function returns different kinds of values on different paths")
        t = _leaf_type(known[0])
        if t is None or any(_leaf_type(v) is None for v in known[1:]):
            shown = ", ".join(sorted({repr(v) if isinstance(v, str) else type(v).__name__ for v in known}))
            who = f"'{name}'" if name.isidentifier() else "this value"
            raise MergeError(f"{who} is {shown} depending on a condition known only at run time; a compiled "
                             "function's values of that kind must be known at compile time",
                             hint="compute a number or an array on each path (e.g. a flag or an index into a "
                                  "tuple of strings outside the function)", name=name)
        for v in known[1:]:
            t = unify(TypeOnly(t), v, name)
        index = len(self.types)
        self.types.append(t)
        for side, v in zip(self.sides, values):
            side.append(v)
        params = _join([_params_of(v) for v in known] + [self.extra])
        view_base = next((v.view.base for v in values if isinstance(v, Traced) and v.view is not None), None)

        def rebuild(res):
            out = Traced(res[index], t[2], params)
            # a view merged from paths keeps NumPy's aliasing only opaquely: reads after its base
            # changes, and writes through it, are errors rather than silent copies
            return make_view(view_base, out, None, None) if view_base is not None else out
        return rebuild

    def hoist_constants(self) -> None:
        """Make compile-time side values constants outside the branches (cheaper regions)."""
        for side in self.sides:
            for j, ((shape, dtype, _), v) in enumerate(zip(self.types, side)):
                if v is not ZERO and not isinstance(v, Traced):
                    side[j] = self.em.broadcast(self.em.asarray(v, dtype), shape)

    def yields(self, i: int) -> list:
        """Path i's values in the target types (emitted into path i's block)."""
        out = []
        for (shape, dtype, _), v in zip(self.types, self.sides[i]):
            if v is ZERO:
                out.append(self.em.full(0, dtype, shape).value)
                continue
            x = self.em.asarray(v.value if isinstance(v, Traced) else v, dtype) if not isinstance(v, Traced) \
                else self.em.cast(Traced(v.value), dtype)
            out.append(x.value)
        return out


def _zero_tree(like):
    """ZERO in every leaf of a container shaped like `like` (a value no path reads)."""
    if isinstance(like, dict):
        return {k: _zero_tree(v) for k, v in like.items()}
    if isinstance(like, (tuple, list)):
        return type(like)(_zero_tree(v) for v in like)
    parts = tree.node_parts(like)   # (a registered class: stacks.Stack)
    if parts is not None:
        return tree.build_node(type(like), parts[1], [_zero_tree(c) for c in parts[0]])
    return ZERO


class Containers:
    """The Python lists and dicts reachable from the names (and the enclosing functions' names),
    each with what it holds now: each branch of a run-time `if` is interpreted from the same
    contents, and the branches' items are merged one by one (`if a[j] < a[i]: d[i] = d[j] + 1`
    over a list d in an unrolled loop)."""

    def __init__(self, env: dict, em: Emitter):
        self.held: dict[int, tuple] = {}
        for v in list(env.values()) + [v for outer in em.enclosing_envs for v in outer.values()]:
            self._walk(v)

    def _walk(self, v) -> None:
        if isinstance(v, (list, dict)) and id(v) not in self.held:
            self.held[id(v)] = (v, v.copy())
            for item in (v.values() if isinstance(v, dict) else v):
                self._walk(item)
        elif isinstance(v, tuple):
            for item in v:
                self._walk(item)

    def contents(self) -> dict:
        return {cid: c.copy() for cid, (c, _) in self.held.items()}

    def restore(self) -> None:
        for c, before in self.held.values():
            if isinstance(c, list):
                c[:] = before
            else:
                c.clear()
                c.update(before)

    def changed(self, outcomes: list) -> list:
        """The keys ("item", (container id, index)) of the items some branch changed; a change of
        length or of keys is refused (the paths would leave containers of different shapes)."""
        keys = []
        for cid, (c, before) in self.held.items():
            after = [o[cid] for o in outcomes]
            if any(len(a) != len(before) or (isinstance(c, dict) and a.keys() != before.keys()) for a in after):
                raise NotSupportedError(f"a Python {type(c).__name__} changes length in a branch on values known only "
                                        "at run time", hint="use an array, or give it its length before the if")
            for k in (before if isinstance(c, dict) else range(len(before))):
                if any(a[k] is not before[k] for a in after):
                    keys.append(("item", (cid, k)))
        return keys


def rebind(env: dict, key, value, cells: dict) -> None:
    kind, k = key
    if kind == "name":
        if value is MISSING:
            env.pop(k, None)
        else:
            env[k] = value
    else:
        cells[k]._value = value.value


# ---------------------------------------------------------------- if

def build_if(em: Emitter, env: dict, cond: Traced, branches: list[Callable[[], None]]) -> None:
    """Interpret each branch from the same state, then emit one `if` whose results are the
    values that differ between the branches, and continue from the merged state."""
    b = em.b
    checkpoint = b.checkpoint()
    before = State(env, em)
    held = Containers(env, em)
    outcomes, contents = [], []
    try:
        for run in branches:
            before.restore(env)
            held.restore()
            block = b.open_block()
            em.branch_depth += 1
            em.region_containers.append(set(held.held))
            try:
                run()
            except Exit:
                pass
            finally:
                em.branch_depth -= 1
                em.region_containers.pop()
            b.close_block([])
            outcomes.append((block, dict(env), {cid: c._value for cid, (c, _) in before.cells.items()}))
            contents.append(held.contents())
        before.restore(env)
        held.restore()
        keys = held.changed(contents)
        for _, after_env, after_cells in outcomes:
            for k in list(after_env):
                if after_env[k] is not before.env.get(k, MISSING) and ("name", k) not in keys:
                    keys.append(("name", k))
            for cid, v in after_cells.items():
                if v is not before.cells[cid][1] and ("cell", cid) not in keys:
                    keys.append(("cell", cid))
        _flag_partly_bound(keys, outcomes, before.env)
        inside = frozenset(r.id for block, _, _ in outcomes for op in block.ops for r in op.results)
        merge = Merge(em, len(branches), _params_of(cond), inside)
        plans = []
        for key in keys:
            if key[0] == "name":
                values = [o[1].get(key[1], before.env.get(key[1], MISSING)) for o in outcomes]
            elif key[0] == "item":
                values = [c[key[1][0]][key[1][1]] for c in contents]
                plans.append((key, merge.plan(values, f"an item of a Python {type(held.held[key[1][0]][0]).__name__}")))
                continue
            else:
                c = before.cells[key[1]][0]
                values = [Traced(o[2][key[1]], c.weak, c.params) for o in outcomes]
            plans.append((key, merge.plan(values, key[1] if key[0] == "name" else "an array updated in place")))
        merge.hoist_constants()
        for i, (block, _, cells_after) in enumerate(outcomes):
            b.reopen(block)
            # the arrays as this path left them: a name still holding an array the path wrote into
            # yields the written contents (`else: b1[A < 1.0] = 1.0` beside `b1 = np.floor(b1)`
            # yielded b1 as it was before the if: statement fuzzer seed 9004 program 1161)
            for cid, value in cells_after.items():
                before.cells[cid][0]._value = value
            b.close_block(merge.yields(i))
        before.restore(env)
    except BaseException:
        b.rollback(checkpoint)
        before.restore(env)
        raise
    results = ()
    if merge.types and all(not o[0].ops for o in outcomes) and len(outcomes) == 2:
        # nothing computed in either branch: choose between the values
        then, orelse = (o[0].results for o in outcomes)
        pred = em.cast(cond, np.bool_)
        results = tuple(em.emit("select", pred if not t.type.shape else em.broadcast(pred, t.type.shape),
                                Traced(t), Traced(f)).value for t, f in zip(then, orelse))
    elif merge.types:
        out = b.emit("if", em.cast(cond, np.bool_).value, regions=tuple(o[0] for o in outcomes))
        results = out if isinstance(out, tuple) else (out,)
    cells = {cid: c for cid, (c, _) in before.cells.items()}
    for key, rebuild in plans:
        if key[0] == "item":
            cid, k = key[1]
            held.held[cid][0][k] = after = rebuild(list(results))
            python_number_on_one_path(em, cond, after, [c[cid][k] for c in contents])
            continue
        rebind(env, key, rebuild(list(results)), cells)
    for key, _ in plans:
        if key[0] == "name":
            paths = [o[1].get(key[1], before.env.get(key[1], MISSING)) for o in outcomes]
            _mark_ambiguous(em, before.env, env, [key[1]], cond.params, paths)
            if any(isinstance(p, Traced) and p.picked is not None for p in paths):
                _guard_picked(env, {key[1]: [v for p in paths if isinstance(p, Traced)
                                             for v in (p.picked.items if p.picked is not None else [p])]})
            after, earlier = env.get(key[1]), before.env.get(key[1])
            python_number_on_one_path(em, cond, after, paths)
            kept = [p is earlier for p in paths]
            if isinstance(after, Traced) and after.ambiguous and isinstance(earlier, Traced) and len(paths) == 2 \
                    and any(kept) and not all(kept):   # one path kept the array the name held
                took = em.cast(cond, np.bool_)
                _either(em, after, em.emit("not", took) if kept[0] else took, earlier)


def python_number_on_one_path(em: Emitter, cond: Traced, after, paths: list) -> None:
    """A value merged from two paths, a Python number on one only: which type it is follows
    the path taken at run time (_python_number_unless)."""
    if len(paths) == 2 and isinstance(after, Traced):
        weak = [_python_number(p) for p in paths]
        if weak[0] != weak[1]:
            took = em.cast(cond, np.bool_)
            _python_number_unless(after, em.emit("not", took) if weak[0] else took, paths[weak.index(True)])


def _flag_partly_bound(keys: list, outcomes: list, entry: dict) -> None:
    """A name bound on only some paths of an `if` (`if x[i] > t: found = i; break` in a loop with an
    `else: found = -1`; a value assigned after a run-time `break`): a placeholder on the other paths,
    and a run-time flag env[BOUND + name] that each read checks (UnboundLocalError, as Python raises
    it there). Only names whose values can be yielded from a region get one; others stay Undefined."""
    for key in list(keys):
        if key[0] != "name" or not key[1].isidentifier():
            continue
        name = key[1]
        values = [o[1].get(name, entry.get(name, MISSING)) for o in outcomes]
        unbound = [v is MISSING or isinstance(v, Undefined) for v in values]
        if not any(unbound) or all(unbound) or not all(_flaggable(v) for v, u in zip(values, unbound) if not u):
            continue
        for (_, path_env, _), u in zip(outcomes, unbound):
            path_env[BOUND + name] = False if u else path_env.get(BOUND + name, True)
            if u:
                path_env[name] = ZERO
        if ("name", BOUND + name) not in keys:
            keys.append(("name", BOUND + name))


def _flaggable(value) -> bool:
    return not isinstance(value, Masked) and all(
        (isinstance(v, Traced) and not isinstance(v, Masked)) or type(v) in (bool, int, float, complex)
        or isinstance(v, np.generic) for v in tree.leaves(value))


def condition(em: Emitter, test: Traced) -> Traced:
    """bool(test) as a run-time bool[] (NumPy: only size-1 arrays have a truth value)."""
    if test.type.size != 1:
        raise JitError("ValueError: The truth value of an array with more than one element is ambiguous. "
                       "Use a.any() or a.all()")
    t = em.emit("reshape", test, shape=()) if test.ndim else test
    if t.dtype != np.bool_:
        t = em.emit("compare", t, em.constant(np.zeros((), t.dtype)), direction="NE")
    return Traced(t.value, None, test.params)


def negate(em: Emitter, flags: list) -> Any:
    """not (f1 or f2 ...) for flags that are Python bools or bool[] values."""
    traced = [f for f in flags if isinstance(f, Traced)]
    if any(f is True for f in flags):
        return False
    if not traced:
        return True
    any_set = traced[0]
    for f in traced[1:]:
        any_set = em.emit("or", any_set, f)
    out = em.emit("not", em.cast(any_set, np.bool_))
    return Traced(out.value, None, _join([f.params for f in traced]))


# ---------------------------------------------------------------- while

MAX_PASSES = 6


def build_while(em: Emitter, env: dict, marker: str, body: Callable[[], None], what: str) -> None:
    """A run-time loop. env[GO] holds whether to run the (next) iteration; `body` interprets one
    iteration (catching break/continue/return itself) and sets env[GO] for the next. The loop-carried
    values are what the body changes: found by interpreting it, then again with those values as
    region arguments, until their types stop changing (a Python int that becomes an array scalar)."""
    b = em.b
    before = State(env, em)
    carried: dict = {GO_KEY: Carried((), np.dtype(np.bool_), None, frozenset({marker}))}
    poisoned: dict = {}   # names bound to a masked array (masked.py) by the body: not carried
    for _ in range(MAX_PASSES):
        before.restore(env)
        checkpoint = b.checkpoint()
        try:
            entry, types, entry_plans = _entry_values(em, before, carried)
            block = b.open_block([TensorType(s, d) for s, d, _ in types])
            cells = {cid: c for cid, (c, _) in before.cells.items()}
            _bind_carried(em, env, entry_plans, list(block.params), cells, marker, inside=True)
            env.update(poisoned)   # the previous iteration's value: usable only if the loop is unrolled
            start = State(env, em)
            entry_data = {k: v._data.value for k, v in env.items() if isinstance(v, Masked) and v._data is not None}
            em.loop_depth += 1
            em.loop_markers.append(marker)
            em.region_containers.append(set(Containers(env, em).held))
            try:
                body()
            finally:
                em.loop_depth -= 1
                em.loop_markers.pop()
                em.region_containers.pop()
            written = {k[1] for k, _ in start.changes(env, before.cells) if k[0] == "cell"}
            rebound = [k for k, v in env.items() if isinstance(v, Traced) and isinstance(start.env.get(k), Traced)
                       and v.root is not start.env[k].root]
            swap = _swapped_identity(em, start.env, env, written)
            if swap:
                raise NeedStatic({marker}, reason=NotSupportedError(swap, hint="copy instead of swapping names "
                                                                          "(b[:] = a), or swap copies"))
            retype = False
            selections = {}   # names bound to a selection at the end of the body (carried.py)
            changes = start.changes(env, before.cells)
            picked = {key[1]: now.picked.items for key, now in changes if key[0] == "name"
                      and isinstance(now, Traced) and now.picked is not None}   # (guarded after the loop)
            for key, now in changes:
                if isinstance(now, Masked) and key[0] == "name":
                    if carries_as_selection(now) and key[1] not in poisoned:
                        selections[key[1]] = env[key[1]] = widened_selection(em, now, _entry_value(before, key))
                    elif carries_as_prefix(now, _entry_value(before, key), start.env.get(key[1])) and key[1] not in poisoned:
                        selections[key[1]] = env[key[1]] = as_prefix(em, now)
                    elif key[1] not in poisoned:
                        poisoned[key[1]] = now.poisoned(frozenset({marker}))
                        carried.pop(key, None)
                        retype = True
                    continue
                old = carried.get(key)
                if isinstance(old, Selected):
                    raise NeedStatic({marker}, reason=MergeError(f"'{key[1]}' is a selection (x[mask]) on one pass "
                                                                 "through the loop and not on another"))
                name = key[1] if key[0] == "name" else "an array updated in place"
                try:
                    base = old if old is not None else _as_template(_entry_value(before, key), marker)
                    leaf = _widen(base, now, name, marker)
                except MergeError as e:
                    shrunk = shrunk_prefix(em, _entry_value(before, key), now) if key[0] == "name" else None
                    if shrunk is not None and key[1] not in poisoned:
                        selections[key[1]] = shrunk
                        carried.pop(key, None)
                        continue
                    if marker in em.peelable and marker not in em.peel_first:
                        raise NeedPeel(marker, e) from None
                    raise NeedStatic({marker}, reason=e) from None
                if leaf != old:
                    carried[key] = leaf
                    retype = True
            # arrays the body writes in place: the names carried as selections whose data changed,
            # and the arrays (cells) from before the loop
            touched = {k for k, value in entry_data.items() if isinstance(start.env.get(k), Masked)
                       and start.env[k]._data is not None and start.env[k]._data.value is not value}
            touched |= {k[1] for k, _ in changes if k[0] == "cell"}
            retype = _plan_selections(em, env, before, carried, selections, poisoned, marker, touched) or retype
            if retype:
                b.rollback(checkpoint)
                continue
            if env.get(GO) is True:
                raise JitError(f"this {what} never ends: nothing in it stops it at run time")
            outs = []
            for key, t in carried.items():
                outs.extend(_flatten_as(em, t, _current(env, before, key)))
            b.close_block(outs)
        except BaseException:
            b.rollback(checkpoint)
            before.restore(env)
            raise
        keys = list(carried)
        go_index = sum(len(_leaves(carried[k])) for k in keys[:keys.index(GO_KEY)])
        cond = b.open_block([TensorType(s, d) for s, d, _ in types])
        b.close_block([_go_unless_failed(em, cond.params[go_index], cond.params, keys, carried, before)])
        before.restore(env)
        results = b.emit("while", *entry, regions=(cond, block))
        results = list(results) if isinstance(results, tuple) else [results]
        cells = {cid: c for cid, (c, _) in before.cells.items()}
        _bind_carried(em, env, _rebuilders(carried), results, cells, marker, inside=False)
        _mark_ambiguous(em, before.env, env, rebound, marker)
        _guard_picked(env, picked)
        ran = before.env.get(GO)
        for k in rebound:   # which array each such name is, for the caller (outputs.output_leaf)
            after, earlier = env.get(k), before.env.get(k)
            if isinstance(after, Traced) and after.ambiguous and isinstance(earlier, Traced) and isinstance(ran, Traced):
                _either(em, after, ran, earlier)
        if isinstance(ran, Traced):
            for k, earlier in before.env.items():
                _python_number_unless(env.get(k), ran, earlier)
        env.update(poisoned)
        env.pop(GO, None)
        return
    raise JitError(f"internal error: the types carried by this {what} did not settle")


def _bind_carried(em, env: dict, plans, values: list, cells: dict, marker, inside: bool) -> None:
    """Bind names and arrays to the carried state rebuilt from region values (`values`)."""
    flags, pending = {}, []
    for key, rebuild in plans:
        value = rebuild(values)
        if key[0] in ("flags", "length"):
            flags[key] = value
        elif isinstance(value, Pending):
            pending.append((key, value))
        else:
            rebind(env, key, value, cells)
    bind_selections(em, env, flags, pending, marker, inside)


def _plan_selections(em, env: dict, before: State, carried: dict, selections: dict, poisoned: dict, marker,
                     touched: set) -> bool:
    """Carry the names bound to selections (and their groups' flags); a name that can't be carried
    so is poisoned as before (usable only if the loop is unrolled). Whether the templates changed."""
    for key, t in carried.items():   # names carried as selections and not rebound by this pass
        if isinstance(t, Selected) and key[1] not in selections and carries_as_selection(env.get(key[1])):
            selections[key[1]] = env[key[1]]
        elif isinstance(t, Selected) and t.prefix and key[1] not in selections and isinstance(env.get(key[1]), Masked) \
                and env[key[1]].where[0] == "bounds":
            selections[key[1]] = env[key[1]] = as_prefix(em, env[key[1]])
    planned, failed = plan_selections(em, before, carried, selections, marker, touched)
    for name in failed:
        poisoned[name] = selections[name].poisoned(frozenset({marker}))
        carried.pop(("name", name), None)
    stale = [k for k, t in carried.items() if (k[0] in ("flags", "length") or isinstance(t, Selected)) and k not in planned]
    changed = bool(stale) or any(carried.get(k) != t for k, t in planned.items())
    for k in stale:
        del carried[k]
    carried.update(planned)
    return changed


def _guard_picked(env: dict, picked: dict) -> None:
    """The names that held an array picked by a run-time index (sequences.Picked) at the end of a
    loop's body or of a branch: guarded (values.PickedSomewhere) against a write, or a read after
    one of the arrays they may be changed."""
    for name, items in picked.items():
        after = env.get(name)
        if isinstance(after, Traced) and after.picked is None:
            after.picked = PickedSomewhere(items)


def _mark_ambiguous(em: Emitter, entry: dict, env: dict, rebound: list, markers, paths=None) -> None:
    """After a run-time loop (`markers`: its marker) that binds the names `rebound` to other
    arrays, or a run-time `if` (`markers`: what its condition is computed from, None for array
    data; `paths`: the name's value on each branch): where such a name held an array seen
    elsewhere (an argument, another name) before, which array it is now depends on the trip
    count or the branch taken, so a write through it asks for the loop to be unrolled or the
    condition to be known at compile time, or is a located error (the name read, or returned,
    is the right value either way)."""
    def seen(v, k):
        root = id(v.root)
        return root in em.arguments or any(
            k2 != k and any(isinstance(x, Traced) and id(x.root) == root for x in tree.leaves(w))
            for k2, w in entry.items() if isinstance(k2, str) and k2.isidentifier())
    for k in rebound:
        after = env.get(k)
        if not isinstance(after, Traced) or after.view is not None:
            continue
        if paths is None:   # a loop
            before = entry.get(k)
            if isinstance(before, Traced) and seen(before, k):
                after.ambiguous = (frozenset({markers}),
                                   f"'{k}' is bound to new arrays by a loop that runs at run time, so after it "
                                   f"'{k}' is the array it held before the loop only if the loop ran zero times: "
                                   "where this write goes depends on the trip count")
        elif all(isinstance(v, Traced) for v in paths) and len({id(v.root) for v in paths}) > 1 \
                and any(seen(v, k) for v in paths):
            after.ambiguous = (markers or frozenset(),
                               f"'{k}' is a different array depending on which way an `if` that runs at run "
                               f"time went, and one of them is seen elsewhere (an argument, or another name): "
                               "where this write goes depends on the condition")


def _python_number(v) -> bool:
    """Whether `v` is a Python number (a constant, or weakly typed: computed from Python numbers)."""
    return (isinstance(v, (bool, int, float, complex)) and not isinstance(v, np.generic)) or \
        (isinstance(v, Traced) and v.weak is not None and not v.ndim)


def _python_number_unless(after, flag: Traced, number) -> None:
    """`after`, a NumPy scalar where `flag`, else the Python number `number` (a name a loop makes a
    NumPy scalar, `total = 0.0` then `total += x[i]`, is still the Python number where the loop
    ran zero times): for the caller (outputs.output_leaf), as NumPy returns it."""
    if isinstance(after, Traced) and after.weak is None and not after.ndim and after.either is None \
            and _python_number(number):
        after.either = (flag, number)


def _either(em: Emitter, after: Traced, ran: Traced, before: Traced) -> None:
    """`after` (a name rebound on one path) is a new array where `ran`, else the array `before`:
    for the caller (Traced.either) and for reads after a write into `before` through another name
    (Traced.alias), which pick the one or the other at run time."""
    after.either = (ran, before)
    why = after.ambiguous[1] if after.ambiguous else ""

    def refresh(mine, now):
        if Traced(mine).type != Traced(now).type:
            raise NotSupportedError(
                why.replace("where this write goes", "what reading it gives after a write into the array it held")
                if why else "this name may be the array written here or another one",
                hint="copy the array first (y = y.copy()), or write into a new array")
        pred = ran if not after.shape else em.broadcast(ran, after.shape)
        return em.emit("select", pred, Traced(mine), Traced(now)).value
    after.alias = (before, before.value, refresh)


def _go_unless_failed(em: Emitter, go, params, keys: list, carried: dict, before: State):
    """The loop's condition: `go`, and no run-time check has failed. The call reports its first
    failed check and its results are dropped, so the loop may stop at once (as NumPy's exception
    would). Without it, each iteration of a native loop waited on the chain of selects that
    threads the error code through every checked access: insertion sort 4.5x numba's time, 1.1x
    with the loop stopping instead (the chain is then broken by the branch predictor)."""
    if em.err is None or not em.checks:
        return go
    err_key = ("cell", id(em.err.root))
    if err_key in carried:
        err = params[sum(len(_leaves(carried[k])) for k in keys[:keys.index(err_key)])]
    else:   # the code as the loop found it (an earlier loop stopped on a failed check: none run)
        err = before.cells[id(em.err.root)][1]
    zero = em.b.emit("constant", value=np.zeros((), np.int32))
    return em.b.emit("and", go, em.b.emit("compare", err, zero, direction="EQ"))


def _swapped_identity(em, start: dict, end: dict, written: set) -> str | None:
    """Why the loop can't run as one traced body at run time, if its body rebinds a name to
    another array (one that existed when the iteration began, `a, b = b, a`, or a new one,
    `u[i] = 5.0; u = u * 0.5`), writes in place into an array that existed when the iteration
    began, and that array's identity is seen elsewhere (an argument, whose contents the caller
    sees; another name or a view bound to it): which array a write reaches then depends on how
    many times the loop ran. (Names rebound without writes in place, `x_old = x`, are values.)"""
    def root_of(v):
        return id(v.root) if isinstance(v, Traced) else None
    existing = {root_of(v) for v in start.values() if isinstance(v, Traced)}
    # names bound to another array by the end of the pass: one that existed when it began (a
    # swap), or a new one (`u[i] = 5.0; u = u * 0.5`: the first pass writes into the array the
    # loop started from, an argument perhaps, the later ones into arrays the loop made)
    swapped = [k for k, v in end.items() if isinstance(v, Traced) and isinstance(start.get(k), Traced)
               and root_of(v) != root_of(start[k])]
    if not swapped:
        return None
    involved = {root_of(start[k]) for k in swapped} | {root_of(end[k]) for k in swapped if root_of(end[k]) in existing}
    if not involved & written:
        return None
    for k in swapped:
        for v in (start[k], end[k]):
            if id(v.root) in em.arguments and id(v.root) in involved:
                return f"'{k}' is bound to another array on each pass of this loop, and one of them is an argument"
    for k, v in start.items():
        if k in swapped or not isinstance(k, str) or not k.isidentifier():
            continue
        if any(id(x.root) in involved for x in tree.leaves(v) if isinstance(x, Traced)):
            return f"'{swapped[0]}' is bound to another array on each pass of this loop, and '{k}' refers to one of them too"
    return None


GO_KEY = ("name", GO)
