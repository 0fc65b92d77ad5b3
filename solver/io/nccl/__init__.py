"""NCCL/RCCL topology dumps: the importer (:mod:`~solver.io.nccl.topo_xml`), the runtimes'
bandwidth rules it follows (:mod:`~solver.io.nccl.rates`) and the options a user gives it that the
dump does not say (:mod:`~solver.io.nccl.options`).
"""
