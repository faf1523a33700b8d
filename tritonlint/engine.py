"""Run rules over one parsed file: ast-grep matches, then the rule's conditions against the kernel model,
then messages and fixes rendered from the rule's templates."""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable
from functools import cached_property
from typing import TYPE_CHECKING, Any

from tritonlint import evidence
from tritonlint.diagnostics import Diagnostic, Edit, Fix, Span
from tritonlint.model import JitFunction, LaunchSite, ModuleModel
from tritonlint.prefilter import Requirement, holds, rule_requirement
from tritonlint.registry import CONDITIONS, FIXERS, Verdict
from tritonlint.sgutil import find_all
from tritonlint.source import ParsedFile
from tritonlint.templates import render
from tritonlint.timelimit import enter

if TYPE_CHECKING:
    from ast_grep_py import SgNode

    from tritonlint.ruleset import Rule


class Deferred(Exception):
    """A rule needs a kernel from another linted module whose summary this process does not have yet."""

    def __init__(self, module: str) -> None:
        super().__init__(module)
        self.module = module


class RuleCrash(Exception):
    def __init__(self, rule: Rule, path: str, exc: BaseException) -> None:
        super().__init__(f"internal error in rule {rule.id} on file {path}: {type(exc).__name__}: {exc}")


class Project:
    """Kernels of other modules, for rules that follow a launch into the module that defines the kernel."""

    def __init__(self, linted_modules: frozenset[str] = frozenset(), summaries: dict[str, JitFunction] | None = None,
                 shared: dict[str, dict[str, dict[str, JitFunction]]] | None = None):
        self.linted_modules = linted_modules
        self.summaries = summaries  # None in the first pass: nothing is known about other modules yet
        # Module names that several linted files share (scripts named kernels.py in two folders, two copies of
        # a package): module -> source root of each file -> that file's kernels. An import finds the one under
        # the importing file's own root, as Python would.
        self.shared = shared or {}
        self.consulted: set[str] = set()  # launch targets looked up: what a cached result depends on

    def kernel(self, qualname: str | None, root: str | None = None) -> JitFunction | None:
        """The kernel `qualname` names, for a file whose source root is `root` (see `source_root`)."""
        if not qualname:
            return None
        self.consulted.add(qualname)
        module = defining_module(qualname, self.linted_modules)
        if self.summaries is None:
            if module is not None:
                raise Deferred(module)
            return None
        if module in self.shared:
            return self.shared[module].get(root or "", {}).get(qualname)
        return self.summaries.get(qualname)


def source_root(path: str, module: str) -> str:
    """The folder a file's dotted module name is relative to: `b` for b/kernels.py (module `kernels`),
    `src` for src/pkg/ops/mm.py (module `pkg.ops.mm`) and for src/pkg/__init__.py (module `pkg`)."""
    path = path.replace("\\", "/")
    folder = posixpath.dirname(path)
    for _ in range(module.count(".") + (posixpath.basename(path) == "__init__.py")):
        folder = posixpath.dirname(folder)
    return folder


def defining_module(qualname: str, linted_modules: frozenset[str]) -> str | None:
    """The linted module a dotted name lives in (the longest linted prefix), if any."""
    module = qualname.rpartition(".")[0]
    while module:
        if module in linted_modules:
            return module
        module = module.rpartition(".")[0]
    return None


class MatchContext:
    """What a condition or fixer sees: the match, the file, its kernel model and the rule's options."""

    def __init__(self, file: ParsedFile, model: ModuleModel, project: Project, rule: Rule, node: SgNode,
                 options: dict[str, Any], target: int | None = None) -> None:
        self.file = file
        self.model = model
        self.project = project
        self.rule = rule
        self.node = node
        self.options = options
        self.target = target  # configured compute capability (sm_90 -> 90), None when not configured

    def metavar(self, name: str) -> SgNode | None:
        return self.node.get_match(name)

    def arg(self, value: Any) -> Any:
        """A condition argument, with {option: NAME} replaced by the option's configured value."""
        if isinstance(value, dict) and set(value) == {"option"}:
            return self.options[value["option"]]
        return value

    def span(self, node: SgNode | None = None) -> tuple[int, int]:
        rng = (node or self.node).range()
        return rng.start.index, rng.end.index

    def ast_node(self, node: SgNode | None = None, types: tuple[type, ...] = (ast.AST,)) -> ast.AST | None:
        """The Python ast node with exactly the span of an ast-grep node."""
        return self.file.ast_at(*self.span(node), types)

    @cached_property
    def function(self) -> JitFunction | None:
        """The @triton.jit function the match sits in, if any."""
        return self.model.function_at(self.file.lines.row_of(self.node.range().start.index) + 1)

    def kernel_for(self, launch: LaunchSite) -> JitFunction | None:
        return self.model.kernel_for(launch) or self.project.kernel(launch.target, self.source_root)

    @cached_property
    def source_root(self) -> str:
        return source_root(self.file.path, self.model.module)


class Engine:
    """Applies a fixed set of rules to files; one per process."""

    def __init__(self, rules: list[Rule], options: dict[str, Any], target: int | None = None) -> None:
        self.rules = rules
        self.options = options
        self.target = target

    @cached_property
    def requirements(self) -> dict[str, Requirement | None]:
        from tritonlint import checks  # noqa: F401 - the conditions (rules may come from the cache, unvalidated)

        return {rule.id: rule_requirement(rule) for rule in self.rules}

    def could_match(self, rules: Iterable[Rule], text: str) -> list[Rule]:
        """The rules whose required text the file has: the others cannot fire, so they are not run."""
        requirements = self.requirements
        return [rule for rule in rules
                if holds(requirements[rule.id] if rule.id in requirements else rule_requirement(rule), text)]

    def run(self, file: ParsedFile, model: ModuleModel, project: Project, rules: Iterable[Rule]) -> list[Diagnostic]:
        diagnostics = []
        for rule in self.could_match(rules, file.text):
            enter(f"rule {rule.id}")  # what a file that runs past the time limit names
            if not self._applies(rule, model):
                continue
            options = {name: self.options.get(name, spec.default) for name, spec in rule.options.items()}
            for node in find_all(file.sg_root, rule.matcher):
                ctx = MatchContext(file, model, project, rule, node, options, self.target)
                try:
                    verdict = self._evaluate(rule, ctx)
                    if verdict is not None:
                        diagnostics.append(self._diagnostic(rule, ctx, verdict))
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

    def _diagnostic(self, rule: Rule, ctx: MatchContext, verdict: Verdict) -> Diagnostic:
        variables = {"measured": evidence.measured_phrase(rule.id), **verdict.vars}
        start, end = verdict.span or ctx.span()
        lines = ctx.file.lines
        return Diagnostic(
            code=rule.id,
            name=rule.name,
            severity=verdict.severity or rule.severity,
            category=rule.category,
            message=render(rule.message, ctx.node, ctx.file.text, variables),
            filename=ctx.file.path,
            location=lines.position(start),
            end_location=lines.position(end),
            start=start,
            end=end,
            fix=self._fix(rule, ctx, verdict, variables),
            url=rule.url,
            notes=verdict.notes,
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

