"""Render findings: full (code frames, like ruff), concise, json (ruff's shape), github (workflow
commands), sarif (2.1.0). Reporters see only Diagnostics and rule metadata, never rule internals."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tritonlint import __version__
from tritonlint.diagnostics import Diagnostic, Position
from tritonlint.ruleset import Rule

FORMATS = ("full", "concise", "json", "github", "sarif")
INFORMATION_URI = "https://github.com/tritonlint/tritonlint"


class Style:
    """ANSI colour, used only when writing to a terminal and NO_COLOR is unset."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled else text

    def bold(self, text: str) -> str:
        return self(text, "1")

    def severity(self, text: str, severity: str) -> str:
        return self(text, {"error": "1;31", "warning": "1;33", "info": "1;36"}.get(severity, "1"))


def _fixable_mark(diagnostic: Diagnostic) -> str:
    fix = diagnostic.fix
    return " [*]" if fix is not None and fix.applicability == "safe" and fix.edits else ""


def concise(diagnostics: list[Diagnostic], style: Style, **_: Any) -> str:
    lines = []
    for d in diagnostics:
        where = f"{d.filename}:{d.location.row}:{d.location.column}:"
        lines.append(f"{style.bold(where)} {style.severity(d.code, d.severity)}{_fixable_mark(d)} {d.message}")
    return "\n".join(lines)


def full(diagnostics: list[Diagnostic], style: Style, sources: Callable[[str], list[str] | None], **_: Any) -> str:
    blocks = []
    for d in diagnostics:
        block = [f"{style.severity(d.code, d.severity)}{_fixable_mark(d)} {style.bold(d.message)}",
                 f" --> {d.filename}:{d.location.row}:{d.location.column}"]
        lines = sources(d.filename)
        if lines and 1 <= d.location.row <= len(lines):
            block.extend(_frame(d, lines, style))
        if d.fix is not None:
            label = {"safe": "help", "unsafe": "help (unsafe fix)", "display-only": "suggestion"}[d.fix.applicability]
            block.append(f"{label}: {d.fix.message}")
            if d.fix.applicability == "display-only":
                for edit in d.fix.edits:
                    block.extend(f"    {line}" for line in edit.content.splitlines())
        block.extend(f"note: {note}" for note in d.notes)
        blocks.append("\n".join(block))
    return "\n\n".join(blocks)


def _frame(d: Diagnostic, lines: list[str], style: Style) -> list[str]:
    first = max(1, d.location.row - 1)
    last = min(len(lines), d.location.row + 1)
    width = len(str(last))
    gutter = " " * width + " |"
    out = [gutter]
    for row in range(first, last + 1):
        text = lines[row - 1].expandtabs(4) if "\t" not in lines[row - 1] else lines[row - 1].replace("\t", " ")
        out.append(f"{row:>{width}} | {text}")
        if row == d.location.row:
            start = d.location.column - 1
            end = d.end_location.column - 1 if d.end_location.row == row else len(lines[row - 1])
            carets = "^" * max(1, end - start)
            out.append(f"{gutter} {' ' * start}{style.severity(carets + ' ' + d.severity, d.severity)}")
    out.append(gutter)
    return out


def _position(position: Position) -> dict[str, int]:
    return {"row": position.row, "column": position.column}


def as_json_object(d: Diagnostic) -> dict[str, Any]:
    fix = None
    if d.fix is not None:
        fix = {
            "applicability": d.fix.applicability,
            "message": d.fix.message,
            "edits": [{"content": e.content, "location": _position(e.location),
                       "end_location": _position(e.end_location)} for e in d.fix.edits],
        }
    return {
        "code": d.code,
        "name": d.name,
        "severity": d.severity,
        "category": d.category,
        "message": d.message,
        "filename": d.filename,
        "location": _position(d.location),
        "end_location": _position(d.end_location),
        "fix": fix,
        "url": d.url,
    }


def json_format(diagnostics: list[Diagnostic], **_: Any) -> str:
    return json.dumps([as_json_object(d) for d in diagnostics], indent=2)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(diagnostics: list[Diagnostic], **_: Any) -> str:
    lines = []
    for d in diagnostics:
        command = {"error": "error", "warning": "warning"}.get(d.severity, "notice")
        props = [f"title={_escape_property(f'tritonlint ({d.code})')}", f"file={_escape_property(d.filename)}",
                 f"line={d.location.row}"]
        single_line = d.end_location.row == d.location.row
        if single_line:
            props.append(f"col={d.location.column}")
        props.append(f"endLine={d.end_location.row}")
        if single_line:
            props.append(f"endColumn={d.end_location.column}")
        text = f"{d.filename}:{d.location.row}:{d.location.column}: {d.code} {d.message}"
        lines.append(f"::{command} {','.join(props)}::{_escape_data(text)}")
    return "\n".join(lines)


_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def sarif(diagnostics: list[Diagnostic], rules: list[Rule], **_: Any) -> str:
    codes = sorted({d.code for d in diagnostics} | {r.id for r in rules})
    by_id = {r.id: r for r in rules}
    descriptors = []
    for code in codes:
        rule = by_id.get(code)
        if rule is None:  # TL000
            descriptors.append({"id": code, "name": "syntax-error",
                                "shortDescription": {"text": "The file does not parse"},
                                "fullDescription": {"text": "A file with a syntax error cannot be linted."},
                                "help": {"text": "Fix the syntax error."},
                                "defaultConfiguration": {"level": "error"}})
            continue
        descriptor = {
            "id": rule.id,
            "name": rule.name,
            "shortDescription": {"text": rule.doc["what"].split("\n\n")[0].replace("\n", " ").strip()},
            "fullDescription": {"text": rule.doc["why"].replace("\n", " ").strip()},
            "help": {"text": rule_markdown(rule), "markdown": rule_markdown(rule)},
            "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
            "properties": {"category": rule.category, "tags": [rule.category]},
        }
        if rule.url:
            descriptor["helpUri"] = rule.url
        descriptors.append(descriptor)
    index = {code: i for i, code in enumerate(codes)}
    results = []
    for d in diagnostics:
        uri = Path(d.filename).as_posix()
        location = {"physicalLocation": {
            "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": d.location.row, "startColumn": d.location.column,
                       "endLine": d.end_location.row, "endColumn": d.end_location.column},
        }}
        result: dict[str, Any] = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": _SARIF_LEVEL[d.severity],
            "message": {"text": d.message},
            "locations": [location],
        }
        if d.fix is not None and d.fix.edits:
            result["fixes"] = [{
                "description": {"text": d.fix.message},
                "artifactChanges": [{
                    "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
                    "replacements": [{
                        "deletedRegion": {"startLine": e.location.row, "startColumn": e.location.column,
                                          "endLine": e.end_location.row, "endColumn": e.end_location.column},
                        "insertedContent": {"text": e.content},
                    } for e in d.fix.edits],
                }],
            }]
        results.append(result)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "tritonlint", "version": __version__, "semanticVersion": __version__,
                                "informationUri": INFORMATION_URI, "rules": descriptors}},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
            "results": results,
        }],
    }
    return json.dumps(log, indent=2)


def rule_markdown(rule: Rule) -> str:
    from tritonlint.explain import explain  # late import: explain renders evidence, which reporters need rarely

    return explain(rule)


RENDERERS: dict[str, Callable[..., str]] = {
    "full": full, "concise": concise, "json": json_format, "github": github, "sarif": sarif,
}


def statistics(diagnostics: list[Diagnostic]) -> str:
    counts = Counter(d.code for d in diagnostics)
    names = {d.code: d.name for d in diagnostics}
    fixable = {d.code for d in diagnostics if _fixable_mark(d)}
    width = len(str(max(counts.values()))) if counts else 1
    return "\n".join(
        f"{count:>{width}}\t{code}\t{'[*] ' if code in fixable else '    '}{names[code]}"
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    )


def summary(diagnostics: list[Diagnostic], fixed: int, unsafe_enabled: bool) -> str:
    lines = []
    if fixed:
        lines.append(f"Fixed {fixed} finding{'s' if fixed != 1 else ''}.")
    if not diagnostics:
        if not fixed:
            lines.append("All checks passed!")
        return "\n".join(lines)
    by_severity = Counter(d.severity for d in diagnostics)
    parts = ", ".join(f"{by_severity[s]} {s}{'s' if by_severity[s] != 1 and s != 'info' else ''}"
                      for s in ("error", "warning", "info") if by_severity[s])
    total = len(diagnostics)
    lines.append(f"Found {total} finding{'s' if total != 1 else ''} ({parts}).")
    safe = sum(1 for d in diagnostics if _fixable_mark(d))
    unsafe = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability == "unsafe" and d.fix.edits)
    if safe or unsafe:
        line = f"[*] {safe} fixable with the `--fix` option"
        if unsafe and not unsafe_enabled:
            line += f" ({unsafe} unsafe fix{'es' if unsafe != 1 else ''} available with `--unsafe-fixes`)"
        lines.append(line + ".")
    return "\n".join(lines)
