"""Facts about the whole project a file belongs to, beyond the linted files: for now whether some module
calls `triton.set_allocator(...)` (TL105). A cheap text scan finds the candidate files; only those are
parsed. The lead's project index is meant to take this over."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from tritonlint.discovery import discover

# Folders that hold other people's code or build output, never the project's own modules.
OTHER_CODE = (".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", ".eggs", "__pypackages__", "build", "dist",
              "node_modules", "site-packages", ".tritonlint_cache", ".ipynb_checkpoints")
ALLOCATOR_WORD = "set_allocator"


def calls_set_allocator(text: str) -> bool:
    """Whether source text calls `...set_allocator(...)` (any spelling: `triton.set_allocator`, an import of
    it, a package's re-export); strings and comments do not count."""
    if ALLOCATOR_WORD not in text:
        return False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(node, ast.Call) and _last_name(node.func) == ALLOCATOR_WORD for node in ast.walk(tree))


def project_sets_allocator(root: Path | str, excludes: Iterable[str] = OTHER_CODE) -> bool:
    """Whether a Python module under `root` (other people's code and build folders aside) calls
    set_allocator."""
    found = discover([Path(root)], Path(root), list(excludes))
    for path in found.files:
        if path.suffix != ".py":
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if calls_set_allocator(text):
            return True
    return False


def _last_name(node: ast.expr) -> str | None:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
