"""Property-based fuzzing of the whole pipeline on generated Triton-like modules (tests/fuzz/strategies.py):
discover, decode, parse, kernel model, rules, fixes, reports. The properties (tests/fuzz/properties.py):
no internal error; every finding inside its file; JSON, SARIF and GitHub output well formed; --fix output
that parses, keeps every line no fix touched, and leaves nothing for a second --fix; and the same findings
for a project linted with and without the cache, in one process and in two. The number of examples follows
the hypothesis profile (tests/conftest.py): a few hundred in all under "ci"; bench/fuzz_long.py runs
100,000 and more."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings

from tests.fuzz.properties import RULES, check_module, check_reports, check_sarif
from tests.fuzz.strategies import module_bytes, project
from tests.helpers import run_cli
from tritonlint import runner
from tritonlint.cache import open_cache
from tritonlint.config import Settings
from tritonlint.results import FixMode
from tritonlint.runner import lint_paths, make_linter

EXAMPLES = settings.default.max_examples


@settings(max_examples=3 * EXAMPLES)
@given(module_bytes())
def test_generated_modules(data):
    check_module(data)


def _write(root: Path, files: dict[str, bytes]) -> None:
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)


def _findings(run) -> list[tuple]:
    assert not run.problems, run.problems
    for result in run.files:
        assert result.internal_error is None, result.internal_error
    return sorted((d.filename, d.code, d.start, d.end, d.message, d.severity) for r in run.files for d in r.diagnostics)


@settings(max_examples=max(3, EXAMPLES // 25))
@given(project())
def test_generated_projects_give_the_same_findings_every_way(files):
    """One process or two, with the cache cold or warm: the same findings (the pool starts at 24 files)."""
    assert len(files) >= runner.PARALLEL_THRESHOLD
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        _write(root / "src", files)
        config = Settings(root=root, target="sm_90", file_timeout=0)
        linter = make_linter(RULES, config, FixMode.NONE, unsafe=True)
        alone = _findings(lint_paths([root / "src"], config, linter, jobs=1))
        assert _findings(lint_paths([root / "src"], config, linter, jobs=2)) == alone
        for _ in ("cold", "warm"):
            cache = open_cache(root / "cache", config, RULES, True)
            assert _findings(lint_paths([root / "src"], config, linter, jobs=1, cache=cache)) == alone


@settings(max_examples=max(2, EXAMPLES // 50))
@given(project())
def test_generated_projects_through_the_console_script(files):
    """The installed command on a generated tree: every format well formed, no traceback, --fix twice."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        _write(root, files)
        outputs = {}
        for name in ("json", "sarif", "github"):
            proc = run_cli(".", "--no-cache", "--target", "sm_90", "--output-format", name, cwd=root)
            assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
            assert all(line.startswith("warning: ") for line in proc.stderr.splitlines()), proc.stderr
            outputs[name] = proc.stdout
        findings = json.loads(outputs["json"])
        check_sarif(json.loads(outputs["sarif"]), len(findings))
        assert len([line for line in outputs["github"].splitlines() if line.startswith("::")]) == len(findings)
        check_reports([])  # and the empty report
        first = run_cli(".", "--no-cache", "--target", "sm_90", "--fix", "--unsafe-fixes", cwd=root)
        assert first.returncode in (0, 1) and "error:" not in first.stderr, first.stderr
        fixed = {path: (root / path).read_bytes() for path in files}
        second = run_cli(".", "--no-cache", "--target", "sm_90", "--fix", "--unsafe-fixes", cwd=root)
        assert second.returncode in (0, 1) and "error:" not in second.stderr, second.stderr
        assert {path: (root / path).read_bytes() for path in files} == fixed, "a second --fix changed a file"
