"""The console script's entry point: a lint run whose inputs are all as a recorded run found them prints that
run's output again, without importing the command line, the configuration reader or the linter.

Importing those costs several times the rest of a run served from the cache (callgrind: Python's start-up 39 M
instructions, the command line's imports 255 M more, click's share 106 M), so a plain lint records, beside its
cache, what it printed, its exit code and every input its output depends on: the invocation (arguments,
folder, the environment variables tritonlint reads, whether standard output is a terminal, the interpreter
and its import path) in the record's key, and the stat (times, size, inode, mode) of every path it read or
looked for: the configuration files tried, the rule files and their folders, tritonlint's own files and
ast-grep's, every folder walked (a folder's times change when an entry is added, removed or renamed), the
.gitignore and __init__.py files probed, the linted files and the project's other modules, the baseline;
for `.git` folders only whether they exist. A later run with the same key whose paths all stat the same
prints the recorded output; any difference, or a record that cannot be read, runs the command line as usual,
which records again.

Only runs that write nothing but their report are recorded (no fixes, no output file, no standard input, the
cache in use) and only when they printed nothing on standard error (warnings, errors) and exited 0 or 1. A
path modified within RACY_NS of being read is not trusted by its stat (a same-size edit in that window may
keep its times): such a run is not recorded.
"""

from __future__ import annotations

import os
import sys
import time
import zlib

TYPE_CHECKING = False  # importing typing would cost a replayed run a sixth of its instructions
if TYPE_CHECKING:
    from typing import Any, TextIO

from tritonlint import __version__, inputs
from tritonlint.inputs import CACHE_DIR_NAME, CONFIG_FILES, RACY_NS

FORMAT = 1
_ENVIRONMENT = ("NO_COLOR", "FORCE_COLOR")  # besides every TRITONLINT_* variable


def _pack(fields: list[str]) -> str:
    """Fields as one text, each after its length: any text, newlines and all, comes back as it was."""
    return "".join(f"{len(field)}:{field}" for field in fields)


def _unpack(text: str) -> list[str]:
    fields, at = [], 0
    while at < len(text):
        colon = text.index(":", at)
        length = int(text[at:colon])
        end = colon + 1 + length
        if length < 0 or end > len(text):
            raise ValueError("damaged")
        fields.append(text[colon + 1:end])
        at = end
    return fields


def _key(args: list[str], stdout: TextIO) -> str:
    environment = sorted(f"{name}={value}" for name, value in os.environ.items()
                         if name.startswith("TRITONLINT_") or name in _ENVIRONMENT)
    return _pack([str(FORMAT), __version__, sys.executable, sys.version, os.getcwd(), str(stdout.isatty()),
                  str(stdout.encoding), _pack(sys.path), _pack(args), _pack(environment)])


def _option(args: list[str], name: str) -> str | None:
    for index, arg in enumerate(args):
        if arg == name and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith(f"{name}="):
            return arg.partition("=")[2]
    return None


def _configured_cache_dir(path: str) -> str | None:
    """The `cache-dir` a configuration file sets, read off its lines without a TOML parser (importing one costs
    more than a replayed run): only a guess at where to look, which the record's own check makes safe."""
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            text = stream.read()
    except OSError:
        return None
    pyproject = path.endswith("pyproject.toml")
    ours = not pyproject  # tritonlint's own files keep the settings at the top level
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            ours = pyproject and line.replace(" ", "") == "[tool.tritonlint]"
        elif ours and line.startswith("cache-dir"):
            value = line.partition("=")[2].split("#")[0].strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                return os.path.join(os.path.dirname(path), value[1:-1])
    return None


def _config_file(folder: str) -> str | None:
    """The configuration file config.find_config would take, as far as a glance at the files tells."""
    while True:
        for name in CONFIG_FILES:
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                if name != "pyproject.toml":
                    return path
                try:
                    with open(path, encoding="utf-8", errors="replace") as stream:
                        if "[tool.tritonlint" in stream.read():
                            return path
                except OSError:
                    pass
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _folders(args: list[str]) -> list[str]:
    """Where a record for these arguments may be: the --cache-dir given, else the `cache-dir` of the
    configuration file and the default cache folder in the folder of the paths or above it. Only where to look:
    a record found is trusted only after checking."""
    override = _option(args, "--cache-dir") or os.environ.get("TRITONLINT_CACHE_DIR")
    if override:
        return [os.path.abspath(override)]
    paths = [os.path.abspath(arg) for arg in args if not arg.startswith("-") and os.path.exists(arg)]
    folder = os.path.commonpath(paths) if paths else os.getcwd()
    if not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    config = _option(args, "--config") or _config_file(folder)
    configured = _configured_cache_dir(os.path.abspath(config)) if config else None
    found = [os.path.abspath(configured)] if configured else []
    while True:
        found.append(os.path.join(folder, CACHE_DIR_NAME))
        parent = os.path.dirname(folder)
        if parent == folder:
            return found
        folder = parent


def record_path(folder: str, key: str) -> str:
    crc = zlib.crc32(key.encode("utf-8", "surrogatepass"))
    return os.path.join(folder, __version__, f"run-{crc:08x}.record")


def _replay(key: str, folders: list[str]) -> int | None:
    """Print a recorded run's output and return its exit code; None when no record holds."""
    for folder in folders:
        path = record_path(folder, key)
        try:
            with open(path, encoding="utf-8", errors="surrogatepass", newline="") as stream:
                recorded, code, stdout, touch, noted = _unpack(stream.read())
            paths = _unpack(noted)
            if recorded != key or code not in ("0", "1") \
                    or not all(inputs.unchanged(p, s) for p, s in zip(paths[::2], paths[1::2])):
                continue
        except (OSError, ValueError):
            continue  # absent, damaged, or from another tritonlint
        for touched in (path, *_unpack(touch)):
            try:
                os.utime(touched)  # in use: not stale (cache.prune_stale)
            except OSError:
                pass  # a read-only cache still serves
        sys.stdout.write(stdout)
        sys.stdout.flush()
        return int(code)
    return None


class _Tee:
    """Standard output that also keeps what is written to it, for the record."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        written = self.stream.write(text)  # first: click probes with bytes, which the text stream refuses
        self.parts.append(text)
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _write(key: str, stdout: str, code: int) -> None:
    noted, allowed = inputs.finish()
    if allowed is None:
        return
    cutoff = time.time_ns() - RACY_NS
    if any(isinstance(stat, tuple) and stat[0] >= cutoff for stat in noted.values()):
        return  # modified just before it was read: its stat may not show the next edit
    folder, touch = allowed
    path = record_path(folder, key)
    paths = _pack([text for name, stat in sorted(noted.items()) for text in (name, inputs.encode(stat))])
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temporary, "w", encoding="utf-8", errors="surrogatepass", newline="") as stream:
            stream.write(_pack([key, str(code), stdout, _pack(touch), paths]))
        os.replace(temporary, path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass


def main(argv: list[str] | None = None) -> None:
    for stream in (sys.stdout, sys.stderr):  # a message with a character the locale cannot encode is no crash
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["server"]:  # standard output carries the protocol, for as long as the editor runs
        from tritonlint.cli import main as serve

        serve(args)
        return
    key = _key(args, sys.stdout)
    try:
        code = _replay(key, _folders(args))
    except KeyboardInterrupt:  # as the command line answers them
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    if code is not None:
        sys.exit(code)
    import gc

    from tritonlint import startup_cache

    # Importing the command line and the linter makes many objects and few cycles: collecting as often as the
    # defaults ask costs more than it frees in a run this short (the runner relaxes it so for its files too).
    gc.set_threshold(100_000, 50, 100)
    startup_cache.install()
    from tritonlint.command import main as lint  # click only where its parser is needed

    real, tee = sys.stdout, _Tee(sys.stdout)
    sys.stdout = tee
    inputs.start()
    try:
        if not lint(args):
            from tritonlint.cli import main as run

            run(args)
    except SystemExit as exit:
        if exit.code in (0, 1):
            try:
                _write(key, "".join(tee.parts), exit.code)
            except Exception:  # noqa: BLE001 - a record not written costs the next run time, never this run's result
                pass
        sys.stdout = real
        startup_cache.save()
        _exit_now(exit.code)
        raise
    finally:
        sys.stdout = real
        inputs.finish()


def _exit_now(code: object) -> None:
    """Exit without tearing the interpreter down: freeing every object of the analysis one by one cost a
    one-file lint a twentieth of its instructions (callgrind), for a process that is about to end anyway. Only
    once the output is flushed, and not after a pool of worker processes (multiprocessing's exit handlers
    wait for them)."""
    if not (code is None or isinstance(code, int)) or "multiprocessing" in sys.modules:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # as a normal exit reports it
    os._exit(code or 0)
