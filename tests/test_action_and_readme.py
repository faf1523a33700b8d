"""The composite GitHub Action (action.yml) and the README's copy-paste snippets stay valid: they parse,
name only inputs and hooks that exist, and the action's lint step, run by bash as a runner would, prints
annotations and writes a SARIF file that validates."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import ROOT, tritonlint_executable
from tests.review_support import sarif_errors, write_project
from tests.test_precommit import pre_commit

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
README = (ROOT / "README.md").read_text(encoding="utf-8")
HOMEPAGE = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Homepage"]
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", README, flags=re.MULTILINE | re.DOTALL)


def _expressions(value: object) -> list[str]:
    if isinstance(value, dict):
        return [e for item in value.values() for e in _expressions(item)]
    if isinstance(value, list):
        return [e for item in value for e in _expressions(item)]
    return EXPRESSION.findall(value) if isinstance(value, str) else []


def test_readme_still_starts_with_the_ci_commands():
    setup, tests = _blocks("sh")[:2]
    assert setup.strip() == "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/tritonlint fixtures/"
    assert tests.strip().startswith(".venv/bin/pip install") and tests.strip().endswith(".venv/bin/pytest")


def test_action_is_a_composite_action():
    assert ACTION["name"] and ACTION["description"] and ACTION["runs"]["using"] == "composite"
    inputs = ACTION["inputs"]
    assert {"paths", "args", "version", "python-version", "sarif-file", "cache"} <= set(inputs)
    for name, spec in inputs.items():
        assert spec["description"] and spec["required"] is False and isinstance(spec["default"], str), name
    steps = ACTION["runs"]["steps"]
    ids = {step["id"] for step in steps if "id" in step}
    for step in steps:
        assert ("uses" in step) != ("run" in step), step
        if "run" in step:
            assert step["shell"] == "bash"
            assert "${{" not in step["run"], "inputs reach scripts through env, never pasted into the script"
    used = set()
    for expression in _expressions(ACTION):
        kind, _, rest = expression.partition(".")
        if kind == "inputs":
            assert rest.split()[0] in inputs, expression
            used.add(rest.split()[0])
        elif kind == "steps":
            assert rest.split(".")[0] in ids, expression
        elif expression.startswith("hashFiles("):  # the cache key: the configuration files
            assert "tritonlint.toml" in expression and "pyproject.toml" in expression
        else:
            assert expression in ("github.action_path", "github.sha"), expression
    assert used == set(inputs), "every input is used"
    assert any(step.get("uses", "").startswith("actions/setup-python@") for step in steps)
    cache = next(step for step in steps if step.get("uses", "").startswith("actions/cache@"))
    assert "steps.install.outputs.version" in cache["with"]["key"]
    lint = next(step for step in steps if step.get("id") == "lint")
    assert lint["env"]["TRITONLINT_CACHE_DIR"] == cache["with"]["path"]


def _render(value: str, inputs: dict[str, str]) -> str:
    def substitute(match: re.Match[str]) -> str:
        expression = match.group(1)
        if expression == "github.action_path":
            return str(ROOT)
        return inputs[expression] if expression in inputs else inputs[expression.removeprefix("inputs.")]

    return EXPRESSION.sub(substitute, value)


def _run_step(name: str, inputs: dict[str, str], cwd: Path, tmp_path: Path) -> tuple[subprocess.CompletedProcess, str]:
    """Run one of the action's bash steps the way a runner does (`bash -e -o pipefail`), with this
    checkout's console script first on PATH; returns the process and what it wrote to GITHUB_OUTPUT."""
    step = next(step for step in ACTION["runs"]["steps"] if step.get("name") == name)
    defaults = {key: spec["default"] for key, spec in ACTION["inputs"].items()}
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "tritonlint"
    shim.write_text(f"#!/bin/sh\nexec {shlex.join(tritonlint_executable())} \"$@\"\n")
    shim.chmod(0o755)
    outputs, path_file = tmp_path / "github_output", tmp_path / "github_path"
    outputs.write_text("")
    path_file.write_text("")
    env = {**os.environ, "NO_COLOR": "1", "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "GITHUB_OUTPUT": str(outputs), "GITHUB_PATH": str(path_file), "RUNNER_TEMP": str(tmp_path),
           **{key: _render(value, {**defaults, "steps.install.outputs.cache-dir": str(tmp_path / "cache"), **inputs})
              for key, value in step.get("env", {}).items()}}
    script = tmp_path / "step.sh"
    script.write_text(step["run"])
    process = subprocess.run(["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", str(script)], cwd=cwd,
                             env=env, capture_output=True, text=True, timeout=300)
    return process, outputs.read_text()


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_action_lint_step_annotates_and_writes_sarif(tmp_path):
    project = write_project(tmp_path / "work")
    (project / "other.py").write_text((project / "proj.py").read_text())
    inputs = {"paths": "proj.py acme.py", "args": "--select TL001 --target sm_90", "sarif-file": "out/tritonlint.sarif"}
    process, outputs = _run_step("Run tritonlint", inputs, project, tmp_path)
    assert process.returncode == 1, process.stderr
    assert process.stdout.splitlines()[0].startswith(
        "::warning title=tritonlint (TL001),file=proj.py,line=12,col=5,endLine=12,endColumn=51::proj.py:12:5: TL001 ")
    assert len(process.stdout.splitlines()) == 1  # only the named paths, only the selected rule
    log = json.loads((project / "out" / "tritonlint.sarif").read_text())
    assert sarif_errors(log) == [] and [r["ruleId"] for r in log["runs"][0]["results"]] == ["TL001"]
    assert "sarif-file=out/tritonlint.sarif" in outputs.splitlines()

    (project / "proj.py").write_text("import triton\n")
    clean, outputs = _run_step("Run tritonlint", {"paths": "proj.py"}, project, tmp_path)
    assert (clean.returncode, clean.stdout) == (0, "") and "sarif-file=" in outputs.splitlines()


# Stands in for the runner's Python: `python -m venv DIR` makes DIR/bin/python (this script again), and
# any other call is recorded instead of installing from PyPI.
FAKE_PYTHON = """#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && exit 0; fi
echo "$0 $*" >> "$PIP_RECORD"
"""


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
@pytest.mark.parametrize(("version", "requirement"), [
    ("", str(ROOT)), ("latest", "tritonlint"), ("0.1.0", "tritonlint==0.1.0")])
def test_action_install_step(tmp_path, monkeypatch, version, requirement):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").write_text(FAKE_PYTHON)
    (tmp_path / "bin" / "python").chmod(0o755)
    monkeypatch.setenv("PIP_RECORD", str(tmp_path / "record"))
    process, _ = _run_step("Install tritonlint", {"version": version}, tmp_path, tmp_path)
    assert process.returncode == 0, process.stderr
    venv_bin = tmp_path / "tritonlint-venv" / "bin"
    assert (tmp_path / "record").read_text().splitlines()[0].split() == [
        str(venv_bin / "python"), "-m", "pip", "install", "--disable-pip-version-check", "--quiet", requirement]
    # only the tritonlint command reaches later steps, never the virtual environment's python and pip
    (bin_dir,) = (tmp_path / "github_path").read_text().splitlines()
    assert bin_dir == str(tmp_path / "tritonlint-bin") and not (Path(bin_dir) / "python").exists()


def test_readme_pre_commit_snippet(tmp_path):
    (config,) = [block for block in _blocks("yaml") if block.startswith("repos:")]
    (repo,) = yaml.safe_load(config)["repos"]
    assert repo["repo"] == HOMEPAGE and repo["rev"] == "COMMIT_SHA"  # no release is tagged yet
    hook_ids = {hook["id"] for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert {hook["id"] for hook in repo["hooks"]} <= hook_ids
    assert "# - id: tritonlint-fix" in config
    (tmp_path / ".pre-commit-config.yaml").write_text(config)
    result = subprocess.run([*pre_commit(), "validate-config", str(tmp_path / ".pre-commit-config.yaml")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_readme_workflow_snippet():
    (text,) = [block for block in _blocks("yaml") if block.startswith("name:")]
    workflow = yaml.safe_load(text)
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "pull_request" in triggers
    (job,) = workflow["jobs"].values()
    assert job["permissions"]["security-events"] == "write" and "runs-on" in job
    steps = job["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@")
    lint = next(step for step in steps if step.get("uses", "").startswith("tritonlint/tritonlint@"))
    assert lint["uses"] == f"{HOMEPAGE.removeprefix('https://github.com/')}@COMMIT_SHA"
    assert set(lint["with"]) <= set(ACTION["inputs"])
    upload = next(step for step in steps if step.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert upload["with"]["sarif_file"] == lint["with"]["sarif-file"]
    assert "cancelled()" in upload["if"] or "always()" in upload["if"], "upload even when findings fail the lint step"
    assert steps.index(upload) > steps.index(lint)


def test_readme_rule_example_loads_and_works(tmp_path):
    """The "Writing rules" example in the README is a working extend-rules rule."""
    from tests.helpers import run_cli

    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Writing rules", 1)[1]
    rule_yaml = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "lint-rules").mkdir()
    (tmp_path / "lint-rules" / "acme.yaml").write_text(rule_yaml)
    (tmp_path / "tritonlint.toml").write_text('extend-rules = ["lint-rules"]\n')
    (tmp_path / "k.py").write_text(
        "import triton\nimport triton.language as tl\n\n@triton.jit\ndef kernel(x_ptr):\n    tl.debug_barrier()\n")
    result = run_cli("k.py", "--select", "ACME001", "--output-format", "concise", "--fail-level", "info", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "k.py:6:5: ACME001 `tl.debug_barrier` in kernel `kernel` serialises" in result.stdout
