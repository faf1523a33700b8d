"""Find the Python files to lint: recursive, honouring .gitignore files and the configured excludes,
safe against symlink loops. Paths named explicitly on the command line are always linted."""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tritonlint import inputs

# Folders never linted unless `exclude` replaces this list: other people's code, tools' caches, build output.
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".bzr", ".tox", ".nox", ".venv", "venv", ".eggs", "__pypackages__", "_build",
    "buck-out", "build", "dist", "node_modules", "site-packages", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".tritonlint_cache", ".ipynb_checkpoints",
)

PYTHON_SUFFIXES = (".py", ".pyi", ".ipynb")


@dataclass(frozen=True)
class _Pattern:
    """A compiled exclude or .gitignore pattern."""
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool


class GitIgnore:
    """The patterns of one .gitignore file, matched against paths relative to its folder."""

    def __init__(self, base: Path, lines: list[str]) -> None:
        self.base = base
        self.patterns = [p for p in map(_compile, lines) if p is not None]

    @classmethod
    def load(cls, folder: Path) -> GitIgnore | None:
        path = folder / ".gitignore"
        inputs.depends_on(path)
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        ignore = cls(folder, text.splitlines())
        return ignore if ignore.patterns else None

    def verdict(self, relative: str, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included by a `!` pattern, None: no pattern matches."""
        result = None
        for pattern in self.patterns:
            if pattern.dir_only and not is_dir:
                continue
            if pattern.regex.match(relative):
                result = not pattern.negated
        return result


def _compile(line: str) -> _Pattern | None:
    line = line.rstrip("\n\r")
    if not line.strip() or line.startswith("#"):
        return None
    line = re.sub(r"(?<!\\)\s+$", "", line)
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    line = line.replace("\\#", "#").replace("\\!", "!").replace("\\ ", " ")
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    body = _glob_to_regex(line)
    prefix = "" if anchored else r"(?:.*/)?"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "possible nested set" FutureWarnings for `[[...]]`
            regex = re.compile(f"^{prefix}{body}$")
    except re.error:
        return None  # a pattern git cannot use either (`[z-a]`, `[]`): it matches nothing
    return _Pattern(regex, negated, dir_only)


def _glob_to_regex(glob: str) -> str:
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append(r"(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append(r"/.*")
            i += 3
        elif glob.startswith("**", i):
            out.append(r".*")
            i += 2
        elif glob[i] == "*":
            out.append(r"[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append(r"[^/]")
            i += 1
        elif glob[i] == "[":
            end = glob.find("]", i + 1)
            if end == -1:
                out.append(re.escape(glob[i]))
                i += 1
            else:
                content = glob[i + 1:end].replace("\\", "\\\\")
                if content.startswith("!"):
                    content = "^" + content[1:]
                out.append(f"[{content}]")
                i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)


def _excluded(name: str, relative: str, excludes: list[str]) -> bool:
    """fnmatch of the name or the relative path against any pattern, as one regex (called per entry)."""
    matcher = _exclude_matcher(tuple(excludes))
    if matcher is None:
        return False
    return matcher.match(os.path.normcase(name)) is not None or matcher.match(os.path.normcase(relative)) is not None


@lru_cache(maxsize=32)
def _exclude_matcher(excludes: tuple[str, ...]) -> re.Pattern[str] | None:
    if not excludes:
        return None
    return re.compile("|".join(fnmatch.translate(os.path.normcase(pattern)) for pattern in excludes))


@dataclass
class Discovery:
    """The files found under the given paths, and the paths that could not be walked."""
    files: list[Path]
    problems: list[tuple[Path, str]]  # paths that could not be walked, with a one-line reason


def discover(paths: list[Path], root: Path, excludes: list[str], respect_gitignore: bool = True) -> Discovery:
    files: list[Path] = []
    problems: list[tuple[Path, str]] = []
    seen_dirs: set[tuple[int, int]] = set()
    for path in paths:
        inputs.depends_on(path)
        if not os.path.lexists(path):
            problems.append((path, "no such file or directory"))
        elif path.is_file():
            files.append(path)
        elif path.is_dir():
            ignores = _ancestor_ignores(path, root) if respect_gitignore else []
            _walk(path, _relative(path, root), excludes, respect_gitignore, ignores, seen_dirs, files, problems)
        elif path.is_symlink():
            problems.append((path, _broken_link(path)))
        else:
            problems.append((path, "not a file or folder, skipped"))
    unique = list(dict.fromkeys(files))
    return Discovery(unique, problems)


def _ancestor_ignores(path: Path, root: Path) -> list[GitIgnore]:
    """.gitignore files above a starting folder, up to the repository root (or the project root)."""
    ignores = []
    start = path.resolve()
    for folder in [*reversed(start.parents), start][:-1]:
        inputs.depends_on(folder / ".git", existence=True)
        if (folder / ".git").exists() or folder == root.resolve() or root.resolve() in folder.parents:
            ignore = GitIgnore.load(folder)
            if ignore:
                ignores.append(ignore)
    return ignores


def _walk(folder: Path, relative_folder: str, excludes: list[str], respect_gitignore: bool, ignores: list[GitIgnore],
          seen: set[tuple[int, int]], files: list[Path], problems: list[tuple[Path, str]]) -> None:
    inputs.depends_on(folder)
    try:
        stat = folder.stat()
    except OSError as exc:
        problems.append((folder, f"cannot read folder: {exc.strerror or exc}"))
        return
    identity = (stat.st_dev, stat.st_ino)
    if identity in seen:  # a folder reached twice, or a symbolic link loop
        if folder.is_symlink() and _points_to_enclosing_folder(folder):
            problems.append((folder, "symbolic link loop (it points to an enclosing folder), not followed"))
        return
    seen.add(identity)
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        problems.append((folder, f"cannot read folder: {exc.strerror or exc}"))
        return
    if respect_gitignore and any(entry.name == ".gitignore" for entry in entries):  # no failed open per folder
        own = GitIgnore.load(folder)
        if own is not None:
            ignores = [*ignores, own]
    for entry in entries:
        try:
            is_dir = entry.is_dir()
            is_file = not is_dir and entry.is_file()
        except OSError:
            is_dir = is_file = False  # a symbolic link loop, among others: reported below if it names a .py
        if not is_dir and not entry.name.endswith(PYTHON_SUFFIXES):
            continue  # decided before any pattern is matched or a Path is made: most entries end here
        relative = f"{relative_folder}/{entry.name}" if relative_folder not in ("", ".") else entry.name
        if _excluded(entry.name, relative, excludes):
            continue
        path = Path(entry.path)
        if ignores and _ignored(path, is_dir, ignores):
            continue
        if is_dir:
            _walk(path, relative, excludes, respect_gitignore, ignores, seen, files, problems)
        elif is_file:
            files.append(path)
        elif entry.is_symlink():
            problems.append((path, _broken_link(path)))


def _points_to_enclosing_folder(link: Path) -> bool:
    target, here = link.resolve(), link.parent.resolve()
    return target == here or target in here.parents


def _broken_link(path: Path) -> str:
    try:
        path.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop, skipped"
        if exc.errno == errno.ENOENT:
            return "broken symbolic link (its target does not exist), skipped"
        return f"cannot follow symbolic link: {exc.strerror or exc}, skipped"
    return "symbolic link to something that is not a file, skipped"


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _ignored(path: Path, is_dir: bool, ignores: list[GitIgnore]) -> bool:
    result = False
    for ignore in ignores:  # deeper files come later and win
        try:
            relative = path.relative_to(ignore.base).as_posix()
        except ValueError:
            continue
        verdict = ignore.verdict(relative, is_dir)
        if verdict is not None:
            result = verdict
    return result


def is_excluded(path: Path, root: Path, excludes: list[str]) -> bool:
    """Whether a path, or a folder above it up to the project root, matches an exclude pattern.

    For `--force-exclude`: a path named on the command line is otherwise always linted, but pre-commit
    names every changed file, and the configured excludes should still hold for those."""
    parts = _relative(path, root).split("/")
    return any(_excluded(parts[i], "/".join(parts[: i + 1]), excludes) for i in range(len(parts)))


def project_root(paths: list[Path], config_path: Path | None) -> Path:
    """The folder whose modules form the project: the one holding the configuration, else the git root
    above the given paths, else their common parent."""
    if config_path is not None:
        return config_path.parent.resolve()
    given = [p.resolve() for p in paths] or [Path.cwd().resolve()]
    common = Path(os.path.commonpath([str(p) for p in given]))
    common = common if common.is_dir() else common.parent
    for folder in [common, *common.parents]:
        inputs.depends_on(folder / ".git", existence=True)
        if (folder / ".git").exists():
            return folder
    return common


def context_files(paths: list[Path], given: list[Path], root: Path, excludes: list[str],
                  respect_gitignore: bool) -> list[Path]:
    """The project's other Python files, read as context when only some files are linted (pre-commit, an
    editor): their kernels and launches resolve, their findings are not the run's to report."""
    if any(p.resolve() == root for p in paths if p.is_dir()):
        return []  # the whole project is linted already
    linted = {p.resolve() for p in given}
    found = discover([root], root, excludes, respect_gitignore)
    return [p for p in found.files if p.resolve() not in linted]
