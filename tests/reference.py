"""NumPy is the reference: compare a pyjitc result with NumPy's on type, shape, dtype and value."""
import numpy as np

# Documented tolerances (README, "Numerical agreement"): integers and bools exactly; floats to a
# relative tolerance per dtype, looser for reductions and contractions whose summation order differs.
RTOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 2e-6, np.dtype(np.float64): 1e-13}
RTOL_ACCUM = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12}


def assert_same(got, want, accumulate=False, path="result", scale=None, atol=None):
    """`scale`: the magnitude summed over (e.g. sum |x|), bounding a reduction's rounding error;
    `atol`: an explicit absolute tolerance (array or scalar) where the error is input-bound."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), f"{path}: keys {list(got)} != {list(want)}"
        for k in want:
            assert_same(got[k], want[k], accumulate, f"{path}[{k!r}]", scale, atol)
        return
    if want is None:
        assert got is None, f"{path}: got {got!r}, NumPy gives None"
        return
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want), f"{path}: {type(got).__name__} != {type(want).__name__}"
        assert len(got) == len(want), f"{path}: length {len(got)} != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, accumulate, f"{path}[{i}]", scale, atol)
        return
    if isinstance(want, (bool, int, float)) and not isinstance(want, np.generic):
        assert type(got) is type(want), f"{path}: {type(got).__name__} != Python {type(want).__name__}"
        want, got = np.asarray(want), np.asarray(got)
    else:
        assert isinstance(got, np.ndarray) == isinstance(want, np.ndarray), \
            f"{path}: got {type(got).__name__}, NumPy gives {type(want).__name__}"
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{path}: shape {got.shape} != NumPy's {want.shape}"
    assert got.dtype == want.dtype, f"{path}: dtype {got.dtype} != NumPy's {want.dtype}"
    if want.dtype.kind == "c":   # each part, to a tolerance relative to the complex magnitude
        part = np.dtype(np.float32 if want.dtype == np.complex64 else np.float64)
        rtol = (RTOL_ACCUM if accumulate else RTOL)[part]
        with np.errstate(invalid="ignore", over="ignore"):
            magnitude = np.abs(want.astype(np.complex128))
        bound = np.where(np.isfinite(magnitude), rtol * magnitude, 0.0) + np.finfo(part).tiny if atol is None else atol
        for name in ("real", "imag"):
            assert_same(np.array(getattr(got, name)), np.array(getattr(want, name)), accumulate,
                        f"{path}.{name}", scale, bound)
        return
    if want.dtype.kind == "f":
        rtol = (RTOL_ACCUM if accumulate else RTOL)[want.dtype]
        if scale is None:
            scale = np.max(np.abs(want[np.isfinite(want)]), initial=0.0) if accumulate else 0.0
        tiny = np.finfo(want.dtype).tiny if want.dtype != np.float16 else 1e-7
        g, w = got.astype(np.float64), want.astype(np.float64)
        bound = ((rtol * scale + tiny) if atol is None else atol) + rtol * np.abs(w)
        with np.errstate(invalid="ignore"):
            ok = (np.abs(g - w) <= bound) | (np.isnan(g) & np.isnan(w)) | (g == w)
        assert ok.all(), f"{path}: values differ beyond tolerance at {np.argwhere(~ok)[:5].tolist()}: got {g[~ok][:5]}, NumPy {w[~ok][:5]}"
    else:
        np.testing.assert_array_equal(got, want, err_msg=path)


def numpy_result(fn, *args, **kwargs):
    """What NumPy returns (or raises) for fn; run on copies so in-place updates don't leak."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with np.errstate(all="ignore"):
        return fn(*args, **kwargs)


def assert_same_call(jitted, fn, *args, accumulate=False, **kwargs):
    """Call NumPy and pyjitc on separate copies of the arguments; compare the results and what
    each left in the argument arrays (in-place updates)."""
    import copy
    np_args, jit_args = copy.deepcopy(args), copy.deepcopy(args)
    with np.errstate(all="ignore"):
        want = fn(*np_args, **kwargs)
    got = jitted(*jit_args, **kwargs)
    assert_same(got, want, accumulate)
    for i, (g, w) in enumerate(zip(jit_args, np_args)):
        if isinstance(w, (np.ndarray, tuple, list, dict)):
            assert_same(g, w, accumulate, path=f"argument {i} after the call")
    return got
