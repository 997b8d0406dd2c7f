"""A Python list used as a stack or a queue by a run-time loop (`while stack: i, j = stack.pop();
... stack.append((i + 1, j))`, `q.pop(0)`) stays one run-time loop over arrays the loop carries
(frontend/stacks.py), and every answer is CPython's: the same values, types and errors. Before,
`stack.append()` there was refused ("changing a Python list inside a loop or branch that runs at
run time"), and a recursion with run-time depth told the user to write it as such a loop."""
import collections
from collections import deque

import numpy as np
import pytest

import pyjitc
from tests.reference import assert_same, assert_same_call


def flood_fill(img, i0, j0):
    out = np.zeros(img.shape, dtype=np.int64)
    target = img[i0, j0]
    stack = [(i0, j0)]
    n, m = img.shape
    while stack:
        i, j = stack.pop()
        if i < 0 or i >= n or j < 0 or j >= m:
            continue
        if out[i, j] or img[i, j] != target:
            continue
        out[i, j] = 1
        stack.append((i + 1, j))
        stack.append((i - 1, j))
        stack.append((i, j + 1))
        stack.append((i, j - 1))
    return out


def breadth_first_distances(adj, s):
    n = adj.shape[0]
    dist = np.full(n, -1)
    dist[s] = 0
    q = [s]
    while len(q) > 0:
        u = q.pop(0)
        for v in range(n):
            if adj[u, v] and dist[v] < 0:
                dist[v] = dist[u] + 1
                q.append(v)
    return dist


def partition(a, lo, hi):
    p = a[hi]
    i = lo - 1
    for j in range(lo, hi):
        if a[j] <= p:
            i += 1
            a[i], a[j] = a[j], a[i]
    a[i + 1], a[hi] = a[hi], a[i + 1]
    return i + 1


def quicksort_with_a_stack(a):
    b = a.copy()
    stack = [(0, len(b) - 1)]
    while stack:
        lo, hi = stack.pop()
        if lo >= hi:
            continue
        p = partition(b, lo, hi)
        stack.append((lo, p - 1))
        stack.append((p + 1, hi))
    return b


def array_items(x):
    st = [x[0] + 0]    # (an array of its own: a view of x, as x[0] is, stays a Python list's item)
    acc = np.zeros_like(x[0])
    i = 1
    while st:
        v = st.pop()
        acc += v
        if i < x.shape[0]:
            st.append(x[i] * 2)
            i += 1
    return acc


def top_and_length(x):
    st = [0.0]
    total = 0.0
    for k in range(x.shape[0]):
        if x[k] > st[-1]:
            st.append(float(x[k]))
        elif len(st) > 1:
            total += st.pop()
    return total, len(st), st[0]


def leaves_on_empty(x):
    st = [1]
    c = 0
    while True:
        if not st:
            break
        k = st.pop()
        c += k
        if k < x.shape[0] and x[k] > 0:
            st.append(k + 1)
    return c


_rng = np.random.default_rng(3)
_img = (_rng.random((12, 15)) > 0.35).astype(np.int64)
_adj = _rng.random((9, 9)) > 0.7


@pytest.mark.parametrize("fn, args", [
    (flood_fill, (_img, 3, 4)), (flood_fill, (_img, 0, 0)),
    (breadth_first_distances, (_adj, 0)), (breadth_first_distances, (_adj, 4)),
    (quicksort_with_a_stack, (_rng.random(17),)), (quicksort_with_a_stack, (np.array([2.0]),)),
    (array_items, (_rng.random((5, 3)),)), (array_items, (_rng.random((1, 3)).astype(np.float32),)),
    (top_and_length, (_rng.random(20),)),
    (leaves_on_empty, (np.array([1, 1, 0, 1]),)), (leaves_on_empty, (np.array([1, 1, 1, 1]),)),
])
def test_a_list_used_as_a_stack_or_queue_by_a_run_time_loop_is_cpythons_and_one_loop(fn, args):
    jitted = pyjitc.jit(fn)
    assert_same(jitted(*args), fn(*args))
    assert " while(" in jitted.lower(*args).as_text("typed")   # one run-time loop, not unrolled


def pushes_two_pops_one(n):
    st = [0]
    k = 0
    s = 0
    while k < n:
        st.append(k)
        st.append(k + 1)
        s += st.pop()
        k += 1
    return s, len(st)


def test_a_stack_that_outgrows_its_room_compiles_again_with_more():
    # 5000 items left on the stack: past the first room (1024), the call stops and @jit compiles
    # again with more room
    jitted = pyjitc.jit(pushes_two_pops_one)
    assert_same(jitted(10), pushes_two_pops_one(10))
    assert_same(jitted(5000), pushes_two_pops_one(5000))


def pops_one_per_element(x):
    st = [1]
    t = 0
    for k in range(x.shape[0]):
        t += st.pop()
    return t


def test_a_pop_from_an_empty_stack_is_pythons_index_error():
    with pytest.raises(IndexError):
        pops_one_per_element(np.zeros(5))
    with pytest.raises(pyjitc.RunError, match="IndexError: pop from empty list"):
        pyjitc.jit(pops_one_per_element)(np.zeros(5))
    assert pyjitc.jit(pops_one_per_element)(np.zeros(1)) == 1


def python_then_numpy_items(x):
    st = [0]
    s = 0
    while st:
        v = st.pop()
        s += v
        if v < 3:
            st.append(x[v])    # a NumPy int after a Python int: what pops is known at run time
    return s


def _push(st, v):
    st.append(v)


def pushed_by_a_helper(n):
    st = [1]
    c = 0
    while st:
        v = st.pop()
        c += v
        if v < n:
            _push(st, v + 1)
    return c


def returns_the_stack(x):
    st = [0]
    for k in range(x.shape[0]):
        if x[k] > 0:
            st.append(k)
        else:
            st.pop()
    return st


@pytest.mark.parametrize("fn, args, message", [
    (python_then_numpy_items, (np.array([1, 2, 3, 4]),), "not of the type of its items before the loop"),
    (pushed_by_a_helper, (5,), "changed here through another name or in another function"),
    (returns_the_stack, (np.array([1, -1, 2]),), "returning 'st'"),
])
def test_what_a_stack_cant_follow_is_a_located_error(fn, args, message):
    with pytest.raises(pyjitc.JitError, match=message) as e:
        pyjitc.jit(fn)(*args)
    assert "test_stacks.py:" in str(e.value)


def breadth_first_with_a_deque(adj, s):
    n = adj.shape[0]
    dist = np.full(n, -1)
    dist[s] = 0
    q = deque([s])
    while q:
        u = q.popleft()
        for v in range(n):
            if adj[u, v] and dist[v] < 0:
                dist[v] = dist[u] + 1
                q.append(v)
    return dist


def grid_distances(g, si, sj):
    n, m = g.shape
    d = np.full((n, m), -1)
    d[si, sj] = 0
    q = collections.deque()
    q.append((si, sj))
    while len(q) > 0:
        i, j = q.popleft()
        for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            a, b = i + di, j + dj
            if 0 <= a < n and 0 <= b < m and g[a, b] == 0 and d[a, b] < 0:
                d[a, b] = d[i, j] + 1
                q.append((a, b))
    return d


def deque_while_compiling(x):
    q = deque([1, 2, 3])
    q.appendleft(0)
    a = q.popleft()
    q.extendleft([7, 8])
    return x * a + q[0] + len(q), list(q)


_grid = (np.random.default_rng(4).random((10, 12)) > 0.7).astype(np.int64)
_grid[0, 0] = 0


@pytest.mark.parametrize("fn, args", [
    (breadth_first_with_a_deque, (np.random.default_rng(5).random((12, 12)) > 0.75, 0)),
    (grid_distances, (_grid, 0, 0)),
    (deque_while_compiling, (np.ones(2),)),
])
def test_a_collections_deque_is_a_list_with_its_methods_and_a_queue_in_run_time_loops(fn, args):
    # "collections.deque" was refused ("can't be called inside @jit", probe AM): a breadth-first
    # search's queue is the common use
    assert_same(pyjitc.jit(fn)(*args), fn(*args))


def returns_a_deque(x):
    return deque([x])


def test_returning_a_deque_is_a_located_error():
    # the compiled function would hand back a list where Python returns a deque
    with pytest.raises(pyjitc.JitError, match="returning a collections.deque") as e:
        pyjitc.jit(returns_a_deque)(np.ones(2))
    assert "test_stacks.py:" in str(e.value)


def depth_first_order(adj, s):
    n = adj.shape[0]
    seen = np.zeros(n, dtype=np.bool_)
    order = []
    st = [s]
    while st:
        u = st.pop()
        if seen[u]:
            continue
        seen[u] = True
        order.append(u)          # after a `continue`: the passes that went on append
        for v in range(n - 1, -1, -1):
            if adj[u, v] and not seen[v]:
                st.append(v)
    return order, np.array(order)


def odd_squares(x):
    out = []
    for k in range(x.shape[0]):
        if x[k] % 2 == 0:
            continue
        out.append(x[k] * x[k])
    return out


@pytest.mark.parametrize("fn, args", [
    (depth_first_order, (np.random.default_rng(6).random((15, 15)) > 0.8, 0)),
    (odd_squares, (np.random.default_rng(7).integers(0, 10, 20),)),
])
def test_an_append_after_a_continue_in_a_run_time_loop_is_cpythons_list(fn, args):
    # iterative depth-first search's `order.append(u)` after `if seen[u]: continue` was "changing a
    # Python list inside a loop or branch that runs at run time" (probe AN), as under a `break`
    assert_same(pyjitc.jit(fn)(*args), fn(*args))


def bipartite(adj):
    n = adj.shape[0]
    color = np.full(n, -1, dtype=np.int8)
    for s in range(n):
        if color[s] != -1:
            continue
        color[s] = 0
        stack = [s]
        while stack:
            u = stack.pop()
            for v in range(n):
                if adj[u, v]:
                    if color[v] == -1:
                        color[v] = 1 - color[u]
                        stack.append(v)
                    elif color[v] == color[u]:
                        return False, color
    return True, color


@pytest.mark.parametrize("n, p", [(40, 0.06), (12, 0.3), (30, 0.02)])
def test_a_return_inside_a_for_inside_while_stack_is_cpythons(n, p):
    # "'stack' is Stack depending on a condition known only at run time", without a location
    # (probe AT): the path that returned never reads the stack again, so it is not merged
    rng = np.random.default_rng(n)
    adj = rng.random((n, n)) < p
    adj = adj | adj.T
    np.fill_diagonal(adj, False)
    assert_same_call(pyjitc.jit(bipartite), bipartite, adj)
