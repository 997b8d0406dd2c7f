"""raising: `raise` and `assert` in compiled code, as library code uses them to validate inputs.
Reached on every run (the conditions that lead there are known at compile time), the user's own
exception is raised while compiling, as Python would raise it on that call. Reached under a
run-time condition, the compiled code records an error code (NumPy's own run-time errors use the
same machinery), that path stops, arguments are left untouched, and the call raises the user's
exception class with the user's message (a value known only at run time shows as its source text)."""
from __future__ import annotations

import ast
import builtins

import numpy as np

from ..errors import JitError, NotSupportedError, encode_user_exception
from .branches import exec_body
from .regions import RAISED, RETURN, RETURN_VALUE, Exit, State, condition
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
    fc.env[RETURN_VALUE] = RAISED
    fc.env[RETURN] = True
    raise Exit()


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
    spec = "" if node.format_spec is None else message(fc, node.format_spec)
    conv = {115: str, 114: repr, 97: ascii}.get(node.conversion)
    return format(conv(value) if conv else value, spec)


def is_exception_class(obj) -> bool:
    return isinstance(obj, type) and issubclass(obj, BaseException) and getattr(builtins, obj.__name__, None) is obj


def try_statement(fc, node: ast.Try) -> None:
    """try/except/else/finally, decided while the program is built: an exception raised by code
    run at compile time (a raise of the user's, a failed lookup in a dict, NumPy's error on
    compile-time values) runs the matching handler instead, as Python would. Code in the try
    body that could fail only when the compiled code runs (an index checked at run time, a raise
    under a run-time condition) can't be caught: a located error says so."""
    em = fc.em
    state, checkpoint, n_checks, err = State(fc.env, em), em.b.checkpoint(), len(em.checks), em.err.value
    caught = None
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
        _uncatchable(em, node, n_checks)
        try:
            exec_body(fc, node.orelse)
        finally:
            _finally(fc, node)
        return
    handler = next((h for h in node.handlers if h.type is None or isinstance(caught, _classes(fc, h.type))), None)
    if handler is None:
        _finally(fc, node)
        raise UserRaised(caught)
    em.b.rollback(checkpoint)   # the try body's effects up to the exception are undone: it ran at compile
    del em.checks[n_checks:]    # time, and everything it built is dropped before the handler runs
    em.err.value = err
    state.restore(fc.env)
    if handler.name:
        fc.env[handler.name] = caught
    try:
        exec_body(fc, handler.body)
    finally:
        _finally(fc, node)


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
