"""TL001: `tl.static_range` loops whose statically known trip count is too long to unroll."""

from __future__ import annotations

import ast

from tritonlint import evidence
from tritonlint.analysis.consteval import Value
from tritonlint.analysis.flow import flow_of, reads_call
from tritonlint.analysis.kernel import mentions, runs_dot, scenario_scopes, touches_memory
from tritonlint.analysis.model import JitFunction, ModuleModel
from tritonlint.analysis.triton_names import LOADS, TL
from tritonlint.context import (
    MatchContext,
    ParamSpec,
    RawEdits,
    Verdict,
    condition,
    fixer,
)
from tritonlint.walk import walk

# The fixture pair each kind of loop body is measured by.
K_LOOP, LOADS_ONLY, REGISTER_ONLY = ("TL001-static-range-k-loop", "TL001-static-range-loads-only",
                                     "TL001-static-range-register-only")
# Arguments Triton needs as compile-time constants: call -> positions ("*": every argument, N+: from N on).
_ALL, _FROM_1 = "*", "1+"
CONSTANT_POSITIONS = {f"{TL}.{name}": positions for name, positions in {
    "arange": _ALL, "static_assert": _ALL, "static_print": _ALL, "static_range": _ALL, "constexpr": _ALL,
    "full": {0, 2}, "zeros": {0, 1}, "reshape": _FROM_1, "view": _FROM_1, "broadcast_to": _FROM_1,
    "permute": _FROM_1, "trans": _FROM_1, "expand_dims": {1}, "sum": {1}, "max": {1}, "min": {1},
    "argmax": {1}, "argmin": {1}, "xor_sum": {1}, "cumsum": {1}, "cumprod": {1}, "reduce": {1, 2},
    "associative_scan": {1, 2}, "histogram": {1}, "multiple_of": {1}, "max_contiguous": {1},
    "make_tensor_descriptor": {3},
}.items()}
CONSTANT_KEYWORDS = frozenset({"axis", "dim", "dims", "shape", "block_shape", "num_bins", "keep_dims",
                               "num_stages", "loop_unroll_factor", "dtype"})


def _constant_arguments(name: str | None, call: ast.Call) -> list[ast.expr]:
    positions = CONSTANT_POSITIONS.get(name or "")
    if positions is None:
        return []
    if positions == _ALL:
        return list(call.args)
    if positions == _FROM_1:
        return list(call.args[1:])
    return [arg for index, arg in enumerate(call.args) if index in positions]


def _range_length(*bounds: int) -> int:
    """len(range(*bounds)), also for bounds len() cannot handle (it raises OverflowError past 2**63)."""
    r = range(*bounds)
    return max(0, (r.stop - r.start + r.step - (1 if r.step > 0 else -1)) // r.step)


def trip_count(ctx: MatchContext, loop: ast.For) -> tuple[Value, str] | None:
    """The largest statically known trip count of a static_range loop over all scenarios, with its source."""
    call = loop.iter
    if not isinstance(call, ast.Call) or call.keywords or not 1 <= len(call.args) <= 3:
        return None
    function = ctx.function
    if function is None:
        return None
    best: tuple[Value, str] | None = None
    for scope in scenario_scopes(ctx.model, function):
        evaluator = scope.evaluator()
        bounds = [evaluator.evaluate(arg) for arg in call.args]
        if any(b is None for b in bounds):
            continue
        values = [b.value for b in bounds]  # type: ignore[union-attr]
        if len(values) == 3 and values[2] == 0:
            continue
        count = _range_length(*values)
        sources = tuple(s for b in bounds for s in b.sources)  # type: ignore[union-attr]
        if best is None or count > best[0].value:
            best = (Value(count, sources), Value(count, sources).describe())
    return best


@condition("static-range-trip-count", params={"above": ParamSpec("int")},
           provides=("trip", "trip_source", "impact", "evidence"))
def static_range_trip_count(ctx: MatchContext, above: int) -> Verdict | None:
    """The `for` loop over tl.static_range has a statically known trip count greater than `above`.
    Severity stays as the rule says when the body runs tl.dot; it drops to info when the body only moves
    memory or computes in registers (measured: the cost is compile time, not run time)."""
    loop = ctx.ast_node(types=(ast.For,))
    if not isinstance(loop, ast.For) or ctx.function is None:
        return None
    found = trip_count(ctx, loop)
    if found is None or found[0].value <= above:
        return None
    value, source = found
    header = (ctx.file.span_of(loop)[0], ctx.file.span_of(loop.iter)[1])  # `for ... in tl.static_range(...)`
    nested = [node.lineno for node in walk(ast.Module(body=loop.body, type_ignores=[])) if isinstance(node, ast.For)
              and isinstance(node.iter, ast.Call) and ctx.model.qualify(node.iter.func) == f"{TL}.static_range"]
    if nested:  # the unrolled code is the product of the trip counts (round x35b)
        lines = ", ".join(map(str, nested))
        source += (f"; each iteration also unrolls the tl.static_range loop{'s' if len(nested) > 1 else ''} at "
                   f"line{'s' if len(nested) > 1 else ''} {lines}")
    target = _names_in(loop.target)
    cut = loop.body[0] if len(loop.body) == 1 and isinstance(loop.body[0], ast.If) else None
    if cut is not None and not cut.orelse and _names_in(cut.test) & target \
            and _names_in(cut.test) - target <= set(ctx.function.constexprs):
        # `if rt < MAX_TILES:` around the whole body: only the iterations that pass emit code (x35b)
        source += (f"; the test `{ast.unparse(cut.test)}` at line {cut.lineno} is settled while compiling, so the "
                   "iterations it fails emit no code")
    variables = {"trip": str(value.value), "trip_source": source}
    if runs_dot(ctx.model, loop.body):
        impact = "the body runs tl.dot, and a fully unrolled loop cannot be software-pipelined"
        return Verdict(vars={**variables, "impact": impact, "evidence": evidence.fixture_phrase(K_LOOP)}, span=header)
    if touches_memory(ctx.model, loop.body):
        impact, fixture = "the body moves memory but runs no tl.dot: the cost is compile time, not run time", LOADS_ONLY
    else:
        impact, fixture = "the body is register-only: the cost is compile time, not run time", REGISTER_ONLY
    # Without a tl.dot the unrolled loop runs as fast or faster: trading that for compile time is the user's call.
    return Verdict(vars={**variables, "impact": impact, "evidence": evidence.fixture_phrase(fixture)}, severity="info",
                   span=header, applicability="unsafe")


# Calls whose value is known only when the kernel runs: data, and the program's place in the grid.
RUN_TIME_CALLS = LOADS | {f"{TL}.program_id", f"{TL}.num_programs"}


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, ast.Name)}


def _derived(body: list[ast.stmt], names: set[str]) -> set[str]:
    """`names` and every name the statements assign from a value that mentions one of them."""
    derived = set(names)
    changed = True
    while changed:
        changed = False
        for node in walk(ast.Module(body=body, type_ignores=[])):
            if isinstance(node, ast.Assign) and mentions(node.value, derived):
                for target in node.targets:
                    for name in walk(target):
                        if isinstance(name, ast.Name) and name.id not in derived:
                            derived.add(name.id)
                            changed = True
    return derived


def constant_use(model: ModuleModel, loop: ast.For, function: JitFunction) -> str | None:
    """Where the loop variable (or a value derived from it) is used as a compile-time constant, if anywhere. A
    branch whose test also reads a run-time value (`if j < n` with `n` an argument) is a run-time branch
    already, under tl.static_range too: it needs no constant."""
    tainted = _derived(loop.body, _names_in(loop.target))
    # Run-time values: the non-constexpr arguments and what they reach (a name the loop variable reaches too is
    # left out: `x = i + n` may be read where it stays constant), and what a load or a program id gives, whatever
    # its address (`start = tl.load(p + i)` is data, not a constant).
    runtime = _derived(function.node.body if function.node is not None else [],
                       {p.name for p in function.params if not p.is_constexpr}) - tainted
    flow = flow_of(function.node) if function.node is not None else None
    for stmt in loop.body:
        for node in walk(stmt):
            if isinstance(node, ast.Subscript) and mentions(node.slice, tainted):
                return f"it indexes `{ast.unparse(node)}` at line {node.lineno}"
            if isinstance(node, (ast.If, ast.IfExp, ast.While, ast.Assert)) and mentions(node.test, tainted) \
                    and not (isinstance(node, (ast.If, ast.IfExp)) and (
                        mentions(node.test, runtime) or flow is not None and reads_call(
                            flow, node.test, lambda call: model.qualify(call.func) in RUN_TIME_CALLS))):
                return f"it decides a branch at line {node.lineno} that the unrolled loop settles while compiling"
            if not isinstance(node, ast.Call):
                continue
            callee = model.qualify(node.func)
            if any(kw.arg in CONSTANT_KEYWORDS and mentions(kw.value, tainted) for kw in node.keywords):
                return f"it is a constant argument of `{ast.unparse(node.func)}` at line {node.lineno}"
            if any(mentions(arg, tainted) for arg in _constant_arguments(callee, node)):
                return f"it is an argument of `{ast.unparse(node.func)}` at line {node.lineno}, which needs a constant"
            if not any(mentions(arg, tainted) for arg in [*node.args, *(kw.value for kw in node.keywords)]):
                continue
            if isinstance(node.func, ast.Name) and model.local_function(node.func.id) is not None:
                helper = model.local_function(node.func.id)
                if helper is not None and any(p.is_constexpr for p in helper.params):
                    return f"it is passed to jit helper `{node.func.id}` at line {node.lineno}, which takes constexprs"
    return None


def _range_callee(ctx: MatchContext, callee: ast.expr) -> str | None:
    """How this module spells triton.language.range, keeping the spelling of the static_range call."""
    if isinstance(callee, ast.Attribute):
        return f"{ast.unparse(callee.value)}.range"
    for alias, target in ctx.model.imports.items():
        if target == TL:
            return f"{alias}.range"
    if ctx.model.imports.get("triton") == "triton":
        return "triton.language.range"
    return None


@fixer("static-range-to-range")
def static_range_to_range(ctx: MatchContext, verdict: Verdict) -> RawEdits | None:
    """`tl.static_range(a, b[, s])` -> `tl.range(a, b[, s], loop_unroll_factor=1)`; no fix when the loop
    variable is used where a compile-time constant is required."""
    loop = ctx.ast_node(types=(ast.For,))
    if not isinstance(loop, ast.For) or not isinstance(loop.iter, ast.Call) or not loop.iter.args \
            or ctx.function is None:
        return None
    reason = constant_use(ctx.model, loop, ctx.function)
    if reason is not None:
        verdict.notes.append(f"No fix offered: the loop variable is used as a compile-time constant ({reason}).")
        return None
    callee = _range_callee(ctx, loop.iter.func)
    if callee is None:
        return None
    func_start, func_end = ctx.file.span_of(loop.iter.func)
    last_end = ctx.file.span_of(loop.iter.args[-1])[1]
    return [(func_start, func_end, callee), (last_end, last_end, ", loop_unroll_factor=1")]
