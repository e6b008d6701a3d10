"""Hypothesis profiles: CI runs the same examples every time (derandomized, so a run fails only
on a change); `HYPOTHESIS_PROFILE=explore pytest` searches new examples, for finding bugs."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
