"""Helpers shared by the tests: lint a string in-process, run the installed console script."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tritonlint.config import Settings
from tritonlint.analysis.project import Project
from tritonlint.results import FileResult, FixMode
from tritonlint.ruleset import Rule
from tritonlint.runner import make_linter
from tritonlint.source import decode_source

ROOT = Path(__file__).resolve().parent.parent


def lint_code(code: str, rules: list[Rule], *, select: list[str] | None = None, mode: FixMode = FixMode.NONE,
              unsafe: bool = False, target: str | None = "sm_90", filename: str = "example.py",
              module: str = "example", project: Project | None = None, options: dict | None = None) -> FileResult:
    """Lint a code string in-process, the way the CLI lints a file."""
    settings = Settings(select=select, target=target, options=options or {})
    linter = make_linter(rules, settings, mode, unsafe)
    return linter.lint_source(decode_source(code.encode()), None, filename, module, project or Project())


def tritonlint_executable() -> list[str]:
    """The installed console script (CLI tests run it as users do), falling back to `python -m`."""
    script = shutil.which("tritonlint", path=os.path.dirname(sys.executable)) or shutil.which("tritonlint")
    return [script] if script else [sys.executable, "-m", "tritonlint"]


def run_cli(*args: str, cwd: Path | None = None, stdin: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*tritonlint_executable(), *args], cwd=cwd, input=stdin, capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1", **(env or {})}, timeout=300)


def documented_exemptions(rules: list[Rule], rule_id: str) -> dict[str, str]:
    """The `- `name`: reason.` entries of a rule's "what" doc, whitespace folded."""
    (rule,) = [r for r in rules if r.id == rule_id]
    text = " ".join(rule.doc["what"].split())
    return dict(re.findall(r"- `([a-z-]+)`: (.*?)\.(?= - `|$| [A-Z])", text))


def exemption_docs(exemptions) -> dict[str, str]:
    """An exemption table as documented_exemptions reads it back from the rule doc."""
    return {e.name: " ".join(e.doc.split()) for e in exemptions}


def cli_findings(cwd: Path, code: str, *args: str) -> list[dict]:
    """The JSON findings of `tritonlint check --select CODE ARGS` run in `cwd` (exit status 0 required)."""
    result = run_cli("check", "--select", code, "--output-format", "json", "--exit-zero", *args, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)

