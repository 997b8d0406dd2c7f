"""codegen: Python AST + argument specs -> typed IR Function, by abstract interpretation.
Python-level values (ints, tuples, shapes, dtypes) are computed now; arrays become IR values.
Raises JitError with the location of the innermost AST node involved."""
from __future__ import annotations

import ast
import inspect
import os
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import (ForbiddenError, JitError, NotSupportedError, ShapeError, UnsupportedSyntaxError)
from ..ir.graph import Builder, Function
from ..ir.ops import OpTypeError
from ..template import ScalarSpec, StaticSpec, Template
from . import numpy_api, policy
from .numpy_api import Emitter, NeedStatic, Traced, apply_operator, fold, is_static
from .source import SourceFunction, parse_function

DEBUG = os.environ.get("PYJITC_DEBUG", "") not in ("", "0")
MAX_UNROLL = 10_000  # Python-level loop iterations (each unrolled into the program)


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


@dataclass
class BoundMethod:
    impl: Any
    target: Traced
    name: str


@dataclass
class Program:
    """The typed IR of one specialisation, plus how to rebuild the Python result from it."""
    function: Function
    out_tree: Any           # nested ('tuple'|'list'|'dict'|'out'|'const', ...) description
    writebacks: list[tuple[str, int]] = field(default_factory=list)  # (param name, result index)


_SOURCE_CACHE: dict[Any, SourceFunction] = {}


def source_of(fn) -> SourceFunction:
    src = _SOURCE_CACHE.get(fn)
    if src is None:
        src = parse_function(fn)
        policy.check_function(src)
        _SOURCE_CACHE[fn] = src
    return src


class FunctionCompiler(ast.NodeVisitor):
    def __init__(self, src: SourceFunction, em: Emitter, env: dict[str, Any], stack=()):
        self.src = src
        self.em = em
        self.env = env
        self.stack = stack + (src.fn,)

    # ------------------------------------------------------------ driver
    def run(self):
        node = self.src.node
        try:
            if isinstance(node, ast.Lambda):
                return self.visit(node.body)
            for stmt in node.body:
                self.visit(stmt)
        except _Return as r:
            return r.value
        return None

    def visit(self, node):
        span = self.src.span(node)
        b = self.em.b
        prev, b.span = b.span, span or b.span
        try:
            return super().visit(node)
        except (_Return, _Break, _Continue, NeedStatic):
            raise
        except JitError as e:
            raise e.located(span) from None
        except OpTypeError as e:
            raise JitError(f"internal error: {e}", span) from (e if DEBUG else None)
        except RecursionError:
            raise JitError("the program is too deeply nested to compile", span) from None
        except Exception as e:
            if DEBUG:
                raise
            raise JitError(f"internal compiler error ({type(e).__name__}: {e}); "
                           f"set PYJITC_DEBUG=1 for the traceback", span) from None
        finally:
            b.span = prev

    def generic_visit(self, node):
        message, hint = policy.SYNTAX_REASONS.get(type(node), (f"{type(node).__name__} is not supported inside @jit", None))
        raise UnsupportedSyntaxError(message, hint=hint)

    # ------------------------------------------------------------ statements
    def visit_Expr(self, node):
        self.visit(node.value)

    def visit_Pass(self, node):
        pass

    def visit_Break(self, node):
        raise _Break()

    def visit_Continue(self, node):
        raise _Continue()

    def visit_Return(self, node):
        raise _Return(None if node.value is None else self.visit(node.value))

    def visit_Assign(self, node):
        value = self.visit(node.value)
        for target in node.targets:
            self.assign(target, value)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self.assign(node.target, self.visit(node.value))

    def assign(self, target, value):
        if isinstance(target, ast.Name):
            self.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = self.unpack(value, len(target.elts))
            for t, v in zip(target.elts, items):
                self.assign(t, v)
        elif isinstance(target, ast.Subscript):
            raise NotSupportedError("assigning to an element or slice (x[i] = ...) is not supported yet",
                                    hint="build the new array with np.where or concatenation")
        else:
            raise UnsupportedSyntaxError(f"can't assign to {ast.unparse(target)} inside @jit")

    def unpack(self, value, n):
        if isinstance(value, Traced):
            if value.ndim == 0:
                raise ShapeError("cannot unpack a 0-d array")
            if value.shape[0] != n:
                raise ShapeError(f"cannot unpack an array of length {value.shape[0]} into {n} names")
            return [numpy_api.getitem(self.em, value, i) for i in range(n)]
        items = list(value)
        if len(items) != n:
            raise ShapeError(f"cannot unpack {len(items)} values into {n} names")
        return items

    def visit_AugAssign(self, node):
        op = type(node.op).__name__
        if isinstance(node.target, ast.Name):
            old = self.visit(ast.Name(node.target.id, ast.Load(), **_pos(node.target)))
            value = self.visit(node.value)
            new = apply_operator(self.em, op, old, value)
            if isinstance(old, Traced) and not old.weak:
                self.update_in_place(old, new, ast.unparse(node))
            elif isinstance(old, np.ndarray) and isinstance(new, Traced):
                # a compile-time array updated with run-time values: same cast rules, new binding
                holder = self.em.asarray(old)
                self.update_in_place(holder, new, ast.unparse(node))
                self.env[node.target.id] = holder
            else:
                self.env[node.target.id] = new
        else:
            raise NotSupportedError(f"in-place update of {ast.unparse(node.target)} is not supported yet")

    def update_in_place(self, old: Traced, new, what: str):
        """NumPy semantics of `x op= y`: the result is cast back to x's dtype (same_kind) and
        written into x itself, so every name bound to x sees it."""
        new = self.em.asarray(new)
        if new.shape != old.shape:
            raise ShapeError(f"{what}: non-broadcastable output operand with shape {old.shape} "
                             f"doesn't match the broadcast shape {new.shape}")
        if new.dtype != old.dtype:
            if not np.can_cast(new.dtype, old.dtype, "same_kind"):
                raise ShapeError(f"{what}: Cannot cast ufunc output from dtype('{new.dtype}') to "
                                 f"dtype('{old.dtype}') with casting rule 'same_kind'")
            new = self.em.cast(new, old.dtype)
        if getattr(old, "is_view", False):
            raise NotSupportedError(f"{what}: in-place update of a view (a slice, reshape or transpose of "
                                    "another array) is not supported yet", hint="call .copy() on the view first")
        old.value = new.value
        old.params = None

    def visit_If(self, node):
        branch = node.body if self.truth(self.visit(node.test), node.test) else node.orelse
        for stmt in branch:
            self.visit(stmt)

    def visit_For(self, node):
        iterable = self.visit(node.iter)
        items = self.iterate(iterable)
        count = 0
        for item in items:
            count += 1
            if count > MAX_UNROLL:
                raise NotSupportedError(f"this loop runs more than {MAX_UNROLL} times at compile time")
            self.assign(node.target, item)
            try:
                for stmt in node.body:
                    self.visit(stmt)
            except _Break:
                return
            except _Continue:
                continue
        for stmt in node.orelse:
            self.visit(stmt)

    def iterate(self, value):
        if isinstance(value, Traced):
            if value.ndim == 0:
                raise ShapeError("iteration over a 0-d array")
            return [numpy_api.getitem(self.em, value, i) for i in range(value.shape[0])]
        try:
            return iter(value)
        except TypeError:
            raise ShapeError(f"{type(value).__name__} object is not iterable") from None

    def visit_While(self, node):
        count = 0
        while self.truth(self.visit(node.test), node.test):
            count += 1
            if count > MAX_UNROLL:
                raise NotSupportedError(f"this while loop runs more than {MAX_UNROLL} times at compile time")
            try:
                for stmt in node.body:
                    self.visit(stmt)
            except _Break:
                return
            except _Continue:
                continue
        for stmt in node.orelse:
            self.visit(stmt)

    def visit_Assert(self, node):
        test = self.visit(node.test)
        if isinstance(test, Traced):
            raise NotSupportedError("assert on array values can't be checked in compiled code",
                                    hint="check it outside the @jit function")
        if not test:
            msg = self.visit(node.msg) if node.msg is not None else ""
            raise JitError(f"assertion failed at compile time{': ' + str(msg) if msg else ''}")

    def truth(self, value, node=None) -> bool:
        if not isinstance(value, Traced):
            return bool(value)
        if value.params:
            raise NeedStatic(value.params)
        if value.type.size != 1:
            raise ShapeError("The truth value of an array with more than one element is ambiguous. "
                             "Use a.any() or a.all()")
        raise NotSupportedError("a condition on array values (known only at run time) is not supported yet",
                                hint="use np.where(condition, a, b)")

    # ------------------------------------------------------------ expressions
    def visit_Constant(self, node):
        return node.value

    def visit_Name(self, node):
        if node.id in self.env:
            return self.env[node.id]
        value = policy.lookup_global(self.src.fn, node.id)
        if value is policy.UNRESOLVED:
            raise JitError(f"name {node.id!r} is not defined")
        if isinstance(value, types.ModuleType):
            policy.check_module(value, node.id)
        return value

    def visit_Attribute(self, node):
        base = self.visit(node.value)
        attr = node.attr
        if isinstance(base, Traced):
            if attr in numpy_api.PROPERTIES:
                return numpy_api.PROPERTIES[attr](self.em, base)
            if attr in numpy_api.METHODS:
                return BoundMethod(numpy_api.METHODS[attr], base, attr)
            if attr in policy.FORBIDDEN_METHODS:
                raise ForbiddenError(f".{attr}() is not allowed inside @jit: {policy.FORBIDDEN_METHODS[attr]}")
            raise NotSupportedError(f"the array attribute .{attr} is not supported by pyjitc yet")
        if attr.startswith("__"):
            raise NotSupportedError(f"the attribute {attr} is not available inside @jit")
        if isinstance(base, types.ModuleType):
            policy.check_module(base, ast.unparse(node.value))
        try:
            value = getattr(base, attr)
        except AttributeError:
            raise JitError(f"{ast.unparse(node.value)} has no attribute {attr!r}") from None
        reason = policy.forbidden_reason(policy.qualified_name(value)) if not isinstance(value, (int, float, str)) else None
        if reason:
            raise ForbiddenError(f"{ast.unparse(node)} is not allowed inside @jit: {reason}")
        return value

    def visit_Call(self, node):
        func = self.visit(node.func)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(self.em.static(self.visit(a.value), "a *argument"))
            else:
                args.append(self.visit(a))
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:
                kwargs.update(self.em.static(self.visit(k.value), "a **argument"))
            else:
                kwargs[k.arg] = self.visit(k.value)
        shown = ast.unparse(node.func)
        if isinstance(func, BoundMethod):
            return self.call_impl(func.impl, shown, (func.target, *args), kwargs)
        kind, target = policy.classify_call(func, shown)
        if kind in ("numpy", "builtin"):
            return self.call_impl(target, shown, args, kwargs)
        if kind == "math":
            if is_static(*args, *kwargs.values()):
                return fold(target, *args, **kwargs)
            raise NotSupportedError(f"{shown} works on Python numbers, not arrays",
                                    hint=f"use np.{target.__name__} on arrays")
        return self.inline(target, shown, args, kwargs)

    def call_impl(self, impl, shown, args, kwargs):
        try:
            inspect.signature(impl).bind(self.em, *args, **kwargs)
        except TypeError as e:
            raise JitError(f"{shown}(): {e}") from None
        except ValueError:
            pass
        return impl(self.em, *args, **kwargs)

    def inline(self, fn, shown, args, kwargs):
        if fn in self.stack:
            raise NotSupportedError(f"{shown} calls itself (recursion), which can't be compiled",
                                    hint="write the recursion as a loop")
        src = source_of(fn)
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
        except TypeError as e:
            raise JitError(f"{shown}(): {e}") from None
        bound.apply_defaults()
        return FunctionCompiler(src, self.em, dict(bound.arguments), self.stack).run()

    def visit_BinOp(self, node):
        return apply_operator(self.em, type(node.op).__name__, self.visit(node.left), self.visit(node.right))

    def visit_UnaryOp(self, node):
        operand = self.visit(node.operand)
        if isinstance(node.op, ast.Not):
            return not self.truth(operand, node.operand)
        return apply_operator(self.em, type(node.op).__name__, operand)

    def visit_Compare(self, node):
        left = self.visit(node.left)
        result = True
        for op, right_node in zip(node.ops, node.comparators):
            right = self.visit(right_node)
            name = type(op).__name__
            if name in ("Is", "IsNot", "In", "NotIn") and not is_static(left, right):
                if name in ("Is", "IsNot") and (right is None or left is None):
                    result = (name == "IsNot")
                    left = right
                    continue
                raise NotSupportedError(f"`{name.lower()}` on arrays is not supported")
            result = apply_operator(self.em, name, left, right)
            if len(node.ops) > 1 and not self.truth(result, node):
                return False
            left = right
        return result

    def visit_BoolOp(self, node):
        is_and = isinstance(node.op, ast.And)
        value = None
        for v in node.values:
            value = self.visit(v)
            if self.truth(value, v) != is_and:
                return value
        return value

    def visit_IfExp(self, node):
        return self.visit(node.body if self.truth(self.visit(node.test), node.test) else node.orelse)

    def visit_Tuple(self, node):
        return tuple(self.elements(node.elts))

    def visit_List(self, node):
        return list(self.elements(node.elts))

    def elements(self, elts):
        out = []
        for e in elts:
            if isinstance(e, ast.Starred):
                out.extend(self.iterate(self.visit(e.value)))
            else:
                out.append(self.visit(e))
        return out

    def visit_Dict(self, node):
        out = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                out.update(self.visit(v))
            else:
                out[self.em.static(self.visit(k), "a dict key")] = self.visit(v)
        return out

    def visit_Slice(self, node):
        part = lambda n: None if n is None else self.visit(n)
        return slice(part(node.lower), part(node.upper), part(node.step))

    def visit_Subscript(self, node):
        base = self.visit(node.value)
        index = self.visit(node.slice)
        if isinstance(base, Traced) or _contains_traced(index) and isinstance(base, np.ndarray):
            return numpy_api.getitem(self.em, self.em.asarray(base), index)
        index = self.em.static(index, "an index into a Python value")
        try:
            return base[index]
        except (IndexError, KeyError, TypeError) as e:
            raise JitError(f"{ast.unparse(node)}: {type(e).__name__}: {e}") from None

    def visit_ListComp(self, node):
        out = []

        def loop(gens, depth=0):
            if not gens:
                out.append(self.visit(node.elt))
                return
            gen = gens[0]
            for item in self.iterate(self.visit(gen.iter)):
                self.assign(gen.target, item)
                if all(self.truth(self.visit(c), c) for c in gen.ifs):
                    loop(gens[1:], depth + 1)
        loop(node.generators)
        return out


def _contains_traced(x) -> bool:
    if isinstance(x, Traced):
        return True
    if isinstance(x, tuple):
        return any(_contains_traced(v) for v in x)
    if isinstance(x, slice):
        return any(isinstance(v, Traced) for v in (x.start, x.stop, x.step))
    return False


def _pos(node):
    return {k: getattr(node, k) for k in ("lineno", "col_offset", "end_lineno", "end_col_offset")}


# ---------------------------------------------------------------- entry point

def trace(src: SourceFunction, specs: dict[str, Any]) -> Program:
    """Interpret `src` for the given argument specs (Template / ScalarSpec / StaticSpec)."""
    builder = Builder()
    em = Emitter(builder)
    dynamic = [(n, s) for n, s in specs.items() if not isinstance(s, StaticSpec)]
    block = builder.open_block([s.tensor_type for _, s in dynamic])
    env: dict[str, Any] = {}
    params: dict[str, Traced] = {}
    for (name, spec), value in zip(dynamic, block.params):
        if isinstance(spec, ScalarSpec):
            env[name] = Traced(value, spec.pytype, frozenset([name]))
        else:
            env[name] = params[name] = Traced(value, None, None)
    for name, spec in specs.items():
        if isinstance(spec, StaticSpec):
            env[name] = spec.value
    originals = {name: t.value for name, t in params.items()}
    result = FunctionCompiler(src, em, env).run()

    outputs = []
    out_tree = _flatten(em, result, outputs)
    writebacks = []
    for name, t in params.items():
        if t.value is not originals[name]:  # updated in place: NumPy would have written the caller's array
            writebacks.append((name, len(outputs)))
            outputs.append(t.value)
    builder.close_block(outputs)
    fn_name = src.name if src.name.isidentifier() else "lambda"
    function = Function(fn_name, block, [n for n, _ in dynamic])
    return Program(function, out_tree, writebacks)


def _flatten(em, value, outputs):
    if isinstance(value, Traced):
        outputs.append(value.value)
        return ("out", len(outputs) - 1, value.weak)
    if isinstance(value, tuple):
        return ("tuple", [_flatten(em, v, outputs) for v in value])
    if isinstance(value, list):
        return ("list", [_flatten(em, v, outputs) for v in value])
    if isinstance(value, dict):
        return ("dict", [(k, _flatten(em, v, outputs)) for k, v in value.items()])
    if value is None or isinstance(value, (bool, int, float, complex, str, np.generic, np.ndarray, np.dtype)):
        return ("const", value)
    raise NotSupportedError(f"a @jit function can't return a {type(value).__name__}",
                            hint="return arrays, numbers, or tuples/lists/dicts of them")


def unflatten(tree, results):
    kind = tree[0]
    if kind == "out":
        r = results[tree[1]]
        if tree[2] is not None:   # a weakly typed value is a Python scalar, as in NumPy
            return tree[2](r)
        return r[()] if r.ndim == 0 else r
    if kind == "tuple":
        return tuple(unflatten(t, results) for t in tree[1])
    if kind == "list":
        return [unflatten(t, results) for t in tree[1]]
    if kind == "dict":
        return {k: unflatten(t, results) for k, t in tree[1]}
    return tree[1]
