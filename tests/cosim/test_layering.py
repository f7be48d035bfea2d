"""cosim's layers, read from the sources' imports (ast): ``cli → tuning → studies → runs →
backends``, each importing only from its own layer or below, and the study cache key that
follows the packages deciding results, not a list of files."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from cosim.runs._config import RESULT_PACKAGES, source_hash

COSIM = Path(__file__).resolve().parents[2] / "cosim"
#: subpackage -> layer; a module may import from its own layer or a lower one
LAYERS = {"backends": 0, "runs": 1, "studies": 2, "tuning": 3, "cli": 4}


def imported_modules(path: Path, package: str) -> set[str]:
    """Absolute names of every module ``path`` imports (function-local imports too)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                out.add(".".join([*base, *([node.module] if node.module else [])]))
            else:
                out.add(node.module or "")
    return out


def upward_imports(root: Path) -> list[str]:
    """``module -> imported`` for each import of a higher layer (or of the ``cosim``
    façade) by a module of a subpackage, under the ``cosim`` folder ``root``."""
    bad = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if len(rel.parts) == 1:
            continue  # cosim/__init__.py: the façade over every layer
        sub = rel.parts[0]
        package = ".".join(["cosim", *rel.parts[:-1]])
        for name in imported_modules(path, package):
            parts = name.split(".")
            if parts[0] != "cosim":
                continue
            target = LAYERS.get(parts[1]) if len(parts) > 1 else None
            if target is None or target > LAYERS[sub]:
                bad.append(f"cosim/{rel.as_posix()} -> {name}")
    return bad


def test_every_module_sits_in_a_layer():
    stray = [p.relative_to(COSIM).as_posix() for p in COSIM.rglob("*.py")
             if len(p.relative_to(COSIM).parts) > 1 and p.relative_to(COSIM).parts[0]
             not in LAYERS]
    top = sorted(p.name for p in COSIM.glob("*.py"))
    assert stray == [] and top == ["__init__.py"]


def test_no_module_imports_a_higher_layer():
    assert upward_imports(COSIM) == []


def test_the_study_runner_imports_nothing_from_the_cli():
    for path in (COSIM / "studies").glob("*.py"):
        names = imported_modules(path, "cosim.studies")
        assert not any(n.startswith("cosim.cli") for n in names), path.name


def test_the_check_finds_an_upward_import(tmp_path):
    """The checker itself: a study module importing the CLI, a run importing the
    façade, and a backend importing a run are each reported."""
    for sub in LAYERS:
        (tmp_path / sub).mkdir()
    (tmp_path / "studies" / "_x.py").write_text("def f():\n    from ..cli._model import A\n")
    (tmp_path / "runs" / "_y.py").write_text("import cosim\n")
    (tmp_path / "backends" / "_z.py").write_text("from cosim.runs import _files\n")
    (tmp_path / "cli" / "_ok.py").write_text("from ..backends import _backend\n")
    assert upward_imports(tmp_path) == ["cosim/backends/_z.py -> cosim.runs",
                                        "cosim/runs/_y.py -> cosim",
                                        "cosim/studies/_x.py -> cosim.cli._model"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A copy of the project's packages, to edit."""
    root = Path(__file__).resolve().parents[2]
    dst = tmp_path_factory.mktemp("tree")
    for package in ("ir", "compiler", "sim_models", "rtl_hls", "cosim"):
        shutil.copytree(root / package, dst / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def _touch(path: Path) -> None:
    path.write_text(path.read_text() + "\n# edited\n")


@pytest.mark.parametrize("edited", ["cosim/cli/_report.py", "cosim/cli/_main.py",
                                    "cosim/studies/_plot.py", "cosim/studies/_runner.py",
                                    "cosim/tuning/_bo.py"])
def test_editing_the_cli_plots_or_study_code_keeps_cached_studies(tree, edited):
    before = source_hash(tree)
    _touch(tree / edited)
    assert source_hash(tree) == before


@pytest.mark.parametrize("edited", ["ir/_tokens.py", "compiler/_lower.py",
                                    "sim_models/python/__init__.py",
                                    "cosim/backends/_backend.py", "cosim/runs/_config_run.py",
                                    "cosim/runs/_sweep.py"])
def test_editing_code_that_decides_results_changes_the_key(tree, edited):
    before = source_hash(tree)
    _touch(tree / edited)
    assert source_hash(tree) != before


def test_a_new_file_in_a_result_package_changes_the_key(tree):
    """The packages are walked: a file no list names still counts."""
    before = source_hash(tree)
    (tree / "cosim" / "runs" / "_new.py").write_text("X = 1\n")
    assert source_hash(tree) != before
    assert "cosim/runs" in RESULT_PACKAGES


def test_the_bundled_studies_are_found_by_name_and_shipped():
    """The YAML files in cosim/studies/bundled/ answer to their names and are the package
    data pyproject.toml ships."""
    import tomllib

    from cosim import bundled_studies, study_path

    files = sorted((COSIM / "studies" / "bundled").glob("*.yaml"))
    assert {p.stem for p in files} >= {"smoke", "nightly", "nightly-quick", "fig12-fusion"}
    assert {name: p.resolve() for name, p in bundled_studies().items()} == \
        {p.stem: p.resolve() for p in files}
    assert study_path("smoke").resolve() == COSIM / "studies" / "bundled" / "smoke.yaml"
    project = tomllib.loads((COSIM.parent / "pyproject.toml").read_text())
    globs = project["tool"]["setuptools"]["package-data"]["cosim"]
    assert all(any(p.relative_to(COSIM).match(g) for g in globs) for p in files)
