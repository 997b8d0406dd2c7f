"""Time-stepping stencil: 2-D heat equation written as plain NumPy with a loop, in-place slice
updates and a step count passed as an argument. pyjitc compiles it unchanged: the loop becomes one
stablehlo.while (a new step count does not recompile) and the caller's array is updated in place,
exactly as NumPy leaves it."""
import time

import numpy as np

import pyjitc


def heat(u, steps, alpha):
    for _ in range(steps):
        lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
        u[1:-1, 1:-1] += alpha * lap
        if u.max() > 1e6:      # a run-time check on array values: stablehlo.if inside the loop
            break
    return u.sum()


heat_jit = pyjitc.jit(heat)


def main():
    n = 256
    u0 = np.zeros((n, n))
    u0[n // 4: 3 * n // 4, n // 4: 3 * n // 4] = 1.0

    u_np, u_jit = u0.copy(), u0.copy()
    start = time.perf_counter()
    total_np = heat(u_np, 500, 0.2)
    t_np = time.perf_counter() - start

    start = time.perf_counter()
    total_jit = heat_jit(u_jit, 500, 0.2)   # first call compiles
    t_first = time.perf_counter() - start
    u_jit2 = u0.copy()
    start = time.perf_counter()
    heat_jit(u_jit2, 500, 0.2)
    t_jit = time.perf_counter() - start

    print(f"max |u_pyjitc - u_numpy| = {np.max(np.abs(u_jit - u_np)):.3g}; sums {total_jit:.6f} vs {total_np:.6f}")
    print(f"NumPy {t_np * 1e3:.1f} ms, pyjitc {t_jit * 1e3:.1f} ms ({t_jit / t_np:.2f}x NumPy's time), "
          f"first call with compile {t_first:.2f} s")
    heat_jit(u0.copy(), 50, 0.1)            # other step count and coefficient: no recompile
    print("compiled versions:", heat_jit.cache_info().currsize)
    assert np.allclose(u_jit, u_np, rtol=1e-12, atol=1e-12)


if __name__ == "__main__":
    main()
