"""Message and fix templates: `$VAR` / `$$$VAR` are ast-grep metavariables, `{name}` are values the
rule's conditions provide (and `{measured}`, the committed GPU evidence)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tritonlint.sgutil import span_text

if TYPE_CHECKING:
    from ast_grep_py import SgNode

METAVAR = re.compile(r"\$(?:\$\$)?([A-Z_][A-Z0-9_]*)")
TEMPLATE_VAR = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


def render(template: str, node: SgNode, text: str, variables: dict[str, str], single_line: bool = True) -> str:
    def metavar(match: re.Match[str]) -> str:
        name = match.group(1)
        if match.group(0).startswith("$$$"):
            value = span_text(text, node.get_multiple_matches(name))
        else:
            captured = node.get_match(name)
            value = captured.text() if captured is not None else (node.get_transformed(name) or "")
        return _squash(value) if single_line else value

    rendered = METAVAR.sub(metavar, template)
    return TEMPLATE_VAR.sub(lambda m: variables.get(m.group(1), m.group(0)), rendered)


def _squash(value: str, limit: int = 80) -> str:
    value = " ".join(value.split())
    return value if len(value) <= limit else value[: limit - 3] + "..."
