"""The linter against the fixture corpus: it reports each fixture's rule exactly at slow.py's
`# expect:` markers and nowhere in fast.py, and `--fix` on a copy of slow.py gives code that parses, is no
longer flagged and computes the same result in the Triton interpreter."""

from __future__ import annotations

import ast
import json
import shutil

import pytest

from fixtures.loader import load_meta
from tests.helpers import run_cli
from tests.test_fixtures import FIXTURE_PARAMS, cpu_check, expected_findings
from tritonlint.ruleset import load_rules

RULES = {rule.id: rule for rule in load_rules()}


def _findings(path, rule: str) -> list[dict]:
    result = run_cli(str(path), "--select", rule, "--target", "sm_90", "--output-format", "json")
    assert result.returncode in (0, 1), result.stderr
    return [f for f in json.loads(result.stdout) if f["code"] == rule]


def _rule_of(fixture_dir) -> str:
    rule = load_meta(fixture_dir)["rule"]
    if rule not in RULES:
        pytest.skip(f"{rule} is not implemented yet")
    return rule


@pytest.mark.parametrize("fixture_dir", FIXTURE_PARAMS)
def test_linter_reports_exactly_the_markers(fixture_dir):
    rule = _rule_of(fixture_dir)
    expected = expected_findings(fixture_dir)
    slow_rows = sorted(f["location"]["row"] for f in _findings(fixture_dir / "slow.py", rule))
    assert slow_rows == sorted(row for row, _ in expected["slow"])
    assert _findings(fixture_dir / "fast.py", rule) == []


@pytest.mark.interpreter
@pytest.mark.parametrize("fixture_dir", FIXTURE_PARAMS)
def test_fix_of_slow_parses_is_clean_and_computes_the_same(fixture_dir, tmp_path):
    rule = _rule_of(fixture_dir)
    if RULES[rule].fix is None or RULES[rule].fix.applicability == "display-only":
        pytest.skip(f"{rule} has no applicable fix")
    if not expected_findings(fixture_dir)["slow"]:
        pytest.skip("slow.py is a look-alike the rule must not flag")
    copy = tmp_path / fixture_dir.name
    shutil.copytree(fixture_dir, copy)
    slow = copy / "slow.py"
    before = slow.read_text()
    fixed = run_cli(str(slow), "--select", rule, "--target", "sm_90", "--fix", "--unsafe-fixes")
    assert fixed.returncode in (0, 1), fixed.stderr
    after = slow.read_text()
    if after == before:
        pytest.skip(f"{rule} offers no fix for this fixture (see the finding's note)")
    ast.parse(after)
    assert not [f for f in _findings(slow, rule) if f["fix"] and f["fix"]["applicability"] != "display-only"]
    result = cpu_check(copy)
    assert result.get("error") is None, result.get("error")
    assert result["sides"]["slow"]["correct"], f"the fixed slow.py is wrong on the CPU: {result['sides']['slow']}"
