"""Message and fix templates: `$VAR` / `$$$VAR` are ast-grep metavariables, `{name}` are values the
rule's conditions provide (and `{measured}`, the committed GPU evidence)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tritonlint.sgutil import span_text

if TYPE_CHECKING:
    from ast_grep_py import SgNode

HEADLINE_LIMIT = 160  # characters: a message is a headline, the details are its notes
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


def note_applies(template: str, variables: dict[str, str]) -> bool:
    """A note template is rendered only when every `{name}` it uses has a value: an empty one means the
    detail does not apply to this finding."""
    return all(variables.get(name) for name in TEMPLATE_VAR.findall(template))


_CODE_SPAN = re.compile(r"`([^`]+)`")


def fit_headline(message: str, limit: int = HEADLINE_LIMIT) -> str:
    """The message on one line and, when it runs past `limit`, with its longest quoted code cut short (the
    code is in the frame and the notes): the prose around it stays whole."""
    message = " ".join(message.split())
    while len(message) > limit:
        spans = [m for m in _CODE_SPAN.finditer(message) if len(m.group(1)) > 12]
        if not spans:
            return message[: limit - 3].rstrip() + "..."
        longest = max(spans, key=lambda m: len(m.group(1)))
        code = longest.group(1)
        keep = max(12, len(code) - (len(message) - limit))
        message = message[:longest.start(1)] + _squash(code, keep) + message[longest.end(1):]
    return message
