"""Rule pages: `python -m tritonlint.docs [FOLDER]` writes docs/rules/ID.md for every built-in rule from
its rule file (the text of `tritonlint rule ID`); `--check` exits 1 when a page is missing or stale. The
JSON `url` and SARIF `helpUri` of the built-in rules point at these pages."""

from __future__ import annotations

import sys
from pathlib import Path

from tritonlint.builtin import BUILTIN_RULES
from tritonlint.explain import explain
from tritonlint.ruleset import load_rules


def pages() -> dict[str, str]:
    return {f"{rule.id}.md": explain(rule) for rule in sorted([*load_rules(), *BUILTIN_RULES], key=lambda r: r.id)}


def main(argv: list[str]) -> int:
    check = "--check" in argv
    folder = Path(next((a for a in argv if a != "--check"), "docs/rules"))
    stale = []
    for name, text in pages().items():
        path = folder / name
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(path)
        if not check:
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for path in stale:
        print(f"{'stale' if check else 'wrote'}: {path}", file=sys.stderr)
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
