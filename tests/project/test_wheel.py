"""The wheel a user installs holds the whole program, and the program runs from it alone.

Builds the wheel as a packager would (``python -m build --wheel``, from a copy of the sources so the
checkout gets no ``build/`` folder), checks what is inside, then runs ``forestcoll`` from the unpacked
wheel in a folder outside the checkout: nothing may reach back into the source tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("solver", "fc_gui")


def _sources(root: Path) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for pkg in PACKAGES
        for p in (root / pkg).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in {".pyc", ".nbi", ".nbc"}
    }


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for pkg in PACKAGES:
        shutil.copytree(
            ROOT / pkg, src / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.nb?")
        )
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(out),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (path,) = out.glob("forestcoll_designer-*.whl")
    return path


@pytest.mark.slow
def test_the_wheel_holds_every_package_file_and_nothing_else(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    files = {n for n in names if not n.startswith("forestcoll_designer-")}
    assert files == _sources(ROOT)  # every module and resource; no tests/, benchmarks/, assets/
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(meta).decode()
    requires = [line for line in text.splitlines() if line.startswith("Requires-Dist:")]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = [r for r in requires if "extra ==" not in r]
    assert len(runtime) == len(project["dependencies"])
    entry = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt")))
    assert b"forestcoll = solver.cli:main" in entry and b"gui = fc_gui.cli:register" in entry
    assert wheel.stat().st_size < 2_000_000


@pytest.mark.slow
def test_forestcoll_runs_from_the_unpacked_wheel_outside_the_checkout(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, PYTHONPATH=str(site), QT_QPA_PLATFORM="offscreen")

    def forestcoll(*argv: str) -> str:
        code = "import sys, solver.cli; sys.exit(solver.cli.main(sys.argv[1:]))"
        proc = subprocess.run(
            [sys.executable, "-c", code, *argv],
            capture_output=True,
            text=True,
            cwd=work,
            env=env,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout

    where = subprocess.run(
        [sys.executable, "-c", "import solver, fc_gui; print(solver.__file__, fc_gui.__file__)"],
        capture_output=True,
        text=True,
        cwd=work,
        env=env,
        check=True,
    ).stdout.split()
    assert all(Path(p).is_relative_to(site) for p in where), where
    assert "COMMAND" in forestcoll("--help")
    assert "dgx_h100_rail:" in forestcoll("convert", "--list-templates")
    forestcoll("convert", "--template", "ring", "--param", "n=6", "ring.json")
    assert "verified:   yes" in forestcoll("solve", "ring.json")
    # the designer on its built-in default fabric, solved, drawn to a figure
    forestcoll("gui", "--solve", "--figure", "out.svg")
    svg = (work / "out.svg").read_text()
    assert "Bottleneck cut" in svg and "2x DGX A100" in svg
