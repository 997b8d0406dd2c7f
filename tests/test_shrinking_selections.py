"""Loops that shrink arrays by a mask every step (`Z = Z[I]; C = C[I]`, an escape-time Mandelbrot
as NumPy programs write it): each selection is carried at full length with the flags of its mask
(frontend/carried.py), names selected by one mask stay aligned, and reads and writes through
selections (`N[Xi[~I], Yi[~I]] = i`) touch the selected entries only, the last of several writes
to one position winning as in NumPy. One executable serves every step count."""
import numpy as np
import pytest

import pyjitc
from tests.reference import assert_same, assert_same_call


def mandelbrot_shrinking(xmin, xmax, ymin, ymax, xn, yn, itermax, horizon=2.0):
    Xi, Yi = np.mgrid[0:xn, 0:yn]
    Xi, Yi = Xi.astype(np.uint32), Yi.astype(np.uint32)
    X = np.linspace(xmin, xmax, xn, dtype=np.float64)[Xi]
    Y = np.linspace(ymin, ymax, yn, dtype=np.float64)[Yi]
    C = X + Y * 1j
    N_ = np.zeros(C.shape, dtype=np.int64)
    Z_ = np.zeros(C.shape, dtype=np.complex128)
    Xi.shape = Yi.shape = C.shape = xn * yn
    Z = np.zeros(C.shape, np.complex128)
    for i in range(itermax):
        if not len(Z):
            break
        np.multiply(Z, Z, Z)
        np.add(Z, C, Z)
        I = np.less(abs(Z), horizon)
        N_[Xi[~I], Yi[~I]] = i
        Z_[Xi[~I], Yi[~I]] = Z[~I]
        Z = Z[I]
        Xi, Yi = Xi[I], Yi[I]
        C = C[I]
    return Z_.T, N_.T


def mandelbrot_escaped(xmin, xmax, ymin, ymax, xn, yn, itermax, horizon=2.0):
    # another common form: Xi, Yi are views of one np.mgrid array, the escaped points are
    # selected, and the mask is inverted in place
    Xi, Yi = np.mgrid[0:xn, 0:yn]
    X = np.linspace(xmin, xmax, xn, dtype=np.float64)[Xi]
    Y = np.linspace(ymin, ymax, yn, dtype=np.float64)[Yi]
    C = X + Y * 1j
    N_ = np.zeros(C.shape, dtype=np.int64)
    Z_ = np.zeros(C.shape, dtype=np.complex128)
    Xi.shape = Yi.shape = C.shape = xn * yn
    Z = np.zeros(C.shape, np.complex128)
    for i in range(itermax):
        if not len(C):
            break
        np.multiply(Z, Z, Z)
        np.add(Z, C, Z)
        I = np.abs(Z) > horizon
        N_[Xi[I], Yi[I]] = i + 1
        Z_[Xi[I], Yi[I]] = Z[I]
        np.logical_not(I, I)
        Z = Z[I]
        Xi, Yi = Xi[I], Yi[I]
        C = C[I]
    return Z_.T, N_.T


def shrinking_through_an_alias(x, steps):
    z = x * 1.0
    w = z                      # the same array: w's write in the first step is seen through z
    for _ in range(steps):
        w[0] = 0.75
        z = z[z > 0.2] * 1.5
    return z, w


def survivors(z, c, steps):
    z = z.copy()
    c = c.copy()
    for _ in range(steps):
        z = z * z + c
        keep = np.abs(z) < 2.0
        z, c = z[keep], c[keep]
    return z, c, len(z), z.sum()


def halving_argument(z, steps):
    for _ in range(steps):
        z *= 0.5               # the first step halves the caller's array in place
        z = z[z > 0.1]
    return z


def last_write_wins(vals, rows, cols, m):
    out = np.zeros((3, 4))
    out[rows[m], cols[m]] = vals[m]
    return out


@pytest.fixture(scope="module")
def mandelbrot():
    return pyjitc.jit(mandelbrot_shrinking)


@pytest.mark.parametrize("itermax", [0, 1, 7, 60])
def test_an_escape_time_mandelbrot_that_shrinks_its_arrays_matches_numpy_at_every_step_count(mandelbrot, itermax):
    assert_same_call(mandelbrot, mandelbrot_shrinking, -2.0, 0.5, -1.25, 1.25, 30, 20, itermax)


@pytest.mark.parametrize("itermax", [0, 5, 40])
def test_the_mgrid_views_form_with_the_mask_inverted_in_place_matches_numpy(itermax):
    assert_same_call(pyjitc.jit(mandelbrot_escaped), mandelbrot_escaped, -2.0, 0.5, -1.25, 1.25, 24, 18, itermax)


def test_an_array_written_through_another_name_before_it_shrinks_is_not_carried_as_a_copy():
    rng = np.random.default_rng(7)
    for steps in (1, 4):
        assert_same_call(pyjitc.jit(shrinking_through_an_alias), shrinking_through_an_alias, rng.random(16), steps)


def test_the_shrinking_loop_compiles_once_for_every_step_count_and_runs_at_run_time():
    f = pyjitc.jit(mandelbrot_shrinking)
    for itermax in (3, 11, 40):
        f(-2.0, 0.5, -1.25, 1.25, 12, 10, itermax)
    assert f.cache_info().misses == 1
    assert "stablehlo.while" in f.lower(-2.0, 0.5, -1.25, 1.25, 12, 10, 40).as_text()


def test_selections_carried_by_a_loop_are_returned_counted_and_summed_as_numpy_does():
    f = pyjitc.jit(survivors)
    rng = np.random.default_rng(4)
    z = rng.normal(size=50) + 1j * rng.normal(size=50)
    c = (rng.random(50) - 0.5) + 1j * (rng.random(50) - 0.5)
    for steps in (0, 1, 3, 9):
        assert_same(f(z, c, steps), survivors(z, c, steps))


def test_an_argument_updated_in_place_before_it_shrinks_still_changes_as_numpy_changes_it():
    # the loop cannot carry the argument as a selection (its first step writes the caller's
    # array): it falls back to unrolling for the step count given, never to a different answer
    rng = np.random.default_rng(5)
    for steps in (1, 3):
        assert_same_call(pyjitc.jit(halving_argument), halving_argument, rng.random(20), steps)


def test_writes_through_selected_index_arrays_keep_the_last_of_repeated_positions():
    rng = np.random.default_rng(6)
    f = pyjitc.jit(last_write_wins)
    for _ in range(5):
        vals, rows, cols = rng.random(40), rng.integers(0, 3, 40), rng.integers(0, 4, 40)
        m = rng.random(40) < 0.6
        assert_same(f(vals, rows, cols, m), last_write_wins(vals, rows, cols, m))


def rescaled_on_one_branch(x, c):
    s = x[x > 0]
    if c > 0:
        s = s * 2
    return s, s.sum(), len(s)


def other_selection_on_one_branch(x, c):
    s = x[x > 0]
    t = x[x > 0.5]
    if c > 0:
        s = t
    return s


def narrowed_on_one_branch(x, c):
    s = x[x > 0]
    if c > 0:
        s = s[s > 0.5]
    return s + 1, len(s)


@pytest.mark.parametrize("fn", [rescaled_on_one_branch, other_selection_on_one_branch, narrowed_on_one_branch])
def test_selections_merged_across_a_run_time_if_are_returned_as_numpy_returns_them(fn):
    x = np.array([0.3, -1.0, 0.7, 2.0, -0.2])
    f = pyjitc.jit(fn)
    for c in (1, -1):
        assert_same(f(x, c), fn(x, c))


def collatz_steps(n0):
    n = n0.copy()
    idx = np.arange(n.size)
    steps = np.zeros(n.size, dtype=np.int64)
    k = 0
    while len(n) > 0:            # a while loop that ends when every selection is empty
        k += 1
        n = np.where(n % 2 == 0, n // 2, 3 * n + 1)
        done = n == 1
        steps[idx[done]] = k
        n = n[~done]
        idx = idx[~done]
    return steps


def above_the_mean(x, steps):
    y = x * 1.0
    total = 0.0
    for _ in range(steps):
        y = y[y > y.mean()]
        total += y.sum()
        if y.size < 2:
            break
    return total, len(y), y


def test_a_while_loop_that_runs_until_its_selections_are_empty_matches_numpy():
    n0 = np.random.default_rng(9).integers(2, 300, 60)
    assert_same(pyjitc.jit(collatz_steps)(n0), collatz_steps(n0))


def test_a_selection_reduced_and_counted_in_each_step_matches_numpy():
    x = np.random.default_rng(10).random(64)
    f = pyjitc.jit(above_the_mean)
    for steps in (0, 1, 3, 8):
        assert_same(f(x, steps), above_the_mean(x, steps), accumulate=True)


def _iou(b, bs):
    xx1, yy1 = np.maximum(b[0], bs[:, 0]), np.maximum(b[1], bs[:, 1])
    xx2, yy2 = np.minimum(b[2], bs[:, 2]), np.minimum(b[3], bs[:, 3])
    inter = np.maximum(0.0, xx2 - xx1) * np.maximum(0.0, yy2 - yy1)
    return inter / ((b[2] - b[0]) * (b[3] - b[1]) + (bs[:, 2] - bs[:, 0]) * (bs[:, 3] - bs[:, 1]) - inter)


def non_maximum_suppression(boxes, scores, thr):
    order = np.argsort(scores)[::-1]
    keep = []
    while order.size > 0:
        i = order[0]
        keep.append(i)
        if order.size == 1:
            break
        ious = _iou(boxes[i], boxes[order[1:]])
        order = order[1:][ious <= thr]       # a selection of a slice, by values computed from it
    return np.array(keep)


@pytest.mark.parametrize("n, thr", [(1, 0.3), (30, 0.3), (60, 0.0), (60, 1.0)])
def test_non_maximum_suppression_shrinking_its_order_by_a_mask_matches_numpy(n, thr):
    # `order = order[1:][ious <= thr]` in `while order.size > 0:` was "this selection's length
    # depends on the data" (probe AW): the selection of a slice is held at the entry's length,
    # a selection masked by booleans computed from it selects the entries both flag, and
    # `bs[:, 0]` of gathered rows keeps the rows' flags
    rng = np.random.default_rng(n)
    xy, wh = rng.random((n, 2)) * 10, rng.random((n, 2)) * 3 + 0.5
    boxes, scores = np.hstack([xy, xy + wh]), rng.random(n)
    assert_same_call(pyjitc.jit(non_maximum_suppression), non_maximum_suppression, boxes, scores, thr)
