"""Explosive-but-valid fabrics (issue 21, item 3): each ends in exit 0 with the exact optimum
(checked by the verifier inside ``solve`` and by the figure here) or in exit 2 with one
``error:`` line naming the limit, inside a child process whose memory (address space) and CPU
time are capped (see ``explosive.py``). The up-front estimates are also checked directly: they
refuse before anything of the estimated size is allocated.
"""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
from explosive import CPU_LIMIT, cases, run_bounded

from solver.algorithm import cost

CASES = {c.name: c for c in cases()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_explosive_fabric_is_solved_or_refused(name, tmp_path):
    case = CASES[name]
    path = tmp_path / f"fabric{case.ext}"
    path.write_text(case.text)
    argv = [case.command, str(path), *case.argv]
    code, out, err, cpu, rss_kb = run_bounded(argv, tmp_path)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "Traceback" not in err, err[-2000:]
    assert cpu < CPU_LIMIT
    if case.expect == "refused":
        # solve may fall back to the optimum and cut alone (a "note:" says so) or refuse that too
        notes = [ln for ln in lines if ln.startswith("note: ")]
        errors = [ln for ln in lines if not ln.startswith("note: ")]
        if code == 0 and case.command == "solve":
            assert notes and "optimum and bottleneck cut only" in notes[0], err[-2000:]
            assert "GB/s" in out and not errors, (out[-2000:], err[-2000:])
            return
        assert code == 2, (code, err[-2000:])
        assert len(errors) == 1 and errors[0].startswith("error: "), err[-2000:]
        if notes:  # the schedule was refused first; then the optimum's own cost
            assert "optimum" in errors[0], errors[0]
        else:
            assert all(w in errors[0] for w in case.words), errors[0]
        return
    assert code == 0, (code, err[-2000:])
    if case.command == "solve":
        # the report, not --json: the document of 9M tree edges would itself be ~1 GB. solve
        # refuses a schedule below the optimum (without K) and the verifier has checked it
        exact = re.search(r"optimum: +[0-9.]+ GB/s \(exact ([0-9/]+)\)", out)
        assert exact and Fraction(exact.group(1)) == case.algbw, out[:2000]
        assert re.search(r"schedule: .*k = ", out) and "verified:   yes" in out, out[:2000]
        if case.argv:  # with K the schedule must still reach the bound (k = K does)
            assert "(100.0% of the optimum)" in out, out[:2000]
    else:
        assert "2000" in out or "4000" in out  # the summary of the whole dump


def test_star_splitting_array_is_refused_before_it_is_allocated():
    # the (N x arcs) flow rows of switch splitting on 1000 GPUs at one switch: ~16 GB
    N = 1000
    arcs = 2 * (2 * N + N * (N - 1) + N)
    with pytest.raises(cost.CostLimit, match="limit"):
        cost.check_flow_rows("switch removal", N, arcs)
    cost.check_flow_rows("switch removal", 64, 2 * (2 * 64 + 64 * 63 + 64))  # small: fine


def test_schedule_size_limit_names_the_limit():
    with pytest.raises(cost.CostLimit, match=r"4\.29e\+09 tree edges \(limit 2e\+07\)"):
        cost.check_schedule_size(65536)
    cost.check_schedule_size(4096)  # the largest measured full schedule stays allowed
