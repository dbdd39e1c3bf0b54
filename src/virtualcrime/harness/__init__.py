"""Inspect integration: task, solver, scorer, store and the ``virtualcrime/...`` models.

The only package that imports ``inspect_ai``.
"""
