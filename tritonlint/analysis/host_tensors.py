"""What a host function knows of the tensors it launches a kernel with: which it receives (its parameters,
items or views of them, an autograd backward's saved tensors), which it allocates and with which sizes in
which position, which it holds as an object's or a module's state, and what the project's calls of it pass.
TL107 reads these to tell a size that changes from call to call from one fixed per model or index; TL102 which
index tensors the host makes int64."""

from __future__ import annotations

import ast
from collections.abc import Callable

from tritonlint.analysis.host import NESTED_SCOPES, HostScope, calls_function, own_nodes, parameter_names, passed_for
from tritonlint.analysis.model import ModuleModel
from tritonlint.analysis.names import name_words
from tritonlint.analysis.project import Project
from tritonlint.analysis.provenance import SAME_SIZE, Origin, Provenance
from tritonlint.walk import walk


def is_received(host: HostScope, tensor: str | None, depth: int = 0) -> bool:
    """Whether a tensor is one the launching function receives (a parameter, an attribute or item of one, a
    tensor an autograd backward unpacks from `ctx.saved_tensors`, a loop over such tensors `for g in (dx,
    dw):`) or, in any of its bindings, a view, copy, cast or conversion of one (`x = x.view(-1, n)`,
    `q_c = q.contiguous()`, `Q = convert_to_tensor(q)` then `Q = Q.cuda()`)."""
    if tensor is None or host.node is None or depth > 4:
        return False
    root = tensor.split(".")[0].split("[")[0].split("(")[0]
    if root in parameter_names(host.node) or root in _saved_tensors(host.node):
        return True
    for value in [*host.values.get(root, []), *_loop_items(host.node, root)]:
        while isinstance(value, (ast.Call, ast.Attribute, ast.Subscript)):
            if isinstance(value, ast.Call) and (not isinstance(value.func, ast.Attribute)
                                                or host.model.qualify(value.func) is not None):
                # a function of the tensor itself (`torch.as_tensor(x)`), not of one of its sizes
                value = value.args[0] if value.args and isinstance(value.args[0], ast.Name) else None
            else:
                value = value.func if isinstance(value, ast.Call) else value.value
        if isinstance(value, ast.Name) and value.id != root and is_received(host, value.id, depth + 1):
            return True
    return False


def _loop_items(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> list[ast.expr]:
    """The items a `for name in (a, b):` loop of the function binds the name to."""
    return [item for node in walk(function) if isinstance(node, ast.For) and isinstance(node.target, ast.Name)
            and node.target.id == name and isinstance(node.iter, (ast.Tuple, ast.List)) for item in node.iter.elts]


def _saved_tensors(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names an autograd backward binds from `ctx.saved_tensors`: the tensors its forward received."""
    return {n.id for node in walk(function) if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Attribute) and node.value.attr == "saved_tensors"
            for target in node.targets for n in walk(target) if isinstance(n, ast.Name)}


def object_state(host: HostScope, tensor: str | None, depth: int = 0) -> bool:
    """A tensor the launching function neither receives nor builds: an attribute of `self` or `cls` (a
    module's parameter or buffer) or a module-level global, also reached through a loop over one (`for group in
    self.param_groups: p = group["param"]`, an optimizer's step) and single assignments of what it reads
    (`p_flat = p.data.reshape(-1)`). Its sizes are set when the object or the module is, not by the call."""
    if tensor is None:
        return False
    root = tensor.split(".")[0].split("[")[0]
    if root in ("self", "cls"):
        return "." in tensor
    if not root.isidentifier():
        return False
    if root not in host.values:
        return root in host.model.assignments or depth < 4 and _looped_over_state(host, root, depth)
    value = host.value_of(root)
    if value is None:
        return depth < 4 and _looped_over_state(host, root, depth)
    read = _read_tensor(value) if depth < 4 else None
    return read is not None and read != root and object_state(host, read, depth + 1)


def _read_tensor(value: ast.expr) -> str | None:
    """The tensor an expression reads, through methods, attributes and subscripts (`p.data.reshape(-1)` -> `p`,
    `group["param"]` -> `group`)."""
    while True:
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            value = value.func.value
        elif isinstance(value, (ast.Attribute, ast.Subscript)) and not (
                isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id in ("self", "cls")):
            value = value.value
        else:
            break
    return ast.unparse(value) if isinstance(value, (ast.Name, ast.Attribute)) else None


def _looped_over_state(host: HostScope, name: str, depth: int) -> bool:
    """`name` is the target of a `for` over an object's state (`for group in self.param_groups`)."""
    loops = [node for node in walk(host.node) if isinstance(node, ast.For) and isinstance(node.target, ast.Name)
             and node.target.id == name] if host.node is not None else []
    iterated = [_read_tensor(loop.iter) for loop in loops]
    return len(loops) == 1 and iterated[0] is not None and object_state(host, iterated[0], depth + 1)


# Calls that allocate a tensor of the given sizes, and methods that allocate one like another tensor.
_ALLOCATORS = frozenset(f"torch.{n}" for n in ("empty", "zeros", "ones", "full", "rand", "randn", "empty_like",
                                              "zeros_like", "ones_like", "full_like"))


_NEW_METHODS = frozenset({"new_empty", "new_zeros", "new_ones", "new_full"})


def allocates(host: HostScope, value: ast.expr | None) -> bool:
    """`value` allocates a new tensor: `torch.empty(...)`, `torch.empty_like(out)`, `x.new_zeros(...)`."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    return host.model.qualify(func) in _ALLOCATORS or isinstance(func, ast.Attribute) and func.attr in _NEW_METHODS


def allocation_positions(provenance: Provenance, leaf: Origin) -> tuple[bool, bool]:
    """Whether the launching function allocates a tensor with the value as its leading size (or
    `torch.empty_like` of the same tensor), and whether it allocates one with it in an inner position."""
    host = provenance.host
    lead = inner = False
    for node in walk(host.node) if host.node is not None else ():
        if not isinstance(node, ast.Call):
            continue
        name = host.model.qualify(node.func)
        method = node.func.attr if isinstance(node.func, ast.Attribute) and name is None else None
        if name is not None and name.endswith("_like") and name in _ALLOCATORS:
            lead |= bool(node.args) and ast.unparse(node.args[0]) == leaf.tensor
            continue
        if name not in _ALLOCATORS and method not in _NEW_METHODS:
            continue
        sizes = _sizes_of(node, full=name == "torch.full" or method == "new_full")
        for position, size in enumerate(sizes):
            if isinstance(size, ast.Starred):
                continue  # `*x.shape[:-1]`: the sizes after it are inner ones
            if _same_size(provenance, size, leaf):
                inner |= position > 0 or any(isinstance(s, ast.Starred) for s in sizes[:position])
                lead |= position == 0
    return lead, inner


def allocated_sizes(host: HostScope, tensor: str | None, line: int) -> list[ast.expr] | None:
    """The sizes of a tensor the launching function allocates under a plain name, as it stands at `line` (`pos =
    torch.arange(n)`: `[n]`; `out = torch.empty((n, 1536))`: `[n, 1536]`), else None."""
    value = host.value_reaching(tensor, line) if tensor is not None and tensor.isidentifier() else None
    if not isinstance(value, ast.Call):
        return None
    name = host.model.qualify(value.func)
    if name == "torch.arange":
        return [value]
    if name not in _ALLOCATORS or name.endswith("_like"):
        return None
    sizes = _sizes_of(value, full=name == "torch.full")
    return sizes if sizes and not any(isinstance(size, ast.Starred) for size in sizes) else None


def _sizes_of(call: ast.Call, full: bool) -> list[ast.expr]:
    """The sizes an allocator call is given: one tuple or list, or positional sizes (`full`: the first argument
    only; the fill value follows)."""
    args = call.args[:1] if full else call.args
    return list(args[0].elts) if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)) else list(args)


def _same_size(provenance: Provenance, size: ast.expr, leaf: Origin) -> bool:
    """Whether an allocation's size is the value: one of the host names it went through, or the same shape."""
    if isinstance(size, ast.Name) and size.id in leaf.names:
        return True
    origin = provenance.origin(size)
    return origin.kind == "shape" and origin.tensor == leaf.tensor and origin.index == leaf.index


def stride_grows_with(provenance: Provenance, expr: ast.expr, leaf: Origin, line: int) -> bool:
    """Whether `expr` is a stride (`x.stride(0)`, also through a name: `s_b, s_l, s_d = x.stride()`) that a
    dimension after it sets and that dimension is the value `leaf` (the `seq_len` of `b, seq_len, d = x.shape`,
    or a size of the allocation of `x`): a contiguous tensor's stride is the product of the later sizes, so it
    takes a new value whenever the value does."""
    stride = provenance.stride_of(expr)
    if stride is None or stride[1] < 0:
        return False
    tensor, dim = stride
    if tensor == leaf.tensor and leaf.kind == "shape" and leaf.index is not None and leaf.index > dim:
        return True
    sizes = allocated_sizes(provenance.host, tensor, line) or []
    return any(_same_size(provenance, size, leaf) for size in sizes[dim + 1:])


def int_parameter_names(function: ast.FunctionDef | ast.AsyncFunctionDef | None) -> set[str]:
    """The host function's parameters annotated `int`."""
    if function is None:
        return set()
    args = function.args
    return {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]
            if isinstance(a.annotation, ast.Name) and a.annotation.id == "int"}


# The words that name a model's parameters.
_SAME_DATA = SAME_SIZE | {"view", "reshape", "flatten", "t"}  # and views of it: still the same tensor's data
_PARAMETER_WORDS = frozenset({"weight", "weights", "bias", "param", "params", "parameter", "parameters"})


_INT64 = frozenset({"torch.int64", "torch.long"})
# Methods that keep a tensor's dtype: its views and copies less the casts, and the other views.
_SAME_DTYPE = (_SAME_DATA - {"to", "float", "half", "bfloat16"}) | {
    "squeeze", "unsqueeze", "expand", "narrow", "transpose", "permute", "repeat_interleave"}


def int64_tensor(host: HostScope, value: ast.expr, depth: int = 0) -> bool:
    """Whether the host makes a tensor int64, in every binding: `x.to(torch.int64)`, `x.long()`,
    `torch.empty(n, dtype=torch.int64)`, through views, slices and copies (`loc.view(-1)[:t].to(dtype=
    torch.int64).contiguous()`) and local names."""
    if depth > 6:
        return False
    if isinstance(value, ast.Name):  # every binding of the name in the function, or at module level (a script's calls)
        bound = host.values.get(value.id) or []
        return bool(bound) and all(v is not None and int64_tensor(host, v, depth + 1) for v in bound)
    if isinstance(value, ast.Subscript):
        return int64_tensor(host, value.value, depth + 1)
    if not isinstance(value, ast.Call):
        return False
    dtypes = [k.value for k in value.keywords if k.arg == "dtype"]
    func = value.func
    if isinstance(func, ast.Attribute) and host.model.qualify(func) is None:  # a method of a tensor
        if func.attr == "long" and not value.args:
            return True
        if func.attr == "to":
            dtypes += [a for a in value.args if (host.model.qualify(a) or "").startswith("torch.")]
            return any(host.model.qualify(d) in _INT64 for d in dtypes) if dtypes \
                else int64_tensor(host, func.value, depth + 1)
        if func.attr in _SAME_DTYPE:
            return int64_tensor(host, func.value, depth + 1)
    return any(host.model.qualify(d) in _INT64 for d in dtypes)


def callers_pass_state(project: Project, host: HostScope, tensor: str | None) -> bool:
    """Whether the project's calls of the launching function (its own module's and those in the modules that
    import from it) all pass a model's state for the parameter `tensor` comes from: a `self.` attribute, or a
    value named as a weight, bias or parameter (`self._weight_shard`, `decoder.weight.grad`, `weight.T`). A
    generic helper's `x.numel()` is then fixed per model. False when no call is found, when one passes
    anything else, and where the run cannot see the project (an editor buffer)."""
    return _callers_all_pass(project, host, tensor, lambda caller, value: _model_state(value))


def callers_pass_int64(project: Project | None, host: HostScope, tensor: str | None) -> bool:
    """Whether the project's calls of the launching function all pass, for the parameter `tensor` comes from,
    a tensor their own scope makes int64 (`int64_tensor`: `torch.arange(..., dtype=torch.int64)`, `.long()`).
    False as `callers_pass_state` is."""
    if project is None:
        return False
    # Asked for each index load of each launch: the project's calls are read once per function and tensor.
    return host.model.memoized(("callers-int64", id(host.node), tensor),
                               lambda: _callers_all_pass(project, host, tensor, int64_tensor))


def callers_pass_unit_dimension(project: Project | None, host: HostScope, tensor: str | None, index: int | None) -> bool:
    """Whether the project's calls of the launching function all pass, for the parameter `tensor` comes from, a
    tensor with a new dimension of 1 at `index` (`q.unsqueeze(1)`, `q[:, None]`): that dimension is 1 on every
    call. False as `callers_pass_state` is."""
    if project is None or index is None:
        return False
    return _callers_all_pass(project, host, tensor, lambda caller, value: _unit_dimension(value, index))


def _unit_dimension(value: ast.expr, index: int) -> bool:
    """`x.unsqueeze(index)` (also `dim=index`), or a subscript with `None` at position `index` and full slices
    before it (`x[:, None]` for 1)."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "unsqueeze":
        dim = value.args[0] if value.args else next((k.value for k in value.keywords if k.arg == "dim"), None)
        return isinstance(dim, ast.Constant) and dim.value == index
    if isinstance(value, ast.Subscript):
        items = value.slice.elts if isinstance(value.slice, ast.Tuple) else [value.slice]
        picked = items[index] if len(items) > index >= 0 else None
        return isinstance(picked, ast.Constant) and picked.value is None \
            and all(isinstance(item, ast.Slice) and item.lower is None and item.upper is None for item in items[:index])
    return False


def _callers_all_pass(project: Project, host: HostScope, tensor: str | None,
                      accepts: Callable[[HostScope, ast.expr], bool]) -> bool:
    function, model = host.node, host.model
    param = _received_parameter(host, tensor)
    if function is None or param is None or function not in model.tree.body:
        return False
    qualname = f"{model.module}.{function.name}"

    def passed(callers: list[ModuleModel]) -> list[tuple[HostScope, ast.expr | None]]:
        # Each call with the scope it sits in (a class body or a lambda reads its names as the module does).
        return [(HostScope.of(caller, scope), passed_for(node, function, param)) for caller in callers
                for scope in [caller.tree, *(n for n in walk(caller.tree) if isinstance(n, NESTED_SCOPES))]
                for node in own_nodes(scope) if isinstance(node, ast.Call) and calls_function(caller, node, qualname)]

    def all_accepted(found: list[tuple[HostScope, ast.expr | None]]) -> bool:
        return all(value is not None and accepts(scope, value) for scope, value in found)

    own = passed([model])  # read first: one call with anything else settles it without the other modules
    if not all_accepted(own):
        return False
    others: list[tuple[HostScope, ast.expr | None]] = []
    if not function.name.startswith("_"):  # a private function (`_launch`) is called in its own module only
        found = project.calling_modules(model.module)
        if found is None:
            return False
        others = passed(found)
    return bool(own or others) and all_accepted(others)


def _received_parameter(host: HostScope, tensor: str | None) -> str | None:
    """The parameter a received tensor is, or is a single view or cast of (`x2d = x.view(-1, n)`)."""
    name = (tensor or "").split(".")[0].split("[")[0]
    for _ in range(4):
        if name in parameter_names(host.node):
            return name
        value = host.value_of(name)
        while isinstance(value, (ast.Call, ast.Attribute, ast.Subscript)):
            value = value.func if isinstance(value, ast.Call) else value.value
        if not isinstance(value, ast.Name):
            return None
        name = value.id
    return None


def _model_state(value: ast.expr) -> bool:
    """An attribute of `self`, or a value any of whose names (through copies, casts, views and `.t()`) is a
    parameter's."""
    names = []
    while True:
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _SAME_DATA:
            value = value.func.value
        elif isinstance(value, ast.Attribute):
            names.append(value.attr)
            value = value.value
        else:
            break
    if not isinstance(value, ast.Name):
        return False
    if value.id == "self":
        return bool(names)
    return any(_PARAMETER_WORDS.intersection(name_words(name)) for name in [value.id, *names])
