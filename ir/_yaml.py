"""YAML for the project's input files (studies, schedules, hardware): PyYAML's safe
loader, except that a key given twice in one mapping is an error. PyYAML keeps the last
value silently, so a study with two ``axes:`` would lose the first without a word.
PyYAML is imported on first use, so that ``samfuse --help`` does not pay for it."""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["load_yaml"]


@functools.cache
def _unique_key_loader() -> type:
    """``yaml.SafeLoader`` refusing duplicate mapping keys (built on first use)."""
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
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

    return UniqueKeyLoader


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` that raises ``yaml.YAMLError`` on a duplicate key."""
    import yaml

    return yaml.load(text, Loader=_unique_key_loader())  # noqa: S506 - a SafeLoader subclass
