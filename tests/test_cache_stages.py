"""Caching per input template, static arguments, the staged lower()/compile() API and the
emitted MLIR (verified, with source locations)."""
import numpy as np
import pytest
from iree.compiler import ir

import pyjitc
from tests.reference import assert_same


def test_same_template_compiles_once_and_a_new_shape_compiles_once_more():
    @pyjitc.jit
    def f(x):
        return np.exp(x) + 1

    a, b = np.ones(3, np.float32), np.zeros(3, np.float32)
    f(a); f(b); f(a)
    assert f.cache_info()[:2] == (2, 1) and f.cache_info().currsize == 1
    f(np.ones(5, np.float32))
    f(np.ones(3, np.float64))
    assert (f.cache_info().misses, f.cache_info().currsize) == (3, 3)


def test_python_scalar_arguments_do_not_recompile_for_new_values():
    @pyjitc.jit
    def axpy(a, x, y):
        return a * x + y

    x = np.arange(4, dtype=np.float32)
    for a in (1.0, 2.5, -3.0):
        assert_same(axpy(a, x, x), a * x + x)
    assert axpy.cache_info().misses == 1


def test_scalar_used_as_a_shape_becomes_static_automatically():
    @pyjitc.jit
    def first(x, n):
        return np.sum(x.reshape(n, -1), axis=0)

    x = np.arange(12.0)
    assert_same(first(x, 3), np.sum(x.reshape(3, -1), axis=0))
    assert_same(first(x, 4), np.sum(x.reshape(4, -1), axis=0))
    assert first.cache_info().misses == 2
    first(x, 3)
    assert first.cache_info().hits == 1


def test_static_argnames_makes_values_part_of_the_key():
    @pyjitc.jit(static_argnames="axis")
    def red(x, axis):
        return x.max(axis=axis)

    x = np.arange(6.0).reshape(2, 3)
    assert_same(red(x, 0), x.max(axis=0))
    assert_same(red(x, 1), x.max(axis=1))
    assert red.cache_info().misses == 2


def decay(t, y):
    return -0.5 * y


def rk4_solve(y0, T, n, rhs=decay):
    y, dt = y0.copy(), T / n
    for i in range(n):
        t = i * dt
        k1 = rhs(t, y)
        k2 = rhs(t + dt / 2, y + dt / 2 * k1)
        k3 = rhs(t + dt / 2, y + dt / 2 * k2)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + rhs(t + dt, y + dt * k3))
    return y


def test_a_function_passed_or_defaulted_as_an_argument_is_static(tmp_path):
    # a function default was refused ("argument 'rhs' has type function"), and with
    # static_argnames it could not be saved with the compiled function (a probe of ODE solvers)
    y0 = np.linspace(0.0, 1.0, 5)
    f = pyjitc.jit(rk4_solve)
    assert_same(f(y0, 1.0, 40), rk4_solve(y0, 1.0, 40))
    assert_same(f(y0, 1.0, 40, np.sin), rk4_solve(y0, 1.0, 40, np.sin))   # another function: another compile
    assert f.cache_info().misses == 2
    path = tmp_path / "rk4.vmfb"
    f.lower(y0, 1.0, 40).compile().save(path)
    loaded = pyjitc.load(path)
    assert_same(loaded(y0, 1.0, 40), rk4_solve(y0, 1.0, 40))
    with pytest.raises(pyjitc.ArgumentError, match="static value"):
        loaded(y0, 1.0, 40, np.sin)


def test_lower_shows_verified_stablehlo_typed_ir_and_source_locations():
    @pyjitc.jit
    def softmax(x):
        m = np.max(x, axis=-1, keepdims=True)
        e = np.exp(x - m)
        return e / np.sum(e, axis=-1, keepdims=True)

    lowered = softmax.lower(pyjitc.Template((1000, 1000, 5), np.float32))
    text = lowered.as_text()
    assert "func.func @softmax(%arg0: tensor<1000x1000x5xf32>) -> tensor<1000x1000x5xf32>" in text
    for op in ("stablehlo.reduce", "stablehlo.exponential", "stablehlo.divide"):
        assert op in text
    with ir.Context():   # the text is a valid module the StableHLO verifier accepts
        assert ir.Module.parse(text).operation.verify()
    line = softmax.__wrapped__.__code__.co_firstlineno + 2
    assert f'test_cache_stages.py":{line}:' in lowered.as_text(debug_info=True)
    typed = lowered.as_text("typed")
    assert "exp(" in typed and "f32[1000,1000,5]" in typed and f"test_cache_stages.py:{line}:" in typed
    assert softmax.cache_info().misses == 0   # lowering alone compiles nothing
    compiled = lowered.compile()
    x = np.random.default_rng(0).random((1000, 1000, 5), dtype=np.float32)
    assert_same(compiled(x), softmax.__wrapped__(x), accumulate=True)
    assert compiled.vmfb[:8] and len(compiled.vmfb) > 1000


def test_template_parse_reads_the_documented_syntax():
    assert pyjitc.Template.parse("f32[1000,1000,5]") == pyjitc.Template((1000, 1000, 5), np.float32)
    assert pyjitc.Template.parse("i64[]") == pyjitc.Template((), np.int64)
    assert pyjitc.Template.parse("bool[3]") == pyjitc.Template((3,), np.bool_)
    with pytest.raises(pyjitc.ArgumentError):
        pyjitc.Template.parse("f32(3)")


def test_compiled_checks_its_arguments_against_the_signature():
    @pyjitc.jit
    def double(x):
        return x * 2

    compiled = double.lower(pyjitc.Template((3,), np.float32)).compile()
    with pytest.raises(pyjitc.ArgumentError, match="argument 'x': expected an array f32\\[3\\], got float64\\[3\\]"):
        compiled(np.ones(3))


def test_unsupported_argument_types_name_the_argument():
    @pyjitc.jit
    def ident(x):
        return x

    with pytest.raises(pyjitc.ArgumentError, match="argument 'x' has dtype object"):
        ident(np.array([object()]))
    with pytest.raises(pyjitc.ArgumentError, match="too many positional arguments"):
        ident(1, 2)
