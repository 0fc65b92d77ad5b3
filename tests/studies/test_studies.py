"""Design studies: every row against a plain re-solve of the modified fabric (small fabrics)."""

from __future__ import annotations

import threading
from fractions import Fraction
from pathlib import Path

import h5py
import pytest
from distributed import Client

from solver import solve
from solver.io.hdf5.studies import read_study
from solver.io.templates import dgx_a100, fat_tree, make, ring
from solver.model.errors import Cancelled, ForestCollError, TopologyError
from solver.model.topology import Link, Node, Topology
from solver.studies import DaskEngine, failure_plan, run_study, sweep_plan, upgrade_plan
from solver.studies.elements import upgraded, without_element
from solver.studies.symmetry import box_swaps, box_translation


@pytest.fixture(scope="module")
def engine():
    client = Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0")
    with DaskEngine(client=client) as eng:
        yield eng
    client.close()


def _resolve(topo: Topology, collective: str) -> Fraction:
    try:
        return solve(topo, collective).optimal_algbw_exact
    except TopologyError:  # compute nodes disconnected
        return Fraction(0)


def _directed_fabric() -> Topology:
    """Four GPUs on a one-way ring, with one-way shortcuts and a switch (asymmetric)."""
    nodes = tuple(Node(f"g{i}", "compute", "gpu") for i in range(4)) + (
        Node("sw", "switch", "nic"),
    )
    links = [Link(f"g{i}", f"g{(i + 1) % 4}", Fraction(10), directed=True) for i in range(4)]
    links += [
        Link("g0", "g2", Fraction(5), directed=True),
        Link("g3", "g1", Fraction(3), directed=True),
    ]
    links += [Link(f"g{i}", "sw", Fraction(4)) for i in range(4)]
    return Topology("directed", nodes, tuple(links))


def _check_cut(row, topo: Topology, collective: str) -> None:
    """The reported bottleneck links are links of the modified fabric with the cut's bandwidth."""
    if not row["connected"]:
        return
    bws = topo.directed_bandwidths()
    total = Fraction(0)
    for pair in row["cut_links"]:
        u, v = pair.split("->")  # a link of the fabric (entering S for reduce-scatter)
        total += bws[(u, v)]
    assert float(total) == pytest.approx(row["cut_bandwidth"])
    if collective == "allgather":
        n = len(topo.compute_ids)
        assert Fraction(row["algbw_exact"]) == total * n / row["cut_compute"]


FABRICS = [
    (dgx_a100(2), "allgather"),
    (fat_tree(leaves=2, spines=2, gpus_per_leaf=2, oversubscription=2), "allgather"),
    (_directed_fabric(), "reduce-scatter"),
    (_directed_fabric(), "allreduce"),
    (make("mi250", n=1), "allgather"),
    (fat_tree(leaves=4, spines=2, gpus_per_leaf=2, oversubscription=2), "allreduce"),
]


@pytest.mark.parametrize("topo,collective", FABRICS, ids=lambda x: getattr(x, "name", x))
def test_failure_rows_match_a_plain_resolve(engine, topo, collective):
    plan = failure_plan(topo, ["links", "switches", "nics", "compute"], collective)
    result = run_study(plan, engine)
    assert [r["element"] for r in result.rows] == plan.keys
    assert len(result.rows) == len(topo.links) + len(topo.nodes)
    base = _resolve(topo, collective)
    assert plan.base.algbw == base
    for row in result.rows:
        modified = without_element(topo, plan.elements[row["element"]])
        expected = _resolve(modified, collective)
        assert Fraction(row["algbw_exact"]) == expected, row["element"]
        assert row["connected"] == (expected > 0)
        assert row["change"] == pytest.approx(float(expected - base))
        _check_cut(row, modified, collective)


def test_symmetry_shares_solves_between_swapped_boxes(engine):
    topo = dgx_a100(4)
    plan = failure_plan(topo, ["links", "switches", "nics"])
    per_box = 8 * 3 + 1  # 8 GPU-NVSwitch links, 8 GPU-NIC links, 8 NIC-IB links, the NVSwitch
    assert len(plan.items) == per_box + 8 + 2  # one box's elements, its NICs, the two IB switches
    result = run_study(plan, engine)
    assert result.solved == len(plan.items)
    by_key = {r["element"]: r for r in result.rows}
    assert by_key["b3.gpu5--b3.nvsw"]["orbit"] == "b0.gpu5--b0.nvsw"
    assert by_key["b3.gpu5--b3.nvsw"]["algbw_exact"] == by_key["b0.gpu5--b0.nvsw"]["algbw_exact"]
    for key in ("b2.nic3", "b3.gpu5--b3.nvsw", "b1.nic6--ib0", "ib1"):
        row = by_key[key]
        modified = without_element(topo, plan.elements[key])
        assert Fraction(row["algbw_exact"]) == _resolve(modified, "allgather")
        _check_cut(row, modified, "allgather")  # the representative's cut, mapped by the swap


def test_boxes_a_change_does_not_touch_need_one_sink_between_them():
    from solver.studies.tasks import _base

    topo = dgx_a100(4)
    plan = failure_plan(topo, ["links", "switches", "nics"])
    base = _base(plan.context)
    link = plan.elements["b2.gpu3--b2.nvsw"]
    sinks = base.sinks(link)
    names = [base.fabric(False).names[v] for v in sinks]
    # box 2 (touched) and one untouched box (box 0) stand for boxes 1 and 3
    assert sorted(names) == sorted(
        [f"b2.gpu{j}" for j in range(8)] + [f"b0.gpu{j}" for j in range(8)]
    )
    ib = base.sinks(plan.elements["ib0"])  # all four boxes untouched: one box of sinks
    assert len(ib) == 8
    off = failure_plan(topo, ["links"], use_symmetry=False)
    assert _base(off.context).sinks(off.elements["b2.gpu3--b2.nvsw"]) is None


def test_a_swap_that_is_no_automorphism_is_refused():
    topo = dgx_a100(2)
    links = list(topo.links)
    i = next(i for i, lk in enumerate(links) if lk.source == "b1.gpu0" and lk.target == "b1.nvsw")
    links[i] = Link("b1.gpu0", "b1.nvsw", Fraction(100))
    odd = Topology(topo.name, topo.nodes, tuple(links))
    assert len(box_swaps(topo)) == 1 and len(box_translation(topo)) == 1
    assert box_swaps(odd) == [] and box_translation(odd) == []
    plan = failure_plan(odd, ["links"])
    assert len(plan.items) == len(odd.links)


@pytest.mark.parametrize("by", ["link", "class"])
def test_upgrade_rows_match_a_plain_resolve(engine, by):
    topo = fat_tree(leaves=2, spines=2, gpus_per_leaf=2, oversubscription=2)
    plan = upgrade_plan(topo, factor=3, by=by)
    result = run_study(plan, engine)
    base = plan.base.algbw
    gains = 0
    for row in result.rows:
        element = plan.elements[row["element"]]
        expected = _resolve(upgraded(topo, element.links, Fraction(3), None), "allgather")
        assert Fraction(row["algbw_exact"]) == expected, row["element"]
        gains += expected > base
        if not row["on_bottleneck"]:
            assert expected == base  # off the bottleneck nothing can change
        assert row["blocked"] == (row["on_bottleneck"] and expected == base)
    assert gains > 0 if by == "class" else True
    classes = {r["element"] for r in result.rows}
    if by == "class":
        assert classes == {"gpu--leaf@50", "leaf--spine@25"}


def test_upgrade_by_adding_bandwidth(engine):
    topo = _directed_fabric()
    plan = upgrade_plan(topo, add=6, by="link", collective="allreduce")
    result = run_study(plan, engine)
    for row in result.rows:
        element = plan.elements[row["element"]]
        expected = _resolve(upgraded(topo, element.links, None, Fraction(6)), "allreduce")
        assert Fraction(row["algbw_exact"]) == expected


def test_sweep_rows_match_solves(engine):
    plan = sweep_plan(template="ring", params=[("n", [3, 4, 6]), ("bandwidth", [10, 25])])
    result = run_study(plan, engine)
    assert [r["point"] for r in result.rows] == [
        "n=3,bandwidth=10",
        "n=3,bandwidth=25",
        "n=4,bandwidth=10",
        "n=4,bandwidth=25",
        "n=6,bandwidth=10",
        "n=6,bandwidth=25",
    ]
    first = solve(ring(3, 10)).optimal_algbw_exact
    for row in result.rows:
        s = solve(ring(row["n"], row["bandwidth"]))
        assert Fraction(row["algbw_exact"]) == s.optimal_algbw_exact
        assert row["k"] == s.k
        assert row["height_max"] == max(t.height for t in s.trees)
        assert row["change"] == pytest.approx(float(s.optimal_algbw_exact - first))
        assert row["solve_time"] > 0


def test_rows_stream_into_the_file_and_resume_computes_only_the_rest(engine, tmp_path):
    topo = dgx_a100(2)
    out = tmp_path / "r.h5"
    full = run_study(failure_plan(topo, ["links", "switches", "nics"], use_symmetry=False), engine)
    cancel = threading.Event()

    def stop_after_some(rows):
        cancel.set()

    plan = failure_plan(topo, ["links", "switches", "nics"], use_symmetry=False)
    with pytest.raises(Cancelled):
        run_study(plan, engine, output=out, batch_size=4, cancel=cancel, on_rows=stop_after_some)
    partial = read_study(out, "failures_allgather")
    assert not partial.complete
    assert 0 < len(partial.rows) < len(plan.keys)
    plan = failure_plan(topo, ["links", "switches", "nics"], use_symmetry=False)
    resumed = run_study(plan, engine, output=out, resume=True, batch_size=4)
    assert resumed.resumed == len(partial.rows)
    assert resumed.solved == len(plan.keys) - len(partial.rows)
    stored = read_study(out, "failures_allgather")
    assert stored.complete
    assert sorted(r["element"] for r in stored.rows) == sorted(plan.keys)
    expected = {r["element"]: r["algbw_exact"] for r in full.rows}
    assert {r["element"]: r["algbw_exact"] for r in stored.rows} == expected
    with h5py.File(out, "r") as f:
        assert f.attrs["schema_version"] == "1.2"
        g = f["studies/failures_allgather"]
        assert g.attrs["study"] == "failures"
        assert g.attrs["elements"] == "links,switches,nics"
        assert g.attrs["base_algbw_exact"] == "1040/3"
        assert g["algbw"].attrs["units"] == "GB/s"
        assert g["change_pct"].attrs["units"] == "%"
        assert g.attrs["rows"] == g.attrs["rows_total"] == len(plan.keys)
    other = failure_plan(topo, ["links"], use_symmetry=False)
    with pytest.raises(ForestCollError, match="other parameters"):
        run_study(other, engine, output=out, resume=True)


def test_study_of_another_fabric_is_refused_by_the_file(engine, tmp_path):
    out = tmp_path / "r.h5"
    run_study(failure_plan(ring(4, 10), ["links"]), engine, output=out)
    with pytest.raises(ForestCollError, match="another fabric"):
        run_study(failure_plan(ring(5, 10), ["links"]), engine, output=out)


def test_bad_study_arguments_are_one_line_errors():
    with pytest.raises(TopologyError, match="exactly one"):
        upgrade_plan(ring(4, 10), factor=2, add=3)
    with pytest.raises(TopologyError, match="> 1"):
        upgrade_plan(ring(4, 10), factor="0.5")
    with pytest.raises(TopologyError, match="unknown template"):
        sweep_plan(template="nope")
    with pytest.raises(TopologyError, match="between"):
        sweep_plan(template="ring", params=[("n", [4, 1])])


def test_sweep_over_a_folder_of_fabrics(engine, tmp_path):
    from solver.cli.study import _load_folder
    from solver.io.formats import save

    save(ring(4, 10), tmp_path / "a_ring4.json")
    save(fat_tree(leaves=2, spines=1, gpus_per_leaf=2), tmp_path / "b_fat.json")
    (tmp_path / "notes.txt").write_text("not a fabric")
    fabrics = _load_folder(str(tmp_path))
    assert list(fabrics) == ["a_ring4.json", "b_fat.json"]
    result = run_study(sweep_plan(topologies=fabrics), engine)
    assert [r["point"] for r in result.rows] == ["a_ring4.json", "b_fat.json"]
    for row in result.rows:
        assert row["kind"] == "file"
        assert Fraction(row["algbw_exact"]) == solve(fabrics[row["point"]]).optimal_algbw_exact


def test_terminal_progress_shows_rows_and_eta():
    import io

    from solver.cli.study import StudyProgress

    out = io.StringIO()
    bar = StudyProgress(stream=out, enabled=True)
    bar(0, 10)
    bar(5, 10)
    text = out.getvalue()
    assert "rows 5/10" in text and "ETA" in text and " 50.0%" in text
    quiet = io.StringIO()
    StudyProgress(stream=quiet, enabled=False)(5, 10)
    assert quiet.getvalue() == ""


def test_a_task_that_breaks_the_cluster_is_one_error_line(engine):
    from solver.studies.engine import EngineError

    def broken(context, batch):
        raise MemoryError("worker ran out of memory")

    with pytest.raises(EngineError, match="the Dask cluster failed: MemoryError: worker ran out"):
        list(engine.run(broken, None, [[1], [2]]))


def test_a_damaged_study_group_is_a_one_line_error(engine, tmp_path):
    from solver.io.hdf5.results import ResultsFileError

    out = tmp_path / "r.h5"
    run_study(failure_plan(ring(4, 10), ["links"]), engine, output=out)
    with h5py.File(out, "r+") as f:
        f["studies/failures_allgather"].attrs["rows"] = 99  # more rows than the columns hold
    with pytest.raises(ResultsFileError, match="damaged or incomplete") as err:
        read_study(out, "failures_allgather")
    assert "\n" not in str(err.value)
    with pytest.raises(ResultsFileError, match="no study 'other'"):
        read_study(out, "other")


def test_resume_refuses_rows_that_cannot_be_this_studys(engine, tmp_path):
    """Issue 21: ``--resume`` kept a forged row (9999 GB/s for a failure). Resumed rows are
    checked against the plan: bounds from the intact optimum, upgrade rows known without a
    solve, and a seeded sample solved again (every row here: the study has fewer than 8)."""
    import numpy as np

    from solver.studies.runner import RESUME_CHECK_ROWS

    topo = fat_tree(2, 1, 2)
    plan = upgrade_plan(topo, factor=2, use_symmetry=False)
    free = {r["element"] for r in plan.free_rows}
    assert free and len(plan.keys) > len(free)
    out = tmp_path / "u.h5"
    run_study(plan, engine, output=out)
    base = Fraction(plan.base.algbw)

    def forged(key: str, value: Fraction) -> Path:
        path = tmp_path / f"forged-{len(list(tmp_path.iterdir()))}.h5"
        path.write_bytes(out.read_bytes())
        with h5py.File(path, "r+") as f:
            g = f["studies/upgrade_allgather"]
            keys = [x.decode() for x in g["element"][()]]
            exact = [x.decode() for x in g["algbw_exact"][()]]
            i = keys.index(key)
            exact[i] = f"{value.numerator}/{value.denominator}"
            g["algbw_exact"][...] = np.array(exact, dtype=object)
            g["algbw"][i] = float(value)
        return path

    solved = sorted(set(plan.keys) - free)
    assert len(plan.keys) <= RESUME_CHECK_ROWS + len(free)
    cases = [
        (sorted(free)[0], base * 3, "leaves the bottleneck"),
        (solved[0], base / 2, "below the intact fabric's"),
        (solved[0], base * 7, "solved again"),
    ]
    for key, value, words in cases:
        path = forged(key, value)
        with pytest.raises(ForestCollError, match=words):
            run_study(
                upgrade_plan(topo, factor=2, use_symmetry=False), engine, output=path, resume=True
            )
    intact = run_study(
        upgrade_plan(topo, factor=2, use_symmetry=False), engine, output=out, resume=True
    )
    assert intact.resumed == len(plan.keys) and intact.solved == 0
