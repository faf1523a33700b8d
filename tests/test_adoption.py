"""Adopting tritonlint on an existing repository: fail levels, suppressions and TL900, TL000 whatever the
selection. Each test runs the installed console script."""

from __future__ import annotations

import json

from tests.helpers import run_cli
from tests.review_support import write_project
from tests.test_cli import K_LOOP

LOOP_LINE = "    for k in tl.static_range(0, HIDDEN // BLOCK_K):\n"


def _codes(result) -> list[str]:
    return [d["code"] for d in json.loads(result.stdout)]


def test_fail_level_counts_only_findings_at_or_above_it(tmp_path):
    write_project(tmp_path, loop=False)  # acme.py: ACME001 (info) and ACME002 (error)
    info_only = run_cli("acme.py", "--ignore", "ACME002", cwd=tmp_path)
    assert info_only.returncode == 0 and "ACME001" in info_only.stdout  # printed, but info does not fail
    assert run_cli("acme.py", "--ignore", "ACME002", "--fail-level", "info", cwd=tmp_path).returncode == 1
    assert run_cli("acme.py", "--fail-level", "error", cwd=tmp_path).returncode == 1
    (tmp_path / "tritonlint.toml").write_text('extend-rules = ["rules"]\nfail-level = "info"\n')
    assert run_cli("acme.py", "--ignore", "ACME002", cwd=tmp_path).returncode == 1
    (tmp_path / "tritonlint.toml").write_text('extend-rules = ["rules"]\nfail-level = "loud"\n')
    bad = run_cli("acme.py", cwd=tmp_path)
    assert bad.returncode == 2 and "fail-level" in bad.stderr


def test_tl000_counts_whatever_the_fail_level_and_selection(tmp_path):
    (tmp_path / "broken.py").write_text("import triton\ndef f(:\n    pass\n")
    (tmp_path / "plain.py").write_text("x = (\n")  # no Triton in it: still reported, as ruff does
    result = run_cli(".", "--select", "TL001", "--fail-level", "error", "--output-format", "json", cwd=tmp_path)
    assert result.returncode == 1 and _codes(result) == ["TL000", "TL000"]
    assert "(as parsed by Python 3." in json.loads(result.stdout)[0]["message"]
    assert run_cli(".", "--ignore", "TL000", cwd=tmp_path).returncode == 1


def test_noqa_in_any_case_and_without_a_space(tmp_path):
    for comment in ("# NOQA: TL001", "# noqa:E501,TL001", "# tritonlint: ignore[static-range-long-unroll]"):
        (tmp_path / "proj.py").write_text(K_LOOP.replace(LOOP_LINE, LOOP_LINE.rstrip("\n") + f"  {comment}\n"))
        result = run_cli("proj.py", "--output-format", "json", cwd=tmp_path)
        assert result.returncode == 0 and _codes(result) == [], (comment, result.stdout)


def test_unused_and_unknown_suppressions_are_tl900_with_a_safe_fix(tmp_path):
    text = ("import triton\n"
            "x = 1  # noqa: TL001, E501\n"  # TL001 ran and found nothing here; E501 is another tool's
            "y = 2  # tritonlint: ignore[TL999]\n"
            "# tritonlint: ignore\n"
            "z = 3\n"
            "w = 4  # noqa\n"  # a bare noqa belongs to every tool: left alone
            's = "# noqa: TL002"\n')  # not a comment
    path = tmp_path / "sup.py"
    path.write_text(text)
    result = run_cli("sup.py", "--output-format", "json", cwd=tmp_path)
    findings = json.loads(result.stdout)
    assert result.returncode == 1 and [(d["code"], d["location"]["row"]) for d in findings] == [
        ("TL900", 2), ("TL900", 3), ("TL900", 4)]
    assert "`TL001` suppresses nothing" in findings[0]["message"] and "unknown code `TL999`" in findings[1]["message"]
    assert all(d["fix"]["applicability"] == "safe" for d in findings)
    assert run_cli("sup.py", "--select", "TL001", cwd=tmp_path).returncode == 0  # TL900 is selectable
    assert run_cli("sup.py", "--fix", cwd=tmp_path).returncode == 0
    assert path.read_text() == ('import triton\nx = 1  # noqa: E501\ny = 2\nz = 3\nw = 4  # noqa\n'
                                's = "# noqa: TL002"\n')
    assert run_cli("sup.py", "--fix", cwd=tmp_path).returncode == 0 and "noqa: E501" in path.read_text()


def test_a_used_suppression_is_no_tl900_and_tl900_can_be_suppressed(tmp_path):
    (tmp_path / "proj.py").write_text(
        K_LOOP.replace(LOOP_LINE, LOOP_LINE.rstrip("\n") + "  # noqa: TL001, TL002\n")
        + "q = 1  # tritonlint: ignore[TL001, TL900]\n")
    result = run_cli("proj.py", "--output-format", "json", cwd=tmp_path)
    findings = json.loads(result.stdout)
    assert [(d["code"], d["location"]["row"]) for d in findings] == [("TL900", 12)]
    assert "`TL002` suppresses nothing" in findings[0]["message"]


def test_builtin_rules_are_listed_and_explained():
    listing = run_cli("rules").stdout
    assert "TL000  syntax-error" in listing and "TL900  unused-suppression" in listing
    for code in ("TL000", "TL900", "unused-suppression"):
        result = run_cli("rule", code)
        assert result.returncode == 0 and "## What it does" in result.stdout, code
    assert json.loads(run_cli("rule", "TL900", "--output-format", "json").stdout)["fix"] == "safe"


def test_add_noqa_merges_sorts_is_idempotent_and_keeps_continuations(tmp_path):
    merged = tmp_path / "merged.py"
    merged.write_text(K_LOOP.replace(LOOP_LINE, LOOP_LINE.rstrip("\n") + "  # noqa: E501\n"))
    continued = tmp_path / "continued.py"
    continued.write_text(K_LOOP.replace(LOOP_LINE, "    for k in tl.static_range(0, \\\n            HIDDEN // BLOCK_K):\n"))
    result = run_cli(".", "--add-noqa", cwd=tmp_path)
    assert result.returncode == 0 and "Added 2 noqa comments" in result.stderr
    assert "    for k in tl.static_range(0, HIDDEN // BLOCK_K):  # noqa: E501, TL001\n" in merged.read_text()
    assert "    for k in tl.static_range(0, \\\n            HIDDEN // BLOCK_K):  # noqa: TL001\n" in continued.read_text()
    before = merged.read_text(), continued.read_text()
    assert run_cli(".", cwd=tmp_path).returncode == 0
    again = run_cli(".", "--add-noqa", cwd=tmp_path)
    assert "Added 0 noqa comments" in again.stderr and (merged.read_text(), continued.read_text()) == before


def test_baseline_keeps_old_findings_matched_across_edits(tmp_path):
    path = tmp_path / "proj.py"
    path.write_text(K_LOOP)
    assert run_cli(".", "--write-baseline", "tritonlint-baseline.json", cwd=tmp_path).returncode == 0
    assert run_cli(".", "--baseline", "tritonlint-baseline.json", cwd=tmp_path).returncode == 0
    # lines inserted above and another function edited: the recorded finding stays matched
    path.write_text("import os\n\n\n" + K_LOOP.replace("acc += tl.dot(a, b)", "acc = acc + tl.dot(a, b)")
                    + "\n\ndef host(n):\n    return n * 2\n")
    assert run_cli(".", "--baseline", "tritonlint-baseline.json", cwd=tmp_path).returncode == 0
    # a new finding is reported, and only that one; `baseline` in the configuration works the same
    path.write_text(path.read_text() + K_LOOP.split("\n\n\n", 1)[1].replace("proj_kernel", "other_kernel"))
    result = run_cli(".", "--baseline", "tritonlint-baseline.json", "--output-format", "json", cwd=tmp_path)
    findings = json.loads(result.stdout)
    assert result.returncode == 1 and len(findings) == 1 and findings[0]["location"]["row"] > 20
    (tmp_path / "tritonlint.toml").write_text('baseline = "tritonlint-baseline.json"\n')
    assert len(json.loads(run_cli(".", "--output-format", "json", cwd=tmp_path).stdout)) == 1
    (tmp_path / "tritonlint-baseline.json").write_text("[1]")
    broken = run_cli(".", cwd=tmp_path)
    assert broken.returncode == 2 and "not a tritonlint baseline" in broken.stderr


def test_show_settings_and_show_files(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.tritonlint]\nfail-level = "info"\nextend-exclude = ["gen"]\n'
                                             'per-file-ignores = { "tests/*" = ["TL001"] }\n')
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "out.py").write_text(K_LOOP)
    (tmp_path / "proj.py").write_text(K_LOOP)
    (tmp_path / "notes.txt").write_text("x")
    settings = run_cli("--show-settings", cwd=tmp_path)
    assert settings.returncode == 0 and f"# configuration file: {tmp_path / 'pyproject.toml'}" in settings.stdout
    assert 'fail-level = "info"' in settings.stdout and 'extend-exclude = ["gen"]' in settings.stdout
    assert 'per-file-ignores = {"tests/*" = ["TL001"]}' in settings.stdout and "static-range-max-trip = 16" in settings.stdout
    files = run_cli("--show-files", cwd=tmp_path)
    assert files.returncode == 0 and files.stdout.splitlines() == ["proj.py"]


def _notebook(tmp_path):
    head, kernel = K_LOOP.split("\n\n\n", 1)
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# A tutorial\n"]},
        {"cell_type": "code", "execution_count": 1, "metadata": {},
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["hi\n"]}],
         "source": ["%matplotlib inline\n", "!pip install triton\n", *head.splitlines(keepends=True)]},
        {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [], "source": kernel.splitlines(keepends=True)},
    ]
    path = tmp_path / "tutorial.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {"language_info": {"name": "python"}},
                                "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n")
    return path


def test_notebooks_are_linted_cell_by_cell_and_fixed_in_place(tmp_path):
    path = _notebook(tmp_path)
    concise = run_cli(".", "--output-format", "concise", cwd=tmp_path)
    assert concise.returncode == 1 and "tutorial.ipynb:cell 3:6:5: TL001" in concise.stdout
    finding = json.loads(run_cli(".", "--output-format", "json", cwd=tmp_path).stdout)[0]
    assert finding["cell"] == 3 and finding["location"] == {"row": 6, "column": 5}
    before = json.loads(path.read_text())
    assert run_cli("tutorial.ipynb", "--fix", cwd=tmp_path).returncode == 0
    after = json.loads(path.read_text())  # still valid JSON, in the same indentation
    assert path.read_text().startswith('{\n "cells": [\n')
    assert [c.get("outputs") for c in after["cells"]] == [c.get("outputs") for c in before["cells"]]
    assert after["cells"][1]["source"][:2] == ["%matplotlib inline\n", "!pip install triton\n"]
    assert "    for k in tl.range(0, HIDDEN // BLOCK_K, loop_unroll_factor=1):\n" in after["cells"][2]["source"]
    assert run_cli(".", cwd=tmp_path).returncode == 0 and run_cli(".", "--fix", cwd=tmp_path).returncode == 0


ROW_MAX = """\
import triton
import triton.language as tl


@triton.jit
def row_max(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N, other=0.0)
    tl.store(out_ptr, tl.max(x, axis=0))
"""


def test_rows_quoted_in_notebook_messages_count_within_the_cell(tmp_path):
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# Row max\n", "\n"]},
             {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": "import torch\n"},
             {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [], "source": ROW_MAX}]
    (tmp_path / "t.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    [finding] = json.loads(run_cli("t.ipynb", "--select", "TL108", "--output-format", "json", cwd=tmp_path).stdout)
    assert (finding["cell"], finding["location"]["row"]) == (3, 8)
    assert "`tl.max(x, axis=0)` at line 9," in finding["message"]


def test_a_row_quoted_from_another_cell_names_that_cell():
    from tritonlint.diagnostics import Diagnostic, Position
    from tritonlint.notebook import Notebook
    from tritonlint.templates import Row

    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "source": "a = 1\nb = 2\n"},
             {"cell_type": "code", "metadata": {}, "outputs": [], "source": "c = 3\n"}]
    notebook = Notebook.parse(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    a_row, c_row = notebook.starts[0] + 1, notebook.starts[1]
    found = Diagnostic("TL999", "x", "warning", "correctness", f"`c` at line {Row(c_row)} uses `b` of line {Row(a_row)}",
                       "t.ipynb", Position(c_row, 1), Position(c_row, 6), 0, 1, notes=[f"see line {Row(c_row)}"])
    mapped = notebook.map(found)
    assert (mapped.cell, mapped.message, mapped.notes) == (2, "`c` at line 1 uses `b` of line 2 of cell 1", ["see line 1"])


WRONG_RULE = """\
id: ACME001
name: debug-barrier
severity: info
category: style
message: "`tl.debug_barrier()` in {function} serialises the block"
rule:
  pattern: tl.debug_barrier()
where:
  - in-jit-function
doc:
  what: Flags `tl.debug_barrier()` in a jit function.
  why: It serialises every thread of the block.
tests:
  valid:
    - "x = 1\\n"
    - |
      import triton
      @triton.jit
      def k(x):
          tl.debug_barrier()
  invalid:
    - |
      import triton
      @triton.jit
      def k(x):
          tl.debug_barrier()  # expect: ACME001
    - |
      def host():
          tl.debug_barrier()  # expect: ACME001
"""


def test_test_rules_reports_each_failing_example_with_file_and_index(tmp_path):
    (tmp_path / "myrules").mkdir()
    (tmp_path / "myrules" / "ACME001.yaml").write_text(WRONG_RULE)
    result = run_cli("test-rules", "myrules", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "ACME001.yaml: ACME001 tests.valid[1]: a valid example is flagged at row 4" in result.stdout
    assert "ACME001.yaml: ACME001 tests.invalid[1]: flagged at rows none" in result.stdout
    assert "2 passed, 2 failed" in result.stdout
    builtin = run_cli("test-rules", cwd=tmp_path)
    assert builtin.returncode == 0 and " 0 failed" in builtin.stdout


def test_readme_configuration_works_when_pasted(tmp_path):
    from tests.helpers import ROOT

    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Configuration", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "k.py").write_text(K_LOOP)
    (tmp_path / "third_party").mkdir()
    (tmp_path / "third_party" / "k.py").write_text(K_LOOP)
    (tmp_path / "proj.py").write_text(K_LOOP)
    for name, text in (("pyproject.toml", block), ("tritonlint.toml", block),
                       ("tritonlint.toml", block.replace("[tool.tritonlint]\n", ""))):
        for old in ("pyproject.toml", "tritonlint.toml"):
            (tmp_path / old).unlink(missing_ok=True)
        (tmp_path / name).write_text(text)
        files = run_cli("--show-files", cwd=tmp_path)
        assert files.returncode == 0 and files.stdout.splitlines() == ["proj.py"], (name, files.stderr)
        assert run_cli(".", cwd=tmp_path).returncode == 1
    (tmp_path / "tritonlint.toml").write_text('select = ["TL001"]\n[tool.tritonlint]\nignore = ["TL002"]\n')
    both = run_cli(".", cwd=tmp_path)
    assert both.returncode == 2 and "not both" in both.stderr
