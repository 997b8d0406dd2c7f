"""attributes: what `x.attr` and `getattr(x, "attr")` mean in compiled code: array properties and
methods (the registry), members of modules (checked by the policy), attributes of compile-time
Python objects. `compiler` is the FunctionCompiler reading the expression."""
from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import JitError, NotSupportedError
from . import masked, masked_calls, policy, registry, stacks
from .values import Traced, call_known


@dataclass
class BoundMethod:
    """An ndarray method read from an array (`x.sum`), called later with the array first."""
    impl: Any
    target: Traced
    name: str


def attribute(compiler, base, attr: str, shown_base: str, shown: str):
    """`base.attr` (also `getattr(base, "attr")`): array properties and methods, module members
    (checked by the policy), attributes of compile-time Python objects."""
    if isinstance(base, stacks.Stack):
        return stacks.StackMethod(base, attr)
    if isinstance(base, masked.Masked):
        if attr in ("dtype", "ndim"):
            return call_known(compiler.em, registry.PROPERTIES[attr], (base.data,))
        if attr in ("shape", "size"):
            return masked.shape(compiler.em, base) if attr == "shape" else masked.size(compiler.em, base)
        if attr in registry.METHODS:
            return BoundMethod(registry.METHODS[attr], base, attr)
        if attr == "T":    # A[k:, k:].T: the axes swapped, bounds and all
            return masked_calls.call(compiler.em, registry.FUNCTIONS["numpy.transpose"], shown, (base,), {})
        masked.need(base, f".{attr}")
    if isinstance(base, Traced):
        if base.weak in (bool, int, float, complex) and base.ndim == 0 and not hasattr(base.weak, attr):
            # a Python number (an argument, float(...), a loop counter): Python's AttributeError, not
            # NumPy's method (`((y - yhat) ** 2).mean()` of two floats returned a value; probe R)
            err = JitError(f"'{base.weak.__name__}' object has no attribute {attr!r}: {shown_base} is a Python "
                           f"{base.weak.__name__} here, not a NumPy array",
                           hint=f"pass an array, or make one: np.asarray({shown_base}).{attr}")
            err.python = AttributeError(f"'{base.weak.__name__}' object has no attribute {attr!r}")
            raise err
        if base.weak in (bool, int, float, complex) and base.ndim == 0 and attr in ("real", "imag"):
            part = call_known(compiler.em, registry.PROPERTIES[attr], (base,))   # a Python number's part: one too
            kind = {complex: float, bool: int}.get(base.weak, base.weak)
            return Traced(part.value, kind, part.params) if isinstance(part, Traced) else part
        if attr in registry.PROPERTIES:
            return call_known(compiler.em, registry.PROPERTIES[attr], (base,))
        if attr in registry.METHODS:
            return BoundMethod(registry.METHODS[attr], base, attr)
        if attr in policy.FORBIDDEN_METHODS:
            raise policy.not_allowed(f".{attr}()", policy.FORBIDDEN_METHODS[attr])
        raise NotSupportedError(f"the array attribute .{attr} is not supported by pyjitc yet")
    if attr.startswith("__") and not (attr in ("__name__", "__qualname__") and
                                      isinstance(base, (types.ModuleType, types.FunctionType, type))):
        raise NotSupportedError(f"the attribute {attr} is not available inside @jit")
    if isinstance(base, types.ModuleType):
        policy.check_module(base, shown_base)
    try:
        value = getattr(base, attr)
    except AttributeError as e:
        err = JitError(f"{shown_base} has no attribute {attr!r}")
        err.python = e      # a try/except AttributeError in the program catches it (np.histogramdd's)
        raise err from None
    if isinstance(base, types.ModuleType) and base.__name__.split(".")[0] not in policy.ALLOWED_MODULES:
        compiler.em.guards.add(("attr", base, attr, value))
    reason = policy.forbidden_reason(policy.qualified_name(value)) if not isinstance(value, (int, float, str)) else None
    if reason:
        raise policy.not_allowed(shown, reason)
    return compiler.global_value(value, f"the array {shown}")


def getattr_(compiler, shown, args, kwargs):
    """getattr(obj, name[, default]) with a compile-time name: `obj.name`, or the default where
    Python raises AttributeError."""
    if kwargs or not 2 <= len(args) <= 3 or not isinstance(args[1], str):
        raise NotSupportedError(f"{shown}() needs an object and an attribute name known at compile time")
    base, name = args[0], args[1]
    if len(args) == 3:
        probe = base.data if isinstance(base, masked.Masked) else base
        probe = np.empty(0, probe.dtype) if isinstance(probe, Traced) else probe
        if not hasattr(probe, name):
            return args[2]
    return attribute(compiler, base, name, f"{shown}()'s object", f"{shown}(..., {name!r})")
