"""builtins: Python's builtins in compiled code (len, abs and divmod are registered with the NumPy
functions they are; range, enumerate and zip make the sequences loops run over), and Python's
list/tuple searches on run-time values (SEQUENCE_SEARCH). The math and cmath modules:
math_module.py."""
from __future__ import annotations

import numpy as np

from ...errors import ForbiddenError, NotSupportedError, ShapeError
from ..registry import BUILTINS, FUNCTIONS, register
from ..python_ints import MESSAGE as PY_INT_PAST_64_BITS
from ..stacks import Deque, Stack, length as stack_length
from ..sequences import RangeSeq, Seq, chosen, enumerate_, ndenumerate, ndindex, range_, zip_
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


@register(builtin="reversed", note="of an array: its rows (views), last first; of a list or tuple: its items; "
                                   "of a range: the range backwards (a run-time loop, as range(n - 1, -1, -1))")
def reversed_(em, seq):
    if isinstance(seq, range):   # (a Python iterator over it was unrolled: back substitution at n = 120
        return seq[::-1]         # compiled for 31 s; probe AK)
    if isinstance(seq, RangeSeq):
        backwards = seq.reversed(em)
        if backwards is not None:
            return backwards
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
    if np.dtype(v.dtype) == np.uint64:   # 2**63 and up: a Python int past int64 (it came out negative; probe AO)
        em.check(em.emit("compare", v, em.full(1 << 63, np.uint64, ()), direction="GE"), PY_INT_PAST_64_BITS)
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


@register(builtin="set", note="of values known at compile time (names, keys, small ints): a Python set "
                               "while compiling")
def set_(em, x=()):
    return _static_set(em, x, set)


@register(builtin="frozenset", note="of values known at compile time")
def frozenset_(em, x=()):
    return _static_set(em, x, frozenset)


def _static_set(em, x, kind):
    items = _sequence(em, x, list) if isinstance(x, (Traced, Seq)) else x
    if not is_static(items) and not (isinstance(items, (set, frozenset, dict))):
        raise NotSupportedError(f"{kind.__name__}() of values known only at run time is not supported inside @jit",
                                hint="use np.unique(x) for the distinct values of an array")
    return _sequence(em, items, kind)


@register(builtin="iter", note="of a list, tuple or array known at compile time in length: an iterator over its "
                                "items (rows) while compiling")
def iter_(em, x):
    if isinstance(x, Traced) or isinstance(x, Seq):
        return iter(_sequence(em, x, list))
    try:
        return iter(x)
    except TypeError as e:
        err = ShapeError(f"TypeError: {e}")
        err.python = e
        raise err from None


_NO_DEFAULT = object()


@register(builtin="next", note="of an iterator or generator expression made while compiling (its items made "
                                "then); next(it, default)")
def next_(em, it, default=_NO_DEFAULT):
    if isinstance(it, list):   # a generator expression (made as a list while compiling): its first item
        it = iter(it)
    try:
        return next(it) if default is _NO_DEFAULT else next(it, default)
    except StopIteration:
        err = ShapeError("StopIteration")
        err.python = StopIteration()
        raise err from None
    except TypeError as e:
        err = ShapeError(f"TypeError: {e}")
        err.python = e
        raise err from None


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
    return chosen(em, items, position)


_NO_DEFAULT = object()


def _matches(em, seq, value, bounds, name):
    """Python's identity-or-equality test (operators.item_matches) of value against each item of
    seq[start:stop], and start."""
    from ..operators import item_matches
    start, stop = (list(em.static(b, f"{name}: start/stop") for b in bounds) + [None, None])[:2]
    lo, hi = slice(start, stop).indices(len(seq))[:2]
    return item_matches(em, seq[lo:hi], value), lo


def _count(em, seq, value, *more):
    """list.count / tuple.count of a sequence holding run-time values: the number of matches."""
    if more:
        raise ShapeError(f"TypeError: {type(seq).__name__}.count() takes exactly one argument ({len(more) + 1} given)")
    matches, _ = _matches(em, seq, value, (), "count")
    total = 0
    for m in matches:
        total = apply_operator(em, "Add", total, m if isinstance(m, Traced) else int(m))
    return Traced(em.cast(em.asarray(total), np.int64).value, int, join_params(matches)) \
        if isinstance(total, Traced) else total


def _index(em, seq, value, *bounds):
    """list.index / tuple.index of a sequence holding run-time values: the first match (a Python
    int), or Python's ValueError (when the function runs, where the match is decided then)."""
    matches, lo = _matches(em, seq, value, bounds, "index")
    missing = f"ValueError: {type(seq).__name__}.index(x): x not in {type(seq).__name__}"
    position = -1
    for k in reversed(range(len(matches))):
        m = matches[k]
        if m is True:
            position = lo + k
        elif isinstance(m, Traced):
            position = FUNCTIONS["numpy.where"](em, m, np.int64(lo + k), position)
    if not isinstance(position, Traced):
        if position < 0:
            raise ShapeError(missing)
        return position
    em.check(cmp(em, position, em.full(0, np.int64, ()), "LT"), missing)
    return Traced(em.cast(position, np.int64).value, int, join_params(matches))


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


# list.index and list.count (and tuple's) where the sequence or the value holds run-time values;
# list.remove's position
SEQUENCE_SEARCH = {"index": _index, "count": _count, "remove": _removed}


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
    if isinstance(x, Stack):
        return stack_length(em, x)
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


@register("collections.deque", note="a list with popleft/appendleft/extendleft while compiling; a run-time loop "
                                    "that pops it keeps it as arrays (frontend/stacks.py); maxlen= refused",
          views=True)   # (its items are the objects given, as Python's)
def deque_(em, iterable=(), maxlen=None):
    if maxlen is not None:
        raise NotSupportedError("collections.deque(maxlen=...) is not supported inside @jit",
                                hint="use a deque without maxlen, or an array and an index")
    if not isinstance(iterable, (list, tuple, range)):
        raise NotSupportedError("collections.deque() of this value is not supported inside @jit",
                                hint="pass a list or tuple of its first items, e.g. deque([start])")
    return Deque(iterable)
