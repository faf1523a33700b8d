"""Settings: `[tool.tritonlint]` in pyproject.toml, or a tritonlint.toml, merged with command-line flags.

Unknown keys and wrong types are errors that name the file and the key (exit code 2), never silence.
Rule options (such as `static-range-max-trip`) are declared by the rule files themselves.
"""

from __future__ import annotations

import fnmatch
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tritonlint import inputs
from tritonlint.inputs import CONFIG_FILES
from tritonlint.discovery import DEFAULT_EXCLUDE
from tritonlint.ruleset import Rule
from tritonlint.timelimit import DEFAULT_SECONDS, MAX_SECONDS

_LIST_KEYS = ("select", "extend-select", "ignore", "exclude", "extend-exclude", "extend-rules")
_GENERAL_KEYS = {*_LIST_KEYS, "per-file-ignores", "target", "respect-gitignore", "cache-dir", "fail-level", "baseline",
                 "file-timeout"}
FAIL_LEVELS = ("info", "warning", "error")


class ConfigError(Exception):
    def __init__(self, path: Path | str, key: str, problem: str) -> None:
        super().__init__(f"{path}: `{key}`: {problem}")


@dataclass
class Settings:
    """The resolved configuration of a run (file, command line and defaults)."""
    root: Path = field(default_factory=Path.cwd)
    config_path: Path | None = None
    select: list[str] | None = None  # None: every rule
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: list[str] = field(default_factory=list)
    extend_rules: list[Path] = field(default_factory=list)
    target: str | None = None
    respect_gitignore: bool = True
    cache_dir: Path | None = None
    fail_level: str = "warning"  # findings below it are printed but do not fail the run
    baseline: Path | None = None  # findings recorded there are not reported
    file_timeout: float = DEFAULT_SECONDS  # seconds one file's analysis may take; 0: no limit
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def excludes(self) -> list[str]:
        return self.exclude + self.extend_exclude

    def enabled(self, rules: list[Rule]) -> list[Rule]:
        return [r for r in rules if self.code_enabled(r.id, r.name)]

    def code_enabled(self, code: str, name: str) -> bool:
        chosen = _selected(code, name, self.select or ["ALL"]) or _selected(code, name, self.extend_select)
        return chosen and not _selected(code, name, self.ignore)

    def rules_for(self, rules: list[Rule], relative_path: str) -> list[Rule]:
        """The enabled rules minus the per-file-ignores whose pattern matches the path."""
        ignored = self._file_ignores(relative_path)
        return [r for r in rules if not _selected(r.id, r.name, ignored)] if ignored else rules

    def ignored_in(self, relative_path: str, code: str, name: str) -> bool:
        return _selected(code, name, self._file_ignores(relative_path))

    def _file_ignores(self, relative_path: str) -> list[str]:
        return [
            code for pattern, codes in self.per_file_ignores.items()
            if fnmatch.fnmatch(relative_path, pattern) or fnmatch.fnmatch(Path(relative_path).name, pattern)
            for code in codes
        ]

    def fails(self, severity: str, code: str) -> bool:
        """Whether a finding counts towards exit code 1: at or above the fail level; TL000 always does."""
        return code == "TL000" or FAIL_LEVELS.index(severity) >= FAIL_LEVELS.index(self.fail_level)

    def target_sm(self) -> int | None:
        """The configured target as an integer compute capability (sm_90 -> 90)."""
        if not self.target:
            return None
        return int(self.target.lower().removeprefix("sm_").removesuffix("a"))


def _selected(code: str, name: str, selectors: list[str]) -> bool:
    return any(s == "ALL" or code.startswith(s.upper()) or s == name for s in selectors)


def find_config(start: Path) -> Path | None:
    folder = start if start.is_dir() else start.parent
    for candidate in [folder, *folder.parents]:
        for name in CONFIG_FILES:
            path = candidate / name
            inputs.depends_on(path)
            if path.is_file() and (name != "pyproject.toml" or _has_tool_table(path)):
                return path
    return None


def _toml() -> Any:
    """The TOML parser, imported only where a configuration file is read."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib


def _has_tool_table(path: Path) -> bool:
    tomllib = _toml()
    try:
        text = path.read_text(encoding="utf-8", errors="replace")  # read_config names a decoding error
    except OSError as exc:
        raise ConfigError(path, "<file>", f"cannot read: {exc.strerror or exc}") from None
    try:
        tool = tomllib.loads(text).get("tool")
    except tomllib.TOMLDecodeError:
        return "[tool.tritonlint" in text  # someone else's broken file, unless it holds our table
    return isinstance(tool, dict) and "tritonlint" in tool


def read_config(path: Path) -> dict[str, Any]:
    tomllib = _toml()
    inputs.depends_on(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(path, "<file>", f"cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(path, "<toml>", f"not valid TOML: {exc}") from None
    if path.name == "pyproject.toml" or "tool" in data:  # tritonlint.toml: top-level keys, or the same table
        tool = data.get("tool", {})
        if not isinstance(tool, dict):
            raise ConfigError(path, "tool", "must be a table")
        if path.name != "pyproject.toml" and (set(data) - {"tool"} or set(tool) - {"tritonlint"}):
            extra = sorted(set(data) - {"tool"}) or [f"tool.{k}" for k in sorted(set(tool) - {"tritonlint"})]
            raise ConfigError(path, extra[0], "put the settings either at the top level or in [tool.tritonlint], not both")
        data = tool.get("tritonlint", {})
    if not isinstance(data, dict):
        raise ConfigError(path, "tool.tritonlint", "must be a table")
    return data


def extend_rule_dirs(path: Path | None, data: dict[str, Any]) -> list[Path]:
    """The `extend-rules` folders, resolved against the config file's folder (needed before rules load)."""
    raw = data.get("extend-rules", [])
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise ConfigError(path or "<config>", "extend-rules", "must be a list of folder paths")
    base = path.parent if path else Path.cwd()
    return [(base / item).resolve() for item in raw]


def build_settings(path: Path | None, data: dict[str, Any], rules: list[Rule]) -> Settings:
    where = path or "<config>"
    options = {name: spec for rule in rules for name, spec in rule.options.items()}
    for key in data:
        if key not in _GENERAL_KEYS and key not in options:
            known = ", ".join(sorted(_GENERAL_KEYS | set(options)))
            raise ConfigError(where, key, f"unknown key (known keys: {known})")
    settings = Settings(root=path.parent if path else Path.cwd(), config_path=path)
    for key in _LIST_KEYS:
        if key in data:
            value = data[key]
            if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
                raise ConfigError(where, key, "must be a list of strings")
    if "select" in data:
        settings.select = list(data["select"])
    settings.extend_select = list(data.get("extend-select", []))
    settings.ignore = list(data.get("ignore", []))
    if "exclude" in data:
        settings.exclude = list(data["exclude"])
    settings.extend_exclude = list(data.get("extend-exclude", []))
    settings.extend_rules = extend_rule_dirs(path, data)
    pfi = data.get("per-file-ignores", {})
    if not isinstance(pfi, dict) or not all(
        isinstance(v, list) and all(isinstance(c, str) for c in v) for v in pfi.values()
    ):
        raise ConfigError(where, "per-file-ignores", "must be a table of glob = [codes]")
    settings.per_file_ignores = {str(k): list(v) for k, v in pfi.items()}
    if "target" in data:
        settings.target = validate_target(data["target"], where)
    if "respect-gitignore" in data:
        if not isinstance(data["respect-gitignore"], bool):
            raise ConfigError(where, "respect-gitignore", "must be true or false")
        settings.respect_gitignore = data["respect-gitignore"]
    if "fail-level" in data:
        if data["fail-level"] not in FAIL_LEVELS:
            raise ConfigError(where, "fail-level", f"must be one of {', '.join(FAIL_LEVELS)}")
        settings.fail_level = data["fail-level"]
    if "baseline" in data:
        if not isinstance(data["baseline"], str):
            raise ConfigError(where, "baseline", "must be a path")
        settings.baseline = settings.root / data["baseline"]
    if "cache-dir" in data:
        if not isinstance(data["cache-dir"], str):
            raise ConfigError(where, "cache-dir", "must be a path")
        settings.cache_dir = settings.root / data["cache-dir"]
    if "file-timeout" in data:
        value = data["file-timeout"]
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= MAX_SECONDS:
            raise ConfigError(where, "file-timeout", f"must be a number of seconds from 0 (no limit) to {MAX_SECONDS:g}")
        settings.file_timeout = float(value)
    for key, spec in options.items():
        if key in data:
            value = data[key]
            expected = {"int": int, "str": str, "bool": bool, "list": list}[spec.type]
            if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
                raise ConfigError(where, key, f"must be a {spec.type}")
            settings.options[key] = value
    if settings.options.get("target-triton") and not re.fullmatch(r"\d+\.\d+(\.\d+)?", settings.options["target-triton"]):
        raise ConfigError(where, "target-triton", f"{settings.options['target-triton']!r} is not a Triton version like \"3.9\"")
    check_selectors(settings, rules, where)
    return settings


def validate_target(value: Any, where: Path | str) -> str:
    text = str(value).strip().lower() if isinstance(value, (str, int)) else ""
    digits = text.removeprefix("sm_").removesuffix("a")
    if not digits.isdigit():
        raise ConfigError(where, "target", f"{value!r} is not a CUDA target like \"sm_90\"")
    return f"sm_{digits}" + ("a" if text.endswith("a") else "")


def check_selectors(settings: Settings, rules: list[Rule], where: Path | str) -> None:
    """A selector that names no rule is a typo the user wants to hear about."""
    for key, selectors in (("select", settings.select or []), ("extend-select", settings.extend_select),
                           ("ignore", settings.ignore),
                           *((f"per-file-ignores.{k}", v) for k, v in settings.per_file_ignores.items())):
        for selector in selectors:
            known = [(rule.id, rule.name) for rule in rules] + [("TL000", "syntax-error"), ("TL900", "unused-suppression")]
            if selector != "ALL" and not any(_selected(code, name, [selector]) for code, name in known):
                raise ConfigError(where, key, f"{selector!r} matches no rule code, prefix or name")
