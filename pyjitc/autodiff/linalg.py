"""autodiff.linalg: closed-form VJPs of np.linalg.det, slogdet, cholesky, solve and inv. The
frontend builds them from scalar loops (LU with pivoting, Cholesky-Crout:
frontend/numpy/linalg_blocked.py); the reverse pass could step back through those loops, but it
recomputes every scalar step from checkpoints (a 100x100 slogdet: 0.4 ms forward, 120 s
gradient, 190 s to compile; solve and inv of one 3x3 matrix: a 2.4 MB module, 54 s to compile).
So while a function is traced for autodiff these entries of the registry record their result
as "a custom VJP of the input matrix" (CUSTOM, a table read by reverse.py), and the reverse pass
sends the result's cotangent straight to the inputs:

  log|det A|: A^-T            det A: det(A) A^-T            sign: zero
  X = solve(A, B): Bbar = solve(A^T, Xbar), Abar = -Bbar X^T (real matrices; each summed
      over the stack axes it was broadcast along; complex ones are differentiated through the loops)
  Y = inv(A): Abar = -Y^T Ybar Y^T
  L = cholesky(A), reading A's lower triangle (NumPy's convention): with
  G = L^-T Phi(L^T Lbar) L^-1 (Phi: the lower triangle, its diagonal halved; Murray 2016),
  Abar = G + G^T below the diagonal, G on it, 0 above (upper=True: the transpose).

A^-1 comes from the frontend's own LU (no singular-matrix check: at a singular matrix the
gradients of det and slogdet are inf/NaN) and L^-1 from its triangular inverse; the wrappers call
the registered implementation unchanged, and outside autodiff they do nothing else."""
from __future__ import annotations

import contextvars

import numpy as np

from ..frontend import registry
from ..frontend.numpy import linalg_blocked as blocked
from ..frontend.values import Emitter, Traced
from ..ir.types import is_float
from .rules import Emit, sum_to

# value id -> (kind, the input matrix's Value, extra): set while tracing for autodiff (api.py)
CUSTOM: contextvars.ContextVar = contextvars.ContextVar("pyjitc_custom_vjp", default=None)
F = registry.FUNCTIONS


def _matrix(a) -> Traced | None:
    """The differentiable input matrix, or None (a constant, an integer array, an empty one)."""
    if not isinstance(a, Traced) or not is_float(a.dtype) or a.ndim < 2 or 0 in a.shape:
        return None
    return a


# Each recorder gets the result, the arguments, and `seen`: the IR Values of the Traced
# arguments as the function read them (a view's value, asked for after the call, can be a new
# op placed after the result, which the reverse pass would reach too early: its cotangent lost).

def _record_det(table, em, seen, out, a, *rest, **kw):
    if _matrix(a) is not None:
        table[out.value.id] = ("det", seen[0], None)


def _record_slogdet(table, em, seen, out, a, *rest, **kw):
    if _matrix(a) is not None:
        table[out[0].value.id] = ("zero", seen[0], None)
        table[out[1].value.id] = ("logabsdet", seen[0], None)


def _record_cholesky(table, em, seen, out, a, upper=False, **kw):
    if _matrix(a) is not None:
        table[out.value.id] = ("cholesky", seen[0], bool(em.static(upper, "cholesky: upper")))


def _record_solve(table, em, seen, out, a, b, **kw):
    if _matrix(a) is None or a.dtype != out.dtype or isinstance(b, Traced) and b.dtype != out.dtype:
        return                                   # (a cast operand: through the loops)
    table[out.value.id] = ("solve", seen[0], seen[1])


def _record_inv(table, em, seen, out, a, **kw):
    if _matrix(a) is not None and a.dtype == out.dtype:
        table[out.value.id] = ("inv", seen[0], None)


RECORDERS = {"numpy.linalg.det": _record_det, "numpy.linalg.slogdet": _record_slogdet,
             "numpy.linalg.cholesky": _record_cholesky, "numpy.linalg.solve": _record_solve,
             "numpy.linalg.inv": _record_inv}


def _recording(record):
    """A wrapper of a registry implementation that also records the custom VJP while tracing
    for autodiff; outside autodiff it does nothing else."""
    def wrapper(original):
        if getattr(original, "__pyjitc_custom_vjp__", False):
            return original

        def impl(em, *args, **kwargs):
            table = CUSTOM.get()
            seen = [a.value if isinstance(a, Traced) else None for a in args] if table is not None else None
            out = original(em, *args, **kwargs)
            if table is not None:
                record(table, em, seen, out, *args, **kwargs)
            return out
        impl.__name__, impl.__qualname__, impl.__doc__ = original.__name__, original.__qualname__, original.__doc__
        impl.__module__ = original.__module__
        impl.__pyjitc_custom_vjp__ = True
        return impl
    return wrapper


for _name, _record in RECORDERS.items():
    registry.wrap("function", _name, _recording(_record))


# ---------------------------------------------------------------- the backward rules

def _stack(em, x: Traced) -> Traced:
    """(..., n, n) as (B, n, n): the blocked algorithms work on stacks."""
    b = int(np.prod(x.shape[:-2], dtype=np.int64))
    return em.emit("reshape", x, shape=(b,) + x.shape[-2:])


def _t(em, x: Traced) -> Traced:
    return em.emit("transpose", x, perm=(0, 2, 1))


def _solve(em, a: Traced, b: Traced) -> Traced:
    """A^-1 B for each matrix of the stacks a (B, n, n) and b (B, n, k): LU of [A | B], then back
    substitution (the frontend's solve, without its singular-matrix check)."""
    nb, n, k = b.shape
    # one column travels with a zero one, as solve does (IREE 3.13 failed on one column)
    pad = [em.full(0, a.dtype, (nb, n, 1))] if k == 1 else []
    rows_u, _, _ = blocked.lu(em, F["numpy.concatenate"](em, [a, b, *pad], axis=-1), n)
    x = blocked.back_substitute(em, rows_u, n)
    return em.emit("slice", x, start=(0, 0, 0), limit=(nb, n, k), strides=(1, 1, 1)) if pad else x


def _inverse(em, a: Traced) -> Traced:
    """A^-1 of each matrix of a stack (B, n, n)."""
    return _solve(em, a, em.broadcast(em.constant(np.eye(a.shape[-1], dtype=a.dtype)), a.shape))


def _scale(em, g: Traced, m: Traced) -> Traced:
    """g (B,) times each matrix of m (B, n, n)."""
    return F["numpy.multiply"](em, em.emit("reshape", g, shape=g.shape + (1, 1)), m)


def _cholesky_vjp(em, low: Traced, g: Traced) -> Traced:
    n = low.shape[-1]
    lower = em.constant(np.tril(np.ones((n, n), bool)))
    half = em.constant(np.where(np.eye(n, dtype=bool), 0.5, 1.0).astype(low.dtype))
    mm = F["numpy.matmul"]
    p = F["numpy.where"](em, lower, F["numpy.multiply"](em, mm(em, _t(em, low), g), half), 0)
    inv_t = blocked.upper_inverse(em, _t(em, low))       # L^-T
    gm = mm(em, mm(em, inv_t, p), _t(em, inv_t))
    both = F["numpy.add"](em, gm, _t(em, gm))
    diag = em.constant(np.eye(n, dtype=bool))
    return F["numpy.where"](em, diag, gm, F["numpy.where"](em, lower, both, 0))


def custom_vjp(builder, entry, look, out, g) -> list:
    """(input, cotangent) pairs, IR Values of the reverse pass, for the inputs of a recorded result
    `out` whose cotangent is `g`; `look` gives an input's value in the reverse pass."""
    kind, a, extra = entry
    if kind == "zero":
        return []
    em = Emitter(builder)
    shape = a.type.shape
    A, G, Y = em.wrap(look(a)), em.wrap(g), em.wrap(out)
    mm = F["numpy.matmul"]
    if kind in ("det", "logabsdet"):
        inv_t = _t(em, _inverse(em, _stack(em, A)))
        w = G if kind == "logabsdet" else F["numpy.multiply"](em, G, Y)
        ga = _scale(em, em.emit("reshape", w, shape=(inv_t.shape[0],)), inv_t)
    elif kind == "inv":
        yt = _t(em, _stack(em, Y))
        ga = F["numpy.negative"](em, mm(em, mm(em, yt, _stack(em, G)), yt))
    elif kind == "solve":
        vector = Y.ndim < A.ndim              # b was one vector: X is (..., n)
        n = shape[-1]
        full = Y.shape + (1,) if vector else Y.shape    # (..., n, k)
        y3, g3 = (em.emit("reshape", v, shape=(int(np.prod(full[:-2], dtype=np.int64)),) + full[-2:]) for v in (Y, G))
        a3 = _stack(em, em.broadcast(A, full[:-2] + (n, n)))
        gb = _solve(em, _t(em, a3), g3)
        ga = F["numpy.negative"](em, mm(em, gb, _t(em, y3)))
        # each summed over the stack axes its input was broadcast along (the broadcast's transpose)
        unbroadcast = lambda v, to: sum_to(Emit(builder), v.value, to, tuple(range(v.ndim - len(to), v.ndim)))
        pairs = [(a, unbroadcast(em.emit("reshape", ga, shape=full[:-2] + (n, n)), shape))]
        if extra is not None:
            pairs.append((extra, unbroadcast(em.emit("reshape", gb, shape=Y.shape), extra.type.shape)))
        return pairs
    else:
        low, gl = _stack(em, Y), _stack(em, G)
        if extra:
            low, gl = _t(em, low), _t(em, gl)
        ga = _cholesky_vjp(em, low, gl)
        if extra:
            ga = _t(em, ga)
    return [(a, em.emit("reshape", ga, shape=shape).value)]
