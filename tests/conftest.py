from __future__ import annotations

import pytest

from tritonlint.ruleset import Rule, load_rules


@pytest.fixture(scope="session")
def rules() -> list[Rule]:
    return load_rules()
