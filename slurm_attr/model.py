"""The data model every stage shares: one job attempt in, typed events through, one diagnosis out."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import TYPE_CHECKING, Any

_NUMBERS = re.compile(r"0x[0-9a-fA-F]+|\d+")

if TYPE_CHECKING:
    from slurm_attr.output.document import StepDoc, WorkloadDoc

SCHEMA = "slurm-attr/diagnosis/v1"

SUB_DOMAINS = (
    "gpu", "gpu_memory", "nvlink", "network", "storage", "host", "application",
    "gpu_oom", "host_oom", "time_limit", "preemption", "requeued", "cancelled", "ambiguous", "unknown",
)
OUTCOMES = ("hardware", "infrastructure", "application", "scheduler", "user", "unknown")


@dataclass(frozen=True)
class Step:
    """One job step as the scheduler accounted it (`123.0`, `123.batch`)."""

    id: str
    name: str = ""
    state: str = ""
    exit_code: str | None = None
    nodes: str = ""
    start: datetime | None = None
    end: datetime | None = None
    ntasks: int | None = None  # how many tasks the step launched, where the scheduler said
    distribution: str = ""  # how srun laid them out on the nodes (block, cyclic, plane=N ...)

    def to_dict(self) -> StepDoc:
        doc: StepDoc = {"id": self.id, "name": self.name, "state": self.state, "exit_code": self.exit_code,
                        "nodes": self.nodes, "start": self.start.isoformat() if self.start else None,
                        "end": self.end.isoformat() if self.end else None}
        if self.ntasks is not None:  # only where known: older documents stay as they were
            doc["ntasks"] = self.ntasks
        if self.distribution:
            doc["distribution"] = self.distribution
        return doc


@dataclass
class AttemptFacts:
    """What the scheduler's accounting says of one attempt (sacct's text or JSON output, in any
    Slurm version), before it is checked into a Workload. What a source does not say stays None."""

    cluster: str
    job_id: str
    attempt: int = 0  # index among the job's attempts, oldest first
    name: str = ""
    user: str = ""
    partition: str = ""
    nodes: str = ""  # the node list as sacct prints it ("None assigned" included)
    submit: datetime | None = None
    start: datetime | None = None
    end: datetime | None = None
    state: str = ""
    exit_code: str = "0:0"
    derived_exit_code: str | None = None
    reason: str | None = None
    gpus_per_node: int | None = None
    failed_node: str | None = None
    steps: list[Step] = field(default_factory=list)
    flags: tuple[str, ...] = ()
    cancelled_by_uid: str | None = None  # `CANCELLED by <uid>`
    kill_request_user: str | None = None
    work_dir: str | None = None

    def known(self) -> dict[str, Any]:
        """The facts the source gave, by field name (a bundle's sacct file adds these to its
        workload.json)."""
        return {f.name: value for f in fields(self)
                if (value := getattr(self, f.name)) is not None and value != "" and value != []
                and value != ()}


@dataclass
class Workload:
    """The scheduler's facts about one job attempt."""

    cluster: str
    job_id: str
    attempt: int
    name: str
    user: str
    partition: str
    nodelist: str
    nodes: list[str]
    start: datetime
    end: datetime
    state: str
    exit_code: str
    timezone: str | None = None
    # per log origin (node, controller, app), where a source's zone is not `timezone`
    log_timezones: dict[str, str] = field(default_factory=dict)
    derived_exit_code: str | None = None
    reason: str | None = None
    gpus_per_node: int = 8
    steps: list[Step] = field(default_factory=list)
    failed_node: str | None = None

    @property
    def elapsed_s(self) -> float:
        return max(0.0, (self.end - self.start).total_seconds())

    def to_dict(self) -> WorkloadDoc:
        return {
            "cluster": self.cluster,
            "job_id": self.job_id,
            "attempt": self.attempt,
            "name": self.name,
            "user": self.user,
            "partition": self.partition,
            "nodelist": self.nodelist,
            "nodes": self.nodes,
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "elapsed_s": int(self.elapsed_s),
            "state": self.state,
            "exit_code": self.exit_code,
            "derived_exit_code": self.derived_exit_code,
            "reason": self.reason,
            "failed_node": self.failed_node,
            "gpus_per_node": self.gpus_per_node,
            "steps": [step.to_dict() for step in self.steps],
        }


@dataclass(frozen=True)
class SourceRef:
    """Where an event came from: enough to show the verbatim line in context."""

    file: str
    line: int
    text: str
    match: str = ""  # the part of the line the rule matched, for highlighting
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "text": self.text, "match": self.match,
                "before": list(self.before), "after": list(self.after)}


@dataclass(eq=False)
class Event:
    """One typed observation extracted from a log line (or from the scheduler record)."""

    kind: str
    rule: str
    node: str | None
    time: datetime | None
    time_quality: str
    source: SourceRef
    sub_domain: str | None
    base_role: str  # cause | symptom | context, as the extraction rule classified it
    priority: int
    summary: str
    code: str | None = None
    action: str | None = None
    outcome: str | None = None  # the rule's own outcome, where not the sub_domain's usual one
    fields: dict[str, str] = field(default_factory=dict)
    count: int = 1
    last_time: datetime | None = None
    role: str = "interesting"  # root | interesting | context, decided by the engine
    demoted_by: str | None = None
    explained_by: int | None = None
    in_window: bool = True
    index: int = 0

    def outcome_in(self, outcomes: dict[str, str]) -> str:
        """Who acts on this event as a cause: the rule's own outcome, else its sub_domain's
        (policy.yaml `outcomes`)."""
        return self.outcome or outcomes.get(self.sub_domain or "", "unknown")

    def burst_key(self) -> tuple:
        """What repeats of one event share: the numbers in a summary (counters, addresses) vary."""
        return (self.node, self.rule, self.code, _NUMBERS.sub("#", self.summary))

    def sort_key(self) -> tuple:
        t = self.time.timestamp() if self.time else float("inf")
        return (t, self.node or "", self.source.file, self.source.line, self.kind)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.index,
            "kind": self.kind,
            "rule": self.rule,
            "code": self.code,
            "node": self.node,
            "time": self.time.isoformat() if self.time else None,
            "last_time": self.last_time.isoformat() if self.last_time else None,
            "time_quality": self.time_quality,
            "count": self.count,
            "sub_domain": self.sub_domain,
            "role": self.role,
            "demoted_by": self.demoted_by,
            "explained_by": self.explained_by,
            "priority": self.priority,
            "summary": self.summary,
            "fields": dict(sorted(self.fields.items())),
            "source": self.source.to_dict(),
        }


@dataclass
class Coverage:
    """What one collector read (or failed to read) for one node or source."""

    collector: str
    node: str | None
    status: str = "missing"  # ok | empty | missing | error | refused | truncated
    reason: str | None = None
    files: list[str] = field(default_factory=list)
    lines: int = 0
    bytes: int = 0
    first_time: datetime | None = None
    last_time: datetime | None = None
    notes: list[str] = field(default_factory=list)
    truncated: list[str] = field(default_factory=list)  # files a read cap stopped early, and why
    written: list[str] = field(default_factory=list)  # files that held anything (not in the document)

    def saw(self, when: datetime | None) -> None:
        if when is None:
            return
        if self.first_time is None or when < self.first_time:
            self.first_time = when
        if self.last_time is None or when > self.last_time:
            self.last_time = when

    def to_dict(self) -> dict[str, Any]:
        return {
            "collector": self.collector,
            "node": self.node,
            "status": self.status,
            "reason": self.reason,
            "files": sorted(self.files),
            "lines": self.lines,
            "bytes": self.bytes,
            "span": {
                "first": self.first_time.isoformat() if self.first_time else None,
                "last": self.last_time.isoformat() if self.last_time else None,
            },
            "notes": sorted(set(self.notes)),
        }


@dataclass
class Observations:
    """Everything collected for one attempt: raw events plus what each collector covered."""

    events: list[Event] = field(default_factory=list)
    coverage: list[Coverage] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)

    def error(self, collector: str, message: str, file: str | None = None) -> None:
        self.errors.append({"collector": collector, "file": file, "message": message})
