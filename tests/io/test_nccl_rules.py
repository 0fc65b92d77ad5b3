"""The runtimes' bandwidth rules (solver/io/nccl/rates.py) and the importer options around them."""

from __future__ import annotations

from fractions import Fraction

import pytest

from solver.io.nccl import rates
from solver.io.nccl.options import IntraFabric, parse_intra, parse_overrides
from solver.model.errors import TopologyError


@pytest.mark.parametrize(
    "gcn, per_link",
    [
        # RCCL ROCm/rocm-systems @03a89144 projects/rccl/src/graph/topo.h:302-313 (ncclTopoXGMISpeed)
        ("gfx942", 48),  # MI300X: GFX94X_XGMI_WIDTH
        ("gfx942:sramecc+:xnack-", 48),  # prefix match (IsArchMatch)
        ("gfx940", 24),  # current RCCL matches "gfx942", not "gfx94": the default
        ("gfx941", 24),
        ("gfx950", 48),  # MI355X: GFX95X_XGMI_WIDTH
        ("gfx1250", 64),  # GFX125X_XGMI_WIDTH
        ("gfx90a", 36),  # MI200_XGMI_WIDTH
        ("gfx90a:sramecc+:xnack-", 36),
        ("910", 36),  # numeric gcnArch 910 is gfx90a for RCCL (convertGcnArchToGcnArchName)
        ("942", 48),
        ("950", 48),
        ("1250", 64),
        ("940", 24),  # current RCCL no longer maps 940/941 (RCCL @0cbce2a7 did: 48)
        ("941", 24),
        ("908", 24),  # MI100: VEGA_XGMI_WIDTH
        ("906", 24),
        ("gfx1100", 24),
        ("21943", 24),  # an unknown number stays itself: the default
    ],
)
def test_xgmi_speed_by_arch(gcn, per_link):
    assert rates.xgmi_bandwidth(gcn) == per_link


def test_gcn_names():
    assert rates.gcn_arch_name("910") == "gfx90a"
    assert rates.gcn_arch_name("gfx942") == "gfx942"
    # the hardware a deprecated gcnArch names (line rate, library) vs the name RCCL rates it by
    assert rates.gcn_arch_name("940") == "gfx940" and rates.rccl_arch_name("940") == "940"
    assert rates.gcn_arch_name("950") == rates.rccl_arch_name("950") == "gfx950"
    assert rates.xgmi_line_rate("940") == 64  # MI300-class links whatever RCCL rates them
    assert rates.xgmi_line_rate("gfx950") == Fraction(384, 5)


@pytest.mark.parametrize(
    "attrs, runtime, counts",
    [
        ({"dev": "0", "speed": "400000"}, "nccl", True),
        ({"name": "mlx5_0", "speed": "400000"}, "nccl", False),  # no dev: NCCL topo.cc:495-497
        ({"name": "mlx5_0"}, "rccl", False),  # RCCL ncclTopoAddNic too
        ({"dev": "0", "net": "1", "gin": "1"}, "nccl", True),
        ({"dev": "0", "net": "0", "gin": "1"}, "nccl", False),  # GIN only: topo.cc:499-504
        ({"dev": "0", "net": "0x0"}, "nccl", False),
        ({"dev": "0", "net": "junk"}, "nccl", False),  # strtol -> 0
        ({"dev": "0", "net": "0"}, "rccl", True),  # RCCL reads no net attribute
    ],
)
def test_which_net_elements_are_network_devices(attrs, runtime, counts):
    assert rates.net_counts(attrs, runtime) is counts


def test_nic_speeds_are_megabits():
    # Port speed in Mbps (NCCL src/include/plugin/net/net_v12.h:33): 400G and 800G NICs
    assert rates.net_bandwidth("400000", "x") == 50
    assert rates.net_bandwidth("800000", "x") == 100
    assert rates.net_bandwidth("-1", "x") == Fraction(10000, 8000)  # speed <= 0 -> 10000


@pytest.mark.parametrize(
    "speed, width, gbps",
    [
        ("8.0 GT/s PCIe", "16", 12),
        ("16.0 GT/s PCIe", "16", 24),
        ("32 GT/s", "16", 48),
        ("64.0 GT/s PCIe", "16", 96),
        ("16 GT/s PCIe", "16", 24),  # prefix "16 GT/s" matches first
        ("16.0 GT/s PCIe", "1", Fraction(3, 2)),
        ("", "0", 12),  # empty speed: 60 per lane; width 0 -> 16
        (None, None, 12),
        ("Unknown", "4", 3),
        ("2.5 GT/s PCIe", "1", Fraction(15, 80)),
    ],
)
def test_pcie_speed_times_width(speed, width, gbps):
    assert rates.pci_bandwidth(speed, width, "x") == gbps


def test_pci_classes_by_prefix_and_runtime():
    assert rates.pci_class_type("0x030200") == rates.GPU
    assert rates.pci_class_type("0x038000") == rates.GPU
    assert rates.pci_class_type("0x120000", "rccl") == rates.GPU
    assert rates.pci_class_type("0x120000", "nccl") == rates.PCI
    assert rates.pci_class_type("0x020700") == rates.NIC
    assert rates.pci_class_type("0x068000") == rates.NVS
    assert rates.pci_class_type("0x068001") == rates.CPU
    assert rates.pci_class_type("0x060400") == rates.PCI
    assert rates.pci_class_type("0x010802") == rates.PCI  # fallback


def test_net_and_c2c():
    assert rates.net_bandwidth("400000", "x") == 50
    assert rates.net_bandwidth("-1", "x") == Fraction(10000, 8000)  # "Some NICs define speed = -1"
    assert rates.net_bandwidth(None, "x") == Fraction(10000, 8000)
    with pytest.raises(TopologyError, match=r"speed \(Mb/s\) must be a whole number"):
        rates.net_bandwidth("fast", "x")
    assert rates.c2c_bandwidth("44712", "5", "x") == Fraction(22356, 100)
    with pytest.raises(TopologyError, match="must be a whole number"):
        rates.c2c_bandwidth("a", "5", "x")


def test_intra_specs():
    assert parse_intra("nvswitch:450") == IntraFabric("nvswitch", Fraction(450))
    assert parse_intra("mesh:48.5") == IntraFabric("mesh", Fraction(97, 2))
    assert parse_intra("NVSwitch:h100").bandwidth == 450  # 18 NVLinks at the 25 GB/s line rate
    assert parse_intra("NVSwitch:h100").hardware == "h100"
    assert parse_intra("mesh:mi300x").bandwidth == 64  # MI300X xGMI line rate
    assert parse_intra("none") == IntraFabric("none")
    assert parse_intra(None) is None
    for bad, msg in [
        ("ring:4", "--intra must be nvswitch:BW, mesh:BW or none"),
        ("nvswitch", "--intra nvswitch needs a bandwidth"),
        ("mesh:0", "must be > 0"),
        ("mesh:abc", "must be a number"),
        ("none:3", "takes no bandwidth"),
    ]:
        with pytest.raises(TopologyError, match=msg):
            parse_intra(bad)


def test_overrides():
    assert parse_overrides({"xgmi": "50", "pcie": 32, "net": None}) == {
        "xgmi": Fraction(50),
        "pcie": Fraction(32),
    }
    with pytest.raises(TopologyError, match="unknown link class 'infinity'"):
        parse_overrides({"infinity": 1})
    with pytest.raises(TopologyError, match="--sys-bw must be > 0"):
        parse_overrides({"sys": -1})


def test_broadcom_switch_ids():
    # getBcmGen (NCCL @5067397c topo.cc:199-203): vendor/device/subsystem ids packed 48/32/16/0
    gen4 = {
        "vendor": "0x1000",
        "device": "0xc010",
        "subsystem_vendor": "0x1000",
        "subsystem_device": "0xa064",
    }
    assert rates.pci_device_id(gen4) == 0x1000C0101000A064
    assert rates.bcm_switch_gen(rates.pci_device_id(gen4), 0) == 4
    assert rates.bcm_switch_gen(rates.pci_device_id(gen4), 1) == 4  # both levels alike
    nvidia_sub = {**gen4, "subsystem_vendor": "0x10de", "subsystem_device": "0x13b8"}
    assert rates.bcm_switch_gen(rates.pci_device_id(nvidia_sub), 0) == 0
    gen5 = {**gen4, "device": "0xc030", "subsystem_device": "0x0123"}
    assert rates.bcm_switch_gen(rates.pci_device_id(gen5), 0) == 5
    assert rates.bcm_switch_gen(rates.pci_device_id(gen5), 1) == 0
    assert rates.bcm_switch_gen(rates.pci_device_id({**gen5, "subsystem_device": "0x1123"}), 1) == 5
    assert rates.pci_device_id({}) == 0


@pytest.mark.parametrize(
    "sm, rated, line",
    [
        (100, Fraction(401, 10), 50),  # B200/GB200: NVLink 5
        (103, Fraction(401, 10), 50),  # B300/GB300
        (110, Fraction(401, 10), None),  # NCCL rates every sm >= 100 alike; no NVLink 5 line rate
        (120, Fraction(401, 10), None),
        (90, Fraction(206, 10), 25),
        (86, 12, None),
        (80, 20, 25),
        (60, 18, 20),
    ],
)
def test_nvlink_rated_and_line_rates(sm, rated, line):
    assert rates.nvlink_bandwidth(sm) == rated  # NCCL @5067397c topo.h:19-24,274-281
    assert rates.nvlink_line_rate(sm) == line
