"""Read a Vitis HLS solution's synthesis reports: each process's II and iteration latency.

``samfuse calibrate --vitis-solution DIR`` seeds its fit with them (HLS_TIMING_FACTS: a
pipelined loop's depth and II are design- and version-dependent, so they are read, not
assumed). Vitis writes ``DIR/syn/report/csynth.xml`` and one ``<module>_csynth.xml`` per
module; each ``<Loop>`` of a pipelined process carries ``<PipelineII>`` and
``<PipelineDepth>``, a pipelined function its ``<SummaryOfOverallLatency>`` with
``<PipelineInitiationInterval>`` and ``<PipelineDepth>``. samfuse's HLS processes are the
templates ``samfuse_<primitive>`` (Vitis suffixes instances ``_1``, ``_U0`` …), so a
module maps to the catalogue primitive its name starts with; others are ignored.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from ir import CATALOGUE

__all__ = ["ProcessTiming", "read_solution", "seed_from_solution", "CsynthError"]


class CsynthError(ValueError):
    """A solution folder without a readable synthesis report."""


class ProcessTiming:
    """One synthesized module: its name, the primitive it renders, II and depth."""

    def __init__(self, name: str, primitive: str, ii: int, depth: int) -> None:
        self.name, self.primitive, self.ii, self.depth = name, primitive, ii, depth

    def __repr__(self) -> str:
        return (f"ProcessTiming({self.name!r}, {self.primitive!r}, ii={self.ii}, "
                f"depth={self.depth})")


def _primitive(module: str) -> str | None:
    """The catalogue primitive of a Vitis module name (``samfuse_scan_compressed_1``)."""
    m = re.match(r"samfuse_([a-z0-9_]+)", module)
    if m is None:
        return None
    name = m.group(1)
    found = [p for p in CATALOGUE if name == p or name.startswith(p + "_")]
    return max(found, key=len) if found else None


def _int(elem: ET.Element | None) -> int | None:
    text = (elem.text or "").strip() if elem is not None else ""
    return int(text) if text.isdigit() else None


def _module_timing(name: str, root: ET.Element) -> ProcessTiming | None:
    """II and depth of a module: the slowest of its pipelined loops, else its own."""
    prim = _primitive(name)
    if prim is None:
        return None
    iis = [v for v in (_int(e) for e in root.iter("PipelineII")) if v]
    depths = [v for v in (_int(e) for e in root.iter("PipelineDepth")) if v]
    iis += [v for v in (_int(e) for e in root.iter("PipelineInitiationInterval")) if v]
    if not iis and not depths:
        return None
    return ProcessTiming(name, prim, max(iis, default=1), max(depths, default=1))


def read_solution(folder: str | Path) -> list[ProcessTiming]:
    """Every samfuse process the solution's reports describe (``syn/report/*.xml``)."""
    report = Path(folder) / "syn" / "report"
    files = sorted(report.glob("*csynth.xml")) if report.is_dir() else []
    if not files:
        raise CsynthError(f"Vitis solution {str(folder)!r}: no synthesis report "
                          f"(expected {report / 'csynth.xml'}; run csynth_design first)")
    out: dict[str, ProcessTiming] = {}
    for path in files:
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as exc:
            raise CsynthError(f"{path}: not a readable synthesis report ({exc})") from None
        modules = root.findall(".//ModuleInformation/Module")
        if modules:  # the top report lists every module
            for mod in modules:
                pt = _module_timing((mod.findtext("Name") or "").strip(), mod)
                if pt is not None:
                    out.setdefault(pt.name, pt)
        else:  # a per-module report: <TopModelName> or the file name
            name = (root.findtext(".//UserAssignments/TopModelName") or
                    path.name.removesuffix("_csynth.xml")).strip()
            pt = _module_timing(name, root)
            if pt is not None:
                out[pt.name] = pt
    return list(out.values())


def seed_from_solution(folder: str | Path) -> tuple[dict[str, int], dict[str, int]]:
    """Per primitive kind, the most common (ties: the larger) pipeline depth and II of its
    processes: the fit's starting ``latency`` and ``ii``."""
    procs = read_solution(folder)
    lat: dict[str, int] = {}
    ii: dict[str, int] = {}
    for prim in sorted({p.primitive for p in procs}):
        mine = [p for p in procs if p.primitive == prim]
        lat[prim] = _mode([p.depth for p in mine])
        ii[prim] = _mode([p.ii for p in mine])
    return lat, ii


def _mode(values: list[int]) -> int:
    counts = Counter(values)
    return max(counts, key=lambda v: (counts[v], v))
