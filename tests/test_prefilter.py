"""What a file's text must contain for a rule to be run on it: never more than the rule needs."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import lint_code
from tritonlint.prefilter import LAUNCH, AllOf, AnyOf, Token, from_matcher, from_pattern, holds, rule_requirement
from tritonlint.ruleset import load_rule_file, load_rules

RULES = load_rules()


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_every_invalid_example_passes_its_rules_prefilter(rule):
    requirement = rule_requirement(rule)
    for example in rule.invalid:
        assert holds(requirement, example.code), (rule.id, requirement, example.code)


def test_pattern_words_are_required_and_metavariables_are_not():
    assert from_pattern("tl.trans($X)") == AllOf((Token("tl"), Token("trans")))
    assert from_pattern("$A.dot($$$ARGS)") == Token("dot")
    assert from_pattern("$K[$$$G]($$$A)") == LAUNCH
    assert from_pattern("$X") is None


def test_combinators():
    matcher = {"rule": {"any": [{"pattern": "tl.trans($X)"}, {"pattern": "$X.T"}], "not": {"pattern": "foo()"},
                        "inside": {"kind": "for_statement", "has": {"matches": "loads"}}},
               "utils": {"loads": {"pattern": "tl.load($$$)"}}}
    requirement = from_matcher(matcher)
    assert holds(requirement, "tl.trans(a); tl.load(p)") and holds(requirement, "x.T; tl.load(p)")
    assert not holds(requirement, "tl.trans(a)")  # the `has` through `matches` needs tl.load
    assert not holds(requirement, "tl.load(p)")  # neither alternative
    loose = from_matcher({"rule": {"any": [{"pattern": "tl.trans($X)"}, {"kind": "call"}]}})
    assert loose is None  # one alternative needs nothing: the choice needs nothing


def test_launch_shaped_kind_rules_need_launch_text():
    requirement = from_matcher({"rule": {"kind": "call", "has": {"field": "function", "kind": "subscript"}}})
    assert requirement == LAUNCH
    for code in ("k[grid](x)", "k[g] (x)", "(k[g])(x)", "k[g]  # why\n  (x)", "k[g] \\\n (x)"):
        assert holds(requirement, code), code
    assert not holds(requirement, "y = x[0] + f(1)\n")


def test_conditions_add_their_requirements():
    tl001 = next(r for r in RULES if r.id == "TL001")
    requirement = rule_requirement(tl001)
    assert isinstance(requirement, AllOf) and Token("jit") in requirement.parts
    assert AnyOf((Token("static_range"),)) in requirement.parts or Token("static_range") in requirement.parts
    assert not holds(requirement, "import triton\n@triton.jit\ndef k():\n    for i in range(3): pass\n")


def test_a_user_rule_about_host_code_still_fires_in_a_file_without_kernels(tmp_path):
    rule_path = tmp_path / "ACME001.yaml"
    rule_path.write_text(textwrap.dedent("""\
        id: ACME001
        name: config-without-warps
        severity: info
        category: style
        message: "a triton.Config without num_warps"
        rule:
          pattern: triton.Config($META)
        doc: {what: x, why: x}
        tests:
          invalid: ["triton.Config({'BLOCK': 64})  # expect: ACME001"]
          valid: ["triton.Config({'BLOCK': 64}, num_warps=4)"]
        """))
    rule = load_rule_file(rule_path)
    host_only = "import triton\n\nCONFIGS = [triton.Config({'BLOCK': 64})]\n"
    result = lint_code(host_only, [*RULES, rule], select=["ACME001"])
    assert [d.code for d in result.diagnostics] == ["ACME001"]
    unrelated = "import triton\n\nx = 1\n"
    assert lint_code(unrelated, [*RULES, rule], select=["ACME001"]).diagnostics == []
