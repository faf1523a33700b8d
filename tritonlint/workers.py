"""Jobs in worker processes, each fed through a pipe of its own, so that the parent always knows which job
a worker is running. A worker that dies (a crash in native code, the kernel's out-of-memory killer) costs
only that job; one that has not finished a job by the deadline (a stage stuck where no signal reaches, see
timelimit.py) is killed, and its job reported with the stage the worker last wrote to shared memory. Either
way a fresh worker takes its place and gets the jobs the old one had not started. A worker whose memory has
grown by `GROWTH_BOUND` since it started retires after its job and is replaced the same way: Python keeps
the memory of one large file's trees (its allocator frees an arena only when nothing in it is left alive),
so a worker that ran for a whole corpus would hold several times what any one file needs."""

from __future__ import annotations

import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

from tritonlint import timelimit

Task = TypeVar("Task")
Result = TypeVar("Result")

_QUEUED_CHUNKS = 2  # chunks sent ahead to each worker, so that it never waits for the parent
GROWTH_BOUND = 48 << 20  # bytes of peak resident memory a worker may add to what it started with


def _serve(connection: Connection, stage: Any, function: Callable[[Any], Any], initializer: Callable[..., None],
           initargs: tuple[object, ...]) -> None:
    timelimit.share(stage)
    initializer(*initargs)
    start = _peak_memory()
    while True:
        chunk = connection.recv()
        if chunk is None:
            return
        for index, task in chunk:
            try:
                outcome = (True, function(task))
            except Exception as exc:  # noqa: BLE001 - the parent raises it, as a call in-process would
                outcome = (False, exc)
            retiring = _peak_memory() - start > GROWTH_BOUND
            connection.send((index, outcome, retiring))
            if retiring:
                return  # the jobs it had not started go to its successor


def _peak_memory() -> int:
    """The process's peak resident memory in bytes (0 where the platform does not say)."""
    try:
        import resource
    except ImportError:  # Windows
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


@dataclass
class _Worker:
    process: Any
    connection: Connection
    stage: Any
    running: deque[int] = field(default_factory=deque)  # jobs sent, in order; the first is the one running
    since: float = 0.0  # when the first job in `running` started, as the parent saw it

    def stop(self) -> None:
        try:
            self.connection.send(None)
        except OSError:
            pass
        self.process.join(1)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.connection.close()


def run_jobs(function: Callable[[Task], Result], tasks: Sequence[Task], workers: int, chunk_size: int,
             context: Any, initializer: Callable[..., None], initargs: tuple[object, ...],
             on_death: Callable[[Task], Result], on_timeout: Callable[[Task, str], Result] | None = None,
             deadline: float = 0.0) -> list[Result]:
    """function(task) for every task, in order, in `workers` processes made by the multiprocessing
    `context`; on_death(task) stands for the result of a task whose process died running it, and
    on_timeout(task, stage) for one still running `deadline` seconds after it started (0: no deadline)."""
    results: dict[int, Result] = {}
    pending = deque(range(len(tasks)))
    pool: list[_Worker] = []

    def start() -> _Worker:
        ours, theirs = context.Pipe()
        stage = context.RawArray("c", timelimit.STAGE_BYTES)
        process = context.Process(target=_serve, args=(theirs, stage, function, initializer, initargs), daemon=True)
        process.start()
        theirs.close()
        return _Worker(process, ours, stage)

    def replace(worker: _Worker, outcome: Result) -> None:
        """The worker is gone or stuck: `outcome` is its running job's result, the jobs after it go back."""
        results[worker.running.popleft()] = outcome
        pending.extendleft(reversed(worker.running))
        worker.process.kill()
        worker.process.join()
        worker.connection.close()
        pool[pool.index(worker)] = start()

    def retire(worker: _Worker) -> None:
        """The worker has sent its last result and exits: the jobs after it go to a fresh worker."""
        pending.extendleft(reversed(worker.running))
        worker.running.clear()
        worker.stop()
        if pending:
            pool[pool.index(worker)] = start()
        else:
            pool.remove(worker)

    try:
        pool.extend(start() for _ in range(min(workers, -(-len(tasks) // chunk_size))))
        while len(results) < len(tasks):
            for worker in pool:
                while pending and len(worker.running) < _QUEUED_CHUNKS * chunk_size:
                    chunk = [pending.popleft() for _ in range(min(chunk_size, len(pending)))]
                    if not worker.running:
                        worker.since = time.monotonic()
                    worker.running.extend(chunk)
                    try:
                        worker.connection.send([(index, tasks[index]) for index in chunk])
                    except OSError:
                        break  # it died: reading its pipe says so below
            busy = [w for w in pool if w.running]
            timeout = None
            if deadline:
                timeout = max(0.05, min(w.since for w in busy) + deadline - time.monotonic())
            wait([w.connection for w in busy], timeout)
            for worker in busy:
                collected = _collect(worker, results)
                if collected is None:
                    replace(worker, on_death(tasks[worker.running[0]]))
                elif collected:
                    retire(worker)
                elif deadline and worker.running and time.monotonic() - worker.since > deadline:
                    stage = timelimit.shared_stage(worker.stage)
                    if stage != timelimit.WRITE:  # a fixed file being written is left to finish
                        assert on_timeout is not None
                        replace(worker, on_timeout(tasks[worker.running[0]], stage))
    finally:
        for worker in pool:
            worker.stop()
    return [results[i] for i in range(len(tasks))]


def _collect(worker: _Worker, results: dict[int, Any]) -> bool | None:
    """Take the results the worker has sent: True when it has retired, None when it is gone."""
    while True:
        try:
            if not worker.connection.poll():
                return False
            index, (ok, value), retiring = worker.connection.recv()
        except (EOFError, OSError):
            return None
        if not ok:
            raise value
        assert worker.running[0] == index
        worker.running.popleft()
        results[index] = value
        worker.since = time.monotonic()
        if retiring:
            return True
