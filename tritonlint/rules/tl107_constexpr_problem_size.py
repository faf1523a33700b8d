"""TL107: a tl.constexpr parameter fed from a value that changes with the input (one compilation per value),
and `do_not_specialize` naming a tl.constexpr parameter."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import replace

from tritonlint import evidence
from tritonlint.analysis.cuda_graphs import captured_only
from tritonlint.analysis.host import HostScope, method_class, parameter_names
from tritonlint.analysis.host_tensors import (
    allocation_positions,
    callers_pass_state,
    callers_pass_unit_dimension,
    int_parameter_names,
    is_received,
    object_state,
    stride_grows_with,
)
from tritonlint.analysis.launches import bind_launch
from tritonlint.analysis.model import JitFunction, LaunchSite, ModuleModel
from tritonlint.analysis.provenance import (
    SAME_SIZE,
    Origin,
    Provenance,
    batch_word,
    count_like,
    grid_axes,
    lengths_tensor,
    model_dimension,
    pool_size,
    sequence_length,
    table,
    varies_with_input,
)
from tritonlint.context import Exemption, MatchContext, Verdict, condition
from tritonlint.walk import walk

# The fixture each kind of finding is measured by.
ROW_COUNT, DO_NOT_SPECIALIZE = "TL107-row-count-constexpr", "TL107-do-not-specialize-constexpr"


# Reasons a launch's varying constexpr takes few values in practice, given the launch's module and the launch;
# the rule doc lists each.
EXEMPTIONS: tuple[Exemption[Callable[[ModuleModel, LaunchSite], bool]], ...] = (
    Exemption("traced-pattern-replacement", "the launch is in a torch.fx pattern replacement (a module that "
              "defines `pattern` and `replacement` or `replacement_func`): it runs only inside the captured "
              "graph the pattern matched, at that graph's traced shapes, one compilation for them",
              lambda model, launch: model.is_pattern_replacement),
    Exemption("cuda-graph-capture", "the launching function records a CUDA graph (`graph.capture_begin()`, "
              "`with torch.cuda.graph(g):`) or is called in its module only by functions that do, or that are "
              "so called: a replay starts the recorded kernels without any host code, so the launch runs at "
              "the capture's shapes, one compilation for them",
              lambda model, launch: captured_only(model, launch.scope)),
)


def _launch_problem(ctx: MatchContext, launch: LaunchSite, kernel: JitFunction) -> Verdict | None:
    if kernel.node is None and not kernel.constexprs:
        return None
    if any(exemption.applies(ctx.model, launch) for exemption in EXEMPTIONS):
        return None
    tiles = set(kernel.shape_inputs)  # read when its module is modeled: a kernel of another module has them too
    tuned = kernel.autotune.tuned_meta if kernel.autotune else set()
    heuristics = set(kernel.heuristics)
    host = HostScope.of(ctx.model, launch.scope)
    provenance = Provenance.of(host)
    values = bind_launch(ctx.model, launch, kernel).values
    twins = _twin_launches(ctx, launch, kernel, values)
    if any(twin.line < launch.line for twin in twins):
        return None  # the earlier launch's finding stands for this one: same fix, no compilation of its own
    needed = tiles | tuned | set(heuristics)
    # Host values the kernel needs at compile time anyway: one compilation per value of these already.
    compiled = {ast.unparse(expr) for param, expr in values.items() if param in needed}
    # Tensors whose varying sizes the launch passes as runtime integers: the author's own choice of what varies.
    runtime = set().union(*(_tensors(origin) for param, expr in values.items()
                            if (spec := kernel.param(param)) is not None and not spec.is_constexpr
                            and varies_with_input(origin := provenance.origin(expr))))
    # A caller's parameter annotated `int` passed as a runtime argument (`n_out: int`): a size the author
    # chose to pass at run time, as above, though no tensor's shape tells it.
    ints = int_parameter_names(host.node)
    runtime_int = any(isinstance(expr, ast.Name) and expr.id in ints for param, expr in values.items()
                      if (spec := kernel.param(param)) is not None and not spec.is_constexpr)
    # Tensors one of whose non-leading sizes the launch passes as a runtime integer that the grid spans
    # (`n_in = pairs.shape[1]`, grid `cdiv(n_in, BLOCK)`): the author's problem size, so a leading dimension of
    # the same tensor passed as a constexpr and absent from the grid is the fixed side (a kernel volume).
    spanned = _grid_names(host, launch)
    runtime_dims: set[str] = set()
    for param, expr in values.items():
        if (spec := kernel.param(param)) is not None and not spec.is_constexpr and _names(expr) & spanned:
            runtime_dims |= {part.tensor for part in _sized(provenance.origin(expr))
                             if part.kind == "shape" and part.tensor is not None and part.index not in (0, None)}
    origins = {param: provenance.origin(expr) for param, expr in values.items()}
    unbacked = ctx.options.get("constexpr-size-unbacked", False)
    found: list[tuple[int, int, str, ast.expr, str, str | None]] = []  # level, strength, param, expr, why, backing
    counters: set[str] = set()  # parameters fed a counter of `self`: a new value on every call
    for param, expr in values.items():
        spec = kernel.param(param)
        if spec is None or not spec.is_constexpr or param in needed or pool_size(param) or model_dimension(param) \
                and not (batch_word(param) and origins[param].kind == "shape" and origins[param].rows):
            continue  # a model dimension by name; not a batch fed the rows of a flattened tensor (batch * sequence)
        counted = _incremented(ctx.model, host, expr)
        if counted is not None:  # `step=self.step_count` with `self.step_count += 1`: a new value on every call
            text = ctx.file.text_of(expr)
            counters.add(param)
            found.append((2, 2, param, expr, f"`{text}` is a counter",
                          f"`{text}` is incremented at line {counted}, so each call passes a new value"))
            continue
        if _derived_from(expr, compiled):
            continue  # MAX_LEN=max(start_len, end_len) beside START_LEN=start_len, END_LEN=end_len
        origin = origins[param]
        if origin.kind == "shape" and count_like(param) and not param.lower().startswith("max") \
                and varies_with_input(origin) is None and not any(model_dimension(name) for name in origin.names):
            # `SEQ_LEN=q.shape[2]`, `seq_len=L` of `f, L = x.shape`: the kernel's parameter names the dimension
            # (not a maximum, `max_accept_tokens=accept.shape[1]`, as often a buffer's configured capacity)
            origin = origins[param] = replace(origin, names=(param, *origin.names))
        if any(pool_size(name) for name in origin.all_names()):
            continue
        if (runtime or runtime_int) and _leading_dimension_only(origin) and origin.tensor not in runtime:
            continue  # GEMM(a, b, M, N: constexpr) with M from a: b's leading dimension is a weight's (N)
        if _leading_dimension_only(origin) and _weight_beside_features(origin, [o for p, o in origins.items() if p != param]):
            continue  # GEMV(x, w, K=x.shape[-1], N=w.shape[0]): N is the weight's output features
        if origin.tensor is not None and _fixed_build(host, host.value_of(origin.tensor)):
            continue  # NUM=c.numel() with c = candidates(x.device) * amax: a size no input sets
        if _leading_dimension_only(origin) and origin.tensor in runtime_dims and not _names(expr) & spanned:
            continue  # pool(pairs, n_in=pairs.shape[1], kv: constexpr = pairs.shape[0]): kv is the fixed side
        leaves = _varying_leaves(origin)
        if leaves and all(_inner_size_only(provenance, leaf) for leaf in leaves):
            continue  # M = w.size(0) with out = torch.empty(B, M, N): a weight's features, not the rows
        if leaves and all(object_state(host, leaf.tensor) for leaf in leaves):
            continue  # N = self.codebook.shape[0]: a module's state, sized when the module is built
        if leaves and all(provenance.fixed_by_assertion(leaf) for leaf in leaves):
            continue  # assert SEQ_LEN == 1 + H_img ** 2, with H_img=14 in the signature: a model's size
        if leaves and all(leaf.kind == "shape" and callers_pass_unit_dimension(ctx.project, host, leaf.tensor, leaf.index)
                          for leaf in leaves):
            continue  # seq_len = q.shape[1] where every call passes q.unsqueeze(1): always 1
        why = varies_with_input(origin)
        if why is None:
            continue
        backed = _backing(provenance, launch, param, origin, leaves, spanned)
        if (backed is not None or unbacked) and leaves and all(
                callers_pass_state(ctx.project, host, leaf.tensor) for leaf in leaves):
            continue  # triton_add(self._grad_shard, ...) everywhere: x.numel() of a generic helper is a model's size
        level = 0 if backed is None else 2 if backed[1] else 1
        found.append((level, _strength(param, origin), param, expr, why, backed[0] if backed else None))
    # Every varying constexpr of the launch, reported or not: the fix must drop them all to stop the recompiles.
    varying = [f for _, _, f, _, _, _ in found]
    found = [f for f in found if f[0] == 2 or unbacked]
    if not found:
        return None  # the launch names no token or sequence count: reported only with constexpr-size-unbacked
    # Name the best-evidenced parameter, not the first: a named one, then a shown one, then a count by name
    # over a bare leading dimension.
    level, _, param, expr, why, backing = max(found, key=lambda f: (f[0], f[1]))
    # Constexprs computed on the host from the same value (`n_tiles = cdiv(n_ctx, BLOCK_M)`, `total_len = seq_len
    # + text_len`) vary with it too, though the provenance has no name for their form.
    # The launch's other constexprs not yet listed as varying, which the notes below may find varying with it.
    rest = {p: e for p, e in values.items() if p != param and p not in varying
            and (spec := kernel.param(p)) is not None and spec.is_constexpr}
    named = {*origins[param].names, *([expr.id] if isinstance(expr, ast.Name) else [])}
    derived = [p for p, e in rest.items() if p not in needed and _arithmetic_of(host, e, named)]
    others = [f"`{p}`" for p in [*varying, *derived] if p != param]
    problem = (f"constexpr `{param}` is fed `{ctx.file.text_of(expr)}`, "
               + ("a counter that changes on every call: one compilation per call" if param in counters else
                  "which varies with the input: one compilation per distinct value"))
    notes = [f"Where the value comes from: {why}."]
    if level == 2:
        notes.append(f"Why it changes from call to call: {backing}.")
    else:
        notes.append((f"What suggests it changes from call to call: {backing}; but" if backing is not None else
                      "Nothing at the launch shows it changing from call to call, and") +
                     " the launch names no token or sequence count (a weight's, a table's or a decode step's "
                     "size looks the same): reported because `constexpr-size-unbacked` is set.")
    if others:
        notes.append(f"Also fed a value that varies with the input: {', '.join(others)} (drop `tl.constexpr` from "
                     "those too, or each still compiles once per value).")
    strides = [p for p, e in rest.items()
               if any(stride_grows_with(provenance, e, leaf, launch.line) for leaf in _varying_leaves(origins[param]))]
    if strides:
        notes.append(f"The constexpr stride{'s' if len(strides) > 1 else ''} {', '.join(f'`{p}`' for p in strides)} "
                     f"{'grow' if len(strides) > 1 else 'grows'} with `{param}` (a later dimension of the tensor): "
                     f"drop `tl.constexpr` from {'them' if len(strides) > 1 else 'it'} too, or each still compiles "
                     "once per value.")
    if twins:
        notes.append(f"The launch{'es' if len(twins) > 1 else ''} at line{'s' if len(twins) > 1 else ''} "
                     f"{', '.join(str(t.line) for t in twins)} {'pass' if len(twins) > 1 else 'passes'} the same "
                     "constexpr values to the same kernel: this finding stands for "
                     f"{'them' if len(twins) > 1 else 'it'}.")
    configs = kernel.autotune.configs if kernel.autotune is not None else []
    if kernel.autotune is not None and param in (kernel.autotune.key or ()) and (configs is None or len(configs) > 1):
        compiled_configs = "the" if configs is None else f"each of the {len(configs)}"  # None: built in a way not read
        notes.append(f"`{param}` is also an autotune key: each distinct value is tuned again anyway (every config "
                     f"timed); as a constexpr it also compiles {compiled_configs} configs again.")
    return Verdict(vars={"kernel": ctx.launched_name(launch, kernel), "problem": problem},
                   severity=None if level == 2 else "info", span=ctx.file.span_of(expr),
                   notes=[*notes,
                          f"Evidence: {evidence.fixture_phrase(ROW_COUNT)}.",
                          f"Triton compiles `{ctx.launched_name(launch, kernel)}` once per distinct value of a constexpr: drop "
                          f"`tl.constexpr` from `{param}` (a runtime integer; Triton still specializes on "
                          "divisibility by 16 and on 1)" + ("." if param in counters else
                                                           "; where the kernel needs a compile-time size, pass "
                                                           "triton.next_power_of_2 of it as a constexpr of its own "
                                                           "and keep the exact value for the masks and loop bounds.")])


def _twin_launches(ctx: MatchContext, launch: LaunchSite, kernel: JitFunction,
                   values: dict[str, ast.expr]) -> list[LaunchSite]:
    """The other launches of the same kernel in the same function, with the same grid and the same text for
    every constexpr argument (a kernel run on a signal's real part, then on its imaginary part): they compile
    nothing this launch does not, and dropping `tl.constexpr` fixes them all."""
    def constexprs(bound: dict[str, ast.expr]) -> dict[str, str]:
        return {param: ast.unparse(expr) for param, expr in bound.items()
                if (spec := kernel.param(param)) is not None and spec.is_constexpr}
    ours = constexprs(values)
    return [other for other in ctx.model.launches
            if other is not launch and other.scope is launch.scope and other.callee_text == launch.callee_text
            and ast.unparse(other.grid) == ast.unparse(launch.grid) and ctx.kernel_for(other) is kernel
            and constexprs(bind_launch(ctx.model, other, kernel).values) == ours]


# Parameters of the launching function that mark a packed variable-length batch (`cu_seqlens`): the leading
# dimension of a tensor it receives beside them is the batch's tokens.
_VARLEN = re.compile(r"cu_?seq", re.IGNORECASE)


def _incremented(model: ModuleModel, host: HostScope, expr: ast.expr) -> int | None:
    """The line of `self.x += ...` where a method of the launching function's class increments the attribute
    passed (an optimizer's step count): it outlives the call, so each call passes a new value. Not a local
    total (`total += t * h * w` over a loop starts again on every call)."""
    if not (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self") \
            or host.node is None:
        return None
    scope = method_class(model, host.node) or host.node
    text = ast.unparse(expr)
    return next((n.lineno for n in walk(scope) if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add)
                 and ast.unparse(n.target) == text), None)


def _backing(provenance: Provenance, launch: LaunchSite, param: str, origin: Origin, leaves: list[Origin],
             spanned: set[str]) -> tuple[str, bool] | None:
    """Evidence that a varying value changes from call to call, not only with the model or the index, and
    whether it is named (True) or only shown (False). Named: a token or sequence count by name, the rows
    of a tensor flattened to rows, the packed tokens beside `cu_seqlens`. Shown: a row count by name, the
    element count of a tensor the launching function receives, or a dimension of a received tensor that
    the launch grid spans or that the function's allocation takes as its leading size: on fresh code as
    often a weight's, a table's or a decode step's size as a batch's (docs/precision/TL107.md). None when
    only the value's form (a bare `t.shape[0]`) says it varies."""
    names = [param, *origin.all_names()]
    if any(count_like(n, rows=False) for n in names):
        return f"`{param}` or a host name on the way names a token or sequence count", True
    for leaf in leaves:
        if sequence_length(leaf):
            return f"`{leaf.names[-1]}` names a sequence length of `{leaf.tensor}`", True
        if leaf.kind == "content":
            tensor = leaf.tensor or ""
            held = "values" if not lengths_tensor(tensor) else "counts" if "count" in tensor.lower() else "lengths"
            return f"it is read from the {held} in `{tensor}`, which each batch sets", True
    host = provenance.host
    received = [leaf for leaf in leaves if is_received(host, leaf.tensor)]
    varlen = any(_VARLEN.search(p) for p in parameter_names(host.node))
    if origin.kind == "cdiv" and origin.rows:  # `M = x.numel() // N` with `N = x.shape[-1]`
        return f"it counts the rows of `{origin.parts[0].tensor}`: its element count over its last dimension", True
    for leaf in leaves:
        if leaf.kind == "shape" and leaf.rows:
            return f"it counts the rows of `{leaf.tensor}` flattened to rows", True
        if leaf not in received or leaf.kind != "shape" or leaf.index != 0:
            continue
        if varlen:
            return f"`{leaf.tensor}` is packed beside `cu_seqlens`: its leading dimension is the batch's tokens", True
    if any(count_like(n) for n in names):
        return f"`{param}` or a host name on the way names a row count", False
    for leaf in received:
        if leaf.kind == "numel":
            return f"it counts the elements of `{leaf.tensor}`, which the launching function receives", False
        if leaf.kind != "shape":
            continue
        if set(leaf.names) & spanned or _grid_spans(provenance, launch, leaf):
            return f"the launch grid spans it: one program per row or block of `{leaf.tensor}`", False
        if allocation_positions(provenance, leaf)[0]:
            return "the launching function allocates its output with it as the leading size", False
    return None


def _grid_spans(provenance: Provenance, launch: LaunchSite, leaf: Origin) -> bool:
    """Whether a grid axis is computed from the same dimension of the same tensor (`(cdiv(x.shape[0], B),)`)."""
    axes = grid_axes(provenance.host, launch)
    return any(part.kind == "shape" and part.tensor == leaf.tensor and part.index == leaf.index
               for axis in (axes[0] if axes else []) for part in _sized(provenance.origin(axis)))


def _varying_leaves(origin: Origin) -> list[Origin]:
    """The parts of a value that make it vary, as varies_with_input finds them: the dividend of a ceiling
    division, each varying factor of a product (`cdiv(M, BM) * cdiv(N, BN)`: M and N)."""
    if origin.kind == "cdiv" and origin.parts:
        return _varying_leaves(origin.parts[0])
    if origin.kind == "product":
        return [leaf for part in origin.parts if varies_with_input(part) for leaf in _varying_leaves(part)]
    return [origin]


def _inner_size_only(provenance: Provenance, leaf: Origin) -> bool:
    """Whether a bare leading dimension sizes some tensor the launching function allocates, and only in an
    inner position (`out = torch.empty(B, M, N)` with `M = w.size(0)`; `x.new_empty(*x.shape[:-1], N)`):
    the rows of what the kernel writes come from elsewhere, so this is a weight's output features or a
    table's entries, laid out beside the rows, fixed per model. A tensor allocated with the value as its
    leading size (`torch.empty(M, N)`, `torch.empty_like(x)` of the same tensor) shows it is the rows."""
    if not _leading_dimension_only(leaf) or leaf.tensor is None:
        return False
    lead, inner = allocation_positions(provenance, leaf)
    return inner and not lead


def _names(expr: ast.expr) -> set[str]:
    return {n.id for n in walk(expr) if isinstance(n, ast.Name)}


def _grid_names(host: HostScope, launch: LaunchSite) -> set[str]:
    """The host names the launch grid is computed from, through local assignments (`total = n * c`)."""
    axes = grid_axes(host, launch)
    found: set[str] = set()
    todo = [n for axis in (axes[0] if axes else []) for n in _names(axis)]
    while todo and len(found) < 64:
        name = todo.pop()
        if name not in found:
            found.add(name)
            value = host.value_of(name)
            todo += list(_names(value)) if value is not None else []
    return found


def _arithmetic_of(host: HostScope, expr: ast.expr | None, names: set[str], depth: int = 0) -> bool:
    """Whether `expr` is computed from one of the host `names` by arithmetic alone (`+`, `*`, `//`,
    `triton.cdiv`), through local assignments: a new value for each of theirs, unlike a choice among a few
    (`2 if n > 1024 else 3`) or a bucket."""
    if expr is None or depth > 6:
        return False
    if isinstance(expr, ast.Name):
        return expr.id in names or _arithmetic_of(host, host.value_of(expr.id), names, depth + 1)
    if isinstance(expr, ast.BinOp):
        return any(_arithmetic_of(host, side, names, depth + 1) for side in (expr.left, expr.right))
    if isinstance(expr, ast.Call) and (host.model.qualify(expr.func) or "").endswith("cdiv"):
        return any(_arithmetic_of(host, arg, names, depth + 1) for arg in expr.args)
    return False


def _fixed_build(host: HostScope, value: ast.expr | None, depth: int = 0) -> bool:
    """Whether a tensor is built in the launching function by a call that takes no size from the input: its
    arguments only literals, module constants, devices and dtypes (`fp8_scale_candidates(x.device)`, a
    table of 126 values), then cast, copied or scaled (`* amax`)."""
    if value is None or depth > 4:
        return False
    if isinstance(value, ast.Name):
        return _fixed_build(host, host.value_of(value.id), depth + 1)
    if isinstance(value, ast.BinOp):
        return _fixed_build(host, value.left, depth + 1) or _fixed_build(host, value.right, depth + 1)
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr in SAME_SIZE:
        return _fixed_build(host, func.value, depth + 1)
    if isinstance(func, ast.Attribute) and host.model.qualify(func) is None:
        return False  # a method of some object: its size may come from the object
    arguments = [*value.args, *(k.value for k in value.keywords)]
    return bool(arguments) and all(_size_free(host, a) for a in arguments)


def _size_free(host: HostScope, node: ast.expr) -> bool:
    """A literal, a module constant, a device or a dtype: nothing that carries a size of the input."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Attribute):
        return node.attr in ("device", "dtype") or (host.model.qualify(node) or "").startswith("torch.")
    return isinstance(node, ast.Name) and node.id in host.model.constants


def _strength(param: str, origin: Origin) -> int:
    """How directly a varying value says it is a problem size: named as a token, row or sequence count (by
    the kernel's parameter or a host name), then rows of a flattened tensor or an element count, then a bare
    leading dimension (the weakest: also the size of a table or buffer)."""
    if count_like(param) or any(count_like(n) for n in origin.all_names()) or sequence_length(origin):
        return 2
    return 0 if _leading_dimension_only(origin) else 1


def _tensors(origin: Origin) -> set[str]:
    """The tensors whose shape, numel or len a value comes from."""
    return ({origin.tensor} if origin.tensor else set()).union(*(_tensors(part) for part in origin.parts))


def _leading_dimension_only(origin: Origin) -> bool:
    """A value known to vary only because it is some tensor's `shape[0]` (no name, no flattening says so)."""
    return origin.kind == "shape" and origin.index == 0 and not origin.rows \
        and not (origin.names and count_like(origin.names[0])) and not sequence_length(origin)


def _weight_beside_features(origin: Origin, others: list[Origin]) -> bool:
    """Whether the launch passes another tensor's last dimension and no other size of it (an activation's
    features, `K = x.shape[-1]` or `d` of `batch, d = x.shape`), and no other size of this value's tensor: then this tensor is the other
    operand of a linear map, a weight laid out [out, in], and its leading dimension the output features,
    fixed per model. Not when the features come from a tensor named as a weight (`weight.shape[-1]` beside
    `x.shape[0]` of a row norm: there the leading dimension is the activation's)."""
    sizes: dict[str, set[bool]] = {}  # tensor -> whether each of its sizes passed is its last dimension
    for other in others:
        for part in _sized(other):
            sizes.setdefault(part.tensor or "", set()).add(part.kind == "shape" and part.last)
    return origin.tensor not in sizes and any(
        kinds == {True} and not table(tensor) for tensor, kinds in sizes.items())


def _sized(origin: Origin) -> list[Origin]:
    """The shape, numel and len origins a value is made of."""
    own = [origin] if origin.tensor is not None else []
    return own + [s for part in origin.parts for s in _sized(part)]


def _derived_from(expr: ast.expr, compiled: set[str]) -> bool:
    """Whether an argument is computed only from values that other constexprs of the launch must take at
    compile time (tile sizes): it adds no compilation of its own."""
    called = {id(n.func) for n in walk(expr) if isinstance(n, ast.Call)}
    names = {n.id for n in walk(expr) if isinstance(n, ast.Name) and id(n) not in called}
    return bool(names) and names <= compiled


def _do_not_specialize(ctx: MatchContext) -> Verdict | None:
    call = ctx.ast_node(types=(ast.Call,))
    if not isinstance(call, ast.Call) or ctx.model.qualify(call.func) != "triton.jit":
        return None
    keyword = next((k for k in call.keywords if k.arg == "do_not_specialize"), None)
    function = ctx.model.function_at(call.lineno)
    if keyword is None or function is None or not isinstance(keyword.value, (ast.List, ast.Tuple)):
        return None
    names = [p.name for p in function.params]
    for element in keyword.value.elts:
        value = element.value if isinstance(element, ast.Constant) else None
        name = names[value] if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names) else value
        spec = function.param(name) if isinstance(name, str) else None
        if spec is not None and spec.is_constexpr:
            problem = (f"do_not_specialize names `{ctx.file.text_of(element)}`, a tl.constexpr parameter: "
                       "Triton raises CompilationError")
            return Verdict(vars={"kernel": function.name, "problem": problem},
                           severity="error", span=ctx.file.span_of(element),
                           notes=[f"Evidence: {evidence.fixture_phrase(DO_NOT_SPECIALIZE)}.",
                                  f"Either drop `tl.constexpr` from `{name!s}` (then do_not_specialize applies) or "
                                  "drop it from do_not_specialize."])
    return None


def _has_launch_or_jit(model: ModuleModel, target: int | None) -> bool:
    return bool(model.launches) or bool(model.functions)


@condition("constexpr-problem-size", provides=("kernel", "problem"), applies=_has_launch_or_jit)
def constexpr_problem_size(ctx: MatchContext) -> Verdict | None:
    """Either a launch that feeds a tl.constexpr parameter the kernel does not use as a tile size from a
    value that changes with the input (a shape, numel, len, a token or row count; not bucketed by
    next_power_of_2), or `@triton.jit(do_not_specialize=[...])` naming a tl.constexpr parameter."""
    parent = ctx.node.parent()
    if ctx.node.kind() == "decorator" or parent is not None and parent.kind() == "decorator":
        return _do_not_specialize(ctx)
    return ctx.first_verdict(lambda launch, kernel: _launch_problem(ctx, launch, kernel))
