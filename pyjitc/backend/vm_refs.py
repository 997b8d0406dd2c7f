"""vm_refs: one mend to IREE's VM module (the phase between the HAL and the .vmfb bytecode), made by
iree.py between its two compile steps.

IREE 3.13's bytecode gives a branch operand the MOVE bit where it is the value's last use. A
reference passed twice to one successor (`vm.br ^bb2(%buf, ..., %buf)`, which IREE makes when it
packs two loop-carried values into one buffer) is then moved into the first block argument and the
second receives null. The next use of that null buffer fails at run time: "indirect buffer reference
slot 0 is out range of the declared binding capacity of the command buffer 0 ... copy_buffer" (a
Gillespie simulation returning `X[:m + 1]`, an LU with pivoting and a `raise` in its loop; both
found by probes of valid programs, both passing once the second operand is its own value).

So each repeated reference in a successor's operands is replaced by a value of its own that holds
the same reference: `select(cmp.nz(ref), ref, null)`, which is `ref` whether or not it is null and
which IREE's folders leave alone."""
from __future__ import annotations

BRANCHES = ("vm.br", "vm.cond_br")


def separate_repeated_refs(text: str) -> str | None:
    """`text` (a VM module) with each reference passed twice to one branch successor given a
    value of its own; None where no branch repeats a reference."""
    from iree.compiler import ir
    with ir.Context() as context, ir.Location.unknown(context):
        module = ir.Module.parse(text)
        mended = sum(_mend(op, ir) for op in _branches(module.operation))
        return str(module) if mended else None


def _branches(op):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                if inner.operation.name in BRANCHES:
                    yield inner.operation
                yield from _branches(inner.operation)


def _segments(op) -> list[range]:
    """The operand positions passed to each successor of a vm.br / vm.cond_br."""
    n = len(op.operands)
    if op.name == "vm.br":
        return [range(n)]
    sizes = list(op.attributes["operandSegmentSizes"]) if "operandSegmentSizes" in op.attributes else None
    if sizes is None or len(sizes) != 3:
        return []
    cond, true_n, false_n = sizes
    return [range(cond, cond + true_n), range(cond + true_n, cond + true_n + false_n)]


def _mend(op, ir) -> int:
    mended = 0
    for positions in _segments(op):
        seen = []
        for i in positions:
            value = op.operands[i]
            if not str(value.type).startswith("!vm.ref"):
                continue
            if any(value == other for other in seen):
                op.operands[i] = _own_value(value, op, ir)
                mended += 1
            else:
                seen.append(value)
    return mended


def _own_value(value, before, ir):
    """A new value holding the same reference as `value`, made just before `before`."""
    i32 = ir.IntegerType.get_signless(32)
    with ir.InsertionPoint(before):
        nonzero = ir.Operation.create("vm.cmp.nz.ref", results=[i32], operands=[value]).result
        null = ir.Operation.create("vm.const.ref.zero", results=[value.type]).result
        return ir.Operation.create("vm.select.ref", results=[value.type], operands=[nonzero, value, null]).result
