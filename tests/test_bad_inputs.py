"""Bad files in a tree: each gets one clear line (a warning, or a TL000 finding when it does not parse), the
good file next to it is still linted, and the exit code is 2 only for tritonlint's own failures."""

from __future__ import annotations

import base64
import json
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import lint_code, run_cli
from tritonlint import discovery, linter, runner
from tritonlint.config import Settings
from tritonlint.analysis.project import Project
from tritonlint.results import FixMode
from tritonlint.ruleset import load_rules
from tritonlint.runner import lint_paths, make_linter
from tritonlint.source import SourceError, decode_source

RULES = load_rules()

KERNEL = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def kernel(x_ptr):
        for i in tl.static_range(32):
            tl.store(x_ptr + i, tl.dot(tl.load(x_ptr), tl.load(x_ptr)))
    """)
KERNEL_ROW = 7  # the row of the static_range loop in KERNEL


def _kernel_bytes(newline: str = "\n", indent: str = "    ") -> bytes:
    return KERNEL.replace("    ", indent).replace("\n", newline).encode()


def _deep_chain(depth: int) -> bytes:
    return KERNEL.encode() + b"y = " + b"1 + " * depth + b"1\n"


# name -> (file bytes, what the run must say about the file: a stderr fragment, or a TL000 message fragment,
# or the row of a TL001 finding when the file must be linted normally)
CASES: dict[str, tuple[bytes, str | int]] = {
    "syntax_error": (b"import triton\ndef f(:\n    pass\n", "TL000 SyntaxError"),
    "binary_nul": (b"\x00\x01\x02triton\xff\xfe", "binary file (contains NUL bytes), skipped"),
    "binary_random": (b"triton " + bytes(range(128, 256)) * 4, "not valid utf-8 at byte 7"),
    "nul_after_8k": (KERNEL.encode() + b"#" + b"x" * 9000 + b"\n\x00\n", "TL000 SyntaxError: source code string"),
    "latin1_cookie": (b"# -*- coding: latin-1 -*-\n# caf\xe9 \xe0 la cr\xe8me\n" + KERNEL.encode(), KERNEL_ROW + 2),
    "cp1252_cookie": (b"# coding: cp1252\n# \x93quoted\x94 \x80\n" + KERNEL.encode(), KERNEL_ROW + 2),
    "shift_jis_cookie": ("# coding: shift_jis\n# カーネル\n".encode("shift_jis") + KERNEL.encode(), KERNEL_ROW + 2),
    "unknown_cookie": (b"# coding: klingon\n" + KERNEL.encode(), "bad coding declaration: unknown encoding: klingon"),
    "cookie_lies": (b"# coding: utf-8\n# caf\xe9\n" + KERNEL.encode(), "not valid utf-8 at byte"),
    "bom": (b"\xef\xbb\xbf" + KERNEL.encode(), KERNEL_ROW),
    "bom_and_latin1_cookie": (b"\xef\xbb\xbf# coding: latin-1\n" + KERNEL.encode(), "bad coding declaration"),
    "bom_only": (b"\xef\xbb\xbf", "nothing"),
    "empty": (b"", "nothing"),
    "crlf": (_kernel_bytes("\r\n"), KERNEL_ROW),
    "lone_cr": (_kernel_bytes("\r"), KERNEL_ROW),
    "mixed_newlines": ((b"import triton\r\nimport triton.language as tl\r\r\n\n@triton.jit\r\ndef kernel(x_ptr):\n"
                        b"    for i in tl.static_range(32):\r        tl.store(x_ptr + i, tl.dot(tl.load(x_ptr), tl.load(x_ptr)))\n"), KERNEL_ROW),
    "tabs": (_kernel_bytes(indent="\t"), KERNEL_ROW),
    # Parsed, but refused when Python builds the symbol table, as importing it would be: none of its kernels runs.
    "duplicate_argument": (KERNEL.replace("def kernel(x_ptr", "def kernel(x_ptr, n, n").encode(),
                           "TL000 SyntaxError: duplicate argument 'n' in function definition"),
    "inconsistent_tabs": (KERNEL.encode().replace(b"        tl.store", b"\ttl.store"), "TL000 SyntaxError"),
    "form_feed_and_u2028": (("\x0c\ns = 'a\u2028b'\n" + KERNEL.replace("(32):", "(32):  # noqa: TL001")).encode(),
                            "nothing"),  # the suppression lands on the right row despite both
    "nested_parens": (KERNEL.encode() + b"y = " + b"(" * 300 + b"1" + b")" * 300 + b"\n",
                      "TL000 SyntaxError: too many nested parentheses"),
    "nested_unary": (KERNEL.encode() + b"y = " + b"-" * 100_000 + b"1\n", "nested too deeply for Python's parser, skipped"),
    "nested_chain": (_deep_chain(200_000), "nested too deeply for Python's parser, skipped"),
    "long_line": (KERNEL.encode() + b"DATA = [" + b"1, " * 400_000 + b"]\n", KERNEL_ROW),
    "non_ascii_identifiers": (KERNEL.replace("x_ptr", "zeiger_ü").replace("for i", "for ñ")
                              .replace("+ i, i)", "+ ñ, ñ)").encode(), KERNEL_ROW),
}


@pytest.fixture(scope="module")
def bad_tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bad_tree")
    (root / "good.py").write_text(KERNEL)
    for name, (data, _) in CASES.items():
        (root / f"{name}.py").write_bytes(data)
    return root


@pytest.fixture(scope="module")
def bad_run(bad_tree):
    result = run_cli(".", "--output-format", "concise", cwd=bad_tree, env={"RUST_BACKTRACE": "1"})
    return result


@pytest.mark.parametrize("name", list(CASES))
def test_bad_file(name, bad_run):
    _, expected = CASES[name]
    out, err = bad_run.stdout, bad_run.stderr
    assert bad_run.returncode == 1, err  # findings (good.py's at least); never 2
    assert "Traceback" not in out + err and "internal error" not in err
    assert f"good.py:{KERNEL_ROW}:5: TL001" in out  # the run went on
    mine_out = [line for line in out.splitlines() if line.startswith(f"{name}.py:")]
    mine_err = [line for line in err.splitlines() if line.startswith(f"warning: {name}.py:")]
    if expected == "nothing":
        assert mine_out == [] and mine_err == []
    elif isinstance(expected, int):
        assert mine_err == []
        assert [line.split(":")[1] + line.split(" ")[1] for line in mine_out] == [f"{expected}TL001"], mine_out
    elif expected.startswith("TL000"):
        assert len(mine_out) == 1 and expected in mine_out[0] and mine_err == [], (mine_out, mine_err)
    else:
        assert mine_out == [] and len(mine_err) == 1 and expected in mine_err[0], (mine_out, mine_err)


def test_bad_files_alone_exit_0(tmp_path):
    """Files tritonlint cannot read are warnings, not failures of the tool."""
    for name in ("binary_nul", "binary_random", "unknown_cookie", "nested_unary"):
        (tmp_path / f"{name}.py").write_bytes(CASES[name][0])
    result = run_cli(".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(result.stderr.strip().splitlines()) == 4


def test_large_file(tmp_path):
    """10 MB: a generated module with an embedded data blob between two kernels, linted and fixed in
    seconds."""
    blob = base64.b64encode(os.urandom(7_600_000)).decode()
    data = "\n".join(blob[i:i + 76] for i in range(0, len(blob), 76))
    text = KERNEL + f'DATA = """\n{data}\n"""\n' + KERNEL.replace("def kernel", "def kernel2")
    path = tmp_path / "big.py"
    path.write_text(text)
    assert path.stat().st_size >= 10_000_000
    started = time.monotonic()
    result = run_cli("big.py", "--output-format", "concise", cwd=tmp_path)
    assert result.returncode == 1 and result.stdout.count(": TL001 ") == 2, result.stderr
    fixed = run_cli("big.py", "--fix", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    assert time.monotonic() - started < 60
    assert path.read_text() == text.replace("tl.static_range(32)", "tl.range(32, loop_unroll_factor=1)")


def test_many_kernels_in_one_file_is_linear(rules):
    """Generated files hold thousands of kernels; finding the enclosing kernel of each match used to scan
    every kernel (2,000 kernels: a minute)."""
    body = KERNEL.split("\n", 3)[3]
    text = "import triton\nimport triton.language as tl\n" + "".join(
        body.replace("def kernel", f"def kernel_{n}") for n in range(2000))
    started = time.monotonic()
    result = lint_code(text, rules)
    assert len(result.diagnostics) == 2000
    assert time.monotonic() - started < 30


def test_symlink_loops_and_broken_links(tmp_path):
    (tmp_path / "good.py").write_text(KERNEL)
    (tmp_path / "loop.py").symlink_to("loop.py")
    (tmp_path / "dangling.py").symlink_to("nowhere.py")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to("..", target_is_directory=True)
    (tmp_path / "sub" / "self").symlink_to(".", target_is_directory=True)
    result = run_cli(".", "--output-format", "concise", cwd=tmp_path)
    assert result.returncode == 1 and result.stdout.count("good.py:7:5: TL001") == 1, result.stdout
    warnings = sorted(result.stderr.strip().splitlines())
    assert warnings == [
        "warning: dangling.py: broken symbolic link (its target does not exist), skipped",
        "warning: loop.py: symbolic link loop, skipped",
        "warning: sub/self: symbolic link loop (it points to an enclosing folder), not followed",
        "warning: sub/up: symbolic link loop (it points to an enclosing folder), not followed",
    ]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_special_files_are_not_read(tmp_path):
    """A FIFO named like a Python file would block a reader forever."""
    (tmp_path / "good.py").write_text(KERNEL)
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "folder.py").mkdir()
    (tmp_path / "folder.py" / "inner.py").write_text(KERNEL)
    walked = run_cli(".", "--output-format", "concise", cwd=tmp_path)
    assert walked.returncode == 1 and "folder.py/inner.py:7:5: TL001" in walked.stdout, walked.stderr
    named = run_cli("pipe.py", "good.py", "--output-format", "concise", cwd=tmp_path)
    assert named.returncode == 1 and "warning: pipe.py: not a file or folder, skipped" in named.stderr


def test_gitignore_with_invalid_patterns(tmp_path):
    """A vendored .gitignore with patterns Python's re cannot compile must not stop the run."""
    (tmp_path / ".gitignore").write_text("[z-a]\n[]\n[!]\n[[:alpha:]]\nignored.py\n")
    (tmp_path / "good.py").write_text(KERNEL)
    (tmp_path / "ignored.py").write_text(KERNEL)
    result = run_cli(".", "--output-format", "concise", cwd=tmp_path)
    assert result.returncode == 1 and result.stderr == "", result.stderr
    assert "good.py:7:5" in result.stdout and "ignored.py" not in result.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file names")
def test_file_name_not_valid_utf8(tmp_path):
    name = os.fsdecode(b"k\xff.py")
    (tmp_path / name).write_text(KERNEL)
    as_json = run_cli(".", "--output-format", "json", cwd=tmp_path)
    assert as_json.returncode == 1, as_json.stderr
    assert len(json.loads(as_json.stdout)) == 1
    to_file = run_cli(".", "--output-format", "sarif", "-o", "report.sarif", cwd=tmp_path)
    assert to_file.returncode == 1, to_file.stderr
    assert (tmp_path / "report.sarif").stat().st_size > 0


def test_path_that_does_not_exist_is_a_usage_error(tmp_path):
    (tmp_path / "good.py").write_text("x = 1\n")
    result = run_cli("good.py", "no_such_dir", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == "error: no_such_dir: no such file or directory"


def test_report_file_that_cannot_be_written(tmp_path):
    (tmp_path / "good.py").write_text(KERNEL)
    result = run_cli("good.py", "-o", "good.py/report.json", cwd=tmp_path)  # a file where a folder must be
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: cannot write the output file good.py/report.json: ")


# ---- failures that cannot be set up for real on these machines, simulated in-process ------------------
# The test machines run as root, and root reads a file whatever its permission bits say, so `chmod 000`
# proves nothing there: reading is made to fail the way the OS would fail it instead.

def _lint_tree(root: Path, mode: FixMode = FixMode.NONE):
    settings = Settings(root=root, target="sm_90")
    return lint_paths([root], settings, make_linter(RULES, settings, mode, unsafe=False), jobs=1)


def _by_name(run) -> dict[str, object]:
    return {Path(r.path).name: r for r in run.files}


def test_unreadable_file(tmp_path, monkeypatch):
    (tmp_path / "good.py").write_text(KERNEL)
    (tmp_path / "secret.py").write_text(KERNEL)
    real_read = Path.read_bytes

    def read_bytes(self):
        if self.name == "secret.py":
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    results = _by_name(_lint_tree(tmp_path))
    assert results["secret.py"].skipped == "permission denied, skipped"
    assert [d.code for d in results["good.py"].diagnostics] == ["TL001"]


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_for_real(tmp_path):
    (tmp_path / "good.py").write_text(KERNEL)
    (tmp_path / "secret.py").write_text(KERNEL)
    (tmp_path / "secret.py").chmod(0)
    result = run_cli(".", "--output-format", "concise", cwd=tmp_path)
    assert result.returncode == 1 and "warning: secret.py: permission denied, skipped" in result.stderr


def test_file_deleted_between_discovery_and_reading(tmp_path, monkeypatch):
    for name in ("a.py", "gone.py", "z.py"):
        (tmp_path / name).write_text(KERNEL)
    real_discover = runner.discover

    def discover_then_delete(*args, **kwargs):
        found = real_discover(*args, **kwargs)
        (tmp_path / "gone.py").unlink()
        return found

    monkeypatch.setattr(runner, "discover", discover_then_delete)
    results = _by_name(_lint_tree(tmp_path))
    assert results["gone.py"].skipped == "file disappeared before it could be read, skipped"
    assert all(len(results[name].diagnostics) == 1 for name in ("a.py", "z.py"))


def test_folder_deleted_during_the_walk(tmp_path, monkeypatch):
    (tmp_path / "good.py").write_text(KERNEL)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "k.py").write_text(KERNEL)
    real_scandir = os.scandir

    def scandir(path):
        if Path(path).name == "pkg":
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return real_scandir(path)

    monkeypatch.setattr(discovery.os, "scandir", scandir)
    run = _lint_tree(tmp_path)
    assert [(Path(p).name, reason) for p, reason in run.problems] == [("pkg", "cannot read folder: No such file or directory")]
    assert [Path(r.path).name for r in run.files] == ["good.py"]


def test_internal_error_in_one_file_does_not_stop_the_run(tmp_path, monkeypatch):
    """A bug that only one file triggers becomes an error line for that file (exit 2), and every other
    file is still linted and reported."""
    for name in ("a.py", "boom.py", "z.py"):
        (tmp_path / name).write_text(KERNEL)
    real_model = linter.ModuleModel

    def model(tree, module, path, **kwargs):
        if path.endswith("boom.py"):
            raise KeyError("surprise")
        return real_model(tree, module, path, **kwargs)

    monkeypatch.setattr(linter, "ModuleModel", model)
    results = _by_name(_lint_tree(tmp_path))
    assert results["boom.py"].internal_error.startswith("internal error on file ")
    assert results["boom.py"].internal_error.endswith("boom.py: KeyError: 'surprise'")
    assert all(len(results[name].diagnostics) == 1 for name in ("a.py", "z.py"))


# ---- arbitrary edits of real examples: whatever comes out, lint (and fix) it without crashing ------------

EXAMPLES = [example.code for rule in RULES for example in (*rule.valid, *rule.invalid)]


@st.composite
def mangled(draw) -> bytes:
    """A rule example with lines deleted, duplicated, moved, re-indented or cut short, and perhaps a few
    stray bytes: mostly broken or odd Python, sometimes valid code no rule was written for."""
    lines = draw(st.sampled_from(EXAMPLES)).splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "move", "indent", "dedent", "truncate"]))
        if action == "delete":
            del lines[i]
        elif action == "duplicate":
            lines.insert(j, lines[i])
        elif action == "move":
            lines.insert(j, lines.pop(i))
        elif action == "indent":
            lines[i] = "    " + lines[i]
        elif action == "dedent":
            lines[i] = lines[i].lstrip()
        else:
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    data = "".join(lines).encode()
    if draw(st.integers(0, 9)) == 0:
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=4)) + data[at:]
    return data


@settings(max_examples=1000, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mangled())
def test_mangled_examples_never_crash(data):
    try:
        source = decode_source(data)
    except SourceError:
        return
    for mode in (FixMode.NONE, FixMode.DIFF):
        result = make_linter(RULES, Settings(target="sm_90"), mode, unsafe=True).lint_source(
            source, None, "mangled.py", "mangled", Project())
        assert result.internal_error is None, result.internal_error
        assert result.refused == [], result.refused


@pytest.mark.skipif(sys.platform == "win32", reason="no peak memory to bound there")
def test_a_worker_past_its_memory_bound_retires_and_a_fresh_one_lints_the_rest(tmp_path, monkeypatch):
    """Each worker retires after its first file (a bound every worker passes): every file is still linted
    once, in order, with the findings one process gives."""
    from tritonlint import workers

    for index in range(40):
        (tmp_path / f"k{index:02}.py").write_text(KERNEL)
    monkeypatch.setattr(workers, "GROWTH_BOUND", -1)  # the forked workers inherit it
    settings = Settings(root=tmp_path, target="sm_90")
    run = lint_paths([tmp_path], settings, make_linter(RULES, settings, FixMode.NONE, unsafe=False), jobs=2)
    alone = lint_paths([tmp_path], settings, make_linter(RULES, settings, FixMode.NONE, unsafe=False), jobs=1)
    assert [r.path for r in run.files] == [r.path for r in alone.files] and len(run.files) == 40
    assert [r.diagnostics for r in run.files] == [r.diagnostics for r in alone.files]
    assert all([d.code for d in r.diagnostics] == ["TL001"] and not r.internal_error for r in run.files)


@pytest.mark.skipif(sys.platform == "win32", reason="kills the worker with SIGKILL")
def test_a_worker_that_dies_takes_down_only_its_file(tmp_path, monkeypatch):
    """A worker killed while linting one file (a crash in native code, the out-of-memory killer): that file
    is reported as an internal error, every other file is linted as usual."""
    import signal

    for index in range(40):
        (tmp_path / f"k{index:02}.py").write_text(KERNEL)
    (tmp_path / "boom.py").write_text(KERNEL)
    real_lint = linter.FileLinter.lint_source

    def lint_source(self, source, path, display, *args, **kwargs):
        if display.endswith("boom.py"):
            os.kill(os.getpid(), signal.SIGKILL)
        return real_lint(self, source, path, display, *args, **kwargs)

    monkeypatch.setattr(linter.FileLinter, "lint_source", lint_source)  # the forked workers inherit it
    settings = Settings(root=tmp_path, target="sm_90")
    run = lint_paths([tmp_path], settings, make_linter(RULES, settings, FixMode.NONE, unsafe=False), jobs=2)
    results = _by_name(run)
    assert len(results) == 41
    assert "the process linting it died" in results["boom.py"].internal_error
    assert all([d.code for d in r.diagnostics] == ["TL001"] and not r.internal_error
               for name, r in results.items() if name != "boom.py")
