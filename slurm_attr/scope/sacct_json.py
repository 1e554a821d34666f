"""Reading `sacct --json` output from Slurm 22.05 through 25.x.

Fields moved between data_parser versions: numbers became `{"set", "infinite", "number"}`
objects (23.11+), `state.current` became a list, and on 22.05/23.02 the job-level `exit_code`
reads SUCCESS for jobs that exited non-zero (SchedMD bug 17457), so the exit code is cross-checked
against the steps' and the derived exit code.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from slurm_attr.model import AttemptFacts, Step

_SIGNAL_STATUSES = {"SIGNALED", "CORE_DUMPED"}


def number(value: Any) -> int | None:
    """A plain number or a 23.11+ `{"set": true, "number": N}` object."""
    if isinstance(value, dict):
        if not value.get("set", True) or value.get("infinite"):
            return None
        value = value.get("number")
    if isinstance(value, bool) or value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def state_of(job: dict[str, Any]) -> tuple[str, list[str]]:
    """(base state, flags) from `state.current` as a string (22.05) or a list (23.11+)."""
    state = job.get("state") or {}
    current = state.get("current") if isinstance(state, dict) else state
    if isinstance(current, str):
        current = current.split()
    current = [str(s).upper() for s in (current or [])]
    base = next((s for s in current if s not in _FLAGS), current[0] if current else "UNKNOWN")
    return base, [s for s in current if s != base]


_EPOCH = datetime.fromtimestamp(0, tz=UTC)
_FLAGS = {"REQUEUED", "COMPLETING", "CONFIGURING", "LAUNCH_FAILED", "RESIZING", "STAGE_OUT",
          "SPECIAL_EXIT", "REQUEUE_HOLD", "REQUEUE_FED", "SIGNALING", "STOPPED", "UPDATE_DB",
          "POWER_UP_NODE", "RECONFIG_FAIL", "REVOKED", "RESV_DEL_HOLD"}


def exit_code_of(obj: dict[str, Any] | None) -> tuple[int, int] | None:
    """(exit status, signal) from any version's exit_code object; None when absent."""
    if not isinstance(obj, dict):
        return None
    status = obj.get("status")
    statuses = status if isinstance(status, list) else [status]
    rc = number(obj.get("return_code")) or 0
    signal = obj.get("signal") or {}
    sig = number(signal.get("id", signal.get("signal_id"))) or 0
    if not any(s in _SIGNAL_STATUSES for s in statuses):
        sig = sig if rc == 0 else 0
    return rc, sig


def _epoch(value: Any) -> datetime | None:
    seconds = number(value)
    if not seconds:
        return None
    return datetime.fromtimestamp(seconds, tz=UTC)


def steps_of(job: dict[str, Any]) -> list[Step]:
    steps = []
    for step in job.get("steps") or []:
        ident = step.get("step") or {}
        name = ident.get("name") or ""
        step_id = ident.get("id")
        if isinstance(step_id, dict):  # 23.11+: {"job_id", "step_id", ...}
            step_id = step_id.get("step_id")
        state, _ = state_of(step)
        code = exit_code_of(step.get("exit_code"))
        nodes = step.get("nodes") or {}
        times = step.get("time") or {}
        tasks = step.get("tasks") if isinstance(step.get("tasks"), dict) else {}
        layout = step.get("task") if isinstance(step.get("task"), dict) else {}
        steps.append(Step(id=str(step_id if step_id is not None else name), name=name, state=state,
                          exit_code=f"{code[0]}:{code[1]}" if code else None,
                          nodes=nodes.get("range") or ",".join(nodes.get("list") or []),
                          start=_epoch(times.get("start")), end=_epoch(times.get("end")),
                          ntasks=number(tasks.get("count")),
                          distribution=str(layout.get("distribution") or "")))
    return sorted(steps, key=lambda s: (s.start is not None, s.start or _EPOCH, s.id))


def parse_job(job: dict[str, Any]) -> AttemptFacts:
    """The workload facts of one job object, normalised across versions."""
    state, flags = state_of(job)
    time = job.get("time") or {}
    steps = steps_of(job)
    code = exit_code_of(job.get("exit_code"))
    derived = exit_code_of(job.get("derived_exit_code"))
    failing = [s for s in steps if s.exit_code and s.exit_code != "0:0"]
    exit_code = f"{code[0]}:{code[1]}" if code else "0:0"
    if exit_code == "0:0" and state not in ("COMPLETED",) and failing:
        # 22.05/23.02 report SUCCESS for a non-zero exit: trust the steps instead.
        batch = next((s for s in failing if s.name == "batch"), failing[0])
        exit_code = batch.exit_code or exit_code
    state_reason = (job.get("state") or {}).get("reason") if isinstance(job.get("state"), dict) else None
    association = job.get("association") or {}
    return AttemptFacts(
        cluster=job.get("cluster") or association.get("cluster") or "",
        job_id=str(job.get("job_id", "")), attempt=number(job.get("restart_cnt")) or 0,
        name=job.get("name") or "", user=job.get("user") or association.get("user") or "",
        partition=job.get("partition") or association.get("partition") or "",
        nodes=job.get("nodes") or "", start=_epoch(time.get("start")), end=_epoch(time.get("end")),
        state=state, flags=tuple(flags), exit_code=exit_code,
        derived_exit_code=f"{derived[0]}:{derived[1]}" if derived else None, reason=state_reason,
        failed_node=job.get("failed_node") or None, steps=steps,
    )


def select_attempt(doc: dict[str, Any], job_id: str, attempt: int | None) -> AttemptFacts | None:
    """The job object for this id and attempt; sacct -D lists every requeued attempt."""
    matches = [parse_job(j) for j in doc.get("jobs") or [] if str(j.get("job_id")) == str(job_id)]
    if not matches:
        return None
    matches.sort(key=lambda j: j.start or _EPOCH)
    if attempt is None:
        return matches[-1]
    by_count = [j for j in matches if j.attempt == attempt]
    if by_count:
        return by_count[-1]
    return matches[attempt] if attempt < len(matches) else None
