"""Fanning analysis out over a Ray cluster: one Ray task per log file, so every file has one reader or writer.

``report --engine ray`` reads each log in its own task; ``rejudge --engine ray`` re-judges each log (and writes
it) in its own task. Results come back in the order of the inputs, and everything computed from them (the
bootstrap included) runs after gathering, so the figures do not depend on the number of workers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")
Mapper = Callable[[Callable[[T], R], list[T]], list[R]]


def _apply(fn: Callable[[Any], Any], item: Any) -> Any:
    return fn(item)


def connect(address: str | None) -> None:
    """Join the cluster at ``address`` (None: $RAY_ADDRESS, else a new one on this machine) unless connected."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)


def ray_mapper(workers: int | None = None, address: str | None = None) -> Mapper[T, R]:
    """A mapper that runs ``fn`` on each item in its own Ray task, at most ``workers`` at once (default: as many as
    the cluster has CPUs), returning the results in the items' order."""

    def mapper(fn: Callable[[T], R], items: list[T]) -> list[R]:
        import ray

        connect(address)
        if not items:
            return []
        task: Any = ray.remote(_apply)
        at_once = workers or max(1, int(float(ray.cluster_resources().get("CPU", 1))))  # type: ignore[no-untyped-call]
        fn_ref = ray.put(fn)
        results: dict[int, R] = {}
        running: dict[Any, int] = {}
        queue = list(enumerate(items))
        while queue or running:
            while queue and len(running) < at_once:
                index, item = queue.pop(0)
                running[task.remote(fn_ref, item)] = index
            ready, _ = ray.wait(list(running), num_returns=1)
            for ref in ready:
                results[running.pop(ref)] = ray.get(ref)
        return [results[index] for index in range(len(items))]

    return mapper
