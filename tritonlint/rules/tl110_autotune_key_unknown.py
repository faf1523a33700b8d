"""TL110: an autotune `key` entry that names no parameter of the kernel (Triton ignores it silently)."""

from __future__ import annotations

import ast
from collections.abc import Callable

from tritonlint.analysis.model import Autotune, JitFunction, ModuleModel
from tritonlint.analysis.names import DTYPE_WORDS, name_words
from tritonlint.context import Exemption, MatchContext, RawEdits, Verdict, condition, fixer
from tritonlint.walk import walk


def _autotuned(model: ModuleModel, call: ast.Call) -> JitFunction | None:
    return next((f for f in model.functions if f.autotune is not None and f.autotune.node is call), None)


def _key_entries(model: ModuleModel, autotune: Autotune) -> list[ast.Constant] | None:
    """The string literals of the key list (written in the call, or a module-level list it names)."""
    node = autotune.key_node
    if isinstance(node, ast.Name):
        node = model.assignments.get(node.id)
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    if not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return None
    return node.elts  # type: ignore[return-value]


# A rename is for a misspelling: most of the name's characters kept (`gropup_c_ptrs` -> `group_c_ptrs`: 0.96).
# A name merely alike (`BUCKET_FN` and `BLOCK_N`: 0.62) is suggested, not written in.
_RENAME_RATIO = 0.8


def closest(name: str, params: list[str]) -> tuple[list[str], str | None]:
    """Parameter names close to `name` (best first), and the one to rename it to when there is one clear
    candidate: the only name equal up to case, or a best match close enough to be a misspelling and well
    ahead of the next."""
    same_case = [p for p in params if p.lower() == name.lower()]
    if same_case:
        return same_case, same_case[0] if len(same_case) == 1 else None
    import difflib  # here: only a finding needs it, and importing it costs every lint

    scored = sorted(((difflib.SequenceMatcher(None, name.lower(), p.lower()).ratio(), p) for p in params),
                    reverse=True)
    close = [(score, p) for score, p in scored if score >= 0.6][:3]
    if not close:
        return [], None
    clear = close[0][0] >= _RENAME_RATIO and (len(close) == 1 or close[0][0] - close[1][0] >= 0.15)
    return [p for _, p in close], close[0][1] if clear else None


def _shared_names(model: ModuleModel, kernel: JitFunction) -> set[str]:
    """The parameters of the module's other autotuned kernels keyed by the same module-level list (`key=KEY`
    on a forward and a backward kernel): an entry one of them takes is there for it, and Triton skips it for
    the kernels that lack it, by design (a kernel with a parameter the entry misspells is still flagged)."""
    node = kernel.autotune.key_node if kernel.autotune is not None else None
    if not isinstance(node, ast.Name):
        return set()
    return {p.name for other in model.functions if other is not kernel and other.autotune is not None
            and isinstance(other.autotune.key_node, ast.Name) and other.autotune.key_node.id == node.id
            for p in other.params}


# Reasons an entry that names no parameter takes nothing from the key (given the entry and the kernel's parameter
# names); the rule doc lists each.
EXEMPTIONS: tuple[Exemption[Callable[[str, list[str]], bool]], ...] = (
    Exemption("dtype-entry", "an entry named as a dtype (`DTYPE`, `acc_dtype`, `IS_FP8`) that misspells no parameter: "
              "Triton's autotuner appends every tensor argument's dtype to the key, so what the entry meant to "
              "tell apart is told apart already",
              lambda entry, params: bool(set(name_words(entry)) & DTYPE_WORDS) and closest(entry, params)[1] is None),
)


def _entries(unknown: list[ast.Constant]) -> str:
    listed = ", ".join(f'"{e.value!s}"' for e in unknown)
    return f"entry {listed} is not a parameter" if len(unknown) == 1 else f"entries {listed} are not parameters"


def _has_keyed_autotune(model: ModuleModel, target: int | None) -> bool:
    return any(f.autotune is not None and f.autotune.key for f in model.functions)


@condition("autotune-key-unknown-entry", provides=("entries", "kernel", "suggestion"), applies=_has_keyed_autotune)
def autotune_key_unknown_entry(ctx: MatchContext) -> Verdict | None:
    """A @triton.autotune whose literal key names something that is not a parameter of the kernel."""
    call = ctx.ast_node(types=(ast.Call,))
    kernel = _autotuned(ctx.model, call) if isinstance(call, ast.Call) else None
    if kernel is None or kernel.autotune is None or kernel.node is None:
        return None
    if kernel.autotune.one_config:
        return None  # the autotuner runs its one config without benchmarking and never reads the key
    arguments = kernel.node.args
    if arguments.vararg or arguments.kwarg:
        return None
    entries = _key_entries(ctx.model, kernel.autotune)
    params = [p.name for p in kernel.params]
    shared = _shared_names(ctx.model, kernel)
    # An entry another kernel sharing the list takes is for that kernel, unless it misspells one of this one's.
    unknown = [e for e in entries or () if e.value not in params
               and (e.value not in shared or closest(str(e.value), params)[1] is not None)
               and not any(exemption.applies(str(e.value), params) for exemption in EXEMPTIONS)]
    if not unknown:
        return None
    # Not a name the key already holds, nor one the caller never passes: the autotuner reads the key from the
    # call's own arguments, before the configs and heuristics add theirs.
    taken = set(kernel.autotune.key or ()) | kernel.autotune.tuned_meta | set(kernel.heuristics)
    suggestions: list[str] = []
    renames: dict[str, str] = {}
    for entry in unknown:
        candidates, rename = closest(str(entry.value), [p for p in params if p not in taken])
        if candidates:
            names = " or ".join(f"`{c}`" for c in candidates)
            suggestions.append(names if len(unknown) == 1 else f'{names} for "{entry.value!s}"')
        if rename is not None and rename not in renames.values():
            renames[str(entry.value)] = rename
    spans = [ctx.file.span_of(e) for e in unknown]
    return Verdict(
        vars={"entries": _entries(unknown),
              "kernel": kernel.name, "suggestion": f"; did you mean {', '.join(suggestions)}?" if suggestions else ""},
        span=spans[0],
        # A key list defined elsewhere (`KEY = [...]`): the autotune call is where it is used.
        related=spans[1:] + ([ctx.file.span_of(call)] if call is not None and isinstance(kernel.autotune.key_node, ast.Name) else []),
        data={"renames": renames, "entries": unknown, "key_node": kernel.autotune.key_node},
        notes=[] if suggestions else [f"No parameter of `{kernel.name}` is named like it: "
                                      f"{', '.join(params) or 'the kernel takes none'}."],
    )


@fixer("rename-key-entry")
def rename_key_entry(ctx: MatchContext, verdict: Verdict) -> RawEdits | None:
    """Rename each unknown key entry to the one parameter name it clearly misspells, keeping its quotes; not in
    a module-level key list that other code reads too (another kernel may key on the name as written)."""
    node = verdict.data["key_node"]
    if isinstance(node, ast.Name):
        reads = sum(isinstance(n, ast.Name) and n.id == node.id and isinstance(n.ctx, ast.Load) for n in walk(ctx.model.tree))
        if reads != 1:
            verdict.notes.append(f"No fix offered: the key list `{node.id}` is shared by other code; rename it there.")
            return None
    edits = []
    for entry in verdict.data["entries"]:
        rename = verdict.data["renames"].get(entry.value)
        if rename is None:
            continue
        start, end = ctx.file.span_of(entry)
        quoted = ctx.file.text[start:end]
        if quoted[:1] not in "'\"" or quoted[1:-1] != entry.value:
            continue  # a prefixed, escaped or implicitly joined string: leave it to the author
        edits.append((start + 1, end - 1, rename))
    return edits or None
