"""Which NCCL/RCCL library the designer simulates: the fabric's own pick, or the user's.

The plots dock's library selector offers ``auto`` (the pick :func:`auto_library` makes for the
fabric) and the libraries ``forestcoll simulate --library`` accepts (:data:`LIBRARY_CHOICES`,
parsed by :func:`solver.simulate.library.parse_library`, settings such as ``algo=ring`` included
when typed). :func:`auto_library` is the one place the designer asks the solver for the
fabric's pick.
"""

from __future__ import annotations

from solver.model.topology import Topology
from solver.simulate.library import Library, parse_library, pick_library

AUTO = "auto"

#: The libraries and generations ``--library`` takes (solver/simulate/library.py:
#: ``parse_library``), NVLS where the generation has it (Hopper and later).
LIBRARY_CHOICES = (
    "nccl:volta",
    "nccl:ampere",
    "nccl:hopper",
    "nccl:hopper:nvls",
    "nccl:blackwell",
    "nccl:blackwell:nvls",
    "rccl:cdna2",
    "rccl:cdna3",
    "rccl:cdna4",
)


def auto_library(topo: Topology) -> tuple[Library, str]:
    """The library ``forestcoll simulate`` uses for ``topo`` without ``--library``, and why
    (:func:`solver.simulate.library.pick_library`: from the GPUs' sm/gcn, the template...)."""
    return pick_library(topo)


def chosen_library(topo: Topology, spec: str) -> tuple[Library, str]:
    """The library of the selector's ``spec`` (``auto`` or '' = :func:`auto_library`) and why;
    a bad spec raises ForestCollError (one line)."""
    spec = spec.strip()
    if not spec or spec.lower().startswith(AUTO):
        return auto_library(topo)
    return parse_library(spec), "chosen in the Plots dock"


def library_text(lib: Library, why: str) -> str:
    """``rccl cdna2 (from the mi250 template)``: what the plot's status line names."""
    return f"{lib.label} (from {why})" if why.startswith("the") else f"{lib.label} ({why})"
