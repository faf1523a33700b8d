"""TL003: a raw 2-D block-tile `tl.load` (pointer arithmetic `base + rows[:, None] * s0 + cols[None, :] * s1`)
in a loop that goes straight to tl.dot, on a target with TMA (sm_90 and newer).

Only regular tiles are reported (see indexing.py): offsets that come from another load (paged-KV block
tables, MoE token lists, varlen sequence starts) or from anything the analysis cannot follow keep the rule
silent, and so does a tile that is transformed in registers before the tl.dot. Only tiles the loop streams
are reported: the address changes every iteration and the tl.dot that uses the tile runs in that same loop
(a tile loaded once per outer iteration and reused by an inner loop's tl.dot is not). A raw load that is
the fallback arm of a branch whose other arm loads the same tile through a tensor descriptor is not
reported either, nor a kernel the host launches only where a branch's other arm makes descriptors: the
descriptor path already exists. Modules written for a Triton older than tensor descriptors are skipped, and
so are kernels that use an API removed by the first Triton with descriptors (`tl.libdevice`, `tl.math.tanh`)
and those the table EXEMPTIONS names (kernels JAX launches).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from tritonlint.analysis.descriptor_layout import (
    UNKNOWN_TEXT,
    Layout,
    descriptor_edits,
    descriptor_name,
    launched_inner_axis,
    launched_without_unit_axis,
    no_contiguous_axis,
    tile_layout,
)
from tritonlint.analysis.flow import (
    FunctionFlow,
    Loop,
    describe_loop,
    flow_of,
    varies_in,
)
from tritonlint.analysis.indexing import Indices, load_pointer, range_arguments
from tritonlint.analysis.jit_globals import refused_in_kernel
from tritonlint.analysis.kernel import calls_dot, jit_callers, launches_of, mentions_dot, with_helpers
from tritonlint.analysis.launches import one_block_at_every_launch
from tritonlint.analysis.model import JitFunction, LaunchSite, ModuleModel
from tritonlint.analysis.names import last_name
from tritonlint.analysis.tiles import refuses_a_tile
from tritonlint.analysis.triton_names import DESCRIPTOR_LOADS, DOT_OPERANDS, DOTS, KERNEL_DESCRIPTORS, LOADS, TL
from tritonlint.analysis.triton_versions import removed_use, table
from tritonlint.context import Exemption, MatchContext, RawEdits, Verdict, condition, fixer
from tritonlint.walk import parents, walk

LOAD = f"{TL}.load"
MIN_TARGET = 90  # TMA tensor descriptors: Hopper and newer
# What hands a loaded tile to tl.dot unchanged in content.
PASS_METHODS = frozenset({"to", "trans", "permute", "reshape", "view"})
PASS_FUNCTIONS = frozenset(f"{TL}.{n}" for n in ("cast", "trans", "permute", "reshape", "view"))


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
    there, where a descriptor load has nothing to offer. The tl.dot must run in `loop` itself, not in a
    loop nested in it, where the tile stays the same on every iteration."""
    operands = [_tile_source(model, arg) for n in walk(loop)
                if isinstance(n, ast.Call) and model.qualify(n.func) in DOTS and flow.enclosing_loops(n)[0] is loop
                and not _fp32_dot(model, flow, n) for arg in _dot_operands(model, n)]
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


def _fp32_dot(model: ModuleModel, flow: FunctionFlow, call: ast.Call) -> bool:
    """A tl.dot written `input_precision="ieee"`, which matters only for fp32 operands: it multiplies them in full
    fp32 on the FMA units, where a descriptor load measured 1.05x (H100 probe, docs/precision/bench/
    tl003_fp32_ieee.py). Not where an operand is cast to another type on the way (`w.to(x.dtype)` of 16-bit
    tiles: unsloth's FP8 GEMM writes `ieee` beside them, and the tensor cores run), nor `allow_tf32=False`, which
    older code also writes beside bf16 operands (fla)."""
    if not any(k.arg == "input_precision" and isinstance(k.value, ast.Constant) and k.value.value == "ieee"
               for k in call.keywords):
        return False
    return not any(_cast_to_another_type(model, flow, operand) for operand in _dot_operands(model, call))


def _cast_to_another_type(model: ModuleModel, flow: FunctionFlow, expr: ast.expr, depth: int = 0) -> bool:
    """The operand, through the wrappers `_tile_source` passes and one local name each, is cast to a type other
    than fp32 (`.to(x.dtype)`, `tl.cast(t, tl.bfloat16)`)."""
    if depth > 4:
        return False
    for node in walk(expr):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        if isinstance(node.func, ast.Attribute) and node.func.attr == "to":
            target = node.args[0]
        elif model.qualify(node.func) == f"{TL}.cast" and len(node.args) > 1:
            target = node.args[1]
        else:
            continue
        if not ast.unparse(target).endswith("float32"):
            return True
    source = _tile_source(model, expr)
    value = flow.single_value(source) if isinstance(source, ast.Name) else source
    return value is not source and _cast_to_another_type(model, flow, value, depth + 1)


def _dot_operands(model: ModuleModel, call: ast.Call) -> list[ast.expr]:
    """The two tiles a tl.dot or tl.dot_scaled multiplies, passed by position or keyword (not a scale)."""
    keywords = {keyword.arg: keyword.value for keyword in call.keywords}
    return [call.args[position] if position < len(call.args) else keywords[keyword]
            for position, keyword in DOT_OPERANDS.get(model.qualify(call.func) or "", ())
            if position < len(call.args) or keyword in keywords]


def _is_descriptor_load(model: ModuleModel, node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    name = model.qualify(node.func)
    if name is not None:
        return name in LOADS and name != LOAD
    return isinstance(node.func, ast.Attribute) and node.func.attr in DESCRIPTOR_LOADS


def has_descriptor_path(model: ModuleModel, flow: FunctionFlow, load: ast.Call) -> bool:
    """Whether the load is one arm of an `if` whose other arm assigns the same name from a tensor-descriptor
    load (`if USE_TMA: a = a_desc.load([...]) else: a = tl.load(a_ptrs)`): the raw load is the kernel's
    deliberate fallback, and the descriptor form already exists."""
    stmt = flow.statement_of(load)
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    name = stmt.targets[0].id
    child: ast.AST = stmt
    parent = flow.parents.get(id(stmt))
    while parent is not None and parent is not flow.function:
        if isinstance(parent, ast.If):
            other = parent.orelse if any(child is s for s in parent.body) else parent.body
            for node in (n for arm in other for n in walk(arm)):
                if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets) \
                        and any(_is_descriptor_load(model, n) for n in walk(node.value)):
                    return True
        child, parent = parent, flow.parents.get(id(parent))
    return False


# Host calls that make tensor descriptors (Triton 3.4+) or TMA descriptors (the experimental API of 3.0-3.3).
HOST_DESCRIPTOR_CALLS = frozenset({"TensorDescriptor", "from_tensor", "make_tensor_descriptor",
                                   "create_1d_tma_descriptor", "create_2d_tma_descriptor",
                                   "fill_1d_tma_descriptor", "fill_2d_tma_descriptor"})


def launched_as_fallback(model: ModuleModel, function: JitFunction) -> bool:
    """Every launch of the kernel in this module sits in an arm of a host `if` whose other arm makes tensor
    descriptors (`if run_tma: ... TensorDescriptor.from_tensor(...) ... else: raw_kernel[grid](...)`), sets
    Triton's allocator, or launches a kernel of the module that makes them itself: the kernel is the fallback
    for GPUs or inputs without TMA, and the descriptor path already exists."""
    launches = launches_of(model, function)
    return bool(launches) and all(_in_fallback_arm(model, launch) for launch in launches)


def _makes_descriptors(model: ModuleModel, call: ast.Call) -> bool:
    """A host call that makes tensor descriptors, sets Triton's allocator for kernels that make them, or
    launches such a kernel of the module (`tma_kernel[grid](...)`)."""
    if last_name(call.func) in HOST_DESCRIPTOR_CALLS or model.qualify(call.func) == "triton.set_allocator":
        return True
    launched = model.defined_once(model.qualify(call.func.value) or "") \
        if isinstance(call.func, ast.Subscript) else None
    return launched is not None and launched.node is not None and any(
        isinstance(n, ast.Call) and model.qualify(n.func) in KERNEL_DESCRIPTORS for n in walk(launched.node))


def _in_fallback_arm(model: ModuleModel, launch: LaunchSite) -> bool:
    root = launch.scope
    if root is None:
        return False
    up = parents(root)
    child: ast.AST = launch.node
    parent = up.get(id(launch.node))
    while parent is not None:
        if isinstance(parent, ast.If):
            other = parent.orelse if any(child is s for s in parent.body) else parent.body
            if any(isinstance(n, ast.Call) and _makes_descriptors(model, n) for arm in other for n in walk(arm)):
                return True
        if parent is root:
            return False
        child, parent = parent, up.get(id(parent))
    return False


def _targets_tma_and_calls_dot(model: ModuleModel, target: int | None) -> bool:
    return target is not None and target >= MIN_TARGET and calls_dot(model, target) and not predates_descriptors(model)


def predates_descriptors(model: ModuleModel) -> bool:
    """The module uses an API that Triton removed before it had tensor descriptors (3.3/3.4): tl.dot's
    `trans_a=`/`trans_b=` (removed in 2.1) or a `triton.ops` import outside try (removed in 3.2). No Triton
    that can make a descriptor runs this code, so suggesting one is moot until it is ported."""
    key = ("predates-descriptors", 0)
    if key not in model.memo:
        imports = any(isinstance(statement, ast.ImportFrom) and (statement.module or "").startswith("triton.ops")
                      or isinstance(statement, ast.Import) and any(a.name.startswith("triton.ops") for a in statement.names)
                      for statement in model.tree.body)  # top level: a guarded import sits inside a try
        model.memo[key] = imports or any(
            isinstance(node, ast.Call) and model.qualify(node.func) in DOTS
            and any(keyword.arg in ("trans_a", "trans_b") for keyword in node.keywords)
            for function in model.functions if function.node is not None for node in walk(function.node))
    return bool(model.memo[key])


def _removed_by_descriptors(model: ModuleModel, function: JitFunction) -> str | None:
    """An API the kernel (or a jit helper it calls) uses that the first Triton with tensor descriptors no longer
    has, or a module-level number it reads without `tl.constexpr(...)`, which that Triton refuses: it cannot
    compile the kernel, so a descriptor is not the change it needs first."""
    node, first = function.node, table().entries[f"{TL}.make_tensor_descriptor"].introduced
    if node is None or first is None:
        return None
    return model.memoized(("removed-by-descriptors", id(node)), lambda: next(filter(None, (
        removed_use(part, model.qualify, first) for part in with_helpers(model, node))), None)
        or refused_in_kernel(model, node, first))


def _callers_removed_by_descriptors(model: ModuleModel, function: JitFunction) -> bool:
    """A jit helper launched nowhere whose every caller in the module is a kernel that the first Triton with
    tensor descriptors cannot compile (`_removed_by_descriptors`, through its other helpers: a GEMM tile helper
    called by a kernel that also calls a `tl.libdevice` GELU)."""
    if function.node is None or launches_of(model, function):
        return False
    callers = jit_callers(model, function)
    return bool(callers) and all(_removed_by_descriptors(model, caller) for caller in callers)


def _imports_jax_triton(model: ModuleModel) -> bool:
    return any("jax_triton" in qualified.split(".") for qualified in model.imports.values())


EXEMPTIONS: tuple[Exemption[Callable[[ModuleModel, JitFunction], bool]], ...] = (
    Exemption("jax-triton-host", "the module imports jax_triton (or a library's copy of it, `fjformer.jax_triton`) "
              "and launches the kernel nowhere with `kernel[grid](...)`: JAX launches it through `triton_call`, "
              "which passes no global scratch memory for a descriptor made in the kernel (jax-ml/jax-triton#390, "
              "2026) and takes no host `TensorDescriptor`, so neither descriptor form runs there",
              lambda model, function: _imports_jax_triton(model) and not launches_of(model, function)),
)


@condition("raw-2d-tile-load", provides=("tile", "loop", "target"), prefilter=mentions_dot,
           applies=_targets_tma_and_calls_dot)
def raw_2d_tile_load(ctx: MatchContext) -> Verdict | None:
    """The match is a tl.load of a regular 2-D block tile (pointer offsets broadcast along both axes,
    affine in program ids, aranges, loop indices and scalars, nothing read from memory) inside a loop, at an
    address that changes every iteration, and the tile goes straight to an operand of a tl.dot in that
    loop; not when another arm of an enclosing `if` loads the same tile through a tensor descriptor.
    Silent unless the configured target is sm_90 or newer."""
    if ctx.target is None or ctx.target < MIN_TARGET:
        return None
    call = ctx.ast_node(types=(ast.Call,))
    function = ctx.function
    if not isinstance(call, ast.Call) or function is None or function.node is None:
        return None
    pointer = load_pointer(call)
    if ctx.model.qualify(call.func) != LOAD or pointer is None:
        return None
    flow = flow_of(function.node)
    loops = flow.enclosing_loops(call)
    if not loops:
        return None
    indices = Indices(ctx.model, flow, set(function.constexprs))
    index = indices.of(pointer)
    if index.rank != 2 or index.axes != frozenset({0, 1}) or not index.regular:
        return None
    loop = loops[0]
    runtime = next((lp for lp in loops if not _unrolled(ctx.model, lp)), None)
    if runtime is not None and runtime is not loop \
            and not varies_in(flow, pointer, runtime, unrolled=lambda lp: _unrolled(ctx.model, lp)):
        return None  # moved only by an unrolled `tl.static_range`: fixed tiles, re-read at one address per pass
    if _runs_once(ctx, function, loop):
        return None  # nothing streamed by this loop; the loop around it holds the tile through it
    if no_contiguous_axis(flow, pointer, indices):
        return None  # interleaved components: no box of a descriptor holds the tile
    if not varies_in(flow, pointer, loop) or not feeds_dot(ctx.model, flow, call, loop) \
            or has_descriptor_path(ctx.model, flow, call) or launched_as_fallback(ctx.model, function) \
            or _removed_by_descriptors(ctx.model, function) or _callers_removed_by_descriptors(ctx.model, function) \
            or refuses_a_tile(ctx.model, function) \
            or any(exemption.applies(ctx.model, function) for exemption in EXEMPTIONS):
        return None
    twins = _same_pointer_loads(ctx.model, flow, call, loop)
    if twins and _representative([call, *twins]) is not call:
        return None  # reported once for the pointer in the loop
    layout = tile_layout(ctx.model, call, flow, loop, indices)
    if layout is not None and launched_without_unit_axis(ctx.model, function, layout):
        return None  # a [C_out, C_in] tile of a conv weight: no axis of stride 1
    if layout is not None:
        launched_inner_axis(ctx.model, function, layout)
        layout.name = _distinct_name(ctx.model, flow, indices, loop, layout)
    tile = f"`{layout.base}` [{_shown(layout.rows.block)}, {_shown(layout.cols.block)}]" if layout else "a 2-D tile"
    lines = ", ".join(str(twin.lineno) for twin in twins)
    notes = [f"{'Line' if len(twins) == 1 else 'Lines'} {lines} also {'loads' if len(twins) == 1 else 'load'} "
             "the same tile in the loop (another branch): one descriptor serves "
             f"{'both' if len(twins) == 1 else 'all'}."] if twins else []
    return Verdict(vars={"tile": tile, "loop": describe_loop(loop), "target": f"sm_{ctx.target}"},
                   data={"layout": layout, "call": call, "loop": loop, "outer": loops[1:]},
                   related=[ctx.file.span_of(t) for t in twins], notes=notes)


def _unrolled(model: ModuleModel, loop: Loop) -> bool:
    return isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call) \
        and model.qualify(loop.iter.func) == f"{TL}.static_range"


def _runs_once(ctx: MatchContext, function: JitFunction, loop: Loop) -> bool:
    """`for d in range(0, d_head, BLOCK_D)` where every launch passes `BLOCK_D=triton.next_power_of_2(d_head)`
    beside `d_head` (or the same value): one block covers the count, so the loop runs once (a course attention's
    head-dimension loop)."""
    args = range_arguments(ctx.model, loop.iter) if isinstance(loop, ast.For) else None
    if not args or len(args) != 3 or not (isinstance(args[0], ast.Constant) and args[0].value == 0) \
            or not all(isinstance(arg, ast.Name) for arg in args[1:]):
        return False
    count, block = args[1].id, args[2].id  # type: ignore[attr-defined]
    if block not in function.constexprs or count not in {param.name for param in function.params}:
        return False
    return one_block_at_every_launch(ctx.model, function, block, count, ctx.project)


def _representative(loads: list[ast.Call]) -> ast.Call:
    """The load a finding for several loads of one pointer stands at: the first with a mask (its bounds give the
    descriptor's shape), else the first."""
    def masked(load: ast.Call) -> bool:
        return len(load.args) > 1 or any(keyword.arg == "mask" for keyword in load.keywords)
    return min(loads, key=lambda load: (not masked(load), load.lineno, load.col_offset))


def _same_pointer_loads(model: ModuleModel, flow: FunctionFlow, call: ast.Call, loop: Loop) -> list[ast.Call]:
    """The other loads of the loop (not of a loop nested in it) of the same pointer value whose tile also goes
    to a tl.dot there, in source order: the two arms of `if EVEN_K:` load one tile, which one descriptor
    serves, so it is reported once."""
    key = _pointer_value(flow, load_pointer(call))  # type: ignore[arg-type]
    return sorted((n for n in walk(loop) if isinstance(n, ast.Call) and n is not call
                   and model.qualify(n.func) == LOAD and load_pointer(n) is not None
                   and _pointer_value(flow, load_pointer(n)) == key  # type: ignore[arg-type]
                   and flow.enclosing_loops(n)[0] is loop and feeds_dot(model, flow, n, loop)),
                  key=lambda n: (n.lineno, n.col_offset))


def _distinct_name(model: ModuleModel, flow: FunctionFlow, indices: Indices, loop: Loop, layout: Layout) -> str:
    """The descriptor's name: the base's own (`K_desc`), numbered in source order where other tiles of the loop
    that go to a tl.dot have the same name at another base (`K_ptr + k0_base`, `K_ptr + k1_base`), so that the
    suggestions pasted together make one descriptor each."""
    name = descriptor_name(layout.base)
    bases = [base for base in _tile_bases(model, flow, indices, loop) if descriptor_name(base) == name]
    position = bases.index(layout.base) if layout.base in bases else 0
    return f"{name.removesuffix('_desc')}{position + 1}_desc" if len(bases) > 1 else ""


def _tile_bases(model: ModuleModel, flow: FunctionFlow, indices: Indices, loop: Loop) -> list[str]:
    """The distinct bases of the loop's 2-D tiles that go to a tl.dot, in source order; once per loop, not once
    per finding in it."""
    def bases() -> list[str]:
        found: list[str] = []
        for other in sorted((n for n in walk(loop) if isinstance(n, ast.Call) and model.qualify(n.func) == LOAD),
                            key=lambda n: (n.lineno, n.col_offset)):
            pointer = load_pointer(other)
            if pointer is None or indices.of(pointer).rank != 2 or not feeds_dot(model, flow, other, loop):
                continue
            seen = tile_layout(model, other, flow, loop, indices)
            if seen is not None and seen.base not in found:
                found.append(seen.base)
        return found
    return model.memoized(("tl003-tile-bases", id(loop)), bases)


def _pointer_value(flow: FunctionFlow, pointer: ast.expr) -> tuple[str, tuple[tuple[str, frozenset[int]], ...]]:
    """A pointer expression's text with the definitions of its names that reach it: equal for the same tile
    (the arms of a branch), not for `p_k` assigned again between two loads (fla's four column blocks of K)."""
    names = sorted((n for n in walk(pointer) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)),
                   key=lambda n: (n.id, n.lineno, n.col_offset))
    return ast.unparse(pointer), tuple((n.id, frozenset(id(d) for d in flow.reaching(n))) for n in names)


def _shown(block: str) -> str:
    return "?" if block == UNKNOWN_TEXT else block  # `...` would read as text cut short


@fixer("tensor-descriptor-suggestion")
def tensor_descriptor_suggestion(ctx: MatchContext, verdict: Verdict) -> RawEdits | None:
    """Shows the load through a TMA tensor descriptor: `desc = tl.make_tensor_descriptor(base, shape=...,
    strides=..., block_shape=...)` before the loop and `desc.load([off_m, off_k])` in place of the
    tl.load, with names taken from the code; none, and a note saying which part is missing, where a part
    cannot be read off the code. Display only."""
    layout: Layout | None = verdict.data.get("layout")
    if layout is None:
        return None
    edits, notes = descriptor_edits(ctx.file, ctx.model, verdict.data["call"], verdict.data["loop"], layout,
                                    verdict.data["outer"])
    if notes:
        verdict.notes.append("Descriptor form: " + "; ".join(notes) + ".")
    return edits
