"""autodiff: reverse-mode gradients of pyjitc functions, computed on the typed IR (reverse.py,
one VJP rule per primitive in rules.py) and compiled like any @jit function (api.py)."""
from .api import GradFunction, grad, value_and_grad

__all__ = ["GradFunction", "grad", "value_and_grad"]
