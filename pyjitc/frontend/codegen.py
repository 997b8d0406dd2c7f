"""codegen: Python AST + argument specs -> typed IR Function, by abstract interpretation.
Python-level values (ints, tuples, shapes, dtypes) are computed now; arrays become IR values.
Raises JitError with the location of the innermost AST node involved."""
from __future__ import annotations

import ast
import os
import types
from typing import Any

import numpy as np

from ..errors import JitError, NotSupportedError, ShapeError, UnsupportedSyntaxError
from ..ir.dims import NeedsStaticShape
from ..ir.graph import Builder
from ..ir.types import is_int
from ..ir.ops import OpTypeError
from . import stacks
from . import appends, assignment, attributes, branches, calls, compaction, indexing, loops, masked, policy, raising, registry, \
    selections
from . import reshaped_selections  # noqa: F401  (adds masked.RESHAPED's rules)
from . import masked_grid  # noqa: F401  (adds masked.GRIDS's rules)
from .numpy.introspection import NoEffect
from .sequences import item_at
from .operators import apply_operator, membership
from .values import Emitter, NeedStatic, RunTimeTruth, Traced, call_known, fold, hold, is_static, known
from .unify import Deleted
from .regions import BOUND, BREAK, CONTINUE, MISSING, RETURN, RETURN_VALUE, Exit, MergeError, Undefined, condition, negate
from .source import SourceFunction, parse_function

DEBUG = os.environ.get("PYJITC_DEBUG", "") not in ("", "0")


_SOURCE_CACHE: dict[Any, SourceFunction] = {}
_CHECKED: set = set()


def as_python_function(fn):
    """`fn` as @jit compiles it: a NumPy function, ufunc, math function or builtin that compiled
    code may call (`pyjitc.jit(np.sort)`, as `jax.jit(jnp.sort)`) becomes a Python function
    calling it with the caller's arguments; anything else is returned as it is."""
    if isinstance(fn, types.FunctionType) or not callable(fn) or getattr(type(fn), "__pyjitc_jit__", False):
        return fn
    try:
        kind, _ = policy.classify_call(fn, getattr(fn, "__name__", repr(fn)))
    except JitError:
        return fn
    if kind not in ("numpy", "builtin", "math", "user"):
        return fn

    def call(*args, **kwargs):
        return fn(*args, **kwargs)
    call.__name__ = call.__qualname__ = getattr(fn, "__name__", "call")
    call.__doc__ = getattr(fn, "__doc__", None)
    return call


def source_of(fn, check: bool = True) -> SourceFunction:
    """The function's parsed source; `check`: and the policy's pass over all of it (the @jit
    function, at decoration). A helper it calls is checked by the compiler as it is compiled
    instead: library code tests for other array libraries (`if is_jax_array(x): ...`) on paths
    decided at compile time, and a path never compiled is never looked at."""
    src = _SOURCE_CACHE.get(fn)
    if src is None:
        src = _SOURCE_CACHE[fn] = parse_function(fn)
    if check and fn not in _CHECKED:
        policy.check_function(src, ALLOWED_SYNTAX)
        _CHECKED.add(fn)
    return src


class FunctionCompiler(ast.NodeVisitor):
    source_of = staticmethod(source_of)    # (for calls.inline)

    def __init__(self, src: SourceFunction, em: Emitter, env: dict[str, Any], stack=(), parent=None):
        self.src = src
        self.em = em
        self.env = env
        self.parent = parent
        self.stack = stack + ((src.fn if parent is None else src.node),)
        em.call_function = self.call_value
        self.nonlocals: set[str] = set()    # names `nonlocal` binds to an enclosing function's (call_local)

    # ------------------------------------------------------------ driver
    def run(self):
        node = self.src.node
        if isinstance(node, ast.Lambda):
            return self.visit(node.body)
        self.env[RETURN] = False
        try:
            branches.exec_body(self, node.body)
        except Exit:
            pass
        returned = self.env.get(RETURN, False)
        value = self.env.get(RETURN_VALUE, MISSING)
        if returned is False or value is raising.RAISED:   # (a path that raised returns nothing)
            return None
        if returned is True:
            return value
        if value is None or value is MISSING or isinstance(value, Undefined):   # falls off the end where it
            return None            # did not raise, or every path returns None (a bare `return`)
        raise MergeError("this function returns a value on some paths and falls off its end (returning None) "
                         "on others", self.src.span(node), hint="end it with a return statement")

    def visit(self, node):
        span = self.src.span(node)
        b = self.em.b
        prev, b.span = b.span, span or b.span
        try:
            return super().visit(node)
        except (Exit, NeedStatic, raising.UserRaised, appends.AppendPlan):
            raise
        except NeedsStaticShape as e:   # the innermost statement or expression asking a size
            e.span = getattr(e, "span", None) or span
            raise
        except JitError as e:
            raise e.located(span) from None
        except OpTypeError as e:
            raise JitError(f"internal error: {e}", span) from (e if DEBUG else None)
        except RecursionError:
            raise JitError("the program is too deeply nested to compile", span) from None
        except Exception as e:
            if isinstance(e, TypeError) and "'Dim'" in str(e):   # arithmetic a symbolic size has not
                ns = NeedsStaticShape(f"a size known only at run time, used as a number ({e})")
                ns.span = span
                raise ns from None
            if DEBUG:
                raise
            raise JitError(f"internal compiler error ({type(e).__name__}: {e}); "
                           f"set PYJITC_DEBUG=1 for the traceback", span) from None
        finally:
            b.span = prev

    def generic_visit(self, node):
        raise policy.unsupported_syntax(node)

    # ------------------------------------------------------------ statements
    def visit_Expr(self, node):
        if appends.statement(self, node):     # `results.append(v)` in a run-time loop (appends.py)
            return
        self.visit(node.value)

    def visit_Pass(self, node):
        pass

    def visit_Delete(self, node):
        """`del name`: the name is unbound from here on (a later read is Python's UnboundLocalError)."""
        for target in node.targets:
            if not isinstance(target, ast.Name):
                raise UnsupportedSyntaxError(f"`del {ast.unparse(target)}` is not supported inside @jit",
                                             hint="`del` of a plain name only; build a new list or dict instead")
            if self.lookup(target.id) is MISSING:    # (a deleted or partly bound name: lookup raises)
                raise JitError(f"NameError: name {target.id!r} is not defined")
            self.env[target.id] = Deleted(target.id)

    def visit_Nonlocal(self, node):
        """`nonlocal total`: the name is read from the enclosing function here and held as a local
        (branches and loops of this function carry it as theirs); call_local writes its final value
        back when the call returns."""
        for name in node.names:
            value = self.parent.lookup(name) if self.parent is not None else MISSING
            if value is MISSING:
                raise JitError(f"SyntaxError: no binding for nonlocal {name!r} found")
            self.env[name] = value
        self.nonlocals.update(node.names)

    def visit_NamedExpr(self, node):
        """`(n := expr)`: bound, and the value of the expression."""
        value = self.visit(node.value)
        self.assign(node.target, value)
        return value

    def visit_Break(self, node):
        self.env[BREAK] = True
        raise Exit()

    def visit_Continue(self, node):
        self.env[CONTINUE] = True
        raise Exit()

    def visit_Return(self, node):
        self.env[RETURN_VALUE] = None if node.value is None else self.visit(node.value)
        if len(self.stack) == 1 and self.parent is None:   # the function's own result (not a helper's)
            inside = self.em.loop_depth or self.em.branch_depth
            value = self.env[RETURN_VALUE]
            for m in masked.items_of(value, masked.Masked):
                if inside or not (compaction.returnable(m) or compaction.returnable_as_copy(self.em, m, value)):
                    masked.need(m, "returning it from inside a loop or branch" if inside else "returning it")
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
            if BOUND + target.id in self.env:   # bound on every path from here (regions._flag_partly_bound)
                self.env[BOUND + target.id] = True
        elif isinstance(target, (ast.Tuple, ast.List)):
            for t, v in assignment.unpack_targets(self.em, target.elts, value):
                self.assign(t, v)
        elif isinstance(target, ast.Subscript):
            base, index = self.subscript(target, read=False)   # every array is a value with identity: all aliases see the write
            if isinstance(base, masked.Masked) and masked.element_index(base, index, writing=True):   # v[0] = ... of v = x[k:]
                base, index = base.data, masked.element_position(self.em, base, index)
            elif isinstance(base, masked.Masked):
                masked.need(base, "writing into it")
            assignment.store(self.em, base, index, value, ast.unparse(target))
        elif isinstance(target, ast.Attribute) and target.attr == "shape" and isinstance(target.value, ast.Name):
            self.env[target.value.id] = assignment.set_shape(self, target.value.id, value)
        elif isinstance(target, ast.Attribute) and target.attr == "flat":
            assignment.set_flat(self.em, self.visit(target.value), value, ast.unparse(target))
        elif isinstance(target, ast.Attribute) and target.attr in ("real", "imag"):
            # `c.real = v`: NumPy's setter writes v into the view, as `c.real[...] = v`
            assignment.store(self.em, self.visit(target), Ellipsis, value, ast.unparse(target))
        else:
            raise UnsupportedSyntaxError(f"can't assign to {ast.unparse(target)} inside @jit")

    def visit_AugAssign(self, node):
        assignment.augmented_assign(self, node)

    # ------------------------------------------------------------ control flow
    def visit_If(self, node):
        branches.if_statement(self, node)

    def visit_For(self, node):
        loops.for_loop(self, node)

    def visit_While(self, node):
        loops.while_loop(self, node)

    def visit_Assert(self, node):
        raising.assert_statement(self, node)

    def visit_Import(self, node):
        for alias in node.names:
            mod = policy.import_module(alias.name)
            if alias.asname:
                self.env[alias.asname] = mod
            else:
                self.env[alias.name.split(".")[0]] = policy.import_module(alias.name.split(".")[0])

    def visit_ImportFrom(self, node):
        mod = policy.import_module(node.module or "", node.level, self.src.fn, checked=False)
        for alias in node.names:
            if alias.name == "*":
                raise UnsupportedSyntaxError("`from ... import *` inside a @jit function is not supported")
            try:
                value = getattr(mod, alias.name)
            except AttributeError:
                raise JitError(f"cannot import name {alias.name!r} from {mod.__name__!r}") from None
            if isinstance(value, types.ModuleType):   # `from scipy import special`: a module, checked
                policy.check_module(value, alias.name)
            reason = policy.forbidden_reason(policy.qualified_name(value)) if not isinstance(value, (int, float, str)) else None
            if reason:
                raise policy.not_allowed(alias.name, reason)
            self.env[alias.asname or alias.name] = self.global_value(value, f"the array {mod.__name__}.{alias.name}")

    def visit_With(self, node):
        """Only context managers whose effect compiled code does not have (np.errstate)."""
        for item in node.items:
            manager = self.visit(item.context_expr)
            if not isinstance(manager, NoEffect):
                raise policy.unsupported_syntax(node)
            if item.optional_vars is not None:
                self.assign(item.optional_vars, manager)
        branches.exec_body(self, node.body)

    def visit_Try(self, node):
        raising.try_statement(self, node)

    def visit_Raise(self, node):
        raising.raise_statement(self, node)

    def truth(self, value, node=None) -> bool:
        """bool(value) where Python needs it now (comprehension filters, assert, bool())."""
        if not isinstance(value, Traced):
            return bool(value)
        if value.params:
            raise NeedStatic(value.params)
        condition(self.em, value)   # raises NumPy's error for arrays with more than one element
        raise RunTimeTruth("this condition on array values must be known at compile time here",
                           hint="use an if statement, or np.where(condition, a, b)")

    # ------------------------------------------------------------ expressions
    def visit_Constant(self, node):
        return node.value

    def visit_JoinedStr(self, node):
        return "".join(str(self.visit(v)) for v in node.values)

    def visit_FormattedValue(self, node):
        value = self.visit(node.value)
        if isinstance(value, Traced):
            raise NotSupportedError("an f-string of array values has no meaning in compiled code",
                                    hint="format values outside the @jit function")
        return raising.formatted(value, node.conversion, "" if node.format_spec is None else self.visit(node.format_spec))

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
        return calls.LocalFunction(node, self, [self.visit(d) for d in a.defaults])

    def call_value(self, func, shown, args, kwargs):
        return calls.call_value(self, func, shown, args, kwargs)

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

    def _check_bound(self, name):
        """A name bound on only some paths (regions._flag_partly_bound): Python's error where it isn't."""
        c = self
        while name not in c.env:
            c = c.parent
        flag = c.env.get(BOUND + name)
        if isinstance(flag, Traced):
            self.em.check(negate(self.em, [flag]), f"UnboundLocalError: cannot access local variable '{name}' "
                                                   "where it is not associated with a value")

    def lookup_module(self, name):
        """What `name` is (a local, else a global), for policy.module_named."""
        try:
            value = self.lookup(name)
        except JitError:
            return policy.UNRESOLVED
        return policy.lookup_global(self.src.fn, name) if value is MISSING else value

    def visit_Name(self, node):
        value = self.lookup(node.id)
        if value is not MISSING:
            self._check_bound(node.id)
            unbound = self.em.maybe_unbound.get(value.value.id) if isinstance(value, Traced) else None
            if unbound is not None and unbound[1] == node.id:   # bound only by a loop that may not run
                self.em.check(unbound[0], f"UnboundLocalError: cannot access local variable '{node.id}' where it "
                                          "is not associated with a value (the loop that binds it ran zero times)")
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
        one read-only array for every read of it (NumPy would change the global itself). A list or
        dict is itself, never changed by the compiled code (values.container_changed)."""
        if isinstance(value, (list, dict)):
            self._hold_container(value, what.replace("array", type(value).__name__))
        if not isinstance(value, np.ndarray):
            return value
        held = self.em.globals.get(id(value))
        if held is None or not self._still_defined(held):
            # (first read inside a loop's body: that pass's region may be dropped and the body
            # interpreted again; the constant of the dropped pass was a value no block defined,
            # an internal KeyError in the lowering: `C @ x[i:i + 2]` of a global C in a loop)
            held = self.em.globals[id(value)] = (value, self.em.array(value, frozen=what), self.em.b.blocks[-1],
                                                 Builder.epoch)
        return held[1]

    def _hold_container(self, value, name: str) -> None:
        if id(value) in self.em.global_containers:
            return
        self.em.global_containers[id(value)] = name
        for item in (value.values() if isinstance(value, dict) else value):
            if isinstance(item, (list, dict)):
                self._hold_container(item, f"an item of {name}")

    def _still_defined(self, held) -> bool:
        """Whether a global's constant, made in `block`, is still defined where code is built now."""
        _, t, block, epoch = held
        if epoch == Builder.epoch:
            return True
        if not any(block is b for b in self.em.b.blocks):
            return False
        made = t._const_of
        return any(made in op.results for op in block.ops)

    def visit_Attribute(self, node):
        module = policy.module_named(node.value, self.lookup_module)
        readable = policy.readable_attribute(module, node.attr)
        if readable is not policy.UNRESOLVED:   # sys.modules, scipy.special.rel_entr, a library's helpers
            if not isinstance(readable, types.MappingProxyType):
                self.em.guards.add(("attr", module, node.attr, readable))
            return self.global_value(readable, f"the array {ast.unparse(node)}")
        return attributes.attribute(self, self.visit(node.value), node.attr, ast.unparse(node.value), ast.unparse(node))

    def visit_Call(self, node):
        func = self.visit(node.func)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):   # a list or tuple (of any values), or a static iterable
                value = self.visit(a.value)
                if isinstance(value, Traced) and value.ndim and isinstance(value.shape[0], int):
                    value = loops.iterate(self.em, value)   # np.hypot(*P.T): the rows, as Python unpacks them
                args.extend(value if isinstance(value, (list, tuple)) else self.em.static(value, "a *argument"))
            else:
                args.append(self.visit(a))
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:
                value = self.visit(k.value)
                kwargs.update(value if isinstance(value, dict) else self.em.static(value, "a **argument"))
            else:
                kwargs[k.arg] = self.visit(k.value)
        return self.call_value(func, ast.unparse(node.func), args, kwargs)

    def visit_BinOp(self, node):
        return apply_operator(self.em, type(node.op).__name__, self.visit(node.left), self.visit(node.right))

    def visit_UnaryOp(self, node):
        operand = self.visit(node.operand)
        if isinstance(operand, stacks.Stack) and isinstance(node.op, ast.Not):   # `if not stack:`
            operand = stacks.truth(self.em, operand)
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
            if name in ("Is", "IsNot") and (right is None or left is None or left is right or
                                            not (isinstance(left, Traced) and isinstance(right, Traced))
                                            or left.root is not right.root):
                # the same object, or arrays of different storage (never the same object)
                result = (left is right) == (name == "Is")
            elif name in ("In", "NotIn"):
                result = membership(self.em, left, right)
                if name == "NotIn":
                    result = Traced(self.em.emit("not", result).value, bool) if isinstance(result, Traced) else not result
            else:
                raise NotSupportedError(f"`{name.lower()}` on arrays is not supported")
        else:
            result = apply_operator(self.em, name, left, right)
        if len(ops) == 1:
            return result
        rest = lambda: self.compare_chain(right, ops[1:], comparators[1:])
        if not isinstance(result, Traced):
            return rest() if result else result
        return branches.select(self, result, rest, lambda: result)

    def visit_BoolOp(self, node):
        return self.bool_op(isinstance(node.op, ast.And), node.values)

    def test(self, node):
        """An expression whose truth alone counts (the test of an if, a while, a conditional
        expression): `and`/`or` in it give the truth of the value that decides, so `if g[i] and c
        == 2:` needs no merge of an array element with a Python bool (was a MergeError)."""
        if isinstance(node, ast.BoolOp):
            return self.bool_op(isinstance(node.op, ast.And), node.values, truth=True)
        value = self.visit(node)
        return stacks.truth(self.em, value) if isinstance(value, stacks.Stack) else value

    def bool_op(self, is_and, values, truth=False):
        """Python's and/or: the first value that decides, evaluated lazily (`truth`: its truth)."""
        value = self.test(values[0]) if truth else self.visit(values[0])
        if truth:
            value = Traced(condition(self.em, value).value, bool, value.params) if isinstance(value, Traced) \
                else bool(value)
        if len(values) == 1:
            return value
        rest = lambda: self.bool_op(is_and, values[1:], truth)
        if not isinstance(value, Traced):
            return rest() if bool(value) == is_and else value
        keep = lambda: value
        return branches.select(self, value, rest, keep) if is_and else branches.select(self, value, keep, rest)

    def visit_IfExp(self, node):
        test = self.test(node.test)
        if not isinstance(test, Traced):
            return self.visit(node.body if test else node.orelse)
        return branches.select(self, test, lambda: self.visit(node.body), lambda: self.visit(node.orelse))

    def visit_Tuple(self, node):
        return tuple(self.elements(node.elts))

    def visit_List(self, node):
        return list(self.elements(node.elts))

    def visit_Set(self, node):
        """A set of compile-time values (`name in {"numpy", "cupy"}`); of run-time values, an error
        (a set's size depends on which are equal)."""
        items = self.elements(node.elts)
        if not is_static(*items):
            raise NotSupportedError("a set of values known only at run time", hint="use a tuple or a list")
        try:
            return set(known(items))
        except TypeError as e:
            raise JitError(f"TypeError: {e}") from None

    def elements(self, elts):
        out = []
        for e in elts:
            if isinstance(e, ast.Starred):
                out.extend(loops.iterate(self.em, self.visit(e.value)))
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

    def subscript(self, node: ast.Subscript, read: bool = True) -> tuple:
        """The base and index `node` reads (or writes: `read` False, the index as it is). `a[i][j]`
        of an array, with integers i and a basic index j (integers, slices, ..., None), is
        `a[i, j]`: the same elements, as one index into a rather than an index into a view
        (loops writing `d[i][j]` run as native loops)."""
        base = inner = None
        if isinstance(node.value, ast.Subscript):
            base, inner = self.subscript(node.value)
        else:
            base = self.visit(node.value)
        index = self.visit(node.slice)
        if inner is None:
            return base, known(index) if read else index
        outer = known(index)
        inner_items = inner if isinstance(inner, tuple) else (inner,)
        outer_items = outer if isinstance(outer, tuple) else (outer,)
        if isinstance(base, Traced) and base.ndim >= len(inner_items) and all(map(_integer, inner_items)) \
                and all(_basic(v) for v in outer_items):
            return base, inner_items + outer_items
        return self.item(base, inner, node.value), outer if read else index

    def visit_Subscript(self, node):
        return self.item(*self.subscript(node), node)

    def item(self, base, index, node):
        """base[index], as `node` reads it."""
        if isinstance(base, stacks.Stack):   # stack[-1], queue[0]
            return stacks.item(self.em, base, index)
        mask_of = masked.as_mask(index)
        if isinstance(base, Traced) and mask_of is not None and mask_of.shape == base.shape[:mask_of.ndim]:
            index = mask_of     # x[np.nonzero(m)] is x[m] (where m has x's shape; else positions to gather)
        elif isinstance(index, tuple) and len(index) == 1 and isinstance(index[0], masked.Masked):
            index = index[0]
        if isinstance(base, Traced):
            index = selections.masks_as_positions(self.em, index)   # K[m, m]
            index = selections.scalars_beside_selection(self.em, index)   # A[i, indices[indptr[i]:indptr[i + 1]]]
        if isinstance(base, Traced) and isinstance(index, tuple) and selections.index_items(index):
            return call_known(self.em, selections.gather_many, (base, index))   # x[a[m], b[m]]
        if isinstance(base, Traced) and isinstance(index, masked.Masked) and (not index.positions or mask_of is not None):
            return call_known(self.em, masked.gather, (base, index))   # x[indices[lo:hi]], x[flatnonzero(d)]
        if isinstance(base, masked.Masked) and isinstance(index, masked.Masked):
            return call_known(self.em, selections.reselect, (base, index))   # Z[I] of Z = Z0[m]
        if isinstance(base, masked.Masked) and base.where[0] == "flags" and (isinstance(index, Traced) and (
                index.ndim or index.weak is int or is_int(index.dtype))
                or isinstance(index, (int, np.integer)) and not isinstance(index, (bool, np.bool_))):
            return call_known(self.em, selections.gather_compacted, (base, index))   # counts[inverse], vals[k]
        if isinstance(base, masked.Masked) and not masked.contains(index):
            out = call_known(self.em, masked.subscript, (base, index))   # r[:k][::-1]
            return appends.items_like(base, out) if isinstance(index, slice) else out   # a list's slice: a list
        if isinstance(base, masked.Masked) or masked.contains(index):
            masked.need(masked.first(base, index), "indexing")
        if isinstance(base, Traced) or base is np.r_ or base is np.c_:
            return call_known(self.em, _getitem, (base, index))
        if isinstance(base, (list, tuple)) and isinstance(index, Traced) and index.ndim == 0 and base \
                and (index.weak in (int, bool) or is_int(index.dtype)) and all(map(_plain_item, base)):
            return item_at(self.em, base, index)   # moves[d]: the item picked at run time
        index = self.em.static(index, "an index into a Python value")
        try:
            return hold(self.em, base[index])   # np.mgrid[...] makes an array the program holds
        except (IndexError, KeyError, TypeError) as e:
            err = ShapeError(f"{ast.unparse(node)}: {type(e).__name__}: {e}")
            err.python = e
            raise err from None

    def visit_GeneratorExp(self, node):
        """Evaluated now, as a list comprehension: what consumes it in compiled code (tuple(),
        sum(), any(), a loop) reads each item once, in order."""
        return self.visit_ListComp(node)

    def visit_DictComp(self, node):
        return dict(self.visit_ListComp(node, lambda: (self.visit(node.key), self.visit(node.value))))

    def visit_SetComp(self, node):
        """A set of values known at compile time (`{a.shape for a in arrays}`), made now."""
        return registry.BUILTINS["set"](self.em, self.visit_ListComp(node, lambda: self.visit(node.elt)))

    def visit_ListComp(self, node, element=None):
        if element is None:
            looped = appends.comprehension(self, node, loops.for_loop, loops.iterate,
                                           lambda: self.visit_ListComp(node, lambda: self.visit(node.elt)))
            if looped is not None:   # [f(row) for row in X], [v * v for v in x if v > 0]
                return looped
        out = []

        def loop(gens, depth=0):
            if not gens:
                out.append(element() if element else self.visit(node.elt))
                return
            gen = gens[0]
            for item in loops.iterate(self.em, self.visit(gen.iter)):
                self.assign(gen.target, item)
                if all(self.truth(self.visit(c), c) for c in gen.ifs):
                    loop(gens[1:], depth + 1)
        loop(node.generators)
        return out


# the syntax the compiler interprets: every node type FunctionCompiler has a visit_ method for
ALLOWED_SYNTAX = frozenset(getattr(ast, name[len("visit_"):]) for name in vars(FunctionCompiler)
                           if name.startswith("visit_") and name != "visit_")


def _plain_item(v) -> bool:
    """A number, a NumPy value or a tuple of them: an item a run-time index may pick."""
    if isinstance(v, tuple):
        return all(map(_plain_item, v))
    return isinstance(v, (Traced, bool, int, float, complex, np.generic))


def _integer(v) -> bool:
    """An integer index (not a bool): a Python int or a 0-d integer value."""
    if isinstance(v, Traced):
        return v.ndim == 0 and (v.weak is int or (v.weak is None and is_int(v.dtype)))
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _basic(v) -> bool:
    """A basic index item: an integer, a slice, ... or None (no index arrays, no masks)."""
    return v is None or v is Ellipsis or isinstance(v, slice) and not masked.contains(v) or _integer(v)


def _getitem(em, base, index):
    if isinstance(base, Traced):
        return indexing.getitem(em, base, index)
    if base is np.r_ or base is np.c_:
        items = index if isinstance(index, tuple) else (index,)
        parts = [p for it in items for p in ((it.start, it.stop, it.step) if isinstance(it, slice) else (it,))]
        if not is_static(*parts):
            return indexing.concatenator(em, base is np.c_, index)
    return fold(lambda b, i: b[i], base, index)
