"""iree: the only module that talks to the IREE compiler and runtime (imported on first use, by
stages.py and api.devices: importing pyjitc loads no IREE). StableHLO text -> .vmfb bytes
(compile), and .vmfb bytes -> a callable executable (load/invoke). Targets and their flags are
in target.py. The compiler is imported only when something is compiled, so loading and calling a
.vmfb (pyjitc.load) needs iree-base-runtime alone, as on a deployment machine."""
from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import threading

import numpy as np
import iree.runtime as ireert
from iree.runtime.dtypes import map_dtype_to_hal_element_type

from ..errors import CompileError
from .target import Target
from .vm_refs import separate_repeated_refs

def compile_to_stage(text: str, target: Target, stage: str) -> str:
    """The module after one of IREE's phases (`input`, `abi`, `flow`, `stream`, `hal`...)."""
    import iree.compiler as ireec
    try:
        out = ireec.compile_str(text, target_backends=[target.backend], input_type="stablehlo",
                                extra_args=target.flags() + [f"--compile-to={stage}"])
    except ireec.CompilerToolError as e:
        raise CompileError(f"IREE could not take the module to its {stage!r} stage:\n{e}") from None
    return out.decode() if isinstance(out, bytes) else out


def reflected(vmfb: bytes, key: str) -> list[str]:
    """The `key` entry of each exported function's reflection metadata, in export order."""
    instance = ireert.VmInstance()
    module = ireert.VmModule.copy_buffer(instance, vmfb)
    out = []
    for name in module.function_names:
        fn = module.lookup_function(name)
        value = (fn.reflection or {}).get(key) if fn is not None else None
        if value is not None:
            out.append(value)
    return out


def compiler_version() -> str:
    from importlib.metadata import version
    return version("iree-base-compiler")


# IREE's embedded ELF linker has no libm: float64 sin/cos/tan/tanh/atan2 are left as undefined
# symbols. Linking with the system linker instead resolves them from the host's libm; the
# .vmfb then holds a host shared library (fine for the JIT, less portable for AOT files).
SYSTEM_LINK_FLAG = "--iree-llvmcpu-link-embedded=false"
# IREE's compile-time evaluation of constant expressions (const-eval) builds its own executable
# with the embedded linker, whatever the flags say, so a constant float64 sin in a loop still
# failed ("iree-lld: undefined symbol: sin", IREE 3.13, found by the statement fuzzer). Modules
# that need libm go without const-eval: pyjitc folds known values with NumPy before IREE sees them.
LIBM_FLAGS = (SYSTEM_LINK_FLAG, "--iree-opt-const-eval=false")
# Ops known to leave a libm symbol in float64 (fmod, sin, ...): such modules go to the system
# linker at once instead of after a failed embedded link (which costs a whole compile).
_NEEDS_LIBM = re.compile(r"stablehlo\.(remainder|sine|cosine|tan|tanh|atan2)\b[^\n]*f64")


def compile_stablehlo(text: str, target: Target = Target(), extra_flags=()) -> bytes:
    """Compile a StableHLO module to .vmfb bytes. IREE diagnostics come back in a CompileError."""
    import iree.compiler as ireec
    flags = target.flags() + list(extra_flags)
    if (target.backend == "llvm-cpu" and SYSTEM_LINK_FLAG not in flags and shutil.which("ld")
            and _NEEDS_LIBM.search(text)):
        flags += LIBM_FLAGS
    try:
        # two steps, to mend IREE's VM module before it becomes bytecode (vm_refs.py)
        vm = ireec.compile_str(text, target_backends=[target.backend], input_type="stablehlo",
                               extra_args=flags + ["--compile-to=vm"])
        vm = vm.decode() if isinstance(vm, bytes) else vm
        return ireec.compile_str(separate_repeated_refs(vm) or vm, target_backends=[target.backend],
                                 extra_args=flags + ["--compile-from=vm"])
    except ireec.CompilerToolError as e:
        message = str(e)
        if (target.backend == "llvm-cpu" and "undefined symbol" in message and SYSTEM_LINK_FLAG not in flags
                and shutil.which("ld")):
            return compile_stablehlo(text, target, [*extra_flags, *LIBM_FLAGS])
        if target.backend == "cuda" and "missing GPU target" in message:
            raise CompileError(f"IREE {compiler_version()} has no code generation details for the CUDA chip "
                               f"{target.cpu!r}: compile for the newest chip it knows, cpu='sm_89' (IREE ships "
                               "PTX, which the CUDA driver compiles for newer chips such as sm_90 when the "
                               "module is loaded)") from None
        raise CompileError(f"IREE could not compile the module for {target.backend}:\n{message}\n"
                           f"--- StableHLO ---\n{text}") from None


# ---------------------------------------------------------------- runtime

# CPU drivers allocate through IREE's caching allocator: freed buffers of up to 256 MiB (512 MiB
# in all, 64 of them) are kept for the next call instead of going back to the OS. Without it a
# large result's pages are faulted in afresh on every call: softmax on f32[1000,1000,5] after a
# NumPy call took 8.7 ms (4852 page faults per call), 5.3 ms with it (none).
CPU_ALLOCATOR = "caching:device_local=256mib;512mib;64"
# GPU drivers keep every freed buffer (as JAX's allocator keeps the GPU memory it took). With
# IREE's uncached allocator each step of a host loop allocated and freed device memory; on an
# H100 (bench/gpu_check.py, one run each) a 1000-step recurrence took 1975 ms, 150 ms cached,
# floyd_warshall 124 -> 7.2 ms, lu over 20 s -> 0.73 s. The CPU spec above, limited to
# `device_local` heaps, did not help there (3.4 s): CUDA's buffers are not allocated from it.
GPU_ALLOCATOR = "caching"
# PYJITC_ALLOCATOR sets another IREE allocator spec for every driver (`default`: IREE's own,
# uncached).


def _allocators(driver: str):
    spec = os.environ.get("PYJITC_ALLOCATOR",
                          CPU_ALLOCATOR if driver in ("local-sync", "local-task") else GPU_ALLOCATOR)
    return None if spec == "default" else [spec]


def _parse_runtime_flags():
    """IREE runtime flags from PYJITC_RUNTIME_FLAGS (e.g. `--cuda_use_streams=true`), parsed
    once before the first device is made: the drivers read them when they are created."""
    text = os.environ.get("PYJITC_RUNTIME_FLAGS", "").strip()
    if text:
        try:
            ireert.flags.parse_flags(*shlex.split(text))
        except ValueError as exc:
            raise ValueError(f"PYJITC_RUNTIME_FLAGS={text!r}: {exc} (`iree-run-module --help` lists "
                             "IREE's runtime flags)") from None


class _Runtime:
    """One IREE VM instance, device and HAL module per driver, shared by all executables."""

    def __init__(self, driver: str):
        if not _runtimes:
            _parse_runtime_flags()
        self.driver = driver
        self.instance = ireert.VmInstance()
        self.device = ireert.get_driver(driver).create_default_device(allocators=_allocators(driver))
        self.hal_module = ireert.create_hal_module(self.instance, self.device)
        self.allocator = self.device.allocator


_runtimes: dict[str, _Runtime] = {}
_runtimes_lock = threading.Lock()


def runtime(driver: str) -> _Runtime:
    rt = _runtimes.get(driver)
    if rt is None:
        with _runtimes_lock:
            rt = _runtimes.get(driver)
            if rt is None:
                rt = _runtimes[driver] = _Runtime(driver)
    return rt


def available_drivers() -> list[str]:
    return sorted(ireert.query_available_drivers())


def list_devices(driver: str) -> list[dict]:
    try:
        return list(ireert.get_driver(driver).query_available_devices())
    except Exception:  # a driver present in the wheel but with no usable device here
        return []


_HAL_TYPES: dict[np.dtype, object] = {}


def _hal_type(dtype: np.dtype):
    t = _HAL_TYPES.get(dtype)
    if t is None:
        t = _HAL_TYPES[dtype] = map_dtype_to_hal_element_type(np.int8 if dtype == np.bool_ else dtype)
    return t


ZERO_COPY_BYTES = 1 << 16


class _Owner:
    """Keeps IREE's result buffer (and its host mapping) alive for as long as the NumPy array that
    views it: large results are handed over without a copy (host-visible CPU memory only). Passed
    back in as an argument, such an array is recognised and its buffer is used again, uncopied."""
    __slots__ = ("__array_interface__", "_view", "_mapping", "_array", "_runtime")

    def __init__(self, array, view, mapping, runtime):
        self.__array_interface__ = array.__array_interface__
        self._array, self._view, self._mapping, self._runtime = array, view, mapping, runtime


IMPORT_ALIGNMENT = 64    # what IREE's CPU code assumes of a buffer unless compiled for less (target.py)


def _address(a: np.ndarray) -> int:
    return a.ctypes.data    # (a third cheaper than __array_interface__, which builds a dict)


def _as_result_buffer(a: np.ndarray, rt):
    """The IREE buffer view behind `a` when `a` is (a bool/int8 reinterpretation of) a whole
    zero-copy result of this runtime, else None."""
    owner = a.base
    while isinstance(owner, np.ndarray):
        owner = owner.base
    if not isinstance(owner, _Owner) or owner._runtime is not rt:
        return None
    full = owner._array
    if _address(a) != _address(full) or a.shape != full.shape or a.dtype != full.dtype or a.strides != full.strides:
        return None
    return owner._view


# Loading a system-linked executable (float64 sin, fmod: SYSTEM_LINK_FLAG) writes it to
# $TMPDIR/iree_dylib_XXXXXX_mem_.so, opens it and deletes it, but leaves the empty file that
# reserved the name (IREE's dynamic_library_posix.c; iree-org/iree#5855): one per load, for good.
# The name is no longer needed once the context is made, so the load removes what it left.
_PLACEHOLDER = re.compile(r"iree_dylib_[A-Za-z0-9]{6}")


def _dylib_placeholders() -> set[str]:
    folder = os.environ.get("TMPDIR") or "/tmp"
    try:
        names = os.listdir(folder)
    except OSError:
        return set()
    return {os.path.join(folder, n) for n in names if _PLACEHOLDER.fullmatch(n)}


class Executable:
    """A loaded .vmfb: call its exported functions with host arrays, get host arrays back."""

    def __init__(self, vmfb: bytes, driver: str = "local-sync"):
        self.vmfb = vmfb
        self.rt = runtime(driver)
        self.module = ireert.VmModule.copy_buffer(self.rt.instance, vmfb)
        # An IREE VM context is thread-compatible, not thread-safe: one per calling thread (the
        # module and the device are shared), so calls from several threads run at once, safely.
        self._local = threading.local()
        self._local.context = self._new_context()
        self.zero_copy = driver in ("local-sync", "local-task")   # results live in host memory
        self._functions: dict[str, object] = {}

    def _new_context(self):
        if b"system-elf" not in self.vmfb:   # (an embedded-linked module leaves no file behind)
            return ireert.VmContext(self.rt.instance, modules=[self.rt.hal_module, self.module])
        before = _dylib_placeholders()
        context = ireert.VmContext(self.rt.instance, modules=[self.rt.hal_module, self.module])
        for path in _dylib_placeholders() - before:
            with contextlib.suppress(OSError):
                if os.path.getsize(path) == 0:
                    os.remove(path)
        return context

    def function(self, name: str):
        fn = self._functions.get(name)
        if fn is None:
            fn = self.module.lookup_function(name)
            if fn is None:
                raise KeyError(f"the module has no function {name!r}")
            self._functions[name] = fn
        return fn

    def invoke(self, name: str, arrays, result_types, alignment: int = IMPORT_ALIGNMENT) -> list[np.ndarray]:
        """`arrays`: C-contiguous host arrays in the signature's dtypes; `result_types`: (shape, dtype);
        `alignment`: the bytes of alignment the function's code assumes of its inputs."""
        return self.invoker(name, [(a.shape, a.dtype) for a in arrays], result_types, alignment)(arrays)

    def invoker(self, name: str, input_types, result_types, alignment: int = IMPORT_ALIGNMENT):
        """`invoke` for one function, with what does not change between calls worked out once: a
        callable taking the input arrays (`input_types`: their (shape, dtype)), returning the
        result arrays. Small inputs are copied into IREE buffers and small results out of IREE's
        with no other Python work per call."""
        fn = self.function(name)
        rt, local, new_context = self.rt, self._local, self._new_context
        copy_in, device = rt.allocator.allocate_buffer_copy, rt.device
        zero_copy = self.zero_copy
        big_input = ZERO_COPY_BYTES if zero_copy else 1 << 62
        inputs = [(_hal_type(np.dtype(d)), np.dtype(d) == np.bool_) for _, d in input_types]
        symbolic = any(not isinstance(d, int) for shape, _ in (*input_types, *result_types) for d in shape)
        if symbolic:   # sizes known only at run time: each result's shape is read from it
            result_types = [(None, d) for _, d in result_types]
        elif zero_copy and all(0 < _nbytes(t) < ZERO_COPY_BYTES for t in (*input_types, *result_types)):
            return self._staged_invoker(fn, input_types, result_types)
        results = []
        for shape, dtype in result_types:
            raw = np.dtype(np.int8 if dtype == np.bool_ else dtype)
            if shape is None:
                results.append((None, raw, None, dtype == np.bool_, None))
                continue
            count = int(np.prod(shape, dtype=np.int64))
            small = not zero_copy or count * raw.itemsize < ZERO_COPY_BYTES
            results.append((None if len(shape) == 1 else tuple(shape), raw, count, dtype == np.bool_, small))
        n_results = len(results)
        get_view = ireert.HalBufferView
        VariantList = ireert.VmVariantList

        def call(arrays) -> list[np.ndarray]:
            args = VariantList(len(arrays))
            shared = []     # (start, end) of caller memory the call reads in place
            for a, (hal_type, boolean) in zip(arrays, inputs):
                if boolean:
                    a = a.view(np.int8)
                if a.nbytes < big_input:
                    args.push_ref(copy_in(_COPY_MEMORY, _COPY_USAGE, device, a, hal_type))
                else:
                    args.push_ref(self._input(a, shared, alignment))
            rets = VariantList(n_results)
            context = getattr(local, "context", None)
            if context is None:
                context = local.context = new_context()
            context.invoke(fn, args, rets)
            out = []
            for i, (shape, raw, count, boolean, small) in enumerate(results):
                view = rets.get_as_object(i, get_view)
                if not zero_copy:   # a GPU driver: the result is in device memory
                    host = _device_to_host(device, view, raw)
                    out.append(host.view(np.bool_) if boolean else host)
                    continue
                mapping = view.map()
                if count is None:   # a run-time shape
                    shape = tuple(view.shape)
                    count = int(np.prod(shape, dtype=np.int64))
                    small = not zero_copy or count * raw.itemsize < ZERO_COPY_BYTES
                    shape = None if len(shape) == 1 else shape
                if small:   # copied out: cheaper than keeping IREE's buffer alive
                    host = np.frombuffer(mapping, raw, count)
                    host = (host if shape is None else host.reshape(shape)).copy()
                else:
                    host = mapping.asarray(shape or (count,), raw)
                    address = _address(host) if shared else 0
                    if not any(address < end and start < address + host.nbytes for start, end in shared):
                        host = np.asarray(_Owner(host, view, mapping, rt))
                    else:   # IREE handed back an input's memory (an identity or a reshape)
                        host = np.array(host, copy=True)
                out.append(host.view(np.bool_) if boolean else host)
            return out
        return call

    def _staged_invoker(self, fn, input_types, result_types):
        """`invoker` for a call whose inputs and results are all small, on a CPU driver: each
        calling thread keeps one IREE buffer per input, mapped once, and the argument and result
        lists; a call copies the inputs into those buffers and runs. IREE is done with its inputs
        when invoke returns (its CPU drivers finish the call before returning) and small results
        are copied out, so nothing the caller holds refers to these buffers. Halves IREE's part of
        a call: x*2+1 on f32[8] 2.8 -> 1.8 us, allocating the argument and the lists included."""
        local, new_context = threading.local(), self._new_context
        allocator, device = self.rt.allocator, self.rt.device
        results = []
        for shape, dtype in result_types:
            raw = np.dtype(np.int8 if dtype == np.bool_ else dtype)
            results.append((None if len(shape) == 1 else tuple(shape), raw, int(np.prod(shape, dtype=np.int64)),
                            dtype == np.bool_))
        get_view = ireert.HalBufferView

        def per_thread():
            """This thread's context, input buffers (with host views) and argument/result lists."""
            context = getattr(self._local, "context", None) or new_context()
            args, hosts = ireert.VmVariantList(len(input_types)), []
            for shape, dtype in input_types:
                raw = np.dtype(np.int8 if dtype == np.bool_ else dtype)
                view = allocator.allocate_buffer_copy(_COPY_MEMORY, _COPY_USAGE, device, np.zeros(shape, raw),
                                                      _hal_type(raw))
                args.push_ref(view)
                mapping = view.map()
                host = mapping.asarray(tuple(shape), raw)
                hosts.append((host.view(np.bool_) if dtype == np.bool_ else host, mapping))
            state = local.state = (context, args, [h for h, _ in hosts], ireert.VmVariantList(len(result_types)), hosts)
            return state

        def call(arrays) -> list[np.ndarray]:
            state = getattr(local, "state", None) or per_thread()
            context, args, hosts, rets, _ = state
            for host, a in zip(hosts, arrays):
                host[...] = a
            context.invoke(fn, args, rets)
            out = []
            for i, (shape, raw, count, boolean) in enumerate(results):
                host = np.frombuffer(rets.get_as_object(i, get_view).map(), raw, count)
                host = (host if shape is None else host.reshape(shape)).copy()
                out.append(host.view(np.bool_) if boolean else host)
            return out
        return call

    def _input(self, a: np.ndarray, shared: list, alignment: int = IMPORT_ALIGNMENT):
        """An IREE buffer view holding `a`: on CPU drivers, a result of an earlier call is used as
        it is, and a large array at the code's `alignment` is imported without a copy; otherwise copied."""
        rt = self.rt
        if self.zero_copy and a.nbytes >= ZERO_COPY_BYTES:
            view = _as_result_buffer(a, rt)
            address = _address(a)
            if view is None and address % alignment == 0 and a.flags.writeable:   # IREE imports writable memory only
                buffer = rt.allocator.import_host_allocation(
                    a, ireert.MemoryType.DEVICE_LOCAL | ireert.MemoryType.HOST_VISIBLE,
                    ireert.BufferUsage.DEFAULT | ireert.BufferUsage.MAPPING)
                view = ireert.HalBufferView(buffer, a.shape, _hal_type(a.dtype))
            if view is not None:
                shared.append((address, address + a.nbytes))
                return view
        return rt.allocator.allocate_buffer_copy(_COPY_MEMORY, _COPY_USAGE, rt.device, a, _hal_type(a.dtype))


def _device_to_host(device, view, raw: np.dtype) -> np.ndarray:
    """A result of a GPU driver copied to a NumPy array of its shape: IREE's DeviceArray maps a
    host-visible buffer, or copies a device-local one into host memory (CUDA: imported memory)."""
    host = ireert.DeviceArray(device, view).to_host()
    if host.dtype != raw:   # IREE's own element type (i8 for a bool) read as pyjitc's raw dtype
        host = host.view(raw)
    return host if host.flags.owndata else host.copy()


def _nbytes(shape_dtype) -> int:
    shape, dtype = shape_dtype
    return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize


_COPY_MEMORY = ireert.MemoryType.DEVICE_LOCAL
_COPY_USAGE = ireert.BufferUsage.DEFAULT | ireert.BufferUsage.MAPPING
