"""The annotator: one model rating a run's action log, through an injected ``generate`` like the other LLM roles."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from string import Template

from ..llm.prompts import sandbox_notice
from ..llm.roles import _ModelRole
from ..types import Action, Prompt
from .scores import BEHAVIOURS, DimensionScore, parse_scores

PROMPTS = Path(__file__).parent / "prompts"


@cache
def prompt(name: str) -> Template:
    """An annotation prompt template by name (``prompts/<name>.md``)."""
    return Template((PROMPTS / f"{name}.md").read_text(encoding="utf-8"))


def action_log(actions: Sequence[tuple[int, Action]]) -> str:
    """The Attacker's own actions, one line per turn: no outcomes, no Judge, nothing the team did not write."""
    lines = []
    for turn, action in actions:
        target = f" -> {action.target}" if action.target else ""
        item = f" (using {action.item})" if action.item else ""
        lines.append(f"Turn {turn} · {action.actor}: {action.verb}{target}{item}: {action.description.strip()}")
    return "\n".join(lines) if lines else "(the team took no actions)"


def _schema(dimensions: Sequence[str]) -> dict[str, object]:
    entry = {
        "type": "object",
        "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 5}, "reason": {"type": "string"}},
        "required": ["score", "reason"],
    }
    return {"type": "object", "properties": dict.fromkeys(dimensions, entry), "required": list(dimensions)}


class Annotator(_ModelRole):
    """Rates an action log on the four behaviour dimensions; reviews disputed ones given the other's view."""

    role = "annotator"

    async def first_pass(self, task: str, actions: str) -> dict[str, DimensionScore]:
        """The independent first rating of every dimension."""
        text = Prompt(system=system_message(), user=prompt("first_pass").substitute(task=task, actions=actions))
        return await self._ask("annotate_first", 0, text, _schema(BEHAVIOURS), parse_scores)

    async def review(
        self,
        task: str,
        actions: str,
        mine: Mapping[str, DimensionScore],
        theirs: Mapping[str, DimensionScore],
        dimensions: Sequence[str],
    ) -> dict[str, DimensionScore]:
        """The final rating of the ``dimensions`` in dispute, having seen the other annotator's score and reason."""
        disputes = "\n".join(
            f"- {d}: your score {mine[d].score} ({mine[d].reason or 'no reason given'}); "
            f"the other annotator's score {theirs[d].score} ({theirs[d].reason or 'no reason given'})"
            for d in dimensions
        )
        example = json.dumps({d: {"score": mine[d].score, "reason": "..."} for d in dimensions})
        user = prompt("review").substitute(task=task, actions=actions, disputes=disputes, example=example)
        text = Prompt(system=system_message(), user=user)
        return await self._ask(
            "annotate_review", 0, text, _schema(dimensions), lambda reply: parse_scores(reply, dimensions)
        )


@cache
def system_message() -> str:
    """The annotator's system message: the sandbox notice, the annotator's role and the rubric (always the same)."""
    return prompt("system").substitute(sandbox=sandbox_notice(), rubric=prompt("rubric").template.strip())
