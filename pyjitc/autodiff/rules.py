"""rules: one vector-Jacobian product (VJP) rule per typed-IR primitive, keyed by the op's name in
ir/ops.py's registry. A rule gets the op's (forward) operand and result values and the
cotangent of its result, emits the backward ops, and returns one cotangent per operand (None:
zero, or an operand that is not a float). Ops with regions (`if`, `while`) are transformed by
reverse.py; ops whose derivative is zero wherever it exists (comparisons, floor, sign, ...) are
listed in ZERO; every other op of the registry must have a rule here, or autodiff refuses it with
a located error naming it (tests/test_autodiff.py lists those)."""
from __future__ import annotations

import numpy as np

from ..ir.graph import Builder, Op, Value
from ..ir.types import TensorType, is_complex, is_float, real_dtype

# Derivative zero wherever defined (JAX's convention at the jumps), or results that are not floats.
ZERO = frozenset({"sign", "floor", "ceil", "round_even", "not", "and", "or", "xor", "shift_left",
                  "shift_right_arithmetic", "shift_right_logical", "is_finite", "compare", "constant", "iota",
                  "dim_size"})
# Transformed by reverse.py (their regions are differentiated there).
REGION_OPS = frozenset({"if", "while"})


class Emit:
    """Small builders over the typed IR Builder, used by the rules and by reverse.py."""

    def __init__(self, builder: Builder):
        self.b = builder

    def __call__(self, name, *operands, **attrs):
        return self.b.emit(name, *operands, **attrs)

    def full(self, value, t: TensorType) -> Value:
        if is_complex(t.dtype):   # from its parts: IREE 3.13 can't splat a complex constant
            part = TensorType(t.shape, real_dtype(t.dtype))
            return self("complex", self.full(np.real(value), part), self.full(np.imag(value), part))
        c = self("constant", value=np.asarray(value, dtype=t.dtype).reshape(()))
        return c if t.shape == () else self("broadcast_in_dim", c, shape=t.shape, dims=())

    def div(self, a, b):
        """a / b, complex too (the IR's div is real: a conj(b) / |b|^2)."""
        if not is_complex(b.type.dtype):
            return self("div", a, b)
        re, im = self("real", b), self("imag", b)
        inv = self("div", self.full(1, re.type), self.add(self.mul(re, re), self.mul(im, im)))
        return self.mul(self.mul(a, self("complex", re, self("neg", im))), self("complex", inv, self.zeros(inv.type)))

    def zeros(self, t: TensorType) -> Value:
        return self.full(0, t)

    def like(self, v: Value, value) -> Value:
        return self.full(value, v.type)

    def add(self, a, b):
        return self("add", a, b)

    def mul(self, a, b):
        return self("mul", a, b)

    def scalar_to(self, s: Value, t: TensorType) -> Value:
        return s if t.shape == () else self("broadcast_in_dim", s, shape=t.shape, dims=())

    def i64(self, n: int) -> Value:
        return self("constant", value=np.asarray(n, dtype=np.int64))


RULES: dict[str, object] = {}


def rule(*names):
    def register(fn):
        for n in names:
            if n in RULES:
                raise ValueError(f"VJP rule for {n!r} registered twice")
            RULES[n] = fn
        return fn
    return register


def unary(fn):
    """A rule for y = f(x) written as the derivative's product with g: fn(e, x, y, g) -> dx."""
    return lambda e, op, ins, outs, g: [fn(e, ins[0], outs[0], g)]


# ---------------------------------------------------------------- elementwise

rule("neg")(unary(lambda e, x, y, g: e("neg", g)))
@rule("abs")
def _abs(e, op, ins, outs, g):   # 0 at 0, as JAX
    (x,), (y,) = ins, outs
    if not is_complex(x.type.dtype):
        return [e.mul(g, e("sign", x))]
    # |z| of a complex z: g conj(z) / |z| (JAX's convention), 0 at z = 0
    safe = e("select", e("compare", y, e.like(y, 0), direction="EQ"), e.like(y, 1), y)
    return [e.mul(to_complex(e, e("div", g, safe), x.type.dtype), conj(e, x))]
rule("exp")(unary(lambda e, x, y, g: e.mul(g, y)))
rule("expm1")(unary(lambda e, x, y, g: e.mul(g, e.add(y, e.like(y, 1)))))
rule("log")(unary(lambda e, x, y, g: e.div(g, x)))
rule("log1p")(unary(lambda e, x, y, g: e("div", g, e.add(x, e.like(x, 1)))))
rule("sqrt")(unary(lambda e, x, y, g: e.div(e.mul(g, e.like(y, 0.5)), y)))
rule("rsqrt")(unary(lambda e, x, y, g: e.mul(g, e("div", e.mul(y, e.like(y, -0.5)), x))))
rule("cbrt")(unary(lambda e, x, y, g: e("div", g, e.mul(e.like(y, 3), e.mul(y, y)))))
rule("sin")(unary(lambda e, x, y, g: e.mul(g, e("cos", x))))
rule("cos")(unary(lambda e, x, y, g: e("neg", e.mul(g, e("sin", x)))))
rule("tan")(unary(lambda e, x, y, g: e.mul(g, e.add(e.like(y, 1), e.mul(y, y)))))
rule("tanh")(unary(lambda e, x, y, g: e.mul(g, e("sub", e.like(y, 1), e.mul(y, y)))))
rule("logistic")(unary(lambda e, x, y, g: e.mul(g, e.mul(y, e("sub", e.like(y, 1), y)))))
rule("barrier")(unary(lambda e, x, y, g: g))


@rule("add")
def _add(e, op, ins, outs, g):
    return [g, g]


@rule("sub")
def _sub(e, op, ins, outs, g):
    return [g, e("neg", g)]


@rule("mul")
def _mul(e, op, ins, outs, g):
    a, b = ins
    return [e.mul(g, b), e.mul(a, g)]


@rule("div")
def _div(e, op, ins, outs, g):
    a, b = ins
    ga = e.div(g, b)
    return [ga, e("neg", e.mul(ga, outs[0]))]


def _trunc(e, q):
    return e("select", e("compare", q, e.like(q, 0), direction="LT"), e("ceil", q), e("floor", q))


@rule("rem")
def _rem(e, op, ins, outs, g):   # a - trunc(a / b) * b, as JAX
    a, b = ins
    return [g, e.mul(e("neg", g), _trunc(e, e("div", a, b)))]


@rule("pow")
def _pow(e, op, ins, outs, g):
    """JAX's conventions: d/da is 0 where b == 0; d/db is 0 where a == 0 (log(0) replaced by 0)."""
    a, b = ins
    y = outs[0]
    zero_b = e("compare", b, e.like(b, 0), direction="EQ")
    da = e("select", zero_b, e.like(a, 0), e.mul(b, e("pow", a, e("sub", b, e.like(b, 1)))))
    zero_a = e("compare", a, e.like(a, 0), direction="EQ")
    db = e.mul(e("log", e("select", zero_a, e.like(a, 1), a)), y)
    return [e.mul(g, da), e.mul(g, db)]


def _chooser(e, x, other, y, g):
    """max/min's share of g for operand x: all of it where x alone is chosen, half at a tie (JAX)."""
    picked = e("compare", x, y, direction="EQ")
    tie = e("compare", other, y, direction="EQ")
    share = e("select", picked, e("select", tie, e.like(g, 0.5), e.like(g, 1)), e.like(g, 0))
    return e.mul(g, share)


@rule("max", "min")
def _max_min(e, op, ins, outs, g):
    a, b = ins
    return [_chooser(e, a, b, outs[0], g), _chooser(e, b, a, outs[0], g)]


@rule("atan2")
def _atan2(e, op, ins, outs, g):
    a, b = ins
    r = e("div", g, e.add(e.mul(a, a), e.mul(b, b)))
    return [e.mul(r, b), e("neg", e.mul(r, a))]


@rule("select")
def _select(e, op, ins, outs, g):
    p, _, _ = ins
    z = e.zeros(g.type)
    return [None, e("select", p, g, z), e("select", p, z, g)]


@rule("convert")
def _convert(e, op, ins, outs, g):
    src = ins[0].type.dtype
    if not inexact(src):
        return [None]
    if is_complex(g.type.dtype) and not is_complex(src):    # float -> complex: the real part's
        return [e("convert", e("real", g), dtype=src)]
    if is_complex(src) and not is_complex(g.type.dtype):    # complex -> float keeps the real part
        return [to_complex(e, g, src)]
    return [e("convert", g, dtype=src)]


# ---------------------------------------------------------------- complex numbers
#
# JAX's convention: a rule is the transpose of the derivative as a linear map over the reals, so
# holomorphic ops keep their real rules (mul: g * b, exp: g * exp(z), dot products) and the
# gradient of |z|^2 is 2 conj(z). Complex values are differentiated as intermediates of functions
# of real arguments with real results (an FFT's power spectrum, a complex exponential's real
# part); the ops below and the holomorphic ones in COMPLEX_OK.

def inexact(dt) -> bool:
    return is_float(dt) or is_complex(dt)


def to_complex(e, x, dtype):
    """x (real) as the complex dtype `dtype`, imaginary part 0."""
    part = real_dtype(np.dtype(dtype))
    x = e("convert", x, dtype=part) if x.type.dtype != part else x
    return e("complex", x, e.zeros(x.type))


def conj(e, z):
    return e("complex", e("real", z), e("neg", e("imag", z)))


@rule("real")
def _real(e, op, ins, outs, g):
    return [to_complex(e, g, ins[0].type.dtype)]


@rule("imag")
def _imag(e, op, ins, outs, g):
    return [e("complex", e.zeros(g.type), e("neg", g))]


@rule("complex")
def _complex(e, op, ins, outs, g):
    return [e("real", g), e("neg", e("imag", g))]


# the ops whose rules hold for complex values (the frontend builds complex exp, log, sqrt, power
# and division from these)
COMPLEX_OK = frozenset({
    "add", "sub", "mul", "div", "neg", "exp", "log", "sqrt", "abs", "real", "imag", "complex", "convert",
    "reduce", "dot_general", "broadcast_in_dim", "reshape", "transpose", "slice", "dynamic_slice",
    "dynamic_update_slice", "concatenate", "pad", "reverse", "select", "take", "scatter_add", "barrier",
    "constant", "iota"})


@rule("bitcast")
def _bitcast(e, op, ins, outs, g):
    return [g if ins[0].type.dtype == outs[0].type.dtype else None]


# ---------------------------------------------------------------- shapes

def sum_to(e, g: Value, shape, dims) -> Value:
    """The transpose of broadcast_in_dim(x: shape -> g's shape, dims): sum over the new and the
    stretched axes."""
    out = g.type.shape
    axes = [d for d in range(len(out)) if d not in dims]
    axes += [d for i, d in enumerate(dims) if shape[i] == 1 and out[d] != 1]
    s = e("reduce", g, kind="add", axes=tuple(sorted(axes))) if axes else g
    return s if s.type.shape == tuple(shape) else e("reshape", s, shape=tuple(shape))


@rule("broadcast_in_dim")
def _broadcast(e, op, ins, outs, g):
    return [sum_to(e, g, ins[0].type.shape, op.attrs["dims"])]


@rule("reshape")
def _reshape(e, op, ins, outs, g):
    return [e("reshape", g, shape=ins[0].type.shape)]


@rule("transpose")
def _transpose(e, op, ins, outs, g):
    return [e("transpose", g, perm=tuple(int(i) for i in np.argsort(op.attrs["perm"])))]


@rule("reverse")
def _reverse(e, op, ins, outs, g):
    return [e("reverse", g, dims=op.attrs["dims"])]


@rule("slice")
def _slice(e, op, ins, outs, g):
    x = ins[0].type
    if g.type.size == 0:
        return [None]
    start, strides = op.attrs["start"], op.attrs["strides"]
    high = [d - (s + (n - 1) * k + 1) for d, s, n, k in zip(x.shape, start, g.type.shape, strides)]
    attrs = dict(low=tuple(start), high=tuple(high), interior=tuple(k - 1 for k in strides))
    if is_complex(x.dtype):   # each part padded: IREE 3.13 can't splat a complex padding value
        parts = [e(name, g) for name in ("real", "imag")]
        return [e("complex", *(e("pad", p, e.full(0, TensorType((), p.type.dtype)), **attrs) for p in parts))]
    return [e("pad", g, e("constant", value=np.zeros((), x.dtype)), **attrs)]


@rule("pad")
def _pad(e, op, ins, outs, g):
    x = ins[0].type
    low, interior = op.attrs["low"], op.attrs["interior"]
    start = tuple(low)
    limit = tuple(lo + (d - 1) * (i + 1) + 1 if d else lo for lo, d, i in zip(low, x.shape, interior))
    gx = e("slice", g, start=start, limit=limit, strides=tuple(i + 1 for i in interior))
    rest = e("reduce", g, kind="add", axes=tuple(range(g.type.ndim)))   # every pad element is the value
    rest = e("sub", rest, e("reduce", gx, kind="add", axes=tuple(range(g.type.ndim))))
    return [gx, rest]


@rule("concatenate")
def _concatenate(e, op, ins, outs, g):
    axis = op.attrs["axis"]
    out, at = [], 0
    for v in ins:
        t = v.type
        start = tuple(at if d == axis else 0 for d in range(t.ndim))
        limit = tuple(at + t.shape[d] if d == axis else t.shape[d] for d in range(t.ndim))
        out.append(e("slice", g, start=start, limit=limit, strides=(1,) * t.ndim))
        at += t.shape[axis]
    return out


# ---------------------------------------------------------------- reductions and contractions

@rule("reduce")
def _reduce(e, op, ins, outs, g):
    kind, axes = op.attrs["kind"], op.attrs["axes"]
    x = ins[0].type
    kept = tuple(d for d in range(x.ndim) if d not in axes)
    spread = lambda v: e("broadcast_in_dim", v, shape=x.shape, dims=kept)
    if kind == "add":
        return [spread(g)]
    if kind in ("max", "min"):   # shared equally between the ties, as JAX
        hit = e("compare", ins[0], spread(outs[0]), direction="EQ")
        ones = e("select", hit, e.full(1, x), e.zeros(x))
        count = e("reduce", ones, kind="add", axes=axes)
        return [e.mul(ones, spread(e("div", g, count)))]
    if kind == "mul":
        return [_prod_vjp(e, ins[0], axes, g, kept)]
    return NotImplemented


@rule("scan")
def _scan(e, op, ins, outs, g):
    """cumsum along the last axis: each input element reaches every later output, so its
    cotangent is the reversed cumulative sum of the output's. (Products and extrema are traced
    for autodiff as shift-and-combine steps, which have rules of their own.)"""
    if op.attrs["kind"] != "add":
        return NotImplemented
    flip = lambda v: e("reverse", v, dims=(1,))
    return [flip(e("scan", flip(g), kind="add", identity=op.attrs["identity"]))]


def _prod_vjp(e, x: Value, axes, g: Value, kept) -> Value | None:
    """d prod / d x_i = the product of the other elements, as exclusive prefix and suffix products
    (Hillis-Steele scans, log2(n) steps): exact where x has zeros (one zero: only its own
    element's derivative is nonzero; two: all zero), as JAX, and no division."""
    t = x.type
    if t.size == 0:
        return None
    perm = tuple(kept) + tuple(axes)
    moved_shape = tuple(t.shape[d] for d in perm)
    n = int(np.prod([t.shape[d] for d in axes], dtype=np.int64))
    rows = t.size // n
    flat = t.with_shape((rows, n))
    xt = x if perm == tuple(range(t.ndim)) else e("transpose", x, perm=perm)
    xf = e("reshape", xt, shape=(rows, n))

    def shift(v, k, reverse=False):   # v moved k columns to the right (left), ones coming in
        # (joined to a block of ones, not padded with ones: IREE 3.13 failed on the chain of pads
        # of slices, "'stream.yield' op used resource not listed in explicit captures", wherever
        # the product itself was not a result: pyjitc.grad(np.prod), a probe of autodiff)
        ones = e.full(1, flat.with_shape((rows, k)))
        if reverse:
            part = e("slice", v, start=(0, k), limit=(rows, n), strides=(1, 1))
            return e("concatenate", part, ones, axis=1)
        part = e("slice", v, start=(0, 0), limit=(rows, n - k), strides=(1, 1))
        return e("concatenate", ones, part, axis=1)

    def exclusive(reverse):
        y, k = shift(xf, 1, reverse) if n > 1 else e.full(1, flat), 1
        while k < n - 1:
            y = e.mul(y, shift(y, k, reverse))
            k *= 2
        return y
    others = e.mul(exclusive(False), exclusive(True))
    gk = e("reshape", g, shape=(rows,))
    gx = e.mul(others, e("broadcast_in_dim", gk, shape=(rows, n), dims=(0,)))
    gx = e("reshape", gx, shape=moved_shape)
    return gx if perm == tuple(range(t.ndim)) else e("transpose", gx, perm=tuple(int(i) for i in np.argsort(perm)))


def _ranges_like(*xs):
    start = 0
    for x in xs:
        yield list(range(start, start + len(x)))
        start += len(x)


def _dot_transpose_lhs(e, g, y, x_type, x_contract, y_contract, x_batch, y_batch, swap_ans=False):
    """JAX's _dot_general_transpose_lhs: the cotangent of x in dot_general(x, y)."""
    x_ndim, y_ndim = x_type.ndim, y.type.ndim
    x_kept = [i for i in range(x_ndim) if i not in x_contract and i not in x_batch]
    y_kept = [i for i in range(y_ndim) if i not in y_contract and i not in y_batch]
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    r = e("dot_general", g, y, lhs_contract=tuple(ans_y), rhs_contract=tuple(y_kept),
          lhs_batch=tuple(ans_batch), rhs_batch=tuple(y_batch))
    x_contract_by_y = [x_contract[i] for i in np.argsort(y_contract)]
    perm = tuple(int(i) for i in np.argsort(list(x_batch) + x_kept + x_contract_by_y))
    return r if perm == tuple(range(len(perm))) else e("transpose", r, perm=perm)


@rule("correlate")
def _correlate(e, op, ins, outs, g):
    """out[k] = sum_j a[k + j] v[j]: a's cotangent is g padded by n2 - 1 on each side correlated
    with v reversed, v's is a correlated with g."""
    a, v = ins
    n2 = v.type.shape[0]
    padded = e("pad", g, e("constant", value=np.zeros((), g.type.dtype)), low=(n2 - 1,), high=(n2 - 1,), interior=(0,))
    return [e("correlate", padded, e("reverse", v, dims=(0,))), e("correlate", a, g)]


@rule("dot_general")
def _dot(e, op, ins, outs, g):
    a, b = ins
    lc, rc, lb, rb = (list(op.attrs[k]) for k in ("lhs_contract", "rhs_contract", "lhs_batch", "rhs_batch"))
    return [_dot_transpose_lhs(e, g, b, a.type, lc, rc, lb, rb),
            _dot_transpose_lhs(e, g, a, b.type, rc, lc, rb, lb, swap_ans=True)]


# ---------------------------------------------------------------- indexing

@rule("dynamic_slice")
def _dynamic_slice(e, op, ins, outs, g):
    x, *starts = ins
    return [e("dynamic_update_slice", e.zeros(x.type), g, *starts)] + [None] * len(starts)


@rule("dynamic_update_slice")
def _dynamic_update_slice(e, op, ins, outs, g):
    x, u, *starts = ins
    gu = e("dynamic_slice", g, *starts, sizes=u.type.shape)   # read before g is written over:
    gx = e("dynamic_update_slice", g, e.zeros(u.type), *starts)   # an in-place update (native loops)
    return [gx, gu] + [None] * len(starts)


@rule("take")
def _take(e, op, ins, outs, g):
    x, idx = ins
    return [e("scatter_add", e.zeros(x.type), idx, g), None]


@rule("scatter_add")
def _scatter_add(e, op, ins, outs, g):
    x, idx, u = ins
    return [g, None, e("take", g, idx)]


@rule("scatter_max", "scatter_min")
def _scatter_extreme(e, op, ins, outs, g):
    """np.maximum.at / np.minimum.at: each position's cotangent shared equally between the entries
    that equal its result (the array's own and the updates'), as max/min share theirs; an update at
    no position (an index out of range, skipped) gets none."""
    x, idx, u = ins
    n = x.type.shape[0]
    valid = e("and", e("compare", idx, e.full(0, idx.type), direction="GE"),
              e("compare", idx, e.full(n, idx.type), direction="LT"))
    if u.type.ndim > 1:
        valid = e("broadcast_in_dim", valid, shape=u.type.shape, dims=(0,))
    hit_u = e("and", e("compare", u, e("take", outs[0], idx), direction="EQ"), valid)
    ones_u = e("select", hit_u, e.full(1, u.type), e.zeros(u.type))
    ones_x = e("select", e("compare", x, outs[0], direction="EQ"), e.full(1, x.type), e.zeros(x.type))
    count = e.add(ones_x, e("scatter_add", e.zeros(x.type), idx, ones_u))
    share = e("div", g, e("max", count, e.full(1, x.type)))     # (NaN results: no entry equals them)
    return [e.mul(share, ones_x), None, e.mul(e("take", share, idx), ones_u)]


@rule("sort")
def _sort(e, op, ins, outs, g):
    """Each element's cotangent goes back to where it came from: a scatter along `axis` by the
    sorting permutation (sorted again with its indices when the forward sort had none)."""
    x = ins[0].type
    axis = op.attrs["axis"]
    if x.size == 0:
        return [None]
    idx = outs[1] if op.attrs["with_index"] else e("sort", ins[0], axis=axis, with_index=True)[1]
    perm = tuple(d for d in range(x.ndim) if d != axis) + (axis,)
    moved = lambda v: v if perm == tuple(range(x.ndim)) else e("transpose", v, perm=perm)
    n = x.shape[axis]
    rows = x.size // n
    row_start = e("mul", e("iota", shape=(rows, n), dim=0, dtype=np.int64), e.full(n, TensorType((rows, n), np.dtype(np.int64))))
    flat = e("reshape", e.add(e("reshape", moved(idx), shape=(rows, n)), row_start), shape=(x.size,))
    gflat = e("reshape", moved(g), shape=(x.size,))
    gx = e("scatter_add", e.zeros(TensorType((x.size,), x.dtype)), flat, gflat)
    gx = e("reshape", gx, shape=tuple(x.shape[d] for d in perm))
    return [gx if perm == tuple(range(x.ndim)) else e("transpose", gx, perm=tuple(int(i) for i in np.argsort(perm)))]


def vjp(e: Emit, op: Op, ins, outs, cts):
    """Cotangents of `op`'s operands given its results' cotangents `cts` (None: zero)."""
    fn = RULES.get(op.name)
    if fn is None:
        return NotImplemented
    return fn(e, op, ins, outs, cts[0])   # (sort's second result, its indices, has no cotangent)
