"""TL107 (constexpr-problem-size) and TL109 (grid-axis-limit) beyond their YAML examples: one finding per spot
that several launches share, and TL109's exemption table against its doc."""

from __future__ import annotations

import re
import textwrap

from tests.helpers import lint_code

# One `**common` dict splatted into three launches (liger's Ascend rms_norm): the row count in it is one
# thing to fix.
SHARED_SPLAT = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def fwd(x_ptr, n_rows: tl.constexpr, BLOCK: tl.constexpr):
        for row in tl.range(0, n_rows):
            tl.store(x_ptr + row * BLOCK + tl.arange(0, BLOCK), 0.0)

    @triton.jit
    def bwd(x_ptr, n_rows: tl.constexpr, BLOCK: tl.constexpr):
        for row in tl.range(0, n_rows):
            tl.store(x_ptr + row * BLOCK + tl.arange(0, BLOCK), 1.0)

    def run(X):
        X = X.view(-1, 128)
        common = dict(n_rows=X.shape[0], BLOCK=128)
        fwd[(1,)](X, **common)
        bwd[(1,)](X, **common)
        fwd[(2,)](X, **common)
    ''')


def test_a_value_shared_by_three_launches_is_reported_once(rules):
    found = [d for d in lint_code(SHARED_SPLAT, rules, select=["TL107"]).diagnostics if d.code == "TL107"]
    assert len(found) == 1
    assert found[0].location.row == SHARED_SPLAT.splitlines().index("    common = dict(n_rows=X.shape[0], BLOCK=128)") + 1
    assert any("2 more matches of this rule reach the same spot" in note for note in found[0].notes)


def test_launches_at_different_spots_are_reported_each(rules):
    code = SHARED_SPLAT.replace("        common = dict(n_rows=X.shape[0], BLOCK=128)\n", "").replace(
        "**common", "n_rows=X.shape[0], BLOCK=128")
    found = [d for d in lint_code(code, rules, select=["TL107"]).diagnostics if d.code == "TL107"]
    assert len(found) == 3
    assert not any("reach the same spot" in note for d in found for note in d.notes)


def test_tl109_doc_lists_exactly_its_exemptions(rules):
    from tritonlint.rules.tl109_grid_axis_limit import EXEMPTIONS

    (rule,) = [r for r in rules if r.id == "TL109"]
    text = " ".join(rule.doc["what"].split())
    listed = dict(re.findall(r"- `([a-z-]+)`: (.*?)\.(?= - `|$| [A-Z])", text))
    assert listed == {e.name: " ".join(e.doc.split()) for e in EXEMPTIONS}


def test_tl109_one_tile_row_needs_the_same_count(rules):
    """The bucket must be of the count on the axis: a tile over the head dimension exempts nothing."""
    code = textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            pass

        def run(x, offsets, max_seq_len, head_dim):
            B = offsets.numel() - 1
            BLOCK = triton.next_power_of_2(max_seq_len)
            k[(B, max_seq_len)](x, BLOCK=BLOCK)
            k[(B, max_seq_len)](x, BLOCK=triton.next_power_of_2(head_dim))
        ''')
    found = [d for d in lint_code(code, rules, select=["TL109"]).diagnostics if d.code == "TL109"]
    assert [d.location.row for d in found] == [code.splitlines().index(
        "    k[(B, max_seq_len)](x, BLOCK=triton.next_power_of_2(head_dim))") + 1]
