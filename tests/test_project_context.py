"""The project model: given some files (pre-commit passes only the staged ones), the rest of the project is
read as context, and launches are bound to kernels the same way everywhere."""
from __future__ import annotations

import json
import shutil
import subprocess
import textwrap

import pytest

from .helpers import lint_code, run_cli

KERNELS = textwrap.dedent("""
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024}), triton.Config({"BLOCK_SIZE": 4096})], key=["n"])
    @triton.jit
    def scale_kernel(x_ptr, y_ptr, n, BLOCK_SIZE: tl.constexpr):
        offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
""")
LAUNCH = textwrap.dedent("""
    import triton
    from kernels import scale_kernel

    def scale(x, y):
        n = x.numel()
        scale_kernel[lambda META: (triton.cdiv(n, META["BLOCK_SIZE"]),)](x, y, n, BLOCK_SIZE=1024)
""")


def _repo(tmp_path, kernels: str = KERNELS, launch: str = LAUNCH):
    (tmp_path / "kernels.py").write_text(kernels)
    (tmp_path / "launch.py").write_text(launch)
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    return tmp_path


def _findings(result) -> list[tuple[str, str]]:
    return [(f["filename"], f["code"]) for f in json.loads(result.stdout)]


@pytest.mark.parametrize("cache", [["--no-cache"], []])
def test_a_staged_launch_module_resolves_its_kernel_in_an_unstaged_module(tmp_path, cache):
    repo = _repo(tmp_path)
    for _ in range(2):  # the second run is served from the cache when there is one
        result = run_cli("check", "--force-exclude", "--output-format", "json", *cache, "launch.py", cwd=repo)
        assert result.returncode == 1, result.stderr
        assert _findings(result) == [("launch.py", "TL004")]


def test_a_changed_kernel_module_reports_the_launches_it_breaks(tmp_path):
    repo = _repo(tmp_path)
    result = run_cli("check", "--output-format", "json", "--no-cache", "kernels.py", cwd=repo)
    assert result.returncode == 1, result.stderr
    assert _findings(result) == [("launch.py", "TL004")]


def test_context_modules_findings_are_not_reported_when_they_do_not_use_the_given_files(tmp_path):
    other = KERNELS.replace("scale_kernel", "other_kernel")
    repo = _repo(tmp_path, kernels=other, launch=LAUNCH.replace("scale_kernel", "other_kernel"))
    (repo / "alone.py").write_text("import triton\n")
    result = run_cli("check", "--output-format", "json", "--no-cache", "alone.py", cwd=repo)
    assert result.returncode == 0 and _findings(result) == []


def test_a_kernel_module_reports_only_the_findings_judged_from_a_given_launch(tmp_path):
    unkeyed = KERNELS.replace('key=["n"]', 'key=[]')  # TL006 in kernels.py, judged from launch.py's launch
    unrelated = textwrap.dedent("""
        @triton.jit
        def row_max(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(out_ptr, tl.max(tl.load(x_ptr + offs, mask=offs < N, other=0.0), axis=0))
    """)
    repo = _repo(tmp_path, kernels=unkeyed + unrelated, launch=LAUNCH.replace(", BLOCK_SIZE=1024", ""))
    everything = _findings(run_cli("check", "--output-format", "json", "--no-cache", ".", cwd=repo))
    assert ("kernels.py", "TL006") in everything and ("kernels.py", "TL108") in everything
    for cache in (["--no-cache"], [], []):  # the last run is served from the cache
        result = run_cli("check", "--output-format", "json", *cache, "launch.py", cwd=repo)
        assert _findings(result) == [("kernels.py", "TL006")], result.stdout + result.stderr


def test_editing_the_kernel_module_invalidates_the_cached_launch_result(tmp_path):
    repo = _repo(tmp_path, kernels=KERNELS.replace('{"BLOCK_SIZE": 4096}', '{"BLOCK": 4096}').replace(
        '{"BLOCK_SIZE": 1024}', '{"BLOCK": 1024}'))
    first = run_cli("check", "--output-format", "json", "launch.py", cwd=repo)
    assert first.returncode == 0, first.stdout + first.stderr
    (repo / "kernels.py").write_text(KERNELS)  # now the configs tune BLOCK_SIZE, which the launch passes
    second = run_cli("check", "--output-format", "json", "launch.py", cwd=repo)
    assert _findings(second) == [("launch.py", "TL004")]


STARRED = textwrap.dedent("""
    import triton
    import triton.language as tl

    @triton.jit
    def kernel(x_ptr, N: tl.constexpr, M: tl.constexpr):
        for i in tl.static_range(N):
            tl.store(x_ptr + i, tl.load(x_ptr + i + M))

    def launch(x):
        head = (x, 40)
        kernel[(1,)](*head, 8)
""")


def test_launch_arguments_after_a_spread_bind_the_right_parameters(rules):
    (finding,) = lint_code(STARRED, rules, select=["TL001"]).diagnostics
    assert "unrolls 40 iterations" in finding.message and "N=40" in finding.notes[0]


def test_a_spread_of_unknown_length_binds_nothing_after_it(rules):
    code = STARRED.replace("head = (x, 40)\n    kernel[(1,)](*head, 8)", "kernel[(1,)](*args, 40)").replace(
        "def launch(x):", "def launch(*args):")
    assert lint_code(code, rules, select=["TL001"]).diagnostics == []


WRAPPED = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl
    from torch.library import wrap_triton

    @triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
    @triton.jit
    def rowsum_kernel(x_ptr, out_ptr, n, K, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for k in range(0, K):
            acc += tl.load(x_ptr + offs * K + k, mask=offs < n)
        tl.store(out_ptr + offs, acc, mask=offs < n)

    def rowsum(x):
        n, K = x.shape
        out = torch.empty(n, device=x.device)
        wrap_triton(rowsum_kernel)[lambda META: (triton.cdiv(n, META["BLOCK"]),)](x, out, n, K)
        return out
""")


def test_a_kernel_launched_only_through_wrap_triton_is_judged_from_that_launch(rules):
    (finding,) = lint_code(WRAPPED, rules, select=["TL006"]).diagnostics
    assert finding.severity == "warning" and "K" in finding.message  # info only when no launch is in view
    without = WRAPPED.replace("wrap_triton(rowsum_kernel)[", "helper(rowsum_kernel)[")
    (unseen,) = lint_code(without, rules, select=["TL006"]).diagnostics
    assert unseen.severity == "info"


def test_a_decorator_reexported_by_a_project_module_is_resolved_and_followed_when_it_changes(tmp_path):
    (tmp_path / "compat.py").write_text("from triton import jit\n")
    (tmp_path / "k.py").write_text("import triton.language as tl\nfrom compat import jit\n\n"
                                   "@jit\ndef k(x_ptr):\n    pid = tl.program_id(3)\n")
    for expected in (["TL111"], []):  # the cached result follows compat.py
        result = run_cli("check", "--select", "TL111", "--output-format", "json", "--exit-zero", "k.py", cwd=tmp_path)
        assert [code for _, code in _findings(result)] == expected, result.stderr
        (tmp_path / "compat.py").write_text("from numba import jit\n")
