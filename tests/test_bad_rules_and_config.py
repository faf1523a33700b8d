"""User-supplied rule files (`extend-rules`) and configuration that are wrong: exit code 2 and one line that
names the file, the key and the reason; never a Python traceback, never a Rust backtrace (each run sets
RUST_BACKTRACE=1, as these machines do, so ast-grep's errors carry one unless tritonlint strips it)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.helpers import run_cli

KERNEL = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def kernel(x_ptr):
        for i in tl.static_range(32):
            tl.store(x_ptr + i, tl.dot(tl.load(x_ptr), tl.load(x_ptr)))
    """)

# A complete, valid rule file; each case below breaks one thing in it.
GOOD_RULE = textwrap.dedent("""\
    id: ACME001
    name: acme-long-static-range
    severity: warning
    category: performance
    message: "`$RANGE` unrolls {trip} iterations"
    rule:
      kind: for_statement
      has:
        field: right
        kind: call
        has: {field: function, pattern: $RANGE}
    where:
      - in-jit-function
      - callee-is: {metavar: RANGE, names: [triton.language.static_range]}
      - static-range-trip-count: {above: {option: acme-max-trip}}
    fix:
      fixer: static-range-to-range
      applicability: safe
      message: Use tl.range
    options:
      acme-max-trip: {type: int, default: 16, doc: Longest trip count not reported.}
    doc:
      what: Flags long static_range loops.
      why: They unroll.
    tests:
      valid: ["x = 1\\n"]
      invalid:
        - |
          import triton
          import triton.language as tl
          @triton.jit
          def k(x):
              for i in tl.static_range(64):  # expect: ACME001
                  tl.store(x + i, i)
    """)


def _edit(old: str, new: str) -> str:
    assert old in GOOD_RULE, old
    return GOOD_RULE.replace(old, new, 1)


# name -> (rule file text, the key the error must name, a fragment of the reason)
RULE_CASES: dict[str, tuple[str, str, str]] = {
    "a_list": ("- id: ACME001\n- name: x\n", "<file>", "must be a YAML mapping"),
    "empty": ("", "<file>", "must be a YAML mapping"),
    "only_a_comment": ("# nothing here\n", "<file>", "must be a YAML mapping"),
    "a_scalar": ("just text\n", "<file>", "must be a YAML mapping"),
    "tab_indent": ("id: ACME001\n\tname: x\n", "<yaml>", "line 2, column 1"),
    "unclosed_quote": ('id: "ACME001\n', "<yaml>", "not valid YAML"),
    "python_object_apply": ('!!python/object/apply:os.system ["touch pwned"]\n', "<yaml>",
                            "could not determine a constructor for the tag 'tag:yaml.org,2002:python/object/apply:os.system'"),
    "python_name": ("id: !!python/name:os.system\n", "<yaml>", "python/name:os.system"),
    "python_object_new": ("id: !!python/object/new:subprocess.Popen [[touch, pwned]]\n", "<yaml>", "python/object/new"),
    "python_module": ("id: !!python/module:os\n", "<yaml>", "python/module:os"),
    "not_utf8": ("id: ACME001\nname: caf\udce9\n", "<file>", "cannot read"),
    "recursive_alias": ("rule: &r {any: [{kind: call}, *r]}\n", "<yaml>", "expands to more than"),
    "alias_bomb": ("".join(f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 10) if n else '1, 2, 3, 4, 5, 6, 7, 8, 9, 10'}]\n"
                           for n in range(7)), "<yaml>", "expands to more than"),
    "duplicate_key": (GOOD_RULE + "rule: {kind: call}\n", "rule", "given twice"),
    "unknown_top_key": (GOOD_RULE + "severty: error\n", "severty", "unknown key"),
    "notes_a_string": (GOOD_RULE + "notes: the trip count\n", "notes", "must be a list of non-empty strings"),
    "note_unknown_variable": (GOOD_RULE + "notes: ['from {nowhere}']\n", "notes[0]", "template names {nowhere}"),
    "missing_id": (_edit("id: ACME001\n", ""), "id", "missing (required)"),
    "id_not_a_string": (_edit("id: ACME001", "id: 1001"), "id", "must be a non-empty string"),
    "bad_id": (_edit("id: ACME001", "id: acme-1"), "id", "is not valid"),
    "bad_severity": (_edit("severity: warning", "severity: loud"), "severity", "is not one of"),
    "severity_a_list": (_edit("severity: warning", "severity: [warning]"), "severity", "must be a non-empty string"),
    "rule_a_string": (_edit("rule:\n  kind: for_statement\n  has:\n    field: right\n    kind: call\n"
                            "    has: {field: function, pattern: $RANGE}\n", "rule: for_statement\n"), "rule", "must be a mapping"),
    "unknown_kind": (_edit("kind: for_statement", "kind: for_statemnt"), "rule", "Kind `for_statemnt` is invalid"),
    "kind_an_int": (_edit("kind: for_statement", "kind: 5"), "rule", "invalid ast-grep rule"),
    "unknown_ast_grep_key": (_edit("kind: for_statement", "kind: for_statement\n  bogus: 1"), "rule", "unknown field `bogus`"),
    "bad_regex": (_edit("kind: for_statement", "kind: for_statement\n  regex: '(unclosed'"), "rule", "regex parse error"),
    "undefined_util": (_edit("kind: for_statement", "kind: for_statement\n  matches: nowhere"), "rule", "`nowhere` is not defined"),
    "cyclic_utils": (_edit("rule:\n", "utils:\n  a: {matches: b}\n  b: {matches: a}\nrule:\n  matches: a\n"), "rule",
                     "cyclic dependency"),
    "bad_relation_field": (_edit("field: right", "field: nofield"), "rule", "invalid field nofield"),
    "undefined_constraint_var": (_edit("where:", "constraints: {NOPE: {kind: call}}\nwhere:"), "rule",
                                 "Undefined meta var `NOPE`"),
    "pattern_matches_nothing": (_edit("pattern: $RANGE", "pattern: nothing_like_this($RANGE)"), "tests.invalid[0]",
                                "matches nothing in this example"),
    "pattern_does_not_parse": (_edit("pattern: $RANGE", "pattern: 'def ($RANGE:'"), "tests.invalid[0]", "matches nothing"),
    "message_unknown_metavar": (_edit("`$RANGE` unrolls", "`$NOPE` unrolls"), "message", "template names $NOPE"),
    "message_unknown_value": (_edit("{trip} iterations", "{tirp} iterations"), "message", "template names {tirp}"),
    "fix_template_unknown_metavar": (_edit("  fixer: static-range-to-range", "  template: tl.range($ARGS)"),
                                     "fix.template", "template names $ARGS"),
    "fix_both_fixer_and_template": (_edit("  fixer: static-range-to-range",
                                          "  fixer: static-range-to-range\n  template: x"), "fix", "exactly one of"),
    "unknown_fixer": (_edit("fixer: static-range-to-range", "fixer: os.system"), "fix.fixer", "unknown fixer 'os.system'"),
    "fixer_a_list": (_edit("fixer: static-range-to-range", "fixer: [a, b]"), "fix.fixer", "unknown fixer"),
    "bad_applicability": (_edit("applicability: safe", "applicability: maybe"), "fix.applicability", "must be one of"),
    "unknown_fix_key": (_edit("applicability: safe", "applicability: safe\n  code: print(1)"), "fix.code", "unknown key"),
    "unknown_condition": (_edit("  - in-jit-function", "  - run-python: {code: 'import os'}"), "where[0]",
                          "unknown condition 'run-python'"),
    "where_a_string": (GOOD_RULE.split("where:")[0] + "where: in-jit-function\nfix:" + GOOD_RULE.split("fix:")[1],
                       "where", "must be a list"),
    "condition_unknown_argument": (_edit("{metavar: RANGE,", "{metavar: RANGE, extra: 1,"),
                                   "where[1].callee-is.extra", "unknown argument"),
    "condition_argument_wrong_type": (_edit("names: [triton.language.static_range]", "names: triton.language.static_range"),
                                      "where[1].callee-is.names", "must be a list"),
    "condition_missing_argument": (_edit("{metavar: RANGE, names: [triton.language.static_range]}", "{metavar: RANGE}"),
                                   "where[1].callee-is.names", "missing (required)"),
    "undeclared_option": (_edit("{option: acme-max-trip}", "{option: nope}"), "where[2].static-range-trip-count.above",
                          "names option 'nope'"),
    "option_reference_a_list": (_edit("{option: acme-max-trip}", "{option: [acme-max-trip]}"),
                                "where[2].static-range-trip-count.above", "names option"),
    "option_type_a_list": (_edit("{type: int,", "{type: [int],"), "options.acme-max-trip.type", "must be one of"),
    "option_default_wrong_type": (_edit("default: 16", "default: sixteen"), "options.acme-max-trip.default", "must be a int"),
    "option_bad_name": (_edit("  acme-max-trip: {type", "  Acme_Max: {type"), "options.Acme_Max", "kebab-case"),
    "doc_missing_why": (_edit("  why: They unroll.\n", ""), "doc.why", "missing (required)"),
    "doc_unknown_section": (_edit("  why: They unroll.", "  why: They unroll.\n  how: Somehow."), "doc.how", "unknown section"),
    "tests_missing": (GOOD_RULE.split("tests:")[0], "tests", "must be a mapping"),
    "invalid_example_without_marker": (_edit("  # expect: ACME001", ""), "tests.invalid[0]", "has no `# expect: ACME001`"),
    "valid_example_with_marker": (_edit('valid: ["x = 1\\n"]', 'valid: ["x = 1  # expect: ACME001\\n"]'),
                                  "tests.valid[0]", "must not carry"),
    "example_not_a_string": (_edit('valid: ["x = 1\\n"]', "valid: [42]"), "tests.valid[0]", "must be a code string"),
    "example_unknown_option": (_edit('valid: ["x = 1\\n"]', 'valid: [{code: "x = 1\\n", options: {acme-max-trp: 4}}]'),
                               "tests.valid[0].options.acme-max-trp", "not an option of this rule"),
    "example_option_wrong_type": (_edit('valid: ["x = 1\\n"]', 'valid: [{code: "x = 1\\n", options: {acme-max-trip: yes}}]'),
                                  "tests.valid[0].options.acme-max-trip", "must be a int"),
    "duplicate_builtin_id": (_edit("id: ACME001", "id: TL001").replace("ACME001", "TL001"), "id",
                             "'TL001' is already defined"),
}


def _run(tmp_path: Path, files: dict[str, str | bytes], *args: str):
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8", errors="surrogateescape"))
    return run_cli(*(args or ("k.py",)), cwd=tmp_path, env={"RUST_BACKTRACE": "1", "RUST_LIB_BACKTRACE": "1"})


def _assert_one_clean_error(result, *fragments: str) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for marker in ("Traceback", "Stack backtrace", "panicked", "ast_grep_config::", "internal error"):
        assert marker not in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def test_the_good_rule_file_loads(tmp_path):
    result = _run(tmp_path, {"k.py": KERNEL, "tritonlint.toml": 'extend-rules = ["acme"]\n', "acme/acme.yaml": GOOD_RULE})
    assert result.returncode == 1 and "ACME001" in result.stdout, result.stderr


@pytest.mark.parametrize("name", list(RULE_CASES))
def test_bad_rule_file(name, tmp_path):
    text, key, reason = RULE_CASES[name]
    result = _run(tmp_path, {"k.py": KERNEL, "tritonlint.toml": 'extend-rules = ["acme"]\n', "acme/acme.yaml": text})
    line = _assert_one_clean_error(result, "acme.yaml", f"`{key}`", reason)
    assert line.startswith(f"error: {tmp_path / 'acme' / 'acme.yaml'}: `{key}`: "), line
    assert not (tmp_path / "pwned").exists()


# name -> (config files, command-line arguments, fragments the error line must hold)
CONFIG_CASES: dict[str, tuple[dict[str, str], tuple[str, ...], tuple[str, ...]]] = {
    "invalid_toml_in_pyproject": ({"pyproject.toml": "[tool.tritonlint\nselect = [\n"}, (),
                                  ("pyproject.toml", "`<toml>`", "not valid TOML", "line 1")),
    "invalid_toml": ({"tritonlint.toml": "select = [\n"}, (), ("tritonlint.toml", "`<toml>`", "not valid TOML")),
    "config_not_utf8": ({"tritonlint.toml": "select = ['caf\udce9']\n"}, (), ("tritonlint.toml", "`<file>`", "cannot read")),
    "tool_tritonlint_not_a_table": ({"pyproject.toml": "[tool]\ntritonlint = 5\n"}, (),
                                    ("pyproject.toml", "`tool.tritonlint`", "must be a table")),
    "tool_not_a_table": ({"other.toml": "tool = 1\n"}, ("--config", "other.toml"), ("other.toml",)),
    "unknown_key": ({"tritonlint.toml": "selekt = ['TL001']\n"}, (), ("`selekt`", "unknown key")),
    "select_a_string": ({"tritonlint.toml": "select = 'TL001'\n"}, (), ("`select`", "must be a list of strings")),
    "select_ints": ({"tritonlint.toml": "select = [1]\n"}, (), ("`select`", "must be a list of strings")),
    "select_unknown_rule": ({"tritonlint.toml": "select = ['TL7']\n"}, (), ("`select`", "'TL7' matches no rule")),
    "ignore_a_table": ({"tritonlint.toml": "[ignore]\na = 1\n"}, (), ("`ignore`", "must be a list of strings")),
    "target_float": ({"tritonlint.toml": "target = 90.5\n"}, (), ("`target`", "is not a CUDA target")),
    "target_bool": ({"tritonlint.toml": "target = true\n"}, (), ("`target`", "is not a CUDA target")),
    "target_nonsense": ({"tritonlint.toml": "target = 'hopper'\n"}, (), ("`target`", "'hopper' is not a CUDA target")),
    "per_file_ignores_a_list": ({"tritonlint.toml": "per-file-ignores = ['a']\n"}, (),
                                ("`per-file-ignores`", "must be a table")),
    "per_file_ignores_string_codes": ({"tritonlint.toml": "[per-file-ignores]\n'a.py' = 'TL001'\n"}, (),
                                      ("`per-file-ignores`", "must be a table")),
    "extend_rules_a_string": ({"tritonlint.toml": "extend-rules = 'rules'\n"}, (), ("`extend-rules`", "list of folder paths")),
    "extend_rules_missing_folder": ({"tritonlint.toml": "extend-rules = ['nowhere']\n"}, (),
                                    ("nowhere", "`extend-rules`", "is not a folder")),
    "extend_rules_a_file": ({"tritonlint.toml": "extend-rules = ['k.py']\n"}, (), ("k.py", "`extend-rules`", "is not a folder")),
    "respect_gitignore_a_string": ({"tritonlint.toml": "respect-gitignore = 'yes'\n"}, (),
                                   ("`respect-gitignore`", "must be true or false")),
    "cache_dir_an_int": ({"tritonlint.toml": "cache-dir = 1\n"}, (), ("`cache-dir`", "must be a path")),
    "rule_option_wrong_type": ({"tritonlint.toml": "static-range-max-trip = 'many'\n"}, (),
                               ("`static-range-max-trip`", "must be a int")),
    "rule_option_bool_for_int": ({"tritonlint.toml": "static-range-max-trip = true\n"}, (),
                                 ("`static-range-max-trip`", "must be a int")),
    "rule_option_float": ({"tritonlint.toml": "static-range-max-trip = 1e400\n"}, (),
                          ("`static-range-max-trip`", "must be a int")),
    "config_flag_missing_file": ({}, ("--config", "nowhere.toml"), ("nowhere.toml", "cannot read")),
    "select_flag_unknown": ({}, ("--select", "TL7"), ("'TL7' matches no rule",)),
    "target_flag_bad": ({}, ("--target", "hopper"), ("--target", "'hopper' is not a CUDA target")),
    "stdin_with_paths": ({}, ("-",), ("cannot be combined",)),
    "missing_path": ({}, ("nowhere.py",), ("nowhere.py: no such file or directory",)),
}


@pytest.mark.parametrize("name", list(CONFIG_CASES))
def test_bad_configuration(name, tmp_path):
    files, args, fragments = CONFIG_CASES[name]
    result = _run(tmp_path, {"k.py": KERNEL, **files}, "k.py", *args)
    _assert_one_clean_error(result, *fragments)


def test_invalid_pyproject_that_is_not_ours_is_ignored(tmp_path):
    """A broken pyproject.toml without a [tool.tritonlint] table belongs to some other tool."""
    result = _run(tmp_path, {"k.py": KERNEL, "pyproject.toml": "[project\nname = \n"})
    assert result.returncode == 1 and "TL001" in result.stdout, result.stderr


def test_ast_grep_errors_lose_the_rust_backtrace():
    from tritonlint.sgutil import AstGrepError, compile_check

    with pytest.raises(AstGrepError) as error:
        compile_check({"rule": {"kind": "call", "has": {"field": "nofield", "kind": "argument_list"}}})
    message = str(error.value)
    assert "\n" not in message and "backtrace" not in message.lower() and "ast_grep" not in message
    assert "invalid field nofield" in message
