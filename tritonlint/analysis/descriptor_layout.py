"""The descriptor form of a raw 2-D tile load, for TL003's suggestion: base pointer, strides, block shape,
offsets and bounds read off the pointer arithmetic, the mask and the loop. Where a part cannot be read off
the code the suggestion is no code but a note that says which part, never a placeholder.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field

from tritonlint.analysis.consteval import Evaluator, literal_value
from tritonlint.analysis.flow import FunctionFlow, Loop
from tritonlint.analysis.indexing import (
    PASS_THROUGH,
    Indices,
    broadcast_axis,
    load_pointer,
)
from tritonlint.analysis.host import HostScope, call_bindings, own_nodes
from tritonlint.analysis.kernel import launches_of, not_specialized
from tritonlint.analysis.launches import bind_launch
from tritonlint.analysis.model import JitFunction, ModuleModel
from tritonlint.analysis.triton_names import TL
from tritonlint.source import ParsedFile
from tritonlint.walk import walk

UNKNOWN_TEXT = "..."


@dataclass
class Axis:
    """One axis of a tile's addressing: offset vector, stride, block size, offset and bound (source text)."""
    vector: str = ""  # the offset vector: a name (offs_m) or an expression (`k0 + offs_k`) as its source text
    stride: str = UNKNOWN_TEXT
    block: str = UNKNOWN_TEXT
    offset: str = UNKNOWN_TEXT
    bound: str = UNKNOWN_TEXT
    unit: bool = False  # stride 1: none written, `1`, or a local that holds 1 (`stride_am, stride_ak = 1, K`)
    unit_at_launch: str = ""  # what every launch passes and why it is the unit one (launched_inner_axis)
    unspecialized: bool = False  # the stride is a parameter in the kernel's do_not_specialize: never the constant 1
    bounded_by: frozenset[str] = frozenset()  # the names of the offset that the mask giving `bound` compares
    bound_offset: str | None = None  # `k` of a mask on `k_offs = k + offs_k`: the offset the bound holds for


@dataclass
class Layout:
    """A tensor's tile addressing by rows and columns, as a descriptor would express it."""
    base: str
    rows: Axis = field(default_factory=Axis)
    cols: Axis = field(default_factory=Axis)
    notes: list[str] = field(default_factory=list)
    name: str = ""  # the descriptor's name where the base's own (`descriptor_name`) is taken by another tile


def _names_in(expr: ast.AST) -> set[str]:
    return {n.id for n in walk(expr) if isinstance(n, ast.Name)}


def _text(node: ast.AST) -> str:
    return " ".join(ast.unparse(node).split())


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
                return _terms(flow, value, increments, depth + 1)
    return [expr]


def _axis_term(term: ast.expr) -> tuple[int, ast.expr, ast.expr | None] | None:
    """(axis, vector, stride) of `v[:, None] * s`, `s * v[None, :]` or `v[:, None]` (stride None)."""
    if isinstance(term, ast.Subscript):
        axis = broadcast_axis(term)
        return (axis, term.value, None) if axis is not None else None
    if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
        for vec, stride in ((term.left, term.right), (term.right, term.left)):
            if isinstance(vec, ast.Subscript) and broadcast_axis(vec) is not None:
                return broadcast_axis(vec), vec.value, stride  # type: ignore[return-value]
    return None


def _strip(flow: FunctionFlow, model: ModuleModel, expr: ast.expr, axis: Axis) -> ast.expr:
    """The offset vector under casts, hints and the `% M` wrap-around, following one local name; the
    wrap-around's `M` bounds the axis unless a mask says otherwise (the descriptor zero-fills instead)."""
    for _ in range(6):
        if isinstance(expr, ast.Name):
            value = flow.single_value(expr)
            if value is expr:
                return expr
            expr = value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "to":
            expr = expr.func.value
        elif isinstance(expr, ast.Call) and model.qualify(expr.func) in PASS_THROUGH and expr.args:
            expr = expr.args[0]
        elif isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mod):
            axis.bound = _text(expr.right)
            expr = expr.left
        else:
            return expr
    return expr


def _block_and_offset(flow: FunctionFlow, model: ModuleModel, vector: ast.expr, axis: Axis) -> None:
    parts: list[ast.expr] = []
    stack = [_strip(flow, model, vector, axis)]
    followed = 0
    while stack:
        item = stack.pop()
        if isinstance(item, ast.BinOp) and isinstance(item.op, ast.Add):
            stack += [item.right, item.left]
        elif isinstance(item, ast.Name) and followed < 4 and _holds_arange(flow, model, item):
            followed += 1  # `k_offs = k + offs_k` with `offs_k = tl.arange(0, BLOCK_K)`: the block is BLOCK_K
            stack.append(flow.single_value(item))
        else:
            parts.append(item)
    aranges = [p for p in parts if isinstance(p, ast.Call) and model.qualify(p.func) == f"{TL}.arange"]
    if len(aranges) != 1 or len(aranges[0].args) != 2:
        return
    start, end = aranges[0].args
    axis.block = _text(end) if isinstance(start, ast.Constant) and start.value == 0 else f"{_text(end)} - {_text(start)}"
    rest = [_text(p) for p in parts if p is not aranges[0]]
    axis.offset = " + ".join(rest) if rest else "0"


def _holds_arange(flow: FunctionFlow, model: ModuleModel, name: ast.Name) -> bool:
    """A local assigned once, to an expression with a `tl.arange` in it."""
    value = flow.single_value(name)
    return value is not name and any(isinstance(n, ast.Call) and model.qualify(n.func) == f"{TL}.arange"
                                     for n in walk(value))


def _bounds(flow: FunctionFlow, call: ast.Call, loop: Loop, layout: Layout) -> None:
    mask = next((k.value for k in call.keywords if k.arg == "mask"), call.args[1] if len(call.args) > 1 else None)
    if isinstance(mask, ast.Name):
        mask = _mask_value(flow, mask)
    if mask is None:
        return
    loop_vars = _names_in(loop.target) if isinstance(loop, ast.For) else set()
    for compare in _mask_compares(flow, mask):
        if len(compare.ops) != 1 or not isinstance(compare.ops[0], ast.Lt):
            continue
        bound = compare.comparators[0]
        offset_names = _names_in(compare.left)
        if isinstance(bound, ast.BinOp) and isinstance(bound.op, ast.Sub):
            offset_names |= _names_in(bound.right)  # `offs_n < N - start_n` bounds `start_n + offs_n`
            if _names_in(bound.right) & loop_vars:
                bound = bound.left  # K - k * BLOCK_K: the bound of the whole tensor is K
        left = compare.left.value if isinstance(compare.left, ast.Subscript) and broadcast_axis(compare.left) is not None \
            else compare.left
        for axis in (layout.rows, layout.cols):  # `offs_k[None, :] < K`, or the same sum the pointer adds
            if axis.vector and (axis.vector in _names_in(compare.left) if axis.vector.isidentifier()
                                else _text(left) == axis.vector):
                axis.bound = _text(bound)
                axis.bounded_by = frozenset(offset_names)
            elif axis.vector.isidentifier() and isinstance(left, ast.Name) \
                    and (rest := _other_terms(summed := flow.single_value(left), axis.vector)) is not None:
                # `k_offs = k + offs_k` masked, `offs_k` in the pointer advanced by the loop: a bound for offset `k`
                axis.bound, axis.bound_offset = _text(bound), rest
                axis.bounded_by = frozenset(offset_names | _names_in(summed))


def _other_terms(value: ast.expr, vector: str) -> str | None:
    """The terms of a sum besides the name `vector` (`k` of `k + offs_k`), None unless it is one of them."""
    terms: list[ast.expr] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, ast.BinOp) and isinstance(item.op, ast.Add):
            stack += [item.right, item.left]
        else:
            terms.append(item)
    rest = [_text(t) for t in terms if not (isinstance(t, ast.Name) and t.id == vector)]
    return " + ".join(rest) if len(rest) == len(terms) - 1 and rest else None


def _mask_compares(flow: FunctionFlow, mask: ast.expr, depth: int = 3) -> list[ast.Compare]:
    """The comparisons a mask is made of, also those of the local masks it combines (`m_mask[:, None] &
    n_mask[None, :]` with `m_mask = offs_m < M`)."""
    found = []
    for node in walk(mask):
        if isinstance(node, ast.Compare):
            found.append(node)
        elif isinstance(node, ast.Name) and depth and (value := _mask_value(flow, node)) is not node:
            found += _mask_compares(flow, value, depth - 1)
    return found


def _mask_value(flow: FunctionFlow, name: ast.Name) -> ast.expr:
    """The value of a mask's single reaching assignment, not counting `mask_n = None` (the arm where no lane
    is masked, `if EVEN_N: mask_n = None`, which the tensor's bound covers as well); the name otherwise."""
    values = [d.value if d.kind == "assign" else None for d in flow.reaching(name)]
    masks = [v for v in values if not (isinstance(v, ast.Constant) and v.value is None)]
    return masks[0] if len(masks) == 1 and masks[0] is not None else name


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
    unit = [axis for axis in axes if axis.unit]
    if len(unit) == 1 and not any(_names_in(step) & {a.stride} for a in axes if not a.unit):
        return unit[0], _text(step)  # `ptrs += BLOCK_K` on the contiguous axis
    return None


def _add_offset(axis: Axis, amount: str) -> None:
    axis.offset = amount if axis.offset == "0" else f"{axis.offset} + {amount}"


def _advance(flow: FunctionFlow, increments: list[ast.expr], layout: Layout) -> None:
    """Fold `ptrs += step * stride` into the offset of the axis it moves along, counted in iterations of the
    loop that runs the increment (an outer loop's `a_ptrs += SUB * BK * stride` around an inner loop of loads
    moves by the outer loop's variable); an increment in no loop moves once."""
    for increment in increments:
        found = _split_step(increment, layout)
        owner = next(iter(flow.enclosing_loops(increment)), None)
        if found is None:
            layout.notes.append(f"the axis that the pointer's advance by `{_text(increment)}` each iteration moves "
                                "along")
        else:
            _add_offset(found[0], found[1] if owner is None else _progress(owner, found[1]))


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


def _unit_stride(flow: FunctionFlow, stride: ast.expr | None) -> bool:
    """A stride of 1: none written, `1`, or a local that holds 1 (`stride_am, stride_ak = 1, K`)."""
    value = None if stride is None else flow.single_value(stride)
    return value is None or isinstance(value, ast.Constant) and value.value == 1


def _offsets(flow: FunctionFlow, node: ast.AST, depth: int = 0) -> bool:
    """Whether an expression holds offsets: a subscript, a `tl.arange`, or a local assigned once from one
    (`p_offs = p_start + tl.arange(0, BLOCK_P)`)."""
    return any(isinstance(n, ast.Subscript) or isinstance(n, ast.Call) and _text(n.func).endswith("arange")
               or depth < 4 and isinstance(n, ast.Name) and (value := flow.single_value(n)) is not n
               and _offsets(flow, value, depth + 1)
               for n in walk(node))


def _scaled(flow: FunctionFlow, node: ast.AST) -> bool:
    """A product of offsets and a number other than 0 and 1 (`offs_k[None, :] * 4`, `tl.arange(0, B) * 2`,
    `p_offs * 3` of `p_offs = p_start + tl.arange(0, BLOCK_P)`, `cin[:, None] * (3 * 3)`)."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and any(
        _number(side) not in (None, 0, 1) and _offsets(flow, other)
        for side, other in ((node.left, node.right), (node.right, node.left)))


_LITERALS = Evaluator({}, lambda _: None)  # literal arithmetic only: no names, no calls it could qualify


def _number(node: ast.expr) -> float | None:
    """A number literal, or integer arithmetic on literals (`3 * 3`, a kernel's taps)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, float):
        return node.value
    value = _LITERALS.evaluate(node)
    return value.value if value is not None else None


def _steps(flow: FunctionFlow, term: ast.expr, depth: int = 0) -> bool:
    """Whether an offset term scales its offsets (`_scaled`), also through the locals it reads, each assigned
    once (`k_even = k + tl.arange(0, B // 2) * 2`, `k_odd = k_even + 1`: every second column; `n0 = p_offs * 3`)."""
    if any(_scaled(flow, node) for node in walk(term)):
        return True
    return depth < 4 and any(
        (value := flow.single_value(name)) is not name and _steps(flow, value, depth + 1)
        for name in walk(term) if isinstance(name, ast.Name))


def no_contiguous_axis(flow: FunctionFlow, pointer: ast.expr, indices: Indices) -> bool:
    """Whether a 2-D tile steps by a fixed number of elements other than 1 along one axis (`(offs_k[None, :] * 4 +
    c) * stride_ak`: one component of interleaved quaternions or complex numbers) and the other axis is not
    known to be contiguous (no stride, or 1): a descriptor reads boxes whose last dimension is contiguous, so it
    may not be able to load this tile at all."""
    axes: dict[int, list[ast.expr]] = {}
    for term in _terms(flow, pointer, []):
        index = indices.of(term)
        if len(index.axes) == 1:
            axes.setdefault(next(iter(index.axes)), []).append(term)
    if not any(_steps(flow, term) for terms in axes.values() for term in terms):
        return False
    for terms in axes.values():
        found = _axis_term(terms[0]) if len(terms) == 1 else None
        if found is None or _steps(flow, terms[0]):
            continue
        if _unit_stride(flow, found[2]):
            return False  # `offs_m[:, None] * 64 + offs_k[None, :]`: rows of 64, columns contiguous
    return True


def tile_layout(model: ModuleModel, call: ast.Call, flow: FunctionFlow, loop: Loop, indices: Indices) -> Layout | None:
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
        axis.stride = "1" if stride is None else _text(stride)
        axis.unit = _unit_stride(flow, stride)
        axis.vector = _text(vector)
        _block_and_offset(flow, model, vector, axis)
    _bounds(flow, call, loop, layout)
    base_terms: list[str] = []
    for term in scalar_terms:  # `k_ptrs + start_n * stride_kn`: a step along an axis belongs to its offset
        amounts = [(axis, _amount_along(term, axis)) for axis in (layout.rows, layout.cols)]
        moved = [(axis, amount) for axis, amount in amounts if amount is not None]
        if len(moved) == 1 and base_terms and moved[0][1] != "1" and _bounded_with(moved[0][0], moved[0][1]):
            _add_offset(moved[0][0], moved[0][1])
        else:
            base_terms.append(_text(term))
    layout.base = " + ".join(base_terms)
    _advance(flow, [i for i in increments if indices.of(i).rank == 0], layout)
    for axis in (layout.rows, layout.cols):  # a mask on a sum holds only where the pointer moves by that sum
        if axis.bound_offset is not None and axis.bound_offset != axis.offset:
            axis.bound = UNKNOWN_TEXT
    for axis in (layout.rows, layout.cols):  # an unmasked axis read whole from 0: the block is its extent
        if axis.bound == UNKNOWN_TEXT and axis.offset == "0":
            axis.bound = axis.block
    return layout


def _bounded_with(axis: Axis, amount: str) -> bool:
    """Whether a step of `amount` along the axis may join its offset: not where the mask bounds the offset vector
    alone (`kz * nsy * nsx` with `kj < nsy`: a step to another plane of a 3-D tensor, which the plane's bound does
    not cover, stays in the base)."""
    return not axis.bounded_by or bool(_names_in(ast.parse(amount, mode="eval")) & axis.bounded_by)


def _tl_prefix(file: ParsedFile, model: ModuleModel, call: ast.Call) -> str:
    if isinstance(call.func, ast.Attribute):
        return file.text_of(call.func.value)
    for alias, target in model.imports.items():
        if target == TL:
            return alias
    return "triton.language"


def descriptor_name(base: str) -> str:
    head = base.split("+")[0].strip()
    if not head.isidentifier():
        return "desc"
    for suffix in ("_ptrs", "_ptr", "ptrs", "ptr", "_base"):
        if head.endswith(suffix) and len(head) > len(suffix):
            return f"{head[: -len(suffix)].rstrip('_')}_desc"
    return f"{head}_desc"


def launched_inner_axis(model: ModuleModel, function: JitFunction, layout: Layout) -> None:
    """Where the kernel writes both strides as parameters, the launches may tell which is the tensor's inner
    axis: every launch in the module passes both as strides of one tensor (`k.stride(2)`, `k.stride(3)`), and
    the later axis, contiguous in a tensor of the usual layout, is the same one each time (flash attention's
    K^T tile `offs_d[:, None] * stride_kk + offs_n[None, :] * stride_kn` is a transposed view); the earlier
    of two neighbouring axes where the host made the tensor as a transposed view (`w.t().to(torch.float16)`).
    Strides the kernel's do_not_specialize names are marked: they never become the constant 1."""
    rows, cols = layout.rows, layout.cols
    unspecialized = not_specialized(model, function)
    rows.unspecialized, cols.unspecialized = rows.stride in unspecialized, cols.stride in unspecialized
    params = {param.name for param in function.params}
    if rows.unit or cols.unit or rows.stride not in params or cols.stride not in params:
        return
    inner: set[int] = set()
    passed = ""
    for launch in launches_of(model, function):
        bound = bind_launch(model, launch, function)
        scope = HostScope.of(model, launch.scope)
        of_rows = _stride_axis(bound.values.get(rows.stride), scope)
        of_cols = _stride_axis(bound.values.get(cols.stride), scope)
        if of_rows is None or of_cols is None or of_rows[0] != of_cols[0] or of_rows[1] == of_cols[1]:
            return
        later = int(of_rows[1] < of_cols[1])  # 0: the rows' stride is the later axis
        view = _view_of(scope, of_rows[0])
        if view == "permuted" or view == "swapped" and abs(of_rows[1] - of_cols[1]) != 1:
            return
        contiguous = 1 - later if view == "swapped" else later
        inner.add(contiguous)
        passed = f"`{(of_rows, of_cols)[contiguous][2]}`, " + (
            f"the earlier axis of `{of_rows[0]}`, a transposed view" if view == "swapped"
            else "a later axis than the other stride's")
    if len(inner) == 1:
        axis = (rows, cols)[inner.pop()]
        axis.unit, axis.unit_at_launch = True, passed


def launched_without_unit_axis(model: ModuleModel, function: JitFunction, layout: Layout) -> bool:
    """Every launch in the module passes the tile's two strides as strides of one tensor of known rank, neither of
    its last axis, the tensor not a reordered view (`stride_co, stride_ci, stride_kh, stride_kw = w.stride()` for a
    conv weight's [C_out, C_in] tile): in the usual layout neither stride is 1, so no descriptor box holds the
    tile (a 1x1 kernel aside)."""
    rows, cols = layout.rows, layout.cols
    params = {param.name for param in function.params}
    if rows.unit or cols.unit or rows.stride not in params or cols.stride not in params:
        return False
    read = 0
    for launch in launches_of(model, function):
        bound = bind_launch(model, launch, function)
        scope = HostScope.of(model, launch.scope)
        passed = [bound.values.get(axis.stride) for axis in (rows, cols)]
        if all(isinstance(value, ast.Name) and value.id not in scope.values for value in passed):
            continue  # names of an enclosing function (a launch in a lambda): this launch tells nothing
        axes = [_ranked_stride_axis(value, scope) for value in passed]
        if axes[0] is None or axes[1] is None or axes[0][0] != axes[1][0] or _view_of(scope, axes[0][0]) is not None:
            return False
        rank = axes[0][2]
        if rank < 3 or rank - 1 in (axes[0][1], axes[1][1]):
            return False
        read += 1
    return read > 0


def _ranked_stride_axis(expr: ast.expr | None, scope: HostScope) -> tuple[str, int, int] | None:
    """A stride the host unpacks from a tensor's strides, `a, b, c, d = w.stride()`: the tensor's text, the axis
    and the rank (the number of names); or `w.stride(1)` of a tensor whose shape the host unpacks (`C_out, C_in,
    KH, KW = w.shape`)."""
    if not isinstance(expr, ast.Name) or scope.node is None:
        return None
    unpacked = _unpacked_stride(scope, expr.id)
    if unpacked is not None:
        return unpacked
    found = _stride_axis(expr, scope)
    if found is None or found[1] >= 1000:
        return None
    rank = scope.unpacked_rank(found[0])
    return (found[0], found[1], rank) if rank is not None else None


def _unpacked_stride(scope: HostScope, name: str) -> tuple[str, int, int] | None:
    """For a name the host binds once, by unpacking a tensor's strides (`a, b, c, d = w.stride()`): the
    tensor's text, the axis and the rank (the number of names)."""
    if scope.node is None or len(scope.values.get(name, ())) != 1:
        return None
    for node in own_nodes(scope.node):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple):
            names = [e.id if isinstance(e, ast.Name) else None for e in node.targets[0].elts]
            value = node.value
            if name in names and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                    and value.func.attr == "stride" and not value.args:
                return _text(value.func.value), names.index(name), len(names)
    return None


# Tensor methods that keep the strides of the tensor they are called on (a dtype or device change, a copy in
# the same memory format).
_LAYOUT_KEEPING = frozenset({"to", "half", "float", "bfloat16", "double", "type", "detach", "clone", "cuda",
                             "requires_grad_"})
_SWAPS = frozenset({"t", "T", "mT", "mH", "H"})


def _view_of(scope: HostScope, tensor: str, depth: int = 0) -> str | None:
    """How the host made the tensor named `tensor`, through its single assignment, the calls that pass it as
    a parameter and module functions that return it: "swapped" (two axes exchanged: `.t()`, `.T`, `.mT`, `.transpose(a, b)`), "permuted" (another
    reordering: `.permute(...)`, `.movedim(...)`), or None (not known to be reordered; `.contiguous()` makes
    it dense again)."""
    if not tensor.isidentifier() or depth >= 6:
        return None
    if scope.unbound_parameter(tensor):  # what each call in the module passes, all alike
        return _agreed({_view(caller, bound[tensor], depth + 1) for caller, bound in call_bindings(scope)
                        if tensor in bound})
    value = scope.value_of(tensor)
    return _view(scope, value, depth + 1) if value is not None else None


def _view(scope: HostScope, expr: ast.expr, depth: int) -> str | None:
    while depth < 12:
        depth += 1
        if isinstance(expr, ast.Attribute) and expr.attr in _SWAPS:
            return "swapped"
        if not isinstance(expr, ast.Call):
            return _view_of(scope, expr.id, depth) if isinstance(expr, ast.Name) else None
        method = expr.func.attr if isinstance(expr.func, ast.Attribute) else None
        if method in _SWAPS or method in ("transpose", "swapaxes", "swapdims"):
            return "swapped"
        if method in ("permute", "movedim", "moveaxis"):
            return "permuted"
        if method in _LAYOUT_KEEPING and isinstance(expr.func, ast.Attribute):
            expr = expr.func.value
            continue
        function = scope.function_def(expr.func.id) if isinstance(expr.func, ast.Name) else None
        if function is None:
            return None
        return _agreed({_view(HostScope.of(scope.model, function), node.value, depth)
                        for node in own_nodes(function) if isinstance(node, ast.Return) and node.value is not None})
    return None


def _agreed(views: set[str | None]) -> str | None:
    """The one view every way of making a tensor gives; where they differ and one reorders it, "permuted" (no
    claim about its contiguous axis)."""
    return views.pop() if len(views) == 1 else "permuted" if views - {None} else None


def _stride_axis(expr: ast.expr | None, scope: HostScope) -> tuple[str, int, str] | None:
    """`x.stride(3)` or `x.stride()[3]` (a local holding it followed once), or a name unpacked from
    `x.stride()`: the tensor's text, the axis (a negative one counted from past any positive one) and the
    call's text."""
    if isinstance(expr, ast.Name):
        unpacked = _unpacked_stride(scope, expr.id)
        if unpacked is not None:
            return unpacked[0], unpacked[1], f"{unpacked[0]}.stride()[{unpacked[1]}]"
        expr = scope.value_of(expr.id)
    call, index = expr, None
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Call) and not expr.value.args:
        call, index = expr.value, expr.slice
    elif isinstance(expr, ast.Call) and len(expr.args) == 1:
        index = expr.args[0]
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "stride"):
        return None
    axis = literal_value(index)
    if type(axis) is not int:
        return None
    return _text(call.func.value), axis if axis >= 0 else 1000 + axis, _text(expr)  # type: ignore[arg-type]


def _unknown_parts(layout: Layout, outer: Axis, inner: Axis, loop: Loop, names: set[str],
                   base_names: set[str]) -> list[str]:
    """What the descriptor needs that the code does not say, in words."""
    missing = []
    for axis, which in ((outer, "first"), (inner, "second")):
        about = f" (`{axis.vector}`)" if axis.vector else ""
        if axis.bound == UNKNOWN_TEXT:
            missing.append(f"the tensor's extent along its {which} dimension, which no mask on the offsets{about} bounds")
        if axis.block == UNKNOWN_TEXT:
            missing.append(f"the block size along the {which} dimension (its offsets{about} are not one tl.arange)")
        if axis.offset == UNKNOWN_TEXT:
            missing.append(f"the tile's offset along the {which} dimension at each iteration of the loop")
    missing.extend(layout.notes)
    in_loop = sorted(names & _stored_in(loop))
    if in_loop:
        missing.append(f"{', '.join(f'`{name}`' for name in in_loop)}, assigned inside the loop, where the "
                       "descriptor is made before it")
    loop_vars = _names_in(loop.target) if isinstance(loop, ast.For) else set()
    for what, used in (("a base", base_names), ("a shape", names - base_names)):
        moving = sorted(used & loop_vars)  # `Q_ptr + h * stride_qh` in `for h`, or a mask `rk < k` counting down
        if moving:
            missing.append(f"{what} that stays fixed over the loop (it moves with "
                           f"{', '.join(f'`{name}`' for name in moving)}, the loop's variable)")
    return missing


def _outermost_invariant(loop: Loop, outer: Sequence[Loop], names: set[str]) -> Loop:
    """The outermost of the loops around `loop` (innermost first) over which none of `names` changes, so that
    the descriptor is made once: above a persistent kernel's tile loop, not inside it."""
    chosen = loop
    for candidate in outer:
        if names & (_stored_in(candidate) | (_names_in(candidate.target) if isinstance(candidate, ast.For) else set())):
            break
        chosen = candidate
    return chosen


def _stored_in(loop: Loop) -> set[str]:
    """The names a loop's body assigns."""
    return {n.id for stmt in loop.body for n in walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def descriptor_edits(file: ParsedFile, model: ModuleModel, call: ast.Call, loop: Loop, layout: Layout,
                     outer_loops: Sequence[Loop] = ()) -> tuple[list[tuple[int, int, str]], list[str]]:
    """The edits that show the descriptor form (its creation before the loop, or before the outermost loop
    around it that leaves its arguments unchanged, at that loop's indentation, and its load in place of the
    tl.load) and the caveats that come with it; no edits, and a note naming what is missing, when a part of
    the descriptor cannot be read off the code. `outer_loops`: the loops around `loop`, innermost first."""
    prefix = _tl_prefix(file, model, call)
    desc = layout.name or descriptor_name(layout.base)
    rows, cols = layout.rows, layout.cols
    # TMA needs the last dimension contiguous: a tile read as a transposed view (unit stride along its rows)
    # is described in the tensor's own layout and transposed after the load.
    transposed = rows.unit and not cols.unit
    outer, inner = (cols, rows) if transposed else (rows, cols)
    arguments = (f"{layout.base}, shape=[{outer.bound}, {inner.bound}], strides=[{outer.stride}, {inner.stride}], "
                 f"block_shape=[{outer.block}, {inner.block}]")
    known = (f"strides [{outer.stride}, {inner.stride}], block shape [{outer.block}, {inner.block}], "
             f"offsets [{outer.offset}, {inner.offset}]").replace(UNKNOWN_TEXT, "?")
    make = f"{desc} = {prefix}.make_tensor_descriptor({arguments})"
    try:
        made = ast.parse(make).body[0].value  # type: ignore[attr-defined]
        names, base_names = _names_in(made) - {prefix.split(".")[0]}, _names_in(made.args[0])
    except SyntaxError:  # an unknown part (`...`) still parses; this is only for odd base expressions
        names, base_names = set(), set()
    if inner.unspecialized:
        return [], [f"no descriptor code is suggested, since `{inner.stride}`, the stride of the dimension a "
                    "descriptor needs contiguous, is in the kernel's do_not_specialize: it never becomes the "
                    "constant 1 a descriptor's last stride must be"]
    missing = _unknown_parts(layout, outer, inner, loop, names, base_names)
    if missing:
        return [], [f"no descriptor code is suggested, since the code does not give {'; '.join(missing)} "
                    f"(what it gives for `{layout.base}`: {known})"]
    above = _outermost_invariant(loop, outer_loops, names) if names else loop
    make = file.lines.indentation(above.lineno) + make + "\n"  # the loop's own indentation, tabs or spaces
    load = f"{desc}.load([{outer.offset}, {inner.offset}])"
    line_start = file.lines.starts[above.lineno - 1]
    start, end = file.span_of(call)
    notes = []
    if inner.unit_at_launch:
        notes.append(f"TMA needs the last dimension contiguous: this takes `{inner.stride}` for 1: the launches "
                     f"pass it {inner.unit_at_launch}")
    if not inner.unit:
        notes.append(f"TMA needs the last dimension contiguous: this assumes `{inner.stride}` is 1 "
                     "(otherwise describe the transposed view and tl.trans the loaded tile)")
    other = next((k.value for k in call.keywords if k.arg == "other"), None)
    if other is not None and not (isinstance(other, ast.Constant) and other.value == 0):
        notes.append(f"the descriptor fills out-of-bounds elements with zeros, not `{_text(other)}`")
    return [(line_start, line_start, make), (start, end, f"{prefix}.trans({load})" if transposed else load)], notes
