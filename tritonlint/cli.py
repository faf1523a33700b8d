"""The command line: `tritonlint [PATHS]`, `tritonlint check`, `tritonlint rule ID`, `tritonlint rules`. The lint
itself and its options are in command.py, which reads most lint command lines without click."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from tritonlint import __version__
from tritonlint.builtin import BUILTIN_RULES
from tritonlint.cache import cache_folder, clean
from tritonlint.command import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, OPTIONS, UsageFailure, guard, load_project
from tritonlint.command import check as lint
from tritonlint.ruleset import RuleFileError, load_rules
from tritonlint.timelimit import MAX_SECONDS

__all__ = ["UsageFailure", "cli", "main"]

_TYPES: dict[str, Any] = {"file": click.Path(dir_okay=False), "folder": click.Path(file_okay=False),
                          "jobs": click.IntRange(1), "seconds": click.FloatRange(0, MAX_SECONDS)}


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


def _check_command() -> None:
    def check(**values: Any) -> None:
        """Lint PATHS (default: the current folder); `-` reads one file from standard input."""
        lint(**values)

    command: Any = check
    for option in reversed(OPTIONS):  # as decorators listed in this order would be applied
        settings: dict[str, Any] = {"is_flag": True} if option.kind == "flag" else {"multiple": True} \
            if option.kind == "multiple" else {}
        if isinstance(option.type, tuple):
            settings["type"] = click.Choice(option.type)
        elif option.type is not None:
            settings["type"] = _TYPES[str(option.type)]
        if option.default is not None:
            settings.update(default=option.default, show_default=True)
        if option.envvar:
            settings["envvar"] = option.envvar
        if option.type == "seconds":
            settings["metavar"] = "SECONDS"
        if option.help:
            settings["help"] = option.help
        command = click.option(*option.flags, option.name, **settings)(command)
    cli.command("check")(click.argument("paths", nargs=-1)(command))


_check_command()


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
    guard(lambda: _click(argv))


def _click(argv: list[str] | None) -> None:
    try:
        cli.main(args=argv, prog_name="tritonlint", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_ERROR)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(EXIT_ERROR)
