"""Results and arguments as buffers: large results are NumPy arrays over IREE's memory, a result
passed back in (and a large 64-byte aligned array) is used without a copy, and none of this ever
makes two arrays share memory where NumPy's would not."""
import os

import numpy as np
import pytest

import pyjitc
from pyjitc.backend import iree as backend

from .reference import assert_same

SHAPE = (300, 300)          # 720 KB of float64: above the zero-copy threshold


def aligned(shape, dtype, fill):
    """A C-contiguous array whose data starts on a 64-byte boundary (what IREE can import)."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.empty(nbytes + 64, np.uint8)
    start = (-raw.ctypes.data) % 64
    out = raw[start:start + nbytes].view(dtype).reshape(shape)
    out[...] = fill
    return out


def scale(x):
    return x * 2 + 1


def times_one(x):
    return x * 1


def identity(x):
    return x


def flat(x):
    return x.reshape(-1)


def positive(x):
    return x > 0


def count(mask):
    return np.count_nonzero(mask), ~mask


def bump(x):
    x += 1
    return x.sum()


def copies(x):
    return np.array(x), np.asarray(x), x.copy(), np.copy(x), x.reshape(-1).copy(), np.asarray(x, dtype=x.dtype)


def update_a_copy(x):
    y = np.array(x)
    y += 1
    z = np.asarray(x, dtype=np.float32)
    z -= 1
    return y, z


@pytest.fixture(scope="module")
def jitted():
    return {f.__name__: pyjitc.jit(f) for f in (scale, times_one, identity, flat, positive, count, bump, copies, update_a_copy)}


def sharing(results, x):
    return [np.shares_memory(r, x) for r in results]


def test_large_results_are_numpy_arrays_over_iree_memory_and_pass_back_in_uncopied(jitted):
    x = np.random.default_rng(0).standard_normal(SHAPE)
    y = jitted["scale"](x)
    assert isinstance(y, np.ndarray) and y.flags.c_contiguous
    exe = jitted["scale"].lower(pyjitc.Template(SHAPE, np.float64)).compile().executable
    view = backend._as_result_buffer(y, exe.rt)
    assert view is not None, "a large result is a view of IREE's buffer"
    assert exe._input(y, []) is view, "passed back in, its buffer is used as it is"
    z = jitted["scale"](y)
    assert_same(z, scale(scale(x)))
    assert not np.shares_memory(z, y)


def reinterpret(x):
    return x + 1


def test_a_result_viewed_as_another_dtype_passes_back_in_with_that_dtype():
    f, g = pyjitc.jit(scale), pyjitc.jit(reinterpret)
    y = f(np.random.default_rng(4).standard_normal(SHAPE))
    as_int = y.view(np.int64)
    assert_same(g(as_int), reinterpret(as_int))


def test_chained_bool_results_keep_their_values(jitted):
    x = np.random.default_rng(1).standard_normal(SHAPE)
    mask = jitted["positive"](x)
    got = jitted["count"](mask)
    want = count(positive(x))
    assert_same(got[0], want[0])
    assert_same(got[1], want[1])


@pytest.mark.parametrize("make", [aligned, lambda s, d, f: np.full(s, f, d)], ids=["aligned", "numpy-allocated"])
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_results_share_memory_with_arguments_exactly_when_numpys_do(jitted, make, dtype):
    for name in ("times_one", "identity", "flat", "scale"):
        x = make(SHAPE, dtype, 3)
        want_x = np.full(SHAPE, 3, dtype)
        got, want = jitted[name](x), globals()[name](want_x)
        assert_same(got, want)
        assert np.shares_memory(got, x) == np.shares_memory(want, want_x), name
        x[...] = 7           # the caller reuses its array: a result that is not a view keeps its values
        want_x[...] = 7
        assert_same(got, want)


def test_read_only_and_memory_mapped_inputs_are_read_not_imported(jitted, tmp_path):
    x = aligned(SHAPE, np.float64, 1.5)
    x.flags.writeable = False
    assert_same(jitted["scale"](x), scale(x))
    path = tmp_path / "x.bin"
    np.full(SHAPE, 2.0).tofile(path)
    m = np.memmap(path, dtype=np.float64, mode="r", shape=SHAPE)
    assert_same(jitted["scale"](m), scale(np.asarray(m)))


def test_copies_of_arguments_are_new_arrays(jitted):
    x, want_x = np.arange(6.0), np.arange(6.0)
    got, want = jitted["copies"](x), copies(want_x)
    for g, w in zip(got, want):
        assert_same(g, w)
    assert sharing(got, x) == sharing(want, want_x) == [False, True, False, False, False, True]
    assert [g is x for g in got] == [w is want_x for w in want]


def test_updating_a_copy_leaves_the_argument_alone(jitted):
    x, want_x = np.arange(6.0), np.arange(6.0)
    got, want = jitted["update_a_copy"](x), update_a_copy(want_x)
    for g, w in zip(got, want):
        assert_same(g, w)
    assert_same(x, want_x)


def writes_into_a_copy(x):
    y = x.copy()
    y[0] = 1.0
    return y


def writes_into_a_flat_copy(x):
    w = x.flatten()
    w[2] = 5.0
    return w


@pytest.mark.parametrize("where", ["aligned", "passed back"])
def test_writing_into_a_copy_of_a_large_argument_leaves_the_callers_array_alone(where):
    # `y = x.copy(); y[0] = 1` wrote the caller's x too once x was 64 KiB or larger (imported
    # without a copy: IREE updated the argument's buffer in place; a probe of longer programs,
    # a 128x128 heat simulation whose boundary helper wrote into its copy)
    x = aligned(SHAPE, np.float64, 0.5) if where == "aligned" else pyjitc.jit(scale)(np.zeros(SHAPE))
    before = x.copy()
    for fn in (writes_into_a_copy, writes_into_a_flat_copy):
        assert_same(pyjitc.jit(fn)(x), fn(before.copy()))
        assert_same(x, before)


def test_in_place_update_of_a_passed_back_result_writes_it(jitted):
    x = np.random.default_rng(2).standard_normal(SHAPE)
    y = jitted["scale"](x)
    want_y = scale(x)
    assert_same(jitted["bump"](y), bump(want_y))
    assert_same(y, want_y)


def test_np_array_copy_false_refuses_a_dtype_change_as_numpy_does():
    def convert(x):
        return np.array(x, dtype=np.float32, copy=False)

    with pytest.raises(ValueError):
        convert(np.arange(3.0))
    with pytest.raises(pyjitc.NotSupportedError, match="copy=False"):
        pyjitc.jit(convert)(np.arange(3.0))


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def test_repeated_calls_reuse_iree_memory_instead_of_faulting_in_new_pages():
    # IREE's caching allocator keeps freed buffers: a call whose 8 MB result was dropped gets that
    # memory back (already mapped) rather than fresh pages from the OS (about 1900 page faults per
    # call with IREE's default allocator, PYJITC_ALLOCATOR=default, when NumPy code runs between
    # the calls as here).
    import resource
    f = pyjitc.jit(softmax)
    x = np.random.default_rng(3).random((400, 1000, 5), dtype=np.float32)
    for _ in range(3):
        f(x)
    faults = []
    for _ in range(5):
        softmax(x)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        y = f(x)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
        del y
    assert sorted(faults)[2] < 200, faults


RUNTIME_FLAGS_PROGRAM = """
import numpy as np, pyjitc
@pyjitc.jit
def twice_plus_one(x):
    return x * 2 + 1
x = np.arange(5.0)
assert np.array_equal(twice_plus_one(x), x * 2 + 1)
print("same as NumPy")
"""


@pytest.mark.parametrize("flags, ok", [("--task_topology_max_group_count=1", True), ("--no_such_flag=1", False)])
def test_runtime_flags_from_the_environment_reach_iree_or_name_the_variable(tmp_path, flags, ok):
    # PYJITC_RUNTIME_FLAGS is parsed by IREE's runtime before the first device is made (a fresh
    # process: flags are read once); an unknown flag is an error naming the variable
    import subprocess
    import sys
    script = tmp_path / "runtime_flags.py"
    script.write_text(RUNTIME_FLAGS_PROGRAM)
    env = {**os.environ, "PYJITC_RUNTIME_FLAGS": flags, "PYJITC_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    if ok:
        assert done.returncode == 0 and "same as NumPy" in done.stdout, done.stderr
    else:
        assert done.returncode != 0
        assert "PYJITC_RUNTIME_FLAGS" in done.stderr and "no_such_flag" in done.stderr
