"""tiles: contractions on CPU targets as linalg ops carrying their own tile sizes (an IREE
compilation_info attribute), where IREE's default configuration was measured slow:
- matrix-vector products as linalg.matvec: the default for f64 (32 rows by 16 columns a vector
  step) spends its time in shuffles (vpermt2pd): 2.5-3.5 ms for a 2000x2000 f64 matvec where
  NumPy takes 0.55 ms;
- float64 matrix products as linalg.matmul: the default (8 rows by 32 columns a vector step, 256
  f64 accumulators for 16 vector registers on AVX2) took 400x420x410 in 3.8 ms, 8 by 8 with peeled
  leftovers 2.65.
The tile sizes below are measured (bench/bench_contractions.py, README "Performance and caches");
the module IREE gets holds the linalg op (lower().as_text() shows it).
"""
from __future__ import annotations

import os

import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import linalg

from ..ir.types import TensorType

# (distribution rows, rows a vector step, reduction a vector step) by element type: swept with
# iree-benchmark-module on local-task, 2000 and 4000 square, f32 and f64 (IREE's default for matvec:
# 32 rows by 16; 8 by 8 took 2000x2000 f64 from 4.45 to 1.61 ms, 4000x4000 from 10.5 to 6.1).
# vecmat (`y @ A`, `A.T @ y`) is not a matvec here: float32 keeps IREE's default (the best swept
# tiles, 512 columns a workgroup, 64 a vector step, one row, measured faster alone but slower in
# the pipeline: 2000^2 f64 2.8 -> 4.3 ms), float64 is a one-row `matmul` below. Also tried: one native loop adding each row of A,
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
    return _info(config, "")


def _info(config: str, options: str) -> ir.Attribute:
    return ir.Attribute.parse(
        f"#iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<{config}>, "
        f"translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>{options}>>")


def _zeros(ctx, shape, like: ir.Value, element: ir.Type | None = None) -> ir.Value:
    """A zero tensor of `shape` and `like`'s element type (or `element`): the accumulator a linalg
    product starts from."""
    out_type = ir.RankedTensorType.get(shape, element or ir.RankedTensorType(like.type).element_type)
    return ctx.hlo("stablehlo.constant", type=out_type,
                   value=ir.DenseElementsAttr.get_splat(out_type, ir.FloatAttr.get(out_type.element_type, 0.0)))


def matvec(ctx, matrix: ir.Value, vector: ir.Value, contract: int, dtype, accumulate=None) -> ir.Value | None:
    """matrix (m, k) @ vector (k,) (contract == 1) as a (m,) value (in `accumulate`'s dtype where
    given: each element widened as it is read); None where the default lowering is kept (a
    vecmat, contract == 0; small; or no measured tiles)."""
    shape = ctx.static_shape(matrix)
    tiles = None if shape is None or contract != 1 else tiles_for(dtype, shape)
    if tiles is None:
        return None
    zero = _zeros(ctx, [shape[0]], vector, None if accumulate is None else
                  ctx.mlir_type(TensorType((), np.dtype(accumulate))).element_type)
    with ctx.loc:
        result = linalg.matvec(matrix, vector, outs=[zero])
    result.owner.attributes["compilation_info"] = compilation_info(tiles)
    return result


# float64 matrix products (`A @ B`, `A @ B.T`, `A.T @ B`): 64x64 a workgroup, 8x8 a vector step, one
# contracted element a step, leftovers peeled. Swept with iree-benchmark-module (local-task, this
# 2-core AVX2 machine; IREE's default -> these): 400x420x410 3.80 -> 2.65 ms, 2750x100x100 1.71 ->
# 0.88, 1000x100x1000 5.61 -> 3.74, 100x1000x100 0.97 -> 0.50, 200^3 0.44 -> 0.35, 512^3 and 1024^3
# and 64^3 within noise; `A @ B.T` 400x420x410 7.04 -> 3.64, 1000x100x1000 10.5 -> 4.15. Without
# peeling, sizes not divisible by the tiles were 3x slower. float32 keeps the default (and data
# tiling from 128 up: backend/target.py): these tiles were slower on 1000x64x64, 2000x80x80 and
# 5000x32x32.
MATMUL_CONFIG = ("distribution = [64, 64, 0], vector_common_parallel = [8, 8, 0], vector_reduction = [0, 0, 1]",
                 ", {enable_loop_peeling}")
# A single row times a matrix (`y @ A`, `A.T @ y`: m = 1): 64 columns a workgroup, 16 a vector
# step, 8 rows of the matrix a step; swept the same way on 1x2000x2100 f64: IREE's default 4.09 ms,
# the product tiles above 4.10, these 3.24 (distribution 64-512, vectors 8-32, reductions 1-8).
VECMAT_CONFIG = ("distribution = [1, 64, 0], vector_common_parallel = [1, 16, 0], vector_reduction = [0, 0, 8]",
                 ", {enable_loop_peeling}")
MATMUL_MIN_WORK = 1 << 15     # m * n * k below: IREE's default, the call costs dominate


# float64 batched products (`A(b, m, k) @ B(b, k, n)`, einsum "bsh,bth->bst"): the product tiles
# with one matrix of the batch a workgroup; iree-benchmark-module, default -> these: 128 x
# (64x96 @ 96x64) 3.38 -> 2.50 ms, 64 x (32x32 @ 32x32) 0.208 -> 0.137, 10 x (200x210 @ 210x190)
# 3.09 -> 2.96.
BATCH_MATMUL_CONFIG = ("distribution = [1, 64, 64, 0], vector_common_parallel = [1, 8, 8, 0], "
                       "vector_reduction = [0, 0, 0, 1]", ", {enable_loop_peeling}")


def product(ctx, a: ir.Value, b: ir.Value, lhs_contract, rhs_contract, lhs_batch, rhs_batch, dtype) -> ir.Value | None:
    """A float64 dot_general as a linalg.matmul or linalg.batch_matmul with measured tiles, or None
    where the default lowering is kept (not float64, small, shapes known only at run time, or
    another form). The forms, one contracted axis each: 2-D by 2-D (`A @ B`, `A @ B.T`, `A.T @ B`:
    the transposed layouts as indexing maps, so no transpose is made); a stack times one matrix
    (`X(..., k) @ W(k, n)`: the stack's rows as one matrix, which reshapes for free); a batch of
    products (3-D by 3-D, batch axis 0 of both)."""
    sa, sb = ctx.static_shape(a), ctx.static_shape(b)
    if (np.dtype(dtype) != np.float64 or sa is None or sb is None or len(lhs_contract) != 1
            or os.environ.get("PYJITC_TUNED_MATMUL", "1") == "0"):
        return None
    ca, cb = lhs_contract[0], rhs_contract[0]
    batched = list(lhs_batch) == [0] and list(rhs_batch) == [0] and len(sa) == len(sb) == 3
    plain = not lhs_batch and not rhs_batch and len(sb) == 2
    stack = plain and len(sa) > 2 and ca == len(sa) - 1
    if not (batched or stack or plain and len(sa) == 2):
        return None
    rows, f = ((int(np.prod(sa[:-1])), sa[-1]), 0) if stack else (sa, int(batched))   # f: the first matrix axis
    ca = 1 if stack else ca
    m, n = rows[2 * f + 1 - ca], sb[2 * f + 1 - cb]
    if sa[0] ** f * m * n * rows[ca] < MATMUL_MIN_WORK:
        return None
    if stack:
        a = ctx.hlo("stablehlo.reshape", a, type=ir.RankedTensorType.get(list(rows), ir.RankedTensorType(a.type).element_type))
    zero = _zeros(ctx, [sa[0]] * f + [m, n], a)
    *t, i, j, k = (ir.AffineDimExpr.get(d) for d in range(3 + f))   # (t: the batch, if any)
    maps = [ir.AffineMap.get(3 + f, 0, t + x)
            for x in ([i, k] if ca == f + 1 else [k, i], [k, j] if cb == f else [j, k], [i, j])]
    build, config = ((linalg.batch_matmul, BATCH_MATMUL_CONFIG) if batched
                     else (linalg.matmul, VECMAT_CONFIG if m == 1 else MATMUL_CONFIG))
    with ctx.loc:
        result = build(a, b, outs=[zero], indexing_maps=maps)
    result.owner.attributes["compilation_info"] = _info(*config)
    if m == 1 and not batched:
        # a barrier after a vecmat: IREE 3.13 fused an elementwise consumer with other axes into its
        # dispatch under these tiles (the Householder step `R[k:, k:] -= 2 * np.outer(v, v @ R[k:, k:])`,
        # 310x300: the update vectorised whole, 6 MB of LLVM IR and 52 s to compile)
        result = ctx.barrier(result)
    if stack:
        out = ir.RankedTensorType.get([*sa[:-1], n], ir.RankedTensorType(a.type).element_type)
        result = ctx.hlo("stablehlo.reshape", result, type=out)
    return result
