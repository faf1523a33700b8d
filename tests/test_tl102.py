"""What TL102 makes of the kernel's launches (analysis/offset_launches.py): silent where every launch keeps
the products small, a note where a launch shows the program id ranging over the rows of a large tensor."""
from __future__ import annotations

from tests.helpers import lint_code

KERNEL = '''import triton
import triton.language as tl


@triton.jit
def copy_rows(x_ptr, y_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_row + cols, mask=cols < n_cols)
    tl.store(y_ptr + row * stride_row + cols, x, mask=cols < n_cols)
'''


def _severities(rules, launch: str) -> list[str]:
    """"large" for a finding whose notes say a launch shows the large count, else its severity."""
    result = lint_code(KERNEL + launch, rules, select=["TL102"])
    return ["large" if any("The launch shows" in n for n in d.notes) else d.severity for d in result.diagnostics]


def test_no_launch_is_info(rules):
    assert _severities(rules, "") == ["info"]


def test_launch_over_rows_is_noted(rules):
    launch = "\n\ndef run(x, y):\n    rows = x.view(-1, x.shape[-1])\n    copy_rows[(rows.shape[0],)](rows, y, rows.shape[1], rows.stride(0), BLOCK=128)\n"
    assert _severities(rules, launch) == ["large"]


def test_launch_over_tokens_by_name_is_noted(rules):
    launch = "\n\ndef run(x, y, num_tokens):\n    copy_rows[(num_tokens,)](x, y, x.shape[1], x.stride(0), BLOCK=128)\n"
    assert _severities(rules, launch) == ["large"]


def test_unknown_grid_stays_info(rules):
    launch = "\n\ndef run(x, y, grid):\n    copy_rows[grid](x, y, x.shape[1], x.stride(0), BLOCK=128)\n"
    assert _severities(rules, launch) == ["info"]


def test_small_multiplier_at_every_launch_is_silent(rules):
    launch = ("\n\ndef run(x, y, n):\n    copy_rows[(n,)](x, y, 8, x.stride(-1), BLOCK=8)\n"
              "    copy_rows[(n,)](x, y, 8, 4, BLOCK=8)\n")
    assert _severities(rules, launch) == []


def test_one_launch_with_a_large_multiplier_keeps_it(rules):
    launch = ("\n\ndef run(x, y, n):\n    copy_rows[(n,)](x, y, 8, x.stride(-1), BLOCK=8)\n"
              "    copy_rows[(n,)](x, y, 8, x.stride(0), BLOCK=8)\n")
    assert _severities(rules, launch) == ["info"]
