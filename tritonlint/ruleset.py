"""Load and validate YAML rule files strictly.

A rule file is data: id, name, severity, category, a message template, an ast-grep rule (`rule`,
`constraints`, `utils`, `transform`), note templates (`notes`: the details a finding's headline leaves out),
named semantic conditions (`where`) evaluated against the kernel
model, an optional fix (a template or a named fixer) with its applicability, options, the doc sections,
and `valid`/`invalid` test examples. Anything unknown or inconsistent is a RuleFileError naming the file,
the key and the problem. Rule files never carry code: conditions and fixers are looked up by name among
those built into tritonlint.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tritonlint import evidence, inputs, ruledata
from tritonlint.diagnostics import APPLICABILITIES, SEVERITIES, rule_page_url
from tritonlint.sgutil import AstGrepError, compile_check, find_all, parse_snippet
from tritonlint.templates import METAVAR, TEMPLATE_VAR

# The conditions and fixers (and the model under them) are imported where a rule file is validated: a run whose
# rules come from the cache needs none of them.
if TYPE_CHECKING:
    from tritonlint.context import ParamSpec

CATEGORIES = ("correctness", "performance", "compile-time", "migration", "style")
DOC_SECTIONS = ("what", "why", "example", "use_instead", "fix_safety", "evidence")
MATCHER_KEYS = ("rule", "constraints", "utils", "transform")
TOP_LEVEL_KEYS = {
    "id", "name", "severity", "category", "message", "notes", "where", "fix", "options", "doc", "tests", "url",
    *MATCHER_KEYS,
}
_ID = re.compile(r"^[A-Z][A-Z0-9]*[0-9]{3}$")
_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
EXPECT_MARKER = re.compile(r"#\s*expect:\s*([A-Z][A-Z0-9]*)")
BUILTIN_VARS = frozenset({"measured"})  # filled by the engine from the committed GPU results
_OPTION_TYPES = {"int": int, "str": str, "bool": bool, "list": list}


class RuleFileError(Exception):
    def __init__(self, path: Path | str, key: str, problem: str) -> None:
        super().__init__(f"{path}: `{key}`: {problem}")
        self.path, self.key, self.problem = str(path), key, problem


@dataclass(frozen=True)
class FixSpec:
    """A rule file's `fix`."""
    applicability: str
    message: str
    fixer: str | None = None
    template: str | None = None


@dataclass(frozen=True)
class OptionSpec:
    """A rule option: name, type, default and doc."""
    name: str
    type: str
    default: Any
    doc: str


@dataclass(frozen=True)
class Condition:
    """A `where` condition of a rule file, with its arguments."""
    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Example:
    """A code example of a rule file's tests, with its fixed text."""
    code: str
    fixed: str | None = None  # expected text after --fix/--unsafe-fixes, for invalid examples
    options: dict[str, Any] = field(default_factory=dict)  # the rule's options the example is linted with


@dataclass
class Rule:
    """A rule, validated from its file."""
    id: str
    name: str
    severity: str
    category: str
    message: str
    matcher: dict[str, Any]
    where: list[Condition]
    fix: FixSpec | None
    options: dict[str, OptionSpec]
    doc: dict[str, str]
    valid: list[Example]
    invalid: list[Example]
    path: str
    url: str | None = None
    metavars: frozenset[str] = field(default_factory=frozenset)
    # The digest of the rule file's text, which with the tool's own digest determines the rule: what cache keys
    # hash instead of the rule's repr (hundreds of kilobytes for a rule set). Empty for rules built in code.
    fingerprint: str = ""
    notes: tuple[str, ...] = ()  # note templates; a note with an empty {variable} is left out

    @property
    def summary(self) -> str:
        """The first sentence of the doc's "what" section, on one line."""
        first_paragraph = " ".join(self.doc["what"].split("\n\n")[0].split())
        return re.split(r"(?<=\.)\s", first_paragraph, maxsplit=1)[0]

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.applicability != "display-only"


MAX_YAML_VALUES = 100_000  # far more than any rule needs; aliases can make a small file expand without end


def load_rule_file(path: Path) -> Rule:
    import yaml  # here: a run that finds its rules in the cache never parses YAML

    from tritonlint import rules  # noqa: F401 - registers the built-in conditions and fixers
    from tritonlint.strict_yaml import DuplicateKey, StrictSafeLoader

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleFileError(path, "<file>", f"cannot read: {exc}") from None
    try:
        data = yaml.load(text, Loader=StrictSafeLoader)
    except DuplicateKey as exc:
        raise RuleFileError(path, exc.key, exc.problem or "") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise RuleFileError(path, "<yaml>", f"not valid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    if _value_count(data, MAX_YAML_VALUES) > MAX_YAML_VALUES:
        raise RuleFileError(path, "<yaml>", f"expands to more than {MAX_YAML_VALUES} values "
                            "(an alias that refers to itself, or aliases nested to explode)")
    rule = _RuleBuilder(path, data).build()
    from tritonlint.cache import blake2b

    rule.fingerprint = blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return rule


def _value_count(data: Any, limit: int) -> int:
    """How many values the loaded YAML holds, counting each use of an alias; stops once past `limit`."""
    count, stack = 0, [data]
    while stack and count <= limit:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


class _RuleBuilder:
    def __init__(self, path: Path, data: Any) -> None:
        self.path = path
        self.data = data

    def error(self, key: str, problem: str) -> RuleFileError:
        return RuleFileError(self.path, key, problem)

    def build(self) -> Rule:
        from tritonlint.context import CONDITIONS

        data = self.data
        if not isinstance(data, dict):
            raise self.error("<file>", "a rule file must be a YAML mapping")
        unknown = sorted(set(map(str, data)) - TOP_LEVEL_KEYS)
        if unknown:
            raise self.error(unknown[0], f"unknown key (allowed: {', '.join(sorted(TOP_LEVEL_KEYS))})")
        rule_id = self.string("id", pattern=_ID, hint="like TL001 or ACME001")
        name = self.string("name", pattern=_NAME, hint="kebab-case, like static-range-long-unroll")
        severity = self.choice("severity", SEVERITIES)
        category = self.choice("category", CATEGORIES)
        matcher = self.matcher()
        metavars = self.metavariables(matcher)
        options = self.options()
        where = self.conditions(options)
        provided = set(BUILTIN_VARS).union(*(CONDITIONS[c.name].provides for c in where))
        message = self.string("message")
        self.check_template("message", message, metavars, provided)
        notes = self.note_templates(metavars, provided)
        fix = self.fix_spec(metavars, provided)
        doc = self.doc()
        valid, invalid = self.tests(rule_id, options)
        url = data.get("url")
        if url is not None and not isinstance(url, str):
            raise self.error("url", "must be a string")
        if url is None and self.path.parent.resolve() == builtin_rules_dir().resolve():
            url = rule_page_url(rule_id)  # docs/rules/ID.md, generated from this file (python -m tritonlint.docs)
        rule = Rule(rule_id, name, severity, category, message, matcher, where, fix, options, doc, valid,
                    invalid, str(self.path), url, frozenset(metavars), notes=notes)
        self.check_examples_match(rule)
        return rule

    # ---- scalar fields -------------------------------------------------------------------------------
    def string(self, key: str, pattern: re.Pattern[str] | None = None, hint: str = "") -> str:
        value = self.data.get(key)
        if value is None:
            raise self.error(key, "missing (required)")
        if not isinstance(value, str) or not value.strip():
            raise self.error(key, "must be a non-empty string")
        if pattern is not None and not pattern.match(value):
            raise self.error(key, f"{value!r} is not valid ({hint})")
        return value.strip() if key != "message" else " ".join(value.split())

    def choice(self, key: str, allowed: tuple[str, ...]) -> str:
        value = self.string(key)
        if value not in allowed:
            raise self.error(key, f"{value!r} is not one of {', '.join(allowed)}")
        return value

    # ---- the ast-grep part ---------------------------------------------------------------------------
    def matcher(self) -> dict[str, Any]:
        if "rule" not in self.data:
            raise self.error("rule", "missing (required): an ast-grep rule")
        matcher = {}
        for key in MATCHER_KEYS:
            if key in self.data:
                if not isinstance(self.data[key], dict):
                    raise self.error(key, "must be a mapping")
                matcher[key] = self.data[key]
        try:
            compile_check(matcher)
        except AstGrepError as exc:
            raise self.error("rule", f"invalid ast-grep rule: {exc}") from None
        return matcher

    def metavariables(self, matcher: dict[str, Any]) -> set[str]:
        found: set[str] = set(matcher.get("transform", {}))
        stack: list[Any] = [matcher]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                stack.extend(item.values())
                stack.extend(k for k in item if isinstance(k, str))
            elif isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, str):
                found.update(METAVAR.findall(item))
        return found

    # ---- options and conditions ----------------------------------------------------------------------
    def options(self) -> dict[str, OptionSpec]:
        raw = self.data.get("options", {})
        if not isinstance(raw, dict):
            raise self.error("options", "must be a mapping of option name to {type, default, doc}")
        options = {}
        for name, spec in raw.items():
            key = f"options.{name}"
            if not isinstance(name, str) or not _NAME.match(name):
                raise self.error(key, "option names are kebab-case")
            if not isinstance(spec, dict) or set(spec) - {"type", "default", "doc"} or "type" not in spec:
                raise self.error(key, "must be a mapping with `type`, `default` and `doc` only")
            if not isinstance(spec["type"], str) or spec["type"] not in _OPTION_TYPES:
                raise self.error(f"{key}.type", f"must be one of {', '.join(_OPTION_TYPES)}")
            default = spec.get("default")
            if not _is_type(default, spec["type"]):
                raise self.error(f"{key}.default", f"must be a {spec['type']}")
            options[name] = OptionSpec(name, spec["type"], default, str(spec.get("doc", "")))
        return options

    def example_options(self, key: str, raw: Any, options: dict[str, OptionSpec]) -> dict[str, Any]:
        """An example's settings of the rule's own options (`{constexpr-size-unbacked: true}`)."""
        if not isinstance(raw, dict):
            raise self.error(key, "must be a mapping of the rule's option names to values")
        for name, value in raw.items():
            if name not in options:
                raise self.error(f"{key}.{name}", f"not an option of this rule (its options: {', '.join(options) or 'none'})")
            if not _is_type(value, options[name].type):
                raise self.error(f"{key}.{name}", f"must be a {options[name].type}")
        return dict(raw)

    def conditions(self, options: dict[str, OptionSpec]) -> list[Condition]:
        from tritonlint.context import CONDITIONS

        raw = self.data.get("where", [])
        if not isinstance(raw, list):
            raise self.error("where", "must be a list of condition names or {name: {arguments}}")
        conditions = []
        for index, item in enumerate(raw):
            key = f"where[{index}]"
            if isinstance(item, str):
                name, args = item, {}  # type: ignore[var-annotated]
            elif isinstance(item, dict) and len(item) == 1:
                name, args = next(iter(item.items()))
                args = {} if args is None else args
            else:
                raise self.error(key, "must be a condition name or a one-key mapping {name: {arguments}}")
            if name not in CONDITIONS:
                raise self.error(key, f"unknown condition {name!r} (known: {', '.join(sorted(CONDITIONS))})")
            if not isinstance(args, dict):
                raise self.error(f"{key}.{name}", "arguments must be a mapping")
            self.check_params(f"{key}.{name}", CONDITIONS[name].params, args, options)
            conditions.append(Condition(name, args))
        return conditions

    def check_params(self, key: str, params: dict[str, ParamSpec], args: dict[str, Any], options: dict[str, OptionSpec]) -> None:
        for arg in args:
            if arg not in params:
                raise self.error(f"{key}.{arg}", f"unknown argument (allowed: {', '.join(params) or 'none'})")
        for param, spec in params.items():
            if param not in args:
                if spec.required:
                    raise self.error(f"{key}.{param}", "missing (required)")
                continue
            value = args[param]
            if isinstance(value, dict) and set(value) == {"option"}:
                option = options.get(value["option"]) if isinstance(value["option"], str) else None
                if option is None:
                    raise self.error(f"{key}.{param}", f"names option {value['option']!r}, which `options` does not declare")
                continue
            if not _is_type(value, spec.type):
                raise self.error(f"{key}.{param}", f"must be a {spec.type}")

    # ---- templates and fixes -------------------------------------------------------------------------
    def check_template(self, key: str, template: str, metavars: set[str], provided: set[str]) -> None:
        for name in METAVAR.findall(template):
            if name not in metavars:
                raise self.error(key, f"template names ${name}, which the ast-grep rule does not capture")
        for name in TEMPLATE_VAR.findall(template):
            if name not in provided:
                known = ", ".join(sorted(provided)) or "none"
                raise self.error(key, f"template names {{{name}}}, which no condition provides (provided: {known})")

    def note_templates(self, metavars: set[str], provided: set[str]) -> tuple[str, ...]:
        raw = self.data.get("notes", [])
        if not isinstance(raw, list) or not all(isinstance(note, str) and note.strip() for note in raw):
            raise self.error("notes", "must be a list of non-empty strings (note templates)")
        for index, note in enumerate(raw):
            self.check_template(f"notes[{index}]", note, metavars, provided)
        return tuple(" ".join(note.split()) for note in raw)

    def fix_spec(self, metavars: set[str], provided: set[str]) -> FixSpec | None:
        from tritonlint.context import FIXERS

        raw = self.data.get("fix")
        if raw is None:
            return None
        if not isinstance(raw, dict):
            raise self.error("fix", "must be a mapping with applicability, message and fixer or template")
        unknown = set(map(str, raw)) - {"applicability", "message", "fixer", "template"}
        if unknown:
            raise self.error(f"fix.{sorted(unknown)[0]}", "unknown key (allowed: applicability, message, fixer, template)")
        applicability = raw.get("applicability")
        if applicability not in APPLICABILITIES:
            raise self.error("fix.applicability", f"must be one of {', '.join(APPLICABILITIES)}")
        message = raw.get("message")
        if not isinstance(message, str) or not message.strip():
            raise self.error("fix.message", "missing or empty")
        self.check_template("fix.message", message, metavars, provided)
        fixer, template = raw.get("fixer"), raw.get("template")
        if (fixer is None) == (template is None):
            raise self.error("fix", "needs exactly one of `fixer` (a built-in fixer's name) or `template`")
        if fixer is not None and (not isinstance(fixer, str) or fixer not in FIXERS):
            raise self.error("fix.fixer", f"unknown fixer {fixer!r} (known: {', '.join(sorted(FIXERS))})")
        if template is not None:
            if not isinstance(template, str):
                raise self.error("fix.template", "must be a string")
            self.check_template("fix.template", template, metavars, provided)
        return FixSpec(applicability, " ".join(message.split()), fixer, template)

    # ---- docs and tests ------------------------------------------------------------------------------
    def doc(self) -> dict[str, str]:
        raw = self.data.get("doc")
        if not isinstance(raw, dict):
            raise self.error("doc", f"missing: a mapping with {', '.join(DOC_SECTIONS)}")
        unknown = set(map(str, raw)) - set(DOC_SECTIONS)
        if unknown:
            raise self.error(f"doc.{sorted(unknown)[0]}", f"unknown section (allowed: {', '.join(DOC_SECTIONS)})")
        for section in ("what", "why"):
            if not isinstance(raw.get(section), str) or not raw[section].strip():
                raise self.error(f"doc.{section}", "missing (required)")
        for section, value in raw.items():
            if not isinstance(value, str):
                raise self.error(f"doc.{section}", "must be a string")
        return {k: raw[k].strip("\n") for k in DOC_SECTIONS if k in raw}

    def tests(self, rule_id: str, options: dict[str, OptionSpec]) -> tuple[list[Example], list[Example]]:
        raw = self.data.get("tests")
        if not isinstance(raw, dict) or set(raw) - {"valid", "invalid"}:
            raise self.error("tests", "must be a mapping with `valid` and `invalid` lists")
        lists = []
        for kind in ("valid", "invalid"):
            items = raw.get(kind)
            if not isinstance(items, list) or not items:
                raise self.error(f"tests.{kind}", "must be a non-empty list of code examples")
            examples = []
            for index, item in enumerate(items):
                key = f"tests.{kind}[{index}]"
                if isinstance(item, str):
                    example = Example(item)
                elif isinstance(item, dict) and set(item) <= {"code", "fixed", "options"} and isinstance(item.get("code"), str):
                    fixed = item.get("fixed")
                    if fixed is not None and (kind == "valid" or not isinstance(fixed, str)):
                        raise self.error(f"{key}.fixed", "only invalid examples have a `fixed` text")
                    example = Example(item["code"], fixed, self.example_options(f"{key}.options", item.get("options", {}), options))
                else:
                    raise self.error(key, "must be a code string or a mapping {code, fixed, options}")
                markers = EXPECT_MARKER.findall(example.code)
                if kind == "invalid" and rule_id not in markers:
                    raise self.error(key, f"has no `# expect: {rule_id}` marker on the line the finding belongs to")
                if kind == "valid" and rule_id in markers:
                    raise self.error(key, f"a valid example must not carry `# expect: {rule_id}`")
                examples.append(example)
            lists.append(examples)
        return lists[0], lists[1]

    def check_examples_match(self, rule: Rule) -> None:
        """The ast-grep part alone must match every invalid example, or the pattern is broken."""
        for index, example in enumerate(rule.invalid):
            root = parse_snippet(example.code)
            if not find_all(root, rule.matcher):
                raise self.error(f"tests.invalid[{index}]", "the ast-grep rule matches nothing in this example "
                                 "(a pattern that does not parse matches nothing)")


def _is_type(value: Any, type_name: str) -> bool:
    expected = _OPTION_TYPES[type_name]
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, expected)


def builtin_rules_dir() -> Path:
    """Rule files ship inside the wheel as tritonlint/_rules; a source checkout keeps them in rules/."""
    packaged = Path(__file__).with_name("_rules")
    return packaged if packaged.is_dir() else Path(__file__).resolve().parent.parent / "rules"


def rule_files(extra_dirs: list[Path] = ()) -> list[Path]:  # type: ignore[assignment]
    files: list[Path] = []
    for folder in [builtin_rules_dir(), *extra_dirs]:
        inputs.depends_on(folder)
        if not folder.is_dir():
            raise RuleFileError(folder, "extend-rules", "is not a folder")
        files.extend(sorted(folder.glob("*.y*ml")))
    for path in files:
        inputs.depends_on(path)
    return files


def load_rules(extra_dirs: list[Path] = (), cache_folder: Path | None = None) -> list[Rule]:  # type: ignore[assignment]
    """Every rule file, validated, and the rules' data tables (ruledata). With `cache_folder`, rules validated
    before from files with the same contents, and tables parsed before, are read back from the cache instead
    (parsing YAML and matching every example costs more than a run that finds all its files in the cache), with
    the GPU evidence the messages quote (evidence.load: reading its JSON costs a lint with findings more)."""
    files = rule_files(extra_dirs)
    tables = [Path(path) for path in ruledata.data_files()]
    cached = _rules_cache_path(cache_folder, files + tables) if cache_folder is not None else None
    if cached is not None:
        from tritonlint.cache import safe_loads, touch

        try:
            stored = safe_loads(cached.read_bytes())
            if isinstance(stored, tuple) and len(stored) == 3 and isinstance(stored[0], list) \
                    and all(isinstance(r, Rule) for r in stored[0]) and isinstance(stored[1], dict) \
                    and isinstance(stored[2], (dict, type(None))):
                touch(cached)  # in use: not stale
                ruledata.provide(stored[1])
                evidence.provide(stored[2])
                return stored[0]
        except Exception:  # noqa: BLE001 - absent or unreadable: load the files
            pass
    rules: list[Rule] = []
    seen: dict[str, str] = {}
    for path in files:
        rule = load_rule_file(path)
        for label in (rule.id, rule.name):
            if label in seen:
                raise RuleFileError(path, "id" if label == rule.id else "name", f"{label!r} is already defined in {seen[label]}")
            seen[label] = str(path)
        rules.append(rule)
    parsed = ruledata.parse()
    ruledata.provide(parsed)
    if cached is not None:
        from tritonlint.cache import write_file

        try:
            write_file(cached, lambda: (rules, parsed, evidence.load()))
        except OSError:
            pass  # the run goes on; the next one validates the files again
    return rules


def _rules_cache_path(folder: Path, files: list[Path]) -> Path | None:
    from tritonlint import __version__
    from tritonlint.cache import blake2b, tool_digest

    hasher = blake2b(tool_digest().encode(), digest_size=16)
    for path in files:
        try:
            hasher.update(f"\0{path}\0".encode() + path.read_bytes())
        except OSError:
            return None  # unreadable: load_rule_file says why
    return folder / __version__ / f"rules-{hasher.hexdigest()}.pickle"
