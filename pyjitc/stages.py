"""stages: the compile pipeline as objects. Lowered holds a specialisation's typed IR and its
StableHLO module; Compiled holds the .vmfb (which carries its own Signature) and calls it;
Library is a .vmfb with several functions, as saved and loaded. IREE (lowering/stablehlo.py's
MLIR bindings, backend/iree.py's compiler and runtime) is imported where it is first used:
importing pyjitc, or decorating a function, loads none of it."""
from __future__ import annotations

import dataclasses
import os
import re
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from . import cache, progress, tree
from .ir import dims
from .backend.target import TARGET_DRIVERS, Contraction, Target, module_flags
from .errors import ArgumentError, CompileError, RunError, user_exception
from .program import FAST_TRIG_RETRY, LIST_ROOM_RETRY, Known, Program, Result
from .signature import REFLECTION_KEY, Signature
from .template import (PY_SCALAR_DTYPES, ScalarSpec, StaticSpec, Template, TreeSpec, at_path, bind_by_name,
                       path_name)

STAGES = ("typed", "stablehlo", "iree-input")
_SIGNATURE_ATTR = re.compile(r' attributes \{iree\.reflection = \{pyjitc\.signature = "(?:[^"\\]|\\.)*"\}\}')


class Lowered:
    """One specialisation lowered to StableHLO; `as_text(stage)` shows each stage."""

    def __init__(self, program: Program, params, target: Target = Target(), driver: str | None = None):
        from .lowering.stablehlo import lower_functions
        self.program = program
        self.target = target
        self.driver = driver     # None: chosen per compiled function (see Compiled)
        fn = program.function
        self.signature = Signature(fn.name, tuple(params),
                                   tuple((v.type.shape, v.type.dtype) for v in fn.results),
                                   program.out_tree, tuple(program.writebacks),
                                   tuple(program.checks), program.error_index, target.backend,
                                   _has_loops(fn.body), target.input_alignment(widest_element(fn.body)),
                                   tuple(program.c_order))
        self._module = lower_functions([(fn, {REFLECTION_KEY: self.signature.to_json()})],
                                       scalar_loops=native_loops(target), gpu=target.gpu)
        self.phases: dict[str, float] = {}

    def as_text(self, stage: str = "stablehlo", debug_info: bool = False, signature: bool = False) -> str:
        """`stage`: "typed" (pyjitc's typed IR), "stablehlo" (the MLIR module given to IREE) or
        "iree-input" (that module after IREE's input conversion, for this target).
        `debug_info=True` prints the Python source location of every MLIR op; `signature=True`
        keeps the JSON signature attribute that the .vmfb carries (hidden by default)."""
        if stage == "typed":
            return str(self.program.function)
        if stage == "stablehlo":
            text = self._module.text(debug_info=debug_info)
            return text if signature else _SIGNATURE_ATTR.sub("", text)
        if stage == "iree-input":
            from .backend import iree as backend
            return backend.compile_to_stage(self._module.text(debug_info=debug_info), self.target, "input")
        raise ValueError(f"unknown stage {stage!r}; choose one of {', '.join(STAGES)}")

    def compiler_flags(self) -> list[str]:
        """The IREE flags this module is compiled with (besides the target backend): the target's,
        and those that follow the ops the module holds (target.module_flags)."""
        return self.target.flags() + self._module_flags()

    def _module_flags(self) -> list[str]:
        body = self.program.function.body
        text = self._module.text()
        return module_flags(self.target, contractions(body), NATIVE_LOOP_MARK in text, widest_element(body), text)

    def compile(self) -> "Compiled":
        with progress.compiling(self.signature.name):
            return self._compile()

    def _compile(self) -> "Compiled":
        start = time.perf_counter()
        progress.phase("looking up the disk cache")
        text = self.as_text(signature=True)
        key = cache.key_for(text, self.target.backend, self.compiler_flags())
        vmfb = cache.get(key)
        from_disk = vmfb is not None
        if vmfb is None:
            progress.phase("IREE compile")
            vmfb = self._compile_text(text)
            cache.put(key, vmfb)
        compiled = Compiled(vmfb, self.signature, self.driver)
        compiled.compile_seconds = time.perf_counter() - start
        compiled.from_disk_cache = from_disk
        compiled.phases = {**self.phases, ("disk cache" if from_disk else "iree compile"): compiled.compile_seconds}
        dump_dir = os.environ.get("PYJITC_DUMP_DIR")
        if dump_dir:
            dump_stages(self, compiled, Path(dump_dir))
        return compiled


    def _compile_text(self, text: str) -> bytes:
        """IREE's .vmfb for `text`. Should IREE fail on a loop lowered as a native loop (a pyjitc
        bug: the test suite turns this warning into an error), the same function with host loops."""
        from .backend import iree as backend
        from .lowering.stablehlo import lower_functions
        extra = self._module_flags()
        try:
            return backend.compile_stablehlo(text, self.target, extra)
        except CompileError as e:
            if NATIVE_LOOP_MARK not in text:
                raise
            lines = str(e).splitlines()
            why = next((line.strip() for line in lines if "error:" in line or line.startswith("Error code")),
                       lines[0])   # IREE's own diagnostic, or how it stopped (a crash: a negative code)
            warnings.warn(f"{self.signature.name}: IREE failed on a native loop; compiled with host loops "
                          f"instead (slower; please report): {why[:500]}", NativeLoopWarning, stacklevel=2)
            module = lower_functions([(self.program.function, {REFLECTION_KEY: self.signature.to_json()})],
                                     scalar_loops=False, gpu=self.target.gpu)
            return backend.compile_stablehlo(module.text(), self.target, extra)


# what every native loop holds (lowering/scalar_loop.py: an scf.while in a flow.dispatch.region)
# and nothing else in a module does (the copies a module makes are dispatch regions too)
NATIVE_LOOP_MARK = "scf.while"


class NativeLoopWarning(RuntimeWarning):
    """A loop pyjitc lowered as a native loop failed to compile and was compiled as a host loop."""


def native_loops(target: Target) -> bool:
    """Whether run-time loops doing scalar work run as native loops in one dispatch
    (lowering/scalar_loop.py): on CPU targets, unless PYJITC_NATIVE_LOOPS=0."""
    return target.backend == "llvm-cpu" and os.environ.get("PYJITC_NATIVE_LOOPS", "1") != "0"


def _has_loops(block) -> bool:
    return any(op.name == "while" or any(_has_loops(r) for r in op.regions) for op in block.ops)


def widest_element(block) -> int:
    """Bytes of the widest element any value in `block` (regions included) holds."""
    widest = max((np.dtype(v.type.dtype).itemsize for v in block.params), default=1)
    for op in block.ops:
        widest = max([widest, *(np.dtype(v.type.dtype).itemsize for v in op.results),
                      *(widest_element(r) for r in op.regions)])
    return widest


def contractions(block):
    """Every dot_general in `block` (regions included) as a target.Contraction."""
    for op in block.ops:
        if op.name == "dot_general":
            (a, b), at = op.operands, op.attrs
            # (a symbolic dimension counts as large: 4096)
            size = lambda t, axes: int(np.prod([t.shape[i] if isinstance(t.shape[i], int) else 4096 for i in axes],
                                               dtype=np.int64))
            free = lambda t, c, bt: [i for i in range(len(t.shape)) if i not in c and i not in bt]
            yield Contraction(size(a.type, at["lhs_batch"]),
                              size(a.type, free(a.type, at["lhs_contract"], at["lhs_batch"])),
                              size(b.type, free(b.type, at["rhs_contract"], at["rhs_batch"])),
                              size(a.type, at["lhs_contract"]), np.dtype(a.type.dtype).name)
        for region in op.regions:
            yield from contractions(region)


def dump_stages(lowered: Lowered, compiled: "Compiled", directory: Path) -> list[Path]:
    """Every stage of one compile, in files named after the function and its template."""
    directory.mkdir(parents=True, exist_ok=True)
    sig = lowered.signature
    template = "_".join(f"{n}-{s}" for n, s in sig.params)
    stem = re.sub(r"[^A-Za-z0-9_.,\[\]-]+", "_", f"{sig.name}__{template}")[:150]
    files = {
        "typed.txt": lowered.as_text("typed"),
        "stablehlo.mlir": lowered.as_text("stablehlo", debug_info=True),
        "iree-input.mlir": lowered.as_text("iree-input"),
        "flags.txt": " ".join([f"--iree-hal-target-backends={lowered.target.backend}", *lowered.compiler_flags()]) + "\n",
    }
    written = []
    for suffix, text in files.items():
        path = directory / f"{stem}.{suffix}"
        path.write_text(text)
        written.append(path)
    path = directory / f"{stem}.vmfb"
    path.write_bytes(compiled.vmfb)
    return written + [path]


class NeedsLibm(Exception):
    """The optimistic vectorised float64 sin/cos met a value beyond its range: the @jit wrapper
    compiles the function with libm's and calls again (nothing was written back)."""


class NeedsRoom(RunError):
    """A list appended to in a while loop outgrew its room (frontend/appends.py): the @jit wrapper
    compiles the function with more and calls again (nothing was written back); called otherwise,
    the caller gets this RunError."""


SMALL_CALL_ELEMENTS = 1 << 15


def default_driver(signature: Signature) -> str:
    """The IREE driver when none is chosen: for CPU code, `local-sync` (single-threaded, about 8 us
    per call here) for functions with run-time loops (IREE 3.13's `local-task` fails some of them
    at run time: "transient buffer has not been committed") and when the inputs and results hold
    fewer than 32768 elements; else `local-task` (multi-threaded, about 17 us per call, faster on
    large arrays)."""
    driver = TARGET_DRIVERS.get(signature.target, "local-task")
    if driver != "local-task":
        return driver
    if signature.has_loops:
        return "local-sync"
    if signature.symbolic:
        return "local-task"
    sizes = [int(np.prod(s.shape, dtype=np.int64)) for _, s in signature.dynamic if isinstance(s, Template)]
    sizes += [int(np.prod(shape, dtype=np.int64)) for shape, _ in signature.results]
    return "local-sync" if sum(sizes) < SMALL_CALL_ELEMENTS else "local-task"


class Compiled:
    """A compiled specialisation: call it with arrays matching its signature; `save` it; pickle
    it (the .vmfb bytes and the signature travel, the loaded module does not)."""

    compile_seconds = 0.0
    from_disk_cache = False
    phases: dict = {}

    def __init__(self, vmfb: bytes, signature: Signature, driver: str | None = None, executable=None):
        self.vmfb = vmfb
        self.signature = signature
        self._chosen_driver = driver
        self.driver = driver or default_driver(signature)
        self._exe = executable     # loaded on the first call: a cross-compiled module is never loaded
        self._shared: dict = {}    # shared by the functions of one library: one loaded module
        self._result_types = signature.results
        self._dynamic = list(signature.dynamic)

    def __getstate__(self):
        return {"vmfb": self.vmfb, "signature": self.signature, "driver": self.driver,
                "compile_seconds": self.compile_seconds}

    def __setstate__(self, state):
        self.__init__(state["vmfb"], state["signature"], state["driver"])
        self.compile_seconds = state["compile_seconds"]

    @property
    def executable(self):
        """The loaded module (backend.iree.Executable), loaded on first use."""
        if self._exe is None:
            from .backend import iree as backend
            exe = self._shared.get(self.driver)
            if exe is None:
                exe = self._shared[self.driver] = backend.Executable(self.vmfb, self.driver)
            self._exe = exe
        return self._exe

    def save(self, path) -> Path:
        """Write the .vmfb; its signature is inside it (see pyjitc.load)."""
        path = Path(path)
        path.write_bytes(self.vmfb)
        return path

    def __repr__(self) -> str:
        return f"<pyjitc.Compiled {self.signature.describe()} for {self.signature.target}>"

    def __call__(self, *args, **kwargs):
        # a static argument may be left out: the function was compiled for that one value
        statics = {n: s.value for n, s in self.signature.params if isinstance(s, StaticSpec)}
        values = bind_by_name(self.signature.name, [n for n, _ in self.signature.params], args, kwargs, statics)
        sizes: dict[str, int] = {}   # the symbolic dimensions' values in this call
        for name, spec in self.signature.params:
            check_argument(name, values[name], spec, sizes)
        return self.call_dynamic(values)

    def call_dynamic(self, values: dict[str, Any]):
        """Call with already-checked arguments (a name -> value mapping)."""
        if self.signature.c_order:
            self.signature.check_layout(values)
        arrays = [host_input(at_path(values, p), s) for p, s in self._dynamic]
        for path, _ in self.signature.writebacks:
            if not at_path(values, path).flags.writeable:
                raise ArgumentError(f"argument {path_name(path)} is updated in place but the array is read-only")
        results = (self._invoke or self._invoker())(arrays)
        self._raise_on_error(results)
        def write_back():
            for path, index in self.signature.writebacks:
                np.copyto(at_path(values, path), results[index])
        return self.signature.out_tree.build(results, values, write_back)   # copies of arguments see the values passed in

    _invoke = None

    def _invoker(self):
        types = [((), PY_SCALAR_DTYPES[s.pytype]) if isinstance(s, ScalarSpec) else (s.shape, s.dtype)
                 for _, s in self._dynamic]
        self._invoke = (self._exe or self.executable).invoker(self.signature.name, types, self._result_types,
                                                              self.signature.input_alignment)
        if self.signature.symbolic and self.driver == "local-task" and self._chosen_driver is None:
            # sizes known only per call: small calls on local-sync (single-threaded, ~9 us a
            # call against ~70), large ones on local-task, as default_driver chooses for static code
            from .backend import iree as backend
            small_exe = self._shared.get("local-sync")
            if small_exe is None:
                small_exe = self._shared["local-sync"] = backend.Executable(self.vmfb, "local-sync")
            small = small_exe.invoker(self.signature.name, types, self._result_types, self.signature.input_alignment)
            large = self._invoke

            def by_size(arrays):
                return (small if sum(a.size for a in arrays) < SMALL_CALL_ELEMENTS else large)(arrays)
            self._invoke = by_size
        return self._invoke

    def _raise_on_error(self, results) -> None:
        if self.signature.error_index is not None:
            code = int(results[self.signature.error_index])
            if code:   # NumPy would have raised here; the caller's arrays are left as they were
                message = self.signature.checks[code - 1]
                if message == FAST_TRIG_RETRY:
                    raise NeedsLibm(message)
                if message == LIST_ROOM_RETRY:
                    raise NeedsRoom(message)
                raise user_exception(message) or RunError(message)

    def positional(self):
        """`call_dynamic` for @jit's fast path: a callable taking every argument positionally, as a
        tuple in parameter order, already checked against this signature (the caller's cache key),
        with the per-call work of call_dynamic worked out once. None where an argument is a
        container (those go through call_dynamic)."""
        sig = self.signature
        names = [n for n, _ in sig.params]
        if any(len(p) != 1 for p, _ in self._dynamic) or any(len(p) != 1 for p, _ in sig.writebacks) or sig.c_order:
            return None
        inputs = [(names.index(p[0]), s, isinstance(s, ScalarSpec)) for p, s in self._dynamic]
        writebacks = [(names.index(p[0]), path_name(p), i) for p, i in sig.writebacks]
        leaf = sig.out_tree.leaves[0] if sig.out_tree.treedef.kind is None else None
        one_result = leaf.index if type(leaf) is Result and leaf.weak is None and not leaf.array else None
        constant = type(leaf) is Known and not isinstance(leaf.value, np.ndarray)   # `return None`, a number
        flat = sig.out_tree.flat()
        build, check = sig.out_tree.build, sig.error_index is not None
        invoke = self._invoke or self._invoker()

        def run(args):
            arrays = []
            for i, spec, scalar in inputs:
                v = args[i]
                if scalar or not v.flags.c_contiguous or not v.dtype.isnative:
                    v = host_input(v, spec)
                arrays.append(v)
            for i, name, _ in writebacks:
                if not args[i].flags.writeable:
                    raise ArgumentError(f"argument {name} is updated in place but the array is read-only")
            results = invoke(arrays)
            if check:
                self._raise_on_error(results)
            if one_result is not None:
                r = results[one_result]
                out = r[()] if r.ndim == 0 else r
            elif constant:
                out = leaf.value
            elif flat is not None:   # a tuple or list of distinct results: built without the tree walk
                kind, parts = flat
                out = kind([part.take(results) for part in parts])
            else:   # (copies of arguments see the values passed in; views taken after the writes, the written ones)
                return build(results, dict(zip(names, args)), lambda: write_back(args, results))
            write_back(args, results)
            return out

        def write_back(args, results):
            for i, _, index in writebacks:
                np.copyto(args[i], results[index])
        return run


def host_input(value, spec) -> np.ndarray:
    if isinstance(spec, ScalarSpec):
        try:
            return np.asarray(value, dtype=PY_SCALAR_DTYPES[spec.pytype])
        except OverflowError:
            raise ArgumentError(f"Python integer {value} does not fit in int64") from None
    arr = np.asarray(value)
    if not arr.flags.c_contiguous or arr.dtype.byteorder not in "=|":
        arr = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("="))
    return arr


def check_argument(name: str, value, spec, sizes: dict | None = None) -> None:
    """`sizes`: the symbolic dimensions' values seen so far in this call (a name means one size)."""
    sizes = {} if sizes is None else sizes
    if isinstance(spec, TreeSpec):
        try:
            items = spec.treedef.flatten_up_to(value)
        except tree.StructureError as e:
            part = TreeSpec(e.node, spec.specs[e.first_leaf:e.first_leaf + e.node.num_leaves])
            raise ArgumentError(f"argument {path_name((name,) + e.path)!r}: expected {part}, "
                                f"got a {type(e.value).__name__} of another structure") from None
        for (path, s), item in zip(spec.leaves(), items):
            check_argument(path_name((name,) + path), item, s, sizes)
    elif isinstance(spec, Template):
        arr = value if isinstance(value, (np.ndarray, np.generic)) else None
        fits = arr is not None and (dims.bind(spec.shape, arr.shape, sizes) if dims.is_symbolic(spec.shape)
                                    else arr.shape == spec.shape)
        if not fits or arr.dtype.newbyteorder("=") != spec.dtype:
            got = f"{arr.dtype}{list(arr.shape)}" if arr is not None else type(value).__name__
            where = f" (a named dimension is one size, at least {dims.MIN_SIZE}: {sizes})" if sizes else ""
            raise ArgumentError(f"argument {name!r}: expected an array {spec}, got {got}{where}")
    elif isinstance(spec, ScalarSpec):
        if type(value) is not spec.pytype:
            raise ArgumentError(f"argument {name!r}: expected a Python {spec.pytype.__name__}, got {type(value).__name__}")
    elif isinstance(spec, StaticSpec) and value != spec.value:
        raise ArgumentError(f"argument {name!r} was compiled as the static value {spec.value!r}, got {value!r}")


class Library:
    """Compiled functions in one .vmfb, callable by name (`lib.softmax(x)`, `lib["softmax"]`);
    a library of one function is itself callable."""

    def __init__(self, vmfb: bytes, functions: dict[str, Compiled]):
        self.vmfb = vmfb
        self.functions = functions

    def __getitem__(self, name: str) -> Compiled:
        return self.functions[name]

    def __getattr__(self, name: str) -> Compiled:
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(name)

    def __call__(self, *args, **kwargs):
        if len(self.functions) != 1:
            raise ArgumentError(f"this library has {len(self.functions)} functions; call one by name: "
                                + ", ".join(self.functions))
        return next(iter(self.functions.values()))(*args, **kwargs)

    @property
    def signature(self) -> Signature:
        return next(iter(self.functions.values())).signature

    def save(self, path) -> Path:
        path = Path(path)
        path.write_bytes(self.vmfb)
        return path

    def __repr__(self) -> str:
        return f"<pyjitc.Library {', '.join(f.signature.describe() for f in self.functions.values())}>"


def compile_library(lowered: list[Lowered], target: Target | None = None) -> Library:
    """Compile several specialisations into one .vmfb, each exported under its function name."""
    if not lowered:
        raise ArgumentError("compile_library needs at least one lowered function")
    names = [lw.signature.name for lw in lowered]
    if len(set(names)) != len(names):
        raise ArgumentError(f"two functions in one library have the same name: {names}")
    from .backend import iree as backend
    from .lowering.stablehlo import lower_functions
    target = target or lowered[0].target
    # one alignment for the whole module: every function's inputs get what its code assumes
    widest = max(widest_element(lw.program.function.body) for lw in lowered)
    signatures = [dataclasses.replace(lw.signature, input_alignment=target.input_alignment(widest)) for lw in lowered]
    module = lower_functions([(lw.program.function, {REFLECTION_KEY: s.to_json()}) for lw, s in zip(lowered, signatures)],
                             scalar_loops=native_loops(target), gpu=target.gpu)
    text = module.text()
    extra = module_flags(target, [c for lw in lowered for c in contractions(lw.program.function.body)],
                         NATIVE_LOOP_MARK in text, widest, text)
    vmfb = backend.compile_stablehlo(text, target, extra)
    return _library(vmfb, signatures, lowered[0].driver)


def _library(vmfb: bytes, signatures: list[Signature], driver: str | None) -> Library:
    """`driver` None: each function gets its default (see default_driver), as under @jit."""
    functions = {s.name: Compiled(vmfb, s, driver) for s in signatures}
    shared: dict = {}
    for c in functions.values():   # one loaded module for all of them, loaded on the first call
        c._shared = shared
    return Library(vmfb, functions)


def load(path, device: str | None = None) -> Library:
    """A .vmfb saved by pyjitc: each function checks its inputs against the signature stored in
    the file and returns what the jitted function returned. `device`: an IREE driver name."""
    from .backend import iree as backend
    vmfb = Path(path).read_bytes()
    signatures = backend.reflected(vmfb, REFLECTION_KEY)
    if not signatures:
        raise ArgumentError(f"{path} has no pyjitc signature: it was not written by pyjitc "
                            "(run it with iree-run-module instead)")
    return _library(vmfb, [Signature.from_json(s) for s in signatures], device)
