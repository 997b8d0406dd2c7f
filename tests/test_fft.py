"""np.fft agrees with NumPy (value, shape, dtype) on values hypothesis draws, for lengths that take
each path of the transform (1, small primes, a power of two, lengths split by the four-step
algorithm: 100 = 10 x 10, 4096 = 64 x 64, and a prime of 263 by Bluestein's), every norm, n=/s= padding and cropping, axis=/axes=,
2-D and N-D, complex/float/float32/float16/int inputs and round trips; NumPy's refusals are located
errors. Values: to the accumulating tolerance relative to the result's largest magnitude (an FFT's
rounding error is bounded by the whole input's norm, not by each output's size)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import pyjitc
from tests.reference import RTOL_ACCUM, assert_same
from tests.strategies import arrays


@pyjitc.jit
def complex_transforms(a, b, m):
    """a: length 7 (a prime: the DFT matrix), b: (3, 100) (four-step, 10 x 10), m: (6, 8)."""
    return (np.fft.fft(a), np.fft.ifft(a, norm="ortho"), np.fft.fft(a, n=1), np.fft.ifft(a, 12, norm="forward"),
            np.fft.fft(b), np.fft.ifft(b, axis=0), np.fft.fft(b, n=128, norm="forward"),
            np.fft.ifft(b, n=30, axis=-1, norm="backward"),
            np.fft.fft2(m), np.fft.ifft2(m, s=(4, 10)), np.fft.fftn(m, axes=(0,)), np.fft.ifftn(m, norm="forward"),
            np.fft.fftn(m, s=(3, 16), axes=(1, 0)), np.fft.irfft(a), np.fft.irfft(b, n=17, norm="ortho"),
            np.fft.irfft2(m), np.fft.irfftn(m, s=(6, 9), axes=(0, 1)), np.fft.hfft(a, norm="forward"),
            np.fft.ifftshift(m, axes=1))


@pyjitc.jit
def real_transforms(x, m):
    """x: length 30 (6 x 5 is direct; the n= lengths split or not), m: (6, 8)."""
    return (np.fft.fft(x), np.fft.ifft(x, norm="ortho"), np.fft.rfft(x), np.fft.rfft(x, n=17),
            np.fft.rfft(x, 100, norm="forward"), np.fft.irfft(np.fft.rfft(x), n=x.shape[0]), np.fft.ihfft(x),
            np.fft.rfft2(m), np.fft.rfftn(m, s=(4, 5), axes=(1, 0), norm="ortho"),
            np.fft.irfftn(np.fft.rfftn(m), s=m.shape, axes=(0, 1)), np.fft.fft2(m, norm="ortho"), np.fft.rfft(m, axis=0),
            np.fft.irfft(x), np.fft.fftshift(x), np.fft.ifftshift(np.fft.fftshift(x)))


@pyjitc.jit
def long_transforms(z, y, p):
    """z: length 4096 (64 x 64), y: real length 1024 (32 x 32), p: (2, 263), a prime above
    BLUESTEIN_MIN (Bluestein's convolution by transforms of length 1024)."""
    return (np.fft.fft(z), np.fft.ifft(z, norm="ortho"), np.fft.rfft(y), np.fft.irfft(y[:513], norm="forward"),
            np.fft.fft(p), np.fft.ifft(p, axis=1, norm="forward"))


@pyjitc.jit
def frequencies(x, d):
    return (np.fft.fftfreq(8), np.fft.fftfreq(7, d), np.fft.rfftfreq(9, d), np.fft.rfftfreq(10, 0.1),
            np.fft.fftshift(np.fft.fftfreq(x.shape[0], d)), np.fft.fft(np.ones(4)), np.fft.fftshift(x, axes=0),
            np.fft.fft([x[0, 1], x[1, 1] * d, 2.0]), np.fft.ifftshift(x, axes=(0, 1)))


def same(got, want):
    """assert_same with the tolerance relative to the largest magnitude in each result."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    want = np.asarray(want)
    part = np.dtype(np.float32 if want.dtype in (np.complex64, np.float32, np.float16) else np.float64)
    atol = RTOL_ACCUM[part] * max(1.0, float(np.max(np.abs(want), initial=0)))
    assert_same(got, want, accumulate=True, atol=atol)


def values(dtype, shape):
    return arrays(dtype, shape, allow_nan=False, min_value=-100, max_value=100)


@given(data=st.data())
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_transforms_match_numpy(dtype, data):
    args = [data.draw(values(dtype, s)) for s in ((7,), (3, 100), (6, 8))]
    same(complex_transforms(*args), complex_transforms.__wrapped__(*args))


@given(data=st.data())
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_real_transforms_match_numpy(dtype, data):
    """float32 gives complex64 (and irfft float32), as NumPy 2."""
    x, m = data.draw(values(dtype, (30,))), data.draw(values(dtype, (6, 8)))
    same(real_transforms(x, m), real_transforms.__wrapped__(x, m))


@given(data=st.data())
def test_long_transforms_match_numpy(data):
    z, y = data.draw(values(np.complex128, (4096,))), data.draw(values(np.float64, (1024,)))
    p = data.draw(values(np.complex128, (2, 263)))
    same(long_transforms(z, y, p), long_transforms.__wrapped__(z, y, p))


@pytest.mark.parametrize("v", [np.array([1.5 - 2.0j]), np.array([3, -1, 4, 1, -5, 9], np.int32),
                               np.array([1.5, 2.25, -0.5], np.float16), np.array([True, False, True])])
def test_lengths_of_one_integers_bools_and_float16_follow_numpys_dtypes(v):
    """Integers and bools give complex128 (irfft float64); float16 computes in complex64 (irfft back
    to float16), with the norm factor rounded in float16 as NumPy rounds it."""
    same(fft_norms(v), fft_norms.__wrapped__(v))


@pyjitc.jit
def fft_norms(v):
    return np.fft.fft(v, norm="forward"), np.fft.ifft(v, n=3, norm="ortho"), np.fft.irfft(v, n=3)


def test_frequencies_and_shifts_match_numpy():
    x = np.arange(12.0).reshape(6, 2)
    for d in (0.25, 3.0):   # a run-time spacing: one compile
        same(frequencies(x, d), frequencies.__wrapped__(x, d))
    assert frequencies.cache_info().misses == 1


def test_round_trips_give_the_input_back():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 100))
    back = round_trips(x)
    for y in back:
        np.testing.assert_allclose(y.real if np.iscomplexobj(y) else y, x, rtol=0, atol=1e-13)


@pyjitc.jit
def round_trips(x):
    return (np.fft.ifft(np.fft.fft(x)), np.fft.irfft(np.fft.rfft(x), n=x.shape[-1]),
            np.fft.ifft2(np.fft.fft2(x, norm="ortho"), norm="ortho"), np.fft.hfft(np.fft.ihfft(x), n=x.shape[-1]))


def zero_points(x):
    return np.fft.fft(x, n=0)


def bad_norm(x):
    return np.fft.ifft(x, norm="unitary")


def rfft_of_complex(x):
    return np.fft.rfft(x + 1j)


def bad_axis(x):
    return np.fft.fft(x, axis=1)


@pytest.mark.parametrize("fn, message", [
    (zero_points, "Invalid number of FFT data points"), (bad_norm, "Invalid norm value unitary"),
    (rfft_of_complex, "complex"), (bad_axis, "out of bounds"),
])
def test_what_numpy_refuses_is_a_located_error(fn, message):
    x = np.ones(4)
    with pytest.raises(Exception):
        fn(x)                                   # NumPy refuses too
    with pytest.raises(pyjitc.JitError, match=message) as e:
        pyjitc.jit(fn)(x)
    line = fn.__code__.co_firstlineno + 1
    assert f"test_fft.py:{line}:" in str(e.value)
