"""TL111: `tl.program_id(axis)` / `tl.num_programs(axis)` with a statically known axis other than 0, 1 or 2."""

from __future__ import annotations

import ast

from tritonlint.analysis.static_values import evaluations
from tritonlint.context import MatchContext, Verdict, condition

AXES = (0, 1, 2)  # a launch grid has three axes; anything else is a CompilationError


def _axis(call: ast.Call) -> ast.expr | None:
    if call.args:
        return call.args[0]
    return next((kw.value for kw in call.keywords if kw.arg == "axis"), None)


@condition("program-id-axis-out-of-range", provides=("axis", "axis_source"))
def program_id_axis_out_of_range(ctx: MatchContext) -> Verdict | None:
    """The axis of the tl.program_id / tl.num_programs call is statically known (a literal, module
    constant, constexpr default, config or literal launch value) and not 0, 1 or 2 in some scenario."""
    call = ctx.ast_node(types=(ast.Call,))
    function = ctx.function
    if not isinstance(call, ast.Call) or function is None:
        return None
    axis = _axis(call)
    if axis is None:
        return None
    for (value,) in evaluations(ctx.model, function, [axis]):
        if value.value not in AXES:
            source = "a literal" if not value.sources else value.describe()
            return Verdict(vars={"axis": str(value.value), "axis_source": source})
    return None
