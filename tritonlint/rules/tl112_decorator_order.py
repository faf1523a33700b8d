"""TL112: `@triton.jit` written above `@triton.autotune` / `@triton.heuristics`."""

from __future__ import annotations

import ast

from tritonlint.analysis.model import AUTOTUNE, HEURISTICS, JIT, ModuleModel
from tritonlint.context import MatchContext, RawEdits, Verdict, condition, fixer
from tritonlint.source import ParsedFile

WRAPPERS = {AUTOTUNE: "@triton.autotune", HEURISTICS: "@triton.heuristics"}


def _misordered(model: ModuleModel, target: int | None) -> bool:
    return any(JIT in f.decorators and set(f.decorators[f.decorators.index(JIT) + 1:]) & set(WRAPPERS)
               for f in model.functions)


@condition("jit-above-wrapper", provides=("jit", "wrapper", "wrapper_line"), applies=_misordered)
def jit_above_wrapper(ctx: MatchContext) -> Verdict | None:
    """A decorated jit function whose @triton.jit is listed above an @triton.autotune or @triton.heuristics:
    decorators apply bottom-up, so the wrapper receives the plain function."""
    function = ctx.function
    node = function.node if function is not None else None
    if node is None or not node.decorator_list:
        return None
    if ctx.file.lines.row_of(ctx.span()[0]) + 1 != node.decorator_list[0].lineno:
        return None  # the match is another definition inside a jit function
    names = [ctx.model.qualify(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list]
    if JIT not in names:
        return None
    jit = names.index(JIT)
    below = [i for i in range(jit + 1, len(names)) if names[i] in WRAPPERS]
    if not below:
        return None
    decorators = node.decorator_list
    first = decorators[below[0]]
    between = {names[i] for i in range(jit + 1, below[-1])} - set(WRAPPERS)
    moved, anchor = _whole_lines(ctx.file, decorators[jit]), _whole_lines(ctx.file, decorators[below[-1]])
    return Verdict(
        vars={"jit": _callee_text(ctx.file, decorators[jit]), "wrapper": _callee_text(ctx.file, first),
              "wrapper_line": str(first.lineno)},
        span=ctx.file.span_of(decorators[jit]),
        data={"move": (moved, anchor)},
        related=[(moved[0], anchor[1])] if moved and anchor else [],  # the decorator lines the fix reorders
        # Another decorator between them would wrap something else once jit moves below the wrappers.
        applicability="unsafe" if between else None,
    )


def _callee_text(file: ParsedFile, decorator: ast.expr) -> str:
    return "@" + file.text_of(decorator.func if isinstance(decorator, ast.Call) else decorator)


def _whole_lines(file: ParsedFile, decorator: ast.expr) -> tuple[int, int] | None:
    """The decorator's lines, from the line start (its `@`) through the line break after it (a trailing
    comment included); None when the lines hold anything else."""
    text = file.text
    start, end = file.span_of(decorator)
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end + 1
    rest = text[end:line_end].strip()
    if text[line_start:start].strip() != "@" or rest and not rest.startswith("#"):
        return None
    return line_start, line_end


@fixer("move-jit-below-wrappers")
def move_jit_below_wrappers(ctx: MatchContext, verdict: Verdict) -> RawEdits | None:
    """Move the @triton.jit line(s), with their trailing comment, to just below the last @triton.autotune /
    @triton.heuristics; every other line, comments included, stays where it is."""
    moved, anchor = verdict.data["move"]
    if moved is None or anchor is None:
        return None
    text = ctx.file.text[moved[0]:moved[1]]
    if not text.endswith("\n"):
        return None
    return [(moved[0], moved[1], ""), (anchor[1], anchor[1], text)]
