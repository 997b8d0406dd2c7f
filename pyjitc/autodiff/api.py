"""autodiff.api: pyjitc.grad and pyjitc.value_and_grad. A GradFunction is a @jit function whose
traced program is extended with its reverse pass (reverse.py) before lowering, so tracing,
caching (memory and disk), lower()/as_text(), compile() and .vmfb files work as for @jit."""
from __future__ import annotations

import pickle

import numpy as np

from ..api import JitFunction, _user_facing
from ..errors import ArgumentError, JitError
from ..frontend.values import DIFFERENTIATING
from ..ir.graph import Builder, prune
from ..ir.types import is_float
from ..program import Argument, Known, OutputTree, Program, Result
from ..template import PY_SCALAR_DTYPES, ScalarSpec, StaticSpec, Template, leaves
from .. import tree
from .reverse import gradients

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

    def _lower_values(self, values, fast_trig=False):
        token = DIFFERENTIATING.set(True)
        try:
            return super()._lower_values(values, fast_trig)
        finally:
            DIFFERENTIATING.reset(token)

    def _param_span(self, index: int):
        args = getattr(self._src.node, "args", None)
        params = args.posonlyargs + args.args if args is not None else []
        return self._src.span(params[index] if index < len(params) else self._src.node)

    def _transform(self, program: Program, specs) -> Program:
        fn = program.function
        spec_of = dict(specs)
        dynamic = [path for name, spec in specs for path, _ in leaves((name,), spec)]
        wrt, weak = [], []
        for a in self._argnums:
            name = self._param_names[a]
            spec = spec_of[name]
            where = self._param_span(a)
            if isinstance(spec, Template):
                dtype = spec.dtype
            elif isinstance(spec, ScalarSpec):
                dtype = PY_SCALAR_DTYPES[spec.pytype]
            elif isinstance(spec, StaticSpec):
                raise JitError(f"can't differentiate with respect to {name!r}: it is a compile-time "
                               f"value ({spec.value!r}) here", where)
            else:
                raise JitError(f"can't differentiate with respect to {name!r}: gradients of tuples, lists "
                               "and dicts of arrays are not supported yet; pass the arrays separately", where)
            if not is_float(dtype):
                raise JitError(f"can't differentiate with respect to {name!r}: its dtype is {dtype} "
                               "(gradients need float32 or float64 arguments)", where,
                               hint=f"pass {name} as a float array" if dtype.kind in "biu" else None)
            wrt.append(fn.params[dynamic.index((name,))])
            weak.append(spec.pytype if isinstance(spec, ScalarSpec) else None)

        where = self._src.span(self._src.node)
        leaf = program.out_tree.leaves[0] if program.out_tree.treedef.kind is None else None
        if leaf is None or isinstance(leaf, Known) and np.ndim(leaf.value) != 0:
            raise JitError("grad needs a function that returns one real scalar, not a container", where)
        if isinstance(leaf, Result):
            out = fn.results[leaf.index]
        elif isinstance(leaf, Argument):
            out = fn.params[dynamic.index(leaf.path)]
        elif isinstance(leaf, Known):
            out = None
        else:
            raise JitError("grad needs a function that returns one real scalar, not a view", where)
        if out is not None and (out.type.shape != () or not is_float(out.type.dtype)):
            raise JitError(f"grad needs a function that returns one real float scalar; this one returns "
                           f"{out.type}", where, hint="reduce it to a scalar (np.sum) first")
        if isinstance(leaf, Known) and not isinstance(leaf.value, (float, np.floating)):
            raise JitError(f"grad needs a function that returns one real float scalar; this one returns "
                           f"{leaf.value!r}", where)

        old_err = fn.results[program.error_index] if program.error_index is not None else None
        grads, overflows = gradients(fn, out, wrt)

        builder = Builder()
        builder.reopen(fn.body)
        outputs, nodes = [], []
        if self._with_value:
            if isinstance(leaf, Result):
                outputs.append(out)
                value_node = Result(0, leaf.weak, leaf.array)
            else:
                value_node = leaf if isinstance(leaf, Known) else Argument(leaf.path, leaf.shape, copy=True)
        for g, w in zip(grads, weak):
            nodes.append(Result(len(outputs), w))
            outputs.append(g)
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
            outputs.append(old_err)
        builder.close_block(outputs)
        prune(fn.body)
        fn.name = self._name

        grad_node = nodes[0] if self._single else tuple(nodes)
        result = (value_node, grad_node) if self._with_value else grad_node
        leaves_, treedef = tree.flatten(result, is_leaf=lambda x: not isinstance(x, (tuple, list, dict)))
        return Program(fn, OutputTree(treedef, tuple(leaves_)), (), checks, program.guards, error_index)

    def __reduce__(self):
        raise pickle.PicklingError(f"can't pickle {self.__qualname__}: pickle the compiled functions "
                                   "(lower(...).compile()) instead")

    def __repr__(self) -> str:
        return f"<pyjitc.{self.__qualname__}>"


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
