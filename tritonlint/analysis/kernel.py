"""Facts about a kernel body and its scenarios: what it touches, and the bindings it can be evaluated under
(constexpr defaults, autotune configs, literal launches, heuristics)."""

from __future__ import annotations

import ast
import weakref
from collections.abc import Iterator

from tritonlint.analysis.consteval import Binding, Evaluator
from tritonlint.analysis.model import JitFunction, ModuleModel
from tritonlint.analysis.triton_names import DESCRIPTOR_METHODS, DOTS, MEMORY_CALLS
from tritonlint.prefilter import Token
from tritonlint.walk import walk


def mentions(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in walk(node))


def calls_in(node: ast.AST) -> Iterator[ast.Call]:
    for child in walk(node):
        if isinstance(child, ast.Call):
            yield child


def touches_memory(model: ModuleModel, body: list[ast.stmt], depth: int = 2) -> bool:
    """Whether statements load, store or run tl.dot, following calls into this module's jit helpers."""
    for stmt in body:
        for call in calls_in(stmt):
            name = model.qualify(call.func)
            if name in MEMORY_CALLS:
                return True
            if isinstance(call.func, ast.Attribute) and call.func.attr in DESCRIPTOR_METHODS and name is None:
                return True  # desc.load([...]) on a tensor descriptor
            if depth and isinstance(call.func, ast.Name):
                helper = model.local_function(call.func.id)
                if helper is not None and helper.node is not None and touches_memory(model, helper.node.body, depth - 1):
                    return True
    return False


def last_name(expr: ast.AST) -> str | None:
    """The last name of `x` or `a.b.x`: x."""
    return expr.attr if isinstance(expr, ast.Attribute) else expr.id if isinstance(expr, ast.Name) else None


def launches_of(model: ModuleModel, function: JitFunction) -> list:
    return [launch for launch in model.launches if model.kernel_for(launch) is function]


class LocalScope(dict):
    """Bindings for evaluating an expression inside a jit function: module constants, the scenario's
    bindings, and the function's single assignments (evaluated lazily). A name the function assigns more
    than once, or assigns over a parameter, is unknown."""

    def __init__(self, model: ModuleModel, scenario: dict[str, Binding], function: ast.FunctionDef | None) -> None:
        super().__init__({**model.constants, **scenario})
        self.model = model
        counts, assigned = _assignments(function) if function is not None else ({}, {})
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


# A kernel is evaluated under many scenarios (autotune configs x launches); its assignments are one walk.
_assignments_of: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _assignments(function: ast.FunctionDef) -> tuple[dict[str, int], dict[str, ast.expr]]:
    """How often the function binds each name, and the value of each plain `name = value`."""
    found = _assignments_of.get(function)
    if found is not None:
        return found
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
    _assignments_of[function] = (counts, assigned)
    return counts, assigned


def scenarios(model: ModuleModel, function: JitFunction, limit: int = 64) -> list[dict[str, Binding]]:
    """The bindings a kernel body can be evaluated under: constexpr defaults, then each autotune config,
    each literal-valued launch in this module and the heuristics that fold to constants."""
    base: dict[str, Binding] = {}
    for param in function.params:
        if param.is_constexpr and _is_int(param.default_value):
            base[param.name] = Binding(param.default_value, "constexpr default")
        else:
            base[param.name] = Binding(None, "kernel argument")  # shadows a module constant of that name
    configs = (function.autotune.configs if function.autotune else None) or [None]
    launch_envs = [env for env in (_launch_bindings(model, function, launch) for launch in launches_of(model, function)) if env]
    results = []
    for config in configs:
        for launch_env in launch_envs or [{}]:
            env = dict(base)
            if config is not None:
                env.update({k: Binding(v, f"config #{config.index + 1}") for k, v in config.meta.items()})
            env.update(launch_env)
            env.update(_heuristic_bindings(model, function, env))
            results.append(env)
            if len(results) >= limit:
                return results
    return results


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _launch_bindings(model: ModuleModel, function: JitFunction, launch) -> dict[str, Binding]:
    env = {}
    positional = [a for a in launch.args if a.name is None]
    for param, arg in zip(function.params, positional):
        if _is_int(arg.value):
            env[param.name] = Binding(arg.value, f"launch at line {launch.line}")
    for arg in launch.args:
        if arg.name and _is_int(arg.value):
            env[arg.name] = Binding(arg.value, f"launch at line {launch.line}")
    return env


def _heuristic_bindings(model: ModuleModel, function: JitFunction, env: dict[str, Binding]) -> dict[str, Binding]:
    bound = {}
    for name, source in function.heuristics.items():
        try:
            lam = ast.parse(source, mode="eval").body
        except SyntaxError:
            continue
        if isinstance(lam, ast.Lambda):
            value = model.evaluator(env).evaluate(lam.body)
            if value is not None:
                bound[name] = Binding(value.value, "@triton.heuristics")
    return bound


def mentions_dot(args: dict) -> Token:
    """The prefilter of conditions about tl.dot operands and results: a callee resolves to tl.dot only if
    the file spells `dot` (in the call or in the import that binds it)."""
    return Token("dot")


def calls_dot(model: ModuleModel, target: int | None = None) -> bool:
    """A jit function of the module calls tl.dot itself. TL002 and TL003 look for tl.dot in the function
    of the match (a dot result; a tile loaded for a dot in the same loop): modules of kernels without one
    (element-wise, norms, reductions) need no search."""
    key = ("calls-dot", 0)
    if key not in model.memo:
        model.memo[key] = any(isinstance(node, ast.Call) and model.qualify(node.func) in DOTS
                              for function in model.functions if function.node is not None
                              for node in walk(function.node))
    return model.memo[key]
