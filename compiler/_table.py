"""The fusion table: the lowering's plan, one cell per (index, tensor view).

As in FuseFlow (Lacouture et al., ASPLOS 2026), the rows are the dataflow order's index
variables plus a final ``val`` row, the columns are the tensor views (each access of the
expression, then the output), and a cell lists the dataflow nodes created for that view
at that index — or a named reference (``→ isect_k``) to a node another cell creates, when
the view's stream at that index comes from it. ``_lower.py`` fills the table as it emits
each node, so it is the plan the graph was built from, not a re-derivation; every graph
node is created in exactly one cell. It travels JSON-serialisably in
``graph.meta["fusion_table"]``; :func:`fusion_table` reads it back and ``str()`` prints it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ir import Graph

__all__ = ["Entry", "FusionTable", "fusion_table", "VAL_ROW"]

#: the last row: value arrays, ALUs, reducers, accumulators and the value writer
VAL_ROW = "val"


@dataclass(frozen=True)
class Entry:
    """One node in a cell: created there, or (``ref``) created by another cell."""

    node: str
    label: str  # primitive, with its op: "scan_compressed", "alu mul", "reduce sum"
    ref: bool = False

    def __str__(self) -> str:
        return f"→ {self.node}" if self.ref else f"{self.label} {self.node}"


@dataclass
class FusionTable:
    """Rows (indices + ``val``) × columns (tensor views + output) → cell entries."""

    rows: list[str]
    columns: list[str]
    cells: dict[tuple[str, str], list[Entry]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        #: rows and columns as sets: a fused layer's table has thousands of columns and
        #: :meth:`add` checks every entry's cell (list lookups took a tenth of its lowering)
        self._rows, self._columns = set(self.rows), set(self.columns)

    def add_column(self, text: str) -> str:
        """Append a column labelled ``text`` (``text#2``, ``text#3``… if taken); its label."""
        n, label = 1, text
        while label in self._columns:
            n += 1
            label = f"{text}#{n}"
        self.columns.append(label)
        self._columns.add(label)
        return label

    def cell(self, row: str, column: str) -> list[Entry]:
        """The entries of one cell (empty when nothing happens there)."""
        if row not in self._rows or column not in self._columns:
            raise KeyError(f"no cell ({row!r}, {column!r}); rows are {self.rows}, "
                           f"columns are {self.columns}")
        return self.cells.get((row, column), [])

    def add(self, row: str, column: str, entry: Entry) -> None:
        """Record ``entry``; a reference already in the cell is not repeated."""
        assert row in self._rows and column in self._columns, (row, column)
        cell = self.cells.setdefault((row, column), [])
        if entry.ref and entry in cell:
            return
        cell.append(entry)

    def created(self) -> dict[str, tuple[str, str]]:
        """Node id → the (row, column) of the cell that creates it."""
        out: dict[str, tuple[str, str]] = {}
        for where, entries in self.cells.items():
            for e in entries:
                if not e.ref:
                    assert e.node not in out, f"node {e.node} created twice"
                    out[e.node] = where
        return out

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable form listing only the non-empty cells (a fused layer's
        table has hundreds of rows and columns, almost all empty): ``cells`` holds
        ``[row, column, [[node, label, is_ref], ...]]`` with row and column numbers."""
        row, col = ({r: n for n, r in enumerate(self.rows)},
                    {c: n for n, c in enumerate(self.columns)})
        return {"rows": list(self.rows), "columns": list(self.columns),
                "cells": [[row[r], col[c], [[e.node, e.label, e.ref] for e in entries]]
                          for (r, c), entries in self.cells.items() if entries]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FusionTable:
        rows, cols = list(data["rows"]), list(data["columns"])
        table = cls(rows, cols)
        for r, c, entries in data["cells"]:
            table.cells[(rows[r], cols[c])] = [Entry(n, lab, bool(ref))
                                               for n, lab, ref in entries]
        return table

    def __str__(self) -> str:
        """An aligned text table; a cell with several entries lists them one per line."""
        head = ["", *self.columns]
        body: list[list[list[str]]] = [
            [[r], *[[str(e) for e in self.cells.get((r, c), [])] or [""]
                    for c in self.columns]] for r in self.rows]
        widths = [max([len(head[k])] + [len(s) for line in body for s in line[k]])
                  for k in range(len(head))]

        def fmt(cells: list[str]) -> str:
            return " | ".join(s.ljust(w) for s, w in zip(cells, widths, strict=True)).rstrip()

        out = [fmt(head), "-+-".join("-" * w for w in widths)]
        for line in body:
            height = max(len(c) for c in line)
            for n in range(height):
                out.append(fmt([c[n] if n < len(c) else "" for c in line]))
        return "\n".join(out)


def fusion_table(graph: Graph) -> FusionTable:
    """The fusion table the compiler recorded for ``graph`` (from ``graph.meta``)."""
    data = graph.meta.get("fusion_table")
    if data is None:
        raise ValueError(f"graph {graph.name!r} has no fusion table in its meta; only "
                         "graphs made by compiler.compile_expression carry one")
    return FusionTable.from_json(data)
