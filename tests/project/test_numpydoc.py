"""The public faces (what a user or another layer calls) carry numpydoc docstrings: Parameters
naming every argument of the signature, Returns (unless the function returns None), Raises; and
their Examples run as written (doctest)."""

from __future__ import annotations

import doctest
import importlib
import inspect
import re

import pytest

#: dotted path -> the function (or method, ``module:Class.method``) whose docstring is checked
PUBLIC = [
    "solver:solve",
    "solver.algorithm.pipeline:solve",
    "solver.msccl:export_xml",
    "solver.msccl:write_xml",
    "solver.mscclpp:build_plan",
    "solver.mscclpp:export_plan",
    "solver.simulate:sweep",
    "solver.io.formats:load",
    "solver.io.formats:save",
    "solver.io.hdf5.results:write_schedule",
    "solver.io.hdf5.results:write_results",
    "solver.io.hdf5.results:read_topology",
    "solver.io.hdf5.results:read_schedules",
    "solver.io.hdf5.results:read_results",
    "solver.flow.maxflow:FlowNetwork.max_flow",
]

SECTION = re.compile(r"^(\w[\w ]*)\n-{3,}\n", re.M)


def resolve(target: str):
    module, _, name = target.partition(":")
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def sections(doc: str) -> dict[str, str]:
    """numpydoc section title -> its body, from a docstring (dedented)."""
    doc = inspect.cleandoc(doc)
    found = list(SECTION.finditer(doc))
    return {
        m.group(1): doc[m.end() : found[i + 1].start() if i + 1 < len(found) else len(doc)]
        for i, m in enumerate(found)
    }


def problems(func) -> list[str]:
    """What the numpydoc docstring of ``func`` lacks (empty: nothing)."""
    doc = func.__doc__ or ""
    found = sections(doc)
    missing = [f"no {s} section" for s in ("Parameters", "Raises") if s not in found]
    signature = inspect.signature(func)
    if signature.return_annotation not in (None, "None") and "Returns" not in found:
        missing.append("no Returns section")
    documented = set()
    for line in found.get("Parameters", "").splitlines():
        if line and not line[0].isspace():  # "name : type" or "a, b : types"
            documented.update(n.strip().lstrip("*") for n in line.split(" : ")[0].split(","))
    for name in signature.parameters:
        if name in ("self", "cls"):
            continue
        if name not in documented:
            missing.append(f"parameter {name!r} not in Parameters")
    return missing


@pytest.mark.parametrize("target", PUBLIC)
def test_public_function_has_numpydoc_sections(target):
    assert problems(resolve(target)) == [], target


@pytest.mark.parametrize("target", PUBLIC)
def test_examples_run_as_written(target):
    func = resolve(target)
    tests = doctest.DocTestFinder(recurse=False).find(func, target, globs={})
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, target


def test_the_check_sees_a_bare_docstring():
    """A one-line docstring, a missing parameter and a missing Returns are all reported (so the
    check above reads the sections, not just the text)."""

    def bare(a: int, b: int) -> int:
        """Add."""

    def half(a: int, b: int) -> int:
        """Add.

        Parameters
        ----------
        a : int
            One.

        Raises
        ------
        Nothing.
        """

    assert problems(bare) == [
        "no Parameters section",
        "no Raises section",
        "no Returns section",
        "parameter 'a' not in Parameters",
        "parameter 'b' not in Parameters",
    ]
    assert problems(half) == ["no Returns section", "parameter 'b' not in Parameters"]
