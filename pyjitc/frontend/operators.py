"""operators: Python's operators and conditional expression on the values of a compiled function.
On compile-time values Python (or NumPy) computes them; on arrays each operator is the NumPy ufunc
it names in the registry (`+` is numpy.add), with NumPy's dtype rules."""
from __future__ import annotations

import operator

import numpy as np

from ..errors import NotSupportedError
from . import masked, masked_calls, python_ints
from .regions import MergeError, condition, unify
from .registry import FUNCTIONS, refuse_complex, register
from .values import Emitter, NeedStatic, Traced, call_known, fold, is_static, items_of, join_params

_UNARY_OPS = {"USub": "numpy.negative", "UAdd": "numpy.positive", "Invert": "numpy.invert"}
_BINARY_OPS = {"Add": "numpy.add", "Sub": "numpy.subtract", "Mult": "numpy.multiply",
               "Div": "numpy.true_divide", "FloorDiv": "numpy.floor_divide", "Mod": "numpy.remainder",
               "Pow": "numpy.power", "MatMult": "numpy.matmul", "BitAnd": "numpy.bitwise_and",
               "BitOr": "numpy.bitwise_or", "BitXor": "numpy.bitwise_xor", "LShift": "numpy.left_shift",
               "RShift": "numpy.right_shift"}
_COMPARE_OPS = {"Eq": "numpy.equal", "NotEq": "numpy.not_equal", "Lt": "numpy.less",
                "LtE": "numpy.less_equal", "Gt": "numpy.greater", "GtE": "numpy.greater_equal"}
OPERATORS = {**_UNARY_OPS, **_BINARY_OPS, **_COMPARE_OPS}
OPERATOR_SYMBOLS = {"USub": "-", "UAdd": "+", "Invert": "~", "Add": "+", "Sub": "-", "Mult": "*", "Div": "/",
                    "FloorDiv": "//", "Mod": "%", "Pow": "**", "MatMult": "@", "BitAnd": "&", "BitOr": "|",
                    "BitXor": "^", "LShift": "<<", "RShift": ">>", "Eq": "==", "NotEq": "!=", "Lt": "<",
                    "LtE": "<=", "Gt": ">", "GtE": ">="}
_PY_OPERATORS = {"USub": operator.neg, "UAdd": operator.pos, "Invert": operator.invert, "Not": operator.not_,
                 "Add": operator.add, "Sub": operator.sub, "Mult": operator.mul, "Div": operator.truediv,
                 "FloorDiv": operator.floordiv, "Mod": operator.mod, "Pow": operator.pow,
                 "MatMult": operator.matmul, "BitAnd": operator.and_, "BitOr": operator.or_,
                 "BitXor": operator.xor, "LShift": operator.lshift, "RShift": operator.rshift,
                 "Eq": operator.eq, "NotEq": operator.ne, "Lt": operator.lt, "LtE": operator.le,
                 "Gt": operator.gt, "GtE": operator.ge, "Is": operator.is_, "IsNot": operator.is_not,
                 "In": lambda a, b: a in b, "NotIn": lambda a, b: a not in b}


def apply_operator(em: Emitter, op_name: str, *args):
    """A Python operator: on compile-time values Python/NumPy computes it; on arrays the ufunc."""
    if masked.contains(args):
        if op_name not in OPERATORS:
            masked.need(masked.first(args), f"the operator {OPERATOR_SYMBOLS.get(op_name, op_name)}")
        return masked_calls.call(em, FUNCTIONS[OPERATORS[op_name]], OPERATOR_SYMBOLS.get(op_name, op_name), args, {})
    return call_known(em, lambda em, *a: _apply_operator(em, op_name, *a), args)


# Python's arithmetic on bools is on ints (True + True == 2, -True == -1, ~True == -2); NumPy's
# on np.bool_ is logical (np.True_ + np.True_ is True): run-time Python bools among Python numbers
# only are made ints first (a Python bool argument `flag + flag` gave True)
_INT_ON_BOOLS = {"Add", "Sub", "Mult", "Div", "FloorDiv", "Mod", "Pow", "USub", "UAdd", "Invert", "LShift", "RShift"}


def _python_number(a) -> bool:
    return isinstance(a, (bool, int, float, complex)) or (isinstance(a, Traced) and a.ndim == 0 and a.weak is not None)


def _bools_as_ints(em, op_name, args):
    if op_name not in _INT_ON_BOOLS or not all(_python_number(a) for a in args) or \
            not any(isinstance(a, Traced) and a.weak is bool for a in args):
        return args
    return tuple(Traced(em.cast(a, np.int64).value, int, a.params) if isinstance(a, Traced) and a.weak is bool
                 else int(a) if isinstance(a, bool) else a for a in args)


def _apply_operator(em: Emitter, op_name: str, *args):
    if is_static(*args):
        return fold(_PY_OPERATORS[op_name], *args)
    args = _bools_as_ints(em, op_name, args)
    sequences = [a for a in args if isinstance(a, (list, tuple))]
    if op_name == "Add" and len(sequences) == 2 and type(args[0]) is type(args[1]):
        return args[0] + args[1]   # concatenation, whatever the items hold (run-time numbers, arrays)
    if op_name in _SEQUENCE_COMPARISONS and len(sequences) == 2 and len(args) == 2:
        return _sequence_compare(em, op_name, *args)   # Python's list/tuple comparison: one bool
    if op_name == "Mult" and len(sequences) == 1 and len(args) == 2:
        count = args[1] if sequences[0] is args[0] else args[0]
        if isinstance(count, (int, np.integer)):
            return args[0] * args[1]   # repetition
        if isinstance(count, Traced) and count.weak is int:
            if count.params:   # a Python int argument: made static
                raise NeedStatic(count.params)
            raise NotSupportedError("repeating a list or tuple a number of times known only at run time",
                                    hint="the count must be known at compile time")
    if op_name not in OPERATORS:
        raise NotSupportedError(f"the operator {op_name} is not supported on arrays")
    refuse_complex(FUNCTIONS[OPERATORS[op_name]], f"the operator {OPERATOR_SYMBOLS.get(op_name, op_name)}",
                   args, {})
    fn = FUNCTIONS[OPERATORS[op_name]]
    out = getattr(fn, "operator", fn)(em, *args)   # (a ufunc's operator form keeps Python numbers weak)
    python_ints.check(em, op_name, args, out)
    if op_name in ("Add", "Sub", "Mult") and isinstance(out, Traced):
        _track_offset(em, op_name, *args, out=out)
    elif op_name == "USub" and isinstance(out, Traced):   # -i: i scaled by -1
        _track_offset(em, "Mult", args[0], -1, out=out)
    return out


def _track_offset(em, op_name, a, b, out):
    """Remember that `i + 4` is i's value plus 4: x[i:i + 4] then has a known length. A product
    by a compile-time int scales both (`(i + 1) * fs` is i * fs plus fs, the base ("scaled", i, fs)):
    x[i * fs:(i + 1) * fs] (the folds of a cross-validation) has length fs; it was a run-time
    length, and the loop around it unrolled (probe AI)."""
    if isinstance(b, Traced) and op_name in ("Add", "Mult"):
        a, b = b, a
    if op_name == "Sub" and isinstance(b, Traced) and isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)):
        base = em.offset_of(b)     # n - i: i scaled by -1, plus n
        if base is not None and em.offset_of(out) is not None:
            scaled = ("scaled", base[0][1], -base[0][2]) if isinstance(base[0], tuple) else ("scaled", base[0], -1)
            em.affine[out.value.id] = (scaled, int(a) - base[1])
        return
    if op_name == "Mult":
        if isinstance(a, Traced) and isinstance(b, (int, np.integer)) and not isinstance(b, (bool, np.bool_)) and b:
            base = em.offset_of(a)
            if base is not None and em.offset_of(out) is not None:
                scaled = ("scaled", base[0][1], base[0][2] * int(b)) if isinstance(base[0], tuple) else \
                    ("scaled", base[0], int(b))
                em.affine[out.value.id] = (scaled, base[1] * int(b))
        return
    if isinstance(a, Traced) and isinstance(b, (int, np.integer)) and not isinstance(b, (bool, np.bool_)):
        base = em.offset_of(a)
        if base is not None and em.offset_of(out) is not None:
            em.affine[out.value.id] = (base[0], base[1] + (int(b) if op_name == "Add" else -int(b)))


def select_values(em, cond: Traced, a, b):
    """Python's `a if cond else b` for two scalar-like values of one type (as a run-time if would
    merge them); None if their types differ (the caller then builds a real if)."""
    try:
        shape, dtype, weak = unify(a, b, "value")
    except MergeError:
        return None
    x, y = em.broadcast(em.asarray(a, dtype), shape), em.broadcast(em.asarray(b, dtype), shape)
    pred = em.broadcast(Traced(cond.value), shape) if shape else cond
    out = em.emit("select", pred, em.cast(x, dtype), em.cast(y, dtype))
    params = join_params([cond, a, b])
    return Traced(out.value, weak, params)


_SEQUENCE_COMPARISONS = {"Eq": operator.eq, "NotEq": operator.ne, "Lt": operator.lt, "LtE": operator.le,
                         "Gt": operator.gt, "GtE": operator.ge}


def _truth(em, v):
    """bool(v) of a comparison's result inside a list comparison: a Python bool, or a run-time one
    (regions.condition: NumPy's ValueError for an array of more than one element)."""
    if not isinstance(v, Traced):
        return bool(v)
    return Traced(condition(em, v).value, bool, v.params)


def _python_bool(em, v):
    return Traced(em.asarray(v, np.bool_).value, bool, v.params if isinstance(v, Traced) else frozenset()) \
        if isinstance(v, Traced) or not isinstance(v, bool) else v


def _either(em, cond, then, other):
    """`then` where the run-time bool cond holds, else `other`: one type where both have it, else
    Python bools (a list comparison's result type depends on where the lists first differ)."""
    if then is other or (not isinstance(then, Traced) and not isinstance(other, Traced) and then == other
                         and type(then) is type(other)):
        return then
    if isinstance(then, Traced) and isinstance(other, Traced) and then.weak == other.weak:
        out = em.emit("select", cond, em.cast(then, np.bool_), em.cast(other, np.bool_))
        return Traced(out.value, then.weak, join_params([cond, then, other]))
    then, other = _python_bool(em, then), _python_bool(em, other)
    out = em.emit("select", cond, em.asarray(then, np.bool_), em.asarray(other, np.bool_))
    return Traced(out.value, bool, join_params([cond, then, other]))


def _elements_equal(em, a, b):
    """Python's equality test of two items of compared lists: the same object, or == true."""
    if a is b:
        return True
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return _sequence_compare(em, "Eq", a, b)
    return _truth(em, apply_operator(em, "Eq", a, b))


def _and(em, a, b):
    if a is False or b is False:
        return False
    if a is True:
        return b
    if b is True:
        return a
    return Traced(em.emit("and", a, b).value, bool, join_params([a, b]))


def _sequence_compare(em, op_name, a, b):
    """`a op b` for two lists or tuples holding run-time values, as Python compares them: == is
    one bool (same type, same length, every item equal: identity first); <, <=, >, >= decide at
    the first items that differ, by those items' own comparison, else by the lengths."""
    if op_name in ("Eq", "NotEq"):
        same = type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b) if same else ():
            same = _and(em, same, _elements_equal(em, x, y))
        if op_name == "Eq":
            return same
        return (not same) if not isinstance(same, Traced) else Traced(em.emit("not", same).value, bool, same.params)
    if type(a) is not type(b):
        raise NotSupportedError(f"TypeError: '{OPERATOR_SYMBOLS.get(op_name, op_name)}' not supported between "
                                f"instances of '{type(a).__name__}' and '{type(b).__name__}'")
    result = _SEQUENCE_COMPARISONS[op_name](len(a), len(b))
    for x, y in reversed(list(zip(a, b))):
        equal = _elements_equal(em, x, y)
        if equal is True:
            continue
        decided = _sequence_compare(em, op_name, x, y) if isinstance(x, (list, tuple)) and \
            isinstance(y, (list, tuple)) else apply_operator(em, op_name, x, y)
        if isinstance(decided, Traced) and decided.ndim:
            _truth(em, decided)   # (Python's ValueError past one element)
            raise NotSupportedError("ordering lists or tuples that hold arrays (Python's result is then one of "
                                    "the arrays' own comparisons): compare the items one by one")
        result = decided if equal is False else _either(em, equal, result, decided)
    return result


def item_matches(em, container, item) -> list:
    """Whether each item of a list or tuple is `item` as Python's `in`, list.index and list.count
    see it: the same object, or equal (==); True/False where known now, run-time bools otherwise.
    Arrays among them (Python's truth value of an array) are refused."""
    out = []
    for c in container:
        if c is item:
            out.append(True)
        elif not isinstance(c, (Traced, bool, int, float, complex, np.generic)) or \
                not isinstance(item, (Traced, bool, int, float, complex, np.generic)):
            out.append(c == item if not isinstance(c, Traced) and not isinstance(item, Traced) else False)
        else:
            eq = apply_operator(em, "Eq", item, c)
            if isinstance(eq, Traced) and eq.ndim:
                raise NotSupportedError("comparing with arrays (`in`, list.index, list.count) is not supported: "
                                        "Python would need the truth value of an array")
            out.append(eq)
    return out


def membership(em, item, container):
    """`item in container` where one side is known only at run time: Python compares with ==
    (an array: any element equal; a tuple or list: any item equal)."""
    if isinstance(container, Traced):
        if isinstance(item, Traced) and item.ndim:
            raise NotSupportedError("`in` with an array on the left is not supported")
        found = FUNCTIONS["numpy.any"](em, apply_operator(em, "Eq", container, item))
        return Traced(found.value, bool, found.params)
    if isinstance(container, (dict, set, frozenset)) and isinstance(item, Traced) and item.type.size == 1:
        container = list(container)   # its keys, known now: a number is in it where one equals it
    if isinstance(container, (tuple, list, range)) and (isinstance(item, Traced) and item.type.size == 1 or
                                                        next(items_of(container, Traced), None) is not None):
        out = False
        for eq in item_matches(em, container, item):
            out = apply_operator(em, "BitOr", out, eq) if isinstance(out, Traced) or isinstance(eq, Traced) \
                else (out or eq)
        return Traced(em.asarray(out).value, bool) if isinstance(out, Traced) else out
    if not isinstance(container, Traced) and not isinstance(item, Traced):
        raise NotSupportedError(f"`in` on a {type(container).__name__} is not supported here")
    raise NotSupportedError("`in` with an array on the left is not supported" if isinstance(item, Traced)
                            else "`in` on arrays is not supported")


# ---------------------------------------------------------------- ndarray's operator methods

def _operator_method(op_name: str, reflected: bool = False, unary: bool = False):
    """x.__add__(y) (x.__radd__(y): y + x; x.__neg__()): the operator, as ndarray's methods are
    (library code calls them: NumPy's own np.polyint uses p.__truediv__)."""
    if unary:
        return lambda em, a: apply_operator(em, op_name, a)
    if reflected:
        return lambda em, a, b: apply_operator(em, op_name, b, a)
    return lambda em, a, b: apply_operator(em, op_name, a, b)


_COMPLEX_OK = {"add", "sub", "mul", "truediv", "pow", "matmul", "eq", "ne", "neg", "pos"}   # (NumPy's on complex)
for _name, _op in {"add": "Add", "sub": "Sub", "mul": "Mult", "truediv": "Div", "floordiv": "FloorDiv", "mod": "Mod",
                   "pow": "Pow", "matmul": "MatMult", "and": "BitAnd", "or": "BitOr", "xor": "BitXor",
                   "lshift": "LShift", "rshift": "RShift"}.items():
    register(method=f"__{_name}__", complex_ok=_name in _COMPLEX_OK)(_operator_method(_op))
    register(method=f"__r{_name}__", complex_ok=_name in _COMPLEX_OK)(_operator_method(_op, reflected=True))
for _name, _op in {"eq": "Eq", "ne": "NotEq", "lt": "Lt", "le": "LtE", "gt": "Gt", "ge": "GtE"}.items():
    register(method=f"__{_name}__", complex_ok=_name in _COMPLEX_OK)(_operator_method(_op))
for _name, _op in {"neg": "USub", "pos": "UAdd", "invert": "Invert"}.items():
    register(method=f"__{_name}__", complex_ok=_name in _COMPLEX_OK)(_operator_method(_op, unary=True))
