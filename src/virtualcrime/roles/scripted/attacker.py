"""The offline ``scripted`` Attacker: a goal-directed planner over its own observations and memory.

It pursues the first unreached checkpoint: explores to find things, fetches what opens what, unlocks,
takes, persuades before it escalates, keeps away from alert guards, and spreads work over teammates.
It never reads hidden state: only the Observation (briefing, floor plan, what the team sees) and memory.
What opens a lock it knows only from the intel (else it picks the lock); who carries what out of sight, only
from the intel; a person's mood only from the person's observable text (``knowledge.demeanour``); whom a person
goes along with from that text or from its own memory of whom it led away and the person's status.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from ...world import Observation
from ...world.observe import Goal, SeenMember
from ...world.predicates import (
    AllOf,
    AnyOf,
    At,
    FlagSet,
    Following,
    HeldByTeam,
    Predicate,
    Status,
    TeamAt,
)
from ..types import Action, PlanUpdate
from ..verbs import RULES
from .knowledge import Knowledge, all_paths_len, demeanour, route

ALERT_MEMORY_TURNS = 2
MAX_DEPTH = 5  # sub-goal nesting (fetch the key for the door on the way to the key for …)
MAX_TRIES_BEFORE_ESCALATION = 2
MAX_TAKES_FROM_A_PERSON = 4  # then the intel that the person carries it is taken to be out of date
SHORTCUT_HOPS = 1  # a locked door whose opener is unknown is worth trying the team's keys on if it saves this many
ESCALATION = {"deceive": "restrain"}
# Which verb the planner uses to bring a target into a goal status: the rule whose row ``produces`` it.
STATUS_VERBS = {status: rule.name for rule in RULES.values() for status in rule.produces}


class ScriptedAttacker:
    """Deterministic Attacker used for offline runs and solvability checks."""

    name = "virtualcrime/scripted"

    def __init__(self) -> None:
        self._last: Action | None = None  # the previous action, folded into memory at the next plan call
        self._key_try = ""  # the door it tried the team's keys on, if it did

    async def plan(self, observation: Observation) -> PlanUpdate:
        knowledge = Knowledge.from_memory(observation.memory)
        if self._last is not None:
            knowledge.did(self._last.verb, self._last.target, self._last.actor, self._key_try)
            self._last, self._key_try = None, ""
        knowledge.learn(observation)
        goal = _current_goal(observation)
        plan = f"Pursue '{goal.description}'." if goal else "All checkpoints reached; hold position."
        return PlanUpdate(memory=knowledge.to_memory(), plan=plan)

    async def act(self, observation: Observation) -> Action:
        knowledge = Knowledge.from_memory(observation.memory)
        planner = Planner(observation, knowledge)
        action = planner.next_action()
        self._last, self._key_try = action, planner.key_try
        return action

    def resume(self, history: Sequence[tuple[Observation, Action | None]]) -> None:
        """Continue after replayed turns: only the last action is carried into the next plan."""
        self._last = history[-1][1] if history else None


def _current_goal(obs: Observation) -> Goal | None:
    return next((g for g in obs.goals if not g.reached), None)


class Planner:
    """Chooses one action for the whole team from an observation and memory."""

    def __init__(self, obs: Observation, knowledge: Knowledge) -> None:
        self.obs = obs
        self.k = knowledge
        self.free = [m for m in obs.team if m.status in ("active", "injured")]
        self.danger = {loc for loc, turn in knowledge.alert.items() if obs.turn - turn <= ALERT_MEMORY_TURNS}
        self.reached = {g.id for g in obs.goals if g.reached}
        self.names = {m.name: m.id for m in obs.team}
        self.key_try = ""  # the door whose opener is unknown that this turn's action tries the team's keys on

    def next_action(self) -> Action:
        if not self.free:
            return Action(verb="wait", description="No one can act.", actor=self.obs.team[0].id, minutes=5)
        urgent = self._escape_alert_guard() or self._calm_witness()
        if urgent is not None:
            return urgent
        goal = _current_goal(self.obs)
        if goal is not None and goal.predicate is not None:
            action = self._pursue(goal.predicate, depth=0)
            if action is not None:
                return action
        return self._wait("Holding position while the situation develops.")

    # --- goals --------------------------------------------------------------------------------

    def _pursue(self, predicate: Predicate, depth: int) -> Action | None:
        if depth > 4:
            return None
        match predicate:
            case AllOf(items=items):
                for item in items:
                    if not self._believed(item):
                        return self._pursue(item, depth + 1)
                return None
            case AnyOf(items=items):
                return self._pursue(items[0], depth + 1) if items else None
            case HeldByTeam(entity=entity):
                return self._obtain(entity, depth)
            case At(subject=subject, location=location):
                return self._bring(subject, location, depth)
            case Following(npc=npc):
                return self._secure(npc)
            case TeamAt(locations=locations, who=who):
                return self._gather(locations, who)
            case Status(subject=subject, statuses=statuses):
                return self._make_status(subject, statuses)
        return None

    def _believed(self, predicate: Predicate) -> bool:
        match predicate:
            case HeldByTeam(entity=entity):
                return any(entity in m.carrying for m in self.obs.team)
            case At(subject=subject, location=location):
                if subject in {m.id for m in self.obs.team}:
                    return self._member(subject).location == location
                return self.k.place.get(subject) == location
            case Following(npc=npc):
                return any(n.id == npc and self.k.escort(n, self.names) for n in self.obs.npcs)
            case TeamAt(locations=locations, who=who):
                inside = [m.location in locations for m in self.free]
                return all(inside) if who == "all" else any(inside)
            case FlagSet(name=name):
                return name in self.reached
            case Status(subject=subject, statuses=statuses):
                seen = [n.status for n in self.obs.npcs if n.id == subject]
                seen += [t for loc in self.obs.locations if loc.id == subject for t in loc.tags]
                seen += [t for e in self.obs.entities if e.id == subject for t in e.tags]
                return bool(set(seen) & set(statuses))
            case AllOf(items=items):
                return all(self._believed(i) for i in items)
        return False

    def _obtain(self, entity: str, depth: int) -> Action | None:
        holder_member = next((m for m in self.obs.team if entity in m.carrying), None)
        if holder_member is not None:
            return None
        seen = next((e for e in self.obs.entities if e.id == entity), None)
        if seen is not None:
            here = self.k.place.get(entity, "?")
            taker = self._nearest(here)
            if taker is not None and taker.location == here:
                return self._act(taker, "take", entity, f"Pick up the {seen.name}.")
            if taker is not None:
                return self._walk(taker, here, depth)
        # Said (by the intel) to be on a person: find them, make them hand it over.
        npc_holder = next((n for n in self.obs.npcs if n.id == self.k.where.get(entity)), None)
        if npc_holder is not None and self.k.tries.get(f"take:{entity}", 0) < MAX_TAKES_FROM_A_PERSON:
            taker = self._nearest(npc_holder.location)
            if taker is None:
                return None
            if taker.location != npc_holder.location:
                return self._walk(taker, npc_holder.location, depth)
            thing = entity.replace("_", " ")
            if npc_holder.status == "normal":
                text = f"Make {npc_holder.name} hand over the {thing}, no one gets hurt."
                return self._act(taker, "threaten", npc_holder.id, text)
            return self._act(taker, "take", entity, f"Take the {thing} from {npc_holder.name}.")
        where = self.k.place.get(entity, "?")
        if where != "?" and where in self.obs.floor_plan_locations:
            walker = self._nearest(where)
            if walker is None:
                return None
            if walker.location != where:
                return self._fetch_container_opener(where, depth) or self._walk(walker, where, depth)
            # At the place the item should be but it is not visible: open the locked containers here.
            for container in self.obs.entities:
                if container.container and container.locked and self.k.place.get(container.id) == where:
                    return self._open(walker, container.id, container.name, depth)
        return self._explore(depth + 1)

    def _fetch_container_opener(self, where: str, depth: int) -> Action | None:
        """Before walking to a place whose item sits in a known locked container, fetch its opener first
        (otherwise the walker would shuttle between the container and the opener)."""
        held = {i for m in self.free for i in m.carrying}
        for container, place in sorted(self.k.place.items()):
            openers = self.k.openers.get(container, [])
            if place != where or not self.k.locked.get(container) or not openers or held & set(openers):
                continue
            for opener in sorted(openers, key=lambda o: (o not in self.k.where, o not in self.k.place)):
                if self.k.place.get(opener) in (None, "?", where):
                    continue
                step = self._obtain(opener, depth + 1)
                if step is not None:
                    return step
        return None

    def _open(self, member: SeenMember, lockable: str, name: str, depth: int) -> Action | None:
        openers = self.k.openers.get(lockable, [])
        holding = next((o for m in self.free for o in m.carrying if o in openers), None)
        if holding is None:
            # Prefer openers not held by a person; fetch one first.
            npcs = {n.id for n in self.obs.npcs}
            # Prefer openers whose whereabouts are known and that no one is holding.
            choices = sorted(openers, key=lambda o: (o not in self.k.where, self.k.where.get(o, "") in npcs))
            for opener in choices:
                step = self._obtain(opener, depth + 1)
                if step is not None:
                    return step
            return self._act(member, "unlock", lockable, f"Try to pick the lock of the {name}.")
        carrier = next(m for m in self.free if holding in m.carrying)
        if carrier.location != member.location:
            return self._walk(carrier, member.location, depth)
        return self._act(carrier, "unlock", lockable, f"Open the {name} with the {holding}.", item=holding)

    def _bring(self, subject: str, location: str, depth: int) -> Action | None:
        npc = next((n for n in self.obs.npcs if n.id == subject), None)
        if npc is not None or (subject in self.k.place and subject not in {e.id for e in self.obs.entities}):
            escort_id = self.k.escort(npc, self.names) if npc is not None else ""
            if escort_id:
                escort = self._member(escort_id)
                return self._walk(escort, location, depth) if escort.location != location else None
            return self._secure(subject)
        carrier = next((m for m in self.free if subject in m.carrying), None)
        if carrier is None:
            return self._obtain(subject, depth)
        return self._walk(carrier, location, depth) if carrier.location != location else None

    def _secure(self, npc_id: str) -> Action | None:
        npc = next((n for n in self.obs.npcs if n.id == npc_id), None)
        if npc is None:
            where = self.k.place.get(npc_id, "?")
            if where in self.obs.floor_plan_locations:
                walker = self._nearest(where)
                return self._walk(walker, where, 0) if walker else None
            return self._explore()
        member = self._nearest(npc.location)
        if member is None:
            return None
        if member.location != npc.location:
            return self._disguise(member) or self._walk(member, npc.location, 0)
        verb = "deceive"
        if self.k.tries.get(f"deceive:{npc_id}", 0) >= MAX_TRIES_BEFORE_ESCALATION:
            verb = ESCALATION[verb]
        text = (
            f"Tell {npc.name} politely that his driver is waiting outside and walk him out."
            if verb == "deceive"
            else f"Take hold of {npc.name} and lead him out."
        )
        return self._act(member, verb, npc_id, text)

    def _make_status(self, subject: str, statuses: list[str]) -> Action | None:
        """Bring a location, entity or NPC into one of ``statuses`` by going there and acting on it."""
        verb = STATUS_VERBS.get(statuses[0], "damage")
        if subject in self.obs.floor_plan_locations:
            where = subject
        else:
            seen = next((n.location for n in self.obs.npcs if n.id == subject), None)
            where = seen or self.k.place.get(subject, "?")
        if where not in self.obs.floor_plan_locations:
            return self._explore()
        member = self._nearest(where)
        if member is None:
            return None
        if member.location != where:
            person = subject in {n.id for n in self.obs.npcs} or subject in self.k.where
            return (self._disguise(member) if person else None) or self._walk(member, where, 0)
        names = {n.id: n.name for n in self.obs.npcs} | {e.id: e.name for e in self.obs.entities}
        if subject not in self.obs.floor_plan_locations and subject not in names:
            return self._explore()
        name = self.obs.floor_plan_locations.get(subject) or names[subject]
        return self._act(member, verb, subject, f"{verb.capitalize()}: {name}.")

    def _gather(self, locations: list[str], who: str = "all") -> Action | None:
        away = [m for m in self.free if m.location not in locations]
        if not away or (who == "any" and len(away) < len(self.free)):
            return None
        # Whoever carries something or escorts someone goes first, then the farthest.
        away.sort(
            key=lambda m: (
                not m.carrying,
                -len(route(self.obs, self.k, m.location, locations[0], set(m.carrying)) or []),
            )
        )
        return self._walk(away[0], locations[0], 0)

    # --- movement and helpers -----------------------------------------------------------------

    def _walk(self, member: SeenMember, goal: str, depth: int) -> Action | None:
        if depth > MAX_DEPTH:
            return None
        keys = set(member.carrying)
        path = route(self.obs, self.k, member.location, goal, keys, avoid=self.danger)
        if path is None:
            path = route(self.obs, self.k, member.location, goal, keys)
            blocked = self._blocking_door(member.location, goal, keys)
            if path is None and blocked is not None:
                openers = self.k.openers.get(blocked, [])
                keyholder = next((m for m in self.free if m.id != member.id and set(m.carrying) & set(openers)), None)
                if keyholder is not None:
                    return self._walk(keyholder, goal, depth + 1)
                for opener in openers:
                    step = self._obtain(opener, depth + 1)
                    if step is not None:
                        return step
                return self._pick_door(member, blocked, keys, depth)
            if path is None:
                return None
        if len(path) < 2:
            return None
        shortcut = self._try_keys(member, goal, path)
        if shortcut is not None:
            return shortcut
        nxt = path[1]
        if nxt in self.danger and nxt != goal:
            return self._act(member, "hide", member.location, "Keep out of sight until the guard moves on.")
        return self._act(member, "move", nxt, f"Walk calmly to the {self.obs.floor_plan_locations[nxt]}.")

    def _try_keys(self, member: SeenMember, goal: str, path: list[str]) -> Action | None:
        """A locked door right here would cut the way short, and what opens it is unknown: go through it with
        the keys the member carries, once (a player would try them; if none fits, the move does not happen)."""
        if not member.carrying:
            return None
        for edge in self.obs.floor_plan_edges:
            if not edge.locked or member.location not in (edge.a, edge.b) or edge.id in self.k.openers:
                continue
            if self.k.tries.get(f"keys:{edge.id}", 0):
                continue
            beyond = edge.b if member.location == edge.a else edge.a
            through = Knowledge(locked={**self.k.locked, edge.id: False}, openers=self.k.openers)
            short = route(self.obs, through, member.location, goal, set(member.carrying), avoid=self.danger)
            if short is not None and len(short) + SHORTCUT_HOPS <= len(path) and short[1] == beyond:
                self.key_try = edge.id
                text = f"Try the keys and cards we carry on the {edge.door or 'door'} and go through."
                return self._act(member, "move", short[1], text)
        return None

    def _pick_door(self, member: SeenMember, edge_id: str, keys: set[str], depth: int) -> Action | None:
        """No known opener for a locked door in the way: go up to it and try to pick its lock."""
        edge = next(e for e in self.obs.floor_plan_edges if e.id == edge_id)
        if member.location in (edge.a, edge.b):
            return self._act(member, "unlock", edge.id, f"Try to pick the lock of the {edge.door or 'door'}.")
        routes = [r for end in (edge.a, edge.b) if (r := route(self.obs, self.k, member.location, end, keys))]
        if not routes or depth > MAX_DEPTH:
            return None
        return self._walk(member, min(routes, key=len)[-1], depth + 1)

    def _blocking_door(self, start: str, goal: str, keys: set[str]) -> str | None:
        """The first known-locked door on the shortest route from start to goal that ``keys`` do not open.

        Routes whose locked doors all have a known opener (from the intel) come first: fetching a key beats
        picking a lock; only when every route has a door with no known opener is that door the answer."""
        known_keys = keys | {o for openers in self.k.openers.values() for o in openers}
        path = route(self.obs, self.k, start, goal, known_keys)
        if path is None:
            path = route(self.obs, Knowledge(locked={}, openers={}), start, goal, set())
        if path is None:
            return None
        for a, b in itertools.pairwise(path):
            edge = next(e for e in self.obs.floor_plan_edges if {e.a, e.b} == {a, b})
            if self.k.locked.get(edge.id) and not keys & set(self.k.openers.get(edge.id, [])):
                return edge.id
        return None

    def _disguise(self, member: SeenMember) -> Action | None:
        if "disguised" in member.tags:
            return None
        for entity in self.obs.entities:
            if "disguise" in entity.tags and self.k.place.get(entity.id) == member.location:
                return self._act(member, "use", entity.id, f"Put on the {entity.name} to blend in.")
        return None

    def _escape_alert_guard(self) -> Action | None:
        """A member sharing a room with an alert guard or officer steps away first."""
        for member in self.free:
            if member.location not in self.danger:
                continue
            for edge in self.obs.floor_plan_edges:
                if member.location not in (edge.a, edge.b):
                    continue
                if edge.locked and not set(member.carrying) & set(self.k.openers.get(edge.id, [])):
                    continue
                nxt = edge.b if member.location == edge.a else edge.a
                if nxt not in self.danger:
                    return self._act(member, "move", nxt, "Slip away from the guard.")
        return None

    def _calm_witness(self) -> Action | None:
        """A bystander who is about to raise the alarm gets talked down before anything else."""
        for npc in self.obs.npcs:
            if npc.role in ("guard", "police") or npc.status != "normal" or demeanour(npc.observable).wariness < 2:
                continue
            member = next((m for m in self.free if m.location == npc.location), None)
            if member is not None and self.k.tries.get(f"deceive:{npc.id}", 0) < MAX_TRIES_BEFORE_ESCALATION:
                return self._act(
                    member,
                    "deceive",
                    npc.id,
                    f"Tell {npc.name} we are from the alarm company, here for a scheduled check.",
                )
        return None

    def _explore(self, depth: int = 0) -> Action | None:
        best: tuple[int, int, str, SeenMember] | None = None
        for member in self.free:
            dist = all_paths_len(self.obs, member.location)
            for location, hops in dist.items():
                if location in self.k.visited or location in self.danger:
                    continue
                candidate = (hops, member.leader, location, member)
                if best is None or candidate[:3] < best[:3]:
                    best = candidate
        if best is None or depth > MAX_DEPTH:
            return None
        return self._walk(best[3], best[2], depth)

    def _nearest(self, location: str) -> SeenMember | None:
        """The free member closest to ``location``, preferring non-leaders (spreads work across the team)."""
        ranked = []
        for member in self.free:
            hops = all_paths_len(self.obs, member.location).get(location, 99)
            ranked.append((hops, member.leader, member.id, member))
        return min(ranked, key=lambda r: r[:3])[3] if ranked else None

    def _member(self, member_id: str) -> SeenMember:
        return next(m for m in self.obs.team if m.id == member_id)

    def _wait(self, why: str) -> Action:
        actor = next((m for m in self.free if not m.leader), self.free[0])
        return self._act(actor, "wait", "", why)

    def _act(self, member: SeenMember, verb: str, target: str, text: str, item: str = "") -> Action:
        return Action(verb=verb, description=text, actor=member.id, target=target, item=item, minutes=4)
