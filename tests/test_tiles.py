"""The symbolic tile-shape analysis (tritonlint/analysis/tiles.py) on its own, and TL113's backend scope."""

from __future__ import annotations

import ast
import textwrap

import pytest

from tests.helpers import lint_code
from tritonlint.analysis.model import ModuleModel
from tritonlint.analysis.tiles import Incompatible, broadcast, format_shape, scenario_shapes, tile_shapes

HEADER = "import triton\nimport triton.language as tl\n"


def _model(body: str) -> ModuleModel:
    return ModuleModel(ast.parse(HEADER + textwrap.dedent(body)), "example", "example.py")


def _shapes_by_text(shapes, function) -> dict[str, str]:
    """The shape of every expression statement's value and every assigned value, by its source text."""
    found = {}
    for node in ast.walk(function.node):
        if isinstance(node, ast.Assign):
            found[ast.unparse(node.targets[0])] = format_shape(shapes.of(node.value))
        elif isinstance(node, ast.expr) and isinstance(node, (ast.Call, ast.BinOp, ast.Subscript)):
            found.setdefault(ast.unparse(node), format_shape(shapes.of(node)))
    return found


def test_broadcast_rules():
    assert broadcast((64, 1), (1, 32)) == (64, 32)
    assert broadcast((32,), (16, 32)) == (16, 32)  # the lower rank gets leading 1s
    assert broadcast((), (8, 8)) == (8, 8)
    assert broadcast(("BLOCK", 1), (1, 32)) == ("BLOCK", 32)
    assert broadcast(("BLOCK",), (32,)) == (None,)  # symbolic against a number: unknown, never an error
    with pytest.raises(Incompatible, match="at index 0: 64 and 32"):
        broadcast((64, 1), (32, 16))


def test_symbolic_shapes_of_a_gemm():
    model = _model('''
        @triton.jit
        def matmul(a_ptr, b_ptr, c_ptr, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr = 32):
            rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
            rn = tl.arange(0, BLOCK_N)
            rk = tl.arange(0, BLOCK_K)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k in range(0, K, BLOCK_K):
                a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=rm[:, None] < K, other=0.0)
                b = tl.load(b_ptr + rk[:, None] * BLOCK_N + rn[None, :])
                acc += tl.dot(a, b)
            row = tl.sum(acc, axis=1)
            kept = tl.max(acc, axis=0, keep_dims=True)
            t = tl.trans(acc)
            r = tl.reshape(acc, (BLOCK_M * BLOCK_N,))
            e = tl.expand_dims(row, 1)
            w = tl.where(rm[:, None] < K, acc, 0.0)
    ''')
    function = model.functions[0]
    shapes = _shapes_by_text(tile_shapes(model, function), function)
    assert shapes["rm"] == "(BLOCK_M,)"
    assert shapes["a"] == "(BLOCK_M, BLOCK_K)"  # symbolic: no scenario binds the default
    assert shapes["b"] == "(BLOCK_K, BLOCK_N)"
    assert shapes["tl.dot(a, b)"] == "(BLOCK_M, BLOCK_N)"
    assert shapes["row"] == "(BLOCK_M,)"
    assert shapes["kept"] == "(1, BLOCK_N)"
    assert shapes["t"] == "(BLOCK_N, BLOCK_M)"
    assert shapes["r"] == "(BLOCK_M * BLOCK_N,)"
    assert shapes["e"] == "(BLOCK_M, 1)"
    assert shapes["w"] == "(BLOCK_M, BLOCK_N)"


def test_scenarios_bind_configs_and_defaults():
    model = _model('''
        @triton.autotune(configs=[triton.Config({"BLOCK_K": 32}), triton.Config({"BLOCK_K": 64})], key=["M"])
        @triton.jit
        def kernel(x_ptr, M, BLOCK_M: tl.constexpr = 16, BLOCK_K: tl.constexpr = 8):
            x = tl.load(x_ptr + tl.arange(0, BLOCK_M)[:, None] * BLOCK_K + tl.arange(0, BLOCK_K)[None, :])
    ''')
    function = model.functions[0]
    maps = scenario_shapes(model, function)
    value = function.node.body[0].value
    assert [format_shape(m.of(value)) for m in maps] == ["(16, 32)", "(16, 64)"]
    tile = maps[0].tile(value)
    assert "BLOCK_K=32 from config #1" in tile.describe() and "line 7" in tile.describe()


def test_descriptors_block_pointers_and_constant_branches():
    model = _model('''
        @triton.jit
        def kernel(a_ptr, M, K, STAGES: tl.constexpr = 1):
            desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[128, 64])
            tile = desc.load([0, 0])
            bp = tl.make_block_ptr(a_ptr, (M, K), (K, 1), (0, 0), (32, 16), (1, 0))
            bp = tl.advance(bp, (0, 16))
            loaded = tl.load(bp)
            if STAGES > 1:
                acc = tl.zeros((256,), dtype=tl.float32)
            else:
                acc = tl.zeros((64,), dtype=tl.float32)
            a, b = tl.split(tl.join(acc, acc))
    ''')
    function = model.functions[0]
    (shapes,) = scenario_shapes(model, function)
    found = _shapes_by_text(shapes, function)
    assert found["tile"] == "(128, 64)"
    assert found["loaded"] == "(32, 16)"
    assert found["tl.join(acc, acc)"] == "(64, 2)"
    assert not shapes.reached(function.node.body[5].body[0])  # the arm a constexpr default rules out
    symbolic = _shapes_by_text(tile_shapes(model, function), function)
    assert symbolic["acc"] == "(64,)"  # the last binding seen; the join of both arms is (?,)


def test_unknown_stays_unknown():
    model = _model('''
        @triton.jit
        def helper(x, y, BLOCK: tl.constexpr):
            z = x + y[None, :]
            w = other_helper(z)
            v = tl.arange(0, BLOCK) + w
            return v
    ''')
    function = model.functions[0]
    found = _shapes_by_text(tile_shapes(model, function), function)
    assert found["z"] == "unknown"  # a helper's parameters may be tiles
    assert found["w"] == "unknown"
    assert found["v"] == "unknown"


def test_local_helpers_are_followed_with_their_arguments():
    model = _model('''
        @triton.jit
        def _offsets(start, BLOCK: tl.constexpr):
            return start + tl.arange(0, BLOCK), tl.program_id(0)

        @triton.jit
        def _scale(x, s):
            return x * s[None, :]

        @triton.jit
        def kernel(x_ptr, s_ptr, BLOCK_M: tl.constexpr = 32):
            rows, pid = _offsets(tl.program_id(0) * BLOCK_M, BLOCK_M)
            cols, _ = _offsets(0, 64)
            x = tl.load(x_ptr + rows[:, None] * 64 + cols[None, :])
            y = _scale(x, tl.load(s_ptr + cols))
    ''')
    kernel = model.functions[-1]
    (shapes,) = scenario_shapes(model, kernel)
    found = _shapes_by_text(shapes, kernel)
    assert found["x"] == "(32, 64)"
    assert found["y"] == "(32, 64)"


def test_the_sources_of_a_tile_are_a_union_so_chains_of_shared_operands_stay_small():
    """eagle-harness's bitonic sort (15 helper calls in a row, each mixing tiles of its argument) grew the
    sources past a million entries by concatenation and ran out of time and memory."""
    from tritonlint.analysis.consteval import Binding
    from tritonlint.analysis.tiles import Tile

    tile = Tile((32,), sources=(("N", Binding(32, "launch at line 3")),))
    for _ in range(20):  # concatenated, 2**20 entries (kept small so that a regression fails, not hangs)
        tile = Tile(tile.shape, sources=tile.sources + tile.sources + (("M", Binding(8, "config #1")),))
    assert [name for name, _ in tile.sources] == ["N", "M"]


SMALL_K = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def small_k(a_ptr, b_ptr, c_ptr, BLOCK_K: tl.constexpr = 8):
        rm = tl.arange(0, 32)
        rk = tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * BLOCK_K + rk[None, :]).to(tl.float16)
        b = tl.load(b_ptr + rk[:, None] * 32 + rm[None, :]).to(tl.float16)
        tl.store(c_ptr + rm[:, None] * 32 + rm[None, :], tl.dot(a, b))
''')


@pytest.mark.parametrize("path, reported", [
    ("ops/skinny_gemm.py", True),
    ("ops/hipster.py", True),
    ("qwen3.5-397b-mi300a-bespoke/skinny_gemm.py", False),  # AMD Instinct (x36a)
    ("kernels/mi355x_gemm.py", False),
    ("ops/backends/triton_ascend/gemm.py", False),
    ("ops/mm_gfx950.py", False),
])
def test_tl113_k_below_16_is_not_claimed_for_other_backends(rules, path, reported):
    found = [d for d in lint_code(SMALL_K, rules, select=["TL113"], filename=path).diagnostics if d.code == "TL113"]
    assert bool(found) == reported
    relinted = lint_code(SMALL_K, rules, select=["TL113"], filename=path, options={"other-backend-names": []})
    assert [d for d in relinted.diagnostics if d.code == "TL113"]
