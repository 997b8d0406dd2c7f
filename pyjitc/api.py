"""api: the @jit wrapper. Decoration parses and whitelist-checks the source; each call looks up
the executable for its argument template, compiling (trace -> lower -> IREE) on a miss."""
from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import logging
import inspect
import linecache
import pickle
import sys
import os
import threading
import time
import warnings
from collections import OrderedDict, namedtuple

import numpy as np

from . import dynamic
from .aliasing import find_aliases
from .dynamic import SymbolicEntry
from .ir import dims
from .ir.dims import NeedsStaticShape
from .backend.target import Target
from . import progress
from .errors import AS_PYTHON_ERROR, ArgumentError, CompileError, JitError, ShapeError
from .frontend import codegen, tracing
from .frontend.source import real_signature
from .frontend.raising import UserRaised
from .frontend.values import NeedStatic
from .stages import Compiled, Lowered, NeedsLibm, NeedsRoom, native_loops
from .template import PY_SCALAR_DTYPES, Template, path_name, spec_of, static_identity

CacheInfo = namedtuple("CacheInfo", ["hits", "misses", "maxsize", "currsize", "compile_seconds", "disk_hits",
                                     "dynamic"], defaults=((),))
log = logging.getLogger("pyjitc")
_EXPLAIN = os.environ.get("PYJITC_EXPLAIN_CACHE_MISSES", "") not in ("", "0")
MAXSIZE = 256      # compiled specialisations kept per function (least recently used dropped)
_no_recompile = threading.local()


class RecompileError(JitError):
    """A call needed a new compile inside pyjitc.no_recompile()."""


@contextlib.contextmanager
def no_recompile():
    """Inside this block, a call of any @jit function that is not already compiled for its
    arguments raises RecompileError (saying why it would compile) instead of compiling."""
    depth = getattr(_no_recompile, "depth", 0)
    _no_recompile.depth = depth + 1
    try:
        yield
    finally:
        _no_recompile.depth = depth


class Guard:
    """A global (or module attribute) the compiled code read as a constant: a cache hit is valid
    only while it still holds the same value. Arrays and containers are compared by content."""
    __slots__ = ("kind", "holder", "name", "value", "digest")

    def __init__(self, kind, holder, name, value):
        self.kind, self.holder, self.name, self.value = kind, holder, name, value
        self.digest = _digest(value)

    def current(self):
        policy = _policy()
        if self.kind == "name":
            return policy.lookup_global(self.holder, self.name)
        return getattr(self.holder, self.name, policy.UNRESOLVED)

    def holds(self) -> bool:
        now = self.current()
        if now is not self.value:
            same_number = type(now) is type(self.value) and isinstance(now, (bool, int, float, str)) and now == self.value
            if not same_number:
                return False
        return self.digest is None or _digest(now) == self.digest

    def describe(self) -> str:
        where = self.holder.__name__ if self.kind == "attr" else "global"
        return f"{where} {self.name!r}"


@functools.cache
def _policy():
    from .frontend import policy   # once: a guard is checked on every call
    return policy


def _digest(value):
    if isinstance(value, np.ndarray):
        return hashlib.blake2b(np.ascontiguousarray(value).view(np.uint8).data, digest_size=16).digest() + \
            str((value.shape, value.dtype.str)).encode()
    if isinstance(value, (list, dict, set, bytearray)):
        return hashlib.blake2b(repr(value).encode(), digest_size=16).digest()
    return None
_SHOW_INTERNALS = os.environ.get("PYJITC_DEBUG", "") not in ("", "0")


def _user_facing(method):
    """Re-raise JitErrors without pyjitc's internal frames (PYJITC_DEBUG=1 keeps them)."""
    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except (JitError, UserRaised) as e:
            if _SHOW_INTERNALS and isinstance(e, JitError):
                raise
            raise _for_user(e) from None
    return wrapper


_RUNTIME_SCALARS = frozenset(PY_SCALAR_DTYPES)   # Python bool, int, float, complex: keyed by type


def _static_mask(names, static) -> tuple | None:
    """Which parameters are static, by position; None when none is."""
    return tuple(n in static for n in names) if static else None


def _for_user(e: JitError | UserRaised) -> BaseException:
    """The exception the caller sees, without pyjitc's frames: a JitError itself, or for
    UserRaised the function's own raise/assert (reached on every run of this template)."""
    if type(e) is ShapeError:   # NumPy's own error, named first: also that Python exception type
        # ("IndexError: ..." or "a[0]: OverflowError: ...": the exception named first or after what failed)
        as_python = next((AS_PYTHON_ERROR[p.strip()] for p in e.message.split(":", 2)[:2]
                          if p.strip() in AS_PYTHON_ERROR), None)
        raised = getattr(e, "python", None)
        if as_python is None and raised is not None:
            as_python = next((AS_PYTHON_ERROR[k.__name__] for k in type(raised).__mro__ if k.__name__ in AS_PYTHON_ERROR),
                             None)
        if as_python is not None:
            e.__class__ = as_python
    return (e.exc if isinstance(e, UserRaised) else e).with_traceback(None)


class JitFunction:
    """A NumPy-style function compiled per input template. Call it like the original.
    `__wrapped__` is the Python function; the class attribute `__pyjitc_jit__` marks it for the
    frontend (a @jit function called inside another is inlined) without importing this module."""

    __pyjitc_jit__ = True

    def __init__(self, fn, static_argnames=(), target: str = "llvm-cpu", cpu: str = "host",
                 device: str | None = None, dynamic: bool | None = None):
        fn = codegen.as_python_function(fn)     # pyjitc.jit(np.sort)
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._src = codegen.source_of(fn)           # parse + whitelist check, at decoration time
        self._signature = real_signature(fn)
        self._param_names = list(self._signature.parameters)
        # calls whose positional arguments bind one to one to the parameters: no *args/**kwargs
        plain = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in self._signature.parameters.values())
        self._positional = len(self._param_names) if plain else -1
        unknown = set(static_argnames) - set(self._param_names)
        if unknown:
            raise ArgumentError(f"static_argnames names no parameter of {fn.__name__}: {', '.join(sorted(unknown))}")
        self._static = set(static_argnames)
        self._target = Target(target, cpu)
        self._driver = device
        self._cache: OrderedDict[tuple, tuple[Compiled, list]] = OrderedDict()   # key -> (compiled, guards)
        self._lock = threading.Lock()
        self._hits = self._misses = self._disk_hits = 0
        self.compile_seconds = 0.0
        self.last_compile_phases: dict[str, float] = {}   # seconds per phase of the latest compile
        # The fast path (see _fast_key): fast key -> (Compiled.positional(), guards). Emptied by
        # every compile, which may make an argument static or evict a cache entry.
        self._fast: dict[tuple, tuple] = {}
        self._static_mask = _static_mask(self._param_names, self._static)
        self._dynamic = dynamic           # see dynamic.py: None, True or False
        self._symbolic: list[SymbolicEntry] = []   # executables with symbolic dimensions
        self.dynamic_refused: str | None = None    # why a symbolic compile was given up (dynamic=None)
        self._list_growth = 0   # lists appended to in while loops outgrew their room this many times (appends.room)

    # -- call path
    def _bind(self, args, kwargs) -> dict:
        if not kwargs and len(args) == self._positional:   # the common case, without inspect
            return dict(zip(self._param_names, args))
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
                spec_of(name, v, True)   # (an unhashable static value: the ArgumentError naming it)
                key.append(("static", v, static_identity(v)))
            elif isinstance(v, np.ndarray):   # byte order doesn't matter: inputs are made native
                key.append((v.shape, v.dtype if v.dtype.isnative else v.dtype.newbyteorder("=")))
            elif type(v) in PY_SCALAR_DTYPES:
                key.append(type(v))
            else:
                key.append(spec_of(name, v, False))
        arrays = sum(isinstance(v, np.ndarray) for v in values.values())
        if arrays > 1 or any(isinstance(v, (tuple, list, dict)) for v in values.values()):
            shared = find_aliases(values, path_name)   # arguments sharing memory: compiled for that sharing
            if shared:
                key.append(("aliases", shared))
        return tuple(key)

    def _fast_key(self, args):
        """The fast path's key for a call with every argument positional, each an ndarray, a Python
        bool/int/float or a static value; None for any other call (the general path takes it). It
        says no more than _key does: arrays that may share memory are left to the general path."""
        if len(args) != self._positional:
            return None
        key = []
        arrays = 0
        if self._static_mask is None:   # no static parameter: the common case, as short as it gets
            for arg in args:
                t = type(arg)
                if t is np.ndarray:
                    key.append((arg.shape, arg.dtype))
                    arrays += 1
                elif t in _RUNTIME_SCALARS:
                    key.append(t)
                else:
                    return None
        else:
            for arg, static in zip(args, self._static_mask):
                t = type(arg)
                if static:
                    key.append(static_identity(arg))
                elif t is np.ndarray:
                    key.append((arg.shape, arg.dtype))
                    arrays += 1
                elif t in _RUNTIME_SCALARS:
                    key.append(t)
                else:
                    return None
        if arrays > 1:   # no sharing at all (bounds only): else _key finds how they share
            found = [a for a in args if type(a) is np.ndarray]
            for i, a in enumerate(found):
                for b in found[i + 1:]:
                    if np.may_share_memory(a, b):
                        return None
        return tuple(key)

    def __call__(self, *args, **kwargs):
        try:
            fast_key = None
            if not kwargs:   # the fast path: a call worked out once for this exact template
                try:
                    fast_key = self._fast_key(args)
                    fast = self._fast.get(fast_key)
                except TypeError:   # an unhashable static value
                    fast_key = fast = None
                if fast is not None and (not fast[1] or all(g.holds() for g in fast[1])):
                    self._hits += 1
                    try:
                        return fast[0](args)
                    except (NeedsLibm, NeedsRoom):   # nothing was written back: the general path recompiles and retries
                        pass
            return self._call(args, kwargs, fast_key)
        except (JitError, UserRaised) as e:   # as _user_facing does, without a frame of its own
            if _SHOW_INTERNALS and isinstance(e, JitError):
                raise
            raise _for_user(e) from None

    def _call(self, args, kwargs, fast_key):
        values = self._bind(args, kwargs)
        try:
            key = self._key(values)
            entry = self._cache.get(key)
        except TypeError:  # an unhashable static value
            key, entry = None, None
        if entry is None and self._symbolic and key is not None:
            compiled = self._symbolic_hit(values, key)
            if compiled is not None:
                out = compiled.call_dynamic(values)
                run = compiled.positional() if fast_key is not None and len(self._fast) < MAXSIZE else None
                if run is not None:
                    self._fast[fast_key] = (run, self._symbolic_guards(compiled))
                return out
        if entry is None or (entry[1] and not all(g.holds() for g in entry[1])):
            compiled = self._compile_for(values)
        else:
            compiled = entry[0]
            self._hits += 1
        try:
            out = compiled.call_dynamic(values)
        except NeedsLibm as retry:   # vectorised sin/cos met a large value: libm's, from now on
            return self._compile_for(values, fast_trig=False, why=str(retry), stale=compiled).call_dynamic(values)
        except NeedsRoom:   # a list grown in a while loop outgrew its room: more, from now on
            while True:
                self._list_growth += 1
                compiled = self._compile_for(values, why="a list grown in a while loop needs more room", stale=compiled)
                try:
                    return compiled.call_dynamic(values)
                except NeedsRoom:
                    continue
        if fast_key is not None and entry is not None and compiled is entry[0] and len(self._fast) < MAXSIZE:
            run = compiled.positional()   # a hit of the general path: the fast path takes the next call
            if run is not None:
                self._fast[fast_key] = (run, entry[1])
        return out

    def _compile_for(self, values, fast_trig=True, why=None, stale=None) -> Compiled:
        """Compile for `values`' template (under the lock; once per template). `stale`: the
        entry to replace, whatever it is (a fast-trig version that met a value beyond its range)."""
        with self._lock:
            key = self._key(values)
            entry = self._cache.get(key)
            if entry is not None and entry[0] is not stale and all(g.holds() for g in entry[1]):
                self._hits += 1
                return entry[0]
            if entry is None and self._symbolic and key is not None:   # another thread compiled it
                hit = self._symbolic_hit(values, key)
                if hit is not None:
                    return hit
            why = why or self._why_miss(key, entry)
            if getattr(_no_recompile, "depth", 0):
                raise RecompileError(f"{self.__qualname__} would compile inside no_recompile(): {why}")
            axes = self._symbolic_axes(values, key) if entry is None and key is not None else None
            if axes is not None:
                compiled = self._compile_symbolic(values, key, axes, fast_trig, why)
                if compiled is not None:
                    return compiled
            if _EXPLAIN:
                print(f"pyjitc: compiling {self.__qualname__}: {why}", file=sys.stderr)
            log.debug("compiling %s: %s", self.__qualname__, why)
            with progress.compiling(self.__qualname__):
                lowered = self._lower_values(values, fast_trig)
                try:
                    compiled = lowered.compile()
                except CompileError as e:   # IREE failed: point at the function it was compiling
                    raise e.located(self._src.span(self._src.node)) from None
                progress.phase("loading")
                start = time.perf_counter()
                compiled.executable                            # load it now: part of the first call's cost
                compiled.phases["load"] = time.perf_counter() - start
            self.last_compile_phases = dict(compiled.phases)
            self.compile_seconds += compiled.compile_seconds
            self._misses += 1
            self._disk_hits += compiled.from_disk_cache
            key = self._key(values)                        # the static set may have grown while tracing
            self._cache[key] = (compiled, [Guard(*g) for g in lowered.program.guards])
            self._fast = {}
            self._cache.move_to_end(key)
            while len(self._cache) > MAXSIZE:
                self._cache.popitem(last=False)
            return compiled

    # -- symbolic dimensions (dynamic.py)
    def _in_order(self, values) -> list:
        return [values[n] for n in self._param_names]

    def _symbolic_hit(self, values, key):
        order = self._in_order(values)
        for entry in self._symbolic:
            if entry.fits(order, key) and all(g.holds() for g in entry.global_guards):
                self._hits += 1
                return entry.compiled
        return None

    def _symbolic_guards(self, compiled) -> list:
        return next(e.global_guards for e in self._symbolic if e.compiled is compiled)

    def _symbolic_axes(self, values, key):
        """Which axes of which arguments to compile as symbolic for this call, or None (static)."""
        if self._dynamic is False or self.dynamic_refused or any(isinstance(p, tuple) and p and p[0] == "aliases"
                                                                  for p in key):
            return None
        order = self._in_order(values)
        if self._dynamic:
            axes = dynamic.all_axes(order)
            return axes if any(axes) else None
        for old in reversed(self._cache):   # the latest compiled key that differs only in sizes
            axes = dynamic.symbolic_axes(order, key, old)
            if axes is not None:
                if self._cache[old][0].signature.has_loops:
                    # run-time loops: static, their native form (one dispatch) needs static sizes;
                    # symbolic, Cholesky at n = 60 ran 0.08 -> 58 ms (bench/bench_dynamic.py)
                    return None
                return axes
        return None

    def _compile_symbolic(self, values, key, axes, fast_trig, why):
        """Compile with `axes` symbolic; None where the function needs static sizes (dynamic=None:
        it stays static from now on, `dynamic_refused` says why)."""
        start = time.perf_counter()
        try:
            with progress.compiling(self.__qualname__):
                lowered = self._lower_values(values, fast_trig, axes)
                if self._dynamic is None and lowered.signature.has_loops:
                    self.dynamic_refused = "run-time loops: their native form needs static sizes"
                    return None
                compiled = lowered.compile()
                compiled.executable
        except NeedsStaticShape as e:
            span = getattr(e, "span", None) or self._src.span(self._src.node)
            if self._dynamic and e.this_size:
                # (a size that makes an expression of the symbols a number the code depends on,
                # u[1:-1] of 2 elements empty: these sizes compile as they are, as 0 and 1 do)
                return None
            if self._dynamic:
                raise JitError(f"can't compile with run-time sizes (dynamic=True): {e.message}", span,
                               hint="use dynamic=None (the default) to compile per size where needed") from None
            self.dynamic_refused = f"{span}: {e.message}" if span else e.message
            return None
        except Exception as e:   # dynamic=None: anything the symbolic compile can't do stays static
            if self._dynamic and not isinstance(e, CompileError):
                raise
            # (IREE failing on the dynamic module: static code, whatever dynamic= says; the
            # statement fuzzer's --dynamic mode found such modules, e.g. seed 2 program 383:
            # "stream.async.dispatch op: streamable op expected to be in an execution region")
            if self._dynamic:
                warnings.warn(f"{self.__qualname__}: IREE could not compile the version with run-time sizes; "
                              "compiled per size instead", RuntimeWarning, stacklevel=5)
            self.dynamic_refused = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            log.debug("%s stays static: %s", self.__qualname__, self.dynamic_refused)
            return None
        compiled.compile_seconds = getattr(compiled, "compile_seconds", 0.0) or time.perf_counter() - start
        self.compile_seconds += compiled.compile_seconds
        self._misses += 1
        # per parameter: the symbolic Template of an array argument, else its cache-key part (the
        # key taken now: tracing may have made a scalar static)
        pattern = tuple(s if isinstance(s, Template) and type(values[n]) is np.ndarray else k
                        for (n, s), k in zip(lowered.signature.params, self._key(values)))
        entry = SymbolicEntry(compiled, pattern, lowered.shape_guards,
                              [Guard(*g) for g in lowered.program.guards])
        self._symbolic.append(entry)
        self._fast = {}
        shown = entry.describe(self._param_names)
        if _EXPLAIN:
            print(f"pyjitc: compiling {self.__qualname__} with run-time sizes ({shown}): {why}", file=sys.stderr)
        log.debug("compiling %s with run-time sizes (%s): %s", self.__qualname__, shown, why)
        return compiled

    def _why_miss(self, key, entry) -> str:
        if entry is not None:
            changed = [g.describe() for g in entry[1] if not g.holds()]
            return f"{', '.join(changed)} changed since it was compiled (read as a constant)"
        if not self._cache:
            return "first call"
        # the closest compiled key: say which arguments differ
        best = min(self._cache, key=lambda k: sum(a != b for a, b in zip(k, key)))
        diffs = [f"argument {n!r}: {_show(a)} -> {_show(b)}"
                 for n, a, b in zip(self._param_names, best, key) if a != b]
        return "; ".join(diffs) or "a new static value"

    # -- staged API
    def _specs(self, values) -> list:
        return [(n, spec_of(n, values[n], n in self._static)) for n in self._param_names]

    def _lower_values(self, values, fast_trig=False, axes=None) -> Lowered:
        """`fast_trig`: vectorised float64 sin/cos with a retry through libm, which only the call
        path can do (lower() for inspection or ahead of time gets libm's). `axes`: per parameter,
        the axes to compile as symbolic dimensions (dynamic.py)."""
        start = time.perf_counter()
        while True:
            progress.phase("tracing")
            specs = self._specs(values)
            hints = None
            if axes is not None:
                specs, hints = dynamic.symbolic_specs(self._param_names, self._in_order(values), specs, axes)
            try:
                with dims.tracing(hints) as shape_questions:
                    program = tracing.trace(self._src, dict(specs), fast_trig, find_aliases(values, path_name),
                                            element_loops=self._element_loops(), list_growth=self._list_growth)
                    program = self._transform(program, specs)
            except NeedStatic as need:
                # A Python scalar argument decides a shape/axis/branch: make it static and retry.
                new = need.params - self._static
                if not new:
                    raise need.reason or JitError("internal error: a value asked to be static twice") from None
                self._static |= new
                self._fast = {}
                self._static_mask = _static_mask(self._param_names, self._static)
                continue
            traced = time.perf_counter()
            progress.phase("building StableHLO")
            with dims.tracing(hints) as lowering_questions:
                lowered = Lowered(program, specs, self._target, self._driver)
            lowered.phases = {"trace": traced - start, "stablehlo": time.perf_counter() - traced}
            lowered.shape_guards = shape_questions.guards + lowering_questions.guards
            return lowered

    def _transform(self, program, specs):
        """The program to compile, from the traced one (autodiff/api.py extends it)."""
        return program

    def _element_loops(self) -> bool:
        """Whether writes through slices with run-time steps may be loops over their elements: on
        targets that run scalar loops natively, for programs compiled as traced (not transformed)."""
        return type(self)._transform is JitFunction._transform and native_loops(self._target)

    @_user_facing
    def lower(self, *args, **kwargs) -> Lowered:
        """Specialise for example arguments or `Template`s (dimensions may be names or `?`:
        `Template.parse("f32[n,5]")`, one executable for every n); returns the Lowered stage."""
        with progress.compiling(self.__qualname__):
            try:
                return self._lower_values(self._bind(args, kwargs))
            except NeedsStaticShape as e:
                raise JitError(f"can't compile with run-time sizes: {e.message}", getattr(e, "span", None),
                               hint="give that dimension a number in the template") from None

    def cache_info(self) -> CacheInfo:
        """hits, misses (compiles or disk-cache loads), maxsize, currsize (entries), seconds spent
        compiling (including disk-cache loads), disk_hits (misses served from the disk cache)."""
        return CacheInfo(self._hits, self._misses, MAXSIZE, len(self._cache) + len(self._symbolic), self.compile_seconds,
                         self._disk_hits, tuple(e.describe(self._param_names) for e in self._symbolic))

    def cache_clear(self) -> None:
        self._cache.clear()
        self._symbolic.clear()
        self.dynamic_refused = None
        self._fast = {}
        self._hits = self._misses = self._disk_hits = 0
        self.compile_seconds = 0.0

    def __repr__(self) -> str:
        return f"<pyjitc.jit {self.__qualname__}>"

    def __reduce__(self):
        """Pickled by reference to the module-level function, with the executables compiled so far
        (their .vmfb bytes), so a worker process calls them without compiling. A function of
        `__main__` (a script, a notebook cell) travels by value when cloudpickle is there (Dask and
        Ray bring it), with its source: a worker's `__main__` is another module."""
        module, qualname = self._fn.__module__, self._fn.__qualname__
        options = {"static_argnames": tuple(self._static), "target": self._target.backend,
                   "cpu": self._target.cpu, "device": self._driver, "dynamic": self._dynamic}
        entries = [(k, c) for k, (c, _) in self._cache.items()]
        if module == "__main__" and "<locals>" not in qualname:
            by_value = _by_value(self._fn)
            if by_value is not None:
                filename = self._src.filename
                return _restore_main_jit, (qualname, by_value, filename, linecache.getlines(filename), options, entries)
        if "<locals>" in qualname or module == "__main__" and not hasattr(sys.modules.get("__main__"), qualname):
            raise pickle.PicklingError(f"can't pickle the @jit function {qualname}: only functions defined "
                                       "at module level can be found again in another process")
        return _restore_jit, (module, qualname, options, entries)

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)


def _show(key_part) -> str:
    if isinstance(key_part, tuple) and len(key_part) == 2 and isinstance(key_part[1], np.dtype):
        return str(Template(key_part[0], key_part[1]))
    if isinstance(key_part, type):
        return f"Python {key_part.__name__}"
    if isinstance(key_part, tuple) and key_part and key_part[0] == "static":
        return f"static {key_part[1]!r}"
    return str(key_part)


def _restore_jit(module, qualname, options, entries):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not isinstance(obj, JitFunction):
        obj = JitFunction(obj, **options)
    for key, compiled in entries:   # guards are re-checked by the first call that misses
        obj._cache.setdefault(key, (compiled, []))
    return obj


def _by_value(fn) -> bytes | None:
    try:
        import cloudpickle
    except ImportError:
        return None
    return cloudpickle.dumps(fn)


_from_main: dict[tuple, JitFunction] = {}   # functions of another process's __main__, one object each


def _restore_main_jit(qualname, by_value, filename, lines, options, entries):
    obj = sys.modules.get("__main__")
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if not isinstance(obj, JitFunction):   # not a script re-run as this process's __main__ (a notebook's cell)
        key = (filename, qualname, hashlib.blake2b(by_value, digest_size=16).digest())
        obj = _from_main.get(key)
        if obj is None:
            if lines and not os.path.exists(filename):   # the source, for the compiler and for error messages
                linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)
            fn = pickle.loads(by_value)
            fn.__code__ = _with_filename(fn.__code__, filename)   # cloudpickle 3.1 renames it <dynamic-code>
            obj = _from_main[key] = JitFunction(fn, **options)
    for key, compiled in entries:
        obj._cache.setdefault(key, (compiled, []))
    return obj


def _with_filename(code, filename):
    consts = tuple(_with_filename(c, filename) if inspect.iscode(c) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


@_user_facing
def jit(fn=None, *, static_argnames=(), target: str = "llvm-cpu", cpu: str = "host", device: str | None = None,
        dynamic: bool | None = None):
    """Compile `fn` with IREE, once per input template. `static_argnames`: arguments whose values
    are compile-time constants (others Python scalars are run-time values unless the function
    needs their value, e.g. as a shape). `device`: an IREE driver name (default local-task).
    `dynamic`: array sizes as run-time values (one executable for many sizes): None (default)
    after a second size, True from the first call, False never (see pyjitc/dynamic.py)."""
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)

    if fn is None:
        return lambda f: jit(f, static_argnames=static_argnames, target=target, cpu=cpu, device=device,
                             dynamic=dynamic)
    return JitFunction(fn, tuple(static_argnames), target, cpu, device, dynamic)


def devices() -> dict[str, list]:
    """IREE drivers available in this process and the devices each can see."""
    from .backend import iree as backend
    return {d: backend.list_devices(d) for d in backend.available_drivers()}
