"""Named semantic conditions and fixers that rule files refer to.

Rule files are data; the Python they may use is this fixed, reviewed set. A condition receives the match
context and its YAML arguments and returns a Verdict (a finding, with message variables) or None. A fixer
returns the edits of a fix, or None to offer none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ParamSpec:
    type: str  # "int", "str", "bool", "list"
    required: bool = True


@dataclass
class Verdict:
    vars: dict[str, str] = field(default_factory=dict)
    severity: str | None = None  # overrides the rule's default severity
    span: tuple[int, int] | None = None  # character offsets, when the finding belongs elsewhere than the match
    applicability: str | None = None  # overrides the rule's fix applicability for this finding
    related: list[tuple[int, int]] = field(default_factory=list)  # other code the finding (and its fix) touches
    data: dict[str, Any] = field(default_factory=dict)  # for the fixer
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ConditionSpec:
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
    name: str
    function: Callable[..., Any]
    doc: str


CONDITIONS: dict[str, ConditionSpec] = {}
FIXERS: dict[str, FixerSpec] = {}


def condition(name: str, params: dict[str, ParamSpec] | None = None, provides: tuple[str, ...] = (),
              prefilter: Callable[[dict[str, Any]], Any] | None = None,
              applies: Callable[[Any, int | None], bool] | None = None):
    def register(function: Callable[..., Verdict | bool | None]):
        CONDITIONS[name] = ConditionSpec(name, function, params or {}, frozenset(provides),
                                         (function.__doc__ or "").strip(), prefilter, applies)
        return function
    return register


def fixer(name: str):
    def register(function: Callable[..., Any]):
        FIXERS[name] = FixerSpec(name, function, (function.__doc__ or "").strip())
        return function
    return register
