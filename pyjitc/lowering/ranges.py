"""ranges: the integer intervals of a native loop's scalar values (lowering/scalar_loop.py), so
that index checks and clamps that can never fire are left out of its code.

An abstract interpretation of the typed IR of one eligible `while` op: each integer scalar gets
an interval [lo, hi], each bool what it implies when true and when false (`i >= 0` implies
i in [0, inf)); `if` branches see their condition's implications, and a loop's carried values
are found by iterating its body to a fixpoint (widening a bound that keeps moving to infinity,
then one narrowing step). A carried flag keeps what it implies about the other carried values
(`while j >= 0 and x[j] > key: ...; j -= 1` implies j >= 0 in the body), which is what proves
a `while` loop's indices in range. The answers, per op: `decided` (a compare's value whenever
it runs) and `in_bounds` (a dynamic_slice / dynamic_update_slice whose starts are always in
range). Anything not understood is unknown: the answers are sound, never guesses."""
from __future__ import annotations

import numpy as np

from ..ir.graph import Block, Op

INF = float("inf")
TOP = (-INF, INF)
BOTTOM = "bottom"     # implications of a bool that can't have that value here
NEGATE = {"LT": "GE", "LE": "GT", "GT": "LE", "GE": "LT", "EQ": "NE", "NE": "EQ"}
MAX_PASSES = 8


def _int_scalar(v) -> bool:
    return v.type.size == 1 and v.type.dtype.kind in "iu"


def _bool_scalar(v) -> bool:
    return v.type.size == 1 and v.type.dtype.kind == "b"


def _limits(dtype) -> tuple:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _hull(a, b):
    return (min(a[0], b[0]), max(a[1], b[1]))


def _meet(a, b):
    lo, hi = max(a[0], b[0]), min(a[1], b[1])
    return (lo, hi) if lo <= hi else a    # empty: unreachable here, so anything is sound; keep a


def _facts_and(a, b):
    if a == BOTTOM or b == BOTTOM:
        return BOTTOM
    out = dict(a)
    for k, v in b.items():
        if k in out:
            lo, hi = max(out[k][0], v[0]), min(out[k][1], v[1])
            if lo > hi:
                return BOTTOM    # both can't hold
            out[k] = (lo, hi)
        else:
            out[k] = v
    return out


def _facts_or(a, b):
    if a == BOTTOM:
        return b
    if b == BOTTOM:
        return a
    return {k: _hull(a[k], b[k]) for k in a.keys() & b.keys()}


def _compare_facts(direction, a, b, ra, rb) -> dict:
    """What `a <direction> b` (integers) implies about a and b."""
    if direction == "LT":
        return {a: (-INF, rb[1] - 1), b: (ra[0] + 1, INF)}
    if direction == "LE":
        return {a: (-INF, rb[1]), b: (ra[0], INF)}
    if direction == "GT":
        return {a: (rb[0] + 1, INF), b: (-INF, ra[1] - 1)}
    if direction == "GE":
        return {a: (rb[0], INF), b: (-INF, ra[1])}
    if direction == "EQ":
        return {a: rb, b: ra} if a != b else {}
    return {}


def _decide(direction, ra, rb):
    """The compare's value for every a in ra and b in rb, or None."""
    lt = ra[1] < rb[0]
    gt = ra[0] > rb[1]
    le, ge = ra[1] <= rb[0], ra[0] >= rb[1]
    single = ra[0] == ra[1] == rb[0] == rb[1]
    table = {"LT": (lt, ge), "LE": (le, gt), "GT": (gt, le), "GE": (ge, lt),
             "EQ": (single, lt or gt), "NE": (lt or gt, single)}
    true, false = table[direction]
    return True if true else False if false else None


class Ranges:
    """The analysis of one native loop `loop`; `free`: the values it reads from outside;
    `known(value)`: the constant value of such a value, or None."""

    def __init__(self, loop: Op, free, known):
        self.known = known
        self.decided: dict[int, bool] = {}     # compare result id -> its value wherever it runs
        self.in_bounds: set[int] = set()       # ids of dynamic_slice/update results always in range
        # An inner loop is analysed again on each pass over the loops around it; its results
        # depend only on what it reads from outside, so passes that record nothing reuse them.
        self._free: dict[int, list] = {}       # id(while op) -> the outside values it reads
        self._memo: dict[tuple, tuple] = {}    # (id(op), what those values are) -> result ranges
        env = _Env({}, {}, {})
        for v in free:
            c = known(v) if _int_scalar(v) or _bool_scalar(v) else None
            if c is not None and _int_scalar(v):
                env.range[v.id] = (int(c), int(c))
            elif c is not None:
                env.true[v.id], env.false[v.id] = ({}, BOTTOM) if c else (BOTTOM, {})
        self._while(loop, env, record=True)

    # -- one op at a time; `record`: this pass's answers are final
    def _block(self, block: Block, env: "_Env", record: bool) -> None:
        for op in block.ops:
            self._op(op, env, record)

    def _op(self, op: Op, env: "_Env", record: bool) -> None:
        name, res = op.name, op.results
        r = env.get
        if name == "while":
            return self._while(op, env, record)
        if name == "if":
            return self._if(op, env, record)
        if name in ("dynamic_slice", "dynamic_update_slice"):
            first = 1 if name == "dynamic_slice" else 2
            x = op.operands[0].type
            sizes = op.attrs["sizes"] if name == "dynamic_slice" else op.operands[1].type.shape
            ok = all(r(s)[0] >= 0 and r(s)[1] <= d - k for s, d, k in zip(op.operands[first:], x.shape, sizes))
            if record:
                (self.in_bounds.add if ok else self.in_bounds.discard)(res[0].id)
        if len(res) != 1:
            return
        out = res[0]
        if _int_scalar(out):
            env.range[out.id] = self._interval(op, env)
        elif _bool_scalar(out):
            self._flag(op, env, record)

    def _interval(self, op: Op, env: "_Env"):
        name, out, r = op.name, op.results[0], env.get
        lo_lim, hi_lim = _limits(out.type.dtype)
        if name == "constant":
            v = int(np.asarray(op.attrs["value"]).reshape(()))
            return (v, v)
        args = [r(v) for v in op.operands]
        if name in ("reshape", "broadcast_in_dim", "transpose", "reverse", "barrier"):
            iv = args[0]
        elif name == "convert" and op.operands[0].type.dtype.kind in "iu":
            iv = args[0]
        elif name == "convert" and op.operands[0].type.dtype.kind == "b":
            iv = (0, 1)
        elif name == "add":
            iv = (args[0][0] + args[1][0], args[0][1] + args[1][1])
        elif name == "sub":
            iv = (args[0][0] - args[1][1], args[0][1] - args[1][0])
        elif name == "neg":
            iv = (-args[0][1], -args[0][0])
        elif name == "mul" and all(-INF < b < INF for a in args for b in a):
            products = [a * b for a in args[0] for b in args[1]]
            iv = (min(products), max(products))
        elif name in ("max", "min"):
            pick = max if name == "max" else min
            iv = (pick(args[0][0], args[1][0]), pick(args[0][1], args[1][1]))
        elif name == "select":   # one side only where the condition is decided
            c = op.operands[0]
            iv = (args[1] if env.on(c, False) == BOTTOM else args[2] if env.on(c, True) == BOTTOM
                  else _hull(args[1], args[2]))
        else:
            return TOP
        if iv[0] < lo_lim or iv[1] > hi_lim:   # may wrap around: nothing known
            return TOP
        return iv

    def _flag(self, op: Op, env: "_Env", record: bool) -> None:
        """A bool's implications (env.true / env.false), and a compare's value where decided."""
        name, out, args = op.name, op.results[0], op.operands
        t, f = {}, {}
        if name == "constant":
            value = bool(np.asarray(op.attrs["value"]).reshape(()))
            t, f = ({}, BOTTOM) if value else (BOTTOM, {})
        elif name == "compare" and _int_scalar(args[0]):
            a, b = args
            direction = op.attrs["direction"]
            ra, rb = env.get(a), env.get(b)
            value = _decide(direction, ra, rb)
            if record:
                if value is None:
                    self.decided.pop(out.id, None)
                else:
                    self.decided[out.id] = value
            t = _compare_facts(direction, a.id, b.id, ra, rb)
            f = _compare_facts(NEGATE[direction], a.id, b.id, ra, rb)
            if value is not None:
                t, f = (t, BOTTOM) if value else (BOTTOM, f)
        elif name == "and":
            t = _facts_and(env.on(args[0], True), env.on(args[1], True))
            f = _facts_or(env.on(args[0], False), env.on(args[1], False))
        elif name == "or":
            t = _facts_or(env.on(args[0], True), env.on(args[1], True))
            f = _facts_and(env.on(args[0], False), env.on(args[1], False))
        elif name == "not":
            t, f = env.on(args[0], False), env.on(args[0], True)
        elif name == "select":
            c, x, y = args
            t = _facts_or(_facts_and(env.on(c, True), env.on(x, True)), _facts_and(env.on(c, False), env.on(y, True)))
            f = _facts_or(_facts_and(env.on(c, True), env.on(x, False)), _facts_and(env.on(c, False), env.on(y, False)))
        elif name in ("reshape", "broadcast_in_dim", "transpose", "reverse", "barrier"):
            t, f = env.on(args[0], True), env.on(args[0], False)
        env.true[out.id], env.false[out.id] = t, f

    def _if(self, op: Op, env: "_Env", record: bool) -> None:
        cond = op.operands[0]
        branches = []
        for block, holds in zip(op.regions, (True, False)):
            inner = env.assuming(env.on(cond, holds))
            inner.true[cond.id], inner.false[cond.id] = ({}, BOTTOM) if holds else (BOTTOM, {})
            self._block(block, inner, record)
            branches.append((inner, block))
        for k, out in enumerate(op.results):
            if _int_scalar(out):
                env.range[out.id] = _hull(*(inner.get(b.results[k]) for inner, b in branches))
            elif _bool_scalar(out):
                for holds, table in ((True, env.true), (False, env.false)):
                    facts = BOTTOM
                    for (inner, b), taken in zip(branches, (True, False)):
                        facts = _facts_or(facts, _facts_and(env.on(cond, taken), inner.on(b.results[k], holds)))
                    table[out.id] = facts
        # implications about values of this block only: those of the branches name their own values

    def _while(self, op: Op, env: "_Env", record: bool) -> None:
        key = None if record else (id(op), self._outside(op, env))
        if key is not None and key in self._memo:
            for vid, iv in self._memo[key]:
                env.range[vid] = iv
            return
        self._analyse_while(op, env, record)
        if key is not None:
            self._memo[key] = tuple((v.id, env.range[v.id]) for v in op.results if _int_scalar(v))

    def _outside(self, op: Op, env: "_Env") -> tuple:
        """What the analysis of `op` reads from `env`: the intervals and implications of the
        values from outside the loop that it uses (its operands included)."""
        free = self._free.get(id(op))
        if free is None:
            defined, used = set(), {}
            _uses(op, defined, used)
            free = self._free[id(op)] = [v for vid, v in used.items() if vid not in defined]
        return tuple((env.get(v), _frozen(env.true.get(v.id)), _frozen(env.false.get(v.id))) for v in free)

    def _analyse_while(self, op: Op, env: "_Env", record: bool) -> None:
        cond, body = op.regions
        n = len(op.operands)
        ints = [i for i in range(n) if _int_scalar(op.operands[i])]
        flags = [i for i in range(n) if _bool_scalar(op.operands[i])]
        init = _State({i: env.get(op.operands[i]) for i in ints},
                      {i: _positions(env.on(op.operands[i], True), op.operands) for i in flags})
        state = init
        for step in range(MAX_PASSES):   # growing states: a post-fixpoint (an invariant) ends it
            new = state.join(init.join(self._iteration(op, env, state, False)))
            if new == state:
                break
            state = new if step < 2 else state.widen(new)
        else:
            state = _State({i: TOP for i in ints}, {i: {} for i in flags})
        state = init.join(self._iteration(op, env, state, False))   # narrowing: still sound
        self._iteration(op, env, state, record)
        for i in ints:
            env.range[op.results[i].id] = state.ranges[i]

    def _iteration(self, op: Op, env: "_Env", state: "_State", record: bool) -> "_State":
        """One trip: the condition and the body from `state` (the carried values at the top);
        returns the state the body yields."""
        cond, body = op.regions
        top = env.assuming({})
        for params in (cond.params, body.params):
            for i, iv in state.ranges.items():
                top.range[params[i].id] = iv
            for i, facts in state.flags.items():
                top.true[params[i].id] = {params[j].id: iv for j, iv in facts.items()}
                top.false[params[i].id] = {}
        self._block(cond, top, record)
        held = top.on(cond.results[0], True)     # the body runs where the condition held
        if held != BOTTOM:   # what it says of the condition's parameters holds for the body's
            same = {c.id: b.id for c, b in zip(cond.params, body.params)}
            held = {same.get(k, k): iv for k, iv in held.items()}
        inside = top.assuming(held)
        self._block(body, inside, record)
        ranges = {i: inside.get(body.results[i]) for i in state.ranges}
        flags = {i: _positions(inside.on(body.results[i], True), body.results) for i in state.flags}
        return _State(ranges, flags)


class _State:
    """What is known at the top of a loop: carried integers' intervals; for carried flags, the
    intervals their being true implies for other carried integers (by position)."""

    def __init__(self, ranges: dict, flags: dict):
        self.ranges, self.flags = ranges, flags

    def __eq__(self, other) -> bool:
        return self.ranges == other.ranges and self.flags == other.flags

    def join(self, other: "_State") -> "_State":
        """Either state. A flag's implication holds on a side where it is stated, or where the
        value's own interval says as much (an initial j = i - 1 needs no flag to be >= 0)."""
        flags = {}
        for i in self.flags:
            a, b = self.flags[i], other.flags[i]
            flags[i] = {j: _hull(a.get(j, self.ranges[j]), b.get(j, other.ranges[j]))
                        for j in a.keys() | b.keys() if j in self.ranges}
        return _State({i: _hull(self.ranges[i], other.ranges[i]) for i in self.ranges}, flags)

    def widen(self, new: "_State") -> "_State":
        ranges = {}
        for i, (lo, hi) in self.ranges.items():
            nlo, nhi = new.ranges[i]
            ranges[i] = (lo if nlo >= lo else -INF, hi if nhi <= hi else INF)
        flags = {i: {j: iv for j, iv in f.items() if new.flags[i].get(j) == iv} for i, f in self.flags.items()}
        return _State(ranges, flags)


def _uses(op: Op, defined: set, used: dict) -> None:
    """The values `op` and the ops in its regions read (`used`, by id) and define (`defined`)."""
    for v in op.operands:
        used.setdefault(v.id, v)
    defined.update(v.id for v in op.results)
    for block in op.regions:
        defined.update(v.id for v in block.params)
        for inner in block.ops:
            _uses(inner, defined, used)
        for v in block.results:
            used.setdefault(v.id, v)


def _frozen(facts):
    return facts if facts is None or facts == BOTTOM else tuple(sorted(facts.items()))


def _positions(facts, values) -> dict:
    """Implications about `values` (the loop's operands or the body's results), by position."""
    if facts == BOTTOM:
        return {}
    where = {}
    for k, v in enumerate(values):
        where.setdefault(v.id, []).append(k)
    return {k: iv for vid, iv in facts.items() for k in where.get(vid, ()) if _int_scalar(values[k])}


class _Env:
    """Intervals and implications of the values visible at one point."""

    def __init__(self, range: dict, true: dict, false: dict):
        self.range, self.true, self.false = range, true, false

    def get(self, v):
        return self.range.get(v.id, TOP) if _int_scalar(v) else TOP

    def on(self, v, holds: bool):
        return (self.true if holds else self.false).get(v.id, {})

    def assuming(self, facts) -> "_Env":
        """A copy in which `facts` hold (a branch, a loop body)."""
        out = _Env(dict(self.range), dict(self.true), dict(self.false))
        if facts != BOTTOM:
            for vid, iv in facts.items():
                out.range[vid] = _meet(out.range.get(vid, TOP), iv)
        return out
