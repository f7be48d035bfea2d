"""The README's tour, run as written (issue 25): its commands are parsed from README.md and
run one after another in an empty temporary folder, as a newcomer would after setup.

Two commands run at a smaller size, to keep the test near a minute: the GCN at its
``tiny`` configuration, and BigBird at ``small`` in 4x4 blocks (its block size) instead
of ``medium`` in 16x16. Where SystemC is missing, the co-simulation compares the Python
model with itself instead (``python,python`` still runs the comparison)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import numpy as np
import pytest
import scipy.io

from cosim import SystemCBackend
from cosim.cli import main

ROOT = Path(__file__).resolve().parents[2]
#: the tour at test size: (command words that select it, replacement of its words)
SMALLER = {("model", "gcn"): {"--table": ["--table", "--config", "tiny"]},
           ("model", "bigbird"): {"medium": ["small"], "16": ["4"]}}


def tour_commands(readme: str) -> list[list[str]]:
    """The argument lists of the ``samfuse`` commands in the README's "A short tour"
    block (continuation lines joined, comments dropped)."""
    section = readme.split("## A short tour", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, "README.md: no bash block under 'A short tour'"
    commands = []
    for line in block.group(1).replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if words:
            assert words[0].endswith("samfuse"), f"tour line is not a samfuse command: {line}"
            commands.append(words[1:])
    return commands


def _at_test_size(argv: list[str]) -> list[str]:
    for head, swaps in SMALLER.items():
        if tuple(argv[:2]) == head:
            return [w for word in argv for w in swaps.get(word, [word])]
    if argv[0] == "cosim" and SystemCBackend.unavailable():
        return [w.replace("systemc", "python") for w in argv]
    return argv


def test_the_tour_parses_to_the_commands_it_shows():
    commands = tour_commands((ROOT / "README.md").read_text())
    assert commands[0] == ["example-data"]  # the tour makes its own inputs first
    assert [c[0] for c in commands] == ["example-data", "compile", "sim", "show", "cosim",
                                        "model", "compile", "sim", "model", "study", "plot"]


@pytest.mark.slow
def test_the_readme_tour_runs_in_an_empty_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for argv in tour_commands((ROOT / "README.md").read_text()):
        argv = _at_test_size(argv)
        rc = main(argv)
        out, err = capsys.readouterr()
        assert rc == 0, (argv, out[-2000:], err[-2000:])
        assert "Traceback" not in err
    made = {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()}
    assert {"b.mtx", "c.npy", "g.json", "g.svg", "g4.json", "traces/einsum.python.trace",
            "studies/out/smoke/results.parquet", "studies/out/smoke/orders.png"} <= made
    # the tour's inputs are what the README says: the karate club and 34x16 features
    B = scipy.io.mmread(tmp_path / "b.mtx")
    assert B.shape == (34, 34) and B.nnz == 156
    assert np.load(tmp_path / "c.npy").shape == (34, 16)


def test_the_readme_model_example_prints_what_samfuse_model_prints(tmp_path, monkeypatch,
                                                                   capsys):
    """The README's "Whole models from Python" example said it ran "as `samfuse model`
    runs" but left out the command's on-chip buffers (4.7x its cycles at ``small``). Run
    at the ``tiny`` configuration, it must give the command's cycles and DRAM bytes."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("Whole models from Python:", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert 'GCN.from_config("small")' in code and "print(" in code
    names: dict = {}
    exec(compile(code.replace('"small"', '"tiny"'), "README.md", "exec"), names)
    capsys.readouterr()
    monkeypatch.chdir(tmp_path)
    assert main(["model", "gcn", "--config", "tiny", "--schedule", "partial", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    run = names["run"]
    assert (run.cycles, run.dram_read_bytes) == (cli["cycles"], cli["dram_read_bytes"])
