"""Messages are headlines: at most 160 characters on one line, naming what is flagged, with the details
(where a value came from, the evidence, the fix) in the notes; display-only suggestions can be pasted as
they are. Checked on every rule's `invalid` examples and on snippets shaped like the real kernels whose
messages used to run to hundreds of characters."""

from __future__ import annotations

import ast
import json
import textwrap

import pytest

from tests.helpers import lint_code, run_cli
from tritonlint.diagnostics import Diagnostic, Edit, Fix, Position
from tritonlint.fixes import apply_fixes
from tritonlint.reporting import Style, full, github, sarif
from tritonlint.ruleset import load_rules
from tritonlint.ruletest import lint_example
from tritonlint.templates import HEADLINE_LIMIT, fit_headline

RULES = load_rules()
EXAMPLES = [(rule, index, example) for rule in RULES for index, example in enumerate(rule.invalid)]

# Shaped after corpus kernels whose findings had the longest messages (flash-attention forward with six
# flags left out of the key, a backward pass loading through a long base expression, a transposed product
# of casts, an autotuned launch with several problems).
FLASH_KEY = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def apply_softcap(S, softcap, is_softcap: tl.constexpr):
        if is_softcap:
            S = softcap * tl.sigmoid(S / softcap)
        return S


    @triton.autotune(configs=[triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}), triton.Config({"BLOCK_M": 128, "BLOCK_N": 64})],
                     key=["d", "is_dropout"])
    @triton.jit
    def flash_fwd_kernel(q_ptr, o_ptr, softcap, seqlen_k, d, is_dropout, window_size_left, window_size_right,
                         is_softcap: tl.constexpr, return_softmax: tl.constexpr, is_causal: tl.constexpr,
                         is_local: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        start_m = tl.program_id(0)
        acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
        col_min = tl.maximum(start_m * BLOCK_M - window_size_left, 0)
        col_max = tl.minimum(start_m * BLOCK_M + window_size_right, seqlen_k)
        for col_start in tl.range(col_min, col_max, step=BLOCK_N):
            s = tl.load(q_ptr + col_start + tl.arange(0, BLOCK_M))
            if is_causal | is_local:
                s = s * 0.5
            acc += apply_softcap(s, softcap, is_softcap)
        if return_softmax:
            acc = acc * 2.0
        tl.store(o_ptr + start_m * BLOCK_M + tl.arange(0, BLOCK_M), acc)
    """)

LONG_BASE = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def attention_backward_dq_kernel(grad_output_ptr, value_ptr, grad_query_ptr, seq_len, head_dim, batch_id,
                                     head_id, grad_out_batch_stride, grad_out_head_stride, grad_out_seq_stride,
                                     value_seq_stride, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_K: tl.constexpr):
        pid = tl.program_id(0)
        offs_m = pid * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_K), dtype=tl.float32)
        for k_start in range(0, head_dim, BLOCK_SIZE_K):
            offs_k = k_start + tl.arange(0, BLOCK_SIZE_K)
            grad_out = tl.load(grad_output_ptr + batch_id * grad_out_batch_stride + head_id * grad_out_head_stride
                               + offs_m[:, None] * grad_out_seq_stride + offs_k[None, :],
                               mask=(offs_m[:, None] < seq_len) & (offs_k[None, :] < head_dim), other=0.0)
            value = tl.load(value_ptr + offs_k[:, None] * value_seq_stride + offs_k[None, :],
                            mask=(offs_k[:, None] < head_dim) & (offs_k[None, :] < head_dim), other=0.0)
            acc += tl.dot(grad_out, value)
        tl.store(grad_query_ptr + offs_m[:, None] * BLOCK_SIZE_K + tl.arange(0, BLOCK_SIZE_K)[None, :], acc)
    """)

CAST_PRODUCT = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def chunk_bwd_kernel_dqkv(q, do, dh, T, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr):
        b_dh = tl.zeros([K, V], dtype=tl.float32)
        for i_t in range(T // BT):
            b_q = tl.load(q + i_t * BT * K + tl.arange(0, BT)[:, None] * K + tl.arange(0, K)[None, :])
            b_do = tl.load(do + i_t * BT * V + tl.arange(0, BT)[:, None] * V + tl.arange(0, V)[None, :])
            b_dh += tl.trans(tl.dot(tl.trans(b_q.to(b_q.dtype)), b_do.to(b_q.dtype)) * 0.125 + b_dh * 0.5)
        tl.store(dh + tl.arange(0, K)[:, None] * V + tl.arange(0, V)[None, :], b_dh)
    """)

TWO_PROBLEMS = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.autotune(configs=[triton.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 32}),
                              triton.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 64})], key=["n_rows"])
    @triton.jit
    def fused_rms_norm_backward_kernel(x_ptr, n_rows, n_cols, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
        offs = tl.program_id(0) * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n_rows), mask=offs < n_rows)


    def rms_norm_backward(x, block_rows_for_the_host=128):
        n_rows, n_cols = x.shape
        grid = (triton.cdiv(n_rows, block_rows_for_the_host), triton.cdiv(n_cols, 64))
        fused_rms_norm_backward_kernel[grid](x, n_rows, n_cols, BLOCK_SIZE_M=block_rows_for_the_host)
    """)

# A scalar pointer loaded under a block mask, both long expressions (round R171s: the headline ran past its limit).
SCALAR_POINTER = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def l2_norm_rows(in_ptr, out_ptr, d, BLOCK_SIZE: tl.constexpr):
        row_offset = tl.program_id(0) * d
        acc = 0.0
        for i in range(0, d, BLOCK_SIZE):
            x = tl.load(in_ptr + row_offset + i, mask=i + tl.arange(0, BLOCK_SIZE) < d, other=0.0)
            acc += tl.sum(x * x)
        tl.store(out_ptr + tl.program_id(0), acc)
    """)

SNIPPETS = {"TL006": FLASH_KEY, "TL003": LONG_BASE, "TL002": CAST_PRODUCT, "TL004": TWO_PROBLEMS,
            "TL113": SCALAR_POINTER}


def _assert_headline(d: Diagnostic) -> None:
    assert len(d.message) <= HEADLINE_LIMIT, (d.code, len(d.message), d.message)
    assert "\n" not in d.message and "\r" not in d.message, d.message
    assert not d.message.endswith("..."), f"the headline was cut: {d.message}"  # shorter prose, not a cut
    assert all(note and "\n" not in note for note in d.notes), d.notes


@pytest.mark.parametrize(("rule", "index", "example"), EXAMPLES, ids=[f"{r.id}-{i}" for r, i, _ in EXAMPLES])
def test_every_invalid_example_gets_a_headline(rule, index, example):
    found = [d for d in lint_example(example.code, RULES, rule.id, options=example.options).diagnostics
             if d.code == rule.id]
    assert found
    for d in found:
        _assert_headline(d)


@pytest.mark.parametrize("code", sorted(SNIPPETS))
def test_real_code_shapes_get_a_headline_and_the_details_as_notes(code):
    found = [d for d in lint_code(SNIPPETS[code], RULES, select=[code], target="sm_90").diagnostics if d.code == code]
    assert found, code
    for d in found:
        _assert_headline(d)
        assert d.notes, "the details are in the notes"


def test_tl006_lists_each_left_out_argument_in_a_note():
    (finding,) = lint_code(FLASH_KEY, RULES, select=["TL006"]).diagnostics
    assert finding.message.startswith('autotune key `["d", "is_dropout"]` leaves out ')
    assert " and " in finding.message and "more:" in finding.message  # four names: those that fit, then a count
    reasons = [note for note in finding.notes if " code path " in note or " trip count " in note]
    assert len(reasons) == 4
    assert any(note.startswith("Evidence: ") for note in finding.notes)


def test_tl004_keeps_the_second_problem_for_the_notes():
    (finding,) = lint_code(TWO_PROBLEMS, RULES, select=["TL004"]).diagnostics
    assert finding.message.endswith("(+1 more in the notes)")
    assert any(note.startswith("It sizes the grid with host block `block_rows_for_the_host`") for note in finding.notes)


def test_syntax_error_headline_names_the_python():
    result = run_cli("-", "--output-format", "json", stdin="def f(:\n")
    (finding,) = json.loads(result.stdout)
    assert finding["message"].startswith("SyntaxError: ") and "(as parsed by Python 3." in finding["message"]
    assert finding["notes"] == []


def test_fit_headline_cuts_the_longest_code_first():
    long = "`" + "a_very_long_base_pointer_expression + " * 6 + "x` [BLOCK_M, BLOCK_K] feeds `tl.dot` in the loop"
    fitted = fit_headline(long)
    assert len(fitted) <= HEADLINE_LIMIT and fitted.endswith("[BLOCK_M, BLOCK_K] feeds `tl.dot` in the loop")
    assert fit_headline("short\n message") == "short message"


# ---- TL003's suggestion: pasted where it is shown, it parses; no placeholders ------------------------------
GEMM = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            offs_k = k + tl.arange(0, BLOCK_K)
            a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak,
                        mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0.0)
            b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                        mask=(offs_k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
            acc += tl.dot(a, b)
        tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)
    """)


def _suggestions(code: str) -> list[Diagnostic]:
    found = [d for d in lint_code(code, RULES, select=["TL003"], target="sm_90").diagnostics
             if d.fix is not None and d.fix.applicability == "display-only"]
    assert all(d.fix.edits for d in found)
    return found


# a file indented with tabs (round x40b): the descriptor line takes the loop's own tab, not one space per column
@pytest.mark.parametrize("code", [GEMM, GEMM.replace("    ", "\t"), LONG_BASE,
                                  *(e.code for r, _, e in EXAMPLES if r.id == "TL003")])
def test_tl003_suggestion_parses_where_it_is_pasted(code):
    for d in _suggestions(code):
        pasted, _ = apply_fixes(code, [d.fix])
        ast.parse(pasted)
        for edit in d.fix.edits:
            ast.parse(edit.content.strip())  # each piece is a statement or an expression of its own
            assert "..." not in edit.content and "<" not in edit.content, edit.content


def test_tl003_suggestion_shows_whole_lines_at_the_code_indentation():
    (a, b) = _suggestions(GEMM)
    lines = GEMM.splitlines()
    shown = full([a], Style(False), sources=lambda _: lines).splitlines()
    start = shown.index(next(line for line in shown if line.startswith("suggestion: ")))
    assert shown[start + 1] == "  insert before line 13:"
    assert shown[start + 2] == ("    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, stride_ak], "
                                "block_shape=[BLOCK_M, BLOCK_K])")
    assert shown[start + 3] == "  lines 15-16, as it would read:"
    assert shown[start + 4] == "        a = a_desc.load([pid_m * BLOCK_M, k])"
    # the blocks share one margin (the loop's indentation, 4, taken off): put back and pasted over lines
    # 15-16 and before line 13, they give a kernel that parses
    margin = " " * 4
    make, load = (margin + shown[start + row][4:] for row in (2, 4))
    ast.parse("\n".join(lines[:12] + [make] + lines[12:14] + [load] + lines[16:]))


def test_tl003_names_what_it_cannot_read_off_the_code_instead_of_a_placeholder():
    code = GEMM.replace("mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0.0", "")
    found = [d for d in lint_code(code, RULES, select=["TL003"], target="sm_90").diagnostics]
    a = next(d for d in found if "`a_ptr`" in d.message)
    assert a.fix is None
    (note,) = [n for n in a.notes if "no descriptor code is suggested" in n]
    assert "extent along its first dimension" in note and "strides [stride_am, stride_ak]" in note


# ---- the formats ----------------------------------------------------------------------------------------
def _finding(notes: list[str], fix: Fix | None = None) -> Diagnostic:
    return Diagnostic(code="TL001", name="static-range-long-unroll", severity="warning", category="performance",
                      message="headline", filename="k.py", location=Position(2, 5), end_location=Position(2, 9),
                      start=0, end=0, fix=fix, notes=notes)


def test_github_puts_each_note_on_its_own_line():
    assert github([_finding(["Trip count 32: literal bounds.", "Evidence: 50% slower."])]) == (
        "::warning title=tritonlint (TL001),file=k.py,line=2,col=5,endLine=2,endColumn=9"
        "::k.py:2:5: TL001 headline%0ATrip count 32: literal bounds.%0AEvidence: 50%25 slower.")


def test_sarif_message_is_the_headline_and_the_notes_are_properties():
    log = json.loads(sarif([_finding(["one", "two"])], rules=[]))
    (result,) = log["runs"][0]["results"]
    assert result["message"] == {"text": "headline"} and result["properties"] == {"notes": ["one", "two"]}


def test_full_shows_a_suggestion_without_the_source_as_the_edit_text():
    fix = Fix("display-only", "Try this:", (Edit(0, 0, "x = 1\n", Position(1, 1), Position(1, 1)),))
    assert full([_finding([], fix)], Style(False), sources=lambda _: None).splitlines()[-2:] == [
        "suggestion: Try this:", "    x = 1"]


def test_json_has_the_headline_and_the_notes_apart(tmp_path):
    (tmp_path / "k.py").write_text(textwrap.dedent("""\
        import triton
        import triton.language as tl


        @triton.jit
        def k(x_ptr):
            for i in tl.static_range(32):
                tl.store(x_ptr + i, tl.load(x_ptr + i) * 2)
        """))
    result = run_cli("k.py", "--output-format", "json", cwd=tmp_path)
    (finding,) = json.loads(result.stdout)
    assert finding["message"] == ("`tl.static_range` unrolls 32 iterations; the body moves memory but runs no "
                                  "tl.dot: the cost is compile time, not run time")
    assert finding["notes"][0] == "Trip count 32: literal bounds."
    assert finding["notes"][1].startswith("Evidence: ")


def test_tl001_notes_the_static_range_loops_unrolled_inside_each_iteration():
    """The unrolled code is the product of the trip counts: a QR panel kernel's 32 columns each unroll four chunk
    loops (round x35b, 83 s to compile); the note names them, so the finding does not understate the cost."""
    code = textwrap.dedent("""\
        import triton
        import triton.language as tl

        @triton.jit
        def panel(x_ptr, n: tl.constexpr):
            for j in tl.static_range(0, 32):
                for r in tl.static_range(0, n, 256):
                    tl.store(x_ptr + r + j, tl.load(x_ptr + r + j) * 2.0)
        """)
    (finding,) = [d for d in lint_code(code, RULES, select=["TL001"]).diagnostics if d.code == "TL001"]
    assert finding.notes[0] == ("Trip count 32: literal bounds; each iteration also unrolls the tl.static_range loop at "
                                "line 7.")


def test_tl001_notes_a_compile_time_test_around_the_whole_body():
    """`for rt in tl.static_range(64): if rt < MAX_TILES:` emits only the iterations that pass (round x35b: 16-32
    of 64 bodies): the note says so, beside the literal trip count; a run-time test (`if j < n`) is not named."""
    code = textwrap.dedent("""\
        import triton
        import triton.language as tl

        @triton.jit
        def tiles(x_ptr, n, MAX_TILES: tl.constexpr):
            for rt in tl.static_range(0, 64):
                if rt < MAX_TILES:
                    tl.store(x_ptr + rt, tl.load(x_ptr + rt) * 2.0)
            for j in tl.static_range(0, 64):
                if j < n:
                    tl.store(x_ptr + j, 1.0)
        """)
    first, second = [d for d in lint_code(code, RULES, select=["TL001"]).diagnostics if d.code == "TL001"]
    assert first.notes[0] == ("Trip count 64: literal bounds; the test `rt < MAX_TILES` at line 7 is settled while "
                              "compiling, so the iterations it fails emit no code.")
    assert second.notes[0] == "Trip count 64: literal bounds."


def test_tl001_offers_the_fix_where_a_branch_reads_loaded_data_or_the_program_id():
    """A branch on values loaded at the loop variable's address, or on the program id, is decided when the kernel
    runs, unrolled or not (round j39d: a block map's `if block_id >= start and block_id < end`): `tl.range` keeps
    it, so the fix is offered; a branch on the loop variable alone still needs the constant."""
    code = textwrap.dedent("""\
        import triton
        import triton.language as tl

        @triton.jit
        def block_map(offsets_ptr, out_ptr):
            block_id = tl.program_id(0)
            expert_id = tl.load(offsets_ptr + 32)
            for e in tl.static_range(32):
                start = tl.load(offsets_ptr + e)
                end = tl.load(offsets_ptr + e + 1)
                if block_id >= start and block_id < end:
                    expert_id = e
            for e in tl.static_range(32):
                if e % 2 == 0:
                    tl.store(out_ptr + e, 1.0)
            tl.store(out_ptr + block_id, expert_id)
        """)
    first, second = [d for d in lint_code(code, RULES, select=["TL001"]).diagnostics if d.code == "TL001"]
    assert first.fix is not None and not any(n.startswith("No fix offered") for n in first.notes)
    assert second.fix is None and second.notes[-1] == ("No fix offered: the loop variable is used as a compile-time "
                                                       "constant (it decides a branch at line 14 that the unrolled loop "
                                                       "settles while compiling).")
