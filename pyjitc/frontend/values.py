"""values: what a value is while a function is compiled. A Traced is an array in the program (an
IR value, or contents known at compile time, with identity); a View ties a view to its base; the
Emitter is the state library functions receive; `known`/`call_known` run NumPy itself wherever
every array's contents are known. Every other frontend module imports this one; it imports none of
them."""
from __future__ import annotations

import contextvars
import types

import numpy as np

from ..errors import JitError, NotSupportedError, ShapeError
from ..program import view_of
from ..template import PY_SCALAR_DTYPES
from ..tree import is_namedtuple
from ..ir.graph import Builder, Value
from ..ir.dims import Dim, NeedsStaticShape
from ..ir.types import TensorType, as_dtype, is_bool, is_complex, is_int, real_dtype, SUPPORTED_DTYPES

# ---------------------------------------------------------------- arrays and views

PY_SCALARS = (bool, int, float, complex)


def is_py_scalar(x) -> bool:
    """A Python bool/int/float/complex (weak, NEP 50). np.float64 subclasses float but is strong."""
    return type(x) in PY_SCALARS


# Set while pyjitc.grad traces a function: composites that compute a float through its bits (no
# derivative) use the plain primitive instead (autodiff/api.py).
DIFFERENTIATING = contextvars.ContextVar("pyjitc_differentiating", default=False)

class Traced:
    """An array inside the function being compiled: an IR value plus what NumPy needs to know.
    `weak` is the Python type (int/float/bool) of a weakly typed value (a Python scalar argument),
    `params` the scalar arguments (or loop markers) it was computed from (None when it depends on
    array data), which is what lets the compiler make such a value static when it is needed.
    `view` is set when NumPy would return a view of another array: the value is then recomputed
    from its base when the base changes, and writes through the view go to the base.
    An array whose contents are known at compile time (np.zeros(n), a folded expression) is a
    Traced too, with one identity like any other array: `const` holds its contents for as long as
    its value is the constant it was made from (a write makes it a run-time value for every alias).
    `frozen` names why the array can't be written (a module-level constant), or is None.
    `ambiguous`: (markers, why) where which array this is depends on
    how many times a run-time loop ran or which way a run-time `if` went (a name the loop rebinds,
    holding an argument before it): a write asks for that loop to be unrolled or the condition to
    be made static. `either`: (ran, before) for such a name after a loop: `ran` a boolean value,
    whether the loop ran at all, `before` what the name held before it, which it still is where
    the loop ran zero times (returned, the caller then gets that object, as from NumPy).
    `alias`: for such a name, (before, its value as last read, refresh): where `before` has been
    written since through another name, a read gives refresh(this value, before's new value), the
    one or the other as `ran` says (`s = y[::-2]; if ...: y = f(y)`, then `s[...] = ...; y[2:]`
    read the old y: statement fuzzer seed 9101 program 5751).
    `picked`: a Picked, for an array chosen from a list or tuple of arrays by a run-time index
    (`dst = bufs[1 - cur]`): writes go to the item it is, reads see writes into the items."""
    __slots__ = ("_value", "weak", "params", "view", "_const", "_const_of", "frozen", "ambiguous", "either", "alias",
                 "length_of", "picked")

    def __init__(self, value: Value, weak=None, params=None, view=None):
        self._value = value
        self.weak = weak
        self.params = params
        self.view = view
        self._const = self._const_of = self.frozen = self.ambiguous = self.either = self.alias = self.picked = None
        self.length_of = None   # the selection (masked.Masked) whose run-time length this int is

    @property
    def const(self) -> np.ndarray | None:
        """The contents, where they are known at compile time (a read-only NumPy array)."""
        if self.view is not None:
            base = self.view.base.const
            if base is None or self.view.recipe is None:
                return None
            return view_of(self.view.recipe, base)
        return self._const if self._value is self._const_of and self._const_of is not None else None

    @property
    def value(self) -> Value:
        v = self.view
        if v is not None:
            base = v.base.value
            if base is not v.seen or (v.epoch != Builder.epoch and v.forward is not None):
                # the base changed, or this value may belong to a closed or forgotten block
                if base is not v.seen and v.forward is None and v.base.root._value is v.root_seen:
                    # the base was only made again (a view of a view, after a loop's pass), from
                    # an unchanged array: this value still holds (`for v in b[3:6, :3].ravel()`
                    # of an argument b was refused)
                    v.seen = base
                    return self._value
                if base is not v.seen and v.forward is None:
                    raise NotSupportedError(
                        "this array may or may not share memory with an array that was modified since "
                        "(NumPy decides by memory layout), so its value can't be known here",
                        hint="call .copy() when you make it")
                self._value = v.forward(base)
                v.seen, v.epoch = base, Builder.epoch
        elif self.alias is not None:
            before, seen, refresh = self.alias
            now = before.value
            if now is not seen:
                self._value = refresh(self._value, now)
                self.alias = (before, now, refresh)
        if self.picked is not None:
            self._value = self.picked.read(self._value)
        return self._value

    @value.setter
    def value(self, new: Value) -> None:
        """An in-place update: a view writes through to its base, as NumPy would."""
        v = self.view
        if self.root.frozen:
            raise NotSupportedError(f"writing into {self.root.frozen}, which compiled code can't change",
                                    hint="copy it into a local array first: a = np.array(CONST)")
        if self.root.ambiguous:
            markers, why = self.root.ambiguous
            error = NotSupportedError(why, hint="copy the array first (y = y.copy()), or write into a new array")
            if not markers:
                raise error
            raise NeedStatic(markers, reason=error)
        if v is not None:
            if v.backward is None:
                raise NotSupportedError(
                    "writing into this array: NumPy may or may not write through to the array it was "
                    "made from (it depends on memory layout)", hint="call .copy() first, or write into the base")
            if v.c_order is not None:
                v.c_order.add(id(v.base))
            v.base.value = v.backward(v.base.value, new)
            v.seen, v.epoch = v.base.value, Builder.epoch
        self._value = new
        if self.picked is not None:
            self.picked.write(new)

    @property
    def root(self) -> "Traced":
        t = self
        while t.view is not None:
            t = t.view.base
        return t

    @property
    def type(self) -> TensorType:
        # a view's value may be recomputed from its base, always to the same type: asking the
        # type must not emit that recomputation where the base can't be read (merging a view
        # returned from a branch read its shape after the branch closed: a dangling value)
        return (self._value if self._value is not None else self.value).type

    @property
    def shape(self):
        return self.type.shape

    @property
    def dtype(self):
        return self.type.dtype

    @property
    def ndim(self):
        return len(self.type.shape)

    def __repr__(self):
        return f"Traced({self.type}{', weak ' + self.weak.__name__ if self.weak else ''})"


class View:
    """How a view relates to its base: forward(base value) -> view value; backward(base value,
    new view value) -> new base value. None where NumPy's aliasing depends on memory layout."""
    __slots__ = ("base", "forward", "backward", "seen", "recipe", "epoch", "root_seen", "c_order")

    def __init__(self, base: Traced, forward, backward, recipe=None, c_order=None):
        self.base, self.forward, self.backward, self.recipe = base, forward, backward, recipe
        self.seen, self.epoch = base.value, Builder.epoch
        self.root_seen = base.root._value    # (the array all views of it come from, as it was)
        # a reshape of an argument that is a view only if the caller's array is C-contiguous: the
        # set that a write through it adds the argument to (Emitter.c_order_writes)
        self.c_order = c_order


def make_view(base: Traced, result: Traced, forward, backward, recipe=None, c_order=None) -> Traced:
    """Mark `result` (already computed from base) as a NumPy view of `base`.
    A view of a view whose aliasing NumPy decides by layout is opaque (no forward/backward).
    `recipe` says how NumPy makes the view from the base's array (see view_of): it keeps a view
    of a known array known, and a returned view of a returned array a view of it."""
    if base.view is not None and base.view.forward is None:
        forward = backward = recipe = None
    return Traced(result._value, result.weak, result.params, View(base, forward, backward, recipe, c_order))


class FlatIter(Traced):
    """`a.flat`: a 1-d view of a in C order, through which writes reach a; an item or slice read
    from it is a copy, as NumPy's flatiter gives (frontend/indexing.py)."""
    __slots__ = ()


def read_only_view(base: Traced, out: Traced, compute, what: str, recipe=None) -> Traced:
    """`out`, computed from `base` by `compute` (a Traced -> Traced function), as NumPy's read-only
    view of base (`np.diagonal`, `np.broadcast_to`, `sliding_window_view`): it follows later
    writes into base; a write into it is refused, as NumPy raises."""
    def refuse(_base, _new):
        raise NotSupportedError(f"writing into {what}, which NumPy makes a read-only view "
                                "(ValueError: assignment destination is read-only)", hint="call .copy() on it first")
    return make_view(base, out, lambda b: compute(Traced(b, base.weak, base.params)).value, refuse, recipe)


# ---------------------------------------------------------------- the emitter

class PickedSomewhere:
    """Traced.picked for a name that held an array picked by a run-time index (sequences.Picked)
    inside a loop or a run-time branch, after it: which of `items` it is is not known there, so a
    write through it, or a read after an item changed, is a located error (the read gave the array
    as it was, silently: `v = bufs[k]` under an `if`, then `b[0] = 7.0`, then `v * 1`)."""

    def __init__(self, items):
        self.items = [v for v in items if isinstance(v, Traced)]
        self.seen = [v.value for v in self.items]

    def read(self, mine):
        if any(v.value is not s for v, s in zip(self.items, self.seen)):
            raise NotSupportedError(self._why("an array it may be was changed since, so what it holds isn't known"),
                                    hint=self.HINT)
        return mine

    def write(self, new):
        raise NotSupportedError(self._why("where a write through it goes isn't known"), hint=self.HINT)

    @staticmethod
    def _why(what):
        return ("this name holds an array picked from a list by an index known only at run time inside a loop or "
                f"branch, and which array that is isn't known after it: {what}")

    HINT = "pick it again after the loop or branch (bufs[k]), or index with a compile-time value"


def unchanged_row(row, then) -> bool:
    """Whether a row a loop appended (Emitter.appended_rows: an array, or a tuple or list of its
    numbers) still holds the value(s) `then` it held."""
    if isinstance(row, Traced):
        return row.value is then
    return len(row) == len(then) and all(isinstance(v, Traced) and v.value is w for v, w in zip(row, then))


class NeedStatic(Exception):
    """Raised when a value computed from scalar arguments is needed at compile time: the
    compiler retries with those arguments static (their values join the cache key)."""

    def __init__(self, params, reason: JitError | None = None):
        super().__init__(sorted(params))
        self.params = frozenset(params)
        self.reason = reason   # what to report if the value can't be made static


class NeedPeel(NeedStatic):
    """Raised by a run-time `for` loop whose first pass changes a carried value's type (`acc =
    x[0]` of ints, then `acc = 0.5 * acc + x[i]`; `total = 0`, then `total = total + row`): the
    compiler retries with that pass run on its own before the loop, whose later passes then keep
    one type. Without it the loop was unrolled (4096 passes: 383 s, then an IREE failure)."""

    def __init__(self, marker: str, reason: JitError):
        super().__init__({marker}, reason)
        self.marker = marker


class RunTimeTruth(NotSupportedError):
    """The truth of a run-time value needed while compiling (a comprehension's `if` on array
    values): appends.comprehension makes such a comprehension a run-time loop instead."""


def container_changed(em, shown: str, kind: str, item: bool = False, container=None) -> None:
    """A Python list or dict (`kind`) changed by `shown` (`out[j] = ...`, `table.append(...)`):
    inside a loop that runs at run time, that loop is unrolled where its trip count can be known
    (the program is built once per iteration). In a branch on run-time values, an item's store
    (`item`) is merged with the other branch's (regions.Containers); a change of length there is
    a located refusal. A list or dict from outside the function (a module-level one, a default
    value) is never changed: Python would change it on every call, the compiled code once."""
    name = em.argument_containers.get(id(container))
    if name is not None:   # (Python changes the caller's object; the compiled function returns new values only)
        raise NotSupportedError(f"{shown}: changes the {kind} passed as {name}, which Python would change for the "
                                "caller too; a compiled function writes back arrays only",
                                hint=f"change a copy made inside the function ({kind}(...)) and return it")
    name = em.global_containers.get(id(container))
    if name is not None:
        raise NotSupportedError(f"{shown}: changes {name}, which Python would change on every call (the compiled "
                                "function only while compiling)", hint=f"make a copy inside the function, e.g. "
                                f"{'list' if kind == 'list' else 'dict'}(...), or pass it as an argument")
    if not (em.loop_depth or em.branch_depth) or (item and not em.loop_depth):
        return
    if container is not None and em.region_containers and id(container) not in em.region_containers[-1]:
        return   # made in this pass of the loop (or this branch): its own, as `ks = []; ks.append(k1)` in an RK step
    why = NotSupportedError(f"{shown}: changing a Python {kind} inside a loop or branch that runs at run time",
                            em.b.span, hint="use an array and index assignment instead")   # (at the change, not the loop)
    if em.loop_markers and (item or not em.branch_depth):
        raise NeedStatic(frozenset({em.loop_markers[-1]}), reason=why)
    raise why


def weak_number(em, v) -> "Traced":
    """A Python number known now (bool, int, float, complex) as a run-time value of its Python
    type (weak, NEP 50), as a Python number argument is held."""
    return Traced(em.asarray(v, PY_SCALAR_DTYPES[type(v)]).value, type(v), frozenset())


def join_params(sources):
    out = frozenset()
    for s in sources:
        if isinstance(s, Traced):
            if s.params is None:
                return None
            out |= s.params
    return out


class _Guards:
    """(kind, holder, name, value) of each global read, once; modules themselves are not guarded."""

    def __init__(self):
        self.items: dict = {}

    def add(self, guard) -> None:
        kind, holder, name, value = guard
        if isinstance(value, types.ModuleType):
            return
        self.items.setdefault((kind, id(holder), name), guard)


# no array has more elements than this: a size known only at run time (a symbolic dimension)
# is bounded by it (python_ints.py leaves index arithmetic on sizes unchecked)
SIZE_BOUND = 1 << 62


class Emitter:
    """What a library function receives: the IR builder and NumPy-aware helpers."""

    def __init__(self, builder: Builder):
        self.b = builder
        self.checks: list[str] = []   # run-time error messages; the error code is 1 + the index
        self.err: Traced | None = None  # int32[] error code, threaded through control flow like a variable
        self.affine: dict[int, tuple[int, int]] = {}  # value id -> (base value id, offset): i + 4 is i's + 4
        self.ranges: dict[int, tuple[int, int]] = {}  # value id -> (lo, hi): a loop variable's values
        # value id -> (lo, hi): bounds of Python ints known to python_ints.py only (a run-time
        # loop's counter, results of checked operators): never compared with run-time sizes
        self.int_bounds: dict[int, tuple[int, int]] = {}
        # IR value id -> (a bool: the loop that bound it ran zero times, the name): a name first
        # bound in a run-time loop, read after it (loops.py; each read checks, as Python's
        # UnboundLocalError)
        self.maybe_unbound: dict[int, tuple] = {}
        self.loop_depth = 0            # > 0 while interpreting a body that becomes a run-time region
        self.branch_depth = 0          # > 0 while interpreting a branch of a run-time if
        self.loop_markers: list[str] = []   # the run-time loops being interpreted, innermost last
        self.element_loops = False     # tracing.trace's element_loops
        self.step_masks: dict = {}     # reversed_slices.run_time_step_mask's masks, per slice and block
        self.c_order_writes: set = set()   # ids of arguments written through a reshape of them (View.c_order)
        self.branched_recursion: dict = {}   # function -> [recursive calls under its run-time ifs, branch depth]
        self.region_containers: list[set] = []   # ids of the lists/dicts reachable when each run-time
        # loop or branch being interpreted began, innermost last (a list made inside one is its own)
        self.call_function = None      # (fn, shown, args, kwargs) -> value: calls a callable the program holds
        self.arguments: set[int] = set()   # ids of the argument arrays (0-d ones update in place)
        self.zero_d_arrays: set[int] = set()   # ids of 0-d values that are arrays, not NumPy scalars
        self.guards = _Guards()            # globals and module attributes read while compiling
        self.force_unroll: dict = {}   # loop markers whose loops must run at compile time -> why
        self.peel_first: set = set()   # markers of run-time for loops whose first pass runs before them (NeedPeel)
        self.peelable: set = set()     # markers of the run-time for loops that can do that (a known count >= 2)
        self.unrolled_copies = 1       # how many copies the compile-time loops around the current point make
        self.fast_trig = False         # vectorised float64 sin/cos, with a retry through libm (see _sincos)
        self.list_growth = 0           # appends.py: lists grown in while loops get ROOM_GROWTH ** this times more room
        self.differentiable = DIFFERENTIATING.get()   # tracing for autodiff: no bit tricks (see accurate.power)
        self.held: list[Traced] = []   # arrays made by em.array (kept alive: their ids are in the sets above)
        # the variables of the functions around a nested one being inlined (a closure may write
        # their arrays: a loop in it carries them, regions.State)
        self.enclosing_envs: list[dict] = []
        self.append_plans: dict = {}     # appends.py: (marker, line, col) -> (shape, dtype, weak)
        self.append_mixed: dict = {}     # appends.py: plans whose first pass appends Python numbers (their type), later ones NumPy's
        self.append_rows: dict = {}      # appends.py: plans of appends in nested loops: the rows of all their passes
        self.append_loops: dict = {}     # marker -> (loop node, count, counter name) while its body is built
        self.append_targets: dict = {}   # append key -> the Python list its rows go into
        self.appended_rows: dict = {}    # id(row) -> (row, buffer, k, its value then): row k a loop appended
        #                                  (shapes.stack of all its rows in order takes the buffer back)
        self.globals: dict[int, tuple] = {}   # id(global array) -> (it, its frozen Traced, block, epoch made)
        self.global_containers: dict[int, str] = {}   # id(a list or dict from outside the function) -> its name
        self.argument_containers: dict[int, str] = {}   # id(a list or dict passed as an argument) -> how it was passed

    def is_array(self, t: "Traced") -> bool:
        """Whether NumPy holds `t` as an ndarray (not a NumPy scalar or a Python number): it has
        axes, or is a 0-d array (an argument, a view, np.array(3.0), np.asarray(x.sum()))."""
        return not t.weak and bool(t.ndim or t.view is not None or id(t) in self.zero_d_arrays
                                   or id(t.root) in self.arguments)

    def zero_d_array(self, t: "Traced") -> "Traced":
        """Mark a 0-d result as an array where NumPy returns a 0-d array, not a NumPy scalar."""
        if t.ndim == 0:
            self.held.append(t)
            self.zero_d_arrays.add(id(t))
        return t

    def guard_list(self) -> list:
        return list(self.guards.items.values())

    def check(self, bad: "Traced", message: str, located=True) -> None:
        """A condition under which NumPy would raise: the compiled function reports the first one
        that happened (with this source location) instead of returning a wrong value."""
        where = f"{self.b.span}: " if self.b.span and located else ""
        self.checks.append(where + message)
        code = self.constant(np.int32(len(self.checks)))
        zero = self.constant(np.int32(0))
        first = self.emit("and", self.cast(bad, np.bool_), self.emit("compare", self.err, zero, direction="EQ"))
        self.err.value = self.emit("select", first, code, self.err).value

    def range_of(self, x) -> tuple[int, int] | None:
        """(lo, hi), both included, if the integer x is known to lie in them: a compile-time
        integer, a `range` loop's variable with bounds known at compile time, or one of those
        plus a constant (i - 1). Lets indexing drop bounds checks that can never fire."""
        if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
            return int(x), int(x)
        found = self.offset_of(x)
        if found is not None and isinstance(found[0], tuple) and found[0] not in self.ranges \
                and found[0][1] in self.ranges:   # ("scaled", i, k): i's range times k
            lo, hi = (v * found[0][2] for v in self.ranges[found[0][1]])
            return min(lo, hi) + found[1], max(lo, hi) + found[1]
        if found is None or found[0] not in self.ranges:
            return None
        lo, hi = self.ranges[found[0]]
        return lo + found[1], hi + found[1]

    def offset_of(self, x) -> tuple[int, int] | None:
        """(base, offset) if x is a run-time integer known to be base + a constant."""
        if isinstance(x, Traced) and x.ndim == 0 and (x.weak is int or is_int(x.dtype)):
            return self.affine.get(x.value.id, (x.value.id, 0))
        return None

    # -- values
    def wrap(self, value: Value, *sources, weak=None) -> Traced:
        return Traced(value, weak, join_params(sources))

    def emit(self, name, *operands: Traced, sources=None, weak=None, **attrs) -> Traced:
        out = self.b.emit(name, *[o.value for o in operands], **attrs)
        return self.wrap(out, *(operands if sources is None else sources), weak=weak)

    def emit_multi(self, name, *operands: Traced, **attrs) -> tuple[Traced, ...]:
        outs = self.b.emit(name, *[o.value for o in operands], **attrs)
        return tuple(self.wrap(v, *operands) for v in outs)

    def producer(self, value: Value, look_back: int | None = None):
        """The op of the current block (its last `look_back` ops, or all) that computed `value`, or None."""
        ops = self.b.blocks[-1].ops
        for op in reversed(ops if look_back is None else ops[-look_back:]):
            if any(r is value for r in op.results):
                return op
        return None

    def constant(self, value) -> Traced:
        arr = np.asarray(value)
        as_dtype(arr.dtype)
        return Traced(self.b.emit("constant", value=arr), None, frozenset())

    def set_known(self, t: "Traced", contents: np.ndarray) -> None:
        """An in-place update of `t` (not a view) whose new contents are known at compile time."""
        known = np.array(contents, dtype=t.dtype, copy=True)
        known.flags.writeable = False
        t.value = self.b.emit("constant", value=known)
        t._const, t._const_of = known, t._value

    def array(self, contents: np.ndarray, frozen: str | None = None) -> Traced:
        """A NumPy array the program holds (made by np.zeros, folded, or a global read): a value
        with identity whose contents are known until something writes into it."""
        if contents.dtype == object or contents.dtype not in SUPPORTED_DTYPES:
            raise NotSupportedError(f"can't use an array of dtype {contents.dtype} in compiled code")
        known = contents.view()
        known.flags.writeable = False
        t = Traced(self.b.emit("constant", value=known), None, frozenset())
        t._const, t._const_of, t.frozen = known, t._value, frozen
        self.held.append(t)
        if known.ndim == 0:
            self.zero_d_arrays.add(id(t))
        return t

    def static(self, x, what: str):
        """The compile-time value of `x`; `what` names the use, for the error message."""
        if isinstance(x, Traced):
            if x.const is not None:
                return x.const
            if x.params:
                raise NeedStatic(x.params, reason=JitError(
                    f"{what} must be known at compile time, but it changes at run time", self.b.span))
            raise JitError(f"{what} must be known at compile time, but it depends on array values")
        if isinstance(x, (tuple, list)):
            return type(x)(self.static(v, what) for v in x)
        if isinstance(x, slice):
            return slice(*(self.static(v, what) for v in (x.start, x.stop, x.step)))
        return x

    def dtype_of(self, x):
        """What NumPy's type resolution sees: a dtype, or a Python type for weak scalars
        (Python bools are simply bool: it is the lowest kind, so it never upcasts)."""
        if isinstance(x, Traced):
            return x.weak if x.weak in (int, float, complex) else x.dtype
        if is_py_scalar(x):
            return type(x) if type(x) in (int, float, complex) else np.dtype(np.bool_)
        if isinstance(x, Dim):
            return int
        return np.asarray(x).dtype

    def result_type(self, *xs):
        """np.result_type as NumPy sees these values: weak (Python) scalars stay weak (NEP 50)."""
        seen = [d(0) if isinstance(d, type) else d for d in (self.dtype_of(x) for x in xs)]
        try:
            return np.result_type(*seen)
        except TypeError as e:
            raise ShapeError(f"result_type: {e}") from None

    def shape_of(self, x):
        return x.shape if isinstance(x, Traced) else np.shape(x)

    def asarray(self, x, dtype=None) -> Traced:
        """Lift a static value to an IR constant (Python scalars take `dtype`, checked for range)."""
        if isinstance(x, Traced):
            return x if dtype is None or x.dtype == dtype else self.cast(x, dtype)
        if isinstance(x, Dim):   # a symbolic dimension's value in this call: a Python int
            t = self.dim_value(x)
            return t if dtype is None else self.cast(t, dtype)
        if is_py_scalar(x) and dtype is not None:
            dt = np.dtype(dtype)
            if is_int(dt) and not isinstance(x, bool) and isinstance(x, int):
                info = np.iinfo(dt)
                if not info.min <= x <= info.max:
                    hint = None if dt != np.int64 or x < 0 else (
                        f"compiled code holds Python ints in int64; for 64-bit unsigned arithmetic (a hash's "
                        f"constants) write np.uint64({x}), as NumPy code does")
                    raise ShapeError(f"OverflowError: Python integer {x} out of bounds for {dt}", hint=hint)
            if is_int(dt) and isinstance(x, float):
                raise ShapeError(f"can't use the Python float {x} as {dt}")
            if isinstance(x, complex) and dt.kind != "c":
                raise ShapeError(f"can't use the Python complex {x} as {dt}")
            return self.constant(np.asarray(x, dtype=dt))
        if isinstance(x, (list, tuple)) and _SEQUENCE_TO_ARRAY and next(items_of(x, Traced), None) is not None:
            t = _SEQUENCE_TO_ARRAY[0](self, x)   # np.searchsorted(a, [lo, hi]) of run-time numbers
            return t if dtype is None else self.cast(t, dtype)
        arr = np.asarray(x)
        if arr.dtype == object or arr.dtype not in SUPPORTED_DTYPES:
            raise NotSupportedError(f"can't use a value of type {type(x).__name__} (dtype {arr.dtype}) in compiled code")
        t = self.constant(arr)
        return t if dtype is None else self.cast(t, dtype)

    def dim_value(self, d: Dim) -> Traced:
        """A symbolic dimension as the run-time Python int it is (weakly typed)."""
        t = Traced(self.b.emit("dim_size", dim=d), int, frozenset())
        self.int_bounds[t.value.id] = (-SIZE_BOUND, SIZE_BOUND)   # an array's size (python_ints.py)
        return t

    def cast(self, x: Traced, dtype) -> Traced:
        dtype = np.dtype(dtype)
        if x.dtype == dtype:
            return Traced(x.value, None, x.params) if x.weak else x
        if is_complex(x.dtype):   # NumPy's casts: the real part (a ComplexWarning), bool of either part
            re, im = self.emit("real", x), self.emit("imag", x)
            if is_complex(dtype):
                return self.emit("complex", self.cast(re, real_dtype(dtype)), self.cast(im, real_dtype(dtype)))
            if is_bool(dtype):
                return self.emit("or", self.cast(re, dtype), self.cast(im, dtype))
            return self.cast(re, dtype)
        if is_complex(dtype):
            part = real_dtype(dtype)
            return self.emit("complex", self.cast(x, part), self.full(0, part, x.shape), sources=(x,))
        if x.dtype.kind == "f" and dtype.kind in "iu" and dtype not in (np.uint32, np.uint64):
            return self._float_to_int(x, dtype)
        return self.emit("convert", x, dtype=dtype)

    def _float_to_int(self, x: "Traced", dtype) -> "Traced":
        """NumPy's float-to-integer cast on x86, written out: C leaves values outside the target's
        range undefined, and IREE's vector code saturated them where NumPy's wraps, mixed within
        one array by position (`(img * 1.5).astype(np.uint8)` of 200: 255 beside NumPy's 44; probe
        AH). NumPy truncates to int32 (int64 for int64), where NaN, infinities and values out of
        that range become its lowest value, then keeps the low bits of narrower types."""
        wide = np.dtype(np.int64 if dtype == np.int64 else np.int32)
        limit = float(2 ** (8 * wide.itemsize - 1))
        bound = lambda v: self.full(v, x.dtype, x.shape)
        ok = self.emit("and", self.emit("compare", x, bound(-limit), direction="GE"),
                       self.emit("compare", x, bound(limit), direction="LT"))
        y = self.emit("convert", self.emit("select", ok, x, bound(0)), dtype=wide)
        y = self.emit("select", ok, y, self.full(np.iinfo(wide).min, wide, x.shape), sources=(x,))
        return y if wide == dtype else self.emit("convert", y, dtype=dtype)

    def broadcast(self, x: Traced, shape) -> Traced:
        shape = tuple(shape)
        if x.shape == shape:
            return x
        dims = tuple(range(len(shape) - x.ndim, len(shape)))
        return self.emit("broadcast_in_dim", x, shape=shape, dims=dims, weak=x.weak)

    def operand(self, x, dtype, shape) -> Traced:
        return self.broadcast(self.asarray(x, dtype), shape)

    def full(self, value, dtype, shape) -> Traced:
        if isinstance(value, Dim):
            dtype = np.dtype(dtype)
            if dtype.kind in "fc":
                # counted on the device, a sum of ones: IREE 3.13 converted the size to float64 on
                # the host and failed ("failed to legalize arith.sitofp ... (i32) -> f64")
                ones = self.full(1, dtype, (value,))
                return self.broadcast(self.emit("reduce", ones, kind="add", axes=(0,)), shape)
            return self.cast(self.broadcast(self.dim_value(value), shape), dtype)
        return self.broadcast(self.constant(np.asarray(value, dtype=dtype)), shape)


# ---------------------------------------------------------------- values known at compile time

def is_static(*xs) -> bool:
    """Whether the values are known at compile time: no traced array, also inside lists and
    tuples (`np.mean([x.sum(), x.max()])` is not NumPy's to compute while compiling)."""
    return not any(isinstance(x, Traced) or isinstance(x, (list, tuple)) and next(items_of(x, Traced), None) is not None
                   for x in xs)


def fold(fn, *args, **kwargs):
    """Run NumPy itself on compile-time values: exact by construction."""
    if next(items_of((args, kwargs), Dim), None) is not None:   # a size known only at run time
        name = getattr(fn, "__name__", fn)
        if isinstance(fn, np.ufunc) or (getattr(fn, "__module__", None) or "").startswith("numpy"):
            raise NeedsStaticShape(f"np.{name} of a size known only at run time computes an array of that "
                                   "size while compiling")
        try:
            return fn(*args, **kwargs)    # Python's arithmetic and comparisons on sizes (ir/dims.py)
        except (TypeError, ValueError) as e:
            raise NeedsStaticShape(f"{name} of a size known only at run time: {e}") from None
    with np.errstate(all="ignore"):
        try:
            return fn(*args, **kwargs)
        except (TypeError, ValueError, ArithmeticError, IndexError, KeyError) as e:
            err = ShapeError(f"{getattr(fn, '__name__', fn)}: {e}")
            err.python = e   # what Python raised (a try/except in the program may catch it)
            raise err from None


def _known_arrays(x, out: list) -> bool:
    """Collect the Traced values inside x (tuples, lists, dicts, slices); False if one of them
    has contents unknown at compile time."""
    if isinstance(x, Traced):
        out.append(x)
        return x.const is not None
    if isinstance(x, (tuple, list)):
        return all(_known_arrays(v, out) for v in x)
    if isinstance(x, dict):
        return all(_known_arrays(v, out) for v in x.values())
    if isinstance(x, slice):
        return all(_known_arrays(v, out) for v in (x.start, x.stop, x.step))
    return True


def contains_unknown(x) -> bool:
    return not _known_arrays(x, [])


def known(x):
    """x with every array whose contents are known replaced by those contents (a NumPy array)."""
    if isinstance(x, Traced):
        c = x.const
        return x if c is None else c
    if isinstance(x, tuple):
        return tuple(known(v) for v in x)
    if isinstance(x, list):
        return [known(v) for v in x]
    if isinstance(x, dict):
        return {k: known(v) for k, v in x.items()}
    if isinstance(x, slice):
        return slice(known(x.start), known(x.stop), known(x.step))
    return x


# How a list holding run-time numbers becomes an array: np.asarray's rule, which the NumPy layer
# (frontend/numpy/creation.py) gives here; values.py stays below it.
_SEQUENCE_TO_ARRAY: list = []


def set_sequence_to_array(fn) -> None:
    _SEQUENCE_TO_ARRAY[:] = [fn]


def items_of(x, kind):
    """The values of type `kind` inside x (through tuples, lists and dicts)."""
    if isinstance(x, kind):
        yield x
    elif isinstance(x, (tuple, list)):
        for v in x:
            yield from items_of(v, kind)
    elif isinstance(x, dict):
        for v in x.values():
            yield from items_of(v, kind)


def folding(np_fn):
    """Decorate an implementation so that NumPy itself (np_fn, through fold) computes the call when
    no argument holds a traced array: exact by construction, and NumPy's own errors."""
    def deco(impl):
        def wrapper(em, *args, **kwargs):
            if next(items_of((args, kwargs), (Traced, Dim)), None) is None:
                return fold(np_fn, *args, **kwargs)
            return impl(em, *args, **kwargs)
        wrapper.__wrapped__ = impl   # inspect.signature binds against the implementation's parameters
        wrapper.__name__, wrapper.__qualname__, wrapper.__module__ = impl.__name__, impl.__qualname__, impl.__module__
        wrapper.__doc__ = impl.__doc__
        return wrapper
    return deco


def hold(em: Emitter, x):
    """Every NumPy array in a result becomes an array the program holds (identity, known contents).
    A list, dict or tuple without NumPy arrays in it is the object itself: `dp[1][0] = 5` writes
    into the list dp holds (a copy lost the write)."""
    if isinstance(x, np.ndarray):
        return em.array(x)
    if isinstance(x, (tuple, list)):
        items = [hold(em, v) for v in x]
        if all(a is b for a, b in zip(items, x)):
            return x
        if isinstance(x, list):
            return items
        return type(x)(*items) if is_namedtuple(type(x)) else tuple(items)   # (NumPy's named tuples kept)
    if isinstance(x, dict):
        items = {k: hold(em, v) for k, v in x.items()}
        return x if all(items[k] is v for k, v in x.items()) else items
    return x


def call_known(em: Emitter, fn, args, kwargs=None):
    """fn(em, *args, **kwargs) as NumPy runs it on arrays with identity. Where every array
    argument's contents are known, NumPy computes the result now (exact by construction), unless
    that result shares memory with an argument (a view, or the argument itself) or is not all
    known: then the call runs on the arrays themselves, so that a view writes through to them and
    sees their later writes. Arrays in the result are held (see hold)."""
    kwargs = kwargs or {}
    cells: list[Traced] = []
    if _known_arrays(args, cells) and _known_arrays(kwargs, cells) and cells:
        consts = [c.const for c in cells]
        checkpoint, n_checks, err = em.b.checkpoint(), len(em.checks), em.err and em.err.value
        try:
            out = fn(em, *known(args), **known(kwargs))
        except (JitError, NeedStatic):
            out = _FAILED
        # a result holding traced arrays was computed from the contents lifted to constants: a
        # view of one (np.swapaxes(a, 0, 1), np.split(a, 2)) would not see later writes into a
        if out is not _FAILED and next(items_of(out, Traced), None) is None:
            made = list(items_of(out, np.ndarray))
            if not any(np.may_share_memory(m, c) for m in made for c in consts):
                return hold(em, out)
        em.b.rollback(checkpoint)
        del em.checks[n_checks:]
        if em.err is not None:
            em.err.value = err
    return hold(em, fn(em, *args, **kwargs))


_FAILED = object()
