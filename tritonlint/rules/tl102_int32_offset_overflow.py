"""TL102: a program id (or an index loaded from memory) multiplied by a runtime integer argument in a
pointer offset with no int64 promotion on the way (see analysis/offsets.py). One finding per source value,
at the source, with every product it reaches as a related location; the fix promotes the source.

Two levels: reported where a launch of the kernel shows the index spanning a large extent (the rows, tokens
or elements of a tensor, the slots of a KV cache: analysis/offset_launches.py); the other products are
reported only with the option `int32-offset-unbacked` (on real code about half of them were right,
docs/precision/TL102.md)."""

from __future__ import annotations

import ast
from collections.abc import Callable

from tritonlint.analysis.flow import flow_of
from tritonlint.analysis.model import PROGRAM_ID, ModuleModel, program_id_axis
from tritonlint.analysis.offset_launches import LARGE, SMALL, SPANS, eligibility_check, launch_extent
from tritonlint.analysis.offsets import LOAD, OffsetWidths, Overflows, Product
from tritonlint.analysis.triton_names import TL
from tritonlint.context import Exemption, MatchContext, RawEdits, Verdict, condition, fixer
from tritonlint.source import short_source
from tritonlint.walk import parents


# Reasons an unpromoted product stays far below 2^31 for any tensor, given the product and the kernel's module;
# the rule doc lists each.
EXEMPTIONS: tuple[Exemption[Callable[[Product, ModuleModel], bool]], ...] = (
    Exemption("count-promoted-before-scaling", "the product is promoted to int64 and then multiplied by a "
              "runtime value (`(i_b * T).to(tl.int64) * stride`, or `bos = (i_b * T).to(tl.int64)` used as "
              "`(bos * H + i_h) * K`): the int32 product counts rows, tokens or sequences, not elements, and "
              "the element offset is formed in int64", lambda product, model: product.rescaled),
    Exemption("traced-pattern-replacement", "the kernel is in a torch.fx pattern replacement (a module that "
              "defines `pattern` and `replacement` or `replacement_func`): it runs only inside the captured "
              "graph the pattern matched, at that graph's traced shapes (a 199-frame speech encoder, an "
              "embedding of a test batch), far below 2^31 elements",
              lambda product, model: model.is_pattern_replacement),
    Exemption("module-refuses-large-sizes", "a host function of the kernel's module turns away sizes that int32 "
              "offsets cannot address (`if x.numel() >= 2**31 - 1: return False`, or a raise under such a test): "
              "the module's own code checks int32 addressing and decides which tensors reach its kernels, often "
              "in an eligibility helper its callers consult before they launch",
              lambda product, model: eligibility_check(model) is not None),
)


def _overflows(ctx: MatchContext) -> Overflows:
    function = ctx.function
    key = ("int32-offsets", id(function.node))  # type: ignore[union-attr]
    if key not in ctx.model.memo:
        ctx.model.memo[key] = OffsetWidths(ctx.model, flow_of(function.node), function).overflows()  # type: ignore[union-attr,arg-type]
    found: Overflows = ctx.model.memo[key]
    return found


def _sources_by_span(ctx: MatchContext, found: Overflows) -> dict[tuple[int, int], ast.Call]:
    return ctx.model.memoized(("int32-offset-sources", id(found)),
                              lambda: {ctx.file.span_of(call): call for call in found.sources.values()})


@condition("int32-offset-product", provides=("source", "kind", "width", "limit", "multipliers", "lines"))
def int32_offset_product(ctx: MatchContext) -> Verdict | None:
    """The match is a `tl.program_id(...)` call or a `tl.load` whose value, with no int64 promotion on the
    way, is multiplied by a runtime (non-constexpr) integer argument in a pointer offset: the product is
    computed in int32. The products are the related locations. Reported where a launch of the kernel in its
    module shows the index spanning a large extent (or, with `int32-offset-unbacked`, wherever no launch
    keeps the products small); products an exemption covers do not count."""
    function = ctx.function
    if function is None or function.node is None:
        return None
    found = _overflows(ctx)
    if not found.products:
        return None  # most kernels: no need to find the match's ast node
    call = _sources_by_span(ctx, found).get(ctx.span())  # the match's node when it is a source, else no finding
    source_kind = ctx.model.qualify(call.func) if call is not None else None
    if call is None or source_kind not in (PROGRAM_ID, LOAD):
        return None
    axis = program_id_axis(call) if source_kind == PROGRAM_ID else None
    if axis not in (None, 0, 1, 2):
        return None  # no such grid axis: the kernel does not compile (TL111), and no launch count reaches it
    products = [p for p in found.products.get(id(call), ()) if not any(e.applies(p, ctx.model) for e in EXEMPTIONS)]
    if not products:
        return None
    products = sorted(products, key=lambda p: (p.node.lineno, p.node.col_offset))
    extent = launch_extent(ctx.model, function, call, products, ctx.file.path, ctx.project)
    if extent.kind == SMALL:
        return None  # every launch keeps the products small: no grid axis for the id, a tiny multiplier
    if extent.kind != LARGE and not ctx.options.get("int32-offset-unbacked", False):
        return None  # no launch shows a large count reaching the product: about half such findings are right
    multipliers = list(dict.fromkeys(p.multiplier for p in products))
    lines = list(dict.fromkeys(p.node.lineno for p in products))
    text = ast.unparse(call)
    source = text if len(text) <= 40 else f"{ast.unparse(call.func)}(...)"
    unsigned = {param.name for param in function.params if param.annotation is not None and "uint32" in param.annotation}
    notes = [f"Line {p.node.lineno}: `{ast.unparse(p.node)}` is computed in "
             + (f"uint32 (`{p.multiplier}` is annotated `tl.uint32`): it wraps past 2^32 elements, not 2^31"
                if p.multiplier in unsigned else "int32") + "." for p in products[:6]]
    if len(products) > 6:
        notes.append(f"... and {len(products) - 6} more products.")
    if axis in (1, 2):
        # Launch axes 1 and 2 hold at most 65,535 programs: the product passes 2^31 only where the program id is
        # scaled by more than 32,768 in all (65,535 x 32,768 < 2^31) (a block size times a row stride, or a batch stride alone).
        notes.append("Grid axes 1 and 2 have at most 65,535 programs, so this product wraps only where what "
                     "multiplies the program id exceeds 32,768 in all (a block size times a row stride, or an "
                     "outer stride such as a batch stride).")
    if extent.kind == LARGE:
        notes.insert(0, f"The launch shows the index can reach the rows of a large tensor: {extent.why}.")
    elif extent.kind == SPANS:
        notes.insert(0, f"The launch spans a tensor's bare leading dimension ({extent.why}); nothing names those rows "
                        "as tokens or elements (a weight's or a decode batch's rows look the same): reported because "
                        "`int32-offset-unbacked` is set.")
    cast = _outermost_cast(function.node, call)
    if cast is not call:
        notes.append(f"Line {cast.lineno}: the cast in `{short_source(cast)}` would narrow a promoted source again; the fix "
                     "promotes after it.")
    # `i32 * u32` promotes to uint32 (Triton's integer promotion): where every product is one, it wraps at 2^32.
    all_unsigned = all(p.multiplier in unsigned for p in products)
    return Verdict(vars={"source": source,
                         "kind": "program id" if source_kind == PROGRAM_ID else "loaded index",
                         "width": "uint32" if all_unsigned else "int32",
                         "limit": "2^32" if all_unsigned else "2^31",
                         "multipliers": ", ".join(f"`{m}`" for m in multipliers[:4]) + (" ..." if len(multipliers) > 4 else ""),
                         "lines": ", ".join(map(str, lines[:6])) + (" ..." if len(lines) > 6 else "")},
                   related=[ctx.file.span_of(p.node) for p in products]
                   + ([ctx.file.span_of(cast)] if cast is not call else []), notes=notes, data={"call": call, "cast": cast})


def _outermost_cast(function: ast.AST, call: ast.Call) -> ast.expr:
    """The source call with the casts written on it (`tl.load(p).to(tl.int32)`): a promotion goes after them."""
    parent_of = parents(function)
    cast: ast.expr = call
    while isinstance(attr := parent_of.get(id(cast)), ast.Attribute) and attr.attr == "to" \
            and isinstance(outer := parent_of.get(id(attr)), ast.Call) and outer.func is attr:
        cast = outer
    return cast



def _language(ctx: MatchContext, callee: ast.expr) -> str | None:
    """How this module spells triton.language, taken from the source call where it can be."""
    if isinstance(callee, ast.Attribute) and ctx.model.qualify(callee.value) == TL:
        return ast.unparse(callee.value)
    for alias, target in ctx.model.imports.items():
        if target == TL:
            return alias
    return None


@fixer("promote-offset-source")
def promote_offset_source(ctx: MatchContext, verdict: Verdict) -> RawEdits | None:
    """Appends `.to(tl.int64)` to the source call, so every offset computed from it is int64: after the casts
    written on it (`tl.load(p).to(tl.int32)`), which would narrow it again."""
    call: ast.Call = verdict.data["call"]
    language = _language(ctx, call.func)
    if language is None:
        return None
    end = ctx.file.span_of(verdict.data["cast"])[1]
    return [(end, end, f".to({language}.int64)")]
