"""The designer's tests mirror its package: ``tests/gui/`` has one folder per folder of
``fc_gui/`` (controllers, model, views) holding the tests, and only shared fixtures at its root."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def packages(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").exists()}


def test_gui_tests_mirror_the_gui_folders():
    gui = ROOT / "tests" / "gui"
    folders = {p.name for p in gui.iterdir() if p.is_dir() and not p.name.startswith("__")}
    assert folders == packages(ROOT / "fc_gui") == {"controllers", "model", "views"}
    assert sorted(p.name for p in gui.glob("test_*.py")) == [], "put GUI tests in a folder"
    for name in folders:
        assert list((gui / name).glob("test_*.py")), f"tests/gui/{name} holds no tests"
