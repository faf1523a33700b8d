"""Facts about the linted code, computed once and shared by every rule: the kernel model, bindings and
flow, constant evaluation, launches, configs, host scopes, Triton name sets. Nothing here knows a rule."""
