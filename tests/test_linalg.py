"""np.linalg.solve / inv / det / slogdet / cholesky agree with NumPy (value, shape, dtype) on stacks
of well-conditioned matrices whose rows are shuffled (so pivoting happens), and raise NumPy's
LinAlgError where NumPy does."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import pyjitc
from tests.reference import assert_same


@pyjitc.jit
def solve(a, b):
    return np.linalg.solve(a, b)


@pyjitc.jit
def inverse_and_determinants(a):
    return np.linalg.inv(a), np.linalg.det(a), np.linalg.slogdet(a)


@pyjitc.jit(static_argnames="upper")
def cholesky(a, upper):
    return np.linalg.cholesky(a, upper=upper)


# Relative to the result's largest magnitude: these matrices have condition numbers below ~20, so
# LU's rounding differs from LAPACK's blocked LU by a few ulp times n.
RTOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12}
DTYPES = [np.float64, np.float32, np.int32]
SHAPES = [(1, 1), (2, 2), (3, 3), (5, 5), (2, 3, 3), (2, 1, 4, 4)]


def well_conditioned(rng, shape, dtype):
    """Diagonally dominant, then rows shuffled: far from singular, and the pivots move."""
    n = shape[-1]
    a = rng.uniform(-1, 1, shape) + np.eye(n) * (n + 1)
    a = a[..., rng.permutation(n), :]
    return (np.round(a * 4) if np.dtype(dtype).kind == "i" else a).astype(dtype)


def close(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            close(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    scale = max(1.0, float(np.max(np.abs(want), initial=0)))
    assert np.allclose(got, want, rtol=0, atol=RTOL[want.dtype] * scale), (got, want)


@given(st.data())
def test_solve_matches_numpy_for_vectors_matrices_and_stacks(data):
    dtype = data.draw(st.sampled_from(DTYPES))
    shape = data.draw(st.sampled_from(SHAPES))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    a = well_conditioned(rng, shape, dtype)
    n = shape[-1]
    b_shape = data.draw(st.sampled_from([(n,), (n, 1), (n, 3), shape[:-1] + (2,)]))
    b = rng.uniform(-5, 5, b_shape).astype(dtype)
    close(solve(a, b), np.linalg.solve(a, b))


@given(st.data())
def test_inv_det_slogdet_match_numpy(data):
    dtype = data.draw(st.sampled_from(DTYPES))
    shape = data.draw(st.sampled_from(SHAPES))
    a = well_conditioned(np.random.default_rng(data.draw(st.integers(0, 2**16))), shape, dtype)
    inv, det, (sign, logdet) = inverse_and_determinants(a)
    want_sign, want_logdet = np.linalg.slogdet(a)
    close((inv, det, sign, logdet), (np.linalg.inv(a), np.linalg.det(a), want_sign, want_logdet))


@given(st.data())
def test_cholesky_matches_numpy_reading_only_the_triangle_it_factors(data):
    dtype = data.draw(st.sampled_from([np.float64, np.float32]))
    shape = data.draw(st.sampled_from(SHAPES))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    m = rng.uniform(-1, 1, shape)
    spd = (m @ np.swapaxes(m, -1, -2) + np.eye(shape[-1]) * shape[-1]).astype(dtype)
    garbage = rng.uniform(-9, 9, shape).astype(dtype)
    above, below = spd + np.triu(garbage, 1), spd + np.tril(garbage, -1)   # the triangle not read
    close(cholesky(above, False), np.linalg.cholesky(above))
    close(cholesky(below, True), np.linalg.cholesky(below, upper=True))


def test_a_zero_first_pivot_is_pivoted_around():
    a = np.array([[0.0, 2.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 3.0]])
    close(solve(a, np.arange(3.0)), np.linalg.solve(a, np.arange(3.0)))
    inv, det, _ = inverse_and_determinants(a)
    close((inv, det), (np.linalg.inv(a), np.linalg.det(a)))


def test_singular_matrices_raise_numpys_linalg_error_at_the_users_line():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix") as e:
        solve(singular, np.ones(2))
    assert "test_linalg.py:14" in str(e.value)
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.solve(singular, np.ones(2))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        inverse_and_determinants(singular)   # inv raises; det alone gives 0, as NumPy's does


@pyjitc.jit
def determinant(a):
    return np.linalg.det(a), np.linalg.slogdet(a)


def test_determinant_of_a_singular_matrix_is_zero_with_sign_zero():
    singular = np.array([[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]]])
    got = determinant(singular)
    want = np.linalg.det(singular), np.linalg.slogdet(singular)    # NumPy's SlogdetResult, as pyjitc's
    assert_same(got, want)


def test_cholesky_of_a_matrix_that_is_not_positive_definite_raises_linalg_error():
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        cholesky(np.array([[1.0, 2.0], [2.0, 1.0]]), False)
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]]))


@pytest.mark.parametrize("a, numpy_error, message", [
    (np.ones((2, 3)), np.linalg.LinAlgError, "must be square"),
    (np.ones(3), np.linalg.LinAlgError, "at least two-dimensional"),
    (np.eye(2, dtype=np.float16), TypeError, "float16 is unsupported"),
])
def test_arrays_numpy_linalg_rejects_are_located_shape_errors(a, numpy_error, message):
    with pytest.raises(numpy_error):
        np.linalg.inv(a)   # NumPy rejects them too
    with pytest.raises(pyjitc.ShapeError, match=message) as e:
        inverse_and_determinants(a)
    assert "test_linalg.py:19" in str(e.value)


def powers(a):
    return tuple(np.linalg.matrix_power(a, k) for k in (0, 1, 2, 3, 5, 8, -2))


def test_matrix_power_multiplies_in_numpys_order_for_every_exponent_kind():
    a = np.random.default_rng(4).random((2, 3, 3)) + 2 * np.eye(3)
    got, want = pyjitc.jit(powers)(a), powers(a)
    assert_same(got, want, accumulate=True)
    assert got[1] is a and want[1] is a      # n = 1 gives the argument itself, as NumPy
    a32 = (np.arange(9).reshape(3, 3) % 4 + 3 * np.eye(3)).astype(np.float32)
    assert_same(pyjitc.jit(powers)(a32), powers(a32), accumulate=True)


def linalg_in_two_run_time_loops(A, b, n):
    s = 0.0
    for i in range(n):
        for j in range(5):
            s += np.linalg.inv(A)[0, 0] + np.linalg.solve(A, b)[1] + np.linalg.cholesky(A)[1, 0] * j
    return s


def test_linalg_inside_two_run_time_loops_compiles():
    # (iree-compile crashed: a segfault in Stream::ResourceType::getLifetime, with host loops too)
    A = np.eye(4) * 4 + 1
    b = np.arange(4.0)
    f = pyjitc.jit(linalg_in_two_run_time_loops)
    for n in (0, 3):
        np.testing.assert_allclose(f(A, b, n), linalg_in_two_run_time_loops(A, b, n), rtol=1e-12)
