"""Test-wide settings.

Under CI (the ``CI`` environment variable set, as ``.ci/run`` has it) hypothesis runs
derandomized and without its example database, so a landing is decided by the same
examples every time; locally every run explores new ones (the fuzzers found real bugs
that way).
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
