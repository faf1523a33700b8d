"""TL101 and TL106 across the modules of a project: an autotuned kernel whose atomics or in-place stores
happen in a jit helper of another module, and a host TensorDescriptor built in another module than the
autotuned kernel it is passed to. What cannot be resolved stays silent."""
from __future__ import annotations

import json
import textwrap

from tests.helpers import lint_code, run_cli

AUTOTUNE = '''@triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 512})], key=["n"])
@triton.jit
'''
HELPERS = '''import triton
import triton.language as tl


@triton.jit
def accumulate(out_ptr, offs, value, mask):
    tl.atomic_add(out_ptr + offs, value, mask=mask)


@triton.jit
def scale_in_place(x_ptr, offs, s, mask):
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, x * s, mask=mask)


@triton.jit
def store_only(y_ptr, offs, value, mask):
    tl.store(y_ptr + offs, value, mask=mask)


def not_a_kernel(x_ptr, offs, s, mask):
    return x_ptr
'''


def _kernel(imports: str, call: str, name: str = "kernel") -> str:
    return (f"import triton\nimport triton.language as tl\n{imports}\n\n\n{AUTOTUNE}"
            f"def {name}(x_ptr, out_ptr, n, s, BLOCK: tl.constexpr):\n"
            "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
            "    mask = offs < n\n"
            "    x = tl.load(x_ptr + offs, mask=mask)\n"
            f"    {call}\n")


def _project(tmp_path, files: dict[str, str]):
    (tmp_path / "tritonlint.toml").write_text('target = "sm_90"\n')
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder in {p.parent for p in tmp_path.rglob("*.py")}:
        if folder != tmp_path and not (folder / "__init__.py").exists():
            (folder / "__init__.py").write_text("")


def _findings(tmp_path, code: str, *paths: str, cache: bool = False):
    result = run_cli(*(paths or (".",)), "--select", code, "--output-format", "json",
                     *(() if cache else ("--no-cache",)), cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    # the headline and its notes: what the finding says, wherever the details sit
    return [(f["filename"], f["location"]["row"], " ".join([f["message"], *f["notes"]])) for f in json.loads(result.stdout)]


def test_tl101_follows_a_helper_imported_from_another_module(tmp_path):
    _project(tmp_path, {
        "pkg/helpers.py": HELPERS,
        "pkg/split_k.py": _kernel("from pkg.helpers import accumulate", "accumulate(out_ptr, offs, x, mask)"),
        "pkg/scale.py": _kernel("from .helpers import scale_in_place", "scale_in_place(x_ptr, offs, s, mask)"),
        "pkg/dotted.py": _kernel("from pkg import helpers", "helpers.scale_in_place(out_ptr, offs, s, mask)"),
        "pkg/module_alias.py": _kernel("import pkg.helpers as h", "h.accumulate(out_ptr, offs, x, mask)"),
    })
    found = {(file, row): message for file, row, message in _findings(tmp_path, "TL101")}
    assert set(found) == {("pkg/split_k.py", 6), ("pkg/scale.py", 6), ("pkg/dotted.py", 6),
                          ("pkg/module_alias.py", 6)}
    assert "atomically adds into `out_ptr`" in found["pkg/split_k.py", 6] and "in `accumulate`" in found["pkg/split_k.py", 6]
    assert "updates `x_ptr` in place" in found["pkg/scale.py", 6] and "restore_value" in found["pkg/scale.py", 6]
    assert "updates `out_ptr` in place" in found["pkg/dotted.py", 6]
    # the kernel's file alone: the helper's module is read as context
    assert [(f, r) for f, r, _ in _findings(tmp_path, "TL101", "pkg/scale.py")] == [("pkg/scale.py", 6)]


def test_tl101_stays_silent_where_the_helper_does_not_resolve(tmp_path):
    _project(tmp_path, {
        "pkg/helpers.py": HELPERS,
        # listed already; a store-only helper; a plain function; a module outside the project; a missing name
        "pkg/listed.py": _kernel("from pkg.helpers import accumulate", "accumulate(out_ptr, offs, x, mask)").replace(
            'key=["n"])', 'key=["n"], reset_to_zero=["out_ptr"])'),
        "pkg/store_only.py": _kernel("from pkg.helpers import store_only", "store_only(out_ptr, offs, x, mask)"),
        "pkg/plain.py": _kernel("from pkg.helpers import not_a_kernel", "not_a_kernel(x_ptr, offs, s, mask)"),
        "pkg/outside.py": _kernel("from somewhere_else import accumulate", "accumulate(out_ptr, offs, x, mask)"),
        "pkg/missing.py": _kernel("from pkg.helpers import nothing_here", "nothing_here(out_ptr, offs, x, mask)"),
    })
    assert _findings(tmp_path, "TL101") == []


def test_tl101_cache_follows_the_helpers_module(tmp_path):
    _project(tmp_path, {
        "pkg/helpers.py": HELPERS.replace("tl.atomic_add(out_ptr + offs, value, mask=mask)",
                                          "tl.store(out_ptr + offs, value, mask=mask)"),
        "pkg/split_k.py": _kernel("from pkg.helpers import accumulate", "accumulate(out_ptr, offs, x, mask)"),
    })
    assert _findings(tmp_path, "TL101", cache=True) == []
    (tmp_path / "pkg/helpers.py").write_text(HELPERS)
    assert [(f, r) for f, r, _ in _findings(tmp_path, "TL101", cache=True)] == [("pkg/split_k.py", 6)]


DESCRIPTOR_KERNEL = '''import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}), triton.Config({"BLOCK_M": 128, "BLOCK_N": 128})],
    key=["M", "N"],
)
@triton.jit
def copy_kernel(a_desc, c_desc, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    c_desc.store([off_m, off_n], a_desc.load([off_m, off_n]))
'''
DESCRIPTOR_HOST = '''import torch
import triton
from triton.tools.tensor_descriptor import TensorDescriptor

{imports}


def copy(a):
    M, N = a.shape
    c = torch.empty_like(a)
    a_desc = TensorDescriptor.from_tensor(a, [64, 64])
    c_desc = TensorDescriptor(c, c.shape, c.stride(), [64, 64])
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]))
    {launch}[grid](a_desc, c_desc, M, N)
    return c
'''


def test_tl106_follows_the_launch_into_the_kernels_module(tmp_path):
    _project(tmp_path, {
        "pkg/kernels.py": DESCRIPTOR_KERNEL,
        "pkg/ops.py": DESCRIPTOR_HOST.format(imports="from pkg.kernels import copy_kernel", launch="copy_kernel"),
        "pkg/ops_module.py": DESCRIPTOR_HOST.format(imports="from pkg import kernels", launch="kernels.copy_kernel"),
        "pkg/hooked.py": DESCRIPTOR_KERNEL.replace('{"BLOCK_M": 64, "BLOCK_N": 64})',
                                                   '{"BLOCK_M": 64, "BLOCK_N": 64}, pre_hook=set_blocks)'),
        "pkg/ops_hooked.py": DESCRIPTOR_HOST.format(imports="from pkg.hooked import copy_kernel", launch="copy_kernel"),
        "pkg/ops_unknown.py": DESCRIPTOR_HOST.format(imports="from elsewhere import copy_kernel", launch="copy_kernel"),
    })
    found = _findings(tmp_path, "TL106")
    assert [(f, r) for f, r, _ in found] == [("pkg/ops.py", 14), ("pkg/ops_module.py", 14)]
    assert "BLOCK_M (64/128)" in found[0][2] and "`a_desc` [64, 64]" in found[0][2]
    # the launching file alone: the kernel's module is read as context
    assert [(f, r) for f, r, _ in _findings(tmp_path, "TL106", "pkg/ops.py")] == [("pkg/ops.py", 14)]


def test_tl101_lists_no_stride_from_a_call_that_cannot_run(rules):
    """A helper call one argument short (hip_attn, round K) binds each argument to the parameter before its
    own: the stride beside the counter would look like the counter. Such a call cannot run, so it binds
    nothing; the aligned call still reports the counter, and only it."""
    code = textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def count(x, COUNT, stride_count, MAX: tl.constexpr):
            tl.atomic_add(COUNT + tl.program_id(0) * stride_count, 1)

        @triton.autotune(configs=[triton.Config({"B": 16}), triton.Config({"B": 32})], key=["n"])
        @triton.jit
        def kernel(x, COUNT, stride_count, n, B: tl.constexpr):
            count(x, COUNT, stride_count, 4)
            count(COUNT, stride_count, 4)
        ''')
    found = [d for d in lint_code(code, rules, select=["TL101"]).diagnostics if d.code == "TL101"]
    assert len(found) == 1
    assert 'reset_to_zero=["COUNT"]' in found[0].message


def test_tl101_reads_configs_made_in_the_project_and_not_those_of_a_package_outside_it(tmp_path):
    configs = "def make_configs():\n    return [triton.Config({'BLOCK': b}) for b in (256, 512)]\n"
    kernel = ("import triton\nimport triton.language as tl\nIMPORT\n\n\n"
              "@triton.autotune(configs=make_configs(), key=['n'])\n@triton.jit\n"
              "def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
              "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
              "    tl.atomic_add(out_ptr + offs, tl.load(x_ptr + offs))\n")
    _project(tmp_path, {
        "pkg/configs.py": "import triton\n\n\n" + configs,
        "pkg/absolute.py": kernel.replace("IMPORT", "from pkg.configs import make_configs"),
        "pkg/relative.py": kernel.replace("IMPORT", "from .configs import make_configs"),
        "pkg/outside.py": kernel.replace("IMPORT", "from vendor.tuning import make_configs"),
    })
    assert sorted((f, r) for f, r, _ in _findings(tmp_path, "TL101")) == [("pkg/absolute.py", 6), ("pkg/relative.py", 6)]
    # the kernel's file alone: the project's other modules still count as the project's
    assert [(f, r) for f, r, _ in _findings(tmp_path, "TL101", "pkg/absolute.py")] == [("pkg/absolute.py", 6)]


def test_tl101_quotes_the_fixture_of_the_kind_of_write_it_flags():
    from tritonlint import evidence
    from tritonlint.ruleset import load_rules

    rules = [rule for rule in load_rules() if rule.id == "TL101"]
    atomic = lint_code("import triton\nimport triton.language as tl\n\n\n" + _kernel("", "tl.atomic_add(out_ptr + offs, x)"), rules)
    in_place = lint_code("import triton\nimport triton.language as tl\n\n\n"
                         + _kernel("", "tl.store(out_ptr + offs, tl.load(out_ptr + offs) * s)"), rules)
    (a,), (b,) = atomic.diagnostics, in_place.diagnostics
    assert any(evidence.fixture_phrase("TL101-splitk-atomic-add") in n for n in a.notes)
    assert not any(evidence.fixture_phrase("TL101-inplace-axpy") in n for n in a.notes)
    assert any(evidence.fixture_phrase("TL101-inplace-axpy") in n and "in-place update again" in n for n in b.notes)


SGD = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def _sgd_step(W, dW, M, lr, momentum):
        M = momentum * M + dW
        W -= lr * M
        return W, M

    @triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})], key=[],
                     restore_value=["W_ptr"])
    @triton.jit
    def sgd_kernel(W_ptr, dW_ptr, M_ptr, N, lr, momentum, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        W = tl.load(W_ptr + offs)
        M = tl.load(M_ptr + offs)
        W, M = _sgd_step(W, tl.load(dW_ptr + offs), M, lr, momentum)
        tl.store(M_ptr + offs, M)
        tl.store(W_ptr + offs, W)

    def sgd(W, dW, M: ANNOTATION, lr, momentum):
        sgd_kernel[lambda meta: (triton.cdiv(W.numel(), meta["BLOCK"]),)](W, dW, M, W.numel(), lr, momentum)
    ''')


def test_tl101_follows_data_through_a_helpers_returned_tuple_and_a_none_argument_makes_the_fix_unsafe(rules):
    """`W, M = _sgd_step(...)` returns the loaded M updated: an in-place update of M_ptr (round R54s). Where the
    launch may pass None for it, the autotuner's clone would fail: the fix is unsafe and a note says why."""
    def finding(annotation: str):
        [found] = [d for d in lint_code(SGD.replace("ANNOTATION", annotation), rules, select=["TL101"]).diagnostics]
        return found
    tensor, optional = finding("torch.Tensor"), finding("torch.Tensor | None")
    assert 'restore_value=["M_ptr"]' in tensor.message and 'restore_value=["M_ptr"]' in optional.message
    assert tensor.fix is not None and tensor.fix.applicability == "safe"
    assert optional.fix is not None and optional.fix.applicability == "unsafe"
    assert any("`M_ptr` may be None" in note for note in optional.notes)
    assert not any("may be None" in note for note in tensor.notes)
