"""Every ``--json`` output is strict JSON (RFC 8259): no ``NaN``, ``Infinity`` or ``-Infinity``."""

from __future__ import annotations

import json
import math

import pytest

from solver.cli import main
from solver.io import strict_json


def strict_loads(text: str):
    def refuse(constant: str):
        raise ValueError(f"non-standard JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def ring_file(tmp_path):
    path = tmp_path / "ring.json"
    assert main(["convert", "--template", "ring", "--param", "n=4", str(path)]) == 0
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "RING", "--json"],
        ["info", "RING", "--json"],
        # the ring baseline has no route bound on some rows: NaN in Python, null here
        ["simulate", "RING", "--json", "-s", "1M,64M", "-a", "forestcoll,ring,nccl"],
        ["simulate", "RING", "--json", "-s", "1M", "-c", "allreduce"],
        ["study", "failures", "RING", "--workers", "1", "--json"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_json_outputs_are_strict(argv, ring_file, capsys):
    code = main([str(ring_file) if a == "RING" else a for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    strict_loads(out)


def test_non_finite_numbers_become_null():
    doc = {"a": math.nan, "b": [math.inf, -math.inf, 1.5], "c": (2, "x")}
    assert strict_loads(strict_json.dumps(doc)) == {
        "a": None,
        "b": [None, None, 1.5],
        "c": [2, "x"],
    }
    with pytest.raises(ValueError):
        strict_loads(json.dumps({"a": math.nan}))  # what plain json.dumps writes is refused
