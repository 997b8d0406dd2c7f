"""stacks: a Python list used as a stack or a queue by a run-time loop (`stack = [(i, j)]`, then
`while stack: i, j = stack.pop(); ...; stack.append((i + 1, j))`: a flood fill, a quicksort with
an explicit stack, a breadth-first search with `queue.pop(0)`), held as arrays the loop carries:
one per part of an item (each with room for room() items), and the run-time positions of the
first item and of one past the last.

`pop()` takes the last item, `pop(0)` the first (a queue: the items before it stay in the arrays,
unused), `append(v)` writes one past the last; an append past the room stops the call with
LIST_ROOM_RETRY, on which the @jit wrapper compiles again with more room (as for appends.py).
`len(stack)`, `while stack:`, `if not stack:`, `stack[-1]` and `stack[0]` read the positions; a
pop from an empty list is Python's IndexError at run time.

Where it applies: the list exists before a run-time loop whose body calls `name.pop(...)`, only
`name` holds it, and its items share one type (Python numbers, NumPy scalars or arrays of one
shape and dtype, or tuples of those; Python numbers and NumPy ones are not mixed, since what a
popped item is would then be known only at run time). The list is changed only through `name` in
the function that made it. Anything else keeps the old behaviour (a located error). Such a list
can't be returned or iterated (its length is known at run time): a located error."""
from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

from .. import tree
from ..errors import NotSupportedError
from ..program import LIST_ROOM_RETRY
from .appends import AppendedItems, _held_elsewhere, room
from .compaction import compacted
from .values import Traced, weak_number

_WHAT = "a list used as a stack or queue by a run-time loop has a length known only at run time"


class Deque(list):
    """collections.deque while compiling: a list with deque's own methods (`q.popleft()` is
    `q.pop(0)`); a run-time loop that pops it holds it as a Stack, as a list. Returned, it is a
    located error (tracing.py: the caller would get a list, not a deque)."""

    def popleft(self):
        return self.pop(0)

    def appendleft(self, item):
        self.insert(0, item)

    def extendleft(self, items):
        for item in items:
            self.insert(0, item)


DEQUE_METHODS = {"popleft", "appendleft", "extendleft"}


@dataclass(frozen=True)
class Spec:
    """What a Stack holds, known at compile time: the name and function (env) that own it, the
    structure of one item and the (shape, dtype, weak) of each of its parts."""
    name: str
    owner: int
    items: tree.TreeDef
    types: tuple


class Stack:
    """A list whose length is known at run time (see the module docstring). `parts`: one array
    per part of an item, rows = items; `head`, `end`: the first item's row, one past the last."""
    __slots__ = ("parts", "head", "end", "spec")

    def __init__(self, parts: tuple, head, end, spec: Spec):
        self.parts, self.head, self.end, self.spec = tuple(parts), head, end, spec

    def __eq__(self, other):   # (loop templates of a Stack compare so: carried.py)
        return type(other) is Stack and (self.parts, self.head, self.end, self.spec) == \
            (other.parts, other.head, other.end, other.spec)

    __hash__ = None

    def _refuse(self, what: str):
        raise NotSupportedError(f"{what} of '{self.spec.name}': {_WHAT}",
                                hint="use len(), pop(), append(), [0] or [-1] on it, or keep the items in an "
                                     "array with a count")

    def __iter__(self):
        self._refuse("iterating over the items")

    def __len__(self):
        self._refuse("len()")

    def __bool__(self):
        self._refuse("the truth value")

    def __getitem__(self, key):
        self._refuse("indexing")


tree.register_node(Stack, lambda s: ((s.parts, s.head, s.end), s.spec),
                   lambda spec, children: Stack(children[0], children[1], children[2], spec))


@dataclass
class StackMethod:
    """`stack.pop` / `stack.append` read from a Stack, called later (call())."""
    stack: Stack
    name: str


def popped_names(loop) -> list[str]:
    """The names whose `.pop(...)` the body of `loop` calls (ordered as first seen)."""
    out = []
    for stmt in loop.body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("pop", "popleft") \
                    and isinstance(n.func.value, ast.Name) and n.func.value.id not in out:
                out.append(n.func.value.id)
    return out


def start(fc, loop) -> None:
    """Before a run-time loop: each list the body pops from, held only by its name and of items of
    one type, becomes a Stack (else it stays a list: its change is refused as before)."""
    em = fc.em
    for name in popped_names(loop):
        items = fc.env.get(name)
        if isinstance(items, AppendedItems):   # `ready = [i for i in range(n) if indeg[i] == 0]`, then popped
            if not _held_elsewhere(fc, items, name):   # (another name would not see the pops)
                _from_appended(fc, name, items)
            continue
        if not isinstance(items, list) or not items or _held_elsewhere(fc, items, name):
            continue
        parts = _item_parts(em, items)
        if parts is None:
            continue
        treedef, rows = parts
        types = tuple((r[0].shape, r[0].dtype, r[0].weak) for r in rows)
        room_ = min(room(em, shape, dtype) for shape, dtype, _ in types)
        if room_ < len(items):
            continue
        spec = Spec(name, id(fc.env), treedef, types)
        arrays = []
        for (shape, dtype, weak), column in zip(types, rows):
            rows_ = [em.emit("reshape", v, shape=(1,) + shape) for v in column]
            if room_ > len(items):
                rows_.append(em.full(0, dtype, (room_ - len(items),) + shape))
            filled = rows_[0] if len(rows_) == 1 else em.emit("concatenate", *rows_, axis=0)
            arrays.append(Traced(filled.value, weak, None))
        fc.env[name] = Stack(tuple(arrays), 0, len(items), spec)


def _from_appended(fc, name: str, items: AppendedItems) -> None:
    """A list a loop appended to under a run-time condition (its length known at run time), as a
    Stack: its rows moved to the front in order, with room for more. Items of Python numbers and
    NumPy ones mixed (`mixed`) stay as they are (the pop is refused as before)."""
    em = fc.em
    if items.mixed:
        return
    data, count = compacted(em, items.selection())
    item_shape, dtype = tuple(data.shape[1:]), np.dtype(data.dtype)
    rows = data.shape[0]
    room_ = max(room(em, item_shape, dtype), rows)
    if room_ > rows:
        data = em.emit("concatenate", data, em.full(0, dtype, (room_ - rows,) + item_shape), axis=0)
    if items.tuples:   # `out.append((i, j))`: one array per part of the tuples
        parts = tuple(Traced(em.emit("slice", data, start=(0, j), limit=(room_, j + 1), strides=(1, 1)).value, None, None)
                      for j in range(item_shape[0]))
        parts = tuple(Traced(em.emit("reshape", p, shape=(room_,)).value, items.weak, None) for p in parts)
        treedef = tree.flatten(items.tuples(range(item_shape[0])))[1]
        types = tuple(((), dtype, items.weak) for _ in parts)
    else:
        parts, treedef, types = (Traced(data.value, items.weak, None),), tree.LEAF, ((item_shape, dtype, items.weak),)
    fc.env[name] = Stack(parts, 0, em.cast(count, np.int64), Spec(name, id(fc.env), treedef, types))


def _item_parts(em, items):
    """(treedef of an item, [the values of part k of every item] per part) where every item has
    one structure and each part one type (Python numbers as weak values); else None."""
    flat = [tree.flatten(item) for item in items]
    treedef = flat[0][1]
    if any(t != treedef for _, t in flat):
        return None
    columns = []
    for k in range(treedef.num_leaves):
        column = [_value(em, leaves[k]) for leaves, _ in flat]
        if any(v is None for v in column):
            return None
        first = column[0]
        if any((v.shape, v.dtype, v.weak) != (first.shape, first.dtype, first.weak) for v in column):
            return None
        columns.append(column)
    return treedef, columns


def _value(em, v):
    """An item's part as a run-time value (Python numbers weak), or None where it can't be one."""
    if type(v) in (bool, int, float, complex):
        return weak_number(em, v)
    if isinstance(v, np.generic):
        return em.constant(v)
    if isinstance(v, Traced) and v.view is None and v.type.size:
        return v
    return None


def _own(fc, stack: Stack, shown: str) -> None:
    if fc.env.get(stack.spec.name) is not stack or id(fc.env) != stack.spec.owner:
        raise NotSupportedError(f"{shown}: '{stack.spec.name}' is used as a stack or queue by a run-time loop, and "
                                "is changed here through another name or in another function",
                                hint="change it only through its own name, in the function that made it")


def _int(em, v) -> Traced:
    return em.cast(em.asarray(v), np.int64)


def length(em, stack: Stack) -> Traced:
    """len(stack): a Python int at run time."""
    n = em.emit("sub", _int(em, stack.end), _int(em, stack.head))
    return Traced(n.value, int, n.params)


def truth(em, stack: Stack) -> Traced:
    """bool(stack)."""
    t = em.emit("compare", _int(em, stack.end), _int(em, stack.head), direction="GT")
    return Traced(t.value, None, t.params)


def _read(em, stack: Stack, row: Traced):
    """The item at `row` (its parts rebuilt into the item's structure)."""
    out = []
    for part, (shape, dtype, weak) in zip(stack.parts, stack.spec.types):
        zeros = [em.constant(np.int64(0))] * len(shape)
        got = em.emit("dynamic_slice", part, row, *zeros, sizes=(1,) + shape)
        got = em.emit("reshape", got, shape=shape)
        out.append(Traced(got.value, weak, got.params))
    return stack.spec.items.unflatten(out)


def _empty_check(em, stack: Stack, what: str) -> None:
    em.check(em.emit("compare", _int(em, stack.end), _int(em, stack.head), direction="LE"), what)


def item(em, stack: Stack, index) -> object:
    """stack[0] or stack[-1]."""
    if isinstance(index, bool) or not isinstance(index, int) or index not in (0, -1):
        stack._refuse(f"indexing with [{index!r}]")
    _empty_check(em, stack, "IndexError: list index out of range")
    row = _int(em, stack.head) if index == 0 else em.emit("sub", _int(em, stack.end), em.constant(np.int64(1)))
    return _read(em, stack, row)


def call(fc, stack: Stack, method: str, shown: str, args, kwargs):
    """stack.pop(), stack.pop(0), stack.append(v); a deque's q.popleft()."""
    em = fc.em
    if method == "popleft" and not args and not kwargs:
        method, args = "pop", (0,)
    if method == "pop" and not kwargs and (not args or len(args) == 1 and type(args[0]) is int and args[0] in (0, -1)):
        _own(fc, stack, shown)
        _empty_check(em, stack, "IndexError: pop from empty list")
        first = bool(args) and args[0] == 0
        one = em.constant(np.int64(1))
        if first:
            row = _int(em, stack.head)
            fc.env[stack.spec.name] = Stack(stack.parts, em.emit("add", row, one), stack.end, stack.spec)
        else:
            row = em.emit("sub", _int(em, stack.end), one)
            fc.env[stack.spec.name] = Stack(stack.parts, stack.head, row, stack.spec)
        return _read(em, stack, row)
    if method == "append" and len(args) == 1 and not kwargs:
        _own(fc, stack, shown)
        leaves, treedef = tree.flatten(args[0])
        values = [_value(em, v) for v in leaves]
        if treedef != stack.spec.items or any(v is None or (v.shape, v.dtype, v.weak) != t
                                              for v, t in zip(values, stack.spec.types)):
            raise NotSupportedError(f"{shown}(): '{stack.spec.name}' is used as a stack or queue by a run-time loop, "
                                    "and this item is not of the type of its items before the loop",
                                    hint="append items of one type: the same tuple structure, Python numbers or "
                                         "NumPy values of one dtype and shape (e.g. int(x) for a NumPy integer)")
        end = _int(em, stack.end)
        em.check(em.emit("compare", end, em.constant(np.int64(stack.parts[0].shape[0])), direction="GE"),
                 LIST_ROOM_RETRY, located=False)
        parts = []
        for part, v, (shape, dtype, weak) in zip(stack.parts, values, stack.spec.types):
            zeros = [em.constant(np.int64(0))] * len(shape)
            row = em.emit("reshape", v, shape=(1,) + shape)
            written = em.emit("dynamic_update_slice", part, row, end, *zeros)
            parts.append(Traced(written.value, weak, written.params))
        fc.env[stack.spec.name] = Stack(tuple(parts), stack.head, em.emit("add", end, em.constant(np.int64(1))),
                                        stack.spec)
        return None
    stack._refuse(f"{shown}()")


def refuse_returned(result, treedef: tree.TreeDef) -> None:
    """A Stack among a function's results: a located error (its length is known at run time); so
    is a deque (the caller would get a list)."""
    if _holds_deque(result):
        raise NotSupportedError("returning a collections.deque: the compiled function returns lists, not deques",
                                hint="return list(q)")
    for _, node in treedef.nodes():
        if node.kind is Stack:
            raise NotSupportedError(f"returning '{node.aux.name}': {_WHAT}",
                                    hint="return an array of its items (fill a preallocated array and count)")


def _holds_deque(value) -> bool:
    if isinstance(value, Deque):
        return True
    if isinstance(value, (list, tuple, dict)):
        return any(_holds_deque(v) for v in (value.values() if isinstance(value, dict) else value))
    return False
