"""calls: what a call in compiled code does, by what is called (policy.classify_call): a
registered NumPy function or builtin (the registry's implementation), a method of a Python object
held now, a function of the math or cmath module, a local function or another Python function (inlined:
compiled for its own arguments, recursion included while its depth is decided at compile time).
`fc` is the FunctionCompiler (codegen.py) reading the call."""
from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import JitError, NotSupportedError, ShapeError
from ..template import bind_by_name
from . import attributes, masked, masked_calls, policy, registry, stacks
from .attributes import BoundMethod
from .raising import raised_everywhere, stop_here
from .numpy.builtins import SEQUENCE_SEARCH   # (importing the numpy package registers every function)
from .numpy.math_module import CMATH, MATH
from .source import real_signature
from .values import NeedStatic, Traced, call_known, container_changed, fold, is_static, items_of, known

MAX_RECURSION = 24   # levels of a function calling itself, each inlined (see check_recursion)
MAX_STATIC_RECURSION = 200   # ... whose arguments are all known at compile time (Python itself allows 1000)
MAX_BRANCHED_RECURSION = 32   # its calls under run-time ifs within one outermost call (both sides compiled: 2**depth)


@dataclass(eq=False)
class LocalFunction:
    """A function defined inside the compiled one (def or lambda): inlined where it is called,
    reading the enclosing function's variables as they are at the call, like a Python closure."""
    node: ast.FunctionDef | ast.Lambda
    parent: Any     # the FunctionCompiler (codegen.py) of the function it was defined in
    defaults: list

    def __call__(self, *args, **kwargs):   # callable, as Python sees it (isinstance(f, Callable)); called by the compiler
        raise TypeError("a function defined inside a @jit function is called by the compiler only")


def call_local(fc, fn: LocalFunction, shown, args, kwargs):
    check_recursion(fc, fn.node, shown, (args, kwargs))
    names = [p.arg for p in fn.node.args.args]
    defaults = dict(zip(names[len(names) - len(fn.defaults):], fn.defaults))
    env = bind_by_name(shown, names, args, kwargs, defaults)
    src = dataclasses.replace(fn.parent.src, node=fn.node)
    outer, c = [], fn.parent
    while c is not None:     # (its arrays a closure may write: a loop in it carries them)
        outer.append(c.env)
        c = c.parent
    fc.em.enclosing_envs.extend(outer)
    inner = type(fc)(src, fc.em, env, fc.stack, parent=fn.parent)
    try:
        result = _run(fc, inner)
    finally:
        del fc.em.enclosing_envs[len(fc.em.enclosing_envs) - len(outer):]
    for name in inner.nonlocals:   # `nonlocal` names: their values at the return, back where they live
        c = fn.parent
        while name not in c.env:
            c = c.parent
        c.env[name] = env[name]
    return result


def call_value(fc, func, shown, args, kwargs):
    """Call a value the program holds (a function, method, class) with compile-time or traced
    arguments; library functions that take callables (map) reach it through em.call_function."""
    if isinstance(func, LocalFunction):
        return call_local(fc, func, shown, args, kwargs)
    if isinstance(func, BoundMethod):
        return call_impl(fc, func.impl, shown, (func.target, *args), kwargs)
    if isinstance(func, stacks.StackMethod):
        return stacks.call(fc, func.stack, func.name, shown, args, kwargs)
    if isinstance(func, functools.partial):   # its function, with the arguments it holds first
        return call_value(fc, func.func, shown, [*func.args, *args], {**func.keywords, **kwargs})
    kind, target = policy.classify_call(func, shown)
    if kind == "getattr":
        return attributes.getattr_(fc, shown, args, kwargs)
    if kind == "cached":   # its cache changes nothing but time; its arguments must be hashable, as Python's
        if not is_static(*args, *kwargs.values()):
            raise NotSupportedError(f"{shown}() caches its results (functools.lru_cache), so Python would "
                                    f"raise TypeError for an array argument (unhashable)")
        try:
            hash((tuple(args), tuple(kwargs.items())))
        except TypeError as e:
            raise JitError(f"{shown}(): TypeError: {e}") from None
        return inline(fc, target, shown, args, kwargs)
    if kind in ("numpy", "builtin"):
        return call_impl(fc, target, shown, args, kwargs)
    if kind == "method":   # a method of a str, list, dict, ... held while the program is built
        if policy.python_method(target) == "mutating":
            container_changed(fc.em, f"{shown}()", type(target.__self__).__name__, container=target.__self__)
            owner = target.__self__
            if isinstance(owner, list) and target.__name__ == "sort" and not args:   # sorted()'s rules (key=, numbers)
                owner[:] = registry.BUILTINS["sorted"](fc.em, owner, **kwargs)
                return None
            if isinstance(owner, list) and target.__name__ == "remove" and len(args) == 1 and not kwargs \
                    and not is_static(owner, *args):
                del owner[SEQUENCE_SEARCH["remove"](fc.em, owner, args[0])]
                return None
            try:
                return target(*args, **kwargs)
            except (TypeError, ValueError, IndexError, KeyError) as e:   # `[].pop()`: Python's error, located
                err = ShapeError(f"{shown}(): {type(e).__name__}: {e}")
                err.python = e   # (a try/except in the program may catch it)
                raise err from None
        owner = target.__self__
        if isinstance(owner, (list, tuple)) and target.__name__ in SEQUENCE_SEARCH and not kwargs \
                and not is_static(owner, *args):   # [x[0], x[1]].index(v), l.count(v)
            return SEQUENCE_SEARCH[target.__name__](fc.em, owner, *args)
        if not is_static(*args, *kwargs.values()):
            hint = ("use an array indexed by the value: counts = np.zeros(k, dtype=int); counts[v] += 1 "
                    "(or np.bincount)") if isinstance(owner, dict) else None
            raise NotSupportedError(f"{shown}() of values known only at run time", hint=hint)
        return fold(target, *args, **kwargs)
    if kind == "namedtuple":
        try:
            return target(*args, **kwargs)
        except TypeError as e:
            raise JitError(f"{shown}(): TypeError: {e}") from None
    if kind == "exception":
        if not is_static(*args, *kwargs.values()):
            raise NotSupportedError(f"{shown}(...) of values known only at run time can only be raised")
        return target(*args, **kwargs)
    if kind == "math":
        args, kwargs = known(args), known(kwargs)
        if is_static(*args, *kwargs.values()):
            return fold(target, *args, **kwargs)
        table = CMATH if getattr(target, "__module__", None) == "cmath" else MATH
        if target.__name__ in table:
            return table[target.__name__](fc.em, *args, **kwargs)
        has_numpy = hasattr(np, target.__name__)   # (math.erf, math.gamma: NumPy has none)
        raise NotSupportedError(f"{shown} is not supported on run-time values",
                                hint=f"use np.{target.__name__} on arrays" if has_numpy else
                                f"NumPy has no {target.__name__}: compute it outside the function")
    return inline(fc, target, shown, args, kwargs)


def call_impl(fc, impl, shown, args, kwargs):
    try:
        inspect.signature(impl).bind(fc.em, *args, **kwargs)
    except TypeError as e:
        raise JitError(f"{shown}(): {e}") from None
    except ValueError:
        pass

    if masked.contains(args, kwargs):
        return masked_calls.call(fc.em, impl, shown, args, kwargs)

    def call(em, *args, **kwargs):
        registry.refuse_complex(impl, shown, args, kwargs)
        return registry.fresh_results(impl, em, args, kwargs, impl(em, *args, **kwargs))
    return call_known(fc.em, call, args, kwargs)


def check_recursion(fc, key, shown, args):
    """Recursion is inlined while it is decided at compile time (`if n <= 1: return x` on a
    shape): each call is compiled for its own arguments. Deeper than MAX_RECURSION levels,
    the depth is taken to depend on run-time values; more than MAX_BRANCHED_RECURSION calls
    under run-time ifs of the recursion itself is a located refusal (both sides compiled)."""
    counts = fc.em.branched_recursion
    if key not in fc.stack:    # an outermost call: its recursion counted afresh
        counts[key] = [0, fc.em.branch_depth]
    elif fc.em.branch_depth > counts.setdefault(key, [0, 0])[1]:   # a recursive call under a run-time if inside it
        counts[key][0] += 1     # (the compiled function itself was entered at depth 0)
        if counts[key][0] > MAX_BRANCHED_RECURSION:
            error = NotSupportedError(
                f"{shown} calls itself under a branch on run-time values more than {MAX_BRANCHED_RECURSION} "
                "times: each call is inlined, and both sides of the branch are compiled, so the program grows "
                "as 2**depth (adaptive recursion, compiled for minutes)",
                hint="write it as a loop over an explicit stack of intervals or states, or pass a smaller depth")
            error.final = True
            raise error
    known_now = next(items_of(args, Traced), None) is None   # f(k - 1) of compile-time values (memoised recursion)
    if sum(1 for s in fc.stack if s is key) >= (MAX_STATIC_RECURSION if known_now else MAX_RECURSION):
        error = NotSupportedError(f"{shown} calls itself more than {MAX_STATIC_RECURSION if known_now else MAX_RECURSION} "
                                  "levels deep; a recursion is "
                                  "compiled by inlining each call, so its depth must be decided at compile time "
                                  "(by shapes or static values)", hint="write the recursion as a loop, e.g. with a list as a stack: `stack = [(lo, hi)]`, `while stack: lo, hi = stack.pop()`, `stack.append(...)`")
        error.final = True   # no retry on the way out (each level's `a if c else f(n - 1)` retried both: 2**24)
        params = frozenset().union(*(v.params for v in items_of(args, Traced) if v.params))
        if params:   # countdown(x, n - 1): the scalar arguments it depends on, made static
            raise NeedStatic(params, reason=error)
        raise error


def _run(fc, inner):
    """The called function's result; where every path of it raised, the caller's path stops too."""
    result = inner.run()
    if raised_everywhere(inner):
        stop_here(fc)
    return result


def inline(fc, fn, shown, args, kwargs):
    check_recursion(fc, fn, shown, (args, kwargs))
    src = fc.source_of(fn, check=False)
    try:
        bound = real_signature(fn).bind(*args, **kwargs)
    except TypeError as e:
        raise JitError(f"{shown}(): {e}") from None
    passed = set(bound.arguments)
    bound.apply_defaults()
    env = {k: v if k in passed and not isinstance(v, np.ndarray) else fc.global_value(v, f"the default value of {k}")
           for k, v in bound.arguments.items()}   # (a list passed in is the caller's: it may change)
    if not (getattr(fn, "__module__", None) or "").startswith("numpy"):
        return _run(fc, type(fc)(src, fc.em, env, fc.stack))
    try:   # NumPy's own Python code for a function the registry lacks
        return _run(fc, type(fc)(src, fc.em, env, fc.stack))
    except JitError as e:
        if e.span is not None and "/numpy/" not in e.span.filename:
            raise
        where, why = getattr(e, "numpy_stop", (e.span, e.message))   # the innermost reason
        err = NotSupportedError(f"{shown} is not supported by pyjitc yet (compiling NumPy's own Python code "
                                f"for it stopped at {where}: {why})",
                                hint="see the supported-functions table in the README")
        err.numpy_stop = (where, why)
        raise err from None
