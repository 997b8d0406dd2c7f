"""Gradient vs forward time for pyjitc.grad, and against jax.grad where JAX is installed (the
same programs written for JAX: the stencil with lax.fori_loop and .at[] updates). Best of
`--repeat` calls after a warm-up (compiles excluded). Run: python bench/bench_autodiff.py"""
import argparse
import time

import numpy as np

import pyjitc


# ---------------------------------------------------------------- the programs, as plain NumPy

def mlp_loss(w1, w2, x, labels):
    h = np.tanh(x @ w1)
    logits = h @ w2
    m = np.max(logits, axis=1, keepdims=True)
    logp = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return -np.mean(np.sum(logp * labels, axis=1))


def stencil_loss(u, alpha, steps):
    u = u.copy()
    for _ in range(steps):
        u[1:-1] += alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
    return np.sum(u * u)


def softmax_loss(x, w):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return np.sum(e / np.sum(e, axis=-1, keepdims=True) * w)


def jax_versions():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    def mlp(w1, w2, x, labels):
        logits = jnp.tanh(x @ w1) @ w2
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits, axis=1) * labels, axis=1))

    def stencil(u, alpha, steps):
        def body(_, u):
            return u.at[1:-1].add(alpha * (u[2:] - 2 * u[1:-1] + u[:-2]))
        u = jax.lax.fori_loop(0, steps, body, u)
        return jnp.sum(u * u)

    def softmax(x, w):
        return jnp.sum(jax.nn.softmax(x, axis=-1) * w)

    return {"mlp": (jax.jit(mlp), jax.jit(jax.grad(mlp, argnums=(0, 1)))),
            "stencil": (jax.jit(stencil, static_argnums=2), jax.jit(jax.grad(stencil, argnums=(0, 1)), static_argnums=2)),
            "softmax": (jax.jit(softmax), jax.jit(jax.grad(softmax)))}


def best(fn, args, repeat):
    out = fn(*args)
    if hasattr(out, "block_until_ready") or isinstance(out, tuple):
        _block(out)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        _block(fn(*args))
        times.append(time.perf_counter() - start)
    return min(times)


def _block(out):
    for o in out if isinstance(out, tuple) else (out,):
        if hasattr(o, "block_until_ready"):
            o.block_until_ready()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--case", action="append", choices=("mlp", "stencil", "softmax"),
                        help="run only these cases (repeatable)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    labels = np.eye(10)[rng.integers(0, 10, 512)]
    cases = {
        "mlp": ("MLP cross-entropy, x 512x256, W1 256x512, W2 512x10 (f32)", mlp_loss, (0, 1),
                tuple(a.astype(np.float32) for a in (rng.normal(size=(256, 512)) * 0.05,
                      rng.normal(size=(512, 10)) * 0.05, rng.normal(size=(512, 256)), labels))),
        "stencil": ("1-D stencil, 10,000 points x 500 steps, run-time loop (f64)", stencil_loss, (0, 1),
                    (rng.random(10_000), 0.2, 500)),
        "softmax": ("softmax-weighted sum, 1000x100 (f64)", softmax_loss, 0,
                    (rng.random((1000, 100)), rng.random((1000, 100)))),
    }
    jax_fns = jax_versions()
    print(f"{'case':<62} {'forward':>9} {'grad':>9} {'ratio':>6} {'jax fwd':>9} {'jax grad':>9}")
    for name, (what, fn, argnums, call) in cases.items():
        if args.case and name not in args.case:
            continue
        fwd = best(pyjitc.jit(fn), call, args.repeat)
        grd = best(pyjitc.grad(fn, argnums=argnums), call, args.repeat)
        jf = jg = float("nan")
        if jax_fns is not None:
            jfwd, jgrad = jax_fns[name]
            jf, jg = best(jfwd, call, args.repeat), best(jgrad, call, args.repeat)
        print(f"{what:<62} {fwd * 1e3:8.2f}ms {grd * 1e3:8.2f}ms {grd / fwd:5.1f}x "
              f"{jf * 1e3:8.2f}ms {jg * 1e3:8.2f}ms")


if __name__ == "__main__":
    main()
