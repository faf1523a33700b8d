"""Adopting tritonlint on a code base that has findings already: `--add-noqa` writes a `# noqa` for each,
and a baseline file records them so that only new ones are reported.

A baseline entry is matched by file, code and the flagged construct's text with its whitespace
collapsed (plus its index among the same file, code and text), never by line number, so edits elsewhere
in the file keep it matched."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

from tritonlint.diagnostics import Diagnostic
from tritonlint.source import LineIndex
from tritonlint.suppression import _NOQA, read_comments

NOT_NOQA = {"TL000", "TL900"}  # a file that does not parse takes no comment; a TL900 is removed, not kept
BASELINE_VERSION = 1


def add_noqa(text: str, diagnostics: list[Diagnostic]) -> tuple[str, int]:
    """The text with `# noqa: CODES` at the end of each statement that has findings, merged into (and
    sorted with) an existing `# noqa: ...` there; the number of lines changed."""
    comments, logical = read_comments(text)
    end_of = {row: end for end, (first, _) in logical.items() for row in range(first, end + 1)}
    wanted: dict[int, set[str]] = defaultdict(set)
    for d in diagnostics:
        if d.code not in NOT_NOQA:
            wanted[end_of.get(d.location.row, d.location.row)].add(d.code)
    comment_on = {row: (column, comment) for row, column, comment in comments}
    lines = LineIndex(text)
    edits: list[tuple[int, int, str]] = []
    for row, codes in wanted.items():
        base = lines.starts[row - 1]
        if row in comment_on:
            column, comment = comment_on[row]
            match = next(_NOQA.finditer(comment), None)
            if match and not match.group("codes"):
                continue  # a bare noqa already covers every code
            if match:
                have = [c.strip() for c in match.group("codes").replace(",", " ").split()]
                merged = ", ".join(sorted(set(have) | codes))
                start = base + column + match.start("codes")
                edits.append((start, start + len(match.group("codes")), merged))
            else:
                end = base + column + len(comment.rstrip())
                edits.append((end, end, f"  # noqa: {', '.join(sorted(codes))}"))
        elif row in logical:
            at = base + logical[row][1]
            while at > base and text[at - 1] in " \t":
                at -= 1
            edits.append((at, base + logical[row][1], f"  # noqa: {', '.join(sorted(codes))}"))
    for start, end, content in sorted(edits, reverse=True):
        text = text[:start] + content + text[end:]
    return text, len(edits)


def _construct(d: Diagnostic, text: str | None) -> str:
    # a notebook's offsets count in its joined cells, not in the JSON on disk: its findings match by message
    snippet = text[d.start:d.end] if text is not None and d.end > d.start and d.cell is None else d.message
    return " ".join(snippet.split())


def _keys(diagnostics: list[Diagnostic], texts: dict[str, str | None]) -> list[tuple[str, str, str, int]]:
    seen: Counter[tuple[str, str, str]] = Counter()
    keys = []
    for d in sorted(diagnostics, key=lambda d: d.sort_key):
        base = (d.filename, d.code, _construct(d, texts.get(d.filename)))
        keys.append((*base, seen[base]))
        seen[base] += 1
    return keys


def write_baseline(path: Path, diagnostics: list[Diagnostic], texts: dict[str, str | None]) -> int:
    entries = [{"filename": f, "code": c, "construct": s, "occurrence": i} for f, c, s, i in _keys(diagnostics, texts)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": BASELINE_VERSION, "findings": entries}, indent=2) + "\n", encoding="utf-8")
    return len(entries)


class BaselineError(Exception):
    pass


def read_baseline(path: Path) -> set[tuple[str, str, str, int]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {(e["filename"], e["code"], e["construct"], int(e["occurrence"])) for e in data["findings"]}
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read the baseline: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise BaselineError(f"{path}: not a tritonlint baseline (written by --write-baseline): {exc}") from None


def new_findings(diagnostics: list[Diagnostic], recorded: set[tuple[str, str, str, int]],
                 texts: dict[str, str | None]) -> list[Diagnostic]:
    """The findings not recorded in the baseline."""
    ordered = sorted(diagnostics, key=lambda d: d.sort_key)
    return [d for d, key in zip(ordered, _keys(ordered, texts)) if key not in recorded]
