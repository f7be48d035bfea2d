"""SAMML graphs as JSON (``schema`` versioned, docs/graph-json.md): every field
type-checked on the way in, never coerced."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._graph_items import DEFAULT_DEPTH, SCHEMA, Edge, GraphError, Node, TensorSpec

if TYPE_CHECKING:
    from ._graph import Graph

__all__ = ["GraphJson"]


class GraphJson:
    """The JSON half of :class:`~ir.Graph` (a mixin)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "name": self.name,
            "dtype": self.dtype,
            "meta": self.meta,
            "tensors": [{"name": t.name, "shape": list(t.shape), "format": t.format,
                         "role": t.role, **({"block": list(t.block)} if t.block else {}),
                         **({"buffer": t.buffer if t.buffer is True else list(t.buffer)}
                            if t.buffer else {}),
                         **({"onchip": True} if t.onchip else {})}
                        for t in self.tensors.values()],
            "nodes": [{"id": n.id, "op": n.op, "params": n.params}
                      for n in self.nodes.values()],
            "edges": [{"src": e.src, "dst": e.dst, "depth": e.depth,
                       **({"pinned": True} if e.pinned else {})} for e in self.edges],
        }

    def to_json(self, path: str | Path | None = None) -> str:
        text = json.dumps(self.to_dict(), indent=1)
        if path is not None:
            Path(path).write_text(text + "\n")
        return text

    @classmethod
    def from_dict(cls, data: Any) -> Graph:
        """A graph from parsed JSON; every field is type-checked (never coerced: a node id
        ``5`` is an error, not ``"5"``) and unknown keys are refused (a misspelt
        ``"dpeth"`` would otherwise silently mean the default)."""
        top = _fields(data, "graph", _GRAPH_KEYS)
        schema = top.get("schema")
        if "schema" not in top:
            raise GraphError(f"graph has no 'schema' key, so it is not samfuse graph JSON; "
                             f"expected \"schema\": {SCHEMA!r}")
        if schema != SCHEMA:
            raise GraphError(f"graph schema {schema!r} is not supported; expected {SCHEMA!r}")
        default_depth = top.get("default_depth", DEFAULT_DEPTH)
        nodes = []
        for k, n in enumerate(_items(top, "nodes", required=True)):
            n = _fields(n, f"nodes[{k}]", ("id", "op", "params"), ("id", "op"))
            params = n.get("params", {})
            if not isinstance(params, dict):
                raise GraphError(f"node {n['id']!r}: params {params!r} must be a JSON object")
            nodes.append(Node(_text(n, "id", f"nodes[{k}]"), _text(n, "op", f"nodes[{k}]"),
                              dict(params)))
        edges = []
        for k, e in enumerate(_items(top, "edges", required=True)):
            e = _fields(e, f"edges[{k}]", ("src", "dst", "depth", "pinned"), ("src", "dst"))
            pinned = e.get("pinned", False)
            if not isinstance(pinned, bool):
                raise GraphError(f"edges[{k}]: pinned {pinned!r:.60} must be true or false")
            edges.append(Edge(_text(e, "src", f"edges[{k}]"), _text(e, "dst", f"edges[{k}]"),
                              e.get("depth", default_depth), pinned=pinned))
        tensors = []
        for k, t in enumerate(_items(top, "tensors")):
            t = _fields(t, f"tensors[{k}]", ("name", "shape", "format", "role", "block",
                                              "buffer", "onchip"), ("name", "shape", "format"))
            name = _text(t, "name", f"tensors[{k}]")
            if not isinstance(t["shape"], list):
                raise GraphError(f"tensor {name!r}: shape {t['shape']!r} must be a list of "
                                 "ints >= 1")
            block = t.get("block")
            if block is not None and not isinstance(block, list):
                raise GraphError(f"tensor {name!r}: block {block!r} must be a list of ints")
            buffer = t.get("buffer", False)
            if not (isinstance(buffer, bool) or isinstance(buffer, list)
                    and all(isinstance(a, str) for a in buffer)):
                raise GraphError(f"tensor {name!r}: buffer {buffer!r:.60} must be true, false "
                                 "or a list of array names such as [\"vals\", \"crd1\"]")
            onchip = t.get("onchip", False)
            if not isinstance(onchip, bool):
                raise GraphError(f"tensor {name!r}: onchip {onchip!r:.60} must be true or false")
            tensors.append(TensorSpec(name, tuple(t["shape"]),
                                      _text(t, "format", f"tensor {name!r}"),
                                      _text(t, "role", f"tensor {name!r}", "input"),
                                      tuple(block) if block is not None else None,
                                      buffer if isinstance(buffer, bool) else tuple(buffer),
                                      onchip))
        meta = top.get("meta", {})
        if not isinstance(meta, dict):
            raise GraphError(f"graph meta {meta!r} must be a JSON object")
        return cls(_text(top, "name", "graph", "graph"), nodes, edges, tensors,
                   _text(top, "dtype", "graph", "float32"), meta)

    @classmethod
    def from_json(cls, source: str | Path) -> Graph:
        """Load from a path or a JSON string."""
        text = str(source)
        if not text.lstrip().startswith("{"):
            path = Path(source)
            try:
                text = path.read_text()
            except OSError as exc:
                raise GraphError(f"cannot read graph file {str(path)!r}: {exc.strerror}") \
                    from None
            except UnicodeDecodeError:
                raise GraphError(f"graph file {str(path)!r} is not text (expected JSON)") \
                    from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise GraphError(f"graph JSON is not valid JSON: {exc}") from None
        return cls.from_dict(data)


_GRAPH_KEYS = ("schema", "name", "dtype", "meta", "default_depth", "tensors", "nodes", "edges")


def _fields(obj: Any, where: str, known: tuple[str, ...],
            required: tuple[str, ...] = ()) -> dict[str, Any]:
    """``obj`` as a JSON object with only ``known`` keys and every ``required`` one."""
    if not isinstance(obj, dict):
        raise GraphError(f"{where} must be a JSON object, got {_json_type(obj)} {obj!r:.60}")
    unknown = [k for k in obj if k not in known]
    if unknown:
        raise GraphError(f"{where}: unknown key(s) {unknown}; expected {list(known)}")
    missing = [k for k in required if k not in obj]
    if missing:
        raise GraphError(f"{where}: missing key(s) {missing}")
    return obj


def _items(top: dict[str, Any], key: str, required: bool = False) -> list[Any]:
    if required and key not in top:
        raise GraphError(f"graph: missing key {key!r}")
    items = top.get(key, [])
    if not isinstance(items, list):
        raise GraphError(f"graph {key!r} must be a JSON list, got {_json_type(items)} "
                         f"{items!r:.60}")
    return items


def _text(obj: dict[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = obj.get(key, default)
    if not isinstance(value, str):
        raise GraphError(f"{where}: {key} {value!r:.60} must be a string, not "
                         f"{_json_type(value)}")
    return value


def _json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for messages."""
    for py, name in ((bool, "a boolean"), (int, "a number"), (float, "a number"),
                     (str, "a string"), (list, "a list"), (dict, "an object")):
        if isinstance(value, py):
            return name
    return "null"
