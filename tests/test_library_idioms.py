"""What library code written for NumPy does besides computing, compiled unchanged and equal to
NumPy: try/except decided at compile time, methods of strings, lists and dicts, imports inside
the function, `with np.errstate`, np.r_/np.c_, np.nonzero(mask) as an index, np.ndindex loops,
generator expressions, and the shape/dtype questions (np.shape, np.result_type, ...)."""
import functools
import cmath
import math
import itertools
import sys

import numpy as np
import pytest

import pyjitc
from tests.fixtures import library_module
from tests.reference import assert_same

_WHEN = {"end": 0, "begin": 1, 0: 0, 1: 1}


def _when(when):
    try:
        return _WHEN[when]
    except (KeyError, TypeError):
        return [_WHEN[x] for x in when]


def try_except_else_finally(x, when="end"):
    w = _when(when)
    try:
        y = x * 2
    except ValueError:
        y = x
    else:
        y = y + 1
    finally:
        z = 3
    return y + w + z


def except_binds_the_exception(x, key="missing"):
    try:
        scale = {"a": 2.0}[key]
    except KeyError as e:
        scale = float(len(e.args))
    return x * scale


def string_list_dict_methods(x, mode="Mean"):
    import numpy as numpy_in_body
    from math import pi
    m = mode.lower().strip()
    parts = []
    for k in range(3):
        parts.append(x * k)
    parts.extend([x])
    d = {"a": 1.0}
    d.update(b=2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = x / numpy_in_body.float64(pi)
    total = sum(parts) * d.get("b", 0.0) if m.startswith("mean") else parts[0]
    return total + ratio, tuple(v * 2 for v in (1, 2, 3)), {k: v + 1 for k, v in d.items()}


def nonzero_as_index(x, a, b):
    y = np.zeros(len(x))
    idx = np.nonzero(np.logical_and(a < x, x < b))[0]
    y[idx] = (x[idx] - a) / float(b - a)
    idx = np.nonzero(x == b)
    y[idx] = 1
    inside = np.flatnonzero(x > b)
    return y, len(inside), x[inside].sum()


def r_and_c(abc, x):
    a, b, c = np.r_[abc]
    return np.r_[a, x, 0:3], np.c_[x, x * b], a + b + c


def ndindex_loop(data):
    out = np.zeros(data.shape)
    for pos in np.ndindex(data.shape):
        neighbours = tuple((p + 1) % s for p, s in zip(pos, data.shape))
        out[pos] = data[pos] - data[neighbours]
    total = 0.0
    for idx, v in np.ndenumerate(data):
        total += v * (idx[0] + 1)
    # generators and comprehensions over them (were "NdEnumerateSeq object is not iterable")
    weighted = sum(v * i[1] for i, v in np.ndenumerate(data))
    corners = [i for i in np.ndindex(2, 2)]
    return out, total, weighted, corners


def python_iteration_helpers(x, A):
    # itertools and functools.reduce (refused as modules before), `del` and `:=` (refused syntax)
    pairs = 0.0
    for i, j in itertools.combinations(range(len(x)), 2):
        pairs += x[i] * x[j]
    grid = sum(A[i, j] for i, j in itertools.product(range(2), repeat=2))
    steps = [b - a for a, b in itertools.pairwise(x)]
    prod = functools.reduce(lambda p, q: p * q, x[:3])
    biggest = functools.reduce(np.maximum, [x, x[::-1], x * 0.5])
    scaled = x * 2
    out = scaled + 1
    del scaled
    if (n := len(x)) > 3:
        out = out[:n // 2]
    return pairs, grid, steps, prod, biggest, out, list(itertools.chain([x[0]], x[1:3]))


def _piecewise(a, b):
    if a > b:
        return a - b
    return a * b


VSTEP = np.vectorize(_piecewise)     # a module-level np.vectorize object


def vectorized_scalar_functions(x, y, z):
    # np.vectorize was refused ("not supported by pyjitc yet"): the function compiled on Python
    # numbers (as NumPy passes them) in a loop over the broadcast elements
    tens = np.vectorize(lambda t: int(t * 10) % 3)
    above = np.vectorize(lambda t: t > 0.5, otypes=[bool])
    return VSTEP(x, y), VSTEP(z[:, None], y), tens(x), above(x), np.vectorize(math.erf)(z), VSTEP(z, 0.5)


CASES = [
    (try_except_else_finally, (np.arange(2.0),)), (try_except_else_finally, (np.arange(2.0), ("begin", "end"))),
    (except_binds_the_exception, (np.arange(3.0),)), (string_list_dict_methods, (np.arange(4.0),)),
    (string_list_dict_methods, (np.arange(4.0), "Sum")),
    (nonzero_as_index, (np.linspace(0, 10, 41), 2.0, 5.0)), (nonzero_as_index, (np.linspace(0, 10, 41), 12.0, 14.0)),
    (r_and_c, (np.array([1.0, 2.0, 3.0]), np.arange(4.0))),
    (ndindex_loop, (np.arange(12.0).reshape(3, 4) ** 2,)),
    (python_iteration_helpers, (np.array([0.5, -1.0, 2.0, 3.5, 1.25]), np.arange(6.0).reshape(2, 3))),
    (vectorized_scalar_functions, (np.linspace(0, 1, 7), np.linspace(1, 0, 7), np.array([0.25, 0.75, 1.5], np.float32))),
    (vectorized_scalar_functions, (np.linspace(0, 1, 3000), np.linspace(1, 0, 3000), np.array([0.75], np.float32))),
]


@pytest.mark.parametrize("fn, args", CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_library_idiom_compiles_and_equals_numpy(fn, args):
    want, got = fn(*args), pyjitc.jit(fn)(*args)
    flat_want, flat_got = _leaves(want), _leaves(got)
    assert len(flat_want) == len(flat_got)
    for w, g in zip(flat_want, flat_got):
        if isinstance(w, (np.ndarray, np.generic)):
            assert_same(g, w)
        else:
            assert g == w and type(g) is type(w), (g, w)


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [l for v in x for l in _leaves(v)]
    if isinstance(x, dict):
        return [l for k in sorted(x) for l in _leaves(x[k])]
    return [x]


def test_an_exception_no_handler_catches_reaches_the_caller():
    def lookup(x, key="c"):
        try:
            return x * {"a": 1.0}[key]
        except TypeError:
            return x

    with pytest.raises(KeyError):
        pyjitc.jit(lookup)(np.ones(2))


def guarded_index(x, i):
    try:
        v = x[i]
    except IndexError:
        v = x[0] - 1.0
    else:
        v = v * 2
    return v


def kalman_gain(P, H, S):
    try:
        K = P @ H.T @ np.linalg.inv(S)
    except np.linalg.LinAlgError:
        K = P @ H.T * 0.0
    return K


def uncaught_at_run_time(x, i):
    try:
        v = x[i]
    except ZeroDivisionError:
        v = 0.0
    return v


@pytest.mark.parametrize("i", [1, 7, -2, -9])
def test_an_error_raised_only_at_run_time_selects_its_handler(i):
    x = np.arange(4.0)
    assert_same(pyjitc.jit(guarded_index)(x, i), guarded_index(x, i))


@pytest.mark.parametrize("S", [np.eye(2) * 2, np.zeros((2, 2))], ids=["invertible", "singular"])
def test_a_singular_matrix_at_run_time_runs_the_linalgerror_handler(S):
    P, H = np.eye(3), np.eye(2, 3)
    assert_same(pyjitc.jit(kalman_gain)(P, H, S), kalman_gain(P, H, S))


def test_a_run_time_error_no_handler_matches_reaches_the_caller():
    with pytest.raises(IndexError):
        pyjitc.jit(uncaught_at_run_time)(np.arange(4.0), 9)


def test_reading_a_run_time_exception_by_name_is_a_located_refusal():
    def named(x, i):
        try:
            return x[i] * 1.0
        except IndexError as e:
            return float(len(str(e)))

    with pytest.raises(pyjitc.NotSupportedError, match="can fail only when the compiled code runs|raised only at run time") as info:
        pyjitc.jit(named)(np.ones(3), 5)
    assert "test_library_idioms.py:" in str(info.value)


def test_changing_a_list_in_a_run_time_branch_is_a_located_refusal():
    def grows(x):
        out = []
        if x.sum() > 2:
            out.append(x)
        return len(out)

    with pytest.raises(pyjitc.NotSupportedError, match="changing a Python list inside a loop or branch"):
        pyjitc.jit(grows)(np.arange(3.0))


def _adds_one(f):
    import functools

    @functools.wraps(f)
    def wrapper(x):
        return f(x) + 1.0
    return wrapper


@_adds_one
def doubled_plus_one(x):
    return x * 2


def calls_a_decorated_helper(x):
    return doubled_plus_one(x) * 3


def test_a_decorated_function_compiles_the_decorators_wrapper_not_the_wrapped_source():
    # functools.wraps sets __wrapped__; reading that function's source with the wrapper's
    # globals and signature compiled x * 2 for x * 2 + 1 (a silent wrong answer)
    x = np.arange(3.0)
    assert_same(pyjitc.jit(doubled_plus_one)(x), doubled_plus_one(x))
    assert_same(pyjitc.jit(calls_a_decorated_helper)(x), calls_a_decorated_helper(x))


def membership_and_validation(x, dim):
    if dim not in [2, 3, 4]:
        raise ValueError("dim must be between 2 and 4")
    return x * dim, 3.0 in x, dim in (1, 2), 7.5 not in x


@pytest.mark.parametrize("dim", [2, 3, 4])
def test_in_with_run_time_values_and_a_tuple_result_after_a_run_time_raise(dim):
    x = np.arange(4.0)
    want, got = membership_and_validation(x, dim), pyjitc.jit(membership_and_validation)(x, dim)
    assert_same(got[0], want[0])
    assert got[1:] == want[1:] and [type(g) for g in got[1:]] == [type(w) for w in want[1:]]


def test_in_outside_the_list_raises_the_users_error():
    with pytest.raises(ValueError, match="dim must be between 2 and 4"):
        pyjitc.jit(membership_and_validation)(np.arange(4.0), 7)


def python_max_min_of_arrays(x):
    return max(abs(x)), min(x), max(x.astype(np.int32))


@pytest.mark.parametrize("x", [np.array([1.0, -3, 2]), np.array([np.nan, 1.0, 2]), np.array([1.0, np.nan, 5.0])])
def test_python_max_and_min_of_a_1d_array_iterate_as_python_does(x):
    want, got = python_max_min_of_arrays(x), pyjitc.jit(python_max_min_of_arrays)(x)
    for g, w in zip(got, want):
        assert_same(g, w)


def numpy_python_level_functions(m, a, b, c):
    return np.rot90(m), np.rot90(m, 3), np.linalg.multi_dot([a, b, c]), m[slice(1, None)], issubclass(m.dtype.type, np.floating)


def nested_lists_of_run_time_numbers(x, dt):
    q = [[dt ** 2 / 2, dt], [dt, 1.0]]
    return np.array(q) @ x, np.asarray([x[0], [dt, dt]])


def test_numpys_own_python_functions_compile_as_helpers():
    # np.rot90 and np.linalg.multi_dot are not in the registry: their Python code is compiled
    r = np.random.default_rng(0)
    args = (r.random((3, 4)), r.random((2, 5)), r.random((5, 3)), r.random((3, 2)))
    for g, w in zip(pyjitc.jit(numpy_python_level_functions)(*args), numpy_python_level_functions(*args)):
        assert_same(g, w) if isinstance(w, np.ndarray) else (g == w)


def test_nested_lists_holding_run_time_numbers_make_arrays():
    x = np.arange(4.0).reshape(2, 2)
    for g, w in zip(pyjitc.jit(nested_lists_of_run_time_numbers)(x, 0.5), nested_lists_of_run_time_numbers(x, 0.5)):
        assert_same(g, w)


def skew_and_rodrigues(v, theta):
    K = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
    return K, np.eye(3) + np.sin(theta) * K + (1 - np.cos(theta)) * (K @ K)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matrices_written_element_by_element_with_negated_items_compile(dtype):
    # the skew-symmetric (cross-product) matrix failed inside IREE ("'tensor.expand_shape' op
    # expected dimension 0 of collapsed type to be static value of 2"; a probe of geometry code):
    # nested lists of single values are now stacked at once, then shaped
    v = np.array([0.3, -1.2, 2.0], dtype)
    assert_same(pyjitc.jit(skew_and_rodrigues)(v, 0.7), skew_and_rodrigues(v, 0.7))


def test_asarray_chkfinite_raises_at_run_time_on_nan():
    f = pyjitc.jit(lambda x: np.asarray_chkfinite(x) * 2)
    with pytest.raises(ValueError, match="array must not contain infs or NaNs"):
        f(np.array([1.0, np.nan]))


def one_argument_where(x):
    y = np.zeros_like(x)
    idx = np.where(x > 0.5)[0]
    y[idx] = x[idx] * 2
    return y, len(idx)


def test_one_argument_where_is_nonzero():
    x = np.linspace(0, 1, 9)
    got, want = pyjitc.jit(one_argument_where)(x), one_argument_where(x)
    assert_same(got[0], want[0])
    assert got[1] == want[1]


def copyto_and_unwrap(x, y):
    a = x.copy()
    np.copyto(a, 0.0, where=a < 0.5)
    v = y[1:]
    np.copyto(v, 7.0)
    return a, np.unwrap(np.cumsum(x) * 3)


def test_copyto_writes_in_place_through_views_and_numpys_unwrap_compiles():
    x = np.random.default_rng(0).random(6)
    mine, theirs = x.copy(), x.copy()
    for g, w in zip(pyjitc.jit(copyto_and_unwrap)(x, mine), copyto_and_unwrap(x, theirs)):
        assert_same(g, w)
    assert_same(mine, theirs)


def test_a_numpy_function_whose_own_code_cant_compile_is_refused_at_the_users_call():
    def polynomial_roots(x):
        return np.roots(x)      # NumPy's own code needs np.linalg.eigvals

    with pytest.raises(pyjitc.NotSupportedError, match=r"np.roots is not supported by pyjitc yet \(compiling NumPy's own") as info:
        pyjitc.jit(polynomial_roots)(np.arange(1.0, 4.0))
    assert "test_library_idioms.py:" in str(info.value).splitlines()[0]


def in_place_methods_and_out(x, A, y):
    r = x.sort()
    A.fill(0.5)
    np.fill_diagonal(A, 2.0)
    z = np.sqrt(x, out=y)
    np.add(y, 1.0, out=y)
    return r, x, A, z is y, y, x.sum().item(), A.reshape(8, 2, order="F"), A.ravel(order="F")


def test_sort_fill_and_out_write_in_place_as_numpy_does():
    # x.sort() returned a sorted copy and left x unsorted (a silent wrong answer): it sorts in place
    r = np.random.default_rng(3)
    args = (r.random(6), r.random((4, 4)), np.zeros(6))
    mine, theirs = [a.copy() for a in args], [a.copy() for a in args]
    got, want = pyjitc.jit(in_place_methods_and_out)(*mine), in_place_methods_and_out(*theirs)
    assert got[0] is None and want[0] is None
    for g, w in zip(got[1:], want[1:]):
        assert_same(g, w) if isinstance(w, np.ndarray) else (g == w and type(g) is type(w))
    for m, t in zip(mine, theirs):
        assert_same(m, t)


def ufunc_at(h, idx, w, g, k, M):
    np.add.at(h, idx, w)
    np.maximum.at(g, idx, w)
    np.subtract.at(k, idx, 1)
    np.multiply.at(M, [0, 2, 0], 2.0)
    np.minimum.at(M, np.array([1]), -1.0)
    return h, g, k, M


def test_ufunc_at_applies_every_update_at_repeated_indices_as_numpy():
    r = np.random.default_rng(0)
    idx, w = r.integers(-5, 5, 30), r.random(30)
    args = [np.zeros(5), np.full(5, 0.5), np.arange(5), r.random((3, 4))]
    mine, theirs = [a.copy() for a in args], [a.copy() for a in args]
    for g, e in zip(pyjitc.jit(ufunc_at)(mine[0], idx, w, *mine[1:]), ufunc_at(theirs[0], idx, w, *theirs[1:])):
        assert_same(g, e)
    for m, t in zip(mine, theirs):
        assert_same(m, t)


def coo_matvec(rows, cols, vals, x, n):
    y = np.zeros(n)
    np.add.at(y, rows, vals * x[cols])
    return y


def scatter_rows(x, idx, v):
    x[idx] = v
    return x


def test_add_at_and_writes_through_index_arrays_scale_with_positions_plus_indices():
    # 2e5 updates into 2e4 positions, 1e6 writes into 1e6 positions: a comparison of every
    # position with every index (the lowering before the scatters) would need 4e9 and 1e12
    r = np.random.default_rng(8)
    rows, cols, vals, x = r.integers(0, 20_000, 200_000), r.integers(0, 30_000, 200_000), r.random(200_000), r.random(30_000)
    assert_same(pyjitc.jit(coo_matvec)(rows, cols, vals, x, 20_000), coo_matvec(rows, cols, vals, x, 20_000),
                accumulate=True)
    base, idx, v = r.random(1_000_000), r.integers(-1_000_000, 1_000_000, 1_000_000), r.random(1_000_000)
    assert_same(pyjitc.jit(scatter_rows)(base.copy(), idx, v), scatter_rows(base.copy(), idx, v))


def warns_when_negative(x):
    import warnings
    if x.min() < 0:
        warnings.warn("negative entries", RuntimeWarning)
    return np.abs(x)


def nan_levels(x):
    lo, hi = map(float, (x.min(), x.max()))
    return np.any(np.isnan([lo, hi, 0.5])), np.maximum([lo, 2.0], hi)


def test_ufuncs_of_lists_holding_run_time_numbers_make_arrays_as_numpy_does():
    # skimage's rescale_intensity: np.any(np.isnan([imin, imax, omin, omax])) of float()s
    for x in (np.array([0.25, 3.0]), np.array([np.nan, 1.0])):
        got, want = pyjitc.jit(nan_levels)(x), nan_levels(x)
        for g, w in zip(got, want):
            assert_same(g, w)


def sets_a_filter(x):
    import warnings
    warnings.simplefilter("ignore")
    return x


def test_warnings_warn_compiles_to_nothing_and_other_warnings_functions_are_refused_where_called():
    from pyjitc.frontend import registry
    assert "_warnings.warn" in registry.FUNCTIONS     # the name warnings.warn has in the registry (C's)
    x = np.array([-1.0, 2.0])
    assert_same(pyjitc.jit(warns_when_negative)(x), np.abs(x))
    with pytest.raises(pyjitc.NotSupportedError, match=r"test_library_idioms.py:\d+:\d+: warnings.simplefilter"):
        pyjitc.jit(sets_a_filter)(x)


def test_ufunc_at_with_an_index_out_of_bounds_raises_at_run_time():
    with pytest.raises(IndexError):
        pyjitc.jit(ufunc_at)(np.zeros(5), np.array([0, 7]), np.ones(2), np.zeros(5), np.zeros(5, int), np.ones((3, 4)))


def test_r_with_run_time_slice_bounds_is_a_located_refusal():
    def grid(x):
        return np.r_[x.min():x.max():0.5]

    with pytest.raises(pyjitc.NotSupportedError, match="bounds known only at run time") as info:
        pyjitc.jit(grid)(np.arange(4.0))
    assert "test_library_idioms.py:" in str(info.value)


def escape_counts(xs, ys, maxit):
    out = np.zeros((ys.shape[0], xs.shape[0]), dtype=np.int64)
    for j in range(ys.shape[0]):
        for i in range(xs.shape[0]):
            c = complex(xs[i], ys[j])
            z = 0j
            k = 0
            while abs(z) < 2.0 and k < maxit:
                z = z * z + c
                k += 1
            out[j, i] = k
    return out


def test_complex_of_run_time_parts_in_an_escape_time_loop_matches_python():
    xs, ys = np.linspace(-2.0, 1.0, 9), np.linspace(-1.0, 1.0, 7)
    assert_same(pyjitc.jit(escape_counts)(xs, ys, 30), escape_counts(xs, ys, 30))


def window_maxima(a):
    out = np.zeros_like(a, dtype=np.bool_)
    n, m = a.shape
    for i in range(n):
        for j in range(m):
            lo_i, hi_i = max(i - 1, 0), min(i + 2, n)
            lo_j, hi_j = max(j - 1, 0), min(j + 2, m)
            out[i, j] = a[i, j] == a[lo_i:hi_i, lo_j:hi_j].max()
    return out


def test_windows_clipped_with_max_and_min_of_the_loop_variables_match_numpy():
    # two run-time slice lengths in one read: the loops are unrolled (max/min keep the loop
    # variables they come from, so the compiler knows what to unroll)
    a = np.random.default_rng(5).random((5, 4))
    assert_same(pyjitc.jit(window_maxima)(a), window_maxima(a))


def swap_ends_by_copy(b):
    t = b[0].copy()      # a NumPy scalar's method: on a known array, it runs while compiling
    b[0] = b[-1]
    b[-1] = t


def swaps_in_known_and_argument_arrays(x):
    P = np.eye(3)[0]
    swap_ends_by_copy(P)
    swap_ends_by_copy(x)
    return P, x, P[1].item(), np.float64(2.5).round()


def test_methods_of_numpy_scalars_known_at_compile_time_run_as_numpy_runs_them():
    # statement fuzzer seed 7011: 90 of 4636 programs were refused at `b[0].copy()`
    mine, theirs = np.arange(4.0), np.arange(4.0)
    got, want = pyjitc.jit(swaps_in_known_and_argument_arrays)(mine), swaps_in_known_and_argument_arrays(theirs)
    for g, w in zip(got, want):
        assert_same(g, w)
    assert_same(mine, theirs)


# ---------------------------------------------------------------- array-API style dispatch, decided at compile time

@functools.lru_cache(16)
def _is_subclass_named(cls, modname, clsname):
    try:
        mod = sys.modules[modname]
    except KeyError:
        return False
    return issubclass(cls, getattr(mod, clsname))


def _device(x):
    if _is_subclass_named(type(x), "numpy", "ndarray"):
        return "cpu"
    elif _is_subclass_named(type(x), "a_gpu_library_never_imported", "Array"):
        import inspect   # a module compiled code may not use, on a path decided away at compile time
        return inspect.ismethod(getattr(x, "device"))
    return getattr(x, "device", None)


def namespace_dispatch(x):
    scale = getattr(x, "no_such_attribute", 2.0)
    if sys.modules.get("numpy") is np and _device(x) == "cpu":
        return x * scale + getattr(np, "pi"), getattr(x, "T")
    return x, x


def test_sys_modules_getattr_and_lru_cache_helpers_decide_the_namespace_at_compile_time():
    x = np.arange(6.0).reshape(2, 3)
    for g, w in zip(pyjitc.jit(namespace_dispatch)(x), namespace_dispatch(x)):
        assert_same(g, w)


def test_an_lru_cache_helper_given_an_array_is_refused_as_python_refuses_it():
    with pytest.raises(pyjitc.NotSupportedError, match="lru_cache") as info:
        pyjitc.jit(lambda x: _is_subclass_named(x, "numpy", "ndarray"))(np.ones(2))
    assert "test_library_idioms.py:" in str(info.value).splitlines()[0]


def library_module_helpers(x):
    name = np.__name__ if library_module.scaled.__name__ == "scaled" else "other"
    y = np.array(x, copy=np._CopyMode.IF_NEEDED)   # the enum array-API layers pass
    z = np.array(x, copy=np._CopyMode.ALWAYS)
    z[0] = -1.0
    return library_module.scaled(y) * library_module.WEIGHTS + library_module.doubled(x), name, z, x


def test_a_library_modules_helpers_constants_partials_its_name_and_copy_modes_compile():
    x = np.arange(4.0)
    got, want = pyjitc.jit(library_module_helpers)(x.copy()), library_module_helpers(x.copy())
    assert_same(got[0], want[0])
    assert got[1] == want[1] == "numpy"
    assert_same(got[2], want[2])
    assert_same(got[3], want[3])


def test_pythons_own_modules_stay_refused_when_a_function_is_read_from_them():
    import os

    def joins(x):
        return os.path.join("a", "b")
    with pytest.raises(pyjitc.ForbiddenError, match="module 'os"):
        pyjitc.jit(joins)


def lists_repeated_and_sets(s, k=2):
    Q = [[s, 1.0], [2.0, s]]
    blocks = [Q] * k + [[[s, s], [s, s]]]
    kind = "numpy.linalg".removesuffix(".linalg") in {"numpy", "cupy"}
    return np.array(blocks), np.array((s, 2.0) * k), kind


def test_lists_of_run_time_numbers_repeat_and_concatenate_as_python_lists_and_sets_of_names_compile():
    f = pyjitc.jit(lists_repeated_and_sets)
    for k in (1, 3):   # the count made static: one compile per count
        got, want = f(0.5, k), lists_repeated_and_sets(0.5, k)
        assert_same(got[0], want[0])
        assert_same(got[1], want[1])
        assert got[2] is want[2] is True


# Each registered itertools / functools function against Python running the same code (keyed by
# the registry's name: tests/test_numpy_surface.py checks that every registered name has a test).
ITERATION_CASES = {
    "itertools.product": lambda x: [a * b for a, b in itertools.product(x[:2], x[2:4])],
    "itertools.combinations": lambda x: [a - b for a, b in itertools.combinations(x, 2)],
    "itertools.combinations_with_replacement": lambda x: [a * b for a, b in itertools.combinations_with_replacement(x[:3], 2)],
    "itertools.permutations": lambda x: [a - b for a, b in itertools.permutations(x[:3], 2)],
    "itertools.pairwise": lambda x: [b - a for a, b in itertools.pairwise(x)],
    "itertools.zip_longest": lambda x: [a if b is None else a + b for a, b in itertools.zip_longest(x, x[:2])],
    "itertools.chain": lambda x: list(itertools.chain(x[:2], [x[3]])),
    "itertools.islice": lambda x: list(itertools.islice(x, 1, 4, 2)),
    "itertools.repeat": lambda x: sum(itertools.repeat(x, 3)),
    "itertools.starmap": lambda x: list(itertools.starmap(lambda a, b: a * b, [(x[0], x[1]), (x[2], 2.0)])),
    "_functools.reduce": lambda x: (functools.reduce(lambda a, b: a * b + 1.0, x),
                                    functools.reduce(lambda a, b: a + b, x[:0], 3.0)),
}


@pytest.mark.parametrize("name", sorted(ITERATION_CASES))
def test_itertools_and_functools_reduce_run_as_python_runs_them(name):
    fn = ITERATION_CASES[name]
    x = np.array([0.5, -1.0, 2.0, 3.5, 1.25])
    want, got = fn(x), pyjitc.jit(fn)(x)
    flat_want, flat_got = _leaves(want), _leaves(got)
    assert len(flat_want) == len(flat_got)
    for w, g in zip(flat_want, flat_got):
        assert_same(g, w)


def test_itertools_functions_that_never_end_are_refused_at_the_users_line():
    def forever(x):
        return [v for v, _ in zip(itertools.count(), x)]
    with pytest.raises(pyjitc.JitError, match="itertools.count .*can't be called"):
        pyjitc.jit(forever)(np.arange(3.0))


def pairwise_distances_by_comprehension(A, B):
    return np.array([[np.sqrt(np.sum((a - b) ** 2)) for b in B] for a in A])


def table_of_mixed_numbers(x, k):
    return np.array([[1, 2.5, x[0], k], [x[1] * 2, 3, 4, k + 1], [x.sum(), 0, -1, 7],
                     [5, 6, 7, 8], [k, k, x[2], 1]])


@pytest.mark.parametrize("shapes", [((5, 2), (7, 2)), ((8, 2), (8, 2))])
def test_np_array_of_nested_lists_of_many_single_values_runs(shapes):
    # 35 values stacked row by row: IREE bound each to one dispatch, "binding count 36 > 32" when
    # called (64: "dispatch requiring 65 bindings exceeds limit of 64"); probe R
    rng = np.random.default_rng(11)
    A, B = rng.random(shapes[0]), rng.random(shapes[1])
    assert_same(pyjitc.jit(pairwise_distances_by_comprehension)(A, B), pairwise_distances_by_comprehension(A, B))


def test_np_array_of_a_nested_list_of_mixed_numbers_keeps_numpys_dtype():
    x = np.arange(3, dtype=np.float32)
    assert_same(pyjitc.jit(table_of_mixed_numbers)(x, 3), table_of_mixed_numbers(x, 3))
    xi = np.arange(3)
    assert_same(pyjitc.jit(table_of_mixed_numbers)(xi, 3), table_of_mixed_numbers(xi, 3))


def mean_squared_error(y, yhat):
    return ((y - yhat) ** 2).mean()


def parts_of_a_number(a):
    return a.real, a.imag


def mean_or_default(a):
    try:
        return a.mean()
    except AttributeError:
        return -1.0


def test_an_array_method_of_a_python_number_is_pythons_attribute_error():
    # CPython raises AttributeError ('float' object has no attribute 'mean'); pyjitc returned
    # np.float64(1.0) (probe R). Arrays keep NumPy's method
    with pytest.raises(pyjitc.JitError, match="'float' object has no attribute 'mean'") as e:
        pyjitc.jit(mean_squared_error)(1.0, 2.0)
    assert "test_library_idioms.py" in str(e.value)
    assert_same(pyjitc.jit(mean_squared_error)(np.ones(3), 2.0), mean_squared_error(np.ones(3), 2.0))
    assert_same(pyjitc.jit(mean_or_default)(2.0), mean_or_default(2.0))
    for a in (2.5, 3, True, 1.5 + 2j):
        assert_same(pyjitc.jit(parts_of_a_number)(a), parts_of_a_number(a))


def math_of_run_time_numbers(x, y, n):
    return (math.log(x, 2), math.log(x, y), math.log(x), math.pow(x, y), math.pow(-x, n), math.prod([x, y, n]),
            math.prod([n, n]), math.prod((x, y), start=2), math.ldexp(x, n), math.frexp(x), math.modf(-x),
            math.factorial(n))


def test_more_math_functions_of_run_time_numbers_match_python():
    # math.log(x, base) was refused with a message about out= (the base went to np.log), math.pow,
    # math.prod, ldexp, frexp, modf and factorial "not supported on run-time values" (probe S)
    f = pyjitc.jit(math_of_run_time_numbers)
    for args in ((3.0, 2.5, 3), (0.7, 10.0, 0), (12.5, 1.5, 20)):
        assert_same(f(*args), math_of_run_time_numbers(*args))


@pytest.mark.parametrize("fn, args, error", [
    (lambda x: math.log(x, 1.0), (2.0,), "ZeroDivisionError"),
    (lambda x: math.log(x, 2.0), (-1.0,), "math domain error"),
    (lambda x: math.pow(x, 0.5), (-2.0,), "math domain error"),
    (lambda x: math.pow(x, -1.0), (0.0,), "math domain error"),
    (lambda x: math.pow(x, 400.0), (10.0,), "math range error"),
    (lambda n: math.factorial(n), (-1,), "not defined for negative values"),
])
def test_math_errors_on_run_time_numbers_are_pythons(fn, args, error):
    with pytest.raises(Exception) as python:
        fn(*args)
    with pytest.raises(pyjitc.RunError, match=error):
        pyjitc.jit(fn)(*args)
    assert type(python.value).__name__ in ("ValueError", "ZeroDivisionError", "OverflowError")


def test_a_factorial_past_64_bits_is_the_overflow_error_of_compiled_python_ints():
    with pytest.raises(pyjitc.RunError, match="past 64 bits"):
        pyjitc.jit(lambda n: math.factorial(n))(21)


def searches_in_lists_of_run_time_values(x):
    l = [x[0], x[1], x[2]]
    pairs = [(i, x[i]) for i in range(4)]
    rows = [x[:2], x[2:]]
    return (l.index(2.0), l.count(1.0), l.index(max(l)), (x[0], x[1]).index(x[1]), l.index(x[2], 1),
            [x[3], x[0], x[3]].count(x[3]), 2.0 in l, x[3] in [1.0, 3.0], 5.0 in l,
            max(pairs, key=lambda t: t[1]), min(pairs, key=lambda t: t[1]), max(rows, key=lambda r: r.sum()))


def index_of_a_missing_value(x):
    return [x[0], x[1]].index(7.0)


def removal_decided_at_run_time(x):
    items = [x[0], x[1]]
    items.remove(3.0)
    return items


def test_list_index_count_in_and_max_by_key_over_run_time_values_match_python():
    # l.count(v) returned 0 where Python gives 1 and l.index(v) raised ValueError where Python gives
    # 2 (NumPy-level values compared while compiling); l.index(max(l)), `v in [a, b]`, max(pairs,
    # key=...) were refused (probe R)
    f = pyjitc.jit(searches_in_lists_of_run_time_values)
    for x in (np.array([1.0, 3.0, 2.0, 1.0]), np.array([2.0, 2.0, 5.0, 3.0])):
        assert_same(f(x), searches_in_lists_of_run_time_values(x))
    with pytest.raises(pyjitc.RunError, match="not in list"):
        pyjitc.jit(index_of_a_missing_value)(np.array([1.0, 3.0]))
    with pytest.raises(pyjitc.JitError, match="list.remove") as e:
        pyjitc.jit(removal_decided_at_run_time)(np.array([1.0, 3.0]))
    assert "test_library_idioms.py" in str(e.value)


def list_and_tuple_comparisons(a, b):
    return ((a[0], a[1]) == (1, 2), list(a) == list(a[::-1]), a.tolist() == [1, 2, 3], sorted(a) == sorted(b),
            a.tolist() < b.tolist(), [a[0]] <= [a[0], 1], (a[0], a[1]) != (1, 2), [a[0], [a[1]]] == [1, [2]],
            list(a) == list(b), (a[0],) == [a[0]], sum([(a[0], a[1]) == (1, 2), True]))


def goal_reached(a, tr, tc):
    r, c = a[0], a[1]
    if (r, c) == (tr, tc):
        return 1
    return 0


def test_list_and_tuple_comparisons_are_one_python_bool():
    # `(a[0], a[1]) == (1, 2)` gave array([True, True]) and list(a) == list(a[::-1]) an array of
    # element comparisons (NumPy's ==, not Python's list comparison); `if (r, c) == (tr, tc):`
    # raised NumPy's truth-value error (probe U)
    f = pyjitc.jit(list_and_tuple_comparisons)
    for a, b in ((np.array([1, 2, 3]), np.array([2, 3, 3])), (np.array([1, 2, 1]), np.array([1, 2, 1])),
                 (np.array([3, 1, 2]), np.array([2, 3, 1]))):
        assert_same(f(a, b), list_and_tuple_comparisons(a, b))
    g = pyjitc.jit(goal_reached)
    assert g(np.array([1, 2]), 1, 2) == 1 and g(np.array([1, 3]), 1, 2) == 0


def lists_of_one_element_arrays_compared(a, b):
    return [a[:1], a[1]] == [b[:1], b[1]], (a[1:2],) != (b[1:2],)


def lists_of_longer_arrays_compared(a, b):
    return [a] == [b]


def test_lists_holding_arrays_compare_by_the_truth_of_each_items_equality():
    # an item that is a size-1 array has a truth value (Python's list == asks bool(x == y)): it
    # was refused as "ambiguous"; longer arrays still raise NumPy's ValueError
    f = pyjitc.jit(lists_of_one_element_arrays_compared)
    for a, b in ((np.array([1.0, 2.0]), np.array([1.0, 2.0])), (np.array([1.0, 2.0]), np.array([1.0, 3.0])),
                 (np.array([0.0, 2.0]), np.array([1.0, 2.0]))):
        assert_same(f(a, b), lists_of_one_element_arrays_compared(a, b))
    with pytest.raises(ValueError, match="ambiguous"):
        lists_of_longer_arrays_compared(np.ones(2), np.ones(2))
    with pytest.raises(pyjitc.JitError, match="ambiguous"):
        pyjitc.jit(lists_of_longer_arrays_compared)(np.ones(2), np.ones(2))


def list_slots_written_at_run_time_positions(x):
    scores = [0.0, 0.0, 0.0]
    scores[x[0]] = 2.5
    scores[-1] += x[1]
    counts = [0] * 4
    counts[x[0] % 4] += 1
    counts[x[2]] -= 2
    return scores, counts


def counted_in_a_run_time_loop(x):
    counts = [0] * 5
    for v in x:
        counts[v % 5] += 1
    return counts


def test_list_slots_written_at_positions_known_only_at_run_time():
    # `counts[x[0] % 4] += 1`: "an index into a Python list or dict must be known at compile
    # time"; now each slot takes the value where the position names it (Python's negative
    # positions and IndexError). In a run-time loop: a located refusal (unrolling it compiled
    # a selection per slot per step: minutes for 2000 steps)
    f = pyjitc.jit(list_slots_written_at_run_time_positions)
    for x in (np.array([1, 2, 3]), np.array([-2, 5, 0]), np.array([0, -1, -4])):
        assert_same(f(x), list_slots_written_at_run_time_positions(x))
    with pytest.raises(IndexError):
        list_slots_written_at_run_time_positions(np.array([3, 1, 0]))
    with pytest.raises(pyjitc.RunError, match="IndexError"):
        f(np.array([3, 1, 0]))
    with pytest.raises(pyjitc.JitError, match="use an array") as e:
        pyjitc.jit(counted_in_a_run_time_loop)(np.arange(300))
    assert "test_library_idioms.py" in str(e.value) and "counts[v % 5] += 1" in str(e.value)


def and_of_an_element_and_a_comparison(g, c):
    n = 0
    if g[0] and c == 2:
        n += 1
    while g[1] and n < 3 or not g[0] and n < 2:
        n += 1
    return n, (1 if g[1] or c > 5 else 2)


def test_and_or_in_a_test_need_only_the_truth_of_the_deciding_value():
    # `if g[0] and c == 2:` was a MergeError ("'value?...' changes type: Python bool on one path,
    # i64[] on the other"): only its truth counts there (probe U: game of life neighbour loops)
    f = pyjitc.jit(and_of_an_element_and_a_comparison)
    for g, c in ((np.array([1, 0]), 2), (np.array([0, 1]), 7), (np.array([2, 3]), 1)):
        assert_same(f(g, c), and_of_an_element_and_a_comparison(g, c))


def walk_by_moves(dirs):
    moves = [(0, 1), (1, 0), (0, -1), (-1, 0)]
    x = y = 0
    for d in dirs:
        dx, dy = moves[d]
        x += dx
        y += dy
    return x, y


def picked_at_run_time(v, k):
    return (v[0], v[1] * 2, v[2])[k], [1, 2, 3][-k], [v[2], v[0]][k % 2]


def rot13(codes):
    a = ord(chr(ord('a')))
    return np.where((codes >= a) & (codes <= ord('z')), (codes - a + 13) % 26 + a, codes)


def test_lists_of_numbers_or_tuples_indexed_at_run_time_and_ord_of_a_literal():
    # moves[d] with d an array element: "an index into a Python value must be known at compile
    # time"; ord('a'): "the builtin ord() is not supported inside @jit" (probe U)
    assert_same(pyjitc.jit(walk_by_moves)(np.array([0, 1, 1, 3, 2, 1])), walk_by_moves(np.array([0, 1, 1, 3, 2, 1])))
    f = pyjitc.jit(picked_at_run_time)
    for k in (0, 1, 2):
        assert_same(f(np.arange(3.0), k), picked_at_run_time(np.arange(3.0), k))
    with pytest.raises(pyjitc.RunError, match="IndexError"):
        f(np.arange(3.0), 3)
    assert_same(pyjitc.jit(rot13)(np.array([97, 120, 65, 122])), rot13(np.array([97, 120, 65, 122])))


def romberg_weights(k, n):
    out = 0.0
    for j in range(1, n):
        out += 4 ** -j
    return out, 2 ** -k, 2 ** k


def test_a_python_int_to_a_run_time_power_has_pythons_type():
    # `2 ** -k` with k a Python int argument raised at run time ("the result's type would depend on
    # the exponent's sign"; probe S): the argument is made static, and a loop variable's known sign
    # decides it (4 ** -j is a float)
    f = pyjitc.jit(romberg_weights)
    for k in (3, -3, 0):
        assert_same(f(k, 6), romberg_weights(k, 6))


def halved_until(x, step):
    k, s = 0, 0.0
    while s < 1.9 * x[0]:
        s += x[0] / 2 ** k
        k += step
    return k, s


def test_a_python_int_to_the_power_of_a_while_loops_counter_is_one_run_time_loop():
    # `x[0] / 2 ** k` with k counted in a while loop: unrolled, then "its condition depends on array
    # values" (probe AK); a counter that goes negative raises Python's type question at run time
    f = pyjitc.jit(halved_until, static_argnames="step")
    assert_same(f(np.array([1.0]), 1), halved_until(np.array([1.0]), 1))
    with pytest.raises(pyjitc.RunError, match="negative power is a float"):
        f(np.array([1.0]), -1)


def star_unpacked_rows(P):
    return np.hypot(*P.T), max(*P[0]), np.arctan2(*P[:2])


def test_an_array_star_unpacked_into_a_call_gives_its_rows():
    # np.hypot(*P.T): "a *argument must be known at compile time" where `x, y = P.T` compiled (probe AJ)
    P = np.random.default_rng(2).random((5, 2))
    assert_same(pyjitc.jit(star_unpacked_rows)(P), star_unpacked_rows(P))


def twiddles_with_cmath(x, k, n):
    z = x[0] + 1j * x[1]
    return (cmath.exp(-2j * cmath.pi * k / n), cmath.sqrt(x[2]), cmath.log(z), cmath.log(z, 2), cmath.phase(z),
            cmath.polar(z), cmath.rect(x[0], x[1]), cmath.isfinite(z), cmath.exp(2j * cmath.pi / 8))


def test_the_cmath_module_on_run_time_numbers_gives_python_complex_numbers():
    # `import cmath` was refused at decoration (probe S)
    x = np.array([1.5, -0.5, -4.0])
    assert_same(pyjitc.jit(twiddles_with_cmath)(x, 3, 8), twiddles_with_cmath(x, 3, 8))
    with pytest.raises(pyjitc.RunError, match="math domain error"):
        pyjitc.jit(twiddles_with_cmath)(np.zeros(3), 1, 4)


def _twice(x):
    return x * 2


def through_a_relative_import(x):
    from .test_library_idioms import _twice as twice   # (scipy's `from .. import numpy as xp` in a helper)
    return twice(x) + 1


def sets_and_iterators(x, names):
    keys = set(names) | {"c"}
    keys.add("d")
    common = keys.intersection({"a", "d", "z"})
    rows = iter(x)
    first = next(rows)
    second = next(rows)
    pick = next((v for v in (4, 5, 6) if v > 4), -1)
    none = next((v for v in (4, 5, 6) if v > 9), -1)
    shapes = {a.shape for a in (x, x[0], x[1])}
    return (first + second) * len(common) + pick + none, sorted(common), len(shapes), frozenset(["a"]) | {"b"}, \
        np.iterable(x), np.iterable(2.0), x.take([0, 2], axis=0)


def test_sets_iterators_and_relative_imports_of_library_code_are_pythons():
    # what library code does around NumPy (skimage's `next(dt for dt in dtypes if ...)`, scipy's
    # `set(kwds).intersection(...)`, `{arg.shape for arg in args}`, np.iterable's `iter(y)`,
    # `out.take(-1, axis=axis)`, `from .. import numpy as xp`): each was refused
    x = np.arange(12.0).reshape(4, 3)
    assert_same(pyjitc.jit(through_a_relative_import)(x), through_a_relative_import(x))
    f = pyjitc.jit(sets_and_iterators, static_argnames="names")
    got, want = f(x, ("a", "b")), sets_and_iterators(x, ("a", "b"))
    assert_same(got, want)
    assert type(got[3]) is frozenset and got[3] == want[3]
