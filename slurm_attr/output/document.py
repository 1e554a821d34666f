"""The diagnosis document's shape for type checkers: what `schema/diagnosis-v1.json` says, as
TypedDicts, so that code reading a stored or returned diagnosis is checked key by key
(`tests/test_schema.py` keeps the two in step)."""

from __future__ import annotations

from typing import TypedDict


class _StepFields(TypedDict):
    id: str
    name: str
    state: str
    exit_code: str | None
    nodes: str
    start: str | None  # ISO 8601, like every time in the document
    end: str | None


class StepDoc(_StepFields, total=False):
    ntasks: int  # only where the scheduler said
    distribution: str


class WorkloadDoc(TypedDict):
    cluster: str
    job_id: str
    attempt: int
    name: str
    user: str
    partition: str
    nodelist: str
    nodes: list[str]
    start: str
    end: str
    elapsed_s: int
    state: str
    exit_code: str
    derived_exit_code: str | None
    reason: str | None
    failed_node: str | None
    gpus_per_node: int
    steps: list[StepDoc]


class SourceDoc(TypedDict):
    file: str
    line: int
    text: str
    match: str
    before: list[str]
    after: list[str]


class EventDoc(TypedDict):
    id: int
    kind: str
    rule: str
    code: str | None
    node: str | None
    time: str | None
    last_time: str | None
    time_quality: str
    count: int
    sub_domain: str | None
    role: str
    demoted_by: str | None
    explained_by: int | None
    priority: int
    summary: str
    fields: dict[str, str]
    source: SourceDoc


class RootCauseDoc(TypedDict):
    kind: str
    code: str | None
    nodes: list[str]
    gpu: dict[str, str] | None
    time: str | None
    explanation: str
    action: str | None
    event: int
    evidence: list[int]


class CandidateDoc(TypedDict):
    sub_domain: str
    outcome: str
    code: str | None
    node: str | None
    time: str | None
    explanation: str
    priority: int
    event: int


class SpanDoc(TypedDict):
    first: str | None
    last: str | None


class CoverageDoc(TypedDict):
    collector: str
    node: str | None
    status: str
    reason: str | None
    files: list[str]
    lines: int
    bytes: int
    span: SpanDoc
    notes: list[str]


class ErrorDoc(TypedDict):
    collector: str
    file: str | None
    message: str


class TraceDoc(TypedDict):
    stage: str
    rule: str
    changed: str
    events: list[int]


class RulesDoc(TypedDict):
    xid_catalog: str
    nvlink5_catalog: str
    overlay: str


class DiagnosisDoc(TypedDict):
    schema: str
    ruleset_version: str
    rules: RulesDoc
    workload: WorkloadDoc
    terminal_state: str
    outcome: str
    sub_domain: str
    evidence_status: str
    verdict: str
    root_cause: RootCauseDoc | None
    candidates: list[CandidateDoc]
    affected_nodes: list[str]
    symptoms: list[EventDoc]
    coverage: list[CoverageDoc]
    missing_sources: list[str]
    errors: list[ErrorDoc]
    rule_trace: list[TraceDoc]
