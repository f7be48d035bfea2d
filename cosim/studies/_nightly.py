"""The nightly regression: a bundled study, checked against stored baselines and across
backends, reported as JUnit XML (for any CI system) and one self-contained HTML page.

A run fails the nightly when its backends disagree, its result differs from the
numpy/torch reference, a backend errors, or its cycles or bytes moved changed beyond the
tolerance since the baselines were stored. Baselines change only on purpose
(``update=True``), so a timing change is always seen by a person before it is accepted.
"""

from __future__ import annotations

import base64
import html
import json
import math
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..runs._files import write_atomic
from ._runner import run_study
from ._spec import load_study

__all__ = ["run_nightly", "NightlyResult", "Change", "run_identity", "BASELINE_FIELDS"]

#: measured quantities kept in the baselines: cycles, the stream bytes the heuristic is
#: checked against, and the off-chip traffic of the memory system
BASELINE_FIELDS = ("cycles", "bytes_moved", "dram_read_bytes", "dram_write_bytes")


def run_identity(row: dict[str, Any]) -> str:
    """What a baseline entry is keyed by: the run's configuration, not the code's hash
    (a run with lanes, blocks or a re-association adds them, so a scalar one-lane run
    as written keeps the key it always had)."""
    key = "|".join(str(row.get(k)) for k in ("workload", "schedule", "order", "depth",
                                                "dtype", "seed", "backend", "hw", "hw_set"))
    if row.get("par"):
        key += "|" + "|".join(str(row.get(k)) for k in ("par", "partition", "lane_buffer"))
    if (row.get("block") or 1) > 1:
        key += f"|block={row['block']}"
    if row.get("assoc") not in (None, "as-written"):
        key += f"|assoc={row['assoc']}"
    if row.get("buffer") not in (None, "none"):
        key += f"|buffer={row['buffer']}"
    return key


@dataclass(frozen=True)
class Change:
    """A measured quantity that moved since the baselines (``before`` None: a new run)."""

    run: str
    field: str
    before: float | None
    after: float | None

    @property
    def relative(self) -> float:
        if self.before in (None, 0) or self.after is None:
            return math.inf
        return (self.after - self.before) / self.before

    def describe(self) -> str:
        """The change without the run's name: ``cycles 743.0 -> 801.0 (+7.8%)``."""
        if self.before is None:
            return f"{self.field} {self.after} (new, no baseline)"
        if self.after is None:
            return f"{self.field} {self.before} -> none"
        return f"{self.field} {self.before} -> {self.after} ({self.relative:+.1%})"

    def __str__(self) -> str:
        return f"{self.run}: {self.describe()}"


@dataclass
class NightlyResult:
    rows: list[dict[str, Any]]
    failures: dict[str, str]  # run identity -> why it failed
    changes: list[Change]
    new: list[Change]
    seconds: float
    reports: list[Path] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


def _number(x: Any) -> float | None:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return float(x)


def _compare(rows: Sequence[dict[str, Any]], baselines: dict[str, dict[str, float]],
             tolerance: float) -> tuple[list[Change], list[Change]]:
    changed, new = [], []
    for row in rows:
        rid = run_identity(row)
        before = baselines.get(rid)
        for f in BASELINE_FIELDS:
            after = _number(row.get(f))
            if before is None:
                if after is not None:
                    new.append(Change(rid, f, None, after))
                continue
            was = _number(before.get(f))
            if was == after:
                continue
            ch = Change(rid, f, was, after)
            if was is None or after is None or abs(ch.relative) > tolerance:
                changed.append(ch)
    return changed, new


def _failures(rows: Sequence[dict[str, Any]], changes: Sequence[Change]) -> dict[str, str]:
    why: dict[str, str] = {}
    for row in rows:
        status = row.get("status")
        if status == "ok":
            continue
        text = {"mismatch": "backends disagree (outputs, cycles or traces)",
                "wrong": "output differs from the numpy/torch reference"}.get(
            status, row.get("error") or str(status))
        why[run_identity(row)] = text
    for ch in changes:
        why[ch.run] = f"{why[ch.run]}; {ch.describe()}" if ch.run in why else ch.describe()
    return why


def baselines_of(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    return {run_identity(r): {f: _number(r.get(f)) for f in BASELINE_FIELDS}
            for r in rows if r.get("status") == "ok"}


def junit_xml(result: NightlyResult, name: str) -> str:
    """One ``testcase`` per run (backend row); failures carry the reason."""
    suite = ET.Element("testsuite", name=name, tests=str(len(result.rows)),
                       failures=str(len(result.failures)), errors="0",
                       time=f"{result.seconds:.3f}")
    for row in result.rows:
        rid = run_identity(row)
        case = ET.SubElement(suite, "testcase", classname=f"{name}.{row['workload']}",
                             name=rid, time=f"{row.get('run_seconds') or 0:.3f}")
        if rid in result.failures:
            fail = ET.SubElement(case, "failure", message=result.failures[rid][:200])
            fail.text = json.dumps({k: v for k, v in row.items() if v is not None},
                                   indent=1, default=str)
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def _table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    def cell(v: Any) -> str:
        return f"<td>{html.escape('' if v is None else str(v))}</td>"

    body = "".join("<tr>" + "".join(cell(r.get(c)) for c in columns) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def html_report(result: NightlyResult, name: str, figures: dict[str, bytes]) -> str:
    """A self-contained page: verdict, failures, timing changes, figures, every run."""
    verdict = "PASS" if result.ok else f"FAIL ({len(result.failures)} run(s))"
    parts = [f"<h1>samfuse nightly: {html.escape(name)}</h1>",
             f"<p><b>{verdict}</b>: {len(result.rows)} runs in {result.seconds:.0f} s; "
             f"{len(result.changes)} change(s) beyond tolerance, {len(result.new)} new "
             "measurement(s) without a baseline.</p>"]
    if result.failures:
        parts += ["<h2>Failures</h2>", _table([{"run": k, "why": v}
                                               for k, v in result.failures.items()],
                                              ["run", "why"])]
    if result.changes:
        parts += ["<h2>Changes since the baselines</h2>", _table(
            [{"run": c.run, "field": c.field, "before": c.before, "after": c.after,
              "change": "" if math.isinf(c.relative) else f"{c.relative:+.2%}"}
             for c in result.changes], ["run", "field", "before", "after", "change"])]
    for title, png in figures.items():
        data = base64.b64encode(png).decode()
        parts += [f"<h2>{html.escape(title)}</h2>",
                  f'<img alt="{html.escape(title)}" src="data:image/png;base64,{data}">']
    parts += ["<h2>Runs</h2>", _table(result.rows, [
        "workload", "schedule", "order", "depth", "dtype", "hw", "hw_set", "backend",
        "status", "cycles", "bytes_moved", "dram_read_bytes", "dram_write_bytes", "firings",
        "est_bytes", "wall_seconds", "error"])]
    style = "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}" \
        "td,th{border:1px solid #ccc;padding:2px 6px;font-size:small}img{max-width:48em}"
    return f"<!doctype html><html><head><meta charset='utf-8'><title>samfuse nightly " \
        f"{html.escape(name)}</title><style>{style}</style></head><body>" + \
        "\n".join(parts) + "</body></html>\n"


def _figures(rows: list[dict[str, Any]]) -> dict[str, bytes]:
    """PNG figures the rows can make (others are skipped: e.g. no model runs)."""
    import io

    import pandas as pd

    from ._plot import PlotError, plot_to

    frame = pd.DataFrame(rows)
    out = {}
    for kind, title in (("speedup", "Fusion speed-up over unfused"),
                        ("depth", "Cycles against FIFO depth"),
                        ("heuristic", "Heuristic vs measured bytes")):
        buf = io.BytesIO()
        try:
            plot_to(frame, kind, buf)
        except PlotError:
            continue
        out[title] = buf.getvalue()
    return out


def run_nightly(study: str | Path, out: str | Path, baselines: str | Path, *,
                update: bool = False, tolerance: float = 0.0, workers: int = 2,
                dask: str | None = None, progress: bool = True) -> NightlyResult:
    """Run ``study`` into ``out``, compare with ``baselines`` (JSON; rewritten when
    ``update``), write ``junit.xml`` and ``report.html`` into ``out``."""
    start = time.perf_counter()
    spec = load_study(Path(study))
    out, base_path = Path(out), Path(baselines)
    res = run_study(spec, out / "study", workers=workers, dask=dask, progress=progress)
    stored = json.loads(base_path.read_text())["runs"] if base_path.exists() else {}
    changes, new = _compare(res.rows, stored, tolerance)
    failures = _failures(res.rows, [] if update else changes)
    result = NightlyResult(res.rows, failures, changes, new, time.perf_counter() - start)
    if update:
        doc = {"study": spec.name, "tolerance_note": "cycles are exact: any change is shown",
               "runs": baselines_of(res.rows)}
        base_path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(base_path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
    junit, page = out / "junit.xml", out / "report.html"
    write_atomic(junit, junit_xml(result, spec.name))
    write_atomic(page, html_report(result, spec.name, _figures(res.rows)))
    result.reports = [junit, page]
    return result
