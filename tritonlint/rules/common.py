"""Conditions that any rule file may name, whatever the rule: where the match sits, what a callee resolves
to, which backend the code is written for."""

from __future__ import annotations

import ast
import re

from tritonlint.analysis.backends import other_backend
from tritonlint.analysis.model import _CONVENTIONAL
from tritonlint.context import MatchContext, ParamSpec, Verdict, condition
from tritonlint.prefilter import Requirement, Token, disjoin


@condition("in-jit-function", provides=("function",), prefilter=lambda args: Token("jit"),
           applies=lambda model, target: bool(model.functions))
def in_jit_function(ctx: MatchContext) -> Verdict | None:
    """The match sits inside a @triton.jit function (a kernel or a jit helper)."""
    if ctx.function is None:
        return None
    return Verdict(vars={"function": ctx.function.name})


def _spellings(args: dict[str, object]) -> Requirement | None:
    """A name resolves through the module's imports only if its last part is written in the file (`tl`
    and `triton` also stand for themselves unimported)."""
    names = args.get("names")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None  # an option reference: unknown until configured
    words = [n.rpartition(".")[2] for n in names]
    words += [alias for n in names for alias, target in _CONVENTIONAL.items() if n == target]
    return disjoin(Token(word) for word in words)


@condition("callee-is", params={"metavar": ParamSpec("str"), "names": ParamSpec("list")}, prefilter=_spellings)
def callee_is(ctx: MatchContext, metavar: str, names: list[str]) -> bool:
    """The expression captured by `metavar` resolves, through the module's imports, to one of `names`
    (dotted names such as triton.language.static_range)."""
    node = ctx.metavar(metavar)
    if node is None:
        return False
    text = node.text()
    if _DOTTED.fullmatch(text):  # the usual `tl.static_range`: no need to find its ast node
        return ctx.model.qualify_dotted(text) in names
    expr = ctx.ast_node(node, (ast.expr,))
    return isinstance(expr, ast.expr) and ctx.model.qualify(expr) in names


_DOTTED = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*")


@condition("not-other-backend", params={"names": ParamSpec("list")})
def not_other_backend(ctx: MatchContext, names: list[str]) -> bool:
    """The code is not written for another backend: no word (split at `_`, `-`, `.`) of the file's folder and
    file names, nor of the enclosing jit function's name, matches one of `names` (shell patterns such as
    `gfx*`), and the module does not define or use that function only in branches taken on such a backend
    (`if _is_hip:`, `if current_platform.is_rocm():`)."""
    function = ctx.function
    patterns = tuple(names)
    name = function.name if function else None
    return not ctx.model.memoized(("other-backend", name, patterns),  # asked at every call of some rules
                                  lambda: other_backend(ctx.file.path, name, ctx.file.text, ctx.model, patterns))
