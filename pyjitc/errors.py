"""errors: the one error family users see. Every JitError carries a source span and
formats as `file:line:col: message`, the source line and a caret."""
from __future__ import annotations

import linecache
import sys
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Span:
    """A location in the user's real file (1-based line, 0-based column, as `ast`)."""
    filename: str
    line: int
    col: int
    end_line: int | None = None
    end_col: int | None = None

    def __str__(self) -> str:
        return f"{shown_filename(self.filename)}:{self.line}:{self.col + 1}"

    def source_line(self) -> str:
        return linecache.getline(self.filename, self.line).rstrip("\n")


def shown_filename(filename: str) -> str:
    """The file as the user knows it: a Jupyter cell's temporary file is `Cell In[3]`, as IPython
    names it in tracebacks."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    named = getattr(getattr(shell, "compile", None), "format_code_name", lambda name: None)(filename)
    return f"{named[0]} {named[1]}" if named else filename


class JitError(Exception):
    """Raised when pyjitc can't compile a function exactly as NumPy would run it."""

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint

    def located(self, span: Span | None) -> "JitError":
        """Attach `span` if this error has none yet (the innermost node wins)."""
        if self.span is None and span is not None:
            self.span = span
        return self

    def __str__(self) -> str:
        text = self.message
        if self.hint:
            text += f"; {self.hint}"
        if self.span is None:
            return text
        out = [f"{self.span}: {text}"]
        line = self.span.source_line()
        if line:
            out.append("    " + line)
            start = self.span.col
            end = self.span.end_col if self.span.end_line in (None, self.span.line) and self.span.end_col else start + 1
            out.append("    " + " " * start + "^" * max(1, end - start))
        return "\n".join(out)


class UnsupportedSyntaxError(JitError):
    """A Python construct that has no compiled meaning, or that pyjitc does not compile."""


class ForbiddenError(JitError):
    """A call that is explicitly not allowed inside @jit (I/O, global state, host values)."""


class NotSupportedError(JitError):
    """A call to something that is neither forbidden nor implemented."""


class ShapeError(JitError):
    """Shapes or dtypes that NumPy itself would reject (the message says what NumPy says)."""


class ShapeIndexError(ShapeError, IndexError):
    """A ShapeError that is NumPy's IndexError (`x[0]` of an empty array), so that the caller's
    `except IndexError:` catches it as it catches NumPy's."""


class ShapeValueError(ShapeError, ValueError):
    """A ShapeError that is NumPy's ValueError."""


class ShapeTypeError(ShapeError, TypeError):
    """A ShapeError that is NumPy's (or Python's) TypeError."""


class ShapeOverflowError(ShapeError, OverflowError):
    """A ShapeError that is NumPy's OverflowError (`int32_array + 2**40`)."""


class ShapeKeyError(ShapeError, KeyError):
    """A ShapeError that is Python's KeyError (a missing key of a dict known while compiling)."""

    def __str__(self) -> str:   # (KeyError's own str() quotes the message)
        return ShapeError.__str__(self)


class ShapeZeroDivisionError(ShapeError, ZeroDivisionError):
    """A ShapeError that is Python's ZeroDivisionError (of numbers known while compiling)."""


# the exception NumPy raises, as a ShapeError's message names it first ("IndexError: index 0 is ..."),
# or as the error it stands for (`python`, what NumPy or Python raised while compiling) is
AS_PYTHON_ERROR = {"IndexError": ShapeIndexError, "ValueError": ShapeValueError, "TypeError": ShapeTypeError,
                   "OverflowError": ShapeOverflowError, "KeyError": ShapeKeyError,
                   "ZeroDivisionError": ShapeZeroDivisionError}


class ArgumentError(JitError, TypeError):
    """A call-time argument that doesn't fit: wrong count, unsupported type, wrong template."""


class CompileError(JitError):
    """IREE failed to compile the module pyjitc produced; carries the diagnostics."""


class RunError(IndexError, np.linalg.LinAlgError, OverflowError, ZeroDivisionError, UnboundLocalError):
    """Raised by a compiled function where NumPy or Python would have raised at run time (an index
    out of bounds, a math domain error, a singular matrix, a Python number divided by zero, a name
    a loop that ran zero times never bound, ...): it is each of those exception types (IndexError,
    ValueError, OverflowError, np.linalg.LinAlgError, ZeroDivisionError, UnboundLocalError), and the message
    starts with the user's file:line:col and names the original error."""


# A `raise`/`assert` of the user's that happens under a run-time condition is one of the compiled
# function's run-time checks; its message encodes the exception class, its arguments and where.
_USER = "\x00raise\x00"


def encode_user_exception(cls: type, args: tuple, span: Span | None) -> str:
    import json
    text = [a if isinstance(a, (str, int, float, bool)) or a is None else str(a) for a in args]
    return _USER + json.dumps([cls.__module__, cls.__qualname__, text, str(span) if span else ""])


def user_exception(message: str) -> BaseException | None:
    """The exception a run-time check made by encode_user_exception stands for (None for
    pyjitc's own checks). The class is looked up by name; where that fails, a RunError."""
    if not message.startswith(_USER):
        return None
    import importlib
    import json
    module, qualname, args, where = json.loads(message[len(_USER):])
    try:
        cls = importlib.import_module(module)
        for part in qualname.split("."):
            cls = getattr(cls, part)
        exc = cls(*args)
    except Exception:
        exc = RunError(f"{where}: {qualname}: {' '.join(map(str, args))}")
    if where:
        exc.add_note(f"raised at {where} (in code compiled by pyjitc)")
    return exc
