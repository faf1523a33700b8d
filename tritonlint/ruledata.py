"""The data tables rules read (rules/data/*.yaml, such as TL103's Triton API versions): parsed with the rule
files and kept in the compiled rule set in the cache (ruleset.load_rules), so that a run that lints a file
with the rule set from the cache parses no YAML (importing PyYAML alone costs a tenth of such a run)."""

from __future__ import annotations

import os
from typing import Any

from tritonlint import inputs

_tables: dict[str, Any] | None = None  # file name -> parsed table, as the compiled rule set holds them


def data_dir() -> str:
    """rules/data ships inside the wheel as tritonlint/_rules/data; a source checkout keeps it in rules/data."""
    here = os.path.dirname(os.path.abspath(__file__))
    packaged = os.path.join(here, "_rules", "data")
    return packaged if os.path.isdir(packaged) else os.path.join(os.path.dirname(here), "rules", "data")


def data_files() -> list[str]:
    folder = data_dir()
    inputs.depends_on(folder)
    try:
        files = sorted(os.path.join(folder, name) for name in os.listdir(folder) if name.endswith((".yaml", ".yml")))
    except OSError:
        return []
    for path in files:
        inputs.depends_on(path)
    return files


def parse() -> dict[str, Any]:
    """Every table, parsed from its file."""
    import yaml

    # libyaml where PyYAML has it: the pure-Python parser runs ~10x the instructions on these tables (callgrind)
    SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # noqa: N806 - the name says what it is
    tables = {}
    for path in data_files():
        with open(path, encoding="utf-8") as stream:
            tables[os.path.basename(path)] = yaml.load(stream.read(), Loader=SafeLoader)
    return tables


def provide(tables: dict[str, Any]) -> None:
    """The tables of the rule set in use (from the cache, or just parsed)."""
    global _tables
    _tables = tables


def table(name: str) -> Any:
    """The parsed table `name` (its file name in rules/data)."""
    if _tables is None or name not in _tables:
        provide(parse())
    assert _tables is not None
    return _tables[name]
