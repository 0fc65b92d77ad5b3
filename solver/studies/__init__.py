"""Design studies: many exact optima of modified fabrics, run on Dask (pure, no Qt).

- :func:`failure_plan`: N-1 resilience (each link, switch, NIC or compute node removed).
- :func:`upgrade_plan`: the optimum after upgrading each link or class of links.
- :func:`sweep_plan`: a template over a parameter grid, or a folder of fabrics.
- :class:`DaskEngine` + :func:`run_study`: run a plan on a local cluster or a scheduler,
  streaming rows into ``/studies/<name>`` of a results file (:mod:`solver.io.hdf5.studies`).
"""

from solver.studies.engine import DaskEngine, EngineError
from solver.studies.plans import StudyPlan, failure_plan, parse_param, sweep_plan, upgrade_plan
from solver.studies.runner import StudyResult, default_name, run_study

__all__ = [
    "DaskEngine",
    "EngineError",
    "StudyPlan",
    "StudyResult",
    "default_name",
    "failure_plan",
    "parse_param",
    "run_study",
    "sweep_plan",
    "upgrade_plan",
]
