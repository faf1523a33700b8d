"""Host functions that run only while their module records a CUDA graph: a replay starts the recorded kernels
again without calling any host code, so their launches see the capture's shapes and compile once for them."""

from __future__ import annotations

import ast
from collections import defaultdict

from tritonlint.analysis.model import ModuleModel
from tritonlint.walk import walk

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_MODULE = "<module>"  # a call made at import or in a class body: not inside a capture


def captured_only(model: ModuleModel, function: ast.AST | None) -> bool:
    """`function` records a CUDA graph (`graph.capture_begin()`, `with torch.cuda.graph(g):`), or it is called
    in its module, and every function that calls it there is such a function (module functions by name,
    methods through `self.`). The warm-up runs before a capture call the same functions."""
    return function is not None and id(function) in model.memoized(("cuda-graph-captured",), lambda: _captured(model))


def _captured(model: ModuleModel) -> frozenset[int]:
    module_functions: dict[str, list[ast.AST]] = defaultdict(list)
    methods: dict[tuple[str, str], list[ast.AST]] = defaultdict(list)
    owner: dict[int, str] = {}  # a method's class
    for stmt in model.tree.body:
        if isinstance(stmt, _FUNCTIONS):
            module_functions[stmt.name].append(stmt)
        elif isinstance(stmt, ast.ClassDef):
            for item in stmt.body:
                if isinstance(item, _FUNCTIONS):
                    methods[(stmt.name, item.name)].append(item)
                    owner[id(item)] = stmt.name
    functions = [f for found in (*module_functions.values(), *methods.values()) for f in found]

    callers: dict[int, set[object]] = defaultdict(set)  # callee id -> calling function ids, or _MODULE
    roots: set[int] = set()
    inside: set[int] = set()  # the nodes of those functions
    for function in functions:
        for node in walk(function):
            inside.add(id(node))
            if isinstance(node, ast.Call):
                for callee in _callees(node, owner.get(id(function)), module_functions, methods):
                    callers[id(callee)].add(id(function))
            if _records(model, node):
                roots.add(id(function))
    for node in walk(model.tree):
        if isinstance(node, ast.Call) and id(node) not in inside:
            for callee in _callees(node, None, module_functions, methods):
                callers[id(callee)].add(_MODULE)

    captured = set(roots)
    grown = True
    while grown:
        grown = False
        for function in functions:
            found = callers.get(id(function))
            if id(function) not in captured and found and found <= captured:
                captured.add(id(function))
                grown = True
    return frozenset(captured)


def _callees(call: ast.Call, cls: str | None, module_functions: dict[str, list[ast.AST]],
             methods: dict[tuple[str, str], list[ast.AST]]) -> list[ast.AST]:
    """The module's functions a call names: `f(...)`, or `self.f(...)` in a method of the class that has f."""
    func = call.func
    if isinstance(func, ast.Name):
        return module_functions.get(func.id, [])
    if cls is not None and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
            and func.value.id == "self":
        return methods.get((cls, func.attr), [])
    return []


def _records(model: ModuleModel, node: ast.AST) -> bool:
    """`graph.capture_begin()`, or `with torch.cuda.graph(g):`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "capture_begin":
        return True
    return isinstance(node, (ast.With, ast.AsyncWith)) and any(
        isinstance(item.context_expr, ast.Call) and model.qualify(item.context_expr.func) == "torch.cuda.graph"
        for item in node.items)
