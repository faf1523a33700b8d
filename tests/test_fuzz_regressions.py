"""Crashes and broken properties the fuzzer (tests/test_fuzz.py, bench/fuzz_long.py) found, each with the
smallest input that shows it, so that they stay fixed."""

from __future__ import annotations

import pytest

from tests.fuzz.properties import check_module


@pytest.mark.parametrize("code", [
    # Python counts the offset of the error after a multi-line string from the line the string starts on:
    # column 16 of a 5-character line. TL000 now stays inside the line (found with CRLF and lone CR too).
    'import triton\ns = """abc\n"""\\x\n',
    'import triton\r\ns = """abc\r\n"""\\x\r\n',
    'import triton\rs = """abc\r"""\\x\r',
], ids=["lf", "crlf", "cr"])
def test_syntax_error_column_after_a_multiline_string(code):
    check_module(code.encode())
