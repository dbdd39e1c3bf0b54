"""A corpus of malformed model outputs per role: each is parsed cleanly, repaired with a recorded repair, or
rejected with ModelOutputError — never any other exception."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from virtualcrime.roles.llm.parsing import ModelOutputError, parse_action, parse_plan, parse_stage, parse_verdict

OK, REPAIRED, ERROR = "ok", "repaired", "error"
DIMS = ("existence", "physical", "method", "logical_consistency", "safety", "skill", "relationship", "objectivity")


def wrappers(good: dict[str, Any]) -> list[tuple[str, str]]:
    """The same valid object wrapped the ways models wrap JSON."""
    text = json.dumps(good)
    return [
        (text, OK),
        ("```json\n" + text + "\n```", REPAIRED),
        ("```\n" + text + "\n```", REPAIRED),
        ("Here is my answer:\n" + text, REPAIRED),
        (text + "\nLet me know if you need more.", REPAIRED),
        ("Sure!\n```json\n" + text + "\n```\nDone.", REPAIRED),
        (text[:-1] + ",}", REPAIRED),
        (text[: len(text) // 2], None),  # truncated: closed if possible, else rejected
        ("", ERROR),
        ("   \n ", ERROR),
        ("I cannot help with that.", ERROR),
        ("[" + text + "]", REPAIRED),
        ("{not json at all}", ERROR),
        ("{'single': 'quotes'}", ERROR),
        ("null", ERROR),
    ]


def check(parse: Callable[[str], tuple[Any, list[str]]], text: str, expected: str | None) -> None:
    try:
        _, repairs = parse(text)
    except ModelOutputError:
        assert expected in (ERROR, None), f"rejected but expected {expected}: {text!r}"
        return
    assert expected != ERROR, f"accepted but expected rejection: {text!r}"
    if expected == OK:
        assert repairs == [], repairs
    elif expected == REPAIRED:
        assert repairs, f"no repair recorded for {text!r}"


PLAN = {"memory": "Keycard is in the staff lockers.", "plan": "Fetch the keycard, then the safe."}
PLAN_CASES = [
    *wrappers(PLAN),
    (json.dumps({"memory": "m"}), ERROR),
    (json.dumps({"plan": "p"}), ERROR),
    (json.dumps({"memory": ["a", "b"], "plan": "p"}), REPAIRED),
    (json.dumps({"memory": {"k": "v"}, "plan": "p"}), REPAIRED),
    (json.dumps({"memory": 42, "plan": "p"}), REPAIRED),
    (json.dumps({"memory": "x" * 5000, "plan": "p"}), REPAIRED),
    (json.dumps({"memory": "m", "plan": "y" * 3000}), REPAIRED),
    (json.dumps({"memory": "m", "plan": "p", "extra": 1}), REPAIRED),  # the ignored key is recorded
    (json.dumps({"memory": "", "plan": ""}), OK),
    (json.dumps({"memory": None, "plan": "p"}), ERROR),
    ('{"memory": "line\\nbreak", "plan": "p"}', OK),
    ('{"memory": "unterminated', None),
    (json.dumps(PLAN) + json.dumps(PLAN), REPAIRED),
    ("<json>" + json.dumps(PLAN) + "</json>", REPAIRED),
    ('{"memory": "m", "plan": "p"', REPAIRED),
    ('{"memory": "m", "plan":', ERROR),
    (json.dumps({"Memory": "m", "Plan": "p"}), ERROR),
]

ACTION = {"verb": "move", "description": "Walk to the alley.", "actor": "finch", "target": "back_alley", "minutes": 4}
MEMBERS = ["boss", "finch", "moss"]
IDS = [*MEMBERS, "back_alley", "street", "team_van", "guard_roth"]
NAMES = {"Finch": "finch", "Back alley": "back_alley", "Rook": "boss"}


def action(**changes: Any) -> str:
    return json.dumps({**ACTION, **changes})


ACTION_CASES = [
    *wrappers(ACTION),
    (action(minutes=-3), REPAIRED),
    (action(minutes=0), REPAIRED),
    (action(minutes=500), REPAIRED),
    (action(minutes=4.6), REPAIRED),
    (action(minutes="5"), REPAIRED),
    (action(minutes="soon"), ERROR),
    (action(minutes=None), ERROR),
    (action(verb=""), ERROR),
    (action(verb=None), ERROR),
    (action(actor="Finch"), REPAIRED),
    (action(actor="FINCH"), REPAIRED),
    (action(actor="Rook"), REPAIRED),
    (action(actor="guard_roth"), ERROR),
    (action(actor="ghost"), ERROR),
    (action(target="Back alley"), REPAIRED),
    (action(target="moon"), ERROR),
    (action(target=""), OK),
    (action(item="team_van"), OK),
    (action(item="laser"), ERROR),
    (action(verb=7), REPAIRED),
    (action(description="d" * 1500), REPAIRED),
    (json.dumps({k: v for k, v in ACTION.items() if k != "minutes"}), REPAIRED),
    (json.dumps({k: v for k, v in ACTION.items() if k != "description"}), REPAIRED),  # left empty, recorded
    (json.dumps({k: v for k, v in ACTION.items() if k != "actor"}), ERROR),
    (action(extra_field="x"), REPAIRED),  # the ignored key is recorded
]


def verdict(outcomes: list[dict[str, Any]] | None = None, **changes: Any) -> str:
    data: dict[str, Any] = {
        "feasibility": {d: {"score": 4, "reason": "r"} for d in DIMS},
        "risky": True,
        "outcomes": outcomes
        if outcomes is not None
        else [
            {"category": "success", "description": "a", "probability": 0.7, "catastrophic": False},
            {"category": "failure_with_consequence", "description": "b", "probability": 0.3, "catastrophic": True},
        ],
        "rationale": "r",
    }
    data.update(changes)
    return json.dumps(data)


def outcome(category: str, p: Any, catastrophic: Any = False) -> dict[str, Any]:
    return {"category": category, "description": "x", "probability": p, "catastrophic": catastrophic}


VERDICT_CASES = [
    *wrappers(json.loads(verdict())),
    (verdict([outcome("success", 0.5), outcome("failure", 0.4)]), REPAIRED),
    (verdict([outcome("success", 5), outcome("failure", 5)]), ERROR),  # a probability above 1
    (verdict([outcome("success", 0), outcome("failure", 0)]), ERROR),
    (verdict([outcome("success", -0.2), outcome("failure", 1.2)]), ERROR),
    (verdict([outcome(c, 0.2) for c in ("success", "partial_success", "failure", "failure", "impossible")]), REPAIRED),
    (verdict([outcome("success", 0.1)] * 7), REPAIRED),
    (verdict([outcome("Success With Complication", 1.0)]), REPAIRED),
    (verdict([outcome("SUCCESS", 1.0)]), REPAIRED),
    (verdict([outcome("victory", 1.0)]), ERROR),
    (verdict([outcome(None, 1.0)]), ERROR),  # type: ignore[arg-type]
    (verdict([outcome("success", "high")]), ERROR),
    (verdict([outcome("success", None)]), ERROR),
    (verdict([outcome("success", 1.0, "yes")]), ERROR),
    (verdict([]), ERROR),
    (verdict(outcomes=None, risky="maybe"), ERROR),
    (verdict(feasibility={d: {"score": 9, "reason": "r"} for d in DIMS}), REPAIRED),
    (verdict(feasibility={d: {"score": 0, "reason": "r"} for d in DIMS}), REPAIRED),
    (verdict(feasibility={d: 3 for d in DIMS}), REPAIRED),  # bare scores: the empty reasons are recorded
    (verdict(feasibility={d: {"score": "high"} for d in DIMS}), ERROR),
    (verdict(feasibility={"existence": {"score": 3, "reason": ""}}), ERROR),
    (verdict(feasibility="all fine"), ERROR),
    (verdict(feasibility={d: {"score": 3.4, "reason": "r"} for d in DIMS}), ERROR),  # rounding changes a rating
    (json.dumps({"risky": True}), ERROR),
    (verdict([outcome("success", 0.3333), outcome("failure", 0.3333), outcome("impossible", 0.3333)]), REPAIRED),
    (verdict([{"category": "success", "probability": 1.0}]), REPAIRED),  # catastrophic default, empty text
    (verdict([outcome("success", float("inf"))]).replace("Infinity", "1e999"), ERROR),
]


def stage(ops: Any, **extra: Any) -> str:
    return json.dumps({"ops": ops, "note": "n", **extra})


STAGE_CASES = [
    *wrappers({"ops": [{"op": "advance_clock", "minutes": 5}], "note": "time passes"}),
    (stage([]), OK),
    (stage([{"op": "move", "subject": "guard_roth", "to": "kitchen"}]), OK),
    (stage([{"op": "teleport", "subject": "guard_roth"}]), REPAIRED),
    (stage([{"op": "move", "subject": "guard_roth"}]), REPAIRED),
    (stage([{"op": "advance_clock", "minutes": -5}]), REPAIRED),
    (stage([{"op": "advance_clock", "minutes": 10000}]), REPAIRED),
    (stage([{"op": "set_alertness", "npc": "x", "level": 9}]), REPAIRED),
    (stage(["move guard"]), REPAIRED),
    (stage([None]), REPAIRED),
    (stage("move the guard"), ERROR),
    (stage({"op": "move"}), ERROR),
    (json.dumps({"note": "nothing"}), ERROR),
    (json.dumps({"operations": []}), REPAIRED),  # the alias is recorded
    (stage([{"op": "set_member_status", "member": "finch", "status": "vaporised"}]), REPAIRED),
    (stage([{"op": "set_tag", "subject": "kitchen", "tag": "On Fire!"}]), REPAIRED),
    (stage([{"op": "spawn_npc", "npc": "officer_hale", "at": "street"}]), OK),
    (stage([{"op": "set_alarm", "ringing": True}, {"op": "set_alarm", "ringing": "yes"}]), REPAIRED),
    (stage([{"op": "transfer", "item": "cash_box", "to": "finch", "extra": 1}]), REPAIRED),
    (stage([{"op": "append_history", "subject": "kitchen", "text": "x" * 1000}]), REPAIRED),
    (stage([{"op": "fold_history", "subject": "kitchen", "keep": 2, "summary": "s"}]), OK),
    (stage([{"op": "set_flag", "flag": "escaped"}]), OK),
    (stage([], note=None), OK),
]


@pytest.mark.parametrize(("text", "expected"), PLAN_CASES)
def test_plan_corpus(text: str, expected: str | None) -> None:
    check(parse_plan, text, expected)


@pytest.mark.parametrize(("text", "expected"), ACTION_CASES)
def test_action_corpus(text: str, expected: str | None) -> None:
    check(lambda t: parse_action(t, members=MEMBERS, known_ids=IDS, names=NAMES), text, expected)


@pytest.mark.parametrize(("text", "expected"), VERDICT_CASES)
def test_verdict_corpus(text: str, expected: str | None) -> None:
    check(parse_verdict, text, expected)


@pytest.mark.parametrize(("text", "expected"), STAGE_CASES)
def test_stage_corpus(text: str, expected: str | None) -> None:
    check(lambda t: parse_stage(t, "npcs"), text, expected)


def test_each_role_has_at_least_thirty_cases() -> None:
    assert min(len(PLAN_CASES), len(ACTION_CASES), len(VERDICT_CASES), len(STAGE_CASES)) >= 30


def test_repaired_verdicts_are_valid_distributions() -> None:
    for text, expected in VERDICT_CASES:
        if expected == ERROR:
            continue
        try:
            result, _ = parse_verdict(text)
        except ModelOutputError:
            continue
        assert 1 <= len(result.outcomes) <= 4
        assert abs(sum(o.probability for o in result.outcomes) - 1) < 1e-6
