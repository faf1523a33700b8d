"""What Python compiles afresh at every start of a tritonlint process, kept compiled between runs.

The `dataclass` decorator writes each class's `__init__`, `__repr__`, `__eq__`... as source text and compiles it
when the module is imported, and `re.compile` at a module's top level translates its pattern into the regular
expression engine's code: for tritonlint's ~75 data classes and the module-level patterns of tritonlint and of
the modules it imports (tomllib's among them) that was over a quarter of the instructions of a one-file lint
(callgrind: 178 M of 763 M for the data classes alone, about 330 texts parsed and compiled). Both depend only
on the text compiled and on the Python that runs it, so the console script keeps the results, by their text, in
a file beside tritonlint's own byte code (as Python keeps `.pyc` files in `__pycache__`) and serves the same
text from there: dataclasses runs the code that compiling its text gives, and `re` builds the pattern from the
engine code its compiler gave. The objects are the ones compiling would make; a file that is absent, damaged,
from another Python or not writable only costs the compiling. Kept: tritonlint's own data classes, and patterns
compiled while a module is imported or written as constants (a pattern built from a file's names is not kept)."""

from __future__ import annotations

import dataclasses
import marshal
import os
import re
import sys

_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__",
                     f"startup-cache.{sys.implementation.cache_tag}.marshal")
_HEADER = sys.version  # marshal's format, the byte code and the regular expression engine's code follow it
KEEP = 4000  # entries; past this the file keeps only those of the run that writes it (edits in a checkout add some)

_known: dict[object, object] = {}  # a dataclass text -> its code; (pattern, flags) -> _sre.compile's arguments
_used: set[object] = set()
_new = False


def _exec(source: object, globals: dict[str, object] | None = None, locals: object = None) -> None:
    """`exec` as dataclasses calls it, running code compiled before for a text seen before."""
    global _new
    if isinstance(source, str) and isinstance(globals, dict) \
            and str(globals.get("__name__", "")).startswith("tritonlint"):
        _used.add(source)
        code = _known.get(source)
        if code is None:
            # as exec compiles a text: dataclasses' own module has no __future__ flags to pass on
            code = _known[source] = compile(source, "<string>", "exec", dont_inherit=True)
            _new = True
        source = code
    exec(source, globals, locals)  # type: ignore[arg-type]  # noqa: S102 - dataclasses' own call, unchanged


class _Engine:
    """The regular expression engine (`_sre`) as re's compiler calls it, noting the code it was given."""

    def __init__(self, engine: object) -> None:
        self.engine = engine
        self.given: tuple[object, ...] | None = None

    def __getattr__(self, name: str) -> object:
        return getattr(self.engine, name)

    def compile(self, pattern: object, *arguments: object) -> object:
        self.given = arguments
        return self.engine.compile(pattern, *arguments)  # type: ignore[attr-defined]


_compile_regex: object = None  # re's own compiler, as it was before install()


def _regex_compiler(compiler: object, engine: _Engine) -> object:
    global _compile_regex
    real = _compile_regex = compiler.compile  # type: ignore[attr-defined]

    def compile(pattern: object, flags: int = 0) -> object:
        """re._compiler.compile, for a pattern compiled before from the engine code its compiler gave then."""
        global _new
        if not isinstance(pattern, (str, bytes)) or flags & re.DEBUG:
            return real(pattern, flags)
        key = (pattern, int(flags))
        given = _known.get(key)
        if given is not None:
            _used.add(key)
            return engine.engine.compile(pattern, *given)  # type: ignore[attr-defined, misc]
        engine.given = None
        compiler._sre = engine  # type: ignore[attr-defined]  # only now: its other attributes are slower through it
        try:
            compiled = real(pattern, flags)
        finally:
            compiler._sre = engine.engine  # type: ignore[attr-defined]
        if engine.given is not None and _same_every_run(pattern):
            final, code, groups, groupindex, indexgroup = engine.given
            # as plain ints: the compiler's opcodes are an int subclass, which marshal does not take
            _known[key] = (int(final), [int(op) for op in code], int(groups),
                           dict(groupindex), tuple(indexgroup))
            _used.add(key)
            _new = True
        return compiled

    return compile


def _same_every_run(pattern: object) -> bool:
    """Whether the pattern being compiled is the same at every run: compiled by a module's top-level statements,
    or written as a constant in the code that compiles it (not built from a file's names)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__") in ("re", "re._compiler", __name__):
        frame = frame.f_back  # type: ignore[assignment]
    return frame is not None and (frame.f_code.co_name == "<module>" or pattern in frame.f_code.co_consts)


def install() -> None:
    """Serve dataclasses' and re's compiling from the kept results, for the rest of the process."""
    try:
        with open(_PATH, "rb") as stream:
            header, known = marshal.loads(stream.read())
        if header == _HEADER and isinstance(known, dict):
            _known.update(known)
    except (OSError, EOFError, ValueError, TypeError):
        pass  # absent, damaged or another Python's: compile as usual, and keep what was compiled
    dataclasses.exec = _exec  # type: ignore[attr-defined]  # a module global shadows the builtin in its functions
    compiler = getattr(re, "_compiler", None)  # Python 3.11 on; 3.10's sre_compile is left alone
    if compiler is not None and callable(getattr(compiler, "compile", None)) and hasattr(compiler, "_sre"):
        compiler.compile = _regex_compiler(compiler, _Engine(compiler._sre))


def save() -> None:
    """Keep what this process compiled, with what the file held (written only when there is something new)."""
    global _new
    if not _new:
        return
    kept = _known if len(_known) <= KEEP else {key: _known[key] for key in _used}
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
    _new = False
