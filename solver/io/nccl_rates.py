"""The bandwidth rules NCCL and RCCL apply to a topology dump, one function per rule.

Every number here is the runtime's own, read from its source at these commits:

- NCCL: ``NVIDIA/nccl`` @ ``5067397c2676`` (``src/graph/topo.h``, ``src/graph/topo.cc``,
  ``src/graph/xml.h``);
- RCCL: ``ROCm/rccl`` @ ``0cbce2a7571c`` (``src/graph/topo.h``, ``src/graph/topo.cc``,
  ``src/misc/archinfo.cc``).

Bandwidths are GB/s in each direction, as exact fractions (NCCL's floats such as 20.6 and 40.1 are
decimal constants, kept exactly). A dump is read with RCCL's rules when it holds AMD GPUs (a
``gcn`` attribute or ``<xgmi>`` links), with NCCL's otherwise: the two tables differ (RCCL @0cbce2a7
has no Sapphire/Emerald Rapids inter-socket figure; current RCCL defines SRP/ERP_QPI_BW, topo.h:30-31
of ROCm/rocm-systems @03a89144, not yet followed here).
"""

from __future__ import annotations

from fractions import Fraction

from solver.model.values import bounded_int
from solver.model.errors import TopologyError

MAX_PCI_WIDTH = 64  # lanes; PCIe links have at most 32
MAX_NET_MBPS = 10**9  # 1 Pb/s per NIC
MAX_C2C = 10**6  # <c2c bw> (MB/s) and count

NCCL = "nccl"
RCCL = "rccl"

# NCCL topo.h:17 / RCCL topo.h:16 -- LOC_BW, the figure for "same place" links (a NIC without PCI
# information hangs off its CPU at this rate, topo.cc:769 / RCCL topo.cc:547; an x86 CPU of an
# unknown vendor or an unknown architecture gets it as inter-socket figure, topo.cc:61).
LOC_BW = Fraction(5000)

# NVLink per link and direction by compute capability: NCCL topo.h:19-24 (SM60 18, SM70 20, SM80 20,
# SM90 20.6, SM86 12, SM100 40.1) chosen by ncclTopoNVLinkBw, topo.h:274-281; below sm 60 NCCL
# falls back on SM80's figure (topo.h:281). RCCL @0cbce2a7 topo.h:17-21,268-275 had the same table
# without SM100 (its sm >= 90 all got 20.6); current RCCL (ROCm/rocm-systems @03a89144
# projects/rccl/src/graph/topo.h:25) has SM100_NVLINK_BW 40.1 and uses it for sm >= 100, as here.
# Only a GPU's rated_link_bw records it: links are imported at line rate (nvlink_line_rate).
SM60_NVLINK_BW = Fraction(18)
SM70_NVLINK_BW = Fraction(20)
SM80_NVLINK_BW = Fraction(20)
SM86_NVLINK_BW = Fraction(12)
SM90_NVLINK_BW = Fraction(206, 10)
SM100_NVLINK_BW = Fraction(401, 10)

# xGMI per link and direction by architecture: RCCL topo.h:31-33 (VEGA_XGMI_WIDTH 24,
# MI200_XGMI_WIDTH 36, GFX94X_XGMI_WIDTH 48), chosen by ncclTopoXGMISpeed, topo.h:258-265, with
# IsArchMatch = prefix match (archinfo.cc:72-75).
VEGA_XGMI_BW = Fraction(24)
MI200_XGMI_BW = Fraction(36)
GFX94X_XGMI_BW = Fraction(48)
# RCCL after 0cbce2a7 (now ROCm/rocm-systems projects/rccl) rates gfx95x itself:
# GFX95X_XGMI_WIDTH 48.0 (topo.h:36-39 there; ncclTopoXGMISpeed matches "gfx95" first). Before,
# gfx950 fell through to VEGA_XGMI_WIDTH (24), half of what current RCCL uses.
GFX95X_XGMI_BW = Fraction(48)

# Old dumps write the deprecated numeric gcnArch; RCCL maps it to a name before using it
# (convertGcnArchToGcnArchName, archinfo.cc:35-53, applied at topo.cc:399-403): 906 -> gfx906,
# 908 -> gfx908, 910 -> gfx90a (MI200, so 36 GB/s per link), 940/941/942 -> gfx940/941/942.
GCN_ARCH_NAMES = {
    "906": "gfx906",
    "908": "gfx908",
    "910": "gfx90a",
    "940": "gfx940",
    "941": "gfx941",
    "942": "gfx942",
}

# PCIe per-lane rate in units of 100 Mb/s, NCCL topo.cc:545-556 / RCCL topo.cc:415-418
# (kvDictPciGen); unknown or empty speed -> 60; the bandwidth is width * rate / 80 GB/s and a
# width of 0 counts as 16 (topo.cc:655-657 / RCCL topo.cc:478-481). The table is searched by
# prefix, in this order (kvConvertToInt, xml.h:425-437).
PCI_LANE_RATES = (
    ("2.5 GT/s", 15),
    ("5 GT/s", 30),
    ("8 GT/s", 60),
    ("16 GT/s", 120),
    ("32 GT/s", 240),
    ("2.5 GT/s PCIe", 15),
    ("5.0 GT/s PCIe", 30),
    ("8.0 GT/s PCIe", 60),
    ("16.0 GT/s PCIe", 120),
    ("32.0 GT/s PCIe", 240),
    ("64.0 GT/s PCIe", 480),
)
PCI_LANE_RATE_DEFAULT = 60

# PCI class codes -> device type, searched by prefix (NCCL topo.cc:538-544, RCCL topo.cc:414).
# RCCL also counts 0x120000 (processing accelerator: MI300) as a GPU.
NVSWITCH_CLASS = "0x068000"
CPU_CLASS = "0x068001"
BRIDGE_CLASS = "0x060400"
GPU = "gpu"
NIC = "nic"
NVS = "nvs"
CPU = "cpu"
PCI = "pci"

# Inter-socket (SYS) figures: NCCL topo.h:25-34 (AMD_BW 16, BDW_QPI_BW 6, SKL_QPI_BW 10,
# SRP_QPI_BW 22, ERP_QPI_BW 40, ZPI_BW 6, YONGFENG_ZPI_BW 9, P9_BW 32, ARM_BW 6) picked by
# ncclTopoGetInterCpuBw, topo.cc:60-82, with the Intel model from topo.cc:748-751. RCCL topo.h:23-29
# and topo.cc:69-89 lack SRP/ERP: every Intel model >= 0x55 is Skylake (10).
AMD_BW = Fraction(16)
BDW_QPI_BW = Fraction(6)
SKL_QPI_BW = Fraction(10)
SRP_QPI_BW = Fraction(22)
ERP_QPI_BW = Fraction(40)
ZPI_BW = Fraction(6)
YONGFENG_ZPI_BW = Fraction(9)
P9_BW = Fraction(32)
ARM_BW = Fraction(6)

# <net speed> is Mb/s; speed <= 0 or missing counts as 10000 (NCCL topo.cc:415-418,
# RCCL topo.cc:361-364).
NET_SPEED_DEFAULT_MBPS = 10000


def pci_class_type(cls: str | None, runtime: str = NCCL) -> str:
    """The device type NCCL/RCCL give a PCI class code (prefix match, as kvConvertToInt does)."""
    text = (cls or "").strip().lower()
    table = [(BRIDGE_CLASS, PCI)]
    if runtime == NCCL:
        table.append(("0x080100", PCI))  # CX8 data direct, NCCL topo.cc:539
    table += [(NVSWITCH_CLASS, NVS), (CPU_CLASS, CPU), ("0x03", GPU), ("0x02", NIC)]
    if runtime == RCCL:
        table.append(("0x120000", GPU))
    for prefix, kind in table:
        if text.startswith(prefix):
            return kind
    return PCI


def pci_lane_rate(link_speed: str | None) -> int:
    """Per-lane rate (x100 Mb/s) for a ``link_speed`` string, by NCCL's prefix search."""
    text = link_speed or ""
    for prefix, rate in PCI_LANE_RATES:
        if text.startswith(prefix):
            return rate
    return PCI_LANE_RATE_DEFAULT


def pci_bandwidth(link_speed: str | None, link_width: str | None, what: str) -> Fraction:
    """NCCL's bandwidth (GB/s) of a PCIe link: ``width * lane rate / 80`` (width 0 -> 16)."""
    width = (
        bounded_int(link_width, f"{what}: link_width", minimum=0, maximum=MAX_PCI_WIDTH, base=0)
        if link_width not in (None, "")
        else 0
    )
    if width == 0:
        width = 16
    return Fraction(width * pci_lane_rate(link_speed), 80)


def nvlink_bandwidth(sm: int, runtime: str = NCCL) -> Fraction:
    """Per-link, per-direction NVLink bandwidth (GB/s) for compute capability ``sm``."""
    if sm >= 100:  # RCCL too since it moved to ROCm/rocm-systems (projects/rccl topo.h:25)
        return SM100_NVLINK_BW
    if sm >= 90:
        return SM90_NVLINK_BW
    if sm == 86:
        return SM86_NVLINK_BW
    if sm >= 80:
        return SM80_NVLINK_BW
    if sm >= 70:
        return SM70_NVLINK_BW
    if sm >= 60:
        return SM60_NVLINK_BW
    return SM80_NVLINK_BW


# Line rates per link and direction, from the vendors' specifications: what a fabric file holds
# (templates and drawings are at line rate), so that a dump and a template of the same box give
# the same bound and the library's efficiency is applied once, by the simulator. The runtime's
# own figure above is kept on every imported GPU as ``rated_link_bw``.
# NVLink: P100 160 GB/s over 4 links (20), V100 300/6, A100 600/12, H100 900/18 (25 each),
# B200 1800/18 (50); sm 86 (NVLink bridges of A40/A6000) has no such single figure.
# xGMI: MI250X 8 links of 100 GB/s both ways (50), MI300X/MI325X 7 x 128 (64), MI355X
# 7 x 153.6 (76.8); MI50/MI100 (gfx906/gfx908) keep RCCL's figure.
def nvlink_line_rate(sm: int) -> Fraction | None:
    """Per-link, per-direction NVLink line rate (GB/s) for compute capability ``sm``."""
    if sm >= 100:
        return Fraction(50)
    if sm == 86:
        return None
    if sm >= 70:
        return Fraction(25)
    if sm >= 60:
        return Fraction(20)
    return None


def xgmi_line_rate(gcn: str) -> Fraction | None:
    """Per-link, per-direction xGMI line rate (GB/s) for a GPU's ``gcn`` attribute."""
    name = gcn_arch_name(gcn)
    if name.startswith("gfx90a"):
        return Fraction(50)
    if name.startswith("gfx94"):
        return Fraction(64)
    if name.startswith("gfx95"):
        return Fraction(384, 5)
    return None


def gcn_arch_name(gcn: str) -> str:
    """RCCL's architecture name for a ``gcn`` attribute (numeric gcnArch values are mapped)."""
    return GCN_ARCH_NAMES.get(gcn, gcn)


def xgmi_bandwidth(gcn: str) -> Fraction:
    """Per-link, per-direction xGMI bandwidth (GB/s) for a GPU's ``gcn`` attribute."""
    name = gcn_arch_name(gcn)
    if name.startswith("gfx90a"):
        return MI200_XGMI_BW
    if name.startswith("gfx94"):
        return GFX94X_XGMI_BW
    if name.startswith("gfx95"):
        return GFX95X_XGMI_BW
    return VEGA_XGMI_BW


def _int_attr(attrs: dict[str, str], key: str) -> int:
    try:
        return int(attrs.get(key, "0"), 0)
    except ValueError:
        return 0


def cpu_link_bandwidth(attrs: dict[str, str], runtime: str = NCCL) -> Fraction:
    """The inter-socket (SYS) bandwidth a ``<cpu>`` with these attributes gives its links out."""
    arch = attrs.get("arch", "")
    vendor = attrs.get("vendor", "")
    if arch.startswith("ppc64"):
        return P9_BW
    if arch.startswith("arm64"):
        return ARM_BW
    if not arch.startswith("x86_64"):
        return LOC_BW
    family, model = _int_attr(attrs, "familyid"), _int_attr(attrs, "modelid")
    if vendor == "GenuineIntel":
        if family != 6 or model < 0x55:
            return BDW_QPI_BW
        if runtime == NCCL and model >= 0xCF:
            return ERP_QPI_BW
        if runtime == NCCL and model >= 0x8F:
            return SRP_QPI_BW
        return SKL_QPI_BW
    if vendor == "AuthenticAMD":
        return AMD_BW
    if vendor in ("CentaurHauls", "  Shanghai  "):
        return YONGFENG_ZPI_BW if family == 7 and model == 0x5B else ZPI_BW
    return LOC_BW


def net_bandwidth(speed_text: str | None, what: str) -> Fraction:
    """A ``<net speed>`` (Mb/s) in GB/s; missing or <= 0 counts as 10000 Mb/s, as NCCL does."""
    if speed_text is None or speed_text.strip() == "":
        mbps = 0
    else:
        mbps = bounded_int(speed_text, f"{what}: speed (Mb/s)", maximum=MAX_NET_MBPS, base=0)
    if mbps <= 0:
        mbps = NET_SPEED_DEFAULT_MBPS
    return Fraction(mbps, 8000)


def c2c_bandwidth(bw_text: str | None, count_text: str | None, what: str) -> Fraction:
    """A ``<c2c bw count>`` GPU-CPU link in GB/s: ``bw * count / 1000`` (NCCL topo.cc:921-923)."""
    bw = bounded_int(bw_text or "0", f"{what}: <c2c> bw", maximum=MAX_C2C, base=0)
    count = bounded_int(count_text or "0", f"{what}: <c2c> count", maximum=MAX_C2C, base=0)
    if bw < 0 or count < 0:
        raise TopologyError(f"{what}: <c2c> bw and count must be >= 0")
    return Fraction(bw * count, 1000)


__all__ = [
    "NCCL",
    "RCCL",
    "c2c_bandwidth",
    "cpu_link_bandwidth",
    "gcn_arch_name",
    "nvlink_line_rate",
    "xgmi_line_rate",
    "net_bandwidth",
    "nvlink_bandwidth",
    "pci_bandwidth",
    "pci_class_type",
    "pci_lane_rate",
    "xgmi_bandwidth",
]
