"""The built-in rules' Python: one module per rule holding its conditions, fixers and policy, plus `common`,
the conditions any rule file may name. Importing this package registers them all."""

from tritonlint.rules import (  # noqa: F401
    common,
    tl001_static_range,
    tl002_transpose_in_loop,
    tl003_raw_2d_tile_load,
    tl004_autotune_frozen_block,
    tl005_gqa_descriptor_heads,
    tl006_autotune_missing_key,
    tl113_tile_shape_mismatch,
)
