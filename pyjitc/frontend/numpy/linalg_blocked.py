"""linalg_blocked: the factorizations behind np.linalg as blocked algorithms over a stack of
matrices (B, n, n): typed IR in, typed IR out; shapes are static, so the loop over blocks runs
while compiling and every block has static bounds.

IREE has no LAPACK-like primitive on the CPU (no StableHLO cholesky, triangular_solve or LU), so
the work inside a block of NB columns is written as scalar loops (element reads and writes of
0-d values) that lowering/scalar_loop.py turns into one native dispatch each (a few ns per
step), and everything between blocks is a matrix product (dot_general), which IREE runs close to
OpenBLAS. Triangular solves against a diagonal block multiply by its inverse (computed by a
scalar loop): that keeps the O(n^2 NB) work of the solves in matmuls too."""
from __future__ import annotations

import numpy as np

from ...ir.types import TensorType
from ..registry import FUNCTIONS
from ..values import Traced

F = FUNCTIONS
INT64 = np.dtype(np.int64)
MAX_BLOCKS = 6
NB = 64   # block width: scalar work is ~n^2 NB / 4 steps, the rest matmuls (bench/bench_linalg.py)


# ---------------------------------------------------------------- scalar loops

class Scalars:
    """0-d arithmetic, element reads/writes and counted loops: the vocabulary of native loops."""

    def __init__(self, em, dtype):
        self.em, self.dt = em, np.dtype(dtype)

    def i(self, v) -> Traced:
        return v if isinstance(v, Traced) else self.em.constant(np.int64(v))

    def f(self, v) -> Traced:
        return v if isinstance(v, Traced) else self.em.constant(np.asarray(v, self.dt))

    def op(self, name, *xs, **attrs) -> Traced:
        return self.em.emit(name, *xs, **attrs)

    def add(self, a, b):
        return self.op("add", a, b)

    def sub(self, a, b):
        return self.op("sub", a, b)

    def mul(self, a, b):
        return self.op("mul", a, b)

    def div(self, a, b):
        return self.op("div", a, b)

    def cmp(self, a, b, direction):
        return self.op("compare", a, b, direction=direction)

    def select(self, c, a, b):
        return self.op("select", c, a, b)

    def get(self, x: Traced, *idx) -> Traced:
        v = self.em.emit("dynamic_slice", x, *[self.i(k) for k in idx], sizes=(1,) * x.ndim)
        return self.em.emit("reshape", v, shape=())

    def put(self, x: Traced, v: Traced, *idx) -> Traced:
        v = self.em.emit("reshape", v, shape=(1,) * x.ndim)
        return self.em.emit("dynamic_update_slice", x, v, *[self.i(k) for k in idx])

    def loop(self, lo, hi, init: list, body) -> list:
        """`for k in range(lo, hi): vals = body(k, vals)` as one IR while op."""
        em, b = self.em, self.em.b
        lo, hi = self.i(lo), self.i(hi)
        types = [v.value.type for v in init] + [TensorType((), INT64)]
        cond = b.open_block(types)
        b.close_block([self.cmp(em.wrap(cond.params[-1]), hi, "LT").value])
        block = b.open_block(types)
        *vals, k = [em.wrap(p) for p in block.params]
        outs = body(k, vals)
        b.close_block([o.value for o in outs] + [self.add(k, self.i(1)).value])
        results = b.emit("while", *[v.value for v in init], lo.value, regions=(cond, block))
        return [em.wrap(r) for r in results[:-1]]

    def dot(self, x, xi, y, yi, lo, hi, acc):
        """acc + sum over k in [lo, hi) of x[xi(k)] * y[yi(k)]."""
        def step(k, vals):
            (s,) = vals
            return [self.add(s, self.mul(self.get(x, *xi(k)), self.get(y, *yi(k))))]
        return self.loop(lo, hi, [acc], step)[0]


def _flat(em, x: Traced) -> Traced:
    """(B, r, c) as (B*r, c): IREE 3.13's CollapseDimensions pass breaks a native loop that
    reads a 3-d array inside nested loops ("operand does not dominate this use"), so the scalar
    loops index 2-d arrays, matrix bi's row i at bi*r + i."""
    return em.emit("reshape", x, shape=(x.shape[0] * x.shape[1], x.shape[2]))


def _row(S: Scalars, bi, r: int):
    base = S.mul(bi, S.i(r))
    return lambda i: S.add(base, S.i(i))


def cholesky_block(em, a: Traced) -> tuple[Traced, Traced]:
    """(L, L^-1) of each (w, w) matrix of a (B, w, w), reading its lower triangle only
    (Cholesky-Crout: each element one dot product of rows already done). A pivot that is not
    positive gives NaN or inf in L, which the caller reports."""
    S = Scalars(em, a.dtype)
    nbatch, w, _ = a.shape
    a2 = _flat(em, a)
    zero = S.f(0)

    def per_matrix(bi, vals):
        low, inv = vals
        R = _row(S, bi, w)

        def column(j, vals):
            (low,) = vals
            rj = R(j)
            s = S.dot(low, lambda k: (rj, k), low, lambda k: (rj, k), 0, j, zero)
            d = S.op("sqrt", S.sub(S.get(a2, rj, j), s))
            low = S.put(low, d, rj, j)

            def row(i, vals):
                (low,) = vals
                ri = R(i)
                t = S.dot(low, lambda k: (ri, k), low, lambda k: (rj, k), 0, j, zero)
                return [S.put(low, S.div(S.sub(S.get(a2, ri, j), t), d), ri, j)]
            return S.loop(S.add(j, S.i(1)), w, [low], row)
        (low,) = S.loop(0, w, [low], column)
        return [low, _lower_inverse(S, low, R, w, inv, unit=False)]
    init = [em.full(0, a.dtype, a2.shape), em.full(0, a.dtype, a2.shape)]
    low, inv = S.loop(0, nbatch, init, per_matrix)
    return em.emit("reshape", low, shape=a.shape), em.emit("reshape", inv, shape=a.shape)


def _lower_inverse(S: Scalars, low, R, w, inv, unit: bool):
    """inv = L^-1 for the lower triangle L of the w rows R(0..w) of low (its diagonal taken as
    1 if `unit`): column j of the inverse by forward substitution on e_j."""
    def column(j, vals):
        (inv,) = vals
        djj = S.f(1) if unit else S.div(S.f(1), S.get(low, R(j), j))
        inv = S.put(inv, djj, R(j), j)

        def row(i, vals):
            (inv,) = vals
            ri = R(i)
            t = S.dot(low, lambda k: (ri, k), inv, lambda k: (R(k), j), j, i, S.f(0))
            v = S.op("neg", t) if unit else S.div(S.op("neg", t), S.get(low, ri, i))
            return [S.put(inv, v, ri, j)]
        return S.loop(S.add(j, S.i(1)), w, [inv], row)
    return S.loop(0, w, [inv], column)[0]


def upper_inverse(em, up: Traced) -> Traced:
    """U^-1 of the upper triangle of each (w, w) matrix of up (B, w, w): column j by back
    substitution."""
    S = Scalars(em, up.dtype)
    nbatch, w, _ = up.shape
    u2 = _flat(em, up)

    def per_matrix(bi, vals):
        (inv,) = vals
        R = _row(S, bi, w)

        def column(j, vals):
            (inv,) = vals
            inv = S.put(inv, S.div(S.f(1), S.get(u2, R(j), j)), R(j), j)

            def row(t, vals):
                (inv,) = vals
                i = S.sub(S.sub(j, S.i(1)), t)       # i = j-1, j-2, ..., 0
                ri = R(i)
                s = S.dot(u2, lambda k: (ri, k), inv, lambda k: (R(k), j), S.add(i, S.i(1)), S.add(j, S.i(1)), S.f(0))
                return [S.put(inv, S.div(S.op("neg", s), S.get(u2, ri, i)), ri, j)]
            return S.loop(0, j, [inv], row)
        return S.loop(0, w, [inv], column)
    (inv,) = S.loop(0, nbatch, [em.full(0, up.dtype, u2.shape)], per_matrix)
    return em.emit("reshape", inv, shape=up.shape)


def lu_panel(em, p: Traced) -> tuple[Traced, Traced, Traced, Traced]:
    """LAPACK's getf2 on each (m, w) panel of p (B, m, w), m >= w: partial pivoting (the first
    row with the largest |value|), a rank-1 update per column. Returns (the factored panels: U
    on and above the diagonal, L's multipliers below; perm (B, m): the original row at each
    position; the permutation's sign (B,); L11^-1 (B, w, w), the unit lower inverse)."""
    S = Scalars(em, p.dtype)
    nbatch, m, w = p.shape
    zero = S.f(0)

    def per_matrix(bi, vals):
        p, perm, sign, inv = vals
        R = _row(S, bi, m)
        RI = _row(S, bi, w)

        def column(j, vals):
            p, perm, sign = vals
            rj = R(j)

            def search(i, vals):
                best, at = vals
                v = S.op("abs", S.get(p, R(i), j))
                bigger = S.cmp(v, best, "GT")
                return [S.select(bigger, v, best), S.select(bigger, i, at)]
            _, piv = S.loop(S.add(j, S.i(1)), m, [S.op("abs", S.get(p, rj, j)), j], search)
            rp = R(piv)

            def swap(c, vals):
                (p,) = vals
                top, other = S.get(p, rj, c), S.get(p, rp, c)
                return [S.put(S.put(p, other, rj, c), top, rp, c)]
            (p,) = S.loop(0, w, [p], swap)
            top, other = S.get(perm, rj), S.get(perm, rp)
            perm = S.put(S.put(perm, other, rj), top, rp)
            sign = S.select(S.cmp(piv, j, "NE"), S.op("neg", sign), sign)
            pivot = S.get(p, rj, j)
            # a zero pivot leaves its column's multipliers at 0 (the caller reports the singular
            # matrix; det gets an exact 0 instead of NaN from 0/0)
            safe = S.select(S.cmp(pivot, zero, "EQ"), S.f(np.inf), pivot)

            def row(i, vals):
                (p,) = vals
                ri = R(i)
                lij = S.div(S.get(p, ri, j), safe)
                p = S.put(p, lij, ri, j)

                def update(c, vals):
                    (p,) = vals
                    return [S.put(p, S.sub(S.get(p, ri, c), S.mul(lij, S.get(p, rj, c))), ri, c)]
                return S.loop(S.add(j, S.i(1)), w, [p], update)
            (p,) = S.loop(S.add(j, S.i(1)), m, [p], row)
            return [p, perm, sign]
        p, perm, s = S.loop(0, w, [p, perm, S.get(sign, bi)], column)
        sign = S.put(sign, s, bi)
        inv = _lower_inverse_of(S, p, R, RI, w, inv)
        return [p, perm, sign, inv]
    perm0 = em.emit("iota", shape=(nbatch * m,), dim=0, dtype=INT64)
    perm0 = em.emit("rem", perm0, em.broadcast(em.constant(np.int64(m)), (nbatch * m,)))
    init = [_flat(em, p), perm0, em.full(1, p.dtype, (nbatch,)), em.full(0, p.dtype, (nbatch * w, w))]
    p2, perm, sign, inv = S.loop(0, nbatch, init, per_matrix)
    return (em.emit("reshape", p2, shape=p.shape), em.emit("reshape", perm, shape=(nbatch, m)), sign,
            em.emit("reshape", inv, shape=(nbatch, w, w)))


def _lower_inverse_of(S: Scalars, low, R, RI, w, inv):
    """inv (rows RI) = the unit lower triangle of low's rows R(0..w), inverted."""
    def column(j, vals):
        (inv,) = vals
        inv = S.put(inv, S.f(1), RI(j), j)

        def row(i, vals):
            (inv,) = vals
            t = S.dot(low, lambda k: (R(i), k), inv, lambda k: (RI(k), j), j, i, S.f(0))
            return [S.put(inv, S.op("neg", t), RI(i), j)]
        return S.loop(S.add(j, S.i(1)), w, [inv], row)
    return S.loop(0, w, [inv], column)[0]


# ---------------------------------------------------------------- blocked algorithms

def blocks(n: int) -> list[tuple[int, int]]:
    """(start, width) of each block of columns: NB wide, the last one taking a remainder of
    fewer than 8 columns (IREE 3.13 failed to compile native loops over 1x1 blocks: "LLVM
    Translation failed for operation: unrealized_conversion_cast")."""
    # at most MAX_BLOCKS blocks (each is compiled on its own: 16 blocks of 64 at n = 1000 took
    # 70-80 s to compile); wider blocks put more of the work in the scalar loops
    nb = max(NB, (-(-n // MAX_BLOCKS) + 7) // 8 * 8)
    out, k0 = [], 0
    while k0 < n:
        w = n - k0 if n - k0 < nb + 8 else nb
        out.append((k0, w))
        k0 += w
    return out


def _mm(em, a, b):
    return F["numpy.matmul"](em, a, b)


def _t(em, x):
    return em.emit("transpose", x, perm=(0, 2, 1))


def _cols(em, x, lo, hi):
    return em.emit("slice", x, start=(0, 0, lo), limit=x.shape[:2] + (hi,), strides=(1, 1, 1))


def _rows(em, x, lo, hi):
    return em.emit("slice", x, start=(0, lo, 0), limit=(x.shape[0], hi, x.shape[2]), strides=(1, 1, 1))


def _concat(em, xs, axis):
    xs = [x for x in xs if x.shape[axis]]
    return xs[0] if len(xs) == 1 else F["numpy.concatenate"](em, xs, axis=axis)


def cholesky(em, a: Traced) -> Traced:
    """L with L L^T = the lower triangle of each matrix of a (B, n, n), right-looking by blocks:
    factor the diagonal block (scalar loop, with its inverse), L21 = A21 L11^-T, then
    A22 -= L21 L21^T (matmuls). The upper triangle is never read."""
    nbatch, n, _ = a.shape
    panels, rest = [], a
    for k0, w in blocks(n):
        low, inv = cholesky_block(em, _cols(em, _rows(em, rest, 0, w), 0, w))
        panel = low
        if w < rest.shape[1]:
            l21 = _mm(em, _cols(em, _rows(em, rest, w, rest.shape[1]), 0, w), _t(em, inv))
            trailing = _cols(em, _rows(em, rest, w, rest.shape[1]), w, rest.shape[2])
            rest = F["numpy.subtract"](em, trailing, _mm(em, l21, _t(em, l21)))
            panel = _concat(em, [low, l21], axis=1)
        panels.append(_concat(em, [em.full(0, a.dtype, (nbatch, k0, w)), panel], axis=1))
    return _concat(em, panels, axis=2)


def _permute_rows(em, x: Traced, perm: Traced) -> Traced:
    """x[b, perm[b, i], :] for each matrix of x (B, m, c): one gather of whole rows."""
    nbatch, m, c = x.shape
    if c == 0:
        return x
    offsets = em.emit("iota", shape=(nbatch, m), dim=0, dtype=INT64)
    flat = F["numpy.add"](em, perm, F["numpy.multiply"](em, offsets, m))
    rows = em.emit("take", em.emit("reshape", x, shape=(nbatch * m, c) if c > 1 else (nbatch * m,)), flat)
    return em.emit("reshape", rows, shape=(nbatch, m, c))


def lu(em, a: Traced, n: int) -> tuple[list, Traced, Traced]:
    """Gaussian elimination with partial pivoting on the first n columns of each matrix of
    a (B, n, m), m >= n, right-looking by blocks of NB columns (LAPACK's getrf): factor the
    panel (scalar loop), swap the rows of the other columns, U12 = L11^-1 A12 and
    A22 -= L21 U12 (matmuls). Columns past n (right-hand sides) are carried along, so they come
    out as L^-1 P B. Returns (U's block rows: (B, w, m - k0) each, the diagonal block first;
    U's diagonal (B, n); the permutation's sign (B,))."""
    rows_u, diags, sign, rest = [], [], None, a
    for k0, w in blocks(n):
        p, perm, s, linv = lu_panel(em, _cols(em, rest, 0, w))
        sign = s if sign is None else F["numpy.multiply"](em, sign, s)
        right = _permute_rows(em, _cols(em, rest, w, rest.shape[2]), perm)
        u11 = _rows(em, p, 0, w)
        diags.append(F["numpy.diagonal"](em, u11, 0, -2, -1))
        u12 = _mm(em, linv, _rows(em, right, 0, w)) if right.shape[2] else _rows(em, right, 0, w)
        rows_u.append(_concat(em, [u11, u12], axis=2))
        if w < rest.shape[1]:
            below = _rows(em, right, w, right.shape[1])
            rest = F["numpy.subtract"](em, below, _mm(em, _rows(em, p, w, p.shape[1]), u12)) if below.shape[2] else below
    return rows_u, _concat(em, diags, axis=1), sign


def back_substitute(em, rows_u: list, n: int) -> Traced:
    """X with U X = C, U and C (B, n, k) given as lu's block rows [U_ii, U_i,>i, C_i]; block by
    block from the last: X_i = U_ii^-1 (C_i - U_i,>i X_>i)."""
    xs = []
    for bi, (k0, _) in reversed(list(enumerate(blocks(n)))):
        row = rows_u[bi]
        w = row.shape[1]
        c = _cols(em, row, n - k0, row.shape[2])
        if xs:
            below = _concat(em, xs[::-1], axis=1)
            c = F["numpy.subtract"](em, c, _mm(em, _cols(em, row, w, n - k0), below))
        xs.append(_mm(em, upper_inverse(em, _cols(em, row, 0, w)), c))
    return _concat(em, xs[::-1], axis=1)
