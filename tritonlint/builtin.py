"""The two rules built into the linter itself rather than written as rule files: TL000 (the file does not
parse) and TL900 (a suppression that suppresses nothing). They are listed, explained and selected like the
others; the linter (linter.py, suppression.py) reports them."""

from __future__ import annotations

from tritonlint.diagnostics import rule_page_url
from tritonlint.ruleset import FixSpec, Rule

BUILTIN_PATH = "<built-in>"

_SYNTAX = Rule(
    id="TL000", name="syntax-error", severity="error", category="correctness",
    message="SyntaxError: {message}", matcher={}, where=[], fix=None, options={},
    doc={
        "what": "Reports a Python file that does not parse, or that Python refuses when it builds the file's "
                "symbol table on import (a function with two parameters of one name, a `nonlocal` with no "
                "binding), with the message and position of the Python tritonlint runs under (the message "
                "names its version: a file written for a newer Python may parse there and not here).",
        "why": "No rule can run on a file that does not parse, so its kernels go unchecked. Every linted "
               "file is parsed, whether or not it mentions Triton, as ruff does; `select` and `ignore` do "
               "not turn TL000 off, and it fails the run whatever `fail-level` says.",
        "example": "def f(:\n    pass",
        "evidence": "Not a performance rule: there is nothing to measure.",
    },
    valid=[], invalid=[], path=BUILTIN_PATH, url=rule_page_url("TL000"),
)

_UNUSED = Rule(
    id="TL900", name="unused-suppression", severity="warning", category="style",
    message="Unused suppression: {problem}", matcher={}, where=[],
    fix=FixSpec("safe", "Remove the unused code, or the comment once nothing is left"), options={},
    doc={
        "what": "Flags a suppression comment that suppresses nothing: a code in `# tritonlint: ignore[...]`, "
                "`# tritonlint: file-ignore[...]` or `# noqa: ...` whose rule ran on the file and found "
                "nothing there, a code no rule has, or a bare `# tritonlint: ignore` with no finding on its "
                "line (like ruff's RUF100).",
        "why": "A stale suppression hides the next real finding on that line, and a mistyped code "
               "(`TL01`, `TL999`) suppresses nothing while looking as if it did. A `# noqa` comment is "
               "shared with other tools: only tritonlint's own codes (and unknown `TL` codes) in it are "
               "judged; a bare `# noqa` and codes such as `E501` are left alone. Codes of rules that were "
               "not selected for the file are not judged either.",
        "example": "x = 1  # noqa: TL001",
        "use_instead": "x = 1",
        "fix_safety": "Safe: only the comment changes.",
        "evidence": "Not a performance rule: there is nothing to measure.",
    },
    valid=[], invalid=[], path=BUILTIN_PATH, url=rule_page_url("TL900"),
)

BUILTIN_RULES = (_SYNTAX, _UNUSED)
