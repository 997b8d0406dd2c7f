"""Slices whose length is known only at run time (A[i, :j], x[lo:hi], data[:, i + 1:m]): loops over
shrinking or growing slices compile to one run-time loop, and every answer is NumPy's, including
where the compiler falls back to unrolling or to compile-time bounds (pyjitc/frontend/masked.py)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pyjitc
from tests.reference import assert_same, assert_same_call

rng = np.random.default_rng(17)


# ---------------------------------------------------------------- kernels as people write them

def cholesky(A):
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])
    return A


def lu(A):
    N = A.shape[0]
    for i in range(N):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, N):
            A[i, j] -= A[i, :i] @ A[:i, j]


def correlation(M, float_n, data):
    mean = np.mean(data, axis=0)
    stddev = np.std(data, axis=0)
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(float_n) * stddev
    corr = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    return corr


def trisolv(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


def syrk(alpha, beta, C, A):
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += alpha * A[:i + 1, k] * A[i, k]


def trmm(alpha, A, B):
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.dot(A[i + 1:, i], B[i + 1:, j])
    B *= alpha


def running_stats(x):
    out = np.empty((3, x.shape[0]))
    for i in range(x.shape[0]):
        out[0, i] = x[:i + 1].max()
        out[1, i] = x[i:].mean()
        out[2, i] = np.sum(np.abs(x[:i + 1] - x[i]))
    return out


def durbin(r):
    y = np.empty_like(r)
    alpha, beta = -r[0], 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta     # a reversed run-time slice
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y


def durbin_reversed_by_slicing(r):
    n = r.shape[0]
    y = np.zeros_like(r)
    y[0] = -r[0]
    beta, alpha = 1.0, -r[0]
    for k in range(1, n):
        beta = (1.0 - alpha * alpha) * beta
        alpha = -(r[k] + r[:k][::-1] @ y[:k]) / beta    # [::-1] of a run-time slice
        y[:k] += alpha * y[:k][::-1]
        y[k] = alpha
    return y


def causal_convolution(r, y):
    out = np.zeros_like(r)
    for k in range(1, r.shape[0]):
        out[k] = r[:k][::-1] @ y[:k]
    return out


def pivot_rows(A):
    # Gaussian elimination's pivot search (np.argmax over a shrinking column): was unrolled,
    # compile time growing with n (17 s at n = 120)
    n = A.shape[0]
    piv = np.zeros(n, dtype=np.int64)
    for k in range(n - 1):
        piv[k] = np.argmax(np.abs(A[k:, k])) + k
        piv[n - 1 - k] = A[k, k:].argmin()
    return piv


def pairs_within_cutoff(x):
    # (2.0 * d)[d < 0.5] over the shrinking pairs of a Lennard-Jones-style energy: was refused
    E = 0.0
    for i in range(x.shape[0] - 1):
        d = x[i + 1:] - x[i]
        E += np.sum((2.0 * d)[d < 0.5]) + np.sum(np.real(d[d < 0.25]))
    return E


def reversed_partial_sums(x):
    # x[i::-1], a slice with step -1 from a loop variable: was refused
    out = np.zeros(x.shape[0])
    for i in range(1, x.shape[0]):
        out[i] = x[i::-1].sum() + np.dot(x[i - 1::-1], x[:i])
    return out


def spd(n):
    a = rng.random((n, n))
    return a @ a.T + n * np.eye(n)


KERNELS = {
    "cholesky": (cholesky, lambda n: (spd(n),)),
    "lu": (lu, lambda n: (spd(n),)),
    "correlation": (correlation, lambda n: (n, float(n + 3), rng.random((n + 3, n)))),
    "trisolv": (trisolv, lambda n: (np.tril(spd(n)), np.zeros(n), rng.random(n))),
    "syrk": (syrk, lambda n: (1.5, 1.2, rng.random((n, n)), rng.random((n, 3)))),
    "trmm": (trmm, lambda n: (1.5, rng.random((n, n)), rng.random((n, n)))),
    "running_stats": (running_stats, lambda n: (rng.standard_normal(n),)),
    "durbin": (durbin, lambda n: (rng.random(n) * 0.1,)),
    "durbin_reversed_by_slicing": (durbin_reversed_by_slicing, lambda n: (rng.random(n) * 0.1,)),
    "causal_convolution": (causal_convolution, lambda n: (rng.random(n), rng.random(n))),
    "pivot_rows": (pivot_rows, lambda n: (rng.random((n, n)) - 0.5,)),
    "pairs_within_cutoff": (pairs_within_cutoff, lambda n: (rng.random(n) * 0.8,)),
    "reversed_partial_sums": (reversed_partial_sums, lambda n: (rng.random(n),)),
}


def _copies(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def matches_numpy_at_several_sizes(fn, make):
    """fn compiled gives NumPy's results and leaves its arguments as NumPy does, at n = 1, 2, 9."""
    f = pyjitc.jit(fn)
    for n in (1, 2, 9):
        args = make(n)
        mine, theirs = _copies(args), _copies(args)
        assert_same(f(*mine), fn(*theirs), accumulate=True)
        assert_same(mine, theirs, accumulate=True)


@pytest.mark.parametrize("name", list(KERNELS))
def test_kernels_over_shrinking_slices_match_numpy_at_several_sizes(name):
    matches_numpy_at_several_sizes(*KERNELS[name])


@pytest.mark.parametrize("name", ["cholesky", "correlation", "trisolv", "durbin_reversed_by_slicing", "pivot_rows",
                                  "pairs_within_cutoff", "reversed_partial_sums"])
def test_kernels_over_shrinking_slices_compile_to_loops_whose_size_does_not_grow_with_n(name):
    # unrolled, the program grows with n (n**2 copies of the body for Cholesky); as a run-time
    # loop it is the same program for every n, up to the numbers in its shapes (from 2 *
    # scalar_arrays.PARTIALS elements on, where a float sum keeps several partial sums)
    fn, make = KERNELS[name]
    f = pyjitc.jit(fn)
    small, large = (f.lower(*make(n)).as_text() for n in (12, 40))
    assert "stablehlo.while" in small or "scf.while" in small    # (a native loop: scf.while)
    assert len(small.splitlines()) == len(large.splitlines())


# ---------------------------------------------------------------- NumPy's slice rules at run time

def window(x, lo, hi):
    w = x[lo:hi]
    return w.sum(), np.dot(w, w), (w * 2.0 + 1.0).sum(), x[lo:hi].mean(), np.prod(x[lo:hi] + 1.0)


def window_max(x, lo, hi):
    return x[lo:hi].max(), x[lo:].min()


def fill_window(x, lo, hi, v):
    x[lo:hi] = v
    x[lo:hi] += x[lo:hi] * 0.5


def columns(A, lo, hi):
    A[:, lo:hi] *= 2.0
    return A[lo:hi, :].sum(axis=0), A[lo:hi].sum()


@pytest.fixture(scope="module")
def jitted():
    return {fn.__name__: pyjitc.jit(fn) for fn in (window, window_max, fill_window, columns)}


bound = st.integers(-10, 10)


@settings(max_examples=40, deadline=None)
@given(lo=bound, hi=bound)
def test_run_time_bounds_clip_and_wrap_as_numpy_slices_do(jitted, lo, hi):
    x = np.linspace(-1.0, 2.0, 8)
    with np.errstate(all="ignore"):
        want = window(x, lo, hi)
    assert_same(jitted["window"](x, lo, hi), want, accumulate=True)


@settings(max_examples=25, deadline=None)
@given(lo=bound, hi=bound)
def test_max_of_a_run_time_slice_is_numpys_or_its_zero_size_error(jitted, lo, hi):
    x = np.linspace(-1.0, 2.0, 8)
    try:
        want = window_max(x, lo, hi)
    except ValueError:
        with pytest.raises(ValueError, match="zero-size array"):
            jitted["window_max"](x, lo, hi)
        return
    assert_same(jitted["window_max"](x, lo, hi), want)


@settings(max_examples=25, deadline=None)
@given(lo=bound, hi=bound, v=st.sampled_from([3, -1.5]))
def test_writes_into_a_run_time_slice_touch_exactly_numpys_elements(jitted, lo, hi, v):
    x, y = np.arange(8.0), np.arange(8.0)
    fill_window(y, lo, hi, v)
    jitted["fill_window"](x, lo, hi, v)
    assert_same(x, y)


@settings(max_examples=20, deadline=None)
@given(lo=st.integers(-6, 6), hi=st.integers(-6, 6))
def test_run_time_slices_of_a_matrix_along_rows_and_columns(jitted, lo, hi):
    A, B = np.arange(30.0).reshape(5, 6), np.arange(30.0).reshape(5, 6)
    assert_same(jitted["columns"](A, lo, hi), columns(B, lo, hi))
    assert_same(A, B)


def slices_of_other_bounds(x, y, a, b, c, d):
    s = (x[a:b] * y[c:d]).sum()
    t = x[a:b] @ y[c:d]
    y[c:d] = x[a:b] + 1.0
    return s, t


@settings(max_examples=40, deadline=None)
@given(a=st.integers(-7, 7), b=st.integers(-7, 7), c=st.integers(-6, 6), d=st.integers(-6, 6))
def test_slices_of_other_run_time_bounds_combine_move_and_broadcast_as_numpys_or_raise_its_error(a, b, c, d):
    """`x[a:b] * y[c:d]`, `x[a:b] @ y[c:d]`, `y[c:d] = x[a:b]`: the elements meet by position in
    their slices (one compiled function for every bound); a slice of length 1 broadcasts;
    other lengths that differ raise NumPy's ValueError when the function runs."""
    x, y = np.linspace(-1.0, 2.0, 7), np.arange(6.0)
    mine = y.copy()
    try:
        want = slices_of_other_bounds(x, y, a, b, c, d)
    except ValueError:
        with pytest.raises(ValueError, match="broadcast|not aligned"):
            OTHER_BOUNDS(x, mine, a, b, c, d)
        return
    assert_same(OTHER_BOUNDS(x, mine, a, b, c, d), want, accumulate=True)
    assert_same(mine, y)


OTHER_BOUNDS = pyjitc.jit(slices_of_other_bounds)


def test_one_executable_serves_every_pair_of_run_time_bounds():
    f = pyjitc.jit(window)
    x = np.arange(8.0)
    for lo, hi in ((0, 8), (2, 5), (-3, 7), (6, 1)):
        f(x, lo, hi)
    assert f.cache_info().misses == 1


def sum_to_a_length_read_from_data(x, counts):
    return x[:counts[0]].sum()


def test_a_slice_length_read_from_array_data_is_masked_not_refused():
    x, counts = np.arange(10.0), np.array([4])
    assert_same(pyjitc.jit(sum_to_a_length_read_from_data)(x, counts), sum_to_a_length_read_from_data(x, counts))


# ---------------------------------------------------------------- what falls back, and stays right

def flipped_prefix(y):
    s = 0.0
    for k in range(1, y.shape[0]):
        s += np.dot(np.flip(y[:k]), y[:k])
    return s


def copy_and_length(x, k):
    c = x[:k].copy()
    return c, len(x[:k]), x[:k][0]


def returned_prefix(x, k):
    return x[:k] * 2.0


def last_prefix_after_the_loop(x, n):
    r = x[:1]
    for i in range(n):
        r = x[:i + 1]
    return r.sum()


def previous_iterations_prefix(x):
    r = x[:1]
    t = 0.0
    for i in range(1, x.shape[0]):
        t += r.sum()
        r = x[:i]
    return t


def prefix_chosen_by_a_branch(x, i, j, c):
    r = x[:i] if c > 0 else x[:j]
    return r.sum()


def prefix_then_base_written(x, k):
    r = x[:k]
    x[0] = 100.0
    return r.sum()


def prefixes_of_different_bounds(x, i, j):
    return (x[:i] + x[:j]).sum()


@pytest.mark.parametrize("fn, args", [
    (flipped_prefix, lambda: (rng.random(7),)),
    (copy_and_length, lambda: (np.arange(6.0), 3)),
    (returned_prefix, lambda: (np.arange(6.0), 4)),
    (last_prefix_after_the_loop, lambda: (np.arange(6.0), 4)),
    (previous_iterations_prefix, lambda: (np.arange(6.0),)),
    (prefix_chosen_by_a_branch, lambda: (np.arange(6.0), 2, 5, -1)),
    (prefix_then_base_written, lambda: (np.arange(6.0), 3)),
    (prefixes_of_different_bounds, lambda: (np.arange(6.0), 3, 3)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_uses_a_masked_slice_cannot_serve_unroll_or_make_the_bounds_static_and_match_numpy(fn, args):
    a = args()
    mine, theirs = _copies(a), _copies(a)
    assert_same(pyjitc.jit(fn)(*mine), fn(*theirs), accumulate=True)
    assert_same(mine, theirs)


# ---------------------------------------------------------------- x[mask] with a run-time mask

def selection_stats(x):
    pos = x[x > 0]
    return pos.sum(), pos.mean(), np.abs(x[x < 0]).max(), pos.size, len(pos), x[np.isfinite(x)].mean()


def selection_written_back(x, y):
    m = x > 0.5
    y[m] = np.sqrt(x[m]) * 2.0
    return (x[m] * y[m]).sum(), np.dot(x[m], y[m]), np.max(x[m] - 1.0)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), shape=st.sampled_from([(7,), (3, 4), (2, 3, 2)]))
def test_reductions_and_writes_of_a_run_time_selection_match_numpy(seed, shape):
    x = np.random.default_rng(seed).standard_normal(shape)
    f, g = pyjitc.jit(selection_stats), pyjitc.jit(selection_written_back)
    for fn, jitted, args in ((selection_stats, f, (x,)), (selection_written_back, g, (np.abs(x), np.zeros(shape)))):
        mine, theirs = _copies(args), _copies(args)
        try:
            with np.errstate(all="ignore"):
                want = fn(*theirs)
        except ValueError:       # max of an empty selection
            with pytest.raises(ValueError, match="zero-size array"):
                jitted(*mine)
            continue
        assert_same(jitted(*mine), want, accumulate=True)
        assert_same(mine, theirs)


def flipped_window(r, y, lo, hi):
    a = np.flip(r[lo:hi])
    return np.dot(a, y[lo:hi]), a.sum(), np.flip(r[:hi]) @ y[:hi]


@settings(max_examples=25, deadline=None)
@given(lo=st.integers(-12, 12), hi=st.integers(-12, 12))
def test_a_reversed_run_time_slice_is_numpys(lo, hi):
    r, y = np.arange(10.0), np.arange(10.0) ** 2
    assert_same(FLIPPED(r, y, lo, hi), flipped_window(r, y, lo, hi))


FLIPPED = pyjitc.jit(flipped_window)


def test_a_loop_reading_reversed_run_time_slices_is_a_native_loop():
    # the reversal is a padded, moved copy of the whole axis; element by element it is one read
    args = rng.random(40), rng.random(40)
    assert "scf.while" in pyjitc.jit(causal_convolution).lower(*args).as_text()


def reversed_by_slicing(r, y, A, lo, hi):
    a = r[lo:hi][::-1]
    rows, cols = A[lo:hi][::-1], A[:, lo:hi][:, ::-1]
    return np.dot(a, y[lo:hi]), a.sum(), rows.sum(axis=0), (cols * A[:, lo:hi]).sum(), A[lo:hi, :][::-1, ::-1].max(axis=1)


@settings(max_examples=25, deadline=None)
@given(lo=st.integers(-12, 12), hi=st.integers(-12, 12))
def test_a_run_time_slice_reversed_by_slicing_is_numpys(lo, hi):
    r, y, A = np.arange(10.0), np.arange(10.0) ** 2, np.arange(100.0).reshape(10, 10) % 7
    try:
        want = reversed_by_slicing(r, y, A, lo, hi)
    except ValueError:   # max of an empty slice
        with pytest.raises(ValueError, match="zero-size array"):
            REVERSED(r, y, A, lo, hi)
        return
    assert_same(REVERSED(r, y, A, lo, hi), want)


REVERSED = pyjitc.jit(reversed_by_slicing)


def written_through_a_reversed_prefix(y, m):
    for i in range(1, m):
        z = y[:i][::-1]
        z += 1.0
        z[0] = z[0] * 2.0       # the last element of the prefix
    return y


def test_writes_through_a_reversed_run_time_slice_reach_the_array_as_in_numpy():
    mine, theirs = np.arange(6.0), np.arange(6.0)
    assert_same(pyjitc.jit(written_through_a_reversed_prefix)(mine, 5), written_through_a_reversed_prefix(theirs, 5))
    assert_same(mine, theirs)


def reversed_window(x, lo, hi):
    return x[hi:lo:-1].sum(), x[hi::-1].sum(), x[:lo:-1].sum(), np.argmax(x[lo:hi]), np.argmin(x[hi:])


@settings(max_examples=40, deadline=None)
@given(lo=bound, hi=bound)
def test_negative_step_run_time_slices_and_their_argmax_follow_numpys_rules(lo, hi):
    # negative bounds from the end, clipped to [-1, n - 1], empty where they cross; argmax of
    # ties and of an all -inf slice: the first element (frontend/indexing.py, masked.py)
    x = np.array([3.0, -np.inf, 3.0, 1.0, -np.inf, -np.inf, 2.0, 3.0])
    f = pyjitc.jit(reversed_window)
    try:
        want = reversed_window(x, lo, hi)
    except ValueError:
        with pytest.raises(ValueError, match="empty sequence"):
            f(x, lo, hi)
        return
    assert_same(f(x, lo, hi), want)


def running_statistics(x, k):
    n = x.shape[0]
    out = np.zeros((n, 4))
    for i in range(1, n + 1):
        out[i - 1, 0] = np.var(x[:i])
        out[i - 1, 1] = np.std(x[max(0, i - 5):i], ddof=0)
        out[i - 1, 2] = np.median(x[max(0, i - 5):i])
        out[i - 1, 3] = np.cumsum(x[k:i]).sum()
    return out


def test_var_std_median_cumsum_of_run_time_slices_in_a_loop_are_numpys_without_unrolling():
    f = pyjitc.jit(running_statistics)
    x = np.random.default_rng(4).random(40)
    for k in (0, 3):
        assert_same(f(x, k), running_statistics(x, k))
    # one run-time loop (unrolled, 40 copies of the body: 24 s to compile, minutes at n = 3000)
    assert f.lower(x, 0).as_text().count("stablehlo.while") == 1


def householder_qr(A):
    m, n = A.shape
    R = A.copy()
    Q = np.eye(m)
    for k in range(n):
        x = R[k:, k]
        nx = np.linalg.norm(x)
        s = -1.0 if x[0] < 0 else 1.0
        v = x.copy()
        v[0] += s * nx
        v = v / np.linalg.norm(v)
        R[k:, :] -= 2.0 * np.outer(v, v @ R[k:, :])
        Q[:, k:] -= 2.0 * np.outer(Q[:, k:] @ v, v)
    return Q, R


def first_and_last_of_tails(x, k):
    t = x[k:]
    head = t[0] + t[-1]
    t[1] = -1.0          # a view: writes into x
    c = x[:k].copy()
    c[0] = 7.0           # a copy: x unchanged
    return head, c.sum(), x


def test_elements_copies_and_norms_of_run_time_slices_keep_the_loop_one_run_time_loop():
    # (each asked for the slice's bounds at compile time: a Householder QR of 120x80 was unrolled,
    # 68 s to compile; now one loop, 1.2 s)
    A = np.random.default_rng(10).random((9, 6))
    f = pyjitc.jit(householder_qr)
    assert_same(f(A), householder_qr(A), accumulate=True)   # (R below the diagonal: rounding noise around 0)
    assert f.lower(A).as_text().count("stablehlo.while") + f.lower(A).as_text().count("flow.dispatch.region") >= 1
    g = pyjitc.jit(first_and_last_of_tails)
    for k in (2, -4):
        assert_same(g(np.arange(8.0), k), first_and_last_of_tails(np.arange(8.0), k))
    with pytest.raises(IndexError):
        first_and_last_of_tails(np.arange(8.0), 8)
    with pytest.raises(IndexError, match="out of bounds"):
        g(np.arange(8.0), 8)


# ---------------------------------------------------------------- op= on a name bound to a slice

def shifted_counts(a, b):
    for k in range(a.shape[0]):
        s = a[k:]
        s += 1
        t = a[:k]
        t -= b[:k] * 0.5
    return a


def scaled_rows_and_trailing_update(A):
    n = A.shape[0]
    for k in range(n - 1):
        S = A[k + 1:, k + 1:]
        S -= 0.01 * np.outer(A[k + 1:, k], A[k, k + 1:])
        v = A[k:, k]
        v /= 2.0
    return A


def copies_and_selections_stay_apart(a):
    k = 0
    while k < a.shape[0]:
        c = a[k:].copy()
        c += 100.0        # (a copy: a keeps its values)
        s = a[a > 50.0]
        s += 1.0          # (a selection is a copy too)
        a[k] += c.sum() * 1e-3
        k += 1
    return a


@pytest.mark.parametrize("fn, args", [
    (shifted_counts, lambda: (np.zeros(9), np.arange(9.0))),
    (scaled_rows_and_trailing_update, lambda: (rng.random((8, 8)),)),
    (copies_and_selections_stay_apart, lambda: (rng.random(7),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_op_equals_on_a_name_bound_to_a_run_time_slice_writes_into_its_base(fn, args):
    # `s = a[k:]; s += 1` in a run-time loop rebound s and left a unchanged (found by a probe of
    # dense linear algebra kernels: the LU update `S -= ...` of S = A[k + 1:, k + 1:] was lost)
    a = args()
    mine, theirs = _copies(a), _copies(a)
    f = pyjitc.jit(fn)
    assert_same(f(*mine), fn(*theirs), accumulate=True)
    assert_same(mine, theirs, accumulate=True)
    assert "while" in f.lower(*_copies(a)).as_text()     # (one run-time loop, where it was lost)


# ---------------------------------------------------------------- blocks at run-time offsets

def sudoku_blocks_valid(b):
    for bi in range(3):
        for bj in range(3):
            blk = b[3 * bi:3 * bi + 3, 3 * bj:3 * bj + 3]
            cnt = np.zeros(10, dtype=np.int8)
            for v in blk.ravel():
                cnt[v] += 1
            if np.any(cnt[1:] > 1):
                return False, bi * 3 + bj
    return True, -1


def test_blocks_at_run_time_offsets_are_fixed_length_slices_and_their_ravel_is_iterable():
    # `3 * bi:3 * bi + 3` computes 3 * bi twice: it was a slice of run-time length (the loop
    # unrolled: nine nested ifs, which IREE 3.13 failed at run time), and iterating the ravel of
    # a view of an argument was refused as possibly changed (a probe of algorithmic code)
    board = np.array([[(i * 3 + i // 3 + j) % 9 + 1 for j in range(9)] for i in range(9)], np.uint8)
    bad = board.copy()
    bad[4, 4] = bad[4, 5]
    f = pyjitc.jit(sudoku_blocks_valid)
    for b in (board, bad, np.zeros((9, 9), np.uint8)):
        assert_same(f(b), sudoku_blocks_valid(b))
    assert "while" in f.lower(board).as_text()


def binomial_american_put(S0, K, T, r, sigma, n):
    dt = T / n
    u = np.exp(sigma * np.sqrt(dt))
    d = 1 / u
    p = (np.exp(r * dt) - d) / (u - d)
    disc = np.exp(-r * dt)
    j = np.arange(n + 1)
    S = S0 * u ** (n - j) * d ** j
    v = np.maximum(K - S, 0.0)           # S read before the loop: the loop's S is not carried
    for i in range(n - 1, -1, -1):
        S = S0 * u ** (i - np.arange(i + 1)) * d ** np.arange(i + 1)
        v[:i + 1] = disc * (p * v[:i + 1] + (1 - p) * v[1:i + 2])
        v[:i + 1] = np.maximum(v[:i + 1], K - S)
    return v[0]


def arrays_of_loop_lengths(x, n):
    out = np.zeros(n)
    for i in range(n):
        w = np.ones(i + 1) / (i + 1)        # a moving average over the first i + 1 samples
        out[i] = (x[:i + 1] * w).sum() + np.arange(1, i + 2).sum() + np.zeros(i, dtype=np.int32).sum()
    return out


@pytest.mark.parametrize("n", [1, 2, 7, 60])
def test_arrays_sized_by_a_loop_variable_keep_the_loop_one_run_time_loop(n):
    # np.arange(i + 1), np.ones(i + 1) asked for i at compile time: the loop was unrolled (an
    # American option's tree at n = 200 compiled in 43 s, at n = 500 not in 10 minutes)
    f = pyjitc.jit(binomial_american_put)
    assert_same(f(100.0, 100.0, 1.0, 0.05, 0.2, n), binomial_american_put(100.0, 100.0, 1.0, 0.05, 0.2, n))
    g = pyjitc.jit(arrays_of_loop_lengths)
    x = np.random.default_rng(n).random(n)
    assert_same(g(x, n), arrays_of_loop_lengths(x, n))
    if n >= 7:
        assert f.lower(100.0, 100.0, 1.0, 0.05, 0.2, n).as_text("typed").count(" while(") == 1
        assert g.lower(x, n).as_text("typed").count(" while(") == 1


def trailing_windows(x):
    s = np.zeros(len(x))
    m = np.zeros(len(x))
    for i in range(len(x)):
        s[i] = x[i - 2:i + 1].sum()        # x[-2:1] and x[-1:2] at i = 0, 1: empty, as NumPy
        w = x[i - 2:i + 1]
        m[i] = w.mean() if w.size else -1.0
    return s, m


@pytest.mark.parametrize("n", [2, 3, 9, 40])
def test_a_window_whose_start_may_be_negative_has_numpys_bounds(n):
    # raised RunError "a slice of length 3 with a run-time start runs outside an axis", where
    # NumPy counts a negative start from the end (an empty window here)
    x = np.arange(float(n)) ** 2
    assert_same(pyjitc.jit(trailing_windows)(x), trailing_windows(x))


def insertion_sort_by_search(x, side):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        k = np.searchsorted(out[:i], x[i], side=side)
        out[k + 1:i + 1] = out[k:i].copy()
        out[k] = x[i]
    return out


def searches_in_windows(a, lo, v):
    s = 0
    for i in range(lo, a.shape[0]):
        s += np.searchsorted(a[lo:i], v) + 10 * np.searchsorted(a[lo:i + 1], a[i], side="right")
    return s


@pytest.mark.parametrize("n", [0, 1, 2, 9, 60])
def test_searchsorted_in_a_run_time_slice_is_numpys_and_keeps_the_loop(n):
    # np.searchsorted(out[:i], x[i]) asked for i at compile time: the loop was unrolled (an
    # insertion sort at n = 200 compiled in 74 s)
    x = np.random.default_rng(n).integers(0, 5, n).astype(float)
    if n > 3:
        x[2] = np.nan
    for side in ("left", "right"):
        f = pyjitc.jit(insertion_sort_by_search)
        assert_same(f(x, side), insertion_sort_by_search(x, side))
        if n >= 9:
            assert f.lower(x, side).as_text("typed").count(" while(") == 1
    a = np.sort(np.random.default_rng(n).integers(0, 9, n + 4)).astype(float)
    g = pyjitc.jit(searches_in_windows)
    for lo in (0, 3, n + 3, n + 4):
        for v in (0.0, 4.0, np.nan):
            assert_same(g(a, lo, v), searches_in_windows(a, lo, v))


def two_loops_over_rows(A, c):
    for row in A:
        row *= c
        row[0] = row.sum()
    for i, row in enumerate(A):
        row[min(i, len(row) - 1)] = -1.0
    s = [row.max() for row in A]
    return A.sum(), s


def test_two_loops_binding_one_name_to_rows_of_an_argument_stay_run_time_loops():
    # the second loop's reads of `row` made the first carry it: bound to another row of the
    # argument each pass, the first loop was unrolled (124 s to compile at 500x50)
    A = np.random.default_rng(3).random((30, 4))
    f = pyjitc.jit(two_loops_over_rows)
    a1, a2 = A.copy(), A.copy()
    assert_same(f(a1, 2.0), two_loops_over_rows(a2, 2.0))
    assert_same(a1, a2)
    # the two loops and the comprehension (over more than 16 rows: a loop too)
    assert f.lower(A, 2.0).as_text("typed").count(" while(") == 3


def path_to(prev, t):
    path = np.full(len(prev), -1)
    k = 0
    v = t
    while v != -1:
        path[k] = v
        k += 1
        v = prev[v]
    return path[:k], k


def test_a_run_time_slice_of_a_local_array_can_be_returned():
    # refused ("returning it needs it at compile time", pointing at the while): NumPy returns a
    # view of a local array, which the caller can't tell from a copy
    prev = np.array([-1, 0, 1, 1, 3])
    f = pyjitc.jit(path_to)
    for t in (4, 2, 0):
        assert_same(f(prev, t), path_to(prev, t))


def sieve_in_place(flags):
    n = len(flags)
    for i in range(2, n):
        if i * i >= n:
            break
        if flags[i]:
            flags[i * i::i] = False
    return flags.sum()


def primes_below(n):
    flags = np.ones(n, dtype=bool)
    flags[:2] = False
    for i in range(2, int(n ** 0.5) + 1):
        if flags[i]:
            flags[i * i::i] = False
    return np.nonzero(flags)[0]


def reads_and_writes_at_run_time_steps(x, k):
    s = 0.0
    for i in range(1, 6):
        s += x[k::i].sum() + x[:k:i].max() + x[k::i].mean()
        x[1::i] += 1.0
    return s, x


@pytest.mark.parametrize("n", [2, 3, 30, 400])
def test_slices_with_a_positive_run_time_step_are_selections_and_keep_the_loop(n):
    # flags[i * i::i] asked for the step i at compile time: a sieve of 40000 unrolled 193 passes
    # (49 s to compile, 72 ms a call); now one loop (0.8 s, 1 ms)
    f1, f2 = np.ones(n, bool), np.ones(n, bool)
    f = pyjitc.jit(sieve_in_place)
    assert_same(f(f1), sieve_in_place(f2))
    assert_same(f1, f2)
    assert_same(pyjitc.jit(primes_below)(n), primes_below(n))
    if n >= 30:   # the loop over i, and on CPU the loop over the slice's elements inside it
        assert f.lower(f1).as_text("typed").count(" while(") == 2
    x1, x2 = np.arange(20.0), np.arange(20.0)
    assert_same(pyjitc.jit(reads_and_writes_at_run_time_steps)(x1, n % 7 + 1), reads_and_writes_at_run_time_steps(x2, n % 7 + 1))


def householder_with_unit_vectors(A):
    A = A.copy()
    m, n = A.shape
    Q = np.eye(m)
    for k in range(min(m - 1, n)):
        x = A[k:, k]
        e = np.zeros_like(x)
        e[0] = 1.0
        ones = np.ones_like(x, dtype=np.int32)
        alpha = -np.sign(x[0]) * np.linalg.norm(x)
        v = x - alpha * e + 0.0 * np.full_like(x, 2.0) * ones
        nv = np.linalg.norm(v)
        if nv == 0:
            continue
        v = v / nv
        A[k:, :] -= 2.0 * np.outer(v, v @ A[k:, :])
        Q[:, k:] -= 2.0 * np.outer(Q[:, k:] @ v, v)
    return Q, A


def test_zeros_like_of_a_run_time_slice_keeps_the_loop():
    # np.zeros_like(A[k:, k]) asked for the slice's length: the loop unrolled (80x60: 46 s)
    A = np.random.default_rng(2).random((12, 8))
    f = pyjitc.jit(householder_with_unit_vectors)
    assert_same(f(A), householder_with_unit_vectors(A), accumulate=True)
    assert f.lower(A).as_text("typed").count(" while(") == 1


def distances_to_later_points(X):
    out = []
    for i in range(len(X) - 1):
        out.append(np.linalg.norm(X[i + 1:] - X[i], axis=1))
    return np.concatenate(out)


def nearest_later_point(X):
    best = np.zeros(len(X))
    for i in range(len(X) - 1):
        best[i] = np.linalg.norm(X[i + 1:] - X[i], axis=-1).min()
    return best


@pytest.mark.parametrize("n", [6, 40])
def test_row_norms_of_a_run_time_slice_of_rows_are_numpys(n):
    # np.linalg.norm(..., axis=1) of rows X[i + 1:] was refused once the loop stayed a loop
    # ("np.linalg.norm needs it at compile time"; pdist by a list of rows, a probe of scipy-like code)
    X = np.random.default_rng(n).random((n, 2))
    assert_same(pyjitc.jit(distances_to_later_points)(X), distances_to_later_points(X))
    assert_same(pyjitc.jit(nearest_later_point)(X), nearest_later_point(X))


def knn_vote(X, y, q, k=3):
    d = np.sqrt(((X - q) ** 2).sum(axis=1))
    return np.bincount(y[np.argsort(d)[:k]], minlength=3).argmax()


def sorted_picks(y, order, k):
    return np.sort(y[order[:k]])


def test_a_gather_through_a_slice_with_a_python_argument_bound_makes_the_bound_static():
    # y[idx[:k]] handed to np.bincount or np.sort was refused ("this slice's length depends on
    # values known only at run time"): the bound k is a Python argument, so it becomes static as
    # it does for y[:k] (k-nearest neighbours, a probe of hand-written ML code)
    rng = np.random.default_rng(0)
    X, y, q = rng.random((30, 2)), rng.integers(0, 3, 30), np.array([0.5, 0.5])
    f = pyjitc.jit(knn_vote)
    for k in (1, 3, 5):
        assert_same(f(X, y, q, k), knn_vote(X, y, q, k))
    order = rng.permutation(30)
    assert_same(pyjitc.jit(sorted_picks)(y * 1.5, order, 7), sorted_picks(y * 1.5, order, 7))


def pairwise_forces(pos, L):
    n = pos.shape[0]
    f = np.zeros_like(pos)
    s = 0.0
    for i in range(n - 1):
        d = pos[i] - pos[i + 1:]
        d -= L * np.round(d / L)        # into d alone: a ufunc's result is an array of its own
        r2 = (d * d).sum(axis=1)
        inv = 1.0 / r2 ** 3
        fm = (24 * inv * (2 * inv - 1) / r2)[:, None] * d
        f[i] += fm.sum(axis=0)
        f[i + 1:] -= fm
        s += inv[..., None].sum() + inv[None].sum()
    return f, s, pos


def test_a_temporary_of_run_time_length_updated_in_place_and_given_new_axes_is_numpys():
    # a textbook Lennard-Jones loop: `d -= L * np.round(d / L)` and `(...)[:, None] * d` asked for
    # the slice's bounds at compile time (probe AH); `pos` stays unchanged
    pos = np.random.default_rng(4).random((11, 3)) * 3
    assert_same(pyjitc.jit(pairwise_forces)(pos.copy(), 3.0), pairwise_forces(pos.copy(), 3.0), accumulate=True)


def fold_errors(X, y, k):
    n = len(y)
    fs = n // k
    errs = np.zeros(k)
    for i in range(k):
        te = np.arange(n)[i * fs:(i + 1) * fs]
        w = X[te].T @ y[te]
        errs[i] = np.mean((X[te] @ w - y[te]) ** 2) + X[(i - 1) * 2:i * 2].sum()
    return errs


def test_slices_between_multiples_of_a_loop_variable_have_a_compile_time_length():
    # x[i * fs:(i + 1) * fs] (the folds of a cross-validation) was a run-time length: the loop
    # unrolled, 24 s to compile at k = 10 (probe AI). (i - 1) * 2 may be negative: NumPy's bounds
    rng = np.random.default_rng(9)
    X, y = rng.random((40, 3)), rng.random(40)
    for k in (5, 10):
        assert_same(pyjitc.jit(fold_errors, static_argnames="k")(X, y, k), fold_errors(X, y, k))
    five = pyjitc.jit(fold_errors, static_argnames="k").lower(X, y, 5).as_text()
    ten = pyjitc.jit(fold_errors, static_argnames="k").lower(X, y, 10).as_text()
    assert len(ten) < 1.2 * len(five)


def nearest_of_first_k(X, k):
    C = X[:k].copy()                      # centroids initialised from the first k points
    d = ((X[:, None, :] - C[None]) ** 2).sum(2)
    return np.argmin(d, axis=1), d.shape


@pytest.mark.parametrize("k", [1, 3, 5])
def test_a_slice_bounded_by_an_int_argument_that_meets_array_values_asks_for_the_argument(k):
    # the slice's bounds are the argument k's: once `C[None]` met X's values the need for its
    # length was "depends on the data" and np.argmin was refused (a probe's k-means)
    X = rng.random((12, 2))
    assert_same(pyjitc.jit(nearest_of_first_k)(X, k), nearest_of_first_k(X, k))


def _cross(o, a, b):
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def convex_hull(pts):
    p = pts[np.lexsort((pts[:, 1], pts[:, 0]))]
    n = p.shape[0]
    hull = np.zeros((2 * n, 2))
    k = 0
    for i in range(n):
        while k >= 2 and _cross(hull[k - 2], hull[k - 1], p[i]) <= 0:
            k -= 1
        hull[k] = p[i]
        k += 1
    t = k + 1
    for i in range(n - 2, -1, -1):
        while k >= t and _cross(hull[k - 2], hull[k - 1], p[i]) <= 0:
            k -= 1
        hull[k] = p[i]
        k += 1
    return hull[:k - 1]


def hull_area_and_perimeter(pts):
    h = convex_hull(pts)
    n = len(h)
    area, perimeter = 0.0, 0.0
    for i in range(n):
        j = (i + 1) % n
        area += h[i, 0] * h[j, 1] - h[j, 0] * h[i, 1]
        d = h[i] - h[i - 1]
        perimeter += np.sqrt(d @ d)
    return 0.5 * abs(area), perimeter, h[0], h[-1, 1]


@pytest.mark.parametrize("n", [3, 30, 400])
def test_rows_and_elements_of_a_two_axis_slice_of_run_time_length_are_numpys(n):
    # `h = hull[:k - 1]` from a helper, then `h[i, 0]`, `h[(i + 1) % n, 1]`, `h[i] - h[i - 1]`:
    # "this slice's length depends on values known only at run time", located in the helper
    # (probe AT: a convex hull, then its area by the shoelace formula)
    pts = np.random.default_rng(n).random((n, 2))
    assert_same_call(pyjitc.jit(hull_area_and_perimeter), hull_area_and_perimeter, pts, accumulate=True)
