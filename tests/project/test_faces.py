"""A package's ``__init__`` that is only a face stays one: it names the package's public names
(imports and ``__all__``) and defines nothing itself, in a screenful."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FACES = ["solver/simulate/__init__.py"]


@pytest.mark.parametrize("face", FACES)
def test_face_is_short_and_defines_nothing(face):
    text = (ROOT / face).read_text(encoding="utf-8")
    assert len(text.splitlines()) < 40, face
    tree = ast.parse(text)
    defined = [
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    assert defined == [], (face, defined)


@pytest.mark.parametrize("face", FACES)
def test_every_public_name_is_imported(face):
    """``__all__`` lists only names the face imports (``from x import *`` would hide them)."""
    tree = ast.parse((ROOT / face).read_text(encoding="utf-8"))
    imported = {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    exported = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__"
    )
    assert set(exported) <= imported
    assert "*" not in imported
