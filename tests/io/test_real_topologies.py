"""Public NCCL/RCCL topology dumps (tests/data/real/topo/, sources in tests/data/real/README.md).

Every file imports into a valid fabric whose nodes all carry a box (``group``) and a role, and
whose links all carry their class; for a handful the allgather optimum is checked against a value
derived by hand from the file (each test's docstring holds the derivation). The optimum is the
minimum over cuts S of N·B⁺(S)/|S∩Vc| (ForestColl); ``naive.maxflow_optimum`` computes it
independently of the solver (x* per compute node, algbw = N·x*).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from naive import maxflow_optimum

from solver.io.formats import load
from solver.model.scale_up import scale_up_warnings
from solver.model.topology import validate

REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "topo"
OPTIONS = json.loads((REAL / "import_options.json").read_text())
FILES = sorted(p.name for p in REAL.glob("*.xml"))
LINK_CLASSES = {"nvlink", "xgmi", "c2c", "intra", "pcie", "sys", "loc", "net"}


def real(name: str, **extra):
    return load(REAL / name, **{**OPTIONS.get(name, {}), **extra})


def algbw(topo) -> Fraction:
    x, _ = maxflow_optimum(topo)
    return len(topo.compute_ids) * x


def test_corpus_is_listed_with_its_source():
    readme = (REAL.parent / "README.md").read_text()
    assert len(FILES) >= 60
    missing = [name for name in FILES if name not in readme]
    assert missing == []
    assert set(OPTIONS) <= set(FILES)


@pytest.mark.parametrize("name", FILES)
def test_every_dump_imports(name):
    topo = real(name)
    validate(topo)
    assert len(topo.compute_ids) >= 2
    assert all(n.group and n.role for n in topo.nodes)
    assert {link.extra["link_class"] for link in topo.links} <= LINK_CLASSES
    assert topo.extra["runtime"] == ("rccl" if name.startswith("rccl_") else "nccl")


def test_mi300x_xgmi_mesh():
    """8x MI300X (rccl_topo_8p_940.xml): 3072/7 GB/s.

    Each GPU (gcn="gfx942") lists one <xgmi> (count 1) to each of the 7 others: 48 GB/s per link
    (GFX94X_XGMI_WIDTH), imported at the 64 GB/s line rate (7 x 128 GB/s both ways per MI300X;
    RCCL's 48 is kept as rated_link_bw). Every PCIe link is "32.0 GT/s PCIe" x16 = 16·240/80 = 48 GB/s.
    A cut S holding k ≤ 6 GPUs loses at least the xGMI links k(8-k)·64, so its bound is
    8(8-k)·64 ≥ 1024. With k = 7 (all but GPU g) S must send g its 7·64 = 448 xGMI plus, at
    least, g's own 48 GB/s PCIe link (every PCIe link is 48; the two Sapphire Rapids sockets,
    Intel model 143, meet at SRP_QPI_BW 22 each way, RCCL @0cbce2a7 had 10: no cut here uses it):
    B⁺(S) = 496, bound 8/7·496 = 3968/7 ≈ 566.9 (with RCCL's rated 48: 3072/7 ≈ 438.9).
    """
    topo = real("rccl_topo_8p_940.xml")
    caps = topo.directed_bandwidths()
    assert caps[("b0.gpu0", "b0.gpu1")] == 64
    assert topo.node("b0.gpu0").extra["rated_link_bw"] == "48"
    assert algbw(topo) == Fraction(3968, 7)
    assert scale_up_warnings(topo) == []


def test_mi355x_xgmi_mesh():
    """8x MI355X (rccl_topo_8p_950.xml, gcn="gfx950"): 23424/35 GB/s.

    Current RCCL rates gfx950 GFX95X_XGMI_WIDTH 48 per link (topo.h:40, ncclTopoXGMISpeed
    matches "gfx95"; RCCL @0cbce2a7 gave it the default 24), kept as rated_link_bw; the links
    are at the MI355X line rate 76.8 (7 x 153.6 GB/s both ways). Each GPU has one xGMI link to
    each of the 7 others; every PCIe link is "32.0 GT/s PCIe" x16 = 48 GB/s (GPU - bridge -
    switch - CPU, the switch also holding a 400G NIC: speed 400000 Mb/s = 50 GB/s). For S = all
    but GPU g: B⁺(S) = 7·76.8 + 48 = 585.6 (leaving g's bridges out of S as well still costs a
    48 GB/s PCIe link), bound 8/7·585.6 = 23424/35 ≈ 669.3; k ≤ 6 GPUs in S lose ≥ k(8-k)·76.8
    of xGMI, bound ≥ 8·921.6/6 = 1228.8.
    """
    topo = real("rccl_topo_8p_950.xml")
    caps = topo.directed_bandwidths()
    assert caps[("b0.gpu0", "b0.gpu1")] == Fraction(384, 5)
    assert {topo.node(g).extra["rated_link_bw"] for g in topo.compute_ids} == {"48"}
    nets = [lk for lk in topo.links if lk.extra["link_class"] == "pcie" and "nic" in lk.source]
    assert len(nets) == 8 and all(lk.bandwidth == 48 for lk in nets)
    assert algbw(topo) == Fraction(23424, 35)
    assert scale_up_warnings(topo) == []


def test_rccl_c2c_model():
    """RCCL's C2C model (rccl_topo_2p_c2c_2nic.xml): 1920 GB/s.

    Two gfx942 GPUs: <xgmi count=8> each way, 8·64 = 512 at line rate (rated 8·48); <c2c
    count=8 bw=50000> to the CPU, 8·50000/1000 = 400 GB/s both ways (RCCL ncclTopoAddC2c as
    NCCL's); each GPU's "32.0 GT/s PCIe" x16 (48) to a bridge, the bridge's x16 (48) to the CPU.
    The NICs (400000 and 100000 Mb/s) take no part in one box. With N = 2 every cut separates
    the GPUs; S = all but GPU g costs least: B⁺(S) = 512 + 400 + 48 = 960 (leaving g's bridge
    out too costs the bridge's 48 instead of g's), bound 2·960/1 = 1920.
    """
    topo = real("rccl_topo_2p_c2c_2nic.xml")
    caps = topo.directed_bandwidths()
    assert caps[("b0.gpu0", "b0.gpu1")] == 512
    assert caps[("b0.gpu0", "b0.cpu0")] == caps[("b0.cpu0", "b0.gpu0")] == 400
    assert algbw(topo) == 1920


def test_mi300_numeric_gcn_940_rated_by_current_rccl():
    """4x MI300 (rccl_topo_4p_940.xml, gcn="940"): 320 GB/s.

    Current RCCL (ROCm/rocm-systems @03a89144) no longer maps the numeric gcnArch 940
    (convertGcnArchToGcnArchName knows 906/908/910/942/950/1250) and ncclTopoXGMISpeed matches
    "gfx942", so RCCL rates these links VEGA_XGMI_WIDTH 24 (RCCL @0cbce2a7: 48); that is only the
    GPU's rated_link_bw. gcnArch 940 is gfx940, an MI300 part: links at the 64 GB/s line rate.
    Each GPU has one xGMI link to each of the 3 others and a "32.0 GT/s PCIe" x16 link (48) to
    its own AMD socket; sockets meet at 16 each way. For S = all but GPU g: B⁺(S) = 3·64 + 48
    (g's socket in S; out of S, S feeds it 3·16 = 48 over SYS instead) = 240, bound 4/3·240 = 320;
    k ≤ 2 GPUs in S lose ≥ k(4-k)·64 of xGMI, bound ≥ 4·256/2 = 512.
    """
    topo = real("rccl_topo_4p_940.xml")
    caps = topo.directed_bandwidths()
    assert caps[("b0.gpu0", "b0.gpu1")] == 64
    assert {topo.node(g).extra["rated_link_bw"] for g in topo.compute_ids} == {"24"}
    assert algbw(topo) == 320


def test_mi250_16_gcds_reads_numeric_gcn_as_gfx90a():
    """16-GCD MI250 (rccl_topo_16p1h.xml, gcn="910"): at least 160 GB/s.

    RCCL maps the numeric gcn 910 to gfx90a (convertGcnArchToGcnArchName, archinfo.cc) and so
    uses 36 GB/s per xGMI link
    (MI200_XGMI_WIDTH), imported at the 50 GB/s line rate (MI250X: 100 GB/s both ways per link):
    GCD 0 lists count 4 to 0000:51, 1 to 0000:56, 2 to 0000:0e = 7·50 = 350 GB/s out. The issue's figure for this dump is >= 160 (it solved to 12.8 without xGMI).
    """
    topo = real("rccl_topo_16p1h.xml")
    caps = topo.directed_bandwidths()
    out = sum(bw for (u, v), bw in caps.items() if u == "b0.gpu0" and v.startswith("b0.gpu"))
    assert out == 7 * 50
    assert algbw(topo) >= 160


def test_gb300_two_host_mnnvl_dump():
    """2x GB300 tray (nccl_ebpf_gb300_mnnvl_topo_2tray_0405.xml): 189372/175 GB/s.

    Two host_hash values -> two boxes of 4 GPUs. Each GPU (sm 103) has count 18 NVLinks to the
    one NVSwitch both hosts share: 18·50 = 900 GB/s at the NVLink5 line rate (NCCL rates 40.1 per
    link, SM100_NVLINK_BW); <c2c bw=44712 count=5>
    to its CPU: 223.56 GB/s; its PCIe parent bridge (64 GT/s x16 = 96) reaches the root only
    through a "16.0 GT/s" x1 bridge: 1.5 GB/s. For k ≤ 6 GPUs in S the NVSwitch links alone give
    a bound ≥ 8·2·900/6 = 2400. For S = all but GPU g and its private bridge:
    B⁺(S) = 900 + 223.56 + 1.5 = 1125.06 (any other complement costs more: the CPU side of g's
    C2C also feeds the other GPU's 223.56 C2C), bound 8/7·1125.06 = 225012/175 ≈ 1285.8.
    """
    topo = real("nccl_ebpf_gb300_mnnvl_topo_2tray_0405.xml")
    assert topo.extra["boxes"] == 2 and topo.extra["hosts"] == 2
    assert {n.group for n in topo.nodes if n.is_compute} == {"b0", "b1"}
    caps = topo.directed_bandwidths()
    assert caps[("b1.gpu3", "nvsw")] == 900  # 18 x 50 line rate
    assert caps[("b0.gpu0", "b0.cpu0")] == Fraction(22356, 100)
    assert algbw(topo) == Fraction(225012, 175)
    assert scale_up_warnings(topo) == []


def test_azure_ndv4_skeleton_with_nvswitch_flag():
    """Azure ND A100 v4 skeleton (azhpc_ndv4-topo.xml) with --intra nvswitch:a100: 2112/7 GB/s.

    8 GPUs by class 0x030200, 8 NICs by 0x020700, no <gpu>. nvswitch:a100 = 12 NVLinks · 25
    (line rate) = 300 GB/s per GPU. Each GPU: "16 GT/s" x16 = 16·120/80 = 24 GB/s to its
    bridge. For S = all but one GPU: B⁺(S) = 300 + 24 = 324; leaving the bridge out of S too
    costs 4 more 24 GB/s links; k ≤ 6 GPUs lose ≥ 2·300 over NVSwitch (bound ≥ 800).
    Optimum 8/7·324 = 2592/7 ≈ 370.3.
    """
    topo = real("azhpc_ndv4-topo.xml")
    assert topo.extra["skeleton"] is True
    assert algbw(topo) == Fraction(2592, 7)


def test_azure_ncv4_is_pcie_only_and_says_so():
    """Azure NC A100 v4 (azhpc_ncv4-topo.xml): 16 GB/s, with the PCIe-only warning.

    4 GPUs, one per CPU socket, whose only <nvlink> points at the GPU itself (skipped, as NCCL
    skips it). PCIe link_speed="" link_width="0": width 16, default 60 per lane -> 12 GB/s.
    CPUs (AMD) are meshed at 16 GB/s each way. For S = all but one GPU: B⁺(S) = 12, bound
    4/3·12 = 16; S with k ≤ 3 GPUs and their sockets loses ≥ k(4-k)·16 SYS bandwidth, bound
    4(4-k)·16 ≥ 64; leaving a GPU's socket out of S costs its GPU link and SYS links more.
    """
    topo = real("azhpc_ncv4-topo.xml")
    assert algbw(topo) == 16
    assert len(topo.extra["import_notes"]) == 4
    assert scale_up_warnings(topo) == [
        "no NVLink/xGMI links found in box b0 — its 4 GPUs reach each other only through "
        "PCIe/CPU; is this dump complete?"
    ]


def test_ibm_cloud_h100_vm_starved_pcie():
    """IBM Cloud H100 VSI (ibm_cloud_h100_vsi_topo.xml): 1029/2 GB/s.

    Each GPU (sm 90) has NVLinks 5+5+4+4 = 18 to the NVSwitches: 18·25 = 450 GB/s at line rate
    (NCCL rates 20.6 per link, SM90_NVLINK_BW, kept as rated_link_bw). Its PCIe link is "32.0 GT/s PCIe" width 0 (= 16): 48 GB/s, shared only
    with a NIC under a bridge whose uplink is "2.5 GT/s PCIe" x1 = 15/80 GB/s. For S = all but
    GPU g, its bridge and its NIC: B⁺(S) = 450 + 0.1875 = 450.1875 (keeping the bridge or the
    NIC in S adds a 48 GB/s link); k ≤ 6 GPUs lose ≥ 2·450 over NVSwitch (bound ≥ 1200).
    Optimum 8/7·450.1875 = 1029/2 = 514.5 (the 8x H100 template: 514.3, its NICs included).
    """
    topo = real("ibm_cloud_h100_vsi_topo.xml")
    assert algbw(topo) == Fraction(1029, 2)
