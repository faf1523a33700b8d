"""The project's reverse launch index: for each autotuned kernel, and each kernel its own module never launches
(TL102 reads what a wrapper module passes it), the other modules of the project that launch it, through their
imports and the re-exports of package modules (`from pkg import kernel` where pkg/__init__.py imports it from
pkg.ops). A module that hands one of its kernels to another module's helper, which launches its parameter
(`run_triton_kernel(q4_0_kernel, w, x)` with `kernel[grid](...)` in pkg.utils), counts the helper's module as
launching it, by the name `pkg.utils.run_triton_kernel(kernel)` (launches.parameter_key).

Each linted or context module contributes small plain data (`ModuleLinks`: what its launches name, what its
imports bind, which kernels it defines under autotune or never launches), kept in the result cache beside the
kernel summaries; the runner joins them after the first pass and re-lints only the modules whose indexed
kernels other modules launch. A result judged from another module's launches depends on that module: the
dependency is recorded as the pseudo-target `<launching module>.@launches`, so an edit there invalidates the
cached result, and a module that starts or stops launching the kernel changes the set of launching modules,
which the runner compares with the one recorded.

The same links give the importers index: for each module, the other modules that import something of it, where
the calls of its functions can be (TL107 reads what a launching function's callers pass). A result that read
them depends on each (`<module>.@calls`) and on the set, compared by the runner like the launching modules.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tritonlint.analysis.project import CALLS, Namespaces, defining_module, module_model

if TYPE_CHECKING:
    from tritonlint.analysis.model import ModuleModel

LAUNCHES = "@launches"
_MAX_HOPS = 8  # re-exports followed from one name before giving up (a cycle of imports ends there too)


@dataclass
class ModuleLinks:
    """What one module says about launches across modules."""

    launched: tuple[str, ...] = ()  # qualified names its launches start (each candidate of a choice)
    imports: tuple[tuple[str, str], ...] = ()  # (local name, qualified target) of imports of project modules
    autotuned: tuple[str, ...] = ()  # qualified names of the autotuned kernels it defines
    unlaunched: tuple[str, ...] = ()  # qualified names of the kernels it defines and never launches itself
    # (function, position or -1 for keyword-only, parameter) of its functions that launch a parameter they are handed
    kernel_parameters: tuple[tuple[str, int, str], ...] = ()
    # (callee, position or -1, keyword or "", kernel) of its calls that hand one of its kernels to another module
    handed: tuple[tuple[str, int, str, str], ...] = ()

    @property
    def indexed(self) -> tuple[str, ...]:
        """The kernels whose launches in other modules the index records."""
        return self.autotuned + self.unlaunched


def module_links(model: ModuleModel, project_modules: frozenset[str]) -> ModuleLinks | None:
    """The links of a module of the project, None when it has none."""
    from tritonlint.analysis.launches import kernel_parameter, launch_candidates, launcher_name  # not for cached links

    def in_project(name: str | None) -> bool:
        return name is not None and defining_module(name, project_modules) is not None

    launched = {target for launch in model.launches for target in launch_candidates(model, launch) or ()
                if in_project(target)}
    imports = tuple(sorted([*((name, target) for name, target in model.imports.items() if in_project(target)),
                            *(("*", module) for module in model.star_modules if module in project_modules)]))
    defined = [f for f in model.functions if ".<locals>." not in f.qualname]
    autotuned = tuple(f.qualname for f in defined if f.autotune is not None)
    own = {id(kernel.node) for launch in model.launches if (kernel := model.kernel_for(launch)) is not None}
    unlaunched = tuple(f.qualname for f in defined if f.autotune is None and id(f.node) not in own)
    parameters = sorted({(launcher_name(model, launch), -1 if found[0] is None else found[0], found[1])
                         for launch in model.launches if (found := kernel_parameter(model, launch)) is not None})
    handed = _handed(model, {f.qualname for f in defined}, in_project)
    if not (launched or imports or autotuned or unlaunched or parameters or handed):
        return None
    return ModuleLinks(tuple(sorted(launched)), imports, autotuned, unlaunched, tuple(parameters), handed)


def _handed(model: ModuleModel, kernels: set[str], in_project: Callable[[str | None], bool]) -> tuple[tuple[str, int, str, str], ...]:
    """The calls of other modules' functions that pass one of this module's kernels, by position or keyword:
    `run_triton_kernel(q4_0_kernel, w, x)` with the helper imported from `..utils`."""
    from tritonlint.analysis.model import calls_with_scope

    if not kernels:
        return ()
    found: set[tuple[str, int, str, str]] = set()
    for _, call in calls_with_scope(model.tree):
        callee = model.qualify(call.func)
        if callee is None or callee.startswith(model.module + ".") or not in_project(callee):
            continue
        for position, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                break  # later positions are not known
            if (name := model.qualify(arg)) in kernels:
                found.add((callee, position, "", name))
        found |= {(callee, -1, kw.arg, name) for kw in call.keywords
                  if kw.arg is not None and (name := model.qualify(kw.value)) in kernels}
    return tuple(sorted(found))


def resolve(target: str, links: dict[str, ModuleLinks], project_modules: frozenset[str],
            read: Callable[[str], ModuleLinks | None] = lambda module: None) -> str:
    """The definition a qualified name reaches through the project's re-exports: `pkg.kernel` is
    `pkg.ops.kernel` when pkg/__init__.py imports `kernel` from `pkg.ops`. `read(module)` gives the links of a
    module the run did not model (a package's __init__.py that never mentions triton)."""
    for _ in range(_MAX_HOPS):
        module = defining_module(target, project_modules)
        if module is None:
            return target
        if module not in links:
            links[module] = read(module) or ModuleLinks()
        found = links[module]
        head, _, rest = target[len(module) + 1:].partition(".")
        bound = dict(found.imports).get(head)
        if bound is None or bound == target:
            return target
        target = f"{bound}.{rest}" if rest else bound
    return target


def build_index(links: dict[str, ModuleLinks], project_modules: frozenset[str],
                read: Callable[[str], ModuleLinks | None] = lambda module: None) -> dict[str, dict[str, frozenset[str]]]:
    """Indexed kernel (autotuned, or never launched in its module) -> launching module -> the names that
    module's launches give the kernel by."""
    indexed = {name for found in links.values() for name in found.indexed}
    index: dict[str, dict[str, set[str]]] = {}
    for module, found in list(links.items()):
        for target in found.launched:
            kernel = target if target in indexed else resolve(target, links, project_modules, read)
            if kernel in indexed and not kernel.startswith(module + "."):
                index.setdefault(kernel, {}).setdefault(module, set()).add(target)
        for callee, position, keyword, kernel in found.handed:
            function = resolve(callee, links, project_modules, read)
            owner = defining_module(function, project_modules)
            if kernel not in indexed or owner is None or owner == module:
                continue
            for name, at, param in links[owner].kernel_parameters if owner in links else ():
                if name == function and (keyword == param if keyword else at == position):
                    index.setdefault(kernel, {}).setdefault(owner, set()).add(f"{function}({param})")
    return {kernel: {m: frozenset(names) for m, names in by.items()} for kernel, by in index.items()}


def importers_index(links: dict[str, ModuleLinks], project_modules: frozenset[str],
                    read: Callable[[str], ModuleLinks | None] = lambda module: None) -> dict[str, frozenset[str]]:
    """Module -> the other modules of the project that import something of it (through re-exports): where
    the calls of its functions can be."""
    index: dict[str, set[str]] = {}
    for module, found in list(links.items()):
        for _, target in found.imports:
            name = resolve(target, links, project_modules, read)
            owner = name if name in project_modules else defining_module(name, project_modules)
            if owner is not None and owner != module:
                index.setdefault(owner, set()).add(module)
    return {owner: frozenset(importers) for owner, importers in index.items()}


def is_calls_dependency(target: object) -> bool:
    return isinstance(target, str) and target.endswith("." + CALLS)


def recorded_callers(deps: object, own: str) -> frozenset[str] | None:
    """The importing modules a cached result read calls in, None when it read none (not even its own module's)."""
    found = {target[:-len(CALLS) - 1] for target in deps if is_calls_dependency(target)}  # type: ignore[attr-defined]
    return frozenset(found - {own}) if own in found else None


def read_links(path: str, module: str, project_modules: frozenset[str],
               namespaces: Namespaces | None = None) -> ModuleLinks | None:
    """The links of a module file the run did not model, for following its re-exports."""
    model = module_model(path, module, namespaces)
    return module_links(model, project_modules) if model is not None else None


def launch_dependency(module: str) -> str:
    """The dependency a result judged from `module`'s launches records (see the module docstring)."""
    return f"{module}.{LAUNCHES}"


def is_launch_dependency(target: object) -> bool:
    return isinstance(target, str) and target.endswith("." + LAUNCHES)


def recorded_launchers(deps: object) -> frozenset[str]:
    """The launching modules a cached result was judged with, from its recorded dependencies."""
    return frozenset(target[:-len(LAUNCHES) - 1] for target in deps  # type: ignore[attr-defined]
                     if is_launch_dependency(target))
