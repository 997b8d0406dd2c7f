"""progress: what a compile is doing, told to the user while it runs. Every compile runs inside
`compiling(name)`; the stages announce their phase (`phase("tracing")`, `unrolling(k, n)`), which is
logged at INFO on the `pyjitc` logger with its time. On a terminal or in a notebook, a compile still
running after DELAY seconds shows a tqdm spinner on stderr naming the phase (PYJITC_PROGRESS=0: never;
nothing when stderr is neither). Also the one warning given before a compile that will take long
(thousands of unrolled iterations, very large constants), at the user's line.
Imports no other pyjitc module: the frontend, the stages and the CLI all report through it."""
from __future__ import annotations

import contextlib
import itertools
import logging
import os
import shutil
import sys
import threading
import time
import warnings
from collections import Counter

log = logging.getLogger("pyjitc")
DELAY = 1.0                  # seconds a compile runs before the display appears
UNROLL_WARNING = 1000        # unrolled iterations of one loop that earn a warning
CONSTANT_WARNING = 64 << 20  # bytes of one embedded constant that earn a warning
COMPILES: Counter = Counter()   # function name -> compiles in this process (what a cluster worker did)
_local = threading.local()


class SlowCompileWarning(UserWarning):
    """The program being compiled will take long to compile (and to run): said once, at the user's
    line, with what to write instead."""


def enabled() -> bool:
    """Whether a display may be shown: PYJITC_PROGRESS is not 0 and stderr is a terminal or a
    notebook's output."""
    if os.environ.get("PYJITC_PROGRESS", "1") == "0":
        return False
    try:
        if sys.stderr is not None and sys.stderr.isatty():
            return True
    except (AttributeError, ValueError):
        return False
    shell = sys.modules.get("IPython")
    ip = getattr(shell, "get_ipython", lambda: None)() if shell else None
    return type(ip).__name__ == "ZMQInteractiveShell"   # a Jupyter kernel: stderr goes to the cell


class Compile:
    """One compile: its current phase and the seconds each phase took."""

    def __init__(self, name: str):
        self.name = name
        self.phase = ""
        self.detail = ""
        self.phases: dict[str, float] = {}
        self.warned: set = set()
        self.start = self._phase_start = time.perf_counter()

    def enter(self, phase: str) -> None:
        now = time.perf_counter()
        self._close(now)
        self.phase, self.detail, self._phase_start = phase, "", now

    def _close(self, now: float) -> None:
        if self.phase:
            spent = now - self._phase_start
            self.phases[self.phase] = self.phases.get(self.phase, 0.0) + spent
            log.info("%s: %s%s took %.3f s", self.name, self.phase, f" ({self.detail})" if self.detail else "", spent)

    def status(self) -> str:
        detail = f": {self.detail}" if self.detail else ""
        return f"pyjitc: compiling {self.name}: {self.phase}{detail} [{time.perf_counter() - self.start:.1f} s]"


def current() -> Compile | None:
    return getattr(_local, "compile", None)


@contextlib.contextmanager
def compiling(name: str):
    """Track one compile on this thread (nested calls join the outer one: a jitted function's
    compile is one compile, whatever the stages call)."""
    outer = current()
    if outer is not None:
        yield outer
        return
    c = _local.compile = Compile(name)
    done = threading.Event()
    shower = threading.Thread(target=_show, args=(c, done), daemon=True) if enabled() else None
    if shower:
        shower.start()
    ok = False
    try:
        yield c
        ok = True
    finally:
        _local.compile = None
        done.set()
        if shower:
            shower.join()
        c._close(time.perf_counter())
        if ok:
            COMPILES[name] += 1
            log.info("%s: compiled in %.3f s (%s)", name, time.perf_counter() - c.start,
                     ", ".join(f"{p} {s:.3f} s" for p, s in c.phases.items()))


def _show(c: Compile, done: threading.Event) -> None:
    """The display thread: nothing for DELAY seconds, then a spinner redrawn every 0.1 s."""
    if done.wait(DELAY):
        return
    from tqdm import tqdm
    # a terminal that reports no size (a bare pseudo-terminal) gets 100x20: tqdm would draw nothing
    size = shutil.get_terminal_size((100, 20))
    bar = tqdm(total=None, bar_format="{desc}", file=sys.stderr, leave=False, ncols=size.columns, nrows=size.lines)
    try:
        for spin in itertools.cycle("|/-\\"):
            bar.set_description_str(f"{spin} {c.status()}", refresh=True)
            if done.wait(0.1):
                break
    finally:
        bar.close()


def phase(name: str) -> None:
    """The compile on this thread has entered `name` (no-op outside a compile)."""
    c = current()
    if c is not None:
        c.enter(name)


def unrolling(count: int, total: int | None) -> None:
    c = current()
    if c is not None and (count % 16 == 0 or total is not None and count + 1 == total):
        c.detail = f"unrolling a loop, {count + 1}" + (f" of {total} iterations" if total else " iterations")


def warn_slow(key, span, message: str) -> None:
    """Warn once per compile (and once per `key` outside one) at the user's `span` (file:line)."""
    c = current()
    seen = c.warned if c is not None else _warned_outside
    if key in seen:
        return
    seen.add(key)
    if span is None:
        warnings.warn(message, SlowCompileWarning, stacklevel=2)
    else:
        warnings.warn_explicit(message, SlowCompileWarning, span.filename, span.line)


_warned_outside: set = set()
