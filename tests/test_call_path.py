"""The fast call path (api.JitFunction._fast_key, stages.Compiled.positional) and the reused
per-thread IREE buffers of small calls (backend.iree.Executable._staged_invoker) give exactly the
general path's answers: arguments of any layout or byte order under one template, arguments that
share memory, read-only arrays updated in place, bool inputs and results, results that stay
the caller's own after later calls, and tuples and lists of results built without the tree walk."""

import numpy as np
import pytest

import pyjitc
from tests.reference import assert_same


def shift_and_scale(a, b):
    a += 1.0
    return b * 2.0


def masked(m, x):
    return np.where(m, x, 0.0), m & (x > 0.0)


def flat_tuple(x, n):
    y = x * 2.0
    return y, x.sum(), n + 1


def flat_list(x, n):
    return [x.max(), x * n]


def one_array_twice(x, n):
    y = x * n
    return y, y


@pytest.fixture(scope="module")
def jitted():
    return pyjitc.jit(shift_and_scale), pyjitc.jit(masked)


def numpy_and_jit(fn, jf, *args):
    np_args = [a.copy() for a in args]
    jit_args = [a.copy() for a in args]
    want, got = fn(*np_args), jf(*jit_args)
    assert_same(got, want)
    for g, w in zip(jit_args, np_args):
        assert_same(g, w, path="argument afterwards")


def test_one_template_called_with_every_layout_and_byte_order(jitted):
    f, _ = jitted
    x, y = np.arange(8.0), np.linspace(0.0, 1.0, 8)
    for _ in range(3):   # the first call compiles, the next ones take the fast path
        numpy_and_jit(shift_and_scale, f, x, y)
    strided = np.arange(16.0)[::2]
    swapped = y.astype(">f8")
    a = x.copy()
    assert_same(f(a, strided), strided * 2.0)
    assert_same(f(a, swapped), y * 2.0)
    assert_same(a, x + 2.0)   # written back both times


def test_arguments_sharing_memory_after_the_fast_path_is_set_up(jitted):
    f, _ = jitted
    x, y = np.arange(8.0), np.ones(8)
    for _ in range(2):
        f(x.copy(), y)
    a, b = np.arange(8.0), np.arange(8.0)
    want = shift_and_scale(a, a)   # b is a: it sees the update
    got_arg = b.copy()
    got = f(got_arg, got_arg)
    assert_same(got, want)
    assert_same(got_arg, a)


def test_read_only_array_updated_in_place_is_refused_on_the_fast_path(jitted):
    f, _ = jitted
    x, y = np.arange(8.0), np.ones(8)
    for _ in range(2):
        f(x.copy(), y)
    frozen = x.copy()
    frozen.flags.writeable = False
    with pytest.raises(pyjitc.ArgumentError, match="read-only"):
        f(frozen, y)
    assert_same(frozen, x)


def test_bool_inputs_and_results_through_reused_buffers(jitted):
    _, g = jitted
    rng = np.random.default_rng(3)
    for _ in range(3):
        m, x = rng.random(10) > 0.5, rng.standard_normal(10)
        numpy_and_jit(masked, g, m, x)


def test_results_stay_the_callers_after_later_calls(jitted):
    f, _ = jitted
    first = f(np.zeros(8), np.full(8, 1.0))
    kept = first.copy()
    for k in range(3):
        f(np.zeros(8), np.full(8, 10.0 + k))
    assert_same(first, kept)


@pytest.mark.parametrize("fn", [flat_tuple, flat_list, one_array_twice])
def test_tuples_and_lists_of_results_on_the_fast_path_are_numpys(fn):
    # the first call compiles, the second sets the fast path up, the later ones take it
    jf = pyjitc.jit(fn)
    x = np.arange(5.0)
    want = fn(x, 3)
    for _ in range(4):
        got = jf(x, 3)
        assert_same(got, want)
        assert type(got) is type(want) and [type(g) for g in got] == [type(w) for w in want]
        assert (got[0] is got[1]) == (want[0] is want[1]), "one array returned twice is one object"
    assert jf._fast, "the fast path was taken"


def plus_the_rest(x, *rest):
    return x + sum(rest)


def rest_and_options(*args, **kwargs):
    return np.sort(*args, **kwargs)


@pytest.mark.parametrize("args, kwargs", [
    ((np.ones(3), np.arange(3.0)), {}),           # as many arguments as parameters: still *rest
    ((np.ones(3),), {}),
    ((np.ones(3), np.arange(3.0), np.full(3, 2.0)), {}),
])
def test_star_parameters_bind_as_python_binds_them(args, kwargs):
    # the fast path bound positional arguments one to one to the parameters, so x + sum(rest)
    # got rest = the second array and summed its elements
    assert_same(pyjitc.jit(plus_the_rest)(*args, **kwargs), plus_the_rest(*args, **kwargs))


def test_star_parameters_with_as_many_arguments_as_parameters_and_keywords():
    x = np.array([[3.0, 1.0], [0.0, 2.0]])
    f = pyjitc.jit(rest_and_options)
    assert_same(f(x, 0), rest_and_options(x, 0))
    assert_same(f(x, axis=0), rest_and_options(x, axis=0))


@pytest.mark.parametrize("fn, args", [
    (np.sort, (np.array([3.0, np.nan, 1.0]),)),
    (np.add, (np.ones(2, np.float32), 2)),
    (np.linalg.norm, (np.arange(4.0).reshape(2, 2),)),
    (np.union1d, (np.array([3, 1]), np.array([1, 5]))),     # NumPy's own Python code, compiled
    (len, (np.ones((4, 2)),)),
])
def test_jit_of_a_numpy_function_or_builtin_compiles_a_call_to_it(fn, args):
    # pyjitc.jit(np.sort) as jax.jit(jnp.sort): it raised an internal AttributeError
    assert_same(pyjitc.jit(fn)(*args), fn(*args))
