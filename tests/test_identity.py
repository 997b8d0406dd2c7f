"""Arrays keep NumPy's identities: results that are the same array, views of results or of
arguments, arrays known at compile time that stay known through writes, module-level arrays that
can't be written, and arguments that share memory in ways that can't be compiled exactly."""
import numpy as np
import pytest

import pyjitc
from tests.reference import assert_same

G = np.arange(4.0)


@pyjitc.jit
def view_results(x):
    U = np.zeros((4, 3))
    v = U[1:3, ::-1]
    v[:] = x[:2]
    return U, v, U.T


@pyjitc.jit
def argument_and_its_view(x):
    x += 1
    return x[1:], x


@pyjitc.jit
def mask_built_by_writes(x):
    m = np.zeros(x.shape, bool)
    m[::2] = True
    m[1] |= True
    return x[m]


@pyjitc.jit
def stepped_interior(A):
    v = A[1:-1, ::2]
    v[:] = 7.0
    return A[1:-1, ::2] * 2, A.sum()


@pyjitc.jit
def list_item_updated(x):
    a = np.zeros(3)
    items = [a, a]
    items[0] += x
    return items[1], a


@pyjitc.jit
def reads_global(x):
    return G.sum() + x


@pyjitc.jit
def writes_global(x):
    G[0] = x.sum()
    return x


@pyjitc.jit
def same_array_twice(a):
    c = a * 2
    return c, c


@pyjitc.jit
def add_then_read(a, b):
    a += 1.0
    return b.sum()


def test_a_returned_view_of_a_returned_array_is_a_numpy_view_of_it():
    x = np.arange(6.0).reshape(2, 3)
    got = view_results(x)
    assert_same(got, view_results.__wrapped__(x))
    U, v, T = got
    U[2, 0] = 99.0                          # NumPy: v and U.T see the write
    assert v[1, 2] == 99.0 and T[0, 2] == 99.0
    assert np.shares_memory(U, v) and np.shares_memory(U, T)


def test_view_results_survive_saving_and_loading_the_vmfb(tmp_path):
    x = np.arange(6.0).reshape(2, 3)
    view_results.lower(x).compile().save(tmp_path / "views.vmfb")
    U, v, _ = pyjitc.load(tmp_path / "views.vmfb")(x)
    U[1, 1] = -5.0
    assert v[0, 1] == -5.0


def test_an_argument_returned_is_the_callers_array_and_its_view_a_view_of_it():
    y = np.arange(4.0)
    want_y = y.copy()
    want = argument_and_its_view.__wrapped__(want_y)
    tail, whole = argument_and_its_view(y)
    assert_same((tail, whole), want)
    assert whole is y and np.shares_memory(tail, y)


@pyjitc.jit
def copy_of_argument_and_its_tail(x):
    c = np.array(x)
    return c, c[2:]


def test_a_returned_copy_of_an_argument_and_its_view_share_memory_but_not_the_argument():
    # found by the statement fuzzer: the view came back as a copy of its own
    x = np.arange(6.0)
    c, tail = copy_of_argument_and_its_tail(x)
    assert_same((c, tail), copy_of_argument_and_its_tail.__wrapped__(x))
    assert np.shares_memory(c, tail) and not np.shares_memory(c, x)
    c[3] = -1.0
    assert tail[1] == -1.0 and x[3] == 3.0


def test_the_same_array_returned_twice_is_one_object():
    c1, c2 = same_array_twice(np.arange(3.0))
    assert c1 is c2


def test_a_mask_built_with_writes_stays_known_at_compile_time():
    x = np.arange(6.0)
    assert_same(mask_built_by_writes(x), mask_built_by_writes.__wrapped__(x))


def test_writes_through_a_stepped_interior_view_reach_the_argument():
    A, B = np.arange(20.0).reshape(4, 5), np.arange(20.0).reshape(4, 5)
    assert_same(stepped_interior(A), stepped_interior.__wrapped__(B))
    assert_same(A, B)


def test_an_update_of_a_list_item_changes_the_array_the_list_holds():
    x = np.arange(3.0)
    assert_same(list_item_updated(x), list_item_updated.__wrapped__(x))


def test_module_level_arrays_are_read_and_writes_into_them_are_refused_with_the_name():
    assert_same(reads_global(np.ones(4)), reads_global.__wrapped__(np.ones(4)))
    with pytest.raises(pyjitc.JitError) as e:
        writes_global(np.ones(3))
    message = str(e.value)
    assert "test_identity.py:57:5" in message and "module-level array G" in message and "np.array(" in message


def test_aliased_arguments_compile_for_their_sharing_and_unshared_calls_do_not_recompile():
    x = np.arange(5.0)
    assert add_then_read(x, x) == 15.0 and np.array_equal(x, np.arange(1.0, 6.0))
    before = add_then_read.cache_info().misses
    assert add_then_read(np.arange(5.0), np.arange(5.0)) == 10.0   # independent: another specialisation
    add_then_read(np.arange(5.0), np.arange(5.0))
    assert add_then_read.cache_info().misses == before + 1
    y = np.arange(6.0)
    assert add_then_read(y[::2], y[1::2]) == 9.0                    # interleaved, never the same element


def test_partially_overlapping_arguments_are_refused_naming_both():
    x = np.arange(5.0)
    with pytest.raises(pyjitc.ArgumentError, match=r"arguments b and a share memory.*b\.copy\(\)"):
        add_then_read(x[0:3], x[2:5])
    assert np.array_equal(x, np.arange(5.0))


def ravel_of_a_reshaped_new_array(a):
    w = np.arange(30.0).reshape(5, 6)
    u = w.ravel()
    u[0] = a[0, 0]
    return u, w, (a * 1.0).reshape(6, 5).reshape(-1)


def test_a_reshape_of_a_reshaped_array_is_a_view_as_in_numpy():
    # statement fuzzer seed 7006 program 356: u = w.ravel() with w = np.arange(30.0).reshape(5, 6)
    # came back as a separate array (NumPy: a view of w's memory)
    a = np.full((5, 6), 7.0)
    got, want = pyjitc.jit(ravel_of_a_reshaped_new_array)(a), ravel_of_a_reshaped_new_array(a)
    for g, w in zip(got, want):
        assert_same(g, w)
    assert np.shares_memory(got[0], got[1]) and np.shares_memory(want[0], want[1])


def reshaped_views_of_a_local_array(x):
    t1 = np.eye(6)[:5]          # C-contiguous rows: reshape is a view in NumPy
    inner = t1[1:, :-1]
    flat = t1.reshape(-1)
    cols = np.eye(6)[:, :5]      # not contiguous: reshape copies in NumPy
    copied = cols.reshape(-1)
    copied[0] = x[0]             # writes the copy only
    return inner, flat, cols, copied


def test_a_reshape_of_a_view_of_a_local_array_is_a_view_exactly_when_numpys_is():
    x = np.array([7.0, 8.0])
    got, want = pyjitc.jit(reshaped_views_of_a_local_array)(x), reshaped_views_of_a_local_array(x)
    for g, w in zip(got, want):
        assert_same(g, w)
    assert np.shares_memory(got[0], got[1]) and np.shares_memory(want[0], want[1])
    assert not np.shares_memory(got[2], got[3]) and not np.shares_memory(want[2], want[3])


def loop_rebinds_an_argument(a, n):
    b = a
    i = 0
    while i < n:
        b = b + 1
        i += 1
    return a, b


def loop_rebinds_a_local_array_with_a_view_returned(x, n):
    U = np.ones((3, 4))
    U[:] = x.max()
    u = U[:, -2]
    for i in range(n):
        U = np.where(U > 0.0, U * 0.5, U)
    return U, u


@pytest.mark.parametrize("n", [0, 2])
def test_a_name_a_loop_rebinds_is_the_array_it_held_when_the_loop_ran_zero_times(n, tmp_path):
    # NumPy: with n = 0, b is a itself (statement fuzzer seed 9002 program 1318) and U the array
    # u views (seed 9101 program 1439); pyjitc returned new arrays with the same values. The
    # compiled function says whether the loop ran; the choice also survives a saved .vmfb
    a = np.arange(4.0)
    want, got = loop_rebinds_an_argument(a, n), pyjitc.jit(loop_rebinds_an_argument)(a, n)
    assert_same(got, want)
    assert [r is a for r in got] == [r is a for r in want] == [True, n == 0]
    lowered = pyjitc.jit(loop_rebinds_an_argument).lower(a, n)
    loaded = pyjitc.load(lowered.compile().save(tmp_path / "rebind.vmfb"))
    assert [r is a for r in loaded(a, n)] == [True, n == 0]
    x = np.arange(6.0)
    want = loop_rebinds_a_local_array_with_a_view_returned(x, n)
    got = pyjitc.jit(loop_rebinds_a_local_array_with_a_view_returned)(x, n)
    assert_same(got, want)
    assert np.shares_memory(*got) == np.shares_memory(*want) == (n == 0)


def branch_rebinds_or_writes(a, c):
    b = a
    if c > 0:
        b[0] = 5.0
    else:
        b = b * 2
    return b, a


@pytest.mark.parametrize("c", [0.0, 1.0])
def test_a_name_one_branch_rebinds_is_the_array_it_held_where_the_other_branch_ran(c):
    a, mine = np.arange(4.0), np.arange(4.0)
    want, got = branch_rebinds_or_writes(a, c), pyjitc.jit(branch_rebinds_or_writes)(mine, c)
    assert_same(got, want)
    assert_same(mine, a)
    assert [r is mine for r in got] == [r is a for r in want] == [c > 0, True]


def views_before_and_after_a_branch_rebinds(A, c):
    t = A * 2.0
    before = t[-4]
    if c > 0:
        t = np.where(t > 0.5, t * 0.5, t)
    after = t[-1]
    return before, after, t


@pytest.mark.parametrize("c", [-1.0, 1.0])
def test_views_of_a_name_a_branch_rebinds_share_memory_as_numpys(c):
    # statement fuzzer seed 9102 program 66: the view taken after the branch (after = t[-1]) came
    # back as a new array where the branch kept t
    A = np.arange(30.0).reshape(5, 6) / 10
    want = views_before_and_after_a_branch_rebinds(A, c)
    got = pyjitc.jit(views_before_and_after_a_branch_rebinds)(A, c)
    assert_same(got, want)
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        assert np.shares_memory(got[i], got[j]) == np.shares_memory(want[i], want[j])


def checked_edges(x, e):
    if np.any(e[:-1] > e[1:]):
        raise ValueError("edges must rise")
    return e


def test_an_argument_returned_beside_a_raise_is_the_callers_array():
    # the return value merged with the path that raised was a new array (NumPy returns `e` itself)
    x, e = np.zeros(3), np.linspace(0, 1, 5)
    assert pyjitc.jit(checked_edges)(x, e) is e
