"""Lint every Python file of the running interpreter's site-packages (torch, triton, numpy, sympy and the
rest: thousands of files nobody wrote for tritonlint), and require zero crashes.

Two passes:
- through the installed console script, as users run it: exit code 0 or 1 (never 2), no traceback, a JSON
  report that parses, and every warning on standard error a single line;
- in-process, forcing the full pipeline (parse, kernel model, every rule) on every file, also those that
  never mention triton (the console script skips those cheaply, by design), so the model and the rules
  meet all of that code, not only the few hundred files about Triton.

Both are whole-corpus runs, not samples. Measured on a loaded 2-core machine over ~7,600 files: the
console script takes about 10-15 s (discovery ~1 s; only ~260 files mention triton); the forced pass
about 100 s of CPU (Python's own ast.parse and the model over ~120 MB of source), spread over the cores.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

from tests.helpers import tritonlint_executable
from tritonlint.config import Settings
from tritonlint.discovery import discover
from tritonlint.analysis.project import Project
from tritonlint.results import FixMode
from tritonlint.ruleset import load_rules
from tritonlint.runner import make_linter
from tritonlint.source import SourceError, SourceText, read_source

pytestmark = pytest.mark.slow

CLI_BUDGET_S = 300  # the console script's run; ~15 s measured, so a 20x margin for a slow CI machine
FORCED_BUDGET_S = 480  # the forced in-process pass; ~100 s of CPU measured
CRASH_MARKERS = ("Traceback", "internal error", "panicked", "Stack backtrace", "RUST_BACKTRACE")


def site_packages() -> Path:
    """The running interpreter's site-packages: .venv's in CI, where pytest runs from."""
    path = Path(sysconfig.get_paths()["purelib"])
    assert path.is_dir(), path
    return path


def every_python_file(root: Path) -> list[Path]:
    return discover([root], root, excludes=[], respect_gitignore=False).files


def test_console_script_over_site_packages(tmp_path):
    root = site_packages()
    files = every_python_file(root)
    assert len(files) > 1000, f"only {len(files)} files under {root}: not the environment CI builds"
    config = tmp_path / "tritonlint.toml"
    config.write_text("exclude = []\nrespect-gitignore = false\n")  # every file, vendored or generated
    report = tmp_path / "report.json"
    started = time.monotonic()
    result = subprocess.run(
        [*tritonlint_executable(), str(root), "--config", str(config), "--output-format", "json", "-o", str(report)],
        cwd=tmp_path, capture_output=True, text=True, errors="replace", timeout=CLI_BUDGET_S,
        env={**os.environ, "RUST_BACKTRACE": "1", "NO_COLOR": "1"}, check=False)
    elapsed = time.monotonic() - started
    assert result.returncode in (0, 1), result.stderr[-3000:]
    for marker in CRASH_MARKERS:
        assert marker not in result.stdout + result.stderr, result.stderr[-3000:]
    findings = json.loads(report.read_text(encoding="utf-8", errors="surrogateescape"))
    assert isinstance(findings, list)
    warnings = [line for line in result.stderr.splitlines() if line.strip()]
    assert all(line.startswith("warning: ") for line in warnings), warnings[:5]
    codes = sorted({f["code"] for f in findings})
    print(f"\nsite-packages corpus, console script: {len(files)} files linted in {elapsed:.1f} s, "
          f"{len(findings)} findings {codes}, {len(warnings)} files skipped with a warning, 0 crashes")


def _lint_forced(path: Path) -> tuple[str, str | None, str | None]:
    """Lint one file with the whole pipeline; (path, crash, skip reason)."""
    try:
        source = read_source(path)
    except SourceError as exc:
        return str(path), None, str(exc)
    # The linter skips files that never mention triton; an extra trailing comment makes it analyse this one
    # in full without moving any row or column.
    text = source.text + "\n# triton\n"
    try:
        result = _FORCED_LINTER.lint_source(SourceText(text, source.encoding, source.bom, source.newline), path,
                                            str(path), "corpus_module", Project())
    except BaseException as exc:  # noqa: BLE001 - exactly what this test is looking for
        return str(path), f"{type(exc).__name__}: {exc}", None
    return str(path), result.internal_error, result.skipped


_FORCED_LINTER = make_linter(load_rules(), Settings(target="sm_90"), FixMode.NONE, unsafe=False)


def test_every_file_through_the_full_pipeline():
    files = every_python_file(site_packages())
    workers = os.cpu_count() or 1
    started = time.monotonic()
    if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            outcome = pool.map_async(_lint_forced, files, chunksize=16).get(FORCED_BUDGET_S)
    else:
        outcome = [_lint_forced(path) for path in files]
    elapsed = time.monotonic() - started
    crashes = [(path, crash) for path, crash, _ in outcome if crash]
    skipped = [(path, reason) for path, _, reason in outcome if reason]
    assert not crashes, crashes[:10]
    assert all("\n" not in reason for _, reason in skipped)
    print(f"\nsite-packages corpus, full pipeline forced on every file: {len(files)} files in {elapsed:.1f} s "
          f"on {workers} processes, {len(skipped)} skipped with a reason, 0 crashes")
    assert elapsed < FORCED_BUDGET_S
    sys.stdout.flush()
