"""The bandwidth rules NCCL and RCCL apply to a topology dump, one function per rule.

Every number here is the runtime's own, from the newest source of each we could read:

- NCCL: ``NVIDIA/nccl`` @ ``5067397c2676`` (2026-06-11, after v2.30.7-1; ``src/graph/topo.h``,
  ``src/graph/topo.cc``, ``src/graph/xml.h``);
- RCCL: ``ROCm/rocm-systems`` @ ``03a89144e7d8`` ``projects/rccl`` (``src/graph/topo.h``,
  ``src/graph/topo.cc``; ``src/misc/archinfo.cc`` as stored @ ``5ec1bad7b0e3``), where RCCL lives
  since it left ``ROCm/rccl`` (last there @ ``0cbce2a7571c``, 2024-10, the rules cited before).

Bandwidths are GB/s in each direction, as exact fractions (NCCL's floats such as 20.6 and 40.1 are
decimal constants, kept exactly). A dump is read with RCCL's rules when it holds AMD GPUs (a
``gcn`` attribute or ``<xgmi>`` links), with NCCL's otherwise. A dump does not say which release
wrote it: ``<system version>`` is NCCL_TOPO_XML_VERSION, 1 for every NCCL (xml.h:50) and 2 for
every RCCL since 2020-08 (ROCm/rccl 7e3d8a31; xml.h:47 @0cbce2a7), and nothing else names a
release or a date, so each rule is the newest release's (docs/formats.md lists them).
"""

from __future__ import annotations

from fractions import Fraction

from solver.model.errors import TopologyError
from solver.model.values import bounded_int

MAX_PCI_WIDTH = 64  # lanes; PCIe links have at most 32
MAX_NET_MBPS = 10**9  # 1 Pb/s per NIC
MAX_C2C = 10**6  # <c2c bw> (MB/s) and count

NCCL = "nccl"
RCCL = "rccl"

# NCCL topo.h:17 / RCCL topo.h:19 -- LOC_BW, the figure for "same place" links (a NIC without PCI
# information hangs off its CPU at this rate, NCCL topo.cc:769-770 / RCCL ncclTopoAddCpu; an x86
# CPU of an unknown vendor or a CPU of an unknown architecture gets it as inter-socket figure,
# NCCL topo.cc:61).
LOC_BW = Fraction(5000)

# NVLink per link and direction by compute capability: NCCL topo.h:19-24 (SM60 18, SM70 20, SM80 20,
# SM90 20.6, SM86 12, SM100 40.1) chosen by ncclTopoNVLinkBw, topo.h:274-281 (sm >= 100 takes in
# sm 100/103 NVLink 5 and sm 110/120; below sm 60 NCCL falls back on SM80's figure, topo.h:281).
# RCCL has the same table, topo.h:20-25 and ncclTopoNVLinkBw topo.h:316-325, but its HIP build
# never reads <nvlink> (ncclTopoAddNvLinks is in the CUDA-only branch of topo.cc; AMD builds call
# ncclTopoAddXGMI), so an RCCL dump's <nvlink> elements are skipped.
# Only a GPU's rated_link_bw records it: links are imported at line rate (nvlink_line_rate).
SM60_NVLINK_BW = Fraction(18)
SM70_NVLINK_BW = Fraction(20)
SM80_NVLINK_BW = Fraction(20)
SM86_NVLINK_BW = Fraction(12)
SM90_NVLINK_BW = Fraction(206, 10)
SM100_NVLINK_BW = Fraction(401, 10)

# xGMI per link and direction by architecture: RCCL topo.h:37-41 (VEGA_XGMI_WIDTH 24,
# MI200_XGMI_WIDTH 36, GFX94X_XGMI_WIDTH 48, GFX95X_XGMI_WIDTH 48, GFX125X_XGMI_WIDTH 64), chosen
# by ncclTopoXGMISpeed, topo.h:302-313: "gfx90a" -> 36, "gfx942" -> 48, "gfx95" -> 48,
# "gfx1250" -> 64, anything else 24, with IsArchMatch a prefix match (archinfo.cc, IsArchMatch:
# strncmp over the target's length). RCCL @0cbce2a7 matched "gfx94" (so gfx940/gfx941 got 48) and
# had no gfx95/gfx1250 line (gfx950 got 24); current RCCL gives gfx940/gfx941 the default 24.
VEGA_XGMI_BW = Fraction(24)
MI200_XGMI_BW = Fraction(36)
GFX94X_XGMI_BW = Fraction(48)
GFX95X_XGMI_BW = Fraction(48)
GFX125X_XGMI_BW = Fraction(64)
XGMI_BY_ARCH = (
    ("gfx90a", MI200_XGMI_BW),
    ("gfx942", GFX94X_XGMI_BW),
    ("gfx95", GFX95X_XGMI_BW),
    ("gfx1250", GFX125X_XGMI_BW),
)

# Old dumps write the deprecated numeric gcnArch; RCCL maps it to a name before rating it
# (convertGcnArchToGcnArchName, archinfo.cc, called by ncclTopoAddGpu in topo.cc): 906 -> gfx906,
# 908 -> gfx908, 910 -> gfx90a (MI200, so 36 GB/s per link), 942 -> gfx942, 950 -> gfx950,
# 1250 -> gfx1250; any other text stays as it is (RCCL @0cbce2a7 also mapped 940 and 941, which
# current RCCL leaves as "940"/"941", rated 24).
RCCL_GCN_ARCH_NAMES = {
    "906": "gfx906",
    "908": "gfx908",
    "910": "gfx90a",
    "942": "gfx942",
    "950": "gfx950",
    "1250": "gfx1250",
}
# What hardware a numeric gcnArch names (HIP's deprecated hipDeviceProp_t.gcnArch: the gfx
# number; 910 is gfx90a as RCCL reads it): used to pick the line rate and the library, not the
# runtime's rated figure. gcnArch 940/941 are gfx940/gfx941 (MI300 parts) whatever RCCL rates.
GCN_ARCH_NAMES = {**RCCL_GCN_ARCH_NAMES, "940": "gfx940", "941": "gfx941"}

# PCIe per-lane rate in units of 100 Mb/s, NCCL topo.cc:545-556 / RCCL topo.cc kvDictPciGen
# (same table); unknown or empty speed -> 60; the bandwidth is width * rate / 80 GB/s and a
# width of 0 counts as 16 (NCCL topo.cc:650-657 / RCCL ncclTopoAddPci). The table is searched by
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

# PCI class codes -> device type, searched by prefix (NCCL topo.cc:538-544, RCCL topo.cc
# kvDictPciClass). RCCL also counts 0x120000 (processing accelerator: MI300/MI355X) as a GPU and
# has no 0x080100 (CX8 data direct) line.
NVSWITCH_CLASS = "0x068000"
CPU_CLASS = "0x068001"
BRIDGE_CLASS = "0x060400"
GPU = "gpu"
NIC = "nic"
NVS = "nvs"
CPU = "cpu"
PCI = "pci"

# Inter-socket (SYS) figures: NCCL topo.h:26-34 (AMD_BW 16, BDW_QPI_BW 6, SKL_QPI_BW 10,
# SRP_QPI_BW 22, ERP_QPI_BW 40, ZPI_BW 6, YONGFENG_ZPI_BW 9, P9_BW 32, ARM_BW 6) picked by
# ncclTopoGetInterCpuBw, topo.cc:60-82, with the Intel model from topo.cc:748-751. Current RCCL
# has the same constants (topo.h:27-35) and the same ncclTopoGetInterCpuBw and Intel models
# (topo.cc); RCCL @0cbce2a7 lacked SRP/ERP (every Intel model >= 0x55 was Skylake, 10).
AMD_BW = Fraction(16)
BDW_QPI_BW = Fraction(6)
SKL_QPI_BW = Fraction(10)
SRP_QPI_BW = Fraction(22)
ERP_QPI_BW = Fraction(40)
ZPI_BW = Fraction(6)
YONGFENG_ZPI_BW = Fraction(9)
P9_BW = Fraction(32)
ARM_BW = Fraction(6)

# <net speed> is Mb/s (the net plugin's "Port speed in Mbps", NCCL src/include/plugin/net/
# net_v12.h:33; 400G NICs write 400000, 800G 800000); speed <= 0 or missing counts as 10000
# (NCCL topo.cc:415-418, RCCL ncclTopoAddNet). A <net> without a ``dev`` attribute is no network
# device (NCCL topo.cc:495-497, RCCL ncclTopoAddNic), and NCCL takes one with ``net="0"`` as a
# GIN/RMA-only device, no NET node (topo.cc:499-504; RCCL reads no ``net`` attribute).
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


def nvlink_bandwidth(sm: int) -> Fraction:
    """Per-link, per-direction NVLink bandwidth (GB/s) NCCL gives compute capability ``sm``."""
    if sm >= 100:
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
# B200/B300 (sm 100/103) 1800/18 (50); sm 86 (NVLink bridges of A40/A6000) has no such single
# figure, nor have sm 110/120/121 (Jetson Thor, RTX Blackwell, GB10: no GPU-to-GPU NVLink 5),
# which NCCL still rates SM100_NVLINK_BW.
# xGMI: MI250X 8 links of 100 GB/s both ways (50), MI300X/MI325X 7 x 128 (64), MI355X
# 7 x 153.6 (76.8); MI50/MI100 (gfx906/gfx908) keep RCCL's figure.
def nvlink_line_rate(sm: int) -> Fraction | None:
    """Per-link, per-direction NVLink line rate (GB/s) for compute capability ``sm``."""
    if sm >= 110 or sm == 86:
        return None
    if sm >= 100:
        return Fraction(50)
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
    """The architecture a ``gcn`` attribute names (numeric gcnArch values are mapped)."""
    return GCN_ARCH_NAMES.get(gcn, gcn)


def rccl_arch_name(gcn: str) -> str:
    """The name RCCL rates a ``gcn`` attribute by (convertGcnArchToGcnArchName)."""
    return RCCL_GCN_ARCH_NAMES.get(gcn, gcn)


def xgmi_bandwidth(gcn: str) -> Fraction:
    """Per-link, per-direction xGMI bandwidth (GB/s) RCCL gives a GPU's ``gcn`` attribute."""
    name = rccl_arch_name(gcn)
    for prefix, bw in XGMI_BY_ARCH:
        if name.startswith(prefix):
            return bw
    return VEGA_XGMI_BW


def _int_attr(attrs: dict[str, str], key: str) -> int:
    try:
        return int(attrs.get(key, "0"), 0)
    except ValueError:
        return 0


def cpu_link_bandwidth(attrs: dict[str, str]) -> Fraction:
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
        if model >= 0xCF:
            return ERP_QPI_BW
        if model >= 0x8F:
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


def net_counts(attrs: dict[str, str], runtime: str = NCCL) -> bool:
    """Whether the runtime makes a network device of a ``<net>`` with these attributes.

    Not without ``dev`` (NCCL topo.cc:495-497, RCCL ncclTopoAddNic); for NCCL not with
    ``net="0"`` either (a GIN/RMA-only device, topo.cc:499-504; strtol of the text, 0 if none)."""
    if "dev" not in attrs:
        return False
    if runtime == NCCL and "net" in attrs:
        return _leading_int(attrs["net"]) != 0
    return True


def _leading_int(text: str) -> int:
    """strtol(text, NULL, 0): the leading integer (sign, 0x/0 prefixes), 0 if there is none."""
    t = text.strip()
    sign = -1 if t[:1] == "-" else 1
    t = t[1:] if t[:1] in "+-" else t
    base, digits = 10, "0123456789"
    if t[:2].lower() == "0x" and t[2:3].lower() in "0123456789abcdef" and t[2:3]:
        base, t, digits = 16, t[2:], "0123456789abcdef"
    elif t[:1] == "0":
        base, digits = 8, "01234567"
    n = 0
    for ch in t.lower():
        if ch not in digits:
            break
        n = n * base + digits.index(ch)
    return sign * n


def pci_device_id(attrs: dict[str, str]) -> int:
    """NCCL's 64-bit id of a PCI device: vendor, device, subsystem vendor, subsystem device.

    ncclTopoGetIntDevice (NCCL topo.cc:521-533): strtol of each attribute (0 if missing) shifted
    by 48/32/16/0 bits."""
    out = 0
    for key, shift in (
        ("vendor", 48),
        ("device", 32),
        ("subsystem_vendor", 16),
        ("subsystem_device", 0),
    ):
        if key in attrs:
            out += _leading_int(attrs[key]) << shift
    return out & (2**64 - 1)


def bcm_switch_gen(device_id: int, level: int) -> int:
    """The Broadcom PEX generation NCCL flattens a switch of (0: not one), at ``level`` 0 (the
    switch) or 1 (a sub switch): getBcmGen, NCCL topo.cc:199-203, RCCL topo.cc the same."""
    masked = device_id & 0xFFFFFFFFFFFFF000
    if masked == 0x1000C0101000A000:
        return 4
    if masked == (0x1000C03010000000 | level * 0x1000):
        return 5
    return 0


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
    "bcm_switch_gen",
    "net_counts",
    "pci_device_id",
    "nvlink_line_rate",
    "rccl_arch_name",
    "xgmi_line_rate",
    "net_bandwidth",
    "nvlink_bandwidth",
    "pci_bandwidth",
    "pci_class_type",
    "pci_lane_rate",
    "xgmi_bandwidth",
]
