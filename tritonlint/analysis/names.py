"""What a parameter's name says about it: block sizes, name words."""

from __future__ import annotations

import ast
import re

_NOT_A_SIZE = frozenset({"use", "has", "is", "num", "count", "counts", "total", "per", "idx", "indices", "ids", "ptr",
                         "stride", "offset", "offsets", "mode", "order"})

# Words that name a dtype: a flag like IS_FP8 or USE_BF16 mirrors a tensor's dtype, which Triton's autotune key
# holds already (it appends every tensor argument's dtype).
DTYPE_WORDS = frozenset({"dtype", "fp8", "fp16", "f16", "bf16", "bfloat16", "float16", "half", "fp32", "f32", "float32",
                         "tf32", "fp64", "int8", "int4", "uint8", "fp4", "nvfp4", "mxfp4", "mxfp8", "e4m3", "e5m2",
                         "float8", "i8"})


def name_words(name: str) -> list[str]:
    """`CACHE_KEY_SEQLEN_Q` -> cache, key, seqlen, q; `blockSizeM` -> block, size, m."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [word for word in spaced.lower().split("_") if word]


def is_block_name(name: str) -> bool:
    """A block or tile size (BLOCK_M, BLOCK_SIZE, TILE_N, XBLOCK), not a count of blocks or a flag about them
    (NUM_BLOCKS, USE_BLOCK_COUNTS)."""
    words = name_words(name)
    if not any("block" in word or "tile" in word for word in words):
        return False
    return not any(word in _NOT_A_SIZE or word.endswith(("blocks", "tiles")) for word in words)


def last_name(expr: ast.AST) -> str | None:
    """The last name of `x` or `a.b.x`: x."""
    return expr.attr if isinstance(expr, ast.Attribute) else expr.id if isinstance(expr, ast.Name) else None
