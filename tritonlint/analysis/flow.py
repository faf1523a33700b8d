"""Local data flow inside one jit function: which assignments of a name can reach a use, and which loops
enclose a node.

A structured walk over the function body (no CFG): both arms of an `if` reach what follows it, a loop body
is walked twice so values carried from one iteration to the next reach their uses, and a loop may run zero
times. Good enough for kernel code, which is straight-line arithmetic in a few loops; anything it cannot
follow (tuple unpacking from a call, attribute or subscript targets) is recorded as an opaque definition so
that rules stay silent about it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from tritonlint.walk import parents, walk

Env = dict[str, frozenset["Definition"]]
Loop = ast.For | ast.While


@dataclass(frozen=True, eq=False)
class Definition:
    """One place that binds a name: `x = value`, `x += value`, a parameter, a loop target, or something
    opaque (tuple unpacking of a call, `with ... as x`, ...)."""

    name: str
    kind: str  # "assign" | "augassign" | "param" | "loop" | "opaque"
    stmt: ast.AST | None  # the binding statement (the function itself for parameters)
    value: ast.expr | None = None  # the assigned expression (for augassign: the right-hand side)
    order: int = 0  # creation order within the function's walk (parameters first, then source order)

    def __hash__(self) -> int:
        # Sets of definitions iterate by hash: hashing by walk order (not by address, the default) makes
        # every analysis that iterates `reaching` sets give the same answer on every run.
        return self.order


def in_source_order(definitions: frozenset[Definition]) -> list[Definition]:
    """Definitions in the order they appear in the source: a set of them iterates by object address, which
    differs between runs, and an analysis that memoises around a loop must visit them in one order to give
    the same answer every run."""
    return sorted(definitions, key=lambda d: (getattr(d.stmt, "lineno", 0), getattr(d.stmt, "col_offset", 0),
                                              d.name, d.kind))


class FunctionFlow:
    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.function = function
        self.parents = parents(function)
        self._before: dict[int, Env] = {}
        self._definitions: dict[tuple[int, str, int], Definition] = {}
        args = function.args
        env: Env = {}
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None:
                env[arg.arg] = frozenset({self._definition(arg.arg, "param", function)})
        self._walk(function.body, env)

    # ---- queries -------------------------------------------------------------------------------------
    def reaching(self, name: ast.Name) -> frozenset[Definition]:
        """The definitions of `name` that may reach this use (empty: a global or builtin)."""
        stmt = self.statement_of(name)
        env = self._before.get(id(stmt), {}) if stmt is not None else {}
        return env.get(name.id, frozenset())

    def single_value(self, expr: ast.expr) -> ast.expr:
        """The value of a name's single reaching assignment (`x` of `x = a + b`: `a + b`); the expression itself
        otherwise."""
        if isinstance(expr, ast.Name):
            definitions = self.reaching(expr)
            if len(definitions) == 1:
                (definition,) = definitions
                if definition.kind == "assign" and definition.value is not None:
                    return definition.value
        return expr

    def defined_before(self, stmt: ast.stmt, name: str) -> frozenset[Definition]:
        """The definitions of `name` that reach the start of `stmt`."""
        return self._before.get(id(stmt), {}).get(name, frozenset())

    def definition_at(self, stmt: ast.stmt, name: str) -> Definition | None:
        """The definition of `name` that statement `stmt` makes, if the walk reached it."""
        return next((d for d in self._definitions.values() if d.stmt is stmt and d.name == name), None)

    def uses_of(self, definition: Definition) -> list[ast.Name]:
        """The reads of a definition's name that it may reach (an augmented assignment's target reads too)."""
        uses = []
        for node in self._names.get(definition.name, ()):
            parent = self.parents.get(id(node))
            reads = isinstance(node.ctx, ast.Load) or (isinstance(parent, ast.AugAssign) and parent.target is node)
            if reads and definition in self.reaching(node):
                uses.append(node)
        return uses

    @cached_property
    def _names(self) -> dict[str, list[ast.Name]]:
        """The function's Name nodes by name, in walk order: uses_of is asked for many definitions."""
        found: dict[str, list[ast.Name]] = {}
        for node in walk(self.function):
            if isinstance(node, ast.Name):
                found.setdefault(node.id, []).append(node)
        return found

    def statement_of(self, node: ast.AST) -> ast.stmt | None:
        """The innermost statement holding `node` (a compound statement for its own header)."""
        current: ast.AST | None = node
        while current is not None and not isinstance(current, ast.stmt):
            current = self.parents.get(id(current))
        return current if current is not self.function else None

    def enclosing_loops(self, node: ast.AST) -> list[Loop]:
        """Loops of this function whose body holds `node`, innermost first (a loop's own header, such as
        the iterable of a `for`, is not inside that loop)."""
        loops: list[Loop] = []
        child, current = node, self.parents.get(id(node))
        while current is not None and current is not self.function:
            if isinstance(current, (ast.For, ast.While)) and any(child is s for s in current.body):
                loops.append(current)
            child, current = current, self.parents.get(id(current))
        return loops

    def inside(self, node: ast.AST, container: ast.AST) -> bool:
        current: ast.AST | None = node
        while current is not None:
            if current is container:
                return True
            current = self.parents.get(id(current))
        return False

    # ---- the walk ------------------------------------------------------------------------------------
    def _record(self, stmt: ast.stmt, env: Env) -> None:
        seen = self._before.get(id(stmt))
        self._before[id(stmt)] = env if seen is None else _union(seen, env)

    def _definition(self, name: str, kind: str, stmt: ast.AST, value: ast.expr | None = None) -> Definition:
        """One Definition object per binding site, however often the walk passes it (loops run twice)."""
        key = (id(stmt), name, id(value))
        if key not in self._definitions:
            self._definitions[key] = Definition(name, kind, stmt, value, order=len(self._definitions))
        return self._definitions[key]

    def _walk(self, body: list[ast.stmt], env: Env) -> Env:
        for stmt in body:
            self._record(stmt, env)
            env = self._statement(stmt, env)
        return env

    def _statement(self, stmt: ast.stmt, env: Env) -> Env:
        if isinstance(stmt, ast.Assign):
            env = dict(env)
            for target in stmt.targets:
                self._bind(target, stmt.value, stmt, env)
            return env
        if isinstance(stmt, ast.AnnAssign):
            env = dict(env)
            if stmt.value is not None:
                self._bind(stmt.target, stmt.value, stmt, env)
            return env
        if isinstance(stmt, ast.AugAssign):
            env = dict(env)
            if isinstance(stmt.target, ast.Name):
                env[stmt.target.id] = frozenset({self._definition(stmt.target.id, "augassign", stmt, stmt.value)})
            return env
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            entry = dict(env)
            for name in _names(stmt.target):
                entry[name] = frozenset({self._definition(name, "loop", stmt)})
            once = self._walk(stmt.body, entry)
            twice = self._walk(stmt.body, _union(entry, once))
            return self._walk(stmt.orelse, _union(entry, twice))
        if isinstance(stmt, ast.While):
            once = self._walk(stmt.body, env)
            twice = self._walk(stmt.body, _union(env, once))
            return self._walk(stmt.orelse, _union(env, twice))
        if isinstance(stmt, ast.If):
            return _union(self._walk(stmt.body, env), self._walk(stmt.orelse, env))
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            env = dict(env)
            for item in stmt.items:
                if item.optional_vars is not None:
                    self._opaque(item.optional_vars, stmt, env)
            return self._walk(stmt.body, env)
        if isinstance(stmt, ast.Try):
            after_body = self._walk(stmt.body, env)
            merged = _union(env, after_body)
            ends = [self._walk(stmt.orelse, after_body)]
            ends += [self._walk(handler.body, merged) for handler in stmt.handlers]
            out = ends[0]
            for end in ends[1:]:
                out = _union(out, end)
            return self._walk(stmt.finalbody, out)
        return env

    def _bind(self, target: ast.expr, value: ast.expr, stmt: ast.stmt, env: Env) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = frozenset({self._definition(target.id, "assign", stmt, value)})
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) \
                    and not any(isinstance(e, ast.Starred) for e in target.elts):
                for element, item in zip(target.elts, value.elts):
                    self._bind(element, item, stmt, env)
            else:
                self._opaque(target, stmt, env)
        # attribute and subscript targets bind no local name

    def _opaque(self, target: ast.expr, stmt: ast.stmt, env: Env) -> None:
        for name in _names(target):
            env[name] = frozenset({self._definition(name, "opaque", stmt)})


def _names(target: ast.expr) -> list[str]:
    return [n.id for n in walk(target) if isinstance(n, ast.Name)]


def _union(a: Env, b: Env) -> Env:
    if a is b:
        return a  # an `if` without `else`, a loop body that binds nothing: common, and the sets are shared
    out = dict(a)
    for name, defs in b.items():
        mine = out.get(name)
        if mine is None:
            out[name] = defs
        elif mine is not defs:
            out[name] = mine | defs
    return out


_CACHE: dict[int, tuple[ast.AST, FunctionFlow]] = {}


def flow_of(function: ast.FunctionDef | ast.AsyncFunctionDef) -> FunctionFlow:
    """The (cached) flow of a function; the cache holds the last few functions a rule looked at."""
    cached = _CACHE.get(id(function))
    if cached is not None and cached[0] is function:
        return cached[1]
    if len(_CACHE) > 32:
        _CACHE.clear()
    flow = FunctionFlow(function)
    _CACHE[id(function)] = (function, flow)
    return flow


def bind_call(function: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call) -> list[tuple[str, ast.expr]]:
    """(parameter, argument expression) for each argument of a call of `function`; none for a call that leaves
    a parameter without a default unbound (it cannot run: its arguments are misaligned, and binding them in
    order would take a stride for the pointer beside it)."""
    args = function.args
    names = [a.arg for a in [*args.posonlyargs, *args.args]]
    splat = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
    required = names[:len(names) - len(args.defaults)]
    bound = set(names[:len(call.args)]) | {k.arg for k in call.keywords}
    if not splat and not set(required) <= bound:
        return []
    pairs = [(n, a) for n, a in zip(names, call.args) if not isinstance(a, ast.Starred)]
    pairs += [(k.arg, k.value) for k in call.keywords if k.arg]
    return pairs


def reads_call(flow: FunctionFlow, expr: ast.expr, wanted: Callable[[ast.Call], bool], depth: int = 0) -> bool:
    """The expression holds a `wanted` call's result (a load, a program id), directly or through the function's
    assignments that reach it (`start = tl.load(table + i)`, then `start * BLOCK`)."""
    if depth > 6:
        return False
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and wanted(node):
            return True
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and any(
                definition.kind == "assign" and definition.value is not None
                and reads_call(flow, definition.value, wanted, depth + 1) for definition in flow.reaching(node)):
            return True
    return False


def varies_in(flow: FunctionFlow, expr: ast.expr, loop: Loop, depth: int = 0,
              unrolled: Callable[[Loop], bool] | None = None) -> bool:
    """Whether `expr` may change from one iteration of `loop` to the next: it loads, or reads a name that
    the loop redefines from something that changes (a copy of a value computed before the loop does not).
    With `unrolled`, the index of a loop inside `loop` that it holds unrolled (`tl.static_range`) is fixed in
    each unrolled copy: the same constants on every iteration of `loop`."""
    for node in walk(expr):
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)) and \
                (ast.unparse(node.func).endswith("load") or ast.unparse(node.func).endswith("gather")):
            return True
        if not isinstance(node, ast.Name):
            continue
        for definition in flow.reaching(node):
            if definition.kind == "param" or definition.stmt is None or not flow.inside(definition.stmt, loop):
                continue
            if definition.kind == "loop" and unrolled is not None and definition.stmt is not loop \
                    and isinstance(definition.stmt, ast.For) and unrolled(definition.stmt):
                continue
            if definition.kind != "assign" or depth >= 8:
                return True  # the loop index, an accumulation, an unpacking: changes
            if varies_in(flow, definition.value, loop, depth + 1, unrolled):  # type: ignore[arg-type]
                return True
    return False


def describe_loop(loop: Loop) -> str:
    if isinstance(loop, ast.For):
        return f"`for {ast.unparse(loop.target)}` loop at line {loop.lineno}"
    return f"`while` loop at line {loop.lineno}"
