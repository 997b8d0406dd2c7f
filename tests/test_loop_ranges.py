"""Index checks and clamps left out of native loops where the index is proven in range
(pyjitc/lowering/ranges.py, and the frontend's `in_bounds` for range() variables): the loops
still give NumPy's answers, indices that do leave the array still raise, and a loop stops at its
first failed check."""

import numpy as np
import pytest

import pyjitc
from tests.test_scalar_loops import check, insertion_sort, lowered_as, recurrence

CLAMPS = ("arith.maxsi", "arith.minsi")   # StableHLO's clamp of a dynamic_slice start, in a native loop


def native_text(fn, *args) -> str:
    assert lowered_as(fn, *args) == "dispatch"
    return pyjitc.jit(fn).lower(*args).as_text()


def test_insertion_sort_while_loop_carries_no_clamp_and_sorts_as_numpy():
    # j's bounds come from the loop's own flag (`j >= 0 and x[j] > key`) and j = i - 1
    x = np.random.default_rng(5).standard_normal(40)
    check(insertion_sort, x)
    assert not any(c in native_text(insertion_sort, x) for c in CLAMPS)


def test_range_loop_indices_carry_no_clamp():
    x = np.linspace(-1.0, 1.0, 30)
    check(recurrence, x, 0.5)
    assert not any(c in native_text(recurrence, x, 0.5) for c in CLAMPS)


def triangle_sum(A):
    n = A.shape[0]
    s = 0.0
    i = 0
    while i < n:
        j = i
        while j < n:
            s += A[i, j] * (j - i + 1)
            j += 1
        i += 1
    return s


def test_nested_while_loops_over_a_triangle_match_numpy_without_clamps():
    A = np.arange(36.0).reshape(6, 6)
    check(triangle_sum, A)
    assert not any(c in native_text(triangle_sum, A) for c in CLAMPS)


def walk_past_the_end(x, start):
    j = start
    s = 0.0
    while j < x.shape[0] + 2:     # two steps too far
        s += x[j]
        j += 1
    return s


def test_while_loop_index_that_leaves_the_array_still_raises():
    x = np.arange(5.0)
    with pytest.raises(IndexError):
        walk_past_the_end(x, -5)
    with pytest.raises(pyjitc.RunError, match="out of bounds"):
        pyjitc.jit(walk_past_the_end)(x, -5)
    assert any(c in native_text(walk_past_the_end, x, -5) for c in CLAMPS)


def flag_about_the_old_index(x, step):
    # the flag tests j before the step: it says nothing about the j the next iteration reads
    j = x.shape[0] - 1
    go = True
    s = 0.0
    while go:
        s += x[j] * (j + 10)
        go = j >= 0
        j -= step
    return s


@pytest.mark.parametrize("step", [1, 3, 9])
def test_a_flag_about_the_previous_index_proves_nothing_about_the_next(step):
    x = np.arange(1.0, 5.0)    # step 1 and 3 end on a negative index NumPy wraps; 9 leaves the array
    if step == 9:
        with pytest.raises(IndexError):
            flag_about_the_old_index(x.copy(), step)
        with pytest.raises(pyjitc.RunError, match="out of bounds"):
            pyjitc.jit(flag_about_the_old_index)(x, step)
    else:
        check(flag_about_the_old_index, x, step)


def first_failure_reported(x, n):
    s = 0.0
    for i in range(n):
        s += x[i]            # fails first, at i == len(x)
        s += x[i - 1]        # would fail next, at i == len(x) + 1, if the loop went on
    return s


def test_loop_stops_at_its_first_failed_check_and_reports_it():
    x = np.arange(12.0)
    with pytest.raises(IndexError):
        first_failure_reported(x, 30)
    line = first_failure_reported.__code__.co_firstlineno + 3
    with pytest.raises(pyjitc.RunError, match=rf":{line}:"):
        pyjitc.jit(first_failure_reported)(x, 30)
    check(first_failure_reported, x, 10)
