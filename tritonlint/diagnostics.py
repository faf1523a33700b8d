"""The plain data a lint run produces: findings, their fixes and text edits.

Everything here is picklable and free of parser objects, so worker processes can return it and the cache
can store it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace

SEVERITIES = ("error", "warning", "info")
RULE_PAGES = "https://github.com/tritonlint/tritonlint/blob/main/docs/rules"  # docs/rules/, python -m tritonlint.docs
APPLICABILITIES = ("safe", "unsafe", "display-only")


@dataclass(frozen=True)
class Position:
    """A 1-based row and a 1-based column counted in characters, as ruff's JSON has them."""

    row: int
    column: int


@dataclass(frozen=True)
class Edit:
    """Replace text[start:end] (character offsets) with content."""

    start: int
    end: int
    content: str
    location: Position
    end_location: Position


@dataclass(frozen=True)
class Span:
    """Code a finding is about besides its own span (e.g. the grid variable of a launch), which its fix may
    edit too; SARIF reports it as a related location."""

    start: int
    end: int
    location: Position
    end_location: Position


@dataclass(frozen=True)
class Fix:
    """A fix: its applicability, message and edits."""
    applicability: str
    message: str
    edits: tuple[Edit, ...]


@dataclass
class Diagnostic:
    """One finding, as every output format reports it."""
    code: str
    name: str
    severity: str
    category: str
    message: str
    filename: str
    location: Position
    end_location: Position
    start: int  # character offsets of the flagged span, for suppression and fix bookkeeping
    end: int
    fix: Fix | None = None
    url: str | None = None
    notes: list[str] = field(default_factory=list)
    related: tuple[Span, ...] = ()
    cell: int | None = None  # in a notebook: the 1-based cell, and the rows count within it
    judged_with: frozenset[str] = frozenset()  # the other modules whose launches the finding was judged from

    @property
    def sort_key(self) -> tuple[object, ...]:
        return (self.filename, self.cell or 0, self.location.row, self.location.column, self.code)

    @property
    def where(self) -> str:
        """`file:row:col`, or `file:cell N:row:col` in a notebook."""
        cell = f"cell {self.cell}:" if self.cell is not None else ""
        return f"{self.filename}:{cell}{self.location.row}:{self.location.column}"


def one_per_spot(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """One finding per rule and span: a value several matches share (a `**common` dict that three launches
    splat) is one thing to fix, reported once, with a note saying how many matches reach it."""
    by_spot: dict[tuple[str, int, int, int | None], list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        by_spot.setdefault((diagnostic.code, diagnostic.start, diagnostic.end, diagnostic.cell), []).append(diagnostic)
    kept = []
    for same in by_spot.values():
        first = min(same, key=lambda d: d.message)  # the same choice whatever order the matches ran in
        if len(same) > 1:
            first = replace(first, notes=[*first.notes, f"{len(same) - 1} more match{'es' if len(same) > 2 else ''} "
                                          "of this rule reach the same spot (reported once)."])
        kept.append(first)
    return kept


def rule_page_url(rule_id: str) -> str:
    return f"{RULE_PAGES}/{rule_id}.md"


def syntax_error(filename: str, message: str, row: int, column: int) -> Diagnostic:
    """TL000: the file does not parse, so no rule ran on it."""
    position = Position(row, column)
    return Diagnostic(
        code="TL000",
        name="syntax-error",
        severity="error",
        category="correctness",
        message=f"SyntaxError: {message} (as parsed by Python {sys.version_info.major}.{sys.version_info.minor})",
        filename=filename,
        location=position,
        end_location=position,
        start=0,
        end=0,
        url=rule_page_url("TL000"),
    )
