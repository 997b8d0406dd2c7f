"""The compile caches: in memory (guards on globals read as constants, explained misses,
no_recompile, threads) and on disk (shared between processes, atomic, checksummed, private,
bounded)."""
import os
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import pyjitc
from pyjitc import cache
from tests.reference import assert_same

ROOT = Path(__file__).parent.parent

SCALE = 2.0
TABLE = np.array([1.0, 2.0, 3.0])


def scaled(x):
    return x * SCALE + TABLE


def test_changing_a_global_read_as_a_constant_recompiles_instead_of_reusing():
    global SCALE
    f = pyjitc.jit(scaled)
    x = np.ones(3)
    assert_same(f(x), scaled(x))
    SCALE = 3.0
    try:
        assert_same(f(x), scaled(x))
        TABLE[0] = 10.0                                   # changed in place: compared by content
        assert_same(f(x), scaled(x))
    finally:
        SCALE = 2.0
        TABLE[0] = 1.0
    assert f.cache_info().misses == 3 and f.cache_info().currsize == 1


def test_no_recompile_raises_and_says_why():
    f = pyjitc.jit(scaled)
    f(np.ones(3))
    with pyjitc.no_recompile():
        f(np.ones(3))                                     # a hit is fine
        with pytest.raises(pyjitc.RecompileError, match=r"argument 'x': f64\[3\] -> f32\[3\]"):
            f(np.ones(3, np.float32))


def run_script(code, cache_dir, extra_env=None, check=True):
    env = dict(os.environ, PYJITC_CACHE_DIR=str(cache_dir), **(extra_env or {}))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, cwd=ROOT, check=check)


PROGRAM = """
    import numpy as np, pyjitc
    from tests.test_cache import scaled
    f = pyjitc.jit(scaled)
    y = f(np.arange(3.0))
    info = f.cache_info()
    print(y.tolist(), info.misses, info.disk_hits)
"""


def test_a_second_process_compiles_nothing(tmp_path):
    first = run_script(PROGRAM, tmp_path).stdout.split()
    second = run_script(PROGRAM, tmp_path).stdout.split()
    want = scaled(np.arange(3.0)).tolist()
    assert first[:-2] == second[:-2] == str(want).split()
    assert first[-1] == "0" and second[-1] == "1", "the second process should load from disk"


def test_corrupted_truncated_or_foreign_entries_are_recompiled(tmp_path):
    run_script(PROGRAM, tmp_path)
    (entry,) = tmp_path.glob("*.vmfb")
    for damage in (lambda b: b[: len(b) // 2], lambda b: b[:-10] + b"0123456789", lambda b: b"not a vmfb at all"):
        entry.write_bytes(damage(entry.read_bytes()) if entry.exists() else b"x")
        out = run_script(PROGRAM, tmp_path).stdout.split()
        assert out[-1] == "0", "a damaged entry must not be loaded"
        assert out[:-2] == str(scaled(np.arange(3.0)).tolist()).split()


def test_two_processes_compiling_the_same_function_at_once_both_succeed(tmp_path):
    env = dict(os.environ, PYJITC_CACHE_DIR=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(PROGRAM)], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate()[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert all(o[:-2] == str(scaled(np.arange(3.0)).tolist()).split() for o in outs)
    assert len(list(tmp_path.glob("*.vmfb"))) == 1 and not list(tmp_path.glob(".tmp-*"))


def test_editing_a_helper_module_recompiles_in_this_process_and_the_next(tmp_path):
    pkg = tmp_path / "src"
    pkg.mkdir()
    helper = pkg / "helper_mod.py"
    main = pkg / "main_mod.py"
    main.write_text("import numpy as np\nfrom helper_mod import g\n\ndef f(x):\n    return g(x) + 1\n")
    code = f"""
        import sys, importlib, numpy as np, pyjitc
        sys.path.insert(0, {str(pkg)!r})
        import helper_mod, main_mod
        f = pyjitc.jit(main_mod.f)
        a = f(np.ones(2))
        open({str(helper)!r}, "w").write("def g(x):\\n    return x * 10\\n")
        importlib.reload(helper_mod)
        importlib.reload(main_mod)       # rebinds g in the module f reads its globals from
        b = f(np.ones(2))
        print(a.tolist(), b.tolist(), f.cache_info().misses)
    """
    helper.write_text("def g(x):\n    return x * 2\n")
    out = run_script(code, tmp_path / "cache").stdout
    assert out.split() == ["[3.0,", "3.0]", "[11.0,", "11.0]", "2"]
    # a new process whose helper now multiplies by 10 must not reuse the x * 2 executable
    helper.write_text("def g(x):\n    return x * 2\n")
    out = run_script(code, tmp_path / "cache").stdout
    assert out.split()[:4] == ["[3.0,", "3.0]", "[11.0,", "11.0]"]


def test_explain_cache_misses_names_the_argument_that_changed(tmp_path):
    code = """
        import numpy as np, pyjitc
        from tests.test_cache import scaled
        f = pyjitc.jit(scaled)
        f(np.ones(3)); f(np.ones(3, np.float32))
    """
    err = run_script(code, tmp_path, {"PYJITC_EXPLAIN_CACHE_MISSES": "1"}).stderr
    assert "compiling scaled: first call" in err
    assert "compiling scaled: argument 'x': f64[3] -> f32[3]" in err


def test_cache_directory_is_private_and_an_unsafe_one_is_not_used(tmp_path):
    private = tmp_path / "private"
    run_script(PROGRAM, private)
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    r = run_script(PROGRAM, shared)
    assert "writable by other users" in r.stderr and not list(shared.glob("*.vmfb"))
    assert r.stdout.split()[:-2] == str(scaled(np.arange(3.0)).tolist()).split()


def test_disk_cache_is_bounded_least_recently_used_first(tmp_path):
    for i in range(3):
        (tmp_path / f"{i}.vmfb").write_bytes(b"x" * 1000)
        os.utime(tmp_path / f"{i}.vmfb", (i, i))
    cache.evict(tmp_path, limit=2500)
    assert sorted(p.name for p in tmp_path.glob("*.vmfb")) == ["1.vmfb", "2.vmfb"]


def test_cache_off_compiles_without_writing(tmp_path):
    out = run_script(PROGRAM, "off").stdout.split()
    assert out[-1] == "0"


def shapes_fn(x):
    return (x * 2).sum(axis=0)


def in_threads(worker, n):
    """Run worker(k) for k in range(n), each in its own thread, at once; re-raise the first failure."""
    errors = []

    def run(k):
        try:
            worker(k)
        except Exception as e:   # reported below
            errors.append(e)
    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_many_threads_calling_with_many_shapes_compile_each_template_once():
    f = pyjitc.jit(shapes_fn, dynamic=False)   # (static: one executable per template)
    shapes = [(2, 3), (4, 3), (5, 1)]

    def worker(k):
        for i in range(6):
            x = np.full(shapes[(k + i) % 3], float(k))
            assert_same(f(x), shapes_fn(x))
    in_threads(worker, 8)
    info = f.cache_info()
    assert info.misses == 3 and info.currsize == 3 and info.hits == 8 * 6 - 3


def chain_fn(x):
    return np.sqrt(np.abs(x)) * 2.0 + np.exp(-x * x) / (1.0 + x * x)


@pytest.mark.parametrize("device", ["local-sync", "local-task"])
def test_concurrent_calls_of_one_executable_give_each_thread_its_own_answer(device):
    # IREE's VM context is not thread-safe: each calling thread gets its own
    f = pyjitc.jit(chain_fn, device=device)
    inputs = [np.random.default_rng(k).standard_normal(50_000) for k in range(4)]
    wants = [chain_fn(x) for x in inputs]
    f(inputs[0])

    def worker(k):
        for _ in range(15):
            assert_same(f(inputs[k]), wants[k])
    in_threads(worker, 4)
    assert f.cache_info().misses == 1


def test_first_call_time_is_broken_down_by_phase():
    f = pyjitc.jit(shapes_fn)
    f(np.ones((7, 2)))
    phases = f.last_compile_phases
    assert {"trace", "stablehlo", "load"} <= set(phases) and ({"iree compile", "disk cache"} & set(phases))
    assert all(t >= 0 for t in phases.values())


@pyjitc.jit(static_argnames=("n",))
def scaled_by_static(x, n):
    return x * n


@pyjitc.jit
def zeros_and_scaled(x, n, cfg):
    return np.zeros(n), x * n, x * cfg["scale"]


def test_equal_static_values_of_other_types_compile_apart_with_numpys_dtypes():
    # 3 == 3.0 == np.int64(3) == True: keyed by value alone, the cache returned the first
    # executable (int16 for x * 3.0 after x * 3: a silent wrong dtype and value)
    x = np.arange(3, dtype=np.int16)
    for n in (3, 3.0, np.int64(3), True, np.uint8(3)):
        assert_same(scaled_by_static(x, n), x * n)
    x8 = np.arange(4, dtype=np.int8)
    for n, scale in ((3, 2), (np.int64(3), 2.0), (np.uint8(3), np.float32(2))):
        assert_same(zeros_and_scaled(x8, n, {"scale": scale}), zeros_and_scaled.__wrapped__(x8, n, {"scale": scale}))


def quantiles_at(x, levels):
    return np.quantile(x, levels)


def test_an_unhashable_static_argument_is_an_argument_error_naming_it_not_a_type_error():
    # an ndarray named in static_argnames raised "TypeError: unhashable type" from the cache lookup
    f = pyjitc.jit(quantiles_at, static_argnames=("levels",))
    with pytest.raises(pyjitc.ArgumentError, match=r"argument 'levels' is static but ndarray values aren't "
                                                   r"hashable; pass a tuple"):
        f(np.arange(5.0), np.array([0.1, 0.5]))
    np.testing.assert_array_equal(f(np.arange(5.0), (0.1, 0.5)), np.quantile(np.arange(5.0), (0.1, 0.5)))
