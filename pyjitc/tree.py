"""tree: nests of tuples, lists and dicts flattened to their leaves plus a TreeDef, and built back
(like jax.tree_util). Argument specs, output trees, loop-carried state and the CLI's printing all
use it, so no other module walks containers by hand.
Unlike jax.tree_util: dicts keep their insertion order (the order the user's code made), None is
a leaf (a value a function can return or carry), named tuples keep their class (NumPy's
SlogdetResult, QRResult, ...), and other tuple/list subclasses count as tuples/lists. Other classes
are leaves unless registered as nodes (register_node, as jax.tree_util.register_pytree_node)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator

IsLeaf = Callable[[Any], bool] | None   # a container for which it is true is one leaf


@dataclass(frozen=True, repr=False)
class TreeDef:
    """The structure of a nest: `kind` None for a leaf, else tuple, list, dict or a registered
    class, with its keys (0..n-1 for tuples, lists and registered classes) and one TreeDef per
    key; `aux`: what a registered class keeps beside its children."""
    kind: type | None = None
    keys: tuple = ()
    children: tuple["TreeDef", ...] = ()
    aux: Any = None

    @property
    def num_leaves(self) -> int:
        return 1 if self.kind is None else sum(c.num_leaves for c in self.children)

    def unflatten(self, leaves):
        """The nest of this structure holding `leaves` (in flatten's order)."""
        items = iter(leaves)
        out = self._build(items)
        if next(items, _END) is not _END:
            raise ValueError(f"more leaves than the {self.num_leaves} of {self}")
        return out

    def _build(self, items: Iterator):
        if self.kind is None:
            leaf = next(items, _END)
            if leaf is _END:
                raise ValueError(f"fewer leaves than the {self.num_leaves} this structure holds")
            return leaf
        built = [c._build(items) for c in self.children]
        if self.kind in _NODES:
            return _NODES[self.kind][1](self.aux, built)
        if self.kind is dict:
            return dict(zip(self.keys, built))
        return self.kind(*built) if is_namedtuple(self.kind) else self.kind(built)

    def paths(self) -> list[tuple]:
        """The key path of each leaf, in flatten's order: (key, key, ...)."""
        if self.kind is None:
            return [()]
        return [(k,) + p for k, c in zip(self.keys, self.children) for p in c.paths()]

    def nodes(self, path: tuple = ()) -> Iterator[tuple[tuple, "TreeDef"]]:
        """(path, node) of each container, outermost first."""
        if self.kind is not None:
            yield path, self
            for k, c in zip(self.keys, self.children):
                yield from c.nodes(path + (k,))

    def flatten_up_to(self, value, fill=None, strict: bool = True) -> list:
        """The parts of `value` at this structure's leaves (whole subtrees where `value` nests
        deeper). `value` must have this structure down to those leaves: else StructureError, or
        with strict=False, `fill` for each leaf under the node that differs."""
        out: list = []
        self._up_to(value, (), out, fill, strict)
        return out

    def _up_to(self, value, path, out, fill, strict):
        if self.kind is None:
            out.append(value)
            return
        node = _NODES.get(self.kind)
        if node is not None:
            parts, aux = node[0](value) if type(value) is self.kind else ((), None)
            keys = tuple(range(len(parts))) if aux == self.aux else None
        else:
            parts = value
            keys = tuple(value) if isinstance(value, dict) else tuple(range(len(value))) \
                if isinstance(value, (tuple, list)) else None
        if not isinstance(value, self.kind) or keys != self.keys:
            if strict:
                raise StructureError(path, self, value, len(out))
            out.extend([fill] * self.num_leaves)
            return
        for k, c in zip(self.keys, self.children):
            c._up_to(parts[k], path + (k,), out, fill, strict)

    def show(self, leaves) -> str:
        """Python's notation for this structure with each leaf written as the given text."""
        items = iter(leaves)
        return self._show(items)

    def _show(self, items: Iterator) -> str:
        if self.kind is None:
            return str(next(items))
        parts = [c._show(items) for c in self.children]
        if self.kind in _NODES:
            return f"{self.kind.__name__}(" + ", ".join(parts) + ")"
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(self.keys, parts)) + "}"
        if self.kind is list:
            return "[" + ", ".join(parts) + "]"
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"

    def __str__(self) -> str:
        return self.show(["*"] * self.num_leaves)

    def __repr__(self) -> str:
        return f"TreeDef({self})"


LEAF = TreeDef()
_END = object()


class StructureError(ValueError):
    """A value without the structure a TreeDef expects: at `path`, `node` was expected (its leaves
    are the treedef's leaves from `first_leaf` on) and `value` found."""

    def __init__(self, path: tuple, node: TreeDef, value, first_leaf: int):
        super().__init__(f"at {path}: expected {node}, got a {type(value).__name__}")
        self.path, self.node, self.value, self.first_leaf = path, node, value, first_leaf


def is_namedtuple(kind) -> bool:
    return isinstance(kind, type) and issubclass(kind, tuple) and kind is not tuple and hasattr(kind, "_fields")


# Registered classes: class -> (flatten(value) -> (children, aux), unflatten(aux, children) -> value).
_NODES: dict = {}


def register_node(kind: type, flatten_node: Callable, unflatten_node: Callable) -> None:
    """Make instances of `kind` containers: flatten_node(value) gives (a tuple of children, aux,
    an equality-comparable value kept in the TreeDef) and unflatten_node(aux, children) rebuilds it."""
    _NODES[kind] = (flatten_node, unflatten_node)


def node_parts(value):
    """(children, aux) of an instance of a registered class, else None."""
    node = _NODES.get(type(value))
    return None if node is None else node[0](value)


def build_node(kind: type, aux, children):
    """An instance of the registered class `kind` from node_parts's (children, aux)."""
    return _NODES[kind][1](aux, list(children))


def _kind(value) -> type | None:
    if type(value) in _NODES:
        return type(value)
    if isinstance(value, tuple):
        return type(value) if is_namedtuple(type(value)) else tuple
    return dict if isinstance(value, dict) else list if isinstance(value, list) else None


def flatten(value, is_leaf: IsLeaf = None) -> tuple[list, TreeDef]:
    """(leaves, treedef) of `value`: containers are walked depth-first in their own order;
    `is_leaf(x)` true makes a container x one leaf."""
    leaves: list = []
    return leaves, _flatten(value, leaves, is_leaf)


def _flatten(value, leaves: list, is_leaf: IsLeaf) -> TreeDef:
    kind = _kind(value)
    if kind is None or is_leaf is not None and is_leaf(value):
        leaves.append(value)
        return LEAF
    if kind in _NODES:
        parts, aux = _NODES[kind][0](value)
        return TreeDef(kind, tuple(range(len(parts))), tuple(_flatten(p, leaves, is_leaf) for p in parts), aux)
    keys = tuple(value) if kind is dict else tuple(range(len(value)))
    return TreeDef(kind, keys, tuple(_flatten(value[k], leaves, is_leaf) for k in keys))


def leaves(value, is_leaf: IsLeaf = None) -> list:
    return flatten(value, is_leaf)[0]


def flatten_with_paths(value, is_leaf: IsLeaf = None) -> tuple[list[tuple[tuple, Any]], TreeDef]:
    """([(path, leaf)], treedef): each leaf with its key path."""
    items, treedef = flatten(value, is_leaf)
    return list(zip(treedef.paths(), items)), treedef


def leaves_with_paths(value, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """(key path, leaf) of each leaf, building no TreeDef (for the call path)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves_with_paths(v, path + (k,))
    elif isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            yield from leaves_with_paths(v, path + (i,))
    else:
        yield path, value


def map(f: Callable, value, *rest, is_leaf: IsLeaf = None):
    """`value` with each leaf x replaced by f(x, *the parts of `rest` at that leaf); each of
    `rest` must have value's structure down to its leaves (StructureError otherwise)."""
    items, treedef = flatten(value, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten(f(*xs) for xs in zip(items, *others))


def map_with_path(f: Callable, value, *rest, is_leaf: IsLeaf = None):
    """Like map, with the leaf's key path as f's first argument."""
    items, treedef = flatten(value, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten(f(p, *xs) for p, *xs in zip(treedef.paths(), items, *others))
