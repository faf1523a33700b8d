"""Which module defines a launched kernel, and the kernels of other modules a launch resolves to."""

from __future__ import annotations

import posixpath

from tritonlint.analysis.model import JitFunction


class Deferred(Exception):
    """A rule needs a kernel from another linted module whose summary this process does not have yet."""

    def __init__(self, module: str) -> None:
        super().__init__(module)
        self.module = module


class Project:
    """Kernels of other modules, for rules that follow a launch into the module that defines the kernel."""

    def __init__(self, linted_modules: frozenset[str] = frozenset(), summaries: dict[str, JitFunction] | None = None,
                 shared: dict[str, dict[str, dict[str, JitFunction]]] | None = None, root: str | None = None,
                 excludes: tuple[str, ...] = ()):
        self.linted_modules = linted_modules
        # The project's folder (None when linting text alone): project-wide facts look at its other modules.
        self.root = root
        self.excludes = excludes
        self.facts: dict[tuple[str, str], object] = {}  # project-wide facts, computed once per run and process
        self.summaries = summaries  # None in the first pass: nothing is known about other modules yet
        # Module names that several linted files share (scripts named kernels.py in two folders, two copies of
        # a package): module -> source root of each file -> that file's kernels. An import finds the one under
        # the importing file's own root, as Python would.
        self.shared = shared or {}
        self.consulted: set[str] = set()  # launch targets looked up: what a cached result depends on

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


