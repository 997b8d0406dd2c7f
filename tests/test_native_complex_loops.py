"""Native loops over complex numbers (pyjitc/lowering/scalar_complex.py): pixel loops iterating
`z = z * z + c` until |z| escapes, accumulations reading and writing single elements of complex
arrays, and the complex primitives a loop body may use (arithmetic, exp/log/sqrt, ==, the
parts) run in one dispatch with NumPy's answers; complex array work in a loop stays a host loop
and is right too."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pyjitc
from tests.reference import assert_same
from tests.test_scalar_loops import check, lowered_as


def julia(cr, ci, n, maxit):
    out = np.zeros((n, n), dtype=np.int64)
    c = complex(cr, ci)
    for i in range(n):
        for j in range(n):
            z = complex(-1.5 + 3.0 * i / n, -1.5 + 3.0 * j / n)
            k = 0
            while abs(z) < 2.0 and k < maxit:
                z = z * z + c
                k += 1
            out[i, j] = k
    return out


def running_products(x, w):
    out = np.empty_like(x)
    s = 0j
    for i in range(x.shape[0]):
        s = s * w + x[i] * x[i].conjugate()
        out[i] = s
    return out, s


def primitives(x, n):
    acc = np.complex128(0)
    same = np.int64(0)     # (a Python 0 would stay one where the loop runs zero times: README, Known limits)
    for i in range(n):
        z = x[i % x.shape[0]]
        acc += np.exp(z * 0.1) - np.log(z + 2.0) + np.sqrt(z) - (-z)
        same += z == x[0]
        acc += complex(z.real * 2.0, -z.imag)
    return acc, same


def single_precision(x):
    s = np.complex64(0)
    for i in range(x.shape[0]):
        s = s + x[i] * np.complex64(1 - 1j)
    return s


def complex_array_work(x, n):
    for _ in range(n):
        x[1:] = x[1:] * x[:-1]
    return x


@pytest.mark.parametrize("n, maxit", [(1, 5), (7, 30), (16, 50)])
def test_a_julia_set_pixel_loop_is_native_and_exact(n, maxit):
    check(julia, -0.8, 0.156, n, maxit)
    assert lowered_as(julia, -0.8, 0.156, 8, 10) == "dispatch"


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2 ** 16), size=st.integers(1, 12), dtype=st.sampled_from([np.complex128, np.complex64]))
def test_complex_accumulations_over_array_elements_are_native_and_match_numpy(seed, size, dtype):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(size) + 1j * rng.standard_normal(size)).astype(dtype)
    check(running_products, x, dtype(0.5 - 0.25j), accumulate=True)
    check(single_precision, x.astype(np.complex64), accumulate=True)


def test_complex_primitives_in_a_loop_match_numpy():
    x = np.array([1 + 2j, -0.5 + 0.25j, 3 - 1j, 1 + 2j])
    for n in (0, 1, 4, 9):
        check(primitives, x, n, accumulate=True)


def test_loops_over_complex_numbers_run_where_expected():
    x = np.ones(8, np.complex128)
    assert lowered_as(running_products, x, 0.5j) == "dispatch"
    assert lowered_as(primitives, x, 3) == "dispatch"
    # reads what it writes: through a scratch array (lowering/scratch.py), then native
    assert lowered_as(complex_array_work, x, 3) == "dispatch"
    for n in (0, 1, 3):
        check(complex_array_work, np.arange(5.0) + 1j, n)


def complex_rows(A, z, n):
    out = np.zeros_like(A)
    for i in range(n):
        out[i % A.shape[0], :] = A[i % A.shape[0], :] * z + 1j - np.conj(A[0, :]) * out[0, 0]
    return out


@pytest.mark.parametrize("n", [0, 1, 7])
def test_elementwise_work_on_complex_rows_in_a_loop_is_native_and_matches_numpy(n):
    A = np.arange(12.0).reshape(3, 4) * (1 - 0.5j)
    check(complex_rows, A, 0.5 + 2j, n, accumulate=True)
    assert lowered_as(complex_rows, A, 0.5 + 2j, 7) == "dispatch"


def schrodinger_steps(psi, H, dt, n):
    for _ in range(n):
        psi = psi - 1j * dt * (H @ psi)
        psi = psi / np.sqrt(np.sum(psi * np.conj(psi)).real)
    return psi


def complex_sums_and_products(z, w, n):
    s = 0j
    for k in range(n):
        s = s + np.sum(z * (k + 1)) + (z * w).prod() + np.dot(z, w) + z @ np.conj(w)
    return s


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("n", [0, 1, 300])
def test_complex_contractions_and_sums_in_a_time_loop_are_native_and_match_numpy(dtype, n):
    """`psi = psi - 1j * dt * (H @ psi)` in a time loop stayed a host loop (complex products and
    sums were not native): 5000 steps of a 2-level system took 297 ms (NumPy 50 ms), now
    0.12 ms (probe AE). Each sum is one running complex value, in order."""
    H = np.array([[1.0, 0.5 - 0.2j], [0.5 + 0.2j, -1.0]], dtype)
    psi = np.array([1.0, 0.0], dtype)
    dt = dtype(0).real.dtype.type(1e-3)
    check(schrodinger_steps, psi, H, dt, n, accumulate=True)
    z, w = np.array([0.5 + 0.1j, 0.2 - 0.3j, 1j], dtype), np.array([1 - 1j, 0.3j, 2.0], dtype)
    check(complex_sums_and_products, z, w, n, accumulate=True)
    if n == 300:
        assert lowered_as(schrodinger_steps, psi, H, dt, n) == "dispatch"
        assert lowered_as(complex_sums_and_products, z, w, n) == "dispatch"
