"""``bench --engine ray`` on a two-node cluster (``ray.cluster_utils.Cluster`` on 127.0.0.1) when a node is removed
mid-run: its shards are played again on the other node from their checkpoints, and no record is lost or doubled."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from threading import Thread
from typing import Any

import pytest

from ray_support import bench_args, checkpoint_turns, logged_runs, reference, require_ray, shard_status, wait_for
from virtualcrime.cli.main import main

require_ray()
TURNS = 10


@pytest.fixture(scope="module")
def two_nodes() -> Iterator[tuple[Any, list[Any]]]:
    import ray
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    # Fast failure detection, so a removed node's tasks fail in seconds rather than the default half minute.
    config = {"health_check_period_ms": 500, "health_check_failure_threshold": 3, "health_check_timeout_ms": 500}
    head = {"num_cpus": 0, "node_ip_address": "127.0.0.1", "include_dashboard": False, "_system_config": config}
    cluster = Cluster(initialize_head=True, head_node_args=head)
    nodes = [cluster.add_node(num_cpus=2, node_ip_address="127.0.0.1") for _ in range(2)]
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False, namespace="virtualcrime", _node_ip_address="127.0.0.1")
    yield cluster, nodes
    ray.shutdown()
    cluster.shutdown()


def test_removing_a_node_mid_run_loses_and_repeats_nothing(two_nodes: tuple[Any, list[Any]], tmp_path: Path) -> None:
    cluster, nodes = two_nodes
    root = tmp_path / "matrix"
    code: list[int] = []
    thread = Thread(target=lambda: code.append(main(bench_args(root, TURNS, "--engine", "ray", "--latency", "0.03"))),
                    daemon=True)  # fmt: skip
    thread.start()
    busy = wait_for(lambda: [p for p, n in checkpoint_turns(root).items() if n >= 3], 120, "a run 3 turns in")
    node_id = json.loads((busy[0].parents[1] / "worker.json").read_text())["node"]
    [node] = [n for n in nodes if n.node_id == node_id]
    on_node = [p.parent.name for p in root.glob("shards/*/*/.virtualcrime/worker.json")
               if json.loads(p.read_text())["node"] == node_id]  # fmt: skip
    cluster.remove_node(node)
    thread.join(300)
    assert code == [0]
    assert logged_runs(root) == reference(TURNS)
    status = shard_status(root)
    assert all(s["phase"] == "done" for s in status.values())
    again = [s for s in status.values() if s["attempts"] == 2]
    assert len(again) >= len(on_node) >= 1  # the removed node's shards were played again, on the other node
    assert {json.loads(p.read_text())["node"] for p in root.glob("shards/*/*/.virtualcrime/worker.json")} == {
        n.node_id for n in nodes if n is not node
    }
