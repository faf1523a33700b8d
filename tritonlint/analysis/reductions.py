"""Which reductions the masked-off lanes of a `tl.load` reach, and what value they arrive with.

A masked load fills the lanes its mask turns off with `other` (undefined when `other` is missing). Those
lanes then flow through elementwise math; a reduction along an axis the mask covers folds them in with the
real lanes. The fill is harmless only when it arrives at the reduction as that reduction's neutral element:
0 for `tl.sum`, -inf for `tl.max` / `tl.argmax`, +inf for `tl.min` / `tl.argmin`. Softmax is max, then
`exp(x - m)`, then sum: -inf arrives at the max as -inf and at the sum as exp(-inf) = 0.

The padded lanes are evaluated abstractly (a small set of value classes, below): the load under study takes
its fill, other masked loads theirs, everything else is finite real data, `tl.where(mask, x, v)` under the
load's own mask replaces the lanes by `v`. Anything the evaluation cannot follow (a helper call, a
comparison, a where under some other condition) is UNKNOWN, and a rule stays silent about it.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from tritonlint.analysis.flow import Definition, FunctionFlow, in_source_order
from tritonlint.analysis.indexing import Indices, arange_end, broadcast_axis, load_pointer, range_arguments
from tritonlint.analysis.model import PROGRAM_ID, ModuleModel, program_id_axis
from tritonlint.analysis.triton_names import TL, UNARY_MATH
from tritonlint.walk import walk

# Words of a launch switch that says whether there is padding (`EVEN_K`, `HAS_TAIL`, `USE_MASK`): see
# _Evaluation._launch_switch.
_PADDING_SWITCH = re.compile(r"even|divisible|pad|mask|bound|full|tail|rem|partial|last|check", re.IGNORECASE)

# Value classes of a padded lane. FINITE is real data or a finite constant; UNDEF a missing `other`.
ZERO, NEG_INF, POS_INF, FINITE, UNDEF, UNKNOWN = "0", "-inf", "+inf", "finite", "undefined", "unknown"
# Inside a lane evaluation only: infinities that are exactly so (a float("-inf") fill, log(0)), as opposed to
# huge finite stand-ins, and NaN, which 0 * inf makes of them. Fills, needs and reports use the plain classes.
NEG_INF_EXACT, POS_INF_EXACT, NAN = "-inf exactly", "+inf exactly", "nan"
_PLAIN = {NEG_INF_EXACT: NEG_INF, POS_INF_EXACT: POS_INF}
_EXACTLY = {NEG_INF: NEG_INF_EXACT, POS_INF: POS_INF_EXACT}
Classes = frozenset[str]
# A finite constant this far from zero stands for an infinity (-1e30, -1e9, fp16's -1e4 "minus infinity"):
# no real data reaches it.
LARGE = 1e4
# A padded lane that arrives at a sum this close to 0 (`eps * log(eps)` of a probability clamped to eps = 1e-10:
# -2.3e-9) changes it by at most that much per lane: noise beside the real terms, not a wrong result.
NEGLIGIBLE = 1e-6

LOAD = f"{TL}.load"
WHERE = f"{TL}.where"
DOT = f"{TL}.dot"
TRANS = f"{TL}.trans"
CLAMP = f"{TL}.clamp"
# Calls whose result is a compile-time property of their operand's shape, not of its lanes (`tl.numel(x)`).
SHAPE_OF = frozenset({f"{TL}.numel"})
# Reductions by the neutral element their padded lanes need.
SOFTMAX = f"{TL}.softmax"  # a max and an exp-sum along `dim` (0 when not given): its padded lanes need -inf
NEEDS = {**{f"{TL}.{n}": ZERO for n in ("sum",)},
         **{f"{TL}.{n}": NEG_INF for n in ("max", "argmax")},
         **{f"{TL}.{n}": POS_INF for n in ("min", "argmin")},
         SOFTMAX: NEG_INF}
METHOD_NEEDS = {"sum": ZERO, "max": NEG_INF, "argmax": NEG_INF, "min": POS_INF, "argmin": POS_INF}
IDENTITY = frozenset(f"{TL}.{n}" for n in ("multiple_of", "max_contiguous", "cast"))
_KEEP_SIGN = frozenset(f"{TL}.{n}" for n in ("sum", "max", "min", "cumsum"))  # reductions of non-negative values
IDENTITY_METHODS = frozenset({"to"})
# methods whose results `loads_feeding` follows: casts, reductions, transposes (`k.trans(1, 0)`) and elementwise
# math (`s.exp()`), whose lanes come from the tensor's own
_READ_METHODS = IDENTITY_METHODS | frozenset(METHOD_NEEDS) | frozenset({"trans", "permute"}) | UNARY_MATH
EXP = frozenset({f"{TL}.exp", f"{TL}.exp2", f"{TL}.math.exp", f"{TL}.math.exp2", f"{TL}.extra.libdevice.exp",
                 f"{TL}.extra.cuda.libdevice.exp"})
ABS = frozenset({f"{TL}.abs", f"{TL}.math.abs", f"{TL}.extra.libdevice.abs"})
LOG = frozenset({f"{TL}.log", f"{TL}.math.log", f"{TL}.extra.libdevice.log", f"{TL}.extra.cuda.libdevice.log"})
NON_NEGATIVE = EXP | ABS | frozenset({f"{TL}.sqrt", f"{TL}.math.sqrt", f"{TL}.sqrt_rn", f"{TL}.sigmoid"})
# Calls that map each lane of their operands to the same lane of the result (the padded lanes' path is followed).
FMA = f"{TL}.fma"  # `tl.fma(a, b, c)`: a * b + c on each lane
# One-operand math whose value on an exact lane value is known (`tl.erf(0.0)` is 0): a GELU gate of a zero-padded x.
_UNARY_VALUES: dict[str, Callable[[float], float]] = {
    "erf": math.erf, "sin": math.sin, "cos": math.cos, "floor": math.floor, "ceil": math.ceil,
    "sqrt": math.sqrt, "rsqrt": lambda x: 1 / math.sqrt(x), "log2": math.log2, "sigmoid": lambda x: 1 / (1 + math.exp(-x)),
    "tanh": math.tanh}
UNARY_VALUES = {f"{prefix}.{n}": f for n, f in _UNARY_VALUES.items()
                for prefix in (TL, f"{TL}.math", f"{TL}.extra.libdevice", f"{TL}.extra.cuda.libdevice")}
ELEMENTWISE_MATH = frozenset(f"{TL}.{n}" for n in ("fdiv", "div_rn", "sqrt_rn", "cdiv", "umulhi"))
LIBDEVICE = (f"{TL}.extra.libdevice.", f"{TL}.extra.cuda.libdevice.", f"{TL}.math.")
ELEMENTWISE = IDENTITY | NON_NEGATIVE | frozenset({f"{TL}.where", f"{TL}.maximum", f"{TL}.minimum", f"{TL}.log",
                                                   f"{TL}.log2", CLAMP, FMA})


def each_once(pending: list[ast.AST]) -> Iterator[ast.AST]:
    """The nodes of a worklist, each once: the caller appends to `pending` what a node leads to."""
    seen: set[int] = set()
    while pending:
        node = pending.pop()
        if id(node) not in seen:
            seen.add(id(node))
            yield node


def load_argument(call: ast.Call, position: int, name: str) -> ast.expr | None:
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == name), None)


def constant_class(expr: ast.expr | None) -> str | None:
    """The class of a literal fill: 0, +-inf (float("inf"), math.inf, huge finite constants), finite; None
    when `expr` is not a literal."""
    value = literal_number(expr)
    return None if value is None else _class_of(value)


def literal_number(expr: ast.expr | None) -> float | None:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
        return float(expr.value)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        inner = literal_number(expr.operand)
        return None if inner is None else -inner if isinstance(expr.op, ast.USub) else inner
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "float" \
            and len(expr.args) == 1 and isinstance(expr.args[0], ast.Constant) and isinstance(expr.args[0].value, str):
        try:
            return float(expr.args[0].value)
        except ValueError:
            return None
    if isinstance(expr, ast.Attribute) and expr.attr == "inf" and isinstance(expr.value, ast.Name) \
            and expr.value.id in ("math", "np", "numpy", "torch"):
        return math.inf
    if isinstance(expr, ast.Attribute) and expr.attr in ("max", "min") and isinstance(expr.value, ast.Call) \
            and isinstance(expr.value.func, ast.Attribute) and expr.value.func.attr == "finfo":
        dtype = ast.unparse(expr.value.args[0]) if expr.value.args else ""  # host code: `torch.finfo(torch.float32).max`
        largest = _FINFO_MAX["float16" if dtype.endswith(("float16", "half")) else "float32"]
        return largest if expr.attr == "max" else -largest
    return None


_FINFO_MAX = {"float16": 65504.0, "float32": 3.4028234663852886e38}  # bfloat16's is float32's to 3 digits


def plain(c: str) -> str:
    """The class as fills and needs name it: an exact infinity is an infinity."""
    return _PLAIN.get(c, c)


def _exact_if(c: str, exact: bool) -> str:
    return _EXACTLY.get(c, c) if exact else c


def _neg(c: str) -> str:
    return {NEG_INF: POS_INF, POS_INF: NEG_INF, NEG_INF_EXACT: POS_INF_EXACT, POS_INF_EXACT: NEG_INF_EXACT}.get(c, c)


def _add(a: str, b: str) -> str:
    if NAN in (a, b):
        return NAN
    if UNKNOWN in (a, b):
        return UNKNOWN
    if UNDEF in (a, b):
        return UNDEF
    if {a, b} == {NEG_INF_EXACT, POS_INF_EXACT}:
        return NAN  # log(p) - log(q) with both 0
    exact = bool({a, b} & {NEG_INF_EXACT, POS_INF_EXACT})
    a, b = plain(a), plain(b)
    if {a, b} == {NEG_INF, POS_INF}:
        return UNKNOWN  # nan, or a huge stand-in that the real infinity wins over
    for inf in (NEG_INF, POS_INF):
        if inf in (a, b):
            return _exact_if(inf, exact)  # -inf + x is -inf exactly
    return ZERO if a == b == ZERO else FINITE


def _mul(a: str, b: str) -> str:
    if NAN in (a, b):
        return NAN
    if UNKNOWN in (a, b):
        return UNKNOWN
    if ZERO in (a, b):
        # 0 * undefined counts as 0: whatever a missing `other` leaves, another operand's zero fill cancels it.
        # 0 * inf is NaN; 0 times a huge finite stand-in (-1e30) is 0, and a plain infinity may be either.
        if {a, b} & {NEG_INF_EXACT, POS_INF_EXACT}:
            return NAN
        return UNKNOWN if {a, b} & {NEG_INF, POS_INF} else ZERO
    if UNDEF in (a, b):
        return UNDEF
    exact = bool({a, b} & {NEG_INF_EXACT, POS_INF_EXACT})
    a, b = plain(a), plain(b)
    if a in (NEG_INF, POS_INF) and b in (NEG_INF, POS_INF):
        return _exact_if(POS_INF if a == b else NEG_INF, exact)
    # A finite factor of an infinity is taken as positive: scales, temperatures, log2(e).
    return _exact_if(next((c for c in (a, b) if c in (NEG_INF, POS_INF)), FINITE), exact)


def _maximum(a: str, b: str) -> str:
    """`tl.maximum` of two lanes' classes where the infinities decide it: +inf wins, -inf gives way to another
    infinity; anything else is unknown (a running maximum's finite lanes may stand below the row's true maximum,
    which no class says). A NaN side is not followed (Triton returns the other operand unless asked)."""
    if UNKNOWN in (a, b) or NAN in (a, b):
        return UNKNOWN
    if UNDEF in (a, b):
        return UNDEF
    for side, other in ((a, b), (b, a)):
        if plain(side) == POS_INF:
            return side if plain(other) != POS_INF else _exact_if(POS_INF, side == other == POS_INF_EXACT)
    if plain(a) == plain(b) == NEG_INF:
        return _exact_if(NEG_INF, a == b == NEG_INF_EXACT)
    return UNKNOWN


def _minimum(a: str, b: str) -> str:
    return _neg(_maximum(_neg(a), _neg(b)))


def _zero_bits(op: ast.operator, left: Lanes, right: Lanes) -> bool:
    """A bitwise operation that gives 0 on the lanes: `packed & 15` or `packed >> 4` of a zero-filled packed
    load (a 4-bit index unpacked from padding is 0), `a | b` of two zero sides."""
    zero_left, zero_right = left.classes == {ZERO}, right.classes == {ZERO}
    if isinstance(op, ast.BitAnd):
        return zero_left or zero_right
    if isinstance(op, (ast.LShift, ast.RShift)):
        return zero_left
    return isinstance(op, (ast.BitOr, ast.BitXor)) and zero_left and zero_right


def _div(a: str, b: str) -> str:
    if NAN in (a, b) or plain(a) == plain(b) == ZERO:
        return NAN  # 0 / 0: two loads padded with 0 divided lane by lane
    if UNKNOWN in (a, b) or plain(b) in (ZERO, NEG_INF, POS_INF):
        return UNKNOWN
    if UNDEF in (a, b):
        return UNDEF
    return a  # 0 / x = 0, inf / x = inf (x positive, as in _mul), finite / x finite


_CONVERSIONS = frozenset({"float", "int", "bool"})  # `float("-inf")`: what they read is read on
_FILL_VALUES = {ZERO: 0.0, NEG_INF: -math.inf, POS_INF: math.inf}
_ARITHMETIC: dict[type, Callable[[float, float], float]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b}
_COMPARISONS: dict[type, Callable[[float, float], bool]] = {
    ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b, ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b}
_EXTREMES: dict[str, Callable[[float, float], float]] = {f"{TL}.maximum": max, f"{TL}.minimum": min}


def _clamp_bounds(call: ast.Call) -> tuple[ast.expr | None, ast.expr | None]:
    """The `min` and `max` of `tl.clamp(x, min, max)`, given by position or keyword."""
    keywords = {k.arg: k.value for k in call.keywords}
    low = call.args[1] if len(call.args) > 1 else keywords.get("min")
    high = call.args[2] if len(call.args) > 2 else keywords.get("max")
    return low, high


def _class_of(value: float) -> str:
    """The class of an exact lane value, as `constant_class` gives a literal's."""
    return ZERO if value == 0 else NEG_INF if value <= -LARGE else POS_INF if value >= LARGE else FINITE


def _exp(a: str) -> str:
    return {NEG_INF: ZERO, NEG_INF_EXACT: ZERO, POS_INF: POS_INF_EXACT, ZERO: FINITE, FINITE: FINITE}.get(a, a)


def _log(a: str) -> str:
    """log(0) is -inf exactly, the log of a negative is NaN; a huge stand-in's log is finite."""
    return {ZERO: NEG_INF_EXACT, NEG_INF: NAN, NEG_INF_EXACT: NAN, POS_INF: FINITE}.get(a, a)


def _power(a: str, exponent: int) -> str:
    """`a ** exponent` for a whole exponent of at least 1: an even power of -inf is +inf, the rest keep their class."""
    return _neg(a) if plain(a) == NEG_INF and exponent % 2 == 0 else a


def _unbroadcast(index: ast.expr) -> ast.expr:
    """`index` with its `[:, None]` (or `[None, :]`) broadcasts taken off, where they all broadcast along one axis
    and the rest is sums of other values (`start + offs[:, None]`): the 1-D index it broadcasts; else `index`."""
    if isinstance(index, ast.Subscript) and broadcast_axis(index) is not None:
        return index.value
    if not (isinstance(index, ast.BinOp) and isinstance(index.op, (ast.Add, ast.Sub))):
        return index
    axes = {broadcast_axis(n) for n in walk(index) if isinstance(n, ast.Subscript)}
    if len(axes) != 1 or None in axes:
        return index
    left, right = _unbroadcast(index.left), _unbroadcast(index.right)
    return index if left is index.left and right is index.right else ast.BinOp(left=left, op=index.op, right=right)


def _method_transpose(call: ast.Call) -> bool:
    """`k.trans()`, `k.trans(1, 0)`, `k.permute(1, 0)`: a 2-D tile's transpose written as a method."""
    if not isinstance(call.func, ast.Attribute) or call.func.attr not in ("trans", "permute") or call.keywords:
        return False
    axes = [a.value for a in call.args if isinstance(a, ast.Constant)]
    return len(axes) == len(call.args) and (axes == [1, 0] or not axes and call.func.attr == "trans")


def _transposed(padded: PaddedAxes) -> PaddedAxes:
    return PaddedAxes(2, frozenset(1 - axis for axis in padded.axes), not padded.flipped, padded.live)


def _abs(a: str) -> str:
    return _neg(a) if plain(a) == NEG_INF else a


def _pairwise(op: Callable[[str, str], str], left: Classes, right: Classes) -> Classes:
    return frozenset(op(a, b) for a in left for b in right)


class LaunchFacts(Protocol):
    """What every launch of a kernel tells about its parameters (a rule answers it from analysis/launches.py)."""

    def same_value(self, end: str, bound: str) -> bool:
        """Every launch passes the two parameters the same value."""

    def whole_blocks(self, block: str, count: str) -> bool:
        """Every launch passes a count that is a whole number of blocks."""

    def floored_grid(self, axis: int, block: str, count: str) -> bool:
        """Every launch's grid axis `axis` is `count // block`: whole blocks only."""

    def grid_extent(self, axis: int, count: str) -> bool:
        """Every launch's grid axis `axis` is `count` itself: its program id is below it."""


@dataclass(frozen=True)
class Lanes:
    """What the padded lanes hold at an expression: their possible classes, and whether they depend on the
    load under study (values that do not are real data as far as that load is concerned)."""

    classes: Classes
    tainted: bool = False


REAL = Lanes(frozenset({FINITE}))
UNKNOWN_LANES = Lanes(frozenset({UNKNOWN}), True)


@dataclass
class Reach:
    """One reduction the load's padded lanes reach: the call, the neutral element it needs, whether the load's
    mask covers the reduced axis."""

    call: ast.Call
    needs: str
    covered: bool
    nonnegative: bool  # the real lanes are >= 0 (abs, exp, sqrt): then 0 is as good as -inf for a max
    # The texts of the mask's conjuncts that vary along the reduced axis of a tile (`hw[None, :] < HW` for a sum
    # over axis 1 of `c[:, None] < C & hw[None, :] < HW`): only lanes they turn off are folded into rows kept.
    # None where every conjunct counts (a 1-D value, a reduction over every axis, axes not known).
    across: frozenset[str] | None = None
    # The texts of the mask's conjuncts whose lanes reach the reduction, where a matrix product folded the others
    # (`offs_d < D` of a `k` tile summed by `tl.dot(q, tl.trans(k))`: only `offs_n < N` is left on the scores).
    # None where every conjunct does.
    live: frozenset[str] | None = None


@dataclass
class Flow:
    """Where the padded lanes of one masked load go: reductions, and ends that are not reductions."""

    reductions: list[Reach] = field(default_factory=list)
    other_ends: list[ast.AST] = field(default_factory=list)  # helpers, dots, returns, masked stores of other masks
    # Reductions along an axis the mask does not vary on (`tl.sum(x, axis=1)` of rows masked by
    # `rows[:, None] < M`): each turned-off row reduces to one turned-off lane of the result, followed on.
    passed: set[int] = field(default_factory=set)


@dataclass(frozen=True)
class PaddedAxes:
    """The axes along which a value derived from the load holds its padded lanes, and the value's rank."""

    rank: int
    axes: frozenset[int]
    flipped: bool = False  # transposed from the load's own tile (a 2-D value)
    live: frozenset[str] | None = None  # Reach.live


class PaddedLanes:
    """The padded-lane analysis of one jit function."""

    def __init__(self, model: ModuleModel, flow: FunctionFlow, constexprs: set[str],
                 launched: dict[str, float] | None = None) -> None:
        self.model = model
        self.flow = flow
        # Parameters every launch in the module passes one constant for (`MASK_VALUE=-torch.finfo(...).max`).
        self.launched = launched or {}
        self.indices = Indices(model, flow, constexprs)
        # Conjunct texts per mask node: every lane evaluation asks whether a name or comparison is the mask.
        self._conjunct_texts: dict[int, tuple[ast.expr, set[str]]] = {}
        self._flows: dict[int, Flow] = {}  # per load (the function's tree, and so its loads, outlive the analysis)
        self._alike: dict[int, list[ast.Call]] = {}  # per load, as _flows
        self._signed: dict[int, bool] = {}  # per factor expression, as _flows
        self._products: dict[int, ast.expr] = {}  # per tl.dot: the product it sums along K, `a * b`
        self._calls: list[ast.Call] | None = None  # see calls_among
        # Per load: runtime switches (`if is_causal:`) whose re-masking the lanes were judged without, as the
        # launches that pass the other value run the kernel (see _Evaluation._launch_switch).
        self.switches: dict[int, set[tuple[str, bool]]] = {}

    # ---- where the lanes go --------------------------------------------------------------------------
    def forward(self, load: ast.Call) -> Flow:
        key = id(load)
        if key not in self._flows:
            self._flows[key] = self._forward(load)
        return self._flows[key]

    def _forward(self, load: ast.Call) -> Flow:
        mask = load_argument(load, 1, "mask")
        result = Flow()
        pending: list[tuple[ast.AST, PaddedAxes | None]] = [(load, self.load_axes(load))]
        seen: set[int] = set()
        while pending:
            node, padded = pending.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            end = self._climb(node, load, mask, result, padded)
            if end is not None:
                definition, padded = end
                pending.extend((use, padded) for use in self.flow.uses_of(definition))
        return result

    def _climb(self, node: ast.AST, load: ast.Call, mask: ast.expr | None, result: Flow,
               padded: PaddedAxes | None) -> tuple[Definition, PaddedAxes | None] | None:
        """Walk up from a use of the padded value through elementwise math to a reduction, a store or a new
        definition (returned, to follow its uses). `padded`: the axes of the padded lanes, the load's own until a
        reduction along another axis passes them on (None: unknown)."""
        child, parent = node, self.flow.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, (ast.keyword, ast.Attribute)):
                above = self.flow.parents.get(id(parent))
                if isinstance(above, ast.Call) and (parent is above.func or parent in above.keywords):
                    parent = above  # `x.to(...)`, `f(value=x)`: the call consumes `child`
                else:
                    result.other_ends.append(parent)
                    return None
            if isinstance(parent, ast.Call) and self.model.qualify(parent.func) == DOT:
                if child is load_argument(parent, 2, "acc"):
                    child, parent = parent, self.flow.parents.get(id(parent))  # `tl.dot(a, b, acc)` adds acc lane by lane
                    continue
                operand = 0 if child is load_argument(parent, 0, "input") else 1 if child is load_argument(parent, 1, "other") else None
                # A load with no `other` is not followed into a product: matrix products throughout production
                # code read such operands (their lanes read 0 on the GPU), a latent finding at best.
                if operand is None or padded is None or padded.rank != 2 or load_argument(load, 2, "other") is None:
                    result.other_ends.append(parent)
                    return None
                # a [M, K] times b [K, N]: padding along K is summed (a reduction needing 0); along M (of a) or
                # N (of b) it is passed on to the rows or columns of the result, each the sum of its padded lanes
                covered = (1 - operand) in padded.axes
                if all(reach.call is not parent for reach in result.reductions):
                    result.reductions.append(Reach(parent, ZERO, covered, False, None))
                if operand not in padded.axes:
                    return None
                result.passed.add(id(parent))
                live = self._live_through(load, mask, padded, operand)
                child, parent, padded = parent, self.flow.parents.get(id(parent)), PaddedAxes(2, frozenset({operand}), live=live)
                continue
            if padded is not None and padded.rank == 2 and (
                    isinstance(parent, ast.Call) and self.model.qualify(parent.func) == TRANS and parent.args[:1] == [child]
                    or isinstance(parent, ast.Attribute) and parent.attr == "T" and parent.value is child):
                padded = _transposed(padded)  # `tl.trans(k)`, `k.T`
                child, parent = parent, self.flow.parents.get(id(parent))
                continue
            if padded is not None and padded.rank == 2 and isinstance(parent, ast.Call) \
                    and isinstance(parent.func, ast.Attribute) and parent.func.value is child and _method_transpose(parent):
                padded = _transposed(padded)  # `k.trans(1, 0)`
                child, parent = parent, self.flow.parents.get(id(parent))
                continue
            if isinstance(parent, ast.Call):
                needs = self.reduction_needs(parent)
                if needs is not None and self.reduced(parent) is child:
                    covered = self._covers(padded, parent)
                    earlier = next((i for i, reach in enumerate(result.reductions) if reach.call is parent), None)
                    # `xc * xc` reaches it twice; `v[:, None] * v[None, :]` along axis 0 through its first factor only
                    if earlier is None or covered and not result.reductions[earlier].covered:
                        reach = Reach(parent, needs, covered, self.nonnegative(self.reduced(parent)),
                                      self._across(load, mask, padded, parent) if covered else None,
                                      padded.live if padded is not None else None)
                        if earlier is None:
                            result.reductions.append(reach)
                        else:
                            result.reductions[earlier] = reach
                    # a softmax keeps its shape: along another axis its lanes are not followed
                    passed = None if covered or self.model.qualify(parent.func) == SOFTMAX \
                        else self._passed_on(padded, parent)
                    if passed is None:
                        return None
                    result.passed.add(id(parent))
                    child, parent, padded = parent, self.flow.parents.get(id(parent)), passed
                    continue
                name = self.model.qualify(parent.func)
                if name is not None and name.endswith(".store"):
                    store_mask = load_argument(parent, 2, "mask")
                    if child is not load_argument(parent, 1, "value") or not self.same_mask(store_mask, mask):
                        result.other_ends.append(parent)
                    return None
                if not self._elementwise(parent, child):
                    result.other_ends.append(parent)
                    return None
                padded = self._aligned(padded, [a for a in parent.args if a is not child])
            elif isinstance(parent, ast.stmt):
                if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name) \
                        and parent.value is child:
                    definition = self.flow.definition_at(parent, parent.targets[0].id)
                    return (definition, padded) if definition is not None else None
                if isinstance(parent, ast.AugAssign) and isinstance(parent.target, ast.Name) \
                        and (parent.value is child or parent.target is child):  # `x *= s` carries x's lanes on
                    definition = self.flow.definition_at(parent, parent.target.id)
                    return (definition, padded) if definition is not None else None
                result.other_ends.append(parent)
                return None
            elif isinstance(parent, ast.Subscript) and parent.value is child and padded is not None \
                    and padded.rank == 1 and padded.axes and (axis := broadcast_axis(parent)) is not None:
                # `v[:, None]`: the padded lanes of a 1-D value become rows (columns for `v[None, :]`) of a 2-D one
                child, parent, padded = parent, self.flow.parents.get(id(parent)), PaddedAxes(2, frozenset({axis}))
                continue
            elif isinstance(parent, ast.Compare) and isinstance(above := self.flow.parents.get(id(parent)), ast.Call) \
                    and self.model.qualify(above.func) == WHERE and above.args[:1] == [parent]:
                child, parent = parent, above  # `tl.where(x > eps, x, eps)`: the condition only picks that value
                continue
            elif isinstance(parent, ast.Tuple) and (unpacked := self._unpacked_into(parent, child)) is not None:
                definition = self.flow.definition_at(*unpacked)
                return (definition, padded) if definition is not None else None  # `k, v = tl.load(a), tl.load(b)`
            elif not isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.IfExp)):
                result.other_ends.append(parent)  # comparisons, subscripts (a new shape), tuples, ...
                return None
            elif isinstance(parent, ast.BinOp):
                padded = self._aligned(padded, [parent.right if parent.left is child else parent.left])
            child, parent = parent, self.flow.parents.get(id(parent))
        return None

    def _unpacked_into(self, pair: ast.Tuple, item: ast.AST) -> tuple[ast.Assign, str] | None:
        """The statement and the name an item of a tuple display is bound to where the statement unpacks the
        display into as many names (`k, v = tl.load(a), tl.load(b)`: the flow binds each name to its item)."""
        stmt = self.flow.parents.get(id(pair))
        if not (isinstance(stmt, ast.Assign) and stmt.value is pair and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Tuple) and len(stmt.targets[0].elts) == len(pair.elts)):
            return None
        target = next((t for t, e in zip(stmt.targets[0].elts, pair.elts) if e is item), None)
        return (stmt, target.id) if isinstance(target, ast.Name) else None

    def _aligned(self, padded: PaddedAxes | None, others: list[ast.expr]) -> PaddedAxes | None:
        """The padded axes of `padded`'s value as broadcast against `others`, the other operands of an elementwise
        operation: Triton aligns trailing dimensions, so the lanes of a row statistic (`tl.max(x, axis=0)`, 1-D)
        meet the columns of a 2-D `x`, not its rows."""
        if padded is None or not padded.axes:
            return padded
        ranks = [self.value_rank(other) for other in others]
        known = [rank for rank in ranks if rank is not None]
        if len(known) < len(ranks) or max(known, default=0) <= padded.rank:
            return padded
        shift = max(known) - padded.rank
        return PaddedAxes(padded.rank + shift, frozenset(a + shift for a in padded.axes), live=padded.live)

    def _elementwise(self, call: ast.Call, child: ast.AST) -> bool:
        """Whether the call maps each lane of `child` to the same lane of its result."""
        name = self.model.qualify(call.func)
        if name is None and isinstance(call.func, ast.Attribute):
            return call.func.attr in IDENTITY_METHODS and call.func.value is child
        return name in ELEMENTWISE

    def reduction_needs(self, call: ast.Call) -> str | None:
        name = self.model.qualify(call.func)
        if name is None and isinstance(call.func, ast.Attribute):
            return METHOD_NEEDS.get(call.func.attr)
        return ZERO if name == DOT else NEEDS.get(name or "")

    def reduced(self, call: ast.Call) -> ast.expr | None:
        """The value a reduction folds: its input; for `tl.dot(a, b)`, the product `a * b` it sums along K."""
        name = self.model.qualify(call.func)
        if name is None and isinstance(call.func, ast.Attribute):
            return call.func.value
        if name == DOT:
            a, b = load_argument(call, 0, "input"), load_argument(call, 1, "other")
            if a is None or b is None:
                return None
            return self._products.setdefault(id(call), ast.BinOp(left=a, op=ast.Mult(), right=b))
        return load_argument(call, 0, "input")

    def _folds_to_one_value(self, call: ast.Call) -> bool:
        """`call` is a sum, max or min to one value (a row's statistic of a first pass over 1-D blocks, or of
        nested sums over a 2-D tile), the same for every lane."""
        name = self.model.qualify(call.func)
        if name not in NEEDS and not (name is None and isinstance(call.func, ast.Attribute)
                                      and call.func.attr in METHOD_NEEDS):
            return False
        return self.value_rank(call) == 0

    def value_rank(self, expr: ast.expr, depth: int = 0) -> int | None:
        """The number of dimensions of a value, from its loads' tiles, `tl.zeros`/`tl.full` shapes, broadcasts
        and reductions, through local names; None where it cannot be told."""
        if depth > 12:
            return None
        if isinstance(expr, ast.Constant):
            return 0
        if isinstance(expr, ast.Name):
            definitions = self.flow.reaching(expr)
            ranks = [self.value_rank(d.value, depth + 1) if d.kind in ("assign", "augassign") and d.value is not None
                     else None for d in definitions]
            return max(ranks) if ranks and None not in ranks else None  # type: ignore[type-var]
        if isinstance(expr, ast.Subscript):
            inner = self.value_rank(expr.value, depth + 1)
            return inner + 1 if inner is not None and broadcast_axis(expr) is not None else None
        if isinstance(expr, (ast.BinOp, ast.UnaryOp)):
            parts = [self.value_rank(e, depth + 1) for e in ((expr.left, expr.right) if isinstance(expr, ast.BinOp)
                                                            else (expr.operand,))]
            return max(parts) if None not in parts else None  # type: ignore[type-var]
        if not isinstance(expr, ast.Call):
            return None
        name = self.model.qualify(expr.func)
        if name == LOAD:
            axes = self.load_axes(expr)
            return axes.rank if axes is not None and axes.rank else None
        if name in (f"{TL}.zeros", f"{TL}.full") and expr.args and isinstance(expr.args[0], (ast.Tuple, ast.List)):
            return len(expr.args[0].elts)
        if self.reduction_needs(expr) is not None and name != DOT:
            if self._axis(expr) is None:
                return 0
            reduced = self.reduced(expr)
            inner = self.value_rank(reduced, depth + 1) if reduced is not None else None
            return inner - 1 if inner else None
        if name is None and isinstance(expr.func, ast.Attribute) and expr.func.attr in IDENTITY_METHODS:
            return self.value_rank(expr.func.value, depth + 1)
        if name in ELEMENTWISE:
            parts = [self.value_rank(a, depth + 1) for a in expr.args]
            return max(parts) if parts and None not in parts else None  # type: ignore[type-var]
        return None

    def _axis(self, call: ast.Call) -> ast.expr | None:
        if self.model.qualify(call.func) == SOFTMAX:
            return load_argument(call, 1, "dim") or ast.Constant(0)
        method = self.model.qualify(call.func) is None and isinstance(call.func, ast.Attribute)
        return load_argument(call, 0 if method else 1, "axis")

    # ---- does the mask cover the reduced axis --------------------------------------------------------
    def _covers(self, padded: PaddedAxes | None, reduction: ast.Call) -> bool:
        """The reduction reduces an axis the padding varies along (every axis of a 1-D value)."""
        if padded is None or padded.rank == 0 or not padded.axes:
            return False
        index = self.reduced_axis(reduction, padded.rank)
        return index is not None and (padded.rank == 1 or index == -1 or index in padded.axes)

    def _across(self, load: ast.Call, mask: ast.expr | None, padded: PaddedAxes | None,
                reduction: ast.Call) -> frozenset[str] | None:
        """Reach.across: the conjuncts of the load's own mask along the axis the reduction folds, where it reduces
        one axis of the load's own tile."""
        if mask is None or padded is None or padded.rank < 2 or padded != self.load_axes(load):
            return None
        index = self.reduced_axis(reduction, padded.rank)
        if index is None or index == -1:
            return None
        return self._conjuncts_along(mask, index)

    def _conjuncts_along(self, mask: ast.expr, axis: int) -> frozenset[str] | None:
        """The texts of the mask's conjuncts that vary along `axis` of the load's tile; None where there are none
        or a conjunct's axes are not known."""
        texts: set[str] = set()
        for conjunct in self._conjunct_nodes(mask, 0):
            axes = self.mask_axes(conjunct, 0)
            if axes is None:
                return None
            if axis in axes:
                texts |= {ast.unparse(n) for n in self._conjunct_nodes(conjunct, 0, as_text=True)}
        return frozenset(texts) if texts else None

    def _live_through(self, load: ast.Call, mask: ast.expr | None, padded: PaddedAxes, operand: int) -> frozenset[str] | None:
        """PaddedAxes.live of a product's result: the conjuncts of the load's own mask along the axis of its tile
        that the product passes on (the rows of a first operand, the columns of a second), the others summed; None
        where the operand is not the load's own tile or a conjunct's axes are not known."""
        own = self.load_axes(load)
        if mask is None or padded.live is not None or own is None or own.rank != 2:
            return None
        return self._conjuncts_along(mask, 1 - operand if padded.flipped else operand)

    def constant_along(self, other: ast.Call, load: ast.Call, reach: Reach) -> bool:
        """`other` is a row's parameter as far as `reach` goes: loaded under conjuncts of the load's mask that
        do not vary along the reduced axis (`bias` under `c < C` for a sum over `hw`), or a single value loaded
        at a scalar address, so real data on every lane of a row that the reduction keeps, padded ones included."""
        theirs, ours = load_argument(other, 1, "mask"), load_argument(load, 1, "mask")
        pointer = load_pointer(other)
        if theirs is None and pointer is not None and self.indices.of(pointer).rank == 0 \
                and not any(isinstance(n, ast.Call) and self.model.qualify(n.func) == LOAD for n in walk(pointer)):
            return True  # one value for every lane, a row's `mean` loaded from a buffer of the forward's statistics
        if theirs is None and pointer is not None and ours is not None and not self._reads_through(pointer, ours):
            return True  # unmasked, at addresses the mask's indices do not move: a channel's `k_mean[None, :]`
        if theirs is not None and (axes := self.load_axes(other)) is not None and axes.rank == 1 and axes.axes \
                and any(r.call is reach.call and not r.covered for r in self.forward(other).reductions):
            return True  # a 1-D load broadcast along the reduced axis (`q[:, None] * k[None, :]`): one value per row
        if reach.across is None or theirs is None or ours is None:
            return False
        conjuncts = self._conjuncts(theirs)
        return bool(conjuncts) and not conjuncts & reach.across and conjuncts <= self._conjuncts(ours)

    def _reads_through(self, pointer: ast.expr, mask: ast.expr) -> bool:
        """The pointer mentions a name that the mask's conjuncts compare (through single assignments), or a load."""
        def names(expr: ast.expr, depth: int = 0) -> set[str]:
            found: set[str] = set()
            for node in walk(expr):
                if isinstance(node, ast.Call) and self.model.qualify(node.func) == LOAD:
                    found.add("<load>")
                elif isinstance(node, ast.Name):
                    found.add(node.id)
                    value = self.flow.single_value(node)
                    if value is not node and depth < 4:
                        found |= names(value, depth + 1)
            return found
        return bool(names(pointer) & (names(mask) | {"<load>"}) - {"tl", "triton"})

    def load_axes(self, load: ast.Call) -> PaddedAxes | None:
        """The load's rank (its pointer's; where that is not an index the analysis reads, a gather through
        loaded offsets, the rank of a mask made of `[:, None]` broadcasts) and the axes its mask varies along."""
        pointer, mask = load_pointer(load), load_argument(load, 1, "mask")
        axes = self.mask_axes(mask, 0)
        if axes is None:
            return None
        rank = self.indices.of(pointer).rank if pointer is not None else 0
        return PaddedAxes(rank or (2 if self._broadcast(mask, 0) else 0), axes)

    def _broadcast(self, mask: ast.expr | None, depth: int) -> bool:
        """The mask broadcasts a 1-D value to two dimensions (`rows[:, None] < M`, `m[:, None] & n[None, :]`)."""
        if mask is None or depth > 8:
            return False
        if isinstance(mask, ast.Subscript):
            return broadcast_axis(mask) is not None
        if isinstance(mask, ast.Compare):
            return any(self._broadcast(e, depth + 1) for e in [mask.left, *mask.comparators])
        if isinstance(mask, ast.BinOp):
            return self._broadcast(mask.left, depth + 1) or self._broadcast(mask.right, depth + 1)
        if isinstance(mask, ast.BoolOp):
            return any(self._broadcast(v, depth + 1) for v in mask.values)
        if isinstance(mask, ast.Name):
            definitions = self.flow.reaching(mask)
            return len(definitions) == 1 and all(d.kind == "assign" and self._broadcast(d.value, depth + 1)
                                                  for d in definitions)
        return False

    def reduced_axis(self, reduction: ast.Call, rank: int) -> int | None:
        """The reduced axis, counted from 0; -1 for every axis (no `axis`, or `axis=None`); None when unknown."""
        axis = self._axis(reduction)
        if axis is None or isinstance(axis, ast.Constant) and axis.value is None:
            return -1
        value = literal_number(axis)
        if value is None or value != int(value) or not -rank <= value < rank:
            return None
        return int(value) % rank

    def _passed_on(self, padded: PaddedAxes | None, reduction: ast.Call) -> PaddedAxes | None:
        """The padded axes of a reduction's result, where it reduces an axis that the padding does not vary
        along, without `keep_dims`: each padded lane of the result reduces padded lanes only."""
        if padded is None or padded.rank < 2 or not padded.axes or \
                any(k.arg in ("keep_dims", "keepdims") for k in reduction.keywords):
            return None
        index = self.reduced_axis(reduction, padded.rank)
        if index is None or index == -1 or index in padded.axes:
            return None
        return PaddedAxes(padded.rank - 1, frozenset(a - 1 if a > index else a for a in padded.axes))

    def _conjuncts_by_axis(self, load: ast.Call, reduction: ast.Call) -> tuple[list[ast.expr], list[ast.expr]] | None:
        """The conjuncts of the load's mask that vary along the axis a reduction of its own tile folds, and the
        others; None where the axis or a conjunct's axes are not known."""
        mask, padded = load_argument(load, 1, "mask"), self.load_axes(load)
        axis = self.reduced_axis(reduction, padded.rank) if padded is not None else None
        if mask is None or axis is None:
            return None
        along: list[ast.expr] = []
        others: list[ast.expr] = []
        for conjunct in self._conjunct_nodes(mask, 0):
            axes = self.mask_axes(conjunct, 0)
            if axes is None:
                return None
            (along if axis in axes else others).append(conjunct)
        return along, others

    def kept_mask(self, load: ast.Call, folded: ast.Call) -> str | None:
        """The load's mask along the axes a reduction of its 2-D tile keeps, as the 1-D mask of its result
        (`tok_in_range` of `tok_in_range[:, None]` for a sum over axis 1); None where it cannot be told."""
        padded = self.load_axes(load)
        split = self._conjuncts_by_axis(load, folded) if padded is not None and padded.rank == 2 else None
        if split is None or self.reduced_axis(folded, 2) == -1:
            return None
        kept: list[str] = []
        for conjunct in split[1]:
            if isinstance(conjunct, ast.Subscript) and broadcast_axis(conjunct) is not None:
                conjunct = conjunct.value
            elif isinstance(conjunct, ast.Compare) and isinstance(conjunct.left, ast.Subscript) \
                    and broadcast_axis(conjunct.left) is not None:
                conjunct = ast.Compare(left=conjunct.left.value, ops=conjunct.ops, comparators=conjunct.comparators)
            kept.append(ast.unparse(conjunct))
        return " & ".join(f"({k})" if len(kept) > 1 and " " in k else k for k in kept) or None

    def mask_axes(self, mask: ast.expr | None, depth: int) -> frozenset[int] | None:
        """The axes a mask varies along (a 1-D mask: {0}); None when unknown."""
        shape = self._mask_shape(mask, depth)
        return shape[0] if shape is not None else None

    def _mask_shape(self, mask: ast.expr | None, depth: int) -> tuple[frozenset[int], int] | None:
        """The axes a mask varies along, with its rank: a 1-D term beside a 2-D one broadcasts along the last
        axis, as numpy's rules align shapes from the right (`(rows[:, None] < M) & (tl.arange(0, N) < n)`:
        {0, 1})."""
        if mask is None or depth > 8:
            return None
        if isinstance(mask, ast.Compare):
            parts = [self._operand_shape(e) for e in [mask.left, *mask.comparators]]
            if self._before_own_rows(mask):  # true on every row kept: it pads no axis
                parts = [(frozenset(), max((p[1] for p in parts if p is not None), default=0))]
        elif isinstance(mask, ast.BinOp) and isinstance(mask.op, (ast.BitAnd, ast.BitOr, ast.Mult)):
            parts = [self._mask_shape(mask.left, depth + 1), self._mask_shape(mask.right, depth + 1)]
        elif isinstance(mask, ast.BoolOp):
            parts = [self._mask_shape(v, depth + 1) for v in mask.values]
        elif isinstance(mask, ast.Subscript):
            axis = broadcast_axis(mask)
            inner = self._mask_shape(mask.value, depth + 1)
            return None if axis is None or inner != (frozenset({0}), 1) else (frozenset({axis}), 2)
        elif isinstance(mask, ast.Name):
            definitions = self.flow.reaching(mask)
            if not definitions or any(d.kind != "assign" for d in definitions):
                return None
            parts = [self._mask_shape(d.value, depth + 1) for d in definitions]
        else:
            return None
        known = [p for p in parts if p is not None]
        if len(known) < len(parts):
            return None
        rank = max(r for _, r in known)
        return frozenset().union(*(frozenset({1}) if r == 1 and rank == 2 else axes for axes, r in known)), rank

    def _operand_shape(self, expr: ast.expr) -> tuple[frozenset[int], int] | None:
        index = self.indices.of(expr)
        if index.rank == 0:
            scalar = index.regular or isinstance(expr, ast.Name) or self._scalar_data(expr)
            return (frozenset(), 0) if scalar else None
        return (frozenset({0}) if index.rank == 1 else index.axes), index.rank

    def _scalar_data(self, expr: ast.expr) -> bool:
        """`expr` is computed from loads at scalar addresses only (a CSR row's `nnz = tl.load(indptr + row + 1) -
        tl.load(indptr + row)`): one value for every lane, where the index analysis sees data of unknown rank."""
        feeding = self.loads_feeding(expr)
        if not feeding:
            return False
        loads = self.calls_among(feeding)
        return len(loads) == len(feeding) and all(
            (pointer := load_pointer(n)) is not None and self.indices.of(pointer).rank == 0
            and not any(isinstance(m, ast.Call) and self.model.qualify(m.func) == LOAD for m in walk(pointer))
            for n in loads)

    def same_mask(self, a: ast.expr | None, b: ast.expr | None) -> bool:
        if a is None or b is None:
            return False
        return self._mask_text(a) == self._mask_text(b)

    def shares_lanes(self, a: ast.expr | None, b: ast.expr | None, along: frozenset[str] | None = None) -> bool:
        """Two masks turn off the same lanes along some axis: they have a conjunct in common, broadcasts aside
        (`k_mask` and `k_mask[:, None] & n_mask[None, :]`); with `along`, `a` has one of those conjuncts too (a
        row's `bias` under `c < C` shares no lane a sum over `hw` folds in)."""
        if a is None or b is None:
            return False
        return bool(self._conjuncts(a) & self._conjuncts(b)) and (along is None or bool(self._conjuncts(a) & along))

    def off_wherever(self, theirs: ast.expr | None, ours: ast.expr | None) -> bool:
        """A conjunct of `theirs` bounds an index shifted up from one that `ours` bounds by the same value
        (`k + 1 < K` against `k < K`): wherever our lanes are off, theirs are too."""
        if theirs is None or ours is None:
            return False
        shifted = set()
        for conjunct in self._conjunct_nodes(theirs, 0, as_text=True):
            if isinstance(conjunct, ast.Compare) and len(conjunct.ops) == 1 and isinstance(conjunct.ops[0], ast.Lt):
                index = self.flow.single_value(conjunct.left)
                if isinstance(index, ast.BinOp) and isinstance(index.op, ast.Add):
                    for base, step in ((index.left, index.right), (index.right, index.left)):
                        number = literal_number(step)
                        if number is not None and number >= 0:
                            shifted.add(ast.unparse(ast.Compare(left=base, ops=conjunct.ops,
                                                                comparators=conjunct.comparators)))
        return bool(shifted & self._conjuncts(ours))

    def _conjuncts(self, mask: ast.expr) -> set[str]:
        """The texts of a mask's conjuncts, broadcasts dropped, and of the names that stand for them."""
        if id(mask) not in self._conjunct_texts:  # the node is kept with its texts, so its id stays its own
            self._conjunct_texts[id(mask)] = (mask, {ast.unparse(n) for n in self._conjunct_nodes(mask, 0, as_text=True)})
        return self._conjunct_texts[id(mask)][1]

    def upper_bounds(self, mask: ast.expr | None) -> set[str]:
        """The texts of the upper bounds a mask's conjuncts compare against (`V` of `offs < V`)."""
        found = set()
        for conjunct in self._conjunct_nodes(mask, 0) if mask is not None else []:
            if isinstance(conjunct, ast.Compare) and len(conjunct.ops) == 1 and isinstance(conjunct.ops[0], ast.Lt):
                found.add(ast.unparse(conjunct.comparators[0]))
        return found

    def _upper_bound(self, mask: ast.expr) -> tuple[ast.Name, str] | None:
        """`index < bound` (a name's single assignment read through): the index name and the bound's text."""
        compare = self.flow.single_value(mask)
        if isinstance(compare, ast.Compare) and len(compare.ops) == 1 and isinstance(compare.ops[0], ast.Lt) \
                and isinstance(compare.left, ast.Name):
            return compare.left, ast.unparse(compare.comparators[0])
        return None

    def keeps_every_lane(self, mask: ast.expr, launches: LaunchFacts | None = None) -> bool:
        """Every conjunct of the mask compares a `tl.arange(0, n)` with its own end (`tl.arange(0, n) < n`,
        through single assignments and `[:, None]` broadcasts), or with a parameter that every launch gives the
        end's value (`tl.arange(0, BLOCK) < dim` launched with `BLOCK = dim`), or is block i of a count that
        every launch makes whole blocks (`pid * BLOCK + tl.arange(0, BLOCK) < n` launched with `n = rows * 256`,
        `BLOCK = 128`) or of a grid of whole blocks only (`grid = (n // BLOCK,)`), or is a program id below its
        grid axis's extent (`pid_b < b`, launched `grid = (n, b)`): true on every lane of a block that has any,
        so nothing is padded."""
        nodes = self._conjunct_nodes(mask, 0)
        return bool(nodes) and all(self._all_true(node, launches) for node in nodes)

    def folds_no_padding(self, load: ast.Call, reach: Reach, launches: LaunchFacts | None = None) -> bool:
        """The reduction folds one axis of the load's own tile, and every conjunct of the mask that varies along
        that axis keeps every lane (as `keeps_every_lane` tells): only whole rows it keeps are padded (rows past
        the end, stored under the same mask), and no padded lane is folded into a real one."""
        split = self._conjuncts_by_axis(load, reach.call) if reach.across is not None else None
        return split is not None and bool(split[0] or split[1]) \
            and all(self._all_true(node, launches) for node in split[0])

    def _all_true(self, conjunct: ast.expr, launches: LaunchFacts | None) -> bool:
        if not (isinstance(conjunct, ast.Compare) and len(conjunct.ops) == 1 and isinstance(conjunct.ops[0], ast.Lt)):
            return False
        index = self.flow.single_value(conjunct.left)
        if isinstance(index, ast.Subscript) and broadcast_axis(index) is not None:
            index = self.flow.single_value(index.value)
        end, bound = self._arange_end(index) or self._stepped_lanes(index), ast.unparse(conjunct.comparators[0])
        if end == bound or self._block_of_whole_blocks(index, bound) or self._before_own_rows(conjunct):
            return True
        if launches is not None and self._upper_half(index, bound, launches):
            return True
        axis = self._program_axis(index)  # `pid_b < b` with the grid's axis launched as b
        if axis is not None:
            return launches is not None and launches.grid_extent(axis, bound)
        # `tl.arange(0, E) < n` with n a whole number of E-blocks (at least one: n = 0 runs nothing)
        return launches is not None and (end is not None and (launches.same_value(end, bound)
                                                              or launches.whole_blocks(end, bound))
                                         or self._block_at_multiple(index, bound, launches))

    def _before_own_rows(self, conjunct: ast.expr) -> bool:
        """`keys < n` with `keys = start + tl.arange(0, E)` in `for start in range(lo, hi, E)`, lo a multiple of E,
        where hi starts the program's own lanes `hi + tl.arange(0, W)`, compared with the same n, hi a multiple of
        W and E dividing W (integers, or constants every launch passes): a causal kernel's key blocks before its
        query block. Every key is below hi, so it passes n only in a program whose own lanes all do: no row that
        program keeps is padded."""
        if not (isinstance(conjunct, ast.Compare) and len(conjunct.ops) == 1 and isinstance(conjunct.ops[0], ast.Lt)):
            return False
        index = self.flow.single_value(_unbroadcast(conjunct.left))
        bound = ast.unparse(conjunct.comparators[0])
        for start, width in self._block_starts(index):
            bounds = self._loop_range(start)
            if bounds is None or ast.unparse(bounds[2]) != width or not self._multiple_of(bounds[0], width):
                continue
            stop = ast.unparse(self.flow.single_value(bounds[1]))
            for node in walk(self.flow.function):
                if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Lt) \
                        and ast.unparse(node.comparators[0]) == bound:
                    for rows, own in self._block_starts(self.flow.single_value(_unbroadcast(node.left))):
                        if ast.unparse(self.flow.single_value(rows)) == stop and self._multiple_of(rows, own) \
                                and self._divides(width, own):
                            return True
        return False

    def _upper_half(self, index: ast.expr, bound: str, launches: LaunchFacts) -> bool:
        """`E + tl.arange(0, E)` under `< n`, every launch passing `E = n // 2`: the second half of a row
        (a rotary or packed pair's upper lanes) ends at 2 * (n // 2) - 1, below n."""
        return any(ast.unparse(self.flow.single_value(start)) == end and launches.same_value(end, f"{bound} // 2")
                   for start, end in self._block_starts(index))

    def _divides(self, block: str, width: str) -> bool:
        """The integer `block` divides `width` (literals, or parameters every launch passes one constant for)."""
        values = [literal_number(ast.parse(t, mode="eval").body) if t[:1].isdigit() else self.launched.get(t)
                  for t in (block, width)]
        return values[0] is not None and values[1] is not None and values[0] > 0 and values[1] % values[0] == 0

    def _block_of_whole_blocks(self, index: ast.expr, bound: str) -> bool:
        """`g * E + tl.arange(0, E)` with `g = i % (bound // E)`: block g of E lanes, g below the count of whole
        blocks in `bound`, ends at (bound // E) * E - 1 at most, below `bound` (a group norm's channels of group
        g: `g * G_SIZE + tl.arange(0, G_SIZE) < C` with `g = pid % (C // G_SIZE)`)."""
        for start, end in self._block_starts(index):
            if isinstance(start, ast.BinOp) and isinstance(start.op, ast.Mult):
                for block, width in ((start.left, start.right), (start.right, start.left)):
                    chosen = self.flow.single_value(block)
                    if ast.unparse(width) == end and isinstance(chosen, ast.BinOp) and isinstance(chosen.op, ast.Mod) \
                            and ast.unparse(self.flow.single_value(chosen.right)) == f"{bound} // {end}":
                        return True
        return False

    def _block_at_multiple(self, index: ast.expr, bound: str, launches: LaunchFacts) -> bool:
        """`i * E + tl.arange(0, E)` (or another start that is a multiple of E: `_multiple_of`) under a bound that
        every launch makes a whole number of E-blocks: each block is wholly below the bound or wholly past it;
        or `pid * E + tl.arange(0, E)` in a grid of `bound // E` programs on pid's axis: every block is below."""
        for start, end in self._block_starts(index):
            if self._multiple_of(start, end) and launches.whole_blocks(end, bound):
                return True
            start = self.flow.single_value(start)
            if isinstance(start, ast.BinOp) and isinstance(start.op, ast.Mult):
                for block, width in ((start.left, start.right), (start.right, start.left)):
                    axis = self._program_axis(self.flow.single_value(block))
                    if ast.unparse(width) == end and axis is not None and launches.floored_grid(axis, end, bound):
                        return True
        return False

    def _block_starts(self, index: ast.expr) -> Iterator[tuple[ast.expr, str]]:
        """For `start + tl.arange(0, E)` (either order; also a tile's `rows[:, None] * E + tl.arange(0, E)[None, :]`):
        the start and E's text."""
        if isinstance(index, ast.BinOp) and isinstance(index.op, ast.Add):
            for start, lanes in ((index.left, index.right), (index.right, index.left)):
                if isinstance(lanes, ast.Subscript) and broadcast_axis(lanes) is not None:
                    lanes = lanes.value
                end = self._arange_end(self.flow.single_value(lanes))
                if end is not None:
                    yield start, end

    def _program_axis(self, expr: ast.expr) -> int | None:
        """The literal axis of `tl.program_id(axis)`, else None."""
        if isinstance(expr, ast.Call) and self.model.qualify(expr.func) == PROGRAM_ID:
            return program_id_axis(expr)
        return None

    def _multiple_of(self, start: ast.expr, width: str) -> bool:
        """`start` is a multiple of the block `width`: `i * E`, `tl.multiple_of(x, E)`, or the target of a loop
        `for start in range(0, n, E)` (a start of 0 or itself a multiple), read through single assignments."""
        start = self.flow.single_value(start)
        if isinstance(start, ast.BinOp) and isinstance(start.op, ast.Mult):
            return width in (ast.unparse(start.left), ast.unparse(start.right))
        if isinstance(start, ast.Call) and self.model.qualify(start.func) == f"{TL}.multiple_of" and len(start.args) == 2:
            return ast.unparse(start.args[1]) == width
        if isinstance(start, ast.Constant):
            return start.value == 0
        bounds = self._loop_range(start)
        return bounds is not None and ast.unparse(bounds[2]) == width and self._multiple_of(bounds[0], width)

    def _loop_range(self, target: ast.expr) -> list[ast.expr] | None:
        """The start, stop and step of the `for target in range(lo, hi, step)` that alone defines `target`."""
        definitions = self.flow.reaching(target) if isinstance(target, ast.Name) else frozenset()
        if len(definitions) != 1:
            return None
        (definition,) = definitions
        loop = definition.stmt
        return self._stepped_range(loop) if definition.kind == "loop" and isinstance(loop, ast.For) else None

    def _stepped_range(self, loop: ast.For) -> list[ast.expr] | None:
        """The start, stop and step of `for i in range(lo, hi, step)` (also `tl.range`, `tl.static_range`)."""
        args = range_arguments(self.model, loop.iter)
        return args if args is not None and len(args) == 3 else None

    def _stepped_lanes(self, index: ast.expr) -> str | None:
        """E where `index` is a name bound to `tl.arange(0, E)` (through `tl.max_contiguous` / `tl.multiple_of`)
        and otherwise only stepped by `index += E` (a loop over the row's blocks): every value is a block of E
        lanes at a multiple of E."""
        if not isinstance(index, ast.Name):
            return None
        definitions = in_source_order(self.flow.reaching(index))
        starts = [d for d in definitions if d.kind == "assign"]
        if len(starts) != 1 or starts[0].value is None:
            return None
        value = starts[0].value
        while isinstance(value, ast.Call) and self.model.qualify(value.func) in IDENTITY and value.args:
            value = value.args[0]
        end = self._arange_end(value)
        steps = [d for d in definitions if d is not starts[0]]
        return end if end is not None and all(
            d.kind == "augassign" and isinstance(d.stmt, ast.AugAssign) and isinstance(d.stmt.op, ast.Add)
            and ast.unparse(d.stmt.value) == end for d in steps) else None

    def _arange_end(self, expr: ast.expr) -> str | None:
        """The text of `end` in `tl.arange(0, end)`, else None."""
        end = arange_end(self.model, expr)
        return ast.unparse(end) if end is not None else None

    def bounds_the_same_index(self, mask: ast.expr | None, other: ast.expr | None) -> bool:
        """`mask` is one bound of an index (`cols < n_rot`) and `other` bounds the same index, in one of its
        conjuncts, by another value (`cols < n_cols`): the lanes past both bounds are off in both loads."""
        if mask is None or other is None:
            return False
        own = self._upper_bound(mask)
        if own is None:
            return False
        index, bound = own
        for conjunct in self._conjunct_nodes(other, 0):
            theirs = self._upper_bound(conjunct)
            if theirs is not None and theirs[0].id == index.id and theirs[1] != bound \
                    and self.flow.reaching(theirs[0]) == self.flow.reaching(index):
                return True
        return False

    def _conjunct_nodes(self, mask: ast.expr, depth: int, as_text: bool = False) -> list[ast.expr]:
        """The conjuncts of `a & b` / `a and b` (also `a * b` of two masks), names read through their single
        assignment; `as_text` also keeps those names and looks through `[:, None]` broadcasts (masks compared by
        text)."""
        if depth >= 8:
            return [mask]
        if isinstance(mask, ast.BinOp) and isinstance(mask.op, (ast.BitAnd, ast.Mult)):
            return self._conjunct_nodes(mask.left, depth + 1, as_text) + \
                self._conjunct_nodes(mask.right, depth + 1, as_text)
        if isinstance(mask, ast.BoolOp) and isinstance(mask.op, ast.And):
            return [c for v in mask.values for c in self._conjunct_nodes(v, depth + 1, as_text)]
        if as_text and isinstance(mask, ast.Subscript) and broadcast_axis(mask) is not None:
            return self._conjunct_nodes(mask.value, depth + 1, as_text)
        if as_text and isinstance(mask, ast.Compare) and len(mask.ops) == 1 \
                and (index := _unbroadcast(mask.left)) is not mask.left:
            # `offs_k[:, None] < K` is `(offs_k < K)[:, None]`, `(start + offs[:, None]) < n` is `(start + offs <
            # n)[:, None]`: the same lanes as the 1-D mask, broadcast
            return self._conjunct_nodes(ast.Compare(left=index, ops=mask.ops, comparators=mask.comparators),
                                        depth + 1, as_text)
        if as_text and isinstance(mask, ast.Compare) and len(mask.ops) == 1 and isinstance(mask.left, ast.Name):
            # `cols_a < N` and `cols_b < N` with both names bound to `start + tl.arange(0, B)`: the same lanes
            # (through the broadcasts of the value: `q_offs = start + tl.arange(0, B)[:, None]` against `offs_m =
            # start + tl.arange(0, B)`)
            index = self.flow.single_value(mask.left)
            if index is not mask.left:
                return [mask, *self._conjunct_nodes(ast.Compare(left=index, ops=mask.ops, comparators=mask.comparators),
                                                    depth + 1, as_text)]
        value = self.flow.single_value(mask)
        if value is not mask:
            return self._conjunct_nodes(value, depth + 1, as_text) + ([mask] if as_text else [])
        return [mask]

    def _mask_text(self, expr: ast.expr) -> str:
        """A mask's text with a name standing for its single assignment replaced by that assignment."""
        return ast.unparse(self.flow.single_value(expr))

    def masks_lanes(self, condition: ast.expr, mask: ast.expr | None, live: frozenset[str] | None = None) -> bool:
        """`tl.where(condition, ...)` picks its second operand on every lane the load's mask turns off:
        the condition is that mask, or a conjunction with it; with `live`, with those of its conjuncts that still
        turn off lanes there (Reach.live)."""
        if mask is None:
            return False
        # The condition is false wherever one of its conjuncts is: every conjunct of the mask must be one.
        return self.same_mask(condition, mask) or (live if live is not None else self._conjuncts(mask)) \
            <= self._conjuncts(condition)

    # ---- the real lanes' sign ------------------------------------------------------------------------
    def nonnegative(self, expr: ast.expr | None, depth: int = 0, visiting: frozenset[int] = frozenset()) -> bool:
        """The real lanes of `expr` are never negative: abs, exp, sqrt, squares, a non-negative literal (also as
        `tl.zeros` or `tl.full`), a maximum with one such side, a minimum, sum, product or quotient of such values,
        a product with 0, a `tl.where` or conditional expression whose two branches are such values
        (`tl.where(mask, tl.abs(x), 0.0)`), a sum, max, min or cumulative sum over such values, and any of these
        broadcast or indexed (`s[:, None]`)."""
        if expr is None or depth > 8:
            return False
        number = literal_number(expr)
        if number is not None:
            return number >= 0
        if isinstance(expr, ast.Call):
            name = self.model.qualify(expr.func)
            if name in NON_NEGATIVE or name in (f"{TL}.zeros", f"{TL}.zeros_like"):
                return True
            if name == f"{TL}.full" and len(expr.args) >= 2:
                return self.nonnegative(expr.args[1], depth + 1, visiting)
            if name is None and isinstance(expr.func, ast.Attribute) and expr.func.attr in IDENTITY_METHODS:
                return self.nonnegative(expr.func.value, depth + 1, visiting)
            if name in IDENTITY and expr.args:
                return self.nonnegative(expr.args[0], depth + 1, visiting)
            if name == f"{TL}.maximum" and len(expr.args) == 2:
                return any(self.nonnegative(a, depth + 1, visiting) for a in expr.args)
            if name == f"{TL}.minimum" and len(expr.args) == 2:
                return all(self.nonnegative(a, depth + 1, visiting) for a in expr.args)
            if name == f"{TL}.where" and len(expr.args) == 3:
                return all(self.nonnegative(a, depth + 1, visiting) for a in expr.args[1:])
            if name in _KEEP_SIGN and expr.args:  # a softmax's `sum(exp(...))`: a sum of such values
                return self.nonnegative(expr.args[0], depth + 1, visiting)
            return False
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
            return ast.dump(expr.left) == ast.dump(expr.right) or \
                any(constant_class(side) == ZERO for side in (expr.left, expr.right)) or \
                all(self.nonnegative(side, depth + 1, visiting) for side in (expr.left, expr.right))
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Div)):
            return all(self.nonnegative(side, depth + 1, visiting) for side in (expr.left, expr.right))
        if isinstance(expr, ast.Subscript):  # `s[:, None]`: the same values, broadcast
            return self.nonnegative(expr.value, depth + 1, visiting)
        if isinstance(expr, ast.IfExp):  # `a if a > m else m`: a running max spelled as a select
            return all(self.nonnegative(side, depth + 1, visiting) for side in (expr.body, expr.orelse))
        if isinstance(expr, ast.Name):
            # A definition met again on the way (a loop's `m = x if x > m else m`) adds no other sign.
            definitions = self.flow.reaching(expr)
            return bool(definitions) and all(
                id(d) in visiting or d.kind == "assign" and self.nonnegative(d.value, depth + 1, visiting | {id(d)})
                for d in definitions)
        return False

    # ---- where a reduction's result goes -------------------------------------------------------------
    def result_uses(self, reduction: ast.Call) -> list[ast.expr] | None:
        """The places a reduction's value is used: the call itself, or every read of the one name it is
        assigned to; None when it goes anywhere else (a tuple, an attribute, a name never read)."""
        parent = self.flow.parents.get(id(reduction))
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
            definition = self.flow.definition_at(parent, parent.targets[0].id)
            uses: list[ast.expr] = list(self.flow.uses_of(definition)) if definition is not None else []
            return uses or None
        return [reduction]

    def never_read(self, reduction: ast.Call) -> bool:
        """A reduction assigned to a name that nothing reads (`block_sum = tl.sum(x)`, left over): whatever its
        lanes, no output shows it."""
        parent = self.flow.parents.get(id(reduction))
        if not (isinstance(parent, ast.Assign) and parent.value is reduction and len(parent.targets) == 1
                and isinstance(parent.targets[0], ast.Name)):
            return False
        definition = self.flow.definition_at(parent, parent.targets[0].id)
        return definition is not None and not self.flow.uses_of(definition)

    def floored_at_zero(self, reduction: ast.Call) -> bool:
        """A max whose every use is `tl.maximum(floor, max)` with a floor that is never negative (a running
        maximum started at `tl.zeros`): a lane padded with 0 cannot raise the result above the floor."""
        uses = self.result_uses(reduction)
        if not uses:
            return False
        for use in uses:
            parent = self.flow.parents.get(id(use))
            if not (isinstance(parent, ast.Call) and self.model.qualify(parent.func) == f"{TL}.maximum"
                    and len(parent.args) == 2 and not parent.keywords and use in parent.args):
                return False
            floor = parent.args[1] if parent.args[0] is use else parent.args[0]
            if not self.nonnegative(floor):
                return False
        return True

    def zeroed_where_masked(self, reduction: ast.Call, mask: ast.expr) -> bool:
        """The value `reduction` folds is set to 0 on the load's masked-off lanes just before: `p = tl.where(mask,
        p, 0.0)` (the mask written as the load's, or its name, or a stricter condition among whose conjuncts it is:
        `(cols == target) & mask`) read through single assignments, casts and
        transposes; for a `tl.dot`, the operand that carries them."""
        masks = {ast.unparse(mask), ast.unparse(self.flow.single_value(mask))}
        value = self.reduced(reduction)
        operands = [value.left, value.right] if isinstance(value, ast.BinOp) and self.model.qualify(reduction.func) == DOT \
            else [value]

        def zeroed(expr: ast.expr | None, depth: int = 0) -> bool:
            while isinstance(expr, ast.Call) and depth < 8:
                if self.model.qualify(expr.func) == TRANS and expr.args:
                    expr = expr.args[0]
                elif isinstance(expr.func, ast.Attribute) and expr.func.attr == "to":
                    expr = expr.func.value
                else:
                    break
                depth += 1
            if isinstance(expr, ast.Name) and depth < 8:
                single = self.flow.single_value(expr)
                return single is not expr and zeroed(single, depth + 1)
            if isinstance(expr, ast.Subscript) and depth < 8:
                return zeroed(expr.value, depth + 1)  # `p[:, None]`: the same lanes, broadcast
            if isinstance(expr, ast.BinOp) and depth < 8:
                # a product with a zeroed factor (`p[:, None] * v`), or a zeroed value divided (`p / denom`)
                if isinstance(expr.op, ast.Mult):
                    return zeroed(expr.left, depth + 1) or zeroed(expr.right, depth + 1)
                return isinstance(expr.op, ast.Div) and zeroed(expr.left, depth + 1)
            return isinstance(expr, ast.Call) and self.model.qualify(expr.func) == WHERE and len(expr.args) == 3 \
                and (ast.unparse(expr.args[0]) in masks | {ast.unparse(self.flow.single_value(expr.args[0]))} - {""}
                     or self._conjuncts(mask) <= self._conjuncts(expr.args[0])) \
                and constant_class(expr.args[2]) == ZERO
        return any(zeroed(operand) for operand in operands)

    def shifts_only(self, reduction: ast.Call) -> bool:
        """The max `reduction` serves only as a softmax's shift: each use of it, through a running
        `tl.maximum`, broadcasts, scalings and names, is subtracted inside an exponential (`tl.exp(x - m)`,
        `tl.exp(m_old - m)`, also through a name: `shifted = x - m`, `tl.exp(shifted)`) or added to a log (`m + tl.log(l)`, a log-sum-exp). `exp(x - m) / sum(exp(x - m))`
        is the same for any m, so a max that padded lanes raise changes nothing where they reach no sum (the
        softmax's terms re-masked), unless every real value lies some 87 below it (fp32 exp underflows)."""
        parents = self.flow.parents
        pending: list[ast.AST] = [reduction]
        for node in each_once(pending):
            parent = parents.get(id(node))
            if parent is None:
                return False
            if isinstance(parent, ast.Subscript) and parent.value is node and broadcast_axis(parent) is not None \
                    or isinstance(parent, ast.Call) and self.model.qualify(parent.func) == f"{TL}.maximum" \
                    and node in parent.args \
                    or isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Mult, ast.Div)) \
                    and isinstance(parent.right if parent.left is node else parent.left, (ast.Name, ast.Constant)):
                pending.append(parent)  # `m[:, None]`, `tl.maximum(m_i, m)`, `m * scale`
            elif isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Sub):
                if not self._exponentiated(parent):
                    return False
            elif isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add):
                other = parent.right if parent.left is node else parent.left
                if not (isinstance(other, ast.Call) and self.model.qualify(other.func) in LOG | {f"{TL}.log2"}):
                    return False
            elif isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1 \
                    and isinstance(parent.targets[0], ast.Name):
                definition = self.flow.definition_at(parent, parent.targets[0].id)
                if definition is None:
                    return False
                pending.extend(self.flow.uses_of(definition))
            else:
                return False
        return True

    def _exponentiated(self, difference: ast.BinOp) -> bool:
        """`difference` is the argument of an exponential, directly (`tl.exp(x - m)`) or through one local name
        every use of which is (`shifted = x - m`, then `tl.exp(shifted)`)."""
        def exp_of(node: ast.AST) -> bool:
            above = self.flow.parents.get(id(node))
            return isinstance(above, ast.Call) and self.model.qualify(above.func) in EXP and above.args[:1] == [node]
        if exp_of(difference):
            return True
        parent = self.flow.parents.get(id(difference))
        if not (isinstance(parent, ast.Assign) and parent.value is difference and len(parent.targets) == 1
                and isinstance(parent.targets[0], ast.Name)):
            return False
        definition = self.flow.definition_at(parent, parent.targets[0].id)
        uses = self.flow.uses_of(definition) if definition is not None else []
        return bool(uses) and all(exp_of(use) for use in uses)

    def decides_early_exit_only(self, reduction: ast.Call, needs: str) -> bool:
        """A max whose every use is `if max < c: return` (a min: `if min > c: return`): more lanes can only
        raise a max (lower a min), so padded lanes can only keep a program from returning early, never make
        it return; what it computes after the test is computed as for real data alone."""
        uses = self.result_uses(reduction)
        if not uses or needs not in (NEG_INF, POS_INF):
            return False
        below = (ast.Lt, ast.LtE) if needs == NEG_INF else (ast.Gt, ast.GtE)
        above = (ast.Gt, ast.GtE) if needs == NEG_INF else (ast.Lt, ast.LtE)
        for use in uses:
            test = self.flow.parents.get(id(use))
            if not isinstance(test, ast.Compare) or len(test.ops) != 1:
                return False
            if not (test.left is use and isinstance(test.ops[0], below)
                    or test.comparators[0] is use and isinstance(test.ops[0], above)):
                return False
            branch = self.flow.parents.get(id(test))
            if not (isinstance(branch, ast.If) and branch.test is test and not branch.orelse
                    and len(branch.body) == 1 and isinstance(branch.body[0], ast.Return)
                    and branch.body[0].value is None):
                return False
        return True

    def spoils_only_the_last_chunk(self, reduction: ast.Call, load: ast.Call) -> bool:
        """A reduction folded into a loop-carried accumulator (`total += tl.sum(x)`) that is read only by
        later iterations, of a load whose lanes trail: the loop is `for start in range(lo, n, B)`, the load's
        mask `offs < n` with `offs = start + tl.arange(0, B)`, so only the last chunk has masked-off lanes,
        and the total they spoil there is never read (a running prefix of a cumulative sum)."""
        stmt = self.flow.parents.get(id(reduction))
        if isinstance(stmt, ast.AugAssign) and stmt.value is reduction and isinstance(stmt.target, ast.Name):
            name = stmt.target.id
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and isinstance(stmt.value, ast.BinOp) and reduction in (stmt.value.left, stmt.value.right) \
                and any(isinstance(side, ast.Name) and side.id == stmt.targets[0].id
                        for side in (stmt.value.left, stmt.value.right)):
            name = stmt.targets[0].id
        else:
            return False
        loops = self.flow.enclosing_loops(stmt)
        if not loops or not isinstance(loops[0], ast.For) or not self.flow.inside(load, loops[0]):
            return False
        loop = loops[0]
        if not self._trailing_mask(load, loop):
            return False
        definition = self.flow.definition_at(stmt, name)
        if definition is None:
            return False
        # Every read of the new total comes before the update in the loop's body (the next iteration reads
        # it), or is the update's own target.
        return all(use is getattr(stmt, "target", None) or use in ast.walk(stmt) or self.flow.inside(use, loop)
                   and (use.lineno, use.col_offset) < (stmt.lineno, stmt.col_offset)
                   for use in self.flow.uses_of(definition))

    def _trailing_mask(self, load: ast.Call, loop: ast.For) -> bool:
        """The load's mask is `offs < n`, `offs = start + tl.arange(0, B)`, in `for start in range(lo, n, B)`."""
        mask = load_argument(load, 1, "mask")
        bound = self._upper_bound(mask) if mask is not None else None
        bounds = self._stepped_range(loop)
        if bound is None or not isinstance(loop.target, ast.Name) or bounds is None or ast.unparse(bounds[1]) != bound[1]:
            return False
        offsets = self.flow.single_value(bound[0])
        if not (isinstance(offsets, ast.BinOp) and isinstance(offsets.op, ast.Add)):
            return False
        for start, span in ((offsets.left, offsets.right), (offsets.right, offsets.left)):
            if isinstance(start, ast.Name) and start.id == loop.target.id \
                    and all(d.stmt is loop for d in self.flow.reaching(start)) \
                    and self._arange_end(span) == ast.unparse(bounds[2]):
                return True
        return False

    # ---- what the lanes hold -------------------------------------------------------------------------
    def lanes(self, expr: ast.expr, load: ast.Call, fill: str, siblings_too: bool = False,
              reach: Reach | None = None, stand_in: bool = False) -> Lanes:
        """The padded lanes at `expr` when `load` fills them with `fill`; `siblings_too`: so does every load
        that turns off the same lanes with no `other` (the fix sets it on each). With `reach`, only the lanes
        that reduction folds into rows it keeps. `stand_in`: an infinite fill is a huge finite value (-1e30)."""
        evaluation = _Evaluation(self, load, fill, siblings_too, reach, stand_in)
        found = evaluation.of(expr)
        if found.tainted and found.classes == {FINITE}:
            value = evaluation.exact(expr)
            if value is not None and abs(value) < NEGLIGIBLE:
                return Lanes(frozenset({ZERO}), True)
        return found

    def loads_feeding(self, expr: ast.expr, folded_by: ast.Call | None = None) -> set[int] | None:
        """The loads (their call ids) whose values `expr` is computed from, through local names and their
        every definition; None where a value comes from somewhere the flow does not show (a loop-carried
        name's other definitions are followed, a helper's result is not: None). With `folded_by`, a reduction,
        the values of other reductions to one value are left out: a row's statistic (a first pass's
        `tl.max(x, axis=0)` of 1-D blocks) is one value along the lanes `folded_by` folds."""
        found: set[int] = set()
        pending: list[ast.AST] = [expr]
        for node in each_once(pending):
            # A load's lanes hold what it reads; the loads that give its address (a gathered row's token id)
            # feed where it reads, not what its masked-off lanes hold; nor does a tile `tl.numel` counts.
            addresses = {id(n) for sub in walk(node) if isinstance(sub, ast.Call)
                         and self.model.qualify(sub.func) in (LOAD, *SHAPE_OF)
                         for argument in (*sub.args, *sub.keywords) for n in walk(argument)}
            if folded_by is not None:
                addresses |= {id(n) for sub in walk(node) if isinstance(sub, ast.Call) and sub is not folded_by
                              and self._folds_to_one_value(sub) for n in walk(sub) if n is not sub}
            for sub in walk(node):
                if id(sub) in addresses:
                    continue
                if isinstance(sub, ast.Call) and self.model.qualify(sub.func) == LOAD:
                    found.add(id(sub))
                elif isinstance(sub, ast.Call) and self.model.qualify(sub.func) is None and \
                        not (isinstance(sub.func, ast.Attribute) and sub.func.attr in _READ_METHODS) and \
                        not (isinstance(sub.func, ast.Name) and sub.func.id in _CONVERSIONS):
                    return None  # a helper or a method the analysis does not read
                elif isinstance(sub, ast.Name):
                    definitions = self.flow.reaching(sub) if isinstance(sub.ctx, ast.Load) else \
                        self.flow.defined_before(node, sub.id) if isinstance(node, ast.AugAssign) else set()
                    for definition in definitions:
                        if definition.kind in ("assign", "augassign") and definition.stmt is not None:
                            pending.append(definition.stmt)
                        elif definition.kind not in ("param", "loop"):
                            return None
        return found

    def calls_among(self, ids: set[int]) -> list[ast.Call]:
        """The function's calls whose ids are given (a `loads_feeding` set), in walk order."""
        if self._calls is None:
            self._calls = [n for n in walk(self.flow.function) if isinstance(n, ast.Call)]
        return [n for n in self._calls if id(n) in ids]

    def signed_data(self, factor: ast.expr) -> bool:
        """A block of values read from memory, of either sign: computed from loads whose addresses are blocks,
        and not shown non-negative (a scale or a length read at a scalar address is taken as positive)."""
        if id(factor) not in self._signed:
            feeding = self.loads_feeding(factor)
            loads = self.calls_among(feeding) if feeding else []
            self._signed[id(factor)] = not self.nonnegative(factor) and any(
                self.indices.of(load_pointer(load)).rank > 0 for load in loads)
        return self._signed[id(factor)]

    def filled_alike(self, load: ast.Call, function: ast.AST) -> list[ast.Call]:
        """The other loads of the function under the same mask as `load` (every conjunct alike) that pad with the
        same constant (`preds` and `targets`, both `other=0.0` under `offs < n`)."""
        if id(load) not in self._alike:
            mask, fill = load_argument(load, 1, "mask"), literal_number(load_argument(load, 2, "other"))
            self._alike[id(load)] = [] if fill is None or mask is None else [
                node for node in walk(function) if isinstance(node, ast.Call) and node is not load
                and self.model.qualify(node.func) == LOAD and literal_number(load_argument(node, 2, "other")) == fill
                and self._conjuncts(mask) == self._conjuncts(load_argument(node, 1, "mask"))]  # type: ignore[arg-type]
        return self._alike[id(load)]

    def unfilled_siblings(self, load: ast.Call, function: ast.AST) -> list[ast.Call]:
        """The other loads of the function with no `other` whose masks turn off the same lanes as `load`'s."""
        mask = load_argument(load, 1, "mask")
        return [node for node in walk(function) if isinstance(node, ast.Call) and node is not load
                and self.model.qualify(node.func) == LOAD and load_argument(node, 2, "other") is None
                and self.shares_lanes(mask, load_argument(node, 1, "mask"))]


class _Evaluation:
    def __init__(self, analysis: PaddedLanes, load: ast.Call, fill: str, siblings_too: bool,
                 reach: Reach | None = None, stand_in: bool = False) -> None:
        self.analysis = analysis
        self.across = reach.across if reach is not None else None
        self.live = reach.live if reach is not None else None
        self.reach = reach
        self.model = analysis.model
        self.flow = analysis.flow
        self.load = load
        self.mask = load_argument(load, 1, "mask")
        self.fill = fill
        self.siblings_too = siblings_too
        self.passed = analysis.forward(load).passed
        self.reach_loops = self.flow.enclosing_loops(reach.call) if reach is not None else []
        guard = self._constexpr_guard(load)
        # The `if`s with the load's own constexpr test and no `else`: a name they rebind is rebound where it runs.
        self.guarded_ifs = [s for s in walk(self.flow.function) if isinstance(s, ast.If) and not s.orelse
                            and _polarity(s.test) == guard] if guard is not None else []
        self._memo: dict[int, Lanes | None] = {}
        self._exact_open: set[int] = set()  # definitions whose exact value is being worked out
        # An infinite fill is exactly so unless the load's own `other` is a huge finite stand-in (-1e30): a fix
        # writes float("-inf").
        own = literal_number(load_argument(load, 2, "other"))
        self.exact_fill = not stand_in and (
            own is None or math.isinf(own) or constant_class(load_argument(load, 2, "other")) != fill)
        self.fill_value = own if own is not None and not self.exact_fill else _FILL_VALUES.get(fill)

    def of(self, expr: ast.expr | None, depth: int = 0) -> Lanes:
        if expr is None or depth > 40:
            return UNKNOWN_LANES
        if expr is self.load:
            return Lanes(frozenset({_exact_if(self.fill, self.exact_fill)}), True)
        constant = constant_class(expr)
        if constant is not None:
            return Lanes(frozenset({constant}))
        if isinstance(expr, (ast.Name, ast.Compare)) and self.analysis.masks_lanes(expr, self.mask, self.live):
            return Lanes(frozenset({ZERO}))  # the load's own mask as a value (`x * mask`): 0 where the lanes are off
        if isinstance(expr, ast.Name):
            return self._name(expr, depth)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Pow):
            exponent = literal_number(expr.right)
            if exponent is not None and exponent == int(exponent) and exponent >= 1:  # `(x - mean) ** 2`
                base = self.of(expr.left, depth + 1)
                return Lanes(frozenset(_power(c, int(exponent)) for c in base.classes), base.tainted)
        if isinstance(expr, ast.BinOp):
            left, right = self.of(expr.left, depth + 1), self.of(expr.right, depth + 1)
            lanes = self._binop(expr.op, left, right)
            if isinstance(expr.op, ast.Mult) and any(
                    padded.tainted and not factor.tainted and self.analysis.signed_data(other)
                    for padded, factor, other in ((left, right, expr.right), (right, left, expr.left))):
                # an infinity times another load's data (`k * q` of a query row) takes that data's sign:
                # either infinity, and their sum along the row NaN
                lanes = Lanes(frozenset(c2 for c in lanes.classes for c2 in (c, _neg(c))), lanes.tainted)
            if lanes.tainted and lanes.classes == {FINITE}:
                value = self._exact(expr, depth)  # `eps * (log(eps) - log(eps))` of clamped zero fills: 0
                if value is not None:
                    return Lanes(frozenset({_class_of(value)}), True)
            return lanes
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
            inner = self.of(expr.operand, depth + 1)
            return Lanes(frozenset(map(_neg, inner.classes)), inner.tainted)
        if isinstance(expr, ast.Call):
            return self._call(expr, depth)
        if isinstance(expr, ast.Subscript) and broadcast_axis(expr) is not None:
            return self.of(expr.value, depth + 1)  # `a[:, None]`: the same lanes, broadcast
        if isinstance(expr, ast.Attribute) and expr.attr == "T":
            return self.of(expr.value, depth + 1)  # `k.T`: the same lanes, transposed
        found = self._mentions_load(expr, depth)
        return UNKNOWN_LANES if found else REAL

    def _mentions_load(self, expr: ast.expr, depth: int) -> bool:
        """The load, or a name its lanes reach, appears in `expr` outside reductions along the padded axis
        (`tl.maximum(tl.max(qk, 1), m_i)`: a reduction's result is real data here, checked where it is made)."""
        pending: list[ast.AST] = [expr]
        while pending:
            node = pending.pop()
            if node is self.load or isinstance(node, ast.Name) and self.of(node, depth + 1).tainted:
                return True
            if isinstance(node, ast.Call) and id(node) not in self.passed \
                    and self.analysis.reduction_needs(node) is not None:
                continue
            pending.extend(ast.iter_child_nodes(node))
        return False

    def _binop(self, op: ast.operator, left: Lanes, right: Lanes) -> Lanes:
        tainted = left.tainted or right.tainted
        if isinstance(op, ast.Add):
            return Lanes(_pairwise(_add, left.classes, right.classes), tainted)
        if isinstance(op, ast.Sub):
            return Lanes(_pairwise(_add, left.classes, frozenset(map(_neg, right.classes))), tainted)
        if isinstance(op, ast.Mult):
            return Lanes(_pairwise(_mul, left.classes, right.classes), tainted)
        if isinstance(op, ast.Div):
            return Lanes(_pairwise(_div, left.classes, right.classes), tainted)
        if _zero_bits(op, left, right):
            return Lanes(frozenset({ZERO}), tainted)
        return UNKNOWN_LANES if tainted else REAL

    def _call(self, call: ast.Call, depth: int) -> Lanes:
        name = self.model.qualify(call.func)
        if id(call) in self.passed:
            return self._passed(call, depth)
        if name is None and isinstance(call.func, ast.Attribute):
            if call.func.attr in IDENTITY_METHODS or _method_transpose(call):
                return self.of(call.func.value, depth + 1)  # `x.to(...)`; `k.trans(1, 0)`: the same lanes
            if call.func.attr in METHOD_NEEDS:
                return self._zero_rows(call, depth)  # a reduction: its result is checked where it is made
            return UNKNOWN_LANES if self._mentions_load(call, depth) else REAL
        if name == TRANS and call.args:
            return self.of(call.args[0], depth + 1)
        if name == DOT:
            # Rows (columns) of an operand that another load pads with 0 on the same lanes, `do` in `tl.dot(do,
            # tl.trans(v))`: those rows of the product are 0 too (flash attention's backward, `dp - Di`)
            operands = (load_argument(call, 0, "input"), load_argument(call, 1, "other"))
            return Lanes(frozenset({ZERO})) if any(self._zero_padded(o) for o in operands) else REAL
        if name in NEEDS:
            return self._zero_rows(call, depth)
        if name in SHAPE_OF or name in (f"{TL}.reduce", f"{TL}.xor_sum"):
            return REAL
        if name == LOAD:
            mask = load_argument(call, 1, "mask")
            if mask is None:
                return REAL
            # A constant fill under a narrower bound of the same index than another load's (`cols < n_rot`
            # against `cols < n_cols`) is a value for the lanes between the bounds (RoPE's pass-through
            # `cos = 1.0`): only the lanes past both are padding, and there the other load is padded too.
            # A load masked only along the other axes (a row's `bias` under `c < C`, summed over `hw`) holds real
            # data on the lanes the reduction folds in.
            sharing = self.analysis.shares_lanes(mask, self.mask, self.across) \
                or self.analysis.off_wherever(mask, self.mask) \
                or self.fill != UNDEF and self.analysis.bounds_the_same_index(self.mask, mask)
            if not sharing:
                # A load padded with an infinity under a mask over the same block of indices in another form (a
                # mask tile `(start_n + offs_n) < H` added to scores whose keys stop at `block * H + start_n +
                # offs_n < M * H`) may set the lanes under study to that infinity: not taken as real data.
                if constant_class(load_argument(call, 2, "other")) in (NEG_INF, POS_INF) \
                        and self._bounds_an_index_of_the_mask(mask):
                    return UNKNOWN_LANES
                return REAL if not self._mentions_load(call, depth) else UNKNOWN_LANES
            other = load_argument(call, 2, "other")
            if other is None:
                return Lanes(frozenset({_exact_if(self.fill, self.exact_fill) if self.siblings_too else UNDEF}))
            # `other=float("-inf")` is an infinity exactly, not a huge stand-in; counted so only against a load
            # padded with an infinity too (`-inf - (-inf)`), so a NaN is reported once, at an infinite fill.
            value = literal_number(other)
            exact = value is not None and math.isinf(value) and plain(self.fill) in (NEG_INF, POS_INF)
            return Lanes(frozenset({_exact_if(constant_class(other) or FINITE, exact)}))
        if name in (f"{TL}.zeros", f"{TL}.zeros_like"):
            return Lanes(frozenset({ZERO}))
        if name == f"{TL}.full" and (filled := load_argument(call, 1, "value")) is not None:
            # `tl.full(shape, float("-inf"))`: a true infinity is exactly one (two meeting, `m - m_new`, are NaN)
            number = literal_number(filled)
            return Lanes(frozenset({_exact_if(constant_class(filled) or FINITE, number is not None and math.isinf(number))}))
        arguments = [self.of(a, depth + 1) for a in call.args]
        tainted = any(a.tainted for a in arguments)
        if name in IDENTITY and arguments:
            return arguments[0]
        if name == FMA and len(arguments) == 3:
            return self._binop(ast.Add(), self._binop(ast.Mult(), arguments[0], arguments[1]), arguments[2])
        if name in EXP and len(arguments) == 1:
            return Lanes(frozenset(map(_exp, arguments[0].classes)), tainted)
        if name in ABS and len(arguments) == 1:
            return Lanes(frozenset(map(_abs, arguments[0].classes)), tainted)
        if name in LOG and len(arguments) == 1:
            value = self._exact(call.args[0], depth)  # `tl.log(1.0 + x)` of a zero-padded x: log(1) = 0
            if value is not None and value > 0:
                return Lanes(frozenset({_class_of(math.log(value))}), tainted)
            return Lanes(frozenset(map(_log, arguments[0].classes)), tainted)
        if name == WHERE and len(call.args) == 3:
            if self._mentions_load(call.args[0], depth):
                picked = self._exact(call.args[0], depth)  # `tl.where(margin > 0, margin, 0.0)`, margin known there
                return UNKNOWN_LANES if picked is None else arguments[1] if picked else arguments[2]
            if self.analysis.masks_lanes(call.args[0], self.mask, self.live):
                chosen = arguments[2]
                return Lanes(chosen.classes, chosen.tainted)
            picked = self._one_lane(call.args[0])
            if picked is not None:
                # `tl.where(offs == PAGE - 1, -inf, logits)`: every padded lane but one keeps the other side; the
                # one lane singled out takes a constant, or is taken to be a real one (`tl.where(offs == idx, x,
                # 0)` reads element idx of x)
                rest, one = (arguments[2], arguments[1]) if picked else (arguments[1], arguments[2])
                return Lanes(rest.classes | (frozenset() if one.tainted else one.classes), rest.tainted)
            if (arguments[1].tainted or arguments[2].tainted) and not self._constant_along_fold(call.args[0]):
                return UNKNOWN_LANES  # lanes picked by some other condition
            if arguments[1].classes != arguments[2].classes and self._bounds_an_index_of_the_mask(call.args[0]):
                return UNKNOWN_LANES  # `tl.where(off_n < seq_len - c, 0, -inf)`: perhaps the load's mask in another form
            return Lanes(arguments[1].classes | arguments[2].classes,  # either side: other loads' fills, constants
                         arguments[1].tainted or arguments[2].tainted)
        if name == CLAMP and arguments:
            value = self._exact(call, depth)  # `tl.clamp(p, 1e-10, 1.0)` of a zero-padded p: 1e-10
            if value is not None:
                return Lanes(frozenset({_class_of(value)}), tainted)
            bounds = [literal_number(bound) if bound is not None else None for bound in _clamp_bounds(call)]
            if all(bound is not None and math.isfinite(bound) for bound in bounds):
                return Lanes(frozenset({FINITE}), tainted)  # between two finite bounds, whatever the lanes held
        if name in UNARY_VALUES and len(arguments) == 1:
            value = self._exact(call, depth)
            if value is not None:
                return Lanes(frozenset({_class_of(value)}), tainted)
        if tainted and self._undefined_through(name, call, arguments):
            return Lanes(frozenset({UNDEF}), tainted)  # a function of undefined lanes: undefined too
        if name in _EXTREMES:
            value = self._exact(call, depth)  # `tl.maximum(1.0 - x * y, 0.0)` of two zero-padded loads: 1.0
            if value is not None:
                return Lanes(frozenset({_class_of(value)}), tainted)
            if tainted and len(arguments) == 2 and all(a.classes and UNKNOWN not in a.classes for a in arguments):
                # a running maximum `tl.maximum(m, x)`: the lanes' classes side by side
                extreme = _maximum if name == f"{TL}.maximum" else _minimum
                return Lanes(_pairwise(extreme, arguments[0].classes, arguments[1].classes), tainted)
        return UNKNOWN_LANES if tainted or self._mentions_load(call, depth) or self._of_alike_loads(call) else REAL

    def _undefined_through(self, name: str | None, call: ast.Call, arguments: list[Lanes]) -> bool:
        """A call that maps undefined lanes to undefined lanes: Triton's elementwise math (`tl.erf(x)`,
        `libdevice.pow(d, -1.5)`), or a jit helper of the project handed the undefined tile alone (`gelu_gate(x)`:
        it cannot know which lanes are padding), where every operand the load reaches holds only undefined lanes."""
        if call.keywords or not any(a.tainted for a in arguments) \
                or any(a.classes != {UNDEF} for a in arguments if a.tainted):
            return False
        # (one-operand exp, log and abs are followed before this is asked)
        if name in UNARY_VALUES or name in ELEMENTWISE_MATH \
                or name is not None and name.startswith(LIBDEVICE):  # libdevice: elementwise math (`pow(d, -1.5)`)
            return True
        if len(arguments) != 1:
            return False
        helper = self.model.local_function(call.func.id) if isinstance(call.func, ast.Name) else None
        return helper is not None and helper.node is not None

    def exact(self, expr: ast.expr) -> float | None:
        """The one value every padded lane of `expr` holds, where literals and constant fills fix it."""
        return self._exact(expr, 0)

    def _constant_along_fold(self, condition: ast.expr) -> bool:
        """The condition is one value along the axis the reduction under study folds (a scalar flag, or the rows'
        `offs_m[:, None] < M` before `tl.max(qk, 1)`): each folded row keeps one side whole, so its padded lanes
        hold that side's values, whichever it is. A condition on loaded data (`q > 0`) varies lane by lane."""
        if self.analysis.loads_feeding(condition) != set():
            return False
        axes = self.analysis.mask_axes(condition, 0)
        if axes is None or not axes:
            return axes is not None
        folded = self.analysis.reduced_axis(self.reach.call, 2) if self.reach is not None else None
        return folded in (0, 1) and axes <= {0, 1} and folded not in axes

    def _bounds_an_index_of_the_mask(self, condition: ast.expr) -> bool:
        """The condition reads a block of indices (a name bound to a `tl.arange` expression) that the load's mask
        also reads, through single assignments: it may turn off the same lanes in another form."""
        def indices(expr: ast.expr | None, depth: int = 0) -> set[str]:
            found: set[str] = set()
            nodes = walk(expr) if expr is not None and depth < 4 else []
            loaded = {id(n) for call in nodes if isinstance(call, ast.Call) and self.model.qualify(call.func) == LOAD
                      for n in walk(call)}  # what a load reads is data, whatever its address
            for node in nodes:
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in loaded:
                    if self.analysis.indices.of(node).rank == 1:
                        found.add(node.id)
                    for definition in self.flow.reaching(node):
                        if definition.kind == "assign":
                            found |= indices(definition.value, depth + 1)
            return found
        return bool(indices(condition) & indices(self.mask))

    def _one_lane(self, condition: ast.expr) -> bool | None:
        """For an equality of a block of indices with a scalar (`offs == PAGE - 1`), which singles out one lane
        along the block, or of a column of indices with a row (`rows[:, None] == cols[None, :]`, the diagonal:
        one lane of each row and of each column): True; for such an inequality: False (the one lane is where it
        fails); else None."""
        condition = self.flow.single_value(condition)  # `is_self = rows[:, None] == cols[None, :]`
        if not (isinstance(condition, ast.Compare) and len(condition.ops) == 1
                and isinstance(condition.ops[0], (ast.Eq, ast.NotEq))):
            return None
        sides = [self.analysis.indices.of(side) for side in (condition.left, condition.comparators[0])]
        if not all(side.regular for side in sides):
            return None
        diagonal = all(side.rank == 2 for side in sides) and {frozenset(s.axes) for s in sides} == {
            frozenset({0}), frozenset({1})}
        if sorted(side.rank for side in sides) != [0, 1] and not diagonal:
            return None
        return isinstance(condition.ops[0], ast.Eq)

    def _of_alike_loads(self, call: ast.Call) -> bool:
        """An unknown function of loads padded alike under this load's mask (`mul_rn(update, scale)`): their
        lanes are padding as much as this one's, not real data."""
        alike = {id(load) for load in self.analysis.filled_alike(self.load, self.flow.function)}
        feeding = self.analysis.loads_feeding(call) if alike else None
        return bool(feeding and feeding & alike)

    def _exact(self, expr: ast.expr, depth: int) -> float | None:
        """The one value every padded lane of `expr` holds where literals and constant fills fix it (`1.0 - x * y`
        of two loads padded with 0: 1.0; a comparison: 1.0 or 0.0), else None."""
        if depth > 40:
            return None
        if expr is self.load:
            return self.fill_value
        number = literal_number(expr)
        if number is not None:
            return number
        if isinstance(expr, ast.Name):
            values: set[float | None] = set()
            for definition in self.flow.reaching(expr):
                if definition.kind == "param" and definition.name in self.analysis.launched:
                    values.add(self.analysis.launched[definition.name])
                    continue
                if definition.kind != "assign" or definition.value is None or id(definition) in self._exact_open:
                    return None  # a parameter, a loop index, a value carried around a loop
                self._exact_open.add(id(definition))
                values.add(self._exact(definition.value, depth + 1))
                self._exact_open.discard(id(definition))
            return values.pop() if len(values) == 1 else None
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
            inner = self._exact(expr.operand, depth + 1)
            return None if inner is None else -inner
        if isinstance(expr, ast.BinOp) and type(expr.op) in _ARITHMETIC:
            left, right = self._exact(expr.left, depth + 1), self._exact(expr.right, depth + 1)
            if left is None or right is None:
                return None
            try:
                value = _ARITHMETIC[type(expr.op)](left, right)
            except (ZeroDivisionError, OverflowError):
                return None
            return None if math.isnan(value) else value
        if isinstance(expr, ast.Compare) and len(expr.ops) == 1 and type(expr.ops[0]) in _COMPARISONS:
            left, right = self._exact(expr.left, depth + 1), self._exact(expr.comparators[0], depth + 1)
            return None if left is None or right is None else float(_COMPARISONS[type(expr.ops[0])](left, right))
        if isinstance(expr, ast.Call):
            return self._exact_call(expr, depth)
        return None

    def _exact_call(self, call: ast.Call, depth: int) -> float | None:
        name = self.model.qualify(call.func)
        if name is None and isinstance(call.func, ast.Attribute) and call.func.attr in IDENTITY_METHODS:
            return self._exact(call.func.value, depth + 1)  # `x.to(tl.float32)`
        if name == LOAD and call is not self.load:
            mask = load_argument(call, 1, "mask")
            if mask is None or not self.analysis.shares_lanes(mask, self.mask):
                return None
            other = load_argument(call, 2, "other")
            return self.fill_value if other is None and self.siblings_too else literal_number(other)
        if name == CLAMP and call.args:
            bounds = [self._exact(bound, depth + 1) if bound is not None else None for bound in _clamp_bounds(call)]
            value = self._exact(call.args[0], depth + 1)
            return None if value is None or bounds[0] is None or bounds[1] is None else min(max(value, bounds[0]), bounds[1])
        values = [self._exact(a, depth + 1) for a in call.args]
        if any(v is None for v in values) or call.keywords:
            return None
        known: list[float] = values  # type: ignore[assignment]
        if name in IDENTITY and known:
            return known[0]
        if name == FMA and len(known) == 3:
            return known[0] * known[1] + known[2]
        if name in _EXTREMES and len(known) == 2:
            return _EXTREMES[name](*known)
        if name == WHERE and len(known) == 3:
            return known[1] if known[0] else known[2]
        if name in ABS and len(known) == 1:
            return abs(known[0])
        if name in LOG and len(known) == 1 and known[0] > 0:
            return math.log(known[0])
        if name in EXP and len(known) == 1 and known[0] < 700:
            return 2.0 ** known[0] if name.endswith("exp2") else math.exp(known[0])
        if name in UNARY_VALUES and len(known) == 1:
            try:
                return float(UNARY_VALUES[name](known[0]))
            except (ValueError, OverflowError, ZeroDivisionError):
                return None
        return None

    def _zero_rows(self, reduction: ast.Call, depth: int) -> Lanes:
        """A sum along the other axis of a tile whose padded rows other loads pad with 0 (`Di = tl.sum(do * o,
        1)` with `do` and `o` 0 on the rows past the sequence): those rows sum to 0. Any other reduction: real
        data as far as the load under study goes (its own reductions are checked where they are made)."""
        reduced = self.analysis.reduced(reduction)
        if self.analysis.reduction_needs(reduction) != ZERO or not self._zero_padded(reduced):
            return REAL
        feeding = self.analysis.loads_feeding(reduced)  # type: ignore[arg-type]
        if not feeding:
            return REAL
        padded = [self.analysis.load_axes(load) for load in self.analysis.calls_among(feeding)
                  if self.analysis.shares_lanes(load_argument(load, 1, "mask"), self.mask)]
        tiles = [found for found in padded if found is not None and found.rank == 2]
        if not tiles or len(tiles) != len(padded):
            return REAL  # the rows' loads are not all 2-D tiles whose padded axes are known
        index = self.analysis.reduced_axis(reduction, 2)
        along = any(index in found.axes for found in tiles)
        return Lanes(frozenset({ZERO})) if index in (0, 1) and not along else REAL

    def _zero_padded(self, expr: ast.expr | None, depth: int = 0) -> bool:
        """`expr` is another load that pads the lanes under study with 0 (or a product with one), read through
        single assignments, casts and transposes: a cheap structural test, not an evaluation of the lanes."""
        if expr is None or depth > 8:
            return False
        if isinstance(expr, ast.Name):
            definitions = self.flow.reaching(expr)
            if len(definitions) != 1:
                return False
            (definition,) = definitions
            return definition.kind == "assign" and self._zero_padded(definition.value, depth + 1)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
            return self._zero_padded(expr.left, depth + 1) or self._zero_padded(expr.right, depth + 1)
        if not isinstance(expr, ast.Call) or expr is self.load:
            return False
        name = self.model.qualify(expr.func)
        if name is None and isinstance(expr.func, ast.Attribute) and (
                expr.func.attr in IDENTITY_METHODS or _method_transpose(expr)):
            return self._zero_padded(expr.func.value, depth + 1)
        if name in IDENTITY or name == TRANS:
            return bool(expr.args) and self._zero_padded(expr.args[0], depth + 1)
        if name != LOAD:
            return False
        lanes = self._call(expr, depth)  # the load's own fill on the lanes it shares with the load under study
        return lanes.classes == {ZERO} and not lanes.tainted

    def _passed(self, reduction: ast.Call, depth: int) -> Lanes:
        """A reduction along an axis the padding does not vary on: a padded lane of the result reduces padded
        lanes only (a max or min is one of them, a sum adds them, an arg-reduction is an index)."""
        inner = self.of(self.analysis.reduced(reduction), depth + 1)
        needs = self.analysis.reduction_needs(reduction)
        func = reduction.func
        name = self.model.qualify(func) or (func.attr if isinstance(func, ast.Attribute) else "")  # `x.argmax()`
        if name.rpartition(".")[2] in ("argmax", "argmin"):
            return Lanes(frozenset({FINITE}), inner.tainted)
        if needs == ZERO:
            return Lanes(_pairwise(_add, inner.classes, inner.classes) | inner.classes, inner.tainted)
        return inner

    def _constexpr_guard(self, load: ast.Call) -> tuple[str, bool] | None:
        """Where the innermost `if` around the load tests constexpr parameters only (`if EVEN_V: ... else:
        load`): the test without its `not`, and the value it has where the load runs (any other `if` on the
        same test has it too)."""
        child: ast.AST = load
        current = self.flow.parents.get(id(load))
        while current is not None and not isinstance(current, (ast.If, ast.FunctionDef)):
            child, current = current, self.flow.parents.get(id(current))
        if not isinstance(current, ast.If):
            return None
        names = {n.id for n in walk(current.test) if isinstance(n, ast.Name)}
        if not names or not names <= self.analysis.indices.constexprs:
            return None
        core, positive = _polarity(current.test)
        return core, positive == any(child is statement for statement in current.body)

    def _skipped_with_the_load(self, definition: Definition, use: ast.Name) -> bool:
        """The definition reaches the use only past an `if` that rebinds the name and whose constexpr test holds
        wherever the load runs (`logits = acc * s`, then `if not EVEN_V: logits = tl.where(col_mask, logits,
        -inf)` or `logits += tl.where(...)`, the load under `not EVEN_V`): only where that test fails, and there
        the load did not run."""
        if not self.guarded_ifs or not isinstance(definition.stmt, ast.stmt) or not isinstance(use, ast.expr):
            return False
        return any(definition.stmt.lineno < statement.lineno and (statement.end_lineno or 0) < use.lineno
                   and any(isinstance(t, ast.Name) and t.id == use.id for s in statement.body for t in _rebound(s))
                   for statement in self.guarded_ifs)

    def _name(self, name: ast.Name, depth: int) -> Lanes:
        definitions = self._past_start(name, self.flow.reaching(name))
        definitions = frozenset(d for d in definitions if not self._skipped_with_the_load(d, name))
        if not definitions:
            return REAL  # a global or a builtin
        pairs = [(d, r) for d in definitions if (r := self._definition(d, depth)) is not None]
        switches = {id(d): switch for d, r in pairs if UNKNOWN in r.classes and (switch := self._launch_switch(d))}
        if len(switches) < len(pairs):  # the launches that do not take a switch see the other definitions only
            pairs = [(d, r) for d, r in pairs if id(d) not in switches]
            self.analysis.switches.setdefault(id(self.load), set()).update(switches.values())
        results = [r for _, r in pairs]
        tainted = [r for r in results if r.tainted]
        chosen = tainted or results
        if not chosen:
            return Lanes(frozenset())  # only the value carried around a loop: its other definitions decide
        return Lanes(frozenset().union(*(r.classes for r in chosen)), bool(tainted))

    def _launch_switch(self, definition: Definition) -> tuple[str, bool] | None:
        """The parameter and the value of it that runs the definition, where the definition is made inside an
        `if` on a runtime kernel parameter alone (`if is_causal:`, `if not causal:`): a launch chooses whether it
        runs, so the launches that pass the other value read the name's other definitions. Not a switch whose
        name speaks of padding or bounds (`if not even_k:`, `if has_tail:`), which launches set exactly where
        there is padding to mask; nor a constexpr one, judged per compilation (tl108_masked_load_padding)."""
        child: ast.AST | None = definition.stmt
        statement = self.flow.parents.get(id(child))
        while statement is not None and not isinstance(statement, ast.If):
            child, statement = statement, self.flow.parents.get(id(statement))
        if statement is None:
            return None
        name, taken = _polarity(statement.test)
        params = {a.arg for a in self.flow.function.args.args}
        if name not in params - self.analysis.indices.constexprs or _PADDING_SWITCH.search(name):
            return None
        return name, taken if child in statement.body else not taken

    def _past_start(self, name: ast.Name, definitions: frozenset[Definition]) -> frozenset[Definition]:
        """A running maximum started at -inf (a minimum at +inf) and updated in a loop (`m = -inf`, then `m =
        tl.maximum(m, tl.max(x))`, or through `m_new = tl.maximum(m, ...)`; `m = m_new`), read in that loop or in
        one over the same range: the start is left only when the loop never runs, and then this read never
        happens either, so it sees the updates alone."""
        starts = {NEG_INF: f"{TL}.maximum", POS_INF: f"{TL}.minimum"}
        for start in definitions:
            if start.kind != "assign" or self._start_class(start.value) not in starts:
                continue
            fold = starts[self._start_class(start.value)]  # type: ignore[index]
            updates = definitions - {start}
            if updates and all(self._folds(d, name.id, fold) and (self._read_in_its_loop(d, name)
                                                                   or self._read_after_row_loop(d, name))
                               for d in updates):
                return updates
        return self._ran_before(name, definitions)

    def _start_class(self, value: ast.expr | None) -> str | None:
        """The class of a start value: a literal, `tl.full(shape, literal)`, or `tl.zeros(shape) + literal`."""
        if isinstance(value, ast.Call) and self.model.qualify(value.func) == f"{TL}.full" \
                and (filled := load_argument(value, 1, "value")) is not None:
            return constant_class(filled)
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
            for zeros, other in ((value.left, value.right), (value.right, value.left)):
                if isinstance(zeros, ast.Call) and self.model.qualify(zeros.func) == f"{TL}.zeros":
                    return constant_class(other)
        return constant_class(value)

    def _ran_before(self, name: ast.Name, definitions: frozenset[Definition]) -> frozenset[Definition]:
        """A name read after a loop that updates it on every pass (`d = d * alpha + tl.sum(p)` of an online
        softmax), where the reduction under study runs in a later loop over the same range: that loop ran, so
        the values from before it (`d = 0.0`, whose log is -inf) are never what the reduction sees."""
        later = {key: loop.lineno for loop in self.reach_loops if (key := self._loop_key(loop)) is not None}
        for definition in definitions:
            loop = self.flow.parents.get(id(definition.stmt))
            if not isinstance(loop, (ast.For, ast.While)) or definition.stmt not in loop.body \
                    or loop in self.reach_loops or later.get(self._loop_key(loop) or "", 0) <= (loop.end_lineno or loop.lineno) \
                    or name.lineno <= (loop.end_lineno or loop.lineno) or loop in self.flow.enclosing_loops(name):
                continue
            before = {d for d in definitions if d.stmt is None or loop not in self.flow.enclosing_loops(d.stmt)}
            if before and all(getattr(d.stmt, "lineno", 0) < loop.lineno for d in before):
                return definitions - before
        return definitions

    def _loop_key(self, loop: ast.For | ast.While) -> str | None:
        """What a loop runs over: a `for`'s iterable, or a `while`'s test with the values its names enter with
        (`col = 0` then `while col < n`); two loops with one key run alike, so one ran where the other runs."""
        if isinstance(loop, ast.For):
            return ast.unparse(loop.iter)
        entries = []
        for node in walk(loop.test):
            if isinstance(node, ast.Name):
                outside = [d for d in self.flow.reaching(node) if d.kind == "param" or not self.flow.inside(d.stmt, loop)]  # type: ignore[arg-type]
                if any(d.kind not in ("assign", "param") or d.kind == "assign" and d.value is None for d in outside):
                    return None
                entries += sorted(f"{node.id}={ast.unparse(d.value) if d.value is not None else 'parameter'}" for d in outside)
        return f"while {ast.unparse(loop.test)} from {', '.join(entries)}"

    def _folds(self, definition: Definition, name: str, fold: str) -> bool:
        """`name = fold(name, ...)`, or `name = other` with `other = fold(name, ...)` its single assignment."""
        value = definition.value if definition.kind == "assign" else None
        if isinstance(value, ast.Name):
            reaching = [d for d in self.flow.reaching(value) if d.kind == "assign"]
            value = reaching[0].value if len(reaching) == len(self.flow.reaching(value)) == 1 else None
        return isinstance(value, ast.Call) and self._extreme(value) == fold \
            and any(isinstance(a, ast.Name) and a.id == name for a in value.args)

    def _extreme(self, call: ast.Call) -> str | None:
        """`tl.maximum` / `tl.minimum` for those calls, and for a select that spells one: `tl.where(a > b, a, b)`
        (also `>=`, or `b < a`) is the maximum of a and b, `tl.where(a < b, a, b)` the minimum."""
        name = self.model.qualify(call.func)
        if name in _EXTREMES:
            return name
        if name != f"{TL}.where" or len(call.args) != 3 or not isinstance(call.args[0], ast.Compare) \
                or len(call.args[0].ops) != 1:
            return None
        test, (first, second) = call.args[0], (ast.dump(a) for a in call.args[1:])
        left, right = ast.dump(test.left), ast.dump(test.comparators[0])
        greater = isinstance(test.ops[0], (ast.Gt, ast.GtE))
        if not (greater or isinstance(test.ops[0], (ast.Lt, ast.LtE))) or {left, right} != {first, second}:
            return None
        return f"{TL}.maximum" if greater == (left == first) else f"{TL}.minimum"

    def _read_after_row_loop(self, update: Definition, use: ast.Name) -> bool:
        """The update sits in a loop over the row that the load under study belongs to (a load in it is masked by
        a bound this load's mask also has: `offs < V` in both), and the use comes after that loop: the start is
        left only when the loop never ran, that is, for an empty row, where this load has no real lane either."""
        loops = self.flow.enclosing_loops(update.stmt) if update.stmt is not None else []
        if not loops or loops[0] in self.flow.enclosing_loops(use) or use.lineno <= (loops[0].end_lineno or 0):
            return False
        ours = self.analysis.upper_bounds(self.mask)
        return bool(ours) and any(
            isinstance(node, ast.Call) and self.model.qualify(node.func) == LOAD
            and self.analysis.upper_bounds(load_argument(node, 1, "mask")) & ours for node in walk(loops[0]))

    def _read_in_its_loop(self, update: Definition, use: ast.Name) -> bool:
        """The update sits in a loop, and the use in that loop or in a loop over the same range."""
        loops = self.flow.enclosing_loops(update.stmt) if update.stmt is not None else []
        if not loops:
            return False
        around_use = self.flow.enclosing_loops(use)
        return loops[0] in around_use or self._loop_key(loops[0]) in {self._loop_key(loop) for loop in around_use} - {None}

    def _definition(self, definition: Definition, depth: int) -> Lanes | None:
        key = id(definition)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = None  # carried around a loop: its other definitions decide
        if definition.kind == "assign":
            result = self.of(definition.value, depth + 1)
        elif definition.kind == "augassign":
            stmt = definition.stmt
            before = self.flow.defined_before(stmt, definition.name)  # type: ignore[arg-type]
            previous = [r for r in (self._definition(d, depth + 1) for d in before) if r is not None]
            tainted_previous = [r for r in previous if r.tainted]
            chosen = tainted_previous or previous or [REAL]
            joined = Lanes(frozenset().union(*(r.classes for r in chosen)), bool(tainted_previous))
            result = self._binop(stmt.op, joined, self.of(definition.value, depth + 1))  # type: ignore[union-attr]
        elif definition.kind == "opaque":
            result = UNKNOWN_LANES if any(n is self.load for n in ast.walk(definition.stmt)) else REAL  # type: ignore[arg-type]
        elif definition.kind == "param" and definition.name in self.analysis.launched:
            result = Lanes(frozenset({_class_of(self.analysis.launched[definition.name])}))
        else:
            result = REAL  # parameters and loop indices are real data
        self._memo[key] = result
        return result


def _rebound(statement: ast.stmt) -> list[ast.expr]:
    """The targets a statement rebinds: an assignment's, or an augmented one's (`s += tl.where(mask, 0, -inf)`,
    whose new value takes the old one along)."""
    if isinstance(statement, ast.Assign):
        return statement.targets
    return [statement.target] if isinstance(statement, ast.AugAssign) else []


def _polarity(test: ast.expr) -> tuple[str, bool]:
    """A test's text without a leading `not`, and whether it had none."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        core, positive = _polarity(test.operand)
        return core, not positive
    return ast.unparse(test), True


def satisfies(lanes: Lanes, needs: str, nonnegative: bool) -> bool | None:
    """True: the padded lanes arrive as the reduction's neutral element; False: definitely not; None: unknown."""
    if not lanes.tainted or not lanes.classes:
        return True
    if NAN in lanes.classes and needs == ZERO:
        return False  # a lane that some path makes NaN spoils the sum, whatever the others are
    if UNKNOWN in lanes.classes or NAN in lanes.classes:
        return None  # how a max or min treats NaN depends on its `propagate_nan`
    ok = {needs}
    if needs == NEG_INF and nonnegative:
        ok.add(ZERO)  # a max over values >= 0 (abs, exp): a 0 fill changes nothing
    return {plain(c) for c in lanes.classes} <= ok
