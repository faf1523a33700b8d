"""TL109: a launch grid whose axis 1 or 2 is a runtime count that can pass CUDA's 65,535 limit there."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass

from tritonlint import evidence
from tritonlint.analysis.host import HostScope
from tritonlint.analysis.host_tensors import callers_pass_unit_dimension
from tritonlint.analysis.launches import bind_launch
from tritonlint.analysis.model import JitFunction, LaunchSite, ModuleModel
from tritonlint.analysis.project import Project
from tritonlint.analysis.provenance import (
    SEQUENCE_LETTERS,
    Origin,
    Provenance,
    grid_axes,
    large_count,
    pixel_count,
    sequence_count,
    sequence_length,
)
from tritonlint.context import Exemption, MatchContext, RawEdits, Verdict, condition, fixer

_DECODE = re.compile(r"decod|single_query", re.IGNORECASE)  # decode, decoding; vLLM v1's single-query attention
AXIS_LIMIT = 65_535  # CUDA's gridDim.y / gridDim.z; gridDim.x takes 2**31 - 1


@dataclass(frozen=True)
class Launch:
    """One grid axis of a launch: what an exemption reads."""

    provenance: Provenance
    site: LaunchSite
    kernel: JitFunction
    axis: int
    project: Project | None


def _same_value(a: Origin, b: Origin) -> bool:
    return a.text == b.text and a.names[:1] == b.names[:1]


def _buckets(origin: Origin) -> list[Origin]:
    """The arguments of the `triton.next_power_of_2` buckets a value is computed from."""
    own = [origin.parts[0]] if origin.kind == "bucket" and origin.parts else []
    return own + [b for part in origin.parts for b in _buckets(part)]


def _one_tile_spans(launch: Launch, count: Origin) -> bool:
    """Another argument of the launch is `next_power_of_2` of the same count, or the count itself passed to a
    constexpr the kernel takes as a tile size (`T_const=T` into `tl.arange(0, T_const)`): every program holds
    the whole count in one tile, so count programs on the axis times a count-long tile is quadratic in it."""
    provenance = launch.provenance
    if any(_same_value(bucketed, count) for arg in launch.site.args
           if arg.node is not None for bucketed in _buckets(provenance.origin(arg.node))):
        return True
    values = bind_launch(provenance.host.model, launch.site, launch.kernel).values
    return any(_same_value(provenance.origin(values[param]), count)
               for param in launch.kernel.tile_sizes if param in values)


_ALLOCATORS = frozenset(f"torch.{n}" for n in ("empty", "zeros", "ones", "full", "rand", "randn"))


def _sizes(call: ast.Call, name: str) -> list[ast.expr]:
    """The size arguments of `torch.empty(b, h, n, n)`, `torch.empty((b, h, n, n))`, `torch.full((n, n), v)`."""
    args = call.args[:1] if name == "torch.full" else call.args
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        return list(args[0].elts)
    return list(args)


def _quadratic_output(launch: Launch, count: Origin) -> bool:
    """The launching function allocates a tensor with the count in two of its sizes (`torch.empty(b, h, n,
    n)`), whichever launch receives it (at module level: a tensor this launch receives): 65,536 on the axis
    would need 2**32 elements per item of the other sizes on every call."""
    provenance = launch.provenance
    host = provenance.host
    names = list(host.values) if host.node is not None else \
        [arg.node.id for arg in launch.site.args if isinstance(arg.node, ast.Name)]
    for name in names:
        value = host.value_of(name)
        allocator = host.model.qualify(value.func) if isinstance(value, ast.Call) else None
        if not isinstance(value, ast.Call) or allocator not in _ALLOCATORS:
            continue
        if sum(_same_value(provenance.origin(size), count) for size in _sizes(value, allocator)) >= 2:
            return True
    return False


# A model's longest sequence, bound to a literal in the module (`l_max = 32768`, `self.max_seq_len = 4096`).
_LONGEST = re.compile(r"^(l_max|max_?len(gth)?|max_?seq(uence)?_?len(gth)?|max_?seqlen|seq_?len_?max|"
                      r"max_?positions?|max_position_embeddings|max_source_positions)$", re.IGNORECASE)


def _declared_longest(model: ModuleModel) -> int | None:
    """The largest literal the module binds to a name of a model's longest sequence (a bound that is not a
    literal counts as unbounded); None where it binds none."""
    def scan() -> int | None:
        found: list[int] = []
        for node in ast.walk(model.tree):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            for target in targets:
                name = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else ""
                if _LONGEST.match(name):
                    value = getattr(node, "value", None)
                    found.append(value.value if isinstance(value, ast.Constant) and type(value.value) is int else AXIS_LIMIT + 1)
        return max(found) if found else None
    return model.memoized(("tl109-declared-longest",), scan)


def _within_declared_length(launch: Launch, count: Origin) -> bool:
    """The count is a sequence length and the module declares the model's longest sequence below the limit."""
    longest = _declared_longest(launch.provenance.host.model)
    return sequence_count(count) and longest is not None and longest <= AXIS_LIMIT


def _bounded_at_launch(launch: Launch, count: Origin) -> bool:
    """A test around the launch, an assert or an early exit bounds the count's name by a constant within the limit."""
    bound = launch.provenance.upper_bound(count.names[0], launch.site.node) if count.names else None
    return bound is not None and bound <= AXIS_LIMIT


def _unit_dimension(launch: Launch, count: Origin) -> bool:
    """The count is a dimension of a tensor the launching function receives, and every call of that function in
    the project passes the tensor with a new dimension of 1 there (`attn(q.unsqueeze(1), ...)` for
    `b, seq_len, h, d = q.shape`): the count is 1."""
    return count.kind == "shape" and callers_pass_unit_dimension(launch.project, launch.provenance.host, count.tensor,
                                                                 count.index)


_CATCHES_LAUNCH_ERRORS = frozenset({"Exception", "BaseException", "RuntimeError"})


def _falls_back(launch: Launch, count: Origin) -> bool:
    """The launch sits in the body of a `try` whose handler catches the launch's error (a bare `except`,
    `except Exception` or `RuntimeError`) and does not raise it again: a grid past the limit takes the fallback."""
    root: ast.AST = launch.site.scope or launch.provenance.host.model.tree
    for node in ast.walk(root):
        if not isinstance(node, ast.Try) or not any(launch.site.node in ast.walk(stmt) for stmt in node.body):
            continue
        for handler in node.handlers:
            caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
            names = {c.id if isinstance(c, ast.Name) else c.attr if isinstance(c, ast.Attribute) else "" for c in caught
                     if c is not None}
            if (handler.type is None or names & _CATCHES_LAUNCH_ERRORS) \
                    and not any(isinstance(stmt, ast.Raise) for stmt in handler.body):
                return True
    return False


# Reasons a large count on grid axis 1 or 2 stays below the limit in practice; the rule doc lists each.
EXEMPTIONS: tuple[Exemption[Callable[[Launch, Origin], bool]], ...] = (
    Exemption("one-tile-spans-count", "the same count, bucketed by `triton.next_power_of_2` (or a function "
              "named for it, a project's own `next_power_of_two(n)`) or passed itself to a "
              "constexpr the kernel takes as a tile size, is also a tile size of the launch (`grid = (B, "
              "max_seq_len)` with `BLOCK = next_power_of_2(max_seq_len)`, or `T_const=T` into `tl.arange(0, "
              "T_const)`): each of "
              "the count's programs holds the whole count in one tile, a count-by-count block per item, which "
              "real inputs keep far below 65,536", _one_tile_spans),
    Exemption("quadratic-output", "the launching function allocates a tensor with the count in two of its "
              "sizes (`torch.empty(b, h, n, n)` with `grid = (b, h, n)`), passed to this launch or to another: "
              "65,536 on the axis would need 2**32 elements per item of the other sizes, 16 GiB in fp32, on "
              "every call, so real inputs stay far below the limit", _quadratic_output),
    Exemption("per-sequence-state", "the kernel loads and stores, in place, a recurrent state (a parameter "
              "named as a cache or state, not a KV cache: `cache`, `conv_state`, `ssm_state_ptr`) at offsets "
              "scaled by the axis's program id (`cache + i_n * D * W`): each program updates its own "
              "sequence's slot, so the count is a batch of sequences (a decode step's tokens), which stays "
              "far below 65,536", lambda launch, count: launch.axis in launch.kernel.state_axes),
    Exemption("declared-longest-sequence", "the count is a sequence length (by name, or the middle `S`, `T` or `L` "
              "of a shape unpacking) and the module binds the model's longest sequence to a literal of at most "
              "65,535 (`l_max = 32768`, `self.max_seq_len = 4096`, `max_position_embeddings = 2048`): the model "
              "is built for no longer input", _within_declared_length),
    Exemption("unit-dimension-from-callers", "the count is a dimension of a tensor the launching function "
              "receives, and every call of that function in the project passes the tensor with a new dimension "
              "of 1 there (`attn(q.unsqueeze(1), ...)` for `b, seq_len, h, d = q.shape`): the count is 1",
              _unit_dimension),
    Exemption("fallback-on-failure", "the launch sits in a `try` whose handler catches its error (a bare "
              "`except`, `except Exception` or `RuntimeError`) without raising it again: a grid past the limit "
              "fails at launch and the handler computes the result another way", _falls_back),
    Exemption("traced-pattern-replacement", "the launch is in a torch.fx pattern replacement (a module that defines "
              "`pattern` and `replacement` or `replacement_func`): it runs only inside the captured graph the "
              "pattern matched, at that graph's traced shapes (a speech encoder's 199 frames, an encoder's "
              "512 positions), not on arbitrary inputs",
              lambda launch, count: launch.provenance.host.model.is_pattern_replacement),
    Exemption("bounded-where-launched", "an `if` around the launch, an assert or an early exit bounds the count by a "
              "constant of at most 65,535 (`if num_tokens <= 256:` with the larger inputs launched another way in "
              "the `else`)", _bounded_at_launch),
)


def _has_launch(model: ModuleModel, target: int | None) -> bool:
    return bool(model.launches)


def _one_sequence(origin: Origin) -> bool:
    """A sequence length by `sequence_length`, a letter only in a layout of three or four dimensions (`B, T, C`,
    `B, H, S, D`) with no image plane beside it: in five or more, a middle `T` counts video frames or chunks
    (`B, T, H, W, C`, Mamba2's `N, T, L, H, D`), a few hundred at most, and so it does beside a height and a
    width (a channel-first clip's `C, T, H, W`)."""
    if not sequence_length(origin):
        return False
    if origin.names[-1] not in SEQUENCE_LETTERS:
        return True
    return len(origin.siblings) <= 3 and not _IMAGE_PLANE <= {sibling.upper() for sibling in origin.siblings}


def _sequence_product(origin: Origin) -> str | None:
    """A product with a sequence length among its factors (`maxT * maxU`, an RNN-T lattice of frames by labels):
    at least as many programs as the sequence length alone."""
    if origin.kind != "product":
        return None
    sequence = next((part for part in origin.parts if _one_sequence(part)), None)
    return f"{origin.describe()}, where {sequence.describe()} is a sequence length" if sequence is not None else None


# The sibling names of a frame count: the height and width of each frame.
_IMAGE_PLANE = frozenset("HW")


@condition("grid-axis-large-count", provides=("kernel", "axis", "value", "why"), applies=_has_launch)
def grid_axis_large_count(ctx: MatchContext) -> Verdict | None:
    """The launch `kernel[grid](...)` puts, on grid axis 1 or 2, a host value that can exceed 65,535: an
    element count (numel), the rows of a tensor flattened to rows, a token/row/sequence count by name, or a
    product with one of those. Ceiling divisions by a block, head counts and batch sizes are not."""
    return ctx.first_verdict(lambda launch, kernel: _large_count(ctx, launch, kernel))


def _large_count(ctx: MatchContext, launch: LaunchSite, kernel: JitFunction) -> Verdict | None:
    if _DECODE.search(kernel.name) or _DECODE.search(ctx.file.path.rpartition("/")[2]):
        return None  # a decode step's token count is its batch: far below the limit
    host = HostScope.of(ctx.model, launch.scope)
    found = grid_axes(host, launch)
    if found is None:
        return None
    axes, _ = found
    provenance = Provenance.of(host)
    for axis, expr in enumerate(axes[1:3], start=1):
        origin = provenance.origin(expr)
        # A middle dimension of a shape unpacking named `S`, `T` or `L` (`B, S, H, D = x.shape`) counts positions
        # too; TL102 does not read it so (a position times one token's width stays small there).
        why = large_count(origin) or pixel_count(origin) or (
            f"{origin.describe()} is a sequence length" if _one_sequence(origin) else None) or _sequence_product(origin)
        if why is None:
            continue
        seen = Launch(provenance, launch, kernel, axis, ctx.project)
        if any(exemption.applies(seen, origin) for exemption in EXEMPTIONS):
            continue
        notes = [f"CUDA allows at most {AXIS_LIMIT:,} programs on grid axes 1 and 2 (axis 0 takes 2**31 - 1): "
                 f"put the large count on axis 0 and swap tl.program_id(0) and tl.program_id({axis}) in the kernel.",
                 f"Evidence: {evidence.measured_phrase('TL109', 'fails')}."]
        return Verdict(vars={"kernel": ctx.launched_name(launch, kernel), "axis": str(axis), "value": ctx.file.text_of(expr), "why": why},
                       span=ctx.file.span_of(expr), notes=notes, data={"axes": (axes[0], expr)})
    return None


@fixer("grid-axis-swap")
def grid_axis_swap(ctx: MatchContext, verdict: Verdict) -> RawEdits | None:
    """Swap the large grid element with axis 0 (shown only: the kernel's program_id axes must swap too)."""
    first, large = verdict.data["axes"]
    return [(*ctx.file.span_of(first), ctx.file.text_of(large)), (*ctx.file.span_of(large), ctx.file.text_of(first))]
