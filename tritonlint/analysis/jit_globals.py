"""Module-level numbers a jit function reads without `tl.constexpr(...)`: Triton's code generator refuses them
(TL103's table, section `jit_globals`: a plain `NAME = 42` from 3.0, `NAME: tl.constexpr = 42` from 3.3), so no
Triton from then on compiles the function. TL103 reports the read; the performance rules stay silent on a
kernel that cannot compile."""

from __future__ import annotations

import ast
import re

from tritonlint.analysis.flow import FunctionFlow, flow_of
from tritonlint.analysis.kernel import with_helpers
from tritonlint.analysis.model import ModuleModel
from tritonlint.analysis.triton_names import TL
from tritonlint.analysis.triton_versions import Version, table
from tritonlint.walk import walk


# Numbers of the standard library's math module, and its functions of numbers (`math.log2(math.e)`): a float.
MATH_CONSTANTS = frozenset(f"math.{n}" for n in ("pi", "e", "tau", "inf"))
MATH_FUNCTIONS = frozenset(f"math.{n}" for n in ("sqrt", "log", "log2", "log10", "exp", "exp2", "pow", "cos", "sin",
                                                  "tan", "atan", "erf", "lgamma"))


def _literal(model: ModuleModel, value: ast.expr | None) -> bool:
    """A number, arithmetic of numbers (`-1e4`, `2 ** 31 - 1`), or the math module's of them (`math.sqrt(2.0 /
    math.pi)`, `math.log2(math.e)`)."""
    if isinstance(value, ast.Constant):
        return isinstance(value.value, (int, float)) and not isinstance(value.value, bool)
    if isinstance(value, ast.UnaryOp):
        return _literal(model, value.operand)
    if isinstance(value, ast.Attribute):
        return model.qualify(value) in MATH_CONSTANTS
    if isinstance(value, ast.Call):
        return model.qualify(value.func) in MATH_FUNCTIONS and bool(value.args) and not value.keywords \
            and all(_literal(model, arg) for arg in value.args)
    return isinstance(value, ast.BinOp) and _literal(model, value.left) and _literal(model, value.right)


def literal_globals(model: ModuleModel) -> dict[str, tuple[str, ast.expr]]:
    """Module-level names bound once, at the top level, to a number: `plain` (`LOG2E = 1.44`) or `annotated`
    (`LOG2E: tl.constexpr = 1.44`). A module that opts out with TRITON_ALLOW_NON_CONSTEXPR_GLOBALS has none."""
    def collect() -> dict[str, tuple[str, ast.expr]]:
        if model.text is not None and "TRITON_ALLOW_NON_CONSTEXPR_GLOBALS" in model.text:
            return {}
        found: dict[str, tuple[str, ast.expr]] = {}
        for statement in model.tree.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                    and isinstance(statement.targets[0], ast.Name):
                name, value, form = statement.targets[0].id, statement.value, "plain"
            elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) \
                    and statement.value is not None and model.qualify(statement.annotation) == f"{TL}.constexpr":
                name, value, form = statement.target.id, statement.value, "annotated"
            else:
                continue
            if model.assignments.get(name) is value and _literal(model, value):
                found[name] = (form, value)
        return found
    return model.memoized(("literal-globals",), collect)


# A constant by the naming convention (what TL103 matches): only such imported names are looked up in their module.
CONSTANT_NAME = re.compile(r"^_*[A-Z][A-Z0-9_]*$")


def _imports_constants(model: ModuleModel) -> bool:
    return model.imported is not None and any(CONSTANT_NAME.match(name) for name in model.imports)


def imported_literal(model: ModuleModel, name: str) -> tuple[str, ast.expr, str] | None:
    """A number another module of the project binds at its top level and this one imports by a constant's name
    (`from .constants import MASK_VALUE`): its form, its value and that module's name. Triton reads it in jit
    code as a global of this module, and refuses it alike (memoized per name)."""
    def look_up() -> tuple[str, ast.expr, str] | None:
        qualified = model.imports.get(name) if name not in model.local_names and CONSTANT_NAME.match(name) else None
        if qualified is None or model.imported is None \
                or (model.text is not None and "TRITON_ALLOW_NON_CONSTEXPR_GLOBALS" in model.text):
            return None
        module, _, attribute = qualified.rpartition(".")
        other = model.imported(module, attribute) if module else None
        found = literal_globals(other).get(attribute) if other is not None else None
        return (*found, module) if found is not None else None
    return model.memoized(("imported-literal", name), look_up)


def literal_global(model: ModuleModel, name: str) -> tuple[str, ast.expr, str | None] | None:
    """The form and value of the number a module-level name of the module stands for, its own (module None) or
    imported from another module of the project (`imported_literal`)."""
    own = literal_globals(model).get(name)
    return (*own, None) if own is not None else imported_literal(model, name)


def global_form(model: ModuleModel, flow: FunctionFlow, name: ast.Name) -> str | None:
    """How the module-level number that `name` reads in the function's body is written (`plain`, `annotated`),
    where no binding of the function reaches it; None for anything else, and for a read in a decorator, an
    annotation or an argument's default, which Triton evaluates as Python."""
    found = literal_global(model, name.id)  # first: most names are no such global
    if found is None or not isinstance(name.ctx, ast.Load) or flow.statement_of(name) is None or flow.reaching(name):
        return None
    return found[0]


def refused_global(model: ModuleModel, function: ast.FunctionDef, by: Version) -> str | None:
    """The first module-level number the function reads in a form Triton refuses by version `by`."""
    if not literal_globals(model) and not _imports_constants(model):
        return None  # most modules: nothing to look for
    flow = flow_of(function)
    for node in walk(ast.Module(body=function.body, type_ignores=[])):
        if isinstance(node, ast.Name) and (form := global_form(model, flow, node)) is not None:
            removed = table().jit_globals[form].removed
            if removed is not None and removed <= by:
                return node.id
    return None


def refused_in_kernel(model: ModuleModel, kernel: ast.FunctionDef, by: Version) -> str | None:
    """`refused_global` of the kernel or of a jit helper of its module that it calls: no Triton from `by` on
    compiles the kernel (memoized per kernel and version)."""
    return model.memoized(("refused-in-kernel", id(kernel), by), lambda: next(filter(None, (
        refused_global(model, part, by) for part in with_helpers(model, kernel))), None))
