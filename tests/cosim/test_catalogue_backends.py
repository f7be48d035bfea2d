"""Adding a primitive (docs/primitives.md): every catalogue entry is implemented by every
backend under the naming convention, read from the sources (no tool needed)."""

from __future__ import annotations

import re

import pytest

from ir import CATALOGUE, MEMORY_PRIMITIVES
from rtl_hls.hls import template_path
from rtl_hls.rtl.netlist import SV_DIR, _mem_module, module_name
from sim_models.python import ACTORS

DRIVER = SV_DIR.parents[2] / "sim_models" / "systemc" / "samfuse_driver.cpp"


def _systemc_models() -> dict[str, str]:
    """The driver's model table: primitive name -> the SystemC class it constructs."""
    text = DRIVER.read_text()
    table = text[text.index("models() {"):text.index("return table;")]
    return dict(re.findall(r'\{"(\w+)", (?:plain|with_fp|model)<(\w+)>', table))


@pytest.mark.parametrize("op", sorted(CATALOGUE))
def test_each_primitive_has_a_python_actor_named_for_it(op):
    assert ACTORS[op].op == op


@pytest.mark.parametrize("op", sorted(CATALOGUE))
def test_each_primitive_has_a_systemc_class_named_as_its_python_actor(op):
    assert _systemc_models().get(op) == ACTORS[op].__name__


def test_the_systemc_driver_registers_nothing_outside_the_catalogue():
    assert set(_systemc_models()) == set(CATALOGUE)


@pytest.mark.parametrize("op", sorted(CATALOGUE))
def test_each_primitive_has_an_sv_module_by_convention(op):
    path = SV_DIR / f"{module_name(op)}.sv"
    assert re.search(rf"^module {module_name(op)}\b", path.read_text(), re.M), path


@pytest.mark.parametrize("op", sorted(MEMORY_PRIMITIVES))
def test_each_memory_primitive_has_a_memory_capable_sv_module(op):
    module, _ = _mem_module(op)
    assert re.search(rf"^module {module}\b", (SV_DIR / f"{module}.sv").read_text(), re.M)


@pytest.mark.parametrize("op", sorted(CATALOGUE))
def test_each_primitive_has_an_hls_template_defining_its_function(op):
    assert re.search(rf"\bvoid samfuse_{op}\(", template_path(op).read_text())
