"""The front door and the manual: README stays short and its links resolve; the manual in docs/
builds with MkDocs in strict mode (a broken link, image or anchor fails), every page in its nav."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def test_readme_is_a_front_door():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 160
    for target in LINK.findall(text):
        if "://" in target:
            continue
        path = target.split("#")[0]
        assert (ROOT / path).exists(), f"README links to {target}, which does not exist"


def test_every_docs_page_is_in_the_nav():
    nav = set(re.findall(r":\s*(\S+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert nav == pages


def test_the_manual_builds_strictly(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-q",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(tmp_path / "site"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (tmp_path / "site" / "designer" / "index.html").exists()
    assert (tmp_path / "site" / "assets" / "solved.png").exists()
