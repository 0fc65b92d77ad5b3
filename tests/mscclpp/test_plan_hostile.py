"""check-plan on hostile edits of a real MSCCL++ plan: one `error:` line (exit 2) or a pass
(exit 0), never a traceback or a hang, in bounded time."""

from __future__ import annotations

import json
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.cli import main

REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "mscclpp" / "allreduce.json"
SEED = json.loads(REAL.read_text())
HOSTILE = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 1, -1, 2**32, 2**31 - 1, 2**64, 10**9]),
    st.booleans(),
    st.none(),
    st.text(max_size=8),
    st.just([]),
    st.just({}),
    st.floats(allow_nan=False),
    st.lists(st.integers(-3, 40), max_size=4),
)


def _paths(doc, prefix=()):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield prefix + (i,)
            yield from _paths(v, prefix + (i,))


PATHS = list(_paths(SEED))


def _edit(doc, path, value, delete):
    node = doc
    for p in path[:-1]:
        node = node[p]
    if delete and isinstance(node, dict):
        del node[path[-1]]
    else:
        node[path[-1]] = value


@settings(
    max_examples=int(__import__("os").environ.get("FC_PLAN_FUZZ", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    edits=st.lists(
        st.tuples(st.sampled_from(PATHS), HOSTILE, st.booleans()), min_size=1, max_size=3
    )
)
def test_hostile_edits(tmp_path_factory, edits):
    doc = json.loads(json.dumps(SEED))
    for path, value, delete in edits:
        try:
            _edit(doc, path, value, delete)
        except (KeyError, IndexError, TypeError):
            pass  # an earlier edit removed the path
    path = tmp_path_factory.mktemp("p") / "plan.json"
    path.write_text(json.dumps(doc))
    import io
    from contextlib import redirect_stderr, redirect_stdout

    out, err = io.StringIO(), io.StringIO()
    t0 = time.perf_counter()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["check-plan", str(path)])
    assert time.perf_counter() - t0 < 10
    assert code in (0, 2)
    if code == 2:
        lines = err.getvalue().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), err.getvalue()
    assert "Traceback" not in err.getvalue()


def test_huge_chunk_counts_are_refused_before_allocating(tmp_path, capsys):
    doc = json.loads(json.dumps(SEED))
    for g in doc["gpus"]:
        g["input_chunks"] = g["output_chunks"] = 2**32 - 1
    path = tmp_path / "big.json"
    path.write_text(json.dumps(doc))
    assert main(["check-plan", str(path)]) == 2
    assert "more than the symbolic execution holds" in capsys.readouterr().err


def test_not_json_and_missing_file(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text("{nope")
    assert main(["check-plan", str(bad)]) == 2
    assert "not JSON" in capsys.readouterr().err
    assert main(["check-plan", str(tmp_path / "missing.json")]) == 2
    assert capsys.readouterr().err.startswith("error: ")
