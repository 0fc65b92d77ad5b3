"""Switch capabilities (reduce, multicast): format v1.1, templates, dumps, older files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.io import nodelink, v1
from solver.io import templates as T
from solver.io.formats import load
from solver.model.errors import TopologyError
from solver.model.topology import NVLS_CAPABILITIES, validate

REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "topo"


def test_templates_mark_nvswitch_from_hopper_on():
    assert T.make("dgx_h100_rail", n=1).node("b0.nvsw").capabilities == NVLS_CAPABILITIES
    assert all(
        T.make("dgx_h100_rail", n=2).node(f"b{b}.nvsw").capabilities == NVLS_CAPABILITIES
        for b in range(2)
    )
    assert T.make("dgx_a100", n=2).node("b0.nvsw").capabilities == frozenset()  # Ampere: no NVLS
    rack = T.make("nvl72")
    assert len(rack.compute_ids) == 72 and rack.node("nvsw").capabilities == NVLS_CAPABILITIES
    assert {rack.directed_bandwidths()[(g, "nvsw")] for g in rack.compute_ids} == {900}


def test_round_trip_writes_minor_version_and_reads_back():
    topo = T.make("dgx_h100_rail", n=2)
    text = v1.dumps(topo)
    doc = json.loads(text)
    assert doc["version"] == 1.1
    sw = next(n for n in doc["nodes"] if n["id"] == "b0.nvsw")
    assert sw["capabilities"] == ["reduce", "multicast"]
    back = v1.loads(text)
    assert back == topo and back.node("b0.nvsw").capabilities == NVLS_CAPABILITIES
    assert nodelink.loads(nodelink.dumps(topo)).node("b1.nvsw").capabilities == NVLS_CAPABILITIES


def test_files_without_capabilities_stay_version_1():
    doc = json.loads(v1.dumps(T.make("dgx_a100", n=1)))
    assert doc["version"] == 1 and all("capabilities" not in n for n in doc["nodes"])


def test_older_file_still_reads():
    old = Path(__file__).resolve().parents[2] / "sample_topologies" / "dgx_a100_2x.json"
    topo = load(old)
    assert not any(n.capabilities for n in topo.nodes)


@pytest.mark.parametrize(
    "value, message",
    [
        (["reduce", "teleport"], "unknown capability 'teleport'"),
        ("reduce", "must be a list"),
        ([1], "unknown capability '1'"),
    ],
)
def test_bad_capabilities_are_one_error(value, message):
    doc = json.loads(v1.dumps(T.make("dgx_h100_rail", n=1)))
    next(n for n in doc["nodes"] if n["id"] == "b0.nvsw")["capabilities"] = value
    with pytest.raises(TopologyError, match=message):
        v1.loads(json.dumps(doc))


def test_a_compute_node_cannot_reduce():
    doc = json.loads(v1.dumps(T.make("dgx_h100_rail", n=1)))
    next(n for n in doc["nodes"] if n["kind"] == "compute")["capabilities"] = ["reduce"]
    with pytest.raises(TopologyError, match="only a switch"):
        v1.loads(json.dumps(doc))


def test_dumps_mark_nvswitch_of_sm90_and_later_only():
    h100 = load(REAL / "ibm_cloud_h100_vsi_topo.xml")
    assert [n.id for n in h100.nodes if n.capabilities] == ["b0.nvsw"]
    gb300 = load(REAL / "nccl_ebpf_gb300_mnnvl_topo_2tray_0405.xml")
    assert [n.id for n in gb300.nodes if n.capabilities] == ["nvsw"]
    a100 = load(REAL / "azhpc_ncv4-topo.xml")
    assert not any(n.capabilities for n in a100.nodes)
    for path in sorted(REAL.glob("rccl_*.xml")):  # AMD: never NVLS, whatever their sm
        assert not any(n.capabilities for n in load(path).nodes), path.name
    validate(h100)


def test_skeleton_dumps_follow_their_intra_preset():
    import solver

    opts = json.loads((REAL / "import_options.json").read_text())
    ndv5 = solver.load_topology(REAL / "azhpc_ndv5-topo.xml", **opts["azhpc_ndv5-topo.xml"])
    assert [n.id for n in ndv5.nodes if n.capabilities] == ["b0.nvsw"]  # nvswitch:h100
    ndv4 = solver.load_topology(REAL / "azhpc_ndv4-topo.xml", **opts["azhpc_ndv4-topo.xml"])
    assert not any(n.capabilities for n in ndv4.nodes)  # nvswitch:a100
