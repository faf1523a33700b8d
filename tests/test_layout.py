"""The pipeline's import directions: analysis knows no rule, rules know no other rule and no driver, and no
module imports itself back through others. Function-local imports count; `if TYPE_CHECKING:` ones do not
(they never run)."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tritonlint"
# The stages that drive a run: nothing below them may import them.
DRIVERS = {"engine", "linter", "runner", "cli", "command", "reporting", "cache", "ruleset", "explain", "workers", "fixes",
           "server", "__main__"}


def module_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(node) for block in ast.walk(tree) if isinstance(block, ast.If)
                   and ast.unparse(block.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
                   for statement in block.body for node in ast.walk(statement)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)  # `from tritonlint import rules`
    return {name for name in found if name == "tritonlint" or name.startswith("tritonlint.")}


MODULES = {module_of(path): path for path in PACKAGE.rglob("*.py")}
GRAPH = {module: {name for name in imports_of(path) if name in MODULES and name != module}
         for module, path in MODULES.items()}


def stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_analysis_imports_no_rule_context_or_driver():
    for module, targets in GRAPH.items():
        if stage(module) != "analysis":
            continue
        bad = {t for t in targets if stage(t) in {"rules", "context"} | DRIVERS}
        assert not bad, f"{module} imports {sorted(bad)}"


def test_rules_import_no_other_rule_and_no_driver():
    for module, targets in GRAPH.items():
        if stage(module) != "rules" or module == "tritonlint.rules":
            continue
        other_rules = {t for t in targets if stage(t) == "rules" and t not in ("tritonlint.rules", "tritonlint.rules.common")}
        drivers = {t for t in targets if stage(t) in DRIVERS}
        assert not other_rules and not drivers, f"{module} imports {sorted(other_rules | drivers)}"
        assert "tritonlint.rules" not in targets


def test_context_and_reporters_know_no_rule():
    for module in ("tritonlint.context", "tritonlint.reporting"):
        assert not {t for t in GRAPH[module] if stage(t) == "rules"}, module


def test_no_import_cycle():
    state: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(GRAPH[module]):
            if state.get(target) == 1:
                cycle = path[path.index(target):] + [target] if target in path else [module, target]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target, path + [target])
        state[module] = 2

    for module in sorted(GRAPH):
        if module not in state:
            visit(module, [module])
