"""Crashes and broken properties the fuzzer (tests/test_fuzz.py, bench/fuzz_long.py) found, each with the
smallest input that shows it, so that they stay fixed."""

from __future__ import annotations

import pytest

from tests.fuzz.properties import FIX, REPORT, check_module, lint


@pytest.mark.parametrize("code", [
    # Python counts the offset of the error after a multi-line string from the line the string starts on:
    # column 16 of a 5-character line. TL000 now stays inside the line (found with CRLF and lone CR too).
    'import triton\ns = """abc\n"""\\x\n',
    'import triton\r\ns = """abc\r\n"""\\x\r\n',
    'import triton\rs = """abc\r"""\\x\r',
], ids=["lf", "crlf", "cr"])
def test_syntax_error_column_after_a_multiline_string(code):
    check_module(code.encode())


CASCADE = '''import triton
import triton.language as tl


@triton.autotune(configs=get_configs(), key=["n_elements", "S", "USE_FP8"])
@triton.jit
def _fused(b_ptr, M, H_KV, stride_am, USE_FP8: tl.constexpr = 256, BLOCK_M: tl.constexpr = False):
    for k in tl.range(0, num_k, num_stages=2):
        k = desc.load([4096, 0])
        desc = tl.make_tensor_descriptor(K_ptr, shape=[stride_am * H, H], strides=[S, 1], block_shape=[BLOCK_N, BLOCK_M])
    while k < num_k:
        desc.store([tl.arange(0, BLOCK_K), 0], x)
'''


def test_a_fix_that_brings_out_another_finding():
    """Not a bug in tritonlint, one in the property (long run, seed 3341): TL005's fix puts H_KV in the
    descriptor's shape, and then TL006 asks for H_KV in the autotune key, a line no first-round finding
    named. --fix runs rounds until nothing changes; the property now checks each round on its own."""
    report = lint(REPORT, CASCADE.encode())[1]
    fixed = lint(FIX, CASCADE.encode())[1]
    founding = [d.code for d in report.diagnostics if d.code in ("TL005", "TL006")]
    assert founding == ["TL005"] and fixed.fixed_codes["TL006"] == 1
    check_module(CASCADE.encode())


def test_a_padded_lane_reaching_a_reduction_never_read():
    """test_bad_inputs' mangled examples (fortieth session): a -inf fill reaching a `tl.max` whose result is never
    read and a `tl.sum` crashed TL108's fix-safety note (it looked for the reduction that made the fix unsafe and
    found none). A reduction nobody reads changes nothing: the fix is safe there."""
    check_module(b'''import triton
import triton.language as tl

@triton.jit
def smoothed_ce(logits_ptr, out_ptr, n, smoothing, target, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    logits = tl.load(logits_ptr + offs, mask=mask, other=-float("inf"))
    m = tl.max(logits, axis=0)
    smooth = smoothing / n * tl.sum(logits, axis=0)
    tl.store(out_ptr, lse - (1.0 - smoothing) * tl.load(logits_ptr + target) - smooth)
''')
