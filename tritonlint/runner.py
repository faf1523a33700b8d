"""Lint many files: discover, serve unchanged files from the cache, lint the others in worker processes
(the GIL makes threads useless here) that return plain data, then re-lint the few files whose launches
need kernels defined in other linted modules, with the kernel summaries of every module."""

from __future__ import annotations

import dataclasses
import gc
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from tritonlint import inputs
from tritonlint.analysis.launch_index import (
    ModuleLinks,
    build_index,
    importers_index,
    is_calls_dependency,
    is_launch_dependency,
    launch_dependency,
    read_links,
    recorded_callers,
    recorded_launchers,
)
from tritonlint.analysis.project import (
    Namespaces,
    Project,
    defining_module,
    module_name,
    separating_prefixes,
    source_root,
)
from tritonlint.builtin import BUILTIN_RULES
from tritonlint.cache import Entry, LintCache, Session, Signature, digest, pack, safe_loads, signature, unpack
from tritonlint.config import Settings
from tritonlint.diagnostics import Diagnostic
from tritonlint.discovery import context_files, discover, project_root
from tritonlint.fixes import applicable
from tritonlint.results import FileResult, FixMode
from tritonlint.ruleset import Rule
from tritonlint.source import SourceError, SourceText, decode_source, read_bytes
from tritonlint.timelimit import enter, kill_after, message

if TYPE_CHECKING:
    from tritonlint.analysis.model import JitFunction
    from tritonlint.linter import FileLinter

PARALLEL_THRESHOLD = 24  # below this many files a process pool costs more than it saves


@dataclass
class Job:
    """One file to lint (or to read for its kernels and launches)."""
    path: Path
    display: str
    module: str
    absolute: str = ""
    context: bool = False  # a module of the project read for its kernels and launches, not a linted file


@dataclass
class Facts:
    """What a worker learnt about a file besides its findings, for the cache."""

    digest: str | None = None
    signature: Signature | None = None
    checked_ns: int = 0
    consulted: frozenset[str] = frozenset()  # launch targets looked up in other modules


@dataclass
class RunResult:
    """A run's results, and the paths it could not walk."""
    files: list[FileResult] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (path, reason) for paths not walked


def make_linter(rules: list[Rule], settings: Settings, mode: FixMode, unsafe: bool) -> FileLinter:
    from tritonlint.engine import Engine
    from tritonlint.linter import FileLinter

    engine = Engine(settings.enabled(rules), settings.options, settings.target_sm())
    known = frozenset(code for rule in [*rules, *BUILTIN_RULES] for code in (rule.id, rule.name))
    return FileLinter(engine, settings, known, mode, unsafe)


class LazyLinter:
    """make_linter's arguments, for a run that may lint nothing: the linter, and with it the analysis, is
    imported and built for the first file the cache cannot serve (the imports alone cost more than the
    rest of a run served from the cache)."""

    def __init__(self, rules: list[Rule], settings: Settings, mode: FixMode, unsafe: bool) -> None:
        self.rules, self.settings, self.mode, self.unsafe = rules, settings, mode, unsafe

    @cached_property
    def linter(self) -> FileLinter:
        return make_linter(self.rules, self.settings, self.mode, self.unsafe)


# A worker's state: set in the parent before the pool forks (or by the initializer where processes spawn),
# so each task carries one small Job instead of the linter and every module's summaries.
_worker: FileLinter | None = None
_project: Project | None = None
_hashing = False


def _init_worker(linter: FileLinter, project: Project, hashing: bool) -> None:
    global _worker, _project, _hashing
    _worker, _project, _hashing = linter, project, hashing


def _init_child(*state: object) -> None:
    if state:
        _init_worker(*state)  # type: ignore[arg-type]
    _relax_gc()


def _relax_gc() -> tuple[int, int, int]:
    """Parsing allocates many objects and makes few cycles: collecting as often as the defaults ask costs
    a fifth of the run. What exists already is never garbage here, so the collector skips it for good."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    return before


def _lint_job(job: Job) -> tuple[FileResult, Facts]:
    linter, project = _worker, _project
    assert linter is not None and project is not None
    if job.context:
        linter = linter.with_mode(FixMode.NONE)
    project.consulted = set()
    facts = Facts(checked_ns=time.time_ns())
    result = FileResult(job.display, job.module)
    enter("read")
    try:
        if _hashing:
            facts.signature = signature(os.stat(job.absolute or job.path))  # before reading: a later edit shows
        data = read_bytes(job.path)
        source = decode_source(data)
    except (SourceError, OSError) as exc:
        result.skipped = str(exc) if isinstance(exc, SourceError) else f"cannot read: {exc.strerror or exc}, skipped"
        data = None
    else:
        lint = _lint_notebook if job.path.suffix == ".ipynb" else linter.lint_source
        result = lint(source, job.path, job.display, job.module, project, result)
    if _hashing and data is not None:
        facts.digest = digest(data)
    facts.consulted = frozenset(project.consulted)
    return pack(result), facts


def _lint_notebook(source: SourceText, path: Path, display: str, module: str, project: Project,
                   result: FileResult) -> FileResult:
    """Lint a notebook's code cells as one module; --fix writes the fixed cells back into its JSON."""
    from tritonlint.fixes import WriteRefused, write_atomic
    from tritonlint.notebook import Notebook, NotebookError

    linter = _worker
    assert linter is not None
    try:
        notebook = Notebook.parse(source.text)
    except NotebookError as exc:
        result.skipped = str(exc)
        return result
    mode = linter.mode
    linter.mode = FixMode.DIFF if mode is FixMode.FIX else mode  # the linter must not write the joined text
    linter.mark_rows = True  # rows quoted in messages count in the joined text until mapped to their cells
    try:
        result = linter.lint_source(SourceText(notebook.text, "utf-8", False, "\n"), None, display, module,
                                    project, result)
    finally:
        linter.mode, linter.mark_rows = mode, False
    if result.fixed is not None:
        written = notebook.dumps(result.fixed)
        try:
            if written is None:
                raise WriteRefused("the fixes would change the notebook's cells")
            if mode is FixMode.FIX:
                write_atomic(path, source, written)
        except (OSError, UnicodeEncodeError, WriteRefused) as exc:
            result.skipped = f"fixes not written: {exc}"
            result.fixes_applied = 0
            result.fixed_codes.clear()
            result.original = result.fixed = None
            return result  # the findings of the fixed text do not map onto the cells on disk: report none
        result.original, result.fixed = source.text, written
        notebook = Notebook.parse(written)
    result.diagnostics = [notebook.map(d) for d in result.diagnostics]
    return result


def display_path(path: Path, cwd: Path) -> str:
    try:
        return path.resolve().relative_to(cwd).as_posix() if path.is_absolute() else path.as_posix()
    except ValueError:
        return path.as_posix()


def lint_paths(paths: list[Path], settings: Settings, linter: FileLinter | LazyLinter, jobs: int | None = None,
               cache: LintCache | None = None) -> RunResult:
    before = _relax_gc()  # the results pile up here: a full collection every few hundred files adds up
    try:
        return _lint_paths(paths, settings, linter, jobs, cache)
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def _lint_paths(paths: list[Path], settings: Settings, linter: FileLinter | LazyLinter, jobs: int | None,
                cache: LintCache | None) -> RunResult:
    found = discover(paths, settings.root, settings.excludes, settings.respect_gitignore)
    root = project_root(paths, settings.config_path)
    context = context_files(paths, found.files, root, settings.excludes, settings.respect_gitignore)
    cwd = Path.cwd().resolve()
    here = os.getcwd()
    packages: dict[str, str] = {}
    work = []
    for path, is_context in [*((p, False) for p in found.files), *((p, True) for p in context)]:
        absolute = os.path.join(here, path)  # path.absolute() asks the OS for the folder each time
        inputs.depends_on(absolute)
        work.append(Job(path, display_path(path, cwd), module_name(absolute, packages), absolute, is_context))
    result = RunResult(problems=[(display_path(p, cwd), reason) for p, reason in found.problems])
    work, separated = _separate(work)
    linted = frozenset(job.module for job in work)
    repeated_names = {module for module, count in Counter(job.module for job in work).items() if count > 1}
    sources = {job.module: job.absolute for job in work if job.module not in repeated_names}
    files = tuple(job.absolute for job in work)
    namespaces = Namespaces(sources, {module: prefix for module, prefix in separated.items()
                                      if module not in repeated_names})
    session = Session(cache, [(j.absolute, j.display, j.module) for j in work], linted, namespaces) if cache else None

    results: list[FileResult | None] = [None] * len(work)
    facts: dict[int, Facts] = {}
    served: dict[int, Entry] = {}
    if session is not None:
        reusable = _reusable(linter)
        for index in range(len(work)):
            hit = session.serve(index, (lambda diagnostics: True) if work[index].context else reusable)
            if hit is not None:
                served[index], diagnostics = hit
                results[index] = FileResult(work[index].display, work[index].module, diagnostics,
                                            skipped=hit[0].skipped)
    todo = [i for i, r in enumerate(results) if r is None]
    first = Project(linted, sources=sources, files=files, namespaces=namespaces)
    # --fix writes nothing before every module's launches are known: a rule may judge a kernel from the launches
    # of another module (the second pass), and a fix written from the first pass's view could not be taken back.
    writes = linter.mode is FixMode.FIX
    found_first = _map(linter, first, [work[i] for i in todo], jobs, session, FixMode.NONE if writes else None)
    for index, (fresh, fact) in zip(todo, found_first):
        results[index], facts[index] = fresh, fact

    links = _links(work, results, served, repeated_names)  # type: ignore[arg-type]

    def read(module: str) -> ModuleLinks | None:
        return read_links(sources[module], module, linted, namespaces) if module in sources else None

    launchers = build_index(links, linted, read)
    importers = importers_index(links, linted, read)

    def launching(index: int) -> frozenset[str]:
        """The other modules that launch an indexed kernel of this file (autotuned, or not launched in it)."""
        found = links.get(work[index].module)
        return frozenset(m for name in (found.indexed if found else ()) for m in launchers.get(name, ()))

    # Files whose rules need kernels of other modules, and files whose indexed kernels other modules launch
    # (judged again with those launches in view; a cached result stands while the launching modules are the
    # ones it was judged with, their contents checked by its dependencies).
    deferred = [i for i in todo if results[i].deferred  # type: ignore[union-attr]
                or writes and _fixable(results[i], linter.unsafe)]  # type: ignore[arg-type]
    deferred += [i for i in range(len(work)) if i not in deferred and launching(i) != (
        recorded_launchers(served[i].deps) if i in served else frozenset())]
    # A cached result judged from the calls of its module's functions stands while the importing modules are the
    # ones it read (their contents checked by its dependencies).
    deferred += [i for i in served if i not in deferred and (recorded := recorded_callers(
        served[i].deps, work[i].module)) is not None and recorded != importers.get(work[i].module, frozenset())]
    if deferred:
        packed: dict[str, bytes] = {}
        shared: dict[str, dict[str, dict[str, JitFunction]]] = {}
        for index, r in enumerate(results):
            job = work[index]
            try:
                if index in served:
                    blob = served[index].summaries_blob
                else:
                    blob = r.packed[1] if r.packed else b""  # type: ignore[union-attr]
                if job.module in repeated_names or index in served:  # a damaged entry is found here, not in a worker
                    found_here = safe_loads(blob) if blob else {}
            except Exception:  # noqa: BLE001 - a damaged entry: lint the file again, with the others
                deferred.append(index)
                continue
            if job.module in repeated_names:  # same dotted name, different files: keep them apart by source root
                shared.setdefault(job.module, {})[source_root(job.display, job.module)] = found_here
            elif blob:
                packed[job.module] = blob
        deferred = sorted(set(deferred))
        displays = {job.module: job.display for job in work if job.module not in repeated_names}
        second = _map(linter, Project(linted, PackedKernels(packed), shared, sources, files, launchers, displays,
                                     namespaces, importers),
                      [work[i] for i in deferred], jobs, session)
        for index, (fresh, fact) in zip(deferred, second):
            fact.consulted |= {launch_dependency(module) for module in launching(index)}
            results[index], facts[index] = fresh, fact

    for r in results:
        unpack(r)  # type: ignore[arg-type]
    if session is not None:
        _remember(session, results, facts)  # type: ignore[arg-type]
        problem = session.cache.save()
        if problem:
            result.problems.append((str(session.cache.folder), problem))
    result.files = _reported(work, results, facts, served, linted, repeated_names)  # type: ignore[arg-type]
    return result


class PackedKernels(Mapping[str, "JitFunction"]):
    """Every module's kernel summaries by qualified name, each module's kept pickled (FileResult.pack) until a
    lookup needs it: the workers of the second pass look up a few modules' kernels, not all of them."""

    def __init__(self, packed: dict[str, bytes]) -> None:
        self.packed = packed  # module -> its summaries, pickled
        self.read: dict[str, dict[str, JitFunction]] = {}

    def _module(self, module: str) -> dict[str, JitFunction]:
        if module not in self.packed:
            return {}
        if module not in self.read:
            self.read[module] = safe_loads(self.packed[module])
        return self.read[module]

    def __getitem__(self, qualname: str) -> JitFunction:
        module = qualname
        while "." in module:  # a kernel's qualified name starts with its module's
            module = module.rpartition(".")[0]
            found = self._module(module).get(qualname)
            if found is not None:
                return found
        raise KeyError(qualname)

    def __iter__(self) -> Iterator[str]:
        return (qualname for module in self.packed for qualname in self._module(module))

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _reported(work: list[Job], results: list[FileResult], facts: dict[int, Facts], served: dict[int, Entry],
              linted: frozenset[str], repeated: set[str]) -> list[FileResult]:
    """The results of the given files, and of the project's other modules whose launches use a kernel of a
    given file: a change to a kernel can break the launches of modules nobody passed (pre-commit passes only
    what is staged); and of another module, the findings judged from the launches of a given file."""
    given = {(job.module, source_root(job.display, job.module)) for job in work if not job.context}
    given_modules = Counter(module for module, _ in given)
    reported = []
    for index, r in enumerate(results):
        job = work[index]
        if not job.context:
            reported.append(r)
            continue
        consulted = facts[index].consulted if index in facts else frozenset(served[index].deps) if index in served \
            else frozenset()
        root = source_root(job.display, job.module)
        # A module name several files share resolves, as Python would, to the one under the importer's root.
        uses_given = any(module in given_modules and (module not in repeated or (module, root) in given)
                         for module in (defining_module(target, linted) for target in consulted
                                        if not is_launch_dependency(target) and not is_calls_dependency(target)))
        if r.diagnostics and uses_given:
            reported.append(r)
        elif any(not d.judged_with.isdisjoint(given_modules) for d in r.diagnostics):
            reported.append(dataclasses.replace(r, diagnostics=[
                d for d in r.diagnostics if not d.judged_with.isdisjoint(given_modules)]))
    return reported


def _separate(work: list[Job]) -> tuple[list[Job], dict[str, str]]:
    """The jobs with the modules of source roots that share a dotted name with another root named with the
    root's folders (project.separating_prefixes), and each renamed module's prefix."""
    prefixes = separating_prefixes((job.absolute, job.module) for job in work)
    if not prefixes:
        return work, {}
    separated = {}
    renamed = []
    for job in work:
        prefix = prefixes.get(source_root(job.absolute, job.module))
        if prefix is not None:
            job = dataclasses.replace(job, module=f"{prefix}.{job.module}")
            separated[job.module] = prefix
        renamed.append(job)
    return renamed, separated


def _links(work: list[Job], results: list[FileResult], served: dict[int, Entry],
           repeated: set[str]) -> dict[str, ModuleLinks]:
    """Every module's links for the launch index (modules whose dotted name several files share aside)."""
    links = {}
    for index, r in enumerate(results):
        if work[index].module in repeated:
            continue
        try:
            found = served[index].links if index in served else r.links
        except Exception:  # noqa: BLE001 - a damaged entry: its file is linted again when it matters
            continue
        if isinstance(found, ModuleLinks):
            links[work[index].module] = found
    return links


def _reusable(linter: FileLinter | LazyLinter) -> Callable[[list[Diagnostic]], bool]:
    """In fix modes a cached result serves only files with nothing to fix (the others must be rewritten)."""
    if linter.mode is FixMode.NONE:
        return lambda diagnostics: True
    return lambda diagnostics: not applicable(diagnostics, linter.unsafe)


def _remember(session: Session, results: list[FileResult], facts: dict[int, Facts]) -> None:
    for index, fact in facts.items():
        if fact.digest is not None:
            session.digests[index] = fact.digest  # the contents just linted, before dependencies are noted
    for index, fact in facts.items():
        r = results[index]
        if fact.digest is None or fact.signature is None or r.internal_error or r.deferred or r.fixed is not None:
            continue  # crashed, unfinished, or rewritten by --fix: the file on disk is not what was linted
        session.record(index, fact.digest, fact.signature, fact.checked_ns, r.packed or (b"", b""), r.skipped,
                       fact.consulted, r.links)


def _fixable(result: FileResult, unsafe: bool) -> bool:
    """A finding of the (packed) result has a fix that the run applies."""
    diagnostics = safe_loads(result.packed[0]) if result.packed and result.packed[0] else result.diagnostics
    return bool(applicable(diagnostics, unsafe))


def _map(linter: FileLinter | LazyLinter, project: Project, tasks: list[Job], jobs: int | None,
         session: Session | None, mode: FixMode | None = None) -> list[tuple[FileResult, Facts]]:
    """Lint the tasks (in `mode` instead of the linter's own, where given)."""
    if not tasks:
        return []
    if isinstance(linter, LazyLinter):
        linter = linter.linter
    if mode is not None:
        linter = linter.with_mode(mode)
    hashing = session is not None
    workers = min(jobs or os.cpu_count() or 1, max(1, len(tasks) // 8))
    if workers <= 1 or len(tasks) < PARALLEL_THRESHOLD:
        _init_worker(linter, project, hashing)
        return [_lint_job(task) for task in tasks]
    import multiprocessing  # here: a run served from the cache starts no process

    from tritonlint.workers import run_jobs

    forking = sys.platform != "win32" and "fork" in multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if forking else "spawn")
    chunk = max(1, min(16, len(tasks) // (workers * 8)))
    if forking:  # the children inherit the state: nothing to pickle
        _init_worker(linter, project, hashing)
        state: tuple[object, ...] = ()
    else:
        state = (linter, project, hashing)
    limit = linter.settings.file_timeout

    def late(job: Job, stage: str) -> tuple[FileResult, Facts]:
        return FileResult(job.display, job.module, internal_error=message(job.display, limit, stage)), Facts()

    return run_jobs(_lint_job, tasks, workers, chunk, context, _init_child, state, _died, late,
                    kill_after(limit) if limit else 0.0)


def _died(job: Job) -> tuple[FileResult, Facts]:
    """The result of a file whose worker process died linting it."""
    message = (f"internal error on file {job.display}: the process linting it died "
               "(a crash in native code, or out of memory)")
    return FileResult(job.display, job.module, internal_error=message), Facts()
