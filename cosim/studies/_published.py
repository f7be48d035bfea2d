"""Figures FuseFlow published, for side-by-side tables and plots (not used by any run).

Speed-ups over unfused (unfused cycles / schedule cycles) from FuseFlow's Figure 12, as
its artifact plots them (``scripts/plot_figure12.py`` of ``fuseflow-authors/
fuseflow-artifact`` @ 36cb1c6; the paper's text for the autoencoder), and the heuristic's
errors of its Table 3. ``None`` where FuseFlow reports no figure (it skips full fusion of
GraphSAGE on the small data sets' plot and of every model where it would not finish).
"""

from __future__ import annotations

__all__ = ["FIG12_SPEEDUP", "FIG14_COLLAB_GCN", "TABLE3_ERROR"]

#: (model, data set) -> (partial, full) speed-up over unfused
FIG12_SPEEDUP: dict[tuple[str, str], tuple[float | None, float | None]] = {
    ("gcn", "cora"): (1.63, 0.29),
    ("gcn", "cora-ml"): (1.88, 0.14),
    ("gcn", "dblp"): (1.49, 0.26),
    ("gcn", "collab"): (2.58, 0.019),
    ("gcn", "mag"): (2.13, 0.086),
    ("graphsage", "cora"): (2.10, None),
    ("graphsage", "cora-ml"): (1.85, None),
    ("graphsage", "dblp"): (2.02, None),
    ("graphsage", "collab"): (3.11, 0.028),
    ("graphsage", "mag"): (3.92, 0.035),
    ("bigbird", "block16"): (1.75, 2.70),
    ("bigbird", "block32"): (1.65, 2.45),
    ("bigbird", "block64"): (1.69, 2.52),
    ("autoencoder", "-"): (1.01, 1.94),
}

#: FuseFlow Figure 14 (GCN, OGB-Collab): schedule -> (FLOPs, memory accesses) / unfused's
FIG14_COLLAB_GCN: dict[str, tuple[float, float]] = {
    "partial": (1.0007, 0.794),
    "full": (18.6, 15.8),
}

#: FuseFlow Table 3 (OGB-Collab; GPT-3 at block 16): model -> mean |error| of the
#: heuristic's (FLOPs, bytes), in per cent
TABLE3_ERROR: dict[str, tuple[float, float]] = {
    "gcn": (2.8, 9.6),
    "graphsage": (2.6, 11.5),
    "gpt": (1.8, 5.7),
}
