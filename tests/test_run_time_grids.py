"""Slices with run-time bounds along two axes (`A[k + 1:, k + 1:]`, `L[j + 1:, :j]`, `np.outer` of
two run-time slices): the loops of LU, Cholesky, Householder and Gaussian elimination steps
compile to one run-time loop instead of being unrolled, and every answer is NumPy's, including
where the compiler falls back to unrolling (pyjitc/frontend/masked_grid.py)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pyjitc
from tests.reference import assert_same
from tests.test_run_time_length import _copies, matches_numpy_at_several_sizes

rng = np.random.default_rng(29)


# ---------------------------------------------------------------- kernels as people write them

def lu_right_looking(A):
    n = A.shape[0]
    for k in range(n - 1):
        A[k + 1:, k] /= A[k, k]
        A[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], A[k, k + 1:])
    return A


def cholesky_by_columns(A):
    n = A.shape[0]
    L = np.zeros_like(A)
    for j in range(n):
        L[j, j] = np.sqrt(A[j, j] - L[j, :j] @ L[j, :j])
        L[j + 1:, j] = (A[j + 1:, j] - L[j + 1:, :j] @ L[j, :j]) / L[j, j]
    return L


def householder_r(A):
    m, n = A.shape
    R = A.copy()
    for k in range(n):
        x = R[k:, k]
        v = x.copy()
        v[0] += np.sign(x[0]) * np.linalg.norm(x)
        v /= np.linalg.norm(v)
        R[k:, k:] -= 2.0 * np.outer(v, v @ R[k:, k:])
    return R


def gaussian_elimination(A, b):
    n = A.shape[0]
    for k in range(n - 1):
        f = A[k + 1:, k] / A[k, k]
        A[k + 1:, k:] -= np.outer(f, A[k, k:])
        b[k + 1:] -= f * b[k]
    return A, b


def trailing_stats(A):
    n = A.shape[0]
    out = np.zeros((n, 4))
    for k in range(n):
        S = A[k:, k:]
        out[k, 0] = S.sum()
        out[k, 1] = np.max(np.abs(S))
        out[k, 2] = (S * 2.0 - 1.0).mean()
        out[k, 3] = S.sum(axis=0).max()
    return out


def elimination_by_broadcasting(A):
    # the outer product written with length-1 slices: rows masked times columns masked
    n = A.shape[0]
    for k in range(n - 1):
        A[k + 1:, k + 1:] -= A[k + 1:, k:k + 1] * A[k:k + 1, k + 1:] / A[k, k]
    return A


def transposed_and_normalised_blocks(A, B):
    n = A.shape[0]
    for k in range(n):
        B[k:, k:] += A[k:, k:].T
        B[k:, k:] /= np.abs(B[k:, k:]).sum(axis=0, keepdims=True) + 1.0
    return B


def triangles_of_blocks(A):
    n = A.shape[0]
    r = np.zeros((n, 4))
    for k in range(n):
        r[k, 0] = np.trace(A[k:, k:])
        r[k, 1] = np.tril(A[k:, k:]).sum()
        r[k, 2] = np.triu(A[k:, k:], 2).sum() - np.tril(A[k:, k:], -1).sum()
        r[k, 3] = A[:k, k:].trace(1) + np.trace(A[k:, :k], -1)
    return r


def spd(n):
    a = rng.random((n, n))
    return a @ a.T + n * np.eye(n)


KERNELS = {
    "lu_right_looking": (lu_right_looking, lambda n: (spd(n),)),
    "cholesky_by_columns": (cholesky_by_columns, lambda n: (spd(n),)),
    "householder_r": (householder_r, lambda n: (rng.random((n + 3, n)),)),
    "gaussian_elimination": (gaussian_elimination, lambda n: (spd(n), rng.random(n))),
    "trailing_stats": (trailing_stats, lambda n: (rng.random((n, n)) - 0.5,)),
    "elimination_by_broadcasting": (elimination_by_broadcasting, lambda n: (spd(n),)),
    "triangles_of_blocks": (triangles_of_blocks, lambda n: (rng.random((n, n)) - 0.5,)),
    "transposed_and_normalised_blocks": (transposed_and_normalised_blocks, lambda n: (rng.random((n, n)), rng.random((n, n)))),
}


@pytest.mark.parametrize("name", list(KERNELS))
def test_kernels_over_shrinking_submatrices_match_numpy_at_several_sizes(name):
    matches_numpy_at_several_sizes(*KERNELS[name])


@pytest.mark.parametrize("name", list(KERNELS))
def test_kernels_over_shrinking_submatrices_are_one_loop_whose_size_does_not_grow_with_n(name):
    # unrolled (as before masked_grid.py), the program grew with n: a 100x100 Cholesky by columns
    # failed in IREE ("failed to solve for usage analysis"), a 300-column Householder took minutes
    fn, make = KERNELS[name]
    f = pyjitc.jit(fn)
    small, large = (f.lower(*make(n)).as_text() for n in (12, 40))
    assert "stablehlo.while" in small or "scf.while" in small
    assert len(small.splitlines()) == len(large.splitlines())


# ---------------------------------------------------------------- NumPy's rules at run time

def block_reads(A, a, b, c, d):
    S = A[a:b, c:d]
    # (results of run-time length are reduced: returned, they would make the bounds static)
    return S.sum(), S.mean(), np.sum((S * 3.0).sum(axis=0) ** 2), S.sum(axis=1) @ A[a:b, 0], S.mean(axis=0).sum()


def block_max(A, a, b, c, d):
    return A[a:b, c:d].max(), np.abs(A[a:b, c:d] - 0.5).min(axis=1).sum()


def block_writes(A, a, b, c, d, v):
    A[a:b, c:d] = v
    A[a:b, c:d] += A[a:b, c:d] * 0.5


def block_products(A, x, a, b, c, d):
    u, v = A[a:b, c:d] @ x[c:d], x[a:b] @ A[a:b, c:d]
    return u.sum(), (v * v).sum(), u @ x[a:b]


def outer_update(A, x, y, a, b, c, d):
    A[a:b, c:d] -= np.outer(x[a:b], y[c:d])


def test_the_block_functions_compile_once_for_every_bound(jitted):
    # (the bounds stay run-time values: the rules above serve every use, none asks for them)
    A, x, y = rng.random((7, 7)), rng.random(7), rng.random(7)
    for a, b, c, d in [(1, 5, 2, 6), (0, 3, -4, 7)]:
        jitted["block_reads"](A, a, b, c, d)
        jitted["block_max"](A, a, b, c, d)
        jitted["block_writes"](A.copy(), a, b, c, d, 1.5)
        jitted["block_products"](A, x, a, b, c, d)
        jitted["outer_update"](A.copy(), x, y, a, b, c, d)
    assert [f.cache_info().misses for f in jitted.values()] == [1] * 5


@pytest.fixture(scope="module")
def jitted():
    return {fn.__name__: pyjitc.jit(fn) for fn in (block_reads, block_max, block_writes, block_products, outer_update)}


bound = st.integers(-8, 8)


@settings(max_examples=20, deadline=None)
@given(a=bound, b=bound, c=bound, d=bound)
def test_reads_of_a_block_with_run_time_bounds_clip_and_wrap_as_numpys(jitted, a, b, c, d):
    A = rng.random((6, 7))
    with np.errstate(all="ignore"):
        want = block_reads(A, a, b, c, d)
    assert_same(jitted["block_reads"](A, a, b, c, d), want, accumulate=True)


@settings(max_examples=15, deadline=None)
@given(a=bound, b=bound, c=bound, d=bound)
def test_max_of_a_block_is_numpys_or_its_zero_size_error(jitted, a, b, c, d):
    A = rng.random((6, 7))
    try:
        expected = block_max(A, a, b, c, d)
    except ValueError:
        with pytest.raises(ValueError, match="zero-size"):
            jitted["block_max"](A, a, b, c, d)
        return
    assert_same(jitted["block_max"](A, a, b, c, d), expected)


@settings(max_examples=20, deadline=None)
@given(a=bound, b=bound, c=bound, d=bound, v=st.floats(-3, 3))
def test_writes_into_a_block_touch_exactly_numpys_elements(jitted, a, b, c, d, v):
    A = rng.random((6, 7))
    mine, theirs = A.copy(), A.copy()
    jitted["block_writes"](mine, a, b, c, d, v)
    block_writes(theirs, a, b, c, d, v)
    assert_same(mine, theirs)


@settings(max_examples=20, deadline=None)
@given(a=bound, b=bound, c=bound, d=bound)
def test_products_and_outer_updates_of_blocks_are_numpys_or_its_shape_error(jitted, a, b, c, d):
    A, x, y = rng.random((7, 7)), rng.random(7), rng.random(7)
    assert_same(jitted["block_products"](A, x, a, b, c, d), block_products(A, x, a, b, c, d), accumulate=True)
    mine, theirs = A.copy(), A.copy()
    jitted["outer_update"](mine, x, y, a, b, c, d)
    outer_update(theirs, x, y, a, b, c, d)
    assert_same(mine, theirs, accumulate=True)


# ---------------------------------------------------------------- what falls back, and stays right

def blocks_of_other_bounds(A, i, j):
    return (A[i:, j:] * 2.0).sum() + A[i:, i:].sum()


def block_with_a_full_row(A, k):
    return (A[k:, k:] + A[0, k:]).sum()


def block_times_fixed_vector(A, x, k):
    s = 0.0
    for i in range(k):
        s += (A[i:, i:] * x[i]).sum()
    return s


def block_returned(A, i, j):
    return A[i:, :j] * 2.0


def block_transposed(A, k):
    return A[k:, k:].T.sum(axis=0)


@pytest.mark.parametrize("fn, args", [
    (blocks_of_other_bounds, lambda: (rng.random((5, 5)), 1, 3)),
    (block_with_a_full_row, lambda: (rng.random((5, 5)), 2)),
    (block_times_fixed_vector, lambda: (rng.random((5, 5)), rng.random(5), 4)),
    (block_returned, lambda: (rng.random((5, 5)), 2, 3)),
    (block_transposed, lambda: (rng.random((5, 5)), 2)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_uses_a_block_rule_cannot_serve_unroll_or_make_the_bounds_static_and_match_numpy(fn, args):
    a = args()
    mine, theirs = _copies(a), _copies(a)
    assert_same(pyjitc.jit(fn)(*mine), fn(*theirs), accumulate=True)
    assert_same(mine, theirs)
