"""Lint many files: discover, then lint each file in worker processes (the GIL makes threads useless
here), then re-lint the few files whose launches need kernels defined in other linted modules, with the
kernel summaries every worker returned."""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tritonlint.config import Settings
from tritonlint.discovery import discover
from tritonlint.engine import Engine, Project, source_root
from tritonlint.linter import FileLinter, FileResult, FixMode
from tritonlint.model import JitFunction, module_name
from tritonlint.ruleset import Rule

PARALLEL_THRESHOLD = 24  # below this many files a process pool costs more than it saves


@dataclass
class Job:
    path: Path
    display: str
    module: str


@dataclass
class RunResult:
    files: list[FileResult] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (path, reason) for paths not walked


def make_linter(rules: list[Rule], settings: Settings, mode: FixMode, unsafe: bool) -> FileLinter:
    engine = Engine(settings.enabled(rules), settings.options, settings.target_sm())
    return FileLinter(engine, settings, settings.code_enabled("TL000", "syntax-error"), mode, unsafe)


_worker: FileLinter | None = None


def _init_worker(linter: FileLinter) -> None:
    global _worker
    _worker = linter


def _lint_job(args: tuple[Job, Project]) -> FileResult:
    job, project = args
    return _worker.lint_path(job.path, job.display, job.module, project)  # type: ignore[union-attr]


def display_path(path: Path, cwd: Path) -> str:
    try:
        return path.resolve().relative_to(cwd).as_posix() if path.is_absolute() else path.as_posix()
    except ValueError:
        return path.as_posix()


def lint_paths(paths: list[Path], settings: Settings, linter: FileLinter, jobs: int | None = None) -> RunResult:
    found = discover(paths, settings.root, settings.excludes, settings.respect_gitignore)
    cwd = Path.cwd().resolve()
    work = [Job(p, display_path(p, cwd), module_name(p.absolute())) for p in found.files]
    result = RunResult(problems=[(display_path(p, cwd), reason) for p, reason in found.problems])
    linted = frozenset(job.module for job in work)
    first = _map(linter, [(job, Project(linted)) for job in work], jobs)
    deferred = [(job, r) for job, r in zip(work, first) if r.deferred]
    if deferred:
        summaries: dict[str, JitFunction] = {}
        shared: dict[str, dict[str, dict[str, JitFunction]]] = {}
        repeated = {module for module, count in Counter(job.module for job in work).items() if count > 1}
        for job, r in zip(work, first):
            if job.module in repeated:  # same dotted name, different files: keep them apart by source root
                shared.setdefault(job.module, {})[source_root(job.display, job.module)] = r.summaries
            else:
                summaries.update(r.summaries)
        second = _map(linter, [(job, Project(linted, summaries, shared)) for job, _ in deferred], jobs)
        replaced = {id(old): new for (_, old), new in zip(deferred, second)}
        first = [replaced.get(id(r), r) for r in first]
    result.files = first
    return result


def _map(linter: FileLinter, tasks: list[tuple[Job, Project]], jobs: int | None) -> list[FileResult]:
    workers = jobs or os.cpu_count() or 1
    if workers <= 1 or len(tasks) < PARALLEL_THRESHOLD:
        _init_worker(linter)
        return [_lint_job(task) for task in tasks]
    method = "fork" if sys.platform != "win32" and "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    chunk = max(1, min(32, len(tasks) // (workers * 4)))
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_init_worker,
                             initargs=(linter,)) as pool:
        return list(pool.map(_lint_job, tasks, chunksize=chunk))
