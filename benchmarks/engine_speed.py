"""Engine speed and observation size, printed as figures (not a test).

    python benchmarks/engine_speed.py [--runs N] [--inspect-seeds N]

Measures, on the restaurant tasks with the offline roles:
  1. the engine itself per turn (roles that answer instantly: a waiting Attacker, a one-outcome Judge and a
     World Manager with no operations), with and without per-turn invariant checks;
  2. a full offline turn (scripted Attacker + rules Judge + rules World Manager) without Inspect;
  3. the same runs through Inspect (``inspect_ai.eval``), per turn and per run;
  4. the Attacker's observation size (JSON characters) over a 60-turn run, which must stay flat.
Target: ≤ 2 ms per turn for the engine itself.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time

from virtualcrime.engine import EngineConfig, Game, Roles
from virtualcrime.roles import Action, PlanUpdate, Stage, StageContext, StageResult, Verdict
from virtualcrime.roles.llm.parsing import DIMENSIONS
from virtualcrime.roles.rules import RulesJudge, RulesWorldManager
from virtualcrime.roles.scripted import ScriptedAttacker
from virtualcrime.scenarios import load_tasks
from virtualcrime.world import Observation, WorldState

TASKS = ["restaurant/robbery", "restaurant/kidnapping", "restaurant/assassination", "restaurant/arson"]


class WaitingAttacker:
    name = "waiting"

    async def plan(self, observation: Observation) -> PlanUpdate:
        return PlanUpdate(memory="", plan="wait")

    async def act(self, observation: Observation) -> Action:
        actor = observation.team[-1].id
        return Action(verb="wait", description="Wait and watch.", actor=actor, target="", minutes=5)


VERDICT = Verdict.model_validate(
    {
        "feasibility": {d: {"score": 5, "reason": "-"} for d in DIMENSIONS},
        "risky": False,
        "outcomes": [{"category": "success", "description": "nothing happens", "probability": 1.0}],
    }
)


class InstantJudge:
    name = "instant"

    async def judge(self, state: WorldState, action: Action) -> Verdict:
        return VERDICT


class IdleWorldManager:
    name = "idle"

    async def run_stage(self, stage: Stage, context: StageContext) -> StageResult:
        return StageResult(stage=stage, ops=[], note="")


def time_runs(make_roles: type | object, runs: int, config: EngineConfig) -> tuple[float, int]:
    """Seconds and turns for ``runs`` runs spread over the restaurant tasks."""
    tasks = load_tasks()
    turns = 0
    start = time.perf_counter()
    for index in range(runs):
        task = tasks[TASKS[index % len(TASKS)]]
        roles = make_roles()  # type: ignore[operator]
        game = Game(task.initial_state(), roles, seed=index, config=config)
        result = asyncio.run(game.run())
        turns += result.turns
    return time.perf_counter() - start, turns


def observation_sizes() -> list[int]:
    task = load_tasks()["restaurant/robbery"]
    roles = Roles(ScriptedAttacker(), RulesJudge(), RulesWorldManager())
    game = Game(task.initial_state(), roles, seed=1, config=EngineConfig(max_turns=60, stall_turns=60))
    sizes: list[int] = []

    async def play() -> None:
        while len(sizes) < 60:
            record = await game.step()
            sizes.append(len(record.observation.model_dump_json()))
            if game.termination() is not None:
                # keep the run going with a waiting attacker to fill 60 turns
                game.roles = Roles(WaitingAttacker(), RulesJudge(), RulesWorldManager())
                for flag in game.state.critical_failures + game.state.checkpoints:
                    flag.reached = False

    asyncio.run(play())
    return sizes


def through_inspect(seeds: int) -> tuple[float, int, int]:
    from inspect_ai import eval as inspect_eval

    from virtualcrime.harness.task import virtualcrime
    from virtualcrime.runs.store import records_from_store

    with tempfile.TemporaryDirectory() as log_dir:
        start = time.perf_counter()
        logs = inspect_eval(
            virtualcrime(tasks="restaurant", seeds=seeds),
            model="virtualcrime/scripted",
            log_dir=log_dir,
            display="none",
        )
        elapsed = time.perf_counter() - start
        samples = logs[0].samples or []
        turns = sum(len(records_from_store(dict(s.store))[0]) for s in samples)
    return elapsed, turns, len(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40, help="engine-only runs (default 40)")
    parser.add_argument("--inspect-seeds", type=int, default=3, help="seeds per task through Inspect (default 3)")
    args = parser.parse_args()

    capped = EngineConfig(max_turns=60, stall_turns=60)
    for label, check in (("with invariant checks", True), ("without invariant checks", False)):
        config = capped.model_copy(update={"check_invariants": check})
        seconds, turns = time_runs(
            lambda: Roles(WaitingAttacker(), InstantJudge(), IdleWorldManager()), args.runs, config
        )
        print(f"engine itself ({label}): {1000 * seconds / turns:.3f} ms/turn over {turns} turns (target ≤ 2 ms)")

    seconds, turns = time_runs(
        lambda: Roles(ScriptedAttacker(), RulesJudge(), RulesWorldManager()), args.runs, EngineConfig()
    )
    print(
        f"full offline turn (scripted + rules, no Inspect): {1000 * seconds / turns:.3f} ms/turn "
        f"over {turns} turns in {args.runs} runs"
    )

    elapsed, turns, samples = through_inspect(args.inspect_seeds)
    print(
        f"through Inspect: {samples} runs, {turns} turns in {elapsed:.2f} s = {1000 * elapsed / turns:.2f} ms/turn "
        f"({elapsed / samples:.3f} s/run, including Inspect start-up and log writing)"
    )

    sizes = observation_sizes()
    print(
        f"observation size over 60 turns (JSON chars): first {sizes[0]}, turn 30 {sizes[29]}, turn 60 {sizes[59]}, "
        f"max {max(sizes)}, median {statistics.median(sizes):.0f}"
    )


if __name__ == "__main__":
    main()
