"""stablehlo: typed IR Function -> verified MLIR module (StableHLO + func), built with the MLIR
Python bindings in iree.compiler.ir. Each op carries its Python source location."""
from __future__ import annotations

import contextlib
import dataclasses
import threading
from dataclasses import dataclass

import numpy as np
from iree.compiler import ir

from .. import progress
from ..errors import JitError
from ..ir.graph import Block, Function, Op
from ..ir.ops import OPS
from ..ir.dims import Dim, is_symbolic
from ..ir.types import TensorType, real_dtype
from . import (broadcast_fanout, if_conversion, mlir_dialects, native_loops, scalar_loop, scans, scratch, sorts,
               straight_line, tiles)
from .value_queries import ValueQueries, module_state as _options
from .writes import captured_then_updated, live_argument_writes, updates_of_passed_arguments, use_counts, written_parameters


def element_type(dtype: np.dtype) -> ir.Type:
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return ir.IntegerType.get_signless(1)
    if dt.kind == "i":
        return ir.IntegerType.get_signless(dt.itemsize * 8)
    if dt.kind == "u":
        return ir.IntegerType.get_unsigned(dt.itemsize * 8)
    if dt.kind == "f":
        return {2: ir.F16Type, 4: ir.F32Type, 8: ir.F64Type}[dt.itemsize].get()
    if dt.kind == "c":
        return ir.ComplexType.get(element_type(real_dtype(dt)))
    raise JitError(f"dtype {dt} has no StableHLO lowering")


def mlir_type(t: TensorType) -> ir.RankedTensorType:
    """`?` for a symbolic dimension (ir/dims.py)."""
    if is_symbolic(t.shape):
        dynamic = ir.ShapedType.get_dynamic_size()
        return ir.RankedTensorType.get([dynamic if isinstance(d, Dim) else d for d in t.shape],
                                       element_type(t.dtype))
    return ir.RankedTensorType.get(list(t.shape), element_type(t.dtype))


class LowerCtx(ValueQueries):
    """What a lowering rule sees: its op's types and location, and small builders."""

    def __init__(self, op: Op, loc: ir.Location, env: dict):
        self.env = env
        self.regions = op.regions
        self.operand_ids = [v.id for v in op.operands]
        self.result_ids = [v.id for v in op.results]
        self.op_key = id(op)
        self.in_types = [v.type for v in op.operands]
        self.out = [v.type for v in op.results]
        self.out_types = [mlir_type(t) for t in self.out]
        self.loc = loc
        self.span = op.span

    # generic builders
    def op(self, name, operands, result_types, attrs=None, regions=0) -> ir.Operation:
        return ir.Operation.create(name, results=list(result_types), operands=list(operands),
                                   attributes=attrs or {}, regions=regions, loc=self.loc)

    def hlo(self, name, *operands, type=None, **attrs) -> ir.Value:
        return self.op(name, operands, [type or self.out_types[0]], attrs).result

    def isolated(self, value: ir.Value) -> ir.Value:
        """`value` behind an optimization_barrier where IREE 3.13 (llvm-cpu) miscompiles a reverse
        or a gather that reads it directly; both found by the statement fuzzer:
        - a slice with a step (`x[::2][::-1]`, `x[1::2][idx]`, also through further slices and
          reshapes: `U[1:-1, ::2][1][::-1]`): "LLVM Translation failed for operation:
          builtin.unrealized_conversion_cast", even for tensor<6xf64> (an elementwise op in
          between compiles);
        - a value computed from constants only (a splat such as the 1.5 in `y[:] = 1.5` written
          through a reversed view): a reduction of the reversed or gathered splat came out wrong
          (sum of 6 x 1.5 gave 3.0, silently)."""
        if self._strided_slice(value) or self.is_constant_expression(value):
            return self.barrier(value)
        return value

    def fresh_copy(self, value: ir.Value, t, number: int) -> ir.Value:
        if t.dtype.kind == "c":   # each part times 1 (times a complex 1, inf * 0 would make NaNs)
            part = t.with_dtype(np.dtype(f"f{t.dtype.itemsize // 2}"))
            re = self.hlo("stablehlo.real", value, type=mlir_type(part))
            im = self.hlo("stablehlo.imag", value, type=mlir_type(part))
            return self.hlo("stablehlo.complex", self.fresh_copy(re, part, 2 * number),
                            self.fresh_copy(im, part, 2 * number + 1), type=mlir_type(t))
        # The copy is an elementwise op IREE can't fold away: x times a 1 (x and True for
        # booleans) behind a barrier of its own number. It replaced an element loop nest in a
        # dispatch region of its own: IREE 3.13's CUDA pipeline crashed on that (iree-compile
        # segfault), it needs static shapes, and on the CPU, as an `if`'s branch result beside
        # a reversed constant in the other branch, IREE 3.13 returned a null buffer for it
        # ("ref is null; hal.buffer_view.create", statement fuzzer seed 9114 program 738).
        scalar = t.with_shape(())
        one = self.distinct_barrier(self.splat(True if t.dtype.kind == "b" else 1, scalar), number)
        return self.hlo("stablehlo.and" if t.dtype.kind == "b" else "stablehlo.multiply", value,
                        self.broadcast_to(one, t, ()), type=value.type)

    def distinct_copy(self, value: ir.Value, t) -> ir.Value:
        """A fresh copy numbered apart from every other copy in the module (CSE cannot merge two
        copies of equal constants)."""
        _options.copies += 1
        return self.fresh_copy(value, t, 3_000_000 + _options.copies)

    def distinct_barrier(self, value: ir.Value, number: int | None = None) -> ir.Value:
        """`value` behind an optimization_barrier that CSE cannot merge with another barrier of
        an equal value: the barrier carries a number of its own (an attribute; a second operand
        as the number made IREE 3.13 fail loops at run time: "indirect buffer reference")."""
        if number is None:
            number = self.new_number()
        attr = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), number)
        return self.tied(value, self.op("stablehlo.optimization_barrier", [value], [value.type],
                                        {"pyjitc.distinct": attr}).result)

    @staticmethod
    def new_number() -> int:
        """A number no other copy or barrier in the module has."""
        _options.copies += 1
        return _options.copies

    @staticmethod
    def returned(value_id: int) -> bool:
        """Whether the IR value is one of the function's results as it is."""
        return value_id in _options.returned

    def shared(self, i: int) -> bool:
        """Whether operand i's value is read by more than this op (anywhere in the function)."""
        return self.reads(self.operand_ids[i]) > 1

    def writes_in_a_copy(self) -> bool:
        """Whether this in-place update is made in a copy of its target: an argument whose old
        value some result still depends on apart from the update (`b = x * 1.0; x[1:-1] = ...;
        return b`), or an array an earlier if or while read inside its regions."""
        return self.op_key in _options.copied_writes

    @staticmethod
    def reads(value_id: int) -> int:
        """How many times the IR value is read in the function (ops, nested regions, results)."""
        return _options.uses.get(value_id, 0)

    def with_booleans_materialised(self, value: ir.Value, booleans: ir.Value) -> ir.Value:
        """`value` (booleans_of_a_broadcast's argument) recomputed from its booleans behind a barrier."""
        held = self.barrier(booleans)
        if value == booleans:
            return held
        op = self._producer(value)
        if op.name == "stablehlo.convert":
            return self.hlo("stablehlo.convert", held, type=value.type)
        return self.hlo("stablehlo.select", held, op.operands[1], op.operands[2], type=value.type)

    def barrier(self, value: ir.Value) -> ir.Value:
        return self.tied(value, self.op("stablehlo.optimization_barrier", [value], [value.type]).result)

    def tied(self, before: ir.Value, after: ir.Value) -> ir.Value:
        """`after` (a barrier of `before`) with `before`'s run-time extents attached: IREE 3.13
        can't find the extents of a dynamic tensor through a barrier ("tensor.dim op unexpected
        during shape cleanup") unless they are tied to it (flow.tensor.tie_shape)."""
        t = ir.RankedTensorType(before.type)
        dynamic = [i for i in range(t.rank) if t.is_dynamic_dim(i)]
        if not dynamic:
            return after
        index = ir.IndexType.get()
        extents = []
        for i in dynamic:
            axis = self.op("arith.constant", [], [index], {"value": ir.IntegerAttr.get(index, i)}).result
            extents.append(self.op("tensor.dim", [before, axis], [index]).result)
        return self.op("flow.tensor.tie_shape", [after, *extents], [after.type]).result

    @property
    def gpu(self) -> bool:
        """Whether the module is lowered for a GPU target."""
        return getattr(_options, "gpu", False)

    def tuned_matvec(self, matrix: ir.Value, vector: ir.Value, contract: int, dtype, accumulate=None):
        """A matrix-vector product with measured tile sizes on CPU targets (lowering/tiles.py),
        or None: the caller emits the dot_general. `accumulate`: a wider accumulator dtype."""
        if not getattr(_options, "scalar_loops", False):   # (GPU targets, or native loops off)
            return None
        return tiles.matvec(self, matrix, vector, contract, dtype, accumulate)

    def tuned_product(self, a: ir.Value, b: ir.Value, lhs_contract, rhs_contract, lhs_batch, rhs_batch, dtype):
        """A float64 product with measured tile sizes on CPU targets (lowering/tiles.py), or None:
        the caller emits the dot_general."""
        if not getattr(_options, "scalar_loops", False):   # (GPU targets, or native loops off)
            return None
        return tiles.product(self, a, b, lhs_contract, rhs_contract, lhs_batch, rhs_batch, dtype)

    @contextlib.contextmanager
    def block(self, region, arg_types):
        block = region.blocks.append(*[mlir_type(t) for t in arg_types])
        with ir.InsertionPoint(block):
            yield list(block.arguments)

    def lower_region(self, mlir_region, block: Block, arg_types=None, enter=None, leave=None) -> None:
        """Lower an IR block into an MLIR region that ends in stablehlo.return of its results.
        `arg_types`/`enter`/`leave` let a rule change how arguments and results are represented."""
        types = arg_types or [p.type for p in block.params]
        entry = mlir_region.blocks.append(*[mlir_type(t) for t in types])
        with ir.InsertionPoint(entry):
            args = list(entry.arguments)
            if enter is not None:
                args = enter(args)
            for p, a in zip(block.params, args):
                self.env[p.id] = a
            lower_block(block, self.env)
            results = [self.env[v.id] for v in block.results]
            if leave is not None:
                results = leave(results)
            self.op("stablehlo.return", results, [])

    # attributes and constants
    @staticmethod
    def attr(text: str) -> ir.Attribute:
        return ir.Attribute.parse(text)

    @staticmethod
    def i64s(values) -> ir.Attribute:
        return ir.DenseI64ArrayAttr.get([int(v) for v in values])

    @staticmethod
    def i64(value) -> ir.Attribute:
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))

    def mlir_type(self, t: TensorType):
        return mlir_type(t)

    # -- symbolic dimensions (ir/dims.py): their values are read from the arguments at entry
    def dim(self, d) -> ir.Value:
        """tensor<i64> holding the dimension `d` (an int or a Dim) in this call."""
        i64 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(64))
        const = lambda c: self.op("stablehlo.constant", [], [i64], {
            "value": ir.DenseElementsAttr.get(np.array([c], np.int64), type=ir.IntegerType.get_signless(64),
                                              shape=[])}).result
        if not isinstance(d, Dim):
            return const(int(d))
        total = None
        for monomial, coef in d.terms.items():
            term = const(coef) if coef != 1 or not monomial else None
            for name in monomial:
                size = _options.dims[name]
                term = size if term is None else self.hlo("stablehlo.multiply", term, size, type=i64)
            total = term if total is None else self.hlo("stablehlo.add", total, term, type=i64)
        return total

    def shape_tensor(self, shape) -> ir.Value:
        """tensor<rank x i64>: the run-time extents of `shape`."""
        one = ir.RankedTensorType.get([1], ir.IntegerType.get_signless(64))
        parts = [self.hlo("stablehlo.reshape", self.dim(d), type=one) for d in shape]
        if len(parts) == 1:
            return parts[0]
        out = ir.RankedTensorType.get([len(parts)], ir.IntegerType.get_signless(64))
        return self.hlo("stablehlo.concatenate", *parts, type=out, dimension=self.i64(0))

    def unit_reshape(self, x: ir.Value, src: TensorType, out: TensorType) -> ir.Value | None:
        """A reshape that only adds or removes axes of length 1 (`1x?` to `?`, `?` to `?x1`), as
        tensor.collapse_shape to the other axes and tensor.expand_shape from them; None for other
        reshapes."""
        core = lambda shape: [d for d in shape if not (isinstance(d, int) and d == 1)]
        a, b = core(src.shape), core(out.shape)
        if not a or len(a) != len(b) or not all(d is e or (isinstance(d, Dim) and isinstance(e, Dim)
                                                              and d.terms == e.terms) or d == e
                                                  for d, e in zip(a, b) if isinstance(d, Dim) or isinstance(e, Dim)):
            return None
        if any(not isinstance(d, Dim) and d != e for d, e in zip(a, b)):
            return None

        def groups(shape):   # each axis of length 1 joins the next other axis (trailing ones: the last)
            out, current = [], []
            for i, d in enumerate(shape):
                current.append(i)
                if not (isinstance(d, int) and d == 1):
                    out.append(current)
                    current = []
            out[-1].extend(current)
            return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
                                                       for i in g]) for g in out])
        middle = mlir_type(TensorType(tuple(a), src.dtype))
        if src.ndim != len(a):
            x = self.op("tensor.collapse_shape", [x], [middle], {"reassociation": groups(src.shape)}).result
        if out.ndim == len(a):
            return x
        index = ir.IndexType.get()
        sizes = []
        for d in out.shape:
            if isinstance(d, Dim):
                scalar = self.op("tensor.extract", [self.dim(d)], [ir.IntegerType.get_signless(64)]).result
                sizes.append(self.op("arith.index_cast", [scalar], [index]).result)
        static = [ir.ShapedType.get_dynamic_size() if isinstance(d, Dim) else d for d in out.shape]
        return self.op("tensor.expand_shape", [x, *sizes], [mlir_type(out)],
                       {"reassociation": groups(out.shape), "static_output_shape": ir.DenseI64ArrayAttr.get(static)}).result

    def insert_slice(self, x: ir.Value, update: ir.Value, starts, xt: TensorType, ut: TensorType) -> ir.Value:
        """stablehlo.dynamic_update_slice (starts clamped into range, as it does) for run-time
        shapes, as tensor.insert_slice: IREE 3.13 refuses dynamic_update_slice with `?` extents
        ("failed to legalize ... explicitly marked illegal")."""
        i64 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(64))
        index = ir.IndexType.get()
        dynamic = ir.ShapedType.get_dynamic_size()

        def as_index(v):
            v = self.hlo("stablehlo.convert", v, type=i64)
            scalar = self.op("tensor.extract", [v], [ir.IntegerType.get_signless(64)]).result
            return self.op("arith.index_cast", [scalar], [index]).result
        offsets, sizes = [], []
        for start, n, size in zip(starts, xt.shape, ut.shape):
            high = self.hlo("stablehlo.subtract", self.dim(n), self.dim(size), type=i64)
            start = self.hlo("stablehlo.convert", start, type=i64)
            offsets.append(as_index(self.hlo("stablehlo.clamp", self.dim(0), start, high, type=i64)))
            if isinstance(size, Dim):
                sizes.append(as_index(self.dim(size)))
        static_sizes = [dynamic if isinstance(s, Dim) else s for s in ut.shape]
        attrs = {"static_offsets": ir.DenseI64ArrayAttr.get([dynamic] * len(offsets)),
                 "static_sizes": ir.DenseI64ArrayAttr.get(static_sizes),
                 "static_strides": ir.DenseI64ArrayAttr.get([1] * len(offsets)),
                 "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, len(offsets), len(sizes), 0])}
        return self.op("tensor.insert_slice", [update, x, *offsets, *sizes], [x.type], attrs).result

    def broadcast_to(self, value: ir.Value, t: TensorType, dims=None) -> ir.Value:
        """`value` broadcast to the type `t` (symbolic dimensions read at run time) along `dims`
        (default: its trailing axes). IREE 3.13 legalizes dynamic_broadcast_in_dim only when it
        says which dimensions expand."""
        src = [d if d >= 0 else None for d in ir.RankedTensorType(value.type).shape]
        dims = list(range(t.ndim - len(src), t.ndim)) if dims is None else list(dims)
        if not is_symbolic(t.shape):
            return self.hlo("stablehlo.broadcast_in_dim", value, type=mlir_type(t), broadcast_dimensions=self.i64s(dims))
        expanding = [i for i, d in enumerate(dims) if src[i] == 1 and t.shape[d] != 1]
        keeping = [i for i in range(len(src)) if i not in expanding]
        if self.is_constant_expression(value):
            # each splat of its own: IREE 3.13 merged two equal ones (`w1 = np.zeros(n + 2)`, `P2 =
            # np.zeros(n + 2)`) and then wrote `P2[1] = -2.0` into the buffer w1 was returned in
            # (a silent wrong answer, statement fuzzer --dynamic seed 3 program 343); the value
            # broadcast goes through a barrier numbered apart, so no two splats are equal
            value = self.distinct_barrier(value)
        return self.hlo("stablehlo.dynamic_broadcast_in_dim", value, self.shape_tensor(t.shape), type=mlir_type(t),
                        broadcast_dimensions=self.i64s(dims), known_expanding_dimensions=self.i64s(expanding),
                       known_nonexpanding_dimensions=self.i64s(keeping))

    def constant(self, value: np.ndarray) -> ir.Value:
        value = np.asarray(value)
        t = TensorType(value.shape, value.dtype)
        if value.dtype.kind == "c":
            # its real and imaginary parts, joined: IREE 3.13 crashes packing complex constants
            # (SizedStorageDenseElementsAttrModel::getStorageSize in PackConstants)
            re, im = self.constant(np.array(value.real)), self.constant(np.array(value.imag))
            return self.hlo("stablehlo.complex", re, im, type=mlir_type(t))
        flat = value.reshape(-1)
        if flat.size > 1 and np.array_equal(flat, np.full_like(flat, flat[0]), equal_nan=value.dtype.kind in "fc"):
            return self.splat(flat[0], t)
        if value.nbytes >= progress.CONSTANT_WARNING:
            progress.warn_slow(("constant", self.span), self.span,
                               f"an array of {value.nbytes / 2**20:.0f} MiB ({t}) is embedded in the compiled "
                               "code as a constant: compiling, the .vmfb and the disk cache grow with it; "
                               "pass it as an argument instead of reading it as a global or building it "
                               "from compile-time values")
        attr = ir.DenseElementsAttr.get(np.ascontiguousarray(value), type=element_type(value.dtype),
                                        shape=list(value.shape))
        return self.op("stablehlo.constant", [], [mlir_type(t)], {"value": attr}).result

    def splat(self, scalar, t: TensorType) -> ir.Value:
        if t.dtype.kind == "c":
            # its real and imaginary parts, joined: the bindings can't splat a complex value, and
            # IREE 3.13 fails on a complex splat that becomes a stream op ("stream.async.splat ...
            # got 'i128'", a complex128 array created before a loop)
            z = np.array(scalar, dtype=t.dtype)
            part = TensorType(t.shape, np.dtype(f"f{t.dtype.itemsize // 2}"))
            re, im = self.splat(z.real, part), self.splat(z.imag, part)
            return self.hlo("stablehlo.complex", re, im, type=mlir_type(t))
        if is_symbolic(t.shape):   # a 0-d constant, broadcast to the run-time shape
            return self.broadcast_to(self.splat(scalar, t.with_shape(())), t)
        one = ir.DenseElementsAttr.get(np.array(scalar, dtype=t.dtype).reshape(1), type=element_type(t.dtype))
        attr = ir.DenseElementsAttr.get_splat(mlir_type(t), one.get_splat_value()) if t.shape != (1,) else one
        return self.op("stablehlo.constant", [], [mlir_type(t)], {"value": attr}).result


def _dimension_sizes(fn: Function, arguments) -> dict:
    """Symbol name -> tensor<i64> of its value, read from the first argument dimension it names."""
    sizes = {}
    i32 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    i64 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(64))
    for v, arg in zip(fn.params, arguments):
        for axis, d in enumerate(v.type.shape):
            if isinstance(d, Dim) and d.name is not None and d.name not in sizes:
                size = ir.Operation.create("stablehlo.get_dimension_size", results=[i32], operands=[arg],
                                           attributes={"dimension": ir.IntegerAttr.get(
                                               ir.IntegerType.get_signless(64), axis)}).result
                sizes[d.name] = ir.Operation.create("stablehlo.convert", results=[i64], operands=[size]).result
    return sizes


def _location(op: Op) -> ir.Location:
    if op.span is None:
        return ir.Location.unknown()
    return ir.Location.file(op.span.filename, op.span.line, op.span.col + 1)




def lower_block(block: Block, env: dict) -> None:
    for op in block.ops:
        opdef = OPS.get(op.name)
        if opdef is None or opdef.lower is None:
            raise JitError(f"{op.name}: no StableHLO lowering registered", op.span)
        ctx = LowerCtx(op, _location(op), env)
        operands = [env[v.id] for v in op.operands]
        native = op.name == "while" and getattr(_options, "scalar_loops", False)
        if native and _eligible(op) and not scratch.reread_heavy(op.regions[1]):
            out = scalar_loop.lower(ctx, op, operands, env, _location)
        elif native and (rewritten := _with_scratch(op)) is not None:   # lowering/scratch.py
            loop, inits = rewritten
            for v in inits:
                env[v.id] = ctx.splat(0, v.type)
            out = scalar_loop.lower(ctx, loop, operands + [env[v.id] for v in inits], env, _location)[:len(op.results)]
        elif native and _eligible(op):
            out = scalar_loop.lower(ctx, op, operands, env, _location)
        elif op.name in _EXPANDERS and (block := _expansion(op)) is not None:
            lower_block(block, env)     # lowering/scans.py, lowering/sorts.py
            out = [env[v.id] for v in block.results]
        else:
            out = opdef.lower(ctx, operands, **op.attrs)
        outs = out if isinstance(out, (list, tuple)) else [out]
        if op.name == "reduce" and op.results[0].id in getattr(_options, "split_reductions", ()):
            outs = [ctx.barrier(outs[0])]    # broadcast two ways: computed first (broadcast_fanout.py)
        for v, r in zip(op.results, outs):
            env[v.id] = r


def _eligible(op: Op) -> bool:
    """native_loops.eligible, worked out once per loop in a lowering (if_conversion asks first)."""
    cache = getattr(_options, "eligible", {})
    known = cache.get(id(op))
    if known is None or known[0] is not op:
        known = cache[id(op)] = (op, native_loops.eligible(op))
    return known[1]


def _with_scratch(op: Op):
    """The loop rewritten with scratch arrays (lowering/scratch.py) where that makes it a native
    loop, else None (worked out once per loop in a lowering)."""
    cache = getattr(_options, "scratch", {})
    known = cache.get(id(op))
    if known is None or known[0] is not op:
        rewritten = scratch.with_scratch(op)
        known = cache[id(op)] = (op, rewritten if rewritten is not None and native_loops.eligible(rewritten[0]) else None)
    return known[1]


_EXPANDERS = {"scan": scans.expand, "sort": sorts.expand}


def _expansion(op: Op) -> Block | None:
    """The IR ops a scan or sort expands into on this target: native loops where they run and
    IREE accepts them, else whole-array steps (None: the op's own lowering, IREE's sort)."""
    if is_symbolic(op.operands[0].type.shape):
        return None
    expand = _EXPANDERS[op.name]
    native = getattr(_options, "scalar_loops", False)
    block = expand(op, native)
    if native and block is not None and not all(native_loops.eligible(o) for o in block.ops if o.name == "while"):
        block = expand(op, False)
    return block


@dataclass
class LoweredModule:
    context: ir.Context
    module: ir.Module

    def text(self, debug_info: bool = False) -> str:
        return self.module.operation.get_asm(enable_debug_info=debug_info)


def lower_function(fn: Function, reflection: dict[str, str] | None = None, scalar_loops: bool = True,
                   gpu: bool = False) -> LoweredModule:
    return lower_functions([(fn, reflection)], scalar_loops, gpu)


_contexts = threading.local()


def _context() -> ir.Context:
    """One MLIR context per thread, reused: creating one (registering the dialects) costs ~8 ms,
    which was half of a warm-disk-cache first call. Contexts are not shared across threads."""
    ctx = getattr(_contexts, "ctx", None)
    if ctx is None:
        mlir_dialects.register()
        ctx = _contexts.ctx = ir.Context()
    return ctx


def lower_functions(fns: list[tuple[Function, dict[str, str] | None]], scalar_loops: bool = True,
                    gpu: bool = False) -> LoweredModule:
    """One verified module exporting each function under its own name. `reflection`: strings
    IREE stores with the exported function in the .vmfb (readable back at run time).
    `scalar_loops`: run-time loops doing scalar work become native loops in one dispatch
    (lowering/scalar_loop.py; CPU targets), else every loop is a stablehlo.while. `gpu`: for a
    GPU target (Target.gpu)."""
    _options.scalar_loops = scalar_loops
    _options.gpu = gpu
    _options.copies = 0
    _options.eligible, _options.scratch = {}, {}   # (per loop: _eligible, _with_scratch)
    if scalar_loops:   # small ifs in loops made selects (if_conversion.py), long runs of scalar work
        # as one native loop (straight_line.py)
        fns = [(dataclasses.replace(fn, body=straight_line.wrapped(if_conversion.converted(
            sorts.in_loops_as_networks(fn.body), _eligible, lambda loop: _eligible(loop) or _with_scratch(loop) is not None))),
                reflection) for fn, reflection in fns]
    _options.constant = {}    # ops found to depend on no argument (True) or on one (False)
    _options.returned = {v.id for fn, _ in fns for v in fn.body.results}
    _options.uses = use_counts(fns)
    _options.split_reductions = broadcast_fanout.split_reductions(fns)
    _options.copied_writes = {key for fn, _ in fns
                                     for key in live_argument_writes(fn, _options.uses) | captured_then_updated(fn.body)
                                     | updates_of_passed_arguments(fn)}
    context = _context()
    with context, ir.Location.unknown():
        module = ir.Module.create()
        for fn, reflection in fns:
            ftype = ir.FunctionType.get([mlir_type(v.type) for v in fn.params],
                                        [mlir_type(v.type) for v in fn.results])
            attrs = {"sym_name": ir.StringAttr.get(fn.name), "function_type": ir.TypeAttr.get(ftype)}
            if reflection:
                attrs["iree.reflection"] = ir.DictAttr.get({k: ir.StringAttr.get(v) for k, v in reflection.items()})
            with ir.InsertionPoint(module.body):
                func = ir.Operation.create("func.func", regions=1, attributes=attrs)
            entry = func.regions[0].blocks.append(*[mlir_type(v.type) for v in fn.params])
            env = {v.id: a for v, a in zip(fn.params, entry.arguments)}
            written = written_parameters(fn)
            _options.written_arguments = {a for v, a in zip(fn.params, entry.arguments) if v.id in written}
            _options.kept_arguments = {a for i, a in enumerate(entry.arguments) if i not in fn.written_back}
            with ir.InsertionPoint(entry):
                _options.dims = _dimension_sizes(fn, entry.arguments)
                scalar_loop.begin_function()
                lower_block(fn.body, env)
                ir.Operation.create("func.return", operands=[env[v.id] for v in fn.results])
                scalar_loop.keep_arrays_alive()
        try:
            ok = module.operation.verify()
        except ir.MLIRError as e:  # the verifier found a lowering bug: show it with the module
            raise JitError(f"internal error: the StableHLO module does not verify: {e}\n{module}") from None
        if not ok:
            raise JitError(f"internal error: the StableHLO module does not verify\n{module}")
    return LoweredModule(context, module)
