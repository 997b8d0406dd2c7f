"""outputs: how the caller gets each leaf a compiled function returns (program.py's nodes): the
caller's own array or a view of it, a copy of an argument's values, a value known at compile time,
a result of the executable, or a selection compacted to its length."""
from __future__ import annotations

import numpy as np

from ..errors import NotSupportedError
from ..ir.dims import Dim, NeedsStaticShape, is_symbolic
from ..program import Argument, Either, Known, Result, Trimmed, ViewOf
from . import compaction, masked
from .values import Traced

KNOWN_RESULT_MAX = 4096   # known results up to this many elements travel in the signature, not through IREE


def _flat(x):
    if isinstance(x, (tuple, list)):
        for v in x:
            yield from _flat(v)
    else:
        yield x


def view_root(t: Traced) -> Traced:
    """The array `t` is (a chain of) NumPy views of, or `t` itself."""
    while t.view is not None and t.view.recipe is not None:
        t = t.view.base
    return t


def output_leaf(em, value, outputs, argument_source, argument_object, seen):
    """How the caller gets one returned leaf: Argument is the caller's array (or a view of it), or
    with copy, a new array holding an argument's values unchanged (IREE would hand back the
    input's own buffer); Known a value known at compile time (a new copy of it per call). The
    same array returned twice is one node (`seen`), so the caller gets the same object twice."""
    if isinstance(value, Traced):
        if id(value) in seen:
            return seen[id(value)]
        path = argument_source(value.value) if value.weak is None else None
        base, recipes = value, []
        while base.view is not None and base.view.recipe is not None:
            recipes.insert(0, base.view.recipe)
            base = base.view.base
        arguments = seen["arguments"]
        base_node = output_leaf(em, base, outputs, argument_source, argument_object, seen) \
            if recipes and (id(base) in seen["returned"] or id(base) in arguments or id(base) in seen["shared"]) \
            else None
        if is_symbolic(value.shape) or any(isinstance(part, Dim) for r in recipes for part in _flat(r)):
            # a run-time size: only a new array or the argument itself, unreshaped, can be returned
            if recipes or id(value) not in arguments and path is not None:
                raise NeedsStaticShape("a view of an argument returned with a run-time size")
        if id(value) in arguments:   # the caller's own array (updated in place by the write-back)
            node = Argument(arguments[id(value)], None if is_symbolic(value.shape) else value.shape)
        elif isinstance(base_node, (Result, Known, Argument, Either)) and base.ndim:
            # a view of another result, an argument or a copy of one, as in NumPy; made after the
            # write-backs where taken after the program's last write into that array
            node = ViewOf(base_node, tuple(recipes), late=value.view.root_seen is value.root._value)
        elif path is not None and (argument_object(value) or value.ndim or id(value) in em.zero_d_arrays):
            # (a new 0-d value holding an argument's contents, np.sum of a 0-d array, is a NumPy scalar)
            node = Argument(path, value.shape, copy=not argument_object(value))
        elif value.const is not None and value.weak is None and value.const.size <= KNOWN_RESULT_MAX:
            contents = value.const
            node = Known(contents if id(value) in em.zero_d_arrays or contents.ndim else contents[()])
        else:
            outputs.append(value.value)
            node = Result(len(outputs) - 1, value.weak, id(value) in em.zero_d_arrays)
        if value.either is not None and isinstance(node, Result):
            # a name a run-time loop rebinds: the array it held before where the loop ran zero
            # times, if the caller can tell (an argument, or an array returned or viewed beside it)
            # ... or a Python number where it was one before the loop (or on the other branch)
            ran, before = value.either
            if (not isinstance(before, Traced) or before.weak is not None or argument_object(before)
                    or id(view_root(before)) in seen["shared"]):
                other = output_leaf(em, before, outputs, argument_source, argument_object, seen)
                outputs.append(ran.value)
                node = Either(Result(len(outputs) - 1), node, other)
        seen[id(value)] = node
        return node
    if isinstance(value, masked.Masked):
        if id(value) in seen:
            return seen[id(value)]
        items = value.list_items   # a list a loop appended to: the caller gets a list
        if items and value.mixed:
            raise NotSupportedError("this list's first item is a Python number and its others are NumPy numbers (a "
                                    "name that started as a Python number), which a returned list can't keep apart",
                                    hint="return np.array(items), or start the name as a NumPy number (np.int64(n))")
        data, count = compaction.compacted(em, value.selection() if items else value)
        outputs.extend([data.value, count.value])
        node = seen[id(value)] = Trimmed(Result(len(outputs) - 2, value.weak if items else None),
                                         Result(len(outputs) - 1), {tuple: "tuples", list: "lists"}.get(value.tuples, items) if items else items)
        return node
    if value is None or isinstance(value, (bool, int, float, complex, str, np.generic, np.ndarray, np.dtype)) or \
            isinstance(value, (set, frozenset)) and all(isinstance(v, (bool, int, float, complex, str)) for v in value) or \
            (isinstance(value, type) and (issubclass(value, np.generic) or value in (bool, int, float, complex))):
        return Known(value)
    raise NotSupportedError(f"a @jit function can't return a {type(value).__name__}",
                            hint="return arrays, numbers, or tuples/lists/dicts of them")
