"""A World Manager that knows only what its prompts say can move every task to a win and to a loss.

The stand-in below never looks at the rules code or the engine: it reads the flag conditions from the system
message (the ``exactly: {...}`` predicates), and the world from the prompt's text with the decoder of
``test_prompt_information`` (the static world and the legend in the system message, the turn's start in the user
message, then the operations the earlier stages applied since), and emits operations the prompt lists. If the
prompts left out what the engine checks (a tag name, which status counts, that a locked door needs unlocking),
some task could not be won this way."""

from __future__ import annotations

import asyncio
import json
import re
from collections import deque
from typing import Any

import pytest

from test_prompt_information import read_applied, read_world
from virtualcrime.engine import EngineConfig, Game, Roles, RunStatus
from virtualcrime.roles import Action, PlanUpdate
from virtualcrime.roles.llm import LLMWorldManager
from virtualcrime.roles.rules import RulesJudge
from virtualcrime.roles.types import Prompt, Reply
from virtualcrime.scenarios import load_tasks
from virtualcrime.world import Observation, apply_in_place

CONDITION = re.compile(r"^- (checkpoint|failure) (\S+) .*; exactly: (\{.*\})$", flags=re.MULTILINE)


class WaitingAttacker:
    """An Attacker that only waits: everything that happens is the World Manager's doing."""

    name = "waiting"

    async def plan(self, observation: Observation) -> PlanUpdate:
        return PlanUpdate(memory="", plan="wait")

    async def act(self, observation: Observation) -> Action:
        leader = next(m for m in observation.team if m.leader)
        return Action(verb="wait", description="Wait.", actor=leader.id, minutes=1)


class PromptReader:
    """Plans one turn's operations toward the flags it wants, from the prompt's text alone."""

    def __init__(self, prompt: Prompt, goal: str) -> None:
        world = read_world(prompt)  # the turn's start, from the prompt's text alone
        apply_in_place(world, [op for _, op, applied in read_applied(prompt) if applied])  # what this stage acts on
        self.edges = [{"id": e.id, "a": e.a, "b": e.b} for e in world.edges]
        conditions = [(kind, flag, json.loads(exact)) for kind, flag, exact in CONDITION.findall(prompt.system)]
        assert conditions, "the system message states no flag conditions"
        wanted = (
            [c for c in conditions if c[0] == "checkpoint"]
            if goal == "win"
            else [next(c for c in conditions if c[0] == "failure")]
        )
        self.members: dict[str, Any] = {k: v.model_dump(mode="json") for k, v in world.members.items()}
        self.npcs: dict[str, Any] = {k: v.model_dump(mode="json") for k, v in world.npcs.items()}
        self.entities: dict[str, Any] = {k: v.model_dump(mode="json") for k, v in world.entities.items()}
        self.locked = {e.id for e in world.edges if e.locked}
        self.flags = {c.id for c in world.checkpoints if c.reached}
        self.ops: list[dict[str, Any]] = []
        self.moved: set[str] = set()
        for _, flag, predicate in wanted:
            if flag not in self.flags:
                self.achieve(predicate, {c[1] for c in conditions})

    def free(self) -> list[str]:
        return [m for m, v in self.members.items() if v["status"] in ("active", "injured")]

    def place(self, thing: str) -> str:
        for table in (self.members, self.npcs, self.entities):
            if thing in table:
                holder = table[thing]["current_location"]
                return holder if holder == thing else self.place(holder)
        return thing

    def step(self, who: str, goal: str) -> None:
        """One edge along the shortest path toward ``goal``, unlocking the door first if it is locked."""
        start = self.place(who)
        if start == goal or who in self.moved:
            return
        previous: dict[str, tuple[str, str]] = {}
        queue, seen = deque([start]), {start}
        while queue:
            here = queue.popleft()
            for e in self.edges:
                if here in (e["a"], e["b"]):
                    there = e["b"] if here == e["a"] else e["a"]
                    if there not in seen:
                        seen.add(there)
                        previous[there] = (here, e["id"])
                        queue.append(there)
        node = goal
        while node in previous and previous[node][0] != start:
            node = previous[node][0]
        if node not in previous:
            return
        edge = previous[node][1]
        if edge in self.locked:
            self.ops.append({"op": "set_lock", "subject": edge, "locked": False})
        self.ops.append({"op": "move", "subject": who, "to": node})
        self.moved.add(who)
        for npc, data in self.npcs.items():  # whoever follows this member walks along
            if data.get("following") == who and npc not in self.moved:
                self.ops.append({"op": "move", "subject": npc, "to": node})
                self.moved.add(npc)

    def carry(self, entity: str) -> str | None:
        """A member who carries ``entity``, or None while one is still on the way to it."""
        carrier = self.entities[entity]["current_location"]
        while carrier in self.entities:
            carrier = self.entities[carrier]["current_location"]
        if carrier in self.members:
            return carrier
        member = self.free()[0]
        if self.place(member) != self.place(entity):
            self.step(member, self.place(entity))
            return None
        container = self.entities[entity]["current_location"]
        while container in self.entities:
            if self.entities[container]["locked"]:
                self.ops.append({"op": "set_lock", "subject": container, "locked": False})
            container = self.entities[container]["current_location"]
        self.ops.append({"op": "transfer", "item": entity, "to": member})
        return None

    def achieve(self, p: dict[str, Any], flag_ids: set[str]) -> None:
        kind = p["kind"]
        if kind == "all_of":
            for item in p["items"]:
                self.achieve(item, flag_ids)
        elif kind == "any_of":
            self.achieve(p["items"][0], flag_ids)
        elif kind == "team_at":
            for member in self.free() if p["who"] == "all" else self.free()[:1]:
                self.step(member, p["locations"][0])
        elif kind == "status":
            subject, status = p["subject"], p["statuses"][0]
            if subject in self.npcs:
                self.ops.append({"op": "set_npc_status", "npc": subject, "status": status})
            elif subject in self.members:
                self.ops.append({"op": "set_member_status", "member": subject, "status": status})
            else:
                self.ops.append({"op": "set_tag", "subject": subject, "tag": status})
        elif kind == "team_status":
            for member in list(self.members) if p["who"] == "all" else list(self.members)[:1]:
                self.ops.append({"op": "set_member_status", "member": member, "status": p["statuses"][0]})
        elif kind in ("held_by_team", "at") and p.get("entity", p.get("subject")) in self.entities:
            carrier = self.carry(p.get("entity", p.get("subject")))
            if carrier is not None and kind == "at":
                self.step(carrier, p["location"])
        elif kind in ("at", "following") and p.get("npc", p.get("subject")) in self.npcs:
            npc = p.get("npc", p.get("subject"))
            member = self.free()[0]
            if self.npcs[npc].get("following") != member:
                if self.place(member) != self.place(npc):
                    self.step(member, self.place(npc))
                else:  # the member waits this turn, so the one who now follows starts out beside them
                    self.ops.append({"op": "set_following", "npc": npc, "member": member})
                    self.moved.add(member)
            elif kind == "at":
                self.step(member, p["location"])
        elif kind == "at" and p["subject"] in self.members:
            self.step(p["subject"], p["location"])
        elif kind == "alarm":
            self.ops.append({"op": "set_alarm", "ringing": True})
        elif kind == "flag" and p["name"] not in flag_ids:
            self.ops.append({"op": "set_flag", "flag": p["name"]})


def prompt_reading_world_manager(goal: str) -> LLMWorldManager:
    async def generate(prompt: Prompt, *, call: str, turn: int, schema: dict[str, Any]) -> Reply:
        if call != "world_manager_direct_effects":
            return Reply(text='{"ops": [], "note": "nothing else happens"}')
        ops = PromptReader(prompt, goal).ops
        return Reply(text=json.dumps({"ops": [{"op": "advance_clock", "minutes": 1}, *ops], "note": "as planned"}))

    return LLMWorldManager(generate, "prompt-reader")


def play(task_id: str, goal: str) -> tuple[Game, RunStatus, str]:
    task = load_tasks()[task_id]
    roles = Roles(WaitingAttacker(), RulesJudge(), prompt_reading_world_manager(goal))
    game = Game(task.initial_state(), roles, seed=0, config=EngineConfig(max_turns=60, stall_turns=60))
    result = asyncio.run(game.run())
    return game, result.status, result.reason


@pytest.mark.parametrize("goal", ["win", "lose"])
def test_a_world_manager_that_follows_its_prompts_can_latch_every_tasks_flags(goal: str) -> None:
    wanted = RunStatus.WON if goal == "win" else RunStatus.LOST
    missed = {}
    for task_id in sorted(load_tasks()):
        game, status, reason = play(task_id, goal)
        if status != wanted:
            rejected = [f"{e.op.op}: {e.reason}" for r in game.records for e in r.rejected][:3]
            missed[task_id] = f"{status.value} ({reason}); rejected: {rejected}"
    assert not missed, missed
