"""--fix never loses work.

Property-based: for every loaded rule whose fix is not display-only (so rules merged later are covered
without touching this file), each `invalid` example of the rule is a seed; hypothesis mutates it in ways
that keep it valid Python (renamed identifiers, some non-ASCII; indentation by tabs or other widths; extra
comments and blank lines; unrelated code before and after; CRLF, lone CR or mixed line endings; a BOM; a
latin-1 coding cookie with non-ASCII comments) and writes it with some permission bits. Then --fix (unsafe
fixes included) must leave a file that parses as Python reads it (bytes, cookie and all), with the same
encoding, BOM, line-ending style and permission bits, no temporary file behind, no text changed outside
the spans of the findings reported before fixing, and nothing left for a second --fix to change.

Then the write path itself: refusals (a fix that breaks the file, a read-only file, a file changed or
deleted on disk meanwhile, an encoding that does not round-trip), atomic replacement, owner and symlinks.
"""

from __future__ import annotations

import ast
import io
import keyword
import os
import re
import stat
import subprocess
import tempfile
import textwrap
import tokenize
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import run_cli, tritonlint_executable
from tritonlint import linter
from tritonlint.config import Settings
from tritonlint.analysis.project import Project
from tritonlint.fixes import applicable
from tritonlint.linter import FileLinter
from tritonlint.results import FileResult, FixMode
from tritonlint.ruleset import load_rule_file, load_rules
from tritonlint.runner import make_linter
from tritonlint.source import decode_source

RULES = load_rules()
SEEDS = [(rule, index, example.code) for rule in RULES if rule.fixable for index, example in enumerate(rule.invalid)]
TALLY: Counter = Counter()  # examples tried and fixes checked, printed at the end of the module (pytest -s)
_NEWLINES = re.compile(r"\r\n|\r|\n")


def _linter(mode: FixMode, rules=RULES) -> FileLinter:
    return make_linter(rules, Settings(target="sm_90"), mode, unsafe=True)


REPORT, FIX = _linter(FixMode.NONE), _linter(FixMode.FIX)


def lint(file_linter: FileLinter, path: Path) -> FileResult:
    return file_linter.lint_path(path, path.name, path.stem, Project())


# ---- mutations that keep a seed valid Python ------------------------------------------------------------

def _tokens(code: str) -> list[tokenize.TokenInfo]:
    return list(tokenize.generate_tokens(io.StringIO(code).readline))


def logical_line_starts(code: str) -> dict[int, int]:
    """1-based row -> indentation depth, for each row where a statement starts."""
    starts: dict[int, int] = {}
    depth, at_start = 0, True
    for token in _tokens(code):
        if token.type == tokenize.INDENT:
            depth += 1
        elif token.type == tokenize.DEDENT:
            depth -= 1
        elif token.type == tokenize.NEWLINE:
            at_start = True
        elif token.type in (tokenize.NL, tokenize.COMMENT, tokenize.ENDMARKER):
            continue
        elif at_start:
            starts[token.start[0]] = depth
            at_start = False
    return starts


def reindent(code: str, unit: str) -> str:
    starts = logical_line_starts(code)
    lines = code.splitlines(keepends=True)
    for row, depth in starts.items():
        lines[row - 1] = unit * depth + lines[row - 1].lstrip(" \t")
    return "".join(lines)


def renamable_names(code: str) -> list[str]:
    """Names the example itself binds (functions, parameters, assigned and loop variables), never imported
    names, attribute names or builtins, so renaming every occurrence keeps the code valid."""
    tree = ast.parse(code)
    bound, blocked = set(), set(dir(__builtins__)) | set(keyword.kwlist)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.Attribute):
            blocked.add(node.attr)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            blocked.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
            blocked.update(alias.name for alias in node.names)
    return sorted(bound - blocked)


def rename(code: str, old: str, new: str) -> str:
    lines = code.splitlines(keepends=True)
    previous, edits = None, []
    for token in _tokens(code):
        if token.type == tokenize.NAME and token.string == old and not (previous and previous.string == "."):
            edits.append(token.start)
        if token.type not in (tokenize.NL, tokenize.COMMENT):
            previous = token
    for row, column in reversed(edits):  # from the end, so earlier positions on a line stay valid
        line = lines[row - 1]
        lines[row - 1] = line[:column] + new + line[column + len(old):]
    return "".join(lines)


def insert_lines(code: str, rows: list[int], text: str) -> str:
    """Put `text` (a comment, or nothing: a blank line) on a line of its own before each given row."""
    lines = code.splitlines(keepends=True)
    for row in sorted(set(rows), reverse=True):
        indent = re.match(r"[ \t]*", lines[row - 1]).group()
        lines.insert(row - 1, (indent + text).rstrip(" \t") + "\n")
    return "".join(lines)


BEFORE = [
    "",
    '"""A module docstring that mentions tl.static_range(64) and ünïcödé."""\n',
    ("# tl.static_range(128) in a comment must stay as it is\nimport os\n\n\ndef host(n):\n"
     "    return [i * 2 for i in range(n)]\n\n\n"),
    "class Table:\n    rows = {'a': 1, 'b': (2, 3)}\n\n    def get(self, key):\n        return self.rows[key]\n\n\n",
]
AFTER = [
    "",
    "\n\nSTATIC = 'tl.static_range(256)'\n",
    "\n\ndef host_loop(tl):\n    for i in tl.static_range(64):\n        print(i)\n",
    "\n\nif __name__ == '__main__':\n    import sys\n    sys.exit(0)\n",
]
LATIN1_WORDS = ["café", "crème brûlée", "Übergröße", "señor", "ß", "naïve"]
UNICODE_WORDS = LATIN1_WORDS + ["✓ done", "变量", "😀", "Ωμέγα", "ﬁ ligature"]


@dataclass
class Variant:
    data: bytes
    encoding: str
    bom: bool
    newline: str  # "\n", "\r\n", "\r" or "mixed"
    mode: int


@st.composite
def variants(draw, seed: str) -> Variant:
    encoding = draw(st.sampled_from(["utf-8", "utf-8", "latin-1"]))
    words = LATIN1_WORDS if encoding == "latin-1" else UNICODE_WORDS
    code = seed
    for name in draw(st.lists(st.sampled_from(renamable_names(seed) or ["_"]), unique=True, max_size=3)):
        if name != "_":
            suffix = draw(st.sampled_from(["_2", "ü", "X"] + ([] if encoding == "latin-1" else ["_变量"])))
            code = rename(code, name, name + suffix)
    code = reindent(code, draw(st.sampled_from(["    ", "\t", "  ", "        ", " "])))
    starts = sorted(logical_line_starts(code))
    comment_rows = draw(st.lists(st.sampled_from(starts), max_size=4))
    code = insert_lines(code, comment_rows, f"# {draw(st.sampled_from(words))} tl.static_range(99)")
    code = insert_lines(code, draw(st.lists(st.sampled_from(starts), max_size=3)), "")
    code = draw(st.sampled_from(BEFORE)) + code + draw(st.sampled_from(AFTER))
    if draw(st.booleans()):
        code = f"# {draw(st.sampled_from(words))}\n" + code
    if encoding == "latin-1":
        code = "# -*- coding: latin-1 -*-\n" + code
    newline = draw(st.sampled_from(["\n", "\r\n", "\r", "mixed"]))
    if newline == "mixed":
        lines = code.split("\n")
        code = "".join(line + ("\r\n" if i % 2 else "\n") for i, line in enumerate(lines[:-1])) + lines[-1]
    else:
        code = code.replace("\n", newline)
    bom = encoding == "utf-8" and draw(st.booleans())
    data = ("\ufeff" if bom else "").encode() + code.encode(encoding)
    mode = draw(st.sampled_from([0o644, 0o600, 0o755, 0o664, 0o640, 0o700]))
    return Variant(data, encoding, bom, newline, mode)


# ---- the properties --------------------------------------------------------------------------------------

def unchanged_outside(before: str, after: str, spans: list[tuple[int, int]]) -> bool:
    """Whether `after` is `before` with only the text inside `spans` replaced: the pieces between the spans
    must all appear, in order, with the first at the start and the last at the end."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    bounds = [0] + [x for span in merged for x in span] + [len(before)]
    pieces = [before[bounds[i]:bounds[i + 1]] for i in range(0, len(bounds), 2)]
    if len(pieces) == 1:
        return after == before
    if not after.startswith(pieces[0]) or not after.endswith(pieces[-1]):
        return False
    position, limit = len(pieces[0]), len(after) - len(pieces[-1])
    for piece in pieces[1:-1]:
        found = after.find(piece, position, limit)
        if found < 0:
            return False
        position = found + len(piece)
    return position <= limit


def check_fix_safety(variant: Variant) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "kernel.py"
        path.write_bytes(variant.data)
        path.chmod(variant.mode)
        original = decode_source(variant.data)
        ast.parse(variant.data)  # the mutations kept it valid Python
        before = lint(REPORT, path)
        assert before.internal_error is None and before.skipped is None, before.internal_error or before.skipped
        offered = applicable(before.diagnostics, unsafe=True)

        fixed = lint(FIX, path)
        assert fixed.internal_error is None and fixed.skipped is None, fixed.internal_error or fixed.skipped
        assert fixed.refused == [], f"a fixer produced unparsable code: {fixed.refused}"
        after_data = path.read_bytes()
        ast.parse(after_data)  # as Python reads the file: BOM and coding cookie included
        after = decode_source(after_data)
        assert (after.encoding, after.bom) == (original.encoding, original.bom)
        newlines_before = set(_NEWLINES.findall(original.text))
        assert not newlines_before or set(_NEWLINES.findall(after.text)) <= newlines_before
        assert stat.S_IMODE(path.stat().st_mode) == variant.mode
        assert sorted(os.listdir(folder)) == ["kernel.py"], "a temporary file was left behind"
        spans = [(d.start, d.end) for d in before.diagnostics]
        spans += [(r.start, r.end) for d in before.diagnostics for r in d.related]
        assert unchanged_outside(original.text, after.text, spans), \
            "a fix changed text outside its finding's span and the related code it names"
        if offered:
            assert after.text != original.text and fixed.fixes_applied > 0
        else:
            assert after_data == variant.data

        again = lint(FIX, path)
        assert again.fixes_applied == 0 and path.read_bytes() == after_data, "a second --fix changed the file"
        TALLY["variants"] += 1
        TALLY["fixed files"] += bool(fixed.fixes_applied)
        TALLY["fixes applied and checked"] += fixed.fixes_applied


@pytest.fixture(scope="module", autouse=True)
def report_tally():
    yield
    print(f"\nfix safety: {len(SEEDS)} seeds from {len({r.id for r, _, _ in SEEDS})} fixable rules, "
          f"{TALLY['variants']} variants, {TALLY['fixed files']} files fixed, "
          f"{TALLY['fixes applied and checked']} fixes applied and checked")


@pytest.mark.parametrize(("rule", "index", "seed"), SEEDS, ids=[f"{r.id}-invalid-{i}" for r, i, _ in SEEDS])
def test_fix_safety_properties(rule, index, seed):
    @settings(max_examples=30, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(variants(seed))
    def run(variant: Variant) -> None:
        check_fix_safety(variant)

    run()


def test_the_mutations_themselves():
    """The helpers do what the property test relies on."""
    code = "def f(a, b):\n    if a:\n        return (b +\n                1)\n    return a\n"
    assert reindent(code, "\t") == "def f(a, b):\n\tif a:\n\t\treturn (b +\n                1)\n\treturn a\n"
    assert rename(code, "a", "aü").count("aü") == 3
    assert renamable_names("import triton.language as tl\nx = tl.y\ndef k(p): q = p\n") == ["k", "p", "q", "x"]
    assert unchanged_outside("abcdef", "aXYdef", [(1, 3)])
    assert not unchanged_outside("abcdef", "aXYdeF", [(1, 3)])
    assert unchanged_outside("abcabc", "abcXabc", [(3, 3)])


# ---- the write path ----------------------------------------------------------------------------------------

KERNEL = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def kernel(x_ptr):
        for i in tl.static_range(32):
            tl.store(x_ptr + i, tl.dot(tl.load(x_ptr), tl.load(x_ptr)))
    """)
FIXED = KERNEL.replace("tl.static_range(32)", "tl.range(32, loop_unroll_factor=1)")


def _write(tmp_path: Path, data: bytes | str = KERNEL, name: str = "k.py") -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def test_a_fix_that_breaks_the_file_is_refused(tmp_path):
    rules_dir = tmp_path / "rules"
    rules_dir.mkdir()
    (rules_dir / "breaker.yaml").write_text(textwrap.dedent("""\
        id: ACME001
        name: breaker
        severity: warning
        category: style
        message: "`$CALL` is fine really"
        rule: {pattern: "tl.store($$$ARGS)"}
        fix: {template: "tl.store($$$ARGS", applicability: safe, message: Break it}
        doc: {what: A rule whose fix breaks the code., why: To test the refusal.}
        tests:
          valid: ["x = 1\\n"]
          invalid: ["tl.store(p, 1)  # expect: ACME001\\n"]
        """).replace("`$CALL`", "this store"))
    rule = load_rule_file(rules_dir / "breaker.yaml")
    path = _write(tmp_path)
    result = lint(_linter(FixMode.FIX, [rule]), path)
    assert path.read_text() == KERNEL
    assert result.fixes_applied == 0 and len(result.diagnostics) == 1
    assert result.refused == ["k.py:8:9: ACME001 fix refused: it would leave the file unparsable"]
    (tmp_path / "tritonlint.toml").write_text('extend-rules = ["rules"]\nselect = ["ACME001"]\n')
    cli = run_cli("k.py", "--fix", cwd=tmp_path)
    assert cli.returncode == 1 and path.read_text() == KERNEL
    assert "warning: k.py:8:9: ACME001 fix refused: it would leave the file unparsable" in cli.stderr


def test_atomic_replace_in_the_same_folder(tmp_path, monkeypatch):
    path = _write(tmp_path)
    real_replace, calls = os.replace, []

    def replace(source, target):
        calls.append((Path(source), Path(target)))
        assert Path(target).read_text() == KERNEL  # the original is intact until the rename
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", replace)
    lint(FIX, path)
    ((temporary, target),) = calls
    assert target == path.resolve() and temporary.parent == path.parent.resolve()
    assert path.read_text() == FIXED


def test_a_failed_write_keeps_the_original_and_reports_it(tmp_path, monkeypatch):
    path = _write(tmp_path)

    def disk_full(source, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    result = lint(FIX, path)
    assert path.read_text() == KERNEL and os.listdir(tmp_path) == ["k.py"]
    assert result.skipped == "fixes not written: no space left on device"
    assert result.fixes_applied == 0 and [d.code for d in result.diagnostics] == ["TL001"]  # still there


def test_read_only_file_is_not_rewritten(tmp_path, monkeypatch):
    # Root may write anything, so os.access is made to answer as it would for another user.
    path = _write(tmp_path)
    path.chmod(0o444)
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: not (mode & os.W_OK and Path(p) == path.resolve()))
    result = lint(FIX, path)
    assert path.read_text() == KERNEL and result.skipped == "fixes not written: the file is read-only"
    assert stat.S_IMODE(path.stat().st_mode) == 0o444


def test_file_changed_on_disk_while_linting_is_not_overwritten(tmp_path, monkeypatch):
    path = _write(tmp_path)
    real_read = linter.read_source

    def read_then_edit(p):
        source = real_read(p)
        with open(p, "a") as stream:  # the user saves in an editor meanwhile
            stream.write("# a line typed while tritonlint ran\n")
        return source

    monkeypatch.setattr(linter, "read_source", read_then_edit)
    result = lint(FIX, path)
    assert path.read_text() == KERNEL + "# a line typed while tritonlint ran\n"
    assert result.skipped == "fixes not written: the file changed on disk while it was being linted"
    assert os.listdir(tmp_path) == ["k.py"]


def test_file_deleted_while_linting_is_not_recreated(tmp_path, monkeypatch):
    path = _write(tmp_path)
    real_read = linter.read_source

    def read_then_delete(p):
        source = real_read(p)
        p.unlink()
        return source

    monkeypatch.setattr(linter, "read_source", read_then_delete)
    result = lint(FIX, path)
    assert not path.exists() and os.listdir(tmp_path) == []
    assert result.skipped == "fixes not written: no such file or directory"


def test_encoding_that_does_not_round_trip_is_not_rewritten(tmp_path):
    # cp932 decodes b"\x87\x90" to "≒" but encodes "≒" as b"\x81\xe0": rewriting would change that comment.
    data = b"# coding: cp932\n# \x87\x90\n" + KERNEL.encode()
    path = _write(tmp_path, data)
    result = lint(FIX, path)
    assert path.read_bytes() == data
    assert result.skipped.startswith("fixes not written: its cp932 text does not encode back to the same bytes")


def test_encoding_bom_newlines_and_mode_are_kept(tmp_path):
    cases = {
        "latin.py": b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + KERNEL.encode(),
        "bom.py": b"\xef\xbb\xbf" + KERNEL.encode(),
        "crlf.py": KERNEL.replace("\n", "\r\n").encode(),
    }
    for name, data in cases.items():
        path = _write(tmp_path, data, name)
        path.chmod(0o751)
        lint(FIX, path)
        expected = data.replace(b"tl.static_range(32)", b"tl.range(32, loop_unroll_factor=1)")
        assert path.read_bytes() == expected, name
        assert stat.S_IMODE(path.stat().st_mode) == 0o751


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file away")
def test_owner_is_kept(tmp_path):
    path = _write(tmp_path)
    os.chown(path, 65534, 65534)
    lint(FIX, path)
    assert path.read_text() == FIXED
    assert (path.stat().st_uid, path.stat().st_gid) == (65534, 65534)


def test_fixing_through_a_symlink_updates_the_target(tmp_path):
    target = _write(tmp_path, name="real.py")
    link = tmp_path / "link.py"
    link.symlink_to("real.py")
    lint(FIX, link)
    assert link.is_symlink() and target.read_text() == FIXED


def test_stdin_fix_keeps_encoding_bom_and_newlines(tmp_path):
    for data in (b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + KERNEL.encode(), b"\xef\xbb\xbf" + KERNEL.encode(),
                 KERNEL.replace("\n", "\r\n").encode()):
        result = run_cli_bytes(["-", "--fix"], data, tmp_path)
        assert result.returncode == 0
        assert result.stdout == data.replace(b"tl.static_range(32)", b"tl.range(32, loop_unroll_factor=1)")


def test_stdin_fix_echoes_input_it_cannot_read(tmp_path):
    """An editor replaces its buffer with what --fix prints: for input tritonlint cannot decode, that must
    be the input itself, never nothing."""
    data = KERNEL.encode() + b"# \xff\xfe\n"
    result = run_cli_bytes(["-", "--fix", "--stdin-filename", "k.py"], data, tmp_path)
    assert result.returncode == 0 and result.stdout == data
    assert result.stderr.decode().startswith("warning: k.py: not valid utf-8")


def run_cli_bytes(args: list[str], data: bytes, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*tritonlint_executable(), *args], input=data, capture_output=True, cwd=cwd, timeout=120,
                          env={**os.environ, "NO_COLOR": "1"}, check=False)


def test_a_hard_linked_file_is_fixed_under_every_name(tmp_path):
    path = _write(tmp_path)
    other = tmp_path / "other_name.py"
    os.link(path, other)
    lint(FIX, path)
    assert path.read_text() == FIXED and other.read_text() == FIXED
    assert path.stat().st_ino == other.stat().st_ino and sorted(os.listdir(tmp_path)) == ["k.py", "other_name.py"]


@pytest.mark.skipif(not hasattr(os, "setxattr"), reason="no extended attributes on this platform")
def test_extended_attributes_are_kept(tmp_path):
    path = _write(tmp_path)
    try:
        os.setxattr(path, "user.origin", b"generated by a kernel agent")
    except OSError:
        pytest.skip("this file system has no user extended attributes")
    lint(FIX, path)
    assert path.read_text() == FIXED and os.getxattr(path, "user.origin") == b"generated by a kernel agent"
