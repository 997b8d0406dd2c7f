"""autodiff.api: pyjitc.grad and pyjitc.value_and_grad. A GradFunction is a @jit function whose
traced program is extended with its reverse pass (reverse.py) before lowering, so tracing,
caching (memory and disk), lower()/as_text(), compile() and .vmfb files work as for @jit."""
from __future__ import annotations

import pickle
import weakref

import numpy as np

from ..api import JitFunction, _user_facing
from ..errors import ArgumentError, CompileError, JitError
from ..frontend.values import DIFFERENTIATING
from ..ir.graph import Builder, prune
from ..ir.types import is_float
from .rules import inexact
from ..program import Argument, Either, Known, OutputTree, Program, Result
from ..template import PY_SCALAR_DTYPES, ScalarSpec, StaticSpec, Template, leaves
from .. import tree
from .linalg import CUSTOM
from .reverse import gradients
from .rules import Emit

class GradFunction(JitFunction):
    """`fn`'s gradient with respect to the arguments `argnums` (and its value, `with_value`),
    compiled per input template like @jit. Arguments updated in place by `fn` are left as they
    were: the gradient function computes, it does not write back."""

    def __init__(self, fn, argnums=0, with_value=False):
        options = {}
        if isinstance(fn, JitFunction):
            options = {"static_argnames": tuple(fn._static), "target": fn._target.backend,
                       "cpu": fn._target.cpu, "device": fn._driver}
            fn = fn._fn
        super().__init__(fn, **options)
        self._single = isinstance(argnums, int)
        if not self._single and not isinstance(argnums, (tuple, list)):   # (argnums=1.0: not iterable)
            raise ArgumentError(f"argnums must be an int or a non-empty tuple of ints, got {argnums!r}")
        self._argnums = (argnums,) if self._single else tuple(argnums)
        if not self._argnums or not all(isinstance(a, int) for a in self._argnums):
            raise ArgumentError(f"argnums must be an int or a non-empty tuple of ints, got {argnums!r}")
        n = len(self._param_names)
        for a in self._argnums:
            if not -n <= a < n:
                raise ArgumentError(f"argnums {a} is out of range for {fn.__name__}, which takes {n} arguments")
        self._argnums = tuple(a % n for a in self._argnums)
        self._with_value = with_value
        kind = "value_and_grad" if with_value else "grad"
        self.__qualname__ = f"{kind}({getattr(fn, '__qualname__', fn.__name__)})"
        self._name = f"{kind}_{fn.__name__}" if fn.__name__.isidentifier() else kind

    _guard_loops = False   # see reverse.Reverse: set for the retry after IREE failed to compile

    def _compile_for(self, values, fast_trig=True, why=None, stale=None):
        try:
            return super()._compile_for(values, fast_trig, why, stale)
        except CompileError:
            self._guard_loops = True
            try:
                return super()._compile_for(values, fast_trig, "IREE failed on the recomputation loops", stale)
            finally:
                self._guard_loops = False

    def _lower_values(self, values, fast_trig=False):
        token, table = DIFFERENTIATING.set(True), CUSTOM.set({})
        try:
            return super()._lower_values(values, fast_trig)
        finally:
            CUSTOM.reset(table)
            DIFFERENTIATING.reset(token)

    def _param_span(self, index: int):
        args = getattr(self._src.node, "args", None)
        params = args.posonlyargs + args.args if args is not None else []
        return self._src.span(params[index] if index < len(params) else self._src.node)

    def _wrt(self, fn, specs, indices, strict=True):
        """The parameters (IR values) of arguments `indices` and the Python scalar type each
        gradient is returned as (None for an array). `strict`: an argument that has no gradient
        is an error; otherwise it is left out (its entry is None)."""
        spec_of = dict(specs)
        dynamic = [path for name, spec in specs for path, _ in leaves((name,), spec)]
        wrt, weak = [], []
        for a in indices:
            name = self._param_names[a]
            spec = spec_of[name]
            where = self._param_span(a)
            dtype = spec.dtype if isinstance(spec, Template) else \
                PY_SCALAR_DTYPES[spec.pytype] if isinstance(spec, ScalarSpec) else None
            if not strict:
                ok = dtype is not None and inexact(dtype)
                wrt.append(fn.params[dynamic.index((name,))] if ok else None)
                weak.append(spec.pytype if ok and isinstance(spec, ScalarSpec) else None)
                continue
            if isinstance(spec, StaticSpec):
                raise JitError(f"can't differentiate with respect to {name!r}: it is a compile-time "
                               f"value ({spec.value!r}) here", where)
            if dtype is None:
                raise JitError(f"can't differentiate with respect to {name!r}: gradients of tuples, lists "
                               "and dicts of arrays are not supported yet; pass the arrays separately", where)
            if not inexact(dtype):
                raise JitError(f"can't differentiate with respect to {name!r}: its dtype is {dtype} "
                               "(gradients need float or complex arguments)", where,
                               hint=f"pass {name} as a float array" if dtype.kind in "biu" else None)
            wrt.append(fn.params[dynamic.index((name,))])
            weak.append(spec.pytype if isinstance(spec, ScalarSpec) else None)
        return wrt, weak

    def _transform(self, program: Program, specs) -> Program:
        fn = program.function
        dynamic = [path for name, spec in specs for path, _ in leaves((name,), spec)]
        wrt, weak = self._wrt(fn, specs, self._argnums)
        where = self._src.span(self._src.node)
        leaf = _valued(program.out_tree.leaves[0]) if program.out_tree.treedef.kind is None else None
        if leaf is None or isinstance(leaf, Known) and np.ndim(leaf.value) != 0:
            raise JitError("grad needs a function that returns one real scalar, not a container", where,
                           hint="pyjitc.vjp differentiates functions with array or tuple results")
        if isinstance(leaf, Result):
            out = fn.results[leaf.index]
        elif isinstance(leaf, Argument):
            out = _argument_value(program, dynamic, leaf)
        elif isinstance(leaf, Known):
            out = None
        else:
            raise JitError("grad needs a function that returns one real scalar, not a view", where)
        if out is not None and (out.type.shape != () or not is_float(out.type.dtype)):
            raise JitError(f"grad needs a function that returns one real float scalar; this one returns "
                           f"{out.type}", where, hint="reduce it to a scalar (np.sum) first, or use pyjitc.vjp")
        if isinstance(leaf, Known) and not isinstance(leaf.value, (float, np.floating)):
            raise JitError(f"grad needs a function that returns one real float scalar; this one returns "
                           f"{leaf.value!r}", where)

        old_err = fn.results[program.error_index] if program.error_index is not None else None
        grads, overflows = gradients(fn, [(out, None)] if out is not None else [], wrt, self._guard_loops,
                                     CUSTOM.get())
        outputs, value_node = [], None
        if self._with_value:
            if isinstance(leaf, Result) or isinstance(leaf, Argument) and out in fn.results:
                outputs.append(out)   # (an argument updated in place and returned: its new value)
                value_node = Result(0, getattr(leaf, "weak", None), getattr(leaf, "array", False))
            else:
                value_node = leaf if isinstance(leaf, Known) else Argument(leaf.path, leaf.shape, copy=True)
        nodes = []
        for g, w in zip(grads, weak):
            nodes.append(Result(len(outputs), w))
            outputs.append(g)
        grad_node = nodes[0] if self._single else tuple(nodes)
        result = (value_node, grad_node) if self._with_value else grad_node
        return _finish(program, outputs, old_err, overflows, result, self._name)

    def __reduce__(self):
        raise pickle.PicklingError(f"can't pickle {self.__qualname__}: pickle the compiled functions "
                                   "(lower(...).compile()) instead")

    def __repr__(self) -> str:
        return f"<pyjitc.{self.__qualname__}>"


COTANGENT = "<cotangent>"   # the backward function's extra argument: not a name Python code can read


class VJPFunction(GradFunction):
    """The backward half of pyjitc.vjp: called with `fn`'s arguments and a cotangent (a tuple
    with one array per leaf of `fn`'s result), it returns one gradient per positional argument
    of `fn` (None for arguments that have none: integers, bools, static values, containers).
    The cotangent is one more argument of the compiled function, so it is compiled once per
    template of the arguments and the cotangent, like any @jit function."""

    def __init__(self, fn):
        options = {}
        if isinstance(fn, JitFunction):
            options = {"static_argnames": tuple(fn._static), "target": fn._target.backend,
                       "cpu": fn._target.cpu, "device": fn._driver}
            fn = fn._fn
        JitFunction.__init__(self, fn, **options)
        self._param_names.append(COTANGENT)
        self.__qualname__ = f"vjp({getattr(fn, '__qualname__', fn.__name__)})"
        self._name = f"vjp_{fn.__name__}" if fn.__name__.isidentifier() else "vjp"

    def _bind(self, args, kwargs) -> dict:
        *args, cotangent = args
        names = self._param_names[:-1]
        if not kwargs and len(args) == self._positional:   # (no *args/**kwargs)
            values = dict(zip(names, args))
        else:
            try:
                bound = self._signature.bind(*args, **kwargs)
            except TypeError as e:
                raise ArgumentError(f"{self.__name__}(): {e}") from None
            bound.apply_defaults()
            values = dict(bound.arguments)
        values[COTANGENT] = cotangent
        return values

    def _transform(self, program: Program, specs) -> Program:
        fn = program.function
        dynamic = [path for name, spec in specs for path, _ in leaves((name,), spec)]
        where = self._src.span(self._src.node)
        positional = [i for i, p in enumerate(self._signature.parameters.values())
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        wrt, weak = self._wrt(fn, specs, positional, strict=False)
        seeds = []
        for k, leaf in enumerate(map(_valued, program.out_tree.leaves)):
            ct = fn.params[dynamic.index((COTANGENT, k))]
            if isinstance(leaf, Result):
                out = fn.results[leaf.index]
            elif isinstance(leaf, Argument):   # an argument returned as it is (perhaps reshaped)
                out = _argument_value(program, dynamic, leaf)
                if ct.type.shape != out.type.shape:
                    ct = _Emit(fn, lambda e: e("reshape", ct, shape=out.type.shape))
            elif isinstance(leaf, Known):
                continue
            else:
                raise JitError("vjp needs a function whose results are new arrays or arguments, not views "
                               "of arguments or results whose length depends on the data", where,
                               hint="return a copy (x[1:].copy())")
            if is_float(out.type.dtype):
                seeds.append((out, ct))
        old_err = fn.results[program.error_index] if program.error_index is not None else None
        grads, overflows = gradients(fn, seeds, [w for w in wrt if w is not None], self._guard_loops,
                                     CUSTOM.get())
        grads = iter(grads)
        outputs, nodes = [], []
        for w, t in zip(wrt, weak):
            if w is None:
                nodes.append(Known(None))
            else:
                nodes.append(Result(len(outputs), t))
                outputs.append(next(grads))
        return _finish(program, outputs, old_err, overflows, tuple(nodes), self._name)


def _argument_value(program: Program, dynamic, leaf: Argument):
    """The IR value of an argument the function returns: its value after the call (the caller
    gets its own array, written back if the function updated it in place)."""
    fn = program.function
    for path, index in program.writebacks:
        if path == leaf.path:
            return fn.results[index]
    return fn.params[dynamic.index(leaf.path)]


def _Emit(fn, make):
    """One value emitted at the end of `fn`'s body (before its reverse pass is appended)."""
    builder = Builder()
    builder.reopen(fn.body)
    try:
        return make(Emit(builder))
    finally:
        builder.blocks.pop()


def _finish(program: Program, outputs, old_err, overflows, result, name) -> Program:
    """Close the function's body with `outputs` (then its error code: the forward's checks and
    the loops' "too many trips" flags) and return it as a Program giving `result`, a nest of
    output-tree leaves. Nothing is written back."""
    fn = program.function
    builder = Builder()
    builder.reopen(fn.body)
    checks, error_index = tuple(program.checks), None
    if overflows:
        zero = builder.emit("constant", value=np.asarray(0, np.int32))
        err = zero
        for flag, message in overflows:
            checks += (message,)
            code = builder.emit("constant", value=np.asarray(len(checks), np.int32))
            err = builder.emit("select", flag, code, err)
        if old_err is not None:
            err = builder.emit("select", builder.emit("compare", old_err, zero, direction="NE"), old_err, err)
        old_err = err
    if old_err is not None:
        error_index = len(outputs)
        outputs = outputs + [old_err]
    builder.close_block(outputs)
    prune(fn.body)
    fn.name = name
    leaves_, treedef = tree.flatten(result, is_leaf=lambda x: not isinstance(x, (tuple, list, dict)))
    return Program(fn, OutputTree(treedef, tuple(leaves_)), (), checks, program.guards, error_index)


@_user_facing
def grad(fn, argnums=0) -> GradFunction:
    """The gradient of `fn` (a plain or @jit function returning a real float scalar) with respect
    to argument `argnums` (an int, or a tuple: then a tuple of gradients), compiled and cached
    per input template. Each gradient has its argument's shape and dtype."""
    return GradFunction(fn, argnums, with_value=False)


@_user_facing
def value_and_grad(fn, argnums=0) -> GradFunction:
    """Like grad, returning (fn's value, the gradient(s)) from one compiled function."""
    return GradFunction(fn, argnums, with_value=True)


_vjp_functions: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # fn -> (forward, backward)


@_user_facing
def vjp(fn, *primals):
    """`fn(*primals)` and its vector-Jacobian product, as jax.vjp: returns (value, vjp_fn) where
    vjp_fn(cotangent), the cotangent shaped like the value (an array, or a tuple of arrays for a
    tuple result), returns a tuple with the gradient of sum(value * cotangent) for each positional
    argument of `fn` (None for arguments that have none: ints, bools, static values). `fn` is a
    plain or @jit function; both halves are compiled and cached per template (the backward one
    for the cotangent's too). `primals` are copied: updates `fn` makes in place are not seen."""
    try:
        forward, backward = _vjp_functions[fn]
    except (KeyError, TypeError):
        forward = fn if isinstance(fn, JitFunction) else JitFunction(fn)
        backward = VJPFunction(fn)
        try:
            _vjp_functions[fn] = forward, backward
        except TypeError:
            pass
    saved = tuple(np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in primals)
    value = forward(*[np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in saved])
    value_leaves, treedef = tree.flatten(value)

    @_user_facing
    def vjp_fn(cotangent):
        ct_leaves, ct_def = tree.flatten(cotangent)
        if ct_def != treedef:
            raise ArgumentError(f"{backward.__qualname__}: the cotangent must have the structure of "
                                f"{fn.__name__}'s result, {treedef}; got {ct_def}")
        cts = []
        for k, (v, c) in enumerate(zip(value_leaves, ct_leaves)):
            want = np.asarray(v)
            c = np.array(c, dtype=want.dtype if want.dtype.kind == "f" else np.float64, copy=True)
            if c.shape != want.shape:
                raise ArgumentError(f"{backward.__qualname__}: cotangent leaf {k} has shape {c.shape}; "
                                    f"the result it pairs with has shape {want.shape}")
            cts.append(c)
        return backward(*saved, tuple(cts))

    return value, vjp_fn


def _valued(leaf):
    """The leaf that holds a result's values: an Either's compiled result holds them whichever
    object the caller gets (it only picks a Python number or the array a name held before)."""
    while isinstance(leaf, Either):
        leaf = leaf.then
    return leaf
