"""TL109: a launch grid whose axis 1 or 2 is a runtime count that can pass CUDA's 65,535 limit there."""

from __future__ import annotations

import re

from tritonlint import evidence
from tritonlint.analysis.host import HostScope
from tritonlint.analysis.model import ModuleModel
from tritonlint.analysis.provenance import Provenance, grid_axes, large_count
from tritonlint.context import MatchContext, RawEdits, Verdict, condition, fixer

_DECODE = re.compile(r"decode", re.IGNORECASE)
AXIS_LIMIT = 65_535  # CUDA's gridDim.y / gridDim.z; gridDim.x takes 2**31 - 1


def _has_launch(model: ModuleModel, target: int | None) -> bool:
    return bool(model.launches)


@condition("grid-axis-large-count", provides=("kernel", "axis", "value", "why"), applies=_has_launch)
def grid_axis_large_count(ctx: MatchContext) -> Verdict | None:
    """The launch `kernel[grid](...)` puts, on grid axis 1 or 2, a host value that can exceed 65,535: an
    element count (numel), the rows of a tensor flattened to rows, a token/row/sequence count by name, or a
    product with one of those. Ceiling divisions by a block, head counts and batch sizes are not."""
    launch = ctx.launch
    if launch is None:
        return None
    kernel = ctx.kernel_for(launch)
    if kernel is None:
        return None  # not a Triton kernel that can be resolved (a cache of compiled callables, a CuTe kernel)
    if _DECODE.search(kernel.name) or _DECODE.search(ctx.file.path.rpartition("/")[2]):
        return None  # a decode step's token count is its batch: far below the limit
    host = HostScope.of(ctx.model, launch.scope)
    found = grid_axes(host, launch)
    if found is None:
        return None
    axes, _ = found
    provenance = Provenance.of(host)
    for axis, expr in enumerate(axes[1:3], start=1):
        why = large_count(provenance.origin(expr))
        if why is None:
            continue
        notes = [f"CUDA allows at most {AXIS_LIMIT:,} programs on grid axes 1 and 2 (axis 0 takes 2**31 - 1): "
                 f"put the large count on axis 0 and swap tl.program_id(0) and tl.program_id({axis}) in the kernel.",
                 f"Evidence: {evidence.measured_phrase('TL109', 'fails')}."]
        return Verdict(vars={"kernel": launch.callee_text, "axis": str(axis), "value": ctx.file.text_of(expr), "why": why},
                       span=ctx.file.span_of(expr), notes=notes, data={"axes": (axes[0], expr)})
    return None


@fixer("grid-axis-swap")
def grid_axis_swap(ctx: MatchContext, verdict: Verdict) -> RawEdits | None:
    """Swap the large grid element with axis 0 (shown only: the kernel's program_id axes must swap too)."""
    first, large = verdict.data["axes"]
    return [(*ctx.file.span_of(first), ctx.file.text_of(large)), (*ctx.file.span_of(large), ctx.file.text_of(first))]
