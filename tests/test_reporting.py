"""The reporters on hand-made findings: what the console script cannot easily produce (newlines and `%`
in messages, absolute and odd paths, zero-width spans) and the exact text of summaries and listings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.review_support import sarif_errors
from tritonlint.diagnostics import Diagnostic, Edit, Fix, Position, syntax_error
from tritonlint.reporting import color_enabled, fix_listing, github, sarif, statistics, summary, unified_diff, would_fix


def finding(code: str = "TL001", severity: str = "warning", message: str = "message", filename: str = "src/k.py",
            start: tuple[int, int] = (12, 5), end: tuple[int, int] = (12, 31), fix: Fix | None = None) -> Diagnostic:
    return Diagnostic(code=code, name=f"rule-{code.lower()}", severity=severity, category="performance",
                      message=message, filename=filename, location=Position(*start), end_location=Position(*end),
                      start=0, end=0, fix=fix)


def edit(content: str, start: tuple[int, int], end: tuple[int, int]) -> Edit:
    return Edit(0, 0, content, Position(*start), Position(*end))


def test_github_line_shape_and_severity_mapping():
    lines = github([finding(), finding(code="TL002", severity="error"), finding(code="TL003", severity="info")])
    properties = "file=src/k.py,line=12,col=5,endLine=12,endColumn=31"
    assert lines.splitlines() == [
        f"::warning title=tritonlint (TL001),{properties}::src/k.py:12:5: TL001 message",
        f"::error title=tritonlint (TL002),{properties}::src/k.py:12:5: TL002 message",
        f"::notice title=tritonlint (TL003),{properties}::src/k.py:12:5: TL003 message",
    ]


def test_github_escapes_data_and_properties():
    d = finding(message="50% of rows\r\nare written, twice: see below", filename="dir/a,b:c%.py")
    assert github([d]) == (
        "::warning title=tritonlint (TL001),file=dir/a%2Cb%3Ac%25.py,line=12,col=5,endLine=12,endColumn=31"
        "::dir/a,b:c%25.py:12:5: TL001 50%25 of rows%0D%0Aare written, twice: see below")


def test_github_leaves_out_columns_on_a_multi_line_span():
    assert github([finding(start=(8, 5), end=(9, 18))]) == (
        "::warning title=tritonlint (TL001),file=src/k.py,line=8,endLine=9::src/k.py:8:5: TL001 message")


def test_github_prints_nothing_without_findings():
    assert github([]) == ""


def _run(log: str) -> dict:
    parsed = json.loads(log)
    assert sarif_errors(parsed) == []
    return parsed["runs"][0]


def test_sarif_paths_become_uris():
    absolute = Path("/opt/kernels/my kernel.py")
    run = _run(sarif([finding(filename="src/my kernel#1.py"), finding(filename=str(absolute))], rules=[]))
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]]
    assert uris == [{"uri": "src/my%20kernel%231.py", "uriBaseId": "%SRCROOT%"}, {"uri": absolute.as_uri()}]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == Path.cwd().as_uri().rstrip("/") + "/"


def test_sarif_syntax_error_and_insertions():
    insertion = Fix("safe", "Insert", (edit(", loop_unroll_factor=1", (3, 20), (3, 20)),))
    run = _run(sarif([syntax_error("k.py", "invalid syntax", 2, 7), finding(fix=insertion)], rules=[]))
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["TL000", "TL001"]
    syntax, fixed = run["results"]
    assert syntax["ruleIndex"] == 0 and syntax["level"] == "error"
    # a finding without a span points at the rest of its line, not at an empty insertion point
    assert syntax["locations"][0]["physicalLocation"]["region"] == {"startLine": 2, "startColumn": 7, "endLine": 2}
    (replacement,) = fixed["fixes"][0]["artifactChanges"][0]["replacements"]
    assert replacement == {"deletedRegion": {"startLine": 3, "startColumn": 20, "endLine": 3, "endColumn": 20},
                           "insertedContent": {"text": ", loop_unroll_factor=1"}}
    assert fixed["fixes"][0]["properties"] == {"applicability": "safe"}


def test_sarif_without_findings_validates():
    run = _run(sarif([], rules=[]))
    assert run["results"] == [] and run["columnKind"] == "unicodeCodePoints"


def test_statistics_marks_like_ruff():
    safe = Fix("safe", "fix", (edit("x", (1, 1), (1, 2)),))
    unsafe = Fix("unsafe", "fix", (edit("x", (1, 1), (1, 2)),))
    findings = [finding("TL001", fix=safe), finding("TL001", fix=safe), finding("TL002", fix=unsafe),
                finding("ACME010")]
    assert statistics(findings).splitlines() == [
        "2\tTL001  \t[*] rule-tl001",
        "1\tACME010\t[ ] rule-acme010",
        "1\tTL002  \t[ ] rule-tl002",
    ]
    assert statistics(findings, unsafe=True).splitlines()[2] == "1\tTL002  \t[*] rule-tl002"
    assert statistics([finding("TL002")]) == "1\tTL002\trule-tl002"  # no marks when nothing is fixable
    rows = json.loads(statistics(findings, as_json=True))
    assert rows[0] == {"code": "TL001", "name": "rule-tl001", "count": 2, "fixable": True, "fixable_count": 2}


def test_summary_lines():
    safe = Fix("safe", "fix", (edit("x", (1, 1), (1, 2)),))
    unsafe = Fix("unsafe", "fix", (edit("x", (1, 1), (1, 2)),))
    assert summary([], 0, False) == "All checks passed!"
    assert summary([], 2, False) == "Found 2 findings (2 fixed, 0 remaining)."
    assert summary([finding(fix=safe), finding(severity="info", fix=unsafe), finding(severity="info")], 0, False) == (
        "Found 3 findings (1 warning, 2 info).\n"
        "[*] 1 fixable with `--fix` (1 unsafe fix available with `--fix --unsafe-fixes`).")
    assert summary([finding(fix=unsafe)], 1, False) == (
        "Found 2 findings (1 fixed, 1 remaining).\n1 unsafe fix available with `--fix --unsafe-fixes`.")
    assert summary([finding(fix=unsafe)], 0, True) == "Found 1 finding (1 warning).\n[*] 1 fixable with `--fix`."


def test_fix_listing_and_would_fix():
    listing = fix_listing([("a.py", {"TL001": 2}), ("b.py", {}), ("c.py", {"TL002": 1, "TL001": 1})],
                          {"TL001": "static-range-long-unroll", "TL002": "other"})
    assert listing.splitlines() == [
        "Fixed 4 findings:",
        "- a.py:",
        "    2 × TL001 (static-range-long-unroll)",
        "- c.py:",
        "    1 × TL001 (static-range-long-unroll)",
        "    1 × TL002 (other)",
    ]
    assert fix_listing([("a.py", {})], {}) == ""
    assert would_fix(1, 0) == "Would fix 1 finding."
    assert would_fix(0, 2) == "No fixes available (2 additional fixes available with `--unsafe-fixes`)."


def test_unified_diff_splits_lines_only_at_newline():
    before = "a\n\x0cb\nc\rd\nlast"
    after = "a\n\x0cb\nc\rd\nLAST"
    assert unified_diff("k.py", before, after) == (
        "--- a/k.py\n+++ b/k.py\n@@ -1,4 +1,4 @@\n a\n \x0cb\n c\rd\n"
        "-last\n\\ No newline at end of file\n+LAST\n\\ No newline at end of file\n")
    assert unified_diff("k.py", "same\n", "same\n") == ""
    assert unified_diff("my k.py", "a\n", "b\n").startswith("--- a/my k.py\t\n+++ b/my k.py\t\n@@ -1 +1 @@\n")


@pytest.mark.parametrize(("choice", "tty", "env", "expected"), [
    ("auto", True, {}, True),
    ("auto", False, {}, False),
    ("auto", True, {"NO_COLOR": "1"}, False),
    ("auto", True, {"NO_COLOR": ""}, True),  # an empty NO_COLOR is unset (no-color.org)
    ("auto", False, {"FORCE_COLOR": "1"}, True),
    ("auto", False, {"FORCE_COLOR": ""}, False),
    ("auto", False, {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
    ("always", False, {"NO_COLOR": "1"}, True),
    ("never", True, {"FORCE_COLOR": "1"}, False),
])
def test_color_decision(choice, tty, env, expected):
    assert color_enabled(choice, tty, env) is expected
