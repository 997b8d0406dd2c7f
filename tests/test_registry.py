"""The registry: each name is registered once; a second registration fails at import time, naming
both implementations, and changes nothing."""
import pytest

import pyjitc  # noqa: F401 (registers every function)
from pyjitc.frontend import registry


def test_a_name_registered_twice_is_refused_naming_both_implementations():
    exp = registry.FUNCTIONS["numpy.exp"]
    with pytest.raises(ValueError, match=r"register: function 'numpy.exp' is registered twice: by "
                                         r"pyjitc\.frontend\.numpy\.ufuncs\..* and by tests\.test_registry\."):
        registry.register("numpy.not_a_function", "numpy.exp")(lambda em, x: x)
    assert registry.FUNCTIONS["numpy.exp"] is exp
    assert "numpy.not_a_function" not in registry.FUNCTIONS
    assert ("function", "numpy.not_a_function") not in registry.ENTRIES


def test_methods_and_builtins_are_refused_twice_too():
    with pytest.raises(ValueError, match="method 'sum' is registered twice"):
        registry.register(method="sum")(lambda em, a: a)
    with pytest.raises(ValueError, match="builtin 'len' is registered twice"):
        registry.register(builtin="len")(lambda em, a: a)


def test_the_lookup_tables_are_the_entries():
    tables = {"function": registry.FUNCTIONS, "method": registry.METHODS, "attribute": registry.PROPERTIES,
              "builtin": registry.BUILTINS}
    assert sum(len(t) for t in tables.values()) == len(registry.ENTRIES)
    for (kind, name), entry in registry.ENTRIES.items():
        assert tables[kind][name] is entry.impl
