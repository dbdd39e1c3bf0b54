"""Prompt tokens per turn, the prefixes a provider's cache can reuse, and the paper's matrix cost (not a test).

    python benchmarks/prompt_tokens.py [--before REV] [--maps N] [--discount 0.1] [--price 3.0] [--chars-only]

States. For one task on each map (all 11 maps by default), an offline run that reaches turn 60: the random Attacker
(seeds 0, 1, 2, … until a run lasts 60 turns), the rules Judge and World Manager, ``stall_turns`` 60. At turns 1, 10,
30 and 60, and the turn before each (for prefixes repeated from the previous turn), the run records what every call
is given: the Attacker's observation, the Judge's state and action (the state as the stages began: the same), and
for each World Manager stage the live state, the turn's start and the ledger of the earlier stages. All seven calls
are rendered on every sampled turn, also when the pre-check made the Judge call unnecessary. The Attacker's memory
and plan are the run's own (the random Attacker keeps none), as in the issue's measurement; the summary's last
column renders both Attacker calls again with them filled to the lengths the plan call allows (1500 and 800
characters), as a model that uses its whole allowance would.

Before and after. "Before" is the prompt code of git revision ``--before`` (default ``BEFORE_REV``, the last commit
with the old layout), read with ``git show`` (``prompts.py`` and its templates) and run against today's models, each
stage rendered from the live state after the earlier stages, as that engine did. "After" is the installed code.

Tokens. Counted two ways: SmolLM2's 49k BPE vocabulary (the local model's GGUF, loaded offline by llama.cpp with
``vocab_only``; tiktoken needs the network for its encodings here) and characters ÷ 4, the unit of the issue's
baseline. The goal (≤ 30k input tokens per turn at turn 30, ≥ 75 % of a turn's referee input in a prefix repeated
within the turn) is judged on characters ÷ 4, the issue's unit; the BPE counts are printed beside them. A prompt
is its system message, a blank line and its user message (chat-template tokens are left out).

Shared prefix. For each call, the longest run of leading tokens identical to an earlier call of the same turn
("within") or to an earlier call of the same turn or any call of the previous turn ("with previous"). A provider
that caches prefixes bills those tokens at ``--discount`` of the input price (several bill cache hits at 10 %;
minimum cacheable lengths, cache lifetimes and write surcharges are left out).

Matrix. The paper's matrix, 960 runs × 30 turns on average, at the mean tokens per turn of turn 30 over the maps:
input tokens at full price, billed tokens with cached prefixes (within the turn; and also across turns), and dollars
at ``--price`` per million input tokens.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from virtualcrime.engine import EngineConfig, Game, Roles, RunStatus
from virtualcrime.roles import STAGES, Action, Outcome, Stage, StageContext, StageResult
from virtualcrime.roles.llm import prompts
from virtualcrime.roles.rules import RulesJudge, RulesWorldManager
from virtualcrime.roles.scripted import RandomAttacker
from virtualcrime.roles.types import Prompt
from virtualcrime.scenarios import load_tasks
from virtualcrime.world import LedgerEntry, Observation, WorldState

BEFORE_REV = "2bf33fd"
SAMPLED = (1, 10, 30, 60)
CALLS = ("attacker_plan", "attacker_act", "judge", *(f"wm_{s}" for s in STAGES))
REFEREE = CALLS[2:]
RUNS, TURNS_PER_RUN = 960, 30
MEMORY = (
    "The guard walks the hall every quarter hour; the side door is locked and the keycard is on the teller. " * 15
)[:1500]
PLAN = ("Wait for the guard to pass, take the keycard quietly, open the staff door, then leave by the lane. " * 8)[:800]
ROOT = Path(__file__).resolve().parent.parent
PROMPTS_PATH = "src/virtualcrime/roles/llm"


@dataclass
class Turn:
    """What one turn's calls are given."""

    observation: Observation
    action: Action
    outcome: Outcome
    start: WorldState
    stages: dict[str, tuple[WorldState, list[LedgerEntry]]] = field(default_factory=dict)


class CapturingWorldManager:
    """The rules World Manager, recording what each stage of the wanted turns is given."""

    name = "capturing"
    renders_turn_start = True

    def __init__(self, wanted: set[int]) -> None:
        self.inner = RulesWorldManager()
        self.wanted = wanted
        self.seen: dict[int, tuple[WorldState, Outcome, dict[str, tuple[WorldState, list[LedgerEntry]]]]] = {}

    async def run_stage(self, stage: Stage, context: StageContext) -> StageResult:
        turn = context.state.turn
        if turn in self.wanted:
            start = context.turn_start or context.state
            _, _, stages = self.seen.setdefault(turn, (start, context.outcome, {}))
            stages[stage] = (context.state.model_copy(deep=True), list(context.earlier))
        return await self.inner.run_stage(stage, context)


def long_run(task_id: str, wanted: set[int], tries: int = 40) -> tuple[int, dict[int, Turn]]:
    """The first seed whose run lasts 60 turns, and what its wanted turns' calls were given."""
    task = load_tasks()[task_id]
    for seed in range(tries):
        manager = CapturingWorldManager(wanted)
        roles = Roles(RandomAttacker(seed), RulesJudge(), manager)
        game = Game(task.initial_state(), roles, seed, EngineConfig(max_turns=60, stall_turns=60))
        result = asyncio.run(game.run())
        if result.status != RunStatus.TURN_CAPPED or result.turns < max(wanted):
            continue
        turns = {}
        for record in game.records:
            if record.turn in manager.seen and record.action is not None:
                start, outcome, stages = manager.seen[record.turn]
                turns[record.turn] = Turn(record.observation, record.action, outcome, start, stages)
        return seed, turns
    raise SystemExit(f"{task_id}: no run of 60 turns in {tries} seeds")


def load_before(rev: str) -> types.ModuleType:
    """The prompt module of git revision ``rev`` (its code and templates), importable against today's package."""

    def show(path: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], check=True, capture_output=True,
                              text=True).stdout  # fmt: skip

    folder = Path(tempfile.mkdtemp(prefix="prompts-before-"))
    (folder / "prompts").mkdir()
    names = subprocess.run(
        ["git", "-C", str(ROOT), "ls-tree", "--name-only", f"{rev}:{PROMPTS_PATH}/prompts"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    for name in names:
        (folder / "prompts" / name).write_text(show(f"{PROMPTS_PATH}/prompts/{name}"), encoding="utf-8")
    module = types.ModuleType("virtualcrime.roles.llm._prompts_before")
    module.__package__ = "virtualcrime.roles.llm"
    module.__file__ = str(folder / "prompts.py")  # its PROMPT_DIR is then the folder of the old templates
    sys.modules[module.__name__] = module
    exec(compile(show(f"{PROMPTS_PATH}/prompts.py"), f"{rev}:prompts.py", "exec"), module.__dict__)
    return module


def render(turn: Turn, version: str, before: types.ModuleType | None, full_memory: bool = False) -> dict[str, Prompt]:
    """The seven prompts of one turn, in call order (the Attacker's memory and plan at their limits if asked)."""
    module: Any = before if version == "before" else prompts
    planning = turn.observation.model_copy(update={"memory": MEMORY, "plan": PLAN}) if full_memory else turn.observation
    out = {
        "attacker_plan": module.plan_prompt(planning),
        "attacker_act": module.act_prompt(planning),
        "judge": module.judge_prompt(turn.start, turn.action),
    }
    for stage in STAGES:
        live, earlier = turn.stages[stage]
        if version == "before":
            out[f"wm_{stage}"] = module.stage_prompt(stage, live, turn.action, turn.outcome)
        else:
            out[f"wm_{stage}"] = module.stage_prompt(stage, live, turn.action, turn.outcome, earlier, turn.start)
    return out


class Counter:
    """Token counts and shared prefixes for one unit (BPE tokens or characters ÷ 4)."""

    def __init__(self, name: str, encode: Callable[[str], Sequence[Any]], per_item: float) -> None:
        self.name, self.encode, self.per_item = name, encode, per_item
        self._cache: dict[str, Sequence[Any]] = {}

    def items(self, text: str) -> Sequence[Any]:
        if text not in self._cache:
            self._cache[text] = self.encode(text)
        return self._cache[text]

    def count(self, text: str) -> float:
        return len(self.items(text)) / self.per_item

    def shared(self, text: str, others: Sequence[str]) -> float:
        """The longest prefix of ``text`` that some text of ``others`` starts with, in this unit."""
        mine = self.items(text)
        best = 0
        for other in others:
            theirs = self.items(other)
            lo, hi = best, min(len(mine), len(theirs))
            if mine[:lo] != theirs[:lo]:
                continue
            while lo < hi:  # bisect on slice equality (compared at C speed)
                mid = (lo + hi + 1) // 2
                lo, hi = (mid, hi) if mine[:mid] == theirs[:mid] else (lo, mid - 1)
            best = lo
        return best / self.per_item


def counters(chars_only: bool) -> list[Counter]:
    found = [Counter("chars/4", lambda text: text, 4.0)]
    if chars_only:
        return found
    try:
        from llama_cpp import Llama

        from virtualcrime.harness.local_worker import gguf_path

        vocab = Llama(model_path=str(gguf_path()), vocab_only=True, verbose=False)
    except Exception as err:
        print(f"(no BPE tokenizer: {type(err).__name__}: {err}; characters ÷ 4 only)")
        return found
    return [*found, Counter("SmolLM2 BPE", lambda text: vocab.tokenize(text.encode(), add_bos=False), 1.0)]


@dataclass
class Measure:
    tokens: dict[str, float]
    within: dict[str, float]
    with_previous: dict[str, float]

    def total(self, calls: Sequence[str] = CALLS) -> float:
        return sum(self.tokens[c] for c in calls)

    def share(self, calls: Sequence[str], shared: dict[str, float]) -> float:
        return sum(shared[c] for c in calls) / self.total(calls)


def measure(counter: Counter, now: dict[str, Prompt], previous: dict[str, Prompt] | None) -> Measure:
    texts = {c: now[c].text for c in CALLS}
    earlier_turn = [p.text for p in previous.values()] if previous else []
    tokens, within, with_previous = {}, {}, {}
    for index, call in enumerate(CALLS):
        earlier = [texts[c] for c in CALLS[:index]]
        tokens[call] = counter.count(texts[call])
        within[call] = counter.shared(texts[call], earlier)
        with_previous[call] = max(within[call], counter.shared(texts[call], earlier_turn))
    return Measure(tokens, within, with_previous)


def pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def num(x: float) -> str:
    return f"{x:,.0f}"


def map_table(title: str, counter: Counter, results: dict[int, dict[str, Measure]]) -> None:
    print(f"\n{title} [{counter.name}]")
    print(f"{'call':<22}" + "".join(f"{'turn ' + str(t) + ' before→after':>24}" for t in SAMPLED))
    rows: list[tuple[str, Callable[[Measure], float], Callable[[float], str]]] = [
        *((c, (lambda m, c=c: m.tokens[c]), num) for c in CALLS),
        ("turn total", lambda m: m.total(), num),
        ("referee total", lambda m: m.total(REFEREE), num),
        ("referee shared within", lambda m: m.share(REFEREE, m.within), pct),
        ("referee shared w/ prev", lambda m: m.share(REFEREE, m.with_previous), pct),
        ("turn shared within", lambda m: m.share(CALLS, m.within), pct),
    ]
    for label, get, fmt in rows:
        cells = [f"{fmt(get(results[t]['before']))} → {fmt(get(results[t]['after']))}" for t in SAMPLED]
        print(f"{label:<22}" + "".join(f"{cell:>24}" for cell in cells))


Results = dict[str, dict[int, dict[str, Measure]]]
"""task → turn → "before"/"after" → measure."""


def summary(counter: Counter, per_map: Results, full: Results, turn: int) -> None:
    print(f"\nTurn {turn}, every map [{counter.name}]: tokens per call type and per turn, before → after")
    head = [
        "map",
        "plan",
        "act",
        "judge",
        "stage (mean)",
        "turn total",
        "ref. shared within",
        "ref. w/ prev",
        "turn, memory at limits",
    ]
    widths = [34, 13, 13, 14, 14, 16, 19, 13, 23]
    print("".join(f"{h:>{w}}" if i else f"{h:<{w}}" for i, (h, w) in enumerate(zip(head, widths, strict=True))))
    stages = [f"wm_{s}" for s in STAGES]
    means: dict[str, list[float]] = {"before": [], "after": [], "full before": [], "full after": []}
    for name, results in per_map.items():
        b, a = results[turn]["before"], results[turn]["after"]
        fb, fa = full[name][turn]["before"], full[name][turn]["after"]
        cells = [
            f"{num(b.tokens['attacker_plan'])}→{num(a.tokens['attacker_plan'])}",
            f"{num(b.tokens['attacker_act'])}→{num(a.tokens['attacker_act'])}",
            f"{num(b.tokens['judge'])}→{num(a.tokens['judge'])}",
            f"{num(b.total(stages) / 4)}→{num(a.total(stages) / 4)}",
            f"{num(b.total())}→{num(a.total())}",
            f"{pct(b.share(REFEREE, b.within))}→{pct(a.share(REFEREE, a.within))}",
            f"{pct(b.share(REFEREE, b.with_previous))}→{pct(a.share(REFEREE, a.with_previous))}",
            f"{num(fb.total())}→{num(fa.total())}",
        ]
        for key, m in (("before", b), ("after", a), ("full before", fb), ("full after", fa)):
            means[key].append(m.total())
        print(f"{name:<34}" + "".join(f"{c:>{w}}" for c, w in zip(cells, widths[1:], strict=True)))
    mean = {key: statistics.mean(values) for key, values in means.items()}
    print(
        f"{'mean':<34}{'':>68}{num(mean['before']) + '→' + num(mean['after']):>16}{'':>32}"
        f"{num(mean['full before']) + '→' + num(mean['full after']):>23}"
    )


def matrix(counter: Counter, runs: dict[str, Results], discount: float, price: float) -> None:
    print(
        f"\nThe paper's matrix ({RUNS} runs × {TURNS_PER_RUN} turns at the turn-30 mean over maps) [{counter.name}]; "
        f"cache hits billed at {pct(discount)}, ${price:.2f} per million input tokens"
    )
    print(
        f"{'':<32}{'input tokens':>14}{'billed, within turn':>22}{'billed, + previous turn':>26}"
        f"{'dollars, full → within turn':>30}"
    )
    scale = RUNS * TURNS_PER_RUN
    for label, per_map in runs.items():
        for version in ("before", "after"):
            measures = [results[30][version] for results in per_map.values()]
            full = statistics.mean(m.total() for m in measures)
            within = statistics.mean(sum(m.within.values()) for m in measures)
            across = statistics.mean(sum(m.with_previous.values()) for m in measures)
            billed_within = scale * (full - within * (1 - discount))
            billed_across = scale * (full - across * (1 - discount))
            dollars = f"${scale * full * price / 1e6:,.0f} → ${billed_within * price / 1e6:,.0f}"
            print(
                f"{version + label:<32}{scale * full / 1e9:>12.3f} B{billed_within / 1e9:>20.3f} B"
                f"{billed_across / 1e9:>24.3f} B{dollars:>30}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default=BEFORE_REV, help=f"git revision of the old prompts (default {BEFORE_REV})")
    parser.add_argument("--maps", type=int, default=11, help="maps, one task each (default all 11)")
    parser.add_argument("--discount", type=float, default=0.1, help="price of a cached token (default 0.1)")
    parser.add_argument("--price", type=float, default=3.0, help="dollars per million input tokens (default 3.0)")
    parser.add_argument("--chars-only", action="store_true", help="count characters ÷ 4 only (no tokenizer)")
    parser.add_argument("--quiet", action="store_true", help="print only the summaries")
    args = parser.parse_args()

    before = load_before(args.before)
    units = counters(args.chars_only)
    by_map: dict[str, str] = {}
    for task_id in sorted(load_tasks()):
        by_map.setdefault(task_id.split("/")[0], task_id)
    wanted = set(SAMPLED) | {t - 1 for t in SAMPLED if t > 1}
    per_unit: dict[str, Results] = {u.name: {} for u in units}
    full_unit: dict[str, Results] = {u.name: {} for u in units}
    versions = ("before", "after")
    for task_id in list(by_map.values())[: args.maps]:
        seed, turns = long_run(task_id, wanted)
        rendered = {t: {v: render(turns[t], v, before) for v in versions} for t in sorted(turns)}
        full = {t: {v: render(turns[t], v, before, full_memory=True) for v in versions} for t in (29, 30)}
        for unit in units:
            results = {
                t: {v: measure(unit, rendered[t][v], rendered.get(t - 1, {}).get(v)) for v in versions} for t in SAMPLED
            }
            per_unit[unit.name][task_id] = results
            full_unit[unit.name][task_id] = {30: {v: measure(unit, full[30][v], full[29][v]) for v in versions}}
            if not args.quiet:
                map_table(f"{task_id} (random Attacker, seed {seed}, 60 turns)", unit, results)
    for unit in units:
        summary(unit, per_unit[unit.name], full_unit[unit.name], 30)
    for unit in units:
        runs = {"": per_unit[unit.name], ", memory at limits": full_unit[unit.name]}
        matrix(unit, runs, args.discount, args.price)


if __name__ == "__main__":
    main()
