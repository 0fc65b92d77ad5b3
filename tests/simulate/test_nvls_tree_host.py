"""NVLSTree's size correction on Blackwell with x86 hosts, and ``host=arm`` for Grace hosts
(NVIDIA/nccl @5067397c src/graph/tuning.cc:643-646)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from solver.cli import main
from solver.io import formats
from solver.io import templates as T
from solver.simulate import calibration as C
from solver.simulate import library as L

ROOT = Path(__file__).resolve().parents[2]
GB300 = ROOT / "tests/data/real/topo/nccl_ebpf_gb300_mnnvl_topo_2tray_0405.xml"
MIB = 1 << 20


def _b200(boxes=2):
    return C.boxes_with_rails(
        "2x B200", boxes, 8, 50, nvswitch_bw=900, library="nccl:blackwell:nvls"
    )


def _nvls_tree(lib):
    tu = L.tuner(_b200(), "allreduce", lib)
    return tu, next(c for c in tu.choices if c.label == "NVLSTree/Simple")


def test_host_parses_and_round_trips():
    lib = L.parse_library("nccl:blackwell:nvls:host=arm")
    assert lib == L.Library("nccl", "blackwell", True, host="arm")
    assert L.library_spec(lib) == "nccl:blackwell:nvls:host=arm"
    assert "host arm" in lib.label
    assert L.parse_library("nccl:blackwell:nvls:host=x86") == L.Library("nccl", "blackwell", True)
    assert L.library_spec(L.Library("nccl", "blackwell", True)) == "nccl:blackwell:nvls"
    with pytest.raises(Exception, match="bad host"):
        L.parse_library("nccl:blackwell:host=power")


def test_x86_blackwell_nvls_tree_pays_the_tree_correction_below_1_gib():
    x86 = L.Library("nccl", "blackwell", True)
    arm = replace(x86, host="arm")
    _, c86 = _nvls_tree(x86)
    _, carm = _nvls_tree(arm)
    assert c86.corrected and not carm.corrected
    for size in (64 * MIB, 256 * MIB):
        log_size = (size >> 6).bit_length() - 1
        f = L.TREE_CORRECTION[2][log_size]  # Simple row
        assert f < 1.0
        t86 = c86.time(size, "allreduce", 16) - c86.latency_us * 1e-6
        tarm = carm.time(size, "allreduce", 16) - carm.latency_us * 1e-6
        assert t86 == pytest.approx(tarm / f, rel=1e-9)
    # logSize < 24 only: from 1 GiB on (log2(1 GiB / 64) = 24) both hosts agree
    assert c86.time(1 << 30, "allreduce", 16) == pytest.approx(carm.time(1 << 30, "allreduce", 16))


def test_no_correction_on_hopper_or_for_other_collectives():
    assert not L.Library("nccl", "hopper", True).nvls_tree_corrected
    tu = L.tuner(T.dgx_h100_rail(2), "allreduce")
    assert not any(c.corrected for c in tu.choices)


def test_nvl72_templates_and_the_gb300_dump_get_arm_with_the_reason():
    for name in ("nvl72", "nvl72_racks"):
        lib, why = L.pick_library(T.make(name))
        assert lib.host == "arm" and "host=arm" in why, (name, why)
    lib, why = L.pick_library(formats.load(GB300))
    assert (lib.generation, lib.nvls, lib.host) == ("blackwell", True, "arm")
    assert "C2C" in why and "arm" in why
    # an x86 box keeps x86 (the A4 logs' B200 hosts are Intel)
    assert L.library_for(_b200()).host == "x86"


def test_the_x86_correction_brings_the_a4_mid_sizes_closer():
    """GCP A4 (x86 hosts), NCCL defaults: 64-512 MiB move toward the measured run."""
    log = next(g for g in C.LOGS if g.file == "nccl_allreduce_b200_a4_dstack_2node.log")
    m = log.measurement()
    topo = log.topology()
    x86 = L.library_for(topo)
    arm = replace(x86, host="arm")
    for size, meas in zip(m.size_bytes, m.algbw_used):
        if 64 * MIB <= size <= 512 * MIB:
            p86 = size / L.tuner(topo, "allreduce", x86).best(int(size))[1] / 1e9
            parm = size / L.tuner(topo, "allreduce", arm).best(int(size))[1] / 1e9
            assert abs(p86 / meas - 1) < abs(parm / meas - 1), size


def test_cli_takes_host_arm_and_names_it(capsys):
    topo = "sample_topologies/dgx_h100_rail_2x.json"
    spec = "nccl:blackwell:nvls:host=arm"
    rc = main(["simulate", topo, "-c", "allreduce", "-s", "64M", "-a", "nccl", "--library", spec])
    out = capsys.readouterr().out
    assert rc == 0 and "host arm" in out
    rc = main(
        [
            "simulate",
            topo,
            "-c",
            "allreduce",
            "-s",
            "64M",
            "-a",
            "nccl",
            "--library",
            "nccl:blackwell:host=sparc",
        ]
    )
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error:") and err.count("\n") == 1
