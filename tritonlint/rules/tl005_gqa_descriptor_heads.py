"""TL005: a TMA descriptor over a K or V tensor whose shape uses the query head count in GQA/MQA code.

The analysis works on the function that builds the descriptor (a host function for `TensorDescriptor(...)`,
a jit function for `tl.make_tensor_descriptor(...)`): which tensor the descriptor covers, what its shape
multiplies, and what this function calls its query head count, its KV head count and its group size.
Names say a lot (`num_kv_heads`, `QUERY_GROUP_SIZE`), and where a name comes from says more
(`B, H, S, D = q.shape` is the query head count, `Hkv = k.shape[1]` the KV one, `H // GROUP` a KV head
count). Anything ambiguous (an `H` beside an explicit `HQ`, separate value heads, K/V expanded to the query
heads) makes the condition stay silent.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from tritonlint.analysis.model import ModuleModel
from tritonlint.context import MatchContext, RawEdits, Verdict, condition, fixer
from tritonlint.prefilter import Token
from tritonlint.walk import children, walk

QUERY, KV, GROUP, GENERIC, VALUE = "query", "kv", "group", "generic", "value"
# Names (compared in lower case) and the head count they denote in attention code.
VOCABULARY: dict[str, frozenset[str]] = {
    QUERY: frozenset({
        "hq", "h_q", "nhq", "num_q_heads", "n_q_heads", "num_query_heads", "num_heads_q", "nheads_q", "n_heads_q",
        "num_qo_heads", "q_heads", "num_q_head", "q_head_num", "num_attention_heads",
    }),
    KV: frozenset({
        "h_kv", "hkv", "h_k", "hk", "nkv", "nhkv", "num_kv_heads", "n_kv_heads", "kv_heads", "num_kv_head",
        "n_kv_head", "nheads_kv", "nheads_k", "num_heads_kv", "num_heads_k", "n_heads_kv", "num_key_value_heads",
        "num_k_heads", "kv_head_num", "kv_num_heads", "num_kv",
    }),
    GROUP: frozenset({
        "query_group_size", "group", "group_size", "kv_group_num", "kv_group_size", "num_queries_per_kv",
        "queries_per_kv", "num_q_per_kv", "q_per_kv", "gqa_group_size", "gqa_group", "gqa_ratio", "n_rep",
        "num_key_value_groups", "heads_per_kv", "num_heads_per_kv", "num_kv_groups", "kv_groups", "q_group_size",
    }),
    # A bare head count: the query one in GQA code unless the function also names an explicit query count.
    GENERIC: frozenset({
        "h", "nh", "n_h", "num_heads", "n_heads", "nheads", "n_head", "num_head", "nhead", "heads", "head_num",
        "num_attn_heads",
    }),
    # Separate value heads (grouped value attention in linear attention): K shares the query heads there.
    VALUE: frozenset({"hv", "h_v", "num_v_heads", "n_v_heads", "nheads_v", "num_heads_v", "num_value_heads", "v_heads"}),
}
HEAD_ROLES = (QUERY, KV, GENERIC, VALUE)
# Group names that also mean other things (a GEMM's tile swizzle group): a group size only where the function
# divides a head index or count by them (`off_h // GROUP_SIZE`, `H // GROUP`).
AMBIGUOUS_GROUP = frozenset({"group", "group_size"})
HEAD_INDEX = re.compile(r"(^|_)(h|hq|qh|head|heads|nh)(_|$)|head", re.IGNORECASE)
_SUFFIXES = r"(_?(cache|caches|ptr|ptrs|pointer|base|buf|buffer|tensor|states?|in|input|data|t|tile))*"
# `desc_k` / `k_desc`: the tutorial's name for a K pointer or the descriptor made from it.
KV_TENSOR = re.compile(rf"^(desc_)?(k|v|key|value|keys|values){_SUFFIXES}(_desc)?$", re.IGNORECASE)
Q_TENSOR = re.compile(rf"^(desc_)?(q|query|queries){_SUFFIXES}(_desc)?$", re.IGNORECASE)
EXPANDING = re.compile(r"repeat|expand|broadcast", re.IGNORECASE)  # K/V widened to the query heads
VIEW_METHODS = frozenset({
    "view", "reshape", "contiguous", "flatten", "unflatten", "transpose", "permute", "squeeze", "unsqueeze",
    "detach", "narrow", "select", "to",
})
# Descriptor constructors whose shape is an argument (`base, shape, strides, block_shape, ...`).
CONSTRUCTORS = frozenset({
    "triton.tools.tensor_descriptor.TensorDescriptor",
    "triton.language.make_tensor_descriptor",
    "triton.language._experimental_make_tensor_descriptor",
})
# Packages re-export Triton's in-kernel constructor under its own name from a compatibility module.
IMPORTED_ALIASES = frozenset({"make_tensor_descriptor", "_experimental_make_tensor_descriptor"})
MAX_DEPTH = 4


@dataclass(frozen=True)
class ShapeItem:
    """`name` is element `index` of `tensor.shape` (from `B, H, S, D = q.shape` or `H = q.shape[1]`)."""
    tensor: str
    index: int
    ndim: int | None


@dataclass(frozen=True)
class Bound:
    """What a name is bound to where a descriptor's shape uses it."""
    value: ast.expr | ShapeItem | None  # None: bound in a way this analysis does not follow
    line: int


def _key(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"  # self.num_kv_heads, cfg.num_heads
    return None


def _vocabulary_role(key: str) -> str | None:
    word = key.rpartition(".")[2].lower()
    return next((role for role, words in VOCABULARY.items() if word in words), None)


def _tensor_kind(name: str) -> str | None:
    word = name.rpartition(".")[2]
    return KV if KV_TENSOR.match(word) else QUERY if Q_TENSOR.match(word) else None


def _shape_source(node: ast.expr) -> tuple[str, int] | None:
    """(tensor, start) for `X.shape`, `X.shape[a:]`, `X.size()`; the start index for unpacking."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) and node.slice.step is None:
        inner = _shape_source(node.value)
        lower = node.slice.lower
        if inner is None or (lower is not None and not (isinstance(lower, ast.Constant) and isinstance(lower.value, int))):
            return None
        return inner[0], lower.value if lower is not None else 0  # type: ignore[return-value]
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        key = _key(node.value)
        return (key, 0) if key else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size" and not node.args:
        key = _key(node.func.value)
        return (key, 0) if key else None
    return None


def shape_index(node: ast.expr) -> tuple[str, int] | None:
    """(tensor, index) for `X.shape[i]` and `X.size(i)` with a literal index."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
        tensor, index = _key(node.value.value), node.slice
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size"
          and len(node.args) == 1 and not node.keywords):
        tensor, index = _key(node.func.value), node.args[0]
    else:
        return None
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub) and isinstance(index.operand, ast.Constant):
        value = -index.operand.value if isinstance(index.operand.value, int) else None
    else:
        value = index.value if isinstance(index, ast.Constant) and isinstance(index.value, int) else None
    return (tensor, value) if tensor and isinstance(value, int) else None


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function body, without nested functions, lambdas and classes."""
    stack = children(function)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        stack.extend(children(node))


class HeadScope:
    """What one function calls its head counts and how its names are bound."""

    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        args = function.args
        self.params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
        self.bindings: dict[str, list[Bound]] = {}
        self.attributes: set[str] = set()
        self.head_divisors: set[str] = set()
        for node in _own_nodes(function):
            self._collect(node)
        self._raw: dict[str, str | None] = {}
        raw = [self.raw_role(k) for k in [*self.params, *self.bindings, *sorted(self.attributes)]]
        self.gqa = KV in raw or GROUP in raw
        self.explicit_query = QUERY in raw
        self.value_heads = VALUE in raw

    def _bind(self, name: str, value: ast.expr | ShapeItem | None, line: int) -> None:
        self.bindings.setdefault(name, []).append(Bound(value, line))

    def _collect(self, node: ast.AST) -> None:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv) and isinstance(node.right, ast.Name) and \
                any(HEAD_INDEX.search(n.id) for n in walk(node.left) if isinstance(n, ast.Name)):
            self.head_divisors.add(node.right.id)
        if isinstance(node, ast.Attribute) and _key(node) and _vocabulary_role(_key(node)) is not None:  # type: ignore[arg-type]
            self.attributes.add(_key(node))  # type: ignore[arg-type]
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self._bind_target(target, node.value, node.lineno)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            self._bind(node.target.id, node.value, node.lineno)
        elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr, ast.withitem)):
            bound: ast.expr | None = node.optional_vars if isinstance(node, ast.withitem) else node.target
            for name in walk(bound) if bound is not None else ():
                if isinstance(name, ast.Name):
                    self._bind(name.id, None, getattr(node, "lineno", 0))

    def _bind_target(self, target: ast.expr, value: ast.expr, line: int) -> None:
        if isinstance(target, ast.Name):
            self._bind(target.id, value, line)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            source = _shape_source(value)
            starred = any(isinstance(e, ast.Starred) for e in target.elts)
            for position, element in enumerate(target.elts):
                if isinstance(element, ast.Name):
                    item = ShapeItem(source[0], source[1] + position, None if starred else len(target.elts)) \
                        if source is not None and not starred else None
                    self._bind(element.id, item, line)
                else:
                    for name in walk(element):
                        if isinstance(name, ast.Name):
                            self._bind(name.id, None, line)

    # ---- roles -----------------------------------------------------------------------------------------
    def single(self, name: str) -> Bound | None:
        """The one binding of a local that is bound once and is not a parameter."""
        bound = self.bindings.get(name, [])
        return bound[0] if len(bound) == 1 and name not in self.params else None

    def raw_role(self, key: str) -> str | None:
        """The head count a name denotes, from how it is bound and then from its name; a bare head count
        (GENERIC) is left unresolved."""
        if key not in self._raw:
            self._raw[key] = None  # recursion guard
            self._raw[key] = self._derive_role(key)
        return self._raw[key]

    def _derive_role(self, key: str) -> str | None:
        vocabulary = _vocabulary_role(key)
        if vocabulary == GROUP and key.lower() in AMBIGUOUS_GROUP and key not in self.head_divisors:
            vocabulary = None
        bound = self.bindings.get(key, [])
        if not bound or "." in key:
            return vocabulary
        roles = {self._bound_role(key, b, vocabulary) for b in bound}
        if key in self.params:
            roles.add(vocabulary)
        return roles.pop() if len(roles) == 1 else None

    def _bound_role(self, key: str, bound: Bound, vocabulary: str | None) -> str | None:
        value = bound.value
        item = value if isinstance(value, ShapeItem) else None
        if isinstance(value, ast.expr) and shape_index(value) is not None:
            tensor, index = shape_index(value)  # type: ignore[misc]
            item = ShapeItem(tensor, index, None)
        if item is not None:
            if vocabulary not in (QUERY, KV, GENERIC):
                return vocabulary  # value heads stay value heads, whatever tensor they are read from
            kind = _tensor_kind(item.tensor)
            return kind if kind in (QUERY, KV) else vocabulary
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "int" and len(value.args) == 1:
            value = value.args[0]
        if isinstance(value, (ast.Name, ast.Attribute)) and _key(value):
            return self.raw_role(_key(value)) or vocabulary  # type: ignore[arg-type]
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.FloorDiv):
            left, right = self._operand_role(value.left), self._operand_role(value.right)
            if left in (QUERY, GENERIC) and right == GROUP:
                return KV
            if left in (QUERY, GENERIC) and right == KV:
                return GROUP
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult) and \
                {self._operand_role(value.left), self._operand_role(value.right)} == {KV, GROUP}:
            return QUERY
        return vocabulary

    def _operand_role(self, node: ast.expr) -> str | None:
        key = _key(node)
        return self.raw_role(key) if key else None

    def role(self, key: str) -> str | None:
        """The resolved role: a bare head count is the query head count in GQA code that names no explicit
        query head count and no separate value heads."""
        raw = self.raw_role(key)
        if raw == GENERIC:
            return QUERY if self.gqa and not self.explicit_query and not self.value_heads else None
        return raw

    def head_index(self, tensor: str) -> int | None:
        """Which shape index holds the heads, from `B, H, S, D = tensor.shape` or `H = tensor.shape[1]`;
        from another attention tensor of this function when `tensor` says nothing."""
        found: dict[str, set[int]] = {}
        for name, bounds in self.bindings.items():
            if self.raw_role(name) not in HEAD_ROLES:
                continue
            for bound in bounds:
                item = bound.value if isinstance(bound.value, ShapeItem) else None
                if isinstance(bound.value, ast.expr) and shape_index(bound.value) is not None:
                    item = ShapeItem(*shape_index(bound.value), None)  # type: ignore[misc, call-arg]
                if item is None or _tensor_kind(item.tensor) is None:
                    continue
                index = item.index + item.ndim if item.index < 0 and item.ndim else item.index
                found.setdefault(item.tensor, set()).add(index)
        own = found.get(tensor)
        if own is not None:
            return next(iter(own)) if len(own) == 1 else None
        others = set().union(*found.values()) if found else set()
        return next(iter(others)) if len(others) == 1 else None

    def available(self, name: str, line: int) -> bool:
        """`name` holds its one value at `line`: a parameter never rebound, or a local bound once before."""
        if name in self.params:
            return name not in self.bindings
        bound = self.single(name)
        return bound is not None and bound.line < line

    def names_with(self, role: str) -> list[str]:
        keys = [*self.params, *self.bindings, *sorted(self.attributes)]
        return [k for k in dict.fromkeys(keys) if self.raw_role(k) == role]


# ---- the descriptor ------------------------------------------------------------------------------------
@dataclass
class Finding:
    """A K/V descriptor sized with the query head count, and the head count to use."""
    tensor: str
    factor: ast.expr  # the query head count in the shape
    query_heads: str
    kv_heads: str  # the KV head count to use instead
    via: ast.Name | None = None  # the local the factor comes through (`y_dim = Z * H * N_CTX`)
    dim: ast.expr | None = None  # the shape element that holds the factor (or `via`)
    whole_shape: bool = False  # the shape is `q.shape` itself
    notes: list[str] = field(default_factory=list)


def _enclosing_function(tree: ast.Module, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function definition around `node`."""
    around = [f for f in walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
              and f.lineno <= node.lineno and node.end_lineno <= (f.end_lineno or 0)]  # type: ignore[attr-defined]
    return max(around, key=lambda f: f.lineno, default=None)


@dataclass(frozen=True)
class Signature:
    """Where a descriptor-making callable takes the base and the shape."""
    params: tuple[str, ...]  # positional parameters
    base: str
    shape: str


TRITON_SIGNATURE = Signature(("base", "shape"), "base", "shape")


def _signature(model: ModuleModel, func: ast.expr, follow_wrappers: bool = True) -> Signature | None:
    """The signature of a descriptor constructor a callee names: Triton's, a module-level alias such as
    `make_tensor_descriptor = tl.make_tensor_descriptor` (often inside try/except), the same name imported
    from a compatibility module, or a jit helper of this module that forwards its own parameters to one
    (the Triton tutorial's `_maybe_make_tensor_desc(desc_or_ptr, shape, strides, block_shape)`)."""
    if model.qualify(func) in CONSTRUCTORS:
        return TRITON_SIGNATURE
    if not isinstance(func, ast.Name):
        return None
    if func.id in IMPORTED_ALIASES and model.imports.get(func.id, "").endswith(f".{func.id}"):
        return TRITON_SIGNATURE  # `from fla.ops.utils.op import make_tensor_descriptor`
    aliases, wrappers = set(), []
    for stmt in _module_level(model.tree):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == func.id:
            wrappers.append(stmt)
        elif isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == func.id for t in stmt.targets):
            aliases.add(model.qualify(stmt.value))
    if aliases and aliases <= set(CONSTRUCTORS) and not wrappers:
        return TRITON_SIGNATURE
    if follow_wrappers and len(wrappers) == 1 and not aliases:
        return _forwarding_signature(model, wrappers[0])
    return None


def _module_level(tree: ast.Module) -> Iterator[ast.AST]:
    """Module-level statements, also inside module-level if/try/with blocks; function bodies excluded."""
    stack: list[ast.AST] = list(tree.body)
    while stack:
        stmt = stack.pop()
        yield stmt
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(child for child in ast.iter_child_nodes(stmt) if isinstance(child, (ast.stmt, ast.excepthandler)))


def _forwarding_signature(model: ModuleModel, wrapper: ast.FunctionDef | ast.AsyncFunctionDef) -> Signature | None:
    params = tuple(a.arg for a in wrapper.args.posonlyargs + wrapper.args.args)
    for call in walk(wrapper):
        if isinstance(call, ast.Call) and _signature(model, call.func, follow_wrappers=False) is TRITON_SIGNATURE:
            base, shape = _argument(call, TRITON_SIGNATURE, "base"), _argument(call, TRITON_SIGNATURE, "shape")
            if isinstance(base, ast.Name) and isinstance(shape, ast.Name) and {base.id, shape.id} <= set(params):
                return Signature(params, base.id, shape.id)
    return None


def _argument(call: ast.Call, signature: Signature, role: str) -> ast.expr | None:
    name = signature.base if role == "base" else signature.shape
    keyword = next((k.value for k in call.keywords if k.arg == name), None)
    if keyword is not None:
        return keyword
    position = signature.params.index(name)
    if any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
        return None
    return call.args[position] if len(call.args) > position else None


class DescriptorAnalysis:
    def __init__(self, scope: HeadScope, call: ast.Call, base: ast.expr, shape: ast.expr) -> None:
        self.scope = scope
        self.call = call
        self.base = base
        self.shape = shape

    def tensor_roots(self, node: ast.expr, depth: int = 0) -> list[str] | None:
        """The names a descriptor base derives from (a tensor, its views, a pointer plus offsets); None when
        one of them is K/V widened to the query heads."""
        while True:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in VIEW_METHODS:
                node = node.func.value
            elif isinstance(node, ast.Subscript):
                node = node.value
            else:
                break
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            left, right = self.tensor_roots(node.left, depth), self.tensor_roots(node.right, depth)
            return None if left is None or right is None else left + right
        key = _key(node)
        if key is None:
            return []
        roots = [key]
        for bound in self.scope.bindings.get(key, []):
            value = bound.value
            if not isinstance(value, ast.expr) or _inside(self.call, value):
                continue  # `desc_k = make_desc(desc_k, ...)` rebinds the base to this very descriptor
            if any(isinstance(c, ast.Call) and EXPANDING.search(ast.unparse(c.func)) for c in walk(value)):
                return None
            if any(self.scope.role(k) == QUERY for k in map(_key, walk(value)) if k):  # type: ignore[arg-type]
                return None  # allocated or viewed with the query head count: the shape matches the tensor
            if depth < MAX_DEPTH and self.scope.single(key) is not None:
                deeper = self.tensor_roots(value, depth + 1)
                if deeper is None:
                    return None
                roots += deeper
        return roots

    def kv_tensor(self) -> str | None:
        roots = self.tensor_roots(self.base)
        if not roots:
            return None
        kinds = [_tensor_kind(r) for r in roots]
        if QUERY in kinds or KV not in kinds:
            return None
        return roots[kinds.index(KV)]

    def query_factor(self, node: ast.expr, depth: int = 0) -> tuple[ast.expr, ast.Name | None] | None:
        """The query head count multiplied into a shape element, and the local it comes through."""
        key = _key(node)
        if key is not None:
            if self.scope.role(key) == QUERY:
                return node, None
            bound = self.scope.single(key) if isinstance(node, ast.Name) else None
            if bound is not None and isinstance(bound.value, ast.expr) and depth < MAX_DEPTH:
                found = self.query_factor(bound.value, depth + 1)
                if found is not None:
                    return found[0], node  # type: ignore[return-value]
            return None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            return self.query_factor(node.left, depth) or self.query_factor(node.right, depth)
        indexed = shape_index(node)
        if indexed is not None and _tensor_kind(indexed[0]) == QUERY:
            head = self.scope.head_index(indexed[0])
            if head is not None and indexed[1] == head:
                return node, None
        return None

    def dims(self) -> tuple[list[ast.expr], bool] | ast.expr | None:
        """The shape's elements and whether they are written in the call, or a `q.shape` used whole."""
        node, inline = self.shape, True
        for _ in range(MAX_DEPTH):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple") \
                    and len(node.args) == 1:
                node = node.args[0]
            if isinstance(node, (ast.List, ast.Tuple)):
                return list(node.elts), inline
            source = _shape_source(node)
            if source is not None and source[1] == 0 and not isinstance(node, ast.Subscript):
                return node if _tensor_kind(source[0]) == QUERY else None
            bound = self.scope.single(node.id) if isinstance(node, ast.Name) else None
            if bound is None or not isinstance(bound.value, ast.expr):
                return None
            node, inline = bound.value, False
        return None

    def kv_heads(self, factor: ast.expr, line: int, tensor: str) -> tuple[str | None, bool]:
        """The KV head count to use instead of `factor`, and whether it is valid at `line` (for a fix)."""
        options: list[tuple[str | None, bool]] = []
        for name in self.scope.names_with(KV):
            options.append((name, self.scope.available(name, line) or "." in name))
        factor_text = ast.unparse(factor)
        for group in self.scope.names_with(GROUP):
            options.append((f"{factor_text} // {group}", self.scope.available(group, line) or "." in group))
        indexed = shape_index(factor)
        if indexed is not None and isinstance(self.base, ast.Name) and self.base.id == tensor:
            options.append((f"{tensor}.shape[{indexed[1]}]", True))
        usable = [o for o in options if o[1]]
        return (usable or options or [(None, False)])[0]

    def find(self) -> Finding | None:
        tensor = self.kv_tensor()
        if tensor is None or not self.scope.gqa or self.scope.value_heads:
            return None
        shape = self.dims()
        if isinstance(shape, ast.expr):  # TensorDescriptor(k, shape=q.shape, ...)
            finding = Finding(tensor, shape, ast.unparse(shape), f"{tensor}.shape", whole_shape=True)
            if not (isinstance(self.base, ast.Name) and self.base.id == tensor and _inside(shape, self.call)):
                finding.notes.append(f"No fix offered: write the shape of `{tensor}` itself in this call.")
                finding.dim = None
            else:
                finding.dim = shape
            return finding
        if shape is None:
            return None
        dims, inline = shape
        for dim in dims:
            found = self.query_factor(dim)
            if found is None:
                continue
            factor, via = found
            kv, _ = self.kv_heads(factor, self.call.lineno, tensor)
            if kv is None:
                return None
            finding = Finding(tensor, factor, ast.unparse(factor), kv, via, dim)
            if not inline:
                finding.notes.append("No fix offered: the shape is built outside this call; change the K/V shape there.")
                finding.dim = None
            return finding
        return None


def analyse(ctx: MatchContext) -> tuple[Finding, DescriptorAnalysis] | None:
    call = ctx.ast_node(types=(ast.Call,))
    if not isinstance(call, ast.Call):
        return None
    signature = _signature(ctx.model, call.func)
    if signature is None:
        return None
    base, shape = _argument(call, signature, "base"), _argument(call, signature, "shape")
    function = _enclosing_function(ctx.file.tree, call)
    if base is None or shape is None or function is None:
        return None
    analysis = DescriptorAnalysis(HeadScope(function), call, base, shape)
    finding = analysis.find()
    return None if finding is None else (finding, analysis)


def _descriptor_name(tree: ast.Module, call: ast.Call) -> str:
    for node in walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is call:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                return f"TMA descriptor `{targets[0].id}`"
    return "This TMA descriptor"


@condition("kv-descriptor-uses-query-heads",
           provides=("descriptor", "tensor", "uses", "instead", "via"),
           prefilter=lambda args: Token("escriptor"))  # every constructor, alias and wrapper spells it
def kv_descriptor_uses_query_heads(ctx: MatchContext) -> Verdict | None:
    """A TMA descriptor (host TensorDescriptor or in-kernel tl.make_tensor_descriptor) covers a K or V tensor
    of GQA/MQA code (the function names a KV head count or a group size), and its shape multiplies the query
    head count. Silent when the head counts or the tensor are ambiguous."""
    result = analyse(ctx)
    if result is None:
        return None
    finding, analysis = result
    via = ""
    if finding.via is not None:
        bound = analysis.scope.single(finding.via.id)
        via = f" through `{finding.via.id} = {ast.unparse(bound.value)}`" if bound and isinstance(bound.value, ast.expr) else ""
    return Verdict(
        vars={
            "descriptor": _descriptor_name(ctx.file.tree, analysis.call),
            "tensor": finding.tensor,
            "uses": (f"the query tensor's shape `{finding.query_heads}`" if finding.whole_shape
                     else f"the query head count `{finding.query_heads}`"),
            "instead": (f"`{finding.kv_heads}`" if finding.whole_shape
                        else f"the KV head count `{finding.kv_heads}`"),
            "via": via,
        },
        data={"finding": finding, "analysis": analysis},
        notes=list(finding.notes),
    )


@fixer("descriptor-kv-heads")
def descriptor_kv_heads(ctx: MatchContext, verdict: Verdict) -> RawEdits | None:
    """Replace the query head count in the descriptor's shape with the KV head count the function already
    has (`num_kv_heads`, `H // GROUP`, `k.shape[1]`); no fix when the shape is built outside the call or
    the KV head count is not bound yet at the call."""
    finding: Finding | None = verdict.data.get("finding")
    analysis: DescriptorAnalysis | None = verdict.data.get("analysis")
    if finding is None or analysis is None:
        return None
    file = ctx.file
    if finding.dim is None or not _inside(finding.via or finding.factor, analysis.call):
        return None  # the shape is built outside this call (the finding's note says so)
    if finding.whole_shape:
        start, end = file.span_of(finding.factor)
        return [(start, end, finding.kv_heads)]
    line = analysis.call.lineno
    kv, usable = analysis.kv_heads(finding.factor, line, finding.tensor)
    if kv is None or not usable:
        verdict.notes.append(f"No fix offered: `{finding.kv_heads}` is not bound yet where the descriptor is built.")
        return None
    if finding.via is None:
        replacement = _wrap(kv, finding.factor is not finding.dim)
        start, end = file.span_of(finding.factor)
        return [(start, end, replacement)]
    # The factor comes through a local (`y_dim = Z * H * N_CTX`) that other descriptors share: write the
    # expression out in this shape, with the KV head count, when every name in it means the same here.
    bound = analysis.scope.single(finding.via.id)
    if bound is None or not isinstance(bound.value, ast.expr) or not _inside(finding.factor, bound.value):
        verdict.notes.append(f"No fix offered: the head count comes through more than one local (`{finding.via.id}`).")
        return None
    names = {n.id for n in walk(bound.value) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}
    if not all(analysis.scope.available(n, line) for n in names if n not in {"int", "len"}):
        verdict.notes.append(f"No fix offered: a name in `{finding.via.id}` changes before the descriptor is built.")
        return None
    value_start, value_end = file.span_of(bound.value)
    factor_start, factor_end = file.span_of(finding.factor)
    text = file.text
    inlined = text[value_start:factor_start] + _wrap(kv, finding.factor is not bound.value) + text[factor_end:value_end]
    start, end = file.span_of(finding.via)
    return [(start, end, _wrap(inlined, finding.via is not finding.dim))]


def _inside(node: ast.AST, tree: ast.AST) -> bool:
    return any(n is node for n in walk(tree))


def _wrap(expression: str, in_product: bool) -> str:
    """Parenthesise an expression that replaces one factor of a product."""
    needs = in_product and any(op in expression for op in ("//", "+", "-", "%", " / "))
    return f"({expression})" if needs else expression
