"""Breadth-first search over a location graph, shared by the NPC rules, the scripted planner and the linter."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar


class Connection(Protocol):
    @property
    def a(self) -> str: ...

    @property
    def b(self) -> str: ...


C = TypeVar("C", bound=Connection)


def _search(
    edges: Sequence[C], start: str, stop: str | None, passable: Callable[[C, str], bool]
) -> dict[str, str | None]:
    """BFS tree (node -> predecessor) from ``start``, exploring edges in list order; stops early at ``stop``."""
    previous: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        if here == stop:
            break
        for edge in edges:
            if here not in (edge.a, edge.b):
                continue
            nxt = edge.b if here == edge.a else edge.a
            if nxt not in previous and passable(edge, nxt):
                previous[nxt] = here
                queue.append(nxt)
    return previous


def shortest_path(
    edges: Sequence[C], start: str, goal: str, passable: Callable[[C, str], bool] = lambda edge, nxt: True
) -> list[str] | None:
    """The shortest route from ``start`` to ``goal`` (both included) over passable edges, or None."""
    previous = _search(edges, start, goal, passable)
    if goal not in previous:
        return None
    path = [goal]
    while (before := previous[path[-1]]) is not None:
        path.append(before)
    return path[::-1]


def hop_distances(edges: Sequence[C], start: str) -> dict[str, int]:
    """Hops from ``start`` to every reachable node, ignoring locks."""
    previous = _search(edges, start, None, lambda edge, nxt: True)
    distance: dict[str, int] = {}
    for node in previous:  # insertion order is BFS order, so each predecessor is already measured
        before = previous[node]
        distance[node] = 0 if before is None else distance[before] + 1
    return distance
