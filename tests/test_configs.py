"""Autotune configs evaluated over the syntax tree: the forms real projects build them in."""
from __future__ import annotations

import ast
import textwrap

import pytest

from tritonlint.analysis.configs import ConfigInterpreter
from tritonlint.analysis.model import ModuleModel

from .helpers import lint_code

HEADER = "import itertools\nimport os\nimport triton\nimport triton.language as tl\n"
KERNEL = """
@triton.autotune(configs={configs}, key=["n"])
@triton.jit
def kernel(x_ptr, n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pass
"""


def configs_of(prelude: str, configs: str) -> list[dict] | None:
    code = HEADER + textwrap.dedent(prelude) + KERNEL.format(configs=configs)
    model = ModuleModel(ast.parse(code), "example", "example.py", text=code)
    found = model.functions[0].autotune.configs  # type: ignore[union-attr]
    return None if found is None else [c.meta for c in found]


CASES = {
    "append loop": ("""
        CONFIGS = []
        for bm in [64, 128]:
            for bn in (32, 64):
                CONFIGS.append(triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=4))
        """, "CONFIGS", 4),
    "extend": ("""
        BASE = [triton.Config({"BLOCK_M": 64, "BLOCK_N": 64})]
        BASE.extend([triton.Config({"BLOCK_M": 128, "BLOCK_N": 64})])
        """, "BASE", 2),
    "filtered nested comprehension": ("""
        SIZES = [32, 64, 128]
        """, '[triton.Config({"BLOCK_M": m, "BLOCK_N": n}) for m in SIZES for n in SIZES if m >= n]', 6),
    "product": ("", '[triton.Config({"BLOCK_M": m, "BLOCK_N": n}) for m, n in itertools.product([64, 128], [64])]', 2),
    "helper with parameters and defaults": ("""
        def get_configs(blocks=(64, 128), warps=4):
            out = []
            for b in blocks:
                out += [triton.Config({"BLOCK_M": b, "BLOCK_N": b}, num_warps=warps)]
            return out
        """, "get_configs(warps=8)", 2),
    "environment default path": ("""
        def get_configs():
            if os.getenv("FAST_AUTOTUNE", "0") == "1":
                return [triton.Config({"BLOCK_M": 64, "BLOCK_N": 64})]
            return [triton.Config({"BLOCK_M": m, "BLOCK_N": 64}) for m in (64, 128, 256)]
        """, "get_configs()", 3),
    "undecided test: both paths": ("""
        def get_configs():
            if torch.cuda.get_device_capability()[0] >= 9:
                return [triton.Config({"BLOCK_M": 128, "BLOCK_N": 128})]
            else:
                return [triton.Config({"BLOCK_M": 64, "BLOCK_N": 64})]
        """, "get_configs()", 2),
    "under an undecided module-level test": ("""
        if torch_version_at_least("2.7.0"):
            CONFIGS = [triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}), triton.Config({"BLOCK_M": 128, "BLOCK_N": 64})]
        """, "CONFIGS", 2),
    "list concatenation and dict spread": ("""
        COMMON = {"BLOCK_N": 64}
        """, '[triton.Config({"BLOCK_M": 64, **COMMON})] + [triton.Config({**COMMON, "BLOCK_M": 128})]', 2),
}


@pytest.mark.parametrize("name", CASES)
def test_config_factories_are_evaluated(name):
    prelude, configs, count = CASES[name]
    found = configs_of(prelude, configs)
    assert found is not None and len(found) == count
    assert all(set(meta) == {"BLOCK_M", "BLOCK_N"} for meta in found)


@pytest.mark.parametrize("prelude, configs", [
    ("", "load_configs_from_disk()"),  # a function of another module, not followed
    ("CONFIGS = []\ntry:\n    CONFIGS.append(triton.Config({}))\nexcept ImportError:\n    pass\n", "CONFIGS"),
    ("def get(n):\n    while n:\n        n -= 1\n    return []\n", "get(3)"),
    ("", "[triton.Config({'BLOCK_M': m}) for m in range(10**9)]"),  # past the budget: unknown, not a guess
])
def test_what_cannot_be_followed_is_unknown(prelude, configs):
    assert configs_of(prelude, configs) is None


def test_budget_bounds_the_work():
    code = HEADER + "X = [triton.Config({'BLOCK_M': m}) for m in range(4000) for _ in range(4000)]\n"
    model = ModuleModel(ast.parse(code), "example", "example.py", text=code)
    interpreter = ConfigInterpreter(model)
    assert interpreter.configs(ast.parse("X", mode="eval").body) is None
    assert interpreter.steps <= interpreter.budget + 1


def test_tl004_sees_a_conflict_with_configs_from_a_factory(rules):
    code = HEADER + textwrap.dedent("""
        def configs():
            out = []
            for block in [256, 512, 1024]:
                out.append(triton.Config({"BLOCK": block}, num_warps=4))
            return out

        @triton.autotune(configs=configs(), key=["n"])
        @triton.jit
        def scale(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

        def launch(x):
            n = x.numel()
            scale[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, n, BLOCK=1024)
        """)
    codes = [d.code for d in lint_code(code, rules).diagnostics]
    assert "TL004" in codes


def test_configs_from_a_helper_and_a_constant_imported_from_another_module(tmp_path):
    from .helpers import run_cli

    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "tuning.py").write_text(textwrap.dedent("""
        import triton

        BLOCKS = [256, 1024, 4096]

        def elementwise_configs(warps=4):
            return [triton.Config({"BLOCK_SIZE": b}, num_warps=warps) for b in BLOCKS]
    """))
    (package / "scale.py").write_text(textwrap.dedent("""
        import triton
        import triton.language as tl
        from .tuning import elementwise_configs

        @triton.autotune(configs=elementwise_configs(), key=["n"])
        @triton.jit
        def scale_kernel(x_ptr, y_ptr, n, BLOCK_SIZE: tl.constexpr):
            offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

        def scale(x, y):
            n = x.numel()
            scale_kernel[lambda META: (triton.cdiv(n, META["BLOCK_SIZE"]),)](x, y, n, BLOCK_SIZE=1024)
    """))
    result = run_cli("check", "--select", "TL004", "--output-format", "concise", "--no-cache", ".", cwd=tmp_path)
    assert "pkg/scale.py" in result.stdout and "TL004" in result.stdout, result.stdout + result.stderr
    # edited, the helper module changes what a cached result of the kernel module said
    cached = run_cli("check", "--select", "TL004", "--output-format", "concise", ".", cwd=tmp_path)
    assert "TL004" in cached.stdout
    (package / "tuning.py").write_text((package / "tuning.py").read_text().replace('"BLOCK_SIZE"', '"BLOCK"'))
    after = run_cli("check", "--select", "TL004", "--output-format", "concise", ".", cwd=tmp_path)
    assert "TL004" not in after.stdout, after.stdout
