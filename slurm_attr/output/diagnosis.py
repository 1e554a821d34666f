"""The diagnosis document (schema slurm-attr/diagnosis/v1): the contract every consumer reads."""

from __future__ import annotations

from typing import Any

import orjson

from slurm_attr.engine.pipeline import Verdict
from slurm_attr.model import SCHEMA, Event, Observations, Workload
from slurm_attr.ruleset import Ruleset

_COVERAGE_ORDER = {"job_output": 0, "node_syslog": 1, "controller": 2, "metrics": 3, "sacct": 4}


def _root_cause(event: Event, events: list[Event], ruleset: Ruleset) -> dict[str, Any]:
    same_fault = [e for e in events if e.explained_by == event.index
                  and e.demoted_by == "companion_events"]
    nodes = sorted({n for n in [event.node, *(e.node for e in same_fault)] if n})
    return {
        "kind": event.kind,
        "code": event.code,
        "nodes": nodes,
        "gpu": {k: event.fields[k] for k in ("pci", "gpu", "link") if k in event.fields} or None,
        "time": event.time.isoformat() if event.time else None,
        "explanation": event.summary,
        "action": event.action or ruleset.policy["default_actions"].get(event.sub_domain or ""),
        "event": event.index,
        "evidence": [event.index, *(e.index for e in same_fault)],
    }


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".!?)" else text + "."


def _node_reason(root: Event, events: list[Event]) -> str | None:
    """The reason an admin or health check gave for the root's node going DOWN or drained."""
    if root.sub_domain != "host" or root.node is None:
        return None
    reasons = [e.fields["reason"] for e in events if e.node == root.node and e.fields.get("reason")
               and e.fields["reason"] != "no reason given"]
    return reasons[-1] if reasons else None


def _verdict_sentence(workload: Workload, sub_domain: str, root: Event | None, candidates: list[Event],
                      events: list[Event], status: str, trouble: Event | None) -> str:
    job = f"Job {workload.job_id}" + (f" (attempt {workload.attempt})" if workload.attempt else "")
    if root is not None:
        code = root.code or root.kind
        head = f"{job} ended {workload.state}"
        if code and code.strip().upper() != workload.state:
            head += f": {code}"
        if root.node:
            head += f" on {root.node}"
        text = f"{head}. {_sentence(root.summary)}"
        reason = _node_reason(root, events)
        if reason and reason not in text:
            text += f" Reason given for {root.node}: {_sentence(reason)}"
        if status == "hypothesis" and root.base_role == "context":
            text += (" No cause was logged; this error, non-fatal by itself, is the strongest "
                     "hardware trouble seen on the job's nodes while it ran: the lead to check first.")
        elif status == "hypothesis" and root.kind != "job_exit":
            text += " No cause was logged; this is the most likely reading of the symptoms."
        return text
    if candidates:
        names = "; ".join(f"{c.sub_domain} ({c.code or c.kind}" + (f" on {c.node})" if c.node else ")")
                          for c in candidates)
        return f"{job} ended {workload.state}: the evidence fits more than one cause: {names}."
    if workload.state == "COMPLETED":
        return f"{job} completed successfully (exit {workload.exit_code}); there is no failure to explain."
    text = f"{job} ended {workload.state}: no cause was found in the logs that could be read (see coverage)."
    if trouble is not None:
        times = f" ({trouble.count} times)" if trouble.count > 1 else ""
        text += f" The strongest trouble logged on its nodes while it ran{times}: "
        text += _sentence(trouble.summary)
    return text


def _affected_nodes(workload: Workload, root: Event | None, candidates: list[Event],
                    root_cause: dict[str, Any] | None) -> list[str]:
    if root_cause and root_cause["nodes"]:
        return root_cause["nodes"]
    if candidates:
        return sorted({c.node for c in candidates if c.node})
    if root is not None and root.kind == "scheduler_state":
        return list(workload.nodes)
    return []


def document(workload: Workload, obs: Observations, events: list[Event], verdict: Verdict,
             ruleset: Ruleset) -> dict[str, Any]:
    root = verdict.root
    outcomes = ruleset.policy["outcomes"]
    root_cause = _root_cause(root, events, ruleset) if root is not None else None
    sub_domain = verdict.sub_domain
    outcome = outcomes.get(sub_domain, "unknown")
    if root is not None and root.sub_domain == sub_domain:
        outcome = root.outcome_in(outcomes)  # e.g. a node misconfigured, not broken hardware
    if root is not None and root.kind == "scheduler_state" and workload.state == "CANCELLED" \
            and (workload.reason or "").strip() in ("by 0", "0", "root"):
        outcome = "scheduler"  # cancelled by root/SlurmUser: automation or an admin, not the user
    missing = [c for c in obs.coverage if c.status in ("missing", "error", "refused", "truncated")]
    coverage = sorted(obs.coverage, key=lambda c: (_COVERAGE_ORDER.get(c.collector, 9),
                                                   c.node or ""))
    return {
        "schema": SCHEMA,
        "ruleset_version": ruleset.version,
        "rules": dict(ruleset.versions),
        "workload": workload.to_dict(),
        "terminal_state": workload.state,
        "outcome": outcome,
        "sub_domain": sub_domain,
        "evidence_status": verdict.evidence_status,
        "verdict": _verdict_sentence(workload, sub_domain, root, verdict.candidates, events,
                                     verdict.evidence_status, verdict.trouble),
        "root_cause": root_cause,
        "candidates": [
            {"sub_domain": c.sub_domain, "outcome": c.outcome_in(outcomes),
             "code": c.code, "node": c.node, "time": c.time.isoformat() if c.time else None,
             "explanation": c.summary, "priority": c.priority, "event": c.index}
            for c in verdict.candidates
        ],
        "affected_nodes": _affected_nodes(workload, root, verdict.candidates, root_cause),
        "symptoms": [e.to_dict() for e in events],
        "coverage": [c.to_dict() for c in coverage],
        "missing_sources": [f"{c.collector}{'/' + c.node if c.node else ''}: {c.reason}"
                            for c in missing],
        "errors": sorted(obs.errors, key=lambda e: (e["collector"], e["file"] or "", e["message"])),
        "rule_trace": verdict.trace.entries,
    }


def dumps(diagnosis: dict[str, Any]) -> str:
    """Byte-identical for the same inputs: sorted keys, no timestamps of the run itself. The
    bytes are those of `json.dumps(sort_keys=True, indent=2, ensure_ascii=False)` (a test holds
    the two equal on every sample; the schema has no floats, where the two could differ); orjson
    writes them 15x faster, which a service answering with whole documents feels."""
    return orjson.dumps(diagnosis, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"
