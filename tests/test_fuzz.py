"""Differential fuzzing in the suite (a fixed seed, a modest count; `python -m tests.fuzz
--minutes N` runs longer) and the regression tests for what the fuzzer found."""
import numpy as np
import pytest

import pyjitc
from tests import fuzz
from tests.reference import assert_same_call


def test_random_programs_agree_with_numpy_or_are_refused_with_a_location(tmp_path):
    gen = fuzz.Gen(np.random.default_rng(20261122))
    problems = []
    for i in range(int(__import__("os").environ.get("PYJITC_FUZZ_PROGRAMS", "25"))):
        text, args = gen.program(), gen.inputs()
        problem = fuzz.check_program(text, args, tmp_path, f"fuzz_suite_{i}")
        if problem and "CompileError" not in problem:   # an IREE crash is a located refusal too
            problems.append(f"{text}args: {args!r}\n{problem}")
    assert not problems, "\n\n".join(problems[:3])


# ---------------------------------------------------------------- found by the fuzzer

def sum_of_self_equality(x):
    return np.sum(x == x), np.sum((x == x).astype(np.int64))


def test_full_sum_of_a_comparison_that_folds_to_true_counts_every_element():
    # IREE 3.13 summed convert(x == x) over all axes as 1; bool -> int is now a select
    assert_same_call(pyjitc.jit(sum_of_self_equality), sum_of_self_equality, np.arange(6).reshape(2, 3))


def numpy_scalars_are_strong(x):
    return np.maximum(np.mean(2), x), np.max(1.5, axis=0) + (x > 0), np.sqrt(np.abs(0.5) + 1.0) * x


def test_numpy_scalars_folded_at_compile_time_stay_strongly_typed():
    # np.float64 subclasses float: it must not be taken for a weak Python float (NEP 50)
    assert_same_call(pyjitc.jit(numpy_scalars_are_strong), numpy_scalars_are_strong,
                     np.arange(3, dtype=np.float32))


def floor_of_ints(x):
    return np.floor(x), np.ceil(x > 1)


def test_floor_and_ceil_of_integers_keep_numpys_dtype():
    assert_same_call(pyjitc.jit(floor_of_ints), floor_of_ints, np.array([-2, 0, 3], np.int32))


def assign_into_scalar(x):
    b = np.zeros(x.shape) + x
    b[...] = b * 0.5
    return b


def test_item_assignment_into_a_numpy_scalar_is_refused_as_numpy_does():
    with pytest.raises(TypeError):
        assign_into_scalar(np.float64(2.0))
    with pytest.raises(pyjitc.JitError, match="scalar does not support item assignment"):
        pyjitc.jit(assign_into_scalar)(np.float64(2.0))
    assert_same_call(pyjitc.jit(assign_into_scalar), assign_into_scalar, np.ones(3))


def bool_or_float(x):
    a = True
    if x.sum() > 0:
        b = np.exp(x) * a
    else:
        b = a
    return b


def test_a_branch_that_gives_a_python_bool_or_a_float_array_is_refused_not_guessed():
    with pytest.raises(pyjitc.JitError, match="'b' changes type"):
        pyjitc.jit(bool_or_float)(np.float64(1.0))


def while_and(x, n):
    b, k = x, 0
    while k < n and np.all(np.abs(b) < 50):
        b = b + 1
        k += 1
    return b, k


def test_while_condition_with_and_on_array_values():
    # failed at run time in IREE 3.13 as a stablehlo.if inside the loop; now a select
    f = pyjitc.jit(while_and)
    for n in (0, 3, 100):
        assert_same_call(f, while_and, np.array([-5, 5, 5], np.int32), n)
