"""NCCL/RCCL dumps beyond one box: several hosts, skeletons, overrides, and the CLI around them."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from solver.cli import main
from solver.io.formats import load
from solver.io.nccl.topo_xml import loads
from solver.model.errors import TopologyError
from solver.model.topology import validate

REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "topo"
GB300 = REAL / "nccl_ebpf_gb300_mnnvl_topo_2tray_0405.xml"
MI300X = REAL / "rccl_topo_8p_940.xml"
NDV4 = REAL / "azhpc_ndv4-topo.xml"
SAMPLE = Path(__file__).resolve().parents[2] / "sample_topologies" / "dgx_a100_2x.json"

TWO_HOSTS = """<system version="1">
  <cpu host_hash="0xa1" numaid="0" arch="x86_64" vendor="AuthenticAMD" familyid="25" modelid="1">
    <pci busid="0000:01:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="80" rank="0"><nvlink target="0000:02:00.0" count="4" tclass="0x030200"/></gpu>
    </pci>
    <pci busid="0000:02:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">
      <gpu dev="1" sm="80" rank="1"><nvlink target="0000:01:00.0" count="4" tclass="0x030200"/></gpu>
    </pci>
    <pci busid="0000:03:00.0" class="0x020700" link_speed="16.0 GT/s PCIe" link_width="16">
      <nic><net name="mlx5_0" dev="0" speed="200000"/></nic>
    </pci>
  </cpu>
  <cpu host_hash="0xb2" numaid="0" arch="x86_64" vendor="AuthenticAMD" familyid="25" modelid="1">
    <pci busid="0000:01:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="80" rank="3"><nvlink target="0000:02:00.0" count="4" tclass="0x030200"/></gpu>
    </pci>
    <pci busid="0000:02:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">
      <gpu dev="1" sm="80" rank="2"><nvlink target="0000:01:00.0" count="4" tclass="0x030200"/></gpu>
    </pci>
    <pci busid="0000:03:00.0" class="0x020700" link_speed="16.0 GT/s PCIe" link_width="16">
      <nic><net name="mlx5_0" dev="0" speed="200000"/></nic>
    </pci>
  </cpu>
</system>
"""


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_host_hashes_become_boxes_without_boxes_option():
    topo = loads(TWO_HOSTS, "two.xml")
    validate(topo)
    assert topo.extra["boxes"] == 2 and topo.extra["hosts"] == 2
    gpus = {n.id: n for n in topo.nodes if n.is_compute}
    assert sorted(gpus) == ["b0.gpu0", "b0.gpu1", "b1.gpu0", "b1.gpu1"]
    assert {n.group for n in gpus.values()} == {"b0", "b1"}
    # within a host GPUs follow rank order: host b's rank 2 GPU is dev 1
    assert gpus["b1.gpu0"].extra["rank"] == 2 and gpus["b1.gpu0"].extra["dev"] == 1
    caps = topo.directed_bandwidths()
    assert caps[("b0.gpu0", "b0.gpu1")] == 100  # 4 NVLinks x 25 (sm 80 line rate), same busid
    assert caps[("b0.nic0", "ib0")] == 25 and caps[("b1.nic0", "ib0")] == 25
    # repeating the dump repeats both hosts
    again = loads(TWO_HOSTS, "two.xml", boxes=2, fabric="rail")
    assert again.extra["boxes"] == 4
    assert {n.group for n in again.nodes if n.is_compute} == {"b0", "b1", "b2", "b3"}
    assert caps[("b0.nic0", "ib0")] == again.directed_bandwidths()[("b3.nic0", "rail0")]


def test_multi_node_nvlink_dump_shares_one_nvswitch():
    topo = load(GB300)
    nvsw = [n for n in topo.nodes if n.role == "nvswitch"]
    assert [n.id for n in nvsw] == ["nvsw"]
    caps = topo.directed_bandwidths()
    per_gpu = {caps[(f"b{b}.gpu{g}", "nvsw")] for b in (0, 1) for g in range(4)}
    assert per_gpu == {Fraction(900)}  # 18 NVLink5 x 50 GB/s line rate (NCCL rates 40.1 each)
    assert topo.node("b0.gpu0").extra["rated_link_bw"] == "401/10"
    assert caps[("b0.cpu0", "b0.cpu1")] == 6  # arm64: ARM_BW
    assert topo.extra["runtime"] == "nccl"


def test_skeleton_needs_intra_and_takes_it(capsys):
    code, out, err = run(["info", NDV4], capsys)
    assert code == 2 and out == ""
    assert err.strip() == (
        f"error: {NDV4}: skeleton dump (8 GPUs by PCI class, no <gpu>/<nvlink> elements): the "
        "GPU-to-GPU fabric is missing; give it with --intra nvswitch:GBPS, mesh:GBPS or none"
    )
    mesh = load(NDV4, intra="mesh:48")
    caps = mesh.directed_bandwidths()
    assert caps[("b0.gpu0", "b0.gpu7")] == 48 and caps[("b0.gpu7", "b0.gpu0")] == 48
    assert sum(1 for n in mesh.nodes if n.role == "nic") == 8
    code, _, err = run(["info", NDV4, "--intra", "nvswitch:a100", "--boxes", "2"], capsys)
    assert code == 2 and "the skeleton's NICs have no speed; give it with --net-bw GBPS" in err
    topo = load(NDV4, intra="nvswitch:450", boxes=2, fabric="rail", bandwidth={"net": 25})
    caps = topo.directed_bandwidths()
    assert caps[("b1.gpu3", "b1.nvsw")] == 450 and caps[("b1.nic7", "rail7")] == 25
    with pytest.raises(TopologyError, match="--intra applies to skeleton dumps only"):
        load(MI300X, intra="nvswitch:450")


def test_overrides_replace_one_class(capsys):
    base = load(MI300X).directed_bandwidths()
    topo = load(MI300X, bandwidth={"xgmi": 70, "pcie": 32})
    caps = topo.directed_bandwidths()
    # line rate 64 by default (RCCL's rated 48 kept on the GPU); the override is taken as given
    assert base[("b0.gpu0", "b0.gpu1")] == 64 and caps[("b0.gpu0", "b0.gpu1")] == 70
    pcie = [lk for lk in topo.links if lk.extra["link_class"] == "pcie"]
    assert pcie and all(lk.bandwidth == 32 for lk in pcie)
    sys_links = [lk for lk in topo.links if lk.extra["link_class"] == "sys"]
    assert sys_links and all(lk.bandwidth == 22 for lk in sys_links)  # Intel model 143: SRP_QPI_BW
    code, out, _ = run(["info", MI300X, "--xgmi-bw", "64", "--json"], capsys)
    assert code == 0
    assert json.loads(out)["ingress_gbps"] == {"min": 496.0, "max": 496.0}  # 7 x 64 + PCIe 48
    code, _, err = run(["info", SAMPLE, "--xgmi-bw", "64"], capsys)
    assert code == 2
    assert err.strip() == f"error: --xgmi-bw applies to NCCL/RCCL .xml dumps only, not {SAMPLE}"
    code, _, err = run(["solve", MI300X, "--nvlink-bw", "-3"], capsys)
    assert err.strip() == "error: --nvlink-bw must be > 0 GB/s, got -3" and code == 2


def test_solve_prints_the_pcie_only_warning(capsys):
    pcie_only = REAL / "rccl_topo_8p_pcie.xml"
    code, out, err = run(["solve", pcie_only], capsys)
    assert code == 0
    assert (
        "  warning: no NVLink/xGMI links found in box b0 — its 8 GPUs reach each other only "
        "through PCIe/CPU; is this dump complete?"
    ) in out.splitlines()
    code, out, err = run(["solve", pcie_only, "--json"], capsys)
    assert code == 0 and out.startswith("{")
    assert err.startswith("warning: no NVLink/xGMI links found in box b0")
    code, out, _ = run(["info", pcie_only], capsys)
    assert "warning:          no NVLink/xGMI links found in box b0" in out
    code, out, err = run(["solve", MI300X], capsys)
    assert "warning" not in out + err


def test_meshed_gpus_are_not_drawn_on_one_line():
    """No three GPUs of an xGMI mesh share a line, so no link is drawn over another GPU."""
    topo = load(MI300X)
    pts = [(n.x, n.y) for n in topo.nodes if n.is_compute]
    for i, (ax, ay) in enumerate(pts):
        for j in range(i + 1, len(pts)):
            for k in range(j + 1, len(pts)):
                (bx, by), (cx, cy) = pts[j], pts[k]
                assert abs((bx - ax) * (cy - ay) - (by - ay) * (cx - ax)) > 1.0


@pytest.mark.parametrize(
    "argv",
    [
        ["info"],
        ["convert", "{out}"],
        ["solve"],
        ["export", "-o", "{out}", "--max-trees-per-root", "1"],
        ["simulate", "--sizes", "1M"],
    ],
)
def test_every_fabric_command_takes_the_dump_options(argv, tmp_path, capsys):
    """One loading path: each command reads the dump with --intra and the overrides."""
    out = tmp_path / ("out.json" if argv[0] == "convert" else "out.xml")
    rest = [a.replace("{out}", str(out)) for a in argv[1:]]
    code, _, err = run(
        [
            argv[0],
            NDV4,
            *rest,
            "--intra",
            "nvswitch:a100",
            "--boxes",
            "2",
            "--fabric",
            "rail",
            "--net-bw",
            "25",
            "--pcie-bw",
            "32",
        ],
        capsys,
    )
    assert code == 0, err
    code, _, err = run([argv[0], SAMPLE, *rest, "--pcie-bw", "32"], capsys)
    assert code == 2
    assert err.strip() == f"error: --pcie-bw applies to NCCL/RCCL .xml dumps only, not {SAMPLE}"


def _one_device_two_gpus(mlopart: bool) -> str:
    """One PCI GPU device holding two <gpu> elements: the shape NCCL writes for the two uGPUs of
    a GPU under an MLOPart MPS server (with ``mlopart=``) or for two ranks on one GPU."""
    attrs = [' mlopart="0"', ' mlopart="1"'] if mlopart else ["", ""]
    gpus = "".join(
        f'<gpu dev="0" sm="100"{a} rank="{r}" gdr="1">'
        '<nvlink target="fffffff:ff:ff.0" count="18" tclass="0x068000"/></gpu>'
        for r, a in enumerate(attrs)
    )
    return (
        '<system version="1"><cpu host_hash="0x1" numaid="0" arch="arm64">'
        '<pci busid="0002:81:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">'
        f"{gpus}</pci></cpu></system>"
    )


def test_several_gpus_in_one_pci_device_are_refused_with_the_reason(capsys, tmp_path):
    with pytest.raises(TopologyError) as exc:
        loads(_one_device_two_gpus(True), "mlo.xml")
    text = str(exc.value)
    assert "uGPU partitions of one GPU" in text and "MLOPart" in text
    assert "src/graph/topo.cc:590-623" in text and "without the MLOPart MPS server" in text
    assert "\n" not in text
    with pytest.raises(TopologyError, match=r"several ranks on one GPU .*topo\.cc:660-667"):
        loads(_one_device_two_gpus(False), "ranks.xml")
    path = tmp_path / "mlo.xml"
    path.write_text(_one_device_two_gpus(True), encoding="utf-8")
    code, out, err = run(["info", path], capsys)
    assert code == 2 and out == "" and err.startswith("error: ") and err.count("\n") == 1
