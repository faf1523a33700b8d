"""Data through memory between the kernels of one module: what a kernel loads from a buffer that another
kernel of the same host function wrote first (`max_norm_kernel_1[grid](x, mid, ...)` then
`max_norm_kernel_2[grid](mid, out, ...)`), or, when the module launches neither, that a kernel of the
module writes through a parameter of the same name. Only the sign is asked for: a buffer every writer fills with
values that cannot be negative (`tl.max(tl.abs(x))`, `tl.sum(x * x)`) holds none.
"""

from __future__ import annotations

import ast
import re

from tritonlint.analysis.flow import FunctionFlow, flow_of
from tritonlint.analysis.host import HostScope
from tritonlint.analysis.launches import bind_launch, kernel_launches
from tritonlint.analysis.model import JitFunction, LaunchSite, ModuleModel
from tritonlint.analysis.reductions import IDENTITY, IDENTITY_METHODS, NEEDS, PaddedLanes, load_argument
from tritonlint.analysis.triton_names import TL


def base_parameter(flow: FunctionFlow, function: JitFunction, pointer: ast.expr | None, depth: int = 0) -> str | None:
    """The kernel parameter a pointer expression offsets (`Mid + offset`, through local names), else None."""
    while isinstance(pointer, ast.BinOp) and isinstance(pointer.op, ast.Add):
        pointer = pointer.left
    if not isinstance(pointer, ast.Name) or depth > 8:
        return None
    definitions = flow.reaching(pointer)
    if len(definitions) != 1:
        return None
    (definition,) = definitions
    if definition.kind == "param":
        return pointer.id if function.param(pointer.id) is not None else None
    if definition.kind == "assign":
        return base_parameter(flow, function, definition.value, depth + 1)
    return None


def _nonnegative(analysis: PaddedLanes, expr: ast.expr | None, depth: int = 0,
                 assumed: tuple[JitFunction, frozenset[str]] | None = None) -> bool:
    """`analysis.nonnegative`, a reduction (max, min, sum) of values that are never negative, and a load
    through a parameter of the kernel that `assumed` names whose buffer holds none, padded with a value that is
    not negative."""
    if isinstance(expr, ast.Call) and depth < 8:
        name = analysis.model.qualify(expr.func)
        if NEEDS.get(name or "") is not None:
            return _nonnegative(analysis, analysis.reduced(expr), depth + 1, assumed)
        if assumed is not None and name == f"{TL}.load":
            kernel, params = assumed
            fill = load_argument(expr, 2, "other")
            return base_parameter(analysis.flow, kernel, load_argument(expr, 0, "pointer")) in params and \
                (load_argument(expr, 1, "mask") is None or fill is not None and analysis.nonnegative(fill))
        if assumed is not None and name is None and isinstance(expr.func, ast.Attribute) and \
                expr.func.attr in IDENTITY_METHODS:
            return _nonnegative(analysis, expr.func.value, depth + 1, assumed)
    if isinstance(expr, ast.Name) and depth < 8:
        definitions = analysis.flow.reaching(expr)
        return bool(definitions) and all(d.kind == "assign" and _nonnegative(analysis, d.value, depth + 1, assumed)
                                         for d in definitions)
    return analysis.nonnegative(expr)


def writes_nonnegative(model: ModuleModel, kernel: JitFunction, param: str, assumed: frozenset[str] = frozenset()) -> bool:
    """Every `tl.store` of `kernel` through its parameter `param` stores values that cannot be negative
    (and there is at least one, and no atomic or other use hands the pointer elsewhere), given that the
    buffers of the parameters in `assumed` hold no negative values."""
    if kernel.node is None:
        return False
    flow = flow_of(kernel.node)
    analysis = PaddedLanes(model, flow, set(kernel.constexprs))
    stores = 0
    for node in ast.walk(kernel.node):
        if not isinstance(node, ast.Call):
            continue
        name = model.qualify(node.func)
        pointer = load_argument(node, 0, "pointer")
        if pointer is None or base_parameter(flow, kernel, pointer) != param:
            continue
        if name == f"{TL}.store" and _nonnegative(analysis, load_argument(node, 1, "value"),
                                                        assumed=(kernel, assumed) if assumed else None):
            stores += 1
        elif name != f"{TL}.load":
            return False
    return stores > 0


_PROBABILITIES = re.compile(r"prob", re.IGNORECASE)
_LOG = re.compile(r"log|lp", re.IGNORECASE)


def probabilities(param: str) -> bool:
    """A parameter named for probabilities (`probs_ptr`, `target_probs`), not their logarithms (`logprobs`,
    `log_probs_ptr`): a distribution's values are never negative."""
    return bool(_PROBABILITIES.search(param)) and not _LOG.search(param)


def loaded_nonnegative(model: ModuleModel, kernel: JitFunction, load: ast.Call) -> bool:
    """The load reads a buffer of probabilities by name (`probabilities`), or one that, at every launch of
    `kernel` in this module, an earlier launch in the same
    host function passed to a kernel of this module that writes only non-negative values to it; with no
    launch of `kernel` in this module, that the module's kernels write only non-negative values through a
    parameter of the same name."""
    if kernel.node is None:
        return False
    param = base_parameter(flow_of(kernel.node), kernel, load_argument(load, 0, "pointer"))
    if param is None:
        return False
    if probabilities(param):
        return True
    launches = kernel_launches(model, kernel)
    if not launches:
        return _named_writers_nonnegative(model, kernel, param)
    return all(_written_before(model, kernel, launch, param) for _, launch in launches)


def _stores_through(model: ModuleModel, kernel: JitFunction, param: str) -> bool:
    """Whether the kernel hands its parameter `param` (as a pointer) to anything but `tl.load`."""
    if kernel.node is None or kernel.param(param) is None:
        return False
    flow = flow_of(kernel.node)
    return any(isinstance(node, ast.Call) and model.qualify(node.func) != f"{TL}.load"
               and base_parameter(flow, kernel, load_argument(node, 0, "pointer")) == param
               for node in ast.walk(kernel.node))


def _named_writers_nonnegative(model: ModuleModel, kernel: JitFunction, param: str) -> bool:
    """With no launch of the reading kernel in its module (the host code lives in another module), the
    module's other kernels with a parameter of the same name stand for the buffer's writers (a tile
    kernel's `maxima_ptr` and the row-scale kernel's `maxima_ptr`): at least one writes through it, and
    every one that does writes only values that cannot be negative."""
    writers = [f for f in model.functions if f.node is not kernel.node and _stores_through(model, f, param)]
    return bool(writers) and all(writes_nonnegative(model, f, param) for f in writers)


def _written_before(model: ModuleModel, kernel: JitFunction, launch: LaunchSite, param: str) -> bool:
    """An earlier launch of the host function fills the buffer with values that cannot be negative; or the
    buffer is the host function's own parameter, filled by its callers, and the module's kernels that write
    through a kernel parameter of the reader's name stand for the writers (as with no launch at all); or it
    is an item of a local list whose every item is so written (`_list_items_nonnegative`)."""
    buffer = bind_launch(model, launch, kernel).values.get(param)
    listed = _list_named(buffer)
    if listed is not None:
        return _list_items_nonnegative(model, launch.scope, listed)
    if not isinstance(buffer, ast.Name):
        return False
    host = HostScope.of(model, launch.scope)
    if host.unbound_parameter(buffer.id) and _named_writers_nonnegative(model, kernel, param):
        return True
    for earlier in model.launches:
        writer = model.kernel_for(earlier)
        if earlier.scope is not launch.scope or earlier.line >= launch.line or writer is None or writer.node is kernel.node:
            continue
        bound = bind_launch(model, earlier, writer)
        for name, value in bound.values.items():
            if isinstance(value, ast.Name) and value.id == buffer.id and writes_nonnegative(model, writer, name):
                return True
    return False


def _list_named(value: ast.expr | None) -> str | None:
    """The local list a launch argument is an item of (`inputs[-1]`: `inputs`), else None."""
    return value.value.id if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) else None


def _list_items_nonnegative(model: ModuleModel, scope: ast.AST | None, listed: str) -> bool:
    """Every buffer the local list `listed` of the host function holds is written by the function's launches,
    at least once and only with values that cannot be negative, given that what those kernels load from the
    list's items cannot be either: induction over the levels of a reduction tree (`inputs = [tile_max]`,
    then per level a kernel reads `inputs[-1]` and the host appends the buffer it wrote)."""
    items = HostScope.of(model, scope).list_items(listed) or []
    buffers = [item.id for item in items if isinstance(item, ast.Name)]
    if not items or len(buffers) != len(items):
        return False
    launches = [(writer, bind_launch(model, launch, writer).values) for launch in model.launches
                if launch.scope is scope and (writer := model.kernel_for(launch)) is not None]

    def written_nonnegative(item: str) -> bool:
        writes = [(writer, name, frozenset(p for p, v in values.items() if _list_named(v) == listed))
                  for writer, values in launches for name, value in values.items()
                  if isinstance(value, ast.Name) and value.id == item and _stores_through(model, writer, name)]
        return bool(writes) and all(writes_nonnegative(model, writer, name, assumed) for writer, name, assumed in writes)
    return all(written_nonnegative(buffer) for buffer in buffers)


def through_identity(analysis: PaddedLanes, expr: ast.expr | None, load: ast.Call, depth: int = 0) -> bool:
    """`expr` is the load's value itself, through local names and casts (`x = tl.load(...).to(tl.float32)`)."""
    if expr is load:
        return True
    if depth > 8 or expr is None:
        return False
    if isinstance(expr, ast.Call):
        name = analysis.model.qualify(expr.func)
        if name is None and isinstance(expr.func, ast.Attribute) and expr.func.attr in IDENTITY_METHODS:
            return through_identity(analysis, expr.func.value, load, depth + 1)
        return name in IDENTITY and bool(expr.args) and through_identity(analysis, expr.args[0], load, depth + 1)
    if isinstance(expr, ast.Name):
        definitions = analysis.flow.reaching(expr)
        return len(definitions) == 1 and all(d.kind == "assign" and through_identity(analysis, d.value, load, depth + 1)
                                             for d in definitions)
    return False
