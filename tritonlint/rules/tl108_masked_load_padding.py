"""TL108: a masked `tl.load` whose `other` is missing or is not the neutral element of a reduction that its
masked-off lanes reach (see analysis/reductions.py).

A finding needs proof both ways: the current fill arrives at some reduction along the masked axis as
something other than its neutral element, and one fill (0, -inf or +inf) arrives right at every reduction
the lanes reach. Where the evaluation loses track, or no single constant fill would do, the rule is silent;
undefined lanes (no `other`) that surely reach a reduction are reported even then, with the fill only shown.
"""

from __future__ import annotations

import ast
import copy
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tritonlint import evidence
from tritonlint.analysis.buffers import loaded_nonnegative, through_identity
from tritonlint.analysis.flow import flow_of
from tritonlint.analysis.launches import (
    divisibility_flags,
    grid_axis_at_every_launch,
    passed_at_every_launch,
    same_at_every_launch,
    whole_blocks_at_every_launch,
)
from tritonlint.analysis.model import JitFunction, ModuleModel
from tritonlint.analysis.project import Project
from tritonlint.analysis.reductions import (
    DOT,
    LOAD,
    NAN,
    NEG_INF,
    POS_INF,
    UNDEF,
    WHERE,
    ZERO,
    PaddedLanes,
    Reach,
    constant_class,
    literal_number,
    load_argument,
    plain,
    satisfies,
)
from tritonlint.analysis.triton_names import LOAD_KEYWORDS
from tritonlint.context import MatchContext, RawEdits, Verdict, condition, fixer
from tritonlint.prefilter import Token
from tritonlint.walk import walk

ENTROPY_NAN = "TL108-softmax-entropy-nan"  # the fixture of the NaN case
NEUTRAL_TEXT = {ZERO: "0.0", NEG_INF: 'float("-inf")', POS_INF: 'float("inf")'}
NEUTRAL_WORDS = {ZERO: "0", NEG_INF: "-inf", POS_INF: "+inf"}


def _analysis(ctx: MatchContext) -> PaddedLanes:
    function = ctx.function
    key = ("padded-lanes", id(function.node))  # type: ignore[union-attr]
    if key not in ctx.model.memo:
        launched = {p.name: v for p in function.params  # type: ignore[union-attr]
                    if (v := literal_number(passed_at_every_launch(ctx.model, function, p.name, ctx.project))) is not None}  # type: ignore[arg-type]
        ctx.model.memo[key] = PaddedLanes(ctx.model, flow_of(function.node), set(function.constexprs), launched)  # type: ignore[union-attr,arg-type]
    found: PaddedLanes = ctx.model.memo[key]
    return found


def _describe(ctx: MatchContext, reach: Reach) -> str:
    text = ast.unparse(reach.call)
    if len(text) > 60:
        text = f"{ast.unparse(reach.call.func)}(...)"
    return f"`{text}` at line {reach.call.lineno}"


def _integer_literal(expr: ast.expr | None) -> bool:
    inner = expr.operand if isinstance(expr, ast.UnaryOp) else expr
    return isinstance(inner, ast.Constant) and type(inner.value) is int


# The mask may be positional (`tl.load(p, offs < n, 0.0)`): a file need not say "mask", but it says "load".
@condition("masked-load-padding", provides=("problem", "reduction", "remedy"), prefilter=lambda args: Token("load"))
def masked_load_padding(ctx: MatchContext) -> Verdict | None:
    """The match is a masked tl.load whose fill (`other`, or undefined lanes when it is missing) reaches a
    reduction along the masked axis as something other than that reduction's neutral element, while one
    fill (0, -inf or +inf) would be right at every reduction the lanes reach. Warning when `other` is
    missing or the constant is wrong only for some data (0 before a max), error when it is wrong whatever
    the data; the fix is safe when the masked-off lanes reach nothing else."""
    call = ctx.ast_node(types=(ast.Call,))
    function = ctx.function
    if not isinstance(call, ast.Call) or function is None or function.node is None \
            or ctx.model.qualify(call.func) != LOAD:
        return None
    mask = load_argument(call, 1, "mask")
    if mask is None or any(k.arg is not None and k.arg not in LOAD_KEYWORDS for k in call.keywords):
        return None  # `others=0.0`: the load does not compile, whatever its padding
    other = load_argument(call, 2, "other")
    if other is not None and constant_class(other) is None:
        return None  # a computed fill: not judged
    analysis = _analysis(ctx)
    verdict = _judged(ctx, call, analysis, function.node)
    if verdict is None:
        return _judged_per_flag(ctx, call)
    for switch, taken in sorted(analysis.switches.get(id(call), ())):
        verdict.notes.append(f"Shown for the launches that pass `{switch}` = {not taken}: the branch on `{switch}` that "
                             "re-masks the value is skipped there.")
    # Each compilation a re-masking flag makes, and whether it reads these lanes wrong (its copy of the load judged).
    compiled = [(special, (twin := special.calls.get(_position(call))) is not None
                 and _judged(ctx, twin, special.analysis, special.node, special.whole) is not None)
                for special in _flag_specializations(ctx)]
    # A flag the launches pass as `N % BLOCK_N == 0` splits the kernel in two compilations, whole blocks (no
    # padded lane) and re-masked: the merge of both branches is no kernel Triton builds.
    for flag in {special.flag for special, _ in compiled if special.whole is not None}:
        if not any(wrong for special, wrong in compiled if special.flag == flag):
            return None
    verdict.notes.extend(_right_for_one_value(compiled))
    return verdict


def _right_for_one_value(compiled: list[tuple[Specialization, bool]]) -> list[str]:
    """Notes naming a flag that only one compilation re-masks under (`if not EVEN_N:` when the launches may
    pass either value): the reviewer sees which kernel reads the lanes wrong."""
    notes = []
    for flag in sorted({special.flag for special, _ in compiled}):
        wrong = [special.value for special, reads_wrong in compiled if special.flag == flag and reads_wrong]
        right = [special.value for special, reads_wrong in compiled if special.flag == flag and not reads_wrong]
        if len(wrong) == 1 and right:
            notes.append(f"Only the kernel compiled with `{flag}` = {wrong[0]} reads these lanes wrong: with "
                         f"{right[0]}, the `if` on `{flag}` re-masks them.")
    return notes


def _judged_per_flag(ctx: MatchContext, call: ast.Call) -> Verdict | None:
    """The kernel as Triton compiles it for one value of a constexpr flag that an `if` tests (`if IS_CAUSAL:`
    ... re-masks the scores, the non-causal path does not): each value the launches may pass is its own kernel,
    judged alone where the kernel with both branches is not shown wrong. The finding names the value, and its
    fill is only shown (the other compilations may read the lanes otherwise)."""
    for special in _flag_specializations(ctx):
        twin = special.calls.get(_position(call))
        if twin is None:
            continue  # the load is in the branch this value removes
        verdict = _judged(ctx, twin, special.analysis, special.node, special.whole)
        if verdict is not None:
            verdict.notes.append(f"Shown for the kernel compiled with `{special.flag}` = {special.value} (each value of a "
                                 f"constexpr is its own compilation, and the launches may pass this one); the fix is only shown.")
            verdict.applicability = "display-only"
            return verdict
    for combination in _combined_specializations(ctx):
        twin = combination.calls.get(_position(call))
        if twin is None:
            continue
        verdict = _judged(ctx, twin, combination.analysis, combination.node, None)
        if verdict is not None:
            shown = " and ".join(f"`{flag}` = {value}" for flag, value in combination.values)
            verdict.notes.append(f"Shown for the kernel compiled with {shown} (each value of a constexpr is its own "
                                 "compilation, and the launches may pass these); the fix is only shown.")
            verdict.applicability = "display-only"
            return verdict
    return None


@dataclass
class _Combination:
    """The kernel as compiled for one value of each of several flags (see _combined_specializations)."""
    values: tuple[tuple[str, bool], ...]
    node: ast.FunctionDef
    calls: dict[tuple[int, int, int | None], ast.Call]
    analysis: PaddedLanes


def _combined_specializations(ctx: MatchContext) -> list[_Combination]:
    """Where two or three flags re-mask one value (`scores` under `if CAUSAL:` and under `if HAS_MASK:`), each
    one compiled apart keeps the other's branch, which the analysis cannot follow: the kernel for each
    combination of the values the launches may pass, every flag's branch resolved; once per kernel. Flags
    passed as a test of whole blocks are left to their own compilations (see `_flag_specializations`)."""
    function = ctx.function
    assert function is not None and function.node is not None
    key = ("tl108-combined-specializations", id(function.node))
    if key in ctx.model.memo:
        found: list[_Combination] = ctx.model.memo[key]
        return found
    specials = _flag_specializations(ctx)
    flags = sorted({s.flag for s in specials} - {s.flag for s in specials if s.whole is not None})
    combined = []
    if 2 <= len(flags) <= 3 and set.intersection(*(_remasked_names(ctx, function.node, f) for f in flags)):
        choices = [[(flag, s.value) for s in specials if s.flag == flag] for flag in flags]
        for values in itertools.product(*choices):
            node: ast.FunctionDef = copy.deepcopy(function.node)
            for flag, value in values:
                node = _Specialize(flag, value).visit(node)
            combined.append(_Combination(values, node, {_position(n): n for n in walk(node) if isinstance(n, ast.Call)},
                                         PaddedLanes(ctx.model, flow_of(node), set(function.constexprs),
                                                     _analysis(ctx).launched)))
    ctx.model.memo[key] = combined
    return combined


def _wanted(reach: Reach) -> str:
    """The fill a reduction takes: its neutral element, or 0 for a max of values that cannot be negative
    (`tl.max(tl.abs(x))`), where 0 is as good as -inf."""
    return ZERO if reach.nonnegative and reach.needs == NEG_INF else reach.needs


def _position(node: ast.expr) -> tuple[int, int, int | None]:
    return node.lineno, node.col_offset, node.end_col_offset


@dataclass
class Specialization:
    """The kernel as compiled for one value of a flag: its copy, its calls by position, its analysis."""
    flag: str
    value: bool
    node: ast.FunctionDef
    calls: dict[tuple[int, int, int | None], ast.Call]
    analysis: PaddedLanes
    whole: tuple[str, str] | None  # (block, count): a flag passed as `count % block == 0`, compiled true


def _flag_specializations(ctx: MatchContext) -> list[Specialization]:
    """For each constexpr parameter that an `if` re-masking a value tests alone (`if FLAG:`, `if not FLAG:`),
    the values the launches may pass (the one literal every launch passes, else both), each with a copy of the
    kernel whose `if`s on the flag keep only the branch that value runs, and its analysis; once per kernel."""
    function = ctx.function
    assert function is not None and function.node is not None
    node = function.node
    key = ("tl108-flag-specializations", id(node))
    if key in ctx.model.memo:
        found: list[Specialization] = ctx.model.memo[key]
        return found
    constexprs = set(function.constexprs)
    flags = sorted({name for n in walk(node) if isinstance(n, ast.If) and (name := _flag_of(n.test)) is not None
                    and name in constexprs and _remasks(ctx, n)})
    divisible = divisibility_flags(ctx.model, function, ctx.project) if flags else {}
    found = []
    for flag in flags:
        passed = passed_at_every_launch(ctx.model, function, flag, ctx.project)
        launched = passed.value if isinstance(passed, ast.Constant) and isinstance(passed.value, (bool, int)) else None
        for value in ([bool(launched)] if launched is not None else [False, True]):
            special = _Specialize(flag, value).visit(copy.deepcopy(node))
            found.append(Specialization(flag, value, special,
                                        {_position(n): n for n in walk(special) if isinstance(n, ast.Call)},
                                        PaddedLanes(ctx.model, flow_of(special), constexprs, _analysis(ctx).launched),
                                        divisible.get(flag) if value else None))
    ctx.model.memo[key] = found
    return found


def _where_assignments(ctx: MatchContext, branch: ast.If) -> Iterator[ast.Assign | ast.AugAssign]:
    """The assignments of a `tl.where` in the `if`'s branches (`qk = tl.where(m, qk, -inf)`, `qk += tl.where(m, 0,
    -inf)`)."""
    return (n for statement in (*branch.body, *branch.orelse) for n in walk(statement)
            if isinstance(n, (ast.Assign, ast.AugAssign)) and isinstance(n.value, ast.Call)
            and ctx.model.qualify(n.value.func) == WHERE)


def _remasks(ctx: MatchContext, branch: ast.If) -> bool:
    """The `if` rebinds a name to, or adds to it, a `tl.where` (a re-mask such as a causal mask): the branches that can decide
    what padded lanes hold; flags that only add work (`if USE_G:`) are not compiled apart."""
    return any(_where_assignments(ctx, branch))


def _remasked_names(ctx: MatchContext, node: ast.AST, flag: str) -> set[str]:
    """The names that the `if`s on `flag` re-mask: rebind to a `tl.where` of themselves (`scores =
    tl.where(causal, scores, -inf)`) or add one to (`qk += tl.where(causal, 0, -inf)`), not a value built afresh
    (`diag = tl.where(eye, g, 0.0)`)."""
    def remasked(n: ast.Assign | ast.AugAssign) -> str | None:
        target = n.target if isinstance(n, ast.AugAssign) else n.targets[0] if len(n.targets) == 1 else None
        if not isinstance(target, ast.Name) or not isinstance(n.value, ast.Call):
            return None
        itself = any(isinstance(a, ast.Name) and a.id == target.id for a in n.value.args[1:])
        return target.id if isinstance(n, ast.AugAssign) or itself else None
    return {name for branch in walk(node) if isinstance(branch, ast.If) and _flag_of(branch.test) == flag
            for n in _where_assignments(ctx, branch) if (name := remasked(n))}


def _flag_of(test: ast.expr) -> str | None:
    inner = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
    return inner.id if isinstance(inner, ast.Name) else None


class _Specialize(ast.NodeTransformer):
    """Keeps, of each `if FLAG:` / `if not FLAG:`, the branch the flag's value runs."""

    def __init__(self, flag: str, value: bool) -> None:
        self.flag, self.value = flag, value

    def visit_If(self, node: ast.If) -> Any:
        self.generic_visit(node)
        if _flag_of(node.test) != self.flag:
            return node
        runs = self.value != isinstance(node.test, ast.UnaryOp)
        return (node.body if runs else node.orelse) or ast.Pass()


@dataclass
class _Launches:
    """The facts of `analysis.reductions.LaunchFacts` for one kernel, about its parameters only, read at its
    launches (`kernel_launches`: those of other modules where its own has none)."""
    model: ModuleModel
    kernel: JitFunction
    project: Project
    whole: tuple[str, str] | None  # see _judged

    def _params(self, *names: str) -> bool:
        return all(any(p.name == name for p in self.kernel.params) for name in names)

    def same_value(self, end: str, bound: str) -> bool:
        """Every launch passes one value for `end` and for `bound`, a parameter or arithmetic of them and
        integers (`offs < N * H * W` with `BLOCK = N * H * W`; `HALF = head_dim // 2` for `head_dim // 2`)."""
        try:
            nodes = walk(ast.parse(bound, mode="eval").body)
        except SyntaxError:
            return False
        names = [node.id for node in nodes if isinstance(node, ast.Name)]
        arithmetic = all(isinstance(node, (ast.Name, ast.BinOp, ast.Load, ast.operator))
                         or isinstance(node, ast.Constant) and type(node.value) is int for node in nodes)
        return bool(names) and arithmetic and self._params(end, *names) \
            and same_at_every_launch(self.model, self.kernel, end, bound, self.project)

    def whole_blocks(self, block: str, count: str) -> bool:
        return (block, count) == self.whole or self._params(block, count) and (
            whole_blocks_at_every_launch(self.model, self.kernel, block, count, self.project) or self.same_value(block, count))

    def floored_grid(self, axis: int, block: str, count: str) -> bool:
        return self._params(block, count) and grid_axis_at_every_launch(self.model, self.kernel, axis, count, block,
                                                                         self.project)

    def grid_extent(self, axis: int, count: str) -> bool:
        return self._params(count) and grid_axis_at_every_launch(self.model, self.kernel, axis, count, project=self.project)


def _judged(ctx: MatchContext, call: ast.Call, analysis: PaddedLanes, node: ast.AST,
            whole: tuple[str, str] | None = None) -> Verdict | None:
    """The verdict on the masked load `call` of the kernel `node` (the kernel as written, or as compiled for one
    value of a flag), read with `analysis` of that kernel; `whole` is a (block, count) pair this compilation
    knows to be whole blocks (its divisibility flag is true)."""
    function = ctx.function
    assert function is not None
    mask = load_argument(call, 1, "mask")
    other = load_argument(call, 2, "other")
    fill = UNDEF if other is None else constant_class(other)
    assert mask is not None and fill is not None
    launches = _Launches(ctx.model, function, ctx.project, whole)
    if analysis.keeps_every_lane(mask, launches):
        return None  # `tl.arange(0, n) < n`, launched with BLOCK = n or n whole blocks: no block is part padded
    reached = analysis.forward(call)
    # A sum along the channels of a tile whose channel block is launched equal to the channel count folds no
    # padded lane, whatever its rows' mask pads.
    judged = [r for r in reached.reductions if r.covered and not analysis.never_read(r.call)]
    covered = sorted((r for r in judged if not analysis.folds_no_padding(call, r, launches)),
                     key=lambda r: (r.call.lineno, r.call.col_offset))
    if not covered:
        return None

    statuses: dict[tuple[int, str, bool], bool | None] = {}  # each fill is judged at a reduction once

    def status(reach: Reach, with_fill: str, siblings_too: bool = False) -> bool | None:
        key = (id(reach), with_fill, siblings_too)
        if key not in statuses:
            lanes = analysis.lanes(analysis.reduced(reach.call), call, with_fill, siblings_too, reach)  # type: ignore[arg-type]
            statuses[key] = satisfies(lanes, reach.needs, reach.nonnegative)
        return statuses[key]

    # A wrong fill is harmless where the result cannot show it: a 0 fill before a max that a running
    # maximum started at 0 absorbs, a max (min) that only decides an early `return` on the side more lanes
    # can only make false, a max that only shifts a softmax whose terms the lanes do not reach (a finite fill:
    # undefined lanes may be NaN), or a running total that only the last chunk, the one with masked-off
    # lanes, spoils and nothing reads after it.
    # Set to 0 before every other reduction (a softmax's terms re-masked before their sum): a max they raise
    # only shifts it. A sum along an unmasked axis (the dot product `tl.sum(k * q[None, :], axis=1)` that makes the
    # scores) folds no padded lane into a real one, so only the reductions along the padded axis must be re-masked.
    shift_harmless = fill != UNDEF and all(analysis.zeroed_where_masked(r.call, mask)
                                           for r in reached.reductions if r.needs != NEG_INF and r.covered)
    # The current fill is judged with the loads that turn off the same lanes with no `other` padded alike: where
    # only their undefined lanes spoil a reduction, their own findings say so, and this fill is not at fault.
    wrong = [r for r in covered if status(r, fill, True) is False
             and not (fill == ZERO and r.needs == NEG_INF and analysis.floored_at_zero(r.call))
             and not analysis.decides_early_exit_only(r.call, r.needs)
             and not (shift_harmless and r.needs == NEG_INF and analysis.shifts_only(r.call))
             and not analysis.spoils_only_the_last_chunk(r.call, call)]
    if wrong and fill == ZERO and all(r.needs == NEG_INF and through_identity(analysis, analysis.reduced(r.call), call)
                                      for r in wrong) and loaded_nonnegative(ctx.model, function, call):
        return None  # a max of what an earlier kernel wrote non-negative (partial maxima of |x|): 0 is neutral
    if not wrong:
        return None
    # 0 first before a max of values that cannot be negative (`tl.max(tl.abs(x - mean))`: a 0 lane adds |mean|, which
    # the real values may outweigh; a -inf lane arrives as +inf and always wins).
    order = [_wanted(wrong[0])] + [c for c in (ZERO, NEG_INF, POS_INF) if c != _wanted(wrong[0])]
    # A candidate fill is judged as the fix would leave the kernel: on this load and on every load that
    # turns off the same lanes with no `other` (`seq - pre`, both unpadded, summed).
    found = next((c for c in order if all(status(r, c, True) is True for r in covered)), None)
    # Undefined lanes spoil a reduction whatever follows; where no single fill is right at every reduction
    # (a layer norm's `sum(x)` and `sum((x - mean) ** 2)`), the fill of the first is only a suggestion.
    partial = found is None and fill == UNDEF
    # An infinite fill (or a log of a zero one) that meets an exact 0 on the way (`labels * (lse - logits)`,
    # `x * tl.log(x)`) arrives at a sum as NaN: no fill is right there either, a `tl.where` is.
    # Loads padded alike that feed it (`p * tl.log(q)`): the first reports it.
    # A NaN that every fill of this load leaves comes from another load's fill (`exp(s - lse)` of rows padded
    # with -inf, times this load's 0): that load's finding gives it, not this one. So does a NaN that only the
    # loads with no `other`, padded alike, bring (ReSA's split combine: `po * exp(lse - lse_max)`, `po` unpadded, its
    # lanes times this fill's 0): as they stand, their lanes are their own finding's business.
    def nan_with(reach: Reach, candidate: str, siblings_too: bool = True) -> bool:
        return NAN in analysis.lanes(analysis.reduced(reach.call) or call, call, candidate, siblings_too, reach).classes

    nan = [r for r in wrong if r.needs == ZERO and nan_with(r, fill) and nan_with(r, fill, False)
           and not _earlier_alike_feeds(analysis, call, r, node)
           and not all(nan_with(r, c) for c in {ZERO, NEG_INF, POS_INF} - {fill})] if found is None and fill != UNDEF else []
    if nan:
        return _nan_verdict(analysis, call, other, nan[0], node)  # type: ignore[arg-type]
    # A fill that is already the neutral element of a reduction the math on the way still spoils (`x - mean`
    # before a variance's sum; `1 - x * y` of two loads padded alike before a hinge's): the lanes need a
    # `tl.where` there, not a fill. Computed from these loads alone, the first of which reports it.
    # So is a fill neutral for a reduction along an unmasked axis (a dot product `sum(k * q, axis=1)` over a
    # padded token's features) that leaves the lanes, as its result, other than what a later one needs.
    # A `tl.dot` the lanes pass through (keys' columns of `q @ k.T`) is such a fold too where math after it spoils
    # them (`exp2(s * c - c)` of a 0 column): its other operand's loads are not at fault.
    folds = [r for r in reached.reductions if (not r.covered or id(r.call) in reached.passed) and r.needs == fill]
    through = next((r for r in folds if id(r.call) in reached.passed), None)
    remask = [(r, partners) for r in wrong if (_wanted(r) == fill or folds)
              and (partners := _partners_feeding(analysis, call, r, node, folds[0] if _wanted(r) != fill else through,
                                                 through=_wanted(r) == fill and through is not None)) is not None
              and not _partner_fill_fixes(ctx, analysis, partners[0], r, node, whole)] \
        if found is None and fill != UNDEF else []
    if remask:
        reach, partners = remask[0]
        also = [f"Also reached, needing {NEUTRAL_WORDS[_wanted(r)]}: {_describe(ctx, r)}." for r in wrong if r is not reach]
        return _remask_verdict(ctx, analysis, call, other, reach, partners,  # type: ignore[arg-type]
                               folds[0] if _wanted(reach) != fill else None, also, through if _wanted(reach) == fill else None)
    # An infinite fill right at every other reduction (a softmax's max and exp-sum) that reaches a plain sum as
    # that infinity (label smoothing's `tl.sum(logits)`): the sum is infinite whatever the data; that sum's
    # operand needs a `tl.where`, since no fill is right at both.
    infinite = [r for r in wrong if r.needs == ZERO and {plain(c) for c in analysis.lanes(
        analysis.reduced(r.call) or call, call, fill, True, r).classes} == {fill}] \
        if found is None and fill in (NEG_INF, POS_INF) and len(wrong) < len(covered) else []
    if infinite and len(infinite) == len(wrong):
        return _infinite_sum_verdict(ctx, analysis, call, other, fill, infinite[0], [r for r in covered if r not in wrong])  # type: ignore[arg-type]
    if found is None and not partial:
        return None
    # Where no fill is right everywhere, the first step is the fill right at the most reductions (a p-norm's
    # `tl.max(tl.abs(x))` takes 0 as well as its sums do).
    neutral = found if found is not None else max(order, key=lambda c: sum(status(r, c, True) is True for r in covered))
    if neutral in (NEG_INF, POS_INF) and _integer_literal(other):
        return None  # integer data: no infinity to pad with (and a max of counts, lengths or ids padded with 0 is right)
    first = wrong[0]
    if fill == UNDEF:
        problem = "Masked load has no `other`: its masked-off lanes are undefined"
    else:
        problem = f"Masked load pads with `other={ast.unparse(other)}`, and its masked-off lanes"  # type: ignore[arg-type]
    reduction = _describe(ctx, first)
    if fill == UNDEF:
        reduction = f"and reach {reduction}"
    else:
        reduction = f"reach {reduction}"
    notes = [f"Also reached, needing {NEUTRAL_WORDS[_wanted(r)]}: {_describe(ctx, r)}." for r in wrong[1:]]
    if partial:
        unsettled = next(r for r in covered if status(r, neutral, True) is not True)
        notes.append(f"No single `other` is shown right at every reduction these lanes reach: with "
                     f"`other={NEUTRAL_TEXT[neutral]}`, the math on the way can still bring them to "
                     f"{_describe(ctx, unsettled)} as something other than {NEUTRAL_WORDS[_wanted(unsettled)]}. Pad "
                     f"with `other={NEUTRAL_TEXT[neutral]}` and set them to {NEUTRAL_WORDS[_wanted(unsettled)]} before "
                     f"that reduction with `tl.where(mask, ..., {NEUTRAL_TEXT[_wanted(unsettled)]})`; the suggested fix "
                     f"is only the first step, so it is never applied automatically.")
    elif (fill == UNDEF or not all(status(r, neutral) is True for r in covered)) \
            and (lines := sorted({s.lineno for s in analysis.unfilled_siblings(call, node)
                                  if _feeds_any(analysis, s, covered)
                                  and not (neutral in (NEG_INF, POS_INF) and _feeds_dot(analysis, s))})):
        notes.append(f"The load{'s' if len(lines) > 1 else ''} at line{'s' if len(lines) > 1 else ''} "
                     f"{', '.join(map(str, lines))} with no `other` turn{'' if len(lines) > 1 else 's'} off the same "
                     f"lanes and meet{'' if len(lines) > 1 else 's'} these there: pad "
                     f"{'them' if len(lines) > 1 else 'it'} with `other={NEUTRAL_TEXT[neutral]}` too.")
    if not partial and neutral != _wanted(first):
        notes.append(f"On the way the lanes pass through elementwise math: padding them with "
                     f"{NEUTRAL_WORDS[neutral]} is what makes them arrive there as {NEUTRAL_WORDS[_wanted(first)]}.")
    # a reduction whose result is never read changes nothing, whatever it folds
    safe = not reached.other_ends and all(r in judged or r.covered and analysis.never_read(r.call)
                                          for r in reached.reductions)
    if not safe and not partial:
        where: ast.AST = (reached.other_ends or [r.call for r in reached.reductions if not r.covered])[0]
        notes.append("The fix is unsafe: the masked-off lanes also reach "
                     + ("other code" if reached.other_ends else "a reduction along an axis the mask does not cover")
                     + f" (line {getattr(where, 'lineno', '?')}), where a different fill may change what is computed.")
    # A constant fill is an error where it is wrong whatever the data: it reaches a sum as something other
    # than 0, or a max / min as the infinity that always wins there. A 0 (or finite) fill before a max or
    # min is wrong only for rows whose real values all lie on one side of it: a warning.
    absolute = any(r.needs == ZERO or _opposite(r.needs) in {plain(c) for c in analysis.lanes(analysis.reduced(r.call), call, fill, reach=r).classes}  # type: ignore[arg-type]
                   for r in wrong)
    if fill != UNDEF and not absolute:
        example = "a min over positive values" if all(r.needs == POS_INF for r in wrong) else "a max over negative values"
        notes.append(f"Warning, not error: the fill is wrong only for rows whose real values all lie on one side of it "
                     f"({example}).")
    return Verdict(vars={"problem": problem, "reduction": reduction, "remedy": f"which needs `other={NEUTRAL_TEXT[neutral]}`"},
                   severity="error" if fill != UNDEF and absolute else "warning",
                   applicability="display-only" if partial else None if safe else "unsafe",
                   notes=notes, data={"neutral": neutral, "call": call})


def _feeds_any(analysis: PaddedLanes, load: ast.Call, reaches: list[Reach]) -> bool:
    """The load's value reaches one of these reductions (where the flow does not show, taken as reaching)."""
    for reach in reaches:
        feeding = analysis.loads_feeding(analysis.reduced(reach.call) or reach.call)
        if feeding is None or id(load) in feeding:
            return True
    return False


def _feeds_dot(analysis: PaddedLanes, load: ast.Call) -> bool:
    """The load's lanes reach an operand of a `tl.dot`, where an infinite fill meets the other operand's
    zeros as NaN: no note asks to pad it so."""
    reached = analysis.forward(load)
    return any(isinstance(end, ast.Call) and analysis.model.qualify(end.func) == DOT
               for end in [*(r.call for r in reached.reductions), *reached.other_ends])


def _earlier_alike_feeds(analysis: PaddedLanes, call: ast.Call, reach: Reach, function: ast.AST) -> bool:
    feeding = analysis.loads_feeding(analysis.reduced(reach.call) or call) or set()
    return any(id(p) in feeding and (p.lineno, p.col_offset) < (call.lineno, call.col_offset)
               for p in analysis.filled_alike(call, function))


def _partners_feeding(analysis: PaddedLanes, call: ast.Call, reach: Reach, function: ast.AST,
                      fold: Reach | None = None, through: bool = False) -> tuple[list[ast.Call], list[ast.Call]] | None:
    """Where the value `reach` reduces is computed from this load, and perhaps from loads that turn off the same
    lanes and pad them with the same constant, of which this one comes first, and from rows' parameters (real
    on those lanes; with `fold`, a reduction along an unmasked axis on the way: also any load that turns off
    none of them, such as a query row that a dot product along the features folds in, or that reaches a `tl.dot`
    fold only as its other operand, whose lanes shared with this load lie along K, which the product sums): the
    loads padded alike, and those rows' parameters. Else None. A row's statistic reduced to one value (a first
    pass's max) is a row's parameter too, not a load read here. With `through` (`fold` is a `tl.dot` the lanes
    pass through, then math with constants and parameters, `exp2(s * c - c)`), only the dot's other operand may
    be read beside: another load (a recurrent state read before the loop) may hold 0 on those lanes too."""
    feeding = analysis.loads_feeding(analysis.reduced(reach.call) or call, folded_by=reach.call)
    if feeding is None or id(call) not in feeding:
        return None
    mask = load_argument(call, 1, "mask")
    fed = [n for n in analysis.calls_among(feeding) if n is not call]
    partners = [p for p in analysis.filled_alike(call, function) if id(p) in feeding]
    per_row = [] if through else [n for n in fed if analysis.constant_along(n, call, reach)]
    theirs = _other_operand_loads(analysis, call, fold)
    across = [n for n in fed if fold is not None and n not in partners and n not in per_row
              and (id(n) in theirs or not through and not (analysis.shares_lanes(load_argument(n, 1, "mask"), mask)
                                                           or analysis.off_wherever(load_argument(n, 1, "mask"), mask)))]
    if len(partners) + len(per_row) + len(across) != len(feeding) - 1 \
            or any((p.lineno, p.col_offset) < (call.lineno, call.col_offset) for p in partners):
        return None
    return partners, per_row


def _partner_fill_fixes(ctx: MatchContext, analysis: PaddedLanes, partners: list[ast.Call], reach: Reach,
                        node: ast.AST, whole: tuple[str, str] | None) -> bool:
    """A later load padded alike fixes the reduction with its own fill (a k-means distance `fma(dot(x, c.T), -2,
    c_sqnorm)`: `c_sqnorm` padded with +inf puts every padded centroid at +inf), and is reported: its finding
    gives that fill, and no `tl.where` is needed."""
    reduced = analysis.reduced(reach.call)
    return reduced is not None and any(
        constant_class(load_argument(p, 2, "other")) != reach.needs
        and satisfies(analysis.lanes(reduced, p, reach.needs, True, reach), reach.needs, reach.nonnegative) is True
        and _judged(ctx, p, analysis, node, whole) is not None for p in partners)


def _other_operand_loads(analysis: PaddedLanes, call: ast.Call, fold: Reach | None, ours: bool = True) -> set[int]:
    """Where `fold` is a `tl.dot` one operand of which reads this load: the loads only its other operand reads
    (`ours=False`: those only its second operand reads, this load among them where it feeds that one)."""
    if fold is None or analysis.model.qualify(fold.call.func) != DOT:
        return set()
    a, b = (analysis.loads_feeding(operand) if operand is not None else None
            for operand in (load_argument(fold.call, 0, "input"), load_argument(fold.call, 1, "other")))
    if a is None or b is None or (id(call) in a) == (id(call) in b):
        return set()
    if not ours:
        return b - a
    mine, theirs = (a, b) if id(call) in a else (b, a)
    return theirs - mine


def _remask_verdict(ctx: MatchContext, analysis: PaddedLanes, call: ast.Call, other: ast.expr, reach: Reach,
                    feeding: tuple[list[ast.Call], list[ast.Call]], fold: Reach | None, also: list[str],
                    through: Reach | None = None) -> Verdict:
    """The fill is the neutral element of `reach`, but elementwise math between the load and it (a centring
    `x - mean`, after a `tl.dot` the lanes pass `through`) turns the masked-off lanes into something else; or
    (`fold`) it is the neutral element of a reduction along an unmasked axis on the way, whose result on those
    lanes `reach` needs otherwise: a `tl.where` under the mask is needed."""
    neutral = NEUTRAL_TEXT[_wanted(reach)]
    kept = analysis.kept_mask(call, through.call) if through is not None else None
    mask = kept or ast.unparse(load_argument(call, 1, "mask"))  # type: ignore[arg-type]
    remasked = f"`tl.where({mask}, value, {neutral})`" if through is None or kept else \
        f"`tl.where(mask, value, {neutral})` with the load's mask along the product's axes"
    if fold is not None:
        kept = analysis.kept_mask(call, fold.call)
        where = f"`tl.where({kept}, value, {neutral})`" if kept else \
            f"`tl.where(mask, value, {neutral})` with the load's mask along the axes kept"
        # A `tl.dot`'s second operand (keys of `q @ k.T`) leaves its padded lanes as columns of the product.
        part = "column" if id(call) in _other_operand_loads(analysis, call, fold, ours=False) else "row"
        return _where_verdict(call, f"Masked load pads with `other={ast.unparse(other)}`, but "
                                    f"`{ast.unparse(fold.call.func)}` at line {fold.call.lineno} turns those {part}s "
                                    f"to {NEUTRAL_WORDS.get(fold.needs, 'a value')}",
                              f"before {_describe(ctx, reach)}", "which needs a `tl.where`",
                              [f"The fill is right for {_describe(ctx, fold)}, which folds each masked-off {part} along an "
                               f"unmasked axis, but the {part}s it leaves hold {NEUTRAL_WORDS.get(fold.needs, 'that value')} "
                               f"where {_describe(ctx, reach)} needs {NEUTRAL_WORDS[_wanted(reach)]}. Wrap {_wrapped(analysis, reach)} "
                               f"in {where}; an infinite `other` would meet the other operand's "
                               f"values of either sign (or 0) and give NaN, so no fill fixes it and nothing is applied.",
                               *also])
    partners, per_row = feeding
    rows = [f"The load{'s' if len(per_row) > 1 else ''} at line{'s' if len(per_row) > 1 else ''} "
            f"{', '.join(str(p.lineno) for p in per_row)} {'hold' if len(per_row) > 1 else 'holds'} one value per row "
            f"or column (a row's or a channel's parameter{'s' if len(per_row) > 1 else ''}, such as a length, a scale "
            f"or a mean): real data on the padded lanes too, where the math on the way reads "
            f"{'them' if len(per_row) > 1 else 'it'}."] if per_row else []
    alike = [f"The math also reads the load{'s' if len(partners) > 1 else ''} at line "
             f"{', '.join(str(p.lineno) for p in partners)}, padded alike: this finding stands for "
             f"{'them' if len(partners) > 1 else 'it'}."] if partners else []
    return _where_verdict(call, f"Masked load pads with `other={ast.unparse(other)}`, but math changes those lanes",
                          f"before {_describe(ctx, reach)}", "which needs them re-masked with `tl.where`",
                          [f"The fill is the neutral element of {_describe(ctx, reach)}, but the math between the load and "
                           f"line {reach.call.lineno} leaves the lanes other than {NEUTRAL_WORDS[_wanted(reach)]} there. "
                           f"Wrap {_wrapped(analysis, reach)} in {remasked}: "
                           "neither 0 nor an infinite `other` fixes it, so nothing is applied.", *also, *rows, *alike])


def _wrapped(analysis: PaddedLanes, reach: Reach) -> str:
    """What the remedy's `tl.where` wraps: the value reduced at the reduction's line, or, where that value is an
    accumulator a loop adds to (`acc += x * x`, then `tl.sum(acc)`), what each pass adds: masking the total would
    drop the real data of the earlier chunks too."""
    reduced = analysis.reduced(reach.call)
    if isinstance(reduced, ast.Name):
        added = sorted(d.stmt.lineno for d in analysis.flow.reaching(reduced)
                       if d.kind == "augassign" and isinstance(d.stmt, ast.AugAssign) and isinstance(d.stmt.op, ast.Add))
        if added:
            return f"what line {added[0]} adds to `{reduced.id}`"
    return f"the value reduced at line {reach.call.lineno}"


def _nan_verdict(analysis: PaddedLanes, call: ast.Call, other: ast.expr, reach: Reach, function: ast.AST) -> Verdict:
    """The fill (or its log) meets an exact 0 on the way to a sum (0 * inf, or 0 / 0 of two zero-padded loads):
    the lanes are NaN, and so is the sum."""
    mask = ast.unparse(load_argument(call, 1, "mask"))  # type: ignore[arg-type]
    fill = constant_class(other)
    reduced = analysis.reduced(reach.call) or call
    feeding = analysis.loads_feeding(reduced) or set()
    partners = sorted({p.lineno for p in analysis.filled_alike(call, function) if id(p) in feeding})
    if fill in (NEG_INF, POS_INF) and partners:
        # two rows padded with the same infinity meet (`t_logp - s_logp` of two log-softmaxes): a re-mask at the sum
        remedy = (f"Here the fill meets the same infinity from the load{'s' if len(partners) > 1 else ''} at line"
                  f"{'s' if len(partners) > 1 else ''} {', '.join(map(str, partners))}, padded alike. Wrap "
                  f"{_wrapped(analysis, reach)} in `tl.where({mask}, value, 0.0)`; a fill alone does not fix it, so "
                  "nothing is applied")
    elif fill in (NEG_INF, POS_INF) and NAN not in analysis.lanes(reduced, call, fill, True, reach, stand_in=True).classes:
        # the fill meets another exact infinity (a running maximum started at -inf that only padded lanes reach,
        # `m - m_new`): a re-mask at the sum would also drop what earlier passes kept on those lanes
        remedy = ("Here the fill meets another infinity exactly, as a running maximum started at -inf that only "
                  "padded lanes have reached (`m - m_new` is -inf - (-inf)): keep those lanes out of that update "
                  "(`tl.where(m_new == float(\"-inf\"), old, new)`), or pad with a large finite value the data's "
                  "dtype holds (`-1e30` in float32); nothing is applied")
    else:
        remedy = f"Wrap {_wrapped(analysis, reach)} in `tl.where({mask}, value, 0.0)`; a fill alone does not fix it, so nothing is applied"
    return _where_verdict(call, f"Masked load pads with `other={ast.unparse(other)}`: the math makes its lanes NaN",
                          f"before `{ast.unparse(reach.call.func)}` at line {reach.call.lineno}", "which needs a `tl.where`",
                          [f"An infinity times 0 is NaN, as are 0 / 0 and an infinity minus itself (-inf - (-inf)), and "
                           f"a sum with one NaN lane is NaN for the whole row "
                           f"({evidence.fixture_phrase(ENTROPY_NAN)}). {remedy}."], severity="error")


def _infinite_sum_verdict(ctx: MatchContext, analysis: PaddedLanes, call: ast.Call, other: ast.expr, fill: str, reach: Reach,
                          right: list[Reach]) -> Verdict:
    """The infinite fill is right at `right` but reaches the sum `reach` as itself: the sum is infinite."""
    mask = ast.unparse(load_argument(call, 1, "mask"))  # type: ignore[arg-type]
    kept = " and ".join(_describe(ctx, r) for r in right[:2])
    return _where_verdict(call, f"Masked load pads with `other={ast.unparse(other)}`, and its masked-off lanes reach",
                          f"{_describe(ctx, reach)} as {NEUTRAL_WORDS[fill]}", "which needs them re-masked with `tl.where`",
                          [f"The fill is right for {kept}, but a sum with one infinite lane is infinite for the whole "
                           f"row (and NaN where it is then multiplied by 0). Wrap {_wrapped(analysis, reach)} "
                           f"in `tl.where({mask}, value, 0.0)`; no fill alone is right at every "
                           f"reduction, so nothing is applied."], severity="error")


def _where_verdict(call: ast.Call, problem: str, reduction: str, remedy: str, notes: list[str],
                   severity: str = "warning") -> Verdict:
    """A finding whose remedy is a `tl.where`, not a fill: shown, never applied."""
    return Verdict(vars={"problem": problem, "reduction": reduction, "remedy": remedy}, severity=severity,
                   applicability="display-only", notes=notes, data={"neutral": None, "call": call})


def _opposite(needs: str) -> str | None:
    return {NEG_INF: POS_INF, POS_INF: NEG_INF}.get(needs)


@fixer("masked-load-neutral-other")
def masked_load_neutral_other(ctx: MatchContext, verdict: Verdict) -> RawEdits | None:
    """Sets `other` to the neutral element of the reductions the masked-off lanes reach: replaces a literal
    `other`, or appends `other=...` to the call."""
    call: ast.Call = verdict.data["call"]
    if verdict.data["neutral"] is None:
        return None  # a `tl.where` is needed, not a fill
    text = NEUTRAL_TEXT[verdict.data["neutral"]]
    other = load_argument(call, 2, "other")
    if other is not None:
        start, end = ctx.file.span_of(other)
        return [(start, end, text)]
    last = max([*call.args, *call.keywords], key=lambda n: (getattr(n, "end_lineno", 0), getattr(n, "end_col_offset", 0)))
    end = ctx.file.span_of(last)[1]
    return [(end, end, f", other={text}")]
