"""TL103: Triton APIs removed, moved or deprecated at the target Triton version, or used before their first
version, from the data table rules/data/triton-api-versions.yaml."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from tritonlint import evidence
from tritonlint.analysis.block_pointers import (
    ADVANCE,
    MAKE,
    BlockPointerUse,
    Rewrite,
    block_pointer_use,
    call_of,
    holds_block_pointer,
    descriptor_rewrite,
)
from tritonlint.analysis.flow import flow_of
from tritonlint.analysis.jit_globals import global_form, literal_global
from tritonlint.analysis.model import ModuleModel
from tritonlint.analysis.project_facts import triton_pin_key
from tritonlint.analysis.triton_versions import (
    ApiEntry,
    Target,
    show,
    table,
    target_for,
)
from tritonlint.context import (
    MatchContext,
    ParamSpec,
    RawEdits,
    Verdict,
    condition,
    fixer,
)
from tritonlint.prefilter import Requirement, Token, disjoin
from tritonlint.walk import walk

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)+")
# A test that picks code by what the installed Triton offers: the use under it is written for that case.
# A `HAS_*` flag counts where it names what a Triton or a GPU offers (`HAS_TMA`, `has_tensor_descriptor`), not a
# kernel's mode (`HAS_BIAS`, `HAS_FULL_BLOCKS`: an input's property, under which the use runs on every version).
_GUARD = re.compile(r"\bhasattr\s*\(|version|VERSION|_AVAILABLE|_available|\bsupports?_|\bis_triton"
                    r"|TRITON_\d|triton_\d|_ge_\d|_lt_\d"
                    r"|\b(HAS|has)_\w*(TMA|tma|DESC|desc|TRITON|triton|BLOCK_PTR|block_ptr|WGMMA|wgmma|HOPPER|hopper"
                    r"|BLACKWELL|blackwell|SM\d|sm\d|API|api|NEW|new|NATIVE|native)")
# A test of Triton's mere presence (`if _triton_available:`, `if HAS_TRITON:`): it guards the import, not a version.
_PRESENCE = re.compile(r"^(not\s+)?_*(has_?triton|triton_?(is_)?(available|installed)|is_triton_(available|installed)"
                       r"(\(\))?)$", re.IGNORECASE)
_CAUGHT = re.compile(r"^except\s*(:|.*\b(ImportError|ModuleNotFoundError|AttributeError|NotImplementedError|Exception)\b)",
                     re.DOTALL)
_LIBDEVICE = "triton.language.extra.libdevice"
_SHORT = {"triton.language.": "tl."}


def _short(api: str) -> str:
    if api.startswith(_LIBDEVICE):
        return api
    for prefix, alias in _SHORT.items():
        if api.startswith(prefix):
            return alias + api[len(prefix):]
    return api


@dataclass
class Use:
    """A use of an API of the versions table, as the code spells it."""
    entry: ApiEntry
    written: str  # how the code spells it
    span: tuple[int, int]
    method: bool = False  # the method form of a block pointer's API (`p.advance(...)`)


def _lookup(qualified: str | None, exact_only: bool = False) -> ApiEntry | None:
    if qualified is None:
        return None
    data = table()
    found = data.entries.get(qualified)
    if found is not None or exact_only:
        return found
    module = next((m for m in data.modules if qualified.startswith(m + ".")), None)
    return data.entries[module] if module else None


def _attribute_use(ctx: MatchContext) -> Use | None:
    text = ctx.node.text()
    if text.rpartition(".")[2] not in table().last_names:
        return None
    if _DOTTED.fullmatch(text):
        qualified = ctx.model.qualify_dotted(text)
    else:
        expr = ctx.ast_node(types=(ast.Attribute,))
        qualified = ctx.model.qualify(expr) if isinstance(expr, ast.Attribute) else None
    entry = _lookup(qualified, exact_only=True)
    if entry is None and isinstance(expr := ctx.ast_node(types=(ast.Attribute,)), ast.Attribute) \
            and expr.attr == "advance" and ctx.function is not None and ctx.function.node is not None \
            and holds_block_pointer(ctx.model, flow_of(ctx.function.node), expr.value):
        method = _lookup(ADVANCE, exact_only=True)  # `p.advance(...)`: the method form of tl.advance
        return Use(method, text, ctx.span(), method=True) if method else None
    return Use(entry, text, ctx.span()) if entry else None


def _import_use(ctx: MatchContext) -> Use | None:
    node = ctx.ast_node(types=(ast.Import, ast.ImportFrom))
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        base = ctx.model.absolute_module(node)
        names = [base] if base in table().modules else [f"{base}.{alias.name}" for alias in node.names] if base else []
    else:
        return None
    for name in names:
        entry = _lookup(name)
        if entry is not None:
            return Use(entry, name, ctx.span())
    return None


def _keyword_use(ctx: MatchContext) -> Use | None:
    parent = ctx.node.parent()
    call = parent.parent() if parent is not None else None  # keyword -> argument_list -> call
    if call is None or call.kind() != "call":
        return None
    function = call.field("function")
    qualified = ctx.model.qualify_dotted(function.text()) if function and _DOTTED.fullmatch(function.text()) else None
    name = ctx.node.field("name")
    entry = _lookup(f"{qualified}({name.text() if name else ''}=)", exact_only=True) if qualified else None
    return Use(entry, f"{function.text()}({name.text()}=...)", ctx.span()) if entry and function and name else None


def _global_use(ctx: MatchContext) -> Use | None:
    """A Name in a jit function's body that reads a module-level global bound to a number without
    `tl.constexpr(...)`: no binding of the function reaches it (its flow), and it is not in a decorator, an
    annotation or an argument's default, which Triton reads as Python."""
    if literal_global(ctx.model, ctx.node.text()) is None:  # first: most upper-case names are no such global
        return None
    function = ctx.function
    name = ctx.ast_node(types=(ast.Name,))
    if function is None or function.node is None or not isinstance(name, ast.Name):
        return None
    form = global_form(ctx.model, flow_of(function.node), name)
    return Use(table().jit_globals[form], name.id, ctx.span()) if form is not None else None


def guarded(ctx: MatchContext) -> str | None:
    """The test or `try` the use sits under that makes it conditional on the installed Triton, if any."""
    node = ctx.node
    start = ctx.span()[0]
    for ancestor in node.ancestors():
        kind = ancestor.kind()
        if kind in ("if_statement", "elif_clause", "while_statement"):
            # In an `elif` or `else` the use runs only where the earlier tests of the chain failed: an `elif
            # triton.__version__ >= "3.0.0":` above an `else:` guards it too.
            earlier = [c.field("condition") for c in ancestor.children()
                       if c.kind() == "elif_clause" and c.range().end.index <= start] if kind == "if_statement" else []
            for test in (ancestor.field("condition"), *earlier):
                if test is not None and _GUARD.search(test.text()) and not _PRESENCE.match(test.text().strip()):
                    return f"the test `{test.text()}`"
        elif kind == "conditional_expression" and _GUARD.search(ancestor.text()):
            return "a conditional expression that tests the Triton version"
        elif kind == "try_statement":
            body = ancestor.field("body")
            inside = body is not None and body.range().start.index <= start < body.range().end.index
            handlers = [c.text() for c in ancestor.children() if c.kind() == "except_clause"]
            if inside and any(_CAUGHT.match(h) for h in handlers):
                return "a `try` that catches the failure"
        elif kind == "except_clause" and _CAUGHT.match(ancestor.text().partition(":")[0] + ":"):
            return "an `except` handler: the fallback where the newer API failed"
    return None


def judge(entry: ApiEntry, target: Target) -> tuple[str, str] | None:
    """(status, severity) of an entry at the target, or None when the target has it as it is used."""
    if entry.kind == "introduced":
        if entry.introduced and target.low < entry.introduced:
            return f"first appears in Triton {show(entry.introduced)}", "error"
        return None
    if entry.removed and target.high >= entry.removed:
        verb = "left tl.math" if entry.kind == "moved" and entry.api.startswith("triton.language.math.") else \
            "was renamed" if entry.kind == "moved" else "was removed"
        return f"{verb} in Triton {show(entry.removed)}", "error"
    if entry.deprecated and target.high >= entry.deprecated:
        until = f", removed in {show(entry.removed)}" if entry.removed else ""
        since = f"is deprecated (so documented since Triton {show(entry.documented)})" if entry.documented \
            else f"is deprecated since Triton {show(entry.deprecated)}"
        return f"{since}{until}", "warning"
    return None


def _names(data: dict[str, object]) -> Requirement | None:
    # `jit`: a jit function's body may read a module-level global
    return disjoin(Token(word) for word in [*sorted(table().last_names), "jit"])


def _imports_triton(model: ModuleModel, target: int | None) -> bool:
    return any(t == "triton" or t.startswith("triton.") for t in model.imports.values())


@condition("triton-api-version", params={"target": ParamSpec("str", required=False)},
           provides=("api", "status", "target", "instead", "change"), prefilter=_names, applies=_imports_triton)
def triton_api_version(ctx: MatchContext, target: str = "") -> Verdict | None:
    """The match (an attribute chain, an import, or a keyword argument) names an API of TL103's table that
    the target Triton version removed, moved or deprecated, or that appeared after the lowest target
    version; not under a `hasattr`/version test or a `try` that catches the failure."""
    kind = ctx.node.kind()
    use = _attribute_use(ctx) if kind == "attribute" else _keyword_use(ctx) if kind == "keyword_argument" \
        else _global_use(ctx) if kind == "identifier" else _import_use(ctx)
    if use is None or guarded(ctx) is not None:
        return None
    if not target and ctx.file.location and ctx.file.location != "-":
        ctx.project.consulted.add(triton_pin_key(ctx.file.location))  # a cached result holds while the pin does
    at = target_for(ctx.file.location, target)
    judged = judge(use.entry, at)
    if judged is None:
        return None
    status, severity = judged
    entry = use.entry
    if entry in table().jit_globals.values():
        return _global_verdict(ctx, use, at)
    version = entry.introduced if entry.kind == "introduced" else (
        entry.removed if severity == "error" else entry.deprecated)
    made = _make_call(ctx) if entry.api == MAKE else None  # the block pointer this use builds, once for all below
    pointer = block_pointer_use(ctx.model, *made) if made is not None else None
    if entry.kind == "introduced":
        instead = f"the lowest allowed version lacks it; require triton>={show(entry.introduced)} or guard the use"  # type: ignore[arg-type]
    elif pointer is not None and pointer.one_wide:
        instead = "address its one-element-wide block with pointer arithmetic (too narrow for a descriptor)"
    else:
        instead = f"use {_short(entry.replacement or '') if entry.kind == 'moved' and entry.fix == 'rename' else entry.replacement}"
    notes = []
    # (the probe ran the function form: the method form's failure is the block pointer's, where it is made)
    seen = evidence.version_outcome("TL103", entry.probe, show(version)) if entry.probe and version and not use.method \
        else None
    if seen:
        # A deprecation the run accepts silently is one of the documentation, ahead of any warning.
        quiet = " (deprecated in the documentation, not yet warned about when it runs)" \
            if severity == "warning" and seen.startswith("ok, no warning") else ""
        notes.append(f"Under Triton {show(version)} (CPU run, bench/triton_versions.py): {seen}{quiet}.")  # type: ignore[arg-type]
    rewrite = descriptor_rewrite(ctx.model, *made, ctx.file.text_of) if made is not None else None
    if entry.api in (MAKE, "triton.language.advance"):
        notes.append(_rewrite_note(ctx, entry.api == MAKE, pointer, rewrite is not None))
    if entry.api == "triton.language.advance" and _discarded(ctx):
        notes.append("This advance's result is thrown away (a statement of its own): the block pointer does not move, "
                     "so every pass reads and writes the same block. Assign it (`p = tl.advance(p, ...)`) if the loop "
                     "should step; the rewrite keeps whichever offsets the kernel means.")
    point = _import_point(ctx) if ctx.model.imports.get("libdevice") is None else None
    related = [(point, point)] if point is not None and entry.replacement and "libdevice" in entry.replacement else []
    if rewrite is not None:
        related += [ctx.file.span_of(node) for node, _ in rewrite.edits if node is not rewrite.after[0].value]
    change = "Rewrite the block pointer as a tensor descriptor (shown only)" if rewrite else "Use the API's new name"
    return Verdict(vars={"api": _short(entry.api), "status": status, "target": at.describe(), "instead": instead,
                         "change": change},
                   severity=severity, span=use.span, data={"use": use, "rewrite": rewrite}, notes=notes, related=related,
                   applicability="display-only" if rewrite is not None else None)


def _global_verdict(ctx: MatchContext, use: Use, at: Target) -> Verdict:
    form, value, module = literal_global(ctx.model, use.written)  # type: ignore[misc]
    since = show(use.entry.removed)  # type: ignore[arg-type]
    where = f" in `{module}`, which defines it" if module is not None else ""
    status = f"is a plain module-level global read in jit code, refused from Triton {since}" if form == "plain" \
        else f"is annotated `tl.constexpr` but not made with it, refused in jit code from Triton {since}"
    return Verdict(
        vars={"api": use.written, "status": status, "target": at.describe(),
              "instead": "make it `tl.constexpr(...)` or a `tl.constexpr` argument", "change": ""},
        severity="error", span=use.span, data={"use": use, "rewrite": None},
        notes=[f"Write `{use.written} = tl.constexpr({ast.unparse(value)})`{where} (host code that reads it then gets a "
               f"tl.constexpr: `{use.written}.value` is the number).",
               f"Triton's code generator raises NameError(\"Cannot access global variable {use.written} from within "
               "@jit'ed function ...\") unless TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1 (each version's code generator, "
               "fixtures/results/tl103-jit-globals.json)."])


def _rewrite_note(ctx: MatchContext, made_here: bool, use: BlockPointerUse | None, shown: bool) -> str:
    """How to rewrite the block pointer as a tensor descriptor, by what the kernel does with it (`use`, where the
    match makes it and assigns it to one name): the accesses it makes (a store-only pointer gets `desc.store`),
    whether it advances, whether its last stride is the 1 a descriptor needs (a transposed view such as K^T is
    described in memory order and its tile transposed)."""
    if use is not None and use.one_wide:
        return ("Rewrite: a descriptor's block needs at least 16 bytes in its last dimension, and this block is one "
                "element wide there: address the elements with pointer arithmetic (`tl.load(base + offs, "
                "mask=...)`).")
    if use is not None and not (use.loaded or use.stored or use.advanced):
        return "Rewrite: nothing loads, stores or advances this block pointer: remove it."
    if use is not None and not (use.loaded or use.stored or use.handed):
        return "Rewrite: nothing loads or stores through this block pointer (it is only advanced): remove it and its advances."
    accesses = [a for a, used in (("`desc.load([offsets])`", use is None or use.loaded or not use.stored),
                                  ("`desc.store([offsets], value)`", use is None or use.stored)) if used]
    if not made_here or use is not None and use.advanced or use is None and _advances(ctx):
        steps = f"before the loop, and {' or '.join(accesses)} in it with the offsets the advances kept"
    elif use is not None and use.hoistable:
        steps = (f"once before the loop it is made in (nothing it is made of but its offsets changes there), and "
                 f"{' or '.join(accesses)} in the loop with the offsets it is made with")
    else:
        steps = f"where the block pointer is made, and {' or '.join(accesses)} with its offsets"
    transposed = "" if use is None or use.contiguous_last and not use.transposed else (
        " Its `order` names another dimension than the last as the contiguous one. Where the strides agree (a "
        "transposed view, such as K^T), describe the tensor in its memory order, since a descriptor's last dimension "
        "must be contiguous, and transpose the loaded tile (`.T`); where the last stride is 1 at run time, `order` is "
        "only mislabelled and the tile needs no transpose." if use.transposed else
        " Its last stride is a run-time value: a descriptor needs it to be 1 (the last dimension contiguous).")
    typed = " Its `.type.element_ty` becomes `desc.dtype`." if use is not None and use.typed else ""
    return (f"Rewrite: `desc = tl.make_tensor_descriptor(base, shape, strides, block_shape)` {steps} (see "
            "`tritonlint rule TL103`)" + (", as the suggested fix shows" if shown else "") + "." + transposed + typed +
            " A descriptor needs 16-byte aligned strides and base, and `triton.set_allocator` on the host when it is "
            f"made in the kernel. Speed of the block-pointer kernel in {evidence.fixture_phrase('TL103-block-ptr-removed')} "
            "(the rewrite): time the rewrite on your shapes.")


def _discarded(ctx: MatchContext) -> bool:
    """The matched `tl.advance` (or `p.advance`) is called as a statement of its own, its result unused: block
    pointers are values, so the pointer it was given stays where it was."""
    attribute = ctx.ast_node(types=(ast.Attribute,))
    statements = walk(ctx.function.node) if ctx.function is not None and ctx.function.node is not None else ()
    return attribute is not None and any(isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                                         and node.value.func is attribute for node in statements)


def _advances(ctx: MatchContext) -> bool:
    """The function the block pointer is made in moves a block pointer (`tl.advance(p, ...)`, `p.advance(...)`)."""
    function = ctx.function
    if function is None or function.node is None:
        return True
    return any(isinstance(node, ast.Call) and (ctx.model.qualify(node.func) == "triton.language.advance"
                                               or isinstance(node.func, ast.Attribute) and node.func.attr == "advance")
               for node in ast.walk(function.node))


def _make_call(ctx: MatchContext) -> tuple[ast.FunctionDef, ast.Call] | None:
    """The `tl.make_block_ptr(...)` call whose callee the match is, with the kernel it is made in."""
    attribute = ctx.ast_node(types=(ast.Attribute,))
    function = ctx.function
    if not isinstance(attribute, ast.expr) or function is None or function.node is None:
        return None
    call = call_of(ctx.model, function.node, attribute)
    return (function.node, call) if call is not None else None


def _rewrite_edits(ctx: MatchContext, rewrite: Rewrite) -> RawEdits | None:
    """The display-only edits of a block-pointer rewrite: the offsets' line goes after the descriptor's."""
    statement, line = rewrite.after
    start = ctx.file.span_of(statement)[0]
    indent = ctx.file.text[ctx.file.text.rfind("\n", 0, start) + 1:start]
    if indent.strip():
        return None  # the statement shares its line with other code
    edits: RawEdits = []
    for node, text in rewrite.edits:
        if node is statement.value:
            text += f"\n{indent}{line}"
        edits.append((*ctx.file.span_of(node), text))
    return sorted(edits)


@fixer("triton-api-move")
def triton_api_move(ctx: MatchContext, verdict: Verdict) -> RawEdits | None:
    """Name moves: `tl.math.tanh` -> `libdevice.tanh` (with `from triton.language.extra import libdevice`),
    `from triton.language.math import tanh` -> from libdevice, `tl._experimental_make_tensor_descriptor`
    -> `tl.make_tensor_descriptor`; `allow_tf32=True/False` -> `input_precision="tf32"/"ieee"`."""
    use: Use = verdict.data["use"]
    if verdict.data.get("rewrite") is not None:
        return _rewrite_edits(ctx, verdict.data["rewrite"])
    entry = use.entry
    kind = ctx.node.kind()
    if entry.fix == "keyword" and kind == "keyword_argument":
        return _keyword_fix(ctx)
    if entry.fix != "rename":
        return None
    start, end = use.span
    if kind == "import_from_statement":
        node = ctx.ast_node(types=(ast.ImportFrom,))
        base = entry.api.rpartition(".")[0]
        if not isinstance(node, ast.ImportFrom) or node.level or node.module != base or \
                any(_lookup(f"{base}.{a.name}") is None for a in node.names):
            return None  # a relative import, or names that stay where they are
        module = ctx.node.field("module_name")
        new_base = (entry.replacement or "").rpartition(".")[0]
        return [(*ctx.span(module), new_base)] if module is not None else None
    if kind != "attribute":
        return None
    if entry.replacement and entry.replacement.startswith(_LIBDEVICE + "."):
        return _libdevice_fix(ctx, use)
    head = use.written.rpartition(".")[0]
    return [(start, end, f"{head}.{entry.replacement.rpartition('.')[2]}")] if entry.replacement else None


def _libdevice_fix(ctx: MatchContext, use: Use) -> RawEdits | None:
    name = use.written.rpartition(".")[2]
    start, end = use.span
    bound = ctx.model.imports.get("libdevice")
    if bound == _LIBDEVICE:
        return [(start, end, f"libdevice.{name}")]
    if bound is not None or "libdevice" in ctx.model.local_names:
        return None  # the name is taken
    after = _import_point(ctx)
    if after is None:
        return None
    return [(after, after, "\nfrom triton.language.extra import libdevice"), (start, end, f"libdevice.{name}")]


def _import_point(ctx: MatchContext) -> int | None:
    """Where the libdevice import goes: after the module's last top-level import."""
    imports = [s for s in ctx.model.tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
    return ctx.file.span_of(imports[-1])[1] if imports else None


def _keyword_fix(ctx: MatchContext) -> RawEdits | None:
    value = ctx.node.field("value")
    call = ctx.node.parent()
    if value is None or value.text() not in ("True", "False") or call is None or "input_precision" in call.text():
        return None
    precision = "tf32" if value.text() == "True" else "ieee"
    return [(*ctx.span(), f'input_precision="{precision}"')]
