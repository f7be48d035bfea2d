"""BaCO's method on a :class:`TuneSpace`: GP surrogates and a feasibility-weighted log EI.

Points are embedded so that one standard kernel per parameter type gives the distance
BaCO uses for it: fusion boundaries as 0/1 bits (an RBF on them is an exponentiated
Hamming distance), each region's order as its Kendall embedding (one ±1 feature per
index pair, so an RBF on it is the Mallows kernel, ``exp(-λ·discordant pairs)``) and
the ordinal knobs (FIFO depth, hardware values, log2-scaled) and the FLOPs/bytes
heuristic's log cycles — the cheap prior — under a Matérn kernel with one lengthscale
each. The objective's GP models log values of feasible points; a second GP on 0/1
labels of all points estimates the probability that a point runs (unknown constraints:
deadlocks, on-chip overflow, wrong results), which multiplies the expected improvement.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from ._space import Point, TuneSpace

__all__ = ["Encoder", "Proposal", "propose"]

#: candidate pool when the space is too large to score every point
POOL = 384
#: rounds of local search on the acquisition from its best candidates
LOCAL_ROUNDS = 3


@dataclass(frozen=True)
class Proposal:
    """A point to evaluate and why: its log EI, feasibility probability and score."""

    point: Point
    log_ei: float
    p_feasible: float

    @property
    def score(self) -> float:
        return self.log_ei + math.log(max(self.p_feasible, 1e-12))


class Encoder:
    """Feature vectors of points, in three column groups (cuts, orders, numeric)."""

    def __init__(self, space: TuneSpace, points: Sequence[Point]) -> None:
        self.space = space
        self.cut_cols = list(range(space.n - 1))
        spans = sorted({s for p in points for s in space.regions(p.cuts)
                        if len(space.options(*s)) > 1})
        self.pairs: dict[tuple[int, int], list[tuple[str, str]]] = {}
        for s in spans:
            names = sorted({v for o in space.options(*s) if o for v in o})
            self.pairs[s] = list(itertools.combinations(names, 2))
        n_order = sum(len(v) for v in self.pairs.values())
        self.order_cols = list(range(space.n - 1, space.n - 1 + n_order))
        n_num = (len(space.depths) > 1) + len(space.hw_knobs) + (len(space.lanes) > 1) + \
            (len(space.partitions) > 1) + (len(space.blocks) > 1) + \
            (len(space.assocs) > 1) + (len(space.buffers) > 1) + 1
        start = space.n - 1 + n_order
        self.num_cols = list(range(start, start + n_num))
        heur = [math.log(max(space.heuristic(p), 1.0)) for p in points]
        self.h_lo, self.h_hi = min(heur), max(heur)
        self._rows: dict[Point, list[float]] = {}

    @classmethod
    def of(cls, space: TuneSpace, points: Sequence[Point], complete: bool) -> Encoder:
        """An encoder for these points; for a listed space, one kept for every call."""
        if not complete:
            return cls(space, points)
        if "_encoder" not in space.__dict__:
            space.__dict__["_encoder"] = cls(space, space.all_points())
        return space.__dict__["_encoder"]

    def __call__(self, points: Sequence[Point]) -> list[list[float]]:
        rows = self._rows
        for p in points:
            if p not in rows:
                rows[p] = self.row(p)
        return [rows[p] for p in points]

    def row(self, p: Point) -> list[float]:
        sp = self.space
        out = [float(c) for c in p.cuts]
        chosen = dict(zip(sp.regions(p.cuts), p.orders, strict=True))
        for s, pairs in self.pairs.items():
            order = chosen.get(s, ...)
            if order is ... or p.assoc != "as-written":  # other statements, other names
                out += [0.0] * len(pairs)
                continue
            order = order or sp.span(*s)[1]
            pos = {v: n for n, v in enumerate(order)}
            w = 1.0 / math.sqrt(len(pairs))
            out += [w if pos[a] < pos[b] else -w for a, b in pairs]
        if len(sp.depths) > 1:
            out.append(_scaled(p.depth, sp.depths))
        for (_, values), (_, v) in zip(sp.hw_knobs, p.hw, strict=True):
            out.append(_scaled(v, values))
        if len(sp.lanes) > 1:
            out.append(_scaled(p.lanes, sp.lanes))
        if len(sp.partitions) > 1:
            out.append(float(sp.partitions.index(p.partition)))
        if len(sp.blocks) > 1:
            out.append(_scaled(p.block, sp.blocks))
        if len(sp.assocs) > 1:
            out.append(sp.assocs.index(p.assoc) / (len(sp.assocs) - 1))
        if len(sp.buffers) > 1:
            out.append(float(sp.buffers.index(p.buffer)))
        h = math.log(max(sp.heuristic(p), 1.0))
        out.append((h - self.h_lo) / (self.h_hi - self.h_lo) if self.h_hi > self.h_lo else 0.5)
        return out


def _scaled(value: object, choices: Sequence[object]) -> float:
    """An ordinal value's log2 position between the smallest and largest choice."""
    def num(v: object) -> float:
        return math.log2(float(v)) if v is not None else math.log2(
            max(float(c) for c in choices if c is not None) * 2 if any(
                c is not None for c in choices) else 2.0)
    lo, hi = min(num(c) for c in choices), max(num(c) for c in choices)
    return (num(value) - lo) / (hi - lo) if hi > lo else 0.0


def _kernel(enc: Encoder) -> object:
    from gpytorch.kernels import MaternKernel, ProductKernel, RBFKernel, ScaleKernel
    from gpytorch.priors import LogNormalPrior

    def prior(d: int) -> LogNormalPrior:
        return LogNormalPrior(math.sqrt(2) + 0.5 * math.log(max(d, 1)), math.sqrt(3))

    parts = [RBFKernel(active_dims=enc.cut_cols, lengthscale_prior=prior(len(enc.cut_cols)))]
    if enc.order_cols:
        parts.append(RBFKernel(active_dims=enc.order_cols,
                               lengthscale_prior=prior(len(enc.order_cols))))
    parts.append(MaternKernel(nu=2.5, ard_num_dims=len(enc.num_cols), active_dims=enc.num_cols,
                              lengthscale_prior=prior(len(enc.num_cols))))
    return ScaleKernel(ProductKernel(*parts) if len(parts) > 1 else parts[0])


def _fit(enc: Encoder, x: object, y: object, standardize: bool) -> object:
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.models.transforms.outcome import Standardize
    from gpytorch.mlls import ExactMarginalLogLikelihood

    model = SingleTaskGP(x, y, covar_module=_kernel(enc),
                         outcome_transform=Standardize(m=1) if standardize else None)
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    try:
        fit_gpytorch_mll(mll)
    except Exception:  # noqa: BLE001 - keep the prior's hyperparameters: still a model
        pass
    model.eval()
    return model


def _feasibility(model: object | None, x: object) -> list[float]:
    """P(label > 1/2) under the 0/1 GP's posterior (1 when nothing has failed yet)."""
    if model is None:
        return [1.0] * len(x)
    import torch

    post = model.posterior(x)
    mean, std = post.mean.squeeze(-1), post.variance.clamp_min(1e-9).sqrt().squeeze(-1)
    return torch.distributions.Normal(0.0, 1.0).cdf((mean - 0.5) / std).tolist()


def propose(space: TuneSpace, observed: Sequence[tuple[Point, float | None]],
            rng: random.Random, batch: int = 1, exclude: set[Point] | None = None
            ) -> list[Proposal]:
    """The next ``batch`` points: the highest log EI + log P(feasible) among the
    candidates (every point of a small space; else a random pool refined by local
    search), none of them observed or in ``exclude``. ``observed`` pairs each point
    with its objective value, None when it failed. Later points of a batch see the
    earlier ones as observed at their posterior mean (kriging believer)."""
    import torch

    seen = {p for p, _ in observed} | set(exclude or ())
    good = [(p, v) for p, v in observed if v is not None]
    if not good:
        return [Proposal(p, 0.0, 1.0) for p in _fresh(space, rng, seen, batch)]
    torch.manual_seed(rng.randrange(2**31))
    # small matrices: one thread is as fast, and a process that never started OpenMP
    # workers can still fork the study runner's pool safely
    torch.set_num_threads(1)
    pool, complete = _pool(space, rng, seen,
                           [p for p, _ in sorted(good, key=lambda pv: pv[1])[:5]])
    if not pool:
        return []
    enc = Encoder.of(space, [p for p, _ in observed] + pool, complete)
    dt = torch.float64
    xg = torch.tensor(enc([p for p, _ in good]), dtype=dt)
    yg = torch.tensor([[math.log(max(v, 1e-12))] for _, v in good], dtype=dt)
    feas = None
    if len(good) < len(observed):
        xa = torch.tensor(enc([p for p, _ in observed]), dtype=dt)
        ya = torch.tensor([[float(v is not None)] for _, v in observed], dtype=dt)
        feas = _fit(enc, xa, ya, standardize=False)
    out: list[Proposal] = []
    for _ in range(batch):
        model = _fit(enc, xg, yg, standardize=True)
        scored = _score(model, feas, enc, pool, float(yg.min()))
        for _ in range(0 if complete else LOCAL_ROUNDS):
            near = [q for s in scored[:5] for q in space.neighbours(s.point)
                    if q not in seen and q not in {t.point for t in scored}
                    and not space.pruned(q)]
            if not near:
                break
            scored = sorted(scored + _score(model, feas, enc, near, float(yg.min())),
                            key=lambda s: -s.score)
        best = scored[0]
        out.append(best)
        seen.add(best.point)
        pool = [p for p in pool if p != best.point]
        if not pool:
            break
        xb = torch.tensor(enc([best.point]), dtype=dt)
        with torch.no_grad():
            believed = model.posterior(xb).mean.reshape(1, 1)
        xg, yg = torch.cat([xg, xb]), torch.cat([yg, believed])
    return out


def _score(model: object, feas: object | None, enc: Encoder, points: list[Point],
           best_f: float) -> list[Proposal]:
    import torch
    from botorch.acquisition import LogExpectedImprovement

    acq = LogExpectedImprovement(model, best_f=best_f, maximize=False)
    x = torch.tensor(enc(points), dtype=torch.float64)
    with torch.no_grad():
        log_ei = torch.cat([acq(chunk.unsqueeze(1)) for chunk in x.split(2048)]).tolist()
        p = _feasibility(feas, x)
    return sorted((Proposal(q, a, f) for q, a, f in zip(points, log_ei, p, strict=True)),
                  key=lambda s: -s.score)


def _pool(space: TuneSpace, rng: random.Random, seen: set[Point], best: list[Point]
          ) -> tuple[list[Point], bool]:
    """Every unseen point of a small space (and True: it is complete); else random
    points and the neighbours of the best observed ones."""
    if space.enumerable():
        return [p for p in space.all_points() if p not in seen and not space.pruned(p)], True
    pool = dict.fromkeys(q for p in best for q in space.neighbours(p)
                         if q not in seen and not space.pruned(q))
    pool.update(dict.fromkeys(_fresh(space, rng, seen | set(pool), POOL)))
    return list(pool), False


def _fresh(space: TuneSpace, rng: random.Random, seen: set[Point], n: int) -> list[Point]:
    """Up to ``n`` distinct unseen random points (fewer if the space runs out)."""
    out: dict[Point, None] = {}
    for _ in range(20 * n):
        p = space.sample(rng)
        if p not in seen and not space.pruned(p):
            out[p] = None
            if len(out) == n:
                break
    return list(out)
