"""Gradients of the statement fuzzer's programs (local arrays, views, in-place writes, helpers,
run-time loops and branches) against central finite differences of the NumPy program
(tests/fuzz_gradients.py; a fixed seed and a modest count, PYJITC_FUZZ_GRADIENTS programs).
`python -m tests.fuzz_gradients --count N --seed S` runs longer."""
import os
import warnings

import numpy as np

from tests import fuzz_gradients as fg
from tests.fuzz_statements import Gen


def test_gradients_of_random_statement_programs_match_finite_differences(tmp_path):
    gen = Gen(np.random.default_rng(20261125))
    counts = dict.fromkeys(fg.CLASSES, 0)
    problems = []
    host_loops = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # NumPy's own warnings (overflow, invalid) in the program
        for i in range(int(os.environ.get("PYJITC_FUZZ_GRADIENTS", "30"))):
            prog = gen.program()
            out = fg.run_gradient(prog, tmp_path, f"fuzz_gradients_suite_{i}")
            counts[out.kind] += 1
            host_loops += out.host_loops
            # a wrong gradient, an internal error, an unlocated refusal, an IREE failure (a
            # gradient IREE 3.13 can't compile is retried with guarded loops: autodiff/api.py)
            if out.kind in ("MISMATCH", "internal", "iree"):
                problems.append(f"{out.kind}:\n{prog.text}{prog.describe()}\n{out.detail}")
    assert not problems, f"{len(problems)} programs with wrong gradients or failures; the first three:\n\n" + "\n\n".join(problems[:3])
    assert counts["agree"] >= 10, counts             # the test proves something: most programs differentiate
    assert host_loops == 0, f"{host_loops} gradients fell back to host loops (IREE failed their native loop)"
