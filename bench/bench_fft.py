"""np.fft.fft under pyjitc against NumPy's pocketfft: the largest error relative to the result's
largest magnitude (against NumPy in complex128), the compile time (lower + IREE compile, in a
fresh cache, wall and CPU time, iree-compile's included) and the call time (best of `--repeat` after a warm-up).
Run: python bench/bench_fft.py [--sizes 1,2,3,...] [--repeat 50]"""
import argparse
import os
import resource
import tempfile
import time

import numpy as np

SIZES = (1, 2, 3, 5, 7, 8, 16, 17, 30, 64, 100, 128, 256, 263, 1000, 1009, 1024, 4096, 4099)


def fft(x):
    return np.fft.fft(x)


def cpu_time() -> float:
    """This process's CPU time and its children's (iree-compile runs as a child process)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def best(fn, x, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--repeat", type=int, default=50)
    a = parser.parse_args(argv)
    os.environ["PYJITC_CACHE_DIR"] = tempfile.mkdtemp(prefix="pyjitc-bench-fft-")
    import pyjitc
    rng = np.random.default_rng(0)
    print(f"{'dtype':10} {'n':>5} {'max rel err':>11} {'compile s':>9} {'cpu s':>6} {'pyjitc us':>9} {'numpy us':>8}")
    for dtype in (np.complex128, np.complex64):
        for n in map(int, a.sizes.split(",")):
            x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
            jitted = pyjitc.jit(fft)
            t, c = time.perf_counter(), cpu_time()
            compiled = jitted.lower(pyjitc.Template((n,), dtype)).compile()
            compile_s, cpu_s = time.perf_counter() - t, cpu_time() - c
            got = compiled(x)
            want = np.fft.fft(x.astype(np.complex128))
            assert got.dtype == np.fft.fft(x).dtype
            err = float(np.abs(got - want).max() / np.abs(want).max())
            compiled(x)
            print(f"{np.dtype(dtype).name:10} {n:5d} {err:11.2e} {compile_s:9.2f} {cpu_s:6.2f} "
                  f"{best(compiled, x, a.repeat) * 1e6:9.0f} {best(np.fft.fft, x, a.repeat) * 1e6:8.0f}", flush=True)


if __name__ == "__main__":
    main()
