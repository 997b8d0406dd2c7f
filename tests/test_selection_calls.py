"""NumPy functions called on selections (x[mask], np.flatnonzero, np.unique's results, run-time
slices) and loops over them, as graph, group-by and gap-filling code writes them: any/all of a
selection, a for loop over one, bincount of selected keys, argsort of a selection and a selection
indexed by one, writes through an index array sliced at run time, np.interp through selected
points. Each against NumPy's values, shapes and dtypes, the empty selection included."""
import numpy as np
import pytest

import pyjitc
from tests.reference import assert_same_call


def any_all_of_selections(A, m):
    return (A[m].any(axis=0), np.all(A[m], axis=0), A[m].all(), np.any(A[m] > 2, axis=1).sum(),
            np.count_nonzero(A[m]), np.count_nonzero(A[m] > 1))


def bfs_levels(adj, s):
    n = adj.shape[0]
    seen = np.zeros(n, dtype=bool)
    seen[s] = True
    frontier = seen.copy()
    dist = np.full(n, -1)
    dist[s] = 0
    d = 0
    while frontier.any():
        d += 1
        nxt = adj[frontier].any(axis=0) & ~seen
        dist[nxt] = d
        seen |= nxt
        frontier = nxt
    return dist


@pytest.mark.parametrize("kept", [0.0, 0.5, 1.0])
def test_any_all_and_count_nonzero_of_a_selection_are_numpys(kept):
    """`adj[frontier].any(axis=0)` was refused (its length needed at compile time) where
    `.sum(axis=0)` of the same selection compiled: a BFS frontier (probe AD)."""
    rng = np.random.default_rng(5)
    A = (rng.random((9, 5)) * 4).astype(np.int64)
    m = rng.random(9) < kept
    assert_same_call(pyjitc.jit(any_all_of_selections), any_all_of_selections, A, m)
    assert_same_call(pyjitc.jit(any_all_of_selections), any_all_of_selections, A > 2, m)
    adj = rng.random((30, 30)) > 0.92
    adj |= adj.T
    for s in (0, 7):
        assert_same_call(pyjitc.jit(bfs_levels), bfs_levels, adj, s)


def neighbour_sums(adj, w):
    out = np.zeros(adj.shape[0])
    for u in range(adj.shape[0]):
        for v in np.flatnonzero(adj[u]):
            out[u] += w[v]
    return out


def csr_bfs(indptr, indices, s):
    n = indptr.shape[0] - 1
    dist = np.full(n, -1)
    dist[s] = 0
    queue = np.zeros(n, dtype=np.int64)
    queue[0] = s
    head, tail = 0, 1
    while head < tail:
        u = queue[head]
        head += 1
        for v in indices[indptr[u]:indptr[u + 1]]:
            if dist[v] < 0:
                dist[v] = dist[u] + 1
                queue[tail] = v
                tail += 1
    return dist


def loops_over_selections(X, m, x):
    t = np.zeros(X.shape[1])
    for row in X[m]:
        t += row * 2
    s, last = 0.0, np.float64(-1.0)
    for i, v in enumerate(x[x > 0.5]):
        s += i * v
    for v, r in zip(x[x > 0.2], range(4)):
        if v > 0.9:
            break
        last = v + r
    return t, s, last


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_for_loop_over_a_selection_or_a_run_time_slice_is_numpys(seed):
    """`for v in np.flatnonzero(adj[u])`, `for v in indices[indptr[u]:indptr[u + 1]]` (graph
    neighbours), `for row in X[m]`, enumerate and zip of a selection: refused before ("iterating
    over it needs it at compile time"; probe AD)."""
    rng = np.random.default_rng(seed)
    adj = rng.random((12, 12)) > 0.7
    assert_same_call(pyjitc.jit(neighbour_sums), neighbour_sums, adj, rng.random(12))
    n = 15
    adj = rng.random((n, n)) > 0.85
    indptr = np.concatenate([[0], np.cumsum(adj.sum(axis=1))]).astype(np.int64)
    indices = np.nonzero(adj)[1].astype(np.int64)
    assert_same_call(pyjitc.jit(csr_bfs), csr_bfs, indptr, indices, 0)
    x = rng.random(20) * (seed != 2)      # (seed 2: nothing selected)
    assert_same_call(pyjitc.jit(loops_over_selections), loops_over_selections, rng.random((8, 3)), rng.random(8) > 0.5, x)


def group_means_of_finite_values(keys, vals):
    ok = ~np.isnan(vals)
    sums = np.bincount(keys[ok], weights=vals[ok], minlength=3)
    counts = np.bincount(keys[ok], minlength=3)
    return sums / np.maximum(counts, 1), counts


def selected_counts(k, m):
    return np.bincount(k[m], minlength=4)


def test_bincount_of_selected_keys_and_weights_is_numpys():
    """np.bincount(keys[ok], weights=vals[ok], minlength=k) was refused (probe AD), though
    np.add.at(h, idx[ok], w[ok]) compiled. Only the selected keys are checked against minlength."""
    rng = np.random.default_rng(3)
    vals = rng.standard_normal(40)
    vals[::3] = np.nan
    assert_same_call(pyjitc.jit(group_means_of_finite_values), group_means_of_finite_values, rng.integers(0, 3, 40), vals)
    k, m = rng.integers(0, 4, 30), rng.random(30) > 0.5
    for mask in (m, np.zeros(30, bool)):
        assert_same_call(pyjitc.jit(selected_counts), selected_counts, k, mask)
    k[~m] = 99    # left out: not counted, not checked
    assert_same_call(pyjitc.jit(selected_counts), selected_counts, k, m)
    k[np.argmax(m)] = 4
    with pytest.raises(pyjitc.RunError, match="minlength"):
        pyjitc.jit(selected_counts)(k, m)


def value_counts(x):
    u, c = np.unique(x, return_counts=True)
    order = np.argsort(-c, kind="stable")
    return u[order], c[order]


def sorted_through_argsort(x):
    v = x[x > 0]
    return v[np.argsort(v)], np.argsort(v), v.argsort(kind="stable")


def positions_of_another_mask(x):
    v = x[x > 0]
    return v[np.flatnonzero(x > 0.5)]


@pytest.mark.parametrize("seed", [0, 1])
def test_argsort_of_a_selection_and_a_selection_indexed_by_one_are_numpys(seed):
    """`np.argsort(c)` of np.unique's counts and `v[np.argsort(v)]` were refused ("indexing with
    it needs it at compile time"; value_counts, top-k groups; probe AD). NaNs and infinities sort
    as NumPy's; a position past the selection's run-time length is NumPy's IndexError."""
    rng = np.random.default_rng(seed)
    assert_same_call(pyjitc.jit(value_counts), value_counts, rng.integers(0, 6, 40))
    x = rng.standard_normal(30)
    x[::7], x[3] = np.nan, np.inf
    assert_same_call(pyjitc.jit(sorted_through_argsort), sorted_through_argsort, x)
    assert_same_call(pyjitc.jit(sorted_through_argsort), sorted_through_argsort, -np.ones(5))
    few = np.array([0.7, -1.0, 0.2, -2.0])      # positions 0 of x > 0.5: inside v = [0.7, 0.2]
    assert_same_call(pyjitc.jit(positions_of_another_mask), positions_of_another_mask, few)
    with pytest.raises(pyjitc.RunError, match="IndexError"):
        pyjitc.jit(positions_of_another_mask)(np.array([-1.0, -1.0, 0.2, 0.9]))   # position 3 of a 2-long v


def average_ranks(x):
    n = x.shape[0]
    order = np.argsort(x, kind="stable")
    sx = x[order]
    ranks = np.empty(n)
    i = 0
    while i < n:
        j = i
        while j + 1 < n and sx[j + 1] == sx[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j + 2) / 2.0
        i = j + 1
    return ranks


def writes_through_index_slices(x, order, ij):
    r = np.zeros(x.shape[0])
    i, j = ij[0], ij[1]
    r[order[i:j]] = 1.5
    r[order[i:j]] += x[i:j]
    R = np.zeros((x.shape[0], 2))
    R[order[j:]] = -1.0
    return r, R


def test_writes_through_an_index_array_sliced_at_run_time_are_numpys():
    """`ranks[order[i:j + 1]] = r` (average ranks of tie groups; probe AD) was refused: "its
    attribute __array_struct__ needs it at compile time"."""
    for x in (np.array([3.0, 1.0, 3.0, 2.0, 1.0, 5.0]), np.arange(7.0), np.zeros(4)):
        assert_same_call(pyjitc.jit(average_ranks), average_ranks, x)
    x, order = np.arange(6.0) + 0.5, np.array([5, -3, 1, 0, 2, 4])
    for ij in ([1, 4], [0, 6], [3, 3], [5, 2]):
        assert_same_call(pyjitc.jit(writes_through_index_slices), writes_through_index_slices, x, order, np.array(ij))


def scatter_windows(x, idx):
    out = np.zeros_like(x)
    k = 0
    while k < idx.shape[0]:
        m = min(k + 3, idx.shape[0])
        out[idx[k:m]] = x[k:m] * 2.0      # a later position naming the same element writes last
        k = m
    return out


def bump_windows(x, idx):
    out = x.copy()
    for k in range(idx.shape[0] - 3):
        out[idx[k:k + 4]] += out[k] + 1.0   # reads out before each write: NumPy's buffered update
    return out


@pytest.mark.parametrize("idx", [np.array([1, 1, 2, 1, 3, 3, 0, 1, 2, 2]), np.array([4, -1, -10, 9, 0, 0, 5, -2, 3, 3])])
def test_writes_through_a_run_time_slice_of_positions_run_as_one_native_loop_with_numpys_answers(idx):
    # `ranks[order[i:j + 1]] = r` in a while loop was a scatter over the whole capacity per pass,
    # which kept the loop on the host: average ranks of 1e4 values 24x NumPy's time
    from tests.test_scalar_loops import lowered_as
    x = np.linspace(-1.0, 2.0, 10)
    assert lowered_as(average_ranks, x) == "dispatch"
    assert lowered_as(scatter_windows, x, idx) == "dispatch"
    for fn in (scatter_windows, bump_windows, average_ranks):
        args = (x, idx)[:fn.__code__.co_argcount]
        assert_same_call(pyjitc.jit(fn), fn, *args)
    with pytest.raises(IndexError, match="index out of bounds for axis 0 with size 10") as e:
        pyjitc.jit(scatter_windows)(x, np.where(idx == 3, 10, idx))
    assert f"{__file__}:" in str(e.value)


def csr_to_dense(data, indices, indptr, m):
    n = len(indptr) - 1
    A = np.zeros((n, m))
    B = np.zeros((m, n))
    for i in range(n):
        A[i, indices[indptr[i]:indptr[i + 1]]] = data[indptr[i]:indptr[i + 1]]
        B[indices[indptr[i]:indptr[i + 1]], i] += 2 * data[indptr[i]:indptr[i + 1]]
    return A, B


def rows_through_index_slices(A, idx, ab):
    a, b = ab[0], ab[1]
    A[-1, idx[a:b]] = 7.0
    A[1, idx[a:b]] += 1.0
    A[idx[a:b], -2] = np.arange(6.0)[a:b]
    return A, A[0, idx[a:b]].sum(), (A[2, idx[a:b]] * A[3, idx[a:b]]).sum()


def from_a_known_matrix(x):
    A = np.arange(16.0).reshape(4, 4)
    Xi = np.arange(4)
    return A[Xi[x > 0], Xi[x > 0]].sum()


def test_a_matrix_known_at_compile_time_read_through_selections_is_numpys():
    # an internal error ("'numpy.ndarray' object has no attribute 'value'")
    assert_same_call(pyjitc.jit(from_a_known_matrix), from_a_known_matrix, np.array([1.0, -1, 2, 3]))


def test_a_row_or_column_written_through_a_run_time_slice_of_positions_is_numpys():
    """`A[i, indices[indptr[i]:indptr[i + 1]]] = data[...]` (CSR to dense, probe AI) was refused:
    "its attribute __array_struct__ needs it at compile time"; the integer is repeated along the
    slice's positions (repeated positions: the last write wins, as in NumPy)."""
    rng = np.random.default_rng(3)
    D = rng.random((7, 5)) * (rng.random((7, 5)) > 0.5)
    indptr = np.concatenate([[0], np.cumsum((D != 0).sum(1))])
    args = (D[D != 0], np.nonzero(D)[1], indptr, 5)
    assert_same_call(pyjitc.jit(csr_to_dense, static_argnames="m"), csr_to_dense, *args)
    A, idx = np.arange(36.0).reshape(6, 6), np.array([1, 2, 2, 5, 0, -1])
    for ab in ([1, 4], [0, 6], [3, 3], [4, 2]):
        assert_same_call(pyjitc.jit(rows_through_index_slices), rows_through_index_slices, A, idx, np.array(ab))


def gaps_filled(t, y):
    good = ~np.isnan(y)
    return np.interp(t, t[good], y[good])


def nans_interpolated(y):
    nans = np.isnan(y)
    x = np.arange(y.shape[0])
    out = y.copy()
    out[nans] = np.interp(x[nans], x[~nans], y[~nans], left=-1.0)
    return out


@pytest.mark.parametrize("kept", [[1, 2, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18], [7], [0, 19], []])
def test_interp_through_selected_points_is_numpys(kept):
    """`np.interp(t, t[good], y[good])` and `out[nans] = np.interp(x[nans], x[~nans], y[~nans])`,
    gap filling (probes AD, AF), were refused; one point is NumPy's special case and none its
    ValueError, decided at run time."""
    t = np.linspace(0, 1, 20)
    y = np.full(20, np.nan)
    y[kept] = np.sin(5 * t[kept])
    if not kept:
        with pytest.raises(pyjitc.RunError, match="array of sample points is empty"):
            pyjitc.jit(gaps_filled)(t, y)
        return
    assert_same_call(pyjitc.jit(gaps_filled), gaps_filled, t, y)
    assert_same_call(pyjitc.jit(nans_interpolated), nans_interpolated, y)


def dirichlet_rows(K, fixed):
    K = K.copy()
    K[fixed, :] = 0.0
    K[fixed, fixed] = 1.0
    return K, K[fixed, fixed]


def diagonal_shifted_in_place(K, m):
    K[m, m] += 2.0
    return K[m, m].sum()


@pytest.mark.parametrize("fixed", [[True, False, False, True, False, True], [False] * 6, [True] * 6])
def test_one_mask_on_two_axes_reads_and_writes_its_diagonal_as_numpy(fixed):
    """`K[fixed, fixed] = 1.0` (a Dirichlet condition in a FEM assembly; probe AG) was refused with
    a hint to write through the mask, which it does."""
    rng = np.random.default_rng(8)
    fixed = np.array(fixed)
    assert_same_call(pyjitc.jit(dirichlet_rows), dirichlet_rows, rng.random((6, 6)), fixed)
    assert_same_call(pyjitc.jit(diagonal_shifted_in_place), diagonal_shifted_in_place, rng.random((6, 6)), fixed)


def pixel_coordinates(m):
    ys, xs = np.nonzero(m)
    return np.stack([ys, xs], axis=1), np.column_stack(np.nonzero(m)), np.column_stack((xs, ys * 0.5)).sum(axis=0)


@pytest.mark.parametrize("seed", [0, 1])
def test_coordinates_of_a_masks_pixels_stacked_as_columns_are_numpys(seed):
    # np.stack([ys, xs], axis=1) and np.column_stack(np.nonzero(m)) (a Hough transform's input):
    # "np.stack needs it at compile time" (probe AH)
    m = np.random.default_rng(seed).random((5, 6)) > 0.5
    assert_same_call(pyjitc.jit(pixel_coordinates), pixel_coordinates, m)


def counted_values(x):
    u, c = np.unique(x[x >= 0], return_counts=True)
    return u, c, c.sum(), u[np.argmax(c)]


@pytest.mark.parametrize("x", [np.array([3, 3, -1, 2, 3, -5, 2, 0]), np.array([3.0, np.nan, -1.0, np.nan, 3.0]),
                               np.array([np.iinfo(np.int64).max, 3, -1, np.iinfo(np.int64).max])])
def test_unique_values_of_a_selection_with_their_counts_are_numpys(x):
    # the left-out entries are made the value that sorts last (NaN, the largest int): they are
    # taken off that value's count, which the selection may hold too
    assert_same_call(pyjitc.jit(counted_values), counted_values, x)


def voxel_means(P, k):
    keys = np.floor(P * k).astype(np.int64) @ np.array([1, k, k * k])
    u, inv = np.unique(keys, return_inverse=True)
    sums = np.zeros((len(u), 3))
    np.add.at(sums, inv, P)
    counts = np.zeros(len(u))
    np.add.at(counts, inv, 1.0)
    return sums / counts[:, None], len(u)


def test_rows_of_an_array_sized_by_a_selection_take_a_group_by(k=3):
    # np.zeros((len(u), 3)) was refused where np.zeros(len(u)) compiled (voxel downsampling; probe AJ)
    P = np.random.default_rng(12).random((50, 3))
    assert_same_call(pyjitc.jit(voxel_means, static_argnames="k"), voxel_means, P, k)


def members_of_selected(a, b, k):
    return np.isin(a[a > 0], b).sum(), np.isin(a[a > 0], b, invert=True), np.isin(a[k:], b).sum()


def test_isin_of_a_selection_is_a_selection_of_numpys_answers():
    # np.isin(a[a > 0], b): "this selection's length ... np.isin needs it at compile time" (probe AJ)
    for k in (1, 4):
        assert_same_call(pyjitc.jit(members_of_selected), members_of_selected,
                         np.array([3, -1, 2, 5, 0, 7, 2]), np.array([2, 7]), k)


def group_means_by_bincount(keys, vals):
    uk, inv = np.unique(keys, return_inverse=True)
    sums = np.bincount(inv, weights=vals, minlength=len(uk))
    counts = np.bincount(inv, minlength=len(uk))
    return uk, sums / counts, counts


def counts_of_raw_keys(keys):
    uk = np.unique(keys)
    return np.bincount(keys, minlength=len(uk))


def test_bincount_with_minlength_the_length_of_a_selection_is_a_group_by():
    # `np.bincount(inv, weights=v, minlength=len(uk))` after np.unique was "minlength must be known
    # at compile time" (a probe's group-by; np.add.at into np.zeros(len(uk)) compiled)
    rng = np.random.default_rng(12)
    for keys in (rng.integers(0, 5, 30), np.array([3, 3, 3]), np.array([2, -1, 2, 7])):
        vals = rng.random(keys.shape[0])
        assert_same_call(pyjitc.jit(group_means_by_bincount), group_means_by_bincount, keys, vals)
    assert_same_call(pyjitc.jit(counts_of_raw_keys), counts_of_raw_keys, np.array([0, 1, 1, 0]))
    with pytest.raises(pyjitc.RunError, match="bincount: a value is >= minlength"):
        pyjitc.jit(counts_of_raw_keys)(np.array([0, 4, 4, 0]))    # NumPy's result would be 5 long
