"""The built-in semantic conditions and fixers that rule files name in `where` and `fix.fixer`.

One module per concern; importing this package registers them all.
"""

from tritonlint.checks import autotune_key, autotune_launch, common, static_range  # noqa: F401
