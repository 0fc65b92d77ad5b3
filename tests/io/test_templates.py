"""Templates: structure, registry, layout hints, samples, and the published optima (via tests/naive)."""

from __future__ import annotations

import inspect
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from naive import maxflow_optimum

import solver
from solver.io import templates as T
from solver.io.formats import load
from solver.io.v1 import dumps as v1_dumps
from solver.model.errors import TopologyError
from solver.model.topology import validate

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "sample_topologies"


def optimum_algbw(topo):
    x, _ = maxflow_optimum(topo)
    return len(topo.compute_ids) * x


def degree_bw(topo):
    into, out = Counter(), Counter()
    for (u, v), bw in topo.directed_bandwidths().items():
        out[u] += bw
        into[v] += bw
    return into, out


# ----------------------------------------------------------------------------- published optima
@pytest.mark.parametrize(
    "build, n, algbw",
    [
        (lambda: T.dgx_a100(1), 8, Fraction(2400, 7)),
        (lambda: T.dgx_a100(2), 16, Fraction(1040, 3)),
        (lambda: T.dgx_a100(4), 32, Fraction(800, 3)),
        (lambda: T.mi250(1), 16, Fraction(2400, 7)),
        (lambda: T.mi250(2), 32, Fraction(5312, 15)),
    ],
    ids=["1xA100", "2xA100", "4xA100", "1xMI250", "2xMI250"],
)
def test_templates_reach_published_optima(build, n, algbw):
    topo = build()
    assert len(topo.compute_ids) == n
    assert optimum_algbw(topo) == algbw


def test_ring_and_full_mesh_optima_match_closed_forms():
    # ring of n, b per direction: the cut V - {v} gives x = 2b/(n-1)
    assert optimum_algbw(T.ring(8, 100)) == Fraction(8 * 200, 7)
    # full mesh: ingress (n-1)b over n-1 others: x = b, algbw = n b
    assert optimum_algbw(T.fully_connected(6, 50)) == 300


# ----------------------------------------------------------------------------- structure
def test_dgx_a100_single_box_has_no_network():
    topo = T.dgx_a100(1)
    assert topo.switch_ids == ("b0.nvsw",)
    assert all(link.bandwidth == 300 for link in topo.links)


def test_dgx_a100_two_boxes_structure():
    topo = T.dgx_a100(2)
    caps = topo.directed_bandwidths()
    assert len(topo.compute_ids) == 16
    assert sorted(topo.switch_ids)[:2] == ["b0.nic0", "b0.nic1"]
    assert {"ib0", "ib1", "b0.nvsw", "b1.nvsw"} <= set(topo.switch_ids)
    for b in range(2):
        for j in range(8):
            assert caps[(f"b{b}.gpu{j}", f"b{b}.nvsw")] == 300
            assert caps[(f"b{b}.gpu{j}", f"b{b}.nic{j}")] == 25
            assert caps[(f"b{b}.nic{j}", f"ib{j % 2}")] == 25
            assert (f"b{b}.nic{j}", f"ib{1 - j % 2}") not in caps


def test_dgx_h100_rail_structure():
    topo = T.dgx_h100_rail(3)
    caps = topo.directed_bandwidths()
    assert len(topo.compute_ids) == 24
    for b in range(3):
        for j in range(8):
            assert caps[(f"b{b}.gpu{j}", f"b{b}.nvsw")] == 450
            assert caps[(f"b{b}.nic{j}", f"rail{j}")] == 50
    assert sum(1 for s in topo.switch_ids if s.startswith("rail")) == 8
    assert T.dgx_h100_rail(1).switch_ids == ("b0.nvsw",)


def test_mi250_xgmi_matrix_is_symmetric_with_seven_links_per_gcd():
    m = T.MI250_XGMI
    assert all(m[i][j] == m[j][i] for i in range(16) for j in range(16))
    assert all(sum(row) == 7 for row in m)
    topo = T.mi250(2)
    into, _out = degree_bw(topo)
    assert all(into[c] == 7 * 50 + 16 for c in topo.compute_ids)
    assert topo.switch_ids == ("ib0",)
    assert T.mi250(1).switch_ids == ()


def test_torus_degrees_and_bandwidth_per_dimension():
    topo = T.torus((4, 3, 2), (100, 40, Fraction(25, 2)))
    _into, out = degree_bw(topo)
    # size >= 3 dims: 2 neighbours each; the size-2 dim: one neighbour
    assert all(out[c] == 2 * 100 + 2 * 40 + Fraction(25, 2) for c in topo.compute_ids)
    assert len(topo.compute_ids) == 24
    assert len(topo.links) == 24 * 2 // 2 * 2 + 24 // 2  # x and y rings + z pairs
    with pytest.raises(TopologyError, match="one bandwidth per dimension"):
        T.torus((4, 4), (100,))
    with pytest.raises(TopologyError, match="1 to 3 dimensions"):
        T.torus((2, 2, 2, 2), (1, 1, 1, 1))


def test_fat_tree_uplinks_follow_oversubscription():
    topo = T.fat_tree(leaves=3, spines=2, gpus_per_leaf=4, gpu_bw=50, oversubscription=2)
    _into, _out = degree_bw(topo)
    caps = topo.directed_bandwidths()
    assert caps[("leaf0", "spine1")] == Fraction(4 * 50, 2 * 2)
    for i in range(3):
        down = sum(bw for (u, v), bw in caps.items() if u == f"leaf{i}" and v.startswith("l"))
        up = sum(bw for (u, v), bw in caps.items() if u == f"leaf{i}" and v.startswith("spine"))
        assert down == 2 * up


def test_directed_ring_is_one_way():
    topo = T.ring(5, 10, directed=True)
    caps = topo.directed_bandwidths()
    assert ("gpu0", "gpu1") in caps and ("gpu1", "gpu0") not in caps
    assert len(caps) == 5


def test_bad_parameters_are_named():
    with pytest.raises(TopologyError, match="number of boxes"):
        T.dgx_a100(0)
    with pytest.raises(TopologyError, match="NIC bandwidth must be > 0"):
        T.dgx_a100(2, nic_bw=0)
    with pytest.raises(TopologyError, match="finite"):
        T.ring(4, float("nan"))
    with pytest.raises(TopologyError, match="whole number"):
        T.ring(2.5)


# ----------------------------------------------------------------------------- registry
@pytest.mark.parametrize("name", list(T.TEMPLATES))
def test_registry_entry_builds_a_drawable_fabric(name):
    spec = T.TEMPLATES[name]
    signature = inspect.signature(spec.function)
    assert [p.name for p in spec.params] == [
        n for n in signature.parameters if n in {p.name for p in spec.params}
    ]
    for p in spec.params:
        assert p.name in signature.parameters
        assert p.type in (int, float)
        assert p.min <= p.default and (p.max is None or p.default <= p.max)
        assert isinstance(p.default, p.type) or (p.type is float and isinstance(p.default, int))
    topo = spec.function(**spec.defaults())
    assert validate(topo) is topo
    positions = set()
    for node in topo.nodes:
        assert node.x is not None and node.y is not None and node.group
        positions.add((node.x, node.y))
    assert len(positions) == len(topo.nodes), "two nodes drawn at the same place"
    assert spec.title and spec.description
    # the file remembers how it was made: the same call rebuilds the same fabric
    assert topo.extra["template"] == name
    assert spec.function(**topo.extra["template_params"]) == topo


def test_default_fabric_is_two_dgx_a100():
    assert T.DEFAULT_TEMPLATE == "dgx_a100"
    assert T.TEMPLATES["dgx_a100"].defaults()["n"] == 2
    assert T.default_topology() == T.dgx_a100(2)


def test_make_checks_ranges_and_names():
    assert len(T.make("ring", n=5).compute_ids) == 5
    with pytest.raises(TopologyError, match="unknown template"):
        T.make("hypercube")
    with pytest.raises(TopologyError, match="no parameter 'm'"):
        T.make("ring", m=3)
    with pytest.raises(TopologyError, match="between 2 and 256"):
        T.make("ring", n=1)
    with pytest.raises(TopologyError, match="between"):
        T.make("ring", bandwidth=0)


@pytest.mark.parametrize(
    "name, values, message",
    [
        ("fat_tree", {"leaves": 1024, "spines": 256, "gpus_per_leaf": 256}, "262144 compute nodes"),
        # just above the 131 072 compute nodes: one GPU more per leaf, one rack more per zone
        ("fat_tree", {"leaves": 1024, "spines": 1, "gpus_per_leaf": 129}, "132096 compute nodes"),
        ("clos3", {"zones": 32, "racks_per_zone": 257}, "131584 compute nodes"),
        ("torus_3d", {"x": 64, "y": 64, "z": 64}, "262144 compute nodes"),
        ("clos3", {"zones": 64, "racks_per_zone": 1024}, "1048576 compute nodes"),
        ("hpn", {"segments": 15, "pods": 64}, "983040 compute nodes"),
        # 131 072 GPUs, but 80 CTSWs a zone: 8 224 links a CTSW more than the 1 048 576
        ("clos3", {"zones": 32, "racks_per_zone": 256, "ctsws": 80}, "1051136 links"),
        ("clos3", {"zones": 32, "racks_per_zone": 256, "ctsws": 256}, "2498560 links"),
    ],
)
def test_templates_stay_within_what_the_tool_reads(name, values, message):
    """Every template the CLI accepts gives a fabric under the file cap (the 1024x256x256 fat
    tree was a 113 MB GraphML that 'info' refused)."""
    with pytest.raises(TopologyError, match=message):
        T.make(name, **values)


@pytest.mark.parametrize(
    "name, values",
    [
        # the 32 768 and 131 072 GPUs, and the 2-pod HPN (66 120 nodes, once refused)
        ("clos3", {"zones": 8, "racks_per_zone": 256}),
        ("clos3", {"zones": 32, "racks_per_zone": 256}),
        ("hpn", {"segments": 15, "pods": 2}),
        ("fat_tree", {"leaves": 1024, "spines": 1, "gpus_per_leaf": 128}),
        # exactly at the link limit's side: 79 CTSWs, 1 042 912 links
        ("clos3", {"zones": 32, "racks_per_zone": 256, "ctsws": 79}),
    ],
)
def test_the_largest_templates_are_accepted(name, values, monkeypatch):
    """make() passes them to the builder (not built here: 131 072 GPUs take 25 s)."""
    called = []
    spec = T.TEMPLATES[name]
    monkeypatch.setitem(
        T.TEMPLATES,
        name,
        T.TemplateSpec(
            lambda **kw: called.append(kw) or T.ring(2), spec.title, spec.description, spec.params
        ),
    )
    T.make(name, **values)
    assert len(called) == 1
    args = {**spec.defaults(), **values}
    compute, links = T._template_size(name, args)
    assert compute <= T.MAX_TEMPLATE_COMPUTE and links <= T.MAX_TEMPLATE_LINKS
    from solver.model.values import MAX_NODES

    assert T._template_nodes(name, args, compute) <= MAX_NODES


def test_largest_templates_fit_the_fabric_file_cap_and_the_parse_estimate():
    """Bytes of file and of parsing per node or link, measured on a built 3-tier Clos and
    scaled to the most nodes and links the model holds, stay under the file cap and under the
    memory that :func:`solver.io.formats.load` estimates before parsing."""
    from solver.io.formats import MAX_FILE_BYTES, MAX_PARSE_BYTES, dumps, parse_estimate
    from solver.model.values import MAX_LINKS, MAX_NODES

    sample = T.make("clos3", zones=2, racks_per_zone=8)
    items = len(sample.nodes) + len(sample.links)
    # the 131 072-GPU Clos: 287 232 nodes and 524 800 links
    largest = 287_232 + 524_800
    for fmt in ("v1", "graphml"):
        text = dumps(sample, fmt)
        per_item = len(text.encode()) / items
        assert per_item * (MAX_NODES + MAX_LINKS) < MAX_FILE_BYTES
        assert parse_estimate(text, fmt) / items * largest < MAX_PARSE_BYTES


def test_template_sizes_are_known_before_building():
    """The up-front estimate (what make() refuses on) is the built fabric's exact size."""
    cases = [
        ("nvl72_racks", {"racks": 16}),
        ("hpn", {"segments": 15}),
        ("superpod", {"sus": 2}),
        ("nvl72_racks", {"racks": 5, "trays": 3}),
        ("hpn", {"segments": 3, "hosts": 4, "pods": 2, "aggs": 3}),
        ("hpn", {"hosts": 2}),
        ("clos3", {"zones": 3, "racks_per_zone": 5, "ctsws": 4}),
        ("clos3", {"zones": 1, "racks_per_zone": 3}),
    ]
    for name, values in cases:
        topo = T.make(name, **values)
        args = {**T.TEMPLATES[name].defaults(), **values}
        assert T._template_size(name, args) == (len(topo.compute_ids), len(topo.links))
        assert T._template_nodes(name, args, len(topo.compute_ids)) == len(topo.nodes)


def test_a_hostile_template_size_is_refused_before_building(monkeypatch):
    called = []
    spec = T.TEMPLATES["clos3"]
    monkeypatch.setitem(
        T.TEMPLATES,
        "clos3",
        T.TemplateSpec(lambda **kw: called.append(kw), spec.title, spec.description, spec.params),
    )
    with pytest.raises(TopologyError, match="compute nodes; the limit is 131072"):
        T.make("clos3", zones=64, racks_per_zone=1024)
    assert called == []


@given(
    name=st.sampled_from(sorted(T.TEMPLATES)),
    data=st.data(),
)
def test_random_small_parameters_give_valid_fabrics(name, data):
    spec = T.TEMPLATES[name]
    values = {}
    for p in spec.params:
        if p.type is int:
            values[p.name] = data.draw(st.integers(int(p.min), min(int(p.min) + 3, int(p.max))))
        else:
            values[p.name] = data.draw(
                st.decimals(min_value=max(p.min, 0.5), max_value=500, places=2).map(float)
            )
    if name == "fat_tree" and values["leaves"] * values["gpus_per_leaf"] < 2:
        with pytest.raises(TopologyError, match="at least two GPUs"):
            T.make(name, **values)
        return
    if name == "hpn" and values["segments"] * values["hosts"] * values["pods"] < 2:
        with pytest.raises(TopologyError, match="at least two hosts"):
            T.make(name, **values)
        return
    topo = T.make(name, **values)
    validate(topo)
    assert len(set(topo.node_ids)) == len(topo.nodes)


def test_large_template_is_quick_to_build():
    topo = T.dgx_a100(128)
    assert len(topo.compute_ids) == 1024
    assert len(topo.nodes) == 128 * 17 + 2


# ----------------------------------------------------------------------------- samples
def test_write_samples_round_trips(tmp_path):
    paths = T.write_samples(tmp_path)
    assert len(paths) >= 8
    for path in paths:
        template, params, _ = T.SAMPLES[path.name]
        assert load(path).directed_bandwidths() == T.make(template, **params).directed_bandwidths()


def test_committed_samples_are_current():
    for file_name, (template, params, _) in T.SAMPLES.items():
        text = (SAMPLES_DIR / file_name).read_text(encoding="utf-8")
        assert text == v1_dumps(T.make(template, **params)), f"regenerate {file_name} (make.py)"
    readme = (SAMPLES_DIR / "README.md").read_text(encoding="utf-8")
    for file_name in T.SAMPLES:
        assert f"`{file_name}`" in readme
    assert "354.133 (= 5312/15)" in readme and "266.667" in readme


# ----------------------------------------------------------------------------- SuperPOD
def _switch_counts(topo):
    roles = {}
    for node in topo.nodes:
        roles[node.role] = roles.get(node.role, 0) + 1
    return roles


def _tier_bandwidth(topo, lower: str, upper: str) -> Fraction:
    role = {n.id: n.role for n in topo.nodes}
    return sum(
        (
            link.bandwidth
            for link in topo.links
            if {role[link.source], role[link.target]} == {lower, upper}
        ),
        Fraction(0),
    )


@pytest.mark.parametrize(
    "sus, leaves, spines, cores",
    # NVIDIA's "Larger DGX SuperPOD component counts" (B200 RA; the H100 RA's SU is the same)
    [(2, 16, 8, 0), (4, 32, 16, 0), (8, 64, 32, 0), (16, 128, 128, 64)],
)
def test_superpod_has_the_reference_architectures_switch_counts(sus, leaves, spines, cores):
    topo = T.make("superpod", sus=sus)
    roles = _switch_counts(topo)
    gpus = sus * 256
    assert len(topo.compute_ids) == gpus
    assert (roles["leaf"], roles["spine"], roles.get("core", 0)) == (leaves, spines, cores)
    # non-blocking: every tier carries what the GPUs' NICs send (cables node-leaf = leaf-spine
    # = spine-core = GPUs in the table, 50 GB/s each)
    assert _tier_bandwidth(topo, "nic", "leaf") == gpus * 50
    assert _tier_bandwidth(topo, "leaf", "spine") == gpus * 50
    if cores:
        assert _tier_bandwidth(topo, "spine", "core") == gpus * 50
    # rail-optimised: GPU j's NIC of every node goes to the rail-j leaf of its SU
    assert all(
        link.target == f"su{int(link.source.split('.')[0][1:]) // 32}.leaf"
        f"{link.source.rsplit('nic', 1)[1]}"
        for link in topo.links
        if ".nic" in link.source
    )


def test_superpod_optimum_is_the_box_cut_by_hand():
    # one SU, 32 nodes: everything but one box sends out over that box's 8 NICs only
    # (8 x 50 = 400 GB/s for 248 of the 256 GPUs): algbw = 256/248 * 400 = 12800/31
    schedule = solver.solve(T.make("superpod", sus=1, nodes_per_su=32))
    assert schedule.optimal_algbw_exact == Fraction(12800, 31) == schedule.algbw_exact
    # oversubscribed cores make the pod the bottleneck when it sends more than its cores take
    topo = T.make("superpod", sus=16, nodes_per_su=1, core_oversubscription=4)
    roles = _switch_counts(topo)
    assert (roles["leaf"], roles["spine"], roles["core"]) == (128, 128, 64)
    assert _tier_bandwidth(topo, "spine", "core") == 16 * 8 * 50 / 4


def test_superpod_refuses_a_three_tier_size_it_cannot_wire():
    with pytest.raises(TopologyError, match="multiple of 8 SUs"):
        T.make("superpod", sus=12)
    # the largest (512 SUs) is exactly the 131 072 compute nodes a template may have
    args = {**T.TEMPLATES["superpod"].defaults(), "sus": 512}
    assert T._template_size("superpod", args)[0] == T.MAX_TEMPLATE_COMPUTE


# ----------------------------------------------------------------------------- GB200 NVL72 racks
def _gpu_rank(node_id: str) -> tuple[int, int]:
    box, rest = node_id.split(".")
    return int(box[1:]), int(rest[3:])


@pytest.mark.parametrize("racks, leaves, spines", [(8, 24, 9), (16, 36, 18), (32, 72, 36)])
def test_nvl72_racks_wiring(racks, leaves, spines):
    """DGX GB200 RA: 18 trays of 4 GPUs a rack, one 400G NIC per GPU, rail-optimised
    non-blocking leaf-spine of 64-port NDR switches (32 down, 32 up)."""
    topo = T.make("nvl72_racks", racks=racks)
    roles = _switch_counts(topo)
    gpus = racks * 72
    assert len(topo.compute_ids) == gpus
    assert (roles["nvswitch"], roles["leaf"], roles["spine"]) == (racks, leaves, spines)
    assert _tier_bandwidth(topo, "gpu", "nvswitch") == gpus * 900
    assert _tier_bandwidth(topo, "nic", "leaf") == gpus * 50
    assert _tier_bandwidth(topo, "leaf", "spine") == gpus * 50
    caps = topo.directed_bandwidths()
    downlinks = Counter(v for (u, v) in caps if ".nic" in u and v.startswith("rail"))
    assert set(downlinks.values()) == {gpus // leaves} and max(downlinks.values()) <= 32
    assert sum(1 for (u, v) in caps if v.startswith("spine")) == leaves * spines
    for u, v in caps:
        if ".nic" in u and ".gpu" not in v:  # GPU j of tray j // 4 is on rail j % 4
            _, j = _gpu_rank(u.replace("nic", "gpu"))
            assert v.startswith(f"rail{j % 4}.")


def test_nvl72_racks_have_the_rack_translation():
    """Every leaf takes the same NIC positions of every rack, so moving each rack to the next
    fixes every switch: the solver's box symmetry applies with racks as boxes."""
    from solver.algorithm.symmetry import find_box_symmetry
    from solver.flow.csr import IndexedFabric

    topo = T.make("nvl72_racks", racks=4, trays=3)
    fabric = IndexedFabric.from_topology(topo)
    sym = find_box_symmetry(fabric, [n.group for n in topo.nodes])
    assert sym is not None and sym.boxes == 4 and sym.size == 12 * 2 + 1


@pytest.mark.parametrize("racks, trays, algbw", [(2, 1, 400), (4, 2, Fraction(1600, 3))])
def test_nvl72_racks_optimum_is_the_rack_cut_by_hand(racks, trays, algbw):
    # a rack of 4·trays GPUs receives only over its NICs (50 GB/s each) what the other
    # N - 4·trays GPUs send: x = 4·trays·50 / (N - 4·trays); the GPU cut (950 / (N-1)) is looser
    n = racks * trays * 4
    assert algbw == n * Fraction(trays * 4 * 50, n - trays * 4)
    topo = T.make("nvl72_racks", racks=racks, trays=trays)
    assert optimum_algbw(topo) == algbw
    schedule = solver.solve(topo)
    assert schedule.optimal_algbw_exact == algbw == schedule.algbw_exact


# ----------------------------------------------------------------------------- Alibaba HPN
def test_hpn_has_the_papers_segment_and_pod():
    """SIGCOMM'24: 8 GPUs and 8 dual-port (2 x 200G) NICs a host, 128 hosts a segment on 16 ToRs
    (two per rail, one per plane), 60 x 400G ToR uplinks (1.067:1), 15 segments a pod on 60
    aggregation switches per plane; pods joined 15:1."""
    topo = T.make("hpn", segments=2)
    roles = _switch_counts(topo)
    assert len(topo.compute_ids) == 2 * 1024
    assert (roles["tor"], roles["agg"], roles.get("core", 0)) == (32, 120, 0)
    assert _tier_bandwidth(topo, "nic", "tor") == 2 * 1024 * 50  # 2 ports x 25 GB/s a GPU
    assert _tier_bandwidth(topo, "tor", "agg") == Fraction(15, 16) * 2 * 1024 * 50
    caps = topo.directed_bandwidths()
    for (u, v), bw in caps.items():
        if (
            ".nic" in u and ".gpu" not in v
        ):  # dual ToR: port a and port b of rail j's NIC to the two rail-j ToRs
            assert bw == 25 and v.startswith("s") and v[-2] == u[-1] and v[-1] in "ab"
        if v.startswith("pod") and u.startswith("s"):  # dual plane: ToR a only to plane 0
            assert (u[-1] == "a") == (".p0." in v)
    paper = {k: p.default for k, p in inspect.signature(T.hpn).parameters.items()}
    assert T._template_size("hpn", paper)[0] == 15 * 1024  # "15K GPUs in a Pod"
    two = T.make("hpn", segments=1, hosts=8, pods=2)
    assert _switch_counts(two)["core"] == 120
    assert _tier_bandwidth(two, "agg", "core") == _tier_bandwidth(two, "tor", "agg") / 15


@pytest.mark.parametrize(
    "values, algbw",
    [
        # two segments of one host: segment 1 receives the 8 GPUs of segment 0 only over its 16
        # ToRs' uplinks, one per plane-switch, 50 x 1/128 GB/s each (scaled to 1 of 128 hosts):
        # x = 16 · 50/128 / 8, algbw = 16 x = 25/2
        ({"segments": 2, "hosts": 1, "aggs": 1}, Fraction(25, 2)),
        # two pods of one such segment: a pod receives over its 2 aggregation switches' core
        # links, each 8 ToR links / 15: 2 · 8 · (50/128) / 15 = 5/12 for 8 GPUs: 16 · 5/96
        ({"segments": 1, "hosts": 1, "pods": 2, "aggs": 1}, Fraction(5, 6)),
    ],
)
def test_hpn_optimum_is_the_segment_or_pod_cut_by_hand(values, algbw):
    topo = T.make("hpn", **values)
    assert optimum_algbw(topo) == algbw
    schedule = solver.solve(topo)
    assert schedule.optimal_algbw_exact == algbw == schedule.algbw_exact


# ----------------------------------------------------------------------------- 3-tier Clos
def test_clos3_has_metas_zones():
    """SIGCOMM'24 / Llama 3: racks of 2 hosts x 8 H100 on one RTSW, 192 racks (3072 GPUs) an AI
    zone non-blocking to its CTSWs, 8 zones (24 576 GPUs) joined by ATSWs 7:1."""
    topo = T.make("clos3", zones=2, racks_per_zone=192)
    roles = _switch_counts(topo)
    assert len(topo.compute_ids) == 2 * 3072
    assert (roles["rtsw"], roles["ctsw"], roles["atsw"]) == (384, 32, 16)
    assert _tier_bandwidth(topo, "nic", "rtsw") == 2 * 3072 * 50
    assert _tier_bandwidth(topo, "rtsw", "ctsw") == 2 * 3072 * 50  # non-blocking in a zone
    assert _tier_bandwidth(topo, "ctsw", "atsw") == Fraction(2 * 3072 * 50, 7)
    assert "atsw" not in _switch_counts(T.make("clos3", zones=1, racks_per_zone=4))
    paper = {k: p.default for k, p in inspect.signature(T.clos3).parameters.items()}
    assert T._template_size("clos3", paper)[0] == 24_576  # the Llama 3 cluster


def test_clos3_optimum_is_the_zone_cut_by_hand():
    # two zones of one rack: zone 1 receives zone 0's 16 GPUs only over its CTSW's ATSW link,
    # 16 · 50 / 7: x = 800/7 / 16, algbw = 32 x = 1600/7
    topo = T.make("clos3", zones=2, racks_per_zone=1, ctsws=1)
    assert optimum_algbw(topo) == Fraction(1600, 7)
    schedule = solver.solve(topo)
    assert schedule.optimal_algbw_exact == Fraction(1600, 7) == schedule.algbw_exact
