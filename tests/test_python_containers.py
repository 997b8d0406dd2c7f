"""Python lists and dicts inside compiled code are the program's own objects, as in CPython: a
change made through an element (`dp[i][j] = v`, `adj[u].append(v)`, `row = L[i]; row[0] = v`)
reaches the container that holds it, aliases included (`[[0] * 3] * 3`). Each case is compared
with the same function run by CPython."""
import numpy as np
import pytest

import pyjitc
from tests.reference import assert_same, assert_same_call


def nested_item_store():
    dp = [[0, 0], [0, 0]]
    dp[1][0] = 5
    return dp[1][0], dp


def appends_through_elements():
    L = [[1]]
    L[0].append(2)
    d = {"a": [1]}
    d["a"].append(2)
    return L, d["a"]


def store_through_a_name_for_the_row():
    dp = [[0, 0], [0, 0]]
    row = dp[1]
    row[0] = 5
    return dp


def rows_that_are_one_list():
    g = [[0] * 3] * 3
    g[0][0] = 9
    return g


def swap_through_elements():
    m = [[1, 2], [3, 4]]
    m[0][0], m[1][1] = m[1][1], m[0][0]
    return m


def dict_of_dicts():
    g = {"a": {"b": 1}}
    g["a"]["c"] = 2
    g.setdefault("z", {})["q"] = 3
    return g


def _append_to(L, v):
    L.append(v)


def helper_appends_to_an_element(x):
    L = [[1.0]]
    _append_to(L[0], 2.0)
    _append_to(L, [float(x.sum())])
    return L


def tolist_then_item_store(M):
    L = M.tolist()
    L[0][1] = 99.0
    return L


def grid_paths(n):
    g = [[1] * n for _ in range(n)]
    for i in range(1, n):
        for j in range(1, n):
            g[i][j] = g[i - 1][j] + g[i][j - 1]
    return g[n - 1][n - 1]


@pytest.mark.parametrize("fn, args", [
    (nested_item_store, ()), (appends_through_elements, ()), (store_through_a_name_for_the_row, ()),
    (rows_that_are_one_list, ()), (swap_through_elements, ()), (dict_of_dicts, ()),
    (helper_appends_to_an_element, (np.ones(3),)), (tolist_then_item_store, (np.zeros((2, 2)),)),
    (grid_paths, (6,)),
])
def test_a_change_through_a_containers_element_reaches_the_container(fn, args):
    # reading dp[1] gave a copy of the inner list, so dp[1][0] = 5 was lost without an error
    assert_same(pyjitc.jit(fn)(*args), fn(*args))


def sorted_by_a_lambda():
    return sorted([3, 1, 2], key=lambda v: -v), sorted({"b": 2, "a": 3}.items(), key=lambda kv: kv[1], reverse=True)


def list_sort_in_place(x):
    L = [3.0, 1.0, float(x[0])]
    L.sort()
    M = [(2, "b"), (1, "a"), (2, "a")]
    M.sort(key=lambda t: t[0])          # stable: (2, "b") stays before (2, "a")
    R = [x[0], x[1], x[2]]
    R.sort(reverse=True)
    return L, M, R


def max_and_min_with_a_default(x):
    return (max((v for v in x), default=-1), min(x[:0], default=-1.5), max([], default=None),
            max([x[1], x[0]], default=0.0))


@pytest.mark.parametrize("fn, args", [
    (sorted_by_a_lambda, ()), (list_sort_in_place, (np.array([2.0, 5.0, 1.0]),)),
    (max_and_min_with_a_default, (np.arange(4.0),)),
])
def test_sorting_and_picking_with_python_s_keyword_arguments(fn, args):
    # key=lambda raised an internal TypeError (a local function is called by the compiler);
    # max(..., default=d) of run-time numbers an error naming an internal class
    assert_same(pyjitc.jit(fn)(*args), fn(*args))


def sorted_by_run_time_keys(x):
    parts = [x[:2], x[2:]]
    parts.sort(key=lambda p: p.sum())
    return parts[0]


def test_sorting_by_keys_known_only_at_run_time_is_a_located_refusal():
    with pytest.raises(pyjitc.JitError, match="keys known only at run time") as e:
        pyjitc.jit(sorted_by_run_time_keys)(np.arange(5.0))
    assert "test_python_containers.py" in str(e.value)


def edit_distance(a, b):
    n, m = len(a), len(b)
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        dp[i][0] = i
    for j in range(m + 1):
        dp[0][j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            c = 0 if a[i - 1] == b[j - 1] else 1
            dp[i][j] = min(dp[i - 1][j] + 1, dp[i][j - 1] + 1, dp[i - 1][j - 1] + c)
    return dp[n][m], dp[n // 2]


@pytest.mark.parametrize("seed", range(3))
def test_a_dynamic_programme_over_python_lists_is_one_native_loop_and_matches_python(seed):
    # the loops unroll (a list changed at run time); the thousands of scalar ops that makes ran
    # as IREE dispatches of their own (8 by 7 cells: 370 s to compile), now one native loop
    # that runs once (lowering/straight_line.py)
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 3, 8), rng.integers(0, 3, 7)
    f = pyjitc.jit(edit_distance)
    assert_same(f(a, b), edit_distance(a, b))
    text = f.lower(a, b).as_text()
    assert text.count("flow.dispatch.region") == 1 and "scf.while" in text


def longest_increasing_subsequence(a):
    n = len(a)
    d = [1] * n
    for i in range(n):
        for j in range(i):
            if a[j] < a[i] and d[j] + 1 > d[i]:
                d[i] = d[j] + 1
    return max(d), d


def best_record(x):
    best = {"value": -1.0, "at": -1}
    for i in range(x.shape[0]):
        if x[i] > best["value"]:
            best["value"] = x[i]
            best["at"] = i
    return best


def branch_writes_one_item_each(x):
    L = [0.0, 0.0, 0.0]
    if x.sum() > 0:
        L[0] = x[0]
    else:
        L[2] = x[1] * 2.0
    return L


def returns_the_list_from_a_branch(x):
    L = [0, 0]
    if x[0] > 0:
        L[0] = 1
        return L          # the list as this path left it, not as the code after the if leaves it
    L[0] = 2
    L[1] = 5
    return L


def first_above_with_break(x):
    best = [0.0, -1]
    for i in range(x.shape[0]):
        if x[i] > 2.0:
            best[0] = x[i]
            best[1] = i
            break
        best[0] = best[0] + x[i]
    return best


@pytest.mark.parametrize("fn, args", [
    (returns_the_list_from_a_branch, (np.array([1.0, 3.0]),)),
    (returns_the_list_from_a_branch, (np.array([-1.0, 3.0]),)),
    (first_above_with_break, (np.array([1.0, 3.0, 0.5]),)),
    (first_above_with_break, (np.array([-1.0, 0.5, 0.2]),)),
    (longest_increasing_subsequence, (np.random.default_rng(5).random(10),)),
    (best_record, (np.random.default_rng(6).standard_normal(9),)),
    (branch_writes_one_item_each, (np.array([1.0, -3.0]),)),
    (branch_writes_one_item_each, (np.array([-1.0, -3.0]),)),
])
def test_items_of_lists_and_dicts_written_under_a_run_time_if_are_merged_per_item(fn, args):
    # the write was refused ("changing a Python list inside a loop or branch that runs at run
    # time"): each branch is now interpreted from the same contents and the items merged
    assert_same(pyjitc.jit(fn)(*args), fn(*args))


def appends_under_a_run_time_if(x):
    out = []
    if x[0] > 0:
        out.append(1.0)
    return out


def test_a_list_growing_in_a_branch_on_run_time_values_is_a_located_refusal():
    with pytest.raises(pyjitc.JitError, match="changing a Python list") as e:
        pyjitc.jit(appends_under_a_run_time_if)(np.ones(2))
    assert "test_python_containers.py" in str(e.value)


def _power_mod_7(b, e):
    r = 1
    while e > 0:
        r = r * b % 7
        e >>= 1
    return r


def powers_by_a_helper_loop(bs, es):
    # a comprehension over pairs: each item runs the helper's while loop (unrolled per item)
    return np.array([_power_mod_7(b, e) for b, e in zip(bs, es)])


def test_unrolled_items_running_loops_are_one_native_loop_with_their_values_packed():
    # 40 loops and 40 values for later ops: one dispatch (each value a buffer of its own would
    # pass IREE's limit of 64 buffers per dispatch)
    rng = np.random.default_rng(7)
    bs, es = rng.integers(1, 9, 40), rng.integers(0, 50, 40)
    f = pyjitc.jit(powers_by_a_helper_loop)
    assert_same(f(bs, es), powers_by_a_helper_loop(bs, es))
    assert f.lower(bs, es).as_text().count("flow.dispatch.region") == 1


MODULE_LIST = [1, 2, 3]
MODULE_DICT = {"a": [1, 2]}


def writes_into_a_module_level_list(x):
    MODULE_LIST[0] = 10
    return x + MODULE_LIST[0]


def appends_to_an_item_of_a_module_level_dict(x):
    MODULE_DICT["a"].append(5)
    return x


def reads_module_level_containers(x):
    return x + MODULE_LIST[1] + MODULE_DICT["a"][1]


@pytest.mark.parametrize("fn", [writes_into_a_module_level_list, appends_to_an_item_of_a_module_level_dict])
def test_a_change_to_a_module_level_container_is_a_located_refusal(fn):
    # Python changes the module's list on every call; compiled code would change it once, while
    # compiling (and an item read through a copy lost the write)
    with pytest.raises(pyjitc.JitError, match="Python would change on every call") as e:
        pyjitc.jit(fn)(np.ones(2))
    assert "test_python_containers.py" in str(e.value)
    assert MODULE_LIST == [1, 2, 3] and MODULE_DICT == {"a": [1, 2]}


def test_module_level_containers_are_read_as_they_are():
    assert_same(pyjitc.jit(reads_module_level_containers)(np.ones(2)), reads_module_level_containers(np.ones(2)))


def membership_in_dicts_and_sets(x):
    memo = {1: "a", 3: "b", "z": 0}
    k = int(x[0])
    return (k in memo), (x[1] in {2.0, 5.0}), (k in {"p": 1}), (k not in memo)


@pytest.mark.parametrize("x", [np.array([3.0, 5.0]), np.array([2.0, 1.0])])
def test_a_run_time_number_in_a_dict_or_set_of_compile_time_keys(x):
    # "`in` on arrays is not supported" (the dict's keys are known; the number is compared with each)
    assert_same(pyjitc.jit(membership_in_dicts_and_sets)(x), membership_in_dicts_and_sets(x))


def peak_positions(x):
    out = []
    for i in range(1, len(x) - 1):
        if x[i] > x[i - 1] and x[i] > x[i + 1]:
            out.append(i)
    return np.array(out), len(out)


def doubled_positives(x):
    vals = []
    for v in x:
        if v > 0:
            vals.append(v * 2.0)
    a = np.asarray(vals)
    return a, len(vals), a.sum() if len(vals) else 0.0


def rows_with_positive_sums(X):
    keep = []
    for r in X:
        if r.sum() > 0:
            keep.append(r)
    return np.array(keep, dtype=np.float64)


@pytest.mark.parametrize("fn, args", [
    (peak_positions, (np.random.default_rng(8).standard_normal(40),)),
    (doubled_positives, (np.random.default_rng(9).standard_normal(30),)),
    (doubled_positives, (-np.ones(30),)),                  # nothing appended: float64, and sum's 0.0 a float
    (rows_with_positive_sums, (np.random.default_rng(10).standard_normal((20, 3)),)),
])
def test_items_appended_under_a_run_time_if_become_numpys_array(fn, args):
    # "out.append(): changing a Python list inside a loop or branch that runs at run time": the
    # items are rows the loop writes and a flag per pass, a selection np.array(out) copies
    assert_same(pyjitc.jit(fn)(*args), fn(*args))


def history_until_converged(x, tol):
    hist = []
    for _ in range(60):
        x = x * 0.5
        hist.append(x.sum())
        if x.sum() < tol:
            break
    return x, np.array(hist), len(hist)


def arrival_times_until(u, tmax):
    t = 0.0
    times = []
    for i in range(u.shape[0]):
        t += -np.log(u[i])
        if t > tmax:
            break
        times.append(t)
    return np.array(times), len(times)


@pytest.mark.parametrize("fn, args", [
    (history_until_converged, (np.ones(3), 0.1)), (history_until_converged, (np.ones(3), 1e-30)),
    (history_until_converged, (np.ones(3), 10.0)),
    (arrival_times_until, (np.random.default_rng(12).random(80), 6.0)),
    (arrival_times_until, (np.random.default_rng(12).random(80), -1.0)),   # none appended
])
def test_items_appended_before_a_break_become_numpys_array(fn, args):
    # a convergence loop recording its history, a simulation recording event times until a
    # horizon: "hist.append(): changing a Python list inside a loop or branch that runs at run
    # time" (probes of longer programs and of stochastic simulations); the passes that ran before
    # the break append, flagged as under a run-time if
    assert_same(pyjitc.jit(fn)(*args), fn(*args))


def halvings_until(x0, tol):
    x = x0[0]
    hist = []
    while abs(x) > tol:
        x = x * 0.5
        hist.append(x)
    return np.array(hist), hist, len(hist)


def collatz_steps(n):
    seq = []
    while n != 1:
        seq.append(n)
        n = n // 2 if n % 2 == 0 else 3 * n + 1
    return seq, np.array(seq)


def fixed_point_history(x, tol):
    deltas, iterates = [], []
    while True:
        xn = 0.5 * x + 0.25
        d = np.abs(xn - x).max()
        deltas.append(d)
        iterates.append(xn)
        x = xn
        if d < tol:
            break
    return x, deltas, np.array(iterates)


def event_log(u, tmax):
    t, i, times = 0.0, 0, []
    while t < tmax and i < len(u):
        t += u[i]
        times.append(t)
        i += 1
    return np.array(times), times


def backtracked(last, n):
    j, cps = n, []
    while j > 0:
        cps.append(j)
        j = last[j]
    return np.array(cps), len(cps)


@pytest.mark.parametrize("fn, args", [
    (halvings_until, (np.array([10.0]), 0.01)), (halvings_until, (np.array([10.0]), 100.0)),   # none appended
    (collatz_steps, (27,)), (collatz_steps, (2,)),
    (fixed_point_history, (np.array([3.0, -1.0, 0.5]), 1e-6)),
    (event_log, (np.random.default_rng(14).random(50), 10.0)), (event_log, (np.zeros(0), 1.0)),
    (backtracked, (np.array([0, 0, 1, 1, 2, 3]), 5)),
])
def test_a_list_appended_to_in_a_run_time_while_loop_is_the_list_numpy_builds(fn, args):
    # residual histories and event logs of while loops: "hist.append(): changing a Python list
    # inside a loop or branch that runs at run time" (probes AF, AG, AI). The list has room for
    # some rows; returned, it is a list of its items (Python numbers where Python appended them)
    got, want = pyjitc.jit(fn)(*args), fn(*args)
    assert_same(got, want)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        if isinstance(w, list):
            assert type(g) is list and [type(v) for v in g] == [type(v) for v in w]


def conjugate_gradient_history(A, b, tol):
    x = np.zeros_like(b)
    r = b - A @ x
    p = r.copy()
    rs = r @ r
    res = [np.sqrt(rs)]          # the history starts with the first residual
    while np.sqrt(rs) > tol:
        Ap = A @ p
        alpha = rs / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rsn = r @ r
        p = r + (rsn / rs) * p
        rs = rsn
        res.append(np.sqrt(rs))
    return x, res


def halvings_from(x):
    h = [x]
    for _ in range(10):
        x = x * 0.5
        h.append(x)
        if x < 0.01:
            break
    return h, np.array(h)


def test_a_list_holding_items_before_the_loop_that_appends_under_a_condition_is_numpys():
    # `res = [np.sqrt(rs)]` then appends in a while loop (CG's residual history), `h = [x]` then
    # appends before a break: "changing a Python list inside a loop" (probe AK)
    M = np.random.default_rng(15).random((6, 6))
    A = M @ M.T + 6 * np.eye(6)
    assert_same(pyjitc.jit(conjugate_gradient_history)(A, np.ones(6), 1e-6),
                conjugate_gradient_history(A, np.ones(6), 1e-6), accumulate=True)
    for x in (np.float64(3.0), np.float64(0.001)):
        assert_same(pyjitc.jit(halvings_from)(x), halvings_from(x))


def counted_up(n, x):
    out, i = [], 0
    while i < n:
        out.append(i * x[0])
        i += 1
    return np.array(out), len(out)


def test_a_list_that_outgrows_its_room_in_a_while_loop_is_compiled_again_with_more():
    f = pyjitc.jit(counted_up)
    assert_same(f(10, np.array([1.5])), counted_up(10, np.array([1.5])))
    assert_same(f(5000, np.array([1.5])), counted_up(5000, np.array([1.5])))   # past 1024 rows: compiled again
    assert_same(f(3000, np.array([1.5])), counted_up(3000, np.array([1.5])))   # the larger room stays
    assert f.cache_info().misses == 2
    compiled = pyjitc.jit(counted_up).lower(10, np.array([1.5])).compile()   # (no second compile there)
    with pytest.raises(pyjitc.RunError, match="outgrew the room compiled for it"):
        compiled(5000, np.array([1.5]))


def energy_history(v, noise):
    hist = []
    for t in range(noise.shape[0]):
        v = v + noise[t]
        hist.append(0.5 * np.mean(v * v))
    return v, hist


def visits_from(last, n):
    j, seen = n, []
    for _ in range(20):
        seen.append(j)
        j = last[j % 6]
    return seen


def test_a_long_appended_list_returned_is_one_result_with_numpys_item_types():
    # 500 items took 50 s to compile, one result each (probe AH); the first item of `seen` is the
    # Python int n, the others NumPy's, as in NumPy
    noise = np.random.default_rng(6).random((500, 3))
    f = pyjitc.jit(energy_history)
    got, want = f(np.zeros(3), noise), energy_history(np.zeros(3), noise)
    assert_same(got, want)
    assert type(got[1]) is list and all(type(v) is np.float64 for v in got[1])
    assert f.lower(np.zeros(3), noise).as_text().count("stablehlo.slice") < 10
    got = pyjitc.jit(visits_from)(np.array([0, 0, 1, 1, 2, 3]), 5)
    want = visits_from(np.array([0, 0, 1, 1, 2, 3]), 5)
    assert got == want and [type(v) for v in got] == [type(v) for v in want]


def run_length(row):
    vals, lens = [], []
    cur, k0 = row[0], 0
    for k in range(1, row.shape[0]):
        if row[k] != cur:
            vals.append(cur)
            lens.append(k - k0)
            cur, k0 = row[k], k
    vals.append(cur)
    lens.append(row.shape[0] - k0)
    return np.array(vals), np.array(lens), vals


@pytest.mark.parametrize("row", [np.array([1, 1, 2, 2, 2, 3, 1, 1]), np.array([4, 4, 4]), np.arange(5)])
def test_an_item_appended_after_the_loop_that_appended_under_a_run_time_if_is_numpys(row):
    # the last run of a run-length encoding: "this list's length depends on the data" (probe AH)
    assert_same(pyjitc.jit(run_length)(row), run_length(row))


def backtracked_as_list(last, n):
    j, cps = n, []
    while j > 0:
        cps.append(j)
        j = last[j]
    return cps


def test_a_returned_list_whose_items_are_python_and_numpy_numbers_is_a_located_error():
    # j is the Python int n on the first pass, np.int64 after: np.array(cps) is the same either
    # way, but the list's first item would have to stay a Python int
    with pytest.raises(pyjitc.NotSupportedError, match="first item is a Python number") as e:
        pyjitc.jit(backtracked_as_list)(np.array([0, 0, 1, 1, 2, 3]), 5)
    assert "test_python_containers.py" in str(e.value)


def appended_positions_returned_as_a_list(x):
    out = []
    for i in range(len(x)):
        if x[i] > 0:
            out.append(i)
    return out


def test_such_a_list_returned_is_a_list_and_empty_where_numpy_would_make_float64_is_a_located_error():
    # returning the list was refused ("list's length depends on the data"): it is a list of the items
    x = np.array([1.0, -2, 3, 0, 5])
    got = pyjitc.jit(appended_positions_returned_as_a_list)(x)
    assert type(got) is list and got == appended_positions_returned_as_a_list(x)
    assert all(type(v) is int for v in got)
    f = pyjitc.jit(peak_positions)
    with pytest.raises(pyjitc.RunError, match="empty here, is float64"):
        f(np.arange(40.0))                 # no peak: NumPy's np.array([]) is float64, pyjitc's int64


def appended_through_another_name(x):
    out = []
    res = out
    for i in range(len(x)):
        if x[i] > 0:
            out.append(i)
    return np.array(res, dtype=np.int64)


def appended_to_a_list_in_a_list(x):
    out = []
    box = [out]
    for i in range(len(x)):
        if x[i] > 0:
            out.append(i)
    return np.array(box[0], dtype=np.int64)


@pytest.mark.parametrize("fn", [appended_through_another_name, appended_to_a_list_in_a_list])
def test_a_list_appended_to_under_a_run_time_if_and_held_elsewhere_is_a_located_error(fn):
    # the name was rebound to the appended items, so `res` and `box[0]` kept an empty list
    # (checked: [] where Python gives [0 2 3 5 6 8])
    with pytest.raises(pyjitc.JitError, match="changing a Python list") as e:
        pyjitc.jit(fn)(np.array([1.0, -1, 2, 3, -4, 5, 6, -1, 2]))
    assert "test_python_containers.py" in str(e.value)


def appended_in_nested_loops():
    out = []
    for i in range(2):
        for k in range(5):
            out.append(k * 1.5 + i)
    return out


def elements_appended_in_nested_loops(X):
    out = []
    for i in range(X.shape[0]):
        for k in range(X.shape[1]):
            out.append(X[i, k])
    return np.array(out), len(out)


def positives_appended_in_nested_loops(X):
    out = []
    for i in range(X.shape[0]):
        for k in range(X.shape[1]):
            if X[i, k] > 0:
                out.append(X[i, k])
    return np.array(out, dtype=np.float64)


@pytest.mark.parametrize("fn, args", [
    (appended_in_nested_loops, ()),
    (elements_appended_in_nested_loops, (np.arange(18.0).reshape(3, 6),)),
])
def test_a_list_appended_to_in_a_loop_nested_in_a_run_time_loop_keeps_every_item(fn, args):
    # the inner loop's rows were added to the list inside the outer run-time loop: the list then
    # held values made inside that loop (KeyError while lowering, probe R); then the outer loop was
    # unrolled; now both loops write rows of one array (appends._nested_append)
    assert_same(pyjitc.jit(fn)(*args), fn(*args))


def pairs_within(P, r):
    ii, jj = [], []
    for i in range(P.shape[0]):
        for j in range(P.shape[0]):
            if j > i and np.sum((P[i] - P[j]) ** 2) < r * r:
                ii.append(i)
                jj.append(j)
    return np.array(ii, dtype=np.int64), np.array(jj, dtype=np.int64), len(ii), ii


@pytest.mark.parametrize("fn, make", [
    (positives_appended_in_nested_loops, lambda rng: (rng.standard_normal((3, 6)),)),
    (positives_appended_in_nested_loops, lambda rng: (-np.ones((3, 6)),)),      # none: float64 as asked
    (pairs_within, lambda rng: (rng.random((12, 2)), 0.3)),
])
def test_appending_under_a_run_time_if_in_nested_loops_is_numpys_and_one_run_time_loop(fn, make):
    # each inner loop's items were a selection of run-time length that the next pass of the
    # outer loop could not add to: "this list's length depends on the data" (dense to COO, pairs
    # within a cutoff; probes AI, AJ). The passes of both loops write one array at i * m + j
    args = make(np.random.default_rng(3))
    assert_same(pyjitc.jit(fn)(*args), fn(*args))
    small = pyjitc.jit(positives_appended_in_nested_loops).lower(np.zeros((3, 6))).as_text()
    large = pyjitc.jit(positives_appended_in_nested_loops).lower(np.zeros((30, 6))).as_text()
    assert len(large) < 1.2 * len(small)


BUTCHER = [[], [1 / 4], [3 / 32, 9 / 32], [1932 / 2197, -7200 / 2197, 7296 / 2197],
           [439 / 216, -8, 3680 / 513, -845 / 4104], [-8 / 27, 2, -3544 / 2565, 1859 / 4104, -11 / 40]]


def rkf45_stages(y, h):
    k = np.zeros((6, len(y)))
    for i in range(6):
        yi = y.copy()
        for j in range(i):
            yi = yi + h * BUTCHER[i][j] * k[j]
        k[i] = -yi
    return k


def test_rows_of_different_lengths_indexed_by_a_loop_unroll_that_loop():
    # BUTCHER[i][j] in loops that stayed loops was refused ("a list indexed by a value known only
    # at run time must hold items of one type and shape"; an RKF45 tableau, a probe of ODE code)
    y = np.linspace(0.0, 1.0, 4)
    assert_same(pyjitc.jit(rkf45_stages)(y, 0.1), rkf45_stages(y, 0.1))


def rk_stages_in_a_list(y0, h, n):
    A = [[], [0.5], [0.0, 0.5], [0.0, 0.0, 1.0]]
    b = [1 / 6, 1 / 3, 1 / 3, 1 / 6]
    c = [0.0, 0.5, 0.5, 1.0]
    y, t = y0.copy(), 0.0
    for _ in range(n):
        ks = []
        for i in range(4):
            yi = y.copy()
            for j in range(i):
                yi = yi + h * A[i][j] * ks[j]
            ks.append(-yi * np.cos(t + c[i] * h))
        for i in range(4):
            y = y + h * b[i] * ks[i]
        t += h
    return y


def pass_local_dict_and_list(y, n):
    last = [y]
    for _ in range(n):
        st = {}
        st["a"] = y * 2
        st["b"] = st["a"] - 1
        last = []
        last.append(st["b"] * 0.5)
        y = last[0]
    return y, last


def pass_local_list_in_a_branch(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            tmp = [x[i]]
            tmp.append(x[i] * 2)
            s += tmp[0] + tmp[1]
        else:
            s -= 1
    return s


@pytest.mark.parametrize("fn, args, shorter", [
    (rk_stages_in_a_list, (np.ones(4), 0.01, 60), (np.ones(4), 0.01, 30)),
    (pass_local_dict_and_list, (np.ones(3), 40), (np.ones(3), 20)),
    (pass_local_dict_and_list, (np.ones(3), 0), None),
    (pass_local_list_in_a_branch, (np.linspace(0, 1, 60),), (np.linspace(0, 1, 30),)),
], ids=["rk-stages", "dict-and-list", "dict-and-list-no-pass", "list-in-a-branch"])
def test_a_list_or_dict_made_and_changed_in_one_pass_keeps_one_run_time_loop(fn, args, shorter):
    """`ks = []; ks.append(k1)` in each RK step unrolled the whole time loop (n = 1000: 244 s to
    compile; probe AE): a container made in the pass is the pass's own, not carried state."""
    assert_same(pyjitc.jit(fn)(*args), fn(*args))
    if shorter is not None:   # the program does not grow with the number of steps
        assert len(pyjitc.jit(fn).lower(*args).as_text()) == len(pyjitc.jit(fn).lower(*shorter).as_text())


def swaps_in_a_long_list(x):
    p = list(range(36))
    for k in range(3):
        j = k + int(np.argmax(x[k:]))
        p[k], p[j] = p[j], p[k]
    return np.array(p), p[int(np.argmin(x))]


def test_items_of_a_long_list_read_and_written_at_run_time_positions_run():
    """A 36-item permutation list swapped at run-time positions failed when called: IREE fused a
    choice among (or an update of) every item into one dispatch with a buffer per item, "binding
    count 37 > 32" (a textbook LU keeping its permutation in a list; probe AG)."""
    x = np.random.default_rng(2).random(36)
    assert_same(pyjitc.jit(swaps_in_a_long_list)(x), swaps_in_a_long_list(x))


def appended_twice_per_pass(A):
    out = []
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            if A[i, j] > 0:
                for k in range(2):       # (unrolled inside the pass: two appends per pass)
                    out.append(A[i, j] + k)
    return np.array(out)


def test_appends_of_a_loop_unrolled_inside_nested_loops_are_refused_not_merged():
    # one row per pass of the innermost run-time loop: two appends there would write one row
    with pytest.raises(pyjitc.JitError, match="changing a Python list"):
        pyjitc.jit(appended_twice_per_pass)(np.random.default_rng(0).standard_normal((5, 6)))


def sets_an_argument_dicts_item(d, x):
    d["a"] = x * 2
    return x


def appends_to_an_argument_list(items, x):
    items.append(x)
    return x


def sets_an_argument_lists_item_in_a_loop(items, x):
    for k in range(x.shape[0]):
        items[0] = items[0] + x[k]
    return items[0]


def pops_a_keyword_argument(x, **options):
    scale = options.pop("scale", 1.0)
    return x * scale, len(options)


@pytest.mark.parametrize("fn, make", [
    (sets_an_argument_dicts_item, lambda: {"a": 1.0}),
    (appends_to_an_argument_list, lambda: [1.0]),
    (sets_an_argument_lists_item_in_a_loop, lambda: [1.0]),
])
def test_changing_a_list_or_dict_passed_as_an_argument_is_a_located_error_not_lost(fn, make):
    # Python changes the caller's list or dict; the compiled function returned its values and left
    # the caller's container as it was, silently (found this round: `d["a"] = x * 2`)
    x = np.arange(3.0)
    container = make()
    with pytest.raises(pyjitc.JitError, match="passed as the argument") as e:
        pyjitc.jit(fn)(container, x)
    assert "test_python_containers.py:" in str(e.value)
    assert container == make()
    options = {"scale": 2.0, "other": 1}    # a **kwargs dict is the call's own: changing it is Python's too
    assert_same(pyjitc.jit(pops_a_keyword_argument)(x, **options), pops_a_keyword_argument(x, **dict(options)))
    assert options == {"scale": 2.0, "other": 1}


def empty_cells(b):
    out = []
    for i in range(3):
        for j in range(3):
            if b[i, j] == 0:
                out.append((i, j))
    return out


def local_peaks(a):
    pts = []
    for i in range(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            if a[i, j] > a[i - 1, j] and a[i, j] > a[i + 1, j]:
                pts.append((i, j))
    return np.array(pts), len(pts), pts


def value_pairs_above(x):
    out = []
    for k in range(x.shape[0]):
        if x[k] > 0.5:
            out.append((x[k], x[k] * 2))
    return out


def steps_until(x):
    out = []
    k = 0
    while k < x.shape[0] and x[k] < 0.9:
        out.append((k, k + 1))
        k += 1
    return out


def squares_by_index(n):
    out = []
    for i in range(n):
        out.append((i, i * i))
    return out


@pytest.mark.parametrize("fn, args", [
    (empty_cells, (np.array([[1, 0, -1], [0, 1, 0], [1, 1, 0]]),)), (empty_cells, (np.ones((3, 3)),)),
    (local_peaks, (np.random.default_rng(31).random((8, 9)),)),
    (value_pairs_above, (np.random.default_rng(32).random(12),)),
    (steps_until, (np.random.default_rng(33).random(30),)),
    (squares_by_index, (5,)),
])
def test_tuples_of_numbers_appended_in_run_time_loops_are_cpythons_list_of_tuples(fn, args):
    # `out.append((i, j))` under a run-time if (tic-tac-toe's free cells, peak positions) was
    # "changing a Python list inside a loop or branch that runs at run time" (probe AM); a row of
    # the tuple's numbers now, each item a tuple again (Python numbers where Python appended them)
    got, want = pyjitc.jit(fn)(*args), fn(*args)
    assert_same(got, want)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        if isinstance(w, list):
            assert type(g) is list and all(type(a) is tuple for a in g)
            assert [tuple(map(type, a)) for a in g] == [tuple(map(type, a)) for a in w]


def epidemic_history(S, I, beta, gamma, days):
    hist = []
    for _ in range(days):
        new_inf, new_rec = beta * S * I, gamma * I
        S, I = S - new_inf, I + new_inf - new_rec
        hist.append([S, I])
    return hist, np.array(hist)


def marked_pairs(x):
    out = []
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            out.append([i, 2 * i])
    return out, np.array(out)


@pytest.mark.parametrize("fn, args", [
    (epidemic_history, (0.99, 0.01, 0.3, 0.1, 400)), (epidemic_history, (0.99, 0.01, 0.3, 0.1, 3)),
    (marked_pairs, (np.random.default_rng(34).random(25),)),
])
def test_lists_of_numbers_appended_in_run_time_loops_are_cpythons_lists_and_numpys_arrays(fn, args):
    # `hist.append([S, I])` unrolled the loop: 365 days compiled for minutes, then failed in IREE
    # ("binding count 47 > 32", np.array of the 730 numbers; a probe's SIR model)
    got, want = pyjitc.jit(fn)(*args), fn(*args)
    assert_same(got, want)
    assert type(got[0]) is list and all(type(a) is list for a in got[0])
    assert [list(map(type, a)) for a in got[0]] == [list(map(type, a)) for a in want[0]]


def digits_in_order(n):
    out = []
    while n > 0:
        out.append(n % 10)
        n //= 10
    return out[::-1]


def positives_after_the_first(x):
    out = []
    for v in x:
        if v > 0:
            out.append(v)
    return out[1:], out[::2]


@pytest.mark.parametrize("fn, args", [
    (digits_in_order, (1234,)), (digits_in_order, (7,)),
    (positives_after_the_first, (np.array([1, -2, 3, 4, 5]),)),
])
def test_a_slice_of_a_list_a_run_time_loop_appended_to_is_a_list(fn, args):
    # `out[::-1]` of digits appended in a while loop came back as an ndarray (probe AO)
    got, want = pyjitc.jit(fn)(*args), fn(*args)
    assert_same(got, want)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert type(g) is list and [type(v) for v in g] == [type(v) for v in w]


def votes_in_a_dict(labels):
    d = {}
    for i in range(labels.shape[0]):
        d[labels[i]] = d.get(labels[i], 0) + 1
    return d


def test_a_dict_keyed_by_run_time_values_is_refused_with_the_array_to_use_instead():
    with pytest.raises(pyjitc.NotSupportedError, match=r"d\.get\(\) of values known only at run time; use an array "
                                                       r"indexed by the value") as e:
        pyjitc.jit(votes_in_a_dict)(np.array([1, 2, 1]))
    assert f"{__file__}:" in str(e.value)


def kept_below(u, n):
    ts = []
    for k in range(n):
        if u[k] < 0.5:
            ts.append(k)
    return np.array(ts, dtype=np.int64)


def doubled_first(u, n):
    ts = []
    for k in range(n):
        ts.append(u[k] * 2)
    return np.array(ts)


def arrival_times(u, tmax):
    t = np.float64(0.0)
    ts = [np.float64(0.0)]       # a NumPy number before the loop, NumPy numbers appended
    k = 0
    while t < tmax and k < len(u):
        t = t - np.log(u[k])
        ts.append(t)
        k += 1
    return np.array(ts)


def marked_positions(u):
    ts = []
    for k in range(len(u)):
        if u[k] > 0.5:
            ts.append(np.int64(k))
    return np.array(ts)


@pytest.fixture(scope="module")
def kept():
    return pyjitc.jit(kept_below)


@pytest.mark.parametrize("n", [0, 1, 50, 150, 200])
def test_appends_in_a_for_loop_of_a_run_time_count_are_numpys_and_compile_once(kept, n):
    # `for k in range(n)` with n an argument: "changing a Python list inside a loop" under the
    # if (probe AU); now the rows of a buffer grown by compiling again, as a while loop's
    u = np.random.default_rng(8).random(200)
    assert_same_call(kept, kept_below, u, n)
    assert_same_call(pyjitc.jit(doubled_first), doubled_first, u, n)
    assert kept.cache_info().misses <= 2


def gillespie_sir(S, I, R, beta, gamma, u1, u2, tmax):
    t = 0.0
    N = S + I + R
    ts = [0.0]                   # a Python float before float64 values
    Is = [I]
    k = 0
    while t < tmax and I > 0 and k < len(u1):
        a1 = beta * S * I / N
        a0 = a1 + gamma * I
        t += -np.log(u1[k]) / a0
        if u2[k] * a0 < a1:
            S -= 1
            I += 1
        else:
            I -= 1
            R += 1
        ts.append(t)
        Is.append(I)
        k += 1
    return np.array(ts), np.array(Is), S, R


@pytest.mark.parametrize("fn, args", [(arrival_times, (5.0,)), (arrival_times, (1e9,)), (marked_positions, ())],
                         ids=["numpy-number-first-item", "runs-to-the-end", "numpy-int-of-the-counter"])
def test_numpy_numbers_appended_or_held_before_the_loop_are_numpys(fn, args):
    u = np.random.default_rng(9).random(60)
    assert_same_call(pyjitc.jit(fn), fn, u, *args)


def test_a_python_number_before_numpy_numbers_appended_in_a_while_loop_is_numpys_array():
    # `ts = [0.0]`, then `t += -np.log(u) / a0; ts.append(t)` (a Gillespie simulation): "changing
    # a Python list inside a loop" (probe AU); np.array(ts) is float64 either way
    rng = np.random.default_rng(3)
    u1, u2 = rng.random(3000), rng.random(3000)
    assert_same_call(pyjitc.jit(gillespie_sir), gillespie_sir, 990, 10, 0, 0.3, 0.1, u1, u2, 50.0)


def aligned_by_traceback(a, b, match, mismatch, gap):
    n, m = len(a), len(b)
    H = np.zeros((n + 1, m + 1), dtype=np.int64)
    H[:, 0] = gap * np.arange(n + 1)
    H[0, :] = gap * np.arange(m + 1)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            s = match if a[i - 1] == b[j - 1] else mismatch
            H[i, j] = max(H[i - 1, j - 1] + s, H[i - 1, j] + gap, H[i, j - 1] + gap)
    i, j = n, m
    ra, rb = [], []
    while i > 0 and j > 0:
        s = match if a[i - 1] == b[j - 1] else mismatch
        if H[i, j] == H[i - 1, j - 1] + s:
            ra.append(a[i - 1])
            rb.append(b[j - 1])
            i -= 1
            j -= 1
        elif H[i, j] == H[i - 1, j] + gap:
            ra.append(a[i - 1])
            rb.append(-1)          # a Python int beside NumPy ints: np.array(rb) is the same
            i -= 1
        else:
            ra.append(-1)
            rb.append(b[j - 1])
            j -= 1
    while i > 0:                   # appends to what the loop above appended
        ra.append(a[i - 1])
        rb.append(-1)
        i -= 1
    while j > 0:
        ra.append(-1)
        rb.append(b[j - 1])
        j -= 1
    return np.array(ra[::-1]), np.array(rb[::-1]), H[n, m]


def signed_by_branch(x):
    out = []
    for v in x:
        if v > 0.5:
            if v > 0.9:
                out.append(v * 2)
        elif v < 0.1:
            out.append(-v)
        else:
            out.append(v)
        out.append(100.0 + v)       # two appends in one pass, in the order they run
    return np.array(out), out


@pytest.mark.parametrize("n, m", [(12, 10), (1, 6), (20, 20)])
def test_several_appends_to_one_list_in_elif_branches_and_later_loops_are_numpys(n, m):
    # `if ...: out.append(a) elif ...: out.append(b)` was "changing a Python list inside a loop"
    # (probe AU: a Needleman-Wunsch traceback); each pass has a row per append statement
    rng = np.random.default_rng(n + m)
    a, b = rng.integers(0, 4, n).astype(np.int64), rng.integers(0, 4, m).astype(np.int64)
    assert_same_call(pyjitc.jit(aligned_by_traceback), aligned_by_traceback, a, b, 2, -1, -2)
    x = rng.random(40)
    assert_same_call(pyjitc.jit(signed_by_branch), signed_by_branch, x)


def peaks_as_pairs(x):
    pts = []
    for i in range(1, x.shape[0] - 1):
        if x[i] > x[i - 1] and x[i] > x[i + 1]:
            pts.append((i, i + 1))
    return np.array(pts, dtype=np.int64).reshape(-1, 2)   # 2-D also where there is none


def halvings_until_small(x0):
    hist = [x0]                 # a float argument, then float64 values
    x = x0
    while True:
        x = np.float64(x * 0.5)
        hist.append(x)
        if x < 0.1:
            break
    return len(hist), np.array(hist)


@pytest.mark.parametrize("x", [np.sin(np.arange(40) * 0.7), np.zeros(12)], ids=["peaks", "none"])
def test_appended_pairs_reshaped_to_rows_are_numpys(x):
    # `np.array(pts).reshape(-1, 2)` of pairs appended under an if: "needs it at compile time"
    assert_same_call(pyjitc.jit(peaks_as_pairs), peaks_as_pairs, x)


def test_a_float_argument_before_float64_values_appended_in_while_true_is_numpys():
    # "this while loop must run at compile time ... hist.append()" (probe AW)
    assert_same_call(pyjitc.jit(halvings_until_small), halvings_until_small, 1.0)
