"""A run-time `for` loop whose first pass changes a carried value's type (`acc = x[0]` of ints,
then `acc = 0.5 * acc + x[i]`; `total = 0`, then `total = total + row`) runs that pass on its own
before the loop (NeedPeel), so the loop stays one run-time loop instead of being unrolled, and
every answer is NumPy's, breaks and returns in the first pass included."""

import numpy as np
import pytest

import pyjitc
from tests.reference import assert_same


def is_run_time_loop(fn, *args) -> bool:
    """The program does not grow with the trip count: the same length for the arrays' first
    two thirds of rows (sizes with as many digits) as for all of them."""
    shorter = [a[:len(a) * 2 // 3] if isinstance(a, np.ndarray) else a for a in args]
    return len(pyjitc.jit(fn).lower(*args).as_text()) == len(pyjitc.jit(fn).lower(*shorter).as_text())


def check(fn, *args):
    copy = lambda: [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    np_args, jit_args = copy(), copy()
    want = fn(*np_args)
    got = pyjitc.jit(fn)(*jit_args)
    assert_same(got, want)
    for i, (g, w) in enumerate(zip(jit_args, np_args)):
        if isinstance(w, np.ndarray):
            assert_same(g, w, path=f"argument {i} afterwards")


def ema_of_ints(x):
    acc = x[0]
    for i in range(1, x.shape[0]):
        acc = 0.5 * acc + x[i]
    return acc


def sum_of_rows_from_zero(X):
    total = 0
    for row in X:
        total = total + row
    return total


def scaled_rows_in_place_sum(X):
    total = 0.0
    for i in range(X.shape[0]):
        total += X[i] * 2
    return total


def float32_state_meets_float64(x, z):
    y = x.astype(np.float32)
    for i in range(z.shape[0]):
        y = y * 0.5 + z[i]
    return y


def break_in_first_pass(x, stop):
    acc = x[0]
    for i in range(x.shape[0]):
        acc = acc * 0.5 + x[i]
        if acc > stop:
            break
    return acc, i


def return_in_first_pass(x, stop):
    acc = 0
    for i in range(x.shape[0]):
        acc = acc + x[i] * 1.5
        if acc > stop:
            return acc
    return -acc


def row_sums_per_block(X):
    out = np.zeros(X.shape[0])
    for b in range(X.shape[0]):
        s = X[b, 0]
        for j in range(1, X.shape[1]):
            s = s + X[b, j] / 2
        out[b] = s
    return out


def first_pass_with_if(x):
    best = x[0]
    for i in range(1, x.shape[0]):
        if x[i] > best:
            best = x[i] * 1.0
        else:
            best = best - 0.25
    return best


ints = np.arange(-20, 40) * 3 % 17
X = np.arange(60.0).reshape(20, 3) - 7.5


@pytest.mark.parametrize("fn, args", [
    (ema_of_ints, (ints,)),
    (sum_of_rows_from_zero, (X,)),
    (sum_of_rows_from_zero, (X.astype(np.int32),)),
    (scaled_rows_in_place_sum, (X,)),
    (float32_state_meets_float64, (np.arange(30.0), np.arange(30.0))),
    (first_pass_with_if, (ints,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_first_pass_changing_the_type_keeps_one_run_time_loop(fn, args):
    assert is_run_time_loop(fn, *args)
    check(fn, *args)


@pytest.mark.parametrize("stop", [-100, 0, 5, 100])
def test_a_break_in_the_peeled_pass_stops_the_loop_as_in_python(stop):
    check(break_in_first_pass, ints, stop)


@pytest.mark.parametrize("stop", [-1.0, 3.0, 1e9])
def test_a_return_in_the_peeled_pass_returns_as_in_python(stop):
    check(return_in_first_pass, ints, stop)


def test_an_inner_loop_peeled_inside_an_outer_run_time_loop():
    Y = np.arange(600).reshape(20, 30) % 11 - 4
    lowered = lambda a: pyjitc.jit(row_sums_per_block).lower(a).as_text()
    longer, shorter = len(lowered(Y)), len(lowered(Y[:, :20]))
    assert abs(longer - shorter) < 0.05 * longer   # neither loop unrolled (a constant may differ)
    check(row_sums_per_block, Y)
    check(row_sums_per_block, Y.astype(np.float32))


def test_a_long_loop_compiles_as_one_loop_not_thousands_of_copies():
    """4096 passes of `acc = 0.5 * acc + x[i]` on ints were unrolled (383 s, then IREE failed)."""
    x = np.arange(4096) % 7
    text = pyjitc.jit(ema_of_ints).lower(x).as_text()
    assert len(text) < 20_000
    check(ema_of_ints, x)
