"""Per-task cost of a jitted function on Dask and Ray workers against the same task in plain NumPy,
and the compiles each worker made (the client compiles once; executables travel with the pickle).

    python bench/bench_clusters.py [--tasks 200] [--size 1000] [--rounds 3] [--only dask|ray]

Needs the `dask` and `ray` extras. Each engine gets 2 worker processes (1 thread each) and a disk
cache turned off in the workers, so any compile there is a real one."""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests import cluster_kernels as kernels   # noqa: E402


def best_per_task(run, tasks: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best / tasks


def in_process(blocks, rounds):
    jit_s = best_per_task(lambda: [kernels.smooth(b) for b in blocks], len(blocks), rounds)
    np_s = best_per_task(lambda: [kernels.smooth_numpy(b) for b in blocks], len(blocks), rounds)
    return np_s, jit_s


def bench_dask(blocks, rounds):
    from dask.distributed import Client, LocalCluster
    start = time.perf_counter()
    cluster = LocalCluster(processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None,
                           env={"PYJITC_CACHE_DIR": "off"})
    client = Client(cluster)
    up = time.perf_counter() - start
    first = time.perf_counter()
    client.gather(client.map(kernels.smooth, blocks[:2], pure=False))   # unpickle + load on each worker
    first = time.perf_counter() - first
    np_s = best_per_task(lambda: client.gather(client.map(kernels.smooth_numpy, blocks, pure=False)), len(blocks), rounds)
    jit_s = best_per_task(lambda: client.gather(client.map(kernels.smooth, blocks, pure=False)), len(blocks), rounds)
    compiles = client.run(kernels.compiles_here)
    client.close()
    cluster.close()
    return up, first, np_s, jit_s, list(compiles.values())


def bench_ray(blocks, rounds):
    import ray
    start = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYJITC_CACHE_DIR": "off"}})
    up = time.perf_counter() - start

    @ray.remote
    def task(fn, block):
        return fn(block), os.getpid(), kernels.compiles_here()

    ray.get([task.remote(kernels.smooth_numpy, b) for b in blocks[:4]])          # workers started
    first = time.perf_counter()
    ray.get([task.remote(kernels.smooth, b) for b in blocks[:2]])
    first = time.perf_counter() - first
    fn_ref = ray.put(kernels.smooth)    # the function (and its executables) stored once, not per task
    np_ref = ray.put(kernels.smooth_numpy)
    np_s = best_per_task(lambda: ray.get([task.remote(np_ref, b) for b in blocks]), len(blocks), rounds)
    per = {}
    jit_s = best_per_task(lambda: per.update({pid: c for _, pid, c in ray.get([task.remote(fn_ref, b) for b in blocks])}),
                          len(blocks), rounds)
    ray.shutdown()
    return up, first, np_s, jit_s, list(per.values())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=int, default=200)
    p.add_argument("--size", type=int, default=1000, help="float64 elements per block")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--only", choices=["dask", "ray"])
    a = p.parse_args(argv)
    os.environ.setdefault("PYJITC_CACHE_DIR", "off")
    rng = np.random.default_rng(0)
    blocks = [rng.random(a.size) for _ in range(a.tasks)]
    start = time.perf_counter()
    kernels.smooth(blocks[0])
    print(f"client compile: {time.perf_counter() - start:.2f} s; {a.tasks} tasks of f64[{a.size}], best of {a.rounds}")
    np_s, jit_s = in_process(blocks, a.rounds)
    print(f"in process:      NumPy {np_s * 1e6:8.1f} us/call   pyjitc {jit_s * 1e6:8.1f} us/call")
    engines = {"dask": bench_dask, "ray": bench_ray}
    for name, bench in engines.items():
        if a.only and name != a.only:
            continue
        try:
            up, first, np_t, jit_t, compiles = bench(blocks, a.rounds)
        except ImportError as e:
            print(f"{name}: not installed ({e})")
            continue
        print(f"{name:5s} start {up:5.2f} s; first two pyjitc tasks {first * 1e3:6.1f} ms; per task: "
              f"NumPy {np_t * 1e6:8.1f} us  pyjitc {jit_t * 1e6:8.1f} us  (difference {(jit_t - np_t) * 1e6:+.1f} us); "
              f"compiles per worker: {compiles}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
