"""The fast subset of the real-code corpus (corpus/entries.py, tagged "fast"): functions other
people wrote, compiled unchanged, equal to NumPy on results and on every argument afterwards.
`python -m corpus.run` runs the whole corpus (the `corpus` extra installs its packages)."""
import importlib.util

import pytest

from corpus.entries import ENTRIES
from corpus.run import run_entry

FAST = [e for e in ENTRIES if "fast" in e.tags]


@pytest.mark.parametrize("entry", FAST, ids=[e.path for e in FAST])
def test_corpus_function_compiles_unchanged_and_equals_numpy(entry):
    module = entry.path.split(":")[0]
    if importlib.util.find_spec(module.split(".")[0]) is None:
        pytest.skip(f"{entry.package} is not installed (pip install -e '.[corpus]')")
    outcome = run_entry(entry, timing=False, numba_too=False)
    assert outcome.status == "ok", f"{outcome.status}: {outcome.detail}"


def test_the_corpus_names_at_least_120_functions_each_once():
    paths = [e.path for e in ENTRIES]
    assert len(paths) >= 120
    assert len(set(paths)) == len(paths)
