"""A time limit per file. The analysis names each stage as it enters it (`parse`, `model`, `rule TL001`,
`fix`, `write`); where a process can take signals (its main thread, POSIX) a timer interrupts a file that runs
past the limit and the stage goes into the error. Worker processes also write the stage to memory their
parent reads: the parent kills a worker whose file is still not done a little later (native code, which no
signal interrupts) and replaces it (workers.py)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# Generous: Python's parser alone takes ~20 s over 10 MB of dense code here, and a limit that fires on a
# valid file is an error on valid input (tests/test_bad_inputs.py lints a 1.2 MB line and a 10 MB file).
DEFAULT_SECONDS = 60.0
MAX_SECONDS = 1e6  # what setitimer takes everywhere
STAGE_BYTES = 64  # the size of a worker's shared stage buffer
WRITE = "write"  # writing a fixed file: never interrupted, so that no half-written temporary is left behind


class FileTimeout(BaseException):
    """Raised by the timer. A BaseException, so that the `except Exception` that turns a rule's own failure
    into an internal error of that rule does not take the timeout for one."""

    def __init__(self, stage: str) -> None:
        super().__init__(stage)
        self.stage = stage


_stage = "read"
_shared: Any = None  # a worker's shared stage buffer (a ctypes char array), read by its parent


def _slow_stage() -> tuple[str, float] | None:
    """TEST-ONLY hook: TRITONLINT_TEST_SLOW_STAGE=STAGE:SECONDS (e.g. `rule:TL001:5`, `parse:2`) sleeps that
    long on entering the stage, to test the time limit without a real slow rule. Read once, at import."""
    value = os.environ.get("TRITONLINT_TEST_SLOW_STAGE", "")
    stage, _, seconds = value.rpartition(":")
    try:
        return (stage.replace(":", " "), float(seconds)) if stage else None
    except ValueError:
        return None


_SLOW = _slow_stage()


def enter(stage: str) -> None:
    global _stage
    _stage = stage
    if _shared is not None:
        _shared.value = stage.encode()[:STAGE_BYTES - 1]
    if _SLOW is not None and _SLOW[0] == stage:
        time.sleep(_SLOW[1])


def share(buffer: Any) -> None:
    """In a worker process: report every stage in `buffer` too."""
    global _shared
    _shared = buffer


def shared_stage(buffer: Any) -> str:
    return buffer.value.decode("utf-8", "replace") or "start"


def kill_after(seconds: float) -> float:
    """When a worker's parent kills it: later than the timer (which ends the file cleanly where it can)."""
    return seconds + max(1.0, seconds / 2)


def message(display: str, seconds: float, stage: str) -> str:
    return (f"internal error on file {display}: the analysis ran past the time limit of {seconds:g} s "
            f"(--file-timeout) in stage {stage}; the file is not linted")


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise FileTimeout in the body once it has run `seconds` (0: no limit). Only in the main thread
    where signal.setitimer exists; elsewhere the body runs unlimited."""
    if not seconds or not hasattr(signal, "setitimer"):
        yield
        return

    def expired(signum: int, frame: object) -> None:
        if _stage != WRITE:  # the file is written as a whole or not at all; after the write nothing is left to do
            raise FileTimeout(_stage)

    try:
        previous = signal.signal(signal.SIGALRM, expired)
    except ValueError:  # not the main thread (asked so, not through threading: importing it costs a lint run)
        yield
        return
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)
