"""What linting one file gives back, and the fix modes: light on purpose, so that a run served from the cache
builds its results without importing the linter."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tritonlint.analysis.launch_index import ModuleLinks
    from tritonlint.analysis.model import JitFunction
    from tritonlint.diagnostics import Diagnostic


class FixMode(Enum):
    NONE = "none"  # report only
    FIX = "fix"  # apply and write
    DIFF = "diff"  # apply in memory, report the difference, write nothing


@dataclass
class FileResult:
    """What linting one file gives back: its findings, kernel summaries and launches, or why not."""
    path: str
    module: str = ""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    summaries: dict[str, JitFunction] = field(default_factory=dict)
    links: ModuleLinks | None = None  # its launches and imports, for the project's launch index
    deferred: str | None = None  # a linted module whose kernels this file's rules need
    skipped: str | None = None  # why the file could not be linted (one line)
    internal_error: str | None = None
    timed_out: bool = False  # the analysis ran past the time limit (internal_error says where)
    fixes_applied: int = 0
    fixed_codes: Counter[str] = field(default_factory=Counter)
    refused: list[str] = field(default_factory=list)  # fixes that would have broken the file
    original: str | None = None  # texts for --diff and stdin
    fixed: str | None = None
    # The findings and the kernel summaries pickled (b"" for none), as a run of many files holds them until it
    # reports: a third of their size as objects (see cache.pack).
    packed: tuple[bytes, bytes] | None = None
