"""Lint one file end to end: read, parse once, build the kernel model, run the rules, drop suppressed
findings, and in fix mode apply fixes, re-parse and re-lint until nothing changes."""

from __future__ import annotations

from pathlib import Path

from tritonlint.analysis.launch_index import ModuleLinks, module_links
from tritonlint.analysis.model import LAUNCH_TEXT, ModuleModel
from tritonlint.analysis.project import Deferred, Project
from tritonlint.analysis.project_facts import beside_key, namespace_key
from tritonlint.config import Settings
from tritonlint.diagnostics import Diagnostic, one_per_spot, syntax_error
from tritonlint.engine import Engine, RuleCrash
from tritonlint.fixes import WriteRefused, applicable, apply_fixes, write_atomic
from tritonlint.results import FileResult, FixMode
from tritonlint.ruleset import Rule
from tritonlint.source import (
    ParsedFile,
    SourceError,
    SourceText,
    SyntaxProblem,
    check_syntax,
    read_source,
    syntax_problem,
)
from tritonlint.suppression import UNUSED, Suppressions
from tritonlint.templates import ROW_CLOSE, ROW_OPEN, mark_rows
from tritonlint.timelimit import WRITE, FileTimeout, enter, message, time_limit

MAX_FIX_ROUNDS = 10


class FileLinter:
    def __init__(self, engine: Engine, settings: Settings, known: frozenset[str], mode: FixMode, unsafe: bool) -> None:
        self.engine = engine
        self.settings = settings
        self.known = known  # every rule's code and name, for TL900's unknown codes
        self.mode = mode
        self.unsafe = unsafe
        self.mark_rows = False  # quoted rows as Row markers, for texts whose rows are placed later (notebooks)

    def with_mode(self, mode: FixMode) -> FileLinter:
        """The same linter (engine, settings, rules) applying fixes as `mode` says."""
        return self if mode is self.mode else FileLinter(self.engine, self.settings, self.known, mode, self.unsafe)

    def lint_path(self, path: Path, display: str, module: str, project: Project) -> FileResult:
        result = FileResult(display, module)
        try:
            source = read_source(path)
        except SourceError as exc:
            result.skipped = str(exc)
            return result
        return self.lint_source(source, path, display, module, project, result)

    def lint_source(self, source: SourceText, path: Path | None, display: str, module: str, project: Project,
                    result: FileResult | None = None) -> FileResult:
        result = result or FileResult(display, module)
        if "triton" not in source.text and not LAUNCH_TEXT.search(source.text):
            # a file that never mentions triton defines no kernel and launches none: only its syntax is checked
            self._syntax_failed(syntax_problem(source.text, display), display, result)
            return result
        rules = self.settings.rules_for(self.engine.rules, display)
        try:
            with time_limit(self.settings.file_timeout):
                lint = self._lint_text(source.text, display, module, project, rules, result, path)
                if lint is None:
                    return result
                if self.mode is not FixMode.NONE:
                    self._fix(source, path, display, module, project, rules, result, lint)
                else:
                    result.diagnostics = lint
        except FileTimeout as timeout:
            return FileResult(display, module, timed_out=True,
                              internal_error=message(display, self.settings.file_timeout, timeout.stage))
        except Deferred as deferred:
            result.deferred = deferred.module
            result.diagnostics = []
        except RuleCrash as crash:
            result.internal_error = str(crash)
        except RecursionError:
            result.skipped = "nested too deeply to analyse, skipped"
        except Exception as exc:  # noqa: BLE001 - one file's surprise must not take down the whole run
            result.diagnostics = []
            result.internal_error = f"internal error on file {display}: {type(exc).__name__}: {exc}"
        return result

    def _lint_text(self, text: str, display: str, module: str, project: Project, rules: list[Rule],
                   result: FileResult, path: Path | None = None) -> list[Diagnostic] | None:
        """Findings for one text, or None when it does not parse (a TL000 finding is recorded instead)."""
        ran = rules
        enter("parse")
        rules = self.engine.could_match(rules, text)
        diagnostics: list[Diagnostic] = []
        # No rule can fire here, no kernel is defined here, and no other module of the run may launch, import or
        # call from here (a caller of another module's launching function is read for what it passes).
        if not rules and "jit" not in text and not project.linted_modules:
            if self._syntax_failed(syntax_problem(text, display), display, result):
                return None
        else:
            tree, problem = check_syntax(text, display)
            if self._syntax_failed(problem, display, result):
                return None
            assert tree is not None
            if self.mark_rows and ROW_OPEN not in text and ROW_CLOSE not in text:
                mark_rows(tree, text)
            parsed = ParsedFile(display, SourceText(text, "utf-8", False, "\n"), tree, module, path)
            enter("model")
            model = ModuleModel(tree, module, display, is_package=display.endswith("__init__.py"), text=text,
                                imported=project.module_model if project.sources else None,
                                namespaces=project.namespaces)
            if project.namespaces is not None:  # a cached result holds while each dotted import resolves as it did
                project.consulted.update(map(namespace_key, model.dotted_imports))
                project.consulted.update(beside_key(module, alias) for alias in model.beside_imports)
            result.summaries = model.summaries()
            # A modeled module with no links records empty ones: the launch index then never reads it again.
            result.links = (module_links(model, project.linted_modules) or ModuleLinks()) if project.linted_modules \
                else None
            if rules:
                diagnostics = self.engine.run(parsed, model, project, rules, fit=not self.mark_rows)
        return self.suppressed(diagnostics, text, display, ran)

    def suppressed(self, diagnostics: list[Diagnostic], text: str, display: str, ran: list[Rule]) -> list[Diagnostic]:
        """The findings (one per rule and spot) the file's suppression comments keep, with TL900's unused ones, in order."""
        diagnostics = one_per_spot(diagnostics)
        suppressions = Suppressions.scan(text)
        if not suppressions.directives:
            return sorted(diagnostics, key=lambda d: d.sort_key)
        kept = [d for d in diagnostics if not suppressions.suppresses(d)]
        if self.settings.code_enabled(*UNUSED) and not self.settings.ignored_in(display, *UNUSED):
            codes = {code for rule in ran for code in (rule.id, rule.name)}
            kept += [d for d in suppressions.unused(text, display, codes, self.known) if not suppressions.suppresses(d)]
        return sorted(kept, key=lambda d: d.sort_key)

    def _syntax_failed(self, problem: SyntaxProblem | None, display: str, result: FileResult) -> bool:
        """Whether the text does not parse; the problem is recorded as a TL000 finding or a skip."""
        if problem is None:
            return False
        if problem.too_deep:
            result.skipped = f"{problem.message}, skipped"
        else:  # whatever the selection: a file that does not parse was not linted, and the user must know
            result.diagnostics = [syntax_error(display, problem.message, problem.row, problem.column)]
        return True

    def _fix(self, source: SourceText, path: Path | None, display: str, module: str, project: Project,
             rules: list[Rule], result: FileResult, diagnostics: list[Diagnostic]) -> None:
        text = source.text
        original_diagnostics = diagnostics
        refused_keys: set[tuple[str, int, int]] = set()
        for _ in range(MAX_FIX_ROUNDS):
            enter("fix")
            candidates = [d for d in applicable(diagnostics, self.unsafe) if _key(d) not in refused_keys]
            if not candidates:
                break
            new_text, taken = apply_fixes(text, [d.fix for d in candidates], source.newline)  # type: ignore[misc]
            if check_syntax(new_text, display)[1] is not None:
                taken_ids = {id(f) for f in taken}
                good = []
                for diagnostic in candidates:
                    if id(diagnostic.fix) not in taken_ids:
                        continue
                    alone, _ = apply_fixes(text, [diagnostic.fix], source.newline)  # type: ignore[list-item]
                    if check_syntax(alone, display)[1] is None:
                        good.append(diagnostic)
                    else:
                        refused_keys.add(_key(diagnostic))
                        result.refused.append(f"{display}:{diagnostic.location.row}:{diagnostic.location.column}: "
                                              f"{diagnostic.code} fix refused: it would leave the file unparsable")
                if not good:
                    continue
                new_text, taken = apply_fixes(text, [d.fix for d in good], source.newline)  # type: ignore[misc]
                if check_syntax(new_text, display)[1] is not None:
                    break
            if new_text == text:
                break
            result.fixes_applied += len(taken)
            fix_codes = {id(d.fix): d.code for d in candidates}
            result.fixed_codes.update(fix_codes[id(f)] for f in taken)
            text = new_text
            relinted = self._lint_text(text, display, module, project, rules, result, path)
            if relinted is None:  # cannot happen after the syntax check above; stay safe regardless
                break
            diagnostics = relinted
        result.diagnostics = diagnostics
        if text == source.text:
            return
        if self.mode is FixMode.FIX and path is not None:
            enter(WRITE)
            try:
                write_atomic(path, source, text)
            except (OSError, UnicodeEncodeError, WriteRefused) as exc:
                # Nothing was written: report the findings as they stand in the file, not as fixed.
                result.skipped = f"fixes not written: {_reason(exc)}"
                result.diagnostics = original_diagnostics
                result.fixes_applied = 0
                result.fixed_codes.clear()
                return
        result.original, result.fixed = source.text, text


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc)


def _key(diagnostic: Diagnostic) -> tuple[str, int, int]:
    return diagnostic.code, diagnostic.location.row, diagnostic.location.column
