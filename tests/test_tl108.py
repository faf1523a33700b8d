"""TL108's notes and fix applicability where the fill alone does not settle every reduction, or where other
loads with no `other` share the lanes."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import cli_findings, lint_code, run_cli
from tritonlint.ruleset import load_rules

RULES = [rule for rule in load_rules() if rule.id == "TL108"]

LAYER_NORM = textwrap.dedent("""\
    import triton
    import triton.language as tl

    @triton.jit
    def layer_norm(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + tl.program_id(0) * n_cols + cols, mask=mask)
        mean = tl.sum(x, axis=0) / n_cols
        var = tl.sum((x - mean) ** 2, axis=0) / n_cols
        tl.store(y_ptr + tl.program_id(0) * n_cols + cols, (x - mean) / tl.sqrt(var + 1e-5), mask=mask)
    """)

DIFFERENCE = textwrap.dedent("""\
    import triton
    import triton.language as tl

    @triton.jit
    def new_tokens(seq_ptr, pre_ptr, out_ptr, BATCH: tl.constexpr):
        offs = tl.arange(0, BATCH)
        seq = tl.load(seq_ptr + offs, mask=offs < tl.program_id(0))
        pre = tl.load(pre_ptr + offs, mask=offs < tl.program_id(0))
        tl.store(out_ptr, tl.sum(seq - pre))
    """)


def test_undefined_lanes_no_single_fill_settles_get_a_display_only_fix_and_the_where_it_needs():
    (finding,) = lint_code(LAYER_NORM, RULES).diagnostics
    assert finding.fix is not None and finding.fix.applicability == "display-only"
    assert "which needs `other=0.0`" in finding.message
    also, note = finding.notes
    assert also == "Also reached, needing 0: `tl.sum((x - mean) ** 2, axis=0)` at line 10."
    assert "`tl.sum((x - mean) ** 2, axis=0)` at line 10" in note and "tl.where(mask, ..., 0.0)" in note


def test_a_reduction_reached_by_both_operands_is_named_once():
    squared = LAYER_NORM.replace("tl.sum((x - mean) ** 2, axis=0)", "tl.sum((x - mean) * (x - mean), axis=0)")
    (finding,) = lint_code(squared, RULES).diagnostics
    assert [note.startswith("Also reached") for note in finding.notes] == [True, False]


def test_a_neutral_fill_that_centring_spoils_needs_a_where_and_gets_no_fix():
    padded = LAYER_NORM.replace("mask=mask)", "mask=mask, other=0.0)")
    (finding,) = lint_code(padded, RULES).diagnostics
    assert finding.severity == "warning" and finding.location.row == 8
    assert "at line 10, which needs them re-masked with `tl.where`" in finding.message
    assert finding.fix is None or not finding.fix.edits
    assert "tl.where(mask, value, 0.0)" in finding.notes[0]
    # computed with another tile on the way (`* g`), the lanes cannot be told: no finding
    other_tile = padded.replace("(x - mean) ** 2", "(x - mean) * tl.load(y_ptr + cols)")
    assert not lint_code(other_tile, RULES).diagnostics


def test_loads_sharing_the_lanes_with_no_other_are_named_and_the_fix_stays_safe():
    findings = sorted(lint_code(DIFFERENCE, RULES).diagnostics, key=lambda d: d.start)
    assert [d.location.row for d in findings] == [7, 8]
    assert all(d.fix is not None and d.fix.applicability == "safe" for d in findings)
    assert "The load at line 8 with no `other` turns off the same lanes" in findings[0].notes[0]
    assert "The load at line 7 with no `other`" in findings[1].notes[0]


HEAD_PROBABILITIES = textwrap.dedent("""\
    import triton
    import triton.language as tl

    @triton.jit
    def head_probs(q_ptr, k_ptr, lse_ptr, p_ptr, G, BLOCK_H: tl.constexpr, BLOCK_M: tl.constexpr, D: tl.constexpr):
        heads = tl.arange(0, BLOCK_H)
        lse = tl.load(lse_ptr + heads, mask=heads < G)
        q = tl.load(q_ptr + heads[:, None] * D + tl.arange(0, D)[None, :], mask=heads[:, None] < G)
        k = tl.load(k_ptr + tl.arange(0, BLOCK_M)[:, None] * D + tl.arange(0, D)[None, :])
        s = tl.dot(q, tl.trans(k))
        p = tl.sum(tl.exp2(s - lse[:, None]), 0)
        tl.store(p_ptr + tl.arange(0, BLOCK_M), p)
    """)


def test_no_note_asks_to_pad_a_dot_operand_with_an_infinity():
    """The query rows padded like the log-sum-exp meet the keys in `tl.dot`: +inf there would come out as NaN
    (round R304s), so only the log-sum-exp is asked for +inf."""
    findings = lint_code(HEAD_PROBABILITIES, RULES).diagnostics
    assert [d.location.row for d in findings] == [7]
    assert 'other=float("inf")' in findings[0].message
    assert not any("line 8" in note for note in findings[0].notes)


REDUCTION_TREE = textwrap.dedent("""\
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def tile_absmax(x_ptr, tile_max_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(tile_max_ptr + tl.program_id(0), tl.max(tl.abs(x), axis=0))

    @triton.jit
    def reduce_max(input_ptr, output_ptr, num_values, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        values = tl.load(input_ptr + offs, mask=offs < num_values, other=0.0)
        tl.store(output_ptr + tl.program_id(0), tl.max(values, axis=0))

    def absmax(x, other):
        num_tiles = triton.cdiv(x.numel(), 1024)
        tile_max = torch.empty(num_tiles, device=x.device, dtype=torch.float32)
        tile_absmax[(num_tiles,)](x, tile_max, x.numel(), BLOCK=1024)
        levels = [tile_max]
        num_values = num_tiles
        while num_values > 1:
            count = triton.cdiv(num_values, 1024)
            reduced = torch.empty(count, device=x.device, dtype=torch.float32)
            reduce_max[(count,)](levels[-1], reduced, num_values, BLOCK=1024)
            levels.append(reduced)
            num_values = count
        ELSE
        return levels[-1]
    """)


@pytest.mark.parametrize("other_use, reported", [
    ("pass", False),  # every level holds maxima of |x|: 0 is neutral
    ("levels.append(other)", True),  # a buffer no kernel of the function writes
    ("levels[0] = other", True),  # an item replaced otherwise
    ("levels.extend([other])", True),  # items added otherwise
    ("print(levels)", True),  # the list handed elsewhere
])
def test_a_reduction_tree_kept_in_a_list_is_followed_by_induction(other_use, reported):
    code = REDUCTION_TREE.replace("ELSE", other_use)
    assert bool(lint_code(code, RULES).diagnostics) is reported


ROWS_THEN_BLOCK = textwrap.dedent("""\
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
        rows = tl.arange(0, BM)
        cols = tl.arange(0, BN)
        x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=MASK)
        out = FIRST
        tl.store(out_ptr, SECOND)
    """)


@pytest.mark.parametrize("mask, first, second, reported", [
    ("rows[:, None] < M", "tl.sum(x, axis=1)", "tl.max(out, axis=0)", True),  # padded rows' sums reach the max
    ("cols[None, :] < N", "tl.sum(x, axis=0)", "tl.max(out, axis=0)", True),  # padded columns, the axes renumbered
    ("cols[None, :] < N", "tl.sum(x, axis=0)", "tl.max(out[None, :], axis=0)", False),  # a new shape: not followed
    ("rows[:, None] < M", "tl.sum(x, axis=1, keep_dims=True)", "tl.max(out, axis=0)", False),  # kept dims: not followed
    ("rows[:, None] < M", "tl.sum(x, axis=1)", "tl.max(tl.where(rows < M, out, float('-inf')), axis=0)", False),
])
def test_lanes_a_reduction_along_an_unmasked_axis_passes_on_are_judged_again(mask, first, second, reported):
    code = ROWS_THEN_BLOCK.replace("MASK", mask).replace("FIRST", first).replace("SECOND", second)
    assert bool(lint_code(code, RULES).diagnostics) is reported


TWO_PASS_LSE = textwrap.dedent("""\
    import triton
    import triton.language as tl

    @triton.jit
    def row_lse(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        m = -float("inf")
        total = 0.0
        for start in range(0, n_cols, BLOCK):
            x = tl.load(x_ptr + start + offs, mask=start + offs < n_cols, other=float("-inf"))
            m_new = tl.maximum(m, tl.max(x, axis=0))
            m = m_new
        for start in range(0, n_cols, BLOCK):
            x = tl.load(x_ptr + start + offs, mask=start + offs < n_cols, other=0.0)
            total += tl.sum(tl.exp(x - m), axis=0)
        tl.store(out_ptr, m + tl.log(total))
    """)


def test_a_running_maximum_is_past_its_start_where_lanes_are_read():
    # m = m_new folds m: the -inf start is left only when the first loop never runs, and then the second,
    # over the same range, reads no lane
    (finding,) = lint_code(TWO_PASS_LSE, RULES).diagnostics
    assert 'which needs `other=float("-inf")`' in finding.message
    first, second = TWO_PASS_LSE.split("range(0, n_cols, BLOCK)", 1)
    other_range = first + "range(0, n_cols // 2, BLOCK)" + second.replace("< n_cols,", "< n_cols // 2,", 1)
    # a max over another range (half the row) may be read with m still -inf (n_cols = 1), where a -inf fill
    # gives NaN: a tl.where, no fill
    (finding,) = lint_code(other_range, RULES).diagnostics
    assert "re-masked with `tl.where`" in finding.message and finding.fix is None


def test_a_start_that_a_branch_may_keep_is_a_value_of_its_own():
    code = textwrap.dedent("""\
        import triton
        import triton.language as tl

        @triton.jit
        def row_lse(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            m = -float("inf")
            if n_cols > BLOCK:
                m = tl.maximum(m, tl.load(out_ptr))
            x = tl.load(x_ptr + offs, mask=offs < n_cols, other=0.0)
            tl.store(out_ptr, tl.sum(tl.exp(x - m), axis=0))
        """)
    # exp(0 - -inf) or exp(-inf - -inf): no fill is shown right; only re-masking the exponentials before the sum is
    [found] = lint_code(code, RULES).diagnostics
    assert "re-masked with `tl.where`" in found.message and found.fix is None


HINGE = textwrap.dedent("""\
    import triton
    import triton.language as tl

    @triton.jit
    def hinge(pred_ptr, target_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        mask = offs < n
        pred = tl.load(pred_ptr + offs, mask=mask, other=0.0)
        target = tl.load(target_ptr + offs, mask=mask, other=0.0)
        margin = 1.0 - pred * target
        tl.store(out_ptr, tl.sum(tl.where(margin > 0, margin, 0.0), axis=0))
    """)


@pytest.mark.parametrize(("margin", "reported"), [
    ("1.0 - pred * target", True),  # 1 - 0 * 0 = 1 > 0: kept
    ("-1.0 - pred * target", False),  # -1 on the padded lanes: the where picks 0.0
    ("tl.maximum(1.0 - pred * target, 0.0)", True),  # max(1, 0)
    ("tl.minimum(1.0 - pred * target, 0.0)", False),  # min(1, 0)
    ("1.0 - pred * tl.load(target_ptr + offs, mask=mask, other=2.0)", True),  # padded otherwise: not alike
])
def test_padded_lanes_are_evaluated_exactly_where_a_condition_reads_them(margin, reported):
    code = HINGE.replace("1.0 - pred * target", margin)
    findings = lint_code(code, RULES).diagnostics
    assert [f.location.row for f in findings] == ([8] if reported else [])
    if reported and "other=2.0" not in margin:
        assert findings[0].notes[-1] == "The math also reads the load at line 9, padded alike: this finding stands for it."


BIASED_MAX = textwrap.dedent("""\
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def biased_max(s_ptr, bias_ptr, out_ptr, n, MASK_VALUE: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        mask = offs < n
        logits = tl.where(mask, tl.load(s_ptr + offs, mask=mask), MASK_VALUE)
        bias = tl.load(bias_ptr + offs, mask=mask, other=0.0)
        tl.store(out_ptr, tl.max(logits + bias, axis=0))

    def launch(s, bias, out):
        biased_max[(1,)](s, bias, out, s.numel(), MASK_VALUE=VALUE, BLOCK=1024)
    """)


@pytest.mark.parametrize(("value", "reported"), [
    ("-torch.finfo(torch.float32).max", False),
    ("-float('inf')", False),
    ("-1e30", False),
    ("torch.finfo(torch.float16).min", False),
    ("0.0", True),  # 0 + 0 before a max: a warning
    ("s.min()", True),  # a host value of the data: not a constant
])
def test_a_parameter_every_launch_passes_one_constant_takes_its_value(value, reported):
    findings = lint_code(BIASED_MAX.replace("VALUE, BLOCK", f"{value}, BLOCK"), RULES).diagnostics
    assert bool(findings) is reported


def test_a_reduction_nothing_reads_shows_no_fill():
    code = HINGE.replace("    tl.store(out_ptr, tl.sum(tl.where(margin > 0, margin, 0.0), axis=0))\n",
                         "    left_over = tl.sum(tl.where(margin > 0, margin, 0.0), axis=0)\n"
                         "    tl.store(out_ptr + offs, margin, mask=mask)\n")
    assert not lint_code(code, RULES).diagnostics
    read = code.replace("tl.store(out_ptr + offs, margin, mask=mask)", "tl.store(out_ptr, left_over)")
    assert [f.location.row for f in lint_code(read, RULES).diagnostics] == [8]


ENTROPY = textwrap.dedent("""\
    import triton
    import triton.language as tl

    @triton.jit
    def entropy(p_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        p = tl.load(p_ptr + offs, mask=offs < n, other=0.0)
        tl.store(out_ptr, -tl.sum(p * tl.log(p), axis=0))
    """)


@pytest.mark.parametrize(("term", "nan"), [
    ("p * tl.log(p)", True),  # 0 * log(0) = 0 * -inf
    ("p * tl.log(p + 1e-9)", False),  # 0 * a finite log
    ("tl.log(1.0 + p)", False),  # log(1) = 0
    ("p * (tl.log(p) - tl.log(p))", True),  # -inf - -inf
    ("tl.where(offs < n, p * tl.log(p), 0.0)", False),  # re-masked
])
def test_zero_times_an_exact_infinity_is_nan_at_a_sum(term, nan):
    findings = lint_code(ENTROPY.replace("p * tl.log(p)", term), RULES).diagnostics
    assert [f.severity for f in findings] == (["error"] if nan else [])
    if nan:
        assert "the math makes its lanes NaN" in findings[0].message
        assert findings[0].fix is None or not findings[0].fix.edits


def test_a_huge_finite_fill_times_zero_is_zero():
    code = textwrap.dedent("""\
        import triton
        import triton.language as tl

        @triton.jit
        def soft_ce(logits_ptr, labels_ptr, loss_ptr, n, lse, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            mask = offs < n
            logits = tl.load(logits_ptr + offs, mask=mask, other=FILL)
            labels = tl.load(labels_ptr + offs, mask=mask, other=0.0)
            tl.store(loss_ptr, tl.max(logits, axis=0) + tl.sum(labels * (lse - logits), axis=0))
        """)
    assert not lint_code(code.replace("FILL", "-1e30"), RULES).diagnostics
    (finding,) = lint_code(code.replace("FILL", 'float("-inf")'), RULES).diagnostics  # labels * +inf
    assert finding.location.row == 8 and "NaN" in finding.message


def test_math_the_classes_call_finite_is_worked_out_exactly_where_it_can_be():
    clamped = ENTROPY.replace("p = tl.load(p_ptr + offs, mask=offs < n, other=0.0)",
                              "p = tl.maximum(tl.load(p_ptr + offs, mask=offs < n, other=0.0), 1e-12)")
    assert not lint_code(clamped.replace("p * tl.log(p)", "p * (tl.log(p) - tl.log(p))"), RULES).diagnostics  # 0
    assert not lint_code(clamped, RULES).diagnostics  # 1e-12 * log(1e-12): -2.8e-11 a lane, negligible
    (finding,) = lint_code(clamped.replace("1e-12", "1e-3"), RULES).diagnostics  # 1e-3 * log(1e-3) is not 0
    assert "re-masked with `tl.where`" in finding.message


@pytest.mark.parametrize("term, reported", [
    ("x * scale[:, None] + shift[:, None]", True),  # the channel's shift lands on every padded spatial lane
    ("(x + shift[:, None]) * scale[:, None]", True),
    ("x * scale[:, None]", False),  # 0 * scale
    ("x * w", False),  # a weight masked along the summed axis too: padded alike
])
def test_a_rows_parameter_is_real_data_on_the_lanes_a_sum_along_the_other_axis_folds_in(term, reported):
    code = textwrap.dedent("""\
        import triton
        import triton.language as tl

        @triton.jit
        def spatial_mean(x_ptr, shift_ptr, scale_ptr, w_ptr, out_ptr, C, HW, BLOCK_C: tl.constexpr, BLOCK_HW: tl.constexpr):
            c = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
            c_mask = c < C
            scale = tl.load(scale_ptr + c, mask=c_mask, other=1.0)
            shift = tl.load(shift_ptr + c, mask=c_mask, other=0.0)
            hw = tl.arange(0, BLOCK_HW)
            hw_mask = hw < HW
            mask = c_mask[:, None] & hw_mask[None, :]
            x = tl.load(x_ptr + c[:, None] * HW + hw[None, :], mask=mask, other=0.0)
            w = tl.load(w_ptr + c[:, None] * HW + hw[None, :], mask=mask, other=0.0)
            tl.store(out_ptr + c, tl.sum(TERM, axis=1) / HW, mask=c_mask)
        """)
    findings = lint_code(code.replace("TERM", term), RULES).diagnostics
    assert [(f.location.row, "re-masked" in f.message) for f in findings] == ([(13, True)] if reported else [])
    if reported:
        assert any("one value per row" in n for n in findings[0].notes)


def test_notes_name_only_what_the_finding_is_about():
    minimum = textwrap.dedent("""\
        import triton
        import triton.language as tl

        @triton.jit
        def block_min(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
            tl.store(out_ptr, tl.min(x, axis=0))
        """)
    (finding,) = lint_code(minimum, RULES).diagnostics
    assert any("(a min over positive values)" in n for n in finding.notes)
    # a clamp's condition only picks the value that goes on to the same sum: the fix stays safe
    clamped = textwrap.dedent("""\
        import triton
        import triton.language as tl

        @triton.jit
        def kl(p_ptr, q_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            p = tl.load(p_ptr + offs, mask=offs < n, other=1.0)
            q = tl.load(q_ptr + offs, mask=offs < n, other=0.0)
            p = tl.where(p > 1e-10, p, 1e-10)
            q = tl.where(q > 1e-10, q, 1e-10)
            tl.store(out_ptr, tl.sum(q * (tl.log(q) - tl.log(p)), axis=0))
        """)
    (finding,) = lint_code(clamped, RULES).diagnostics
    assert finding.fix is not None and finding.fix.applicability == "safe"
    assert not any("unsafe" in n for n in finding.notes)
    # a load with no `other` that only a later loop reads is not named as meeting these lanes
    later = textwrap.dedent("""\
        import triton
        import triton.language as tl

        @triton.jit
        def sq_sum(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n)
            tl.store(out_ptr, tl.sum(x * x, axis=0))
            y = tl.load(y_ptr + offs, mask=offs < n)
            tl.store(y_ptr + offs, y * 2.0, mask=offs < n)
        """)
    (finding,) = lint_code(later, RULES).diagnostics
    assert not any("line 9" in n for n in finding.notes)


DECODE_SCORES = textwrap.dedent("""\
    import triton
    import triton.language as tl

    @triton.jit
    def page_decode(q_ptr, k_ptr, o_ptr, n_tok, PAGE: tl.constexpr, D: tl.constexpr):
        offs_s = tl.arange(0, PAGE)
        offs_d = tl.arange(0, D)
        q = tl.load(q_ptr + offs_d)
        in_range = offs_s < n_tok
        k = tl.load(k_ptr + offs_s[:, None] * D + offs_d[None, :], mask=in_range[:, None], other=0.0)
        logits = tl.sum(k * q[None, :], axis=1)
        m = tl.max(logits, axis=0)
        tl.store(o_ptr, m)
    """)


def test_a_sum_along_the_features_needs_a_where_not_an_infinite_fill():
    """-inf * q takes q's sign (and 0 * -inf is NaN): the scores a dot product leaves on padded tokens need re-masking
    under the mask along the tokens kept, and no `other` is offered."""
    [found] = lint_code(DECODE_SCORES, RULES).diagnostics
    assert "`tl.sum` at line 11 turns those rows to 0" in found.message and found.fix is None
    assert any('tl.where(in_range, value, float("-inf"))' in note for note in found.notes)


def test_where_no_fill_is_shown_right_the_first_step_is_the_fill_right_at_most_reductions():
    """A p-norm with no `other`: 0 is right at the max of |x| and at both sums; -inf (the max's own need) would
    turn |x| into +inf (round R59s)."""
    code = textwrap.dedent("""\
        import triton
        import triton.language as tl

        @triton.jit
        def norm(x_ptr, y_ptr, H, P: tl.constexpr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + tl.program_id(0) * H + offs, mask=offs < H)
            if P == 0:
                x = tl.max(tl.abs(x), axis=0)
            elif P == 1:
                x = tl.sum(tl.abs(x), axis=0)
            else:
                x = tl.sum(tl.exp2(tl.log2(tl.abs(x)) * P), axis=0)
            tl.store(y_ptr + tl.program_id(0), x)
        """)
    [found] = lint_code(code, RULES).diagnostics
    assert "which needs `other=0.0`" in found.message


CAUSAL_ONLY_HERE = textwrap.dedent("""\
    import triton
    import triton.language as tl

    @triton.jit
    def scores_max(q_ptr, k_ptr, o_ptr, n, causal: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
        rows = tl.program_id(0) * BM + tl.arange(0, BM)
        cols = tl.arange(0, BN)
        d = tl.arange(0, D)
        q = tl.load(q_ptr + rows[:, None] * D + d[None, :], mask=rows[:, None] < n, other=0.0)
        k = tl.load(k_ptr + cols[:, None] * D + d[None, :], mask=cols[:, None] < n, other=0.0)
        s = tl.dot(q, tl.trans(k))
        if causal:
            s = tl.where(rows[:, None] >= cols[None, :], s, float("-inf"))
        tl.store(o_ptr + rows, tl.max(s, 1), mask=rows < n)

    def run(q, k, o):
        scores_max[(1,)](q, k, o, q.shape[0], causal=CAUSAL, BM=64, BN=64, D=64)
    """)


@pytest.mark.parametrize("causal, reported", [("True", False), ("False", True), ("flag", True)])
def test_a_constexpr_flag_is_judged_for_the_values_the_launches_pass(causal, reported):
    code = CAUSAL_ONLY_HERE.replace("causal=CAUSAL", f"causal={causal}")
    if causal == "flag":
        code = code.replace("def run(q, k, o):", "def run(q, k, o, flag):")
    findings = lint_code(code, RULES).diagnostics
    assert bool(findings) is reported
    if reported:
        (finding,) = findings
        assert "`causal` = False" in " ".join(finding.notes) and finding.fix is None


def test_a_max_of_absolute_values_is_said_to_need_0(rules):
    """Every `tl.max(tl.abs(x))` a load with no `other` reaches takes 0, as good as -inf there: the notes say 0
    (R100s judge: 'needing -inf' would set a scale to inf)."""
    code = textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def quant(x_ptr, out_ptr, scale_ptr, n, MODE: tl.constexpr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n)
            if MODE == 0:
                scale = tl.max(tl.abs(x)) / 127.0
            else:
                scale = tl.max(tl.abs(x)) / 448.0
            tl.store(scale_ptr, scale)
            tl.store(out_ptr + offs, x / scale, mask=offs < n)
        ''')
    (found,) = [d for d in lint_code(code, rules, select=["TL108"]).diagnostics if d.code == "TL108"]
    assert "needs `other=0.0`" in found.message
    assert [n for n in found.notes if n.startswith("Also reached")] == [
        "Also reached, needing 0: `tl.max(tl.abs(x))` at line 12."]
    assert not any("On the way the lanes" in n for n in found.notes)


def test_the_note_on_math_on_the_way_names_the_fill_and_what_arrives(rules):
    """`other=0.0` before `tl.exp(x - m)` summed: the fill that arrives as 0 at the sum is -inf at the load."""
    code = textwrap.dedent('''\
        import triton
        import triton.language as tl

        @triton.jit
        def lse(x_ptr, out_ptr, n, m, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
            tl.store(out_ptr, tl.log(tl.sum(tl.exp(x - m))))
        ''')
    (found,) = [d for d in lint_code(code, rules, select=["TL108"]).diagnostics if d.code == "TL108"]
    assert "On the way the lanes pass through elementwise math: padding them with -inf is what makes them arrive " \
           "there as 0." in found.notes


def test_the_remedy_wraps_what_a_loop_adds_to_an_accumulator(rules):
    """A sum of a loop's accumulator (`acc += x * x`, then `tl.sum(acc)`): masking the total would drop the
    earlier chunks' data too, so the note names the line that adds to it (R160s judge)."""
    code = textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def var_rows(x_ptr, out_ptr, mean, n_cols, BLOCK: tl.constexpr):
            row = tl.program_id(0)
            acc = tl.zeros([BLOCK], dtype=tl.float32)
            for off in range(0, n_cols, BLOCK):
                cols = off + tl.arange(0, BLOCK)
                mask = cols < n_cols
                x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0) - mean
                acc += x * x
            tl.store(out_ptr + row, tl.sum(acc, axis=0) / n_cols)
    ''')
    (finding,) = [d for d in lint_code(code, rules, select=["TL108"]).diagnostics if d.code == "TL108"]
    assert any("Wrap what line 13 adds to `acc`" in note for note in finding.notes), finding.notes


@pytest.mark.parametrize("fill, adds, wanted", [
    ("0.0", "acc += p * tl.log(p)", "Wrap what line 12 adds to `acc` in `tl.where(cols < n_cols, value, 0.0)`"),
    ("float('-inf')", "acc += p", "Wrap what line 12 adds to `acc` in `tl.where(cols < n_cols, value, 0.0)`"),
])
def test_nan_and_infinite_sum_remedies_wrap_what_a_loop_adds(rules, fill, adds, wanted):
    """The NaN (0 * log 0) and infinite-sum (-inf fill reaching a plain sum) findings name, as the re-mask one
    does, what each pass adds to a loop's accumulator: masking the total would drop the earlier chunks' data."""
    code = textwrap.dedent(f'''
        import triton
        import triton.language as tl

        @triton.jit
        def rows(p_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
            row = tl.program_id(0)
            acc = tl.zeros([BLOCK], dtype=tl.float32)
            for off in range(0, n_cols, BLOCK):
                cols = off + tl.arange(0, BLOCK)
                p = tl.load(p_ptr + row * n_cols + cols, mask=cols < n_cols, other={fill})
                {adds}
                m = tl.max(p, axis=0)
            tl.store(out_ptr + row, m - tl.sum(acc, axis=0))
    ''')
    (finding,) = [d for d in lint_code(code, rules, select=["TL108"]).diagnostics if d.code == "TL108"]
    assert any(wanted in note for note in finding.notes), finding.notes


KL_DIVERGENCE = textwrap.dedent("""\
    import triton
    import triton.language as tl

    @triton.jit
    def kl_rows(t_ptr, s_ptr, out_ptr, V, BLOCK: tl.constexpr):
        cols = tl.arange(0, BLOCK)
        t = tl.load(t_ptr + tl.program_id(0) * V + cols, mask=cols < V, other=-float("inf"))
        s = tl.load(s_ptr + tl.program_id(0) * V + cols, mask=cols < V, other=-float("inf"))
        t_logp = t - tl.max(t, 0) - tl.log(tl.sum(tl.exp(t - tl.max(t, 0)), 0))
        s_logp = s - tl.max(s, 0) - tl.log(tl.sum(tl.exp(s - tl.max(s, 0)), 0))
        tl.store(out_ptr + tl.program_id(0), tl.sum(tl.exp(t_logp) * (t_logp - s_logp), 0))
    """)


def test_two_rows_padded_with_the_same_infinity_are_named_as_the_nan_source():
    """`t_logp - s_logp` of two log-softmaxes padded with -inf is NaN on the padded lanes (round R305s): the note
    names the other load, not a running maximum the kernel does not have."""
    findings = lint_code(KL_DIVERGENCE, RULES).diagnostics
    assert [d.location.row for d in findings] == [7]
    assert "the load at line 8, padded alike" in findings[0].notes[0]
    assert "running maximum" not in findings[0].notes[0]


ABSMAX_KERNEL = textwrap.dedent("""\
    import triton
    import triton.language as tl

    @triton.jit
    def absmax_scale(x_ptr, s_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=-float("inf"))
        tl.store(s_ptr + tl.program_id(0), tl.max(tl.abs(x), axis=0) / 448.0)
    """)
ABSMAX_HOST = textwrap.dedent("""\
    import torch
    import triton
    from kernels import absmax_scale

    def scales(x, group=128):
        {check}
        n = x.numel()
        s = torch.empty(triton.cdiv(n, group), device=x.device)
        absmax_scale[(triton.cdiv(n, group),)](x, s, n, group)
        return s
    """)


@pytest.mark.parametrize("check, reported", [
    ("assert x.shape[-1] % group == 0", False),
    ("if x.size(1) % group != 0: raise ValueError(x.shape)", False),
    ("assert x.shape[-1] % 2 == 0", True),  # another divisor
    ("assert group % 2 == 0", True),  # not a dimension of the counted tensor
])
def test_a_count_whose_dimension_the_launching_module_asserts_divisible_is_whole_blocks(tmp_path, check, reported):
    """`n = x.numel()` with `assert x.shape[-1] % group == 0` and BLOCK = group, launched from another module of
    the project (round R331s, an NVFP4 fake-quantiser): every block is whole, no lane is padded, the -inf fill
    never reaches `tl.max(tl.abs(x))`."""
    (tmp_path / "kernels.py").write_text(ABSMAX_KERNEL)
    (tmp_path / "host.py").write_text(ABSMAX_HOST.replace("{check}", check))
    findings = cli_findings(tmp_path, "TL108", "--no-cache", ".")
    assert [f["filename"] for f in findings] == (["kernels.py"] if reported else [])


def test_fix_writes_only_what_the_whole_projects_launches_still_report(tmp_path):
    """--fix judges a kernel launched from another module with that launch in view before it writes: the -inf fill
    that the host's divisibility assert makes harmless stays as written (a first pass of the files one by one
    would have replaced it)."""
    (tmp_path / "kernels.py").write_text(ABSMAX_KERNEL)
    (tmp_path / "host.py").write_text(ABSMAX_HOST.replace("{check}", "assert x.shape[-1] % group == 0"))
    result = run_cli("check", "--select", "TL108", "--fix", "--unsafe-fixes", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "kernels.py").read_text() == ABSMAX_KERNEL
