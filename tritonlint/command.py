"""The lint command, `tritonlint [check] PATHS`, without the command-line library: the console script parses a
lint's options here (`parse`) and runs it, importing click only for what this parser leaves to it (help,
the other commands, a value it would have to check or convert, a mistake to report): click's import and its
command objects cost a one-file lint more than a tenth of its instructions (callgrind). `cli.py` declares
the same options to click from `OPTIONS`, so both read one list."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tritonlint import inputs
from tritonlint.analysis.project import Project, module_name
from tritonlint.cache import cache_folder, open_cache
from tritonlint.config import (
    FAIL_LEVELS,
    ConfigError,
    Settings,
    build_settings,
    check_selectors,
    extend_rule_dirs,
    find_config,
    read_config,
    validate_target,
)
from tritonlint.diagnostics import Diagnostic
from tritonlint.discovery import is_excluded
from tritonlint.reporting import (
    COLOR_CHOICES,
    FORMATS,
    RENDERERS,
    TEXT_FORMATS,
    Style,
    color_enabled,
    fix_listing,
    has_hidden_fix,
    statistics,
    summary,
    unified_diff,
    would_fix,
)
from tritonlint.results import FileResult, FixMode
from tritonlint.ruleset import Rule, RuleFileError, load_rules
from tritonlint.runner import LazyLinter, lint_paths, make_linter
from tritonlint.source import SourceError, decode_source, split_lines

if TYPE_CHECKING:  # the linter is built where a file is linted (runner.LazyLinter): a cached run needs none
    from tritonlint.linter import FileLinter

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageFailure(Exception):
    """A problem with the user's invocation, configuration or rule files: message, then exit code 2."""


def _split(values: tuple[str, ...]) -> list[str]:
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


def load_project(config: str | None, anchor: Path, cache: bool = False,
                 cache_dir: str | None = None) -> tuple[Settings, list[Rule]]:
    """Settings and rules; with `cache`, validated rules are kept in (and read from) the cache folder."""
    try:
        path = Path(config) if config else find_config(anchor)
        data = read_config(path) if path else {}
        configured = data.get("cache-dir") if isinstance(data.get("cache-dir"), str) else None
        folder = cache_folder(path.parent if path else Path.cwd(), configured, cache_dir) if cache else None
        rules = load_rules(extend_rule_dirs(path, data), folder)
        return build_settings(path, data, rules), rules
    except (ConfigError, RuleFileError) as exc:
        raise UsageFailure(str(exc)) from None


def _anchor(paths: list[str], stdin_filename: str | None) -> Path:
    if stdin_filename:
        return Path(stdin_filename).absolute().parent
    real = [Path(p).absolute() for p in paths if p != "-"]
    if not real:
        return Path.cwd()
    common = Path(os.path.commonpath([str(p) for p in real]))
    return common if common.is_dir() else common.parent


class Option:
    """One option of the lint command: click declares it from this (cli.py), `parse` reads it."""

    __slots__ = ("flags", "name", "kind", "type", "help", "default", "envvar")

    def __init__(self, flags: tuple[str, ...], name: str, kind: str = "value", type: object = None, help: str = "",
                 default: str | None = None, envvar: str | None = None) -> None:
        self.flags = flags
        self.name = name  # the keyword `check` takes
        self.kind = kind  # "flag", "value" or "multiple" (repeatable: a tuple of the values)
        self.type = type  # None (text), a tuple of choices, "file", "folder", "jobs" (int >= 1) or "seconds"
        self.help = help
        self.default = default
        self.envvar = envvar


def _flag(flags: tuple[str, ...], help: str) -> Option:
    return Option(flags, flags[0][2:].replace("-", "_"), "flag", help=help)


OPTIONS = (
    _flag(("--fix",), "Apply safe fixes."),
    _flag(("--unsafe-fixes",), "Also offer and apply unsafe fixes."),
    _flag(("--diff",), "Print the fixes as a unified diff (for `git apply`); write nothing; exit 1 if there are any."),
    _flag(("--show-fixes",), "List the fixes applied (full and concise formats)."),
    Option(("--output-format",), "output_format", type=FORMATS, default="full"),
    Option(("-o", "--output-file"), "output_file", type="file", help="Write the report to this file."),
    _flag(("--statistics",), "Print a count per rule instead of the findings."),
    _flag(("--exit-zero",), "Exit 0 even when findings remain."),
    Option(("--fail-level",), "fail_level", type=FAIL_LEVELS,
           help="Only findings at or above this severity make the exit code 1 (default: warning; TL000 always does)."),
    Option(("--color",), "color", type=COLOR_CHOICES, default="auto",
           help="Colour the text formats: auto means on a terminal, unless NO_COLOR is set (FORCE_COLOR forces it)."),
    _flag(("--force-exclude",), "Apply the configured excludes to paths named on the command line too (as pre-commit needs)."),
    Option(("--select",), "select", "multiple", help="Rule codes, prefixes or names to enable (comma-separated)."),
    Option(("--extend-select",), "extend_select", "multiple", help="Rules to enable on top of the configured selection."),
    Option(("--ignore",), "ignore", "multiple", help="Rule codes, prefixes or names to disable."),
    Option(("--target",), "target", help='The GPU target, e.g. "sm_90" (rules such as TL003 depend on it).'),
    Option(("--config",), "config_path", type="file", help="Use this config file."),
    Option(("--stdin-filename",), "stdin_filename", help="The name of the file read from standard input."),
    Option(("--jobs", "-j"), "jobs", type="jobs", help="Worker processes (default: one per CPU)."),
    Option(("--file-timeout",), "file_timeout", type="seconds",
           help="Seconds one file's analysis may take; past it the file is an internal error (default 60; 0: none)."),
    _flag(("--quiet", "-q"), "Print findings only, no summary."),
    _flag(("--no-cache",), "Neither read nor write the cache."),
    Option(("--cache-dir",), "cache_dir", type="folder", envvar="TRITONLINT_CACHE_DIR",
           help="Where the cache lives (default: .tritonlint_cache beside the configuration)."),
    _flag(("--show-settings",), "Print the resolved configuration and the file it came from."),
    _flag(("--show-files",), "List the files that would be linted."),
    _flag(("--add-noqa",), "Add a `# noqa: TLxxx` comment to each line with a finding."),
    Option(("--baseline",), "baseline_path", type="file",
           help="Report only findings not recorded in this baseline file (config `baseline`)."),
    Option(("--write-baseline",), "write_baseline", type="file",
           help="Record the current findings in this baseline file and exit 0."),
)
_BY_FLAG = {flag: option for option in OPTIONS for flag in option.flags}
# The other words that start a command line click must read: the group's own options and its commands.
_CLICK_ONLY = frozenset({"--help", "-h", "--version", "clean", "rule", "rules", "server", "test-rules"})


def parse(args: list[str]) -> dict[str, object] | None:
    """`check`'s keyword arguments as click would pass them for this command line, or None where click must
    read it: help, another command, an unknown option, a value to check that this parser does not, a mistake."""
    if args[:1] == ["check"]:
        args = args[1:]
    elif args[:1] and args[0] in _CLICK_ONLY:
        return None
    values: dict[str, object] = {option.name: () if option.kind == "multiple" else False if option.kind == "flag"
                                 else option.default for option in OPTIONS}
    paths: list[str] = []
    at = 0
    while at < len(args):
        word = args[at]
        at += 1
        if word == "-" or not word.startswith("-"):
            paths.append(word)
            continue
        name, equals, given = word.partition("=") if word.startswith("--") else (word, "", "")
        option = _BY_FLAG.get(name)
        if option is None:
            return None  # --help, --, an unknown or combined short option: click says what it is
        if option.kind == "flag":
            if equals:
                return None
            values[option.name] = True
            continue
        if not equals:
            if at == len(args):
                return None
            given = args[at]
            at += 1
        value = _value(option, given)
        if value is None:
            return None
        values[option.name] = (*values[option.name], value) if option.kind == "multiple" else value  # type: ignore[misc]
    for option in OPTIONS:
        if option.envvar and values[option.name] is None and os.environ.get(option.envvar):
            values[option.name] = _value(option, os.environ[option.envvar])
            if values[option.name] is None:
                return None
    values["paths"] = tuple(paths)
    return values


def _value(option: Option, given: str) -> object:
    """The value as click's type gives it, or None where click must judge it."""
    kind = option.type
    if isinstance(kind, tuple):
        return given if given in kind else None
    if kind == "jobs":
        return int(given) if given.isascii() and given.isdigit() and int(given) >= 1 else None
    if kind in ("file", "folder"):
        # click.Path: a path that exists must be of the kind named and readable
        try:
            mode = os.stat(given).st_mode
        except (OSError, ValueError):
            return given if given else None
        wrong = (mode & 0o170000) == (0o040000 if kind == "file" else 0o100000)
        return None if wrong or not os.access(given, os.R_OK) else given
    if kind == "seconds":
        return None
    return given


def echo(text: str, err: bool = False, nl: bool = True) -> None:
    """click.echo for text: written with its newline, then flushed; escape sequences dropped off a terminal."""
    stream = sys.stderr if err else sys.stdout
    if "\033" in text and not stream.isatty():
        import re

        text = re.sub(r"\033\[[;?0-9]*[a-zA-Z]", "", text)
    stream.write(text + "\n" if nl else text)
    stream.flush()


def guard(run: Callable[[], None]) -> None:
    """Run a command as the console script does: a usage problem is one `error:` line and exit code 2, never
    a traceback; ^C exits 130, a closed pipe 0."""
    try:
        run()
    except UsageFailure as exc:
        echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    except KeyboardInterrupt:
        sys.exit(130)
    except SystemExit:
        raise
    except BrokenPipeError:
        sys.exit(EXIT_CLEAN)
    except BaseException as exc:  # noqa: BLE001 - never a traceback for the user
        if os.environ.get("TRITONLINT_DEBUG"):
            import traceback

            traceback.print_exc()
        echo(f"error: internal error: {type(exc).__name__}: {exc} (set TRITONLINT_DEBUG=1 for details)", err=True)
        sys.exit(EXIT_ERROR)


def main(args: list[str]) -> bool:
    """Run the lint this command line asks for, where `parse` can read it; False where click must (cli.main)."""
    values = parse(args)
    if values is None:
        return False
    for stream in (sys.stdout, sys.stderr):  # a message with a character the locale cannot encode is no crash
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    guard(lambda: check(**values))  # type: ignore[arg-type]
    return True

def check(paths: tuple[str, ...], fix: bool, unsafe_fixes: bool, diff: bool, show_fixes: bool, output_format: str,
          output_file: str | None, statistics: bool, exit_zero: bool, color: str, force_exclude: bool,
          select: tuple[str, ...], extend_select: tuple[str, ...], ignore: tuple[str, ...], target: str | None,
          config_path: str | None, stdin_filename: str | None, jobs: int | None, file_timeout: float | None, quiet: bool, no_cache: bool,
          cache_dir: str | None, fail_level: str | None, show_settings: bool,
          show_files: bool, add_noqa: bool, baseline_path: str | None,
          write_baseline: str | None) -> None:
    """Lint PATHS (default: the current folder); `-` reads one file from standard input."""
    path_list = list(paths) or ["."]
    if diff and (show_fixes or statistics):
        raise UsageFailure(f"--diff cannot be combined with {'--show-fixes' if show_fixes else '--statistics'}")
    if statistics and output_format not in (*TEXT_FORMATS, "json"):
        raise UsageFailure(f"--statistics prints text or json, not {output_format}")
    if add_noqa and (fix or diff or path_list == ["-"]):
        raise UsageFailure("--add-noqa cannot be combined with --fix, --diff or standard input")
    settings, rules = load_project(config_path, _anchor(path_list, stdin_filename), not no_cache, cache_dir)
    _apply_flags(settings, rules, select, extend_select, ignore, target)
    if file_timeout is not None:
        if file_timeout != file_timeout:  # nan passes click's range check
            raise UsageFailure("--file-timeout: nan is not a number of seconds")
        settings.file_timeout = file_timeout
    settings.fail_level = fail_level or settings.fail_level
    if show_settings:
        echo(_settings_text(settings, rules), nl=False)
        sys.exit(EXIT_CLEAN)
    if show_files:
        from tritonlint.discovery import discover

        found = discover([Path(p) for p in path_list if p != "-"], settings.root, settings.excludes,
                         settings.respect_gitignore)
        echo("".join(f"{path.as_posix()}\n" for path in sorted(found.files)), nl=False)
        sys.exit(EXIT_CLEAN)
    mode = FixMode.DIFF if diff else FixMode.FIX if fix else FixMode.NONE
    stdin_texts: dict[str, list[str]] = {}
    if path_list == ["-"]:
        excluded = force_exclude and stdin_filename is not None and is_excluded(
            Path(stdin_filename), settings.root, settings.excludes)
        results, stdin_texts = _lint_stdin(make_linter(rules, settings, mode, unsafe_fixes), stdin_filename, excluded)
        problems: list[tuple[str, str]] = []
        cache = None
    else:
        if "-" in path_list:
            raise UsageFailure("`-` (standard input) cannot be combined with other paths")
        missing = [p for p in path_list if not os.path.lexists(p)]
        if missing:  # a typo in CI must not read as "All checks passed!"
            raise UsageFailure(f"{missing[0]}: no such file or directory")
        targets = [Path(p) for p in path_list]
        if force_exclude:
            targets = [p for p in targets if not is_excluded(p, settings.root, settings.excludes)]
        cache = None if no_cache else open_cache(cache_folder(settings.root, settings.cache_dir, cache_dir), settings,
                                                 rules, unsafe_fixes)
        run = lint_paths(targets, settings, LazyLinter(rules, settings, mode, unsafe_fixes), jobs, cache)
        results, problems = run.files, run.problems
        if add_noqa or write_baseline:
            sys.exit(_adopt(results, add_noqa, write_baseline))
        baseline = Path(baseline_path) if baseline_path else settings.baseline
        if baseline is not None:
            inputs.depends_on(baseline)
            _drop_recorded(results, baseline)
    exit_code = _report(results, problems, rules, settings, mode, output_format, output_file, statistics,
                        show_fixes, unsafe_fixes, quiet, color, stdin_texts,
                        report_to_stderr=path_list == ["-"] and mode is FixMode.FIX)
    if cache is not None and mode is FixMode.NONE and not output_file and not problems \
            and not any(r.skipped or r.refused or r.internal_error for r in results):
        inputs.allow(str(cache.folder), [str(cache.path)])  # it printed its report and nothing else
    sys.exit(EXIT_CLEAN if exit_zero and exit_code == EXIT_FINDINGS else exit_code)


def _settings_text(settings: Settings, rules: list[Rule]) -> str:
    """The resolved settings, one `key = value` line each (TOML values), under the file they came from."""
    values = {
        "select": settings.select or ["ALL"], "extend-select": settings.extend_select, "ignore": settings.ignore,
        "per-file-ignores": settings.per_file_ignores, "exclude": settings.exclude,
        "extend-exclude": settings.extend_exclude, "extend-rules": [str(p) for p in settings.extend_rules],
        "target": settings.target, "respect-gitignore": settings.respect_gitignore,
        "cache-dir": str(settings.cache_dir) if settings.cache_dir else None, "fail-level": settings.fail_level,
        "baseline": str(settings.baseline) if settings.baseline else None,
        **{name: settings.options.get(name, spec.default) for rule in rules for name, spec in rule.options.items()},
    }
    enabled = ", ".join(r.id for r in settings.enabled(rules))
    lines = [f"# configuration file: {settings.config_path or 'none (defaults)'}",
             f"# root: {settings.root}", f"# enabled rules: {enabled}"]
    lines += [f"{key} = {_toml(value)}" for key, value in values.items() if value is not None]
    return "\n".join(lines) + "\n"


def _toml(value: object) -> str:
    import json

    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def _adopt(results: list[FileResult], add_noqa: bool, baseline: str | None) -> int:
    """--add-noqa and --write-baseline: record the findings there are, rather than report them."""
    from tritonlint.adoption import add_noqa as noqa_text
    from tritonlint.adoption import write_baseline
    from tritonlint.fixes import WriteRefused, write_atomic
    from tritonlint.source import read_source

    if baseline:
        diagnostics = [d for r in results for d in r.diagnostics]
        count = write_baseline(Path(baseline), diagnostics, _file_texts(diagnostics))
        echo(f"Recorded {count} finding{'s' * (count != 1)} in {baseline}", err=True)
        return EXIT_CLEAN
    added = 0
    for result in results:
        if not result.diagnostics:
            continue
        if result.path.endswith(".ipynb"):
            echo(f"warning: {result.path}: --add-noqa does not edit notebooks yet, skipped", err=True)
            continue
        path = Path(result.path)
        try:
            source = read_source(path)
            text, count = noqa_text(source.text, result.diagnostics)
            if count:
                write_atomic(path, source, text)
                added += count
        except (OSError, SourceError, UnicodeEncodeError, WriteRefused) as exc:
            echo(f"warning: {result.path}: noqa comments not written: {exc}", err=True)
    echo(f"Added {added} noqa comment{'s' * (added != 1)}.", err=True)
    return EXIT_CLEAN


def _file_texts(diagnostics: list[Diagnostic]) -> dict[str, str | None]:
    texts: dict[str, str | None] = {}
    for name in {d.filename for d in diagnostics}:
        try:
            texts[name] = decode_source(Path(name).read_bytes()).text
        except (OSError, SourceError):
            texts[name] = None
    return texts


def _drop_recorded(results: list[FileResult], baseline: Path) -> None:
    from tritonlint.adoption import BaselineError, new_findings, read_baseline

    try:
        recorded = read_baseline(baseline)
    except BaselineError as exc:
        raise UsageFailure(str(exc)) from None
    for result in results:
        if result.diagnostics:
            result.diagnostics = new_findings(result.diagnostics, recorded, _file_texts(result.diagnostics))


def _apply_flags(settings: Settings, rules: list[Rule], select: tuple[str, ...], extend_select: tuple[str, ...],
                 ignore: tuple[str, ...], target: str | None) -> None:
    if select:
        settings.select = _split(select)
    settings.extend_select += _split(extend_select)
    settings.ignore += _split(ignore)
    if target:
        try:
            settings.target = validate_target(target, "--target")
        except ConfigError as exc:
            raise UsageFailure(str(exc).replace("--target: `target`", "--target")) from None
    try:
        check_selectors(settings, rules, "command line")
    except ConfigError as exc:
        raise UsageFailure(str(exc)) from None


def _lint_stdin(linter: FileLinter, stdin_filename: str | None, excluded: bool
                ) -> tuple[list[FileResult], dict[str, list[str]]]:
    """Lint standard input; returns the results and the linted text, for the code frames. Under --fix the
    fixed text goes to standard output and the report to standard error, as with ruff; input that is
    excluded or cannot be decoded passes through unchanged, so an editor piping a buffer loses nothing."""
    display = stdin_filename or "-"
    data = sys.stdin.buffer.read()
    fixing = linter.mode is FixMode.FIX
    if excluded:
        if fixing:
            _write_stdout(data)
        return [], {}
    try:
        source = decode_source(data)
    except SourceError as exc:
        if fixing:
            _write_stdout(data)
        return [FileResult(display, skipped=str(exc))], {}
    module = module_name(Path(stdin_filename).absolute()) if stdin_filename else "stdin"
    if not fixing:
        result = linter.lint_source(source, None, display, module, Project())
        return [result], {display: split_lines(source.text)}
    linter.mode = FixMode.DIFF  # never write the named file: the fixed text goes to standard output
    try:
        result = linter.lint_source(source, None, display, module, Project())
    finally:
        linter.mode = FixMode.FIX
    text = result.fixed if result.fixed is not None else source.text
    try:
        _write_stdout(source.encode(text))
    except UnicodeEncodeError as exc:  # as for a file (linter.py): the input stays as it was
        _write_stdout(data)
        result.skipped = f"fixes not written: {exc}"
    result.original = result.fixed = None
    return [result], {display: split_lines(text)}


def _write_stdout(data: bytes) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _report(results: list[FileResult], problems: list[tuple[str, str]], rules: list[Rule], settings: Settings,
            mode: FixMode, output_format: str, output_file: str | None, show_statistics: bool, show_fixes: bool,
            unsafe: bool, quiet: bool, color: str, texts: dict[str, list[str]], report_to_stderr: bool) -> int:
    diagnostics = sorted((d for r in results for d in r.diagnostics), key=lambda d: d.sort_key)
    for path, reason in problems:
        echo(f"warning: {path}: {reason}", err=True)
    for result in results:
        if result.skipped:
            echo(f"warning: {result.path}: {result.skipped}", err=True)
        for refused in result.refused:
            echo(f"warning: {refused}", err=True)
    internal = [r.internal_error for r in results if r.internal_error]
    for message in internal:
        echo(f"error: {message}", err=True)
    failed = EXIT_ERROR if internal else None

    if output_file:
        try:
            Path(output_file).parent.mkdir(parents=True, exist_ok=True)
            # file names that are not valid UTF-8 come through as they are, as on standard output
            stream = open(output_file, "w", encoding="utf-8", errors="surrogateescape")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise UsageFailure(f"cannot write the output file {output_file}: {exc.strerror or exc}") from None
    else:
        stream = sys.stderr if report_to_stderr else sys.stdout  # type: ignore[assignment]
    style = Style(color_enabled(color, stream.isatty()))

    def out(text: str) -> None:
        stream.write(text + "\n")  # not click.echo: it strips colour from a pipe, which FORCE_COLOR forbids

    try:
        if mode is FixMode.DIFF:
            changed = [r for r in results if r.fixed is not None and r.original is not None]
            for result in changed:
                stream.write(unified_diff(result.path, result.original, result.fixed))  # type: ignore[arg-type]
            hidden = sum(1 for d in diagnostics if has_hidden_fix(d, unsafe))
            echo(would_fix(sum(r.fixes_applied for r in changed), hidden), err=True)
            return failed or (EXIT_FINDINGS if changed else EXIT_CLEAN)
        fixed = sum(r.fixes_applied for r in results)
        text_format = output_format in TEXT_FORMATS
        if show_statistics and not text_format:
            out(statistics(diagnostics, unsafe, as_json=True))
        elif show_statistics:
            if diagnostics:
                out(statistics(diagnostics, unsafe))
        elif text_format:
            rendered = RENDERERS[output_format](diagnostics, style=style, sources=_source_lines(texts), unsafe=unsafe)
            if rendered:
                out(rendered + ("\n" if output_format == "full" else ""))
        else:
            rendered = RENDERERS[output_format](diagnostics, rules=settings.enabled(rules), unsafe=unsafe)
            if rendered or output_format != "github":
                out(rendered)
        if text_format:
            listing = fix_listing([(r.path, r.fixed_codes) for r in results], {r.id: r.name for r in rules})
            if show_fixes and listing:
                out(f"\n{listing}\n")
            if not quiet:
                out(summary(diagnostics, fixed, unsafe))
    finally:
        if output_file:
            stream.close()
        else:
            stream.flush()
    return failed or (EXIT_FINDINGS if any(settings.fails(d.severity, d.code) for d in diagnostics) else EXIT_CLEAN)


def _source_lines(texts: dict[str, list[str]]) -> Callable[[str], list[str] | None]:
    """Source lines for code frames: the linted text where the CLI holds it (standard input), else the
    file as it is on disk now (after --fix, the fixed text the findings refer to)."""
    cache: dict[str, list[str] | None] = dict(texts)

    def lines(filename: str) -> list[str] | None:
        if filename not in cache:
            try:
                source = Path(filename).read_bytes()
                cache[filename] = split_lines(decode_source(source).text)
            except (OSError, SourceError):
                cache[filename] = None
        return cache[filename]

    return lines
