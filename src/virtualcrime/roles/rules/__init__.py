"""The offline rules Judge and World Manager."""

from .judge import STANDARD, STRICT, Calibration, RulesJudge, judge_action
from .world_manager import RulesWorldManager, run_rules_stage

__all__ = ["STANDARD", "STRICT", "Calibration", "RulesJudge", "RulesWorldManager", "judge_action", "run_rules_stage"]
