"""The result cache, `.tritonlint_cache/` (like ruff's): a re-run lints only the files that changed.

One cache file per configuration, named by a key over the tool (version, and the names, sizes and times of its
own source and evidence files), the installed ast-grep-py, the Python version, the effective settings and every rule. An
entry holds one file's findings and kernel summaries, keyed by the file's absolute path and checked against
the digest of its content; a stat signature (mtime, ctime, size, inode) spares re-reading files that did not
change, except for a file modified within RACY_NS of being read (a same-size edit in that window might keep
its mtime): such a file is hashed again. A file whose rules looked up kernels of other linted modules (launch
targets) records, per target, the module that defined it and that module's content digest; the entry is reused
only while each target still resolves to the same module with the same content. A file whose rules read a
fact of the whole project (TL105: does some module set an allocator) records the fact's value, and the entry
is reused only while the project still gives that value.

Findings and summaries are stored as separate pickles inside the entry and decoded only when needed, so
a run that changes nothing reads the cache file in a few milliseconds. Writes go to a temporary file
renamed over the old one, under an advisory lock where the platform has one, merged with the entries
another run wrote meanwhile. A cache file or entry that cannot be read is treated as absent, never as an
error, and unpickling admits tritonlint's own data classes only: a cache file is data, never code.
"""

from __future__ import annotations

import dataclasses
import io
import os
import pickle
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tritonlint import __version__, inputs
from tritonlint.analysis.project import Namespaces, defining_module
from tritonlint.inputs import CACHE_DIR_NAME, RACY_NS

try:  # hashlib's own blake2b, without hashlib loading OpenSSL first (a tenth of the imports of a one-file lint)
    from _blake2 import blake2b as blake2b
except ImportError:  # a Python built without it
    from hashlib import blake2b as blake2b

if TYPE_CHECKING:
    from tritonlint.config import Settings
    from tritonlint.diagnostics import Diagnostic
    from tritonlint.results import FileResult
    from tritonlint.ruleset import Rule

FORMAT = 3
STALE_SECONDS = 30 * 24 * 3600  # a cache file no run has used for this long is removed when a run writes
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by tritonlint.\n"

Signature = tuple[int, int, int, int]  # st_mtime_ns, st_ctime_ns, st_size, st_ino


def digest(data: bytes) -> str:
    return blake2b(data, digest_size=16).hexdigest()


def signature(stat: os.stat_result) -> Signature:
    return stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size, stat.st_ino


def now_ns() -> int:
    return time.time_ns()


class _SafeUnpickler(pickle.Unpickler):
    """Only tritonlint's own data classes and plain values."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name == "complex":
            return complex
        if module.startswith("tritonlint."):
            found = super().find_class(module, name)
            if isinstance(found, type) and dataclasses.is_dataclass(found):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a cache file")


def safe_loads(data: bytes) -> Any:
    return _SafeUnpickler(io.BytesIO(data)).load()


def dumps(value: object) -> bytes:
    """A value pickled; b"" for an empty one."""
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL) if value else b""


def pack(result: FileResult) -> FileResult:
    """Move the findings and the summaries into `packed` (the parent of the workers holds every file's result,
    and each worker it forks later copies what it holds)."""
    result.packed = (dumps(result.diagnostics), dumps(result.summaries))
    result.diagnostics, result.summaries = [], {}
    return result


def unpack(result: FileResult) -> None:
    """The findings back from `packed`; the summaries stay packed (read by module, see runner.py)."""
    if result.packed is not None and result.packed[0]:
        result.diagnostics = safe_loads(result.packed[0])


@dataclass
class Entry:
    """One file's cached result: its digest and stat, what it depended on, and its pickled findings."""
    display: str
    module: str
    digest: str
    signature: Signature
    checked_ns: int  # wall clock when the signature was taken, just before the content was read
    skipped: str | None
    deps: dict[str, tuple[str | None, str | None]]  # launch target -> (defining module, its digest); fact -> (None, value)
    diagnostics_blob: bytes  # pickled list[Diagnostic], b"" for none
    summaries_blob: bytes  # pickled {qualname: JitFunction}, b"" for none
    links_blob: bytes = b""  # pickled ModuleLinks (analysis/launch_index.py), b"" for none

    @classmethod
    def make(cls, display: str, module: str, file_digest: str, file_signature: Signature, checked_ns: int,
             skipped: str | None, deps: dict[str, tuple[str | None, str | None]], packed: tuple[bytes, bytes],
             links: Any = None) -> Entry:
        """`packed`: the findings and the summaries as FileResult.pack made them."""
        return cls(display, module, file_digest, file_signature, checked_ns, skipped, deps, *packed, dumps(links))

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return safe_loads(self.diagnostics_blob) if self.diagnostics_blob else []

    @property
    def summaries(self) -> dict[str, Any]:
        return safe_loads(self.summaries_blob) if self.summaries_blob else {}

    @property
    def links(self) -> Any:
        return safe_loads(self.links_blob) if self.links_blob else None

    def unchanged(self, current: Signature) -> bool:
        """The file is as it was read, by its stat alone (never for a file modified just before reading)."""
        return current == self.signature and self.signature[0] < self.checked_ns - RACY_NS


def _well_formed(entry: Any) -> bool:
    try:
        return (isinstance(entry, Entry) and isinstance(entry.digest, str) and isinstance(entry.deps, dict)
                and isinstance(entry.diagnostics_blob, bytes) and isinstance(entry.summaries_blob, bytes)
                and isinstance(entry.links_blob, bytes)
                and isinstance(entry.signature, tuple) and len(entry.signature) == 4)
    except Exception:  # noqa: BLE001 - a damaged entry (missing attributes) is no entry
        return False


def configuration_key(*parts: Any) -> str:
    """The key of one configuration: the tool itself, the Python it runs on, and `parts` (the effective
    settings and rules, by their reprs; a rule read from a file by the file's digest)."""
    hasher = blake2b(digest_size=16)
    hasher.update(f"{__version__}\0{sys.version_info[:2]}\0{FORMAT}\0{tool_digest()}\0".encode())
    hasher.update(f"{matcher_identity()}\0".encode())
    for part in parts:
        hasher.update(repr(part).encode("utf-8", "surrogatepass"))
        hasher.update(b"\0")
    return hasher.hexdigest()


def matcher_identity() -> str:
    """The ast-grep-py that would be imported, by the names, sizes and times of its files: another ast-grep
    may match differently. (Reading its version from the package metadata costs ~60 ms, a quarter of a
    warm run.)"""
    folder = None
    for place in sys.path:
        inputs.depends_on(os.path.join(place or ".", "ast_grep_py"), existence=True)
        if os.path.isdir(os.path.join(place or ".", "ast_grep_py")):
            folder = os.path.join(place, "ast_grep_py")
            break
    if folder is None:
        return "not found"
    try:
        files = sorted((entry for entry in os.scandir(folder) if entry.is_file()), key=lambda e: e.name)
        for entry in files:
            inputs.depends_on(entry.path)
        return ";".join(f"{entry.name}:{entry.stat().st_size}:{entry.stat().st_mtime_ns}" for entry in files)
    except OSError:
        return "unknown"


_tool_digest: tuple[str, list[str]] | None = None  # the digest, and the folders and files it was taken over


def tool_digest() -> str:
    """tritonlint's own code and evidence, by the names, sizes and times of its files: a development checkout
    changes without a new version. (Hashing their contents instead cost a warm run a tenth of its time.)"""
    global _tool_digest
    if _tool_digest is None:
        from tritonlint.evidence import results_path

        folders, files = [], []
        for folder, subfolders, names in os.walk(os.path.dirname(os.path.abspath(__file__))):
            subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
            folders.append(folder)
            files += [os.path.join(folder, name) for name in sorted(names) if name.endswith(".py")]
        files.append(str(results_path()))
        _tool_digest = digest("\0".join(map(_stat_text, files)).encode("utf-8", "surrogateescape")), folders + files
    for path in _tool_digest[1]:
        inputs.depends_on(path)
    return _tool_digest[0]


def _stat_text(path: str) -> str:
    try:
        info = os.stat(path)
    except OSError:
        return f"{path}:<missing>"
    return f"{path}:{info.st_size}:{info.st_mtime_ns}"


def _load(path: Path, key: str) -> dict[str, Entry]:
    try:
        content = safe_loads(path.read_bytes())
    except Exception:  # noqa: BLE001 - a missing, corrupt or foreign cache file is an empty cache
        return {}
    if not isinstance(content, dict) or content.get("format") != FORMAT or content.get("key") != key:
        return {}
    entries = content.get("entries")
    return entries if isinstance(entries, dict) else {}


class LintCache:
    """The entries of one configuration; `updates` collects this run's results until `save`."""

    def __init__(self, folder: Path, key: str) -> None:
        self.folder = folder
        self.key = key
        self.path = folder / __version__ / f"{key}.pickle"
        self.entries = _load(self.path, key)
        if self.entries:
            touch(self.path)  # in use: not stale (see prune_stale)
        self.updates: dict[str, Entry] = {}

    def get(self, path_key: str) -> Entry | None:
        entry = self.entries.get(path_key)
        return entry if entry is not None and _well_formed(entry) else None

    def put(self, path_key: str, entry: Entry) -> None:
        self.updates[path_key] = entry

    def save(self) -> str | None:
        """Write this run's entries; a one-line reason when the cache could not be written."""
        if not self.updates:
            return None
        try:
            write_file(self.path, lambda: {"format": FORMAT, "key": self.key,
                                           "entries": _existing({**_load(self.path, self.key), **self.updates},
                                                                self.updates)})
        except OSError as exc:
            return f"cache not written: {exc.strerror or exc}"
        self.entries.update(self.updates)
        self.updates = {}
        prune_stale(self.folder)
        return None


def _existing(entries: dict[str, Entry], fresh: dict[str, Entry]) -> dict[str, Entry]:
    """The entries of files that still exist: those of deleted or renamed files would stay forever."""
    return {path: entry for path, entry in entries.items() if path in fresh or os.path.exists(path)}


def touch(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:
        pass  # read-only cache: it still serves, it just ages


def prune_stale(folder: Path, now: float | None = None) -> None:
    """Remove the cache files (findings of one configuration, validated rules, recorded runs) that no run has
    used for STALE_SECONDS, and the version folders they leave empty: other settings, other rule files and
    older tritonlint versions would otherwise pile up."""
    cutoff = (time.time() if now is None else now) - STALE_SECONDS
    try:
        versions = [entry for entry in os.scandir(folder) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for version in versions:
        try:
            for item in os.scandir(version.path):
                if item.name.endswith((".pickle", ".record")) and item.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(item.path)  # findings, a validated rule set, a recorded run (replay.py)
                    lock = item.path.rpartition(".")[0] + ".lock"
                    if os.path.exists(lock):
                        os.unlink(lock)
            left = [os.path.join(version.path, name) for name in os.listdir(version.path)]
            if all(os.stat(path).st_mtime < cutoff for path in left):  # locks of runs long gone, nothing in use
                for path in left:
                    os.unlink(path)
                os.rmdir(version.path)
        except OSError:
            continue  # another run is using it, or it is not ours to remove: leave it


def write_file(path: Path, content: Callable[[], Any]) -> None:
    """Pickle `content()` to `path` atomically; `content` runs under the lock, so it may merge with what
    another run wrote meanwhile."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _mark(path.parent.parent)
    with _locked(path.with_suffix(".lock")):
        payload = pickle.dumps(content(), protocol=pickle.HIGHEST_PROTOCOL)
        handle, temporary = _create_temporary(path)
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(payload)
            os.replace(temporary, path)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise


def _create_temporary(path: Path) -> tuple[int, str]:
    """A new file beside `path` for this process alone, as tempfile.mkstemp makes one (importing tempfile
    cost a one-file lint 11 M instructions, callgrind): one left by an ended process of the same id is replaced."""
    temporary = str(path.parent / f".{path.stem}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        return os.open(temporary, flags, 0o600), temporary
    except FileExistsError:
        os.unlink(temporary)
        return os.open(temporary, flags, 0o600), temporary


def _mark(folder: Path) -> None:
    """Tag the folder the way ruff and others do, so backup tools and git leave it alone."""
    tag = folder / "CACHEDIR.TAG"
    if not tag.exists():
        tag.write_text(_TAG, encoding="utf-8")
        (folder / ".gitignore").write_text("# Created by tritonlint automatically.\n*\n", encoding="utf-8")


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # no advisory locks here: the rename alone keeps the file whole
        yield
        return
    with open(path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def is_cache_folder(folder: Path) -> bool:
    tag = folder / "CACHEDIR.TAG"
    return tag.is_file() and "tritonlint" in tag.read_text(encoding="utf-8", errors="replace")


def clean(folder: Path) -> bool:
    """Remove a cache folder tritonlint made; False when there is none (or it is not tritonlint's)."""
    import shutil

    if not folder.is_dir() or not is_cache_folder(folder):
        return False
    shutil.rmtree(folder)
    return True


def cache_folder(root: Path, configured: str | Path | None = None, override: str | None = None) -> Path:
    """`--cache-dir` (or TRITONLINT_CACHE_DIR), else the configured `cache-dir`, else beside the config."""
    if override:
        return Path(override).absolute()
    if configured:
        return root / configured
    return root / CACHE_DIR_NAME


def open_cache(folder: Path, settings: Settings, rules: list[Rule], unsafe: bool) -> LintCache:
    effective = dataclasses.replace(settings, cache_dir=None, fail_level="warning", baseline=None,
                                    file_timeout=0.0)  # what changes no finding
    identity = [(rule.id, rule.path, rule.fingerprint) if rule.fingerprint else rule for rule in rules]
    return LintCache(folder, configuration_key(effective, identity, unsafe, _tables_digest()))


def _tables_digest() -> list[tuple[str, str | None]]:
    """The rules' data tables (rules/data, such as TL103's API versions) by their contents: the results rules
    computed from a table are stale once it changes (a development checkout's edit; a release changes the
    version)."""
    from tritonlint import ruledata

    found: list[tuple[str, str | None]] = []
    for path in ruledata.data_files():
        try:
            with open(path, "rb") as stream:
                found.append((os.path.basename(path), digest(stream.read())))
        except OSError:
            found.append((os.path.basename(path), None))
    return found


class Session:
    """One run's use of the cache: which files it can serve, and the entries it leaves behind.

    `files` are (absolute path, display, module) per discovered file; `linted` is every module of the run."""

    def __init__(self, cache: LintCache, files: list[tuple[str, str, str]], linted: frozenset[str],
                 namespaces: Namespaces) -> None:
        self.cache = cache
        self.files = files
        self.linted = linted
        self.namespaces = namespaces  # the run's modules by their names as namespace packages
        self.started_ns = now_ns()
        self.signatures: list[Signature | None] = [_stat(path) for path, _, _ in files]
        self.digests: dict[int, str | None] = {}
        self.by_module: dict[str, list[int]] = {}
        self.facts: dict[str, str | None] = {}
        for index, (_, _, module) in enumerate(files):
            self.by_module.setdefault(module, []).append(index)

    def digest_of(self, index: int) -> str | None:
        """The digest of a file's content now: from its entry while its stat says unchanged, else read."""
        if index not in self.digests:
            path = self.files[index][0]
            entry = self.cache.get(path)
            current = self.signatures[index]
            if entry is not None and current is not None and entry.unchanged(current):
                self.digests[index] = entry.digest
            else:
                try:
                    with open(path, "rb") as stream:
                        self.digests[index] = digest(stream.read())
                except OSError:
                    self.digests[index] = None
        return self.digests[index]

    def module_digest(self, module: str | None) -> str | None:
        if module is None:
            return None
        indices = self.by_module.get(module, [])
        if len(indices) == 1:
            return self.digest_of(indices[0])
        return digest("\0".join(str(self.digest_of(i)) for i in indices).encode())  # same-named modules

    def fact(self, key: str, last: str | None = None) -> str | None:
        """The value of a project fact in this run (None for a launch target), computed once; `last` is the
        value an entry recorded, a hint for finding it."""
        if key not in self.facts:
            from tritonlint.analysis.project_facts import BESIDE, NAMESPACE, fact_value  # only where one is recorded

            if key.startswith(NAMESPACE):  # the module a dotted import names by a namespace package, "" for none
                self.facts[key] = self.namespaces.module_of(key[len(NAMESPACE):]) or ""
            elif key.startswith(BESIDE):  # the module beside a renamed importer that an import names, "" for none
                importer, _, alias = key[len(BESIDE):].partition(":")
                self.facts[key] = self.namespaces.beside(importer, alias) or ""
            else:
                self.facts[key] = fact_value(key, tuple(path for path, _, _ in self.files), last)
        return self.facts[key]

    def serve(self, index: int, reusable: Callable[[list[Diagnostic]], bool]) -> tuple[Entry, list[Diagnostic]] | None:
        """A file's entry and findings, when its content, name, settings and launch targets are as cached."""
        path, display, module = self.files[index]
        entry = self.cache.get(path)
        current = self.signatures[index]
        if entry is None or current is None or entry.display != display or entry.module != module:
            return None
        if self.digest_of(index) != entry.digest:
            return None
        for target, (was_module, was_digest) in entry.deps.items():
            value = self.fact(target, was_digest)
            if value is not None:
                if value != was_digest:
                    return None
                continue
            now_module = defining_module(target, self.linted)
            if now_module != was_module or self.module_digest(now_module) != was_digest:
                return None
        try:
            diagnostics = entry.diagnostics
        except Exception:  # noqa: BLE001 - findings that do not decode: lint the file again
            return None
        if not reusable(diagnostics):
            return None
        if not entry.unchanged(current):  # hashed again: remember the new stat
            self.cache.put(path, dataclasses.replace(entry, signature=current, checked_ns=self.started_ns))
        return entry, diagnostics

    def record(self, index: int, file_digest: str, file_signature: Signature, checked_ns: int,
               packed: tuple[bytes, bytes], skipped: str | None, consulted: frozenset[str], links: Any = None) -> None:
        """Store a fresh result (the digests of every fresh file must be known first, for dependencies)."""
        path, display, module = self.files[index]
        deps: dict[str, tuple[str | None, str | None]] = {}
        for target in sorted(consulted):
            value = self.fact(target)
            if value is not None:
                deps[target] = (None, value)
                continue
            owner = defining_module(target, self.linted)
            deps[target] = (owner, self.module_digest(owner))
        self.cache.put(path, Entry.make(display, module, file_digest, file_signature, checked_ns, skipped, deps,
                                        packed, links))


def _stat(path: str) -> Signature | None:
    try:
        return signature(os.stat(path))
    except OSError:
        return None
