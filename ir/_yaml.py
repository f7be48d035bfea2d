"""YAML for the project's input files (studies, schedules, hardware): PyYAML's safe
loader, except that a key given twice in one mapping is an error. PyYAML keeps the last
value silently, so a study with two ``axes:`` would lose the first without a word."""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["load_yaml"]


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` refusing duplicate mapping keys."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node.start_mark.line + 1)
            except TypeError:  # an unhashable key: the base class reports it
                continue
            if first != key_node.start_mark.line + 1:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is given twice (lines {first} and "
                    f"{key_node.start_mark.line + 1}); the first would be lost",
                    key_node.start_mark)
        return super().construct_mapping(node, deep)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` that raises ``yaml.YAMLError`` on a duplicate key."""
    return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
