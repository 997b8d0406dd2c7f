"""Accuracy sweep: pyjitc vs NumPy float32 transcendental functions, in ulp of the result.
Run: .venv/bin/python bench/accuracy_f32.py"""
import numpy as np, pyjitc
@pyjitc.jit
def f(x):
    return np.sin(x), np.cos(x), np.tan(x), np.tanh(x), np.exp(x), np.log(np.abs(x))
rng = np.random.default_rng(0)
x = np.concatenate([rng.uniform(-30, 30, 200000), rng.uniform(-1, 1, 200000), 2.0 ** rng.uniform(-20, 5, 200000)]).astype(np.float32)
got = f(x)
want = [np.sin(x), np.cos(x), np.tan(x), np.tanh(x), np.exp(x), np.log(np.abs(x))]
eps = np.finfo(np.float32).eps
for name, g, w in zip("sin cos tan tanh exp log".split(), got, want):
    g64, w64 = g.astype(float), w.astype(float)
    err = np.abs(g64 - w64)
    ulps_out = np.max(err / (np.abs(w64) * eps + 1e-45))
    excess = np.max((err - 4 * eps * np.abs(x)) / (np.abs(w64) * eps + 1e-45))
    print(name, "max err in ulp of result", f"{ulps_out:.1f}", "beyond 4ulp(arg):", f"{excess:.1f}")
