"""target: what IREE compiles for (a target backend and its CPU or chip) and the flags that
says; plain data, so choosing a target loads no IREE."""
from __future__ import annotations

import functools
import platform
from dataclasses import dataclass

from ..errors import ArgumentError

# Flags chosen on purpose:
#  - f64/i64 stay 64-bit: IREE would otherwise be free to demote them, and NumPy doesn't.
#  - llvm-cpu tuned for the host CPU by default (a cross-compile names its CPU instead).
#  - no indirect command buffers: with them, IREE 3.13 fails at run time ("indirect buffer
#    reference slot 0 is out range") on loops that slice at a computed run-time index.
SEMANTIC_FLAGS = (
    "--iree-input-demote-f64-to-f32=false",
    "--iree-input-demote-i64-to-i32=false",
    "--iree-hal-indirect-command-buffers=false",
)
# Chosen for speed (measured with bench/bench_suite.py, same run, same machine): peeling instead of
# masking the leftover vector iterations. IREE's default (masking) made a reduction over a short
# innermost axis slow: softmax over f32[1000,1000,5] 16.9 ms -> 9.0 ms, the MLP 1.03 -> 0.83 ms,
# nothing slower.
# Float reductions reassociated: IREE otherwise adds the elements one after another (a chain of
# scalar `vaddsd`, ~1.2 ns per element); reassociated, it keeps vector partial sums, as NumPy's
# pairwise summation does (and comes closer to NumPy's sum: the tests' reduction tolerance allows
# any order). Measured side by side in one process (loaded machine): sum of f64[1e6] 1.83 -> 0.96
# ms, f32[1e6] 1.04 -> 0.26 ms, mean and var 6.5 -> 2.6 ms, a masked mean 1.8 -> 0.54 ms, a dot
# product 3.4 -> 2.4 ms; row and column sums and softmax within noise.
LLVM_CPU_SPEED_FLAGS = ("--iree-llvmcpu-vector-pproc-strategy=peel", "--iree-llvmcpu-reassociate-fp-reductions=true")
# Peeling gives float64 matmuls of 32x32 and up vector.contract ops of 32 KiB, which IREE 3.13
# refuses ("One or more operations with large vector sizes"): every such `A @ B` was a
# CompileError. The check is only a guard; without it the same code runs 1024^2 f64 in about
# NumPy's time (20 ms here).
LLVM_CPU_COMPILE_FLAGS = ("--iree-llvmcpu-fail-on-large-vector=false",)
# The alignment IREE's CPU code may assume of a buffer it is given (it marks every binding's
# pointer `align N`); 64 by default, and NumPy allocates large arrays 16 bytes past a page, so
# every large argument was copied before the call. Compiled for 8, the code uses unaligned vector
# loads (no slower on aligned data here) and NumPy's own arrays are read in place: x + y on
# f64[1e6] 1.0 -> 0.35 ms (two 8 MB copies were 0.5-0.8 ms of it). Imported with 64 and run on
# 16-aligned memory, IREE 3.13's code crashes (aligned AVX-512 loads), so the alignment a .vmfb
# assumes travels in its signature (Signature.input_alignment; files without it: 64).
LLVM_CPU_INPUT_ALIGNMENT = 8
# complex128 elements are 16 bytes, and IREE 3.13's code moves them with aligned 16-byte vector
# instructions whatever the flag says: a complex128 transpose whose result IREE placed 8 bytes into
# a buffer crashed the process (a Mandelbrot with shrinking arrays; tests/test_complex.py). Modules
# holding 16-byte elements are compiled for 16 (NumPy aligns its allocations to 16), and their
# signature asks for 16-aligned inputs.
WIDE_ELEMENT_BYTES = 16
DEFAULT_INPUT_ALIGNMENT = 64

# Flags that follow the ops a module contains (module_flags). Data tiling (operands packed into
# tiles, a microkernel multiplying them) wins on matrix-matrix products and loses on
# matrix-vector ones, where packing the matrix costs more than the product:
# see bench/bench_contractions.py and README "Performance and caches".
# Measured one flag set against the other in one process (quiet 2-core AMD EPYC with AVX2, best of
# 15): float32 products gain from free sides of 150 up (150^3 0.20 -> 0.17 ms, 300^3 0.61 -> 0.46,
# 1000x100x1000 2.47 -> 1.13) and lose below 128 (1000x64x64 0.10 -> 0.21, 2000x80x80 0.18 ->
# 0.25); float64 products lost at every size tried (400x420x410 2.07 -> 2.23 ms, 1024^3 27.5 ->
# 30.8, 500x2000x500 16.1 -> 49.2), and other element types were not measured: both go without.
DATA_TILING_FLAGS = ("--iree-opt-data-tiling", "--iree-llvmcpu-enable-ukernels=mmt4d")
DATA_TILING_MIN_DIM = 128    # both free sides of every contraction at least this long
DATA_TILING_DTYPES = ("float32",)


@dataclass(frozen=True)
class Contraction:
    """What flags care about in one dot_general: its batch size, free sizes (rows of the
    left operand, columns of the right) and contracted length."""
    batch: int
    m: int
    n: int
    k: int
    dtype: str = "float32"   # the element type multiplied

TARGET_DRIVERS = {  # compile target backend -> runtime driver that runs it
    "llvm-cpu": "local-task",
    "vmvx": "local-task",
    "cuda": "cuda",
    "vulkan-spirv": "vulkan",
    "rocm": "hip",
    "metal-spirv": "metal",
}


@dataclass(frozen=True)
class Target:
    backend: str = "llvm-cpu"
    cpu: str = "host"

    def __post_init__(self):
        if self.backend not in TARGET_DRIVERS:
            raise ArgumentError(f"unknown target {self.backend!r}; choose one of {', '.join(TARGET_DRIVERS)}")

    def flags(self) -> list[str]:
        """`cpu`: the llvm-cpu CPU (`host`, `generic`, `znver4`, ...) or the GPU chip (`sm_90`,
        `gfx942`, a Vulkan/Metal target name); `host` means IREE's default for GPUs."""
        flags = list(SEMANTIC_FLAGS)
        if self.backend == "llvm-cpu":
            flags.append(f"--iree-llvmcpu-target-cpu={self.cpu}")
            flags.extend(LLVM_CPU_SPEED_FLAGS)
            flags.extend(LLVM_CPU_COMPILE_FLAGS)
            flags.append(f"--iree-stream-resource-min-offset-alignment={LLVM_CPU_INPUT_ALIGNMENT}")
        elif self.backend == "rocm":
            flags.append(f"--iree-rocm-target={'gfx942' if self.cpu == 'host' else self.cpu}")
        elif self.cpu != "host" and self.backend in GPU_TARGET_FLAGS:
            flags.append(f"{GPU_TARGET_FLAGS[self.backend]}={self.cpu}")
        return flags

    @property
    def gpu(self) -> bool:
        """Whether the target is a GPU (its reductions are trees of partial sums, not a CPU's
        sequential lanes)."""
        return self.backend in ("cuda", "vulkan-spirv", "rocm", "metal-spirv")

    def input_alignment(self, widest_element: int = 8) -> int:
        """Bytes of alignment the compiled code assumes of the buffers it is given, for a module
        whose widest element has `widest_element` bytes."""
        if self.backend != "llvm-cpu":
            return DEFAULT_INPUT_ALIGNMENT
        return max(LLVM_CPU_INPUT_ALIGNMENT, min(widest_element, WIDE_ELEMENT_BYTES))


# LLVM's loop unrolling for modules holding native loops (lowering/scalar_loop.py): IREE leaves it
# off (its dispatches are vectorised loop nests already); a scalar loop's body is a few
# instructions, and unrolled its counter and branch are paid once per several steps. Measured
# side by side (bench/bench_scalar_loops.py cases): matmul as three loops 50^3 2.2x -> 1.5x numba's
# time, the other loops within noise. LLVM's loop vectorizer too: the element loops of a native
# loop's array work (scalar_arrays.py: a reduction's float adds may reassociate, as NumPy's
# pairwise sums differ from a running sum anyway) become SIMD loops. Measured side by side (one
# process, best of 7): a radial histogram's masked means over 1e5 elements per bin 29.6 -> 15.2
# ms; a vertical-advection sweep, Gram-Schmidt, Nussinov, CRC-16, Deriche, CSR products within
# noise (0.93-1.09x).
NATIVE_LOOP_FLAGS = ("--iree-llvmcpu-loop-unrolling=true", "--iree-llvmcpu-loop-vectorization=true")


def module_flags(target: Target, contractions, native_loops: bool = False, widest_element: int = 8,
                 text: str = "") -> list[str]:
    """Flags for one module beyond `target.flags()`, from the contractions it holds: data tiling
    when every one multiplies float32 matrices whose free sides are all long (a module holding a
    matrix-vector product too goes without: packing its matrix would cost more than the gemm
    gains); loop unrolling when it holds native loops; a larger buffer alignment when it holds
    16-byte elements (IREE takes the last of a repeated flag); no FMA where the module (its MLIR
    `text`) holds none of FMA_OPS and the target is this machine's CPU."""
    contractions = list(contractions)
    flags = []
    if target.backend == "llvm-cpu" and target.cpu == "host" and text and not contractions \
            and not any(op in text for op in FMA_OPS):
        flags += _no_fma_flags()
    if target.input_alignment(widest_element) != target.input_alignment():
        flags.append(f"--iree-stream-resource-min-offset-alignment={target.input_alignment(widest_element)}")
    if target.backend == "llvm-cpu" and contractions and all(
            min(c.m, c.n) >= DATA_TILING_MIN_DIM and c.dtype in DATA_TILING_DTYPES for c in contractions):
        flags += DATA_TILING_FLAGS
    if target.backend == "llvm-cpu" and native_loops:
        flags += NATIVE_LOOP_FLAGS
    return flags


# Fused multiply-add: IREE's CPU pipeline marks every float multiply and add `contract`
# (AddFastMathFlags, no option), so LLVM fuses `a * b + c` into one FMA, rounded once where NumPy
# rounds the product too: `y - x * x` with y = x * x made outside gave the product's rounding error
# instead of 0 (its sqrt NaN), `a * b - c * d == 0` was False for 1301 of 2000 collinear triples,
# a one-pole filter's output drifted by an ulp per step (probes AL, AM, AN). A module that gains
# nothing from FMA (no contraction, convolution or transcendental: IREE writes exp, log, sin, tanh
# as polynomials in FMAs, 3.4x slower without it) is compiled for the host's x86-64 level without
# the FMA feature, with NumPy's two roundings. Elsewhere FMA stays (documented: README "Numerical
# agreement"); so it does for complex numbers, whose multiply NumPy's own loops compute with FMA on
# this CPU (without it an escape-time Mandelbrot parted from NumPy's at chaotic points).
FMA_OPS = ("stablehlo.dot", "stablehlo.convolution", "stablehlo.exponential", "stablehlo.log", "stablehlo.sine",
           "stablehlo.cosine", "stablehlo.tan", "stablehlo.tanh", "stablehlo.power", "stablehlo.atan2",
           "stablehlo.logistic", "stablehlo.cbrt", "stablehlo.rsqrt", "stablehlo.erf", "chlo.", "math.exp",
           "math.log", "math.sin", "math.cos", "math.tan", "math.atan", "math.pow", "math.erf", "math.cbrt",
           "math.rsqrt", "math.fma", "complex<")
X86_64_V3 = {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}


@functools.lru_cache(maxsize=None)
def _no_fma_flags() -> tuple[str, ...]:
    """The flags that compile for this machine without FMA: its x86-64-v3 level minus the FMA
    feature, where the host has that level (Linux x86-64); else none (FMA stays)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return ()
    try:
        with open("/proc/cpuinfo") as f:
            line = next((ln for ln in f if ln.startswith("flags")), "")
    except OSError:
        return ()
    if not X86_64_V3 <= set(line.split(":", 1)[-1].split()):
        return ()
    return ("--iree-llvmcpu-target-cpu=x86-64-v3", "--iree-llvmcpu-target-cpu-features=-fma")


GPU_TARGET_FLAGS = {"cuda": "--iree-cuda-target", "vulkan-spirv": "--iree-vulkan-target",
                    "metal-spirv": "--iree-metal-target"}
