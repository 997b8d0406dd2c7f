"""tree.py (containers flattened to leaves and a TreeDef, and built back) and the layers above
it: importing pyjitc and decorating a function load no IREE module (the frontend runs without
the compiler); only lowering, compiling and running do."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pyjitc import tree

ROOT = Path(__file__).parent.parent


def test_flatten_keeps_dict_order_and_none_as_a_leaf_and_builds_back():
    value = {"b": (1, [2, None]), "a": 3}
    leaves, treedef = tree.flatten(value)
    assert leaves == [1, 2, None, 3]
    assert treedef.paths() == [("b", 0), ("b", 1, 0), ("b", 1, 1), ("a",)]
    assert str(treedef) == "{'b': (*, [*, *]), 'a': *}" and treedef.num_leaves == 4
    assert treedef.unflatten(leaves) == value and list(treedef.unflatten(leaves)) == ["b", "a"]
    assert tree.flatten(None) == ([None], tree.LEAF)
    leaves, treedef = tree.flatten(((), []))
    assert leaves == [] and treedef.unflatten([]) == ((), [])
    assert tree.map(lambda x, y: (x, y), [1, (2,)], [[3], (4,)]) == [(1, [3]), ((2, 4),)]   # up to the first's leaves


def test_flatten_up_to_names_where_the_structure_differs():
    _, treedef = tree.flatten({"a": (1, 2), "b": [3]})
    assert treedef.flatten_up_to({"a": ([1], 2), "b": [3]}) == [[1], 2, 3]
    with pytest.raises(tree.StructureError) as e:
        treedef.flatten_up_to({"a": (1, 2), "b": (3,)})
    assert e.value.path == ("b",) and e.value.node.kind is list and e.value.first_leaf == 2
    assert treedef.flatten_up_to({"a": 0, "b": [3]}, fill="-", strict=False) == ["-", "-", 3]


def test_import_and_decorating_load_no_iree_module(tmp_path):
    code = ("import sys, pyjitc\n"
            "@pyjitc.jit\n"
            "def f(x):\n"
            "    return x + 1\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'iree'))\n")
    script = tmp_path / "no_iree.py"   # @jit reads the source: it must be in a file
    script.write_text(code)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip() == "[]"
