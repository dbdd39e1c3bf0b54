"""The scorer: won / lost / stalled / turn-capped / error, with the run's turn count."""

from __future__ import annotations

from inspect_ai.scorer import Score, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState
from inspect_ai.util import store

from ..runs.store import RESULT_KEY, stored_result


@scorer(metrics={"won": [mean(), stderr()], "turns": [mean()]})
def run_outcome():  # type: ignore[no-untyped-def]
    """Score a run by its end state: ``won`` is 1 for a win (Pass@1 is its mean), ``turns`` the turns played."""

    async def score(state: TaskState, target: Target) -> Score:
        result = stored_result(store().get(RESULT_KEY))
        if result is None:
            return Score(value={"won": 0, "turns": 0}, answer="error", explanation="the run produced no result")
        return Score(
            value={"won": int(result.status.value == "won"), "turns": result.turns},
            answer=result.status.value,
            explanation=result.reason,
            metadata={
                "seed": result.seed,
                "checkpoints_reached": result.checkpoints_reached,
                "critical_failures_reached": result.critical_failures_reached,
            },
        )

    return score
