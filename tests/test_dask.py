"""Dask workers in other processes call jitted functions without compiling: the executables travel
with the pickled function (from a module, and from a script's `__main__`), and the results are
NumPy's. One LocalCluster (2 worker processes, disk cache off) for the module."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip("dask.distributed", reason="the `dask` extra is not installed: pip install -e '.[dask]'")
da = pytest.importorskip("dask.array", reason="the `dask` extra is not installed: pip install -e '.[dask]'")

from tests import cluster_kernels as kernels   # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None,
                                       env={"PYJITC_CACHE_DIR": "off"})
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def worker_compiles(client) -> dict:
    return client.run(kernels.compiles_here)    # worker address -> {function: compiles}


def test_map_blocks_from_a_module_compiles_nothing_in_the_workers(client):
    data = np.random.default_rng(0).random((64, 16))
    x = da.from_array(data, chunks=(16, 16))
    kernels.smooth(data[:16])                # the client compiles the block template once
    before = worker_compiles(client)
    result = x.map_blocks(kernels.smooth, dtype=np.float64).compute()
    expected = np.concatenate([kernels.smooth_numpy(data[i:i + 16]) for i in range(0, 64, 16)])
    np.testing.assert_allclose(result, expected, rtol=1e-13)
    assert result.dtype == expected.dtype and result.shape == expected.shape
    assert worker_compiles(client) == before


def test_client_map_from_a_module_compiles_nothing_in_the_workers(client):
    xs = [np.full(8, k, dtype=np.float32) for k in range(6)]
    kernels.scale_add(xs[0], xs[0].copy())    # two arrays (the same one twice would compile for that sharing)
    before = worker_compiles(client)
    futures = client.map(kernels.scale_add, xs, [x.copy() for x in xs])
    for k, result in enumerate(client.gather(futures)):
        assert result.dtype == np.float32 and np.array_equal(result, np.full(8, 3.0 * k, np.float32))
    assert worker_compiles(client) == before


def test_a_worker_compiles_a_template_the_client_did_not(client):
    """The counter the other tests read does count a worker's compiles: a template the client never
    compiled is compiled on the worker that runs it."""
    x = np.arange(5, dtype=np.int64)
    worker = next(iter(client.scheduler_info()["workers"]))
    before = worker_compiles(client)[worker].get("scale_add", 0)
    result = client.submit(kernels.scale_add, x, x, workers=[worker], pure=False).result()
    assert result.dtype == np.float64 and np.array_equal(result, x * 2.0 + x)
    assert worker_compiles(client)[worker].get("scale_add", 0) == before + 1


def test_a_scripts_main_function_runs_on_the_workers_without_compiling(client):
    before = worker_compiles(client)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, str(ROOT / "tests/fixtures/cluster_main.py"), client.scheduler.address],
                         capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "results equal NumPy's" in run.stdout
    assert worker_compiles(client) == before
