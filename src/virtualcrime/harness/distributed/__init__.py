"""``virtualcrime bench --engine ray``: the matrix as shards (one attacker × one task, seeds as epochs) on a Ray
cluster, each shard played by the single-machine bench in its own process and folder (docs/distributed.md)."""
