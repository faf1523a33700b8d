"""Edits that extend a call in its own style: append string items to a list display, add a keyword argument
(TL101's reset_to_zero / restore_value; the same list append as TL006's key fix)."""

from __future__ import annotations

import ast

from tritonlint.analysis.host import call_items
from tritonlint.source import ParsedFile


def append_to_list(file: ParsedFile, node: ast.List | ast.Tuple, names: list[str]) -> tuple[int, int, str]:
    """One insertion that appends string items to a list or tuple display, in its style."""
    text = file.text
    quote = "'" if node.elts and file.text_of(node.elts[0]).startswith("'") else '"'
    items = [f"{quote}{name}{quote}" for name in names]
    close = file.span_of(node)[1] - 1  # the closing bracket
    if not node.elts:
        single_tuple = isinstance(node, ast.Tuple) and len(items) == 1
        return (close, close, ", ".join(items) + ("," if single_tuple else ""))
    last_start, last_end = file.span_of(node.elts[-1])
    after = text[last_end:close]
    comma = last_end + after.index(",") + 1 if after.lstrip().startswith(",") else None
    indent = text[text.rfind("\n", 0, last_start) + 1:last_start]
    if not indent.strip() and "\n" in after:  # one item per line
        lines = "".join(f"\n{indent}{item}," for item in items)
        return (comma, comma, lines) if comma is not None else (last_end, last_end, "," + lines[:-1])
    if comma is not None:
        return (comma, comma, " " + ", ".join(items) + ",")
    return (last_end, last_end, ", " + ", ".join(items))


def add_keyword(file: ParsedFile, call: ast.Call, keyword: str) -> tuple[int, int, str]:
    """One insertion that adds `keyword` (the text `name=value`) after a call's last argument, keeping a
    trailing comma and a one-argument-per-line layout."""
    text = file.text
    close = file.span_of(call)[1] - 1  # the closing parenthesis
    items = call_items(call)
    if not items:
        return (close, close, keyword)
    last_start, last_end = file.span_of(items[-1])
    after = text[last_end:close]
    comma = last_end + after.index(",") + 1 if after.lstrip().startswith(",") else None
    indent = text[text.rfind("\n", 0, last_start) + 1:last_start]
    if not indent.strip() and "\n" in after:  # one argument per line
        if comma is not None:
            return (comma, comma, f"\n{indent}{keyword},")
        return (last_end, last_end, f",\n{indent}{keyword}")
    if comma is not None:
        return (comma, comma, f" {keyword},")
    return (last_end, last_end, f", {keyword}")
