"""What a user can tell the NCCL/RCCL dump importer that the dump does not say.

- per-class bandwidth overrides (``--nvlink-bw`` ...), replacing the runtime's figure for one link
  class;
- the intra-box fabric of a *skeleton* dump (PCI devices only, as cloud vendors publish them),
  ``--intra nvswitch:BW``, ``--intra mesh:BW`` or ``--intra none``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from solver.io.nccl import rates
from solver.model.errors import TopologyError
from solver.model.topology import to_fraction

#: Link classes an override can name, with what its number means (GB/s, each direction).
OVERRIDE_CLASSES = {
    "nvlink": "per NVLink (times the count in the dump)",
    "xgmi": "per xGMI link (times the count in the dump)",
    "c2c": "per GPU-CPU C2C connection",
    "pcie": "per PCIe link (every width and generation)",
    "net": "per NIC port (replaces <net speed>)",
    "sys": "per CPU-CPU (inter-socket) link",
}

#: ``--intra`` kinds for skeleton dumps.
INTRA_KINDS = ("nvswitch", "mesh", "none")

#: Named ``--intra`` bandwidths at line rate, as fabric files hold them (the line rates of solver.io.nccl.rates).
INTRA_PRESETS: dict[tuple[str, str], Fraction] = {
    ("nvswitch", "a100"): 12 * rates.nvlink_line_rate(80),  # 12 NVLinks, sm 80: 300 GB/s
    ("nvswitch", "h100"): 18 * rates.nvlink_line_rate(90),  # 18 NVLinks, sm 90: 450 GB/s
    ("nvswitch", "b200"): 18 * rates.nvlink_line_rate(100),  # 18 NVLinks, sm 100: 900 GB/s
    ("mesh", "mi300x"): rates.xgmi_line_rate("gfx942"),  # one xGMI link per GPU pair: 64 GB/s
}


@dataclass(frozen=True)
class IntraFabric:
    """The GPU-to-GPU fabric of one box of a skeleton dump."""

    kind: str  # "nvswitch": every GPU to one switch; "mesh": every GPU pair; "none"
    bandwidth: Fraction | None = None  # GB/s per GPU (nvswitch) or per GPU pair (mesh)
    hardware: str = ""  # the preset's GPU ("h100", "mi300x"...) when one was named

    @property
    def label(self) -> str:
        if self.bandwidth is None:
            return self.kind
        return f"{self.kind}:{self.bandwidth}"


def parse_intra(text: str | IntraFabric | None) -> IntraFabric | None:
    """``'nvswitch:450'``, ``'mesh:48'``, ``'nvswitch:h100'``, ``'none'`` -> IntraFabric."""
    if text is None or isinstance(text, IntraFabric):
        return text
    kind, sep, value = str(text).strip().lower().partition(":")
    if kind not in INTRA_KINDS:
        raise TopologyError(f"--intra must be nvswitch:BW, mesh:BW or none, got {text!r}")
    if kind == "none":
        if sep:
            raise TopologyError(f"--intra none takes no bandwidth, got {text!r}")
        return IntraFabric("none")
    if not value:
        names = ", ".join(n for k, n in INTRA_PRESETS if k == kind)
        raise TopologyError(
            f"--intra {kind} needs a bandwidth: {kind}:GBPS or one of {kind}:{{{names}}}"
        )
    preset = INTRA_PRESETS.get((kind, value))
    bw = preset if preset is not None else to_fraction(value, f"--intra {kind} bandwidth")
    if bw <= 0:
        raise TopologyError(f"--intra {kind} bandwidth must be > 0 GB/s, got {value}")
    return IntraFabric(kind, bw, value if preset is not None else "")


def parse_overrides(values: Mapping[str, object] | None) -> dict[str, Fraction]:
    """Check per-class overrides (``{"xgmi": 50}``) and make them exact; None values are dropped."""
    out: dict[str, Fraction] = {}
    for cls, value in (values or {}).items():
        if value is None:
            continue
        if cls not in OVERRIDE_CLASSES:
            raise TopologyError(
                f"unknown link class {cls!r} for a bandwidth override "
                f"(known: {', '.join(OVERRIDE_CLASSES)})"
            )
        bw = to_fraction(value, f"--{cls}-bw")
        if bw <= 0:
            raise TopologyError(f"--{cls}-bw must be > 0 GB/s, got {value}")
        out[cls] = bw
    return out


__all__ = [
    "INTRA_KINDS",
    "INTRA_PRESETS",
    "OVERRIDE_CLASSES",
    "IntraFabric",
    "parse_intra",
    "parse_overrides",
]
