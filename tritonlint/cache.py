"""The result cache, `.tritonlint_cache/` (like ruff's): a re-run lints only the files that changed.

One cache file per configuration, named by a key over the tool (version and the digest of its own source
and evidence files), the Python version, the effective settings and every rule. An entry holds one file's
findings and kernel summaries, keyed by the file's path and checked against the digest of its content; a
stat signature (mtime, ctime, size, inode) spares re-reading files that did not change, except for a file
modified within RACY_NS of being read (the stat might miss a same-size edit in that window: such a file is
re-hashed). A file that launches kernels of other linted modules also records, per launch target, the
module that defined it and that module's content digest; the entry is reused only while those still
resolve the same way to the same content.

Writes go to a temporary file renamed over the old one, under an advisory lock where the platform has one,
merging with entries another run wrote meanwhile; a cache file or entry that cannot be read is treated as
absent, never as an error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import pickle
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tritonlint import __version__
from tritonlint.diagnostics import Diagnostic
from tritonlint.engine import defining_module

if TYPE_CHECKING:
    from tritonlint.config import Settings
    from tritonlint.ruleset import Rule

CACHE_DIR_NAME = ".tritonlint_cache"
FORMAT = 1
RACY_NS = 2_000_000_000
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by tritonlint.\n"


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


Signature = tuple[int, int, int, int]  # st_mtime_ns, st_ctime_ns, st_size, st_ino


def signature(stat: os.stat_result) -> Signature:
    return stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size, stat.st_ino


@dataclass
class Entry:
    display: str
    module: str
    digest: str
    signature: Signature
    checked_ns: int  # wall clock when the signature was taken, just before the content was read
    diagnostics: list[Diagnostic]
    summaries: dict[str, Any]  # qualname -> JitFunction summary
    skipped: str | None
    deps: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)  # target -> (module, digest)

    def unchanged(self, current: Signature) -> bool:
        """The file is as it was read, by its stat alone (never for a file modified just before reading)."""
        return current == self.signature and self.signature[0] < self.checked_ns - RACY_NS


def configuration_key(*parts: Any) -> str:
    """The key of one configuration: the tool itself, the Python it runs on, and `parts` (the effective
    settings and rules, as their reprs)."""
    hasher = hashlib.blake2b(digest_size=16)
    hasher.update(f"{__version__}\0{sys.version_info[:2]}\0{FORMAT}\0".encode())
    hasher.update(_tool_digest().encode())
    for part in parts:
        hasher.update(repr(part).encode("utf-8", "surrogatepass"))
        hasher.update(b"\0")
    return hasher.hexdigest()


def _tool_digest() -> str:
    """Digest of tritonlint's own code and evidence: a development checkout changes without a new version."""
    package = Path(__file__).resolve().parent
    from tritonlint.evidence import results_path

    hasher = hashlib.blake2b(digest_size=16)
    for path in sorted([*package.rglob("*.py"), results_path()]):
        try:
            hasher.update(path.read_bytes())
        except OSError:
            hasher.update(b"<missing>")
        hasher.update(str(path.relative_to(package.parent) if package.parent in path.parents else path.name).encode())
    return hasher.hexdigest()


class _SafeUnpickler(pickle.Unpickler):
    """Only tritonlint's own data classes and plain values: a cache file is data, never code."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name == "complex":
            return complex
        if module.startswith("tritonlint."):
            found = super().find_class(module, name)
            if isinstance(found, type) and dataclasses.is_dataclass(found):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a cache file")


def _load(path: Path, key: str) -> dict[str, Entry]:
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    try:
        content = _SafeUnpickler(io.BytesIO(data)).load()
    except Exception:  # noqa: BLE001 - a corrupt or foreign cache file is an empty cache
        return {}
    if not isinstance(content, dict) or content.get("format") != FORMAT or content.get("key") != key:
        return {}
    entries = content.get("entries")
    return {k: v for k, v in entries.items() if isinstance(v, Entry)} if isinstance(entries, dict) else {}


class LintCache:
    """The entries of one configuration; `updates` collects this run's results until `save`."""

    def __init__(self, folder: Path, key: str) -> None:
        self.folder = folder
        self.key = key
        self.path = folder / __version__ / f"{key}.pickle"
        self.entries = _load(self.path, key)
        self.updates: dict[str, Entry] = {}

    def get(self, path_key: str) -> Entry | None:
        entry = self.entries.get(path_key)
        return entry if _well_formed(entry) else None

    def put(self, path_key: str, entry: Entry) -> None:
        self.updates[path_key] = entry

    def save(self) -> str | None:
        """Write this run's entries; a one-line reason when the cache could not be written."""
        if not self.updates:
            return None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _mark(self.folder)
            with _locked(self.path.with_suffix(".lock")):
                merged = _load(self.path, self.key)  # what other runs wrote since this one started
                merged.update(self.updates)
                payload = pickle.dumps({"format": FORMAT, "key": self.key, "entries": merged},
                                       protocol=pickle.HIGHEST_PROTOCOL)
                handle, temporary = tempfile.mkstemp(prefix=".entries.", dir=self.path.parent)
                try:
                    with os.fdopen(handle, "wb") as stream:
                        stream.write(payload)
                    os.replace(temporary, self.path)
                except BaseException:
                    _unlink(temporary)
                    raise
        except OSError as exc:
            return f"cache not written: {exc.strerror or exc}"
        self.entries.update(self.updates)
        self.updates = {}
        return None


def _well_formed(entry: Any) -> bool:
    try:
        return (isinstance(entry, Entry) and isinstance(entry.digest, str) and isinstance(entry.diagnostics, list)
                and isinstance(entry.summaries, dict) and isinstance(entry.deps, dict)
                and len(entry.signature) == 4 and all(isinstance(d, Diagnostic) for d in entry.diagnostics))
    except Exception:  # noqa: BLE001 - a damaged entry (missing attributes, wrong types) is no entry
        return False


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


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def is_cache_folder(folder: Path) -> bool:
    return (folder / "CACHEDIR.TAG").is_file() and "tritonlint" in (folder / "CACHEDIR.TAG").read_text(errors="replace")


def clean(folder: Path) -> bool:
    """Remove a cache folder tritonlint made; False when there is none (or it is not tritonlint's)."""
    if not folder.is_dir() or not is_cache_folder(folder):
        return False
    shutil.rmtree(folder)
    return True


def now_ns() -> int:
    return time.time_ns()


class Session:
    """One run's use of the cache: which files it can serve, and the entries it leaves behind.

    `files` are (key, path, display, module) per discovered file; `linted` is every module of the run."""

    def __init__(self, cache: LintCache, files: list[tuple[str, Path, str, str]], linted: frozenset[str]) -> None:
        self.cache = cache
        self.files = files
        self.linted = linted
        self.started_ns = now_ns()
        self.signatures: list[Signature | None] = [_stat(path) for _, path, _, _ in files]
        self.digests: dict[int, str | None] = {}
        self.by_module: dict[str, list[int]] = {}
        for index, (_, _, _, module) in enumerate(files):
            self.by_module.setdefault(module, []).append(index)

    def digest_of(self, index: int) -> str | None:
        """The digest of a file's content now: from its entry while its stat says unchanged, else read."""
        if index not in self.digests:
            key, path, _, _ = self.files[index]
            entry = self.cache.get(key)
            current = self.signatures[index]
            if entry is not None and current is not None and entry.unchanged(current):
                self.digests[index] = entry.digest
            else:
                try:
                    self.digests[index] = digest(path.read_bytes())
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

    def serve(self, index: int, reusable: Callable[[Entry], bool]) -> Entry | None:
        """The entry of a file whose content, name, settings and launch targets are as they were cached."""
        key, _, display, module = self.files[index]
        entry = self.cache.get(key)
        if entry is None or entry.display != display or entry.module != module or not reusable(entry):
            return None
        if self.signatures[index] is None or self.digest_of(index) != entry.digest:
            return None
        for target, (was_module, was_digest) in entry.deps.items():
            now_module = defining_module(target, self.linted)
            if now_module != was_module or self.module_digest(now_module) != was_digest:
                return None
        if not entry.unchanged(self.signatures[index]):  # type: ignore[arg-type]
            self.cache.put(key, dataclasses.replace(entry, signature=self.signatures[index],
                                                    checked_ns=self.started_ns))  # re-hashed: remember
        return entry

    def record(self, index: int, file_digest: str, file_signature: Signature, checked_ns: int,
               diagnostics: list[Diagnostic], summaries: dict[str, Any], skipped: str | None,
               consulted: frozenset[str]) -> None:
        key, _, display, module = self.files[index]
        self.digests[index] = file_digest
        deps = {}
        for target in sorted(consulted):
            owner = defining_module(target, self.linted)
            deps[target] = (owner, self.module_digest(owner))
        self.cache.put(key, Entry(display, module, file_digest, file_signature, checked_ns, diagnostics,
                                  summaries, skipped, deps))


def _stat(path: Path) -> Signature | None:
    try:
        return signature(os.stat(path))
    except OSError:
        return None


def cache_folder(settings: Settings, override: str | None = None) -> Path:
    """`--cache-dir` (or TRITONLINT_CACHE_DIR), else the configured `cache-dir`, else beside the config."""
    if override:
        return Path(override).absolute()
    return settings.cache_dir or settings.root / CACHE_DIR_NAME


def open_cache(folder: Path, settings: Settings, rules: list[Rule], unsafe: bool) -> LintCache:
    effective = dataclasses.replace(settings, cache_dir=None)
    return LintCache(folder, configuration_key(effective, rules, unsafe))
