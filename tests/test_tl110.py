"""TL110's exemptions: the rule doc lists exactly the table in the rule's module."""
from __future__ import annotations

from tests.helpers import documented_exemptions, exemption_docs


def test_tl110_doc_lists_exactly_its_exemptions(rules):
    from tritonlint.rules.tl110_autotune_key_unknown import EXEMPTIONS

    assert documented_exemptions(rules, "TL110") == exemption_docs(EXEMPTIONS)
    assert len({e.name for e in EXEMPTIONS}) == len(EXEMPTIONS)
