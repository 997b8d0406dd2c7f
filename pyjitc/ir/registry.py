"""registry: the typed IR's op table. An op is defined once, by its type rule (operand types +
attributes -> result types) beside its StableHLO lowering rule; ops.py holds the primitives,
control.py the ops with regions (if, while)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .types import TensorType


class OpTypeError(Exception):
    """A primitive was built with operands its type rule rejects (a pyjitc bug, not a user one)."""


@dataclass(frozen=True)
class OpDef:
    name: str
    type_rule: Callable[..., TensorType | tuple[TensorType, ...]]
    lower: Callable[..., object]


OPS: dict[str, OpDef] = {}


def register_op(name: str, type_rule, lower) -> OpDef:
    if name in OPS:
        raise ValueError(f"op {name!r} registered twice")
    OPS[name] = opdef = OpDef(name, type_rule, lower)
    return opdef
