"""docs/rules/ID.md are generated from the rule files (python -m tritonlint.docs) and the findings link to them."""

from __future__ import annotations

import json

from tests.helpers import ROOT, run_cli
from tests.test_cli import K_LOOP
from tritonlint import docs


def test_rule_pages_are_up_to_date():
    assert docs.main(["--check", str(ROOT / "docs" / "rules")]) == 0, "run `python -m tritonlint.docs`"


def test_findings_and_sarif_link_to_the_rule_pages(tmp_path):
    (tmp_path / "proj.py").write_text(K_LOOP)
    (tmp_path / "broken.py").write_text("def f(:\n")
    findings = json.loads(run_cli(".", "--output-format", "json", cwd=tmp_path).stdout)
    base = "https://github.com/tritonlint/tritonlint/blob/main/docs/rules/"
    assert {d["code"]: d["url"] for d in findings} == {"TL000": base + "TL000.md", "TL001": base + "TL001.md"}
    log = json.loads(run_cli(".", "--output-format", "sarif", cwd=tmp_path).stdout)
    rules = {r["id"]: r.get("helpUri") for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["TL001"] == base + "TL001.md" and rules["TL000"] == base + "TL000.md"
    assert all((ROOT / "docs" / "rules" / f"{code}.md").is_file() for code in rules)
