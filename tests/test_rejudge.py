"""``virtualcrime rejudge``: a second Judge's verdicts on fixed, sampled turns, stored in the logs and reported."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.model import modelapi

from conftest import ScriptedModelAPI
from test_llm_roles import scripted_reply
from virtualcrime.cli.main import main
from virtualcrime.engine import EngineConfig, Game, Roles
from virtualcrime.harness.log_reader import score_metadata
from virtualcrime.roles import Action, Attacker, Verdict
from virtualcrime.roles.rules import STRICT, RulesJudge, RulesWorldManager, judge_action
from virtualcrime.roles.scripted import RandomAttacker, ScriptedAttacker
from virtualcrime.runs.payloads import rejudged_turns
from virtualcrime.runs.store import records_from_store
from virtualcrime.scenarios import get_task
from virtualcrime.world import WorldState

STRICT_NAME = "virtualcrime/rules-strict"


@pytest.fixture
def logs(matrix_logs: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    shutil.copytree(matrix_logs, folder)  # rejudge writes into the logs: work on a copy
    return folder


def stored(folder: Path) -> dict[tuple[str, str, int], Any]:
    """(attacker, sample, epoch) → (original judge, records, re-judged turns by the strict judge)."""
    found = {}
    for path in sorted(folder.glob("*.eval")):
        log = read_eval_log(str(path))
        judge = (log.eval.model_roles or {})["judge"].model
        for sample in log.samples or []:
            turns = rejudged_turns(score_metadata(sample.scores)).get(STRICT_NAME, [])
            if turns:
                found[(log.eval.model, str(sample.id), sample.epoch)] = (
                    judge,
                    records_from_store(dict(sample.store))[0],
                    turns,
                )
    return found


def live_judge_inputs(attacker: str, task_id: str, epoch: int) -> dict[int, tuple[WorldState, Action]]:
    """The Judge's inputs captured while playing the run live (an independent route to the same states)."""
    seen: dict[int, tuple[WorldState, Action]] = {}

    class Capturing(RulesJudge):
        async def judge(self, state: WorldState, action: Action) -> Verdict:
            seen[state.turn] = (state.model_copy(deep=True), action)
            return await super().judge(state, action)

    seed = epoch - 1
    player: Attacker = ScriptedAttacker() if attacker.endswith("scripted") else RandomAttacker(f"{task_id}/seed{seed}")
    game = Game(get_task(task_id).initial_state(), Roles(player, Capturing(), RulesWorldManager()), seed,
                EngineConfig(max_turns=20))  # fmt: skip
    asyncio.run(game.run())
    return seen


def test_rejudge_stores_the_second_judges_verdict_on_the_recorded_state(
    logs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rejudge", str(logs), "--judge", STRICT_NAME, "--per-attacker", "6", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "12 of 12 turn(s) got a verdict" in out and "already judged by virtualcrime/rules-strict" in out
    found = stored(logs)
    per_attacker: dict[str, int] = {}
    for (attacker, task_id, epoch), (judge, records, turns) in found.items():
        assert judge == "virtualcrime/rules"  # logs already judged by the strict judge were skipped
        per_attacker[attacker] = per_attacker.get(attacker, 0) + len(turns)
        live = live_judge_inputs(attacker, task_id, epoch)
        for turn in turns:
            original = records[turn.turn - 1]
            assert original.judge_called and turn.verdict is not None
            state, action = live[turn.turn]
            assert action == original.action
            assert turn.verdict == judge_action(state, action, STRICT)  # exactly what the strict judge says there
            assert turn.verdict.non_failure_probability <= original.verdict.non_failure_probability + 1e-9
    assert per_attacker == {"virtualcrime/scripted": 6, "virtualcrime/random": 6}
    for path in sorted(logs.glob("*.eval")):  # the runs themselves are untouched
        assert main(["replay", str(path), "--verify"]) == 0


def test_rejudge_sampling_is_reproducible(matrix_logs: Path, tmp_path: Path) -> None:
    chosen = []
    for name in ("a", "b"):
        shutil.copytree(matrix_logs, tmp_path / name)
        assert main(["rejudge", str(tmp_path / name), "--judge", STRICT_NAME, "--per-attacker", "4"]) == 0
        chosen.append(sorted((k, [t.turn for t in v[2]]) for k, v in stored(tmp_path / name).items()))
    assert chosen[0] == chosen[1]


def test_report_compares_judges_on_the_rejudged_turns(logs: Path, tmp_path: Path) -> None:
    assert main(["rejudge", str(logs), "--judge", STRICT_NAME, "--per-attacker", "8", "--seed", "2"]) == 0
    out = tmp_path / "report"
    assert main(["report", str(logs), "--out", str(out), "--resamples", "300"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    found = summary["rejudged"]
    assert found["judges"] == ["virtualcrime/rules (original)", STRICT_NAME]
    rates = {(r["attacker"], r["judge"]): r for r in found["rates"]}
    nf_diffs = []
    for attacker in ("virtualcrime/scripted", "virtualcrime/random"):
        turns = [(records[t.turn - 1], t) for (a, _, _), (_, records, ts) in stored(logs).items() if a == attacker
                 for t in ts]  # fmt: skip
        strict = [t.verdict.non_failure_probability for _, t in turns]
        original = [r.verdict.non_failure_probability for r, _ in turns]
        assert rates[(attacker, STRICT_NAME)]["non_failure"]["value"] == pytest.approx(sum(strict) / len(strict))
        key = (attacker, "virtualcrime/rules (original)")
        assert rates[key]["non_failure"]["value"] == pytest.approx(sum(original) / len(original))
        nf_diffs += [abs(a - b) for a, b in zip(original, strict, strict=True)]
    [spread] = found["spread"]
    assert spread["turns"] == 16
    assert spread["mean_abs_non_failure_diff"] == pytest.approx(sum(nf_diffs) / len(nf_diffs))
    assert {a["dimension"] for a in found["agreement"]} >= {"existence", "physical", "safety"}
    assert "Judges on the same turns" in (out / "report.html").read_text()


def test_rejudge_refuses_a_model_that_cannot_judge(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rejudge", str(logs), "--judge", "virtualcrime/scripted"]) == 2
    assert "cannot play the Judge" in capsys.readouterr().err


@modelapi(name="rejudgemock")
class RejudgeMock(ScriptedModelAPI):
    """A language model Judge with valid replies (and one that is not JSON, to exercise the repair path)."""

    calls = 0

    def reply(self, prompt: str) -> str:
        self.calls += 1
        return "not json" if self.calls == 1 else scripted_reply(prompt)


def test_rejudge_with_a_language_model_judge_records_its_calls(logs: Path, tmp_path: Path) -> None:
    assert main(["rejudge", str(logs), "--judge", "rejudgemock/j", "--per-attacker", "3"]) == 0
    turns = [t for path in sorted(logs.glob("*.eval")) for s in read_eval_log(str(path)).samples or []
             for t in rejudged_turns(score_metadata(s.scores)).get("rejudgemock/j", [])]  # fmt: skip
    assert len(turns) == 6 and all(t.verdict is not None for t in turns)
    calls = [c for t in turns for c in t.model_calls]
    assert all(c.role == "judge" and c.call == "judge" and c.ok for c in calls)
    assert any(c.attempts == 2 for c in calls)  # an unusable reply was shown back to the model and retried
    out = tmp_path / "report"
    assert main(["report", str(logs), "--out", str(out), "--resamples", "200"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert "rejudgemock/j" in summary["rejudged"]["judges"]


def verdict_count(folder: Path) -> int:
    return sum(len(turns) for _, _, turns in stored(folder).values())


def test_rejudge_again_asks_nothing_twice_and_a_new_seed_adds_turns_keeping_the_old(
    logs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["rejudge", str(logs), "--judge", STRICT_NAME, "--per-attacker", "5"]
    assert main([*args, "--seed", "1"]) == 0
    first = {k: {t.turn for t in v[2]} for k, v in stored(logs).items()}
    assert verdict_count(logs) == 10
    capsys.readouterr()
    assert main([*args, "--seed", "1"]) == 0  # the same sample again: nothing is asked, nothing is paid twice
    assert "Nothing new to ask" in capsys.readouterr().out and verdict_count(logs) == 10
    assert main([*args, "--seed", "2"]) == 0  # another sample: the new turns join the earlier verdicts
    out = capsys.readouterr().out
    asked = sum(int(line.split()[1]) for line in out.splitlines() if line.startswith("virtualcrime/"))
    second = {k: {t.turn for t in v[2]} for k, v in stored(logs).items()}
    assert all(turns <= second[k] for k, turns in first.items())  # none of the earlier verdicts dropped
    assert 10 < verdict_count(logs) == 10 + asked <= 20
