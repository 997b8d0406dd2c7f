"""What a compile tells the user while it runs (pyjitc/progress.py): its phases at INFO on the
`pyjitc` logger, a spinner naming the phase on a terminal (not through a pipe, not with
PYJITC_PROGRESS=0), and one SlowCompileWarning at the user's line before a long unroll or a large
constant."""
import logging
import os
import pty
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import pyjitc
from pyjitc import progress

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "tests/fixtures/progress_demo.py"


def run_demo(on_terminal: bool, **env) -> str:
    """The demo's stdout and stderr together, run on a pseudo-terminal or through a pipe."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYJITC_CACHE_DIR": "off", **env}
    if not on_terminal:
        run = subprocess.run([sys.executable, str(DEMO)], capture_output=True, text=True, env=env, timeout=120)
        assert run.returncode == 0, run.stderr
        return run.stdout + run.stderr
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, str(DEMO)], stdin=follower, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:     # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=120) == 0
    return b"".join(chunks).decode(errors="replace")


def test_a_terminal_shows_the_phase_while_compiling():
    shown = run_demo(on_terminal=True)
    assert "[1.0, 2.0, 9.0]" in shown
    assert "pyjitc: compiling cube_plus_one: " in shown
    assert "IREE compile" in shown


def test_nothing_is_shown_through_a_pipe_or_with_progress_off():
    for on_terminal, env in [(False, {}), (True, {"PYJITC_PROGRESS": "0"})]:
        shown = run_demo(on_terminal, **env)
        assert "[1.0, 2.0, 9.0]" in shown
        assert "pyjitc: compiling" not in shown, (on_terminal, env)


@pyjitc.jit
def halves(x):
    return x * 0.5 - 0.25


def test_phases_and_times_are_logged_at_info(caplog):
    with caplog.at_level(logging.INFO, logger="pyjitc"):
        halves(np.arange(6, dtype=np.float32))
    messages = [r.getMessage() for r in caplog.records if r.name == "pyjitc"]
    for phase in ("tracing", "building StableHLO", "looking up the disk cache", "loading"):
        assert any(m.startswith(f"halves: {phase} took ") for m in messages), (phase, messages)
    assert any(m.startswith("halves: compiled in ") for m in messages)


@pyjitc.jit
def reversed_prefix_heads(x):
    out = np.zeros_like(x)
    for i in range(1, x.shape[0]):          # np.sort needs the slice's length: unrolled
        out[i] = np.sort(x[:i])[0] + x[i]
    return out


UNROLLED_LINE = reversed_prefix_heads.__wrapped__.__code__.co_firstlineno + 3


def test_a_long_unroll_warns_once_at_the_loop_with_what_to_do(monkeypatch):
    monkeypatch.setattr(progress, "UNROLL_WARNING", 12)    # the real threshold is 1000 iterations
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lowered = reversed_prefix_heads.lower(pyjitc.Template((13,), np.float64))
    slow = [w for w in caught if issubclass(w.category, pyjitc.SlowCompileWarning)]
    assert len(slow) == 1
    (w,) = slow
    assert (w.filename, w.lineno) == (__file__, UNROLLED_LINE)
    assert "unrolled into 12 iterations" in str(w.message)
    assert "np.sort needs it at compile time" in str(w.message) and "one run-time loop" in str(w.message)
    x = np.arange(13.0)[::-1].copy()
    expected = np.array([0.0] + [np.sort(x[:i])[0] + x[i] for i in range(1, 13)])
    np.testing.assert_array_equal(lowered.compile()(x), expected)


def test_a_short_unroll_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", pyjitc.SlowCompileWarning)
        reversed_prefix_heads.lower(pyjitc.Template((12,), np.float64))


TABLE = np.arange(40_000, dtype=np.float64) % 7.0


@pyjitc.jit
def lookup(i):
    return TABLE[i] * 2.0


def test_a_large_constant_warns_at_the_line_that_reads_it(monkeypatch):
    monkeypatch.setattr(progress, "CONSTANT_WARNING", 256 << 10)   # the real threshold is 64 MiB
    with pytest.warns(pyjitc.SlowCompileWarning, match=r"array of 0 MiB \(f64\[40000\]\) is embedded") as caught:
        lookup.lower(3)
    assert caught[0].lineno == lookup.__wrapped__.__code__.co_firstlineno + 2
    assert "pass it as an argument" in str(caught[0].message)
