"""target: what IREE compiles for (a target backend and its CPU or chip) and the flags that
says; plain data, so choosing a target loads no IREE."""
from __future__ import annotations

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
LLVM_CPU_SPEED_FLAGS = ("--iree-llvmcpu-vector-pproc-strategy=peel",)

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
        elif self.backend == "rocm":
            flags.append(f"--iree-rocm-target={'gfx942' if self.cpu == 'host' else self.cpu}")
        elif self.cpu != "host" and self.backend in GPU_TARGET_FLAGS:
            flags.append(f"{GPU_TARGET_FLAGS[self.backend]}={self.cpu}")
        return flags


GPU_TARGET_FLAGS = {"cuda": "--iree-cuda-target", "vulkan-spirv": "--iree-vulkan-target",
                    "metal-spirv": "--iree-metal-target"}
