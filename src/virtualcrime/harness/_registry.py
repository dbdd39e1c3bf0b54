"""Inspect entry point: registers the ``virtualcrime`` task and the ``virtualcrime/...`` models."""

from .providers import virtualcrime_models
from .task import virtualcrime

__all__ = ["virtualcrime", "virtualcrime_models"]
