"""The live Slurm connector: sacct, sacctmgr and scontrol, run by the worker (never by the hook).

`sacct --parsable2` is the primary source: it exists on every Slurm version and its ExitCode
column is right, where the 22.05 JSON reads `SUCCESS 0` for failed jobs and even for their steps.
`sacct --json`, where it works, only adds what the columns lack (failed node, kill requester,
restart count). Times are asked for in UTC so no local zone leaks into the timeline.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Protocol

from slurm_attr.config import Settings
from slurm_attr.model import AttemptFacts, Step, Workload
from slurm_attr.scope.sacct_json import number, steps_of
from slurm_attr.scope.static import expand_nodes

FIELDS = ["JobIDRaw", "JobID", "JobName", "User", "Partition", "NodeList", "Submit", "Start", "End",
          "State", "ExitCode", "DerivedExitCode", "Cluster", "AllocTRES", "WorkDir", "Reason",
          "NTasks", "Layout"]
# A row needs the columns up to Reason; the step layout columns came later (a wrapper or a saved
# answer may lack them), and without them ranks are only placed by the one-rank-per-GPU guess.
_REQUIRED = FIELDS.index("Reason") + 1
_TIMEOUT_S = 120
# Job names, work dirs and reasons are user text and may hold "|": columns are split on this.
DELIMITER = "\x1e|"
FAILURE_STATES = ("FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "CANCELLED", "PREEMPTED",
                  "BOOT_FAIL", "DEADLINE", "REQUEUED")


class SlurmError(Exception):
    """A Slurm command failed or is missing; the worker retries these later."""


def run(argv: list[str], timeout: int = _TIMEOUT_S) -> str:
    env = dict(os.environ, TZ="UTC", SLURM_TIME_FORMAT="%Y-%m-%dT%H:%M:%S")
    try:
        result = subprocess.run(argv, capture_output=True, text=True, errors="replace",
                                timeout=timeout, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SlurmError(f"{argv[0]}: {exc}") from exc
    if result.returncode != 0:
        raise SlurmError(f"{' '.join(argv[:2])} exited {result.returncode}: "
                         f"{result.stderr.strip()[-300:]}")
    return result.stdout


def _utc(value: str) -> datetime | None:
    if not value or value in ("Unknown", "None"):
        return None
    try:
        return datetime.fromisoformat(value).replace(tzinfo=UTC)
    except ValueError:
        return None


def _gpus(tres: str) -> int:
    """GPUs per node from AllocTRES (`gres/gpu=16,node=2` -> 8)."""
    parts = dict(p.split("=", 1) for p in tres.split(",") if "=" in p)
    gpus, nodes = number(parts.get("gres/gpu")), number(parts.get("node")) or 1
    return gpus // nodes if gpus else 0


def parse_parsable(text: str) -> dict[str, list[AttemptFacts]]:
    """Job id -> its attempts (oldest first), as sacct_json.parse_job gives them too."""
    jobs: dict[str, list[AttemptFacts]] = {}
    current: AttemptFacts | None = None
    for line in text.split("\n"):
        cols = line.split(DELIMITER)
        if len(cols) < _REQUIRED:
            continue
        row = dict(zip(FIELDS, cols, strict=False))
        job_id, _, step = row["JobIDRaw"].partition(".")
        if not step:
            current = _job_facts(row)
            jobs.setdefault(job_id, []).append(current)
        elif current is not None and current.job_id == job_id:
            current.steps.append(_step_facts(row, step))
    never = datetime.min.replace(tzinfo=UTC)
    for attempts in jobs.values():
        attempts.sort(key=lambda j: (j.submit or never, j.start or never))
        for index, job in enumerate(attempts):
            job.attempt = index
    return jobs


def _job_facts(row: dict[str, str]) -> AttemptFacts:
    state, _, by = row["State"].partition(" by ")
    return AttemptFacts(
        cluster=row["Cluster"], job_id=row["JobIDRaw"], name=row["JobName"], user=row["User"],
        partition=row["Partition"], nodes=row["NodeList"], submit=_utc(row["Submit"]),
        start=_utc(row["Start"]), end=_utc(row["End"]), state=state.strip().upper(),
        cancelled_by_uid=by.strip() or None, exit_code=row["ExitCode"] or "0:0",
        derived_exit_code=row["DerivedExitCode"] or None,
        reason=None if row["Reason"] in ("", "None") else row["Reason"],
        gpus_per_node=_gpus(row["AllocTRES"]), work_dir=row["WorkDir"] or None,
    )


def _step_facts(row: dict[str, str], step: str) -> Step:
    return Step(id=step, name=row["JobName"], state=row["State"].split(" ")[0].upper(),
                exit_code=row["ExitCode"] or None, nodes=row["NodeList"],
                start=_utc(row["Start"]), end=_utc(row["End"]),
                ntasks=number(row.get("NTasks")) or None,
                distribution=_node_distribution(row.get("Layout", "")))


def _node_distribution(layout: str) -> str:
    """sacct's Layout name -> how tasks went over the nodes: `Block`, `Cyclic`, and the two-level
    names whose first letter is the node level (`BCyclic`: block over nodes, cyclic over sockets;
    `CBlock`, `CFCyclic` ...); `Plane`, `Arbitrary` and `Unknown` place no rank."""
    name = layout.split(",")[0].strip()
    if name in ("Block", "Cyclic"):
        return name.lower()
    if len(name) > 1 and name[0] in "BC" and name[1:].lstrip("F") in ("Block", "Cyclic"):
        return "block" if name[0] == "B" else "cyclic"
    return name.lower() if name in ("Plane", "Arbitrary") else ""


def _with_layout(steps: list[Step], from_json: list[Step]) -> list[Step]:
    """The columns' steps with the task count and distribution the JSON tells where they lack it."""
    layouts = {s.id.rsplit(".", 1)[-1]: s for s in from_json}
    out = []
    for step in steps:
        known = layouts.get(step.id)
        if known and not step.ntasks:
            step = replace(step, ntasks=known.ntasks, distribution=known.distribution)
        out.append(step)
    return out


@dataclass
class NodeEvent:
    node: str
    start: datetime
    end: datetime | None
    state: str
    reason: str
    user: str


class SlurmClient(Protocol):
    """What the worker, backfill and live collection ask of Slurm. `SlurmCommands` answers by
    running sacct, sacctmgr and scontrol; tests replay output recorded from a real cluster."""

    def sacct(self, job_ids: list[str]) -> dict[str, list[AttemptFacts]]: ...

    def failed_job_ids(self, since: datetime, until: datetime) -> list[str]: ...

    def node_events(self, nodes: list[str], start: datetime, end: datetime) -> list[NodeEvent]: ...

    def cluster_name(self) -> str: ...

    def job_streams(self, job_id: str) -> dict[str, str]: ...


Runner = Callable[[list[str]], str]  # argv -> stdout, raising SlurmError on failure


class SlurmCommands:
    """The Slurm client that runs the commands (through `runner`, which tests may replace with a
    replay of recorded output so that the parsing below is what they exercise)."""

    def __init__(self, settings: Settings, runner: Runner | None = None) -> None:
        self.settings = settings
        self.run: Runner = runner or run
        self._json_ok: bool | None = None

    def sacct(self, job_ids: list[str]) -> dict[str, list[AttemptFacts]]:
        """Every attempt (`--duplicates`) of these jobs, with their steps; one call for all."""
        if not job_ids:
            return {}
        out = self.run([self.settings.sacct, "--duplicates", "--parsable2", "--noheader", "--allusers",
                   f"--delimiter={DELIMITER}", "--format=" + ",".join(FIELDS),
                   "--jobs=" + ",".join(job_ids)])
        jobs = parse_parsable(out)
        self._enrich_from_json(job_ids, jobs)
        return jobs

    def failed_job_ids(self, since: datetime, until: datetime) -> list[str]:
        """Jobs with an attempt that ended in a failure state within the window."""
        fmt = "%Y-%m-%dT%H:%M:%S"
        out = self.run([self.settings.sacct, "--allusers", "--duplicates", "--allocations", "--noheader",
                   "--parsable2", "--format=JobIDRaw", "--state=" + ",".join(FAILURE_STATES),
                   f"--starttime={since.astimezone(UTC):{fmt}}",
                   f"--endtime={until.astimezone(UTC):{fmt}}"])
        return sorted({line.strip() for line in out.splitlines() if line.strip().isdigit()}, key=int)

    def _enrich_from_json(self, job_ids: list[str], jobs: dict[str, list[AttemptFacts]]) -> None:
        if self._json_ok is False:
            return
        try:
            doc = json.loads(self.run([self.settings.sacct, "--duplicates", "--allusers", "--json",
                                  "--jobs=" + ",".join(job_ids)]))
            self._json_ok = True
        except (SlurmError, ValueError):
            self._json_ok = False  # built without the JSON plugin: the columns are enough
            return
        for raw in doc.get("jobs") or []:
            attempts = jobs.get(str(raw.get("job_id")), [])
            start = number((raw.get("time") or {}).get("start"))
            for job in attempts:
                if job.start and start and int(job.start.timestamp()) == start:
                    job.failed_node = raw.get("failed_node") or job.failed_node
                    job.kill_request_user = raw.get("kill_request_user") or None
                    job.steps = _with_layout(job.steps, steps_of(raw))

    def node_events(self, nodes: list[str], start: datetime, end: datetime) -> list[NodeEvent]:
        """Node state changes (down, drain, with reasons: admins, NHC) around the window."""
        fmt = "%Y-%m-%dT%H:%M:%S"
        out = self.run([self.settings.sacctmgr, "--noheader", "--parsable2", "show", "event",
                   "nodes=" + ",".join(nodes), f"start={start.astimezone(UTC):{fmt}}",
                   f"end={end.astimezone(UTC):{fmt}}", "format=NodeName,TimeStart,TimeEnd,State,Reason,User"])
        events = []
        for line in out.splitlines():
            cols = line.split("|")  # sacctmgr has no --delimiter: the reason is all but the ends
            began = _utc(cols[1]) if len(cols) >= 6 and cols[0] else None
            if began is None:
                continue
            reason = "|".join(cols[4:-1])
            events.append(NodeEvent(cols[0], began, _utc(cols[2]), cols[3], reason, cols[-1]))
        return events

    def job_streams(self, job_id: str) -> dict[str, str]:
        """The job's StdOut, StdErr and WorkDir as the hook would have seen them, from scontrol
        while slurmctld still holds the job (MinJobAge); empty once it has been purged."""
        try:
            out = self.run([self.settings.scontrol, "--oneliner", "show", "job", job_id])
        except SlurmError:
            return {}
        found = {key: m.group(1) for key in ("StdOut", "StdErr", "WorkDir")
                 if (m := re.search(rf"(?:^|\s){key}=(\S+)", out))}
        return {f"SLURM_JOB_{k.upper().replace('WORKDIR', 'WORK_DIR')}": v for k, v in found.items()}

    def cluster_name(self) -> str:
        if self.settings.cluster:
            return self.settings.cluster
        out = self.run([self.settings.scontrol, "show", "config"])
        for line in out.splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "ClusterName":
                return value.strip()
        raise SlurmError("scontrol show config has no ClusterName")


def _cancelled_by(facts: AttemptFacts) -> str | None:
    """Who cancelled the job: `CANCELLED by <uid>` (the name where this host knows the uid)."""
    if facts.kill_request_user:
        return str(facts.kill_request_user)
    uid = facts.cancelled_by_uid
    if not uid or not uid.isdigit():
        return None
    try:
        return f"{pwd.getpwuid(int(uid)).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def workload_from(facts: AttemptFacts, cluster: str) -> Workload:
    """A Workload from one attempt's sacct facts (the job must have ended)."""
    nodelist = facts.nodes if facts.nodes not in ("", "None assigned") else ""
    start, end = facts.start or facts.submit, facts.end
    if start is None or end is None:
        raise SlurmError(f"job {facts.job_id}: sacct shows no start or end for attempt {facts.attempt}")
    reason = _cancelled_by(facts) if facts.state == "CANCELLED" else facts.reason
    return Workload(
        cluster=facts.cluster or cluster, job_id=facts.job_id, attempt=facts.attempt,
        name=facts.name, user=facts.user, partition=facts.partition, nodelist=nodelist,
        nodes=expand_nodes(nodelist), start=start, end=end, state=facts.state,
        exit_code=facts.exit_code, derived_exit_code=facts.derived_exit_code, reason=reason,
        gpus_per_node=facts.gpus_per_node or 0, steps=facts.steps, failed_node=facts.failed_node,
    )
