"""The dotted module name of a file, which module defines a launched kernel, and the kernels of other modules a
launch resolves to."""

from __future__ import annotations

import ast
import os
import posixpath
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from tritonlint import inputs

if TYPE_CHECKING:  # the model is imported where a module is read: a run served from the cache needs none
    from tritonlint.analysis.model import JitFunction, ModuleModel


CALLS = "@calls"  # `<module>.@calls`: the dependency of a result that read the calls in that module


def calls_dependency(module: str) -> str:
    """The dependency a result judged from the calls in `module` records (Project.calling_modules)."""
    return f"{module}.{CALLS}"


class Deferred(Exception):
    """A rule needs a kernel from another linted module whose summary this process does not have yet."""

    def __init__(self, module: str) -> None:
        super().__init__(module)
        self.module = module


class Project:
    """Kernels of other modules, for rules that follow a launch into the module that defines the kernel."""

    def __init__(self, linted_modules: frozenset[str] = frozenset(), summaries: Mapping[str, JitFunction] | None = None,
                 shared: dict[str, dict[str, dict[str, JitFunction]]] | None = None,
                 sources: dict[str, str] | None = None, files: tuple[str, ...] = (),
                 launchers: dict[str, dict[str, frozenset[str]]] | None = None, displays: dict[str, str] | None = None,
                 namespaces: Namespaces | None = None, importers: Mapping[str, frozenset[str]] | None = None):
        self.linted_modules = linted_modules
        self.namespaces = namespaces  # None where a run does not know its files' layout (a text linted alone)
        # Module -> the modules importing something of it (analysis/launch_index.py); None in the first pass.
        self.importers = importers
        # Every file of the run's project (linted or read as context); empty when text is linted alone.
        self.files = files
        self._held: frozenset[str] | None = None  # the files, normalised: where a relative import is looked for
        self.facts: dict[tuple[str, object], object] = {}  # project-wide facts, computed once per run and process
        self.summaries = summaries  # None in the first pass: nothing is known about other modules yet
        # Module names that several linted files share (scripts named kernels.py in two folders, two copies of
        # a package): module -> source root of each file -> that file's kernels. An import finds the one under
        # the importing file's own root, as Python would.
        self.shared = shared or {}
        self.consulted: set[str] = set()  # launch targets looked up: what a cached result depends on
        self.sources = sources or {}  # module -> its file, for every module of the run that one file holds
        self.displays = displays or {}  # module -> its file as the run reports it
        # Autotuned kernel -> the other modules that launch it -> the names they launch it by (analysis/
        # launch_index.py); None in the first pass, before every module's launches are known.
        self.launchers = launchers
        self.launches_read: set[str] = set()  # the other modules whose launches the finding being judged read

    def kernel(self, qualname: str | None, root: str | None = None) -> JitFunction | None:
        """The kernel `qualname` names, for a file whose source root is `root` (see `source_root`)."""
        if not qualname:
            return None
        self.consulted.add(qualname)
        module = defining_module(qualname, self.linted_modules)
        if self.summaries is None:
            if module is not None:
                raise Deferred(module)
            return None
        if module in self.shared:
            return self.shared[module].get(root or "", {}).get(qualname)
        return self.summaries.get(qualname)

    def module_model(self, module: str, name: str) -> ModuleModel | None:
        """The model of another module of the project, for reading its module-level `name` (a config list,
        a constant, a helper); the lookup is recorded so that a cached result depends on that module."""
        if module not in self.sources:
            return None
        self.consulted.add(f"{module}.{name}")
        return self._read(module)

    def _read(self, module: str) -> ModuleModel | None:
        """The model of a module of the run read from its file, once per process (None: not one file's)."""
        path = self.sources.get(module)
        return _module_model(path, module, self.namespaces) if path is not None else None

    def calling_modules(self, module: str) -> list[ModuleModel] | None:
        """The other modules of the project that may call functions of `module` (they import from it), read
        once per process; None when the run cannot tell (a text linted alone, an editor buffer). The reading
        is recorded, so that a cached result depends on those modules and on which modules import `module`."""
        if self.importers is None:
            if self.sources:  # a run over files: the index comes with the second pass
                raise Deferred(module)
            return None
        self.consulted.add(calls_dependency(module))
        found = []
        for other in sorted(self.importers.get(module, ())):
            model = self._read(other)
            if model is not None:
                found.append(model)
                self.consulted.add(calls_dependency(other))
        return found

    def unseen_import(self, model: ModuleModel, path: str) -> str | None:
        """The first module of its own package that the file at `path` imports from and the run does not hold
        (`from ..utils import use_tma` with no utils.py in view; a relative import is looked for beside the file,
        as Python finds it, and so is an absolute one that names a folder above it without `__init__.py`): what
        that module does is unknown, so no claim about the whole project holds. None where the run holds each
        one, and where it cannot tell (a text linted alone). The lookups are recorded, so that a cached result
        changes when the module appears."""
        if not self.files:
            return None
        if self._held is None:
            self._held = frozenset(map(os.path.normpath, self.files))
        top = model.package.split(".")[0] if model.package else None
        for node in ast.walk(model.tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            target = model.absolute_module(node)
            folder = os.path.dirname(os.path.abspath(path))
            if node.level:
                for _ in range(node.level - 1):
                    folder = os.path.dirname(folder)
            elif top is None and node.module:
                # `from flash_pso.config import c` in flash_pso/sm90/kernels.py, no __init__.py on the way: the
                # folder above that the import names, as a namespace package
                head = node.module.split(".")[0]
                named = next((f for f in namespace_parents(folder) if os.path.basename(f) == head), None)
                if named is None:
                    continue
                folder = os.path.dirname(named)
            if node.level or top is None:
                stem = os.path.join(folder, *node.module.split(".")) if node.module else folder
                places = [stem + ".py", os.path.join(stem, "__init__.py"),
                          *(os.path.join(stem, alias.name + ".py") for alias in node.names)]
                if any(os.path.normpath(place) in self._held for place in places):
                    continue
            elif target is None or target.split(".")[0] != top or target in self.sources \
                    or any(f"{target}.{alias.name}" in self.sources for alias in node.names):
                continue
            if target is not None:
                self.consulted.update(f"{target}.{alias.name}" for alias in node.names)
            return target or "." * node.level + (node.module or "")
        return None

    def launching_modules(self, qualname: str) -> list[tuple[ModuleModel, frozenset[str]]]:
        """The other modules of the project that launch the indexed kernel `qualname` (autotuned, or never launched
        in its own module: analysis/launch_index.py), with the names their launches give it (empty before the
        index exists, or when no other module launches it)."""
        found = []
        for module, names in sorted((self.launchers or {}).get(qualname, {}).items()):
            model = self._read(module)
            if model is not None:
                found.append((model, names))
                self.launches_read.add(module)
        return found


def jit_function_in(model_of: Callable[[str, str], ModuleModel | None] | None, qualname: str,
                    hops: int = 2) -> tuple[ModuleModel, JitFunction] | None:
    """The jit function that a dotted name of another module of the project names, with its syntax tree and
    the model of the module that defines it (`model_of` is `Project.module_model`, which records the
    dependency), following re-exports (`from .helpers import f` in a package's __init__) `hops` deep; None
    when the name leads out of the project or to no jit function."""
    module, _, name = qualname.rpartition(".")
    other = model_of(module, name) if model_of is not None and module else None
    if other is None:
        return None
    found = other.local_function(name)
    if found is not None and found.node is not None:
        return other, found
    target = other.imports.get(name)
    return jit_function_in(model_of, target, hops - 1) if hops > 0 and target and target != qualname else None


def module_name(path: Path | str, packages: dict[str, str] | None = None) -> str:
    """Dotted module name: the file's stem plus its folder's name as a package (see _package_name).
    `packages` remembers the dotted name of each folder across the calls of one run."""
    text = os.fspath(path)
    if not os.path.isabs(text):
        text = os.path.realpath(text)
    stem = os.path.splitext(os.path.basename(text))[0]
    package = _package_name(os.path.dirname(text), {} if packages is None else packages)
    if stem == "__init__":
        return package or stem
    return f"{package}.{stem}" if package else stem


_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def _package_name(folder: str, known: dict[str, str]) -> str:
    """The dotted name of a folder as a package: a folder with an __init__.py, or one without it inside such a
    package (a namespace portion, PEP 420: `sglang/srt/` imports as `sglang.srt`); "" for any other folder,
    whose files are top-level modules. A namespace portion never reaches past a project's root folder, so a
    stray __init__.py above the project renames nothing."""
    if folder not in known:
        inputs.depends_on(os.path.join(folder, "__init__.py"))
        parent, name = os.path.dirname(folder), os.path.basename(folder)
        regular = os.path.isfile(os.path.join(folder, "__init__.py"))
        portion = not regular and _may_be_namespace(folder)
        above = _package_name(parent, known) if parent != folder and (regular or portion) else ""
        known[folder] = f"{above}.{name}" if above else (name if regular else "")
    return known[folder]


NAMESPACE_DEPTH = 3  # folders above a module's source root that may name it as a namespace package


def separating_prefixes(named: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Source roots whose modules share a dotted name with another root's (scripts named kernels.py in two
    folders, two copies of a package) -> the prefix that keeps them apart: the root's folder names below the
    folder all such roots share, as namespace packages (PEP 420: run from there, `a/kernels.py` and
    `b/kernels.py` import as `a.kernels` and `b.kernels`). `named` is (file, module) per file of the run; a
    root that is that shared folder, or whose folder names hold a dot, keeps its names."""
    roots_of: dict[str, set[str]] = {}
    for path, module in named:
        roots_of.setdefault(module, set()).add(source_root(path, module))
    apart = {root for roots in roots_of.values() if len(roots) > 1 for root in roots}
    if not apart:
        return {}
    common = posixpath.commonpath(apart)
    prefixes = {}
    for root in apart:
        parts = posixpath.relpath(root, common).split("/")
        if root != common and all(part and "." not in part for part in parts):
            prefixes[root] = ".".join(parts)
    return prefixes


class Namespaces:
    """The project's modules by the names they are imported by when their source root is a folder without
    `__init__.py` (PEP 420): run from the folder above, `mpa/kernels.py` (module `kernels`) imports as
    `mpa.kernels`. Looked up per imported name (a project holds many folders that nobody imports as packages);
    hashed by identity, so that models read for one run are cached with it."""

    def __init__(self, sources: Mapping[str, str], separated: Mapping[str, str] | None = None) -> None:
        self.sources = sources  # module -> its file, for the modules one file holds
        # Module -> the prefix its source root's folders gave it (separating_prefixes), for the modules renamed so.
        self.separated = separated or {}
        self.known: dict[str, bool] = {}  # folder -> whether it can be a namespace package
        self._heads: frozenset[str] | None = None
        self._beside: dict[str, set[str]] | None = None

    def beside(self, importer: str, dotted: str) -> str | None:
        """`dotted` imported by a module that `separated` renamed, where it names a module of the importer's own
        source root (`from kernels import k` in a/bench.py is `a.kernels.k`: Python puts the script's folder
        first on the path); else None."""
        prefix = self.separated.get(importer)
        if prefix is None:
            return None
        if self._beside is None:
            self._beside = {}
            for module, its in self.separated.items():
                self._beside.setdefault(its, set()).add(module[len(its) + 1:].partition(".")[0])
        return f"{prefix}.{dotted}" if dotted.partition(".")[0] in self._beside[prefix] else None

    def may_name(self, dotted: str) -> bool:
        """Whether `dotted` starts with the name of a folder a project module's name could begin with as a
        namespace package (so `torch.nn` is never looked up, nor recorded as a cached result's dependency)."""
        if self._heads is None:  # folder names only, no file-system calls
            heads = set()
            for module, path in self.sources.items():
                folder = source_root(path, module)
                for _ in range(NAMESPACE_DEPTH):
                    heads.add(os.path.basename(folder))
                    folder = os.path.dirname(folder)
            self._heads = frozenset(heads)
        return dotted.partition(".")[0] in self._heads

    def module_of(self, dotted: str) -> str | None:
        """`dotted` (`mpa.kernels.add_kernel`) with its namespace folders dropped (`kernels.add_kernel`) when it
        names a project module that way, else None (also when it names a module by its own name)."""
        parts = dotted.split(".")
        if any(".".join(parts[:end]) in self.sources for end in range(1, len(parts) + 1)):
            return None
        for start in range(1, len(parts)):
            for end in range(len(parts), start, -1):  # the longest module first
                module = ".".join(parts[start:end])
                path = self.sources.get(module)
                if path is None:
                    continue
                folders = namespace_parents(source_root(path, module), self.known)[:start]
                if [os.path.basename(f) for f in reversed(folders)] == parts[:start]:
                    return ".".join(parts[start:])
        return None


def namespace_parents(root: str, known: dict[str, bool] | None = None) -> list[str]:
    """A source root and the folders above it that may be namespace packages, up to NAMESPACE_DEPTH: named as
    an identifier, holding no project marker (a project's root is on the path, never a package); none holds an
    `__init__.py`, or the module's name would include it. `known` remembers each folder's answer across calls."""
    known = {} if known is None else known
    chain: list[str] = []
    folder = root
    while len(chain) < NAMESPACE_DEPTH:
        if folder not in known:
            known[folder] = _may_be_namespace(folder)
        if not known[folder]:
            break
        chain.append(folder)
        folder = os.path.dirname(folder)
    return chain


def _may_be_namespace(folder: str) -> bool:
    """A folder without `__init__.py` that Python can import as a namespace package: named as an identifier,
    and no project's root (a root is on the path, never a package)."""
    return os.path.basename(folder).isidentifier() and not any(
        _exists(os.path.join(folder, marker)) for marker in _PROJECT_MARKERS)


def _exists(path: str) -> bool:
    inputs.depends_on(path, existence=True)  # a project file added there renames the modules below it
    return os.path.exists(path)


def source_root(path: str, module: str) -> str:
    """The folder a file's dotted module name is relative to: `b` for b/kernels.py (module `kernels`),
    `src` for src/pkg/ops/mm.py (module `pkg.ops.mm`) and for src/pkg/__init__.py (module `pkg`)."""
    path = path.replace("\\", "/")
    folder = posixpath.dirname(path)
    for _ in range(module.count(".") + (posixpath.basename(path) == "__init__.py")):
        folder = posixpath.dirname(folder)
    return folder


def defining_module(qualname: str, linted_modules: frozenset[str]) -> str | None:
    """The linted module a dotted name lives in (the longest linted prefix), if any."""
    module = qualname.rpartition(".")[0]
    while module:
        if module in linted_modules:
            return module
        module = module.rpartition(".")[0]
    return None


def module_model(path: str, module: str, namespaces: Namespaces | None = None) -> ModuleModel | None:
    """A module of the project read from its file (see _module_model), None when it cannot be read."""
    return _module_model(path, module, namespaces)


@lru_cache(maxsize=256)
def _module_model(path: str, module: str, namespaces: Namespaces | None) -> ModuleModel | None:
    """A module read for what other modules import from it: parsed once per process, its own imports not
    followed further (the reading stays bounded)."""
    from tritonlint.analysis.model import ModuleModel
    from tritonlint.source import SourceError, read_source

    try:
        text = read_source(Path(path)).text
        tree = ast.parse(text)
    except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return ModuleModel(tree, module, path, is_package=path.endswith("__init__.py"), text=text, namespaces=namespaces)
