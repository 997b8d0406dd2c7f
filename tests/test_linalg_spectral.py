"""np.linalg's functions of singular values and symmetric eigenvalues (frontend/numpy/spectral.py,
one-sided and cyclic Jacobi from jacobi.py) against NumPy's LAPACK results: values, shapes and
dtypes on tall, wide, square and rank-deficient matrices; singular vectors refused with a located
error (their signs are LAPACK's choice)."""
import numpy as np
import pytest

import pyjitc
from tests.reference import assert_same


def singular_values(a):
    return np.linalg.svd(a, compute_uv=False), np.linalg.svdvals(a)


def matrix_norms(a):
    return (np.linalg.norm(a, 2), np.linalg.norm(a, -2), np.linalg.norm(a, "nuc"), np.linalg.norm(a, 1),
            np.linalg.norm(a, -1), np.linalg.norm(a, np.inf), np.linalg.norm(a, -np.inf), np.linalg.norm(a))


def ranks_and_inverse(a):
    return np.linalg.matrix_rank(a), np.linalg.pinv(a), np.linalg.cond(a), np.linalg.cond(a, -2)


def least_squares(a, b):
    return np.linalg.lstsq(a, b, rcond=None)


def least_squares_solution(a, b):
    return np.linalg.lstsq(a, b, rcond=None)[0]


def symmetric_eigenvalues(a):
    return np.linalg.eigvalsh(a), np.linalg.eigvalsh(a, UPLO="U")


def singular_vectors(a):
    return np.linalg.svd(a)


rng = np.random.default_rng(12)
MATRICES = {
    "tall": rng.random((7, 4)),
    "wide": rng.random((3, 6)),
    "square": rng.random((5, 5)) - 0.5,
    "rank 2": rng.random((6, 2)) @ rng.random((2, 5)),
    "one column": rng.random((4, 1)),
    "float32": rng.random((5, 3)).astype(np.float32),
}


def tolerance(a):
    return (1e-4, 1e-5) if a.dtype == np.float32 else (1e-9, 1e-11)


@pytest.mark.parametrize("name", list(MATRICES))
def test_singular_values_norms_ranks_and_pseudo_inverses_match_numpy(name):
    a = MATRICES[name]
    rtol, atol = tolerance(a)
    for fn in (singular_values, matrix_norms, ranks_and_inverse):
        got, want = pyjitc.jit(fn)(a), fn(a)
        if fn is ranks_and_inverse and name == "rank 2":   # cond of a singular matrix: ~1e16 or inf either way
            got, want = got[:2], want[:2]
        for g, w in zip(got, want):
            assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype, (fn.__name__, g, w)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * max(1.0, float(np.abs(w).max(initial=0))))


@pytest.mark.parametrize("name, b_shape", [("tall", (7,)), ("tall", (7, 2)), ("rank 2", (6,)), ("wide", (3,))])
def test_least_squares_gives_numpys_solution_residuals_rank_and_singular_values(name, b_shape):
    a, b = MATRICES[name], rng.random(b_shape)
    got, want = pyjitc.jit(least_squares)(a, b), least_squares(a, b)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=1e-8, atol=1e-10)
    assert_same(pyjitc.jit(least_squares_solution)(a, b), want[0], accumulate=True)


def test_eigvalsh_reads_only_the_triangle_uplo_names():
    a = rng.random((6, 6))          # not symmetric: each triangle makes its own symmetric matrix
    for g, w in zip(pyjitc.jit(symmetric_eigenvalues)(a), symmetric_eigenvalues(a)):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
        assert g.dtype == w.dtype


def test_matrix_norms_of_order_one_and_inf_are_column_and_row_sums_not_the_flattened_vectors():
    a = np.arange(12.0).reshape(3, 4) - 5
    got = pyjitc.jit(matrix_norms)(a)
    assert got[3] == 10.0 and got[5] == 18.0     # NumPy's; it used to give the vector norms 36 and 6


def test_singular_vectors_are_a_located_refusal():
    with pytest.raises(pyjitc.NotSupportedError, match=r"test_linalg_spectral.py:\d+:\d+: np.linalg.svd with compute_uv"):
        pyjitc.jit(singular_vectors)(MATRICES["tall"])


def fit_polynomial(x, y, deg):
    return np.polyfit(x, y, deg)


def fit_weighted(x, y, w):
    return np.polyfit(x, y, 3, w=w)


def test_numpys_own_polyfit_compiles_through_lstsq_and_matches_numpy():
    x = np.linspace(-1, 2, 25)
    y = np.cos(2 * x) + rng.random(25) * 0.05
    for deg in (1, 3, 5):
        assert_same(pyjitc.jit(fit_polynomial)(x, y, deg), fit_polynomial(x, y, deg), accumulate=True)
    w = rng.random(25) + 0.5
    assert_same(pyjitc.jit(fit_weighted)(x, y, w), fit_weighted(x, y, w), accumulate=True)


def norms_over_axes(a, t):
    return (np.linalg.norm(a, axis=0), np.linalg.norm(a, ord=1, axis=1), np.linalg.norm(a, ord=-np.inf, axis=0),
            np.linalg.norm(a, axis=1, keepdims=True), np.linalg.norm(t, axis=(1, 2)), np.linalg.norm(a, ord=3, axis=1),
            np.linalg.norm(a, ord=0, axis=1), np.linalg.norm(a.ravel(), ord=-1), np.linalg.norm(t, ord=1, axis=(2, 0)),
            np.linalg.norm(t, ord=np.inf, axis=(0, 2), keepdims=True), np.linalg.norm(a, 2, axis=(1, 0)))


def selected_by_run_time_conditions(a):
    return np.compress(a[:, 0] > 0.5, a, axis=0), np.extract(a > 0.2, a), np.compress((a > 0.4).ravel(), a)


def test_vector_and_matrix_norms_over_any_axes_match_numpy():
    a, t = rng.random((4, 5)) - 0.3, rng.random((3, 4, 5)) - 0.5
    for g, w in zip(pyjitc.jit(norms_over_axes)(a, t), norms_over_axes(a, t)):
        assert_same(g, w, accumulate=True)


def test_compress_and_extract_with_run_time_conditions_are_selections():
    a = rng.random((6, 3))
    for g, w in zip(pyjitc.jit(selected_by_run_time_conditions)(a), selected_by_run_time_conditions(a)):
        assert_same(g, w)


def qr_modes(a):
    return np.linalg.qr(a), np.linalg.qr(a, mode="complete"), np.linalg.qr(a, mode="r")


@pytest.mark.parametrize("shape", [(6, 4), (3, 5), (4, 4), (5, 1), (1, 4)])
def test_qr_gives_lapacks_factors_signs_included(shape):
    a = rng.random(shape) - 0.5
    a[1:, 0] = 0.0          # a column with nothing below the diagonal: no reflection, as dlarfg
    a[0, 0] = -0.0          # and a negative zero on the diagonal: copysign's sign, as Fortran's SIGN
    got, want = pyjitc.jit(qr_modes)(a), qr_modes(a)
    for g, w in zip((*got[0], *got[1], got[2]), (*want[0], *want[1], want[2])):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def eigen_vectors(a):
    return np.linalg.eigh(a)


def general_eigen(a):
    return np.linalg.eig(a), np.linalg.eigvals(a)


def test_eigenvectors_and_general_eigenproblems_are_refused_with_their_reason():
    # (np.linalg.eigh was traced into NumPy's own code and refused for ".__array_wrap__")
    a = MATRICES["tall"].T @ MATRICES["tall"]
    with pytest.raises(pyjitc.NotSupportedError, match=r"test_linalg_spectral.py:\d+:\d+: np.linalg.eigh: the signs"):
        pyjitc.jit(eigen_vectors)(a)
    with pytest.raises(pyjitc.NotSupportedError, match=r"np.linalg.eig \(eigenvalues and vectors"):
        pyjitc.jit(general_eigen)(a)
