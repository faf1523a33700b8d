"""Bindings for evaluating an expression inside a jit function."""

from __future__ import annotations

import ast

from tritonlint.analysis.consteval import Binding, Evaluator
from tritonlint.analysis.model import ModuleModel
from tritonlint.walk import walk


class LocalScope(dict[str, Binding]):
    """Bindings for evaluating an expression inside a jit function: module constants, the scenario's
    bindings, and the function's single assignments (evaluated lazily). A name the function assigns more
    than once, or assigns over a parameter, is unknown."""

    def __init__(self, model: ModuleModel, scenario: dict[str, Binding], function: ast.FunctionDef | None) -> None:
        super().__init__({**model.constants, **scenario})
        self.model = model
        # A kernel is evaluated under many scenarios (autotune configs x launches); its assignments are one walk.
        counts, assigned = model.memoized(("assignments", function), lambda: _assignments(function)) \
            if function is not None else ({}, {})
        self.assigned: dict[str, ast.expr] = dict(assigned)
        self._busy: set[str] = set()
        for name, count in counts.items():
            if count > 1 or name not in self.assigned or name in scenario:
                self.assigned.pop(name, None)
                self[name] = Binding(None, "assigned in the kernel")
            else:
                self.pop(name, None)  # a local shadows a module constant of the same name

    def get(self, name: str, default: Binding | None = None) -> Binding | None:  # type: ignore[override]
        if name in self.assigned and name not in self._busy and not dict.__contains__(self, name):
            self._busy.add(name)
            try:
                value = self.evaluator().evaluate(self.assigned[name])
            finally:
                self._busy.discard(name)
            origin = f"`{name} = {ast.unparse(self.assigned[name])}`"
            if value is not None and value.sources:
                origin += f" with {value.describe()}"
            self[name] = Binding(value.value if value is not None else None, origin)
        return dict.get(self, name, default)

    def evaluator(self) -> Evaluator:
        return Evaluator(self, self.model.qualify)


def _assignments(function: ast.FunctionDef) -> tuple[dict[str, int], dict[str, ast.expr]]:
    """How often the function binds each name, and the value of each plain `name = value`."""
    counts: dict[str, int] = {}
    assigned: dict[str, ast.expr] = {}
    for node in walk(function):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.comprehension, ast.NamedExpr)):
            targets = [node.target]
        else:
            continue
        for target in targets:
            for name in walk(target):
                if isinstance(name, ast.Name):
                    counts[name.id] = counts.get(name.id, 0) + 1
                    if isinstance(node, ast.Assign) and target is name:
                        assigned[name.id] = node.value
    return counts, assigned
