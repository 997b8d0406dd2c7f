"""raising: `raise` and `assert` in compiled code, as library code uses them to validate inputs.
Reached on every run (the conditions that lead there are known at compile time), the user's own
exception is raised while compiling, as Python would raise it on that call. Reached under a
run-time condition, the compiled code records an error code (NumPy's own run-time errors use the
same machinery), that path stops, arguments are left untouched, and the call raises the user's
exception class with the user's message (a value known only at run time shows as its source text)."""
from __future__ import annotations

import ast
import builtins
import re

import numpy as np

from ..errors import JitError, NotSupportedError, encode_user_exception, user_exception
from .branches import exec_body
from .regions import RAISED, RETURN, RETURN_VALUE, Exit, State, build_if, condition
from .values import NeedStatic, Traced


class UserRaised(Exception):
    """The user's exception, raised at compile time on every run of this template: carried out
    of the compiler unchanged and raised to the caller (api.py)."""

    def __init__(self, exc: BaseException):
        super().__init__(str(exc))
        self.exc = exc


def at_run_time(em) -> bool:
    """True while interpreting code that runs only under a run-time condition (a branch on
    array values, a run-time loop's body)."""
    return em.loop_depth > 0 or em.branch_depth > 0


def raise_statement(fc, node: ast.Raise) -> None:
    if node.exc is None:
        raise NotSupportedError("a bare `raise` (re-raising) can't be compiled", hint="raise an exception instance")
    cls, args = exception(fc, node.exc)
    fail(fc, cls, args)


def assert_statement(fc, node: ast.Assert) -> None:
    test = fc.visit(node.test)
    args = () if node.msg is None else (message(fc, node.msg),)
    if not isinstance(test, Traced):
        if not test:
            fail(fc, AssertionError, args)
        return
    bad = fc.em.emit("not", condition(fc.em, test))
    fc.em.check(bad, encode_user_exception(AssertionError, args, fc.em.b.span), located=False)


def fail(fc, cls, args) -> None:
    em = fc.em
    if not at_run_time(em):
        try:
            exc = cls(*args)
        except Exception as e:
            raise JitError(f"can't make the exception {cls.__name__}{tuple(args)!r}: {e}") from None
        raise UserRaised(exc)
    em.check(em.constant(np.bool_(True)), encode_user_exception(cls, args, em.b.span), located=False)
    stop_here(fc)


def stop_here(fc) -> None:
    """The path being interpreted raised (its error code is recorded): it goes no further."""
    fc.env[RETURN_VALUE] = RAISED
    fc.env[RETURN] = True
    raise Exit()


def raised_everywhere(inner) -> bool:
    """Whether every path of a called function raised (at run time): the caller's path stops at
    the call, as Python's would (its result is never seen)."""
    return inner.env.get(RETURN) is True and inner.env.get(RETURN_VALUE) is RAISED


def exception(fc, node) -> tuple[type, tuple]:
    """The exception class and its arguments (messages as text) that `raise node` raises."""
    if isinstance(node, ast.Call):
        cls = fc.visit(node.func)
        args = tuple(message(fc, a) for a in node.args)
        if node.keywords:
            raise NotSupportedError("keyword arguments to an exception can't be compiled")
    else:
        cls, args = fc.visit(node), ()
    if isinstance(cls, BaseException):
        cls, args = type(cls), cls.args
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        raise NotSupportedError(f"`raise {ast.unparse(node)}`: only exception classes and instances can be raised")
    return cls, args


def message(fc, node):
    """An exception argument: its value where known at compile time; a part known only at run time
    shows as its source text ({x} in an f-string)."""
    if isinstance(node, ast.JoinedStr):
        return "".join(_part(fc, v) for v in node.values)
    value = _static(fc, node)
    return ast.unparse(node) if value is _UNKNOWN else value


_UNKNOWN = object()


def _static(fc, node):
    em = fc.em
    checkpoint, n_checks = em.b.checkpoint(), len(em.checks)
    try:
        value = fc.visit(node)
    except (JitError, NeedStatic):
        value = _UNKNOWN
    if isinstance(value, Traced) or value is _UNKNOWN:
        em.b.rollback(checkpoint)
        del em.checks[n_checks:]
        return _UNKNOWN
    return value


def _part(fc, node) -> str:
    if isinstance(node, ast.Constant):
        return str(node.value)
    value = _static(fc, node.value)
    if value is _UNKNOWN:
        return "{" + ast.unparse(node.value) + "}"
    return formatted(value, node.conversion, "" if node.format_spec is None else message(fc, node.format_spec))


def formatted(value, conversion: int, spec: str) -> str:
    """One f-string field: `{value!conversion:spec}` as Python formats it."""
    conv = {115: str, 114: repr, 97: ascii}.get(conversion)
    return format(conv(value) if conv else value, spec)


def try_statement(fc, node: ast.Try) -> None:
    """try/except/else/finally. An exception raised by code run at compile time (a raise of the
    user's, a failed lookup in a dict, NumPy's error on compile-time values) runs the matching
    handler instead, as Python would. An error the try body can raise only when the compiled code
    runs (a singular matrix, an index checked at run time, a raise under a run-time condition)
    selects the matching handler at run time: the handler runs from the state before the try
    body, the body's effects are dropped."""
    em = fc.em
    err0 = em.err.value
    em.err.value = em.constant(np.int32(0)).value   # the body's own first error, apart from earlier ones
    state, checkpoint, n_checks = State(fc.env, em), em.b.checkpoint(), len(em.checks)
    caught = None
    try:
        try:
            exec_body(fc, node.body)
        except UserRaised as e:
            caught = e.exc
        except JitError as e:
            caught = getattr(e, "python", None)
            if caught is None:
                raise
        except Exit:
            _uncatchable(em, node, n_checks)
            _finally(fc, node)
            raise
        if caught is None:
            if len(em.checks) > n_checks and node.handlers:
                _run_time_handlers(fc, node, state, n_checks)
            else:
                exec_body(fc, node.orelse)
            _finally(fc, node)
            return
        handler = next((h for h in node.handlers if h.type is None or isinstance(caught, _classes(fc, h.type))), None)
        if handler is None:
            _finally(fc, node)
            raise UserRaised(caught)
        em.b.rollback(checkpoint)   # the try body's effects up to the exception are undone: it ran at compile
        del em.checks[n_checks:]    # time, and everything it built is dropped before the handler runs
        state.restore(fc.env)
        if handler.name:
            fc.env[handler.name] = caught
        try:
            exec_body(fc, handler.body)
        finally:
            _finally(fc, node)
    finally:   # the first error of the call: an earlier one, else this statement's
        now = Traced(em.err.value)
        earlier = Traced(err0)
        em.err.value = em.emit("select", em.emit("compare", earlier, em.constant(np.int32(0)), direction="NE"),
                               earlier, now).value


def _run_time_handlers(fc, node, before_body: State, n_checks: int) -> None:
    """The try body ran and may fail at run time with one of the checks from n_checks on: an `if`
    per handler on the body's error code, in order; the else clause runs where none was raised."""
    em = fc.em
    body_err = Traced(em.err.value)
    codes = range(n_checks + 1, len(em.checks) + 1)
    classes = {c: check_exception_class(em.checks[c - 1]) for c in codes}
    after_body = State(fc.env, em)
    if not set(before_body.cells) <= set(after_body.cells):
        raise NotSupportedError("this try block rebinds the names of arrays it changes, and can fail only at run "
                                "time", hint="test the condition with an if statement instead")
    handlers = [(h, _classes(fc, h.type) if h.type is not None else (BaseException,)) for h in node.handlers]

    def caught_by(types):
        out = None
        for c in codes:
            if classes[c] is not None and issubclass(classes[c], types):
                hit = em.emit("compare", body_err, em.constant(np.int32(c)), direction="EQ")
                out = hit if out is None else em.emit("or", out, hit)
        return out

    def no_exception():
        after_body.restore(fc.env)
        exec_body(fc, node.orelse)

    def dispatch(i):
        if i == len(handlers):
            return no_exception()
        handler, types = handlers[i]
        cond = caught_by(types)
        if cond is None:
            return dispatch(i + 1)
        if handler.name and any(isinstance(n, ast.Name) and n.id == handler.name for n in ast.walk(handler)
                                if n is not handler):
            raise NotSupportedError(f"`except ... as {handler.name}` reads an exception that is raised only at run "
                                    "time", hint="leave out the name")

        def run_handler():
            before_body.restore(fc.env)   # (its error code is the fresh zero of before the body)
            exec_body(fc, handler.body)
        build_if(em, fc.env, cond, [run_handler, lambda: dispatch(i + 1)])
    dispatch(0)


def check_exception_class(message: str):
    """The exception class a run-time check's message stands for (None where unknown)."""
    exc = user_exception(message)
    if exc is not None:
        return type(exc)
    found = re.search(r"(?:^|: )([A-Z]\w*Error): ", message)
    if found is None:
        return None
    name = found.group(1)
    return np.linalg.LinAlgError if name == "LinAlgError" else getattr(builtins, name, None)


def _uncatchable(em, node, n_checks) -> None:
    if len(em.checks) > n_checks and node.handlers:
        raise NotSupportedError("this try block contains code that can fail only when the compiled code runs "
                                "(a run-time check), which an except clause can't catch in compiled code",
                                hint="test the condition with an if statement instead")


def _finally(fc, node) -> None:
    if node.finalbody:
        exec_body(fc, node.finalbody)


def _classes(fc, node):
    value = fc.visit(node)
    classes = value if isinstance(value, tuple) else (value,)
    if not all(isinstance(c, type) and issubclass(c, BaseException) for c in classes):
        raise NotSupportedError(f"except {ast.unparse(node)}: not an exception class")
    return classes
