"""Code written for another accelerator's Triton backend (Ascend, Cambricon, AMD, Intel XPU, ...).

Projects such as FlagGems, fla or sglang keep per-vendor copies of their kernels in folders or files named
after the device, name vendor-only kernels after the chip (`_matmul_gfx1250`), or select a kernel only on
such a device (`if _is_hip: kernel = _matmul_unrolledx4`). Advice measured on NVIDIA GPUs (shared-memory
layouts, TMA) does not apply to them.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePath
from typing import TYPE_CHECKING

from tritonlint.walk import LEAF_FIELDS

if TYPE_CHECKING:
    from tritonlint.analysis.model import ModuleModel

_TOKEN_SEPARATORS = re.compile(r"[_\-.]+")
_WILDCARD = re.compile(r"[*?\[]")


def name_tokens(name: str) -> set[str]:
    """The words of a name, split at `_`, `-` and `.`, lower case: `_is_hip` -> is, hip."""
    return {token for token in _TOKEN_SEPARATORS.split(name.lower()) if token}


def path_tokens(path: str) -> set[str]:
    """The words of every folder and file name of `path` (split at `_`, `-` and `.`), lower case."""
    return {token for part in PurePath(path).parts for token in name_tokens(part)}


def _names_backend(tokens: Iterable[str], patterns: tuple[str, ...]) -> bool:
    matches = _pattern_matcher(patterns)
    return any(matches(token) for token in tokens)


@lru_cache(maxsize=8)
def _pattern_matcher(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """Whether a lower-case word matches one of the shell patterns (`gfx*`), case-blind like fnmatchcase. Plain
    words and `word*` are compared as words and prefixes; only other patterns are translated into a regular
    expression (compiling one for all of them, at every run, cost a one-file lint a twentieth of its time)."""
    words: set[str] = set()
    starts: list[str] = []
    others: list[str] = []
    for pattern in map(str.lower, patterns):
        if not _WILDCARD.search(pattern):
            words.add(pattern)
        elif pattern.endswith("*") and not _WILDCARD.search(pattern[:-1]):
            starts.append(pattern[:-1])
        else:
            others.append(pattern)
    prefixes = tuple(starts)
    regex = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in others)).match if others else None
    return lambda word: word in words or word.startswith(prefixes) or (regex is not None and regex(word) is not None)


@lru_cache(maxsize=64)
def _path_names_backend(path: str, patterns: tuple[str, ...]) -> bool:
    return _names_backend(path_tokens(path), patterns)


@lru_cache(maxsize=8)
def _backend_word_starts(patterns: tuple[str, ...]) -> tuple[str, ...] | None:
    """Text any word matching one of the patterns starts with, lower case; None when a pattern starts with a
    wildcard and so could match anywhere."""
    prefixes = tuple(_WILDCARD.split(pattern.lower(), maxsplit=1)[0] for pattern in patterns)
    return prefixes if prefixes and all(prefixes) else None


_WORD_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def _may_mention_backend(text: str, patterns: tuple[str, ...]) -> bool:
    """Whether one of the patterns' prefixes starts a word of the text (not after a letter or digit). Searched
    with str.find, not one regular expression of them all: compiling that at every run cost more."""
    prefixes = _backend_word_starts(patterns)
    if prefixes is None:
        return True
    lowered = text.lower()
    for prefix in prefixes:
        at = lowered.find(prefix)
        while at != -1:
            if at == 0 or lowered[at - 1] not in _WORD_CHARACTERS:
                return True
            at = lowered.find(prefix, at + 1)
    return False


# ---- functions a module reaches only on another backend ------------------------------------------------------
def backend_test(test: ast.expr, patterns: tuple[str, ...]) -> bool | None:
    """True when a branch test holds only on another backend (`_is_hip`, `is_rocm()`, `torch.version.hip is
    not None`, `vendor == "amd"`), False when it holds only off it (`not _is_hip`), None when it says nothing
    about the backend."""
    if isinstance(test, ast.Name):
        return True if _names_backend(name_tokens(test.id), patterns) else None
    if isinstance(test, ast.Attribute):
        return True if _names_backend(name_tokens(test.attr), patterns) else None
    if isinstance(test, ast.Call):
        return backend_test(test.func, patterns)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = backend_test(test.operand, patterns)
        return None if inner is None else not inner
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, other = test.ops[0], test.comparators[0]
        if isinstance(other, ast.Constant) and other.value is None and isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)):
            inner = backend_test(test.left, patterns)
            return None if inner is None else inner == isinstance(op, (ast.IsNot, ast.NotEq))
        if isinstance(other, ast.Constant) and isinstance(other.value, str) and isinstance(op, (ast.Eq, ast.NotEq)) \
                and _names_backend(name_tokens(other.value), patterns):
            return isinstance(op, ast.Eq)
        return None
    if isinstance(test, ast.BoolOp):
        parts = [backend_test(value, patterns) for value in test.values]
        if isinstance(test.op, ast.And):
            return True if True in parts else None  # every part must hold, one of them only on that backend
        if all(part is True for part in parts):
            return True
        return False if False in parts else None  # `not _is_hip or x` fails only on that backend
    return None


def _leaves(statements: list[ast.stmt]) -> bool:
    """The block ends by leaving the function (return or raise)."""
    return bool(statements) and isinstance(statements[-1], (ast.Return, ast.Raise))


@dataclass
class _Uses:
    """How a module uses one function: defined in a backend branch, and where it is referenced."""
    defined_in_branch: bool = False
    references: list[tuple[bool, tuple[str, ...]]] = field(default_factory=list)  # (in such a branch, enclosing defs)


def backend_only_functions(tree: ast.Module, patterns: tuple[str, ...]) -> frozenset[str]:
    """Names of the functions a module defines only in branches taken on another backend, or refers to (at
    least once) only there or from such functions. A function the module never refers to may be used by
    other modules: it is not counted."""
    uses: dict[str, _Uses] = {}
    references: list[tuple[str, bool, tuple[str, ...]]] = []
    pending: list[tuple[ast.AST, bool, tuple[str, ...]]] = [(tree, False, ())]  # iterative: long elif chains

    def push_block(statements: list[ast.stmt] | list[ast.expr], in_branch: bool, enclosing: tuple[str, ...]) -> None:
        for statement in statements:
            pending.append((statement, in_branch, enclosing))
            if isinstance(statement, ast.If) and not statement.orelse and _leaves(statement.body) \
                    and backend_test(statement.test, patterns) is False:
                in_branch = True  # `if not _is_hip: return ...`: the rest of the block runs on that backend

    while pending:
        node, in_branch, enclosing = pending.pop()
        if isinstance(node, (ast.If, ast.IfExp)):
            side = backend_test(node.test, patterns)
            pending.append((node.test, in_branch, enclosing))
            push_block(node.body if isinstance(node.body, list) else [node.body], in_branch or side is True, enclosing)
            push_block(node.orelse if isinstance(node.orelse, list) else [node.orelse], in_branch or side is False,
                       enclosing)
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            entry = uses.setdefault(node.name, _Uses(defined_in_branch=True))
            entry.defined_in_branch &= in_branch
            pending += [(child, in_branch, enclosing) for child in [*node.decorator_list, node.args, node.returns]
                        if child is not None]
            push_block(node.body, in_branch, (*enclosing, node.name))
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            references.append((node.id, in_branch, enclosing))
        for name, value in ast.iter_fields(node):
            if name in LEAF_FIELDS:
                continue
            if isinstance(value, list) and value and all(isinstance(v, ast.stmt) for v in value):
                push_block(value, in_branch, enclosing)
            elif isinstance(value, list):
                pending += [(item, in_branch, enclosing) for item in value if isinstance(item, ast.AST)]
            elif isinstance(value, ast.AST):
                pending.append((value, in_branch, enclosing))

    for name, in_branch, enclosing in references:
        if name in uses and name not in enclosing:  # a function's calls of itself say nothing
            uses[name].references.append((in_branch, enclosing))
    only = {name for name, entry in uses.items() if entry.defined_in_branch}
    changed = True
    while changed:
        changed = False
        for name, entry in uses.items():
            if name not in only and entry.references and all(
                    in_branch or any(outer in only for outer in enclosing) for in_branch, enclosing in entry.references):
                only.add(name)
                changed = True
    return frozenset(only)


def _imports_backend(tree: ast.Module, patterns: tuple[str, ...]) -> bool:
    """The module imports, unconditionally at its top level and by absolute name, the backend's runtime package
    (a word of the package's name: `import torch_npu`) or a module of a package's folder for that backend (a
    whole part of the dotted name: `from mojo_opset.backends.ttx.kernels.mlu.utils import ...`; a word of a
    backend plugged into Triton: `from triton.backends.qcom_hexagon_backend.driver import ...`): it runs only
    where that backend is installed. A helper module named after a backend (`from .rocm_bf16 import
    is_rocm_torch`) is how CUDA code tests for it, so neither relative imports nor words of later parts count."""
    names = [alias.name for stmt in tree.body if isinstance(stmt, ast.Import) for alias in stmt.names]
    names += [stmt.module for stmt in tree.body if isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level]
    matches = _pattern_matcher(patterns)
    for name in names:
        package, *parts = name.lower().split(".")
        # A backend plugged into Triton lives under `triton.backends.<name>` (`qcom_hexagon_backend`): its words count.
        plugin = name_tokens(parts[1]) if package == "triton" and len(parts) > 1 and parts[0] == "backends" else []
        if any(map(matches, [*name_tokens(package), *parts, *plugin])):
            return True
    return False


_DEVICE_QUERIES = frozenset({"get_device_properties", "device"})  # `driver.active.utils.get_device_properties("npu")`


def _asks_for_backend_device(tree: ast.Module, patterns: tuple[str, ...]) -> bool:
    """The module asks, outside any branch, for a device of the backend by its name: the Triton driver's
    `get_device_properties("npu")` (the vendor driver's form; CUDA's takes an index) or `torch.device("npu")`.
    Code that picks a device by a test (`"npu" if is_npu() else "cuda"`, `if hasattr(torch, "npu"):`) does not count."""
    matches = _pattern_matcher(patterns)
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.If, ast.IfExp, ast.Try, ast.Match, ast.BoolOp)):
            continue  # taken on some devices only
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) and isinstance(node.func, (ast.Attribute, ast.Name)) \
                and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) in _DEVICE_QUERIES \
                and any(map(matches, name_tokens(node.args[0].value))):
            return True
        pending.extend(child for name, child in ast.iter_fields(node) if name not in LEAF_FIELDS
                       for child in (child if isinstance(child, list) else [child]) if isinstance(child, ast.AST))
    return False


def other_backend(path: str, function: str | None, text: str, model: ModuleModel, patterns: tuple[str, ...]) -> bool:
    """Whether code is written for another backend: a word (split at `_`, `-`, `.`) of the file's folder and
    file names, of a module it imports unconditionally, of a device it asks for by name outside any branch
    (`get_device_properties("npu")`), or of the enclosing jit function's name, matches one of
    `patterns` (shell patterns such as `gfx*`), or the module defines or uses that function only in branches taken on such a backend
    (`if _is_hip:`, `if current_platform.is_rocm():`)."""
    if _path_names_backend(path, patterns):
        return True
    if model.memoized(("imports backend", patterns), lambda: _imports_backend(model.tree, patterns)):
        return True
    if model.memoized(("asks for backend device", patterns), lambda: _may_mention_backend(text, patterns)
                      and _asks_for_backend_device(model.tree, patterns)):
        return True
    if function is None:
        return False
    if _names_backend(name_tokens(function), patterns):
        return True
    if not model.memoized(("mentions backend", patterns), lambda: _may_mention_backend(text, patterns)):
        return False  # no branch of this module can test for such a backend
    return function in model.memoized(("backend-only functions", patterns),
                                      lambda: backend_only_functions(model.tree, patterns))
