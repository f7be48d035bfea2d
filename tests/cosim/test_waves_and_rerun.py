"""Waveforms from the command line, kernels re-run alone, and honest RTL reports
(issue 25): ``--vcd DIR`` instead of an environment variable; ``model --out`` writes the
inputs each kernel read; the RTL counts no firings, so its reports say n/a, not 0."""

from __future__ import annotations

import json

import pytest

from cosim import RtlBackend, SystemCBackend
from cosim.cli import main

SPMV = "x(i) = B(i,j) * c(j)"


def _need(backend: type) -> None:
    reason = backend.unavailable()
    if reason:
        pytest.skip(reason)


def test_vcd_on_a_backend_without_waveforms_is_refused(spmv, capsys):
    assert main(["sim", str(spmv["graph"]), *spmv["inputs"], "--vcd",
                 str(spmv["dir"] / "w")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("samfuse: error: backend 'python' has no waveforms to dump; "
                          "backends with waveforms: ")
    assert not list((spmv["dir"]).glob("w/*"))


@pytest.mark.cosim
def test_sim_vcd_writes_a_systemc_waveform(spmv, capsys):
    _need(SystemCBackend)
    waves = spmv["dir"] / "w"
    assert main(["sim", str(spmv["graph"]), *spmv["inputs"], "--backend", "systemc",
                 "--vcd", str(waves)]) == 0
    vcd = waves / "einsum.systemc.vcd"
    assert f"waves      {vcd}" in capsys.readouterr().out
    text = vcd.read_text()
    assert "$enddefinitions" in text and "B_i_crd__x_i_crd" in text.replace(".", "_")


@pytest.mark.cosim
def test_rtl_reports_say_na_for_firings_and_cosim_vcd_writes_waves(spmv, capsys):
    _need(RtlBackend)
    waves = spmv["dir"] / "w"
    assert main(["sim", str(spmv["graph"]), *spmv["inputs"], "--backend", "rtl", "--json",
                 "--vcd", str(waves)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["firings"] is None and doc["cycles"] > 0
    fst = waves / "einsum.rtl.fst"
    assert fst.read_bytes()[:1] and fst.stat().st_size > 100
    assert main(["sim", str(spmv["graph"]), *spmv["inputs"], "--backend", "rtl"]) == 0
    out = capsys.readouterr().out
    assert "firings    n/a (the rtl backend counts tokens, not firings)" in out
    assert "0 firings/s" not in out
    assert main(["cosim", str(spmv["graph"]), *spmv["inputs"], "--backends", "python,rtl",
                 "--hw", "hbm2-u280", "--vcd", str(spmv["dir"] / "w2")]) == 0
    out = capsys.readouterr().out
    rtl_row = next(ln for ln in out.splitlines() if ln.startswith("rtl "))
    assert rtl_row.split()[3] == "n/a"
    assert (spmv["dir"] / "w2" / "einsum.rtl.fst").is_file()


def test_model_out_writes_what_each_kernel_read_and_sim_reruns_it(tmp_path, capsys):
    """Each kernel of the tiny GCN, re-run alone by ``sim`` from the files of
    ``model --out``, takes the cycles the model run reported for it."""
    pytest.importorskip("torch")
    out = tmp_path / "m"
    assert main(["model", "gcn", "--config", "tiny", "--out", str(out)]) == 0
    table = capsys.readouterr().out
    cycles = {ln.split()[0]: int(ln.split()[2]) for ln in table.splitlines()
              if ln.split() and ln.split()[0] in ("layers.0", "layers.1", "main")}
    assert len(cycles) == 3
    for graph in sorted(out.glob("*.json")):
        region = graph.name.rsplit(".", 2)[0]
        g = json.loads(graph.read_text())
        inputs = [t["name"] for t in g["tensors"] if t["role"] == "input"]
        files = {t: next(out.glob(f"{graph.stem}.{t}.*")) for t in inputs}
        argv = ["sim", str(graph), "--hw", "hbm2-u280", "--json"]
        for t, f in files.items():
            argv += ["--input", f"{t}={f}"]
        assert main(argv) == 0
        assert json.loads(capsys.readouterr().out)["cycles"] == cycles[region], graph.name
