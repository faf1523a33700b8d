"""Facts about the whole project a file belongs to, beyond the linted files: whether some module calls
`triton.set_allocator(...)` (TL105; a cheap text scan finds the candidate files, only those are parsed),
the Triton version the project's own files pin for a folder (TL103), and the module a dotted import names as a
namespace package or as a module beside its importer (answered by the run's project.Namespaces in
cache.Session). A run's project is the files it linted or read as context.

A rule that reads a fact adds its key to `Project.consulted`; the cache keeps the fact's value with the
file's findings and serves them only while the project still gives that value (`fact_value`)."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from tritonlint.analysis.names import last_name  # not analysis.kernel: a warm run reads facts, no kernels
from tritonlint.discovery import DEFAULT_EXCLUDE, discover, project_root

ALLOCATOR_WORD = "set_allocator"
ALLOCATOR_BYTES = b"allocator"  # in set_allocator and in the names of helpers that call it
# The keys of project facts among a file's cache dependencies: no module name holds '@' (nor a dot, so
# that no module is taken for their owner).
SETS_ALLOCATOR = "@sets-allocator"
TRITON_PIN = "@triton-pin:"  # + the folder of the linted file
NAMESPACE = "@namespace:"  # + a dotted import that may name a module as a namespace package (project.Namespaces)
BESIDE = "@beside:"  # + importing module + ":" + an import: the module beside it that it names, if any


def namespace_key(alias: str) -> str:
    """The fact key of the module a dotted import names as a namespace package (Session.fact answers it)."""
    return NAMESPACE + alias


def beside_key(importer: str, alias: str) -> str:
    """The fact key of the module beside a renamed `importer` that an import names (Namespaces.beside)."""
    return f"{BESIDE}{importer}:{alias}"


def triton_pin_key(path: str) -> str:
    """The fact key of the Triton version pinned for the project of the file at `path`."""
    return TRITON_PIN + str(Path(path).resolve().parent)


# Libraries whose allocator helpers are not Triton's (`torch.cuda.memory.caching_allocator_alloc`, RMM's).
_MEMORY_LIBRARIES = frozenset({"torch", "triton", "numpy", "cupy", "jax", "rmm", "cuda", "pycuda"})


def calls_set_allocator(text: str) -> bool:
    """Whether source text calls `...set_allocator(...)` (any spelling: `triton.set_allocator`, an import of
    it, a package's re-export), or a helper named for an allocator that it imports from its own package or
    another project (`from .runtime import _ensure_tma_allocator`; not torch's `caching_allocator_alloc`):
    defined elsewhere, maybe in a module the run does not hold, the helper is there to set it. Strings and
    comments do not count."""
    if "allocator" not in text:
        return False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    imported = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and (node.level or (node.module or "").partition(".")[0] not in _MEMORY_LIBRARIES) for alias in node.names}
    return any(isinstance(node, ast.Call) and (last_name(node.func) == ALLOCATOR_WORD or isinstance(node.func, ast.Name)
                                               and node.func.id in imported and "allocator" in node.func.id.lower())
               for node in ast.walk(tree))


def project_sets_allocator(files: Iterable[str | Path]) -> bool:
    """Whether one of the project's Python files calls set_allocator."""
    return allocator_file(tuple(map(str, files))) is not None


def allocator_file(files: tuple[str, ...], first: str | None = None) -> str | None:
    """The first of the project's Python files that calls set_allocator, `first` tried before the others
    (the file that answered last time: a cached run then reads one file, not the project)."""
    for name in ([first, *files] if first and first in files else files):
        path = Path(name)
        if path.suffix != ".py":
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        # Most files never mention the word: skip decoding them.
        if ALLOCATOR_BYTES in data and calls_set_allocator(data.decode("utf-8", errors="replace")):
            return name
    return None


def files_around(path: str) -> tuple[str, ...]:
    """The project of a file linted on its own (stdin, an editor buffer): the Python files under its
    project root, other people's code and build folders aside."""
    root = project_root([Path(path)], None)
    return tuple(str(p) for p in discover([root], root, list(DEFAULT_EXCLUDE)).files)


def fact_value(key: str, files: tuple[str, ...], last: str | None = None) -> str | None:
    """The value of the project fact `key` over the project's files, as the cache compares it (`last`: the
    value recorded before, which may make it cheaper to find); None when `key` is no project fact (a
    launch target). For SETS_ALLOCATOR: the file that calls set_allocator, "" for none; for a TRITON_PIN key:
    the pin and the file it is read from, "" for none."""
    if key == SETS_ALLOCATOR:
        return allocator_file(files, last) or ""
    if key.startswith(TRITON_PIN):
        from tritonlint.analysis.triton_versions import project_pin  # its table's module, only for this fact

        pin = project_pin(key[len(TRITON_PIN):])
        return "" if pin is None else " in ".join(pin)
    return None
