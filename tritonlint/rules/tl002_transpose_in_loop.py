"""TL002: a transpose, inside a loop, of a tile computed from a tl.dot result (the result, a softmax tile,
an accumulated state) that is then used in registers.

A tile in the layout of an MMA result is used in place by arithmetic, reductions and the first operand of
the next tl.dot; transposing it for those uses costs a round trip through shared memory every iteration.
Transposes on the way into shared memory fold away: of a loaded tile, of a tile computed elementwise from
loaded data, into the second operand or the accumulator of tl.dot, into a store (measured on an H200, see
docs/precision/TL002.md). Loop-invariant transposes are hoisted out of the loop and not reported either.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tritonlint import evidence
from tritonlint.analysis.flow import (
    Definition,
    FunctionFlow,
    Loop,
    describe_loop,
    flow_of,
    varies_in,
)
from tritonlint.analysis.jit_globals import refused_in_kernel
from tritonlint.analysis.kernel import calls_dot, mentions_dot, runs_dot
from tritonlint.analysis.model import ModuleModel
from tritonlint.analysis.tiles import refuses_a_tile
from tritonlint.analysis.triton_names import (
    CASTS,
    CONSTANT_CALLS,
    DESCRIPTOR_LOADS,
    DOTS,
    EFFECTS,
    FIRST_OPERAND_KEYWORDS,
    IDEMPOTENT_ATOMICS,
    INDEX_CALLS,
    LOADS,
    NON_IDEMPOTENT_ATOMICS,
    REDUCTIONS,
    RESHAPE_OR_REDUCE_METHODS,
    RESHAPES,
    STORES,
    TL,
)
from tritonlint.analysis.triton_versions import table
from tritonlint.context import MatchContext, RawEdits, Verdict, condition, fixer
from tritonlint.walk import walk

TRANS, PERMUTE = f"{TL}.trans", f"{TL}.permute"
# The fixture pairs the two kinds of finding quote.
COMPUTED_TILE, FIRST_OPERAND = "TL002-transpose-computed-tile", "TL002-transpose-first-operand"


def transpose_operand(model: ModuleModel, node: ast.AST | None) -> ast.expr | None:
    """The value a 2-D transpose (`tl.trans(x)`, `x.T`, `tl.permute(x, (1, 0))`, `x.trans()`,
    `x.permute(1, 0)`) transposes, or None when `node` is no such transpose."""
    if isinstance(node, ast.Attribute) and node.attr == "T" and isinstance(node.ctx, ast.Load):
        return node.value
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    name = model.qualify(node.func)
    if name in (TRANS, PERMUTE) and node.args:
        operand, dims = node.args[0], node.args[1:]
    elif isinstance(node.func, ast.Attribute) and node.func.attr in ("trans", "permute") and name is None:
        operand, dims = node.func.value, node.args
        name = TRANS if node.func.attr == "trans" else PERMUTE
    else:
        return None
    if not dims and name == TRANS:
        return operand
    return operand if _is_swap(dims) else None


def _is_swap(dims: list[ast.expr]) -> bool:
    if len(dims) == 1 and isinstance(dims[0], (ast.Tuple, ast.List)):
        dims = dims[0].elts
    return [d.value if isinstance(d, ast.Constant) else None for d in dims] == [1, 0]


@dataclass(frozen=True)
class Origin:
    """Where a value comes from: loaded from memory, computed in registers, an index, a constant, or
    unknown. `source` says what a computed value is computed from ("a tl.dot result" / "loaded data")."""

    kind: str  # "loaded" | "computed" | "index" | "constant" | "unknown"
    source: str = ""


UNKNOWN, INDEX, CONSTANT, LOADED = Origin("unknown"), Origin("index"), Origin("constant"), Origin("loaded")
DOT_RESULT = Origin("computed", "a tl.dot result")
RESHAPED = Origin("computed", "a reshaped or reduced tile")


def _computed(parts: list[Origin]) -> Origin:
    """Arithmetic over `parts`: computed when any part is data (loaded or computed), else an index or
    constant expression; unknown when nothing is known."""
    if any(p.kind == "computed" and p.source == DOT_RESULT.source for p in parts):
        return DOT_RESULT
    if any(p.kind in ("computed", "loaded") for p in parts):
        return Origin("computed", "loaded data")
    if any(p.kind == "unknown" for p in parts):
        return UNKNOWN
    return INDEX if any(p.kind == "index" for p in parts) else CONSTANT


def _either(parts: list[Origin]) -> Origin:
    """A value that is one of `parts` (several assignments reach it): silent unless they agree. An initial
    constant (the zeros of an accumulator) does not change what the value is. It is a tl.dot result only
    when every computed assignment makes it one: `if G == 1: qk = tl.sum(...) else: qk = tl.dot(...)` is
    no dot result where the `G == 1` code uses it."""
    kinds = {p.kind for p in parts}
    if not parts or "unknown" in kinds or {"loaded", "computed"} <= kinds:
        return UNKNOWN
    for kind in ("computed", "loaded", "index"):
        found = [p for p in parts if p.kind == kind]
        if found:
            return next((p for p in found if p != DOT_RESULT), DOT_RESULT)
    return CONSTANT


class Origins:
    """Classifies expressions of one jit function by following local assignments."""

    def __init__(self, model: ModuleModel, flow: FunctionFlow, constexprs: set[str]) -> None:
        self.model = model
        self.flow = flow
        self.constexprs = constexprs
        self._memo: dict[int, Origin] = {}
        self._busy: set[int] = set()

    def of(self, expr: ast.expr) -> Origin:
        if isinstance(expr, ast.Constant):
            return CONSTANT
        if isinstance(expr, ast.Name):
            defs = self.flow.reaching(expr)
            if not defs:
                return CONSTANT if expr.id in self.model.constants else UNKNOWN
            return self._of_definitions(defs)
        if isinstance(expr, ast.Call):
            return self._of_call(expr)
        if isinstance(expr, (ast.BinOp, ast.BoolOp, ast.Compare, ast.UnaryOp)):
            return _computed([self.of(e) for e in _operands(expr)])
        if isinstance(expr, ast.IfExp):
            return _either([self.of(expr.body), self.of(expr.orelse)])
        if isinstance(expr, ast.Attribute):
            operand = transpose_operand(self.model, expr)
            if operand is not None:
                return self.of(operand)
            return CONSTANT if expr.attr in ("dtype", "element_ty", "shape") else UNKNOWN
        if isinstance(expr, ast.Subscript):  # x[:, None] and the like: a reshaped loaded tile is no longer fresh
            inner = self.of(expr.value)
            return UNKNOWN if inner.kind == "loaded" else inner
        return UNKNOWN

    def _of_definitions(self, defs: frozenset[Definition]) -> Origin:
        return _either([self._of_definition(d) for d in defs])

    def _of_definition(self, definition: Definition) -> Origin:
        key = id(definition)
        if key in self._memo:
            return self._memo[key]
        if key in self._busy:  # a value carried around the loop: decided by its other definitions
            return CONSTANT
        self._busy.add(key)
        try:
            if definition.kind == "param":
                origin = CONSTANT if definition.name in self.constexprs else UNKNOWN
            elif definition.kind == "loop":
                origin = INDEX
            elif definition.kind == "assign" and definition.value is not None:
                origin = self.of(definition.value)
            elif definition.kind == "augassign" and definition.value is not None:
                before = self.flow.defined_before(definition.stmt, definition.name)  # type: ignore[arg-type]
                origin = _computed([self.of(definition.value), self._of_definitions(before)])
            else:
                origin = UNKNOWN
        finally:
            self._busy.discard(key)
        self._memo[key] = origin
        return origin

    def _of_call(self, call: ast.Call) -> Origin:
        name = self.model.qualify(call.func)
        method = call.func.attr if isinstance(call.func, ast.Attribute) and name is None else None
        if name in LOADS or method in DESCRIPTOR_LOADS:
            return LOADED
        if name in DOTS:
            return DOT_RESULT
        if method == "to" or name in CASTS:  # a cast keeps what the value is: a loaded tile cast is still loaded
            target = call.func.value if method == "to" else (call.args[0] if call.args else None)  # type: ignore[attr-defined]
            return self.of(target) if target is not None else UNKNOWN
        operand = transpose_operand(self.model, call)
        if operand is not None:
            return self.of(operand)
        if name in INDEX_CALLS:
            return INDEX
        if name in CONSTANT_CALLS:
            return CONSTANT
        if name in RESHAPES or name in REDUCTIONS or method in RESHAPE_OR_REDUCE_METHODS:
            source = call.func.value if method is not None else (call.args[0] if call.args else None)  # type: ignore[attr-defined]
            inner = self.of(source) if source is not None else UNKNOWN
            # a reshaped or reduced tl.dot result is no longer in the MMA layout: the cost TL002 is about is gone
            if inner.kind == "computed":
                return RESHAPED
            return UNKNOWN if inner.kind == "loaded" else inner
        receiver = [call.func.value] if method is not None else []  # type: ignore[attr-defined]
        parts = [self.of(a) for a in [*receiver, *call.args, *(k.value for k in call.keywords)]]
        inner = _computed(parts)
        if name is not None and not name.startswith(f"{TL}."):
            # a helper or another library: data in, computed data out; otherwise we cannot tell
            return inner if inner.kind == "computed" else UNKNOWN
        return inner


def _operands(expr: ast.expr) -> list[ast.expr]:
    if isinstance(expr, ast.BinOp):
        return [expr.left, expr.right]
    if isinstance(expr, ast.BoolOp):
        return list(expr.values)
    if isinstance(expr, ast.Compare):
        return [expr.left, *expr.comparators]
    return [expr.operand]  # type: ignore[attr-defined]


def _describe_value(flow: FunctionFlow, operand: ast.expr, origin: Origin) -> tuple[str, str]:
    """The transposed value as the message shows it, and what it is computed from."""
    text = " ".join(ast.unparse(operand).split())
    if len(text) > 50:
        text = text[:47] + "..."
    core = operand
    while isinstance(core, ast.Call) and isinstance(core.func, ast.Attribute) and core.func.attr == "to":
        core = core.func.value  # p.to(tl.float16): describe p
    if isinstance(core, ast.Name):
        lines = sorted({d.stmt.lineno for d in flow.reaching(core) if d.kind in ("assign", "augassign")})  # type: ignore[union-attr]
        where = f" at line {lines[-1]}" if len(lines) == 1 else ""
        return f"`{text}`", f"computed{where} from {origin.source}"
    if isinstance(core, ast.Call) and origin == DOT_RESULT and core is operand:
        return f"`{text}`", "a tl.dot result"
    return f"`{text}`", f"computed from {origin.source}"


def _through_casts(model: ModuleModel, flow: FunctionFlow, node: ast.expr) -> tuple[ast.expr, ast.AST | None]:
    """`node` widened over the casts applied to it (`x.to(dtype)`, `tl.cast(x, dtype)`), and its parent."""
    parent = flow.parents.get(id(node))
    while True:
        if isinstance(parent, ast.Attribute) and parent.attr == "to":
            call = flow.parents.get(id(parent))
            if isinstance(call, ast.Call) and call.func is parent:
                node, parent = call, flow.parents.get(id(call))
                continue
        if isinstance(parent, ast.Call) and model.qualify(parent.func) in CASTS and parent.args and parent.args[0] is node:
            node, parent = parent, flow.parents.get(id(parent))
            continue
        return node, parent


def used_in_registers(model: ModuleModel, flow: FunctionFlow, node: ast.expr, loop: Loop, depth: int = 0) -> bool:
    """Whether the transposed value of `node` is used, inside `loop`, where it has to be in registers in
    the transposed layout: arithmetic, reductions, an accumulation, the first operand of tl.dot. The uses
    where the transpose folds away are not: the second operand or the accumulator of tl.dot (staged or
    kept in the MMA layout), a store, another transpose. Follows local names; a use it cannot see (a
    returned value) counts as not in registers."""
    node, parent = _through_casts(model, flow, node)
    if isinstance(parent, ast.IfExp) and node is not parent.test:
        return used_in_registers(model, flow, parent, loop, depth)
    if isinstance(parent, ast.keyword):  # f(..., acc=x): decided by the call and the keyword
        call = flow.parents.get(id(parent))
        name = model.qualify(call.func) if isinstance(call, ast.Call) else None
        if name in DOTS:
            return parent.arg in FIRST_OPERAND_KEYWORDS
        return not (isinstance(call, ast.Call) and _writes_memory(model, call))
    if isinstance(parent, ast.Call):
        name = model.qualify(parent.func)
        if name in DOTS:
            return bool(parent.args) and parent.args[0] is node and not _discarded(flow, parent)
        return not (_writes_memory(model, parent) or transpose_operand(model, parent) is node)
    if isinstance(parent, ast.Attribute):  # x.T, or x.trans() / x.permute(1, 0): transposed back
        if parent.attr in ("dtype", "shape"):
            return False
        method_call = flow.parents.get(id(parent))
        return not (transpose_operand(model, parent) is node or transpose_operand(model, method_call) is node)
    uses = _assigned_uses(flow, node, parent, loop)
    if uses is not None:
        return depth < 4 and any(used_in_registers(model, flow, use, loop, depth + 1) for use in uses)
    return not isinstance(parent, (ast.Return, ast.Tuple, ast.List))


def _discarded(flow: FunctionFlow, value: ast.expr) -> bool:
    """A value that, through arithmetic and casts, only reaches a local name nothing reads (`dK = tl.dot(dsT,
    q) * scale` whose atomic is commented out): the compiler drops it, and the transpose that fed it."""
    parent = flow.parents.get(id(value))
    while isinstance(parent, (ast.BinOp, ast.UnaryOp)) or isinstance(parent, ast.Attribute) and parent.attr == "to" \
            or isinstance(parent, ast.Call) and parent.func is value:  # `x.to(dtype)`: the attribute, then the call
        value, parent = parent, flow.parents.get(id(parent))
    if not (isinstance(parent, ast.Assign) and parent.value is value and len(parent.targets) == 1
            and isinstance(parent.targets[0], ast.Name)):
        return False
    definition = flow.definition_at(parent, parent.targets[0].id)
    return definition is not None and not flow.uses_of(definition)


def _writes_memory(model: ModuleModel, call: ast.Call) -> bool:
    """A store in any form: `tl.store`, a descriptor's `store` (`desc.store(offs, x)`, also `store_reduce=`), an
    atomic (its value takes the pointer tile's layout). Each converts the value's layout anyway."""
    name = model.qualify(call.func)
    if name is None:
        return isinstance(call.func, ast.Attribute) and call.func.attr == "store"
    return name in STORES or name in NON_IDEMPOTENT_ATOMICS or name in IDEMPOTENT_ATOMICS


def _assigned_uses(flow: FunctionFlow, node: ast.expr, parent: ast.AST | None, loop: Loop) -> list[ast.expr] | None:
    """Where `parent` assigns `node` to a local name (`pT = tl.trans(p)`): the uses, inside `loop`, that this
    assignment reaches (empty where the flow does not show it). None for any other parent."""
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)
            and parent.value is node):
        return None
    definition = flow.definition_at(parent, parent.targets[0].id)
    return [use for use in flow.uses_of(definition) if flow.inside(use, loop)] if definition is not None else []


@condition("transposes-computed-tile", provides=("value", "origin", "loop"), prefilter=mentions_dot,
           applies=calls_dot)
def transposes_computed_tile(ctx: MatchContext) -> Verdict | None:
    """The match is a 2-D transpose, inside a loop of the jit function, of a value computed from a tl.dot
    result (the result itself, a softmax tile, an accumulated state) that changes every iteration, and
    the transposed value is used in registers in that loop: in arithmetic, a reduction, an accumulation or
    as the first operand of tl.dot. Silent for loaded tiles (also after a cast), for arithmetic on loaded
    tiles only, for transposes that only reach a store, the second operand or the accumulator of tl.dot,
    for loop-invariant values (also a value that changes only in an outer loop, transposed inside an inner loop that
    runs tl.dot) and for whatever the analysis cannot follow."""
    node = ctx.ast_node(types=(ast.Call, ast.Attribute))
    function = ctx.function
    operand = transpose_operand(ctx.model, node)
    if operand is None or function is None or function.node is None:
        return None
    flow = flow_of(function.node)
    loops = flow.enclosing_loops(node)  # type: ignore[arg-type]
    if not loops:
        return None
    origin = Origins(ctx.model, flow, set(function.constexprs)).of(operand)
    if origin != DOT_RESULT:
        return None
    loop = next((lp for lp in loops if varies_in(flow, operand, lp)), None)
    if loop is None or loop is not loops[0] and runs_dot(ctx.model, loops[0].body):
        return None  # hoisted out of an inner loop of tl.dot products, the transpose is paid once for all of them
    if not used_in_registers(ctx.model, flow, node, loop):  # type: ignore[arg-type]
        return None
    if refused_in_kernel(ctx.model, function.node, table().newest) or refuses_a_tile(ctx.model, function):
        return None  # no current Triton compiles the kernel (TL103 or TL113 reports it): a layout change is moot
    value, source = _describe_value(flow, operand, origin)
    variables = {"value": value, "origin": source, "loop": describe_loop(loop)}
    if _only_first_operand(ctx.model, flow, node, loop):  # type: ignore[arg-type]
        # Measured apart: a transposed dot-derived tile fed straight into tl.dot's first operand costs less.
        return Verdict(vars={**variables, "measured": evidence.fixture_phrase(FIRST_OPERAND)}, severity="info")
    return Verdict(vars={**variables, "measured": evidence.fixture_phrase(COMPUTED_TILE)})


def _only_first_operand(model: ModuleModel, flow: FunctionFlow, node: ast.expr, loop: Loop, depth: int = 0) -> bool:
    """The transposed value goes, through casts and local names only (`pT = tl.trans(p)`, `pT = pT.to(tl.float16)`),
    into the first operand of a tl.dot at each of its uses in the loop."""
    node, parent = _through_casts(model, flow, node)
    if isinstance(parent, ast.keyword):
        call = flow.parents.get(id(parent))
        return isinstance(call, ast.Call) and model.qualify(call.func) in DOTS and parent.arg in FIRST_OPERAND_KEYWORDS
    uses = _assigned_uses(flow, node, parent, loop)
    if uses is not None:
        return depth < 4 and bool(uses) and all(_only_first_operand(model, flow, use, loop, depth + 1) for use in uses)
    return isinstance(parent, ast.Call) and model.qualify(parent.func) in DOTS and bool(parent.args) \
        and parent.args[0] is node


# ---- the fix ---------------------------------------------------------------------------------------------
def _trans_callee(ctx: MatchContext, node: ast.AST) -> str | None:
    """How this module spells triton.language.trans, preferring the spelling of the flagged call."""
    if isinstance(node, ast.Call) and ctx.model.qualify(node.func) == TRANS:
        return ctx.file.text_of(node.func)
    for alias, target in ctx.model.imports.items():
        if target == TL:
            return f"{alias}.trans"
        if target == TRANS:
            return alias
    if ctx.model.imports.get("triton") == "triton":
        return "triton.language.trans"
    return None


def _has_effects(model: ModuleModel, expr: ast.expr) -> bool:
    for call in (n for n in walk(expr) if isinstance(n, ast.Call)):
        name = model.qualify(call.func) or ""
        attr = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        if any(e in name.rpartition(".")[2] or e in attr for e in EFFECTS):
            return True
        if isinstance(call.func, ast.Name) and not name.startswith(f"{TL}."):
            return True  # a helper: it might store or run atomics
    return False


@fixer("transpose-dot-operands")
def transpose_dot_operands(ctx: MatchContext, verdict: Verdict) -> RawEdits | None:
    """`tl.trans(tl.dot(A, B))` -> `tl.dot(tl.trans(B), tl.trans(A))`, with `tl.trans(tl.trans(X))`
    simplified to `X`. Offered only for a two-argument tl.dot (no accumulator, no input_precision,
    out_dtype or other keyword) whose operands have no side effects, and not when B is itself computed
    from a tl.dot result (its transpose would become the first operand, the costly place)."""
    node = ctx.ast_node(types=(ast.Call, ast.Attribute))
    operand = transpose_operand(ctx.model, node)
    why = "compute the tile in the orientation it is used in (swap the operands of the tl.dot that makes it)"
    if not (isinstance(operand, ast.Call) and ctx.model.qualify(operand.func) == f"{TL}.dot"):
        verdict.notes.append(f"No automatic fix: {why}.")
        return None
    if len(operand.args) != 2 or operand.keywords:
        verdict.notes.append(f"No automatic fix (the tl.dot has an accumulator or extra arguments): {why}.")
        return None
    trans = _trans_callee(ctx, node)  # type: ignore[arg-type]
    function = ctx.function
    if trans is None or function is None or function.node is None:
        return None
    origins = Origins(ctx.model, flow_of(function.node), set(function.constexprs))
    first, second = operand.args
    if _has_effects(ctx.model, first) or _has_effects(ctx.model, second):
        return None
    rewritten = []
    for side in (second, first):  # B^T becomes the first operand, A^T the second
        inner = transpose_operand(ctx.model, side)
        if inner is not None:
            rewritten.append(ctx.file.text_of(inner))
        elif side is second and origins.of(side) == DOT_RESULT:
            verdict.notes.append(f"No automatic fix: swapping the operands would transpose `{ast.unparse(side)}`, "
                                 f"computed from a tl.dot result, into the first operand; {why}.")
            return None
        else:
            rewritten.append(f"{trans}({ctx.file.text_of(side)})")
    start, end = ctx.file.span_of(node)  # type: ignore[arg-type]
    return [(start, end, f"{ctx.file.text_of(operand.func)}({rewritten[0]}, {rewritten[1]})")]
