"""Symbolic tile shapes: the shape of every tile value in a jit function, under one scenario (constexpr
defaults, an autotune config, a literal launch) or symbolically (no parameter bound).

A shape is a tuple of dimensions, each an int (known in the scenario), a str (symbolic: the text of a
constexpr expression, `BLOCK_M`, equal only to the same text) or None (unknown); a scalar is `()`. A value
whose shape cannot be followed (a helper's result, a tuple, an opaque unpacking) has no shape at all, and
nothing built from it has one: callers stay silent about it.

Shapes come from `tl.arange`, `tl.zeros`/`tl.full`, `[:, None]` indexing, pointer-tile loads (the shape of
the pointer expression), block pointers and descriptor block shapes, `reshape`/`trans`/`permute`/`tl.dot`,
reductions (the axis is removed, or kept as 1 with keep_dims) and Triton's broadcasting of elementwise
operands (the lower rank gets leading 1s; each dimension equal or 1). The body is walked once per scenario
in statement order: an `if` whose test folds to a constant takes its live arm only (Triton does the same
for constexpr tests), both arms of any other `if` merge, loop bodies are walked twice so loop-carried
values settle. A kernel's own parameters are scalars; a jit helper's parameters are unknown (they may be
tiles), except its constexprs (see is_kernel).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tritonlint.analysis.consteval import Binding, Value
from tritonlint.analysis.kernel import launches_of, scenarios
from tritonlint.analysis.model import JitFunction, ModuleModel
from tritonlint.analysis.reductions import load_argument
from tritonlint.analysis.scope import LocalScope
from tritonlint.analysis.triton_names import (
    TILE_ELEMENTWISE,
    TILE_SAME_SHAPE,
    TL,
)
from tritonlint.source import short_source
from tritonlint.walk import walk

Dim = int | str | None
Shape = tuple[Dim, ...]

_SIXTEEN_BIT = frozenset({"float16", "bfloat16", "int16", "uint16"})
_FLOATS = frozenset({"float16", "bfloat16", "float32", "float64", "float8e4nv", "float8e5", "float8e4b15"})


# Makes a Tile from a shape, its sources and dtype (a closure over the call being evaluated).
Made = Callable[..., "Tile"]


@dataclass(frozen=True)
class Tile:
    """What the analysis knows of one value: its shape (None: unknown), where the shape was fixed, the
    bindings its known dimensions came from, and its element type when a cast or constructor names it."""

    shape: Shape | None
    line: int = 0
    made_by: ast.AST | None = field(default=None, compare=False)  # the expression or assignment that fixed the shape
    sources: tuple[tuple[str, Binding], ...] = ()
    dtype: str | None = None
    kind: str = "tile"  # "tile" | "descriptor" (block shape of a tensor descriptor) | "block_ptr" | "tuple"
    items: tuple[Tile, ...] | None = field(default=None, compare=False)  # a tuple's elements (a helper's return)

    def __post_init__(self) -> None:
        # A union, not a concatenation: operands that share their sources (`tl.where(do, b, a)` with `do` made
        # from `a` and `b`) doubled them at each step, exponentially along a chain of helper calls.
        if len(self.sources) > 1:
            object.__setattr__(self, "sources", tuple(dict.fromkeys(self.sources)))

    @property
    def text(self) -> str:
        """The source of what fixed the shape, shortened for messages (unparsed only when a message needs it)."""
        return "" if self.made_by is None else short_source(self.made_by)

    @property
    def known(self) -> bool:
        return self.shape is not None and all(isinstance(d, int) for d in self.shape)

    def describe(self) -> str:
        """'(64, 32) from `a = tl.load(a_ptrs)` at line 20 (BLOCK_K=32 from config #2)'."""
        if self.made_by is None:
            return f"{format_shape(self.shape)} from a kernel argument or constant"
        text = f"{format_shape(self.shape)} from `{self.text}` at line {self.line}"
        seen = dict(self.sources)
        if seen:
            text += " (" + ", ".join(f"{k}={b.value} from {b.origin}" for k, b in seen.items()) + ")"
        return text


UNKNOWN = Tile(None)
FAILED = Tile(None, kind="failed")  # the result of an operation that does not compile: nothing after it is checked
SCALAR = Tile(())


def format_shape(shape: Shape | None) -> str:
    if shape is None:
        return "unknown"
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


class Incompatible(Exception):
    """Two shapes that cannot broadcast: the index and the two dimensions (Triton's own wording)."""

    def __init__(self, index: int, left: Dim, right: Dim) -> None:
        super().__init__(f"incompatible dimensions at index {index}: {left} and {right}")
        self.index, self.left, self.right = index, left, right


def broadcast(left: Shape, right: Shape) -> Shape:
    """Triton's broadcast of two block shapes (make_shape_compatible): the lower rank gets leading 1s, then
    each dimension must be equal or 1. Raises Incompatible only for two known, different ints; a symbolic
    or unknown dimension against another value gives an unknown dimension."""
    if len(left) < len(right):
        left = (1,) * (len(right) - len(left)) + left
    elif len(right) < len(left):
        right = (1,) * (len(left) - len(right)) + right
    out: list[Dim] = []
    for index, (a, b) in enumerate(zip(left, right)):
        if a == b or b == 1:
            out.append(a)
        elif a == 1:
            out.append(b)
        elif isinstance(a, int) and isinstance(b, int):
            raise Incompatible(index, a, b)
        else:
            out.append(None)
    return tuple(out)


def can_broadcast(left: Shape | None, right: Shape | None) -> Incompatible | None:
    """The reason two shapes cannot broadcast, when both are known well enough to tell; else None."""
    if left is None or right is None:
        return None
    try:
        broadcast(left, right)
    except Incompatible as reason:
        return reason
    return None


def _merge(a: Tile, b: Tile) -> Tile:
    """The value of a name after two paths join: dimensions that agree are kept. Triton requires a value
    to keep its type where paths join (both arms of an `if`, loop iterations), so an unknown side takes the
    known side's shape; a side that failed to compile stays failed."""
    if a is b or a == b:
        return a
    if a.kind == "failed" or b.kind == "failed":
        return FAILED
    if a.shape is None or b.shape is None:
        return a if b.shape is None else b
    if a.kind == "tuple" or b.kind == "tuple":
        if a.kind == b.kind and a.items is not None and b.items is not None and len(a.items) == len(b.items):
            return Tile((), a.line, a.made_by, kind="tuple", items=tuple(map(_merge, a.items, b.items)))
        return UNKNOWN
    if len(a.shape) != len(b.shape):
        return UNKNOWN
    shape = tuple(x if x == y or y is None else y if x is None else None for x, y in zip(a.shape, b.shape))
    return Tile(shape, a.line, a.made_by, a.sources + b.sources, a.dtype if a.dtype == b.dtype else None,
                a.kind if a.kind == b.kind else "tile")


class ShapeMap:
    """The tiles of one jit function under one scenario: `.of(expr)` is an expression's shape (None when
    unknown), `.tile(expr)` what else is known of it."""

    def __init__(self, model: ModuleModel, function: JitFunction, scenario: dict[str, Binding] | None,
                 arguments: dict[str, Tile] | None = None, depth: int = 0) -> None:
        """`arguments`: the tiles a caller passes to a jit helper (see _inline), else its parameters' defaults."""
        self.model = model
        self.function = function
        self.scenario = scenario
        self.depth = depth
        self._tiles: dict[int, Tile] = {}
        self._reached: set[int] = set()  # statements the walk took (not in a branch a constant test rules out)
        self.returned: Tile | None = None  # the join of what the function returns (a tuple: kind "tuple")
        node = function.node
        # Without a scenario every parameter is unbound (symbolic), even one named like a module constant.
        unbound = {p.name: Binding(None, "kernel argument") for p in function.params}
        self._scope = LocalScope(model, unbound if scenario is None else scenario, node)
        self._params = {**self._parameters(model, function), **(arguments or {})}
        if node is not None:
            env = dict(self._params)
            self._block(node.body, env)

    def _qualify(self, callee: ast.expr) -> str | None:
        """model.qualify of a callee of the module's tree, kept for the module: a body is walked once per
        scenario, and loop bodies twice."""
        key = ("tile-callees", 0)
        names = self.model.memo.get(key)
        if names is None:
            names = self.model.memo[key] = {}
        found = names.get(id(callee), _UNSET)
        if found is _UNSET:
            found = names[id(callee)] = self.model.qualify(callee)
        return found  # type: ignore[no-any-return]

    # ---- queries -------------------------------------------------------------------------------------
    def tile(self, expr: ast.AST) -> Tile:
        return self._tiles.get(id(expr), UNKNOWN)

    def of(self, expr: ast.AST) -> Shape | None:
        return self.tile(expr).shape

    def reached(self, stmt: ast.stmt) -> bool:
        """Whether the walk took this statement (False in the arm of an `if` that a constant test rules out)."""
        return id(stmt) in self._reached

    # ---- parameters ----------------------------------------------------------------------------------
    @staticmethod
    def _parameters(model: ModuleModel, function: JitFunction) -> dict[str, Tile]:
        kernel = is_kernel(model, function)
        return {p.name: SCALAR if kernel or p.is_constexpr else UNKNOWN for p in function.params}

    # ---- dimensions ----------------------------------------------------------------------------------
    def _dim(self, expr: ast.expr) -> tuple[Dim, tuple[tuple[str, Binding], ...]]:
        value = self._value(expr)
        if value is not None:
            return value.value, value.sources
        if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) \
                and isinstance(expr.slice.value, int) and (shape := self._shape_of(expr.value)) is not None \
                and -len(shape) <= expr.slice.value < len(shape):
            return shape[expr.slice.value], ()  # `x.shape[0]` of a tile whose shape is known
        return ast.unparse(expr), ()

    def _shape_of(self, expr: ast.expr) -> Shape | None:
        """The shape `x.shape` reads, for a tile `x` the walk has evaluated."""
        if isinstance(expr, ast.Attribute) and expr.attr == "shape":
            return self.tile(expr.value).shape
        return None

    def _value(self, expr: ast.expr) -> Value | None:
        found: Value | None = self._scope.evaluator().evaluate(expr)
        return found

    def _dims(self, expr: ast.expr | None) -> tuple[Shape, tuple[Any, ...]] | None:
        """A shape written as a tuple or list of dimensions (or one dimension)."""
        if expr is None:
            return None
        if not isinstance(expr, (ast.Tuple, ast.List, ast.Name, ast.Constant)) and self._value(expr) is None:
            shape = self._shape_of(expr)  # `tl.broadcast_to(x, mask.shape)`: another tile's shape, else unknown
            return (shape, self.tile(expr.value).sources) if shape is not None else None  # type: ignore[attr-defined]
        items = expr.elts if isinstance(expr, (ast.Tuple, ast.List)) else [expr]
        if any(isinstance(e, ast.Starred) for e in items):
            return None
        dims: list[Dim] = []
        sources: tuple[Any, ...] = ()
        for item in items:
            dim, found = self._dim(item)
            dims.append(dim)
            sources += found
        return tuple(dims), sources

    def _truth(self, test: ast.expr) -> bool | None:
        """The value of a branch test that folds to a constant in this scenario, else None."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self._truth(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            values = [self._truth(v) for v in test.values]
            if isinstance(test.op, ast.And):
                return False if False in values else (True if all(v is True for v in values) else None)
            return True if True in values else (False if all(v is False for v in values) else None)
        if isinstance(test, ast.Constant):
            return bool(test.value)
        if isinstance(test, ast.Name):
            binding = self._scope.get(test.id)
            return bool(binding.value) if binding is not None and isinstance(binding.value, (bool, int)) else None
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left, right = self._value(test.left), self._value(test.comparators[0])
            if left is None or right is None:
                return None
            compare = _COMPARE.get(type(test.ops[0]))
            return bool(compare(left.value, right.value)) if compare is not None else None
        return None

    # ---- statements ----------------------------------------------------------------------------------
    def _block(self, body: list[ast.stmt], env: dict[str, Tile]) -> dict[str, Tile]:
        for stmt in body:
            env = self._statement(stmt, env)
        return env

    def _statement(self, stmt: ast.stmt, env: dict[str, Tile]) -> dict[str, Tile]:
        self._reached.add(id(stmt))
        if isinstance(stmt, ast.Assign):
            env = dict(env)
            tile = self._expr(stmt.value, env)
            for target in stmt.targets:
                self._bind(target, stmt.value, tile, env, stmt)
            return env
        if isinstance(stmt, ast.AnnAssign):
            env = dict(env)
            if stmt.value is not None:
                self._bind(stmt.target, stmt.value, self._expr(stmt.value, env), env, stmt)
            return env
        if isinstance(stmt, ast.AugAssign):
            env = dict(env)
            current = self._expr(stmt.target, env) if isinstance(stmt.target, ast.Name) else UNKNOWN
            value = self._expr(stmt.value, env)
            result = self._combine(stmt, [current, value], stmt.lineno)
            if isinstance(stmt.target, ast.Name):
                env[stmt.target.id] = result
            return env
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            self._expr(stmt.iter, env)
            entry = dict(env)
            counter = isinstance(stmt.target, ast.Name) and isinstance(stmt.iter, ast.Call) and \
                (self.model.qualify(stmt.iter.func) or ast.unparse(stmt.iter.func)).rpartition(".")[2] in \
                ("range", "static_range")
            for name in walk(stmt.target):
                if isinstance(name, ast.Name):
                    entry[name.id] = SCALAR if counter else UNKNOWN  # a loop over a tuple may yield tiles
            once = self._block(stmt.body, entry)
            twice = self._block(stmt.body, _join(entry, once))
            return self._block(stmt.orelse, _join(entry, twice))
        if isinstance(stmt, ast.While):
            self._expr(stmt.test, env)
            once = self._block(stmt.body, env)
            twice = self._block(stmt.body, _join(env, once))
            return self._block(stmt.orelse, _join(env, twice))
        if isinstance(stmt, ast.If):
            truth = self._truth(stmt.test)
            if truth is None:
                self._expr(stmt.test, env)
                return _join(self._block(stmt.body, env), self._block(stmt.orelse, env))
            return self._block(stmt.body if truth else stmt.orelse, env)
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            env = dict(env)
            for item in stmt.items:
                self._expr(item.context_expr, env)
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, None, UNKNOWN, env, stmt)
            return self._block(stmt.body, env)
        if isinstance(stmt, ast.Try):
            after = self._block(stmt.body, env)
            ends = [self._block(stmt.orelse, after)] + [self._block(h.body, _join(env, after)) for h in stmt.handlers]
            out = ends[0]
            for end in ends[1:]:
                out = _join(out, end)
            return self._block(stmt.finalbody, out)
        if isinstance(stmt, ast.Return):
            value = UNKNOWN if stmt.value is None else self._expr(stmt.value, env)
            if isinstance(stmt.value, ast.Tuple):
                value = Tile((), stmt.lineno, stmt, kind="tuple", items=tuple(self.tile(e) for e in stmt.value.elts))
            self.returned = value if self.returned is None else _merge(self.returned, value)
        elif isinstance(stmt, ast.Expr):
            self._expr(stmt.value, env)
        elif isinstance(stmt, (ast.Assert,)):
            self._expr(stmt.test, env)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            env = dict(env)
            env[stmt.name] = UNKNOWN
        return env

    def _bind(self, target: ast.expr, value: ast.expr | None, tile: Tile, env: dict[str, Tile], stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            if tile.shape is not None and value is not None and not isinstance(value, ast.Name):
                tile = Tile(tile.shape, stmt.lineno, stmt, tile.sources, tile.dtype,
                            tile.kind)
            env[target.id] = tile
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                for element, item in zip(target.elts, value.elts):
                    self._bind(element, item, self.tile(item), env, stmt)
                return
            parts = self._unpacked(value, env, len(target.elts))
            for index, element in enumerate(target.elts):
                self._bind(element, None, parts[index] if parts else UNKNOWN, env, stmt)
        # attribute and subscript targets bind no local name

    def _unpacked(self, value: ast.expr | None, env: dict[str, Tile], count: int) -> list[Tile] | None:
        """`a, b = tl.split(x)`: each half drops the last dimension, which must be 2. Where it is known to be
        something else (or the call passes arguments `tl.split` does not take), the kernel fails at the split
        and the halves have no shape."""
        if isinstance(value, ast.Call) and self.model.qualify(value.func) == f"{TL}.split" and value.args and count == 2:
            source = self.tile(value.args[0])
            if source.shape and source.shape[-1] == 2 and len(value.args) == 1 and not value.keywords:
                half = Tile(source.shape[:-1], value.lineno, value, source.sources, source.dtype)
                return [half, half]
            return None
        returned = self.tile(value) if value is not None else UNKNOWN
        if returned.kind == "tuple" and returned.items is not None and len(returned.items) == count:
            return list(returned.items)
        return None

    # ---- expressions ---------------------------------------------------------------------------------
    def _expr(self, node: ast.expr, env: dict[str, Tile]) -> Tile:
        tile = self._compute(node, env)
        seen = self._tiles.get(id(node))
        # A node seen again (a loop body's second walk) keeps what the first walk knew if it knows nothing more.
        self._tiles[id(node)] = tile if seen is None or seen.shape is None else seen if tile.shape is None \
            else _merge(seen, tile)
        return tile

    def _combine(self, node: ast.AST, operands: Iterable[Tile], line: int) -> Tile:
        """The broadcast of elementwise operands; unknown when any is unknown or they cannot broadcast."""
        shape: Shape = ()
        sources: tuple[Any, ...] = ()
        dtypes = set()
        for operand in operands:
            if operand.shape is None:
                return operand if operand.kind == "failed" else UNKNOWN
            try:
                shape = broadcast(shape, operand.shape)
            except Incompatible:
                return FAILED
            sources += operand.sources
            dtypes.add(operand.dtype)
        return Tile(shape, line, node, sources, dtypes.pop() if len(dtypes) == 1 else None)

    def _compute(self, node: ast.expr, env: dict[str, Tile]) -> Tile:
        if isinstance(node, ast.Constant):
            return SCALAR if isinstance(node.value, (int, float, bool)) else UNKNOWN
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            return SCALAR if node.id in self.model.constants else UNKNOWN
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            return UNKNOWN  # Triton 3.6's tensors have no `@`: what it makes is no shape
        if isinstance(node, ast.BinOp):
            operands = [self._expr(node.left, env), self._expr(node.right, env)]
            return self._combine(node, operands, node.lineno)
        if isinstance(node, ast.Compare):
            operands = [self._expr(node.left, env)] + [self._expr(c, env) for c in node.comparators]
            tile = self._combine(node, operands, node.lineno)
            return Tile(tile.shape, tile.line, tile.made_by, tile.sources, "int1") if tile.shape is not None else tile
        if isinstance(node, ast.UnaryOp):
            return self._expr(node.operand, env)
        if isinstance(node, ast.BoolOp):
            operands = [self._expr(v, env) for v in node.values]
            return SCALAR if all(o.shape == () for o in operands) else UNKNOWN
        if isinstance(node, ast.IfExp):
            truth = self._truth(node.test)
            self._expr(node.test, env)
            body, orelse = self._expr(node.body, env), self._expr(node.orelse, env)
            return body if truth is True else orelse if truth is False else _merge(body, orelse)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, env)
        if isinstance(node, ast.Attribute):
            base = self._expr(node.value, env)
            if node.attr == "T" and base.shape is not None and len(base.shape) == 2:
                return Tile(base.shape[::-1], node.lineno, node, base.sources, base.dtype)
            return UNKNOWN
        if isinstance(node, ast.Call):
            return self._call(node, env)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self._expr(child, env)
        return UNKNOWN

    def _subscript(self, node: ast.Subscript, env: dict[str, Tile]) -> Tile:
        """`x[:, None]`, `x[None, :]`, `x[None]`: a 1 where None is; `:` keeps a dimension."""
        base = self._expr(node.value, env)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if base.shape is None or base.kind != "tile":
            return UNKNOWN
        if not all(_is_none(i) or _is_full_slice(i) or _is_ellipsis(i) for i in items):
            return UNKNOWN
        ellipses = sum(_is_ellipsis(i) for i in items)
        kept = sum(_is_full_slice(i) for i in items)
        if ellipses > 1 or kept > len(base.shape) or (not ellipses and kept != len(base.shape)):
            return UNKNOWN
        dims: list[Dim] = []
        rest = list(base.shape)
        for item in items:
            if _is_none(item):
                dims.append(1)
            elif _is_full_slice(item):
                dims.append(rest.pop(0))
            else:
                fill = len(rest) - sum(_is_full_slice(i) for i in items[items.index(item) + 1:])
                dims.extend(rest[:fill])
                rest = rest[fill:]
        return Tile(tuple(dims), node.lineno, node, base.sources, base.dtype)

    def _call(self, node: ast.Call, env: dict[str, Tile]) -> Tile:
        name = self._qualify(node.func)
        method = node.func.attr if isinstance(node.func, ast.Attribute) and name is None else None
        receiver = self._expr(node.func.value, env) if method is not None else None  # type: ignore[attr-defined]
        args = [self._expr(a, env) for a in node.args]
        keywords = {k.arg: self._expr(k.value, env) for k in node.keywords if k.arg}
        kw_nodes = {k.arg: k.value for k in node.keywords if k.arg}
        line = node.lineno

        def arg(index: int, keyword: str) -> ast.expr | None:
            return node.args[index] if len(node.args) > index else kw_nodes.get(keyword)

        def operand(index: int, keyword: str) -> Tile:
            return args[index] if len(args) > index else keywords.get(keyword, UNKNOWN)

        def made(shape: Shape | None, sources: tuple[Any, ...] = (), dtype: str | None = None, kind: str = "tile") -> Tile:
            return UNKNOWN if shape is None else Tile(shape, line, node, sources, dtype, kind)

        if method is not None:
            return self._method(node, method, receiver, args, kw_nodes, made)  # type: ignore[arg-type]
        helper = self._helper(node, name)
        if helper is not None:
            return self._inline(node, helper, args, keywords)
        if name is None:
            builtin = node.func.id if isinstance(node.func, ast.Name) else None
            if builtin in ("float", "int", "bool", "len", "round"):
                return SCALAR  # a Python number: Triton has no such conversion of a tile
            scalars = all(t.shape == () for t in [*args, *keywords.values()])
            return SCALAR if builtin in ("min", "max", "abs") and scalars else UNKNOWN
        short = name[len(TL) + 1:] if name.startswith(TL + ".") else None
        if short in ("program_id", "num_programs"):
            return SCALAR
        if short == "arange":
            start, end = arg(0, "start"), arg(1, "end")
            if start is None or end is None:
                return UNKNOWN
            if isinstance(start, ast.Constant) and start.value == 0:
                dim, sources = self._dim(end)
            else:
                low, high = self._value(start), self._value(end)
                if low is not None and high is not None:
                    dim, sources = high.value - low.value, low.sources + high.sources
                else:
                    dim, sources = f"{ast.unparse(end)} - {ast.unparse(start)}", ()
            return made((dim,), sources, "int32")
        if short in ("zeros", "full", "empty"):
            dims = self._dims(arg(0, "shape"))
            dtype = _dtype_name(arg(1 if short != "full" else 2, "dtype"))
            return made(dims[0], dims[1], dtype) if dims else UNKNOWN
        if short in ("zeros_like", "full_like", "empty_like"):
            source = operand(0, "input")
            return made(source.shape, source.sources, source.dtype)
        if short in ("load", "_experimental_descriptor_load", "load_tensor_descriptor"):
            return self._load(short, node, operand, arg, made)
        if short == "make_block_ptr":
            dims = self._dims(arg(4, "block_shape"))
            return made(dims[0], dims[1], kind="block_ptr") if dims else UNKNOWN
        if short == "advance":
            source = operand(0, "base")
            return source if source.kind == "block_ptr" else UNKNOWN
        if short == "make_tensor_descriptor":
            dims = self._dims(arg(3, "block_shape"))
            return made(dims[0], dims[1], kind="descriptor") if dims else UNKNOWN
        if short == "dot":
            return self._dot(operand(0, "input"), operand(1, "other"), operand(2, "acc"),
                             _dtype_name(kw_nodes.get("out_dtype")), made)
        if short in ("trans", "permute"):
            dims_node = node.args[1:] if len(node.args) > 1 else ([kw_nodes["dims"]] if "dims" in kw_nodes else [])
            return self._permute(operand(0, "input"), dims_node, made)
        if short in ("reshape", "view", "broadcast_to"):
            shape_node = node.args[1:] if len(node.args) > 1 else ([kw_nodes["shape"]] if "shape" in kw_nodes else [])
            source = operand(0, "input")
            dims = self._dims(shape_node[0] if len(shape_node) == 1 else ast.Tuple(elts=list(shape_node)))
            return made(dims[0], source.sources + dims[1], source.dtype) if dims and shape_node else UNKNOWN
        if short == "expand_dims":
            return self._expand_dims(operand(0, "input"), arg(1, "axis"), made)
        if short in _REDUCTIONS:
            return self._reduce(operand(0, "input"), arg(1, "axis"), kw_nodes, made, short)
        if short in ("cast",):
            source = operand(0, "input")
            return made(source.shape, source.sources, _dtype_name(arg(1, "dtype")))
        if short == "where":
            return self._combine(node, [operand(0, "condition"), operand(1, "x"), operand(2, "y")], line)
        if short == "join":
            joined = self._combine(node, [operand(0, "a"), operand(1, "b")], line)
            return made(joined.shape + (2,), joined.sources, joined.dtype) if joined.shape is not None else UNKNOWN
        if name in TILE_SAME_SHAPE:
            source = operand(0, "input")
            return made(source.shape, source.sources, source.dtype)
        if name in TILE_ELEMENTWISE or name.startswith((f"{TL}.math.", f"{TL}.extra.")):
            return self._combine(node, args, line)
        return UNKNOWN

    def _helper(self, node: ast.Call, name: str | None) -> JitFunction | None:
        if self.depth >= _MAX_INLINE or not isinstance(node.func, ast.Name) or name != f"{self.model.module}.{node.func.id}":
            return None
        helper = self.model.local_function(node.func.id)
        return helper if helper is not None and helper.node is not None and helper is not self.function else None

    def _inline(self, node: ast.Call, helper: JitFunction, args: list[Tile], keywords: dict[str, Tile]) -> Tile:
        """What a jit helper of this module returns for these arguments: its body walked with the
        arguments' tiles, and its constexpr parameters bound to the values the caller passes (else their
        defaults). A tuple it returns can be unpacked."""
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return UNKNOWN
        exprs = dict(zip((p.name for p in helper.params), node.args))
        exprs.update({k.arg: k.value for k in node.keywords if k.arg})
        tiles = dict(zip((p.name for p in helper.params), args))
        tiles.update(keywords)
        scenario: dict[str, Binding] = {}
        for param in helper.params:
            value = self._value(exprs[param.name]) if param.name in exprs else None
            if value is not None:
                scenario[param.name] = Binding(value.value, f"argument at line {node.lineno}")
            elif param.name not in exprs and param.is_constexpr and isinstance(param.default_value, int):
                scenario[param.name] = Binding(param.default_value, "constexpr default")
            else:
                scenario[param.name] = Binding(None, "kernel argument")
        arguments = {p.name: tiles.get(p.name, SCALAR if p.is_constexpr else UNKNOWN) for p in helper.params}
        key = ("tile-inline", id(helper), _scenario_key(scenario),
               tuple((n, t.shape, t.kind) for n, t in arguments.items()))
        if key not in self.model.memo:
            self.model.memo[key] = ShapeMap(self.model, helper, scenario, arguments, self.depth + 1).returned
        returned = self.model.memo[key]
        if returned is None or returned.kind == "failed":
            return UNKNOWN
        return returned if returned.kind == "tuple" else Tile(returned.shape, node.lineno, node, returned.sources,
                                                              returned.dtype, returned.kind)

    def _method(self, node: ast.Call, method: str, receiver: Tile, args: list[Tile], kw_nodes: dict[str, ast.expr], made: Made) -> Tile:
        if receiver.kind == "descriptor" and method in ("load", "gather"):
            return made(receiver.shape, receiver.sources) if method == "load" else UNKNOWN
        if receiver.kind != "tile" or receiver.shape is None:
            return UNKNOWN
        if method in ("to", "cast"):
            dtype = _dtype_name(node.args[0] if node.args else kw_nodes.get("dtype"))
            return made(receiver.shape, receiver.sources, dtype)
        if method in ("trans", "permute"):
            dims_node = list(node.args) or ([kw_nodes["dims"]] if "dims" in kw_nodes else [])
            return self._permute(receiver, dims_node, made)
        if method in ("reshape", "view", "broadcast_to"):
            shape_node = node.args[0] if len(node.args) == 1 else ast.Tuple(elts=list(node.args)) if node.args \
                else kw_nodes.get("shape")
            dims = self._dims(shape_node)
            return made(dims[0], receiver.sources + dims[1], receiver.dtype) if dims else UNKNOWN
        if method == "expand_dims":
            return self._expand_dims(receiver, node.args[0] if node.args else kw_nodes.get("axis"), made)
        if method in _REDUCTIONS:
            return self._reduce(receiver, node.args[0] if node.args else kw_nodes.get("axis"), kw_nodes, made, method)
        if method in _SAME_SHAPE_METHODS:
            return made(receiver.shape, receiver.sources, receiver.dtype)
        return UNKNOWN

    def _load(self, short: str, node: ast.Call, operand: Callable[[int, str], Tile],
              arg: Callable[[int, str], ast.expr | None], made: Made) -> Tile:
        if short == "_experimental_descriptor_load":
            dims = self._dims(arg(2, "shape"))
            return made(dims[0], dims[1], _dtype_name(arg(3, "dtype"))) if dims else UNKNOWN
        pointer = operand(0, "pointer" if short == "load" else "desc")
        if short == "load_tensor_descriptor":
            return made(pointer.shape, pointer.sources) if pointer.kind == "descriptor" else UNKNOWN
        if pointer.kind in ("block_ptr", "descriptor"):
            return made(pointer.shape, pointer.sources) if pointer.kind == "block_ptr" else UNKNOWN
        if self._value_address(arg(0, "pointer")):
            return UNKNOWN  # an address built on a float tile is no pointer: Triton fails there, on other grounds
        present = [pointer] + [operand(i, k) for i, k in ((1, "mask"), (2, "other")) if arg(i, k) is not None]
        tile = self._combine(node, present, node.lineno)
        return made(tile.shape, pointer.sources, None) if tile.shape is not None else UNKNOWN

    def _value_address(self, address: ast.expr | None) -> bool:
        """A term of the address sum is a float tile (`tl.zeros([B], tl.float32) + i`): the code treats a value
        as a pointer, so nothing the load's shape would say about later lines is worth reporting."""
        terms, pending = [], [address]
        while pending:
            term = pending.pop()
            if isinstance(term, ast.BinOp) and isinstance(term.op, (ast.Add, ast.Sub)):
                pending += [term.left, term.right]
            elif term is not None:
                terms.append(term)
        return any(self._tiles.get(id(term), UNKNOWN).dtype in _FLOATS for term in terms)

    def _dot(self, a: Tile, b: Tile, acc: Tile, out_dtype: str | None, made: Made) -> Tile:
        if a.shape is not None and b.shape is not None and len(a.shape) == len(b.shape) and len(a.shape) in (2, 3):
            if _known_differ(a.shape[-1], b.shape[-2]) or acc.shape and (
                    len(acc.shape) != len(a.shape) or any(map(_known_differ, acc.shape, a.shape[:-1] + b.shape[-1:]))):
                return FAILED
            if a.shape[-1] != b.shape[-2]:
                return UNKNOWN  # inner dimensions not shown equal (a symbol against 448): the product may fail here
            return made(a.shape[:-1] + b.shape[-1:], a.sources + b.sources, out_dtype or acc.dtype)
        if acc.shape is not None and acc.shape != ():
            return made(acc.shape, acc.sources, acc.dtype)
        # One operand known: the rows come from the first, the columns from the second.
        if a.shape is not None and b.shape is None and len(a.shape) in (2, 3):
            return made(a.shape[:-1] + (None,), a.sources, out_dtype)
        if b.shape is not None and a.shape is None and len(b.shape) in (2, 3):
            return made((None,) * (len(b.shape) - 1) + b.shape[-1:], b.sources, out_dtype)
        return UNKNOWN

    def _permute(self, source: Tile, dims_node: list[ast.expr], made: Made) -> Tile:
        if source.shape is None:
            return UNKNOWN
        if not dims_node:
            return made(source.shape[::-1], source.sources, source.dtype) if len(source.shape) == 2 else UNKNOWN
        order = self._dims(dims_node[0] if len(dims_node) == 1 else ast.Tuple(elts=list(dims_node)))
        if order is None or sorted(d for d in order[0] if isinstance(d, int)) != list(range(len(source.shape))) \
                or len(order[0]) != len(source.shape):
            return UNKNOWN
        return made(tuple(source.shape[d] for d in order[0]), source.sources, source.dtype)  # type: ignore[index]

    def _expand_dims(self, source: Tile, axis: ast.expr | None, made: Made) -> Tile:
        if source.shape is None or axis is None:
            return UNKNOWN
        axes = self._dims(axis)
        if axes is None or not all(isinstance(a, int) for a in axes[0]):
            return UNKNOWN
        dims = list(source.shape)
        rank = len(dims) + len(axes[0])
        for a in sorted(a + rank if a < 0 else a for a in axes[0] if isinstance(a, int)):
            if not 0 <= a <= len(dims):
                return UNKNOWN
            dims.insert(a, 1)
        return made(tuple(dims), source.sources, source.dtype)

    def _reduce(self, source: Tile, axis: ast.expr | None, kw_nodes: dict[str, ast.expr], made: Made, name: str) -> Tile:
        if source.shape is None or kw_nodes.get("return_indices") is not None:
            return UNKNOWN
        keep = kw_nodes.get("keep_dims")
        keep_dims = isinstance(keep, ast.Constant) and keep.value is True
        if keep is not None and not isinstance(keep, ast.Constant):
            return UNKNOWN
        if name in ("reduce",) and axis is None:
            return UNKNOWN
        if axis is None or (isinstance(axis, ast.Constant) and axis.value is None):
            return made((1,) * len(source.shape) if keep_dims else (), source.sources, source.dtype)
        index = self._value(axis)
        if index is None:
            return UNKNOWN
        position = index.value + len(source.shape) if index.value < 0 else index.value
        if not 0 <= position < len(source.shape):
            return UNKNOWN
        dims = list(source.shape)
        if keep_dims:
            dims[position] = 1
        else:
            del dims[position]
        dtype = "int32" if name in ("argmax", "argmin") else source.dtype
        return made(tuple(dims), source.sources, dtype)


_UNSET = object()
_MAX_INLINE = 3  # helpers calling helpers: deeper calls are unknown

_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_REDUCTIONS = frozenset({"sum", "max", "min", "argmax", "argmin", "xor_sum", "reduce"})
_SAME_SHAPE_METHODS = frozenset({"cumsum", "cumprod", "sort", "flip", "exp", "exp2", "log", "log2", "sqrt", "abs",
                                 "sigmoid"})


def _known_differ(x: Dim, y: Dim) -> bool:
    return isinstance(x, int) and isinstance(y, int) and x != y


def _join(a: dict[str, Tile], b: dict[str, Tile]) -> dict[str, Tile]:
    if a is b:
        return a
    out = dict(a)
    for name, tile in b.items():
        out[name] = _merge(out[name], tile) if name in out else UNKNOWN
    for name in a.keys() - b.keys():
        out[name] = UNKNOWN  # bound on one path only: the other path reads a global, or nothing
    return out


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_full_slice(node: ast.expr) -> bool:
    return isinstance(node, ast.Slice) and node.lower is None and node.upper is None and node.step is None


def _is_ellipsis(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is Ellipsis


def _dtype_name(node: ast.expr | None) -> str | None:
    """`tl.float16` -> 'float16' (also `tl.bfloat16`, `triton.language.int8`); None otherwise."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, (ast.Name, ast.Attribute)):
        return node.attr
    return None


def is_sixteen_bit(dtype: str | None) -> bool:
    return dtype in _SIXTEEN_BIT


def is_kernel(model: ModuleModel, function: JitFunction) -> bool:
    """A function launched as a kernel: its parameters are scalars (a jit helper's may be tiles). Autotuned,
    heuristics-decorated or launched in this module; or called by no jit function of the module while it
    reads tl.program_id or takes a pointer (`x_ptr`, `xPtr`), as kernels launched from other modules do."""
    key = ("tiles-kernel", id(function))
    if key not in model.memo:
        model.memo[key] = _is_kernel(model, function)
    return model.memo[key]  # type: ignore[no-any-return]


def _is_kernel(model: ModuleModel, function: JitFunction) -> bool:
    if function.autotune is not None or function.heuristics:
        return True
    if launches_of(model, function):
        return True
    node = function.node
    if node is None:
        return False
    pointers = any(p.name.endswith(("_ptr", "Ptr")) or p.name == "ptr" for p in function.params)
    if not pointers and not any(isinstance(n, ast.Call) and model.qualify(n.func) == f"{TL}.program_id"
                                for n in walk(node)):
        return False
    return function.name not in _called_names(model)


def _called_names(model: ModuleModel) -> frozenset[str]:
    """Names that the module's jit functions call: their helpers."""
    key = ("tiles-called", 0)
    if key not in model.memo:
        model.memo[key] = frozenset(n.func.id for f in model.functions if f.node is not None for n in walk(f.node)
                                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name))
    return model.memo[key]  # type: ignore[no-any-return]


def tile_shapes(model: ModuleModel, function: JitFunction, scenario: dict[str, Binding] | None = None) -> ShapeMap:
    """The shapes of a jit function's tiles: under `scenario` (from kernel.scenarios), or symbolically (no
    parameter bound: constexpr dimensions are their names) when it is None. Memoized per module."""
    key = ("tile-shapes", id(function), _scenario_key(scenario))
    if key not in model.memo:
        model.memo[key] = ShapeMap(model, function, scenario)
    return model.memo[key]  # type: ignore[no-any-return]


def scenario_shapes(model: ModuleModel, function: JitFunction) -> list[ShapeMap]:
    """One ShapeMap per distinct scenario of the function (kernel.scenarios; configs that bind the same
    values give one map)."""
    key = ("tile-scenarios", id(function))
    if key not in model.memo:
        maps, seen = [], set()
        for scenario in scenarios(model, function):
            values = _scenario_key(scenario)
            if values not in seen:
                seen.add(values)
                maps.append(tile_shapes(model, function, scenario))
        model.memo[key] = maps
    return model.memo[key]  # type: ignore[no-any-return]


def wrong_dot_ranks(maps: list[ShapeMap], a_node: ast.expr, b_node: ast.expr) -> list[tuple[Tile, Tile]]:
    """A tl.dot's operand tiles in each scenario where both ranks are known, when Triton refuses every one of
    them (it takes two 2-D or two 3-D operands: a vector times a matrix is refused); empty otherwise. A scalar
    `()` may be a shape the analysis could not follow: never judged."""
    ranked = [(a, b) for shapes in maps if (a := shapes.tile(a_node)).shape and (b := shapes.tile(b_node)).shape]
    return ranked if all(not len(a.shape) == len(b.shape) in (2, 3) for a, b in ranked) else []  # type: ignore[arg-type]


def block_through_scalar(shapes: ShapeMap, pointer: ast.expr, others: list[ast.expr]) -> tuple[Tile, ast.expr, Tile] | None:
    """In one scenario, a block among a load's or store's mask, `other` or value where the pointer is one scalar,
    which Triton refuses: the pointer's tile, the block and its tile; else None."""
    target = shapes.tile(pointer)
    if target.shape != () or target.kind != "tile":
        return None
    return next(((target, expr, tile) for expr in others if (tile := shapes.tile(expr)).shape), None)


def refuses_a_tile(model: ModuleModel, function: JitFunction) -> bool:
    """Triton refuses a tile operation of the function in every scenario it is compiled in: a tl.dot whose operands
    are not both 2-D or both 3-D (`wrong_dot_ranks`), or a block mask, `other` or value through one scalar pointer
    (`block_through_scalar`). The kernel does not compile (TL113 reports it), so advice on its layout is moot.
    Memoized per function."""
    key = ("refuses-a-tile", id(function))
    if key not in model.memo:
        model.memo[key] = function.node is not None and any(
            _refused(name, call, [m for m in scenario_shapes(model, function) if m.reached(stmt)])
            for stmt in walk(function.node) if isinstance(stmt, ast.stmt)
            for node in ast.iter_child_nodes(stmt) if not isinstance(node, ast.stmt)
            for call in walk(node)
            if isinstance(call, ast.Call) and (name := model.qualify(call.func)) in _REFUSED_CALLS)
    return bool(model.memo[key])


_REFUSED_CALLS = frozenset({f"{TL}.dot", f"{TL}.load", f"{TL}.store"})


def _refused(name: str | None, call: ast.Call, maps: list[ShapeMap]) -> bool:
    if name == f"{TL}.dot":
        a, b = load_argument(call, 0, "input"), load_argument(call, 1, "other")
        return a is not None and b is not None and bool(wrong_dot_ranks(maps, a, b))
    if (pointer := load_argument(call, 0, "pointer")) is None:
        return False
    roles = ("mask", "other") if name == f"{TL}.load" else ("value", "mask")
    others = [e for i, role in enumerate(roles, 1) if (e := load_argument(call, i, role)) is not None]
    return bool(maps) and all(block_through_scalar(shapes, pointer, others) is not None for shapes in maps)


def _scenario_key(scenario: dict[str, Binding] | None) -> tuple[Any, ...] | None:
    if scenario is None:
        return None
    return tuple(sorted((name, repr(b.value)) for name, b in scenario.items()))


def shape_sources(*tiles: Tile) -> str:
    """'BLOCK_K=32 from config #2, ...' for the bindings behind the tiles' known dimensions."""
    seen: dict[str, Binding] = {}
    for tile in tiles:
        seen.update(tile.sources)
    return ", ".join(f"{k}={b.value} from {b.origin}" for k, b in seen.items())
