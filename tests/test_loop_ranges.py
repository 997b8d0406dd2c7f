"""Index checks and clamps left out of native loops where the index is proven in range
(pyjitc/lowering/ranges.py, and the frontend's `in_bounds` for range() variables): the loops
still give NumPy's answers, indices that do leave the array still raise, and a loop stops at its
first failed check."""

import numpy as np
import pytest

import pyjitc
from tests.reference import assert_same, assert_same_call
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


def strided_writes_in_a_loop(x, lo):
    for s in range(1, 8):
        x[lo * s::s] = s
        x[s - 9::s + 1] += 2
        x[1:s * 3:s] *= 3
        x[-3 * s:lo + 20:s] -= 1
    return x


def flags_sieve(n):
    is_p = np.ones(n + 1, dtype=np.bool_)
    is_p[:2] = False
    for i in range(2, int(n ** 0.5) + 1):
        if is_p[i]:
            is_p[i * i::i] = False
    return np.flatnonzero(is_p)


def divisor_sums(n):
    s = np.zeros(n, dtype=np.int64)
    for d in range(1, n // 2 + 1):
        s[2 * d::d] += d
    return s


@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.uint8])
def test_writes_through_slices_with_a_run_time_step_match_numpy(dtype):
    # on CPU each is a loop over the slice's elements (the sieve's `is_p[i * i::i] = False`: a
    # mask over the whole array per pass, 2e6 flags in 205 ms, now 2.8 ms; NumPy 4.5); `+=`
    # through such a slice was refused (probe U)
    f = pyjitc.jit(strided_writes_in_a_loop)
    for lo in (0, 2, 5, -4):
        assert_same_call(f, strided_writes_in_a_loop, np.arange(40).astype(dtype), lo)
    assert_same(pyjitc.jit(flags_sieve)(500), flags_sieve(500))
    assert_same(pyjitc.jit(divisor_sums)(60), divisor_sums(60))


def adds_a_float_through_a_strided_slice(x):
    for s in range(1, 8):
        x[::s] += 0.5
    return x


def test_an_update_through_a_run_time_step_casts_as_numpy_does():
    with pytest.raises(pyjitc.JitError, match="Cannot cast ufunc output"):
        pyjitc.jit(adds_a_float_through_a_strided_slice)(np.arange(10))
    assert_same_call(pyjitc.jit(adds_a_float_through_a_strided_slice), adds_a_float_through_a_strided_slice,
                     np.arange(10.0))


def totient_sieve(n):
    phi = np.arange(n + 1)
    for i in range(2, n + 1):
        if phi[i] == i:
            phi[i::i] -= phi[i::i] // i
    return phi


def strided_slice_rewritten_from_itself(n):
    y = np.arange(n + 1.0)
    for i in range(2, n + 1):
        s = y[i::i]
        y[i::i] = s * 0.5 + 1
    return y


def test_a_slice_with_a_run_time_step_written_from_its_own_values():
    # `phi[i::i] -= phi[i::i] // i` (Euler's totient sieve) was refused: the read and the write
    # made two masks of one slice, which did not compare equal ("through another mask"; a probe
    # of number theory code); one mask per slice expression now
    assert_same(pyjitc.jit(totient_sieve)(60), totient_sieve(60))
    assert_same(pyjitc.jit(strided_slice_rewritten_from_itself)(30), strided_slice_rewritten_from_itself(30))
