"""dynamic: which array dimensions a @jit function compiles as symbolic (ir/dims.py), and
whether a call fits an executable compiled that way. The call path (api.py) asks this module;
the frontend and the lowering only ever see Templates whose dimensions are ints or Dims.

Policy (`@jit(dynamic=...)`):
- False: every dimension static, one executable per shape (pyjitc's first behaviour).
- True: from the first call, every dimension of size >= 2 of a top-level array argument is
  symbolic; dimensions of equal size share a symbol ("duck sizing", as torch.compile): the
  executable then serves calls where they are equal again.
- None (default): static first; a call that differs from a compiled one only in some array
  dimensions compiles once more with exactly those dimensions symbolic. Where the function asks
  a question of a size that the symbols can't answer for every value (`int(n)`), the symbolic
  compile is given up and the function stays static."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .ir import dims
from .template import Template


@dataclass
class SymbolicEntry:
    """One executable compiled with symbolic dimensions. `pattern`: per parameter, the
    Template with symbols for an array argument, else the static cache-key part it was compiled
    for; `guards`: size questions answered while compiling (dims.guards_hold); `global_guards`:
    api.Guard values read as constants."""
    compiled: object
    pattern: tuple
    guards: list
    global_guards: list = field(default_factory=list)

    def fits(self, values_in_order, key) -> bool:
        sizes: dict[str, int] = {}
        for want, value, part in zip(self.pattern, values_in_order, key):
            if isinstance(want, Template):
                if type(value) is not np.ndarray or value.dtype.newbyteorder("=") != want.dtype \
                        or not dims.bind(want.shape, value.shape, sizes):
                    return False
            elif want != part:
                return False
        return dims.guards_hold(self.guards, sizes)

    def describe(self, names) -> str:
        return ", ".join(f"{n}: {p}" for n, p in zip(names, self.pattern)
                         if isinstance(p, Template) and dims.is_symbolic(p.shape))


def symbolic_axes(values_in_order, key, against) -> list[set[int]] | None:
    """For dynamic=None: the axes (per parameter) in which this call's arrays differ from the
    compiled key `against`, when that is all that differs (same ranks, dtypes, other arguments);
    None when the calls differ otherwise, or in no array dimension."""
    if len(against) != len(key):
        return None
    axes, any_axis = [], False
    for value, part, old in zip(values_in_order, key, against):
        if type(value) is np.ndarray and isinstance(old, tuple) and len(old) == 2 and isinstance(old[1], np.dtype):
            shape, dtype = old
            if len(shape) != value.ndim or dtype != part[1]:
                return None
            differ = {i for i, (a, b) in enumerate(zip(shape, value.shape)) if a != b}
            if any(value.shape[i] < dims.MIN_SIZE or shape[i] < dims.MIN_SIZE for i in differ):
                return None     # 0 and 1 change NumPy's broadcasting: a static size
            any_axis |= bool(differ)
            axes.append(differ)
        elif part != old:
            return None
        else:
            axes.append(set())
    return axes if any_axis else None


def all_axes(values_in_order) -> list[set[int]]:
    """For dynamic=True: every axis of size >= MIN_SIZE of every top-level array argument."""
    return [{i for i, d in enumerate(v.shape) if d >= dims.MIN_SIZE} if type(v) is np.ndarray else set()
            for v in values_in_order]


def symbolic_specs(names, values_in_order, specs, axes) -> tuple[list, dict[str, int]]:
    """The specs with the chosen axes symbolic, equal sizes sharing one symbol (named n0, n1,
    ...), and each symbol's value in this call (the hints guards are decided from)."""
    by_size: dict[int, str] = {}
    out = []
    for (name, spec), value, chosen in zip(specs, values_in_order, axes):
        if chosen and isinstance(spec, Template):
            shape = []
            for i, d in enumerate(spec.shape):
                if i in chosen:
                    d = dims.Dim.symbol(by_size.setdefault(d, f"n{len(by_size)}"))
                shape.append(d)
            spec = Template(tuple(shape), spec.dtype)
        out.append((name, spec))
    return out, {symbol: size for size, symbol in by_size.items()}
