"""Conditions every kind of rule can use, and helpers for the rule-specific modules."""

from __future__ import annotations

import ast
import re
import weakref
from collections.abc import Iterator

from tritonlint.consteval import Binding, Evaluator
from tritonlint.engine import MatchContext
from tritonlint.model import _CONVENTIONAL, JitFunction, ModuleModel
from tritonlint.prefilter import Requirement, Token, disjoin
from tritonlint.registry import ParamSpec, Verdict, condition
from tritonlint.walk import walk

TL = "triton.language"
MEMORY_CALLS = frozenset(f"{TL}.{n}" for n in (
    "load", "store", "dot", "dot_scaled", "atomic_add", "atomic_cas", "atomic_xchg", "atomic_max", "atomic_min",
    "atomic_and", "atomic_or", "atomic_xor", "load_tensor_descriptor", "store_tensor_descriptor",
    "_experimental_descriptor_load", "_experimental_descriptor_store",
))
DESCRIPTOR_METHODS = frozenset({"load", "store", "gather", "scatter", "atomic_add"})


@condition("in-jit-function", provides=("function",), prefilter=lambda args: Token("jit"),
           applies=lambda model, target: bool(model.functions))
def in_jit_function(ctx: MatchContext) -> Verdict | None:
    """The match sits inside a @triton.jit function (a kernel or a jit helper)."""
    if ctx.function is None:
        return None
    return Verdict(vars={"function": ctx.function.name})


def _spellings(args: dict) -> Requirement | None:
    """A name resolves through the module's imports only if its last part is written in the file (`tl`
    and `triton` also stand for themselves unimported)."""
    names = args.get("names")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None  # an option reference: unknown until configured
    words = [n.rpartition(".")[2] for n in names]
    words += [alias for n in names for alias, target in _CONVENTIONAL.items() if n == target]
    return disjoin(Token(word) for word in words)


@condition("callee-is", params={"metavar": ParamSpec("str"), "names": ParamSpec("list")}, prefilter=_spellings)
def callee_is(ctx: MatchContext, metavar: str, names: list[str]) -> bool:
    """The expression captured by `metavar` resolves, through the module's imports, to one of `names`
    (dotted names such as triton.language.static_range)."""
    node = ctx.metavar(metavar)
    if node is None:
        return False
    text = node.text()
    if _DOTTED.fullmatch(text):  # the usual `tl.static_range`: no need to find its ast node
        return ctx.model.qualify_dotted(text) in names
    expr = ctx.ast_node(node, (ast.expr,))
    return expr is not None and ctx.model.qualify(expr) in names  # type: ignore[arg-type]


_DOTTED = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*")


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
