"""dims: dimensions known only at run time. A `Dim` is a polynomial with integer coefficients
over named symbols (`n`, `n - 2`, `n * m`); each symbol stands for one argument dimension
whose value is at least 2 (sizes 0 and 1 change NumPy's broadcasting and are compiled
statically). Arithmetic with ints and other Dims gives Dims; a question whose answer depends on
the symbols' values (`n == 5`, `int(n)`, `n < m`) raises `NeedsStaticShape`, which compiles the
function with static shapes instead (or, with `dynamic=True`, stops with a located error). So a
symbolic compile either answers every question as it would for every size, or does not happen."""
from __future__ import annotations

import contextlib
import contextvars
import itertools

# The smallest value a symbol stands for: the call path sends sizes 0 and 1 to static code.
MIN_SIZE = 2


class NeedsStaticShape(BaseException):
    """A compile with symbolic dimensions met a question that depends on their values. A
    BaseException so that no `except Exception` inside the compiler takes another path on it:
    it always reaches the @jit wrapper, which compiles with static shapes."""

    def __init__(self, message: str, this_size: bool = False):
        super().__init__(message)
        self.message = message
        self.this_size = this_size   # only the sizes of this call: others may compile with symbols


_anonymous = itertools.count(1)


class Tracing:
    """While a symbolic compile runs: `hints`, the symbols' values in the call being compiled
    (None for a template with no example), and `guards`, the questions answered from them. A
    question the bounds can't decide is answered from the hint and becomes a guard: the
    executable is then used only for calls whose sizes give the same answers (as torch.compile
    does)."""

    def __init__(self, hints: dict[str, int] | None):
        self.hints = hints
        self.guards: list[tuple] = []    # (lhs Dim, op, rhs int | Dim, answer)


_TRACING: contextvars.ContextVar[Tracing | None] = contextvars.ContextVar("pyjitc_dims", default=None)


@contextlib.contextmanager
def tracing(hints: dict[str, int] | None):
    state = Tracing(hints)
    token = _TRACING.set(state)
    try:
        yield state
    finally:
        _TRACING.reset(token)


_TESTS = {"==": lambda a, b: a == b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
          ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


# whether (self - other) `op` 0 holds for every value of the difference in [low, high]: True,
# False, or None where it depends on the value
_DECIDED = {
    "==": lambda lo, hi: True if lo == hi == 0 else False if lo > 0 or hi < 0 else None,
    "<": lambda lo, hi: True if hi < 0 else False if lo >= 0 else None,
    "<=": lambda lo, hi: True if hi <= 0 else False if lo > 0 else None,
    ">": lambda lo, hi: True if lo > 0 else False if hi <= 0 else None,
    ">=": lambda lo, hi: True if lo >= 0 else False if hi < 0 else None,
}


def guards_hold(guards, values: dict[str, int]) -> bool:
    """Whether sizes `values` answer every guard's question as the compiled call did."""
    value = lambda d: d.evaluate(values) if isinstance(d, Dim) else d
    return all(_TESTS[op](value(lhs), value(rhs)) == answer for lhs, op, rhs, answer in guards)


def fresh(prefix: str = "_d") -> "Dim":
    """A symbol of its own (the `?` of a template)."""
    return Dim.symbol(f"{prefix}{next(_anonymous)}")


class Dim:
    """A symbolic dimension: terms maps a sorted tuple of symbol names (a monomial; () is the
    constant) to its coefficient. Made only through `symbol` and arithmetic; an expression that
    is a plain number comes back as an int."""
    __slots__ = ("terms", "_hash")

    def __init__(self, terms: dict):
        self.terms = {m: c for m, c in terms.items() if c}
        self._hash = hash(frozenset(self.terms.items()))

    @classmethod
    def symbol(cls, name: str) -> "Dim":
        return cls({(name,): 1})

    @staticmethod
    def _make(terms: dict):
        d = Dim(terms)
        if not d.terms:
            return 0
        if set(d.terms) == {()}:
            return d.terms[()]
        return d

    @property
    def symbols(self) -> set[str]:
        return {s for m in self.terms for s in m}

    @property
    def name(self) -> str | None:
        """The symbol's name when this is one plain symbol, else None."""
        if len(self.terms) == 1:
            (m, c), = self.terms.items()
            if c == 1 and len(m) == 1:
                return m[0]
        return None

    # -- arithmetic
    @staticmethod
    def _terms(x) -> dict:
        if isinstance(x, Dim):
            return x.terms
        if isinstance(x, bool) or not isinstance(x, int):
            raise TypeError
        return {(): x} if x else {}

    def __add__(self, other):
        try:
            b = self._terms(other)
        except TypeError:
            return NotImplemented
        out = dict(self.terms)
        for m, c in b.items():
            out[m] = out.get(m, 0) + c
        return self._make(out)

    __radd__ = __add__

    def __neg__(self):
        return self._make({m: -c for m, c in self.terms.items()})

    def __sub__(self, other):
        try:
            self._terms(other)
        except TypeError:
            return NotImplemented
        return self + (-other)

    def __rsub__(self, other):
        try:
            self._terms(other)
        except TypeError:
            return NotImplemented
        return (-self) + other

    def __mul__(self, other):
        try:
            b = self._terms(other)
        except TypeError:
            return NotImplemented
        out: dict = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in b.items():
                m = tuple(sorted(m1 + m2))
                out[m] = out.get(m, 0) + c1 * c2
        return self._make(out)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        if isinstance(other, int) and not isinstance(other, bool) and other > 0 \
                and all(c % other == 0 for c in self.terms.values()):
            return self._make({m: c // other for m, c in self.terms.items()})
        if isinstance(other, Dim) and len(other.terms) == 1:   # by a monomial that divides every term
            (mono, coef), = other.terms.items()
            out = {}
            for m, c in self.terms.items():
                rest = list(m)
                for sym in mono:
                    if sym not in rest:
                        break
                    rest.remove(sym)
                else:
                    if c % coef == 0:
                        out[tuple(rest)] = c // coef
                        continue
                break
            else:
                return self._make(out)
        raise NeedsStaticShape(f"the dimension {self} divided by {other}")

    def __rmod__(self, other):
        """i % n for an index i known at compile time (NumPy's wrap of a negative index)."""
        if isinstance(other, int) and not isinstance(other, bool):
            if 0 <= other < self:
                return other
            if -self <= other < 0:
                return self + other
        raise NeedsStaticShape(f"{other} modulo the dimension {self}")

    # -- what can be decided for every value of the symbols (each >= MIN_SIZE)
    def lower_bound(self) -> int | None:
        """The smallest value over all symbol values >= MIN_SIZE, or None where unbounded below
        (a negative coefficient on a monomial)."""
        if any(c < 0 for m, c in self.terms.items() if m):
            return None
        return sum(c * MIN_SIZE ** len(m) for m, c in self.terms.items())

    def _difference_bounds(self, other) -> tuple:
        """(low, high) of self - other over every value of the symbols; None where unbounded."""
        diff = self - other
        if isinstance(diff, int):
            return diff, diff
        low, neg_low = diff.lower_bound(), (-diff).lower_bound()
        return low, None if neg_low is None else -neg_low

    def _decide(self, other, op: str) -> bool:
        if not isinstance(other, (int, Dim)) or isinstance(other, bool):
            raise NeedsStaticShape(f"the dimension {self} compared with {other!r}")
        low, high = self._difference_bounds(other)
        known = _DECIDED[op](-1 << 62 if low is None else low, 1 << 62 if high is None else high)
        if known is not None:
            return known
        state = _TRACING.get()
        if state is None or state.hints is None or not (self.symbols | _symbols(other)) <= set(state.hints):
            raise NeedsStaticShape(f"whether {self} {op} {other} depends on the size")
        lhs, rhs = self.evaluate(state.hints), other.evaluate(state.hints) if isinstance(other, Dim) else other
        answer = _TESTS[op](lhs, rhs)
        if answer and op == "==" and not isinstance(other, Dim):
            # the size is this number: a static size (the compiled code would mix ? and it)
            raise NeedsStaticShape(f"{self} is {other} here, and the code depends on it", this_size=True)
        state.guards.append((self, op, other, answer))
        return answer

    def __eq__(self, other):
        if isinstance(other, Dim) and other.terms == self.terms:
            return True
        if not isinstance(other, (int, Dim)) or isinstance(other, bool):
            return False
        return self._decide(other, "==")

    def __ne__(self, other):
        return not self.__eq__(other)

    def __lt__(self, other):
        return self._decide(other, "<")

    def __le__(self, other):
        return self._decide(other, "<=")

    def __gt__(self, other):
        return self._decide(other, ">")

    def __ge__(self, other):
        return self._decide(other, ">=")

    def __hash__(self):
        return self._hash

    def __bool__(self):
        return self != 0

    def __index__(self):
        raise NeedsStaticShape(f"the dimension {self} is used where its number is needed")

    def __int__(self):
        raise NeedsStaticShape(f"the dimension {self} is used where its number is needed")

    def __float__(self):
        raise NeedsStaticShape(f"the dimension {self} is used where its number is needed")

    def __repr__(self) -> str:
        parts = []
        for m, c in sorted(self.terms.items(), key=lambda mc: (-len(mc[0]), mc[0])):
            name = "*".join(m)
            if not m:
                parts.append(str(c))
            elif c == 1:
                parts.append(name)
            elif c == -1:
                parts.append(f"-{name}")
            else:
                parts.append(f"{c}*{name}")
        return " + ".join(parts).replace("+ -", "- ")

    __str__ = __repr__

    def evaluate(self, values: dict[str, int]) -> int:
        total = 0
        for m, c in self.terms.items():
            term = c
            for s in m:
                term *= values[s]
            total += term
        return total


def _same(a, b) -> bool:
    """Equal as expressions (no question about values)."""
    if isinstance(a, Dim) and isinstance(b, Dim):
        return a.terms == b.terms
    return not isinstance(a, Dim) and not isinstance(b, Dim) and a == b


def _symbols(x) -> set[str]:
    return x.symbols if isinstance(x, Dim) else set()


def nonnegative(x):
    """max(0, x) for a length that can't be negative when the bounds say so (n - 2)."""
    if isinstance(x, Dim):
        return x if x >= 0 else 0
    return max(0, x)


def slice_indices(start, stop, step, n):
    """slice(start, stop, step).indices(n) and the slice's length, for an int or Dim `n` (as
    CPython's PySlice_AdjustIndices; comparisons with a Dim decide or guard, see Dim)."""
    if not isinstance(n, Dim):
        s, e, k = slice(start, stop, step).indices(n)
        return s, e, k, len(range(s, e, k))
    k = 1 if step is None else int(step)
    if k == 0:
        raise ValueError("slice step cannot be zero")
    lower, upper = (0, n) if k > 0 else (-1, n - 1)

    def adjust(v, default):
        if v is None:
            return default
        v = v if isinstance(v, Dim) else int(v)
        if v < 0:   # (the comparisons are ordered so that n >= MIN_SIZE decides the usual ones)
            v = v + n
            return v if v >= lower else lower
        return v if v <= upper else upper
    s = adjust(start, lower if k > 0 else upper)
    e = adjust(stop, upper if k > 0 else lower)
    if k > 0:
        length = nonnegative(e - s) if k == 1 else (0 if e <= s else (e - s + k - 1) // k)
    else:
        length = 0 if s <= e else (s - e - k - 1) // (-k)
    return s, e, k, length


def broadcast_shapes(*shapes):
    """np.broadcast_shapes for shapes that may hold Dims; ValueError where they can't broadcast."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(ndim):
        s = shapes[-1]
        column = [s[axis - (ndim - len(s))] for s in shapes if axis - (ndim - len(s)) >= 0]
        distinct = []
        for d in column:
            if not (isinstance(d, int) and d == 1) and all(d is not e and not _same(d, e) for e in distinct):
                distinct.append(d)
        if len(distinct) <= 1:   # one extent (a Dim that is 1 at run time is 1 in every operand)
            out.append(distinct[0] if distinct else 1)
            continue
        size = 1
        for s in shapes:
            if axis - (ndim - len(s)) < 0:
                continue
            d = s[axis - (ndim - len(s))]
            if d == 1:
                continue
            if size == 1:
                size = d
            elif not d == size:
                raise ValueError("shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is "
                                 f"between {tuple(shapes[0])} and {tuple(s)}")
        out.append(size)
    return tuple(out)


def broadcast_to(shape, target) -> None:
    """np.broadcast_to's check: ValueError where `shape` can't broadcast to `target`."""
    if len(shape) > len(target) or broadcast_shapes(shape, target) != tuple(target):
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"{tuple(shape)} and requested shape {tuple(target)}")


def reshaped(old, new) -> tuple:
    """The shape `new` (one -1 allowed) for an array of shape `old`, as ndarray.reshape finds it."""
    new = tuple(new)
    size = 1
    for d in old:
        size = size * d
    known = 1
    for d in new:
        if not (isinstance(d, int) and d == -1):
            known = known * d
    if sum(1 for d in new if isinstance(d, int) and d == -1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if any(isinstance(d, int) and d == -1 for d in new):
        if isinstance(known, Dim) or isinstance(size, Dim):
            if not isinstance(size, Dim):
                raise NeedsStaticShape(f"reshape of {tuple(old)} to {new}")
            missing = size // known
        else:
            missing = size // known if known else 0
        new = tuple(missing if isinstance(d, int) and d == -1 else d for d in new)
        known = known * missing
    if not known == size:
        raise ValueError(f"cannot reshape array of size {size} into shape {new}")
    return new


def bind(spec_shape, shape, values: dict[str, int]) -> bool:
    """Whether an array of `shape` fits `spec_shape` (ints and symbols), binding the symbols'
    values in `values` (a symbol seen before must have the same value; each at least MIN_SIZE)."""
    if len(spec_shape) != len(shape):
        return False
    for want, got in zip(spec_shape, shape):
        if isinstance(want, Dim):
            name = want.name
            if name is None or got < MIN_SIZE or values.setdefault(name, got) != got:
                return False
        elif want != got:
            return False
    return True


def product(sizes):
    """The product of ints and Dims (an int where all are ints)."""
    out = 1
    for d in sizes:
        out = out * (d if isinstance(d, Dim) else int(d))
    return out


def is_symbolic(shape) -> bool:
    return any(isinstance(d, Dim) for d in shape)
