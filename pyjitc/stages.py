"""stages: the compile pipeline as objects. Lowered holds a specialisation's typed IR and its
StableHLO module; Compiled holds the .vmfb and the signature needed to call it."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .backend import iree as backend
from .errors import ArgumentError, JitError, RunError
from .frontend.codegen import Program, unflatten
from .lowering.stablehlo import lower_function
from .template import ScalarSpec, StaticSpec, Template, TreeSpec, at_path, leaves, path_name

STAGES = ("typed", "stablehlo")


@dataclass(frozen=True)
class Signature:
    """Everything needed to call a compiled function without its source."""
    name: str
    params: tuple[tuple[str, Any], ...]          # (name, Template | ScalarSpec | StaticSpec), in order
    results: tuple[tuple[tuple[int, ...], np.dtype], ...]
    out_tree: Any
    writebacks: tuple[tuple[str, int], ...]
    checks: tuple[str, ...] = ()                 # run-time error messages, by error code - 1
    error_index: int | None = None               # the result holding the error code

    @property
    def dynamic(self) -> list[tuple[tuple, Any]]:
        """(path, spec) of each run-time input, in the compiled function's parameter order."""
        return [leaf for n, s in self.params for leaf in leaves((n,), s)]

    def describe(self) -> str:
        args = ", ".join(f"{n}: {s}" for n, s in self.params)
        return f"{self.name}({args})"


class Lowered:
    """One specialisation lowered to StableHLO; `as_text(stage)` shows each stage."""

    def __init__(self, program: Program, params, target: backend.Target = backend.Target(),
                 driver: str | None = None):
        self.program = program
        self.target = target
        self.driver = driver or backend.TARGET_DRIVERS.get(target.backend, "local-task")
        self._module = lower_function(program.function)
        fn = program.function
        self.signature = Signature(fn.name, tuple(params),
                                   tuple((v.type.shape, v.type.dtype) for v in fn.results),
                                   program.out_tree, tuple(program.writebacks),
                                   tuple(program.checks), program.error_index)

    def as_text(self, stage: str = "stablehlo", debug_info: bool = False) -> str:
        """`stage`: "typed" (pyjitc's typed IR) or "stablehlo" (the MLIR module given to IREE).
        `debug_info=True` prints the Python source location of every MLIR op."""
        if stage == "typed":
            return str(self.program.function)
        if stage == "stablehlo":
            return self._module.text(debug_info=debug_info)
        raise ValueError(f"unknown stage {stage!r}; choose one of {', '.join(STAGES)}")

    def compiler_flags(self) -> list[str]:
        return self.target.flags()

    def compile(self) -> "Compiled":
        start = time.perf_counter()
        vmfb = backend.compile_stablehlo(self.as_text(), self.target)
        compiled = Compiled(vmfb, self.signature, self.driver)
        compiled.compile_seconds = time.perf_counter() - start
        return compiled


class Compiled:
    """A compiled specialisation: call it with arrays matching its signature."""

    compile_seconds = 0.0

    def __init__(self, vmfb: bytes, signature: Signature, driver: str = "local-task"):
        self.vmfb = vmfb
        self.signature = signature
        self.driver = driver
        self._exe = backend.Executable(vmfb, driver)
        self._result_types = signature.results
        self._dynamic = [(n, s) for n, s in signature.dynamic]

    def __call__(self, *args, **kwargs):
        names = [n for n, _ in self.signature.params]
        if len(args) > len(names):
            raise ArgumentError(f"{self.signature.name}() takes {len(names)} arguments but {len(args)} were given")
        values = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names or k in values:
                raise ArgumentError(f"{self.signature.name}() got an unexpected or repeated argument {k!r}")
            values[k] = v
        missing = [n for n in names if n not in values]
        if missing:
            raise ArgumentError(f"{self.signature.name}() is missing arguments: {', '.join(missing)}")
        for name, spec in self.signature.params:
            check_argument(name, values[name], spec)
        return self.call_dynamic(values)

    def call_dynamic(self, values: dict[str, Any]):
        """Call with already-checked arguments (a name -> value mapping)."""
        arrays = [host_input(at_path(values, p), s) for p, s in self._dynamic]
        for path, _ in self.signature.writebacks:
            if not at_path(values, path).flags.writeable:
                raise ArgumentError(f"argument {path_name(path)} is updated in place but the array is read-only")
        results = self._exe.invoke(self.signature.name, arrays, self._result_types)
        if self.signature.error_index is not None:
            code = int(results[self.signature.error_index])
            if code:   # NumPy would have raised here; the caller's arrays are left as they were
                raise RunError(self.signature.checks[code - 1])
        for path, index in self.signature.writebacks:
            np.copyto(at_path(values, path), results[index])
        return unflatten(self.signature.out_tree, results)


_SCALAR_DTYPES = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float64)}


def host_input(value, spec) -> np.ndarray:
    if isinstance(spec, ScalarSpec):
        try:
            return np.asarray(value, dtype=_SCALAR_DTYPES[spec.pytype])
        except OverflowError:
            raise ArgumentError(f"Python integer {value} does not fit in int64") from None
    arr = np.asarray(value)
    if not arr.flags.c_contiguous or arr.dtype.byteorder not in "=|":
        arr = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("="))
    return arr


def check_argument(name: str, value, spec) -> None:
    if isinstance(spec, TreeSpec):
        keys = tuple(value) if isinstance(value, dict) else tuple(range(len(value))) if isinstance(value, (tuple, list)) else None
        if not isinstance(value, spec.kind) or keys != spec.keys:
            raise ArgumentError(f"argument {name!r}: expected {spec}, got a {type(value).__name__} of another structure")
        for k, c in zip(spec.keys, spec.children):
            check_argument(f"{name}[{k!r}]", value[k], c)
    elif isinstance(spec, Template):
        arr = value if isinstance(value, (np.ndarray, np.generic)) else None
        if arr is None or arr.shape != spec.shape or arr.dtype.newbyteorder("=") != spec.dtype:
            got = f"{arr.dtype}{list(arr.shape)}" if arr is not None else type(value).__name__
            raise ArgumentError(f"argument {name!r}: expected an array {spec}, got {got}")
    elif isinstance(spec, ScalarSpec):
        if type(value) is not spec.pytype:
            raise ArgumentError(f"argument {name!r}: expected a Python {spec.pytype.__name__}, got {type(value).__name__}")
    elif isinstance(spec, StaticSpec) and value != spec.value:
        raise ArgumentError(f"argument {name!r} was compiled as the static value {spec.value!r}, got {value!r}")
