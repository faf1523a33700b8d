"""TL104: `tl.arange` ranges, tile shapes and descriptor block shapes that are statically known and not
powers of two (a compile error)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from tritonlint.analysis.consteval import Value
from tritonlint.analysis.model import ModuleModel
from tritonlint.analysis.static_values import evaluations, is_power_of_two
from tritonlint.analysis.triton_names import (
    ARANGE,
    HOST_DESCRIPTOR,
    KERNEL_DESCRIPTORS,
    SHAPE_ARGUMENT_CALLS,
    SHAPE_METHODS,
    TILE_SHAPE_CALLS,
)
from tritonlint.context import MatchContext, Verdict, condition
from tritonlint.prefilter import Token, disjoin

WORDS = ("arange", "zeros", "full", "reshape", "view", "TensorDescriptor", "make_tensor_descriptor")
SIZING = frozenset({ARANGE, *TILE_SHAPE_CALLS, *SHAPE_ARGUMENT_CALLS, *KERNEL_DESCRIPTORS, HOST_DESCRIPTOR,
                    f"{HOST_DESCRIPTOR}.from_tensor"})  # the qualified callees `sizes` knows
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\Z")


def _argument(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    if len(call.args) > index:
        return call.args[index]
    return next((kw.value for kw in call.keywords if kw.arg == keyword), None)


def _elements(shape: ast.expr | None) -> list[ast.expr]:
    if isinstance(shape, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in shape.elts):
        return list(shape.elts)
    return []


def _shape_arguments(call: ast.Call, first: int) -> list[ast.expr]:
    """`reshape(x, (a, b))`, `reshape(x, a, b)`, `reshape(x, shape=[a, b])`; `x.reshape(a, b)` from 0."""
    rest = call.args[first:]
    if len(rest) == 1 and isinstance(rest[0], (ast.Tuple, ast.List)):
        return _elements(rest[0])
    if rest:
        return [] if any(isinstance(a, ast.Starred) for a in rest) else list(rest)
    return _elements(next((kw.value for kw in call.keywords if kw.arg == "shape"), None))


def sizes(ctx: MatchContext, call: ast.Call) -> tuple[str, list[ast.expr]] | None:
    """What the call sizes (for the message) and the expressions that must be powers of two; for tl.arange
    the (start, end) pair."""
    name = ctx.model.qualify(call.func)
    in_kernel = ctx.function is not None
    if name == ARANGE and in_kernel:
        start, end = _argument(call, 0, "start"), _argument(call, 1, "end")
        return ("range", [start, end]) if start is not None and end is not None else None
    if name in TILE_SHAPE_CALLS and in_kernel:
        return "shape", _elements(_argument(call, 0, "shape"))
    if name in SHAPE_ARGUMENT_CALLS and in_kernel:
        return "shape", _shape_arguments(call, 1)
    if name is None and in_kernel and isinstance(call.func, ast.Attribute) and call.func.attr in SHAPE_METHODS:
        return "shape", _shape_arguments(call, 0)  # a method of a tile
    if (name in KERNEL_DESCRIPTORS and in_kernel) or name == HOST_DESCRIPTOR:
        return "block_shape", _elements(_argument(call, 3, "block_shape"))
    if name == f"{HOST_DESCRIPTOR}.from_tensor":
        return "block_shape", _elements(_argument(call, 1, "block_shape"))
    return None


def _sizes_nothing(ctx: MatchContext) -> bool:
    """Whether the callee's text already shows that `sizes` finds nothing in the call: the rule matches every
    call, and mapping each to the ast costs most of its time. A plain dotted callee qualifies as its ast does."""
    callee = ctx.metavar("CALL")
    text = callee.text() if callee is not None else ""
    if not _DOTTED.match(text):
        return False
    name = ctx.model.qualify_dotted(text)
    return name not in SIZING and not (name is None and "." in text and text.rpartition(".")[2] in SHAPE_METHODS)


def _host_values(ctx: MatchContext, exprs: list[ast.expr]) -> Iterator[list[Value]]:
    """On the host, only literals and module constants: the values of locals are not followed."""
    values = [ctx.model.evaluator().evaluate(e) for e in exprs]
    known = [v for v in values if v is not None]
    if len(known) == len(values):
        yield known


def _describe(value: Value) -> str:
    return "a literal" if not value.sources else value.describe()


def _can_size(model: ModuleModel, target: int | None) -> bool:
    """Outside jit functions only a host TensorDescriptor is sized, and a callee qualifies to it only where
    the file spells the word (in the call or in the import that binds it)."""
    return bool(model.functions) or model.text is None or "TensorDescriptor" in model.text


@condition("shape-not-power-of-two", provides=("what", "size", "size_source"),
           prefilter=lambda args: disjoin(Token(word) for word in WORDS), applies=_can_size)
def shape_not_power_of_two(ctx: MatchContext) -> Verdict | None:
    """An in-kernel tl.arange whose range, a tl.zeros / tl.full / tl.reshape shape element, or a descriptor
    block_shape element (tl.make_tensor_descriptor, host TensorDescriptor) is statically known and not a power
    of two (a negative one too) in some scenario (constexpr defaults no call overrides, configs, literal launches)."""
    if _sizes_nothing(ctx):
        return None
    call = ctx.ast_node(types=(ast.Call,))
    if not isinstance(call, ast.Call):
        return None
    found = sizes(ctx, call)
    if found is None:
        return None
    kind, exprs = found
    function = ctx.function
    if kind == "range":
        for start, end in evaluations(ctx.model, function, exprs) if function else ():
            span = end.value - start.value
            if span > 0 and not is_power_of_two(span):
                source = _describe(Value(span, start.sources + end.sources))
                return Verdict(vars={"what": "range", "size": str(span), "size_source": source})
        return None
    for index, expr in enumerate(exprs):
        for (value,) in evaluations(ctx.model, function, [expr]) if function else _host_values(ctx, [expr]):
            # A negative element is taken literally: `tl.reshape(x, (-1,))` infers nothing (Triton 3.6: "Shape
            # element 0 must be a power of 2").
            if value.value < 0 or value.value > 0 and not is_power_of_two(value.value):
                what = f"{kind} element {index}" if len(exprs) > 1 else kind
                notes = ["Triton infers no size from -1 (unlike torch): write the size the block has, such as "
                         "the product of its dimensions."] if value.value < 0 else []
                return Verdict(vars={"what": what, "size": str(value.value), "size_source": _describe(value)},
                               span=ctx.file.span_of(expr) if len(exprs) > 1 else None, notes=notes)
    return None
