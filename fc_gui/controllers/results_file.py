"""Opening a results file (.h5): its fabric, and the result saved with it, shown as if just solved.

``forestcoll solve -o``, ``forestcoll simulate -o``, ``forestcoll measure import`` and the
designer's Export › Results write the fabric, schedules and result tables into one HDF5 file.
Opening it (File › Open, Open recent, ``forestcoll gui FILE.h5``) loads the fabric and shows the
saved schedule — cut, heat map, trees, summary — with its simulated lines and measurements on the
plot, instead of an empty result on that fabric.

A file that holds only a compressed plan (``forestcoll solve --compressed``, schema 1.2) is shown
expanded into its full schedule when that stays small enough to draw (:data:`PLAN_EXPAND_MAX_N`
compute nodes); a larger plan opens its fabric with a status line naming the plan and the command
that reads it, never a partial forest whose simulation would give wrong numbers. What is shown
is verified against the stored fabric first; a file that fails opens its fabric and a dialog
names the rule the saved result breaks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from solver.model.results import ResultTable
from solver.model.schedule import Schedule

SUFFIXES = (".h5", ".hdf5")

#: largest plan (compute nodes) the designer expands on its GUI thread: 512 GPUs (≈ 2.6·10⁵ tree
#: edges) take ≈ 2.5 s to expand and show; 2048 took 27 s and 2.2 GB, which would freeze the window.
PLAN_EXPAND_MAX_N = 512


def is_results_file(path: str | Path) -> bool:
    return str(path).lower().endswith(SUFFIXES)


@dataclass(frozen=True)
class SavedResult:
    """The schedule a results file holds (None: only a fabric) and its result tables."""

    schedule: Schedule | None
    name: str
    tables: dict[str, ResultTable]
    note: str = ""  # what the designer did with a compressed plan, for the status bar

    def simulated(self) -> dict[str, ResultTable]:
        """The simulator's tables of the shown schedule's collective (``simulate -o``)."""
        collective = self.schedule.collective if self.schedule is not None else None
        return {
            n: t
            for n, t in self.tables.items()
            if t.source == "simulator" and t.collective == collective
        }

    def measured(self) -> dict[str, ResultTable]:
        """Tables with measurements (``measure import``, or the designer's export)."""
        from fc_gui.model.measured import measured_tables

        return measured_tables(self.tables)


def pick_schedule(schedules: dict[str, Schedule]) -> tuple[str, Schedule | None]:
    """The schedule to show: the first without a trees-per-root limit, else the first."""
    for name, s in schedules.items():
        if s.max_trees_per_root is None:
            return name, s
    for name, s in schedules.items():
        return name, s
    return "", None


def read_saved_result(path: str | Path) -> SavedResult:
    """The saved schedule and tables of ``path`` (ForestCollError: one line, if unreadable).

    The schedule or plan shown is verified against the stored fabric first
    (:func:`solver.algorithm.verify_stored.verify_stored`): a forged cut, optimum or tree is
    refused with the verifier's message, never drawn as the saved result."""
    from solver.algorithm.verify_stored import verify_stored
    from solver.io.hdf5 import results as h5

    name, schedule = pick_schedule(h5.read_schedules(path))
    tables = h5.read_results(path)
    if schedule is not None:
        verify_stored(schedule, path, name)
        return SavedResult(schedule, name, tables)
    from solver.io.hdf5.plans import read_plans

    plans = read_plans(path)
    if not plans:
        return SavedResult(None, "", tables)
    name, plan = next(iter(plans.items()))
    verify_stored(plan, path, name)
    n = len(plan.topology.compute_ids)
    if n > PLAN_EXPAND_MAX_N:
        return SavedResult(
            None,
            "",
            tables,
            note=(
                f"compressed plan {name!r} for {n} GPUs ({plan.num_trees} trees) not drawn: the "
                f"designer expands plans up to {PLAN_EXPAND_MAX_N} GPUs; read it with "
                f"'forestcoll show {Path(path).name} --verify'"
            ),
        )
    return SavedResult(
        plan.expand(),
        name,
        tables,
        note=f"compressed plan {name!r} expanded to {plan.num_trees} trees",
    )


def show_saved_result(controller, saved: SavedResult) -> int:
    """Show ``saved`` on ``controller`` (a ResultsController whose document holds its fabric);
    returns how many lines it added to the plot."""
    from fc_gui.controllers.solve_jobs import prepare_display

    added = 0
    schedule = saved.schedule
    if schedule is not None:
        controller.panel.set_collective(schedule.collective)
        controller.state.set_previous(None)
        controller.show_schedule(schedule, prepared=prepare_display(schedule))
        added += controller.simulation.show_saved(schedule, saved.simulated())
    return added + controller.measurements.add(saved.measured())
