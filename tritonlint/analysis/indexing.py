"""Abstract evaluation of pointer and offset expressions in a jit function: is a pointer a 2-D block tile
(`base + rows[:, None] * s0 + cols[None, :] * s1`) whose offsets are affine in program ids, aranges, loop
indices and scalar arguments? Anything read from memory, or that the analysis cannot follow, is irregular.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tritonlint.analysis.flow import Definition, FunctionFlow, bind_call, flow_of, reads_call
from tritonlint.analysis.model import ModuleModel
from tritonlint.analysis.triton_names import ARANGE, LOADS, TL

PASS_THROUGH = frozenset(f"{TL}.{n}" for n in ("multiple_of", "max_contiguous", "cast"))
SCALAR_CALLS = frozenset({f"{TL}.program_id", f"{TL}.num_programs", f"{TL}.cdiv", f"{TL}.minimum", f"{TL}.maximum",
                          "triton.cdiv"})
BUILTIN_SCALAR_CALLS = frozenset({"min", "max"})


@dataclass(frozen=True)
class Index:
    """An abstract index value: its rank (0 scalar, 1 an arange vector, 2 a broadcast tile), the axes a
    tile varies along (0 rows, 1 columns), and whether it stays a regular block (affine, nothing loaded)."""

    rank: int = 0
    axes: frozenset[int] = frozenset()
    regular: bool = True


SCALAR = Index()
IRREGULAR = Index(regular=False)


def _join(parts: list[Index]) -> Index:
    return Index(max((p.rank for p in parts), default=0), frozenset().union(*(p.axes for p in parts)),
                 all(p.regular for p in parts))


class Indices:
    """Evaluates pointer and offset expressions of one jit function abstractly."""

    def __init__(self, model: ModuleModel, flow: FunctionFlow, constexprs: set[str]) -> None:
        self.model = model
        self.flow = flow
        self.constexprs = constexprs
        self._memo: dict[int, Index] = {}
        self._busy: set[int] = set()

    def of(self, expr: ast.expr | None) -> Index:
        if expr is None or isinstance(expr, ast.Constant):
            return SCALAR
        if isinstance(expr, ast.Name):
            defs = self.flow.reaching(expr)
            return _join([self._of_definition(d) for d in defs]) if defs else SCALAR
        if isinstance(expr, ast.BinOp):
            return self._binop(expr.op, self.of(expr.left), self.of(expr.right), expr.right)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
            return self.of(expr.operand)
        if isinstance(expr, ast.IfExp):
            return _join([self.of(expr.body), self.of(expr.orelse)])
        if isinstance(expr, ast.Subscript):
            return self._subscript(expr)
        if isinstance(expr, ast.Call):
            return self._call(expr)
        if isinstance(expr, ast.Attribute):
            return SCALAR  # a_ptr.dtype.element_ty and the like
        return IRREGULAR

    def _binop(self, op: ast.operator, left: Index, right: Index, right_node: ast.expr) -> Index:
        joined = _join([left, right])
        if not left.rank and not right.rank:
            return joined
        if isinstance(op, (ast.Add, ast.Sub)):
            return joined
        if isinstance(op, ast.Mult) and min(left.rank, right.rank) == 0:
            return joined  # a vector times a stride
        if isinstance(op, ast.Mod) and not right.rank and isinstance(right_node, ast.Name) \
                and right_node.id not in self.constexprs:
            return joined  # (pid * BLOCK + tl.arange(0, BLOCK)) % M: rows past the end wrap around
        return IRREGULAR

    def _subscript(self, expr: ast.Subscript) -> Index:
        axis = broadcast_axis(expr)
        if axis is None:
            return IRREGULAR
        inner = self.of(expr.value)
        if inner.rank != 1:
            return IRREGULAR
        return Index(2, frozenset({axis}), inner.regular)

    def _call(self, call: ast.Call) -> Index:
        name = self.model.qualify(call.func)
        if name is None and isinstance(call.func, ast.Name) and call.func.id in BUILTIN_SCALAR_CALLS:
            name = call.func.id
        if isinstance(call.func, ast.Attribute) and name is None and call.func.attr == "to":
            return self.of(call.func.value)
        if name == f"{TL}.arange":
            return Index(1, frozenset(), _join([self.of(a) for a in call.args]).regular)
        if name in PASS_THROUGH and call.args:
            return self.of(call.args[0])
        if name in SCALAR_CALLS or name in BUILTIN_SCALAR_CALLS:
            parts = [self.of(a) for a in call.args]
            return SCALAR if all(p.regular and not p.rank for p in parts) else IRREGULAR
        return IRREGULAR  # loads (gathered offsets), helpers, tl.where, ...

    def _of_definition(self, definition: Definition) -> Index:
        key = id(definition)
        if key in self._memo:
            return self._memo[key]
        if key in self._busy:
            return SCALAR  # carried around the loop: its other definitions decide
        self._busy.add(key)
        try:
            if definition.kind == "param":
                # strides, sizes, base pointers (a tensor argument of a helper has rank 0 here too); a helper's
                # parameter every caller in the module passes data read from memory (a block table's entry) is
                # that data
                index = self._helper_parameter(definition.name)
            elif definition.kind == "loop":
                index = self._loop_index(definition.stmt)  # type: ignore[arg-type]
            elif definition.kind == "assign":
                index = self.of(definition.value)
            elif definition.kind == "augassign":
                stmt = definition.stmt
                before = self.flow.defined_before(stmt, definition.name)  # type: ignore[arg-type]
                previous = _join([self._of_definition(d) for d in before]) if before else SCALAR
                index = self._binop(stmt.op, previous, self.of(definition.value), definition.value)  # type: ignore[union-attr,arg-type]
            else:
                index = IRREGULAR
        finally:
            self._busy.discard(key)
        self._memo[key] = index
        return index

    def _helper_parameter(self, name: str) -> Index:
        """IRREGULAR where the function is a jit helper of the module and every call of it in the module's jit
        functions passes this parameter a value read from memory; else SCALAR."""
        function = self.flow.function
        if not isinstance(function, ast.FunctionDef):
            return SCALAR
        calls = helper_calls(self.model, function)
        if not calls:
            return SCALAR
        for caller, call in calls:
            passed = dict(bind_call(function, call)).get(name)
            if passed is None:
                return SCALAR  # its default, or a spread: not known
            if not reads_call(flow_of(caller), passed, lambda c: self.model.qualify(c.func) in LOADS):
                return SCALAR
        return IRREGULAR

    def _loop_index(self, loop: ast.AST) -> Index:
        """A loop index is a scalar, regular when its bounds are (a bound read from memory is not)."""
        if isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call):
            parts = [self.of(a) for a in loop.iter.args]
            if all(p.regular and not p.rank for p in parts):
                return SCALAR
        return IRREGULAR


def helper_calls(model: ModuleModel, helper: ast.FunctionDef) -> list[tuple[ast.FunctionDef, ast.Call]]:
    """The calls of a jit function by its plain name in the other jit functions of the module, with the caller
    (memoized per module)."""
    def collect() -> dict[str, list[tuple[ast.FunctionDef, ast.Call]]]:
        names = {f.name for f in model.functions if f.node is not None}
        found: dict[str, list[tuple[ast.FunctionDef, ast.Call]]] = {}
        for jit in model.functions:
            if isinstance(jit.node, ast.FunctionDef):
                for node in ast.walk(jit.node):
                    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
                        found.setdefault(node.func.id, []).append((jit.node, node))
        return found
    calls: dict[str, list[tuple[ast.FunctionDef, ast.Call]]] = model.memoized(("jit-helper-calls",), collect)
    return [(caller, call) for caller, call in calls.get(helper.name, []) if caller is not helper]


def broadcast_axis(expr: ast.Subscript) -> int | None:
    """0 for `v[:, None]`, 1 for `v[None, :]`, None otherwise."""
    if not isinstance(expr.slice, ast.Tuple) or len(expr.slice.elts) != 2:
        return None
    pattern = tuple("s" if isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None
                    else "n" if isinstance(e, ast.Constant) and e.value is None else "?" for e in expr.slice.elts)
    return {("s", "n"): 0, ("n", "s"): 1}.get(pattern)  # type: ignore[arg-type]


def arange_end(model: ModuleModel, expr: ast.expr) -> ast.expr | None:
    """`end` of `tl.arange(0, end)`, else None."""
    if isinstance(expr, ast.Call) and model.qualify(expr.func) == ARANGE and len(expr.args) == 2 \
            and isinstance(expr.args[0], ast.Constant) and expr.args[0].value == 0:
        return expr.args[1]
    return None


def range_arguments(model: ModuleModel, iterable: ast.expr) -> list[ast.expr] | None:
    """The positional arguments of a kernel loop's `range(...)` (the builtin, not a name the module binds),
    `tl.range(...)` or `tl.static_range(...)`; None for any other iterable."""
    if isinstance(iterable, ast.Call) and (
            model.qualify(iterable.func) in (f"{TL}.range", f"{TL}.static_range")
            or isinstance(iterable.func, ast.Name) and iterable.func.id == "range" and model.qualify(iterable.func) is None):
        return iterable.args
    return None


def load_pointer(call: ast.Call) -> ast.expr | None:
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == "pointer"), None)
