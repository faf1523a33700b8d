"""Thin, safe wrappers around ast-grep-py.

ast-grep raises plain Exceptions, RuntimeErrors and pyo3 panics (BaseException subclasses) whose text can
carry a Rust backtrace when RUST_BACKTRACE is set; these wrappers turn all of them into one-line
AstGrepErrors.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from tritonlint.timelimit import FileTimeout

if TYPE_CHECKING:  # ast_grep_py is imported on first use: a run served from the cache never needs it
    from ast_grep_py import SgNode


class AstGrepError(Exception):
    pass


def clean_message(exc: BaseException) -> str:
    text = str(exc).split("Stack backtrace:")[0]
    lines = [line.strip() for line in text.splitlines() if line.strip() and line.strip() != "Caused by:"]
    lines = [line.split(": ", 1)[1] if line[:1].isdigit() and ": " in line else line for line in lines]
    return "; ".join(dict.fromkeys(lines)) or type(exc).__name__


def find_all(root: SgNode, matcher: dict[str, Any]) -> list[SgNode]:
    try:
        return root.find_all(matcher)  # type: ignore[call-overload, no-any-return]
    except (KeyboardInterrupt, SystemExit, GeneratorExit, FileTimeout):
        raise
    except BaseException as exc:  # noqa: BLE001 - pyo3 panics are BaseExceptions
        raise AstGrepError(clean_message(exc)) from None


def parse_snippet(code: str) -> SgNode:
    from ast_grep_py import SgRoot

    return SgRoot(code, "python").root()


@lru_cache(maxsize=1)
def _probe() -> SgNode:
    return parse_snippet("x = 1\n")


def compile_check(matcher: dict[str, Any]) -> None:
    """Raise AstGrepError if ast-grep rejects the rule (unknown keys, bad kinds, bad regex...)."""
    find_all(_probe(), matcher)


def span_text(text: str, nodes: list[SgNode]) -> str:
    """Source text covered by a multi-match ($$$ARGS), commas included."""
    named = [n for n in nodes if n.is_named()]
    if not named:
        return ""
    return text[named[0].range().start.index: named[-1].range().end.index]
