"""NumPy functions in calls the one-argument harness (test_numpy_surface.py) can't express: two
array arguments, run-time Python scalars (weak, NEP 50), run-time errors where NumPy raises, the
arrays NumPy returns as themselves, and the located errors for what pyjitc refuses. Module-level
functions, so that each compiles once per template."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pyjitc
from tests.reference import assert_same, assert_same_call, numpy_result


def two_arrays(x, y, s):
    return (np.isclose(x, y), np.allclose(x, y, rtol=s), np.isclose(x, s), np.array_equal(x, y),
            np.select([x > s, y > s], [x, y], s), np.interp(x, np.sort(y), y, left=s),
            np.average(x, weights=np.abs(y) + 1, returned=True), np.cross(x[:3], y[:3]), np.kron(x[:2], y[:2]),
            np.polyval(y[:3], x), np.trapezoid(y, x), np.convolve(x, y[:3], 'same'), np.correlate(x, y),
            np.cov(x, y), np.corrcoef(x, y), np.add.outer(x, s), np.diff(x, append=s), np.maximum.outer(x, y),
            np.histogram(x, 3, range=(-1, 1), weights=y), np.percentile(x, 30.0), np.nan_to_num(x, nan=s),
            np.kron(x[:2], s), np.atleast_1d(s) + x[:1], np.ediff1d(x, to_begin=s))


X = np.array([0.5, -1.25, 0.75, 3.0, -0.0, 2.0])
Y = np.array([1.5, -1.25, np.nan, 2.0, 0.25, 7.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_two_arrays_and_a_run_time_scalar_match_numpy(dtype):
    f = pyjitc.jit(two_arrays)
    for s in (0.5, 0.25):   # a run-time Python float: one compile for both
        x, y = X.astype(dtype), Y.astype(dtype)
        assert_same(f(x, y, s), numpy_result(two_arrays, x, y, s), accumulate=True)
        assert_same(f(x, np.nan_to_num(y), s), numpy_result(two_arrays, x, np.nan_to_num(y), s), accumulate=True)
    assert f.cache_info().misses == 1


def gradient_second_order(x):
    return np.gradient(x, 0.5, 3.0, edge_order=2), np.gradient(x[0], edge_order=2)


def test_gradient_with_second_order_edges():
    # the edges are sums of three products: NumPy's rounding is not IREE's (fused multiply-adds),
    # so the tolerance is relative to the magnitudes summed
    f = pyjitc.jit(gradient_second_order)
    for x in (np.arange(12.0).reshape(3, 4) ** 2, np.array([[3, -1, 0, 7], [2, 2, -5, 1], [-128, 127, 64, -3]]),
              np.ones((3, 4), np.float32)):
        assert_same(f(x), numpy_result(gradient_second_order, x), accumulate=True, scale=8 * np.abs(x).max())


def returns_itself(x):
    return np.diff(x, n=0), np.atleast_2d(x), np.atleast_1d(x[0])


def test_functions_that_return_their_argument_return_the_callers_array():
    x = np.arange(6.0).reshape(2, 3)
    got = pyjitc.jit(returns_itself)(x)
    assert got[0] is x and got[1] is x
    assert_same(got, returns_itself(x))


def counts(x, w):
    return np.bincount(x, minlength=4), np.bincount(x, weights=w, minlength=5)


def test_bincount_with_minlength_and_its_run_time_checks():
    f = pyjitc.jit(counts)
    w = np.array([0.5, 1.0, 2.0, -1.0])
    for x in (np.array([0, 1, 3, 3]), np.array([2, 2, 2, 0])):
        assert_same(f(x, w), counts(x, w))
    with pytest.raises(ValueError, match="no negative elements"):
        np.bincount(np.array([0, -1, 2, 2]))
    with pytest.raises(pyjitc.RunError, match="no negative elements"):
        f(np.array([0, -1, 2, 2]), w)
    with pytest.raises(pyjitc.RunError, match="minlength=4"):   # NumPy returns a longer array
        f(np.array([0, 1, 4, 2]), w)
    # many values into many bins: a scatter-add (a compare per value and bin was 173 ms at 1e5 x 1000)
    rng = np.random.default_rng(0)
    x, w = rng.integers(0, 1000, 20000), rng.random(20000)
    many = pyjitc.jit(lambda x, w: (np.bincount(x, minlength=1000), np.bincount(x, weights=w, minlength=1000)))
    assert_same(many(x, w), (np.bincount(x, minlength=1000), np.bincount(x, weights=w, minlength=1000)))


def weighted(x, w):
    return np.average(x, weights=w)


def test_average_with_weights_summing_to_zero_is_a_run_time_error():
    f = pyjitc.jit(weighted)
    x = np.array([1.0, 2.0, 3.0])
    assert_same(f(x, np.array([1.0, 0.0, 3.0])), weighted(x, np.array([1.0, 0.0, 3.0])), accumulate=True)
    with pytest.raises(ZeroDivisionError):
        weighted(x, np.array([1.0, -1.0, 0.0]))
    with pytest.raises(pyjitc.RunError, match="Weights sum to zero"):
        f(x, np.array([1.0, -1.0, 0.0]))


@pytest.mark.parametrize("expression, message", [
    ("np.bincount(x)", "pass minlength"),
    ("np.histogram(x, 'auto')", "depends on the data"),
    ("np.interp(x, x, x, period=2.0)", "period= is not supported"),
    ("np.quantile(x, 0.5, weights=x)", "weights= is not supported"),
    ("np.subtract.reduce(x)", "np.subtract.reduce is not supported"),
])
def test_what_pyjitc_refuses_is_a_located_error(expression, message, tmp_path):
    from tests.fuzz import load_source
    fn = load_source(f"import numpy as np\n\n\ndef refused(x):\n    return {expression}\n", tmp_path, "refused", "refused")
    with pytest.raises(pyjitc.NotSupportedError, match=message) as e:
        pyjitc.jit(fn)(np.arange(4))
    assert "refused.py:5:" in str(e.value) and expression.split("(")[0] in str(e.value)


def test_a_ufunc_method_is_named_by_what_it_is():
    from pyjitc.frontend import policy
    assert policy.qualified_name(np.add.outer) == "numpy.add.outer"
    assert policy.qualified_name(np.true_divide.reduce) == "numpy.divide.reduce"
    assert policy.qualified_name(np.maximum.accumulate) == "numpy.maximum.accumulate"


def one_variable(x):
    return np.cov(x), np.cross(x[:2], x[1:3])


def test_0d_array_results_stay_arrays_also_through_a_saved_vmfb(tmp_path):
    # NumPy returns 0-d arrays here (not NumPy scalars): the signature in the .vmfb says so
    f = pyjitc.jit(one_variable)
    x = np.array([1.0, 2.5, -1.0, 4.0])
    f.lower(pyjitc.Template((4,), np.float64)).compile().save(str(tmp_path / "one.vmfb"))
    for g in (f, pyjitc.load(str(tmp_path / "one.vmfb"))):
        got = g(x)
        assert all(isinstance(r, np.ndarray) and r.ndim == 0 for r in got)
        assert_same(got, numpy_result(one_variable, x), accumulate=True)


def reversed_unsigned(x):
    return np.flip(x) + 1, x[::-1] * 2, np.convolve(x, x)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint64])
def test_reversing_unsigned_integers_compiles(dtype):
    # IREE 3.13 failed on any use of a reversed unsigned array ("failed to legalize operation
    # 'linalg.generic'"); found through np.convolve on uint8
    x = np.array([3, 200, 0, 7, 5], dtype)
    assert_same(pyjitc.jit(reversed_unsigned)(x), reversed_unsigned(x))


def reduce_0d(x):
    return np.sum(x), np.max(x), np.multiply.reduce(x), np.add.reduce(x, keepdims=True), x


def test_reducing_a_0d_argument_gives_a_numpy_scalar_and_the_argument_stays_itself():
    x = np.array(2.5)
    got = pyjitc.jit(reduce_0d)(x)
    assert_same(got, reduce_0d(x))
    assert got[-1] is x


def gradient_coordinates(y, t):
    return (np.gradient(y, t), np.gradient(y, t, edge_order=2), np.gradient(y, np.array([0.0, 1.0, 3.0, 3.5, 5.0, 8.0])),
            np.gradient(np.outer(y, y[:3]), t, 2.0), np.gradient(y, np.arange(6)))


@pytest.mark.parametrize("t", [np.array([0.0, 0.5, 1.5, 1.75, 3.0, 4.0]), np.arange(6.0) * 0.5, np.arange(6)])
def test_gradient_with_coordinate_arrays(t):
    # NumPy uses the uniform formulas when the coordinates are evenly spaced (decided at run time here)
    y = np.array([1.0, -2.0, 0.5, 4.0, 3.0, 9.0])
    f = pyjitc.jit(gradient_coordinates)
    assert_same(f(y, t), numpy_result(gradient_coordinates, y, t), accumulate=True, scale=100.0)


def weighted_cov(x, f, a):
    return (np.cov(x, fweights=f), np.cov(x, aweights=a), np.cov(x, fweights=f, aweights=a, ddof=0),
            np.cov(x[0], x[1], aweights=a, bias=True), np.cov(x, rowvar=False, fweights=f[:3]))


def test_cov_with_frequency_and_analytic_weights():
    f = pyjitc.jit(weighted_cov)
    x = np.array([[0.5, -1.25, 2.0, 3.0], [2.0, 0.0, -0.5, -7.5], [1.0, 1e-3, 9.0, 4.25]])
    fw, aw = np.array([1, 2, 1, 3]), np.array([0.5, 1.0, 2.0, 0.25])
    assert_same(f(x, fw, aw), numpy_result(weighted_cov, x, fw, aw), accumulate=True)
    assert_same(f(x.astype(np.float32), fw, aw), numpy_result(weighted_cov, x.astype(np.float32), fw, aw), accumulate=True)
    with pytest.raises(pyjitc.RunError, match="fweights must be integer"):
        f(x, np.array([1.5, 2, 1, 3]), aw)
    with pytest.raises(pyjitc.RunError, match="aweights cannot be negative"):
        f(x, fw, -aw)


def gillespie_steps(x, u):
    t = 0.0
    for i in range(u.shape[0]):
        a = np.cumsum(x)
        t += x.sum()
        t += np.searchsorted(a, u[i] * t, side="right")
    return t


def test_a_search_of_one_value_beside_a_sum_in_a_run_time_loop_compiles():
    # IREE fused the search's element reads into the sum's dispatch and crashed vectorizing it
    # (iree-compile error code -11, also on the host-loop fallback; a probe of stochastic
    # simulations: Gillespie's method picking a reaction)
    x, u = np.array([5.0, 50.0]), np.random.default_rng(3).random(40)
    assert_same(pyjitc.jit(gillespie_steps)(x, u), gillespie_steps(x, u))


def search_many(a1, a8, a100, v):
    return [np.searchsorted(a, v, side=side) for a in (a1, a8, a100) for side in ("left", "right")] + \
        [np.searchsorted(a8, v[:0]), np.interp(v, a100[:-3], a100[:-3] * 2)]   # NaN in xp: unspecified


def test_searchsorted_is_a_binary_search_with_numpys_results():
    rng = np.random.default_rng(7)
    a100 = np.sort(np.round(rng.normal(size=100), 1))          # repeated values
    a100[-3:] = np.nan                                          # NaN sorts last
    a8 = np.array([-np.inf, -1.0, 0.0, 0.0, 0.0, 2.5, np.inf, np.nan])
    v = np.concatenate([rng.normal(size=40).round(1), a8, [-0.0, 1e300, -1e300]])
    got = pyjitc.jit(search_many)(np.array([0.5]), a8, a100, v)
    assert_same(got, numpy_result(search_many, np.array([0.5]), a8, a100, v))


def sorts_(x, b):
    return (np.sort(x), np.argsort(x, kind="stable"), np.sort(x, axis=0), np.argsort(x, axis=0, kind="stable"),
            np.median(x, axis=1), np.sort(b), np.argsort(b, kind="stable"))


@pytest.mark.parametrize("native", ["1", "0"])
def test_sorts_by_merging_on_cpu_and_by_a_bitonic_network_without_native_loops(monkeypatch, native):
    # lowering/sorts.py: on CPU a stable merge sort per row in one native loop; without native
    # loops (as on GPU targets) rows of BITONIC_FROM or more go through a bitonic network that
    # pads to a power of two. Both: NaN sorts last, -0.0 and 0.0 tie (stable), bool as uint8
    from pyjitc.lowering import sorts
    monkeypatch.setenv("PYJITC_NATIVE_LOOPS", native)
    monkeypatch.setattr(sorts, "BITONIC_FROM", 300)
    rng = np.random.default_rng(3)
    x = (rng.normal(size=(3, 600)) * 5).round()
    x.flat[::7], x.flat[::11], x.flat[3::13] = np.nan, -np.inf, -0.0
    x = np.concatenate([x, x[:, ::-1]])   # 6 rows: axis 0 stays short (IREE's sort without native loops)
    b = rng.normal(size=(2, 301)) > 0
    assert_same(pyjitc.jit(sorts_)(x, b), numpy_result(sorts_, x, b))


# ---------------------------------------------------------------- SciPy routines NumPy-level library code calls
try:
    from scipy import special as scipy_special
    from scipy.linalg import get_blas_funcs, norm as scipy_norm
except ImportError:   # the `corpus` extra installs SciPy
    scipy_special = None


def scipy_routines(x, y, s, big):
    nrm2 = get_blas_funcs("nrm2", dtype=x.dtype, ilp64="preferred")
    return (scipy_special.rel_entr(x, y), scipy_special.rel_entr(x, s), scipy_special.rel_entr(s, 2.0),
            scipy_special.rel_entr(np.arange(4), 2), nrm2(y), nrm2(big), nrm2(x * 0), nrm2(np.abs(x)),
            scipy_norm(x, check_finite=False), scipy_special.erf(x), scipy_special.erfc(y), scipy_special.erf(s))


# the registered names these calls reach (get_blas_funcs returns the f2py routine of the dtype)
SCIPY_NAMES = ("scipy.special.rel_entr", "scipy.special.erf", "scipy.special.erfc", "scipy.linalg.blas.get_blas_funcs", "scipy.linalg._fblas.snrm2",
               "scipy.linalg._fblas.dnrm2")


@pytest.mark.skipif(scipy_special is None, reason="SciPy is not installed")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scipy_rel_entr_and_blas_nrm2_match_scipy(dtype):
    f = pyjitc.jit(scipy_routines)
    x = np.array([0.5, -1.25, 0.0, 3.0, -0.0, 2.0, np.inf, 1.0], dtype)
    y = np.array([1.5, 0.0, np.nan, 2.0, 0.25, 7.0, 1.0, np.inf], dtype)
    big = np.array([1e30, -3e30, 2e30] if dtype == np.float32 else [1e200, -3e200, 2e200], dtype)
    for s in (0.5, 0.0):
        assert_same_call(f, scipy_routines, x, y, s, big)
        assert_same_call(f, scipy_routines, x, np.nan_to_num(y), s, big)   # nrm2: inf, not NaN
    assert f.cache_info().misses == 1
    from pyjitc.frontend import registry
    assert set(SCIPY_NAMES) == {n for n in registry.FUNCTIONS if n.startswith("scipy.")}
    assert_same_call(f, scipy_routines, x, np.nan_to_num(y), 0.5, big / 1e300 if dtype == np.float64 else big / 1e60)


def argmax_position(A, order):
    return np.unravel_index(A.argmax(), A.shape), np.unravel_index(np.array([[1, 5], [7, 0]]), (2, 4), order=order)


def unravel_run_time(i, rows):
    return np.unravel_index(i, (rows, 4))


@pytest.mark.parametrize("order", ["C", "F"])
def test_unravel_index_matches_numpy_and_raises_as_numpy_out_of_range(order):
    A = np.random.default_rng(3).random((5, 6))
    assert_same(pyjitc.jit(argmax_position)(A, order), argmax_position(A, order))
    f = pyjitc.jit(unravel_run_time)
    assert_same(f(np.int64(7), 3), unravel_run_time(np.int64(7), 3))
    with pytest.raises(pyjitc.RunError, match="ValueError: index out of bounds"):
        f(np.int64(12), 3)



def ravel_multi_index_forms(i):
    return (np.ravel_multi_index((np.array([0, 2]), np.array([1, 3])), (3, 4)),
            np.ravel_multi_index((1, 2), (3, 4), order="F"), np.ravel_multi_index((i, 1), (3, 4)))


def test_ravel_multi_index_matches_numpy_and_raises_as_numpy_out_of_range():
    f = pyjitc.jit(ravel_multi_index_forms)
    assert_same(f(np.int64(2)), ravel_multi_index_forms(np.int64(2)))
    with pytest.raises(pyjitc.RunError, match="ValueError: invalid entry in coordinates array"):
        f(np.int64(3))


def digitize_run_time_bins(x, bins):
    return np.digitize(x, bins), np.digitize(x, bins, right=True)


def test_digitize_with_run_time_bins_matches_numpy_and_raises_where_numpy_would():
    x = np.array([-1.0, 0.0, 0.25, 0.5, 2.0, np.nan, np.inf])
    f = pyjitc.jit(digitize_run_time_bins)
    for bins in (np.array([0.0, 0.25, 1.0]), np.array([1.0, 0.25, 0.25, 0.0]), np.array([0.5, 0.5])):
        assert_same(f(x, bins), digitize_run_time_bins(x, bins))
    with pytest.raises(pyjitc.RunError, match="ValueError: bins must be monotonically increasing or decreasing"):
        f(x, np.array([0.0, 1.0, 0.5]))
    with pytest.raises(pyjitc.RunError, match="NaN in bins"):   # a located error, never NumPy's unspecified order
        f(x, np.array([0.0, np.nan, 1.0]))
    with pytest.raises(pyjitc.ShapeError, match="monotonically"):   # compile-time bins: a located error
        pyjitc.jit(lambda v: np.digitize(v, [0.0, 1.0, 0.5]))(x)


def nan_arg_extrema(x):
    return np.nanargmax(x), np.nanargmin(x, axis=0)


def test_nanargmax_of_an_all_nan_slice_raises_as_numpy():
    f = pyjitc.jit(nan_arg_extrema)
    x = np.array([[np.nan, 1.0], [2.0, np.nan]])
    assert_same(f(x), nan_arg_extrema(x))
    with pytest.raises(pyjitc.RunError, match="All-NaN slice encountered"):
        f(np.array([[np.nan, 1.0], [np.nan, 2.0]]))


def put_run_time_positions(x, idx, cond):
    y = x.copy()
    np.put(y, idx, [10.0, 20.0])
    return y, np.choose(cond, [x, y])


def test_put_and_choose_check_run_time_positions_as_numpy_does():
    x = np.arange(6.0)
    f = pyjitc.jit(put_run_time_positions)
    for idx in (np.array([0, -1, 3]), np.array([5, 5])):   # negative positions wrap; the last write wins
        cond = np.array([0, 1, 1, 0, 1, 0])
        assert_same(f(x, idx, cond), put_run_time_positions(x, idx, cond))
    with pytest.raises(pyjitc.RunError, match="IndexError: index out of bounds"):
        f(x, np.array([6]), np.zeros(6, dtype=np.int64))
    with pytest.raises(pyjitc.RunError, match="ValueError: invalid entry in choice array"):
        f(x, np.array([0]), np.full(6, 2))


def test_insert_and_compress_need_compile_time_positions():
    with pytest.raises(pyjitc.JitError, match="insert: the positions .* must be known at compile time"):
        pyjitc.jit(lambda v, i: np.insert(v, i, 0.0))(np.arange(3.0), np.int64(1))


def grids_and_outs(x, n):
    xi, yi = np.mgrid[0:n, 0:3]   # run-time n: made static
    xi.shape = yi.shape = 3 * n
    out = np.ndarray((3 * n,), dtype=x.dtype)
    np.multiply(x, 2.0, out)   # out= given by position
    np.add(out, xi, out)
    np.logical_not(x > 0, x > 1)
    return xi, yi, out


def test_setting_shape_positional_out_and_grids_of_run_time_sizes_match_numpy():
    x = np.linspace(-1, 2, 12)
    assert_same_call(pyjitc.jit(grids_and_outs), grids_and_outs, x, 4)


def reshape_a_shared_array(x):
    y = np.zeros(6)
    z = y
    y.shape = (2, 3)
    return z


def reshape_the_argument(x):
    x.shape = (3, 2)
    return x


@pytest.mark.parametrize("fn, message", [
    (reshape_the_argument, "including the caller's"),
    (reshape_a_shared_array, "through 'z' too, which holds the same array"),
])
def test_setting_shape_where_others_would_see_it_is_a_located_refusal(fn, message):
    with pytest.raises(pyjitc.NotSupportedError, match=message) as e:
        pyjitc.jit(fn)(np.zeros(6))
    assert ".shape = ..." in str(e.value) and "reshape" in str(e.value) and ".py:" in str(e.value)


def through_flat(a, b):
    n = a.shape[0]
    c = np.zeros((n, n))
    c.flat[::n + 1] = 1.0          # a made array: the write is kept
    a.flat[::n + 1] = 5.0          # an argument: the caller sees it
    b.T.flat[2:5] = -1.0           # C order of the transposed view, written into b
    s = 0.0
    for v in a.flat:
        s += v
    d = np.empty((2, 3))
    d.flat = np.arange(6.0)
    e = np.empty(4)
    e.flat = 2.5
    return c, s, a.T.flat[3], a.flat[[1, 4]], d, e, np.asarray(b.T.flat) + 1


def test_flat_reads_writes_and_loops_follow_c_order_and_reach_the_array():
    assert_same_call(pyjitc.jit(through_flat), through_flat, np.arange(16.0).reshape(4, 4),
                     np.arange(12.0).reshape(3, 4))


def test_assigning_fewer_values_to_flat_than_elements_is_a_located_refusal():
    def repeat(a):
        a.flat = np.array([1.0, 2.0])
        return a
    with pytest.raises(pyjitc.NotSupportedError, match="NumPy repeats them"):
        pyjitc.jit(repeat)(np.zeros(6))


def steps(x, y):
    return np.nextafter(x, y), np.spacing(x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nextafter_and_spacing_are_exact_at_zeros_subnormals_extremes_and_nan(dtype):
    fi = np.finfo(dtype)
    v = np.array([0.0, -0.0, 1.0, -1.0, 1.5, fi.max, -fi.max, fi.tiny, -fi.tiny, fi.smallest_subnormal,
                  -fi.smallest_subnormal, np.inf, -np.inf, np.nan, 1e-3, 2.0 ** -20], dtype=dtype)
    x, y = (np.ascontiguousarray(a.ravel()) for a in np.meshgrid(v, v))
    got = pyjitc.jit(steps)(x, y)
    with np.errstate(all="ignore"):
        want = steps(x, y)
    for g, w in zip(got, want):   # exact, signed zeros and subnormals included
        assert g.dtype == w.dtype and np.array_equal(g, w, equal_nan=True)
        numbers = ~np.isnan(w)
        assert np.array_equal(np.signbit(g[numbers]), np.signbit(w[numbers]))


def test_nextafter_of_float16_matches_numpy_and_its_spacing_is_refused():
    v = np.array([0.0, -0.0, 1.0, -2.5, 6.1e-5, 65504.0, np.inf, np.nan], dtype=np.float16)
    x, y = (np.ascontiguousarray(a.ravel()) for a in np.meshgrid(v, v))
    with np.errstate(all="ignore"):
        assert_same(pyjitc.jit(lambda x, y: np.nextafter(x, y))(x, y), np.nextafter(x, y))
    with pytest.raises(pyjitc.NotSupportedError, match="spacing of float16"):
        pyjitc.jit(lambda x: np.spacing(x))(v)


def integer_powers(r, k, e):
    n = r ** k                      # Python ints known at run time
    grid = np.mgrid[0:r, 0:n]       # ... and made static where a shape needs them
    return n, grid.shape, np.arange(4) ** e, np.transpose(grid, axes=(0, 2, 1)).shape


def test_integer_power_with_a_run_time_exponent_matches_numpy_and_raises_where_numpy_would():
    f = pyjitc.jit(integer_powers)
    for r, k in ((2, 3), (3, 2)):
        assert_same(f(r, k, np.array(2)), integer_powers(r, k, np.array(2)))
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        integer_powers(2, 3, np.array(-1))
    with pytest.raises(pyjitc.RunError, match="Integers to negative integer powers"):
        f(2, 3, np.array(-1))


def real_code_idioms(x, idx, n):
    y = np.empty_like(x)
    np.clip(x, 0.2, 0.8, out=y)
    vals = [x[0], x[1], x[2]]

    def fact(k):
        return 1 if k <= 1 else k * fact(k - 1)
    return (np.take(x, idx, mode="wrap"), np.take(x, idx, mode="clip"), y, max(vals), min(vals),
            np.array([i * i for i in range(n)]), sum(k for k in range(n)), fact(n))


def test_take_modes_clip_out_max_of_a_list_comprehensions_and_recursion_over_run_time_numbers():
    # the recursion's depth comes from n: made static (it took 2**24 retries of both branches of
    # `1 if k <= 1 else k * fact(k - 1)` before); so is the comprehension's length
    x = np.linspace(0.0, 1.0, 7)
    f = pyjitc.jit(real_code_idioms)
    for n in (4, 6):
        assert_same_call(f, real_code_idioms, x, np.array([-9, -1, 0, 3, 6, 7, 15]), n)


def sliding_windows(x, A):
    from numpy.lib.stride_tricks import sliding_window_view
    w = np.lib.stride_tricks.sliding_window_view(x, 4)
    return (w, w.mean(axis=-1), sliding_window_view(A, (2, 3)), sliding_window_view(A, 3, axis=0).max(axis=-1),
            sliding_window_view(A, (2, 2), axis=(1, 0)), sliding_window_view(A, (3, 3)).sum(axis=(-2, -1)))


@settings(max_examples=10, deadline=None)
@given(st.integers(4, 9), st.integers(3, 6))
def test_sliding_window_views_hold_numpys_windows_over_any_axes(n, m):
    rng = np.random.default_rng(n * 10 + m)
    assert_same_call(pyjitc.jit(sliding_windows), sliding_windows, rng.random(n + 2), rng.random((n, m)))


def run_time_math(a, b, order):
    return (math.isclose(a, b), math.isclose(a, b, rel_tol=0.1), math.isclose(a, b, abs_tol=0.5), math.copysign(2.0, a - b),
            math.isnan(a - b), math.isinf(a * 1e308), math.isfinite(a), np.searchsorted(order, a, sorter=np.argsort(order)),
            np.searchsorted(order, [a, b], side="right", sorter=np.argsort(order, kind="stable")))


@pytest.mark.parametrize("a, b", [(1.0, 1.0 + 1e-12), (1.0, 1.05), (1.0, 1.3), (3.0, -0.1), (0.0, 0.0),
                                  (float("inf"), float("inf")), (float("nan"), 1.0), (-2.0, float("inf"))])
def test_math_isclose_copysign_and_the_float_tests_on_run_time_numbers_and_searchsorted_with_a_sorter(a, b):
    order = np.array([0.5, -1.0, 3.0, 1.0, 1.0, 2.0])
    with np.errstate(all="ignore"):
        assert_same_call(RUN_TIME_MATH, run_time_math, a, b, order)


RUN_TIME_MATH = pyjitc.jit(run_time_math)


def gauss_partial_pivoting(A, b):
    """Gaussian elimination with the row swap written as NumPy users write it: A[[i, p]] = A[[p, i]]
    (a list of run-time integers as the index)."""
    A, b = A.copy(), b.copy()
    n = A.shape[0]
    for i in range(n):
        p = i + np.argmax(np.abs(A[i:, i]))
        if p != i:
            A[[i, p]] = A[[p, i]]
            b[[i, p]] = b[[p, i]]
        for r in range(i + 1, n):
            f = A[r, i] / A[i, i]
            A[r, i:] -= f * A[i, i:]
            b[r] -= f * b[i]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x, A


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_row_swaps_indexed_by_a_list_of_run_time_integers_match_numpy(seed):
    rng = np.random.default_rng(seed)
    A, b = rng.standard_normal((6, 6)), rng.standard_normal(6)
    assert_same_call(GAUSS, gauss_partial_pivoting, A, b, accumulate=True)


GAUSS = pyjitc.jit(gauss_partial_pivoting)


def inverse_trig_and_friends(x, y):
    return (math.asin(x), math.acos(x), math.atanh(x), math.asinh(y), math.acosh(1.0 + y * y), math.degrees(y),
            math.radians(y), math.exp2(y), math.cbrt(-y), math.fmod(y, 0.75))


@pytest.mark.parametrize("x, y", [(0.3, 2.5), (-0.99, -1.25), (0.0, 0.0)])
def test_math_inverse_trig_and_others_on_run_time_numbers_match_python(x, y):
    assert_same_call(INVERSE_TRIG, inverse_trig_and_friends, x, y)


def test_math_domain_errors_on_run_time_numbers_raise_as_python_does():
    with pytest.raises(ValueError, match="math domain error"):
        INVERSE_TRIG(1.5, 0.0)
    with pytest.raises(ValueError, match="math domain error"):
        inverse_trig_and_friends(1.5, 0.0)


INVERSE_TRIG = pyjitc.jit(inverse_trig_and_friends)


def out_arguments(A, x, B):
    s = np.empty(A.shape[1])
    np.sum(A, axis=0, out=s)                 # reductions write into out= (cast as NumPy casts)
    m = np.zeros(A.shape[0], dtype=np.int64)
    A.max(axis=1, out=m)
    k = np.zeros((1, A.shape[1]))
    np.mean(A, axis=0, keepdims=True, out=k)
    c = np.empty(x.shape, dtype=np.float32)
    np.cumsum(x, out=c)
    i = np.zeros((), dtype=np.int64)
    np.argmax(x, out=i)
    C = np.empty((A.shape[0], B.shape[1]))
    np.matmul(A, B, out=C)
    D = np.zeros((A.shape[0], B.shape[1]))
    np.dot(A, B, out=D)
    row = np.zeros((2, B.shape[1]))
    np.dot(A[0], B, out=row[1])              # into a view: row sees it
    y = np.full(x.shape, -1.0)
    np.sqrt(x, out=y, where=x > 0)           # where= with out=: the other places keep y's values
    return s, m, k, c, i, C, D, row, y


def test_out_arguments_of_reductions_scans_contractions_and_where_match_numpy():
    rng = np.random.default_rng(7)
    A, x, B = rng.normal(size=(3, 4)) * 3, rng.normal(size=6), rng.normal(size=(4, 2))
    assert_same_call(pyjitc.jit(out_arguments), out_arguments, A, x, B)


def dot_into_float32(A, B):
    D = np.zeros((A.shape[0], B.shape[1]), dtype=np.float32)
    np.dot(A, B, out=D)
    return D


def test_out_of_another_dtype_is_refused_where_numpy_raises():
    A = np.ones((2, 3))
    with pytest.raises(ValueError):
        dot_into_float32(A, A.T)
    with pytest.raises(pyjitc.ShapeError, match="out="):
        pyjitc.jit(dot_into_float32)(A, A.T.copy())


def histograms_2d(x, y, w, xn):
    return (np.histogram2d(x, y, bins=4), np.histogram2d(xn, y, bins=[3, 5], range=[[-1, 1], [-2, 2]]),
            np.histogram2d(x, y, bins=(np.array([-2.0, 0.0, 0.5, 3.0]), 4), weights=w, density=True))


@given(st.integers(0, 2 ** 31))
def test_histogram2d_matches_numpy(seed):
    rng = np.random.default_rng(seed)
    x, y, w = rng.normal(size=40), rng.normal(size=40), rng.uniform(size=40)
    xn = x.copy()
    xn[rng.integers(0, 40)] = np.nan         # counted nowhere (range given: NumPy needs a finite one)
    y[rng.integers(0, 40)] = y.max()         # the last edge: in the last bin
    assert_same_call(HISTOGRAMS_2D, histograms_2d, x, y, w, xn)


HISTOGRAMS_2D = pyjitc.jit(histograms_2d)


def rolled_axes(A, axis):
    k = np.lib.array_utils.normalize_axis_index(axis, A.ndim)
    return np.rollaxis(A, 2, 0) * 1, np.rollaxis(A, -1) + 0, np.rollaxis(A, 0, 3) * 2, k


def test_rollaxis_and_normalize_axis_index_match_numpy():
    A = np.arange(24.0).reshape(2, 3, 4)
    for axis in (-1, 0, 2):
        assert_same_call(pyjitc.jit(rolled_axes, static_argnames="axis"), rolled_axes, A, axis)


def _norm1(v):
    return np.sqrt((v ** 2).sum())


def _top(v, k):
    return np.sort(v)[-k:]


def _bump(v):
    v += 1.0                                  # writes through the slice into the array, as in NumPy
    return v.sum()


def along_axes(M, T):
    return (np.apply_along_axis(np.sum, 1, M), np.apply_along_axis(_norm1, 0, M), np.apply_along_axis(_top, 1, M, 2),
            np.apply_along_axis(_top, 1, T, k=2), np.apply_along_axis(np.argmax, 0, M),
            np.apply_along_axis(np.cumsum, 1, M[:, :3]), np.apply_along_axis(_bump, 0, M), M)


def test_apply_along_axis_matches_numpy_including_writes_through_the_slices():
    rng = np.random.default_rng(3)
    M, T = rng.normal(size=(5, 4)), rng.normal(size=(2, 5, 3))
    assert_same_call(pyjitc.jit(along_axes), along_axes, M, T)


def table_from_comprehension(g, x):
    return np.array([np.exp(i * g) for i in range(40)]), np.array([x[i] * i for i in range(x.shape[0])])


def test_an_array_of_many_run_time_values_is_built_and_runs():
    # 40 values computed apart: IREE 3.13 bound each to one dispatch, and the call failed
    # ("binding count 40 > 32"); more than 16 single values are placed by selects (shapes.stack)
    x = np.linspace(0.0, 1.0, 33)
    assert_same(pyjitc.jit(table_from_comprehension)(0.05, x), table_from_comprehension(0.05, x))


def gamma_table(n, g):
    return np.array([(i / n) ** g for i in range(n)])


@pytest.mark.parametrize("n", [40, 64])
def test_a_table_of_many_float_powers_of_a_run_time_exponent_runs(n):
    # IREE joined the powers' scalar parts into one dispatch with a buffer each: the call failed
    # with "binding count 40 > 32"
    assert_same(pyjitc.jit(gamma_table)(n, 2.2), gamma_table(n, 2.2))


def histograms_with_integer_edges(x, w):
    return np.histogram(x, bins=[0, 1, 2, 3]), np.histogram(x, bins=np.arange(4), weights=w), \
        np.histogram(x, bins=np.array([0, 1, 2, 3]), density=True), np.histogram(x.astype(np.float32), bins=[0, 1, 2, 3]), \
        np.histogram((x * 10).astype(np.int64), bins=[0.5, 10.5, 30.5])


def test_histogram_compares_data_and_integer_edges_in_their_common_type():
    # float data was cast to the edges' int dtype: -0.5 and 3.5 were counted in the end bins
    x = np.array([-0.5, -1e-10, 0.5, 3.0, 3.0000001, 3.5, 100.0, 1.0, 2.0])
    assert_same(pyjitc.jit(histograms_with_integer_edges)(x, x * 2), histograms_with_integer_edges(x, x * 2))


def histograms_of_many_values(x, y, w):
    finite = np.where(np.isnan(x), 0.0, x)     # (autodetected edges: NaN raises ValueError, as in NumPy)
    return np.histogram(finite, bins=7), np.histogram(x, bins=np.linspace(-2, 2, 9), weights=w, density=True), \
        np.histogram2d(finite, y, bins=5), np.histogram2d(x, y, bins=[np.linspace(-2, 2, 5), np.array([-1.0, 0.0, 0.5, 3.0])],
                                                          weights=w)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_histograms_by_bin_index_count_edges_nan_and_outliers_as_numpy(seed):
    # each bin is now found by a binary search over the edges and counted by a scatter-add (a
    # table of (values, bins) comparisons: 200,000 values in 100 bins took 25 ms, NumPy 1.5 ms)
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=500), 1)          # many values exactly on edges
    y = rng.normal(size=500)
    x[:5] = [np.nan, -2.0, 2.0, 5.0, -0.5]
    w = rng.random(500)
    assert_same(pyjitc.jit(histograms_of_many_values)(x, y, w), histograms_of_many_values(x, y, w), accumulate=True)


def dicts_tolists_and_sizes(x, b, z):
    s = 0.0
    for v in x[0].tolist():
        s += v
    return dict(zip(["a", "b", "c"], x[0])), dict(a=x[0, 0]), dict([("k", x[1, 1])]), dict({"z": x[1, 2]}, w=1), \
        x.tolist(), b.tolist(), z.tolist(), s, x.nbytes, x.itemsize, x[::2].nbytes, b.itemsize


def test_dict_tolist_nbytes_and_itemsize_are_pythons_and_numpys():
    # each was refused: dict() "not supported", .tolist() forbidden, .nbytes/.itemsize "not supported yet"
    x = np.arange(6.0).reshape(2, 3)
    assert_same(pyjitc.jit(dicts_tolists_and_sizes)(x, np.array([True, False]), np.array([1 + 2j])),
                dicts_tolists_and_sizes(x, np.array([True, False]), np.array([1 + 2j])))


def nan_medians_and_quantiles(x, X):
    return (np.nanmedian(x), np.nanmedian(X, axis=0), np.nanmedian(X, axis=1, keepdims=True), np.nanpercentile(x, 90),
            np.nanpercentile(X, [5, 50, 95], axis=0), np.nanquantile(X, 0.25), np.nanquantile(x.astype(np.float32), 0.9),
            np.nanmedian(np.arange(6).reshape(2, 3), axis=1), np.nanpercentile(X, 30.0, axis=1))


@pytest.mark.parametrize("shape", [(7, 5), (1, 3), (10, 4), (2, 1)])
def test_nanmedian_and_nan_quantiles_leave_nan_out_of_each_lane_as_numpy(shape):
    # each was refused (NumPy's own code stopped at a data-dependent selection)
    rng = np.random.default_rng(shape[0])
    X = rng.random(shape)
    X[0, :] = np.nan          # a lane of NaN only (NaN, as NumPy's, which warns)
    X[rng.random(shape) < 0.3] = np.nan
    x = X.ravel().copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # (NumPy warns of the all-NaN lane)
        want = nan_medians_and_quantiles(x, X)
    assert_same(pyjitc.jit(nan_medians_and_quantiles)(x, X), want)


def float32_nan_quantiles(X):
    return np.nanpercentile(X, 95, axis=1), np.nanquantile(X, 0.3, axis=1), np.nanpercentile(X, 50.5, axis=1)


def test_nan_quantiles_of_float32_lanes_are_numpys_to_the_bit():
    # the virtual index and its fraction were computed in float32: an ulp or two off NumPy's for
    # about 40% of float32 lanes holding NaN (a probe's winsorizing); NumPy computes them in
    # float64 and uses the fraction as a Python float
    rng = np.random.default_rng(40)
    X = rng.standard_normal((200, 6)).astype(np.float32)
    X[rng.random(X.shape) < 0.3] = np.nan
    X[0] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = float32_nan_quantiles(X)
    got = pyjitc.jit(float32_nan_quantiles)(X)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype == np.float32
        np.testing.assert_array_equal(g, w)


def counts_of_nothing(x, i):
    return (np.histogram(x, bins=3, range=(0, 1))[0], np.histogram(x, bins=[0.0, 0.5, 1.0]),
            np.bincount(i, minlength=3), np.bincount(i, weights=x, minlength=2), np.histogram(x, bins=4))


def test_histograms_and_bincounts_of_empty_inputs_match_numpy():
    # a scatter with no update crashed iree-compile (probe R); np.bincount of nothing is NumPy's
    # int zeros even with float weights
    assert_same(pyjitc.jit(counts_of_nothing)(np.zeros(0), np.zeros(0, np.int64)),
                counts_of_nothing(np.zeros(0), np.zeros(0, np.int64)))


def reductions_of_lists_of_values(x):
    return (np.mean([x.sum(), x.max()]), np.sum([x.sum(), x.max()]), np.std([x.sum(), x.max(), 1.0]),
            np.cumsum([x[0], x[1]]), np.max([x.sum(), x.max()]), np.argmax([x[0], x[3], x[1]]),
            np.mean([x, x]), np.mean((x[0], x[1])), np.mean([x.sum()]), np.mean([1.0, 2.0, x.sum()]),
            np.min([1, x[2]]), np.var([x[0], 2]), np.prod([x[1], 3]), np.any([x[0] > 1, False]),
            np.ptp([x[0], x[3]]), np.sort([x[3], x[0]]), np.round([x[0] / 3, 2.5]))


def test_numpy_functions_of_python_lists_of_run_time_values_match_numpy():
    # `np.mean(fold_errors)` over a list of computed values: "mean: unsupported operand type(s)
    # for +: 'Traced' and 'Traced'" (NumPy was asked to compute it while compiling; probe R)
    for x in (np.arange(4.0), np.array([3, -1, 4, 1])):
        assert_same(pyjitc.jit(reductions_of_lists_of_values)(x), reductions_of_lists_of_values(x))


def confusion_matrix(y_true, y_pred):
    cm = np.zeros((3, 3), dtype=int)
    np.add.at(cm, (y_true, y_pred), 1)
    return cm


def updates_at_pairs_of_positions(i, j, w):
    H = np.zeros((4, 5))
    np.add.at(H, (i, j), w)
    np.maximum.at(H, (i, 0), 0.5 * w)
    np.subtract.at(H, (-1, j), w)
    A = np.zeros((3, 4, 2))
    np.add.at(A, (i[:, None] % 3, j[None, :] % 4), np.ones(2))
    return H, A


def test_ufunc_at_with_a_tuple_of_index_arrays_matches_numpy():
    # np.add.at(cm, (y_true, y_pred), 1), the confusion-matrix idiom: "indices along one axis are
    # supported" (probe R)
    rng = np.random.default_rng(4)
    yt, yp = rng.integers(0, 3, 50), rng.integers(0, 3, 50)
    assert_same(pyjitc.jit(confusion_matrix)(yt, yp), confusion_matrix(yt, yp))
    i, j, w = rng.integers(-4, 4, 12), rng.integers(0, 5, 12), rng.standard_normal(12)
    assert_same(pyjitc.jit(updates_at_pairs_of_positions)(i, j, w), updates_at_pairs_of_positions(i, j, w))
    with pytest.raises(pyjitc.RunError, match="IndexError"):
        pyjitc.jit(confusion_matrix)(yt, yp + 1)


def convolutions_in_every_mode(x, w):
    return (np.convolve(x, w), np.convolve(x, w, "same"), np.convolve(x, w, "valid"),
            np.correlate(x, w, "same"), np.correlate(w, x, "full"))


@pytest.mark.parametrize("n, k", [(1, 1), (5, 1), (5, 4), (4, 5), (9, 3), (30, 7), (31, 8), (40, 12), (300, 150),
                                  (140, 260), (17, 17), (60, 17), (18, 61), (200, 33)])
def test_convolutions_of_many_lengths_match_numpy_with_infinities_at_the_ends(n, k):
    # the outputs every tap overlaps are now computed without pads (mode="same" of 1e6 values by 25
    # taps: 157 ms, now 3.2 ms; NumPy 10.6); the ends keep NumPy's rule of multiplying only the
    # overlapping elements (an inf at the edge gives no NaN from a pad's 0). More than 128 taps:
    # one dot product per output in a native loop (calculus.correlation_loop)
    rng = np.random.default_rng(n * 100 + k)
    x, w = rng.standard_normal(n), rng.standard_normal(k)
    x[0], x[-1] = np.inf, -np.inf
    assert_same(pyjitc.jit(convolutions_in_every_mode)(x, w), convolutions_in_every_mode(x, w))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_convolutions_of_more_than_16_float_taps_are_numpys_with_non_finite_values(dtype):
    """More than 16 float taps: one convolution for the outputs every tap overlaps (compiled in
    ~2 s where 128 shifted products took 18 s), windows at the ends. An inf or NaN inside x or w
    spreads to exactly the outputs whose products NumPy makes."""
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal(90).astype(dtype), rng.standard_normal(23).astype(dtype)
    x[40], w[5] = np.inf, np.nan
    x[0] = -np.inf   # (summed in another order than NumPy's: its documented reduction tolerance)
    assert_same(pyjitc.jit(convolutions_in_every_mode)(x, w), convolutions_in_every_mode(x, w), accumulate=True)
    x, w = rng.standard_normal(90).astype(dtype), rng.standard_normal(23).astype(dtype)
    assert_same(pyjitc.jit(convolutions_in_every_mode)(x, w), convolutions_in_every_mode(x, w), accumulate=True)


def test_long_integer_convolutions_are_exact():
    rng = np.random.default_rng(5)
    for dtype in (np.int64, np.int32):
        x, w = rng.integers(-50, 50, 260).astype(dtype), rng.integers(-50, 50, 190).astype(dtype)
        assert_same(pyjitc.jit(convolutions_in_every_mode)(x, w), convolutions_in_every_mode(x, w))


def histograms_of_equal_bins(x):
    return np.histogram(x, bins=7, range=(-1, 1)), np.histogram(x, bins=5), np.histogram(x, bins=3, density=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_histograms_of_equal_bins_put_values_at_and_beside_edges_where_numpy_does(dtype):
    # equal bins are now NumPy's fast path (the bin computed, then moved by one against its edges;
    # 1e6 values in 50 bins: 25 -> 3.1 ms, NumPy 6.6) instead of a binary search over the edges
    edges = np.linspace(-1, 1, 8).astype(dtype) if dtype != np.int64 else np.arange(-3, 4)
    x = np.concatenate([edges, np.nextafter(edges, -np.inf).astype(dtype) if dtype != np.int64 else edges - 1,
                        np.nextafter(edges, np.inf).astype(dtype) if dtype != np.int64 else edges + 1,
                        np.array([0, 5, -5], dtype)]).astype(dtype)
    assert_same(pyjitc.jit(histograms_of_equal_bins)(x), histograms_of_equal_bins(x))


def ufuncs_into_outputs_of_other_dtypes(x, y):
    f = np.zeros(3)
    np.add(x, 1, out=f)
    h = np.zeros(3, np.int32)
    np.add(x, x, out=h)
    g = np.zeros(3, np.float32)
    np.sqrt(x, out=g)
    return f, h, g


def an_output_of_the_wrong_shape(a):
    np.multiply(a, 2, out=a[::2])
    return a


def test_ufunc_outputs_cast_by_numpys_same_kind_rule():
    # out= of another dtype was refused where NumPy casts (same_kind); an out= of the wrong shape was
    # an internal error (probe T)
    x = np.arange(3)
    assert_same_call(pyjitc.jit(ufuncs_into_outputs_of_other_dtypes), ufuncs_into_outputs_of_other_dtypes, x, x)
    with pytest.raises(pyjitc.JitError, match="non-broadcastable output operand"):
        pyjitc.jit(an_output_of_the_wrong_shape)(np.arange(10))
    with pytest.raises(pyjitc.JitError, match="Cannot cast ufunc 'add' output"):
        pyjitc.jit(lambda a: np.add(a, 0.5, out=a))(np.arange(3))


def rounded_into_outputs(x, y):
    np.round(x / 3, 1, out=x)
    np.around(x, 2, out=y)
    return x, y


def test_np_round_writes_into_out_as_numpy_does():
    # "round: out= is not supported" (probe T); a float result into an int out= is NumPy's error
    assert_same_call(pyjitc.jit(rounded_into_outputs), rounded_into_outputs, np.arange(5.0), np.zeros(5))
    with pytest.raises(pyjitc.JitError, match="same_kind"):
        pyjitc.jit(rounded_into_outputs)(np.arange(5.0), np.zeros(5, np.int64))


def ufuncs_with_a_casting_rule(x, f):
    np.add(x, 1.5, out=x, casting="unsafe")
    np.multiply(f, 2, out=f, casting="safe")
    return x, f, np.add(x, 1.5, casting="unsafe")


def test_ufunc_casting_rules_with_out_match_numpy():
    # `np.add(x, 1.5, out=x, casting="unsafe")`: "the arguments casting are not supported" (probe T)
    assert_same_call(pyjitc.jit(ufuncs_with_a_casting_rule), ufuncs_with_a_casting_rule, np.arange(4), np.arange(4.0))
    with pytest.raises(pyjitc.JitError, match="casting rule 'safe'"):
        pyjitc.jit(lambda x: np.add(x, 1.5, out=x, casting="safe"))(np.arange(4))


def operator_methods_and_polyint(p, q):
    return (p.__truediv__(q), p.__radd__(1), p.__neg__(), p.__lt__(q), p.__matmul__(q), q.__rpow__(2),
            np.polyint(p), np.polyint(p, 2, [1.0, 2.0]))


def test_ndarray_operator_methods_are_the_operators():
    # p.__truediv__(q) ("the array attribute .__truediv__ is not supported"), so NumPy's own
    # np.polyint was refused (probe S)
    p, q = np.array([3.0, 2.0, 1.0]), np.array([1.0, 2.0, 4.0])
    assert_same(pyjitc.jit(operator_methods_and_polyint)(p, q), operator_methods_and_polyint(p, q))


def histogram_by_edges(x, edges):
    return np.histogram(x, edges)


def histogram_density(x, edges):
    return np.histogram(x, edges, density=True)[0]


@pytest.mark.parametrize("edges", [np.linspace(0, 1, 11), np.array([0, 1, 3]), np.array([0.2, 0.5, 0.9, 1.0]),
                                   np.array([1.0])])
def test_histogram_edges_known_only_at_run_time_count_as_numpy_and_come_back_as_the_argument(edges):
    # edges passed as an argument were refused ("bins must be known at compile time"; a probe of
    # hand-written ML code): the counts' length is fixed by the edges' shape
    x = np.random.default_rng(0).random(200) * 1.2
    counts, back = pyjitc.jit(histogram_by_edges)(x, edges)
    assert_same((counts, back), histogram_by_edges(x, edges))
    assert back is edges
    assert_same(pyjitc.jit(histogram_density)(x, edges), histogram_density(x, edges))
    with pytest.raises(ValueError, match="must increase monotonically"):
        pyjitc.jit(histogram_by_edges)(x, np.array([0.5, 0.1, 0.9]))


def add_at(a, i, b):
    np.add.at(a, i, b)
    return a


def subtract_at_selected(a, i, b):
    np.subtract.at(a, i[b > 0.5], b[b > 0.5])
    return a


def maximum_at(a, i, b):
    np.maximum.at(a, i, b)
    return a


def minimum_at(a, i, b):
    np.minimum.at(a, i, b)
    return a


def counts_by_pair(yt, yp, k):
    return np.bincount(yt * k + yp, minlength=k * k).reshape(k, k)


def test_ufunc_at_and_bincount_add_each_update_in_numpys_order():
    # the updates were summed first and then added (1e16 + 1 + 1 gave 1e16 + 2, NumPy 1e16); an
    # entry a selection left out added 0 (-0.0 became 0.0); np.maximum.at compared every position
    # with every update (1e5 updates into 100 slots: 28 ms, NumPy 0.5 ms). Each is one scatter into
    # the array itself, whose updates IREE's CPU code applies in order
    assert_same_call(pyjitc.jit(add_at), add_at, np.array([1e16, 0.0, -0.0]), np.array([0, 0, 1]),
                     np.array([1.0, 1.0, 2.0]))
    rng = np.random.default_rng(0)
    a = np.array([-0.0, 1.0, 2.0, -0.0])
    assert_same_call(pyjitc.jit(subtract_at_selected), subtract_at_selected, a, rng.integers(0, 4, 40), rng.random(40))
    for fn in (maximum_at, minimum_at):
        a, i, b = rng.normal(size=100), rng.integers(-100, 100, 100_000), rng.normal(size=100_000)
        b[::997] = np.nan
        assert_same_call(pyjitc.jit(fn), fn, a, i, b)
        assert_same_call(pyjitc.jit(fn), fn, rng.integers(0, 9, (5, 2)), np.array([0, 4, 4]),
                         rng.integers(-9, 19, (3, 2)))
    yt, yp = rng.integers(0, 5, 10_000), rng.integers(0, 5, 10_000)
    assert_same(pyjitc.jit(counts_by_pair)(yt, yp, 5), counts_by_pair(yt, yp, 5))
    x, w = rng.integers(0, 1000, 200_000), rng.random(200_000) * 10.0 ** rng.integers(-8, 8, 200_000)
    assert_same(pyjitc.jit(add_at)(np.zeros(1000), x, w), add_at(np.zeros(1000), x, w))   # bit for bit


def histogram2d_of_edges_given(x, y, xe, ye, w):
    H, a, b = np.histogram2d(x, y, bins=[xe, ye])
    return H, a, b, np.histogram2d(x, y, bins=(xe, ye), weights=w, density=True)[0]


def histogram2d_of_quantile_edges(x, y):
    return np.histogram2d(x, y, bins=[np.linspace(x.min(), x.max(), 5), np.quantile(y, [0.0, 0.25, 0.5, 0.75, 1.0])])


def test_histogram2d_with_edges_known_only_at_run_time_is_numpys():
    """`np.histogram2d(x, y, bins=[xe, ye])` with edges passed or computed was refused ("bins must
    be known at compile time") where np.histogram took them (probe AG). The edges come back as the
    arrays given; a falling edge is NumPy's ValueError."""
    rng = np.random.default_rng(12)
    x, y, w = rng.standard_normal(200), rng.standard_normal(200), rng.random(200)
    xe, ye = np.linspace(-2, 2, 6), np.array([-3, -1, 0, 0.5, 3.0])
    got = pyjitc.jit(histogram2d_of_edges_given)(x, y, xe, ye, w)
    assert_same(got, histogram2d_of_edges_given(x, y, xe, ye, w))
    assert got[1] is xe and got[2] is ye
    assert_same(pyjitc.jit(histogram2d_of_edges_given)(x, y, np.arange(-3, 4), ye.astype(np.float32), w),
                histogram2d_of_edges_given(x, y, np.arange(-3, 4), ye.astype(np.float32), w))
    assert_same(pyjitc.jit(histogram2d_of_quantile_edges)(x, y), histogram2d_of_quantile_edges(x, y))
    with pytest.raises(pyjitc.RunError, match=r"`bins\[0\]` must be monotonically increasing"):
        pyjitc.jit(histogram2d_of_edges_given)(x, y, np.array([0.0, 1.0, 0.5]), ye, w)


@pyjitc.jit
def segment_reductions(x, starts, A, rows):
    return (np.add.reduceat(x, starts), np.maximum.reduceat(x, starts), np.minimum.reduceat(x, starts),
            np.logical_or.reduceat(x > 3, starts), np.logical_and.reduceat(x > 1, starts),
            np.add.reduceat(A, rows, axis=1), np.add.reduceat(A.T, rows, axis=0))


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
@pytest.mark.parametrize("order", ["sorted", "unsorted"])
def test_reduceat_over_many_run_time_segments_is_numpys_for_any_order_of_starts(dtype, order):
    # CSR row sums (np.add.reduceat(p, indptr[:-1])) took segments x length work: 40k values in
    # 2000 rows 52 ms (NumPy 0.06 ms; probe AI). Non-decreasing starts now scatter each element
    # into its segment; decreasing ones (a segment of one element, overlaps) take the old way
    rng = np.random.default_rng(5)
    x = (rng.random(6000) * 5).astype(dtype)
    starts = np.sort(rng.integers(0, 6000, 300))
    starts[:3] = [0, 0, 7]                       # an empty segment: NumPy's x[start] alone
    rows = np.sort(rng.integers(0, 2000, 40))
    if order == "unsorted":
        starts[10], starts[11] = starts[11] + 5, starts[10]
        rows[5] = 1999
    A = (rng.random((9, 2000)) * 5).astype(dtype)
    assert_same(segment_reductions(x, starts, A, rows), segment_reductions.__wrapped__(x, starts, A, rows),
                accumulate=True)


def python_ints_into_narrow_integers(m, a):
    return (np.where(m, a, -1), np.where(m, 300, a), np.where(m, a, 2**64 - 1),
            np.select([m], [a], -1), np.select([m, ~m], [a, a // 2], -2**63))


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int32, np.uint64])
def test_where_and_selects_default_wrap_a_python_int_into_the_arrays_integer_type_as_numpy(dtype):
    m = np.array([True, False, True, False])
    assert_same_call(pyjitc.jit(python_ints_into_narrow_integers), python_ints_into_narrow_integers,
                     m, np.array([1, 2, 3, 4], dtype))


def python_int_past_64_bits(m, a):
    return np.where(m, a, 2**64)


def python_int_choice(m, a):
    return np.select([m], [-1], a)


@pytest.mark.parametrize("fn, error", [(python_int_past_64_bits, OverflowError), (python_int_choice, TypeError)])
def test_python_ints_numpy_cannot_put_into_the_array_raise_numpys_error_located(fn, error):
    m, a = np.array([True, False]), np.array([1, 2], np.uint8)
    with pytest.raises(error) as want:
        fn(m, a)
    with pytest.raises(error) as got:
        pyjitc.jit(fn)(m, a)
    assert str(want.value).split(":")[0] in str(got.value) and f"{__file__}:" in str(got.value)


def forward_fill(x):
    idx = np.where(~np.isnan(x), np.arange(x.shape[0]), 0)
    np.maximum.accumulate(idx, out=idx)
    return x[idx]


def accumulate_into(x):
    out = np.empty_like(x)
    r = np.add.accumulate(x, axis=1, out=out)
    narrow = np.zeros(x.shape, dtype=np.float32)
    np.multiply.accumulate(x, out=narrow)
    return r is out, out, narrow


def test_ufunc_accumulate_writes_into_out_as_numpy():
    # `np.maximum.accumulate(idx, out=idx)` (the forward fill people copy) was "out= is not supported"
    for x in (np.array([np.nan, 1.0, np.nan, np.nan, 4.0, np.nan]), np.arange(5.0)):
        assert_same_call(pyjitc.jit(forward_fill), forward_fill, x)
    assert_same_call(pyjitc.jit(accumulate_into), accumulate_into, np.arange(1.0, 7.0).reshape(2, 3))


def sized_by_the_data(x):
    return np.empty(int(x.sum()))


def test_np_empty_of_a_size_known_only_at_run_time_names_np_empty():
    # it said "np.zeros: its arguments must be known at compile time" (np.empty is made by np.zeros)
    with pytest.raises(pyjitc.JitError, match="np.empty: its arguments must be known at compile time") as e:
        pyjitc.jit(sized_by_the_data)(np.arange(3))
    assert f"{__file__}:" in str(e.value)


def products_of_unsigned_converted(rgb, x16, X32, w):
    gray = rgb.astype(np.float64) @ np.array([0.299, 0.587, 0.114])
    return (gray, np.einsum("ijk,k->ij", rgb.astype(np.float32), w.astype(np.float32)),
            np.tensordot(x16.astype(np.float64), w, axes=1), X32.astype(np.float64).T @ X32.astype(np.float64),
            np.dot(w, x16.astype(np.float64).T))


def test_unsigned_integers_converted_to_float_then_multiplied_are_not_read_as_signed():
    # IREE 3.13 folded the conversion into the product and widened the integers as signed: a
    # uint8 pixel of 200 became -56 in `rgb.astype(np.float64) @ weights` (probe AW)
    rng = np.random.default_rng(21)
    rgb = rng.integers(0, 256, (9, 7, 3)).astype(np.uint8)
    x16 = rng.integers(0, 65536, (5, 3)).astype(np.uint16)
    X32 = rng.integers(0, 2**32, (6, 4), dtype=np.uint32)
    w = rng.random(3)
    f = pyjitc.jit(products_of_unsigned_converted)
    assert_same(f(rgb, x16, X32, w), products_of_unsigned_converted(rgb, x16, X32, w), accumulate=True)


def packed_bits(bits, words):
    return (np.packbits(bits), np.packbits(bits, axis=-1, bitorder="little"), np.unpackbits(words),
            np.unpackbits(words, axis=0, count=-3, bitorder="little"), np.unpackbits(words, axis=-1, count=20),
            np.unpackbits(np.packbits(bits), count=bits.size).reshape(bits.shape))


@pytest.mark.parametrize("shape", [(13,), (3, 8), (2, 11)])
def test_packbits_and_unpackbits_are_numpys_in_both_bit_orders(shape):
    # (probe AX: a base64-like encoder's bit packing was "not supported yet")
    rng = np.random.default_rng(len(shape) * 10 + shape[-1])
    bits, words = rng.random(shape) > 0.5, rng.integers(0, 256, shape).astype(np.uint8)
    assert_same(pyjitc.jit(packed_bits)(bits, words), packed_bits(bits, words))


ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def base64_symbols(sextets):
    table = np.frombuffer(ALPHABET, dtype=np.uint8)
    return table[sextets], np.frombuffer(b"\x01\x02\x03\x04\x05\x06\x07\x08", dtype=np.uint16, count=2, offset=2)


def write_into_frombuffer(x):
    t = np.frombuffer(b"abc", dtype=np.uint8)
    t[0] = x[0]
    return t


def test_frombuffer_of_a_bytes_constant_is_numpys_and_read_only():
    # (probe AX: a base64 alphabet as np.frombuffer(b"...") was "not supported yet")
    s = np.random.default_rng(26).integers(0, 64, 40)
    assert_same(pyjitc.jit(base64_symbols)(s), base64_symbols(s))
    with pytest.raises(pyjitc.JitError, match=r"test_numpy_more.py:\d+:\d+: writing into the array np.frombuffer made"):
        pyjitc.jit(write_into_frombuffer)(np.arange(3, dtype=np.uint8))
