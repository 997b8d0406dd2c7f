"""bits: functions that work on the representation of numbers: the integer ufuncs gcd, lcm and
bitwise_count, and the float ufuncs frexp, ldexp, modf, nextafter and spacing (exact: built from
the bits and from multiplications by powers of two, never from log or exp)."""
from __future__ import annotations

import numpy as np

from ...errors import NotSupportedError, ShapeError
from ..indexing import getitem
from ..operators import apply_operator
from ..registry import FUNCTIONS, register
from ..values import fold, is_static
from .creation import as_array
from .elementwise import cmp, const, sel, signbit
from .shapes import moveaxis, normalize_axis, reshape
from .ufuncs import ufunc

# Euclid's algorithm needs at most this many remainder steps for operands of each width (the
# worst case is two consecutive Fibonacci numbers: F(93) is the last below 2**64)
_EUCLID_STEPS = {1: 12, 2: 24, 4: 47, 8: 93}


def _abs_int(em, x):
    return x if x.dtype.kind == "u" else em.emit("abs", x)


def _gcd(em, a, b, out_dtype):
    a, b = _abs_int(em, a), _abs_int(em, b)
    zero, one = const(em, 0, a), const(em, 1, a)
    for _ in range(_EUCLID_STEPS[a.dtype.itemsize]):
        done = cmp(em, b, zero, "EQ")
        r = em.emit("rem", a, sel(em, done, one, b))
        a, b = sel(em, done, a, b), sel(em, done, zero, r)
    return a


def _lcm(em, a, b, out_dtype):
    """|a| / gcd * |b| in the unsigned type of the same width, as NumPy's npy_lcm (so a product
    that overflows wraps as NumPy's does)."""
    if a.dtype.kind == "i":
        u = np.dtype(f"u{a.dtype.itemsize}")
        unsigned = lambda x: em.emit("bitcast", _abs_int(em, x), dtype=u)
        return em.emit("bitcast", _lcm(em, unsigned(a), unsigned(b), u), dtype=a.dtype)
    g = _gcd(em, a, b, out_dtype)
    safe = sel(em, cmp(em, g, const(em, 0, g), "EQ"), const(em, 1, g), g)
    return sel(em, cmp(em, g, const(em, 0, g), "EQ"), g, em.emit("mul", em.emit("div", a, safe), b))


def _popcount(em, x, out_dtype):
    """Bits set in |x| (NumPy's bitwise_count), by the classic SWAR sums on the unsigned bits."""
    width = x.dtype.itemsize
    u = np.dtype(f"u{width}")
    v = em.emit("bitcast", _abs_int(em, x), dtype=u) if x.dtype.kind == "i" else x
    c = lambda value: em.full(value, u, v.shape)
    shr = lambda y, k: em.emit("shift_right_logical", y, c(k))
    m1, m2, m4 = (int("55" * width, 16), int("33" * width, 16), int("0f" * width, 16))
    v = em.emit("sub", v, em.emit("and", shr(v, 1), c(m1)))
    v = em.emit("add", em.emit("and", v, c(m2)), em.emit("and", shr(v, 2), c(m2)))
    v = em.emit("and", em.emit("add", v, shr(v, 4)), c(m4))
    if width > 1:    # the byte counts summed into the top byte
        v = shr(em.emit("mul", v, c(int("01" * width, 16))), 8 * (width - 1))
    return em.cast(v, out_dtype)


ufunc(np.gcd, _gcd, note="Euclid's algorithm unrolled (at most 93 steps for 64-bit integers)")
ufunc(np.lcm, _lcm)
ufunc(np.bitwise_count, _popcount)


def _float_bits(dt):
    """(integer dtype of the same width, mantissa bits, exponent bias) of a float dtype."""
    return {8: (np.dtype(np.int64), 52, 1023), 4: (np.dtype(np.int32), 23, 127),
            2: (np.dtype(np.int16), 10, 15)}[dt.itemsize]


def _power_of_two(em, k):
    """2.0 ** k in float64 for int64 k in [-1022, 1023], built from its exponent bits."""
    biased = em.emit("add", k, em.full(1023, np.int64, k.shape))
    bits = em.emit("shift_left", biased, em.full(52, np.int64, k.shape))
    return em.emit("bitcast", bits, dtype=np.dtype(np.float64))


def _ldexp64(em, m, e):
    """m * 2**e in float64, exact: e clamped to where the result is 0 or inf anyway, then applied as
    three powers of two, each representable (products of a power of two round only at overflow
    or underflow, and these move monotonically towards the result)."""
    e = em.cast(e, np.int64)
    e = em.emit("max", em.emit("min", e, em.full(2300, np.int64, e.shape)), em.full(-2300, np.int64, e.shape))
    three = em.full(3, np.int64, e.shape)
    k1 = em.emit("div", e, three)
    k2 = em.emit("div", em.emit("sub", e, k1), em.full(2, np.int64, e.shape))
    k3 = em.emit("sub", em.emit("sub", e, k1), k2)
    for k in (k1, k2, k3):
        m = em.emit("mul", m, _power_of_two(em, k))
    return m


def _ldexp(em, m, e, out_dtype):
    if m.dtype == np.float64:
        return _ldexp64(em, m, e)
    return em.cast(_ldexp64(em, em.cast(m, np.float64), e), m.dtype)   # exact in float64, rounded once


ufunc(np.ldexp, _ldexp, note="exact (three multiplications by powers of two); subnormal results are flushed "
                             "to zero, as every IREE CPU float op")


def _one_input_two_outputs(np_ufunc, lower, note=""):
    """A ufunc of one input and two outputs (modf, frexp), in NumPy's loop dtypes."""
    name = np_ufunc.__name__

    def impl(em, x, out=None, where=True, **kwargs):
        if out is not None or where is not True or kwargs:
            raise NotSupportedError(f"{name}: out=, where= and other keywords are not supported")
        if is_static(x):
            return fold(np_ufunc, x)
        try:
            loop = np_ufunc.resolve_dtypes((em.dtype_of(x), None, None))
        except (TypeError, ValueError) as e:
            raise ShapeError(f"{name}: {e}") from None
        v = em.operand(x, loop[0], em.shape_of(x))
        first, second = lower(em, v)
        return em.cast(first, loop[1]), em.cast(second, loop[2])
    impl.__name__ = name
    register(f"numpy.{name}", note=note)(impl)


def _modf(em, x):
    """(fractional part, integral part), both with x's sign: modf(-3.0) = (-0.0, -3.0),
    modf(inf) = (0.0, inf)."""
    t = sel(em, cmp(em, em.emit("abs", x), const(em, np.inf, x), "EQ"), x,
            sel(em, signbit(em, x), em.emit("ceil", x), em.emit("floor", x)))
    frac = sel(em, cmp(em, em.emit("abs", x), const(em, np.inf, x), "EQ"), const(em, 0.0, x), em.emit("sub", x, t))
    frac = sel(em, signbit(em, x), em.emit("neg", em.emit("abs", frac)), em.emit("abs", frac))
    return frac, t


def _frexp(em, x):
    """(mantissa in [0.5, 1) with x's sign, exponent) from the bits; 0, inf and NaN give (x, 0)."""
    ints, mant_bits, bias = _float_bits(x.dtype)
    bits = em.emit("bitcast", x, dtype=ints)
    c = lambda value: em.full(value, ints, x.shape)
    field = em.emit("and", em.emit("shift_right_logical", bits, c(mant_bits)), c((1 << (8 * ints.itemsize - 1 - mant_bits)) - 1))
    special = em.emit("or", cmp(em, field, c(0), "EQ"), cmp(em, field, c((1 << (8 * ints.itemsize - 1 - mant_bits)) - 1), "EQ"))
    exponent = sel(em, special, c(0), em.emit("sub", field, c(bias - 1)))
    clear = ~(((1 << (8 * ints.itemsize - 1 - mant_bits)) - 1) << mant_bits)
    mbits = em.emit("or", em.emit("and", bits, c(clear)), c((bias - 1) << mant_bits))
    mantissa = sel(em, special, x, em.emit("bitcast", mbits, dtype=x.dtype))
    return mantissa, exponent


_one_input_two_outputs(np.modf, _modf)
_one_input_two_outputs(np.frexp, _frexp, note="from the bits; subnormal inputs are flushed to zero, as every IREE "
                                              "CPU float op")


def _ordered(em, bits, ints):
    """Integers in the order of the floats whose bits they are (negative floats' magnitude bits
    flipped): comparisons without float compares, which IREE's CPU code makes on subnormals
    flushed to zero."""
    sign = em.emit("shift_right_arithmetic", bits, em.full(8 * ints.itemsize - 1, ints, bits.shape))
    return em.emit("xor", bits, em.emit("and", sign, em.full(np.iinfo(ints).max, ints, bits.shape)))


def _nextafter(em, x, y, out_dtype=None):
    """The float after x towards y, from x's bits: one step in the magnitude (bits + 1 or - 1,
    the sign bit untouched), the smallest subnormal of y's sign from 0, y where x == y, NaN where
    either is NaN. Bits and integer compares only: subnormal inputs and results are exact."""
    ints, mant_bits, _ = _float_bits(x.dtype)
    c = lambda v: em.full(v, ints, x.shape)
    bx, by = em.emit("bitcast", x, dtype=ints), em.emit("bitcast", y, dtype=ints)
    mx, my = (em.emit("and", b, c(np.iinfo(ints).max)) for b in (bx, by))
    inf = c(((1 << (8 * ints.itemsize - 1 - mant_bits)) - 1) << mant_bits)
    kx, ky = _ordered(em, bx, ints), _ordered(em, by, ints)
    x_zero, y_zero = cmp(em, mx, c(0), "EQ"), cmp(em, my, c(0), "EQ")
    up = cmp(em, ky, kx, "GT")
    away = cmp(em, up, em.emit("not", cmp(em, bx, c(0), "LT")), "EQ")   # towards y is away from 0
    step = sel(em, away, em.emit("add", bx, c(1)), em.emit("sub", bx, c(1)))
    tiny = sel(em, up, c(1), c(np.iinfo(ints).min + 1))                 # +-smallest subnormal
    out = sel(em, x_zero, tiny, step)
    same = em.emit("or", cmp(em, bx, by, "EQ"), em.emit("and", x_zero, y_zero))
    out = sel(em, same, by, out)
    nan = em.emit("or", cmp(em, mx, inf, "GT"), cmp(em, my, inf, "GT"))
    return sel(em, nan, const(em, np.nan, x), em.emit("bitcast", out, dtype=x.dtype))


def _spacing(em, x, out_dtype=None):
    """The distance from x to the next float away from zero, negative for x < 0: 2**(e - mantissa
    bits) for x's exponent e, built from bits (a subnormal for tiny x, exact); inf at the largest
    finite value, NaN at inf and NaN. float16 is refused: NumPy's own half-float spacing is
    positive for negative x and measures towards zero."""
    if x.dtype == np.float16:
        raise NotSupportedError("np.spacing of float16 is not supported", hint="cast to float32 first")
    ints, mant_bits, _ = _float_bits(x.dtype)
    c = lambda v: em.full(v, ints, x.shape)
    bits = em.emit("bitcast", x, dtype=ints)
    mag = em.emit("and", bits, c(np.iinfo(ints).max))
    field = em.emit("max", em.emit("shift_right_logical", mag, c(mant_bits)), c(1))   # subnormals: exponent 1
    biased = em.emit("sub", field, c(mant_bits))                       # the gap's biased exponent
    normal = em.emit("shift_left", biased, c(mant_bits))
    sub = em.emit("shift_left", c(1), em.emit("max", em.emit("add", biased, c(mant_bits - 1)), c(0)))
    gap = sel(em, cmp(em, biased, c(0), "GT"), normal, sub)
    inf = ((1 << (8 * ints.itemsize - 1 - mant_bits)) - 1) << mant_bits
    gap = sel(em, cmp(em, mag, c(inf - 1), "EQ"), c(inf), gap)          # the largest finite value
    gap = sel(em, cmp(em, mag, c(inf), "GE"), c(inf + 1), gap)          # inf and NaN: NaN
    negative = em.emit("and", cmp(em, bits, c(0), "LT"), cmp(em, mag, c(0), "NE"))
    return em.emit("bitcast", sel(em, negative, em.emit("or", gap, c(np.iinfo(ints).min)), gap), dtype=x.dtype)


ufunc(np.nextafter, _nextafter, note="from the bits: exact, subnormal results included")
ufunc(np.spacing, _spacing, note="from the bits: exact, subnormal results included; float32/64 only")


def _bit_weights(em, bitorder: str, name: str):
    bitorder = em.static(bitorder, f"{name}: bitorder")
    if bitorder not in ("big", "little"):
        raise ShapeError("ValueError: 'order' must be either 'little' or 'big'")
    shifts = np.arange(8, dtype=np.uint8)
    return shifts[::-1].copy() if bitorder == "big" else shifts


@register("numpy.packbits", note="axis a compile-time int or None; each group of eight elements (non-zero: "
                                 "a 1 bit) is one uint8, the last padded with zero bits")
def packbits(em, a, axis=None, bitorder="big"):
    a = as_array(em, a)
    if a.dtype.kind not in "biu":
        raise ShapeError("TypeError: Expected an input array of integer or boolean data type")
    shifts = _bit_weights(em, bitorder, "packbits")
    axis = em.static(axis, "packbits: axis")
    if axis is None:
        a, axis = reshape(em, a, -1), 0
    axis = normalize_axis(axis, a.ndim, "packbits")
    bits = moveaxis(em, em.cast(FUNCTIONS["numpy.not_equal"](em, a, 0), np.uint8), axis, -1)
    groups = -(-bits.shape[-1] // 8)
    bits = reshape(em, _zeros_after(em, bits, groups * 8), bits.shape[:-1] + (groups, 8))
    weights = em.constant((np.uint8(1) << shifts).astype(np.uint8))
    packed = FUNCTIONS["numpy.sum"](em, apply_operator(em, "Mult", bits, weights), axis=-1, dtype=np.uint8)
    return moveaxis(em, packed, -1, axis)


@register("numpy.unpackbits", note="axis and count compile-time; uint8 input")
def unpackbits(em, a, axis=None, count=None, bitorder="big"):
    a = as_array(em, a)
    if a.dtype != np.uint8:
        raise ShapeError("TypeError: Expected an input array of unsigned byte data type")
    shifts = _bit_weights(em, bitorder, "unpackbits")
    axis, count = em.static(axis, "unpackbits: axis"), em.static(count, "unpackbits: count")
    if axis is None:
        a, axis = reshape(em, a, -1), 0
    axis = normalize_axis(axis, a.ndim, "unpackbits")
    a = moveaxis(em, a, axis, -1)
    expanded = reshape(em, a, a.shape + (1,))
    bits = apply_operator(em, "BitAnd", apply_operator(em, "RShift", expanded, em.constant(shifts)), np.uint8(1))
    bits = reshape(em, bits, a.shape[:-1] + (a.shape[-1] * 8,))
    if count is not None:
        n = bits.shape[-1]
        if count < 0 and -count > n:
            raise ShapeError("ValueError: -count larger than number of elements")
        keep = count if count >= 0 else n + count
        bits = getitem(em, bits, (Ellipsis, slice(0, keep))) if keep <= n else _zeros_after(em, bits, keep)
    return moveaxis(em, bits, -1, axis)


def _zeros_after(em, x, n: int):
    """x with zeros after its elements along its last axis, up to length n (np.pad)."""
    if n == x.shape[-1]:
        return x
    return FUNCTIONS["numpy.pad"](em, x, [(0, 0)] * (x.ndim - 1) + [(0, n - x.shape[-1])])
