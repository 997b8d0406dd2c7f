"""loops: the strategies for `for` and `while`. A loop runs at compile time (unrolled into the
program: short compile-time ranges, iterables that are Python values, loops whose variable a
shape needs) or at run time (one IR while op carrying the state it changes). Functions take the
visitor (`fc`: its emitter, variables, `visit` and `assign`)."""
from __future__ import annotations

import ast

from .. import progress
from ..errors import JitError, NotSupportedError, ShapeError
from ..ir.dims import NeedsStaticShape
from . import appends, indexing, stacks
from .branches import exec_body, guarded, select, skipped
from .operators import apply_operator
from .sequences import IntsSeq, RangeSeq, Seq, as_seq
from .values import NeedStatic, Traced
from .regions import BREAK, CONTINUE, GO, MISSING, RETURN, Exit, build_if, build_while, condition, loop_marker, negate

MAX_UNROLL = 10_000  # loop iterations interpreted at compile time (each unrolled into the program)
SHORT_LOOP = 4       # compile-time ranges this short are unrolled: static indices, no loop overhead
SHORT_NEST = 64      # ... while the short loops around them, unrolled too, make at most this many copies


def for_loop(fc, node: ast.For):
    iterable = fc.visit(node.iter)
    seq = as_seq(iterable, fc.em)
    marker = loop_marker(node)
    em = fc.em
    if seq is None and isinstance(node.iter, (ast.Tuple, ast.List)) and IntsSeq.fits(iterable) \
            and _contains_loop(node) and marker not in em.force_unroll:
        seq = IntsSeq(iterable)     # (a literal's items: no other name holds the list)
    if seq is None:
        items = iterate(em, iterable)
        return _unrolled(fc, node, items, len(items) if isinstance(items, (list, tuple, range)) else None,
                         f"it iterates over a Python {type(iterable).__name__}, which compiled code has at "
                         "compile time only: iterate over a range() or an array's rows to get one run-time loop")
    count = seq.count(em)
    forced = marker in em.force_unroll
    # (one step or none: always inline. A one-step run-time loop around loops crashed iree-compile,
    # SIGSEGV converting its scf.while: `for i in range(n): for j in range(2): ...` at n = 1)
    # (a body with an `if` stays a loop: unrolled, its copies of run-time ifs updating arrays made
    # IREE 3.13 fail, at compile time "failed to solve for timepoint coverage" (Gauss-Jordan with
    # a row swap, n = 3, 4) or at run time "indirect buffer reference slot 0 is out range" (a
    # bracket-matching stack over 4 characters); a probe of algorithmic code)
    short = not isinstance(count, Traced) and (count <= 1 or count <= SHORT_LOOP and em.unrolled_copies * count
                                               <= SHORT_NEST and not _contains_loop(node) and not _contains_if(node))
    if forced or short:
        if isinstance(count, Traced):
            if count.params:
                raise NeedStatic(count.params, reason=em.force_unroll.get(marker))
            raise em.force_unroll.get(marker) or JitError("this loop must run at compile time, but its "
                                                          "length depends on array values")
        return _unrolled(fc, node, (seq.item(em, k) for k in range(count)), count, _why_unrolled(em, marker))
    _run_time_for(fc, node, seq, count, marker)


def _contains_loop(node) -> bool:
    """Whether a loop's body holds another loop: copies of a run-time loop cost compile time, and
    the NeedStatic retry still unrolls the outer loop where its variable must be known."""
    return any(isinstance(n, (ast.For, ast.While)) for stmt in node.body for n in ast.walk(stmt))


def _appends(node) -> bool:
    """Whether a loop's body calls a method named append (appends.py plans those from pass 0)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "append"
               for stmt in node.body for n in ast.walk(stmt))


def _contains_if(node) -> bool:
    return any(isinstance(n, ast.If) for stmt in node.body for n in ast.walk(stmt))


def while_loop(fc, node: ast.While):
    marker = loop_marker(node)
    if marker in fc.em.force_unroll:
        return _unrolled_while(fc, node, marker)
    em, env = fc.em, fc.env
    saved = _enter_loop(fc)
    stacks.start(fc, node)   # `while stack: ... stack.pop() ...`
    before = set(env)
    counter = f"counter?{marker}" if _appends(node) else None   # the pass's number: where appends write
    go = _truth_value(fc, node.test)
    if go is not False:
        env[GO] = go
        entry = {n: env.get(n, MISSING) for n in _body_locals(fc, node)}
        if counter:
            env[counter] = 0

        def body():
            env[BREAK] = False
            if RETURN in env:
                env[RETURN] = False
            if counter:
                k = env[counter]
                if isinstance(k, Traced):   # (k + 1 fits int64: no overflow check, python_ints.py)
                    em.int_bounds[k.value.id] = (0, (1 << 62))
            _loop_body(fc, node.body)
            _restore(env, entry)
            if counter:
                env[counter] = apply_operator(em, "Add", env[counter], 1)
            stop = [env.get(BREAK, False), env.get(RETURN, False)]
            if any(isinstance(f, Traced) for f in stop):   # Python doesn't test again after break
                env[GO] = select(fc, negate(em, stop), lambda: _truth_value(fc, node.test), lambda: False)
            else:
                env[GO] = _all_of(em, [_truth_value(fc, node.test), negate(em, stop)])
        planned = appends.start(fc, node, None, marker, counter) if counter else []   # `history.append(v)`
        build_while(em, env, marker, body, "while loop")
        appends.finish(fc, marker, planned)
        if _left_only_by_return(node) and isinstance(env.get(RETURN), Traced):
            env[RETURN] = True    # (so the function does not also fall off its end: a quickselect)
        _mark_maybe_unbound(fc, before, negate(em, [go]))
    env.pop(counter, None)
    _leave_loop(fc, node, saved)


def _left_only_by_return(node: ast.While) -> bool:
    """`while True:` with no `break` of its own: the loop ends only by a return (or an error)."""
    if not (isinstance(node.test, ast.Constant) and node.test.value is True):
        return False

    def breaks(stmts) -> bool:
        for stmt in stmts:
            if isinstance(stmt, ast.Break):
                return True
            if isinstance(stmt, (ast.For, ast.While, ast.AsyncFor)):
                if breaks(stmt.orelse):      # (a nested loop's own breaks are its own)
                    return True
                continue
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for field in ("body", "orelse", "finalbody"):
                if breaks(getattr(stmt, field, [])):
                    return True
            if isinstance(stmt, ast.Try) and any(breaks(h.body) for h in stmt.handlers):
                return True
            if isinstance(stmt, ast.Match) and any(breaks(c.body) for c in stmt.cases):
                return True
        return False
    return not breaks(node.body)


def iterate(em, value):
    """What a Python `for` over `value` sees at compile time (rows, for an array)."""
    if isinstance(value, Traced):
        if value.ndim == 0:
            raise ShapeError("iteration over a 0-d array")
        return [indexing.getitem(em, value, i) for i in range(value.shape[0])]
    if isinstance(value, RangeSeq):   # range(n) in a comprehension: its items are made now
        count = value.count(em)
        if isinstance(count, Traced):
            why = JitError("a comprehension over range() makes a list, whose length must be known at "
                           "compile time, but this one's changes at run time")
            if count.params:
                raise NeedStatic(count.params, reason=why)
            if value.sized:   # range(C.shape[0]) under dynamic=True: static sizes (or a located error)
                raise NeedsStaticShape("a comprehension over range() of a size known only at run time makes a "
                                       "list of that many items")
            raise NotSupportedError("a comprehension over a range whose length depends on array values",
                                    hint="write a for loop that fills an array instead")
        return [value.item(em, k) for k in range(count)]
    if isinstance(value, Seq):     # `sum(v for i, v in np.ndenumerate(a))`, `[i for i in np.ndindex(s)]`
        return value.materialize(em)
    try:
        return iter(value)
    except TypeError:
        raise ShapeError(f"{type(value).__name__} object is not iterable") from None


def _enter_loop(fc):
    saved = {f: fc.env.pop(f) for f in (BREAK, CONTINUE) if f in fc.env}
    fc.env[BREAK] = False
    return saved


def _leave_loop(fc, node, saved):
    broke = fc.env.pop(BREAK, False)
    fc.env.pop(CONTINUE, None)
    fc.env.update(saved)
    if node.orelse:   # for/while ... else: runs when the loop was not left by break
        go = negate(fc.em, [broke, fc.env.get(RETURN, False)])
        if go is True:
            exec_body(fc, node.orelse)
        elif isinstance(go, Traced):
            build_if(fc.em, fc.env, go, [lambda: guarded(fc, node.orelse), lambda: skipped(fc)])


def _loop_body(fc, stmts):
    fc.env[CONTINUE] = False
    try:
        exec_body(fc, stmts)
    except Exit:
        pass
    fc.env.pop(CONTINUE, None)


def _unrolled(fc, node, items, total=None, why=""):
    """A loop interpreted at compile time: each iteration is built into the program."""
    copies = fc.em.unrolled_copies
    fc.em.unrolled_copies = copies * max(total or 1, 1)
    try:
        _unrolled_items(fc, node, items, total, why)
    finally:
        fc.em.unrolled_copies = copies


def _unrolled_items(fc, node, items, total, why):
    saved = _enter_loop(fc)
    if total is not None and total >= progress.UNROLL_WARNING:
        _warn_unrolling(fc, node, total, why)
    for count, item in enumerate(items):
        if count >= MAX_UNROLL:
            raise NotSupportedError(f"this loop runs more than {MAX_UNROLL} times at compile time",
                                    hint="use run-time values (not shapes of slices) in its body")
        if count == progress.UNROLL_WARNING and total is None:
            _warn_unrolling(fc, node, None, why)
        progress.unrolling(count, total)
        go = negate(fc.em, [fc.env.get(BREAK, False), fc.env.get(RETURN, False)])
        if go is False:
            break
        iteration = lambda item=item: (fc.assign(node.target, item), _loop_body(fc, node.body))
        if go is True:
            iteration()
        else:
            build_if(fc.em, fc.env, go, [lambda: (guarded(fc, []), iteration()), lambda: skipped(fc)])
    _leave_loop(fc, node, saved)


def _restore(env: dict, entry: dict) -> None:
    """Names an iteration keeps to itself (the loop variable, body temporaries) back to their
    values from before the loop (unbound where they had none): not carried."""
    for n, v in entry.items():
        if v is MISSING:
            env.pop(n, None)
        else:
            env[n] = v


def _mark_maybe_unbound(fc, before: set, never_ran) -> None:
    """Names a run-time loop bound that had no value before it: where the loop ran zero times,
    reading one raises UnboundLocalError, as Python does (it gave a placeholder 0)."""
    if not isinstance(never_ran, Traced):
        return
    for name, value in fc.env.items():
        if name not in before and "?" not in name and isinstance(value, Traced):
            fc.em.maybe_unbound[value.value.id] = (never_ran, name)


def _run_time_for(fc, node, seq, count, marker):
    em, env = fc.em, fc.env
    saved = _enter_loop(fc)
    stacks.start(fc, node)
    counter = f"counter?{marker}"
    env[counter] = 0
    before = set(env)
    go = entered = apply_operator(em, "Lt", 0, count)
    if not isinstance(count, Traced) and count >= 2 and not _appends(node):
        em.peelable.add(marker)
    if go is not False:
        # the loop variable is carried out of the loop only if something reads it afterwards
        # (carrying it needlessly also trips an IREE crash on nested loops)
        private = [n for n in _target_names(node.target) if not _read_outside(fc, n, node)] + _body_locals(fc, node)
        entry = {n: env.get(n, MISSING) for n in private}
        if marker in em.peel_first:   # (NeedPeel) the first pass runs on its own, before the loop
            fc.assign(node.target, seq.item(em, 0))
            _loop_body(fc, node.body)
            _restore(env, entry)
            env[counter] = 1
            go = negate(em, [env.get(BREAK, False), env.get(RETURN, False)])
    if go is not False:
        env[GO] = go

        def body():
            k = env[counter]
            limit = em.range_of(count)
            if isinstance(k, Traced) and limit is not None:   # the body runs only while k < count
                em.ranges[k.value.id] = (0, limit[1] - 1)
            elif isinstance(k, Traced):   # (k + 1 fits int64: no overflow check, python_ints.py)
                most = em.int_bounds.get(count.value.id, (0, (1 << 63) - 1))[1] if isinstance(count, Traced) else (1 << 63) - 1
                em.int_bounds[k.value.id] = (0, max(most - 1, 0))
            env[BREAK] = False
            if RETURN in env:
                env[RETURN] = False
            fc.assign(node.target, seq.item(em, k))
            _loop_body(fc, node.body)
            _restore(env, entry)
            env[counter] = k = apply_operator(em, "Add", k, 1)
            env[GO] = _all_of(em, [apply_operator(em, "Lt", k, count),
                                   negate(em, [env.get(BREAK, False), env.get(RETURN, False)])])
        planned = appends.start(fc, node, count, marker, counter)   # `results.append(v)` in the body
        build_while(em, env, marker, body, "loop")
        appends.finish(fc, marker, planned)
        _mark_maybe_unbound(fc, before, negate(em, [entered]))
    env.pop(counter, None)
    _leave_loop(fc, node, saved)


def _unrolled_while(fc, node, marker):
    saved = _enter_loop(fc)
    count = 0
    while True:
        if count == progress.UNROLL_WARNING:
            _warn_unrolling(fc, node, None, _why_unrolled(fc.em, marker))
        progress.unrolling(count, None)
        flags = [fc.env.get(BREAK, False), fc.env.get(RETURN, False)]
        if any(isinstance(f, Traced) for f in flags):
            reason = fc.em.force_unroll.get(marker)   # what made it run at compile time
            raise NotSupportedError("this while loop must run at compile time, but it stops on a condition known "
                                    "only at run time" + (f" (it must because {reason.message})" if isinstance(reason, JitError)
                                                          else ""), hint=getattr(reason, "hint", None))
        if any(flags):
            break
        test = fc.test(node.test)
        if isinstance(test, Traced):
            if test.params:
                raise NeedStatic(test.params, reason=fc.em.force_unroll.get(marker))
            raise fc.em.force_unroll.get(marker) or JitError(
                "this while loop must run at compile time, but its condition depends on array values")
        if not test:
            break
        count += 1
        if count > MAX_UNROLL:
            raise NotSupportedError(f"this while loop runs more than {MAX_UNROLL} times at compile time")
        _loop_body(fc, node.body)
    _leave_loop(fc, node, saved)


def _why_unrolled(em, marker) -> str:
    reason = em.force_unroll.get(marker)
    if marker not in em.force_unroll:
        return ""
    because = f" ({reason.span}: {reason.message})" if isinstance(reason, JitError) and reason.span else \
        f" ({reason.message})" if isinstance(reason, JitError) else ""
    return (f"it runs at compile time because its body needs the loop variable's value{because}: use the "
            "loop variable only as an index or a slice bound read or written directly (x[:i], x[i] = v, "
            "sums and dot products of such slices), or np.where over the whole array, to get one run-time loop")


def _warn_unrolling(fc, node, total, why):
    many = f"{total} iterations" if total is not None else f"more than {progress.UNROLL_WARNING} iterations"
    progress.warn_slow(("unroll", id(node)), fc.src.span(node),
                       f"this loop is unrolled into {many}: each one becomes part of the program, so "
                       f"compiling takes long (a minute or more for thousands); {why or 'write it so that it runs as one run-time loop'}")


def _truth_value(fc, test_node):
    test = fc.test(test_node)
    return condition(fc.em, test) if isinstance(test, Traced) else bool(test)


def _body_locals(fc, loop) -> list[str]:
    """Names each iteration of `loop` binds before anything in it reads them (the first statement
    of the body mentioning the name is `name = expr` without it in expr) and nothing outside the
    loop reads: temporaries of one iteration, not carried from one to the next (a temporary whose
    shape differs from a same-named one before the loop, `even = X[s:s + half]` in each stage of
    an FFT, made the loop unroll: 33 s to compile at n = 256)."""
    # (read by a while's test, or by the loop's else clause, which runs after the loop)
    tested = {n.id for part in ([loop.test] if isinstance(loop, ast.While) else []) + loop.orelse
              for n in ast.walk(part) if isinstance(n, ast.Name)}
    seen, out = set(), []
    for stmt in loop.body:
        mentioned = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
        if isinstance(stmt, ast.FunctionDef):   # `def step(v): ...` in the body, defined anew each
            n = stmt.name                       # pass (it was carried, and refused: "holds a LocalFunction")
            if n not in seen and n not in tested and n not in out and not _read_outside(fc, n, loop):
                out.append(n)
        if isinstance(stmt, ast.Assign):
            value_names = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
            for target in stmt.targets:
                if not all(isinstance(t, (ast.Name, ast.Tuple, ast.List)) for t in ast.walk(target)
                           if not isinstance(t, (ast.Store, ast.Load))):
                    continue
                for n in _target_names(target):
                    if n not in seen and n not in value_names and n not in tested and n not in out \
                            and not _read_outside(fc, n, loop):
                        out.append(n)
        seen |= mentioned
    # names bound inside the body's ifs before any read there and read nowhere else (`dv = vel[j]
    # - vel[i]` under `if r2 < 0.01:` in a collision loop: carried, it kept the loop on the host,
    # 15x NumPy's time; probe AH)
    for n in sorted({t.id for stmt in loop.body if isinstance(stmt, ast.If) for t in ast.walk(stmt)
                     if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}):
        if n not in out and n not in tested and _first_use(loop.body, n) != "read" and not _read_outside(fc, n, loop):
            out.append(n)
    return out


def _first_use(stmts, name: str) -> str | None:
    """How a pass through `stmts` first meets `name`: "read" (it may read the value from before),
    "bind" (every path binds it before reading it), "some" (some paths bind it, none read it
    first) or None (not mentioned)."""
    state = None
    for stmt in stmts:
        use = _stmt_use(stmt, name)
        if use == "read" or use == "bind":
            return use
        state = state or use
    return state


def _stmt_use(stmt, name: str) -> str | None:
    names = lambda node: {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    if name not in names(stmt):
        return None
    if isinstance(stmt, ast.Assign) and all(isinstance(t, (ast.Name, ast.Tuple, ast.List, ast.Store, ast.Load))
                                            for target in stmt.targets for t in ast.walk(target)):
        return "read" if name in names(stmt.value) else "bind"
    if isinstance(stmt, ast.If):
        if name in names(stmt.test):
            return "read"
        uses = [_first_use(stmt.body, name), _first_use(stmt.orelse, name)]
        if "read" in uses:
            return "read"
        return "bind" if uses == ["bind", "bind"] else "some"
    return "read"


def _read_outside(fc, name, loop) -> bool:
    """Whether code outside `loop` may read the value the loop leaves in `name`: a read after the
    loop, anywhere in a loop around it (its next pass reads it), or in a nested function (called
    any time). A read before the loop sees the value from before it (an American option's tree:
    `v = np.maximum(K - S, 0)` before `for i ...: S = ...` made S carried, the loop unrolled)."""
    inside = {id(n) for n in ast.walk(loop)}
    end = (loop.end_lineno, loop.end_col_offset)
    around = [n for n in ast.walk(fc.src.node) if isinstance(n, (ast.For, ast.While)) and n is not loop
              and id(loop) in {id(m) for m in ast.walk(n)}]
    in_around = {id(m) for n in around for m in ast.walk(n)}
    in_functions = {id(m) for n in ast.walk(fc.src.node) if isinstance(n, (ast.FunctionDef, ast.Lambda))
                    and n is not fc.src.node for m in ast.walk(n)}
    # reads where another loop's variable of that name is bound see that binding (`for row in A:`
    # twice: the second loop's reads of `row` made the first carry it, and both unrolled)
    rebound = {id(m) for n in ast.walk(fc.src.node) if n is not loop and id(n) not in in_around | inside
               for m in _where_bound_by(n, name)}
    inside |= rebound
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and id(n) not in inside
               and ((n.lineno, n.col_offset) > end or id(n) in in_around or id(n) in in_functions)
               for n in ast.walk(fc.src.node))


def _where_bound_by(node, name: str):
    """The nodes where `node` (a for loop or a comprehension) has bound `name` to its own items."""
    if isinstance(node, ast.For) and name in _target_names(node.target):
        return [m for stmt in node.body for m in ast.walk(stmt)]
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) and \
            any(name in _target_names(g.target) for g in node.generators):
        outer = {id(m) for m in ast.walk(node.generators[0].iter)}   # (read in the enclosing scope)
        return [m for m in ast.walk(node) if id(m) not in outer]      # its own scope: never leaks out
    return []


def _all_of(em, conds):
    if any(c is False for c in conds):
        return False
    traced = [condition(em, c) for c in conds if isinstance(c, Traced)]
    if not traced:
        return True
    out = traced[0]
    for c in traced[1:]:
        out = em.emit("and", out, c)
    return out


def _target_names(target) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
