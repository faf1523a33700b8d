"""Jobs in a pool of worker processes where a worker that dies (a crash in native code, the kernel's
out-of-memory killer) takes down only the job it was running: the others are run again in a fresh pool,
and the jobs that were in flight are run one by one, each in a process of its own, to find the one that
kills its process."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

Task = TypeVar("Task")
Result = TypeVar("Result")

STARTED, FINISHED = 1, 2

# A worker's state: its job function and one shared byte per job that says how far it got.
_function: Callable[[Any], Any] | None = None
_progress: Any = None


def _start(function: Callable[[Any], Any], progress: Any, initializer: Callable[..., None],
           initargs: tuple[object, ...]) -> None:
    global _function, _progress
    _function, _progress = function, progress
    initializer(*initargs)


def _run_chunk(chunk: list[tuple[int, Any]]) -> list[Any]:
    assert _function is not None
    results = []
    for index, task in chunk:
        _progress[index] = STARTED
        results.append(_function(task))
        _progress[index] = FINISHED
    return results


def run_jobs(function: Callable[[Task], Result], tasks: Sequence[Task], workers: int, chunk_size: int,
             context: Any, initializer: Callable[..., None], initargs: tuple[object, ...],
             on_death: Callable[[Task], Result]) -> list[Result]:
    """function(task) for every task, in order, in `workers` processes made by the multiprocessing
    `context`; on_death(task) stands for the result of a task whose process died running it."""
    results: dict[int, Result] = {}
    pending = list(range(len(tasks)))
    while pending:
        progress = context.RawArray("b", len(tasks))
        chunks = [[(i, tasks[i]) for i in pending[start:start + chunk_size]]
                  for start in range(0, len(pending), chunk_size)]
        if not _pool_round(chunks, min(workers, len(chunks)), context, function, progress, initializer,
                           initargs, results):
            # The pool broke. The jobs in flight then are the suspects: each runs alone, so that a death
            # names its job. When none was in flight (a worker died starting), the first job left goes.
            suspects = [i for i in pending if i not in results and progress[i] == STARTED] \
                or [next(i for i in pending if i not in results)]
            for index in suspects:
                alone = [[(index, tasks[index])]]
                if not _pool_round(alone, 1, context, function, progress, initializer, initargs, results):
                    results[index] = on_death(tasks[index])
        pending = [i for i in pending if i not in results]
    return [results[i] for i in range(len(tasks))]


def _pool_round(chunks: list[list[tuple[int, Any]]], workers: int, context: Any, function: Callable[[Any], Any],
                progress: Any, initializer: Callable[..., None], initargs: tuple[object, ...], results: dict[int, Any]) -> bool:
    """Run the chunks in a new pool, adding what comes back to `results`; False when a worker died."""
    futures: list[tuple[list[tuple[int, Any]], Future[Any]]] = []
    died = False
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_start,
                                 initargs=(function, progress, initializer, initargs)) as pool:
            futures = [(chunk, pool.submit(_run_chunk, chunk)) for chunk in chunks]
            for _, future in futures:
                future.result()  # a job's own exception goes up; a dead worker breaks the pool
    except BrokenProcessPool:
        died = True
    for chunk, future in futures:  # every chunk that came back (after a death: those done before it)
        if future.done() and not future.cancelled() and future.exception() is None:
            for (index, _), result in zip(chunk, future.result()):
                results[index] = result
    return not died
