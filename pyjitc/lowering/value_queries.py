"""value_queries: the questions lowerings ask about MLIR values already built (what op made a
value, whether it is a view of a written argument, a strided read, a gather, a constant
expression, or may fold to one), answered by walking producers. LowerCtx (stablehlo.py) has them
as methods; `module_state` is what the module being lowered knows (set per thread by
stablehlo.lower_functions)."""
from __future__ import annotations

import threading

from iree.compiler import ir

from . import scalar_arrays, scalar_loop

module_state = threading.local()


class ValueQueries:
    """Read-only walks over the producers of MLIR values (mixed into LowerCtx)."""

    @staticmethod
    def view_root(value: ir.Value) -> ir.Value:
        """What `value` is a slice, reshape or transpose of (through any number of them)."""
        while isinstance(value, ir.OpResult) and value.owner.name in (
                "stablehlo.slice", "stablehlo.reshape", "stablehlo.transpose"):
            value = value.owner.operands[0]
        return value

    @classmethod
    def view_of_written_argument(cls, value: ir.Value) -> bool:
        """Whether `value` is a slice, reshape or transpose of a function argument that the
        function writes somewhere (through a view of it, maybe in a branch)."""
        root = cls.view_root(value)
        return root != value and root in getattr(module_state, "written_arguments", ())

    def folds_to_written_argument(self, value: ir.Value, depth: int = 6) -> bool:
        """Whether `value` is computed from a function argument the function writes by
        elementwise ops with constants alone (`y * 1.0`, `y + 0.0` of a view y of it), which IREE
        may fold to that argument's buffer, seen through slices, reshapes and transposes."""
        written = getattr(module_state, "written_arguments", ())
        for _ in range(depth):
            op = self._producer(self.view_root(value))
            if op is None or op.name not in self._ELEMENTWISE:
                return False
            rest = [v for v in op.operands if not self.is_constant_expression(v)]
            if len(rest) != 1:
                return False
            value = rest[0]
            if self.view_root(value) in written:
                return True
        return False

    @classmethod
    def view_of_kept_argument(cls, value: ir.Value) -> bool:
        """Whether `value` is a function argument the caller's array keeps unchanged (one the
        function does not write back), or a slice, reshape or transpose of one."""
        return cls.view_root(value) in getattr(module_state, "kept_arguments", ())

    @classmethod
    def view_of_argument(cls, value: ir.Value) -> bool:
        """Whether `value` is an argument (of the function or a region) seen through slices,
        reshapes and transposes, or the argument itself."""
        return not isinstance(cls.view_root(value), ir.OpResult)

    def converted_from_integers(self, value: ir.Value) -> bool:
        """Whether `value` is a stablehlo.convert of a (non-bool) integer array."""
        op = self._producer(value)
        if op is None or op.name != "stablehlo.convert":
            return False
        element = ir.RankedTensorType(op.operands[0].type).element_type
        return isinstance(element, ir.IntegerType) and ir.IntegerType(element).width > 1

    def converted_from_unsigned(self, value: ir.Value, depth: int = 8) -> bool:
        """Whether `value` is unsigned integers converted (to another type), seen through
        reshapes, transposes, broadcasts and further conversions."""
        for _ in range(depth):
            op = self._producer(value)
            if op is None or op.name not in ("stablehlo.convert", "stablehlo.reshape", "stablehlo.transpose",
                                             "stablehlo.broadcast_in_dim"):
                return False
            source = op.operands[0]
            element = ir.RankedTensorType(source.type).element_type
            if op.name == "stablehlo.convert" and isinstance(element, ir.IntegerType) and ir.IntegerType(element).is_unsigned:
                return True
            value = source
        return False

    def booleans_of_a_broadcast(self, value: ir.Value, depth: int = 8):
        """The boolean array `value` is (itself, converted, or chosen between two constants by it)
        where it is computed elementwise from a broadcast of a run-time array
        (`np.all((X > 0.1) | (X < 0.05))`, `np.count_nonzero(...)` with X from np.meshgrid); else
        None."""
        op = self._producer(value)
        if op is not None and op.name == "stablehlo.convert":
            value = op.operands[0]
        elif op is not None and op.name == "stablehlo.select" and all(
                self.is_constant_expression(v) for v in list(op.operands)[1:]):
            value = op.operands[0]
        element = ir.RankedTensorType(value.type).element_type.maybe_downcast()
        if not (isinstance(element, ir.IntegerType) and element.width == 1):
            return None
        todo, seen = [(value, depth)], set()
        while todo:
            v, d = todo.pop()
            op = self._producer(v)
            if op is None or not d or len(op.regions) or op in seen:
                continue
            seen.add(op)
            if op.name == "stablehlo.broadcast_in_dim":
                if not self.is_constant_expression(op.operands[0]):
                    return value
                continue
            todo.extend((o, d - 1) for o in op.operands)
        return None

    @staticmethod
    def _producer(value: ir.Value):
        owner = value.owner
        owner = getattr(owner, "operation", owner)  # an OpView for a generic op
        return owner if isinstance(owner, ir.Operation) else None   # None: a block argument

    @staticmethod
    def inside_region() -> bool:
        """Whether ops are being built inside a stablehlo.while or stablehlo.if (at any depth)."""
        return any(b.owner is not None and b.owner.operation.name in ("stablehlo.while", "stablehlo.if")
                   for b in scalar_arrays.block_ancestry(ir.InsertionPoint.current.block))

    def producer_named(self, value: ir.Value, name: str):
        """The op that made `value` if it is a `name` op (e.g. "stablehlo.slice"), else None."""
        op = self._producer(value)
        return op if op is not None and op.name == name else None

    def static_slice(self, value: ir.Value):
        """(operand, start, strides) if `value` is a static stablehlo.slice, else None."""
        op = self.producer_named(value, "stablehlo.slice")
        if op is None:
            return None
        attr = lambda name: list(ir.DenseI64ArrayAttr(op.attributes[name]))
        return op.operands[0], attr("start_indices"), attr("strides")

    def static_update(self, value: ir.Value):
        """(operand, update, start) if `value` is a stablehlo.dynamic_update_slice of static
        shapes at constant start indices, else None."""
        op = self.producer_named(value, "stablehlo.dynamic_update_slice")
        if op is None or self.static_shape(op.operands[1]) is None or self.static_shape(value) is None:
            return None
        start = [scalar_loop._constant_value(v) for v in op.operands[2:]]
        if any(not isinstance(k, int) or isinstance(k, bool) for k in start):
            return None
        return op.operands[0], op.operands[1], start

    @staticmethod
    def static_shape(value: ir.Value):
        """`value`'s shape as a tuple of ints, or None where an extent is known at run time only."""
        t = ir.RankedTensorType(value.type)
        return None if any(t.is_dynamic_dim(i) for i in range(t.rank)) else tuple(t.shape)

    def transpose_of(self, value: ir.Value):
        """(operand, permutation) if `value` is a stablehlo.transpose, else None."""
        op = self.producer_named(value, "stablehlo.transpose")
        if op is None:
            return None
        return op.operands[0], list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))

    _MOVES = ("stablehlo.slice", "stablehlo.reshape", "stablehlo.reverse", "stablehlo.transpose")

    _ELEMENTWISE = ("stablehlo.add", "stablehlo.subtract", "stablehlo.multiply", "stablehlo.divide",
                    "stablehlo.maximum", "stablehlo.minimum", "stablehlo.select", "stablehlo.negate",
                    "stablehlo.abs", "stablehlo.convert", "stablehlo.compare", "stablehlo.and", "stablehlo.or")

    def _strided_slice(self, value: ir.Value, depth: int = 6, seen: dict | None = None) -> bool:
        """Whether `value` is a slice with a step, or a chain of slices, reshapes, reverses and
        transposes through one (IREE composes them into one strided read), or an elementwise op
        of such reads (`np.maximum(v, x[::3])` with v = P[::3] failed the same way: statement
        fuzzer seed 7002 program 41; so did `(x[::2] * 1.0)` gathered in an if branch, seed 7006
        program 1236), or an array updated with such a read (`x[:-2] = t1[::-2]` then
        `x[:-2]` gathered: --dynamic seed 4 program 740). `seen`: answers so far by (value,
        depth), as a network of selects shares its operands many times over."""
        seen = {} if seen is None else seen
        key = (value, depth)
        if key not in seen:
            seen[key] = self._strided_slice_at(value, depth, seen)
        return seen[key]

    def _strided_slice_at(self, value: ir.Value, depth: int, seen: dict) -> bool:
        op = self._producer(value)
        while op is not None and op.name in self._MOVES:
            if op.name == "stablehlo.slice" and (any(k != 1 for k in ir.DenseI64ArrayAttr(op.attributes["strides"]))
                                                 or not self._contiguous(op)):
                return True
            op = self._producer(op.operands[0])
        if op is not None and depth and (op.name in self._ELEMENTWISE or op.name == "stablehlo.dynamic_update_slice"):
            return any(self._strided_slice(v, depth - 1, seen) for v in op.operands)
        return False

    def gathered(self, value: ir.Value, depth: int = 4) -> bool:
        """Whether `value` is a gather, or an elementwise op or move over one (within `depth` ops)."""
        op = self._producer(value)
        if op is None or not depth:
            return False
        if op.name == "stablehlo.gather":
            return True
        if op.name in self._ELEMENTWISE or op.name in self._MOVES:
            return any(self.gathered(v, depth - 1) for v in op.operands)
        return False

    @staticmethod
    def _contiguous(op) -> bool:
        """Whether a slice (steps 1) reads one contiguous run of its operand: every axis before
        the last one it narrows has extent 1 in the result. A column `A[:, 2]` is not (a reversed
        column of an argument failed as a step did: "LLVM Translation failed", statement fuzzer
        seed 7007 program 1891)."""
        src = ir.RankedTensorType(op.operands[0].type).shape
        out = ir.RankedTensorType(op.result.type).shape
        narrowed = [d for d in range(len(src)) if out[d] != src[d]]
        return not narrowed or all(out[d] == 1 for d in range(narrowed[-1]))

    def is_constant_expression(self, value: ir.Value, limit: int = 256) -> bool:
        """Whether `value` depends on no argument (walks at most `limit` ops; beyond: assumed so).
        Answers found for whole walks are kept for the module (`module_state.constant`), and a walk
        stops at an op answered before."""
        known = getattr(module_state, "constant", {})
        start = self._producer(value)
        if start is not None and start in known:
            return known[start]
        seen, todo, answer = set(), [value], True
        while todo:
            op = self._producer(todo.pop())
            if op is None or len(op.regions) or known.get(op) is False:
                answer = False
                break
            if op in seen or op in known:     # Operation wrappers compare and hash by the op they wrap
                continue
            seen.add(op)
            if len(seen) > limit:
                return True     # assumed, not known: not kept
            todo.extend(op.operands)
        for op in seen if answer else ():
            known[op] = True
        if start is not None:
            known[start] = answer
        return answer

    def may_fold_to_constant(self, value: ir.Value, depth: int = 8) -> bool:
        """Whether IREE may fold `value` to a constant: a constant expression, possibly through
        ifs whose branches all yield one (`if c: b = b` leaves b the constant it was)."""
        op = self._producer(value)
        if op is None or not depth:
            return False
        if op.name == "stablehlo.if":
            index = list(op.results).index(value)
            yields = [region.blocks[0].operations[len(region.blocks[0].operations) - 1].operands[index]
                      for region in op.regions]
            return all(self.may_fold_to_constant(v, depth - 1) for v in yields)
        if len(op.regions):
            return False
        if not op.operands:
            return self.is_constant_expression(value)
        if all(self.may_fold_to_constant(v, depth - 1) for v in op.operands):
            return True
        # MLIR's folds that make a constant of a run-time value (IREE 3.13 then reduced the splat
        # once per vector of 8 instead of once per element: np.sum(k | -1) gave -2 for -10,
        # np.sum(x ** 0) 2.0 for 10.0, np.count_nonzero(k * 0 + 1) 1 for 10: silent wrong answers)
        return self._absorbed(op, depth)

    def _absorbed(self, op, depth: int) -> bool:
        """Whether an integer or boolean op's result is a constant whatever its run-time operand:
        x & 0, x | -1, x * 0, x - x, x ^ x, x ** 0, a comparison of x with itself, a select whose
        condition folds and whose chosen value does, or whose two values are one."""
        name, operands = op.name, list(op.operands)
        element = ir.RankedTensorType(operands[0].type).element_type if name != "stablehlo.select" else None
        integer = element is not None and isinstance(element.maybe_downcast(), ir.IntegerType)
        if name == "stablehlo.select":
            taken = self._splat_of(operands[0])
            if taken is not None:
                return self.may_fold_to_constant(operands[1 if taken else 2], depth - 1)
            return self.may_fold_to_constant(operands[0], depth - 1) or operands[1] == operands[2]
        if name == "stablehlo.power":   # x ** 0 (math.ipowi/powf fold it to ones)
            return self._splat_of(operands[1]) == 0
        if not integer or len(operands) != 2:
            return False
        if operands[0] == operands[1] and name in ("stablehlo.subtract", "stablehlo.xor", "stablehlo.compare"):
            return True
        splats = [self._splat_of(v) for v in operands]
        bits = element.maybe_downcast().width
        ones = {-1, (1 << bits) - 1, True, 1 if bits == 1 else -1}
        absorbing = {"stablehlo.and": {0, False}, "stablehlo.multiply": {0}, "stablehlo.or": ones}.get(name, ())
        return any(c is not None and c in absorbing for c in splats)

    def _splat_of(self, value: ir.Value, depth: int = 4):
        """The one value of a splat constant expression (a constant through broadcasts and
        conversions; comparisons, and/or/not of such), as MLIR folds it, else None."""
        op = self._producer(value)
        while op is not None and op.name in ("stablehlo.broadcast_in_dim", "stablehlo.convert", "stablehlo.reshape"):
            op = self._producer(op.operands[0])
        if op is None or not depth:
            return None
        if op.name == "stablehlo.constant":
            attr = ir.DenseElementsAttr(op.attributes["value"])
            if not attr.is_splat:
                return None
            element = attr.get_splat_value()
            for kind in (ir.IntegerAttr, ir.FloatAttr):
                try:
                    return kind(element).value
                except ValueError:
                    pass
            return None
        parts = [self._splat_of(v, depth - 1) for v in op.operands]
        if any(p is None for p in parts):
            return None
        if op.name == "stablehlo.compare":
            direction = str(op.attributes["comparison_direction"]).split()[-1].rstrip(">")
            how = {"EQ": "__eq__", "NE": "__ne__", "LT": "__lt__", "LE": "__le__", "GT": "__gt__", "GE": "__ge__"}
            return bool(getattr(parts[0], how[direction])(parts[1])) if direction in how else None
        logic = {"stablehlo.and": lambda a, b: bool(a) and bool(b), "stablehlo.or": lambda a, b: bool(a) or bool(b)}
        if op.name in logic and all(isinstance(p, bool) or p in (0, 1, -1) for p in parts):   # (i1 true: -1)
            return logic[op.name](*parts)
        return None
