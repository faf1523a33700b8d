"""TL113: tile shapes that Triton rejects at compile time, from the symbolic shapes of analysis/tiles.py.

A `tl.dot` whose operands' inner dimensions differ, or whose accumulator is not the product's shape;
elementwise operands, `tl.where` arguments, load masks and stored values whose shapes cannot broadcast;
and a `tl.dot` whose inner (K) dimension is below 16, the NVIDIA backend's minimum. Only dimensions that are
known ints in a scenario can disagree: a symbolic or unknown dimension never makes a finding. The K check
is per scenario when an operand is known to be 16-bit (a cast or constructor names its type), and otherwise
only when K < 16 in every scenario the tl.dot is compiled in.
"""

from __future__ import annotations

import ast

from tritonlint import evidence
from tritonlint.analysis.backends import other_backend
from tritonlint.analysis.model import JitFunction
from tritonlint.analysis.tiles import (
    ShapeMap,
    Tile,
    block_through_scalar,
    can_broadcast,
    format_shape,
    is_sixteen_bit,
    scenario_shapes,
    shape_sources,
    wrong_dot_ranks,
)
from tritonlint.analysis.triton_names import TL
from tritonlint.context import MatchContext, ParamSpec, Verdict, condition
from tritonlint.walk import children

MIN_K = 16  # NVIDIA backend: min_dot_size (1, 1, 16) for 16- and 32-bit inputs
# The first line of the CompilationError each case raises (triton 3.6), and the fixture that reproduces it.
ERRORS: dict[str, tuple[str, str | None]] = {
    "inner": ("input and other must have equal reduction dimensions", "TL113-dot-inner-mismatch"),
    "rank": ("input and other must have equal ranks >= 2", "TL113-dot-rank"),
    "acc": ("accumulator shape is incompatible", "TL113-dot-acc-mismatch"),
    "k": (f"Input shapes should have M >= 1, N >= 1 and K >= {MIN_K}", "TL113-dot-k-below-16"),
    "broadcast": ("Cannot make_shape_compatible: incompatible dimensions", "TL113-broadcast-mismatch"),
    "store": ("Expected pointer argument to have shape", None),
    # a block mask, other or value through one scalar pointer (Triton 3.6's semantic.py; the load's mask and the
    # stored value have fixtures)
    "load-mask": ("Mask argument cannot be block type if pointer argument is not a block", "TL113-scalar-pointer-mask"),
    "load-other": ("Other argument cannot be block type if pointer argument is not a block", None),
    "store-value": ("Value argument cannot be block type if pointer argument is not a block", "TL113-scalar-pointer-store"),
    "store-mask": ("Mask argument cannot be block type if pointer argument is not a block", None),
}


def measured(case: str) -> str:
    """How the case's fixture failed on the GPU, from the committed results."""
    fixture = ERRORS[case][1]
    if fixture is None:
        return "Triton 3.6 checks it as it builds the kernel; no fixture measures this case"
    for row in evidence.results_for("TL113"):
        if row.get("fixture") == fixture and row.get("slow_failure"):
            return f"fixture {fixture} fails on {evidence.device_of(row)} with {row['slow_failure']}"
    return f"fixture {fixture} reproduces it; not measured on a GPU yet"


@condition("tile-shape-mismatch", params={"other-backends": ParamSpec("list", required=False)},
           provides=("problem",), applies=lambda model, target: bool(model.functions))
def tile_shape_mismatch(ctx: MatchContext, other_backends: list[str] | None = None) -> Verdict | None:
    """Tile shapes that cannot compile: tl.dot inner dimensions or accumulator shape that disagree,
    operands that cannot broadcast, a tl.dot K below 16 (not for code written for other backends)."""
    function = ctx.function
    if function is None or function.node is None:
        return None
    backends = tuple(ctx.arg(other_backends) or ())
    verdicts = ctx.model.memoized(("tl113-verdicts", id(function), backends),
                                  lambda: _verdicts(ctx, function, backends))
    return verdicts.get(ctx.span())


_NODES = (ast.Call, ast.BinOp, ast.Compare, ast.AugAssign)


def _verdicts(ctx: MatchContext, function: JitFunction, backends: tuple[str, ...]) -> dict[tuple[int, int], Verdict]:
    """The verdict of every node of the function the rule can match, by span, once per function: the rule
    matches every operator and most calls, and mapping each match to its ast node cost more than judging it.
    A span holds the outermost node of those types there, as `MatchContext.ast_node` finds it."""
    assert function.node is not None
    outermost: dict[tuple[int, int], tuple[ast.AST, ast.stmt | None]] = {}  # with its innermost statement
    pending: list[tuple[ast.AST, ast.stmt | None]] = [(function.node, None)]
    while pending:  # depth first: a node comes before the nodes inside it
        node, statement = pending.pop()
        if isinstance(node, _NODES):
            outermost.setdefault(ctx.file.span_of(node), (node, statement))
        pending.extend((child, child if isinstance(child, ast.stmt) else statement) for child in children(node))
    k_applies: bool | None = None
    found = {}
    for span, (node, statement) in outermost.items():
        if isinstance(node, ast.Call) and k_applies is None and ctx.model.qualify(node.func) == f"{TL}.dot":
            k_applies = not other_backend(ctx.file.path, function.name, ctx.file.text, ctx.model, backends)
        verdict = _judge(ctx, function, node, statement, bool(k_applies))
        if verdict is not None:
            found[span] = verdict
    # K below 16 comes from one tile size (a launch's BLOCK_K=1): one finding at the first tl.dot, the others related.
    small = sorted((getattr(outermost[span][0], "lineno", 0), span) for span, v in found.items()
                   if v.data.get("case") == "k")
    if len(small) > 1:
        first = found[small[0][1]]
        first.related += [span for _, span in small[1:]]
        lines = ", ".join(str(line) for line in sorted({line for line, _ in small[1:]}))
        first.notes.insert(0, f"{len(small) - 1} more tl.dot call(s) of `{function.name}` have K below {MIN_K} too "
                              f"(line(s) {lines}).")
        for _, span in small[1:]:
            del found[span]
    return found


_CALLS = frozenset({f"{TL}.dot", f"{TL}.store", f"{TL}.load", f"{TL}.where"})


def _judge(ctx: MatchContext, function: JitFunction, node: ast.AST, stmt: ast.stmt | None,
           k_applies: bool) -> Verdict | None:
    name = ctx.model.qualify(node.func) if isinstance(node, ast.Call) else None
    if isinstance(node, ast.Call) and name not in _CALLS:
        return None
    maps = [m for m in scenario_shapes(ctx.model, function) if stmt is not None and m.reached(stmt)]
    if not maps:
        return None
    if isinstance(node, ast.Call):
        if name == f"{TL}.dot":
            return _dot(node, maps, k_applies)
        if name == f"{TL}.store":
            return _store(node, maps)
        if name == f"{TL}.load":
            operands = _load_operands(node)
            return _broadcast(node, operands, maps, f"`{ast.unparse(node.func)}` arguments") \
                or _scalar_pointer(node, operands, maps)
        if name == f"{TL}.where":
            return _broadcast(node, _where_operands(node), maps, f"`{ast.unparse(node.func)}` arguments")
        return None
    if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.MatMult):  # `a @ b` is no elementwise operation
        return _broadcast(node, [("left", node.left), ("right", node.right)], maps, "operands")
    if isinstance(node, ast.Compare) and len(node.comparators) == 1:
        return _broadcast(node, [("left", node.left), ("right", node.comparators[0])], maps, "operands")
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        return _broadcast(node, [("target", node.target), ("value", node.value)], maps, "operands")
    return None


def _arg(node: ast.Call, index: int, keyword: str) -> ast.expr | None:
    if len(node.args) > index:
        return node.args[index]
    return next((k.value for k in node.keywords if k.arg == keyword), None)


def _load_operands(node: ast.Call) -> list[tuple[str, ast.expr]]:
    return [(role, expr) for role, expr in (("pointer", _arg(node, 0, "pointer")), ("mask", _arg(node, 1, "mask")),
                                            ("other", _arg(node, 2, "other"))) if expr is not None]


def _where_operands(node: ast.Call) -> list[tuple[str, ast.expr]]:
    return [(role, expr) for role, expr in (("condition", _arg(node, 0, "condition")), ("x", _arg(node, 1, "x")),
                                            ("y", _arg(node, 2, "y"))) if expr is not None]


def _named(expr: ast.expr, tile: Tile) -> str:
    """'`a` (64, 32) from line 20'."""
    text = ast.unparse(expr)
    text = text if len(text) <= 40 else text[:37] + "..."
    return f"`{text}` {format_shape(tile.shape)}" + (f" from line {tile.line}" if tile.made_by is not None else "")


def _scenario_note(failing: int, total: int, *tiles: Tile) -> list[str]:
    sources = shape_sources(*tiles)
    notes = [f"Shapes: {'; '.join(t.describe() for t in tiles)}."]
    if sources:
        notes.append(f"Dimensions from {sources}.")
    if total > 1:
        notes.append(f"{failing} of {total} scenarios (constexpr defaults, autotune configs, literal launches) fail.")
    return notes


def _verdict(case: str, problem: str, notes: list[str]) -> Verdict:
    notes = notes + [f"Triton raises CompilationError: \"{ERRORS[case][0]}\"; {measured(case)}."]
    return Verdict(vars={"problem": problem}, notes=notes, data={"case": case})


def _dot(node: ast.Call, maps: list[ShapeMap], k_applies: bool) -> Verdict | None:
    a_node, b_node = _arg(node, 0, "input"), _arg(node, 1, "other")
    acc_node = _arg(node, 2, "acc")
    if a_node is None or b_node is None:
        return None
    ranked = wrong_dot_ranks(maps, a_node, b_node)
    if ranked:
        a, b = ranked[0]
        problem = (f"tl.dot operands must both be 2-D or both 3-D: {_named(a_node, a)} is "
                   f"{len(a.shape)}-D, {_named(b_node, b)} is {len(b.shape)}-D")  # type: ignore[arg-type]
        return _verdict("rank", problem, _scenario_note(len(ranked), len(maps), a, b))
    inner, accumulator, small, k_known = [], [], [], 0
    sixteen = False
    for shapes in maps:
        a, b = shapes.tile(a_node), shapes.tile(b_node)
        ranks = {len(t.shape) for t in (a, b) if t.shape is not None}
        if len(ranks) != 1 or not ranks <= {2, 3}:
            continue  # neither operand known, or ranks that another check of Triton's rejects
        rank = ranks.pop()
        k_a = a.shape[-1] if a.shape is not None else None
        k_b = b.shape[-2] if b.shape is not None else None
        if isinstance(k_a, int) and isinstance(k_b, int) and k_a != k_b:
            inner.append((a, b))
            continue
        if acc_node is not None:
            acc = shapes.tile(acc_node)
            # One known operand is enough: the rows come from the first, the columns from the second.
            product = (a.shape[:-1] if a.shape is not None else (None,) * (rank - 1)) + \
                (b.shape[-1:] if b.shape is not None else (None,))
            if acc.shape is not None and acc.shape != () and _differs(acc.shape, product):
                accumulator.append((a, b, acc, product))
        # K is known where both operands agree, or one is known and the other's shape is not: a literal against
        # a symbol (`b` (1, ?) against `a` (BLOCK, BLOCK)) may as well be a mismatch as a K of 1.
        k = k_a if isinstance(k_a, int) and not isinstance(k_b, str) else \
            k_b if isinstance(k_b, int) and not isinstance(k_a, str) else None
        if isinstance(k, int):
            k_known += 1
            if k < MIN_K:
                small.append((a, b, k))
                sixteen = sixteen or is_sixteen_bit(a.dtype) or is_sixteen_bit(b.dtype)
    if inner:
        a, b = inner[0]
        problem = (f"tl.dot inner dimensions differ: {_named(a_node, a)} has K={a.shape[-1]}, "  # type: ignore[index]
                   f"{_named(b_node, b)} has K={b.shape[-2]}")  # type: ignore[index]
        return _verdict("inner", problem, _scenario_note(len(inner), len(maps), a, b))
    if accumulator:
        a, b, acc, product = accumulator[0]
        problem = (f"tl.dot accumulator {_named(acc_node, acc)} is not the product's shape "  # type: ignore[arg-type]
                   f"{format_shape(product)} (`{ast.unparse(a_node)}` x `{ast.unparse(b_node)}`)")
        return _verdict("acc", problem, _scenario_note(len(accumulator), len(maps), *(t for t in (a, b, acc) if t.shape)))
    # K < 16: in any scenario when an operand is known to be 16-bit, else in every scenario (all with K known).
    if k_applies and small and (sixteen or len(small) == k_known == len(maps)):
        a, b, k = small[0]
        known = [(node_, t) for node_, t in ((a_node, a), (b_node, b)) if t.shape is not None]
        problem = (f"tl.dot inner dimension K={k} is below the tensor-core path's minimum {MIN_K} "
                   f"({', '.join(_named(n, t) for n, t in known)})")
        return _verdict("k", problem, _scenario_note(len(small), len(maps), *(t for _, t in known)))
    return None


def _differs(left: tuple[object, ...], right: tuple[object, ...]) -> bool:
    if len(left) != len(right):
        return all(isinstance(d, int) for d in (*left, *right))
    return any(isinstance(x, int) and isinstance(y, int) and x != y for x, y in zip(left, right))


def _broadcast(node: ast.AST, operands: list[tuple[str, ast.expr]], maps: list[ShapeMap], what: str) -> Verdict | None:
    failing = []
    for shapes in maps:
        tiles = [(role, expr, shapes.tile(expr)) for role, expr in operands]
        for i, (_, left_expr, left) in enumerate(tiles):
            for _, right_expr, right in tiles[i + 1:]:
                reason = can_broadcast(left.shape, right.shape)
                if reason is not None:
                    failing.append((left_expr, left, right_expr, right, reason))
                    break
            else:
                continue
            break
    if not failing:
        return None
    left_expr, left, right_expr, right, reason = failing[0]
    problem = f"{what} cannot broadcast: {_named(left_expr, left)} and {_named(right_expr, right)}"
    notes = [f"Triton's broadcast finds {reason}.", *_scenario_note(len(failing), len(maps), left, right)]
    return _verdict("broadcast", problem, notes)


def _scalar_pointer(node: ast.Call, operands: list[tuple[str, ast.expr]], maps: list[ShapeMap]) -> Verdict | None:
    """tl.load through one scalar pointer with a block mask or other: Triton loads no block through a scalar."""
    if not operands or operands[0][0] != "pointer":
        return None
    pointer, roles = operands[0][1], {id(expr): role for role, expr in operands[1:]}
    for shapes in maps:
        found = block_through_scalar(shapes, pointer, [expr for _, expr in operands[1:]])
        if found is not None:
            target, expr, tile = found
            # the pointer is in the frame and the shapes note: named here, the headline ran past its limit
            problem = f"`tl.load` {roles[id(expr)]} {_named(expr, tile)} is a block, but the pointer is one scalar"
            return _verdict(f"load-{roles[id(expr)]}", problem, _scenario_note(1, len(maps), target, tile))
    return None


def _store(node: ast.Call, maps: list[ShapeMap]) -> Verdict | None:
    """tl.store: the value and mask broadcast to the pointer's shape, never beyond it."""
    pointer = _arg(node, 0, "pointer")
    if pointer is None:
        return None
    others = [(role, expr) for role, expr in (("value", _arg(node, 1, "value")), ("mask", _arg(node, 2, "mask")))
              if expr is not None]
    found = _broadcast(node, [("pointer", pointer), *others], maps, "`tl.store` arguments")
    if found is not None:
        return found
    for shapes in maps:
        target = shapes.tile(pointer)
        if target.shape is None or target.kind != "tile":
            continue
        for role, expr in others:
            tile = shapes.tile(expr)
            if tile.shape is not None and _wider(tile.shape, target.shape):
                value, where = _named(expr, tile), _named(pointer, target)
                if target.shape:
                    problem, case = f"`tl.store` {value} is larger than the pointer tile {where}", "store"
                else:
                    problem, case = f"`tl.store` {value} is a block, but the pointer {where} is a scalar", f"store-{role}"
                return _verdict(case, problem, _scenario_note(1, len(maps), target, tile))
    return None


def _wider(value: tuple[object, ...], pointer: tuple[object, ...]) -> bool:
    """Whether broadcasting `value` with `pointer` gives a known shape other than the pointer's; into a scalar
    pointer, any block is (Triton refuses a block value or mask for it, `tl.zeros([1])` included)."""
    if not pointer:
        return bool(value)
    if len(value) > len(pointer):
        return any(isinstance(d, int) and d != 1 for d in value[: len(value) - len(pointer)])
    tail = pointer[len(pointer) - len(value):]
    return any(isinstance(v, int) and isinstance(p, int) and p == 1 and v != 1 for v, p in zip(value, tail))
