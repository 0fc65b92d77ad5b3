"""`ruff check` passes on the repository with the rules of pyproject.toml's [tool.ruff.lint], and
`ruff format --check` finds nothing to reformat (line length of [tool.ruff])."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _ruff(
    *args: str, stdin: str | None = None, command: str = "check"
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", command, "--no-cache", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
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


def test_ruff_format_finds_nothing_to_change():
    run = _ruff("--check", ".", command="format")
    assert run.returncode == 0, "run `ruff format .`:\n" + run.stdout + run.stderr


def test_the_format_check_sees_a_badly_formatted_file():
    """A file ruff would reformat is reported (so the check above really formats, with the
    project's settings)."""
    probe = "def f( a,b ):\n  return {'a':a,'b':b}\n"
    run = _ruff(
        "--check", "--stdin-filename", "solver/format_probe.py", "-", stdin=probe, command="format"
    )
    assert run.returncode == 1, run.stdout + run.stderr
