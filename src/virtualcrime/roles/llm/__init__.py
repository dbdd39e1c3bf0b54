"""LLM-backed roles: prompt templates, structured-output parsing with recorded repairs, retry with feedback."""

from .parsing import ModelOutputError, extract_json, parse_action, parse_plan, parse_stage, parse_verdict
from .roles import Generate, LLMAttacker, LLMJudge, LLMWorldManager

__all__ = [
    "Generate",
    "LLMAttacker",
    "LLMJudge",
    "LLMWorldManager",
    "ModelOutputError",
    "extract_json",
    "parse_action",
    "parse_plan",
    "parse_stage",
    "parse_verdict",
]
