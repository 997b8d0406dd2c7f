"""matvec: matrix-vector products on CPU targets as linalg.matvec carrying their
own tile sizes (an IREE compilation_info attribute), instead of a stablehlo.dot_general that IREE
tiles by its defaults. Its default configuration for f64 matvec (32 rows by 16 columns a vector
step) spends its time in shuffles (vpermt2pd): 2.5-3.5 ms for a 2000x2000 f64 matvec where NumPy
takes 0.55 ms. The tile sizes below are measured (bench/bench_contractions.py, README
"Performance and caches"); the module IREE gets holds the linalg op (lower().as_text() shows it).
"""
from __future__ import annotations

import os

import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import linalg

# (distribution rows, rows a vector step, reduction a vector step) by element type: swept with
# iree-benchmark-module on local-task, 2000 and 4000 square, f32 and f64 (IREE's default for matvec:
# 32 rows by 16; 8 by 8 took 2000x2000 f64 from 4.45 to 1.61 ms, 4000x4000 from 10.5 to 6.1).
# vecmat (`y @ A`, `A.T @ y`) keeps IREE's default: the best swept tiles (512 columns a workgroup,
# 64 a vector step, one row) measured faster alone but slower in the pipeline (2000^2 f64 2.8 ->
# 4.3 ms), so only matvec is emitted here. Also tried: one native loop adding each row of A,
# scaled, into the result (LLVM-vectorised, one core): 4000x5000 f64 10.0-10.4 ms against IREE's
# 11.9-21, 2000x2100 equal (1.8 ms), but atax (`A.T @ (A @ x)`) 3.3 -> 4.4 ms and 500x400 slower;
# not kept.
TILES = {np.dtype(np.float64): (80, 8, 8), np.dtype(np.float32): (80, 8, 8)}
MIN_ELEMENTS = 1 << 16   # below, the default configuration is as good and dispatch costs dominate


def tiles_for(dtype, shape) -> tuple | None:
    if int(np.prod(shape)) < MIN_ELEMENTS or os.environ.get("PYJITC_TUNED_MATVEC", "1") == "0":
        return None
    return TILES.get(np.dtype(dtype))


def compilation_info(tiles) -> ir.Attribute:
    d, p, r = tiles   # matvec iterates (output row: parallel, contracted: reduction)
    config = f"distribution = [{d}, 0], vector_common_parallel = [{p}, 0], vector_reduction = [0, {r}]"
    return ir.Attribute.parse(
        f"#iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<{config}>, "
        "translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>>")


def product(ctx, matrix: ir.Value, vector: ir.Value, contract: int, dtype) -> ir.Value | None:
    """matrix (m, k) @ vector (k,) (contract == 1) as a (m,) value; None where the default
    lowering is kept (a vecmat, contract == 0; small; or no measured tiles)."""
    shape = ctx.static_shape(matrix)
    tiles = None if shape is None or contract != 1 else tiles_for(dtype, shape)
    if tiles is None:
        return None
    out_type = ir.RankedTensorType.get([shape[0]], ir.RankedTensorType(vector.type).element_type)
    zero = ctx.hlo("stablehlo.constant", type=out_type,
                   value=ir.DenseElementsAttr.get_splat(out_type, ir.FloatAttr.get(out_type.element_type, 0.0)))
    with ctx.loc:
        result = linalg.matvec(matrix, vector, outs=[zero])
    result.owner.attributes["compilation_info"] = compilation_info(tiles)
    return result
