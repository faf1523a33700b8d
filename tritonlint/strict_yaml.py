"""YAML's safe subset for rule files, strict about duplicate keys (imported only when YAML is parsed)."""

from __future__ import annotations

from typing import Any

import yaml


class DuplicateKey(yaml.constructor.ConstructorError):
    def __init__(self, key: str, first: yaml.Mark, second: yaml.Mark) -> None:
        super().__init__(None, None, f"given twice (lines {first.line + 1} and {second.line + 1})", second)
        self.key = key


class StrictSafeLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """YAML's safe subset (no tags that build Python objects), and a key given twice is an error: plain
    YAML lets the second silently replace the first."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[str, yaml.Mark] = {}
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                if key_node.value in seen:
                    raise DuplicateKey(key_node.value, seen[key_node.value], key_node.start_mark)
                seen[key_node.value] = key_node.start_mark
        return super().construct_mapping(node, deep)  # type: ignore[no-any-return]
