"""What a run's output depends on, for recording it (replay.py): the paths it read or looked for, each by its
stat before reading. Light on purpose: the configuration, discovery, the cache and the module namer note their
paths here, and the console script's entry point imports it before anything else."""

from __future__ import annotations

import os

RACY_NS = 2_000_000_000  # a path modified this recently may change again without its stat showing it
CACHE_DIR_NAME = ".tritonlint_cache"
CONFIG_FILES = ("tritonlint.toml", ".tritonlint.toml", "pyproject.toml")  # in the order config.find_config tries them

Stat = tuple[int, int, int, int, int] | None  # st_mtime_ns, st_ctime_ns, st_size, st_ino, st_mode; None: absent
Noted = Stat | bool  # a stat, or for a path whose existence alone matters, whether it exists

_noted: dict[str, Noted] | None = None  # while a run is being recorded
_allowed: tuple[str, list[str]] | None = None  # set by a run that may be recorded: its cache folder and files


def depends_on(path: str | os.PathLike[str], existence: bool = False) -> None:
    """The run's output depends on this path (a file read or looked for, a folder listed), or with `existence`
    only on whether it exists (a `.git` probed for): called before reading it. Nothing happens unless the run
    is being recorded."""
    if _noted is not None:
        text = os.path.abspath(path)
        if text not in _noted:
            _noted[text] = os.path.exists(text) if existence else stat(text)


def encode(noted: Noted) -> str:
    """A noted stat as text: its numbers, `-` for absent, `+`/`!` for a path whose existence alone matters."""
    if isinstance(noted, bool):
        return "+" if noted else "!"
    return "-" if noted is None else ",".join(map(str, noted))


def unchanged(path: str, encoded: str) -> bool:
    """Whether the path stats now as `encode` wrote it."""
    if encoded in ("+", "!"):
        return os.path.exists(path) is (encoded == "+")
    return encode(stat(path)) == encoded


def allow(folder: str, cache_files: list[str]) -> None:
    """The run printed its report and wrote nothing else: it may be recorded in the cache `folder`, and
    replaying it keeps `cache_files` fresh."""
    global _allowed
    _allowed = (folder, cache_files)


def start() -> None:
    global _noted, _allowed
    _noted, _allowed = {}, None


def finish() -> tuple[dict[str, Noted], tuple[str, list[str]] | None]:
    """The paths noted since `start`, and what `allow` said (None: the run may not be recorded)."""
    global _noted, _allowed
    found = (_noted or {}, _allowed)
    _noted = _allowed = None
    return found


def stat(path: str) -> Stat:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino, info.st_mode
