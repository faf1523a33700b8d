"""`tritonlint server`: a Language Server Protocol server over standard input/output (pygls).

Open buffers are linted in-process with the same linter as the command line; a buffer's kernels are
visible to the other buffers that launch them, and kernels of modules that are not open come from disk.
Imported only by `tritonlint server`, so the lint-only install never needs pygls.
"""

from __future__ import annotations

import ast
import asyncio
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from cattrs import Converter
from pygls.lsp.server import LanguageServer
from pygls.protocol import default_converter

from tritonlint import __version__, evidence
from tritonlint.analysis.model import JitFunction, ModuleModel
from tritonlint.analysis.project import Project, module_name, namespace_parents, source_root
from tritonlint.config import (
    ConfigError,
    Settings,
    build_settings,
    check_selectors,
    extend_rule_dirs,
    find_config,
    read_config,
    validate_target,
)
from tritonlint.diagnostics import Diagnostic
from tritonlint.fixes import apply_fixes
from tritonlint.incremental import IncrementalLinter
from tritonlint.inputs import CONFIG_FILES
from tritonlint.linter import FileLinter
from tritonlint.results import FileResult, FixMode
from tritonlint.ruleset import Rule, RuleFileError, load_rules
from tritonlint.runner import make_linter
from tritonlint.source import (
    LineIndex,
    SourceError,
    check_syntax,
    decode_source,
    read_source,
)
from tritonlint.suppression import Suppressions

DEBOUNCE_S = 0.15
MAX_CHARS = 5_000_000  # a buffer larger than this (a generated file) is not linted while typing
FIX_ALL = "source.fixAll.tritonlint"
SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning,
            "info": lsp.DiagnosticSeverity.Information}
LEVELS = ("info", "warning", "error")
_NOQA = re.compile(r"#\s*noqa:\s*(?P<codes>[A-Z]+[0-9]+(?:(?:\s*,\s*|\s+)[A-Z]+[0-9]+)*)", re.IGNORECASE)


# -- positions: the protocol counts columns in the negotiated unit (UTF-16 unless the client asks otherwise)

class Positions:
    """Character offsets of one text <-> protocol positions, with Python's (and the protocol's) line breaks."""

    def __init__(self, text: str, encoding: str) -> None:
        self.index = LineIndex(text)
        self.text = text
        self.width = {"utf-8": _utf8, "utf-32": len}.get(encoding, _utf16)

    def position(self, offset: int) -> lsp.Position:
        row = self.index.row_of(offset)
        start = self.index.starts[row]
        return lsp.Position(row, self.width(self.text[start:offset]))

    def range(self, start: int, end: int) -> lsp.Range:
        return lsp.Range(self.position(start), self.position(end))

    def offset(self, position: lsp.Position) -> int:
        if position.line >= self.index.row_count:
            return len(self.text)
        start = self.index.starts[position.line]
        line = self.index.line(position.line + 1)
        units = 0
        for column, char in enumerate(line):
            if units >= position.character:
                return start + column
            units += self.width(char)
        return start + len(line)


def _utf16(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def _utf8(text: str) -> int:
    return len(text.encode("utf-8"))


# -- the project model the server relies on: kept behind this small interface, as the lead reshapes it

class BufferProject(Project):
    """Kernels of other modules for one buffer: an open buffer's own summaries first, else the module's file
    under the importing file's source root, read from disk (as Python would import it)."""

    def __init__(self, store: SummaryStore, source_root: Path | None) -> None:
        super().__init__()
        self.store = store
        # The source root, then the folders above its namespace packages (`mpa/` imports as `mpa.kernels`).
        self.source_dirs: list[Path | None] = [source_root] if source_root is None else \
            [source_root, *(Path(folder).parent for folder in namespace_parents(str(source_root)))]

    def kernel(self, qualname: str | None, root: str | None = None) -> JitFunction | None:
        if not qualname:
            return None
        self.consulted.add(qualname)
        for source_dir in self.source_dirs:
            module = qualname.rpartition(".")[0]
            while module:
                found = self.store.module(module, source_dir)
                if found is not None:
                    return found.get(qualname)
                module = module.rpartition(".")[0]
        return None


class SummaryStore:
    """Kernel summaries by module: open buffers (set after each lint) take precedence over files on disk."""

    def __init__(self) -> None:
        # module -> file -> summaries of its open buffer (two folders' kernels.py are both the module `kernels`)
        self.buffers: dict[str, dict[Path, dict[str, JitFunction]]] = {}
        self.disk: dict[str, tuple[tuple[int, int], dict[str, JitFunction]]] = {}  # path -> (stat key, summaries)

    def module(self, module: str, root: Path | None) -> dict[str, JitFunction] | None:
        """The summaries of `module` as a file under `root` imports it: the open buffer of that file, else the
        file on disk; for a buffer without a file (root None), the one open buffer of that name, if one."""
        opened = self.buffers.get(module, {})
        if root is None:
            return next(iter(opened.values())) if len(opened) == 1 else None
        base = root.joinpath(*module.split("."))
        places = (base.with_suffix(".py"), base / "__init__.py")
        for path in places:
            if path in opened:
                return opened[path]
        for path in places:
            summaries = self._from_disk(path, module)
            if summaries is not None:
                return summaries
        return None

    def _from_disk(self, path: Path, module: str) -> dict[str, JitFunction] | None:
        try:
            info = path.stat()
        except OSError:
            return None
        key = (info.st_mtime_ns, info.st_size)
        cached = self.disk.get(str(path))
        if cached is not None and cached[0] == key:
            return cached[1]
        summaries: dict[str, JitFunction] = {}
        try:
            text = read_source(path).text
            tree, problem = check_syntax(text, str(path))
            if tree is not None and problem is None:
                summaries = ModuleModel(tree, module, str(path), path.name == "__init__.py", text=text).summaries()
        except (SourceError, RecursionError, ValueError):
            pass
        self.disk[str(path)] = (key, summaries)
        return summaries


# -- configuration: the project's file, then the client's settings on top

@dataclass
class ClientSettings:
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    target: str | None = None
    fail_level: str | None = None  # findings below it are shown as hints


@dataclass
class Config:
    settings: Settings
    rules: list[Rule]
    linter: FileLinter
    fixer: FileLinter  # safe fixes of the buffer (source.fixAll)


@dataclass
class Document:
    uri: str
    text: str
    version: int | None
    path: Path | None
    result: FileResult | None = None
    key: tuple[object, ...] | None = None  # what the result was computed from (text, config and dependency generations)
    result_id: str = ""
    consulted: frozenset[str] = frozenset()
    pending: asyncio.TimerHandle | None = None
    incremental: IncrementalLinter | None = None  # the buffer's per-slice findings, kept between edits
    generation: int = 0  # the server's generation the incremental results were computed in
    converted: dict[int, tuple[Diagnostic, lsp.Diagnostic]] = field(default_factory=dict)  # by id of the finding
    converted_for: tuple[object, ...] = ()  # the position encoding and fail level they were converted with


class TritonLintServer(LanguageServer):
    def __init__(self) -> None:
        # Full sync: pygls splits incremental edits at every str.splitlines() break (form feeds among them),
        # which the protocol does not count as line breaks; a whole buffer per edit costs little over a pipe.
        self.json = DiagnosticJson()
        super().__init__("tritonlint", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Full,
                         converter_factory=self.json.converter)
        self.documents: dict[str, Document] = {}
        self.store = SummaryStore()
        self.client_settings = ClientSettings()
        self.configs: dict[Path | None, Config] = {}
        self.config_paths: dict[Path, Path | None] = {}  # folder -> its configuration file
        self.generation = 0  # bumped when configuration or a file on disk changes
        self.results = 0
        self.reported: set[str] = set()  # messages already shown, not repeated on every keystroke
        self.pull = False
        self._default_rules: list[Rule] | None = None

    # configuration

    def default_rules(self) -> list[Rule]:
        if self._default_rules is None:
            self._default_rules = load_rules([])
        return self._default_rules

    def config_for(self, path: Path | None) -> Config:
        folder = path.parent if path else Path.cwd()
        if folder not in self.config_paths:
            try:
                self.config_paths[folder] = find_config(folder)
            except ConfigError as exc:
                self.config_paths[folder] = None
                self.show_error(f"{exc}; linting with the default settings")
        config_path = self.config_paths[folder]
        if config_path not in self.configs:
            self.configs[config_path] = self._load(config_path, folder)
        return self.configs[config_path]

    def _load(self, config_path: Path | None, folder: Path) -> Config:
        rules = self.default_rules()
        settings = Settings(root=folder)
        if config_path is not None:
            try:
                data = read_config(config_path)
                rules = load_rules(extend_rule_dirs(config_path, data))
                settings = build_settings(config_path, data, rules)
            except (ConfigError, RuleFileError) as exc:
                rules, settings = self.default_rules(), Settings(root=config_path.parent)
                self.show_error(f"{exc}; linting with the default settings")
        self._apply_client(settings, rules)
        return Config(settings, rules, make_linter(rules, settings, FixMode.NONE, True),
                      make_linter(rules, settings, FixMode.DIFF, False))

    def _apply_client(self, settings: Settings, rules: list[Rule]) -> None:
        chosen = self.client_settings
        before = (settings.select, list(settings.ignore), settings.target)
        if chosen.select is not None:
            settings.select = list(chosen.select)
        settings.ignore += chosen.ignore
        if chosen.target:
            settings.target = chosen.target
        try:
            check_selectors(settings, rules, "the editor's settings")
        except ConfigError as exc:
            settings.select, settings.ignore, settings.target = before
            self.show_error(str(exc))

    def update_client_settings(self, raw: Any) -> None:
        if isinstance(raw, dict) and isinstance(raw.get("tritonlint"), dict):
            raw = raw["tritonlint"]
        chosen = ClientSettings()
        if isinstance(raw, dict):
            try:
                chosen = _client_settings(raw)
            except ConfigError as exc:
                self.show_error(str(exc))
        self.client_settings = chosen
        self.reload()

    def reload(self) -> None:
        from tritonlint.analysis.triton_versions import project_pin  # the pin may have changed with the files

        project_pin.cache_clear()
        self.configs.clear()
        self.config_paths.clear()
        self.reported.clear()
        self.generation += 1

    def show_error(self, message: str) -> None:
        message = f"tritonlint: {message}"
        if message not in self.reported:
            self.reported.add(message)
            self.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Error, message))

    # linting

    def lint(self, document: Document) -> FileResult:
        """The findings of a buffer as it stands, computed once per text, configuration and dependencies."""
        key = (document.text, self.generation, self._dependency_key(document))
        if document.result is not None and document.key == key:
            return document.result
        config = self.config_for(document.path)
        display, module = self._names(document, config)
        if len(document.text) > MAX_CHARS:
            result = FileResult(display, module, skipped=f"{len(document.text):,} characters, more than the "
                                f"editor limit of {MAX_CHARS:,}; run tritonlint on the command line")
        else:
            project = self._project(document, module)
            source = decode_source(document.text.encode("utf-8", "surrogatepass"))
            incremental = document.incremental
            if incremental is None or incremental.linter is not config.linter or document.generation != self.generation:
                incremental = document.incremental = IncrementalLinter(config.linter)
                document.generation = self.generation
            result = incremental.lint_source(source, document.path, display, module, project)
            if result.internal_error:
                self.show_error(result.internal_error)
            if result.timed_out and document.result is not None:
                return document.result  # a late lint is dropped: the previous diagnostics stay
            document.consulted = frozenset(project.consulted)
        if document.path is not None and result.skipped is None and not result.internal_error:
            self.store.buffers.setdefault(module, {})[document.path] = result.summaries
        self.results += 1
        document.result, document.key, document.result_id = result, key, str(self.results)
        return result

    def _names(self, document: Document, config: Config) -> tuple[str, str]:
        """The file's path as the configuration sees it (per-file-ignores) and its dotted module name."""
        if document.path is None:
            return urlparse(document.uri).path or "untitled.py", "untitled"
        try:
            display = document.path.relative_to(config.settings.root).as_posix()
        except ValueError:
            display = document.path.as_posix()
        return display, module_name(document.path)

    def _project(self, document: Document, module: str) -> BufferProject:
        root = Path(source_root(str(document.path), module)) if document.path is not None else None
        return BufferProject(self.store, root)

    def _dependency_key(self, document: Document) -> tuple[object, ...]:
        """The summaries of the open buffers this buffer's launches looked up (a change there re-lints it)."""
        if not document.consulted:
            return ()
        return tuple(sorted((m, str(path), id(s)) for m, opened in self.store.buffers.items()
                            if any(q.startswith(m + ".") for q in document.consulted) for path, s in opened.items()))

    def dependants(self, document: Document) -> list[Document]:
        """The other open buffers that launch a kernel of this buffer's module."""
        if document.result is None or not document.result.module:
            return []
        prefix = document.result.module + "."
        return [d for d in self.documents.values()
                if d is not document and any(q.startswith(prefix) for q in d.consulted)]

    def diagnostics(self, document: Document) -> list[lsp.Diagnostic]:
        result = self.lint(document)
        positions = self.positions(document)
        # A finding the incremental linter reused is the same object at the same offsets, on unchanged lines
        # of its own unit: its protocol form is reused with it.
        setting = (positions.width, self.client_settings.fail_level)
        known = document.converted if document.converted_for == setting else {}
        converted = {}
        for d in result.diagnostics:
            entry = known.get(id(d))
            if entry is None or entry[0] is not d:
                entry = (d, self.to_lsp(d, positions, document.uri))
                self.json.keep(entry[1])
            converted[id(d)] = entry
        for finding, item in document.converted.values():  # what this buffer no longer sends
            if converted.get(id(finding), (None,))[0] is not finding:
                self.json.drop(item)
        document.converted, document.converted_for = converted, setting
        found = [converted[id(d)][1] for d in result.diagnostics]
        if result.skipped:
            found.append(lsp.Diagnostic(lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
                                        f"not linted: {result.skipped}", lsp.DiagnosticSeverity.Information,
                                        source="tritonlint"))
        return found

    def positions(self, document: Document) -> Positions:
        encoding = self.server_capabilities.position_encoding if self.protocol.server_capabilities else None
        return Positions(document.text, str(encoding or "utf-16"))

    def to_lsp(self, finding: Diagnostic, positions: Positions, uri: str) -> lsp.Diagnostic:
        severity = SEVERITY.get(finding.severity, lsp.DiagnosticSeverity.Warning)
        level = self.client_settings.fail_level
        if level and finding.code != "TL000" and LEVELS.index(_level(finding.severity)) < LEVELS.index(level):
            severity = lsp.DiagnosticSeverity.Hint
        message = "\n".join([finding.message, *finding.notes])
        related = None
        if finding.related:  # spans of the finding's own file
            related = [lsp.DiagnosticRelatedInformation(
                lsp.Location(uri, positions.range(span.start, span.end)),
                f"{finding.code}: `{_snippet(positions.text[span.start:span.end])}`") for span in finding.related]
        return lsp.Diagnostic(
            range=positions.range(finding.start, finding.end) if finding.end > finding.start
            else lsp.Range(_point(finding), _point(finding, 1)),
            message=message, severity=severity, code=finding.code, source="tritonlint",
            code_description=lsp.CodeDescription(finding.url) if finding.url else None,
            related_information=related, data={"name": finding.name})

    def publish(self, document: Document) -> None:
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
            document.uri, self.diagnostics(document), document.version))

    def relint(self, document: Document, delay: float = 0.0) -> None:
        """Lint (after `delay`, replacing a pending lint) and publish, then update the buffers that launch its
        kernels."""
        if document.pending is not None:
            document.pending.cancel()
            document.pending = None
        if delay:
            document.pending = asyncio.get_running_loop().call_later(delay, self.relint, document)
            return
        self.publish_safely(document)
        for other in self.dependants(document):
            self.publish_safely(other)
        if self.pull:
            self._refresh()

    def publish_safely(self, document: Document) -> None:
        try:
            if self.pull:
                self.lint(document)  # the client pulls; linting now keeps the buffer's kernels current
            else:
                self.publish(document)
        except Exception as exc:  # noqa: BLE001 - the server must outlive any one buffer
            self.show_error(f"internal error on {document.uri}: {type(exc).__name__}: {exc}")

    def relint_all(self) -> None:
        for document in list(self.documents.values()):
            self.publish_safely(document)
        if self.pull:
            self._refresh()

    def _refresh(self) -> None:
        workspace = self.client_capabilities.workspace
        if workspace and workspace.diagnostics and workspace.diagnostics.refresh_support:
            self.workspace_diagnostic_refresh(None)


class DiagnosticJson:
    """The JSON form of each protocol diagnostic a buffer sends, built once and sent with every response that
    still holds it (cattrs costs more than the rest of a response)."""

    def __init__(self) -> None:
        self.cache: dict[int, tuple[lsp.Diagnostic, Any]] = {}  # by id of the protocol diagnostic
        self.plain: Callable[[lsp.Diagnostic], Any] = lambda item: None

    def converter(self) -> Converter:
        """pygls's converter, reading diagnostics from the cache."""
        converter: Converter = default_converter()  # type: ignore[no-untyped-call]
        self.plain = converter.get_unstructure_hook(lsp.Diagnostic)
        converter.register_unstructure_hook(lsp.Diagnostic, self.unstructure)
        return converter

    def keep(self, item: lsp.Diagnostic) -> None:
        self.cache[id(item)] = (item, self.plain(item))

    def drop(self, item: lsp.Diagnostic) -> None:
        self.cache.pop(id(item), None)

    def unstructure(self, item: lsp.Diagnostic) -> Any:
        hit = self.cache.get(id(item))
        return hit[1] if hit is not None and hit[0] is item else self.plain(item)


def _point(finding: Diagnostic, extra: int = 0) -> lsp.Position:
    return lsp.Position(max(finding.location.row - 1, 0), max(finding.location.column - 1, 0) + extra)


def _level(severity: str) -> str:
    return severity if severity in LEVELS else "warning"


def _snippet(text: str) -> str:
    first = text.strip().split("\n", 1)[0]
    return first if len(first) <= 60 else first[:57] + "..."


def _client_settings(raw: dict[str, Any]) -> ClientSettings:
    where = "the editor's settings"
    chosen = ClientSettings()
    for key in ("select", "ignore"):
        value = raw.get(key)
        if value is None:
            continue
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(where, key, "must be a list of rule codes, prefixes or names")
        setattr(chosen, key, value)
    if raw.get("target"):
        chosen.target = validate_target(raw["target"], where)
    level = raw.get("fail-level", raw.get("failLevel"))
    if level is not None:
        if level not in LEVELS:
            raise ConfigError(where, "fail-level", f"{level!r} is not one of {', '.join(LEVELS)}")
        chosen.fail_level = level
    return chosen


def uri_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def is_config(uri: str) -> bool:
    return uri.rsplit("/", 1)[-1] in CONFIG_FILES


# -- code actions and hover

def fix_actions(server: TritonLintServer, document: Document, requested: lsp.Range) -> list[lsp.CodeAction]:
    result = server.lint(document)
    positions = server.positions(document)
    first, last = requested.start.line + 1, requested.end.line + 1
    actions: list[lsp.CodeAction] = []
    for finding in result.diagnostics:  # by line, as editors ask for the cursor's line
        if not (finding.location.row <= last and first <= finding.end_location.row):
            continue
        diagnostic = server.to_lsp(finding, positions, document.uri)
        fix = finding.fix
        if fix is not None and fix.applicability in ("safe", "unsafe") and fix.edits:
            fixed, _ = apply_fixes(document.text, [fix])
            if check_syntax(fixed, "fix")[1] is None:  # a fix that breaks the buffer is never offered
                title = f"Fix {finding.code}: {fix.message} ({fix.applicability} fix)"
                edits = [lsp.TextEdit(positions.range(e.start, e.end), e.content) for e in fix.edits]
                actions.append(lsp.CodeAction(title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                                              is_preferred=fix.applicability == "safe",
                                              edit=_edit(document, edits)))
        if finding.code != "TL000":
            ignore = ignore_edit(document.text, finding)
            if ignore is not None:
                offset_start, offset_end, content = ignore
                edit = lsp.TextEdit(positions.range(offset_start, offset_end), content)
                actions.append(lsp.CodeAction(f"Ignore {finding.code} on this line", kind=lsp.CodeActionKind.QuickFix,
                                              diagnostics=[diagnostic], edit=_edit(document, [edit])))
    return actions


def fix_all_action(server: TritonLintServer, document: Document) -> lsp.CodeAction | None:
    """Every safe fix of the buffer, through the linter's own fix loop, as one minimal edit."""
    config = server.config_for(document.path)
    display, module = server._names(document, config)
    source = decode_source(document.text.encode("utf-8", "surrogatepass"))
    result = config.fixer.lint_source(source, None, display, module, server._project(document, module))
    if result.fixed is None or result.fixed == document.text:
        return None
    old, new = document.text, result.fixed
    prefix = len(os.path.commonprefix([old, new]))
    suffix = len(os.path.commonprefix([old[prefix:][::-1], new[prefix:][::-1]]))
    positions = server.positions(document)
    edit = lsp.TextEdit(positions.range(prefix, len(old) - suffix), new[prefix:len(new) - suffix])
    return lsp.CodeAction(f"Fix all safe tritonlint findings ({result.fixes_applied})", kind=FIX_ALL,
                          edit=_edit(document, [edit]))


def _edit(document: Document, edits: list[lsp.TextEdit]) -> lsp.WorkspaceEdit:
    return lsp.WorkspaceEdit(changes={document.uri: edits})


def ignore_edit(text: str, finding: Diagnostic) -> tuple[int, int, str] | None:
    """An edit adding `# noqa: CODE` for the finding's line (merged into a noqa comment already there),
    checked to leave the code as it was (a comment cannot go inside a string or after a continuation) and
    to suppress the finding."""
    index = LineIndex(text)
    row = finding.location.row
    line = index.line(row)
    start = index.starts[row - 1]
    candidates: list[tuple[int, int, str]] = []
    existing = _NOQA.search(line)
    if existing:
        codes = sorted({*re.split(r"[\s,]+", existing.group("codes").strip()), finding.code})
        candidates.append((start + existing.start("codes"), start + existing.end("codes"), ", ".join(codes)))
    stripped = len(line.rstrip())
    candidates.append((start + stripped, start + len(line), f"  # noqa: {finding.code}"))
    indent = line[:len(line) - len(line.lstrip())]
    candidates.append((start, start, f"{indent}# noqa: {finding.code}\n"))
    try:
        before = ast.dump(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for s, e, content in candidates:
        new = text[:s] + content + text[e:]
        moved = row + (1 if content.endswith("\n") else 0)
        try:
            same = ast.dump(ast.parse(new)) == before
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        probe = Diagnostic(finding.code, finding.name, finding.severity, finding.category, "", "",
                           type(finding.location)(moved, 1), finding.end_location, 0, 0)
        if same and Suppressions.scan(new).suppresses(probe):
            return s, e, content
    return None


def hover(server: TritonLintServer, document: Document, position: lsp.Position) -> lsp.Hover | None:
    result = server.lint(document)
    positions = server.positions(document)
    offset = positions.offset(position)
    found = [d for d in result.diagnostics if d.start <= offset <= max(d.end, d.start + 1) and d.code != "TL000"]
    if not found:
        return None
    rules = {r.id: r for r in server.config_for(document.path).rules}
    parts = []
    for finding in found:
        rule = rules.get(finding.code)
        head = f"**{finding.code}** `{finding.name}` ({finding.severity})"
        body = [head, "", rule.summary if rule else "", "", finding.message,
                *(f"- {note}" for note in finding.notes), "", "**Evidence**", "",
                evidence.evidence_section(finding.code)]
        if finding.url:
            body += ["", f"[Documentation]({finding.url})"]
        parts.append("\n".join(body))
    first = found[0]
    return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, "\n\n---\n\n".join(parts)),
                     positions.range(first.start, max(first.end, first.start)))


# -- the protocol

def build_server() -> TritonLintServer:
    server = TritonLintServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: TritonLintServer, params: lsp.InitializeParams) -> None:
        text_document = params.capabilities.text_document
        ls.pull = bool(text_document and text_document.diagnostic)
        if params.initialization_options is not None:
            ls.update_client_settings(params.initialization_options)

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: TritonLintServer, params: lsp.InitializedParams) -> None:
        workspace = ls.client_capabilities.workspace
        watched = workspace and workspace.did_change_watched_files
        if watched and watched.dynamic_registration:
            watchers = [lsp.FileSystemWatcher(f"**/{name}") for name in (*CONFIG_FILES, "*.py", "requirements*.txt")]
            ls.client_register_capability(lsp.RegistrationParams([lsp.Registration(
                "tritonlint-watch", lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                lsp.DidChangeWatchedFilesRegistrationOptions(watchers))]))

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TritonLintServer, params: lsp.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        document = Document(item.uri, item.text, item.version, uri_path(item.uri))
        ls.documents[item.uri] = document
        ls.relint(document)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TritonLintServer, params: lsp.DidChangeTextDocumentParams) -> None:
        document = ls.documents.get(params.text_document.uri)
        if document is None:
            return
        for change in params.content_changes:  # full sync: each change is the whole text
            document.text = change.text
        document.version = params.text_document.version
        ls.relint(document, DEBOUNCE_S)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TritonLintServer, params: lsp.DidSaveTextDocumentParams) -> None:
        if is_config(params.text_document.uri):
            ls.reload()
            ls.relint_all()
            return
        document = ls.documents.get(params.text_document.uri)
        if document is not None:
            ls.relint(document)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TritonLintServer, params: lsp.DidCloseTextDocumentParams) -> None:
        document = ls.documents.pop(params.text_document.uri, None)
        if document is None:
            return
        if document.pending is not None:
            document.pending.cancel()
        if document.result is not None and document.result.module:
            opened = ls.store.buffers.get(document.result.module, {})
            if document.path is not None:
                opened.pop(document.path, None)  # its kernels come from disk again
            if not opened:
                ls.store.buffers.pop(document.result.module, None)
            for other in ls.dependants(document):
                ls.publish_safely(other)
        if not ls.pull:
            ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(document.uri, []))

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: TritonLintServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        if any(is_config(change.uri) or "/requirements" in change.uri for change in params.changes):
            ls.reload()  # the configuration, or the triton pin TL103 reads
        else:
            ls.generation += 1  # a module on disk changed: the buffers that launch its kernels may change
        ls.relint_all()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: TritonLintServer, params: lsp.DidChangeConfigurationParams) -> None:
        ls.update_client_settings(params.settings)
        ls.relint_all()

    @server.feature(lsp.TEXT_DOCUMENT_DIAGNOSTIC,
                    lsp.DiagnosticOptions(identifier="tritonlint", inter_file_dependencies=True,
                                          workspace_diagnostics=False))
    def pull(ls: TritonLintServer, params: lsp.DocumentDiagnosticParams) -> lsp.DocumentDiagnosticReport:
        document = ls.documents.get(params.text_document.uri)
        if document is None:
            return lsp.RelatedFullDocumentDiagnosticReport(items=[])
        if document.pending is not None:  # the client asks now: no reason to wait for the debounce
            document.pending.cancel()
            document.pending = None
        before = document.result_id
        items = ls.diagnostics(document)
        if params.previous_result_id and params.previous_result_id == document.result_id == before:
            return lsp.RelatedUnchangedDocumentDiagnosticReport(result_id=document.result_id)
        return lsp.RelatedFullDocumentDiagnosticReport(items=items, result_id=document.result_id)

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL]))
    def code_action(ls: TritonLintServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        document = ls.documents.get(params.text_document.uri)
        if document is None:
            return []
        only = params.context.only
        def wanted(kind: str) -> bool:
            return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)

        actions: list[lsp.CodeAction] = []
        if wanted(lsp.CodeActionKind.QuickFix):
            actions += fix_actions(ls, document, params.range)
        if wanted(FIX_ALL):
            fix_all = fix_all_action(ls, document)
            if fix_all is not None:
                actions.append(fix_all)
        return actions

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: TritonLintServer, params: lsp.HoverParams) -> lsp.Hover | None:
        document = ls.documents.get(params.text_document.uri)
        return hover(ls, document, params.position) if document is not None else None

    return server


def serve() -> None:
    build_server().start_io()
