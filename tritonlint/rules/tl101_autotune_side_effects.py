"""TL101: an autotuned kernel whose side effects pile up while the autotuner benchmarks it.

Semantics from triton/runtime/autotuner.py (Triton 3.6): with more than one config, the first call of each
key runs every config many times (`do_bench`) on the caller's own arguments, then runs the chosen one.
`reset_to_zero` names arguments zeroed before each of those runs and once more before the real one;
`restore_value` names arguments copied before each benchmark run and restored after it. A pre_hook passed
to `triton.autotune` replaces both (its own code decides); a config's pre_hook runs before each run too.
"""

from __future__ import annotations

import ast

from tritonlint import evidence
from tritonlint.analysis.call_edits import add_keyword, append_to_list
from tritonlint.analysis.host import HostScope
from tritonlint.analysis.host_tensors import allocates
from tritonlint.analysis.kernel import launches_of
from tritonlint.analysis.launches import bind_launch
from tritonlint.analysis.model import CONFIG, Autotune, JitFunction, LaunchSite, ModuleModel
from tritonlint.analysis.project import Project, defining_module
from tritonlint.analysis.side_effects import Effect, effects_of, kernel_effects
from tritonlint.context import MatchContext, RawEdits, Verdict, condition, fixer
from tritonlint.walk import walk

_VERBS = {"atomic_add": "atomically adds into", "atomic_sub": "atomically subtracts from",
          "atomic_xchg": "atomically exchanges values in", "atomic_cas": "compare-and-swaps into",
          "store": "updates in place", "scatter": "updates in place"}


def _kernel_of(model: ModuleModel, call: ast.Call) -> JitFunction | None:
    return next((f for f in model.functions if f.autotune is not None and f.autotune.node is call), None)


def _run_hooked(model: ModuleModel, kernel: JitFunction) -> bool:
    """The module attaches a pre-run hook to the kernel (`kernel.fn.add_pre_run_hook(prepare)`): Triton runs it
    before every launch, each benchmark run included, so the author's own code decides what each run starts from."""
    receivers = {kernel.name, f"{kernel.name}.fn"}
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and node.func.attr == "add_pre_run_hook" and ast.unparse(node.func.value) in receivers
               for node in walk(model.tree))


def _has_autotune(model: ModuleModel, target: int | None) -> bool:
    return any(f.autotune is not None for f in model.functions)


def _hook_names(model: ModuleModel, hook: ast.expr) -> tuple[set[str], set[str]] | None:
    """The argument names a config pre_hook (`lambda nargs: nargs["c_ptr"].zero_()`, or a module-level
    function) mentions, and those it mentions only in statements that rebind entries of its dict; None when its
    code is not in view."""
    if isinstance(hook, ast.Constant) and hook.value is None:
        return set(), set()
    body: ast.AST | None = hook if isinstance(hook, ast.Lambda) else None
    if isinstance(hook, ast.Name):
        body = next((n for n in model.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and n.name == hook.id), None)
    if body is None:
        return None
    # `nargs["p"] = nargs["p"].clone()` only rebinds the hook's dict: the kernel still runs on the caller's
    # tensor (lion-pytorch's hook; round R62s measured `exp_avg` off by 6.1), so such a statement resets nothing.
    rebinding = {id(n) for statement in walk(body) if isinstance(statement, ast.Assign)
                 and all(isinstance(t, ast.Subscript) for t in statement.targets) for n in walk(statement)}
    strings = [(n.value, id(n) in rebinding) for n in walk(body) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return {text for text, rebinds in strings if not rebinds}, {text for text, rebinds in strings if rebinds}


def _hooked(model: ModuleModel, autotune: Autotune) -> tuple[set[str], set[str]] | None:
    """The arguments the configs' pre_hooks may reset, and those they only rebind in their dict; None when
    some hook's code is not in view."""
    names: set[str] = set()
    rebound: set[str] = set()
    seen = False
    for node in walk(autotune.node) if autotune.node is not None else ():
        if isinstance(node, ast.Call) and model.qualify(node.func) == CONFIG:
            hook = next((k.value for k in node.keywords if k.arg == "pre_hook"), None)
            if hook is None and len(node.args) >= 7:
                hook = node.args[6]
            if hook is not None:
                found = _hook_names(model, hook)
                if found is None:
                    return None
                names |= found[0]
                rebound |= found[1]
                seen = True
    if any(c.has_pre_hook for c in autotune.configs or ()) and not seen:
        return None  # a hook the walk above did not see (configs from a helper function)
    return names, rebound


def _listed(model: ModuleModel, autotune: Autotune, keyword: str) -> list[str] | None:
    """The names of a reset_to_zero / restore_value argument; None when it is there but cannot be read."""
    if keyword not in autotune.keywords:
        return []
    names = getattr(autotune, keyword)  # the model follows a module-level list too
    return list(names) if names or _list_node(autotune, keyword) is not None else None


def _list_node(autotune: Autotune, keyword: str) -> ast.List | ast.Tuple | None:
    """The list display written as the keyword's value in the decorator."""
    call = autotune.node
    node = next((k.value for k in call.keywords if k.arg == keyword), None) if call is not None else None
    return node if isinstance(node, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts) else None


def _splats_known(model: ModuleModel, call: ast.Call) -> bool:
    """Every `**options` of the decorator is a dict of this module without the lists or hooks in it
    (an imported dict may hold reset_to_zero: unknown, so no finding)."""
    for keyword in call.keywords:
        if keyword.arg is not None:
            continue
        value = model._resolve_local(keyword.value)
        options = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
        for option in options:
            option = model._resolve_local(option)
            if not isinstance(option, ast.Dict) or any(
                    not isinstance(k, ast.Constant) or k.value in _LIST_OR_HOOK for k in option.keys):
                return False
    return True


def _configs_traceable(model: ModuleModel, project: Project, call: ast.Call) -> bool:
    """The configs name code a reader can follow: a list display or comprehension, or a name, factory or
    module attribute that this module defines or imports from a module of the project (and sums of those).
    Configs read from an object or a function's parameter (`configs=kernels_config.backward_configs`, a
    configuration handed in at run time), or made by a package outside the run (`from qattn...configs import
    int8_dynamic_configs`), lead to code not in view, whose config pre_hooks may reset the buffer."""
    configs = next((k.value for k in call.keywords if k.arg == "configs"), call.args[0] if call.args else None)
    relative = {alias.asname or alias.name for node in walk(model.tree) if isinstance(node, ast.ImportFrom) and node.level
                for alias in node.names}

    def in_view(name: str) -> bool:
        if name in model.local_names or name in relative:
            return True  # this module's own code, or its package's (`from .autotuning import get_dw_configs`)
        dotted = model.imports.get(name)
        if dotted is None:
            return False
        project.consulted.add(dotted)  # a cached result holds while that module stays (or stays out of) the run
        return defining_module(dotted, project.linted_modules) is not None

    def traceable(node: ast.expr | None) -> bool:
        if isinstance(node, ast.BinOp):
            return traceable(node.left) and traceable(node.right)
        if isinstance(node, ast.Call):
            node = node.func
        if isinstance(node, (ast.List, ast.Tuple, ast.ListComp)):
            return True
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and in_view(node.id)

    return traceable(configs)


SPLIT_K, IN_PLACE = "TL101-splitk-atomic-add", "TL101-inplace-axpy"  # the fixture of each kind of write
_LIST_OR_HOOK = frozenset({"reset_to_zero", "restore_value", "pre_hook", "post_hook"})


def _attaches_pre_hook(model: ModuleModel) -> bool:
    """Whether the module's code may attach a pre_hook to a config: a `pre_hook=` that is not None, an
    assignment to a `.pre_hook` attribute, or the name as a string (a dict key, `setattr`); `pre_hook=None` in a
    config, or the word in a comment, attaches none."""
    def attaches() -> bool:
        for node in walk(model.tree):
            if isinstance(node, ast.keyword) and node.arg == "pre_hook" \
                    and not (isinstance(node.value, ast.Constant) and node.value.value is None):
                return True
            if isinstance(node, ast.Attribute) and node.attr == "pre_hook" and isinstance(node.ctx, ast.Store):
                return True
            if isinstance(node, ast.Constant) and node.value == "pre_hook":  # `**{"pre_hook": f}`, setattr
                return True
        return False

    return model.memoized(("attaches-pre-hook",), attaches)


def _warmed_up_on_throwaway(model: ModuleModel, kernel: JitFunction) -> bool:
    """A function of the module launches the kernel twice, once with every argument the kernel writes bound to
    a throwaway buffer: a name the function binds once, to a new allocation, and reads nowhere but in that launch
    (cvmm's `scratch = torch.empty_like(out)`, launched once per new shape before the real call). That launch runs
    only to let the autotuner benchmark on scratch; the real launch that follows with the same key takes the
    cached config."""
    written = effects_of(model, kernel.node).writes if kernel.node is not None else set()
    launches = launches_of(model, kernel)
    for launch in launches:
        host = HostScope.of(model, launch.scope)
        if host.node is None or not written or sum(other.scope is launch.scope for other in launches) < 2:
            continue
        values = bind_launch(model, launch, kernel).values
        if all(_throwaway(host, launch, values.get(param)) for param in written):
            return True
    return False


def _throwaway(host: HostScope, launch: LaunchSite, value: ast.expr | None) -> bool:
    """A name the launching function binds once, to a new allocation, and reads only in this launch."""
    return isinstance(value, ast.Name) and allocates(host, host.value_of(value.id)) and host.reads.get(value.id) \
        == sum(isinstance(n, ast.Name) and n.id == value.id for n in walk(launch.node))


def _describe(effect: Effect) -> str:
    where = f"in `{effect.via}`, called at line {effect.node.lineno}" if effect.via else f"line {effect.node.lineno}"
    if effect.kind == "in-place":
        return f"updates `{effect.param}` in place ({where})"
    return f"{_VERBS.get(effect.op, 'atomically updates')} `{effect.param}` ({effect.op}, {where})"


@condition("autotune-side-effects", provides=("kernel", "configs", "effects", "lists"), applies=_has_autotune)
def autotune_side_effects(ctx: MatchContext) -> Verdict | None:
    """A @triton.autotune with more than one config (or configs that cannot be counted) over a kernel that
    atomically adds into, or updates in place, memory behind a pointer argument that neither
    `reset_to_zero` nor `restore_value` names."""
    call = ctx.ast_node(types=(ast.Call,))
    kernel = _kernel_of(ctx.model, call) if isinstance(call, ast.Call) else None
    if kernel is None or kernel.autotune is None or kernel.node is None:
        return None
    autotune = kernel.autotune
    if autotune.one_config:
        return None  # one config: no benchmarking
    if {"pre_hook", "post_hook"} & set(autotune.keywords) or len(call.args) > 3:  # type: ignore[union-attr]
        return None  # the author's own hooks replace reset_to_zero/restore_value; positional lists: rare
    if _run_hooked(ctx.model, kernel):
        return None
    if not _splats_known(ctx.model, call):  # type: ignore[arg-type]
        return None
    if autotune.configs is None and not _configs_traceable(ctx.model, ctx.project, call):  # type: ignore[arg-type]
        return None  # configs read from an object or a parameter: their pre_hooks may reset the buffer
    if (autotune.configs is None or autotune.has_prune) and _attaches_pre_hook(ctx.model):
        return None  # configs built (or pruned) by code that may attach a pre_hook resetting the buffer
    hooks = _hooked(ctx.model, autotune)
    reset, restore = _listed(ctx.model, autotune, "reset_to_zero"), _listed(ctx.model, autotune, "restore_value")
    if hooks is None or reset is None or restore is None:
        return None
    hooked, rebound_names = hooks
    pointers = {p.name for p in kernel.params if not p.is_constexpr}
    # An argument in reset_to_zero is zeroed before every run, the real one included: its atomics and its
    # in-place updates (an accumulator the caller zero-fills, read and written back) start from the same zeros.
    effects = [e for e in kernel_effects(ctx.model, kernel)
               if e.param in pointers and e.param not in hooked and e.param not in restore and e.param not in reset]
    if not effects or _warmed_up_on_throwaway(ctx.model, kernel):
        return None
    in_place = {e.param for e in effects if e.kind == "in-place"}
    restore_names = [p.name for p in kernel.params if p.name in in_place]
    reset_names = [p.name for p in kernel.params if p.name in {e.param for e in effects} - in_place]
    advice = []
    if reset_names:
        advice.append("reset_to_zero=[" + ", ".join(f"\"{n}\"" for n in reset_names) + "]")
    if restore_names:
        advice.append("restore_value=[" + ", ".join(f"\"{n}\"" for n in restore_names) + "]")
    described = [_describe(e) for e in effects if e.kind == "in-place" or e.param not in in_place]
    count = f"{len(autotune.configs)} configs" if autotune.configs is not None else "configs that cannot be counted"
    benchmarks = ("While it benchmarks (the first call of each key), the autotuner runs every config many times on "
                  "the caller's own buffers and then runs the winner, so ")
    notes = [f"`{kernel.name}` {'; '.join(described)}; the autotuner benchmarks {count}."]
    if reset_names:
        notes.append(benchmarks + f"the buffer ends up holding what all those runs added, a counter or lock as much as a result ({evidence.fixture_phrase(SPLIT_K)}).")
    if restore_names:
        notes.append(("Likewise, " if reset_names else benchmarks) + "each run applies the in-place update again to "
                     f"what the one before left ({evidence.fixture_phrase(IN_PLACE)}).")
    rebound = [p.name for p in kernel.params if p.name in rebound_names and p.name in in_place | set(reset_names)]
    if rebound:
        notes.append("The configs' pre_hook only rebinds " + ", ".join(f"`{n}`" for n in rebound) + " in its dict "
                     "(`nargs[name] = ...clone()`): the kernel still runs on the caller's tensors, so nothing is "
                     "restored.")
    applicability = None
    optional = _passed_none(ctx, kernel, [*reset_names, *restore_names])
    if optional:
        name, line = optional[0]
        notes.append(f"`{name}` may be None at the launch at line {line}: the autotuner clones (or zeroes) every "
                     "argument these lists name, and None has neither; list it only where it is a tensor, or reset "
                     "and restore it in a `pre_hook` that skips None.")
        applicability = "unsafe"
    if reset_names:
        notes.append("reset_to_zero also zeroes the buffer once more before the real run of that first call: "
                     "if the caller passes an accumulator with initial values (a bias), name it in restore_value "
                     "instead.")
        applicability = "unsafe"
    start, end = ctx.file.span_of(call)  # type: ignore[arg-type]
    return Verdict(
        vars={"kernel": kernel.name, "configs": count, "effects": "; ".join(described),
              "lists": " and ".join(advice)},
        span=(start, end),
        related=[ctx.file.span_of(e.node) for e in effects],
        applicability=applicability,
        data={"autotune": autotune, "reset": reset_names, "restore": restore_names},
        notes=notes,
    )


def _passed_none(ctx: MatchContext, kernel: JitFunction, names: list[str]) -> list[tuple[str, int]]:
    """(argument, launch line) for each of `names` that a launch of the kernel in this module may pass None."""
    found = []
    for launch in launches_of(ctx.model, kernel):
        host = HostScope.of(ctx.model, launch.scope)
        values = bind_launch(ctx.model, launch, kernel).values
        found += [(name, launch.line) for name in names if name in values and host.may_be_none(values[name])]
    return found


@fixer("autotune-side-effects-lists")
def autotune_side_effects_lists(ctx: MatchContext, verdict: Verdict) -> RawEdits | None:
    """Name the arguments in reset_to_zero (atomics) or restore_value (in-place updates): append to the
    existing list display, or add the keyword."""
    autotune: Autotune = verdict.data["autotune"]
    call = autotune.node
    if call is None:
        return None
    edits = []
    for keyword, names in (("reset_to_zero", verdict.data["reset"]), ("restore_value", verdict.data["restore"])):
        if not names:
            continue
        if keyword in autotune.keywords:
            node = _list_node(autotune, keyword)
            if node is None or ctx.file.text_of(node)[:1] not in "[(":
                verdict.notes.append(f"No fix offered: `{keyword}` is not a list written in the decorator.")
                return None
            edits.append(append_to_list(ctx.file, node, names))
        else:
            quote = "'" if "'" in ctx.file.text_of(call) and '"' not in ctx.file.text_of(call) else '"'
            items = ", ".join(f"{quote}{n}{quote}" for n in names)
            edits.append(add_keyword(ctx.file, call, f"{keyword}=[{items}]"))
    if len({e[0] for e in edits}) != len(edits):  # two insertions at one place: write them as one
        edits = [(edits[0][0], edits[0][1], "".join(e[2] for e in edits))]
    return edits
