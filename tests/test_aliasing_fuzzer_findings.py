"""Aliasing regressions the statement fuzzer (tests/fuzz_statements.py) found where IREE 3.13
compiled a correct module wrongly or not at all: buffers shared between branches, loops and
constants. Each test names the finding (seed, program) and checks NumPy's answer, the arguments
afterwards included (see tests/test_aliasing.py for the issue's own programs)."""
import numpy as np
import pytest

import pyjitc
from tests.reference import assert_same, assert_same_call
from tests.test_aliasing import plain, same_answer


def masked_write_read_in_a_branch_then_updated(x, y, t):
    y[y > 0] = 1.0
    if t > 0:
        x -= y
    y[1:] += 1
    return x


def view_argument_read_in_a_branch_then_updated(x, y, A, n):
    P1 = np.eye(6)
    if P1[0, 0] > 0.0:
        y[y > -1.0] = 1.0
    for i in range(n):
        P1[5] += np.minimum(y, x)
    if np.any(P1 > 2.0):
        pass
    else:
        x -= np.maximum(np.floor(y), P1[-1])
    y[1:-1] += ((y[2:] * y.sum()) * np.minimum(2.0, y[1:-1]))
    return P1


@pytest.mark.parametrize("t", [1.0, -1.0])
def test_an_array_a_branch_reads_keeps_its_value_there_when_updated_after_the_branch(t):
    # statement fuzzer seed 7005 program 498: IREE updated y's buffer in place before the branch
    # read it, so x came back minus the final y (a silent wrong answer); also through a view of
    # an argument (y = A[1]) that the branch reads
    X, Y = np.arange(4.0), np.array([-1.0, 2.0, -3.0, 4.0])
    mine, theirs = [X.copy(), Y.copy()], [X.copy(), Y.copy()]
    assert_same(pyjitc.jit(masked_write_read_in_a_branch_then_updated)(*mine, t),
                masked_write_read_in_a_branch_then_updated(*theirs, t))
    assert_same(mine[0], theirs[0])
    assert_same(mine[1], theirs[1])
    r = np.random.default_rng(1)
    x, A = r.standard_normal(6) * t, r.standard_normal((3, 6))
    mine, theirs = (x.copy(), A.copy()), (x.copy(), A.copy())
    assert_same(pyjitc.jit(view_argument_read_in_a_branch_then_updated)(mine[0], mine[1][1], mine[1], 1),
                view_argument_read_in_a_branch_then_updated(theirs[0], theirs[1][1], theirs[1], 1))
    assert_same(mine[0], theirs[0])
    assert_same(mine[1], theirs[1])


def equal_constants_entering_two_loops(n):
    t1 = np.zeros(8)
    for i in range(n):
        t1[4:] = t1[:4] + 1.0
    t1[t1 > 0.0] = -0.5
    P4 = np.zeros(8)
    for i in range(n):
        P4 += 1.0
    return t1, P4


@pytest.mark.parametrize("n", [0, 2])
def test_two_loops_starting_from_equal_constants_compile(n):
    # statement fuzzer seed 7005 program 362: MLIR merged the two inits, and IREE failed to
    # compile ("operand does not dominate this use")
    for g, w in zip(pyjitc.jit(equal_constants_entering_two_loops)(n), equal_constants_entering_two_loops(n)):
        assert_same(g, w)


def view_of_an_argument_returned_beside_a_branch_result(x, y, A):
    U1 = np.array(y)
    t2 = U1.copy()
    if A.sum() > -0.995:
        x += 0.5
    else:
        t2[1:4] *= 2.0
    return U1, t2


def constant_passed_through_a_branch_after_a_loop_over_a_view(x, y, A, n):
    P1 = y.copy()
    P2 = np.zeros(x.shape[0] + 2)
    v5 = P1[1:4]
    for i in range(n):
        P1 *= 0.1
    if v5.sum() > 0.005:
        A[:] = np.sin(np.abs(A))
        x -= -2.0
    else:
        w = P2[1:-1]
        w *= 0.5
    return v5, P2


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_branch_results_passed_through_unchanged_are_valid_buffers(sign):
    # statement fuzzer seed 7005 program 1692 and seed 7006 program 783: "ref is null;
    # hal.buffer_view.create" at run time
    A0, X = np.arange(30.0).reshape(5, 6) * sign, np.arange(6.0)
    for fn, x in ((view_of_an_argument_returned_beside_a_branch_result, X[:5]),
                  (constant_passed_through_a_branch_after_a_loop_over_a_view, X)):
        mine, theirs = (x.copy(), A0.copy()), (x.copy(), A0.copy())
        extra = () if fn is view_of_an_argument_returned_beside_a_branch_result else (0,)
        got = pyjitc.jit(fn)(mine[0], mine[1][:, 2], mine[1], *extra)
        want = fn(theirs[0], theirs[1][:, 2], theirs[1], *extra)
        for g, w in zip(got, want):
            assert_same(g, w)
        assert_same(mine[0], theirs[0])
        assert_same(mine[1], theirs[1])


def strided_argument_scaled_then_gathered_in_a_branch(x, y):
    w1 = np.maximum(0.5, x[2:])
    t2 = y * 1.0
    if np.any(w1 > 2.0):
        y[:] = t2[-3:]
    return w1


@pytest.mark.parametrize("scale", [1.0, 5.0])
def test_a_strided_view_scaled_and_written_back_in_a_branch_compiles(scale):
    # statement fuzzer seed 7006 program 1236: "LLVM Translation failed for operation:
    # builtin.unrealized_conversion_cast"
    mine, theirs = np.arange(6.0) * scale, np.arange(6.0) * scale
    assert_same(pyjitc.jit(strided_argument_scaled_then_gathered_in_a_branch)(mine, mine[::2]),
                strided_argument_scaled_then_gathered_in_a_branch(theirs, theirs[::2]))
    assert_same(mine, theirs)


def copy_updated_in_a_branch_then_written_then_argument_read_in_a_loop(x, n):
    P1 = np.array(x)
    if np.max(x) < 3.0:
        P1 += 1.0
    P1[-4] = -1.0
    for i in range(n):
        P1[1:-1] = x[::-1][2:] - x[::-1][:-2]
    return P1


@pytest.mark.parametrize("scale", [1.0, 10.0])
def test_a_copy_passed_through_a_branch_and_written_is_not_written_into_the_argument(scale):
    # statement fuzzer seed 7007 program 1363: with the branch not taken, IREE updated x's own
    # buffer with P1[-4] = -1.0 and the loop then read it from x (a silent wrong answer)
    x = np.arange(6.0) * scale
    mine, theirs = x.copy(), x.copy()
    assert_same(pyjitc.jit(copy_updated_in_a_branch_then_written_then_argument_read_in_a_loop)(mine, 3),
                copy_updated_in_a_branch_then_written_then_argument_read_in_a_loop(theirs, 3))
    assert_same(mine, theirs)


def constant_left_unchanged_by_a_loop_then_reduced(n):
    b2 = np.zeros((7, 8))
    for i in range(n):
        b2[...] = b2
    b4 = np.maximum(b2, 3.0)
    return b2, b4.sum()


def test_a_reduction_of_a_constant_left_by_a_loop_counts_every_element():
    # statement fuzzer seed 7007 program 1699: the sum over both axes of the splat gave 21 for 168
    for g, w in zip(pyjitc.jit(constant_left_unchanged_by_a_loop_then_reduced)(1),
                    constant_left_unchanged_by_a_loop_then_reduced(1)):
        assert_same(g, w)


def updated_then_read_reversed_then_written(x, y, A):
    t1 = A * 1.0
    x += 1.0
    y += (t1[1] + x[::-1])
    t1[t1 < 0.0] = 0.0
    x[5] = 3.0
    return x, t1


def test_a_value_read_before_an_update_keeps_its_old_elements():
    # statement fuzzer seed 7007 program 2313: IREE made x[5] = 3.0 in place before y read x[::-1]
    r = np.random.default_rng(7)
    x, y, A = r.standard_normal(6), r.standard_normal(6), r.standard_normal((5, 6))
    mine, theirs = (x.copy(), y.copy(), A.copy()), (x.copy(), y.copy(), A.copy())
    for g, w in zip(pyjitc.jit(updated_then_read_reversed_then_written)(*mine),
                    updated_then_read_reversed_then_written(*theirs)):
        assert_same(g, w)
    for g, w in zip(mine, theirs):
        assert_same(g, w)


def constant_replaced_in_one_branch_then_read_transposed(x, y):
    P1 = np.eye(6)
    if np.any(x > 2.0):
        P1 *= 1.5
    y[...] = P1.T[3]
    return P1


@pytest.mark.parametrize("scale", [1.0, 5.0])
def test_a_constant_replaced_in_one_branch_and_read_through_a_transpose_compiles(scale):
    # statement fuzzer seed 7008 program 138: "LLVM Translation failed" when the pass-through
    # constant was copied
    mine, theirs = np.arange(6.0) * scale / 5, np.arange(6.0) * scale / 5
    assert_same(pyjitc.jit(constant_replaced_in_one_branch_then_read_transposed)(mine, mine[::-1]),
                constant_replaced_in_one_branch_then_read_transposed(theirs, theirs[::-1]))
    assert_same(mine, theirs)


def reversed_column_update_beside_a_row_sum(x, y, A):
    t1 = A[0] + A[3]
    A[A < 0.0] = 0.0
    y[::-1] += np.floor(np.minimum(np.max(A), y[::-1]))
    return t1


def test_a_reversed_column_of_an_argument_updated_in_place_compiles():
    # statement fuzzer seed 7007 program 1891: "LLVM Translation failed" for the reverse of a
    # column read (y = A[:, 2])
    r = np.random.default_rng(11)
    A = r.standard_normal((5, 6)) * 3
    mine, theirs = A.copy(), A.copy()
    x = np.zeros(6)
    assert_same(pyjitc.jit(reversed_column_update_beside_a_row_sum)(x, mine[:, 2], mine),
                reversed_column_update_beside_a_row_sum(x, theirs[:, 2], theirs))
    assert_same(mine, theirs)


def strided_write_then_strided_read_of_a_reversed_argument(x, y):
    U1 = np.copy(y[-3:])
    y[::-2] -= x[1::2]
    U1[::2] += y[::3]
    return U1


def test_a_strided_read_after_a_strided_write_reads_the_written_elements():
    # statement fuzzer seed 4242 program 188: y = x[::-1]; IREE fused the gather of the write with
    # the stride-3 read and read y[1] for y[3] (a silent wrong answer)
    x = np.array([1.79, -3.4, -0.91, -1.76, 0.46, 0.11])
    mine, theirs = x.copy(), x.copy()
    assert_same(pyjitc.jit(strided_write_then_strided_read_of_a_reversed_argument)(mine, mine[::-1]),
                strided_write_then_strided_read_of_a_reversed_argument(theirs, theirs[::-1]))
    assert_same(mine, theirs)


def row_of_an_argument_passed_through_a_branch(x, y, A):
    w1 = np.array(y[:3])
    y[...] = x
    x[-2] += np.maximum(x[0], 2.0)
    if np.any(w1 > 2.0):
        y[y < 0.0] = 0.0
    else:
        x -= 2.0
    return w1


@pytest.mark.parametrize("shift", [0.0, 5.0])
def test_a_row_of_an_argument_passed_through_a_branch_is_a_valid_buffer(shift):
    # statement fuzzer seed 9311 program 33: "OUT_OF_RANGE" at run time
    r = np.random.default_rng(3)
    A, y = r.standard_normal((5, 6)), r.standard_normal(6) + shift
    mine, theirs = (A.copy(), y.copy()), (A.copy(), y.copy())
    assert_same(pyjitc.jit(row_of_an_argument_passed_through_a_branch)(mine[0][0], mine[1], mine[0]),
                row_of_an_argument_passed_through_a_branch(theirs[0][0], theirs[1], theirs[0]))
    assert_same(mine[0], theirs[0])
    assert_same(mine[1], theirs[1])


def loop_from_a_value_also_returned(x, n):
    a = np.minimum(np.argmax(x) / 1.5, np.max(np.floor(x), axis=0))
    b = a
    k = 0
    while k < n and np.all(np.abs(b) < 50):
        b = b + 1
        k += 1
    return a, b


def test_a_loop_starting_from_a_value_also_returned_runs():
    # expression fuzzer seed 77 program 69: "indirect buffer reference slot 0 is out range ...
    # copy_buffer" at run time (the loop's trip counter entered as a bare constant)
    x = np.array([[0.49, 0.83, -1.38]])
    for g, w in zip(pyjitc.jit(loop_from_a_value_also_returned)(x, 2), loop_from_a_value_also_returned(x, 2)):
        assert_same(g, w)


def constant_passed_through_a_branch_then_reduced(x, y):
    b1 = np.ones((7, 8))
    if np.any(y > 2.0):
        b1[:] = b1
    b1[:] = np.abs(b1)
    return b1, b1.sum()


@pytest.mark.parametrize("shift", [0.0, 5.0])
def test_a_reduction_of_a_constant_passed_through_a_branch_counts_every_element(shift):
    # statement fuzzer seed 7010 program 2503: 7 for 56
    y = np.arange(6.0) / 3 + shift
    for g, w in zip(pyjitc.jit(constant_passed_through_a_branch_then_reduced)(y, y),
                    constant_passed_through_a_branch_then_reduced(y, y)):
        assert_same(g, w)


def doubly_negated_strided_read_written_through_a_reversed_view(x, y):
    b2 = y.copy()
    y[::-2] = --x[1::2]
    return b2


def test_a_strided_read_behind_unary_ops_written_through_a_strided_view_compiles():
    # statement fuzzer seed 7011 program 77: "LLVM Translation failed" (x and y the same array)
    mine, theirs = np.arange(6.0), np.arange(6.0)
    assert_same(pyjitc.jit(doubly_negated_strided_read_written_through_a_reversed_view)(mine, mine),
                doubly_negated_strided_read_written_through_a_reversed_view(theirs, theirs))
    assert_same(mine, theirs)


def two_loops_copying_one_argument(x, y, n):
    w1 = np.empty(6)
    w1[...] = x[0:]
    for i in range(n):
        y[-1] = 0.25
    p4 = (x, w1)
    for i in range(n):
        w1[4:] = w1[::3] * w1[-2:]
    return p4


@pytest.mark.parametrize("n", [0, 1, 2])
def test_two_loops_copying_one_argument_get_buffers_of_their_own(n):
    # statement fuzzer seed 7013 program 3243: at n = 0, "ref is null" at run time (the two
    # loops' copies of x were merged into one buffer); y is a view of x
    mine, theirs = np.arange(6.0), np.arange(6.0)
    assert_same(pyjitc.jit(two_loops_copying_one_argument)(mine, mine[::2], n),
                two_loops_copying_one_argument(theirs, theirs[::2], n))
    assert_same(mine, theirs)


def one_array_carried_twice_through_reshapes(x, y, A, n):
    t3 = np.ones(A.shape)
    p4 = (t3, A)
    t3 *= 0.5
    for i in range(n):
        x[5] += 0.5
        p4[1].T[...] += t3.T
        p4[0].ravel()[...] = A.ravel()
    return p4


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_loop_yielding_one_array_twice_through_reshapes_compiles(n):
    # statement fuzzer seed 7016 program 23: IREE folded reshape(reshape(A)) and failed the loop
    # ("region branch point has 10 operands, but region successor needs 12 inputs"); y is A[1]
    rng = np.random.default_rng(n)
    X, A = rng.random(6), rng.random((5, 6))
    Xb, Ab = X.copy(), A.copy()
    assert_same(pyjitc.jit(one_array_carried_twice_through_reshapes)(X, A[1], A, n),
                one_array_carried_twice_through_reshapes(Xb, Ab[1], Ab, n))
    assert_same(A, Ab)
    assert_same(X, Xb)


def _clip_negative(b):
    b[b < 0.0] = 0.0


def copy_of_a_view_carried_then_view_written_in_a_branch(x, y, A, n):
    w2 = np.array(y[0:])
    for i in range(n):
        _clip_negative(w2)
    if np.max(A) < 3.0:
        y[1:-1] = 0.0
    return w2


@pytest.mark.parametrize("n", [0, 1, 2])
def test_a_loop_over_a_copy_of_a_view_keeps_its_values_when_the_view_is_written_later(n):
    # statement fuzzer seed 7016 program 2722 (a silent wrong answer): y = x[::2]; IREE merged
    # the slice the loop started from with the one the branch wrote, and w2 came back written
    X = np.array([3.1, -1.0, 0.83, 2.0, -0.01, 5.0])
    mine, theirs = X.copy(), X.copy()
    A = np.zeros((5, 6))
    assert_same(pyjitc.jit(copy_of_a_view_carried_then_view_written_in_a_branch)(mine, mine[::2], A, n),
                copy_of_a_view_carried_then_view_written_in_a_branch(theirs, theirs[::2], A, n))
    assert_same(mine, theirs)


def two_loops_from_equal_constants(x, n):
    b1 = np.zeros(6)
    w2 = np.zeros_like(x)
    for i in range(n):
        b1[::-2] -= x[-4:-1]
    for i in range(n):
        w2 += 0.25
    return b1, w2, b1, b1.sum()


@pytest.mark.parametrize("n", [0, 1, 2])
def test_two_loops_starting_from_equal_constants_keep_their_own_arrays(n):
    # statement fuzzer seed 7016 program 5104 (a silent wrong answer): both loops started from
    # barriers over one constant buffer; IREE wrote the first loop's result there and w2 came
    # back as 0.25 + b1
    x = np.array([3.1, -1.0, 0.83, 2.0, -0.01, 5.0])
    same_answer(two_loops_from_equal_constants, plain(x, n), jitted=pyjitc.jit(two_loops_from_equal_constants))


def carried_and_its_reshape(A, n):
    U1 = np.zeros((6, 5)) + 1.0
    for i in range(n):
        U1 *= np.abs(A.sum()) * 0.1
        A[:] = U1.reshape(5, 6)
    return U1


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_loop_yielding_an_array_and_its_reshape_compiles(n):
    # statement fuzzer seed 7016 program 2752: U1 and A = U1.reshape(5, 6) both carried, one buffer
    # to IREE: iree-compile crashed (code -11) in its resource analysis
    A = np.arange(30.0).reshape(5, 6) / 30.0
    same_answer(carried_and_its_reshape, plain(A, n), jitted=pyjitc.jit(carried_and_its_reshape))


def strided_read_written_then_gathered(x, n):
    t1 = np.full(8, 2.0)
    for i in range(n):
        x[:-2] = t1[::-2]
        t1[1::2] = x[:-2]
    return t1, x


@pytest.mark.parametrize("n", [0, 2])
def test_an_array_updated_with_a_strided_read_then_gathered_compiles(n):
    # statement fuzzer --dynamic seed 4 program 740: "LLVM Translation failed for operation:
    # builtin.unrealized_conversion_cast" (also with static sizes)
    same_answer(strided_read_written_then_gathered, plain(np.arange(6.0), n),
                jitted=pyjitc.jit(strided_read_written_then_gathered))


def slice_of_a_view_of_a_loop_result(A, n):
    t1 = np.eye(6)[:5]
    b2 = np.ones((6, 5))
    for i in range(n):
        t1[:] = np.minimum(np.sqrt(np.abs(A)), (t1[::-1] + A.mean()))
    t1[...] = -(-2.0 * A)
    for i in range(n):
        b2[1:, :-1] += np.sqrt(np.abs(np.minimum(0.5, t1[:, 1:-1])))
    return b2[2:4, 1:5], b2


@pytest.mark.parametrize("n", [0, 3])
def test_a_slice_of_a_view_read_in_a_loop_compiles(n):
    # statement fuzzer --dynamic seed 3 program 2480: IREE's stream pipeline never settled
    # ("maximum iteration count exceeded in fixed point pipeline"); slices of slices are now one
    A = np.random.default_rng(2480).standard_normal((5, 6))
    same_answer(slice_of_a_view_of_a_loop_result, plain(A, n), jitted=pyjitc.jit(slice_of_a_view_of_a_loop_result))


def two_constant_writes_through_a_reversed_view_in_a_branch(x, y):
    if x[0] > 0.0:
        y[2] = 1.5
        y[1] = 1.5
    return x


@pytest.mark.parametrize("first", [-1.0, 1.0])
def test_two_constant_writes_in_a_row_through_a_reversed_view_compile(first):
    # statement fuzzer seed 7020: IREE merged the two fills into one with a bad range ("'stream.
    # async.fill' op has invalid Write access range [24 to 24 for 16]"); y is x[::-1]
    mine, theirs = np.arange(6.0) + first, np.arange(6.0) + first
    fn = two_constant_writes_through_a_reversed_view_in_a_branch
    assert_same(pyjitc.jit(fn)(mine, mine[::-1]), fn(theirs, theirs[::-1]))
    assert_same(mine, theirs)


def constant_made_in_one_branch_computed_in_the_other(y, A):
    w1 = np.copy(y)
    U2 = np.eye(6)
    if A.sum() > -0.995:
        y += 1.0
        w1[:] = (y - np.floor(U2[3]))
    if w1[0] > 0.0:
        U2[:] = U2[:, ::-1]             # a constant, folded while compiling
    else:
        U2[-3] = y                      # computed
    return U2, w1


@pytest.mark.parametrize("shift", [-9.0, 0.0, 9.0])
def test_an_if_yielding_a_constant_from_one_branch_and_a_computed_array_from_the_other_compiles(shift):
    # statement fuzzer seed 7033 program 470: "successor operand type '!stream.resource<constant>'
    # should match successor input type '!stream.resource<external>'"
    rng = np.random.default_rng(470)
    same_answer(constant_made_in_one_branch_computed_in_the_other, plain(rng.standard_normal(6) + shift, rng.random((5, 6))),
                jitted=pyjitc.jit(constant_made_in_one_branch_computed_in_the_other))


def _fill_from_neighbours(b, u):
    b[1:-1] = u[2:] - u[:-2]


def argument_reset_to_a_constant_row_each_trip(x, n):
    w1 = np.eye(5, 6)
    for i in range(n):
        _fill_from_neighbours(x, x[0:])
        x[...] = w1[-1]                 # every trip starts from the constant row
        x[i % 6] += 0.25
    return w1


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_a_loop_writing_into_a_constant_starts_each_trip_from_the_constant(n):
    # statement fuzzer seed 7033 program 1473 (a silent wrong answer, also in the previous stop's
    # code): IREE wrote each trip's update into the constant row itself
    same_answer(argument_reset_to_a_constant_row_each_trip, plain(np.arange(6.0), n),
                jitted=pyjitc.jit(argument_reset_to_a_constant_row_each_trip))


def constant_updated_in_one_branch_passed_through_the_other(x, y, n):
    w1 = np.arange(1.0, 7.0)
    U2 = w1 * 1.0                       # a constant, folded while compiling
    for i in range(n):
        x += 1.0
    if x.sum() > 1.005:
        x[x < 0.0] = 0.0                # U2 passed through
    else:
        U2[1:-1] *= 0.5                 # U2 updated
    x[::-2] = w1[-3:]
    return U2, x


@pytest.mark.parametrize("n", [0, 1])
@pytest.mark.parametrize("shift", [-3.0, 3.0])
def test_a_constant_updated_in_one_branch_and_passed_through_the_other_runs(n, shift):
    # statement fuzzer --dynamic seed 6 program 1451: "indirect buffer reference slot 0 is out
    # range" at run time (the branch updating the constant did so in place, the other yielded a
    # copy of it); y is x[::2], unused, as in the finding
    def make():
        x = np.random.default_rng(1451).standard_normal(6) + shift
        return {"x": x}, (x, x[::2], n)
    same_answer(constant_updated_in_one_branch_passed_through_the_other, make,
                jitted=pyjitc.jit(constant_updated_in_one_branch_passed_through_the_other))


def _swap_ends(b):
    t = b[0].copy()
    b[0] = b[-1]
    b[-1] = t


def base_and_its_slice_updated_in_a_branch(x, y, A, n):
    def set_first(b, v):
        b[0] = v
    b1 = np.array(y)
    b1 += y[0:]
    s2 = b1[1:-1]
    w3 = np.full((6, 5), 2.0)
    if np.max(b1) < 3.0:
        _swap_ends(s2)                  # the slice, and through it the base, updated in a branch
    else:
        s2[0] += (-2.0 - w3.sum())

    def upd4():
        w3[1:] -= w3[:-1]
    for i in range(3):
        set_first(b1, 3.0)
        upd4()
        w3 *= np.abs(w3) * 0.1
    return w3, w3, b1.sum()


def test_a_base_and_its_slice_updated_in_a_branch_run_however_they_are_numbered():
    # statement fuzzer seed 9003 program 109 (also in the previous stop's code): IREE 3.13 failed at
    # run time ("ref is null; hal.buffer.subspan") for one order of the two copies made on
    # entering the branch, and the order changed from one lowering to the next; the copies are
    # now made in program order, the slice taken from the base's copy
    def make():
        rng = np.random.default_rng(203337609)
        rng.standard_normal(6)
        Y, A = np.round(rng.standard_normal(6) * 3, 2), np.round(rng.standard_normal((5, 6)) * 3, 2)
        return {"Y": Y, "A": A}, (A[0], Y, A, 3)
    for _ in range(3):                  # lowerings numbered apart, as in a process that compiled before
        jf = pyjitc.jit(base_and_its_slice_updated_in_a_branch)
        jf.lower(*make()[1])
        same_answer(base_and_its_slice_updated_in_a_branch, make, jitted=jf)


def copy_of_a_row_argument_carried_by_a_loop_then_row_written(x, y, A, n):
    P1 = y * 1.0                        # IREE folds this into the row of A that y is
    for i in range(n):
        P1[:] = P1[::-1]
    y[-3:] -= P1[3:]
    return P1


def sum_with_zero_of_a_row_carried_by_a_loop_then_row_written(x, y, A, n):
    P1 = (y + 0.0).reshape(2, 3)
    for i in range(n):
        P1 = P1 * 2.0
    y[:2] = 5.0
    return P1, A


@pytest.mark.parametrize("n", [0, 1])
@pytest.mark.parametrize("fn", [copy_of_a_row_argument_carried_by_a_loop_then_row_written,
                                sum_with_zero_of_a_row_carried_by_a_loop_then_row_written])
def test_a_copy_of_a_row_argument_carried_by_a_loop_keeps_its_values_when_the_row_is_written(fn, n):
    # statement fuzzer seed 9004 program 2333: with n = 0, P1 came back with y's new values (a
    # silent wrong answer): IREE folded `y * 1.0` into the row of A, and the loop's zero-trip
    # result shared that row's buffer with the write; such an init now enters the loop as a copy
    def make():
        rng = np.random.default_rng(607288489)
        X, _ = np.round(rng.standard_normal(6) * 3, 2), rng.standard_normal(6)
        A = np.round(rng.standard_normal((5, 6)) * 3, 2)
        return {"X": X, "A": A}, (X, A[1], A, n)
    same_answer(fn, make, jitted=pyjitc.jit(fn))


def axpy_into(y, a, x):
    y += a * x


def rows_of_a_loop_written_base_overwritten_then_read(A, n):
    U1 = np.eye(6)[:5]
    for i in range(n):
        axpy_into(U1, 0.5, A[::-1])
    U1[:] = 3.0
    w2 = np.zeros(6)
    return w2[-4:-1], U1, U1[1:3, 2:], U1[:, 3]


@pytest.mark.parametrize("n", [0, 2])
def test_a_view_overwritten_after_a_loop_wrote_its_base_compiles_and_reads_the_overwrite(n):
    # statement fuzzer seed 9101 program 3187: IREE 3.13 gave up ("maximum iteration count
    # exceeded in fixed point pipeline") on a slice of a constant-position update of the array a
    # run-time loop carried; the slice is now taken from the update itself
    A = np.arange(30.0).reshape(5, 6)
    got = pyjitc.jit(rows_of_a_loop_written_base_overwritten_then_read)(A.copy(), n)
    want = rows_of_a_loop_written_base_overwritten_then_read(A.copy(), n)
    for g, w in zip(got, want):
        assert_same(g, w)
    assert np.shares_memory(got[1], got[2]) and np.shares_memory(got[1], got[3])


def copy_row_into(dst, src):
    dst[:] = src


def strided_update_then_read_three_times(x, y, A, n):
    b3 = np.empty(8)
    b3[:] = np.floor(A.mean())
    b3[::2] += ((b3[-4:] * b3[1::2]) + y[2:])
    for i in range(3):
        copy_row_into(x, A[1])
        b3 *= 0.5
        A[:, -3:] += (np.floor(b3[0]) + np.maximum(2.0, -2.0))
    return b3


def test_a_strided_update_read_by_an_unrolled_loop_compiles():
    # statement fuzzer seed 9101 program 4337: iree-compile grew to 24 GB and was killed (the
    # strided write's gather fused into every later read); x and y overlap (y = x[::-1])
    def make():
        rng = np.random.default_rng(1)
        A, X = rng.standard_normal((5, 6)), rng.standard_normal(6)
        return {"X": X, "A": A}, (X, X[::-1], A, 1)
    same_answer(strided_update_then_read_three_times, make,
                jitted=pyjitc.jit(strided_update_then_read_three_times))


def two_loops_the_second_carrying_the_firsts_arrays(x, y, A, n):
    def fill(b, u):
        b[1:-1] = u[2:] - u[:-2]
    b1 = A.copy()
    b4 = np.ones((A.shape[0] + 2, A.shape[1] + 2))
    for i in range(n):
        A[2] += np.maximum(x, x)
        fill(b1, b4[1:-1, 1:-1])
        y[-4] += 0.25
    for i in range(1, A.shape[1]):
        tmp5 = np.abs(A[:, i - 1]) + A[:, i]
        A[:, i] += tmp5 * 0.5
        b1[:, i] -= tmp5 - A[:, i - 1]
    return b1, b1.sum()


@pytest.mark.parametrize("n", [0, 1])
def test_a_loop_carrying_arrays_an_earlier_loop_left_runs_when_neither_ran(n):
    # statement fuzzer seed 9102 program 2255: with n = 0, IREE 3.13 failed at run time ("ref is
    # null; while invoking native function hal.buffer.subspan"); x and y alias (y = x)
    def make():
        A, X = np.arange(30.0).reshape(5, 6) / 7, np.arange(6.0)
        return {"X": X, "A": A}, (X, X, A, n)
    same_answer(two_loops_the_second_carrying_the_firsts_arrays, make,
                jitted=pyjitc.jit(two_loops_the_second_carrying_the_firsts_arrays))


def constant_passed_through_one_branch_replaced_in_the_other(x, y, A):
    w1 = np.zeros(4)
    if A[0, 0] > 0.0:
        y[-5] = 0.5
        w1[:] = x[2:]
    else:
        A[:] = A[::-1]
    return w1


@pytest.mark.parametrize("corner", [0.5, -0.5])
def test_a_constant_one_branch_passes_through_and_the_other_replaces_runs(corner):
    # statement fuzzer seed 9104 program 940: on the else path IREE 3.13 failed at run time ("ref
    # is null; while invoking native function hal.buffer_view.create")
    def make():
        A = np.arange(25.0).reshape(5, 5) / 7
        A[0, 0] = corner
        X, Y = np.arange(6.0), np.arange(6.0) * 2
        return {"X": X, "Y": Y, "A": A}, (X, Y, A)
    same_answer(constant_passed_through_one_branch_replaced_in_the_other, make,
                jitted=pyjitc.jit(constant_passed_through_one_branch_replaced_in_the_other))


def copy_of_a_copy_updated_in_separate_branches(x, y, A):
    w1 = np.copy(A[1:-1])
    w2 = np.copy(w1)
    if y.sum() > -0.995:
        A[1:-1] -= 1.0
    else:
        w2[1:-1] *= 0.5
    if np.any(x > 2.0):
        w1[0] = 1.5
    return w1, w2


@pytest.mark.parametrize("level", [2.5, -2.5])
def test_a_copy_passed_through_one_if_keeps_its_values_when_a_later_if_updates_the_original(level):
    # statement fuzzer seed 9104 program 1462, a silent wrong answer: w2 (yielded unchanged by
    # the first if) came back with w1's later w1[0] = 1.5
    def make():
        A = np.arange(30.0).reshape(5, 6) / 7 - 2
        X = np.full(6, level)
        return {"X": X, "A": A}, (X, X, A)
    same_answer(copy_of_a_copy_updated_in_separate_branches, make,
                jitted=pyjitc.jit(copy_of_a_copy_updated_in_separate_branches))


def unread_update_in_a_branch_after_a_loop_updated_it(A, n):
    U1 = np.ones((7, 8))
    U3 = A[1:-1] * 1.0
    u4 = U3[1:-1, 1:-1]
    for i in range(n):
        u4[i % 1] += u4[0]
    if np.any(A > 2.0):
        U1 += 1.0
        u4 -= 1.0
    return U1[::2, ::-1]


@pytest.mark.parametrize("n", [0, 1, 3])
def test_an_if_result_nothing_reads_is_dropped_and_the_module_compiles(n):
    # statement fuzzer seed 9105 program 600: "maximum iteration count exceeded in fixed point
    # pipeline" in IREE 3.13 while the if still yielded U3, which nothing read
    A = np.arange(30.0).reshape(5, 6) / 5 - 2
    assert_same(pyjitc.jit(unread_update_in_a_branch_after_a_loop_updated_it)(A.copy(), n),
                unread_update_in_a_branch_after_a_loop_updated_it(A.copy(), n))


def element_written_then_read_back_into_the_whole_array(y, A, n):
    def set_first(b, v):
        b[0] = v
    b1 = np.abs(y) * 1.0
    w3 = np.ones(A.shape)
    for i in range(n):
        set_first(b1, 3.0)
        A -= w3 * w3
        b1[:] = b1[0] + w3[-5]
    return b1


@pytest.mark.parametrize("n", [0, 2])
def test_a_loop_result_computed_from_a_constant_written_in_the_body_compiles(n):
    # statement fuzzer seed 9107 program 875: iree-compile crashed (code -11 in
    # ScfWhileOpConversion): b1[0] read back the 3.0 written just before, so the new b1 was a
    # constant the loop yielded; the loop-invariance check now sees through that read
    y, A = np.linspace(-1, 1, 6), np.arange(36.0).reshape(6, 6)
    assert_same_call(pyjitc.jit(element_written_then_read_back_into_the_whole_array),
                     element_written_then_read_back_into_the_whole_array, y, A, n)


def splat_in_one_branch_beside_a_computed_array_in_the_other(x, y, A, n):
    t1 = np.full((7, 8), 2.0)
    inner = t1[2:4, 1:5]
    for i in range(3):
        A[i] = A[i] * 0.5
    if y.sum() > 0.005:
        inner += np.max(t1)
        y[1] = 1.5 + A.mean()
    else:
        A[:] = 3.0
    y += 3.0 * x
    return t1


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_an_array_filled_with_a_constant_in_one_branch_is_copied_and_both_paths_run(sign):
    # statement fuzzer seed 9110 program 988: on the path filling A with 3.0 (a splat the branch
    # yields, the other yielding a computed A), IREE 3.13 failed at run time ("ref is null; while
    # invoking native function hal.buffer_view.create"; in the fuller program "indirect buffer
    # reference slot 0 is out range")
    def make():
        A, X = np.arange(30.0).reshape(5, 6) / 7, np.arange(6.0)
        Y = sign * (np.arange(6.0) + 1)
        return {"X": X, "Y": Y, "A": A}, (X, Y, A, 1)
    same_answer(splat_in_one_branch_beside_a_computed_array_in_the_other, make,
                jitted=pyjitc.jit(splat_in_one_branch_beside_a_computed_array_in_the_other))


def one_argument_yielded_twice_by_a_branch(x, y, A, n):
    def axpy(y, a, x):
        y += a * x
    def copy_into(dst, src):
        dst[:] = src
    U1 = np.copy(A)
    P2 = x * 1.0
    v3 = U1.reshape(-1)
    for i in range(3):
        P2[0:] += np.abs((np.max(y) + x))
    if y.sum() > 0.005:
        axpy(v3, 0.25, A.ravel())
        axpy(x, 0.25, P2[::-1])
    row4 = U1[:, ::-1]
    if np.any(row4 > 2.0):
        v3[...] = A.ravel()
    else:
        copy_into(A, y.mean())
    return P2, U1, P2, v3.sum()


@pytest.mark.parametrize("level", [0.5, 50.0])
def test_a_branch_yielding_one_argument_as_two_results_copies_the_second_and_runs(level):
    # statement fuzzer seed 9111 program 679: U1 (a copy of A overwritten with A's values) and A
    # itself were both A's buffer on the first path; IREE 3.13 failed at run time ("indirect
    # buffer reference slot 0 is out range")
    def make():
        A, X = np.arange(30.0).reshape(5, 6) / 7 - level / 25, np.arange(6.0) - 2.5
        A[1, 1] = level
        return {"X": X, "A": A}, (X, A[:, 2], A, 0)
    same_answer(one_argument_yielded_twice_by_a_branch, make, jitted=pyjitc.jit(one_argument_yielded_twice_by_a_branch))


def reversed_local_beside_argument_writes(x, y, A, n):
    w1 = np.zeros((6, 5))
    w1.T[...] = np.minimum(np.ones(A.shape), w1.T)
    if w1.sum() > 0.005 or n > 1:
        y[0] = n * 0.5
        w1[:] = w1[::-1]
    else:
        x[...] = y + 3.0
    return w1, x


@pytest.mark.parametrize("n", [0, 2])
def test_a_local_array_reversed_in_one_branch_and_copied_in_the_other_runs(n):
    # statement fuzzer seed 9114 program 738: w1 (a transposed constant) reversed on one path and
    # passed through as a copy on the other, with y = A[1] written on the first path and x on the
    # second; IREE 3.13 returned a null buffer for the copy made as an element loop in a dispatch
    # region of its own ("ref is null; hal.buffer_view.create")
    def make():
        A = np.arange(30.0).reshape(5, 6) / 7
        X = np.arange(6.0) - 2.5
        return {"X": X, "A": A}, (X, A[1], A, n)
    same_answer(reversed_local_beside_argument_writes, make,
                jitted=pyjitc.jit(reversed_local_beside_argument_writes))
