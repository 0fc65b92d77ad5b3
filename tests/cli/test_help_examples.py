"""The example at the end of every ``--help`` names input files that exist in the repository, so
it can be copied and run from a checkout."""

from __future__ import annotations

import argparse
import itertools
import shlex
from pathlib import Path

from solver.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]

#: Extensions of fabric/log/XML inputs (results files .h5 are written by an earlier command).
INPUT_EXTENSIONS = (".json", ".xml", ".graphml", ".log")


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def _examples(text: str) -> list[str]:
    if "example:" not in text:
        return []
    tail = text.split("example:", 1)[1]
    return [line.strip() for line in tail.splitlines() if line.strip().startswith("forestcoll ")]


def _inputs(path: tuple[str, ...], tokens: list[str]) -> list[str]:
    """The first positional argument after the command words, and every --topology value."""
    words = tokens[1 + len(path) :]
    found = [v for k, v in itertools.pairwise(words) if k in ("--topology", "-t")]
    positional = [w for w in words if not w.startswith("-")]
    if positional and not any(w.startswith("-") for w in words[: words.index(positional[0])]):
        found.append(positional[0])
    return [f for f in found if f.endswith(INPUT_EXTENSIONS)]


def test_every_help_example_names_existing_input_files():
    checked = 0
    for path, parser in _parsers(build_parser()):
        if not path:
            continue
        for example in _examples(parser.format_help()):
            tokens = shlex.split(example)
            assert tokens[1 : 1 + len(path)] == list(path), example
            for name in _inputs(path, tokens):
                assert (ROOT / name).is_file(), f"forestcoll {' '.join(path)} --help: {name}"
                checked += 1
    assert checked >= 8  # solve, export, simulate, study x2, convert, measure, check-xml, info...


def test_the_solve_example_runs_on_the_named_sample(capsys, monkeypatch):
    from solver.cli import main

    monkeypatch.chdir(ROOT)
    assert main(["solve", "sample_topologies/dgx_a100_2x.json"]) == 0
    out = capsys.readouterr().out
    assert "346.667" in out or "1040/3" in out


def test_every_collective_option_has_the_short_form_c():
    """`-c allreduce` works wherever a command takes --collective (simulate and measure import
    had it, solve/export/study did not: README's tour uses it with export)."""
    with_collective = []
    for path, parser in _parsers(build_parser()):
        for action in parser._actions:
            if "--collective" in action.option_strings:
                with_collective.append(path)
                assert "-c" in action.option_strings, path
    assert {("solve",), ("export",), ("simulate",)} <= set(with_collective)
