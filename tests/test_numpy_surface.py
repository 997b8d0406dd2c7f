"""The NumPy surface, registry-driven: every function in CASES is run by NumPy and by pyjitc on
several inputs (dtypes, shapes, NaN/inf, negative values, empty and 0-d arrays where they make
sense) and compared on value, shape and dtype. A new function plugs in with one line here; the
completeness test says which registered functions still lack one."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import pyjitc
from pyjitc.frontend import registry
from tests.fuzz import load_source
from tests.reference import assert_same, assert_same_call
from tests.strategies import arrays

F = np.array([[0.5, -1.25, np.nan, 3.0], [2.0, 0.0, -0.0, -7.5], [np.inf, 1e-3, -np.inf, 4.25]])
F32 = F.astype(np.float32)
P = np.abs(np.nan_to_num(F, posinf=5.0, neginf=6.0)) + 0.25        # positive, finite
U = np.array([[0.3, -0.9, 0.0, 0.99], [-0.5, 0.25, 1.0, -1.0]])     # in [-1, 1]
I = np.array([[3, -1, 0, 7], [2, 2, -5, 1], [-128, 127, 64, -3]], dtype=np.int32)
B = I > 0
E = np.zeros((0, 3))
Z = np.float64(2.5)

# name: (expression in x, inputs)
CASES = {
    "exp2": ("np.exp2(x)", [F, F32, I]), "log2": ("np.log2(x)", [P, P.astype(np.float32)]),
    "log10": ("np.log10(x)", [P]), "sinh": ("np.sinh(x)", [F, F32]), "cosh": ("np.cosh(x)", [F, F32]),
    "arcsin": ("np.arcsin(x)", [U, U.astype(np.float32)]), "arccos": ("np.arccos(x)", [U]),
    "arctan": ("np.arctan(x)", [F, F32]), "arcsinh": ("np.arcsinh(x)", [F, F32]),
    "arccosh": ("np.arccosh(x + 1)", [P]), "arctanh": ("np.arctanh(x)", [U[:, :2], U.astype(np.float32)[:, :2]]),
    "trunc": ("np.trunc(x)", [F, I, F32]), "rint": ("np.rint(x)", [F, I]), "round": ("np.round(x, 1), np.round(x), np.round(x, -1), np.round(x > 0)", [F, I, I.astype(np.uint8), I * 5]),
    "hypot": ("np.hypot(x, 2.0)", [F, F32]), "copysign": ("np.copysign(3.0, x)", [F]),
    "signbit": ("np.signbit(x), np.signbit(-x), np.copysign(1.0, -x)", [F, F32, I]),
    "logaddexp": ("np.logaddexp(x, 0.5), np.logaddexp2(x, x), np.logaddexp(x, -np.inf)", [F, F32, I]),
    "fmax": ("np.fmax(x, 0.5), np.fmin(x, np.float64(0.5))", [F, I]), "heaviside": ("np.heaviside(x, 0.5)", [F]),
    "deg2rad": ("np.deg2rad(x), np.rad2deg(x)", [F, F32]), "isnan": ("np.isnan(x), np.isinf(x), np.isfinite(x)", [F, I, B]),
    "logical": ("np.logical_and(x > 0, x < 4), np.logical_or(x, x > 2), np.logical_xor(x > 0, x < 1)", [F, I]),
    "clip": ("np.clip(x, -1, 2), x.clip(0), np.clip(x, None, 1)", [F, I, F32]), "sign": ("np.sign(x)", [F, I]),
    "reciprocal": ("np.reciprocal(x)", [F, F32]), "shifts": ("np.left_shift(x, 2), np.right_shift(x, 1)", [I, I.astype(np.uint8)]),
    "float_power": ("np.float_power(x, 2)", [F, I]),
    "var_std": ("np.var(x), np.std(x, axis=0), x.var(axis=1, ddof=1), np.std(x, keepdims=True)", [F, I, F32, E]),
    "argmax": ("np.argmax(x), np.argmin(x, axis=1), x.argmax(axis=0, keepdims=True)", [F, I, B]),
    "count_nonzero": ("np.count_nonzero(x), np.count_nonzero(x, axis=0)", [F, I, B, E]),
    "nanvar": ("np.nanvar(x), np.nanstd(x, axis=0), np.nanvar(x, axis=1, ddof=1, keepdims=True), np.nanstd(x, ddof=2)",
                    [F, I, F32, np.array([[np.nan, np.nan, 3.0], [4.0, 5.0, 6.0]])]),
    "fabs": ("np.fabs(x)", [F, I, F32]),
    "lexsort": ("np.lexsort((x[0], x[1])), np.lexsort(x), np.lexsort([x[2] > 0, x[0]])", [F, I, B]),
    "insert": ("np.insert(x, 1, 5), np.insert(x, [0, 2], x[:, :1], axis=1), np.insert(x, 2, x[0], axis=0), "
               "np.delete(x, [1, 2]), np.delete(x, 0, axis=1), np.compress([1, 0, 1], x, axis=0), x.compress([0, 1, 1])",
               [F, I, B]),
    "choose": ("np.choose(x > 2, [x, -x]), np.choose((x > 0) * 1 + (x > 2), [x, 2 * x, 7], mode='clip'), "
               "(x > 1).choose([x, x[0]])", [F, I]),
    "put": ("np.put(x, [0, 5, -1], [1, 2]) or np.putmask(x, x > 5, [7, 8]) or np.place(x, x < 3, [0.5, 4]) or "
            "x.put([2], 9) or x", [F, I]),
    "gcd": ("np.gcd(x, 6), np.lcm(x, x[::-1]), np.gcd(x, x[:, ::-1]), np.lcm(x, 4)", [I, I.astype(np.uint8), I.astype(np.int64)]),
    "bitwise_count": ("np.bitwise_count(x), np.bitwise_count(x * 1000)", [I, I.astype(np.uint8), I.astype(np.int64)]),
    "frexp": ("np.frexp(x), np.ldexp(np.frexp(x)[0], np.frexp(x)[1]), np.ldexp(x, 3), np.ldexp(x, -1), np.modf(x), "
              "np.modf(x * 10.5)", [F, F32, I]),
    "where_initial": ("np.sum(x, where=x > 0), np.max(x, initial=1, where=x < 3), np.min(x, axis=0, initial=2), "
                      "x.prod(axis=1, where=x != 0), np.mean(x, axis=1, where=x > -1), x.sum(initial=10)", [F, I, F32]),
    "vecdot": ("np.vecdot(x, x[::-1]), np.vecdot(x, x[0]), np.vecdot(x.T, x.T, axis=0), np.matrix_transpose(x), "
               "x.mT @ x", [F, I]),
    "digitize": ("np.digitize(x, [-1.0, 0.0, 2.5]), np.digitize(x, [3, 1, -1], right=True), "
                 "np.digitize(x, np.sort(np.nan_to_num(x[1]))), np.digitize(x[0], np.sort(np.nan_to_num(x[2]))[::-1])",
                 [F, I, F32]),
    "isin": ("np.isin(x, [0, 2, 3]), np.isin(x, x[1]), np.isin(x, np.arange(40) - 5.0, invert=True)", [F, I, B]),
    "block": ("np.block([[x, x[:, :2]], [x[:1], x[:1, :2]]]), np.block([x[0], 1, x[1]]), np.block(x)", [F, I]),
    "nan_cumulative": ("np.nancumsum(x), np.nancumprod(x, axis=1), np.nanargmax(x, axis=1), np.nanargmin(x), "
                       "np.nanargmin(x, axis=0)", [F, I, F32]),
    "fill_diagonal": ("np.fill_diagonal(x, 7) or x", [F, I]),
    "copyto": ("np.copyto(x, 1.5, where=x > 2) or x", [F]),
    "asanyarray": ("np.asanyarray(x) * 2, np.ascontiguousarray(x.T), np.asfortranarray(x), np.ascontiguousarray(x[0, 0]), "
                  "np.asarray_chkfinite(x + 1)", [P, I]),
    "nan_reductions": ("np.nansum(x), np.nanmax(x, axis=1), np.nanmin(x), np.nanmean(x, axis=0), np.nanprod(x)", [F, I]),
    "cumulative": ("np.cumsum(x), np.cumsum(x, axis=1), np.cumprod(x, axis=0), x.cumsum(axis=0)", [F, I, B, E]),
    "squeeze_expand": ("np.squeeze(x[None, :, None]), np.expand_dims(x, 1), np.expand_dims(x, (0, -1))", [F, I]),
    "swap_move": ("np.swapaxes(x, 0, 1), np.moveaxis(x[None], 0, -1), np.moveaxis(x[None], [0, 1], [-1, 0])", [F]),
    "concatenate": ("np.concatenate([x, x * 2], axis=1), np.concatenate((x, x.astype(np.float32))), "
                    "np.concatenate([x, x], axis=None)", [F, I]),
    "stacks": ("np.hstack([x, x]), np.vstack([x[0], x[1]]), np.column_stack([x[0], x[1]]), np.hstack([x[0], x[1]])", [F, I]),
    "broadcast_to": ("np.broadcast_to(x[0], (2, 4)) + 0", [F, I]),
    "flip_roll": ("np.flip(x), np.fliplr(x), np.flipud(x), np.flip(x, 1), np.roll(x, 1, axis=1), np.roll(x, -3)", [F, I]),
    "tri": ("np.tril(x), np.triu(x, 1), np.tril(x, -1)", [F, I]),
    "diag": ("np.diagonal(x), np.diagonal(x, 1), np.trace(x), np.diag(x[0], 1), np.diag(x[1], -2), np.diag(x), "
             "np.diagflat(x), np.diagflat(x[0], -1)", [F, I]),
    "outer_inner": ("np.outer(x[0], x[1]), np.vdot(x[0], x[1]), np.inner(x, x), np.inner(x[0], x[1]), "
                    "np.inner(x[None], x)", [F, I]),
    "norm": ("np.linalg.norm(x), np.linalg.norm(x[0], 1), np.linalg.norm(x[1], np.inf), np.linalg.norm(x, axis=1)", [P, I]),
    # argsort ties: pyjitc is stable; NumPy's default quicksort leaves tie order unspecified
    "sort": ("np.sort(x), np.sort(x, axis=0), np.argsort(x[1], kind='stable'), np.argsort(x, axis=0, kind='stable'), "
             "x.argsort(kind='stable')", [F, I, F32]),
    "take": ("np.take(x, [0, 5]), np.take(x, [1, 0], axis=1)", [F, I]),
    "tensordot": ("np.tensordot(x, x, axes=([1], [1])), np.tensordot(x[0], x[1], 1), np.tensordot(x, x.T)", [F, I]),
    "einsum": ("np.einsum('ij,kj->ik', x, x), np.einsum('ij->j', x), np.einsum('ij', x), np.einsum('ij,ij->i', x, x), "
               "np.einsum('i,j->ij', x[0], x[1]), np.einsum('ij,jk', x, x.T)", [F, I]),
    "einsum_general": ("np.einsum('ij,jk,kl->il', x, x.T, x), np.einsum('ii', x[:, :3]), np.einsum('ii->i', x[:, :3]), "
                       "np.einsum('...j,j', x, x[0]), np.einsum('i...->...', x), np.einsum('ij,ij,ij', x, x, x), "
                       "np.einsum('ij->ji', x, dtype=np.float64), np.einsum('ij->j', x, dtype=np.float64), np.einsum('i,i...->...', x[:, 0], x[:, None, :]), "
                       "np.einsum('ik,jl,kl->ij', x[:3, :3], x[:3, :3], x[:3, :3]), np.einsum('ij,kl->ijkl', x, x[:2])",
                       [F, I, I.astype(np.int8)]),
    "split": ("np.split(x, 2, axis=1), np.array_split(x, 3, axis=1), np.split(x, [1, 3], axis=1)", [F, I]),
    "tile_repeat": ("np.tile(x, 2), np.tile(x[0], (2, 1)), np.repeat(x, 2), np.repeat(x, [1, 0, 2], axis=0), "
                    "x.repeat(2, axis=1)", [F, I]),
    "pad": ("np.pad(x, 1), np.pad(x, ((0, 1), (2, 0)), constant_values=7), np.pad(x, 2, mode='edge'), "
            "np.pad(x, (1, 2), mode='reflect'), np.pad(x, 1, mode='wrap')", [F, I]),
    "pad_by_values": ("np.pad(x, 2, mode='maximum'), np.pad(x, (1, 3), mode='minimum'), np.pad(x, ((0, 2), (1, 1)), mode='mean'), "
                      "np.pad(x, 2, mode='linear_ramp'), np.pad(x, ((1, 2), (3, 0)), mode='linear_ramp', end_values=((5, -1), (2, 7)))",
                      [F, I, F.astype(np.float32)]),
    "meshgrid": ("np.meshgrid(x[0], x[1, :3]), np.meshgrid(x[0], x[1, :3], indexing='ij')", [F]),
    "take_along_axis": ("np.take_along_axis(x, np.argsort(x, axis=1, kind='stable'), axis=1), "
                        "np.take_along_axis(x, np.array([[0], [2], [1]]), axis=1)", [F, I]),
    "put_along_axis": ("np.put_along_axis(x, np.array([[0], [2], [1]]), x[:, 1:2] * 2, axis=1) or "
                       "np.put_along_axis(x, np.argsort(x, axis=0, kind='stable')[:1], 7, axis=0) or "
                       "np.put_along_axis(x, np.array([5, -1, 5]), x[0, :3], axis=None) or x", [F, I]),
    "fmod": ("np.fmod(x, 3), np.fmod(x, -2), np.fmod(-x, x + 1)", [F, F32, I, I.astype(np.uint8)]),
    "log1p_expm1": ("np.log1p(x), np.expm1(x), np.log1p(-x), np.expm1(x * 700)",
                    [F, F32, np.array([1e-300, 1e-20, 1e-10, 1e-5, -1.0, -2.0, 709.7, 0.99])]),
    "arctan2": ("np.arctan2(x, x[:, ::-1]), np.arctan2(x, 0.0), np.arctan2(-0.0, x), np.arctan2(x, -np.inf)",
                [F, F32, F.astype(np.float16)]),
    "divmod": ("np.divmod(x, 3), divmod(x, -2.5), np.divmod(-x, x + 1)", [F, F32, I]),
    "ufunc_names": ("np.add(x, 1), np.subtract(x, 1), np.multiply(x, 2), np.divide(x, 2), np.true_divide(x, 4), "
                    "np.floor_divide(x, 3), np.remainder(x, 3), np.mod(x, -3), np.pow(x, 2), np.negative(x), "
                    "np.positive(x), np.absolute(x)", [F, F32, I]),
    "compare_names": ("np.equal(x, 0), np.not_equal(x, 0), np.less(x, 1), np.less_equal(x, 1), np.greater(x, 1), "
                      "np.greater_equal(x, 1)", [F, I]),
    "bitwise_names": ("np.bitwise_and(x, 3), np.bitwise_or(x, 3), np.bitwise_xor(x, 3), np.bitwise_not(x), "
                      "np.invert(x), np.bitwise_left_shift(x, 1), np.bitwise_right_shift(x, 1)", [I, B]),
    "trig_aliases": ("np.acos(x), np.asin(x), np.atan(x), np.asinh(x), np.atanh(x * 0.5), np.acosh(np.abs(x) + 1), "
                     "np.arctan2(x, 0.5), np.degrees(x), np.radians(x), np.fix(x * 3), np.around(x, 2), np.cbrt(x), "
                     "np.expm1(x), np.log1p(np.abs(x))", [U, U.astype(np.float32)]),
    "array_names": ("np.amax(x), np.amin(x, axis=0), np.ravel(x), np.copy(x), np.concat([x, x]), "
                    "np.stack([x, x], axis=1), np.stack([x[0], x[1]]), np.row_stack([x[0], x[1]])", [F, I]),
    "creation_names": ("np.empty_like(x).shape, np.empty((2, 2)).dtype, np.full_like(x, 3), np.ones_like(x), "
                       "np.identity(3) + x[0, :3]", [F, I]),
    "searchsorted": ("np.searchsorted(np.sort(x[0]), x[1]), np.searchsorted(np.sort(x[0]), x, side='right')", [F, I]),
    "diff": ("np.diff(x), np.diff(x, 2, axis=0), np.diff(x, prepend=0), np.diff(x, append=x[:, :1]), np.diff(x > 0), "
             "np.diff(x, n=0)", [F, F32, I, E]),
    "ediff1d": ("np.ediff1d(x), np.ediff1d(x, to_begin=[1, 2], to_end=-1)", [F, I, E]),
    "ptp": ("np.ptp(x), np.ptp(x, axis=1), np.ptp(x, axis=0, keepdims=True)", [F, I, F32]),
    "average": ("np.average(x), np.average(x, axis=1), np.average(x, axis=0, weights=np.arange(3) + 1.0, returned=True), "
                "np.average(x, weights=np.abs(x) + 1, returned=True), np.average(x, axis=1, keepdims=True)", [F, I, F32]),
    "isclose": ("np.isclose(x, 0.5), np.isclose(x, x[0], equal_nan=True), np.isclose(x, 1, rtol=0.5, atol=0.25)", [F, F32, I]),
    "allclose": ("np.allclose(x, x), np.allclose(x, x, equal_nan=True), np.allclose(x, x + 1e-9)", [F, I]),
    "array_equal": ("np.array_equal(x, x), np.array_equal(x, x + 0, equal_nan=True), np.array_equal(x, x[0]), "
                    "np.array_equiv(x, x[:1]), np.array_equiv(x[:1], x[0])", [F, I, B]),
    "cross": ("np.cross(x[0, :3], x[1, :3]), np.cross(x[:, :3], x[:, 1:]), np.cross(x[0, :2], x[1, :2]), "
              "np.cross(x[:, :2], x[:, 1:]), np.cross(x[:, :3], x[0, :2]), np.cross(x[:2, :3].T, x[1:, :3].T, axis=0)", [F, I]),
    "kron": ("np.kron(x, x[:2, :2]), np.kron(x[0], x[1]), np.kron(x[0], x), np.kron(x, 2)", [F, I]),
    "trapezoid": ("np.trapezoid(x), np.trapezoid(x, dx=0.5, axis=0), np.trapezoid(x, x=np.arange(4) * 2.0), "
                  "np.trapezoid(x, x=x, axis=0)", [F, F32, I]),
    "atleast": ("np.atleast_1d(x[0, 0]), np.atleast_2d(x[0]), np.atleast_3d(x[0]), np.atleast_3d(x), "
                "np.atleast_2d(x[0, 0], x), np.atleast_3d(x[0, 0])", [F, I]),
    "select": ("np.select([x > 0, x < -1], [x, -x], 7), np.select([x > 1], [x[0]]), np.select([x > 0, x > 1], [1.5, x])",
               [F, F32, I]),
    "nan_to_num": ("np.nan_to_num(x), np.nan_to_num(x, nan=-1, posinf=5.0, neginf=np.float64(-3))",
                   [F, F32, I, F.astype(np.float16)]),
    "sinc": ("np.sinc(x)", [F, F32, I]),
    "creation_more": ("np.tri(3, 4, 1) * x, np.vander(x[0]), np.vander(x[1], 3, increasing=True), np.logspace(0, 2, 4) + x[0], "
                      "np.geomspace(1, 1000, 4) * x[1], np.logspace(0, 1, 4, base=2.0, dtype=np.float32) + x[2]", [F, F32, I]),
    "linspace": ("np.linspace(x[0, 0], x[1, 1], 5), np.linspace(0, x[0], 4, axis=1), "
                 "np.linspace(x[0], x[1], 3, endpoint=False, retstep=True), np.linspace(x[0, 0], 1, 6, dtype=np.int32), "
                 "np.logspace(x[0, 0], 2, 4), np.linspace(x[0, 0], x[0, 0], 3), np.linspace(x[0, 0], 2.0, 1), "
                 "np.linspace(x[0, 0], 1.0, 0), np.logspace(0, x[0, 1], 3, base=2.0, dtype=np.float32)",
                 [P, P.astype(np.float32), I]),
    "polyval": ("np.polyval([1, 2, 3], x), np.polyval(x[0], x), np.polyval(np.array([2.5, -1], np.float32), x)", [F, F32, I]),
    "interp": ("np.interp(x, [0.0, 1.0, 2.5], [3.0, -1.0, 4.0]), np.interp(x, [0.0, 1.0, 2.5], [3.0, -1.0, 4.0], left=-9, "
               "right=np.nan), np.interp(x, [1.0], [5.0]), np.interp(x[0], np.sort(np.nan_to_num(x[1])), x[2])", [F, F32, I]),
    "gradient": ("np.gradient(x), np.gradient(x, 2.0, axis=1), np.gradient(x[0]), np.gradient(x, axis=0)",
                 [F, F32, I]),
    "convolve": ("np.convolve(x[0], x[1]), np.convolve(x[0], x[1, :2], 'same'), np.convolve(x[0, :3], x[1], mode='valid'), "
                 "np.correlate(x[0], x[1, :3]), np.correlate(x[0, :2], x[1], 'full'), np.correlate(x[0], x[1, :2], 'same'), "
                 "np.convolve(x[0] > 0, x[1] > 0)", [F, F32, I]),
    "order_statistics": ("np.median(x), np.median(x, axis=0), np.median(x, axis=1, keepdims=True), np.quantile(x, 0.3), "
                         "np.percentile(x, [10, 50, 90], axis=1), np.quantile(x, np.array([0.0, 0.5, 1.0]), axis=0, "
                         "keepdims=True), np.percentile(x, 50, axis=(0, 1)), np.quantile(x, 1), np.quantile(x, 0.4, axis=1, method='lower'), "
                         "np.percentile(x, [20, 70], method='nearest'), np.quantile(x, [0.1, 0.5], axis=0, method='midpoint'), "
                         "np.quantile(x, 0.35, method='hazen'), np.percentile(x, 35, method='inverted_cdf'), "
                         "np.quantile(x, 0.35, method='median_unbiased')", [F, F32, I, E]),
    "cov": ("np.cov(x), np.cov(x, rowvar=False), np.cov(x[0], x[1]), np.cov(x, bias=True), np.cov(x, ddof=0), np.cov(x[0]), "
            "np.corrcoef(x), np.corrcoef(x[0], x[1]), np.corrcoef(x, rowvar=False), np.corrcoef(x[0])", [F, F32, I]),
    "bincount": ("np.bincount(np.abs(x[1]) % 5, minlength=5), np.bincount(np.abs(x).ravel() % 4, weights=np.arange(12.0), "
                 "minlength=4)", [I]),
    "histogram": ("np.histogram(x, 4, (-2, 5)), np.histogram(x, [-3.0, 0.0, 0.5, 10.0]), "
                  "np.histogram(x, 3, range=(0, 4), density=True), np.histogram(x, 3, range=(0, 4), weights=x * 2)", [F, F32, I]),
    "histogram_data_range": ("np.histogram(x), np.histogram(x, 4, density=True), "
                             "np.histogram(np.broadcast_to(x[0, 0], (5,)), 3)", [P, P.astype(np.float32), I, F, E[:, :0]]),
    "ufunc_outer": ("np.add.outer(x[0], x[1]), np.subtract.outer(x[0], 1.5), np.multiply.outer(x, x[0]), "
                    "np.maximum.outer(x[0], x[1]), np.minimum.outer(x[1], x[2]), np.divide.outer(x[0], x[1]), "
                    "np.less.outer(x[0], x[1]), np.greater.outer(x[0], 0), np.equal.outer(x[0], x[0]), "
                    "np.power.outer(x[0], 2), np.logical_and.outer(x[0], x[1]), np.logical_or.outer(x[0], x[1])", [F, I]),
    "ufunc_reduce": ("np.add.reduce(x), np.add.reduce(x, axis=1), np.multiply.reduce(x, axis=None), "
                     "np.maximum.reduce(x, axis=1, keepdims=True), np.minimum.reduce(x), np.logical_and.reduce(x), "
                     "np.logical_or.reduce(x, axis=1)", [F, I, B, E]),
    "ufunc_accumulate": ("np.add.accumulate(x), np.maximum.accumulate(x, axis=1), np.minimum.accumulate(x), "
                         "np.multiply.accumulate(x, axis=1), np.logical_and.accumulate(x), np.logical_or.accumulate(x, axis=1), "
                         "np.maximum.accumulate(x > 0)", [F, F32, I, B]),
    "ufunc_bitwise": ("np.bitwise_xor.reduce(x), np.bitwise_and.reduce(x, axis=1), "
                      "np.bitwise_or.reduce(x, axis=0, keepdims=True), np.bitwise_xor.accumulate(x, axis=1), "
                      "np.bitwise_and.accumulate(x), np.bitwise_or.accumulate(x), np.bitwise_and.reduce(x[:, :0], axis=1)",
                      [I, B]),
    # compile-time indices (one reduction per segment, idx[i] >= idx[i+1] taking one element) and
    # run-time ones (masked reductions)
    "ufunc_reduceat": ("np.add.reduceat(x, [0, 2, 1], axis=1), np.maximum.reduceat(x, [2, 0]), "
                       "np.minimum.reduceat(x, [1, 1, 3], axis=-1), np.multiply.reduceat(x[0], [0, 3]), "
                       "np.logical_or.reduceat(x, [0, 2], axis=1), np.logical_and.reduceat(x, [1, 0]), "
                       "np.add.reduceat(x, np.argsort(x[0], kind='stable')[:3], axis=1), "
                       "np.maximum.reduceat(x, np.argsort(x[:, 1], kind='stable')), "
                       "np.minimum.reduceat(x, np.argsort(x[1], kind='stable'), axis=1)", [F, F32, I, B]),
}
FUNCTION_OF_CASE = {   # registry names each case covers (for the completeness report)
    "gcd": ["numpy.gcd", "numpy.lcm"], "insert": ["numpy.insert", "numpy.delete", "numpy.compress"],
    "put": ["numpy.put", "numpy.putmask", "numpy.place"], "frexp": ["numpy.frexp", "numpy.ldexp", "numpy.modf"],
    "where_initial": ["numpy.sum", "numpy.max", "numpy.min", "numpy.prod", "numpy.mean"],
    "vecdot": ["numpy.vecdot", "numpy.matrix_transpose"],
    "nan_cumulative": ["numpy.nancumsum", "numpy.nancumprod", "numpy.nanargmax", "numpy.nanargmin"],
    "fmax": ["numpy.fmax", "numpy.fmin"], "deg2rad": ["numpy.deg2rad", "numpy.rad2deg"],
    "isnan": ["numpy.isnan", "numpy.isinf", "numpy.isfinite"],
    "logical": ["numpy.logical_and", "numpy.logical_or", "numpy.logical_xor"],
    "shifts": ["numpy.left_shift", "numpy.right_shift"], "var_std": ["numpy.var", "numpy.std"],
    "argmax": ["numpy.argmax", "numpy.argmin"], "nan_reductions": ["numpy.nansum", "numpy.nanmax", "numpy.nanmin",
                                                                    "numpy.nanmean", "numpy.nanprod"],
    "cumulative": ["numpy.cumsum", "numpy.cumprod"], "squeeze_expand": ["numpy.squeeze", "numpy.expand_dims"],
    "swap_move": ["numpy.swapaxes", "numpy.moveaxis"], "stacks": ["numpy.hstack", "numpy.vstack", "numpy.column_stack"],
    "flip_roll": ["numpy.flip", "numpy.fliplr", "numpy.flipud", "numpy.roll"], "tri": ["numpy.tril", "numpy.triu"],
    "diag": ["numpy.diagonal", "numpy.trace", "numpy.diag"], "outer_inner": ["numpy.outer", "numpy.vdot", "numpy.inner"],
    "norm": ["numpy.linalg.norm"], "log1p_expm1": ["numpy.log1p", "numpy.expm1"], "einsum_general": ["numpy.einsum"], "pad_by_values": ["numpy.pad"], "sort": ["numpy.sort", "numpy.argsort"],
    "split": ["numpy.split", "numpy.array_split"], "tile_repeat": ["numpy.tile", "numpy.repeat"],
    "ufunc_names": [], "compare_names": [], "bitwise_names": [], "trig_aliases": [], "array_names": [],
    "creation_names": [], "take_along_axis": ["numpy.take_along_axis"],
    "array_equal": ["numpy.array_equal", "numpy.array_equiv"],
    "atleast": ["numpy.atleast_1d", "numpy.atleast_2d", "numpy.atleast_3d"],
    "creation_more": ["numpy.tri", "numpy.vander", "numpy.logspace", "numpy.geomspace"],
    "convolve": ["numpy.convolve", "numpy.correlate"], "histogram_data_range": ["numpy.histogram"], "cov": ["numpy.cov", "numpy.corrcoef"],
    "order_statistics": ["numpy.median", "numpy.quantile", "numpy.percentile"],
    "ufunc_outer": [f"numpy.{u}.outer" for u in ("add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
                                                  "equal", "less", "greater", "logical_and", "logical_or")],
    "ufunc_reduce": [f"numpy.{u}.reduce" for u in ("add", "multiply", "maximum", "minimum", "logical_and", "logical_or")],
    "ufunc_bitwise": [f"numpy.bitwise_{u}.{m}" for u in ("and", "or", "xor") for m in ("reduce", "accumulate")],
    "ufunc_accumulate": [f"numpy.{u}.accumulate" for u in ("add", "multiply", "maximum", "minimum", "logical_and",
                                                            "logical_or")],
    "ufunc_reduceat": [f"numpy.{u}.reduceat" for u in ("add", "multiply", "maximum", "minimum", "logical_and",
                                                        "logical_or")],
}


@pytest.fixture(scope="module")
def functions(tmp_path_factory):
    directory = tmp_path_factory.mktemp("surface")
    source = "import numpy as np\n\n" + "".join(f"\ndef case_{n}(x):\n    return {e}\n" for n, (e, _) in CASES.items())
    return {n: pyjitc.jit(load_source(source, directory, "surface_cases", f"case_{n}")) for n in CASES}


def _cases():
    for name, (_, inputs) in CASES.items():
        for k, x in enumerate(inputs):
            yield pytest.param(name, x, id=f"{name}-{k}-{np.asarray(x).dtype}{list(np.shape(x))}")


def _same(got, want, path="result", atol=None):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), f"{path}: {type(got)}"
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{path}[{i}]", atol)
        return
    assert_same(got, want, accumulate=True, path=path, atol=atol)


# Results that cancel to (near) zero: slope * (x - xp[j]) + fp[j] may round once more or less than
# NumPy's (LLVM may fuse the multiply-add), an error bounded by the inputs' magnitude, not the result's
CANCELLING = {"interp"}


def _atol(name, x):
    if name not in CANCELLING or np.asarray(x).dtype.kind != "f":
        return None
    finite = np.asarray(x)[np.isfinite(x)]
    return 40 * np.finfo(np.asarray(x).dtype).eps * max(1.0, float(np.abs(finite).max()) if finite.size else 1.0)


@pytest.mark.parametrize("name,x", list(_cases()))
def test_function_matches_numpy(functions, name, x):
    fn = functions[name]
    with np.errstate(all="ignore"):
        try:
            want = fn.__wrapped__(x.copy() if isinstance(x, np.ndarray) else x)
        except Exception as e:   # NumPy refuses: so must pyjitc, with a located error
            with pytest.raises((pyjitc.JitError, type(e))):
                fn(x.copy() if isinstance(x, np.ndarray) else x)
            return
    # (a copy: the cases that write in place would change the inputs other cases share)
    _same(fn(x.copy() if isinstance(x, np.ndarray) else x), want, atol=_atol(name, x))


# contracted pairwise, where NumPy's einsum multiplies all factors of a term first: where an
# infinity meets a zero the two orders can give inf and NaN (documented in the einsum note)
FINITE_DRAWS = {"einsum_general"}


RUNNING_PRODUCTS = {"ufunc_accumulate", "cumulative", "nan_cumulative"}


def _drawn_like(data, x, name=""):
    """Values drawn by hypothesis with x's dtype and shape, in the range x's own values span (the
    function's domain: positive, [-1, 1], ...), with NaN/inf/-0.0 where x has non-finite values."""
    if x.dtype.kind == "b":
        return data.draw(arrays(x.dtype, x.shape))
    finite = x[np.isfinite(x)] if x.dtype.kind == "f" else x
    lo, hi = (finite.min().item(), finite.max().item()) if finite.size else (-1, 1)
    special = x.dtype.kind == "f" and not np.isfinite(x).all() and name not in FINITE_DRAWS
    drawn = data.draw(arrays(x.dtype, x.shape, allow_nan=special, min_value=lo, max_value=hi))
    if x.dtype.kind == "f":   # products of a few tiny values would be subnormal, which IREE flushes
        # (running products multiply up to a row's length of them, in NumPy's order)
        factors = max(x.shape, default=2) if name in RUNNING_PRODUCTS else 2
        drawn[np.abs(drawn) < np.finfo(x.dtype).tiny ** (1 / factors)] = 0
    return drawn


@given(data=st.data())
@pytest.mark.parametrize("name,x", [p for p in _cases() if isinstance(p.values[1], np.ndarray) and p.values[1].size])
def test_function_matches_numpy_on_drawn_values(functions, name, x, data):
    """The same cases on values hypothesis draws (same dtype and shape: no new compiles)."""
    test_function_matches_numpy(functions, name, _drawn_like(data, x, name))


def test_every_case_names_registered_functions():
    for name in CASES:
        for fn in FUNCTION_OF_CASE.get(name, [f"numpy.{name}"]):
            assert fn in registry.FUNCTIONS, f"{fn} is tested but not registered"


def test_the_generated_function_table_is_current():
    from pathlib import Path

    from pyjitc import doc
    committed = (Path(__file__).parent.parent / "docs" / "numpy_functions.md").read_text()
    assert committed == doc.table(), "run `python -m pyjitc.doc` and commit docs/numpy_functions.md"


def math_on_run_time_values(x, s):
    return math.sqrt(x.sum()), math.floor(s * 2.5), math.exp(s), math.atan2(x[0], 1.0), math.fabs(-s)


def test_math_functions_on_run_time_numbers_behave_as_in_python():
    f = pyjitc.jit(math_on_run_time_values)
    x = np.array([1.0, 2.0])
    assert_same(f(x, 1.5), math_on_run_time_values(x, 1.5))    # Python floats and ints, as math returns
    with pytest.raises(ValueError, match="math domain error"):
        f(-x, 1.5)
    with pytest.raises(OverflowError, match="math range error"):
        f(x, 1000.0)


def black_scholes_call(S, K, T, r, sigma):
    """A European call priced in a scalar loop with math.erf, as finance code writes it."""
    out = np.empty_like(S)
    for i in range(S.shape[0]):
        d1 = (math.log(S[i] / K) + (r + 0.5 * sigma * sigma) * T) / (sigma * math.sqrt(T))
        d2 = d1 - sigma * math.sqrt(T)
        n1 = 0.5 * (1.0 + math.erf(d1 / math.sqrt(2.0)))
        n2 = 0.5 * math.erfc(-d2 / math.sqrt(2.0))
        out[i] = S[i] * n1 - K * math.exp(-r * T) * n2
    return out


def erf_erfc_of(v):
    return math.erf(v), math.erfc(v)


def test_math_erf_and_erfc_on_run_time_numbers_are_pythons_to_a_few_ulp():
    # were refused ("math.erf is not supported on run-time values; NumPy has no erf"): fdlibm's
    # algorithm, as glibc's erf that Python calls; every branch and threshold of it is crossed here
    f = pyjitc.jit(erf_erfc_of)
    points = [0.0, -0.0, 1e-30, 2.0 ** -28, -2.0 ** -29, 0.2, 0.25, -0.25, 0.5, 0.84375, -0.84375, 1.0, 1.25,
              -1.25, 2.0, 1 / 0.35, -1 / 0.35, 2.86, 4.0, 5.99, 6.0, -6.5, 10.0, 25.0, -27.0, 30.0,
              math.inf, -math.inf, math.nan]
    for v in points:
        got, want = f(v), erf_erfc_of(v)
        for g, w in zip(got, want):
            assert type(g) is float
            assert (math.isnan(g) and math.isnan(w)) or g == pytest.approx(w, rel=1e-13, abs=0), (v, g, w)
    S = np.linspace(50.0, 150.0, 101)
    assert_same_call(pyjitc.jit(black_scholes_call), black_scholes_call, S, 100.0, 0.75, 0.02, 0.3)


# (np.nonzero, np.flatnonzero, np.argwhere and np.unique compile: tests/test_selections.py)
@pytest.mark.parametrize("expression", ["np.bincount(x.astype(np.int64))", "np.argwhere(x.sum())"])
def test_functions_whose_shape_depends_on_the_data_are_located_errors(expression, tmp_path):
    fn = load_source(f"import numpy as np\n\n\ndef fuzzed(x):\n    return {expression}\n", tmp_path, "dyn_shape")
    with pytest.raises(pyjitc.JitError, match="depends on the data") as e:
        pyjitc.jit(fn)(np.arange(4.0))
    assert expression in str(e.value)


@pytest.mark.parametrize("expression, message", [
    ("np.einsum('ij,jk', x, x)", "subscript 'j' has sizes 3 and 2"),
    ("np.einsum('ijk', x)", "do not match an operand with 2 axes"),
    ("np.einsum('ij,jk->q', x, x.T)", "name one no operand has"),
    ("np.einsum('ij->i', x, dtype=np.int8)", "cannot cast float64 to int8"),
])
def test_einsum_with_subscripts_numpy_rejects_is_a_located_error(expression, message, tmp_path):
    fn = load_source(f"import numpy as np\n\n\ndef fuzzed(x):\n    return {expression}\n", tmp_path, "bad_einsum")
    x = np.ones((2, 3))
    with pytest.raises(Exception):
        eval(expression, {"np": np, "x": x})        # NumPy rejects it too
    with pytest.raises(pyjitc.ShapeError, match=message) as e:
        pyjitc.jit(fn)(x)
    assert expression in str(e.value)


def test_every_registered_function_is_exercised_by_a_test():
    import pathlib
    import re
    text = "\n".join(p.read_text() for p in pathlib.Path(__file__).parent.glob("*.py"))
    untested = [n for n in registry.FUNCTIONS if n.startswith("numpy.")
                and not re.search(r"np\." + re.escape(n[len("numpy."):]) + r"\b", text)
                and not re.search("[\"']" + re.escape(n[len("numpy."):]) + "[\"']", text)]
    # names outside NumPy (scipy.special.rel_entr): a test names the routine by its full path
    untested += [n for n in registry.FUNCTIONS if not n.startswith("numpy.") and not re.search(
        "[\"']" + re.escape(n) + "[\"']", text)]
    assert not untested, f"no test calls: {untested}"


def sort_and_return_input(y):
    return np.sort(y), y, y * 1, y.reshape(-1, 1)


def update_copy_and_return_input(y):
    z = y.copy()
    z[0] = 5.0
    return z, y, np.argsort(y)


def test_returning_an_argument_beside_an_in_place_operation_gives_the_original():
    # found by tests/fuzz.py: IREE sorted (and updated) the argument buffer in place, and the
    # argument returned beside it came back sorted
    y = np.array([-0.12, -7.01, -2.46, 3.5])
    for fn in (sort_and_return_input, update_copy_and_return_input):
        arg = y.copy()
        got = pyjitc.jit(fn)(arg)
        _same(got, fn(y.copy()))
        assert got[1] is arg, "NumPy returns the argument object itself"


def rounded(x):
    return round(x, 2)


def full_like_shaped(x):
    return np.full_like(x, 0.5, shape=(2, 2))


def test_round_of_an_array_is_numpys_type_error_and_full_like_takes_a_shape():
    with pytest.raises(TypeError):
        rounded(np.array([0.123, 4.567]))
    with pytest.raises(pyjitc.JitError, match="doesn't define __round__"):
        pyjitc.jit(rounded)(np.array([0.123, 4.567]))
    assert pyjitc.jit(rounded)(1.23456) == rounded(1.23456)
    x = np.arange(3, dtype=np.float32)
    assert_same(pyjitc.jit(full_like_shaped)(x), full_like_shaped(x))
