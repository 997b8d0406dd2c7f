"""spectral: np.linalg's functions of singular values and symmetric eigenvalues, from the Jacobi
methods in jacobi.py (compiled from their Python source like user code; native loops on the CPU):
svd with compute_uv=False and svdvals, eigvalsh, norm with ord 2 / -2 / 'nuc' of matrices, cond,
matrix_rank, pinv and lstsq; and qr, from Householder reflectors chosen as LAPACK chooses them.

Singular vectors and eigenvectors are refused: their signs (and, for repeated values, their
basis) are whatever LAPACK's algorithm gives, which no other algorithm reproduces; pinv and lstsq
use them only in products that do not depend on those choices. 2-D matrices only."""
from __future__ import annotations

import numpy as np

from ...errors import NotSupportedError, ShapeError
from ..registry import FUNCTIONS, register
from ..values import Traced
from . import jacobi

F = FUNCTIONS


def _compile_helper(em, fn, *args):
    """fn(*args) compiled from its Python source into the current program, as a user's helper
    (through the interpreter's own call, em.call_function)."""
    return em.call_function(fn, f"pyjitc's {fn.__name__}", list(args), {})


def _matrix(em, a, name) -> Traced:
    a = em.asarray(a)
    if a.ndim != 2:
        raise NotSupportedError(f"{name}: a 2-D matrix is supported (stacks of matrices are not yet)")
    if a.dtype == np.float16:
        raise ShapeError(f"{name}: array type float16 is unsupported in linalg")
    if a.dtype.kind == "c":
        raise NotSupportedError(f"{name} of a complex matrix is not supported")
    return em.cast(a, a.dtype if a.dtype.kind == "f" else np.float64)


def _limits(dtype):
    info = np.finfo(dtype)
    return float(info.eps), float(info.tiny) * 1e3


def _svd_parts(em, a):
    """(W, V, transposed) with a (or a.T when it is wide) = W V^T, W's columns orthogonal: the
    singular values are W's column norms."""
    m, n = a.shape
    wide = m < n
    x = F["numpy.transpose"](em, a) if wide else a
    eps, tiny = _limits(a.dtype)
    W, V = _compile_helper(em, jacobi.one_sided_svd, x, eps, tiny)
    return W, V, wide


def _column_norms(em, W):
    return F["numpy.sqrt"](em, F["numpy.sum"](em, F["numpy.multiply"](em, W, W), axis=0))


def singular_values(em, a) -> Traced:
    """a's singular values, descending."""
    if 0 in a.shape:
        return em.asarray(np.zeros((0,), a.dtype))
    W, _, _ = _svd_parts(em, a)
    return _descending(em, _column_norms(em, W))


def _descending(em, s):
    return F["numpy.flip"](em, F["numpy.sort"](em, s))


@register("numpy.linalg.svd", note="compute_uv=False only: the singular values (one-sided Jacobi, spectral.py); "
                                   "singular vectors' signs are LAPACK's choice")
def svd(em, a, full_matrices=True, compute_uv=True, hermitian=False):
    if em.static(compute_uv, "svd: compute_uv"):
        raise NotSupportedError("np.linalg.svd with compute_uv=True: the signs of singular vectors are whatever "
                                "LAPACK's algorithm picks, which pyjitc can't reproduce",
                                hint="use np.linalg.svd(a, compute_uv=False) for the singular values; pinv, lstsq, "
                                     "norm(a, 2), cond and matrix_rank are supported")
    return singular_values(em, _matrix(em, a, "svd"))


@register("numpy.linalg.eigh", note="refused with the reason: eigenvectors' signs are LAPACK's choice "
                                    "(np.linalg.eigvalsh gives the eigenvalues)")
def eigh(em, a, UPLO="L"):
    raise NotSupportedError("np.linalg.eigh: the signs of eigenvectors (and, for repeated eigenvalues, the vectors "
                            "themselves) are whatever LAPACK's algorithm picks, which pyjitc can't reproduce",
                            hint="use np.linalg.eigvalsh(a) for the eigenvalues, or compute the vectors outside "
                                 "the @jit function")


@register("numpy.linalg.eig", note="refused with the reason (general eigenproblems: not implemented)")
def eig(em, a):
    raise NotSupportedError("np.linalg.eig (eigenvalues and vectors of a general matrix) is not implemented; its "
                            "vectors' signs are also LAPACK's choice",
                            hint="for a symmetric matrix use np.linalg.eigvalsh(a); else call it outside @jit")


@register("numpy.linalg.eigvals", note="refused with the reason (general eigenproblems: not implemented)")
def eigvals(em, a):
    raise NotSupportedError("np.linalg.eigvals of a general matrix is not implemented",
                            hint="for a symmetric matrix use np.linalg.eigvalsh(a); else call it outside @jit")


@register("numpy.linalg.svdvals", note="one-sided Jacobi (spectral.py)")
def svdvals(em, x):
    return singular_values(em, _matrix(em, x, "svdvals"))


def _no_derivative(em, name: str):
    """Under pyjitc.grad: refused at the call, the user's line (the reverse pass through the
    Jacobi sweeps failed in IREE for eigvalsh; qr's Householder steps read a float's bits)."""
    if em.differentiable:
        raise NotSupportedError(f"autodiff: np.linalg.{name} has no derivative rule",
                                hint="differentiate a loss that avoids it, or compute it outside pyjitc.grad")


@register("numpy.linalg.eigvalsh", note="cyclic Jacobi on the triangle UPLO names (spectral.py); ascending")
def eigvalsh(em, a, UPLO="L"):
    _no_derivative(em, "eigvalsh")
    a = _matrix(em, a, "eigvalsh")
    if a.shape[0] != a.shape[1]:
        raise ShapeError("eigvalsh: Last 2 dimensions of the array must be square")
    uplo = em.static(UPLO, "eigvalsh: UPLO")
    if uplo not in ("L", "U"):
        raise ShapeError("eigvalsh: UPLO argument must be 'L' or 'U'")
    tri = F["numpy.tril"](em, a) if uplo == "L" else F["numpy.triu"](em, a)
    strict = F["numpy.tril"](em, a, -1) if uplo == "L" else F["numpy.triu"](em, a, 1)
    sym = F["numpy.add"](em, tri, F["numpy.transpose"](em, strict))
    if a.shape[0] == 0:
        return em.asarray(np.zeros((0,), a.dtype))
    eps, tiny = _limits(a.dtype)
    return F["numpy.sort"](em, _compile_helper(em, jacobi.symmetric_eigenvalues, sym, eps, tiny))


def matrix_norm(em, a, ord):
    """norm(a, 2 / -2 / 'nuc') of a matrix (linalg.norm's other orders stay there)."""
    s = singular_values(em, _matrix(em, a, "norm"))
    if ord == 2:
        return F["numpy.max"](em, s)
    if ord == -2:
        return F["numpy.min"](em, s)
    return F["numpy.sum"](em, s)


@register("numpy.linalg.cond", note="p None/2/-2 (singular values); other p as NumPy, by norm(a) * norm(inv(a))")
def cond(em, x, p=None):
    p = em.static(p, "cond: p")
    a = _matrix(em, x, "cond")
    if p in (None, 2, -2):
        s = singular_values(em, a)
        big, small = F["numpy.max"](em, s), F["numpy.min"](em, s)
        return F["numpy.divide"](em, big, small) if p != -2 else F["numpy.divide"](em, small, big)
    if a.shape[0] != a.shape[1]:
        raise ShapeError("cond: Last 2 dimensions of the array must be square")
    return F["numpy.multiply"](em, F["numpy.linalg.norm"](em, a, p), F["numpy.linalg.norm"](em, F["numpy.linalg.inv"](em, a), p))


@register("numpy.linalg.matrix_rank", note="singular values above S.max() * max(M, N) * eps (or tol / rtol)")
def matrix_rank(em, A, tol=None, hermitian=False, *, rtol=None):
    a = em.asarray(A)
    if a.ndim < 2:   # NumPy: int(not all(A == 0))
        nonzero = em.cast(F["numpy.any"](em, F["numpy.not_equal"](em, a, 0)), np.int64)
        return Traced(nonzero.value, int, None)
    a = _matrix(em, a, "matrix_rank")
    s = singular_values(em, a)
    if tol is None:
        r = rtol if rtol is not None else max(a.shape) * np.finfo(a.dtype).eps
        tol = F["numpy.multiply"](em, F["numpy.max"](em, s, initial=0.0), r) if s.shape[0] else 0.0
    return F["numpy.count_nonzero"](em, F["numpy.greater"](em, s, tol), axis=-1)


def _pinv_parts(em, a, rcond):
    """(V, scaled W^T) with pinv(a) = V @ diag(1/s) @ U^T = (V / s^2) @ W^T, singular values at or
    below rcond * s.max() left out, as NumPy's; for a wide a, the transpose's."""
    W, V, wide = _svd_parts(em, a)
    s = _column_norms(em, W)
    cutoff = F["numpy.multiply"](em, F["numpy.max"](em, s, initial=0.0), rcond)
    large = F["numpy.greater"](em, s, cutoff)
    inv2 = F["numpy.where"](em, large, F["numpy.divide"](em, 1.0, F["numpy.where"](em, large, F["numpy.multiply"](em, s, s), 1.0)), 0.0)
    p = F["numpy.matmul"](em, F["numpy.multiply"](em, V, inv2), F["numpy.transpose"](em, W))
    return (F["numpy.transpose"](em, p) if wide else p), s, large


@register("numpy.linalg.pinv", note="V diag(1/s) U^T from the one-sided Jacobi SVD; rcond/rtol as NumPy")
def pinv(em, a, rcond=None, hermitian=False, *, rtol=np._NoValue):
    a = _matrix(em, a, "pinv")
    if rcond is None:
        rcond = rtol if rtol not in (None, np._NoValue) else (max(a.shape) * np.finfo(a.dtype).eps
                                                              if rtol is None else 1e-15)
    if 0 in a.shape:
        return em.asarray(np.zeros(a.shape[::-1], a.dtype))
    return _pinv_parts(em, a, rcond)[0]


@register("numpy.linalg.qr", note="mode 'reduced', 'complete' and 'r': Householder reflectors as LAPACK's dgeqrf "
                                  "(the same signs), Q as dorgqr; 2-D matrices")
def qr(em, a, mode="reduced"):
    _no_derivative(em, "qr")
    mode = em.static(mode, "qr: mode")
    if mode not in ("reduced", "complete", "r"):
        raise NotSupportedError(f"np.linalg.qr with mode={mode!r} is not supported",
                                hint="mode 'reduced', 'complete' or 'r' are")
    a = _matrix(em, a, "qr")
    m, n = a.shape
    k = min(m, n)
    columns = m if mode == "complete" else k
    if 0 in a.shape:
        q, r = np.linalg.qr(np.zeros(a.shape, a.dtype), mode="complete" if mode == "complete" else "reduced")
        q, r = em.asarray(q), em.asarray(r)
    else:
        q, r = _compile_helper(em, jacobi.householder_qr, a, columns)
        r = F["numpy.triu"](em, _corner(em, r, columns, n))
    return r if mode == "r" else np.linalg._linalg.QRResult(q, r)     # NumPy's named tuple (Q, R)


def _corner(em, x, rows, cols):
    if x.shape == (rows, cols):
        return x
    return em.emit("slice", x, start=(0, 0), limit=(rows, cols), strides=(1, 1))


@register("numpy.linalg.lstsq", note="the minimum-norm solution from the one-sided Jacobi SVD, with NumPy's rcond; "
                                     "residuals (empty where the rank is below N or M <= N), rank and singular values")
def lstsq(em, a, b, rcond=None):
    from .. import masked
    a = _matrix(em, a, "lstsq")
    b = em.asarray(b)
    m, n = a.shape
    if b.ndim not in (1, 2) or b.shape[0] != m:
        raise ShapeError("lstsq: Incompatible dimensions")
    if 0 in a.shape:
        raise NotSupportedError("lstsq of an empty matrix is not supported")
    rc = max(m, n) * np.finfo(a.dtype).eps if rcond is None else em.static(rcond, "lstsq: rcond")
    p, s, large = _pinv_parts(em, a, rc)
    x = F["numpy.matmul"](em, p, em.cast(b, a.dtype))
    rank = F["numpy.count_nonzero"](em, large)
    values = _descending(em, s)
    r = F["numpy.subtract"](em, F["numpy.matmul"](em, a, x), b)
    res = F["numpy.sum"](em, F["numpy.multiply"](em, r, r), axis=0)
    res = F["numpy.reshape"](em, res, (1,)) if b.ndim == 1 else res
    rank32 = em.cast(rank, np.int32)
    if m <= n:
        return x, em.asarray(np.zeros((0,), a.dtype)), rank32, values
    full = F["numpy.equal"](em, rank, n)
    flags = F["numpy.broadcast_to"](em, full, res.shape)
    residuals = masked.Masked(Traced(res.value, None, None), 0, ("flags", flags), ("lstsq", id(flags)), None)
    return x, residuals, rank32, values
