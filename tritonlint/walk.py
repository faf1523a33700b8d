"""`walk`: ast.walk's nodes in ast.walk's breadth-first order, less the operator and context leaves
(`ast.Add()`, `ast.Load()`: two nodes in five of a typical tree, with nothing under them and nothing a
check looks for; it reads `node.op` and `node.ctx` instead), about four times as fast. The nodes under a
statement are kept on it: the checks walk the same kernel bodies again and again (each condition at each
match), and a list kept on the tree lives exactly as long as the tree. The list leaves out the statement
itself: a statement that referred to itself would make every tree a reference cycle, freed only by the
garbage collector's rare full passes (one process then peaked at 329 MB instead of 116 MB on the bench
corpus)."""

from __future__ import annotations

import ast

_AST = ast.AST
_KEPT = "_tritonlint_nodes"
LEAF_FIELDS = frozenset({"ctx", "op", "ops"})  # fields that hold only operator and context leaves
# Fields that never hold a node (names, flags, numbers), and lists that may hold something else (None keys
# of `{**x}`, the names of `global`): every other list holds nodes only.
_SCALAR_FIELDS = LEAF_FIELDS | {"id", "attr", "asname", "arg", "module", "level", "kind", "conversion",
                                "is_async", "simple", "type_comment", "tag", "rest"}
_MIXED_LISTS = frozenset({"keys", "kw_defaults", "names", "kwd_attrs"})
_PLANS: dict[type, tuple[tuple[str, bool], ...]] = {}  # per node class: (field, a mixed list?) worth looking in


def walk(node: ast.AST) -> list[ast.AST]:
    """`node` and every node under it, breadth first (the order of ast.walk), leaves aside (see above)."""
    kept = node.__dict__.get(_KEPT) if isinstance(node, (ast.stmt, ast.Module)) else None
    if kept is not None:
        return [node, *kept]
    found = [node]
    index = 0
    while index < len(found):
        found.extend(children(found[index]))
        index += 1
    if isinstance(node, (ast.stmt, ast.Module)):
        setattr(node, _KEPT, found[1:])
    return found


def children(node: ast.AST) -> list[ast.AST]:
    """The direct children of a node (ast.iter_child_nodes, as a list, faster and without the leaves)."""
    plan = _PLANS.get(node.__class__)
    if plan is None:
        plan = _PLANS[node.__class__] = tuple(
            (name, name in _MIXED_LISTS) for name in node._fields
            if name not in _SCALAR_FIELDS and not (node.__class__ is ast.Constant and name == "value"))
    found: list[ast.AST] = []
    for name, mixed in plan:
        value = getattr(node, name, None)
        if value.__class__ is list:
            found.extend([item for item in value if isinstance(item, _AST)] if mixed else value)
        elif isinstance(value, _AST):
            found.append(value)
    return found


def parents(root: ast.AST) -> dict[int, ast.AST]:
    """id(node) -> its parent, for every node under `root` (leaves aside)."""
    return {id(child): parent for parent in walk(root) for child in children(parent)}
