"""assignment: NumPy's rules for writing into arrays, applied by the AST visitor.
`x[i] = v` and `x op= v` update the array itself (every name and view bound to it sees the write;
an argument's update reaches the caller's array); values known at compile time are updated by
NumPy itself, so they stay known. Python lists and dicts are changed while the program is built."""
from __future__ import annotations

import ast
import operator

import numpy as np

from ..errors import JitError, NotSupportedError, ShapeError, UnsupportedSyntaxError
from . import indexing, masked, selections, write_loops
from .reversed_slices import element_update
from .operators import apply_operator
from .sequences import Seq, item_at, store_at
from .registry import FUNCTIONS, PROPERTIES
from .values import Traced, call_known, container_changed, contains_unknown, is_static, items_of, known

# NumPy's in-place operators, for contents known at compile time
IN_PLACE = {"Add": operator.iadd, "Sub": operator.isub, "Mult": operator.imul, "Div": operator.itruediv,
            "FloorDiv": operator.ifloordiv, "Mod": operator.imod, "Pow": operator.ipow, "BitAnd": operator.iand,
            "BitOr": operator.ior, "BitXor": operator.ixor, "LShift": operator.ilshift, "RShift": operator.irshift,
            "MatMult": operator.imatmul}


def store(em, base, index, value, shown):
    """`base[index] = value`: arrays are updated in place (the caller's array too, for an
    argument); Python lists and dicts only while the program is being built."""
    if isinstance(base, Traced):
        if not em.is_array(base):
            kind = type(base.weak(0)).__name__ if base.weak else f"numpy.{base.dtype}"
            raise JitError(f"TypeError: {shown}: a '{kind}' scalar does not support item assignment",
                           hint="NumPy's operations on 0-d arrays return scalars; use a 1-element array")
        index = known(index)
        if masked.as_mask(index) is not None:   # y[np.nonzero(m)] = v is y[m] = v
            index = masked.as_mask(index)
        index = selections.masks_as_positions(em, index)   # K[m, m] = v
        if isinstance(index, masked.Masked) and np.dtype(index.data.dtype).kind in "iu":
            looped = write_loops.scatter_loop(em, base, index, value, shown)
            if looped is not None:
                base.value = looped.value
                return
            index = selections.as_flags(em, index)    # ranks[order[i:j + 1]] = r
            value = selections.as_flags(em, value)
        index = selections.scalars_beside_selection(em, index)   # A[i, indices[indptr[i]:indptr[i + 1]]] = v
        if isinstance(index, tuple) and any(isinstance(it, masked.Masked) for it in index):
            value = selections.as_flags(em, value)
        items = selections.index_items(index)
        if items is not None:   # N[Xi[m], Yi[m]] = v
            base.value = selections.scatter(em, base, items, value, shown).value
            return
        if overlapping_store(em, base, index, value):
            return
        if not store_known(em, base, index, value):
            base.value = indexing.setitem(em, base, index, value, shown).value
    elif isinstance(base, (list, dict)):
        if run_time_position(base, index) and em.loop_depth and index.params is None:
            # (unrolling the loop would leave the position a run-time value all the same, and a
            # selection per item per step: 2000 steps took 20 minutes to compile)
            raise NotSupportedError(f"{shown}: a Python list written at a position that depends on array values, "
                                    "inside a loop that runs at run time", hint="use an array: "
                                    "counts = np.zeros(k, dtype=int) and counts[i] += 1")
        container_changed(em, shown, type(base).__name__, item=True, container=base)   # (both sides of a run-time if are built)
        if run_time_position(base, index):
            store_at(em, base, index, value)   # counts[k] = ...: each slot chosen at run time
            return
        index = em.static(index, "an index into a Python list or dict")
        try:
            base[index] = value
        except (IndexError, TypeError) as e:
            raise JitError(f"{shown}: {type(e).__name__}: {e}") from None
    else:
        raise JitError(f"{shown}: a {type(base).__name__} does not support item assignment")


def run_time_position(base, index) -> bool:
    """base[index] picks one of a list's numbers by a run-time integer (`counts[k]`)."""
    return isinstance(base, list) and isinstance(index, Traced) and index.ndim == 0 and len(base) > 0 \
        and (index.weak in (int, bool) or np.issubdtype(index.dtype, np.integer))


def _chain(t: Traced):
    """The recipes that make t from its root array (None where a link is not a plain view)."""
    recipes = []
    while t.view is not None:
        if t.view.recipe is None:
            return None
        recipes.insert(0, t.view.recipe)
        t = t.view.base
    return recipes


def overlapping_store(em, base: Traced, index, value) -> bool:
    """`base[index] = value` where value is a view of the same array as base (`u[:] = P[:3]`
    with u = P[::2]): NumPy copies overlapping memory in an order that depends on the strides
    (memmove for equal strides, element by element otherwise), so the result is NumPy's own: the
    same assignment done by NumPy on the positions 0..size-1 of the root says which old element
    each position ends up holding, and the root is gathered by that. Compile-time indices only."""
    if not (isinstance(value, Traced) and value.view is not None and value.root is base.root) or \
            contains_unknown(index) or any(isinstance(i, Traced) for i in (index if isinstance(index, tuple) else (index,))):
        return False
    root = base.root
    dst_chain, src_chain = _chain(base), _chain(value)
    if dst_chain is None or src_chain is None or root.frozen:
        return False
    from ..program import view_of

    def assigned(buffered: bool) -> np.ndarray:
        ids = np.arange(root.type.size, dtype=np.int64).reshape(root.shape)
        dst, src = ids, ids
        for r in dst_chain:
            dst = view_of(r, dst)
        for r in src_chain:
            src = view_of(r, src)
        dst[index] = src.copy() if buffered else src
        return ids.reshape(-1)
    try:
        perm = assigned(buffered=False)
    except (ValueError, IndexError):
        return False   # NumPy's error: the ordinary path raises it with its message
    if np.array_equal(perm, assigned(buffered=True)):
        return False   # NumPy's copy reads every source element before overwriting it: the ordinary write
    flat = em.emit("reshape", Traced(root.value), shape=(root.type.size,))
    moved = em.emit("take", flat, em.constant(perm))
    root.value = em.emit("reshape", moved, shape=root.shape).value
    return True


def store_known(em, base: Traced, index, value) -> bool:
    """`base[index] = value` computed by NumPy where all three are known at compile time (the
    array stays known: a mask built with writes is still a compile-time mask)."""
    contents = base.const
    if contents is None or base.view is not None or base.frozen or contains_unknown(index):
        return False
    v = known(value)
    if isinstance(v, Traced) or not is_static(v):
        return False
    new = contents.copy()
    try:
        with np.errstate(all="ignore"):
            new[index] = v
    except (TypeError, ValueError, IndexError, OverflowError):
        return False     # the run-time path raises NumPy's error with its own message
    em.set_known(base, new)
    return True


def unpack_targets(em, targets: list, value) -> list:
    """(target, item) pairs of `t1, t2, ... = value`; a starred target (`a, *rest = value`) takes a
    list of the items between, as in Python."""
    starred = [k for k, t in enumerate(targets) if isinstance(t, ast.Starred)]
    if len(starred) > 1:
        raise UnsupportedSyntaxError("multiple starred expressions in assignment")
    if not starred:
        return list(zip(targets, unpack(em, value, len(targets))))
    k = starred[0]
    items = unpack(em, value, None, at_least=len(targets) - 1)
    tail = len(targets) - k - 1
    items = items[:k] + [list(items[k:len(items) - tail])] + items[len(items) - tail:]
    return list(zip([t.value if isinstance(t, ast.Starred) else t for t in targets], items))


def unpack(em, value, n, at_least=None):
    """`a, b = value`: n items, as Python unpacks (rows, for an array); n None (a starred
    target): all of them, at least `at_least`."""
    if isinstance(value, Traced):
        if value.ndim == 0:
            raise ShapeError("cannot unpack a 0-d array")
        count = value.shape[0] if n is None else n
        if value.shape[0] != count or (at_least is not None and count < at_least):
            raise ShapeError(f"cannot unpack an array of length {value.shape[0]} into {n or at_least} names")
        return [indexing.getitem(em, value, i) for i in range(count)]
    if isinstance(value, Seq):
        value = em.static(value.materialize(em), "unpacking a sequence")
    items = list(value)
    if n is not None and len(items) != n or at_least is not None and len(items) < at_least:
        raise ShapeError(f"cannot unpack {len(items)} values into {n if n is not None else at_least} names")
    return items


def augmented_assign(fc, node: ast.AugAssign):
    """`target op= value` for a name, an array item, or a list/dict item."""
    em = fc.em
    op = type(node.op).__name__
    shown = ast.unparse(node)
    if isinstance(node.target, ast.Name):
        old = fc.visit(ast.Name(node.target.id, ast.Load(), **_pos(node.target)))
        value = fc.visit(node.value)
        new = apply_operator(em, op, old, value)
        if isinstance(old, masked.Masked):     # s += 1 of s = a[k:]: into s's elements (a's, for a view)
            _update_masked(em, old, new, shown)
        elif in_place(em, old):
            update_in_place(em, old, new, shown)
        else:
            fc.env[node.target.id] = new
        return
    if isinstance(node.target, ast.Attribute) and node.target.attr in ("real", "imag"):
        view = fc.visit(node.target)      # `c.real += 1`: an in-place update of the view (writes into c)
        update_in_place(em, view, apply_operator(em, op, view, fc.visit(node.value)), shown)
        return
    if not isinstance(node.target, ast.Subscript):
        raise NotSupportedError(f"in-place update of {ast.unparse(node.target)} is not supported")
    base, index = fc.subscript(node.target, read=False)
    if run_time_position(base, known(index)):   # counts[k] += 1: the item read and written at run time
        old = item_at(em, base, known(index))
        store(em, base, known(index), apply_operator(em, op, old, fc.visit(node.value)), shown)
        return
    if isinstance(base, (list, dict)):   # L[i] += v: the item's own += (in place for an array), stored back
        key = em.static(known(index), "an index into a Python list or dict")
        try:
            old = base[key]
        except (IndexError, KeyError, TypeError) as e:
            raise JitError(f"{shown}: {type(e).__name__}: {e}") from None
        new = apply_operator(em, op, old, fc.visit(node.value))
        if in_place(em, old):
            update_in_place(em, old, new, shown)
        else:
            store(em, base, key, new, shown)
        return
    if isinstance(base, masked.Masked) and masked.element_index(base, known(index), writing=True):   # v[0] += s of v = x[k:]
        base, index = base.data, masked.element_position(em, base, known(index))
    elif isinstance(base, masked.Masked):   # out[1:] -= 1 of out = x[w:].copy(): out[1:] = out[1:] - 1, cast
        old = fc.visit(ast.copy_location(ast.Subscript(node.target.value, node.target.slice, ast.Load()), node.target))
        new = apply_operator(em, op, old, fc.visit(node.value))   # back as NumPy's in-place op casts
        new_dtype, old_dtype = (v.data.dtype if isinstance(v, masked.Masked) else em.dtype_of(v) for v in (new, old))
        if isinstance(new_dtype, np.dtype) and isinstance(old_dtype, np.dtype) \
                and not np.can_cast(new_dtype, old_dtype, "same_kind"):
            raise ShapeError(f"{shown}: Cannot cast ufunc output from dtype('{new_dtype}') to "
                             f"dtype('{old_dtype}') with casting rule 'same_kind'")
        fc.assign(node.target, new)
        return
    if not isinstance(base, Traced):
        raise NotSupportedError(f"{shown}: in-place update of an item of a {type(base).__name__}",
                                hint="write it as x[i] = x[i] + v")
    index = selections.masks_as_positions(em, known(index))   # K[m, m] += v
    index = selections.scalars_beside_selection(em, index)    # A[i, idx[a:b]] += v
    value = fc.visit(node.value)
    if isinstance(index, tuple) and any(isinstance(it, masked.Masked) for it in index):
        value = selections.as_flags(em, value)
    if update_known(em, base, index, op, value):
        return
    # NumPy: x[i] += v is x.__setitem__(i, x[i].__iadd__(v)), so the sum is cast back
    if indexing.is_mask(index) and not isinstance(value, masked.Masked):
        # x[mask] op= v: every element computed, the masked ones kept (`y[m] /= w[m]`, a selection
        # by the same mask: below, as `y[m] = y[m] / w[m]`)
        if np.size(value) != 1 if not isinstance(value, Traced) else value.type.size != 1:
            raise NotSupportedError(f"{shown}: the number of values must match the number of True "
                                    "entries, known only at run time", hint="use a scalar, or np.where")
        holder = Traced(base.value, None, base.params)
        update_in_place(em, holder, apply_operator(em, op, holder, value), shown)
        base.value = indexing.masked_update(em, base, index, holder).value
        return
    looped = element_update(em, base, index, op, value, shown)   # s[2 * d::d] += d, d a run-time step
    if looped is not None:
        store(em, base, Ellipsis, looped, shown)
        return
    # (x[idx[i:j]] += v: the gather a read of it is, codegen.item)
    old = masked.gather(em, base, index) if isinstance(index, masked.Masked) else \
        selections.gather_many(em, base, index) if selections.index_items(index) else indexing.getitem(em, base, index)
    new = apply_operator(em, op, old, value)
    if isinstance(old, masked.Masked):   # A[i, :j] -= v: the same bounds, cast back as NumPy's += does
        if not np.can_cast(new.data.dtype, old.data.dtype, "same_kind"):
            raise ShapeError(f"{shown}: Cannot cast ufunc output from dtype('{new.data.dtype}') to "
                             f"dtype('{old.data.dtype}') with casting rule 'same_kind'")
        store(em, base, index, new, shown)
        return
    if _one_element(base, index):
        # `a[i] += 0.7`: a[i] is a NumPy scalar, so its `+=` makes a new number, which the
        # store converts as it converts any one number (an int array takes it truncated)
        store(em, base, index, new, shown)
        return
    holder = Traced(old.value, old.weak, old.params)
    update_in_place(em, holder, new, shown)
    store(em, base, index, holder, shown)


def _one_element(base: Traced, index) -> bool:
    """Whether base[index] is a NumPy scalar: one integer index per axis."""
    items = index if isinstance(index, tuple) else (index,)
    return len(items) == base.ndim and base.ndim > 0 and all(
        (isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))) or
        (isinstance(i, Traced) and i.ndim == 0 and i.dtype.kind in "iu") for i in items)


def update_known(em, base: Traced, index, op: str, value) -> bool:
    """`base[index] op= value` computed by NumPy itself where all of it is known at compile time."""
    contents, value = base.const, known(value)
    if contents is None or base.view is not None or base.frozen or contains_unknown(index) \
            or masked.contains(index) or not is_static(value):
        return False
    new = contents.copy()
    try:
        with np.errstate(all="ignore"):
            new[index] = IN_PLACE[op](new[index], value)
    except (TypeError, ValueError, IndexError, OverflowError, KeyError):
        return False
    em.set_known(base, new)
    return True


def _update_masked(em, old: masked.Masked, new, what: str):
    """`s op= v` where s has run-time bounds (`s = a[k:]`, `S = A[k + 1:, k + 1:]`) or is a
    selection (`s = x[x > 0]`, a copy): the result written into s's elements, the others kept.
    s's data is a view of its base for a slice (so the base sees the write, as in NumPy), an
    array of its own for a copy or a selection. It was rebound instead: a loop over `s = a[k:];
    s += 1` left `a` unchanged. Where s's data is computed (a reversed or strided slice, which
    NumPy would also write through), the bounds are asked for at compile time."""
    if old._data is None or not isinstance(new, masked.Masked) or new.key is None or new.key != old.key \
            or new.data.shape != old.data.shape:
        masked.need(old, what)
    data = old.data
    if old.where[0] != "flags" and not (old.own or data.view is not None):
        masked.need(old, what)
    value = new.data
    if value.dtype != data.dtype:
        if not np.can_cast(value.dtype, data.dtype, "same_kind"):
            raise ShapeError(f"{what}: Cannot cast ufunc output from dtype('{value.dtype}') to "
                             f"dtype('{data.dtype}') with casting rule 'same_kind'")
        value = em.cast(value, data.dtype)
    inside = masked.mask(em, old.where, data.shape, old.axis)
    update_in_place(em, data, em.emit("select", inside, value, data), what)


def in_place(em, old) -> bool:
    """Whether `old op= v` updates `old` itself (an array; NumPy scalars and Python numbers
    are immutable and rebind instead)."""
    return isinstance(old, Traced) and em.is_array(old)


def update_in_place(em, old: Traced, new, what: str):
    """NumPy semantics of `x op= y`: the result is cast back to x's dtype (same_kind) and
    written into x itself, so every name bound to x (and every view of it) sees it."""
    if old.const is not None and old.view is None and not old.frozen and is_static(known(new)):
        contents = np.asarray(known(new))
        if contents.shape == old.shape and np.can_cast(contents.dtype, old.dtype, "same_kind"):
            em.set_known(old, contents.astype(old.dtype))
            return
    new = em.asarray(new)
    if new.shape != old.shape:
        raise ShapeError(f"{what}: non-broadcastable output operand with shape {old.shape} "
                         f"doesn't match the broadcast shape {new.shape}")
    if new.dtype != old.dtype:
        if not np.can_cast(new.dtype, old.dtype, "same_kind"):
            raise ShapeError(f"{what}: Cannot cast ufunc output from dtype('{new.dtype}') to "
                             f"dtype('{old.dtype}') with casting rule 'same_kind'")
        new = em.cast(new, old.dtype)
    old.value = new.value
    old.params = None if old.params is None or new.params is None else old.params | new.params


def _pos(node):
    return {k: getattr(node, k) for k in ("lineno", "col_offset", "end_lineno", "end_col_offset")}


def set_shape(fc, name: str, shape):
    """`x.shape = s`: NumPy gives the array object `x` names a new shape, without copying. Here
    `x` is rebound to a view of the same memory with that shape (writes through either reach the
    other, as in NumPy), which is NumPy's answer where no other name holds that object: checked,
    or refused with what to write instead."""
    em, obj = fc.em, fc.env.get(name)
    instead = f"write {name} = {name}.reshape(...) instead"
    if not isinstance(obj, Traced):
        raise NotSupportedError(f"{name}.shape = ... is supported on arrays only", hint=instead)
    if fc.parent is not None or len(fc.stack) > 1 or id(obj) in em.arguments:
        raise NotSupportedError(
            f"{name}.shape = ... changes the shape of the array for every name that holds it, including "
            "the caller's; pyjitc supports it on arrays the compiled function made itself", hint=instead)
    others = [k for k, v in fc.env.items() if k != name and isinstance(k, str)
              and any(item is obj for item in items_of(v, Traced))]
    if others:
        raise NotSupportedError(
            f"{name}.shape = ... would change the shape seen through {others[0]!r} too, which holds the same "
            "array", hint=instead)
    new = call_known(em, FUNCTIONS["numpy.reshape"], (obj, em.static(shape, "a new shape")))
    if new.view is None or new.view.base is not obj and new.view.base is not (obj.view and obj.view.base):
        raise NotSupportedError(
            f"{name}.shape = ... needs the array's memory to be contiguous (NumPy raises "
            "'Incompatible shape for in-place modification')", hint=instead)
    return new


def set_flat(em, a, value, shown: str):
    """`a.flat = v`: every element of a, in C order, from v (a scalar, or as many values as a has:
    NumPy repeats a shorter v, which is refused)."""
    if not isinstance(a, Traced):
        raise NotSupportedError(f"{shown} = ...: .flat of a Python value")
    size = int(np.prod(a.shape, dtype=np.int64))
    n = int(np.size(value)) if not isinstance(value, Traced) else int(np.prod(value.shape, dtype=np.int64))
    if n not in (1, size):
        raise NotSupportedError(f"{shown} = ... with {n} values for {size} elements (NumPy repeats them)",
                                hint="assign an array of the same size, or np.resize(v, a.size) first")
    flat = PROPERTIES["flat"](em, a)
    store(em, flat, Ellipsis, FUNCTIONS["numpy.ravel"](em, value) if n > 1 else value, shown)
