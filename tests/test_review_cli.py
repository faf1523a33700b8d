"""The code-review entry points of the installed console script: github and sarif output, --diff against
`git apply`, the fix flags, standard input, --output-file, --statistics, --exit-zero and colour."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from tritonlint import evidence
from tritonlint.ruleset import load_rules
from tests.helpers import run_cli, tritonlint_executable
from tests.review_support import ACME_KERNEL, sarif_errors, write_project
from tests.test_cli import K_LOOP

FIXED_LOOP = "for k in tl.range(0, HIDDEN // BLOCK_K, loop_unroll_factor=1):"


def test_github_annotations_exact_lines(tmp_path):
    write_project(tmp_path)
    result = run_cli("--output-format", "github", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    # the headline on the first line, each note on its own (%0A): GitHub shows them under it
    loop_message = ("`tl.static_range` unrolls 32 iterations; the body runs tl.dot, and a fully unrolled loop cannot "
                    "be software-pipelined%0ATrip count 32: HIDDEN=2048 from module constant at line 4, BLOCK_K=64 "
                    f"from config #1.%0AEvidence: {evidence.fixture_phrase('TL001-static-range-k-loop')}.")
    assert result.stdout.splitlines() == [
        ("::notice title=tritonlint (ACME001),file=acme.py,line=7,col=14,endLine=7,endColumn=32"
         "::acme.py:7:14: ACME001 `tl.debug_barrier()` in kernel serialises the block"),
        ("::error title=tritonlint (ACME002),file=acme.py,line=8,endLine=9"
         "::acme.py:8:5: ACME002 `tl.store` of a constant without a mask writes past the end"),
        ("::warning title=tritonlint (TL001),file=proj.py,line=12,col=5,endLine=12,endColumn=51"
         f"::proj.py:12:5: TL001 {loop_message}"),
    ]
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "k.py").write_text("import triton\n")
    result = run_cli("--output-format", "github", "k.py", cwd=clean)
    assert (result.returncode, result.stdout) == (0, "")


def test_sarif_validates_and_describes_every_rule(tmp_path):
    write_project(tmp_path)
    (tmp_path / "broken.py").write_text("import triton\ndef f(:\n")
    result = run_cli("--output-format", "sarif", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    log = json.loads(result.stdout)
    assert sarif_errors(log) == []
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("tritonlint", run_cli("--version").stdout.split()[1])
    assert driver["informationUri"].startswith("https://")
    rules = driver["rules"]
    builtin = sorted(rule.id for rule in load_rules())
    assert [r["id"] for r in rules] == sorted(["ACME001", "ACME002", "TL000", *builtin])
    for rule in rules:
        assert rule["name"] and rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["help"]["text"] and rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    tl001 = rules[3]
    assert tl001["name"] == "static-range-long-unroll" and tl001["defaultConfiguration"]["level"] == "warning"
    assert "## Fix safety" in tl001["help"]["markdown"]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"
    assert run["columnKind"] == "unicodeCodePoints"

    results = {r["ruleId"]: r for r in run["results"]}
    assert [r["ruleId"] for r in run["results"]] == ["ACME001", "ACME002", "TL000", "TL001"]
    for result_ in run["results"]:
        assert rules[result_["ruleIndex"]]["id"] == result_["ruleId"]
        location = result_["locations"][0]["physicalLocation"]["artifactLocation"]
        assert location["uriBaseId"] == "%SRCROOT%" and not location["uri"].startswith("/")
    barrier = results["ACME001"]
    assert barrier["level"] == "note"
    # columns count code points: the emoji before the barrier is one (two UTF-16 code units)
    assert barrier["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 7, "startColumn": 14, "endLine": 7, "endColumn": 32}
    assert barrier["fixes"][0]["properties"] == {"applicability": "unsafe"}
    assert results["ACME002"]["level"] == "error"
    assert results["ACME002"]["locations"][0]["physicalLocation"]["region"]["endLine"] == 9
    assert results["TL001"]["level"] == "warning"

    # the fixes' replacements, applied as a SARIF consumer would, give exactly what --fix writes
    text = (tmp_path / "proj.py").read_text()
    for replacement in reversed(results["TL001"]["fixes"][0]["artifactChanges"][0]["replacements"]):
        text = _replace_region(text, replacement["deletedRegion"], replacement["insertedContent"]["text"])
    assert run_cli("proj.py", "--fix", cwd=tmp_path).returncode == 0
    assert text == (tmp_path / "proj.py").read_text() and FIXED_LOOP in text


def _replace_region(text: str, region: dict, content: str) -> str:
    lines = text.splitlines(keepends=True)
    start = sum(map(len, lines[: region["startLine"] - 1])) + region["startColumn"] - 1
    end = sum(map(len, lines[: region["endLine"] - 1])) + region["endColumn"] - 1
    return text[:start] + content + text[end:]


def test_sarif_without_findings_lists_the_rules(tmp_path):
    (tmp_path / "k.py").write_text("import triton\n")
    result = run_cli("k.py", "--output-format", "sarif", cwd=tmp_path)
    log = json.loads(result.stdout)
    assert result.returncode == 0 and sarif_errors(log) == []
    assert log["runs"][0]["results"] == [] and [r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]] == sorted(
        rule.id for rule in load_rules())


def _git(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd,
                          capture_output=True, text=True, check=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_diff_applies_with_git_apply_and_matches_fix(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "crlf.py").write_bytes(K_LOOP.replace("\n", "\r\n").encode())
    (tree / "formfeed.py").write_text("# page one\n\x0c\n# a\x0cb\n" + K_LOOP)
    (tree / "noeol.py").write_text(textwrap.dedent("""\
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr):
            for i in tl.static_range(32): acc = tl.dot(tl.load(x_ptr + i), tl.load(x_ptr), acc)""").rstrip("\n"))
    (tree / "my kernel.py").write_text(K_LOOP)  # GNU patch needs a tab after a name with a space
    (tree / "clean.py").write_text("import triton\n")
    originals = {p.name: p.read_bytes() for p in tree.iterdir() if p.is_file()}

    # bytes, not text: universal newlines would turn the CRLF file's "\r\n" into "\n"
    diff = subprocess.run([*tritonlint_executable(), "--diff", "."], cwd=tree, capture_output=True, timeout=300,
                          env={**os.environ, "NO_COLOR": "1"})
    assert diff.returncode == 1, diff.stderr
    assert diff.stderr.decode().strip() == "Would fix 4 findings."
    assert {p.name: p.read_bytes() for p in tree.iterdir() if p.is_file()} == originals  # --diff writes nothing
    assert diff.stdout.count(b"--- a/") == 4 and b"\\ No newline at end of file" in diff.stdout

    applied = shutil.copytree(tree, tmp_path / "applied")
    _git("init", "-q", cwd=applied)
    (tmp_path / "fixes.patch").write_bytes(diff.stdout)
    _git("apply", str(tmp_path / "fixes.patch"), cwd=applied)
    patched = shutil.copytree(tree, tmp_path / "patched")
    subprocess.run(["patch", "-p1", "-s", "-i", str(tmp_path / "fixes.patch")], cwd=patched, check=True)

    fixed = run_cli("--fix", ".", cwd=tree)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    for name in originals:
        assert (applied / name).read_bytes() == (tree / name).read_bytes(), name
        assert (patched / name).read_bytes() == (tree / name).read_bytes(), name
    assert (tree / "crlf.py").read_bytes().count(b"\r\n") == K_LOOP.count("\n")

    nothing = run_cli("--diff", ".", cwd=tree)
    assert (nothing.returncode, nothing.stdout, nothing.stderr.strip()) == (0, "", "No fixes available.")
    assert run_cli("--diff", "--exit-zero", ".", cwd=tree).returncode == 0


def test_diff_conflicts_like_ruff(tmp_path):
    (tmp_path / "proj.py").write_text(K_LOOP)
    for flag in ("--show-fixes", "--statistics"):
        result = run_cli("--diff", flag, "proj.py", cwd=tmp_path)
        assert result.returncode == 2 and flag in result.stderr
    result = run_cli("--statistics", "--output-format", "sarif", "proj.py", cwd=tmp_path)
    assert result.returncode == 2 and "sarif" in result.stderr


def test_fix_applies_safe_fixes_and_unsafe_only_when_asked(tmp_path):
    write_project(tmp_path)
    result = run_cli("--fix", "--show-fixes", "--output-format", "concise", cwd=tmp_path)
    assert result.returncode == 1  # ACME001 (unsafe) and ACME002 (display-only) remain
    assert result.stdout.splitlines() == [
        "acme.py:7:14: ACME001 `tl.debug_barrier()` in kernel serialises the block",
        "acme.py:8:5: ACME002 `tl.store` of a constant without a mask writes past the end",
        "",
        "Fixed 1 finding:",
        "- proj.py:",
        "    1 × TL001 (static-range-long-unroll)",
        "",
        "Found 3 findings (1 fixed, 2 remaining).",
        "1 unsafe fix available with `--fix --unsafe-fixes`.",
    ]
    assert FIXED_LOOP in (tmp_path / "proj.py").read_text()
    assert (tmp_path / "acme.py").read_text() == ACME_KERNEL

    marked = run_cli("--unsafe-fixes", "--output-format", "concise", cwd=tmp_path)
    assert "acme.py:7:14: ACME001 [*] " in marked.stdout and "[*] 1 fixable with `--fix`." in marked.stdout
    assert (tmp_path / "acme.py").read_text() == ACME_KERNEL  # --unsafe-fixes alone writes nothing

    unsafe = run_cli("--fix", "--unsafe-fixes", "--show-fixes", cwd=tmp_path)
    assert unsafe.returncode == 1
    assert "    1 × ACME001 (debug-barrier)" in unsafe.stdout
    text = (tmp_path / "acme.py").read_text()
    assert 's = "\N{GRINNING FACE}"; pass' in text and "tl.store(x_ptr,\n" in text  # display-only: never applied
    # a suggestion shows the lines it would write, whole, with the lines they replace named
    assert "suggestion: Pass a mask\n  lines 8-9, as it would read:\n    tl.store(x_ptr, 1.0, mask=mask)" in unsafe.stdout


def test_show_fixes_only_in_text_formats(tmp_path):
    for output_format in ("json", "github", "sarif"):
        (tmp_path / "proj.py").write_text(K_LOOP)
        result = run_cli("--fix", "--show-fixes", "--output-format", output_format, "proj.py", cwd=tmp_path)
        assert result.returncode == 0 and "Fixed" not in result.stdout + result.stderr
        if output_format != "github":
            json.loads(result.stdout)


def test_stdin(tmp_path):
    stale = tmp_path / "k.py"
    stale.write_text("# a different text on disk\n" * 20)
    result = run_cli("-", "--stdin-filename", "k.py", stdin=K_LOOP, cwd=tmp_path)
    assert result.returncode == 1 and " --> k.py:12:5" in result.stdout
    assert "12 |     for k in tl.static_range(0, HIDDEN // BLOCK_K):" in result.stdout  # the frame is stdin's text

    fixed = run_cli("-", "--stdin-filename", "k.py", "--fix", "--show-fixes", stdin=K_LOOP, cwd=tmp_path)
    assert fixed.returncode == 0
    assert fixed.stdout == K_LOOP.replace("for k in tl.static_range(0, HIDDEN // BLOCK_K):", FIXED_LOOP)
    assert "Fixed 1 finding:\n- k.py:\n    1 × TL001" in fixed.stderr and "(1 fixed, 0 remaining)" in fixed.stderr
    assert stale.read_text().startswith("# a different text")

    diff = run_cli("-", "--stdin-filename", "k.py", "--diff", stdin=K_LOOP, cwd=tmp_path)
    assert diff.returncode == 1 and diff.stdout.startswith("--- a/k.py\n+++ b/k.py\n")
    assert stale.read_text().startswith("# a different text")

    json_out = run_cli("-", "--output-format", "json", stdin=K_LOOP, cwd=tmp_path)
    assert json.loads(json_out.stdout)[0]["filename"] == "-"


def test_code_frame_counts_lines_as_python_does(tmp_path):
    (tmp_path / "k.py").write_text("# page one\n\x0c# page two\n" + K_LOOP)
    result = run_cli("k.py", cwd=tmp_path)
    assert " --> k.py:14:5" in result.stdout
    assert "14 |     for k in tl.static_range(0, HIDDEN // BLOCK_K):" in result.stdout


def test_stdin_fix_passes_through_what_it_cannot_lint(tmp_path):
    binary = "triton\0\x01"
    result = run_cli("-", "--fix", stdin=binary, cwd=tmp_path)
    assert result.stdout == binary and "binary file" in result.stderr and result.returncode == 0
    (tmp_path / "tritonlint.toml").write_text('extend-exclude = ["vendored"]\n')
    excluded = run_cli("-", "--stdin-filename", "vendored/k.py", "--fix", "--force-exclude", stdin=K_LOOP, cwd=tmp_path)
    assert (excluded.returncode, excluded.stdout) == (0, K_LOOP)


def test_force_exclude_applies_excludes_to_named_paths(tmp_path):
    (tmp_path / "tritonlint.toml").write_text('extend-exclude = ["vendored", "gen_*.py"]\n')
    (tmp_path / "vendored").mkdir()
    for path in ("vendored/k.py", "gen_k.py", "own.py"):
        (tmp_path / path).write_text(K_LOOP)
    named = ["vendored/k.py", "gen_k.py", "own.py"]
    assert run_cli("--output-format", "concise", *named, cwd=tmp_path).stdout.count(": TL001 ") == 3
    forced = run_cli("--output-format", "concise", "--force-exclude", *named, cwd=tmp_path)
    assert [line.split(":")[0] for line in forced.stdout.splitlines() if "TL001" in line] == ["own.py"]
    assert run_cli("--force-exclude", "vendored", cwd=tmp_path).returncode == 0


def test_output_file_with_every_format(tmp_path):
    write_project(tmp_path)
    for output_format in ("full", "concise", "json", "github", "sarif"):
        to_stdout = run_cli("--output-format", output_format, cwd=tmp_path)
        target = tmp_path / "reports" / output_format / "report.txt"
        to_file = run_cli("--output-format", output_format, "-o", str(target), cwd=tmp_path)
        assert to_file.returncode == to_stdout.returncode == 1
        assert to_file.stdout == "" and target.read_text(encoding="utf-8") == to_stdout.stdout, output_format
    stats = run_cli("--statistics", "--output-file", "stats.txt", cwd=tmp_path)
    assert stats.stdout == "" and (tmp_path / "stats.txt").read_text().startswith("1\tACME001")


def test_statistics_text_and_json(tmp_path):
    write_project(tmp_path)
    text = run_cli("--statistics", "-q", cwd=tmp_path)
    assert text.returncode == 1
    assert text.stdout.splitlines() == [
        "1\tACME001\t[ ] debug-barrier",
        "1\tACME002\t[ ] store-without-mask",
        "1\tTL001  \t[*] static-range-long-unroll",
    ]
    rows = json.loads(run_cli("--statistics", "--output-format", "json", "--unsafe-fixes", cwd=tmp_path).stdout)
    assert [(r["code"], r["count"], r["fixable"]) for r in rows] == [
        ("ACME001", 1, True), ("ACME002", 1, False), ("TL001", 1, True)]


def test_exit_zero_masks_findings_only(tmp_path):
    write_project(tmp_path)
    assert run_cli("--exit-zero", "--output-format", "github", cwd=tmp_path).returncode == 0
    assert run_cli("--exit-zero", "--select", "TL7", cwd=tmp_path).returncode == 2


def _on_a_terminal(*args: str, cwd: Path, env: dict[str, str]) -> str:
    """Run the console script with its standard output on a pseudo-terminal; return what it printed."""
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen([*tritonlint_executable(), *args], cwd=cwd, stdout=follower,
                                   stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env={**os.environ, **env})
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait(timeout=120)
    finally:
        os.close(leader)
    return b"".join(chunks).decode()


def test_colour_only_on_a_terminal(tmp_path):
    (tmp_path / "proj.py").write_text(K_LOOP)
    plain = {"NO_COLOR": "", "FORCE_COLOR": ""}
    assert "\x1b[" in _on_a_terminal("proj.py", cwd=tmp_path, env=plain)
    assert "\x1b[" not in _on_a_terminal("proj.py", cwd=tmp_path, env={**plain, "NO_COLOR": "1"})
    assert "\x1b[" not in _on_a_terminal("proj.py", "--color", "never", cwd=tmp_path, env=plain)
    assert "\x1b[" not in _on_a_terminal("proj.py", "-o", "out.txt", cwd=tmp_path, env=plain)
    assert "\x1b[" not in (tmp_path / "out.txt").read_text()
    assert "\x1b[" not in run_cli("proj.py", cwd=tmp_path, env=plain).stdout  # a pipe
    assert "\x1b[" in run_cli("proj.py", cwd=tmp_path, env={"NO_COLOR": "", "FORCE_COLOR": "1"}).stdout
    assert "\x1b[" not in run_cli("proj.py", cwd=tmp_path, env={"NO_COLOR": "1", "FORCE_COLOR": "1"}).stdout
    assert "\x1b[" in run_cli("proj.py", "--color", "always", cwd=tmp_path).stdout  # run_cli sets NO_COLOR=1
    for machine_format in ("json", "github", "sarif"):
        assert "\x1b[" not in run_cli("proj.py", "--output-format", machine_format, "--color", "always",
                                      cwd=tmp_path).stdout
