"""Loops that shorten a 1-D array by compile-time slices every step (`V = disc * (p * V[:-1] +
q * V[1:])` stepping back through a binomial tree, `x = x[1:] - x[:-1]` repeated differences): the
array is carried at its entry length with its run-time length (frontend/carried.py, prefixes), so
the loop is one run-time loop instead of one copy of the body per step (a tree of 200 steps took
43 s to compile unrolled). What such an array can't do inside the loop still unrolls it."""
import numpy as np
import pytest

import pyjitc
from tests.reference import assert_same_call


def american_put(S0, K, r, sigma, T, N):
    dt = T / N
    u = np.exp(sigma * np.sqrt(dt))
    d = 1 / u
    p = (np.exp(r * dt) - d) / (u - d)
    ST = S0 * u ** np.arange(N, -1, -1) * d ** np.arange(0, N + 1)
    V = np.maximum(K - ST, 0.0)
    for i in range(N - 1, -1, -1):
        ST = ST[:-1] * d
        V = np.exp(-r * dt) * (p * V[:-1] + (1 - p) * V[1:])
        V = np.maximum(V, K - ST)
    return V[0]


def repeated_differences(x, n):
    for k in range(n):
        x = x[1:] - x[:-1]
    return x


def pascal_row(n):
    row = np.ones(n, np.int64)
    while len(row) > 1:
        row = row[1:] + row[:-1]
    return row


def weighted_by_length(x, n):
    s = 0.0
    for k in range(n):
        s += len(x) * x[0]
        x = x[1:] * 2
    return s, x


def scaled_by_last(x, n):
    for k in range(n):
        x = x[:-1] * x[-1:]        # a slice of length 1 broadcasts
    return x


def max_tree(v, n):
    for k in range(n):
        v = np.maximum(v[:-1], v[1:]) - 1
    return v


def reshaped_after(x, n):
    for k in range(n):
        x = 0.5 * (x[1:] + x[:-1])
    return x.reshape(1, -1)


def written_through_a_view(a, n):
    v = a
    for k in range(n):
        v = v[:-1]
        v[0] += 1.0
    return v.sum()


def view_of_a_view(a, n):
    v = a
    for k in range(n):
        v = v[:-1]              # a view of the argument: carried as a copy, the write would miss it
    v[0] = 7.0
    return v.sum()


@pytest.fixture(scope="module")
def differences():
    return pyjitc.jit(repeated_differences)


@pytest.mark.parametrize("N", [1, 7, 60])
def test_a_binomial_tree_stepped_back_by_shrinking_slices_matches_numpy(N):
    assert_same_call(pyjitc.jit(american_put), american_put, 100.0, 95.0, 0.05, 0.25, 1.0, N)


def test_a_binomial_tree_is_one_run_time_loop_whatever_its_depth():
    # unrolled, the program grew with N (a copy of the body per step)
    f = pyjitc.jit(american_put)
    small, large = (f.lower(100.0, 95.0, 0.05, 0.25, 1.0, n).as_text() for n in (20, 200))
    assert "while" in large
    assert large.count("\n") == small.count("\n")


@pytest.mark.parametrize("n", [0, 1, 5, 39, 40, 45])
def test_repeated_differences_match_numpy_down_to_an_empty_array(differences, n):
    x = np.linspace(0.0, 1.0, 40) ** 3
    assert_same_call(differences, repeated_differences, x, n)


def test_repeated_differences_compile_once_for_every_step_count(differences):
    x = np.linspace(0.0, 1.0, 40) ** 3
    for n in (3, 11, 30):
        differences(x, n)
    assert differences.cache_info().misses == 1


@pytest.mark.parametrize("fn, args", [
    (pascal_row, (12,)),
    (weighted_by_length, (np.linspace(0.0, 1.0, 40) ** 2, 30)),
    (scaled_by_last, (np.linspace(1.0, 1.1, 30), 25)),
    (max_tree, (np.arange(30, dtype=np.int32) % 7, 20)),
], ids=["while-len", "len-and-first-element", "length-1-broadcast", "int32"])
def test_shrinking_loops_read_length_and_elements_as_numpy_does(fn, args):
    assert_same_call(pyjitc.jit(fn), fn, *args)


@pytest.mark.parametrize("fn, args", [
    (reshaped_after, (np.linspace(0.0, 1.0, 40) ** 2, 10)),
    (written_through_a_view, (np.zeros(20), 5)),
    (view_of_a_view, (np.ones(20), 5)),
], ids=["reshaped-after-the-loop", "written-through-a-view-of-an-argument", "a-view-written-after-the-loop"])
def test_what_a_shrinking_array_cannot_do_at_run_time_unrolls_the_loop_as_before(fn, args):
    a = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    assert_same_call(pyjitc.jit(fn), fn, *args)
    assert "while" not in pyjitc.jit(fn).lower(*a).as_text()


def _tree_steps(r, sigma, T, n):
    """A Cox-Ross-Rubinstein tree's up factor, up probability and one step's discount."""
    u = np.exp(sigma * np.sqrt(T / n))
    return u, (np.exp(r * T / n) - 1 / u) / (u - 1 / u), np.exp(-r * T / n)


def american_put_rebuilding_prices(S0, K, r, sigma, T, n):
    u, p, disc = _tree_steps(r, sigma, T, n)
    V = np.maximum(K - S0 * u ** np.arange(n, -n - 1, -2), 0.0)
    for i in range(n - 1, -1, -1):
        S = S0 * u ** np.arange(i, -i - 1, -2)      # bounds from the loop's variable, a step of -2
        V = disc * (p * V[:-1] + (1 - p) * V[1:])
        V = np.maximum(V, K - S)
    return V[0]


def stepped_ranges(n):
    out = 0.0
    for i in range(n):
        out += np.arange(i, 2 * i + 3, 3).sum() + 0.5 * np.arange(n, i, -1).sum() + np.arange(i - 2, 4).sum()
        out += (n - i) * np.arange(-i, 1).prod()
    return out


@pytest.mark.parametrize("n", [1, 2, 30])
def test_a_tree_that_rebuilds_its_price_row_with_a_stepped_arange_is_one_run_time_loop(n):
    # `S = S0 * u ** np.arange(i, -i - 1, -2)` in the loop: unrolled, 100 steps took 400 s to
    # compile (probe AV: each float power of an array is a long exact computation)
    f = pyjitc.jit(american_put_rebuilding_prices)
    assert_same_call(f, american_put_rebuilding_prices, 100.0, 100.0, 0.05, 0.2, 1.0, n)
    assert "while" in f.lower(100.0, 100.0, 0.05, 0.2, 1.0, 40).as_text()


@pytest.mark.parametrize("n", [0, 1, 7])
def test_aranges_with_run_time_bounds_and_compile_time_steps_are_numpys(n):
    assert_same_call(pyjitc.jit(stepped_ranges), stepped_ranges, n)
