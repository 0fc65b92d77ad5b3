"""NCCL topology dump import: devices, NCCL's PCIe rates, NVSwitch merge, replication into boxes."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from naive import maxflow_optimum

from solver.io.formats import load
from solver.io.nccl.topo_xml import cpu_link_bandwidth, loads, nvlink_bandwidth, pci_bandwidth
from solver.model.errors import TopologyError
from solver.model.topology import validate

DGX = Path(__file__).resolve().parents[1] / "data" / "dgx_a100_nccl_topo.xml"


def roles(topo):
    out = {}
    for n in topo.nodes:
        out[n.role] = out.get(n.role, 0) + 1
    return out


def test_pci_rates_follow_nccl():
    assert pci_bandwidth("8.0 GT/s PCIe", "16", "x") == 12  # Gen3 x16
    assert pci_bandwidth("16.0 GT/s PCIe", "16", "x") == 24  # Gen4 x16
    assert pci_bandwidth("32 GT/s", "16", "x") == 48  # Gen5 x16, old kernel string
    assert pci_bandwidth("64.0 GT/s PCIe", "8", "x") == 48
    assert pci_bandwidth("2.5 GT/s PCIe", "1", "x") == Fraction(15, 80)
    assert pci_bandwidth("16.0 GT/s PCIe", "0", "x") == 24  # width 0 means 16
    assert pci_bandwidth("Unknown", "4", "x") == 3  # unknown speed: 60 per lane
    assert pci_bandwidth(None, None, "x") == 12
    with pytest.raises(TopologyError, match="link_width must be a whole number"):
        pci_bandwidth("8 GT/s", "x16", "pci 0000:01:00.0")


def test_nvlink_and_cpu_rates():
    # NCCL topo.h:19-24: SM60 18, SM70/SM80 20, SM86 12, SM90 20.6, SM100 40.1 GB/s per link
    assert nvlink_bandwidth(80) * 12 == 240  # A100: 12 links
    assert nvlink_bandwidth(90) * 18 == Fraction(3708, 10)  # H100: 18 links
    assert nvlink_bandwidth(70) * 6 == 120  # V100
    assert nvlink_bandwidth(86) == 12 and nvlink_bandwidth(60) == 18
    assert nvlink_bandwidth(100) == Fraction(401, 10)
    assert nvlink_bandwidth(50) == 20  # below sm 60: SM80's figure
    x86 = {"arch": "x86_64"}
    assert cpu_link_bandwidth({**x86, "vendor": "AuthenticAMD"}) == 16
    intel = {**x86, "vendor": "GenuineIntel", "familyid": "6"}
    assert cpu_link_bandwidth({**intel, "modelid": "85"}) == 10  # Skylake
    assert cpu_link_bandwidth({**intel, "modelid": "63"}) == 6  # Broadwell
    assert cpu_link_bandwidth({**intel, "modelid": "143"}) == 22  # Sapphire Rapids (RCCL too now)
    assert cpu_link_bandwidth({**intel, "modelid": "207"}) == 40  # Emerald Rapids
    assert cpu_link_bandwidth({**x86, "vendor": "AMD"}) == 5000  # unknown vendor: LOC_BW
    assert cpu_link_bandwidth({"arch": "ppc64"}) == 32
    assert cpu_link_bandwidth({"arch": "arm64"}) == 6


def test_dgx_a100_dump_one_box():
    topo = load(DGX)
    assert topo.compute_ids == tuple(f"b0.gpu{i}" for i in range(8))
    # each Broadcom PEX Gen4 switch (0x1000 0xc010 0x1000 0xa064) is flattened with its two sub
    # switches (ncclTopoFlattenBcmSwitches): 4 switches of 2 GPUs + 2 NICs each, not 12 bridges
    assert roles(topo) == {"cpu": 2, "pcie": 4, "gpu": 8, "nic": 8, "nvswitch": 1}
    assert sum("flattened with its 2 sub switch" in n for n in topo.extra["import_notes"]) == 4
    caps = topo.directed_bandwidths()
    for i in range(8):
        assert (
            caps[(f"b0.gpu{i}", "b0.nvsw")] == 300
        )  # six NVSwitches x 2 links x 25 GB/s line rate
        assert topo.node(f"b0.gpu{i}").extra["rated_link_bw"] == "20"  # NCCL's SM80 figure
    assert caps[("b0.gpu0", "b0.pcie0")] == caps[("b0.gpu1", "b0.pcie0")] == 24  # PCIe Gen4 x16
    assert caps[("b0.nic0", "b0.pcie0")] == caps[("b0.pcie0", "b0.cpu3")] == 24
    assert caps[("b0.cpu3", "b0.cpu7")] == 16  # AMD inter-socket
    # the NVMe drive and the NVSwitches' own PCI functions are not nodes
    busids = {n.extra.get("busid") for n in topo.nodes}
    assert "0000:09:00.0" not in busids and "0000:c4:00.0" not in busids
    assert topo.node("b0.gpu3").extra == {
        "busid": "0000:4e:00.0",
        "dev": 3,
        "rank": 3,
        "sm": 80,
        "rated_link_bw": "20",
    }
    assert topo.node("b0.nic5").extra["name"] == "mlx5_5"
    # every GPU ingress: 300 NVLink + 24 PCIe, so the bound is 8 * 324 / 7
    x, _ = maxflow_optimum(topo)
    assert 8 * x == Fraction(8 * 324, 7)


def test_dgx_a100_dump_replicated_on_ib():
    topo = load(DGX, boxes=2, fabric="ib")
    validate(topo)
    assert len(topo.compute_ids) == 16
    caps = topo.directed_bandwidths()
    ib_links = [(u, v) for (u, v) in caps if v == "ib0"]
    assert len(ib_links) == 16
    assert all(caps[e] == 25 for e in ib_links)  # 200000 Mb/s
    assert topo.extra["fabric"] == "ib" and topo.name.startswith("2x ")
    x, _ = maxflow_optimum(topo)
    assert x > 0


def test_dgx_a100_dump_replicated_on_rails():
    topo = load(DGX, boxes=3, fabric="rail")
    caps = topo.directed_bandwidths()
    assert sum(1 for s in topo.switch_ids if s.startswith("rail")) == 8
    for b in range(3):
        for k in range(8):
            assert caps[(f"b{b}.nic{k}", f"rail{k}")] == 25


def test_layout_hints_are_distinct():
    topo = load(DGX, boxes=2)
    positions = {(n.x, n.y) for n in topo.nodes}
    assert len(positions) == len(topo.nodes)
    assert all(n.group for n in topo.nodes)


PCIE_MESH = """<system version="1">
  <cpu numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="85">
    <pci busid="0000:1a:00.0" class="0x030200" link_speed="8.0 GT/s PCIe" link_width="16">
      <gpu dev="1" sm="70" rank="1" gdr="1">
        <nvlink target="0000:1b:00.0" count="2" tclass="0x030200"/>
        <nvlink target="0000:1c:00.0" count="1" tclass="0x030200"/>
      </gpu>
    </pci>
    <pci busid="0000:1b:00.0" class="0x030200" link_speed="8.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="70" rank="0" gdr="1">
        <nvlink target="0000:1a:00.0" count="2" tclass="0x030200"/>
      </gpu>
    </pci>
    <nic>
      <net name="eth0" dev="0" speed="100000" port="1"/>
    </nic>
  </cpu>
  <cpu numaid="1" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="85">
    <pci busid="0000:3a:00.0" class="0x060400" link_speed="8.0 GT/s PCIe" link_width="16">
      <pci busid="0000:1c:00.0" class="0x030200" link_speed="8.0 GT/s PCIe" link_width="8">
        <gpu dev="2" sm="70" rank="2" gdr="1"/>
      </pci>
      <pci busid="0000:3c:00.0" class="0x020000" link_speed="8.0 GT/s PCIe" link_width="16">
        <nic>
          <net name="mlx5_0" dev="1" speed="100000" port="1"/>
          <net name="mlx5_1" dev="2" speed="100000" port="2"/>
        </nic>
      </pci>
    </pci>
  </cpu>
</system>
"""


def test_gpu_to_gpu_nvlinks_pcie_and_nics():
    topo = loads(PCIE_MESH, "mesh.xml")
    validate(topo)
    # GPUs are numbered in rank order
    assert [topo.node(c).extra["dev"] for c in topo.compute_ids] == [0, 1, 2]
    caps = topo.directed_bandwidths()
    # both sides list the 2-link NVLink: one full-duplex link of 2 x 25 GB/s (sm 70 line rate;
    # NCCL rates it 20 per link, kept as rated_link_bw)
    assert caps[("b0.gpu0", "b0.gpu1")] == caps[("b0.gpu1", "b0.gpu0")] == 50
    assert topo.node("b0.gpu0").extra["rated_link_bw"] == "20"
    duplex = [lk for lk in topo.links if {lk.source, lk.target} == {"b0.gpu0", "b0.gpu1"}]
    assert len(duplex) == 1 and not duplex[0].directed
    # only gpu1 lists its link to gpu2: one way
    assert caps[("b0.gpu1", "b0.gpu2")] == 25 and ("b0.gpu2", "b0.gpu1") not in caps
    # PCIe Gen3 x8 for gpu2, Skylake UPI between the sockets
    assert caps[("b0.gpu2", "b0.pcie0")] == 6
    assert caps[("b0.cpu0", "b0.cpu1")] == 10
    # a NIC without PCI info hangs off its CPU at LOC_BW; a dual-port NIC shares its PCIe
    assert caps[("b0.nic0", "b0.cpu0")] == 5000
    assert topo.node("b0.nic1").role == "nic" and topo.node("b0.nic2").role == "nic"
    port_parent = {v for (u, v) in caps if u == "b0.nic1"}
    assert port_parent == {"b0.pcie1"}
    assert caps[("b0.pcie1", "b0.pcie0")] == 12


def test_multi_box_from_three_nics():
    topo = loads(PCIE_MESH, "mesh.xml", boxes=2, fabric="rail")
    validate(topo)
    assert sum(1 for s in topo.switch_ids if s.startswith("rail")) == 3


@pytest.mark.parametrize(
    "text, pattern",
    [
        ("<system><cpu>", "invalid XML"),
        ("<graphml/>", "not an NCCL topology dump"),
        ("<system/>", "no <cpu> element"),
        ("<system><cpu numaid='0'/></system>", "no <gpu> element found"),
        (
            "<system><cpu><pci busid='0000:01:00.0' class='0x030200'><gpu sm='80' rank='0'/></pci></cpu></system>",
            "<gpu> at busid '0000:01:00.0': missing 'dev'",
        ),
        (
            (
                "<system><cpu><pci busid='0000:01:00.0' class='0x030200'><gpu dev='0' sm='eighty' rank='0'/>"
                "</pci></cpu></system>"
            ),
            "'sm' must be a whole number",
        ),
        (
            (
                "<system><cpu><pci busid='0000:01:00.0' class='0x030200' link_width='x'><gpu dev='0' sm='80' rank='0'/>"
                "</pci></cpu></system>"
            ),
            "<pci busid='0000:01:00.0'>: link_width must be a whole number",
        ),
        (
            (
                "<system><cpu><pci busid='0000:01:00.0' class='0x030200'><gpu dev='0' sm='80' rank='0'>"
                "<nvlink target='0000:99:00.0' count='two' tclass='0x068000'/></gpu></pci></cpu></system>"
            ),
            "'count' must be a whole number",
        ),
        (
            (
                "<system><cpu><pci busid='0000:01:00.0' class='0x030200'><gpu dev='0' sm='80' rank='0'/></pci>"
                "<nic><net name='ib0' dev='0' speed='fast'/></nic></cpu></system>"
            ),
            "<net name='ib0'>: speed (Mb/s) must be a whole number",
        ),
        (
            (
                "<system><cpu><pci busid='0000:01:00.0' class='0x030200'><gpu dev='0' rank='0'>"
                "<nvlink target='0000:02:00.0' count='2' tclass='0x068000'/></gpu></pci></cpu></system>"
            ),
            "has <nvlink> links but no 'sm' attribute to pick the NVLink speed; give it with --nvlink-bw",
        ),
        (
            (
                "<system><cpu><pci busid='0000:01:00.0' class='0x030200'><gpu dev='0' rank='0'>"
                "<xgmi target='0000:02:00.0' count='2' tclass='0x038000'/></gpu></pci></cpu></system>"
            ),
            "has <xgmi> links but no 'gcn' attribute to pick the xGMI speed; give it with --xgmi-bw",
        ),
        ("<graphs version='1'/>", "an NCCL graph dump (NCCL_GRAPH_DUMP_FILE, <graphs>)"),
        (
            (
                "<system><cpu><pci busid='0000:01:00.0' class='0x030200' link_speed='16 GT/s'/>"
                "<pci busid='0000:02:00.0' class='0x030200'/></cpu></system>"
            ),
            "skeleton dump (2 GPUs by PCI class, no <gpu>/<nvlink> elements): the GPU-to-GPU "
            "fabric is missing; give it with --intra nvswitch:GBPS, mesh:GBPS or none",
        ),
    ],
)
def test_bad_dumps_are_named(text, pattern):
    with pytest.raises(TopologyError) as info:
        loads(text, "dump.xml")
    assert pattern in str(info.value)
    assert str(info.value).startswith("dump.xml")


def test_bad_options():
    text = DGX.read_text()
    with pytest.raises(TopologyError, match="--boxes must be a whole number from 1"):
        loads(text, "x.xml", boxes=0)
    with pytest.raises(TopologyError, match="--fabric must be one of ib, rail"):
        loads(text, "x.xml", boxes=2, fabric="ethernet")
    no_nic = "<system><cpu><pci busid='0000:01:00.0' class='0x030200'><gpu dev='0' sm='80' rank='0'/></pci></cpu></system>"
    with pytest.raises(TopologyError, match="has no <net>"):
        loads(no_nic, "x.xml", boxes=2)


def test_single_gpu_box_is_rejected_by_validation(tmp_path):
    path = tmp_path / "one.xml"
    path.write_text(
        "<system><cpu><pci busid='0000:01:00.0' class='0x030200'><gpu dev='0' sm='80' rank='0'/></pci></cpu></system>"
    )
    with pytest.raises(TopologyError, match="at least two compute nodes"):
        load(path)
    assert len(load(path, boxes=1, check=False).compute_ids) == 1


def test_committed_imported_sample_is_current():
    sample = DGX.parent.parent.parent / "sample_topologies" / "dgx_a100_nccl_2x.json"
    fresh = load(DGX, boxes=2, fabric="ib")
    committed = load(sample)
    assert committed == fresh
    assert committed.directed_bandwidths() == fresh.directed_bandwidths()


def _two_gpu_dump(nets: str, gpu_attrs: str = "sm='90'", link: str = "nvlink") -> str:
    gpu = (
        "<pci busid='0000:{b}:00.0' class='0x030200' link_speed='32.0 GT/s PCIe' link_width='16'>"
        "<gpu dev='{d}' {attrs} rank='{d}'><{link} target='0000:{o}:00.0' count='2' "
        "tclass='0x030200'/></gpu></pci>"
    )
    gpus = gpu.format(b="01", d=0, o="02", attrs=gpu_attrs, link=link) + gpu.format(
        b="02", d=1, o="01", attrs=gpu_attrs, link=link
    )
    return (
        "<system version='1'><cpu numaid='0' arch='x86_64' vendor='AuthenticAMD'>"
        f"{gpus}<pci busid='0000:03:00.0' class='0x020700' link_speed='32.0 GT/s PCIe' "
        f"link_width='16'><nic>{nets}</nic></pci></cpu></system>"
    )


def test_net_elements_the_runtime_does_not_use_are_skipped():
    """NCCL @5067397c topo.cc:495-504: no dev -> no network device; net="0" -> GIN/RMA only."""
    used = "<net name='mlx5_0' dev='0' speed='800000' net='1' gin='1'/>"
    topo = loads(_two_gpu_dump(used), "x.xml", boxes=2)
    assert {lk.bandwidth for lk in topo.links if lk.extra["link_class"] == "net"} == {100}  # 800G
    for skipped in (
        "<net name='mlx5_0' speed='400000'/>",
        "<net name='mlx5_0' dev='0' net='0' gin='1'/>",
    ):
        one = loads(_two_gpu_dump(skipped), "x.xml")
        assert not any(n.role == "nic" for n in one.nodes)
        assert any("makes no network device" in note for note in one.extra["import_notes"])
        with pytest.raises(TopologyError, match="has no <net>"):
            loads(_two_gpu_dump(skipped), "x.xml", boxes=2)
    # RCCL reads no net attribute: net='0' is still a NIC there
    rccl = loads(
        _two_gpu_dump("<net name='n' dev='0' net='0'/>", "sm='256' gcn='gfx942'", "xgmi"), "x.xml"
    )
    assert sum(n.role == "nic" for n in rccl.nodes) == 1


def test_rccl_dump_nvlinks_are_not_read():
    """RCCL's AMD build reads only <xgmi> (ncclTopoAddXGMI); an <nvlink> in an AMD dump is skipped."""
    topo = loads(_two_gpu_dump("", "sm='256' gcn='gfx942'", "nvlink"), "x.xml")
    assert topo.extra["runtime"] == "rccl"
    assert not any(lk.extra["link_class"] == "nvlink" for lk in topo.links)
    assert any("RCCL does not read" in note for note in topo.extra["import_notes"])
    nccl = loads(_two_gpu_dump("", "sm='90'", "nvlink"), "x.xml")
    assert nccl.directed_bandwidths()[("b0.gpu0", "b0.gpu1")] == 50  # 2 x 25 line rate


def _bcm_dump(top_sd: str, sub_sd: str, pcilink: str = "") -> str:
    def bridge(busid, sd, inner):
        return (
            f"<pci busid='{busid}' class='0x060400' vendor='0x1000' device='0xc030' "
            f"subsystem_vendor='0x1000' subsystem_device='{sd}' link_speed='32.0 GT/s PCIe' "
            f"link_width='{'16' if busid.endswith('01:00.0') else '4'}'>{inner}</pci>"
        )

    def gpu(busid, dev):
        return (
            f"<pci busid='{busid}' class='0x030200' link_speed='32.0 GT/s PCIe' link_width='16'>"
            f"<gpu dev='{dev}' sm='90' rank='{dev}'/></pci>"
        )

    subs = bridge("0000:02:00.0", sub_sd, gpu("0000:03:00.0", 0) + pcilink) + bridge(
        "0000:04:00.0", sub_sd, gpu("0000:05:00.0", 1)
    )
    return (
        "<system version='1'><cpu numaid='0' arch='x86_64' vendor='AuthenticAMD'>"
        f"{bridge('0000:01:00.0', top_sd, subs)}</cpu></system>"
    )


def test_broadcom_gen5_switch_is_flattened():
    """NCCL topo.cc:204-265: a Gen5 PEX switch (subsystem 0x0xxx) absorbs its 0x1xxx sub switches.

    Unflattened, each GPU reaches the switch through its sub switch's x4 link (12 GB/s);
    flattened, its own x16 link (48) goes straight to the switch.
    """
    flat = loads(_bcm_dump("0x0001", "0x1001"), "x.xml")
    assert roles(flat)["pcie"] == 1
    caps = flat.directed_bandwidths()
    assert caps[("b0.gpu0", "b0.pcie0")] == caps[("b0.gpu1", "b0.pcie0")] == 48
    assert any(
        "Gen5 switch '0000:01:00.0' flattened with its 2" in n for n in flat.extra["import_notes"]
    )
    kept = loads(_bcm_dump("0x0001", "0x2001"), "x.xml")  # 0x2xxx: no level-1 Gen5 id
    assert roles(kept)["pcie"] == 3
    assert kept.directed_bandwidths()[("b0.pcie1", "b0.pcie0")] == 12  # x4 Gen5 sub switch link
    assert "import_notes" not in kept.extra


def test_pcilink_joins_two_switches_one_way():
    """<pcilink target> (NCCL topo.cc:873-892): a one-way LOC_BW link from a PCI switch to another."""
    topo = loads(_bcm_dump("0x2001", "0x2001", "<pcilink target='0000:04:00.0'/>"), "x.xml")
    caps = topo.directed_bandwidths()
    assert caps[("b0.pcie1", "b0.pcie2")] == 5000 and ("b0.pcie2", "b0.pcie1") not in caps
    bad = loads(_bcm_dump("0x2001", "0x2001", "<pcilink target='0000:05:00.0'/>"), "x.xml")
    assert any("names no other PCI switch" in n for n in bad.extra["import_notes"])
