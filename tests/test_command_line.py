"""The lint's own option parser (command.parse, used by the console script so that a lint need not import click)
reads a command line exactly as click does, or leaves it to click."""

from __future__ import annotations

import pytest

from tritonlint.cli import cli
from tritonlint.command import _CLICK_ONLY, OPTIONS, parse

READ_HERE = [
    [],
    ["k.py"],
    ["check", "k.py", "--fix"],
    ["k.py", "--select", "TL001", "--select=TL002,TL003", "--ignore", "TL1", "--extend-select", "TL2"],
    ["-q", "--output-format", "json", "a.py", "b.py", "--exit-zero"],
    ["--color=always", "--fail-level", "info", "-"],
    ["-j", "2", "--no-cache", ".", "--jobs=3"],
    ["-o", "out.txt", "k.py", "--statistics", "--show-fixes", "--unsafe-fixes", "--diff"],
    ["--config", "cfg.toml", "--cache-dir", "somewhere", "--force-exclude", "--quiet"],
    ["--target", "sm_90", "--stdin-filename", "x.py", "-"],
    ["--baseline", "b.json", "--write-baseline", "w.json", "--add-noqa", "--show-settings", "--show-files"],
    ["--select", "-weird", "k.py"],  # click takes the next word as the value, whatever it looks like
    ["--output-format", "concise", "--output-format", "full"],  # the last one wins
    ["check", "check"],  # a path named check
]
LEFT_TO_CLICK = [
    ["--help"], ["-h"], ["--version"], ["k.py", "--help"], ["rules"], ["rule", "TL001"], ["clean"], ["server"],
    ["test-rules"], ["-qj2"], ["-ofile"], ["--output-format", "xml"], ["--fix=1"], ["--jobs", "0"], ["-j", "x"],
    ["--file-timeout", "5"], ["--", "-x.py"], ["--bogus"], ["-o"], ["--select"], ["--output-file", "folder"],
    ["--config", "folder"], ["--cache-dir", "file.txt"], ["--color", "ALWAYS"],
]


def _click_values(args: list[str]) -> dict[str, object]:
    command = cli.commands["check"]
    words = args[1:] if args[:1] == ["check"] else args
    return dict(command.make_context("check", list(words)).params)


@pytest.mark.parametrize("args", READ_HERE, ids=" ".join)
@pytest.mark.parametrize("environment", [None, "from-env"])
def test_a_command_line_read_here_gets_what_click_gives(args, environment, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if environment:
        monkeypatch.setenv("TRITONLINT_CACHE_DIR", environment)
    else:
        monkeypatch.delenv("TRITONLINT_CACHE_DIR", raising=False)
    values = parse(args)
    assert values is not None
    assert values == _click_values(args)


@pytest.mark.parametrize("args", LEFT_TO_CLICK, ids=" ".join)
def test_what_click_must_judge_is_left_to_it(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    (tmp_path / "file.txt").write_text("")
    assert parse(args) is None


def test_a_cache_dir_from_the_environment_that_click_would_refuse_is_left_to_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file.txt").write_text("")
    monkeypatch.setenv("TRITONLINT_CACHE_DIR", "file.txt")
    assert parse(["k.py"]) is None


def test_every_other_command_and_every_option_is_known_here():
    assert set(cli.commands) - {"check"} <= _CLICK_ONLY
    declared = {param.name for param in cli.commands["check"].params}
    assert declared == {option.name for option in OPTIONS} | {"paths"}
