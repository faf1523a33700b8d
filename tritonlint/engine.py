"""Run rules over one parsed file: ast-grep matches, then the rule's conditions against the kernel model,
then messages and fixes rendered from the rule's templates."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property
from typing import TYPE_CHECKING, Any

from tritonlint import evidence
from tritonlint.analysis.model import ModuleModel
from tritonlint.analysis.project import Deferred, Project
from tritonlint.context import CONDITIONS, FIXERS, MatchContext, Verdict
from tritonlint.diagnostics import Diagnostic, Edit, Fix, Span
from tritonlint.prefilter import Requirement, holds, rule_requirement
from tritonlint.sgutil import find_all
from tritonlint.source import ParsedFile
from tritonlint.templates import fit_headline, note_applies, render
from tritonlint.timelimit import enter

if TYPE_CHECKING:
    from tritonlint.ruleset import Rule


class RuleCrash(Exception):
    def __init__(self, rule: Rule, path: str, exc: BaseException) -> None:
        super().__init__(f"internal error in rule {rule.id} on file {path}: {type(exc).__name__}: {exc}")


class Engine:
    """Applies a fixed set of rules to files; one per process."""

    def __init__(self, rules: list[Rule], options: dict[str, Any], target: int | None = None) -> None:
        self.rules = rules
        self.options = options
        self.target = target

    @cached_property
    def requirements(self) -> dict[str, Requirement | None]:
        from tritonlint import rules  # noqa: F401 - the conditions (rules may come from the cache, unvalidated)

        return {rule.id: rule_requirement(rule) for rule in self.rules}

    def could_match(self, rules: Iterable[Rule], text: str) -> list[Rule]:
        """The rules whose required text the file has: the others cannot fire, so they are not run."""
        requirements = self.requirements
        return [rule for rule in rules
                if holds(requirements[rule.id] if rule.id in requirements else rule_requirement(rule), text)]

    def run(self, file: ParsedFile, model: ModuleModel, project: Project, rules: Iterable[Rule],
            fit: bool = True) -> list[Diagnostic]:
        """The findings of `rules`; with `fit` False their headlines are left for the caller to fit (the
        language server's slices fit them once the rows they quote are placed)."""
        diagnostics = []
        for rule in self.could_match(rules, file.text):
            enter(f"rule {rule.id}")  # what a file that runs past the time limit names
            if not self._applies(rule, model):
                continue
            options = {name: self.options.get(name, spec.default) for name, spec in rule.options.items()}
            replaced = model.replaced_lines  # a function a later `def` of its name replaces never runs
            for node in find_all(file.sg_root, rule.matcher):
                if replaced and node.range().start.line + 1 in replaced:
                    continue
                ctx = MatchContext(file, model, project, rule, node, options, self.target)
                project.launches_read.clear()
                try:
                    verdict = self._evaluate(rule, ctx)
                    if verdict is not None:
                        found = self._diagnostic(rule, ctx, verdict, fit)
                        found.judged_with = frozenset(project.launches_read)
                        diagnostics.append(found)
                except Deferred:
                    raise
                except Exception as exc:  # a rule must never take the run down without saying which
                    raise RuleCrash(rule, file.path, exc) from exc
        return diagnostics

    def _applies(self, rule: Rule, model: ModuleModel) -> bool:
        """Whether every condition of the rule can pass somewhere in this module."""
        for condition in rule.where:
            applies = CONDITIONS[condition.name].applies
            if applies is not None and not applies(model, self.target):
                return False
        return True

    @staticmethod
    def _evaluate(rule: Rule, ctx: MatchContext) -> Verdict | None:
        verdict = Verdict()
        for condition in rule.where:
            spec = CONDITIONS[condition.name]
            result = spec.function(ctx, **{k.replace("-", "_"): ctx.arg(v) for k, v in condition.args.items()})
            if not result:
                return None
            if isinstance(result, Verdict):
                verdict.vars.update(result.vars)
                verdict.data.update(result.data)
                verdict.notes.extend(result.notes)
                verdict.severity = result.severity or verdict.severity
                verdict.span = result.span or verdict.span
                verdict.applicability = result.applicability or verdict.applicability
                verdict.related.extend(result.related)
        return verdict

    def _diagnostic(self, rule: Rule, ctx: MatchContext, verdict: Verdict, fit: bool = True) -> Diagnostic:
        variables = {"measured": evidence.measured_phrase(rule.id), **verdict.vars}
        start, end = verdict.span or ctx.span()
        lines = ctx.file.lines
        fix = self._fix(rule, ctx, verdict, variables)  # a fixer may add notes (why no fix is offered)
        notes = [render(note, ctx.node, ctx.file.text, variables) for note in rule.notes if note_applies(note, variables)]
        message = render(rule.message, ctx.node, ctx.file.text, variables)
        return Diagnostic(
            code=rule.id,
            name=rule.name,
            severity=verdict.severity or rule.severity,
            category=rule.category,
            message=fit_headline(message) if fit else message,
            filename=ctx.file.path,
            location=lines.position(start),
            end_location=lines.position(end),
            start=start,
            end=end,
            fix=fix,
            url=rule.url,
            notes=notes + verdict.notes,  # the rule file's notes, then the conditions' and the fixer's
            related=tuple(Span(s, e, lines.position(s), lines.position(e)) for s, e in verdict.related),
        )

    @staticmethod
    def _fix(rule: Rule, ctx: MatchContext, verdict: Verdict, variables: dict[str, str]) -> Fix | None:
        spec = rule.fix
        if spec is None:
            return None
        if spec.template is not None:
            start, end = ctx.span()
            raw_edits = [(start, end, render(spec.template, ctx.node, ctx.file.text, variables, single_line=False))]
        else:
            raw_edits = FIXERS[spec.fixer].function(ctx, verdict)  # type: ignore[index]
            if not raw_edits:
                return None
        lines = ctx.file.lines
        edits = tuple(
            Edit(s, e, content, lines.position(s), lines.position(e)) for s, e, content in sorted(raw_edits)
        )
        applicability = verdict.applicability or spec.applicability
        return Fix(applicability, render(spec.message, ctx.node, ctx.file.text, variables), edits)

