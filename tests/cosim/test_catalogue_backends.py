"""Adding a primitive (docs/primitives.md): every catalogue entry is implemented by every
backend under the naming convention, read from the sources (no tool needed), and a
primitive whose parameters the catalogue's schema describes (passed as given, derived by
the elaboration) needs no backend registry entry."""

from __future__ import annotations

import re

import pytest

from ir import CATALOGUE, DERIVED_PARAMS, MEMORY_PRIMITIVES
from rtl_hls.hls import template_path
from rtl_hls.rtl.netlist import SV_DIR, _mem_module, module_name
from sim_models.python import ACTORS

DRIVER = SV_DIR.parents[2] / "sim_models" / "systemc" / "samfuse_driver.cpp"


def _systemc_models() -> dict[str, str]:
    """The driver's model table, its own entries and those generated from the catalogue:
    primitive name -> the SystemC class it constructs."""
    from cosim.backends._systemc_load import generated_models

    text = DRIVER.read_text()
    table = text[text.index("models() {"):text.index("return table;")] + generated_models()
    return dict(re.findall(r'\{"(\w+)", (?:model|from_ints)<(\w+)>', table))


@pytest.mark.parametrize("op", sorted(CATALOGUE))
def test_each_primitive_has_a_python_actor_named_for_it(op):
    assert ACTORS[op].op == op


@pytest.mark.parametrize("op", sorted(CATALOGUE))
def test_each_primitive_has_a_systemc_class_named_as_its_python_actor(op):
    assert _systemc_models().get(op) == ACTORS[op].__name__


def test_the_systemc_driver_registers_nothing_outside_the_catalogue():
    assert set(_systemc_models()) == set(CATALOGUE)


def test_the_systemc_driver_lists_only_what_the_schema_cannot_describe():
    """Its own entries are the primitives with a constructor of their own (tensor data,
    encoded operators); a schema-described primitive's entry is generated."""
    from cosim.backends._systemc_child import _NODE_ARGS

    text = DRIVER.read_text()
    assert set(re.findall(r'\{"(\w+)", model<', text)) == set(_NODE_ARGS)


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


# -- the parameter schema: passed and derived parameters need no registry entry ------------

def _registries() -> dict[str, dict]:
    from cosim.backends._systemc_child import _NODE_ARGS
    from cosim.backends._systemc_load import DERIVED_INTS
    from rtl_hls.hls.codegen import _DERIVED_TPARAMS, _TEMPLATE_PARAMS
    from rtl_hls.rtl.netlist import _DERIVED_PARAMS, _SCALAR_PARAMS

    return {"systemc": (_NODE_ARGS, DERIVED_INTS), "rtl": (_SCALAR_PARAMS, _DERIVED_PARAMS),
            "hls": (_TEMPLATE_PARAMS, _DERIVED_TPARAMS)}


@pytest.mark.parametrize("backend", ["systemc", "rtl", "hls"])
def test_each_backend_renders_every_derived_parameter(backend):
    _, derived = _registries()[backend]
    assert set(derived) == set(DERIVED_PARAMS)
    assert {w for p in CATALOGUE.values() for w in p.derived} <= set(DERIVED_PARAMS)


@pytest.mark.parametrize("backend", ["systemc", "rtl", "hls"])
def test_schema_primitives_have_no_registry_entry(backend):
    """A primitive whose implementation parameters are all passed or derived is rendered
    from the catalogue; only the RTL's lane split keeps an entry, for its range check. A
    position split's windows are a list each backend spells in its own syntax (a
    parameter pack, a packed vector, constructor words), so it keeps one everywhere."""
    registry, _ = _registries()[backend]
    described = {op for op, p in CATALOGUE.items() if p.passed_params or p.derived}
    assert described & set(registry) <= ({"lane_split"} if backend == "rtl" else set())
    assert described >= {"lane_split", "lane_combine", "lane_combine2",
                         "spacc", "spacc2", "spacc3"}
    assert "position_split" in registry


def test_the_elaboration_gives_the_passed_parameters_in_order(unchecked_graphs):
    """One lane's split, on its own (the load-time rule wants every lane)."""
    from ir import GraphBuilder, elaborate

    g = GraphBuilder("split")
    g.tensor("a", (9,), "c")
    g.tensor("x", (9,), "c", role="output")
    g.node("r", "root")
    g.node("ai", "scan_compressed", tensor="a", level=0)
    g.node("s", "lane_split", lanes=3, lane=1, lo=2, hi=7)
    g.node("v", "array", tensor="a")
    g.node("xi", "level_writer", tensor="x", level=0)
    g.node("xv", "value_writer", tensor="x")
    for src, dst in [("r.ref", "ai.ref_in"), ("ai.crd", "s.crd_in"), ("ai.ref", "s.ref_in"),
                     ("s.ref", "v.ref"), ("s.crd", "xi.crd"), ("v.val", "xv.val")]:
        g.edge(src, dst)
    nodes = elaborate(g.build()).nodes
    assert nodes["s"].given == (("lanes", 3), ("lane", 1), ("lo", 2), ("hi", 7))
    assert nodes["v"].given == nodes["ai"].given == ()
