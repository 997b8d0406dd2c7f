"""codegen: Python AST + argument specs -> typed IR Function, by abstract interpretation.
Python-level values (ints, tuples, shapes, dtypes) are computed now; arrays become IR values.
Raises JitError with the location of the innermost AST node involved."""
from __future__ import annotations

import ast
import dataclasses
import inspect
import operator
import os
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..aliasing import as_index
from ..errors import (ForbiddenError, JitError, NotSupportedError, ShapeError, UnsupportedSyntaxError)
from ..ir.graph import Builder, Function, prune
from ..ir.ops import OpTypeError
from ..template import ScalarSpec, StaticSpec, Template, TreeSpec, at_path, bind_by_name, leaves, path_name
from . import indexing, operators, policy, registry, sequences
from .numpy.builtins import MATH   # (importing the numpy package registers every function)
from .operators import apply_operator
from .values import (Emitter, NeedStatic, Traced, call_known, contains_unknown, fold, is_static, items_of, known,
                     view_of)
from .regions import (BREAK, CONTINUE, FLAGS, GO, MISSING, RETURN, RETURN_VALUE, Exit, MergeError, Undefined,
                      build_if, build_while, condition, is_marker, loop_marker, negate)
from .source import SourceFunction, parse_function

DEBUG = os.environ.get("PYJITC_DEBUG", "") not in ("", "0")
MAX_UNROLL = 10_000  # loop iterations interpreted at compile time (each unrolled into the program)
SHORT_LOOP = 4       # compile-time ranges this short are unrolled: static indices, no loop overhead


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
    writebacks: list[tuple[tuple, int]] = field(default_factory=list)  # (argument path, result index)
    checks: list[str] = field(default_factory=list)   # run-time error messages (code k -> checks[k-1])
    guards: list = field(default_factory=list)         # globals read as constants (see api.Guard)
    error_index: int | None = None                     # which result holds the error code


_SOURCE_CACHE: dict[Any, SourceFunction] = {}


def source_of(fn) -> SourceFunction:
    src = _SOURCE_CACHE.get(fn)
    if src is None:
        src = parse_function(fn)
        policy.check_function(src)
        _SOURCE_CACHE[fn] = src
    return src


@dataclass(eq=False)
class LocalFunction:
    """A function defined inside the compiled one (def or lambda): inlined where it is called,
    reading the enclosing function's variables as they are at the call, like a Python closure."""
    node: ast.FunctionDef | ast.Lambda
    parent: "FunctionCompiler"
    defaults: list


class FunctionCompiler(ast.NodeVisitor):
    def __init__(self, src: SourceFunction, em: Emitter, env: dict[str, Any], stack=(), parent=None):
        self.src = src
        self.em = em
        self.env = env
        self.parent = parent
        self.stack = stack + ((src.fn if parent is None else src.node),)

    # ------------------------------------------------------------ driver
    def run(self):
        node = self.src.node
        if isinstance(node, ast.Lambda):
            return self.visit(node.body)
        self.env[RETURN] = False
        try:
            self.exec_body(node.body)
        except Exit:
            pass
        returned = self.env.get(RETURN, False)
        if returned is False:
            return None
        if returned is True:
            return self.env[RETURN_VALUE]
        raise MergeError("this function returns a value on some paths and falls off its end (returning None) "
                         "on others", self.src.span(node), hint="end it with a return statement")

    def exec_body(self, stmts):
        """Run statements in order. After a break/continue/return that happens only at run time
        (inside an `if` on array values), the rest runs under `if not (that flag)`."""
        for i, stmt in enumerate(stmts):
            self.visit(stmt)
            flags = [self.env.get(f, False) for f in FLAGS]
            if any(f is True for f in flags):
                raise Exit()
            if i + 1 < len(stmts) and any(isinstance(f, Traced) for f in flags):
                rest = stmts[i + 1:]
                build_if(self.em, self.env, negate(self.em, flags), [lambda: self.guarded(rest), self.skipped])
                return

    def skipped(self):
        """The path where a pending flag is set: with a single pending flag, it is known to be set."""
        pending = [f for f in FLAGS if isinstance(self.env.get(f), Traced)]
        if len(pending) == 1:
            self.env[pending[0]] = True

    def guarded(self, stmts):
        for f in FLAGS:
            if isinstance(self.env.get(f), Traced):
                self.env[f] = False   # this region runs only where no flag is set
        self.exec_body(stmts)

    def visit(self, node):
        span = self.src.span(node)
        b = self.em.b
        prev, b.span = b.span, span or b.span
        try:
            return super().visit(node)
        except (Exit, NeedStatic):
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
        self.env[BREAK] = True
        raise Exit()

    def visit_Continue(self, node):
        self.env[CONTINUE] = True
        raise Exit()

    def visit_Return(self, node):
        self.env[RETURN_VALUE] = None if node.value is None else self.visit(node.value)
        self.env[RETURN] = True
        raise Exit()

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
            base = self.subscript_base(target)
            index = self.visit(target.slice)
            self.store(base, index, value, ast.unparse(target))
        else:
            raise UnsupportedSyntaxError(f"can't assign to {ast.unparse(target)} inside @jit")

    def subscript_base(self, target):
        """The array written by `name[...] = v` (every array is a value with identity: arrays made
        inside the function too, so every alias sees the write)."""
        return self.visit(target.value)

    def store(self, base, index, value, shown):
        """`base[index] = value`: arrays are updated in place (the caller's array too, for an
        argument); Python lists and dicts only while the program is being built."""
        if isinstance(base, Traced):
            if base.ndim == 0 and base.view is None and id(base) not in self.em.arguments | self.em.zero_d_arrays:
                kind = type(base.weak(0)).__name__ if base.weak else f"numpy.{base.dtype}"
                raise JitError(f"TypeError: {shown}: a '{kind}' scalar does not support item assignment",
                               hint="NumPy's operations on 0-d arrays return scalars; use a 1-element array")
            index = known(index)
            if not self.store_known(base, index, value):
                base.value = indexing.setitem(self.em, base, index, value, shown).value
        elif isinstance(base, (list, dict)):
            if self.em.loop_depth:
                raise NotSupportedError(f"{shown}: changing a Python {type(base).__name__} inside a loop that runs "
                                        "at run time", hint="use an array and index assignment instead")
            index = self.em.static(index, "an index into a Python list or dict")
            try:
                base[index] = value
            except (IndexError, TypeError) as e:
                raise JitError(f"{shown}: {type(e).__name__}: {e}") from None
        else:
            raise JitError(f"{shown}: a {type(base).__name__} does not support item assignment")

    def store_known(self, base: Traced, index, value) -> bool:
        """`base[index] = value` computed by NumPy where all three are known at compile time (the
        array stays known: a mask built with writes is still a compile-time mask)."""
        contents = base.const
        if contents is None or base.view is not None or base.frozen or contains_unknown(index):
            return False
        v = known(value)
        if isinstance(v, Traced) or not is_static(v):
            return False
        new = contents.copy()
        try:
            with np.errstate(all="ignore"):
                new[index] = v
        except (TypeError, ValueError, IndexError, OverflowError):
            return False     # the run-time path raises NumPy's error with its own message
        self.em.set_known(base, new)
        return True

    def unpack(self, value, n):
        if isinstance(value, Traced):
            if value.ndim == 0:
                raise ShapeError("cannot unpack a 0-d array")
            if value.shape[0] != n:
                raise ShapeError(f"cannot unpack an array of length {value.shape[0]} into {n} names")
            return [indexing.getitem(self.em, value, i) for i in range(n)]
        if isinstance(value, sequences.Seq):
            value = self.em.static(value.materialize(self.em), "unpacking a sequence")
        items = list(value)
        if len(items) != n:
            raise ShapeError(f"cannot unpack {len(items)} values into {n} names")
        return items

    def visit_AugAssign(self, node):
        op = type(node.op).__name__
        shown = ast.unparse(node)
        if isinstance(node.target, ast.Name):
            old = self.visit(ast.Name(node.target.id, ast.Load(), **_pos(node.target)))
            value = self.visit(node.value)
            new = apply_operator(self.em, op, old, value)
            if self.in_place(old):
                self.update_in_place(old, new, shown)
            else:
                self.env[node.target.id] = new
        elif isinstance(node.target, ast.Subscript):
            base = self.subscript_base(node.target)
            index = self.visit(node.target.slice)
            if isinstance(base, (list, dict)):   # L[i] += v: the item's own += (in place for an array), stored back
                key = self.em.static(known(index), "an index into a Python list or dict")
                try:
                    old = base[key]
                except (IndexError, KeyError, TypeError) as e:
                    raise JitError(f"{shown}: {type(e).__name__}: {e}") from None
                new = apply_operator(self.em, op, old, self.visit(node.value))
                if self.in_place(old):
                    self.update_in_place(old, new, shown)
                    return
                self.store(base, key, new, shown)
                return
            if not isinstance(base, Traced):
                raise NotSupportedError(f"{shown}: in-place update of an item of a {type(base).__name__}",
                                        hint="write it as x[i] = x[i] + v")
            index = known(index)
            value = self.visit(node.value)
            if self.update_known(base, index, op, value):
                return
            # NumPy: x[i] += v is x.__setitem__(i, x[i].__iadd__(v)), so the sum is cast back
            if indexing.is_mask(index):   # x[mask] op= v: every element computed, the masked ones kept
                if np.size(value) != 1 if not isinstance(value, Traced) else value.type.size != 1:
                    raise NotSupportedError(f"{shown}: the number of values must match the number of True "
                                            "entries, known only at run time", hint="use a scalar, or np.where")
                holder = Traced(base.value, None, base.params)
                self.update_in_place(holder, apply_operator(self.em, op, holder, value), shown)
                base.value = indexing.masked_update(self.em, base, index, holder).value
                return
            old = indexing.getitem(self.em, base, index)
            new = apply_operator(self.em, op, old, value)
            holder = Traced(old.value, old.weak, old.params)
            self.update_in_place(holder, new, shown)
            self.store(base, index, holder, shown)
        else:
            raise NotSupportedError(f"in-place update of {ast.unparse(node.target)} is not supported")

    def update_known(self, base: Traced, index, op: str, value) -> bool:
        """`base[index] op= value` computed by NumPy itself where all of it is known at compile time."""
        contents, value = base.const, known(value)
        if contents is None or base.view is not None or base.frozen or contains_unknown(index) \
                or not is_static(value):
            return False
        new = contents.copy()
        try:
            with np.errstate(all="ignore"):
                new[index] = IN_PLACE[op](new[index], value)
        except (TypeError, ValueError, IndexError, OverflowError, KeyError):
            return False
        self.em.set_known(base, new)
        return True

    def in_place(self, old) -> bool:
        """Whether `old op= v` updates `old` itself (an array; NumPy scalars and Python numbers
        are immutable and rebind instead)."""
        return isinstance(old, Traced) and not old.weak and bool(
            old.ndim or old.view is not None or id(old) in self.em.arguments or id(old) in self.em.zero_d_arrays)

    def update_in_place(self, old: Traced, new, what: str):
        """NumPy semantics of `x op= y`: the result is cast back to x's dtype (same_kind) and
        written into x itself, so every name bound to x (and every view of it) sees it."""
        if old.const is not None and old.view is None and not old.frozen and is_static(known(new)):
            contents = np.asarray(known(new))
            if contents.shape == old.shape and np.can_cast(contents.dtype, old.dtype, "same_kind"):
                self.em.set_known(old, contents.astype(old.dtype))
                return
        new = self.em.asarray(new)
        if new.shape != old.shape:
            raise ShapeError(f"{what}: non-broadcastable output operand with shape {old.shape} "
                             f"doesn't match the broadcast shape {new.shape}")
        if new.dtype != old.dtype:
            if not np.can_cast(new.dtype, old.dtype, "same_kind"):
                raise ShapeError(f"{what}: Cannot cast ufunc output from dtype('{new.dtype}') to "
                                 f"dtype('{old.dtype}') with casting rule 'same_kind'")
            new = self.em.cast(new, old.dtype)
        old.value = new.value
        old.params = None if old.params is None or new.params is None else old.params | new.params

    # ------------------------------------------------------------ control flow
    def visit_If(self, node):
        test = self.visit(node.test)
        if not isinstance(test, Traced):
            self.exec_body(node.body if test else node.orelse)
            return
        try:
            self.run_time_if(test, [lambda: self.exec_body(node.body), lambda: self.exec_body(node.orelse)])
        except MergeError as e:
            if e.name:   # name the places: where each path last assigns the variable
                places = [self.last_assignment(e.name, part) for part in (node.body, node.orelse)]
                shown = [str(p) if p else "not assigned (its value from before)" for p in places]
                e.message += f" (the true path: {shown[0]}; the false path: {shown[1]})"
            raise

    def last_assignment(self, name, stmts):
        found = None
        for stmt in stmts:
            for n in ast.walk(stmt):
                if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store):
                    found = n
        return self.src.span(found) if found is not None else None

    def run_time_if(self, test: Traced, branches):
        cond = condition(self.em, test)
        try:
            build_if(self.em, self.env, cond, branches)
        except MergeError as e:
            if test.params:   # the branches can't merge: decide the branch at compile time instead
                raise NeedStatic(test.params, reason=e) from None
            raise

    def select(self, test: Traced, then, orelse):
        """`then() if test else orelse()` for expressions. Both sides are computed and chosen
        between when that can't be told apart from Python's lazy evaluation (no side could raise
        at run time); otherwise a run-time if (`i < n and x[i] > 0` must not index x[n])."""
        eager = self.eager_select(test, then, orelse)
        if eager is not None:
            return eager
        key = f"value?{id(then)}"
        self.run_time_if(test, [lambda: self.env.__setitem__(key, then()),
                                lambda: self.env.__setitem__(key, orelse())])
        value = self.env.pop(key)
        if isinstance(value, Undefined):
            raise value.error()
        return value

    def eager_select(self, test: Traced, then, orelse):
        em, b = self.em, self.em.b
        checkpoint, n_checks, err = b.checkpoint(), len(em.checks), em.err.value
        try:
            a, c = then(), orelse()
            if len(em.checks) == n_checks and isinstance(a, (Traced, bool, int, float)) and \
                    isinstance(c, (Traced, bool, int, float)):
                out = operators.select_values(em, condition(em, test), a, c)
                if out is not None:
                    return out
        except (JitError, NeedStatic):
            pass
        b.rollback(checkpoint)
        del em.checks[n_checks:]
        em.err.value = err
        return None

    def visit_For(self, node):
        iterable = self.visit(node.iter)
        seq = sequences.as_seq(iterable)
        marker = loop_marker(node)
        em = self.em
        if seq is None:
            return self.unrolled(node, self.iterate(iterable))
        count = seq.count(em)
        forced = marker in em.force_unroll
        if forced or (not isinstance(count, Traced) and count <= SHORT_LOOP):
            if isinstance(count, Traced):
                if count.params:
                    raise NeedStatic(count.params, reason=em.force_unroll.get(marker))
                raise em.force_unroll.get(marker) or JitError("this loop must run at compile time, but its "
                                                              "length depends on array values")
            return self.unrolled(node, (seq.item(em, k) for k in range(count)))
        self.run_time_for(node, seq, count, marker)

    def enter_loop(self):
        saved = {f: self.env.pop(f) for f in (BREAK, CONTINUE) if f in self.env}
        self.env[BREAK] = False
        return saved

    def leave_loop(self, node, saved):
        broke = self.env.pop(BREAK, False)
        self.env.pop(CONTINUE, None)
        self.env.update(saved)
        if node.orelse:   # for/while ... else: runs when the loop was not left by break
            go = negate(self.em, [broke, self.env.get(RETURN, False)])
            if go is True:
                self.exec_body(node.orelse)
            elif isinstance(go, Traced):
                build_if(self.em, self.env, go, [lambda: self.guarded(node.orelse), self.skipped])

    def loop_body(self, stmts):
        self.env[CONTINUE] = False
        try:
            self.exec_body(stmts)
        except Exit:
            pass
        self.env.pop(CONTINUE, None)

    def unrolled(self, node, items):
        """A loop interpreted at compile time: each iteration is built into the program."""
        saved = self.enter_loop()
        for count, item in enumerate(items):
            if count >= MAX_UNROLL:
                raise NotSupportedError(f"this loop runs more than {MAX_UNROLL} times at compile time",
                                        hint="use run-time values (not shapes of slices) in its body")
            go = negate(self.em, [self.env.get(BREAK, False), self.env.get(RETURN, False)])
            if go is False:
                break
            iteration = lambda item=item: (self.assign(node.target, item), self.loop_body(node.body))
            if go is True:
                iteration()
            else:
                build_if(self.em, self.env, go, [lambda: (self.guarded([]), iteration()), self.skipped])
        self.leave_loop(node, saved)

    def run_time_for(self, node, seq, count, marker):
        em, env = self.em, self.env
        saved = self.enter_loop()
        counter = f"counter?{marker}"
        env[counter] = 0
        go = apply_operator(em, "Lt", 0, count)
        if go is not False:
            env[GO] = go

            # the loop variable is carried out of the loop only if something reads it afterwards
            # (carrying it needlessly also trips an IREE crash on nested loops)
            private = [n for n in _target_names(node.target) if not self.read_outside(n, node)]
            entry = {n: env.get(n, MISSING) for n in private}

            def body():
                k = env[counter]
                env[BREAK] = False
                if RETURN in env:
                    env[RETURN] = False
                self.assign(node.target, seq.item(em, k))
                self.loop_body(node.body)
                for n, v in entry.items():
                    if v is MISSING:
                        env.pop(n, None)
                    else:
                        env[n] = v
                env[counter] = k = apply_operator(em, "Add", k, 1)
                env[GO] = self.all_of([apply_operator(em, "Lt", k, count),
                                       negate(em, [env.get(BREAK, False), env.get(RETURN, False)])])
            build_while(em, env, marker, body, "loop")
        env.pop(counter, None)
        self.leave_loop(node, saved)

    def read_outside(self, name, loop) -> bool:
        inside = {id(n) for n in ast.walk(loop)}
        return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and id(n) not in inside
                   for n in ast.walk(self.src.node))

    def all_of(self, conds):
        if any(c is False for c in conds):
            return False
        traced = [condition(self.em, c) for c in conds if isinstance(c, Traced)]
        if not traced:
            return True
        out = traced[0]
        for c in traced[1:]:
            out = self.em.emit("and", out, c)
        return out

    def visit_While(self, node):
        marker = loop_marker(node)
        if marker in self.em.force_unroll:
            return self.unrolled_while(node, marker)
        em, env = self.em, self.env
        saved = self.enter_loop()
        test = self.visit(node.test)
        go = condition(em, test) if isinstance(test, Traced) else bool(test)
        if go is not False:
            env[GO] = go

            def body():
                env[BREAK] = False
                if RETURN in env:
                    env[RETURN] = False
                self.loop_body(node.body)
                stop = [env.get(BREAK, False), env.get(RETURN, False)]
                if any(isinstance(f, Traced) for f in stop):   # Python doesn't test again after break
                    env[GO] = self.select(negate(em, stop), lambda: self.truth_value(node.test), lambda: False)
                else:
                    env[GO] = self.all_of([self.truth_value(node.test), negate(em, stop)])
            build_while(em, env, marker, body, "while loop")
        self.leave_loop(node, saved)

    def truth_value(self, test_node):
        test = self.visit(test_node)
        return condition(self.em, test) if isinstance(test, Traced) else bool(test)

    def unrolled_while(self, node, marker):
        saved = self.enter_loop()
        count = 0
        while True:
            flags = [self.env.get(BREAK, False), self.env.get(RETURN, False)]
            if any(isinstance(f, Traced) for f in flags):
                raise NotSupportedError("this while loop must run at compile time, but it stops on a "
                                        "condition known only at run time")
            if any(flags):
                break
            test = self.visit(node.test)
            if isinstance(test, Traced):
                if test.params:
                    raise NeedStatic(test.params, reason=self.em.force_unroll.get(marker))
                raise self.em.force_unroll.get(marker) or JitError(
                    "this while loop must run at compile time, but its condition depends on array values")
            if not test:
                break
            count += 1
            if count > MAX_UNROLL:
                raise NotSupportedError(f"this while loop runs more than {MAX_UNROLL} times at compile time")
            self.loop_body(node.body)
        self.leave_loop(node, saved)

    def iterate(self, value):
        if isinstance(value, Traced):
            if value.ndim == 0:
                raise ShapeError("iteration over a 0-d array")
            return [indexing.getitem(self.em, value, i) for i in range(value.shape[0])]
        try:
            return iter(value)
        except TypeError:
            raise ShapeError(f"{type(value).__name__} object is not iterable") from None

    def visit_Assert(self, node):
        test = self.visit(node.test)
        if isinstance(test, Traced):
            raise NotSupportedError("assert on array values can't be checked in compiled code",
                                    hint="check it outside the @jit function")
        if not test:
            msg = self.visit(node.msg) if node.msg is not None else ""
            raise JitError(f"assertion failed at compile time{': ' + str(msg) if msg else ''}")

    def truth(self, value, node=None) -> bool:
        """bool(value) where Python needs it now (comprehension filters, assert, bool())."""
        if not isinstance(value, Traced):
            return bool(value)
        if value.params:
            raise NeedStatic(value.params)
        condition(self.em, value)   # raises NumPy's error for arrays with more than one element
        raise NotSupportedError("this condition on array values must be known at compile time here",
                                hint="use an if statement, or np.where(condition, a, b)")

    # ------------------------------------------------------------ expressions
    def visit_Constant(self, node):
        return node.value

    def visit_FunctionDef(self, node):
        if node.decorator_list:
            raise UnsupportedSyntaxError("decorators on nested functions are not supported inside @jit")
        self.env[node.name] = self.local_function(node)

    def visit_Lambda(self, node):
        return self.local_function(node)

    def local_function(self, node):
        a = node.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            raise NotSupportedError("nested functions with *args, **kwargs or keyword-only parameters are not "
                                    "supported", hint="use plain parameters")
        return LocalFunction(node, self, [self.visit(d) for d in a.defaults])

    def call_local(self, fn: LocalFunction, shown, args, kwargs):
        if fn.node in self.stack:
            raise NotSupportedError(f"{shown} calls itself (recursion), which can't be compiled",
                                    hint="write the recursion as a loop")
        names = [p.arg for p in fn.node.args.args]
        defaults = dict(zip(names[len(names) - len(fn.defaults):], fn.defaults))
        env = bind_by_name(shown, names, args, kwargs, defaults)
        src = dataclasses.replace(fn.parent.src, node=fn.node)
        return FunctionCompiler(src, self.em, env, self.stack, parent=fn.parent).run()

    def lookup(self, name):
        c = self
        while c is not None:
            if name in c.env:
                value = c.env[name]
                if isinstance(value, Undefined):
                    raise value.error()
                return value
            c = c.parent
        return MISSING

    def visit_Name(self, node):
        value = self.lookup(node.id)
        if value is not MISSING:
            return value
        value = policy.lookup_global(self.src.fn, node.id)
        if value is policy.UNRESOLVED:
            raise JitError(f"name {node.id!r} is not defined")
        self.em.guards.add(("name", self.src.fn, node.id, value))
        if isinstance(value, types.ModuleType):
            policy.check_module(value, node.id)
        return self.global_value(value, f"the module-level array {node.id}")

    def global_value(self, value, what: str):
        """A NumPy array from outside the function (a global, a module attribute, a default value):
        one read-only array for every read of it (NumPy would change the global itself)."""
        if not isinstance(value, np.ndarray):
            return value
        held = self.em.globals.get(id(value))
        if held is None:
            held = self.em.globals[id(value)] = (value, self.em.array(value, frozen=what))
        return held[1]

    def visit_Attribute(self, node):
        base = self.visit(node.value)
        attr = node.attr
        if isinstance(base, Traced):
            if attr in registry.PROPERTIES:
                return call_known(self.em, registry.PROPERTIES[attr], (base,))
            if attr in registry.METHODS:
                return BoundMethod(registry.METHODS[attr], base, attr)
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
        if isinstance(base, types.ModuleType) and base.__name__.split(".")[0] not in policy.ALLOWED_MODULES:
            self.em.guards.add(("attr", base, attr, value))
        reason = policy.forbidden_reason(policy.qualified_name(value)) if not isinstance(value, (int, float, str)) else None
        if reason:
            raise ForbiddenError(f"{ast.unparse(node)} is not allowed inside @jit: {reason}")
        return self.global_value(value, f"the array {ast.unparse(node)}")

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
        if isinstance(func, LocalFunction):
            return self.call_local(func, shown, args, kwargs)
        if isinstance(func, BoundMethod):
            return self.call_impl(func.impl, shown, (func.target, *args), kwargs)
        kind, target = policy.classify_call(func, shown)
        if kind in ("numpy", "builtin"):
            return self.call_impl(target, shown, args, kwargs)
        if kind == "math":
            args, kwargs = known(args), known(kwargs)
            if is_static(*args, *kwargs.values()):
                return fold(target, *args, **kwargs)
            if target.__name__ in MATH and not kwargs:
                return MATH[target.__name__](self.em, *args)
            raise NotSupportedError(f"{shown} is not supported on run-time values",
                                    hint=f"use np.{target.__name__} on arrays")
        return self.inline(target, shown, args, kwargs)

    def call_impl(self, impl, shown, args, kwargs):
        try:
            inspect.signature(impl).bind(self.em, *args, **kwargs)
        except TypeError as e:
            raise JitError(f"{shown}(): {e}") from None
        except ValueError:
            pass

        def call(em, *args, **kwargs):
            registry.refuse_complex(impl, shown, args, kwargs)
            return impl(em, *args, **kwargs)
        return call_known(self.em, call, args, kwargs)

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
        env = {k: self.global_value(v, f"the default value of {k}") for k, v in bound.arguments.items()}
        return FunctionCompiler(src, self.em, env, self.stack).run()

    def visit_BinOp(self, node):
        return apply_operator(self.em, type(node.op).__name__, self.visit(node.left), self.visit(node.right))

    def visit_UnaryOp(self, node):
        operand = self.visit(node.operand)
        if isinstance(node.op, ast.Not):
            if isinstance(operand, Traced):
                return Traced(negate(self.em, [condition(self.em, operand)]).value, bool, operand.params)
            return not operand
        return apply_operator(self.em, type(node.op).__name__, operand)

    def visit_Compare(self, node):
        return self.compare_chain(self.visit(node.left), node.ops, node.comparators)

    def compare_chain(self, left, ops, comparators):
        """a < b < c is (a < b) and (b < c), with b evaluated once."""
        right = self.visit(comparators[0])
        name = type(ops[0]).__name__
        if name in ("Is", "IsNot", "In", "NotIn") and not is_static(left, right):
            if name in ("Is", "IsNot") and (right is None or left is None):
                result = (left is right) == (name == "Is")
            else:
                raise NotSupportedError(f"`{name.lower()}` on arrays is not supported")
        else:
            result = apply_operator(self.em, name, left, right)
        if len(ops) == 1:
            return result
        rest = lambda: self.compare_chain(right, ops[1:], comparators[1:])
        if not isinstance(result, Traced):
            return rest() if result else result
        return self.select(result, rest, lambda: result)

    def visit_BoolOp(self, node):
        return self.bool_op(isinstance(node.op, ast.And), node.values)

    def bool_op(self, is_and, values):
        """Python's and/or: the first value that decides, evaluated lazily."""
        value = self.visit(values[0])
        if len(values) == 1:
            return value
        rest = lambda: self.bool_op(is_and, values[1:])
        if not isinstance(value, Traced):
            return rest() if bool(value) == is_and else value
        keep = lambda: value
        return self.select(value, rest, keep) if is_and else self.select(value, keep, rest)

    def visit_IfExp(self, node):
        test = self.visit(node.test)
        if not isinstance(test, Traced):
            return self.visit(node.body if test else node.orelse)
        return self.select(test, lambda: self.visit(node.body), lambda: self.visit(node.orelse))

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
        index = known(self.visit(node.slice))
        if isinstance(base, Traced):
            return call_known(self.em, _getitem, (base, index))
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


def _getitem(em, base, index):
    if isinstance(base, Traced):
        return indexing.getitem(em, base, index)
    return fold(lambda b, i: b[i], base, index)


def _target_names(target) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _pos(node):
    return {k: getattr(node, k) for k in ("lineno", "col_offset", "end_lineno", "end_col_offset")}


# ---------------------------------------------------------------- entry point

def trace(src: SourceFunction, specs: dict[str, Any], fast_trig: bool = False, aliases=()) -> Program:
    """Interpret `src` for the given argument specs (Template / ScalarSpec / StaticSpec).
    A loop whose body needs its variable at compile time (a slice length, an axis) is unrolled:
    the interpretation restarts with that loop marked, until nothing more needs it."""
    force_unroll: dict[str, JitError | None] = {}
    while True:
        try:
            return _trace(src, specs, force_unroll, fast_trig, aliases)
        except NeedStatic as need:
            loops = {p for p in need.params if is_marker(p)}
            if not loops:
                raise
            if loops <= force_unroll.keys():
                raise need.reason or JitError("internal error: a loop marked for unrolling asked again")
            for m in loops - force_unroll.keys():
                force_unroll[m] = need.reason


def _trace(src, specs, force_unroll, fast_trig=False, aliases=()) -> Program:
    builder = Builder()
    em = Emitter(builder)
    em.force_unroll = force_unroll
    em.fast_trig = fast_trig
    dynamic = [leaf for name, spec in specs.items() for leaf in leaves((name,), spec)]
    block = builder.open_block([s.tensor_type for _, s in dynamic])
    values = {}
    params: dict[tuple, Traced] = {}
    for (path, spec), value in zip(dynamic, block.params):
        if isinstance(spec, ScalarSpec):
            values[path] = Traced(value, spec.pytype, frozenset([path_name(path)]) if len(path) == 1 else None)
        else:
            values[path] = params[path] = Traced(value, None, None)
            em.arguments.add(id(values[path]))
    for view_path, base_path, index in aliases:   # arguments sharing memory: one array and views of it
        base = values[base_path]
        values[view_path] = base if index == () else indexing.getitem(em, base, as_index(index))
        del params[view_path]    # written back through its base
    env: dict[str, Any] = {name: _argument(values, (name,), spec) for name, spec in specs.items()}
    em.err = em.constant(np.int32(0))
    originals = {name: t.value for name, t in params.items()}
    result = FunctionCompiler(src, em, env).run()

    # Results that are array arguments, unchanged (or reshaped), come from the caller's own array
    # (NumPy returns that very object, or a view of it). Besides: IREE 3.13 may sort or update an
    # input buffer in place and then return that buffer as the "unchanged" argument.
    producers = {r.id: op for op in block.ops for r in op.results}
    arrays_in = {v.id: path for (path, spec), v in zip(dynamic, block.params) if isinstance(spec, Template)}

    def argument_source(v):
        if v.id in arrays_in:
            return arrays_in[v.id]
        op = producers.get(v.id)
        return argument_source(op.operands[0]) if op is not None and op.name == "reshape" else None

    def argument_object(t: Traced) -> bool:
        """Whether `t` is an argument array itself or a view of one (not a copy of one)."""
        while t.view is not None:
            t = t.view.base
        return id(t) in em.arguments

    outputs = []
    returned = {id(t): t for t in items_of(result, Traced)}
    sharing: dict[int, set] = {}   # root array -> the returned values that are it or views of it
    for t in returned.values():
        root = t
        while root.view is not None and root.view.recipe is not None:
            root = root.view.base
        sharing.setdefault(id(root), set()).add(id(t))
    shared_roots = {r for r, ts in sharing.items() if len(ts) > 1}
    out_tree = _flatten(em, result, outputs, argument_source, argument_object,
                        {"returned": returned, "shared": shared_roots,
                         "arguments": {id(t): p for p, t in params.items()}})
    writebacks = []
    for path, t in params.items():
        if t.value is not originals[path]:  # updated in place: NumPy would have written the caller's array
            writebacks.append((path, len(outputs)))
            outputs.append(t.value)
    error_index = None
    if em.checks:
        error_index = len(outputs)
        outputs.append(em.err.value)
    builder.close_block(outputs)
    prune(block)
    fn_name = src.name if src.name.isidentifier() else "lambda"
    function = Function(fn_name, block, [path_name(p) for p, _ in dynamic])
    return Program(function, out_tree, writebacks, checks=list(em.checks), error_index=error_index,
                   guards=em.guard_list())


def _argument(values, path, spec):
    if isinstance(spec, StaticSpec):
        return spec.value
    if isinstance(spec, TreeSpec):
        return spec.build([_argument(values, path + (k,), c) for k, c in zip(spec.keys, spec.children)])
    return values[path]


IN_PLACE = {"Add": operator.iadd, "Sub": operator.isub, "Mult": operator.imul, "Div": operator.itruediv,
            "FloorDiv": operator.ifloordiv, "Mod": operator.imod, "Pow": operator.ipow, "BitOr": operator.ior,
            "BitAnd": operator.iand, "BitXor": operator.ixor, "LShift": operator.ilshift,
            "RShift": operator.irshift, "MatMult": operator.imatmul}
KNOWN_RESULT_MAX = 4096   # known results up to this many elements travel in the signature, not through IREE


def _flatten(em, value, outputs, argument_source, argument_object, seen):
    """The output tree: `input` is the caller's array (or a view of it), `input_copy` a new array
    holding an argument's values unchanged (a copy: IREE would hand back the input's own buffer),
    `const` a value known at compile time (a new copy of it per call). The same array returned
    twice is one result (`seen`), so the caller gets the same object twice, as from NumPy."""
    if isinstance(value, Traced):
        if id(value) in seen:
            return seen[id(value)]
        path = argument_source(value.value) if value.weak is None else None
        base, recipes = value, []
        while base.view is not None and base.view.recipe is not None:
            recipes.insert(0, base.view.recipe)
            base = base.view.base
        arguments = seen["arguments"]
        base_tree = _flatten(em, base, outputs, argument_source, argument_object, seen) \
            if recipes and (id(base) in seen["returned"] or id(base) in arguments or id(base) in seen["shared"]) \
            else None
        if id(value) in arguments:   # the caller's own array (updated in place by the write-back)
            tree = ("input", arguments[id(value)], value.shape)
        elif base_tree is not None and base_tree[0] in ("out", "input", "const") and base.ndim:
            tree = ("view", base_tree, tuple(recipes))   # a view of another result or argument, as in NumPy
        elif path is not None:
            tree = ("input" if argument_object(value) else "input_copy", path, value.shape)
        elif value.const is not None and value.weak is None and value.const.size <= KNOWN_RESULT_MAX:
            contents = value.const
            tree = ("const", contents if id(value) in em.zero_d_arrays or contents.ndim else contents[()])
        else:
            outputs.append(value.value)
            tree = ("out", len(outputs) - 1, value.weak)
        seen[id(value)] = tree
        return tree
    flat = lambda v: _flatten(em, v, outputs, argument_source, argument_object, seen)
    if isinstance(value, tuple):
        return ("tuple", [flat(v) for v in value])
    if isinstance(value, list):
        return ("list", [flat(v) for v in value])
    if isinstance(value, dict):
        return ("dict", [(k, flat(v)) for k, v in value.items()])
    if value is None or isinstance(value, (bool, int, float, complex, str, np.generic, np.ndarray, np.dtype)):
        return ("const", value)
    raise NotSupportedError(f"a @jit function can't return a {type(value).__name__}",
                            hint="return arrays, numbers, or tuples/lists/dicts of them")


def unflatten(tree, results, arguments: dict, made: dict | None = None):
    """The Python result from the IR results; `arguments`: the call's argument values by name.
    One tree node is one object (`made`): an array returned twice comes back as the same object."""
    made = {} if made is None else made
    if id(tree) in made:
        return made[id(tree)]
    out = made[id(tree)] = _unflatten(tree, results, arguments, made)
    return out


def _unflatten(tree, results, arguments: dict, made: dict):
    kind = tree[0]
    if kind in ("input", "input_copy"):   # the caller's own array (a view of it if reshaped), as NumPy returns it
        arr = at_path(arguments, tree[1])
        if kind == "input_copy":
            arr = np.array(arr, copy=True)
        return arr if np.shape(arr) == tuple(tree[2]) else np.reshape(arr, tree[2])
    if kind == "view":
        arr = unflatten(tree[1], results, arguments, made)
        for recipe in tree[2]:
            arr = view_of(recipe, arr)
        return arr
    if kind == "out":
        r = results[tree[1]]
        if tree[2] is not None:   # a weakly typed value is a Python scalar, as in NumPy
            return tree[2](r)
        return r[()] if r.ndim == 0 else r
    if kind == "tuple":
        return tuple(unflatten(t, results, arguments, made) for t in tree[1])
    if kind == "list":
        return [unflatten(t, results, arguments, made) for t in tree[1]]
    if kind == "dict":
        return {k: unflatten(t, results, arguments, made) for k, t in tree[1]}
    value = tree[1]
    return np.array(value, copy=True) if isinstance(value, np.ndarray) else value
