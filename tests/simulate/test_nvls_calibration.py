"""NVLS allreduce calibrated on one public figure, checked on the others (held out), and always
at or below the capability optimum of solver.algorithm.capability_bounds."""

from __future__ import annotations

import pytest

from solver.algorithm.capability_bounds import capability_bounds
from solver.io import templates as T
from solver.simulate import calibration as C
from solver.simulate import library as L

GIB = 1 << 30


def test_one_figure_calibrates_and_the_rest_are_held_out():
    calib = [f for f in C.NVLS_FIGURES if not f.held_out]
    assert len(calib) == 1 and "nccl-tests#212" in calib[0].source
    assert len(C.NVLS_FIGURES) - len(calib) >= 8


def test_held_out_hopper_and_8_gpu_blackwell_within_2_percent():
    rows = C.nvls_compare()
    for fig, predicted, choice in rows:
        assert choice == "NVLS/Simple", fig.source
        if "NVL72" in fig.fabric or "72 GB200" in fig.fabric:
            continue
        assert predicted / fig.measured - 1 == pytest.approx(0, abs=0.02), fig.source


def test_nvl72_rack_is_the_known_miss():
    # the full-rack figure is 25 % below the model: reported, not fitted away
    fig, predicted, _ = next(r for r in C.nvls_compare() if "72 GB200" in r[0].fabric)
    assert 0.20 < predicted / fig.measured - 1 < 0.30


def test_nvls_grows_with_gpu_count_as_measured():
    # nccl#1455: algbw rises from 5 to 8 GPUs; NCCL's tuner formula (x n/(n-1)) would fall
    bws = [L.nvls_allreduce_algbw(450, p, "hopper") for p in (5, 6, 7, 8)]
    assert bws == sorted(bws)


@pytest.mark.parametrize(
    "fabric", [T.make("dgx_h100_rail", n=1), T.make("dgx_h100_rail", n=2), T.make("nvl72")]
)
def test_nvls_model_and_measured_figure_stay_below_the_capability_optimum(fabric):
    cap = capability_bounds(fabric, "allreduce")
    choice, t = L.tuner(fabric, "allreduce").best(8 * GIB)
    assert choice.algorithm in L.IN_SWITCH
    assert 8 * GIB / t / 1e9 <= float(cap.capability)
    if fabric.name == "1x DGX H100 rail":
        assert 275.0 <= float(cap.capability) == 450  # nccl-tests#212's measured algbw


def test_in_switch_choices_never_beat_the_any_schedule_bound_on_real_dumps_and_templates():
    """Physics for NVLS/NVLSTree: whatever the switch does, no allreduce beats the any-schedule
    bound at line rate. Every real dump the library runs NVLS on, and the NVLS templates."""
    import json
    from pathlib import Path

    import solver

    real = Path(__file__).resolve().parents[1] / "data" / "real" / "topo"
    opts = json.loads((real / "import_options.json").read_text())
    fabrics = [T.make("dgx_h100_rail", n=n) for n in (1, 2, 4)] + [
        T.make("nvl72"),
        T.make("nvl72", gpus=8),
    ]
    for path in sorted(real.glob("*.xml")):
        topo = solver.load_topology(path, **opts.get(path.name, {}))
        if L.library_for(topo).nvls:
            fabrics.append(topo)
    assert len(fabrics) >= 8  # IBM H100, GB300 MNNVL and the NDv5 skeleton among them
    for topo in fabrics:
        cap = capability_bounds(topo, "allreduce")
        tu = L.tuner(topo, "allreduce")
        for c in tu.choices:
            if c.algorithm in L.IN_SWITCH:
                assert c.bw <= float(cap.any_schedule), (topo.name, c.label)
                assert c.bw <= float(cap.capability) or not cap.exact, (topo.name, c.label)
