"""What the launches of a kernel say about its int32 offset products (analysis/offsets.py): whether the
program id of a product ranges over a large count (the tokens, rows or elements of a tensor), or whether
every launch keeps the product far below 2^31 (a grid without that axis, a literal multiplier, the
innermost stride of a tensor).

The launches in the kernel's own module are read; where it has none, those of the other modules of the
project that launch it, resolved through their imports (the project's launch index, analysis/launch_index.py:
a wrapper module of flag_gems, vllm or sglang). A kernel launched nowhere in view (or only called from other
jit functions) is `unknown`, and so is a launch whose grid or arguments cannot be followed. The grid of a
per-request step of serving (decode, draft, accepting drafts, sampling penalties, a recurrent state update:
by the kernel's, its file's or its launching function's name) never makes a product `large`: in such a step the
tokens are the batch; nor does a grid over the rows of per-token routing data (`gating_output.shape[0]`,
`topk_ids`, the `scores` of a grouped top-k or router kernel: an expert count or a top-k wide), nor one whose
products all step over MLA's compressed KV latent (576 wide) or a rotary cos/sin table, nor one over the rows
of one token's features that a single block of at most 2,048 lanes covers (a norm with a literal block). A multiplier passed as
the leading stride of a KV cache (by the tensor's name) makes the product `large` for a program id or a loaded
index alike; an index loaded from a tensor the launch passes made int64 on the host is `small` there (its
products are int64).
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from tritonlint.analysis.consteval import Evaluator
from tritonlint.analysis.host import HostScope
from tritonlint.analysis.host_tensors import allocated_sizes, callers_pass_int64, int64_tensor
from tritonlint.analysis.launches import bind_launch, kernel_launches
from tritonlint.analysis.model import PROGRAM_ID, JitFunction, LaunchSite, ModuleModel, program_id_axis
from tritonlint.analysis.offsets import Product
from tritonlint.analysis.project import Project
from tritonlint.analysis.provenance import (Origin, Provenance, batch_of_small_items, data_tensor, feature_width,
                                            grid_axes, kv_cache, large_count, latent_row, rotary_table,
                                            router_scores, routing_rows, routing_tensor, routing_width, sequence_count,
                                            small_item)
from tritonlint.walk import walk

LARGE = "large"
SMALL = "small"
UNKNOWN = "unknown"
# A launch spans a tensor's bare leading dimension (one program per row, times that row's stride) without
# naming it as rows, tokens or elements: on code never used before as often a weight's, a decode batch's or a
# small library's rows as an activation's (docs/precision/TL102.md, round R6).
SPANS = "spans"
# A literal multiplier passed at the launch keeps a product below 2^31 when it is below 2^15 for a program id
# of grid axis 1 or 2 (at most 65,535 programs), and for axis 0 or a loaded index (up to 2^31 values) when it
# is a tiny stride such as a column stride of 1 or 2.
SMALL_LITERAL = {1: 2 ** 15, 2: 2 ** 15}
GRID_AXIS_LIMIT = 65_535  # programs on grid axis 1 or 2
TINY_LITERAL = 16
# The per-request steps of serving launch one program per running request (or a few per request), not per
# token: a decode step (its "tokens" are the batch), a speculative draft step, counting the accepted draft
# tokens of each request (token ids), sampling penalties (the last logits row of each request) and the
# decode-time update of a recurrent state (Mamba's `selective_state_update`), and sampling the next token
# (`sampling.py`, `top_k_top_p_sampling`: the last logits row of each request). Read in the kernel's name, its
# file's name and the name of the host function that launches it. Not rejection (speculative) sampling: it reads a
# vocabulary-wide probability row per drafted token, which a large verification batch takes past 2^31.
_PER_REQUEST = re.compile(r"decode|single_query|draft|accept|penalt|(state|scan)_update"
                          r"|(^|_)(?<!rejection_)(?<!speculative_)sampl", re.IGNORECASE)


@dataclass(frozen=True)
class Extent:
    """How large a launch makes a count: large, small or unknown, and why."""
    kind: str  # large | spans | small | unknown
    why: str = ""  # large: the launch and the count; small: what bounds it


def _small_multiplier(host: HostScope, value: ast.expr, limit: int, line: int) -> str | None:
    """Why the launch value of a multiplier keeps a product small (at the launch on `line`): a literal or module
    constant below `limit`, or the innermost stride of a tensor (`x.stride(-1)`, 1 unless the tensor is a
    strided view)."""
    provenance = Provenance.of(host)
    if _innermost(host, provenance.stride_of(value), line):
        return f"`{ast.unparse(value)}` is the innermost stride of a tensor"
    origin = provenance.origin(value)
    if origin.kind in ("literal", "constant"):
        folded = host.model.evaluator().evaluate(value)
        number = folded.value if folded is not None else None
        if type(number) is int and abs(number) < limit:
            return f"`{ast.unparse(value)}` is {number}"
    return None


# Each product's multiplier as a launch passes it, with that value read as a tensor's stride where it is one.
Strides = list[tuple[ast.expr | None, tuple[str, int] | None]]


def _product_strides(host: HostScope, products: list[Product], values: dict[str, ast.expr],
                     params: set[str]) -> Strides:
    provenance = Provenance.of(host)
    passed = [values.get(p.multiplier) if p.multiplier in params else None for p in products]
    return [(value, provenance.stride_of(value) if value is not None else None) for value in passed]


def _spans_tensor(origin: Origin, strides: Strides) -> str | None:
    """The grid axis is the leading dimension of a data tensor (`x.shape[0]`, or `M` of `M, N = x.shape`) and
    a product multiplies the program id by the stride of that dimension (`x.stride(0)`): the offsets step over
    every element of the tensor, so they pass 2^31 exactly when the tensor has 2^31 elements. An inner
    dimension times its stride (a head of `q.shape[1]` times `q.stride(1)`) spans only one row of the outer
    ones."""
    if origin.kind != "shape" or origin.index != 0 or not data_tensor(origin.tensor):
        return None
    if any(small_item(name) for name in (*origin.names, origin.tensor or "")):
        return None  # the rows of a tensor of heads, slots, pages, per-request or draft entries: few of them
    if batch_of_small_items(origin):
        return None  # `B, H, D = q_t.shape`: a batch of items of model dimensions, small whatever the batch
    for value, stride in strides:
        if stride == (origin.tensor, origin.index):
            return (f"row of `{origin.tensor}` ({origin.describe()}) and multiplies it by `{ast.unparse(value)}`: "  # type: ignore[arg-type]
                    "the offsets span the whole tensor")
    return None


def _over_routing_data(origin: Origin, strides: Strides, *names: str) -> bool:
    """Every product steps over the rows of per-token routing data: rows as wide as the experts or the top-k,
    far below 2^31 elements at 1M tokens. Either the grid counts the rows of a tensor whose shape unpacking names
    its width so (`n_tokens, n_experts = scores.shape`) and every product steps over those rows
    (`scores.stride(0)`; a product over another tensor's rows, the hidden states, still counts), or every
    strided tensor is named as routing data (`top_k_values.stride(0)`, the `logits.stride(0)` of a router
    kernel), or the launch passes the multiplier as the rows' width, an expert count or top-k
    (`token * num_experts`), whatever count the grid takes its size from."""
    if not strides:
        return False
    if routing_rows(origin) and all(stride == (origin.tensor, 0) for _, stride in strides):
        return True
    return all(stride is not None and stride[1] == 0 and (routing_tensor(stride[0]) or router_scores(stride[0], *names))
               or stride is None and value is not None and routing_width(ast.unparse(value))
               for value, stride in strides)


def _blocks_of_rows(origin: Origin, products: list[Product]) -> str | None:
    """A grid of blocks over the rows or elements of a tensor (`cdiv(M, BLOCK_M)` with `M` the rows of
    `x.view(-1, K)`, or `cdiv(x.numel(), BLOCK)`) whose every product scales the program id (`(pid * BLOCK_M +
    tl.arange(0, BLOCK_M)) * stride`, not `pid * stride`): the index runs over those rows, as a program per row
    would. Not blocks of a count known by its name only (`cdiv(seq_len, BLOCK_M)`, `N_CTX`, `num_tokens`): in
    attention and scans they index one sequence's positions, the batch and head added apart (a sample of such
    findings: 11 of 22 right, against 7 of 8 over rows and elements, and 12 of 15 in a second sample of those;
    docs/precision/TL102.md)."""
    if origin.kind != "cdiv" or not origin.parts or not products or any(product.bare for product in products):
        return None
    count = origin.parts[0]
    why = large_count(count)
    return f"{origin.describe()}, blocks of rows where {why}" if why is not None and _rows_or_elements(count) else None


def _rows_or_elements(origin: Origin) -> bool:
    """The rows of a tensor flattened to rows (also `x.numel() // x.shape[-1]`), the elements of a data tensor,
    or a product with one of them."""
    if origin.kind == "product":
        return any(_rows_or_elements(part) for part in origin.parts)
    return origin.kind in ("shape", "cdiv") and origin.rows or origin.kind == "numel" and data_tensor(origin.tensor)


def _cache_rows(strides: Strides) -> str | None:
    """A product's multiplier is the leading stride of the KV cache of attention (`key_cache.stride(0)`): the
    index steps over the cache's blocks or slots, and serving engines size a KV cache to the GPU memory left
    after the weights, gigabytes, so its elements pass 2^31 (`provenance.kv_cache` says which names)."""
    for value, stride in strides:
        if stride is not None and stride[1] == 0 and kv_cache(stride[0]):
            return f"`{ast.unparse(value)}` steps over the blocks or slots of the KV cache `{stride[0]}`"  # type: ignore[arg-type]
    return None


# A row of one token's features that a single block of at most this many lanes covers: 1M tokens (the rule's
# bound) of 2,048 features end at 2^31 - 1.
FEATURE_ROW_BLOCK = 2048


def _innermost(host: HostScope, stride: tuple[str, int] | None, line: int) -> bool:
    """The stride is a tensor's innermost (`x.stride(-1)`, or `pos.stride(0)` of `pos = torch.arange(n)`): 1
    unless the tensor is a strided view, so the product is the index itself."""
    sizes = allocated_sizes(host, stride[0], line) if stride is not None and stride[1] >= 0 else None
    return stride is not None and (stride[1] == -1 or sizes is not None and stride[1] == len(sizes) - 1)


_BATCH = re.compile(r"(^|_)(batch|bsz|bs|b)($|_)", re.IGNORECASE)


def _batch_program(grid_origin: Origin | None) -> bool:
    """The program id counts the batch (its grid axis is a batch size, alone or times heads: `(B, H)`, `batch *
    kv_heads`): in a dense `[batch, ...]` cache it picks one sequence's rows, not a slot, page or block of a cache
    sized to the GPU's memory."""
    return grid_origin is not None and any(_BATCH.search(name) for name in grid_origin.all_names())


def _narrow_allocation(host: HostScope, stride: tuple[str, int] | None, line: int) -> bool:
    """The leading stride of a tensor the launching function allocates with literal inner sizes of at most
    FEATURE_ROW_BLOCK elements in all (`torch.empty((n_tokens, 1536))`): 1M rows stay below 2^31."""
    sizes = allocated_sizes(host, stride[0], line) if stride is not None and stride[1] == 0 else None
    inner = [size.value for size in (sizes or [])[1:] if isinstance(size, ast.Constant) and type(size.value) is int]
    return sizes is not None and len(sizes) > 1 and len(inner) == len(sizes) - 1 and math.prod(inner) <= FEATURE_ROW_BLOCK


def _narrow_rows(host: HostScope, strides: Strides, line: int) -> bool:
    """Every product's multiplier is the leading stride of MLA's compressed KV latent or its rope key
    (`kv_c.stride(0)`, `k_pe.stride(0)`: rows of 576 elements at most) or of a tensor allocated with narrow
    literal rows, a stride of a rotary cos/sin table (a head dimension per position), or a tensor's innermost
    stride (the positions a rotary table is built for): below 2^31 for any count of tokens up to 1M."""
    return all(stride is not None and ((stride[1] == 0 and latent_row(stride[0])) or rotary_table(stride[0])
                                       or _innermost(host, stride, line) or _narrow_allocation(host, stride, line))
               for _, stride in strides)


def _block_length(host: HostScope, function: JitFunction, end: ast.expr, values: dict[str, ast.expr],
                  at: ast.AST) -> int | None:
    """The largest value a launch (at `at`) gives the end of a `tl.arange(0, END)`: a literal, or a constexpr the
    launch passes as a constant or caps (`next_power_of_2(n_cols)` under `if n_cols <= 1024:`), else the
    autotune configs' values (every config must set it), else its default."""
    if isinstance(end, ast.Constant):
        return end.value if type(end.value) is int else None
    param = next((p for p in function.params if isinstance(end, ast.Name) and p.name == end.id and p.is_constexpr), None)
    if param is None:
        return None
    if param.name in values:
        folded = host.evaluator().evaluate(values[param.name])
        if folded is not None and type(folded.value) is int:
            return folded.value
        return Provenance.of(host).upper_limit(values[param.name], at)
    if function.autotune is not None and function.autotune.configs:
        tuned = [config.meta.get(param.name) for config in function.autotune.configs]
        lengths = [v for v in tuned if type(v) is int]
        return max(lengths) if len(lengths) == len(tuned) else None
    return param.default_value if type(param.default_value) is int else None


def _feature_rows(host: HostScope, function: JitFunction, products: list[Product], values: dict[str, ast.expr],
                  at: ast.AST) -> bool:
    """Every product multiplies the row index by the width of a row of one token's features that a single
    block covers (`Product.feature_rows`: a norm over `tl.arange(0, BLOCK)` lanes masked by `cols <
    n_cols`, with a per-feature weight), or by a row stride this launch passes as that very width
    (`stride_row=hidden, n_cols=hidden`), and this launch makes that block at most 2,048 lanes: a literal
    block, or autotune configs that all stay there. The kernel handles no wider row, and 1M tokens of 2,048
    features stay below 2^31."""
    def bounded(product: Product) -> bool:
        stride = values.get(product.multiplier)
        ends = next((ends for width, ends in product.feature_rows if width == product.multiplier or (
            stride is not None and width in values and ast.dump(values[width]) == ast.dump(stride))), ())
        lengths = [_block_length(host, function, end, values, at) for end in ends]
        return bool(lengths) and all(n is not None and n <= FEATURE_ROW_BLOCK for n in lengths)
    return all(bounded(product) for product in products)


def _within_one_item(host: HostScope, products: list[Product], strides: Strides) -> bool:
    """Every product of a program id of grid axis 1 or 2 (at most 65,535 programs) stays within one item of a
    tensor's leading dimension: its multiplier is the stride of an inner dimension (`x.stride(1)` of `[B, S, H]`,
    `s_t` of `s_b, s_t, s_h = x.stride()`: a row of one sequence, whose elements real inputs keep below 2^31,
    however large the count on the axis), a stride of a rotary cos/sin table (small whole), or, times the
    program id itself (`seq_id * hidden`, not `(b * S + seq_id) * hidden`), one token's feature width (below
    32,768, so the product stays below 2^31): named so, or the leading stride of a tensor whose other
    dimensions are all one token's features (`x.stride(0)` of `n, heads, head_size = x.shape`). The leading
    dimension's own index is the product to watch."""
    provenance = Provenance.of(host)

    def bounded(product: Product, value: ast.expr | None, stride: tuple[str, int] | None) -> bool:
        if stride is not None:
            return stride[1] >= 1 or rotary_table(stride[0]) \
                or (product.bare and stride[1] == 0 and provenance.token_rows(stride[0]))
        return product.bare and value is not None and feature_width(provenance.origin(value))
    return all(bounded(product, value, stride) for product, (value, stride) in zip(products, strides))


def _inner_dimension(origin: Origin) -> bool:
    """The grid counts the positions of one sequence, an inner dimension of a tensor (`seq_len = x.shape[1]`
    of `[B, S, D]`): positions within one item of its leading dimension, whose elements real inputs keep below
    2^31 (128K positions of a width up to 16K), so products with inner strides stay within that item, as on
    grid axes 1 and 2. Not any inner dimension: the tokens routed to one expert (`[E, T, H]`) are not bounded so.
    Blocks of them (`cdiv(seq_len, BLOCK_M)`) as well, and a caller's parameter named so (`seq_len`)."""
    if origin.kind == "cdiv" and origin.parts:
        return _inner_dimension(origin.parts[0])
    return (origin.kind == "param" or origin.kind == "shape" and origin.index is not None and origin.index >= 1
            and not origin.rows) and sequence_count(origin)


def _bounded_at_launch(host: HostScope, origin: Origin, at: ast.AST) -> bool:
    """Every factor that makes the grid count large is a name that a test around the launch, an assert or an
    early exit bounds by at most 65,535 (`else:` of `if n_rows >= NUM_SMS:`): no more programs than grid axes 1
    and 2 start."""
    if origin.kind == "cdiv" and origin.parts:
        return _bounded_at_launch(host, origin.parts[0], at)
    parts = [part for part in origin.parts if large_count(part)] if origin.kind == "product" else [origin]
    provenance = Provenance.of(host)
    bounds = [provenance.upper_bound(part.names[0], at) if part.names else None for part in parts]
    return bool(bounds) and all(bound is not None and bound <= GRID_AXIS_LIMIT for bound in bounds)


def _capped_products(host: HostScope, products: list[Product], values: dict[str, ast.expr], params: set[str],
                     count: ast.expr, at: ast.AST) -> dict[str, str] | None:
    """Where the launch caps the grid axis's count and every product is the program id itself times a
    multiplier it caps too, so that their product stays below 2^31 (a merge pass over at most `NUM_SMS` rows
    times `programs_per_row = min(..., max(1, NUM_SMS // n_rows))`): why, for each multiplier; else None."""
    provenance = Provenance.of(host)
    programs = provenance.upper_limit(count, at)
    if programs is None or not products:
        return None
    reasons = {}
    for product in products:
        value = values.get(product.multiplier) if product.multiplier in params else None
        most = provenance.upper_limit(value, at) if value is not None and product.bare else None
        if most is None or programs * most > INT32_LIMIT:
            return None
        reasons[product.multiplier] = (f"at most {programs} programs times `{ast.unparse(value)}`, at most "  # type: ignore[arg-type]
                                       f"{most}, stay below 2^31")
    return reasons


def _counted(origin: Origin) -> str | None:
    """The tensor whose rows or elements the grid axis counts: of the origin, or of the factor of a product
    that makes it large (`num_tokens * n_group` with `num_tokens = scores.shape[0]`)."""
    if origin.kind == "product":
        return next((_counted(part) for part in origin.parts if large_count(part)), origin.tensor)
    return origin.tensor


def _int64_index(host: HostScope, source: ast.Call, values: dict[str, ast.expr], project: Project | None) -> str | None:
    """An index load (`tl.load(loc_ptr + row)`) from a tensor the launch passes made int64 by the host
    (`loc64 = loc.to(torch.int64)`), or received from callers that all make it so: the loaded index is int64
    and so is every product of it."""
    pointer = source.args[0] if source.args else next((k.value for k in source.keywords if k.arg == "pointer"), None)
    for name in (n.id for n in walk(pointer) if isinstance(n, ast.Name)) if pointer is not None else ():
        if name in values and int64_tensor(host, values[name]):
            return f"`{ast.unparse(values[name])}` is made int64 on the host, so the loaded index is int64"
        if name in values and callers_pass_int64(project, host, ast.unparse(values[name])):
            return f"every call of the launching function passes `{ast.unparse(values[name])}` as an int64 tensor"
    return None


INT32_LIMIT = 2**31 - 1


def _int32_guard(host: HostScope, before: int) -> int | None:
    """The line where the launching function refuses sizes that int32 offsets cannot address, before line
    `before` (the launch): `if n >= 2**31: raise ...` (also `>` a bound of at least 2^31 - 1, a module constant
    such as `_MAX_ELEMS = 2**31`, the comparison written either way round) or `assert n < 2**31`, in its own
    body, not under a loop."""
    return _refusal(host.node, host.evaluator, before, refusals=(ast.Raise,))


def eligibility_check(model: ModuleModel) -> tuple[str, int] | None:
    """A host function of the module that turns large sizes away, `if x.numel() >= 2**31 - 1: return False`
    (a return or a raise under such a test, as in `_int32_guard`): its name and line. A module whose own code
    checks int32 addressing so decides which tensors reach its kernels (the check often sits in an
    eligibility helper its callers consult before they launch)."""
    def find() -> tuple[str, int] | None:
        for node in walk(model.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not model.function_at(node.lineno):
                line = _refusal(node, lambda: HostScope.of(model, node).evaluator(),  # built only for a candidate test
                                node.end_lineno or node.lineno, (ast.Raise, ast.Return))
                if line is not None:
                    return node.name, line
        return None

    return model.memoized(("int32-eligibility",), find)


def _refusal(function: ast.FunctionDef | ast.AsyncFunctionDef | None, evaluator: Callable[[], Evaluator], before: int,
             refusals: tuple[type[ast.stmt], ...]) -> int | None:
    """The line of a statement of the host function, before line `before` and not under a loop, that refuses
    sizes past int32 addressing: an `if` on such a size whose body holds one of `refusals`, or an assert."""
    if function is None:
        return None

    def at_limit(node: ast.expr) -> bool:
        value = evaluator().evaluate(node)  # built only for a comparison that may be a guard
        return value is not None and isinstance(value.value, int) and value.value >= INT32_LIMIT

    def refuses(test: ast.expr, large_side_first: bool) -> bool:
        """`test` is true exactly for sizes past the limit (an if that refuses) or false for them (an assert)."""
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return False
        op, left, right = test.ops[0], test.left, test.comparators[0]
        if isinstance(op, (ast.GtE, ast.Gt)):
            size_first = True
        elif isinstance(op, (ast.LtE, ast.Lt)):
            size_first = False
        else:
            return False
        # `size >= LIMIT` or `LIMIT <= size` is true for large sizes; `size < LIMIT` false for them
        if size_first == large_side_first:
            return at_limit(right)
        return at_limit(left)

    pending = list(function.body)
    while pending:
        statement = pending.pop(0)
        if statement.lineno >= before:
            continue
        if isinstance(statement, ast.If):
            if refuses(statement.test, True) and any(isinstance(s, refusals) for s in statement.body):
                return statement.lineno
            pending.extend(statement.body + statement.orelse)
        elif isinstance(statement, ast.Assert) and refuses(statement.test, False):
            return statement.lineno
        elif isinstance(statement, (ast.With, ast.Try)):
            pending.extend(statement.body)
    return None


def _host_name(launch: LaunchSite) -> str:
    """The name of the host function that launches the kernel ("" at module level)."""
    return launch.scope.name if isinstance(launch.scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else ""


def _per_request_host(launch: LaunchSite) -> bool:
    """The host function that launches the kernel is named as a per-request step (`apply_penalty`)."""
    return bool(_PER_REQUEST.search(_host_name(launch)))


def launch_extent(model: ModuleModel, function: JitFunction, source: ast.Call, products: list[Product],
                  path: str = "", project: Project | None = None) -> Extent:
    """How the launches of `function` (defined in the file at `path`; launched in its module, else in the
    other modules of `project`) bound the products of `source` (a program id or an index load)."""
    launches = kernel_launches(model, function, project)
    per_request = bool(_PER_REQUEST.search(function.name) or _PER_REQUEST.search(path.rpartition("/")[2]))
    names = (function.name, path.rpartition("/")[2])
    if not launches:
        return Extent(UNKNOWN)
    params = {p.name for p in function.params}
    axis = program_id_axis(source) if model.qualify(source.func) == PROGRAM_ID else None
    limit = SMALL_LITERAL.get(axis, TINY_LITERAL) if axis is not None else TINY_LITERAL
    small_everywhere = True
    reasons: list[str] = []
    shown: str | None = None  # the first launch that spans a bare leading dimension
    for launcher, launch in launches:
        host = HostScope.of(launcher, launch.scope)
        bound = bind_launch(launcher, launch, function)
        strides = _product_strides(host, products, bound.values, params)
        grid = grid_axes(host, launch) if axis is not None else None
        where = f"line {launch.line}" if launcher is model else f"line {launch.line} of `{launcher.module}`"
        wide = _int64_index(host, source, bound.values, project) if axis is None else None
        if wide is not None:
            reasons.append(f"at {where} {wide}")
            continue
        guard = _int32_guard(host, launch.line)
        if guard is not None:
            reasons.append(f"at {where} the launching function refuses sizes of 2^31 elements or more (line {guard})")
            continue
        origin: Origin | None = None  # of the program id's grid axis
        capped: dict[str, str] | None = None  # why each product stays small, where the axis and multipliers are capped
        if grid is not None and axis is not None:
            axes, _ = grid
            if axis >= len(axes):
                reasons.append(f"the grid of {where} has no axis {axis}: the program id is 0")
                continue
            origin = Provenance.of(host).origin(axes[axis])
            capped = _capped_products(host, products, bound.values, params, axes[axis], launch.node)
            named = large_count(origin) or _blocks_of_rows(origin, products)
            why = named or _spans_tensor(origin, strides)
            if capped is not None or (axis in SMALL_LITERAL or _inner_dimension(origin)
                                      or _bounded_at_launch(host, origin, launch.node)) \
                    and _within_one_item(host, products, strides):
                why = None
            counted = _counted(origin)
            if (why is not None and not per_request and not _per_request_host(launch) and not routing_tensor(counted)
                    and not router_scores(counted, *names, _host_name(launch))
                    and not _over_routing_data(origin, strides, *names, _host_name(launch))
                    and not _narrow_rows(host, strides, launch.line) and not _feature_rows(host, function, products, bound.values, launch.node)):
                if named is not None:
                    return Extent(LARGE, f"the launch at {where} starts one program per unit of a large count: {why}")
                shown = shown or f"the launch at {where} starts one program per {why}"
        why = _cache_rows(strides) if not _batch_program(origin) else None
        if why is not None:
            return Extent(LARGE, f"the launch at {where} passes {why}")
        # Every product must be small at this launch, through its multiplier.
        for product in products:
            value = bound.values.get(product.multiplier) if product.multiplier in params else None
            why = _small_multiplier(host, value, limit, launch.line) if value is not None else None
            if why is None and value is not None and capped is not None:
                why = capped[product.multiplier]
            if why is None:
                small_everywhere = False
                break
            reasons.append(f"at {where} {why}")
    if small_everywhere:
        return Extent(SMALL, "; ".join(dict.fromkeys(reasons)))
    return Extent(SPANS, shown) if shown is not None else Extent(UNKNOWN)
