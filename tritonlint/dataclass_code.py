"""Dataclass methods without compiling them at every start.

The `dataclass` decorator writes each class's `__init__`, `__repr__`, `__eq__`... as source text and compiles
it when the module is imported: for tritonlint's ~75 data classes that was 23% of the instructions of a
one-file lint (callgrind, 178 M of 763 M: about 330 texts parsed and compiled). The text depends only on the
class's definition and the Python that runs it, so the console script keeps the compiled code, by its text,
in a file beside tritonlint's own byte code (as Python keeps `.pyc` files in `__pycache__`) and the decorator
runs that code instead of compiling the same text again. The code is what compiling the text gives, so the
classes are the same; a file that is absent, damaged, from another Python or not writable only costs the
compiling. Only tritonlint's own classes are kept (the file stays small: other packages' classes load
lazily and rarely)."""

from __future__ import annotations

import dataclasses
import marshal
import os
import sys

_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__",
                     f"dataclass-code.{sys.implementation.cache_tag}.marshal")
_HEADER = sys.version  # marshal's format and the byte code both follow the interpreter

KEEP = 4000  # texts; past this the file keeps only those of the run that writes it (edits in a checkout add some)

_known: dict[str, object] = {}
_new: dict[str, object] = {}
_used: set[str] = set()


def _exec(source: object, globals: dict[str, object] | None = None, locals: object = None) -> None:
    """`exec` as dataclasses calls it, running code compiled before for a text seen before."""
    if isinstance(source, str) and isinstance(globals, dict) \
            and str(globals.get("__name__", "")).startswith("tritonlint"):
        _used.add(source)
        code = _known.get(source)
        if code is None:
            # as exec compiles a text: dataclasses' own module has no __future__ flags to pass on
            code = _new[source] = _known[source] = compile(source, "<string>", "exec", dont_inherit=True)
        source = code
    exec(source, globals, locals)  # type: ignore[arg-type]  # noqa: S102 - dataclasses' own call, unchanged


def install() -> None:
    """Serve dataclasses' compiling from the kept code, for the rest of the process."""
    try:
        with open(_PATH, "rb") as stream:
            header, codes = marshal.loads(stream.read())
        if header == _HEADER and isinstance(codes, dict):
            _known.update(codes)
    except (OSError, EOFError, ValueError, TypeError):
        pass  # absent, damaged or another Python's: compile as usual, and keep what was compiled
    dataclasses.exec = _exec  # type: ignore[attr-defined]  # a module global shadows the builtin in its functions


def save() -> None:
    """Keep the code compiled in this process, with what the file held (written only when there is new code)."""
    if not _new:
        return
    kept = _known if len(_known) <= KEEP else {text: _known[text] for text in _used}
    temporary = f"{_PATH}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(_PATH), exist_ok=True)
        with open(temporary, "wb") as stream:
            stream.write(marshal.dumps((_HEADER, kept)))
        os.replace(temporary, _PATH)
    except (OSError, ValueError):
        try:
            os.unlink(temporary)
        except OSError:
            pass  # not writable: the next run compiles again
    _new.clear()
