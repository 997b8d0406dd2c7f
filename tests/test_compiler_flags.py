"""IREE flags that follow the module (data tiling only for matrix-matrix products) and NumPy's own
arrays read in place at the alignment the code is compiled for: the policy, the disk-cache key
that includes it, and NumPy's results on the inputs and flags involved."""
import dataclasses

import numpy as np
import pytest

import pyjitc
from pyjitc import cache
from pyjitc.backend import target
from pyjitc.stages import Compiled

from .reference import assert_same

DATA_TILING = set(target.DATA_TILING_FLAGS)


@pyjitc.jit
def mm(a, b):
    return a @ b


@pyjitc.jit
def two_layers(x, w1, w2):
    return (x @ w1) @ w2


def t(*shape, dtype=np.float32):
    return pyjitc.Template(shape, dtype)


def test_data_tiling_only_when_every_contraction_multiplies_long_matrices():
    n = target.DATA_TILING_MIN_DIM
    assert DATA_TILING <= set(mm.lower(t(n, 64), t(64, n)).compiler_flags())
    for a, b in ((t(4000, 500), t(500)), (t(500), t(500, 4000)), (t(n - 1, 64), t(64, 4000)), (t(8, 8), t(8, 8))):
        assert not DATA_TILING & set(mm.lower(a, b).compiler_flags()), (a, b)
    # a module holding a matrix-vector-like product too goes without (packing its matrix costs more)
    assert not DATA_TILING & set(two_layers.lower(t(n, n), t(n, n), t(n, 10)).compiler_flags())
    assert DATA_TILING <= set(two_layers.lower(t(n, n), t(n, n), t(n, n)).compiler_flags())


def test_data_tiling_only_for_float32_products():
    # float64 products were slower data-tiled at every size measured (target.DATA_TILING_DTYPES)
    for dtype in (np.float64, np.int32, np.complex64):
        assert not DATA_TILING & set(mm.lower(t(512, 512, dtype=dtype), t(512, 512, dtype=dtype)).compiler_flags())
    assert DATA_TILING <= set(mm.lower(t(512, 512), t(512, 512)).compiler_flags())


def test_data_tiling_is_for_llvm_cpu_only():
    cuda = pyjitc.jit(mm.__wrapped__, target="cuda")
    assert not DATA_TILING & set(cuda.lower(t(512, 512), t(512, 512)).compiler_flags())


def test_the_disk_cache_key_includes_the_module_flags():
    lowered = mm.lower(t(512, 512), t(512, 512))
    text = lowered.as_text(signature=True)
    assert cache.key_for(text, "llvm-cpu", lowered.compiler_flags()) != cache.key_for(
        text, "llvm-cpu", lowered.target.flags())


@pytest.fixture(scope="module")
def gemm():
    lowered = mm.lower(t(256, 256), t(256, 256))
    assert DATA_TILING <= set(lowered.compiler_flags())
    return lowered.compile()


def test_data_tiled_gemm_matches_numpy_on_numpy_allocated_and_offset_inputs(gemm):
    rng = np.random.default_rng(0)
    f32 = np.float32
    a, b = rng.standard_normal((256, 256), f32), rng.standard_normal((256, 257), f32)[:, 1:]   # b: copied (not contiguous)
    assert_same(gemm(a, b), a @ b, accumulate=True)
    flat = rng.standard_normal(256 * 256 + 2, f32)   # 8 bytes past NumPy's allocation
    shifted = flat[2:].reshape(256, 256)
    assert shifted.ctypes.data % 64 != 0
    assert_same(gemm(shifted, a), shifted @ a, accumulate=True)


@pyjitc.jit
def add(x, y):
    return x + y


@pytest.mark.parametrize("offset", [0, 1, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16])
def test_elementwise_on_inputs_at_any_offset_matches_numpy(offset, dtype):
    # float32/int16 views at odd offsets are below the compiled alignment (8 bytes): copied first
    base = np.arange(100_000 + offset, dtype=dtype)
    x, y = base[offset:], base[offset:][::-1].copy()
    assert_same(add(x, y), x + y)
    assert add.lower(t(100_000, dtype=dtype), t(100_000, dtype=dtype)).compile().signature.input_alignment \
        == target.LLVM_CPU_INPUT_ALIGNMENT


def test_a_vmfb_compiled_for_64_byte_alignment_copies_numpy_allocated_inputs():
    # files written before the alignment entered the signature say nothing and mean 64
    lowered = add.lower(t(100_000, dtype=np.float64), t(100_000, dtype=np.float64))
    sig = dataclasses.replace(lowered.signature, input_alignment=64)
    assert type(sig).from_json(sig.to_json().replace(',"input_alignment":64', "")).input_alignment == 64
    compiled = Compiled(lowered.compile().vmfb, sig)
    raw = np.empty(100_000 * 8 + 128, np.uint8)        # 16 bytes past a 64-byte boundary, as NumPy
    start = (-raw.ctypes.data) % 64 + 16                  # often (not always) allocates large arrays
    x = raw[start:start + 100_000 * 8].view(np.float64)
    x[:] = np.random.default_rng(1).standard_normal(100_000)
    assert x.ctypes.data % 64 == 16
    assert_same(compiled(x, x), x + x)


def test_loop_unrolling_only_for_modules_holding_native_loops():
    from tests.test_scalar_loops import recurrence
    x = np.arange(8.0)
    assert "--iree-llvmcpu-loop-unrolling=true" in pyjitc.jit(recurrence).lower(x, 0.5).compiler_flags()
    assert "--iree-llvmcpu-loop-unrolling=true" not in pyjitc.jit(lambda_free_axpy).lower(x, x).compiler_flags()


def lambda_free_axpy(x, y):
    return 2.0 * x + y


def products(A, x, y):
    return A @ x, y @ A, A.T @ y, np.dot(A, x), x @ A.T


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(333, 517), (1000, 70), (256, 256)])
def test_matrix_vector_products_with_their_own_tile_sizes_match_numpy(dtype, shape):
    # matvec as linalg.matvec carrying measured tile sizes (lowering/tiles.py) on shapes that
    # the tiles don't divide; in float64 the vecmats (`y @ A`, `A.T @ y`) are linalg.matmul of one row
    rng = np.random.default_rng(shape[0])
    A, x, y = (rng.standard_normal(s).astype(dtype) for s in (shape, shape[1:], shape[:1]))
    f = pyjitc.jit(products)
    assert "linalg.matvec" in f.lower(A, x, y).as_text()
    for got, want in zip(f(A, x, y), products(A, x, y)):
        assert_same(got, want, accumulate=True)


def test_small_matrix_vector_products_keep_the_dot_general():
    A, x = np.ones((100, 50)), np.ones(50)
    assert "linalg.matvec" not in pyjitc.jit(lambda A, x: A @ x).lower(A, x).as_text()


def matrix_products(A, B, C):
    return A @ B, np.dot(A, B) * 2.0 + C, (A @ B) @ B.T[:, :3], A.T[:7] @ A, A @ A.T, A.T @ A, C.T @ A


@pytest.mark.parametrize("m, k, n", [(67, 41, 73), (400, 42, 9), (8, 300, 64), (130, 64, 129)])
def test_float64_matrix_products_with_their_own_tile_sizes_match_numpy(m, k, n):
    # float64 A(m, k) @ B(k, n) as linalg.matmul carrying measured tile sizes (lowering/tiles.py:
    # 64x64 a workgroup, 8x8 a vector step, leftovers peeled), on sizes the tiles don't divide
    rng = np.random.default_rng(m)
    A, B, C = rng.standard_normal((m, k)), rng.standard_normal((k, n)), rng.standard_normal((m, n))
    f = pyjitc.jit(matrix_products)
    assert "linalg.matmul" in f.lower(A, B, C).as_text()
    for got, want in zip(f(A, B, C), matrix_products(A, B, C)):
        assert_same(got, want, accumulate=True)
    # float32 keeps IREE's own lowering (and data tiling from 128 up)
    assert "linalg.matmul" not in f.lower(A.astype(np.float32), B.astype(np.float32), C.astype(np.float32)).as_text()


def test_small_float64_matrix_products_keep_the_dot_general():
    A = np.ones((20, 20))
    assert "linalg.matmul" not in pyjitc.jit(lambda A, B: A @ B).lower(A, A).as_text()


def stack_products(X, W, V):
    return X @ W, np.einsum("rqs,sp->rqp", X, W), X @ V.T, np.tanh(X) @ W + 1.0


def test_a_float64_stack_times_one_matrix_takes_the_tuned_product_and_matches_numpy():
    # X(b, s, d) @ W(d, h): the stack's rows as one matrix (lowering/tiles.py), reshaped back
    rng = np.random.default_rng(5)
    X, W, V = rng.standard_normal((4, 33, 41)), rng.standard_normal((41, 37)), rng.standard_normal((29, 41))
    f = pyjitc.jit(stack_products)
    assert "linalg.matmul" in f.lower(X, W, V).as_text()
    for got, want in zip(f(X, W, V), stack_products(X, W, V)):
        assert_same(got, want, accumulate=True)


def batched_products(P, Q, R):
    return P @ Q, np.einsum("bsh,bth->bst", P, R), np.swapaxes(Q, 1, 2) @ np.swapaxes(P, 1, 2), np.matmul(P, Q) - 1.0


def test_float64_batched_products_take_the_tuned_product_and_match_numpy():
    # A(b, m, k) @ B(b, k, n) and transposed layouts as linalg.batch_matmul (lowering/tiles.py)
    rng = np.random.default_rng(6)
    P, Q, R = rng.standard_normal((5, 33, 41)), rng.standard_normal((5, 41, 37)), rng.standard_normal((5, 29, 41))
    f = pyjitc.jit(batched_products)
    assert "linalg.batch_matmul" in f.lower(P, Q, R).as_text()
    for got, want in zip(f(P, Q, R), batched_products(P, Q, R)):
        assert_same(got, want, accumulate=True)


def float64_sine(x):
    return np.sin(x) * 2.0


def test_loading_a_system_linked_module_leaves_no_file_in_the_temporary_folder(tmp_path, monkeypatch):
    # float64 sin needs libm: the module is linked by the system linker, and IREE's loader writes
    # the shared library into $TMPDIR (it is read when the context is made)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    x = np.linspace(0.0, 3.0, 7)
    from pyjitc.backend import iree
    lowered = pyjitc.jit(float64_sine).lower(x)
    assert iree._NEEDS_LIBM.search(lowered.as_text())
    assert_same(lowered.compile()(x), float64_sine(x))
    assert list(tmp_path.iterdir()) == []
