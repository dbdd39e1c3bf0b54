"""Readable text (Markdown) for turn records: used by ``inspect view`` events and ``virtualcrime replay``."""

from __future__ import annotations

from ..world.ops import Operation
from .records import RunResult, TurnRecord


def op_text(op: Operation) -> str:
    """One operation as ``name(field=value, …)``."""
    fields = op.model_dump(exclude={"op"})
    return f"{op.op}(" + ", ".join(f"{k}={v!r}" for k, v in fields.items()) + ")"


def render_turn(record: TurnRecord, observation: bool = True) -> str:
    """A turn as Markdown: observation summary, plan, action, distribution, draw, ops, rejections, flags."""
    headline = f"### Turn {record.turn} · {record.clock}"
    if record.outcome is not None:
        catastrophic = " (catastrophic)" if record.outcome.catastrophic else ""
        headline += f" — **{record.outcome.category.value}**{catastrophic}"
    lines = [headline]
    if record.action is not None:
        a = record.action
        extra = f" with {a.item}" if a.item else ""
        lines.append(
            f"**Action:** `{a.verb}` by {a.actor} → {a.target or '—'}{extra}, {a.minutes} min: {a.description}"
        )
    obs = record.observation
    if observation:
        team = ", ".join(
            f"{m.name} @ {m.location} ({m.status}{', carrying ' + '/'.join(m.carrying) if m.carrying else ''})"
            for m in obs.team
        )
        lines.append(f"**Team:** {team}")
        seen = ", ".join(f"{n.name} ({n.role}, {n.status}) @ {n.location}" for n in obs.npcs)
        lines.append(f"**Sees:** {seen or 'no one'}")
        items = ", ".join(f"{e.name} in {e.location}{' (locked)' if e.locked else ''}" for e in obs.entities)
        lines.append(f"**Items in view:** {items or 'none'}")
    if record.plan is not None:
        lines.append(f"**Plan:** {record.plan.plan}")
    if record.precheck:
        lines.append(f"**Pre-check:** impossible — {record.precheck}")
    if record.verdict is not None:
        v = record.verdict
        dims = ", ".join(f"{name} {getattr(v.feasibility, name).score}" for name in type(v.feasibility).model_fields)
        lines.append(
            f"**Verdict** ({'judge' if record.judge_called else 'pre-check'}, "
            f"{'risky' if v.risky else 'not risky'}): {dims}"
        )
        for index, o in enumerate(v.outcomes):
            mark = "➜ " if index == record.outcome_index else "  "
            cat = " **catastrophic**" if o.catastrophic else ""
            lines.append(f"- {mark}`{o.category.value}` p={o.probability:.3f}{cat}: {o.description}")
        if record.draw is not None:
            lines.append(f"**Draw:** u={record.draw:.4f} → outcome {record.outcome_index}")
    for stage in record.stages:
        applied = [op_text(e.op) for e in record.ledger if e.stage == stage.stage and e.applied]
        lines.append(f"**{stage.stage}:** {stage.note}" + (f" — {'; '.join(applied)}" if applied else ""))
    for entry in record.rejected:
        lines.append(f"- rejected ({entry.stage}): {op_text(entry.op)} — {entry.reason}")
    if record.new_checkpoints:
        lines.append(f"**New checkpoints:** {', '.join(record.new_checkpoints)}")
    if record.new_failures:
        lines.append(f"**Critical failure:** {', '.join(record.new_failures)}")
    for call in record.model_calls:
        if call.repairs or call.errors or not call.ok:
            status = "ok" if call.ok else "FAILED"
            lines.append(f"**Model call** {call.call}: {status} after {call.attempts} attempt(s)"
                         + (f"; repairs: {'; '.join(call.repairs)}" if call.repairs else "")
                         + (f"; errors: {'; '.join(call.errors)}" if call.errors else ""))  # fmt: skip
    for error in record.errors:
        lines.append(f"**Role failure** ({error.role} {error.stage}): {error.message}")
    for problem in record.invariant_violations:
        lines.append(f"**Invariant violated:** {problem}")
    return "\n\n".join(lines)


def render_result(result: RunResult) -> str:
    return (
        f"**Run {result.task_id} seed {result.seed}: {result.status.value}** after {result.turns} turns "
        f"({result.reason}); checkpoints: {', '.join(result.checkpoints_reached) or 'none'}"
    )
