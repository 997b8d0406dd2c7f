"""scipy_calls: the few SciPy routines plain NumPy code in SciPy itself calls, with SciPy's values and
types: scipy.special.rel_entr (a ufunc: NumPy's resolver picks its loop), and BLAS nrm2 as
scipy.linalg.norm reaches it (`get_blas_funcs('nrm2', ...)` answered at compile time, the routine
computed as BLAS does: scaled, a Python float). SciPy is imported only by the code that calls these;
their registered names are resolved once it is (policy._LATER)."""
from __future__ import annotations

import numpy as np

from ...errors import NotSupportedError, ShapeError
from ..registry import FUNCTIONS, register
from ..values import Traced, is_static
from . import accurate
from .elementwise import cmp, const, in_double, isnan, sel, zero_like
from .ufuncs import ufunc_impl


# ---------------------------------------------------------------- scipy.special

def _rel_entr(em, x, y):
    """x * log(x / y) for x, y > 0; 0 for x == 0 <= y; inf otherwise; NaN if either is NaN
    (SciPy's special/xsf rel_entr), in float64 as SciPy's float32 loop computes it."""
    zero = zero_like(em, x)
    both_positive = em.emit("and", cmp(em, x, zero, "GT"), cmp(em, y, zero, "GT"))
    at_zero = em.emit("and", cmp(em, x, zero, "EQ"), cmp(em, y, zero, "GE"))
    ratio = em.emit("div", x, y)
    # a ratio below float64's smallest normal would be flushed to 0 by IREE's CPU code (subnormals):
    # there log(x) - log(y), which is what log(x / y) is to within an ulp of a number near -700
    tiny = const(em, np.finfo(np.float64).tiny, ratio)
    log_ratio = sel(em, cmp(em, ratio, tiny, "LT"), em.emit("sub", em.emit("log", x), em.emit("log", y)),
                    em.emit("log", ratio))
    value = em.emit("mul", x, log_ratio)
    out = sel(em, both_positive, value, sel(em, at_zero, zero, const(em, np.inf, x)))
    return sel(em, em.emit("or", isnan(em, x), isnan(em, y)), const(em, np.nan, x), out)


@register("scipy.special.rel_entr", note="SciPy's ufunc: x log(x/y), 0 at x = 0, inf outside the domain")
def rel_entr(em, x, y, **kwargs):
    from scipy import special
    return ufunc_impl(special.rel_entr, lambda em, a, b, out_dtype: in_double(_rel_entr)(em, a, b))(em, x, y, **kwargs)


def _error_function(name, fn):
    """scipy.special.erf / erfc of real values: SciPy's float32 loop for float16/32 (computed in
    float64, as SciPy's own loop does, and rounded), its float64 loop for everything else; fdlibm's
    algorithm (accurate.erf), within a few ulp of SciPy's cephes. math.erf reaches it too (MATH)."""
    def impl(em, x, **kwargs):
        if kwargs:
            raise NotSupportedError(f"scipy.special.{name}: keyword arguments (out=, where=, ...) are not supported")
        x = em.asarray(x)
        if x.dtype.kind == "c":
            raise NotSupportedError(f"scipy.special.{name} of complex numbers is not supported")
        out_dtype = np.float32 if x.dtype in (np.float16, np.float32) else np.float64
        return em.cast(fn(em, em.cast(x, np.float64)), out_dtype)
    impl.__name__ = name
    return impl


register("scipy.special.erf", note="fdlibm's erf (as glibc's, Python's math.erf), real values")(
    _error_function("erf", accurate.erf))
register("scipy.special.erfc", note="fdlibm's erfc (as glibc's, Python's math.erfc), real values")(
    _error_function("erfc", accurate.erfc))


# ---------------------------------------------------------------- BLAS through scipy.linalg

BLAS_ROUTINES = ("nrm2",)


@register("scipy.linalg.blas.get_blas_funcs",
          note="answered at compile time; of the routines it names, nrm2 compiles")
def get_blas_funcs(em, names, arrays=(), dtype=None, ilp64=False):
    """SciPy's lookup of a BLAS routine by name and dtype, run at compile time (it reads only
    dtypes and memory order): the routine objects themselves, which compiled code may then call
    where they are registered (nrm2)."""
    from scipy.linalg import blas
    names, ilp64 = em.static(names, "get_blas_funcs: names"), em.static(ilp64, "get_blas_funcs: ilp64")
    dtype = em.static(dtype, "get_blas_funcs: dtype")
    wanted = (names,) if isinstance(names, str) else tuple(names)
    unknown = [n for n in wanted if n not in BLAS_ROUTINES]
    if unknown:
        raise NotSupportedError(f"get_blas_funcs: the BLAS routine {unknown[0]!r} can't be called inside @jit",
                                hint=f"of BLAS, {', '.join(BLAS_ROUTINES)} compile")
    stand_ins = tuple(np.empty((0,) * a.ndim, a.dtype) if isinstance(a, Traced) else a for a in arrays)
    return blas.get_blas_funcs(names, stand_ins, dtype=dtype, ilp64=ilp64)


def _nrm2(em, x, offx=0, incx=1, n=None):
    """BLAS ?nrm2 of a vector: the Euclidean norm computed scaled by the largest magnitude (no
    overflow or underflow where the result is representable), in the routine's precision, returned
    as a Python float; NaN if any entry is NaN, else inf if any is infinite."""
    if not is_static(offx, incx, n) or (offx, incx, n) != (0, 1, None):
        raise NotSupportedError("nrm2: offx=, incx= and n= are not supported", hint="slice the vector instead")
    if x.ndim != 1:
        raise ShapeError(f"nrm2: expected a vector (1-D), got {x.ndim} dimensions")
    if x.shape[0] == 0:
        raise ShapeError("nrm2: (offx>=0 && offx<len(x)) failed: the vector is empty")
    a = em.emit("abs", x)
    scale = FUNCTIONS["numpy.max"](em, a)
    zero, inf = zero_like(em, scale), const(em, np.inf, scale)
    safe = sel(em, em.emit("and", cmp(em, scale, zero, "GT"), cmp(em, scale, inf, "LT")), scale,
               const(em, 1.0, scale))
    scaled = em.emit("div", a, em.broadcast(safe, a.shape))
    norm = em.emit("mul", safe, em.emit("sqrt", FUNCTIONS["numpy.sum"](em, em.emit("mul", scaled, scaled))))
    norm = sel(em, cmp(em, scale, inf, "EQ"), inf, sel(em, cmp(em, scale, zero, "EQ"), zero, norm))
    out = em.cast(sel(em, isnan(em, scale), const(em, np.nan, scale), norm), np.float64)
    return Traced(out.value, float, out.params)


for _dtype, _prefix in ((np.float32, "s"), (np.float64, "d")):
    def _typed(em, x, offx=0, incx=1, n=None, _dtype=_dtype):
        """snrm2 sums in double precision (OpenBLAS's kernels) and rounds the result to float32."""
        x = em.cast(em.cast(em.asarray(x), _dtype), np.float64)
        out = _nrm2(em, x, offx, incx, n)
        return out if _dtype == np.float64 else Traced(em.cast(em.cast(out, _dtype), np.float64).value, float, out.params)
    register(f"scipy.linalg._fblas.{_prefix}nrm2", note="BLAS nrm2, as scipy.linalg.get_blas_funcs returns it")(_typed)
