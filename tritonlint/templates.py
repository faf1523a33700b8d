"""Message and fix templates: `$VAR` / `$$$VAR` are ast-grep metavariables, `{name}` are values the
rule's conditions provide (and `{measured}`, the committed GPU evidence)."""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Callable

from tritonlint.sgutil import span_text
from tritonlint.walk import walk

if TYPE_CHECKING:
    from ast_grep_py import SgNode

HEADLINE_LIMIT = 160  # characters: a message is a headline, the details are its notes
# A row quoted in a message while it may still move (the language server's slices, tritonlint/incremental.py):
# written as ROW_OPEN + digits + ROW_CLOSE, turned into the row of the module by `place_rows`.
ROW_OPEN, ROW_CLOSE = "\ue000", "\ue001"
ROW_MARK = re.compile("\ue000(\\d+)\ue001")
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


class Row(int):
    """A row of a syntax tree whose rows may still move: quoted in a message (str, format, repr), it is
    written as a marker that `place_rows` turns into the row it ends up at. Arithmetic gives plain ints."""

    __slots__ = ()

    def __str__(self) -> str:
        return f"{ROW_OPEN}{int(self)}{ROW_CLOSE}"

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return str(self) if spec in ("", "d") else format(int(self), spec)


def mark_rows(tree: ast.AST, text: str) -> None:
    """Give the nodes of `tree` (parsed from `text`) Row line numbers, so that the rows their findings quote
    can be placed later. `text` must hold no Row marker of its own."""
    rows = [Row(row) for row in range(text.count("\n") + text.count("\r") + 2)]
    for node in walk(tree):
        if isinstance(node, (ast.stmt, ast.expr, ast.excepthandler, ast.arg, ast.keyword, ast.alias, ast.pattern)):
            node.lineno = rows[node.lineno]
            if node.end_lineno is not None:
                node.end_lineno = rows[node.end_lineno]


def place_rows(text: str, row: Callable[[int], int | str]) -> str:
    """`text` with its quoted rows (Row markers) turned into the rows (or the words) `row` gives them."""
    return ROW_MARK.sub(lambda m: str(row(int(m.group(1)))), text) if ROW_OPEN in text else text


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
