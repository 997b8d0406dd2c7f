"""source: a Python function -> its parsed, dedented AST, with every node's line and column
mapped back to the user's real file."""
from __future__ import annotations

import ast
import linecache
import inspect
import textwrap
import types
from dataclasses import dataclass
from typing import Any

from ..errors import JitError, Span


@dataclass
class SourceFunction:
    fn: Any
    node: ast.FunctionDef | ast.Lambda
    filename: str
    line_offset: int
    col_offset: int
    text: str

    def span(self, node: ast.AST) -> Span | None:
        if not hasattr(node, "lineno"):
            return None
        end_line = getattr(node, "end_lineno", None)
        end_col = getattr(node, "end_col_offset", None)
        return Span(
            self.filename,
            node.lineno + self.line_offset,
            node.col_offset + self.col_offset,
            None if end_line is None else end_line + self.line_offset,
            None if end_col is None else end_col + self.col_offset,
        )

    @property
    def name(self) -> str:
        return self.fn.__name__


def parse_function(fn) -> SourceFunction:
    """Read and parse `fn`'s source. Raises JitError when the source can't be recovered."""
    code = getattr(fn, "__code__", None)
    filename = code.co_filename if code is not None else "<unknown>"
    where = Span(filename, code.co_firstlineno, 0) if code is not None else None
    try:
        # the function's own code: getsourcelines(fn) would follow a decorator's __wrapped__ to
        # another function's source, which then would be read with the wrapper's globals
        lines, start = inspect.getsourcelines(code if code is not None else fn)
    except (OSError, TypeError) as e:
        raise JitError(
            f"can't read the source of {getattr(fn, '__qualname__', fn)!r} ({e})",
            where,
            hint="@jit compiles Python source: define the function in a .py file (not in a REPL or exec)",
        ) from None
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    col_offset = _common_indent(raw)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        tree = None
    node = None
    if tree is not None:
        node = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if node is None and fn.__name__ == "<lambda>":
        node = _find_lambda(text, code)
        if node is None:    # a line that is not an expression on its own (`"k": (lambda a: ..., 1),`)
            whole = _lambda_in_file(code)
            if whole is not None:
                return SourceFunction(fn, whole[0], filename, 0, 0, whole[1])
    if node is None:
        raise JitError(
            f"can't parse the source of {fn.__qualname__!r}",
            where,
            hint="define it with `def` on its own lines",
        )
    return SourceFunction(fn, node, filename, max(start, 1) - 1, col_offset, text)


def _common_indent(text: str) -> int:
    widths = [len(l) - len(l.lstrip()) for l in text.splitlines() if l.strip()]
    return min(widths) if widths else 0


def _find_lambda(text: str, code) -> ast.Lambda | None:
    """A lambda's source line may hold more than the lambda; find it by its argument names."""
    try:
        tree = ast.parse(text.strip().rstrip(",").lstrip(")"))
    except SyntaxError:
        try:
            tree = ast.parse("(" + text.strip().rstrip(",") + ")")
        except SyntaxError:
            return None
    want = list(code.co_varnames[: code.co_argcount])
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and [a.arg for a in n.args.args] == want]
    if len(found) > 1:   # several on one line (`{"a": lambda x: x + 1, "b": lambda x: x * 2}`):
        return None      # the whole file parsed places each (the caller's _lambda_in_file)
    return found[0] if found else None


def _lambda_in_file(code):
    """(the lambda node, the file's text) from the whole file parsed, where the lambda's own lines
    don't parse on their own: a lambda in a dict or a call's arguments spread over lines."""
    text = "".join(linecache.getlines(code.co_filename))
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    want = list(code.co_varnames[: code.co_argcount])
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno
             and [a.arg for a in n.args.args] == want]
    if len(found) > 1:
        found = _by_position(found, code)
    return (found[0], text) if len(found) == 1 else None


def _by_position(found: list, code) -> list:
    """The lambdas (nodes of the whole file) whose body holds every source position the code's
    own instructions point at. (Matching the body's text instead, `ast.unparse` writes `1e3` as
    `1000.0`: of `f, g = (lambda x: x + 1), (lambda x: x * 1e3)` g compiled as f.)"""
    spots = [(line, end_line, col, end) for line, end_line, col, end in code.co_positions()
             if line is not None and end_line is not None and col is not None and end is not None
             and (end_line, end) > (line, col)]
    if not spots:
        return []

    def holds(n) -> bool:
        b = n.body
        return all((b.lineno, b.col_offset) <= (line, col) and (end_line, end) <= (b.end_lineno, b.end_col_offset)
                   for line, end_line, col, end in spots)
    return [n for n in found if holds(n)]


def real_signature(fn) -> inspect.Signature:
    """The parameters `fn`'s own code binds: not a decorator's __wrapped__ function's, nor a
    __signature__ a library set to advertise another one (the compiled source is fn's own)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return inspect.signature(fn, follow_wrapped=False)
    plain = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    plain.__kwdefaults__ = fn.__kwdefaults__
    return inspect.signature(plain, follow_wrapped=False)
