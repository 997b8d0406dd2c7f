"""fft: numpy.fft (fft, ifft, rfft, irfft, hfft, ihfft, their 2-D and N-D forms, fftfreq, rfftfreq,
fftshift, ifftshift) built from the IR's primitives, with NumPy's dtypes (float32 and float16 give
complex64, the rest complex128; irfft gives the input's real dtype), `n=`/`s=` padding and cropping,
and `norm=`.

A transform of length n is a product with the DFT matrix where n is at most 64 or a prime up to 256
(four real dot_generals), else the four-step Cooley-Tukey split n = n1 * n2: transforms of length
n1, a multiplication by twiddle factors, transforms of length n2 (recursively), written as
reshapes, transposes and contractions over one axis; larger primes go through Bluestein's
convolution, and rfft of an even length through a complex transform of half that length. Every twiddle factor and DFT matrix is computed at run
time from iota (see _roots): the exponent is reduced exactly in integers before it becomes an angle
within pi/4, whose sine and cosine are fdlibm's float64 kernels (no libm, no argument reduction).
The iotas pass through an optimization barrier: IREE 3.13 otherwise hoists every op of that
computation into a global of its own, evaluated at compile time (const-eval), which took 2 s of a
3 s compile for n = 8; computed in the call, they fuse into one elementwise dispatch (n = 8 compiled
in 0.7 s of CPU time instead of 2.0)."""
from __future__ import annotations

import math

import numpy as np

from ...errors import NotSupportedError, ShapeError
from ...ir.types import is_complex, real_dtype
from ..registry import FUNCTIONS, register
from ..values import Traced, fold, is_static, items_of
from .accurate import sin_cos_kernels   # fdlibm's kernels
from .creation import as_array
from .shapes import normalize_axis

F = FUNCTIONS
INT64 = np.dtype(np.int64)
F64 = np.dtype(np.float64)

# Lengths up to DIRECT_MAX are one product with the DFT matrix (n * n complex multiply-adds per
# transform, and no twiddle pass); longer ones are split in two factors as close to sqrt(n) as
# possible.
DIRECT_MAX = 64
# Primes above BLUESTEIN_MIN are transformed by Bluestein's algorithm (a convolution computed by
# transforms of a power-of-two length) instead of their n x n DFT matrix.
BLUESTEIN_MIN = 256
NORMS = (None, "backward", "ortho", "forward")


# ---------------------------------------------------------------- the transform along one axis

def _split(n: int) -> tuple[int, int] | None:
    """(n1, n2), n1 * n2 == n, n1 the largest divisor of n up to sqrt(n); None for a prime."""
    for n1 in range(math.isqrt(n), 1, -1):
        if n % n1 == 0:
            return n1, n // n1
    return None


def _roots(em, rows: int, cols: int, n: int, sign: int, dtype) -> Traced:
    """The (rows, cols) complex matrix exp(sign * 2 pi i * j * k / n), j the row and k the column."""
    j, k = (em.emit("barrier", em.emit("iota", shape=(rows, cols), dim=d, dtype=INT64)) for d in (0, 1))
    return _exp_i(em, em.emit("mul", j, k), n, sign, dtype)                  # exact: j * k < 2**63


def _exp_i(em, e: Traced, n: int, sign: int, dtype, scale: float = 1.0) -> Traced:
    """scale * exp(sign * 2 pi i * e / n) for the non-negative int64 exponents e, as `dtype`.
    The exponent is reduced exactly in integers: 4 (e mod n) = q n + r with |r| <= n / 2, so the
    angle is q pi / 2 plus r pi / (2 n), within pi / 4, where fdlibm's sine and cosine kernels need
    no argument reduction; the quadrant q picks and negates them."""
    shape = e.shape
    op = em.emit
    i64 = lambda v: em.full(v, INT64, shape)
    f64 = lambda v: em.full(v, F64, shape)
    t = op("mul", op("rem", e, i64(n)), i64(4))
    q = op("rem", op("div", op("add", t, i64(n // 2)), i64(n)), i64(4))        # round(t / n) mod 4
    r = op("sub", t, op("mul", q, i64(n)))
    r = op("select", op("compare", r, i64(2 * n), direction="GT"), op("sub", r, i64(4 * n)), r)
    y = op("mul", op("convert", r, dtype=F64), f64(np.pi / (2 * n)))
    sin_y, cos_y = sin_cos_kernels(em, y, f64)
    is_q = lambda v: op("compare", q, i64(v), direction="EQ")
    neg = lambda v: op("neg", v)
    cos = op("select", is_q(0), cos_y, op("select", is_q(1), neg(sin_y), op("select", is_q(2), neg(cos_y), sin_y)))
    sin = op("select", is_q(0), sin_y, op("select", is_q(1), cos_y, op("select", is_q(2), neg(sin_y), neg(cos_y))))
    if sign < 0:
        sin = neg(sin)
    if scale != 1.0:
        cos, sin = op("mul", cos, f64(scale)), op("mul", sin, f64(scale))
    part = real_dtype(np.dtype(dtype))
    return op("complex", em.cast(cos, part), em.cast(sin, part))


def _bluestein(em, x: Traced, axis: int, sign: int) -> Traced:
    """The DFT of a long prime length n as a circular convolution of length m >= 2n - 1, a power of
    two (Bluestein): with c_j = exp(sign pi i j^2 / n), X_k = c_k sum_j (x_j c_j) conj(c_(k-j)), since
    j k = (j^2 + k^2 - (k - j)^2) / 2. j^2 mod 2n is exact in int64, so the chirp is as accurate as
    the twiddles. Three transforms of length m instead of n * n multiply-adds per row."""
    n = x.shape[axis]
    m = 1 << (2 * n - 2).bit_length()
    y = _to_last(em, x, axis)
    last = y.ndim - 1
    j = em.emit("barrier", em.emit("iota", shape=(n,), dim=0, dtype=INT64))
    square = em.emit("mul", j, j)
    chirp = _exp_i(em, square, 2 * n, sign, x.dtype)
    a = _resize(em, em.emit("mul", y, em.broadcast(chirp, y.shape)), last, m)
    conj = _exp_i(em, square, 2 * n, -sign, x.dtype)
    tail = em.emit("reverse", em.emit("slice", conj, start=(1,), limit=(n,), strides=(1,)), dims=(0,))
    b = em.emit("concatenate", _resize(em, conj, 0, m - n + 1), tail, axis=0)
    spectrum = em.emit("mul", _dft(em, a, last, -1), em.broadcast(_dft(em, b, 0, -1), a.shape))
    conv = _dft(em, spectrum, last, 1)
    limit = conv.shape[:-1] + (n,)
    conv = em.emit("slice", conv, start=(0,) * conv.ndim, limit=limit, strides=(1,) * conv.ndim)
    return em.emit("mul", conv, em.broadcast(_exp_i(em, square, 2 * n, sign, x.dtype, 1.0 / m), conv.shape))


def _contract(em, x: Traced, axis: int, w: Traced) -> Traced:
    """sum_j x[..., j, ...] * w[j, k]: x's other axes in order, then k. As four real products: IREE
    3.13's complex contractions were slower (fft of (64, 4096) complex64: 2.5 ms as complex
    dot_generals, 1.0 ms as real ones; complex128 12.4 -> 8.0 ms; (256, 256) complex128 0.53 -> 0.20 ms)."""
    dot = lambda a, b: em.emit("dot_general", a, b, lhs_contract=(axis,), rhs_contract=(0,), lhs_batch=(), rhs_batch=())
    xr, xi, wr, wi = em.emit("real", x), em.emit("imag", x), em.emit("real", w), em.emit("imag", w)
    return em.emit("complex", em.emit("sub", dot(xr, wr), dot(xi, wi)), em.emit("add", dot(xr, wi), dot(xi, wr)))


def _to_last(em, x: Traced, axis: int) -> Traced:
    if axis == x.ndim - 1:
        return x
    perm = tuple(d for d in range(x.ndim) if d != axis) + (axis,)
    return em.emit("transpose", x, perm=perm)


def _dft(em, x: Traced, axis: int, sign: int) -> Traced:
    """The unscaled DFT of complex x along `axis` (sign -1 forward, +1 inverse), that axis moved last."""
    n = x.shape[axis]
    if n == 1:
        return _to_last(em, x, axis)
    halves = None if n <= DIRECT_MAX else _split(n)
    if halves is None and n > BLUESTEIN_MIN:
        return _bluestein(em, x, axis, sign)
    if halves is None:
        return _contract(em, x, axis, _roots(em, n, n, n, sign, x.dtype))
    n1, n2 = halves
    y = _to_last(em, x, axis)
    lead = y.shape[:-1]
    y = em.emit("reshape", y, shape=lead + (n1, n2))                          # [j1, j2], j = n2 j1 + j2
    nd = y.ndim
    y = _dft(em, y, nd - 2, sign)                                              # [j2, k1]
    y = em.emit("mul", y, em.broadcast(_roots(em, n2, n1, n, sign, x.dtype), y.shape))
    y = _dft(em, y, nd - 2, sign)                                              # [k1, k2]
    y = em.emit("transpose", y, perm=tuple(range(nd - 2)) + (nd - 1, nd - 2))  # [k2, k1], k = k1 + n1 k2
    return em.emit("reshape", y, shape=lead + (n,))


def _transform(em, x: Traced, axis: int, sign: int) -> Traced:
    """_dft with the transformed axis back in its place; an empty array stays empty."""
    if x.type.size == 0:
        return em.constant(np.zeros(x.shape, x.dtype))
    y = _dft(em, x, axis, sign)
    if axis == y.ndim - 1:
        return y
    return em.emit("transpose", y, perm=tuple(range(axis)) + (y.ndim - 1,) + tuple(range(axis, y.ndim - 1)))


def _resize(em, x: Traced, axis: int, n: int) -> Traced:
    """x cropped or padded with zeros to length n along axis (NumPy's n=)."""
    size = x.shape[axis]
    if n < size:
        limit = tuple(n if d == axis else s for d, s in enumerate(x.shape))
        return em.emit("slice", x, start=(0,) * x.ndim, limit=limit, strides=(1,) * x.ndim)
    if n > size:
        high = tuple(n - size if d == axis else 0 for d in range(x.ndim))
        pad = lambda v: em.emit("pad", v, em.constant(np.zeros((), v.dtype)), low=(0,) * x.ndim, high=high,
                                interior=(0,) * x.ndim)
        if is_complex(x.dtype):   # part by part: IREE 3.13 can't splat a complex128 padding value (i128)
            return em.emit("complex", pad(em.emit("real", x)), pad(em.emit("imag", x)))
        return pad(x)
    return x


def _real_dtype(dt) -> np.dtype:
    """NumPy's result_type(a.real.dtype, 1.0): the dtype its normalisation factor is computed in."""
    return np.result_type(real_dtype(dt) if is_complex(dt) else dt, 1.0)


def _scale(em, x: Traced, n: int, norm, forward: bool, part) -> Traced:
    """x times NumPy's normalisation factor, computed as NumPy computes it: in `part` (float16
    for float16 input, although the transform runs in complex64), then applied in x's precision."""
    if norm not in NORMS:
        raise ShapeError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    scaled = "forward" if forward else "backward"   # the direction norm= names is the one scaled by 1/n
    if norm == "ortho":
        fct = np.reciprocal(np.sqrt(n, dtype=part))
    elif (norm or "backward") == scaled:
        fct = np.reciprocal(n, dtype=part)
    else:
        return x
    if not is_complex(x.dtype):
        return em.emit("mul", x, em.full(fct, x.dtype, x.shape))
    f = em.full(fct, real_dtype(x.dtype), x.shape)
    return em.emit("complex", em.emit("mul", em.emit("real", x), f), em.emit("mul", em.emit("imag", x), f))


def _fft1(em, a, n, axis, norm, out, name, forward: bool, real_in=False) -> Traced:
    """fft/ifft (and rfft with real_in) along one axis, as numpy.fft._raw_fft."""
    if out is not None:
        raise NotSupportedError(f"{name}: out= is not supported", hint="use the returned array")
    n, axis, norm = em.static(n, f"{name}: n"), em.static(axis, f"{name}: axis"), em.static(norm, f"{name}: norm")
    x = as_array(em, a)
    if real_in and is_complex(x.dtype):
        raise ShapeError(f"{name}: complex input is not supported (NumPy raises TypeError: the input must be real)")
    ax = normalize_axis(axis, x.ndim, name)
    n = x.shape[ax] if n is None else int(n)
    if n < 1:
        raise ShapeError(f"{name}: Invalid number of FFT data points ({n}) specified.")
    cdt = np.result_type(x.dtype, 1j)
    part = _real_dtype(x.dtype)
    if real_in and n % 2 == 0 and x.type.size:   # (64, 4096) float64: 3.3 -> 2.4 ms
        y = _rfft_even(em, _resize(em, em.cast(x, real_dtype(cdt)), ax, n), ax)
        return _scale(em, y, n, norm, forward, part)
    x = _resize(em, em.cast(x, cdt), ax, n)
    y = _transform(em, x, ax, -1 if forward else 1)
    if real_in:
        y = _resize(em, y, ax, n // 2 + 1)
    return _scale(em, y, n, norm, forward, part)


def _rfft_even(em, x: Traced, axis: int) -> Traced:
    """The first n / 2 + 1 terms of the DFT of real x of even length n along axis, from one complex
    transform of half the length: z_j = x_2j + i x_2j+1 has the DFT Z, and with Z_h = Z_0 (h = n/2),
    X_k = E_k + exp(-2 pi i k / n) O_k, E_k = (Z_k + conj Z_h-k) / 2, O_k = (Z_k - conj Z_h-k) / 2i."""
    y = _to_last(em, x, axis)
    lead, n = y.shape[:-1], y.shape[-1]
    h = n // 2
    pairs = em.emit("reshape", y, shape=lead + (h, 2))
    nd = pairs.ndim
    parts = [em.emit("reshape", em.emit("slice", pairs, start=(0,) * (nd - 1) + (p,), limit=pairs.shape[:-1] + (p + 1,),
                                        strides=(1,) * nd), shape=lead + (h,)) for p in (0, 1)]
    z = _dft(em, em.emit("complex", *parts), nd - 2, -1)                       # (..., h)
    last = z.ndim - 1
    cut = lambda v, lo, hi: em.emit("slice", v, start=(0,) * last + (lo,), limit=lead + (hi,), strides=(1,) * z.ndim)
    first = cut(z, 0, 1)
    ext = em.emit("concatenate", z, first, axis=last)                           # Z_k, k = 0..h
    mirror = em.emit("concatenate", first, em.emit("reverse", cut(z, 1, h), dims=(last,)), first, axis=last) \
        if h > 1 else ext                                                      # Z_(h-k)
    re, im = em.emit("real", ext), em.emit("imag", ext)
    mre, mim = em.emit("real", mirror), em.emit("imag", mirror)
    half = em.full(0.5, re.dtype, re.shape)
    mul = lambda a, b: em.emit("mul", a, b)
    e_re, e_im = mul(em.emit("add", re, mre), half), mul(em.emit("sub", im, mim), half)
    o_re, o_im = mul(em.emit("add", im, mim), half), mul(em.emit("sub", mre, re), half)
    k = em.emit("barrier", em.emit("iota", shape=(h + 1,), dim=0, dtype=INT64))
    w = em.broadcast(_exp_i(em, k, n, -1, z.dtype), re.shape)
    w_re, w_im = em.emit("real", w), em.emit("imag", w)
    out = em.emit("complex", em.emit("add", e_re, em.emit("sub", mul(w_re, o_re), mul(w_im, o_im))),
                  em.emit("add", e_im, em.emit("add", mul(w_re, o_im), mul(w_im, o_re))))
    if axis == out.ndim - 1:
        return out
    return em.emit("transpose", out, perm=tuple(range(axis)) + (out.ndim - 1,) + tuple(range(axis, out.ndim - 1)))


def _irfft1(em, a, n, axis, norm, out, name) -> Traced:
    """irfft: the Hermitian-symmetric spectrum of length n rebuilt from its first n // 2 + 1 terms,
    inverse-transformed, its real part (the imaginary parts of the terms at 0 and n / 2 drop out, as
    in pocketfft's c2r)."""
    if out is not None:
        raise NotSupportedError(f"{name}: out= is not supported", hint="use the returned array")
    n, axis, norm = em.static(n, f"{name}: n"), em.static(axis, f"{name}: axis"), em.static(norm, f"{name}: norm")
    x = as_array(em, a)
    ax = normalize_axis(axis, x.ndim, name)
    n = 2 * (x.shape[ax] - 1) if n is None else int(n)
    if n < 1:
        raise ShapeError(f"{name}: Invalid number of FFT data points ({n}) specified.")
    part = _real_dtype(x.dtype)
    cdt = np.result_type(x.dtype, 1j)
    half = _resize(em, em.cast(x, cdt), ax, n // 2 + 1)
    tail = (n + 1) // 2 - 1
    if tail:
        start = tuple(1 if d == ax else 0 for d in range(half.ndim))
        limit = tuple(tail + 1 if d == ax else s for d, s in enumerate(half.shape))
        mirror = em.emit("slice", half, start=start, limit=limit, strides=(1,) * half.ndim)
        mirror = em.emit("reverse", F["numpy.conjugate"](em, mirror), dims=(ax,))
        full = em.emit("concatenate", half, mirror, axis=ax)
    else:
        full = half
    y = em.emit("real", _transform(em, full, ax, 1))
    return em.cast(_scale(em, y, n, norm, False, part), part)


def _known(a) -> bool:
    """No traced array inside a (NumPy itself then computes the call, exactly)."""
    return next(items_of(a, Traced), None) is None


_NOTE = "static n/axis/norm; out= is not supported"


@register("numpy.fft.fft", complex_ok=True, note=_NOTE)
def fft(em, a, n=None, axis=-1, norm=None, out=None):
    if _known(a):
        return fold(np.fft.fft, a, n, axis, norm, out)
    return _fft1(em, a, n, axis, norm, out, "fft", True)


@register("numpy.fft.ifft", complex_ok=True, note=_NOTE)
def ifft(em, a, n=None, axis=-1, norm=None, out=None):
    if _known(a):
        return fold(np.fft.ifft, a, n, axis, norm, out)
    return _fft1(em, a, n, axis, norm, out, "ifft", False)


@register("numpy.fft.rfft", note=_NOTE + "; even lengths by a complex transform of half the length")
def rfft(em, a, n=None, axis=-1, norm=None, out=None):
    if _known(a):
        return fold(np.fft.rfft, a, n, axis, norm, out)
    return _fft1(em, a, n, axis, norm, out, "rfft", True, real_in=True)


@register("numpy.fft.irfft", complex_ok=True, note=_NOTE)
def irfft(em, a, n=None, axis=-1, norm=None, out=None):
    if _known(a):
        return fold(np.fft.irfft, a, n, axis, norm, out)
    return _irfft1(em, a, n, axis, norm, out, "irfft")


def _swap(norm):
    if norm not in NORMS:
        raise ShapeError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    return {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}[norm]


@register("numpy.fft.hfft", complex_ok=True, note=_NOTE)
def hfft(em, a, n=None, axis=-1, norm=None, out=None):
    if _known(a):
        return fold(np.fft.hfft, a, n, axis, norm, out)
    norm = _swap(em.static(norm, "hfft: norm"))
    return _irfft1(em, F["numpy.conjugate"](em, as_array(em, a)), n, axis, norm, out, "hfft")


@register("numpy.fft.ihfft", note=_NOTE)
def ihfft(em, a, n=None, axis=-1, norm=None, out=None):
    if _known(a):
        return fold(np.fft.ihfft, a, n, axis, norm, out)
    norm = _swap(em.static(norm, "ihfft: norm"))
    return F["numpy.conjugate"](em, _fft1(em, a, n, axis, norm, out, "ihfft", True, real_in=True))


# ---------------------------------------------------------------- N-D transforms

def _nd_args(em, x: Traced, s, axes, name, invreal=False):
    """numpy.fft._cook_nd_args: the lengths and axes of an N-D transform (without its warnings)."""
    s, axes = em.static(s, f"{name}: s"), em.static(axes, f"{name}: axes")
    shapeless = s is None
    if axes is not None:
        axes = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
        for a in axes:
            normalize_axis(a, x.ndim, name)
    if shapeless:
        s = list(x.shape) if axes is None else [x.shape[a] for a in axes]
    s = list(s)
    if axes is None:
        axes = list(range(-len(s), 0))
        for a in axes:
            normalize_axis(a, x.ndim, name)
    if len(s) != len(axes):
        raise ShapeError(f"{name}: Shape and axes have different lengths.")
    if invreal and shapeless:
        s[-1] = (x.shape[axes[-1]] - 1) * 2
    return [x.shape[a] if n == -1 else n for n, a in zip(s, axes)], axes


def _nd(np_fn, one, name, default_axes=None, real=None):
    """fftn/ifftn (real None), rfftn ("forward": rfft on the last axis first) and irfftn ("inverse":
    irfft on the last axis last), as numpy.fft's own loops over the axes."""
    def impl(em, a, s=None, axes=default_axes, norm=None, out=None):
        if _known(a):
            return fold(np_fn, a, s, axes, norm, out)
        if out is not None:
            raise NotSupportedError(f"{name}: out= is not supported", hint="use the returned array")
        x = as_array(em, a)
        s, axes = _nd_args(em, x, s, axes, name, invreal=real == "inverse")
        if real == "forward":
            x = rfft(em, x, s[-1], axes[-1], norm)
            for i in range(len(axes) - 2, -1, -1):
                x = fft(em, x, s[i], axes[i], norm)
            return x
        if real == "inverse":
            for i in range(len(axes) - 1):
                x = ifft(em, x, s[i], axes[i], norm)
            return irfft(em, x, s[-1], axes[-1], norm)
        for i in reversed(range(len(axes))):
            x = one(em, x, s[i], axes[i], norm)
        return x
    impl.__name__ = impl.__qualname__ = name
    return impl


_ND_NOTE = "static s/axes/norm; one 1-D transform per axis"
register("numpy.fft.fftn", complex_ok=True, note=_ND_NOTE)(_nd(np.fft.fftn, fft, "fftn"))
register("numpy.fft.ifftn", complex_ok=True, note=_ND_NOTE)(_nd(np.fft.ifftn, ifft, "ifftn"))
register("numpy.fft.fft2", complex_ok=True, note=_ND_NOTE)(_nd(np.fft.fft2, fft, "fft2", (-2, -1)))
register("numpy.fft.ifft2", complex_ok=True, note=_ND_NOTE)(_nd(np.fft.ifft2, ifft, "ifft2", (-2, -1)))
register("numpy.fft.rfftn", note=_ND_NOTE)(_nd(np.fft.rfftn, None, "rfftn", real="forward"))
register("numpy.fft.rfft2", note=_ND_NOTE)(_nd(np.fft.rfft2, None, "rfft2", (-2, -1), real="forward"))
register("numpy.fft.irfftn", complex_ok=True, note=_ND_NOTE)(_nd(np.fft.irfftn, None, "irfftn", real="inverse"))
register("numpy.fft.irfft2", complex_ok=True, note=_ND_NOTE)(_nd(np.fft.irfft2, None, "irfft2", (-2, -1),
                                                                   real="inverse"))


# ---------------------------------------------------------------- frequencies and shifts

def _freq(np_fn, name, count, ends):
    """fftfreq/rfftfreq: integers (from iota) times 1 / (n * d), with NumPy's dtypes."""
    def impl(em, n, d=1.0, device=None):
        n = em.static(n, f"{name}: n")
        if not isinstance(n, (int, np.integer)) or isinstance(n, (bool, np.bool_)):
            raise ShapeError(f"{name}: n should be an integer")
        if is_static(d):
            return fold(np_fn, n, d, device)
        m = count(int(n))
        k = em.emit("iota", shape=(m,), dim=0, dtype=INT64)
        if ends:   # [0, 1, ..., -(n // 2), ..., -1]
            half = (int(n) - 1) // 2 + 1
            k = em.emit("select", em.emit("compare", k, em.full(half, INT64, (m,)), direction="GE"),
                        em.emit("sub", k, em.full(int(n), INT64, (m,))), k)
        val = F["numpy.true_divide"](em, 1.0, F["numpy.multiply"](em, int(n), d))
        return F["numpy.multiply"](em, k, val)
    impl.__name__ = impl.__qualname__ = name
    return impl


register("numpy.fft.fftfreq", note="static n")(_freq(np.fft.fftfreq, "fftfreq", lambda n: n, True))
register("numpy.fft.rfftfreq", note="static n")(_freq(np.fft.rfftfreq, "rfftfreq", lambda n: n // 2 + 1, False))


def _shift(np_fn, name, direction):
    """fftshift/ifftshift: np.roll by half of each axis's length (rounded down), as NumPy."""
    def impl(em, x, axes=None):
        if _known(x):
            return fold(np_fn, x, em.static(axes, f"{name}: axes"))
        x = as_array(em, x)
        axes = em.static(axes, f"{name}: axes")
        if axes is None:
            axes = tuple(range(x.ndim))
            shift = [direction * (dim // 2) for dim in x.shape]
        elif isinstance(axes, (int, np.integer)):
            shift = direction * (x.shape[normalize_axis(axes, x.ndim, name)] // 2)
        else:
            shift = [direction * (x.shape[normalize_axis(ax, x.ndim, name)] // 2) for ax in axes]
        return F["numpy.roll"](em, x, shift, axes)
    impl.__name__ = impl.__qualname__ = name
    return impl


register("numpy.fft.fftshift", complex_ok=True)(_shift(np.fft.fftshift, "fftshift", 1))
register("numpy.fft.ifftshift", complex_ok=True)(_shift(np.fft.ifftshift, "ifftshift", -1))
