"""jacobi: the one-sided Jacobi SVD (Hestenes) and the cyclic Jacobi eigenvalue method, written as
plain NumPy-style Python that pyjitc compiles like user code (spectral.py calls them through the
frontend): every loop is scalar work on elements, so each runs as one native loop on the CPU.

Jacobi's methods are at least as accurate as LAPACK's (singular values to high relative
accuracy), converge quadratically, and need no pivoting; work per sweep is O(m n^2), usually 6-10
sweeps. These functions are not registry entries: spectral.py's are (svd values, eigvalsh, norm
2, cond, matrix_rank, pinv, lstsq)."""
import numpy as np

MAX_SWEEPS = 40


def _rotation(zeta):
    """(cos, sin) of the Jacobi rotation for zeta = cot(2 theta), the smaller of the two angles."""
    t = 1.0 / (abs(zeta) + np.sqrt(1.0 + zeta * zeta))
    if zeta < 0:
        t = -t
    c = 1.0 / np.sqrt(1.0 + t * t)
    return c, c * t


def _rotate_columns(A, p, q, c, s):
    """Columns p and q of A rotated in place."""
    for i in range(A.shape[0]):
        x = A[i, p]
        y = A[i, q]
        A[i, p] = c * x - s * y
        A[i, q] = s * x + c * y


def one_sided_svd(a, eps, tiny):
    """a (m, n), m >= n: W = a V with orthogonal columns, V orthogonal; the singular values are
    the column norms of W (unsorted). Rotations of column pairs until every pair is orthogonal to
    `eps` relative to the norms (or MAX_SWEEPS sweeps)."""
    W = a.copy()
    m, n = W.shape
    V = np.eye(n, dtype=W.dtype)
    for sweep in range(MAX_SWEEPS):
        rotated = 0
        for p in range(n - 1):
            for q in range(p + 1, n):
                alpha = 0.0
                beta = 0.0
                gamma = 0.0
                for i in range(m):
                    alpha += W[i, p] * W[i, p]
                    beta += W[i, q] * W[i, q]
                    gamma += W[i, p] * W[i, q]
                if abs(gamma) > eps * np.sqrt(alpha * beta) and abs(gamma) > tiny:
                    rotated += 1
                    c, s = _rotation((beta - alpha) / (2.0 * gamma))
                    _rotate_columns(W, p, q, c, s)
                    _rotate_columns(V, p, q, c, s)
        if rotated == 0:
            break
    return W, V


def symmetric_eigenvalues(a, eps, tiny):
    """The eigenvalues (unsorted) of the symmetric matrix a: rotations zeroing a[p, q] in turn
    until every off-diagonal element is below `eps` relative to its diagonal pair."""
    A = a.copy()
    n = A.shape[0]
    for sweep in range(MAX_SWEEPS):
        rotated = 0
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = A[p, q]
                app = A[p, p]
                aqq = A[q, q]
                if abs(apq) > eps * np.sqrt(abs(app * aqq)) and abs(apq) > tiny:
                    rotated += 1
                    c, s = _rotation((aqq - app) / (2.0 * apq))
                    _rotate_columns(A, p, q, c, s)
                    for k in range(n):      # and the rows p and q
                        x = A[p, k]
                        y = A[q, k]
                        A[p, k] = c * x - s * y
                        A[q, k] = s * x + c * y
        if rotated == 0:
            break
    d = np.zeros(n, dtype=A.dtype)
    for k in range(n):
        d[k] = A[k, k]
    return d


def householder_qr(a, columns):
    """LAPACK's QR (dgeqr2 then dorg2r, unblocked): for column j the reflector H = I - tau v v^T
    with v[j] = 1 that maps a[j:, j] to beta e_j, beta = -copysign(norm, alpha) (dlarfg: no
    reflection where the column below the diagonal is zero); R overwrites a, and Q's first
    `columns` columns (k for 'reduced', m for 'complete') are H_0 ... H_{k-1} applied to the
    identity's. The same reflectors as LAPACK's blocked dgeqrf, so the same signs."""
    R = a.copy()
    m, n = R.shape
    k = min(m, n)
    V = np.zeros((m, k), dtype=R.dtype)
    tau = np.zeros(k, dtype=R.dtype)
    for j in range(k):
        alpha = R[j, j]
        xn = 0.0
        for i in range(j + 1, m):
            xn += R[i, j] * R[i, j]
        V[j, j] = 1.0
        if xn > 0.0:
            beta = -np.copysign(np.sqrt(alpha * alpha + xn), alpha)
            t = (beta - alpha) / beta
            scale = 1.0 / (alpha - beta)
            for i in range(j + 1, m):
                V[i, j] = R[i, j] * scale
                R[i, j] = 0.0
            R[j, j] = beta
            tau[j] = t
            for c in range(j + 1, n):
                w = R[j, c]
                for i in range(j + 1, m):
                    w += V[i, j] * R[i, c]
                w = w * t
                R[j, c] -= w
                for i in range(j + 1, m):
                    R[i, c] -= w * V[i, j]
    Q = np.eye(m, columns, dtype=R.dtype)
    for jj in range(k):
        j = k - 1 - jj
        t = tau[j]
        for c in range(j, columns):
            w = 0.0
            for i in range(j, m):
                w += V[i, j] * Q[i, c]
            w = w * t
            for i in range(j, m):
                Q[i, c] -= w * V[i, j]
    return Q, R
