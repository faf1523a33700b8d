"""Incremental re-linting for the language server: after an edit, lint only the part of the module the edit
can affect and reuse the findings of the rest.

The module is split into units (top-level statements; statements that share a line form one unit). A unit
depends on the units that bind a name it mentions (any identifier in its text, strings and comments
included: a config's `"BLOCK_M"`, a key, a launch) and on those that bind a name it binds too; rules
follow a kernel to its launches and back, so the units linked that way, in either direction, form one
component. Imports, and the statements that act at module level (calls, `if`/`try` blocks, anything that is
not a definition or an assignment) together with the components they mention, are the core: in every
slice. A slice is the text of its component and the core, each unit with the comment lines between it and
the unit before (for the rules that read the comment above a statement), each stretch left out between them
reduced to a few line breaks: an edit to a comment between top-level statements re-lints one slice. Each
slice is linted alone and its findings are cached by its text: an edit re-lints the slices whose text
changed. A slice's text does not change when an edit elsewhere moves its rows, so its findings are reused,
moved: character offsets map back piece by piece, and the rows messages quote are marked while the slice is
linted (its syntax tree's rows are `templates.Row`s) and turned into the module's rows when the findings are
placed (headlines are fitted then, as their length depends on the rows). Suppressions and TL900 are
applied to the merged findings, on the whole text, as a full lint does.

Module-wide facts that are not names (the module calls `triton.set_allocator`, some `tl.dot` passes
`trans_a=`, a config has a `pre_hook`) put the units that spell them in every slice. A slice's cached findings
are reused only while the kernels of other modules it looked up are still the same objects.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable

from tritonlint.analysis.model import ModuleModel
from tritonlint.diagnostics import Diagnostic, Edit, Fix, Position, Span
from tritonlint.linter import FileLinter
from tritonlint.results import FileResult, FixMode
from tritonlint.source import LineIndex, ParsedFile, SourceText
from tritonlint.templates import ROW_CLOSE, ROW_OPEN, fit_headline, mark_rows, place_rows
from tritonlint.timelimit import FileTimeout, enter, time_limit

if TYPE_CHECKING:
    from pathlib import Path

    from tritonlint.analysis.model import JitFunction
    from tritonlint.analysis.project import Project
    from tritonlint.ruleset import Rule

# Text whose presence anywhere in the module changes what a rule finds elsewhere (TL105, TL003, TL101).
MODULE_FACTS = re.compile(r"set_allocator|trans_a|trans_b|pre_hook")
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
LINE_END = re.compile(r"\r\n|\r|\n")
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign, ast.AugAssign)
MIN_UNITS = 8  # below this a full lint costs about as much as the bookkeeping
# Rows a left-out stretch keeps in a slice, at most: rules read up to three lines above a statement (TL006's
# comments that explain a key), so a comment must stay as far from it as in the text, or stay out of reach.
STRETCH_ROWS = 4


@dataclass
class Unit:
    start: int  # character offsets: whole lines
    end: int
    kind: str  # "import", "core" or "node"
    binds: frozenset[str]
    mentions: frozenset[str]
    fact: bool = False  # spells a module-wide fact: in every slice (its findings are still its component's)


@dataclass
class SliceResult:
    diagnostics: list[Diagnostic]  # every finding of the slice (ownership is decided when merging)
    summaries: dict[str, JitFunction]
    lookups: tuple[tuple[str, object], ...]  # kernels of other modules looked up, and what they were
    # For the last placement (unit offsets, own units): its own findings, those on imports, its own kernels.
    placed: tuple[object, list[Diagnostic], list[Diagnostic], dict[str, JitFunction]] | None = None


class IncrementalLinter:
    """One buffer's linter: a FileLinter whose per-slice results survive between texts."""

    def __init__(self, linter: FileLinter) -> None:
        self.linter = linter
        self.slices: dict[str, SliceResult] = {}
        self.known: dict[str, Unit] = {}  # a unit's facts by its text
        self.text: str | None = None  # the last text that parsed, and its units
        self.units: list[Unit] = []
        self.stats = {"linted": 0, "reused": 0}  # slices of the last text

    def lint_source(self, source: SourceText, path: Path | None, display: str, module: str,
                    project: Project) -> FileResult:
        linter = self.linter
        text = source.text
        self.stats = {"linted": 0, "reused": 0}

        def full() -> FileResult:
            return linter.lint_source(source, path, display, module, project)

        if linter.mode is not FixMode.NONE or "triton" not in text or ROW_OPEN in text or ROW_CLOSE in text:
            return full()
        ran = linter.settings.rules_for(linter.engine.rules, display)
        rules = linter.engine.could_match(ran, text)
        if not rules:
            return full()
        units = self._split(text, display)
        if units is None:
            return full()  # TL000 and the like, as a full lint reports them
        if len(units) < MIN_UNITS:
            return full()
        result = FileResult(display, module)
        try:
            with time_limit(linter.settings.file_timeout):
                diagnostics, result.summaries = self._lint_slices(text, display, module, project, rules, units, path)
                result.diagnostics = linter.suppressed(diagnostics, text, display, ran)
        except (Exception, FileTimeout):  # noqa: BLE001 - a timeout, a crash, a deferral: as a full lint reports it
            return full()
        return result

    # -- the module's units and components

    def _split(self, text: str, display: str) -> list[Unit] | None:
        """The text's units, or None when it does not parse. After an edit only the units it touched are
        parsed again: text made of whole top-level statements parses alone exactly when it parses between
        the unchanged units around it (they start at column 0 and end where their statement does), with
        one exception, `from __future__`, which must come first."""
        units = None
        if self.text is not None:
            before, old = self.units, self.text
            prefix = _common(old, text, lambda a, n: a[:n])
            suffix = _common(old, text, lambda a, n: a[len(a) - n:], min(len(old), len(text)) - prefix)
            delta = len(text) - len(old)
            start = max([u.start for u in before if u.start <= prefix], default=0)
            end = min([u.start for u in before if u.start >= len(old) - suffix and u.start > start],
                      default=len(old))
            region = text[start:end + delta]
            if "__future__" not in region:
                middle = self._parse(region, display, start)
                if middle is not None:
                    units = [u for u in before if u.end <= start] + middle + \
                            [Unit(u.start + delta, u.end + delta, u.kind, u.binds, u.mentions, u.fact)
                             for u in before if u.start >= end]
        if units is None:
            units = self._parse(text, display, 0)
        self.text, self.units = (text, units) if units is not None else (None, [])
        return units

    def _parse(self, text: str, display: str, offset: int) -> list[Unit] | None:
        try:
            tree = ast.parse(text, filename=display)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        starts = [0] + [m.end() for m in LINE_END.finditer(text)]

        def line_end(row: int) -> int:  # the end of a 1-based row, its line break included
            return starts[row] if row < len(starts) else len(text)

        spans: list[tuple[int, int, list[ast.stmt]]] = []
        for statement in tree.body:
            first = min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", [])])
            last = statement.end_lineno or statement.lineno
            if spans and first <= spans[-1][1]:  # `a = 1; b = 2`, or a statement ending where the next starts
                spans[-1] = (spans[-1][0], max(last, spans[-1][1]), spans[-1][2] + [statement])
            else:
                spans.append((first, last, [statement]))
        units = []
        for first, last, statements in spans:
            start, end = starts[first - 1], line_end(last)
            segment = text[start:end]
            known = self.known.get(segment)
            if known is None:
                known = self.known[segment] = _unit(statements, segment)
            units.append(Unit(start + offset, end + offset, known.kind, known.binds, known.mentions, known.fact))
        return units

    @staticmethod
    def _components(units: list[Unit]) -> tuple[set[int], list[list[int]]]:
        """The core (unit indexes) and the other components, each a list of unit indexes in text order."""
        parent = list(range(len(units)))

        def find(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        def union(i: int, j: int) -> None:
            parent[find(i)] = find(j)

        binders: dict[str, list[int]] = {}
        for index, unit in enumerate(units):
            for name in unit.binds:
                binders.setdefault(name, []).append(index)
        core = [i for i, unit in enumerate(units) if unit.kind != "node"]
        for name, found in binders.items():  # two bindings of one name: either may be the one a use sees
            for other in found[1:]:
                union(found[0], other)
        for index, unit in enumerate(units):
            if unit.kind == "import":
                continue  # an import's mentions are the names it binds or the modules it reads
            for name in unit.mentions & binders.keys():  # a core unit pulls in what it mentions
                for binder in binders[name]:
                    if units[binder].kind == "node":
                        union(index, binder)
        for index in core[1:]:
            union(core[0], index)
        roots = {find(i) for i in core}
        groups: dict[int, list[int]] = {}
        for index in range(len(units)):
            groups.setdefault(find(index), []).append(index)
        core_units = {i for root in roots for i in groups[root]}
        return core_units, [g for root, g in groups.items() if root not in roots]

    # -- linting the slices

    def _lint_slices(self, text: str, display: str, module: str, project: Project, rules: list[Rule],
                     units: list[Unit], path: Path | None) -> tuple[list[Diagnostic], dict[str, JitFunction]]:
        core, components = self._components(units)
        # An edit that rebinds names merges or splits components: the cache keeps only the slices of this text.
        slices: dict[str, SliceResult] = {}
        diagnostics: list[Diagnostic] = []
        shared: list[Diagnostic] = []  # findings on imports: any slice may see their use
        summaries: dict[str, JitFunction] = {}
        stats = {"linted": 0, "reused": 0}
        imports = [(u.start, u.end) for u in units if u.kind == "import"]
        elsewhere = [(units[i].start, units[i].end) for own in components for i in own]
        always = sorted(core | {i for i, u in enumerate(units) if u.fact})
        bound = {name for own in components for i in own for name in units[i].binds}  # by the components
        lines = LineIndex(text)
        comments = _comments(text, units, lines)
        for own in [sorted(core)] + components:
            kept = sorted({(units[i].start, units[i].end) for i in set(always).union(own)}
                          | {span for i in set(always).union(own) for span in comments.get(i, ())})
            slice_text, offsets = _compact(text, kept)
            found = slices.get(slice_text) or self.slices.get(slice_text)
            if found is None or not _still_valid(found, project):
                found = self._lint_slice(slice_text, display, module, project, rules, path)
                stats["linted"] += 1
            else:
                project.consulted.update(q for q, _ in found.lookups)
                stats["reused"] += 1
            slices[slice_text] = found
            key = (tuple(offsets.pieces), tuple(units[i].start for i in own), len(text))
            if found.placed is None or found.placed[0] != key:  # where its findings lie, and which are its own
                place = Placement(offsets, slice_text, lines)
                relocated = [place.diagnostic(d) for d in found.diagnostics]
                if own and units[own[0]].kind == "node":  # a component: what lies in its units
                    spans = [(units[i].start, units[i].end) for i in own]
                    owns: Callable[[int], bool] = lambda offset: _inside(offset, spans)  # noqa: E731
                    names = {name for i in own for name in units[i].binds}
                    owned = {q: s for q, s in found.summaries.items() if _top_name(q, module) in names}
                else:  # the core: what lies outside every component
                    owns = lambda offset: not _inside(offset, elsewhere)  # noqa: E731
                    owned = {q: s for q, s in found.summaries.items() if _top_name(q, module) not in bound}
                found.placed = (key, [d for d in relocated if not _inside(d.start, imports) and owns(d.start)],
                                [d for d in relocated if _inside(d.start, imports)],
                                {q: place.summary(s) for q, s in owned.items()})
            diagnostics += found.placed[1]
            shared += [d for d in found.placed[2] if d not in shared]
            summaries.update(found.placed[3])
        self.slices, self.stats = slices, stats
        segments = {text[u.start:u.end] for u in units}  # what the next edit can reuse
        self.known = {k: v for k, v in self.known.items() if k in segments}
        return diagnostics + shared, summaries

    def _lint_slice(self, text: str, display: str, module: str, project: Project, rules: list[Rule],
                    path: Path | None) -> SliceResult:
        enter("parse")
        tree = ast.parse(text, filename=display)
        mark_rows(tree, text)  # rows quoted in messages are the slice's: marked, placed with the findings
        parsed = ParsedFile(display, SourceText(text, "utf-8", False, "\n"), tree, module, path)
        enter("model")
        model = ModuleModel(tree, module, display, is_package=display.endswith("__init__.py"), text=text,
                            imported=project.module_model if project.sources else None)
        before = set(project.consulted)
        project.consulted.clear()
        diagnostics = self.linter.engine.run(parsed, model, project, rules, fit=False)
        lookups = tuple((q, _lookup(project, q)) for q in sorted(project.consulted))
        project.consulted.update(before)
        return SliceResult(diagnostics, model.summaries(), lookups)


def _unit(statements: list[ast.stmt], segment: str) -> Unit:
    if all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in statements):
        kind = "import"
    elif all(isinstance(s, DEFINITIONS) for s in statements):
        kind = "node"
    else:
        kind = "core"
    binds: set[str] = set()
    for statement in statements:
        binds.update(_bound(statement, "global" in segment))  # no `global`: no walk of every body
    words = () if all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) for s in statements) \
        else IDENTIFIER.findall(segment)  # a docstring's words name nothing
    return Unit(0, 0, kind, frozenset(binds), frozenset(words), MODULE_FACTS.search(segment) is not None)


def _bound(statement: ast.stmt, globals_: bool) -> set[str]:
    """The module-level names a top-level statement binds (function bodies bind locals, except `global`s)."""
    names: set[str] = set()
    stack: list[ast.AST] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            if globals_:
                names.update(n for g in ast.walk(node) if isinstance(g, ast.Global) for n in g.names)
            stack.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
        if isinstance(node, ast.comprehension):
            stack.extend([*node.ifs, node.iter])  # its target is the comprehension's own
            stack.extend(n for n in ast.walk(node.target) if isinstance(n, ast.NamedExpr))
            continue
        stack.extend(ast.iter_child_nodes(node))
    return names


class Offsets:
    """Where a slice's character offsets lie in the text: pieces copied as they are, and the line breaks that
    stand for what the slice left out (an offset there, which no finding should have, goes to its start)."""

    def __init__(self) -> None:
        self.starts: list[int] = []  # in the slice
        self.pieces: list[tuple[int, bool]] = []  # start in the text; whether the piece stands for left-out text

    def add(self, start: int, real: int, left_out: bool = False) -> None:
        self.starts.append(start)
        self.pieces.append((real, left_out))

    def __call__(self, offset: int) -> int:
        index = bisect.bisect_right(self.starts, offset) - 1
        real, left_out = self.pieces[index]
        return real if left_out else real + offset - self.starts[index]


class Placement:
    """A slice's findings (and kernel summaries) as they lie in the text: offsets, positions and the rows
    quoted in messages (Row markers) moved piece by piece (each piece is whole lines, so only rows move),
    headlines fitted."""

    def __init__(self, offsets: Offsets, slice_text: str, lines: LineIndex) -> None:
        self.offsets, self.lines = offsets, lines
        in_slice = LineIndex(slice_text)
        self.rows = [in_slice.row_of(start) for start in offsets.starts]  # 0-based, where each piece starts
        self.shift = [lines.row_of(real) - row for (real, _), row in zip(offsets.pieces, self.rows)]

    def row(self, row: int) -> int:
        """The text's 1-based row of the slice's 1-based row `row`."""
        return row + self.shift[max(bisect.bisect_right(self.rows, row - 1) - 1, 0)]

    def at(self, offset: int, position: Position) -> tuple[int, Position]:
        """Where a slice's offset, at `position` in the slice, lies in the text."""
        offsets = self.offsets
        index = max(bisect.bisect_right(offsets.starts, offset) - 1, 0)
        real, left_out = offsets.pieces[index]
        if left_out:  # no finding should lie there: the start of what was left out
            return real, self.lines.position(real)
        return real + offset - offsets.starts[index], Position(position.row + self.shift[index], position.column)

    def diagnostic(self, d: Diagnostic) -> Diagnostic:
        at, row = self.at, self.row
        fix = d.fix
        if fix is not None:
            edits = []
            for e in fix.edits:
                (start, location), (end, end_location) = at(e.start, e.location), at(e.end, e.end_location)
                edits.append(Edit(start, end, place_rows(e.content, row), location, end_location))
            fix = Fix(fix.applicability, place_rows(fix.message, row), tuple(edits))
        related = []
        for r in d.related:
            (start, location), (end, end_location) = at(r.start, r.location), at(r.end, r.end_location)
            related.append(Span(start, end, location, end_location))
        moved = object.__new__(Diagnostic)  # a copy (every field), then what moves: cheaper than replace()
        moved.__dict__.update(d.__dict__)
        moved.start, moved.location = at(d.start, d.location)
        moved.end, moved.end_location = at(d.end, d.end_location)
        moved.fix, moved.message, moved.related = fix, fit_headline(place_rows(d.message, row)), tuple(related)
        moved.notes = [place_rows(note, row) for note in d.notes]
        return moved

    def summary(self, summary: JitFunction) -> JitFunction:
        autotune = summary.autotune
        if autotune is not None:
            configs = autotune.configs and [replace(c, line=self.row(c.line)) for c in autotune.configs]
            autotune = replace(autotune, line=self.row(autotune.line), configs=configs)
        return replace(summary, line=self.row(summary.line), autotune=autotune)


def _comments(text: str, units: list[Unit], lines: LineIndex) -> dict[int, list[tuple[int, int]]]:
    """The spans of the lines between units that are not blank (comments), by the units they can explain: the
    unit right below and any unit that starts within reach below (STRETCH_ROWS - 1 rows); those after the last
    unit go with it. A slice keeps the comments of its units: rules read the comments above a statement,
    none reads one below it."""
    spans: dict[int, list[tuple[int, int]]] = {}
    last = 0
    for index, (start, end) in enumerate([(u.start, u.end) for u in units] + [(len(text), len(text))]):
        if text[last:start].strip():
            for line in re.finditer(r"[^\r\n]*(?:\r\n|\r|\n)?", text[last:start]):
                if line.group().strip():
                    span = (last + line.start(), last + line.end())
                    reach = lines.row_of(span[0]) + STRETCH_ROWS - 1
                    below = min(index, len(units) - 1)
                    spans.setdefault(below, []).append(span)
                    for later in range(below + 1, len(units)):
                        if lines.row_of(units[later].start) > reach:
                            break
                        spans.setdefault(later, []).append(span)
        last = end
    return spans


def _compact(text: str, kept: list[tuple[int, int]]) -> tuple[str, Offsets]:
    """The slice: the kept spans of the text (whole lines, in order) with each stretch left out between them
    reduced to at most STRETCH_ROWS line breaks (and the one before them to nothing). Its text does not
    change when rows move outside what it keeps, so its findings are reused, moved (quoted rows included)."""
    parts: list[str] = []
    offsets, length, last = Offsets(), 0, 0
    for start, end in kept + [(len(text), len(text))]:
        if last and start > last:  # nothing stands for what leads
            breaks = "".join(m.group() for m in itertools.islice(LINE_END.finditer(text, last, start), STRETCH_ROWS))
            if breaks:  # its own line breaks: "\r" + "\n" would make one
                offsets.add(length, last, True)
                parts.append(breaks)
                length += len(breaks)
        if end > start:
            offsets.add(length, start)
            parts.append(text[start:end])
            length += end - start
        last = end
    return "".join(parts), offsets


def _common(a: str, b: str, part: Callable[[str, int], str], limit: int | None = None) -> int:
    """The length of the longest common prefix (or suffix) of a and b, at most `limit`: a binary search
    on slices, compared in C."""
    low, high = 0, min(len(a), len(b)) if limit is None else limit
    while low < high:
        middle = (low + high + 1) // 2
        if part(a, middle) == part(b, middle):
            low = middle
        else:
            high = middle - 1
    return low


def _inside(offset: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= offset < end for start, end in spans)


def _top_name(qualname: str, module: str) -> str:
    local = qualname[len(module) + 1:] if module and qualname.startswith(module + ".") else qualname
    return local.split(".")[0]


def _lookup(project: Project, qualname: str) -> object:
    consulted = set(project.consulted)
    try:
        return project.kernel(qualname)
    except Exception:  # noqa: BLE001 - a lookup that fails now fails the same way on reuse
        return None
    finally:
        project.consulted.clear()
        project.consulted.update(consulted)


def _still_valid(found: SliceResult, project: Project) -> bool:
    return all(_lookup(project, q) is kernel for q, kernel in found.lookups)
