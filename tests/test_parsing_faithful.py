"""Replies are read faithfully: every change the parser makes is a recorded repair, every reply whose meaning a
repair would change is rejected (and so asked again), and the limits are the models' own.

Each test is a reply a real provider sends: a reasoning model's think block holding a draft, a verdict cut
off by the token limit, booleans and strings where numbers belong, an over-long rationale, and so on.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from virtualcrime.roles.llm import parsing
from virtualcrime.roles.llm.parsing import ModelOutputError, parse_action, parse_plan, parse_stage, parse_verdict
from virtualcrime.roles.types import Action, Outcome, OutcomeCategory, PlanUpdate, Rating, StageResult, Verdict
from virtualcrime.world.ops import AppendHistory

DIMS = ("existence", "physical", "method", "logical_consistency", "safety", "skill", "relationship", "objectivity")
MEMBERS = ["boss", "finch", "moss"]
IDS = [*MEMBERS, "back_alley", "kitchen", "staff_door", "guard_roth"]


def model_limit(model: type[BaseModel], field: str, name: str = "max_length") -> Any:
    """A Field constraint read from the model itself, so that no test repeats a limit as a literal."""
    return next(getattr(m, name) for m in model.model_fields[field].metadata if getattr(m, name, None) is not None)


def judge_reply(outcomes: list[dict[str, Any]], **changes: Any) -> str:
    data: dict[str, Any] = {
        "feasibility": {d: {"score": 4, "reason": "Nothing stands in the way."} for d in DIMS},
        "risky": True,
        "outcomes": outcomes,
        "rationale": "Roth is asleep in the break room; the staff door is unlocked.",
    }
    data.update(changes)
    return json.dumps(data, indent=2)


SNEAK_IN = [
    {"category": "success", "description": "Finch slips in unseen.", "probability": 0.3, "catastrophic": False},
    {"category": "failure", "description": "The door sticks.", "probability": 0.7, "catastrophic": False},
]
ARREST = [
    {"category": "failure_with_consequence", "description": "Roth arrests Finch.", "probability": 1.0,
     "catastrophic": True},
]  # fmt: skip
ACTION = {"verb": "move", "description": "Finch walks to the back alley.", "actor": "finch", "target": "back_alley",
          "minutes": 4}  # fmt: skip


def act(reply: str) -> tuple[Action, list[str]]:
    return parse_action(reply, members=MEMBERS, known_ids=IDS)


def action_reply(**changes: Any) -> str:
    return json.dumps({**ACTION, **changes})


def rejected(parse: Any, reply: str) -> str:
    with pytest.raises(ModelOutputError) as caught:
        parse(reply)
    return str(caught.value)


# 1. Reasoning blocks ------------------------------------------------------------------------------------------


def test_a_reasoning_models_draft_is_never_used_the_answer_after_it_is() -> None:
    reply = (
        "<think>\nFinch tries the staff door while Roth is nearby. First draft:\n"
        + judge_reply(ARREST)
        + "\nWait: Roth is asleep in the break room, so being caught is unlikely. Revise.\n</think>\n\n"
        + judge_reply(SNEAK_IN)
    )
    verdict, repairs = parse_verdict(reply)
    assert [o.category for o in verdict.outcomes] == [OutcomeCategory.SUCCESS, OutcomeCategory.FAILURE]
    assert not any(o.catastrophic for o in verdict.outcomes)
    assert any("reasoning block" in r for r in repairs)


def test_each_call_ignores_the_draft_in_its_reasoning_block() -> None:
    draft = '{"verb": "attack", "description": "Finch hits Roth.", "actor": "finch", "target": "guard_roth"}'
    action, _ = act(f"<thinking>Maybe {draft}? No, too loud.</thinking>\n{action_reply()}")
    assert action.verb == "move"
    plan, _ = parse_plan('<think>{"memory": "draft", "plan": "draft"}</think>{"memory": "m", "plan": "p"}')
    assert plan.memory == "m"
    stage, _ = parse_stage('<reasoning>{"ops": [{"op": "set_alarm"}]}</reasoning>{"ops": [], "note": "quiet"}', "npcs")
    assert stage.ops == []


def test_a_reply_cut_off_inside_its_reasoning_has_no_answer_and_is_rejected() -> None:
    reply = "<think>\nFinch tries the staff door. Draft:\n" + judge_reply(ARREST) + "\nHmm, but is Roth awake? If"
    assert "cut off" in rejected(parse_verdict, reply)


def test_json_in_a_code_fence_after_the_reasoning_block_is_read() -> None:
    draft = f"<think>Draft:\n```json\n{judge_reply(ARREST)}\n```\nRoth is asleep, though.</think>\n"
    reply = f"{draft}Here is my verdict:\n```json\n{judge_reply(SNEAK_IN)}\n```"
    verdict, repairs = parse_verdict(reply)
    assert verdict.outcomes[0].category is OutcomeCategory.SUCCESS
    assert "took the JSON from a code fence" in repairs


def test_reasoning_whose_opening_tag_was_in_the_prompt_is_ignored() -> None:
    # Chat templates that open the <think> block for the model: the reply starts inside it.
    reply = f"Finch tries the door. Draft: {judge_reply(ARREST)}\nNo, Roth sleeps.\n</think>\n\n{judge_reply(SNEAK_IN)}"
    verdict, repairs = parse_verdict(reply)
    assert verdict.outcomes[0].category is OutcomeCategory.SUCCESS and repairs


# 2. Truncation ------------------------------------------------------------------------------------------------


def test_a_verdict_cut_off_between_outcomes_is_rejected_not_made_certain() -> None:
    full = judge_reply(SNEAK_IN)
    cut = full[: full.rindex("{", 0, full.index('"category": "failure"'))]  # max_tokens hit after the first outcome
    assert cut.rstrip().endswith("},")  # closing it would read success 0.3 alone, renormalised to certainty
    assert rejected(parse_verdict, cut).startswith("the reply was cut off")


def test_an_action_or_stage_cut_off_is_rejected() -> None:
    assert "cut off" in rejected(act, action_reply(minutes=15)[:-2])  # "minutes": 1 (of 15)
    ops = '{"ops": [{"op": "advance_clock", "minutes": 5}, {"op": "set_alarm", "ringing": tr'
    assert "cut off" in rejected(lambda r: parse_stage(r, "events"), ops)


def test_a_plan_cut_off_inside_its_text_is_closed_as_a_recorded_repair() -> None:
    plan, repairs = parse_plan('{"memory": "Keycard in the staff lockers.", "plan": "Fetch the keycard, then the')
    assert plan.plan == "Fetch the keycard, then the" and any("cut off" in r for r in repairs)
    assert "cut off" in rejected(parse_plan, '{"memory": "Keycard in the staff lockers.", "pla')
    assert "cut off" in rejected(parse_plan, '{"plan": "Scout.", "memory": ["keycard in lockers", "van at')


# 3. Types -----------------------------------------------------------------------------------------------------


def test_booleans_are_never_numbers() -> None:
    assert "minutes" in rejected(act, action_reply(minutes=True))
    scores = {d: {"score": 4, "reason": "fine"} for d in DIMS} | {"skill": {"score": True, "reason": "easy"}}
    assert "score" in rejected(parse_verdict, judge_reply(SNEAK_IN, feasibility=scores))
    certain = [{"category": "success", "description": "In.", "probability": True, "catastrophic": False}]
    assert "probability" in rejected(parse_verdict, judge_reply(certain))


def test_numeric_strings_are_read_as_numbers_as_a_recorded_repair() -> None:
    quoted = [{**SNEAK_IN[0], "probability": "0.3"}, SNEAK_IN[1]]
    verdict, repairs = parse_verdict(judge_reply(quoted))
    assert verdict.outcomes[0].probability == pytest.approx(0.3)
    assert "read outcome 0 probability '0.3' as a number" in repairs
    action, repairs = act(action_reply(minutes=" 4 "))
    assert action.minutes == 4 and "read minutes ' 4 ' as a number" in repairs


def test_a_fractional_score_is_rejected_and_a_whole_float_is_recorded() -> None:
    def scores(skill: float) -> dict[str, Any]:
        return {d: {"score": 4, "reason": "fine"} for d in DIMS} | {"skill": {"score": skill, "reason": "so-so"}}

    assert "whole number" in rejected(parse_verdict, judge_reply(SNEAK_IN, feasibility=scores(3.5)))
    verdict, repairs = parse_verdict(judge_reply(SNEAK_IN, feasibility=scores(4.0)))
    assert verdict.feasibility.skill.score == 4 and any("4.0" in r for r in repairs)


def test_fractional_minutes_are_rounded_to_a_whole_minute_as_a_recorded_repair() -> None:
    action, repairs = act(action_reply(minutes=4.5))
    assert action.minutes == 5 and "rounded minutes 4.5 to 5" in repairs


def test_a_verdict_without_risky_is_rejected() -> None:
    reply = json.loads(judge_reply(SNEAK_IN))
    del reply["risky"]
    assert "risky" in rejected(parse_verdict, json.dumps(reply))


def test_a_missing_catastrophic_is_the_schema_default_as_a_recorded_repair() -> None:
    verdict, repairs = parse_verdict(
        judge_reply([{k: v for k, v in o.items() if k != "catastrophic"} for o in SNEAK_IN])
    )
    assert not any(o.catastrophic for o in verdict.outcomes)
    assert sum("catastrophic missing" in r for r in repairs) == 2


@pytest.mark.parametrize("probability", ["-0.1", "1.5", "NaN", "Infinity", "1e999"])
def test_probabilities_out_of_range_are_rejected(probability: str) -> None:
    reply = judge_reply([{**SNEAK_IN[0], "probability": 12345}, SNEAK_IN[1]]).replace("12345", probability)
    assert "probability" in rejected(parse_verdict, reply)


def test_probabilities_not_summing_to_one_are_renormalised_as_a_recorded_repair() -> None:
    verdict, repairs = parse_verdict(judge_reply([{**SNEAK_IN[0], "probability": 0.4}, SNEAK_IN[1]]))
    assert sum(o.probability for o in verdict.outcomes) == pytest.approx(1)
    assert any("renormalised" in r for r in repairs)


# 4. Text limits -----------------------------------------------------------------------------------------------


def test_an_over_long_rationale_is_cut_to_the_verdicts_limit_as_a_recorded_repair() -> None:
    limit = model_limit(Verdict, "rationale")
    verdict, repairs = parse_verdict(judge_reply(SNEAK_IN, rationale="Roth is asleep. " * 113))  # 1808 characters
    assert len(verdict.rationale) == limit and f"cut rationale to {limit} characters" in repairs


def test_every_text_is_cut_to_its_models_limit_as_a_recorded_repair() -> None:
    long = "x" * 5000
    plan, repairs = parse_plan(json.dumps({"memory": long, "plan": long}))
    assert len(plan.memory) == model_limit(PlanUpdate, "memory") and len(plan.plan) == model_limit(PlanUpdate, "plan")
    assert len(repairs) == 2
    action, repairs = act(action_reply(description=long))
    assert len(action.description) == model_limit(Action, "description") and len(repairs) == 1
    scores = {d: {"score": 4, "reason": long} for d in DIMS}
    verdict, repairs = parse_verdict(judge_reply([{**SNEAK_IN[0], "probability": 1.0, "description": long}],
                                                 feasibility=scores))  # fmt: skip
    assert len(verdict.feasibility.safety.reason) == model_limit(Rating, "reason")
    assert len(verdict.outcomes[0].description) == model_limit(Outcome, "description")
    assert len(repairs) == len(DIMS) + 1
    stage, repairs = parse_stage(json.dumps({"ops": [], "note": long}), "synthesis")
    assert len(stage.note) == model_limit(StageResult, "note") and len(repairs) == 1


def test_an_operations_over_long_text_is_cut_to_the_operations_limit_not_dropped() -> None:
    op = {"op": "append_history", "subject": "kitchen", "text": "Smoke pours from the fryer. " * 30}
    stage, repairs = parse_stage(json.dumps({"ops": [op], "note": "The fryer catches."}), "direct_effects")
    [kept] = stage.ops
    assert isinstance(kept, AppendHistory) and len(kept.text) == model_limit(AppendHistory, "text")
    assert any("cut op 0" in r for r in repairs)


def test_the_parser_states_no_limit_of_its_own() -> None:
    folder = Path(parsing.__file__).parent
    source = "\n".join(p.read_text() for p in folder.glob("*.py") if p.name in ("parsing.py", "json_repair.py"))
    code = re.sub(r'"""[\s\S]*?"""|#.*', "", source)  # docstrings and comments may name numbers
    assert not re.findall(r"(?<![\w.])(?:4000|2000|1000|1500|600|400|120|4)(?![\w.])", code)


# 5. Aliases and unknown keys ----------------------------------------------------------------------------------


def test_operations_for_ops_is_a_recorded_repair() -> None:
    stage, repairs = parse_stage('{"operations": [{"op": "advance_clock", "minutes": 5}], "note": "n"}', "events")
    assert len(stage.ops) == 1 and "read 'operations' as 'ops'" in repairs


def test_unknown_keys_in_an_action_are_dropped_as_a_recorded_repair() -> None:
    action, repairs = act(action_reply(reasoning="The alley is empty.", confidence=0.9))
    assert action.verb == "move"
    assert any("'reasoning'" in r and "'confidence'" in r for r in repairs)


# 6. One outcome merge -----------------------------------------------------------------------------------------

FIVE = [
    {"category": "success", "description": "Finch is in.", "probability": 0.4, "catastrophic": False},
    {"category": "partial_success", "description": "Half in.", "probability": 0.15, "catastrophic": False},
    {"category": "success_with_complication", "description": "Seen.", "probability": 0.2, "catastrophic": False},
    {"category": "failure", "description": "Door stuck.", "probability": 0.15, "catastrophic": False},
    {"category": "failure_with_consequence", "description": "Arrested.", "probability": 0.1, "catastrophic": True},
]


def test_a_five_outcome_verdict_is_merged_by_the_shared_helper() -> None:
    from virtualcrime.roles.distribution import merge_outcomes, normalise

    verdict, repairs = parse_verdict(judge_reply(FIVE))
    by_category = {o.category.value: o for o in verdict.outcomes}
    assert len(verdict.outcomes) == model_limit(Verdict, "outcomes")
    # the least likely (arrest, 0.1) folds into the likeliest failure, which becomes catastrophic
    assert "failure_with_consequence" not in by_category
    assert by_category["failure"].probability == pytest.approx(0.25) and by_category["failure"].catastrophic
    assert "merged outcome 'failure_with_consequence' into 'failure'" in repairs
    merged, notes = merge_outcomes([Outcome.model_validate(o) for o in FIVE], model_limit(Verdict, "outcomes"))
    assert verdict.outcomes == normalise(merged, digits=None) and set(notes) <= set(repairs)


def test_the_rules_judge_merges_with_the_same_helper_and_keeps_its_distributions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from virtualcrime.roles import distribution as shared
    from virtualcrime.roles.rules import outcomes as rules
    from virtualcrime.scenarios import get_task

    calls: list[int] = []

    def spy(outcomes: list[Outcome], limit: int) -> tuple[list[Outcome], list[str]]:
        calls.append(len(outcomes))
        return shared.merge_outcomes(outcomes, limit)

    monkeypatch.setattr(rules, "merge_outcomes", spy)
    state = get_task("aircraft/hijacking").initial_state()
    move = Action(verb="move", description="", actor="kade", minutes=5)
    result = rules.distribution(state, move, "move", 0.575, 0.125, False)
    assert calls == [4]
    assert [(o.category.value, o.probability) for o in result] == [  # recorded before the merge was shared
        ("success", 0.5031), ("success_with_complication", 0.0719), ("failure", 0.3719),
        ("failure_with_consequence", 0.0531),
    ]  # fmt: skip
    # The five raw outcomes of a partial-effect verb (chance 0.9, risk 0.05): the recorded rules distribution.
    chance, risk, share = 0.9, 0.05, rules.PARTIAL_SHARE
    raw = [
        (OutcomeCategory.PARTIAL_SUCCESS, chance * (1 - risk) * share),
        (OutcomeCategory.SUCCESS, chance * (1 - risk) * (1 - share)),
        (OutcomeCategory.SUCCESS_WITH_COMPLICATION, chance * risk),
        (OutcomeCategory.FAILURE, (1 - chance) * (1 - risk)),
        (OutcomeCategory.FAILURE_WITH_CONSEQUENCE, (1 - chance) * risk),
    ]
    merged, _ = shared.merge_outcomes([Outcome(category=c, probability=p, description="") for c, p in raw], 4)
    assert [(o.category.value, o.probability) for o in rules.normalise(merged)] == [
        ("partial_success", 0.2137), ("success", 0.6413), ("success_with_complication", 0.045), ("failure", 0.1),
    ]  # fmt: skip
