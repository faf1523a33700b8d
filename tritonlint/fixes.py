"""Apply fixes: non-overlapping edits, newline style kept, and atomic writes that keep encoding and
permissions. Whether a fixed text still parses is decided by the caller, which re-parses it."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from tritonlint.diagnostics import Diagnostic, Fix
from tritonlint.source import SourceText


def applicable(diagnostics: Iterable[Diagnostic], unsafe: bool) -> list[Diagnostic]:
    allowed = {"safe", "unsafe"} if unsafe else {"safe"}
    return [d for d in diagnostics if d.fix is not None and d.fix.applicability in allowed and d.fix.edits]


def apply_fixes(text: str, fixes: list[Fix], newline: str = "\n") -> tuple[str, list[Fix]]:
    """Apply whole fixes in order of position, skipping any that overlap one already taken (the next
    round picks them up). Returns the new text and the fixes applied."""
    taken: list[Fix] = []
    occupied: list[tuple[int, int]] = []
    for fix in sorted(fixes, key=lambda f: (f.edits[0].start, f.edits[-1].end)):
        if any(_overlaps(edit.start, edit.end, a, b) for edit in fix.edits for a, b in occupied):
            continue
        taken.append(fix)
        occupied.extend((edit.start, edit.end) for edit in fix.edits)
    edits = sorted((edit for fix in taken for edit in fix.edits), key=lambda e: (e.start, e.end), reverse=True)
    for edit in edits:
        content = edit.content.replace("\r\n", "\n")
        if newline != "\n":
            content = content.replace("\n", newline)
        text = text[: edit.start] + content + text[edit.end:]
    return text, taken


def _overlaps(start: int, end: int, other_start: int, other_end: int) -> bool:
    if start == end or other_start == other_end:  # insertions conflict only strictly inside a span
        return other_start < start < other_end or start < other_start < end or start == other_start
    return start < other_end and other_start < end


def write_atomic(path: Path, source: SourceText, text: str) -> None:
    """Write through a temporary file in the same folder, then rename over the original (following a
    symlink to its target), keeping the original's encoding, BOM and permission bits."""
    target = path.resolve()
    data = source.encode(text)
    mode = stat.S_IMODE(target.stat().st_mode)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tritonlint", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
