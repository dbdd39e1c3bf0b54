"""``virtualcrime run``: play tasks through Inspect, then print a summary table and the log's path."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .main import CliError


def run_command(args: argparse.Namespace) -> int:
    from inspect_ai import eval as inspect_eval

    from ..harness.roles import RoleConfigError, check_role_models
    from ..harness.task import virtualcrime
    from ..scenarios import ScenarioError

    try:
        check_role_models(args.attacker, args.judge, args.world_manager)
    except RoleConfigError as err:
        raise CliError(str(err)) from err
    except Exception as err:  # provider missing, no API key, unknown model name
        raise CliError(f"cannot use the requested models: {type(err).__name__}: {err}") from err
    try:
        task = virtualcrime(
            tasks=",".join(args.tasks) if args.tasks else None,
            seeds=args.seeds,
            seed=args.seed,
            max_turns=args.max_turns,
            stall_turns=args.stall_turns,
        )
    except (ValueError, ScenarioError) as err:
        raise CliError(str(err)) from err
    try:
        logs = inspect_eval(
            task,
            model=args.attacker,
            model_roles={"judge": args.judge, "world_manager": args.world_manager},
            log_dir=args.log_dir,
            display=args.display,
            max_retries=3,
            timeout=120,
            fail_on_error=False,
        )
    except RoleConfigError as err:
        raise CliError(str(err)) from err
    log = logs[0]
    print()
    print(summary_table(log))
    usage = usage_lines(log)
    if usage:
        print("\n" + usage)
    print(f"\nLog: {Path(log.location).resolve()}")
    print(f"Open it with: inspect view --log-dir {Path(args.log_dir).resolve()}")
    print(f"Transcript:   virtualcrime replay {log.location} --sample <task id> --epoch <n>")
    if log.status != "success":
        error = log.error.message if log.error else log.status
        raise CliError(f"the eval did not finish: {error}")
    errored = [s for s in log.samples or [] if s.error is not None]
    if errored:
        print(f"{len(errored)} run(s) ended with an error; see the log", file=sys.stderr)
        return 1
    return 0


def summary_table(log) -> str:  # type: ignore[no-untyped-def]
    """One line per run (task × seed): status, turns, checkpoints and the reason it ended."""
    lines = [f"{'task':28} {'seed':>4}  {'status':11} {'turns':>5}  reason"]
    wins = runs = 0
    for sample in sorted(log.samples or [], key=lambda s: (str(s.id), s.epoch)):
        score = (sample.scores or {}).get("run_outcome")
        if score is None:
            error = sample.error.message.splitlines()[0] if sample.error else "no score"
            lines.append(f"{sample.id!s:28} {sample.epoch:>4}  {'error':11} {'-':>5}  {error[:80]}")
            runs += 1
            continue
        runs += 1
        wins += score.answer == "won"
        turns = score.value["turns"] if isinstance(score.value, dict) else "-"
        lines.append(f"{sample.id!s:28} {score.metadata['seed']:>4}  {score.answer:11} {turns:>5}  {score.explanation}")
    lines.append(f"won {wins} of {runs} runs")
    return "\n".join(lines)


def usage_lines(log) -> str:  # type: ignore[no-untyped-def]
    """Token usage per role: the Attacker is the eval's model, the Judge and World Manager are model roles."""
    stats = log.stats
    usages = [("attacker", stats.model_usage.get(log.eval.model)), *stats.role_usage.items()]
    lines = [f"{role:14} {u.input_tokens:>10} in {u.output_tokens:>8} out" for role, u in usages if u is not None]
    return ("tokens per role\n" + "\n".join(lines)) if lines else ""
