"""tritonlint: a static linter and code-review tool for Triton GPU kernels."""

__version__ = "0.1.0"
