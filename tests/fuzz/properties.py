"""What must hold for every generated module, shared by the fast profile (tests/test_fuzz.py) and the long
run (bench/fuzz_long.py): each check raises AssertionError with what went wrong."""

from __future__ import annotations

import ast
import difflib
import json
import re
from pathlib import Path
from typing import Any

from tritonlint.config import Settings
from tritonlint.diagnostics import Diagnostic
from tritonlint.analysis.project import Project
from tritonlint import linter
from tritonlint.linter import FileLinter
from tritonlint.results import FileResult, FixMode
from tritonlint.reporting import RENDERERS, Style
from tritonlint.ruleset import Rule, load_rules
from tritonlint.runner import make_linter
from tritonlint.source import LineIndex, SourceError, decode_source

RULES = load_rules()
SETTINGS = Settings(target="sm_90", file_timeout=0)  # the timer measures the machine, not the code
REPORT = make_linter(RULES, SETTINGS, FixMode.NONE, unsafe=True)
FIX = make_linter(RULES, SETTINGS, FixMode.DIFF, unsafe=True)
SARIF_SCHEMA = next(iter(sorted(Path(__file__).resolve().parent.parent.glob("data/sarif*.json"))), None)
_GITHUB = re.compile(r"::(error|warning|notice) title=[^,:]*,file=[^,:]+,line=\d+(,col=\d+)?,endLine=\d+"
                     r"(,endColumn=\d+)?::[^\r\n]*")


def lint(linter: FileLinter, data: bytes, filename: str = "fuzz.py") -> tuple[str, FileResult] | None:
    """(text, result) for one module's bytes, or None when they cannot be decoded (a warning, not a lint)."""
    try:
        source = decode_source(data)
    except SourceError:
        return None
    return source.text, linter.lint_source(source, None, filename, Path(filename).stem, Project())


def check_module(data: bytes) -> dict[str, int]:
    """Every property for one module: no internal error, findings inside the file, well-formed reports,
    and fixes that parse, touch only what they were for and leave nothing for a second run. Returns what
    was seen, for the tallies."""
    linted = lint(FIX, data)  # --diff: the findings, and the fixed text if anything was fixed
    if linted is None:
        return {"undecodable": 1}
    text, fixed = linted
    assert fixed.internal_error is None, fixed.internal_error
    assert fixed.refused == [], fixed.refused
    new = fixed.fixed if fixed.fixed != text else None
    if new is None:
        diagnostics = fixed.diagnostics  # nothing fixed: these are the findings a plain run reports
    else:
        report = lint(REPORT, data)
        assert report is not None and report[1].internal_error is None, report and report[1].internal_error
        diagnostics = report[1].diagnostics
    check_locations(text, diagnostics)
    check_reports(diagnostics)
    seen = {"modules": 1, "findings": len(diagnostics)}
    for d in diagnostics:
        seen[d.code] = seen.get(d.code, 0) + 1
    if new is not None:
        try:
            ast.parse(new)
        except SyntaxError as exc:
            raise AssertionError(f"the fixed text does not parse: {exc}") from None
        assert fix_by_rounds(text, diagnostics) == new, "--fix round by round ends elsewhere than --fix"
        check_locations(new, fixed.diagnostics)
        again = FIX.lint_source(decode_source(new.encode("utf-8", "surrogatepass")), None, "fuzz.py", "fuzz", Project())
        assert again.internal_error is None, again.internal_error
        assert again.fixed in (None, new), "a second --fix changes the file again"
        seen.update(fixed_files=1, fixes=fixed.fixes_applied)
    return seen


def fix_by_rounds(text: str, diagnostics: list[Diagnostic]) -> str:
    """The text --fix leaves, one round of fixes at a time: each round keeps every line that none of its
    own fixes touches. (A fix may bring out a finding that was not there before, whose fix comes in the
    next round: TL005 putting H_KV in a descriptor's shape makes TL006 ask for H_KV in the key.)"""
    rounds = linter.MAX_FIX_ROUNDS
    linter.MAX_FIX_ROUNDS = 1  # the fix loop's own bound, so that each step is the loop's own round
    try:
        for _ in range(rounds):
            result = FIX.lint_source(decode_source(text.encode("utf-8", "surrogatepass")), None, "fuzz.py", "fuzz",
                                     Project())
            if result.fixed is None or result.fixed == text:
                break
            check_untouched(text, result.fixed, diagnostics)
            text = result.fixed
            diagnostics = result.diagnostics  # the findings on the new text, whose fixes the next round applies
    finally:
        linter.MAX_FIX_ROUNDS = rounds
    return text


def check_locations(text: str, diagnostics: list[Diagnostic]) -> None:
    lines = LineIndex(text)
    for d in diagnostics:
        where = f"{d.code} at {d.location} .. {d.end_location}"
        assert 0 <= d.start <= d.end <= len(text), f"{where}: offsets {d.start}..{d.end} outside the text"
        for position in (d.location, d.end_location):
            assert 1 <= position.row <= lines.row_count, f"{where}: row outside the file ({lines.row_count} rows)"
            assert 1 <= position.column <= len(lines.line(position.row)) + 1, f"{where}: column outside its line"
        assert (d.location.row, d.location.column) <= (d.end_location.row, d.end_location.column), where
        if d.code != "TL000":
            assert d.location == lines.position(d.start) and d.end_location == lines.position(d.end), where
        for span in d.related:
            assert 0 <= span.start <= span.end <= len(text), f"{where}: related span outside the text"
        for edit in d.fix.edits if d.fix else ():
            assert 0 <= edit.start <= edit.end <= len(text), f"{where}: fix edit outside the text"


def check_untouched(before: str, after: str, diagnostics: list[Diagnostic]) -> None:
    """Every line that no fix edit (nor a span its finding names as related) overlaps is still there."""
    lines = LineIndex(before)
    touched: set[int] = set()
    for d in diagnostics:
        if d.fix is None:
            continue
        spans = [(e.start, e.end) for e in d.fix.edits] + [(s.start, s.end) for s in d.related] + [(d.start, d.end)]
        for start, end in spans:
            touched.update(range(lines.row_of(start), lines.row_of(end) + 1))
    old, new = _rows(lines), _rows(LineIndex(after))
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            lost = [row for row in range(i1, i2) if row not in touched]
            assert not lost, f"--fix changed line {lost[0] + 1} that no fix touched: {old[lost[0]]!r}"


def _rows(lines: LineIndex) -> list[str]:
    """The lines as Python counts them (str.splitlines also breaks at form feeds and U+2028)."""
    ends = [*lines.starts[1:], len(lines.text)]
    return [lines.text[start:end] for start, end in zip(lines.starts, ends)]


def check_reports(diagnostics: list[Diagnostic], rules: list[Rule] = RULES) -> None:
    """JSON parses with the fields of each finding; SARIF is valid (against the schema when the repository
    has it, else its required keys); GitHub annotations are one well-formed command per finding."""
    findings = json.loads(RENDERERS["json"](diagnostics, rules=rules, unsafe=True) or "[]")
    assert len(findings) == len(diagnostics)
    for finding in findings:
        assert {"code", "message", "filename", "location", "end_location"} <= set(finding), finding
    sarif = json.loads(RENDERERS["sarif"](diagnostics, rules=rules, unsafe=True))
    check_sarif(sarif, len(diagnostics))
    github = RENDERERS["github"](diagnostics, rules=rules, unsafe=True)
    commands = github.split("\n") if github else []
    assert len(commands) == len(diagnostics), "one annotation per finding, each on one line"
    for command in commands:
        assert _GITHUB.fullmatch(command), f"malformed GitHub annotation: {command!r}"
    for name in ("full", "concise"):
        RENDERERS[name](diagnostics, style=Style(False), sources=lambda _: None, unsafe=True)


_validator: Any = None


def check_sarif(log: dict[str, Any], results: int) -> None:
    global _validator
    if SARIF_SCHEMA is not None:
        if _validator is None:
            import jsonschema

            schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
            _validator = jsonschema.validators.validator_for(schema)(schema)
        errors = sorted(_validator.iter_errors(log), key=str)
        assert not errors, f"SARIF does not match {SARIF_SCHEMA.name}: {errors[0].message}"
    assert log["version"] == "2.1.0" and isinstance(log["runs"], list) and len(log["runs"]) == 1
    run = log["runs"][0]
    assert isinstance(run["tool"]["driver"]["name"], str)
    assert len(run["results"]) == results
    for result in run["results"]:
        assert isinstance(result["message"]["text"], str) and result["message"]["text"]
        for location in result["locations"]:
            region = location["physicalLocation"]["region"]
            assert isinstance(location["physicalLocation"]["artifactLocation"]["uri"], str)
            assert region["startLine"] >= 1 and region.get("startColumn", 1) >= 1
            assert region.get("endLine", region["startLine"]) >= region["startLine"]
