"""powers: np.power (also `**`, np.pow) and np.float_power: NumPy's checks on integer exponents,
its exact fast paths for small exponents, complex powers as NumPy computes them."""
from __future__ import annotations

import numpy as np

from ...errors import NotSupportedError, ShapeError
from ...ir import dims
from ..python_ints import is_python_int, is_python_number
from ..registry import FUNCTIONS, register
from ..regions import is_marker
from ..values import NeedStatic, Traced, is_static, join_params
from . import accurate
from .dtypes import cast_impl
from .elementwise import cmp, const, sel
from .ufuncs import ufunc_impl


def _fast_power(em, base, exponent):
    """NumPy's exact fast paths for array ** scalar (2 -> square, 0.5 -> sqrt, -1 -> 1/x, 1 -> +x)."""
    if not isinstance(base, Traced) or not isinstance(exponent, (int, float)) or isinstance(exponent, bool):
        return None
    loop = np.power.resolve_dtypes((em.dtype_of(base), em.dtype_of(exponent), None))
    x = em.asarray(base, loop[0])
    if exponent == 2:
        return Traced(em.emit("mul", x, x).value, None, x.params)
    if loop[0].kind == "f":
        if exponent == 0.5:
            return em.emit("sqrt", x)
        if exponent == -1:
            return em.emit("div", em.full(1, x.dtype, x.shape), x)
        if exponent == 1:
            return Traced(x.value, None, x.params)
        e = float(exponent)
        if not em.differentiable and e == int(e) and 1 <= abs(e) <= 32:     # x ** 3, r ** -6
            return accurate.small_power(em, x, int(e), False)
        if not em.differentiable and e > 1 and (e * 2) == int(e * 2) and e <= 32:   # r ** 1.5
            return accurate.small_power(em, x, int(e), True)
    return None


def _check_int_power(em, base, exponent):
    dts = [em.dtype_of(base), em.dtype_of(exponent)]
    if all(d is int or d is bool or (isinstance(d, np.dtype) and d.kind in "biu") for d in dts):
        if isinstance(exponent, Traced):   # NumPy raises for a negative one: so does the compiled code
            em.check(FUNCTIONS["numpy.any"](em, cmp(em, exponent, const(em, 0, exponent), "LT")),
                     "ValueError: Integers to negative integer powers are not allowed.")
            return
        if np.any(np.asarray(exponent) < 0):
            raise ShapeError("Integers to negative integer powers are not allowed.")


_unchecked_power = ufunc_impl(np.power, accurate.power)


def _complex_power(em, base, exponent):
    """complex ** w as NumPy's npy_cpow computes it: w = 0 gives 1; a zero base 0 (Re w > 0) or
    NaN; an integer w with |w| < 100 repeated products (n = 1, 2, 3 unrolled, others binary
    powering, 1 / that for w < 0); any other w the C library's cpow, exp(w log z)."""
    n_value = np.asarray(exponent)
    if not isinstance(exponent, Traced) and n_value.shape == () and n_value.dtype.kind != "c" \
            and float(n_value) == int(n_value) and -100 < int(n_value) < 100:
        return _complex_integer_power(em, base, exponent, int(n_value))
    F = FUNCTIONS
    dt = np.power.resolve_dtypes((em.dtype_of(base), em.dtype_of(exponent), None))[2]
    shape = dims.broadcast_shapes(em.shape_of(base), em.shape_of(exponent))
    z, w = (em.broadcast(em.asarray(v, dt), shape) for v in (base, exponent))
    real = lambda v: em.emit("real", v)
    ar, ai, br, bi = real(z), em.emit("imag", z), real(w), em.emit("imag", w)
    general = F["numpy.exp"](em, F["numpy.multiply"](em, w, F["numpy.log"](em, z)))
    # integer exponents: binary powering with the exponent's bits known only at run time
    mul = lambda a, b: em.emit("mul", a, b)
    k = em.cast(em.emit("min", em.emit("abs", br), const(em, 127, br)), np.dtype(np.int64))
    one = em.full(1, dt, shape)
    acc, p = one, z
    for bit in range(7):
        has = cmp(em, em.emit("and", k, em.full(1 << bit, k.dtype, shape)), em.full(0, k.dtype, shape), "NE")
        acc = sel(em, has, mul(acc, p), acc)
        p = mul(p, p)
    square = mul(z, z)
    for n, r in ((1, z), (2, square), (3, mul(z, square))):
        acc = sel(em, cmp(em, br, const(em, n, br), "EQ"), r, acc)
    negative = cmp(em, br, const(em, 0, br), "LT")
    acc = sel(em, negative, accurate.complex_divide(em, one, acc), acc)
    zero_i = cmp(em, bi, const(em, 0, bi), "EQ")
    whole = F["numpy.logical_and"](em, zero_i, F["numpy.logical_and"](
        em, cmp(em, F["numpy.trunc"](em, br), br, "EQ"), cmp(em, em.emit("abs", br), const(em, 100, br), "LT")))
    out = sel(em, whole, acc, general)
    zero_base = F["numpy.logical_and"](em, cmp(em, ar, const(em, 0, ar), "EQ"), cmp(em, ai, const(em, 0, ai), "EQ"))
    at_zero = sel(em, cmp(em, br, const(em, 0, br), "GT"), em.full(0, dt, shape), em.full(complex(np.nan, np.nan), dt, shape))
    out = sel(em, zero_base, at_zero, out)
    out = sel(em, F["numpy.logical_and"](em, cmp(em, br, const(em, 0, br), "EQ"), zero_i), one, out)
    return Traced(out.value, None, join_params([base, exponent]))


def _complex_integer_power(em, base, exponent, n: int):
    """complex ** n for a compile-time integer n, |n| < 100, as NumPy's npy_cpow computes it:
    n = 0 gives 1, 1 the base, 2 and 3 products, others binary powering (1 / that for n < 0)."""
    dt = np.power.resolve_dtypes((em.dtype_of(base), em.dtype_of(exponent), None))[2]
    z = em.asarray(base, dt)
    one = em.full(1, dt, z.shape)
    if n == 0:
        return one
    mul = lambda a, b: Traced(em.emit("mul", a, b).value, None, z.params)
    if abs(n) == 1:
        r = z
    elif abs(n) == 2:
        r = mul(z, z)
    elif abs(n) == 3:
        r = mul(z, mul(z, z))
    else:
        r, p, k = None, z, abs(n)
        while True:
            if k & 1:
                r = p if r is None else mul(r, p)
            k >>= 1
            if not k:
                break
            p = mul(p, p)
    return accurate.complex_divide(em, one, r) if n < 0 else r


def _is_complex(em, x) -> bool:
    d = em.dtype_of(x)   # (a dtype, or Python's type for a weak scalar)
    return d is complex or isinstance(d, np.dtype) and d.kind == "c"


@register("numpy.power", "numpy.pow", complex_ok=True,
          note="float: C99 pow special cases, computed in float64 with ln x in double-double (within 1 ulp); "
               "integer ** integer needs a compile-time non-negative exponent; complex: NumPy's repeated products "
               "for integer exponents below 100, else exp(w log z) as the C library's cpow")
def power(em, a, b, **kw):
    """The power ufunc, after NumPy's checks on integer exponents and with its exact fast paths."""
    if _is_complex(em, a) or _is_complex(em, b):
        if kw:
            raise NotSupportedError("complex **: keyword arguments are not supported")
        return _complex_power(em, a, b)
    _check_int_power(em, a, b)
    fast = None if kw else _fast_power(em, a, b)
    return fast if fast is not None else _unchecked_power(em, a, b, **kw)


power.ufunc = np.power   # elementwise, with compile-time checks only: masked arrays may use it


def _power_operator(em, a, b):
    """`z ** 0.5` on a complex array is np.sqrt(z) (NumPy's operator fast path; np.power(z, 0.5)
    is the cpow: they differ at infinities). Python numbers (`a ** k` on Python ints) give a
    Python number, as Python's operator does. Everything else as np.power."""
    if is_python_number(a) and is_python_number(b):
        ints = is_python_int(a) and is_python_int(b)
        if ints and type(b) is int and b < 0:   # Python: int ** negative int is a float (2 ** -3 == 0.125)
            base = Traced(em.cast(a, np.float64).value, float, a.params) if isinstance(a, Traced) else float(a)
            return _unchecked_power.operator(em, base, float(b))
        if ints and isinstance(b, Traced):
            sign = em.int_bounds.get(b.value.id) or em.range_of(b)   # (`4 ** -j`, j a loop variable >= 1)
            if sign is not None and sign[1] < 0:
                base = Traced(em.cast(a, np.float64).value, float, a.params) if isinstance(a, Traced) else float(a)
                return _unchecked_power.operator(em, base, Traced(em.cast(b, np.float64).value, float, b.params))
            if sign is not None and sign[0] >= 0:
                return _unchecked_power.operator(em, a, b)
            if b.params and not all(is_marker(p) for p in b.params):
                raise NeedStatic(b.params)   # a Python int argument: its sign decides the result's type: static
            # (a run-time loop's counter, `x / 2 ** k` in a while loop: unrolling it failed with "its
            # condition depends on array values", naming neither; probe AK)
            em.check(cmp(em, b, const(em, 0, b), "LT"),
                     "ValueError: a Python int to a negative power is a float in Python, so the result's type would "
                     "depend on the exponent's sign at run time; write the base as a float (2.0 ** -k)")
            return _unchecked_power.operator(em, a, b)
        _check_int_power(em, a, b)
        return _unchecked_power.operator(em, a, b)
    if not isinstance(a, Traced) or not _is_complex(em, a):
        return power(em, a, b)
    if type(b) in (int, float):
        return FUNCTIONS["numpy.sqrt"](em, a) if b == 0.5 else power(em, a, b)
    if isinstance(b, Traced) and b.weak in (int, float) and b.ndim == 0:   # a Python number argument
        half = cmp(em, em.cast(b, np.dtype(np.float64)), em.full(0.5, np.dtype(np.float64), ()), "EQ")
        root, general = FUNCTIONS["numpy.sqrt"](em, a), power(em, a, b)
        return Traced(sel(em, em.broadcast(half, general.shape), em.cast(root, general.dtype), general).value,
                      None, general.params)
    return power(em, a, b)


power.operator = _power_operator


@register("numpy.float_power")
def float_power(em, a, b):
    return FUNCTIONS["numpy.power"](em, cast_impl(em, a, np.float64) if not is_static(a) else np.float64(a),
                                    cast_impl(em, b, np.float64) if not is_static(b) else np.float64(b))
