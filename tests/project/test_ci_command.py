"""`.ci/run` runs exactly README's test command (system deps, install, import contracts, pytest)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ci_runs_readme_test_command():
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    command = ci_lines[-1]
    assert ci_lines[-2] == "# README's test command:"
    assert "lint-imports &&" in command and command.endswith("python3 -m pytest")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"```bash\n{command}\n```" in readme
