"""Python lists and dicts inside compiled code are the program's own objects, as in CPython: a
change made through an element (`dp[i][j] = v`, `adj[u].append(v)`, `row = L[i]; row[0] = v`)
reaches the container that holds it, aliases included (`[[0] * 3] * 3`). Each case is compared
with the same function run by CPython."""
import numpy as np
import pytest

import pyjitc
from tests.reference import assert_same


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
