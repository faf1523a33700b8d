"""Start-up: the rule set is compiled once into the cache (keyed by the rule files' contents) and a lint
imports only what it needs. Runs the installed console script, with PYTHONPROFILEIMPORTTIME naming every
module its Python imports."""

from __future__ import annotations

import os
import time

import pytest

from tests.helpers import run_cli
from tests.test_bad_rules_and_config import GOOD_RULE, KERNEL

CONFIG = 'extend-rules = ["acme"]\n'
# Imported only to parse and validate rule files: a run whose rule set comes from the cache needs none.
RULE_LOADING = ("yaml", "tritonlint.strict_yaml", "tritonlint.context")
# Never needed to lint a file without fixes, whatever the cache holds.
NEVER_FOR_A_LINT = ("libcst", "tritonlint.server", "pygls", "lsprotocol", "tritonlint.explain", "tritonlint.notebook",
                    "tritonlint.adoption", "tritonlint.ruletest", "tritonlint.docs", "tempfile", "traceback",
                    "click", "tritonlint.cli", "hashlib", "configparser", "difflib")
# What a run served from the cache does without: the analysis, the matcher, the rules' code.
LINTING = ("tritonlint.linter", "tritonlint.engine", "tritonlint.analysis.model", "tritonlint.rules", "ast_grep_py",
           "tritonlint.suppression", "difflib", "json")


def _project(tmp_path, rule: str = GOOD_RULE) -> None:
    (tmp_path / "k.py").write_text(KERNEL)
    (tmp_path / "tritonlint.toml").write_text(CONFIG)
    (tmp_path / "acme").mkdir(exist_ok=True)
    (tmp_path / "acme" / "acme.yaml").write_text(rule)
    old = time.time() - 60  # a file modified just before it is read is hashed (and its entry written) again
    os.utime(tmp_path / "k.py", (old, old))


def _lint(tmp_path, *args: str):
    """The run, and the modules it imported."""
    result = run_cli(*args, "k.py", cwd=tmp_path, env={"PYTHONPROFILEIMPORTTIME": "1"})
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    result.stderr = "".join(line + "\n" for line in result.stderr.splitlines() if not line.startswith("import time:"))
    return result, imported


def _compiled(tmp_path) -> set[str]:
    return {name for _, _, names in os.walk(tmp_path / ".tritonlint_cache") for name in names
            if name.startswith("rules-") and name.endswith(".pickle")}


def _loaded(imported: set[str], names: tuple[str, ...]) -> set[str]:
    return {module for module in imported if module in names or any(module.startswith(f"{name}.") for name in names)}


def test_the_compiled_rule_set_is_reused_until_an_extend_rules_file_changes(tmp_path):
    _project(tmp_path)
    first, imported = _lint(tmp_path)
    assert first.returncode == 1 and "ACME001" in first.stdout, first.stderr
    assert "yaml" in imported and len(_compiled(tmp_path)) == 1
    compiled = _compiled(tmp_path)

    second, imported = _lint(tmp_path)
    assert (second.returncode, second.stdout) == (first.returncode, first.stdout), second.stderr
    assert not _loaded(imported, RULE_LOADING), "the rule files were parsed again"
    assert _compiled(tmp_path) == compiled

    (tmp_path / "acme" / "acme.yaml").write_text(GOOD_RULE.replace("unrolls {trip} iterations", "unrolls {trip} times"))
    third, imported = _lint(tmp_path, "--select", "ACME")
    assert "unrolls 32 times" in third.stdout and "iterations" not in third.stdout, third.stdout + third.stderr
    assert "yaml" in imported and len(_compiled(tmp_path)) == 2

    added = GOOD_RULE.replace("ACME001", "ACME002").replace("acme-long-static-range", "acme-other-range") \
        .replace("acme-max-trip", "acme-other-trip")
    (tmp_path / "acme" / "other.yaml").write_text(added)
    fourth, _ = _lint(tmp_path)
    assert "ACME001" in fourth.stdout and "ACME002" in fourth.stdout, fourth.stdout + fourth.stderr


def test_a_bad_rule_file_after_a_cached_run_still_names_the_file_and_key(tmp_path):
    _project(tmp_path)
    assert _lint(tmp_path)[0].returncode == 1
    assert _lint(tmp_path)[0].returncode == 1  # the rule set and the results are both cached now
    (tmp_path / "acme" / "acme.yaml").write_text(GOOD_RULE.replace("severity: warning", "severity: loud"))
    result, _ = _lint(tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith(f"error: {tmp_path / 'acme' / 'acme.yaml'}: `severity`: "), lines[0]


def test_a_lint_imports_only_what_it_needs(tmp_path):
    _project(tmp_path)
    cold, imported = _lint(tmp_path, "--no-cache")
    assert cold.returncode == 1 and "ACME001" in cold.stdout, cold.stderr
    assert not _loaded(imported, NEVER_FOR_A_LINT)
    assert "tritonlint.linter" in imported  # the check itself sees the imports

    _lint(tmp_path)
    warm, imported = _lint(tmp_path)
    assert warm.stdout == cold.stdout, warm.stderr
    assert not _loaded(imported, NEVER_FOR_A_LINT + RULE_LOADING + LINTING)


# What a replayed run (replay.py: a recorded run whose inputs all stat as they did) does without.
NOT_FOR_A_REPLAY = ("click", "tritonlint.cli", "tritonlint.config", "tritonlint.cache", "tritonlint.runner",
                    "dataclasses", "inspect", "typing", "pathlib", "tomllib", "pickle", "hashlib")


def _age(folder) -> None:
    """Everything under `folder`, and the folder, last modified a minute ago: a run that read a path modified
    within the last seconds (whose stat may not show the next edit) is not recorded."""
    old = time.time() - 60
    for path in [folder, *folder.rglob("*")]:
        os.utime(path, (old, old))


def _records(tmp_path) -> list:
    return sorted((tmp_path / ".tritonlint_cache").rglob("run-*.record"))


def _run(tmp_path, *args: str):
    result = run_cli(*args, cwd=tmp_path, env={"PYTHONPROFILEIMPORTTIME": "1"})
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    result.stderr = "".join(line + "\n" for line in result.stderr.splitlines() if not line.startswith("import time:"))
    return (result.returncode, result.stdout, result.stderr), imported


def test_an_unchanged_run_is_replayed_without_the_command_line(tmp_path):
    _project(tmp_path)
    first, _ = _run(tmp_path, "k.py")  # lints and fills the cache (which changes the project folder's times)
    assert first[0] == 1 and "ACME001" in first[1], first
    _age(tmp_path)
    second, imported = _run(tmp_path, "k.py")  # served from the cache, and recorded
    assert second == first and "tritonlint.command" in imported and len(_records(tmp_path)) == 1
    third, imported = _run(tmp_path, "k.py")
    assert third == first
    assert not _loaded(imported, NOT_FOR_A_REPLAY + RULE_LOADING + LINTING + NEVER_FOR_A_LINT), \
        sorted(_loaded(imported, NOT_FOR_A_REPLAY + RULE_LOADING + LINTING + NEVER_FOR_A_LINT))
    assert _run(tmp_path, "k.py", "--output-format", "concise")[0] != first  # other arguments: another record


KERNEL_TWO = KERNEL + KERNEL.split("\n\n\n", 1)[1].replace("def kernel(", "def kernel_two(")


@pytest.mark.parametrize("change", ["linted file", "new module", "gitignore", "configuration", "nearer configuration",
                                    "extend-rules folder"])
def test_a_change_to_what_the_recorded_run_read_is_seen(tmp_path, change):
    _project(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "other.py").write_text(KERNEL)
    target = "sub/other.py" if change == "nearer configuration" else "."
    _run(tmp_path, target)
    _age(tmp_path)
    before, _ = _run(tmp_path, target)
    assert _records(tmp_path), "not recorded"
    if change == "linted file":
        (tmp_path / "k.py").write_text(KERNEL_TWO)
    elif change == "new module":
        (tmp_path / "sub" / "third.py").write_text(KERNEL)
    elif change == "gitignore":
        (tmp_path / ".gitignore").write_text("sub/\n")
    elif change == "configuration":
        (tmp_path / "tritonlint.toml").write_text(CONFIG + 'ignore = ["ACME001"]\n')
    elif change == "nearer configuration":
        (tmp_path / "sub" / "tritonlint.toml").write_text('ignore = ["TL001"]\n')
    else:
        (tmp_path / "acme" / "other.yaml").write_text(GOOD_RULE.replace("ACME001", "ACME002")
                                                      .replace("acme-long-static-range", "acme-other-range")
                                                      .replace("acme-max-trip", "acme-other-trip"))
    _age(tmp_path)
    after, _ = _run(tmp_path, target)
    truth, _ = _run(tmp_path, target, "--no-cache")
    assert after == truth and after != before, (before, after)


@pytest.mark.parametrize("args", [("--fix",), ("--diff",), ("-o", "report.txt"), ("--no-cache",), ("bad.py",)])
def test_runs_that_write_or_warn_are_not_recorded(tmp_path, args):
    _project(tmp_path)
    (tmp_path / "bad.py").write_bytes(b"x = '\xff'\n")  # cannot be decoded: a warning on standard error
    _run(tmp_path, *args, "k.py")
    _age(tmp_path)
    _run(tmp_path, *args, "k.py")
    assert not _records(tmp_path)


_reads: list[set[str]] = []  # while a test below runs: every path opened or listed


def _audit(event: str, args: tuple) -> None:
    if _reads and event in ("open", "os.scandir", "os.listdir") and args and isinstance(args[0], (str, os.PathLike)):
        _reads[-1].add(os.path.abspath(args[0]))


def test_every_path_a_lint_reads_in_the_project_is_noted(tmp_path, monkeypatch, capsys):
    """The replay is only as right as the noted inputs: a read that is not noted would let a run replay an
    output that path changed. Audited in-process (audit hooks see every open and folder listing)."""
    import sys

    from tritonlint import inputs
    from tritonlint.cli import main

    _project(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "ops.py").write_text("from k import kernel\n\ndef run(x):\n    kernel[(1,)](x)\n")
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "baseline.json").write_text("[]")
    monkeypatch.chdir(tmp_path)
    if _audit not in getattr(sys, "_tritonlint_hooks", ()):
        sys.addaudithook(_audit)  # cannot be removed: it does nothing outside these tests
        sys._tritonlint_hooks = (*getattr(sys, "_tritonlint_hooks", ()), _audit)  # type: ignore[attr-defined]
    for args in (["k.py"], ["."], ["pkg/ops.py", "--baseline", "baseline.json"]):
        _reads.append(set())
        inputs.start()
        try:
            main(args)
        except SystemExit:
            pass
        finally:
            noted, _ = inputs.finish()
            read = _reads.pop()
        assert str(tmp_path) in read and (args != ["k.py"] or str(tmp_path / "k.py") in read)  # the hook sees the run
        cache = str(tmp_path / ".tritonlint_cache")
        missed = {path for path in read if path.startswith(str(tmp_path)) and not path.startswith(cache)
                  and path not in noted}
        assert not missed, (args, sorted(missed))
    capsys.readouterr()


def test_a_recorded_run_unused_for_30_days_is_pruned(tmp_path):
    from tritonlint.cache import STALE_SECONDS, prune_stale

    version = tmp_path / "0.1.0"
    version.mkdir()
    (version / "run-00000000.record").write_text("")
    (version / "run-11111111.record").write_text("")
    old = time.time() - STALE_SECONDS - 60
    os.utime(version / "run-00000000.record", (old, old))
    prune_stale(tmp_path)
    assert sorted(p.name for p in version.iterdir()) == ["run-11111111.record"]


_KEPT = """
import re, sys
from tritonlint import startup_cache as kept
kept._PATH = sys.argv[1]
kept.install()
import tomllib
import tritonlint.command, tritonlint.linter, tritonlint.rules
from tritonlint.diagnostics import Span
compiled = [key for key in kept._known if isinstance(key, tuple)]
texts = [key for key in kept._known if isinstance(key, str)]
# what was served is what compiling gives: patterns compare by their engine code, code objects by their contents
assert all(re.compile(*key) == kept._compile_regex(*key) for key in compiled)
assert all(kept._known[text] == compile(text, "<string>", "exec", dont_inherit=True) for text in texts)
print(len(compiled), len(texts), len(kept._used), kept._new, repr(Span(1, 2, (1, 0), (1, 1))))
kept.save()
"""


def test_what_python_compiles_at_start_is_kept_and_served_as_compiled(tmp_path):
    """startup_cache: the second process serves dataclass methods and module-level patterns from the file the
    first wrote, and they equal what compiling gives; a damaged file is compiled again and rewritten."""
    import subprocess
    import sys

    kept = tmp_path / "kept.marshal"

    def run() -> list[str]:
        done = subprocess.run([sys.executable, "-c", _KEPT, str(kept)], capture_output=True, text=True, check=False,
                              cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        assert done.returncode == 0, done.stderr
        return done.stdout.split(maxsplit=4)

    patterns, texts, used, new, span = run()
    assert int(patterns) > 20 and int(texts) > 200 and new == "True" and kept.exists()
    again = run()
    assert again == [patterns, texts, str(int(patterns) + int(texts)), "False", span]  # every one served
    kept.write_bytes(b"not marshal data")
    assert run()[3] == "True" and run()[3] == "False"


@pytest.mark.parametrize("config", ["tritonlint.toml", "pyproject.toml"])
def test_a_run_recorded_in_the_configured_cache_dir_is_replayed_from_there(tmp_path, config):
    """A `cache-dir` set in the configuration file: the record is written there, and found there."""
    _project(tmp_path)
    (tmp_path / "tritonlint.toml").unlink()
    settings = CONFIG + 'cache-dir = "build/tl-cache"  # kept out of the source folder\n'
    (tmp_path / config).write_text(settings if config == "tritonlint.toml" else
                                   f'[project]\nname = "x"\n\n[tool.tritonlint]\n{settings}')
    first, _ = _run(tmp_path, "k.py")
    assert first[0] == 1 and "ACME001" in first[1], first
    _age(tmp_path)
    second, _ = _run(tmp_path, "k.py")
    records = sorted((tmp_path / "build" / "tl-cache").rglob("run-*.record"))
    assert second == first and len(records) == 1 and not (tmp_path / ".tritonlint_cache").exists()
    third, imported = _run(tmp_path, "k.py")
    assert third == first and "tritonlint.command" not in imported, sorted(imported)
