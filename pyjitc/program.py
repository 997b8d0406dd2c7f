"""program: what tracing produces (the typed IR function, and how to give the caller NumPy's
result) and the run-time half of it: OutputTree.build makes the Python result from the compiled
function's results and the call's arguments. The call path (stages.py) needs this module and no
frontend code."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from .ir.graph import Function
from .template import at_path
from .tree import TreeDef

# The run-time check message that asks the @jit wrapper to recompile with libm's float64 sin/cos
# and call again (see frontend/numpy/accurate.py, the vectorised sin/cos).
FAST_TRIG_RETRY = "vectorised float64 sin/cos met a value with |x| > 1e6: libm's from now on"
# The run-time check message of a list appended to in a while loop that outgrew the room compiled
# for it (frontend/appends.py): the @jit wrapper compiles again with more room and calls again.
LIST_ROOM_RETRY = ("a list appended to in a while loop outgrew the room compiled for it; pyjitc.jit compiles "
                   "again with more room, a function compiled ahead of time or through lower() can't: call it "
                   "through pyjitc.jit, or fill a preallocated array and count instead")


def view_of(recipe, a: np.ndarray) -> np.ndarray:
    """The view a recipe describes, made by NumPy from the array `a`. Recipes are data (they
    travel in a .vmfb's signature): ("index", ((kind, ...), ...)) with kinds i (an int), s (start,
    stop, step; stop None past the front), n (np.newaxis); ("reshape", shape); ("transpose", perm);
    ("flip", axes); ("real", None), ("imag", None) (of a complex array); ("view", dtype name);
    NumPy's read-only views: ("diagonal", (offset, axis1, axis2)), ("broadcast_to", shape),
    ("windows", (window_shape, axes))."""
    kind, arg = recipe
    if kind in ("real", "imag"):
        return getattr(a, kind)
    if kind == "view":
        return a.view(np.dtype(arg))
    if kind == "diagonal":
        return np.diagonal(a, *arg)
    if kind == "broadcast_to":
        return np.broadcast_to(a, arg)
    if kind == "windows":
        return np.lib.stride_tricks.sliding_window_view(a, arg[0], axis=arg[1])
    if kind == "index":   # (a trailing `...`: a view even where every index is an int, x[0, ...])
        return a[tuple(it[1] if it[0] == "i" else None if it[0] == "n" else slice(*it[1:]) for it in arg) + (Ellipsis,)]
    if kind == "reshape":
        return a.reshape(arg)
    if kind == "transpose":
        return a.transpose(arg)
    return np.flip(a, arg)


# ---------------------------------------------------------------- the leaves of an output tree

@dataclass(frozen=True)
class Result:
    """Result `index` of the compiled function; `weak`: the Python scalar type a weakly typed
    value is returned as (as in NumPy), or None for an array (a NumPy scalar if 0-d, unless
    `array`: a 0-d array where NumPy returns one, e.g. np.cov of one variable)."""
    index: int
    weak: type | None = None
    array: bool = False

    def take(self, results: list[np.ndarray]):
        """What the caller gets for this result."""
        r = results[self.index]
        return self.weak(r) if self.weak is not None else r[()] if r.ndim == 0 and not self.array else r


@dataclass(frozen=True)
class Argument:
    """The caller's array at `path` (reshaped to `shape`), the very object NumPy returns; with
    `copy`, a new array holding its values unchanged (IREE would hand back the input's own buffer)."""
    path: tuple
    shape: tuple
    copy: bool = False


@dataclass(frozen=True)
class ViewOf:
    """NumPy's view of another returned array or argument, made by `recipes` (see view_of);
    `late`: taken after the program's last write into the argument it comes from, so made after
    the write-backs (where NumPy's reshape copies, an F-ordered argument's `A.ravel()`, the copy
    holds the written values)."""
    base: Result | Argument | Known
    recipes: tuple
    late: bool = False


@dataclass(frozen=True)
class Known:
    """A value known at compile time: a new copy of it per call."""
    value: Any


@dataclass(frozen=True)
class Trimmed:
    """The first `count` (a Result holding an int) entries of `data` along axis 0: a result whose
    length depends on the data (x[mask], np.nonzero, np.unique), compiled at full capacity."""
    data: Result
    count: Result
    items: bool | str = False   # a Python list of the entries (a list a loop appended to), each a
    # NumPy scalar, a Python scalar of type data.weak, or a row array of its own; "tuples" / "lists":
    # each a tuple / list of its row's numbers (`out.append((i, j))`, `hist.append([S, I])`)


@dataclass(frozen=True)
class Either:
    """`then` where the compiled function's boolean result `flag` is true, else `other`: a name a
    run-time loop rebinds, returned, is the array it held before the loop (an argument, or an
    array returned beside it or viewed by another result) exactly when the loop ran zero times,
    and NumPy then returns that very object."""
    flag: Result
    then: Leaf
    other: Leaf


Leaf = Result | Argument | ViewOf | Known | Trimmed | Either


@dataclass(frozen=True)
class OutputTree:
    """The returned structure (tree.py) and how each leaf is made. One node is one object: the
    same array returned twice is one node, and the caller gets one object twice, as from NumPy."""
    treedef: TreeDef
    leaves: tuple[Leaf, ...]

    def build(self, results: list[np.ndarray], arguments: dict, write_back=None):
        """The Python result; `arguments`: the call's argument values by name; `write_back`: copies
        the arguments' new contents into the caller's arrays, called once the leaves made from the
        values passed in are made (copies of arguments), before the views taken after the writes."""
        made: dict[int, Any] = {}
        if not self.late:
            out = _build(self.leaves[0], results, arguments, made) if self.treedef.kind is None else \
                self.treedef.unflatten([_build(leaf, results, arguments, made) for leaf in self.leaves])
            if write_back is not None:
                write_back()
            return out
        early = [None if _late(leaf) else _build(leaf, results, arguments, made) for leaf in self.leaves]
        for leaf in self.leaves:
            _copies_first(leaf, results, arguments, made)
        if write_back is not None:
            write_back()
        leaves = [_build(leaf, results, arguments, made) if _late(leaf) else out for leaf, out in zip(self.leaves, early)]
        return leaves[0] if self.treedef.kind is None else self.treedef.unflatten(leaves)

    @functools.cached_property
    def late(self) -> bool:
        return any(map(_late, self.leaves))


    def flat(self):
        """(tuple or list, its Result leaves) where the tree is one flat tuple or list of distinct
        compiled results (`return a, b.sum()`, the common case after one array), else None."""
        td, leaves = self.treedef, self.leaves
        if (td.kind is not tuple and td.kind is not list) or any(c.kind is not None for c in td.children):
            return None
        if any(type(leaf) is not Result for leaf in leaves) or len({leaf.index for leaf in leaves}) != len(leaves):
            return None
        return td.kind, leaves


def _late(node: Leaf) -> bool:
    return isinstance(node, ViewOf) and node.late


def _copies_first(node: Leaf, results, arguments: dict, made: dict) -> None:
    """Make the argument copies a late view is taken from, from the values passed in."""
    if isinstance(node, Argument) and node.copy:
        _build(node, results, arguments, made)
    elif isinstance(node, ViewOf):
        _copies_first(node.base, results, arguments, made)
    elif isinstance(node, Either):
        _copies_first(node.then, results, arguments, made)
        _copies_first(node.other, results, arguments, made)


def _build(node: Leaf, results, arguments: dict, made: dict):
    if id(node) in made:
        return made[id(node)]
    if isinstance(node, Argument):   # the caller's own array (a view of it if reshaped), as NumPy returns it
        out = at_path(arguments, node.path)
        if node.copy:
            out = np.array(out, copy=True)
        if node.shape is not None and np.shape(out) != tuple(node.shape):
            out = np.reshape(out, node.shape)
    elif isinstance(node, ViewOf):
        out = _build(node.base, results, arguments, made)
        for recipe in node.recipes:
            out = view_of(recipe, out)
    elif isinstance(node, Either):
        out = _build(node.then if bool(results[node.flag.index]) else node.other, results, arguments, made)
    elif isinstance(node, Trimmed):   # a new array of just the selected entries, as NumPy's
        out = np.array(results[node.data.index][:int(results[node.count.index])], copy=True)
        if node.items in ("tuples", "lists"):
            kind = tuple if node.items == "tuples" else list
            out = [kind(node.data.weak(v) if node.data.weak is not None else v for v in row) for row in out]
        elif node.items:
            out = [node.data.weak(v) for v in out] if node.data.weak is not None else \
                list(out) if out.ndim == 1 else [row.copy() for row in out]
    elif isinstance(node, Result):
        out = node.take(results)
    else:
        out = np.array(node.value, copy=True) if isinstance(node.value, np.ndarray) else \
            set(node.value) if type(node.value) is set else node.value   # (a new set per call, as a new array)
    made[id(node)] = out
    return out


@dataclass(frozen=True)
class Program:
    """The typed IR of one specialisation, plus how to rebuild the Python result from it."""
    function: Function
    out_tree: OutputTree
    writebacks: tuple[tuple[tuple, int], ...] = ()   # (argument path, result index)
    checks: tuple[str, ...] = ()                      # run-time error messages (code k -> checks[k-1])
    guards: tuple = ()                                # globals read as constants (see api.Guard)
    error_index: int | None = None                    # which result holds the error code
    c_order: tuple = ()                               # paths of arguments written through a reshape (C order assumed)
