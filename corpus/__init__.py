"""A corpus of NumPy functions written by other people for their own purposes, called unchanged
through pyjitc.jit: the yardstick for real code (issue 16). The repo holds only the list of import
paths and the input builders (entries.py) and the runner (run.py); the code itself comes from the
packages of the `corpus` extra."""
