"""`ruff check` passes on the repository with the rules of pyproject.toml's [tool.ruff.lint]."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _ruff(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", *args],
        cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=300,
    )


def test_ruff_check_passes():
    run = _ruff(".")
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_rules_are_the_projects():
    """An unused import, an unsorted import block and a late-bound loop variable are caught in
    solver/ (so the check above runs the selected rules, not ruff's defaults or none)."""
    probe = (
        "import sys\nimport os\n\n\ndef f():\n    fns = []\n    for i in range(3):\n"
        "        fns.append(lambda: i)\n    return fns, sys.argv\n"
    )
    run = _ruff("--stdin-filename", "solver/lint_probe.py", "-", stdin=probe)
    assert run.returncode == 1, run.stdout + run.stderr
    for code in ("F401", "I001", "B023"):
        assert code in run.stdout, (code, run.stdout)
