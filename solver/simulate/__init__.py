"""Chunk-level network simulation of collective schedules and baselines (see engine.py)."""
