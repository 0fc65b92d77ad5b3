"""MSCCL++ execution plans: generated plans pass the symbolic executor, have the structure of
MSCCL++'s own shipped plans (tests/data/real/mscclpp, provenance in tests/data/real/README.md),
and broken plans are refused with one line naming the rank, threadblock and op."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from solver import solve
from solver.io.formats import load
from solver.mscclpp import (
    MscclppError,
    PlanOptions,
    build_plan,
    check_plan,
    check_plan_file,
    plan_text,
)
from solver.mscclpp.plan import DSL_TOP_KEYS, OP_NAMES, RESIDENT_THREADBLOCKS

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "data" / "real" / "mscclpp"
FABRICS = {
    "dgx_a100_2x": ROOT / "sample_topologies" / "dgx_a100_2x.json",
    "mi250_2x": ROOT / "sample_topologies" / "mi250_2x.json",
}
_CACHE: dict = {}


def plan(fabric: str, coll: str, **options) -> dict:
    key = (fabric, coll, tuple(sorted(options.items())))
    if key not in _CACHE:
        s = solve(load(FABRICS[fabric]), collective=coll, max_trees_per_root=1)
        _CACHE[key] = build_plan(s, PlanOptions(**options))
    return copy.deepcopy(_CACHE[key])


def real(name: str) -> dict:
    return json.loads((REAL / name).read_text())


@pytest.mark.parametrize("fabric", sorted(FABRICS))
@pytest.mark.parametrize("coll", ["allgather", "reduce-scatter", "allreduce"])
def test_plan_passes_the_executor_check(fabric, coll):
    doc = plan(fabric, coll)
    report = check_plan(doc)
    n = {"dgx_a100_2x": 16, "mi250_2x": 32}[fabric]
    assert report.ranks == n and len(doc["gpus"]) == n
    assert report.collective == {"reduce-scatter": "reducescatter"}.get(coll, coll)
    # one threadblock per tree (k = 1: one tree per root), two phases for allreduce
    assert report.stats["max_threadblocks"] == n * (2 if coll == "allreduce" else 1)
    assert report.ops_executed == report.stats["ops"]
    kinds = {c["channel_type"] for g in doc["gpus"] for c in g["channels"]}
    assert kinds == {"memory", "port"}  # NVLink/xGMI inside a box, the NICs across


def test_port_only_plan_passes():
    doc = plan("dgx_a100_2x", "allreduce", channels="port")
    assert {c["channel_type"] for g in doc["gpus"] for c in g["channels"]} == {"port"}
    check_plan(doc)


def test_instances_repeat_on_fresh_threadblocks():
    one, two = plan("dgx_a100_2x", "allgather"), plan("dgx_a100_2x", "allgather", instances=2)
    assert len(two["gpus"][0]["threadblocks"]) == 2 * len(one["gpus"][0]["threadblocks"])
    assert two["gpus"][0]["input_chunks"] == 2 * one["gpus"][0]["input_chunks"]
    check_plan(two)


@pytest.mark.parametrize("coll", ["allgather", "allreduce"])
def test_trees_share_threadblocks_when_there_are_too_many(coll):
    doc = plan("dgx_a100_2x", coll, resident=8)
    tbs = len(doc["gpus"][0]["threadblocks"])
    assert tbs <= 8  # 16 trees per phase, two (allgather) or four (allreduce) per threadblock
    assert max(len(tb["ops"]) for g in doc["gpus"] for tb in g["threadblocks"]) > 9
    check_plan(doc, resident=8)
    with pytest.raises(MscclppError, match="this check allows 4"):
        check_plan(doc, resident=4)


def test_resident_limit_refuses_with_the_option_named():
    s = solve(load(FABRICS["dgx_a100_2x"]), collective="allreduce")  # no tree limit: k = 13
    with pytest.raises(MscclppError, match="--max-threadblocks"):
        build_plan(s, PlanOptions(resident=16))
    doc = build_plan(s)  # 2 x 208 trees in at most 108 threadblocks of at most 64 ops
    assert len(doc["gpus"][0]["threadblocks"]) <= 108
    check_plan(doc)


def _keys(doc: dict) -> tuple[set, set, set, dict]:
    gpu = {k for g in doc["gpus"] for k in g}
    tb = {k for g in doc["gpus"] for t in g["threadblocks"] for k in t}
    ops: dict[str, set] = {}
    for g in doc["gpus"]:
        for t in g["threadblocks"]:
            for o in t["ops"]:
                ops.setdefault(o["name"], set()).add(tuple(sorted(o)))
    return set(doc), gpu, tb, ops


def test_structure_matches_the_shipped_plans():
    shipped = [real(f) for f in ("allreduce.json", "reduce.json", "transfer_pack.json")]
    top_r, gpu_r, tb_r, ops_r = set(), set(), set(), {}
    for d in shipped:
        t, g, b, o = _keys(d)
        top_r |= t
        gpu_r |= g
        tb_r |= b
        for k, v in o.items():
            ops_r.setdefault(k, set()).update(v)
    assert top_r == set(DSL_TOP_KEYS)
    for coll in ("allgather", "reduce-scatter", "allreduce"):
        top, gpu, tb, ops = _keys(plan("dgx_a100_2x", coll))
        assert top - top_r == {"forestcoll"} and top_r <= top  # our one extra key: the rank order
        assert gpu == gpu_r and tb == tb_r
        assert set(ops) <= set(OP_NAMES)
        for name, shapes in ops.items():
            if name in ops_r:  # the same keys as MSCCL++'s own ops of that name
                assert shapes <= ops_r[name], (name, shapes, ops_r[name])
        if coll == "allreduce":
            assert {"sem_acquire", "sem_release", "re", "pwsf", "put", "signal", "wait"} <= set(ops)


def test_shipped_simple_plans_pass_the_checker():
    for name in ("allreduce.json", "reduce.json"):
        report = check_plan_file(REAL / name)
        assert report.collective == "allreduce" and report.ranks == 2


def test_shipped_packet_plan_is_refused_by_name():
    with pytest.raises(MscclppError, match="'ppkt' is not executed by this checker"):
        check_plan_file(REAL / "transfer_pack.json")


# ---------------------------------------------------------------------------- mutations
def _ops(doc, rank, tb):
    return doc["gpus"][rank]["threadblocks"][tb]["ops"]


def _find(doc, name, rank=None):
    for r, g in enumerate(doc["gpus"]):
        if rank is not None and r != rank:
            continue
        for t, tb in enumerate(g["threadblocks"]):
            for i, op in enumerate(tb["ops"]):
                if op["name"] == name:
                    return r, t, i
    raise AssertionError(name)


def test_missing_nop_after_wait_is_a_thread_race():
    doc = plan("dgx_a100_2x", "allgather")
    r, t, i = next(
        (r, t, i)
        for r, g in enumerate(doc["gpus"])
        for t, tb in enumerate(g["threadblocks"])
        for i, op in enumerate(tb["ops"][:-2])
        if op["name"] == "wait" and tb["ops"][i + 2]["name"] in ("put", "pwsf")
    )
    assert _ops(doc, r, t)[i + 1]["name"] == "nop"
    del _ops(doc, r, t)[i + 1]
    with pytest.raises(MscclppError, match=rf"rank {r} tb {t} op {i + 1} .*right after a wait"):
        check_plan(doc)


def test_missing_nop_before_signal():
    doc = plan("dgx_a100_2x", "allgather")
    r, t, i = _find(doc, "put")
    del _ops(doc, r, t)[i + 1]
    with pytest.raises(MscclppError, match="signals right after a data op"):
        check_plan(doc)


def test_missing_wait_is_a_race_or_a_leftover_signal():
    doc = plan("dgx_a100_2x", "allgather")
    r, t, i = _find(doc, "wait")
    del _ops(doc, r, t)[i]
    with pytest.raises(MscclppError, match="race|nobody waited"):
        check_plan(doc)


def test_missing_ready_signal_deadlocks():
    doc = plan("dgx_a100_2x", "reduce-scatter")
    r, t, i = _find(doc, "rlxsignal")
    del _ops(doc, r, t)[i]
    with pytest.raises(MscclppError, match="deadlock: rank"):
        check_plan(doc)


def test_put_without_ready_handshake_is_refused():
    doc = plan("dgx_a100_2x", "allgather", channels="port")
    for g in doc["gpus"]:
        for tb in g["threadblocks"]:
            tb["ops"] = [o for o in tb["ops"] if o["name"] not in ("rlxsignal", "rlxwait")]
    with pytest.raises(MscclppError, match="before any signal from rank"):
        check_plan(doc)


def test_unflushed_port_put_is_refused():
    doc = plan("dgx_a100_2x", "allgather")
    r, t, i = _find(doc, "pwsf")
    _ops(doc, r, t)[i]["name"] = "pws"
    with pytest.raises(MscclppError, match="not flushed"):
        check_plan(doc)


def test_wrong_destination_is_a_wrong_result():
    doc = plan("dgx_a100_2x", "allgather")
    r, t, i = _find(doc, "copy")
    _ops(doc, r, t)[i]["dst_buff"][0]["index"] += 1
    with pytest.raises(MscclppError, match="output chunk|race"):
        check_plan(doc)


def test_missing_reduction_input_is_a_wrong_sum():
    doc = plan("dgx_a100_2x", "allreduce")
    r, t, i = _find(doc, "re")
    op = _ops(doc, r, t)[i]
    assert len(op["src_buff"]) >= 2
    op["src_buff"].pop()
    with pytest.raises(
        MscclppError, match="output chunk .* ends as|nobody|race|before anything wrote"
    ):
        check_plan(doc)


def test_swapped_channels_are_caught():
    doc = plan("dgx_a100_2x", "allgather", channels="port")
    g = doc["gpus"][0]
    peers = g["channels"][0]["connected_to"]
    i = next(j for j in range(1, len(peers)) if peers[j] != peers[0])
    peers[0], peers[i] = peers[i], peers[0]
    with pytest.raises(MscclppError):
        check_plan(doc)


def test_channel_of_the_wrong_type_is_refused():
    doc = plan("dgx_a100_2x", "allgather")
    g = doc["gpus"][0]
    mem = next(c for c in g["channels"] if c["channel_type"] == "memory")
    mem["channel_type"] = "port"
    with pytest.raises(MscclppError):
        check_plan(doc)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["gpus"][1].__setitem__("id", 0), "GPU rank does not match"),
        (lambda d: d.pop("protocol"), "missing key 'protocol'"),
        (
            lambda d: d["gpus"][0]["threadblocks"][0]["ops"][0].__setitem__("name", "send"),
            "Invalid operation type",
        ),
        (
            lambda d: d["gpus"][0]["threadblocks"][0]["ops"].extend([{"name": "nop"}] * 64),
            "MAX_OPERATION 64",
        ),
        (lambda d: d.__setitem__("inplace", 1), "inplace must be true or false"),
        (lambda d: d.__setitem__("reuse_resources", True), "reuse_resources .* not executed"),
        (
            lambda d: d["gpus"][0]["threadblocks"].extend(
                [
                    {"id": i, "ops": [], "channels": [], "remote_buffer_refs": []}
                    for i in range(16, RESIDENT_THREADBLOCKS + 1)
                ]
            ),
            "resident",
        ),
    ],
)
def test_reader_rules(mutate, message):
    doc = plan("dgx_a100_2x", "allgather")
    mutate(doc)
    with pytest.raises(MscclppError, match=message):
        check_plan(doc)


def test_text_round_trip_is_the_document():
    doc = plan("dgx_a100_2x", "allgather")
    assert json.loads(plan_text(doc)) == doc


@pytest.mark.parametrize("make", ["ring", "torus", "fully_connected", "fat_tree", "dgx_a100_4"])
@pytest.mark.parametrize("k", [1, 2])
def test_other_fabrics_pass(make, k):
    from solver.io import templates as T

    topo = {
        "ring": lambda: T.ring(8),
        "torus": lambda: T.torus_2d(4, 4),
        "fully_connected": lambda: T.fully_connected(6),
        "fat_tree": lambda: T.fat_tree(),
        "dgx_a100_4": lambda: T.dgx_a100(4),
    }[make]()
    for coll in ("allgather", "reduce-scatter", "allreduce"):
        s = solve(topo, collective=coll, max_trees_per_root=k)
        report = check_plan(build_plan(s))
        assert report.ranks == len(topo.compute_ids)


def test_a_reduction_counting_a_chunk_twice_is_a_wrong_sum():
    doc = plan("dgx_a100_2x", "reduce-scatter")
    r, t, i = _find(doc, "re")
    op = _ops(doc, r, t)[i]
    op["src_buff"].append(dict(op["src_buff"][-1]))
    with pytest.raises(
        MscclppError,
        match=r"output chunk \d+ ends as a sum of \d+ chunks, not a sum of 16 chunks \(extra r\d+\[\d+\] x2",
    ):
        check_plan(doc)


def test_a_forgotten_root_copy_leaves_the_chunk_undefined():
    doc = plan("dgx_a100_2x", "allgather")
    r, t, i = _find(doc, "copy")
    del _ops(doc, r, t)[i]
    with pytest.raises(MscclppError, match=rf"rank {r} output chunk \d+ ends as undefined"):
        check_plan(doc)
