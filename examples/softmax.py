"""The main example: softmax on 1000x1000x5 float32, compiled by pyjitc, checked against NumPy."""
import time

import numpy as np

import pyjitc


@pyjitc.jit
def softmax(x):
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=-1, keepdims=True)


def best_of(fn, x, repeat=5):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    x = np.random.default_rng(0).random((1000, 1000, 5), dtype=np.float32)
    print(softmax.lower(pyjitc.Template((1000, 1000, 5), np.float32)).as_text())

    start = time.perf_counter()
    y = softmax(x)                       # first call: trace, lower, compile with IREE
    first = time.perf_counter() - start
    y = np.asarray(y)
    want = softmax.__wrapped__(x)        # the same function run by NumPy
    err = float(np.max(np.abs(y - want)))
    print(f"result: shape {y.shape}, dtype {y.dtype} (NumPy: {want.shape}, {want.dtype}); "
          f"max abs difference {err:.2e}; allclose(rtol=1e-5): {np.allclose(y, want, rtol=1e-5, atol=1e-7)}")

    t_numpy = best_of(softmax.__wrapped__, x)
    t_jit = best_of(softmax, x)
    print(f"first call (compile + run): {first:.2f} s")
    print(f"NumPy {t_numpy * 1e3:.1f} ms, pyjitc {t_jit * 1e3:.1f} ms per call "
          f"(best of 5): pyjitc takes {t_jit / t_numpy:.2f}x NumPy's time")
    print(softmax.cache_info())


if __name__ == "__main__":
    main()
