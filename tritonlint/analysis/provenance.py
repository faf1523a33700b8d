"""Where a launch argument or grid element comes from on the host: the shape, numel or len of which
tensor, a literal or module constant, a `triton.next_power_of_2` bucket, a ceiling division, a product,
and the host names it went through on the way (`num_tokens = x.shape[0]`)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property

from tritonlint.analysis.host import HostScope, autograd_forward, call_bindings
from tritonlint.analysis.model import LaunchSite, exits
from tritonlint.walk import walk

_RESHAPES = ("view", "reshape", "flatten")


# Methods that keep a tensor's size (a copy, a cast, a move).
SAME_SIZE = frozenset({"to", "float", "half", "bfloat16", "contiguous", "clone", "detach", "cpu", "cuda"})


@dataclass(frozen=True)
class Origin:
    """Where a host value passed to a launch comes from (a shape, a length, a constant...)."""
    # shape | numel | len | total | content | literal | constant | bucket | cdiv | product | bounded | param | unknown
    kind: str
    text: str  # the source it stands for
    tensor: str | None = None  # shape / numel / len: of which tensor (source text); total: the argument summed over
    index: int | None = None  # shape: the dimension, when a literal (negative from the end)
    rows: bool = False  # shape[0] of a tensor flattened to rows (`x.view(-1, n)`), or numel // a dim
    names: tuple[str, ...] = ()  # host names on the way, nearest the launch first
    parts: tuple[Origin, ...] = ()  # cdiv: (dividend, divisor); product: the factors; bucket: its argument
    divisor: int | None = None  # cdiv: the divisor, when a constant
    last: bool = False  # shape: the tensor's last dimension (`x.shape[-1]`, `d` of `b, d = x.shape`)
    middle: bool = False  # shape: neither first nor last of a shape unpacking (`T` of `B, T, C = x.shape`)
    siblings: tuple[str, ...] = ()  # shape: the other names of its shape unpacking (`T`, `C` for `B`); `_` kept

    def describe(self) -> str:
        # `n` = `x.shape[0]`; not `seqlen` = `seqlen + 1` nor `n` = `n`, where the text already shows the name
        shown = bool(self.names) and re.search(rf"\b{re.escape(self.names[0])}\b", self.text) is not None
        via = f"`{self.names[0]}` = " if self.names and not shown else ""
        return f"{via}`{self.text}`"

    def all_names(self) -> tuple[str, ...]:
        return self.names + tuple(n for p in self.parts for n in p.all_names())


def _literal_int(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _literal_int(node.operand)
        return -inner if inner is not None else None
    return None


# A function named for the next power of two (a project's own `next_power_of_two(n)`, `next_pow2`): a bucket.
_NEXT_POWER_OF_TWO = re.compile(r"next_?pow(er)?_?(of_?)?(2|two)$", re.IGNORECASE)
FEW_VALUES = 64  # an upper bound this small leaves few distinct values (few compilations)
# The device's count of multiprocessors (compute units on ROCm) read from its properties: a few hundred at most on
# the GPUs Triton targets, so 1,024 is a safe cap. A name a test compares below it is bounded by it, as by a constant.
DEVICE_UNITS = 1024


def _asserted_bounds(test: ast.expr, constant: Callable[[ast.expr], int | None]) -> dict[str, int]:
    """Names that an assert's test bounds from above by a literal or module constant, with the bound: `m <= 8`,
    `2 <= m <= 8`, `m < MAX_M` (the bound less one), `batch_size == 1`, also within `and`; a tensor's dimension
    (`x.shape[0] <= 32`) by its text."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        found: dict[str, int] = {}
        for value in test.values:
            _tightest(found, _asserted_bounds(value, constant))
        return found
    if not isinstance(test, ast.Compare):
        return {}
    found = {}
    operands = [test.left, *test.comparators]
    for op, left, right in zip(test.ops, operands, operands[1:]):
        pairs = [(left, right)] if isinstance(op, (ast.Lt, ast.LtE)) else \
            [(right, left)] if isinstance(op, (ast.Gt, ast.GtE)) else \
            [(left, right), (right, left)] if isinstance(op, ast.Eq) else []
        for small, large in pairs:
            limit = constant(large)
            key = small.id if isinstance(small, ast.Name) else ast.unparse(small) if _shape_item(small) else None
            if key is not None and limit is not None:
                _tightest(found, {key: limit - isinstance(op, (ast.Lt, ast.Gt))})
    return found


def _converts(value: ast.expr, name: str) -> bool:
    """`name.item()`, `name.cpu()`, `int(name)`: the name's own value converted, not a new one."""
    if not isinstance(value, ast.Call) or value.keywords:
        return False
    if isinstance(value.func, ast.Attribute) and value.func.attr in ("item", "cpu", "tolist") and not value.args:
        return isinstance(value.func.value, ast.Name) and value.func.value.id == name
    return isinstance(value.func, ast.Name) and value.func.id in ("int", "float") and len(value.args) == 1 \
        and isinstance(value.args[0], ast.Name) and value.args[0].id == name


def _shape_item(node: ast.expr) -> bool:
    """`x.shape[0]`: one dimension of a tensor, by a literal index (bounded by its text, for the names unpacked
    from it: `if logits.shape[0] > 32: return ...` then `rows, vocab = logits.shape`)."""
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape" \
        and _literal_int(node.slice) is not None


def _guarded_bounds(test: ast.expr, constant: Callable[[ast.expr], int | None]) -> dict[str, int]:
    """Names bounded like an assert by an early exit `if m > 8: return ...` (also `if m < 2 or m > 8:`):
    past the guard the test is false."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        found: dict[str, int] = {}
        for value in test.values:
            _tightest(found, _guarded_bounds(value, constant))
        return found
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return {}
    negated = {ast.Gt: ast.LtE, ast.GtE: ast.Lt, ast.Lt: ast.GtE, ast.LtE: ast.Gt, ast.NotEq: ast.Eq}.get(type(test.ops[0]))
    if negated is None:
        return {}
    return _asserted_bounds(ast.Compare(left=test.left, ops=[negated()], comparators=test.comparators), constant)


def _tightest(into: dict[str, int], bounds: dict[str, int]) -> None:
    for name, bound in bounds.items():
        into[name] = min(bound, into.get(name, bound))


def _label_choice(host: HostScope, test: ast.expr) -> tuple[ast.expr, bool]:
    """A branch on a label a conditional expression chose (`route = "gemv" if m <= 4 else "gemm"`, then `if
    route == "gemv":`) runs where that expression's test holds: the test, and whether the branch's body runs
    where it does not (the other label, or `!=`). Any other test is itself."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq))
            and isinstance(test.left, ast.Name) and isinstance(test.comparators[0], ast.Constant)):
        return test, False
    chosen = host.value_of(test.left.id)
    if not (isinstance(chosen, ast.IfExp) and isinstance(chosen.body, ast.Constant)
            and isinstance(chosen.orelse, ast.Constant) and chosen.body.value != chosen.orelse.value):
        return test, False
    label = test.comparators[0].value
    if label not in (chosen.body.value, chosen.orelse.value):
        return test, False
    return chosen.test, (label == chosen.orelse.value) != isinstance(test.ops[0], ast.NotEq)


def _nested_divisor(dividend: Origin, divisor: int | None) -> int | None:
    """The divisor of a ceiling division, times that of a ceiling division it divides
    (`cdiv(cdiv(n, 64), 32)` divides n by 2,048)."""
    if divisor is None or dividend.kind != "cdiv" or dividend.divisor is None:
        return divisor
    return divisor * dividend.divisor


def _stride_source(value: ast.expr) -> ast.expr | None:
    """`x.stride()` (all the strides): the tensor, else None."""
    if isinstance(value, ast.Call) and not value.args and isinstance(value.func, ast.Attribute) \
            and value.func.attr == "stride":
        return value.func.value
    return None


def _unmapped(value: ast.expr) -> ast.expr:
    """`m, width = map(int, x.shape)`: the sizes as Python ints, read as `x.shape`."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "map" \
            and len(value.args) == 2 and isinstance(value.args[0], ast.Name) and value.args[0].id == "int":
        return value.args[1]
    return value


def _rearranged_to_rows(pattern: ast.expr) -> bool:
    """An einops pattern that merges every axis but the last into the rows, `x.reshape(-1, d)` spelled
    `"b s d -> (b s) d"` (or `"... d -> (...) d"`)."""
    if not (isinstance(pattern, ast.Constant) and isinstance(pattern.value, str)) or pattern.value.count("->") != 1:
        return False
    source, _, target = pattern.value.partition("->")
    axes, result = source.split(), target.replace("(", " ( ").replace(")", " ) ").split()
    return len(axes) >= 2 and "(" not in source and result == ["(", *axes[:-1], ")", axes[-1]]


def _shape_window(value: ast.expr) -> tuple[int, bool] | None:
    """Where the sizes a shape unpacking binds start, and whether they run to its end: `x.shape` (0, True),
    `x.shape[:2]` (0, False), `x.shape[-2:]` (-2, True: `hc, dim = x.shape[-2:]` binds dimensions -2 and -1);
    None for a slice that cannot be read (a runtime start, a step)."""
    value = _unmapped(value)
    if not (isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice)):
        return 0, True
    window = value.slice
    start = _literal_int(window.lower) if window.lower is not None else 0
    if start is None or window.step is not None:
        return None
    return start, window.upper is None


class Provenance:
    """Host origins of the expressions of one host scope (a function, or the module)."""

    def __init__(self, host: HostScope) -> None:
        self.host = host
        # M, K = x.shape -> M: (x, 0, False, False, ("K",))
        self.unpacked: dict[str, tuple[ast.expr, int, bool, bool, tuple[str, ...]]] = {}
        self.unpacked_strides: dict[str, tuple[ast.expr, int]] = {}  # s_b, s_t = x.stride() -> s_t: (x, 1)
        # rows, cols = _row_shape(x), a helper of the module returning `rows, columns`: rows -> its value there
        self.returned: dict[str, tuple[Provenance, ast.expr]] = {}
        # names an assert, or an early exit of the function, bounds by a literal or module constant, with the
        # bound (`assert 2 <= m <= 8`, `assert m <= MAX_M`); `asserted`: those bounded by a small one
        self.bounds: dict[str, int] = {}
        root = host.node or host.model.tree
        if host.node is not None:
            for statement in host.node.body:
                if isinstance(statement, ast.If) and exits(statement.body) and not statement.orelse:
                    _tightest(self.bounds, _guarded_bounds(statement.test, self._limit))
        # names a branch bounds where it runs (`if m > 1: ... else: launch(m)`): (first line, last line, bounds)
        self.branch_bounds: list[tuple[int, int, dict[str, int]]] = []
        for node in walk(root):
            if isinstance(node, ast.Assert):
                _tightest(self.bounds, _asserted_bounds(node.test, self._limit))
            if isinstance(node, ast.If) and host.node is not None:
                test, flipped = _label_choice(host, node.test)
                bounds = (_asserted_bounds(test, self._limit), _guarded_bounds(test, self._limit))
                for branch, names in zip((node.body, node.orelse), bounds[::-1] if flipped else bounds):
                    if branch and names:
                        self.branch_bounds.append((branch[0].lineno, branch[-1].end_lineno or branch[-1].lineno, names))
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple):
                source = self._shape_source(node.value)
                window = _shape_window(node.value) if source is not None else None
                if source is not None and window is not None:
                    elements, (start, to_end) = node.targets[0].elts, window
                    starred = next((i for i, e in enumerate(elements) if isinstance(e, ast.Starred)), None)
                    for position, element in enumerate(elements):
                        if isinstance(element, ast.Name):  # the last name of a shape taken to its end is its last dimension
                            last = to_end and position == len(elements) - 1
                            middle = 0 < position < len(elements) - 1
                            siblings = tuple(ast.unparse(e) for e in elements if e is not element)
                            index = start + position
                            if starred is not None and position > starred:  # `*batch, n = x.shape`: n is -1
                                if not to_end:
                                    continue
                                index = position - len(elements)
                            self.unpacked[element.id] = (source, index, last, middle, siblings)
                strided = _stride_source(node.value)
                if strided is not None and not any(isinstance(e, ast.Starred) for e in node.targets[0].elts):
                    for index, element in enumerate(node.targets[0].elts):
                        if isinstance(element, ast.Name):
                            self.unpacked_strides[element.id] = (strided, index)
                returned = self._helper_return(node.value, len(node.targets[0].elts))
                for element, value in zip(node.targets[0].elts, returned or ()):
                    if isinstance(element, ast.Name):
                        self.returned[element.id] = value
        for name, (source, index, *_) in self.unpacked.items():
            item = self.bounds.get(f"{ast.unparse(source)}.shape[{index}]")
            if item is not None:
                _tightest(self.bounds, {name: item})
        self.asserted = {name for name, bound in self.bounds.items() if bound <= FEW_VALUES}
        self.subscript_text: dict[str, str] = {}  # B = x.shape[0] -> B: "x.shape[0]", read as an unpacking
        self._subscripts_as_unpacking()

    def _subscripts_as_unpacking(self) -> None:
        """Names bound once each to the first k dimensions of one tensor, one subscript at a time (`B =
        x.shape[0]`, `T = x.shape[1]`, `C = x.shape[2]`), read like the unpacking `B, T, C = x.shape[:3]`."""
        bindings = self.host.values.items() if self.host.node is not None else \
            ((name, [value]) for name, value in self.host.model.assignments.items())
        by_tensor: dict[str, dict[int, tuple[str, ast.expr]]] = {}
        for name, bound in bindings:
            value = bound[0] if len(bound) == 1 else None
            if name in self.unpacked or value is None:
                continue
            if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Attribute) and value.value.attr == "shape":
                source, index = value.value.value, _literal_int(value.slice)
            elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "size" \
                    and len(value.args) == 1:
                source, index = value.func.value, _literal_int(value.args[0])
            else:
                continue
            if source is not None and index is not None and index >= 0:
                by_tensor.setdefault(ast.unparse(source), {}).setdefault(index, (name, source))
                self.subscript_text[name] = ast.unparse(value)
        for dimensions in by_tensor.values():
            if len(dimensions) < 2 or sorted(dimensions) != list(range(len(dimensions))):
                continue
            for index, (name, source) in dimensions.items():
                siblings = tuple(other for other, _ in dimensions.values() if other != name)
                self.unpacked[name] = (source, index, False, 0 < index < len(dimensions) - 1, siblings)

    def stride_of(self, value: ast.expr) -> tuple[str, int] | None:
        """`t.stride(d)`, `t.stride()[d]` (through one local name) or a name unpacked from `t.stride()` (`s_b,
        s_t = x.stride()`): the tensor's text and d (negative from the end), else None."""
        if isinstance(value, ast.Name) and value.id in self.unpacked_strides:
            strided, position = self.unpacked_strides[value.id]
            return ast.unparse(strided), position
        bound = self.host.values.get(value.id, []) if isinstance(value, ast.Name) and self.host.node is not None else []
        if len(bound) > 1:  # `s = x.stride(1)` in one branch, `s = x.stride(2)` in the other: an inner stride either way
            branches = [self.stride_of(v) if v is not None else None for v in bound]
            found = [b for b in branches if b is not None]
            same = len(found) == len(branches) and len({tensor for tensor, _ in found}) == 1
            if same and (len({dim for _, dim in found}) == 1 or all(dim >= 1 for _, dim in found)):
                return min(found, key=lambda branch: branch[1])
            return None
        expr = (self.host.value_of(value.id) or value) if isinstance(value, ast.Name) else value
        whole = None
        if isinstance(expr, ast.Subscript):
            strides = expr.value
            if isinstance(strides, ast.Name):  # `q_strides = q.stride()`, then `q_strides[2]`
                strides = self.host.value_of(strides.id) or strides
            whole = _stride_source(strides)
        if isinstance(expr, ast.Subscript) and whole is not None:
            tensor, index = whole, expr.slice
        elif isinstance(expr, ast.Call) and len(expr.args) == 1 and isinstance(expr.func, ast.Attribute) \
                and expr.func.attr == "stride":
            tensor, index = expr.func.value, expr.args[0]
        else:
            return None
        dim = _literal_int(index)
        return (ast.unparse(tensor), dim) if dim is not None else None

    def token_rows(self, tensor: str) -> bool:
        """The tensor's shape is unpacked whole and every dimension after its first is one token's features (a
        head count, head dimension, hidden or embedding size: `n, num_heads, head_size = x.shape`), so one step
        of its leading dimension, `stride(0)`, is one token's width."""
        inner = [(name, index, last) for name, (source, index, last, _, _) in self.unpacked.items()
                 if ast.unparse(source) == tensor and index >= 1]
        if not inner or not any(last for _, _, last in inner) \
                or sorted(index for _, index, _ in inner) != list(range(1, len(inner) + 1)):
            return False
        return all(feature_width(self.origin(ast.Name(name))) or small_item(name) for name, _, _ in inner)

    @classmethod
    def of(cls, host: HostScope) -> Provenance:
        return host.model.memoized(("provenance", id(host.node)), lambda: cls(host))

    def _helper_return(self, value: ast.expr, count: int) -> list[tuple[Provenance, ast.expr]] | None:
        """For `a, b = helper(x)`, a call of a plain function of the module whose only return is a tuple of
        `count` values and whose parameters the call passes by the same names: each value, with the helper's
        provenance (`rows = x.numel() // columns` of `_row_shape(x)`). Else None."""
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and not value.keywords):
            return None
        helper = self.host.function_def(value.func.id)
        if not isinstance(helper, ast.FunctionDef) or helper.decorator_list \
                or [a.arg for a in helper.args.args] != [ast.unparse(a) for a in value.args] \
                or helper.args.vararg or helper.args.kwarg or helper.args.kwonlyargs:
            return None
        returns = [n for n in walk(helper) if isinstance(n, ast.Return)]
        if len(returns) != 1 or not isinstance(returns[0].value, ast.Tuple) or len(returns[0].value.elts) != count:
            return None
        scope = Provenance.of(HostScope.of(self.host.model, helper))
        return [(scope, element) for element in returns[0].value.elts]

    @staticmethod
    def _shape_source(value: ast.expr) -> ast.expr | None:
        """`x.shape`, `x.size()`, `x.shape[:2]`, `map(int, x.shape)`: the tensor, else None."""
        value = _unmapped(value)
        if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice):
            value = value.value
        if isinstance(value, ast.Attribute) and value.attr == "shape":
            return value.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "size" \
                and not value.args:
            return value.func.value
        return None

    def _flattened(self, tensor: ast.expr, depth: int = 0) -> bool:
        """Whether the tensor was flattened to rows: `x.view(-1, n)`, `x.reshape(-1, n)`, `x.flatten(0, -2)`,
        `x.view(B * T, n)` with a sequence length among the factors, also through copies and casts of it
        (`x.reshape(-1, n).contiguous()`), through a tuple a helper of the module returns, and into a function
        that receives it (`_passed_flattened`)."""
        value = tensor
        for _ in range(4):
            if isinstance(value, ast.Name):
                reached = self.host.value_reaching(value.id, value.lineno)
                if reached is None and value.id in self.returned and len(self.host.values.get(value.id, ())) == 1:
                    helper, returned = self.returned[value.id]  # `w, x2d = _prepare(w, x)`: as the helper made it
                    return helper._flattened(returned, depth)
                if reached is None and depth < 2:
                    return self._passed_flattened(value.id, depth)
                value = reached or value
            if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in SAME_SIZE):
                break
            value = value.func.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _RESHAPES:
            if value.func.attr == "flatten":
                return bool(value.args)
            if len(value.args) == 2 and isinstance(value.args[0], ast.BinOp) and isinstance(value.args[0].op, ast.Mult):
                # `x.view(B * T, V)`: the batch's positions merged into rows of one token each
                return any(sequence_count(f) for f in _factors(self.origin(value.args[0], 5)))
            return bool(value.args) and _literal_int(value.args[0]) == -1
        if isinstance(value, ast.Call) and self.host.model.qualify(value.func) == "einops.rearrange":
            return len(value.args) == 2 and _rearranged_to_rows(value.args[1])
        return False

    def _passed_flattened(self, name: str, depth: int) -> bool:
        """A parameter that every call of its function in the module passes flattened to rows
        (`_CrossEntropy.apply(logits, targets)` after `if logits.ndim > 2: logits = logits.view(-1, V)`), or a
        tensor an autograd `backward` unpacks from `ctx.saved_tensors` that its `forward` saved so: the function
        sees the same rows."""
        if self.host.unbound_parameter(name):
            sites = call_bindings(self.host)
            return bool(sites) and all(name in bound and Provenance.of(caller)._flattened(bound[name], depth + 1)
                                       for caller, bound in sites)
        saved = self._saved_by_forward.get(name)
        return saved is not None and saved[0]._flattened(saved[1], depth + 1)

    @cached_property
    def _saved_by_forward(self) -> dict[str, tuple[Provenance, ast.expr]]:
        """For `a, b = ctx.saved_tensors` in an autograd Function's `backward` (also `saved = ctx.saved_tensors`
        unpacked in branches by arity): each name, with the tensor its `forward` saved in its place, the same one
        at that place in each `ctx.save_for_backward(...)`, and the forward's provenance."""
        function, model = self.host.node, self.host.model
        forward = autograd_forward(model, function)
        if forward is None or function is None:
            return {}
        assigns = [node for node in walk(function) if isinstance(node, ast.Assign) and len(node.targets) == 1]
        whole = {node.targets[0].id for node in assigns if isinstance(node.targets[0], ast.Name)
                 and isinstance(node.value, ast.Attribute) and node.value.attr == "saved_tensors"}
        unpacked = [[ast.unparse(e) for e in node.targets[0].elts] for node in assigns
                    if isinstance(node.targets[0], ast.Tuple) and (
                        isinstance(node.value, ast.Attribute) and node.value.attr == "saved_tensors"
                        or isinstance(node.value, ast.Name) and node.value.id in whole)]
        saves = [n for n in walk(forward) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and n.func.attr == "save_for_backward"]
        found: dict[str, tuple[Provenance, ast.expr]] = {}
        for name in {name for names in unpacked for name in names}:
            places = {names.index(name) for names in unpacked if name in names}
            place = min(places)
            tensors = [save.args[place] for save in saves if place < len(save.args)
                       and not any(isinstance(a, ast.Starred) for a in save.args[:place + 1])]
            if len(places) == 1 and saves and len(tensors) == len(saves) and len({ast.unparse(t) for t in tensors}) == 1:
                found[name] = (Provenance.of(HostScope.of(model, forward)), tensors[0])
        return found

    def fixed_by_assertion(self, leaf: Origin) -> bool:
        """Whether an assert of the function tests the value, by one of its host names or as the tensor
        dimension it is, equal to an expression fixed per model (`assert SEQ_LEN == 1 + H_img ** 2` with
        `H_img=14` in the signature): it changes only with that. In an autograd backward, a dimension of a
        tensor the forward saved, where the forward's assert pins that dimension."""
        keys = {*leaf.names, leaf.text}
        if any(self._fixed_per_model(other) for key in keys for other in self._equated.get(key, ())):
            return True
        saved = self._saved_by_forward.get(leaf.tensor or "") if leaf.kind == "shape" else None
        if saved is None:
            return False
        forward, tensor = saved
        text = ast.unparse(tensor)
        names = [name for name, (source, index, *_) in forward.unpacked.items()
                 if ast.unparse(source) == text and index == leaf.index]
        return forward.fixed_by_assertion(Origin("shape", f"{text}.shape[{leaf.index}]", names=tuple(names)))

    @cached_property
    def _equated(self) -> dict[str, list[ast.expr]]:
        """For each name or tensor dimension (by its text) that an assert of the function tests equal to an
        expression, those expressions (`assert n == 1 + n_img`: n -> [1 + n_img], n_img -> [n])."""
        found: dict[str, list[ast.expr]] = {}
        for node in walk(self.host.node) if self.host.node is not None else ():
            tests = [node.test] if isinstance(node, ast.Assert) else []
            while tests:
                test = tests.pop()
                if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
                    tests += test.values
                elif isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
                    left, right = test.left, test.comparators[0]
                    found.setdefault(ast.unparse(left), []).append(right)
                    found.setdefault(ast.unparse(right), []).append(left)
        return found

    def _fixed_per_model(self, expr: ast.expr, depth: int = 0) -> bool:
        """Literals, module constants, attributes of `self`, parameters with a literal default, and
        arithmetic of those (through single local assignments): nothing a call's tensors size."""
        if depth > 6:
            return False
        if isinstance(expr, ast.Constant):
            return isinstance(expr.value, int)
        if isinstance(expr, ast.BinOp):
            return self._fixed_per_model(expr.left, depth + 1) and self._fixed_per_model(expr.right, depth + 1)
        if isinstance(expr, ast.Attribute):
            return isinstance(expr.value, ast.Name) and expr.value.id == "self" and expr.attr != "shape"
        if not isinstance(expr, ast.Name):
            return False
        if expr.id in self.host.model.constants:
            return True
        if self.host.unbound_parameter(expr.id):
            default = self.host.default_of(expr.id)
            return isinstance(default, ast.Constant) and isinstance(default.value, int)
        value = self.host.value_of(expr.id)
        return value is not None and self._fixed_per_model(value, depth + 1)

    def _shape(self, tensor: ast.expr, index: int | None, text: str, last: bool = False) -> Origin:
        return Origin("shape", text, tensor=ast.unparse(tensor), index=index,
                      rows=index == 0 and self._flattened(tensor), last=last or index == -1)

    def origin(self, node: ast.expr, depth: int = 0) -> Origin:
        text = ast.unparse(node)
        if depth > 8:
            return Origin("unknown", text)
        if _literal_int(node) is not None:
            return Origin("literal", text)
        if isinstance(node, ast.Name):
            if self._bounded_by_branch(node):
                return Origin("bounded", text, names=(node.id,))
            return self._name(node.id, depth)
        if isinstance(node, ast.Subscript):
            source = self._shape_source(node.value)
            if source is not None and not isinstance(node.slice, ast.Slice):
                return self._shape(source, _literal_int(node.slice), text)
        if isinstance(node, ast.Call):
            return self._call(node, text, depth)
        if isinstance(node, ast.BinOp):
            left, right = self.origin(node.left, depth + 1), self.origin(node.right, depth + 1)
            if isinstance(node.op, ast.Mult):
                return Origin("product", text, parts=(left, right))
            if isinstance(node.op, ast.FloorDiv):
                # (n + B - 1) // B is a ceiling division of n: peel the `- 1` and the `+ B` (or `+ (B - 1)`)
                numerator = node.left
                for _ in range(2):
                    if isinstance(numerator, ast.BinOp) and isinstance(numerator.op, (ast.Add, ast.Sub)) and (
                            _literal_int(numerator.right) is not None
                            or ast.unparse(numerator.right) == ast.unparse(node.right)):
                        numerator = numerator.left
                if numerator is not node.left:
                    left = self.origin(numerator, depth + 1)
                elif isinstance(node.left, ast.BinOp) and isinstance(node.left.op, (ast.Add, ast.Sub)):
                    left = self.origin(node.left.left, depth + 1)
                rows = left.kind == "numel" and right.kind == "shape" and right.last
                return Origin("cdiv", text, rows=rows, parts=(left, right),
                              divisor=_nested_divisor(left, self._constant(node.right)))
            if isinstance(node.op, (ast.Add, ast.Sub)) and right.kind in ("literal", "constant"):
                return replace(left, text=text)
        return Origin("unknown", text)

    def _bounded_by_branch(self, node: ast.Name) -> bool:
        """The read lies in a branch whose test bounds the name by a small constant, and the name is bound once
        (a parameter, or one assignment above the test)."""
        bound = self.upper_bound(node.id, node, branches_only=True)
        return bound is not None and bound <= FEW_VALUES

    def upper_bound(self, name: str, at: ast.AST, branches_only: bool = False) -> int | None:
        """The smallest constant that an assert, an early exit or the branches around `at` bound the name by,
        where the name is bound once (a parameter, or one assignment above the test); None where none does."""
        if len(self.host.values.get(name, ())) != 1 or not hasattr(at, "lineno"):
            return None
        found = [] if branches_only or name not in self.bounds else [self.bounds[name]]
        found += [names[name] for first, last, names in self.branch_bounds if first <= at.lineno <= last and name in names]
        return min(found) if found else None

    def upper_limit(self, node: ast.expr, at: ast.AST, depth: int = 0) -> int | None:
        """The most a count can be at `at`: a constant or a device's multiprocessor count, a name a test around
        `at`, an assert or an early exit bounds, else its single value's; `min(...)` of a part that has one,
        `max(...)` of parts that all have one, a quotient `a // b` of a count `a` (at most `a`); None where
        nothing bounds it."""
        if depth > 6:
            return None
        limit = self._limit(node)
        if limit is not None:
            return limit
        if isinstance(node, ast.Name):
            bound = self.upper_bound(node.id, at)
            if bound is not None:
                return bound
            value = self.host.value_of(node.id)
            return self.upper_limit(value, at, depth + 1) if value is not None else None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            return self.upper_limit(node.left, at, depth + 1)
        if isinstance(node, ast.Call) and len(node.args) == 1 and _NEXT_POWER_OF_TWO.search(ast.unparse(node.func)):
            inner = self.upper_limit(node.args[0], at, depth + 1)  # `triton.next_power_of_2(n_cols)`
            return 1 << max(inner - 1, 0).bit_length() if inner is not None else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max") \
                and node.args and not node.keywords:
            limits = [self.upper_limit(arg, at, depth + 1) for arg in node.args]
            known = [limit for limit in limits if limit is not None]
            if node.func.id == "min":
                return min(known) if known else None
            return max(known) if len(known) == len(limits) else None
        return None

    def _limit(self, node: ast.expr, depth: int = 0) -> int | None:
        """What a test's bound is at most: a constant, or a device's multiprocessor count (`NUM_SMS =
        torch.cuda.get_device_properties(d).multi_processor_count`, Triton's `["multiprocessor_count"]`)."""
        constant = self._constant(node)
        if constant is not None:
            return constant
        if isinstance(node, ast.Name) and depth < 4 and (value := self.host.value_of(node.id)) is not None:
            return self._limit(value, depth + 1)
        if isinstance(node, ast.Attribute) and node.attr == "multi_processor_count" or isinstance(node, ast.Subscript) \
                and isinstance(node.slice, ast.Constant) and node.slice.value == "multiprocessor_count":
            return DEVICE_UNITS
        return None

    def _constant(self, node: ast.expr, depth: int = 0) -> int | None:
        if isinstance(node, ast.Name) and depth < 4 and (local := self.host.value_of(node.id)) is not None:
            return self._constant(local, depth + 1)  # a local block size (`BLOCK_N = 64`)
        value = self.host.model.evaluator().evaluate(node)
        return value.value if value is not None and isinstance(value.value, int) else None

    def _name(self, name: str, depth: int) -> Origin:
        if name in self.asserted:
            return Origin("bounded", name, names=(name,))
        if name in self.unpacked:
            tensor, index, last, middle, siblings = self.unpacked[name]
            text = self.subscript_text.get(name) or f"{ast.unparse(tensor)}.shape[{index}]"
            shape = self._shape(tensor, index, text, last)
            return replace(shape, names=(name,), middle=middle, siblings=siblings)
        value = self.host.value_of(name)
        if value is not None:
            inner = self.origin(value, depth + 1)
            return replace(inner, names=(name, *inner.names))
        bound = self.host.values.get(name, []) if self.host.node is not None else []
        converted = [value for value in bound if value is not None and _converts(value, name)]
        if len(bound) == 2 and len(converted) == 1:
            # `total = total.item()`, `n = int(n)`: the same value, brought to the host; what it was before
            earlier = bound[1] if bound[0] is converted[0] else bound[0]
            before = self.origin(earlier, depth + 1) if earlier is not None else \
                self.returned[name][0].origin(self.returned[name][1], depth + 1) if name in self.returned else None
            if before is not None:
                return replace(before, names=(name, *before.names))
        if name in self.returned and len(self.host.values.get(name, ())) == 1:
            helper, returned = self.returned[name]
            inner = helper.origin(returned, depth + 1)
            return replace(inner, names=(name, *inner.names))
        if name in self.host.model.constants:
            return Origin("constant", name, names=(name,))
        branched = self._branched_shape(name, depth)
        if branched is not None:
            return branched
        summed = self._summed_argument(name)
        if summed is not None:
            return Origin("total", name, tensor=summed, names=(name,))
        if self.host.node is not None and name in self.host.values:
            return Origin("param" if self._is_parameter(name) else "unknown", name, names=(name,))
        return Origin("unknown", name, names=(name,))

    def _branched_shape(self, name: str, depth: int) -> Origin | None:
        """A name that the branches of the launching function assign, each a dimension of the same tensor
        (`seq_len = dim1` in one, `seq_len = dim2` in the other, of `batch, dim1, dim2, d = x.shape`): a shape of
        that tensor, its dimension known only where every branch picks the same one."""
        bound = self.host.values.get(name, []) if self.host.node is not None else []
        if len(bound) < 2 or any(value is None for value in bound):
            return None
        shapes = [self.origin(value, depth + 1) for value in bound]  # type: ignore[arg-type]
        if any(shape.kind != "shape" or shape.rows or shape.tensor != shapes[0].tensor for shape in shapes):
            return None
        index = shapes[0].index if all(shape.index == shapes[0].index for shape in shapes) else None
        return Origin("shape", name, tensor=shapes[0].tensor, index=index, names=(name,))

    def _summed_argument(self, name: str) -> str | None:
        """`total = 0`, then only `total += ...` in loops over one argument of the launching function (`for t, h,
        w in grid_thw_list`): a running total over the items the caller passes; the argument's name."""
        bound = self.host.values.get(name, []) if self.host.node is not None else []
        if sum(value is not None for value in bound) != 1 or _literal_int(next(v for v in bound if v is not None)) != 0:
            return None
        totals = {id(node) for node in walk(self.host.node) if isinstance(node, ast.AugAssign)  # type: ignore[arg-type]
                  and isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name) and node.target.id == name}
        if not totals or len(totals) != bound.count(None):
            return None  # bound some other way too (a parameter, `total = ...` again, `total -= ...`)
        looped: set[int] = set()
        iterated: set[str] = set()
        for loop in walk(self.host.node):  # type: ignore[arg-type]
            if not isinstance(loop, ast.For):
                continue
            inside = {id(node) for node in walk(loop)} & totals
            if inside:
                looped |= inside
                iterated.add(ast.unparse(loop.iter))
        if looped != totals or len(iterated) != 1:
            return None
        (argument,) = iterated
        return argument if self.host.unbound_parameter(argument) else None

    def _is_parameter(self, name: str) -> bool:
        args = self.host.node.args  # type: ignore[union-attr]
        return any(a.arg == name for a in [*args.posonlyargs, *args.args, *args.kwonlyargs])

    def _call(self, node: ast.Call, text: str, depth: int) -> Origin:
        model = self.host.model
        func = node.func
        name = model.qualify(func)
        method = func.attr if isinstance(func, ast.Attribute) else None
        if method in ("numel", "nelement") and not node.args or name == "torch.numel":
            return Origin("numel", text, tensor=ast.unparse(func.value if method else node.args[0]))  # type: ignore[attr-defined]
        if method == "size" and len(node.args) == 1:
            return self._shape(func.value, _literal_int(node.args[0]), text)  # type: ignore[attr-defined]
        if isinstance(func, ast.Name) and func.id == "len" and len(node.args) == 1 and "len" not in model.local_names:
            return Origin("len", text, tensor=ast.unparse(node.args[0]))
        if isinstance(func, ast.Name) and func.id == "int" and len(node.args) == 1:
            inner = node.args[0]
            if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Div):  # `int(x.numel() / H)`: `x.numel() // H`
                inner = ast.copy_location(ast.BinOp(inner.left, ast.FloorDiv(), inner.right), inner)
            return self.origin(inner, depth + 1)
        if method in ("item", "cpu", "detach") and not node.args:
            return self.origin(func.value, depth + 1)  # type: ignore[attr-defined]
        if method in _CONTENT_READS and not node.args and not node.keywords \
                and (read := _call_data_tensor(func.value)) is not None:  # type: ignore[attr-defined]
            # `seqlens.max().item()`: a value of the batch the call gets, read on the host
            return Origin("content", text, tensor=read)
        if (name in ("triton.next_power_of_2", "triton.language.next_power_of_2")
                or _NEXT_POWER_OF_TWO.search((name or "").rpartition(".")[2])) and len(node.args) == 1:
            return Origin("bucket", text, parts=(self.origin(node.args[0], depth + 1),))
        if name in ("triton.cdiv", "triton.language.cdiv") and len(node.args) == 2:
            parts = tuple(self.origin(a, depth + 1) for a in node.args)
            return Origin("cdiv", text, parts=parts, divisor=_nested_divisor(parts[0], self._constant(node.args[1])))
        if isinstance(func, ast.Name) and func.id in ("max", "sum") and func.id not in model.local_names \
                and len(node.args) == 1 and (read := self._listed_values(node.args[0], depth)) is not None:
            # `max(lengths.tolist())`: as `lengths.max().item()`, through a host list of the values
            return Origin("content", text, tensor=read)
        if isinstance(func, ast.Name) and func.id in ("min", "max") and func.id not in model.local_names:
            parts = tuple(self.origin(a, depth + 1) for a in node.args)
            counts = [p for p in parts if p.kind not in ("literal", "constant")]
            if func.id == "max" and len(counts) == 1 and len(parts) == 2:
                return replace(counts[0], text=text)  # `max(1, n)`: a floor leaves the count what it is
            if func.id == "min" and any(p.kind in ("literal", "constant") for p in parts):
                return Origin("bounded", text, parts=parts)
            return Origin("product" if func.id == "max" else "bounded", text, parts=parts)
        return Origin("unknown", text)

    def _listed_values(self, node: ast.expr, depth: int) -> str | None:
        """The tensor whose values `node` lists on the host (`_call_data_tensor`): `lengths.cpu().tolist()`, a
        list comprehension over it, or a local name bound to one of those."""
        if depth > 8:
            return None
        if isinstance(node, ast.Name) and (value := self.host.value_of(node.id)) is not None:
            return self._listed_values(value, depth + 1)
        if isinstance(node, ast.ListComp) and len(node.generators) == 1:
            return self._listed_values(node.generators[0].iter, depth + 1)
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "tolist"):
            return None
        tensor = node.func.value
        while isinstance(tensor, ast.Call) and isinstance(tensor.func, ast.Attribute) and tensor.func.attr in SAME_SIZE:
            tensor = tensor.func.value
        return _call_data_tensor(tensor)


# Reductions of a tensor's values read on the host (`seqlens.max().item()`, `int(counts.max().cpu())`, a
# graph's most edges per node, `tensor_k.max().item()`, the largest k of a batch): a value of the data the call
# gets, the longest or the total length where the tensor holds lengths or counts.
_CONTENT_READS = frozenset({"max", "amax", "sum"})
_LENGTHS = re.compile(r"len|cu_?seq|counts", re.IGNORECASE)


def lengths_tensor(text: str) -> bool:
    """A tensor named as holding lengths or counts (`kv_lengths`, `cu_seqlens`, `counts`)."""
    return bool(_LENGTHS.search(tensor_name(text)))


def _call_data_tensor(tensor: ast.expr) -> str | None:
    """The source text of a tensor whose values a call's data sets: not a module's state (`self.scale`) nor a
    tensor named as a weight, table or pool (`table`), fixed once the model is built."""
    text = ast.unparse(tensor)
    return None if text.startswith("self.") or table(text) else text


# ---- what an origin means ----------------------------------------------------------------------------------
_COUNT_WORDS = re.compile(r"(^|_)(n_?)?(num_?)?(tokens?|toks?|rows?|seq_?lens?|seqlens?|n_?ctx|ctx_?len|"
                          r"total_?len|sequence_?length|seq_?length|queries|keys)($|_)", re.IGNORECASE)
# Model dimensions, batch and per-item counts, and sizes of one row rather than counts of rows (`row_bytes`,
# `row_stride`, `width`).
_MODEL_WORDS = re.compile(r"head|dim|hidden|feat|channel|expert|vocab|embed|block|tile|split|group|warps?|stages?|"
                          r"bytes|stride|width|"
                          r"batch|^[bhdkv]$|^n?bs$|^n?h[vqk]$|world|rank|mix|_size$|topk|per_|_per|_ids?$|^ids?_", re.IGNORECASE)
_BATCH_WORD = re.compile(r"batch|^n?bs$", re.IGNORECASE)


def batch_word(name: str) -> bool:
    """A name that says batch (`batch_num`, `bs`)."""
    return bool(_BATCH_WORD.search(name))

# Flags and modes that mention a count word (`check_all_masked_rows`, `RETURN_TOKEN_ACCURACY`).
_FLAG = re.compile(r"^(is|has|check|return|use|enable|with|do|need|should|allow)_", re.IGNORECASE)
# Tables indexed by position (rotary cos/sin caches): as long as the longest sequence the model takes.
# Also tables of per-group sizes and offsets (`m_sizes`, `offs` of a grouped GEMM: one entry per expert),
# weights by the short
# names of projections (`w`, `w1`, `wo`, `wq`, `wlg`: w and at most two letters) and quantised weights by
# their packing names (`packed` alone, `qweight`; not `packed_qkv`, packed varlen activations).
_TABLES = re.compile(r"cos|sin|freq|rope|cache|table|weight|^w_|_w$|^w[a-z]{0,2}\d?$|^packed$|pool|req_to|lora|"
                     r"(^|_)sizes$|^offs$",
                     re.IGNORECASE)
# Counts of items rather than of data: per-request, draft and page counts, requests and sequences.
_STYLED_SIZE = re.compile(r"^[a-z]?_size$", re.IGNORECASE)  # `m_size`: a count named with a `_size` suffix
_SMALL_WORDS = re.compile(r"per_|_per|draft|spec|page|req|seqs\b|num_seq|n_seq|program|partial|layer|slot",
                          re.IGNORECASE)
# Tensors that hold offsets, indices or lengths (one entry per sequence, group or request), not data.
_METADATA = re.compile(r"offset|(^|_)offs$|indic|index|idx|len|cu_seq|ptr|table|ids?$|mask|scale|loc|pos_ids|starts?$|ends?$",
                       re.IGNORECASE)


# Tensors of per-token routing data (router logits, gating weights, top-k ids and weights): one row per token,
# as wide as the experts or the top-k, a few hundred at most, so 1M tokens of them stay far below 2^31 elements.
# `expt` is triton_kernels' abbreviation (`expt_scal`, `expt_indx`).
_ROUTING = re.compile(r"topk|top_k|gating|router|routing|expert|(^|_)expts?(_|$)", re.IGNORECASE)


# A shape suffix names a tensor's dimensions in capitals after its name (`Wl1_ND2H`, `mask_NM`, `q_BHSD`): the
# name is what comes before it. Not a name that is capitals throughout (`BLOCK_M`, `W_QKV`).
_SHAPE_SUFFIX = re.compile(r"(?<=[a-z0-9])_[A-Z][A-Z0-9]*$")


def tensor_name(text: str) -> str:
    """The name a tensor's source text gives it: its last attribute, without subscripts or a shape suffix
    (`self.Wl1_ND2H[0]` -> `Wl1`)."""
    name = text.rpartition(".")[2].split("[")[0]
    return _SHAPE_SUFFIX.sub("", name) if any(c.islower() for c in name) else name


def routing_tensor(text: str | None) -> bool:
    """A tensor named as per-token routing data (`gating_output`, `topk_ids`, `router_logits`)."""
    return text is not None and bool(_ROUTING.search(tensor_name(text)))


# The width of a row of routing data passed as a count: the experts or the top-k (`num_experts`,
# `self.config.num_experts`, `n_expts_act`, `top_k`); not a size of one expert (`expert_hidden_size`).
_ROUTING_WIDTH = re.compile(r"^(num_|n_)?(local_|routed_)?(experts|expts(_act)?|top_?k|experts_per_tok)$", re.IGNORECASE)


def routing_width(text: str) -> bool:
    """`text` names an expert count or a top-k: `token * num_experts` steps over rows of routing data."""
    return bool(_ROUTING_WIDTH.match(tensor_name(text)))


def routing_rows(origin: Origin) -> bool:
    """`origin` is the rows of a 2-D tensor whose other dimension its shape unpacking names as an expert count
    or a top-k (`n_tokens, n_experts = scores.shape`): per-token routing data, as wide as the experts."""
    return (origin.kind == "shape" and origin.index == 0 and len(origin.siblings) == 1
            and bool(_ROUTING.search(origin.siblings[0])))


# Kernels of the routing step of a mixture of experts (DeepSeek's grouped top-k over expert groups, a router or
# gate): their `scores` and `logits` are the router's output, one row of expert scores per token. Not a bare
# `topk` (a sparse-attention indexer takes the top-k of `scores` over the whole context).
_ROUTING_STEP = re.compile(r"group(ed|_limited)_?topk|router|routing|gating|moe_?(fused_)?gate", re.IGNORECASE)
# Their gradients too (`dscores`, `grad_logits`): the same shape.
_SCORES = re.compile(r"^(d_?|grad_?)?(scores?|logits|probs|probabilities)(_|$)", re.IGNORECASE)


def router_scores(text: str | None, *names: str) -> bool:
    """`text` names the scores, logits or probabilities of a routing kernel (one of `names`, the kernel's, its
    file's or its launching function's, says routing: `grouped_topk`, `moe_fused_gate`): one row per token, as
    wide as the experts."""
    return (text is not None and bool(_SCORES.search(tensor_name(text)))
            and any(_ROUTING_STEP.search(name) for name in names))


# The keys and values of attention: `kv_cache`, `key_cache`, `v_caches`, a pool of them (`k_pool`, one layer's
# `k_pool_layer`; not `req_to_token_pool`, an index table), or a tensor named `cache(s)` alone.
# Not state caches of recurrent layers (conv, SSM, per-request draft states), which hold one small entry per
# running request, nor rotary cos/sin caches or the cache's index tensors (`cache_indices`, `cache_loc`).
_KV_CACHE = re.compile(r"((^|_)(k|v|kv|key|value|keys|values)_?(caches?|pools?)|^caches?)(_layers?)?$", re.IGNORECASE)


def kv_cache(text: str) -> bool:
    """A tensor named as the KV cache of attention (`key_cache`, `kv_cache`, `self.k_cache`, `caches`, `v_pool`)."""
    return bool(_KV_CACHE.search(tensor_name(text)))


# The compressed KV latent of multi-head latent attention and its rope key shared by the heads: one narrow row
# per token (DeepSeek's kv_lora_rank 512 and rope dimension 64), so even 1M tokens of them stay below 2^31
# elements (`kv_c`, `k_pe`, `compressed_kv`, `latent_cache`; not `q_pe` or `k_nope`, which are per head).
_LATENT = re.compile(r"^(kv_c|k_pe|kpe|ckv|c_kv|compressed_kv|kv_latent|latent_cache)(_[a-z]+)?$", re.IGNORECASE)


def latent_row(text: str) -> bool:
    """A tensor named as MLA's compressed KV latent or its shared rope key (`kv_c`, `k_pe`): narrow rows."""
    return bool(_LATENT.search(tensor_name(text)))


# The cos/sin tables of rotary embeddings: one row of the rotary dimension (at most a head dimension, 256) per
# position, or per token where gathered; even 1M tokens of them stay below 2^28 elements, so any offset into
# one is far below 2^31 (`cos`, `sin_cached`, `cos_sin_cache`, `freqs_cis`; not `q_rope`, a query's rope part).
_ROTARY = re.compile(r"^(cos|sin|cos_?sin|sin_?cos|freqs?(_cis)?|inv_freq)(_(cache|cached|table|emb|vals?))?$",
                     re.IGNORECASE)


# A name made only of these words, one of them a cosine or sine, is a rotary table: `freqs_cos`, `cos_seq` (a
# slice of the table for the sequence), `rope_sin_cache`; not `cos_sim` or `cosine_scores`.
_TRIG_WORDS = frozenset({"cos", "sin", "cossin", "sincos"})
_ROTARY_WORDS = _TRIG_WORDS | {"freq", "freqs", "rope", "rotary", "pos", "position", "seq", "theta", "cache", "cached",
                               "table", "emb", "val", "vals"}


def rotary_table(text: str) -> bool:
    """A tensor named as a rotary cos/sin table (`cos`, `sin_cached`, `cos_sin_cache`, `freqs_cis`, `freqs_cos`)."""
    name = tensor_name(text)
    words = name.lower().split("_")
    return bool(_ROTARY.search(name)) or bool(_TRIG_WORDS & set(words)) and set(words) <= _ROTARY_WORDS


# One token's features: a head dimension, the hidden or embedding size, a head count (at most 256, 16K and
# 128 for the models people run); not a vocabulary, a class count or an intermediate size.
_FEATURE = re.compile(r"head_?(dim|size)|(^|_)hidden(_?(dim|size))?$|embed(ding)?_?(dim|size)|^n_?embd$|^d_?model$|"
                      r"^(n|num)_?(q_|kv_)?heads?$|^(dim|d|hd|dh)$", re.IGNORECASE)
_WIDE_ROWS = re.compile(r"vocab|logit|lm_head|class|inter|ffn|mlp|^v$", re.IGNORECASE)


def feature_width(origin: Origin) -> bool:
    """The value is one token's feature width: named as a head dimension, hidden or embedding size or head
    count (on the way to the launch or in a shape unpacking), or the last dimension of an activation (`x.shape[-1]`),
    and nowhere named as a vocabulary, an intermediate size, a count of tokens or a sequence length. Below 32,768
    for the models people run (hidden 16K, 128 heads x head dimension 256 at most)."""
    names = origin.all_names()
    if any(_WIDE_ROWS.search(n) or count_like(n) for n in names) or sequence_length(origin):
        return False
    tensor = tensor_name(origin.tensor) if origin.tensor is not None else ""
    if _WIDE_ROWS.search(tensor) or _SCORES.search(tensor):
        return False
    if origin.names and _FEATURE.search(origin.names[0]):
        return True
    return origin.kind == "shape" and origin.last and data_tensor(origin.tensor)


def small_item(name: str) -> bool:
    """A name that says it counts or holds small items: heads (also `H`, `nh` of `H, B, D = k.shape`, the
    convention of attention code), per-request or draft entries, pages, slots, layers (`head_num`, `slot_k`,
    `req_to_token`)."""
    return bool(_SMALL_WORDS.search(name) or re.search("head", name, re.IGNORECASE)
                or re.fullmatch("(n_?)?h", name, re.IGNORECASE))


# Sizes fixed when the model, the server or an index starts: pools (adapter slots, state slots, layers, pages
# and lines of a cache), the degrees of parallelism (EP, TP, ...) and the entries of a codebook (the centroids
# of an IVF index or a quantiser, its codewords), built once.
_POOL_WORDS = re.compile(r"slots?($|_)|layers?($|_)|adapters?|lora|cache_?(lines?|pages?|blocks?|slots?|entries)|"
                         r"pool|^[tepdc]p($|_)|centroids?|codebooks?|codewords?", re.IGNORECASE)


def pool_size(name: str) -> bool:
    """A name that says it counts the entries of a pool allocated at start-up (slots, layers, cache pages), the
    ranks of a parallel group (EP, TP) or the entries of a codebook (`n_centroids`)."""
    return bool(_POOL_WORDS.search(name))


def table(tensor: str) -> bool:
    """A tensor named as a weight, a table (rotary caches, block tables), a pool or a quantised weight."""
    return bool(_TABLES.search(tensor) or _TABLES.search(tensor_name(tensor)))


def model_dimension(name: str) -> bool:
    """A name that says it is a model dimension, a block or a batch: fixed per model or per run."""
    return bool(_MODEL_WORDS.search(name))


def count_like(name: str, rows: bool = True) -> bool:
    """A name that says it counts tokens, rows (unless `rows` is False: a generic word) or sequence
    positions, and is not a flag."""
    match = _COUNT_WORDS.search(name)
    if match is None or _MODEL_WORDS.search(name) or _SMALL_WORDS.search(name) or _FLAG.search(name):
        return False
    return rows or "row" not in match.group(0).lower()


# A batch by name (`B`, `bs`, `batch_size`) as the leading dimension of a shape unpacking of three or more names
# whose other names are all model dimensions (`B, H, D = q_t.shape`: heads and head size, no sequence): the
# tensor holds one small item per batch entry, a decode step's query or a per-request state, far below 2^31
# elements for any batch. Not two names: `B, D = x.shape` is as often tokens flattened into rows of features.
_BATCH = re.compile(r"^(b|bs|bsz|batch|batch_?size|n_?batch)$", re.IGNORECASE)


def batch_of_small_items(origin: Origin) -> bool:
    """`origin` is the batch of `B, H, D = x.shape`: the leading name says batch and every other name of the
    unpacking (two or more) is a model dimension (not `_`, not a sequence or token count)."""
    return (origin.kind == "shape" and origin.index == 0 and bool(origin.names) and len(origin.siblings) >= 2
            and not origin.rows and bool(_BATCH.search(origin.names[-1]))
            and all(model_dimension(name) and not _SEQUENCE_NAMES.search(name) for name in origin.siblings))


# Sequence lengths by the names attention and sequence code gives them (`q_len`, `kv_len`, `max_src_len`), and
# by the letters of the batch-first convention for a middle dimension (`T` of `B, T, C = x.shape`, `L` of
# `b, L, d`, `S` of `B, H, S, D`): not as a leading dimension (`T = rewards.shape[0]` is as often a fixed
# horizon), nor the last one (features), nor a subscript outside that convention (`L = basis.shape[2]`, a
# spherical-harmonic degree fixed per model).
_SEQUENCE_NAMES = re.compile(r"^(max_?)?(q|kv|k|key|query|src|tgt|context|prompt)_?len(gth)?$", re.IGNORECASE)
SEQUENCE_LETTERS = frozenset("TLStlsNn")
_TOKEN_LETTERS = frozenset("Nn")  # only beside no other of SEQUENCE_LETTERS (see sequence_length)
_SEQUENCE_ONLY = SEQUENCE_LETTERS - _TOKEN_LETTERS
# Megatron's query and key sequence lengths (`sq, b, np, hn = q.shape`; `b, sq, d`) and a bare `seq` (`batch, seq,
# d_model = x.shape`), also only as a middle dimension.
_SEQUENCE_ABBREVIATIONS = frozenset({"sq", "sk", "seq", "sequence"})


def sequence_length(origin: Origin) -> bool:
    """A shape named as a sequence length: `q_len = q.shape[0]`, or a middle dimension of a shape unpacking
    named `T`, `L`, `S`, `sq`, `sk`, `seq` or `sequence` (`B, T, C = x.shape`; not `L = basis.shape[2]`, a subscript of any
    tensor), or `N` (einops' `n`) where no other name of the unpacking is one of those and, in three names, the
    last names features (`_features`), in four names or more, one names the heads (the tokens of `B, N, C =
    x.shape`, `B, H, N, D` and `b, h, n, d`; not the heads of `B, N, T, C` or `B, N, MH, D`, nor the state size of `B, N, R`)."""
    if origin.kind != "shape" or not origin.names:
        return False
    if any(_SEQUENCE_NAMES.search(name) for name in origin.names):
        return True
    last = origin.names[-1]
    if last in _TOKEN_LETTERS:  # in four names or more only beside the heads (`B, N, H, D`; not the heads of `B, N, MH, D`)
        return origin.middle and not any(_sequence_letter(sibling) for sibling in origin.siblings) \
            and (len(origin.siblings) == 2 and _features(origin.siblings[-1])
                 or any(_HEADS.search(sibling) for sibling in origin.siblings))
    return origin.middle and any(_sequence_letter(name) for name in origin.names)  # also `T = T_plus_1 - 1`


def _features(name: str) -> bool:
    """The last name of `B, N, C = x.shape` as tokens' features: a channel or feature letter, a model dimension
    by name, or `_` (not the rank `R` of a low-rank state `B, N, R`, whose `N` is a state size)."""
    return name.upper() in _FEATURE_LETTERS or name == "_" or model_dimension(name)


_FEATURE_LETTERS = frozenset("CDEFHK")


def _sequence_letter(name: str) -> bool:
    """`T`, `sq`, `seq`, also as the longest of a padded batch (`maxT` of `B, maxT, maxU, V = log_probs.shape`)."""
    bare = name[4:] if name[:4].lower() == "max_" else name[3:] if name[:3].lower() == "max" else name
    return bare in _SEQUENCE_ONLY or bare.lower() in _SEQUENCE_ABBREVIATIONS


_HEADS = re.compile(r"^(n_?|num_?)?((q|k|kv|v)_?)?(h|head|heads|nh)(_?(q|k|kv|v|qo))?$", re.IGNORECASE)  # H_q, nheads


def sequence_count(origin: Origin) -> bool:
    """A sequence length by `sequence_length`, or a value whose nearest name says so (`seq_len`, `max_seqlen`)."""
    return sequence_length(origin) or any("seq" in name.lower() for name in origin.names[:1])


def data_tensor(text: str | None) -> bool:
    """A tensor of data, not of offsets, indices, lengths, masks or scales (by its name)."""
    return text is not None and not _METADATA.search(tensor_name(text))


def large_count(origin: Origin) -> str | None:
    """Why a value may exceed 65,535 on the host: the element count of a data tensor, the rows of a tensor
    flattened to rows (or numel // last dimension), a shape or parameter named as a token, row or sequence
    count, or a product with one of those. Not: ceiling divisions by a block (they stay small for counts
    that fit in memory), counts of index or offset tensors (one entry per sequence or group), values that
    pass through a name of a model dimension, batch, request or per-item count."""
    # The row count of a tensor flattened to rows is one by its making: a `_size` name only styles it (`m_size, k_size =
    # x.view(-1, x.shape[-1]).shape`), where other model words (`hidden`, `batch`) still say what it counts.
    flattened = origin.kind == "shape" and origin.rows
    # The row count of a tensor flattened to rows, by its making: a name of a few sequences (`n_seq = x.numel() //
    # in_f`) does not make it small.
    rows = flattened or origin.kind == "cdiv" and origin.rows
    if any(_MODEL_WORDS.search(n) and not (flattened and _STYLED_SIZE.search(n)) or _SMALL_WORDS.search(n) and not rows
           for n in origin.names):
        return None
    if origin.kind == "numel":
        if not data_tensor(origin.tensor):
            return None
        return f"{origin.describe()} counts every element of `{origin.tensor}`"
    if origin.kind == "shape" and origin.rows:
        return f"{origin.describe()} is the row count of `{origin.tensor}` flattened to rows"
    if origin.kind == "shape" and origin.index == 0 and origin.siblings and _vocabulary(origin.siblings[-1], origin.tensor):
        if len(origin.siblings) > 1:  # `seq_len, batch, vocab = logits.shape`: each item holds several tokens' rows
            return (f"{origin.describe()} counts the items of `{origin.tensor}`, each `{' * '.join(origin.siblings)}` "
                    f"wide: rows of tokens as wide as the vocabulary `{origin.siblings[-1]}`")
        return (f"{origin.describe()} counts the rows of `{origin.tensor}`, each as wide as the vocabulary "
                f"`{origin.siblings[-1]}`: one row per token")
    if origin.kind == "cdiv":
        return f"{origin.describe()} is the row count numel // last dimension" if origin.rows else None
    if origin.kind == "product":  # named whole, so that a note does not read as if the factor were the count
        why = next((why for part in origin.parts if (why := large_count(part))), None)
        if why is None:
            why = _batch_by_sequence(origin)
        return f"{origin.describe()}, where {why}" if why is not None else None
    if origin.kind in ("shape", "param") and origin.names and count_like(origin.names[0], rows=False):
        return f"{origin.describe()} is a {_word(origin.names[0])}"
    return None


def _batch_by_sequence(origin: Origin) -> str | None:
    """A product of a tensor's leading dimension and its sequence length (`batch * seq` of `batch, seq, n, dim =
    H.shape`): every token of the batch."""
    parts = [p for p in origin.parts if p.kind == "shape" and p.tensor is not None]
    for sequence in (p for p in parts if sequence_length(p)):
        if any(p.index == 0 and p.tensor == sequence.tensor for p in parts):
            return f"{sequence.describe()} is the sequence length of `{sequence.tensor}`, so the product counts its tokens"
    return None


_HEIGHT = re.compile(r"^(h|height|img_?h|(in|out|o|i)_?h|h_?(in|out|o|i))\d?$", re.IGNORECASE)
_WIDTH = re.compile(r"^(w|width|img_?w|(in|out|o|i)_?w|w_?(in|out|o|i))\d?$", re.IGNORECASE)


def _factors(origin: Origin) -> list[Origin]:
    return [f for part in origin.parts for f in _factors(part)] if origin.kind == "product" else [origin]


def pixel_count(origin: Origin) -> str | None:
    """`H * W` (`height * width`, `OutH * OutW`): a product of an image's height and width, each a dimension
    of a tensor of three or more (`B, C, H, W = x.shape`), a parameter so named, or a value computed so named
    (`OutH = H - K + 1`), not a literal or a constant. 256 x 256 is 65,536 pixels."""
    def named(factor: Origin, pattern: re.Pattern[str]) -> bool:
        return bool(factor.names) and bool(pattern.match(factor.names[0])) and (
            factor.kind not in ("shape", "literal", "constant", "bounded") or len(factor.siblings) >= 2)
    if origin.kind != "product" or any(_SMALL_WORDS.search(n) for n in origin.names):
        return None
    factors = _factors(origin)
    height = next((f for f in factors if named(f, _HEIGHT)), None)
    width = next((f for f in factors if named(f, _WIDTH)), None)
    if height is None or width is None:
        return None
    return (f"{origin.describe()} counts the pixels of an image, `{height.names[0]}` x `{width.names[0]}`: "
            "256 x 256 already makes 65,536")


_VOCABULARY = re.compile(r"vocab", re.IGNORECASE)
_LOGITS = re.compile(r"logit", re.IGNORECASE)


def _vocabulary(dimension: str, tensor: str | None) -> bool:
    """A last dimension named as a vocabulary, or `V` of a tensor of logits (`M, V = logits.shape`)."""
    return bool(_VOCABULARY.search(dimension)) or dimension == "V" and bool(tensor and _LOGITS.search(tensor))


def _word(name: str) -> str:
    """What a count-like name counts, as a noun phrase: `a token count`, `a sequence length`."""
    lowered = name.lower()
    return "token count" if "tok" in lowered else "row count" if "row" in lowered else "sequence length"


def _item_count(origin: Origin) -> bool:
    """A count of items whatever its name: a tensor's leading dimension (`batch = lens.shape[0]`)."""
    return origin.kind == "shape" and origin.index == 0 and not origin.rows


COARSE_BUCKET = 1024


def varies_with_input(origin: Origin) -> str | None:
    """Why a value changes from call to call: a shape, numel or len of an input (or a count by name), not
    bucketed by next_power_of_2 or bounded by a constant. Model dimensions (head, hidden, expert counts by
    name; the last dimension) are not: they change with the model, not the call."""
    if origin.kind in ("bucket", "bounded", "literal", "constant"):
        return None
    # A name says a model dimension, except of the rows of a tensor flattened to rows, which count every leading
    # dimension (`batch_num = x.view(-1, d).shape[0]`: batch times sequence)
    if any(_MODEL_WORDS.search(n) and not (origin.kind == "shape" and origin.rows and batch_word(n))
           or _FLAG.search(n) for n in origin.names):
        return None
    if origin.tensor is not None and table(origin.tensor):
        return None
    if origin.kind == "numel":
        if origin.tensor is not None and origin.tensor.endswith("]"):
            return None  # the size of one item (`state[0].numel()`): a model dimension
        return f"{origin.describe()}, the element count of `{origin.tensor}`"
    if origin.kind == "shape":
        if origin.rows:
            return f"{origin.describe()}, the row count of `{origin.tensor}` flattened to rows"
        if origin.names and count_like(origin.names[0]):
            return f"{origin.describe()}, a {_word(origin.names[0])}"
        if sequence_length(origin):
            return f"{origin.describe()}, a sequence length"
        if origin.index == 0:
            return f"{origin.describe()}, the leading dimension of `{origin.tensor}`"
        return None
    if origin.kind == "len":
        return f"{origin.describe()}" if origin.names and count_like(origin.names[0]) else None
    if origin.kind == "total":
        return f"`{origin.text}`, a running total over the items of `{origin.tensor}`, which the caller passes"
    if origin.kind == "content":
        return f"{origin.describe()}, read from the values of `{origin.tensor}` on each call"
    if origin.kind == "cdiv" and (origin.divisor or 0) >= COARSE_BUCKET:
        return None  # a coarse bucket, such as fla's cdiv(T, 2048 * 32): few distinct values
    if origin.kind == "cdiv" and len(origin.parts) == 2 and (varies_with_input(origin.parts[1])
                                                             or _item_count(origin.parts[1])):
        return None  # a size over a count of items (`packed_k.shape[0] // rows`, `tokens // batch`): per item
    if origin.kind in ("cdiv", "product"):
        return next((why for part in origin.parts[:1 if origin.kind == "cdiv" else None]
                     if (why := varies_with_input(part))), None)
    return None  # a caller's parameter by its name alone: as often a flag or a configured limit as a size


# ---- launches -------------------------------------------------------------------------------------------------
def grid_axes(host: HostScope, launch: LaunchSite) -> tuple[list[ast.expr], str | None] | None:
    """The launch grid's axis expressions and the META parameter name of a grid lambda or function, when
    the grid is a tuple, or a lambda / local function / local variable that gives one."""
    grid: ast.expr | None = launch.grid
    for _ in range(3):
        if isinstance(grid, (ast.Tuple, ast.List)):
            return list(grid.elts), None
        if isinstance(grid, ast.Lambda):
            meta = grid.args.args[0].arg if grid.args.args else None
            body = grid.body
            return (list(body.elts), meta) if isinstance(body, (ast.Tuple, ast.List)) else None
        if not isinstance(grid, ast.Name):
            return None
        definition = host.function_def(grid.id)
        if definition is not None:
            returns = [n.value for n in walk(definition) if isinstance(n, ast.Return) and n.value is not None]
            if len(returns) != 1 or not isinstance(returns[0], (ast.Tuple, ast.List)):
                return None
            meta = definition.args.args[0].arg if definition.args.args else None
            return list(returns[0].elts), meta
        grid = host.value_reaching(grid.id, launch.line)  # `grid = ...` assigned again for a later launch
    return None
