"""Results whose length depends on the data: x[mask], X[rows], np.nonzero, np.flatnonzero,
np.argwhere and np.unique, returned, combined and reduced, each with NumPy's values, shape and
dtype. They compile once per input template: the function is compiled at full capacity and the
caller gets the selected entries (pyjitc/frontend/masked.py, compacted; program.Trimmed)."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pyjitc
from tests.reference import assert_same, assert_same_call


def positive_entries(x):
    return x[x > 0]


def shifted_selection(x):
    y = x[np.abs(x) < 0.5]
    return y * 2.0 + 1.0, y.size


def rows_where(X, labels):
    return X[labels == 1]


def class_means(X, labels):
    out = np.zeros((3, X.shape[1]))
    for k in range(3):
        rows = X[labels == k]
        out[k] = rows.sum(axis=0) / max(len(rows), 1)
    return out


def positions(X):
    return np.nonzero(X > 0.25), np.flatnonzero(X > 0.5), np.argwhere(X < 0.1)


def vector_positions(x):
    idx = np.nonzero(x > 0)[0]
    return idx, x[idx], len(idx)


def distinct(x):
    u = np.unique(x)
    return u, u.size, len(u), u.sum()


JITTED = {f: pyjitc.jit(f) for f in (positive_entries, shifted_selection, rows_where, class_means,
                                       positions, vector_positions, distinct)}

values = st.lists(st.floats(-1, 1, allow_nan=False, allow_subnormal=False, width=64), min_size=12, max_size=12).map(np.array)


@settings(max_examples=25, deadline=None)
@given(values)
def test_a_selection_returned_has_numpys_entries_in_order(x):
    assert_same_call(JITTED[positive_entries], positive_entries, x)
    assert_same_call(JITTED[shifted_selection], shifted_selection, x)
    assert_same_call(JITTED[vector_positions], vector_positions, x)


@settings(max_examples=25, deadline=None)
@given(values, st.lists(st.integers(-1, 3), min_size=4, max_size=4).map(np.array))
def test_rows_chosen_by_a_label_mask_are_returned_and_reduced_as_numpy(flat, labels):
    X = flat.reshape(4, 3)
    assert_same_call(JITTED[rows_where], rows_where, X, labels)
    got = JITTED[class_means](X, labels)
    assert_same(got, class_means(X, labels), accumulate=True)


@settings(max_examples=25, deadline=None)
@given(values)
def test_nonzero_flatnonzero_and_argwhere_of_a_matrix_match_numpy(flat):
    assert_same_call(JITTED[positions], positions, np.abs(flat).reshape(3, 4))


@pytest.mark.parametrize("x", [
    np.array([3.0, np.nan, 1.0, 3.0, np.nan, 2.0, -0.0, 0.0]),
    np.array([2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]),
    np.arange(8.0)[::-1].copy(),
    np.array([np.nan] * 8),
], ids=["nans-and-repeats", "one-value", "all-distinct", "all-nan"])
def test_unique_sorts_and_keeps_one_of_each_value_and_one_nan(x):
    assert_same_call(JITTED[distinct], distinct, x)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=9, max_size=9).map(lambda v: np.array(v, np.int32).reshape(3, 3)))
def test_unique_of_an_integer_matrix_is_flat_sorted_and_keeps_the_dtype(X):
    assert_same_call(JITTED[distinct], distinct, X)


def test_a_selection_compiles_once_for_every_number_of_selected_entries():
    f = pyjitc.jit(positive_entries)
    for k in range(6):
        x = np.where(np.arange(5) < k, 1.0, -1.0)
        assert_same(f(x), positive_entries(x))
    assert f.cache_info().misses == 1


def test_a_selection_survives_saving_the_compiled_function(tmp_path):
    compiled = JITTED[shifted_selection].lower(pyjitc.Template((12,), np.float64)).compile()
    loaded = pyjitc.load(compiled.save(tmp_path / "selection.vmfb"))
    x = np.linspace(-1, 1, 12)
    assert_same(loaded(x), shifted_selection(x))


def slice_with_run_time_bounds(x, lo, hi):
    return x[lo:hi]


def test_a_run_time_slice_returned_is_still_a_view_of_the_argument():
    # NumPy returns a view: the bounds become compile-time values (one compile per bounds)
    x = np.arange(6.0)
    got = pyjitc.jit(slice_with_run_time_bounds)(x, 1, 4)
    assert_same(got, slice_with_run_time_bounds(x, 1, 4))
    assert np.shares_memory(got, x)


def kmeans_step(X, C):
    d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    lab = d.argmin(1)
    newC = np.empty_like(C)
    for k in range(C.shape[0]):
        m = lab == k
        if m.any():
            newC[k] = X[m].mean(0)      # a method with a positional axis, on rows chosen by a mask
        else:
            newC[k] = C[k]
    return newC, lab


def csr_matvec(indptr, indices, data, x):
    n = indptr.shape[0] - 1
    y = np.zeros(n)
    for i in range(n):
        lo, hi = indptr[i], indptr[i + 1]
        y[i] = data[lo:hi] @ x[indices[lo:hi]]   # a gather through a run-time slice of indices
    return y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_kmeans_step_with_rows_chosen_by_label_matches_numpy(seed):
    r = np.random.default_rng(seed)
    X, C = r.random((30, 2)), r.random((4, 2))
    assert_same_call(pyjitc.jit(kmeans_step), kmeans_step, X, C, accumulate=True)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_csr_matrix_vector_product_over_row_slices_compiles_once_and_matches_numpy(seed):
    r = np.random.default_rng(seed)
    dense = np.where(r.random((6, 5)) < 0.4, r.random((6, 5)), 0.0)
    indptr = np.concatenate([[0], np.cumsum((dense != 0).sum(1))])
    indices = np.nonzero(dense)[1]
    f = pyjitc.jit(csr_matvec)
    x = r.random(5)
    assert_same(f(indptr, indices, dense[dense != 0], x), csr_matvec(indptr, indices, dense[dense != 0], x), accumulate=True)


def bessel_and_piecewise(x):
    return np.i0(x), np.piecewise(x, [x < 0, x > 2], [lambda v: -v, lambda v: v ** 2, 1.0])


BESSEL = pyjitc.jit(bessel_and_piecewise)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(-12, 12, allow_nan=False, allow_subnormal=False), min_size=9, max_size=9).map(np.array))
def test_functions_on_selections_carried_through_loops_match_numpy(x):
    # np.i0: piecewise over x[x <= 8.0] and a Chebyshev loop carrying the selection (unrolled)
    assert_same_call(BESSEL, bessel_and_piecewise, x, accumulate=True)


def inverse_cube_where_positive(pos, soft):
    dx = pos[:, 0:1].T - pos[:, 0:1]
    r2 = dx ** 2 + soft ** 2
    r2[r2 > 0] = r2[r2 > 0] ** (-1.5)     # the power emits many ops between the two masks
    return r2


def test_a_write_through_the_same_mask_recomputed_after_many_ops_is_one_selection():
    pos = np.random.default_rng(5).random((7, 3))
    assert_same_call(pyjitc.jit(inverse_cube_where_positive), inverse_cube_where_positive, pos, 0.1)


def unique_with_everything(a):
    return np.unique(a, return_index=True, return_inverse=True, return_counts=True)


def group_sums(labels, values):
    keys, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    sums = np.zeros(labels.shape[0])
    np.add.at(sums, inverse, values)
    return keys, sums, counts, sums[inverse] / counts[inverse]


@pytest.mark.parametrize("a", [np.array([[3, 1, 3], [2, 1, 3]]), np.array([1.0, np.nan, 2.0, np.nan, 1.0]),
                               np.array([7]), np.arange(6) % 3])
def test_unique_returns_numpys_indices_inverse_and_counts(a):
    assert_same(pyjitc.jit(unique_with_everything)(a), unique_with_everything(a))


def unique_rows_with_everything(a):
    rows, index, inverse, counts = np.unique(a, axis=0, return_index=True, return_inverse=True, return_counts=True)
    return rows, index, inverse, counts, np.unique(a, axis=0), counts.max()


@pytest.mark.parametrize("a", [np.array([[np.nan, 1], [np.nan, 1], [0, 1], [-0.0, 1], [2, np.nan], [0, -1]]),
                               np.array([[3, 1], [1, 2], [3, 1], [1, 0]]), np.array([[5, 5]]),
                               np.random.default_rng(8).integers(0, 3, (30, 3, 2)).astype(np.int32)])
def test_unique_rows_are_numpys_order_with_indices_inverse_and_counts(a):
    # np.unique(a, axis=0) was refused ("its shape depends on the data", also at the top level;
    # probes of time series and geometry code): rows sorted column by column, NaN last, rows
    # holding NaN distinct and -0.0 equal to 0.0, as NumPy compares them
    assert_same(pyjitc.jit(unique_rows_with_everything)(a), unique_rows_with_everything(a))


def test_unique_along_another_axis_is_a_located_refusal():
    with pytest.raises(pyjitc.JitError, match="axis=0") as e:
        pyjitc.jit(lambda a: np.unique(a, axis=1))(np.ones((2, 3)))
    assert "test_selections.py" in str(e.value)


def test_a_group_by_built_on_unique_inverse_and_counts_matches_numpy():
    r = np.random.default_rng(21)
    labels, values = r.integers(0, 5, 40), r.random(40)
    assert_same(pyjitc.jit(group_sums)(labels, values), group_sums(labels, values), accumulate=True)


def masks_beside_other_indices(T, m, f):
    """A 1-D run-time mask next to integers and slices: `A[:, m]`, `A[m, 1:3]`, `T[0, :, m]`
    (the mask's axis first, as NumPy puts it where a slice stands between the advanced indices),
    written through with a scalar, a row, or the same selection computed (`z[:, m] *= 2`)."""
    A = T[0]
    reads = (A[:, m].sum(axis=1), A[m, 1:3].sum(axis=0), T[0, :, m].sum(axis=1), T[:, 1, m].sum(axis=1),
             (A[:, m] * 2.0).sum(), np.mean(A[1:3, m], axis=0))
    z = T.copy()
    z[0, :, m] = 7.0
    z[1, :, m] += f
    z[:, 2, m] *= -1.0
    z[2, m, :] = z[2, m, :] - 0.5
    w = A.copy()
    w[:, m] = A[:, :1]
    return reads, z, w


@settings(max_examples=30, deadline=None)
@given(st.lists(st.booleans(), min_size=5, max_size=5).map(np.array), st.floats(-2, 2))
def test_a_mask_beside_integers_and_slices_reads_and_writes_as_numpy(m, f):
    T = np.arange(60.0).reshape(3, 5, 4)[:, :, :4] / 7.0
    T = np.concatenate([T, T[:, :, :1] * 2], axis=2)     # (3, 5, 5): the mask spans axes 1 and 2
    assert_same(MASKS_BESIDE(T, m, f), masks_beside_other_indices(T, m, f), accumulate=True)


MASKS_BESIDE = pyjitc.jit(masks_beside_other_indices)


def arrays_sized_by_a_selection(x, y):
    """np.zeros/ones/empty(len(sel)): arrays of a selection's run-time length, combined with it,
    returned, reduced and written through its positions (`y[idx] = np.zeros(len(idx))`,
    scikit-fuzzy's membership functions)."""
    sel = x[x > 0.5]
    z = np.ones(len(sel)) * 2.0 + sel
    idx = np.nonzero(x < 0.2)[0]
    y[idx] = np.zeros(len(idx))
    counts = np.zeros(len(sel), dtype=np.int32) + 1
    return z, z.sum(), len(z), counts.sum(), y


@settings(max_examples=25, deadline=None)
@given(values)
def test_arrays_sized_by_a_selections_length_match_numpy(x):
    x = np.abs(x) % 1.0
    assert_same_call(SIZED_BY_SELECTION, arrays_sized_by_a_selection, x, x[::-1].copy())


SIZED_BY_SELECTION = pyjitc.jit(arrays_sized_by_a_selection)


def picks_from_selections(x, idx, w):
    vals, counts = np.unique(idx, return_counts=True)
    mode, rare = vals[np.argmax(counts)], vals[np.argmin(counts)]
    h = np.zeros(6)
    ok = (idx >= 0) & (idx < 6)
    np.add.at(h, idx[ok], w[ok])             # a histogram of the entries in range
    np.maximum.at(h, idx[ok], 0.5)
    pos = x[x > 0]
    return mode, rare, h, pos[0], pos[-1], np.argmax(pos), x[x < 0.5].argmin()


@pytest.fixture(scope="module")
def picks():
    return pyjitc.jit(picks_from_selections)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.sampled_from([2, 17]))
def test_an_element_of_a_selection_its_argmax_and_ufunc_at_through_one_match_numpy(picks, seed, n):
    # were refused ("this selection's length depends on the data, and np.argmax needs it at
    # compile time"): the mode of integer data, ufunc.at of the entries in range, first and last
    # selected element; NumPy's IndexError where nothing is selected (two sizes: two compiles)
    rng = np.random.default_rng(seed)
    scale = rng.choice([0.1, 1.0])    # (few entries above 0 or 0.5 at times: the IndexError path)
    args = (rng.random(n) * scale - 0.2 * scale, rng.integers(-2, 9, n), rng.random(n))
    jitted = picks
    try:
        want = picks_from_selections(*args)
    except (IndexError, ValueError) as e:
        with pytest.raises(type(e)):
            jitted(*args)
        return
    assert_same(jitted(*args), want, accumulate=True)


def group_by_and_crossings(keys, vals, x):
    u, inv = np.unique(keys, return_inverse=True)
    sums = np.zeros(len(u))
    np.add.at(sums, inv, vals)                      # a group-by: sums per unique key
    best = np.full(len(u), -np.inf)
    np.maximum.at(best, inv, vals)                  # ... and maxima
    idx = np.flatnonzero(x[1:] * x[:-1] < 0)         # zero crossings: positions of a shorter mask
    kept = np.unique(x[~np.isinf(x)])                 # unique of a selection (one NaN)
    return u, sums, best, x[idx], x[idx + 1], len(np.unique(keys[keys >= 2])), kept


def test_group_by_sums_positions_of_a_shorter_mask_and_unique_of_a_selection_match_numpy():
    # were refused: np.add.at into an array sized by np.unique's length, x[np.flatnonzero(d)]
    # where d is shorter than x (x[idx + 1] worked), np.unique of x[mask]
    rng = np.random.default_rng(11)
    x = rng.random(25) - 0.5
    x[[3, 9]] = np.nan
    x[5] = np.inf
    jitted = pyjitc.jit(group_by_and_crossings)
    for keys in (rng.integers(0, 6, 25), np.zeros(25, np.int64)):
        args = (keys, rng.random(25), x)
        assert_same(jitted(*args), group_by_and_crossings(*args), accumulate=True)


def first_positive(x):
    return x[x > 0][0]


def on_empty_input(x, i):
    return x[i], x[np.argsort(x)]


def test_gathers_and_selections_of_empty_arrays_are_numpys_or_its_index_error():
    # (an internal error before: StableHLO's gather of a slice of 1 from an empty array)
    empty = np.zeros(0)
    assert_same(pyjitc.jit(on_empty_input)(empty, np.zeros(0, np.int64)), on_empty_input(empty, np.zeros(0, np.int64)))
    assert_same(pyjitc.jit(group_by_and_crossings)(np.zeros(0, np.int64), empty, np.ones(3)),
                group_by_and_crossings(np.zeros(0, np.int64), empty, np.ones(3)))
    with pytest.raises((IndexError, pyjitc.ShapeError), match="out of bounds|empty sequence"):   # (NumPy: ValueError, argmax)
        pyjitc.jit(picks_from_selections)(empty, np.zeros(0, np.int64), empty)
    with pytest.raises(IndexError, match="out of bounds for a selection"):
        pyjitc.jit(first_positive)(empty)


def selection_statistics(x):
    s = x[x > 2]
    return (s.std(), s.var(ddof=1), np.median(s), np.median(x[x < 7]), s.cumsum(), np.var(s),
            s.astype(np.float32).mean(), x[x < 7].astype(np.int64).sum())


@pytest.mark.parametrize("x", [np.array([3.0, 1.0, 9.0, 4.0, np.nan, 8.0, 2.5]), np.array([1.0, 0.5]),
                               np.array([5, 1, 9, 4, 4, 8], np.int32), np.array([3.5, 6.0, 1.0, 2.0], np.float32)],
                         ids=["nan", "empty", "int32", "float32"])
def test_statistics_of_a_selection_match_numpy(x):
    # (were refused: "this selection's length depends on the data, and np.std needs it")
    with np.errstate(all="ignore"):
        want = selection_statistics(x)
    assert_same(pyjitc.jit(selection_statistics)(x), want, accumulate=True)


def reshaped_selections(x, y, k):
    pos = x[x > 0.5]
    gaps = np.diff(np.flatnonzero(x > 0.5))
    return (pos[1:] - pos[:-1], np.diff(pos), np.diff(pos, n=2), gaps, np.sort(pos), pos[::-1], pos[::-2],
            pos[::2].sum(), pos[1::3].sum(), pos[-2:], pos[:3], pos[k:].sum(), np.sort(x[x > 0.2])[:3],
            x[x > 0.9] * y[y < 0.5])


def test_selections_sliced_differenced_sorted_and_combined_across_masks_are_numpys():
    # (each was refused: the selection's length is known only at run time)
    f = pyjitc.jit(reshaped_selections)
    rng = np.random.default_rng(5)
    for x, y, k in [(rng.random(20), np.array([0.9, 0.1, 0.8] + [0.7] * 17), 2),
                    (np.array([0.7, np.nan, 0.95, 0.6] + [0.1] * 16), rng.random(20), -3),
                    (np.zeros(20), np.ones(20), 0)]:
        assert_same(f(x, y, k), reshaped_selections(x, y, k))


def test_selections_of_different_lengths_combined_raise_numpys_value_error():
    f = pyjitc.jit(reshaped_selections)
    x, y = np.linspace(0.0, 1.0, 20), np.linspace(0.0, 1.0, 20)
    with pytest.raises(ValueError):
        reshaped_selections(x, y, 0)
    with pytest.raises(ValueError, match="could not be broadcast"):
        f(x, y, 0)


def test_selections_of_more_than_131072_elements_compile():
    # (past 1 MiB of int64 positions IREE 3.13 stopped hoisting the binary search's start as a
    # constant, and its compiler hung: x[x > 0.5] of 131073 elements had no end after 400 s)
    x = np.random.default_rng(12).random(140_000)
    assert_same(pyjitc.jit(positive_entries)(x - 0.5), positive_entries(x - 0.5))


def selections_returned(a, A):
    return np.nonzero(a > 0.5)[0], a[a < 0.3] * 2, np.where(A > 0), A[A[:, 0] > 0], (a > 0.7)[a > 0.2], np.unique(a.round(1))


def test_returned_selections_keep_their_order_values_and_zero_signs():
    # compacted by scattering each selected element to its rank (was a binary search per position:
    # np.nonzero of 1e5 values 1.55 -> 0.39 ms); the bits of -0.0 and NaN come through
    rng = np.random.default_rng(3)
    a = rng.random(5000)
    a[::7] = -0.0
    a[::11] = np.nan
    A = rng.standard_normal((50, 4))
    A[::3, 0] = -0.0
    got = pyjitc.jit(selections_returned)(a, A)
    want = selections_returned(a, A)
    assert_same(got, want)
    assert np.array_equal(np.signbit(got[1]), np.signbit(want[1]))


def class_moments(X, y):
    return (X[y == 0].var(axis=0), X[y == 1].std(axis=0, ddof=1), np.var(X[y == 0], axis=0), X[y == 2].var(axis=0),
            # positional arguments and the whole selection (probe AI: `Xc.var(0)` was refused)
            X[y == 0].var(0), np.std(X[y == 1], 0, None, None, 1), X[y == 0].var(), np.std(X[y == 1], None, ddof=1),
            X[y == 2].std())


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_var_and_std_of_selected_rows_along_the_mask_are_numpys(dtype):
    # X[y == c].var(axis=0) (a Gaussian naive Bayes' class variances) was refused while
    # .mean(axis=0) compiled; class 2 selects nothing: NaN, as NumPy
    X = (np.arange(24.0).reshape(8, 3) ** 1.5).astype(dtype)
    y = np.array([0, 1, 0, 1, 0, 0, 1, 0])
    with np.errstate(all="ignore"):
        want = class_moments(X, y)
    assert_same(pyjitc.jit(class_moments)(X, y), want)


def ddof_past_the_count(x):
    return x[x > 0.5].var(ddof=2), x[x > 0.5].std(ddof=1), x[x > 0.5].var(ddof=1)


def test_var_of_a_selection_with_ddof_past_its_length_is_nan_as_numpy():
    # divided by n - ddof it was -0.0 (0 / -1); NumPy divides by max(n - ddof, 0): NaN
    x = np.array([0.9, 0.1, 0.2, 0.7])
    f = pyjitc.jit(ddof_past_the_count)
    with np.errstate(all="ignore"):
        for v in (x, x[:3], np.array([0.6, 0.8, 0.95])):
            assert_same(f(v), ddof_past_the_count(v))


def run_lengths_by_concatenate(b):
    starts = np.concatenate(([0], np.nonzero(np.diff(b))[0] + 1))
    lengths = np.diff(np.concatenate((starts, [len(b)])))
    return starts, lengths, b[starts]


def run_lengths_by_append(x):
    n = x.shape[0]
    y = x[1:] != x[:-1]
    i = np.append(np.where(y), n - 1)
    z = np.diff(np.append(-1, i))
    p = np.cumsum(np.append(0, z))[:-1]
    return z, p, x[i]


def run_lengths_by_hstack(b):
    idx = np.flatnonzero(b[1:] != b[:-1]) + 1
    e = np.hstack((0, idx, [len(b)]))
    return np.diff(e), b[e[:-1]]


def selections_and_slices_joined(x, k):
    return np.concatenate((x[x > 0.5], x[:k], [7.0])).sum(), np.concatenate((x[:k], x[x > 0.5])), \
        np.append(x, np.float32(2.0)), np.append(x.reshape(2, -1), [[1.0] * (x.size // 2)], axis=0)


@pytest.mark.parametrize("b", [[3], [2, 2], [1, 2], [1, 1, 0, 0, 0, 1, 2, 2], list(np.random.default_rng(0).integers(0, 2, 50))])
def test_run_length_encodings_joining_selections_are_numpys(b):
    # np.concatenate / np.append / np.hstack of a selection (np.nonzero(...)[0] + 1) with
    # other parts were refused ("the selection's length ... np.concatenate needs it at compile time")
    b = np.array(b)
    for fn in (run_lengths_by_concatenate, run_lengths_by_append, run_lengths_by_hstack):
        assert_same(pyjitc.jit(fn)(b), fn(b))
    x = np.random.default_rng(len(b)).random(10)
    assert_same(pyjitc.jit(selections_and_slices_joined)(x, len(b) % 8), selections_and_slices_joined(x, len(b) % 8))


def set_routines(a, b):
    return (np.intersect1d(a, b), np.setdiff1d(a, b), np.setxor1d(a, b), np.union1d(a, b),
            len(np.intersect1d(a, b)), np.setdiff1d(a, b).sum())


def set_routines_assuming_unique(a, b):
    return (np.intersect1d(a, b, assume_unique=True), np.setdiff1d(a, b, assume_unique=True),
            np.setxor1d(a, b, assume_unique=True))


def common_with_indices(a, b):
    return np.intersect1d(a, b, return_indices=True), np.intersect1d(a, b, assume_unique=True, return_indices=True)


SETS = {f: pyjitc.jit(f) for f in (set_routines, set_routines_assuming_unique, common_with_indices)}
few_values = st.lists(st.sampled_from([0.0, 1.0, 2.5, -3.0, 7.0, np.nan]), min_size=6, max_size=6).map(np.array)


@settings(max_examples=25, deadline=None)
@given(few_values, few_values.map(lambda x: x[:4]))
def test_set_routines_keep_numpys_sorted_values_and_nan_rules(a, b):
    # NaN is never equal to NaN in NumPy's set routines: not common, and setxor1d keeps one of each
    for f, jf in SETS.items():
        assert_same_call(jf, f, a, b)


def test_set_routines_of_integer_arrays_follow_numpys_promotion():
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 12, (4, 5)).astype(np.int32), rng.integers(6, 20, 9)
    assert_same(pyjitc.jit(set_routines)(a, b), set_routines(a, b))


def arrays_of_selections(x, k):
    s = x[x > 0]
    t = x[k:]
    u = np.array(t)
    u[0] = -1.0                          # a copy: x keeps its element
    return np.array(s), np.asarray(s).sum(), np.array(s, dtype=np.float32), len(np.array(s)), u.sum(), x


def test_np_array_and_asarray_of_a_selection_or_a_run_time_slice_match_numpy():
    # "this selection's length depends on the data, and np.array needs it at compile time"
    x = np.array([1.0, -2.0, 3.0, 4.0])
    mine, theirs = x.copy(), x.copy()
    assert_same(pyjitc.jit(arrays_of_selections)(mine, 1), arrays_of_selections(theirs, 1))


def class_scatter(X, y, c):
    return np.cov(X[y == c].T)


def class_covariance_by_rows(X, y):
    return np.cov(X[y == 1], rowvar=False, bias=True)


def selected_variance(x):
    return np.cov(x[x > 0.5])


@pytest.mark.parametrize("ones", [0, 1, 2, 17])
def test_np_cov_of_selected_observations_is_numpys(ones):
    # np.cov(X[y == c].T) was refused ("this selection's length depends on the data"; LDA by
    # hand, a probe of ML code); none or one observation selected: NumPy's inf/NaN
    rng = np.random.default_rng(ones)
    X, y = rng.normal(size=(30, 3)), np.zeros(30, int)
    y[rng.permutation(30)[:ones]] = 1
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(pyjitc.jit(class_scatter)(X, y, 1), class_scatter(X, y, 1))
        assert_same(pyjitc.jit(class_covariance_by_rows)(X, y), class_covariance_by_rows(X, y))
        x = X[:, 0] * (y == 1)
        assert_same(pyjitc.jit(selected_variance)(x), selected_variance(x))


def normalise_where_weighted(y, w):
    nz = w > 0.5
    y[nz] /= w[nz]
    return y


def add_selected_rows(Y, w):
    m = w > 0.5
    Y[m] += w[m]
    return Y


def test_an_augmented_write_of_a_selection_by_the_same_mask_is_numpys():
    # `y[nz] /= w[nz]` was refused ("its attribute size needs it at compile time") where
    # `y[nz] = y[nz] / w[nz]` compiled (overlap-add normalisation, a probe of DSP code)
    rng = np.random.default_rng(0)
    y, w = rng.random(50), rng.random(50)
    assert_same_call(pyjitc.jit(normalise_where_weighted), normalise_where_weighted, y, w)
    Y, W = rng.random((4, 5)), rng.random((4, 5))
    assert_same_call(pyjitc.jit(add_selected_rows), add_selected_rows, Y, W)


def shifted_tail(x, w):
    out = x[w:].copy()
    out[1:] -= 1
    out[:2] *= 3
    return out


def test_an_in_place_update_of_a_slice_of_a_run_time_length_array_is_numpys():
    # `out[1:] -= 1` of out = x[w:].copy() was "in-place update of an item of a Masked" (probe AN)
    f = pyjitc.jit(shifted_tail)
    for x, w in ((np.arange(10), 3), (np.arange(10.0), 8), (np.arange(6), 0)):
        assert_same(f(x, w), shifted_tail(x, w))
    with pytest.raises(pyjitc.JitError, match="same_kind"):   # NumPy: UFuncTypeError, same rule
        pyjitc.jit(tail_minus_half)(np.arange(10), 3)


def tail_minus_half(x, w):
    out = x[w:].copy()
    out[1:] -= 1.5     # NumPy: UFuncTypeError (float64 into int64 with casting 'same_kind')
    return out


def reflect_approaching(vel, normals, vn):
    m = vn < 0
    vel[m] -= 2 * vn[m, None] * normals[m]
    return vel, vn[m, None, None].shape[1:]


def test_a_selection_with_new_axes_after_the_mask_is_the_selection_then_those_axes():
    # `vn[m, None]` (NumPy: vn[m][:, None]) was refused as "x[mask] has a shape that depends on
    # the data" (a probe's wall collisions)
    rng = np.random.default_rng(5)
    for vn in (rng.random(10) - 0.5, np.ones(4), -np.ones(3)):
        vel, normals = rng.random((vn.shape[0], 2)), rng.random((vn.shape[0], 2))
        assert_same_call(pyjitc.jit(reflect_approaching), reflect_approaching, vel, normals, vn)
