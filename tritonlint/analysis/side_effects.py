"""What a kernel does to the memory behind its pointer arguments: the non-idempotent atomics it applies and
the in-place updates it makes (a store whose value depends on a load through the same argument), followed
through simple local aliases (flow.py) and through jit helpers, this module's and those imported from the
project's other modules.

TL101 asks this of autotuned kernels: Triton's autotuner runs the kernel many times per config on the
caller's own buffers while it benchmarks, so such effects pile up unless the argument is listed in
`reset_to_zero` / `restore_value`.
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass, field

from tritonlint.analysis.consteval import Binding
from tritonlint.analysis.flow import Definition, FunctionFlow, bind_call, flow_of
from tritonlint.analysis.indexing import range_arguments
from tritonlint.analysis.kernel import scenarios
from tritonlint.analysis.model import JitFunction, ModuleModel
from tritonlint.analysis.project import jit_function_in
from tritonlint.analysis.reductions import load_argument
from tritonlint.analysis.scope import LocalScope
from tritonlint.analysis.triton_names import (
    IDEMPOTENT_ATOMICS,
    LOADS,
    NON_IDEMPOTENT_ATOMICS,
    POINTER_PASSTHROUGH,
    STORES,
    TL,
)
from tritonlint.walk import walk

_DEPTH = 3  # jit helpers followed this deep
# Atomics that write a value rather than combine with one: into a lock they are released by the kernel.
_EXCHANGES = frozenset({f"{TL}.atomic_xchg", f"{TL}.atomic_cas"})
_NUMBER_TYPES = frozenset({"int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                           "bfloat16", "float32", "float64", "constexpr"})
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}
_TYPE_ATTRIBUTES = frozenset({"dtype", "shape", "type", "element_ty"})
_COUNTS = frozenset({"range", "static_range", "cdiv", "arange", "min", "max", "minimum", "maximum"})
_MAKE_DESCRIPTOR = frozenset({f"{TL}.make_tensor_descriptor", f"{TL}._experimental_make_tensor_descriptor"})


@dataclass
class Effect:
    """A write through a pointer argument: an atomic or an in-place store."""
    param: str  # the pointer argument of the analysed function
    kind: str  # "atomic" | "in-place"
    op: str  # "atomic_add", "store", ...
    node: ast.Call  # where it happens (in the kernel, or the call of the helper that does it)
    via: str | None = None  # the helper it happens in, if any


@dataclass
class Summary:
    """A jit function's effects on its own parameters, and which parameters its return value was loaded from."""
    effects: list[Effect] = field(default_factory=list)
    returns_loaded: set[str] = field(default_factory=set)
    # per element of a tuple it returns (`return W, M`), the parameters that element was loaded from
    returns_loaded_at: dict[int, set[str]] = field(default_factory=dict)
    # the parameters whose values its return value is computed from (data passed in: `W -= lr * dW; return W`),
    # as a whole (None) and per element of a returned tuple
    returns_data: dict[int | None, set[str]] = field(default_factory=dict)
    writes: set[str] = field(default_factory=set)  # parameters it stores into or updates atomically
    resets: set[str] = field(default_factory=set)  # parameters it writes a literal 0 into (self-resetting counters)


def _pointer_arg(call: ast.Call, keyword: str = "pointer") -> ast.expr | None:
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg in (keyword, "ptr", "base")), None)


def _value_arg(call: ast.Call, position: int = 1) -> ast.expr | None:
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg in ("value", "val")), None)


def _counts_from_zero(iterable: ast.expr, model: ModuleModel) -> bool:
    """`range(n)`, `range(0, n)` or `range(0, n, step)` (also `tl.range`): a loop whose first pass has 0."""
    args = range_arguments(model, iterable)
    if not args or not isinstance(iterable, ast.Call) or iterable.keywords:
        return False
    return len(args) == 1 or _is_zero(args[0], model)


def _is_zero(node: ast.expr | None, model: ModuleModel) -> bool:
    if isinstance(node, ast.Constant):
        return node.value == 0 and not isinstance(node.value, str)
    if isinstance(node, ast.Call) and model.qualify(node.func) in (f"{TL}.zeros", f"{TL}.zeros_like"):
        return True
    return isinstance(node, ast.Call) and model.qualify(node.func) == f"{TL}.full" and len(node.args) > 1 \
        and _is_zero(node.args[1], model)


class KernelEffects:
    """The effects of one jit function on its parameters."""

    def __init__(self, model: ModuleModel, function: ast.FunctionDef | ast.AsyncFunctionDef, depth: int = _DEPTH) -> None:
        self.model = model
        self.function = function
        self.flow: FunctionFlow = flow_of(function)
        self.params = {a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]}
        self.depth = depth
        self._loaded: dict[int, frozenset[tuple[str, ast.Call]]] = {}
        self._by_definition: dict[int, frozenset[tuple[str, ast.Call]]] = {}
        self.summary = Summary()
        self.scalars = self._scalars(function)
        self.constexprs = {a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
                           if a.annotation is not None and (model.qualify(a.annotation) or "").endswith(".constexpr")}
        self.first_write: dict[str, tuple[int, int]] = {}
        self._find_writes()
        self._scan()

    def _scalars(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
        """Parameters used as numbers, never as pointers: annotated int/float, multiplied, divided, compared,
        or given to range/cdiv (`O_ptr + base + NOPE_DIM + offs` adds one to a pointer all the same)."""
        found = set()
        for arg in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]:
            annotation = self.model.qualify(arg.annotation) if arg.annotation is not None else None
            if annotation in ("int", "float", "bool") or (annotation or "").rpartition(".")[2] in _NUMBER_TYPES:
                found.add(arg.arg)
        for node in walk(function):
            operands: list[ast.AST] = []
            if isinstance(node, ast.BinOp) and not isinstance(node.op, (ast.Add, ast.Sub)):
                operands = [node.left, node.right]
            elif isinstance(node, ast.Compare) and not any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
                operands = [node.left, *node.comparators]
            elif isinstance(node, ast.Call) and (self.model.qualify(node.func) or "").rpartition(".")[2] in _COUNTS:
                operands = list(node.args)
            found.update(o.id for o in operands if isinstance(o, ast.Name) and o.id in self.params)
        return found

    def _writes_of(self, call: ast.Call) -> frozenset[str]:
        """The parameters a call stores into or updates atomically (directly or in a helper)."""
        name = self.model.qualify(call.func)
        if name in NON_IDEMPOTENT_ATOMICS or name in IDEMPOTENT_ATOMICS or name in STORES:
            return self.roots(_pointer_arg(call))
        if isinstance(call.func, ast.Attribute) and name is None and call.func.attr in ("store", "scatter", "atomic_add"):
            return self.roots(call.func.value)
        helper = self._helper(call)
        if helper is None:
            return frozenset()
        return frozenset().union(*(self.roots(arg) for param, arg in helper.bind(call) if param in helper.summary.writes))

    def _find_writes(self) -> None:
        for node in walk(self.function):
            if isinstance(node, ast.Call):
                for param in self._writes_of(node):
                    position = (node.end_lineno or node.lineno, node.end_col_offset or 0)  # its arguments come first
                    self.first_write[param] = min(position, self.first_write.get(param, position))
        self.summary.writes = set(self.first_write)

    def _callers_data(self, params: frozenset[str], node: ast.AST) -> frozenset[str]:
        """The parameters among `params` that a load at `node` reads before the kernel wrote into them: a
        load after the kernel's own store reads back what this run wrote (a scratch buffer), not the
        caller's data."""
        position = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
        return frozenset(p for p in params if p in self.params and p not in self.scalars
                         and position < self.first_write.get(p, (1 << 30, 0)))

    # ---- pointers ----------------------------------------------------------------------------------------
    def roots(self, expr: ast.AST | None, depth: int = 0) -> frozenset[str]:
        """The parameters a pointer expression is addressed from: `c_ptr + offs`, through local aliases,
        `tl.make_block_ptr(base=...)`, `tl.advance`, descriptors made in the kernel and `tl.where`."""
        if expr is None or depth > 16:
            return frozenset()
        if isinstance(expr, ast.Name):
            if isinstance(expr.ctx, ast.Load):
                found: set[str] = set()
                for definition in self.flow.reaching(expr):
                    found |= self._definition_roots(definition, depth)
                return frozenset(found)
            return frozenset()
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            return self.roots(expr.left, depth + 1) | (
                self.roots(expr.right, depth + 1) if isinstance(expr.op, ast.Add) else frozenset())
        if isinstance(expr, ast.Subscript):  # ptrs[:, None]
            return self.roots(expr.value, depth + 1)
        if isinstance(expr, ast.Call):
            name = self.model.qualify(expr.func)
            if name in POINTER_PASSTHROUGH or name in _MAKE_DESCRIPTOR:
                return self.roots(_pointer_arg(expr), depth + 1)
            if name == f"{TL}.where" and len(expr.args) == 3:
                return self.roots(expr.args[1], depth + 1) | self.roots(expr.args[2], depth + 1)
            if isinstance(expr.func, ast.Attribute) and expr.func.attr in ("to", "cast") and name is None:
                return self.roots(expr.func.value, depth + 1)  # ptr.to(tl.pointer_type(...))
        if isinstance(expr, ast.IfExp):
            return self.roots(expr.body, depth + 1) | self.roots(expr.orelse, depth + 1)
        return frozenset()

    def _definition_roots(self, definition: Definition, depth: int) -> frozenset[str]:
        if depth > 16:
            return frozenset()
        if definition.kind == "param":
            return frozenset({definition.name})
        if definition.kind == "assign":
            return self.roots(definition.value, depth + 1)
        if definition.kind == "augassign" and isinstance(definition.stmt, ast.AugAssign) \
                and isinstance(definition.stmt.op, (ast.Add, ast.Sub)):  # ptr += BLOCK * stride
            before = self.flow.defined_before(definition.stmt, definition.name)
            return frozenset().union(*(self._definition_roots(d, depth + 1) for d in before if d is not definition))
        return frozenset()

    # ---- values ------------------------------------------------------------------------------------------
    def loaded_from(self, expr: ast.AST | None, depth: int = 0) -> frozenset[tuple[str, ast.Call]]:
        """(parameter, load) for each load of a parameter's memory that a value comes from, through
        arithmetic, locals and helpers (the helper's call stands for its loads)."""
        if expr is None or depth > 24:
            return frozenset()
        key = id(expr)
        if key in self._loaded:
            return self._loaded[key]
        self._loaded[key] = frozenset()  # a cycle through a loop-carried value adds nothing new
        found: set[tuple[str, ast.Call]] = set()
        nodes = walk(expr)
        typed = {id(n.value) for n in nodes if isinstance(n, ast.Attribute) and n.attr in _TYPE_ATTRIBUTES}
        for node in nodes:
            if id(node) in typed:
                continue  # `x.dtype`, `x.shape`: no data of x
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                for definition in self.flow.reaching(node):
                    found |= self._loaded_by(definition, depth + 1)
            elif isinstance(node, ast.Call):
                name = self.model.qualify(node.func)
                if name in LOADS:
                    params = self._callers_data(self.roots(_pointer_arg(node)), node)
                elif isinstance(node.func, ast.Attribute) and node.func.attr in ("load", "gather") and name is None:
                    params = self._callers_data(self.roots(node.func.value), node)  # desc.load([...])
                else:
                    helper = self._helper(node)
                    params = frozenset().union(*(
                        self._callers_data(self.roots(arg), node) for param, arg in helper.bind(node)
                        if param in helper.summary.returns_loaded)) if helper is not None else frozenset()
                    if helper is not None:  # values loaded here that the helper computes its result from
                        passed = helper.summary.returns_data.get(None, set())
                        for param, arg in helper.bind(node):
                            if param in passed:
                                found |= self.loaded_from(arg, depth + 1)
                found.update((param, node) for param in params)
        self._loaded[key] = frozenset(found)
        return self._loaded[key]

    def _loaded_by(self, definition: Definition, depth: int) -> frozenset[tuple[str, ast.Call]]:
        """The loads a definition's value comes from; an augmented one also carries what the name held before,
        through a chain of them (`m = tl.load(p)`, `m *= beta`, `m += g`)."""
        key = id(definition)
        if key in self._by_definition:
            return self._by_definition[key]
        self._by_definition[key] = frozenset()  # a loop-carried chain adds nothing new
        found: set[tuple[str, ast.Call]] = set()
        if definition.kind in ("assign", "augassign") and definition.value is not None:
            found |= self.loaded_from(definition.value, depth)
        if definition.kind == "opaque":
            found |= self._unpacked_from_helper(definition)
        if definition.kind == "augassign":
            for other in self.flow.defined_before(definition.stmt, definition.name):  # type: ignore[arg-type]
                if other is not definition:
                    found |= self._loaded_by(other, depth + 1)
        self._by_definition[key] = frozenset(found)
        return self._by_definition[key]

    def _unpacked_from_helper(self, definition: Definition) -> frozenset[tuple[str, ast.Call]]:
        """`W, M = helper(...)`: the loads element i of the helper's returned tuple comes from, through the
        arguments bound to the parameters it was loaded from."""
        stmt = definition.stmt
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple)
                and isinstance(stmt.value, ast.Call)):
            return frozenset()
        names = [_name(element) for element in stmt.targets[0].elts]
        helper = self._helper(stmt.value)
        if helper is None or definition.name not in names:
            return frozenset()
        index = names.index(definition.name)
        loaded = helper.summary.returns_loaded_at.get(index, set())
        passed = helper.summary.returns_data.get(index, set())
        found: set[tuple[str, ast.Call]] = set()
        for name, arg in helper.bind(stmt.value):
            if name in loaded:  # the helper loads it from a pointer passed here
                found |= {(param, stmt.value) for param in self._callers_data(self.roots(arg), stmt.value)}
            if name in passed:  # the helper computes it from data loaded here
                found |= self.loaded_from(arg)
        return frozenset(found)

    def _data_params(self, expr: ast.expr) -> set[str]:
        """The parameters whose values `expr` is computed from, through locals (not through memory: a load's
        pointer is no data of its value)."""
        found: set[str] = set()
        pending, seen = [expr], set()
        while pending:
            current = pending.pop()
            addresses = {id(n) for call in walk(current) if isinstance(call, ast.Call)
                         and self.model.qualify(call.func) in LOADS for n in walk(call)}
            for node in walk(current):
                if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)) or id(node) in addresses:
                    continue
                definitions = list(self.flow.reaching(node))
                while definitions:
                    definition = definitions.pop()
                    if id(definition) in seen:
                        continue
                    seen.add(id(definition))
                    if definition.kind == "param":
                        found.add(definition.name)
                    elif definition.kind in ("assign", "augassign") and definition.value is not None:
                        pending.append(definition.value)
                        if definition.kind == "augassign":  # `W -= lr * dW` also carries what W held
                            definitions += self.flow.defined_before(definition.stmt, definition.name)  # type: ignore[arg-type]
        return found

    # ---- the scan ----------------------------------------------------------------------------------------
    def _helper(self, call: ast.Call) -> HelperCall | None:
        """The jit helper a call runs: of this module, or imported from another module of the project (whose
        summary is computed on that module's model, its own imports not followed further)."""
        if self.depth <= 0:
            return None
        if isinstance(call.func, ast.Name):
            helper = self.model.local_function(call.func.id)
            if helper is not None and helper.node is not None:
                return HelperCall(helper.node, effects_of(self.model, helper.node, self.depth - 1)) \
                    if helper.node is not self.function else None
        name = self.model.qualify(call.func)
        if name is None or name.startswith(f"{self.model.module}.") or name.startswith(("triton.", "torch.")):
            return None
        found = jit_function_in(self.model.imported, name)
        if found is None:
            return None
        model, function = found
        return HelperCall(function.node, effects_of(model, function.node, self.depth - 1))  # type: ignore[arg-type]

    def _insertion(self, cas: ast.Call, value: ast.expr | None) -> bool:
        """`old = tl.atomic_cas(slot, EMPTY, key)` and a test `old == key`: an insertion (a hash table's linear
        probing) that takes its own earlier write as success, so running it again leaves the memory, and the
        kernel's path, as the first run did. A one-shot flag (`atomic_cas(flag, 0, 1)`, then `old == 0`) is not."""
        new = _name(value) if value is not None else None
        assigned = next((s.targets[0].id for s in walk(self.function) if isinstance(s, ast.Assign) and s.value is cas
                         and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)), None)
        return new is not None and assigned is not None and any(
            isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], ast.Eq)
            and {_name(n.left), _name(n.comparators[0])} == {assigned, new} for n in walk(self.function))

    def _scan(self) -> None:
        summary = self.summary
        plain_stores: list[ast.Call] = []
        overwritten: list[tuple[str, ast.Call]] = []  # stores into an argument of a value not read from it there
        stored_values: list[ast.expr | None] = []
        for node in walk(self.function):
            if isinstance(node, ast.Return) and node.value is not None:
                summary.returns_loaded |= {param for param, _ in self.loaded_from(node.value)}
                summary.returns_data.setdefault(None, set()).update(self._data_params(node.value))
                if isinstance(node.value, ast.Tuple):
                    for index, element in enumerate(node.value.elts):
                        summary.returns_loaded_at.setdefault(index, set()).update(
                            param for param, _ in self.loaded_from(element))
                        summary.returns_data.setdefault(index, set()).update(self._data_params(element))
            if not isinstance(node, ast.Call):
                continue
            name = self.model.qualify(node.func)
            short = (name or "").rpartition(".")[2]
            if name in NON_IDEMPOTENT_ATOMICS:
                value = _value_arg(node, 2 if name == f"{TL}.atomic_cas" else 1)
                if name == f"{TL}.atomic_cas" and self._insertion(node, value):
                    continue
                for param in self.roots(_pointer_arg(node, "pointer")) & self.params - self.scalars:
                    if name in _EXCHANGES and _is_zero(value, self.model):
                        summary.resets.add(param)
                    summary.effects.append(Effect(param, "atomic", short, node))
            elif name in STORES:
                value = _value_arg(node, 1 if short == "store" else 2)  # store_tensor_descriptor(desc, offsets, value)
                targets = self.roots(_pointer_arg(node)) & self.params - self.scalars
                plain_stores.append(node)
                stored_values.append(value)
                if _is_zero(value, self.model):
                    summary.resets |= targets
                for param in sorted(targets):
                    if any(p == param and self.same_address(load, node) and not self.exclusive(load, node)
                           for p, load in self.loaded_from(value)) and not self.idempotent(value, param):
                        summary.effects.append(Effect(param, "in-place", "store", node))
                    elif not self._itself(value, param):  # writing back what was read changes nothing
                        overwritten.append((param, node))
            elif name in IDEMPOTENT_ATOMICS:
                continue
            elif isinstance(node.func, ast.Attribute) and name is None and node.func.attr in ("store", "scatter", "atomic_add"):
                # A descriptor made in the kernel from a pointer argument; a host descriptor passed in is no
                # tensor that reset_to_zero / restore_value could handle.
                targets = self.roots(node.func.value) & self.params - self.scalars - {_name(node.func.value)}
                value = _value_arg(node)
                for param in targets:
                    if node.func.attr == "atomic_add":
                        summary.effects.append(Effect(param, "atomic", "atomic_add", node))
                    elif any(p == param and self.same_address(load, node) for p, load in self.loaded_from(value)):
                        summary.effects.append(Effect(param, "in-place", node.func.attr, node))
            else:
                helper = self._helper(node)
                if helper is None:
                    continue
                position = (node.end_lineno or node.lineno, node.end_col_offset or 0)
                for param, arg in helper.bind(node):
                    mine = self.roots(arg) & self.params - self.scalars
                    for effect in helper.summary.effects:
                        if effect.param == param:
                            for own in mine:
                                if effect.kind == "in-place" and self.first_write.get(own, position) < position:
                                    continue  # the kernel wrote there before: the helper reads this run's data
                                summary.effects.append(Effect(own, effect.kind, effect.op, node, ast.unparse(node.func)))
                    if param in helper.summary.resets:
                        summary.resets |= mine
        # A store that overwrites what an earlier load read at the same addresses for another output (`prev =
        # tl.load(p)`, `tl.store(p, new)`, `tl.store(out, new - prev)`): a second run reads the first run's value.
        for param, store in overwritten:
            read = frozenset().union(*(self.loaded_from(value) for other, value in zip(plain_stores, stored_values)
                                       if other is not store))
            if any(p == param and self.same_address(load, store) and self._precedes(load, store)
                   and not self.exclusive(load, store) for p, load in read):
                summary.effects.append(Effect(param, "in-place", "store", store))
        # A lock or counter the kernel writes 0 into again (`tl.atomic_xchg(lock, 0)`, the last program
        # resetting a tile counter) is back where it started after every run; so is an address the kernel
        # stores into before adding to it (`tl.store(dx + offs, dx_row)`, later `tl.atomic_add(dx + offs, dr)`),
        # also as the first lane of the first block of a loop over a row's blocks (`for c in range(n_chunks):
        # tl.store(d + (c * C + tl.arange(0, C)) * s, ...)`, later `tl.atomic_add(d, d0)`).
        summary.effects = [e for e in summary.effects if not (e.kind == "atomic" and (
            e.param in summary.resets or (e.via is None and any(
                self.same_address(store, e.node) and self._precedes(store, e.node)
                or self._stored_first(store, e.node) for store in plain_stores))))]

    def _stored_first(self, store: ast.Call, atomic: ast.Call) -> bool:
        """The store sits in a loop `for c in range(...)` (from 0) that runs before the atomic whenever it runs,
        and writes the atomic's address in the loop's first pass on its first lane: its pointer is the
        atomic's plus an offset that is 0 there (`(c * C + tl.arange(0, C)) * stride`), under no mask or a mask
        `offs < n` on that offset (0 < n whenever the row has an element)."""
        pointer, target = _pointer_arg(store), _pointer_arg(atomic)
        loops = self.flow.enclosing_loops(store)
        loop = loops[0] if loops and isinstance(loops[0], ast.For) else None
        if not (isinstance(pointer, ast.BinOp) and isinstance(pointer.op, ast.Add) and target is not None
                and loop is not None and isinstance(loop.target, ast.Name) and _counts_from_zero(loop.iter, self.model)
                and self._precedes(loop, atomic)):
            return False
        first = {loop.target.id}
        mask = load_argument(store, 2, "mask")
        if isinstance(mask, ast.Name):  # `mask = offs < n`, assigned once
            mask = self._assigned(mask) or mask
        return self._canonical(pointer.left) == self._canonical(target) and self._zero_first(pointer.right, first) \
            and (mask is None or isinstance(mask, ast.Compare) and len(mask.ops) == 1
                 and isinstance(mask.ops[0], ast.Lt) and self._zero_first(mask.left, first))

    def _assigned(self, name: ast.Name) -> ast.expr | None:
        """The value of the one plain assignment that reaches `name`; None where several, or another kind, do."""
        (definition, *others) = self.flow.reaching(name) or (None,)
        return definition.value if definition is not None and not others and definition.kind == "assign" else None

    def _zero_first(self, expr: ast.expr, first: set[str], depth: int = 0) -> bool:
        """`expr` is 0 on lane 0 of the pass where the names in `first` are 0: the loop counter, `tl.arange(0,
        ...)`, a literal 0, products with such a factor, sums of such terms, through single assignments."""
        if depth > 6:
            return False
        if isinstance(expr, ast.Constant):
            return expr.value == 0 and type(expr.value) is int
        if isinstance(expr, ast.Name):
            value = self._assigned(expr)
            return expr.id in first or value is not None and self._zero_first(value, first, depth + 1)
        if isinstance(expr, ast.Subscript):  # offs[:, None]
            return self._zero_first(expr.value, first, depth + 1)
        if isinstance(expr, ast.Call):
            return self.model.qualify(expr.func) == f"{TL}.arange" and bool(expr.args) \
                and self._zero_first(expr.args[0], first, depth + 1)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
            return self._zero_first(expr.left, first, depth + 1) or self._zero_first(expr.right, first, depth + 1)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            return self._zero_first(expr.left, first, depth + 1) and self._zero_first(expr.right, first, depth + 1)
        return False

    def _precedes(self, earlier: ast.AST, later: ast.AST) -> bool:
        """Whether `earlier`'s statement runs before `later` whenever `later` runs: it sits earlier in a block
        that holds `later` (at any depth), so no branch or loop of its own can skip it."""
        statement = self.flow.statement_of(earlier)
        owner = self.flow.parents.get(id(statement)) if statement is not None else None
        block = next((b for b in (getattr(owner, f, None) for f in ("body", "orelse", "finalbody"))
                      if isinstance(b, list) and any(s is statement for s in b)), None)
        if block is None:
            return False
        position = next(i for i, s in enumerate(block) if s is statement)
        return any(self.flow.inside(later, s) for s in block[position + 1:])

    def idempotent(self, value: ast.expr | None, param: str, depth: int = 0) -> bool:
        """A stored value that a second run would leave as it is: the loaded value itself, a select that
        keeps it or writes something that does not depend on it (`tl.where(mask, fill, x)`, masked_fill),
        or a clamp by such a value (`tl.maximum(x, 0.0)`, relu)."""
        value = self._unwrapped(value)
        if depth > 8 or not isinstance(value, ast.Call):
            return False
        name = self.model.qualify(value.func)
        if name in LOADS:
            return param in self.roots(_pointer_arg(value))
        def independent(expr: ast.expr) -> bool:
            return all(p != param for p, _ in self.loaded_from(expr))

        if name == f"{TL}.where" and len(value.args) == 3:
            choices = value.args[1:]
        elif name in (f"{TL}.maximum", f"{TL}.minimum") and len(value.args) == 2:
            choices = value.args
        else:
            return False
        if name == f"{TL}.where" and not independent(value.args[0]):
            # a test of the value itself picks a constant or keeps it (`tl.where(r == inf, -inf, r)`): a lane the
            # first run kept fails the test again, one it replaced is replaced alike
            return any(independent(c) for c in choices) and all(independent(c) or self._itself(c, param) for c in choices)
        return all(independent(c) or self.idempotent(c, param, depth + 1) for c in choices) \
            and not all(independent(c) for c in choices)

    def _itself(self, value: ast.expr | None, param: str) -> bool:
        """`value` is what a load of `param` read, unchanged (through casts and single assignments)."""
        value = self._unwrapped(value)
        return isinstance(value, ast.Call) and self.model.qualify(value.func) in LOADS \
            and param in self.roots(_pointer_arg(value))

    def _unwrapped(self, value: ast.expr | None, depth: int = 0) -> ast.expr | None:
        """`value` read through casts (`x.to(...)`) and names with a single assignment reaching them."""
        if value is None or depth > 8:
            return None
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to":
            return self._unwrapped(value.func.value, depth + 1)
        if isinstance(value, ast.Name):
            return self._unwrapped(self._assigned(value), depth + 1)
        return value

    def exclusive(self, first: ast.AST, second: ast.AST) -> bool:
        """Whether two places sit under opposite arms of one test of constexpr parameters (`if HAS_SCALE:` load,
        `if not HAS_SCALE:` store): each compilation runs at most one of them."""
        one, other = self._constexpr_guards(first), self._constexpr_guards(second)
        return any(other.get(test) is (not taken) for test, taken in one.items())

    def _constexpr_guards(self, node: ast.AST) -> dict[str, bool]:
        """The tests of constexpr parameters around `node`, each with the arm it sits in (`not X` read as X)."""
        guards: dict[str, bool] = {}
        parents = self.flow.parents
        child, current = node, parents.get(id(node))
        while current is not None and current is not self.function:
            if isinstance(current, ast.If) and (_holds(current.body, child) or _holds(current.orelse, child)):
                test, taken = current.test, _holds(current.body, child)
                while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                    test, taken = test.operand, not taken
                names = {n.id for n in walk(test) if isinstance(n, ast.Name)}
                if names and names <= self.constexprs:
                    guards.setdefault(ast.unparse(test), taken)
            child, current = current, parents.get(id(current))
        return guards

    def same_address(self, load: ast.Call, store: ast.Call) -> bool:
        """Whether a load reads the very addresses a store writes: the pointer expressions (for descriptors:
        the descriptor and the offsets) agree once each local is replaced by the one assignment that
        reaches it. Loads elsewhere in the buffer (the other half of a ping-pong layout, the next portion's
        row) may or may not overlap: not claimed. A helper's loads were judged in its own summary."""
        if self.model.qualify(load.func) in LOADS:
            first, second = _pointer_arg(load), _pointer_arg(store)
        elif isinstance(load.func, ast.Attribute) and isinstance(store.func, ast.Attribute) and \
                (load_at := load_argument(load, 0, "offsets")) is not None \
                and (store_at := load_argument(store, 0, "offsets")) is not None:
            first = ast.Tuple([load.func.value, load_at], ast.Load())  # desc.load(offs) / desc.store(offs, v)
            second = ast.Tuple([store.func.value, store_at], ast.Load())
        else:
            return isinstance(load.func, ast.Name)
        return first is not None and second is not None and self._canonical(first) == self._canonical(second)

    def _canonical(self, expr: ast.expr, depth: int = 0) -> str:
        names = [n for n in walk(expr) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        spelled = []
        for name in names:
            value = self._assigned(name) if depth < 6 else None
            if value is not None:
                spelled.append("(" + self._canonical(value, depth + 1) + ")")
            else:
                spelled.append(name.id + "@" + ",".join(sorted(str(id(d)) for d in self.flow.reaching(name))))
        originals = [name.id for name in names]
        try:  # spell the expression with its names replaced; the tree is put back right after
            for name, text in zip(names, spelled):
                name.id = text
            return ast.unparse(expr)
        finally:
            for name, text in zip(names, originals):
                name.id = text

    def reachable_in(self, node: ast.AST, env: dict[str, Binding]) -> bool:
        """False when an enclosing `if` is decided against `node` under a scenario's bindings (a config, the
        defaults, a literal launch)."""
        parents = self.flow.parents
        child, current = node, parents.get(id(node))
        while current is not None and current is not self.function:
            if isinstance(current, (ast.If, ast.IfExp)):
                taken, skipped = (_holds(part, child) for part in (current.body, current.orelse))
                if (taken or skipped) and self._decided(current.test, env) is (not taken):
                    return False
            child, current = current, parents.get(id(current))
        return True

    def _decided(self, test: ast.expr, env: dict[str, Binding]) -> bool | None:
        """A constexpr test under a scenario: True, False, or None when it is not known."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self._decided(test.operand, env)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            parts = [self._decided(v, env) for v in test.values]
            if isinstance(test.op, ast.And):
                return False if False in parts else None if None in parts else True
            return True if True in parts else None if None in parts else False
        evaluator = LocalScope(self.model, env, self.function).evaluator()  # type: ignore[arg-type]
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _COMPARE:
            left, right = evaluator.evaluate(test.left), evaluator.evaluate(test.comparators[0])
            if left is None or right is None or left.value is None or right.value is None:
                return None
            try:
                return bool(_COMPARE[type(test.ops[0])](left.value, right.value))
            except TypeError:
                return None
        value = evaluator.evaluate(test)
        return None if value is None or value.value is None else bool(value.value)


def _name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _holds(part: ast.AST | list[ast.stmt], child: ast.AST) -> bool:
    return child is part or (isinstance(part, list) and any(child is s for s in part))


@dataclass
class HelperCall:
    """A call of a jit helper, with the summary of what the helper writes."""
    node: ast.FunctionDef | ast.AsyncFunctionDef
    summary: Summary

    def bind(self, call: ast.Call) -> list[tuple[str, ast.expr]]:
        return bind_call(self.node, call)


def effects_of(model: ModuleModel, function: ast.FunctionDef | ast.AsyncFunctionDef, depth: int = _DEPTH) -> Summary:
    """A helper's summary, memoized on the module."""
    key = ("side-effects", id(function))
    if key not in model.memo:
        model.memo[key] = Summary()  # recursion guard
        model.memo[key] = KernelEffects(model, function, depth).summary
    found: Summary = model.memo[key]
    return found


def kernel_effects(model: ModuleModel, kernel: JitFunction) -> list[Effect]:
    """The effects of a kernel, leaving out code that no config (nor the defaults or launches) reaches."""
    assert kernel.node is not None
    envs = scenarios(model, kernel)
    found: list[Effect] = []
    seen: set[tuple[str, str]] = set()
    analysis = KernelEffects(model, kernel.node)
    for effect in analysis.summary.effects:
        if not any(analysis.reachable_in(effect.node, env) for env in envs):
            continue
        if (effect.param, effect.kind) not in seen:
            seen.add((effect.param, effect.kind))
            found.append(effect)
    return found
