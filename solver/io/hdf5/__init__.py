"""The HDF5 results file: :mod:`~solver.io.hdf5.results` (fabric, schedules, result tables),
:mod:`~solver.io.hdf5.plans` (compressed plans), :mod:`~solver.io.hdf5.studies` (design-study
rows), the parts they share (:mod:`~solver.io.hdf5.toolkit`) and the structure audit that runs
before anything is read (:mod:`~solver.io.hdf5.audit`).
"""
