"""The installed console script, run the way users run it."""

from __future__ import annotations

import json
import textwrap

from tests.helpers import ROOT, run_cli

K_LOOP = textwrap.dedent("""\
    import triton
    import triton.language as tl

    HIDDEN = tl.constexpr(2048)


    @triton.autotune(configs=[triton.Config({"BLOCK_K": 64}, num_warps=4)], key=["M"])
    @triton.jit
    def proj_kernel(x_ptr, w_ptr, y_ptr, M, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
        rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        acc = tl.zeros((BLOCK_M, 16), dtype=tl.float32)
        for k in tl.static_range(0, HIDDEN // BLOCK_K):
            cols = k * BLOCK_K + tl.arange(0, BLOCK_K)
            a = tl.load(x_ptr + rows[:, None] * HIDDEN + cols[None, :])
            b = tl.load(w_ptr + cols[:, None] * 16 + tl.arange(0, 16)[None, :])
            acc += tl.dot(a, b)
        tl.store(y_ptr + rows[:, None] * 16 + tl.arange(0, 16)[None, :], acc)
    """)


def test_version():
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout.startswith("tritonlint ")


def test_tl001_end_to_end_with_fix(tmp_path):
    path = tmp_path / "proj.py"
    path.write_text(K_LOOP)
    result = run_cli("proj.py", "--output-format", "concise", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    line = next(l for l in result.stdout.splitlines() if "TL001" in l)
    assert line.startswith("proj.py:12:5: TL001 [*]")
    assert "32 iterations" in line and "HIDDEN=2048" not in line  # the headline; where 32 comes from is a note
    notes = run_cli("proj.py", cwd=tmp_path).stdout
    assert "note: Trip count 32: HIDDEN=2048 from module constant at line 4, BLOCK_K=64 from config #1." in notes

    fixed = run_cli("proj.py", "--fix", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    text = path.read_text()
    assert "for k in tl.range(0, HIDDEN // BLOCK_K, loop_unroll_factor=1):" in text
    again = run_cli("proj.py", cwd=tmp_path)
    assert again.returncode == 0 and "All checks passed!" in again.stdout
    assert run_cli("proj.py", "--fix", cwd=tmp_path).returncode == 0 and path.read_text() == text


def test_full_output_has_a_code_frame(tmp_path):
    (tmp_path / "proj.py").write_text(K_LOOP)
    out = run_cli("proj.py", cwd=tmp_path).stdout
    assert " --> proj.py:12:5" in out
    assert "12 |     for k in tl.static_range(0, HIDDEN // BLOCK_K):" in out
    assert "^^^^ warning" in out and "help: Replace" in out


def test_syntax_error_is_tl000_and_the_run_goes_on(tmp_path):
    (tmp_path / "broken.py").write_text("import triton\ndef f(:\n    pass\n")
    (tmp_path / "proj.py").write_text(K_LOOP)
    result = run_cli(".", "--output-format", "concise", cwd=tmp_path)
    assert result.returncode == 1
    assert "broken.py:2:7: TL000 SyntaxError" in result.stdout
    assert "proj.py:12:5: TL001" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_unknown_config_key_exits_2_naming_it(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.tritonlint]\nselekt = ["TL001"]\n')
    (tmp_path / "proj.py").write_text(K_LOOP)
    result = run_cli("proj.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "selekt" in result.stderr and "pyproject.toml" in result.stderr
    assert "Traceback" not in result.stderr


def test_config_options_and_selection(tmp_path):
    (tmp_path / "tritonlint.toml").write_text('static-range-max-trip = 32\n')
    (tmp_path / "proj.py").write_text(K_LOOP)
    assert run_cli("proj.py", cwd=tmp_path).returncode == 0
    (tmp_path / "tritonlint.toml").write_text('static-range-max-trip = "many"\n')
    bad = run_cli("proj.py", cwd=tmp_path)
    assert bad.returncode == 2 and "static-range-max-trip" in bad.stderr
    (tmp_path / "tritonlint.toml").write_text('ignore = ["TL001"]\n')
    assert run_cli("proj.py", cwd=tmp_path).returncode == 0
    (tmp_path / "tritonlint.toml").write_text('[per-file-ignores]\n"proj.py" = ["static-range-long-unroll"]\n')
    assert run_cli("proj.py", cwd=tmp_path).returncode == 0


def test_unknown_selector_is_a_usage_error(tmp_path):
    (tmp_path / "proj.py").write_text(K_LOOP)
    result = run_cli("proj.py", "--select", "TL7", cwd=tmp_path)
    assert result.returncode == 2 and "TL7" in result.stderr


def test_json_output_shape(tmp_path):
    (tmp_path / "proj.py").write_text(K_LOOP)
    result = run_cli("proj.py", "--output-format", "json", cwd=tmp_path)
    (finding,) = json.loads(result.stdout)
    assert finding["code"] == "TL001" and finding["name"] == "static-range-long-unroll"
    assert finding["severity"] == "warning" and finding["filename"] == "proj.py"
    assert finding["location"] == {"row": 12, "column": 5}
    assert finding["end_location"] == {"row": 12, "column": 51}
    assert finding["fix"]["applicability"] == "safe"
    assert {e["content"] for e in finding["fix"]["edits"]} == {"tl.range", ", loop_unroll_factor=1"}


def test_suppression_comments(tmp_path):
    (tmp_path / "proj.py").write_text(K_LOOP.replace("BLOCK_K):\n", "BLOCK_K):  # noqa: TL001\n", 1))
    assert run_cli("proj.py", cwd=tmp_path).returncode == 0
    (tmp_path / "proj.py").write_text(K_LOOP.replace(
        "    for k in", "    # tritonlint: ignore[static-range-long-unroll]\n    for k in", 1))
    assert run_cli("proj.py", cwd=tmp_path).returncode == 0
    (tmp_path / "proj.py").write_text("# tritonlint: file-ignore[TL001]\n" + K_LOOP)
    assert run_cli("proj.py", cwd=tmp_path).returncode == 0
    (tmp_path / "proj.py").write_text(K_LOOP.replace("BLOCK_K):\n", "BLOCK_K):  # tritonlint: ignore[TL002]\n", 1))
    assert run_cli("proj.py", cwd=tmp_path).returncode == 1


def test_stdin(tmp_path):
    result = run_cli("-", "--stdin-filename", "k.py", "--output-format", "concise", stdin=K_LOOP, cwd=tmp_path)
    assert result.returncode == 1 and result.stdout.startswith("k.py:12:5: TL001")
    fixed = run_cli("-", "--fix", stdin=K_LOOP, cwd=tmp_path)
    assert "tl.range(0, HIDDEN // BLOCK_K, loop_unroll_factor=1)" in fixed.stdout
    assert fixed.returncode == 0


def test_diff_writes_nothing(tmp_path):
    path = tmp_path / "proj.py"
    path.write_text(K_LOOP)
    result = run_cli("proj.py", "--diff", cwd=tmp_path)
    assert result.returncode == 1
    assert "-    for k in tl.static_range(0, HIDDEN // BLOCK_K):" in result.stdout
    assert "+    for k in tl.range(0, HIDDEN // BLOCK_K, loop_unroll_factor=1):" in result.stdout
    assert path.read_text() == K_LOOP


def test_statistics_and_exit_zero(tmp_path):
    (tmp_path / "proj.py").write_text(K_LOOP)
    result = run_cli("proj.py", "--statistics", "--exit-zero", cwd=tmp_path)
    assert result.returncode == 0
    first, *rest = result.stdout.splitlines()
    assert first.split("\t") == ["1", "TL001", "[*] static-range-long-unroll"]
    assert rest == ["Found 1 finding (1 warning).", "[*] 1 fixable with `--fix`."]


def test_rule_and_rules_commands():
    doc = run_cli("rule", "TL001")
    assert doc.returncode == 0
    for heading in ("# static-range-long-unroll (TL001)", "## What it does", "## Why is this bad?", "## Example",
                    "Use instead:", "## Fix safety", "## Evidence"):
        assert heading in doc.stdout
    listing = run_cli("rules")
    assert "TL001" in listing.stdout and "static-range-long-unroll" in listing.stdout
    as_json = json.loads(run_cli("rules", "--output-format", "json").stdout)
    assert any(r["code"] == "TL001" for r in as_json)
    assert run_cli("rule", "TL999").returncode == 2


def test_bad_rule_file_in_extend_rules(tmp_path):
    (tmp_path / "myrules").mkdir()
    (tmp_path / "myrules" / "bad.yaml").write_text("id: ACME001\nname: acme\nseverity: loud\n")
    (tmp_path / "tritonlint.toml").write_text('extend-rules = ["myrules"]\n')
    (tmp_path / "proj.py").write_text(K_LOOP)
    result = run_cli("proj.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "bad.yaml" in result.stderr and "severity" in result.stderr
    assert "Traceback" not in result.stderr


def test_files_without_triton_are_only_syntax_checked_and_binary_files_reported(tmp_path):
    (tmp_path / "plain.py").write_text("def f(:\n")  # never mentions the word: still a TL000, as in ruff
    (tmp_path / "blob.py").write_bytes(b"\x00\x01triton")
    (tmp_path / "latin.py").write_bytes(b"# triton\nx = '\xe9'\n")
    result = run_cli(".", "--output-format", "concise", cwd=tmp_path)
    assert result.returncode == 1 and result.stdout.count("TL000") == 1 and "plain.py:1:7: TL000" in result.stdout
    assert "blob.py: binary file" in result.stderr
    assert "latin.py: not valid utf-8" in result.stderr


def test_the_bundled_examples_lint():
    result = run_cli(str(ROOT / "rules"), "--output-format", "concise")
    assert result.returncode == 0
