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
# tl.load's keywords (Triton 3.x); a call with any other keyword (`others=0.0`) does not compile.
LOAD_KEYWORDS = frozenset({"pointer", "mask", "other", "boundary_check", "padding_option", "cache_modifier",
                           "eviction_policy", "volatile"})
DESCRIPTOR_LOADS = frozenset({"load", "gather"})  # desc.load([...]) on a tensor descriptor
CASTS = frozenset({f"{TL}.cast"})
FIRST_OPERAND_KEYWORDS = frozenset({"input", "lhs"})  # tl.dot(input, other, acc), tl.dot_scaled(lhs, ..., rhs, ...)
# The two tiles each product multiplies, by position and keyword: tl.dot(input, other, acc), tl.dot_scaled(lhs,
# lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc) (not the scales, nor the accumulator).
DOT_OPERANDS = {f"{TL}.dot": ((0, "input"), (1, "other")), f"{TL}.dot_scaled": ((0, "lhs"), (3, "rhs"))}
INDEX_CALLS = frozenset(f"{TL}.{n}" for n in ("arange", "program_id", "num_programs", "cdiv"))
CONSTANT_CALLS = frozenset(f"{TL}.{n}" for n in ("zeros", "full", "zeros_like", "full_like"))
RESHAPES = frozenset(f"{TL}.{n}" for n in ("reshape", "view", "broadcast_to", "expand_dims"))
REDUCTIONS = frozenset(f"{TL}.{n}" for n in ("sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum"))
RESHAPE_OR_REDUCE_METHODS = frozenset({"reshape", "view", "broadcast_to", "expand_dims", "sum", "max", "min", "argmax",
                             "argmin", "reduce", "xor_sum"})
# Calls with effects: a fix must not reorder them.
EFFECTS = ("store", "atomic_", "debug_barrier", "device_print", "device_assert", "inline_asm")
# Calls whose sizes Triton requires to be powers of two (TL104): the range of tl.arange, tile shapes, and
# descriptor block shapes, in kernels and on the host.
ARANGE = f"{TL}.arange"
TILE_SHAPE_CALLS = frozenset(f"{TL}.{n}" for n in ("zeros", "full"))
SHAPE_ARGUMENT_CALLS = frozenset(f"{TL}.{n}" for n in ("reshape", "view"))  # input, *shape
SHAPE_METHODS = frozenset({"reshape", "view"})  # x.reshape(*shape) on a tile
# Device-side descriptor constructors: each launch of a kernel using them needs Triton's allocator (TL105).
KERNEL_DESCRIPTORS = frozenset(f"{TL}.{n}" for n in ("make_tensor_descriptor", "_experimental_make_tensor_descriptor"))
HOST_DESCRIPTOR = "triton.tools.tensor_descriptor.TensorDescriptor"
# Atomics that give a different result when a kernel runs twice on the same buffer (TL101), and those that
# do not (a second max/min/and/or with the same operand changes nothing).
NON_IDEMPOTENT_ATOMICS = frozenset(f"{TL}.{n}" for n in ("atomic_add", "atomic_sub", "atomic_xchg", "atomic_cas"))
IDEMPOTENT_ATOMICS = frozenset(f"{TL}.{n}" for n in ("atomic_max", "atomic_min", "atomic_and", "atomic_or"))
STORES = frozenset(f"{TL}.{n}" for n in ("store", "store_tensor_descriptor", "_experimental_descriptor_store"))
# Calls whose result points into the memory their first argument points into.
POINTER_PASSTHROUGH = frozenset(f"{TL}.{n}" for n in ("make_block_ptr", "advance", "multiple_of", "max_contiguous",
                                                      "max_constancy", "cast", "broadcast_to", "reshape", "view"))
# Tile shapes (analysis/tiles.py): calls whose result has the broadcast shape of their operands, and calls
# whose result has the shape of their first operand.
# Elementwise math of one tile, also written as a tensor method (`x.exp()`).
UNARY_MATH = frozenset({"abs", "ceil", "cos", "erf", "exp", "exp2", "floor", "log", "log2", "rsqrt", "sigmoid", "sin",
                        "sqrt"})
TILE_ELEMENTWISE = frozenset(f"{TL}.{n}" for n in (
    *UNARY_MATH, "clamp", "div_rn", "fdiv", "fma", "maximum", "minimum", "sqrt_rn", "umulhi", "cdiv", "fast_expf",
    "fast_dividef", "randint", "rand", "randn",
))
TILE_SAME_SHAPE = frozenset(f"{TL}.{n}" for n in (
    "multiple_of", "max_contiguous", "max_constancy", "softmax", "cumsum", "cumprod", "sort", "flip",
    "associative_scan",
))
