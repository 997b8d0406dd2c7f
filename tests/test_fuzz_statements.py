"""Differential fuzzing of statement programs in the suite: local arrays, views, writes through
views, helpers writing into their parameters, loops, branches, containers, aliased arguments
(tests/fuzz_statements.py; a fixed seed and a modest count, PYJITC_FUZZ_STATEMENTS programs).
`python -m tests.fuzz_statements --minutes N --seed S` runs longer."""
import os

import numpy as np

from tests import fuzz_statements as fs


def test_random_statement_programs_agree_with_numpy_or_are_refused_with_a_location(tmp_path):
    gen = fs.Gen(np.random.default_rng(20261214))
    problems = []
    for i in range(int(os.environ.get("PYJITC_FUZZ_STATEMENTS", "40"))):
        prog = gen.program()
        outcome = fs.run_program(prog, tmp_path, f"fuzz_statements_suite_{i}")
        # agree, a located refusal, or NumPy and pyjitc both raising. A wrong value, an argument
        # left different from NumPy's, results sharing memory differently, an internal error, or an
        # IREE failure (CompileError, or IREE's runtime refusing the program, or failing a native
        # loop before the host-loop fallback) is a failure.
        if outcome.kind in ("MISMATCH", "ALIAS", "internal", "iree", "native"):
            problems.append(f"{outcome.kind}:\n{prog.text}{prog.describe()}\n{outcome.detail}")
    assert not problems, f"{len(problems)} programs differ from NumPy; the first three:\n\n" + "\n\n".join(problems[:3])


def test_random_statement_programs_with_run_time_sizes_agree_with_numpy(tmp_path, monkeypatch):
    # the same programs under @jit(dynamic=True): compiled with symbolic sizes where they can
    # be (else a located refusal), checked at the sizes they were compiled for
    monkeypatch.setattr(fs, "DYNAMIC", True)
    gen = fs.Gen(np.random.default_rng(20261125))
    problems, kinds = [], {}
    for i in range(int(os.environ.get("PYJITC_FUZZ_STATEMENTS_DYNAMIC", "25"))):
        prog = gen.program()
        outcome = fs.run_program(prog, tmp_path, f"fuzz_statements_dynamic_{i}")
        kinds[outcome.kind] = kinds.get(outcome.kind, 0) + 1
        if outcome.kind in ("MISMATCH", "ALIAS", "internal", "iree", "native"):
            problems.append(f"{outcome.kind}:\n{prog.text}{prog.describe()}\n{outcome.detail}")
    assert not problems, f"{len(problems)} programs differ from NumPy; the first three:\n\n" + "\n\n".join(problems[:3])
    assert kinds.get("agree", 0) >= 10, kinds   # most compile with run-time sizes and agree
