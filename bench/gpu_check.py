"""The classic kernels (bench_kernels.py) and a few suite cases on a GPU, in two steps, because a
GPU machine may have IREE's runtime but not its compiler:

  python bench/gpu_check.py build DIR [--target cuda --cpu sm_89] [--quick]
      (any machine, IREE's compiler needed) cross-compiles each case ahead of time with
      pyjitc.jit(fn, target=..., cpu=...).lower(*args).compile() into DIR/NAME.vmfb; a case
      pyjitc refuses or IREE fails on is listed in DIR/build.txt with its first error line.
  python bench/gpu_check.py run DIR [--device cuda] [--quick] [--repeat 5] [--case-timeout S]
      (the GPU machine; iree-base-runtime and NumPy are enough) loads each file with
      pyjitc.load(path, device=...), calls it on the same inputs as NumPy (fixed seed, fresh copies),
      checks results and every argument array afterwards as bench_kernels does, and times both:
      best of --repeat after one warm-up call. pyjitc's time includes the host-to-device copies of
      the inputs and the copies of the results back (pyjitc has no device-resident arrays), so it is
      the time a caller sees. With JAX installed, the suite cases are also timed with jax.jit on
      NumPy inputs (copies included, as for pyjitc). --case-timeout S runs each case in its own
      process, stopped after S seconds, so that one case that hangs costs S and not the rest."""
from __future__ import annotations

import argparse
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import pyjitc  # noqa: E402
import bench_kernels as bk  # noqa: E402


# ---- suite cases (memory-bound, contractions, per-call overhead) ------------------------------

def axpy(a, x, y):
    return a * x + y


def tiny(x):
    return x * 2 + 1


def matmul(a, b):
    return a @ b


def matvec(a, x):
    return a @ x


def row_sums(x):
    return x.sum(axis=1)


def mlp(x, w1, w2):
    h = np.maximum(x @ w1, 0.0)
    return h @ w2


def recurrence(x, a):
    """A scalar loop that writes an array every step (a native element loop on the CPU)."""
    y = np.empty_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = y[i - 1] * a + x[i]
    return y


def suite_cases():
    """GPU-sized inputs, whatever --quick says (it sizes the classic kernels)."""
    rng = np.random.default_rng(1)
    n, m = 10_000_000, 4096
    f32 = np.float32
    return [
        ("axpy_f32", axpy, (f32(1.5), rng.random(n, dtype=f32), rng.random(n, dtype=f32))),
        ("tiny_f32_8", tiny, (rng.random(8, dtype=f32),)),
        ("matmul_f32", matmul, (rng.random((m, m), dtype=f32), rng.random((m, m), dtype=f32))),
        ("matmul_f64_1024", matmul, (rng.random((1024, 1024)), rng.random((1024, 1024)))),
        ("matvec_f32", matvec, (rng.random((m, m + 904), dtype=f32), rng.random(m + 904, dtype=f32))),
        ("row_sums_f32", row_sums, (rng.random((m, 2048), dtype=f32),)),
        ("mlp_f32", mlp, (rng.random((256, 512), dtype=f32), rng.random((512, 512), dtype=f32),
                          rng.random((512, 64), dtype=f32))),
        # 1000 steps: on the H200 a host loop took over 2 ms a step (1e5 steps did not finish
        # one call in 220 s), so this measures the per-step cost rather than the loop
        ("recurrence_f64", recurrence, (rng.random(1000), 0.5)),
    ]


def all_cases(quick):
    return [(f"suite_{name}", fn, args) for name, fn, args in suite_cases()] + bk.cases(quick)


# ---- build (compiler machine) -------------------------------------------------------------------

def build(out: Path, target: str, cpu: str, quick: bool, only):
    out.mkdir(parents=True, exist_ok=True)
    pyjitc.set_cache_dir(None)
    report = []
    for name, fn, args in all_cases(quick):
        if only and name not in only:
            continue
        t0 = time.perf_counter()
        try:
            compiled = pyjitc.jit(fn, target=target, cpu=cpu).lower(*bk.fresh(args)).compile()
            (out / f"{name}.vmfb").write_bytes(compiled.vmfb)
            status = f"ok {len(compiled.vmfb)} bytes"
        except Exception as exc:  # report every case, whatever stops it
            status = f"failed: {type(exc).__name__}: {bk.first_line(exc)}"
        line = f"{name:28s} {time.perf_counter() - t0:6.1f}s  {status}"
        print(line, flush=True)
        report.append(line)
    (out / "build.txt").write_text("\n".join(report) + "\n")


# ---- run (GPU machine) ----------------------------------------------------------------------------

def jax_time(fn, args, repeat):
    """jax.jit(fn) on NumPy inputs (host-to-device copies included), or None without JAX."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    src = {"axpy": lambda a, x, y: a * x + y, "tiny": lambda x: x * 2 + 1, "matmul": lambda a, b: a @ b,
           "matvec": lambda a, x: a @ x, "row_sums": lambda x: x.sum(axis=1),
           "mlp": lambda x, w1, w2: jnp.maximum(x @ w1, 0.0) @ w2}.get(fn.__name__)
    if src is None:
        return None
    jf = jax.jit(src)
    call = lambda: np.asarray(jf(*args))  # noqa: E731
    call()
    return min(_timed(call) for _ in range(repeat))


def _timed(call):
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


HEADER = f"{'case':28s} {'NumPy':>10s} {'pyjitc':>10s} {'ratio':>8s} {'jax.jit':>10s}  status"


def run_each(src: Path, device: str, quick: bool, repeat: int, only, limit: float):
    """`run`, each case in its own process stopped after `limit` seconds, so that one case that
    hangs (a host loop dispatching every step on a GPU) costs `limit` and not the rest."""
    print(f"devices: {pyjitc.devices()}")
    print(HEADER, flush=True)
    ratios = []
    for name, _, _ in all_cases(quick):
        if only and name not in only:
            continue
        command = [sys.executable, __file__, "run", str(src), "--device", device, "--repeat", str(repeat),
                   "--only", name, "--quiet"] + (["--quick"] if quick else [])
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=limit)
            lines = done.stdout.strip().splitlines() or [f"{name:28s} exit {done.returncode}: "
                                                           f"{done.stderr.strip().splitlines()[-1:]}"]
        except subprocess.TimeoutExpired:
            lines = [f"{name:28s} {'':>10s} {'':>10s} {'':>8s} {'':>10s}  timed out after {limit:.0f} s"]
        for line in lines:
            print(line, flush=True)
            fields = line.split()
            if fields[-1:] == ["ok"] and fields[3].endswith("x"):
                ratios.append(float(fields[3][:-1]))
    summary(ratios, repeat)


def summary(ratios, repeat):
    if ratios:
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(f"geometric mean of pyjitc/NumPy over {len(ratios)} ok cases: {geo:.2f}x")
    print(f"ratio = pyjitc time / NumPy time on this machine's CPU (below 1: pyjitc faster); best of {repeat}; "
          "times include copying arguments (fresh copies for each call, both sides)")


def run(src: Path, device: str, quick: bool, repeat: int, only, quiet: bool = False):
    if not quiet:
        print(f"devices: {pyjitc.devices()}")
        print(HEADER)
    ratios = []
    for name, fn, args in all_cases(quick):
        if only and name not in only:
            continue
        path = src / f"{name}.vmfb"
        if not path.exists():
            print(f"{name:28s} {'':>10s} {'':>10s} {'':>8s} {'':>10s}  not built")
            continue
        try:
            lib = pyjitc.load(path, device=device)
            call = lib[fn.__name__]
            expected_args = bk.fresh(args)
            expected = fn(*expected_args)
            got_args = bk.fresh(args)
            got = call(*got_args)
            wrong = bk.differs(expected, got, "result") or bk.differs(list(expected_args), list(got_args), "args")
            reps = repeat if _timed(lambda: call(*bk.fresh(args))) < 1.0 else 1   # slow cases: timed once
            t_np = min(_timed(lambda: fn(*bk.fresh(args))) for _ in range(reps))
            t_pj = min(_timed(lambda: call(*bk.fresh(args))) for _ in range(reps))
            t_jax = jax_time(fn, args, repeat)
            status = f"wrong: {wrong}" if wrong else "ok"
        except Exception as exc:  # report every case, whatever stops it
            print(f"{name:28s} {'':>10s} {'':>10s} {'':>8s} {'':>10s}  crash: {type(exc).__name__}: "
                  f"{bk.first_line(exc)}", flush=True)
            continue
        if status == "ok":
            ratios.append(t_pj / t_np)
        jx = f"{t_jax * 1e3:8.3f}ms" if t_jax is not None else f"{'-':>10s}"
        print(f"{name:28s} {t_np * 1e3:8.3f}ms {t_pj * 1e3:8.3f}ms {t_pj / t_np:7.2f}x {jx}  {status}", flush=True)
    if not quiet:
        summary(ratios, repeat)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["build", "run"])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--target", default="cuda")
    parser.add_argument("--cpu", default="sm_89")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", nargs="+", metavar="NAME")
    parser.add_argument("--case-timeout", type=float, metavar="S",
                        help="run each case in its own process, stopped after S seconds")
    parser.add_argument("--quiet", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.step == "build":
        build(opts.dir, opts.target, opts.cpu, opts.quick, opts.only)
    elif opts.case_timeout:
        run_each(opts.dir, opts.device, opts.quick, opts.repeat, opts.only, opts.case_timeout)
    else:
        run(opts.dir, opts.device, opts.quick, opts.repeat, opts.only, opts.quiet)


if __name__ == "__main__":
    main()
