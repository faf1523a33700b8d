"""TL004: launches of @triton.autotune kernels that fight the tuner.

Semantics taken from triton/runtime/autotuner.py (Triton 3.6): `Autotuner.run` calls
`self.fn.run(*args, **kwargs, **config.all_kwargs())`, where `all_kwargs()` is the config's meta dict plus
num_warps, num_ctas and num_stages (always set). A launch keyword that a config also sets therefore raises
TypeError ("got multiple values for keyword argument"); with several configs, `_bench` raises first:
ValueError("Conflicting meta-parameters: ..."). A tuned meta-parameter passed positionally collides the same
way in the kernel's argument binder. The grid, when callable, receives the bound arguments including the
chosen config's meta-parameters (META); a grid computed on the host cannot follow the chosen config.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from tritonlint import evidence
from tritonlint.analysis.consteval import Value
from tritonlint.analysis.flow import flow_of
from tritonlint.analysis.host import HostScope, remove_arguments
from tritonlint.analysis.launches import bind_launch
from tritonlint.analysis.model import (
    Autotune,
    JitFunction,
    LaunchArg,
    LaunchSite,
    ModuleModel,
)
from tritonlint.analysis.names import is_block_name, last_name, name_words
from tritonlint.context import MatchContext, RawEdits, Verdict, condition, fixer
from tritonlint.walk import walk

# Config.all_kwargs() passes these for every config, so a launch that passes them always collides.
CONFIG_LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas")
_CDIV = {"triton.cdiv", "triton.language.cdiv"}


def config_refs(autotune: Autotune, name: str, verb: str) -> str:
    """'configs #1-#4 (1024/2048/4096/8192) set': the configs that set a meta-parameter, its values, and the
    verb agreeing with them."""
    indices = [c.index for c in autotune.configs or () if name in c.meta]
    values = {c.meta[name] for c in autotune.configs or () if name in c.meta}
    shown = "/".join("?" if v is None else str(v) for v in sorted(values, key=lambda v: (type(v).__name__, str(v).zfill(12))))
    return f"{_numbers(indices)} ({shown}) {verb if len(indices) > 1 else verb + 's'}"


def _numbers(indices: list[int]) -> str:
    if len(indices) == 1:
        return f"config #{indices[0] + 1}"
    runs: list[list[int]] = []
    for index in indices:
        if runs and index == runs[-1][-1] + 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    parts = [f"#{r[0] + 1}" if len(r) == 1 else f"#{r[0] + 1}-#{r[-1] + 1}" for r in runs]
    return "configs " + ", ".join(parts)


@dataclass
class FrozenGrid:
    """A host value in the grid that stands for a tuned meta-parameter."""
    node: ast.expr  # the divisor in the grid
    meta: str  # the tuned meta-parameter it stands for
    host: str  # how the message shows the host value
    editable: bool  # inside the grid expression the fix rewrites
    source: str = ""  # where the host value comes from, for the note


@dataclass
class GridInfo:
    """The expression a launch's grid stands for, and what the fix may rewrite."""
    axes: list[ast.expr]  # one expression per grid axis, or the whole grid expression when not a tuple
    meta_param: str | None  # the parameter name of a grid lambda/function
    editable: ast.expr | None  # the node the fix may replace (inline grid, or a grid variable's single value)
    tupled: bool  # whether axes are the grid's axes (their positions match tl.program_id's axis)


@dataclass
class LaunchProblems:
    """A launch's arguments that conflict with the autotuned values, and its frozen grids."""
    conflicts: list[tuple[LaunchArg, tuple[str, str]]]  # (argument, (what it passes, what then fails))
    frozen: list[FrozenGrid]


def _tuned(autotune: Autotune) -> set[str]:
    """Meta-parameters the benchmarked configs set: any config's, or every config's when a pruning function
    may drop some before benchmarking."""
    configs = autotune.configs or []
    if autotune.has_prune:
        return set.intersection(*(set(c.meta) for c in configs)) if configs else set()
    return autotune.tuned_meta


# ---- (a) conflicting meta-parameters -------------------------------------------------------------------
def conflicts(model: ModuleModel, kernel: JitFunction, launch: LaunchSite) -> list[tuple[LaunchArg, tuple[str, str]]]:
    autotune = kernel.autotune
    assert autotune is not None
    tuned = _tuned(autotune) if autotune.configs is not None else set()
    found = []
    bound = bind_launch(model, launch, kernel)
    for param in kernel.params:
        if param.name in tuned and param.name in bound.positional:
            arg, text = bound.sources[param.name], ast.unparse(bound.values[param.name])
            found.append((arg, (f"passes {param.name} positionally (`{text}`), which {config_refs(autotune, param.name, 'set')} too",
                                f"the argument binder fails with TypeError (multiple values for '{param.name}')")))
    for arg in launch.args:
        if arg.name in tuned:
            how = ("Triton raises ValueError(\"Conflicting meta-parameters: {0}\") at the first call, while it benchmarks "
                   "the configs" if len(autotune.configs or ()) > 1 else
                   "the call fails with TypeError (multiple values for keyword argument '{0}')").format(arg.name)
            found.append((arg, (f"passes `{arg.name}={arg.text}`, which {config_refs(autotune, arg.name, 'set')} too", how)))
        elif arg.name in CONFIG_LAUNCH_OPTIONS:
            found.append((arg, (f"passes `{arg.name}={arg.text}`, which the autotuner also passes from every config",
                                f"the call fails with TypeError (multiple values for keyword argument '{arg.name}')")))
    return found


# ---- (b) a host grid where the configs tune the block ----------------------------------------------------
def grid_info(ctx: MatchContext, launch: LaunchSite, host: HostScope) -> GridInfo | None:
    grid: ast.expr | None = launch.grid
    editable: ast.expr | None = grid
    if isinstance(grid, ast.Name):
        value = host.value_reaching(grid.id, launch.node.lineno)  # `grid = ...` rebound for each launch
        definition = host.function_def(grid.id)
        if definition is not None:
            returns = [n.value for n in walk(definition) if isinstance(n, ast.Return) and n.value is not None]
            params = definition.args.args
            if len(returns) != 1 or not params:
                return None
            body = _inline_locals(definition, returns[0])
            return _axes(body, params[0].arg, None) if body is not None else None
        used_once = host.reads.get(grid.id, 0) == 1 and host.node is not None and value is not None \
            and grid.id in host.values
        grid, editable = value, (value if used_once else None)
    if isinstance(grid, ast.Lambda):
        params = grid.args.args
        if not params:
            return None
        return _axes(grid.body, params[0].arg, editable)
    if isinstance(grid, (ast.Tuple, ast.List)):
        return _axes(grid, None, editable)
    return None


def _inline_locals(definition: ast.FunctionDef | ast.AsyncFunctionDef, expr: ast.expr) -> ast.expr | None:
    """A grid function's return value with its own local names replaced by the one plain assignment that
    reaches them (`BLOCK_N = META["BLOCK_N"]; return (triton.cdiv(n, BLOCK_N),)` reads META), or None when
    it reads a local that several assignments, an unpacking or a loop may have bound: what that holds is
    not known, so no finding. Parameters and names from the enclosing host function stay as they are."""
    flow = flow_of(definition)

    def inline(node: ast.AST, depth: int) -> ast.AST | None:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            reaching = flow.reaching(node)
            if not reaching or all(d.kind == "param" for d in reaching):
                return copy.copy(node)
            (definition_, *others) = reaching
            if others or definition_.kind != "assign" or definition_.value is None or depth >= 8:
                return None
            return inline(definition_.value, depth + 1)
        copied = copy.copy(node)
        for name, value in ast.iter_fields(node):
            if isinstance(value, ast.AST):
                value = inline(value, depth)
                if value is None:
                    return None
            elif isinstance(value, list):
                items = [inline(item, depth) if isinstance(item, ast.AST) else item for item in value]
                if any(new is None and old is not None for new, old in zip(items, value)):
                    return None
                value = items
            setattr(copied, name, value)
        return copied

    return inline(expr, 0)  # type: ignore[return-value]


def _axes(body: ast.expr, meta_param: str | None, editable: ast.expr | None) -> GridInfo:
    if isinstance(body, (ast.Tuple, ast.List)):
        return GridInfo(list(body.elts), meta_param, editable, tupled=True)
    return GridInfo([body], meta_param, editable, tupled=False)


def divisors(expr: ast.expr, model: ModuleModel) -> list[tuple[ast.expr, ast.expr]]:
    """(size, block-size divisor) pairs in a grid axis: `triton.cdiv(n, B)`, `n // B`, `(n + B - 1) // B`,
    `math.ceil(n / B)`."""
    found = []
    for node in walk(expr):
        if isinstance(node, ast.Call) and len(node.args) == 2:
            name = model.qualify(node.func) or ""
            if name in _CDIV or name.rpartition(".")[2] in ("cdiv", "ceildiv", "div_up", "ceil_div", "round_up_div"):
                found.append((node.args[0], node.args[1]))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            found.append((node.left, node.right))
        elif isinstance(node, ast.Call) and (model.qualify(node.func) or "") == "math.ceil" and node.args \
                and isinstance(node.args[0], ast.BinOp) and isinstance(node.args[0].op, ast.Div):
            found.append((node.args[0].left, node.args[0].right))
    return found


_BLOCK_WORDS = frozenset({"block", "size", "tile"})


def _block_for_size(size: ast.expr, blocks: set[str]) -> str | None:
    """The one tuned block whose name ends in the size's name (`M` -> BLOCK_M, `n_cols` -> BLOCK_SIZE_N is
    not matched: only the size's own last word counts), so that an axis dividing two sizes by host
    constants, `cdiv(M, 128) * cdiv(N, 128)`, pairs each with its block."""
    name = last_name(size) if not isinstance(size, ast.BinOp) else last_name(size.left)
    if name is None:
        return None
    word = name_words(name)[-1:]
    matches = [b for b in blocks if [w for w in name_words(b) if w not in _BLOCK_WORDS] == word]
    return matches[0] if len(matches) == 1 else None


def _mentions(node: ast.AST, name: str | None) -> bool:
    return name is not None and any(isinstance(n, ast.Name) and n.id == name for n in walk(node))


def _meta_keys(node: ast.AST, meta_param: str | None) -> set[str]:
    """META["BLOCK_M"] keys an axis reads."""
    return {n.slice.value for n in walk(node) if isinstance(n, ast.Subscript) and _mentions(n.value, meta_param)
            and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str)}


def frozen_grid(ctx: MatchContext, kernel: JitFunction, launch: LaunchSite, host: HostScope) -> list[FrozenGrid]:
    autotune = kernel.autotune
    assert autotune is not None
    if not autotune.configs:
        return []
    tuned = {name for name in _tuned(autotune) if is_block_name(name)}
    if not tuned:
        return []
    info = grid_info(ctx, launch, host)
    if info is None:
        return []
    evaluator = host.evaluator()
    kwarg_for = {arg.text: arg.name for arg in launch.args if arg.name}
    passed_as = {ast.unparse(value): name for name, value in bind_launch(ctx.model, launch, kernel).values.items()}
    passed_as.update({text: name for text, name in kwarg_for.items()})
    found: list[FrozenGrid] = []
    for axis_index, axis in enumerate(info.axes):
        expressions = [(axis, True)]
        for node in walk(axis):  # follow local names one level: n_blocks = triton.cdiv(n, BLOCK)
            if isinstance(node, ast.Name) and node.id != info.meta_param:
                value = host.value_reaching(node.id, launch.node.lineno)
                if value is not None and host.node is not None and node.id in host.values:
                    expressions.append((value, False))
        covered = _meta_keys(axis, info.meta_param)
        # A divisor of a count that already reads META (`B * (B + 1) // 2` with `B = cdiv(N, META["TILE"])`, a
        # triangle of tiles) divides tiles, not the problem: it is not a block size.
        candidates: list[tuple[ast.expr, ast.expr, bool]] = [
            (size, d, editable) for expr, editable in expressions for size, d in divisors(expr, ctx.model)
            if not any(_mentions(side, info.meta_param) or _meta_keys(side, info.meta_param) for side in (size, d))
        ]
        axis_tiles = set(kernel.tiles.get(axis_index, ())) if info.tupled else set()
        for size, divisor, editable in candidates:
            text = ast.unparse(divisor)
            name = last_name(divisor)
            meta = None
            if name is not None:
                meta = next((t for t in tuned if t.lower() == name.lower()), None)
            if meta is None and passed_as.get(text) in tuned:
                meta = passed_as[text]
            elif meta is None and text in passed_as:
                continue  # the host value is what the launch passes for another (untuned) parameter
            if meta is None:
                free = (axis_tiles & tuned) - covered - {f.meta for f in found}
                looks_like_block = (name is not None and is_block_name(name)) or isinstance(divisor, ast.Constant)
                if len(free) == 1 and looks_like_block:
                    meta = next(iter(free))
                elif len(free) > 1 and looks_like_block:
                    meta = _block_for_size(size, free)
            if meta is None or meta in covered:
                continue
            host_value = evaluator.evaluate(divisor)
            config_values = {c.meta.get(meta) for c in autotune.configs if meta in c.meta}
            if len(config_values) == 1 and (host_value is None or host_value.value in config_values):
                continue  # the configs agree with each other and (as far as can be seen) with the host value
            source = host_value.describe() if host_value is not None and not isinstance(divisor, ast.Constant) else ""
            found.append(FrozenGrid(divisor, meta, f"`{text}`", editable and info.editable is not None, source))
    return found


def grid_fix(ctx: MatchContext, launch: LaunchSite, host: HostScope, frozen: list[FrozenGrid]) -> list[tuple[int, int, str]] | None:
    """Rewrite the grid (inline, or its single-use variable) as a lambda of META with the tuned names."""
    info = grid_info(ctx, launch, host)
    if info is None or info.editable is None or not all(f.editable for f in frozen):
        return None
    target = info.editable
    file = ctx.file
    start, end = file.span_of(target)
    if isinstance(target, ast.Lambda):
        param = target.args.args[0].arg
        body = target.body
    else:
        param = None
        body = target
    meta_name = param if param and not param.startswith("_") else ("meta" if _mentions(body, "META") else "META")
    replacements: list[tuple[int, int, str]] = []
    for item in frozen:
        key = ast.unparse(item.node)
        for node in walk(body):
            # A named host block is replaced wherever the grid reads it; a literal only where it was found
            # (`cdiv(M, 128) * cdiv(N, 128)`: each 128 stands for a different block).
            same = node is item.node or (not isinstance(item.node, ast.Constant) and type(node) is type(item.node)
                                         and ast.unparse(node) == key)
            if isinstance(node, ast.expr) and same:
                s, e = file.span_of(node)
                replacements.append((s, e, f'{meta_name}["{item.meta}"]'))
    replacements = sorted(set(replacements))
    body_start, body_end = file.span_of(body)
    text = file.text[body_start:body_end]
    for s, e, new in reversed(replacements):
        text = text[: s - body_start] + new + text[e - body_start:]
    if isinstance(body, ast.Tuple) and not file.text[body_start:body_end].startswith("("):
        text = f"({text})"
    return [(start, end, f"lambda {meta_name}: {text}")]


# ---- (c) every block size frozen on the host, only warps/stages tuned -------------------------------------
def fixed_blocks(model: ModuleModel, kernel: JitFunction, launch: LaunchSite, host: HostScope) -> list[tuple[str, Value | None, str]] | None:
    autotune = kernel.autotune
    assert autotune is not None
    configs = autotune.configs
    if not configs or len(configs) < 2 or any(is_block_name(name) for name in autotune.tuned_meta):
        return None
    blocks = [p for p in kernel.params if p.is_constexpr and is_block_name(p.name) and p.name not in kernel.heuristics]
    if not blocks:
        return None
    evaluator = host.evaluator()
    bound = bind_launch(model, launch, kernel)
    if bound.open:
        return None  # *args / **kwargs of unknown content: the values cannot be seen
    result: list[tuple[str, Value | None, str]] = []
    for param in blocks:
        passed = bound.values.get(param.name)
        if passed is None:
            if not isinstance(param.default_value, int):
                return None
            result.append((param.name, None, f"{param.name}={param.default_value} (default)"))
            continue
        value = evaluator.evaluate(passed)
        if value is None:
            return None
        result.append((param.name, value, f"{param.name}={value.value}"))
    if all(value is None for _, value, _ in result):
        return None  # nothing is frozen at this launch: the kernel's defaults do it
    return result


# ---- the condition and the fixer -------------------------------------------------------------------------
def may_launch_autotuned(model: ModuleModel, target: int | None) -> bool:
    """Some launch of the module may start an autotuned kernel: one defined here under @triton.autotune, or
    one of another module (what MatchContext.kernel_for would look up). Modules that launch only their own plain
    kernels need no search."""
    for launch in model.launches:
        local = model.kernel_for(launch)
        if local is not None and local.autotune is not None:
            return True
        if local is None and launch.target is not None and not launch.target.startswith(model.module + "."):
            return True
    return False


@condition("autotune-launch-problems", provides=("kernel", "defined", "problem"), applies=may_launch_autotuned)
def autotune_launch_problems(ctx: MatchContext) -> Verdict | None:
    """A launch `kernel[grid](...)` of an autotuned kernel that passes a meta-parameter the configs set
    (error), computes the grid from a host block size standing for a tuned meta-parameter (error), or passes
    every block size as a host constant while the configs tune only warps/stages (warning)."""
    return ctx.first_verdict(lambda launch, kernel: _launch_problems(ctx, launch, kernel))


def _launch_problems(ctx: MatchContext, launch: LaunchSite, kernel: JitFunction) -> Verdict | None:
    if kernel.autotune is None:
        return None
    host = HostScope.of(ctx.model, launch.scope)
    problems = LaunchProblems(conflicts(ctx.model, kernel, launch), frozen_grid(ctx, kernel, launch, host))
    fixed = None if problems.conflicts or problems.frozen else fixed_blocks(ctx.model, kernel, launch, host)
    parts = [why for _, why in problems.conflicts]  # (the headline's clause, the note that explains it)
    for item in problems.frozen:
        source = f" ({item.source})" if item.source else ""
        parts.append((f"sizes the grid with host block {item.host} where {config_refs(kernel.autotune, item.meta, 'tune')} "
                      f"{item.meta}",
                      f"the grid uses {item.host}{source}, so the program count follows the host value whatever config "
                      f"wins: programs miss part of the problem or run empty; compute the grid from META[\"{item.meta}\"]"))
    severity = None
    if fixed:
        names = "/".join(name for name, _, _ in fixed)
        shown = ", ".join(text for _, _, text in fixed)
        parts.append((f"fixes every block size on the host ({shown}); the configs tune only warps/stages",
                      f"the tile shape is never tuned ({evidence.measured_phrase('TL004', 'slower')}); move {names} into "
                      "the configs with several values and compute the grid from META"))
        severity = "warning"
    if not parts:
        return None
    defined = ""
    if kernel.path != ctx.file.path:
        defined = f"`{ctx.launched_name(launch, kernel)}` is defined at {kernel.path}:{kernel.line}."
    more = f" (+{len(parts) - 1} more in the notes)" if len(parts) > 1 else ""
    return Verdict(
        vars={"kernel": ctx.launched_name(launch, kernel), "defined": defined, "problem": parts[0][0] + more},
        notes=[f"It {clause}: {detail}." if index else f"{detail[0].upper()}{detail[1:]}."
               for index, (clause, detail) in enumerate(parts)],
        severity=severity,
        span=ctx.file.span_of(launch.node),  # the whole launch: the fix edits its grid and arguments
        data={"launch": launch, "problems": problems, "host": host},
    )


@fixer("autotune-launch-fix")
def autotune_launch_fix(ctx: MatchContext, verdict: Verdict) -> RawEdits | None:
    """Drop the keywords the configs set; rewrite a host grid as `lambda META: (...)` reading the tuned
    meta-parameters. No fix when only the block sizes are frozen (that changes the tuning space)."""
    launch: LaunchSite = verdict.data["launch"]
    problems: LaunchProblems = verdict.data["problems"]
    edits: list[tuple[int, int, str]] = []
    if problems.frozen:
        rewritten = grid_fix(ctx, launch, verdict.data["host"], problems.frozen)
        if rewritten is None:
            verdict.notes.append("No fix offered: the grid is not a tuple or lambda this launch alone uses.")
            return None
        call_start, call_end = ctx.file.span_of(launch.node)
        verdict.related += [(s, e) for s, e, _ in rewritten if not call_start <= s <= e <= call_end]  # a grid variable
        edits += rewritten
    dropped = [arg.keyword or arg.node for arg, _ in problems.conflicts]
    positional = [arg.node for arg in launch.args if arg.name is None]
    if any(arg.name is None and arg.node is not positional[-1] for arg, _ in problems.conflicts):
        verdict.notes.append("No fix offered: dropping a positional argument would shift the ones after it.")
        return None
    if dropped:
        if any(node is None for node in dropped):
            return None
        edits += remove_arguments(ctx.file, launch.node, dropped)  # type: ignore[arg-type]
    if not edits:
        return None
    return edits
