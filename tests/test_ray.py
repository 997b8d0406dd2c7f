"""Ray tasks (`ray.init(num_cpus=2)`, `@ray.remote`) in other processes call jitted functions, from a
module and from `__main__` (a function pickled by value), without compiling what the driver
compiled; results are NumPy's. One Ray instance for the module."""
import os

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="the `ray` extra is not installed: pip install -e '.[ray]'")

import pyjitc  # noqa: E402
from tests import cluster_kernels as kernels   # noqa: E402


@pytest.fixture(scope="module")
def ray_session():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYJITC_CACHE_DIR": "off"}})
    yield
    ray.shutdown()


@ray.remote
def call(fn, *args):
    return fn(*args), os.getpid(), kernels.compiles_here()


@pyjitc.jit
def ramp(x):
    return np.cumsum(x) * 0.5


ramp.__wrapped__.__module__ = "__main__"   # as if defined in a script or a notebook: travels by value


def test_tasks_call_a_module_function_without_compiling(ray_session):
    xs = [np.full(16, k, dtype=np.float64) for k in range(6)]
    kernels.scale_add(xs[0], xs[0].copy())    # two arrays (the same one twice would compile for that sharing)
    outs = ray.get([call.remote(kernels.scale_add, x, x.copy()) for x in xs])
    for k, (result, _, compiles) in enumerate(outs):
        assert result.dtype == np.float64 and np.array_equal(result, np.full(16, 3.0 * k))
        assert "scale_add" not in compiles


def test_tasks_call_a_main_function_without_compiling(ray_session):
    x = np.linspace(0.0, 1.0, 10)
    ramp(x)
    outs = ray.get([call.remote(ramp, x + k) for k in range(4)])
    for k, (result, _, compiles) in enumerate(outs):
        np.testing.assert_allclose(result, np.cumsum(x + k) * 0.5, rtol=1e-14)
        assert "ramp" not in compiles


def test_a_task_compiles_a_template_the_driver_did_not(ray_session):
    """The counter read above counts a worker's compile."""
    x = np.arange(7, dtype=np.int32)
    result, _, compiles = ray.get(call.remote(kernels.scale_add, x, x.copy()))
    assert result.dtype == np.float64 and np.array_equal(result, x * 2.0 + x)
    assert compiles.get("scale_add", 0) >= 1
