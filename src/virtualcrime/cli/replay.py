"""``virtualcrime replay``: a readable transcript of logged runs, turn by turn."""

from __future__ import annotations

import argparse

from .main import CliError


def replay_command(args: argparse.Namespace) -> int:
    from inspect_ai.log import read_eval_log

    from ..engine.render import render_result, render_turn

    try:
        log = read_eval_log(args.log)
    except (OSError, ValueError) as err:
        raise CliError(f"cannot read log {args.log}: {err}") from err
    samples = [
        s
        for s in log.samples or []
        if (args.sample is None or str(s.id) == args.sample) and (args.epoch is None or s.epoch == args.epoch)
    ]
    if not samples:
        known = sorted({f"{s.id} (epoch {s.epoch})" for s in log.samples or []})
        raise CliError(f"no run matches; the log holds: {', '.join(known) or 'no samples'}")
    if args.verify:
        return _verify(log, samples)
    for sample in samples:
        turns, result = _records(args.log, sample)
        print(f"## {sample.id} · epoch {sample.epoch}\n")
        for record in turns:
            if args.turn is None or record.turn == args.turn:
                print(render_turn(record, observation=not args.brief))
                print()
        if result is not None and args.turn is None:
            print(render_result(result))
            print()
    return 0


def _records(path: str, sample):  # type: ignore[no-untyped-def]
    from ..harness.store import LogFormatError, records_from_store

    try:
        return records_from_store(dict(sample.store))
    except LogFormatError as err:
        raise CliError(f"{path}: sample {sample.id} epoch {sample.epoch}: {err}") from err


def _verify(log, samples) -> int:  # type: ignore[no-untyped-def]
    """Re-execute each run and compare with its records; 0 when every run reproduces exactly.

    An ordinary run is re-executed: offline roles decide again, language-model roles parse their recorded
    replies again, with the run's seed. A fork (whose early turns were played by its parent's roles), a human
    game (the person's actions cannot be asked again) and a log without model events are replayed from the
    recorded role outputs instead.
    """
    import asyncio

    from ..engine import EngineConfig
    from ..engine.replay import verify
    from ..harness.fork import fork_reseed
    from ..harness.human import is_human
    from ..harness.log_reader import role_model
    from ..harness.reexecute import reexecution_roles
    from ..harness.roles import RoleOptions
    from ..harness.solver import run_seed
    from ..scenarios import ScenarioError, get_task

    args = log.eval.task_args or {}
    models = {
        "attacker": log.eval.model,
        "judge": role_model(log.eval.model_roles, "judge"),
        "world_manager": role_model(log.eval.model_roles, "world_manager"),
    }
    config = EngineConfig(max_turns=int(args.get("max_turns", 60)), stall_turns=int(args.get("stall_turns", 30)))
    failed = 0
    for sample in samples:
        turns, result = _records(log.location, sample)
        metadata = dict(sample.metadata or {})
        reseed = fork_reseed(metadata)
        parent = metadata.get("parent")
        if isinstance(parent, dict):  # a fork: its turns before the fork point replay with the parent's seed
            seed = int(parent["seed"])
        else:
            seed = result.seed if result is not None else run_seed(sample.epoch, int(args.get("seed", 0)))
        name = f"{sample.id} epoch {sample.epoch} (seed {seed})"
        try:
            state = get_task(str(sample.metadata.get("task_id", sample.id))).initial_state()
        except (ValueError, ScenarioError) as err:
            raise CliError(f"{name}: {err}") from err
        roles, how = None, "replayed from recorded role outputs"
        replayable = not isinstance(parent, dict) and not is_human(models["attacker"])
        if replayable and (sample.events or not _uses_models(turns)):
            options = RoleOptions(run_scope=f"{sample.metadata.get('task_id', sample.id)}/seed{seed}",
                                  max_attempts=int(args.get("max_attempts", 3)))  # fmt: skip
            roles, how = reexecution_roles(models, sample.events or [], options), "re-executed"
        problems = asyncio.run(verify(state, seed, turns, result, config, reseed, roles))
        if problems:
            failed += 1
            print(f"MISMATCH {name} ({how}): {len(problems)} difference(s)")
            for problem in problems[:10]:
                print(f"  {problem}")
        else:
            ending = f", {result.status.value}" if result is not None else ", unfinished"
            print(f"OK       {name}: {len(turns)} turns reproduce exactly ({how}){ending}")
    print(f"\n{len(samples) - failed} of {len(samples)} run(s) reproduce exactly")
    return 1 if failed else 0


def _uses_models(turns) -> bool:  # type: ignore[no-untyped-def]
    return any(t.model_calls for t in turns)
