"""Forged-but-well-formed results files (issue 21): every index in range, every fraction
readable, every dataset of the right shape and dtype — and a lie inside.

The first hostile round (``hostile.py``) breaks the file's structure; these keep it intact and
change what it claims: a tree that no longer spans, an optimum 10x the truth, a cut of zero
bandwidth, link bandwidths that no longer match the stored cut, a plan whose ``order`` or
generator is wrong, a study row better than the intact fabric. Each forgery is a function
``forge(f)`` on a copy of a real file (``h5py.File`` opened ``r+``); :data:`SCHEDULE_FORGERIES`,
:data:`PLAN_FORGERIES` and :data:`STUDY_FORGERIES` map a name to ``(forge, words)`` where
``words`` must appear in the one error line.

:func:`well_formed_edit` is the random counterpart: one element of an index or exact-value
dataset of a stored schedule set to another legal value.
"""

from __future__ import annotations

from typing import Any

import h5py
import numpy as np
from hypothesis import strategies as st

SCHEDULE = "schedules/allgather"
PLAN = "plans/allgather"


def _strings(ds) -> list[str]:
    return [x.decode() if isinstance(x, bytes) else str(x) for x in ds[()]]


def _replace(group: h5py.Group, name: str, data, dtype=None) -> None:
    """Replace dataset ``group/name`` by ``data`` (same dtype unless given)."""
    old = group[name]
    dtype = dtype or old.dtype
    attrs = dict(old.attrs)
    del group[name]
    ds = group.create_dataset(
        name,
        data=np.asarray(data, dtype=object if h5py.check_string_dtype(dtype) else dtype),
        dtype=dtype,
    )
    for key, value in attrs.items():
        ds.attrs[key] = value


def _set_string(ds, i: int, text: str) -> None:
    values = _strings(ds)
    values[i] = text
    ds[...] = np.array(values, dtype=object)


# ------------------------------------------------------------------------- full schedules
def tree_not_spanning(f) -> None:
    """The first tree's second edge goes where its first one went: a node reached twice, one
    never reached (the simulator used to run it like the intact schedule)."""
    dst = f[f"{SCHEDULE}/trees/edge_dst"]
    dst[1] = dst[0]


def forged_optimum(f) -> None:
    """algbw and optimum 10x the truth (was printed as "bound algbw = 2285.714" and written
    into the XML header)."""
    g = f[SCHEDULE]
    for key in ("algbw", "optimal_algbw"):
        g.attrs[key] = 2285.714285714286
        g.attrs[f"{key}_exact"] = "16000/7"


def forged_optimum_only(f) -> None:
    """Only the optimum raised: the schedule then claims to be 10 % of optimal."""
    g = f[SCHEDULE]
    g.attrs["optimal_algbw"] = 2285.714285714286
    g.attrs["optimal_algbw_exact"] = "16000/7"


def fabric_bandwidth(f) -> None:
    """Every link of the stored fabric at half its bandwidth: the cut and the loads no longer
    match it (was "0.8 % of bound")."""
    links = f["topology/links"]
    values = [str(int(v) // 2) for v in _strings(links["bandwidth_exact"])]
    links["bandwidth_exact"][...] = np.array(values, dtype=object)
    links["bandwidth"][...] = links["bandwidth"][()] / 2


def zero_cut(f) -> None:
    """A cut of zero bandwidth (the designer drew "algbw* = 8·0/8 = 0 GB/s" as the result)."""
    b = f[f"{SCHEDULE}/bottleneck"]
    b.attrs["egress_bandwidth"] = 0.0
    b.attrs["egress_bandwidth_exact"] = "0"
    n = b["link_bandwidth_exact"].shape[0]
    b["link_bandwidth_exact"][...] = np.array(["0"] * n, dtype=object)
    b["link_bandwidth"][...] = np.zeros(n)


def cut_count(f) -> None:
    """The cut claims one compute node fewer than it holds (a bound 8/6 instead of 8/7)."""
    b = f[f"{SCHEDULE}/bottleneck"]
    b.attrs["compute_nodes_inside"] = int(b.attrs["compute_nodes_inside"]) - 1


def multiplicity(f) -> None:
    f[f"{SCHEDULE}/trees/multiplicity"][0] = 2


def weight(f) -> None:
    _set_string(f[f"{SCHEDULE}/trees/weight_exact"], 0, "1")


def link_load(f) -> None:
    _set_string(f[f"{SCHEDULE}/link_load/load_exact"], 0, "1/2")


def k_attribute(f) -> None:
    f[SCHEDULE].attrs["k"] = int(f[SCHEDULE].attrs["k"]) + 1


def path_detour(f) -> None:
    """A path's first hop replaced by another node (its links no longer run where they say)."""
    nodes = f[f"{SCHEDULE}/trees/path_nodes"]
    n = f["topology/nodes/id"].shape[0]
    nodes[1] = (int(nodes[1]) + 2) % n


def real_cut_forged_optimum(f) -> None:
    """ring_8: the optimum raised to 1600 GB/s and backed by a real cut, gpu0 alone (egress
    200 GB/s, bound 8·200/1): every rule of the verifier holds, but the cut is not minimal."""
    g = f[SCHEDULE]
    ids = _strings(f["topology/nodes/id"])
    b = g["bottleneck"]
    gpu0 = ids.index("gpu0")
    _replace(b, "nodes", [gpu0])
    _replace(b, "link_source", [gpu0, gpu0])
    _replace(b, "link_target", [ids.index("gpu1"), ids.index("gpu7")])
    _replace(b, "link_bandwidth", [100.0, 100.0])
    _replace(b, "link_bandwidth_exact", ["100", "100"])
    b.attrs["compute_nodes_inside"] = 1
    b.attrs["egress_bandwidth"] = 200.0
    b.attrs["egress_bandwidth_exact"] = "200"
    g.attrs["optimal_algbw"] = 1600.0
    g.attrs["optimal_algbw_exact"] = "1600"


SCHEDULE_FORGERIES: dict[str, tuple[Any, str]] = {
    "tree-not-spanning": (tree_not_spanning, "failed verification"),
    "forged-optimum": (forged_optimum, "failed verification"),
    "forged-optimum-only": (forged_optimum_only, "failed verification"),
    "fabric-bandwidth-halved": (fabric_bandwidth, "failed verification"),
    "zero-cut": (zero_cut, "failed verification"),
    "cut-count": (cut_count, "failed verification"),
    "multiplicity": (multiplicity, "failed verification"),
    "weight": (weight, "failed verification"),
    "link-load": (link_load, "failed verification"),
    "k-attribute": (k_attribute, "failed verification"),
    "path-detour": (path_detour, "failed verification"),
    "real-cut-forged-optimum": (real_cut_forged_optimum, "not the fabric's optimum"),
}


# ------------------------------------------------------------------------- compressed plans
def plan_order(order: int):
    def forge(f) -> None:
        f[PLAN].attrs["order"] = order

    forge.__doc__ = (
        f"``order`` says {order} while the generator's order is 4 (an expansion "
        f"with {order // 4}x the trees was exported as verified)."
    )
    return forge


def plan_not_automorphism(f) -> None:
    """Two compute nodes of different boxes swapped in σ: a permutation that maps compute nodes
    to compute nodes, but not links onto links (exported with exit 0)."""
    gen = f[f"{PLAN}/generator"]
    kinds = _strings(f["topology/nodes/kind"])
    a, b = [i for i, k in enumerate(kinds) if k == "compute"][:2]
    values = gen[()]
    values[a], values[b] = values[b], values[a]
    gen[...] = values


def plan_gpu_to_switch(f) -> None:
    """σ maps a GPU to a switch and a switch to a GPU (a KeyError traceback in export)."""
    gen = f[f"{PLAN}/generator"]
    kinds = _strings(f["topology/nodes/kind"])
    values = gen[()]
    gpu = kinds.index("compute")
    switch = kinds.index("switch")
    values[gpu], values[switch] = values[switch], values[gpu]
    gen[...] = values


def plan_optimum(f) -> None:
    g = f[PLAN]
    for key in ("algbw", "optimal_algbw"):
        g.attrs[key] = 2666.6666666666665
        g.attrs[f"{key}_exact"] = "8000/3"


def plan_tree_not_spanning(f) -> None:
    dst = f[f"{PLAN}/trees/edge_dst"]
    dst[1] = dst[0]


def plan_root_orbit(f) -> None:
    """A representative root moved onto another root's orbit: some GPU roots no tree."""
    roots = f[f"{PLAN}/trees/root"]
    values = roots[()]
    values[1] = values[0]
    roots[...] = values


PLAN_FORGERIES: dict[str, tuple[Any, str]] = {
    "order-8": (plan_order(8), "failed verification"),
    "order-42": (plan_order(42), "failed verification"),
    "generator-not-automorphism": (plan_not_automorphism, "not an automorphism"),
    "generator-gpu-to-switch": (plan_gpu_to_switch, "the generator maps"),
    "plan-optimum": (plan_optimum, "failed verification"),
    "plan-tree-not-spanning": (plan_tree_not_spanning, "failed verification"),
    "plan-root-orbit": (plan_root_orbit, "failed verification"),
}


# ------------------------------------------------------------------------- study rows
def _study(f) -> h5py.Group:
    (name,) = list(f["studies"])
    return f["studies"][name]


def row_above_intact(f) -> None:
    """A failure row of 9999 GB/s on a fabric whose intact optimum is 228.571 GB/s."""
    g = _study(f)
    g["algbw"][0] = 9999.0
    _set_string(g["algbw_exact"], 0, "9999")


def row_plausible(f) -> None:
    """A failure row between the truth (800/7) and the intact optimum (1600/7), float and exact
    consistent: only solving it again shows the lie."""
    g = _study(f)
    g["algbw"][0] = float(1000 / 7)
    _set_string(g["algbw_exact"], 0, "1000/7")


def row_float_only(f) -> None:
    """The float column changed, the exact one not."""
    _study(f)["algbw"][0] = 200.0


def row_foreign_key(f) -> None:
    _set_string(_study(f)["element"], 0, "gpu0--gpu5")


STUDY_FORGERIES: dict[str, tuple[Any, str]] = {
    "row-9999": (row_above_intact, "exceeds the intact fabric's"),
    "row-plausible": (row_plausible, "solved again"),
    "row-float-only": (row_float_only, "disagrees with algbw_exact"),
    "row-foreign-key": (row_foreign_key, "is not a row of this study"),
}


# ------------------------------------------------------------------------- random edits
INDEX_DATASETS = (
    "trees/root",
    "trees/edge_src",
    "trees/edge_dst",
    "trees/path_nodes",
    "bottleneck/nodes",
    "bottleneck/link_source",
    "bottleneck/link_target",
    "link_load/source",
    "link_load/target",
)
EXACT_DATASETS = (
    "trees/weight_exact",
    "bottleneck/link_bandwidth_exact",
    "link_load/bandwidth_exact",
    "link_load/load_exact",
)
EXACT_ATTRS = ("algbw_exact", "optimal_algbw_exact")
PLAUSIBLE = ["0", "1", "1/2", "1/3", "2", "100", "200", "1600/7", "800/7", "16000/7"]


@st.composite
def well_formed_edit(draw) -> tuple[str, str, int, Any]:
    """(kind, dataset or attribute, element, value): a legal value in a legal place."""
    kind = draw(st.sampled_from(["index", "exact", "attr", "int-attr"]))
    if kind == "index":
        return (
            kind,
            draw(st.sampled_from(INDEX_DATASETS)),
            draw(st.integers(0, 10**6)),
            draw(st.integers(0, 10**6)),
        )
    if kind == "exact":
        return (
            kind,
            draw(st.sampled_from(EXACT_DATASETS)),
            draw(st.integers(0, 10**6)),
            draw(st.sampled_from(PLAUSIBLE)),
        )
    if kind == "attr":
        return kind, draw(st.sampled_from(EXACT_ATTRS)), 0, draw(st.sampled_from(PLAUSIBLE))
    return (
        kind,
        draw(st.sampled_from(["k", "max_trees_per_root", "compute_nodes_inside"])),
        0,
        draw(st.integers(0, 9)),
    )


def apply_well_formed_edit(f, edit) -> None:
    kind, name, i, value = edit
    g = f[SCHEDULE]
    n = f["topology/nodes/id"].shape[0]
    if kind == "index":
        ds = g[name]
        if ds.shape[0]:
            ds[i % ds.shape[0]] = value % n
    elif kind == "exact":
        ds = g[name]
        if ds.shape[0]:
            _set_string(ds, i % ds.shape[0], value)
    elif kind == "attr":
        g.attrs[name] = value
    elif name == "compute_nodes_inside":
        g["bottleneck"].attrs[name] = value
    else:
        g.attrs[name] = value
