"""Side-by-side timings, one process: NumPy vs pyjitc (and jax.jit when installed), as ratios.
Run: .venv/bin/python bench/bench_core.py"""
import time

import numpy as np

import pyjitc

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = None


def softmax(x):
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=-1, keepdims=True)


def tiny(x):
    return x * 2 + 1


def best(fn, *args, repeat=20):
    fn(*args)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    rng = np.random.default_rng(0)
    cases = [("softmax f32[1000,1000,5]", softmax, rng.random((1000, 1000, 5), dtype=np.float32), 5),
             ("softmax f32[1000]", softmax, rng.random(1000, dtype=np.float32), 200),
             ("x*2+1 f32[10]", tiny, rng.random(10, dtype=np.float32), 500)]
    print(f"{'case':28} {'numpy':>10} {'pyjitc':>10} {'ratio':>7} {'compile s':>10}" + ("  jax.jit" if jax else ""))
    for name, fn, x, repeat in cases:
        jitted = pyjitc.jit(fn)
        t0 = time.perf_counter()
        jitted(x)
        compile_s = time.perf_counter() - t0
        t_np, t_pj = best(fn, x, repeat=repeat), best(jitted, x, repeat=repeat)
        line = f"{name:28} {t_np * 1e6:8.1f}us {t_pj * 1e6:8.1f}us {t_pj / t_np:6.2f}x {compile_s:10.2f}"
        if jax:
            jfn = jax.jit(lambda v: jax.nn.softmax(v, axis=-1)) if fn is softmax else jax.jit(lambda v: v * 2 + 1)
            xj = jnp.asarray(x)
            t_jax = best(lambda v: jfn(v).block_until_ready(), xj, repeat=repeat)
            line += f"  {t_jax * 1e6:8.1f}us ({t_jax / t_np:.2f}x)"
        print(line)


if __name__ == "__main__":
    main()
