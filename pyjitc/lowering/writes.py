"""writes: facts about a whole function that its lowering needs before it starts, read off the
typed IR: which in-place updates IREE 3.13 must be given a copy to write in (each rule found as
a silent wrong answer or a failure by the statement fuzzer), which parameters the function
writes, and how often each value is read."""
from __future__ import annotations

def live_argument_writes(fn, uses: dict) -> set[int]:
    """The top-level dynamic_update_slice ops (by id) writing an array (a parameter or a computed
    one) that a result depends on other than through that update: the results are walked back to
    what they read, treating the update's own result as a leaf. NumPy keeps the old value for
    them, so the update needs a copy anyway; IREE 3.13 sometimes made the update in place first
    (`x += 1.0; y += x[::-1]; x[5] = 3.0` gave y the new x[5], statement fuzzer seed 7007
    program 2313, a silent wrong answer)."""
    producer = {r.id: op for op in fn.body.ops for r in op.results}
    out = set()
    for update in fn.body.ops:   # (uses: how often each value is read, use_counts)
        if update.name != "dynamic_update_slice" or uses.get(update.operands[0].id, 0) < 2:
            continue
        seen, todo = set(), [v.id for v in fn.body.results]
        while todo:
            vid = todo.pop()
            if vid in seen:
                continue
            seen.add(vid)
            op = producer.get(vid)
            if op is None or op is update:
                continue
            todo.extend(v.id for v in op.operands)
            todo.extend(_captured(op))
        if update.operands[0].id in seen:
            out.add(id(update))
    return out


_VIEWS = ("slice", "reshape", "transpose")


def _through_views(v, producer: dict, stop=frozenset()):
    """`v`, or what it is a slice, reshape or transpose of (through any number of them, as
    `producer` maps value ids to ops), stopping at a value whose id is in `stop`."""
    while v.id not in stop and v.id in producer and producer[v.id].name in _VIEWS:
        v = producer[v.id].operands[0]
    return v


def captured_then_updated(block, captured=frozenset(), producer=None) -> set[int]:
    """The dynamic_update_slice ops (by id, in `block` and the blocks nested in it) whose target
    an earlier if or while reads inside its regions or yields: IREE 3.13 updated the target's
    buffer in place before the branch read it (`y[y > 0] = 1; if t > 0: x -= y; y[1:] += 1`
    returned x minus the final y, statement fuzzer seed 7005 program 498). Earlier means in this
    block or in an enclosing one: an update inside a later if's branch of a value an earlier if
    passed through (`w2 = w1` yielded unchanged by one branch, then `w1[0] = 1.5` in a later
    branch) was made in the shared buffer, and w2 changed too (statement fuzzer seed 9104 program
    1462, a silent wrong answer)."""
    out, captured, producer = set(), set(captured), dict(producer or {})
    for op in block.ops:
        if op.name == "dynamic_update_slice":
            # the target, or what it is a slice or reshape of (IREE updates such views in their
            # base's buffer)
            if _through_views(op.operands[0], producer, captured).id in captured:
                out.add(id(op))
        if op.regions:
            for region in op.regions:    # what ops before this one captured (not this op itself)
                out |= captured_then_updated(region, captured, producer)
            # what the regions read, and what that was computed from in this block (IREE may
            # fuse `y = A[1]` or `b = x * 2` into the branch, which then reads A or x itself)
            todo = _captured(op)
            while todo:
                vid = todo.pop()
                if vid not in captured:
                    captured.add(vid)
                    if vid in producer:
                        todo.extend(v.id for v in producer[vid].operands)
        producer.update((r.id, op) for r in op.results)
    return out


def updates_of_passed_arguments(fn) -> set[int]:
    """The dynamic_update_slice ops (by id, anywhere) whose target is an if's result that a branch
    passes through as an argument (or a view of one) unchanged: IREE 3.13 then updated the
    argument's own buffer in place, and later reads of the argument saw the write (`P1 =
    np.array(x); if c: P1 += 1.0; P1[0] = -1.0; ... x[::-1]`, statement fuzzer seed 7007
    program 1363, a silent wrong answer)."""
    params = {v.id for v in fn.params}
    out = set()

    def walk(block, producer):
        producer = dict(producer)
        passed = set()
        for op in block.ops:
            if op.name == "dynamic_update_slice":
                if _through_views(op.operands[0], producer, passed).id in passed:
                    out.add(id(op))
            for region in op.regions:
                walk(region, producer)
            if op.name == "if":
                for region in op.regions:
                    seen = {**producer, **{r.id: o for o in region.ops for r in o.results}}
                    for i, v in enumerate(region.results):
                        if _through_views(v, seen, params).id in params:
                            passed.add(op.results[i].id)
            producer.update((r.id, op) for r in op.results)
    walk(fn.body, {})
    return out


def written_parameters(fn) -> set[int]:
    """Ids of the parameters some dynamic_update_slice (anywhere, branches and loops included)
    writes, directly or through slices, reshapes and transposes of them."""
    producer = {}

    def index(block):
        for op in block.ops:
            producer.update((r.id, op) for r in op.results)
            for region in op.regions:
                index(region)
    index(fn.body)
    params = {v.id for v in fn.params}
    out = set()

    def walk(block):
        for op in block.ops:
            if op.name == "dynamic_update_slice":
                root = _through_views(op.operands[0], producer)
                if root.id in params:
                    out.add(root.id)
            for region in op.regions:
                walk(region)
    walk(fn.body)
    return out


def _captured(op) -> list[int]:
    """Ids of the values an op's regions read (nested blocks included)."""
    ids = []
    for block in op.regions:
        for inner in block.ops:
            ids.extend(v.id for v in inner.operands)
            ids.extend(_captured(inner))
        ids.extend(v.id for v in block.results)
    return ids


def use_counts(fns) -> dict[int, int]:
    """How many times each IR value is read (by ops, nested regions included, and as a result)."""
    counts: dict[int, int] = {}

    def walk(block):
        for op in block.ops:
            for v in op.operands:
                counts[v.id] = counts.get(v.id, 0) + 1
            for region in op.regions:
                walk(region)
        for v in block.results:
            counts[v.id] = counts.get(v.id, 0) + 1
    for fn, _ in fns:
        walk(fn.body)
    return counts
