"""Analysis details of TL002 (transpose-in-loop) and TL003 (raw-2d-tile-load) that the rule files' own
examples cannot express: targets, fix applicability and content, loop attribution, other backends."""

from __future__ import annotations

import ast
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import documented_exemptions, exemption_docs, lint_code
from tritonlint.analysis.flow import FunctionFlow
from tritonlint.results import FixMode

GEMM = textwrap.dedent("""\
    import triton
    import triton.language as tl

    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            offs_k = k + tl.arange(0, BLOCK_K)
            a_mask = (offs_m[:, None] < M) & (offs_k[None, :] < K)
            a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak, mask=a_mask, other=0.0)
            b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                        mask=(offs_k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)
""")

TUTORIAL = textwrap.dedent("""\
    import triton
    import triton.language as tl

    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                      BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr):
        offs_am = (tl.program_id(0) * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
        offs_bn = (tl.program_id(1) * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
        offs_k = tl.arange(0, BLOCK_SIZE_K)
        a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
        acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_SIZE_K * stride_ak
            b_ptrs += BLOCK_SIZE_K * stride_bk
        tl.store(c_ptr + offs_am[:, None] * N + offs_bn[None, :], acc)
""")

CHUNK_STATE = textwrap.dedent("""\
    import triton
    import triton.language as tl

    @triton.jit
    def chunk_state(k_ptr, v_ptr, h_ptr, NT, BT: tl.constexpr, K: tl.constexpr, V: tl.constexpr):
        offs_t = tl.arange(0, BT)
        offs_k = tl.arange(0, K)
        offs_v = tl.arange(0, V)
        b_h = tl.zeros((V, K), dtype=tl.float32)
        for i_t in range(NT):
            b_k = tl.load(k_ptr + offs_k[:, None] + (i_t * BT + offs_t)[None, :] * K)
            b_v = tl.load(v_ptr + (i_t * BT + offs_t)[:, None] * V + offs_v[None, :])
            b_h += tl.trans(tl.dot(b_k, b_v))
        tl.store(h_ptr + offs_v[:, None] * K + offs_k[None, :], b_h)
""")


def _codes(result, code):
    return [d for d in result.diagnostics if d.code == code]


# ---- TL003: the target ----------------------------------------------------------------------------------
@pytest.mark.parametrize("target", [None, "sm_80", "sm_89"])
def test_tl003_silent_without_a_tma_target(rules, target):
    assert _codes(lint_code(GEMM, rules, select=["TL003"], target=target), "TL003") == []


@pytest.mark.parametrize("target", ["sm_90", "sm_90a", "sm_100"])
def test_tl003_reports_on_hopper_and_newer(rules, target):
    found = _codes(lint_code(GEMM, rules, select=["TL003"], target=target), "TL003")
    assert [d.location.row for d in found] == [15, 16]
    assert all(d.severity == "info" for d in found)
    assert f"On sm_{target.removeprefix('sm_').removesuffix('a')} " in found[0].notes[0]


def test_tl003_message_does_not_promise_large_gains(rules):
    message = _codes(lint_code(GEMM, rules, select=["TL003"]), "TL003")[0].message
    assert "small difference at most" in message
    assert "`a_ptr` [BLOCK_M, BLOCK_K]" in message and "`for k` loop at line 12" in message


# ---- TL003: the descriptor suggestion ---------------------------------------------------------------------
def test_tl003_suggestion_shows_the_descriptor_form_with_the_codes_names(rules):
    first = _codes(lint_code(GEMM, rules, select=["TL003"]), "TL003")[0]
    assert first.fix is not None and first.fix.applicability == "display-only"
    make, load = (edit.content for edit in first.fix.edits)
    assert make == ("    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, stride_ak], "
                    "block_shape=[BLOCK_M, BLOCK_K])\n")
    assert load == "a_desc.load([pid_m * BLOCK_M, k])"
    assert any("stride_ak` is 1" in note for note in first.notes)


def test_tl003_suggestion_reads_the_bounds_of_masks_held_in_local_names(rules):
    local_masks = GEMM.replace("a_mask = (offs_m[:, None] < M) & (offs_k[None, :] < K)",
                               "m_mask = offs_m < M\n        k_mask = offs_k < K\n        a_mask = m_mask[:, None] & k_mask[None, :]")
    assert local_masks != GEMM
    first = _codes(lint_code(local_masks, rules, select=["TL003"]), "TL003")[0]
    assert first.fix is not None and "shape=[M, K]" in first.fix.edits[0].content


def test_tl003_suggestion_reads_the_bound_of_an_offset_sum_written_inline(rules):
    # `(k + offs_kb)[None, :]` in the pointer and the same sum in the mask (round x35d, an NVFP4 GEMM's packed K)
    inline = GEMM.replace("        offs_k = k + tl.arange(0, BLOCK_K)\n", "").replace("offs_k", "(k + offs_kb)").replace(
        "    acc = tl.zeros(", "    offs_kb = tl.arange(0, BLOCK_K)\n    acc = tl.zeros(")
    assert "(k + offs_kb)[None, :] < K" in inline
    first = _codes(lint_code(inline, rules, select=["TL003"]), "TL003")[0]
    assert first.fix is not None and "shape=[M, K]" in first.fix.edits[0].content


def test_tl003_suggestion_follows_an_offset_vector_built_from_another_local(rules):
    # `k_offs = k + offs_k` with `offs_k = tl.arange(0, BLOCK_K)` before the loop (rounds x33c, x34c, x34d)
    nested = GEMM.replace("    for k in range(0, K, BLOCK_K):\n        offs_k = k + tl.arange(0, BLOCK_K)\n",
                          "    offs_kb = tl.arange(0, BLOCK_K)\n    for k in range(0, K, BLOCK_K):\n"
                          "        offs_k = k + offs_kb\n")
    assert nested != GEMM
    first = _codes(lint_code(nested, rules, select=["TL003"]), "TL003")[0]
    assert "`a_ptr` [BLOCK_M, BLOCK_K]" in first.message
    assert first.fix is not None and first.fix.edits[1].content == "a_desc.load([pid_m * BLOCK_M, k])"


def test_tl003_suggestion_folds_the_pointer_advance_into_the_offset(rules):
    a, b = _codes(lint_code(TUTORIAL, rules, select=["TL003"]), "TL003")
    assert a.fix.edits[1].content == "a_desc.load([tl.program_id(0) * BLOCK_SIZE_M, k * BLOCK_SIZE_K])"
    # the rows wrap around `% M` (zero fill past M instead); K - k * BLOCK_SIZE_K is the bound of the whole tensor
    assert "shape=[M, K]" in a.fix.edits[0].content
    assert b.fix.edits[1].content == "b_desc.load([k * BLOCK_SIZE_K, tl.program_id(1) * BLOCK_SIZE_N])"


def test_tl003_no_suggestion_names_an_advance_along_no_known_axis(rules):
    # `a_ptrs += BLOCK_SIZE_K` while neither stride is known to be 1 (round x37a: the note read "does not give the
    # pointer also advances by ...")
    code = TUTORIAL.replace("a_ptrs += BLOCK_SIZE_K * stride_ak", "a_ptrs += BLOCK_SIZE_K")
    a = _codes(lint_code(code, rules, select=["TL003"]), "TL003")[0]
    assert a.fix is None or not a.fix.edits
    assert any("does not give the axis that the pointer's advance by `BLOCK_SIZE_K` each iteration moves along" in note
               for note in a.notes)


def test_tl003_suggestion_reads_a_mask_that_another_arm_sets_to_none(rules):
    # `if EVEN_K: a_mask = None` / `else: a_mask = ...` (round x37a): no lane is masked in that arm, and the
    # tensor's bound covers it too
    code = GEMM.replace("BLOCK_K: tl.constexpr):", "BLOCK_K: tl.constexpr, EVEN_K: tl.constexpr):").replace(
        "        a_mask = (offs_m[:, None] < M) & (offs_k[None, :] < K)\n",
        "        if EVEN_K:\n            a_mask = None\n        else:\n"
        "            a_mask = (offs_m[:, None] < M) & (offs_k[None, :] < K)\n")
    assert "a_mask = None" in code
    a = _codes(lint_code(code, rules, select=["TL003"]), "TL003")[0]
    assert a.fix is not None and "shape=[M, K]" in a.fix.edits[0].content


def test_tl003_suggestion_reads_a_mask_on_a_local_sum_of_the_advanced_offset(rules):
    # `k_offs = k * BLOCK + offs_k` masked against K while the pointer holds `offs_k` and advances each iteration
    # (round x36a, an int8-weight GEMM): the bound holds for the offset the advance gives, and only for it
    def variant(start):
        return TUTORIAL.replace(
            "        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)\n",
            f"        k_offs = {start} + offs_k\n        a = tl.load(a_ptrs, mask=k_offs[None, :] < K, other=0.0)\n")
    a = _codes(lint_code(variant("k * BLOCK_SIZE_K"), rules, select=["TL003"]), "TL003")[0]
    assert "shape=[M, K]" in a.fix.edits[0].content
    assert a.fix.edits[1].content == "a_desc.load([tl.program_id(0) * BLOCK_SIZE_M, k * BLOCK_SIZE_K])"
    a = _codes(lint_code(variant("k"), rules, select=["TL003"]), "TL003")[0]
    assert a.fix is None or not a.fix.edits
    assert any("extent along its second dimension" in note for note in a.notes)


def test_tl003_suggestion_counts_an_outer_loops_advance_in_that_loops_iterations(rules):
    # loads in an inner `tl.static_range(SUB)` at `a_ptrs + j * 32 * stride_ak`, the pointer advanced once per
    # outer iteration by `SUB * 32 * stride_ak` (round x35a, an MXFP4 GEMM): the offset is `j * 32 + k * SUB * 32`
    split = TUTORIAL.replace("BLOCK_SIZE_K: tl.constexpr):", "BLOCK_SIZE_K: tl.constexpr, SUB: tl.constexpr):").replace(
        "        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)\n"
        "        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)\n"
        "        acc = tl.dot(a, b, acc)\n"
        "        a_ptrs += BLOCK_SIZE_K * stride_ak",
        "        for j in tl.static_range(SUB):\n"
        "            a = tl.load(a_ptrs + j * BLOCK_SIZE_K * stride_ak)\n"
        "            b = tl.load(b_ptrs + j * BLOCK_SIZE_K * stride_bk)\n"
        "            acc = tl.dot(a, b, acc)\n"
        "        a_ptrs += SUB * BLOCK_SIZE_K * stride_ak").replace("b_ptrs += BLOCK_SIZE_K", "b_ptrs += SUB * BLOCK_SIZE_K")
    assert "static_range" in split and "b_ptrs += SUB" in split
    a, b = _codes(lint_code(split, rules, select=["TL003"]), "TL003")
    shown = " ".join(a.notes + ([a.fix.edits[1].content] if a.fix else []))
    assert "j * BLOCK_SIZE_K + k * SUB * BLOCK_SIZE_K" in shown and "j * SUB" not in shown


def test_tl003_suggestion_for_a_transposed_view_describes_the_tensors_own_layout(rules):
    # The tile is read with unit stride along its rows: TMA needs the last dimension contiguous, so the
    # suggestion describes the tensor as it lies in memory and transposes the loaded tile.
    found = _codes(lint_code(TRANSPOSED_VIEW, rules, select=["TL003"]), "TL003")
    make, load = (edit.content for edit in found[1].fix.edits)
    assert "strides=[stride_y0, 1], block_shape=[BLOCK_N, BLOCK_K]" in make
    assert load == "tl.trans(y_desc.load([tl.program_id(1) * BLOCK_N, k]))"
    assert not any("is 1" in note for note in found[1].notes)


def test_tl003_suggestion_reads_a_unit_stride_the_kernel_assigns(rules):
    # `stride_am, stride_ak = 1, K` in the kernel (round x36a, a GPTQ Hessian X^T X): the A tile is a transposed view
    code = GEMM.replace("M, N, K, stride_am, stride_ak, stride_bk", "M, N, K, stride_bk").replace(
        "    pid_m = tl.program_id(0)\n", "    stride_am, stride_ak = 1, M\n    pid_m = tl.program_id(0)\n")
    a = _codes(lint_code(code, rules, select=["TL003"]), "TL003")[0]
    make, load = (edit.content for edit in a.fix.edits)
    assert "shape=[K, M], strides=[stride_ak, stride_am], block_shape=[BLOCK_K, BLOCK_M]" in make
    assert load == "tl.trans(a_desc.load([k, pid_m * BLOCK_M]))"


def test_tl003_suggestion_reads_the_inner_axis_off_the_launches(rules):
    # The B tile `offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn` of a weight stored [N, K] (round x37a,
    # a flash attention's K^T; x37c, a MoE backward): every launch passes stride_bk a later axis of the tensor than
    # stride_bn, so the tile is a transposed view of the weight's own layout
    def launched(stride_bk, stride_bn):
        return GEMM + ("\n\ndef run(a, w, c):\n    M, K = a.shape\n    N = w.shape[0]\n"
                       "    matmul_kernel[(1, 1)](a, w, c, M, N, K, a.stride(0), a.stride(1), "
                       f"{stride_bk}, {stride_bn}, BLOCK_M=64, BLOCK_N=64, BLOCK_K=64)\n")
    b = _codes(lint_code(launched("w.stride(1)", "w.stride(0)"), rules, select=["TL003"]), "TL003")[1]
    make, load = (edit.content for edit in b.fix.edits)
    assert "shape=[N, K], strides=[stride_bn, stride_bk], block_shape=[BLOCK_N, BLOCK_K]" in make
    assert load == "tl.trans(b_desc.load([pid_n * BLOCK_N, k]))"
    assert any("the launches pass it `w.stride(1)`" in note for note in b.notes)
    b = _codes(lint_code(launched("w.stride(0)", "w.stride(-1)"), rules, select=["TL003"]), "TL003")[1]
    assert "strides=[stride_bk, stride_bn]" in b.fix.edits[0].content  # the usual layout, read the same way
    for unknown in (("w.stride(1)", "v.stride(0)"), ("s_k", "s_n"), ("w.stride(1)", "w.stride(1)")):
        b = _codes(lint_code(launched(*unknown), rules, select=["TL003"]), "TL003")[1]
        assert "strides=[stride_bk, stride_bn]" in b.fix.edits[0].content
        assert any("assumes `stride_bn` is 1" in note for note in b.notes), unknown


def test_tl003_suggestion_reads_the_inner_axis_off_strides_the_host_unpacks(rules):
    # round x41a, a k-means assignment: `s_b, s_k, s_d = centroids.stride()`, the tile [D, BLOCK_K] takes s_d for
    # its rows and s_k for its columns: the rows' stride is the later axis, so the tile is a transposed view
    code = GEMM + ("\n\ndef run(a, w, c):\n    M, K = a.shape\n    N = w.shape[0]\n    s_wn, s_wk = w.stride()\n"
                   "    matmul_kernel[(1, 1)](a, w, c, M, N, K, a.stride(0), a.stride(1), s_wk, s_wn, "
                   "BLOCK_M=64, BLOCK_N=64, BLOCK_K=64)\n")
    b = _codes(lint_code(code, rules, select=["TL003"]), "TL003")[1]
    make, load = (edit.content for edit in b.fix.edits)
    assert "shape=[N, K], strides=[stride_bn, stride_bk], block_shape=[BLOCK_N, BLOCK_K]" in make
    assert load == "tl.trans(b_desc.load([pid_n * BLOCK_N, k]))"


def test_tl003_suggestion_reads_strides_spread_from_several_tensors(rules):
    # round x41b, a CS336 flash attention: `*q.stride(), *k.stride()` after `batch, n_queries, d = q.shape` binds
    # three strides each, so K^T's [D, B_K] tile takes k's last stride for its rows: a transposed view
    code = """import torch
import triton
import triton.language as tl


@triton.jit
def attn(q_ptr, k_ptr, o_ptr, sqb, sqn, sqd, skb, skn, skd, N_K, D: tl.constexpr, B_K: tl.constexpr, B_D: tl.constexpr):
    offs_d = tl.arange(0, B_D)
    acc = tl.zeros((16, B_K), dtype=tl.float32)
    q = tl.load(q_ptr + tl.arange(0, 16)[:, None] * sqn + offs_d[None, :] * sqd)
    for start in range(0, N_K, B_K):
        offs_k = start + tl.arange(0, B_K)
        kt = tl.load(k_ptr + tl.program_id(1) * skb + offs_d[:, None] * skd + offs_k[None, :] * skn)
        acc += tl.dot(q, kt)
    tl.store(o_ptr + tl.arange(0, 16)[:, None] * B_K + tl.arange(0, B_K)[None, :], acc)


def run(q, k):
    batch, n_queries, d = q.shape
    o = torch.empty_like(q)
    attn[(1, batch)](q, k, o, *q.stride(), *k.stride(), N_K=k.shape[1], D=d, B_K=16, B_D=64)
    return o
"""
    (finding,) = _codes(lint_code(code, rules, select=["TL003"]), "TL003")
    assert any("strides [skn, skd], block shape [B_K, B_D]" in note for note in finding.notes)
    unknown = code.replace("    batch, n_queries, d = q.shape\n", "    batch, d = q.shape[0], q.shape[2]\n")
    (finding,) = _codes(lint_code(unknown, rules, select=["TL003"]), "TL003")  # no rank known: strides unread
    assert any("strides [skd, skn]" in note for note in finding.notes)


def test_tl003_suggestion_reads_a_transposed_view_made_on_the_host(rules):
    # round x39b, a TriMul weight `ws.t().to(torch.float16)` returned by a helper and passed down to the launching
    # function: `w.stride(1)` is the later axis, but of a transposed view, so the earlier one is contiguous
    def launched(made):
        return GEMM + (f"\n\ndef pack(ws):\n    return {made}\n\n"
                       "def run(a, w, c):\n    M, K = a.shape\n    N = w.shape[1]\n"
                       "    matmul_kernel[(1, 1)](a, w, c, M, N, K, a.stride(0), a.stride(1), "
                       "w.stride(0), w.stride(1), BLOCK_M=64, BLOCK_N=64, BLOCK_K=64)\n\n"
                       "def forward(a, ws, c):\n    w = pack(ws)\n    run(a, w, c)\n")
    b = _codes(lint_code(launched("ws.t().to(torch.float16)"), rules, select=["TL003"]), "TL003")[1]
    make, load = (edit.content for edit in b.fix.edits)
    assert "shape=[N, K], strides=[stride_bn, stride_bk], block_shape=[BLOCK_N, BLOCK_K]" in make
    assert load == "tl.trans(b_desc.load([pid_n * BLOCK_N, k]))"
    assert any("`w.stride(0)`, the earlier axis of `w`, a transposed view" in note for note in b.notes)
    for unknown in ("ws.permute(1, 0)", "ws.t().contiguous()"):  # no claim either way; dense again: the usual layout
        b = _codes(lint_code(launched(unknown), rules, select=["TL003"]), "TL003")[1]
        assert "strides=[stride_bk, stride_bn]" in b.fix.edits[0].content, unknown


def test_tl003_no_suggestion_where_the_contiguous_stride_is_not_specialized(rules):
    # round x39b, OpenFold's triangle attention: `do_not_specialize` keeps the channel stride a runtime value,
    # never the constant 1 a descriptor's last stride must be, so pasted code would not compile
    code = GEMM.replace("@triton.jit", '@triton.jit(do_not_specialize=["stride_bn"])')
    b = _codes(lint_code(code, rules, select=["TL003"]), "TL003")[1]
    assert b.fix is None or not b.fix.edits
    assert any("`stride_bn`" in note and "do_not_specialize" in note for note in b.notes)
    a = _codes(lint_code(code, rules, select=["TL003"]), "TL003")[0]
    assert a.fix.edits  # the other operand's strides are specialized as usual


def test_tl003_descriptors_of_one_pointer_at_two_bases_get_names_of_their_own(rules):
    # round x39b, OpenFold's triangle attention: K tiles of rows i0 and i1 in one loop; pasted together, two
    # suggestions named `k_desc` would read the same rows
    code = textwrap.dedent("""\
        import triton
        import triton.language as tl

        @triton.jit
        def two_rows(q_ptr, k_ptr, o_ptr, i0, i1, J, ROW: tl.constexpr, BLOCK_N: tl.constexpr, CH: tl.constexpr):
            offs_c = tl.arange(0, CH)
            q = tl.load(q_ptr + tl.arange(0, 16)[:, None] * CH + offs_c[None, :])
            acc = tl.zeros((16, BLOCK_N), dtype=tl.float32)
            for n in range(0, J, BLOCK_N):
                offs_n = n + tl.arange(0, BLOCK_N)
                k0 = tl.load(k_ptr + i0 * J * ROW + offs_n[:, None] * ROW + offs_c[None, :], mask=offs_n[:, None] < J)
                k1 = tl.load(k_ptr + i1 * J * ROW + offs_n[:, None] * ROW + offs_c[None, :], mask=offs_n[:, None] < J)
                acc += tl.dot(q, tl.trans(k0)) + tl.dot(q, tl.trans(k1))
            tl.store(o_ptr + tl.arange(0, 16)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :], acc)
    """)
    first, second = _codes(lint_code(code, rules, select=["TL003"]), "TL003")
    assert first.fix.edits[0].content.lstrip().startswith("k1_desc = tl.make_tensor_descriptor(k_ptr + i0 * J * ROW")
    assert second.fix.edits[0].content.lstrip().startswith("k2_desc = tl.make_tensor_descriptor(k_ptr + i1 * J * ROW")
    assert second.fix.edits[1].content == "k2_desc.load([n, 0])"


def test_tl003_reports_the_loads_of_one_pointer_in_a_loop_once(rules):
    # `if EVEN_K:` arms loading the same tile with and without a mask (round x37a): one finding, at the masked load,
    # whose bounds give the descriptor's shape; the other load is a related line
    even_k = GEMM.replace("BLOCK_K: tl.constexpr):", "BLOCK_K: tl.constexpr, EVEN_K: tl.constexpr):").replace(
        "        a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak, mask=a_mask, other=0.0)\n",
        "        if EVEN_K:\n"
        "            a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak)\n"
        "        else:\n"
        "            a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak, mask=a_mask, other=0.0)\n")
    assert "if EVEN_K:" in even_k
    found = _codes(lint_code(even_k, rules, select=["TL003"]), "TL003")
    a = [d for d in found if "`a_ptr`" in d.message]
    assert len(a) == 1 and a[0].location.row == 18 and len(a[0].related) == 1
    assert any("Line 16 also loads the same tile in the loop" in note for note in a[0].notes)
    assert a[0].fix is not None and "shape=[M, K]" in a[0].fix.edits[0].content
    # the same pointer name assigned again between two loads (fla's column blocks of K) holds another tile
    again = GEMM.replace(
        "        a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak, mask=a_mask, other=0.0)\n",
        "        p_a = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak\n"
        "        a = tl.load(p_a, mask=a_mask, other=0.0)\n"
        "        acc = tl.dot(a, a, acc)\n"
        "        p_a = a_ptr + offs_m[:, None] * stride_am + (offs_k + K)[None, :] * stride_ak\n"
        "        a = tl.load(p_a, mask=a_mask, other=0.0)\n")
    assert again.count("p_a = ") == 2
    assert len([d for d in _codes(lint_code(again, rules, select=["TL003"]), "TL003") if "`a_ptr`" in d.message]) == 2


def test_tl003_descriptor_is_made_above_the_loops_that_leave_it_unchanged(rules):
    # a persistent kernel's tile loop around the K loop (round x37c): the descriptor is made once, above it
    persistent = GEMM.replace("    pid_m = tl.program_id(0)\n    pid_n = tl.program_id(1)\n",
                              "    for tile in range(tl.program_id(0), 64, 132):\n        pid_m = tile // 8\n"
                              "        pid_n = tile % 8\n")
    body = persistent.split("pid_n = tile % 8\n")[1]
    persistent = persistent.replace(body, textwrap.indent(body, "    "))
    a = _codes(lint_code(persistent, rules, select=["TL003"]), "TL003")[0]
    make = a.fix.edits[0]
    assert make.content.startswith("    a_desc = ") and make.location.row == 7  # above `for tile` (line 7)
    # a loop that changes an argument of the descriptor keeps it inside
    moving = persistent.replace("        pid_n = tile % 8\n", "        pid_n = tile % 8\n        M = M - 1\n")
    a = _codes(lint_code(moving, rules, select=["TL003"]), "TL003")[0]
    assert a.fix.edits[0].content.startswith("        a_desc = ")


def test_tl003_no_suggestion_where_the_base_moves_with_the_loop(rules):
    # `Q_ptr + h * stride_qh` loaded in `for h in range(n_heads)` (round x36a, DSA indexers): a descriptor made
    # before the loop cannot hold a base that names `h`
    code = GEMM.replace("a_ptr + offs_m[:, None] * stride_am", "a_ptr + k * N + offs_m[:, None] * stride_am")
    a = _codes(lint_code(code, rules, select=["TL003"]), "TL003")[0]
    assert a.fix is None or not a.fix.edits
    assert any("a base that stays fixed over the loop (it moves with `k`, the loop's variable)" in note for note in a.notes)
    # a bound that names the loop's variable (torchao's `rk[None, :] < k` in a loop counting down) is no shape
    code = GEMM.replace("a_mask = (offs_m[:, None] < M) & (offs_k[None, :] < K)",
                        "a_mask = (offs_m[:, None] < M) & (offs_k[None, :] < k + BLOCK_K)")
    a = _codes(lint_code(code, rules, select=["TL003"]), "TL003")[0]
    assert a.fix is None or not a.fix.edits
    assert any("a shape that stays fixed over the loop (it moves with `k`" in note for note in a.notes)


def test_tl003_suggestion_keeps_a_step_the_mask_does_not_bound_in_the_base(rules):
    # `a_ptr + kz * nsy * nsx + kj[:, None] * nsx + ki[None, :]` with the mask `kj < nsy` (round x36a, a dose
    # engine's per-plane GEMM): the step to plane kz is not bounded by nsy, so it is part of the base, not of
    # the row offset; a step the mask does bound (`(start + offs)[:, None] < N`) stays an offset
    code = GEMM.replace("a_ptr + offs_m[:, None] * stride_am", "a_ptr + pid_n * M * stride_am + offs_m[:, None] * stride_am")
    a = _codes(lint_code(code, rules, select=["TL003"]), "TL003")[0]
    make, load = (edit.content for edit in a.fix.edits)
    assert "make_tensor_descriptor(a_ptr + pid_n * M * stride_am, shape=[M, K]" in make
    assert load == "a_desc.load([pid_m * BLOCK_M, k])"
    bounded = code.replace("(offs_m[:, None] < M)", "((pid_n * M + offs_m)[:, None] < M)")
    a = _codes(lint_code(bounded, rules, select=["TL003"]), "TL003")[0]
    assert a.fix.edits[1].content == "a_desc.load([pid_m * BLOCK_M + pid_n * M, k])"


TRANSPOSED_VIEW = """\
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, y_ptr, out_ptr, M, N, K, stride_x0, stride_y0,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        offs_k = k + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + offs_m[:, None] * stride_x0 + offs_k[None, :], mask=offs_k[None, :] < K, other=0.0)
        yt = tl.load(y_ptr + offs_k[:, None] + offs_n[None, :] * stride_y0, mask=(offs_k[:, None] < K) & (offs_n[None, :] < N),
                     other=0.0)
        acc = tl.dot(x, yt, acc)
    tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], acc)
"""


def test_tl003_suggestion_is_never_applied(rules):
    result = lint_code(GEMM, rules, select=["TL003"], mode=FixMode.DIFF, unsafe=True)
    assert result.fixed is None


def test_tl003_gathered_rows_are_silent_even_through_a_pointer_variable(rules):
    code = GEMM.replace("offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)",
                        "offs_m = tl.load(c_ptr + pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int32)")
    rows = [d.location.row for d in _codes(lint_code(code, rules, select=["TL003"]), "TL003")]
    assert rows == [16]  # only the B tile: the A rows come from memory


# ---- TL002: the fix -------------------------------------------------------------------------------------
def test_tl002_fix_is_unsafe_and_applied_only_with_unsafe_fixes(rules):
    [finding] = _codes(lint_code(CHUNK_STATE, rules, select=["TL002"]), "TL002")
    assert finding.fix.applicability == "unsafe"
    assert lint_code(CHUNK_STATE, rules, select=["TL002"], mode=FixMode.DIFF).fixed is None
    fixed = lint_code(CHUNK_STATE, rules, select=["TL002"], mode=FixMode.DIFF, unsafe=True).fixed
    assert "b_h += tl.dot(tl.trans(b_v), tl.trans(b_k))" in fixed


def test_tl002_fix_cancels_double_transposes(rules):
    code = CHUNK_STATE.replace("tl.trans(tl.dot(b_k, b_v))", "tl.trans(tl.dot(tl.trans(b_v).T, b_k.T))")
    fixed = lint_code(code, rules, select=["TL002"], mode=FixMode.DIFF, unsafe=True).fixed
    assert "b_h += tl.dot(b_k, tl.trans(b_v))" in fixed


@pytest.mark.parametrize("extra", ["b_h", "input_precision='ieee'", "out_dtype=tl.float32"])
def test_tl002_no_fix_with_an_accumulator_or_dot_options(rules, extra):
    code = CHUNK_STATE.replace("tl.trans(tl.dot(b_k, b_v))", f"tl.trans(tl.dot(b_k, b_v, {extra}))")
    [finding] = _codes(lint_code(code, rules, select=["TL002"]), "TL002")
    assert finding.fix is None
    assert any("accumulator or extra arguments" in note for note in finding.notes)


def test_tl002_no_fix_when_the_second_operand_is_a_dot_result(rules):
    code = CHUNK_STATE.replace("b_h += tl.trans(tl.dot(b_k, b_v))",
                               "b_u = tl.dot(b_v, b_v)\n        b_h += tl.trans(tl.dot(b_k, b_u))")
    [finding] = _codes(lint_code(code, rules, select=["TL002"]), "TL002")
    assert finding.fix is None
    assert any("into the first operand" in note for note in finding.notes)


# ---- TL002: what is reported, and where ------------------------------------------------------------------
def test_tl002_message_names_the_value_its_origin_and_the_loop(rules):
    code = CHUNK_STATE.replace("b_h += tl.trans(tl.dot(b_k, b_v))",
                               "b_s = tl.dot(b_k, b_v) * 2.0\n        b_h += tl.trans(b_s)")
    [finding] = _codes(lint_code(code, rules, select=["TL002"]), "TL002")
    assert finding.severity == "warning"
    assert finding.message.startswith("Transpose of `b_s` in every iteration of the `for i_t` loop at line 10")
    assert finding.notes[0].startswith("`b_s` is computed at line 13 from a tl.dot result")


@pytest.mark.parametrize("feed, severity", [
    ("b_h = tl.dot(b_sT, b_v.to(tl.float16), b_h)", "info"),  # the first operand through a local and a cast
    ("b_h = tl.dot(b_v.to(tl.float16), b_sT, b_h)", "warning"),  # ... the second: folds away, not reported
    ("b_h = tl.dot(b_sT, b_v.to(tl.float16), b_h)\n        b_h += b_sT", "warning"),  # also in arithmetic
])
def test_tl002_first_operand_through_local_names_is_the_first_operand(rules, feed, severity):
    # x43e: `PT = tl.trans(P); PT = PT.to(tl.float16); dv += tl.dot(PT, dO)` is the measured first-operand case
    code = CHUNK_STATE.replace(
        "b_h += tl.trans(tl.dot(b_k, b_v))",
        "b_s = tl.dot(b_k, b_v)\n        b_sT = tl.trans(b_s)\n        b_sT = b_sT.to(tl.float16)\n        " + feed)
    found = _codes(lint_code(code, rules, select=["TL002"]), "TL002")
    if "tl.dot(b_v" in feed:
        assert found == []
    else:
        assert [d.severity for d in found] == [severity]


def test_tl002_reports_the_loop_in_which_the_value_changes(rules):
    # b_s is copied inside the inner loop but computed in the outer one: the transpose moves out of the
    # inner loop and runs once per outer iteration
    code = CHUNK_STATE.replace(
        "b_h += tl.trans(tl.dot(b_k, b_v))",
        "b_s = tl.dot(b_k, b_v)\n"
        "        for j in range(4):\n"
        "            b_c = b_s + 0.0\n"
        "            b_h += tl.trans(b_c)")
    [finding] = _codes(lint_code(code, rules, select=["TL002"]), "TL002")
    assert "`for i_t` loop at line 10" in finding.message


@pytest.mark.parametrize("use", [
    "tl.store(h_ptr + offs_v[:, None] * K + offs_k[None, :], tl.trans(tl.dot(b_k, b_v)))",
    "b_h = tl.dot(b_h.to(tl.float16), tl.trans(tl.dot(b_k, b_v)).to(tl.float16))",
])
def test_tl002_silent_where_the_transpose_folds_away(rules, use):
    code = CHUNK_STATE.replace("b_h += tl.trans(tl.dot(b_k, b_v))", use)
    assert _codes(lint_code(code, rules, select=["TL002"]), "TL002") == []


def test_tl002_does_not_depend_on_the_target(rules):
    assert len(_codes(lint_code(CHUNK_STATE, rules, select=["TL002"], target=None), "TL002")) == 1


# ---- both: files written for another accelerator ---------------------------------------------------------
@pytest.mark.parametrize("code, rule", [(CHUNK_STATE, "TL002"), (GEMM, "TL003")])
def test_other_backend_files_are_skipped_unless_configured(rules, code, rule):
    path = "ops/backends/triton_ascend/chunk.py"
    assert _codes(lint_code(code, rules, select=[rule], filename=path), rule) == []
    assert _codes(lint_code(code, rules, select=[rule], filename="ops/mm_gfx950.py"), rule) == []
    # AMD architecture families and AMD's FlyDSL (vllm: rdna_hybrid_w4a16.py, flydsl_ultraquant_decode.py)
    for amd_path in ("linear/mixed_precision/rdna_hybrid_w4a16.py", "linear/rdna3_w4a16.py", "ops/cdna3_gemm.py",
                     "attention/ops/flydsl_ultraquant_decode.py",
                     "qwen3.5-397b-mi300a-bespoke/skinny_gemm.py", "kernels/mi355x_gemm.py"):  # AMD Instinct (x36a)
        assert _codes(lint_code(code, rules, select=[rule], filename=amd_path), rule) == [], amd_path
    assert _codes(lint_code(code, rules, select=[rule], filename="ops/hipster.py"), rule) != []
    assert _codes(lint_code(code, rules, select=[rule], filename="ops/mixed_gemm.py"), rule) != []
    relinted = lint_code(code, rules, select=[rule], filename=path, options={"other-backend-names": []})
    assert _codes(relinted, rule) != []


_LAUNCH = "matmul_kernel[(1,)](a, b, c, 1, 1, 1, 1, 1, 1, 1, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)"


@pytest.mark.parametrize("host, reported", [
    (f"_is_hip = is_hip()\nif _is_hip:\n    def run(a, b, c):\n        {_LAUNCH}\n", False),
    (f"def run(a, b, c):\n    if not current_platform.is_rocm():\n        return torch.mm(a, b)\n    {_LAUNCH}\n", False),
    ("KERNEL = matmul_kernel if torch.version.hip is not None else None\n", False),
    (f"def run(a, b, c):\n    if vendor == 'amd':\n        {_LAUNCH}\n", False),
    (f"def run(a, b, c):\n    if is_hip():\n        return None\n    {_LAUNCH}\n", True),
    (f"def run(a, b, c):\n    if torch.version.hip is None:\n        {_LAUNCH}\n", True),
    (f"def run(a, b, c):\n    if is_hip():\n        {_LAUNCH}\n    else:\n        {_LAUNCH}\n", True),
    (f"def run(a, b, c):\n    if is_hip() or big:\n        {_LAUNCH}\n", True),
])
def test_kernels_used_only_on_another_backend_are_skipped(rules, host, reported):
    code = GEMM + "\n" + host
    assert bool(_codes(lint_code(code, rules, select=["TL003"]), "TL003")) == reported
    relinted = lint_code(code, rules, select=["TL003"], options={"other-backend-names": []})
    assert _codes(relinted, "TL003") != []


def test_kernels_named_after_another_backend_are_skipped(rules):
    code = GEMM.replace("def matmul_kernel(", "def matmul_kernel_gfx1250(")
    assert _codes(lint_code(code, rules, select=["TL003"]), "TL003") == []


# ---- the local data flow ---------------------------------------------------------------------------------
def test_flow_merges_branches_and_carries_values_around_loops():
    function = ast.parse(textwrap.dedent("""\
        def f(n, flag):
            x = 0
            if flag:
                x = 1
            y = x
            for i in range(n):
                z = y
                y = z + i
            return y
    """)).body[0]
    flow = FunctionFlow(function)
    names = {(n.id, n.lineno): n for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    assert sorted(d.stmt.lineno for d in flow.reaching(names[("x", 5)])) == [2, 4]
    assert sorted(d.stmt.lineno for d in flow.reaching(names[("y", 7)])) == [5, 8]
    assert [d.kind for d in flow.reaching(names[("n", 6)])] == ["param"]
    [loop] = [s for s in function.body if isinstance(s, ast.For)]
    assert flow.enclosing_loops(names[("z", 8)]) == [loop]
    assert flow.enclosing_loops(names[("n", 6)]) == []  # the iterable is evaluated outside the loop body


@settings(max_examples=300, deadline=None)
@given(word=st.text(alphabet="abcdgfhinpuxyz*?[]\n", max_size=6))
def test_backend_patterns_match_words_as_fnmatchcase_does(word):
    """Words and `word*` patterns are compared as words and prefixes, the others through fnmatch's regex: the
    same answers as one regex of every translated pattern."""
    import fnmatch
    import re

    from tritonlint.analysis.backends import _pattern_matcher

    patterns = ("ascend", "npu", "gcu*", "gfx*", "rdna*", "a?c", "x[yz]*", "*hip", "", "q*", "b*c*", "[")
    expected = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns)).match(word) is not None
    assert _pattern_matcher(patterns)(word) is expected


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ahipgfxmdAHIPb._ 09\u00e4\nqz", max_size=12))
def test_a_backend_prefix_is_found_at_word_starts_as_the_regex_found_it(text):
    import re

    from tritonlint.analysis.backends import _may_mention_backend

    for patterns in [("hip", "gfx*", "amd"), ("a.b", "x[y]", "q?z"), (), ("*x",), ("Hip", "ROCM")]:
        prefixes = [re.split(r"[*?\[]", p.lower(), maxsplit=1)[0] for p in patterns]
        expected = not prefixes or not all(prefixes) or re.search(
            r"(?<![a-z0-9])(?:" + "|".join(map(re.escape, prefixes)) + ")", text.lower()) is not None
        assert _may_mention_backend(text, patterns) is expected


def test_tl003_doc_lists_exactly_its_exemptions(rules):
    from tritonlint.rules.tl003_raw_2d_tile_load import EXEMPTIONS

    assert documented_exemptions(rules, "TL003") == exemption_docs(EXEMPTIONS)
