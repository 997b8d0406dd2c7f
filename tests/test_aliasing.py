"""Aliasing against NumPy (issue 14): writes through views of arrays the function created itself,
helpers writing into the caller's local arrays, arguments that alias each other, and results that
are one array. Each test runs NumPy and pyjitc on identically built arguments (the same aliasing
on both sides) and compares the result and every argument array afterwards.
tests/fuzz_statements.py generates random programs of this kind."""
import numpy as np
import pytest

import pyjitc
from tests.reference import assert_same, assert_same_call


def same_answer(fn, make_args, *, jitted=None):
    """Run fn by NumPy and by pyjitc on arguments made twice by make_args() -> (owners, args);
    compare the results and every owner array afterwards. Returns (NumPy's, pyjitc's) results."""
    np_owners, np_args = make_args()
    jit_owners, jit_args = make_args()
    want = fn(*np_args)
    got = (jitted or JIT[fn.__name__])(*jit_args)
    assert_same(got, want, accumulate=True)
    for k in np_owners:
        assert_same(jit_owners[k], np_owners[k], accumulate=True, path=f"argument array {k} after the call")
    return want, got


def plain(*arrays):
    """Independent arguments: each array its own owner."""
    def make():
        args = [a.copy() if isinstance(a, np.ndarray) else a for a in arrays]
        return {f"argument {i}": a for i, a in enumerate(args) if isinstance(a, np.ndarray)}, args
    return make


# ------------------------------------------------------------------------ the programs

def interior_of_padded(x):
    U = np.zeros((x.shape[0] + 2, x.shape[1] + 2))
    u = U[1:-1, 1:-1]
    u[:] = 1.0
    u += x
    return U


def fill(b, u):
    b[1:-1] = u[2:] - u[:-2]


def bump(b):
    b += 1.0


def helpers_write_into_locals(u):
    t = np.zeros(u.shape); fill(t, u)
    c = np.ones(u.shape); bump(c)
    return t, c


def bump_first_sum_second(a, b):
    a += 1.0
    return b.sum()      # f(x, x): NumPy 15.0 for x = np.arange(5.0)


def write_view_sum_base(a, v):
    v[:] = 7.0
    return a.sum()      # g(y, y[1:3]): NumPy 17.0 for y = np.arange(4.0)


def same_array_twice(a):
    c = a * 2
    return c, c         # NumPy returns the same object twice


# ------------------------------------------------------------------------ the same patterns in loops, branches, containers, closures

def two_interior_views_updated_every_step(x, n):
    U = np.zeros((x.shape[0] + 2, x.shape[1] + 2))
    V = np.ones((x.shape[0] + 2, x.shape[1] + 2))
    u, v = U[1:-1, 1:-1], V[1:-1, 1:-1]
    for i in range(n):
        u += 0.5 * v + x
        v -= 0.25 * u
    return U, V


def time_loop_of_helpers_writing_locals(u, n):
    b = np.zeros(u.shape)
    p = np.zeros(u.shape)
    for i in range(n):
        fill(b, u)
        bump(p)
        p += b
    return b, p


def helper_writes_local_in_a_branch(x):
    t = np.zeros(x.shape)
    if x.sum() > 0:
        bump(t)
    else:
        t[::2] = -1.0
    w = t[1:]
    if x[0] > 0:
        w += x[:-1]
    return t


def local_arrays_through_a_tuple(x):
    t = np.zeros(x.shape)
    c = np.ones(x.shape)
    pair = (t, c)
    fill(pair[0], x)
    pair[1][1:] = pair[1][1:] + x[:-1]      # (pair[1][1:] += v is refused: an item's item updated in place)
    return t, c


def pair_add(p):
    p[0][...] = p[0] + p[1]


def local_arrays_through_a_list_to_a_helper(x):
    lst = [np.zeros(x.shape), x.copy()]
    pair_add(lst)
    return lst[0], lst


def closure_writes_a_captured_local(x, n):
    acc = np.zeros(x.shape)

    def add():
        acc[...] = acc + x

    for i in range(n):
        add()
    return acc


def nested_helper_writes_a_view_of_a_local(x):
    def half(b):
        b *= 0.5

    t = x.copy()
    half(t[1:])
    return t


def views_of_every_creation_function(x):
    E = np.eye(4)
    d = E.T
    d[0] = 5.0                       # E[:, 0]
    r = np.arange(6.0)
    w = r[::-1]
    w[:2] = 9.0                      # r[4:]
    c = x.copy()
    cv = c.reshape(2, 3)
    cv[1] = 0.0                      # c[3:]
    a = np.array(x)
    a.ravel()[:2] = 7.0
    f = np.full((3, 4), 2.0)
    f[1] = 0.0
    col = f[:, -1]
    col[:] = -1.0
    e = np.empty(6)
    e[:] = x
    ev = e[1::2]
    ev *= 10.0
    o = np.ones(6)
    o[o > 0] = 3.0
    return E, r, c, a, f, e, o


def view_of_arange_astype(n):
    r = np.arange(6).astype(float)
    v = r[1:-1]
    v += n
    return r


def stencil_into_a_fresh_array(B):
    A = np.zeros(B.shape)
    A[1:-1] = B[2:] - B[:-2]
    inner = A[1:-1]
    inner *= 0.5
    return A


def base_and_view_returned(x):
    U = np.zeros(x.shape[0] + 2)
    u = U[1:-1]
    u[:] = x
    return U, u


def add_second_into_first(a, b):
    a += b
    return a


def write_row_read_matrix(A, r):
    r[:] = 0.0
    return A.sum(axis=1)


FUNCTIONS = [interior_of_padded, helpers_write_into_locals, bump_first_sum_second, write_view_sum_base,
             same_array_twice, two_interior_views_updated_every_step, time_loop_of_helpers_writing_locals,
             helper_writes_local_in_a_branch, local_arrays_through_a_tuple, local_arrays_through_a_list_to_a_helper,
             closure_writes_a_captured_local, nested_helper_writes_a_view_of_a_local, views_of_every_creation_function,
             view_of_arange_astype, stencil_into_a_fresh_array, base_and_view_returned, add_second_into_first,
             write_row_read_matrix]
JIT = {f.__name__: pyjitc.jit(f) for f in FUNCTIONS}      # shared by the tests: each compiles once per signature

X23 = np.array([[0.5, -1.0, 2.0], [3.0, 0.25, -2.5]])
X6 = np.array([1.0, -2.0, 0.5, 4.0, -0.75, 2.0])


# ------------------------------------------------------------------------ tests

def test_writes_through_an_interior_view_reach_the_zeros_it_views():
    want, got = same_answer(interior_of_padded, plain(X23))
    assert got[1:-1, 1:-1].min() != 0.0


def test_helpers_writing_into_their_parameters_update_the_callers_local_arrays():
    same_answer(helpers_write_into_locals, plain(np.arange(5.0) ** 2))


def test_the_same_array_passed_twice_sees_its_own_in_place_update():
    def make():
        x = np.arange(5.0)
        return {"x": x}, (x, x)
    want, got = same_answer(bump_first_sum_second, make)
    assert want == 15.0 and got == 15.0


def test_a_write_through_a_view_argument_shows_in_the_base_argument():
    def make():
        y = np.arange(4.0)
        return {"y": y}, (y, y[1:3])
    want, got = same_answer(write_view_sum_base, make)
    assert want == 17.0 and got == 17.0


def test_returning_one_array_twice_returns_one_array():
    want, got = same_answer(same_array_twice, plain(np.arange(3.0)))
    assert want[0] is want[1]
    assert np.shares_memory(got[0], got[1]), "NumPy returns the same array twice; a write to one shows in the other"


def test_two_interior_views_updated_with_iadd_every_step_of_a_run_time_loop():
    for n in (0, 1, 4):
        same_answer(two_interior_views_updated_every_step, plain(X23, n))


def test_a_time_loop_calling_helpers_that_write_into_local_arrays():
    for n in (0, 1, 3):
        same_answer(time_loop_of_helpers_writing_locals, plain(X6, n))


@pytest.mark.parametrize("x", [X6, -X6], ids=["positive-sum", "negative-sum"])
def test_helpers_and_views_writing_into_a_local_in_run_time_branches(x):
    same_answer(helper_writes_local_in_a_branch, plain(x))


def test_local_arrays_written_through_a_tuple_holding_them():
    same_answer(local_arrays_through_a_tuple, plain(X6))


def test_a_helper_writing_into_a_list_item_updates_the_local_array_and_the_list():
    want, got = same_answer(local_arrays_through_a_list_to_a_helper, plain(X6))
    assert np.shares_memory(got[0], got[1][0])


def test_a_closure_writing_into_a_captured_local_array_called_in_a_loop():
    for n in (0, 2):
        same_answer(closure_writes_a_captured_local, plain(X6, n))


def test_a_nested_helper_writing_into_a_view_of_a_local_copy():
    same_answer(nested_helper_writes_a_view_of_a_local, plain(X6))


def test_writes_through_views_of_eye_arange_copy_array_full_empty_ones():
    same_answer(views_of_every_creation_function, plain(X6))


def test_writes_through_a_view_of_arange_astype():
    same_answer(view_of_arange_astype, plain(2))


def test_a_stencil_written_into_a_fresh_array_then_scaled_through_its_interior_view():
    same_answer(stencil_into_a_fresh_array, plain(X6 ** 2))


def test_returning_the_base_and_its_view_keeps_them_one_memory():
    want, got = same_answer(base_and_view_returned, plain(X6))
    assert np.shares_memory(got[0], got[1]), "NumPy's u is a view of U"


def test_partially_overlapping_arguments_are_refused_and_left_unchanged():
    x = X6.copy()
    with pytest.raises(pyjitc.ArgumentError, match="share memory"):
        JIT["add_second_into_first"](x[:3], x[1:4])
    assert_same(x, X6)


@pytest.mark.parametrize("second", ["same", "reversed", "every-other"])
def test_an_in_place_add_of_an_aliased_argument_into_another(second):
    def make():
        x = X6.copy()
        b = {"same": x, "reversed": x[::-1], "every-other": x[::2], "overlapping-slice": x[1:4]}[second]
        a = {"same": x, "reversed": x, "every-other": x[1::2], "overlapping-slice": x[:3]}[second]
        return {"x": x}, (a, b)
    same_answer(add_second_into_first, make)


def test_zeroing_a_row_argument_shows_in_the_matrix_argument_it_belongs_to():
    def make():
        A = np.arange(12.0).reshape(3, 4)
        return {"A": A}, (A, A[1])
    same_answer(write_row_read_matrix, make)


def test_bump_then_sum_with_the_second_argument_every_other_item_of_the_first():
    def make():
        x = np.arange(5.0)
        return {"x": x}, (x, x[::2])
    want, got = same_answer(bump_first_sum_second, make)
    assert want == 9.0


def fill_second_sum_first(x, y):
    y[:] = 1.5
    return x.sum()


def fill_reversed_view_sum(n):
    z = np.zeros(6) + n
    r = z[::-1]
    r[:] = 1.5
    return z.sum(), z[[5, 0, 2]].sum()


@pytest.mark.parametrize("second", ["reversed", "every-other"])
def test_a_constant_written_through_a_reversed_or_strided_alias_is_summed_right(second):
    # IREE 3.13 summed a reversed or gathered splat (the 1.5 written back through x[::-1]) as
    # 3.0 instead of 9.0, silently; found by the statement fuzzer
    def make():
        x = np.arange(6.0)
        return {"x": x}, (x, x[::-1] if second == "reversed" else x[::2])
    same_answer(fill_second_sum_first, make, jitted=pyjitc.jit(fill_second_sum_first))
    assert_same(pyjitc.jit(fill_reversed_view_sum)(2.0), fill_reversed_view_sum(2.0))


def _difference_into(b, u):
    b[1:-1] = u[2:] - u[:-2]


def difference_of_a_transpose_into_the_same_transpose(A):
    b = np.copy(A[:, ::-1])
    u = b.T
    _difference_into(u, b.T)
    return u, b


def test_a_stencil_reading_a_second_transpose_of_the_array_it_writes():
    # u and the helper's `u` are two transposes of b: equal computations, which IREE 3.13 merged
    # and then updated in place while still reading rows from it (a silent wrong answer;
    # statement fuzzer, seed 303 program 72)
    fn = difference_of_a_transpose_into_the_same_transpose
    A = np.arange(20.0).reshape(5, 4) ** 2
    assert_same(pyjitc.jit(fn)(A.copy()), fn(A.copy()))


def swaps_names_with_an_argument(a, steps):
    b = np.empty_like(a)
    for _ in range(steps):
        b[1:-1] = 0.5 * (a[:-2] + a[2:])
        b[0] = a[0]
        b[-1] = a[-1]
        a, b = b, a
    return a


def swaps_two_local_arrays(x, steps):
    return swaps_names_with_an_argument(x.copy(), steps)   # (inlined: its `a` is a local copy here)


@pytest.mark.parametrize("steps", [0, 1, 2, 3, 6])
def test_a_loop_swapping_names_with_an_argument_writes_the_argument_as_numpy_does(steps):
    # `a, b = b, a` in a run-time loop: which array `a` names depends on the count; traced once,
    # the writes through `b` on even passes never reached the caller's array (silent wrong answer)
    x = np.random.default_rng(steps).random(9)
    mine, theirs = x.copy(), x.copy()
    got, want = pyjitc.jit(swaps_names_with_an_argument)(mine, steps), swaps_names_with_an_argument(theirs, steps)
    assert_same(got, want)
    assert_same(mine, theirs)
    assert (got is mine) == (want is theirs)


def test_a_loop_swapping_two_local_arrays_stays_one_run_time_loop():
    f = pyjitc.jit(swaps_two_local_arrays)
    x = np.random.default_rng(0).random(9)
    for steps in (0, 1, 4, 7):
        assert_same(f(x, steps), swaps_two_local_arrays(x, steps))
    assert f.cache_info().currsize == 1   # one executable for every step count


def newton_keeps_the_previous_iterate(x0, tol):
    x = x0.copy()
    x_old = x0 + 1.0
    while np.max(np.abs(x - x_old)) > tol:
        x_old = x
        x = x - (x * x - 2.0) / (2.0 * x)
    return x, x_old


def test_a_name_rebound_to_the_previous_array_without_writes_stays_a_run_time_loop():
    f = pyjitc.jit(newton_keeps_the_previous_iterate)
    for x0 in (np.array([1.0, 3.0]), np.array([10.0, 0.5, 2.0])):
        got, want = f(x0, 1e-12), newton_keeps_the_previous_iterate(x0, 1e-12)
        assert_same(got[0], want[0])
        assert_same(got[1], want[1])


def copy_before_a_loop_that_runs_zero_times(A, n):
    w = A * 1.0
    U = w.copy()
    for _ in range(n):
        w[:] = w[::-1]
    w[:, 1:-1] = 2.0 * A[:, 1:-1]
    return w, U


def argument_copied_and_carried_then_written_through_a_view(y, A, n):
    P = np.copy(A)
    for _ in range(n):
        A += 1.0
        P[:-1, 1:] -= A[:-1, 1:]
    y[0] = y[-1]
    return P


@pytest.mark.parametrize("n", [0, 1, 2])
def test_a_copy_made_before_a_loop_keeps_its_values_when_the_loop_runs_zero_times(n):
    # statement fuzzer seed 7003 program 500: with n = 0 IREE wrote w's later update into U's
    # buffer (a silent wrong answer); seed 7002 program 326: "ref is null" at run time
    A = np.random.default_rng(n).random((5, 5))
    for g, w in zip(pyjitc.jit(copy_before_a_loop_that_runs_zero_times)(A, n), copy_before_a_loop_that_runs_zero_times(A, n)):
        assert_same(g, w)
    mine, theirs = np.arange(36.0).reshape(6, 6), np.arange(36.0).reshape(6, 6)
    got = pyjitc.jit(argument_copied_and_carried_then_written_through_a_view)(mine[:, 2], mine, n)
    want = argument_copied_and_carried_then_written_through_a_view(theirs[:, 2], theirs, n)
    assert_same(got, want)
    assert_same(mine, theirs)


def overlapping_views_assignments(y, x):
    P = y.copy()
    u = P[::2]
    u[:] = P[:3]           # strides differ: NumPy copies element by element, reading earlier writes
    Q = y.copy()
    Q[1:] = Q[:-1]         # equal strides: memmove, every source element read before it is written
    R = y.copy()
    R[::-1][:3] = R[1:4]   # opposite strides: NumPy copies the source first
    if np.max(x) > 3.0:
        w = y.copy()
        v = w[::2]
        v[:] = w[:3]
    else:
        w = y * 2.0
    return P, Q, R, w


@pytest.mark.parametrize("scale", [1.0, 10.0])
def test_assigning_a_view_to_an_overlapping_view_gives_numpys_result(scale):
    # statement fuzzer seed 7005 program 1175: u[:] = P[:3] with u = P[::2] wrote the buffered
    # result, where NumPy's copy order reads elements it already overwrote
    y, x = np.arange(6.0), np.ones(6) * scale
    for g, w in zip(pyjitc.jit(overlapping_views_assignments)(y, x), overlapping_views_assignments(y, x)):
        assert_same(g, w)


def copy_then_branch_update_through_the_same_array_twice(x, y, A):
    y[1:-1] *= 0.5
    w = x.copy()
    if np.max(A) < 3.0:
        y[2:5] = -1.0
    return w


@pytest.mark.parametrize("scale", [1.0, 5.0])
def test_a_copy_kept_across_a_branch_updating_the_same_argument_passed_twice(scale):
    # statement fuzzer seed 7005 programs 1920 and 98: "ref is null" at run time, and the copy
    # coming back with the branch's write (a silent wrong answer)
    mine, theirs = np.arange(8.0), np.arange(8.0)
    A = np.ones((3, 3)) * scale
    got = pyjitc.jit(copy_then_branch_update_through_the_same_array_twice)(mine, mine, A)
    want = copy_then_branch_update_through_the_same_array_twice(theirs, theirs, A)
    assert_same(got, want)
    assert_same(mine, theirs)


def copy_by_arithmetic_then_update_the_argument(x, A):
    b = x * 1.0
    x[1:-1] = A[-3][2:] - A[-3][:-2]
    return b, x.sum()


def test_a_copy_made_by_arithmetic_keeps_the_argument_values_before_its_update():
    # statement fuzzer seed 7006 program 1140: IREE folded x * 1.0 into x and updated x's buffer in
    # place, so b came back with the write (a silent wrong answer)
    r = np.random.default_rng(0)
    mine, A = r.random(6), r.random((6, 6))
    theirs = mine.copy()
    got = pyjitc.jit(copy_by_arithmetic_then_update_the_argument)(mine, A)
    want = copy_by_arithmetic_then_update_the_argument(theirs, A)
    assert_same(got[0], want[0])
    assert_same(got[1], want[1])
    assert_same(mine, theirs)


def argument_written_then_name_rebound(u, steps):
    for i in range(steps):
        u[i % u.shape[0]] = 5.0      # the first pass writes into the argument, later ones into new arrays
        u = u * 0.5 + 1.0
    return u


def local_seen_elsewhere_written_then_rebound(x, steps):
    u = x * 1.0
    first = u                        # another name for the array the loop starts from
    for i in range(steps):
        u[0] += 1.0
        u = u + 0.25
    return u, first


@pytest.mark.parametrize("steps", [0, 1, 3])
@pytest.mark.parametrize("fn", [argument_written_then_name_rebound, local_seen_elsewhere_written_then_rebound])
def test_a_loop_writing_the_array_it_started_from_then_rebinding_the_name_writes_where_numpy_does(fn, steps):
    # a silent wrong answer found while adding native loops over arrays computed anew (the
    # argument's first-pass write was lost): the loop is unrolled, as for a swap of names
    same_answer(fn, plain(np.arange(6.0), steps), jitted=pyjitc.jit(fn))


def argument_rebound_in_a_loop_then_written(x, y, n):
    for i in range(n):
        y = np.where(y > 0.0, y * 0.5, y + 3.0)     # y: the argument only if the loop ran zero times
    y[y < 0.0] = -0.5
    v = y[1:]
    v += 1.0
    return x.sum()


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_name_rebound_by_a_loop_then_written_writes_into_the_argument_only_if_the_loop_did_not_run(n):
    # statement fuzzer seed 9001 program 18 (a silent wrong answer, also in the previous stop's
    # code): the write after the loop never reached the argument
    same_answer(argument_rebound_in_a_loop_then_written, plain(np.arange(3.0), np.array([-1.0, 2.0, -3.0]), n),
                jitted=pyjitc.jit(argument_rebound_in_a_loop_then_written))


def argument_or_new_array_by_branch_then_written(x, y):
    if x.sum() > 0:
        y = y * 2.0          # y: the argument only where the branch was not taken
    y[0] = -7.0
    return x.sum()


def one_of_two_arguments_by_branch_then_written(x, y):
    v = y
    if x[0] > 0:
        v = x
    v[1] = 9.0
    return y.sum()


def argument_or_new_array_by_scalar_branch_then_written(y, n):
    if n > 0:
        y = y * 2.0
    y[0] = -7.0
    return y.sum()


@pytest.mark.parametrize("fn", [argument_or_new_array_by_branch_then_written, one_of_two_arguments_by_branch_then_written])
def test_a_write_through_a_name_whose_array_depends_on_a_run_time_branch_is_a_located_error(fn):
    # found next to statement fuzzer seed 9001 program 18: the write was lost (a silent wrong
    # answer, also in the previous stop's code); the branch can't be decided while compiling
    with pytest.raises(pyjitc.JitError, match="depending on which way an `if`") as info:
        pyjitc.jit(fn)(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0]))
    assert "test_aliasing.py" in str(info.value)


@pytest.mark.parametrize("n", [0, 2])
def test_a_write_through_a_name_whose_array_depends_on_a_scalar_branch_is_numpys(n):
    same_answer(argument_or_new_array_by_scalar_branch_then_written, plain(np.array([1.0, 2.0, 3.0]), n),
                jitted=pyjitc.jit(argument_or_new_array_by_scalar_branch_then_written))


def argument_rebound_by_a_while_then_written(y):
    k = 0
    while y.sum() < 10.0 and k < 5:
        y = y + 1.0          # y: the argument only if the loop ran zero times
        k += 1
    y[0] = 0.0
    return k


def test_a_write_through_a_name_a_data_dependent_loop_rebinds_is_a_located_error():
    with pytest.raises(pyjitc.JitError, match="only if the loop ran zero times"):
        pyjitc.jit(argument_rebound_by_a_while_then_written)(np.array([1.0, 2.0, 3.0]))


def array_written_on_one_path_and_rebound_on_the_other(y, A):
    b1 = np.array(A[::-1])
    if y[0] > 0.0:
        b1 = np.floor(b1) - 0.25      # b1: a new array on this path
    else:
        b1[A < 1.0] = 1.0             # b1: the same array, written, on this one
    return b1


@pytest.mark.parametrize("first", [-2.0, 2.0])
def test_a_name_rebound_on_one_path_and_written_on_the_other_has_the_written_contents(first):
    # statement fuzzer seed 9004 program 1161 (a silent wrong answer, also in the previous stop's
    # code): the written path yielded the array as it was before the if
    A = np.round(np.random.default_rng(1161).standard_normal((5, 6)) * 3, 2)
    same_answer(array_written_on_one_path_and_rebound_on_the_other, plain(np.array([first, 1.0]), A),
                jitted=pyjitc.jit(array_written_on_one_path_and_rebound_on_the_other))


# ------------------------------------ a name one path rebinds, read after a write through a view

def branch_rebinds_then_view_written(x, y, A, n):
    s2 = y[::-2]
    if x.sum() > 1.005:
        y = np.sqrt(np.abs(y)) - 0.25
    for i in range(3):
        s2[s2 < 0.0] = -0.5
    return x[2:], y[2:].sum()


def loop_rebinds_then_view_written(x, y, n):
    s = y[1:]
    for i in range(n):
        y = y + 1.0
    s[:] = -1.0
    return y[::2].sum(), y


def branch_rebinds_then_view_written_in_a_loop(x, y, n, c):
    s = y[::-2]
    if c > 0:
        y = y * 2.0
    acc = y.sum() * 0.0     # an array scalar: a Python float stays one only if the loop never runs
    for i in range(n):
        s[0] += 1.0
        acc += y[-1]
    return acc, y, s


@pytest.mark.parametrize("n", [0, 3])
@pytest.mark.parametrize("c", [-1.0, 1.0])
def test_a_name_one_path_rebinds_reads_writes_made_through_a_view_of_the_array_it_held(n, c):
    # statement fuzzer seed 9101 program 5751: y = an argument, or a new array if a run-time
    # condition held; s2, a view of the argument, written after; y[2:] read the argument as it
    # was before the write (a silent wrong answer). A read now picks, at run time, the new array
    # or the argument as it is now
    x, y = np.array([-1.09, -2.36, 1.11, -1.06, -2.31, -2.79]), np.array([-2.3, 0.31, 7.99, -0.47, -4.04, 0.24])
    same_answer(branch_rebinds_then_view_written, plain(x * c, y, np.zeros((5, 6)), 3),
                jitted=pyjitc.jit(branch_rebinds_then_view_written))
    same_answer(loop_rebinds_then_view_written, plain(x, y, n), jitted=pyjitc.jit(loop_rebinds_then_view_written))
    same_answer(branch_rebinds_then_view_written_in_a_loop, plain(x, y, n, c),
                jitted=pyjitc.jit(branch_rebinds_then_view_written_in_a_loop))


# NumPy returns a new array from each of these, also where the result equals the argument: they
# returned the argument itself (or a view of it), so writes into the result reached it (the
# caller's array too)
NEW_ARRAYS = {
    "concatenate": lambda a: np.concatenate([a]),
    "concatenate_empty": lambda a: np.concatenate([a, np.zeros(0)]),
    "append": lambda a: np.append(a, []),
    "hstack": lambda a: np.hstack((a,)),
    "vstack": lambda a: np.vstack([a])[0],
    "dstack": lambda a: np.dstack([a])[0, :, 0],
    "stack": lambda a: np.stack([a], axis=1)[:, 0],
    "column_stack": lambda a: np.column_stack([a])[:, 0],
    "block": lambda a: np.block([[a]])[0],
    "pad": lambda a: np.pad(a, 0),
    "pad_reflect": lambda a: np.pad(a, 0, mode="reflect"),
    "resize": lambda a: np.resize(a, 3),
    "choose": lambda a: np.choose(np.zeros(3, int), [a]),
    "cumsum": lambda a: np.cumsum(a.reshape(3, 1), axis=1)[:, 0],
    "cumprod": lambda a: np.cumprod(a.reshape(3, 1), axis=1)[:, 0],
    "accumulate": lambda a: np.add.accumulate(a.reshape(3, 1), axis=1)[:, 0],
    "array": lambda a: np.array([a])[0],
    "ediff1d": lambda a: np.ediff1d(a[:1], to_begin=a[1:]),
}
# ... and these return the argument or a view of it, as NumPy does
VIEWS = {
    "astype": lambda a: a.astype(a.dtype, copy=False),
    "asarray": lambda a: np.asarray(a),
    "reshape": lambda a: a.reshape(3, 1)[:, 0],
    "flip": lambda a: np.flip(np.flip(a)),
    "diff": lambda a: np.diff(a, n=0),
    "atleast_1d": lambda a: np.atleast_1d(a),
    "float64": lambda a: np.float64(a),
    "nan_to_num": lambda a: np.nan_to_num(a, copy=False),
    "einsum": lambda a: np.einsum("i->i", a),
}


def diagonal_follows_its_base(A):
    d = np.diag(A)
    A[1, 1] = 50.0      # NumPy's diagonal is a view: it sees the write
    return d + 0.0


def write_into_result(a, name):
    r = NEW_ARRAYS[name](a) if name in NEW_ARRAYS else VIEWS[name](a)
    r[1] = 77.0
    return a, r


@pytest.mark.parametrize("name", list(NEW_ARRAYS) + list(VIEWS))
def test_results_share_the_arguments_memory_exactly_where_numpys_do(name):
    a1, a2 = np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0])
    f = pyjitc.jit(write_into_result, static_argnames="name")
    assert_same(f(a1, name), write_into_result(a2, name))
    assert_same(a1, a2)     # the caller's array: changed exactly where NumPy's is


def nan_to_num_and_meshgrids(x, a, b):
    r = np.nan_to_num(x, copy=False)
    r[0] += 1.0
    i = np.nan_to_num(np.arange(3), copy=False)
    return x, r, i, np.meshgrid(a, b, sparse=True), np.meshgrid(a, b, copy=False, sparse=True, indexing="ij"), \
        np.meshgrid(a, b, a, sparse=True)


def test_nan_to_num_without_a_copy_writes_in_place_and_sparse_meshgrids_are_numpys():
    # np.nan_to_num(x, copy=False) left x as it was; meshgrid ignored sparse=True
    x1, x2 = np.array([np.nan, 2.0, np.inf]), np.array([np.nan, 2.0, np.inf])
    a, b = np.arange(3.0), np.arange(2.0)
    assert_same(pyjitc.jit(nan_to_num_and_meshgrids)(x1, a, b), nan_to_num_and_meshgrids(x2, a, b))
    assert_same(x1, x2)


def test_np_diag_of_a_matrix_is_a_view_that_follows_writes_into_it():
    A1, A2 = np.eye(3), np.eye(3)
    assert_same(pyjitc.jit(diagonal_follows_its_base)(A1), diagonal_follows_its_base(A2))


def write_into_sparse_grid_without_copy(a, b):
    gx, gy = np.meshgrid(a, b, sparse=True, copy=False)
    gx[0, 1] = 77.0      # NumPy's reshaped view of a: the write reaches a
    return a, b, gx + gy


def write_into_full_grid_without_copy(a):
    g = np.meshgrid(a, copy=False)[0]
    g[1] = 77.0
    return a


def test_meshgrid_without_a_copy_returns_views_of_its_inputs():
    # they were new arrays: a write into np.meshgrid(a, sparse=True, copy=False)'s grid missed a
    a1, a2, b = np.arange(3.0), np.arange(3.0), np.arange(2.0)
    assert_same(pyjitc.jit(write_into_sparse_grid_without_copy)(a1, b), write_into_sparse_grid_without_copy(a2, b))
    assert_same(a1, a2)
    with pytest.raises(pyjitc.JitError, match="broadcast array"):   # broadcast views: written, a located error
        pyjitc.jit(write_into_full_grid_without_copy)(np.arange(3.0))


def zero_d_views_and_arrays(x):
    v = x[0, ...]
    x[0] = 100
    w = x[1, ...]
    w += 1
    t = np.array(x[2])
    t += 1
    u = np.asarray(x.sum())
    u[...] = 1.5
    return v, w, np.asarray(x.sum()), t, u, np.asarray(2.5), np.array(x[1]).copy()


def a_scalar_copied_is_still_a_scalar(x):
    s = x.sum()
    return s.copy(), np.nan_to_num(x[0]), np.copy(s)


def test_zero_d_views_and_zero_d_arrays_are_numpys_arrays():
    # x[0, ...] returned after x[0] = 100 gave the old value as a NumPy scalar (the view's recipe
    # was replayed as x[0]: a scalar copy); np.asarray(x.sum()) was a scalar, so `u[...] = 1.5`
    # was refused and `t += 1` rebound t (probe T)
    x = np.arange(3.0)
    got = assert_same_call(pyjitc.jit(zero_d_views_and_arrays), zero_d_views_and_arrays, x)
    assert all(type(g) is np.ndarray for g in got)
    assert_same_call(pyjitc.jit(a_scalar_copied_is_still_a_scalar), a_scalar_copied_is_still_a_scalar, x)


def written_then_flattened(A):
    A[0] = 1.0
    return A.ravel()


def updated_then_reshaped(A):
    A += 1.0
    return A.reshape(A.shape[1], A.shape[0]), A.sum()


def flattened_then_written(A):
    r = A.reshape(-1)
    A[0] = 5.0
    return r


@pytest.mark.parametrize("layout", ["C", "F", "transposed"])
def test_a_reshape_of_an_argument_taken_after_writes_holds_the_written_values(layout):
    # where NumPy's reshape copies (an F-ordered or transposed argument), the copy was made from
    # the values passed in: `A[0] = 1; return A.ravel()` returned A's old values (a probe of
    # in-place simulation code); C-ordered, the result stays a view of the caller's array
    def make():
        a = np.arange(12.0).reshape(3, 4)
        return {"C": a, "F": np.asfortranarray(a), "transposed": np.arange(12.0).reshape(4, 3).T}[layout]
    for fn in (written_then_flattened, updated_then_reshaped):
        a, b = make(), make()
        got, want = pyjitc.jit(fn)(a), fn(b)
        assert_same(got, want)
        np.testing.assert_array_equal(a, b)
        first = got[0] if isinstance(got, tuple) else got
        assert np.shares_memory(first, a) == np.shares_memory(want[0] if isinstance(want, tuple) else want, b)
    if layout == "C":   # a view taken before the write follows it, as NumPy's does
        a, b = make(), make()
        assert_same(pyjitc.jit(flattened_then_written)(a), flattened_then_written(b))


def written_through_its_ravel(A):
    A.ravel()[0] = 99.0
    flat = A.reshape(-1)
    flat[1] += 1.0
    return A


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_writes_through_a_reshape_of_an_argument_need_a_c_contiguous_argument(layout):
    # compiled, the reshape of an argument is a view; NumPy copies it for an F-ordered or strided
    # array, so writes through it did reach such an argument where NumPy's leave it alone (a
    # probe of HPC-style kernels): a located ArgumentError for those layouts, NumPy's answer for C
    base = np.arange(12.0).reshape(3, 4)
    a = {"C": base.copy(), "F": np.asfortranarray(base), "strided": np.arange(24.0).reshape(3, 8)[:, ::2]}[layout]
    f = pyjitc.jit(written_through_its_ravel)
    if layout == "C":
        b = a.copy()
        assert_same(f(a), written_through_its_ravel(b))
        assert_same(a, b)
        return
    before = a.copy()
    with pytest.raises(pyjitc.ArgumentError, match="not C-contiguous"):
        f(a)
    assert_same(a, before)


# ---------------------------------------------------------------- arrays picked by a run-time index

def write_into_picked(a, b, k):
    bufs = [a, b]
    bufs[k][1:] = 5.0
    v = (a, b)[k]
    v += 1.0
    return a, b


def read_picked_after_a_write_through_another_name(a, b, k):
    v = [a, b][k]
    a[0] = 100.0
    return v * 1


def ping_pong(u, steps):
    bufs = [u.copy(), np.zeros_like(u)]
    cur = 0
    for _ in range(steps):
        src, dst = bufs[cur], bufs[1 - cur]
        dst[1:-1] = 0.5 * src[1:-1] + 0.25 * (src[2:] + src[:-2])
        dst[0], dst[-1] = src[0], src[-1]
        cur = 1 - cur
    return bufs[cur], bufs


def rotate_three(u, steps):
    bufs = [u.copy(), u * 0, u * 0]
    for s in range(steps):
        bufs[(s + 1) % 3][:] = bufs[s % 3] * 0.5 + 1
    return bufs


@pytest.mark.parametrize("k", [0, 1, -1, -2])
def test_an_array_picked_from_a_list_by_a_run_time_index_is_the_item_itself(k):
    # `bufs[k][:] = v` went into a copy: the caller's arrays came back unchanged (a probe's
    # ping-pong buffers), silently
    for fn in (write_into_picked, read_picked_after_a_write_through_another_name):
        assert_same_call(pyjitc.jit(fn), fn, np.zeros(4), np.arange(4.0), k)
    same = np.zeros(3)
    assert_same_call(pyjitc.jit(write_into_picked), write_into_picked, same, same, k)


@pytest.mark.parametrize("steps", [0, 1, 7, 8])
def test_buffers_in_a_list_written_by_a_run_time_loop_through_picked_names_are_numpys(steps):
    u = np.exp(-50 * (np.linspace(0, 1, 30) - 0.5) ** 2)
    for fn in (ping_pong, rotate_three):
        assert_same_call(pyjitc.jit(fn), fn, u, steps)


def picked_in_a_loop_then_an_item_changed(a, b, n):
    bufs = [a, b]
    v = b
    for i in range(n):
        v = bufs[i % 2]
    a[0] = 5.0
    return v * 1


def picked_in_a_branch(a, b, k, change):
    bufs = [a, b]
    if a[1] > 0.1:
        v = bufs[k]
    else:
        v = bufs[1 - k]
    if change:
        b[0] = 7.0
    return v * 2, a, b


@pytest.mark.parametrize("fn, args", [(picked_in_a_loop_then_an_item_changed, (3,)), (picked_in_a_branch, (1, True))])
def test_an_array_picked_inside_a_loop_or_branch_and_read_after_an_item_changed_is_a_located_error(fn, args):
    # the name held the array as it was after the loop or branch: a silent difference from NumPy
    with pytest.raises(pyjitc.NotSupportedError, match="picked from a list by an index known only at run time "
                                                       "inside a loop or branch") as e:
        pyjitc.jit(fn, static_argnames=("change",) if fn is picked_in_a_branch else ())(
            np.array([0.7, 0.2, 0.3]), np.array([0.1, 0.4, 0.9]), *args)
    assert f"{__file__}:" in str(e.value)
    for k in (0, 1):    # read only: the array the pick named
        assert_same_call(pyjitc.jit(picked_in_a_branch, static_argnames=("change",)), picked_in_a_branch,
                         np.array([0.7, 0.2, 0.3]), np.array([0.1, 0.4, 0.9]), k, False)
