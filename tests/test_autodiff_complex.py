"""Gradients of real functions of real arguments that compute with complex numbers on the way (an
FFT's power spectrum, a complex exponential's real part, complex matrix products, a run-time loop
over complex values), each against central finite differences in float64. JAX's convention: the
rules are transposes of the derivatives as linear maps over the reals (autodiff/rules.py)."""
import numpy as np
import pytest

import pyjitc


def spectrum_energy(x):
    return np.sum(np.abs(np.fft.fft(x)) ** 2)


def rfft_magnitudes(x):
    return np.sum(np.abs(np.fft.rfft(x)))


def rotated(x, c):
    z = np.exp(1j * x) * c
    return np.sum(z.real * 2.0 + z.imag ** 2)


def complex_matrix(a, b):
    A = a + 1j * b
    v = np.ones(a.shape[1]) - 0.5j
    return np.sum(np.abs(A @ v) ** 2) + np.abs(np.sum(A * A.conj()))


def branches_of_log_and_sqrt(x):
    z = x + 2j
    return np.sum(np.sqrt(z).real + np.log(z).imag + (z / (1 + z)).real)


def complex_recurrence(x, n):
    z = x.astype(np.complex128)
    for _ in range(n):            # a run-time loop carrying complex values
        z = z * (0.9 + 0.1j) + 0.01j * z * z
    return np.sum(np.abs(z))


def central_differences(f, args, i, h=1e-6):
    x = np.asarray(args[i], dtype=np.float64)
    g = np.zeros_like(x)
    for k in range(x.size):
        up, down = x.copy(), x.copy()
        up.flat[k] += h
        down.flat[k] -= h
        g.flat[k] = (f(*args[:i], up, *args[i + 1:]) - f(*args[:i], down, *args[i + 1:])) / (2 * h)
    return g


rng = np.random.default_rng(11)
CASES = [
    (spectrum_energy, (rng.random(16),), 0),
    (rfft_magnitudes, (rng.random(12),), 0),
    (rotated, (rng.random(8), rng.random(8)), 0),
    (rotated, (rng.random(8), rng.random(8)), 1),
    (complex_matrix, (rng.random((3, 4)), rng.random((3, 4))), 0),
    (complex_matrix, (rng.random((3, 4)), rng.random((3, 4))), 1),
    (branches_of_log_and_sqrt, (rng.random(6),), 0),
    (complex_recurrence, (rng.random(5), 7), 0),
]


@pytest.mark.parametrize("fn, args, argnum", CASES, ids=[f"{c[0].__name__}-{c[2]}" for c in CASES])
def test_gradients_through_complex_intermediates_match_finite_differences(fn, args, argnum):
    got = pyjitc.grad(fn, argnums=argnum)(*args)
    want = central_differences(fn, args, argnum)
    assert got.dtype == np.float64 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_value_and_grad_through_an_fft_gives_numpys_value():
    x = rng.random(16)
    value, g = pyjitc.value_and_grad(spectrum_energy)(x)
    np.testing.assert_allclose(value, spectrum_energy(x), rtol=1e-12)
    np.testing.assert_allclose(g, 2 * len(x) * x, rtol=1e-9)    # Parseval: sum |F x|^2 = n sum x^2


def squared_magnitude(z):
    return np.sum(np.abs(z) ** 2)


def mixed(z, w):
    return np.sum((z * w).real) + np.abs(np.sum(z))


def complex_differences(f, args, i, h=1e-6):
    """df/dx - i df/dy at each element x + iy of args[i]: what JAX's grad gives for a real f."""
    z = args[i]
    g = np.zeros_like(z)
    for k in range(z.size):
        for step, weight in ((1, 1), (1j, -1j)):
            up, down = z.copy(), z.copy()
            up.flat[k] += h * step
            down.flat[k] -= h * step
            g.flat[k] += weight * (f(*args[:i], up, *args[i + 1:]) - f(*args[:i], down, *args[i + 1:])) / (2 * h)
    return g


def test_gradients_with_respect_to_complex_arguments_follow_jaxs_convention():
    z = np.array([3 + 4j, 1 - 2j])
    np.testing.assert_allclose(pyjitc.grad(squared_magnitude)(z), 2 * np.conj(z))   # JAX's documented 6-8j
    w = rng.random(2) + 1j * rng.random(2)
    gz, gw = pyjitc.grad(mixed, argnums=(0, 1))(z, w)
    assert gz.dtype == np.complex128 and gw.dtype == np.complex128
    np.testing.assert_allclose(gz, complex_differences(mixed, (z, w), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gw, complex_differences(mixed, (z, w), 1), rtol=1e-6, atol=1e-8)
    g = pyjitc.grad(squared_magnitude)(1 + 2j)
    assert type(g) is complex and abs(g - (2 - 4j)) < 1e-12
