"""accurate: elementwise lowerings that match NumPy's float results where IREE's own ops do not
(measured in bench/accuracy.py): pow with ln x in double-double and C99's special cases, vectorised
float64 sin/cos, float32 exp near overflow, cbrt, hypot, complex division, exp2, and the hyperbolic
and inverse trigonometric functions composed from exp/log/atan2 as fdlibm does. Each is a function
(em, *operands[, out_dtype]) -> Traced on operands already in the loop dtype; ufuncs.py registers them."""
from __future__ import annotations

import math

import numpy as np

from ...program import FAST_TRIG_RETRY
from ..registry import FUNCTIONS
from .elementwise import cmp, const, in_double, isnan, sel

# ---------------------------------------------------------------- pow, with ln x in double-double

def _two_prod(em, a, b):
    """a * b as p + err exactly (Dekker, Veltkamp's split; no FMA), for |a|, |b| below 2**970."""
    op = em.emit
    c = lambda v: em.full(v, a.dtype, a.shape)

    def split(v):
        t = op("mul", v, c(134217729.0))
        hi = op("sub", t, op("sub", t, v))
        return hi, op("sub", v, hi)
    (ah, al), (bh, bl) = split(a), split(b)
    p = op("mul", a, b)
    err = op("add", op("add", op("add", op("sub", op("mul", ah, bh), p), op("mul", ah, bl)), op("mul", al, bh)),
             op("mul", al, bl))
    return p, err


def _two_sum(em, a, b):
    """a + b as s + err exactly (Knuth)."""
    op = em.emit
    s = op("add", a, b)
    bb = op("sub", s, a)
    return s, op("add", op("sub", a, op("sub", s, bb)), op("sub", b, bb))


def _ln_dd(k: int) -> tuple[float, float]:
    import decimal
    with decimal.localcontext(decimal.Context(prec=50)):
        d = (decimal.Decimal(k) / 8).ln()
        hi = float(d)
        return hi, float(d - decimal.Decimal(hi))


_LN_EIGHTHS = {k: _ln_dd(k) for k in range(9, 16)}          # ln(k/8) as hi + lo
_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10   # fdlibm's: k * _LN2_HI exact


def _log_double_double(em, ax):
    """ln(ax) as hi + lo, to about 2**-70 relative, for positive normal finite float64 ax.
    ax = 2**e * m with m in [0.97, 1.94) (the exponent field), then m = c * (1 + s) / (1 - s) with c
    the nearest eighth: ln(ax) = e ln 2 + ln c + 2 atanh(s), |s| <= 1/32, the leading terms in
    double-double (as fdlibm's pow does with its own table)."""
    op = em.emit
    f = lambda v: em.full(v, np.float64, ax.shape)
    i = lambda v: em.full(v, np.int64, ax.shape)
    bits = op("bitcast", ax, dtype=np.int64)
    e = op("sub", op("shift_right_logical", bits, i(52)), i(1023))
    m = op("bitcast", op("or", op("and", bits, i((1 << 52) - 1)), i(1023 << 52)), dtype=np.float64)   # [1, 2)
    top = cmp(em, m, f(1.9375), "GE")                     # nearest eighth 2: use m / 2 and c = 1 instead
    m = sel(em, top, op("mul", m, f(0.5)), m)
    ef = em.cast(sel(em, top, op("add", e, i(1)), e), np.float64)
    j = op("round_even", op("mul", m, f(8.0)))             # 8 .. 15
    c = op("mul", j, f(0.125))
    lnc_hi, lnc_lo = f(0.0), f(0.0)
    for k, (hi, lo) in _LN_EIGHTHS.items():
        is_k = cmp(em, j, f(float(k)), "EQ")
        lnc_hi, lnc_lo = sel(em, is_k, f(hi), lnc_hi), sel(em, is_k, f(lo), lnc_lo)
    u = op("sub", m, c)                                     # exact
    v, v_lo = _two_sum(em, m, c)
    s = op("div", u, v)
    p, p_err = _two_prod(em, s, v)
    s_lo = op("div", op("sub", op("sub", op("sub", u, p), p_err), op("mul", s, v_lo)), v)
    z = op("mul", s, s)
    poly = f(2 / 11)
    for coef in (2 / 9, 2 / 7, 2 / 5, 2 / 3):
        poly = op("add", f(coef), op("mul", z, poly))
    tail = op("mul", op("mul", s, z), poly)                # 2 atanh(s) - 2 s
    t1, t1_err = _two_sum(em, op("mul", ef, f(_LN2_HI)), lnc_hi)
    t2, t2_err = _two_sum(em, t1, op("mul", f(2.0), s))
    lo = op("add", op("add", op("add", t1_err, t2_err), op("add", op("mul", ef, f(_LN2_LO)), lnc_lo)),
            op("add", op("mul", f(2.0), s_lo), tail))
    hi = op("add", t2, lo)
    return hi, op("sub", lo, op("sub", hi, t2))


def _pow_accurate(em, ax, y):
    """|x| ** y for float64: exp(y * ln|x|) with the product in double-double, exp(t) * (1 + t_lo).
    IREE's pow is exp(y * log x) in plain float64, whose rounding error grows with |y log x|: up to
    1000 ulp for results near 1e300 (bench/accuracy.py); this is within 2. Where |x| is 0, inf,
    NaN or subnormal, or |y| >= 2**66 (|y ln x| > 2**13 unless x is 1: results 0, 1 or inf), IREE's pow."""
    op = em.emit
    f = lambda v: em.full(v, np.float64, ax.shape)
    ok = em.emit("and", em.emit("and", cmp(em, ax, f(np.finfo(np.float64).tiny), "GE"), em.emit("is_finite", ax)),
                 cmp(em, op("abs", y), f(2.0 ** 66), "LT"))
    safe_x, safe_y = sel(em, ok, ax, f(2.0)), sel(em, ok, y, f(1.0))
    hi, lo = _log_double_double(em, safe_x)
    t, t_err = _two_prod(em, safe_y, hi)
    t_lo = op("add", t_err, op("mul", safe_y, lo))
    r = op("exp", t)
    r = sel(em, op("is_finite", r), op("add", r, op("mul", r, t_lo)), r)
    return sel(em, ok, r, op("pow", ax, y))


def power(em, a, b, out_dtype):
    if a.dtype.kind != "f":
        return em.emit("pow", a, b)
    # IREE lowers float pow to exp(y * log x): wrong for x <= 0 and the IEEE special cases, and
    # imprecise in float32. Compute |x| ** y in float64, then apply C99 pow's rules as NumPy does.
    wide = np.dtype(np.float64)
    x, y = em.cast(a, wide), em.cast(b, wide)
    full = lambda v: em.full(v, wide, x.shape)
    zero, one = full(0.0), full(1.0)
    ax = em.emit("abs", x)
    # (under autodiff IREE's pow, a few ulp less accurate: the bits of x carry no derivative)
    r = em.emit("pow", ax, y) if em.differentiable else _pow_accurate(em, ax, y)
    y_int = cmp(em, em.emit("floor", y), y, "EQ")
    half = em.emit("mul", y, full(0.5))
    y_odd = em.emit("and", y_int, cmp(em, em.emit("floor", half), half, "NE"))
    x_neg = cmp(em, x, zero, "LT")
    x_finite = em.emit("is_finite", x)
    signed = sel(em, y_odd, em.emit("neg", r), r)
    r = sel(em, x_neg, sel(em, y_int, signed, sel(em, x_finite, full(np.nan), r)), r)
    # x == +-0: y > 0 -> +0 (x itself when y is odd), y < 0 -> +inf (copysign(inf, x) when odd)
    x_zero = cmp(em, x, zero, "EQ")
    y_pos = cmp(em, y, zero, "GT")
    # (x's sign as sign(x), which carries no derivative: x itself, or 1 / x, carried one that was
    # wrong or NaN at 0, where only these values are taken: d(x ** 3)/dx is 0 there)
    sign = em.emit("sign", x)
    zero_case = sel(em, y_pos, sel(em, y_odd, em.emit("mul", r, sign), zero),
                     sel(em, y_odd, em.emit("div", one, sign), full(np.inf)))
    y_nonzero = em.emit("or", y_pos, cmp(em, y, zero, "LT"))     # not y != 0: 0 ** nan is nan
    r = sel(em, em.emit("and", x_zero, y_nonzero), zero_case, r)
    # x == -1 with y = +-inf gives 1; y == 0 and x == 1 give 1 even with NaN on the other side
    ones = [em.emit("and", cmp(em, x, full(-1.0), "EQ"), cmp(em, em.emit("abs", y), full(np.inf), "EQ")),
            em.emit("or", cmp(em, y, zero, "EQ"), cmp(em, x, one, "EQ"))]
    for where in ones:   # under autodiff only where pow gave NaN: elsewhere it is 1 with its derivative
        r = sel(em, em.emit("and", where, cmp(em, r, r, "NE")) if em.differentiable else where, one, r)
    return em.cast(r, out_dtype)


# ---------------------------------------------------------------- hypot, complex division

def hypot(em, x, y, out_dtype=None):
    """C's hypot: +inf where either is infinite (even beside a NaN); float16/32 computed in float64
    (no overflow), float64 scaled by the larger magnitude."""
    ax, ay = em.emit("abs", x), em.emit("abs", y)
    f = lambda v, like=x: em.full(v, like.dtype, like.shape)
    if x.dtype != np.float64:
        wx, wy = em.cast(ax, np.float64), em.cast(ay, np.float64)
        r = em.cast(em.emit("sqrt", em.emit("add", em.emit("mul", wx, wx), em.emit("mul", wy, wy))), x.dtype)
    else:
        hi, lo = em.emit("max", ax, ay), em.emit("min", ax, ay)
        ratio = sel(em, cmp(em, hi, f(0.0), "EQ"), f(0.0), em.emit("div", lo, hi))
        r = em.emit("mul", hi, em.emit("sqrt", em.emit("add", f(1.0), em.emit("mul", ratio, ratio))))
    either_inf = em.emit("or", cmp(em, ax, f(np.inf), "EQ"), cmp(em, ay, f(np.inf), "EQ"))
    return sel(em, either_inf, f(np.inf), r)


def complex_divide(em, a, b, out_dtype=None):
    """NumPy's complex division (Smith's method, as its loops do it), from real operations."""
    ar, ai, br, bi = em.emit("real", a), em.emit("imag", a), em.emit("real", b), em.emit("imag", b)
    f = lambda v: em.full(v, ar.dtype, ar.shape)
    add, sub, mul, div = (lambda x, y, k=k: em.emit(k, x, y) for k in ("add", "sub", "mul", "div"))
    abr, abi = em.emit("abs", br), em.emit("abs", bi)
    rat1 = div(bi, br)
    scl1 = div(f(1), add(br, mul(bi, rat1)))
    re1, im1 = mul(add(ar, mul(ai, rat1)), scl1), mul(sub(ai, mul(ar, rat1)), scl1)
    zero = em.emit("and", cmp(em, abr, f(0), "EQ"), cmp(em, abi, f(0), "EQ"))
    re1, im1 = sel(em, zero, div(ar, abr), re1), sel(em, zero, div(ai, abr), im1)
    rat2 = div(br, bi)
    scl2 = div(f(1), add(bi, mul(br, rat2)))
    re2, im2 = mul(add(mul(ar, rat2), ai), scl2), mul(sub(mul(ai, rat2), ar), scl2)
    first = cmp(em, abr, abi, "GE")
    return em.emit("complex", sel(em, first, re1, re2), sel(em, first, im1, im2))


# ---------------------------------------------------------------- sin, cos

# float64 sin/cos: IREE calls the host libm one element at a time (about 11 ns per element here).
# Under @jit, for arrays of FAST_TRIG_ELEMENTS or more, a vectorised version instead: fdlibm's
# range reduction by pi/2 (three 33-bit pieces of pi/2 and their tails, good for |x| < 2**20 * pi/2)
# and its kernel polynomials on [-pi/4, pi/4], accurate to about an ulp. It is optimistic: a value
# with |x| > FAST_TRIG_LIMIT (or inf) sets the error code to FAST_TRIG_RETRY, and the @jit wrapper
# then compiles the function with libm's sin/cos and runs it again (and keeps that version for
# the template). A run-time `if` instead would split the fused kernel around every sin and cos.
FAST_TRIG_ELEMENTS = 1 << 14
FAST_TRIG_LIMIT = 1e6
_PIO2 = ((1.57079632673412561417e+00, 6.07710050650619224932e-11),    # pio2_1, pio2_1t
         (6.07710050630396597660e-11, 2.02226624879595063154e-21),    # pio2_2, pio2_2t
         (2.02226624871116645580e-21, 8.47842766036889956997e-32))    # pio2_3, pio2_3t
_SIN = (-1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
        2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10)
_COS = (4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
        -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11)


def sin_cos_kernels(em, y, c):
    """fdlibm's __kernel_sin and __kernel_cos of y, |y| <= pi / 4 (float64, within 1 ulp); `c`
    makes a float64 constant of y's shape."""
    op = em.emit
    z = op("mul", y, y)

    def horner(coeffs):
        acc = c(coeffs[-1])
        for k in coeffs[-2::-1]:
            acc = op("add", c(k), op("mul", z, acc))
        return acc
    sin_y = op("add", y, op("mul", op("mul", z, y), horner(_SIN)))
    hz = op("mul", c(0.5), z)
    one_m = op("sub", c(1.0), hz)
    cos_y = op("add", one_m, op("add", op("sub", op("sub", c(1.0), one_m), hz),
                                  op("mul", op("mul", z, z), horner(_COS))))
    return sin_y, cos_y


def _sincos_poly(em, x, prim):
    c = lambda v: em.full(v, np.float64, x.shape)
    op = em.emit
    fn = op("round_even", op("mul", x, c(2 / np.pi)))
    r = op("sub", x, op("mul", fn, c(_PIO2[0][0])))          # exact for |n| < 2**20
    w = op("mul", fn, c(_PIO2[0][1]))
    for hi, lo in _PIO2[1:]:                                  # fdlibm's second and third rounds
        t = r
        w = op("mul", fn, c(hi))
        r = op("sub", t, w)
        w = op("sub", op("mul", fn, c(lo)), op("sub", op("sub", t, r), w))
    y = op("sub", r, w)
    small = op("compare", op("abs", x), c(np.pi / 4), direction="LE")
    y = op("select", small, x, y)                            # no reduction: keeps -0.0 and tiny x exact
    fn = op("select", small, c(0.0), fn)
    sin_r, cos_r = sin_cos_kernels(em, y, c)
    n = op("add", fn, c(1.0)) if prim == "cos" else fn      # cos(x) = sin(x + pi/2)
    q = op("sub", n, op("mul", c(4.0), op("floor", op("mul", n, c(0.25)))))     # n mod 4, as a float
    is_q = lambda k: op("compare", q, c(float(k)), direction="EQ")
    # sin(y + n pi/2) by quadrant: sin, cos, -sin, -cos
    out = op("select", is_q(0), sin_r, op("select", is_q(1), cos_r,
                                          op("select", is_q(2), op("neg", sin_r), op("neg", cos_r))))
    if prim == "sin":   # sin(x) = x below 2**-27 (and -0.0 stays -0.0)
        out = op("select", op("compare", op("abs", x), c(2.0 ** -27), direction="LT"), x, out)
    return out


def sincos(prim):
    def f64(em, x):
        if not em.fast_trig or x.type.size < FAST_TRIG_ELEMENTS:
            return em.emit(prim, x)
        # x > L or x < -L, not |x| > L: the polynomial's own |x| would be shared with it
        limit = lambda v, d: em.emit("compare", x, em.full(v, np.float64, x.shape), direction=d)
        large = FUNCTIONS["numpy.any"](em, em.emit("or", limit(FAST_TRIG_LIMIT, "GT"), limit(-FAST_TRIG_LIMIT, "LT")))
        em.check(large, FAST_TRIG_RETRY, located=False)
        return _sincos_poly(em, x, prim)
    return in_double(f64)


# ---------------------------------------------------------------- exp near overflow, cbrt

_E16 = np.float32(np.exp(16.0))
_E16_TAIL = np.float32(np.exp(16.0) - float(_E16))


def exp_f32(prim):
    """exp/expm1. IREE's float32 ones are within 1-2 ulp except for x in (80, 88.7], just below
    overflow, where they are up to 6 ulp off (bench/accuracy.py): there exp(x) = exp(x - 16) * e**16,
    with x - 16 exact and e**16 as two float32 pieces (one exp either way): 1 ulp, as NumPy."""
    def lower(em, x, out_dtype=None):
        if x.dtype != np.float32:
            return em.emit(prim, x)
        c = lambda v: em.full(v, x.dtype, x.shape)
        big = em.emit("and", cmp(em, x, c(80.0), "GT"), cmp(em, x, c(89.0), "LT"))   # above: inf anyway
        p = em.emit(prim, sel(em, big, em.emit("sub", x, c(16.0)), x))   # expm1: -1 is below an ulp there
        scaled = em.emit("add", em.emit("mul", p, c(_E16)), em.emit("mul", p, c(_E16_TAIL)))
        return sel(em, big, scaled, p)
    return lower


def cbrt(em, x):
    """IREE's CPU backend can't lower float64 cbrt, and its float32 one is 12 ulp off and gives
    NaN at inf. |x| ** (1/3) (345 ulp off: the exponent 1/3 is rounded) and one Newton step,
    y + (|x| / y**2 - y) / 3, with the sign put back: within 1 ulp; float16/32 computed in float64."""
    a = em.emit("abs", x)
    c = lambda v: em.full(v, x.dtype, x.shape)
    y = em.emit("pow", a, c(1.0 / 3.0))
    step = em.emit("add", y, em.emit("div", em.emit("sub", em.emit("div", a, em.emit("mul", y, y)), y), c(3.0)))
    ok = em.emit("and", em.emit("is_finite", y), cmp(em, y, c(0.0), "NE"))   # 0 and inf: y itself
    return em.emit("mul", em.emit("sign", x), sel(em, ok, step, y))


# ---------------------------------------------------------------- exp2, logs, hyperbolic and inverse trigonometric

LN2, LN10 = math.log(2.0), math.log(10.0)


def _veltkamp(v: float) -> tuple[float, float]:
    """Veltkamp's split of a float64 into two 26-bit halves (their products are exact)."""
    t = v * 134217729.0
    hi = t - (t - v)
    return hi, v - hi


_LN2_SPLIT_HI, _LN2_SPLIT_LO = _veltkamp(LN2)
_LN2_TAIL = 2.319046813846299558e-17      # ln 2 - float64(ln 2)


def exp2(em, x):
    """exp(x * ln 2) alone was 720 ulp off near 1024 (the product's rounding, times |x|) and gave
    a finite 2 ** 1024. The product as an exact sum p + e (Dekker's, with ln 2's own tail), then
    exp(p) * (1 + e): within 2 ulp (bench/accuracy.py)."""
    c = lambda v: const(em, v, x)
    op = em.emit
    xc = op("max", op("min", x, c(1100.0)), c(-1100.0))    # beyond: 0 or inf either way; no overflow below
    t = op("mul", xc, c(134217729.0))
    xh = op("sub", t, op("sub", t, xc))
    xl = op("sub", xc, xh)
    p = op("mul", xc, c(LN2))
    e = op("add", op("add", op("add", op("sub", op("mul", xh, c(_LN2_SPLIT_HI)), p), op("mul", xh, c(_LN2_SPLIT_LO))),
                     op("mul", xl, c(_LN2_SPLIT_HI))), op("mul", xl, c(_LN2_SPLIT_LO)))
    e = op("add", e, op("mul", xc, c(_LN2_TAIL)))
    r = op("exp", p)
    r = sel(em, op("is_finite", r), op("add", r, op("mul", r, e)), r)   # inf * e may be -inf
    return sel(em, isnan(em, x), x, r)


def log_base(base_log):
    return lambda em, x: em.emit("div", em.emit("log", x), const(em, base_log, x))


def _exp_half_squared(em, a):
    """exp(a) / 2 for a = |x| in (709, 710.5], where exp(a) overflows but sinh and cosh don't
    (they gave inf there): (exp(a / 2) / 2) * exp(a / 2), as fdlibm."""
    w = em.emit("exp", em.emit("mul", a, const(em, 0.5, a)))
    return em.emit("mul", em.emit("mul", w, const(em, 0.5, a)), w)


def sinh(em, x):   # via expm1: no cancellation near 0
    r = em.emit("mul", em.emit("sub", em.emit("expm1", x), em.emit("expm1", em.emit("neg", x))), const(em, 0.5, x))
    a = em.emit("abs", x)
    return sel(em, cmp(em, a, const(em, 709.0, x), "GT"), em.emit("mul", em.emit("sign", x), _exp_half_squared(em, a)), r)


def cosh(em, x):
    r = em.emit("mul", em.emit("add", em.emit("exp", x), em.emit("exp", em.emit("neg", x))), const(em, 0.5, x))
    a = em.emit("abs", x)
    return sel(em, cmp(em, a, const(em, 709.0, x), "GT"), _exp_half_squared(em, a), r)


def _one_minus_sq(em, x):   # (1 - x)(1 + x): exact near |x| = 1
    one = const(em, 1.0, x)
    return em.emit("mul", em.emit("sub", one, x), em.emit("add", one, x))


def arcsin(em, x):
    return em.emit("atan2", x, em.emit("sqrt", _one_minus_sq(em, x)))


def arccos(em, x):
    return em.emit("atan2", em.emit("sqrt", _one_minus_sq(em, x)), x)


def arctan(em, x):
    return em.emit("atan2", x, const(em, 1.0, x))


def arcsinh(em, x):
    a = em.emit("abs", x)
    sq = em.emit("mul", a, a)
    one = const(em, 1.0, x)
    inner = em.emit("add", a, em.emit("div", sq, em.emit("add", one, em.emit("sqrt", em.emit("add", one, sq)))))
    big = cmp(em, a, const(em, 1e150, x), "GT")   # x*x would overflow: asinh(x) ~ log(2|x|)
    r = sel(em, big, em.emit("add", em.emit("log", a), const(em, LN2, x)), em.emit("log1p", inner))
    return em.emit("mul", em.emit("sign", x), r)


def arccosh(em, x):
    """fdlibm's e_acosh: log1p(t + sqrt(2t + t*t)) with t = x - 1 below 2, log(2x - 1/(x + sqrt(x*x - 1)))
    below 2**28, log(x) + ln 2 above. log(x + sqrt((x-1)(x+1))) was 2.5e7 ulp off at 1 + 2**-52
    (and gave inf at -huge); now within 2 ulp (bench/accuracy.py)."""
    c = lambda v: const(em, v, x)
    op = em.emit
    t = op("sub", x, c(1.0))
    near = op("log1p", op("add", t, op("sqrt", op("add", op("mul", c(2.0), t), op("mul", t, t)))))
    mid = op("log", op("sub", op("mul", c(2.0), x),
                       op("div", c(1.0), op("add", x, op("sqrt", op("sub", op("mul", x, x), c(1.0)))))))
    big = op("add", op("log", x), c(LN2))
    r = sel(em, cmp(em, x, c(2.0), "LT"), near, sel(em, cmp(em, x, c(2.0 ** 28), "LT"), mid, big))
    return sel(em, cmp(em, x, c(1.0), "LT"), c(np.nan), r)


def arctanh(em, x):
    """fdlibm's e_atanh, on |x| with the sign put back: 0.5 * log1p(2a + 2a*a / (1 - a)) below 0.5,
    0.5 * log1p(2a / (1 - a)) above. log1p(2x / (1 - x)) for negative x was 1e14 ulp off near -1
    (log1p near -1); now within 2 ulp (bench/accuracy.py)."""
    c = lambda v: const(em, v, x)
    op = em.emit
    a = op("abs", x)
    two_a = op("mul", c(2.0), a)
    one_m = op("sub", c(1.0), a)
    small = op("add", two_a, op("div", op("mul", two_a, a), one_m))
    r = op("mul", c(0.5), op("log1p", sel(em, cmp(em, a, c(0.5), "LT"), small, op("div", two_a, one_m))))
    return op("mul", op("sign", x), r)


def complex_exp(em, z):
    """exp(x + iy) = e**x (cos y + i sin y), with C99's special values (as NumPy's cexp): the
    expansion alone gives NaN for e**-inf times a NaN or infinite sin/cos, and for inf * sin 0, and
    inf where e**x overflows but e**x cos y does not (x > 700: e**(x/2) twice)."""
    r = em.emit("exp", z)
    x, y = em.emit("real", z), em.emit("imag", z)
    c = lambda v: em.full(v, x.dtype, x.shape)
    re, im = em.emit("real", r), em.emit("imag", r)
    big = em.emit("and", cmp(em, x, c(700.0), "GT"), em.emit("is_finite", x))   # e**x overflows before e**x cos y
    h = em.emit("exp", em.emit("mul", sel(em, big, x, c(0.0)), c(0.5)))
    re = sel(em, big, em.emit("mul", em.emit("mul", h, em.emit("cos", y)), h), re)
    im = sel(em, big, em.emit("mul", em.emit("mul", h, em.emit("sin", y)), h), im)
    y_bad = em.emit("not", em.emit("is_finite", y))
    neg_inf, pos_inf = cmp(em, x, c(-np.inf), "EQ"), cmp(em, x, c(np.inf), "EQ")
    re = sel(em, em.emit("and", neg_inf, y_bad), c(0.0), re)
    im = sel(em, em.emit("and", neg_inf, y_bad), c(0.0), im)
    re = sel(em, em.emit("and", pos_inf, y_bad), c(np.inf), re)
    im = sel(em, em.emit("and", pos_inf, y_bad), c(np.nan), im)
    im = sel(em, cmp(em, y, c(0.0), "EQ"), y, im)    # exp(x + 0i) is real, for x = inf or NaN too
    return em.emit("complex", re, im)


# ---------------------------------------------------------------- erf, erfc (fdlibm's s_erf.c)

_ERX = 8.45062911510467529297e-01
_EFX = 1.28379167095512586316e-01
_PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
       -5.77027029648944159157e-03, -2.37630166566501626084e-05)
_QQ = (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
       1.32494738004321644526e-04, -3.96022827877536812320e-06)
_PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
       3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
       -2.16637559486879084300e-03)
_QA = (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
       1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02)
_RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
       -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
       -8.12874355063065934246e+01, -9.81432934416914548592e+00)
_SA = (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
       6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
       6.57024977031928170135e+00, -6.04244152148580987438e-02)
_RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
       -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
       -4.83519191608651397019e+02)
_SB = (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
       3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
       -2.24409524465858183362e+01)


def _horner(em, z, coefficients):
    out = const(em, coefficients[-1], z)
    for c in reversed(coefficients[:-1]):
        out = em.emit("add", const(em, c, z), em.emit("mul", z, out))
    return out


def _erf_parts(em, x):
    """The pieces fdlibm's erf and erfc share, on float64 x: |x|'s high word (the thresholds are
    compared there, as fdlibm does), the small-|x| ratio y with erf(x) = x + x*y, P/Q near 1, and
    r = exp(-x*x - 0.5625 + R/S) / |x| with erfc(|x|) = r (from 1.25 up; -x*x split exactly)."""
    op = em.emit
    c = lambda v: const(em, v, x)
    i = lambda v: em.full(v, np.int64, x.shape)
    a = op("abs", x)
    ix = op("shift_right_logical", op("bitcast", a, dtype=np.int64), i(32))
    z2 = op("mul", x, x)
    y = op("div", _horner(em, z2, _PP), _horner(em, z2, _QQ))
    s = op("sub", a, c(1.0))
    pq = op("div", _horner(em, s, _PA), _horner(em, s, _QA))
    inv = op("div", c(1.0), op("mul", a, a))
    return ix, y, pq, inv, a


def _erfc_tail(em, a, inv, near):
    """exp(-z*z - 0.5625) * exp((z - a)(z + a) + R/S) / a, z = a with its low 32 bits cleared;
    `near`: a < 1/0.35, where R/S is the first of fdlibm's two rational fits."""
    op = em.emit
    c = lambda v: const(em, v, a)
    rs = sel(em, near, op("div", _horner(em, inv, _RA), _horner(em, inv, _SA)),
             op("div", _horner(em, inv, _RB), _horner(em, inv, _SB)))
    z = op("bitcast", op("and", op("bitcast", a, dtype=np.int64), em.full(-(1 << 32), np.int64, a.shape)),
           dtype=np.float64)
    e1 = op("exp", op("sub", op("neg", op("mul", z, z)), c(0.5625)))
    e2 = op("exp", op("add", op("mul", op("sub", z, a), op("add", z, a)), rs))
    return op("div", op("mul", e1, e2), a)


def erf(em, x):
    """fdlibm's erf (glibc's and so Python's math.erf): x + x*P/Q below 0.84375, +-(erx + P/Q)
    below 1.25, +-(1 - erfc tail) below 6, +-1 beyond; NaN stays NaN."""
    op = em.emit
    c = lambda v: const(em, v, x)
    i = lambda v: em.full(v, np.int64, x.shape)
    ix, y, pq, inv, a = _erf_parts(em, x)
    sign = op("sign", x)
    small = sel(em, cmp(em, ix, i(0x3e300000), "LT"), op("add", x, op("mul", c(_EFX), x)), op("add", x, op("mul", x, y)))
    mid = op("mul", sign, op("add", c(_ERX), pq))
    tail = op("mul", sign, op("sub", c(1.0), _erfc_tail(em, a, inv, cmp(em, ix, i(0x4006DB6E), "LT"))))
    out = sel(em, cmp(em, ix, i(0x3feb0000), "LT"), small,
              sel(em, cmp(em, ix, i(0x3ff40000), "LT"), mid,
                  sel(em, cmp(em, ix, i(0x40180000), "LT"), tail, sign)))
    return sel(em, isnan(em, x), x, out)


def erfc(em, x):
    """fdlibm's erfc: 1 - erf near 0 (arranged to lose nothing), 1 -+ (erx + P/Q) below 1.25, the
    tail exp(...)/|x| (2 minus it for negative x) below 28, 0 or 2 beyond; NaN stays NaN."""
    op = em.emit
    c = lambda v: const(em, v, x)
    i = lambda v: em.full(v, np.int64, x.shape)
    ix, y, pq, inv, a = _erf_parts(em, x)
    negative = cmp(em, x, c(0.0), "LT")
    xy = op("mul", x, y)
    quarter = em.emit("and", em.emit("not", negative), cmp(em, x, c(0.25), "GE"))   # hx >= 0x3fd00000
    small = sel(em, quarter, op("sub", c(0.5), op("add", xy, op("sub", x, c(0.5)))),
                op("sub", c(1.0), op("add", x, xy)))
    small = sel(em, cmp(em, ix, i(0x3c700000), "LT"), op("sub", c(1.0), x), small)
    mid = sel(em, negative, op("add", c(1.0), op("add", c(_ERX), pq)), op("sub", c(1.0 - _ERX), pq))
    r = _erfc_tail(em, a, inv, cmp(em, ix, i(0x4006DB6D), "LT"))
    tail = sel(em, negative, op("sub", c(2.0), r), r)
    tail = sel(em, em.emit("and", negative, cmp(em, ix, i(0x40180000), "GE")), c(2.0), tail)
    far = sel(em, negative, c(2.0), c(0.0))
    out = sel(em, cmp(em, ix, i(0x3feb0000), "LT"), small,
              sel(em, cmp(em, ix, i(0x3ff40000), "LT"), mid,
                  sel(em, cmp(em, ix, i(0x403c0000), "LT"), tail, far)))
    return sel(em, isnan(em, x), x, out)


# ---------------------------------------------------------------- x ** n for a compile-time n

def _dd_mul(em, a, b):
    """(a_hi + a_lo) * (b_hi + b_lo) in double-double, renormalised."""
    op = em.emit
    p, e = _two_prod(em, a[0], b[0])
    e = op("add", e, op("add", op("mul", a[0], b[1]), op("mul", a[1], b[0])))
    s = op("add", p, e)
    return s, op("sub", e, op("sub", s, p))


def small_power(em, x, n: int, half: bool):
    """x ** (n + 0.5 * half) for a compile-time integer n with 1 <= |n| <= 32 (x ** 3 in an n-body
    force, r ** 6 and r ** 12 in Lennard-Jones, r ** 1.5): x ** |n| by squaring, in double-double
    for float64 (a plain float64 product for float16/32, computed in float64: far below their
    ulp), then 1 / that for n < 0 and times sqrt(x) for the half; within 1 ulp of pow, as the
    general path (ln x in double-double, then exp), at a quarter of its cost. Zeros, infinities,
    NaN and results past the range take the plain product's value (C99 pow's)."""
    op = em.emit
    wide = x.dtype == np.float64
    y = x if wide else em.cast(x, np.float64)
    f = lambda v: em.full(v, np.float64, y.shape)
    zero = f(0.0)
    plain, dd, square, base, k = None, None, y, (y, zero), abs(n)
    while k:
        if k & 1:
            plain = square if plain is None else op("mul", plain, square)
            if wide:
                dd = base if dd is None else _dd_mul(em, dd, base)
        k >>= 1
        if k:
            square = op("mul", square, square)
            if wide:
                base = _dd_mul(em, base, base)
    mag = plain
    if wide:
        hi, lo = dd
        good = em.emit("and", op("is_finite", hi), cmp(em, hi, zero, "NE"))
        mag = sel(em, good, sel(em, cmp(em, lo, zero, "NE"), op("add", hi, lo), hi), plain)
    r = mag
    if n < 0:
        r = op("div", f(1.0), mag)
        if wide:     # one Newton step on the double-double: 1 / (hi + lo) to within an ulp
            p, pe = _two_prod(em, r, hi)
            rem = op("sub", op("sub", op("sub", f(1.0), p), pe), op("mul", r, lo))
            fine = em.emit("and", good, cmp(em, op("abs", r), f(2.0 ** 960), "LT"))   # (_two_prod's range)
            r = sel(em, fine, op("add", r, op("mul", r, rem)), r)
    if half:     # pow(+-0, y) = +0 and pow(-inf, y) = inf for y > 0 not an odd integer
        r = op("mul", r, op("sqrt", y))
        r = sel(em, cmp(em, y, zero, "EQ"), zero, sel(em, cmp(em, y, f(-np.inf), "EQ"), f(np.inf), r))
    return r if wide else em.cast(r, x.dtype)
