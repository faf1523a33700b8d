"""TL106: a host TensorDescriptor with a block shape fixed on the host, passed to an autotuned kernel whose
configs tune the block sizes the kernel uses with it.

Semantics from Triton 3.6: a host `TensorDescriptor` carries its block shape into the kernel's signature; a
`desc.load(...)` returns a tile of that shape whatever BLOCK_* the config sets, so a config whose blocks
differ builds tiles of mismatched shapes and fails to compile (CompilationError) while the autotuner
benchmarks it. The tutorials' remedy is a config `pre_hook` that sets `nargs["a_desc"].block_shape` from
the config's meta-parameters before each run.
"""

from __future__ import annotations

import ast

from tritonlint.analysis.configs import pre_hook_block_shapes
from tritonlint.analysis.flow import flow_of
from tritonlint.analysis.host import HostScope
from tritonlint.analysis.model import JitFunction, LaunchSite, ModuleModel, TuneConfig
from tritonlint.analysis.names import is_block_name
from tritonlint.analysis.project import jit_function_in
from tritonlint.analysis.triton_names import DESCRIPTOR_METHODS, HOST_DESCRIPTOR, TL
from tritonlint.context import MatchContext, RawEdits, Verdict, condition, fixer
from tritonlint.walk import walk

_DESCRIPTOR_CALLS = frozenset({f"{TL}.load_tensor_descriptor", f"{TL}.store_tensor_descriptor"})


def _block_shape(model: ModuleModel, call: ast.Call) -> ast.expr | None:
    """The block shape a host descriptor construction fixes: `TensorDescriptor.from_tensor(t, block)` or
    `TensorDescriptor(base, shape, strides, block_shape)`."""
    name = model.qualify(call.func)
    keyword = next((k.value for k in call.keywords if k.arg == "block_shape"), None)
    if name == f"{HOST_DESCRIPTOR}.from_tensor":
        return keyword or (call.args[1] if len(call.args) > 1 else None)
    if name == HOST_DESCRIPTOR:
        return keyword or (call.args[3] if len(call.args) > 3 else None)
    return None


def descriptor_blocks(model: ModuleModel, kernel: JitFunction, param: str, tuned: set[str]) -> list[list[str]]:
    """For each access of a descriptor parameter in the kernel (`desc.load([off_m, k])`), the tuned block
    sizes each offset follows (`off_m = pid_m * BLOCK_M`, `for k in range(0, K, BLOCK_K)`)."""
    node = kernel.node
    if node is None:
        return []
    flow = flow_of(node)

    def reached(expr: ast.AST, depth: int = 0) -> set[str]:
        found: set[str] = set()
        for sub in walk(expr):
            if not isinstance(sub, ast.Name):
                continue
            found.add(sub.id)
            if depth >= 6:
                continue
            for definition in flow.reaching(sub):
                if definition.kind in ("assign", "augassign") and definition.value is not None:
                    found |= reached(definition.value, depth + 1)
                elif definition.kind == "loop" and isinstance(definition.stmt, ast.For):
                    found |= reached(definition.stmt.iter, depth + 1)
        return found

    accesses = []
    for call in walk(node):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in DESCRIPTOR_METHODS and isinstance(func.value, ast.Name) \
                and func.value.id == param and call.args:
            offsets = call.args[0]
        elif len(call.args) > 1 and isinstance(call.args[0], ast.Name) and call.args[0].id == param \
                and model.qualify(func) in _DESCRIPTOR_CALLS:
            offsets = call.args[1]
        else:
            continue
        if isinstance(offsets, (ast.List, ast.Tuple)):
            accesses.append([sorted(reached(element) & tuned) for element in offsets.elts])
    return [[names[0] if len(names) == 1 else "" for names in access] for access in accesses
            if any(names for names in access)]


def _host_descriptor(model: ModuleModel, host: HostScope, expr: ast.expr | None) -> ast.Call | None:
    """The host TensorDescriptor an argument passes: its single value, or the one descriptor among the values
    the branches give it (`desc_a = TensorDescriptor(...)` where host descriptors are supported, the raw tensor
    elsewhere: the launch gets the descriptor on that path)."""
    if isinstance(expr, ast.Name):
        values = host.values.get(expr.id, []) if host.node is not None else []
        made = [v for v in values if isinstance(v, ast.Call) and _block_shape(model, v) is not None]
        expr = made[0] if len(made) == 1 else host.value_of(expr.id)
    return expr if isinstance(expr, ast.Call) and _block_shape(model, expr) is not None else None


def _applies(model: ModuleModel, target: int | None) -> bool:
    return "TensorDescriptor" in (model.text or "TensorDescriptor") and bool(model.launches)


@condition("autotune-frozen-descriptor", provides=("kernel", "descriptors", "blocks"), applies=_applies)
def autotune_frozen_descriptor(ctx: MatchContext) -> Verdict | None:
    """A launch of an autotuned kernel that passes host TensorDescriptors whose block shape is fixed on the
    host, while the configs vary the BLOCK_* the kernel uses with them and no config pre_hook sets it."""
    return ctx.first_verdict(lambda launch, kernel: _frozen_descriptors(ctx, launch, kernel))


def _frozen_descriptors(ctx: MatchContext, launch: LaunchSite, kernel: JitFunction) -> Verdict | None:
    if kernel.autotune is None or not kernel.autotune.configs:
        return None
    autotune = kernel.autotune
    if autotune.configs is None or len(autotune.configs) < 2 or "pre_hook" in autotune.keywords:
        return None  # one config: nothing benchmarked
    tuned = {name for name in autotune.tuned_meta if is_block_name(name) and autotune.varies(name)}
    if not tuned:
        return None
    host = HostScope.of(ctx.model, launch.scope)
    bound: list[tuple[str, ast.expr | None]] = []
    positional = [a for a in launch.args if a.name is None]
    if any(isinstance(a.node, ast.Starred) for a in positional):
        return None
    bound += [(p.name, a.node) for p, a in zip(kernel.params, positional)]
    bound += [(a.name, a.node) for a in launch.args if a.name and a.name != "**"]
    # A kernel of another module comes as a summary: read its body in the module that defines it.
    defined = (ctx.model, kernel) if kernel.node is not None else jit_function_in(ctx.project.module_model, kernel.qualname)
    if defined is None:
        return None
    hooked = [pre_hook_block_shapes(c.pre_hook_node) for c in autotune.configs if c.has_pre_hook]
    found = []
    for param, expr in bound:
        descriptor = _host_descriptor(ctx.model, host, expr)
        if descriptor is None or any(sets is None or param in sets for sets in hooked):
            continue  # a config's pre_hook sets (or may set) its block shape
        accesses = descriptor_blocks(*defined, param, tuned)
        if accesses:
            found.append((param, descriptor, max(accesses, key=lambda a: sum(bool(n) for n in a))))
    if not found:
        return None
    shown = ", ".join(f"`{param}` {ctx.file.text_of(_block_shape(ctx.model, call))}" for param, call, _ in found)  # type: ignore[arg-type]
    names = sorted({n for _, _, dims in found for n in dims if n})
    blocks = ", ".join(f"{n} ({'/'.join(str(v) for v in _values(autotune.configs, n))})" for n in names)
    return Verdict(
        vars={"kernel": ctx.launched_name(launch, kernel), "descriptors": shown, "blocks": blocks},
        related=[ctx.file.span_of(call) for _, call, _ in found],
        data={"found": found, "kernel": kernel},
        notes=[f"Descriptors built at line(s) {', '.join(str(call.lineno) for _, call, _ in found)}. A host descriptor's "
               "block shape is part of the kernel's signature: a config whose BLOCK_* differ builds tiles of other "
               "shapes and fails to compile while the autotuner benchmarks it."],
    )


def _values(configs: list[TuneConfig], name: str) -> list[object]:
    values = {c.meta.get(name) for c in configs if name in c.meta}
    return sorted(values, key=lambda v: (not isinstance(v, int), v if isinstance(v, int) else 0, str(v)))


def _shared_pre_hook(ctx: MatchContext, kernel: JitFunction) -> ast.FunctionDef | None:
    """The one pre_hook function of this module that every config passes, where it takes `nargs`."""
    configs = kernel.autotune.configs if kernel.autotune is not None else None
    hooks = {id(c.pre_hook_node): c.pre_hook_node for c in configs or []}
    if len(hooks) != 1:
        return None
    (hook,) = hooks.values()
    return hook if hook is not None and hook.args.args and hook in ctx.model.tree.body else None


Frozen = tuple[str, ast.Call, list[str]]  # a descriptor parameter, its host call, the tuned block per dimension ("": none)


def _assignments(verdict: Verdict, found: list[Frozen], nargs: str, indent: str) -> list[str]:
    """`nargs["a_desc"].block_shape = [nargs["BLOCK_M"], ...]` for each frozen descriptor; a dimension no config
    tunes keeps the descriptor's own value (and a note says so)."""
    lines = []
    for param, _, dims in found:
        shape = ", ".join(f'{nargs}["{n}"]' if n else f'{nargs}["{param}"].block_shape[{i}]' for i, n in enumerate(dims))
        lines.append(f'{indent}{nargs}["{param}"].block_shape = [{shape}]')
        kept = [str(i) for i, n in enumerate(dims) if not n]
        if kept:
            verdict.notes.append(f"`{param}` keeps its host block size in dimension {', '.join(kept)}: no config "
                                 "block was found for it there.")
    return lines


@fixer("autotune-descriptor-pre-hook")
def autotune_descriptor_pre_hook(ctx: MatchContext, verdict: Verdict) -> RawEdits | None:
    """The config pre_hook that sets each descriptor's block_shape from the config (shown, never applied),
    as whole lines before the kernel's decorators, where the configs can name it; a dimension no config
    tunes keeps the descriptor's own value."""
    found = verdict.data["found"]
    kernel: JitFunction = verdict.data["kernel"]
    if kernel.node is None:
        return None
    hook = _shared_pre_hook(ctx, kernel)
    if hook is not None:  # the configs' own pre_hook sets the others: add these to it
        nargs = hook.args.args[0].arg
        lines = _assignments(verdict, found, nargs, ctx.file.lines.indentation(hook.body[0].lineno))
        verdict.notes.append(f"The configs' pre_hook `{hook.name}` (line {hook.lineno}) sets other descriptors' block "
                             "shapes, not these: the suggestion adds them to it.")
        last = hook.body[-1]
        if isinstance(last, ast.Return):  # before the hook's closing `return`
            start = ctx.file.lines.starts[last.lineno - 1]
            return [(start, start, "\n".join(lines) + "\n")]
        row = last.end_lineno or last.lineno
        if row < ctx.file.lines.row_count:
            end = ctx.file.lines.starts[row]
            return [(end, end, "\n".join(lines) + "\n")]
        return [(len(ctx.file.text), len(ctx.file.text), "\n" + "\n".join(lines) + "\n")]  # the file's last line
    name = f"_{kernel.name.strip('_')}_block_shapes"
    indent = ctx.file.lines.indentation(kernel.node.lineno)  # the kernel's own, tabs or spaces
    lines = [f"{indent}def {name}(nargs):  # pass pre_hook={name} to every triton.Config",
             *_assignments(verdict, found, "nargs", indent + "    ")]
    first = min([d.lineno for d in kernel.node.decorator_list] + [kernel.node.lineno])
    start = ctx.file.lines.starts[first - 1]
    return [(start, start, "\n".join(lines) + "\n\n\n")]
