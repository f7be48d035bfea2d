"""docs/cli.md's example outputs are what the commands print (issue 25: the demo was
documented as 18 nodes and 8402 cycles while it printed 19 and 8401).

Every ```` ``` ```` block of docs/cli.md that starts with ``$ samfuse …`` is run in a
folder holding the README tour's inputs and first graph; each documented line must come
out, in order, with only wall-clock figures (compile time, wall time, rates) masked. A
line ending in ``...`` fixes its beginning; a JSON example fixes every key it shows."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from test_tour import tour_commands

from cosim.cli import main

ROOT = Path(__file__).resolve().parents[2]
#: lines whose figures are the host's speed, not the simulation's
WALL_CLOCK = (re.compile(r"^(wall time|throughput) .*"), re.compile(r" in [0-9.]+ ms;"))


def examples(doc: str) -> list[tuple[list[str], list[str]]]:
    """(argv, documented output lines) of each ``$ samfuse`` block."""
    found = []
    for block in re.findall(r"```\n(\$ samfuse .*?)```", doc, re.S):
        first, *rest = block.rstrip("\n").split("\n")
        found.append((shlex.split(first[2:])[1:], rest))
    return found


def _mask(line: str) -> str:
    line = " ".join(line.split())
    for pattern in WALL_CLOCK:
        line = pattern.sub(lambda m: re.sub(r"[0-9][0-9.,]*", "#", m.group(0)), line)
    return line


def _check_lines(documented: list[str], printed: list[str]) -> None:
    got = iter(_mask(p) for p in printed)
    for line in documented:
        want = _mask(line)
        if want == "...":
            continue
        prefix = want.endswith("...")
        want = want.removesuffix("...").rstrip()
        assert any((g.startswith(want) if prefix else g == want) for g in got), \
            f"documented line not printed (in order): {line!r}\nprinted:\n" + \
            "\n".join(printed)


def _check_json(documented: list[str], printed: str) -> None:
    got = json.loads(printed)
    shown = re.findall(r'"(\w+)": ("[^"]*"|\[[^\]]*\]|[-+0-9.e]+)', " ".join(documented))
    assert shown, documented
    for key, value in shown:
        assert got[key] == json.loads(value), (key, got[key], value)


def _docs() -> list[tuple[list[str], list[str]]]:
    return examples((ROOT / "docs" / "cli.md").read_text())


def test_the_examples_are_found():
    assert [argv[0] for argv, _ in _docs()] == ["sim", "hw", "hw", "demo"]


@pytest.mark.parametrize("argv, documented", [
    pytest.param(argv, lines, id=" ".join(argv)) for argv, lines in _docs()])
def test_a_documented_output_is_what_the_command_prints(tmp_path, monkeypatch, capsys,
                                                        argv, documented):
    monkeypatch.chdir(tmp_path)
    tour = tour_commands((ROOT / "README.md").read_text())
    for setup in tour[:2]:  # example-data, then the first compile: b.mtx, c.npy, g.json
        assert main(setup) == 0
    capsys.readouterr()
    assert main(argv) == 0
    printed = capsys.readouterr().out
    if documented[0].startswith("{"):
        _check_json(documented, printed)
    else:
        _check_lines(documented, printed.splitlines())
        if "..." not in "".join(documented):  # a full example: nothing more is printed
            assert len(printed.splitlines()) == len(documented), printed
