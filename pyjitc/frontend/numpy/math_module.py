"""math_module: Python's `math` and `cmath` modules on run-time numbers (MATH, CMATH: the
functions calls.py applies where an argument is known only at run time; on compile-time values
Python's modules compute them): Python's types and results, and where they raise (a domain or
range error) the compiled code raises RunError."""
from __future__ import annotations

import numpy as np

from ...errors import NotSupportedError, ShapeError
from ..operators import apply_operator
from ..registry import FUNCTIONS
from ..values import Traced, join_params
from .elementwise import cmp
from .shapes import reshape


# ---------------------------------------------------------------- the math module on run-time values

def _math(np_name, domain=None, overflow=False, to_int=False, to_bool=False):
    """math.f(x) where x is a run-time number (a 0-d array or Python scalar argument): Python
    converts x to float, so this is NumPy's float64 function with a Python float (weak) result;
    where math raises (a domain or range error) the compiled code raises RunError."""
    def impl(em, *args, **kwargs):
        if kwargs:
            raise NotSupportedError(f"math.{np_name.split('.')[-1]}: keyword arguments are not supported on run-time values")
        xs = [_float(em, x) if isinstance(x, Traced) else x for x in args]
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


def _as_number(em, x, dtype) -> Traced:
    """A run-time number as math (float64) or cmath (complex128) converts it: a 0-d value of
    `dtype` (TypeError for arrays of more than one element)."""
    t = em.asarray(x)
    if t.type.size != 1:
        raise ShapeError("TypeError: only 0-dimensional arrays can be converted to Python scalars")
    t = em.cast(reshape(em, t, ()) if t.ndim else t, dtype)
    return Traced(t.value, None, t.params)


def _float(em, x) -> Traced:
    return _as_number(em, x, np.float64)


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
    zero_to_negative = em.emit("and", cmp(em, x, zero, "EQ"), em.emit("and", em.emit("is_finite", y), cmp(em, y, zero, "LT")))
    negative_to_fraction = em.emit("and", finite, em.emit("and", cmp(em, x, zero, "LT"), fractional))
    bad = em.emit("or", zero_to_negative, negative_to_fraction)
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
    return _as_number(em, x, np.complex128)


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

