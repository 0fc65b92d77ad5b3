"""The summary view's grouping and scene (fc_gui.model.summary), without Qt."""

from dataclasses import replace

import numpy as np
import pytest

from fc_gui.model.summary import AGG_PREFIX, TIDY_STEP, SummaryState, find_grouping
from solver.io.templates import dgx_h100_rail, hpn


def _strip_groups(topo):
    return replace(topo, nodes=tuple(replace(n, group=None) for n in topo.nodes))


def _top(g):
    return [g.aggregates[a] for a in g.order if g.aggregates[a].parent is None]


@pytest.mark.parametrize("strip", [False, True])
def test_hpn_segments_become_pods_of_hosts_and_planes_switch_groups(strip):
    topo = hpn(segments=2, hosts=4)
    if strip:  # found from the wiring alone, not from the group names
        topo = _strip_groups(topo)
    g = find_grouping(topo.nodes, topo.links)
    top = _top(g)
    pods = [a for a in top if a.level == "pod"]
    switches = [a for a in top if a.level == "switches"]
    assert len(pods) == 2 and len(switches) == 2
    for pod in pods:
        assert pod.compute == 32 and len(pod.children) == 4
        assert len(pod.nodes) == 16  # the segment's 16 ToRs
        assert all(g.aggregates[b].level == "box" for b in pod.children)
        assert all(g.aggregates[b].compute == 8 for b in pod.children)
        # a host: 8 GPUs, its NVSwitch and its 8 NICs
        assert {g.aggregates[b].size for b in pod.children} == {17}
    # the two planes of aggregation switches are told apart: each group links to one plane
    for group in switches:
        assert group.size == 60 and group.roles == (("agg", 60),)
        tors = {
            (ln.target if ln.source in group.nodes else ln.source)
            for ln in topo.links
            if ln.source in group.nodes or ln.target in group.nodes
        }
        assert {t[-1] for t in tors} in ({"a"}, {"b"})  # s<s>.tor<j>a or ...b only
    # every node is in exactly one aggregate, and no aggregate id is a node id
    assert all(g.aggregate_of(n.id) is not None for n in topo.nodes)
    assert all(a.startswith(AGG_PREFIX) and a not in g.row for a in g.order)


def test_rail_switches_stay_single_nodes_boxes_are_found():
    topo = _strip_groups(dgx_h100_rail(4))
    g = find_grouping(topo.nodes, topo.links)
    top = _top(g)
    assert [a.level for a in top] == ["box"] * 4
    assert all(a.compute == 8 for a in top)
    loose = [i for i in g.ids if g.aggregate_of(i) is None]
    assert len(loose) == 8 and all("rail" in i or "ib" in i or "leaf" in i for i in loose), loose


def test_scene_totals_expand_and_collapse():
    topo = hpn(segments=2, hosts=4)
    state = SummaryState.of(topo.nodes, topo.links)
    g = state.grouping
    scene = state.scene()
    assert len(scene.aggregates) == 4 and not scene.nodes
    # links between aggregates drawn once, with the sum of their bandwidths
    by_pair = {frozenset((ln.a, ln.b)): ln for ln in scene.links}
    assert len(by_pair) == len(scene.links) == 4  # each segment to each plane
    pod = next(a for a in scene.aggregates if g.aggregates[a].level == "pod")
    plane = next(a for a in scene.aggregates if g.aggregates[a].level == "switches")
    members_pod, members_plane = set(g.members(pod)), set(g.members(plane))
    expected = [
        ln
        for ln in topo.links
        if {ln.source in members_pod, ln.target in members_pod} == {True}
        or (ln.source in members_pod and ln.target in members_plane)
        or (ln.target in members_pod and ln.source in members_plane)
    ]
    between = [
        ln for ln in expected if (ln.source in members_plane) != (ln.target in members_plane)
    ]
    link = by_pair[frozenset((pod, plane))]
    assert link.links == len(between) > 0
    assert link.bandwidth == pytest.approx(sum(float(ln.bandwidth) for ln in between))

    # expand the pod: its hosts appear as aggregates, its ToRs as themselves
    assert state.expand(pod) and not state.expand(pod)
    scene = state.scene()
    assert pod not in scene.aggregates
    assert set(g.aggregates[pod].children) <= set(scene.aggregates)
    assert scene.nodes == set(g.aggregates[pod].nodes)
    # a host inside it: its 17 nodes are shown as themselves
    host = g.aggregates[pod].children[0]
    state.expand(host)
    scene = state.scene()
    assert set(g.members(host)) <= scene.nodes
    assert state.shown_as(g.members(host)[0]) == g.members(host)[0]
    # collapsing the pod collapses the host inside it too
    assert state.collapse(pod)
    assert state.expanded == set()
    assert len(state.scene().aggregates) == 4
    assert state.shown_as(g.members(host)[0]) == pod


def test_expanding_a_box_expands_its_pod():
    topo = hpn(segments=2, hosts=4)
    state = SummaryState.of(topo.nodes, topo.links)
    g = state.grouping
    pod = next(a for a in g.order if g.aggregates[a].level == "pod")
    host = g.aggregates[pod].children[1]
    state.expand(host)
    assert state.expanded == {pod, host}


def test_cut_shares_full_partial_and_outside():
    topo = hpn(segments=2, hosts=4)
    state = SummaryState.of(topo.nodes, topo.links)
    g = state.grouping
    pods = [a for a in g.order if g.aggregates[a].level == "pod"]
    inside_all = g.members(pods[0])
    gpus_other = [i for i in g.members(pods[1]) if i.endswith(("gpu0", "gpu1"))]
    scene = state.scene()
    shares = state.cut_shares(scene, inside_all + gpus_other)
    share = dict(zip(scene.aggregates, shares))
    assert share[pods[0]] == 1.0
    # of the other pod's 32 GPUs, 8 (gpu0 and gpu1 of 4 hosts) are inside: GPUs are counted
    assert share[pods[1]] == pytest.approx(8 / 32)
    planes = [a for a in scene.aggregates if g.aggregates[a].level == "switches"]
    assert all(share[p] == 0 for p in planes)


def test_overview_is_tidy_expanded_positions_are_centres_and_matches_tells_an_edit():
    topo = hpn(segments=2, hosts=4)
    state = SummaryState.of(topo.nodes, topo.links)
    scene = state.scene()
    g = state.grouping
    # the overview: the segments side by side in a row, the planes in a row below them
    level = {a: g.aggregates[a].level for a in scene.aggregates}
    pods = [p for a, p in zip(scene.aggregates, scene.positions) if level[a] == "pod"]
    planes = [p for a, p in zip(scene.aggregates, scene.positions) if level[a] == "switches"]
    assert len({p[1] for p in pods}) == 1 and len({p[1] for p in planes}) == 1
    assert planes[0][1] > pods[0][1]  # the network below the compute (y grows downwards)
    assert (
        abs(pods[0][0] - pods[1][0]) >= TIDY_STEP and abs(planes[0][0] - planes[1][0]) >= TIDY_STEP
    )
    # expanded: every aggregate at the centre of its nodes (the fabric's own geometry)
    state.expand(scene.aggregates[0])
    scene = state.scene()
    xy = {n.id: (n.x, n.y) for n in topo.nodes}
    for a, p in zip(scene.aggregates, scene.positions):
        pts = np.array([xy[i] for i in g.members(a)])
        assert np.allclose(p, pts.mean(axis=0))
    assert state.matches([n.id for n in topo.nodes], topo.links)
    edited = list(topo.links)
    edited[3] = replace(edited[3], bandwidth=edited[3].bandwidth * 2)
    assert not state.matches([n.id for n in topo.nodes], edited)


def test_cut_links_become_pairs_of_shown_items():
    topo = hpn(segments=2, hosts=4)
    state = SummaryState.of(topo.nodes, topo.links)
    g = state.grouping
    pods = [a for a in g.order if g.aggregates[a].level == "pod"]
    inside = set(g.members(pods[0]))
    leaving = [
        (ln.source, ln.target, ln.bandwidth)
        for ln in topo.links
        if (ln.source in inside) != (ln.target in inside)
    ]
    scene = state.scene()
    pairs = state.crossing(scene, leaving)
    # every link leaving segment 0 goes to an aggregation plane: one pair per plane
    assert {a for a, _, _ in pairs} == {pods[0]}
    assert sum(c for _, _, c in pairs) == len(leaving)
    planes = {b for _, b, _ in pairs}
    assert len(planes) == 2 and all(g.aggregates[p].level == "switches" for p in planes)
    # links inside one aggregate are not drawn again
    own = [
        (ln.source, ln.target, ln.bandwidth)
        for ln in topo.links
        if ln.source in inside and ln.target in inside
    ]
    assert state.crossing(scene, own) == []


def test_lone_top_switches_are_one_aggregate_and_the_overview_is_tidy():
    from solver.io.templates import clos3

    topo = _strip_groups(clos3(zones=3, racks_per_zone=2))
    state = SummaryState.of(topo.nodes, topo.links)
    g = state.grouping
    top = _top(g)
    # the ATSW tier: one switch per CTSW index, no two sharing a CTSW: one aggregate of all 16
    atsws = [a for a in top if a.roles and a.roles[0][0] == "atsw"]
    assert len(atsws) == 1 and atsws[0].tier == 3
    assert atsws[0].size == sum(1 for n in topo.nodes if n.role == "atsw") == 16
    assert all(g.aggregate_of(n.id) is not None for n in topo.nodes)
    scene = state.scene()  # nothing alone: the tidy overview, compute in a row, tiers below
    level = {a: g.aggregates[a].level for a in scene.aggregates}
    pods = [p for a, p in zip(scene.aggregates, scene.positions) if level[a] == "pod"]
    assert len({p[1] for p in pods}) == 1 and min(np.diff(sorted(p[0] for p in pods))) >= TIDY_STEP
    at = scene.positions[scene.aggregates.index(atsws[0].id)]
    assert at[1] > max(p[1] for a, p in zip(scene.aggregates, scene.positions) if a != atsws[0].id)


def test_share_text_never_rounds_a_partial_share_to_all_or_nothing():
    from fc_gui.model.summary import share_text

    assert share_text(1.0) == "100%" and share_text(0.0) == "0%"
    assert share_text(4088 / 4096) == "99.8%"
    assert share_text(32759 / 32760) == ">99.9%" and share_text(1 / 32760) == "<0.1%"
    assert share_text(0.25) == "25%" and share_text(1 / 3) == "33.3%"


def test_many_racks_without_group_names_are_grouped_by_zone():
    from fc_gui.model.summary import ZONE_MIN_PODS
    from solver.io.templates import clos3

    topo = _strip_groups(clos3(zones=3, racks_per_zone=12))  # 36 racks > ZONE_MIN_PODS
    assert 3 * 12 > ZONE_MIN_PODS
    state = SummaryState.of(topo.nodes, topo.links)
    g = state.grouping
    top = _top(g)
    zones = [a for a in top if a.level == "pod"]
    assert len(zones) == 3 and len(top) == 4  # 3 zones and the ATSW tier
    for zone in zones:
        assert zone.compute == 12 * 16 and len(zone.children) == 12
        assert dict(zone.roles)["ctsw"] == 16  # the zone's spines are in it, as its own nodes
        assert {n.split(".")[0] for n in zone.nodes} == {zone.label.replace("zone ", "z")}
        racks = [g.aggregates[r] for r in zone.children]
        assert all(r.level == "pod" and r.compute == 16 and r.parent == zone.id for r in racks)
        members = set(g.members(zone.id))
        assert all(set(g.members(r.id)) <= members for r in racks)
    # expanding a host expands its rack and zone; collapsing the zone closes all three
    host = g.aggregates[g.aggregates[zones[1].children[0]].children[0]]
    state.expand(host.id)
    assert state.expanded == {host.id, host.parent, zones[1].id}
    assert set(g.members(host.id)) <= state.scene().nodes
    state.collapse(zones[1].id)
    assert not state.expanded and len(state.scene().aggregates) == 4
