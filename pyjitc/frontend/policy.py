"""policy: what may appear inside @jit, checked on the AST at decoration time, before any compile.
Deny by default: syntax the compiler's visitor has no method for, and calls that are neither implemented
(the registry) nor plain Python helpers are rejected with a located error."""
from __future__ import annotations

import ast
import builtins
import cmath
import functools
import importlib
import importlib.util
import math
import sys
import types

import numpy as np

from ..errors import ForbiddenError, NotSupportedError, UnsupportedSyntaxError
from ..tree import is_namedtuple
from . import numpy as _numpy_functions, registry  # noqa: F401 (importing the package registers them)
from .source import SourceFunction
from .stacks import DEQUE_METHODS, Deque

ALLOWED_MODULES = ("numpy", "math", "cmath")

# Why each of these has no meaning in compiled code: compiled code computes arrays from arrays;
# it has no terminal, no files, no Python interpreter and no access to Python-side state.
_FILE = "it reads or writes a file, which has no meaning in compiled code"
_CODE = "it runs Python code built at run time, which can't be compiled"
FORBIDDEN = {
    "builtins.print": "it writes to the terminal, which compiled code can't do; return the value and print it outside",
    "builtins.input": "it reads from the terminal, which compiled code can't do; pass the value in as an argument",
    "builtins.open": _FILE,
    "builtins.eval": _CODE, "builtins.exec": _CODE, "builtins.compile": _CODE,
    "builtins.__import__": "imports run Python code; import at module level",
    "builtins.globals": "compiled code can't see the Python interpreter's variables",
    "builtins.locals": "compiled code can't see the Python interpreter's variables",
    "builtins.vars": "compiled code can't see the Python interpreter's variables",
    "builtins.setattr": "compiled code can't change Python objects",
    "builtins.delattr": "compiled code can't change Python objects",
    "builtins.breakpoint": "compiled code can't stop in the Python debugger; debug the function without @jit",
    "builtins.exit": "compiled code can't stop the Python process",
    "builtins.quit": "compiled code can't stop the Python process",
    "builtins.id": "object identity has no meaning for compiled values",
    "numpy.save": _FILE, "numpy.savez": _FILE, "numpy.savez_compressed": _FILE, "numpy.savetxt": _FILE,
    "numpy.load": _FILE, "numpy.loadtxt": _FILE, "numpy.genfromtxt": _FILE, "numpy.fromfile": _FILE,
    "numpy.memmap": _FILE, "numpy.lib.format": _FILE, "numpy.fromregex": _FILE,
    "numpy.random": "it draws from a random state (NumPy's global one, or a Generator's), which compiled code "
                    "can't see or advance; "
                    "draw the random numbers outside and pass them in as an argument",
    "numpy.seterr": "it changes NumPy's global settings", "numpy.set_printoptions": "it changes NumPy's global settings",
    "numpy.setbufsize": "it changes NumPy's global settings",
    "numpy.testing": "testing helpers raise Python exceptions; check results outside the @jit function",
}
FORBIDDEN_METHODS = {
    "tofile": _FILE, "dump": _FILE, "dumps": "it serializes Python objects",
    "tobytes": "it makes Python bytes from the array's values; return the array and convert outside",
    "resize": "it resizes an array in place, changing its shape at run time",
    "setflags": "array flags have no meaning in compiled code",
}

SYNTAX_REASONS = {
    ast.With: ("`with` blocks can't be compiled (except `with np.errstate(...)`): they run Python code on entry and exit",
               "move the with block outside the @jit function"),
    ast.AsyncWith: ("async code can't be compiled", "call the @jit function from async code instead"),
    ast.AsyncFor: ("async code can't be compiled", "call the @jit function from async code instead"),
    ast.AsyncFunctionDef: ("async functions can't be compiled", "use a plain def"),
    ast.Await: ("async code can't be compiled", "call the @jit function from async code instead"),
    ast.Yield: ("generators can't be compiled", "return an array or a tuple of arrays instead"),
    ast.YieldFrom: ("generators can't be compiled", "return an array or a tuple of arrays instead"),
    ast.ClassDef: ("class definitions can't be compiled", "define the class at module level"),
    ast.Global: ("`global` can't be compiled: compiled code can't rebind Python variables outside the function",
                 "return the new value instead"),
    ast.Raise: ("`raise` can't be compiled: compiled code can't raise Python exceptions",
                "validate the inputs before calling the @jit function"),
    ast.JoinedStr: ("f-strings have no meaning in compiled code", "format values outside the @jit function"),
    ast.Match: ("match statements are not supported yet", "use if/elif"),
}
if hasattr(ast, "TryStar"):
    SYNTAX_REASONS[ast.TryStar] = ("try/except* can't be compiled", "use a plain try/except")

# Syntax is allowed by the compiler's visitor: a node type is allowed when
# codegen.FunctionCompiler has a visit_ method for it (codegen.ALLOWED_SYNTAX, passed in here),
# besides the parts of nodes that are never visited on their own.
STRUCTURAL_SYNTAX = frozenset({ast.arguments, ast.arg, ast.keyword, ast.comprehension, ast.Starred, ast.Load, ast.Store,
                               ast.withitem, ast.alias, ast.ExceptHandler})


def unsupported_syntax(node) -> UnsupportedSyntaxError:
    message, hint = SYNTAX_REASONS.get(type(node), (f"{type(node).__name__} is not supported inside @jit", None))
    return UnsupportedSyntaxError(message, hint=hint)


def not_allowed(shown: str, reason: str) -> ForbiddenError:
    """The one message for a name that has no meaning in compiled code (FORBIDDEN, FORBIDDEN_METHODS)."""
    return ForbiddenError(f"{shown} is not allowed inside @jit: {reason}")


def _is_operator(node) -> bool:
    return isinstance(node, (ast.operator, ast.unaryop, ast.cmpop, ast.boolop))


# ---------------------------------------------------------------- name resolution

UNRESOLVED = object()


def lookup_global(fn, name: str):
    """A free name as Python would see it when `fn` runs: closure, then globals, then builtins."""
    code = fn.__code__
    if name in code.co_freevars and fn.__closure__:
        cell = fn.__closure__[code.co_freevars.index(name)]
        try:
            return cell.cell_contents
        except ValueError:
            return UNRESOLVED
    if name in fn.__globals__:
        return fn.__globals__[name]
    if hasattr(builtins, name):
        return getattr(builtins, name)
    module = sys.modules.get(fn.__globals__.get("__name__", ""))
    if module is not None and hasattr(type(module), "__getattr__") or "__getattr__" in fn.__globals__:
        try:   # a module whose names load lazily (PEP 562 __getattr__)
            return getattr(module, name)
        except Exception:
            pass
    return UNRESOLVED


def _resolve_path(path: str):
    obj = None
    parts = path.split(".")
    try:
        obj = __import__(parts[0])
        for p in parts[1:]:
            obj = getattr(obj, p)
    except (ImportError, AttributeError):
        return None
    return obj


_NAMES: dict[int, str] = {}
# Registered names outside NumPy (scipy.special.rel_entr, BLAS routines): resolved once their module
# is imported, never imported by pyjitc itself (an optional dependency, slow to import).
_LATER: dict[str, list[str]] = {}
for _registry in (registry.FUNCTIONS, FORBIDDEN):
    for _path in _registry:
        if _path.split(".")[0] not in ("numpy", "builtins"):
            _LATER.setdefault(_path.rsplit(".", 1)[0], []).append(_path)
            continue
        _obj = _resolve_path(_path)
        # only objects that stay alive (a ufunc's method is a new object on every access: its id
        # would be reused by unrelated objects); qualified_name names those by what they are
        if _obj is not None and not isinstance(_obj, (int, float, str)) and _resolve_path(_path) is _obj:
            _NAMES.setdefault(id(_obj), _path)
for _b in registry.BUILTINS:
    _NAMES[id(getattr(builtins, _b))] = f"builtins.{_b}"


def _name_imported_modules() -> None:
    for module in [m for m in _LATER if m in sys.modules]:
        for path in _LATER.pop(module):
            obj = getattr(sys.modules[module], path.rsplit(".", 1)[1], None)
            if obj is not None:
                _NAMES.setdefault(id(obj), path)


def qualified_name(obj) -> str | None:
    name = _NAMES.get(id(obj))
    if name is not None:
        return name
    if _LATER and getattr(obj, "__module__", None) is None:   # ufuncs, f2py routines: named by identity
        _name_imported_modules()
        name = _NAMES.get(id(obj))
        if name is not None:
            return name
    owner = getattr(obj, "__self__", None)
    if isinstance(owner, np.ufunc) and getattr(np, owner.__name__, None) is owner:   # np.add.outer: "numpy.add.outer"
        return f"numpy.{owner.__name__}.{obj.__name__}"
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    mod = getattr(obj, "__module__", None)
    qual = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if mod and qual:
        return f"{mod}.{qual}"
    return None


def forbidden_reason(path: str | None) -> str | None:
    if path is None:
        return None
    for key, reason in FORBIDDEN.items():
        if path == key or path.startswith(key + "."):
            return reason
    return None


# NumPy under the array API's name (libraries get it from array_namespace(x) for NumPy inputs):
# NumPy's own functions, and Python wrappers over them that are compiled like any helper.
# The compat layer's `common` modules are the helpers those wrappers call.
NUMPY_NAMESPACES = tuple(f"{prefix}array_api_compat.{part}" for prefix in ("", "scipy._lib.", "sklearn.externals.")
                         for part in ("numpy", "common"))
# Modules whose classes compiled code may name, for isinstance(f, collections.abc.Callable);
# a call into them is refused as any other call is.
TYPE_MODULES = ("collections", "collections.abc", "numbers")
# modules whose registered functions compile to nothing (warnings.warn: a warning never changes a
# value, and compiled code can't show one); their other functions stay refused when called
NO_EFFECT_MODULES = ("warnings",)
# Python modules whose registered functions compile (numpy/iteration.py: itertools.product,
# functools.reduce, run while the program is built); their other functions stay refused
PYTHON_MODULES = ("itertools", "functools")


# Attributes of otherwise forbidden modules that compiled code may read, as compile-time values:
# Python's module table, read-only (array-API layers ask `sys.modules.get("numpy")` to recognise
# NumPy; what they get is the module, itself checked where it is used).
READABLE_ATTRIBUTES = {("sys", "modules"): lambda: types.MappingProxyType(sys.modules)}


def readable_attribute(base, attr: str):
    """`module.attr` where compiled code may read it although the module is not one of
    ALLOWED_MODULES (else UNRESOLVED): READABLE_ATTRIBUTES (sys.modules), the functions the registry
    names (scipy.special.rel_entr), and what a library (not Python's own modules) defines, as if
    imported by name: its plain Python functions compile as helpers, its constants are read as
    globals are, anything else is refused where it is used. Never a submodule (itself checked
    where it is used) or a FORBIDDEN function."""
    if not isinstance(base, types.ModuleType):
        return UNRESOLVED
    if (base.__name__, attr) in READABLE_ATTRIBUTES:
        return READABLE_ATTRIBUTES[base.__name__, attr]()
    value = getattr(base, attr, UNRESOLVED)
    if value is UNRESOLVED or isinstance(value, types.ModuleType) or \
            not isinstance(value, (int, float, str)) and forbidden_reason(qualified_name(value)):
        return UNRESOLVED
    if base.__name__.split(".")[0] in sys.stdlib_module_names and qualified_name(value) not in registry.FUNCTIONS:
        return UNRESOLVED
    return value


def module_named(node, lookup):
    """The module a chain of names (`scipy.special`) names, looked up by `lookup(name)`, without
    the policy's checks (readable_attribute decides what may be read from it); else UNRESOLVED."""
    if isinstance(node, ast.Name):
        value = lookup(node.id)
    elif isinstance(node, ast.Attribute):
        base = module_named(node.value, lookup)
        value = getattr(base, node.attr, UNRESOLVED) if base is not UNRESOLVED else UNRESOLVED
    else:
        return UNRESOLVED
    return value if isinstance(value, types.ModuleType) else UNRESOLVED


def check_module(mod: types.ModuleType, shown: str) -> None:
    name = mod.__name__
    if name.split(".")[0] not in ALLOWED_MODULES and name not in TYPE_MODULES + NO_EFFECT_MODULES + PYTHON_MODULES and \
            not any(name == n or name.startswith(n + ".") for n in NUMPY_NAMESPACES):
        raise ForbiddenError(f"module {name!r} ({shown}) is not allowed inside @jit",
                             hint=f"allowed modules are {', '.join(ALLOWED_MODULES)}; call other code outside")
    reason = forbidden_reason(mod.__name__)
    if reason:
        raise not_allowed(shown, reason)


def import_module(name: str, level: int = 0, fn=None, checked: bool = True) -> types.ModuleType:
    """`import name` inside a compiled function: only the allowed modules (numpy, math). A relative
    one (`from .. import numpy as xp` in a library) is resolved from `fn`'s package, as Python
    does. `checked=False` (`from m import f`): the module is not checked, what is taken from it is."""
    if level:
        package = getattr(fn, "__globals__", {}).get("__package__")
        if not package:
            raise UnsupportedSyntaxError("a relative import inside a @jit function whose module is not in a package",
                                         hint="import at module level; the function sees module-level names")
        try:
            name = importlib.util.resolve_name("." * level + name, package)
        except ImportError as e:
            raise NotSupportedError(f"import: {e}") from None
    try:
        mod = importlib.import_module(name)
    except ImportError as e:
        raise NotSupportedError(f"import {name}: {e}") from None
    if checked:
        check_module(mod, name)
    return mod


# Methods of Python values (strings, lists, dicts, ...) the program holds while it is built: the
# pure ones run now on compile-time values; the ones that change the list or dict run now too,
# outside run-time branches and loops (where both sides of an `if` are built, they can't).
PURE_METHODS = {
    str: {"lower", "upper", "strip", "lstrip", "rstrip", "split", "rsplit", "startswith", "endswith", "replace",
          "join", "format", "find", "rfind", "index", "count", "isdigit", "isalpha", "isspace", "casefold", "title",
          "capitalize", "partition", "rpartition", "splitlines", "zfill", "center", "ljust", "rjust", "removeprefix",
          "removesuffix"},
    tuple: {"index", "count"}, list: {"index", "count", "copy"}, dict: {"get", "keys", "values", "items", "copy"},
    int: {"bit_length", "to_bytes"}, float: {"is_integer", "hex"}, range: {"index", "count"},
    set: {"intersection", "union", "difference", "symmetric_difference", "issubset", "issuperset", "isdisjoint",
          "copy"},
    frozenset: {"intersection", "union", "difference", "symmetric_difference", "issubset", "issuperset",
                "isdisjoint", "copy"},
    types.MappingProxyType: {"get", "keys", "values", "items"},
}
MUTATING_METHODS = {list: {"append", "extend", "insert", "pop", "remove", "reverse", "clear", "sort"},
                    dict: {"update", "pop", "setdefault", "clear", "popitem"},
                    set: {"add", "discard", "remove", "update", "clear", "pop", "intersection_update",
                          "difference_update", "symmetric_difference_update"}}
PURE_METHODS[Deque] = PURE_METHODS[list]    # collections.deque while compiling (stacks.Deque)
MUTATING_METHODS[Deque] = MUTATING_METHODS[list] | DEQUE_METHODS


# Methods of NumPy scalars known at compile time (b[0] of a known array): scalars are immutable,
# so these run now, as NumPy runs them.
NUMPY_SCALAR_METHODS = {"copy", "item", "astype", "conjugate", "conj", "round", "tolist", "view", "squeeze",
                        "ravel", "flatten", "reshape", "sum", "mean", "min", "max", "prod", "all", "any"}


def python_method(obj):
    """('pure'|'mutating', obj) for a bound method of a str, list, dict, ... listed above, or of a
    NumPy scalar; else None."""
    owner = getattr(obj, "__self__", None)
    name = getattr(obj, "__name__", None)
    if isinstance(owner, np.generic) and name in NUMPY_SCALAR_METHODS:
        return "pure"
    if not (isinstance(obj, (types.BuiltinMethodType, types.MethodWrapperType)) or isinstance(owner, Deque)) \
            or type(owner) not in PURE_METHODS:
        return None
    if name in PURE_METHODS[type(owner)]:
        return "pure"
    if name in MUTATING_METHODS.get(type(owner), ()):
        return "mutating"
    return None


def classify_call(obj, shown: str):
    """What calling `obj` means in compiled code: ('numpy'|'builtin'|'math'|'user'|'exception'|
    'method', target). Raises ForbiddenError or NotSupportedError naming the callee as the user wrote it."""
    if python_method(obj) is not None:
        return "method", obj
    if isinstance(obj, np.vectorize):   # a np.vectorize object (a global): as made inside (as_python.py)
        obj = _numpy_functions.as_python.Vectorized.of(obj)
    if isinstance(obj, _numpy_functions.as_python.Vectorized):
        return "numpy", obj
    if isinstance(obj, functools.partial):   # the compiler calls its function (codegen.call_value)
        return classify_call(obj.func, shown)
    if getattr(type(obj), "__pyjitc_jit__", False):   # a @jit function: inlined, like any Python function
        return "user", obj.__wrapped__
    if isinstance(obj, type) and issubclass(obj, BaseException):   # made to be raised (frontend/raising.py)
        return "exception", obj
    if is_namedtuple(obj) and (getattr(obj.__new__, "__doc__", None) or "").startswith("Create new instance of"):
        return "namedtuple", obj    # collections.namedtuple / typing.NamedTuple: a tuple with names, made now
    path = qualified_name(obj)
    reason = forbidden_reason(path)
    if reason:
        raise not_allowed(shown, reason)
    if path in registry.FUNCTIONS:
        return "numpy", registry.FUNCTIONS[path]
    if getattr(obj, "__module__", None) in NO_EFFECT_MODULES + tuple("_" + m for m in NO_EFFECT_MODULES):
        raise NotSupportedError(f"{shown} (from module {obj.__module__.lstrip('_')!r}) can't be called inside @jit",
                                hint="warnings.warn is the one function of that module compiled (to nothing); "
                                     "set warning filters outside the compiled function")
    if obj is builtins.getattr:   # the compiler's own attribute rules, with a compile-time name
        return "getattr", obj
    if isinstance(obj, functools._lru_cache_wrapper) and isinstance(obj.__wrapped__, types.FunctionType):
        return "cached", obj.__wrapped__   # functools.lru_cache/cache: the function itself, compiled
    if path and path.startswith("builtins."):
        impl = registry.BUILTINS.get(path.split(".", 1)[1])
        if impl is None:
            raise NotSupportedError(f"the builtin {shown}() is not supported inside @jit")
        return "builtin", impl
    if getattr(obj, "__module__", None) in ("math", "cmath") or (isinstance(obj, types.BuiltinFunctionType) and any(
            obj is getattr(m, getattr(obj, "__name__", ""), None) for m in (math, cmath))):
        return "math", obj
    if isinstance(obj, types.FunctionType):
        return "user", obj
    implementation = getattr(obj, "_implementation", None)   # NumPy's dispatcher over its own Python code
    if path and path.split(".")[0] == "numpy" and isinstance(implementation, types.FunctionType):
        return "user", implementation   # not in the registry: NumPy's Python code, compiled like any helper
    if path and path.split(".")[0] == "numpy" or isinstance(obj, np.ufunc):
        raise NotSupportedError(f"{shown} is not supported by pyjitc yet",
                                hint="see the supported-functions table in the README")
    mod = (path or "").split(".")[0] or "?"
    raise NotSupportedError(f"{shown} (from module {mod!r}) can't be called inside @jit",
                            hint=f"only {', '.join(ALLOWED_MODULES)} functions and plain Python helpers are compiled")


# ---------------------------------------------------------------- the decoration-time check

def local_names(fn_node) -> set[str]:
    """Names bound anywhere inside the function, nested functions included (never globals)."""
    names = set()
    for node in ast.walk(fn_node):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.FunctionDef) and node is not fn_node:
            names.add(node.name)
    return names


class PolicyChecker(ast.NodeVisitor):
    """One pass over the function's AST; raises the first violation, located."""

    def __init__(self, src: SourceFunction, allowed_syntax: frozenset):
        self.src = src
        self.allowed_syntax = allowed_syntax
        self.fn = src.fn
        self.locals = local_names(src.node)

    def check(self) -> None:
        node = self.src.node
        for d in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            self.visit(d)
        for stmt in (node.body if isinstance(node.body, list) else [node.body]):
            self.visit(stmt)

    def visit(self, node):
        try:
            return super().visit(node)
        except (UnsupportedSyntaxError, ForbiddenError, NotSupportedError) as e:
            raise e.located(self.src.span(node)) from None

    def generic_visit(self, node):
        if type(node) not in self.allowed_syntax and not _is_operator(node):
            raise unsupported_syntax(node)
        super().generic_visit(node)

    def visit_FunctionDef(self, node):
        if node.decorator_list:
            raise UnsupportedSyntaxError("decorators on nested functions are not supported inside @jit",
                                         hint="define the decorated function at module level")
        self.generic_visit(node)

    def resolve(self, node):
        """The object an expression names at module level, or UNRESOLVED (locals, unknowns)."""
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return UNRESOLVED
            return lookup_global(self.fn, node.id)
        if isinstance(node, ast.Attribute):
            readable = self.readable(node)
            if readable is not UNRESOLVED:
                return readable
            base = self.resolve(node.value)
            if base is UNRESOLVED or isinstance(base, np.ndarray):   # array methods: checked when traced
                return UNRESOLVED
            if isinstance(base, types.ModuleType):
                check_module(base, ast.unparse(node.value))
            return getattr(base, node.attr, UNRESOLVED)
        return UNRESOLVED

    def readable(self, node):
        """`sys.modules`, `scipy.special.rel_entr`: see readable_attribute."""
        lookup = lambda name: UNRESOLVED if name in self.locals else lookup_global(self.fn, name)
        return readable_attribute(module_named(node.value, lookup), node.attr)

    def visit_Import(self, node):
        for alias in node.names:
            import_module(alias.name)

    def visit_ImportFrom(self, node):
        mod = import_module(node.module or "", node.level, self.fn, checked=False)
        for alias in node.names:   # (a module imported from a package is checked as `import` checks it)
            if isinstance(getattr(mod, alias.name, None), types.ModuleType):
                check_module(getattr(mod, alias.name), alias.name)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            obj = self.resolve(node)
            if isinstance(obj, types.ModuleType):
                check_module(obj, node.id)

    def visit_Attribute(self, node):
        obj = self.resolve(node)
        shown = ast.unparse(node)
        if self.readable(node) is not UNRESOLVED:   # its module is not otherwise allowed
            return
        if isinstance(obj, types.ModuleType):
            check_module(obj, shown)
        elif obj is not UNRESOLVED:
            reason = forbidden_reason(qualified_name(obj))
            if reason:
                raise not_allowed(shown, reason)
        self.visit(node.value)

    def visit_Call(self, node):
        func = node.func
        shown = ast.unparse(func)
        obj = self.resolve(func)
        if obj is not UNRESOLVED and not isinstance(obj, types.ModuleType):
            try:
                classify_call(obj, shown)
            except (ForbiddenError, NotSupportedError) as e:
                raise e.located(self.src.span(func)) from None
        elif isinstance(func, ast.Attribute) and func.attr in FORBIDDEN_METHODS:
            raise not_allowed(f".{func.attr}()", FORBIDDEN_METHODS[func.attr]).located(self.src.span(func))
        self.generic_visit(node)


def check_function(src: SourceFunction, allowed_syntax: frozenset) -> None:
    """`allowed_syntax`: the AST node types the compiler can interpret (besides STRUCTURAL_SYNTAX)."""
    PolicyChecker(src, allowed_syntax | STRUCTURAL_SYNTAX).check()
