"""The ForestColl steps, in order: optimum -> balance -> splitting -> packing -> paths
(:mod:`~solver.algorithm.pipeline` runs them; :mod:`~solver.algorithm.fixed_k` bounds the trees per
root), and :mod:`~solver.algorithm.verify`, the independent exact checker of a schedule.
"""
