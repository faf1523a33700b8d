"""The command line: `tritonlint [PATHS]`, `tritonlint check`, `tritonlint rule ID`, `tritonlint rules`."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tritonlint import __version__, inputs
from tritonlint.analysis.project import Project, module_name
from tritonlint.builtin import BUILTIN_RULES
from tritonlint.cache import cache_folder, clean, open_cache
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
from tritonlint.timelimit import MAX_SECONDS

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


class DefaultToCheck(click.Group):
    """`tritonlint PATHS` means `tritonlint check PATHS`; subcommands win when the first word names one."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")):
            args = ["check", *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultToCheck, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="tritonlint", message="%(prog)s %(version)s")
def cli() -> None:
    """A static linter for Triton GPU kernels. `tritonlint PATHS` lints; see `tritonlint check --help`."""


@cli.command()
@click.argument("paths", nargs=-1)
@click.option("--fix", is_flag=True, help="Apply safe fixes.")
@click.option("--unsafe-fixes", is_flag=True, help="Also offer and apply unsafe fixes.")
@click.option("--diff", is_flag=True,
              help="Print the fixes as a unified diff (for `git apply`); write nothing; exit 1 if there are any.")
@click.option("--show-fixes", is_flag=True, help="List the fixes applied (full and concise formats).")
@click.option("--output-format", type=click.Choice(FORMATS), default="full", show_default=True)
@click.option("-o", "--output-file", type=click.Path(dir_okay=False), help="Write the report to this file.")
@click.option("--statistics", is_flag=True, help="Print a count per rule instead of the findings.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("--fail-level", type=click.Choice(FAIL_LEVELS),
              help="Only findings at or above this severity make the exit code 1 (default: warning; TL000 always does).")
@click.option("--color", type=click.Choice(COLOR_CHOICES), default="auto", show_default=True,
              help="Colour the text formats: auto means on a terminal, unless NO_COLOR is set (FORCE_COLOR forces it).")
@click.option("--force-exclude", is_flag=True,
              help="Apply the configured excludes to paths named on the command line too (as pre-commit needs).")
@click.option("--select", multiple=True, help="Rule codes, prefixes or names to enable (comma-separated).")
@click.option("--extend-select", multiple=True, help="Rules to enable on top of the configured selection.")
@click.option("--ignore", multiple=True, help="Rule codes, prefixes or names to disable.")
@click.option("--target", help='The GPU target, e.g. "sm_90" (rules such as TL003 depend on it).')
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Use this config file.")
@click.option("--stdin-filename", help="The name of the file read from standard input.")
@click.option("--jobs", "-j", type=click.IntRange(1), help="Worker processes (default: one per CPU).")
@click.option("--file-timeout", type=click.FloatRange(0, MAX_SECONDS), metavar="SECONDS",
              help="Seconds one file's analysis may take; past it the file is an internal error (default 60; 0: none).")
@click.option("--quiet", "-q", is_flag=True, help="Print findings only, no summary.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the cache.")
@click.option("--cache-dir", envvar="TRITONLINT_CACHE_DIR", type=click.Path(file_okay=False),
              help="Where the cache lives (default: .tritonlint_cache beside the configuration).")
@click.option("--show-settings", is_flag=True, help="Print the resolved configuration and the file it came from.")
@click.option("--show-files", is_flag=True, help="List the files that would be linted.")
@click.option("--add-noqa", is_flag=True, help="Add a `# noqa: TLxxx` comment to each line with a finding.")
@click.option("--baseline", "baseline_path", type=click.Path(dir_okay=False),
              help="Report only findings not recorded in this baseline file (config `baseline`).")
@click.option("--write-baseline", type=click.Path(dir_okay=False),
              help="Record the current findings in this baseline file and exit 0.")
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
        click.echo(_settings_text(settings, rules), nl=False)
        sys.exit(EXIT_CLEAN)
    if show_files:
        from tritonlint.discovery import discover

        found = discover([Path(p) for p in path_list if p != "-"], settings.root, settings.excludes,
                         settings.respect_gitignore)
        click.echo("".join(f"{path.as_posix()}\n" for path in sorted(found.files)), nl=False)
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
        click.echo(f"Recorded {count} finding{'s' * (count != 1)} in {baseline}", err=True)
        return EXIT_CLEAN
    added = 0
    for result in results:
        if not result.diagnostics:
            continue
        if result.path.endswith(".ipynb"):
            click.echo(f"warning: {result.path}: --add-noqa does not edit notebooks yet, skipped", err=True)
            continue
        path = Path(result.path)
        try:
            source = read_source(path)
            text, count = noqa_text(source.text, result.diagnostics)
            if count:
                write_atomic(path, source, text)
                added += count
        except (OSError, SourceError, UnicodeEncodeError, WriteRefused) as exc:
            click.echo(f"warning: {result.path}: noqa comments not written: {exc}", err=True)
    click.echo(f"Added {added} noqa comment{'s' * (added != 1)}.", err=True)
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
        click.echo(f"warning: {path}: {reason}", err=True)
    for result in results:
        if result.skipped:
            click.echo(f"warning: {result.path}: {result.skipped}", err=True)
        for refused in result.refused:
            click.echo(f"warning: {refused}", err=True)
    internal = [r.internal_error for r in results if r.internal_error]
    for message in internal:
        click.echo(f"error: {message}", err=True)
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
            click.echo(would_fix(sum(r.fixes_applied for r in changed), hidden), err=True)
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


@cli.command("clean")
@click.option("--cache-dir", envvar="TRITONLINT_CACHE_DIR", type=click.Path(file_okay=False),
              help="The cache to remove (default: .tritonlint_cache beside the configuration).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False))
def clean_command(cache_dir: str | None, config_path: str | None) -> None:
    """Remove the cache."""
    settings, _ = load_project(config_path, Path.cwd())
    folder = cache_folder(settings.root, settings.cache_dir, cache_dir)
    if clean(folder):
        click.echo(f"Removed cache at {folder}", err=True)
    elif folder.exists():
        raise UsageFailure(f"{folder} is not a tritonlint cache (no CACHEDIR.TAG from tritonlint): left alone")
    else:
        click.echo(f"No cache at {folder}", err=True)


@cli.command("rule")
@click.argument("code")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--config", "config_path", type=click.Path(dir_okay=False))
def rule_command(code: str, output_format: str, config_path: str | None) -> None:
    """Explain a rule: what it flags, why, an example, the fix and the measured evidence."""
    from tritonlint.explain import explain, rule_summary

    _, rules = load_project(config_path, Path.cwd())
    found = next((r for r in [*rules, *BUILTIN_RULES] if r.id == code.upper() or r.name == code), None)
    if found is None:
        raise UsageFailure(f"unknown rule {code!r} (see `tritonlint rules`)")
    if output_format == "json":
        import json

        click.echo(json.dumps(rule_summary(found), indent=2))
    else:
        click.echo(explain(found), nl=False)


@cli.command("rules")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--config", "config_path", type=click.Path(dir_okay=False))
def rules_command(output_format: str, config_path: str | None) -> None:
    """List every rule."""
    from tritonlint.explain import rule_summary, rules_table

    _, rules = load_project(config_path, Path.cwd())
    rules = sorted([*rules, *BUILTIN_RULES], key=lambda r: r.id)
    if output_format == "json":
        import json

        click.echo(json.dumps([rule_summary(r) for r in rules], indent=2))
    else:
        click.echo(rules_table(rules))


@cli.command("server")
def server_command() -> None:
    """Run the language server on standard input/output (needs `pip install "tritonlint[server]"`)."""
    try:
        from tritonlint.server import serve
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in ("pygls", "lsprotocol"):
            raise
        raise UsageFailure('`tritonlint server` needs the server extra: pip install "tritonlint[server]"') from None
    serve()


@cli.command("test-rules")
@click.argument("dirs", nargs=-1, type=click.Path(file_okay=False))
@click.option("--config", "config_path", type=click.Path(dir_okay=False))
def test_rules_command(dirs: tuple[str, ...], config_path: str | None) -> None:
    """Run rule files' valid/invalid examples through the whole rule (default: the built-in rules and the
    configured extend-rules); exit 1 when any fails."""
    from tritonlint.ruleset import builtin_rules_dir
    from tritonlint.ruletest import run_examples

    settings, rules = load_project(config_path, Path.cwd())
    if dirs:
        folders = [Path(d).resolve() for d in dirs]
        try:
            extra = load_rules([f for f in folders if f != builtin_rules_dir().resolve()])
        except RuleFileError as exc:
            raise UsageFailure(str(exc)) from None
        known = {r.id for r in rules}
        rules = rules + [r for r in extra if r.id not in known]
        selected = [r for r in rules if Path(r.path).resolve().parent in folders]
    else:
        selected = rules
    count, failures = run_examples(selected, rules)
    for failure in failures:
        click.echo(f"FAIL {failure}")
    click.echo(f"{count - len(failures)} passed, {len(failures)} failed ({len(selected)} rules)")
    sys.exit(EXIT_FINDINGS if failures else EXIT_CLEAN)


def main(argv: list[str] | None = None) -> None:
    for stream in (sys.stdout, sys.stderr):  # a message with a character the locale cannot encode is no crash
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        cli.main(args=argv, prog_name="tritonlint", standalone_mode=False)
    except UsageFailure as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_ERROR)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
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
        click.echo(f"error: internal error: {type(exc).__name__}: {exc} (set TRITONLINT_DEBUG=1 for details)", err=True)
        sys.exit(EXIT_ERROR)
