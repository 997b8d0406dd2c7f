"""python_ints: Python ints are unbounded; a compiled function holds them in 64 bits. Where an
operator on Python ints (`a * 10`, `a + b`, `a << k`, `-a`, `a ** k`) can give a result past int64,
the compiled function checks at run time and raises OverflowError (a located RunError) there,
instead of returning the wrapped number. Operands whose ranges are known at compile time (loop
indices of `range` loops with compile-time bounds, plus or times constants) are not checked when
the result provably fits."""
from __future__ import annotations

import numpy as np

from .values import SIZE_BOUND, Traced

I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1
CHECKED = ("Add", "Sub", "Mult", "FloorDiv", "LShift", "USub", "Pow")
MESSAGE = ("OverflowError: a Python int result past 64 bits (compiled functions hold Python ints in "
           "int64, where Python's are unbounded); use floats, or np.int64 to wrap around as NumPy does")


def is_python_int(x) -> bool:
    if isinstance(x, Traced):
        return x.weak is int and x.ndim == 0
    return isinstance(x, int) and not isinstance(x, bool)


def is_python_number(x) -> bool:
    if isinstance(x, Traced):
        return x.weak in (int, float) and x.ndim == 0
    return type(x) in (int, float)


def check(em, op_name: str, args: tuple, out) -> None:
    """Emits the run-time checks of `out = op(*args)` on Python numbers: where Python raises
    (ZeroDivisionError; a float power that overflows or would be complex) and where a Python int
    result would not fit int64 (nothing where compile-time ranges prove it can't)."""
    if isinstance(out, Traced) and len(args) == 2 and all(is_python_number(a) for a in args) \
            and any(isinstance(a, Traced) for a in args):
        _python_raises(em, op_name, args, out)
    if op_name not in CHECKED or not isinstance(out, Traced) or not all(is_python_int(a) for a in args) \
            or not is_python_int(out):
        return
    bounds = _bounds(em, op_name, args)
    if bounds is not None and I64_MIN <= bounds[0] and bounds[1] <= I64_MAX:
        em.int_bounds[out.value.id] = bounds      # (`i * n + j`: the sum's operands have bounds too)
        return
    bad = _overflowed(em, op_name, [_as_i64(em, a) for a in args], em.cast(out, np.int64))
    if bad is not None:
        em.check(bad, MESSAGE)


def _bounds(em, op_name, args) -> tuple[int, int] | None:
    """The result's range where the operands' are known at compile time, else None."""
    ranges = [em.int_bounds.get(a.value.id) or em.range_of(a) if isinstance(a, Traced) else em.range_of(a) for a in args]
    if any(r is None for r in ranges):
        return None
    # a size known only at run time (ir/dims.py: `range(i, n)` over a symbolic n) is an array's
    # length, at most 2**62 (so `n - i` needs no check either)
    ranges = [tuple(b if type(b) is int else (-SIZE_BOUND if k == 0 else SIZE_BOUND) for k, b in enumerate(r))
              for r in ranges]
    if op_name == "USub":
        return -ranges[0][1], -ranges[0][0]
    if op_name in ("Add", "Sub", "Mult"):
        (a0, a1), (b0, b1) = ranges
        if op_name == "Sub":
            b0, b1 = -b1, -b0
        corners = [a0 + b0, a1 + b1] if op_name != "Mult" else [a0 * b0, a0 * b1, a1 * b0, a1 * b1]
        return min(corners), max(corners)
    return None


def _as_i64(em, a):
    return em.cast(a, np.int64) if isinstance(a, Traced) else em.constant(np.int64(a))


def _overflowed(em, op_name, args, r):
    e = em.emit
    zero = em.constant(np.int64(0))
    lt = lambda x, y: e("compare", x, y, direction="LT")
    ne = lambda x, y: e("compare", x, y, direction="NE")
    eq = lambda x, y: e("compare", x, y, direction="EQ")
    if op_name == "USub":
        return eq(args[0], em.constant(np.int64(I64_MIN)))
    a, b = args
    if op_name == "Add":     # the sign of the result differs from both operands'
        return lt(e("and", e("xor", a, r), e("xor", b, r)), zero)
    if op_name == "Sub":     # the operands' signs differ and the result's differs from a's
        return lt(e("and", e("xor", a, b), e("xor", a, r)), zero)
    if op_name == "Mult":    # r / a != b (a != 0), or -1 * MIN
        one = em.constant(np.int64(1))
        a_zero = eq(a, zero)
        q = e("div", r, e("select", a_zero, one, a))
        minus_min = e("and", eq(a, em.constant(np.int64(-1))), eq(b, em.constant(np.int64(I64_MIN))))
        return e("or", e("and", e("not", a_zero), ne(q, b)), minus_min)
    if op_name == "FloorDiv":   # MIN // -1 is 2**63
        return e("and", eq(a, em.constant(np.int64(I64_MIN))), eq(b, em.constant(np.int64(-1))))
    if op_name == "LShift":  # bits shifted out, or a shift of 64 or more of a nonzero value
        big = e("compare", b, em.constant(np.int64(63)), direction="GT")
        back = e("shift_right_arithmetic", r, e("select", big, zero, b))
        return e("and", ne(a, zero), e("or", big, ne(back, a)))
    if op_name == "Pow":     # |a| ** b past 2**63, in float64 (exact enough away from the edge)
        f = lambda x: em.cast(x, np.float64)
        mag = e("pow", e("abs", f(a)), f(b))
        return e("and", e("compare", b, zero, direction="GT"),
                 e("compare", mag, em.constant(np.float64(2.0 ** 63)), direction="GE"))
    return None


def _python_raises(em, op_name, args, out) -> None:
    """Python's own errors on numbers (NumPy would give inf or NaN with a warning)."""
    b = args[1]
    as_f64 = lambda v: em.cast(v, np.float64) if isinstance(v, Traced) else em.constant(np.float64(v))
    zero = em.constant(np.float64(0.0))
    if op_name in ("Div", "FloorDiv", "Mod"):
        if not isinstance(b, Traced) and b != 0:
            return
        what = {"Div": "division by zero", "FloorDiv": "integer division or modulo by zero",
                "Mod": "integer modulo by zero"}[op_name]
        if any(isinstance(v, float) or isinstance(v, Traced) and v.weak is float for v in args):
            what = {"Div": "float division by zero", "FloorDiv": "float floor division by zero",
                    "Mod": "float modulo by zero"}[op_name]
        em.check(em.emit("compare", as_f64(b), zero, direction="EQ"), f"ZeroDivisionError: {what}")
    elif op_name == "Pow" and isinstance(out, Traced) and out.weak is float:
        a = as_f64(args[0])
        e = as_f64(b)
        em.check(em.emit("and", em.emit("compare", a, zero, direction="EQ"),
                         em.emit("compare", e, zero, direction="LT")),
                 "ZeroDivisionError: 0.0 cannot be raised to a negative power")
        fractional = em.emit("compare", em.emit("floor", e), e, direction="NE")
        em.check(em.emit("and", em.emit("compare", a, zero, direction="LT"), fractional),
                 "ValueError: a negative number to a fractional power is a complex number in Python; "
                 "compiled code keeps the float type (use complex(a) ** b, or np.power for NaN)")
        finite = lambda v: em.emit("is_finite", v)
        em.check(em.emit("and", em.emit("and", finite(a), finite(e)), em.emit("not", finite(em.cast(out, np.float64)))),
                 "OverflowError: (34, 'Numerical result out of range')")
