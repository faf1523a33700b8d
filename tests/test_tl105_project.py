"""TL105 looks for triton.set_allocator in the whole project, not only in the linted files: the other modules
under the project root count (virtual environments and excluded folders do not)."""
from __future__ import annotations

import json

from tests.helpers import run_cli

KERNEL = '''import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    y_desc = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    off_m = tl.program_id(0) * BLOCK_M
    y_desc.store([off_m, 0], x_desc.load([off_m, 0]))
'''
SETUP = "import triton\n\n\ndef init(alloc):\n    triton.set_allocator(alloc)\n"


def _rows(project, *paths):
    result = run_cli(*paths, "--select", "TL105", "--output-format", "json", "--no-cache", cwd=project)
    assert result.returncode in (0, 1), result.stderr
    return [f["location"]["row"] for f in json.loads(result.stdout)]


def test_an_allocator_set_in_another_module_counts(tmp_path):
    (tmp_path / "tritonlint.toml").write_text('target = "sm_90"\n')
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kernels.py").write_text(KERNEL)
    assert _rows(tmp_path, "pkg/kernels.py") == [7]
    (package / "runtime.py").write_text(SETUP)  # not linted, but part of the project
    assert _rows(tmp_path, "pkg/kernels.py") == []


def test_other_peoples_code_and_comments_do_not_count(tmp_path):
    (tmp_path / "tritonlint.toml").write_text('target = "sm_90"\nextend-exclude = ["scratch"]\n')
    (tmp_path / "kernels.py").write_text(KERNEL)
    for folder in (".venv/lib/site-packages/triton", "scratch"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "runtime.py").write_text(SETUP)
    (tmp_path / "notes.py").write_text("# call triton.set_allocator(alloc) first\n")
    assert _rows(tmp_path, "kernels.py") == [7]


def test_without_configuration_the_git_work_tree_is_the_project(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "kernels.py").write_text(KERNEL)
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "setup_triton.py").write_text(SETUP)
    assert _rows(tmp_path / "src", "kernels.py") == []


def _cached_rows(project, *paths):
    result = run_cli(*paths, "--select", "TL105", "--output-format", "json", cwd=project)
    assert result.returncode in (0, 1), result.stderr
    return [f["location"]["row"] for f in json.loads(result.stdout)]


def test_the_cache_follows_an_allocator_set_in_another_module(tmp_path):
    """A cached TL105 result depends on the other modules: setting the allocator in one clears the finding on
    the next run, removing it again brings the finding back, with kernels.py unchanged all along."""
    (tmp_path / "tritonlint.toml").write_text('target = "sm_90"\n')
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kernels.py").write_text(KERNEL)
    (package / "runtime.py").write_text("import triton\n\n\ndef init(alloc):\n    pass\n")
    for paths in (("pkg/kernels.py",), (".",)):  # the other module read as context, and linted too
        assert _cached_rows(tmp_path, *paths) == [7]
        assert _cached_rows(tmp_path, *paths) == [7]  # served from the cache
        (package / "runtime.py").write_text(SETUP)
        assert _cached_rows(tmp_path, *paths) == []
        assert _cached_rows(tmp_path, *paths) == []
        (package / "runtime.py").write_text("import triton\n\n\ndef init(alloc):\n    pass\n")
        assert _cached_rows(tmp_path, *paths) == [7]
    (package / "setup_alloc.py").write_text(SETUP)  # a new module
    assert _cached_rows(tmp_path, "pkg/kernels.py") == []
    (package / "setup_alloc.py").unlink()  # and the module gone again
    assert _cached_rows(tmp_path, "pkg/kernels.py") == [7]


def test_an_imported_allocator_helper_counts_where_one_defined_in_view_does_not(tmp_path):
    (tmp_path / "tritonlint.toml").write_text('target = "sm_90"\n')
    launch = "\n\ndef copy(x, y):\n    HELPER\n    copy_kernel[(1,)](x, y, 64, 64, BLOCK_M=64, BLOCK_N=64)\n"
    (tmp_path / "kernels.py").write_text(
        "from outside.runtime import ensure_tma_allocator\n" + KERNEL + launch.replace("HELPER", "ensure_tma_allocator()"))
    assert _rows(tmp_path, "kernels.py") == []  # defined where the run cannot see: it is there to set one
    (tmp_path / "kernels.py").write_text(
        KERNEL + "\n\ndef make_allocator():\n    return None\n" + launch.replace("HELPER", "make_allocator()"))
    assert _rows(tmp_path, "kernels.py") == [7]  # defined here, and it sets nothing
    (tmp_path / "kernels.py").write_text(KERNEL + "from torch.cuda.memory import caching_allocator_alloc\n"
                                         + launch.replace("HELPER", "caching_allocator_alloc(64)"))
    assert _rows(tmp_path, "kernels.py") == [7]  # torch's allocator, not Triton's


def test_a_module_of_its_own_package_out_of_view_may_set_it(tmp_path):
    """`from ..utils import use_tma` (a decorator that sets the allocator in the real project) with no
    utils.py in the run: the project is only partly in view, so no claim about all of it. Once the module is
    there and sets nothing, the finding is back, also from the cache."""
    (tmp_path / "tritonlint.toml").write_text('target = "sm_90"\n')
    ops = tmp_path / "pkg" / "ops"
    ops.mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (ops / "__init__.py").write_text("")
    launch = "\n\n@use_tma\ndef copy(x, y):\n    copy_kernel[(1,)](x, y, 64, 64, BLOCK_M=64, BLOCK_N=64)\n"
    (ops / "kernels.py").write_text("from ..utils import use_tma\n" + KERNEL + launch)
    assert _rows(tmp_path, "pkg/ops/kernels.py") == []
    (tmp_path / "pkg" / "utils.py").write_text("def use_tma(f):\n    return f\n")
    assert _rows(tmp_path, "pkg/ops/kernels.py") == [8]
    rows = run_cli("pkg/ops/kernels.py", "--select", "TL105", "--output-format", "json", cwd=tmp_path)
    (tmp_path / "pkg" / "utils.py").unlink()
    cached = run_cli("pkg/ops/kernels.py", "--select", "TL105", "--output-format", "json", cwd=tmp_path)
    assert [f["location"]["row"] for f in json.loads(rows.stdout)] == [8]
    assert json.loads(cached.stdout) == []


def test_a_relative_import_is_looked_for_beside_the_file(tmp_path):
    """Folders without `__init__.py` (the run names the module `kernels`, no package): `from ..utils import
    use_tma` is still found at pkg/utils.py, so the project is in view and the finding stands."""
    (tmp_path / "tritonlint.toml").write_text('target = "sm_90"\n')
    ops = tmp_path / "pkg" / "ops"
    ops.mkdir(parents=True)
    launch = "\n\n@use_tma\ndef copy(x, y):\n    copy_kernel[(1,)](x, y, 64, 64, BLOCK_M=64, BLOCK_N=64)\n"
    (ops / "kernels.py").write_text("from ..utils import use_tma\n" + KERNEL + launch)
    (tmp_path / "pkg" / "utils.py").write_text("def use_tma(f):\n    return f\n")
    assert _rows(tmp_path, "pkg/ops/kernels.py") == [8]
    (tmp_path / "pkg" / "utils.py").unlink()
    assert _rows(tmp_path, "pkg/ops/kernels.py") == []


def test_an_absolute_import_of_a_folder_above_without_init_is_its_own_package(tmp_path):
    """`from pkg.utils import use_tma` in pkg/ops/kernels.py with no `__init__.py` on the way (a namespace
    package, PEP 420): its own package, looked for under the folder it names; out of view, no claim."""
    (tmp_path / "tritonlint.toml").write_text('target = "sm_90"\n')
    ops = tmp_path / "pkg" / "ops"
    ops.mkdir(parents=True)
    launch = "\n\n@use_tma\ndef copy(x, y):\n    copy_kernel[(1,)](x, y, 64, 64, BLOCK_M=64, BLOCK_N=64)\n"
    (ops / "kernels.py").write_text("from pkg.utils import use_tma\n" + KERNEL + launch)
    assert _rows(tmp_path, "pkg/ops/kernels.py") == []
    (tmp_path / "pkg" / "utils.py").write_text("def use_tma(f):\n    return f\n")
    assert _rows(tmp_path, "pkg/ops/kernels.py") == [8]
    (ops / "kernels.py").write_text("from numpy.linalg import norm\n" + KERNEL + launch)  # not a folder above
    assert _rows(tmp_path, "pkg/ops/kernels.py") == [8]
