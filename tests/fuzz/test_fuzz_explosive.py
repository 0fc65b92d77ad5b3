"""Explosive-but-valid fabrics (issue 21, item 3): each ends in exit 0 with the exact optimum
(checked by the verifier inside ``solve`` and by the figure here) or in exit 2 with one
``error:`` line naming the limit, inside a child process whose memory (address space) and CPU
time are capped (see ``explosive.py``). The up-front estimates are also checked directly: they
refuse before anything of the estimated size is allocated.
"""

from __future__ import annotations

import json
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
    if case.command == "solve" and case.expect == "ok":
        argv.append("--json")
    code, out, err, cpu, rss_kb = run_bounded(argv, tmp_path)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "Traceback" not in err, err[-2000:]
    assert cpu < CPU_LIMIT
    if case.expect == "refused":
        assert code == 2, (code, err[-2000:])
        assert len(lines) == 1 and lines[0].startswith("error: "), err[-2000:]
        assert all(w in lines[0] for w in case.words), lines[0]
        return
    assert code == 0, (code, err[-2000:])
    if case.command == "solve":
        doc = json.loads(out)
        assert Fraction(doc["algbw_exact"]) == case.algbw
        assert Fraction(doc["optimal_algbw_exact"]) == case.algbw
        assert doc["num_trees"] >= doc["num_compute_nodes"]
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
