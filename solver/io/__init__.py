"""Files in and out: topology formats (v1, node-link, GraphML, NCCL/RCCL XML), HDF5 results,
atomic file writes and the fabric templates.
"""
