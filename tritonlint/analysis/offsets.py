"""Int32 pointer offsets: products of a program id (or an index loaded from memory) and a runtime integer
argument that reach an address without being promoted to int64.

Triton computes `pid * stride` in int32 when both are int32: a program id always is, and so is an integer
argument whose value fits in 32 bits (Triton types a launch argument i64 only when its value does not).
The product wraps past 2^31 - 1 before it is added to the pointer. A value is promoted by `.to(tl.int64)`,
`tl.cast(x, tl.int64)`, or arithmetic with something already int64 (a parameter annotated `tl.int64`, an
`arange` cast to int64); a promotion after the product (`(pid * stride).to(tl.int64)`) comes too late.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass, field

from tritonlint.analysis.flow import Definition, FunctionFlow, in_source_order
from tritonlint.analysis.indexing import arange_end
from tritonlint.analysis.kernel import mentions
from tritonlint.analysis.model import PROGRAM_ID, JitFunction, ModuleModel
from tritonlint.analysis.triton_names import TL
from tritonlint.walk import walk

LOAD = f"{TL}.load"
# Calls whose first argument is an address.
ADDRESS_CALLS = frozenset(f"{TL}.{n}" for n in (
    "load", "store", "atomic_add", "atomic_cas", "atomic_xchg", "atomic_max", "atomic_min", "atomic_and",
    "atomic_or", "atomic_xor"))
# Calls that hand their arguments' values through (the result is as wide as the widest argument).
PASS_THROUGH = frozenset(f"{TL}.{n}" for n in ("multiple_of", "max_contiguous", "minimum", "maximum", "where"))
BOUNDS = frozenset({f"{TL}.assume", f"{TL}.static_assert"})
WIDE = ("int64", "uint64", "i64")


@dataclass
class Product:
    """A product of offsets in a kernel, with the runtime argument that multiplies it."""
    node: ast.BinOp
    sources: frozenset[int]  # ids of the source calls
    multiplier: str  # the runtime argument's text
    rescaled: bool = False  # promoted to int64, then multiplied again: the int32 product counts rows, not elements
    bare: bool = False  # the source's own value times the multiplier (`pid * stride`), not a sum or a scaled index
    # Rows of features that one block covers, as (width parameter, ends of those blocks): the multiplier's
    # own first, then other parameters' (a launch may pass one value as both the row stride and the width).
    feature_rows: tuple[tuple[str, tuple[ast.expr, ...]], ...] = ()


@dataclass
class Overflows:
    """A function's unpromoted products, grouped by source call (program id or index load)."""

    sources: dict[int, ast.Call] = field(default_factory=dict)
    products: dict[int, list[Product]] = field(default_factory=dict)


def _is_wide_type(expr: ast.expr | None) -> bool:
    return expr is not None and any(w in ast.unparse(expr) for w in WIDE)


class OffsetWidths:
    def __init__(self, model: ModuleModel, flow: FunctionFlow, function: JitFunction) -> None:
        self.model = model
        self.flow = flow
        self.function = function
        self.params = {p.name: p for p in function.params}
        self._sources: dict[int, frozenset[int]] = {}
        self._calls: dict[int, ast.Call] = {}
        self._wide: dict[int, bool] = {}
        self._feature_rows: dict[str, tuple[ast.expr, ...]] = {}

    # ---- int64-ness ----------------------------------------------------------------------------------
    def wide(self, expr: ast.expr | None, depth: int = 0) -> bool:
        """The expression is int64 (or wider) on every path."""
        if expr is None or depth > 30:
            return False
        if isinstance(expr, ast.Call):
            name = self.model.qualify(expr.func)
            if name is None and isinstance(expr.func, ast.Attribute) and expr.func.attr == "to":
                return _is_wide_type(expr.args[0] if expr.args else None) or \
                    any(k.arg == "dtype" and _is_wide_type(k.value) for k in expr.keywords)
            if name == f"{TL}.cast":
                return _is_wide_type(expr.args[1] if len(expr.args) > 1 else None) or \
                    any(k.arg == "dtype" and _is_wide_type(k.value) for k in expr.keywords)
            if name in (f"{TL}.full", f"{TL}.zeros"):
                return any(_is_wide_type(a) for a in [*expr.args[1:], *(k.value for k in expr.keywords)])
            if name in PASS_THROUGH:
                return any(self.wide(a, depth + 1) for a in expr.args)
            return False
        if isinstance(expr, ast.BinOp):
            return self.wide(expr.left, depth + 1) or self.wide(expr.right, depth + 1)
        if isinstance(expr, ast.UnaryOp):
            return self.wide(expr.operand, depth + 1)
        if isinstance(expr, ast.Subscript):
            return self.wide(expr.value, depth + 1)
        if isinstance(expr, ast.Name):
            definitions = self.flow.reaching(expr)
            return bool(definitions) and all(self._wide_definition(d, depth) for d in in_source_order(definitions))
        return False

    def _wide_definition(self, definition: Definition, depth: int) -> bool:
        key = id(definition)
        if key in self._wide:
            return self._wide[key]
        self._wide[key] = True  # carried around a loop: the other definitions decide
        if definition.kind == "param":
            param = self.params.get(definition.name)
            result = param is not None and param.annotation is not None and any(w in param.annotation for w in WIDE)
        elif definition.kind == "assign":
            result = self.wide(definition.value, depth + 1)
        elif definition.kind == "augassign":
            before = self.flow.defined_before(definition.stmt, definition.name)  # type: ignore[arg-type]
            result = self.wide(definition.value, depth + 1) or \
                (bool(before) and all(self._wide_definition(d, depth + 1) for d in in_source_order(before)))
        else:
            result = False
        self._wide[key] = result
        return result

    # ---- where a value comes from --------------------------------------------------------------------
    def sources(self, expr: ast.expr | None, depth: int = 0) -> frozenset[int]:
        """The program ids and index loads that reach `expr` without an int64 promotion on the way."""
        if expr is None or depth > 30 or self.wide(expr):
            return frozenset()
        if isinstance(expr, ast.Call):
            name = self.model.qualify(expr.func)
            if name == PROGRAM_ID or name == LOAD:
                self._calls[id(expr)] = expr
                return frozenset({id(expr)})
            if name is None and isinstance(expr.func, ast.Attribute) and expr.func.attr == "to":
                return self.sources(expr.func.value, depth + 1)
            if name in PASS_THROUGH or name == f"{TL}.cast":
                return frozenset().union(*(self.sources(a, depth + 1) for a in expr.args[:1 if name == f"{TL}.cast" else None]))
            return frozenset()
        if isinstance(expr, ast.BinOp):
            if isinstance(expr.op, ast.Mod):
                return frozenset()  # `i % n` stays below n: the product spans one block of the tensor, not all of it
            return self.sources(expr.left, depth + 1) | self.sources(expr.right, depth + 1)
        if isinstance(expr, ast.UnaryOp):
            return self.sources(expr.operand, depth + 1)
        if isinstance(expr, ast.IfExp):
            return self.sources(expr.body, depth + 1) | self.sources(expr.orelse, depth + 1)
        if isinstance(expr, ast.Subscript):
            return self.sources(expr.value, depth + 1)
        if isinstance(expr, ast.Name):
            return frozenset().union(*(self._definition_sources(d, depth) for d in in_source_order(self.flow.reaching(expr))))
        return frozenset()

    def _definition_sources(self, definition: Definition, depth: int) -> frozenset[int]:
        key = id(definition)
        if key in self._sources:
            return self._sources[key]
        self._sources[key] = frozenset()
        if definition.kind == "assign":
            result = self.sources(definition.value, depth + 1)
        elif definition.kind == "augassign":
            before = self.flow.defined_before(definition.stmt, definition.name)  # type: ignore[arg-type]
            result = self.sources(definition.value, depth + 1).union(
                *(self._definition_sources(d, depth + 1) for d in in_source_order(before)))
        elif definition.kind == "loop" and isinstance(definition.stmt, ast.For) and isinstance(definition.stmt.iter, ast.Call):
            result = frozenset().union(*(self.sources(a, depth + 1) for a in definition.stmt.iter.args[:1]))
        else:
            result = frozenset()
        self._sources[key] = result
        return result

    def runtime_integer(self, expr: ast.expr, depth: int = 0) -> str | None:
        """The runtime (non-constexpr) integer argument that `expr` is, or is a product of: its name."""
        if depth > 8 or self.wide(expr):
            return None
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
            return self.runtime_integer(expr.left, depth + 1) or self.runtime_integer(expr.right, depth + 1)
        if not isinstance(expr, ast.Name):
            return None
        definitions = self.flow.reaching(expr)
        if not definitions:
            return None
        if all(d.kind == "param" for d in definitions):
            param = self.params.get(expr.id)
            if param is None or param.is_constexpr or param.default_value is not None and not isinstance(param.default_value, int):
                return None
            return expr.id
        if len(definitions) == 1:
            (definition,) = definitions
            if definition.kind == "assign" and definition.value is not None and not self.sources(definition.value):
                found = self.runtime_integer(definition.value, depth + 1)
                return expr.id if found else None
        return None

    # ---- the products --------------------------------------------------------------------------------
    def overflows(self) -> Overflows:
        result = Overflows()
        self._bound_names = self._bounded_names()
        seen: set[int] = set()
        for expr in self._address_expressions():
            for node in walk(expr):
                if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Mult) or id(node) in seen:
                    continue
                seen.add(id(node))
                product = self._product(node)
                if product is None:
                    continue
                for source in product.sources:
                    result.sources[source] = self._calls[source]
                    result.products.setdefault(source, []).append(product)
        # A product inside another flagged product is one computation: keep the outermost.
        for source, products in result.products.items():
            inner = {id(n) for p in products for n in walk(p.node) if n is not p.node}
            result.products[source] = [p for p in products if id(p.node) not in inner]
            for product in result.products[source]:
                product.rescaled = self.promoted_then_scaled(product.node)
        return result

    # ---- a product that counts rows ------------------------------------------------------------------
    def promoted_then_scaled(self, node: ast.expr) -> bool:
        """The product, alone or as a term of a sum, is promoted to int64 and the promoted value is then
        multiplied by a runtime value: `(i_b * T).to(tl.int64) * stride`, or `bos = (i_b * T).to(tl.int64)`
        used as `(bos * H + i_h) * K`. The int32 product is a row (token, sequence) count, which stays far
        below 2^31 where the element offset does not; the element offset is formed in int64."""
        promotion = self._enclosing_promotion(node)
        return promotion is not None and self._scaled(promotion, 0)

    def _enclosing_promotion(self, node: ast.expr) -> ast.Call | None:
        parents = self.flow.parents
        current: ast.AST = node
        while True:
            parent = parents.get(id(current))
            if isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Add, ast.Sub)):
                current = parent
                continue
            if isinstance(parent, ast.Attribute) and parent.value is current and parent.attr == "to":
                call = parents.get(id(parent))
                return call if isinstance(call, ast.Call) and call.func is parent and self.wide(call) else None
            if isinstance(parent, ast.Call) and parent.args and parent.args[0] is current and \
                    self.model.qualify(parent.func) == f"{TL}.cast" and self.wide(parent):
                return parent
            return None

    def _scaled(self, expr: ast.AST, depth: int) -> bool:
        """Every use of `expr`'s value (through sums and local names) is multiplied by a runtime value."""
        if depth > 4:
            return False
        parents = self.flow.parents
        current, parent = expr, parents.get(id(expr))
        while isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Add, ast.Sub)):
            current, parent = parent, parents.get(id(parent))
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Mult):
            other = parent.right if parent.left is current else parent.left
            return not isinstance(other, ast.Constant)
        target: ast.expr | None = None
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
            target = parent.targets[0]
        elif isinstance(parent, ast.Tuple) and isinstance(assign := parents.get(id(parent)), ast.Assign) and \
                len(assign.targets) == 1 and isinstance(assign.targets[0], ast.Tuple) and \
                len(assign.targets[0].elts) == len(parent.elts):
            target = assign.targets[0].elts[next(i for i, e in enumerate(parent.elts) if e is current)]
            parent = assign
        if not isinstance(target, ast.Name) or not isinstance(parent, ast.Assign):
            return False
        definition = self.flow.definition_at(parent, target.id)
        uses = self.flow.uses_of(definition) if definition is not None else []
        return bool(uses) and all(self._scaled(use, depth + 1) for use in uses)

    def _product(self, node: ast.BinOp) -> Product | None:
        if any(isinstance(n, ast.Name) and n.id in self._bound_names for n in walk(node)):
            return None  # the kernel states a bound on a value of the product
        for derived, other in ((node.left, node.right), (node.right, node.left)):
            sources = self.sources(derived)
            if not sources or self._quotient_scaled_back(derived, other):
                continue
            multiplier = self.runtime_integer(other)
            if multiplier is not None:
                rows = self._feature_rows_of(multiplier) if isinstance(other, ast.Name) and other.id == multiplier else ()
                return Product(node, sources, multiplier, bare=self._bare(derived), feature_rows=rows)
        return None

    def _quotient_scaled_back(self, derived: ast.expr, multiplier: ast.expr) -> bool:
        """`(x // d) * m` with m's factors among d's (`n = offs // (C * HW)` times `C`, also one factor at a time:
        `row * M * m0` with `row = offs // (m0 * M)`): at most x, an index the kernel already forms, whose own
        products are judged where they are made."""
        operands = self._operands(derived, 0)
        for quotient_at, operand in enumerate(operands):
            quotient = self.flow.single_value(operand)
            if isinstance(quotient, ast.BinOp) and isinstance(quotient.op, ast.FloorDiv):
                scale = self._factors(multiplier, 0) + [
                    factor for at, other in enumerate(operands) if at != quotient_at for factor in self._factors(other, 0)]
                if not Counter(scale) - Counter(self._factors(quotient.right, 0)):
                    return True
        return False

    def _operands(self, expr: ast.expr, depth: int) -> list[ast.expr]:
        """A product's operands, names read through their single assignment; the expression alone otherwise."""
        value = self.flow.single_value(expr) if depth < 8 else expr
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
            return self._operands(value.left, depth + 1) + self._operands(value.right, depth + 1)
        return [expr]

    def _factors(self, expr: ast.expr, depth: int) -> list[str]:
        """The texts of a product's factors, names read through their single assignment."""
        value = self.flow.single_value(expr) if depth < 8 else expr
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
            return self._factors(value.left, depth + 1) + self._factors(value.right, depth + 1)
        return [ast.unparse(value)]

    # ---- a row of features that one block covers -----------------------------------------------------
    def _feature_rows_of(self, multiplier: str) -> tuple[tuple[str, tuple[ast.expr, ...]], ...]:
        widths = [multiplier, *(p.name for p in self.function.params if not p.is_constexpr and p.name != multiplier)]
        return tuple((width, ends) for width in widths if (ends := self.feature_row_blocks(width)))

    def feature_row_blocks(self, width: str) -> tuple[ast.expr, ...]:
        """The ends of the blocks with which the kernel covers a row of `width` elements at once, where that
        row is one token's features: `width` bounds lanes that are only a `tl.arange(0, END)` (`mask = cols
        < n_cols` with `cols = tl.arange(0, BLOCK)`), the same lanes alone address a per-feature vector (a
        norm's `tl.load(weight_ptr + cols)`), and no loop runs over anything computed from `width`. The row
        then has at most END elements. Empty where any of that fails."""
        if width not in self._feature_rows:
            self._feature_rows[width] = self._find_feature_row_blocks(width)
        return self._feature_rows[width]

    def _find_feature_row_blocks(self, width: str) -> tuple[ast.expr, ...]:
        nodes = list(walk(self.flow.function))
        derived = self._derived_from(width, nodes)
        if any(isinstance(n, ast.For) and mentions(n.iter, derived) or isinstance(n, ast.While) and mentions(n.test, derived)
               for n in nodes):
            return ()  # a loop over the row's blocks: any width
        ends: list[ast.expr] = []
        for node in nodes:
            if isinstance(node, ast.Compare) and len(node.ops) == 1:
                lanes = node.left if isinstance(node.ops[0], (ast.Lt, ast.LtE)) else \
                    node.comparators[0] if isinstance(node.ops[0], (ast.Gt, ast.GtE)) else None
                bound = node.comparators[0] if lanes is node.left else node.left
                if lanes is not None and isinstance(bound, ast.Name) and bound.id == width:
                    found = self._lane_ends(lanes)
                    if not found:
                        return ()  # lanes offset by something else (a column block's program id): any width
                    ends += found
        compared = {ast.dump(end) for end in ends}
        vector = any(isinstance(node, ast.Call) and self.model.qualify(node.func) == LOAD and node.args
                     and compared & {ast.dump(end) for end in self._feature_vector_ends(node.args[0])}
                     for node in nodes)
        return tuple(ends) if vector else ()

    @staticmethod
    def _derived_from(name: str, nodes: list[ast.AST]) -> set[str]:
        """`name` and every local name assigned from it, directly or through other such names."""
        derived = {name}
        assignments = [n for n in nodes if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))]
        changed = True
        while changed:
            changed = False
            for statement in assignments:
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                if statement.value is None or not mentions(statement.value, derived):
                    continue
                for target in (n for t in targets for n in walk(t) if isinstance(n, ast.Name)):
                    if target.id not in derived:
                        derived.add(target.id)
                        changed = True
        return derived

    def _lane_ends(self, expr: ast.expr, depth: int = 0) -> list[ast.expr]:
        """The end of the `tl.arange(0, END)` that `expr` only is (through `[:, None]` and local names)."""
        if depth > 8:
            return []
        end = arange_end(self.model, expr)
        if end is not None:
            return [end]
        if isinstance(expr, ast.Subscript):
            return self._lane_ends(expr.value, depth + 1)
        if isinstance(expr, ast.Name):
            definitions = in_source_order(self.flow.reaching(expr))
            if definitions and all(d.kind == "assign" and d.value is not None for d in definitions):
                ends = [self._lane_ends(d.value, depth + 1) for d in definitions]  # type: ignore[arg-type]
                return [end for found in ends for end in found] if all(ends) else []
        return []

    def _feature_vector_ends(self, expr: ast.expr) -> list[ast.expr]:
        """Where `expr` is a pointer parameter plus lanes that are only a `tl.arange(0, END)` (one vector for
        every row), the ENDs."""
        if not (isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add)):
            return []
        for pointer, lanes in ((expr.left, expr.right), (expr.right, expr.left)):
            param = self.params.get(pointer.id) if isinstance(pointer, ast.Name) else None
            if param is not None and not param.is_constexpr:
                return self._lane_ends(lanes)
        return []

    def _bare(self, expr: ast.expr, depth: int = 0) -> bool:
        """`expr` is a source call's value itself, or a quotient or remainder of it (`pid // programs_per_row`, at
        most the value): the call, or a name every definition of which binds it."""
        if isinstance(expr, ast.Call):
            return self.model.qualify(expr.func) in (PROGRAM_ID, LOAD)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.FloorDiv, ast.Mod)) and depth <= 8:
            return self._bare(expr.left, depth + 1)
        if not isinstance(expr, ast.Name) or depth > 8:
            return False
        definitions = self.flow.reaching(expr)
        return bool(definitions) and all(
            d.kind == "assign" and d.value is not None and self._bare(d.value, depth + 1) for d in definitions)

    def _address_expressions(self) -> list[ast.expr]:
        """Every expression whose value flows into an address: the address arguments, then (backwards
        through local names) what they are computed from."""
        found: list[ast.expr] = []
        pending: list[ast.expr] = []
        for node in walk(self.flow.function):
            if isinstance(node, ast.Call) and self.model.qualify(node.func) in ADDRESS_CALLS:
                pointer = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "pointer"), None)
                if pointer is not None:
                    pending.append(pointer)
        visited: set[int] = set()
        while pending:
            expr = pending.pop()
            found.append(expr)
            for name in (n for n in walk(expr) if isinstance(n, ast.Name)):
                for definition in in_source_order(self.flow.reaching(name)):
                    if id(definition) in visited or definition.value is None:
                        continue
                    visited.add(id(definition))
                    pending.append(definition.value)
        return found

    def _bounded_names(self) -> set[str]:
        """Names that a `tl.assume` / `tl.static_assert` bounds from above (`x < C`, `C > x`, chains of
        `and`): the kernel states what it expects. `tl.assume(x >= 0)` bounds nothing that matters here."""
        names: set[str] = set()
        for call in walk(self.flow.function):
            if isinstance(call, ast.Call) and self.model.qualify(call.func) in BOUNDS and call.args:
                tests = call.args[0].values if isinstance(call.args[0], ast.BoolOp) else [call.args[0]]
                for test in tests:
                    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
                        continue
                    small = test.left if isinstance(test.ops[0], (ast.Lt, ast.LtE)) else \
                        test.comparators[0] if isinstance(test.ops[0], (ast.Gt, ast.GtE)) else None
                    if small is not None:
                        names |= {n.id for n in walk(small) if isinstance(n, ast.Name)}
        return names
