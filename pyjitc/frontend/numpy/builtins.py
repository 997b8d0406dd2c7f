"""builtins: Python's builtins in compiled code (len, abs and divmod are registered with the NumPy
functions they are; range, enumerate and zip make the sequences loops run over), and the `math`
module's functions on run-time numbers (MATH; on compile-time values Python's math computes them)."""
from __future__ import annotations

import numpy as np

from ...errors import ForbiddenError, NotSupportedError, ShapeError
from ..registry import BUILTINS, FUNCTIONS, register
from ..sequences import Seq, enumerate_, ndenumerate, ndindex, range_, zip_
from ..values import NeedStatic, Traced, fold, is_static, join_params, known, weak_number
from .elementwise import cmp
from .shapes import reshape
from ..operators import apply_operator

def _static_builtin(fn, what):
    def impl(em, *args, **kwargs):
        if not is_static(*args, *kwargs.values()):
            for x in (*args, *kwargs.values()):
                if isinstance(x, Traced) and x.params:
                    raise NeedStatic(x.params)
            raise ForbiddenError(f"{fn.__name__}() on an array needs its value at compile time, "
                                 f"but it is only known when the compiled code runs", hint=what)
        return fold(fn, *args, **kwargs)
    return impl


for _fn, _hint in ((callable, ""), (hash, ""), (issubclass, ""), (repr, ""), (str, "")):
    register(builtin=_fn.__name__)(_static_builtin(_fn, _hint))


@register(builtin="pow", note="pow(a, b) is a ** b; pow(a, b, m) needs compile-time values")
def pow_(em, base, exp, mod=None):
    if mod is None:
        return apply_operator(em, "Pow", base, exp)
    return _static_builtin(pow, "write (a ** b) % m")(em, base, exp, mod)


@register(builtin="reversed", note="of an array: its rows (views), last first; of a list or tuple: its items")
def reversed_(em, seq):
    if isinstance(seq, Traced):
        return list(reversed(_sequence(em, seq, list)))
    if isinstance(seq, (list, tuple)):
        return list(reversed(seq))
    return _static_builtin(reversed, "use x[::-1] for arrays")(em, seq)


@register(builtin="sorted", note="of numbers known only at run time: those of one type (sorted as np.sort "
                                 "does, NaN last); key= needs compile-time items")
def sorted_(em, iterable, key=None, reverse=False):
    reverse = em.static(reverse, "sorted: reverse")
    if key is not None:
        return _sorted_by_key(em, _sequence(em, iterable, list), key, reverse)
    items = iterable if isinstance(iterable, (list, tuple)) else None
    if items is not None and any(isinstance(v, Traced) for v in items):
        weak = {v.weak for v in items if isinstance(v, Traced)}
        if weak in ({int}, {float}):   # Python numbers known now among run-time ones of their type
            items = [weak_number(em, v) if type(v) in weak else v for v in items]
        kinds = {(v.dtype, v.weak) if isinstance(v, Traced) and v.ndim == 0 else None for v in items}
        if len(kinds) != 1 or None in kinds:
            raise NotSupportedError("sorted() of numbers known only at run time: they must all be numbers of one type",
                                    hint="use np.sort(np.array(items))")
        weak = next(iter(kinds))[1]
        order = FUNCTIONS["numpy.sort"](em, FUNCTIONS["numpy.stack"](em, list(items)))
        out = [Traced(FUNCTIONS["numpy.take"](em, order, i).value, weak, order.params) for i in range(len(items))]
        return out[::-1] if reverse else out
    if isinstance(iterable, Traced):
        return sorted_(em, _sequence(em, iterable, list), key, reverse) if iterable.ndim == 1 and key is None else \
            _static_builtin(sorted, "use np.sort for arrays")(em, iterable, key=key, reverse=reverse)
    return _static_builtin(sorted, "use np.sort for arrays")(em, iterable, key=key, reverse=reverse)


def _sorted_by_key(em, items: list, key, reverse: bool) -> list:
    """sorted(items, key=f): f called on each item now (a lambda or helper is compiled like any
    call); the keys must be known at compile time, and Python's stable sort orders the items."""
    shown = getattr(key, "__name__", "the key function")
    keys = [em.call_function(key, shown, [item], {}) for item in items]
    if not is_static(*keys):
        raise NotSupportedError("sorted() / list.sort() with keys known only at run time",
                                hint="sort positions instead: order = np.argsort(np.array([f(v) for v in items]))")
    keys = [known(k) for k in keys]
    try:
        order = sorted(range(len(items)), key=keys.__getitem__, reverse=reverse)
    except (TypeError, ValueError) as e:
        raise ShapeError(f"{type(e).__name__}: {e}") from None
    return [items[i] for i in order]


def _number(em, x, what):
    """The one element of a size-1 array known only at run time, as a 0-d value."""
    if x.type.size != 1:
        raise ShapeError(f"TypeError: only length-1 arrays can be converted to Python scalars ({what})")
    if np.dtype(x.dtype).kind == "c":
        raise NotSupportedError(f"{what} of a complex value", hint="take .real first")
    return reshape(em, x, ()) if x.ndim else x


@register(builtin="float")
def float_(em, x=0.0):
    """float(x): of a run-time number, a Python float (weak float64) known at run time."""
    if not isinstance(x, Traced):
        return fold(float, x)
    out = em.cast(_number(em, x, "float()"), np.float64)
    return Traced(out.value, float, out.params)


@register(builtin="complex", complex_ok=True)
def complex_(em, real=0.0, imag=0.0):
    """complex(re, im): of run-time real numbers, a Python complex (weak complex128) known at run
    time; complex(z) of a complex value is z as a Python complex."""
    if is_static(real, imag):
        return fold(complex, real, imag)
    parts = [em.asarray(v) if not isinstance(v, Traced) else v for v in (real, imag)]
    if any(np.dtype(p.dtype).kind == "c" for p in parts):
        if is_static(imag) and imag == 0 and parts[0].type.size == 1:
            z = em.cast(reshape(em, parts[0], ()) if parts[0].ndim else parts[0], np.complex128)
            return Traced(z.value, complex, z.params)
        raise NotSupportedError("complex(a, b) with a complex part", hint="write a + 1j * b")
    re, im = (em.cast(_number(em, v, "complex()"), np.float64) for v in parts)
    out = em.emit("complex", re, im)
    return Traced(out.value, complex, join_params(parts))


@register(builtin="bool")
def bool_(em, x=False):
    """bool(x): of a run-time number, a Python bool known at run time."""
    if not isinstance(x, Traced):
        return fold(bool, x)
    v = _number(em, x, "bool()")
    out = em.cast(v, np.bool_)
    return Traced(out.value, bool, out.params)


@register(method="item", note="a Python number of the array's kind (known at run time where the array is)")
def item(em, x, *index):
    """x.item() / x.item(i): the element as a Python bool, int or float (complex: refused)."""
    if not isinstance(x, Traced):
        return fold(lambda v, *i: np.asarray(v).item(*i), x, *index)
    if index:
        flat = reshape(em, x, -1)
        i = index[0] if len(index) == 1 else int(np.ravel_multi_index(em.static(index, "item: the index"), x.shape))
        x = FUNCTIONS["numpy.take"](em, flat, i)
    kind = np.dtype(x.dtype).kind
    return bool_(em, x) if kind == "b" else int_(em, x) if kind in "iu" else float_(em, x)


@register(builtin="int")
def int_(em, x=0, *base):
    """int(x): of a run-time number, truncated toward zero to a Python int (weak int64); NaN and
    infinities raise as Python does (values beyond int64 raise OverflowError)."""
    if not isinstance(x, Traced) or base:
        if not is_static(x, *base):
            raise NotSupportedError("int(x, base) of a run-time value")
        return fold(int, x, *base)
    v = _number(em, x, "int()")
    if np.dtype(v.dtype).kind == "f":
        em.check(em.emit("compare", v, v, direction="NE"), "ValueError: cannot convert float NaN to integer")
        big = em.emit("compare", em.emit("abs", v), em.full(2.0 ** 63, v.dtype, ()), direction="GE")
        em.check(em.emit("and", big, em.emit("compare", v, v, direction="EQ")),
                 "OverflowError: cannot convert float infinity (or a value beyond int64) to integer")
        v = FUNCTIONS["numpy.trunc"](em, v)
    out = em.cast(v, np.int64)
    return Traced(out.value, int, out.params)


@register(builtin="round")
def round_(em, x, ndigits=None):
    """round(x): Python's (half to even, as np.round); of a run-time number without ndigits, a
    Python int; with ndigits, the number's own type."""
    if not isinstance(x, Traced):
        return fold(round, x, *(() if ndigits is None else (ndigits,)))
    if x.ndim:   # (NumPy arrays have no __round__; their scalars do)
        raise ShapeError("TypeError: type numpy.ndarray doesn't define __round__ method",
                         hint="use np.round(x, ndigits) for arrays")
    if ndigits is not None and x.weak is float and x.ndim == 0:
        return _round_python_float(em, x, em.static(ndigits, "round(): ndigits"))
    if ndigits is not None:   # (a Python number stays one: round(a, 2) of a float is a float)
        out = FUNCTIONS["numpy.round"](em, x, ndigits)
        return Traced(out.value, x.weak, out.params) if x.weak in (int, float) and x.ndim == 0 else out
    v = _number(em, x, "round()")
    return int_(em, FUNCTIONS["numpy.round"](em, v)) if np.dtype(v.dtype).kind == "f" else int_(em, v)


def _round_python_float(em, x, n: int):
    """round(x, n) of a Python float: the float nearest to x's exact binary value rounded to n
    decimals, ties to even (Python's dtoa: round(0.35, 1) is 0.3, as 0.35 is 0.34999...; NumPy's
    x * 10**n, rint, / 10**n gave 0.4). x * 10**n is taken exactly as p + e (|n| <= 22: 10**|n|
    is exact), or x / 10**-n as q with the sign of its remainder; the nearest integer to that
    exact value is decided by p's fraction and, at a half, by e's sign; then one correctly
    rounded division or product. Where p reaches 2**52 (or x is not finite) x is already that."""
    from .accurate import _two_prod
    if not isinstance(n, (int, np.integer)) or abs(n) > 22:
        raise NotSupportedError(f"round(x, {n!r}) of a run-time float: ndigits must be an int within -22..22")
    op, c = em.emit, (lambda v: em.constant(np.float64(v)))
    x = Traced(em.cast(x, np.float64).value, None, x.params)
    s = c(10.0 ** abs(n))
    if n >= 0:
        p, e = _two_prod(em, x, s)
    else:
        p = op("div", x, s)
        pp, pe = _two_prod(em, p, s)
        e = op("sub", op("sub", x, pp), pe)     # x - p * s, exactly: its sign is the exact value's side of p
    r0 = FUNCTIONS["numpy.floor"](em, p)
    t = op("sub", op("sub", p, r0), c(0.5))
    zero = c(0.0)
    odd = op("compare", op("sub", r0, op("mul", FUNCTIONS["numpy.floor"](em, op("mul", r0, c(0.5))), c(2.0))), c(1.0),
             direction="EQ")
    tie = op("compare", t, zero, direction="EQ")
    up = op("or", op("compare", t, zero, direction="GT"),
            op("and", tie, op("or", op("compare", e, zero, direction="GT"),
                              op("and", op("compare", e, zero, direction="EQ"), odd))))
    r = op("select", up, op("add", r0, c(1.0)), r0)
    scaled = op("div", r, s) if n >= 0 else op("mul", r, s)
    out = FUNCTIONS["numpy.copysign"](em, scaled, x)     # round(-0.04, 1) is -0.0
    small = op("compare", FUNCTIONS["numpy.absolute"](em, p), c(2.0 ** 52), direction="LT")   # (False for NaN, inf)
    out = op("select", small, out, x)
    return Traced(out.value, float, out.params)


@register(builtin="dict", note="keys known at compile time; from pairs (dict(zip(names, x))), a dict or keywords")
def dict_(em, *args, **kwargs):
    if len(args) > 1:
        raise ShapeError(f"TypeError: dict expected at most 1 argument, got {len(args)}")
    out = {}
    if args:
        source = args[0]
        pairs = source.items() if isinstance(source, dict) else _sequence(em, source, list)
        for pair in pairs:
            pair = _sequence(em, pair, tuple) if not isinstance(pair, tuple) else pair
            if len(pair) != 2:
                raise ShapeError(f"ValueError: dictionary update sequence element has length {len(pair)}; 2 is required")
            key, value = pair
            if not is_static(key):
                raise NotSupportedError("dict(): a key known only at run time",
                                        hint="use keys known at compile time (names, numbers)")
            out[key] = value
    out.update(kwargs)
    return out


@register(method="tolist", complex_ok=True, note="nested lists of Python numbers, one per element (at most 4096)")
def tolist(em, a):
    if is_static(a):
        return np.asarray(a).tolist()
    size = int(np.prod(a.shape, dtype=np.int64))
    if size > 4096:
        raise NotSupportedError(f".tolist() of {size} elements: each becomes a value of the program",
                                hint="iterate over the array, or return it and call .tolist() outside")
    kind = np.dtype(a.dtype).kind
    convert = BUILTINS["bool" if kind == "b" else "int" if kind in "iu" else "complex" if kind == "c" else "float"]
    from ..indexing import getitem

    def build(x):
        return convert(em, x) if x.ndim == 0 else [build(getitem(em, x, i)) for i in range(x.shape[0])]
    return build(a)


@register(builtin="tuple")
def tuple_(em, x=()):
    return _sequence(em, x, tuple)


@register(builtin="list")
def list_(em, x=()):
    return _sequence(em, x, list)


def _sequence(em, x, kind):
    """tuple(x) / list(x): of a container, its items; of an array with a known first axis, its rows."""
    if isinstance(x, Traced):
        if x.ndim == 0:
            raise ShapeError("TypeError: iteration over a 0-d array")
        return kind(FUNCTIONS["numpy.take"](em, x, i, axis=0) for i in range(x.shape[0]))
    if isinstance(x, Seq):   # range(n), np.ndindex(...): their items, with a compile-time length
        return kind(x.materialize(em))
    try:
        return kind(x)
    except TypeError as e:
        raise ShapeError(f"TypeError: {e}") from None


@register(builtin="slice")
def slice_(em, *args):
    """slice(stop) / slice(start, stop[, step]): bounds may be run-time integers, as in x[a:b]."""
    return slice(*args)


@register(builtin="map")
def map_(em, fn, *iterables):
    """map(f, a, b, ...): f called on each set of items now (a list, which every use of an
    iterator in compiled code can read the same way)."""
    if not iterables:
        raise ShapeError("TypeError: map() must have at least two arguments.")
    columns = [_sequence(em, it, list) for it in iterables]
    shown = getattr(fn, "__name__", "the function")
    return [em.call_function(fn, shown, list(items), {}) for items in zip(*columns)]


@register(builtin="sum")
def sum_(em, iterable, start=0):
    """sum(items, start): `start + item + item ...` with Python's (and NEP 50's) promotion."""
    items = _sequence(em, iterable, list)
    total = start
    for item in items:
        total = apply_operator(em, "Add", total, item)
    return total


def _truth_fold(em, iterable, combine, empty):
    items = _sequence(em, iterable, list)
    if is_static(*items):
        return fold(any if empty is False else all, items)
    out = empty
    for item in items:
        if isinstance(item, Traced) and item.type.size != 1:
            raise ShapeError("ValueError: The truth value of an array with more than one element is ambiguous")
        t = em.cast(item, np.bool_) if isinstance(item, Traced) else bool(item)
        out = combine(out, t)
    return Traced(em.asarray(out).value, bool) if isinstance(out, Traced) else out


@register(builtin="any")
def any_(em, iterable):
    return _truth_fold(em, iterable, lambda a, b: apply_operator(em, "BitOr", a, b), False)


@register(builtin="all")
def all_(em, iterable):
    return _truth_fold(em, iterable, lambda a, b: apply_operator(em, "BitAnd", a, b), True)


@register(builtin="type")
def type_(em, x):
    """type(x): an array is an np.ndarray, a NumPy scalar its scalar type, a run-time Python
    number its Python type."""
    if not isinstance(x, Traced):
        return type(x)
    if x.weak is not None:
        return x.weak
    if em.is_array(x):
        return np.ndarray
    return np.dtype(x.dtype).type


@register(builtin="hasattr")
def hasattr_(em, x, name):
    if not isinstance(x, Traced):
        return hasattr(x, name)
    return hasattr(np.empty(0, x.dtype), name)


def _pick(fn, numpy_name, hint):
    """max(a, b, ...) / min(a, b, ...) of numbers known only at run time, as Python computes it:
    the first argument, replaced by each later one that is greater (less): NaN handling and ties
    as Python's. The result is one of the arguments, so they must have one type (a Python
    number may join NumPy numbers of its kind); an array, or one iterable, needs static values."""
    static = _static_builtin(fn, hint)

    def impl(em, *args, **kwargs):
        if kwargs.get("key") is not None and args:
            return _pick_by_key(em, fn, numpy_name, args, kwargs)
        if "default" in kwargs and set(kwargs) <= {"default", "key"}:   # max(iterable, default=d)
            if len(args) != 1:
                raise ShapeError(f"TypeError: Cannot specify a default for {fn.__name__}() with multiple "
                                 "positional arguments")
            items = args[0] if isinstance(args[0], Traced) and args[0].ndim else _sequence(em, args[0], list)
            empty = (items.shape[0] if isinstance(items, Traced) else len(items)) == 0
            return kwargs["default"] if empty else impl(em, items)
        if len(args) == 1 and not kwargs and isinstance(args[0], Traced):
            return _pick_of_array(em, fn, args[0])
        if len(args) == 1 and not kwargs and isinstance(args[0], (list, tuple)) and len(args[0]) > 1 \
                and not is_static(*args[0]):   # max([a, b, c]) of run-time numbers: as max(a, b, c)
            return impl(em, *args[0])
        if kwargs or len(args) < 2 or is_static(*args) or any(em.shape_of(a) != () for a in args):
            return static(em, *args, **kwargs)
        types = {em.dtype_of(a) for a in args}
        strong = {t for t in types if isinstance(t, np.dtype)}
        weak = types - strong
        kinds = {np.dtype(t).kind if t is not int else "i" for t in weak if t is not float} | {"f" for t in weak if t is float}
        if len(strong) > 1 or (strong and any(k != next(iter(strong)).kind for k in kinds)) or (not strong and len(weak) > 1):
            names = ", ".join(sorted(str(t.__name__ if isinstance(t, type) else t) for t in types))
            raise NotSupportedError(f"{fn.__name__}() of numbers of different types ({names}) returns one of them "
                                    f"unchanged, so its type is only known when the code runs",
                                    hint="convert them to one type first, e.g. with np.float64(x)")
        best = args[0]
        for x in args[1:]:
            best = FUNCTIONS["numpy.where"](em, FUNCTIONS[numpy_name](em, x, best), x, best)
        # the scalar arguments or loop markers it comes from (max(i - 1, 0) of a loop's i: a
        # slice bound that can be made a compile-time value by unrolling the loop)
        params = join_params(args)
        if not strong:
            best = Traced(em.asarray(best).value, next(iter(weak)), params)
        elif isinstance(best, Traced):
            best = Traced(best.value, best.weak, params)
        return best
    return impl


def _pick_by_key(em, fn, numpy_name, args, kwargs):
    """max(items, key=f) / min(...): f called on each item now; the first item whose key is
    greater (less) than every earlier one's, as Python picks it (`max(range(n), key=lambda i: a[i])`:
    keys known only at run time pick among items known now)."""
    key, default = kwargs.pop("key"), kwargs.pop("default", _NO_DEFAULT)
    if kwargs:
        raise ShapeError(f"TypeError: {fn.__name__}() got an unexpected keyword argument {next(iter(kwargs))!r}")
    items = _sequence(em, args[0], list) if len(args) == 1 else list(args)
    if not items:
        if default is _NO_DEFAULT:
            raise ShapeError(f"ValueError: {fn.__name__}() iterable argument is empty")
        return default
    shown = getattr(key, "__name__", "the key function")
    keys = [em.call_function(key, shown, [item], {}) for item in items]
    if is_static(*keys):
        ranked = [(k, i) for i, k in enumerate(keys)]
        return items[fn(ranked, key=lambda pair: pair[0])[1]]
    if len(items) == 1:
        return items[0]
    position, best = 0, keys[0]
    for i, k in enumerate(keys[1:], 1):
        better = FUNCTIONS[numpy_name](em, k, best)
        best = FUNCTIONS["numpy.where"](em, better, k, best)
        position = FUNCTIONS["numpy.where"](em, better, i, position)
    return _chosen(em, items, position)


def _chosen(em, items, position):
    """items[position] for a run-time position: items of one type and shape (as max/min of them
    needs), or tuples of such items, chosen part by part (`max(pairs, key=lambda t: t[1])`)."""
    if all(isinstance(v, tuple) for v in items) and len({len(v) for v in items}) == 1:
        return tuple(_chosen(em, [v[c] for v in items], position) for c in range(len(items[0])))
    types = {em.dtype_of(v) for v in items}
    if len(types) != 1 or len({em.shape_of(v) for v in items}) != 1:
        raise NotSupportedError("max()/min() with key= of items of different types or shapes, chosen by keys "
                                "known only at run time", hint="pick an index instead: max(range(n), key=...)")
    out = items[0]
    for i, item in enumerate(items[1:], 1):
        out = FUNCTIONS["numpy.where"](em, FUNCTIONS["numpy.equal"](em, position, i), item, out)
    weak = next(iter(types))
    return Traced(em.asarray(out).value, weak, join_params(items)) if isinstance(weak, type) else out


_NO_DEFAULT = object()


def _search(name):
    """list.index / list.count (tuple's too) of a sequence holding run-time values: Python's
    identity-or-equality test on each item (operators.item_matches); index is the first match (a
    Python int), or Python's ValueError when the function runs."""
    def impl(em, seq, value, *bounds):
        from ..operators import item_matches
        if name == "count" and bounds:
            raise ShapeError(f"TypeError: {type(seq).__name__}.count() takes exactly one argument ({len(bounds) + 1} given)")
        start, stop = (list(em.static(b, f"{name}: start/stop") for b in bounds) + [None, None])[:2]
        lo, hi = slice(start, stop).indices(len(seq))[:2]
        matches = item_matches(em, seq[lo:hi], value)
        if name == "count":
            total = 0
            for m in matches:
                total = apply_operator(em, "Add", total, m if isinstance(m, Traced) else int(m))
            return Traced(em.cast(em.asarray(total), np.int64).value, int, join_params(matches)) \
                if isinstance(total, Traced) else total
        position = -1
        for k in reversed(range(len(matches))):
            m = matches[k]
            if m is True:
                position = lo + k
            elif isinstance(m, Traced):
                position = FUNCTIONS["numpy.where"](em, m, np.int64(lo + k), position)
        if not isinstance(position, Traced):
            if position < 0:
                raise ShapeError(f"ValueError: {type(seq).__name__}.index(x): x not in {type(seq).__name__}")
            return position
        em.check(cmp(em, position, em.full(0, np.int64, ()), "LT"),
                 f"ValueError: {type(seq).__name__}.index(x): x not in {type(seq).__name__}")
        return Traced(em.cast(position, np.int64).value, int, join_params(matches))
    return impl


def _removed(em, seq, value):
    """list.remove(value) of a list holding run-time values: the position of the first match, which
    must be known now (the list's length must not depend on run-time values)."""
    from ..operators import item_matches
    for k, m in enumerate(item_matches(em, seq, value)):
        if isinstance(m, Traced):
            raise NotSupportedError("list.remove() comparing values known only at run time: which item goes (and "
                                    "so the list's contents) would depend on them", hint="use an array and a mask")
        if m:
            return k
    raise ShapeError("ValueError: list.remove(x): x not in list")


def _item_at(em, seq, index):
    """seq[i] of a list or tuple of numbers (or of tuples of them) at a run-time int i: the item
    chosen at run time (`dx, dy = moves[d]`), Python's negative indices, its IndexError."""
    from ..index_checks import index_i64
    position = index_i64(em, index, len(seq), f"{type(seq).__name__} index")
    try:
        return _chosen(em, list(seq), position)
    except NotSupportedError:
        raise NotSupportedError(f"a {type(seq).__name__} indexed by a value known only at run time must hold items "
                                "of one type and shape", hint="use an array") from None


# list.index and list.count (and tuple's) where the sequence or the value holds run-time values;
# list.remove's position; seq[i] at a run-time i
SEQUENCE_SEARCH = {"index": _search("index"), "count": _search("count"), "remove": _removed, "item": _item_at}


def _pick_of_array(em, fn, x):
    """max(x) / min(x) of a 1-D array, as Python iterates it: the first element, replaced by each
    later one that is greater (less). A NaN first element stays; later NaNs are skipped."""
    if x.ndim != 1:
        raise ShapeError("TypeError: iteration over a 0-d array" if x.ndim == 0 else
                         "ValueError: The truth value of an array with more than one element is ambiguous")
    if x.shape[0] == 0:
        raise ShapeError(f"ValueError: {fn.__name__}() iterable argument is empty")
    first = FUNCTIONS["numpy.take"](em, x, 0)
    if np.dtype(x.dtype).kind != "f":
        return FUNCTIONS["numpy.max" if fn is max else "numpy.min"](em, x)
    best = FUNCTIONS["numpy.nanmax" if fn is max else "numpy.nanmin"](em, x)
    return FUNCTIONS["numpy.where"](em, FUNCTIONS["numpy.isnan"](em, first), first, best)


register(builtin="max")(_pick(max, "numpy.greater", "use np.maximum or np.max for arrays"))
register(builtin="min")(_pick(min, "numpy.less", "use np.minimum or np.min for arrays"))


@register(builtin="ord", note="of a string known at compile time")
def ord_(em, c):
    return ord(em.static(c, "ord()"))


@register(builtin="chr", note="of an int known at compile time")
def chr_(em, i):
    return chr(em.static(i, "chr()"))


@register(builtin="isinstance")
def isinstance_(em, x, cls):
    """What Python says of the value's type (`type(x)`): an array is an np.ndarray, a run-time
    Python number its Python type (`isinstance(p, int)` of an int argument: it was False, as if
    every run-time value were an array), a NumPy scalar its scalar type (np.float64 is a float)."""
    return isinstance(x, cls) if not isinstance(x, Traced) else issubclass(type_(em, x), cls)


@register(builtin="len", complex_ok=True)
def len_(em, x):
    if isinstance(x, Traced):
        if x.ndim == 0:
            err = ShapeError("TypeError: len() of unsized object")
            err.python = TypeError("len() of unsized object")   # (a try/except in the program may catch it)
            raise err
        return x.shape[0]
    return fold(len, x)     # Python's TypeError for a number (np.histogram2d's `len(bins)` catches it)


register(builtin="range")(range_)
register("numpy.ndindex", note="a loop over it runs at run time, like range()")(ndindex)
register("numpy.ndenumerate", note="a loop over it runs at run time, like range()")(ndenumerate)
register(builtin="enumerate")(enumerate_)
register(builtin="zip")(zip_)


# ---------------------------------------------------------------- the math module on run-time values

def _math(np_name, domain=None, overflow=False, to_int=False, to_bool=False):
    """math.f(x) where x is a run-time number (a 0-d array or Python scalar argument): Python
    converts x to float, so this is NumPy's float64 function with a Python float (weak) result;
    where math raises (a domain or range error) the compiled code raises RunError."""
    def impl(em, *args, **kwargs):
        if kwargs:
            raise NotSupportedError(f"math.{np_name.split('.')[-1]}: keyword arguments are not supported on run-time values")
        xs = []
        for x in args:
            if isinstance(x, Traced):
                if x.type.size != 1:
                    raise ShapeError("TypeError: only 0-dimensional arrays can be converted to Python scalars")
                x = em.cast(reshape(em, x, ()) if x.ndim else x, np.float64)
                x = Traced(x.value, None, x.params)
            xs.append(x)
        out = FUNCTIONS[np_name](em, *[em.asarray(x, np.float64) for x in xs])
        if domain is not None:
            em.check(domain(em, *[em.asarray(x, np.float64) for x in xs]), "ValueError: math domain error")
        if overflow:
            finite_in = em.asarray(xs[0], np.float64)
            em.check(em.emit("and", em.emit("is_finite", finite_in),
                             em.emit("not", em.emit("is_finite", out))), "OverflowError: math range error")
        if to_int:
            return Traced(em.cast(out, np.int64).value, int, out.params)
        return Traced(out.value, bool if to_bool else float, out.params)
    return impl


def _outside(lo, hi):
    """x < lo or x > hi (or, `edges`, at them too): math's domain error of asin, acos, atanh."""
    def bad(em, x, edges=False):
        low = cmp(em, x, em.full(lo, np.float64, x.shape), "LE" if edges else "LT")
        return em.emit("or", low, cmp(em, x, em.full(hi, np.float64, x.shape), "GE" if edges else "GT"))
    return bad


def _below(limit, inclusive=False):
    return lambda em, x: cmp(em, x, em.full(limit, np.float64, x.shape), "LE" if inclusive else "LT")


MATH = {
    "sqrt": _math("numpy.sqrt", _below(0.0)), "exp": _math("numpy.exp", overflow=True),
    "log": _math("numpy.log", _below(0.0, True)), "log10": _math("numpy.log10", _below(0.0, True)),
    "log2": _math("numpy.log2", _below(0.0, True)), "log1p": _math("numpy.log1p", _below(-1.0, True)),
    "expm1": _math("numpy.expm1", overflow=True), "sin": _math("numpy.sin"), "cos": _math("numpy.cos"),
    "tan": _math("numpy.tan"), "tanh": _math("numpy.tanh"), "atan": _math("numpy.arctan"),
    "atan2": _math("numpy.arctan2"), "hypot": _math("numpy.hypot"), "fabs": _math("numpy.absolute"),
    "floor": _math("numpy.floor", to_int=True), "ceil": _math("numpy.ceil", to_int=True),
    "trunc": _math("numpy.trunc", to_int=True), "sinh": _math("numpy.sinh", overflow=True),
    "cosh": _math("numpy.cosh", overflow=True), "copysign": _math("numpy.copysign"),
    "isnan": _math("numpy.isnan", to_bool=True), "isinf": _math("numpy.isinf", to_bool=True),
    "isfinite": _math("numpy.isfinite", to_bool=True),
    "asin": _math("numpy.arcsin", _outside(-1.0, 1.0)), "acos": _math("numpy.arccos", _outside(-1.0, 1.0)),
    "asinh": _math("numpy.arcsinh"), "acosh": _math("numpy.arccosh", _below(1.0)),
    "atanh": _math("numpy.arctanh", lambda em, x: _outside(-1.0, 1.0)(em, x, True)),
    "degrees": _math("numpy.degrees"), "radians": _math("numpy.radians"), "exp2": _math("numpy.exp2", overflow=True),
    "cbrt": _math("numpy.cbrt"), "erf": _math("scipy.special.erf"), "erfc": _math("scipy.special.erfc"), "fmod": _math("numpy.fmod", lambda em, x, y: em.emit(
        "or", cmp(em, y, em.full(0.0, np.float64, y.shape), "EQ"), em.emit("not", em.emit("is_finite", x)))),
}


def _isclose(em, a, b, *, rel_tol=1e-09, abs_tol=0.0):
    """math.isclose on run-time numbers: equal (infinities too), or both finite and within
    max(rel_tol * max(|a|, |b|), abs_tol) of each other."""
    a, b, rel, tol = (em.cast(em.asarray(v), np.float64) for v in (a, b, rel_tol, abs_tol))
    for v in (a, b, rel, tol):
        if v.type.size != 1:
            raise ShapeError("TypeError: only 0-dimensional arrays can be converted to Python scalars")
    a, b, rel, tol = (reshape(em, v, ()) if v.ndim else v for v in (a, b, rel, tol))
    F = FUNCTIONS
    size = F["numpy.maximum"](em, F["numpy.absolute"](em, a), F["numpy.absolute"](em, b))
    near = cmp(em, F["numpy.absolute"](em, F["numpy.subtract"](em, a, b)),
               F["numpy.maximum"](em, F["numpy.multiply"](em, rel, size), tol), "LE")
    finite = em.emit("and", em.emit("is_finite", a), em.emit("is_finite", b))
    out = em.emit("or", cmp(em, a, b, "EQ"), em.emit("and", finite, near))
    return Traced(out.value, bool, out.params)


MATH["isclose"] = _isclose


def _python_ints(em, name, args) -> list:
    """math.gcd/lcm/isqrt's arguments known only at run time: Python ints (a Python int, a NumPy
    integer, bool) as int64 0-d values; anything else Python's TypeError."""
    out = []
    for x in args:
        t = em.asarray(x)
        if t.type.size != 1 or not (t.weak in (int, bool) or np.dtype(t.dtype).kind in "iub"):
            raise ShapeError(f"TypeError: '{em.dtype_of(x).__name__ if isinstance(em.dtype_of(x), type) else em.dtype_of(x)}' "
                             f"object cannot be interpreted as an integer (math.{name})")
        out.append(em.cast(reshape(em, t, ()) if t.ndim else t, np.int64))
    return out


def _int_fold(name, identity):
    """math.gcd / math.lcm of run-time ints: np.gcd / np.lcm folded over the arguments (both give
    the non-negative result Python gives), a Python int."""
    def impl(em, *args):
        xs = _python_ints(em, name, args)
        if not xs:
            return identity
        out = xs[0] if len(xs) > 1 else FUNCTIONS["numpy.absolute"](em, xs[0])
        for x in xs[1:]:
            out = FUNCTIONS[f"numpy.{name}"](em, out, x)
        return Traced(out.value, int, join_params(args))
    return impl


def _isqrt(em, n):
    """math.isqrt of a run-time int: the float square root, corrected by one either way (exact for
    every int64); a negative n is Python's ValueError."""
    (n,) = _python_ints(em, "isqrt", (n,))
    em.check(cmp(em, n, em.full(0, np.int64, ()), "LT"), "ValueError: isqrt() argument must be nonnegative")
    one = em.full(1, np.int64, ())
    r = em.cast(FUNCTIONS["numpy.floor"](em, FUNCTIONS["numpy.sqrt"](em, em.cast(n, np.float64))), np.int64)
    r = em.emit("sub", r, em.cast(cmp(em, em.emit("mul", r, r), n, "GT"), np.int64))
    up = em.emit("add", r, one)
    r = em.emit("add", r, em.cast(cmp(em, em.emit("mul", up, up), n, "LE"), np.int64))
    return Traced(r.value, int, n.params)


MATH.update(gcd=_int_fold("gcd", 0), lcm=_int_fold("lcm", 1), isqrt=_isqrt)


def _float(em, x) -> Traced:
    """A run-time number as math converts it: a float64 0-d value (TypeError for arrays of more
    than one element)."""
    t = em.asarray(x)
    if t.type.size != 1:
        raise ShapeError("TypeError: only 0-dimensional arrays can be converted to Python scalars")
    t = em.cast(reshape(em, t, ()) if t.ndim else t, np.float64)
    return Traced(t.value, None, t.params)


def _python_float(t: Traced) -> Traced:
    return Traced(t.value, float, t.params)


_ln = MATH["log"]


def _log(em, x, base=None):
    """math.log(x[, base]): log(x) / log(base) as CPython divides them; math's ValueError for x or
    base <= 0, ZeroDivisionError for base 1 (it was refused: the base went to np.log as out=)."""
    if base is None:
        return _ln(em, x)
    num, den = (_float(em, _ln(em, v)) for v in (x, base))
    em.check(cmp(em, den, em.full(0.0, np.float64, ()), "EQ"), "ZeroDivisionError: float division by zero")
    return _python_float(FUNCTIONS["numpy.divide"](em, num, den))


def _pow(em, x, y):
    """math.pow: both converted to float, C's pow, math's ValueError for 0 to a negative power and
    a negative base to a non-integer power, OverflowError for an infinite result of finite ones."""
    x, y = _float(em, x), _float(em, y)
    out = FUNCTIONS["numpy.power"](em, x, y)
    zero = em.full(0.0, np.float64, ())
    finite = em.emit("and", em.emit("is_finite", x), em.emit("is_finite", y))
    fractional = cmp(em, FUNCTIONS["numpy.floor"](em, y), y, "NE")
    bad = em.emit("or", em.emit("and", cmp(em, x, zero, "EQ"), em.emit("and", em.emit("is_finite", y), cmp(em, y, zero, "LT"))),
                  em.emit("and", finite, em.emit("and", cmp(em, x, zero, "LT"), fractional)))
    em.check(bad, "ValueError: math domain error")
    em.check(em.emit("and", finite, em.emit("not", em.emit("is_finite", out))), "OverflowError: math range error")
    return _python_float(out)


def _prod(em, iterable, *, start=1):
    """math.prod: Python's products in order, from `start` (of a list or tuple, or of a 1-D array's
    elements, NumPy scalars, as Python iterates it)."""
    if isinstance(iterable, Traced):
        if iterable.ndim != 1 or not isinstance(iterable.shape[0], int) or iterable.shape[0] > 256:
            raise NotSupportedError("math.prod of an array: a 1-D array of at most 256 elements is supported",
                                    hint="use np.prod")
        iterable = [reshape(em, em.emit("slice", iterable, start=(k,), limit=(k + 1,), strides=(1,)), ())
                    for k in range(iterable.shape[0])]
    if not isinstance(iterable, (list, tuple)):
        raise NotSupportedError("math.prod of this iterable is not supported: pass a list, a tuple or a 1-D array")
    out = start
    for v in iterable:
        out = apply_operator(em, "Mult", out, v)
    return out


def _ldexp(em, x, i):
    """math.ldexp: a float times 2**i (i a Python int), OverflowError where a finite x overflows."""
    (e,) = _python_ints(em, "ldexp", (i,))
    x = _float(em, x)
    out = FUNCTIONS["numpy.ldexp"](em, x, e)
    em.check(em.emit("and", em.emit("is_finite", x), em.emit("not", em.emit("is_finite", out))),
             "OverflowError: math range error")
    return _python_float(out)


def _frexp(em, x):
    m, e = FUNCTIONS["numpy.frexp"](em, _float(em, x))
    return _python_float(m), Traced(em.cast(e, np.int64).value, int, e.params)


def _modf(em, x):
    frac, whole = FUNCTIONS["numpy.modf"](em, _float(em, x))
    return _python_float(frac), _python_float(whole)


_FACTORIALS = np.array([1] + [int(np.prod(np.arange(1, k + 1, dtype=np.int64))) for k in range(1, 21)], np.int64)


def _factorial(em, n):
    """math.factorial of a run-time int: a table up to 20! (21! is past 64 bits: the OverflowError
    compiled Python ints raise); Python's ValueError for a negative n."""
    from ..python_ints import MESSAGE
    (n,) = _python_ints(em, "factorial", (n,))
    em.check(cmp(em, n, em.full(0, np.int64, ()), "LT"), "ValueError: factorial() not defined for negative values")
    em.check(cmp(em, n, em.full(20, np.int64, ()), "GT"), MESSAGE)
    at = em.emit("min", em.emit("max", n, em.full(0, np.int64, ())), em.full(20, np.int64, ()))
    out = FUNCTIONS["numpy.take"](em, em.constant(_FACTORIALS), at)
    return Traced(out.value, int, n.params)


MATH.update(log=_log, pow=_pow, prod=_prod, ldexp=_ldexp, frexp=_frexp, modf=_modf,
            factorial=_factorial)


# ---------------------------------------------------------------- the cmath module on run-time values

def _complex(em, x) -> Traced:
    """A run-time number as cmath converts it: a complex128 0-d value."""
    t = em.asarray(x)
    if t.type.size != 1:
        raise ShapeError("TypeError: only 0-dimensional arrays can be converted to Python scalars")
    t = em.cast(reshape(em, t, ()) if t.ndim else t, np.complex128)
    return Traced(t.value, None, t.params)


def _cmath(np_name, result=complex, domain=None):
    """cmath.f(z) of a run-time number: NumPy's complex128 function, a Python complex (`result`:
    float for phase); cmath's ValueError where `domain` holds (log of 0)."""
    def impl(em, z):
        c = _complex(em, z)
        if domain is not None:
            em.check(domain(em, c), "ValueError: math domain error")
        out = FUNCTIONS[np_name](em, c)
        return Traced(out.value, result, out.params)
    return impl


def _at_zero(em, c):
    return cmp(em, FUNCTIONS["numpy.absolute"](em, c), em.full(0.0, np.float64, ()), "EQ")


def _clog(em, z, base=None):
    out = _cmath("numpy.log", domain=_at_zero)(em, z)
    if base is None:
        return out
    den = _cmath("numpy.log", domain=_at_zero)(em, base)
    return Traced(FUNCTIONS["numpy.divide"](em, Traced(out.value), Traced(den.value)).value, complex,
                  join_params([out, den]))


def _polar(em, z):
    c = _complex(em, z)
    r, phi = FUNCTIONS["numpy.absolute"](em, c), FUNCTIONS["numpy.angle"](em, c)
    return Traced(r.value, float, r.params), Traced(phi.value, float, phi.params)


def _rect(em, r, phi):
    r, phi = (_float(em, v) for v in (r, phi))
    re = FUNCTIONS["numpy.multiply"](em, r, FUNCTIONS["numpy.cos"](em, phi))
    im = FUNCTIONS["numpy.multiply"](em, r, FUNCTIONS["numpy.sin"](em, phi))
    return Traced(em.emit("complex", re, im).value, complex, join_params([r, phi]))


# (the complex trigonometric functions and log10 are not compiled yet: cmath.sin of a run-time value
# is a located error, as np.sin of a complex array)
CMATH = dict(exp=_cmath("numpy.exp"), sqrt=_cmath("numpy.sqrt"), log=_clog, phase=_cmath("numpy.angle", result=float),
             polar=_polar, rect=_rect, isnan=_cmath("numpy.isnan", result=bool),
             isinf=_cmath("numpy.isinf", result=bool), isfinite=_cmath("numpy.isfinite", result=bool))

