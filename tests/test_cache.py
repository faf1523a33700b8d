"""The result cache: hits, invalidation (content, configuration, a launched kernel's module), damaged
cache files, `--no-cache`, `--cache-dir`, `clean`, fixes, and two runs at once."""

from __future__ import annotations

import os
import textwrap
import threading
from pathlib import Path

import pytest

from tests.helpers import run_cli
from tritonlint import cache as cache_module
from tritonlint.cache import CACHE_DIR_NAME, LintCache, open_cache
from tritonlint.config import Settings
from tritonlint.context import MatchContext
from tritonlint.linter import FileLinter
from tritonlint.results import FixMode
from tritonlint.context import CONDITIONS, Verdict, condition
from tritonlint.ruleset import load_rule_file
from tritonlint.runner import lint_paths, make_linter

KERNEL = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def kernel(x_ptr):
        for i in tl.static_range(64):
            tl.store(x_ptr + i, tl.dot(tl.load(x_ptr), tl.load(x_ptr)))
    """)

# A rule that follows a launch into the module defining the kernel, as the cross-module rules do.
LAUNCH_RULE = textwrap.dedent("""\
    id: TST900
    name: launch-params
    severity: info
    category: style
    message: "launches {kernel} with {count} parameters"
    rule:
      kind: call
      has: {field: function, kind: subscript}
    where:
      - test-launched-kernel
    doc: {what: x, why: x}
    tests:
      invalid: ["k[g](x)  # expect: TST900"]
      valid: ["x = 1"]
    """)


if "test-launched-kernel" not in CONDITIONS:
    @condition("test-launched-kernel", provides=("kernel", "count"))
    def _launched_kernel(ctx: MatchContext) -> Verdict | None:
        launch = next((site for site in ctx.model.launches if ctx.span() == ctx.file.span_of(site.node)), None)
        kernel = ctx.kernel_for(launch) if launch is not None else None
        if launch is None:
            return None
        count = str(len(kernel.params)) if kernel is not None else "unknown"
        return Verdict(vars={"kernel": launch.callee_text, "count": count})


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


class Counting:
    """Lints in-process and counts the files actually linted (not served from the cache)."""

    def __init__(self, monkeypatch) -> None:
        self.linted: list[str] = []
        original = FileLinter.lint_source

        def counted(linter, source, path, display, *args, **kwargs):
            self.linted.append(display)
            return original(linter, source, path, display, *args, **kwargs)

        monkeypatch.setattr(FileLinter, "lint_source", counted)

    def run(self, root: Path, rules, settings: Settings | None = None, mode: FixMode = FixMode.NONE,
            paths: list[Path] | None = None, use_cache: bool = True):
        settings = settings or Settings(root=root)
        self.linted = []
        cache = open_cache(root / CACHE_DIR_NAME, settings, rules, False) if use_cache else None
        result = lint_paths(paths or [root], settings, make_linter(rules, settings, mode, False), jobs=1, cache=cache)
        return result, sorted(self.linted)


def _findings(result) -> list[tuple[str, int, str, str]]:
    return sorted((d.filename, d.location.row, d.code, d.message) for r in result.files for d in r.diagnostics)


def test_unchanged_files_are_served_from_the_cache(project, rules, monkeypatch):
    (project / "k.py").write_text(KERNEL)
    (project / "other.py").write_text("import triton\nx = 1\n")
    counting = Counting(monkeypatch)
    first, linted = counting.run(project, rules)
    assert linted == ["k.py", "other.py"] and [d.code for d in first.files[0].diagnostics] == ["TL001"]
    second, linted = counting.run(project, rules)
    assert linted == [] and _findings(second) == _findings(first)


def test_a_stat_change_without_a_content_change_is_still_a_hit(project, rules, monkeypatch):
    path = project / "k.py"
    path.write_text(KERNEL)
    counting = Counting(monkeypatch)
    counting.run(project, rules)
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))  # touched: the content digest decides
    _, linted = counting.run(project, rules)
    assert linted == []
    _, linted = counting.run(project, rules)  # the new stat was remembered
    assert linted == []


def test_a_changed_file_is_linted_again(project, rules, monkeypatch):
    (project / "k.py").write_text(KERNEL)
    (project / "other.py").write_text("import triton\nx = 1\n")
    counting = Counting(monkeypatch)
    counting.run(project, rules)
    (project / "k.py").write_text(KERNEL.replace("static_range(64)", "static_range(8)"))
    result, linted = counting.run(project, rules)
    assert linted == ["k.py"] and _findings(result) == []


def test_another_configuration_does_not_reuse_results(project, rules, monkeypatch):
    (project / "k.py").write_text(KERNEL)
    counting = Counting(monkeypatch)
    counting.run(project, rules)
    relaxed = Settings(root=project, options={"static-range-max-trip": 128})
    result, linted = counting.run(project, rules, settings=relaxed)
    assert linted == ["k.py"] and _findings(result) == []
    _, linted = counting.run(project, rules)  # the first configuration keeps its own entries
    assert linted == []


def test_another_ast_grep_does_not_reuse_results(project, rules, monkeypatch):
    (project / "k.py").write_text(KERNEL)
    counting = Counting(monkeypatch)
    counting.run(project, rules)
    monkeypatch.setattr(cache_module, "matcher_identity", lambda: "ast-grep-py built elsewhere")
    _, linted = counting.run(project, rules)
    assert linted == ["k.py"]


def _cross_module_project(root: Path, rules) -> list:
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kernels.py").write_text(KERNEL)
    (package / "launch.py").write_text("import triton\nfrom pkg.kernels import kernel\n\n\ndef run(x):\n"
                                       "    kernel[(1,)](x)\n")
    rule_path = root / "TST900.yaml"
    rule_path.write_text(LAUNCH_RULE)
    return [*rules, load_rule_file(rule_path)]


def _launch_message(result) -> str:
    return next(d.message for r in result.files for d in r.diagnostics if d.code == "TST900")


def test_a_changed_kernel_module_invalidates_the_files_that_launch_its_kernels(project, rules, monkeypatch):
    all_rules = _cross_module_project(project, rules)
    counting = Counting(monkeypatch)
    first, _ = counting.run(project, all_rules)
    assert _launch_message(first) == "launches kernel with 1 parameters"
    _, linted = counting.run(project, all_rules)
    assert linted == []
    kernels = project / "pkg" / "kernels.py"
    kernels.write_text(KERNEL.replace("def kernel(x_ptr):", "def kernel(x_ptr, y_ptr):"))
    second, linted = counting.run(project, all_rules)
    assert "pkg/launch.py" in linted and "pkg/kernels.py" in linted
    assert _launch_message(second) == "launches kernel with 2 parameters"


def test_a_kernel_module_joining_the_project_invalidates_its_launchers(project, rules, monkeypatch):
    all_rules = _cross_module_project(project, rules)
    kernels = project / "pkg" / "kernels.py"
    kernels.unlink()
    counting = Counting(monkeypatch)
    alone, _ = counting.run(project, all_rules, paths=[project / "pkg" / "launch.py"])
    assert _launch_message(alone) == "launches kernel with unknown parameters"
    kernels.write_text(KERNEL)  # the module appears: the launch resolves, whether or not it is linted itself
    joined, linted = counting.run(project, all_rules, paths=[project / "pkg" / "launch.py"])
    assert "pkg/launch.py" in linted
    assert _launch_message(joined) == "launches kernel with 1 parameters"
    both, linted = counting.run(project, all_rules, paths=[project / "pkg"])
    assert linted == []  # the kernel module was read as context before: nothing changed
    assert _launch_message(both) == "launches kernel with 1 parameters"


@pytest.mark.parametrize("damage", [b"", b"not a pickle", b"\x80\x05K\x01.", b"\x80\x04\x95"])
def test_a_corrupt_cache_file_is_ignored_and_rewritten(project, rules, monkeypatch, damage):
    (project / "k.py").write_text(KERNEL)
    counting = Counting(monkeypatch)
    first, _ = counting.run(project, rules)
    for path in (project / CACHE_DIR_NAME).rglob("*.pickle"):
        path.write_bytes(damage)
    second, linted = counting.run(project, rules)
    assert linted == ["k.py"] and _findings(second) == _findings(first)
    _, linted = counting.run(project, rules)
    assert linted == []


def test_a_damaged_entry_is_ignored(project, rules, monkeypatch):
    (project / "k.py").write_text(KERNEL)
    (project / "other.py").write_text("import triton\nx = 1\n")
    counting = Counting(monkeypatch)
    first, _ = counting.run(project, rules)
    settings = Settings(root=project)
    cache = open_cache(project / CACHE_DIR_NAME, settings, rules, False)
    key = str(project / "k.py")
    cache.put(key, cache_module.dataclasses.replace(cache.entries[key], diagnostics_blob=b"garbage"))
    cache.put(str(project / "other.py"), "not an entry")  # type: ignore[arg-type]
    assert cache.save() is None
    second, linted = counting.run(project, rules)
    assert linted == ["k.py", "other.py"] and _findings(second) == _findings(first)


def test_a_cache_file_naming_foreign_classes_is_refused(project, rules, monkeypatch):
    import pickle

    (project / "k.py").write_text(KERNEL)
    counting = Counting(monkeypatch)
    counting.run(project, rules)
    cache = open_cache(project / CACHE_DIR_NAME, Settings(root=project), rules, False)
    cache.path.write_bytes(pickle.dumps({"format": cache_module.FORMAT, "key": cache.key,
                                         "entries": {"x": os.system}}))
    assert LintCache(cache.folder, cache.key).entries == {}


def test_no_cache_reads_and_writes_nothing(project, rules, monkeypatch):
    (project / "k.py").write_text(KERNEL)
    counting = Counting(monkeypatch)
    counting.run(project, rules, use_cache=False)
    assert not (project / CACHE_DIR_NAME).exists()


def test_cli_cache_dir_no_cache_and_clean(tmp_path):
    (tmp_path / "k.py").write_text(KERNEL)
    assert run_cli("k.py", "--no-cache", cwd=tmp_path).returncode == 1
    assert not (tmp_path / CACHE_DIR_NAME).exists()
    elsewhere = tmp_path / "elsewhere"
    assert run_cli("k.py", "--cache-dir", str(elsewhere), cwd=tmp_path).returncode == 1
    assert (elsewhere / "CACHEDIR.TAG").is_file() and not (tmp_path / CACHE_DIR_NAME).exists()
    first = run_cli("k.py", "--output-format", "concise", cwd=tmp_path)
    again = run_cli("k.py", "--output-format", "concise", cwd=tmp_path)
    assert first.stdout == again.stdout and "TL001" in again.stdout
    assert (tmp_path / CACHE_DIR_NAME / "CACHEDIR.TAG").is_file()
    cleaned = run_cli("clean", cwd=tmp_path)
    assert cleaned.returncode == 0 and not (tmp_path / CACHE_DIR_NAME).exists()
    assert run_cli("clean", "--cache-dir", str(elsewhere), cwd=tmp_path).returncode == 0 and not elsewhere.exists()
    assert run_cli("clean", cwd=tmp_path).returncode == 0  # nothing to remove is fine
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("x")
    refused = run_cli("clean", "--cache-dir", str(foreign), cwd=tmp_path)
    assert refused.returncode == 2 and (foreign / "keep.txt").exists()


def test_fix_never_returns_stale_cached_findings(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    assert run_cli("k.py", cwd=tmp_path).returncode == 1  # cached: one fixable finding
    diff = run_cli("k.py", "--diff", cwd=tmp_path)
    assert "+    for i in tl.range(64, loop_unroll_factor=1):" in diff.stdout and path.read_text() == KERNEL
    fixed = run_cli("k.py", "--fix", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "tl.range(64, loop_unroll_factor=1)" in path.read_text()
    after = run_cli("k.py", cwd=tmp_path)
    assert after.returncode == 0 and "All checks passed!" in after.stdout


def test_two_runs_at_once_leave_a_usable_cache(tmp_path):
    for index in range(30):
        (tmp_path / f"k{index}.py").write_text(KERNEL)
    outcomes = []
    threads = [threading.Thread(target=lambda: outcomes.append(run_cli(".", "--output-format", "concise",
                                                                        cwd=tmp_path)))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [o.returncode for o in outcomes] == [1, 1]
    assert outcomes[0].stdout == outcomes[1].stdout
    again = run_cli(".", "--output-format", "concise", cwd=tmp_path)
    assert again.stdout == outcomes[0].stdout and again.stderr == ""


def test_a_run_served_from_the_cache_loads_no_parser(tmp_path):
    """Start-up is most of a warm run: YAML, ast-grep and libcst stay unimported when nothing is linted."""
    import subprocess
    import sys

    (tmp_path / "k.py").write_text(KERNEL)
    assert run_cli("k.py", cwd=tmp_path).returncode == 1
    probe = ("import atexit, sys\n"
             "atexit.register(lambda: print('loaded:', [m for m in ('yaml', 'ast_grep_py', 'libcst')"
             " if m in sys.modules], file=sys.stderr))\n"
             "from tritonlint.cli import main\nmain(['k.py'])\n")
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "TL001" in result.stdout
    assert "loaded: []" in result.stderr


def test_entries_of_deleted_files_are_dropped_when_the_cache_is_written(project, rules, monkeypatch):
    (project / "k.py").write_text(KERNEL)
    (project / "gone.py").write_text(KERNEL)
    counting = Counting(monkeypatch)
    counting.run(project, rules)
    (project / "gone.py").unlink()
    (project / "k.py").write_text(KERNEL.replace("static_range(64)", "static_range(8)"))  # something to write
    counting.run(project, rules)
    cache = open_cache(project / CACHE_DIR_NAME, Settings(root=project), rules, False)
    assert sorted(Path(path).name for path in cache.entries) == ["k.py"]


def test_cache_files_unused_for_a_month_are_removed_when_a_run_writes(project, rules, monkeypatch):
    (project / "k.py").write_text(KERNEL)
    folder = project / CACHE_DIR_NAME
    old_version = folder / "0.0.1"
    old_version.mkdir(parents=True)
    for name in ("abc.pickle", "abc.lock"):
        (old_version / name).write_bytes(b"x")
    current = folder / cache_module.__version__
    current.mkdir()
    (current / "other-config.pickle").write_bytes(b"x")
    (current / "other-config.lock").write_bytes(b"x")
    (current / "recent-config.pickle").write_bytes(b"x")
    month_ago = cache_module.time.time() - cache_module.STALE_SECONDS - 60
    for path in [*old_version.iterdir(), current / "other-config.pickle", current / "other-config.lock"]:
        os.utime(path, (month_ago, month_ago))
    Counting(monkeypatch).run(project, rules)
    assert not old_version.exists()
    left = sorted(p.name for p in current.iterdir())
    assert "other-config.pickle" not in left and "other-config.lock" not in left
    assert "recent-config.pickle" in left and any(name.endswith(".pickle") and len(name) == 39 for name in left)


def test_a_cache_in_use_is_not_stale(project, rules, monkeypatch):
    (project / "k.py").write_text(KERNEL)
    counting = Counting(monkeypatch)
    counting.run(project, rules)
    cache_file = open_cache(project / CACHE_DIR_NAME, Settings(root=project), rules, False).path
    month_ago = cache_module.time.time() - cache_module.STALE_SECONDS - 60
    os.utime(cache_file, (month_ago, month_ago))
    _, linted = counting.run(project, rules)  # served from the cache, which it marks as used
    assert linted == [] and cache_file.stat().st_mtime > month_ago + 60


def test_a_changed_rule_data_table_gives_the_results_another_key(tmp_path, monkeypatch):
    """Rules compute findings from their data tables (TL103's API versions): cached results must not outlive
    an edit of a table (a development checkout changes it without a new version)."""
    import shutil

    from tritonlint import ruledata
    from tritonlint.cache import open_cache
    from tritonlint.command import load_project

    tables = tmp_path / "data"
    shutil.copytree(ruledata.data_dir(), tables)
    monkeypatch.setattr(ruledata, "data_dir", lambda: str(tables))
    settings, rules = load_project(None, tmp_path)

    def key() -> str:
        return open_cache(tmp_path / "cache", settings, rules, False).key

    before = key()
    assert key() == before
    table = next(tables.glob("*.yaml"))
    table.write_text(table.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert key() != before
