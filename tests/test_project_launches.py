"""TL006 with the project's launches in view: a kernel is judged from the launches of every module of the
project (the reverse launch index), its cached result follows the launching modules, and a partial run
(pre-commit, an editor) reads them as context. Also the binder's kernel choices."""
from __future__ import annotations

import ast
import shutil
import subprocess
import textwrap

import pytest

from tritonlint.analysis.launch_index import build_index, module_links, resolve
from tritonlint.analysis.launches import (
    grid_axis_at_every_launch,
    kernel_parameter,
    launch_candidates,
    passed_at_every_launch,
    whole_blocks_at_every_launch,
)
from tritonlint.analysis.model import ModuleModel

from .helpers import cli_findings, lint_code

KERNEL = textwrap.dedent("""
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
    @triton.jit
    def rowsum_kernel(x_ptr, out_ptr, n, K, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for k in range(0, K):
            acc += tl.load(x_ptr + offs * K + k, mask=offs < n)
        tl.store(out_ptr + offs, acc, mask=offs < n)
""")
LAUNCH = textwrap.dedent("""
    import torch
    import triton
    from a import rowsum_kernel

    def rowsum(x):
        n, K = x.shape
        out = torch.empty(n, device=x.device)
        rowsum_kernel[lambda META: (triton.cdiv(n, META["BLOCK"]),)](x, out, n, K)
        return out
""")
LAUNCH_LINE = 9  # the launch's line in LAUNCH


def _repo(tmp_path, launch: str = LAUNCH):
    (tmp_path / "a.py").write_text(KERNEL)
    (tmp_path / "b.py").write_text(launch)
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    return tmp_path


def _tl006(repo, *paths: str, cache: tuple[str, ...] = ()) -> list[dict]:
    return cli_findings(repo, "TL006", *cache, *paths)


@pytest.mark.parametrize("cache", [("--no-cache",), ()])
def test_a_kernel_launched_only_in_another_module_is_judged_from_that_launch(tmp_path, cache):
    repo = _repo(tmp_path)
    for _ in range(2):  # the second run is served from the cache when there is one
        (finding,) = _tl006(repo, ".", cache=cache)
        assert finding["filename"] == "a.py" and finding["severity"] == "warning"
        assert "leaves out K" in finding["message"] and f"Judged with the launch at b.py:{LAUNCH_LINE}." in finding["notes"]


def test_without_any_launch_in_the_project_the_finding_is_info(tmp_path):
    repo = _repo(tmp_path, launch="import torch\n")
    (finding,) = _tl006(repo, ".", cache=("--no-cache",))
    assert finding["severity"] == "info" and not any("Judged with" in note for note in finding["notes"])


def test_a_constant_passed_by_every_launch_elsewhere_is_no_omission(tmp_path):
    repo = _repo(tmp_path, launch=LAUNCH.replace("(x, out, n, K)", "(x, out, n, 64)"))
    assert _tl006(repo, ".", cache=("--no-cache",)) == []


def test_changing_only_the_launching_module_updates_the_cached_kernel_result(tmp_path):
    repo = _repo(tmp_path)
    assert [f["severity"] for f in _tl006(repo, ".")] == ["warning"]
    (repo / "b.py").write_text(LAUNCH.replace("(x, out, n, K)", "(x, out, n, 64)"))  # K now one constant
    assert _tl006(repo, ".") == []
    (repo / "b.py").write_text(LAUNCH)
    assert [f["severity"] for f in _tl006(repo, ".")] == ["warning"]


def test_a_module_that_starts_launching_the_kernel_invalidates_the_cached_result(tmp_path):
    repo = _repo(tmp_path, launch=LAUNCH.replace("(x, out, n, K)", "(x, out, n, 64)"))
    assert _tl006(repo, "a.py") == []
    (repo / "c.py").write_text(LAUNCH)  # a second launcher, passing K as it varies
    (finding,) = _tl006(repo, "a.py")
    assert "b.py:9, c.py:9" in " ".join(finding["notes"])
    (repo / "c.py").unlink()
    assert _tl006(repo, "a.py") == []


@pytest.mark.parametrize("cache", [("--no-cache",), ()])
def test_a_partial_run_given_only_the_kernel_module_sees_the_launching_module(tmp_path, cache):
    repo = _repo(tmp_path)
    (finding,) = _tl006(repo, "a.py", cache=cache)
    assert finding["severity"] == "warning" and "b.py:9" in " ".join(finding["notes"])


PACKAGE_INIT = "from pkg.ops import rowsum_kernel\n"


def test_launches_through_a_package_re_export_reach_the_kernel(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "ops.py").write_text(KERNEL)
    (tmp_path / "pkg" / "__init__.py").write_text(PACKAGE_INIT)
    (tmp_path / "user.py").write_text(LAUNCH.replace("from a import", "from pkg import"))
    (finding,) = _tl006(tmp_path, ".", cache=("--no-cache",))
    assert finding["filename"] == "pkg/ops.py" and finding["severity"] == "warning" and "user.py:9" in " ".join(finding["notes"])


def test_modules_of_a_namespace_folder_inside_a_package_resolve_by_their_dotted_names(tmp_path):
    # pkg/srt has no __init__.py: a namespace portion of pkg (PEP 420), imported as pkg.srt.ops
    (tmp_path / "pkg" / "srt").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "srt" / "ops.py").write_text(KERNEL)
    (tmp_path / "pkg" / "srt" / "layer.py").write_text(LAUNCH.replace("from a import", "from pkg.srt.ops import"))
    (finding,) = _tl006(tmp_path, ".", cache=("--no-cache",))
    assert finding["filename"] == "pkg/srt/ops.py" and finding["severity"] == "warning"
    assert "pkg/srt/layer.py:9" in " ".join(finding["notes"])


def test_a_namespace_folder_never_reaches_past_the_project_root(tmp_path):
    from tritonlint.analysis.project import module_name

    (tmp_path / "outer" / "proj" / "tools").mkdir(parents=True)
    (tmp_path / "outer" / "__init__.py").write_text("")  # a stray package file above the project
    (tmp_path / "outer" / "proj" / "pyproject.toml").write_text("")
    assert module_name(tmp_path / "outer" / "proj" / "tools" / "run.py") == "run"
    (tmp_path / "outer" / "proj" / "pyproject.toml").unlink()
    assert module_name(tmp_path / "outer" / "proj" / "tools" / "run.py") == "outer.proj.tools.run"


@pytest.mark.parametrize("imported", ["from ops import", "from .ops import"])
def test_same_named_modules_of_two_folders_are_judged_from_their_own_folder_launches(tmp_path, imported):
    # a/ and b/ both hold ops.py and layer.py (no __init__.py): each layer launches the kernel beside it, a/ with
    # the row length K from the input, b/ with a constant; the two folders are named apart (a.ops, b.ops)
    for folder, launch in (("a", LAUNCH), ("b", LAUNCH.replace("(x, out, n, K)", "(x, out, n, 64)"))):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "ops.py").write_text(KERNEL)
        (tmp_path / folder / "layer.py").write_text(launch.replace("from a import", imported))
    for cache in (("--no-cache",), (), ()):
        (finding,) = _tl006(tmp_path, ".", cache=cache)
        assert finding["filename"] == "a/ops.py" and finding["severity"] == "warning"
        assert "a/layer.py:9" in " ".join(finding["notes"])
    (tmp_path / "b" / "ops.py").rename(tmp_path / "b" / "kernels.py")  # no name shared: cached results follow
    (tmp_path / "b" / "layer.py").unlink()
    found = {f["filename"]: f["severity"] for f in _tl006(tmp_path, ".")}
    assert found == {"a/ops.py": "warning", "b/kernels.py": "info"}


def test_separating_prefixes_name_each_root_below_the_folder_they_share():
    from tritonlint.analysis.project import separating_prefixes

    named = [("/p/a/kernels.py", "kernels"), ("/p/b/kernels.py", "kernels"), ("/p/b/run.py", "run"),
             ("/p/x/y/kernels.py", "kernels"), ("/p/kernels.py", "kernels"), ("/p/pkg/ops.py", "pkg.ops"),
             ("/p/v1.2/kernels.py", "kernels")]
    assert separating_prefixes(named) == {"/p/a": "a", "/p/b": "b", "/p/x/y": "x.y"}  # /p keeps its names
    assert separating_prefixes([*named, ("/q/c/run.py", "run")]) == {  # one shared folder for all: `/`
        "/p": "p", "/p/a": "p.a", "/p/b": "p.b", "/p/x/y": "p.x.y", "/q/c": "q.c"}
    assert separating_prefixes([("/p/a/kernels.py", "kernels"), ("/p/pkg/ops.py", "pkg.ops")]) == {}


def _namespace_repo(tmp_path):
    # mpa/ has no __init__.py anywhere: run from the project root, its files import as mpa.ops (PEP 420)
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "mpa").mkdir()
    (tmp_path / "mpa" / "ops.py").write_text(KERNEL)
    (tmp_path / "mpa" / "layer.py").write_text(LAUNCH.replace("from a import", "from mpa.ops import"))
    return tmp_path


def test_modules_of_a_top_level_namespace_folder_resolve_by_their_dotted_names(tmp_path):
    repo = _namespace_repo(tmp_path)
    for paths in ((".",), ("mpa/ops.py",)):  # the whole project, and the kernel's module with the rest as context
        (finding,) = _tl006(repo, *paths, cache=("--no-cache",))
        assert finding["filename"] == "mpa/ops.py" and finding["severity"] == "warning"
        assert "mpa/layer.py:9" in " ".join(finding["notes"])
    # imported as the script next to it would import it (its folder on the path): still resolved
    (repo / "mpa" / "layer.py").write_text(LAUNCH.replace("from a import", "from ops import"))
    assert [f["severity"] for f in _tl006(repo, ".", cache=("--no-cache",))] == ["warning"]


def test_a_cached_launch_follows_its_namespace_import_when_the_folders_change(tmp_path):
    repo = _namespace_repo(tmp_path)
    assert [f["severity"] for f in _tl006(repo, ".")] == ["warning"]
    (repo / "other").mkdir()
    (repo / "mpa" / "ops.py").rename(repo / "other" / "ops.py")  # `mpa.ops` no longer names it
    assert [f["severity"] for f in _tl006(repo, ".")] == ["info"]
    (repo / "other" / "ops.py").rename(repo / "mpa" / "ops.py")
    assert [f["severity"] for f in _tl006(repo, ".")] == ["warning"]


def test_namespace_names_stop_at_the_project_root_and_never_shadow_a_package(tmp_path):
    from tritonlint.analysis.project import Namespaces, module_name

    root = tmp_path / "proj"
    for folder in ("mpa/sub", "vendor/mpa"):
        (root / folder).mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    (root / "vendor" / "mpa" / "__init__.py").write_text("")  # a regular package named mpa
    paths = [root / "mpa" / "sub" / "ops.py", root / "mpa" / "gemm.py", root / "vendor" / "mpa" / "gemm.py"]
    namespaces = Namespaces({module_name(p): str(p) for p in paths})
    assert namespaces.module_of("mpa.sub.ops.k") == "ops.k" and namespaces.module_of("sub.ops") == "ops"
    assert namespaces.module_of("vendor.mpa.gemm.k") == "mpa.gemm.k"  # vendor/ is a namespace package above it
    assert namespaces.module_of("mpa.gemm.k") is None  # the package's own module
    assert namespaces.module_of("proj.mpa.sub.ops") is None  # never past the project's root
    assert namespaces.module_of("other.sub.ops") is None and namespaces.module_of("torch.nn") is None


def _model(code: str, module: str) -> ModuleModel:
    code = textwrap.dedent(code)
    return ModuleModel(ast.parse(code), module, f"{module}.py", text=code)


def test_the_index_resolves_re_exports_and_skips_the_kernels_own_module():
    modules = frozenset({"pkg", "pkg.ops", "user"})
    links = {name: module_links(model, modules) for name, model in (
        ("pkg.ops", _model(KERNEL + "\ndef run(x):\n    rowsum_kernel[(1,)](x, x, 1, 1)\n", "pkg.ops")),
        ("pkg", _model(PACKAGE_INIT, "pkg")),
        ("user", _model(LAUNCH.replace("from a import", "from pkg import"), "user")))}
    assert resolve("pkg.rowsum_kernel", links, modules) == "pkg.ops.rowsum_kernel"  # type: ignore[arg-type]
    assert build_index(links, modules) == {"pkg.ops.rowsum_kernel": {"user": frozenset({"pkg.rowsum_kernel"})}}  # type: ignore[arg-type]


CHOICES = """
    from a import fast_kernel, slow_kernel
    TABLE = {"fast": fast_kernel, "slow": slow_kernel}

    def by_test(x, fast):
        kernel = fast_kernel if fast else slow_kernel
        kernel[(1,)](x)

    def by_table(x, mode):
        kernel = TABLE[mode]
        kernel[(1,)](x)

    def by_tuple(x, i):
        kernel = (fast_kernel, slow_kernel)[i]
        kernel[(1,)](x)

    def by_parameter(x, kernel):
        kernel[(1,)](x)
"""


def test_a_kernel_chosen_by_a_test_a_dict_or_a_tuple_launches_each_candidate_and_a_parameter_none():
    model = _model(CHOICES, "user")
    both = ["a.fast_kernel", "a.slow_kernel"]
    assert [launch_candidates(model, launch) for launch in model.launches] == [both, both, both, None]


CHOSEN_IN_ANOTHER_MODULE = textwrap.dedent("""
    import triton
    from a import rowsum_kernel, other_kernel

    def rowsum(x, out, n, fast):
        kernel = rowsum_kernel if fast else other_kernel
        kernel[lambda META: (triton.cdiv(n, META["BLOCK"]),)](x, out, n, 64)
""")


def test_a_kernel_chosen_by_a_test_in_another_module_is_judged_from_that_launch(tmp_path):
    kernel = KERNEL + "\nother_kernel = rowsum_kernel\n"
    (tmp_path / "a.py").write_text(kernel)
    (tmp_path / "b.py").write_text(CHOSEN_IN_ANOTHER_MODULE)
    assert _tl006(tmp_path, ".", cache=("--no-cache",)) == []  # K is 64 at the only launch: no omission
    (tmp_path / "b.py").write_text(CHOSEN_IN_ANOTHER_MODULE.replace("(x, out, n, 64)", "(x, out, n, x.shape[1])"))
    (finding,) = _tl006(tmp_path, ".", cache=("--no-cache",))
    assert finding["severity"] == "warning" and "b.py:7" in " ".join(finding["notes"])


def test_a_kernel_picked_from_a_local_dict_is_judged_from_that_launch(rules):
    code = KERNEL + textwrap.dedent("""
        KERNELS = {"rows": rowsum_kernel}

        def launch(x, out, n, mode):
            kernel = KERNELS[mode]
            kernel[(1,)](x, out, n, 64)
    """)
    assert lint_code(code, rules, select=["TL006"]).diagnostics == []  # K=64 at the one launch
    (finding,) = lint_code(code.replace("(x, out, n, 64)", "(x, out, n, x.shape[1])"), rules, select=["TL006"]).diagnostics
    assert finding.severity == "warning"


OTHER_FORMS = KERNEL + textwrap.dedent("""
    import functools
    from functools import partial

    def by_run(x, out, n):
        rowsum_kernel.run(x, out, n, 64, grid=(1,), warmup=False)

    def by_partial(x, out, n):
        launch = functools.partial(rowsum_kernel[(1,)], x, out)
        launch(n, K=64)

    def by_partial_of_run(x, out, n):
        launch = partial(rowsum_kernel.run, grid=(1,), warmup=False)
        launch(x, out, n, K=64)
""")


def test_run_and_partial_launches_bind_the_kernel_parameters(rules):
    model = _model(OTHER_FORMS, "a")
    (kernel,) = [f for f in model.functions if f.name == "rowsum_kernel"]
    from tritonlint.analysis.launches import bind_launch

    bound = [bind_launch(model, launch, kernel).values for launch in model.launches]
    assert [{name: ast.unparse(value) for name, value in values.items()} for values in bound] == [
        {"x_ptr": "x", "out_ptr": "out", "n": "n", "K": "64"}] * 3
    assert all(launch.target == "a.rowsum_kernel" for launch in model.launches)
    # K is 64 at every launch: nothing varies that the key leaves out
    assert lint_code(OTHER_FORMS, rules, select=["TL006"]).diagnostics == []
    (finding,) = lint_code(OTHER_FORMS.replace("K=64)", "K=x.shape[1])"), rules, select=["TL006"]).diagnostics
    assert finding.severity == "warning" and "leaves out K" in finding.message


def test_a_partial_rebound_or_a_run_without_a_grid_is_no_launch():
    model = _model(KERNEL + textwrap.dedent("""
        import functools

        def rebound(x, out, n, other):
            launch = functools.partial(rowsum_kernel[(1,)], x)
            launch = other
            launch(out, n, 64)

        def not_a_launch(job):
            job.run(3)
    """), "a")
    assert model.launches == []


WRAPPED_BY_A_HELPER = KERNEL + textwrap.dedent("""
    def launch(kernel, grid, *args, **kwargs):
        kernel[grid](*args, **kwargs)

    def rowsum(x, out, n):
        launch(rowsum_kernel, (1,), x, out, n, K=64)
""")


def test_a_wrapper_that_receives_the_kernel_launches_it_with_its_spreads(rules):
    model = _model(WRAPPED_BY_A_HELPER, "a")
    wrapped = [launch for launch in model.launches if launch.target == "a.rowsum_kernel"]
    assert [[a.text for a in launch.args] for launch in wrapped] == [["x", "out", "n", "64"]]
    assert lint_code(WRAPPED_BY_A_HELPER, rules, select=["TL006"]).diagnostics == []
    (finding,) = lint_code(WRAPPED_BY_A_HELPER.replace("K=64)", "K=x.shape[1])"), rules,
                           select=["TL006"]).diagnostics
    assert finding.severity == "warning"


HANDED_TO_A_HELPER = KERNEL + textwrap.dedent("""
    def run(kernel, x, width):
        out = x.new_empty(x.shape[0])
        kernel[(1,)](x, out, x.shape[0], width)
        return out

    def rowsum(x):
        return run(rowsum_kernel, x, 64)
""")


def test_a_helper_handed_the_kernel_launches_it_with_its_own_arguments(rules):
    model = _model(HANDED_TO_A_HELPER, "a")
    (launch,) = model.launches
    assert launch.target is None and launch_candidates(model, launch) == ["a.rowsum_kernel"]
    assert kernel_parameter(model, launch) == (0, "kernel")
    assert lint_code(HANDED_TO_A_HELPER, rules, select=["TL006"]).diagnostics == []  # K is 64 at the one call
    varying = HANDED_TO_A_HELPER.replace("x.shape[0], width)", "x.shape[0], x.shape[1])")
    (finding,) = lint_code(varying, rules, select=["TL006"]).diagnostics
    assert finding.severity == "warning" and "leaves out K" in finding.message


def test_a_helper_that_passes_on_its_callers_arguments_or_rebinds_the_kernel_launches_no_parameter():
    model = _model(KERNEL + textwrap.dedent("""
        def forward(kernel, grid, **kwargs):
            kernel[grid](BLOCK=64, **kwargs)

        def rebound(kernel, x, fast):
            if fast:
                kernel = kernel.fn
            kernel[(1,)](x)

        def rowsum(x):
            forward(rowsum_kernel, (1,), x_ptr=x)
            rebound(rowsum_kernel, x, True)
    """), "a")
    assert [kernel_parameter(model, launch) for launch in model.launches] == [None, None]


HELPER = textwrap.dedent("""
    import torch

    def run(kernel, x):
        out = torch.empty(x.shape[0], device=x.device)
        kernel[(1,)](x, out, x.shape[0], 64)
        return out
""")


def test_a_kernel_handed_to_a_helper_of_another_module_is_judged_from_its_launch(tmp_path):
    repo = _repo(tmp_path, launch=HELPER)
    (repo / "a.py").write_text(KERNEL + "\nfrom b import run\n\ndef rowsum(x):\n    return run(rowsum_kernel, x)\n")
    assert _tl006(repo, ".", cache=("--no-cache",)) == []  # K is 64 at the helper's launch
    (repo / "b.py").write_text(HELPER.replace("x.shape[0], 64)", "x.shape[0], x.shape[1])"))
    (finding,) = _tl006(repo, ".", cache=("--no-cache",))
    assert finding["filename"] == "a.py" and "Judged with the launch at b.py:6." in finding["notes"]


def test_editing_only_the_helper_module_updates_the_cached_result_of_the_kernel_it_is_handed(tmp_path):
    repo = _repo(tmp_path, launch=HELPER)
    (repo / "a.py").write_text(KERNEL + "\nfrom b import run\n\ndef rowsum(x):\n    return run(rowsum_kernel, x)\n")
    assert _tl006(repo, ".") == []  # cached: K is 64 at the helper's launch
    (repo / "b.py").write_text(HELPER.replace("x.shape[0], 64)", "x.shape[0], x.shape[1])"))
    assert [f["filename"] for f in _tl006(repo, ".")] == ["a.py"]  # a.py unchanged, its result judged again
    (repo / "b.py").write_text(HELPER)
    assert _tl006(repo, ".") == []


def test_a_partial_run_given_only_the_launching_module_reports_the_kernel_it_judges(tmp_path):
    repo = _repo(tmp_path)  # pre-commit with only b.py staged: a.py's key is judged from b.py's launch
    assert [(f["filename"], f["severity"]) for f in _tl006(repo, "b.py", cache=("--no-cache",))] == [("a.py", "warning")]


def test_same_value_at_every_launch_follows_local_names():
    from tritonlint.analysis.launches import same_at_every_launch

    source = textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, dim: tl.constexpr, BLOCK: tl.constexpr):
            pass

        def run(x):
            rows, dim = x.shape
            BLOCK = dim
            k[(rows,)](x, dim, BLOCK)
        """)
    model = _model(source, "a")
    (kernel,) = [f for f in model.functions if f.name == "k"]
    assert same_at_every_launch(model, kernel, "dim", "BLOCK")
    model = _model(source + "    k[(rows,)](x, dim, triton.next_power_of_2(dim))\n", "a")
    (kernel,) = [f for f in model.functions if f.name == "k"]
    assert not same_at_every_launch(model, kernel, "dim", "BLOCK")
    model = _model(source.replace("    k[(rows,)](x, dim, BLOCK)\n", "    pass\n"), "a")
    (kernel,) = [f for f in model.functions if f.name == "k"]
    assert not same_at_every_launch(model, kernel, "dim", "BLOCK")  # no launch in view


def test_same_value_at_every_launch_reads_a_product_of_parameters():
    from tritonlint.analysis.launches import same_at_every_launch

    source = textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, N: tl.constexpr, H: tl.constexpr, BLOCK: tl.constexpr):
            pass

        def run(x):
            N, H = x.shape
            BLOCK = N * H
            k[(1,)](x, N, H, BLOCK=BLOCK)
        """)
    model = _model(source, "a")
    (kernel,) = [f for f in model.functions if f.name == "k"]
    assert same_at_every_launch(model, kernel, "BLOCK", "N * H")
    assert not same_at_every_launch(model, kernel, "BLOCK", "N + H")
    assert not same_at_every_launch(model, kernel, "BLOCK", "N * W")  # W is no parameter


def test_whole_blocks_at_every_launch_needs_a_factor_the_block_divides():
    source = textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr):
            pass

        def run(x):
            n = x.shape[0] * 256
            BLOCK = 128
            k[(triton.cdiv(n, BLOCK),)](x, n, BLOCK)
        """)

    def whole(text: str) -> bool:
        model = _model(text, "a")
        (kernel,) = [f for f in model.functions if f.name == "k"]
        return whole_blocks_at_every_launch(model, kernel, "BLOCK", "n")

    assert whole(source)
    assert not whole(source.replace("* 256", "* 200"))
    assert not whole(source.replace("BLOCK = 128", "BLOCK = triton.next_power_of_2(n)"))  # not a known integer
    assert not whole(source + "    k[(1,)](x, x.numel(), BLOCK)\n")  # one launch of any count is enough
    assert not whole(source.replace("    k[(triton.cdiv(n, BLOCK),)](x, n, BLOCK)\n", "    pass\n"))  # no launch
    assert whole(source.replace("* 256", "").replace("BLOCK = 128", "BLOCK = 1"))  # blocks of one lane

def test_grid_axis_at_every_launch_floored_needs_the_count_over_the_block_on_the_axis():
    source = textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr):
            pass

        def run(x):
            n = x.numel()
            k[(x.numel() // 64, 1)](x, n, BLOCK=64)
        """)

    def floored(text: str, axis: int = 0) -> bool:
        model = _model(text, "a")
        (kernel,) = [f for f in model.functions if f.name == "k"]
        return grid_axis_at_every_launch(model, kernel, axis, "n", "BLOCK")

    assert floored(source)
    assert not floored(source, axis=1)
    assert not floored(source.replace("// 64", "// 32"))  # programs of 64 lanes over blocks of 32: past n
    assert not floored(source.replace("x.numel() // 64", "triton.cdiv(n, 64)"))
    assert floored(source.replace("(x.numel() // 64, 1)", "lambda META: (n // META['BLOCK'],)"))
    assert not floored(source + "    k[(1,)](x, x.numel(), BLOCK=64)\n")  # every launch


def test_grid_axis_at_every_launch_exact_needs_the_count_itself_on_the_axis():
    source = textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, b, h):
            pass

        def run(x):
            b, h, n, _ = x.shape
            k[lambda META: (n, b, h)](x, b, h)
        """)

    def extent(text: str, axis: int, count: str) -> bool:
        model = _model(text, "a")
        (kernel,) = [f for f in model.functions if f.name == "k"]
        return grid_axis_at_every_launch(model, kernel, axis, count)

    assert extent(source, 1, "b") and extent(source, 2, "h")
    assert not extent(source, 2, "b") and not extent(source, 0, "b")
    assert not extent(source.replace("(n, b, h)", "(n, b * 2, h)"), 1, "b")


STRIDE_SPREAD = textwrap.dedent("""
    import triton
    import triton.language as tl

    @triton.jit
    def scale(x_ptr, s0, s1, s2, n, BLOCK: tl.constexpr):
        pass

    @triton.autotune(configs=[triton.Config({"BLOCK": 64})], key=["n"])
    @triton.jit
    def tuned(x_ptr, s0, s1, n, BLOCK: tl.constexpr):
        pass

    def run(x, n):
        scale[(1,)](x, *x.stride(), n, BLOCK=64)
        tuned[(1,)](x, *x.stride(), n)
""")


def test_a_stride_spread_takes_the_parameters_the_other_arguments_leave():
    from tritonlint.analysis.launches import bind_launch

    model = _model(STRIDE_SPREAD, "a")
    kernels = {f.name: f for f in model.functions}
    first, second = model.launches
    values = bind_launch(model, first, kernels["scale"]).values
    assert {name: ast.unparse(value) for name, value in values.items()} == {
        "x_ptr": "x", "s0": "x.stride(0)", "s1": "x.stride(1)", "s2": "x.stride(2)", "n": "n", "BLOCK": "64"}
    # BLOCK comes from a config: the spread's length is not known, nothing after it is bound
    assert set(bind_launch(model, second, kernels["tuned"]).values) == {"x_ptr"}


def test_passed_at_every_launch_reads_through_local_names_and_needs_one_value():
    source = textwrap.dedent("""
        import torch
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, FILL: tl.constexpr):
            pass

        def run(x):
            fill = -torch.finfo(torch.float32).max
            k[(1,)](x, FILL=fill)
        """)

    def passed(text: str) -> str | None:
        model = _model(text, "a")
        (kernel,) = [f for f in model.functions if f.name == "k"]
        value = passed_at_every_launch(model, kernel, "FILL")
        return None if value is None else ast.unparse(value)

    assert passed(source) == "-torch.finfo(torch.float32).max"
    assert passed(source + "    k[(2,)](x, -torch.finfo(torch.float32).max)\n") == "-torch.finfo(torch.float32).max"
    assert passed(source + "    k[(2,)](x, 0.0)\n") is None
    assert passed(source.replace("k[(1,)](x, FILL=fill)", "pass")) is None  # no launch


WRAPPED = KERNEL + textwrap.dedent("""

    def rowsum(x, out, k_size=16):
        n = x.shape[0]
        K = k_size
        rowsum_kernel[lambda META: (triton.cdiv(n, META["BLOCK"]),)](x, out, n, K)
""")
CALLER = textwrap.dedent("""
    import triton
    from a import rowsum

    def run(x, out):
        width = 32
        rowsum(x, out, k_size=width)
""")


@pytest.mark.parametrize("cache", [("--no-cache",), ()])
def test_a_constant_every_caller_in_another_module_hands_the_launching_wrapper_is_no_omission(tmp_path, cache):
    (tmp_path / "a.py").write_text(WRAPPED)
    (tmp_path / "c.py").write_text(CALLER)
    assert _tl006(tmp_path, ".", cache=cache) == []
    (tmp_path / "c.py").write_text(CALLER.replace("k_size=width", "k_size=x.shape[1]"))  # K now varies
    assert [f["severity"] for f in _tl006(tmp_path, ".", cache=cache)] == ["warning"]
    (tmp_path / "c.py").write_text(CALLER.replace("k_size=width", "*x.shape"))  # what is bound is unknown
    assert [f["severity"] for f in _tl006(tmp_path, ".", cache=cache)] == ["warning"]
