"""tracing: the entry point of the frontend. Interprets a function (codegen.FunctionCompiler) for
argument specs into a Program, and interprets it again where the first pass asks: a loop whose body
needs its variable at compile time is unrolled (NeedStatic), an append statement in a run-time loop
gets the type of what it appends (appends.AppendPlan)."""
from __future__ import annotations

import inspect
import sys

from typing import Any

import numpy as np

from .. import tree
from ..aliasing import as_index
from ..errors import JitError
from ..ir.graph import Builder, Function, prune
from ..program import OutputTree, Program
from ..template import ScalarSpec, StaticSpec, Template, TreeSpec, leaves, path_name
from . import appends, indexing, stacks
from .codegen import FunctionCompiler
from .outputs import output_leaf, view_root
from .regions import is_marker
from .source import SourceFunction
from .values import Emitter, NeedPeel, NeedStatic, Traced, items_of


def trace(src: SourceFunction, specs: dict[str, Any], fast_trig: bool = False, aliases=(),
          element_loops: bool = False, list_growth: int = 0) -> Program:
    """Interpret `src` for the given argument specs (Template / ScalarSpec / StaticSpec).
    A loop whose body needs its variable at compile time (a slice length, an axis) is unrolled:
    the interpretation restarts with that loop marked, until nothing more needs it.
    `element_loops`: the target runs scalar loops natively (CPU), so a write through a slice with
    a run-time step may be a loop over its elements (reversed_slices.element_loop). `list_growth`:
    how many times a list appended to in a while loop outgrew its room in an earlier compile
    (appends.room)."""
    limit = sys.getrecursionlimit()
    if limit < TRACE_RECURSION_LIMIT:   # (each inlined call is some 17 frames of the interpreter)
        sys.setrecursionlimit(TRACE_RECURSION_LIMIT)
    try:
        return _trace_until_done(src, specs, fast_trig, aliases, element_loops, list_growth)
    finally:
        if limit < TRACE_RECURSION_LIMIT:
            sys.setrecursionlimit(limit)


TRACE_RECURSION_LIMIT = 6000   # Python frames while tracing: 200 levels of an inlined recursion


def _trace_until_done(src, specs, fast_trig, aliases, element_loops, list_growth=0) -> Program:
    force_unroll: dict[str, JitError | None] = {}
    peel_first: set[str] = set()
    append_plans: dict = {}      # appends.py: the type each append statement in a run-time loop adds
    append_mixed: dict = {}      # ... those that add Python numbers on the first pass (which type), NumPy's later
    append_rows: dict = {}       # ... those in nested loops: the rows of all their passes
    while True:
        try:
            return _trace(src, specs, force_unroll, fast_trig, aliases, append_plans, element_loops, peel_first,
                          list_growth, append_mixed, append_rows)
        except appends.AppendPlan as plan:
            if plan.key in append_plans and not (plan.mixed and plan.key not in append_mixed):
                raise JitError("internal error: an append statement asked for its plan again") from None
            if plan.mixed:
                append_mixed[plan.key] = append_plans[plan.key][2]
            append_plans[plan.key] = plan.plan
            if plan.rows is not None:
                append_rows[plan.key] = plan.rows
        except NeedPeel as need:
            if need.marker in peel_first:
                raise JitError("internal error: a loop peeled asked again") from None
            peel_first.add(need.marker)
        except NeedStatic as need:
            marked = {p for p in need.params if is_marker(p)}
            if not marked:
                raise
            if marked <= force_unroll.keys():
                raise need.reason or JitError("internal error: a loop marked for unrolling asked again")
            for m in marked - force_unroll.keys():
                force_unroll[m] = need.reason


def _trace(src, specs, force_unroll, fast_trig=False, aliases=(), append_plans=None, element_loops=False,
           peel_first=frozenset(), list_growth=0, append_mixed=None, append_rows=None) -> Program:
    builder = Builder()
    em = Emitter(builder)
    em.force_unroll = force_unroll
    em.peel_first = peel_first
    em.append_plans = {} if append_plans is None else append_plans
    em.append_mixed = {} if append_mixed is None else append_mixed
    em.append_rows = {} if append_rows is None else append_rows
    em.fast_trig = fast_trig
    em.list_growth = list_growth
    em.element_loops = element_loops
    dynamic = [leaf for name, spec in specs.items() for leaf in leaves((name,), spec)]
    block = builder.open_block([s.tensor_type for _, s in dynamic])
    values = {}
    params: dict[tuple, Traced] = {}
    for (path, spec), value in zip(dynamic, block.params):
        if isinstance(spec, ScalarSpec):
            values[path] = Traced(value, spec.pytype, frozenset([path_name(path)]) if len(path) == 1 else None)
        elif getattr(spec, "scalar", False):   # a NumPy scalar: immutable (`x += 1` rebinds x), never written back
            values[path] = Traced(value, None, None)
        else:
            values[path] = params[path] = Traced(value, None, None)
            em.arguments.add(id(values[path]))
    for view_path, base_path, index in aliases:   # arguments sharing memory: one array and views of it
        base = values[base_path]
        values[view_path] = base if index == () else indexing.getitem(em, base, as_index(index))
        del params[view_path]    # written back through its base
    env: dict[str, Any] = {name: _argument(values, (name,), spec) for name, spec in specs.items()}
    fresh = {p.name for p in inspect.signature(src.fn).parameters.values() if p.kind is p.VAR_KEYWORD}
    for name, value in env.items():   # (a **kwargs dict is the call's own; the values in it the caller's)
        for v in (value.values() if name in fresh and isinstance(value, dict) else [value]):
            _argument_containers(em, v, f"the argument '{name}'")
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
    # (a name a run-time loop rebinds counts as the array it held before, too: see _output_leaf)
    for t in [*returned.values(), *(t.either[1] for t in returned.values()
                                    if t.either is not None and isinstance(t.either[1], Traced))]:
        sharing.setdefault(id(view_root(t)), set()).add(id(t))
    shared_roots = {r for r, ts in sharing.items() if len(ts) > 1}
    seen = {"returned": returned, "shared": shared_roots, "arguments": {id(t): p for p, t in params.items()}}
    result = appends.whole_lists(em, result)   # a returned list of a loop's appended rows: one result
    items, treedef = tree.flatten(result)
    try:
        stacks.refuse_returned(result, treedef)
        out_tree = OutputTree(treedef, tuple(output_leaf(em, v, outputs, argument_source, argument_object, seen)
                                             for v in items))
    except JitError as e:   # what is returned: point at the function
        raise e.located(src.span(src.node)) from None
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
    back = {path for path, _ in writebacks}
    function = Function(fn_name, block, [path_name(p) for p, _ in dynamic],
                        frozenset(i for i, (p, _) in enumerate(dynamic) if p in back))
    return Program(function, out_tree, tuple(writebacks), checks=tuple(em.checks), error_index=error_index,
                   guards=tuple(em.guard_list()),
                   c_order=tuple(path for path, t in params.items() if id(t) in em.c_order_writes))


def _argument_containers(em, value, shown: str) -> None:
    """Record the lists and dicts an argument holds (values.container_changed refuses changing them)."""
    if isinstance(value, (list, dict)) and id(value) not in em.argument_containers:
        em.argument_containers[id(value)] = shown
    if isinstance(value, (list, tuple, dict)):
        for v in (value.values() if isinstance(value, dict) else value):
            _argument_containers(em, v, shown)


def _argument(values, path, spec):
    if isinstance(spec, StaticSpec):
        return spec.value
    if isinstance(spec, TreeSpec):
        return spec.build([_argument(values, path + p, s) for p, s in spec.leaves()])
    return values[path]
