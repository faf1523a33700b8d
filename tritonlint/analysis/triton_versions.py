"""Which Triton versions the linted code runs under, and what each Triton API does in them: the data table
rules/data/triton-api-versions.yaml, and the project's own `triton` requirement (pyproject.toml
dependencies, requirements*.txt, setup.cfg install_requires, or the `Requires-Dist` metadata of the
distribution an installed or unpacked package came in) read as a range of versions."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from tritonlint import ruledata
from tritonlint.inputs import depends_on
from tritonlint.walk import walk

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Version = tuple[int, int]  # major, minor: the table's granularity


def parse_version(text: str) -> Version | None:
    match = re.match(r"\s*v?(\d+)(?:\.(\d+))?", str(text))
    return (int(match[1]), int(match[2] or 0)) if match else None


def show(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


@dataclass(frozen=True)
class ApiEntry:
    """One API of the Triton versions table and the versions that changed it."""
    api: str  # qualified name; `callee(keyword=)` for a keyword argument
    kind: str  # removed | moved | deprecated | introduced
    replacement: str | None
    deprecated: Version | None
    removed: Version | None
    introduced: Version | None
    fix: str | None
    probe: str | None
    documented: Version | None = None  # a deprecation the documentation states before `deprecated` (reported from)


@dataclass(frozen=True)
class Table:
    """The Triton API versions table (rules/data/triton-api-versions.yaml), parsed."""
    newest: Version
    entries: dict[str, ApiEntry]
    modules: frozenset[str]  # entries that are modules: `triton.ops.matmul` is a use of `triton.ops`
    # jit code reading a module-level global that is not `tl.constexpr(...)`, by how the global is written:
    # `plain` (`NAME = 42`) and `annotated` (`NAME: tl.constexpr = 42`)
    jit_globals: dict[str, ApiEntry]

    @cached_property
    def last_names(self) -> frozenset[str]:
        """The words a use must end with: the table's names, and `allow_tf32` for the keyword (asked at
        every attribute TL103 matches: computed once)."""
        return frozenset(re.split(r"[.(]", api.removesuffix("=)"))[-1] for api in self.entries)


@lru_cache(maxsize=1)
def table() -> Table:
    data = ruledata.table("triton-api-versions.yaml")  # parsed once, kept with the compiled rule set
    entries: dict[str, ApiEntry] = {}

    def version(raw: dict[str, object], key: str) -> Version | None:
        return parse_version(str(raw[key])) if key in raw else None

    for raw in data["apis"]:
        entries[raw["api"]] = ApiEntry(raw["api"], raw["kind"], raw.get("replacement"), version(raw, "deprecated"),
                                       version(raw, "removed"), version(raw, "introduced"), raw.get("fix"),
                                       raw.get("probe"), version(raw, "documented"))
    moved = data["moved_math"]
    for name in moved["functions"]:
        api = f"{moved['from']}.{name}"
        entries[api] = ApiEntry(api, "moved", f"{moved['to']}.{name}", None, parse_version(moved["removed"]), None,
                                "rename", moved.get("probe"))
    modules = frozenset(e.api for e in entries.values() if e.api.count(".") <= 2 and e.api.split(".")[-1] in
                        ("ops", "experimental_descriptor"))
    read = data["jit_globals"]
    jit_globals = {form: ApiEntry(f"{form} global read in jit code", "removed", read["replacement"], None,
                                  parse_version(version), None, None, None) for form, version in read["forms"].items()}
    return Table(parse_version(data["newest"]) or (9, 9), entries, modules, jit_globals)


def removed_use(function: ast.AST, qualify: Callable[[ast.expr], str | None], by: Version) -> str | None:
    """The first API of the table that `function` uses (an attribute chain such as `tl.libdevice.tanh` or
    `tl.math.tanh`, or a keyword such as `tl.dot(trans_a=)`) and that Triton removed by version `by`, as the
    table names it: no Triton from `by` on compiles the function."""
    entries = table().entries
    for node in walk(function):
        names: list[str] = []
        if isinstance(node, ast.Attribute):
            name = qualify(node)
            while name:  # `triton.language.libdevice.tanh`, then `triton.language.libdevice`, ...
                names.append(name)
                name = name.rpartition(".")[0]
        elif isinstance(node, ast.Call) and node.keywords:
            callee = qualify(node.func)
            names = [f"{callee}({keyword.arg}=)" for keyword in node.keywords]
        for name in names:
            entry = entries.get(name)
            if entry is not None and entry.removed is not None and entry.removed <= by:
                return entry.api
    return None


# ---- the project's own requirement ------------------------------------------------------------------------
@dataclass(frozen=True)
class Target:
    """The Triton versions a project allows, and where that was read."""
    low: Version  # the lowest version the project allows: for APIs it may use too early
    high: Version  # the highest: for APIs removed under it
    source: str  # where it comes from, for the message

    def describe(self) -> str:
        span = show(self.high) if self.low == self.high else f"{show(self.low)}-{show(self.high)}"
        return f"Triton {span}, {self.source}"


_PROJECT_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
# The specifier may stand in parentheses: older wheels' METADATA writes `Requires-Dist: triton (==1.0.1)`.
_REQUIREMENT = re.compile(
    r"^\s*triton\s*(?:\[[^\]]*\])?\s*\(?\s*(?P<spec>(?:[<>=!~]=?=?\s*[\w.*+]+\s*,?\s*)*)\)?\s*(?:;|$|#)",
    re.IGNORECASE)


def version_range(spec: str, newest: Version) -> tuple[Version, Version]:
    """The lowest and highest minor versions a specifier such as `>=3.2,<3.5` allows (unbounded above: the
    table's newest version; below: 2.0)."""
    low, high = (2, 0), newest
    for clause in filter(None, (c.strip() for c in spec.split(","))):
        match = re.match(r"(===|==|~=|>=|<=|!=|<|>)\s*(.+)", clause)
        version = parse_version(match[2]) if match else None
        if match is None or version is None:
            continue
        op = match[1]
        if op in ("==", "===", ">=", "~=", ">"):
            low = max(low, version)
        if op in ("==", "===", "<="):
            high = min(high, version)
        elif op == "<":
            exact = re.fullmatch(r"\d+(\.\d+)?(\.0+)*", match[2].strip()) is not None
            below = version if not exact else ((version[0] - 1, 99) if version[1] == 0 else (version[0], version[1] - 1))
            high = min(high, below)
        elif op == "~=":
            high = min(high, (version[0], 99) if match[2].count(".") == 1 else version)
    return low, max(low, min(high, newest))


def _requirement_lines(folder: Path) -> list[tuple[str, str]]:
    """(requirement, file name) for every requirement the project folder declares."""
    found: list[tuple[str, str]] = []
    depends_on(folder)  # a requirements file or a setup.cfg added or removed
    pyproject = folder / "pyproject.toml"
    for name in ("pyproject.toml", "setup.cfg", *(p.name for p in folder.glob("requirements*.txt"))):
        depends_on(folder / name)
    if pyproject.is_file():
        try:
            project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            project = {}
        deps = project.get("dependencies", []) if isinstance(project, dict) else []
        found += [(d, "pyproject.toml") for d in deps if isinstance(d, str)]
    setup_cfg = folder / "setup.cfg"
    if setup_cfg.is_file():
        import configparser  # here: few projects have one, and importing it costs a lint ~2 ms

        parser = configparser.ConfigParser()
        try:
            parser.read(setup_cfg, encoding="utf-8")
            found += [(line, "setup.cfg") for line in parser.get("options", "install_requires", fallback="").splitlines()]
        except (configparser.Error, UnicodeDecodeError):
            pass
    for requirements in sorted(folder.glob("requirements*.txt")):
        try:
            found += [(line, requirements.name) for line in requirements.read_text(encoding="utf-8").splitlines()]
        except (OSError, UnicodeDecodeError):
            continue
    return found


def _distribution_lines(folder: Path, top: str | None) -> list[tuple[str, str]]:
    """`Requires-Dist:` lines of the installed or unpacked distribution (`<name>-<version>.dist-info/METADATA`
    beside its package folder) that ships the top-level package `top`, else none: a site-packages folder holds
    many distributions, and only the file's own one speaks for it."""
    if top is None:
        return []
    for info in sorted(folder.glob("*.dist-info")):
        names = {info.name.partition("-")[0].lower().replace("-", "_")}
        try:
            names |= {line.strip().lower() for line in (info / "top_level.txt").read_text(encoding="utf-8").splitlines()}
        except (OSError, UnicodeDecodeError):
            pass
        if top.lower() not in names:
            continue
        depends_on(info / "METADATA")
        try:
            text = (info / "METADATA").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return []
        name = f"{info.name}/METADATA"
        return [(line.partition(":")[2], name) for line in text.splitlines() if line.startswith("Requires-Dist:")] \
            or [("", name)]  # a distribution that requires nothing: still the project's root
    return []


@lru_cache(maxsize=256)
def project_pin(folder: str) -> tuple[str, str] | None:
    """The `triton` requirement (its version spec, and the file that states it) of the nearest folder at or
    above `folder` that holds project files, or of the metadata of the distribution the folder's package
    came in."""
    path = Path(folder)
    for candidate in [path, *path.parents]:
        top = path.relative_to(candidate).parts[0] if candidate != path else None
        lines = _requirement_lines(candidate) + _distribution_lines(candidate, top)
        for line, name in lines:
            match = _REQUIREMENT.match(line)
            if match is not None:
                return match["spec"], name
        if lines or any((candidate / n).exists() for n in (*_PROJECT_FILES, ".git")):
            return None  # the project's root: it does not name triton
    return None


def target_for(path: str, configured: str | None) -> Target:
    """`target-triton` from the configuration, else the requirement of the project the file belongs to, else
    the newest version in the table."""
    newest = table().newest
    if configured:
        version = parse_version(configured)
        if version is not None:
            return Target(version, version, "from target-triton")
    if path and path != "-":
        pin = project_pin(str(Path(path).resolve().parent))
        if pin is not None:
            spec, name = pin
            low, high = version_range(spec, newest)
            return Target(low, high, f"from triton {spec.strip() or 'any version'} in {name}")
    return Target(newest, newest, "the newest in TL103's table")
