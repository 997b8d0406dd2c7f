"""Fitting a parameter of a simulation by gradient descent: a 1-D heat equation written as plain
NumPy (a run-time loop, in-place slice updates, a data-dependent `if`), differentiated by
pyjitc.value_and_grad unchanged. We observe the final temperature profile made with an unknown
diffusivity and recover it from a wrong guess."""
import time

import numpy as np

import pyjitc


def simulate(u, alpha, steps):
    for _ in range(steps):
        u[1:-1] += alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
        if u.max() > 1e6:          # a run-time check: stablehlo.if in the loop, in both passes
            u *= 0.0
    return u


def loss(alpha, u0, observed, steps):
    u = u0.copy()
    simulate(u, alpha, steps)
    return np.sum((u - observed) ** 2)


def main():
    n, steps = 64, 200
    x = np.linspace(0.0, 1.0, n)
    u0 = np.exp(-200.0 * (x - 0.3) ** 2) + 0.5 * np.exp(-100.0 * (x - 0.7) ** 2)
    true_alpha = 0.31
    observed = simulate(u0.copy(), true_alpha, steps)    # NumPy itself makes the data

    fit = pyjitc.value_and_grad(loss)                    # d loss / d alpha, through the loop
    alpha, lr = 0.1, 0.05
    start = time.perf_counter()
    for it in range(60):
        value, g = fit(alpha, u0, observed, steps)
        alpha -= lr * g / max(1.0, abs(g))                # a clipped step
        if it % 10 == 0:
            print(f"step {it:3d}: alpha = {alpha:.5f}, loss = {value:.3e}")
    elapsed = time.perf_counter() - start
    print(f"recovered alpha = {alpha:.5f} (true {true_alpha}), 60 gradient steps in {elapsed:.2f} s "
          f"(first one compiles)")

    eps = 1e-6   # the gradient against central finite differences of the NumPy function
    fd = (loss(alpha + eps, u0, observed, steps) - loss(alpha - eps, u0, observed, steps)) / (2 * eps)
    print(f"gradient at the fit: pyjitc {fit(alpha, u0, observed, steps)[1]:.6e}, finite differences {fd:.6e}")
    print(pyjitc.grad(loss).lower(alpha, u0, observed, steps).as_text()[:600], "...")


if __name__ == "__main__":
    main()
