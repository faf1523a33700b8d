"""TL105: a kernel that builds a TMA descriptor in device code (`tl.make_tensor_descriptor`) in a project
that never sets Triton's global-memory allocator.

Semantics from Triton 3.6: a kernel whose descriptors are made in device code needs a scratch buffer per
launch (the TMA descriptors live in global memory); the launcher asks `triton.runtime._allocation` for it,
whose default allocator raises RuntimeError("Kernel requires a runtime memory allocation, but no allocator
was set. Use triton.set_allocator to specify an allocator."). Host `TensorDescriptor` objects need none.
"""

from __future__ import annotations

import ast
import os

from tritonlint.analysis.project_facts import (
    SETS_ALLOCATOR,
    calls_set_allocator,
    files_around,
    project_sets_allocator,
)
from tritonlint.analysis.triton_names import KERNEL_DESCRIPTORS
from tritonlint.context import MatchContext, Verdict, condition
from tritonlint.prefilter import Token


def _makes_descriptor(ctx: MatchContext, call: ast.Call) -> bool:
    if ctx.model.qualify(call.func) in KERNEL_DESCRIPTORS:
        return True
    func = call.func  # `from fla.ops.utils.op import make_tensor_descriptor`: a package's re-export
    return isinstance(func, ast.Name) and func.id in ("make_tensor_descriptor", "_experimental_make_tensor_descriptor") \
        and ctx.model.imports.get(func.id, "").endswith(f".{func.id}")


def _sets_allocator(ctx: MatchContext) -> bool:
    """Some module of the project calls set_allocator: this file, or another file of the run's project
    (when text is linted alone, the project around the file on disk, if there is one)."""
    if calls_set_allocator(ctx.file.text):
        return True
    ctx.project.consulted.add(SETS_ALLOCATOR)  # a cached result holds only while the project's answer does
    files = ctx.project.files
    if not files and os.path.isfile(ctx.file.location):
        around = ("project-files", os.path.abspath(ctx.file.location))
        if around not in ctx.project.facts:
            ctx.project.facts[around] = files_around(ctx.file.location)
        files = ctx.project.facts[around]  # type: ignore[assignment]
    key = ("sets-allocator", files)
    if key not in ctx.project.facts:
        ctx.project.facts[key] = project_sets_allocator(files)
    return bool(ctx.project.facts[key])


@condition("descriptor-without-allocator", provides=("function", "maker"),
           prefilter=lambda args: Token("make_tensor_descriptor"),
           applies=lambda model, target: bool(model.functions))
def descriptor_without_allocator(ctx: MatchContext) -> Verdict | None:
    """The first device-side `tl.make_tensor_descriptor(...)` of a jit function, in a project where no
    module calls `triton.set_allocator(...)`, and whose modules the kernel's module imports are all in view."""
    function = ctx.function
    call = ctx.ast_node(types=(ast.Call,))
    if function is None or function.node is None or not isinstance(call, ast.Call) or not _makes_descriptor(ctx, call):
        return None
    calls = sorted((n for n in ast.walk(function.node) if isinstance(n, ast.Call) and _makes_descriptor(ctx, n)),
                   key=lambda n: (n.lineno, n.col_offset))
    first = calls[0]
    if first is not call or _sets_allocator(ctx) or ctx.project.unseen_import(ctx.model, ctx.file.location) is not None:
        return None  # a module of its own package out of the run's view may set the allocator
    notes = [f"{len(calls) - 1} more device-side descriptor(s) in `{function.name}` need it too."] if len(calls) > 1 else []
    return Verdict(vars={"function": function.name, "maker": ctx.file.text_of(call.func)},
                   related=[ctx.file.span_of(n) for n in calls[1:]], notes=notes)
