"""What a rule's Python sees, and how it registers: the match context, and the named semantic conditions
and fixers that rule files refer to.

Rule files are data; the Python they may use is this fixed, reviewed set. A condition receives the match
context and its YAML arguments and returns a Verdict (a finding, with message variables) or None. A fixer
returns the edits of a fix, or None to offer none.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from tritonlint.analysis.launches import handed_kernels, launch_candidates
from tritonlint.analysis.model import JitFunction, LaunchSite, ModuleModel
from tritonlint.analysis.project import Project, source_root
from tritonlint.source import ParsedFile

if TYPE_CHECKING:
    from ast_grep_py import SgNode

    from tritonlint.ruleset import Rule


@dataclass(frozen=True)
class ParamSpec:
    """The type of a condition's argument, and whether it is required."""
    type: str  # "int", "str", "bool", "list"
    required: bool = True


Applies = TypeVar("Applies", bound=Callable[..., bool])


@dataclass(frozen=True)
class Exemption(Generic[Applies]):
    """A named reason a rule stays silent where its pattern holds (each rule's table `EXEMPTIONS`, listed in its
    doc): `applies` takes what that rule knows of the match (a product, a launch, an omitted argument)."""
    name: str
    doc: str
    applies: Applies


@dataclass
class Verdict:
    """What a condition decides about a match: variables, severity, span, notes, data for the fixer."""
    vars: dict[str, str] = field(default_factory=dict)
    severity: str | None = None  # overrides the rule's default severity
    span: tuple[int, int] | None = None  # character offsets, when the finding belongs elsewhere than the match
    applicability: str | None = None  # overrides the rule's fix applicability for this finding
    related: list[tuple[int, int]] = field(default_factory=list)  # other code the finding (and its fix) touches
    data: dict[str, Any] = field(default_factory=dict)  # for the fixer
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ConditionSpec:
    """A registered condition (`@condition`): its function, arguments and prefilter."""
    name: str
    function: Callable[..., Verdict | bool | None]
    params: dict[str, ParamSpec]
    provides: frozenset[str]
    doc: str
    # Given the condition's arguments (as written in the rule file), text a file cannot pass without: a
    # tritonlint.prefilter requirement, or None. Files that lack it skip the rule without being parsed.
    prefilter: Callable[[dict[str, Any]], Any] | None = None
    # Given a module's kernel model and the configured target (an int compute capability or None), False
    # when no match in that module can pass: the rule is skipped there before ast-grep parses the file.
    applies: Callable[[Any, int | None], bool] | None = None


@dataclass(frozen=True)
class FixerSpec:
    """A registered fixer (`@fixer`)."""
    name: str
    function: Callable[..., Any]
    doc: str


CONDITIONS: dict[str, ConditionSpec] = {}
FIXERS: dict[str, FixerSpec] = {}


# Raw edits a fixer returns: (start, end, replacement) in character offsets; None or [] offers no fix.
RawEdits = list[tuple[int, int, str]]
ConditionFunction = TypeVar("ConditionFunction", bound=Callable[..., "Verdict | bool | None"])
FixerFunction = TypeVar("FixerFunction", bound=Callable[..., "RawEdits | None"])


def condition(name: str, params: dict[str, ParamSpec] | None = None, provides: tuple[str, ...] = (),
              prefilter: Callable[[dict[str, Any]], Any] | None = None,
              applies: Callable[[Any, int | None], bool] | None = None
              ) -> Callable[[ConditionFunction], ConditionFunction]:
    def register(function: ConditionFunction) -> ConditionFunction:
        CONDITIONS[name] = ConditionSpec(name, function, params or {}, frozenset(provides),
                                         (function.__doc__ or "").strip(), prefilter, applies)
        return function
    return register


def fixer(name: str) -> Callable[[FixerFunction], FixerFunction]:
    def register(function: FixerFunction) -> FixerFunction:
        FIXERS[name] = FixerSpec(name, function, (function.__doc__ or "").strip())
        return function
    return register


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

    @cached_property
    def launch(self) -> LaunchSite | None:
        """The launch site the match is, when it is one."""
        span = self.span()
        return next((launch for launch in self.model.launches if self.file.span_of(launch.node) == span), None)

    def launched_kernels(self, launch: LaunchSite) -> list[JitFunction]:
        """The kernels a launch may start: the one `kernel_for` finds, else each that a local of the launching
        function may hold (`kernel = scan_log if log else scan_max`, a dict or tuple of kernels indexed by a
        mode: `launch_candidates`)."""
        found = self.kernel_for(launch)
        if found is not None:
            return [found]
        kernels: list[JitFunction] = []
        for target in launch_candidates(self.model, launch) or ():
            kernel = self._kernel_named(target)
            if kernel is not None and kernel not in kernels:
                kernels.append(kernel)
        return kernels

    def first_verdict(self, check: Callable[[LaunchSite, JitFunction], Verdict | None]) -> Verdict | None:
        """The first verdict `check` gives for the launch the match is and a kernel it may start."""
        launch = self.launch
        if launch is None:
            return None
        return next((verdict for kernel in self.launched_kernels(launch) if (verdict := check(launch, kernel)) is not None),
                    None)

    def kernel_for(self, launch: LaunchSite) -> JitFunction | None:
        """The launched kernel: defined in this module, or in another module of the project (found through
        the imports, never by bare name); a target in this module that is no jit function is none. A launch
        through a kernel parameter starts the one kernel this module's calls hand the helper, when there is one."""
        local = self.model.kernel_for(launch)
        target = launch.target
        if local is None and target is None and len(handed := handed_kernels(self.model, launch)) == 1:
            target = handed[0]
            local = self.model.defined_once(target)
        return local if local is not None or target is None else self._kernel_named(target)

    def _kernel_named(self, target: str) -> JitFunction | None:
        """The jit function a qualified name names: this module's, defined once, or another project module's."""
        if target.startswith(self.model.module + "."):
            return self.model.defined_once(target)
        return self.project.kernel(target, self.source_root)

    @staticmethod
    def launched_name(launch: LaunchSite, kernel: JitFunction) -> str:
        """How a message names the launched kernel: as the launch spells it, or by its own name where the launch
        starts a kernel parameter (`kernel[grid](...)` in a helper handed `scale_rows`)."""
        return kernel.name if launch.target is None and launch.callee_text.isidentifier() else launch.callee_text

    @cached_property
    def source_root(self) -> str:
        return source_root(self.file.path, self.model.module)
