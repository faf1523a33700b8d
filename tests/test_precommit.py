"""The pre-commit hooks, run by the real pre-commit (`pre-commit try-repo`), which installs this project
into an environment of its own from PyPI's packages, as it does for users."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import ROOT
from tests.test_cli import K_LOOP

FIXED_LOOP = "for k in tl.range(0, HIDDEN // BLOCK_K, loop_unroll_factor=1):"
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))


def pre_commit() -> list[str]:
    script = shutil.which("pre-commit", path=os.path.dirname(sys.executable)) or shutil.which("pre-commit")
    if script:
        return [script]
    if importlib.util.find_spec("pre_commit") is not None:
        return [sys.executable, "-m", "pre_commit"]
    pytest.skip("pre-commit is not installed (it comes with the `test` extra: pip install '.[test]')")


def _env(home: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PRE_COMMIT", "GIT_"))}
    env.pop("PYTHONPATH", None)  # the hook must run the copy pre-commit installed, not this checkout
    return {**env, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never", "NO_COLOR": "1"}


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main",
                    "-c", "commit.gpgsign=false", *args], cwd=cwd, check=True, capture_output=True)


def test_hook_manifest_follows_ruffs_conventions():
    assert [hook["id"] for hook in HOOKS] == ["tritonlint", "tritonlint-fix"]
    for hook in HOOKS:
        assert hook["language"] == "python" and hook["types_or"] == ["python", "pyi"]
        assert hook["require_serial"] is True and hook["minimum_pre_commit_version"] == "2.9.2"
        assert hook["entry"].startswith("tritonlint check ") and "--force-exclude" in hook["entry"].split()
    assert "--fix" not in HOOKS[0]["entry"].split() and "--fix" in HOOKS[1]["entry"].split()
    result = subprocess.run([*pre_commit(), "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def _project_copy(target: Path) -> Path:
    """This checkout as committed files of a repository of its own, so that try-repo installs exactly
    the files on disk (tracked or not) whatever state the checkout's git is in."""
    shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns(
        ".git", ".venv", "venv", "__pycache__", "*.egg-info", ".pytest_cache", ".tritonlint_cache", ".hypothesis",
        "build", "dist", ".whl"))
    _git("init", "-q", cwd=target)
    _git("add", "-A", cwd=target)
    _git("commit", "-q", "-m", "snapshot", cwd=target)
    return target


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_try_repo_fails_on_a_bad_kernel_fixes_it_then_passes(tmp_path):
    command = pre_commit()
    project = _project_copy(tmp_path / "project")
    repo = tmp_path / "repo"
    (repo / "third_party").mkdir(parents=True)
    (repo / "kernel.py").write_text(K_LOOP)
    (repo / "third_party" / "vendored.py").write_text(K_LOOP)  # excluded by the configuration below
    (repo / "pyproject.toml").write_text('[tool.tritonlint]\nextend-exclude = ["third_party"]\n')
    _git("init", "-q", cwd=repo)
    _git("add", "-A", cwd=repo)
    env = _env(tmp_path / "pre-commit-home")

    # one environment build runs both hooks: the check fails, then the fix hook rewrites the file
    first = subprocess.run([*command, "try-repo", str(project), "--all-files"], cwd=repo, env=env,
                           capture_output=True, text=True, timeout=600)
    output = first.stdout + first.stderr
    assert first.returncode == 1, output
    check, fix = _hook_sections(output)
    assert check.startswith("tritonlint.") and "Failed" in check.splitlines()[0], output
    assert " --> kernel.py:12:5" in check and "TL001" in check and "vendored" not in check
    assert fix.startswith("tritonlint (fix).") and "files were modified by this hook" in fix, output
    assert FIXED_LOOP in (repo / "kernel.py").read_text()
    assert (repo / "third_party" / "vendored.py").read_text() == K_LOOP

    _git("add", "-A", cwd=repo)
    second = subprocess.run([*command, "try-repo", str(project), "tritonlint", "--all-files"], cwd=repo, env=env,
                            capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stdout + second.stderr
    assert any(line.startswith("tritonlint.") and line.endswith("Passed") for line in second.stdout.splitlines())


def _hook_sections(output: str) -> tuple[str, str]:
    """The report of each hook: from its status line to the next status line."""
    lines = output.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("tritonlint") and line.rstrip().endswith(
        ("Passed", "Failed", "Skipped"))]
    assert len(starts) == 2, output
    return "\n".join(lines[starts[0]:starts[1]]), "\n".join(lines[starts[1]:])
