"""api: the @jit wrapper. Decoration parses and whitelist-checks the source; each call looks up
the executable for its argument template, compiling (trace -> lower -> IREE) on a miss."""
from __future__ import annotations

import functools
import importlib
import inspect
import pickle
import sys
import os
import threading
from collections import namedtuple

import numpy as np

from .backend import iree as backend
from .errors import ArgumentError, JitError
from .frontend import codegen
from .frontend.numpy_api import NeedStatic
from .stages import Compiled, Lowered
from .template import ScalarSpec, StaticSpec, Template, spec_of

CacheInfo = namedtuple("CacheInfo", ["hits", "misses", "maxsize", "currsize"])
_SHOW_INTERNALS = os.environ.get("PYJITC_DEBUG", "") not in ("", "0")


def _user_facing(method):
    """Re-raise JitErrors without pyjitc's internal frames (PYJITC_DEBUG=1 keeps them)."""
    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except JitError as e:
            if _SHOW_INTERNALS:
                raise
            e.__traceback__ = None
            raise e from None
    return wrapper


class JitFunction:
    """A NumPy-style function compiled per input template. Call it like the original."""

    def __init__(self, fn, static_argnames=(), target: str = "llvm-cpu", cpu: str = "host",
                 device: str | None = None):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._src = codegen.source_of(fn)           # parse + whitelist check, at decoration time
        self._signature = inspect.signature(fn)
        self._param_names = list(self._signature.parameters)
        unknown = set(static_argnames) - set(self._param_names)
        if unknown:
            raise ArgumentError(f"static_argnames names no parameter of {fn.__name__}: {', '.join(sorted(unknown))}")
        self._static = set(static_argnames)
        self._target = backend.Target(target, cpu)
        self._driver = device
        self._cache: dict[tuple, Compiled] = {}
        self._lock = threading.Lock()
        self._hits = self._misses = 0
        self.compile_seconds = 0.0

    # -- call path
    def _bind(self, args, kwargs) -> dict:
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise ArgumentError(f"{self.__name__}(): {e}") from None
        bound.apply_defaults()
        return bound.arguments

    def _key(self, values: dict) -> tuple:
        key = []
        for name in self._param_names:
            v = values[name]
            if name in self._static:
                key.append(("static", v))
            elif isinstance(v, np.ndarray):   # byte order doesn't matter: inputs are made native
                key.append((v.shape, v.dtype if v.dtype.isnative else v.dtype.newbyteorder("=")))
            elif type(v) in (bool, int, float):
                key.append(type(v))
            else:
                key.append(spec_of(name, v, False))
        return tuple(key)

    @_user_facing
    def __call__(self, *args, **kwargs):
        values = self._bind(args, kwargs)
        try:
            key = self._key(values)
            compiled = self._cache.get(key)
        except TypeError:  # an unhashable static value
            key, compiled = None, None
        if compiled is None:
            compiled = self._compile_for(values)
        else:
            self._hits += 1
        return compiled.call_dynamic(values)

    def _compile_for(self, values) -> Compiled:
        with self._lock:
            key = self._key(values)
            compiled = self._cache.get(key)
            if compiled is not None:
                self._hits += 1
                return compiled
            lowered = self._lower_values(values)
            compiled = lowered.compile()
            self.compile_seconds += compiled.compile_seconds
            self._misses += 1
            self._cache[self._key(values)] = compiled   # static set may have grown while tracing
            return compiled

    # -- staged API
    def _specs(self, values) -> list:
        return [(n, spec_of(n, values[n], n in self._static)) for n in self._param_names]

    def _lower_values(self, values) -> Lowered:
        while True:
            specs = self._specs(values)
            try:
                program = codegen.trace(self._src, dict(specs))
            except NeedStatic as need:
                # A Python scalar argument decides a shape/axis/branch: make it static and retry.
                new = need.params - self._static
                if not new:
                    raise
                self._static |= new
                continue
            return Lowered(program, specs, self._target, self._driver)

    @_user_facing
    def lower(self, *args, **kwargs) -> Lowered:
        """Specialise for example arguments or `Template`s; returns the Lowered stage."""
        return self._lower_values(self._bind(args, kwargs))

    def cache_info(self) -> CacheInfo:
        return CacheInfo(self._hits, self._misses, None, len(self._cache))

    def cache_clear(self) -> None:
        self._cache.clear()
        self._hits = self._misses = 0

    def __repr__(self) -> str:
        return f"<pyjitc.jit {self.__qualname__}>"

    def __reduce__(self):
        """Pickled by reference to the module-level function, with the executables compiled so far
        (their .vmfb bytes), so a worker process calls them without compiling."""
        module, qualname = self._fn.__module__, self._fn.__qualname__
        if "<locals>" in qualname or module == "__main__" and not hasattr(sys.modules.get("__main__"), qualname):
            raise pickle.PicklingError(f"can't pickle the @jit function {qualname}: only functions defined "
                                       "at module level can be found again in another process")
        options = {"static_argnames": tuple(self._static), "target": self._target.backend,
                   "cpu": self._target.cpu, "device": self._driver}
        return _restore_jit, (module, qualname, options, list(self._cache.items()))

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)


def _restore_jit(module, qualname, options, entries):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not isinstance(obj, JitFunction):
        obj = JitFunction(obj, **options)
    for key, compiled in entries:
        obj._cache.setdefault(key, compiled)
    return obj


@_user_facing
def jit(fn=None, *, static_argnames=(), target: str = "llvm-cpu", cpu: str = "host", device: str | None = None):
    """Compile `fn` with IREE, once per input template. `static_argnames`: arguments whose values
    are compile-time constants (others Python scalars are run-time values unless the function
    needs their value, e.g. as a shape). `device`: an IREE driver name (default local-task)."""
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)

    if fn is None:
        return lambda f: jit(f, static_argnames=static_argnames, target=target, cpu=cpu, device=device)
    return JitFunction(fn, tuple(static_argnames), target, cpu, device)


def devices() -> dict[str, list]:
    """IREE drivers available in this process and the devices each can see."""
    return {d: backend.list_devices(d) for d in backend.available_drivers()}
