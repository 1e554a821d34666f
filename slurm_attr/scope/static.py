"""The static execution-context connector: a bundle directory that describes one job attempt.

Layout: `workload.json` (required), `app/` (job output), `nodes/<node>/` (system logs),
`controller/` (slurmctld log excerpts), `metrics/` (Prometheus query_range JSON). See README.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import hostlist

from slurm_attr.model import Workload
from slurm_attr.scope.sacct_json import select_attempt

STATES = {"FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "CANCELLED", "PREEMPTED",
          "BOOT_FAIL", "DEADLINE", "COMPLETED", "REQUEUED"}


class BundleError(Exception):
    """The bundle cannot be used; the message is one line an admin can act on."""


def expand_nodes(expr: str) -> list[str]:
    try:
        return hostlist.expand_hostlist(expr) if expr else []
    except hostlist.BadHostlist as exc:
        raise BundleError(f"bad node list {expr!r}: {exc}") from exc


def _time(value: Any, what: str) -> datetime:
    try:
        when = datetime.fromisoformat(str(value))
    except ValueError as exc:
        raise BundleError(f"workload.json: {what} is not an ISO 8601 time: {value!r}") from exc
    if when.tzinfo is None:
        raise BundleError(f"workload.json: {what} needs a UTC offset: {value!r}")
    return when


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise BundleError(f"no {path.name} in {path.parent}") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BundleError(f"cannot read {path.name}: {exc}") from exc
    if not isinstance(data, dict):
        raise BundleError(f"{path.name} must hold a JSON object")
    return data


def load_workload(bundle: Path) -> Workload:
    if not bundle.is_dir():
        raise BundleError(f"{bundle} is not a directory")
    raw = _read_json(bundle / "workload.json")
    for key in ("job_id", "nodes", "start", "end", "state"):
        if key not in raw:
            raise BundleError(f"workload.json: missing '{key}'")
    facts = dict(raw)
    if raw.get("sacct"):
        sacct = select_attempt(_read_json(bundle / raw["sacct"]), str(raw["job_id"]),
                               int(raw.get("attempt", 0)))
        if sacct is None:
            raise BundleError(f"{raw['sacct']}: job {raw['job_id']} is not in the sacct output")
        facts.update({k: v for k, v in sacct.items() if v not in (None, "", [])})
    state = str(facts["state"]).split()[0].upper()
    if state not in STATES:
        raise BundleError(f"workload.json: unknown state {facts['state']!r}")
    start = facts["start"] if isinstance(facts["start"], datetime) else _time(facts["start"], "start")
    end = facts["end"] if isinstance(facts["end"], datetime) else _time(facts["end"], "end")
    if end < start:
        raise BundleError("workload.json: end is before start")
    return Workload(
        cluster=str(facts.get("cluster") or "default"), job_id=str(facts["job_id"]),
        attempt=int(facts.get("attempt") or 0), name=str(facts.get("name") or ""),
        user=str(facts.get("user") or ""), partition=str(facts.get("partition") or ""),
        nodelist=str(facts["nodes"]), nodes=expand_nodes(str(facts["nodes"])),
        start=start, end=end, state=state, exit_code=str(facts.get("exit_code") or "0:0"),
        timezone=raw.get("timezone"), derived_exit_code=facts.get("derived_exit_code"),
        reason=facts.get("reason"), gpus_per_node=int(raw.get("gpus_per_node", 8)),
        steps=list(facts.get("steps") or []), failed_node=facts.get("failed_node"),
    )
