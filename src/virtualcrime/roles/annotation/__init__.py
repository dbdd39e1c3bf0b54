"""Behaviour annotation: an annotator model rates the Attacker's own actions on four dimensions (DESIGN.md),
independently first, then once more on the dimensions where two annotators disagreed."""

from .annotator import Annotator, action_log
from .scores import BEHAVIOURS, DimensionScore, Reconciled, parse_scores, reconcile

__all__ = ["BEHAVIOURS", "Annotator", "DimensionScore", "Reconciled", "action_log", "parse_scores", "reconcile"]
