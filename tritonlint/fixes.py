"""Apply fixes: non-overlapping edits, newline style kept, and atomic writes that keep encoding,
permissions, owner, extended attributes and hard links, and never overwrite a change made on disk
meanwhile. Whether a fixed text still parses is decided by the caller, which re-parses it."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from tritonlint.diagnostics import Diagnostic, Fix

if TYPE_CHECKING:
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


class WriteRefused(Exception):
    """Writing the fixed text could lose or corrupt something: the file is left as it is."""


def write_atomic(path: Path, source: SourceText, text: str) -> None:
    """Write through a temporary file in the same folder, then rename over the original (following a
    symlink to its target), keeping the original's encoding, BOM, permission bits, owner and extended
    attributes (POSIX ACLs among them, where the platform has them). A file with several hard links is
    rewritten in place instead: a rename would leave its other names with the old text. Refused when the
    file is read-only, when its encoding would not give back the bytes it was read from, or when it changed
    on disk since it was read (an editor or another tool wrote to it meanwhile)."""
    target = path.resolve()
    info = target.stat()  # a file deleted meanwhile fails here, before anything is written
    if not os.access(target, os.W_OK):
        raise WriteRefused("the file is read-only")
    if source.data is not None and source.encode(source.text) != source.data:
        raise WriteRefused(f"its {source.encoding} text does not encode back to the same bytes, so writing "
                           "it could change text outside the fixes")
    try:
        data = source.encode(text)
    except UnicodeEncodeError:
        raise WriteRefused(f"a fix inserts characters that {source.encoding} cannot encode") from None
    if info.st_nlink > 1:
        _write_in_place(target, source, data)
        return
    import tempfile  # here: only --fix writes, and tempfile costs a lint run ~3 ms to import

    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tritonlint", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        if hasattr(os, "chown") and (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
            try:
                os.chown(temporary, info.st_uid, info.st_gid)
            except OSError:
                pass  # only root may give a file away; the permission bits are kept regardless
        os.chmod(temporary, stat.S_IMODE(info.st_mode))  # after chown, which may clear setuid bits
        _copy_xattrs(target, temporary)
        if source.data is not None and target.read_bytes() != source.data:
            raise WriteRefused("the file changed on disk while it was being linted")
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _write_in_place(target: Path, source: SourceText, data: bytes) -> None:
    """Overwrite a hard-linked file's content through the inode every link shares (not atomic: the price of
    keeping the links)."""
    with open(target, "r+b") as stream:
        if source.data is not None and stream.read() != source.data:
            raise WriteRefused("the file changed on disk while it was being linted")
        stream.seek(0)
        stream.write(data)
        stream.truncate()
        stream.flush()
        os.fsync(stream.fileno())


def _copy_xattrs(source: Path, destination: str) -> None:
    """Extended attributes, best effort: some namespaces need privileges, some file systems have none."""
    if not hasattr(os, "listxattr"):
        return
    try:
        names = os.listxattr(source)
    except OSError:
        return
    for name in names:
        try:
            os.setxattr(destination, name, os.getxattr(source, name))
        except OSError:
            pass
