"""`tritonlint test-rules`: every rule file's `valid` and `invalid` examples run through the whole rule
(pattern, conditions, message, fix), as `ast-grep test` does. The project's own rule tests use it too."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from tritonlint.analysis.project import Project
from tritonlint.config import Settings
from tritonlint.fixes import apply_fixes
from tritonlint.results import FileResult, FixMode
from tritonlint.ruleset import EXPECT_MARKER, Example, Rule
from tritonlint.runner import make_linter
from tritonlint.source import decode_source

EXAMPLE_TARGET = "sm_90"  # examples are written for Hopper: rules such as TL003 apply from sm_90 on


@dataclass(frozen=True)
class Failure:
    path: str
    rule: str
    kind: str
    index: int
    problem: str

    def __str__(self) -> str:
        return f"{self.path}: {self.rule} tests.{self.kind}[{self.index}]: {self.problem}"


def lint_example(code: str, rules: list[Rule], rule_id: str, mode: FixMode = FixMode.NONE,
                 options: dict[str, Any] | None = None) -> FileResult:
    settings = Settings(select=[rule_id], target=EXAMPLE_TARGET, options=dict(options or {}))
    linter = make_linter(rules, settings, mode, unsafe=True)
    return linter.lint_source(decode_source(code.encode()), None, "example.py", "example", Project())


def expected_rows(code: str, rule_id: str) -> list[int]:
    return [row for row, line in enumerate(code.splitlines(), start=1) if rule_id in EXPECT_MARKER.findall(line)]


def check_example(rule: Rule, kind: str, example: Example, rules: list[Rule]) -> str | None:
    """What is wrong with one example, or None."""
    result = lint_example(example.code, rules, rule.id, options=example.options)
    if result.internal_error:
        return result.internal_error
    found = [d for d in result.diagnostics if d.code == rule.id]
    rows = sorted(d.location.row for d in found)
    if kind == "valid":
        return f"a valid example is flagged at row{'s' * (len(rows) > 1)} {', '.join(map(str, rows))}" if rows else None
    wanted = expected_rows(example.code, rule.id)
    if rows != wanted:
        return f"flagged at rows {rows or 'none'}, the `# expect` markers say {wanted}"
    for d in found:
        if "$" in d.message.replace("$$", "") or ("{" in d.message and "}" in d.message.split("{", 1)[1]):
            return f"the message has an unfilled placeholder: {d.message}"
        if d.fix is not None and d.fix.applicability == "display-only" and d.fix.edits:
            suggested = apply_fixes(example.code, [d.fix])[0]
            try:  # a suggestion is pasted by hand: it must parse where it is shown
                ast.parse(suggested)
            except SyntaxError as exc:
                return f"the suggested code does not parse: {exc.msg} at row {exc.lineno}"
    if not any(d.fix is not None and d.fix.edits and d.fix.applicability != "display-only" for d in found):
        return None if example.fixed is None else "a `fixed` text is given but no finding has a fix"
    fixed_result = lint_example(example.code, rules, rule.id, FixMode.DIFF, example.options)
    fixed = fixed_result.fixed if fixed_result.fixed is not None else example.code
    try:
        ast.parse(fixed)
    except SyntaxError as exc:
        return f"the fixed text does not parse: {exc.msg} at row {exc.lineno}"
    if example.fixed is not None and fixed != example.fixed:
        return "the fixed text differs from the example's `fixed`"
    after = lint_example(fixed, rules, rule.id, options=example.options)
    if any(d.fix is not None and d.fix.edits and d.fix.applicability != "display-only" for d in after.diagnostics):
        return "after --fix a finding with a fix is still reported"
    fixable = sum(1 for d in found if d.fix is not None and d.fix.edits and d.fix.applicability != "display-only")
    if len(after.diagnostics) != len(result.diagnostics) - fixable:
        return f"--fix left {len(after.diagnostics)} findings, {len(result.diagnostics) - fixable} expected"
    if lint_example(fixed, rules, rule.id, FixMode.DIFF, example.options).fixed is not None:
        return "a second --fix changes the text again"
    return None


def run_examples(selected: list[Rule], rules: list[Rule]) -> tuple[int, list[Failure]]:
    """(examples run, failures) for the selected rules, linted with every rule loaded."""
    count, failures = 0, []
    for rule in selected:
        for kind in ("valid", "invalid"):
            for index, example in enumerate(getattr(rule, kind)):
                count += 1
                problem = check_example(rule, kind, example, rules)
                if problem:
                    failures.append(Failure(rule.path, rule.id, kind, index, problem))
    return count, failures
