"""Linting reads code, it never runs it; rule files are data, they never run code either.

- Code whose import would have side effects (write files, run commands, import a module that raises)
  linted, fixed and diffed, through the console script and in-process: nothing happens.
- Rule files go through a safe YAML loader: tags that build Python objects are errors, and a rule file
  can only name conditions and fixers built into tritonlint, so it cannot bring its own Python (other
  than by the user installing a plugin package, which is code they chose to run).
- tritonlint's own source holds no eval/exec/dynamic import/subprocess/unpickling, and loads YAML only
  safely.
"""

from __future__ import annotations

import ast
import re
import os
import io
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

import tritonlint
from tests.helpers import lint_code, run_cli
from tritonlint.results import FixMode
from tritonlint.ruleset import RuleFileError, load_rule_file
from tritonlint.strict_yaml import StrictSafeLoader


def _hostile_module(marker_dir: Path) -> str:
    """A kernel module every line of which would leave a trace in marker_dir if it ran."""
    m = str(marker_dir)
    return textwrap.dedent(f"""\
        import triton
        import triton.language as tl
        import boom_module_for_tritonlint_tests  # its import writes a marker, then raises

        open({m!r} + "/top_level", "w").write("ran")
        __import__("os").system("touch " + {m!r} + "/os_system")
        raise SystemExit(3)

        HIDDEN = __import__("os").system("touch " + {m!r} + "/constant")


        @triton.heuristics({{"CHUNKS": lambda args: open({m!r} + "/heuristic", "w")}})
        @triton.autotune(configs=[triton.Config({{"BLOCK": exec("open({m!r} + '/config', 'w')")}})], key=[])
        @triton.jit
        def kernel(x_ptr, CHUNKS: tl.constexpr, BLOCK: tl.constexpr, N: tl.constexpr = eval("64")):
            for i in tl.static_range(64):
                tl.store(x_ptr + i, i)
            for j in tl.static_range(__import__("os").system("touch " + {m!r} + "/bound")):
                tl.store(x_ptr + j, j)


        def launch(x):
            kernel[(compile("1", "f", "eval"),)](x, N=open({m!r} + "/launch", "w"))
        """)


def _plant(tmp_path: Path) -> tuple[Path, Path]:
    markers = tmp_path / "markers"
    markers.mkdir()
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text(f"open({str(markers)!r} + '/package_init', 'w')\n# triton\n")
    (package / "boom_module_for_tritonlint_tests.py").write_text(
        f"open({str(markers)!r} + '/imported', 'w')\nraise RuntimeError('imported!')\n# triton\n")
    (package / "hostile.py").write_text(_hostile_module(markers))
    return package, markers


def test_linting_fixing_and_diffing_run_nothing(tmp_path):
    package, markers = _plant(tmp_path)
    for args in ((), ("--diff",), ("--fix", "--unsafe-fixes"), ("--output-format", "json")):
        result = run_cli("pkg", *args, cwd=tmp_path, env={"PYTHONPATH": str(package)})
        assert result.returncode in (0, 1), result.stderr
        assert "Traceback" not in result.stderr and "imported!" not in result.stdout + result.stderr
        assert list(markers.iterdir()) == [], [p.name for p in markers.iterdir()]
    assert "tl.range(64, loop_unroll_factor=1)" in (package / "hostile.py").read_text()  # it was linted and fixed


def test_in_process_nothing_is_imported(tmp_path, rules, monkeypatch):
    package, markers = _plant(tmp_path)
    monkeypatch.syspath_prepend(str(package))
    modules_before = set(sys.modules)
    result = lint_code((package / "hostile.py").read_text(), rules, mode=FixMode.DIFF, unsafe=True)
    assert result.internal_error is None
    assert [d.code for d in result.diagnostics] == ["TL001"] or result.fixed is not None
    assert list(markers.iterdir()) == []
    assert not {m for m in set(sys.modules) - modules_before if "boom" in m or "hostile" in m}


@pytest.mark.parametrize("tag", [
    "!!python/object/apply:os.system ['touch {marker}']",
    "!!python/object/new:subprocess.check_call [['touch', '{marker}']]",
    "!!python/name:os.system",
    "!!python/module:os",
    "!!python/object:argparse.Namespace {{x: 1}}",
])
def test_python_yaml_tags_in_a_rule_file_are_rejected(tag, tmp_path):
    marker = tmp_path / "marker"
    path = tmp_path / "evil.yaml"
    path.write_text(f"id: ACME001\nname: {tag.format(marker=marker)}\n")
    with pytest.raises(RuleFileError) as error:
        load_rule_file(path)
    assert error.value.key == "<yaml>" and "could not determine a constructor" in error.value.problem
    assert not marker.exists()


def test_the_rule_loader_is_yamls_safe_one():
    assert issubclass(StrictSafeLoader, yaml.constructor.SafeConstructor)
    assert not issubclass(StrictSafeLoader, (yaml.constructor.FullConstructor, yaml.constructor.UnsafeConstructor))


def test_python_next_to_rule_files_is_never_imported(tmp_path):
    """extend-rules folders hold YAML; a .py file there (say, someone's attempt at a custom condition) is
    not imported, and a rule cannot refer to anything but the built-in conditions and fixers."""
    rules = tmp_path / "acme"
    rules.mkdir()
    marker = tmp_path / "marker"
    (rules / "conditions.py").write_text(f"open({str(marker)!r}, 'w')\n")
    (rules / "__init__.py").write_text(f"open({str(marker)!r}, 'w')\n")
    (rules / "acme.yaml").write_text("id: ACME001\nname: acme\nseverity: warning\ncategory: style\nmessage: m\n"
                                     "rule: {kind: call}\nwhere: [conditions.evil]\n")
    (tmp_path / "tritonlint.toml").write_text('extend-rules = ["acme"]\n')
    (tmp_path / "k.py").write_text("import triton\n")
    result = run_cli("k.py", cwd=tmp_path)
    assert result.returncode == 2 and "unknown condition 'conditions.evil'" in result.stderr
    assert not marker.exists()


FORBIDDEN_BUILTINS = {"eval", "exec", "compile", "__import__", "execfile"}
FORBIDDEN_METHODS = {"import_module", "system", "popen", "spawnv", "execv", "unsafe_load", "full_load",
                     "load_module", "exec_module", "run_path", "run_module"}
FORBIDDEN_MODULES = {"importlib", "subprocess", "pickle", "marshal", "runpy", "ctypes", "code", "shelve"}


def test_cache_unpickler_refuses_foreign_classes():
    import pickle

    from tritonlint.cache import _SafeUnpickler

    payload = pickle.dumps(os.system)
    with pytest.raises(pickle.UnpicklingError):
        _SafeUnpickler(io.BytesIO(payload)).load()


def test_tritonlint_source_runs_no_dynamic_code():
    package = Path(tritonlint.__file__).parent
    offences = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            where = f"{path.relative_to(package)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Import):
                offences += [f"{where} import {a.name}" for a in node.names if a.name.split(".")[0] in FORBIDDEN_MODULES]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in FORBIDDEN_MODULES:
                offences.append(f"{where} from {node.module} import")
            elif isinstance(node, ast.Call):
                builtin = isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_BUILTINS
                if builtin or (isinstance(node.func, ast.Attribute) and node.func.attr in FORBIDDEN_METHODS):
                    offences.append(f"{where} {ast.unparse(node.func)}(...)")
                if ast.unparse(node.func) == "yaml.load":
                    loader = next((k.value for k in node.keywords if k.arg == "Loader"), None)
                    if not (isinstance(loader, ast.Name) and loader.id.endswith("SafeLoader")):
                        offences.append(f"{where} yaml.load without a safe loader")
    # The cache (tritonlint's own files) is pickled, but read back through an Unpickler whose find_class
    # admits only tritonlint's data classes: a tampered cache file cannot name a callable to run.
    # startup_cache.py keeps the code Python compiles for tritonlint's own data classes in a marshal file
    # beside tritonlint's byte code (as `.pyc` files are kept): it compiles and runs only the text dataclasses
    # gives it, and whoever can write that file can write tritonlint's `.pyc` files too.
    assert [re.sub(r":\d+ ", " ", offence) for offence in offences] == [
        "cache.py import pickle", "startup_cache.py import marshal", "startup_cache.py exec(...)",
        "startup_cache.py compile(...)"]
