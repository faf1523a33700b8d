"""The built-in semantic conditions and fixers that rule files name in `where` and `fix.fixer`.

One module per concern; importing this package registers them all.
"""

from tritonlint.checks import (  # noqa: F401
    autotune_key,
    autotune_launch,
    common,
    descriptor_heads,
    device,
    static_range,
    tile_load,
    transpose,
)
