"""signature: what calling a compiled function needs besides its .vmfb: the arguments' specs
(the input template), the results' types, the Python structure to rebuild (the output
container), in-place write-backs and run-time error messages. Serialized as JSON and stored in
the .vmfb itself (IREE's function reflection), so a saved file is self-describing."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import ArgumentError
from .ir.dims import Dim, is_symbolic
from .ir.types import short_name
from .program import Argument, Either, Known, OutputTree, Result, Trimmed, ViewOf
from .template import (PY_SCALAR_DTYPES, PY_SCALAR_NAMES, FunctionName, ScalarSpec, StaticSpec, Template, TreeSpec, at_path,
                       function_name, is_function, leaves, path_name)
from .tree import LEAF, TreeDef, is_namedtuple

FORMAT = 2
REFLECTION_KEY = "pyjitc.signature"


@dataclass(frozen=True)
class Signature:
    """Everything needed to call a compiled function without its source."""
    name: str
    params: tuple[tuple[str, Any], ...]          # (name, Template | ScalarSpec | StaticSpec | TreeSpec)
    results: tuple[tuple[tuple[int, ...], np.dtype], ...]
    out_tree: OutputTree
    writebacks: tuple[tuple[tuple, int], ...]    # (argument path, result index)
    checks: tuple[str, ...] = ()                 # run-time error messages, by error code - 1
    error_index: int | None = None               # the result holding the error code
    target: str = "llvm-cpu"
    has_loops: bool = False                      # run-time loops: worth the multi-threaded driver
    input_alignment: int = 64                    # bytes the code assumes of inputs used in place (target.py)
    c_order: tuple[tuple, ...] = ()              # arguments written through a reshape: C-contiguous ones only

    def check_layout(self, values) -> None:
        """An argument written through a reshape of it must be C-contiguous: the function was
        compiled with the reshape a view of it, which NumPy makes a copy of for another layout."""
        for path in self.c_order:
            a = at_path(values, path)
            if isinstance(a, np.ndarray) and not a.flags.c_contiguous:
                raise ArgumentError(f"argument {path_name(path)} is not C-contiguous, and {self.name} writes through a "
                                    "reshape or ravel of it: NumPy makes that reshape a copy for this layout (the "
                                    "writes would not reach the argument), the compiled function a view; pass "
                                    f"np.ascontiguousarray({path_name(path)}), or copy the reshape in the function")

    @property
    def symbolic(self) -> bool:
        """Whether some input dimension is known only at run time (one executable for many sizes)."""
        return any(isinstance(s, Template) and is_symbolic(s.shape) for _, s in self.dynamic)

    @property
    def dynamic(self) -> list[tuple[tuple, Any]]:
        """(path, spec) of each run-time input, in the compiled function's parameter order."""
        return [leaf for n, s in self.params for leaf in leaves((n,), s)]

    def describe(self) -> str:
        args = ", ".join(f"{n}: {s}" for n, s in self.params)
        return f"{self.name}({args})"

    # -- JSON
    def to_json(self) -> str:
        return json.dumps({
            "format": FORMAT, "name": self.name, "target": self.target,
            "params": [[n, _spec_out(s)] for n, s in self.params],
            "results": [_type_out(shape, dtype) for shape, dtype in self.results],
            "out_tree": _tree_out(self.out_tree),
            "writebacks": [[list(p), i] for p, i in self.writebacks],
            "checks": list(self.checks), "error_index": self.error_index, "has_loops": self.has_loops,
            "input_alignment": self.input_alignment, "c_order": [list(p) for p in self.c_order],
        }, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> "Signature":
        d = json.loads(text)
        if d.get("format") != FORMAT:
            raise ArgumentError(f"this .vmfb was written by another pyjitc format ({d.get('format')})")
        results = []
        for t in d["results"]:
            tpl = Template.parse(t)
            results.append((tpl.shape, tpl.dtype))
        return cls(d["name"], tuple((n, _spec_in(s)) for n, s in d["params"]), tuple(results),
                   _tree_in(d["out_tree"]), tuple((tuple(p), i) for p, i in d["writebacks"]),
                   tuple(d["checks"]), d["error_index"], d.get("target", "llvm-cpu"), d.get("has_loops", False),
                   d.get("input_alignment", 64), tuple(tuple(p) for p in d.get("c_order", ())))


def _type_out(shape, dtype) -> str:
    """A result's type; `?` for a dimension known only at run time (read from the result)."""
    shown = ["?" if isinstance(d, Dim) else str(d) for d in shape]
    return f"{short_name(np.dtype(dtype))}[{','.join(shown)}]"


def _value_out(v):
    """Static values and constant results: JSON with tags for what JSON lacks."""
    if v is None or isinstance(v, (bool, str)) or type(v) in (int, float):
        return v if not (isinstance(v, float) and not np.isfinite(v)) else {"float": repr(v)}
    if isinstance(v, (tuple, list)):
        return {type(v).__name__: [_value_out(x) for x in v]}
    if isinstance(v, (set, frozenset)):   # (sorted by repr: one text for one set)
        return {type(v).__name__: [_value_out(x) for x in sorted(v, key=repr)]}
    if isinstance(v, dict):
        return {"dict": [[_value_out(k), _value_out(x)] for k, x in v.items()]}
    if isinstance(v, np.dtype):
        return {"dtype": v.str}
    if type(v) is complex:
        return {"complex": [_value_out(v.real), _value_out(v.imag)]}
    if isinstance(v, type) and v in PY_SCALAR_DTYPES:
        return {"pytype": v.__name__}
    if isinstance(v, type) and issubclass(v, np.generic):
        return {"nptype": np.dtype(v).str}
    if isinstance(v, (np.ndarray, np.generic)):
        arr = np.asarray(v)
        data = arr.tolist() if arr.dtype.kind != "c" else np.stack([arr.real, arr.imag], -1).tolist()
        return {"ndarray" if isinstance(v, np.ndarray) else "scalar": data, "dtype": arr.dtype.str,
                "shape": list(arr.shape)}
    if is_function(v):
        return {"function": function_name(v)}
    raise ArgumentError(f"the static value {v!r} can't be saved with a compiled function")


def _value_in(v):
    if not isinstance(v, dict):
        return v
    if "float" in v:
        return float(v["float"])
    if "tuple" in v:
        return tuple(_value_in(x) for x in v["tuple"])
    if "list" in v:
        return [_value_in(x) for x in v["list"]]
    if "set" in v or "frozenset" in v:
        return (set if "set" in v else frozenset)(_value_in(x) for x in v.get("set", v.get("frozenset")))
    if "dict" in v:
        return {_value_in(k): _value_in(x) for k, x in v["dict"]}
    if "dtype" in v and len(v) == 1:
        return np.dtype(v["dtype"])
    if "pytype" in v:
        return PY_SCALAR_NAMES[v["pytype"]]
    if "nptype" in v:
        return np.dtype(v["nptype"]).type
    if "complex" in v:
        return complex(*(_value_in(x) for x in v["complex"]))
    if "function" in v:
        return FunctionName(v["function"])
    dtype = np.dtype(v["dtype"])
    data = v.get("ndarray", v.get("scalar"))
    if dtype.kind == "c":   # stored as [real, imag] pairs
        arr = np.array(data, dtype=np.dtype(f"f{dtype.itemsize // 2}")).view(dtype).reshape(v["shape"])
    else:
        arr = np.array(data, dtype=dtype).reshape(v["shape"])
    return arr if "ndarray" in v else arr[()]


def _spec_out(s):
    if isinstance(s, Template):
        return {"array": str(s)}
    if isinstance(s, ScalarSpec):
        return {"scalar": s.pytype.__name__}
    if isinstance(s, StaticSpec):
        return {"static": _value_out(s.value)}
    return {"tree": _treedef_out(s.treedef), "specs": [_spec_out(c) for c in s.specs]}


def _spec_in(d):
    if "array" in d:
        return Template.parse(d["array"])
    if "scalar" in d:
        return ScalarSpec(PY_SCALAR_NAMES[d["scalar"]])
    if "static" in d:
        return StaticSpec(_value_in(d["static"]))
    return TreeSpec(_treedef_in(d["tree"]), tuple(_spec_in(c) for c in d["specs"]))


def _treedef_out(t: TreeDef):
    """A leaf is null; a container {"tuple"|"list": [children]} or {"dict": [[key, child], ...]}."""
    if t.kind is None:
        return None
    if t.kind is dict:
        return {"dict": [[_value_out(k), _treedef_out(c)] for k, c in zip(t.keys, t.children)]}
    if is_namedtuple(t.kind):      # NumPy's SlogdetResult, ...: found again by module and name
        return {"namedtuple": [f"{t.kind.__module__}:{t.kind.__qualname__}", [_treedef_out(c) for c in t.children]]}
    return {t.kind.__name__: [_treedef_out(c) for c in t.children]}


def _treedef_in(d) -> TreeDef:
    if d is None:
        return LEAF
    if "dict" in d:
        keys = tuple(_value_in(k) for k, _ in d["dict"])
        return TreeDef(dict, keys, tuple(_treedef_in(c) for _, c in d["dict"]))
    if "namedtuple" in d:
        where, children = d["namedtuple"]
        kind = _named_class(where)
    else:
        kind = tuple if "tuple" in d else list
        children = d[kind.__name__]
    return TreeDef(kind, tuple(range(len(children))), tuple(_treedef_in(c) for c in children))


def _named_class(where: str) -> type:
    """A named tuple class from "module:qualname"; a plain tuple where it can't be imported (a
    class made inside a function)."""
    import importlib
    module, _, name = where.partition(":")
    try:
        cls = importlib.import_module(module)
        for part in name.split("."):
            cls = getattr(cls, part)
    except (ImportError, AttributeError):
        return tuple
    return cls if is_namedtuple(cls) else tuple


def _tree_out(t: OutputTree):
    return {"tree": _treedef_out(t.treedef), "leaves": [_leaf_out(n) for n in t.leaves]}


def _tree_in(d) -> OutputTree:
    return OutputTree(_treedef_in(d["tree"]), tuple(_leaf_in(n) for n in d["leaves"]))


def _leaf_out(n):
    if isinstance(n, Result):
        return {"out": n.index, "weak": n.weak.__name__ if n.weak else None, **({"array": True} if n.array else {})}
    if isinstance(n, Argument):
        return {"input": list(n.path), "shape": None if n.shape is None else list(n.shape), "copy": n.copy}
    if isinstance(n, ViewOf):
        return {"view": _leaf_out(n.base), "recipes": [[r[0], _value_out(r[1])] for r in n.recipes],
                **({"late": True} if n.late else {})}
    if isinstance(n, Trimmed):
        return {"trimmed": _leaf_out(n.data), "count": _leaf_out(n.count), **({"items": True} if n.items else {})}
    if isinstance(n, Either):
        return {"either": _leaf_out(n.flag), "then": _leaf_out(n.then), "other": _leaf_out(n.other)}
    return {"const": _value_out(n.value)}


def _leaf_in(d):
    if "out" in d:
        return Result(d["out"], PY_SCALAR_NAMES.get(d["weak"]), d.get("array", False))
    if "input" in d:
        return Argument(tuple(d["input"]), None if d["shape"] is None else tuple(d["shape"]), d["copy"])
    if "view" in d:
        return ViewOf(_leaf_in(d["view"]), tuple((r[0], _value_in(r[1])) for r in d["recipes"]), d.get("late", False))
    if "trimmed" in d:
        return Trimmed(_leaf_in(d["trimmed"]), _leaf_in(d["count"]), d.get("items", False))
    if "either" in d:
        return Either(_leaf_in(d["either"]), _leaf_in(d["then"]), _leaf_in(d["other"]))
    return Known(_value_in(d["const"]))
