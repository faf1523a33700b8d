"""Autotune config lists, evaluated over the syntax tree: no user code runs.

Real projects build their configs in many ways: a literal list, a module-level list grown by `.append` /
`.extend` loops, comprehensions (nested, filtered) over module constants, `itertools.product`, and helper
functions with parameters, defaults and `if` tests on environment variables. A small interpreter follows
these over the module's own statements: values are plain Python data (numbers, strings, lists, dicts,
`triton.Config` records) or UNKNOWN. Environment variables take their defaults (the path a user who sets
none gets), and a test for another vendor's GPU (`IS_AMD`, `is_hip()`) is false. A test that cannot be decided makes a helper's result unknown, unless both arms return config
lists: then the configs of both paths count. Every evaluation runs under a step budget; past it the result
is unknown, never a guess.
"""

from __future__ import annotations

import ast
import itertools
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tritonlint.analysis.backends import backend_test

if TYPE_CHECKING:
    from tritonlint.analysis.model import ModuleModel

CONFIG = "triton.Config"
STEP_BUDGET = 20_000  # nodes evaluated for one configs expression
MAX_ITEMS = 4_096  # longest list, range or product followed
MAX_DEPTH = 16  # nested helper calls and module names followed


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()


class OutOfBudget(Exception):
    pass


@dataclass
class ConfigValue:
    """One `triton.Config(...)`: its meta-parameters (None where not a constant) and options."""

    meta: dict[str, object | None]
    num_warps: object | None
    num_stages: object | None
    has_pre_hook: bool
    line: int
    pre_hook_node: ast.FunctionDef | None = None  # the pre_hook, where it is a function of the project read here


@dataclass
class _Function:
    """A function the config interpreter may call, with the interpreter of its module."""
    node: ast.FunctionDef
    interpreter: ConfigInterpreter  # of the module that defines it: its names are that module's


def pre_hook_block_shapes(hook: ast.FunctionDef | None) -> frozenset[str] | None:
    """The arguments whose `.block_shape` a config's pre_hook sets: the constant keys of `nargs[...]` its body
    assigns `.block_shape` of (`nargs["a_desc"].block_shape = [...]`); None for a hook not read here, or one that
    assigns it by another key."""
    if hook is None or not hook.args.args:
        return None
    nargs = hook.args.args[0].arg
    names = set()
    for node in ast.walk(hook):
        if isinstance(node, ast.Attribute) and node.attr == "block_shape" and isinstance(node.ctx, ast.Store):
            target = node.value
            if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == nargs
                    and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str)):
                return None  # `nargs[name].block_shape = ...` in a loop, or another object's
            names.add(target.slice.value)
    return frozenset(names)


class _Return(Exception):
    def __init__(self, value: object) -> None:
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod, ast.Pow: operator.pow, ast.Div: operator.truediv, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
}
_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_, ast.IsNot: operator.is_not,
}
_MUTATORS = frozenset({"append", "extend", "insert"})
_PURE_BUILTINS: dict[str, Callable[..., Any]] = {
    "len": len, "min": min, "max": max, "abs": abs, "int": int, "bool": bool, "str": str, "sorted": sorted,
    "list": list, "tuple": tuple, "dict": dict, "set": set, "zip": lambda *a: list(zip(*a)),
    "enumerate": lambda a, start=0: list(enumerate(a, start)), "reversed": lambda a: list(reversed(a)),
}
_ENVIRONMENT_GETTERS = frozenset({"os.getenv", "os.environ.get"})
# Words that name another vendor's GPU in a branch test (`IS_AMD`, `is_hip()`, `is_xpu`).
OTHER_VENDORS = ("amd", "hip", "rocm", "xpu", "npu", "mlu", "musa", "gcu", "dcu")


class ConfigInterpreter:
    def __init__(self, model: ModuleModel, budget: int = STEP_BUDGET, root: ConfigInterpreter | None = None,
                 until: int | None = None) -> None:
        """`until`: the line of an expression the module runs while it is imported (a module-level decorator):
        only its statements above that line have run, so a name defined again below keeps its first value."""
        self.model = model
        self.until = until
        self.budget = budget
        self.steps = 0
        self.depth = 0
        self.module_values: dict[str, object] = {}
        self.pending: set[str] = set()
        self.root = root or self  # shares the step budget and the depth with the modules it reads
        self.others: dict[str, ConfigInterpreter] = {}

    # ---- entry point ------------------------------------------------------------------------------------
    def configs(self, node: ast.expr | None) -> list[ConfigValue] | None:
        """The configs an autotune `configs=` expression stands for; None when not known."""
        if node is None:
            return None
        try:
            value = self.expr(node, {})
        except (OutOfBudget, RecursionError):
            return None
        if isinstance(value, tuple):
            value = list(value)
        if not isinstance(value, list) or not all(isinstance(item, ConfigValue) for item in value):
            return None
        return value

    def tick(self) -> None:
        root = self.root
        root.steps += 1
        if root.steps > root.budget:
            raise OutOfBudget

    # ---- expressions ------------------------------------------------------------------------------------
    def expr(self, node: ast.expr, env: dict[str, object]) -> Any:
        self.tick()
        try:
            return self._expr(node, env)
        except (_Return, _Break, _Continue, OutOfBudget, RecursionError):
            raise
        except Exception:  # noqa: BLE001 - Python's own errors on evaluated data (TypeError, ZeroDivision): unknown
            return UNKNOWN

    def _expr(self, node: ast.expr, env: dict[str, object]) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.name(node.id, env)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items: list[object] = []
            for element in node.elts:
                if isinstance(element, ast.Starred):
                    spread = self.expr(element.value, env)
                    if not isinstance(spread, (list, tuple)):
                        return UNKNOWN
                    items.extend(spread)
                else:
                    items.append(self.expr(element, env))
            return items if isinstance(node, ast.List) else tuple(items) if isinstance(node, ast.Tuple) else UNKNOWN
        if isinstance(node, ast.Dict):
            result: dict[object, object] = {}
            for key, value in zip(node.keys, node.values):
                if key is None:
                    spread = self.expr(value, env)
                    if not isinstance(spread, dict):
                        return UNKNOWN
                    result.update(spread)
                    continue
                name = self.expr(key, env)
                if name is UNKNOWN:
                    return UNKNOWN
                result[name] = self.expr(value, env)
            return result
        if isinstance(node, ast.BinOp):
            left, right = self.expr(node.left, env), self.expr(node.right, env)
            function = _BINARY.get(type(node.op))
            if function is None or not _known(left) or not _known(right):
                return UNKNOWN
            if isinstance(left, (list, tuple)) and isinstance(right, int) and len(left) * right > MAX_ITEMS:
                return UNKNOWN
            return function(left, right)
        if isinstance(node, ast.UnaryOp):
            operand = self.expr(node.operand, env)
            if not _known(operand):
                return UNKNOWN
            if isinstance(node.op, ast.Not):
                return not operand
            return -operand if isinstance(node.op, ast.USub) else +operand if isinstance(node.op, ast.UAdd) else UNKNOWN
        if isinstance(node, ast.BoolOp):
            last: object = UNKNOWN
            for value_node in node.values:
                last = self.expr(value_node, env)
                if not _known(last):
                    return UNKNOWN
                if bool(last) == isinstance(node.op, ast.Or):
                    return last
            return last
        if isinstance(node, ast.Compare):
            left = self.expr(node.left, env)
            for op, right_node in zip(node.ops, node.comparators):
                right = self.expr(right_node, env)
                if not _known(left) or not _known(right):
                    return UNKNOWN
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            test = self.test(node.test, env)
            return UNKNOWN if not _known(test) else self.expr(node.body if test else node.orelse, env)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            produced = self.comprehension(node.generators, env, lambda inner: [self.expr(node.elt, inner)])
            return produced if produced is not UNKNOWN else UNKNOWN
        if isinstance(node, ast.DictComp):
            pairs = self.comprehension(node.generators, env,
                                       lambda inner: [(self.expr(node.key, inner), self.expr(node.value, inner))])
            return UNKNOWN if pairs is UNKNOWN or any(k is UNKNOWN for k, _ in pairs) else dict(pairs)
        if isinstance(node, ast.Subscript):
            container, index = self.expr(node.value, env), self.subscript(node.slice, env)
            if not _known(container) or not _known(index) or not isinstance(container, (list, tuple, dict, str)):
                return UNKNOWN
            return container[index]
        if isinstance(node, ast.Call):
            return self.call(node, env)
        return UNKNOWN

    def subscript(self, node: ast.expr, env: dict[str, object]) -> Any:
        if isinstance(node, ast.Slice):
            parts = [None if part is None else self.expr(part, env) for part in (node.lower, node.upper, node.step)]
            return UNKNOWN if any(part is UNKNOWN for part in parts) else slice(*parts)
        return self.expr(node, env)

    def comprehension(self, generators: list[ast.comprehension], env: dict[str, object],
                      produce: Callable[[dict[str, object]], list[Any]]) -> Any:
        if not generators:
            return produce(env)
        first, rest = generators[0], generators[1:]
        iterable = self.expr(first.iter, env)
        if first.is_async or not isinstance(iterable, (list, tuple, range, dict, str)):
            return UNKNOWN
        results: list[Any] = []
        for item in iterable:
            inner = dict(env)
            if not self.bind(first.target, item, inner):
                return UNKNOWN
            tests = [self.expr(test, inner) for test in first.ifs]
            if any(not _known(test) for test in tests):
                return UNKNOWN
            if not all(tests):
                continue
            produced = self.comprehension(rest, inner, produce)
            if produced is UNKNOWN:
                return UNKNOWN
            results.extend(produced)
            if len(results) > MAX_ITEMS:
                return UNKNOWN
        return results

    def name(self, name: str, env: dict[str, object]) -> Any:
        if name in env:
            return env[name]
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        if name in self.model.imports and name not in self.model.local_names:
            return self.imported_value(self.model.imports[name])
        return self.module_value(name)

    def imported_value(self, qualified: str) -> Any:
        """`from pkg.configs import NUM_WARPS` (or a helper): read in the module of the project that defines it."""
        module, _, attr = qualified.rpartition(".")
        resolve = self.root.model.imported
        if resolve is None or not module:
            return UNKNOWN
        other = self.root.others.get(module)
        if other is None:
            model = resolve(module, attr)
            if model is None:
                return UNKNOWN
            other = self.root.others[module] = ConfigInterpreter(model, root=self.root)
        return other.module_value(attr)

    def call(self, node: ast.Call, env: dict[str, object]) -> Any:
        qualified = self.model.qualify(node.func)
        if qualified == CONFIG:
            return self.config(node, env)
        if qualified in _ENVIRONMENT_GETTERS:  # the default path: no environment variable set
            return self.expr(node.args[1], env) if len(node.args) == 2 else None
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("items", "keys", "values", "copy") \
                and not node.args:
            owner = self.expr(node.func.value, env)
            if isinstance(owner, dict):
                return list(getattr(owner, node.func.attr)()) if node.func.attr != "copy" else dict(owner)
            return list(owner) if isinstance(owner, list) and node.func.attr == "copy" else UNKNOWN
        args = self.arguments(node, env)
        if args is None:
            return UNKNOWN
        positional, keywords = args
        if qualified == "itertools.product":
            pools = [list(pool) for pool in positional if isinstance(pool, (list, tuple, range))]
            size = 1
            for pool in pools:
                size *= len(pool)
            if len(pools) != len(positional) or keywords or size > MAX_ITEMS:
                return UNKNOWN
            return list(itertools.product(*pools))
        if isinstance(node.func, ast.Name) and node.func.id not in env:
            if any(value is UNKNOWN for value in [*positional, *keywords.values()]):
                return UNKNOWN
            builtin = _PURE_BUILTINS.get(node.func.id) if node.func.id not in self.model.local_names else None
            if node.func.id == "range":
                bounds = range(*positional)
                return bounds if len(bounds) <= MAX_ITEMS else UNKNOWN
            if builtin is not None:
                return builtin(*positional, **keywords)
        function = self.expr(node.func, env) if isinstance(node.func, ast.Name) else UNKNOWN
        if isinstance(function, _Function):
            return function.interpreter.run_function(function.node, positional, keywords)
        return UNKNOWN

    def arguments(self, node: ast.Call, env: dict[str, object]) -> tuple[list[Any], dict[str, Any]] | None:
        positional: list[Any] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                spread = self.expr(arg.value, env)
                if not isinstance(spread, (list, tuple)):
                    return None
                positional.extend(spread)
            else:
                positional.append(self.expr(arg, env))
        keywords: dict[str, Any] = {}
        for keyword in node.keywords:
            value = self.expr(keyword.value, env)
            if keyword.arg is None:
                if not isinstance(value, dict):
                    return None
                keywords.update(value)
            else:
                keywords[keyword.arg] = value
        return positional, keywords

    def config(self, node: ast.Call, env: dict[str, object]) -> Any:
        args = self.arguments(node, env)
        if args is None:
            return UNKNOWN
        positional, keywords = args
        for name, value in zip(("kwargs", "num_warps", "num_stages"), positional):
            keywords.setdefault(name, value)
        meta = keywords.get("kwargs", {})
        if not isinstance(meta, dict) or not all(isinstance(key, str) for key in meta):
            return UNKNOWN
        return ConfigValue(
            meta={key: value if _scalar(value) else None for key, value in meta.items()},
            num_warps=_scalar_or_none(keywords.get("num_warps")),
            num_stages=_scalar_or_none(keywords.get("num_stages")),
            has_pre_hook=keywords.get("pre_hook") is not None,  # `pre_hook=None` attaches none
            line=node.lineno,
            pre_hook_node=hook.node if isinstance(hook := keywords.get("pre_hook"), _Function) else None,
        )

    # ---- statements ---------------------------------------------------------------------------------------
    def run_function(self, function: ast.FunctionDef, positional: list[Any], keywords: dict[str, Any]) -> Any:
        if self.root.depth >= MAX_DEPTH:
            return UNKNOWN
        args = function.args
        if args.vararg or args.kwarg or args.posonlyargs:
            return UNKNOWN
        env: dict[str, object] = {}
        names = [a.arg for a in args.args]
        defaults = [None] * (len(names) - len(args.defaults)) + list(args.defaults)
        if len(positional) > len(names):
            return UNKNOWN
        for index, (name, default) in enumerate(zip(names, defaults)):
            if index < len(positional):
                env[name] = positional[index]
            elif name in keywords:
                env[name] = keywords[name]
            elif default is not None:
                env[name] = self.expr(default, {})
            else:
                return UNKNOWN
        for arg, default in zip(args.kwonlyargs, args.kw_defaults):
            if arg.arg in keywords:
                env[arg.arg] = keywords[arg.arg]
            elif default is not None:
                env[arg.arg] = self.expr(default, {})
            else:
                return UNKNOWN
        self.root.depth += 1
        try:
            self.block(function.body, env)
        except _Return as returned:
            return returned.value
        except (_Break, _Continue):
            return UNKNOWN
        finally:
            self.root.depth -= 1
        return None

    def block(self, statements: list[ast.stmt], env: dict[str, object]) -> None:
        for statement in statements:
            self.statement(statement, env)

    def statement(self, node: ast.stmt, env: dict[str, object]) -> None:
        self.tick()
        if isinstance(node, ast.Return):
            raise _Return(self.expr(node.value, env) if node.value is not None else None)
        if isinstance(node, ast.Assign):
            value = self.expr(node.value, env)
            for target in node.targets:
                if not self.bind(target, value, env):
                    raise _Return(UNKNOWN)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            if not self.bind(node.target, self.expr(node.value, env), env):
                raise _Return(UNKNOWN)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            current, value = self.name(node.target.id, env), self.expr(node.value, env)
            function = _BINARY.get(type(node.op))
            if isinstance(current, list) and isinstance(node.op, ast.Add) and isinstance(value, (list, tuple)):
                current.extend(value)  # in place, as Python does for lists
                env[node.target.id] = current
            else:
                env[node.target.id] = function(current, value) if function and _known(current) and _known(value) \
                    else UNKNOWN
        elif isinstance(node, ast.Expr):
            self.expression_statement(node.value, env)
        elif isinstance(node, ast.If):
            self.branch(node, env)
        elif isinstance(node, ast.For) and not node.orelse:
            iterable = self.expr(node.iter, env)
            if not isinstance(iterable, (list, tuple, range, dict, str)):
                raise _Return(UNKNOWN)
            for item in iterable:
                if not self.bind(node.target, item, env):
                    raise _Return(UNKNOWN)
                try:
                    self.block(node.body, env)
                except _Break:
                    break
                except _Continue:
                    continue
        elif isinstance(node, ast.Break):
            raise _Break
        elif isinstance(node, ast.Continue):
            raise _Continue
        elif isinstance(node, ast.Pass):
            pass
        else:  # while, try, with, raise, nested definitions, imports: not followed
            raise _Return(UNKNOWN)

    def expression_statement(self, value: ast.expr, env: dict[str, object]) -> None:
        """`configs.append(...)` / `.extend(...)` / `.insert(i, ...)` grow a known list; other calls (a warning,
        a log line, a docstring) change nothing a config list depends on."""
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _MUTATORS:
            owner = self.expr(value.func.value, env)
            args = self.arguments(value, env)
            if not isinstance(owner, list) or args is None or args[1]:
                raise _Return(UNKNOWN)
            getattr(owner, value.func.attr)(*args[0])

    def test(self, node: ast.expr, env: dict[str, object]) -> Any:
        """A branch test's value; one that asks for another vendor's GPU (`IS_AMD`, `is_hip()`,
        `torch.version.hip is not None`) is false: configs are read on an NVIDIA GPU's path."""
        value = self.expr(node, env)
        if not _known(value) and backend_test(node, OTHER_VENDORS) is not None:
            return not backend_test(node, OTHER_VENDORS)
        return value

    def branch(self, node: ast.If, env: dict[str, object]) -> None:
        test = self.test(node.test, env)
        if _known(test):
            self.block(node.body if test else node.orelse, env)
            return
        outcomes = []
        for arm in (node.body, node.orelse):  # an undecided test: both paths, when both return config lists
            try:
                self.block(arm, dict(env))
            except _Return as returned:
                outcomes.append(returned.value)
                continue
            raise _Return(UNKNOWN)
        configs = [o for o in outcomes if isinstance(o, list) and all(isinstance(c, ConfigValue) for c in o)]
        if len(configs) == len(outcomes):
            raise _Return([config for outcome in configs for config in outcome])
        raise _Return(UNKNOWN)

    def bind(self, target: ast.expr, value: object, env: dict[str, object]) -> bool:
        if isinstance(target, ast.Name):
            env[target.id] = value
            return True
        if isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in target.elts):
            if not isinstance(value, (list, tuple)) or len(value) != len(target.elts):
                for name in _stored_names(target):
                    env[name] = UNKNOWN
                return value is UNKNOWN
            return all(self.bind(element, item, env) for element, item in zip(target.elts, value))
        return False

    # ---- module-level names -----------------------------------------------------------------------------
    def module_value(self, name: str) -> Any:
        """A module-level name: its function, or the value its top-level statements leave it with."""
        if name in self.module_values:
            return self.module_values[name]
        if name in self.pending or len(self.pending) >= MAX_DEPTH:
            return UNKNOWN
        self.pending.add(name)
        try:
            value = self._module_value(name)
        finally:
            self.pending.discard(name)
        self.module_values[name] = value
        return value

    def _module_value(self, name: str) -> Any:
        env: dict[str, object] = {}
        try:
            found = self._run_about(self.model.tree.body, name, env)
        except (_Return, _Break, _Continue):
            return UNKNOWN
        return found if found is not None else env.get(name, UNKNOWN)

    def _run_about(self, body: list[ast.stmt], name: str, env: dict[str, object]) -> _Function | None:
        """Run the module-level statements that bind or grow `name`. Under a test that cannot be decided
        (`if torch_version_at_least(...):` around a kernel and its configs), the one arm that binds it is the
        path on which the code using it runs."""
        statements = [s for s in _statements_about(body, name) if self.until is None or s.lineno < self.until]
        if len(statements) == 1 and isinstance(statements[0], ast.FunctionDef):
            return _Function(statements[0], self)
        for statement in statements:
            if isinstance(statement, ast.If) and not _known(self.test(statement.test, env)):
                arms = [arm for arm in (statement.body, statement.orelse) if any(_statements_about(arm, name))]
                if len(arms) != 1:
                    raise _Return(UNKNOWN)
                found = self._run_about(arms[0], name, env)
                if found is not None:
                    return found
                continue
            self.statement(statement, env)
        return None


def written_meta(model: ModuleModel, node: ast.expr, depth: int = 2) -> frozenset[str]:
    """The meta-parameter names a configs expression writes, read off its syntax for configs that cannot be
    evaluated: string keys of dict literals and keywords of `dict(...)`, in the expression, in the module's
    functions it calls and the module-level names it reads (`depth` levels; a factory that loops over an
    undecidable `if _HAS_WAVES_PER_EU:` still shows `{"BLOCK_G": 1, "SPLIT": split}`)."""
    definitions = model.memoized(("module-definitions",), lambda: _definitions(model.tree))
    found: set[str] = set()
    seen: set[str] = set()
    pending: list[tuple[ast.AST, int]] = [(node, depth)]
    while pending:
        expr, left = pending.pop()
        for sub in ast.walk(expr):
            if isinstance(sub, ast.Dict):
                found |= {k.value for k in sub.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "dict":
                found |= {k.arg for k in sub.keywords if k.arg}
            elif isinstance(sub, ast.Name) and left and sub.id not in seen:
                seen.add(sub.id)
                pending += [(d, left - 1) for d in definitions.get(sub.id, ())]
    return frozenset(found)


def _definitions(tree: ast.Module) -> dict[str, list[ast.AST]]:
    """Module-level functions and assignments by name, also under module-level `if`/`try` blocks."""
    found: dict[str, list[ast.AST]] = {}
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.setdefault(statement.name, []).append(statement)
        elif isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for name in _stored_names(statement):
                found.setdefault(name, []).append(statement)
        elif isinstance(statement, (ast.If, ast.Try)):
            pending += [*statement.body, *statement.orelse, *getattr(statement, "finalbody", []),
                        *(s for handler in getattr(statement, "handlers", []) for s in handler.body)]
    return found


def _known(value: object) -> bool:
    return value is not UNKNOWN and not isinstance(value, _Function)


def _scalar(value: object) -> bool:
    return isinstance(value, (int, float, str, bool)) or value is None


def _scalar_or_none(value: object) -> object | None:
    return value if _scalar(value) else None


def _stored_names(target: ast.AST) -> Iterator[str]:
    for node in ast.walk(target):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            yield node.id


def _statements_about(body: list[ast.stmt], name: str) -> Iterator[ast.stmt]:
    """The top-level statements that bind `name` or grow it in place (`name.append(...)`, `name += ...`)."""
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if statement.name == name:
                yield statement
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
                yield statement
                break
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == name:
                yield statement
                break
