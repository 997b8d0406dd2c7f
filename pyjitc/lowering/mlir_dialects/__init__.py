"""Empty Python modules for the MLIR dialects pyjitc emits that the iree-base-compiler wheel has
no Python module for (StableHLO, CHLO).

Each time the MLIR bindings wrap an op (`value.owner`), they look for its dialect's Python module
under their search prefixes, and a failed import is not remembered: every `owner` of a StableHLO op
retried `import iree.compiler.dialects.stablehlo`, 19 us a call (150 us under pytest's import
hooks), which was most of the lowering time of large modules (a 300-element sort network: 4 s).
With this package on the search path the lookup succeeds once and is cached (0.15 us a call);
these modules define no op classes, so ops stay generic `OpView`s as before."""

PREFIX = __name__


def register() -> None:
    """Adds this package to the MLIR bindings' dialect search prefixes (once per process)."""
    from iree.compiler._mlir_libs import _mlir
    if PREFIX not in _mlir.globals.dialect_search_modules:
        _mlir.globals.append_dialect_search_prefix(PREFIX)
