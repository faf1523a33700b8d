"""Suppression comments, and TL900 for those that suppress nothing.

- `# tritonlint: ignore[TL001, TL002]` or `# tritonlint: ignore` on the finding's line, or alone on the
  line above it;
- `# noqa: TL001` (and a bare `# noqa`) the same way, as ruff and flake8 users expect (`noqa` in any case,
  `# noqa:TL001,TL002`);
- `# tritonlint: file-ignore[TL003]` (or `# tritonlint: file-ignore`) anywhere in the file.
Codes are rule codes or rule names. Only comments count (tokenize finds them), never text in a string.

TL900 (as ruff's RUF100): a code that suppressed no finding of a rule that ran on the file, a code no
rule has, or a bare `# tritonlint: ignore` that suppressed nothing. A `noqa` comment is shared with other
tools, so there only codes of tritonlint's rules (and unknown `TL` codes) are judged; a bare `# noqa` and
codes such as `E501` are left alone. The fix (safe) removes the code, or the whole comment once nothing
is left.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from tritonlint.diagnostics import Diagnostic, Edit, Fix, rule_page_url
from tritonlint.source import LineIndex

_TOOL = re.compile(r"#\s*tritonlint\s*:\s*(?P<kind>file-ignore|ignore)\b(?:\s*\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:(?:\s*,\s*|\s+)[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)
_CODE = re.compile(r"[A-Za-z0-9_\-]+")
ALL = "*"
UNUSED = ("TL900", "unused-suppression")
_NEVER_JUDGED = {"TL000", "TL900", "syntax-error", "unused-suppression"}


@dataclass
class Directive:
    """One suppression comment: its kind, codes and the rows it covers."""
    kind: str  # "ignore", "file-ignore" or "noqa"
    row: int
    start: int  # character offsets of the directive in the file
    end: int
    codes: list[tuple[str, int, int]]  # each code with its offsets; empty: every code
    rows: tuple[int, ...]  # the rows it covers (none for file-ignore)
    comment: tuple[int, int]  # the whole comment token
    own_line: bool
    used: set[str] = field(default_factory=set)

    def covers(self, diagnostic: Diagnostic) -> bool:
        if self.kind != "file-ignore" and diagnostic.location.row not in self.rows:
            return False
        if diagnostic.code == UNUSED[0]:  # only a suppression naming TL900 hides TL900, never a bare one
            return any(_matches(code, diagnostic) for code, _, _ in self.codes)
        if not self.codes:
            self.used.add(ALL)
            return True
        found = [code for code, _, _ in self.codes if _matches(code, diagnostic)]
        self.used.update(found)
        return bool(found)


def _matches(code: str, diagnostic: Diagnostic) -> bool:
    return code.upper() == diagnostic.code or code == diagnostic.name


@dataclass
class Suppressions:
    """A file's suppression comments."""
    directives: list[Directive] = field(default_factory=list)

    @classmethod
    def scan(cls, text: str) -> Suppressions:
        found = cls()
        lowered = text.lower()
        if "noqa" not in lowered and "tritonlint" not in lowered:
            return found
        lines = LineIndex(text)
        comments, logical = read_comments(text)
        for row, column, comment in comments:
            base = lines.starts[row - 1] + column
            own_line = not lines.line(row)[:column].strip()
            if own_line:  # a comment alone on its line covers the next one too
                rows: tuple[int, ...] = (row, row + 1)
            else:  # at the end of a statement's last line it covers the whole statement, as in ruff
                rows = tuple(range(logical[row][0], row + 1)) if row in logical else (row,)
            for match in [*_TOOL.finditer(comment), *_NOQA.finditer(comment)]:
                kind = match.group("kind").lower() if "kind" in match.groupdict() else "noqa"
                codes = []
                if match.group("codes"):
                    offset = match.start("codes")
                    codes = [(m.group(), base + offset + m.start(), base + offset + m.end())
                             for m in _CODE.finditer(match.group("codes"))]
                found.directives.append(Directive(kind, row, base + match.start(), base + match.end(), codes,
                                                  () if kind == "file-ignore" else rows,
                                                  (base, base + len(comment)), own_line))
        return found

    def suppresses(self, diagnostic: Diagnostic) -> bool:
        hits = [d.covers(diagnostic) for d in self.directives]  # every covering directive counts as used
        return any(hits)

    def unused(self, text: str, filename: str, ran: set[str], known: frozenset[str] | set[str]) -> list[Diagnostic]:
        """TL900 findings, after `suppresses` has seen every finding. `ran`: codes and names of the rules
        that ran on the file; `known`: those of every rule."""
        lines = LineIndex(text)
        findings = []
        for directive in self.directives:
            ours = directive.kind != "noqa"
            if not directive.codes:
                if ours and ALL not in directive.used:
                    findings.append(_finding(directive, [], "", text, lines, filename))
                continue
            unknown, unused = [], []
            for entry in directive.codes:
                code = entry[0]
                is_known = code.upper() in known or code in known
                if not is_known and (ours or code.upper().startswith("TL")):
                    unknown.append(entry)
                elif is_known and code not in _NEVER_JUDGED and code.upper() not in _NEVER_JUDGED \
                        and (code.upper() in ran or code in ran) and code not in directive.used:
                    unused.append(entry)
            if unknown or unused:
                parts = ([f"unknown code{'s' if len(unknown) > 1 else ''} {_names(unknown)}"] if unknown else []) + \
                        ([f"{_names(unused)} suppress{'' if len(unused) > 1 else 'es'} nothing here"] if unused else [])
                findings.append(_finding(directive, unknown + unused, "; ".join(parts), text, lines, filename))
        return findings


def _names(entries: list[tuple[str, int, int]]) -> str:
    return ", ".join(f"`{code}`" for code, _, _ in entries)


def read_comments(text: str) -> tuple[list[tuple[int, int, str]], dict[int, tuple[int, int]]]:
    """(row, column, text) of every comment, and for the last physical line of each logical line (a
    statement) its first row and the column of its end, where a comment can go. The text parses, so
    tokenize does not fail on it."""
    comments: list[tuple[int, int, str]] = []
    logical: dict[int, tuple[int, int]] = {}
    first: int | None = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            kind = token.type
            if kind == tokenize.COMMENT:
                comments.append((token.start[0], token.start[1], token.string))
            elif kind == tokenize.NEWLINE:
                logical[token.start[0]] = (first or token.start[0], token.start[1])
                first = None
            elif first is None and kind not in _NOT_CODE:
                first = token.start[0]
    except (tokenize.TokenError, SyntaxError):
        pass
    return comments, logical


_NOT_CODE = {tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}


def _finding(directive: Directive, drop: list[tuple[str, int, int]], problem: str, text: str, lines: LineIndex,
             filename: str) -> Diagnostic:
    kept = [entry for entry in directive.codes if entry not in drop]
    if kept:
        first, last = directive.codes[0][1], directive.codes[-1][2]
        edits = [(first, last, ", ".join(code for code, _, _ in kept))]
        message = f"Remove {_names(drop)}"
    else:
        edits = [_remove_directive(directive, text, lines)]
        message = "Remove the suppression comment"
    what = "`# noqa`" if directive.kind == "noqa" else f"`# tritonlint: {directive.kind}`"
    fix = Fix("safe", message, tuple(Edit(s, e, c, lines.position(s), lines.position(e)) for s, e, c in edits))
    return Diagnostic(code=UNUSED[0], name=UNUSED[1], severity="warning", category="style",
                      message=f"Unused suppression in {what}: {problem}" if problem else
                      f"Unused suppression: {what} suppresses nothing here", filename=filename,
                      location=lines.position(directive.start), end_location=lines.position(directive.end),
                      start=directive.start, end=directive.end, fix=fix, url=rule_page_url(UNUSED[0]))


def _remove_directive(directive: Directive, text: str, lines: LineIndex) -> tuple[int, int, str]:
    """The edit removing a directive: the whole comment (and its line, when alone on it) when it holds
    nothing else, else the directive and the space before it."""
    comment_start, comment_end = directive.comment
    rest = (text[comment_start:directive.start] + text[directive.end:comment_end]).strip(" \t#")
    if not rest:
        row_start = lines.starts[directive.row - 1]
        if directive.own_line:
            row_end = lines.starts[directive.row] if directive.row < len(lines.starts) else len(text)
            return row_start, row_end, ""
        start = comment_start
        while start > row_start and text[start - 1] in " \t":
            start -= 1
        return start, comment_end, ""
    if directive.start == comment_start:  # `# noqa: TL001 - reason`: keep the reason as a comment
        end = directive.end
        while end < comment_end and text[end] in " \t-:;,":
            end += 1
        return directive.start, end, "# "
    start = directive.start
    while start > comment_start and text[start - 1] in " \t":
        start -= 1
    end = comment_end if not text[directive.end:comment_end].strip() else directive.end
    return start, end, ""
