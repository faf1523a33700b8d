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
    tl101_autotune_side_effects,
    tl102_int32_offset_overflow,
    tl103_removed_api,
    tl104_shape_not_power_of_two,
    tl105_descriptor_without_allocator,
    tl106_autotune_frozen_descriptor,
    tl107_constexpr_problem_size,
    tl108_masked_load_padding,
    tl109_grid_axis_limit,
    tl110_autotune_key_unknown,
    tl111_program_id_axis,
    tl112_decorator_order,
)
