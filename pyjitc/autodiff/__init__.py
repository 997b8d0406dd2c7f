"""autodiff: reverse-mode gradients of pyjitc functions, computed on the typed IR (reverse.py,
one VJP rule per primitive in rules.py) and compiled like any @jit function (api.py)."""
from .api import GradFunction, VJPFunction, grad, value_and_grad, vjp

__all__ = ["GradFunction", "VJPFunction", "grad", "value_and_grad", "vjp"]
