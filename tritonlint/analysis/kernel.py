"""Facts about a kernel body and its scenarios: what it touches, and the bindings it can be evaluated under
(constexpr defaults, autotune configs, literal launches, heuristics)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonlint.analysis.consteval import Binding, literal_value
from tritonlint.analysis.host import HostScope
from tritonlint.analysis.launches import bind_launch, launches_starting
from tritonlint.analysis.model import JIT, JitFunction, LaunchSite, ModuleModel, TuneConfig
from tritonlint.analysis.scope import LocalScope
from tritonlint.analysis.triton_names import DESCRIPTOR_METHODS, DOTS, MEMORY_CALLS
from tritonlint.prefilter import Token
from tritonlint.walk import walk


def mentions(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in walk(node))


def calls_in(node: ast.AST) -> Iterator[ast.Call]:
    for child in walk(node):
        if isinstance(child, ast.Call):
            yield child


def called_helpers(model: ModuleModel, nodes: list[ast.stmt], depth: int = 2) -> Iterator[ast.FunctionDef]:
    """The jit helpers of this module that statements call by name, `depth` calls deep, each once."""
    seen: set[int] = {id(node) for node in nodes}
    pending = [(nodes, depth)]
    while pending:
        batch, left = pending.pop(0)
        for call in (call for stmt in batch for call in calls_in(stmt)):
            helper = model.local_function(call.func.id) if left and isinstance(call.func, ast.Name) else None
            if helper is not None and helper.node is not None and id(helper.node) not in seen:
                seen.add(id(helper.node))
                yield helper.node
                pending.append((helper.node.body, left - 1))


def touches_memory(model: ModuleModel, body: list[ast.stmt], depth: int = 2,
                   calls: frozenset[str] = MEMORY_CALLS) -> bool:
    """Whether statements load, store or run tl.dot (or, with `calls`, call one of those), following calls into
    this module's jit helpers."""
    def direct(statements: list[ast.stmt]) -> bool:
        for call in (call for stmt in statements for call in calls_in(stmt)):
            name = model.qualify(call.func)
            if name in calls or (calls is MEMORY_CALLS and name is None and isinstance(call.func, ast.Attribute)
                                 and call.func.attr in DESCRIPTOR_METHODS):  # desc.load([...]) on a descriptor
                return True
        return False
    return direct(body) or any(direct(helper.body) for helper in called_helpers(model, body, depth))


def jit_callers(model: ModuleModel, function: JitFunction) -> list[JitFunction]:
    """The other jit functions of this module that call `function` by name (memoized per module)."""
    def index() -> dict[str, list[JitFunction]]:
        found: dict[str, list[JitFunction]] = {}
        for caller in model.functions:
            if caller.node is not None:
                for name in dict.fromkeys(call.func.id for call in calls_in(caller.node) if isinstance(call.func, ast.Name)):
                    found.setdefault(name, []).append(caller)
        return found
    return [caller for caller in model.memoized(("jit-callers",), index).get(function.name, []) if caller is not function]


def with_helpers(model: ModuleModel, node: ast.FunctionDef, depth: int = 2) -> list[ast.FunctionDef]:
    """The function and the jit helpers of this module it calls by name, `depth` calls deep."""
    return [node, *called_helpers(model, [node], depth)]


def runs_dot(model: ModuleModel, body: list[ast.stmt]) -> bool:
    """Whether statements run tl.dot (or tl.dot_scaled), in this module's jit helpers too."""
    return touches_memory(model, body, calls=DOTS)


def launches_of(model: ModuleModel, function: JitFunction) -> list[LaunchSite]:
    return launches_starting(model, function)


def scenarios(model: ModuleModel, function: JitFunction, limit: int = 64) -> list[dict[str, Binding]]:
    """The bindings a kernel body can be evaluated under: constexpr defaults, then each autotune config,
    each literal-valued launch in this module and the heuristics that fold to constants. Memoized per module
    (several rules ask for every call of a kernel); the caller must not change them."""
    return model.memoized(("scenarios", id(function), limit), lambda: _scenarios(model, function, limit))


def scenario_scopes(model: ModuleModel, function: JitFunction) -> list[LocalScope]:
    """A LocalScope per scenario of `scenarios`, in its order, memoized per module: a scope evaluates the
    function's assignments lazily and keeps them, so every rule that evaluates in the kernel shares that."""
    return model.memoized(("scenario-scopes", id(function)),
                          lambda: [LocalScope(model, env, function.node) for env in scenarios(model, function)])


def _scenarios(model: ModuleModel, function: JitFunction, limit: int) -> list[dict[str, Binding]]:
    base: dict[str, Binding] = {}
    for param in function.params:
        if param.is_constexpr and _is_int(param.default_value):
            base[param.name] = Binding(param.default_value, "constexpr default")
        else:
            base[param.name] = Binding(None, "kernel argument")  # shadows a module constant of that name
    configs: list[TuneConfig | None] = [None]
    if function.autotune is not None and function.autotune.configs:
        configs = list(function.autotune.configs)
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


def _launch_bindings(model: ModuleModel, function: JitFunction, launch: LaunchSite) -> dict[str, Binding]:
    """The integer literals a launch passes, by parameter (spreads opened by the one launch binder), also
    through a local of the launching function assigned a literal once (`BLOCK_SIZE = 16`)."""
    env = {}
    host = HostScope.of(model, launch.scope) if launch.scope is not None else None
    for name, expr in bind_launch(model, launch, function).values.items():
        if isinstance(expr, ast.Name) and host is not None and host.node is not None and expr.id in host.values:
            expr = host.value_of(expr.id) or expr
        value = literal_value(expr)
        if _is_int(value):
            env[name] = Binding(value, f"launch at line {launch.line}")
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


def mentions_dot(args: dict[str, object]) -> Token:
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
    return bool(model.memo[key])


def not_specialized(model: ModuleModel, kernel: JitFunction) -> set[str]:
    """Arguments the kernel's `@triton.jit(do_not_specialize=[...])` names: values expected to change on every
    call, which the author chose not to compile (nor, here, tune) for one by one."""
    names: set[str] = set()
    for decorator in kernel.node.decorator_list if kernel.node is not None else ():
        if isinstance(decorator, ast.Call) and model.qualify(decorator.func) == JIT:
            for keyword in decorator.keywords:
                if keyword.arg == "do_not_specialize" and isinstance(keyword.value, (ast.List, ast.Tuple)):
                    for item in keyword.value.elts:
                        value = item.value if isinstance(item, ast.Constant) else None
                        if isinstance(value, int) and 0 <= value < len(kernel.params):
                            value = kernel.params[value].name
                        if isinstance(value, str):
                            names.add(value)
    return names
