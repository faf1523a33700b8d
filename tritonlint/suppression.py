"""Suppression comments.

- `# tritonlint: ignore[TL001, TL002]` or `# tritonlint: ignore` on the finding's line, or alone on the
  line above it;
- `# noqa: TL001` (and a bare `# noqa`) the same way, as ruff and flake8 users expect;
- `# tritonlint: file-ignore[TL003]` (or `# tritonlint: file-ignore`) anywhere in the file.
Codes are rule codes or rule names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tritonlint.diagnostics import Diagnostic
from tritonlint.source import split_lines

_DIRECTIVE = re.compile(
    r"#\s*(?:(?P<tool>tritonlint)\s*:\s*(?P<kind>file-ignore|ignore)(?:\s*\[(?P<codes>[^\]]*)\])?"
    r"|(?P<noqa>noqa)(?::\s*(?P<noqa_codes>[A-Za-z0-9_\-]+(?:[\s,]+[A-Za-z0-9_\-]+)*))?)",
    re.IGNORECASE,
)
ALL = "*"


@dataclass
class Suppressions:
    by_line: dict[int, set[str]] = field(default_factory=dict)  # 1-based row -> codes (or ALL)
    file_wide: set[str] = field(default_factory=set)

    @classmethod
    def scan(cls, text: str) -> Suppressions:
        found = cls()
        if "noqa" not in text and "tritonlint" not in text:
            return found
        for row, line in enumerate(split_lines(text), start=1):  # not str.splitlines(): see split_lines
            if "#" not in line:
                continue
            for match in _DIRECTIVE.finditer(line):
                codes = _codes(match.group("codes") if match.group("tool") else match.group("noqa_codes"))
                if match.group("kind") and match.group("kind").lower() == "file-ignore":
                    found.file_wide |= codes
                    continue
                found.by_line.setdefault(row, set()).update(codes)
                if line.lstrip().startswith("#"):  # a comment alone on its line covers the next line too
                    found.by_line.setdefault(row + 1, set()).update(codes)
        return found

    def suppresses(self, diagnostic: Diagnostic) -> bool:
        return _covers(self.file_wide, diagnostic) or _covers(self.by_line.get(diagnostic.location.row, set()), diagnostic)


def _codes(raw: str | None) -> set[str]:
    if raw is None or not raw.strip():
        return {ALL}
    return {code for code in re.split(r"[\s,]+", raw.strip()) if code}


def _covers(codes: set[str], diagnostic: Diagnostic) -> bool:
    if not codes:
        return False
    return ALL in codes or diagnostic.code in {c.upper() for c in codes} or diagnostic.name in codes
