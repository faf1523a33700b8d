"""TL005 behaviour the rule file's examples cannot pin: messages, notes, fix applicability, role inference and
the fixture pair."""

from __future__ import annotations

import ast
import re
import textwrap

import pytest

from tests.helpers import ROOT, lint_code
from tritonlint.rules.tl005_gqa_descriptor_heads import GENERIC, GROUP, KV, QUERY, HeadScope
from tritonlint.results import FixMode

HOST = textwrap.dedent("""\
    from triton.tools.tensor_descriptor import TensorDescriptor

    def attention(q, k, v, BLOCK_N=64):
        B, H, S, D = q.shape
        H_KV = k.shape[1]
        GROUP = H // H_KV
        k_desc = TensorDescriptor(k, shape=[B * H * S, D], strides=[D, 1], block_shape=[BLOCK_N, D])
        return k_desc, GROUP
""")


def _findings(code: str, rules, **kwargs):
    result = lint_code(code, rules, select=["TL005"], **kwargs)
    assert result.internal_error is None, result.internal_error
    return result


def test_message_names_descriptor_tensor_and_both_head_counts(rules):
    [finding] = _findings(HOST, rules).diagnostics
    assert finding.severity == "warning" and finding.category == "correctness"
    assert "`k_desc`" in finding.message and "`k`" in finding.message
    assert "query head count `H`" in finding.message and "KV head count `H_KV`" in finding.message
    assert finding.location.row == 7
    assert finding.fix is not None and finding.fix.applicability == "unsafe"


def test_the_fix_is_unsafe_so_plain_fix_leaves_the_code_alone(rules):
    assert _findings(HOST, rules, mode=FixMode.DIFF).fixed is None
    fixed = _findings(HOST, rules, mode=FixMode.DIFF, unsafe=True).fixed
    assert "shape=[B * H_KV * S, D]" in fixed


def test_no_fix_when_the_kv_head_count_is_bound_after_the_descriptor(rules):
    code = textwrap.dedent("""\
        from triton.tools.tensor_descriptor import TensorDescriptor

        def attention(q, k, num_heads, S, D, GROUP):
            k_desc = TensorDescriptor(k, shape=[num_heads * S, D], strides=[D, 1], block_shape=[64, D])
            num_kv_heads = num_heads // GROUP
            return k_desc, num_kv_heads
    """)
    [finding] = _findings(code, rules).diagnostics
    # the group size is a parameter, so the fix divides by it rather than using the later name
    assert finding.fix is not None and finding.fix.edits[0].content == "(num_heads // GROUP)"


def test_no_fix_when_nothing_usable_is_bound_yet(rules):
    code = textwrap.dedent("""\
        from triton.tools.tensor_descriptor import TensorDescriptor

        def attention(q, k, num_heads, S, D, cfg):
            k_desc = TensorDescriptor(k, shape=[num_heads * S, D], strides=[D, 1], block_shape=[64, D])
            num_kv_heads = cfg.kv
            return k_desc, num_kv_heads
    """)
    [finding] = _findings(code, rules).diagnostics
    assert "`num_kv_heads`" in finding.message
    assert finding.fix is None
    assert any("not bound yet" in note for note in finding.notes)


def test_shared_row_count_is_written_out_only_when_its_names_are_stable(rules):
    code = textwrap.dedent("""\
        import triton
        import triton.language as tl

        @triton.jit
        def _fwd(K, Z, H, H_KV, N_CTX, HEAD_DIM: tl.constexpr):
            y_dim = Z * H * N_CTX
            Z = Z + 1
            desc_k = tl.make_tensor_descriptor(K, [y_dim, HEAD_DIM], [HEAD_DIM, 1], [64, HEAD_DIM])
            tl.store(K, tl.sum(tl.sum(desc_k.load([0, 0]), 0), 0))
    """)
    [finding] = _findings(code, rules).diagnostics
    assert "The shape uses the query head count `H` through `y_dim = Z * H * N_CTX`." in finding.notes
    assert finding.fix is None
    assert any("changes before the descriptor" in note for note in finding.notes)


def test_shape_built_outside_the_call_is_reported_without_a_fix(rules):
    code = textwrap.dedent("""\
        from triton.tools.tensor_descriptor import TensorDescriptor

        def descriptors(k, num_heads, num_kv_heads, S, D):
            shape = [num_heads * S, D]
            return TensorDescriptor(k, shape, [D, 1], [64, D])
    """)
    [finding] = _findings(code, rules).diagnostics
    assert finding.fix is None
    assert any("built outside this call" in note for note in finding.notes)


def test_fixing_both_descriptors_of_a_file_in_one_pass(rules):
    code = HOST.replace("    return k_desc, GROUP\n", textwrap.indent(
        "v_desc = TensorDescriptor(v, shape=[B, H, S, D], strides=list(v.stride()), block_shape=[1, 1, BLOCK_N, D])\n"
        "return k_desc, v_desc, GROUP\n", "    "))
    result = _findings(code, rules, mode=FixMode.DIFF, unsafe=True)
    assert result.fixes_applied == 2
    assert "shape=[B * H_KV * S, D]" in result.fixed and "shape=[B, H_KV, S, D]" in result.fixed
    assert _findings(result.fixed, rules).diagnostics == []


def test_suppression_comment(rules):
    code = HOST.replace("block_shape=[BLOCK_N, D])", "block_shape=[BLOCK_N, D])  # tritonlint: ignore[TL005]")
    assert _findings(code, rules).diagnostics == []


def test_descriptor_in_module_level_code_is_not_analysed(rules):
    code = textwrap.dedent("""\
        from triton.tools.tensor_descriptor import TensorDescriptor
        import torch

        H, H_KV, S, D = 32, 8, 128, 64
        k = torch.empty(H_KV * S, D)
        k_desc = TensorDescriptor(k, shape=[H * S, D], strides=[D, 1], block_shape=[64, D])
    """)
    assert _findings(code, rules).diagnostics == []


def _scope(code: str) -> HeadScope:
    function = ast.parse(textwrap.dedent(code)).body[0]
    assert isinstance(function, ast.FunctionDef)
    return HeadScope(function)


@pytest.mark.parametrize(("code", "expected"), [
    # bare H is the query head count once a KV head count or group exists
    ("def f(q, k, Z, H, H_KV): pass", {"H": QUERY, "H_KV": KV}),
    ("def f(q, k, Z, H): pass", {"H": None}),  # multi-head attention: no role
    # H read off k.shape is the KV head count (flash-linear-attention naming)
    ("def f(q, k):\n    B, T, H, K = k.shape\n    HQ = q.shape[2]\n    G = HQ // H", {"H": KV, "HQ": QUERY, "G": GROUP}),
    # an explicit query head count makes a bare H ambiguous
    ("def f(q, k, H, HQ, GROUP):\n    kv_head = HQ // GROUP", {"H": None, "HQ": QUERY, "GROUP": GROUP}),
    # an ambiguous group name counts only where it divides a head index or count
    ("def f(k, H, GROUP_SIZE):\n    group_id = pid // GROUP_SIZE", {"GROUP_SIZE": None, "H": None}),
    ("def f(k, H, GROUP_SIZE):\n    off_kv = off_h // GROUP_SIZE", {"GROUP_SIZE": GROUP, "H": QUERY}),
    # derived counts
    ("def f(H, GROUP):\n    H_KV = H // GROUP\n    HQ = H_KV * GROUP", {"H_KV": KV, "HQ": QUERY}),
    ("def f(q, k):\n    Hq = q.shape[1]\n    Hkv = k.shape[1]\n    g = Hq // Hkv", {"g": GROUP, "Hkv": KV}),
    # separate value heads: K shares the query heads, so nothing is called a query head count
    ("def f(q, v):\n    B, T, H, K = q.shape\n    HV = v.shape[2]\n    GROUP = HV // H", {"H": QUERY}),
])
def test_head_roles(code, expected):
    scope = _scope(code)
    for name, role in expected.items():
        assert scope.role(name) == role, (name, scope.raw_role(name))


def test_value_heads_silence_the_rule(rules):
    code = textwrap.dedent("""\
        from triton.tools.tensor_descriptor import TensorDescriptor

        def f(q, k, v, num_heads, num_v_heads, num_kv_heads, T, D):
            return TensorDescriptor(k, [T, num_heads, D], [num_heads * D, D, 1], [64, 1, D])
    """)
    assert _findings(code, rules).diagnostics == []


def test_generic_names_resolve_only_in_gqa_code():
    assert _scope("def f(k, num_heads): pass").raw_role("num_heads") == GENERIC
    assert _scope("def f(k, num_heads): pass").role("num_heads") is None


FIXTURE = ROOT / "fixtures" / "TL005-gqa-descriptor-heads"


@pytest.mark.skipif(not FIXTURE.is_dir(), reason="the TL005 fixture pair is not in this checkout")
def test_fixture_pair(rules):
    slow = (FIXTURE / "slow.py").read_text()
    expected = [row for row, line in enumerate(slow.splitlines(), 1) if re.search(r"#\s*expect:\s*TL005", line)]
    assert sorted(d.location.row for d in _findings(slow, rules).diagnostics) == expected
    assert _findings((FIXTURE / "fast.py").read_text(), rules).diagnostics == []
