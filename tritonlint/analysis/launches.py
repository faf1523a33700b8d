"""One binder from a launch site to the launched kernel's parameters, for every rule.

`kernel[grid](a, *head, 32, BLOCK=b, **extra)`: positional arguments bind parameters in order, spreads of a
local tuple or list (`head = (x, 8)`, `*((a, b) if c else (0, 0))`) and of a local dict (`**const_kwargs`) are
opened, keywords bind by name. What cannot be proven stays unbound and the binding says it is `open`: a
spread of unknown content may pass any parameter that is not bound, so nothing is guessed.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tritonlint.analysis.flow import flow_of
from tritonlint.analysis.host import HostScope, passed_for
from tritonlint.analysis.model import KERNEL_WRAPPERS, JitFunction, LaunchArg, LaunchSite, ModuleModel, calls_with_scope
from tritonlint.analysis.provenance import grid_axes
from tritonlint.walk import walk

if TYPE_CHECKING:
    from tritonlint.analysis.project import Project


@dataclass
class BoundLaunch:
    """What one launch passes to each parameter of the kernel."""

    values: dict[str, ast.expr] = field(default_factory=dict)  # parameter -> the expression passed
    sources: dict[str, LaunchArg] = field(default_factory=dict)  # parameter -> the launch argument it is (or spreads from)
    positional: set[str] = field(default_factory=set)  # parameters bound by position
    open: bool = False  # a spread of unknown content: an unbound parameter may be passed all the same


def bind_launch(model: ModuleModel, launch: LaunchSite, kernel: JitFunction,
                facts: dict[str, bool] | None = None) -> BoundLaunch:
    """`facts`: local names known True or False wherever this kernel is the one launched (`fn = A if ws else
    B`: ws is True for A), which pick the arm of a spread that differs between the arms of an `if`."""
    scope = HostScope.of(model, launch.scope)
    bound = BoundLaunch()
    params = iter(kernel.params)
    for arg in launch.args:
        if arg.name is not None or arg.node is None or bound.open:
            continue
        items = [arg.node] if not isinstance(arg.node, ast.Starred) else _spread(arg.node.value, scope, facts or {}) \
            or _stride_spread(arg.node.value, launch, kernel, scope)
        if items is None:
            bound.open = True  # an unnamed argument of unknown count: later positions are not known
            continue
        for item, param in zip(items, params):
            bound.values[param.name] = item
            bound.sources[param.name] = arg
            bound.positional.add(param.name)
    for arg in launch.args:
        if arg.name is None or arg.node is None:
            continue
        if arg.name != "**":
            bound.values[arg.name] = arg.node
            bound.sources[arg.name] = arg
            continue
        unpacked = _spread_keywords(arg.node, scope)
        if unpacked is None:
            bound.open = True  # **kwargs of unknown content: any parameter may be in there
            continue
        for name, value in unpacked.items():
            bound.values[name] = value
            bound.sources[name] = arg
    return bound


def _spread(expr: ast.expr, scope: HostScope, facts: dict[str, bool]) -> list[ast.expr] | None:
    expr = _grown_tuple(expr, scope) or _local_literal(expr, scope)
    if isinstance(expr, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in expr.elts):
        return list(expr.elts)
    if isinstance(expr, ast.IfExp):
        if isinstance(expr.test, ast.Name) and expr.test.id in facts:
            return _spread(expr.body if facts[expr.test.id] else expr.orelse, scope, facts)
        body, orelse = _spread(expr.body, scope, facts), _spread(expr.orelse, scope, facts)
        if body is not None and orelse is not None and len(body) == len(orelse):
            return [ast.copy_location(ast.IfExp(expr.test, b, o), expr) for b, o in zip(body, orelse)]
    return None


def _stride_spread(expr: ast.expr, launch: LaunchSite, kernel: JitFunction, scope: HostScope) -> list[ast.expr] | None:
    """`*x.stride()` where every spread of the launch is one: its length is what the other arguments leave of the
    kernel's parameters (`k[grid](x, *x.stride(), n, BLOCK=64)` against `k(x_ptr, s0, s1, n, BLOCK)`: two), split
    evenly among the spreads where the launching function unpacks the shape of one of them to that rank and of
    none to another (`batch, n, d = q.shape` before `*q.stride(), *k.stride(), *v.stride()`: three each); every
    parameter is passed (none left to its default, an autotune config or a heuristic); the items are `x.stride(0)`,
    `x.stride(1)`, ..."""
    def strides_of(node: ast.expr) -> str | None:
        return ast.unparse(node.func.value) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "stride" and not node.args and not node.keywords else None
    if not isinstance(expr, ast.Call) or strides_of(expr) is None or kernel.autotune is not None or kernel.heuristics:
        return None
    positional = [a for a in launch.args if a.name is None]
    spreads = [a.node.value for a in positional if isinstance(a.node, ast.Starred)]
    if any(a.name == "**" for a in launch.args) or any(strides_of(spread) is None for spread in spreads):
        return None
    named = {a.name for a in launch.args if a.name is not None}
    by_position = [p for p in kernel.params if p.name not in named]
    if any(p.default is not None for p in by_position) or any(p.name in named for p in kernel.params[:len(by_position)]):
        return None
    count = len(by_position) - (len(positional) - len(spreads))
    if len(spreads) > 1:
        ranks = {rank for spread in spreads if (rank := scope.unpacked_rank(strides_of(spread) or "")) is not None}
        if count % len(spreads) or ranks != {count // len(spreads)}:
            return None
        count //= len(spreads)
    if count < 1:
        return None
    return [ast.copy_location(ast.Call(func=expr.func, args=[ast.Constant(index)], keywords=[]), expr)
            for index in range(count)]


def _grown_tuple(expr: ast.expr, scope: HostScope, depth: int = 4) -> ast.expr | None:
    """A local tuple grown with `args += (...)`: the tuple it holds at this use, or, when the two arms of an
    `if` grow it differently, `(a, b, x) if test else (a, b, y, z)`; None when it is not such a tuple."""
    if not isinstance(expr, ast.Name) or scope.node is None or not depth or _changed_in_place(expr.id, scope):
        return None
    flow = flow_of(scope.node)
    reaching = flow.reaching(expr)
    if not reaching or any(d.kind != "augassign" or not isinstance(d.stmt, ast.AugAssign)
                           or not isinstance(d.stmt.op, ast.Add) for d in reaching):
        return None
    grown = []
    for definition in reaching:
        stmt: ast.AugAssign = definition.stmt  # type: ignore[assignment]
        target: ast.Name = stmt.target  # type: ignore[assignment]
        before = _grown_tuple(target, scope, depth - 1) or _local_literal(target, scope)
        if not (isinstance(before, ast.Tuple) and isinstance(stmt.value, ast.Tuple)):
            return None
        grown.append((stmt, ast.copy_location(ast.Tuple([*before.elts, *stmt.value.elts], ast.Load()), stmt)))
    if len(grown) == 1:
        return grown[0][1]
    if len(grown) != 2:
        return None

    def holds(body: list[ast.stmt], stmt: ast.stmt) -> bool:
        return any(n is stmt for s in body for n in walk(s))

    for branch in walk(scope.node):
        if isinstance(branch, ast.If):
            for (then, body), (other, orelse) in (grown, grown[::-1]):
                if holds(branch.body, then) and holds(branch.orelse, other):
                    return ast.copy_location(ast.IfExp(branch.test, body, orelse), branch)
    return None


def _changed_in_place(name: str, scope: HostScope) -> bool:
    """The name is changed in place (`kwargs["X"] = ...`) or handed to a method that may change it."""
    return any(isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.value, ast.Name)
               and node.value.id == name and (isinstance(node, ast.Attribute) or not isinstance(node.ctx, ast.Load))
               for node in walk(scope.node))  # type: ignore[arg-type]


def _spread_keywords(expr: ast.expr, scope: HostScope) -> dict[str, ast.expr] | None:
    """The keywords of `**{"A": a}` or `**const_kwargs` of a local dict display, None when not known."""
    expr = _local_literal(expr, scope)
    if isinstance(expr, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in expr.keys):
        return {k.value: v for k, v in zip(expr.keys, expr.values)}  # type: ignore[union-attr]
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "dict" and not expr.args \
            and all(k.arg is not None for k in expr.keywords):
        return {k.arg: k.value for k in expr.keywords}  # type: ignore[misc]
    return None


def _local_literal(expr: ast.expr, scope: HostScope) -> ast.expr:
    """What a local name of the launching function holds where it is used, when one plain assignment reaches
    that use and the name is never changed in place (`kwargs["X"] = ...`, `kwargs.update(...)`); else the
    expression itself."""
    if not isinstance(expr, ast.Name) or scope.node is None or expr.id not in scope.values:
        return expr
    reaching = flow_of(scope.node).reaching(expr)  # the assignment that reaches this use, of several
    if len(reaching) != 1:
        return expr
    (definition,) = reaching
    value = definition.value if definition.kind == "assign" else None
    if value is None:
        return expr
    return expr if _changed_in_place(expr.id, scope) else value




def launch_candidates(model: ModuleModel, launch: LaunchSite) -> list[str] | None:
    """The qualified names of the kernels a launch may start: its callee, the kernels a local name of the
    launching function may hold (`k = A if c else B`, `k = {"a": A, "b": B}[mode]`, `k = (A, B)[i]`, an
    if/else assigning it; the arm `Wrapper(A)` of `A if c else Wrapper(A)` starts something unknown, the
    other arm still starts A), or those this module's calls pass for the launching function's parameter it
    launches (`kernel_parameter`); None when no value it may hold is known (a call, a parameter no call here
    passes a known kernel for)."""
    if launch.target is not None:
        return [launch.target]
    if kernel_parameter(model, launch) is not None:
        return handed_kernels(model, launch) or None
    callee = launch.node.func.value if isinstance(launch.node.func, ast.Subscript) else None
    if not isinstance(callee, ast.Name) or launch.scope is None:
        return None
    values = HostScope.of(model, launch.scope).values_of(callee.id)
    if not values:
        return None
    found: list[str] = []
    for value in values:
        found += [name for name in choice_candidates(model, value, known_only=True) or () if name not in found]
    return found or None


def kernel_parameter(model: ModuleModel, launch: LaunchSite) -> tuple[int | None, str] | None:
    """The parameter of its module-level launching function that a launch starts, as (position, name), the
    position None for a keyword-only one: `def run(kernel, x, n): kernel[grid](x, n, BLOCK=64)`, a helper that
    builds the arguments itself and is handed the kernel. Not when the function rebinds the name, nor when the
    launch passes on the function's own `*args` or `**kwargs` (a wrapper whose calls carry the arguments:
    ModuleModel._add_wrapper_launches reads those calls as launches)."""
    return model.memoized(("kernel-parameter", id(launch.node)), lambda: _kernel_parameter(model, launch))


def _kernel_parameter(model: ModuleModel, launch: LaunchSite) -> tuple[int | None, str] | None:
    function, callee = launch.scope, launch.node.func
    if not (isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and function in model.tree.body
            and isinstance(callee, ast.Subscript) and isinstance(callee.value, ast.Name)):
        return None
    name, args = callee.value.id, function.args
    positional = [a.arg for a in [*args.posonlyargs, *args.args]]
    if name not in positional and name not in [a.arg for a in args.kwonlyargs]:
        return None
    spreads = {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    if any(isinstance(n, ast.Name) and n.id in spreads for a in launch.args if a.node is not None for n in walk(a.node)):
        return None
    if any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load) for n in walk(function)):
        return None
    return (positional.index(name) if name in positional else None), name


def launcher_name(model: ModuleModel, launch: LaunchSite) -> str:
    """The qualified name of the module-level function a launch sits in (one `kernel_parameter` accepted)."""
    return f"{model.module}.{launch.scope.name}"  # type: ignore[union-attr]


def parameter_key(model: ModuleModel, launch: LaunchSite) -> str | None:
    """The name the project's launch index gives a launch through a kernel parameter: `pkg.utils.run(kernel)`."""
    found = kernel_parameter(model, launch)
    return f"{launcher_name(model, launch)}({found[1]})" if found is not None else None


def handed_kernels(model: ModuleModel, launch: LaunchSite) -> list[str]:
    """The qualified names of what this module's calls of the launching function pass for the kernel parameter
    (`kernel_parameter`), where that is a name: the kernels a helper handed them launches here."""
    found = kernel_parameter(model, launch)
    if found is None:
        return []
    function: ast.FunctionDef = launch.scope  # type: ignore[assignment]  # kernel_parameter checked it
    qualname = launcher_name(model, launch)

    def handed() -> list[str]:
        names: list[str] = []
        for _, call in calls_with_scope(model.tree):
            if model.qualify(call.func) == qualname:
                name = model.qualify(passed_for(call, function, found[1]))
                if name is not None and name not in names:
                    names.append(name)
        return names

    return model.memoized(("handed-kernels", id(function), found[1]), handed)


def launches_starting(model: ModuleModel, kernel: JitFunction, names: frozenset[str] | None = None) -> list[LaunchSite]:
    """The launches of a module that start `kernel`. In its own module (`names` None): those `kernel_for` gives
    it, and those through a kernel parameter (`kernel_parameter`) the module's calls hand it to. In another
    module: those whose callee, handed kernel or kernel parameter (`parameter_key`) is one of `names`, the names
    the project's launch index records for that module."""
    if names is None:
        handed = model.defined_once(kernel.qualname) is kernel  # not one of two definitions a branch picks from
        return [launch for launch in model.launches if model.kernel_for(launch) is kernel or handed and launch.target
                is None and kernel.qualname in handed_kernels(model, launch)]
    return [launch for launch in model.launches if launch.target in names or launch.target is None and (
        parameter_key(model, launch) in names or not names.isdisjoint(handed_kernels(model, launch)))]


def kernel_launches(model: ModuleModel, function: JitFunction,
                    project: Project | None = None) -> list[tuple[ModuleModel, LaunchSite]]:
    """The launches of `function` in its own module, with that module's model; where there are none, the
    launches of the other modules of the project that launch it by a name that resolves to it."""
    found = [(model, launch) for launch in launches_starting(model, function)]
    if found or project is None:
        return found
    for other, names in project.launching_modules(function.qualname):
        found += [(other, launch) for launch in launches_starting(other, function, names)]
    return found


def choice_candidates(model: ModuleModel, expr: ast.expr | None, depth: int = 3,
                      known_only: bool = False) -> list[str] | None:
    """The kernels an expression chooses from (see launch_candidates), None when not known; with
    `known_only`, the known ones among its choices."""
    if expr is None or not depth:
        return None
    if isinstance(expr, (ast.Name, ast.Attribute)):
        name = model.qualify(expr)
        if name is None and isinstance(expr, ast.Name) and expr.id in model.assignments:
            return choice_candidates(model, model.assignments[expr.id], depth - 1, known_only)  # a module-level table
        return [name] if name is not None else None
    if isinstance(expr, ast.Call) and len(expr.args) == 1 and model.qualify(expr.func) in KERNEL_WRAPPERS:
        return choice_candidates(model, expr.args[0], depth, known_only)
    if isinstance(expr, ast.IfExp):
        arms = [choice_candidates(model, expr.body, depth, known_only),
                choice_candidates(model, expr.orelse, depth, known_only)]
    elif isinstance(expr, ast.BoolOp):
        arms = [choice_candidates(model, value, depth, known_only) for value in expr.values]
    elif isinstance(expr, ast.Subscript):
        table = expr.value
        if isinstance(table, ast.Name) and table.id in model.assignments:
            table = model.assignments[table.id]
        if isinstance(table, ast.Dict):
            arms = [choice_candidates(model, value, depth - 1, known_only) for value in table.values]
        elif isinstance(table, (ast.Tuple, ast.List)):
            arms = [choice_candidates(model, value, depth - 1, known_only) for value in table.elts]
        else:
            return None
    else:
        return None
    if any(arm is None for arm in arms) and not known_only:
        return None
    return [name for arm in arms for name in arm or ()] or None


def same_at_every_launch(model: ModuleModel, kernel: JitFunction, first: str, second: str,
                         project: Project | None = None) -> bool:
    """Every launch of `kernel` (`kernel_launches`) passes one host value for the parameter `first` and for
    `second`, the text of a parameter or of an expression of parameters (`BLOCK_SIZE = dim` then
    `k[grid](x, dim, BLOCK_SIZE)`; `BLOCK = N * H * W` for `N * H * W`), read through single local assignments;
    there is at least one such launch."""
    try:
        expression = ast.parse(second, mode="eval").body
    except SyntaxError:
        return False
    names = {node.id for node in walk(expression) if isinstance(node, ast.Name)}
    launches = kernel_launches(model, kernel, project)
    for host, launch in launches:
        values = bind_launch(host, launch, kernel).values
        if first not in values or not names <= values.keys():
            return False
        scope = HostScope.of(host, launch.scope)
        passed = ast.unparse(_root(scope, values[first]))
        if passed not in (ast.unparse(_passed(expression, values, lambda e: e)),
                          ast.unparse(_passed(expression, values, lambda e: _root(scope, e)))):
            return False
    return bool(launches)


def _passed(expr: ast.expr, values: dict[str, ast.expr], read: Callable[[ast.expr], ast.expr]) -> ast.expr:
    """`expr`, an expression of a kernel's parameters, with each parameter replaced by what a launch passes
    for it (read through `read`)."""
    if isinstance(expr, ast.Name):
        return read(values[expr.id])

    class _Replace(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            return read(values[node.id])

    return _Replace().visit(copy.deepcopy(expr))  # type: ignore[no-any-return]


def passed_at_every_launch(model: ModuleModel, kernel: JitFunction, name: str,
                           project: Project | None = None) -> ast.expr | None:
    """The one host expression every launch of `kernel` (`kernel_launches`) passes for the parameter `name`, read
    through single local assignments (`MASK_VALUE=-torch.finfo(torch.float32).max`); None where the launches
    pass different ones or there is none."""
    found: set[str] = set()
    value: ast.expr | None = None
    for host, launch in kernel_launches(model, kernel, project):
        passed = bind_launch(host, launch, kernel).values.get(name)
        if passed is None:
            return None
        value = _root(HostScope.of(host, launch.scope), passed)
        found.add(ast.unparse(value))
    return value if len(found) == 1 else None


def one_block_at_every_launch(model: ModuleModel, kernel: JitFunction, block: str, count: str,
                              project: Project | None = None) -> bool:
    """Every launch of `kernel` (`kernel_launches`) passes for `block` the value it passes for `count`, or
    `triton.next_power_of_2` of it (`BLOCK_D=triton.next_power_of_2(d_head)` beside `d_head`), read through single
    local assignments: one block covers the count, so `range(0, count, block)` runs once. There is at least one
    such launch."""
    bound = _binding_both(model, kernel, (block, count), project)
    for host, _, scope, values in bound or ():
        width = _root(scope, values[block])
        if isinstance(width, ast.Call) and len(width.args) == 1 and not width.keywords \
                and host.qualify(width.func) == "triton.next_power_of_2":
            width = _root(scope, width.args[0])
        if ast.unparse(width) != ast.unparse(_root(scope, values[count])):
            return False
    return bool(bound)


def _binding_both(model: ModuleModel, kernel: JitFunction, names: tuple[str, str], project: Project | None
                  ) -> list[tuple[ModuleModel, LaunchSite, HostScope, dict[str, ast.expr]]] | None:
    """Each launch of `kernel` with its module, host scope and bound values, where every launch passes both
    parameters `names`; None where one does not."""
    found = []
    for host, launch in kernel_launches(model, kernel, project):
        values = bind_launch(host, launch, kernel).values
        if not all(name in values for name in names):
            return None
        found.append((host, launch, HostScope.of(host, launch.scope), values))
    return found


def whole_blocks_at_every_launch(model: ModuleModel, kernel: JitFunction, block: str, count: str,
                                 project: Project | None = None) -> bool:
    """Every launch of `kernel` (`kernel_launches`) passes for `count` a product with a factor that the integer it
    passes for `block` divides (`n = x.shape[0] * 256` with `BLOCK_SIZE = 128`): the count is a whole number of
    blocks; or passes the block's own expression as a factor of the count, also as a dimension of the tensor whose
    `numel()` it passes (`data = data.reshape(rows, groups, group_size)`, `data.numel()` with `group_size`).
    There is at least one such launch."""
    bound = _binding_both(model, kernel, (block, count), project)
    for _, launch, scope, values in bound or ():
        evaluator = scope.evaluator()
        factors = _factors(_root(scope, values[count]))
        dividing = [divisor for multiple, divisor in _asserted_multiples(scope, launch.line)
                    if _divides_count(scope, multiple, factors)]  # `assert x.shape[-1] % B == 0`, count x.numel()
        width = evaluator.evaluate(values[block])
        if width is None:
            passed = ast.unparse(_root(scope, values[block]))
            if not any(ast.unparse(f) == passed for f in factors + _numel_factors(scope, factors, launch.line)
                       + [_root(scope, divisor) for divisor in dividing]):
                return False
            continue
        if width.value <= 0:
            return False
        if width.value == 1:
            continue  # blocks of one lane: every count is whole blocks
        if not any((f := evaluator.evaluate(factor)) is not None and f.value % width.value == 0
                   for factor in factors + dividing):
            return False
    return bool(bound)


def _asserted_multiples(scope: HostScope, line: int) -> list[tuple[ast.expr, ast.expr]]:
    """(multiple, divisor) for each test of the launching function's body above `line` that stops it unless
    one divides the other: `assert m % d == 0`, `if m % d != 0: raise ...` (also `if m % d:`)."""
    found: list[tuple[ast.expr, ast.expr]] = []
    for statement in scope.node.body if scope.node is not None else []:
        if statement.lineno >= line:
            break
        if isinstance(statement, ast.Assert):
            divides = _remainder_test(statement.test, zero=True)
        elif isinstance(statement, ast.If) and not statement.orelse and isinstance(statement.body[-1], ast.Raise):
            divides = _remainder_test(statement.test, zero=False)
        else:
            continue
        if divides is not None:
            found.append(divides)
    return found


def _remainder_test(test: ast.expr, zero: bool) -> tuple[ast.expr, ast.expr] | None:
    """(m, d) of a test that `m % d` is 0 (`zero`: `m % d == 0`) or is not (`m % d != 0`, or `m % d` alone)."""
    remainder: ast.expr | None = test if not zero else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value == 0 and isinstance(test.ops[0], ast.Eq if zero else ast.NotEq):
        remainder = test.left
    if isinstance(remainder, ast.BinOp) and isinstance(remainder.op, ast.Mod):
        return remainder.left, remainder.right
    return None


def _divides_count(scope: HostScope, multiple: ast.expr, factors: list[ast.expr]) -> bool:
    """`multiple` divides the count whose factors are `factors`: it is one of them, or a dimension of a tensor
    whose `numel()` is one (`x.shape[-1]`, `x.size(1)` with `x.numel()`)."""
    text = ast.unparse(_root(scope, multiple))
    if any(ast.unparse(factor) == text for factor in factors):
        return True
    if isinstance(multiple, ast.Subscript) and isinstance(multiple.value, ast.Attribute) \
            and multiple.value.attr == "shape":
        tensor = multiple.value.value
    elif isinstance(multiple, ast.Call) and isinstance(multiple.func, ast.Attribute) and multiple.func.attr == "size" \
            and len(multiple.args) == 1:
        tensor = multiple.func.value
    else:
        return False
    return any(ast.unparse(factor) == f"{ast.unparse(tensor)}.numel()" for factor in factors)


def _numel_factors(scope: HostScope, factors: list[ast.expr], line: int) -> list[ast.expr]:
    """The dimensions of each tensor whose `numel()` is a factor, as its last assignment above `line` reshapes or
    views it (`x.reshape(a, b * c)`, `x.view((a, -1))`): each divides the element count."""
    found: list[ast.expr] = []
    for factor in factors:
        if not (isinstance(factor, ast.Call) and isinstance(factor.func, ast.Attribute) and factor.func.attr == "numel"
                and isinstance(factor.func.value, ast.Name) and not factor.args):
            continue
        value = scope.value_reaching(factor.func.value.id, line)
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                and value.func.attr in ("reshape", "view")):
            continue
        shape = _root(scope, value.args[0]) if len(value.args) == 1 else None  # `x.reshape(new_shape)`
        dims = shape.elts if isinstance(shape, (ast.Tuple, ast.List)) else value.args
        found += [f for dim in dims for f in _factors(dim)]
    return found


def grid_axis_at_every_launch(model: ModuleModel, kernel: JitFunction, axis: int, count: str,
                              block: str | None = None,
                              project: Project | None = None) -> bool:
    """Every launch of `kernel` (`kernel_launches`) gives grid axis `axis` the value it passes for `count` (`grid =
    (n, b, h)` with `b` passed as the count: program id `b` < it), or with `block`, that value's floor over the
    one it passes for `block` (`grid = (n // 64,)` with `BLOCK=64`, or `n // META["BLOCK"]`: the programs cover
    whole blocks only, and the remainder is left to other code). There is at least one launch."""
    launches = kernel_launches(model, kernel, project)
    for host, launch in launches:
        values = bind_launch(host, launch, kernel).values
        scope = HostScope.of(host, launch.scope)
        axes = grid_axes(scope, launch)
        if count not in values or block is not None and block not in values or axes is None or len(axes[0]) <= axis:
            return False
        extent, meta = _root(scope, axes[0][axis]), axes[1]
        counted = ast.unparse(_root(scope, values[count]))
        if block is None:
            if ast.unparse(extent) != counted:
                return False
            continue
        if not (isinstance(extent, ast.BinOp) and isinstance(extent.op, ast.FloorDiv)) \
                or ast.unparse(_root(scope, extent.left)) != counted:
            return False
        divisor = extent.right
        if not (meta is not None and isinstance(divisor, ast.Subscript) and isinstance(divisor.value, ast.Name)
                and divisor.value.id == meta and isinstance(divisor.slice, ast.Constant) and divisor.slice.value == block):
            evaluator = scope.evaluator()
            width, passed = evaluator.evaluate(divisor), evaluator.evaluate(values[block])
            if width is None or passed is None or width.value != passed.value:
                return False
    return bool(launches)


def divisibility_flags(model: ModuleModel, kernel: JitFunction,
                       project: Project | None = None) -> dict[str, tuple[str, str]]:
    """The parameters every launch of `kernel` (`kernel_launches`) passes as a test that a count is whole blocks
    (`EVEN_N=N % BLOCK_N == 0`, read through single local assignments), each with the (block, count) parameters
    that launch passes those two values for: where the flag is true, the count is a whole number of blocks."""
    launches = kernel_launches(model, kernel, project)
    found: dict[str, tuple[str, str]] | None = None
    for host, launch in launches:
        values = bind_launch(host, launch, kernel).values
        scope = HostScope.of(host, launch.scope)
        roots = {name: ast.unparse(_root(scope, expr)) for name, expr in values.items()}
        here: dict[str, tuple[str, str]] = {}
        for flag, expr in values.items():
            divides = _remainder_test(_root(scope, expr), zero=True)
            if divides is None:
                continue
            count, block = (ast.unparse(_root(scope, side)) for side in divides)
            blocks = [name for name, text in roots.items() if text == block and name != flag]
            counts = [name for name, text in roots.items() if text == count and name != flag]
            if len(blocks) == 1 and len(counts) == 1:
                here[flag] = (blocks[0], counts[0])
        found = here if found is None else {flag: pair for flag, pair in found.items() if here.get(flag) == pair}
    return found or {}


def _root(scope: HostScope, expr: ast.expr) -> ast.expr:
    """A name read through single assignments of the launching function (or the module), a few deep."""
    for _ in range(4):
        value = scope.value_of(expr.id) if isinstance(expr, ast.Name) else None
        if value is None:
            break
        expr = value
    return expr


def _factors(expr: ast.expr) -> list[ast.expr]:
    """The factors of a product `a * b * c` (the expression itself otherwise)."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        return _factors(expr.left) + _factors(expr.right)
    return [expr]
