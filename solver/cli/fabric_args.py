"""The one way every subcommand loads a fabric file, with the NCCL/RCCL dump options.

``add_fabric_options(parser)`` adds ``--boxes``, ``--fabric``, ``--intra`` and the per-class
bandwidth overrides (``--nvlink-bw`` ...); ``load_fabric(path, args)`` reads the file with them.
They apply to NCCL/RCCL ``.xml`` dumps only; giving one for another format is an error.
"""

from __future__ import annotations

from solver.io.nccl_options import OVERRIDE_CLASSES
from solver.model.errors import TopologyError
from solver.model.topology import Topology


def add_fabric_options(parser) -> None:
    """Options for NCCL/RCCL topology dumps (ignored by nothing: an error for other formats)."""
    group = parser.add_argument_group("NCCL/RCCL topology dumps (.xml)")
    group.add_argument(
        "--boxes",
        type=int,
        default=1,
        metavar="N",
        help="repeat the dump N times (default 1); each host_hash of the dump is one box",
    )
    group.add_argument(
        "--fabric",
        choices=("ib", "rail"),
        default="ib",
        help="how several boxes are joined through their NICs: one IB switch (ib, default) or "
        "one switch per NIC index (rail)",
    )
    group.add_argument(
        "--intra",
        metavar="KIND:GBPS",
        help="skeleton dumps (PCI devices only): the GPU-to-GPU fabric of each box, "
        "nvswitch:GBPS (every GPU to one switch), mesh:GBPS (every GPU pair) or none; "
        "presets nvswitch:a100|h100|b200, mesh:mi300x",
    )
    for cls, meaning in OVERRIDE_CLASSES.items():
        group.add_argument(
            f"--{cls}-bw",
            metavar="GBPS",
            help=f"override the runtime's {cls} bandwidth: GB/s {meaning}",
        )


def _xml_options(args) -> dict[str, object]:
    bandwidth = {cls: getattr(args, f"{cls}_bw", None) for cls in OVERRIDE_CLASSES}
    return {
        "boxes": args.boxes,
        "fabric": args.fabric,
        "intra": args.intra,
        "bandwidth": {k: v for k, v in bandwidth.items() if v is not None},
    }


def load_fabric(path: str, args, *, check: bool = True) -> Topology:
    """Load ``path`` with the dump options of ``args`` (see :func:`add_fabric_options`)."""
    from solver.io.formats import format_for, load

    options = _xml_options(args)
    if format_for(path) == "nccl-xml":
        return load(path, check=check, **options)
    given = [f"--{k.replace('_', '-')}" for k in ("boxes",) if options[k] != 1]
    given += ["--intra"] if options["intra"] is not None else []
    given += [f"--{cls}-bw" for cls in options["bandwidth"]]
    if given:
        raise TopologyError(f"{given[0]} applies to NCCL/RCCL .xml dumps only, not {path}")
    return load(path, check=check)
