"""Read a file once, decode it the way Python would, and parse it once with each parser.

Python's own parser gives the exact syntax check (TL000) and the tree the kernel model is built from;
ast-grep's tree is what the YAML rules match against. Both see the same decoded text, and positions are
kept as character offsets into it.
"""

from __future__ import annotations

import ast
import bisect
import codecs
import itertools
import re
import symtable
import tokenize
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tritonlint.diagnostics import Position
from tritonlint.walk import walk

if TYPE_CHECKING:
    from ast_grep_py import SgNode

_NEWLINE = re.compile(r"\r\n|\r|\n")
_LONE_CR = re.compile(r"\r(?!\n)")
_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


class SourceError(Exception):
    """A file that cannot be linted at all (unreadable, binary, undecodable): one line for the user."""


@dataclass(frozen=True)
class SourceText:
    """A file's decoded text, and how to write it back as it was encoded."""
    text: str
    encoding: str  # as Python names it: "utf-8", "latin-1", ...
    bom: bool
    newline: str  # the first line ending in the file; "\n" when there is none
    data: bytes | None = field(default=None, repr=False, compare=False)  # the bytes read, to check before writing

    def encode(self, text: str) -> bytes:
        data = text.encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data


def short_source(node: ast.AST, limit: int = 60) -> str:
    """The node's source on one line, cut to `limit` characters with "..." for messages."""
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def decode_source(data: bytes) -> SourceText:
    """Decode bytes as Python does: BOM, then a PEP 263 coding cookie, else UTF-8."""
    if b"\0" in data[:8192]:
        raise SourceError("binary file (contains NUL bytes), skipped")
    try:
        encoding, _ = tokenize.detect_encoding(_first_lines(data).__next__)
    except SyntaxError as exc:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise SourceError(f"not valid utf-8 at byte {bad.start} and no coding declaration, skipped") from None
        raise SourceError(f"bad coding declaration: {exc}, skipped") from None
    original = data
    bom = encoding == "utf-8-sig"
    if bom:
        data = data[len(codecs.BOM_UTF8):]
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise SourceError(f"not valid {encoding} at byte {exc.start}, skipped") from None
    except LookupError:
        raise SourceError(f"unknown encoding {encoding!r}, skipped") from None
    match = _NEWLINE.search(text)
    return SourceText(text, encoding, bom, match.group() if match else "\n", original)


def _first_lines(data: bytes) -> Iterator[bytes]:
    """The first two lines (where a coding cookie may be), ended the way Python ends lines: BytesIO's
    readline only knows b"\\n", so a file with lone-CR line endings would be one long first line."""
    lines = itertools.islice(_LINE.finditer(data), 2)
    return itertools.chain((match.group() for match in lines), itertools.repeat(b""))


def read_source(path: Path) -> SourceText:
    return decode_source(read_bytes(path))


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise SourceError("file disappeared before it could be read, skipped") from None
    except PermissionError:
        raise SourceError("permission denied, skipped") from None
    except IsADirectoryError:
        raise SourceError("is a directory, skipped") from None
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}, skipped") from None


def split_lines(text: str) -> list[str]:
    """The lines of a text as Python counts them: only \\r\\n, \\r and \\n end a line. (str.splitlines()
    also breaks at form feeds, \\x1c-\\x1e, \\x85 and \\u2028/\\u2029, shifting every row after one.)"""
    return text.split("\n") if "\r" not in text else _NEWLINE.split(text)  # str.split: several times faster


class LineIndex:
    """Converts between character offsets and (row, column), with Python's notion of a line break."""

    def __init__(self, text: str) -> None:
        self.text = text
        if "\r" in text:
            self.starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]
        else:  # the usual text: from the lengths of its lines, several times faster than the regex
            self.starts = list(itertools.accumulate((len(line) + 1 for line in text.split("\n")[:-1]), initial=0))
        self._ascii = text.isascii()  # then a UTF-8 column is a character column on every line

    def row_of(self, offset: int) -> int:
        """0-based row holding offset."""
        return max(bisect.bisect_right(self.starts, offset) - 1, 0)

    def position(self, offset: int) -> Position:
        row = self.row_of(offset)
        return Position(row + 1, offset - self.starts[row] + 1)

    def line(self, row: int) -> str:
        """The text of 1-based row, without its line break."""
        start = self.starts[row - 1]
        end = self.starts[row] if row < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def indentation(self, row: int) -> str:
        """The leading whitespace of 1-based row, tabs or spaces as written."""
        line = self.line(row)
        return line[:len(line) - len(line.lstrip())]

    @property
    def row_count(self) -> int:
        return len(self.starts)

    def offset(self, row: int, utf8_column: int) -> int:
        """Offset of Python ast's (lineno, col_offset); ast counts columns in UTF-8 bytes."""
        start = self.starts[min(row, len(self.starts)) - 1]
        if self._ascii:
            return start + utf8_column
        line = self.line(row)
        if line.isascii():
            return start + utf8_column
        return start + len(line.encode("utf-8")[:utf8_column].decode("utf-8", "ignore"))


@dataclass(frozen=True)
class SyntaxProblem:
    """Where and why a text does not parse."""
    message: str
    row: int
    column: int
    too_deep: bool = False  # the parser ran out of stack: not proof of a syntax error


def check_syntax(text: str, filename: str) -> tuple[ast.Module | None, SyntaxProblem | None]:
    """Parse with Python's own parser, then build the symbol table as importing the file would (a duplicate
    argument, a `nonlocal` with no binding: errors the parser alone accepts); any failure becomes a
    SyntaxProblem, never an exception."""
    tree, problem = _parsed(lambda: ast.parse(text, filename=filename), text)
    if problem is None:
        problem = syntax_problem(text, filename)
    return (None, problem) if problem is not None else (tree, None)


def syntax_problem(text: str, filename: str) -> SyntaxProblem | None:
    """check_syntax for a file whose tree is not needed, at about half the cost: the symbol table is built
    from the parser's own tree, never turned into Python objects. It also reports the few errors that
    Python finds only when compiling (`nonlocal` at module level, a duplicate argument), as importing the
    file would."""
    return _parsed(lambda: symtable.symtable(text, filename, "exec"), text)[1]


def _parsed(parse: Callable[[], Any], text: str) -> tuple[Any, SyntaxProblem | None]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like are not our business
            return parse(), None
    except SyntaxError as exc:
        # Python counts the offset of an error just after a multi-line string from the line the string
        # starts on, past the end of the line it reports: the position is kept inside the file.
        lines = LineIndex(text)
        row = min(max(exc.lineno or 1, 1), lines.row_count)
        return None, SyntaxProblem(exc.msg or "invalid syntax", row,
                                   min(max(exc.offset or 1, 1), len(lines.line(row)) + 1))
    except ValueError as exc:  # NUL bytes
        return None, SyntaxProblem(str(exc), 1, 1)
    except (RecursionError, MemoryError):
        # The limit depends on the caller's own stack depth, so a file Python imports fine can hit it here.
        return None, SyntaxProblem("nested too deeply for Python's parser", 1, 1, too_deep=True)


class ParsedFile:
    """One decoded file with both of its trees."""

    def __init__(self, path: str, source: SourceText, tree: ast.Module, module: str,
                 location: str | Path | None = None) -> None:
        self.path = path  # as displayed (relative to the configuration's folder where it lies below it)
        self.location = str(location) if location is not None else path  # on disk, for what rules read beside it
        self.source = source
        self.text = source.text
        self.tree = tree
        self.module = module  # dotted module name, e.g. "pkg.kernels.matmul"
        self._statement_index: dict[int, dict[tuple[int, int], list[ast.AST]]] = {}  # see _nodes_starting_at

    @cached_property
    def lines(self) -> LineIndex:
        return LineIndex(self.text)  # built when a rule first matches: most files need no positions

    @cached_property
    def sg_root(self) -> SgNode:
        from ast_grep_py import (
            SgRoot,  # imported on first use: many runs never need ast-grep
        )

        # tree-sitter ends a line only at \n, so in a file with lone-CR line endings the first comment would
        # swallow the rest of the file; \n in their place keeps every offset and makes both trees agree.
        return SgRoot(_LONE_CR.sub("\n", self.text), "python").root()

    def ast_at(self, start: int, end: int, types: tuple[type, ...] = (ast.AST,)) -> ast.AST | None:
        """The outermost ast node of one of `types` spanning exactly text[start:end]."""
        for node in self._nodes_starting_at(self._ast_position(start)):
            if isinstance(node, types) and self.span_of(node)[1] == end:
                return node
        return None

    def _nodes_starting_at(self, position: tuple[int, int]) -> list[ast.AST]:
        """The ast nodes that start at a (lineno, col_offset), outer nodes first. The nodes of a top-level
        statement are indexed by position on the first lookup inside it: rules that map many matches to
        ast nodes (often every call of a file) walk each statement they look in once, and no other."""
        found = bisect.bisect_right(self._statement_starts, position) - 1
        if found < 0:
            return []
        index = self._statement_index.get(found)
        if index is None:
            index = self._statement_index[found] = {}
            for node in walk(self.tree.body[found]):
                line = getattr(node, "lineno", None)
                if line is not None:
                    index.setdefault((line, node.col_offset), []).append(node)  # type: ignore[attr-defined]
        return index.get(position, [])

    @cached_property
    def _statement_starts(self) -> list[tuple[int, int]]:
        """Where each top-level statement starts, its decorators included."""
        return [min([(stmt.lineno, stmt.col_offset)] + [(d.lineno, d.col_offset) for d in getattr(stmt, "decorator_list", ())])
                for stmt in self.tree.body]

    def _ast_position(self, offset: int) -> tuple[int, int]:
        """(lineno, col_offset) as Python's ast counts them (columns in UTF-8 bytes) of a character offset."""
        row = self.lines.row_of(offset)
        column = offset - self.lines.starts[row]
        line = self.lines.line(row + 1)
        return row + 1, column if line.isascii() else len(line[:column].encode("utf-8"))

    def span_of(self, node: ast.AST) -> tuple[int, int]:
        """Character offsets of an ast node."""
        start = self.lines.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.lines.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return start, end

    def text_of(self, node: ast.AST) -> str:
        start, end = self.span_of(node)
        return self.text[start:end]
