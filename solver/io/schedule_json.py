"""A schedule's JSON document written as a stream: what ``solve --json``, ``solve -o X.json`` and
``export --format json`` write, fast enough for a forest of a million tree edges.

The document is :meth:`solver.model.schedule.Schedule.to_dict`, key for key. The top level is indented
one space per key as before; each tree is one compact line, written as it is formed (never the whole
forest as Python dicts, never Python's pure-Python indenting encoder). At 1024 GPUs (1024 trees,
~1 M edges with paths, ~95 MB) that takes about a second instead of the ~20 s of ``json.dump(...,
indent=1)``. The text is strict JSON (:mod:`solver.io.strict_json`).
"""

from __future__ import annotations

import io
import json
from dataclasses import replace
from typing import IO

from solver.io import strict_json
from solver.model.schedule import Schedule, Tree


def _tree_text(schedule: Schedule, collective: str, tree: Tree, quoted: dict[str, str]) -> str:
    """``json.dumps(schedule.tree_dict(collective, tree))`` (same keys, same order), its edges
    formatted from node names quoted once per document."""
    doc = schedule.tree_dict(collective, replace(tree, edges=()))
    doc["height"] = tree.height
    edges = ", ".join(
        f'{{"src": {quoted[e.src]}, "dst": {quoted[e.dst]}, '
        f'"path": [{", ".join([quoted[v] for v in e.path])}]}}'
        for e in tree.edges
    )
    head, sep, tail = strict_json.dumps(doc).partition('"edges": []')
    assert sep, "tree_dict lost its edges key"
    return f'{head}"edges": [{edges}]{tail}'


def write_schedule_json(schedule: Schedule, stream: IO[str]) -> None:
    """Write ``schedule.to_dict()`` to ``stream`` as strict JSON, streaming the trees."""
    doc = schedule.to_dict(with_trees=False)
    quoted = {n: json.dumps(n) for n in schedule.topology.node_ids}
    stream.write("{")
    for i, (key, value) in enumerate(doc.items()):
        stream.write(f"{',' if i else ''}\n {json.dumps(key)}: ")
        if key != "trees":
            stream.write(strict_json.dumps(value))
            continue
        stream.write("[")
        for j, (collective, tree) in enumerate(schedule.all_trees()):
            stream.write(f"{',' if j else ''}\n  {_tree_text(schedule, collective, tree, quoted)}")
        stream.write("\n ]" if doc["num_trees"] else "]")
    stream.write("\n}\n")


def schedule_json_text(schedule: Schedule) -> str:
    """:func:`write_schedule_json` into a string (for files written atomically)."""
    out = io.StringIO()
    write_schedule_json(schedule, out)
    return out.getvalue()
