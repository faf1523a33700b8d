"""A small evaluator for the integer expressions that size Triton loops and grids.

It folds literals, names bound in an environment, `+ - * // % << >> **`, unary minus, `min`/`max`,
`triton.cdiv`, `triton.next_power_of_2`, `tl.constexpr(x)` and `META["X"]`-style subscripts. Anything else
is unknown (None): callers stay silent rather than guess. Each value carries where it came from, so a
message can say "BLOCK_K=64 from config #2".
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Binding:
    """A constant a name is bound to, and where the binding comes from."""
    value: object  # int, float, bool or str
    origin: str  # human-readable: "config #2", "module constant", "constexpr default", "launch at line 80"


@dataclass(frozen=True)
class Value:
    """An evaluated integer and the named bindings it depends on."""
    value: int
    sources: tuple[tuple[str, Binding], ...] = ()  # the named bindings the value depends on

    def describe(self) -> str:
        """'BLOCK_K=64 from config #2, K=2048 from module constant', or 'a literal'."""
        if not self.sources:
            return "literal bounds"
        seen: dict[str, Binding] = dict(self.sources)
        return ", ".join(f"{name}={b.value} from {b.origin}" for name, b in seen.items())


_BINARY: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
}

MAX_BITS = 256  # larger values are unknown: operands stay small, so every operation below stays cheap
_CDIV = {"triton.cdiv", "triton.language.cdiv"}
_NEXT_POW2 = {"triton.next_power_of_2"}
_CONSTEXPR = {"triton.language.constexpr"}


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _next_power_of_2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


class Evaluator:
    """Evaluates expressions against `env` (name -> Binding); `qualify` turns a callee into a dotted name."""

    def __init__(self, env: Mapping[str, Binding], qualify: Callable[[ast.expr], str | None]) -> None:
        self.env = env
        self.qualify = qualify

    def evaluate(self, node: ast.expr) -> Value | None:
        try:
            return self._eval(node)
        except (ZeroDivisionError, OverflowError, ValueError, RecursionError):
            return None

    def _eval(self, node: ast.expr) -> Value | None:
        value = self._eval_node(node)
        if value is not None and value.value.bit_length() > MAX_BITS:
            return None  # no loop or grid is that big; and a tower of ** would take forever to compute
        return value

    def _eval_node(self, node: ast.expr) -> Value | None:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, int):
                return None
            return Value(node.value)
        if isinstance(node, ast.Name):
            return self._lookup(node.id)
        if isinstance(node, ast.BinOp):
            return self._binary(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self._eval(node.operand)
            if operand is None:
                return None
            sign = -1 if isinstance(node.op, ast.USub) else 1
            return Value(sign * operand.value, operand.sources)
        if isinstance(node, ast.Subscript):
            return self._meta_subscript(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        return None

    def _lookup(self, name: str) -> Value | None:
        binding = self.env.get(name)
        if binding is None or isinstance(binding.value, bool) or not isinstance(binding.value, int):
            return None
        return Value(binding.value, ((name, binding),))

    def _binary(self, node: ast.BinOp) -> Value | None:
        left, right = self._eval(node.left), self._eval(node.right)
        if left is None or right is None:
            return None
        sources = left.sources + right.sources
        if isinstance(node.op, ast.Pow):
            if not 0 <= right.value <= 64:
                return None
            return Value(left.value**right.value, sources)
        op = _BINARY.get(type(node.op))
        if op is None:
            return None
        if isinstance(node.op, (ast.LShift, ast.RShift)) and not 0 <= right.value <= 64:
            return None
        return Value(op(left.value, right.value), sources)

    def _meta_subscript(self, node: ast.Subscript) -> Value | None:
        """META["BLOCK_M"] / args["N"] / kwargs["N"]: look the key up like a name."""
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return self._lookup(key.value)
        return None

    def _call(self, node: ast.Call) -> Value | None:
        if node.keywords:
            return None
        name = self.qualify(node.func)
        if name is None and isinstance(node.func, ast.Name):
            name = node.func.id  # builtins: min, max, int
        args = [self._eval(arg) for arg in node.args]
        if any(a is None for a in args):
            return None
        values = [a.value for a in args]  # type: ignore[union-attr]
        sources = tuple(s for a in args for s in a.sources)  # type: ignore[union-attr]
        if name in _CDIV and len(values) == 2:
            return Value(_cdiv(*values), sources)
        if name in _NEXT_POW2 and len(values) == 1:
            return Value(_next_power_of_2(values[0]), sources)
        if name in _CONSTEXPR | {"int"} and len(values) == 1:
            return Value(values[0], sources)
        if name in ("min", "max") and values:
            return Value((min if name == "min" else max)(values), sources)
        return None


def literal_value(node: ast.expr | None) -> object | None:
    """The Python value of a literal int/float/bool/str (with unary minus), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool)):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, (int, float))
        and not isinstance(node.operand.value, bool)
    ):
        return -node.operand.value
    return None
