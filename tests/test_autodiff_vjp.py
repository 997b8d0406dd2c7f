"""pyjitc.vjp (vector-valued functions: array and tuple results) against central finite
differences of sum(value * cotangent) in float64, its API (gradients for every positional
argument, None where there is none; caching; structure errors), and pyjitc.grad / vjp against
jax.grad / jax.vjp on programs JAX can express (skipped without jax: `pip install jax[cpu]`)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pyjitc
from tests.test_autodiff import numeric_grad, values


def layer(x, w, n):
    y = np.tanh(x @ w)
    return y, np.sum(y * y) * n


def in_place_stencil(u, alpha, steps):
    for _ in range(steps):
        u[1:-1] += alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


def vjp_numeric(fn, args, ct, i):
    """d/d args[i] of sum(fn(*args) * ct), by central differences (NumPy, on copies)."""
    def dot(*a):
        out = fn(*a)
        outs, cts = (out, ct) if isinstance(out, tuple) else ((out,), (ct,))
        return sum(float(np.sum(np.asarray(o) * c)) for o, c in zip(outs, cts))
    return numeric_grad(dot, args, i)


@settings(max_examples=10)
@given(x=values((3, 4)), w=values((4, 2)), cy=values((3, 2)), cs=st.sampled_from([0.0, 1.0, -2.5]))
def test_vjp_of_a_tuple_result_matches_finite_differences(x, w, cy, cs):
    value, vjp_fn = pyjitc.vjp(layer, x, w, 2)
    want = layer(x, w, 2)
    np.testing.assert_allclose(value[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(value[1], want[1], rtol=1e-12)
    gx, gw, gn = vjp_fn((cy, cs))
    assert gn is None                                   # an int argument has no gradient
    assert gx.shape == x.shape and gx.dtype == x.dtype and gw.shape == w.shape
    np.testing.assert_allclose(gx, vjp_numeric(layer, (x, w, 2), (cy, cs), 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gw, vjp_numeric(layer, (x, w, 2), (cy, cs), 1), rtol=1e-5, atol=1e-6)


@settings(max_examples=10)
@given(u=values((8,), 0.0, 1.0), ct=values((8,)), steps=st.sampled_from([0, 1, 5]))
def test_vjp_through_a_run_time_loop_updating_its_argument_in_place(u, ct, steps):
    before = u.copy()
    value, vjp_fn = pyjitc.vjp(in_place_stencil, u, 0.2, steps)
    np.testing.assert_array_equal(u, before)            # the caller's array is left alone
    np.testing.assert_allclose(value, in_place_stencil(u.copy(), 0.2, steps), rtol=1e-12)
    gu, galpha, gsteps = vjp_fn(ct)
    assert type(galpha) is float and gsteps is None
    np.testing.assert_allclose(gu, vjp_numeric(in_place_stencil, (u, 0.2, steps), ct, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(galpha, vjp_numeric(in_place_stencil, (u, 0.2, steps), ct, 1), rtol=1e-5, atol=1e-6)


def test_vjp_functions_are_compiled_once_per_template_and_check_the_cotangent():
    x, w = np.ones((3, 4)), np.ones((4, 2))
    _, f1 = pyjitc.vjp(layer, x, w, 3)
    _, f2 = pyjitc.vjp(layer, x * 2, w, 3)
    f1((np.ones((3, 2)), 1.0))
    f2((np.ones((3, 2)), 1.0))
    backward = pyjitc.autodiff.api._vjp_functions[layer][1]
    assert backward.cache_info().misses == 1 and backward.cache_info().hits >= 1
    assert "func.func @vjp_layer" in backward.lower(x, w, 3, (np.ones((3, 2)), np.float64(1.0))).as_text()
    with pytest.raises(pyjitc.ArgumentError, match="the cotangent must have the structure"):
        f1(np.ones((3, 2)))
    with pytest.raises(pyjitc.ArgumentError, match=r"cotangent leaf 0 has shape \(2, 3\)"):
        f1((np.ones((2, 3)), 1.0))


# ---------------------------------------------------------------- against JAX

def mlp_loss(x, w1, w2, labels):
    h = np.tanh(x @ w1)
    logits = h @ w2
    m = np.max(logits, axis=1, keepdims=True)
    logp = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * logp, axis=1))


def mlp_loss_jax(x, w1, w2, labels):
    import jax.numpy as jnp
    h = jnp.tanh(x @ w1)
    logits = h @ w2
    m = jnp.max(logits, axis=1, keepdims=True)
    logp = logits - m - jnp.log(jnp.sum(jnp.exp(logits - m), axis=1, keepdims=True))
    return -jnp.mean(jnp.sum(labels * logp, axis=1))


def stencil_loss(u0, alpha, observed, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] += alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
    return np.sum((u - observed) ** 2)


def stencil_loss_jax(u0, alpha, observed, steps):
    import jax
    import jax.numpy as jnp

    def body(_, u):
        return u.at[1:-1].add(alpha * (u[2:] - 2 * u[1:-1] + u[:-2]))
    u = jax.lax.fori_loop(0, steps, body, u0)
    return jnp.sum((u - observed) ** 2)


def normalise_rows(x, scale):
    y = x / np.sqrt(np.sum(x * x, axis=1, keepdims=True)) * scale
    return y, np.sort(x, axis=1)[:, ::-1]


def normalise_rows_jax(x, scale):
    import jax.numpy as jnp
    y = x / jnp.sqrt(jnp.sum(x * x, axis=1, keepdims=True)) * scale
    return y, jnp.sort(x, axis=1)[:, ::-1]


@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax", reason="jax is not installed (pip install 'jax[cpu]')")
    jax.config.update("jax_enable_x64", True)
    return jax


def test_grad_matches_jax_on_an_mlp_and_a_stencil_loop(jax):
    rng = np.random.default_rng(0)
    x, w1, w2 = rng.standard_normal((16, 8)), rng.standard_normal((8, 12)) * 0.3, rng.standard_normal((12, 5)) * 0.3
    labels = np.eye(5)[rng.integers(0, 5, 16)]
    got = pyjitc.grad(mlp_loss, argnums=(1, 2))(x, w1, w2, labels)
    want = jax.grad(mlp_loss_jax, argnums=(1, 2))(x, w1, w2, labels)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-10, atol=1e-12)
    u0, observed = np.sin(np.linspace(0, 3, 32)), np.linspace(0, 1, 32)
    for steps in (0, 7, 50):
        got = pyjitc.grad(stencil_loss, argnums=(0, 1))(u0, 0.2, observed, steps)
        want = jax.grad(stencil_loss_jax, argnums=(0, 1))(u0, 0.2, observed, steps)
        np.testing.assert_allclose(got[0], np.asarray(want[0]), rtol=1e-9, atol=1e-12)
        assert got[1] == pytest.approx(float(want[1]), rel=1e-9)


def test_vjp_matches_jax_on_a_tuple_result(jax):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 6))
    cts = (rng.standard_normal((4, 6)), rng.standard_normal((4, 6)))
    value, vjp_fn = pyjitc.vjp(normalise_rows, x, 1.5)
    jvalue, jvjp = jax.vjp(normalise_rows_jax, x, 1.5)
    for v, w in zip(value, jvalue):
        np.testing.assert_allclose(v, np.asarray(w), rtol=1e-12)
    for g, w in zip(vjp_fn(cts), jvjp(cts)):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-10, atol=1e-12)
