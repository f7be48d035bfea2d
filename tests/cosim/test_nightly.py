"""The nightly regression: baselines, before/after reports, JUnit XML and HTML."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cosim import run_nightly
from cosim.studies._nightly import BASELINE_FIELDS

ROOT = Path(__file__).resolve().parents[2]

STUDY = """
name: tiny-nightly
workloads:
  - {kernel: spmv, size: 5, density: 0.5}
  - {kernel: add, size: 4, density: 0.5}
axes:
  depth: [2, 4]
"""


def _run(tmp_path: Path, **kw):
    study = tmp_path / "tiny.yaml"
    study.write_text(STUDY)
    return run_nightly(study, tmp_path / "out", tmp_path / "base.json", progress=False, **kw)


def test_baselines_are_written_on_request_and_then_match(tmp_path):
    first = _run(tmp_path)
    # 4 runs, each new in every baseline field
    assert first.ok and len(first.new) == 4 * len(BASELINE_FIELDS)
    assert not (tmp_path / "base.json").exists()
    _run(tmp_path, update=True)
    stored = json.loads((tmp_path / "base.json").read_text())["runs"]
    assert len(stored) == 4 and all(v["cycles"] > 0 for v in stored.values())
    again = _run(tmp_path)
    assert again.ok and not again.changes and not again.new


def test_a_cycle_change_fails_with_before_and_after(tmp_path):
    _run(tmp_path, update=True)
    doc = json.loads((tmp_path / "base.json").read_text())
    victim = sorted(doc["runs"])[0]
    old = doc["runs"][victim]["cycles"]
    doc["runs"][victim]["cycles"] = old + 10
    (tmp_path / "base.json").write_text(json.dumps(doc))
    res = _run(tmp_path)
    assert not res.ok and list(res.failures) == [victim]
    assert res.failures[victim].startswith(f"cycles {float(old + 10)} -> {float(old)} (")
    # a tolerance wide enough accepts it; the baseline file itself is untouched
    assert _run(tmp_path, tolerance=0.5).ok
    assert json.loads((tmp_path / "base.json").read_text())["runs"][victim]["cycles"] == \
        old + 10
    suite = ET.parse(tmp_path / "out" / "junit.xml").getroot().find("testsuite")
    cases = suite.findall("testcase")
    assert suite.get("tests") == "4" and len(cases) == 4
    # the last run (tolerance 0.5) passed: no failure elements
    assert not [c for c in cases if c.find("failure") is not None]
    _run(tmp_path)  # fails again: the report shows it
    suite = ET.parse(tmp_path / "out" / "junit.xml").getroot().find("testsuite")
    failed = [c for c in suite.findall("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == [victim] and suite.get("failures") == "1"
    page = (tmp_path / "out" / "report.html").read_text()
    assert "FAIL (1 run(s))" in page and "data:image/png;base64," in page


@pytest.mark.cosim
def test_quick_nightly_matches_the_committed_baselines(tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "nightly.py"), "--quick",
                          "--out", str(tmp_path)], capture_output=True, text=True,
                         timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "0 change(s) since the baselines, 0 new" in run.stdout
