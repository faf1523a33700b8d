"""Incremental re-linting (the language server's path) finds exactly what a full lint finds: random edits
(lines inserted, deleted, duplicated, changed, empty lines that only move rows) in kernels, configs, launches
and module constants of real-looking files, compared after every edit. TRITONLINT_INCREMENTAL_EDITS raises the number of edits."""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

import pytest

from tritonlint.analysis.project import Project
from tritonlint.config import Settings
from tritonlint.incremental import STRETCH_ROWS, IncrementalLinter, _compact
from tritonlint.linter import FileLinter
from tritonlint.results import FileResult, FixMode
from tritonlint.ruleset import load_rules
from tritonlint.runner import make_linter
from tritonlint.source import decode_source
from tritonlint.templates import Row, place_rows

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EDITS = int(os.environ.get("TRITONLINT_INCREMENTAL_EDITS", "30"))

GEMM = '''
@triton.autotune(configs=[triton.Config({{"BLOCK_M": 64, "BLOCK_N": 64}}, num_warps=4),
                          triton.Config({{"BLOCK_M": 128, "BLOCK_N": 64}}, num_warps=8)], key=["M", "N", "K"])
@triton.jit
def matmul_{i}(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr = 32):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.static_range(0, 2048 // BLOCK_K):
        a = tl.load(a_ptrs, mask=offs_m[:, None] < M, other=0.0)
        b = tl.load(b_ptrs, mask=offs_n[None, :] < N, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.bfloat16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def launch_{i}(a, b, c):
    M, K = a.shape
    _, N = b.shape
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]))
    matmul_{i}[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                    c.stride(1), BLOCK_M=64)
'''

# Module-level facts: shared constants and configs, a helper, a class of kernels, an allocator set in a
# function, a main block, tuple constants, a suppression.
MODULE = '''"""Kernels that share module-level configuration."""
import torch
import triton
import triton.language as tl

BLOCK = 128
ROWS, COLS = 64, 48
CONFIGS = [triton.Config({"BLOCK_M": 32}, num_warps=2), triton.Config({"BLOCK_M": 64}, num_warps=4)]
LONG = 256


@triton.jit
def _scale(x, factor: tl.constexpr):
    return x * factor


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def scale_kernel(x_ptr, y_ptr, n, m, BLOCK_M: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    x = tl.load(x_ptr + offs, mask=offs < n)
    for i in tl.static_range(LONG):  # noqa: TL001
        x = _scale(x, 2)
    tl.store(y_ptr + offs * m, x, mask=offs < n)


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK_M: tl.constexpr, EXTRA: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    rows = tl.arange(0, ROWS)
    tile = tl.load(x_ptr + rows[:, None] * n + offs[None, :])
    tl.store(y_ptr + rows[:, None] * n + offs[None, :], tile)


@triton.jit
def tma_kernel(x_ptr, n, BLOCK_M: tl.constexpr):
    desc = tl.make_tensor_descriptor(x_ptr, shape=[n, n], strides=[n, 1], block_shape=[BLOCK_M, BLOCK_M])
    tile = desc.load([0, 0])
    desc.store([0, 0], tile * 2)


class Ops:
    @staticmethod
    @triton.jit
    def row_kernel(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        for i in tl.static_range(0, 4096 // BLOCK):
            tl.store(x_ptr + offs + i, tl.load(x_ptr + offs))


def scale(x, m):
    y = torch.empty_like(x)
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_M"]),)
    scale_kernel[grid](x, y, n, m, BLOCK_M=BLOCK)
    return y


def copy(x):
    y = torch.empty_like(x)
    copy_kernel[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), EXTRA=COLS)
    return y


def descriptors(x):
    tma_kernel[(1,)](x, x.shape[0], BLOCK_M=64)
    Ops.row_kernel[(1, 1, 70000)](x, x.numel(), BLOCK=BLOCK)


def setup():
    triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8))


if __name__ == "__main__":
    print(scale(torch.ones(1024), 1))
'''

TOP_LEVEL = [
    "BLOCK = 64",
    "LONG = 8",
    "ROWS, COLS = 16, 16",
    "CONFIGS = [triton.Config({'BLOCK_M': 128}, num_warps=8)]",
    "triton.set_allocator(None)",
    "def setup():\n    pass",
    "scale_kernel = None",
    "from triton.language.extra import libdevice",
    "@triton.jit",
    "if __name__ == '__main__':\n    copy(torch.ones(8))",
    "# noqa: TL001",
    "M = N = K = 512",
]
BODY = [
    "x = tl.load(x_ptr + tl.arange(0, 64))",
    "acc = tl.dot(a, b, trans_a=True)",
    "pid = tl.program_id(2)",
    "tile = tl.load(x_ptr + rows[:, None] * n + offs[None, :])  # noqa: TL003",
    "for i in tl.static_range(0, 4096 // BLOCK): pass",
    "K = 4096",
    "return",
    "scale_kernel[(n,)](x, x, n, 1)",
    "matmul_1[grid](a, b, c, M, N, K, 1, 1, 1, 1, 1, 1, BLOCK_M=32, BLOCK_N=32)",
    "tl.store(y_ptr, x)",
]
NUMBERS = ["1", "2", "16", "32", "48", "64", "100", "128", "4096", "70000"]


def gemm_file(kernels: int) -> str:
    return "import torch\nimport triton\nimport triton.language as tl\n" + "".join(
        GEMM.format(i=i) for i in range(kernels))


def fixture_file(*names: str) -> str:
    return "\n\n".join((FIXTURES / name / "slow.py").read_text(encoding="utf-8") for name in names)


FILES = {
    "gemms": lambda: gemm_file(6),
    "module": lambda: MODULE,
    "autotune-fixtures": lambda: fixture_file("TL004-conflicting-meta", "TL006-autotune-stale-key",
                                              "TL110-autotune-key-typo", "TL001-static-range-k-loop"),
    "device-fixtures": lambda: fixture_file("TL105-device-descriptor-copy", "TL106-tma-gemm-frozen-block",
                                            "TL002-transpose-loaded-tile", "TL102-row-copy-2g",
                                            "TL109-token-axis-1"),
}


def edit(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    index = rng.randrange(len(lines))
    line = lines[index]
    indent = line[:len(line) - len(line.lstrip())]
    kind = rng.choice(["number", "number", "name", "name", "delete", "duplicate", "insert", "insert", "swap",
                       "blank"])
    if kind == "number" and re.search(r"\b\d+\b", line):
        spots = list(re.finditer(r"\b\d+\b", line))
        spot = rng.choice(spots)
        lines[index] = line[:spot.start()] + rng.choice(NUMBERS) + line[spot.end():]
    elif kind == "name" and re.search(r"[A-Za-z_]\w*", line):
        spot = rng.choice(list(re.finditer(r"[A-Za-z_]\w*", line)))
        words = sorted(set(re.findall(r"[A-Za-z_]\w*", text)))
        lines[index] = line[:spot.start()] + rng.choice(words) + line[spot.end():]
    elif kind == "delete":
        del lines[index]
    elif kind == "duplicate":
        lines.insert(index, line)
    elif kind == "swap" and index + 1 < len(lines):
        lines[index], lines[index + 1] = lines[index + 1], line
    elif kind == "blank":  # rows move, nothing else changes: the slices that do not hold it are reused, moved
        lines.insert(index, "")
    else:
        snippet = rng.choice(BODY) if indent else rng.choice(TOP_LEVEL)
        lines.insert(index, "\n".join(indent + part for part in snippet.split("\n")))
    return "\n".join(lines)


def _comparable(result: FileResult) -> tuple[object, ...]:
    # Findings at one position may come in either order; compared as a multiset.
    diagnostics = sorted(result.diagnostics, key=lambda d: (d.sort_key, d.start, d.end, repr(d)))
    return (diagnostics, result.summaries, result.skipped, result.internal_error, result.timed_out)


@pytest.mark.parametrize("target", [None, "sm_90"])
@pytest.mark.parametrize("name", sorted(FILES))
def test_incremental_equals_full_after_random_edits(name: str, target: str | None, tmp_path: Path) -> None:
    settings = Settings(root=tmp_path)
    settings.target = target
    linter = make_linter(load_rules([]), settings, FixMode.NONE, True)
    incremental = IncrementalLinter(linter)
    rng = random.Random(f"{name}-{target}")
    text = FILES[name]()
    reused = 0
    previous = text
    for step in range(EDITS + 1):
        if step:
            previous = text
            edited = edit(text, rng)
            text = edited if rng.random() < 0.9 else edit(edited, rng)  # now and then two edits at once
        source = decode_source(text.encode("utf-8"))
        full = linter.lint_source(source, None, "kernels.py", "kernels", Project())
        fast = incremental.lint_source(source, None, "kernels.py", "kernels", Project())
        assert _comparable(fast) == _comparable(full), f"edit {step} of {name}:\n{text}"
        reused += incremental.stats["reused"]
        if any(d.code == "TL000" for d in full.diagnostics) and rng.random() < 0.7:
            text = previous  # undo, most of the time, as one fixes a typo
    assert reused or name != "gemms", "no slice was ever reused: the test exercised only full lints"


def _both(incremental: IncrementalLinter, linter: FileLinter, text: str) -> tuple[FileResult, FileResult]:
    source = decode_source(text.encode("utf-8"))
    return (linter.lint_source(source, None, "kernels.py", "kernels", Project()),
            incremental.lint_source(source, None, "kernels.py", "kernels", Project()))


def test_moved_rows_reuse_the_findings_moved(tmp_path: Path) -> None:
    settings = Settings(root=tmp_path)
    settings.target = "sm_90"
    linter = make_linter(load_rules([]), settings, FixMode.NONE, True)
    incremental = IncrementalLinter(linter)
    text = gemm_file(6)
    full, fast = _both(incremental, linter, text)
    assert _comparable(fast) == _comparable(full)
    assert incremental.stats == {"linted": 7, "reused": 0}  # the core (imports) and one slice per kernel
    last = [d.message for d in full.diagnostics if d.code == "TL003"][-1]
    row = int(re.search(r"at line (\d+)", last).group(1))  # type: ignore[union-attr]

    lines = text.split("\n")
    lines.insert(lines.index("    pid_m = tl.program_id(0)"), "")  # in the first kernel's body
    full, fast = _both(incremental, linter, "\n".join(lines))
    assert incremental.stats == {"linted": 1, "reused": 6}  # only the edited kernel's slice is linted
    assert _comparable(fast) == _comparable(full)
    moved = last.replace(f"line {row}", f"line {row + 1}")
    assert [d.message for d in fast.diagnostics if d.code == "TL003"][-1] == moved

    lines[3:3] = ["", "", ""]  # between the imports and the first kernel: every slice's rows move
    full, fast = _both(incremental, linter, "\n".join(lines))
    assert incremental.stats == {"linted": 1, "reused": 6}  # the first kernel's: the rows are in reach above it
    assert _comparable(fast) == _comparable(full)
    lines[3:3] = ["", ""]  # two more: beyond STRETCH_ROWS, nothing but rows changes
    full, fast = _both(incremental, linter, "\n".join(lines))
    assert incremental.stats == {"linted": 0, "reused": 7}
    assert _comparable(fast) == _comparable(full)
    assert any(f"line {row + 6}" in d.message for d in fast.diagnostics)
    assert fast.summaries == full.summaries  # kernel rows moved too (the project model reads them)

    del lines[3:8]  # and back up
    full, fast = _both(incremental, linter, "\n".join(lines))
    assert incremental.stats == {"linted": 1, "reused": 6}
    assert _comparable(fast) == _comparable(full)


def test_a_comment_between_top_level_statements_relints_the_slice_below_it(tmp_path: Path) -> None:
    linter = make_linter(load_rules([]), Settings(root=tmp_path), FixMode.NONE, True)
    incremental = IncrementalLinter(linter)
    text = gemm_file(6)
    _both(incremental, linter, text)
    lines = text.split("\n")
    third = [i for i, line in enumerate(lines) if line.startswith("@triton.autotune")][2]
    for comment in ("# tuned on H200", "# tuned on H100"):  # typed, then changed
        lines[third - 1] = comment
        full, fast = _both(incremental, linter, "\n".join(lines))
        assert incremental.stats == {"linted": 1, "reused": 6}  # the third kernel's slice, not every slice
        assert _comparable(fast) == _comparable(full)


def test_rows_are_marked_while_they_may_move() -> None:
    row = Row(12)
    assert row == 12 and hash(row) == hash(12) and type(row + 1) is int
    assert f"line {row}" == "line \ue00012\ue001" == "line " + str(row)
    assert f"{row:>4}" == "  12"  # a formatted width is plain: it would not survive a move anyway
    assert place_rows(f"line {row}, lines {[Row(3), row]}", lambda r: r + 100) == "line 112, lines [103, 112]"
    assert place_rows("no rows: 12", lambda r: r + 100) == "no rows: 12"


def test_text_with_the_marker_characters_is_linted_whole(tmp_path: Path) -> None:
    linter = make_linter(load_rules([]), Settings(root=tmp_path), FixMode.NONE, True)
    incremental = IncrementalLinter(linter)
    text = gemm_file(6) + "\nNOTE = '\ue000 1 \ue001'\n"
    full, fast = _both(incremental, linter, text)
    assert incremental.stats == {"linted": 0, "reused": 0}  # a full lint: its quoted text could look like a row
    assert _comparable(fast) == _comparable(full)


def test_a_stretch_left_out_keeps_a_few_rows() -> None:
    # A comment stays as far above a kept statement as in the text, or out of the three lines rules read.
    def kept(text: str) -> list[tuple[int, int]]:
        f = text.index("def f")
        return [(0, 14), (14, 21), (f, f + len("def f():\n    pass\n"))]

    far = "import triton\n# note\n" + "\n" * 6 + "def f():\n    pass\n\n\ndef g():\n    pass\n"
    compact, offsets = _compact(far, kept(far))
    assert compact == "import triton\n# note\n" + "\n" * STRETCH_ROWS + "def f():\n    pass\n" + "\n" * STRETCH_ROWS
    assert offsets(compact.index("def f")) == far.index("def f")
    near = far.replace("\n" * 6, "\n\n")
    assert _compact(near, kept(near))[0].startswith("import triton\n# note\n\n\ndef f():")


@pytest.mark.parametrize("gap", [1, 2, 5])
def test_a_comment_out_of_reach_in_the_text_stays_out_of_reach_in_a_slice(gap: int, tmp_path: Path) -> None:
    # TL006 reads the comments among the three lines above an autotune call: here one explains the key, with a
    # statement of another slice and `gap` empty lines between (within reach for gap 1, not for 2 and 5).
    linter = make_linter(load_rules([]), Settings(root=tmp_path), FixMode.NONE, True)
    text = (FIXTURES / "TL006-autotune-stale-key" / "slow.py").read_text(encoding="utf-8").replace(
        "@triton.autotune(  # expect: TL006",
        "# the key leaves out N and K on purpose\nUNRELATED = 1\n" + "\n" * gap + "@triton.autotune(")
    text = "".join(f"def _pad{i}(x):\n    return x + {i}\n\n\n" for i in range(8)) + text
    incremental = IncrementalLinter(linter)
    full, fast = _both(incremental, linter, text)
    assert incremental.stats["linted"] > 1  # linted in slices
    assert sum(d.code == "TL006" for d in full.diagnostics) == (gap > 1)
    assert _comparable(fast) == _comparable(full)
