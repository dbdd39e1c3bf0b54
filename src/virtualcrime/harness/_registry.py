"""Inspect entry point: registers the VirtualCrime tasks and the ``virtualcrime/...`` and ``human/...`` models."""

from .human import human_models, virtualcrime_human
from .providers import virtualcrime_models
from .task import virtualcrime

__all__ = ["human_models", "virtualcrime", "virtualcrime_human", "virtualcrime_models"]
