"""Host-side code around a launch: the names a host function binds, how often it reads them, and removal of
call arguments that keeps the call well-formed."""

from __future__ import annotations

import ast
import re
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING

from tritonlint.analysis.consteval import Binding, Evaluator, literal_value
from tritonlint.analysis.model import ModuleModel
from tritonlint.analysis.scope import LocalScope
from tritonlint.source import ParsedFile
from tritonlint.walk import children, parents, walk

if TYPE_CHECKING:
    from tritonlint.analysis.project import Project

NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """Every node of a function (or module) body, not descending into nested functions, lambdas or classes;
    the nested definitions themselves are yielded."""
    stack = children(scope)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, NESTED_SCOPES):
            stack.extend(children(node))


class HostScope:
    """The host function (or module) a launch sits in: single assignments, nested defs, reads per name."""

    def __init__(self, model: ModuleModel, scope: ast.AST | None) -> None:
        self.model = model
        self.node = scope if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        root = self.node or model.tree
        self.values: dict[str, list[ast.expr | None]] = {}  # None: bound some other way
        self.defs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.reads: dict[str, int] = {}
        if self.node is not None:
            args = self.node.args
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if arg is not None:
                    self.values.setdefault(arg.arg, []).append(None)
        for node in own_nodes(root):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    self._bind(target, node.value if len(node.targets) == 1 else None)
            elif isinstance(node, ast.AnnAssign):
                self._bind(node.target, node.value)
            elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr)):
                self._bind(node.target, None)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        self._bind(item.optional_vars, None)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.defs[node.name] = node
                self.values.setdefault(node.name, []).append(None)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    self.values.setdefault((alias.asname or alias.name).split(".")[0], []).append(None)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                self.reads[node.id] = self.reads.get(node.id, 0) + 1

    @classmethod
    def of(cls, model: ModuleModel, scope: ast.AST | None) -> HostScope:
        """The scope, built once per module and function. The module keeps it, so it refers to the module
        weakly: a reference cycle would keep each module's tree alive until a full garbage collection."""
        key = ("host-scope", id(scope))
        found = model.memo.get(key)
        if found is None:
            proxy = model if isinstance(model, weakref.ProxyType) else weakref.proxy(model)  # a scope's own model
            found = model.memo[key] = cls(proxy, scope)  # type: ignore[arg-type]
        return found

    def _bind(self, target: ast.expr, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self.values.setdefault(target.id, []).append(value)
            return
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(value.elts) and not any(isinstance(e, ast.Starred) for e in target.elts):
            for part, part_value in zip(target.elts, value.elts):  # BT, BD = 128, min(64, D)
                self._bind(part, part_value)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            for part in target.elts:
                self._bind(part, None)
            return
        if isinstance(target, ast.Starred):
            self._bind(target.value, None)
            return
        # `stats[f"{route}_hits"] += 1`, `self.x = y`: the object the target names is changed, not the names
        # its index reads
        while isinstance(target, (ast.Subscript, ast.Attribute)):
            target = target.value
        if isinstance(target, ast.Name):
            self.values.setdefault(target.id, []).append(None)

    def value_of(self, name: str) -> ast.expr | None:
        """The expression a name stands for: its single assignment in the function, else the module's."""
        if self.node is not None and name in self.values:
            bound = self.values[name]
            return bound[0] if len(bound) == 1 else None
        if name in self.model.assignments:
            return self.model.assignments[name]
        return None

    def value_reaching(self, name: str, line: int) -> ast.expr | None:
        """The value of the name's last assignment above `line` when the function binds it only by plain
        assignments, besides receiving it as a parameter (`x = x.view(-1, n)` then `M, N = x.shape`), else
        `value_of`. Branches are not told apart: the later of two assignments is taken."""
        bound = self.values.get(name) if self.node is not None else None
        if not bound or bound.count(None) != int(name in parameter_names(self.node)):
            return self.value_of(name)
        above = [value for value in bound if value is not None and value.lineno < line]
        return max(above, key=lambda value: value.lineno) if above else None

    def unbound_parameter(self, name: str) -> bool:
        """A parameter of the function (not `*args` or `**kwargs`) that no statement of it rebinds."""
        return name in parameter_names(self.node) and self.values.get(name) == [None]

    def may_be_none(self, expr: ast.expr) -> bool:
        """The value can be None: a literal None, or a parameter of the function annotated as optional
        (`M: torch.Tensor | None`, `Optional[Tensor]`) or defaulting to None, that no statement rebinds."""
        if isinstance(expr, ast.Constant) and expr.value is None:
            return True
        if not (isinstance(expr, ast.Name) and self.node is not None and self.unbound_parameter(expr.id)):
            return False
        args = self.node.args
        positional = [*args.posonlyargs, *args.args]
        default = self.default_of(expr.id)
        if isinstance(default, ast.Constant) and default.value is None:
            return True
        annotation = next((a.annotation for a in [*positional, *args.kwonlyargs] if a.arg == expr.id), None)
        text = ast.unparse(annotation) if annotation is not None else ""
        return "Optional[" in text or any(part.strip() == "None" for part in text.split("|"))

    def default_of(self, name: str) -> ast.expr | None:
        """The default value of the function's parameter `name`, where it has one."""
        if self.node is None:
            return None
        args = self.node.args
        positional = [*args.posonlyargs, *args.args]
        defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
        defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
        return defaults.get(name)

    def unpacked_rank(self, tensor: str, depth: int = 0) -> int | None:
        """The number of names the function unpacks the tensor's shape into (`C_out, C_in, KH, KW = w.shape`), or
        the shape of the tensor a local copy is made from (`q_c = q.contiguous()`, `o = torch.empty_like(q_c)`)."""
        for node in own_nodes(self.node) if self.node is not None else []:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple) \
                    and not any(isinstance(e, ast.Starred) for e in node.targets[0].elts) \
                    and ast.unparse(node.value) in (f"{tensor}.shape", f"{tensor}.size()"):
                return len(node.targets[0].elts)
        source = _same_shape_source(self.value_of(tensor) if tensor.isidentifier() and self.node is not None
                                    and tensor in self.values else None)
        return self.unpacked_rank(source, depth + 1) if source is not None and depth < 4 else None

    def values_of(self, name: str) -> list[ast.expr] | None:
        """Every value a name of this function is assigned, when all its bindings are plain assignments."""
        bound = self.values.get(name) if self.node is not None else None
        if not bound or any(value is None for value in bound):
            return None
        return bound  # type: ignore[return-value]

    def list_items(self, name: str) -> list[ast.expr] | None:
        """Every item a local list of this function ever holds: those of its one assignment `name = [a]` and
        of each `name.append(b)`; None where it is bound otherwise or read in any other way than subscripted,
        appended to or measured with `len`."""
        value = self.value_of(name)
        if self.node is None or name not in self.values or not isinstance(value, ast.List) or \
                any(isinstance(e, ast.Starred) for e in value.elts):
            return None
        items, reads = list(value.elts), 0
        for node in own_nodes(self.node):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name:
                reads += isinstance(node.ctx, ast.Load)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Name) and node.func.value.id == name:
                if node.func.attr != "append" or len(node.args) != 1 or node.keywords:
                    return None
                items.append(node.args[0])
                reads += 1
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" and \
                    len(node.args) == 1 and isinstance(node.args[0], ast.Name) and node.args[0].id == name:
                reads += 1
        return items if reads == self.reads.get(name, 0) else None

    def function_def(self, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        if self.node is not None and name in self.values:
            return self.defs.get(name) if len(self.values[name]) == 1 else None
        node = next((n for n in self.model.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and n.name == name), None)
        return node if node is not None and name not in self.model.assignments else None

    def evaluator(self) -> Evaluator:
        env = _module_tuple_constants(self.model)
        env.update({name: Binding(None, "argument") for name, bound in self.values.items() if None in bound})
        return LocalScope(self.model, env, self.node).evaluator()  # type: ignore[arg-type]


def parameter_names(function: ast.FunctionDef | ast.AsyncFunctionDef | None) -> set[str]:
    """The names of the parameters a call can name (not `*args` or `**kwargs`)."""
    if function is None:
        return set()
    args = function.args
    return {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}


def passed_for(call: ast.Call, function: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> ast.expr | None:
    """What a call passes for a parameter, None when it cannot be told (a `*args` or `**kwargs` spread)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    positional = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
    for keyword in call.keywords:
        if keyword.arg == param:
            return keyword.value
    index = positional.index(param) if param in positional else len(call.args)
    return call.args[index] if index < len(call.args) else None


def call_bindings(scope: HostScope) -> list[tuple[HostScope, dict[str, ast.expr]]]:
    """What each call of the scope's function in its module binds to its parameters, with the caller's scope
    (`RMSNorm.apply(x, n, blk)` for `forward(ctx, x, n_cols, blk_size)`, also through module-level aliases such
    as `rmsnorm = RMSNorm.apply`), defaults included. Empty when the function is not a module-level function
    or an autograd Function's `forward`, when a call spreads `*args`/`**kwargs`, or when none is in view."""
    function, model = scope.node, scope.model
    if function is None:
        return []
    return model.memoized(("call-bindings", id(function)), lambda: _bindings(model, function))


def _bindings(model: ModuleModel, function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[HostScope, dict[str, ast.expr]]]:
    names = _callable_names(model, function)
    calls = [(caller, call) for caller, call in _calls_in_module(model)
             if isinstance(call.func, (ast.Name, ast.Attribute)) and ast.unparse(call.func) in names] if names else []
    return _bound_calls(model, function, calls)


def _bound_calls(model: ModuleModel, function: ast.FunctionDef | ast.AsyncFunctionDef,
                 calls: list[tuple[ast.AST | None, ast.Call]]) -> list[tuple[HostScope, dict[str, ast.expr]]]:
    """What each call (with its caller in `model`) binds to the function's parameters, defaults included; empty
    when one spreads `*args`/`**kwargs` or passes more positional arguments than the function takes."""
    args = function.args
    positional = [a.arg for a in [*args.posonlyargs, *args.args]][1 if function.name == "forward" else 0:]
    defaults = dict(zip([a.arg for a in [*args.posonlyargs, *args.args]][::-1], args.defaults[::-1]))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    sites = []
    for caller, call in calls:
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords) \
                or len(call.args) > len(positional):
            return []
        bound: dict[str, ast.expr] = {**defaults, **dict(zip(positional, call.args))}
        bound.update({k.arg: k.value for k in call.keywords if k.arg is not None})
        sites.append((HostScope.of(model, caller), bound))
    return sites


def project_call_bindings(scope: HostScope, project: Project | None) -> list[tuple[HostScope, dict[str, ast.expr]]]:
    """`call_bindings`, and for a public module-level function also what its calls in the project's other
    modules bind (`from .intra import launch_intra`, then `launch_intra(q, k, sub_chunk_size=BC)`): a wrapper
    and its callers spread over modules. Empty when any call is opaque (`*args`); the module's own calls alone
    where the run cannot tell which modules call the function (a text linted alone)."""
    own = call_bindings(scope)
    function, model = scope.node, scope.model
    if project is None or function is None or function.name.startswith("_") \
            or not any(node is function for node in model.tree.body):
        return own
    others = project.calling_modules(model.module)
    qualname = f"{model.module}.{function.name}"
    found = list(own)
    for other in others or ():
        calls = [(caller, call) for caller, call in _calls_in_module(other) if calls_function(other, call, qualname)]
        bound = _bound_calls(other, function, calls)
        if calls and not bound:
            return []
        found += bound
    return found


def calls_function(caller: ModuleModel, call: ast.Call, qualname: str) -> bool:
    """Whether a call names the function `qualname`, also through `from module import *` (a module read for
    its calls does not read the modules it imports)."""
    target = caller.qualify(call.func)
    if target is not None:
        return target == qualname
    module, _, name = qualname.rpartition(".")
    return isinstance(call.func, ast.Name) and call.func.id == name and module in caller.star_modules


def _callable_names(model: ModuleModel, function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """How the module calls a function: its own name when it is module-level, `Cls.apply` for the `forward` of
    a class at module level, and the module-level names assigned either (`rmsnorm = RMSNorm.apply`)."""
    names = set()
    if any(node is function for node in model.tree.body):
        names.add(function.name)
    elif function.name == "forward":
        names |= {f"{c.name}.apply" for c in model.tree.body if isinstance(c, ast.ClassDef)
                  and any(node is function for node in c.body)}
    for node in model.tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and ast.unparse(node.value) in names:
            names.add(node.targets[0].id)
    return names


def _calls_in_module(model: ModuleModel) -> list[tuple[ast.AST | None, ast.Call]]:
    """Every call of the module with the function whose names its arguments read (None: module level; a
    lambda's or a closure's calls belong to the function around it), found once per module."""
    def calls() -> list[tuple[ast.AST | None, ast.Call]]:
        up = parents(model.tree)
        found: list[tuple[ast.AST | None, ast.Call]] = []
        for call in walk(model.tree):
            if isinstance(call, ast.Call):
                read = {n.id for a in [*call.args, *call.keywords] for n in walk(a) if isinstance(n, ast.Name)}
                scope = up.get(id(call))
                while scope is not None and not (isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef))
                                                 and read & set(HostScope.of(model, scope).values)):
                    scope = up.get(id(scope))  # a closure reads the names of the function around it
                found.append((scope, call))
        return found

    return model.memoized(("module-calls",), calls)


def method_class(model: ModuleModel, function: ast.AST | None) -> ast.ClassDef | None:
    """The class of the module (at any depth) whose body defines the function: a method's class."""
    return next((c for c in walk(model.tree) if isinstance(c, ast.ClassDef) and any(s is function for s in c.body)), None)


def autograd_forward(model: ModuleModel, backward: ast.FunctionDef | ast.AsyncFunctionDef | None
                     ) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The `forward` (taking `ctx`) beside an autograd Function's `backward`: the two methods of one class."""
    owner = method_class(model, backward) if backward is not None and backward.name == "backward" else None
    return next((f for f in owner.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and f.name == "forward" and f.args.args), None) if owner is not None else None


def _module_tuple_constants(model: ModuleModel) -> dict[str, Binding]:
    """`BLOCK_M, BLOCK_N = 64, 32` at module level: constants the kernel model (single targets only) skips."""
    found: dict[str, Binding] = {}
    seen: dict[str, int] = {}
    for stmt in model.tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple) \
                and isinstance(stmt.value, ast.Tuple) and len(stmt.targets[0].elts) == len(stmt.value.elts):
            for target, value in zip(stmt.targets[0].elts, stmt.value.elts):
                if isinstance(target, ast.Name):
                    seen[target.id] = seen.get(target.id, 0) + 1
                    literal = literal_value(value)
                    if isinstance(literal, int) and not isinstance(literal, bool):
                        found[target.id] = Binding(literal, f"module constant at line {stmt.lineno}")
    return {name: binding for name, binding in found.items()
            if seen[name] == 1 and name not in model.assignments and name not in model.constants}


def call_items(call: ast.Call) -> list[ast.AST]:
    """Positional and keyword arguments in source order."""
    items: list[ast.AST] = [*call.args, *call.keywords]
    return sorted(items, key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))


_LINE_TAIL = re.compile(r"[ \t]*,?[ \t]*(#[^\n]*)?(\r?\n|$)")


def remove_arguments(file: ParsedFile, call: ast.Call, remove: list[ast.AST]) -> list[tuple[int, int, str]]:
    """Edits deleting some arguments of a call; separators, trailing commas and multi-line layouts stay valid.
    An argument alone on its line loses the whole line; otherwise the comma before it goes with it."""
    items = call_items(call)
    spans = [file.span_of(item) for item in items]
    text = file.text
    doomed = {id(node) for node in remove}
    kept = [i for i, item in enumerate(items) if id(item) not in doomed]
    if not kept:
        return [(spans[0][0], file.span_of(call)[1] - 1, "")]  # everything up to the closing parenthesis
    edits: list[tuple[int, int, str]] = []
    for index, item in enumerate(items):
        if id(item) not in doomed:
            continue
        start, end = spans[index]
        if index < kept[0]:  # leading arguments: take the separator that follows
            edits.append((start, spans[index + 1][0], ""))
            continue
        line_start = text.rfind("\n", 0, start) + 1
        tail = _LINE_TAIL.match(text, end)
        alone = (tail is not None and not text[line_start:start].strip() and "," in text[spans[index - 1][1]:start]
                 and ("," in text[end:tail.end()] or index == len(items) - 1))
        edits.append((line_start, tail.end(), "") if alone else (spans[index - 1][1], end, ""))  # type: ignore[union-attr]
    return _merge(edits)


def _merge(edits: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    merged: list[tuple[int, int, str]] = []
    for start, end, content in sorted(edits):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]), "")
        else:
            merged.append((start, end, content))
    return merged


_SAME_SHAPE_METHODS = frozenset({"contiguous", "to", "float", "half", "bfloat16", "clone", "detach"})
_SAME_SHAPE_FACTORIES = frozenset({"empty_like", "zeros_like", "ones_like", "full_like", "randn_like", "rand_like"})


def _same_shape_source(value: ast.expr | None) -> str | None:
    """The name of the tensor `value` copies the shape of: `q.contiguous()`, `q.to(dtype)`, `torch.empty_like(q)`."""
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return None
    if value.func.attr in _SAME_SHAPE_METHODS and isinstance(value.func.value, ast.Name):
        return value.func.value.id
    if value.func.attr in _SAME_SHAPE_FACTORIES and value.args and isinstance(value.args[0], ast.Name):
        return value.args[0].id
    return None
