"""The blocked np.linalg algorithms (pyjitc/frontend/numpy/linalg_blocked.py, blocks of NB = 64
columns, a remainder under 8 columns joining the last block) agree with NumPy on either side of
every block boundary: n = 1, 2, 65 (one block), 72 (two), 136 (three), float64 and float32, single matrices
and a stack, with the pivots moving between blocks."""
import numpy as np
from hypothesis import given, strategies as st

import pyjitc
from pyjitc.frontend.numpy.linalg_blocked import NB
from tests.test_linalg import close, well_conditioned

SIZES = [1, 2, NB + 1, NB + 8, 2 * NB + 8]


@pyjitc.jit
def factor_and_solve(a, b):
    return np.linalg.solve(a, b), np.linalg.inv(a), np.linalg.det(a), np.linalg.slogdet(a)


@pyjitc.jit
def cholesky(a):
    return np.linalg.cholesky(a)


def spd(rng, shape, dtype):
    m = rng.uniform(-1, 1, shape)
    return (m @ np.swapaxes(m, -1, -2) + np.eye(shape[-1]) * shape[-1]).astype(dtype)


@given(n=st.sampled_from(SIZES), seed=st.integers(0, 2**16))
def test_lu_based_functions_match_numpy_across_block_boundaries(n, seed):
    rng = np.random.default_rng(seed)
    a = well_conditioned(rng, (n, n), np.float64)
    b = rng.uniform(-5, 5, n)
    x, inv, det, (sign, logdet) = factor_and_solve(a, b)
    want_sign, want_logdet = np.linalg.slogdet(a)
    close((x, inv, sign, logdet), (np.linalg.solve(a, b), np.linalg.inv(a), want_sign, want_logdet))
    # det's magnitude is huge at these sizes: compared relative to itself
    assert np.asarray(det).dtype == np.float64 and np.isclose(det, np.linalg.det(a), rtol=1e-11, atol=0)


@given(n=st.sampled_from(SIZES), seed=st.integers(0, 2**16))
def test_cholesky_matches_numpy_across_block_boundaries_reading_only_the_lower_triangle(n, seed):
    rng = np.random.default_rng(seed)
    a = spd(rng, (n, n), np.float64) + np.triu(rng.uniform(-9, 9, (n, n)), 1)
    close(cholesky(a), np.linalg.cholesky(a))


@given(seed=st.integers(0, 2**16))
def test_stacks_and_float32_cross_a_block_boundary(seed):
    rng = np.random.default_rng(seed)
    a = well_conditioned(rng, (2, NB + 1, NB + 1), np.float32)
    b = rng.uniform(-5, 5, (2, NB + 1, 3)).astype(np.float32)
    x, inv, _, (sign, logdet) = factor_and_solve(a, b)
    want_sign, want_logdet = np.linalg.slogdet(a)
    close((x, inv, sign, logdet), (np.linalg.solve(a, b), np.linalg.inv(a), want_sign, want_logdet))
    s = spd(rng, (2, NB + 1, NB + 1), np.float32)
    close(cholesky(s), np.linalg.cholesky(s))


def test_a_singular_matrix_past_the_first_block_raises_linalg_error():
    a = well_conditioned(np.random.default_rng(0), (NB + 1, NB + 1), np.float64)
    a[-1] = a[-2]
    try:
        factor_and_solve(a, np.ones(NB + 1))
    except np.linalg.LinAlgError as e:
        assert "Singular matrix" in str(e)
    else:
        raise AssertionError("no LinAlgError")
    s = spd(np.random.default_rng(1), (NB + 1, NB + 1), np.float64)
    s[-1, -1] = -1.0
    try:
        cholesky(s)
    except np.linalg.LinAlgError as e:
        assert "not positive definite" in str(e)
    else:
        raise AssertionError("no LinAlgError")
