"""``forestcoll convert IN OUT``: translate a fabric between file formats (picked by extension)."""

from __future__ import annotations

from ..errors import TopologyError
from ._common import add_command
from .info import add_fabric_options, load_fabric


def register(subparsers):
    parser = add_command(
        subparsers,
        "convert",
        "convert a fabric between v1 JSON, node-link JSON, GraphML and NCCL XML (import)",
        "Read IN and write OUT, each in the format its extension names: .json (v1),\n"
        ".nodelink.json (networkx node-link), .graphml (GraphML), .xml (NCCL topology dump,\n"
        "input only). Bandwidths stay exact. An NCCL dump describes one box: --boxes N\n"
        "replicates it and joins the NICs with --fabric ib (one IB switch) or rail (one switch\n"
        "per NIC index). OUT is written atomically (replaced if it exists).",
        "forestcoll convert nccl_topo.xml fabric.json --boxes 4 --fabric ib",
    )
    parser.add_argument("input", metavar="IN", help="fabric file to read")
    parser.add_argument(
        "output", metavar="OUT", help="file to write (.json, .nodelink.json, .graphml)"
    )
    add_fabric_options(parser)
    parser.set_defaults(func=run)
    return parser


def run(args) -> int:
    from ..formats import format_for, save

    out_format = format_for(args.output)
    if out_format == "nccl-xml":
        raise TopologyError(
            f"{args.output}: cannot write NCCL XML (import only); use .json, .nodelink.json or .graphml"
        )
    topo = load_fabric(args.input, args)
    try:
        save(topo, args.output)
    except OSError as exc:
        raise TopologyError(f"{args.output}: cannot write: {exc.strerror or exc}") from None
    print(
        f"wrote {args.output} ({out_format}): {len(topo.compute_ids)} compute nodes, "
        f"{len(topo.switch_ids)} switches, {len(topo.links)} links"
    )
    return 0
