"""Control flow on run-time values (stablehlo.if / stablehlo.while), loops with break/continue,
early returns, helpers, containers and run-time scalar arguments, each against NumPy."""
import collections
from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import given, strategies as st

import pyjitc
from tests.reference import assert_same, assert_same_call

rng = np.random.default_rng(1)


# ---------------------------------------------------------------- if on array values

def sign_flip(x):
    if x.sum() > 0:
        y = x * 2
    elif x.sum() > -1:
        y = x + 100
    else:
        y = -x
    return y


jit_sign_flip = pyjitc.jit(sign_flip)


@pytest.mark.parametrize("x", [np.arange(4.0), np.array([-0.25, 0, 0, 0]), -np.arange(1.0, 5.0)])
def test_if_elif_else_on_array_values_takes_numpys_branch(x):
    assert_same_call(jit_sign_flip, sign_flip, x)
    assert jit_sign_flip.cache_info().currsize == 1


def test_if_on_array_value_lowers_to_stablehlo_if_and_static_if_to_one_branch():
    assert "stablehlo.if" in jit_sign_flip.lower(np.zeros(4)).as_text()

    def by_rank(x):
        if x.ndim == 2:
            return x.sum(axis=1)
        return x * 3
    text = pyjitc.jit(by_rank).lower(np.zeros((2, 3))).as_text()
    assert "stablehlo.if" not in text and "stablehlo.reduce" in text and "multiply" not in text


def early_return(x):
    if x[0] > 0:
        return x * 2
    x = x - 1
    return x


jit_early_return = pyjitc.jit(early_return)


@pytest.mark.parametrize("first", [1.0, -1.0])
def test_early_return_inside_a_run_time_if(first):
    x = np.array([first, 2.0, 3.0])
    assert_same_call(jit_early_return, early_return, x)


def conditional_expressions(x, t):
    a = x * 2 if x.max() > t else x
    b = x.min() > 0 and x.max() < 10
    c = 0 <= x[0] < 5
    return a, b, c, not b


@pytest.mark.parametrize("t", [0.5, 5.0])
def test_conditional_expression_and_or_chained_comparison_on_array_values(t):
    f = pyjitc.jit(conditional_expressions)
    for x in (np.array([1.0, 2.0, 3.0]), np.array([-1.0, 20.0, 3.0])):
        assert_same_call(f, conditional_expressions, x, t)


def branch_changes_shape(x):
    if x.sum() > 0:
        y = x[:2]
    else:
        y = x
    return y


def test_variable_with_different_shapes_on_two_paths_is_a_located_error():
    with pytest.raises(pyjitc.JitError, match=r"'y' changes type: f64\[2\] on one path, f64\[4\] on the other \(the true path: \S+test_control_flow.py:\d+:9; the false path: \S+:\d+:9\)") as e:
        pyjitc.jit(branch_changes_shape)(np.ones(4))
    assert "test_control_flow.py:" in str(e.value) and "if x.sum() > 0:" in str(e.value)


def only_one_path(x):
    if x.sum() > 0:
        y = x + 1
    return y


def test_variable_assigned_on_one_path_only_is_pythons_unbound_local_error_where_that_path_did_not_run():
    f = pyjitc.jit(only_one_path)
    x = np.array([1.0, -0.5, 2.0, 0.25])
    np.testing.assert_array_equal(f(x), only_one_path(x))
    with pytest.raises(UnboundLocalError):
        only_one_path(-x)
    with pytest.raises(UnboundLocalError, match="cannot access local variable 'y'") as e:
        f(-x)
    line = only_one_path.__code__.co_firstlineno + 3   # `return y`
    assert isinstance(e.value, pyjitc.RunError) and f"test_control_flow.py:{line}:12:" in str(e.value)


def search_with_else(x, t):
    for i in range(x.shape[0]):
        if x[i] > t:
            found = i
            break
    else:
        found = -1
    return found


def value_after_break(x, t):
    for i in range(x.shape[0]):
        if x[i] > t:
            break
        last = x[i] * 2
    return last


@pytest.mark.parametrize("n", [4, 9])   # unrolled (a short loop) and a run-time loop
def test_names_bound_before_a_break_or_by_a_for_else_are_pythons_values(n):
    x = np.linspace(0.0, 1.0, n)
    for t in (-1.0, 0.5, 2.0):
        assert pyjitc.jit(search_with_else)(x, t) == search_with_else(x, t)
    for t in (0.3, 2.0):
        assert pyjitc.jit(value_after_break)(x, t) == value_after_break(x, t)
    with pytest.raises(UnboundLocalError):
        value_after_break(x, -1.0)
    with pytest.raises(UnboundLocalError, match="'last'"):
        pyjitc.jit(value_after_break)(x, -1.0)


# ---------------------------------------------------------------- loops

def stencil(u, v, steps, c):
    """Explicit heat equation, updating both argument arrays in place."""
    for _ in range(steps):
        u[1:-1] = u[1:-1] + c * (u[2:] - 2 * u[1:-1] + u[:-2])
        v[:] = u
        v *= 2
    return u.sum()


jit_stencil = pyjitc.jit(stencil)


def test_stencil_updates_argument_arrays_in_place_over_100_steps_without_recompiling():
    x = np.linspace(0.0, 1.0, 32) ** 2
    assert_same_call(jit_stencil, stencil, x, np.zeros(32), 100, 0.2, accumulate=True)
    assert_same_call(jit_stencil, stencil, x, np.zeros(32), 37, 0.1, accumulate=True)
    info = jit_stencil.cache_info()
    assert info.misses == 1, "a new step count or coefficient must not recompile"
    text = jit_stencil.lower(x, np.zeros(32), 100, 0.2).as_text()
    assert "stablehlo.while" in text or "scf.while" in text   # one run-time loop (here a native one), not unrolled


def test_a_1000_step_loop_stays_one_loop_in_the_program():
    def count_up(x):
        for i in range(1000):
            x = x + i
        return x
    text = pyjitc.jit(count_up).lower(np.zeros(3)).as_text()
    # one loop: a host loop, or (the array computed anew each pass, element by element) a native one
    assert text.count("stablehlo.while") + text.count("scf.while") == 1 and len(text.splitlines()) < 60
    assert_same_call(pyjitc.jit(count_up), count_up, np.zeros(3))


def forward_substitution(L, b):
    n = b.shape[0]
    x = np.zeros_like(b)
    for i in range(n):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def backward_substitution(U, b):
    n = b.shape[0]
    x = np.zeros_like(b)
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s -= U[i, j] * x[j]
        x[i] = s / U[i, i]
    return x


jit_forward = pyjitc.jit(forward_substitution)
jit_backward = pyjitc.jit(backward_substitution)


@given(n=st.sampled_from([1, 5, 12]), seed=st.integers(0, 2**16))
def test_triangular_solves_with_loop_variable_slices_match_numpy(n, seed):
    r = np.random.default_rng(seed)
    L = np.tril(r.standard_normal((n, n))) + n * np.eye(n)
    b = r.standard_normal(n)
    assert_same_call(jit_forward, forward_substitution, L, b, accumulate=True)
    assert_same_call(jit_backward, backward_substitution, L.T.copy(), b, accumulate=True)
    assert np.allclose(jit_forward(L, b), np.linalg.solve(L, b))


def first_negative(x):
    total = np.float64(0.0)
    for i in range(len(x)):
        if x[i] < 0:
            break
        total += x[i]
    else:
        total = np.float64(-1.0)
    return total, i


def skip_negative(x):
    total = np.float64(0.0)
    for v in x:
        if v < 0:
            continue
        total = total + v
    return total


def count_while(x, limit):
    i = 0
    while i < x.shape[0] and x[i] < limit:
        i += 1
    return i


jit_first_negative = pyjitc.jit(first_negative)
jit_skip_negative = pyjitc.jit(skip_negative)
jit_count_while = pyjitc.jit(count_while)


@given(st.lists(st.sampled_from([-2.0, -0.5, 0.0, 1.0, 3.5]), min_size=6, max_size=6))
def test_break_continue_for_else_and_while_match_numpy(values):
    x = np.array(values)
    assert_same_call(jit_first_negative, first_negative, x)
    assert_same_call(jit_skip_negative, skip_negative, x)
    assert_same_call(jit_count_while, count_while, x, 1.5)
    assert jit_count_while.cache_info().currsize == 1


def python_float_accumulator(x):
    total = 0.0
    for v in x:
        if v < 0:
            break
        total += v
    return total


def test_python_scalar_that_a_loop_may_turn_into_a_numpy_scalar_is_the_numpy_scalar():
    # Documented: NumPy returns a Python float when the loop breaks before the first update and
    # np.float64 otherwise; a compiled function has one result type, np.float64 (same value).
    f = pyjitc.jit(python_float_accumulator)
    for x in (np.array([-1.0, 2.0]), np.array([1.0, 2.0, -3.0])):
        got, want = f(x), python_float_accumulator(x)
        assert type(got) is np.float64 and got == want


def total_of_first(x, n):
    total = 0.0
    for i in range(n):
        total += x[i]
    return total


def number_or_sum(x, c, m):
    b = m * 2
    if c > 0:
        b = x.sum()
    return b


@pytest.mark.parametrize("n", [0, 2])
def test_a_python_number_a_loop_or_branch_may_leave_alone_is_returned_as_numpy_returns_it(n):
    # a Python number where the loop ran zero times or the branch that makes it a NumPy scalar
    # did not run (the compiled function says which), the NumPy scalar otherwise
    x, xi = np.arange(4.0) + 0.5, np.arange(4)
    for a in (x, xi):
        got, want = pyjitc.jit(total_of_first)(a, n), total_of_first(a, n)
        assert type(got) is type(want) and got == want
        for c in (-1.0, 1.0):
            got, want = pyjitc.jit(number_or_sum)(a, c, n + 1), number_or_sum(a, c, n + 1)
            assert type(got) is type(want) and got == want


def rows_and_pairs(A, w):
    out = np.zeros(A.shape[1])
    for i, row in enumerate(A):
        out += row * i
    acc = 0.0
    for a, b in zip(A[0], w):
        acc += a * b
    squares = [k * k for k in range(4)]
    return out, acc, squares


def test_loops_over_array_rows_enumerate_zip_and_comprehensions():
    A, w = rng.standard_normal((9, 4)), rng.standard_normal(4)
    assert_same_call(pyjitc.jit(rows_and_pairs), rows_and_pairs, A, w, accumulate=True)


def reversed_sorted_pow(x, A):
    s = 0.0
    for v in reversed(x):                       # an array's items, last first
        s = s * 0.9 + v
    t = 0.0
    for row in reversed(A):                     # rows (views)
        t = t + row[0] * 2
    three = sorted([x[2], x[0], x[1]])          # numbers known only at run time
    return s, t, list(reversed([x[0], x[1]])), three, sorted(x, reverse=True), pow(x[0], 2), pow(3, 4, 5)


def test_reversed_sorted_and_pow_builtins_on_run_time_values():
    x, A = rng.standard_normal(6), rng.standard_normal((3, 2))
    assert_same_call(pyjitc.jit(reversed_sorted_pow), reversed_sorted_pow, x, A)


def picks_by_key(x):
    best = max(range(len(x)), key=lambda i: x[i])          # keys known only at run time
    nearest = min(range(len(x)), key=lambda i: abs(x[i] - 0.5))
    return best, nearest, x[best] * 2, max([x[0], x[1], x[2]], key=lambda v: -v), max(["ab", "c"], key=len)


def test_max_and_min_with_a_key_function_pick_as_python_does():
    # were refused: "max: a function defined inside a @jit function is called by the compiler only"
    f = pyjitc.jit(picks_by_key)
    for x in (np.array([0.3, 0.9, -0.95, 0.9, 0.1]), np.array([0.5, 0.5, 0.5]), np.array([np.nan, 1.0, 2.0])):
        got = assert_same_call(f, picks_by_key, x)
        assert type(got[0]) is int


def by_argument_type(x, p):
    a = x ** p if isinstance(p, int) else x * p      # p a run-time Python number
    kinds = (isinstance(x[0], float), isinstance(x[0], np.floating), isinstance(x, np.ndarray),
             isinstance(p, (bool, float)), isinstance(np.int32(p), np.integer), isinstance(x.sum(), np.ndarray))
    return a, kinds


def test_isinstance_of_run_time_values_is_what_python_says():
    # isinstance(p, int) of an int argument was False (every run-time value taken for an array):
    # x * 2 where NumPy computes x ** 2
    x = rng.standard_normal(5)
    f = pyjitc.jit(by_argument_type)
    for p in (2, 2.5, True):
        assert_same_call(f, by_argument_type, x, p)


def newton_sqrt(a, tol):
    x = a
    it = 0
    while np.max(np.abs(x * x - a)) > tol:
        x = 0.5 * (x + a / x)
        it += 1
    return x, it


def test_while_loop_on_array_condition_with_loop_carried_python_int():
    a = np.array([2.0, 9.0, 0.5])
    got = assert_same_call(pyjitc.jit(newton_sqrt), newton_sqrt, a, 1e-12)
    assert type(got[1]) is int


def nested_while_in_for(x):
    acc = 0.0
    for i in range(x.shape[0]):
        k = 0
        while k < i:
            acc += x[k]
            k += 1
    return acc


def test_a_while_loop_nested_in_a_for_loop_runs():
    # failed at run time on IREE's local-task driver ("transient buffer has not been committed")
    assert_same_call(pyjitc.jit(nested_while_in_for), nested_while_in_for, np.arange(5.0), accumulate=True)


def sum_to(n):
    s = 0
    for i in range(n):
        s += i
    return s


def test_run_time_scalar_loop_bound_does_not_recompile():
    f = pyjitc.jit(sum_to)
    for n in (0, 1, 10, 11, 1000):
        assert_same(f(n), sum_to(n))
    assert f.cache_info().misses == 1


# Loops whose body yields a carried value that does not depend on the loop (`tmp[:, :] = 0.0`
# ending each step, `x = 1.0`, `tmp = v`) or one value for two carried variables (`u[:, :] = tmp`)
# failed inside IREE 3.13: "'scf.while' op along control flow edge from Operation scf.condition
# to Region #1: region branch point has 8 operands, but region successor needs 10 inputs".

def reset_work_array(u, nsteps):
    tmp = u * 0.0              # a run-time array derived from the argument
    for t in range(nsteps):
        tmp[1:-1, 1:-1] = 0.25 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2])
        u[:, :] = tmp[:, :]
        tmp[:, :] = 0.0
    return u


def reset_zeros_like_return_both(u, nsteps):
    tmp = np.zeros_like(u)
    for t in range(nsteps):
        tmp[1:-1, 1:-1] = 0.25 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2])
        u[:] = tmp
        tmp[:] = 0.0
    return u, tmp


def reset_in_while_loop(u, nsteps):
    tmp = u * 0.0
    t = 0
    while t < nsteps:
        tmp[1:-1, 1:-1] = 0.5 * (u[2:, 1:-1] + u[:-2, 1:-1])
        u[:, :] = tmp[:, :]
        tmp[:, :] = 0.0
        t += 1
    return tmp


def reset_in_nested_loops(u, v, nsteps):
    tmp = u * 0.0
    for s in range(2):
        for t in range(nsteps):
            tmp[1:-1, 1:-1] = 0.25 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2])
            u[:, :] = tmp[:, :]
            v[:, :] = tmp
            tmp[:, :] = 0.0
    return u.sum()


def copy_back_without_reset(u, v, w, nsteps):
    tmp = u * 0.0
    for t in range(nsteps):
        tmp[1:-1, 1:-1] = 0.25 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2])
        u[:, :] = tmp              # u and tmp (and v, w) end each step as one value
        v[:, :] = tmp
        w[:, :] = tmp
    return u


def rebind_to_loop_invariant_values(u, v, nsteps):
    x = u[0, 0] * 2.0
    tmp = u * 2.0
    acc = u * 0.0
    for t in range(nsteps):
        acc = acc + tmp * x
        x = 1.0
        tmp = v
    return acc


def overwrite_reversed_then_branch(u, v, nsteps):
    P = u.copy()
    for t in range(nsteps):
        P[::-1] = -u           # every element written: P is replaced wholesale (found by the fuzzer)
    if P.sum() > 1.0:
        v[1:5] += v[::-2] * 2.0
    return P, v


def write_under_a_mask_made_from_constants(u, nsteps):
    w = np.zeros((3, 7))
    s = w.T
    row = w[2]
    for t in range(nsteps):
        s[:] = 3.0
        u[0][row > 0.0] = 1.0          # the mask is all True once s is written (found by the fuzzer)
    return s, u


def overwrite_a_one_item_array(u, nsteps):
    b = np.copy(u[-1, -1:])
    for t in range(nsteps):
        u -= u * 0.5 + b[0]
        b[t % 1] = 0.25                # every element of b written (found by the fuzzer)
    return u, b


@pytest.mark.parametrize("fn, n_arrays", [
    (overwrite_reversed_then_branch, 2), (write_under_a_mask_made_from_constants, 1),
    (overwrite_a_one_item_array, 1),
    (reset_work_array, 1), (reset_zeros_like_return_both, 1), (reset_in_while_loop, 1),
    (reset_in_nested_loops, 2), (copy_back_without_reset, 3), (rebind_to_loop_invariant_values, 2)])
def test_loop_yielding_a_loop_invariant_or_repeated_value_compiles_and_updates_in_place(fn, n_arrays):
    arrays = [rng.random((8, 7)) for _ in range(n_arrays)]
    f = pyjitc.jit(fn)
    for nsteps in (0, 1, 5):
        assert_same_call(f, fn, *arrays, nsteps, accumulate=True)
    assert f.cache_info().misses == 1


def sine_of_a_known_mean_in_a_loop(x, n):
    P = np.arange(30.0).reshape(5, 6)
    s = P[::-1]
    for i in range(n):
        P[1:, :-1] -= np.maximum(s[:-1, 1:], P[1:, :-1]) - np.sin(s.mean()) + x[i]
    return P


def test_float64_sine_of_a_value_iree_evaluates_while_compiling_links():
    # IREE 3.13 evaluated sin(constant) at compile time with its embedded linker, which has no
    # libm ("iree-lld: undefined symbol: sin"); found by the statement fuzzer
    x = rng.random(6)
    assert_same_call(pyjitc.jit(sine_of_a_known_mean_in_a_loop), sine_of_a_known_mean_in_a_loop, x, 3)


def loop_carrying_an_unread_array(y, A, n):
    w = np.ones_like(y)             # updated in the loop, never read afterwards
    for i in range(n):
        A += 0.125
        inner = w[1:-1]
        inner *= 0.5
    return A


def test_loop_carrying_an_array_nothing_reads_afterwards_runs():
    # IREE 3.13 refused this at run time ("indirect buffer reference slot 0 is out range", in the
    # module initializer); the unread carried value is now dropped. Found by the statement fuzzer.
    f = pyjitc.jit(loop_carrying_an_unread_array)
    for n in (0, 1, 3):
        assert_same_call(f, loop_carrying_an_unread_array, rng.random(6), rng.random((5, 6)), n)


def constant_array_through_a_loop_after_a_loop_writing_an_aliased_row(x, y, A, n):
    b = np.full((7, 8), -2.0)
    for i in range(n):
        x[i % 6] += 0.25
    for i in range(n):
        b *= -1.0
        y += 1.0
    return b


def test_a_constant_array_carried_by_a_loop_that_runs_zero_times_comes_back():
    # IREE 3.13 returned a null buffer for `b` when n == 0 ("ref is null; while invoking native
    # function hal.buffer_view.create"); found by the statement fuzzer (x is a row of A)
    fn = constant_array_through_a_loop_after_a_loop_writing_an_aliased_row
    f = pyjitc.jit(fn)
    for n in (0, 2):
        A, A2 = rng.random((5, 6)), None
        A2 = A.copy()
        y, y2 = rng.random(6), None
        y2 = y.copy()
        assert_same(f(A[0], y, A, n), fn(A2[0], y2, A2, n))
        assert_same((A, y), (A2, y2))


def loop_result_aliasing_a_view_then_write_through_the_view(x, y, A, n):
    w2 = np.minimum(y, y) * 1.0
    for i in range(n):
        w2[::2] = w2[1:4]
    if A[0, 0] > 0.0:
        y[1::2] += w2[1:]
    return w2


def test_a_write_through_a_view_does_not_reach_a_loop_result_copied_from_that_view():
    # y is x[1:3]; w2 starts as a copy of y and the loop runs zero times. IREE 3.13 returned w2
    # with the write into y applied (a silent wrong answer; statement fuzzer, seed 101 program
    # 681) while the write went through dynamic_update_slice(x, dynamic_update_slice(x[1:3], ..))
    fn = loop_result_aliasing_a_view_then_write_through_the_view
    f = pyjitc.jit(fn)
    for n in (0, 1, 3):
        x, A = rng.random(6), rng.random((3, 3)) + 0.5
        x2, A2 = x.copy(), A.copy()
        assert_same(f(x, x[1:3], A, n), fn(x2, x2[1:3], A2, n))
        assert_same(x, x2)


def _clip_negative(b):
    b[b < 0.0] = 0.0


def array_computed_before_an_if_and_passed_through_one_branch(x, y, A):
    b1 = np.zeros((6, 5))
    for i in range(3):
        A += A
        b1.T[...] = (-2.0 * -A)
    if A[0, 0] > 0.0:
        _clip_negative(A)
    else:
        y[:] = -np.maximum(A[4], x)
    return b1


def test_an_array_computed_before_an_if_and_passed_through_a_branch_comes_back():
    # the else branch returns A (computed before the if) unchanged; IREE 3.13 gave a null buffer
    # or an out-of-range subspan at run time (statement fuzzer, seed 303 program 934)
    fn = array_computed_before_an_if_and_passed_through_one_branch
    f = pyjitc.jit(fn)
    for sign in (1.0, -1.0):
        x, y, A = rng.random(6), rng.random(6), sign * (rng.random((5, 6)) + 0.5)
        mine, theirs = (x.copy(), y.copy(), A.copy()), (x.copy(), y.copy(), A.copy())
        assert_same(f(*mine), fn(*theirs))
        assert_same(mine, theirs)


def row_copied_into_an_argument_then_updated_under_an_if(x, y, A):
    x[:] = A[3]
    half = (y * 0.5) * 1.0
    if y[0] > 0.0:
        x[1:] = x.mean()
    return half, half


def test_an_argument_row_passed_through_an_if_branch_comes_back():
    # the if's other branch returns x as the row A[3]; copying that view in the branch made IREE
    # 3.13 return a null buffer (statement fuzzer, seed 404 program 528)
    fn = row_copied_into_an_argument_then_updated_under_an_if
    f = pyjitc.jit(fn)
    for sign in (1.0, -1.0):
        x, y, A = rng.random(6), sign * (rng.random(6) + 0.5), rng.random((5, 6))
        mine, theirs = (x.copy(), y.copy(), A.copy()), (x.copy(), y.copy(), A.copy())
        assert_same(f(*mine), fn(*theirs))
        assert_same(mine, theirs)


def loop_changes_type(x):
    acc = x[:1]
    for i in range(x.shape[0]):
        acc = (acc + x[i]).astype(np.float32)
    return acc


def test_loop_carried_value_that_changes_dtype_is_unrolled_or_refused_never_wrong():
    # acc is f64 before the loop and f32 after one pass: NumPy's answer has dtype f32
    assert_same_call(pyjitc.jit(loop_changes_type), loop_changes_type, np.arange(6.0))


# ---------------------------------------------------------------- helpers, recursion, containers

def _scale(v, k=3):
    return v * k


@pyjitc.jit
def _jitted_helper(v):
    return v - 1


def uses_helpers(x):
    def inner(y):
        return _scale(y, k=2) + 1
    return inner(x) + _jitted_helper(x)


def test_helpers_nested_functions_and_other_jit_functions_are_inlined():
    x = np.arange(5.0)
    assert_same_call(pyjitc.jit(uses_helpers), uses_helpers, x)


def countdown(x, n):
    if n == 0:
        return x
    return countdown(x, n - 1)


def halving_fft(x):
    n = x.shape[0]
    if n <= 1:
        return x
    even, odd = halving_fft(x[::2]), halving_fft(x[1::2])
    t = np.exp(-2j * np.pi * np.arange(n // 2) / n) * odd
    return np.concatenate([even + t, even - t])


def doubles_until_large(x):
    if x.sum() > 10.0:
        return x
    return doubles_until_large(x * 2.0)


def test_recursion_decided_at_compile_time_is_inlined_and_matches_numpy():
    assert_same_call(pyjitc.jit(countdown), countdown, np.ones(2), 3)
    x = np.random.default_rng(3).random(16) + 0j
    assert_same(pyjitc.jit(halving_fft)(x), halving_fft(x), accumulate=True)


def memoised_fibonacci(n):
    memo = {0: 0, 1: 1}

    def f(k):
        if k not in memo:
            memo[k] = f(k - 1) + f(k - 2)
        return memo[k]
    return f(n)


def test_a_recursion_of_compile_time_values_may_go_deeper_than_one_on_run_time_values():
    # fib(50) memoised in a dict: "f calls itself more than 24 levels deep" (probe U); a recursion
    # whose arguments are all known at compile time may go 200 levels deep
    assert_same(pyjitc.jit(memoised_fibonacci)(90), memoised_fibonacci(90))


def test_recursion_whose_depth_depends_on_run_time_values_is_a_located_error():
    with pytest.raises(pyjitc.NotSupportedError, match="calls itself more than 24 levels") as e:
        pyjitc.jit(doubles_until_large)(np.ones(2))
    assert "return doubles_until_large(x * 2.0)" in str(e.value)


def adaptive_simpson(f, a, b, eps, whole, fa, fb, fm, depth):
    m = (a + b) / 2
    lm, rm = (a + m) / 2, (m + b) / 2
    flm, frm = f(lm), f(rm)
    left = (m - a) / 6 * (fa + 4 * flm + fm)
    right = (b - m) / 6 * (fm + 4 * frm + fb)
    if depth <= 0 or abs(left + right - whole) <= 15 * eps:
        return left + right + (left + right - whole) / 15
    return (adaptive_simpson(f, a, m, eps / 2, left, fa, fm, flm, depth - 1)
            + adaptive_simpson(f, m, b, eps / 2, right, fm, fb, frm, depth - 1))


def integral_of_a_square(a, b, eps, depth):
    f = lambda x: x * x + 1.0
    fa, fb, fm = f(a), f(b), f((a + b) / 2)
    return adaptive_simpson(f, a, b, eps, (b - a) / 6 * (fa + 4 * fm + fb), fa, fb, fm, depth)


def fft_if_positive(x):
    if x.real.sum() > 0:
        return halving_fft(x)
    return x


def test_recursion_under_run_time_ifs_is_compiled_up_to_a_bound_then_refused():
    # adaptive Simpson with a depth of 10 written in the source compiled for minutes (2**10 inlined
    # calls, both sides of each if; probe S): more than 32 such calls is a located refusal. A
    # recursion decided at compile time inside a run-time if is not counted
    f = pyjitc.jit(integral_of_a_square, static_argnames=("depth",))
    assert_same(f(0.0, 3.0, 1e-6, 3), integral_of_a_square(0.0, 3.0, 1e-6, 3))
    with pytest.raises(pyjitc.NotSupportedError, match="under a branch on run-time values") as e:
        f(0.0, 3.0, 1e-6, 10)
    assert "test_control_flow.py" in str(e.value) and "adaptive_simpson(f, " in str(e.value)
    x = np.random.default_rng(3).random(64) + 0j
    assert_same(pyjitc.jit(fft_if_positive)(x), fft_if_positive(x), accumulate=True)


State = collections.namedtuple("State", "pos vel")


class Stats(NamedTuple):
    mean: float
    spread: float = 0.0


def named_tuples(state, M):
    s = State(state.pos + 0.1 * state.vel, state.vel)   # made and read by name inside
    r = np.linalg.slogdet(M)                            # NumPy's named results
    q = np.linalg.qr(M)
    return s, Stats(s.pos.mean()), r, r.logabsdet * 2, q.Q @ q.R, q


def test_named_tuples_in_arguments_results_and_numpys_results_keep_their_class(tmp_path):
    state = State(np.arange(3.0), np.ones(3))
    M = np.random.default_rng(1).normal(size=(3, 3))
    jitted = pyjitc.jit(named_tuples)
    got, want = jitted(state, M), named_tuples(state, M)
    assert_same(got, want)
    assert [type(v).__name__ for v in got] == [type(v).__name__ for v in want]
    assert got[0].pos is not None and got[2].sign == want[2].sign
    path = jitted.lower(state, M).compile().save(tmp_path / "named.vmfb")   # the classes survive the file
    loaded = pyjitc.load(path)
    assert type(loaded(state, M)[5]).__name__ == "QRResult"


def simulate(state, params):
    pos, vel = state
    for _ in range(params["steps"]):
        vel = vel - params["k"] * pos
        pos = pos + 0.1 * vel
    return {"pos": pos, "energy": (pos ** 2 + vel ** 2).sum(), "pair": (pos[0], [vel[-1]])}


def nonlocal_accumulators(x):
    total, count = 0.0, 0

    def add(v):
        nonlocal total, count
        if v > 0.5:            # a run-time branch of the nested function
            total += v
            count = count + 1
            return 1
        return 0

    hits = 0
    for v in x[:4]:
        hits += add(v)
    for i in range(x.shape[0]):    # called from a run-time loop
        add(x[i] * 0.25)
    return total, count, hits


def test_nonlocal_names_rebound_by_nested_functions_are_seen_by_the_enclosing_function():
    # was refused: "`nonlocal` can't be compiled"
    f = pyjitc.jit(nonlocal_accumulators)
    for n in (6, 3000):
        assert_same_call(f, nonlocal_accumulators, rng.random(n) * 3)


def test_tuple_and_dict_arguments_and_a_nested_dict_result():
    state = (rng.standard_normal(5), np.zeros(5))
    f = pyjitc.jit(simulate)
    got = assert_same_call(f, simulate, state, {"steps": 20, "k": 0.5}, accumulate=True)
    assert set(got) == {"pos", "energy", "pair"}


SCALE = 2.5
TABLE = np.array([1.0, -1.0, 0.5])


def reads_globals(x):
    offset = 1
    add = lambda v: v + offset
    return add(x * SCALE) + TABLE


def test_globals_and_closures_are_read_as_constants():
    assert_same_call(pyjitc.jit(reads_globals), reads_globals, np.arange(3.0))


COEF = np.array([1.0, 2.0])
LUT = np.array([0.0, 1.0, 4.0])


def globals_first_read_in_loops(x, idx):
    z = np.zeros(len(x))
    for i in range(len(x) - 1):
        z[i] = COEF @ x[i:i + 2]           # a global first read inside a run-time loop
    out = np.empty(len(idx))
    for i in range(len(idx)):
        out[i] = LUT[idx[i]] * 0.5 ** i
    return z, out, LUT.sum()


def ratio_twice(x):
    a = x[0] / x[1]
    b = float(x[0]) / float(x[1]) if x[1] != 0 else -1.0
    return a, b


def test_a_branch_computing_a_value_made_before_the_if_runs():
    # IREE 3.13 folded the branch's division into the one before the if and returned a null
    # buffer for the if's result at run time ("ref is null; hal.buffer_view.create")
    f = pyjitc.jit(ratio_twice)
    for x in (np.array([-3.0, 2.0]), np.array([1.0, 0.0])):
        assert_same_call(f, ratio_twice, x)


def test_a_global_array_first_read_inside_a_run_time_loop_compiles():
    # internal KeyError in the lowering: the constant made in a dropped pass over the loop's body
    f = pyjitc.jit(globals_first_read_in_loops)
    for n in (9, 40):
        assert_same_call(f, globals_first_read_in_loops, np.arange(float(n)), np.arange(n) % 3)


def weak_scale(x, s):
    return x * s, x + s


def test_python_float_argument_is_weak_against_float32():
    x = np.arange(4, dtype=np.float32)
    got = assert_same_call(pyjitc.jit(weak_scale), weak_scale, x, 0.1)
    assert got[0].dtype == np.float32


def test_the_heat_stencil_example_matches_numpy_on_a_small_grid():
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).parent.parent / "examples" / "heat_stencil.py"
    spec = importlib.util.spec_from_file_location("heat_stencil", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    u = np.zeros((12, 12))
    u[4:8, 4:8] = 1.0
    assert_same_call(example.heat_jit, example.heat, u, 30, 0.2, accumulate=True)


def update_a_constant_array_in_a_branch(y):
    P = np.eye(6)[:5]
    if y[0] > 0.0:
        P[0] = 1.5
    b = np.zeros(6)
    return b, P


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_branch_updating_an_array_known_at_compile_time_runs(sign):
    # the copy made for the branch (an optimization_barrier) kept IREE 3.13 from copying the
    # read-only constant before writing it: "PERMISSION_DENIED; buffer allows READ" at run time
    # (statement fuzzer seed 7001 program 17)
    y = sign * np.arange(1.0, 7.0)
    got, want = pyjitc.jit(update_a_constant_array_in_a_branch)(y), update_a_constant_array_in_a_branch(y)
    assert_same(got[0], want[0])
    assert_same(got[1], want[1])


def _half_inner(b):
    w = b[1:-1]
    w *= 0.5


def constant_updated_in_a_branch_then_after_it(x, A, n):
    w = np.arange(1.0, 7.0)
    if x.sum() > 1.0:
        w += n * 0.5 * A[0]
    for _ in range(3):
        _half_inner(w)
    return w[::-1]


def strided_view_updated_from_strided_reads_in_a_loop(x, n):
    P = np.ones(x.shape)
    inner = P[::3]
    for _ in range(n):
        P[:] = x
        inner[:] = np.maximum(inner, x[::3])
    return inner


@pytest.mark.parametrize("scale", [1.0, -1.0])
def test_a_constant_passed_through_a_branch_and_updated_after_it_runs(scale):
    # statement fuzzer seed 7002 program 139: PERMISSION_DENIED (the else branch's copy of the
    # constant was its read-only buffer, written by the updates after the if)
    x, A = scale * np.arange(6.0), np.arange(36.0).reshape(6, 6)
    assert_same(pyjitc.jit(constant_updated_in_a_branch_then_after_it)(x, A, 3),
                constant_updated_in_a_branch_then_after_it(x, A, 3))


def test_a_strided_view_written_from_two_strided_reads_compiles():
    # statement fuzzer seed 7002 program 41: "LLVM Translation failed for operation:
    # builtin.unrealized_conversion_cast" (a gather reading maximum(x[::3], x[::3]))
    x = np.random.default_rng(0).random(12)
    for n in (0, 1, 2):
        assert_same(pyjitc.jit(strided_view_updated_from_strided_reads_in_a_loop)(x, n),
                    strided_view_updated_from_strided_reads_in_a_loop(x, n))


def reversed_copy_carried_by_loops_that_may_not_run(x, y, n):
    y[y < 0.0] = -0.5
    t = x[::-1] * 1.0
    for _ in range(n):
        y[::-1] = x * 2.0
        t[t < 0] = 0.0
    for _ in range(n):
        y[1:-1] = x[2:] - x[:-2]
    return t


@pytest.mark.parametrize("n", [0, 1, 3])
def test_an_array_computed_before_a_loop_that_runs_zero_times_comes_back(n):
    # statement fuzzer seed 7005 program 90: "ref is null; hal.buffer_view.create" at run time
    r = np.random.default_rng(n)
    x, y = r.random(6) - 0.5, r.random(6) - 0.5
    assert_same_call(pyjitc.jit(reversed_copy_carried_by_loops_that_may_not_run),
                     reversed_copy_carried_by_loops_that_may_not_run, x, y, n)


def fft_stages(X):
    # each stage's `even` has another shape than the last stage's: a temporary of one iteration,
    # not carried (it made the inner loop unroll: 33 s to compile at n = 256)
    n = X.shape[0]
    X = X.copy()
    size = 2
    while size <= n:
        half = size // 2
        w = np.exp(-2j * np.pi * np.arange(half) / size)
        for start in range(0, n, size):
            even = X[start:start + half].copy()
            odd = X[start + half:start + size] * w
            X[start:start + half] = even + odd
            X[start + half:start + size] = even - odd
        size *= 2
    return X


def temporaries_read_after(x, n):
    t = x * 0.0
    for i in range(n):
        t = x * i           # read after the loop: carried (the value before it where n == 0)
        u = t + 1.0         # read by the else clause: carried
    else:
        u = u * 2.0 if n else x
    k = 0
    v = x.sum()
    while k < n:
        v = x[k] * 2.0      # read by nothing outside; bound before any read
        k = k + 1
        w = v * k           # read after the loop
    return t, u, v, w if n else v


def test_temporaries_of_one_iteration_are_not_carried_and_names_read_after_the_loop_are():
    x = (np.arange(16) * 0.3) + 1j * np.arange(16)
    f = pyjitc.jit(fft_stages)
    assert_same(f(x), fft_stages(x), accumulate=True)
    text = f.lower(x).as_text()
    assert "scf.while" in text or "stablehlo.while" in text     # the stage with 8 blocks is a loop
    g = pyjitc.jit(temporaries_read_after)
    for n in (0, 1, 4):
        assert_same(g(np.arange(5.0), n), temporaries_read_after(np.arange(5.0), n))


def prefix_chosen_by_data(x, t):
    best = x[:1]
    for k in range(1, 8):
        if x[k] < t:
            best = x[:k]
    return best


def test_a_slice_whose_length_a_run_time_if_chooses_is_a_located_error_not_an_internal_one():
    with pytest.raises(pyjitc.JitError, match="'best' changes type") as e:
        pyjitc.jit(prefix_chosen_by_data)(np.arange(1.0, 9.0), 4.5)
    assert "internal" not in str(e.value) and "test_control_flow.py:" in str(e.value)


# ---------------------------------------------------------------- loops IREE failed on

def suffix_sums_by_blocks(A):
    n = A.shape[0]
    S = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            S[i, j] = A[i:, j:].sum() + A[i, j:].sum() + A[j:, i].sum()
    return S


def sor_until_converged(A, b, w, tol):
    n = A.shape[0]
    x = np.zeros(n)
    it = 0
    while it < 200:
        xo = x.copy()
        for i in range(n):
            s = A[i, :i] @ x[:i] + A[i, i + 1:] @ xo[i + 1:]
            x[i] = (1 - w) * xo[i] + w * (b[i] - s) / A[i, i]
        if np.linalg.norm(x - xo) < tol:
            break
        it += 1
    return x, it


@pytest.mark.parametrize("n", [1, 2, 3])
def test_small_sizes_of_nested_and_converging_loops_compile_and_run_as_numpy(n):
    # at n = 1 the outer loop ran one step as a run-time loop around the inner one, and
    # iree-compile crashed (SIGSEGV); at n <= 3 the SOR loop, returning its iteration count, failed
    # at run time in IREE ("indirect buffer reference slot 0 is out range"); found by a probe of
    # dense linear algebra kernels
    rng = np.random.default_rng(n)
    A = rng.random((n, n))
    assert_same(pyjitc.jit(suffix_sums_by_blocks)(A), suffix_sums_by_blocks(A), accumulate=True)
    spd = A @ A.T + n * np.eye(n)
    b = rng.random(n)
    assert_same(pyjitc.jit(sor_until_converged)(spd, b, 1.2, 1e-10), sor_until_converged(spd, b, 1.2, 1e-10),
                accumulate=True)


def closure_writes_in_run_time_loops(a, n, flag):
    b = np.zeros(5)

    def clear(lo, hi):
        while lo < hi:
            a[lo] = 0.0
            b[lo] = lo + 1.0
            lo += 1

    def mark(i):
        if flag > 0:
            b[i] = -1.0
    clear(0, n)
    mark(n)
    return a.sum(), b


def test_a_nested_function_writing_the_enclosing_arrays_in_a_run_time_loop_or_if():
    # its loop did not carry them (they are not its own variables): an internal KeyError while
    # lowering (found by a probe of algorithmic code)
    f = pyjitc.jit(closure_writes_in_run_time_loops)
    for n, flag in ((3, 1), (0, -1), (4, 1)):
        x, y = np.arange(5.0), np.arange(5.0)
        assert_same(f(x, n, flag), closure_writes_in_run_time_loops(y, n, flag))
        assert_same(x, y)


def first_or_total(a, flag):
    if flag:
        return a[0]
    return a.sum()


def at_index_if_valid(a, j):
    if j >= 0:
        return a[j]
    return 0.0


def prefix_total(a, k):
    c = 0.0
    for i in range(k):
        c += a[i]
    return c


def clear_first(a, flag):
    if flag > 0:
        a[0] = 1.0
    return a


@pytest.mark.parametrize("fn, args, raises", [
    (first_or_total, (np.zeros(0), False), False), (first_or_total, (np.zeros(0), True), True),
    (at_index_if_valid, (np.zeros(0), -1), False), (at_index_if_valid, (np.zeros(0), 0), True),
    (prefix_total, (np.zeros(0), 0), False), (prefix_total, (np.zeros(0), 1), True),
    (clear_first, (np.zeros(0), -1), False), (clear_first, (np.zeros(0), 1), True),
], ids=lambda v: getattr(v, "__name__", None) or "")
def test_an_index_out_of_bounds_in_code_that_may_not_run_raises_only_where_it_runs(fn, args, raises):
    # (of an empty array: a compile-time IndexError, or an internal error, where NumPy never ran
    # the indexing; found by a probe of algorithmic code on empty inputs)
    f = pyjitc.jit(fn)
    if raises:
        with pytest.raises(IndexError):
            fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        with pytest.raises(IndexError, match="out of bounds"):
            f(*args)
    else:
        assert_same(f(*args), fn(*args))


def gauss_jordan_with_swaps(A):
    n = A.shape[0]
    for k in range(n):
        p = n - 1 - k
        tmp = A[k].copy()
        A[k] = A[p]
        A[p] = tmp
        piv = A[k, k]
        if piv != 0:
            A[k] /= piv
            for i in range(n):
                if i != k:
                    A[i] -= A[i, k] * A[k]
    return A


def matched_brackets(s):
    n = s.shape[0]
    match = np.full(n, -1, dtype=np.int32)
    st = np.zeros(n, dtype=np.int32)
    sp = 0
    for i in range(n):
        if s[i] == 40:
            st[sp] = i
            sp += 1
        elif sp > 0:
            sp -= 1
            match[i] = st[sp]
    return match, sp


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_short_loops_holding_run_time_ifs_compile_and_run_as_numpy(n):
    # unrolled (4 steps or fewer), their copies of run-time ifs updating arrays made IREE 3.13
    # fail: "failed to solve for timepoint coverage" at n = 3, 4, and "indirect buffer reference
    # slot 0 is out range" at run time for 4 opening brackets (a probe of algorithmic code)
    A = np.random.default_rng(n).random((n, n)) + n * np.eye(n)
    mine, theirs = A.copy(), A.copy()
    assert_same(pyjitc.jit(gauss_jordan_with_swaps)(mine), gauss_jordan_with_swaps(theirs), accumulate=True)
    for s in (np.full(n, 40, np.uint8), np.frombuffer(b"(())()"[:n], np.uint8).copy()):
        assert_same(pyjitc.jit(matched_brackets)(s), matched_brackets(s))


def totient_sieve(phi):
    n = phi.shape[0] - 1
    for p in range(2, n + 1):
        if phi[p] == p:
            for m in range(p, n + 1, p):
                phi[m] -= phi[m] // p
    return phi


def by_run_time_steps(x, s):
    t = 0.0
    for i in range(len(x) - 1, -1, s):
        t = t * 0.5 + x[i]
    for i in range(0, len(x), -s):
        t += x[i]
    return t


def test_ranges_with_a_run_time_step_are_one_loop_with_pythons_count():
    # the step of an outer loop's variable unrolled the outer loop (a totient sieve at n = 200: 28 s
    # to compile; a probe of algorithmic code); a step argument was made a compile-time value
    phi = np.arange(60)
    f = pyjitc.jit(totient_sieve)
    assert_same(f(phi.copy()), totient_sieve(phi.copy()))
    assert "while" in f.lower(phi.copy()).as_text()
    g = pyjitc.jit(by_run_time_steps)
    x = np.random.default_rng(5).random(11)
    for s in (-1, -2, -3, -20):
        assert_same(g(x, s), by_run_time_steps(x, s))
    with pytest.raises(ValueError, match="must not be zero"):
        g(x, 0)
    assert g.cache_info().misses == 1


def quickselect(a, k):
    lo, hi = 0, a.shape[0] - 1
    while True:
        if lo == hi:
            return a[lo]
        p = a[hi]
        i = lo
        for j in range(lo, hi):
            if a[j] < p:
                t = a[i]
                a[i] = a[j]
                a[j] = t
                i += 1
        t = a[i]
        a[i] = a[hi]
        a[hi] = t
        if k == i:
            return a[k]
        elif k < i:
            hi = i - 1
        else:
            lo = i + 1


def test_a_while_true_loop_left_only_by_return_does_not_fall_off_the_function():
    # (refused: "returns a value on some paths and falls off its end"; a probe of algorithmic code)
    x = np.random.default_rng(8).random(31)
    f = pyjitc.jit(quickselect)
    for k in (0, 5, 30):
        mine, theirs = x.copy(), x.copy()
        assert_same(f(mine, k), quickselect(theirs, k))
        assert_same(mine, theirs)


def loss_history(X, y, lr, epochs):
    w = np.zeros(X.shape[1])
    losses = []
    steps = [0.0]
    for e in range(epochs):
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        w -= lr * X.T @ (p - y) / X.shape[0]
        losses.append(-np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12)))
        steps.append(float(e) * lr)                # a Python float
    rows = []
    for row in X[:3]:
        rows.append(row * 2)
    return w, np.array(losses), steps, np.stack(rows), len(losses)


def test_a_list_appended_once_per_pass_keeps_the_loop_one_run_time_loop():
    # list.append in a run-time loop unrolled it (a logistic regression's loss history: 100 epochs
    # compiled in 17 s); the appended values are now rows of an array the loop carries
    rng = np.random.default_rng(7)
    X, y = rng.standard_normal((60, 4)), (rng.random(60) > 0.5).astype(float)
    f = pyjitc.jit(loss_history)
    got = assert_same_call(f, loss_history, X, y, 0.1, 40)
    assert all(type(v) is float for v in got[2])
    assert f.lower(X, y, 0.1, 40).as_text("typed").count(" while(") == 1


def comprehensions_over_many_rows(V, X, C, n):
    v = -1.0                                     # the comprehension's variable does not leak
    winners = np.array([np.bincount(v, minlength=3).argmax() for v in V])
    dists = np.array([np.linalg.norm(X - c, axis=1) for c in C])
    scaled = [X[i % X.shape[0], 0] * i for i in range(n)]
    total = sum(row.sum() for row in X)
    return v, winners, dists, scaled, total


def test_comprehensions_over_many_rows_compile_their_element_once():
    # [f(v) for v in V] over 100 rows was unrolled: 29 s to compile; now one run-time loop
    rng = np.random.default_rng(5)
    V, X, C = rng.integers(0, 3, (100, 5)), rng.random((30, 3)), rng.random((20, 3))
    f = pyjitc.jit(comprehensions_over_many_rows)
    assert_same_call(f, comprehensions_over_many_rows, V, X, C, 25)
    assert f.lower(V, X, C, 25).as_text("typed").count(" while(") >= 3


def column_summaries(X):
    out = {}
    for j in range(X.shape[1]):
        col = X[:, j]
        out[j] = (np.nanmean(col), np.percentile(col, [5, 95]))
    return out


def fibonacci_table(n):
    dp = [0] * (n + 1)
    dp[1] = 1
    for i in range(2, n + 1):
        dp[i] = dp[i - 1] + dp[i - 2]
    return dp[n], dp


def test_a_python_list_or_dict_filled_by_index_in_a_loop_unrolls_the_loop():
    # refused ("changing a Python dict inside a loop ... that runs at run time") once the loop
    # had more than 4 passes (a run-time loop); list.append already unrolled it
    X = np.random.default_rng(0).random((20, 7))
    assert_same(pyjitc.jit(column_summaries)(X), column_summaries(X))
    assert_same(pyjitc.jit(fibonacci_table)(30), fibonacci_table(30))


def kmeans_by_comprehensions(X, C, iters):
    for _ in range(iters):
        lab = np.array([np.argmin(((C - x) ** 2).sum(1)) for x in X])
        C = np.array([X[lab == j].mean(0) if np.any(lab == j) else C[j] for j in range(len(C))])
    return C, lab


@pytest.mark.parametrize("n", [40, 300])
def test_comprehensions_inside_a_run_time_loop_are_loops_and_np_array_takes_their_rows_whole(n):
    # inside a run-time loop the comprehension was unrolled, and np.array of its items stacked
    # them one select each: at n = 1000 ten minutes to compile, then IREE's "binding count 40 > 32"
    rng = np.random.default_rng(n)
    X, C = rng.random((n, 2)), rng.random((3, 2))
    f = pyjitc.jit(kmeans_by_comprehensions)
    assert_same(f(X, C, 4), kmeans_by_comprehensions(X, C, 4))
    text = f.lower(X, C, 4).as_text("typed")
    assert text.count(" while(") == 2 and len(text.splitlines()) < 400      # the same at any n


def rows_changed_after_a_comprehension(X):
    rows = [x * 2 for x in X]
    rows[3][1] = -7.0           # a row written in place: np.array must see it
    return np.array(rows)


def test_np_array_of_comprehension_rows_written_after_the_loop_sees_the_writes():
    X = np.arange(60.0).reshape(20, 3)
    assert_same(pyjitc.jit(rows_changed_after_a_comprehension)(X), rows_changed_after_a_comprehension(X))


def find_root(parent, lab):
    x = lab[0]                  # int32, then parent's int64
    while parent[x] != x:
        x = parent[x]
    return x


def test_a_name_changing_type_in_a_loop_is_told_in_terms_of_the_loop():
    # it said "on one path, ... on the other", an if's words
    with pytest.raises(pyjitc.JitError, match=r"'x' changes type: i32\[\] before the loop or an earlier pass, "
                                              r"i64\[\] after a pass through it") as e:
        pyjitc.jit(find_root)(np.array([0, 0, 1, 2]), np.array([3], np.int32))
    assert "test_control_flow.py" in str(e.value)


def gillespie(x0, stoich, k, U1, U2, tmax):
    x = x0.copy(); t = 0.0; n = len(U1)
    X = np.zeros((n + 1, len(x0)), dtype=x0.dtype); X[0] = x; m = 0
    for i in range(n):
        a = k * np.array([x[0] * x[1], x[1], 1.0]); a0 = a.sum()
        t += -np.log(U1[i]) / a0
        if t > tmax:
            break
        r = np.searchsorted(np.cumsum(a), U2[i] * a0, side="right")
        x += stoich[r]; m += 1; X[m] = x
    return X[:m + 1]


def lu_pivot_solve(A, b):
    n = A.shape[0]
    U = A.astype(float).copy(); L = np.eye(n); P = np.arange(n)
    for k in range(n - 1):
        p = k + np.argmax(np.abs(U[k:, k]))
        if U[p, k] == 0:
            raise ValueError("singular")
        if p != k:
            P[[k, p]] = P[[p, k]]
            L[[k, p], :k] = L[[p, k], :k]
        U[k + 1:, k:] -= L[k + 1:, k, None] * U[k, k:]
    y = np.zeros(n); pb = b[P]
    for i in range(n):
        y[i] = pb[i] - L[i, :i] @ y[:i]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (y[i] - U[i, i + 1:] @ x[i + 1:]) / U[i, i]
    return x


def test_host_loops_whose_carried_values_iree_packs_in_one_buffer_run():
    # IREE 3.13 passed one buffer twice to the loop's next pass and its bytecode moved it into
    # the first block argument, leaving null in the second: "indirect buffer reference slot 0 is
    # out range ... copy_buffer" at run time (backend/vm_refs.py; probes of valid programs)
    rng = np.random.default_rng(0)
    args = (np.array([50, 5]), np.array([[-1, 1], [0, -1], [1, 0]]), np.array([0.01, 0.5, 2.0]),
            rng.random(60), rng.random(60))
    f = pyjitc.jit(gillespie)
    for tmax in (20.0, 0.05):           # many steps, then one
        assert_same_call(f, gillespie, *args, tmax)
    A, b = rng.normal(size=(4, 4)), rng.normal(size=4)
    assert_same_call(pyjitc.jit(lu_pivot_solve), lu_pivot_solve, A, b)


def first_above_half(x):
    for i in range(len(x)):
        if x[i] > 0.5:
            return x[i], i
    raise RuntimeError("none above one half")


def test_a_tuple_returned_on_one_path_beside_a_raise_on_the_other_is_pythons():
    # merging the tuple with the path that raised took the length of a placeholder: an internal
    # TypeError ("object of type 'object' has no len()"; a probe of scipy-like root finders)
    f = pyjitc.jit(first_above_half)
    assert_same(f(np.linspace(0, 1, 10)), first_above_half(np.linspace(0, 1, 10)))
    with pytest.raises(RuntimeError, match="none above one half"):
        f(np.zeros(10))


def polynomial_features(x, degree):
    cols = [x]
    if degree >= 2:
        cols.append(x * x)
    return np.stack(cols)


def maybe_float(x, flag=True):
    if flag:
        return x * 1.0
    return x


def test_a_branch_on_a_scalar_argument_that_only_compile_time_code_can_take_makes_it_static():
    # a list appended to, or a return of another dtype, under `if` on a Python argument was
    # refused ("changing a Python list inside a loop or branch", a MergeError): the argument
    # becomes static instead, as for a shape or a loop bound (a probe of hand-written ML code)
    x = np.arange(3)
    f, g = pyjitc.jit(polynomial_features), pyjitc.jit(maybe_float)
    for degree in (1, 3):
        assert_same(f(x, degree), polynomial_features(x, degree))
    assert_same(g(x), maybe_float(x))
    assert_same(g(x, False), maybe_float(x, False))
    assert (f.cache_info().misses, g.cache_info().misses) == (2, 2)


def none_or_array(x):
    if x[0] > 0.5:
        return None, 1.0
    return x, 0.0


def test_none_in_a_returned_tuple_on_one_run_time_path_is_a_located_error():
    # the MergeError had no file:line (a bare `return None` had one; a simplex solver's
    # `return None, np.inf`, a probe of optimisation code)
    with pytest.raises(pyjitc.JitError, match=r"test_control_flow.py:\d+:\d+: .*NoneType") as e:
        pyjitc.jit(none_or_array)(np.array([0.7, 0.1]))
    assert "return None, 1.0" in str(e.value)


def bisect_after_a_check(a, b):
    if a * b > 0:
        raise ValueError("no bracket")
    for _ in range(200):
        c = 0.5 * (a + b)
        if abs(c) < 1e-12:
            return c
        a = c
    return a


def test_a_loop_with_a_return_after_a_run_time_raise_stays_one_loop():
    # the placeholder of the path that raised was carried as the return value, could not be, and
    # the loop was unrolled: 200 steps compiled in 40 s (an Illinois root finder, a probe)
    f = pyjitc.jit(bisect_after_a_check)
    for a, b in ((-2.0, 3.0), (-1.0, 1.0)):
        assert_same(f(a, b), bisect_after_a_check(a, b))
    with pytest.raises(ValueError, match="no bracket"):
        f(2.0, 3.0)
    assert f.lower(-2.0, 3.0).as_text("typed").count(" while(") == 1


def halve_until(y, T):
    t = 0.0
    while t < T:
        def step(v):
            return v * 0.5
        y = step(y)
        if y[0] < 0.3:
            t += 1.0
    return y


def test_a_function_defined_in_a_run_time_loop_is_that_passs_own():
    # a `def` in the body was carried from pass to pass and refused ("'step' holds a
    # LocalFunction, which can't change at run time"; an adaptive RK step, a probe of ODE code)
    assert_same(pyjitc.jit(halve_until)(np.ones(3), 3.0), halve_until(np.ones(3), 3.0))


def back_substitution(U, y):
    n = y.size
    x = np.zeros(n)
    for i in reversed(range(n)):
        x[i] = (y[i] - U[i, i + 1:] @ x[i + 1:]) / U[i, i]
    return x


def reversed_ranges(x, a, b, k):
    t = 0
    for i in reversed(range(a, b)):
        t = t * 3 + i
    s = 0
    for i in reversed(range(a, b, k)):
        s = s * 5 + i
    for i in reversed(range(x.size)):
        x[i] += x[i + 1] if i + 1 < x.size else 0.0
    return t, s, x


def test_a_loop_over_a_reversed_range_is_one_run_time_loop_and_numpys():
    # reversed(range(n)) was a Python iterator, unrolled: back substitution at n = 120 compiled for
    # 31 s and ran 3.3x NumPy's time (probe AK); now the range backwards
    for n in (8, 40):
        U = np.triu(np.random.default_rng(n).random((n, n))) + np.eye(n)
        y = np.arange(1.0, n + 1)
        assert_same(pyjitc.jit(back_substitution)(U, y), back_substitution(U, y))
    small = pyjitc.jit(back_substitution).lower(np.eye(8), np.ones(8)).as_text()
    large = pyjitc.jit(back_substitution).lower(np.eye(200), np.ones(200)).as_text()
    assert len(large) < 1.2 * len(small)
    f = pyjitc.jit(reversed_ranges, static_argnames="k")
    for a, b, k in ((0, 10, 3), (10, 0, -3), (5, 5, 2), (7, 1, -2), (3, 20, 4), (-4, 6, 1)):
        assert_same(f(np.arange(6.0), a, b, k), reversed_ranges(np.arange(6.0), a, b, k))


def squares_of_the_positive(x):
    return [v * v for v in x if v > 0]


def positions_above(x, t):
    return np.array([i for i in range(x.shape[0]) if x[i] > t])


def between(x):
    out = [v for v in x if v > 0.2 if v < 0.8]
    return len(out), np.array(out)


def even_positions(x):
    return [x[i] for i in range(6) if i % 2 == 0], sum(x[i] for i in range(40) if i % 3 == 0)


@pytest.mark.parametrize("fn, args", [
    (squares_of_the_positive, (np.array([1.0, -2.0, 3.0]),)),
    (squares_of_the_positive, (np.random.default_rng(21).standard_normal(30),)),
    (squares_of_the_positive, (-np.ones(4),)),
    (positions_above, (np.random.default_rng(22).random(25), 0.5)),
    (between, (np.random.default_rng(23).random(20),)),
    (even_positions, (np.random.default_rng(24).random(40),)),
])
def test_a_comprehension_filtered_on_array_values_is_cpythons_list(fn, args):
    # `[v * v for v in x if v > 0]` was refused ("this condition on array values must be known at
    # compile time here", probe AL) while the same for loop with an append compiled; conditions
    # known at compile time still make the list while compiling
    assert_same(pyjitc.jit(fn)(*args), fn(*args))


def rows_have_no_repeats(b):
    ok = True
    for i in range(b.shape[0]):
        seen = np.zeros(10, dtype=bool)
        for j in range(b.shape[1]):
            if seen[b[i, j]]:
                ok = False
            seen[b[i, j]] = True
    return ok


def a_line_is_won(b):
    for line in [b[0], b[:, 0], np.diag(b), b.ravel()[[2, 4, 6]]]:
        if line[0] != 0 and (line == line[0]).all():
            return 1
    return 0


@pytest.mark.parametrize("fn, b", [
    (rows_have_no_repeats, np.array([[1, 2, 3, 1], [4, 5, 6, 7]])),
    (rows_have_no_repeats, np.array([[1, 2, 3, 0], [4, 5, 6, 7]], dtype=np.int32)),
    (a_line_is_won, np.array([[1, -1, 0], [-1, 1, 0], [0, -1, 1]])),
    (a_line_is_won, np.array([[1, -1, 0], [-1, 0, 1], [0, 1, -1]])),
    (a_line_is_won, np.array([[0, -1, 1], [-1, 1, 0], [1, 0, -1]], dtype=np.int8)),
])
def test_puzzle_checks_with_flags_and_line_lists_compile_and_are_numpys(fn, b):
    # a bool flag set in a loop around a loop: "the StableHLO module does not verify" (a u8
    # multiply); a loop over [row, np.diag(b), ...] with an early return: IREE failed to compile
    # ("'arith.cmpi' op requires all operands to have the same type"): probe AM
    assert_same(pyjitc.jit(fn)(b), fn(b))


def _sift_down(a, start, end):
    root = start
    while True:
        child = 2 * root + 1
        if child > end:
            return
        if child + 1 <= end and a[child] < a[child + 1]:
            child += 1
        if a[root] >= a[child]:
            return
        a[root], a[child] = a[child], a[root]
        root = child


def heap_sort(a):
    n = len(a)
    for start in range((n - 2) // 2, -1, -1):
        _sift_down(a, start, n - 1)
    for end in range(n - 1, 0, -1):
        a[0], a[end] = a[end], a[0]
        _sift_down(a, 0, end - 1)


def double_until_negative(a):
    for i in range(len(a)):
        if a[i] < 0:
            return None
        a[i] *= 2


def test_a_bare_return_on_some_paths_and_falling_off_on_others_both_return_none():
    # (refused: "returns a value on some paths and falls off its end", though every path returns
    # None; a heap sort's sift-down helper, probe AX)
    x = np.random.default_rng(9).random(40)
    assert_same_call(pyjitc.jit(heap_sort), heap_sort, x)
    assert_same_call(pyjitc.jit(double_until_negative), double_until_negative, np.array([1.0, 2.0, -1.0, 3.0]))
