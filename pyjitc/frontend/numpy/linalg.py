"""linalg: np.linalg.solve, inv, det, slogdet and cholesky, written as run-time loops over the IR's
primitives (IREE has no StableHLO cholesky, triangular_solve or LU on the CPU backend), and norm.

Each is one registry entry like any other NumPy function. LU is LAPACK's unblocked getf2: partial
pivoting (the first row with the largest |value|), a rank-1 update per column; solve eliminates on
[A | B] and back-substitutes; cholesky is the right-looking unblocked potf2 on the lower triangle.
All of them work on stacks of matrices (leading batch axes), as NumPy's do, and report NumPy's
LinAlgError ("Singular matrix", "Matrix is not positive definite") as a located RunError."""
from __future__ import annotations

import numpy as np

from ...errors import NotSupportedError, ShapeError
from ...ir.types import TensorType, is_float
from ..indexing import getitem
from ..registry import FUNCTIONS, register
from ..values import Traced
from .shapes import reshape, transpose

F = FUNCTIONS
INT64 = np.dtype(np.int64)


def fori_loop(em, n: int, init: list[Traced], body) -> list[Traced]:
    """`for i in range(n): vals = body(i, vals)` as one run-time loop (the IR's while op)."""
    b = em.b
    types = [TensorType((), INT64)] + [v.value.type for v in init]
    start = [em.constant(np.int64(0))] + list(init)
    block = b.open_block(types)
    i, *vals = [em.wrap(p) for p in block.params]
    outs = body(i, vals)
    nxt = em.emit("add", i, em.constant(np.int64(1)))
    b.close_block([nxt.value] + [em.cast(o, v.dtype).value for o, v in zip(outs, vals)])
    cond = b.open_block(types)
    b.close_block([em.emit("compare", em.wrap(cond.params[0]), em.constant(np.int64(n)), direction="LT").value])
    results = b.emit("while", *[v.value for v in start], regions=(cond, block))
    return [em.wrap(r) for r in results[1:]]


def _iota(em, shape, dim) -> Traced:
    return em.emit("iota", shape=tuple(shape), dim=dim, dtype=INT64)


def _at(em, x: Traced, axis: int, i: Traced) -> Traced:
    """x's slice at run-time index i along `axis`, keeping the axis (size 1)."""
    zero = em.constant(np.int64(0))
    starts = [i if d == axis else zero for d in range(x.ndim)]
    sizes = tuple(1 if d == axis else s for d, s in enumerate(x.shape))
    return em.emit("dynamic_slice", x, *starts, sizes=sizes)


def _where(em, c, a, b):
    return F["numpy.where"](em, c, a, b)


def _linalg_dtype(name, *xs) -> np.dtype:
    """NumPy's linalg result dtype: integers and bools compute in float64; float16 is refused."""
    for x in xs:
        if x.dtype == np.float16:
            raise ShapeError(f"{name}: array type float16 is unsupported in linalg")
    dt = np.result_type(*[x.dtype for x in xs])
    return dt if dt.kind == "f" else np.dtype(np.float64)


def _square(em, a, name) -> Traced:
    a = em.asarray(a)
    if a.ndim < 2:
        raise ShapeError(f"{name}: {a.ndim}-dimensional array given. Array must be at least two-dimensional")
    if a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{name}: Last 2 dimensions of the array must be square")
    return a


def _diag(em, x) -> Traced:
    return F["numpy.diagonal"](em, x, 0, -2, -1)


def _lu(em, a: Traced, n: int) -> tuple[Traced, Traced]:
    """Gaussian elimination with partial pivoting on the first n columns of a (..., n, m), m >= n:
    (the eliminated matrix, U in its first n columns and L^-1 P B after; the permutation's sign)."""
    batch = a.shape[:-2]
    nb = len(batch)
    row, col = _iota(em, a.shape, nb), _iota(em, a.shape, nb + 1)
    rvec = _iota(em, batch + (n, 1), nb)

    def step(k, vals):
        lu, sign = vals
        colk = _at(em, lu, nb + 1, k)                                       # (..., n, 1)
        mag = _where(em, F["numpy.greater_equal"](em, rvec, k), F["numpy.abs"](em, colk), -1)
        p = reshape(em, F["numpy.argmax"](em, mag, axis=-2), batch + (1, 1))
        is_p = F["numpy.equal"](em, row, p)
        rowk = _at(em, lu, nb, k)                                           # (..., 1, m)
        rowp = (em.emit("take", lu, reshape(em, p, (1,))) if nb == 0 else
                F["numpy.sum"](em, _where(em, is_p, lu, 0), axis=-2, keepdims=True))
        lu = _where(em, F["numpy.equal"](em, row, k), rowp, _where(em, is_p, rowk, lu))
        sign = _where(em, F["numpy.not_equal"](em, reshape(em, p, batch), k), F["numpy.negative"](em, sign), sign)
        pivot = _at(em, rowp, nb + 1, k)                                    # (..., 1, 1)
        zero_pivot = F["numpy.equal"](em, pivot, 0)
        l = F["numpy.true_divide"](em, _at(em, lu, nb + 1, k), _where(em, zero_pivot, 1, pivot))
        below = F["numpy.greater"](em, row, k)
        right = F["numpy.greater"](em, col, k)
        l = _where(em, F["numpy.logical_and"](em, F["numpy.greater"](em, rvec, k),
                                              F["numpy.logical_not"](em, zero_pivot)), l, 0)
        update = F["numpy.subtract"](em, lu, F["numpy.multiply"](em, l, rowp))
        lu = _where(em, F["numpy.logical_and"](em, below, right), update,
                    _where(em, F["numpy.logical_and"](em, below, F["numpy.equal"](em, col, k)), l, lu))
        return [lu, sign]
    sign0 = em.full(1, a.dtype, batch)
    return tuple(fori_loop(em, n, [a, sign0], step))


def _back_substitute(em, lu: Traced, c: Traced, n: int) -> Traced:
    """x with U x = c, U the upper triangle of lu's first n columns, c (..., n, k)."""
    nb = c.ndim - 2
    row = _iota(em, c.shape, nb)

    def step(j, vals):
        (x,) = vals
        k = F["numpy.subtract"](em, n - 1, j)
        ucol = _at(em, lu, nb + 1, k)                                       # (..., n, 1)
        xk = F["numpy.true_divide"](em, _at(em, x, nb, k), _at(em, ucol, nb, k))   # (..., 1, k)
        x = _where(em, F["numpy.equal"](em, row, k), xk,
                   _where(em, F["numpy.less"](em, row, k),
                          F["numpy.subtract"](em, x, F["numpy.multiply"](em, ucol, xk)), x))
        return [x]
    return fori_loop(em, n, [c], step)[0]


def _check_singular(em, u_diag):
    em.check(F["numpy.any"](em, F["numpy.equal"](em, u_diag, 0)), "LinAlgError: Singular matrix")


@register("numpy.linalg.solve", note="float32/64 (integers as float64); stacks of matrices; LU with partial pivoting "
                                       "in a run-time loop; a singular matrix raises RunError (a LinAlgError)")
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
    else:
        aug = F["numpy.concatenate"](em, [a_full, b_full], axis=-1)
        lu, _ = _lu(em, aug, n)
        _check_singular(em, _diag(em, getitem(em, lu, (Ellipsis, slice(0, n)))))
        x = _back_substitute(em, lu, getitem(em, lu, (Ellipsis, slice(n, n + k))), n)
    return reshape(em, x, batch + (n,)) if vector else x


@register("numpy.linalg.inv", note="as solve(a, identity)")
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
    lu, sign = _lu(em, em.cast(a, dt), n)
    d = _diag(em, lu)
    neg = F["numpy.sum"](em, F["numpy.less"](em, d, 0), axis=-1)
    sign = _where(em, F["numpy.equal"](em, F["numpy.remainder"](em, neg, 2), 1), F["numpy.negative"](em, sign), sign)
    singular = F["numpy.any"](em, F["numpy.equal"](em, d, 0), axis=-1)
    sign = _where(em, singular, 0, sign)
    logdet = F["numpy.sum"](em, F["numpy.log"](em, F["numpy.abs"](em, d)), axis=-1)
    return em.cast(sign, dt), em.cast(logdet, dt)


@register("numpy.linalg.slogdet", note="returns a plain (sign, logabsdet) tuple")
def slogdet(em, a):
    return _slogdet(em, a, "slogdet")


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
    col = _iota(em, a.shape, nb + 1)
    rvec = _iota(em, batch + (n, 1), nb)

    def step(k, vals):
        rest, low = vals
        colk = _at(em, rest, nb + 1, k)                                     # (..., n, 1)
        d = F["numpy.sqrt"](em, _at(em, colk, nb, k))                       # (..., 1, 1)
        l = _where(em, F["numpy.greater"](em, rvec, k), F["numpy.true_divide"](em, colk, d),
                   _where(em, F["numpy.equal"](em, rvec, k), d, 0))
        low = _where(em, F["numpy.equal"](em, col, k), l, low)
        rest = F["numpy.subtract"](em, rest, F["numpy.multiply"](em, l, transpose(em, l, *range(nb), nb + 1, nb)))
        return [rest, low]
    x = em.cast(a, dt)
    if upper:   # NumPy then reads the upper triangle: the lower one of the transpose
        x = transpose(em, x, *range(nb), nb + 1, nb)
    _, low = fori_loop(em, n, [x, em.full(0, dt, a.shape)], step)
    not_pd = F["numpy.logical_not"](em, F["numpy.greater"](em, _diag(em, low), 0))
    em.check(F["numpy.any"](em, not_pd), "LinAlgError: Matrix is not positive definite")
    return transpose(em, low, *range(nb), nb + 1, nb) if upper else low


@register("numpy.linalg.norm", note="ord None, 'fro', 2 (vectors), 1, inf, -inf (vectors)")
def norm(em, x, ord=None, axis=None, keepdims=False):
    ord, keepdims = em.static(ord, "norm: ord"), em.static(keepdims, "norm: keepdims")
    axis = em.static(axis, "norm: axis")
    x = em.asarray(x)
    if not is_float(x.dtype):
        x = em.cast(x, np.float64)
    if axis is None and ord is None or ord in ("fro",) or (ord == 2 and (x.ndim == 1 if axis is None else np.ndim(axis) == 0)):
        sq = em.emit("mul", x, x)
        return FUNCTIONS["numpy.sqrt"](em, FUNCTIONS["numpy.sum"](em, sq, axis=axis, keepdims=keepdims))
    vector = (x.ndim == 1 and axis is None) or np.ndim(axis) == 0
    if vector and ord in (1, np.inf, -np.inf, float("inf"), float("-inf")):
        a = em.emit("abs", x)
        fn = {1: "numpy.sum", np.inf: "numpy.max", -np.inf: "numpy.min"}[ord]
        return FUNCTIONS[fn](em, a, axis=axis, keepdims=keepdims)
    if vector and ord is None:
        sq = em.emit("mul", x, x)
        return FUNCTIONS["numpy.sqrt"](em, FUNCTIONS["numpy.sum"](em, sq, axis=axis, keepdims=keepdims))
    raise NotSupportedError(f"linalg.norm: ord={ord!r} for these axes is not supported",
                            hint="ord None/'fro'/2 (vectors), 1, inf, -inf (vectors) are")
