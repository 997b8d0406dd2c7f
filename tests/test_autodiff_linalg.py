"""Gradients of np.linalg.det, slogdet, cholesky, solve and inv (closed-form VJPs, pyjitc/autodiff/linalg.py)
against central finite differences of the same functions run by NumPy in float64 (hypothesis
over values, stacks and sizes), inside run-time loops, through pyjitc.vjp, and a check that the
reverse pass does not step back through the factorizations' scalar loops."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import pyjitc
from tests.test_autodiff import check_grad


def matrices(shape, lo=-1.0, hi=1.0):
    """Values on a grid of step 1/64 (no ties within reach of the finite-difference step)."""
    return hnp.arrays(np.float64, shape, elements=st.integers(int(lo * 64), int(hi * 64)).map(lambda k: k / 64))


def dets(x, w):
    a = 0.5 * x + 3.0 * np.eye(x.shape[-1])      # diagonally dominant
    sign, logdet = np.linalg.slogdet(np.flip(a, -1) + w)   # columns reversed: det < 0 for n = 3
    return np.sum(np.linalg.det(a) * w[..., 0, 0]) + np.sum(sign * logdet) + np.sum(logdet ** 2)


def cholesky_lower(x, w):
    a = x @ np.swapaxes(x, -1, -2) + 2.0 * np.eye(x.shape[-1]) + np.triu(w, 1)   # upper triangle unread
    return np.sum(np.linalg.cholesky(a) * w)


def cholesky_upper(x, w):
    a = np.swapaxes(x, -1, -2) @ x + 2.0 * np.eye(x.shape[-1]) + np.tril(w, -1)  # lower triangle unread
    return np.sum(np.linalg.cholesky(a, upper=True) ** 2 * w)


def cholesky_reads_one_triangle(a, w):
    return np.sum(np.linalg.cholesky(a + 3.0 * np.eye(a.shape[-1])) * w)


def solves(x, w):
    a = 0.5 * x + 3.0 * np.eye(x.shape[-1])
    b = w[..., :2] if w.shape[-1] > 1 else w      # k right-hand sides
    v = w[..., 0] if w.ndim == 2 else w[0, :, 0]  # one vector: with a stack, against every matrix
    return (np.sum(np.linalg.solve(a, b) ** 2) + np.sum(np.sin(np.linalg.solve(a, v)))
            + np.sum(np.linalg.inv(a) * w))


def solve_broadcast_stacks(x, w):
    a = 0.5 * x[..., :1, :, :] + 3.0 * np.eye(x.shape[-1])   # one matrix against a stack of b's
    return np.sum(np.cos(np.linalg.solve(a, w))) + np.sum(np.linalg.solve(a[0], w) ** 3)


LINALG = {
    "solve_inv": solves,
    "solve_broadcast_stacks": solve_broadcast_stacks,
    "det_slogdet": dets,
    "cholesky_lower": cholesky_lower,
    "cholesky_upper": cholesky_upper,
    "cholesky_reads_one_triangle": cholesky_reads_one_triangle,
}
LINALG_GRADS = {name: pyjitc.grad(fn, argnums=(0, 1)) for name, fn in LINALG.items()}
SHAPES = [(1, 1), (3, 3), (2, 4, 4), (6, 6)]


@pytest.mark.parametrize("name", sorted(LINALG))
@given(data=st.data())
def test_linalg_gradients_match_finite_differences(name, data):
    shape = data.draw(st.sampled_from(SHAPES if name != "solve_broadcast_stacks" else [(2, 3, 3), (3, 2, 2)]))
    x = data.draw(matrices(shape))
    w = data.draw(matrices(shape, 0.0, 0.25))
    check_grad(LINALG[name], LINALG_GRADS[name], (x, w), argnums=(0, 1), rtol=1e-5, atol=1e-6)


def det_in_a_loop(x, n):
    a = x + 3.0 * np.eye(3)
    s = 0.0
    for k in range(n):             # a run-time loop: the VJP runs inside its reverse pass
        a = a * 0.9 + 0.05 * np.linalg.cholesky(a @ a.T)
        s = s + np.linalg.det(a)
    return s


GRAD_LOOP = pyjitc.grad(det_in_a_loop)


@given(x=matrices((3, 3)), n=st.sampled_from([0, 1, 4]))
def test_linalg_gradients_inside_a_run_time_loop(x, n):
    check_grad(det_in_a_loop, GRAD_LOOP, (x, n))


def factor(a):
    low = np.linalg.cholesky(a)
    return low, np.linalg.det(a)


def test_vjp_of_cholesky_and_det():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 4))
    a = x @ x.T + 4 * np.eye(4)
    (low, d), vjp_fn = pyjitc.vjp(factor, a)
    np.testing.assert_allclose(low, np.linalg.cholesky(a), rtol=1e-12)
    ct = rng.standard_normal((4, 4))
    (ga,) = vjp_fn((ct, 2.0))
    want = np.zeros_like(a)
    f = lambda m: np.sum(np.linalg.cholesky(m) * ct) + 2.0 * np.linalg.det(m)
    for k in range(a.size):   # central differences of sum(L * ct) + 2 det, reading the lower triangle
        ap, am = a.copy(), a.copy()
        ap.flat[k] += 1e-6
        am.flat[k] -= 1e-6
        want.flat[k] = (f(ap) - f(am)) / 2e-6
    np.testing.assert_allclose(ga, want, rtol=1e-5, atol=1e-5)


def logdet(x):
    return np.linalg.slogdet(x)[1] + np.sum(np.linalg.cholesky(x @ x.T))


def solve_and_inverse(x, b):
    return np.sum(np.linalg.solve(x, b) ** 2) + np.sum(np.linalg.inv(x) @ b)


@pytest.mark.parametrize("fn", [logdet, solve_and_inverse])
def test_the_reverse_pass_does_not_step_back_through_the_factorizations(fn):
    # Stepping back through the LU's and Cholesky's scalar loops (checkpointed, nested) made a
    # 100x100 slogdet gradient take 190 s to compile and 120 s to run (0.4 ms forward), and the
    # gradient of solve and inv of one 3x3 matrix a 2.4 MB module (138 host loops) that took 54 s
    # to compile; the closed-form VJPs add an LU or two and products: no loop stepping back.
    ts = [pyjitc.Template((5, 5), np.float64), pyjitc.Template((5,), np.float64)][:fn.__code__.co_argcount]
    forward = pyjitc.jit(fn).lower(*ts).as_text().count("scf.while")
    backward = pyjitc.grad(fn, argnums=tuple(range(len(ts)))).lower(*ts).as_text()
    assert forward > 0 and backward.count("scf.while") <= 2 * forward + 2, (forward, backward.count("scf.while"))
    assert "stablehlo.while" not in backward


def test_singular_matrix_gives_nan_not_an_error():
    # det is smooth at a singular matrix (JAX returns the cofactor matrix there); the gradient
    # here comes from A^-1 and is not finite, documented in the README
    g = pyjitc.grad(lambda a: np.linalg.slogdet(a)[1] + np.linalg.det(a))(np.array([[1.0, 2.0], [2.0, 4.0]]))
    assert not np.all(np.isfinite(g))


def eigenvalue_sum(A):
    return np.sum(np.linalg.eigvalsh(A))


def r_factor_sum(A):
    return np.sum(np.linalg.qr(A)[1])


@pytest.mark.parametrize("fn", [eigenvalue_sum, r_factor_sum], ids=lambda f: f.__name__)
def test_linalg_functions_without_a_derivative_rule_are_refused_at_the_users_line(fn):
    # (eigvalsh's reverse pass through its Jacobi sweeps was an IREE CompileError; qr's refusal
    # pointed into pyjitc's own source; a probe of autodiff)
    A = np.array([[2.0, 0.3], [0.3, 1.0]])
    with pytest.raises(pyjitc.NotSupportedError, match=r"test_autodiff_linalg.py:\d+:\d+: autodiff: np.linalg"):
        pyjitc.grad(fn)(A)
    assert np.isclose(pyjitc.jit(fn)(A), fn(A))    # (compiled without autodiff, as before)


def test_argnums_of_the_wrong_type_is_an_argument_error():
    with pytest.raises(pyjitc.ArgumentError, match="argnums"):
        pyjitc.grad(eigenvalue_sum, argnums=1.0)
