import os

from hypothesis import HealthCheck, settings

# Compiles dominate the suite's time; hypothesis draws from small pools of shapes so that
# module-level @jit functions hit their cache often, and deadlines are off (a miss compiles).
settings.register_profile("pyjitc", deadline=None, max_examples=int(os.environ.get("PYJITC_EXAMPLES", "20")),
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile("pyjitc")
