"""Every rule file's own `valid` and `invalid` examples, run as tests (like ast-grep's rule tests and
Fixit's VALID/INVALID lists)."""

from __future__ import annotations

import ast

import pytest

from tests.helpers import lint_code
from tritonlint.linter import FixMode
from tritonlint.ruleset import EXPECT_MARKER, load_rules

RULES = load_rules()
CASES = [(rule, kind, index, example) for rule in RULES for kind in ("valid", "invalid")
         for index, example in enumerate(getattr(rule, kind))]


def _expected_rows(code: str, rule_id: str) -> list[int]:
    return [row for row, line in enumerate(code.splitlines(), start=1)
            if rule_id in EXPECT_MARKER.findall(line)]


@pytest.mark.parametrize(("rule", "kind", "index", "example"), CASES,
                         ids=[f"{r.id}-{k}-{i}" for r, k, i, _ in CASES])
def test_example(rule, kind, index, example, rules):
    result = lint_code(example.code, rules, select=[rule.id])
    assert result.internal_error is None, result.internal_error
    rows = sorted(d.location.row for d in result.diagnostics if d.code == rule.id)
    if kind == "valid":
        assert rows == [], f"{rule.id} flagged a valid example at rows {rows}"
        return
    assert rows == _expected_rows(example.code, rule.id)
    for diagnostic in result.diagnostics:
        assert "{" not in diagnostic.message or "}" not in diagnostic.message.split("{", 1)[1], diagnostic.message
        assert "$" not in diagnostic.message.replace("$$", ""), diagnostic.message


FIXABLE = [(rule, index, example) for rule in RULES if rule.fixable for index, example in enumerate(rule.invalid)]


@pytest.mark.parametrize(("rule", "index", "example"), FIXABLE, ids=[f"{r.id}-invalid-{i}" for r, i, _ in FIXABLE])
def test_fix_parses_and_resolves(rule, index, example, rules):
    """--fix (with unsafe fixes) gives code that parses, and what it fixed is no longer flagged;
    a second --fix changes nothing."""
    unsafe = True  # a finding may carry an unsafe fix even where the rule's default is safe
    before = lint_code(example.code, rules, select=[rule.id])
    fixable_before = [d for d in before.diagnostics if d.fix is not None and d.fix.edits]
    result = lint_code(example.code, rules, select=[rule.id], mode=FixMode.DIFF, unsafe=unsafe)
    fixed = result.fixed if result.fixed is not None else example.code
    ast.parse(fixed)
    if example.fixed is not None:
        assert fixed == example.fixed
    after = lint_code(fixed, rules, select=[rule.id])
    still_fixable = [d for d in after.diagnostics if d.fix is not None and d.fix.edits]
    assert not still_fixable
    assert len(after.diagnostics) == len(before.diagnostics) - len(fixable_before)
    again = lint_code(fixed, rules, select=[rule.id], mode=FixMode.DIFF, unsafe=unsafe)
    assert again.fixed is None


def test_every_rule_has_enough_examples():
    for rule in RULES:
        assert len(rule.valid) >= 8 and len(rule.invalid) >= 8, f"{rule.id} needs at least 8 valid and 8 invalid examples"


def test_every_rule_has_a_full_doc():
    for rule in RULES:
        assert set(rule.doc) == {"what", "why", "example", "use_instead", "fix_safety", "evidence"}, rule.id
