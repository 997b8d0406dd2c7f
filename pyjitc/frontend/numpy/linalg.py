"""linalg: np.linalg.solve, inv, det, slogdet and cholesky (blocked algorithms in linalg_blocked.py:
scalar loops that run as native loops for the blocks, matrix products between them; IREE has no
StableHLO cholesky, triangular_solve or LU on the CPU backend), and norm.

Each is one registry entry like any other NumPy function. LU is LAPACK's getrf: partial pivoting
(the first row with the largest |value|), by blocks of columns; solve eliminates on [A | B] and
back-substitutes by blocks; cholesky is right-looking by blocks on the lower triangle.
All of them work on stacks of matrices (leading batch axes), as NumPy's do, and report NumPy's
LinAlgError ("Singular matrix", "Matrix is not positive definite") as a located RunError."""
from __future__ import annotations

import numpy as np

from ...errors import NotSupportedError, ShapeError
from ...ir.types import is_complex, is_float
from ..registry import FUNCTIONS, register
from ..values import Traced
from . import linalg_blocked as blocked
from .shapes import reshape, transpose

F = FUNCTIONS


def _where(em, c, a, b):
    return F["numpy.where"](em, c, a, b)


def _linalg_dtype(name, *xs) -> np.dtype:
    """NumPy's linalg result dtype: integers and bools compute in float64; float16 is refused."""
    for x in xs:
        if x.dtype == np.float16:
            raise ShapeError(f"{name}: array type float16 is unsupported in linalg")
    dt = np.result_type(*[x.dtype for x in xs])
    return dt if dt.kind in "fc" else np.dtype(np.float64)


def _square(em, a, name) -> Traced:
    a = em.asarray(a)
    if a.ndim < 2:
        raise ShapeError(f"{name}: {a.ndim}-dimensional array given. Array must be at least two-dimensional")
    if a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{name}: Last 2 dimensions of the array must be square")
    return a


def _diag(em, x) -> Traced:
    return F["numpy.diagonal"](em, x, 0, -2, -1)


def _stacked(em, x: Traced) -> Traced:
    """x (..., n, m) as one stack (B, n, m): the blocked algorithms work on 3-d arrays."""
    return em.emit("reshape", x, shape=(int(np.prod(x.shape[:-2], dtype=np.int64)),) + x.shape[-2:])


def _check_singular(em, u_diag):
    em.check(F["numpy.any"](em, F["numpy.equal"](em, u_diag, 0)), "LinAlgError: Singular matrix")


@register("numpy.linalg.solve", complex_ok=True,
          note="float32/64 (integers as float64); stacks of matrices; LU with partial pivoting "
               "in a run-time loop; a singular matrix raises RunError (a LinAlgError); complex as the real "
               "system [[Re a, -Im a], [Im a, Re a]] of twice the size")
def solve(em, a, b):
    a = _square(em, a, "solve")
    b = em.asarray(b)
    dt = _linalg_dtype("solve", a, b)
    n = a.shape[-1]
    vector = b.ndim == 1
    bm = reshape(em, b, (n, 1)) if vector else b
    if bm.ndim < 2 or bm.shape[-2] != n:
        raise ShapeError(f"solve: b of shape {b.shape} does not match a of shape {a.shape}")
    try:
        batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    except ValueError:
        raise ShapeError(f"solve: batch shapes of a {a.shape} and b {b.shape} don't broadcast") from None
    k = bm.shape[-1]
    out_shape = batch + (n, k)
    a_full = em.broadcast(em.cast(a, dt), batch + (n, n))
    b_full = em.broadcast(em.cast(bm, dt), out_shape)
    if 0 in out_shape or n == 0:
        x = em.full(0, dt, out_shape)
    elif dt.kind == "c":
        x = _complex_solve(em, a_full, b_full)
    else:
        # one right-hand side travels with a zero column: IREE 3.13 failed to compile the
        # single-column module ("LLVM Translation failed for operation: unrealized_conversion_cast")
        pad = [em.full(0, dt, batch + (n, 1))] if k == 1 else []
        aug = _stacked(em, F["numpy.concatenate"](em, [a_full, b_full, *pad], axis=-1))
        rows_u, diag, _ = blocked.lu(em, aug, n)
        _check_singular(em, diag)
        x = blocked.back_substitute(em, rows_u, n)
        x = em.emit("reshape", em.emit("slice", x, start=(0, 0, 0), limit=x.shape[:2] + (k,), strides=(1, 1, 1)),
                    shape=out_shape)
    return reshape(em, x, batch + (n,)) if vector else x


def _complex_solve(em, a, b):
    """a x = b for complex a (..., n, n) and b (..., n, k), as the real system of twice the size
    [[ar, -ai], [ai, ar]] [xr; xi] = [br; bi]: the same singular values (each twice), so the
    same conditioning; singular exactly where a is."""
    cat = lambda xs, axis: F["numpy.concatenate"](em, xs, axis=axis)
    ar, ai, br, bi = (em.emit(part, v) for v in (a, b) for part in ("real", "imag"))
    big = cat([cat([ar, F["numpy.negative"](em, ai)], -1), cat([ai, ar], -1)], -2)
    x = solve(em, big, cat([br, bi], -2))
    n = a.shape[-1]
    return em.emit("complex", _rows(em, x, 0, n), _rows(em, x, n, 2 * n))


def _rows(em, x, lo, hi):
    start, limit = (0,) * x.ndim, x.shape[:-2] + (hi, x.shape[-1])
    return em.emit("slice", x, start=start[:-2] + (lo, 0), limit=limit, strides=(1,) * x.ndim)


@register("numpy.linalg.matrix_power", views=True, note="n known at compile time; NumPy's order of products "
                                            "(squarings by the bits of n); n < 0 through inv")
def matrix_power(em, a, n):
    n = em.static(n, "matrix_power: the exponent")
    if not isinstance(n, (int, np.integer)) or isinstance(n, (bool, np.bool_)):
        raise ShapeError("TypeError: exponent must be an integer")
    a = _square(em, a, "matrix_power")
    mm = F["numpy.matmul"]
    if n == 0:
        return em.broadcast(em.constant(np.eye(a.shape[-1], dtype=a.dtype)), a.shape)
    if n < 0:
        a, n = inv(em, a), -n
    if n == 1:
        return a
    if n == 2:
        return mm(em, a, a)
    if n == 3:
        return mm(em, mm(em, a, a), a)
    z = result = None
    while n > 0:
        z = a if z is None else mm(em, z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else mm(em, result, z)
    return result


@register("numpy.linalg.inv", complex_ok=True, note="as solve(a, identity)")
def inv(em, a):
    a = _square(em, a, "inv")
    dt = _linalg_dtype("inv", a)
    n = a.shape[-1]
    return solve(em, em.cast(a, dt), em.broadcast(em.constant(np.eye(n, dtype=dt)), a.shape))


def _slogdet(em, a, name):
    a = _square(em, a, name)
    dt = _linalg_dtype(name, a)
    n = a.shape[-1]
    batch = a.shape[:-2]
    if n == 0 or 0 in batch:
        return em.full(1, dt, batch), em.full(0, dt, batch)
    _, d, sign = blocked.lu(em, _stacked(em, em.cast(a, dt)), n)
    d, sign = em.emit("reshape", d, shape=batch + (n,)), em.emit("reshape", sign, shape=batch)
    neg = F["numpy.sum"](em, F["numpy.less"](em, d, 0), axis=-1)
    sign = _where(em, F["numpy.equal"](em, F["numpy.remainder"](em, neg, 2), 1), F["numpy.negative"](em, sign), sign)
    singular = F["numpy.any"](em, F["numpy.equal"](em, d, 0), axis=-1)
    sign = _where(em, singular, 0, sign)
    logdet = F["numpy.sum"](em, F["numpy.log"](em, F["numpy.abs"](em, d)), axis=-1)
    return em.cast(sign, dt), em.cast(logdet, dt)


@register("numpy.linalg.slogdet", note="NumPy's named tuple (sign, logabsdet)")
def slogdet(em, a):
    return np.linalg._linalg.SlogdetResult(*_slogdet(em, a, "slogdet"))


@register("numpy.linalg.det", note="sign * exp(log|det|) from the LU factors, as NumPy computes it")
def det(em, a):
    """As NumPy computes it: sign * exp(log|det|) from the LU factors."""
    sign, logdet = _slogdet(em, a, "det")
    return F["numpy.multiply"](em, sign, F["numpy.exp"](em, logdet))


@register("numpy.linalg.cholesky",
          note="reads the lower triangle (the upper one with upper=True), as NumPy; not positive definite raises "
               "RunError (a LinAlgError)")
def cholesky(em, a, upper=False):
    a = _square(em, a, "cholesky")
    dt = _linalg_dtype("cholesky", a)
    upper = em.static(upper, "cholesky: upper")
    n = a.shape[-1]
    batch = a.shape[:-2]
    if n == 0 or 0 in batch:
        return em.full(0, dt, a.shape)
    nb = len(batch)
    x = em.cast(a, dt)
    if upper:   # NumPy then reads the upper triangle: the lower one of the transpose
        x = transpose(em, x, *range(nb), nb + 1, nb)
    low = em.emit("reshape", blocked.cholesky(em, _stacked(em, x)), shape=a.shape)
    not_pd = F["numpy.logical_not"](em, F["numpy.greater"](em, _diag(em, low), 0))
    em.check(F["numpy.any"](em, not_pd), "LinAlgError: Matrix is not positive definite")
    return transpose(em, low, *range(nb), nb + 1, nb) if upper else low


@register("numpy.linalg.norm", complex_ok=True,
          note="NumPy's vector norms (any ord) over one axis and matrix norms (None, 'fro', 1, -1, inf, -inf over "
               "any two axes; 2, -2, 'nuc' of a 2-D real matrix: singular values); of complex values the real "
               "norm of their magnitudes")
def norm(em, x, ord=None, axis=None, keepdims=False):
    ord, keepdims = em.static(ord, "norm: ord"), em.static(keepdims, "norm: keepdims")
    axis = em.static(axis, "norm: axis")
    x = em.asarray(x)
    if not is_float(x.dtype) and not is_complex(x.dtype):
        x = em.cast(x, np.float64)
    nd = x.ndim
    f = FUNCTIONS
    if axis is None:
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            out = f["numpy.sqrt"](em, _sum_of_squares(em, x, None))
            return reshape(em, out, (1,) * nd) if keepdims else out
        axis = tuple(range(nd))
    axes = tuple(int(a) % nd for a in (axis if isinstance(axis, tuple) else (axis,)))
    if len(axes) == 1:
        out = _vector_norm(em, x, ord, axes[0])
    elif len(axes) == 2 and axes[0] != axes[1]:
        out = _matrix_norm(em, x, ord, axes)
    else:
        raise ShapeError("ValueError: Improper number of dimensions to norm.")
    if keepdims:
        out = reshape(em, out, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return out


def _vector_norm(em, x, ord, ax):
    f = FUNCTIONS
    a = f["numpy.absolute"](em, x)   # (of complex values their magnitudes)
    if ord == np.inf:
        return f["numpy.max"](em, a, axis=ax)
    if ord == -np.inf:
        return f["numpy.min"](em, a, axis=ax)
    if ord == 0:
        return em.cast(f["numpy.sum"](em, f["numpy.not_equal"](em, x, 0), axis=ax), a.dtype)
    if ord == 1:
        return f["numpy.sum"](em, a, axis=ax)
    if ord is None or ord == 2:
        return f["numpy.sqrt"](em, _sum_of_squares(em, x, ax))
    if isinstance(ord, str):
        raise ShapeError(f"ValueError: Invalid norm order '{ord}' for vectors")
    p = float(ord)
    powered = f["numpy.power"](em, a, p)
    return f["numpy.power"](em, f["numpy.sum"](em, powered, axis=ax), 1.0 / p)


def _matrix_norm(em, x, ord, axes):
    f = FUNCTIONS
    row, col = axes
    if ord in (2, -2, "nuc"):
        if is_complex(x.dtype):
            raise NotSupportedError(f"linalg.norm: ord={ord!r} of a complex matrix (its singular values) is not "
                                    "supported yet", hint="ord=None ('fro'), 1 or inf are")
        if x.ndim != 2:
            raise NotSupportedError(f"linalg.norm: ord={ord!r} of stacked matrices is not supported",
                                    hint="of a 2-D matrix it is (from the singular values)")
        from .spectral import matrix_norm
        return matrix_norm(em, x if axes == (0, 1) else transpose(em, x), ord)
    a = f["numpy.absolute"](em, x)   # (of complex values their magnitudes)
    if ord in (1, -1):
        pick = "numpy.max" if ord == 1 else "numpy.min"
        return f[pick](em, f["numpy.sum"](em, a, axis=row), axis=col - 1 if col > row else col)
    if ord in (np.inf, -np.inf):
        pick = "numpy.max" if ord == np.inf else "numpy.min"
        return f[pick](em, f["numpy.sum"](em, a, axis=col), axis=row - 1 if row > col else row)
    if ord in (None, "fro", "f"):
        return f["numpy.sqrt"](em, _sum_of_squares(em, x, axes))
    raise ShapeError("ValueError: Invalid norm order for matrices.")


def _sum_of_squares(em, x, axis):
    """sum(|x|**2) over `axis` (None: all), as NumPy's norm: of complex values the squares of their
    real and imaginary parts (x.real . x.real + x.imag . x.imag over the whole array)."""
    f = FUNCTIONS
    if not is_complex(x.dtype):
        return f["numpy.sum"](em, em.emit("mul", x, x), axis=axis)
    re, im = f["numpy.real"](em, x), f["numpy.imag"](em, x)
    if axis is None:
        return em.emit("add", f["numpy.sum"](em, em.emit("mul", re, re)), f["numpy.sum"](em, em.emit("mul", im, im)))
    return f["numpy.sum"](em, em.emit("add", em.emit("mul", re, re), em.emit("mul", im, im)), axis=axis)
