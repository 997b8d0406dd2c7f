"""branches: statements in sequence under run-time break/continue/return flags, `if` statements,
and the choice between computing both sides of an expression (`a if c else b`, `and`/`or`) and a
run-time branch. Functions take the visitor (`fc`: its emitter, variables and `visit`)."""
from __future__ import annotations

import ast

from ..errors import JitError, NotSupportedError
from .operators import select_values
from .values import NeedStatic, Traced
from .regions import FLAGS, MISSING, RAISED, RETURN, RETURN_VALUE, ZERO, MergeError, Exit, Undefined, build_if, condition, \
    negate, python_number_on_one_path


def exec_body(fc, stmts):
    """Run statements in order. After a break/continue/return that happens only at run time
    (inside an `if` on array values), the rest runs under `if not (that flag)`."""
    for i, stmt in enumerate(stmts):
        fc.visit(stmt)
        flags = [fc.env.get(f, False) for f in FLAGS]
        if any(f is True for f in flags):
            raise Exit()
        if i + 1 < len(stmts) and any(isinstance(f, Traced) for f in flags):
            rest = stmts[i + 1:]
            try:
                build_if(fc.em, fc.env, negate(fc.em, flags), [lambda: guarded(fc, rest), lambda: skipped(fc)])
            except MergeError as e:
                params = _scalar_arguments([f for f in flags if isinstance(f, Traced)])
                if params:   # `if flag: return x * 1.0` then `return x`: the flag decided at compile time
                    raise NeedStatic(params, reason=e) from None
                if e.name is not None and e.name.startswith(RETURN_VALUE):   # (or a part of a returned tuple)
                    _locate_returns(fc, e, stmt, rest)
                raise
            return


def _scalar_arguments(values) -> frozenset:
    """The scalar arguments `values` were computed from, where they were computed from scalar
    arguments alone (else empty)."""
    if not values or any(not v.params for v in values):
        return frozenset()
    return frozenset().union(*(v.params for v in values))


def _locate_returns(fc, e: MergeError, early, rest) -> None:
    """A return value whose type differs between an early `return` (in `early`, run-time
    condition) and a later one: the error at the early return, naming both."""
    returns = [n for part in ([early], rest) for s in part for n in ast.walk(s) if isinstance(n, ast.Return)]
    e.message = e.message.replace(f"'{RETURN_VALUE}' changes type", "the returned value has a different type on different paths")
    if len(returns) > 1:
        e.message += f" (returned at {fc.src.span(returns[0])} and at {fc.src.span(returns[-1])})"
    e.hint = ("return one type on every path (e.g. np.float64(1) or 1.0 beside a float64 result, not 1)"
              if "NoneType" not in e.message else
              "return one type on every path: where a path has no answer (return None), return a flag with "
              "placeholder values instead (`return False, x, 0.0` beside `return True, x, z`), or raise")
    if e.span is None and returns:
        e.span = fc.src.span(returns[0])


def skipped(fc):
    """The path where a pending flag is set: with a single pending flag, it is known to be set.
    Where that flag is a `return` or `raise` outside loops, the function has left on this path,
    so its locals are never read again (ZERO: the other path's values are the names' values after
    the statements; `if x.max() > hi: raise ...` then `rng = 1` in skimage's PSNR, inside an `if`
    known at compile time, met the None it had before as a different type)."""
    pending = [f for f in FLAGS if isinstance(fc.env.get(f), Traced)]
    if len(pending) == 1:
        fc.env[pending[0]] = True
    if pending == [RETURN] and not fc.em.loop_depth:
        for k in list(fc.env):
            if k.isidentifier() and k not in fc.nonlocals and fc.env[k] is not MISSING:
                fc.env[k] = ZERO


def guarded(fc, stmts):
    for f in FLAGS:
        if isinstance(fc.env.get(f), Traced):
            fc.env[f] = False   # this region runs only where no flag is set
    if fc.env.get(RETURN_VALUE, MISSING) in (RAISED, ZERO):
        # nothing returned yet here: the placeholder of a path that raised is no value (a loop after
        # `if a * b > 0: raise ...` carried it, could not, and was unrolled: 200 steps in 40 s)
        del fc.env[RETURN_VALUE]
    exec_body(fc, stmts)


def if_statement(fc, node: ast.If):
    test = fc.test(node.test)
    if not isinstance(test, Traced):
        exec_body(fc, node.body if test else node.orelse)
        return
    try:
        run_time_if(fc, test, [lambda: exec_body(fc, node.body), lambda: exec_body(fc, node.orelse)])
    except MergeError as e:
        if e.name:   # name the places: where each path last assigns the variable
            places = [_last_assignment(fc, e.name, part) for part in (node.body, node.orelse)]
            shown = [str(p) if p else "not assigned (its value from before)" for p in places]
            e.message += f" (the true path: {shown[0]}; the false path: {shown[1]})"
        raise


def _last_assignment(fc, name, stmts):
    found = None
    for stmt in stmts:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store):
                found = n
    return fc.src.span(found) if found is not None else None


def run_time_if(fc, test: Traced, branches):
    cond = condition(fc.em, test)
    try:
        build_if(fc.em, fc.env, cond, branches)
    except (MergeError, NotSupportedError) as e:
        # the branches can't merge, or one does what only compile-time code may (`cols.append(x * x)`
        # under `if degree >= 2`): decide the branch at compile time instead
        if test.params:
            raise NeedStatic(test.params, reason=e) from None
        raise


def select(fc, test: Traced, then, orelse):
    """`then() if test else orelse()` for expressions. Both sides are computed and chosen
    between when that can't be told apart from Python's lazy evaluation (no side could raise
    at run time); otherwise a run-time if (`i < n and x[i] > 0` must not index x[n])."""
    eager = _eager_select(fc, test, then, orelse)
    if eager is not None:
        return eager
    key = f"value?{id(then)}"
    try:
        run_time_if(fc, test, [lambda: fc.env.__setitem__(key, then()),
                               lambda: fc.env.__setitem__(key, orelse())])
    except (MergeError, NeedStatic) as e:
        error = e if isinstance(e, MergeError) else e.reason
        if isinstance(error, MergeError) and error.name == key:   # (named by the expression, not the key)
            error.message = error.message.replace(f"'{key}' changes type",
                                                  "`a if test else b` has a different type on each side")
            error.hint = "give both sides one type (e.g. 1.0 or np.float64(1) beside a float64 value, not 1)"
        raise
    value = fc.env.pop(key)
    if isinstance(value, Undefined):
        raise value.error()
    return value


def _eager_select(fc, test: Traced, then, orelse):
    em, b = fc.em, fc.em.b
    checkpoint, n_checks, err = b.checkpoint(), len(em.checks), em.err.value
    try:
        a, c = then(), orelse()
        if len(em.checks) == n_checks and isinstance(a, (Traced, bool, int, float)) and \
                isinstance(c, (Traced, bool, int, float)):
            out = select_values(em, condition(em, test), a, c)
            if out is not None:
                python_number_on_one_path(em, test, out, [a, c])   # `s.mean() if n else 0.0`: 0.0 stays a float
                return out
    except (JitError, NeedStatic) as e:
        if getattr(e, "final", False) or getattr(getattr(e, "reason", None), "final", False):
            raise   # (a recursion too deep: the other strategy would go as deep again)
    b.rollback(checkpoint)
    del em.checks[n_checks:]
    em.err.value = err
    return None
