"""README's "Code map" names every subpackage of solver/ and fc_gui/, and only those."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _code_map() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- section: code-map -->(.*?)<!-- /section: code-map -->", readme, re.S)
    assert match, "README has no code-map section"
    return match.group(1)


def test_code_map_lists_every_subpackage():
    listed = set(re.findall(r"^- `((?:solver|fc_gui)/(?:\w+/)?)`", _code_map(), re.M))
    packages = {"fc_gui/"} | {
        f"{init.parent.relative_to(ROOT).as_posix()}/"
        for top in ("solver", "fc_gui")
        for init in (ROOT / top).glob("*/__init__.py")
    }
    assert listed == packages


def test_code_map_paths_exist():
    for path in re.findall(r"`((?:solver|fc_gui|tests)/[\w/.]*)`", _code_map()):
        assert (ROOT / path).exists(), path
