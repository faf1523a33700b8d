from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from tritonlint.ruleset import Rule, load_rules

# Hypothesis profiles, chosen by HYPOTHESIS_PROFILE. "ci" (the default) is what `pytest` runs: derandomized,
# so a run on a fresh clone tries the same examples every time, with no example database in the tree.
# "dev" draws ten times as many, at random, and keeps failures in .hypothesis/ to replay them. The long
# fuzz run (100,000 modules and more) is bench/fuzz_long.py. Tests that size themselves from the profile
# read settings.default.max_examples.
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much, HealthCheck.large_base_example]
settings.register_profile("ci", max_examples=100, deadline=None, derandomize=True, database=None,
                          suppress_health_check=_QUIET)
settings.register_profile("dev", max_examples=1000, deadline=None, suppress_health_check=_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def rules() -> list[Rule]:
    return load_rules()
