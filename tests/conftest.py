import os
import tempfile

from hypothesis import HealthCheck, settings

# Compiles dominate the suite's time; hypothesis draws from small pools of shapes so that
# module-level @jit functions hit their cache often, and deadlines are off (a miss compiles).
# The suite's verdict must not depend on luck: examples are derandomized (the same draws on every
# run, no example database). PYJITC_RANDOM=1 draws fresh examples (a long random run is opt-in:
# PYJITC_RANDOM=1 PYJITC_EXAMPLES=500 python -m pytest).
RANDOM = os.environ.get("PYJITC_RANDOM", "") not in ("", "0")
settings.register_profile("pyjitc", deadline=None, max_examples=int(os.environ.get("PYJITC_EXAMPLES", "20")),
                          derandomize=not RANDOM, database=None if not RANDOM else settings.default.database,
                          print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile("pyjitc")

# One compile cache for the whole test session, in a fresh directory: tests share executables
# (identical programs compile once) without touching the user's cache. pytest-xdist's workers
# inherit the directory the controller made, so they share it too (entries are written atomically).
if "PYJITC_TEST_SESSION_CACHE" not in os.environ:
    os.environ["PYJITC_TEST_SESSION_CACHE"] = tempfile.mkdtemp(prefix="pyjitc-test-cache-")
os.environ["PYJITC_CACHE_DIR"] = os.environ["PYJITC_TEST_SESSION_CACHE"]
