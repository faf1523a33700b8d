"""The time limit per file (--file-timeout, config `file-timeout`): a file whose analysis runs past it is an
internal error that names the file and the stage, the other files are linted as usual, the exit code is 2
and nothing about the file is cached. The slow stage comes from the test-only hook
TRITONLINT_TEST_SLOW_STAGE (tritonlint/timelimit.py), never from a real rule."""

from __future__ import annotations

import contextlib
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.helpers import run_cli
from tritonlint import linter, timelimit
from tritonlint.config import Settings
from tritonlint.results import FixMode
from tritonlint.ruleset import load_rules
from tritonlint.runner import lint_paths, make_linter

RULES = load_rules()
SLOW = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def kernel(x_ptr):
        for i in tl.static_range(32):
            tl.store(x_ptr + i, tl.dot(tl.load(x_ptr), tl.load(x_ptr)))
    """)  # TL001 fires here; the other files never reach that rule (no `static_range` in them)
OTHER = next(example.code for rule in RULES if rule.id == "TL006" for example in rule.invalid)
assert "static_range" not in OTHER


def _tree(root: Path, others: int) -> None:
    (root / "slow.py").write_text(SLOW)
    for index in range(others):
        (root / f"k{index:02}.py").write_text(OTHER)


def _slow(stage: str, seconds: float = 30) -> dict[str, str]:
    return {"TRITONLINT_TEST_SLOW_STAGE": f"{stage}:{seconds}"}


def _expect_timeout(proc, stage: str, path: str = "slow.py") -> None:
    assert proc.returncode == 2, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: internal error on file {path}: the analysis ran past the time limit of 1 s "
                      f"(--file-timeout) in stage {stage}; the file is not linted"], proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("others, jobs", [(1, "1"), (40, "2")], ids=["one-process", "workers"])
def test_a_slow_rule_is_an_internal_error_and_the_run_goes_on(tmp_path, others, jobs):
    _tree(tmp_path, others)
    start = time.monotonic()
    proc = run_cli(".", "--no-cache", "--file-timeout", "1", "-j", jobs, "--output-format", "concise",
                   cwd=tmp_path, env=_slow("rule:TL001"))
    assert time.monotonic() - start < 20  # the hook sleeps 30 s
    _expect_timeout(proc, "rule TL001")
    assert proc.stdout.count(": TL006 ") == others and "slow.py" not in proc.stdout


@pytest.mark.parametrize("stage", ["parse", "model"])
def test_the_stage_is_named(tmp_path, stage):
    _tree(tmp_path, 0)
    _expect_timeout(run_cli("slow.py", "--no-cache", "--file-timeout", "1", cwd=tmp_path, env=_slow(stage)), stage)


def test_standard_input(tmp_path):
    proc = run_cli("-", "--stdin-filename", "k.py", "--file-timeout", "1", cwd=tmp_path, stdin=SLOW,
                   env=_slow("rule:TL001"))
    _expect_timeout(proc, "rule TL001", "k.py")


def test_a_late_file_is_not_cached(tmp_path):
    _tree(tmp_path, 1)
    _expect_timeout(run_cli(".", "--file-timeout", "1", cwd=tmp_path, env=_slow("rule:TL001")), "rule TL001")
    proc = run_cli(".", "--output-format", "concise", cwd=tmp_path)  # the same cache, no slow stage now
    assert proc.returncode == 1 and "slow.py:7:" in proc.stdout, proc.stdout + proc.stderr


def test_a_late_fix_writes_nothing(tmp_path):
    _tree(tmp_path, 0)
    _expect_timeout(run_cli("slow.py", "--fix", "--file-timeout", "1", cwd=tmp_path, env=_slow("fix")), "fix")
    assert (tmp_path / "slow.py").read_text() == SLOW
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == ["slow.py"]  # no temporary left behind


def test_zero_disables_the_limit(tmp_path):
    _tree(tmp_path, 0)
    proc = run_cli("slow.py", "--no-cache", "--file-timeout", "0", cwd=tmp_path, env=_slow("rule:TL001", 1.5))
    assert proc.returncode == 1 and "TL001" in proc.stdout, proc.stderr


def test_the_configured_limit(tmp_path):
    _tree(tmp_path, 0)
    (tmp_path / "tritonlint.toml").write_text("file-timeout = 1\n")
    _expect_timeout(run_cli("slow.py", "--no-cache", cwd=tmp_path, env=_slow("rule:TL001")), "rule TL001")


@pytest.mark.parametrize("value", ['"10"', "-1", "true", "1e9", "nan"])
def test_a_bad_configured_limit_names_the_file_and_key(tmp_path, value):
    (tmp_path / "tritonlint.toml").write_text(f"file-timeout = {value}\n")
    proc = run_cli(".", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith(f"error: {tmp_path / 'tritonlint.toml'}: `file-timeout`: must be a number")


@pytest.mark.parametrize("value", ["-1", "nan", "ten"])
def test_a_bad_limit_on_the_command_line(tmp_path, value):
    proc = run_cli(".", "--file-timeout", value, cwd=tmp_path)
    assert proc.returncode == 2 and "--file-timeout" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="forks the workers")
def test_a_worker_stuck_where_no_signal_reaches_is_killed_and_replaced(tmp_path, monkeypatch):
    """Native code that never returns cannot be interrupted by the worker's own timer: the parent kills the
    worker after its deadline, reports the stage the worker last wrote, and a fresh worker lints the rest."""
    _tree(tmp_path, 40)
    monkeypatch.setattr(linter, "time_limit", lambda seconds: contextlib.nullcontext())  # as if stuck in C
    monkeypatch.setattr(timelimit, "_SLOW", ("rule TL001", 60))  # the forked workers inherit both
    settings = Settings(root=tmp_path, target="sm_90", file_timeout=1)
    start = time.monotonic()
    run = lint_paths([tmp_path], settings, make_linter(RULES, settings, FixMode.NONE, unsafe=False), jobs=2)
    assert time.monotonic() - start < 30
    results = {Path(r.path).name: r for r in run.files}
    assert len(results) == 41
    assert results["slow.py"].internal_error == timelimit.message(results["slow.py"].path, 1, "rule TL001")
    assert all(r.internal_error is None and "TL006" in {d.code for d in r.diagnostics}
               for name, r in results.items() if name != "slow.py")


def test_writing_a_fixed_file_is_never_interrupted(monkeypatch):
    with timelimit.time_limit(0.2):
        timelimit.enter(timelimit.WRITE)
        time.sleep(0.5)  # the timer fires here and is ignored
    with pytest.raises(timelimit.FileTimeout) as raised, timelimit.time_limit(0.2):
        timelimit.enter("model")
        time.sleep(5)
    assert raised.value.stage == "model"
