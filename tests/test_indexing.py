"""Indexing against NumPy: reading with ints, slices, None, ..., integer arrays and masks (static
and run-time), writing (x[idx] = v, x[idx] += v, x[mask] = v) into locals and into the caller's
arrays, views that alias as NumPy's do, and run-time index errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import pyjitc
from tests.reference import assert_same, assert_same_call

rng = np.random.default_rng(2)
A = rng.standard_normal((4, 5, 3))


def static_reads(a):
    return (a[1], a[-1, ::-2], a[None, 1:3, ..., 0], a[..., 1], a[:, [0, 2, 4]],
            a[[0, 3], :, [1, 2]], a[[[0], [1]], [1, 2]], a[a.shape[0] - 1, 2:, np.newaxis])


def test_static_basic_and_advanced_reads_match_numpy():
    assert_same_call(pyjitc.jit(static_reads), static_reads, A)


def reversed_strided_reads(x):
    return (x[::2][::-1] * 1.0, x[1::3][::-1] + 0, x[::-1][::2] * 2, x[:, ::2][::-1, ::-1] - 1,
            np.flip(x[:, 1::2], 1) * 2, np.minimum(x[:, ::2].copy()[::-1], 1.5),
            x[:, ::2][[0, 0]], x.ravel()[::2][[0, -1, 0]], x[:, ::2][-1][::-1] + 0)


@pytest.mark.parametrize("shape", [(5, 6), (6, 7), (1, 1), (7, 2)])
def test_reversing_a_strided_slice_compiles_and_matches_numpy(shape):
    # IREE 3.13 failed on a reverse or a gather of a slice with a step on the innermost axis
    # ("LLVM Translation failed for operation: builtin.unrealized_conversion_cast"); found by
    # the statement fuzzer
    x = np.arange(np.prod(shape), dtype=float).reshape(shape)
    assert_same_call(pyjitc.jit(reversed_strided_reads), reversed_strided_reads, x)


def run_time_reads(a, i, j, idx):
    return a[i], a[i, :, j], a[-i], a[i:i + 2], a[idx], a[:, idx], a[idx, j]


jit_run_time_reads = pyjitc.jit(run_time_reads)


@given(i=st.integers(0, 2), j=st.integers(-3, 2), idx=st.lists(st.integers(-4, 3), min_size=1, max_size=3))
def test_run_time_scalar_and_array_indices_match_numpy(i, j, idx):
    idx = np.array(idx + [0] * (3 - len(idx)))   # one shape: one compile
    assert_same_call(jit_run_time_reads, run_time_reads, A, i, j, idx)
    assert jit_run_time_reads.cache_info().currsize == 1


def test_run_time_index_out_of_bounds_raises_where_numpy_would():
    with pytest.raises(IndexError, match=r"test_indexing.py:\d+:\d+: IndexError: .*out of bounds for axis 0 with size 4"):
        jit_run_time_reads(A, 7, 0, np.zeros(3, np.int64))
    with pytest.raises(IndexError, match="index array entry is out of bounds"):
        jit_run_time_reads(A, 0, 0, np.array([0, 9, 1]))


def writes(x, v, mask_value):
    y = np.zeros((4, 5))
    y[1] = v
    y[2, 1:4] = 7.5
    y[::2, -1] += 1
    y[[0, 0, 3], [1, 1, 2]] = [1.0, 2.0, 3.0]   # repeated index: the last write wins, as in NumPy
    y[y > 1] = mask_value
    x[:] = x * 2
    x[0] = -1
    x[x > 5] -= 3
    return y


def test_index_assignment_into_locals_and_into_the_callers_array_matches_numpy():
    x = np.arange(8.0)
    f = pyjitc.jit(writes)
    assert_same_call(f, writes, x, np.arange(5.0), 42.0)
    assert_same_call(f, writes, x, 3.0, -1.0)


def loop_writes(x, n):
    out = np.zeros_like(x)
    for i in range(n):
        out[i] = x[i] * i
        x[i:i + 2] += 1
    return out


@given(n=st.integers(0, 6))
def test_index_assignment_at_loop_variable_positions(n):
    assert_same_call(pyjitc.jit(loop_writes), loop_writes, np.arange(8.0), n)


def write_casts(a):
    a[0] = 2.7        # float into an int array: truncated, as NumPy's setitem does
    a[1:3] = [True, False]
    return a


def test_assignment_casts_like_numpys_setitem():
    assert_same_call(pyjitc.jit(write_casts), write_casts, np.zeros(4, np.int32))


def test_assignment_numpy_refuses_is_refused():
    def overflow(a):
        a[0] = 300
        return a
    with pytest.raises(pyjitc.JitError, match="OverflowError"):
        pyjitc.jit(overflow)(np.zeros(2, np.uint8))


def views(a):
    v = a[1:]
    v[0] = 100.0          # writes into a
    t = a.T
    a[2, 0] = -5.0        # t sees it
    r = a.reshape(-1)
    r[-1] = 9.0           # writes into a
    return v + 0, t.copy(), a


def test_views_alias_their_base_as_in_numpy():
    assert_same_call(pyjitc.jit(views), views, np.arange(12.0).reshape(4, 3))


def scalar_is_a_copy(a):
    s = a[0]
    t = s
    s += 1             # a NumPy scalar: rebinding, neither a nor t change
    return s, t, a


def test_integer_indexing_gives_a_scalar_copy_not_a_view():
    assert_same_call(pyjitc.jit(scalar_is_a_copy), scalar_is_a_copy, np.arange(3.0))


def opaque_view(a):
    r = a.T.reshape(-1)   # NumPy copies here (a.T is not contiguous); whether it aliases is layout-dependent
    r[0] = 1.0
    return a


def test_write_through_a_layout_dependent_view_is_a_located_error():
    with pytest.raises(pyjitc.NotSupportedError, match="may or may not write through") as e:
        pyjitc.jit(opaque_view)(np.zeros((2, 3)))
    assert "r[0] = 1.0" in str(e.value)


def mask_read_in_a_branch(x, t):
    if t > 0:
        return x[x > 0]
    return x[x < 0]


def test_returning_a_run_time_mask_read_from_a_branch_is_a_located_error_with_a_hint():
    # its length depends on the data; returned from the top level it compiles
    # (tests/test_selections.py), as does reducing it or computing with it elementwise
    # (tests/test_run_time_length.py)
    with pytest.raises(pyjitc.JitError, match="depends on the data.*top level of the function") as e:
        pyjitc.jit(mask_read_in_a_branch)(np.ones(3), 1.0)
    assert "x[x > 0]" in str(e.value)


def varying_slice(x, n):
    total = 0.0
    for i in range(x.shape[0]):
        total += x[:i].sum()
    return total + x[:n].sum()


def test_slice_lengths_from_a_loop_variable_or_a_scalar_argument_compile_once():
    # x[:i] and x[:n] are masked over x (frontend/masked.py): one executable for every n
    f = pyjitc.jit(varying_slice)
    x = np.arange(6.0)
    assert_same_call(f, varying_slice, x, 2)
    assert_same_call(f, varying_slice, x, 4)
    assert_same_call(f, varying_slice, x, -9)
    assert f.cache_info().misses == 1


def data_dependent_slice(x):
    k = int(x.shape[0] // 2)
    for i in range(x.shape[0]):
        if x[i] > 0:
            k = i
    return x[:k]


def test_slice_length_from_array_data_is_a_located_error():
    with pytest.raises(pyjitc.JitError) as e:
        pyjitc.jit(data_dependent_slice)(np.ones(4))
    assert "return x[:k]" in str(e.value) and "depend" in str(e.value)


def one_element_into_fresh_arrays(x):
    a = np.zeros((3, 2))
    a[0, 0] = x[0]
    b = np.ones((3, 2))
    b[1, 1:] = x[1:2]
    c = np.zeros((3, 2))
    c[2, 1] = x[:1].max()
    return a, b, c


def test_one_element_of_an_argument_stored_into_a_fresh_2d_array():
    # IREE 3.13 refused each store alone ("expected rank to be smaller or equal to the other
    # rank"): a 1x1 update reshaped from an argument's slice into a constant array
    x = np.array([0.5, -1.0])
    assert_same(pyjitc.jit(one_element_into_fresh_arrays)(x), one_element_into_fresh_arrays(x))


def slice_to_a_float(x, k):
    return x[:k].sum()


def test_a_float_slice_bound_is_numpys_type_error_located():
    with pytest.raises(pyjitc.JitError, match="slice indices must be integers") as e:
        pyjitc.jit(slice_to_a_float)(np.arange(4.0), 1.5)
    assert "x[:k]" in str(e.value) and "internal" not in str(e.value)


def write_through_run_time_index_arrays(x, idx, v, w, M, i, j):
    x[idx] = v
    y = np.zeros(x.shape[0])
    y[idx] += 1.0
    M[i, j] = -1.0
    M[i] += 0.5
    M[j[:2], -1] = w
    return x, y, M


_write_idx = pyjitc.jit(write_through_run_time_index_arrays)


@given(st.lists(st.integers(-5, 4), min_size=0, max_size=12), st.lists(st.integers(0, 3), min_size=3, max_size=3),
       st.lists(st.integers(0, 2), min_size=3, max_size=3))
def test_writes_through_run_time_index_arrays_keep_the_last_of_repeated_positions(idx, i, j):
    idx, i, j = np.array(idx, dtype=np.int64), np.array(i), np.array(j)
    r = np.random.default_rng(len(idx))
    v, w = r.random(len(idx)), r.random(2)
    mine = [r.random(5), r.random((4, 3))]
    theirs = [a.copy() for a in mine]
    got = _write_idx(mine[0], idx, v, w, mine[1], i, j)
    want = write_through_run_time_index_arrays(theirs[0], idx, v, w, theirs[1], i, j)
    for g, e in zip(got, want):
        assert_same(g, e)
    for a, b in zip(mine, theirs):
        assert_same(a, b)


def test_a_run_time_index_out_of_bounds_in_a_write_raises_index_error():
    with pytest.raises(IndexError, match="out of bounds"):
        _write_idx(np.zeros(5), np.array([0, 9]), np.ones(2), np.ones(2), np.zeros((4, 3)), np.array([0, 1, 2]),
                   np.array([0, 1, 2]))


def store_basic(a, i):
    out = np.zeros(3, np.int8)
    out[0] = a[i]
    return out


def store_slice(a, i):
    out = np.zeros(3, np.int8)
    out[1:] = a[i] * 1
    return out


def store_sequence(a, i):
    out = np.zeros(3, np.int8)
    out[:] = (a[i], 1, a[0])
    return out


def store_fancy(a, i):
    out = np.zeros(3, np.int8)
    out[[0, 2]] = a[i]
    return out


def store_mask(a, i):
    out = np.zeros(3, np.int8)
    out[out == 0] = a[i]
    return out


STORE_VALUES = {
    np.float64: [1.5, -1.5, 127.9, 128.0, -128.9, -129.0, 300.0, 1e19, -1e19, np.nan, np.inf, -np.inf],
    np.int64: [5, 127, 128, -128, -129, 2 ** 40],
    np.uint64: [5, 200, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1],
}


@pytest.mark.parametrize("src", sorted(STORE_VALUES, key=str), ids=lambda t: t.__name__)
@pytest.mark.parametrize("fn", [store_basic, store_slice, store_sequence, store_fancy, store_mask], ids=lambda f: f.__name__)
def test_one_number_stored_into_a_signed_int_array_raises_or_wraps_as_numpy(fn, src):
    # NumPy converts one number stored through ints and slices (and each number of a list) via a
    # Python int: NaN is a ValueError, infinities and numbers past the range OverflowError; through
    # index arrays and masks it casts (wraps). Before, pyjitc wrapped every one.
    a = np.array(STORE_VALUES[src], dtype=src)
    jitted = pyjitc.jit(fn)
    for i in range(a.shape[0]):
        try:
            want = fn(a, i)
        except (ValueError, OverflowError) as e:
            with pytest.raises(type(e), match=type(e).__name__):    # pyjitc.RunError is both
                jitted(a, i)
            continue
        assert_same(jitted(a, i), want)


def sir(beta, gamma, s0, days):
    S, I, R = s0, 1.0 - s0, 0.0
    out = np.empty((days, 3))
    counts = np.zeros((days, 2), np.int32)
    for d in range(days):
        new_inf = beta * S * I
        new_rec = gamma * I
        S -= new_inf
        I += new_inf - new_rec
        R += new_rec
        out[d] = S, I, R              # a tuple of run-time numbers stored as a row
        counts[d] = [d, int(I * 1000)]
    return out, counts


def test_a_tuple_of_run_time_numbers_stored_as_a_row():
    assert_same_call(pyjitc.jit(sir), sir, 0.3, 0.1, 0.99, 12)


def column_writes(A, i, j, idx):
    A[:, [0, 2]] = A[:, [2, 0]]          # known positions on the second axis
    A[1:, [1, 3]] = -1.0
    A[:, [i, j]] = A[:, [j, i]]          # run-time positions on the second axis (a column swap)
    A[:, [i, j]] += 0.5
    A[:, idx] = 9.0                      # a 2-d index array there
    return A


@given(i=st.integers(-4, 3), j=st.integers(0, 3), idx=st.lists(st.integers(-4, 3), min_size=1, max_size=3))
def test_writes_through_index_arrays_on_inner_axes_match_numpy(i, j, idx):
    A = np.arange(20.0).reshape(5, 4)
    index = np.array(idx * 2).reshape(2, -1)
    assert_same(COLUMN_WRITES(A.copy(), i, j, index), column_writes(A.copy(), i, j, index))


COLUMN_WRITES = pyjitc.jit(column_writes)


def reversed_views(x):
    return x[-7::-1], x[-7:0:-1], x[-10::-1], x[5:-8:-2], x[2::-1], x[:-9:-1], x[-1:-1:-1]


def test_returned_views_with_negative_steps_are_numpys_empty_ones_included():
    # an empty one (start before the array) came back as the whole array reversed: its recipe
    # was slice(-1, None, -1)
    x = np.arange(6.0)
    got, want = pyjitc.jit(reversed_views)(x), reversed_views(x)
    assert_same(got, want)
    assert all(np.shares_memory(g, x) or g.size == 0 for g in got)


def strided_run_time_slices(x, X, k):
    return (x[k::3].sum(), x[1:k:2].sum(), x[k::-2].max(), np.dot(x[k::2], x[k::2]), x[-k::-3].sum(),
            x[:k:-2].sum(), X[1, k::2].sum() + X[k::2, 0].mean())


def test_slices_with_run_time_bounds_and_other_steps_read_numpys_elements():
    f = pyjitc.jit(strided_run_time_slices)
    x, X = np.arange(20.0) ** 1.5, np.arange(30.0).reshape(6, 5)
    for k in (1, 3, 4, -2):   # (one compile: k is a run-time value)
        assert_same(f(x, X, k), strided_run_time_slices(x, X, k))


def blocked_matmul(A, B, bs):
    n = A.shape[0]
    C = np.zeros((n, n))
    for ii in range(0, n, bs):
        for jj in range(0, n, bs):
            for kk in range(0, n, bs):
                C[ii:ii + bs, jj:jj + bs] += A[ii:ii + bs, kk:kk + bs] @ B[kk:kk + bs, jj:jj + bs]
    return C


def tiled_transpose(A, bs):
    B = np.empty((A.shape[1], A.shape[0]))
    for i in range(0, A.shape[0], bs):
        for j in range(0, A.shape[1], bs):
            B[j:j + bs, i:i + bs] = A[i:i + bs, j:j + bs].T
    return B


def test_blocked_loops_whose_last_block_is_shorter_get_numpys_shorter_slices():
    # (a RunError: "a slice of length 4 with a run-time start runs outside an axis")
    rng = np.random.default_rng(6)
    for n, bs in ((10, 4), (12, 4)):
        A, B = rng.random((n, n)), rng.random((n, n))
        assert_same(pyjitc.jit(blocked_matmul)(A, B, bs), blocked_matmul(A, B, bs))
    A = rng.random((7, 9))
    assert_same(pyjitc.jit(tiled_transpose)(A, 4), tiled_transpose(A, 4))


def write_index_pairs_of_rows_in_slices(R, G, i, idx, v):
    R[[i - 1, i], 1:] = G @ R[[i - 1, i], 1:]      # a Givens rotation of two rows
    R[idx, ::2] = v                                   # repeated rows: the last entry's values
    R[idx[:1], 1:3] += 1.0
    return R


@pytest.mark.parametrize("i", [1, 2, 3])
def test_writes_through_run_time_rows_into_column_slices_are_numpys(i):
    # refused: "writing through run-time index arrays is supported on the leading axes, the
    # other axes whole"
    R = np.arange(20.0).reshape(4, 5)
    G = np.array([[0.6, -0.8], [0.8, 0.6]])
    idx = np.array([i, 0, i])
    v = np.arange(9.0).reshape(3, 3)
    f = pyjitc.jit(write_index_pairs_of_rows_in_slices)
    assert_same(f(R.copy(), G, i, idx, v), write_index_pairs_of_rows_in_slices(R.copy(), G, i, idx, v))


def givens_qr(A):
    m, n = A.shape
    R = A.copy()
    Q = np.eye(m)
    for j in range(n):
        for i in range(m - 1, j, -1):
            a, b = R[i - 1, j], R[i, j]
            r = np.hypot(a, b)
            if r == 0:
                continue
            c, s = a / r, -b / r
            G = np.array([[c, -s], [s, c]])
            R[[i - 1, i], j:] = G @ R[[i - 1, i], j:]
            Q[:, [i - 1, i]] = Q[:, [i - 1, i]] @ G.T
    return Q, R


def rows_in_run_time_windows(x, idx, j):
    w = x[idx, j:]
    s = w.sum() + x[idx, :j].sum(axis=1).sum()
    x[idx, j:] = 2.0 * w + 1.0      # repeated rows: the last entry's values, as NumPy
    x[idx[:1], j - 1:] = -1.0
    return s, x


def test_rows_by_index_arrays_in_run_time_column_windows_keep_the_loop_and_are_numpys():
    # x[[i - 1, i], j:] asked for j at compile time: a Givens QR of 60x40 unrolled its outer
    # loop, 26 s to compile; now 1.7 s
    A = np.random.default_rng(5).random((7, 5))
    f = pyjitc.jit(givens_qr)
    assert_same(f(A), givens_qr(A), accumulate=True)
    assert f.lower(A).as_text("typed").count(" while(") >= 2
    g = pyjitc.jit(rows_in_run_time_windows)
    for j in (0, 1, 3, 6, -2):
        x = np.arange(24.0).reshape(4, 6)
        idx = np.array([2, 0, 2])
        assert_same(g(x.copy(), idx, j), rows_in_run_time_windows(x.copy(), idx, j))


def chained_item_reads_and_writes(a, m, i):
    a[i][2] = -1.0
    a[1][1:3] += 10.0
    a[0][...] = a[0][...] * 2.0
    a[2][m] = 7.0                       # a mask: an index into the view a[2]
    a[1:3][0] = 3.5                     # a slice first: a[1], through the view
    b = a[i][None], a[-1][::2], a[i][[0, 2]], a[1:3][1][1:], a[0][1]
    c = a.reshape(2, 2, 3)
    c[1][0][2] += 100.0
    return a, b, c[i % 2][1][0]


@pytest.mark.parametrize("i", [0, 2, -1])
def test_chained_indexing_reads_and_writes_what_numpy_does(i):
    # a[i][j] is compiled as a[i, j] where i is an integer and j a basic index (native loops
    # writing d[i][j]); the other forms index the view
    a = np.arange(12.0).reshape(4, 3)
    m = np.array([True, False, True])
    mine, theirs = a.copy(), a.copy()
    assert_same(pyjitc.jit(chained_item_reads_and_writes)(mine, m, i), chained_item_reads_and_writes(theirs, m, i))
    assert_same(mine, theirs)


def floyd_warshall_chained(d):
    n = d.shape[0]
    for k in range(n):
        for i in range(n):
            for j in range(n):
                if d[i][k] + d[k][j] < d[i][j]:
                    d[i][j] = d[i][k] + d[k][j]
    return d


def test_a_loop_nest_writing_d_i_j_runs_as_one_native_loop():
    # (probe Q: as host loops through views, 40 nodes took 548 ms, CPython 14.5 ms)
    d = np.random.default_rng(4).random((12, 12)) * 10
    mine, theirs = d.copy(), d.copy()
    assert_same(pyjitc.jit(floyd_warshall_chained)(mine), floyd_warshall_chained(theirs))
    text = pyjitc.jit(floyd_warshall_chained).lower(d).as_text()
    assert "scf.while" in text and "stablehlo.while" not in text


def one_hot(codes, k):
    out = np.zeros((codes.shape[0], k))
    out[np.arange(codes.shape[0]), codes] = 1
    return out


def writes_through_index_arrays(x, X, idx, v, m):
    x[idx] = v
    X[idx[:3]] = X[idx[-3:]] * 2.0
    x[idx[m]] = 7.0
    return x, X


def test_writes_through_run_time_index_arrays_run_in_order_and_the_last_entry_writes_last():
    # on CPU each entry is written in order by a native loop (a one-hot encoding of 1e6 codes: a
    # scatter of the entries' order and a gather, 428 ms; NumPy 15.6 ms)
    rng = np.random.default_rng(9)
    codes = rng.integers(0, 5, 12)
    np.testing.assert_array_equal(pyjitc.jit(one_hot, static_argnames=("k",))(codes, 5), one_hot(codes, 5))
    idx = np.array([1, 1, -1, 3, 1, 0])     # repeated and negative positions
    args = (np.zeros(5), np.arange(15.0).reshape(5, 3), idx, np.arange(6.0), np.array([True, False, True] * 2))
    assert_same_call(pyjitc.jit(writes_through_index_arrays), writes_through_index_arrays, *args)
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 5"):
        pyjitc.jit(writes_through_index_arrays)(*args[:2], np.array([1, 5, 0, 0, 0, 0]), *args[3:])


def window_sum(x, i):
    return x[i:i + 3].sum()


def negate_window(x, i):
    x[i:i + 3] = -x[i:i + 3]
    return x


def test_fixed_length_windows_from_negative_starts_and_past_short_axes_are_numpys():
    # (probe BB: a window longer than its axis was "internal error: dynamic_slice"; one whose two
    # bounds are negative, x[-5:-2], raised "runs outside the axis" where NumPy counts both ends
    # from the end)
    for x, i in ((np.arange(2.0), 0), (np.arange(2.0), 1), (np.arange(2.0), -1), (np.arange(8.0), -5),
                 (np.arange(8.0), -8), (np.arange(8.0), 5)):
        assert_same(pyjitc.jit(window_sum)(x, i), window_sum(x, i))
    assert_same_call(pyjitc.jit(negate_window), negate_window, np.arange(8.0), -4)
    with pytest.raises(IndexError, match="would return a shorter slice"):   # x[-2:1]: empty in NumPy
        pyjitc.jit(window_sum)(np.arange(8.0), -2)
