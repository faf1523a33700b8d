"""Every rule file's own `valid` and `invalid` examples, run as tests (like ast-grep's rule tests and
Fixit's VALID/INVALID lists)."""

from __future__ import annotations

import pytest

from tritonlint.ruleset import load_rules
from tritonlint.ruletest import check_example

RULES = load_rules()
CASES = [(rule, kind, index, example) for rule in RULES for kind in ("valid", "invalid")
         for index, example in enumerate(getattr(rule, kind))]


@pytest.mark.parametrize(("rule", "kind", "index", "example"), CASES,
                         ids=[f"{r.id}-{k}-{i}" for r, k, i, _ in CASES])
def test_example(rule, kind, index, example, rules):
    """The code path of `tritonlint test-rules`: flagged exactly at the `# expect` markers, messages
    filled in, fixes that parse, match `fixed` and are not redone by a second --fix."""
    assert check_example(rule, kind, example, rules) is None


def test_every_rule_has_enough_examples():
    for rule in RULES:
        assert len(rule.valid) >= 8 and len(rule.invalid) >= 8, f"{rule.id} needs at least 8 valid and 8 invalid examples"


def test_every_rule_has_a_full_doc():
    for rule in RULES:
        assert set(rule.doc) == {"what", "why", "example", "use_instead", "fix_safety", "evidence"}, rule.id
