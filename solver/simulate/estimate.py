"""The one alpha-beta performance model of a schedule (used by ``simulate``, the HDF5 results
written with a schedule, and the designer's plot).

``time(M) = sum over phases of max over links (bytes on the link / bandwidth)``  (the bound of
this schedule's own routes: ``M / algbw``) ``+ fill``, where the fill of a phase is the deepest
root-to-leaf path of its trees, each logical edge costing its hops' latencies (link latency, or
:data:`~solver.simulate.routes.DEFAULT_LATENCY_US`) plus one chunk over its slowest hop; chunks as
the simulator cuts them (``DEFAULT_CHUNK``, at least ``DEFAULT_MIN_CHUNKS`` slices of >= 4 KiB).
:class:`PreparedModel` computes it on prepared arrays (:func:`solver.simulate.routes.
alpha_estimate_time` is its slow, obviously correct twin); the simulators refine it.
"""

from __future__ import annotations

import numpy as np

from solver.flow.jit import njit
from solver.model.results import ResultTable
from solver.model.schedule import Schedule
from solver.simulate.engine import DEFAULT_MIN_CHUNKS, MIN_SLICE, prepare
from solver.simulate.routes import DEFAULT_LATENCY_US, from_schedule

#: Chunk size of the estimate and of ``simulate`` by default (bytes).
DEFAULT_CHUNK = 256 * 1024
#: Sizes of the tables written with a schedule: 1 KiB .. 4 GiB.
MODEL_SIZES = tuple(2**p for p in range(10, 33))


def estimate_times(
    schedule: Schedule,
    sizes,
    chunk: float = DEFAULT_CHUNK,
    latency_us: float = DEFAULT_LATENCY_US,
    min_chunks: int = DEFAULT_MIN_CHUNKS,
) -> np.ndarray:
    """Estimated seconds of ``schedule`` at every size in ``sizes`` (bytes)."""
    model = PreparedModel(prepare(from_schedule(schedule), latency_us))
    return np.array([model.estimate_time(float(m), chunk, min_chunks) for m in sizes], np.float64)


def model_tables(schedule: Schedule, name: str) -> dict[str, ResultTable]:
    """``<name>.bound`` (M / optimal algbw) and ``<name>.estimate`` (the model above)."""
    sizes = np.array(MODEL_SIZES, dtype=np.int64)
    nan = ResultTable.empty_measured(len(sizes))
    bound_time = sizes / (float(schedule.optimal_algbw_exact) * 1e9)
    # never below the bound (a schedule without trees would otherwise estimate 0 s)
    est_time = np.maximum(estimate_times(schedule, sizes), bound_time)
    common = {
        "collective": schedule.collective,
        "algorithm": "forestcoll",
        "source": "model",
        "schedule": name,
    }
    return {
        f"{name}.bound": ResultTable(
            size_bytes=sizes,
            predicted_time=bound_time,
            predicted_algbw=sizes / bound_time / 1e9,
            measured_time=nan,
            measured_algbw=nan.copy(),
            attrs={"model": "bound", "formula": "M / optimal_algbw"},
            **common,
        ),
        f"{name}.estimate": ResultTable(
            size_bytes=sizes,
            predicted_time=est_time,
            predicted_algbw=sizes / est_time / 1e9,
            measured_time=nan.copy(),
            measured_algbw=nan.copy(),
            attrs={
                "model": "alpha-beta",
                "formula": "link-load bound per phase + deepest tree path fill (latency + chunk)",
                "chunk_bytes": DEFAULT_CHUNK,
                "min_chunks": DEFAULT_MIN_CHUNKS,
                "default_hop_latency_us": DEFAULT_LATENCY_US,
            },
            **common,
        ),
    }


# ----------------------------------------------------------------------------- on prepared arrays
@njit
def _deepest_paths(n_nodes, n_flows, e_flow, child, parent, edge_cost):
    """Per flow: the costliest root-to-node path of its tree (edge ``e`` joins ``parent[e]`` and
    ``child[e]``, costs ``edge_cost[e]``); O(nodes) per flow with memoised depths."""
    size = n_flows * n_nodes
    up = np.full(size, -1, np.int64)
    cost = np.zeros(size)
    for e in range(e_flow.shape[0]):
        k = e_flow[e] * n_nodes + child[e]
        up[k] = parent[e]
        cost[k] = edge_cost[e]
    depth = np.full(size, -1.0)
    best = np.zeros(n_flows)
    stack = np.empty(n_nodes + 1, np.int64)
    for f in range(n_flows):
        base = f * n_nodes
        for v in range(n_nodes):
            top = 0
            u = v
            while depth[base + u] < 0 and up[base + u] >= 0 and top <= n_nodes:
                stack[top] = u
                top += 1
                u = up[base + u]
            d = depth[base + u] if depth[base + u] >= 0 else 0.0
            depth[base + u] = d
            while top > 0:
                top -= 1
                w = stack[top]
                d += cost[base + w]
                depth[base + w] = d
            if depth[base + v] > best[f]:
                best[f] = depth[base + v]
    return best


class PreparedModel:
    """The α-β estimate and link bound of a prepared route set, vectorised (the per-edge Python of
    :func:`solver.simulate.routes.alpha_estimate_time`, its slow twin, is too slow past ~100 GPUs)."""

    def __init__(self, prep) -> None:
        self.prep = prep
        table = prep.table
        starts = prep.path_ptr[:-1]
        lat = table.latency[prep.path_links]
        bw = table.bandwidth[prep.path_links]
        self.edge_latency = np.add.reduceat(lat, starts) if len(starts) else np.zeros(0)
        self.edge_min_bw = np.minimum.reduceat(bw, starts) if len(starts) else np.zeros(0)
        bcast = prep.kind[prep.e_flow] == 0
        self.child = np.where(bcast, prep.e_dst, prep.e_src)
        self.parent = np.where(bcast, prep.e_src, prep.e_dst)
        phases = [f.phase for f in prep.flows]
        names = list(dict.fromkeys(phases))
        self.flow_phase = np.array([names.index(p) for p in phases], np.int64)
        self.n_phases = len(names)
        self.share = np.array([f.share for f in prep.flows], np.float64)
        link_flow = np.repeat(prep.e_flow, prep.hops_per_edge)
        n_links = len(table.pairs)
        self.phase_link_share = np.zeros((self.n_phases, n_links))
        for p in range(self.n_phases):
            w = np.where(self.flow_phase[link_flow] == p, self.share[link_flow], 0.0)
            self.phase_link_share[p] = np.bincount(prep.path_links, weights=w, minlength=n_links)
        self.bandwidth = table.bandwidth

    def link_bound_time(self, size: float) -> float:
        """Max over links of bytes / bandwidth, all phases together (s)."""
        return float(np.max(self.phase_link_share.sum(axis=0) * size / self.bandwidth))

    def phase_bound_time(self, size: float) -> float:
        return float(np.sum(np.max(self.phase_link_share * size / self.bandwidth, axis=1)))

    def fill_time(self, size: float, chunk: float, min_chunks: int) -> float:
        """Per phase, the deepest tree path (latencies + one chunk over the slowest hop per
        logical edge); phases add."""
        data = self.share * size
        n = np.maximum(
            np.maximum(1, np.ceil(data / chunk)), np.minimum(min_chunks, data // MIN_SLICE)
        )
        chunk_bytes = np.where(data > 0, data / n, 0.0)
        edge_cost = self.edge_latency + chunk_bytes[self.prep.e_flow] / self.edge_min_bw
        best = _deepest_paths(
            self.prep.n_nodes, len(self.share), self.prep.e_flow, self.child, self.parent, edge_cost
        )
        best = np.where(data > 0, best, 0.0)
        per_phase = np.zeros(self.n_phases)
        np.maximum.at(per_phase, self.flow_phase, best)
        return float(per_phase.sum())

    def estimate_time(
        self, size: float, chunk: float, min_chunks: int = DEFAULT_MIN_CHUNKS
    ) -> float:
        """The α-β estimate (s): phase bounds + fills."""
        return self.phase_bound_time(size) + self.fill_time(size, chunk, min_chunks)
