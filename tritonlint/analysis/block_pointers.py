"""The tensor-descriptor rewrite of a block pointer that is only built, loaded or stored through and advanced:

    p = tl.make_block_ptr(base, (M, N), (s0, 1), (o0, o1), (BM, BN), (1, 0))
    for ...:
        x = tl.load(p, boundary_check=(0, 1))
        p = tl.advance(p, (0, BN))

becomes a descriptor made where the block pointer was, with its offsets kept in local names:

    p = tl.make_tensor_descriptor(base, shape=[M, N], strides=[s0, 1], block_shape=[BM, BN])
    p_off0, p_off1 = o0, o1
    for ...:
        x = p.load([p_off0, p_off1])
        p_off1 += BN

The names track the block pointer's offsets on every path, since the pointer changes only where they do. A
descriptor bounds-checks every dimension and reads zeros out of bounds (what `boundary_check` with zero
padding does; without it, out-of-bounds lanes were undefined) and never writes out of bounds. Refused: any
other use of the name (handed to a helper, a second definition, `tl.advance` inside an expression), a last
stride that is not the literal 1 (a descriptor's innermost dimension is contiguous), `padding_option="nan"`,
load or store options a descriptor does not take. `p.type.element_ty` becomes `p.dtype`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from tritonlint.analysis.flow import FunctionFlow, bind_call
from tritonlint.analysis.model import ModuleModel
from tritonlint.analysis.triton_names import TL

MAKE = f"{TL}.make_block_ptr"
ADVANCE = f"{TL}.advance"
_FIELDS = ("base", "shape", "strides", "offsets", "block_shape", "order")
_LOAD_OPTIONS = {"boundary_check"}


@dataclass
class Rewrite:
    """The edits that rewrite a block pointer's use, and the line to add after a statement."""
    edits: list[tuple[ast.AST, str]]  # node -> its replacement text
    after: tuple[ast.Assign, str]  # the statement after which a line is added (same indentation), and the line


def _arguments(call: ast.Call) -> dict[str, ast.expr] | None:
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    found = dict(zip(_FIELDS, call.args))
    for keyword in call.keywords:
        if keyword.arg not in _FIELDS or keyword.arg in found:
            return None
        found[keyword.arg] = keyword.value
    return found if set(found) >= set(_FIELDS[:5]) else None


def _elements(expr: ast.expr | None, rank: int | None = None) -> list[ast.expr] | None:
    if not isinstance(expr, (ast.Tuple, ast.List)) or any(isinstance(e, ast.Starred) for e in expr.elts):
        return None
    return expr.elts if rank is None or len(expr.elts) == rank else None


def _atom(text: str, node: ast.expr) -> str:
    return text if isinstance(node, (ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.Subscript)) else f"({text})"


@dataclass
class _FunctionIndex:
    """What every rewrite in one function looks up, from one walk of it (a kernel may build many block
    pointers, and each is judged on its own)."""

    assigns: dict[int, ast.Assign]  # id of an assigned value -> the first assignment of it, in ast.walk order
    taken: set[str]  # the parameters and every name the function mentions
    parents: dict[int, ast.AST]
    names: dict[str, list[ast.Name]]  # each name's nodes, in ast.walk order


def _index(model: ModuleModel, function: ast.FunctionDef) -> _FunctionIndex:
    return model.memoized(("block-pointer-index", id(function)), lambda: _build_index(function))


def _build_index(function: ast.FunctionDef) -> _FunctionIndex:
    assigns: dict[int, ast.Assign] = {}
    names: dict[str, list[ast.Name]] = {}
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(function):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, ast.Assign):
            assigns.setdefault(id(node.value), node)
        elif isinstance(node, ast.Name):
            names.setdefault(node.id, []).append(node)
    taken = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)} | set(names)
    return _FunctionIndex(assigns, taken, parents, names)


def call_of(model: ModuleModel, function: ast.FunctionDef, callee: ast.expr) -> ast.Call | None:
    """The call whose callee expression is `callee`, in `function`."""
    parent = _index(model, function).parents.get(id(callee))
    return parent if isinstance(parent, ast.Call) and parent.func is callee else None


@dataclass(frozen=True)
class BlockPointerUse:
    """How a kernel uses the block pointer one `tl.make_block_ptr(...)` builds: what the rewrite note says."""
    loaded: bool
    stored: bool
    advanced: bool  # also where it is handed to a helper, which may move it
    handed: bool  # handed to a helper, which may load or store through it
    contiguous_last: bool  # the last stride is the literal 1 (a descriptor's innermost dimension must be)
    transposed: bool  # `order` names another dimension than the last as the fastest (`(0, 1)`: a K^T view)
    one_wide: bool  # the block's last dimension is the literal 1: fewer than the 16 bytes a descriptor's block needs
    typed: bool  # `p.type.element_ty` is read: a descriptor spells it `desc.dtype`
    hoistable: bool  # made inside a loop from what the loop leaves unchanged, its offsets aside


def block_pointer_use(model: ModuleModel, function: ast.FunctionDef, make: ast.Call) -> BlockPointerUse | None:
    """The loads, stores and advances of the name `make` is assigned to, in `function`; None where the block
    pointer is not assigned to one name (passed on, built inline)."""
    assign = _index(model, function).assigns.get(id(make))
    if assign is None or len(assign.targets) != 1 or not isinstance(assign.targets[0], ast.Name):
        return None
    uses: set[str] = set()  # the loads, stores and advances it reaches; a helper it is handed to may move it
    # The name, the names it is copied to (`curr_k = K_block_ptr`, then loads of curr_k) and the parameters of the
    # module's jit helpers it is passed to, each in its function.
    pending: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]] = [(function, assign.targets[0].id)]
    seen: set[tuple[int, str]] = set()
    while pending:
        scope, pointer = pending.pop()
        if (id(scope), pointer) in seen or len(seen) > 32:
            continue
        seen.add((id(scope), pointer))
        index = _index(model, scope)  # type: ignore[arg-type]
        for node in index.names.get(pointer, []):
            if not isinstance(node.ctx, ast.Load):
                continue
            value: ast.expr = node
            parent = index.parents.get(id(node))
            # An advance is the same block pointer moved: followed as the name is (`pk = p.advance(...)` then
            # loads of pk, `tl.load(tl.advance(p, d))`).
            moved: ast.Call | None = None
            if isinstance(parent, ast.Attribute) and parent.attr == "advance":
                call = index.parents.get(id(parent))
                moved = call if isinstance(call, ast.Call) and call.func is parent else None
            elif isinstance(parent, ast.Call) and model.qualify(parent.func) == ADVANCE and parent.args \
                    and parent.args[0] is node:
                moved = parent
            if moved is not None:
                uses.add(ADVANCE)
                value, parent = moved, index.parents.get(id(moved))
            if _element_type(index, node) is not None:
                uses.add("typed")
            if isinstance(parent, ast.Assign) and parent.value is value:
                targets = [t.id for t in parent.targets if isinstance(t, ast.Name)]
                if len(targets) != len(parent.targets):
                    uses |= {ADVANCE, "helper"}  # copied into a tuple or an attribute: not followed
                pending.extend((scope, t) for t in targets)
            elif isinstance(parent, ast.Call) and (value in parent.args or any(k.value is value for k in parent.keywords)):
                name = model.qualify(parent.func)
                helper = model.defined_once(name) if name is not None else None
                body = helper.node if helper is not None else None
                parameter = next((p for p, a in bind_call(body, parent) if a is value), None) if body else None
                if body is not None and parameter is not None:
                    uses.add(ADVANCE)  # the helper may move it
                    if not isinstance(index.parents.get(id(parent)), ast.Expr):
                        uses.add("helper")  # what it returns (perhaps the pointer) is not followed
                    pending.append((body, parameter))
                elif name not in (f"{TL}.load", f"{TL}.store", ADVANCE):
                    if not (name or "").startswith(f"{TL}."):
                        uses |= {ADVANCE, "helper"}  # a helper, not a builtin of triton.language (which moves nothing)
                elif parent.args and parent.args[0] is value:
                    uses.add(name)
    args = _arguments(make)
    strides = _elements(args["strides"]) if args is not None else None
    block = _elements(args.get("block_shape")) if args is not None else None
    order = _elements(args.get("order")) if args is not None else None
    fastest = order[0] if order else None
    contiguous_last = _literal_one(strides[-1] if strides else None)
    # With a last stride of 1 the memory layout is row-major whatever `order` says (a mislabelled hint); so is a
    # block one element long in the dimension `order` calls the fastest (`block_shape=(1, BLOCK_D), order=(0, 1)`).
    transposed = strides is not None and isinstance(fastest, ast.Constant) and type(fastest.value) is int \
        and fastest.value != len(strides) - 1 and not contiguous_last \
        and not (block is not None and 0 <= fastest.value < len(block) and _literal_one(block[fastest.value]))
    return BlockPointerUse(f"{TL}.load" in uses, f"{TL}.store" in uses, ADVANCE in uses, "helper" in uses,
                           contiguous_last, transposed, _literal_one(block[-1] if block else None), "typed" in uses,
                           _hoistable(_index(model, function), make, args))


def _hoistable(index: _FunctionIndex, make: ast.Call, args: dict[str, ast.expr] | None) -> bool:
    """The block pointer is made inside a loop, and nothing it is made of but its offsets is bound in that loop:
    a descriptor made once before the loop serves every iteration."""
    loop = next((up for up in _ancestors(index, make) if isinstance(up, (ast.For, ast.While))), None)
    if loop is None or args is None:
        return False
    bound = {n.id for n in ast.walk(loop) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return not any(isinstance(n, ast.Name) and n.id in bound
                   for field, value in args.items() if field != "offsets" for n in ast.walk(value))


def _ancestors(index: _FunctionIndex, node: ast.AST) -> list[ast.AST]:
    found, parent = [], index.parents.get(id(node))
    while parent is not None:
        found.append(parent)
        parent = index.parents.get(id(parent))
    return found


def _element_type(index: _FunctionIndex, name: ast.Name) -> ast.Attribute | None:
    """`p.type.element_ty` read off the block pointer `name`: the whole attribute, else None."""
    parent = index.parents.get(id(name))
    outer = index.parents.get(id(parent)) if isinstance(parent, ast.Attribute) and parent.attr == "type" else None
    return outer if isinstance(outer, ast.Attribute) and outer.attr == "element_ty" else None


def holds_block_pointer(model: ModuleModel, flow: FunctionFlow, expr: ast.expr) -> bool:
    """A local name every binding of which reaching here makes a block pointer (`tl.make_block_ptr(...)`,
    `tl.advance(p, ...)`, `p.advance(...)`, or a copy of such a name); not a parameter, whose caller decides."""
    if not isinstance(expr, ast.Name):
        return False
    pending, seen = [expr], set()
    while pending:
        definitions = flow.reaching(pending.pop())
        if not definitions:
            return False
        for definition in definitions:
            value = definition.value if definition.kind == "assign" else None
            if isinstance(value, ast.Name):
                if id(definition) not in seen:
                    seen.add(id(definition))
                    pending.append(value)
            elif not (isinstance(value, ast.Call) and (model.qualify(value.func) in (MAKE, ADVANCE) or isinstance(
                    value.func, ast.Attribute) and value.func.attr == "advance" and isinstance(value.func.value, ast.Name))):
                return False
    return True


def _literal_one(expr: ast.expr | None) -> bool:
    return isinstance(expr, ast.Constant) and type(expr.value) is int and expr.value == 1


def descriptor_rewrite(model: ModuleModel, function: ast.FunctionDef, make: ast.Call,
                       text_of: Callable[[ast.AST], str]) -> Rewrite | None:
    """The rewrite of the block pointer `make` builds, or None when it is not sound (see the module doc)."""
    index = _index(model, function)
    assign = index.assigns.get(id(make))
    if assign is None or len(assign.targets) != 1 or not isinstance(assign.targets[0], ast.Name) \
            or not isinstance(make.func, ast.Attribute):
        return None
    name = assign.targets[0].id
    args = _arguments(make)
    if args is None:
        return None
    shape = _elements(args["shape"])
    if not shape:
        return None
    rank = len(shape)
    strides, offsets, block = (_elements(args[k], rank) for k in ("strides", "offsets", "block_shape"))
    if strides is None or offsets is None or block is None:
        return None
    if not _literal_one(strides[-1]) or _literal_one(block[-1]):
        return None  # no unit last stride, or a block too narrow for a descriptor (16 bytes at least)
    params = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    names = [f"{name}_off{i}" for i in range(rank)]
    if name in params or index.taken & set(names):
        return None
    lhs = ", ".join(names)
    edits: list[tuple[ast.AST, str]] = []
    handled: set[int] = {id(assign.targets[0])}
    parents = index.parents
    for node in index.names.get(name, []):
        if id(node) in handled:
            continue
        parent = parents.get(id(node))
        element_type = _element_type(index, node)
        if element_type is not None:  # `p.type.element_ty`: the descriptor's `dtype`
            if not any(isinstance(up, ast.Call) and up.args and isinstance(up.args[0], ast.Name) and up.args[0].id == name
                       and model.qualify(up.func) == f"{TL}.store" for up in _ancestors(index, element_type)):
                edits.append((element_type, f"{name}.dtype"))  # inside a store through it, that store's edit has it
            continue
        if isinstance(parent, ast.Call) and parent.args and parent.args[0] is node and model.qualify(parent.func) != ADVANCE:
            edit = _access(model, parent, name, names, text_of)
            if edit is None:
                return None
            edits.append((parent, edit))
            continue
        statement = parents.get(id(parent)) if isinstance(parent, ast.Call) else parent
        advance = statement if isinstance(statement, ast.Assign) else None
        if advance is None or len(advance.targets) != 1 or not isinstance(advance.targets[0], ast.Name) \
                or advance.targets[0].id != name or not isinstance(advance.value, ast.Call) \
                or model.qualify(advance.value.func) != ADVANCE or advance.value.keywords \
                or len(advance.value.args) != 2 or not (isinstance(advance.value.args[0], ast.Name)
                                                       and advance.value.args[0].id == name):
            return None  # another definition or use of the block pointer
        deltas = _elements(advance.value.args[1], rank)
        if deltas is None:
            return None
        handled |= {id(advance.targets[0]), id(advance.value.args[0])}
        moved = [(n, d) for n, d in zip(names, deltas) if not (isinstance(d, ast.Constant) and d.value == 0)]
        if not moved:
            line = "pass"
        elif len(moved) == 1:
            line = f"{moved[0][0]} += {text_of(moved[0][1])}"
        else:
            line = f"{', '.join(n for n, _ in moved)} = " + ", ".join(f"{n} + {_atom(text_of(d), d)}" for n, d in moved)
        edits.append((advance, line))
    language = text_of(make.func.value)
    keywords = ", ".join(f"{k}=[{', '.join(text_of(e) for e in v)}]" for k, v in
                         (("shape", shape), ("strides", strides), ("block_shape", block)))
    edits.append((make, f"{language}.make_tensor_descriptor({text_of(args['base'])}, {keywords})"))
    start = f"{lhs} = {', '.join(text_of(o) for o in offsets)}"
    return Rewrite(edits, (assign, start))


def _access(model: ModuleModel, call: ast.Call, name: str, names: list[str], text_of: Callable[[ast.AST], str]) -> str | None:
    """`tl.load(p, boundary_check=...)` -> `p.load([offsets])`; `tl.store(p, v, ...)` -> `p.store([offsets], v)`."""
    kind = model.qualify(call.func)
    offsets = f"[{', '.join(names)}]"
    options = {k.arg: k.value for k in call.keywords}
    if None in options:
        return None
    padding = options.pop("padding_option", None)
    if padding is not None and not (isinstance(padding, ast.Constant) and padding.value in ("", "zero")):
        return None  # a NaN fill, or one the analysis cannot read
    if set(options) - _LOAD_OPTIONS:
        return None
    if kind == f"{TL}.load" and len(call.args) == 1:
        return f"{name}.load({offsets})"
    if kind == f"{TL}.store" and len(call.args) == 2 and "value" not in options:
        value = text_of(call.args[1]).replace(f"{name}.type.element_ty", f"{name}.dtype")  # its own edit is dropped
        return f"{name}.store({offsets}, {value})"
    return None
