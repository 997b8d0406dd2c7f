"""appends: `results.append(value)` once per pass of a run-time `for` loop over a range of known
length (a loss history, values collected per step), kept as a run-time loop: the list's new items
are rows of an array the loop carries, written at the pass's counter, and become the list's items
after the loop. Without this the loop was unrolled (a list can't be changed at run time): 100
epochs of a logistic regression took 17 s to compile.

In a run-time `while` loop (a residual history of an iterative solver) the number of passes is
not known: the array has room for `room()` rows, and a pass past it stops the call with
LIST_ROOM_RETRY, on which the @jit wrapper compiles again with ROOM_GROWTH times more room and
calls again (nothing was written back). The list's items are then the rows of the passes that
appended, as under a run-time `if` (AppendedItems).

Where it applies: the statement is the append itself, directly in the body of the loop (not in a
branch or an inner loop), the loop is the outermost run-time loop, has no break or return, and its
body reads the list nowhere else; the list exists before the loop. The first interpretation of the
body finds the appended value's type and asks for another (AppendPlan); anything else keeps the
old behaviour (the loop unrolled)."""
from __future__ import annotations

import ast

import numpy as np

from ..errors import NotSupportedError
from ..program import LIST_ROOM_RETRY
from .indexing import mask_key
from .masked import Masked
from .sequences import RangeSeq
from .unify import MISSING
from .regions import State
from .values import NeedStatic, RunTimeTruth, Traced, container_changed, unchanged_row, weak_number


class AppendedItems(Masked):
    """The items a loop appended to a list under a run-time `if` (`out = []`, then `if x[i] > 0:
    out.append(i)`): a selection of the rows the loop wrote, one per pass that appended. It is
    what np.array(out) / np.asarray(out), len(out) and reductions of np.array(out) read; anything
    that needs it as a Python list (returning it, iterating it, sum(out)) asks for its length at
    compile time: a located error. Returned, the caller gets a list of the items (`weak`: the
    Python scalar type of items appended as Python numbers; `mixed`: some passes appended Python
    numbers, others NumPy's, which such a list can't tell apart: not returned)."""
    __slots__ = ("weak", "mixed", "tuples")   # (tuples: tuple or list, each item one of its row's numbers)
    list_items = True
    what = "list's length depends on the data (a loop appended to it under a run-time if, before a break or in a while loop)"
    hint = "make it an array first, np.array(items) (then compute with it), or len(items)"

    def selection(self) -> Masked:
        """The rows the loop wrote, as a selection of them (what returning the list compacts)."""
        return Masked(self._data, self.axis, self.where, self.key, self.params)


def items_like(items, m):
    """`m`, a slice of the list `items` (digits[::-1], out[1:]), as a list again where `items` is
    AppendedItems: NumPy's answer for a list's slice is a list, not an array (probe AO). Where the
    slice can't be carried as rows with flags, a located error."""
    if not isinstance(items, AppendedItems) or not isinstance(m, Masked):
        return m
    if m.where[0] != "flags" or m.axis != 0 or m._data is None:
        raise NotSupportedError("a slice of a list whose length depends on the data, kept as a list",
                                hint="make it an array first: np.array(items)[a:b]")
    out = AppendedItems(m._data, m.axis, m.where, m.key, m.params)
    out.weak, out.mixed, out.tuples = items.weak, items.mixed, items.tuples
    return out


class AppendPlan(Exception):
    """The type of the values one append statement adds: trace() records it and interprets again.
    `mixed`: a later pass appends NumPy numbers of the dtype the first pass's Python numbers got
    (`j = n`, then `j = last[j]`): the plan becomes the NumPy dtype (np.array(items) is the same)."""

    def __init__(self, key, shape, dtype, weak, mixed=False, rows=None):
        super().__init__(key)
        self.key, self.plan, self.mixed = key, (tuple(shape), np.dtype(dtype), weak), mixed
        self.rows = rows   # (nested loops: the rows of all their passes, _nested_append)


# A list grown in a while loop: room for ROOM_ROWS rows at first (fewer for rows over ROOM_BYTES /
# ROOM_ROWS bytes, at least ROOM_MIN_ROWS), ROOM_GROWTH times more after each call that outgrew it,
# up to ROOM_MAX_BYTES.
ROOM_ROWS, ROOM_MIN_ROWS, ROOM_BYTES, ROOM_GROWTH, ROOM_MAX_BYTES = 1024, 16, 1 << 20, 8, 1 << 31


def room(em, shape, dtype) -> int:
    """The rows a list grown in a while loop has room for, its items of `shape` and `dtype`."""
    row = max(int(np.prod(shape, dtype=np.int64)), 1) * np.dtype(dtype).itemsize
    rows = max(ROOM_MIN_ROWS, min(ROOM_ROWS, ROOM_BYTES // row)) * ROOM_GROWTH ** em.list_growth
    if rows * row > ROOM_MAX_BYTES:
        raise NotSupportedError(f"a list appended to in this while loop grew past {rows // ROOM_GROWTH} items of "
                                f"{row} bytes, and more room would take over {ROOM_MAX_BYTES >> 30} GiB",
                                hint="fill a preallocated array and count instead")
    return rows


def _key(marker, node):
    return (marker, node.lineno, node.col_offset)


def _buffer(key) -> str:
    return f"append?{key[0]}:{key[1]}:{key[2]}"


def _flags(key) -> str:
    return f"appended?{key[0]}:{key[1]}:{key[2]}"


def _appended(node):
    """(list name, value node) of a statement `name.append(value)`, else None."""
    call = node.value if isinstance(node, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append" \
            and isinstance(call.func.value, ast.Name) and len(call.args) == 1 and not call.keywords:
        return call.func.value.id, call.args[0]
    return None


def _held_elsewhere(fc, target: list, name: str) -> bool:
    """Whether anything but the name `name` holds the list `target` (another name, a container,
    an enclosing function's name)."""
    seen = set()

    def holds(v) -> bool:
        if v is target:
            return True
        if isinstance(v, (list, tuple, dict)) and id(v) not in seen:
            seen.add(id(v))
            return any(holds(item) for item in (v.values() if isinstance(v, dict) else v))
        return False
    envs = [fc.env] + list(fc.em.enclosing_envs)
    return any(holds(v) for env in envs for k, v in env.items() if not (env is fc.env and k == name))


def _in_branch(loop, stmt) -> int | None:
    """How many `if`s `stmt` stands in inside the loop's body (0: directly in the body; `elif`s
    count one each), None where something else (a loop, a `with`) stands between."""
    def depth(stmts, d):
        for s in stmts:
            if s is stmt:
                return d
            if isinstance(s, ast.If):
                found = depth(s.body, d + 1)
                found = depth(s.orelse, d + 1) if found is None else found
                if found is not None:
                    return found
        return None
    return depth(loop.body, 0)


def _sites(loop, name) -> list:
    """The statements `name.append(v)` directly in the loop's body or in `if`s there, in source
    order (the order one pass runs them in)."""
    found = []

    def walk(stmts):
        for s in stmts:
            got = _appended(s)
            if got is not None and got[0] == name:
                found.append(s)
            elif isinstance(s, ast.If):
                walk(s.body)
                walk(s.orelse)
    walk(loop.body)
    return found


def _statement(loop, key):
    """The append statement at `key`'s position (_key) in the loop, or None."""
    return next((n for n in ast.walk(loop) if isinstance(n, ast.Expr) and (n.lineno, n.col_offset) == key[1:]), None)


def _site_count(loop, node) -> int:
    """How many append statements share the list of `node`'s."""
    found = _appended(node) if node is not None else None
    return max(len(_sites(loop, found[0])), 1) if found is not None else 1


def _breaks(loop, kinds=(ast.Break,)) -> bool:
    """Whether the loop's own body holds a `break` (not one of a loop nested in it); with
    kinds=(ast.Break, ast.Continue), a `break` or a `continue`."""
    todo = list(loop.body)
    while todo:
        n = todo.pop()
        if isinstance(n, kinds):
            return True
        if not isinstance(n, (ast.For, ast.While, ast.FunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(n))
    return False


_EARLY = (ast.Break, ast.Continue)


def _eligible(loop, stmt, name) -> list | None:
    """The loop's append statements of `name` (_sites), where the list is read nowhere else in
    the loop and the loop has no `return`; else None."""
    if _in_branch(loop, stmt) is None:
        return None
    for n in ast.walk(loop):
        if isinstance(n, (ast.Return, ast.Yield)) or isinstance(n, ast.Break) and not _breaks(loop):
            return None
    sites = _sites(loop, name)
    reads = [n for n in ast.walk(loop) if isinstance(n, ast.Name) and n.id == name]
    return sites if len(reads) == len(sites) else None     # (each append's own `name`)


def statement(fc, node) -> bool:
    """Handle `name.append(value)` as a row of a carried array (see the module docstring); False
    where this does not apply (the caller runs the statement as usual)."""
    em = fc.em
    found = _appended(node)
    if found is not None and isinstance(fc.lookup(found[0]), AppendedItems) and not em.loop_depth \
            and not em.branch_depth:
        return _one_more(fc, found[0], fc.lookup(found[0]), fc.visit(found[1]))
    if found is None or not em.append_loops:
        return False
    name, value_node = found
    marker, (loop, count, counter, depth, branches) = next(reversed(em.append_loops.items()))
    if em.loop_depth != depth + 1:     # (in a loop nested in that loop's body)
        return False
    chain = _nest(em, name)
    if len(chain) > 1:
        return _nested_append(fc, node, name, value_node, chain)
    unbounded = count is None   # (a while loop, or a for loop of a run-time count)
    target = fc.lookup(name)
    sites = _eligible(loop, node, name) if isinstance(target, (list, AppendedItems)) else None
    if not sites:
        return False
    earlier = isinstance(target, AppendedItems)   # (rows an earlier loop appended: `while i > 0:
    # ra.append(a[i - 1])` after the traceback's main loop)
    depth = _in_branch(loop, node)   # (the ifs it stands in: a run-time if each, or it is refused)
    if _breaks(loop, _EARLY):   # the passes before a `break` (or not left by a `continue`) append:
        # which ones is known at run time (after an `if ...: break` the rest of the body runs in a
        # branch of its own; `if seen[u]: continue` in a depth-first search's `while stack:` too)
        if em.branch_depth < branches + depth:
            return False
        depth = max(depth, 1)
    elif em.branch_depth != branches + depth:
        return False
    # which passes appended, known at run time: under an if, in a while loop, or one of several
    # appends to the list (`if P[i] == 0: out.append(a) elif P[i] == 1: out.append(b)`, a
    # traceback: each pass has a row per append, in the order a pass runs them)
    conditional = depth > 0 or unbounded or len(sites) > 1 or earlier
    if conditional and _held_elsewhere(fc, target, name):
        return False      # (under a run-time if: only this name may hold the list: the name then
        # holds a selection, which no other reference to the list would see)
    key = _key(marker, sites[0])
    if earlier and key in em.append_plans and (em.append_plans[key][:2] != (target.data.shape[1:], target.data.dtype)
                                                or target.tuples != _container(value_node)):
        return False   # (rows of another type than the appended ones)
    if not earlier and conditional and target and key in em.append_plans and not _fits(target, em.append_plans[key]):
        return False   # (items from before the loop of another type than the appended ones)
    row = _row(fc, key, value_node)
    if row is None:
        raise NeedStatic({marker})      # a value of another type on a later pass: unrolled
    index = em.cast(em.asarray(fc.env[counter]), np.int64)
    if len(sites) > 1:
        site = next(i for i, n in enumerate(sites) if n is node)
        index = em.emit("add", em.emit("mul", index, em.constant(np.int64(len(sites)))), em.constant(np.int64(site)))
    if unbounded:   # past the room: the call stops, and the @jit wrapper compiles with more
        em.check(em.emit("compare", index, em.constant(np.int64(fc.env[_buffer(key)].shape[0])), direction="GE"),
                 LIST_ROOM_RETRY, located=False)
    _write_row(fc, key, row, index, conditional)   # (conditional: the list's items are the rows
    # the passes that appended wrote)
    em.append_targets[key] = (target, name, conditional, _container(value_node))
    return True


def _nest(em, name: str) -> list:
    """The run-time `for` loops (outermost first) whose passes append to `name` together: from
    the innermost append loop out, while each is directly in its parent's body (or an `if` there)
    with a compile-time count and no break or return, and the parent does not bind `name` (the
    list is from before it): `for i ...: for j in range(3): if ...: out.append(i)` (all pairs
    within a cutoff, dense to COO). One loop where nothing encloses it so."""
    loops = list(em.append_loops.items())
    k = len(loops) - 1
    while k > 0:
        (_, (parent, pcount, _, pdepth, _)), (_, (child, ccount, _, cdepth, _)) = loops[k - 1], loops[k]
        if cdepth != pdepth + 1 or not isinstance(parent, ast.For) or not isinstance(child, ast.For) \
                or pcount is None or ccount is None or _in_branch(parent, child) is None \
                or any(isinstance(n, (ast.Break, ast.Return)) for n in ast.walk(child)) \
                or any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(parent)):
            break
        k -= 1
    return loops[k:]


def _nested_append(fc, node, name, value_node, chain) -> bool:
    """`out.append(v)` in a loop nested in others that append together (_nest): one row per pass of
    the innermost loop, at the passes' combined number, flagged where it appended (as under a
    run-time `if`: AppendedItems after the outermost loop)."""
    em = fc.em
    owner_marker, (owner, _, _, _, _) = chain[0]
    target = fc.lookup(name)
    # (once per pass of the innermost loop: directly in its body or an `if` there, not in a loop
    # unrolled inside it, whose appends would all land on one row)
    if _in_branch(chain[-1][1][0], node) is None or not isinstance(target, list) or _held_elsewhere(fc, target, name) \
            or any(isinstance(n, ast.Return) for n in ast.walk(owner)) \
            or sum(1 for n in ast.walk(owner) if isinstance(n, ast.Name) and n.id == name) != 1:
        return False
    key = _key(owner_marker, node)
    if target and key in em.append_plans and not _fits(target, em.append_plans[key]):
        return False
    row = _row(fc, key, value_node, rows=int(np.prod([spec[1] for _, spec in chain])))
    if row is None:
        return False
    index = None   # the passes' combined number: ((i * m1) + j) * m2 + k ...
    for _, (_, count, counter, _, _) in chain:
        k = em.cast(em.asarray(fc.env[counter]), np.int64)
        index = k if index is None else em.emit("add", em.emit("mul", index, em.constant(np.int64(count))), k)
    _write_row(fc, key, row, index, True)
    em.append_targets[key] = (target, name, True, _container(value_node))
    return True


def _row(fc, key, value_node, rows=None):
    """The appended value (`value_node`) as a row of the planned type: None where it is not known
    or not of the type the first pass planned (the caller unrolls the loop or refuses). On the
    first sight of an append, or of a NumPy number after Python ones, raises AppendPlan (`rows`:
    the buffer's rows where not the loop's count)."""
    em = fc.em
    value = fc.visit(value_node)
    if _container(value_node) and isinstance(value, (tuple, list)) and value:
        value = _tuple_row(em, value)   # `out.append((i, j))`: a row of the tuple's numbers
    if type(value) in (bool, int, float):   # a number known in this pass (the loop's first one): a run-time one later
        value = weak_number(em, value)
    elif isinstance(value, np.generic):     # (`np.int64(k)` of such a number)
        value = em.constant(value)
    t = value if isinstance(value, Traced) else None
    if t is None or (t.ndim and t.type.size == 0):
        return None
    plan = em.append_plans.get(key)
    if plan is None:
        raise AppendPlan(key, t.shape, t.dtype, t.weak, rows=rows)
    shape, dtype, weak = plan
    if t.shape == shape and t.dtype == dtype and weak is not None and t.weak is None:
        raise AppendPlan(key, shape, dtype, None, mixed=True, rows=rows)
    if t.shape == shape and t.dtype == dtype and weak is None and t.weak is not None and key not in em.append_mixed:
        # (a Python number where another append or pass adds NumPy ones: `rb.append(-1)` beside
        # `rb.append(b[j - 1])`; np.array(rb) is the same, the list returned as one is refused)
        raise AppendPlan(key, shape, dtype, None, mixed=True, rows=rows)
    if t.shape != shape or t.dtype != dtype or (t.weak != weak and t.weak is None):
        return None
    return em.emit("reshape", em.cast(t, dtype), shape=(1,) + shape)


def _container(value_node):
    """tuple or list for an appended `(i, j)` or `[S, I]` (a row of its numbers), else False."""
    return {ast.Tuple: tuple, ast.List: list}.get(type(value_node), False)


def _tuple_row(em, items: tuple):
    """A tuple of numbers of one type (`(i, j)`, two loop counters) as a row of them; None where
    they are not numbers of one type (Python numbers as weak values)."""
    parts = [weak_number(em, v) if type(v) in (bool, int, float) else em.constant(v) if isinstance(v, np.generic) else v
             for v in items]
    if not all(isinstance(p, Traced) and p.ndim == 0 for p in parts) or len({(p.dtype, p.weak) for p in parts}) != 1:
        return None
    row = em.emit("concatenate", *[em.emit("reshape", p, shape=(1,)) for p in parts], axis=0)
    return Traced(row.value, parts[0].weak, row.params)


def _write_row(fc, key, row, index, flagged: bool) -> None:
    """Write `row` at `index` of the list's buffer, and flag that pass as one that appended."""
    em = fc.em
    zeros = [em.constant(np.int64(0))] * (row.ndim - 1)
    fc.env[_buffer(key)] = em.emit("dynamic_update_slice", fc.env[_buffer(key)], row, index, *zeros)
    if flagged:
        fc.env[_flags(key)] = em.emit("dynamic_update_slice", fc.env[_flags(key)], em.full(True, np.bool_, (1,)), index)


def _fits(items: list, plan) -> bool:
    """Whether the items a list held before the loop have the type the loop appends (`plan`)."""
    shape, dtype, weak = plan
    kinds = {bool: (np.dtype(np.bool_), bool), int: (np.dtype(np.int64), int), float: (np.dtype(np.float64), float)}
    # (a Python number before NumPy numbers of its dtype: `ts = [0.0]`, then `ts.append(t)` of a
    # float64 t; np.array(ts) is the same, the list returned as one is refused: `mixed`)
    return all(type(v) in kinds and shape == () and kinds[type(v)][0] == dtype and weak in (kinds[type(v)][1], None) or
               isinstance(v, np.generic) and shape == () and (v.dtype, None) == (dtype, weak) or   # [np.float64(0)]
               isinstance(v, Traced) and (v.shape, v.dtype) == (shape, dtype) and weak in (v.weak, None) for v in items)


def _first_rows(em, items: list, plan):
    """The items a list held before the loop (of the loop's type: _fits) as rows of one array."""
    shape = plan[0]
    rows = [em.emit("reshape", weak_number(em, v) if type(v) in (bool, int, float) else
                    em.constant(v) if isinstance(v, np.generic) else v, shape=(1,) + shape) for v in items]
    return rows[0] if len(rows) == 1 else em.emit("concatenate", *rows, axis=0)


def _one_more(fc, name, items: AppendedItems, value) -> bool:
    """`vals.append(cur)` after the loop that appended to `vals` under a run-time if (the last run
    of a run-length encoding): one more row, selected. Where the value is not of the rows' type,
    False (the append is refused as before)."""
    em = fc.em
    if type(value) in (bool, int, float):
        value = weak_number(em, value)
    data = items.data
    if not isinstance(value, Traced) or value.shape != data.shape[1:] or value.dtype != data.dtype \
            or value.weak != items.weak:
        return False
    row = em.emit("reshape", value, shape=(1,) + value.shape)
    flags = em.emit("concatenate", items.where[1], em.full(True, np.bool_, (1,)), axis=0)
    more = AppendedItems(em.emit("concatenate", Traced(data.value, None, None), row, axis=0), 0, ("flags", flags),
                         ("flags", mask_key(em, flags), flags.shape), None)
    more.weak, more.mixed, more.tuples = items.weak, items.mixed, items.tuples
    fc.env[name] = more
    return True


def start(fc, loop, count, marker, counter) -> list:
    """Before a run-time loop's body: the arrays its planned appends fill (bound in the env, so
    the loop carries them). Returns their keys. `count`: the for loop's number of passes (None
    for a while loop: each list gets room() rows)."""
    em = fc.em
    if isinstance(count, Traced):   # a run-time count (`for k in range(n)`, n an argument): as a
        count = None                # while loop's, room() rows, grown by compiling again
    em.append_loops[marker] = (loop, count, counter, em.loop_depth, em.branch_depth)
    keys = [key for key in em.append_plans if key[0] == marker]
    for key in keys:
        shape, dtype, _ = em.append_plans[key]
        node = _statement(loop, key)
        sites = _site_count(loop, node)
        rows = room(em, shape, dtype) if count is None else em.append_rows.get(key, count * sites)
        fc.env[_buffer(key)] = em.full(0, dtype, (rows,) + shape)
        if count is None or key in em.append_rows or _breaks(loop, _EARLY) or sites > 1 or (
                node is not None and _in_branch(loop, node)):   # appended under an if, before a break or in a while: which passes appended
            fc.env[_flags(key)] = em.full(False, np.bool_, (rows,))
    return keys


def finish(fc, marker, keys) -> None:
    """After the loop: each list gets the rows its append wrote, in order."""
    em = fc.em
    em.append_loops.pop(marker, None)
    for key in keys:
        buf = fc.env.pop(_buffer(key))
        count = buf.shape[0]
        flags = fc.env.pop(_flags(key), None)
        target, name, conditional, tuples = em.append_targets.pop(key, (None, None, False, False))
        if target is None:
            continue
        shape, dtype, weak = em.append_plans[key]
        if isinstance(target, AppendedItems):   # rows an earlier loop appended, then this loop's
            buf = em.emit("concatenate", Traced(target.data.value, None, None), Traced(buf.value, None, None), axis=0)
            flags = em.emit("concatenate", target.where[1], flags, axis=0)
            items = fc.env[name] = AppendedItems(Traced(buf.value, None, None), 0, ("flags", flags),
                                                 ("flags", mask_key(em, flags), (buf.shape[0],)), None)
            items.weak, items.tuples = (weak if weak == target.weak else None), tuples
            items.mixed = target.mixed or key in em.append_mixed or weak != target.weak
            continue
        if conditional:   # appended under a run-time if: the name holds the rows as a selection
            if target:   # the items from before the loop (`res = [r0]`, a residual history): rows first
                rows = _first_rows(em, target, em.append_plans[key])
                buf = em.emit("concatenate", rows, Traced(buf.value, None, None), axis=0)
                flags = em.emit("concatenate", em.full(True, np.bool_, (len(target),)), flags, axis=0)
                count = buf.shape[0]
            items = fc.env[name] = AppendedItems(Traced(buf.value, None, None), 0, ("flags", flags),
                                                 ("flags", mask_key(em, flags), (count,)), None)
            items.weak, items.tuples = weak, tuples
            items.mixed = key in em.append_mixed or weak is None and any(
                type(v) in (bool, int, float) or isinstance(v, Traced) and v.weak is not None for v in target)
            continue
        if count and (id(target) in em.global_containers or em.region_containers and id(target) in em.region_containers[-1]):
            # a list from before an enclosing run-time loop or branch grows there: that loop is
            # unrolled (or a branch refused) as for any append there
            container_changed(em, f"{name}.append()", "list", container=target)
        for k in range(count):
            row = em.emit("reshape", em.emit("slice", buf, start=(k,) + (0,) * len(shape),
                                             limit=(k + 1,) + shape, strides=(1,) * (len(shape) + 1)), shape=shape)
            kind = em.append_mixed.get(key) if k == 0 else None   # (the first pass's Python number)
            item = Traced(row.value, kind or weak, row.params) if (kind or weak) is not None else row
            if tuples:   # `(i, j)` or `[S, I]` appended: a tuple or list of the row's numbers
                numbers = tuples(Traced(em.emit("reshape", em.emit("slice", row, start=(j,), limit=(j + 1,),
                                                                   strides=(1,)), shape=()).value, item.weak,
                                        row.params) for j in range(shape[0]))
                target.append(numbers)
                em.appended_rows[id(numbers)] = (numbers, buf, k, tuple(v.value for v in numbers))
                continue
            target.append(item)
            em.appended_rows[id(item)] = (item, buf, k, item.value)


# A returned list of more items than this, each one a row a loop appended and nothing changed
# since, is returned as one array the caller's list is made from (whole_lists); shorter ones item by
# item. (500 items each a result of its own took 50 s to compile; probe AH.)
WHOLE_LIST = 16


def whole_lists(em, value):
    """`value` (what the function returns) with each list that is exactly the rows one loop
    appended, in order and unchanged, as those rows (AppendedItems, every row selected)."""
    if isinstance(value, tuple):   # (rebuilt only where an item changed: a NamedTuple keeps its class)
        items = [whole_lists(em, v) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, dict):
        items = {k: whole_lists(em, v) for k, v in value.items()}
        if all(items[k] is v for k, v in value.items()):
            return value
        out = value.copy()
        out.update(items)
        return out
    if type(value) is not list:
        return value
    found = [em.appended_rows.get(id(v)) for v in value]
    weak = lambda v: v.weak if isinstance(v, Traced) else v[0].weak   # noqa: E731 (a tuple row: its numbers')
    if len(value) > WHOLE_LIST and all(f is not None and f[0] is v and unchanged_row(v, f[3]) for f, v in zip(found, value)) \
            and all(f[1] is found[0][1] and f[2] == k for k, f in enumerate(found)) \
            and len(value) == found[0][1].shape[0] and len({weak(v) for v in value}) == 1:
        buf = found[0][1]
        flags = em.full(True, np.bool_, (len(value),))
        items = AppendedItems(Traced(buf.value, None, None), 0, ("flags", flags),
                              ("flags", mask_key(em, flags), (len(value),)), None)
        items.weak, items.mixed = weak(value[0]), False
        items.tuples = False if isinstance(value[0], Traced) else type(value[0])
        return items
    items = [whole_lists(em, v) for v in value]
    return value if all(a is b for a, b in zip(items, value)) else items


# A comprehension over more items than this (an array's rows, a range of known length) runs as a
# run-time loop appending its items (below); shorter ones are built item by item at compile time.
COMPREHENSION_LOOP = 16


def comprehension(fc, node, for_loop, iterate, now):
    """`[f(v) for v in X]` with one generator, over many rows or a long range, outside run-time
    loops and branches: the loop `for v in X: items.append(f(v))` (its items rows of a carried
    array, see statement()), so f is compiled once (`np.array([np.bincount(v,
    minlength=3).argmax() for v in V])` over 100 rows compiled in 29 s unrolled). With `if`s on
    run-time values (`[v * v for v in x if v > 0]`, refused before), of any length: the loop
    `for v in X: if c: items.append(f(v))` (AppendedItems); `now()` builds it item by item at
    compile time first, where the conditions are known then. The loop's variable does not leak,
    as in Python. None where this does not apply. (`for_loop`, `iterate`: loops.py's, passed in:
    loops.py calls this module.)"""
    em = fc.em
    if len(node.generators) != 1 or node.generators[0].is_async \
            or em.branch_depth or not isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return None
    gen = node.generators[0]
    if any(isinstance(n, (ast.NamedExpr, ast.Lambda, ast.ListComp, ast.GeneratorExp, ast.DictComp, ast.SetComp))
           for n in ast.walk(node.elt)) or gen.ifs and em.loop_depth:
        return None
    if gen.ifs:   # conditions known at compile time: the list made now, as before
        before, checkpoint = State(fc.env, em), em.b.checkpoint()
        try:
            return now()
        except RunTimeTruth:
            em.b.rollback(checkpoint)
            before.restore(fc.env)
    iterable = fc.visit(gen.iter)
    if isinstance(iterable, Traced) and iterable.ndim >= 1 and isinstance(iterable.shape[0], int):
        count = iterable.shape[0]
    elif isinstance(iterable, RangeSeq) and isinstance(iterable.count(em), int):
        count = iterable.count(em)
    elif isinstance(iterable, range):
        count = len(iterable)
    else:
        count = None
    if count is None or count <= COMPREHENSION_LOOP and not gen.ifs:
        return _items_now(fc, node, iterable, iterate)
    loop = getattr(node, "_pyjitc_loop", None)
    if loop is None:     # (made once per comprehension: its loop marker stays the same on every pass)
        source = ast.copy_location(ast.Name(f"comprehension?{id(node)}", ast.Load()), gen.iter)
        items = ast.copy_location(ast.Name(f"items?{id(node)}", ast.Load()), node)
        call = ast.copy_location(ast.Call(ast.copy_location(ast.Attribute(items, "append", ast.Load()), node),
                                          [node.elt], []), node)
        body = [ast.copy_location(ast.Expr(call), node)]
        if gen.ifs:   # `if c1 and c2: items.append(...)`
            test = gen.ifs[0] if len(gen.ifs) == 1 else ast.copy_location(ast.BoolOp(ast.And(), gen.ifs), gen.ifs[0])
            body = [ast.copy_location(ast.If(test, body, []), gen.ifs[0])]
        loop = ast.copy_location(ast.For(gen.target, source, body, []), node)
        ast.fix_missing_locations(loop)
        node._pyjitc_loop = loop
    names = [n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)]
    saved = {n: fc.env.get(n, MISSING) for n in names}
    fc.env[loop.iter.id] = iterable
    fc.env[f"items?{id(node)}"] = []
    try:
        for_loop(fc, loop)
    finally:
        fc.env.pop(loop.iter.id, None)
        out = fc.env.pop(f"items?{id(node)}", None)   # (the list, or AppendedItems where an `if` chose)
        for n, v in saved.items():
            if v is MISSING:
                fc.env.pop(n, None)
            else:
                fc.env[n] = v
    return out


def _items_now(fc, node, iterable, iterate):
    """The comprehension built item by item at compile time, its iterable already evaluated."""
    gen, out = node.generators[0], []
    for item in iterate(fc.em, iterable):
        fc.assign(gen.target, item)
        out.append(fc.visit(node.elt))
    return out
