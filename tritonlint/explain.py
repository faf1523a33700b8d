"""`tritonlint rule ID` and `tritonlint rules`: each rule's doc in one template, like ruff's."""

from __future__ import annotations

from typing import Any

from tritonlint import evidence
from tritonlint.ruleset import Rule

_FIX_LINE = {
    "safe": "Fix is available (safe): `--fix` applies it.",
    "unsafe": "Fix is available (unsafe): `--fix --unsafe-fixes` applies it.",
    "display-only": "A suggestion is shown; it is never applied automatically.",
}


def explain(rule: Rule) -> str:
    doc = rule.doc
    parts = [
        f"# {rule.name} ({rule.id})",
        "",
        f"Severity: {rule.severity}. Category: {rule.category}.",
        _FIX_LINE[rule.fix.applicability] if rule.fix else "No fix is available.",
        "",
        "## What it does",
        doc["what"],
        "",
        "## Why is this bad?",
        doc["why"],
    ]
    if "example" in doc:
        parts += ["", "## Example", "```python", doc["example"], "```"]
    if "use_instead" in doc:
        parts += ["", "Use instead:", "```python", doc["use_instead"], "```"]
    if "fix_safety" in doc:
        parts += ["", "## Fix safety", doc["fix_safety"]]
    if rule.options:
        parts += ["", "## Options"]
        parts += [f"- `{o.name}` ({o.type}, default {o.default!r}): {o.doc}" for o in rule.options.values()]
    parts += ["", "## Evidence"]
    if "evidence" in doc:
        parts += [doc["evidence"], ""]
    if rule.matcher:  # a rule file's rule; the built-in ones (TL000, TL900) have no fixtures
        parts.append(evidence.evidence_section(rule.id))
    return "\n".join(parts).rstrip() + "\n"


def rule_summary(rule: Rule) -> dict[str, Any]:
    return {
        "code": rule.id,
        "name": rule.name,
        "severity": rule.severity,
        "category": rule.category,
        "fix": rule.fix.applicability if rule.fix else None,
        "summary": rule.summary,
        "explanation": explain(rule),
        "options": {o.name: {"type": o.type, "default": o.default, "doc": o.doc} for o in rule.options.values()},
        "evidence": evidence.results_for(rule.id),
        "url": rule.url,
    }


def rules_table(rules: list[Rule]) -> str:
    rows = [(r.id, r.name, r.severity, r.category, (r.fix.applicability if r.fix else "-")) for r in rules]
    widths = [max(len(row[i]) for row in rows + [("code", "name", "severity", "category", "fix")]) for i in range(5)]
    header = ("code", "name", "severity", "category", "fix")
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)
