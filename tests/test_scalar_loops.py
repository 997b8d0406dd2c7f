"""Run-time loops whose bodies are scalar work (element reads and writes, arithmetic, nested loops
and ifs) run as one native loop inside one IREE dispatch (pyjitc/lowering/scalar_loop.py), and
every answer is NumPy's: the kernels as people write them, each primitive's scalar form against
NumPy on hard values per dtype, and the loops the strategy must leave to stablehlo.while."""

import numpy as np
import pytest

import pyjitc
from tests.fuzz import load_source
from tests.reference import assert_same

rng = np.random.default_rng(23)


def lowered_as(fn, *args) -> str:
    """'dispatch' when the function's loops became native loops, 'host' when some stayed
    stablehlo.while, 'both' for a mix."""
    text = pyjitc.jit(fn).lower(*args).as_text()
    # a native loop is an scf.while in a dispatch region (a region without one copies an array)
    native, host = "scf.while" in text, "stablehlo.while" in text
    return {(True, False): "dispatch", (False, True): "host", (True, True): "both"}.get((native, host), "none")


def check(fn, *args, accumulate=False):
    """pyjitc and NumPy on fresh copies of the arguments: results and arguments afterwards agree."""
    copy = lambda: [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    np_args, jit_args = copy(), copy()
    with np.errstate(all="ignore"):
        want = fn(*np_args)
    got = pyjitc.jit(fn)(*jit_args)
    assert_same(got, want, accumulate=accumulate)
    for i, (g, w) in enumerate(zip(jit_args, np_args)):
        if isinstance(w, np.ndarray):
            assert_same(g, w, path=f"argument {i} afterwards")


# ---------------------------------------------------------------- kernels as people write them


def sum_positive_squares(x):
    total = np.float64(0.0)
    for i in range(x.shape[0]):
        if x[i] > 0:
            total += x[i] * x[i]
    return total


def recurrence(x, a):
    y = np.empty_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = y[i - 1] * a + x[i]
    return y


def matmul_loops(A, B):
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            s = 0.0
            for p in range(k):
                s += A[i, p] * B[p, j]
            C[i, j] = s
    return C


def lcs_length(a, b):
    n, m = a.shape[0], b.shape[0]
    L = np.zeros((n + 1, m + 1), dtype=np.int64)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if a[i - 1] == b[j - 1]:
                L[i, j] = L[i - 1, j - 1] + 1
            else:
                L[i, j] = max(L[i - 1, j], L[i, j - 1])
    return L[n, m]


def crc32(data):
    crc = np.uint32(0xFFFFFFFF)
    for b in data:
        crc ^= np.uint32(b)
        for _ in range(8):
            if crc & np.uint32(1):
                crc = (crc >> np.uint32(1)) ^ np.uint32(0xEDB88320)
            else:
                crc >>= np.uint32(1)
    return crc ^ np.uint32(0xFFFFFFFF)


def popcounts(x):
    out = np.zeros(x.shape[0], dtype=np.int64)
    for i in range(x.shape[0]):
        v = x[i]
        c = 0
        while v:
            c += v & 1
            v >>= 1
        out[i] = c
    return out


def collatz_steps(starts):
    steps = np.zeros_like(starts)
    for i in range(starts.shape[0]):
        n = starts[i]
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            steps[i] += 1
    return steps


def insertion_sort(x):
    for i in range(1, x.shape[0]):
        key = x[i]
        j = i - 1
        while j >= 0 and x[j] > key:
            x[j + 1] = x[j]
            j -= 1
        x[j + 1] = key


def prefix_max_flags(x, flags):
    best = x[0]
    for i in range(x.shape[0]):
        flags[i] = x[i] >= best
        best = max(best, x[i])
    return best


def integer_powers(b, e):
    # integer ** integer by squaring, wrapping as NumPy's (IREE has no math.ipowi: these loops
    # ran on the host, 1e5 steps of `x[k] = k ** 2` in 2.5 s)
    out = np.zeros_like(b)
    for i in range(b.shape[0]):
        out[i] = b[i] ** e[i] + (i % 3) ** 2 - (i % 4) ** 3
    return out


KERNELS = [
    (sum_positive_squares, lambda n: (rng.standard_normal(n),)),
    (recurrence, lambda n: (rng.standard_normal(n), 0.9)),
    (matmul_loops, lambda n: (rng.random((n, n + 3)), rng.random((n + 3, n - 1)))),
    (lcs_length, lambda n: (rng.integers(0, 4, n), rng.integers(0, 4, n + 5))),
    (crc32, lambda n: (rng.integers(0, 256, n).astype(np.uint8),)),
    (popcounts, lambda n: (rng.integers(0, 2 ** 40, n),)),
    (collatz_steps, lambda n: (rng.integers(1, 1000, n),)),
    (insertion_sort, lambda n: (rng.standard_normal(n),)),
    (prefix_max_flags, lambda n: (rng.standard_normal(n).astype(np.float32), np.zeros(n, dtype=bool))),
    (integer_powers, lambda n: (rng.integers(-300, 300, n), rng.integers(0, 70, n))),
    (integer_powers, lambda n: (rng.integers(-9, 9, n).astype(np.int8), rng.integers(0, 12, n).astype(np.int8))),
    (integer_powers, lambda n: (rng.integers(0, 2 ** 20, n).astype(np.uint32), rng.integers(0, 40, n).astype(np.uint32))),
]


@pytest.mark.parametrize("fn,make", KERNELS, ids=[k[0].__name__ for k in KERNELS])
def test_scalar_kernel_runs_as_one_native_loop_and_matches_numpy(fn, make):
    for n in (3, 17, 40):
        check(fn, *make(n), accumulate=fn is matmul_loops)
    assert lowered_as(fn, *make(40)) == "dispatch"


def test_out_of_bounds_index_inside_a_native_loop_raises_at_its_line():
    def shifted(x):
        y = np.zeros_like(x)
        for i in range(x.shape[0]):
            y[i] = x[i + 1]
        return y
    x = np.arange(6.0)
    with pytest.raises(IndexError):
        shifted(x)
    assert lowered_as(shifted, x) == "dispatch"
    with pytest.raises(pyjitc.RunError, match=r"out of bounds"):
        pyjitc.jit(shifted)(x)


def test_loop_that_runs_zero_times_leaves_its_values():
    def f(x, n):
        y = x.copy()
        s = np.float64(0.0)
        for i in range(n):
            y[i] = 2.0 * y[i]
            s += y[i]
        return y, s
    check(f, np.arange(4.0), 0)


def test_native_loop_inside_a_loop_of_array_steps():
    def f(u, steps):
        for _ in range(steps):
            u[1:-1] = 0.5 * (u[:-2] + u[2:])   # an array step through a scratch array (lowering/scratch.py)
            acc = 0.0
            for i in range(u.shape[0]):        # a scalar loop: native, inside it
                acc += u[i] * u[i]
            u[0] = acc
        return u
    check(f, rng.random(12), 5)
    assert lowered_as(f, rng.random(12), 5) == "dispatch"


# ---------------------------------------------------------------- loops left to stablehlo.while


def test_arrays_swapped_each_step_run_natively_with_a_copy_per_step_and_match_numpy():
    def f(x, n):
        a, b = x.copy(), np.zeros_like(x)
        for i in range(n):
            b[i % x.shape[0]] = a[(i + 1) % x.shape[0]] + 1.0
            a, b = b, a
        return a, b
    for n in (0, 1, 2, 7):
        check(f, np.arange(5.0), n)
    # (a host loop until the swap was copied through a scratch array: lowering/scratch.py)
    assert lowered_as(f, np.arange(5.0), 7) == "dispatch"


def read_old_after_write(x):
    y = x.copy()
    for i in range(1, x.shape[0]):
        old = y.copy()
        y[i] = y[i - 1] + 1.0
        y[i - 1] = old[i] * 2.0
    return y


def test_old_version_read_after_a_write_stays_a_host_loop_and_matches_numpy():
    check(read_old_after_write, np.arange(6.0))
    assert lowered_as(read_old_after_write, np.arange(6.0)) == "host"   # the old version needs a copy


def test_a_stencil_step_reading_its_own_neighbours_runs_natively_through_a_scratch_array():
    # the new values read elements the write replaces: computed into a scratch array the loop
    # carries, then copied in (lowering/scratch.py); a host loop before
    def f(u, steps):
        for _ in range(steps):
            u[1:-1] += 0.1 * (u[:-2] - 2 * u[1:-1] + u[2:])
        return u
    for steps in (0, 1, 4):
        check(f, rng.random(16), steps)
    assert lowered_as(f, rng.random(16), 4) == "dispatch"


# ---------------------------------------------------------------- each primitive's scalar form


FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-300, 1e300,   # no subnormals: README, Known limits
          -1e300, np.inf, -np.inf, np.nan,
          1 + 2.0 ** -52, 100.0, -7.0]
UNARY_FLOAT = ["np.negative", "np.absolute", "np.sign", "np.exp", "np.expm1", "np.log", "np.log1p",
               "np.sqrt", "np.cbrt", "np.sin", "np.cos", "np.tan", "np.tanh", "np.floor", "np.ceil",
               "np.rint", "np.isnan", "np.isfinite", "np.isinf", "np.logical_not", "np.square",
               "np.reciprocal", "np.arctan", "np.arcsinh", "np.log2", "np.exp2"]
BINARY_FLOAT = ["np.add", "np.subtract", "np.multiply", "np.true_divide", "np.floor_divide", "np.remainder",
                "np.maximum", "np.minimum", "np.fmax", "np.arctan2", "np.power", "np.hypot", "np.copysign",
                "np.less", "np.less_equal", "np.equal", "np.not_equal", "np.greater", "np.logical_and"]
UNARY_INT = ["np.negative", "np.absolute", "np.sign", "np.invert", "np.square", "np.logical_not"]
BINARY_INT = ["np.add", "np.subtract", "np.multiply", "np.floor_divide", "np.remainder", "np.maximum",
              "np.minimum", "np.bitwise_and", "np.bitwise_or", "np.bitwise_xor", "np.left_shift",
              "np.right_shift", "np.less", "np.greater_equal", "np.equal", "np.true_divide"]


def _int_values(dtype):
    info = np.iinfo(dtype)
    vals = [0, 1, 2, 3, 7, 8, 31, 32, 63, 64, 100, info.max, info.max - 1, info.min, info.min + 1]
    if info.min < 0:
        vals += [-1, -2, -3, -7, -8, -64, -100]
    return np.array(sorted(set(vals)), dtype=dtype)


PRIMITIVE_CASES = [
    ("float64", np.array(FLOATS), UNARY_FLOAT, BINARY_FLOAT),
    ("float32", np.array([v for v in FLOATS if abs(v) < 1e30 or not np.isfinite(v)], dtype=np.float32) ,
     UNARY_FLOAT, BINARY_FLOAT),
    ("int64", _int_values(np.int64), UNARY_INT, BINARY_INT),
    ("int32", _int_values(np.int32), UNARY_INT, BINARY_INT),
    ("uint32", _int_values(np.uint32), UNARY_INT, BINARY_INT),
    ("uint8", _int_values(np.uint8), UNARY_INT, BINARY_INT),
    ("bool", np.array([False, True] * 4), ["np.logical_not", "np.invert", "np.absolute"],
     ["np.add", "np.multiply", "np.maximum", "np.minimum", "np.bitwise_xor", "np.less", "np.equal"]),
]


def _elementwise_program(unary, binary) -> str:
    """One function: every ufunc applied element by element in one run-time loop (one compile)."""
    lines = ["import numpy as np", "", "", "def fuzzed(x, a, b):", "    n = x.shape[0]", "    m = a.shape[0]"]
    for k, u in enumerate(unary):
        lines.append(f"    u{k} = np.zeros(n, dtype={u}(x).dtype)")
    for k, u in enumerate(binary):
        lines.append(f"    b{k} = np.zeros(m, dtype={u}(a, b).dtype)")
    lines.append("    for i in range(n):")
    lines += [f"        u{k}[i] = {u}(x[i])" for k, u in enumerate(unary)] or ["        pass"]
    lines.append("    for i in range(m):")
    lines += [f"        b{k}[i] = {u}(a[i], b[i])" for k, u in enumerate(binary)] or ["        pass"]
    outs = [f"u{k}" for k in range(len(unary))] + [f"b{k}" for k in range(len(binary))]
    lines.append(f"    return {', '.join(outs)}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name,values,unary,binary", PRIMITIVE_CASES, ids=[c[0] for c in PRIMITIVE_CASES])
def test_each_scalar_primitive_matches_numpy_on_hard_values(tmp_path, name, values, unary, binary):
    fn = load_source(_elementwise_program(unary, binary), tmp_path, f"scalar_rules_{name}")
    a = np.repeat(values, values.shape[0])
    b = np.tile(values, values.shape[0])
    assert lowered_as(fn, values, a, b) == "dispatch"
    with np.errstate(all="ignore"):
        want = [getattr(np, u[3:])(values) for u in unary] + [getattr(np, u[3:])(a, b) for u in binary]
    got = pyjitc.jit(fn)(values, a, b)
    for u, g, w in zip(unary + binary, got, want):
        assert_same(g, w, path=f"{u} on {name}")


def test_native_loop_followed_by_an_if_that_updates_an_earlier_array():
    # statement fuzzer seed 686758054: IREE returned a null buffer for the if's result ("ref is
    # null") once the loop before it ran as a native loop; a branch now updates a copy
    def f(x, A, n):
        P1 = np.arange(30).astype(np.float64) * 0.0625
        for i in range(n):
            P1[0] = -2.0
        y = x * 1.25
        if A.sum() > 0.0:
            y[1:-1] = A[0][2:] - A[0][:-2]
        return P1, y
    for A in (np.ones((5, 6)), -np.ones((5, 6))):
        check(f, np.arange(6.0), A, 2)


@pytest.mark.parametrize("native", ["1", "0"])
def test_recurrence_without_bounds_checks_runs_as_native_and_as_host_loop(monkeypatch, native):
    # range() bounds known at compile time prove y[i] and y[i - 1] in range: no check, no error
    # code carried; as a host loop whose other carried values all start as constants, IREE 3.13
    # then failed at run time ("indirect buffer reference slot 0 is out range") until those
    # constants entered through a barrier
    monkeypatch.setenv("PYJITC_NATIVE_LOOPS", native)
    check(read_old_after_write, np.arange(6.0))
    assert pyjitc.jit(read_old_after_write).lower(np.arange(6.0)).signature.checks == ()   # no check left


def test_bounds_checks_stay_where_the_index_can_leave_the_array():
    def f(x, k):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i + k]           # k is only known at run time
        return s
    with pytest.raises(pyjitc.RunError, match="out of bounds"):
        pyjitc.jit(f)(np.arange(6.0), 1)
    check(f, np.arange(6.0), -2)


def test_if_updating_an_argument_leaves_an_earlier_product_alone():
    # statement fuzzer seed 2311 program 290: with the argument copied inside the branch, IREE
    # aliased `b2 = A * 1.0` with A and b2 showed the branch's write
    def f(x, A):
        b2 = A * 1.0
        if x[0] > 0.0:
            A[:-1, 1:] -= A[:-1, 1:] * (A[:-1, 1:] * 0.25)
        return b2
    for x0 in (1.0, -1.0):
        check(f, np.full(6, x0), rng.standard_normal((5, 6)))
