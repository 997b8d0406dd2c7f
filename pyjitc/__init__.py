"""pyjitc: compile NumPy-style Python functions with IREE, through a typed IR and StableHLO."""
from .api import JitFunction, devices, jit
from .errors import (ArgumentError, CompileError, ForbiddenError, JitError, NotSupportedError, RunError, ShapeError,
                     UnsupportedSyntaxError)
from .stages import Compiled, Library, Lowered, compile_library, load
from .signature import Signature
from .template import Template

__version__ = "0.1.0"
__all__ = ["jit", "Template", "devices", "JitError", "UnsupportedSyntaxError", "ForbiddenError",
           "NotSupportedError", "ShapeError", "ArgumentError", "CompileError", "RunError", "Lowered", "Compiled",
           "JitFunction", "Library", "Signature", "load", "compile_library"]
