"""Render findings: full (code frames, like ruff), concise, json (ruff's shape), github (workflow
commands), sarif (2.1.0), plus the summary, the statistics, the fix listing and the unified diff.
Reporters see only Diagnostics and rule metadata, never rule internals."""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tritonlint import __version__
from tritonlint.diagnostics import Diagnostic, Edit, Position
from tritonlint.ruleset import Rule

FORMATS = ("full", "concise", "json", "github", "sarif")
TEXT_FORMATS = ("full", "concise")
COLOR_CHOICES = ("auto", "always", "never")
INFORMATION_URI = "https://github.com/tritonlint/tritonlint"


def color_enabled(choice: str, isatty: bool, environ: Mapping[str, str] = os.environ) -> bool:
    """Colour as ruff decides it: `--color always|never` wins; in `auto`, a non-empty NO_COLOR turns it
    off, then a non-empty FORCE_COLOR turns it on, else only a terminal gets colour."""
    if choice != "auto":
        return choice == "always"
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    return isatty


class Style:
    """ANSI colour, or plain text when disabled."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled else text

    def bold(self, text: str) -> str:
        return self(text, "1")

    def severity(self, text: str, severity: str) -> str:
        return self(text, {"error": "1;31", "warning": "1;33", "info": "1;36"}.get(severity, "1"))


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


def is_fixable(diagnostic: Diagnostic, unsafe: bool) -> bool:
    """Whether `--fix` applies the finding's fix (unsafe fixes count once `--unsafe-fixes` is given)."""
    fix = diagnostic.fix
    allowed = ("safe", "unsafe") if unsafe else ("safe",)
    return fix is not None and fix.applicability in allowed and bool(fix.edits)


def has_hidden_fix(diagnostic: Diagnostic, unsafe: bool) -> bool:
    fix = diagnostic.fix
    return not unsafe and fix is not None and fix.applicability == "unsafe" and bool(fix.edits)


def _fixable_mark(diagnostic: Diagnostic, unsafe: bool) -> str:
    return " [*]" if is_fixable(diagnostic, unsafe) else ""


def concise(diagnostics: list[Diagnostic], style: Style, unsafe: bool = False, **_: Any) -> str:
    lines = []
    for d in diagnostics:
        where = f"{d.where}:"
        lines.append(f"{style.bold(where)} {style.severity(d.code, d.severity)}{_fixable_mark(d, unsafe)} {d.message}")
    return "\n".join(lines)


def full(diagnostics: list[Diagnostic], style: Style, sources: Callable[[str], list[str] | None],
         unsafe: bool = False, **_: Any) -> str:
    blocks = []
    for d in diagnostics:
        block = [f"{style.severity(d.code, d.severity)}{_fixable_mark(d, unsafe)} {style.bold(d.message)}",
                 f" --> {d.where}"]
        lines = sources(d.filename) if d.cell is None else None  # a notebook's rows count within its cell
        if lines and 1 <= d.location.row <= len(lines):
            block.extend(_frame(d, lines, style))
        if d.fix is not None:
            label = {"safe": "help", "unsafe": "help (unsafe fix)", "display-only": "suggestion"}[d.fix.applicability]
            block.append(f"{label}: {d.fix.message}")
            if d.fix.applicability == "display-only" and d.fix.edits:
                block.extend(_suggestion(d.fix.edits, lines))
        block.extend(f"note: {note}" for note in d.notes)
        blocks.append("\n".join(block))
    return "\n\n".join(blocks)


def _suggestion(edits: tuple[Edit, ...], lines: list[str] | None) -> list[str]:
    """A display-only fix as the lines it would write, each whole and at its own indentation, so that a
    block can be pasted over the line(s) it names; without the source, the edits' text as it is."""
    if not lines or any(not 1 <= e.location.row <= e.end_location.row <= len(lines) for e in edits):
        return [f"    {line}" for edit in edits for line in edit.content.splitlines()]
    groups: list[list[Edit]] = []
    for edit in sorted(edits, key=lambda e: (e.location.row, e.location.column)):
        if groups and edit.location.row <= groups[-1][-1].end_location.row:
            groups[-1].append(edit)
        else:
            groups.append([edit])
    blocks: list[tuple[str, list[str]]] = []
    for group in groups:
        first, last = group[0].location.row, group[-1].end_location.row
        text = "\n".join(lines[first - 1:last])
        starts = [0]
        for line in lines[first - 1:last - 1]:
            starts.append(starts[-1] + len(line) + 1)
        for edit in reversed(group):
            start = starts[edit.location.row - first] + edit.location.column - 1
            end = starts[edit.end_location.row - first] + edit.end_location.column - 1
            text = text[:start] + edit.content + text[end:]
        inserted = len(group) == 1 and group[0].location == group[0].end_location and group[0].location.column == 1 \
            and group[0].content.endswith("\n")
        if inserted:  # whole new lines before an existing one
            blocks.append((f"insert before line {first}:", group[0].content.splitlines()))
        else:
            where = f"line {first}" if first == last else f"lines {first}-{last}"
            blocks.append((f"{where}, as it would read:", text.split("\n")))
    code = [line for _, block in blocks for line in block if line.strip()]
    margin = min((len(line) - len(line.lstrip()) for line in code), default=0)
    out = []
    for header, block in blocks:
        while block and not block[-1].strip():
            block = block[:-1]
        out.append(f"  {header}")
        out.extend(f"    {line[margin:]}".rstrip() for line in block)
    return out


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
        "notes": list(d.notes),
        **({"cell": d.cell} if d.cell is not None else {}),
    }


def json_format(diagnostics: list[Diagnostic], **_: Any) -> str:
    import json

    return json.dumps([as_json_object(d) for d in diagnostics], indent=2)


# ---- GitHub Actions workflow commands (escaping as in @actions/core's command.ts) -------------------
def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


_GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def github(diagnostics: list[Diagnostic], **_: Any) -> str:
    lines = []
    for d in diagnostics:
        single_line = d.end_location.row == d.location.row
        props = [("title", f"tritonlint ({d.code})"), ("file", d.filename), ("line", str(d.location.row))]
        if single_line:  # GitHub drops an annotation that has columns on a multi-line span
            props.append(("col", str(d.location.column)))
        props.append(("endLine", str(d.end_location.row)))
        if single_line:
            props.append(("endColumn", str(d.end_location.column)))
        # the headline, then each note on its own line: the annotation shows them under it
        text = "\n".join([f"{d.filename}:{d.location.row}:{d.location.column}: {d.code} {d.message}", *d.notes])
        properties = ",".join(f"{key}={_escape_property(value)}" for key, value in props)
        lines.append(f"::{_GITHUB_COMMAND[d.severity]} {properties}::{_escape_data(text)}")
    return "\n".join(lines)


# ---- SARIF 2.1.0 ------------------------------------------------------------------------------------
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _rule_descriptor(rule: Rule) -> dict[str, Any]:
    help_text = rule_markdown(rule)
    descriptor: dict[str, Any] = {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _one_line(rule.doc["what"]) + " " + _one_line(rule.doc["why"])},
        "help": {"text": help_text, "markdown": help_text},
        "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
        # GitHub code scanning reads tags and problem.severity from the rule's properties
        "properties": {"category": rule.category, "tags": [rule.category],
                       "problem.severity": {"info": "recommendation"}.get(rule.severity, rule.severity)},
    }
    if rule.url:
        descriptor["helpUri"] = rule.url
    return descriptor


def _artifact_location(filename: str) -> dict[str, str]:
    """A relative path becomes a relative URI against %SRCROOT% (the folder tritonlint ran in, which
    code scanning maps to the checkout); a path outside it stays an absolute file URI."""
    path = Path(filename)
    if path.is_absolute():
        return {"uri": path.as_uri()}
    return {"uri": quote(path.as_posix(), errors="surrogateescape"), "uriBaseId": SRCROOT}  # undecodable names as %XX


def _region(start: Position, end: Position, empty_means_line: bool = False) -> dict[str, int]:
    region = {"startLine": start.row, "startColumn": start.column, "endLine": end.row}
    # SARIF's endColumn is exclusive; an empty region is an insertion point, which only a fix wants:
    # a result without a span (a syntax error) points at the rest of its line instead
    if not (empty_means_line and start == end):
        region["endColumn"] = end.column
    return region


def _sarif_result(d: Diagnostic, rule_index: int) -> dict[str, Any]:
    artifact = _artifact_location(d.filename)
    result: dict[str, Any] = {
        "ruleId": d.code,
        "ruleIndex": rule_index,
        "level": _SARIF_LEVEL[d.severity],
        "message": {"text": d.message},
        "locations": [{"physicalLocation": {
            "artifactLocation": artifact,
            "region": _region(d.location, d.end_location, empty_means_line=True),
        }}],
    }
    if d.related:
        result["relatedLocations"] = [{"id": index, "physicalLocation": {
            "artifactLocation": artifact, "region": _region(span.location, span.end_location)},
            "message": {"text": "related code the fix also edits"}} for index, span in enumerate(d.related)]
    if d.notes:
        result["properties"] = {"notes": list(d.notes)}
    if d.fix is not None and d.fix.edits:
        result["fixes"] = [{
            "description": {"text": d.fix.message},
            "artifactChanges": [{
                "artifactLocation": artifact,
                "replacements": [{
                    "deletedRegion": _region(e.location, e.end_location),
                    "insertedContent": {"text": e.content},
                } for e in d.fix.edits],
            }],
            "properties": {"applicability": d.fix.applicability},
        }]
    return result


def sarif(diagnostics: list[Diagnostic], rules: list[Rule], **_: Any) -> str:
    """One run whose driver lists every enabled rule (and TL000 or TL900 when reported); columns
    count Unicode code points, as everywhere else in tritonlint, and the run says so (`columnKind`)."""
    from tritonlint.builtin import BUILTIN_RULES

    by_id = {r.id: r for r in [*BUILTIN_RULES, *rules]}
    codes = sorted({r.id for r in rules} | {d.code for d in diagnostics})
    descriptors = [_rule_descriptor(by_id[code]) if code in by_id else {"id": code} for code in codes]
    index = {code: i for i, code in enumerate(codes)}
    log = {
        "$schema": _SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "tritonlint", "version": __version__, "semanticVersion": __version__,
                                "informationUri": INFORMATION_URI, "rules": descriptors}},
            "originalUriBaseIds": {SRCROOT: {"uri": Path.cwd().as_uri().rstrip("/") + "/"}},
            "columnKind": "unicodeCodePoints",
            "results": [_sarif_result(d, index[d.code]) for d in diagnostics],
        }],
    }
    import json

    return json.dumps(log, indent=2)


def rule_markdown(rule: Rule) -> str:
    from tritonlint.explain import (
        explain,  # late import: explain renders evidence, which reporters need rarely
    )

    return explain(rule)


RENDERERS: dict[str, Callable[..., str]] = {
    "full": full, "concise": concise, "json": json_format, "github": github, "sarif": sarif,
}


# ---- statistics, summary, fix listing ---------------------------------------------------------------
def _rule_counts(diagnostics: list[Diagnostic], unsafe: bool) -> list[dict[str, Any]]:
    counts = Counter(d.code for d in diagnostics)
    fixable = Counter(d.code for d in diagnostics if is_fixable(d, unsafe))
    names = {d.code: d.name for d in diagnostics}
    return [{"code": code, "name": names[code], "count": count, "fixable": fixable[code] > 0,
             "fixable_count": fixable[code]}
            for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def statistics(diagnostics: list[Diagnostic], unsafe: bool = False, as_json: bool = False) -> str:
    """A count per rule, most frequent first, in ruff's shape (`--statistics`)."""
    rows = _rule_counts(diagnostics, unsafe)
    if as_json:
        import json

        return json.dumps(rows, indent=2)
    if not rows:
        return ""
    width = len(str(rows[0]["count"]))
    code_width = max(len(row["code"]) for row in rows)
    any_fixable = any(row["fixable"] for row in rows)
    return "\n".join(
        f"{row['count']:>{width}}\t{row['code']:<{code_width}}\t"
        f"{('[*] ' if row['fixable'] else '[ ] ') if any_fixable else ''}{row['name']}"
        for row in rows
    )


def summary(diagnostics: list[Diagnostic], fixed: int, unsafe_enabled: bool) -> str:
    lines = []
    remaining = len(diagnostics)
    if not remaining and not fixed:
        return "All checks passed!"
    if fixed:
        lines.append(f"Found {_plural(fixed + remaining, 'finding')} ({fixed} fixed, {remaining} remaining).")
    else:
        by_severity = Counter(d.severity for d in diagnostics)
        parts = ", ".join(_plural(by_severity[s], s, "info" if s == "info" else None)
                          for s in ("error", "warning", "info") if by_severity[s])
        lines.append(f"Found {_plural(remaining, 'finding')} ({parts}).")
    applicable = sum(1 for d in diagnostics if is_fixable(d, unsafe_enabled))
    hidden = sum(1 for d in diagnostics if has_hidden_fix(d, unsafe_enabled))
    unsafe_note = f"{_plural(hidden, 'unsafe fix', 'unsafe fixes')} available with `--fix --unsafe-fixes`"
    if applicable:
        lines.append(f"[*] {applicable} fixable with `--fix`" + (f" ({unsafe_note})." if hidden else "."))
    elif hidden:
        lines.append(unsafe_note[0].upper() + unsafe_note[1:] + ".")
    return "\n".join(lines)


def fix_listing(fixed_codes: Iterable[tuple[str, Mapping[str, int]]], names: Mapping[str, str]) -> str:
    """`--show-fixes`: the fixes applied, per file and rule, as ruff lists them."""
    files = [(path, codes) for path, codes in fixed_codes if codes]
    total = sum(sum(codes.values()) for _, codes in files)
    if not total:
        return ""
    lines = [f"Fixed {_plural(total, 'finding')}:"]
    for path, codes in files:
        lines.append(f"- {path}:")
        lines.extend(f"    {count} × {code} ({names.get(code, '?')})" for code, count in sorted(codes.items()))
    return "\n".join(lines)


def would_fix(count: int, hidden: int) -> str:
    """The line `--diff` ends with (on standard error, so the diff itself pipes into `git apply`)."""
    extra = ""
    if hidden:
        extra = f" ({_plural(hidden, 'additional fix', 'additional fixes')} available with `--unsafe-fixes`)"
    return f"Would fix {_plural(count, 'finding')}{extra}." if count else f"No fixes available{extra}."


def unified_diff(path: str, before: str, after: str) -> str:
    """A unified diff that `git apply` and `patch -p1` accept: lines split at "\\n" only (a form feed or
    a lone "\\r" is not a line break for them), the marker for a missing final newline, and a tab after a
    file name with a space in it, where both tools expect the name to end."""
    import difflib  # here, as json elsewhere: the default output of a lint run needs neither

    out = []
    end = "\t" if re.search(r"\s", path) else ""
    for line in difflib.unified_diff(_lines(before), _lines(after), fromfile=f"a/{path}{end}", tofile=f"b/{path}{end}"):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
