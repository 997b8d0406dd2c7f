"""pyjitc: compile NumPy-style Python functions with IREE, through a typed IR and StableHLO."""
from .api import JitFunction, RecompileError, devices, jit, no_recompile
from .autodiff import GradFunction, VJPFunction, grad, value_and_grad, vjp
from .cache import set_cache_dir
from .progress import SlowCompileWarning
from .errors import (ArgumentError, CompileError, ForbiddenError, JitError, NotSupportedError, RunError, ShapeError,
                     UnsupportedSyntaxError)
from .stages import Compiled, Library, Lowered, compile_library, load
from .signature import Signature
from .template import Template

__version__ = "0.1.0"
__all__ = ["jit", "Template", "devices", "JitError", "UnsupportedSyntaxError", "ForbiddenError",
           "NotSupportedError", "ShapeError", "ArgumentError", "CompileError", "RunError", "Lowered", "Compiled",
           "JitFunction", "RecompileError", "no_recompile", "set_cache_dir", "Library", "Signature", "load", "compile_library",
           "SlowCompileWarning", "grad", "value_and_grad", "GradFunction", "vjp", "VJPFunction"]
