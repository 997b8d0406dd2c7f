"""Reductions, matmul/dot, reshape/transpose/astype and basic indexing agree with NumPy."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pyjitc
from tests.reference import assert_same, numpy_result
from tests.strategies import ALL, FLOATS, INTS, arrays

AXES = [None, 0, -1, (0, 1), (0, -1), 1]


@pyjitc.jit(static_argnames=("axis", "keepdims"))
def reductions(x, axis, keepdims):
    return (np.sum(x, axis=axis, keepdims=keepdims), np.max(x, axis=axis, keepdims=keepdims),
            np.min(x, axis=axis, keepdims=keepdims), np.mean(x, axis=axis, keepdims=keepdims),
            x.sum(axis, keepdims=keepdims))


@given(st.data())
def test_sum_max_min_mean_match_numpy_over_axes_keepdims_and_dtypes(data):
    dtype = data.draw(st.sampled_from(ALL))
    shape = data.draw(st.sampled_from([(3, 4), (2, 3, 2), (1, 5)]))
    axis = data.draw(st.sampled_from(AXES))
    keepdims = data.draw(st.booleans())
    bound = 100 if dtype in FLOATS else None
    x = data.draw(arrays(dtype, shape, allow_nan=data.draw(st.booleans()), min_value=-bound if bound else None,
                         max_value=bound))
    finite = np.abs(x[np.isfinite(x)].astype(np.float64)) if x.dtype.kind == "f" else np.abs(x.astype(np.float64))
    assert_same(reductions(x, axis, keepdims), numpy_result(reductions.__wrapped__, x, axis, keepdims),
                accumulate=True, scale=float(np.sum(finite)))


def test_max_of_an_empty_axis_is_a_compile_error_like_numpy_value_error():
    with pytest.raises(pyjitc.ShapeError, match="zero-size array to reduction operation maximum"):
        reductions(np.zeros((0, 3), np.float32), 0, False)


def test_reduction_axis_out_of_range_is_a_located_error():
    with pytest.raises(pyjitc.ShapeError, match="axis 2 is out of bounds") as e:
        reductions(np.zeros((2, 3), np.float32), 2, False)
    assert "test_reductions_shapes.py:15:" in str(e.value)


@pyjitc.jit
def mean_dtype(x):
    return np.mean(x, axis=0, dtype=np.float32), np.sum(x, dtype=np.int8)


def test_reduction_dtype_argument_matches_numpy():
    x = np.arange(12, dtype=np.int32).reshape(3, 4) * 20
    assert_same(mean_dtype(x), numpy_result(mean_dtype.__wrapped__, x), accumulate=True)


# ---------------------------------------------------------------- matmul / dot

@pyjitc.jit
def mm(a, b):
    return a @ b, np.matmul(a, b), np.dot(a, b)


MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((1, 5), (5, 1)),
                 ((0, 3), (3, 2)), ((2, 0), (0, 3))]


@given(st.data())
def test_matmul_and_dot_match_numpy_for_1d_and_2d(data):
    sa, sb = data.draw(st.sampled_from(MATMUL_SHAPES))
    ta, tb = data.draw(st.sampled_from([(np.float32, np.float32), (np.float64, np.float64), (np.int32, np.int32),
                                        (np.float32, np.float64), (np.int64, np.float32), (np.bool_, np.bool_),
                                        (np.float16, np.float16)]))
    a = data.draw(arrays(ta, sa, allow_nan=False, min_value=-10, max_value=10))
    b = data.draw(arrays(tb, sb, allow_nan=False, min_value=-10, max_value=10))
    assert_same(mm(a, b), numpy_result(mm.__wrapped__, a, b), accumulate=True)


@pyjitc.jit
def batched(a, b):
    return a @ b


def test_batched_matmul_broadcasts_batch_dimensions_like_numpy():
    a = np.random.default_rng(0).standard_normal((2, 1, 3, 4)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((5, 4, 2)).astype(np.float32)
    assert_same(batched(a, b), a @ b, accumulate=True)


# One side a stack of matrices (or vectors), the other a single matrix or vector: one product
# with the stack's batch axes as free axes, never the single operand broadcast over the stack.
ONE_SIDE_BATCHED = [((60, 60, 1, 16), (16, 8)), ((3, 4, 5), (5, 6)), ((2, 1, 4, 5), (5, 3)), ((3, 4, 5), (5,)),
                    ((4, 5), (3, 5, 2)), ((5,), (3, 5, 2)), ((1, 4, 5), (2, 5, 3)), ((4, 5), (1, 1, 5, 3)),
                    ((2, 3, 1, 4), (1, 4, 2))]


@settings(max_examples=15)
@given(st.data())
def test_stack_times_one_matrix_matches_numpy_either_way_round(data):
    sa, sb = data.draw(st.sampled_from(ONE_SIDE_BATCHED))
    dtype = data.draw(st.sampled_from([np.float32, np.float64, np.int32, np.bool_, np.complex64]))
    a = data.draw(arrays(dtype, sa, allow_nan=False, min_value=-10, max_value=10))
    b = data.draw(arrays(dtype, sb, allow_nan=False, min_value=-10, max_value=10))
    assert_same(batched(a, b), a @ b, accumulate=True)


def test_stack_times_one_matrix_does_not_broadcast_the_matrix():
    t = lambda *s: pyjitc.Template(s, np.float32)
    for a, b in ((t(60, 60, 1, 128), t(128, 128)), (t(128, 128), t(60, 128, 4))):
        assert "broadcast" not in batched.lower(a, b).as_text()


def test_float64_matmuls_of_every_size_compile_and_match_numpy():
    # IREE 3.13 refused float64 products of 32x32 and up under the peeling flag (large vectors)
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((64, 48)), rng.standard_normal((48, 40))
    assert_same(batched(a, b), a @ b, accumulate=True)


@pyjitc.jit
def transposed_products(A, B, r, x):
    return A.T @ r, x @ A.T, A.T @ B, B.T @ A, r @ A, np.dot(A.T, r)


TRANSPOSED_SHAPES = [(4, 5, 3), (1, 5, 1), (4, 1, 2), (6, 6, 1), (7, 3, 5)]   # A (k, m), B (k, n)


@pytest.mark.parametrize("k, m, n", TRANSPOSED_SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
def test_products_with_a_transposed_operand_match_numpy(k, m, n, dtype):
    rng = np.random.default_rng(k * 100 + m * 10 + n)
    make = lambda *s: (rng.standard_normal(s) * 4).astype(dtype)
    args = make(k, m), make(k, n), make(k), make(m)
    assert_same(transposed_products(*args), numpy_result(transposed_products.__wrapped__, *args), accumulate=True)


def test_a_transposed_matrix_times_a_vector_reads_the_matrix_as_it_is():
    # `A.T @ r` as `r @ A`: the transpose folded into the product, not made (bench_kernels bicg)
    text = transposed_products.lower(*(pyjitc.Template(s, np.float64) for s in ((50, 40), (50, 3), (50,), (40,)))).as_text()
    transposed = {line.split(" = ")[0].strip() for line in text.splitlines() if "stablehlo.transpose" in line}
    products = [line for line in text.splitlines() if "stablehlo.dot_general" in line]
    assert transposed and products
    vector_products = [p for p in products if "x1xf64>" in p or "<1x" in p]
    assert vector_products and not any(f"{t}," in p or f"{t} " in p.split("dot_general")[1]
                                       for p in vector_products for t in transposed)


def test_matmul_shape_mismatch_is_a_located_error():
    with pytest.raises(pyjitc.ShapeError, match="mismatch in its core dimension") as e:
        batched(np.ones((2, 3)), np.ones((4, 2)))
    assert "test_reductions_shapes.py" in str(e.value) and "a @ b" in str(e.value)


# ---------------------------------------------------------------- shapes and casts

@pyjitc.jit
def shapes(x):
    return (x.reshape(-1), np.reshape(x, (x.shape[1], -1)), x.T, np.transpose(x), x.transpose(1, 0),
            x.astype(np.float32), x.astype(np.int16), x.astype(bool), x.shape, x.ndim, x.size)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint8, np.bool_, np.float16])
@pytest.mark.parametrize("shape", [(2, 3), (1, 4), (0, 3)])
def test_reshape_transpose_astype_and_shape_attributes_match_numpy(dtype, shape):
    x = (np.arange(np.prod(shape)).reshape(shape) * 3.7 - 5).astype(dtype)
    assert_same(shapes(x), numpy_result(shapes.__wrapped__, x))


@pyjitc.jit
def float_to_int(x):
    return x.astype(np.int32), x.astype(np.uint8), x.astype(np.bool_)


def test_float_to_int_and_bool_casts_truncate_like_numpy_in_range():
    x = np.array([-3.7, -0.5, 0.0, 0.5, 2.9, 200.2], dtype=np.float32)
    got = float_to_int(np.abs(x))
    assert_same(got, numpy_result(float_to_int.__wrapped__, np.abs(x)))


@pyjitc.jit
def index(x):
    return x[0], x[-1, 1:], x[:, ::2], x[::-1], x[..., None], x[1, 2], x[:, -2:-4:-1]


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_])
def test_basic_indexing_with_constants_matches_numpy(dtype):
    x = np.arange(12).reshape(3, 4).astype(dtype)
    assert_same(index(x), numpy_result(index.__wrapped__, x))


def test_index_out_of_range_is_a_located_error():
    with pytest.raises(pyjitc.ShapeError, match="index 5 is out of bounds"):
        pyjitc.jit(_take5)(np.zeros(3))


def _take5(x):
    return x[5]


def reductions_of_converted_integer_splats(x):
    return (np.sum(x * 0 + 3), (x * 0 + 3).astype(np.int64).sum(axis=1), np.sum(x - x + 3),
            np.sum((x * 0 + 3).astype(np.float64)), np.sum(x.astype(np.int8) * 0 + 3), np.mean(x * 0 + 3),
            np.prod((x * 0 + 2).astype(np.int64)), np.max((x * 0 + 3).astype(np.int64)))


def test_reductions_of_integer_arrays_folded_to_constants_and_converted_match_numpy():
    # IREE 3.13 reduced a converted integer splat wrongly: np.sum(x * 0 + 3) gave 6 for 36 on int32
    # x of shape (3, 4), np.prod 4 for 4096 (silent wrong answers, found while testing np.cov)
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    for g, w in zip(pyjitc.jit(reductions_of_converted_integer_splats)(x), reductions_of_converted_integer_splats(x)):
        assert_same(g, w)


def running_totals(x, A):
    return (np.cumsum(x), np.cumprod(x[:40] + 0.5), np.maximum.accumulate(x), np.cumsum(A, axis=0),
            np.cumsum(A, axis=1), np.add.accumulate(A.astype(np.float32), axis=1))


@pytest.mark.parametrize("native", ["1", "0"])
def test_cumulative_sums_round_exactly_as_numpys_sequential_order_on_cpu(monkeypatch, native):
    # on CPU a scan is one sequential loop per row in one dispatch (lowering/scans.py): NumPy's
    # order, so the float results are NumPy's bit for bit; without native loops (as on GPU
    # targets) it is log2(n) whole-array steps, equal to NumPy's to reduction tolerance
    monkeypatch.setenv("PYJITC_NATIVE_LOOPS", native)
    r = np.random.default_rng(8)
    x, A = r.standard_normal(1000), r.standard_normal((30, 70))
    got, want = pyjitc.jit(running_totals)(x, A), running_totals(x, A)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if native == "1":
            assert np.array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5 if g.dtype == np.float32 else 1e-12, atol=1e-5)


def f32_sums(x, A, v):
    return x.sum(), (x * x).sum(), np.dot(x, x), x.mean(), A @ v, v @ A.T, A.sum(axis=1)


def test_float32_sums_and_dot_products_over_a_million_elements_stay_within_the_documented_tolerance():
    # float32 accumulated lane by lane in order drifted 7e-4 of the sum on 1e6 equal values (and
    # 1.2e-4 for a dot of 2e6): such sums accumulate in float64 now (ir/ops.py ACCURATE_SUM_MIN);
    # checked against the sums made in float64, where NumPy's own pairwise sums are within 1e-6
    rng = np.random.default_rng(3)
    cases = [(np.full(1_000_000, 0.1, np.float32), np.full((4, 300_000), 0.1, np.float32)),
             ((rng.random(2_000_000) + 100).astype(np.float32), (rng.random((3, 300_000)) + 5).astype(np.float32))]
    jitted = pyjitc.jit(f32_sums)
    for x, A in cases:
        v = A[0].copy()
        got = jitted(x, A, v)
        exact = f32_sums(x.astype(np.float64), A.astype(np.float64), v.astype(np.float64))
        for g, e in zip(got, exact):
            assert np.asarray(g).dtype == np.float32
            np.testing.assert_allclose(np.asarray(g, np.float64), e, rtol=2e-6)
    assert_same(jitted(*cases[1][:2], cases[1][1][0].copy()), f32_sums(*cases[1][:2], cases[1][1][0].copy()), accumulate=True)


def broadcast_two_ways(X):
    s = X.sum(1)
    m = X.max(1)
    sq = (X * X).sum(axis=1)
    return (s[:, None] + s[None, :], np.add.outer(m, m) - m[:, None], sq.reshape(-1, 1) + sq.reshape(1, -1) - 2 * X @ X.T,
            X - X.max(axis=1, keepdims=True))


@pytest.mark.parametrize("dtype, shape", [(np.float64, (3, 2)), (np.float32, (300, 4)), (np.int64, (5, 1)), (np.float64, (1, 7))])
def test_a_reduction_broadcast_along_two_axes_is_numpys_everywhere_not_only_on_the_diagonal(dtype, shape):
    # IREE 3.13 fused the reduction into a consumer reading it two ways and got only the diagonal
    # right (pairwise distances `sq[:, None] + sq[None, :] - 2 * X @ X.T`: a silent wrong answer):
    # such a reduction is computed first (lowering/broadcast_fanout.py)
    X = (np.random.default_rng(5).random(shape) * 10).astype(dtype)
    assert_same(pyjitc.jit(broadcast_two_ways)(X), broadcast_two_ways(X), accumulate=True)


def broadcast_then_transposed(A):
    L = np.diag(A.sum(1)) - A             # a graph Laplacian
    s = A.sum(0, keepdims=True)
    X = A / s
    return L + L.T, X.T + X, np.linalg.eigvalsh(L)


@pytest.mark.parametrize("n", [4, 37])
def test_a_reduction_broadcast_one_way_and_read_again_through_a_transpose_is_numpys(n):
    # the same miscompile where the second mapping is a transpose of work on the broadcast
    # values: np.linalg.eigvalsh(np.diag(A.sum(1)) - A), which reads L + L.T of the lower
    # triangle, gave the degrees (probe AT: [1, 1, 1, 1] for NumPy's [0, 0, 2, 2])
    A = (np.random.default_rng(n).random((n, n)) < 0.3).astype(np.float64)
    A = np.triu(A, 1) + np.triu(A, 1).T + np.eye(n)
    assert_same(pyjitc.jit(broadcast_then_transposed)(A), broadcast_then_transposed(A), accumulate=True)


# Each reduces a constant MLIR folds from a run-time array (x & 0, x | -1, x * 0, x ** 0): IREE 3.13
# then added the constant once per vector of 8 elements (np.sum(k | -1) gave -2 for -10,
# np.sum(x ** 0) 2.0 for 10.0, count_nonzero(k * 0 + 1) 1 for 10). One reduction a function: in
# one module with the others, the fusion differed and hid the bug.
def or_all_ones(k, x):
    return np.sum(k | -1)


def and_zero(k, x):
    return np.sum((k & 0) + 3)


def times_zero_counted(k, x):
    return np.count_nonzero(k * 0 + 1)


def int_power_zero(k, x):
    return np.sum(k ** 0)


def float_power_zero(k, x):
    return np.mean(x ** 0), np.prod(x ** 0 * 2)


def moments(k, x):
    return [np.sum(x ** j) for j in range(3)]


@pytest.mark.parametrize("fn", [or_all_ones, and_zero, times_zero_counted, int_power_zero, float_power_zero, moments])
def test_reductions_of_arrays_that_fold_to_a_constant_count_every_element(fn):
    jitted = pyjitc.jit(fn)
    for n in (10, 17):   # not multiples of the vector width
        k, x = np.arange(n), np.linspace(0.0, 1.0, n)
        assert_same(jitted(k, x), fn(k, x))


def meshgrid_booleans(x, y):
    X, Y = np.meshgrid(x, y)
    return (np.sin(X), np.all((X > 0.1) | (X < 0.05)), np.count_nonzero((X > 0.1) | (X < 0.05)),
            ((X > 0.3) & (Y < X)).sum(), np.mean(X ** 2 + Y ** 2 < 1), np.any((X > 2.0) | (X < -1.0)))


def test_booleans_of_a_broadcast_reduced_over_more_than_32768_elements_compile():
    # IREE 3.13 fused the reduction with a dead full-size boolean result it put on the stack:
    # "exceeded stack allocation limit of 32768 bytes" (np.sin's range check on a meshgrid's X)
    rng = np.random.default_rng(2)
    x, y = rng.random(200), rng.random(190)
    assert_same(pyjitc.jit(meshgrid_booleans)(x, y), meshgrid_booleans(x, y))
