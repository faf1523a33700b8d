"""Text a rule cannot match without, so a file is parsed and matched only by the rules that can fire in it.

A rule's requirement is a formula over plain substring and regex tests, derived before any file is read:
- from its ast-grep part: every identifier a `pattern` spells out (metavariables aside) must appear in the
  matched text, a pattern or rule shaped like a launch `k[grid](...)` needs launch-shaped text, and
  `all`, `any`, `has`, `inside`, `follows`, `precedes` and `matches` combine their parts; `not`, `kind`,
  `regex`, `constraints` and pattern objects (`context`/`selector`) require nothing;
- from its conditions: a condition may declare what its arguments require (`in-jit-function` needs "jit",
  `callee-is` one of the names it accepts).
A requirement errs only towards "may match": a file it rejects cannot hold a finding of that rule, so a
user rule about host code keeps working, merely without the shortcut when nothing can be derived.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

from tritonlint.analysis.model import LAUNCH_TEXT

if TYPE_CHECKING:
    from tritonlint.ruleset import Rule


@dataclass(frozen=True)
class Token:
    """A word the file's text must contain."""
    text: str

    def holds(self, source: str) -> bool:
        return self.text in source


@dataclass(frozen=True)
class Regex:
    """A regular expression the file's text must match."""
    regex: re.Pattern[str]

    def holds(self, source: str) -> bool:
        return self.regex.search(source) is not None


@dataclass(frozen=True)
class AllOf:
    """Requirements that must all hold."""
    parts: tuple[Requirement, ...]

    def holds(self, source: str) -> bool:
        return all(part.holds(source) for part in self.parts)


@dataclass(frozen=True)
class AnyOf:
    """Requirements of which one must hold."""
    parts: tuple[Requirement, ...]

    def holds(self, source: str) -> bool:
        return any(part.holds(source) for part in self.parts)


Requirement = Union[Token, Regex, AllOf, AnyOf]  # None stands for "no requirement": any text may match
LAUNCH = Regex(LAUNCH_TEXT)
_METAVARIABLE = re.compile(r"\$+\w*")
_IDENTIFIER = re.compile(r"[^\W\d]\w*")
_RELATIONS = ("has", "inside", "follows", "precedes")


def conjoin(parts: Iterable[Requirement | None]) -> Requirement | None:
    kept = tuple(dict.fromkeys(p for p in parts if p is not None))
    return None if not kept else kept[0] if len(kept) == 1 else AllOf(kept)


def disjoin(parts: Iterable[Requirement | None]) -> Requirement | None:
    collected = list(parts)
    if not collected or any(p is None for p in collected):
        return None  # one alternative that needs nothing makes the whole choice need nothing
    kept = tuple(dict.fromkeys(collected))
    return kept[0] if len(kept) == 1 else AnyOf(kept)  # type: ignore[arg-type]


def holds(requirement: Requirement | None, source: str) -> bool:
    return requirement is None or requirement.holds(source)


def from_pattern(pattern: str) -> Requirement | None:
    """Identifiers and keywords of a pattern match only themselves; metavariables match anything."""
    code = _METAVARIABLE.sub(" ", pattern)
    parts: list[Requirement] = [Token(word) for word in _IDENTIFIER.findall(code)]
    if LAUNCH_TEXT.search(code):
        parts.append(LAUNCH)
    return conjoin(parts)


def from_matcher(matcher: dict[str, Any]) -> Requirement | None:
    utils = matcher.get("utils")
    return _from_rule(matcher.get("rule") or {}, utils if isinstance(utils, dict) else {}, frozenset())


def _from_rule(rule: Any, utils: dict[str, Any], visiting: frozenset[str]) -> Requirement | None:
    if not isinstance(rule, dict):
        return None
    parts: list[Requirement | None] = []
    if isinstance(rule.get("pattern"), str):
        parts.append(from_pattern(rule["pattern"]))
    for relation in _RELATIONS:  # the related node is in the same file, so its requirement holds there too
        parts.append(_from_rule(rule.get(relation), utils, visiting))
    if isinstance(rule.get("all"), list):
        parts.extend(_from_rule(sub, utils, visiting) for sub in rule["all"])
    if isinstance(rule.get("any"), list):
        parts.append(disjoin(_from_rule(sub, utils, visiting) for sub in rule["any"]))
    name = rule.get("matches")
    if isinstance(name, str) and name in utils and name not in visiting:
        parts.append(_from_rule(utils[name], utils, visiting | {name}))
    if _is_launch_shape(rule):
        parts.append(LAUNCH)
    return conjoin(parts)


def _is_launch_shape(rule: dict[str, Any]) -> bool:
    """`kind: call` with `has: {field: function, kind: subscript}`: a call of a subscript, `k[grid](...)`."""
    facets = [rule] + [sub for sub in (rule.get("all") or []) if isinstance(sub, dict)]
    if not any(facet.get("kind") == "call" for facet in facets):
        return False
    return any(isinstance(has, dict) and has.get("field") == "function" and has.get("kind") == "subscript"
               for has in (facet.get("has") for facet in facets))


def rule_requirement(rule: Rule) -> Requirement | None:
    """What a file's text must contain for `rule` to have a chance: its ast-grep part and its conditions."""
    from tritonlint.context import CONDITIONS

    parts = [from_matcher(rule.matcher)]
    for condition in rule.where:
        spec = CONDITIONS.get(condition.name)
        if spec is not None and spec.prefilter is not None:
            parts.append(spec.prefilter(condition.args))
    return conjoin(parts)
