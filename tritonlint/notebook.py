"""Jupyter notebooks: the code cells are joined into one module (so a kernel defined in one cell and
launched in another is seen, as ruff does) with IPython magics hidden behind comments, linted as Python,
and the findings mapped back to their cell (1-based, counting every cell) and the row within it. `--fix`
writes the fixed cells back into the notebook's JSON, in its own indentation, leaving outputs alone."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from tritonlint.diagnostics import Diagnostic, Edit, Position, Span
from tritonlint.templates import fit_headline, place_rows

SEPARATOR = "# %% <cell>\n"  # a comment line no fix touches: the fixed text splits back into cells there
_MAGIC = re.compile(r"^(\s*)# <magic (\d+)>$", re.MULTILINE)


class NotebookError(Exception):
    """Not a notebook tritonlint can read: one line for the user."""


@dataclasses.dataclass
class Notebook:
    data: dict[str, Any]
    cells: list[int]  # index in data["cells"] of each code cell, in order
    starts: list[int]  # 1-based row in the joined text of each code cell's first line
    text: str
    magics: list[str]
    indent: int | str | None
    final_newline: bool

    @classmethod
    def parse(cls, raw: str) -> Notebook:
        try:
            data = json.loads(raw)
            cells = data["cells"]
            language = data.get("metadata", {}).get("language_info", {}).get("name", "python")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise NotebookError(f"not a Jupyter notebook ({exc}), skipped") from None
        if language != "python":
            raise NotebookError(f"a {language} notebook, skipped")
        second = raw.split("\n", 2)[1] if raw.count("\n") >= 2 else ""
        indent = second[: len(second) - len(second.lstrip())] or None
        notebook = cls(data, [], [], "", [], len(indent) if indent and indent.strip(" ") == "" else indent,
                       raw.endswith("\n"))
        parts, row = [], 1
        for index, cell in enumerate(cells):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            source = cell.get("source", "")
            text = "".join(source) if isinstance(source, list) else str(source)
            lines = text.split("\n")
            if lines and lines[0].lstrip().startswith("%%"):  # a cell magic: the whole cell is another language
                lines = [notebook._hide(line) for line in lines]
            else:
                lines = [notebook._hide(line) if line.lstrip().startswith(("%", "!")) else line for line in lines]
            body = "\n".join(lines)
            body += "" if body.endswith("\n") else "\n"
            notebook.cells.append(index)
            notebook.starts.append(row + 1)
            parts.append(SEPARATOR + body)
            row += 1 + body.count("\n")
        notebook.text = "".join(parts)
        return notebook

    def _hide(self, line: str) -> str:
        self.magics.append(line)
        return f"{line[: len(line) - len(line.lstrip())]}# <magic {len(self.magics) - 1}>"

    def locate(self, row: int) -> tuple[int, int]:
        """(cell number, row within the cell) of a row of the joined text."""
        which = max((i for i, start in enumerate(self.starts) if start <= row), default=0)
        return self.cells[which] + 1, row - self.starts[which] + 1

    def map(self, d: Diagnostic) -> Diagnostic:
        cell, _ = self.locate(d.location.row)

        def at(position: Position) -> Position:
            return Position(self.locate(position.row)[1], position.column)

        def quoted(row: int) -> str:  # a row quoted in a message: the row within its cell, and the cell if another
            where, within = self.locate(row)
            return str(within) if where == cell else f"{within} of cell {where}"

        fix = d.fix and dataclasses.replace(d.fix, message=place_rows(d.fix.message, quoted), edits=tuple(
            Edit(e.start, e.end, place_rows(e.content, quoted), at(e.location), at(e.end_location))
            for e in d.fix.edits))
        related = tuple(Span(s.start, s.end, at(s.location), at(s.end_location)) for s in d.related)
        return dataclasses.replace(d, location=at(d.location), end_location=at(d.end_location), fix=fix,
                                   related=related, cell=cell, message=fit_headline(place_rows(d.message, quoted)),
                                   notes=[place_rows(note, quoted) for note in d.notes])

    def dumps(self, fixed: str) -> str | None:
        """The notebook's JSON with the fixed cells, or None when the fixed text no longer splits into the
        same cells."""
        bodies = fixed.split(SEPARATOR)[1:]
        if len(bodies) != len(self.cells) or fixed.split(SEPARATOR)[0]:
            return None
        for index, body in zip(self.cells, bodies):
            cell = self.data["cells"][index]
            source = cell.get("source", "")
            old = "".join(source) if isinstance(source, list) else str(source)
            text = _MAGIC.sub(lambda m: self.magics[int(m.group(2))], body)
            if not old.endswith("\n"):
                text = text[:-1] if text.endswith("\n") else text
            if text == old:
                continue
            cell["source"] = text.splitlines(keepends=True) if isinstance(source, list) else text
        return json.dumps(self.data, indent=self.indent, ensure_ascii=False) + ("\n" if self.final_newline else "")
