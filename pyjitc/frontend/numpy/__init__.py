"""The NumPy functions, ndarray methods and Python builtins pyjitc compiles, by topic (as JAX's
jax/_src/numpy/ and Numba's numba/np/). Each implementation maps NumPy's semantics (dtypes from
NumPy's own type resolution, NEP 50 weak Python scalars, broadcasting, axis rules, views) onto the
typed IR's primitives, and is registered next to its definition (registry.register); importing
this package registers them all.

    elementwise.py   building blocks of lowerings (compare, select, computing in float64)
    accurate.py      lowerings that match NumPy's float results where IREE's ops do not
    ufuncs.py        apply_ufunc and the ufunc table; where, clip, round, nan_to_num, sinc
    powers.py        power (**, np.pow), float_power
    ufunc_methods.py np.add.outer, np.maximum.reduce, np.minimum.accumulate, ...
    dtypes.py        astype and the scalar types (np.float32(x))
    shapes.py        reshape, transpose, concatenate, flip, diagonal, pad, ...; shape/ndim/T
    creation.py      zeros, arange, full, *_like, array, asarray, copy
    reductions.py    sum, mean, max, var, argmax, nan*, cumsum, ...
    contractions.py  matmul, dot, vdot, inner, outer, tensordot, einsum
    editing.py       insert, delete, compress, choose; put, putmask, place (in place)
    sorting.py       sort, argsort, searchsorted, take, take_along_axis
    sets.py          intersect1d, setdiff1d, setxor1d (selections over sorted data)
    linalg.py        numpy.linalg: solve, inv, det, slogdet, cholesky, norm
    fft.py           numpy.fft: fft, ifft, rfft, irfft, fftn, ..., fftfreq, fftshift
    complex.py       conjugate, real, imag, angle
    introspection.py shape, ndim, result_type, finfo, ... on stand-ins; broadcast_arrays; errstate
    comparisons.py   isclose, allclose, array_equal, array_equiv, select
    calculus.py      diff, ediff1d, gradient, trapezoid, interp, polyval, vander, convolve, correlate
    statistics.py    ptp, average, median, percentile, quantile, cov, corrcoef, bincount, histogram
    bits.py          gcd, lcm, bitwise_count; frexp, ldexp, modf (from the representation)
    builtins.py      Python builtins (len, range, min, ...); list.index/count of run-time values
    math_module.py   the math and cmath modules on run-time numbers
    iteration.py     itertools (product, combinations, ...) and functools.reduce, run while compiling
    spectral.py      svd values, eigvalsh, norm 2/nuc, cond, matrix_rank, pinv, lstsq (jacobi.py's methods)
    scipy_calls.py   SciPy routines NumPy-level library code calls: scipy.special.rel_entr, BLAS nrm2
    as_python.py     apply_along_axis, written as the NumPy code a user would write (compiled as a helper)
"""
from . import (accurate, as_python, bits, builtins, calculus, comparisons, complex, contractions, creation, dtypes,  # noqa: F401
               editing, elementwise, fft, introspection, iteration, linalg, math_module, powers, reductions, scipy_calls,
               sets, shapes, sorting, spectral, statistics, ufunc_methods, ufuncs)
