"""scalar_loop: a run-time loop whose body is scalar work, lowered as native code.

A `while` whose ops (nested loops and ifs included) compute on single values and read or write
single elements of arrays becomes one `flow.dispatch.region` holding an `scf.while` over
scalars (`arith`, `math`, `tensor.extract`/`tensor.insert`): IREE compiles it into one
dispatch, so the loop runs as a native loop (a few ns per step) instead of a `stablehlo.while`
that IREE runs on the host, dispatching every step (~17 us per step on local-sync, measured in
bench/bench_loops.py). Loops whose bodies do array work stay `stablehlo.while` (each step is a
parallel dispatch anyway); lowering/native_loops.py decides, op by op.

Semantics follow IREE's own StableHLO -> scalar mapping (StableHLO's linalg conversion,
MapStablehloToScalarOp), so a loop computes the same bits either way: integer division by 0
gives -1, x % 0 gives x, shifts by the bit width or more saturate, max/min propagate NaN,
float != is unordered, and dynamic_slice start indices are clamped into the array (left out
where the index is proven in range: the frontend's `in_bounds`, lowering/ranges.py).

Inside the region a value of size 1 is a scalar register (bool as i1) and a larger array is a
tensor in its storage type (bool as i8, unsigned as signless): conversions happen at the
region's edge. An array the loop writes must be updated in place: every carried array is
copied once into the region's output on entry, and native_loops accepts a loop only when each
update consumes the latest version of its array (reads before the write, no other use after),
so bufferization needs no temporary buffers (IREE allows 32 KiB of stack per dispatch)."""
from __future__ import annotations

import threading

from typing import Any

import numpy as np
from iree.compiler import ir

from ..ir.dims import NeedsStaticShape, is_symbolic
from ..ir.graph import Block, Op
from ..ir.ops import _expm1_f64, _log1p_f64
from .native_loops import ELEMENTWISE, SHAPE_ONLY, _free_values, _size1
from .ranges import Ranges
from . import scalar_arrays, scalar_complex
from .in_place import OVER_ENTRY, newest_version, yielded_buffer
from .scalar_arrays import Lazy, lower_vector, register_type

F64 = np.dtype(np.float64)


# which loops: lowering/native_loops.py
# ---------------------------------------------------------------- types at the region's edge

def storage_type(dtype) -> ir.Type:
    """The element type arrays of `dtype` have inside the region (bool stored as i8)."""
    dt = np.dtype(dtype)
    return ir.IntegerType.get_signless(8) if dt.kind == "b" else register_type(dt)


def storage_tensor(t) -> ir.RankedTensorType:
    """An array's tensor inside the region: its axes of length 1 dropped (IREE 3.13's
    CollapseDimensionsPass failed on loops over tensors with them: "operand #0 does not dominate
    this use" for `s[:, 0] += A[:, j]` with s of shape (n, 1), or a row vector b[0, :])."""
    if is_symbolic(t.shape):
        raise NeedsStaticShape(f"a native loop over {t} (run-time sizes)")
    return ir.RankedTensorType.get([d for d in t.shape if d != 1], storage_type(t.dtype))


def at(shape, indices) -> list:
    """`indices` into an array of `shape` as indices into its region tensor (storage_tensor)."""
    return [i for i, d in zip(indices, shape) if d != 1]


# ---------------------------------------------------------------- the builder

CMPF = {"EQ": 1, "GT": 2, "GE": 3, "LT": 4, "LE": 5, "NE": 13}          # oeq ogt oge olt ole une
CMPI_SIGNED = {"EQ": 0, "NE": 1, "LT": 2, "LE": 3, "GT": 4, "GE": 5}
CMPI_UNSIGNED = {"EQ": 0, "NE": 1, "LT": 6, "LE": 7, "GT": 8, "GE": 9}
FASTMATH_NONE = "#arith.fastmath<none>"


class Scalar:
    """Builds arith / math / tensor / scf ops at the current insertion point, at `loc`."""

    def __init__(self, loc):
        self.loc = loc

    def op(self, name, operands, result_types, attrs=None, regions=0) -> ir.Operation:
        return ir.Operation.create(name, results=list(result_types), operands=list(operands),
                                   attributes=attrs or {}, regions=regions, loc=self.loc)

    def one(self, name, *operands, type=None, **attrs) -> ir.Value:
        return self.op(name, operands, [type or operands[0].type], attrs).result

    def fop(self, name, *operands, type=None) -> ir.Value:   # a float op (takes fastmath flags)
        return self.one(name, *operands, type=type, fastmath=ir.Attribute.parse(FASTMATH_NONE))

    def const(self, value, type: ir.Type) -> ir.Value:
        if isinstance(type, ir.ComplexType):
            return scalar_complex.constant(self, value, type)
        if isinstance(type, ir.FloatType):
            attr = ir.FloatAttr.get(type, float(value))
        else:
            width = ir.IntegerType(type).width
            v = int(value) & ((1 << width) - 1)
            if width > 1 and v >= 1 << (width - 1):
                v -= 1 << width        # the two's-complement reading of the bits
            attr = ir.IntegerAttr.get(type, v)
        return self.op("arith.constant", [], [type], {"value": attr}).result

    def index(self, v: ir.Value) -> ir.Value:
        return self.one("arith.index_cast", v, type=ir.IndexType.get())

    def cmpi(self, pred: int, a, b) -> ir.Value:
        return self.one("arith.cmpi", a, b, type=ir.IntegerType.get_signless(1),
                        predicate=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), pred))

    def cmpf(self, pred: int, a, b) -> ir.Value:
        return self.one("arith.cmpf", a, b, type=ir.IntegerType.get_signless(1),
                        predicate=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), pred),
                        fastmath=ir.Attribute.parse(FASTMATH_NONE))

    def select(self, c, a, b) -> ir.Value:
        return self.one("arith.select", c, a, b, type=a.type)

    def to_register(self, v: ir.Value, dtype) -> ir.Value:
        """A stored element (bool as i8) as a register value."""
        if np.dtype(dtype).kind == "b":
            return self.cmpi(1, v, self.const(0, v.type))
        return v

    def to_storage(self, v: ir.Value, dtype) -> ir.Value:
        if np.dtype(dtype).kind == "b":
            return self.one("arith.extui", v, type=storage_type(dtype))
        return v

    def extract(self, tensor: ir.Value, indices) -> ir.Value:
        return self.op("tensor.extract", [tensor, *indices], [ir.RankedTensorType(tensor.type).element_type]).result

    def insert(self, scalar, tensor: ir.Value, indices) -> ir.Value:
        return self.op("tensor.insert", [scalar, tensor, *indices], [tensor.type]).result

    def clamped_indices(self, starts, shape, sizes) -> list:
        """StableHLO's dynamic_slice rule: each start clamped into [0, dim - size]."""
        out = []
        for s, d, k in zip(starts, shape, sizes):
            lo, hi = self.const(0, s.type), self.const(d - k, s.type)
            s = self.one("arith.maxsi", s, lo)
            out.append(self.index(self.one("arith.minsi", s, hi)))
        return out

    def yield_(self, name, values):
        self.op(name, values, [])


# ---------------------------------------------------------------- scalar rules, one per primitive

def _kind(op: Op, k: int = 0) -> str:
    return op.operands[k].type.dtype.kind


def _float_or_int(fname, iname):
    def rule(S, op, args):
        return S.fop(fname, *args) if _kind(op) == "f" else S.one(iname, *args)
    return rule


def _math(name):
    return lambda S, op, args: S.fop(name, *args)


def _neg(S, op, args):
    (x,) = args
    if _kind(op) == "f":
        return S.fop("arith.negf", x)
    return S.one("arith.subi", S.const(0, x.type), x)


def _abs(S, op, args):
    (x,) = args
    if _kind(op) == "f":
        return S.one("math.absf", x)
    zero = S.const(0, x.type)
    return S.select(S.cmpi(CMPI_SIGNED["GE"], x, zero), x, S.one("arith.subi", zero, x))


def _sign(S, op, args):
    (x,) = args
    zero = S.const(0, x.type)
    if _kind(op) == "f":
        nonzero = S.one("arith.uitofp", S.cmpf(6, x, zero), type=x.type)        # one: ordered !=
        signed = S.one("math.copysign", nonzero, x)
        return S.select(S.cmpf(14, x, x), x, signed)                             # uno: NaN stays
    width = ir.IntegerType(x.type).width
    shifted = S.one("arith.shrsi", x, S.const(width - 1, x.type))
    return S.select(S.cmpi(0, x, zero), zero, S.one("arith.ori", shifted, S.const(1, x.type)))


def _not(S, op, args):
    (x,) = args
    return S.one("arith.xori", x, S.const(-1, x.type))


def _logistic(S, op, args):
    (x,) = args
    one = S.const(1.0, x.type)
    return S.fop("arith.divf", one, S.fop("arith.addf", S.fop("math.exp", S.fop("arith.negf", x)), one))


def _safe_int_div(S, op, args, on_zero, on_overflow, signed_op, unsigned_op):
    """IREE's integer division rules: x / 0 and x % 0 and INT_MIN / -1 are defined."""
    a, b = args
    zero, one = S.const(0, a.type), S.const(1, a.type)
    b_zero = S.cmpi(0, b, zero)
    if _kind(op) in "ub":
        q = S.one(unsigned_op, a, S.select(b_zero, one, b))
        return S.select(b_zero, on_zero(a), q)
    width = ir.IntegerType(a.type).width
    overflow = S.one("arith.andi", S.cmpi(0, a, S.const(-(1 << (width - 1)), a.type)),
                     S.cmpi(0, b, S.const(-1, a.type)))
    q = S.one(signed_op, a, S.select(S.one("arith.ori", b_zero, overflow), one, b))
    return S.select(b_zero, on_zero(a), S.select(overflow, on_overflow(a), q))


def _div(S, op, args):
    if _kind(op) == "f":
        return S.fop("arith.divf", *args)
    width = ir.IntegerType(args[0].type).width
    return _safe_int_div(S, op, args, lambda a: S.const(-1, a.type),
                         lambda a: S.const(-(1 << (width - 1)), a.type), "arith.divsi", "arith.divui")


def _rem(S, op, args):
    if _kind(op) == "f":
        return S.fop("arith.remf", *args)
    return _safe_int_div(S, op, args, lambda a: a, lambda a: S.const(0, a.type), "arith.remsi", "arith.remui")


def _minmax(fname, sname, uname):
    def rule(S, op, args):
        kind = _kind(op)
        if kind == "f":
            return S.fop(fname, *args)
        return S.one(sname if kind == "i" else uname, *args)
    return rule


def _shift(name, saturated):
    def rule(S, op, args):
        x, s = args
        width = ir.IntegerType(x.type).width
        in_range = S.cmpi(CMPI_UNSIGNED["GT"], S.const(width, x.type), s)
        return S.select(in_range, S.one(name, x, s), saturated(S, x, width))
    return rule


def _compare(S, op, args, direction):
    kind = _kind(op)
    if kind == "f":
        return S.cmpf(CMPF[direction], *args)
    table = CMPI_SIGNED if kind == "i" else CMPI_UNSIGNED
    return S.cmpi(table[direction], *args)


def _convert(S, op, args, dtype):
    (x,) = args
    src, dst = op.operands[0].type.dtype, np.dtype(dtype)
    to = register_type(dst)
    if src == dst:
        return x
    if dst.kind == "b":
        return S.cmpf(13, x, S.const(0, x.type)) if src.kind == "f" else S.cmpi(1, x, S.const(0, x.type))
    if src.kind == "b":     # select(b, 1, 0), as the StableHLO lowering writes it
        return S.select(x, S.const(1, to), S.const(0, to))
    if src.kind == "f" and dst.kind == "f":
        return S.one("arith.extf" if dst.itemsize > src.itemsize else "arith.truncf", x, type=to)
    if dst.kind == "f":
        return S.one("arith.uitofp" if src.kind == "u" else "arith.sitofp", x, type=to)
    if src.kind == "f":
        return S.one("arith.fptoui" if dst.kind == "u" else "arith.fptosi", x, type=to)
    if dst.itemsize == src.itemsize:
        return x
    if dst.itemsize < src.itemsize:
        return S.one("arith.trunci", x, type=to)
    return S.one("arith.extui" if src.kind == "u" else "arith.extsi", x, type=to)


def _constant(S, op, args, value):
    v = np.asarray(value).reshape(())
    return S.const(v.item() if v.dtype.kind != "u" else int(v), register_type(v.dtype))


_HLO_FLOAT = {"add": "arith.addf", "subtract": "arith.subf", "multiply": "arith.mulf",
              "divide": "arith.divf", "log": "math.log", "exponential": "math.exp"}


def _accurate_f64(name, rewrite):
    """float64 log1p / expm1: the same rewrite the StableHLO lowering uses (ir.ops)."""
    def rule(S, op, args):
        (x,) = args
        if op.operands[0].type.dtype != F64:
            return S.fop(name, x)
        hop = lambda n, *xs: S.select(*xs) if n == "select" else S.fop(_HLO_FLOAT[n], *xs)
        return rewrite(hop, lambda a, b: S.cmpf(CMPF["EQ"], a, b), lambda v: S.const(v, x.type), x)
    return rule


def _pow(S, op, args):
    if _kind(op) == "f":
        return S.fop("math.powf", *args)
    return _int_pow(S, *args)


def _int_pow(S, x, e):
    """x ** e on integers by squaring, as NumPy computes it (wrapping products; e >= 0, which the
    frontend checks): an scf.while over e's bits. IREE 3.13 has no lowering for math.ipowi, so
    `x[k] = k ** 2` kept its loop on the host (1e5 steps: 2.5 s)."""
    t = x.type
    loop = S.op("scf.while", [S.const(1, t), x, e], [t, t, t], regions=2)
    before = loop.regions[0].blocks.append(t, t, t)
    with ir.InsertionPoint(before):
        r, b, k = before.arguments
        S.op("scf.condition", [S.cmpi(CMPI_SIGNED["NE"], k, S.const(0, t)), r, b, k], [])
    after = loop.regions[1].blocks.append(t, t, t)
    with ir.InsertionPoint(after):
        r, b, k = after.arguments
        odd = S.cmpi(CMPI_SIGNED["NE"], S.one("arith.andi", k, S.const(1, t)), S.const(0, t))
        S.yield_("scf.yield", [S.select(odd, S.one("arith.muli", r, b), r), S.one("arith.muli", b, b),
                               S.one("arith.shrui", k, S.const(1, t))])
    return loop.results[0]


def _is_finite(S, op, args):
    (x,) = args
    return S.cmpf(6, S.one("math.absf", x), S.const(np.inf, x.type))     # one: ordered !=


UNARY_RULES = {
    "neg": _neg, "abs": _abs, "sign": _sign, "not": _not, "logistic": _logistic,
    "exp": _math("math.exp"), "expm1": _accurate_f64("math.expm1", _expm1_f64), "log": _math("math.log"),
    "log1p": _accurate_f64("math.log1p", _log1p_f64), "sqrt": _math("math.sqrt"), "rsqrt": _math("math.rsqrt"),
    "cbrt": _math("math.cbrt"), "sin": _math("math.sin"), "cos": _math("math.cos"),
    "tan": _math("math.tan"), "tanh": _math("math.tanh"), "floor": _math("math.floor"),
    "ceil": _math("math.ceil"), "round_even": _math("math.roundeven"),
}
BINARY_RULES = {
    "add": _float_or_int("arith.addf", "arith.addi"),     # on bool: addi, as IREE lowers it
    "sub": _float_or_int("arith.subf", "arith.subi"),
    "mul": _float_or_int("arith.mulf", "arith.muli"),
    "div": _div, "rem": _rem, "pow": _pow,
    "max": _minmax("arith.maximumf", "arith.maxsi", "arith.maxui"),
    "min": _minmax("arith.minimumf", "arith.minsi", "arith.minui"),
    "atan2": _math("math.atan2"),
    "and": lambda S, op, args: S.one("arith.andi", *args),
    "or": lambda S, op, args: S.one("arith.ori", *args),
    "xor": lambda S, op, args: S.one("arith.xori", *args),
    "shift_left": _shift("arith.shli", lambda S, x, w: S.const(0, x.type)),
    "shift_right_logical": _shift("arith.shrui", lambda S, x, w: S.const(0, x.type)),
    "shift_right_arithmetic": _shift("arith.shrsi", lambda S, x, w: S.one("arith.shrsi", x, S.const(w - 1, x.type))),
}


def _elementwise_rule(name):
    if name in UNARY_RULES:
        return UNARY_RULES[name]
    if name in BINARY_RULES:
        return BINARY_RULES[name]
    return {"compare": _compare, "convert": _convert, "is_finite": _is_finite,
            "select": lambda S, op, args: S.select(*args),
            "bitcast": lambda S, op, args, dtype: S.one("arith.bitcast", *args, type=register_type(dtype)),
            }[name]


# ---------------------------------------------------------------- the region

class _Lowering:
    """Lowers IR blocks into the region: `env` maps IR value ids to region values."""

    def __init__(self, env: dict, location, ranges: Ranges):
        self.env = env
        self.location = location
        self.ranges = ranges     # compares decided and accesses proven in range (lowering/ranges.py)

    def block(self, block: Block) -> list:
        for op in block.ops:
            S = Scalar(self.location(op))
            args = [self.env[v.id] for v in op.operands]
            out = self.lower_op(S, op, args)
            for v, r in zip(op.results, out if isinstance(out, list) else [out]):
                self.env[v.id] = r
        return [self.env[v.id] for v in block.results]

    def lower_op(self, S: Scalar, op: Op, args):
        name = op.name
        if name == "dynamic_update_slice":
            vector = not _size1(op.operands[1])
        elif name == "barrier":
            vector = isinstance(args[0], Lazy)
        else:
            vector = name not in ("if", "while") and (
                any(isinstance(a, Lazy) for a in args) or any(not _size1(v) for v in op.results)
                or name in ("reduce", "dot_general", "take"))
        if vector:   # array work, element by element (lowering/scalar_arrays.py)
            return lower_vector(self, S, op, args, _elementwise_rule)
        if name == "compare" and op.results[0].id in self.ranges.decided:   # an index check that can't fire
            return S.const(int(self.ranges.decided[op.results[0].id]), ir.IntegerType.get_signless(1))
        if name in ELEMENTWISE and scalar_complex.is_complex_op(op):
            return scalar_complex.rule(S, op, args, **op.attrs)
        if name in ELEMENTWISE:
            return _elementwise_rule(name)(S, op, args, **op.attrs)
        if name == "constant":
            return _constant(S, op, args, **op.attrs)
        if name == "iota":
            return S.const(0, register_type(op.results[0].type.dtype))
        if name in SHAPE_ONLY or name == "barrier":
            return args[0]
        x = op.operands[0].type
        if name == "slice":
            if _size1(op.operands[0]):
                return args[0]
            idx = [_index_const(S, int(s)) for s in op.attrs["start"]]
            return S.to_register(S.extract(args[0], at(x.shape, idx)), x.dtype)
        if name == "dynamic_slice":
            if _size1(op.operands[0]):
                return args[0]
            idx = self.indices(S, op, args[1:], x.shape, op.attrs["sizes"])
            return S.to_register(S.extract(args[0], at(x.shape, idx)), x.dtype)
        if name == "dynamic_update_slice":
            if _size1(op.operands[0]):
                return args[1]
            idx = self.indices(S, op, args[2:], x.shape, op.operands[1].type.shape)
            out = S.insert(S.to_storage(args[1], x.dtype), args[0], at(x.shape, idx))
            scalar_arrays.supersede(args[0], out)
            return out
        if name == "if":
            return self.if_(S, op, args)
        if name == "while":
            return self.while_(S, op, args)
        raise AssertionError(f"{name}: no scalar form (eligible() should have refused the loop)")

    def indices(self, S: Scalar, op: Op, starts, shape, sizes) -> list:
        """The start indices: as given where they are proven in range (by the frontend:
        `in_bounds`; or by lowering/ranges.py), else clamped as StableHLO's dynamic_slice says."""
        if op.attrs.get("in_bounds") or op.results[0].id in self.ranges.in_bounds:
            return [S.index(s) for s in starts]
        return S.clamped_indices(starts, shape, sizes)

    @staticmethod
    def types(values) -> list:
        return [register_type(v.type.dtype) if _size1(v) else storage_tensor(v.type) for v in values]

    def if_(self, S: Scalar, op: Op, args):
        result = S.op("scf.if", args, self.types(op.results), regions=2)
        for k, (mlir_region, block) in enumerate(zip(result.regions, op.regions)):
            with ir.InsertionPoint(mlir_region.blocks.append()):
                results = list(self.block(block))
                anew = [i for i, r in enumerate(results) if isinstance(r, Lazy)]
                if anew:   # computed anew here: written over what the other branch yields (in_place.check_lazy)
                    other = op.regions[1 - k]
                    new = scalar_arrays.rewrite(S, [self.env[yielded_buffer(other, other.results[i]).id] for i in anew],
                                                [results[i] for i in anew], op.results[anew[0]].type)
                    for i, value in zip(anew, new):
                        results[i] = value
                S.yield_("scf.yield", results)
        return list(result.results)

    def while_(self, S: Scalar, op: Op, inits):
        """An scf.while carrying the updated arrays first, then the scalars; an array the body
        yields unchanged is not carried (read where it is). MLIR's canonicalizer drops carried
        values the body does not read (the loop flag, often), shifting the later positions, and
        bufferization needs each array at the same position before and after the condition."""
        cond, body = op.regions
        n = len(op.results)
        fixed = [i for i in range(n) if not _size1(op.results[i]) and body.results[i] is body.params[i]]
        order = ([i for i in range(n) if not _size1(op.results[i]) and i not in fixed]
                 + [i for i in range(n) if _size1(op.results[i])])
        for i in fixed:
            self.env[cond.params[i].id] = self.env[body.params[i].id] = inits[i]
        types = [self.types(op.results)[i] for i in order]
        loop = S.op("scf.while", [inits[i] for i in order], types, regions=2)
        before = loop.regions[0].blocks.append(*types)
        with ir.InsertionPoint(before):
            self.env.update((cond.params[i].id, a) for i, a in zip(order, before.arguments))
            (flag,) = self.block(cond)
            S.op("scf.condition", [flag, *before.arguments], [])
        after = loop.regions[1].blocks.append(*types)
        with ir.InsertionPoint(after):
            self.env.update((body.params[i].id, a) for i, a in zip(order, after.arguments))
            for i, value in _pinned(cond).items():   # the body runs only where these hold
                if i in order:
                    self.env[body.params[i].id] = S.const(value, register_type(body.params[i].type.dtype))
            results = self.block(body)
            anew = [i for i in order if isinstance(results[i], Lazy)]
            if anew:   # carried arrays computed anew: written over in place (scalar_arrays.rewrite)
                over = [body.params[i] if body in OVER_ENTRY else newest_version(body, body.params[i]) for i in anew]
                new = scalar_arrays.rewrite(S, [self.env[v.id] for v in over], [results[i] for i in anew],
                                            body.params[anew[0]].type)
                results = list(results)
                for i, value in zip(anew, new):
                    results[i] = value
            S.yield_("scf.yield", [results[i] for i in order])
        out = list(inits)
        for i, r in zip(order, loop.results):
            out[i] = r
        return out


def _pinned(cond: Block) -> dict[int, Any]:
    """{i: c} for each carried scalar the loop's condition requires to equal a constant (`go and
    err == 0`: the loop stops at a failed check, frontend/regions.py): the body, which runs only
    while the condition holds, reads the constant. The error code is then no longer threaded
    from one iteration to the next through every checked access."""
    producers = {v.id: op for op in cond.ops for v in op.results}
    params = {p.id: i for i, p in enumerate(cond.params)}
    out = {}

    def walk(v):
        op = producers.get(v.id)
        if op is None:
            return
        if op.name == "and":
            for x in op.operands:
                walk(x)
        elif op.name == "compare" and op.attrs.get("direction") == "EQ":
            a, b = op.operands
            for p, c in ((a, b), (b, a)):
                k = producers.get(c.id)
                if p.id in params and _size1(p) and k is not None and k.name == "constant":
                    out[params[p.id]] = np.asarray(k.attrs["value"]).reshape(()).item()
    if len(cond.results) == 1 and cond.results[0].type.dtype == np.bool_:
        walk(cond.results[0])
    return out


def lower(ctx, op: Op, operands, env: dict, location) -> list:
    """`op` (an eligible while) as one flow.dispatch.region; `operands`/`env`: the StableHLO
    values of its operands and of everything it captures; returns its results as StableHLO values."""
    S = Scalar(ctx.loc)
    free = _free_values(op)
    outside = {}     # free IR value id -> its value in storage type, converted before the region
    constants = {}   # free single values that are constants: made inside the region (through a
    # barrier, IREE materialised each in a buffer of its own and read it back before the
    # dispatch: three more submissions and waits per call, about 6 us of a 10 us call)
    for v in free:
        c = _constant_value(env[v.id]) if _size1(v) else None
        if c is not None:
            constants[v.id] = c
            continue
        # behind a barrier: IREE would clone a cheap producer (a conversion, a
        # splat) into the region, and a linalg op there makes it distribute the dispatch over
        # workgroups, which a loop writing outside that distribution fails ("failed on workgroup
        # distribution verification")
        outside[v.id] = ctx.barrier(_to_storage_tensor(ctx, env[v.id], v.type))
    # a region reading single values only would have no buffer operand: IREE passes them as
    # push constants, and then clones such an operand-less dispatch into each of its consumers'
    # execution regions; one consumer outside every region (a host-side select on its result)
    # failed to compile ("'stream.async.dispatch' op : streamable op expected to be in an
    # execution region": the gradient of a scalar loop counting its trips; with constants only,
    # "invalid Read access range ... length > resource size" on one of its results). One single
    # value travels as two elements (one element folds back to a push constant), a real operand.
    carrier = None
    if all(_size1(v) for v in free if v.id in outside):
        carrier = next((v for v in free if v.id in outside), None) or next((v for v in free if v.id in constants), None)
    if carrier is not None:
        constants.pop(carrier.id, None)
        value = _to_storage_tensor(ctx, env[carrier.id], carrier.type)
        pair = ir.RankedTensorType.get([2], ir.RankedTensorType(value.type).element_type)
        outside[carrier.id] = ctx.barrier(ctx.op("stablehlo.broadcast_in_dim", [value], [pair],
                                                 {"broadcast_dimensions": ir.DenseI64ArrayAttr.get([])}).result)
    cond, body = op.regions
    # arrays the loop passes through unchanged stay outside: its results are its operands
    moved = [i for i, v in enumerate(op.results) if _size1(v) or body.results[i] is not body.params[i]]
    result_types = [storage_tensor(op.results[i].type) for i in moved]
    region_op = S.op("flow.dispatch.region", [], result_types,
                     {"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0])}, regions=2)
    with ir.InsertionPoint(region_op.regions[0].blocks.append()):
        inner = {}
        for v in free:
            if v.id in constants:
                inner[v.id] = S.const(constants[v.id], register_type(v.type.dtype))
                continue
            value = outside[v.id]
            if _size1(v):
                value = S.to_register(S.extract(value, [_index_const(S, 0)] if v is carrier else []), v.type.dtype)
            inner[v.id] = value
        # (each copy numbered apart from every other in the module: two loops copying one input
        # got equal regions, which CSE merged into one buffer for both loops; with neither
        # running, IREE failed at run time, "ref is null": statement fuzzer seed 7013 program 3243)
        inits = [inner[v.id] if _size1(v) or i not in moved else _copy(S, inner[v.id], v.type, ctx.new_number())
                 for i, v in enumerate(op.operands)]
        with scalar_arrays.superseding():
            results = _Lowering(inner, location, Ranges(op, free, lambda v: _constant_value(env[v.id]))).while_(S, op, inits)
        out = []
        for i in moved:
            r, v = results[i], op.results[i]
            if _size1(v):
                r = S.op("tensor.from_elements", [S.to_storage(r, v.type.dtype)], [storage_tensor(v.type)]).result
            out.append(r)
        S.op("flow.return", out, [])
    # the second region (the workload count) stays empty: IREE computes it
    results = list(region_op.results)
    arrays = [k for k, i in enumerate(moved) if not _size1(op.results[i])]
    singles = [k for k, i in enumerate(moved) if _size1(op.results[i])]
    if arrays and singles:
        # where nothing after the loop reads any of its arrays (dist in a search that returns
        # from inside the loop), IREE drops those results and the arrays live on the dispatch's
        # stack (32 KiB: "exceeded stack allocation limit", 20,000 int32); this barrier holds
        # them together with the loop's single values, and is put to use only then
        # (keep_arrays_alive, once the function is built); otherwise it is dead and dropped
        keep = S.op("stablehlo.optimization_barrier", [results[k] for k in arrays + singles],
                    [results[k].type for k in arrays + singles])
        getattr(_kept, "loops", []).append((region_op, keep, [results[k] for k in singles], len(arrays)))
    if len(arrays) > 1:
        # the arrays held together: IREE drops a result nothing reads, and the array behind it
        # then lives on the dispatch's stack, which overflowed IREE's 32 KiB limit for a loop
        # working on three 60x60 scratch arrays (np.empty_like, only u returned: an ADI sweep).
        # Arrays only: with the loop's single values in it too, IREE 3.13 failed the gradient of
        # np.linalg.solve at run time ("indirect buffer reference slot 0 is out range")
        held = S.op("stablehlo.optimization_barrier", [results[k] for k in arrays], [results[k].type for k in arrays])
        for k, r in zip(arrays, held.results):
            results[k] = r
    values = list(operands)
    for i, r in zip(moved, results):
        values[i] = _from_storage_tensor(ctx, r, op.results[i].type)
    return values


# the function being lowered on this thread (compiles may run on several): its native loops as
# (region, keep barrier, the region's single-value results, how many arrays)
_kept = threading.local()


def begin_function() -> None:
    _kept.loops = []


def keep_arrays_alive() -> None:
    """Once a function is built: for each native loop none of whose arrays is read after it,
    the loop's single values are read through its keep barrier, so IREE gives the arrays buffers."""
    loops, _kept.loops = getattr(_kept, "loops", []), []
    for region, keep, singles, n_arrays in loops:
        keep = keep.operation
        if any(_read(r, keep) for r in region.results if not any(r == v for v in singles)):
            continue
        for k, single in enumerate(singles):   # (all of them: whichever the function goes on to use)
            single.replace_all_uses_except(keep.results[n_arrays + k], keep)


def _read(value: ir.Value, keep) -> bool:
    """Whether anything but `keep` reads `value`, through the barrier holding a loop's arrays
    together (whose results may be unread in turn)."""
    for use in value.uses:
        owner = use.owner.operation if hasattr(use.owner, "operation") else use.owner
        if owner == keep:
            continue
        if owner.name == "stablehlo.optimization_barrier" and any(_read(r, keep) for r in owner.results):
            return True
        if owner.name != "stablehlo.optimization_barrier":
            return True
    return False


def _constant_value(value: ir.Value):
    """The number a StableHLO scalar constant holds, or None (anything else)."""
    owner = value.owner
    if getattr(owner, "name", None) != "stablehlo.constant":
        return None
    attr = owner.attributes["value"]
    if not isinstance(attr, (ir.DenseIntElementsAttr, ir.DenseFPElementsAttr)) or not attr.is_splat:
        return None
    value = attr.get_splat_value()
    if isinstance(value, ir.FloatAttr):
        return value.value
    if ir.IntegerType(value.type).width == 1:
        return bool(ir.BoolAttr(value).value) if isinstance(value, ir.BoolAttr) else bool(ir.IntegerAttr(value).value)
    return ir.IntegerAttr(value).value


def _index_const(S: Scalar, i: int) -> ir.Value:
    return S.op("arith.constant", [], [ir.IndexType.get()], {"value": ir.IntegerAttr.get(ir.IndexType.get(), i)}).result


def _copy(S: Scalar, tensor: ir.Value, t, number: int) -> ir.Value:
    """A fresh, writable copy of an array entering the loop (the loop updates it in place), by
    a loop nest over its elements (a linalg op here would make IREE distribute the dispatch)."""
    # each empty tensor its own (an attribute keeps CSE from merging equal ones: carried arrays
    # sharing one buffer would need copies the dispatch has no room for)
    empty = S.op("tensor.empty", [], [tensor.type], {"pyjitc.buffer": ir.IntegerAttr.get(
        ir.IntegerType.get_signless(64), number)}).result
    if t.size == 0:
        return empty

    def nest(dim, indices, acc):
        if dim == len(t.shape):
            kept = at(t.shape, indices)
            return S.insert(S.extract(tensor, kept), acc, kept)
        loop = S.op("scf.for", [_index_const(S, 0), _index_const(S, t.shape[dim]), _index_const(S, 1), acc],
                    [acc.type], regions=1)
        block = loop.regions[0].blocks.append(ir.IndexType.get(), acc.type)
        with ir.InsertionPoint(block):
            S.yield_("scf.yield", [nest(dim + 1, indices + [block.arguments[0]], block.arguments[1])])
        return loop.result
    return nest(0, [], empty)


def _to_storage_tensor(ctx, value: ir.Value, t) -> ir.Value:
    """Outside the region: bool arrays as i8, unsigned as signless, axes of length 1 dropped."""
    target = storage_tensor(t)
    if 1 in t.shape:
        value = ctx.hlo("stablehlo.reshape", value, type=ir.RankedTensorType.get(
            target.shape, ir.RankedTensorType(value.type).element_type))
    if t.dtype.kind == "b":
        return ctx.hlo("stablehlo.convert", value, type=target)
    if t.dtype.kind == "u":
        return ctx.hlo("stablehlo.bitcast_convert", value, type=target)
    return value


def _from_storage_tensor(ctx, value: ir.Value, t) -> ir.Value:
    typ = ctx.mlir_type(t)
    kept = ir.RankedTensorType.get(storage_tensor(t).shape, ir.RankedTensorType(typ).element_type)
    if t.dtype.kind == "b":
        zero = ctx.hlo("stablehlo.constant", type=value.type,
                       value=ir.DenseElementsAttr.get_splat(value.type, ir.IntegerAttr.get(storage_type(t.dtype), 0)))
        value = ctx.hlo("stablehlo.compare", value, zero, type=kept,
                        comparison_direction=ctx.attr("#stablehlo<comparison_direction NE>"))
    elif t.dtype.kind == "u":
        value = ctx.hlo("stablehlo.bitcast_convert", value, type=kept)
    return ctx.hlo("stablehlo.reshape", value, type=typ) if 1 in t.shape else value
