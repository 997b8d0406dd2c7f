"""graph: the typed IR. Values are SSA with a TensorType; ops are appended to blocks through a
Builder, which asks the op registry for result types, so a type error surfaces where it is made."""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import Span
from .types import TensorType


class Value:
    __slots__ = ("type", "id")
    _ids = itertools.count()

    def __init__(self, type: TensorType):
        self.type = type
        self.id = next(Value._ids)

    def __repr__(self) -> str:
        return f"%{self.id}: {self.type}"


@dataclass(eq=False)
class Op:
    name: str
    operands: tuple[Value, ...]
    results: tuple[Value, ...]
    attrs: dict[str, Any]
    span: Span | None = None
    regions: tuple["Block", ...] = ()


@dataclass(eq=False)
class Block:
    params: list[Value] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    results: list[Value] = field(default_factory=list)


@dataclass(eq=False)
class Function:
    name: str
    body: Block
    param_names: list[str]
    written_back: frozenset = frozenset()   # positions of the params whose new values the caller's arrays receive

    @property
    def params(self) -> list[Value]:
        return self.body.params

    @property
    def results(self) -> list[Value]:
        return self.body.results

    def __str__(self) -> str:
        return print_function(self)


class Builder:
    """Appends ops to the innermost open block. `span` is set by the frontend per AST node.
    `epoch` changes whenever a block is closed or ops are forgotten: a value remembered from an
    earlier epoch may belong to a block that can no longer be referenced."""
    epoch = 0

    def __init__(self):
        self.blocks: list[Block] = []
        self.span: Span | None = None

    def open_block(self, param_types=()) -> Block:
        block = Block(params=[Value(t) for t in param_types])
        self.blocks.append(block)
        return block

    def close_block(self, results) -> Block:
        Builder.epoch += 1
        block = self.blocks.pop()
        block.results = list(results)
        return block

    def reopen(self, block: Block) -> None:
        """Append more ops to a block closed earlier (close it again with close_block)."""
        self.blocks.append(block)

    def checkpoint(self) -> tuple[int, int]:
        return len(self.blocks), len(self.blocks[-1].ops)

    def rollback(self, checkpoint: tuple[int, int]) -> None:
        """Forget every op and block made since `checkpoint` (a discarded interpretation)."""
        Builder.epoch += 1
        depth, n_ops = checkpoint
        del self.blocks[depth:]
        del self.blocks[-1].ops[n_ops:]

    def emit(self, name: str, *operands: Value, regions=(), **attrs) -> Value | tuple[Value, ...]:
        from .ops import OPS  # the registry depends on this module's types only

        opdef = OPS.get(name)
        if opdef is None:
            raise KeyError(f"no op named {name!r} in the registry")
        types = opdef.type_rule(tuple(v.type for v in operands), regions=regions, **attrs)
        single = isinstance(types, TensorType)
        results = tuple(Value(t) for t in ((types,) if single else types))
        self.blocks[-1].ops.append(Op(name, tuple(operands), results, attrs, self.span, tuple(regions)))
        return results[0] if single else results


def cloned(op: Op, env: dict) -> Op:
    """`op` with fresh values for everything it defines (nested blocks included); `env` maps the
    old ids to the new values, and is read for the values it uses."""
    regions = tuple(cloned_block(r, env) for r in op.regions)
    results = tuple(Value(r.type) for r in op.results)
    operands = tuple(env.get(v.id, v) for v in op.operands)
    env.update((r.id, n) for r, n in zip(op.results, results))
    return Op(op.name, operands, results, dict(op.attrs), op.span, regions)


def cloned_block(block: Block, env: dict) -> Block:
    """`block` with fresh values for its parameters and everything it defines (see `cloned`)."""
    params = [Value(p.type) for p in block.params]
    env.update((p.id, q) for p, q in zip(block.params, params))
    ops = [cloned(o, env) for o in block.ops]
    return Block(params, ops, [env.get(v.id, v) for v in block.results])


def producers(block: Block, out: dict | None = None) -> dict:
    """Value id -> the op that makes it, for every op in `block` and in the regions of its ops."""
    out = {} if out is None else out
    for op in block.ops:
        out.update((v.id, op) for v in op.results)
        for r in op.regions:
            producers(r, out)
    return out


def prune(block: Block) -> set[int]:
    """Drop the ops whose results nothing uses (every op is pure: constants folded at compile time
    and never read, work on a path that was discarded), and the values a loop carries that
    nothing reads afterwards. Returns the ids of the values the block reads, its captures from
    enclosing blocks included."""
    used = {v.id for v in block.results}
    kept = []
    for op in reversed(block.ops):
        if not any(r.id in used for r in op.results):
            continue
        if op.name == "while":
            _drop_dead_carries(op, used)
        elif op.name == "if":
            _drop_dead_results(op, used)
        kept.append(op)
        used.update(v.id for v in op.operands)
        for region in op.regions:
            used |= prune(region)
    block.ops[:] = reversed(kept)
    return used


def _reads(block: Block, roots) -> set[int]:
    """Ids of the values computing `roots` reads (inside `block`, captured, or its parameters)."""
    used = {v.id for v in roots}
    for op in reversed(block.ops):
        if any(r.id in used for r in op.results):
            used.update(v.id for v in op.operands)
            for region in op.regions:
                used |= _reads(region, region.results)
    return used


def _drop_dead_carries(op: Op, used: set[int]) -> None:
    """Remove from a while op the carried values that neither the code after the loop, nor the
    condition, nor any other carried value reads. Besides the work saved: IREE 3.13 failed at
    run time ("indirect buffer reference slot 0 is out range", in the module initializer) on a
    loop carrying such a value whose first value is a constant (found by the statement fuzzer)."""
    cond, body = op.regions
    dead = {i for i, r in enumerate(op.results) if r.id not in used}
    while dead:
        reads = _reads(cond, cond.results) | _reads(body, [v for i, v in enumerate(body.results) if i not in dead])
        still = {i for i in dead if cond.params[i].id not in reads and body.params[i].id not in reads}
        if still == dead:
            break
        dead = still
    if not dead:
        return
    keep = [i for i in range(len(op.results)) if i not in dead]
    op.operands = tuple(op.operands[i] for i in keep)
    op.results = tuple(op.results[i] for i in keep)
    for region in (cond, body):
        region.params[:] = [region.params[i] for i in keep]
    body.results[:] = [body.results[i] for i in keep]


def _drop_dead_results(op: Op, used: set[int]) -> None:
    """Remove from an if op the results nothing reads afterwards, and what its branches yield for
    them (their work is then dropped too). IREE 3.13 never settled on a module whose if yielded an
    unread array that a branch updated after a loop had updated it at a run-time position
    ("maximum iteration count exceeded in fixed point pipeline", statement fuzzer seed 9105
    program 600)."""
    keep = [i for i, r in enumerate(op.results) if r.id in used]
    if len(keep) == len(op.results):
        return
    op.results = tuple(op.results[i] for i in keep)
    for region in op.regions:
        region.results[:] = [region.results[i] for i in keep]


def _fmt_attr(v) -> str:
    if isinstance(v, np.ndarray):
        if v.size <= 8:
            return np.array2string(v.ravel(), separator=",").replace("\n", "")
        return f"<{v.size} values>"
    if isinstance(v, np.dtype):
        from .types import short_name
        return short_name(v)
    return repr(v)


def print_function(fn: Function) -> str:
    names: dict[int, str] = {}
    name = lambda v: names.setdefault(v.id, f"%{len(names)}")
    params = ", ".join(f"{name(v)}: {v.type}" for v in fn.params)
    lines = [f"func @{fn.name}({params}) {{"]
    _print_block(fn.body, lines, "  ", name)
    lines.append("}")
    return "\n".join(lines)


def _print_block(block: Block, lines: list[str], indent: str, name) -> None:
    for op in block.ops:
        res = ", ".join(name(r) for r in op.results)
        args = ", ".join(name(a) for a in op.operands)
        attrs = "".join(f" {k}={_fmt_attr(v)}" for k, v in op.attrs.items())
        types = ", ".join(str(r.type) for r in op.results)
        where = f"  # {op.span}" if op.span else ""
        lines.append(f"{indent}{res} = {op.name}({args}){attrs} : {types}{where}")
        for i, region in enumerate(op.regions):
            ps = ", ".join(f"{name(p)}: {p.type}" for p in region.params)
            lines.append(f"{indent}  region {i} ({ps}) {{")
            _print_block(region, lines, indent + "    ", name)
            lines.append(f"{indent}  }}")
    if block.results:
        lines.append(f"{indent}return " + ", ".join(name(v) for v in block.results))
