"""RCCL's own tuner latencies, so that an ``rccl:*`` library is timed with AMD's figures.

RCCL keeps NCCL's tuner (``src/graph/tuning.cc``) but, in its HIP build, replaces NCCL's latency
tables with its own: one base latency per algorithm and protocol, and per "tuning model" a table
of hardware latencies (us) for xGMI ("NVLINK" in the code), PCI and network hops. Sources:

- ROCm/rccl @0cbce2a7 ``src/graph/tuning.cc:57-60`` ``baseLat`` (Tree and Ring: LL 12.0,
  LL128 12.0, Simple 17.0 us; NVLS/NVLSTree 0); ``:74-82`` ``tuning_model_0.hwLat``;
  ``:224-232`` ``tuning_model_5.hwLat``.
- ROCm/rocm-systems @03a89144 ``projects/rccl/src/graph/tuning.cc``: the same ``baseLat`` and
  ``tuning_model_0.hwLat`` (RCCL moved there; the tables did not change).

Which table applies: ``comm->topo->tuning`` (``tuning.cc:430-465``), 0 unless one of RCCL's
hand-written "rome models" (``src/graph/rome_models.cc``) matched the machine and set
``tuning=N``; only 8-GPU MI100/MI250-era layouts set 5 (``rome_models.cc:559,815,828``), and the
models of MI300X-class boxes set none. So model 0 is the one used here; model 5 is kept for
reference (:data:`HW_LAT_MODEL_5`) and not used.

RCCL's latency formula also differs from NCCL's in one term: a multi-node ring allreduce counts
``2 * nNodes`` network steps (``tuning.cc:354``, NCCL ``2 * (nNodes - 1)``), and RCCL has no
``x1.4`` ring "plateau" (NCCL's, ``#else`` branch of ``ncclTopoGetAlgoTime``, ``:659-666``). On
gfx94x (MI300) in one box RCCL leaves Tree/Simple out (``tuning.cc:365``).

What is not taken: RCCL's ``bwRatio`` and per-size ``tree/ringCorrectionFactor`` tables
(``:84-101``), which scale bandwidth; the model's bandwidths keep NCCL's formula with the
calibrated xGMI efficiency (:data:`solver.simulate.library.XGMI_EFFICIENCY`).
"""

from __future__ import annotations

#: tuning.cc:57-60 baseLat (us) [algorithm][LL, LL128, Simple]
BASE_LAT = {
    "Tree": (12.0, 12.0, 17.0),
    "Ring": (12.0, 12.0, 17.0),
    "NVLS": (0.0, 0.0, 0.0),
    "NVLSTree": (0.0, 0.0, 0.0),
    # RCCL @0cbce2a7 has no PAT; rocm-systems @03a89144 gives it Ring's figures (PAT row of
    # tuning_model_0.hwLat: 0, 0, 3.6 / 5.7 / 15.1) and no base latency of its own here
    "PAT": (0.0, 0.0, 0.0),
}

#: tuning.cc:74-82 tuning_model_0.hwLat (us) [hw][algorithm][LL, LL128, Simple]; "nvlink" is xGMI
HW_LAT = {
    "nvlink": {
        "Tree": (0.8, 1.4, 2.5),
        "Ring": (0.8, 2.2, 3.6),
        "NVLS": (0.0, 0.0, 0.0),
        "NVLSTree": (0.0, 0.0, 0.0),
        "PAT": (0.0, 0.0, 3.6),
    },
    "pci": {
        "Tree": (2.2, 2.2, 5.7),
        "Ring": (2.2, 2.2, 5.7),
        "NVLS": (0.0, 0.0, 0.0),
        "NVLSTree": (0.0, 0.0, 0.0),
        "PAT": (0.0, 0.0, 5.7),
    },
    "net": {
        "Tree": (11.8, 18.2, 20.8),
        "Ring": (9.5, 19.8, 15.1),
        "NVLS": (0.0, 0.0, 0.0),
        "NVLSTree": (0.0, 0.0, 0.0),
        "PAT": (0.0, 0.0, 15.1),
    },
}

#: tuning.cc:224-232 tuning_model_5.hwLat (us): set by rome models of MI100/MI250-era 8-GPU
#: boxes only (rome_models.cc:559,815,828); kept for reference, not used by the model
HW_LAT_MODEL_5 = {
    "nvlink": {"Tree": (0.9, 0.0, 2.3), "Ring": (0.8, 0.0, 2.1)},
    "pci": {"Tree": (2.2, 2.2, 5.7), "Ring": (2.2, 2.2, 5.7)},
    "net": {"Tree": (10.5, 0.0, 25.0), "Ring": (9.5, 0.0, 320.0)},
}


def ring_inter_steps(collective: str, nodes: int) -> int:
    """Network steps RCCL counts in a ring's latency (tuning.cc:354-356): allreduce
    ``2 * nNodes`` on several nodes, allgather/reduce-scatter ``nNodes - 1``."""
    if collective == "allreduce":
        return 2 * nodes if nodes > 1 else 0
    return nodes - 1


def skips_tree_simple(generation: str, boxes: int) -> bool:
    """RCCL leaves Tree/Simple out on gfx94x (CDNA3) when all ranks are in one box
    (tuning.cc:365: ``IsArchMatch(gcn, "gfx94")`` and every GPU of the system is a rank)."""
    return generation == "cdna3" and boxes == 1
