"""``forestcoll convert IN OUT``: translate a fabric between file formats (picked by extension).

``forestcoll convert --template NAME [--param KEY=VALUE ...] OUT`` writes a built-in template
instead of reading a file; ``--list-templates`` shows the templates and their parameters.
"""

from __future__ import annotations

from solver.cli._common import add_command, add_fabric_options, load_fabric
from solver.model.errors import TopologyError
from solver.model.values import printable


def register(subparsers):
    parser = add_command(
        subparsers,
        "convert",
        "convert a fabric between v1 JSON, node-link JSON, GraphML and NCCL XML (import)",
        "Read IN and write OUT, each in the format its extension names: .json (v1),\n"
        ".nodelink.json (networkx node-link), .graphml (GraphML), .xml (NCCL topology dump,\n"
        "input only). Bandwidths stay exact. An NCCL dump describes one box: --boxes N\n"
        "replicates it and joins the NICs with --fabric ib (one IB switch) or rail (one switch\n"
        "per NIC index). OUT is written atomically (replaced if it exists).\n"
        "With --template NAME only OUT is given: the built-in template is written, with\n"
        "--param KEY=VALUE for its parameters (see --list-templates).",
        "forestcoll convert tests/data/dgx_a100_nccl_topo.xml fabric.json --boxes 4 --fabric ib\n"
        "  forestcoll convert --template dgx_h100_rail --param n=16 h100x16.json",
    )
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="IN OUT",
        help="fabric file to read and file to write (.json, .nodelink.json, .graphml); "
        "only OUT with --template",
    )
    parser.add_argument("--template", metavar="NAME", help="write built-in template NAME")
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a template parameter (repeatable), e.g. --param n=4",
    )
    parser.add_argument(
        "--list-templates", action="store_true", help="list the templates and their parameters"
    )
    add_fabric_options(parser)
    parser.set_defaults(func=run)
    return parser


def list_templates() -> str:
    from solver.io.templates import TEMPLATES

    lines = []
    for name, spec in TEMPLATES.items():
        lines.append(f"{name}: {spec.title} - {spec.description}")
        for p in spec.params:
            top = "" if p.max is None else f"..{p.max}"
            lines.append(f"    {p.name}={p.default}  ({p.label}; {p.type.__name__} {p.min}{top})")
    return "\n".join(lines)


def _template_values(pairs: list[str]) -> dict[str, object]:
    values: dict[str, object] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise TopologyError(f"--param must look like KEY=VALUE, got {pair!r}")
        text = text.strip()
        try:
            value: object = int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                raise TopologyError(f"--param {key}: {text!r} is not a number") from None
        values[key.strip()] = value
    return values


def run(args) -> int:
    from solver.io.formats import format_for, save

    if args.list_templates:
        print(list_templates())
        return 0
    wanted = 1 if args.template else 2
    if len(args.paths) != wanted:
        usage = "OUT (with --template)" if args.template else "IN OUT"
        raise TopologyError(f"convert needs {usage}, got {len(args.paths)} path(s)")
    if args.param and not args.template:
        raise TopologyError("--param applies to --template only")
    output = args.paths[-1]
    out_format = format_for(output)
    if out_format == "nccl-xml":
        raise TopologyError(
            f"{output}: cannot write NCCL XML (import only); use .json, .nodelink.json or .graphml"
        )
    if args.template:
        from solver.io.templates import make

        if args.boxes != 1:
            raise TopologyError("--boxes applies to NCCL XML files; use --param n=N for templates")
        topo = make(args.template, **_template_values(args.param))
    else:
        topo = load_fabric(args.paths[0], args)
    try:
        save(topo, output)
    except OSError as exc:
        raise TopologyError(f"{output}: cannot write: {exc.strerror or exc}") from None
    print(
        f"wrote {printable(str(output))} ({out_format}): {len(topo.compute_ids)} compute nodes, "
        f"{len(topo.switch_ids)} switches, {len(topo.links)} links"
    )
    return 0
