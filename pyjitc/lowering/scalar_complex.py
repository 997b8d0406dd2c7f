"""scalar_complex: the complex numbers of a native loop (lowering/scalar_loop.py), as MLIR's
`complex` dialect values (`complex<f64>`, `complex<f32>`) in registers and in the tensors the loop
reads and writes: `z = z * z + c` in a pixel loop, `s += x[i] * w`.

The typed IR keeps complex numbers to a few primitives (division, abs and the rest are built
from the parts, frontend/numpy), so these are all the rules there are: the arithmetic StableHLO
allows on complex numbers, `exp log sqrt`, `==`/`!=`, and the parts. IREE lowers the `stablehlo`
forms of the same ops to these very `complex` ops, so a loop computes the same numbers either
way. Elementwise work on complex arrays is done element by element with the same rules
(lowering/scalar_arrays.py), and sums and contractions (`H @ psi` in a time loop) with one
running complex value each, in order (IREE's own contraction may add in another order: the
reduction tolerance)."""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

# primitives with a complex form here: native_loops lets a loop with complex values in only if
# each of its complex ops is one of these (see allowed)
OPS = {"add", "sub", "mul", "neg", "exp", "log", "sqrt", "compare", "select", "real", "imag", "complex",
       "constant", "barrier", "reshape", "broadcast_in_dim", "slice", "dynamic_slice", "dynamic_update_slice",
       "reduce", "dot_general"}

_ARITH = {"add": "complex.add", "sub": "complex.sub", "mul": "complex.mul", "neg": "complex.neg",
          "exp": "complex.exp", "log": "complex.log", "sqrt": "complex.sqrt"}


def is_complex_op(op) -> bool:
    return any(v.type.dtype.kind == "c" for v in (*op.operands, *op.results))


def allowed(op) -> bool:
    """Whether a native loop can hold `op`, an op with a complex operand or result: one of OPS
    (elementwise on arrays too, reads and writes of elements or rows)."""
    if op.name not in OPS:
        return False
    if op.name in ("slice", "dynamic_slice", "dynamic_update_slice"):
        return True       # elements read or written (one, or a row's, element by element)
    if op.name == "constant":   # a single value, or an array of one value (element by element)
        value = np.asarray(op.attrs["value"])
        return value.size > 0 and bool(np.all(value == value.reshape(-1)[0]))
    if op.name == "reduce":   # a sum (or product) in one running complex value, in order
        return op.attrs["kind"] in ("add", "mul")
    return op.name != "compare" or op.attrs["direction"] in ("EQ", "NE")


def register_type(dtype) -> ir.Type:
    part = ir.F32Type.get() if np.dtype(dtype).itemsize == 8 else ir.F64Type.get()
    return ir.ComplexType.get(part)


def constant(S, value, type: ir.Type) -> ir.Value:
    part = ir.ComplexType(type).element_type
    value = complex(value)
    attr = ir.ArrayAttr.get([ir.FloatAttr.get(part, value.real), ir.FloatAttr.get(part, value.imag)])
    return S.op("complex.constant", [], [type], {"value": attr}).result


def rule(S, op, args, **attrs) -> ir.Value:
    """The region value of the elementwise op `op` (complex operands or result)."""
    name = op.name
    if name in _ARITH:
        return S.one(_ARITH[name], *args)
    if name in ("real", "imag"):
        return S.one("complex.re" if name == "real" else "complex.im", *args,
                     type=ir.ComplexType(args[0].type).element_type)
    if name == "complex":
        return S.one("complex.create", *args, type=ir.ComplexType.get(args[0].type))
    if name == "compare":
        return S.one("complex.eq" if attrs["direction"] == "EQ" else "complex.neq", *args,
                     type=ir.IntegerType.get_signless(1))
    if name == "select":
        return S.select(*args)
    raise AssertionError(f"{name} on complex numbers: no native form (allowed() should have refused it)")
