"""Every set of Triton names the analyses and rules test against, in one place (fully qualified, as
`ModuleModel.qualify` spells them)."""

from __future__ import annotations

TL = "triton.language"
MEMORY_CALLS = frozenset(f"{TL}.{n}" for n in (
    "load", "store", "dot", "dot_scaled", "atomic_add", "atomic_cas", "atomic_xchg", "atomic_max", "atomic_min",
    "atomic_and", "atomic_or", "atomic_xor", "load_tensor_descriptor", "store_tensor_descriptor",
    "_experimental_descriptor_load", "_experimental_descriptor_store",
))
DESCRIPTOR_METHODS = frozenset({"load", "store", "gather", "scatter", "atomic_add"})
DOTS = frozenset({f"{TL}.dot", f"{TL}.dot_scaled"})
LOADS = frozenset(f"{TL}.{n}" for n in ("load", "load_tensor_descriptor", "_experimental_descriptor_load"))
DESCRIPTOR_LOADS = frozenset({"load", "gather"})  # desc.load([...]) on a tensor descriptor
CASTS = frozenset({f"{TL}.cast"})
FIRST_OPERAND_KEYWORDS = frozenset({"input", "lhs"})  # tl.dot(input, other, acc), tl.dot_scaled(lhs, ..., rhs, ...)
INDEX_CALLS = frozenset(f"{TL}.{n}" for n in ("arange", "program_id", "num_programs", "cdiv"))
CONSTANT_CALLS = frozenset(f"{TL}.{n}" for n in ("zeros", "full", "zeros_like", "full_like"))
RESHAPES = frozenset(f"{TL}.{n}" for n in ("reshape", "view", "broadcast_to", "expand_dims"))
REDUCTIONS = frozenset(f"{TL}.{n}" for n in ("sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum"))
RESHAPE_OR_REDUCE_METHODS = frozenset({"reshape", "view", "broadcast_to", "expand_dims", "sum", "max", "min", "argmax",
                             "argmin", "reduce", "xor_sum"})
# Calls with effects: a fix must not reorder them.
EFFECTS = ("store", "atomic_", "debug_barrier", "device_print", "device_assert", "inline_asm")
# Tile shapes (analysis/tiles.py): calls whose result has the broadcast shape of their operands, and calls
# whose result has the shape of their first operand.
TILE_ELEMENTWISE = frozenset(f"{TL}.{n}" for n in (
    "abs", "ceil", "clamp", "cos", "div_rn", "erf", "exp", "exp2", "fdiv", "floor", "fma", "log", "log2", "maximum",
    "minimum", "rsqrt", "sigmoid", "sin", "sqrt", "sqrt_rn", "umulhi", "cdiv", "fast_expf", "fast_dividef",
    "randint", "rand", "randn",
))
TILE_SAME_SHAPE = frozenset(f"{TL}.{n}" for n in (
    "multiple_of", "max_contiguous", "max_constancy", "softmax", "cumsum", "cumprod", "sort", "flip",
    "associative_scan",
))
