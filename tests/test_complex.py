"""complex64/complex128: arithmetic, the complex functions, reductions and contractions agree
with NumPy (value, shape, dtype, NEP 50 with Python complex scalars); functions not known to handle
complex numbers are located errors (deny by default), never a wrong answer."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import pyjitc
from tests.reference import assert_same, numpy_result
from tests.strategies import COMPLEX, arrays, broadcast_pair
from tests.fuzz import load_source


@pyjitc.jit
def arithmetic(a, b):
    return a + b, a - b, a * b, a / b, a == b, a != b


@pyjitc.jit
def unary(z):
    return (-z, +z, abs(z), np.square(z), np.conj(z), z.conjugate(), np.real(z), np.imag(z), z.real, z.imag,
            np.angle(z), np.angle(z, deg=True), np.isnan(z), np.isinf(z), np.isfinite(z))


@pyjitc.jit
def transcendental(z):
    return np.exp(z), np.log(z), np.sqrt(z)


@pyjitc.jit(static_argnames="axis")
def reductions(z, axis):
    return np.sum(z, axis=axis), np.prod(z, axis=axis), np.mean(z, axis=axis), z.sum(axis=axis)


@pyjitc.jit
def contractions(a, b):
    return a @ b, np.dot(a, b), np.vdot(a, a), np.einsum("ij,jk->ik", a, b), np.outer(a[0], b[:, 0])


@pyjitc.jit
def casts(z):
    return (z.astype(np.complex64), z.astype(np.complex128), z.astype(np.float64), z.astype(np.int32),
            z.astype(bool), np.zeros(3, dtype=np.complex64), np.ones_like(z))


@pyjitc.jit
def with_scalars(x, s):
    return x * s, x + 2j, s * 1.5, x / s, np.exp(1j * x)


OTHERS = [np.float32, np.float64, np.int8, np.int64, np.bool_]


@given(st.data())
def test_arithmetic_and_equality_match_numpy_over_dtypes_and_broadcasting(data):
    ta = data.draw(st.sampled_from(COMPLEX))
    tb = data.draw(st.sampled_from(COMPLEX + OTHERS))
    sa, sb = data.draw(broadcast_pair())
    a, b = data.draw(arrays(ta, sa)), data.draw(arrays(tb, sb))
    if data.draw(st.booleans()):
        a, b = b, a
    assert_same(arithmetic(a, b), numpy_result(arithmetic.__wrapped__, a, b))


def test_division_uses_numpys_method_for_huge_tiny_and_zero_divisors():
    a = np.array([1 + 2j, 1e300 + 1e300j, -4, 1e-300 + 2e-300j, 1j, np.inf, 1 + 1j, 0j])
    b = np.array([2 - 1j, 1e300 + 1e-300j, 1e-300 + 1e-300j, 3e-300 + 1e-300j, 0j, 2, np.nan, 0j])
    assert_same(arithmetic(a, b), numpy_result(arithmetic.__wrapped__, a, b))


@given(st.data())
def test_unary_functions_match_numpy(data):
    z = data.draw(arrays(data.draw(st.sampled_from(COMPLEX)), data.draw(st.sampled_from([(3,), (2, 3)]))))
    assert_same(unary(z), numpy_result(unary.__wrapped__, z))


@given(st.data())
def test_exp_log_sqrt_match_numpy_on_finite_values(data):
    # away from the branch cut's signed zeros (see README: complex numbers)
    z = data.draw(arrays(data.draw(st.sampled_from(COMPLEX)), (4,), allow_nan=False, min_value=-50, max_value=50))
    assert_same(transcendental(z), numpy_result(transcendental.__wrapped__, z))


@given(st.data())
def test_sum_prod_mean_match_numpy(data):
    z = data.draw(arrays(data.draw(st.sampled_from(COMPLEX)), (3, 4), allow_nan=False, min_value=-3, max_value=3,
                         min_magnitude=1e-6))   # products of tiny values go subnormal (flushed by IREE)
    axis = data.draw(st.sampled_from([None, 0, -1]))
    assert_same(reductions(z, axis), numpy_result(reductions.__wrapped__, z, axis), accumulate=True,
                scale=None)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_matmul_dot_vdot_einsum_outer_match_numpy(dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(dtype)
    b = (rng.standard_normal((4, 2)) + 1j * rng.standard_normal((4, 2))).astype(dtype)
    assert_same(contractions(a, b), contractions.__wrapped__(a, b), accumulate=True)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_casts_from_complex_match_numpy(dtype):
    z = np.array([1.5 + 2j, -3.7 - 0.5j, 0j, 1j, 2.0], dtype)
    with pytest.warns(np.exceptions.ComplexWarning):
        want = casts.__wrapped__(z)   # NumPy warns that the imaginary part is dropped
    assert_same(casts(z), want)


@pytest.mark.parametrize("x, s", [
    (np.arange(3, dtype=np.float32), 2j), (np.arange(3, dtype=np.int8), 1 + 1j),
    (np.ones(3, np.complex64), 0.5), (np.ones(3, np.complex128), 3), (np.ones(3, np.complex64), 2j),
])
def test_python_complex_scalars_are_weak_as_in_nep_50(x, s):
    assert_same(with_scalars(x, s), numpy_result(with_scalars.__wrapped__, x, s))


def complex_in_a_loop(z, n):
    acc = 0j
    for i in range(n):
        acc = acc + z[i] * 1j
    y = z.copy()
    y[0] = 5 + 1j
    y[1:] *= 2j
    return acc, y


def test_complex_values_through_loops_and_in_place_updates():
    z = (np.arange(4) + 1j * np.arange(4)[::-1]).astype(np.complex64)
    assert_same(pyjitc.jit(complex_in_a_loop)(z, 3), complex_in_a_loop(z, 3))


@pytest.mark.parametrize("expression", [
    "np.maximum(z, 1)", "z < 1", "np.sort(z)", "np.var(z)", "np.linalg.det(z)", "np.linalg.cholesky(z)", "np.max(z)",
    "np.sin(x, dtype=np.complex128)",
])
def test_functions_not_known_to_handle_complex_numbers_are_located_errors(expression, tmp_path):
    fn = load_source(f"import numpy as np\n\n\ndef fuzzed(z, x):\n    return {expression}\n", tmp_path, "cx")
    with pytest.raises(pyjitc.NotSupportedError, match="complex") as e:
        pyjitc.jit(fn)(np.ones((2, 2), np.complex64), np.ones(2))
    assert expression in str(e.value)


def _put_along(z):
    w = z.copy()
    np.put_along_axis(w, np.array([[1], [0]]), z[:, :1] * 1j, axis=1)
    return w


@pyjitc.jit
def data_movement(z):
    a, b = np.split(z, 2, axis=1)
    return (z.reshape(4, 2), np.reshape(z, -1), np.ravel(z), z.flatten(), np.transpose(z), np.swapaxes(z, 0, 1),
            np.moveaxis(z, 0, -1), np.squeeze(z[None]), np.expand_dims(z, 0), np.concatenate([z, z]),
            np.concat([z, z], axis=1), np.stack([z, z]), np.hstack([z, z]), np.vstack([z, z]),
            np.column_stack([z[0], z[1]]), np.row_stack([z[0], z[1]]), a, b, np.array_split(z, 3, axis=1),
            np.tile(z, 2), np.repeat(z, 2, axis=0), np.broadcast_to(z[0], (3, 4)), np.flip(z), np.fliplr(z),
            np.flipud(z), np.roll(z, 1), np.diag(z[0]), np.diagflat(z[0]), np.diagonal(z), np.trace(z[:, :2]), np.tril(z[:, :2]),
            np.triu(z[:, :2]), np.copy(z), z.copy(), np.take(z, [0, 3]), np.lib.stride_tricks.sliding_window_view(z, (2, 3)),
            np.take_along_axis(z, np.array([[1], [0]]), axis=1), _put_along(z), np.zeros_like(z), np.ones_like(z),
            np.full_like(z, 2 + 1j), np.empty_like(z).shape, np.zeros(2, np.complex64), np.ones(2, complex),
            np.full(2, 1j), np.empty(2, np.complex128).dtype, np.array([1j, 2]), np.asarray(z),
            np.complex64(z), np.complex128(z[0, 0]), np.where(z.real > 0, z, 0), np.prod(z), np.divide(z, 2),
            np.multiply(z, z), np.subtract(z, 1), np.add(z, 1j), np.negative(z), np.positive(z),
            np.absolute(z), np.conjugate(z), np.not_equal(z, 0), np.equal(z, 0), np.true_divide(1, z + 1),
            np.tensordot(z, z, axes=([1], [1])), np.inner(z, z), np.dot(z[0], z[1]), z.dot(z.T),
            np.matmul(z, z.T), z.mean(), z.prod(axis=0), z.astype(np.complex128), z.conj(), np.abs(z),
            z.repeat(2), z.diagonal(), z.trace(), z.ravel(), z.transpose(), z.swapaxes(0, 1), z.squeeze(),
            np.eye(3, dtype=complex), np.eye(z.shape[1], k=1, dtype=z.dtype), np.identity(2, np.complex64),
            np.tri(3, dtype=complex) * z[0, 0])


@pytest.mark.parametrize("dtype", COMPLEX)
def test_shape_creation_and_other_listed_functions_on_complex_arrays_match_numpy(dtype):
    z = (np.arange(8) - 2.5 + 1j * np.arange(8)[::-1]).reshape(2, 4).astype(dtype)
    assert_same(data_movement(z), numpy_result(data_movement.__wrapped__, z), accumulate=True)


@pyjitc.jit
def spectra(z):
    return (np.fft.fft(z), np.fft.ifft(z), np.fft.irfft(z), np.fft.hfft(z), np.fft.fft2(z), np.fft.ifft2(z),
            np.fft.fftn(z), np.fft.ifftn(z), np.fft.irfft2(z), np.fft.irfftn(z), np.fft.fftshift(z), np.fft.ifftshift(z))


def test_fourier_transforms_of_complex_arrays_match_numpy():
    """(tests/test_fft.py covers np.fft in depth.) Each result to the tolerance relative to its
    largest magnitude: a transform's rounding error is bounded by the input's norm."""
    z = (np.arange(8) - 2.5 + 1j * np.arange(8)[::-1]).reshape(2, 4).astype(np.complex64)
    for got, want in zip(spectra(z), numpy_result(spectra.__wrapped__, z)):
        assert_same(got, want, accumulate=True, atol=2e-5 * float(np.abs(want).max()))


@pyjitc.jit
def comparisons_and_more(z):
    return (np.isclose(z, z[::-1]), np.isclose(z, 1j, equal_nan=True), np.allclose(z, z), np.array_equal(z, z),
            np.array_equal(z, z * 1, equal_nan=True), np.array_equiv(z, z[:1]), np.select([z.real > 0], [z], 1j),
            np.nan_to_num(z), np.nan_to_num(z, nan=2.0, posinf=1.0), np.atleast_1d(z[0, 0]), np.atleast_2d(z[0]),
            np.atleast_3d(z), np.kron(z[0], z[1, :2]), np.block([[z, z], [z, z]]), np.vecdot(z, z[::-1]),
            np.matrix_transpose(z), z.mT, np.append(z, z[0]), np.append(z, z, axis=0), z[0].tolist())


@pytest.mark.parametrize("dtype", COMPLEX)
def test_comparisons_nan_to_num_and_kron_on_complex_arrays_match_numpy(dtype):
    z = (np.arange(8) - 2.5 + 1j * np.arange(8)[::-1]).reshape(2, 4).astype(dtype)
    z[1, 1] = complex(np.nan, 1.0)
    z[1, 2] = complex(2.0, np.inf)
    z[1, 3] = complex(-np.inf, np.nan)
    assert_same(comparisons_and_more(z), numpy_result(comparisons_and_more.__wrapped__, z), accumulate=True)


def operator_methods_of_complex_arrays(z, w):
    return (z.__add__(w), z.__radd__(1j), z.__sub__(w), z.__rsub__(2), z.__mul__(w), z.__rmul__(0.5),
            z.__truediv__(w), z.__rtruediv__(1), z.__pow__(2), z.__rpow__(2), z.__matmul__(w), w.__rmatmul__(z),
            z.__eq__(w), z.__ne__(w), z.__neg__(), z.__pos__())


def test_ndarray_operator_methods_on_complex_arrays_are_the_operators():
    z, w = np.array([1 + 2j, -0.5j, 3.0]), np.array([2 - 1j, 1 + 1j, -1j])
    assert_same(pyjitc.jit(operator_methods_of_complex_arrays)(z, w), operator_methods_of_complex_arrays(z, w))


def test_every_function_allowed_on_complex_numbers_is_tested_here():
    import pathlib
    import re
    from pyjitc.frontend import registry
    text = pathlib.Path(__file__).read_text()
    untested = [n for n in registry.complex_ok_names("function") if not re.search(r"np\." + n[len("numpy."):] + r"\(", text)]
    untested += [m for m in registry.complex_ok_names("method") if not re.search(r"\." + m + r"\(", text)]
    assert not untested, f"allowed on complex numbers but not tested: {untested}"


def shape_and_type_questions(z):
    b = np.broadcast_arrays(z, z[0])
    return (np.shape(z), np.ndim(z), np.size(z), np.result_type(z, 1.0), np.iscomplexobj(z), np.isrealobj(z),
            np.isscalar(z), np.isscalar(z[0, 0]), np.min_scalar_type(z), np.promote_types(z.dtype, np.float32),
            np.can_cast(z, np.float64), np.issubdtype(z.dtype, np.complexfloating), np.broadcast_shapes(z.shape, (1,)),
            float(np.finfo(z.dtype).eps), int(np.iinfo(np.int8).max), np.dtype(z.dtype), np.isdtype(z.dtype, "complex floating"),
            np.common_type(z), np.mintypecode(["d", "F"]), b[0] + 0, b[1] + 0)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128, np.float32])
def test_shape_and_dtype_questions_answer_as_numpy_does(dtype):
    z = (np.arange(6).reshape(2, 3) + 1j * np.arange(6).reshape(2, 3)).astype(dtype) if dtype != np.float32 \
        else np.arange(6, dtype=dtype).reshape(2, 3)
    got, want = pyjitc.jit(shape_and_type_questions)(z), shape_and_type_questions(z)
    for g, w in zip(got, want):
        if isinstance(w, np.ndarray):
            assert_same(g, w)
        else:
            assert g == w and type(g) is type(w), (g, w)


def escape_counts(c, maxit):
    z = np.zeros_like(c)
    counts = np.zeros(c.shape, dtype=np.int64)
    for _ in range(maxit):
        inside = np.abs(z) <= 2.0
        z = np.where(inside, z * z + c, z)
        counts += inside
    return counts


def test_complex_array_made_before_a_run_time_loop_compiles_and_matches_numpy():
    # IREE 3.13 failed on a complex splat turned stream op ("stream.async.splat ... i128") and
    # crashed packing complex constants; both are now built from their real and imaginary parts
    c = np.linspace(-2, 1, 12)[:, None] + 1j * np.linspace(-1.5, 1.5, 9)[None, :]
    assert_same(pyjitc.jit(escape_counts)(c, 30), escape_counts(c, 30))

    def on_a_constant_grid(maxit):
        c = np.linspace(-2, 1, 12)[:, None] + 1j * np.linspace(-1.5, 1.5, 9)[None, :]
        return escape_counts(c, maxit)
    assert_same(pyjitc.jit(on_a_constant_grid)(25), on_a_constant_grid(25))


def integer_powers(z):
    return z ** 2, z ** 3, z ** 0, z ** -1, z ** 7, np.power(z, -5), z.astype(np.complex64) ** 4, z ** 2.0, z ** 99


def test_complex_to_a_compile_time_integer_power_is_numpys_repeated_products():
    z = np.array([1 + 2j, -0.5 + 0.25j, 3 - 1j, 1e-3 + 1e3j, -2.0 + 0j])
    for g, w in zip(pyjitc.jit(integer_powers)(z), integer_powers(z)):
        assert_same(g, w)


def run_time_powers(z, w, x, p):
    return z ** w, np.power(z, w), z ** x, np.power(z, x), z ** p, z ** 0.5, np.power(z, 0.5), z ** 2.5, z ** -1.5j


def test_complex_to_any_power_is_numpys_cpow_including_exponents_known_only_at_run_time():
    # npy_cpow: w = 0 gives 1; a zero base 0 or NaN; integral w below 100 repeated products (the
    # exponent's bits at run time); anything else exp(w log z); `z ** 0.5` is sqrt (the operator's
    # fast path), np.power(z, 0.5) is not: they differ at inf
    zs = np.array([0, 1, -1, 1j, 2 + 3j, -0.5 + 0.1j, 1e-3j, np.inf, -2.0, 0.3 - 4j, 1e5 + 1e-5j])
    ws = np.array([0, 1, 2, 3, -1, -2, 5, 7, 99, 100, -99, 0.5, -0.5, 2.5, 1j, 1 + 1j, -3.0, 1e-9, 150.0])
    z, w = (np.ascontiguousarray(v) for v in np.meshgrid(zs, ws))
    fn = pyjitc.jit(run_time_powers)
    for p in (0.5, 3.0, 1.25):
        with np.errstate(all="ignore"):
            want = run_time_powers(z, w, w.real.copy(), p)
        for got, exp in zip(fn(z, w, w.real.copy(), p), want):
            assert_same(got, exp)
    z32, w32 = z[:8].astype(np.complex64), w[:8].astype(np.complex64)   # (overflow in float32 aside)
    with np.errstate(all="ignore"):
        assert_same(fn(z32, w32, w32.real.copy(), 1.25)[:5], run_time_powers(z32, w32, w32.real.copy(), 1.25)[:5])


def test_complex_exp_has_c99s_values_at_infinities_nan_and_near_overflow():
    v = np.array([complex(a, b) for a in (-np.inf, np.inf, np.nan, 0.0, 1.5, 709.0, 710.0)
                  for b in (0.0, np.nan, np.inf, -np.inf, 1.0, 3.0)])
    with np.errstate(all="ignore"):
        want = np.exp(v)
    assert_same(transcendental(v)[0], want)


def complex_systems(a, b):
    made = np.ndarray(a.shape, a.dtype)
    made[...] = a
    return np.linalg.solve(a, b), np.linalg.solve(a[0], b[0, :, 0]), np.linalg.inv(made)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("shape", [(1, 1, 1), (1, 5, 5), (2, 4, 4)])
def test_complex_solve_and_inv_match_numpy(dtype, shape):
    rng = np.random.default_rng(sum(shape))
    a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    b = (rng.standard_normal(shape[:-1] + (3,)) + 1j * rng.standard_normal(shape[:-1] + (3,))).astype(dtype)
    for got, want in zip(pyjitc.jit(complex_systems)(a, b), complex_systems(a, b)):
        assert_same(got, want, accumulate=True)


def test_complex_singular_matrix_raises_as_numpy_does():
    with pytest.raises(pyjitc.RunError, match="Singular matrix"):
        pyjitc.jit(complex_systems)(np.zeros((1, 3, 3), complex), np.ones((1, 3, 3), complex))


def complex_shapes_and_comparisons(z, w):
    return (np.atleast_1d(z[0]), np.atleast_2d(z), np.atleast_3d(z), np.asanyarray(z) * 2, np.ascontiguousarray(z.T),
            np.asfortranarray(z), np.asarray_chkfinite(z), np.pow(z, 2), np.nan_to_num(z * np.nan),
            np.isclose(z, w), np.allclose(z, z), np.array_equal(z, w), np.array_equiv(z, z[0]),
            np.select([z.real > 0], [z], default=1j), np.kron(z, w), _in_place_on_complex(z.copy(), w))


def _in_place_on_complex(a, b):
    np.copyto(a, b, where=a.real > 0)
    np.fill_diagonal(a, 1j)
    c = b.copy()
    c.fill(2 - 1j)
    return a + c


def test_shapes_conversions_and_comparisons_take_complex_values_as_numpy():
    z = np.array([[1 + 2j, -0.5 + 0.25j], [3 - 1j, 2j]])
    w = z + np.array([[0, 1e-9], [1, 0]])
    for g, e in zip(pyjitc.jit(complex_shapes_and_comparisons)(z, w), complex_shapes_and_comparisons(z, w)):
        assert_same(g, e)


def complex_views(z):
    v = z.view()                 # a view of the same memory: writes reach z
    v[0, 0] = 5 - 1j
    w = z.view(np.complex128)
    w[1, 1] *= 2
    return z, v.sum(), np.apply_along_axis(np.sum, 0, z)


def test_complex_array_views_write_through():
    z = np.arange(12.0).reshape(3, 4) * (1 + 2j)
    z1, z2 = z.copy(), z.copy()
    assert_same(pyjitc.jit(complex_views)(z1), complex_views(z2))
    assert_same(z1, z2)


def complex_norms(z, Z):
    return (np.linalg.norm(z), np.linalg.norm(z, 1), np.linalg.norm(z, np.inf), np.linalg.norm(z, 0), np.linalg.norm(z, 3),
            np.linalg.norm(Z), np.linalg.norm(Z, axis=0), np.linalg.norm(Z, 1), np.linalg.norm(Z, -np.inf),
            np.linalg.norm(Z, "fro"), np.linalg.norm(Z, axis=1, keepdims=True))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_norms_of_complex_vectors_and_matrices_are_real_as_numpys(dtype):
    # np.linalg.norm of a complex vector was refused (power iteration and Gram-Schmidt on complex
    # vectors; a probe of HPC-course kernels): the norm of the magnitudes, in the real dtype
    rng = np.random.default_rng(21)
    z = (rng.standard_normal(6) + 1j * rng.standard_normal(6)).astype(dtype)
    z[2] = 0
    Z = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(dtype)
    assert_same(pyjitc.jit(complex_norms)(z, Z), complex_norms(z, Z), accumulate=True)
    with pytest.raises(pyjitc.JitError, match="complex matrix"):
        pyjitc.jit(lambda m: np.linalg.norm(m, 2))(Z)


def complex_coo_products(y, rows, cols, vals, x, Y):
    np.add.at(y, rows, vals * x[cols])
    z = np.zeros(3, dtype=y.dtype)
    np.subtract.at(z, np.array([0, 2, 2]), 1j)
    np.add.at(Y, rows[:3], vals[:3, None] * x[None, :2])
    return y, z, Y


@pytest.mark.parametrize("dtype", COMPLEX)
def test_add_at_and_subtract_at_into_complex_arrays_add_every_update(dtype):
    # np.add.at into a complex array was refused (a complex COO sparse product; a probe of
    # HPC-course kernels): the real and imaginary parts each scattered
    rng = np.random.default_rng(22)
    rows, cols = np.array([0, 1, 1, 3, 0]), np.array([1, 2, 0, 3, 3])
    vals = (rng.standard_normal(5) + 1j * rng.standard_normal(5)).astype(dtype)
    x = (rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype(dtype)
    args = lambda: (np.zeros(4, dtype), rows, cols, vals, x, np.ones((4, 2), dtype))
    assert_same(pyjitc.jit(complex_coo_products)(*args()), complex_coo_products(*args()), accumulate=True)


@pyjitc.jit(static_argnames="itermax")
def escaped_values(C, horizon, itermax):
    Xi, Yi = np.mgrid[0:20, 0:20]
    Z_ = np.zeros((20, 20), dtype=np.complex128)
    Xi.shape = Yi.shape = 400
    Z = np.zeros(400, np.complex128)
    for i in range(itermax):
        if not len(Z):
            break
        Z = Z * Z + C
        rem = abs(Z) > horizon
        Z_[Xi[rem], Yi[rem]] = Z[rem]
        rem = ~rem
        Z, C = Z[rem], C[rem]
        Xi, Yi = Xi[rem], Yi[rem]
    return Z_.T


def test_complex128_results_placed_inside_a_shared_buffer_are_16_byte_aligned():
    # A Mandelbrot with shrinking arrays: IREE put the transposed complex128 result 8 bytes into a
    # buffer, and its code moves complex128 elements with aligned 16-byte instructions: the call
    # crashed the process. Such modules are compiled for 16-byte alignment.
    C = (np.linspace(-2, 0.5, 20)[:, None] + 1j * np.linspace(-1.25, 1.25, 20)).ravel()
    for itermax in (2, 3):
        assert_same(escaped_values(C, 2.0, itermax), escaped_values.__wrapped__(C, 2.0, itermax))
    assert escaped_values.lower(C, 2.0, 2).signature.input_alignment == 16
    assert transposed.lower(np.zeros((3, 4))).signature.input_alignment == 8


@pyjitc.jit
def transposed(z):
    return z.T


def test_complex128_inputs_only_8_byte_aligned_are_read_correctly():
    raw = np.zeros(400 * 16 + 8, np.uint8)
    z = raw[8:8 + 400 * 16].view(np.complex128).reshape(20, 20)
    assert z.ctypes.data % 16 == 8
    z[...] = np.arange(400).reshape(20, 20) * (1 + 0.5j)
    assert_same(transposed(z), z.T)
