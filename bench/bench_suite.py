"""The benchmark suite: NumPy vs jax.jit and numba.njit (when installed) vs pyjitc.jit, in one process,
interleaved, medians and ratios; plus first-call latency in fresh processes (cold, and with a
warm disk cache). Writes bench/results.json and, with matplotlib, bench/results.png.

    python bench/bench_suite.py [--rounds 15] [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

import pyjitc

HERE = Path(__file__).parent
try:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)     # float64 cases stay float64, as in NumPy
except ImportError:
    jax = None
try:
    import numba
except ImportError:
    numba = None


# ---------------------------------------------------------------- the programs (NumPy source)

def softmax(x):
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=-1, keepdims=True)


def mlp(x, w1, b1, w2, b2, w3, b3):
    h = np.maximum(x @ w1 + b1, 0)
    h = np.maximum(h @ w2 + b2, 0)
    return h @ w3 + b3


def jacobi(u, steps):
    for _ in range(steps):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u


def chain(x):
    return np.sqrt(np.abs(np.sin(x) * np.cos(x) + np.exp(-x * x))) * 2.0 - x / (1.0 + x * x)


def tiny(x):
    return x * 2 + 1


def solve(a, b):
    return np.linalg.solve(a, b)


def add(x, y):
    return x + y


def axpy(a, x, y):
    return a * x + y


def matmul(a, b):
    return a @ b


def batch_rows(a, c):
    return a.reshape(60, 60, 1, 128) @ c


# ---------------------------------------------------------------- JAX versions (idiomatic JAX)

def jax_versions():
    if jax is None:
        return {}

    def j_softmax(x):
        e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
        return e / jnp.sum(e, axis=-1, keepdims=True)

    def j_mlp(x, w1, b1, w2, b2, w3, b3):
        h = jnp.maximum(x @ w1 + b1, 0)
        h = jnp.maximum(h @ w2 + b2, 0)
        return h @ w3 + b3

    def j_jacobi(u, steps):
        def body(_, u):
            return u.at[1:-1, 1:-1].set(0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]))
        return jax.lax.fori_loop(0, steps, body, u)

    def j_chain(x):
        return jnp.sqrt(jnp.abs(jnp.sin(x) * jnp.cos(x) + jnp.exp(-x * x))) * 2.0 - x / (1.0 + x * x)

    return {"softmax": jax.jit(j_softmax), "mlp": jax.jit(j_mlp), "jacobi": jax.jit(j_jacobi),
            "chain": jax.jit(j_chain), "tiny": jax.jit(lambda x: x * 2 + 1),
            "solve": jax.jit(jnp.linalg.solve), "add": jax.jit(add), "axpy": jax.jit(axpy),
            "matmul": jax.jit(matmul), "batch_rows": jax.jit(batch_rows)}


def cases(quick: bool):
    rng = np.random.default_rng(0)
    big = (200, 1000, 5) if quick else (1000, 1000, 5)
    w = lambda *s: (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32)
    u0 = rng.random((256, 256))
    return [
        ("softmax f32[%s]" % ",".join(map(str, big)), "softmax", softmax,
         lambda: (rng.random(big, dtype=np.float32),)),
        ("softmax f32[1000]", "softmax", softmax, lambda: (rng.random(1000, dtype=np.float32),)),
        ("MLP 3 layers f32 256x512x512x10", "mlp", mlp,
         lambda: (w(256, 512) * 3, w(512, 512), w(512), w(512, 512), w(512), w(512, 10), w(10))),
        ("Jacobi 256x256 f64, 100 in-place steps", "jacobi", jacobi, lambda: (u0.copy(), 100)),
        ("elementwise chain f64[1e6]", "chain", chain, lambda: (rng.standard_normal(1_000_000),)),
        ("x*2+1 f32[8] (call overhead)", "tiny", tiny, lambda: (np.ones(8, np.float32),)),
        ("linalg.solve f64 100x100", "solve", solve,
         lambda: (rng.random((100, 100)) + 100 * np.eye(100), rng.random(100))),
        # memory-bound and BLAS-class cases (issue 18), arrays as NumPy allocates them
        ("x + y f64[1e6]", "add", add, lambda: (rng.random(1_000_000), rng.random(1_000_000))),
        ("a * x + y f64[1e5]", "axpy", axpy, lambda: (rng.random(100_000), rng.random(100_000), rng.random(100_000))),
        ("A @ x f64 4000x5000", "matmul", matmul, lambda: (rng.random((4000, 5000)), rng.random(5000))),
        ("y @ A f64 4000x5000", "matmul", matmul, lambda: (rng.random(4000), rng.random((4000, 5000)))),
        ("A @ B f32 1024", "matmul", matmul,
         lambda: (rng.random((1024, 1024), dtype=np.float32), rng.random((1024, 1024), dtype=np.float32))),
        ("A @ B f64 1024", "matmul", matmul, lambda: (rng.random((1024, 1024)), rng.random((1024, 1024)))),
        ("A.reshape(60,60,1,128) @ C f32", "batch_rows", batch_rows,
         lambda: (rng.random((3600, 128), dtype=np.float32), rng.random((128, 128), dtype=np.float32))),
    ]


def timed(fn, args, block=None):
    start = time.perf_counter()
    out = fn(*args)
    if block is not None:
        block(out)
    return time.perf_counter() - start


def run_case(name, key, fn, make_args, jaxfns, rounds):
    args = make_args()
    jitted = pyjitc.jit(fn)
    runners = {"numpy": (fn, None), "pyjitc": (jitted, None)}
    if key in jaxfns:
        runners["jax"] = (jaxfns[key], lambda out: out.block_until_ready())
    fresh = (lambda: [a.copy() if isinstance(a, np.ndarray) else a for a in args]) if key == "jacobi" else (lambda: args)
    if numba is not None:
        try:                                      # Numba compiles the NumPy source itself, or not at all
            nb = numba.njit(fn)
            timed(nb, fresh())
            runners["numba"] = (nb, None)
        except Exception:
            pass
    for fn_, block in runners.values():          # warm up: compile, caches
        timed(fn_, fresh(), block)
    inner = 200 if key == "tiny" or "[1000]" in name else 20 if "[1e5]" in name else 1
    times = {k: [] for k in runners}
    for _ in range(rounds):                       # interleaved: noise hits all alike
        for k, (fn_, block) in runners.items():
            batch = [fresh() for _ in range(inner)]
            start = time.perf_counter()
            for a in batch:
                out = fn_(*a)
                if block is not None:
                    block(out)
            times[k].append((time.perf_counter() - start) / inner)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"case": name, "median_s": med,
            "ratio_pyjitc_to_numpy": med["pyjitc"] / med["numpy"],
            "ratio_pyjitc_to_jax": med["pyjitc"] / med["jax"] if "jax" in med else None}


FIRST_CALL = """
    import time
    t0 = time.perf_counter()
    import numpy as np, pyjitc
    t1 = time.perf_counter()
    def softmax(x):
        m = np.max(x, axis=-1, keepdims=True)
        e = np.exp(x - m)
        return e / np.sum(e, axis=-1, keepdims=True)
    f = pyjitc.jit(softmax)
    x = np.ones((1000, 5), np.float32)
    t2 = time.perf_counter()
    f(x)
    t3 = time.perf_counter()
    print(t1 - t0, t3 - t2, f.cache_info().disk_hits)
    import json, sys
    print(json.dumps(f.last_compile_phases), file=sys.stderr)
"""


def first_call_latency():
    """Fresh processes: a cold compile, then a warm disk cache. Seconds beyond import."""
    out = {}
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, PYJITC_CACHE_DIR=str(Path(d) / "cache"))
        script = Path(d) / "first_call.py"      # @jit reads source: a file, not python -c
        script.write_text(textwrap.dedent(FIRST_CALL))
        for label in ("cold", "warm disk cache"):
            r = subprocess.run([sys.executable, str(script)], env=env,
                               capture_output=True, text=True, check=True)
            imp, first, disk = r.stdout.split()
            out[label] = {"import_s": float(imp), "first_call_s": float(first), "disk_hit": disk == "1",
                          "phases_s": json.loads(r.stderr.strip().splitlines()[-1])}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="smaller big softmax, fewer rounds")
    ap.add_argument("--only", default="", help="run the cases whose name contains this text")
    ap.add_argument("--no-latency", action="store_true", help="skip the first-call measurements")
    a = ap.parse_args()
    rounds = 5 if a.quick else a.rounds
    jaxfns = jax_versions()
    results = [run_case(*c, jaxfns, rounds) for c in cases(a.quick) if a.only in c[0]]
    latency = {} if a.no_latency else first_call_latency()
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.python_version()}"
    print(f"machine: {machine}; jax: {jax.__version__ if jax else 'not installed'}; "
          f"numba: {numba.__version__ if numba else 'not installed'}")
    print(f"{'case':42s} {'NumPy':>10s} {'Numba':>10s} {'JAX':>10s} {'pyjitc':>10s} {'pyjitc/NumPy':>13s} {'pyjitc/JAX':>11s}")
    for r in results:
        m = r["median_s"]
        fmt = lambda s: f"{s * 1e3:8.3f}ms" if s is not None else "       n/a"
        jr = f"{r['ratio_pyjitc_to_jax']:10.2f}x" if r["ratio_pyjitc_to_jax"] else "       n/a"
        print(f"{r['case']:42s} {fmt(m['numpy'])} {fmt(m.get('numba'))} {fmt(m.get('jax'))} {fmt(m['pyjitc'])} "
              f"{r['ratio_pyjitc_to_numpy']:12.2f}x {jr}")
    for label, v in latency.items():
        phases = ", ".join(f"{k} {t * 1e3:.1f} ms" for k, t in v["phases_s"].items())
        print(f"first call, fresh process, {label}: {v['first_call_s'] * 1e3:.0f} ms beyond import "
              f"(import {v['import_s'] * 1e3:.0f} ms, disk hit: {v['disk_hit']}; {phases})")
    payload = {"machine": machine, "jax": jax.__version__ if jax else None,
               "numba": numba.__version__ if numba else None, "rounds": rounds,
               "results": results, "first_call": latency}
    (HERE / "results.json").write_text(json.dumps(payload, indent=2))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(9, 4))
        names = [r["case"] for r in results]
        for i, k in enumerate(["numpy", "jax", "pyjitc"]):   # (Numba: in the table and results.json)
            vals = [r["median_s"].get(k, 0) / r["median_s"]["numpy"] for r in results]
            ax.barh([j + i * 0.27 for j in range(len(names))], vals, height=0.27, label=k)
        ax.set_yticks([j + 0.27 for j in range(len(names))], names, fontsize=7)
        ax.set_xscale("log")
        ax.set_xlabel("time relative to NumPy (lower is faster)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(HERE / "results.png", dpi=120)
    except ImportError:
        print("(matplotlib not installed: no PNG)")


if __name__ == "__main__":
    main()
