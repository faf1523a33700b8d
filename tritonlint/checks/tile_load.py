"""TL003: a raw 2-D block-tile `tl.load` (pointer arithmetic `base + rows[:, None] * s0 + cols[None, :] * s1`)
in a loop that feeds tl.dot, on a target with TMA (sm_90 and newer).

Only regular tiles are reported: every offset must be affine in program ids, aranges, loop indices and
scalar arguments. Offsets that come from another load (paged-KV block tables, MoE token lists, varlen
sequence starts) or from anything the analysis cannot follow keep the rule silent.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from tritonlint.checks.common import TL
from tritonlint.checks.flow import Definition, FunctionFlow, Loop, flow_of
from tritonlint.checks.transpose import DOTS, describe_loop
from tritonlint.engine import MatchContext
from tritonlint.model import ModuleModel
from tritonlint.registry import Verdict, condition, fixer

LOAD = f"{TL}.load"
MIN_TARGET = 90  # TMA tensor descriptors: Hopper and newer
PASS_THROUGH = frozenset(f"{TL}.{n}" for n in ("multiple_of", "max_contiguous", "cast"))
SCALAR_CALLS = frozenset({f"{TL}.program_id", f"{TL}.num_programs", f"{TL}.cdiv", f"{TL}.minimum", f"{TL}.maximum",
                          "triton.cdiv"})
BUILTIN_SCALAR_CALLS = frozenset({"min", "max"})
# What hands a loaded tile to tl.dot unchanged in content.
PASS_METHODS = frozenset({"to", "trans", "permute", "reshape", "view"})
PASS_FUNCTIONS = frozenset(f"{TL}.{n}" for n in ("cast", "trans", "permute", "reshape", "view"))


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
                index = SCALAR  # strides, sizes, base pointers; a tensor argument of a helper has rank 0 here too
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

    def _loop_index(self, loop: ast.AST) -> Index:
        """A loop index is a scalar, regular when its bounds are (a bound read from memory is not)."""
        if isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call):
            parts = [self.of(a) for a in loop.iter.args]
            if all(p.regular and not p.rank for p in parts):
                return SCALAR
        return IRREGULAR


def broadcast_axis(expr: ast.Subscript) -> int | None:
    """0 for `v[:, None]`, 1 for `v[None, :]`, None otherwise."""
    if not isinstance(expr.slice, ast.Tuple) or len(expr.slice.elts) != 2:
        return None
    pattern = tuple("s" if isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None
                    else "n" if isinstance(e, ast.Constant) and e.value is None else "?" for e in expr.slice.elts)
    return {("s", "n"): 0, ("n", "s"): 1}.get(pattern)


def load_pointer(call: ast.Call) -> ast.expr | None:
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == "pointer"), None)


def _names_in(expr: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}


def _tile_source(model: ModuleModel, expr: ast.expr) -> ast.expr:
    """`expr` under the wrappers that hand a tile to tl.dot unchanged in content: casts, transposes,
    reshapes."""
    while True:
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and model.qualify(expr.func) is None \
                and expr.func.attr in PASS_METHODS:
            expr = expr.func.value
        elif isinstance(expr, ast.Call) and model.qualify(expr.func) in PASS_FUNCTIONS and expr.args:
            expr = expr.args[0]
        elif isinstance(expr, ast.Attribute) and expr.attr == "T":
            expr = expr.value
        else:
            return expr


def feeds_dot(model: ModuleModel, flow: FunctionFlow, load: ast.Call, loop: Loop) -> bool:
    """Whether the loaded tile goes straight to an operand (not the accumulator) of a tl.dot in `loop`,
    written into the call or through local names, with only casts, transposes and reshapes on the way.
    A tile that is first transformed in registers (dequantised, normalised, rotated, masked) is consumed
    there, where a descriptor load has nothing to offer."""
    operands = [_tile_source(model, arg) for n in ast.walk(loop)
                if isinstance(n, ast.Call) and model.qualify(n.func) in DOTS for arg in n.args[:2]]
    if any(operand is load for operand in operands):
        return True
    stmt = flow.statement_of(load)
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and _tile_source(model, stmt.value) is load):
        return False
    pending, seen = [flow.definition_at(stmt, stmt.targets[0].id)], set()
    while pending:
        definition = pending.pop()
        if definition is None or id(definition) in seen:
            continue
        seen.add(id(definition))
        for use in flow.uses_of(definition):
            if not flow.inside(use, loop):
                continue
            if any(operand is use for operand in operands):
                return True
            parent = flow.statement_of(use)
            if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name) \
                    and _tile_source(model, parent.value) is use:
                pending.append(flow.definition_at(parent, parent.targets[0].id))
    return False


def _analysis(ctx: MatchContext) -> tuple[ast.Call, FunctionFlow, Loop, Indices] | None:
    call = ctx.ast_node(types=(ast.Call,))
    function = ctx.function
    if not isinstance(call, ast.Call) or function is None or function.node is None:
        return None
    if ctx.model.qualify(call.func) != LOAD:
        return None
    pointer = load_pointer(call)
    flow = flow_of(function.node)
    loops = flow.enclosing_loops(call)
    if pointer is None or not loops:
        return None
    indices = Indices(ctx.model, flow, set(function.constexprs))
    index = indices.of(pointer)
    if index.rank != 2 or index.axes != frozenset({0, 1}) or not index.regular:
        return None
    return call, flow, loops[0], indices


@condition("raw-2d-tile-load", provides=("tile", "loop", "target"))
def raw_2d_tile_load(ctx: MatchContext) -> Verdict | None:
    """The match is a tl.load of a regular 2-D block tile (pointer offsets broadcast along both axes,
    affine in program ids, aranges, loop indices and scalars, nothing gathered) inside a loop, and the tile
    feeds an operand of a tl.dot in that loop. Silent unless the configured target is sm_90 or newer."""
    if ctx.target is None or ctx.target < MIN_TARGET:
        return None
    found = _analysis(ctx)
    if found is None:
        return None
    call, flow, loop, indices = found
    if not feeds_dot(ctx.model, flow, call, loop):
        return None
    layout = tile_layout(ctx, call, flow, loop, indices)
    tile = f"`{layout.base}` [{layout.rows.block}, {layout.cols.block}]" if layout else "a 2-D tile"
    return Verdict(vars={"tile": tile, "loop": describe_loop(loop), "target": f"sm_{ctx.target}"},
                   data={"layout": layout})


# ---- the descriptor form, for the suggestion -------------------------------------------------------------
UNKNOWN_TEXT = "..."


@dataclass
class Axis:
    vector: str = ""  # the offset vector's name, e.g. offs_m
    stride: str = UNKNOWN_TEXT
    block: str = UNKNOWN_TEXT
    offset: str = UNKNOWN_TEXT
    bound: str = UNKNOWN_TEXT


@dataclass
class Layout:
    base: str
    rows: Axis = field(default_factory=Axis)
    cols: Axis = field(default_factory=Axis)
    notes: list[str] = field(default_factory=list)


def _text(node: ast.AST) -> str:
    return " ".join(ast.unparse(node).split())


def _single_value(flow: FunctionFlow, name: ast.Name) -> ast.expr | None:
    defs = flow.reaching(name)
    if len(defs) == 1:
        (definition,) = defs
        if definition.kind == "assign":
            return definition.value
    return None


def _terms(flow: FunctionFlow, expr: ast.expr, increments: list[ast.expr], depth: int = 0) -> list[ast.expr]:
    """The additive terms of a pointer expression, following local names that are sums; `a_ptrs += d`
    definitions reaching the use are collected in `increments`."""
    if depth > 8:
        return [expr]
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _terms(flow, expr.left, increments, depth + 1) + _terms(flow, expr.right, increments, depth + 1)
    if isinstance(expr, ast.Name):
        defs = flow.reaching(expr)
        assigns = [d for d in defs if d.kind == "assign"]
        augs = [d for d in defs if d.kind == "augassign"]
        if len(assigns) == 1 and len(assigns) + len(augs) == len(defs) and \
                all(isinstance(d.stmt.op, ast.Add) for d in augs):  # type: ignore[union-attr]
            value = assigns[0].value
            if isinstance(value, (ast.BinOp, ast.Name)):
                increments.extend(d.value for d in augs)  # type: ignore[misc]
                return _terms(flow, value, increments, depth + 1)  # type: ignore[arg-type]
    return [expr]


def _axis_term(term: ast.expr) -> tuple[int, ast.expr, str] | None:
    """(axis, vector, stride) of `v[:, None] * s`, `s * v[None, :]` or `v[:, None]`."""
    if isinstance(term, ast.Subscript):
        axis = broadcast_axis(term)
        return (axis, term.value, "1") if axis is not None else None
    if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
        for vec, stride in ((term.left, term.right), (term.right, term.left)):
            if isinstance(vec, ast.Subscript) and broadcast_axis(vec) is not None:
                return broadcast_axis(vec), vec.value, _text(stride)  # type: ignore[return-value]
    return None


def _strip(flow: FunctionFlow, model: ModuleModel, expr: ast.expr) -> ast.expr:
    """The offset vector under casts, hints and the `% M` wrap-around, following one local name."""
    for _ in range(6):
        if isinstance(expr, ast.Name):
            value = _single_value(flow, expr)
            if value is None:
                return expr
            expr = value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "to":
            expr = expr.func.value
        elif isinstance(expr, ast.Call) and model.qualify(expr.func) in PASS_THROUGH and expr.args:
            expr = expr.args[0]
        elif isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mod):
            expr = expr.left
        else:
            return expr
    return expr


def _block_and_offset(flow: FunctionFlow, model: ModuleModel, vector: ast.expr, axis: Axis) -> None:
    parts: list[ast.expr] = []
    stack = [_strip(flow, model, vector)]
    while stack:
        item = stack.pop()
        if isinstance(item, ast.BinOp) and isinstance(item.op, ast.Add):
            stack += [item.right, item.left]
        else:
            parts.append(item)
    aranges = [p for p in parts if isinstance(p, ast.Call) and model.qualify(p.func) == f"{TL}.arange"]
    if len(aranges) != 1 or len(aranges[0].args) != 2:
        return
    start, end = aranges[0].args
    axis.block = _text(end) if isinstance(start, ast.Constant) and start.value == 0 else f"{_text(end)} - {_text(start)}"
    rest = [_text(p) for p in parts if p is not aranges[0]]
    axis.offset = " + ".join(rest) if rest else "0"


def _bounds(flow: FunctionFlow, call: ast.Call, loop: Loop, layout: Layout) -> None:
    mask = next((k.value for k in call.keywords if k.arg == "mask"), call.args[1] if len(call.args) > 1 else None)
    if isinstance(mask, ast.Name):
        mask = _single_value(flow, mask) or mask
    if mask is None:
        return
    loop_vars = _names_in(loop.target) if isinstance(loop, ast.For) else set()
    for compare in (n for n in ast.walk(mask) if isinstance(n, ast.Compare)):
        if len(compare.ops) != 1 or not isinstance(compare.ops[0], ast.Lt):
            continue
        bound = compare.comparators[0]
        if isinstance(bound, ast.BinOp) and isinstance(bound.op, ast.Sub) and _names_in(bound.right) & loop_vars:
            bound = bound.left  # K - k * BLOCK_K: the bound of the whole tensor is K
        for axis in (layout.rows, layout.cols):
            if axis.vector and axis.vector in _names_in(compare.left):
                axis.bound = _text(bound)


def _amount_along(step: ast.expr, axis: Axis) -> str | None:
    """`n` when `step` is `n * stride` (or `stride * n`, or `stride` alone) for the axis' stride."""
    if _text(step) == axis.stride:
        return "1"
    if isinstance(step, ast.BinOp) and isinstance(step.op, ast.Mult):
        if _text(step.right) == axis.stride:
            return _text(step.left)
        if _text(step.left) == axis.stride:
            return _text(step.right)
    return None


def _split_step(step: ast.expr, layout: Layout) -> tuple[Axis, str] | None:
    """The axis a scalar pointer step moves along and by how many elements, when the strides say so."""
    axes = (layout.rows, layout.cols)
    for axis in axes:
        amount = _amount_along(step, axis)
        if amount is not None:
            return axis, amount
    unit = [axis for axis in axes if axis.stride == "1"]
    if len(unit) == 1 and not any(_names_in(step) & {a.stride} for a in axes if a.stride != "1"):
        return unit[0], _text(step)  # `ptrs += BLOCK_K` on the contiguous axis
    return None


def _add_offset(axis: Axis, amount: str) -> None:
    axis.offset = amount if axis.offset == "0" else f"{axis.offset} + {amount}"


def _advance(increments: list[ast.expr], loop: Loop, layout: Layout) -> None:
    """Fold `ptrs += step * stride` into the offset of the axis it moves along."""
    for increment in increments:
        found = _split_step(increment, layout)
        if found is None:
            layout.notes.append(f"the pointer also advances by `{_text(increment)}` each iteration")
        else:
            _add_offset(found[0], _progress(loop, found[1]))


def _progress(loop: Loop, amount: str) -> str:
    """How far `amount` per iteration has moved by the current iteration of `loop`."""
    if not isinstance(loop, ast.For) or not isinstance(loop.target, ast.Name) or not isinstance(loop.iter, ast.Call):
        return UNKNOWN_TEXT
    var, args = loop.target.id, loop.iter.args
    starts_at_zero = len(args) == 1 or (isinstance(args[0], ast.Constant) and args[0].value == 0)
    if not starts_at_zero or not args:
        return UNKNOWN_TEXT
    if len(args) <= 2:
        return var if amount == "1" else f"{var} * {amount}"
    return var if _text(args[2]) == amount else UNKNOWN_TEXT


def tile_layout(ctx: MatchContext, call: ast.Call, flow: FunctionFlow, loop: Loop, indices: Indices) -> Layout | None:
    """Base pointer, strides, block shape, offsets and bounds of the tile, with `...` where unknown."""
    increments: list[ast.expr] = []
    terms = _terms(flow, load_pointer(call), increments)  # type: ignore[arg-type]
    scalar_terms: list[ast.expr] = []
    axes = {}
    for term in terms:
        index = indices.of(term)
        if not index.axes:
            scalar_terms.append(term)
            continue
        found = _axis_term(term)
        if found is None or found[0] in axes:
            return None
        axes[found[0]] = found
    if set(axes) != {0, 1} or not scalar_terms:
        return None
    layout = Layout("")
    for number, axis in ((0, layout.rows), (1, layout.cols)):
        _, vector, stride = axes[number]
        axis.stride = stride
        axis.vector = vector.id if isinstance(vector, ast.Name) else ""
        _block_and_offset(flow, ctx.model, vector, axis)
    base_terms = []
    for term in scalar_terms:  # `k_ptrs + start_n * stride_kn`: a step along an axis belongs to its offset
        amounts = [(axis, _amount_along(term, axis)) for axis in (layout.rows, layout.cols)]
        moved = [(axis, amount) for axis, amount in amounts if amount is not None]
        if len(moved) == 1 and base_terms and moved[0][1] != "1":
            _add_offset(moved[0][0], moved[0][1])
        else:
            base_terms.append(_text(term))
    layout.base = " + ".join(base_terms)
    _advance([i for i in increments if indices.of(i).rank == 0], loop, layout)
    _bounds(flow, call, loop, layout)
    return layout


def _tl_prefix(ctx: MatchContext, call: ast.Call) -> str:
    if isinstance(call.func, ast.Attribute):
        return ctx.file.text_of(call.func.value)
    for alias, target in ctx.model.imports.items():
        if target == TL:
            return alias
    return "triton.language"


def _descriptor_name(base: str) -> str:
    head = base.split("+")[0].strip()
    if not head.isidentifier():
        return "desc"
    for suffix in ("_ptrs", "_ptr", "ptrs", "ptr", "_base"):
        if head.endswith(suffix) and len(head) > len(suffix):
            return f"{head[: -len(suffix)].rstrip('_')}_desc"
    return f"{head}_desc"


@fixer("tensor-descriptor-suggestion")
def tensor_descriptor_suggestion(ctx: MatchContext, verdict: Verdict):
    """Shows the load through a TMA tensor descriptor: `desc = tl.make_tensor_descriptor(base, shape=...,
    strides=..., block_shape=...)` before the loop and `desc.load([off_m, off_k])` in place of the
    tl.load, with names taken from the code and `...` where they cannot be inferred. Display only."""
    layout: Layout | None = verdict.data.get("layout")
    call = ctx.ast_node(types=(ast.Call,))
    found = _analysis(ctx)
    if layout is None or not isinstance(call, ast.Call) or found is None:
        return None
    loop = found[2]
    prefix = _tl_prefix(ctx, call)
    desc = _descriptor_name(layout.base)
    rows, cols = layout.rows, layout.cols
    indent = " " * loop.col_offset
    make = (f"{indent}{desc} = {prefix}.make_tensor_descriptor({layout.base}, shape=[{rows.bound}, {cols.bound}], "
            f"strides=[{rows.stride}, {cols.stride}], block_shape=[{rows.block}, {cols.block}])\n")
    line_start = ctx.file.lines.starts[loop.lineno - 1]
    start, end = ctx.file.span_of(call)
    notes = list(layout.notes)
    if cols.stride != "1":
        notes.append(f"TMA needs the last dimension contiguous: this assumes `{cols.stride}` is 1 "
                     "(otherwise describe the transposed view and tl.trans the loaded tile)")
    other = next((k.value for k in call.keywords if k.arg == "other"), None)
    if other is not None and not (isinstance(other, ast.Constant) and other.value == 0):
        notes.append(f"the descriptor fills out-of-bounds elements with zeros, not `{_text(other)}`")
    if notes:
        verdict.notes.append("Descriptor form: " + "; ".join(notes) + ".")
    return [(line_start, line_start, make), (start, end, f"{desc}.load([{rows.offset}, {cols.offset}])")]
