"""The HDF5 results file: exact round trips, schema, units, refusals, atomic writes."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import h5py
import numpy as np
import pytest
from bfs_schedules import bfs_schedule

from solver.io.hdf5 import results as rh
from solver.io.templates import dgx_a100, mi250, ring
from solver.model.errors import ForestCollError
from solver.model.results import ResultTable
from solver.model.topology import Link
from solver.simulate.estimate import model_tables


@pytest.fixture()
def topo():
    t = dgx_a100(2)
    # exact fractions and latencies survive the round trip
    links = list(t.links)
    links[0] = replace(links[0], bandwidth=Fraction(1, 3), latency=Fraction(7, 10))
    links.append(Link("b0.gpu0", "b0.gpu1", Fraction(16, 5), None, True))
    return replace(t, links=tuple(links))


def _table(n=4, source="simulator"):
    sizes = np.array([1024 * 4**i for i in range(n)], dtype=np.int64)
    t = sizes / 1e11
    return ResultTable(
        collective="allgather",
        algorithm="ring",
        source=source,
        size_bytes=sizes,
        predicted_time=t,
        predicted_algbw=sizes / t / 1e9,
        measured_time=t * 1.1,
        measured_algbw=sizes / t / 1.1e9,
        schedule="allgather_k1",
        attrs={"chunk": 1048576},
    )


def test_round_trip_schedules_exact(tmp_path, topo):
    path = tmp_path / "r.h5"
    ag = bfs_schedule(topo, "allgather")
    ar = bfs_schedule(topo, "allreduce", multiplicity=2)
    assert rh.write_schedule(path, ag) == "allgather_k1"
    assert rh.write_schedule(path, ar, name="ar") == "ar"
    assert rh.read_topology(path) == topo
    got = rh.read_schedules(path)
    assert set(got) == {"allgather_k1", "ar"}
    assert got["allgather_k1"] == ag
    assert got["ar"] == ar
    assert got["ar"].phases[0].trees[0].weight == Fraction(1)
    assert dict(got["allgather_k1"].timings) == dict(ag.timings)
    assert isinstance(got["ar"].optimal_algbw_exact, Fraction)


def test_round_trip_mi250_and_default_names(tmp_path):
    t = mi250(2)
    s = replace(bfs_schedule(t, "reduce-scatter"), max_trees_per_root=None)
    assert rh.default_name(s) == "reduce-scatter"
    path = tmp_path / "m.h5"
    rh.write_schedule(path, s)
    assert rh.read_schedules(path)["reduce-scatter"] == s


def test_schema_attributes_units_and_compression(tmp_path, topo):
    path = tmp_path / "r.h5"
    rh.write_schedule(path, bfs_schedule(topo), tables=model_tables)
    with h5py.File(path, "r") as f:
        assert f.attrs["schema"] == "forestcoll-results"
        assert f.attrs["schema_version"] == "1.2"
        assert f.attrs["creator"] == "ForestColl Designer"
        assert "T" in f.attrs["created"]
        assert f["topology/links/bandwidth"].attrs["units"] == "GB/s"
        assert f["topology/links/latency"].attrs["units"] == "us"
        assert f["results/allgather_k1.bound/predicted_time"].attrs["units"] == "s"
        assert f["results/allgather_k1.bound/size_bytes"].attrs["units"] == "B"
        assert f["schedules/allgather_k1"].attrs["algbw_units"] == "GB/s"
        assert f["topology/nodes/id"].dtype.kind == "O"
        assert f["topology/nodes/id"].compression is None  # small: contiguous
        prov = f["provenance"]
        for key in ("program_version", "numba", "networkx", "h5py"):
            assert prov.attrs[key]
        assert "options_json" in prov["allgather_k1"].attrs


def test_large_datasets_are_compressed(tmp_path):
    path = tmp_path / "big.h5"
    sizes = np.arange(1, 5001, dtype=np.int64)
    table = ResultTable(
        "allgather",
        "ring",
        "simulator",
        sizes,
        sizes * 1.0,
        sizes * 1.0,
        np.full(5000, np.nan),
        np.full(5000, np.nan),
    )
    rh.write_schedule(path, bfs_schedule(ring(4)))
    rh.write_results(path, "sweep", table)
    with h5py.File(path, "r") as f:
        ds = f["results/sweep/size_bytes"]
        assert ds.compression == "gzip" and ds.shuffle


def test_model_tables_written_with_schedule(tmp_path):
    topo = ring(4)
    s = bfs_schedule(topo)
    path = tmp_path / "r.h5"
    rh.write_schedule(path, s, tables=model_tables)
    res = rh.read_results(path)
    bound = res["allgather_k1.bound"]
    est = res["allgather_k1.estimate"]
    assert bound.source == "model" and bound.schedule == "allgather_k1"
    m = bound.size_bytes.astype(float)
    np.testing.assert_allclose(bound.predicted_time, m / (s.optimal_algbw * 1e9))
    assert np.all(est.predicted_time > bound.predicted_time)
    # the deepest BFS path on a 4-ring is 2 hops of 1 us latency (+ one chunk per hop)
    assert est.predicted_time[0] - bound.predicted_time[0] >= 2e-6
    # one model: `forestcoll simulate` prints the same estimate as the stored table
    from solver.simulate import sweep

    sizes = [int(x) for x in est.size_bytes[::7]]
    rows = sweep(topo, "allgather", ["forestcoll"], sizes, schedule=s).rows
    np.testing.assert_allclose([r.estimate_time for r in rows], est.predicted_time[::7], rtol=1e-12)
    assert est.attrs["default_hop_latency_us"] == pytest.approx(1.0)
    assert np.all(np.isnan(bound.measured_time))
    # the HDF5 layer only stores tables: none without a model
    other = tmp_path / "plain.h5"
    rh.write_schedule(other, s)
    assert rh.read_results(other) == {}


def test_write_results_round_trip_and_replace(tmp_path):
    path = tmp_path / "r.h5"
    rh.write_schedule(path, bfs_schedule(ring(4)))
    rh.write_results(path, "sim", _table())
    rh.write_results(path, "sim", _table(6))  # replaced
    got = rh.read_results(path)["sim"]
    ref = _table(6)
    for field in ("size_bytes", "predicted_time", "measured_algbw"):
        np.testing.assert_array_equal(getattr(got, field), getattr(ref, field))
    assert (got.collective, got.algorithm, got.source, got.schedule) == (
        "allgather",
        "ring",
        "simulator",
        "allgather_k1",
    )
    assert dict(got.attrs) == {"chunk": 1048576}


def test_write_results_needs_existing_file(tmp_path):
    with pytest.raises(ForestCollError, match="no such results file"):
        rh.write_results(tmp_path / "none.h5", "x", _table())


def test_refuses_other_fabric(tmp_path):
    path = tmp_path / "r.h5"
    rh.write_schedule(path, bfs_schedule(ring(4)))
    with pytest.raises(ForestCollError, match="another fabric"):
        rh.write_schedule(path, bfs_schedule(ring(6)))
    assert rh.read_topology(path) == ring(4)


def test_refuses_newer_major_version(tmp_path):
    path = tmp_path / "r.h5"
    rh.write_schedule(path, bfs_schedule(ring(4)))
    with h5py.File(path, "r+") as f:
        f.attrs["schema_version"] = "2.0"
    with pytest.raises(ForestCollError, match="newer"):
        rh.read_schedules(path)
    with pytest.raises(ForestCollError, match="newer"):
        rh.write_schedule(path, bfs_schedule(ring(4)))
    with h5py.File(path, "r+") as f:
        f.attrs["schema_version"] = "1.7"  # newer minor: still readable
    assert "allgather_k1" in rh.read_schedules(path)


def test_refuses_non_results_files(tmp_path):
    junk = tmp_path / "junk.h5"
    junk.write_bytes(b"not hdf5 at all")
    with pytest.raises(ForestCollError, match="not an HDF5 file"):
        rh.read_topology(junk)
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f.attrs["schema"] = "something-else"
    with pytest.raises(ForestCollError, match="not a ForestColl results file"):
        rh.summarize(other)
    with pytest.raises(ForestCollError, match="no such file"):
        rh.read_results(tmp_path / "missing.h5")


def test_interrupted_write_leaves_old_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "r.h5"
    rh.write_schedule(path, bfs_schedule(ring(4)))
    before = path.read_bytes()

    calls = {"n": 0}
    real = rh._write_table

    def failing(group, table):
        calls["n"] += 1
        if calls["n"] == 2:  # the schedule and one table are already in the copy
            raise OSError("disk full")
        return real(group, table)

    monkeypatch.setattr(rh, "_write_table", failing)
    with pytest.raises(ForestCollError, match="cannot write: disk full"):
        rh.write_schedule(path, bfs_schedule(ring(4), "reduce-scatter"), tables=model_tables)
    assert path.read_bytes() == before
    assert set(rh.read_schedules(path)) == {"allgather_k1"}
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_summarize_mentions_schedules_and_tables(tmp_path):
    path = tmp_path / "r.h5"
    rh.write_schedule(path, bfs_schedule(dgx_a100(2), "allreduce"))
    rh.write_results(path, "measured", _table(source="nccl-tests"))
    text = rh.summarize(path)
    assert "2x DGX A100" in text
    assert "allreduce_k1: allreduce" in text
    assert "measured: nccl-tests / ring, 4 sizes 1K..64K, 4 measured" in text
    assert "32 trees" in text


def test_missing_folder_is_created_and_a_file_in_the_way_is_one_line(tmp_path):
    rh.write_schedule(tmp_path / "new" / "r.h5", bfs_schedule(ring(4)))
    assert rh.read_schedules(tmp_path / "new" / "r.h5")
    (tmp_path / "plain").write_text("x")
    with pytest.raises(ForestCollError, match="cannot write"):
        rh.write_schedule(tmp_path / "plain" / "r.h5", bfs_schedule(ring(4)))


def test_bad_names_refused(tmp_path):
    with pytest.raises(ForestCollError, match="bad name"):
        rh.write_schedule(tmp_path / "r.h5", bfs_schedule(ring(4)), name="a/b")


@pytest.mark.parametrize("fabric", [dgx_a100, mi250])
def test_round_trip_real_solver_output(tmp_path, fabric):
    import solver

    path = tmp_path / "solved.h5"
    topo = fabric(2)
    written = {}
    for coll, k in (("allreduce", None), ("allgather", 1), ("reduce-scatter", None)):
        s = solver.solve(topo, coll, max_trees_per_root=k)
        written[rh.write_schedule(path, s)] = s
    assert set(written) == {"allreduce", "allgather_k1", "reduce-scatter"}
    back = rh.read_schedules(path)
    for name, s in written.items():
        assert back[name] == s  # exact: Fractions, trees, paths, cut, loads, phases
        assert back[name].to_dict()["trees"] == s.to_dict()["trees"]
    assert rh.read_topology(path) == topo


def test_damaged_file_is_a_one_line_error(tmp_path):
    path = tmp_path / "r.h5"
    rh.write_schedule(path, bfs_schedule(ring(4)))
    with h5py.File(path, "r+") as f:
        del f["topology/links/bandwidth_exact"]
    before = path.read_bytes()
    for call in (rh.read_topology, rh.read_schedules, rh.summarize):
        with pytest.raises(ForestCollError, match="damaged or incomplete results file"):
            call(path)
    with pytest.raises(ForestCollError, match="cannot update"):
        rh.write_schedule(path, bfs_schedule(ring(4), "reduce-scatter"))
    assert path.read_bytes() == before


def test_schedule_with_unknown_node_refused(tmp_path):
    s = bfs_schedule(ring(4))
    bad = replace(s, trees=(replace(s.trees[0], root="ghost"),) + s.trees[1:])
    with pytest.raises(ForestCollError, match="refers to node 'ghost'"):
        rh.write_schedule(tmp_path / "r.h5", bad)
    assert not (tmp_path / "r.h5").exists()


def test_table_attrs_accept_numpy_values_and_refuse_objects(tmp_path):
    path = tmp_path / "r.h5"
    rh.write_schedule(path, bfs_schedule(ring(4)))
    table = replace(
        _table(), attrs={"chunk": np.int64(4096), "alpha": np.float32(0.5), "v": np.arange(2)}
    )
    rh.write_results(path, "np", table)
    assert dict(rh.read_results(path)["np"].attrs) == {"chunk": 4096, "alpha": 0.5, "v": [0, 1]}
    with pytest.raises(ForestCollError, match="must be JSON values"):
        rh.write_results(path, "bad", replace(_table(), attrs={"x": object()}))
