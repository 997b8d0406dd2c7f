"""`python -m pyjitc`: the same as the `pyjitc` command."""
import sys

from .cli import main

sys.exit(main())
