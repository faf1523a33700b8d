"""Integer arguments of calls inside a jit function, evaluated under each of its scenarios (constexpr
defaults, autotune configs, literal launches, heuristics), for rules that check a value Triton needs at
compile time (an axis, a range, a shape)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonlint.analysis.consteval import Value
from tritonlint.analysis.kernel import launches_of, scenario_scopes
from tritonlint.analysis.model import JitFunction, ModuleModel
from tritonlint.walk import walk

DEFAULT = "constexpr default"


def evaluations(model: ModuleModel, function: JitFunction, exprs: list[ast.expr]) -> Iterator[list[Value]]:
    """The values of `exprs` under each scenario where all of them are known, each distinct list once.
    A scenario that takes a constexpr default which a call of the function in view overrides is skipped:
    that default may never be used (`BLOCK: tl.constexpr = 100` launched with BLOCK=next_power_of_2(n))."""
    overridden = passed_params(model, function)
    seen: set[tuple[int, ...]] = set()
    for scope in scenario_scopes(model, function):
        evaluator = scope.evaluator()
        values = [evaluator.evaluate(expr) for expr in exprs]
        if any(v is None for v in values):
            continue
        known = [v for v in values if v is not None]
        if any(binding.origin == DEFAULT and name in overridden for v in known for name, binding in v.sources):
            continue
        key = tuple(v.value for v in known)
        if key not in seen:
            seen.add(key)
            yield known


def passed_params(model: ModuleModel, function: JitFunction) -> set[str]:
    """Parameters some call in this module passes explicitly: a launch of the kernel, or a call of a jit
    helper by its name. Memoized per module."""
    return model.memoized(("passed-params", id(function)), lambda: _passed_params(model, function))


def _passed_params(model: ModuleModel, function: JitFunction) -> set[str]:
    names = [p.name for p in function.params]
    passed: set[str] = set()
    for launch in launches_of(model, function):
        if any(a.name == "**" or isinstance(a.node, ast.Starred) for a in launch.args):
            return set(names)  # spread arguments: anything may be passed
        positional = sum(1 for a in launch.args if a.name is None)
        passed.update(names[:positional])
        passed.update(a.name for a in launch.args if a.name)
    for call in _calls_by_name(model).get(function.name, ()):
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return set(names)
        passed.update(names[:len(call.args)])
        passed.update(k.arg for k in call.keywords if k.arg)
    return passed


def _calls_by_name(model: ModuleModel) -> dict[str, list[ast.Call]]:
    """The module's calls of a plain name, by that name, in walk order: one walk for all its functions."""
    def index() -> dict[str, list[ast.Call]]:
        found: dict[str, list[ast.Call]] = {}
        for node in walk(model.tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                found.setdefault(node.func.id, []).append(node)
        return found

    return model.memoized(("calls-by-name",), index)


def is_power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0
