"""mypy's errors per file may only go down: a file may not have more errors than
``mypy_baseline.json`` records for it (a file not in it: none), and when a file has fewer, the
baseline must be lowered with it, so that it never creeps back up.

Update after fixing errors: ``python tests/project/test_types.py --update``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASELINE = Path(__file__).with_name("mypy_baseline.json")
ERROR = re.compile(r"^([\w/.-]+\.py):\d+: error: ", re.M)


def mypy_errors() -> Counter:
    """Errors per file of ``mypy`` with the settings of ``[tool.mypy]`` in pyproject.toml."""
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-color-output", "--no-error-summary"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode in (0, 1), run.stderr or run.stdout  # 2: mypy itself failed
    return Counter(ERROR.findall(run.stdout))


def test_type_errors_only_go_down():
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
    found = mypy_errors()
    worse = {f: (n, baseline.get(f, 0)) for f, n in found.items() if n > baseline.get(f, 0)}
    assert not worse, "more mypy errors than the baseline (found, baseline): " + ", ".join(
        f"{f} {n} > {b}" for f, (n, b) in sorted(worse.items())
    )
    better = {f: (found.get(f, 0), b) for f, b in baseline.items() if found.get(f, 0) < b}
    assert not better, (
        "fewer mypy errors than the baseline: lower it with "
        "`python tests/project/test_types.py --update` ("
        + ", ".join(f"{f} {n} < {b}" for f, (n, b) in sorted(better.items()))
        + ")"
    )


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    counts = mypy_errors()
    BASELINE.write_text(json.dumps(dict(sorted(counts.items())), indent=1) + "\n", encoding="utf-8")
    print(f"{sum(counts.values())} errors in {len(counts)} files written to {BASELINE.name}")
