"""The rule engine: events in, one diagnosis out.

Stages run in a fixed order: extract (done by the collectors) -> filter -> correlate -> refine ->
outcome. Every named rule records what it changed in the rule trace, so an admin can follow
exactly why one event became the root and every other one was demoted.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import hostlist

from slurm_attr.decode.base import render
from slurm_attr.model import Event, Observations, SourceRef, Step, Workload
from slurm_attr.ruleset import Ruleset

_SCHEDULER_KILL_STATES = {"TIMEOUT", "DEADLINE", "CANCELLED", "PREEMPTED", "NODE_FAIL"}
_TEARDOWN_DOMAINS = {None, "application", "gpu_oom"}
_MOST_RANKS_ON_A_NODE = 1024  # more than any one node runs: a higher "rank" is not one


@dataclass
class Trace:
    entries: list[dict[str, Any]] = field(default_factory=list)

    def add(self, stage: str, rule: str, changed: str, events: list[Event] | None = None) -> None:
        self.entries.append({"stage": stage, "rule": rule, "changed": changed,
                             "events": sorted(e.index for e in events or [])})


@dataclass
class Verdict:
    root: Event | None
    candidates: list[Event]
    evidence_status: str
    sub_domain: str
    trace: Trace
    # For an unknown verdict: the strongest non-fatal hardware or infrastructure event logged on
    # the job's nodes while it ran, the first thing an admin would look at.
    trouble: Event | None = None


def _seconds(policy: dict[str, Any], section: str, key: str) -> timedelta:
    return timedelta(seconds=float(policy[section][key]))


def _before_or_near(cause: Event, later: Event, slack: timedelta) -> bool:
    if cause.time is None or later.time is None:
        return True
    return cause.time <= later.time + slack


def _demote(event: Event, rule: str, by: Event | None) -> None:
    event.role = "interesting"
    event.demoted_by = rule
    event.explained_by = by.index if by else None


# Step states that say why a job whose own state is only FAILED ended.
_STEP_STATES_THAT_EXPLAIN = {"OUT_OF_MEMORY", "NODE_FAIL"}
_STEP_OK = {"COMPLETED", "RUNNING", "PENDING", ""}
_SHORT_NUMBER = re.compile(r"\d{1,3}", re.ASCII)


def _exit_signal(code: str, signal: str) -> int | None:
    """The signal that ended a job: sacct's `0:9`, or a shell's exit code 128+N for a child it lost.
    Only short numbers are read, so a malformed exit code from any source cannot overflow int()."""
    if _SHORT_NUMBER.fullmatch(signal) and signal != "0":
        return int(signal)
    if _SHORT_NUMBER.fullmatch(code) and 128 < int(code) <= 128 + 64:
        return int(code) - 128
    return None


def _node_phrase(node: str | None) -> str:
    """The {node} of a scheduler state's sentence (policy `scheduler_states`)."""
    return f"node {node}" if node else "one of the job's nodes"


def _expand(nodes: str | None) -> list[str]:
    try:
        return hostlist.expand_hostlist(nodes) if nodes else []
    except hostlist.BadHostlist:
        return []


class Engine:
    def __init__(self, ruleset: Ruleset, workload: Workload) -> None:
        self.ruleset = ruleset
        self.policy = ruleset.policy
        self.workload = workload
        self.trace = Trace()
        self.slack = _seconds(self.policy, "window", "cause_slack_s")
        self.early_faults: list[Event] = []
        self.hung: list[Event] = []  # failures the job hung on until its limit (policy hung_on)
        self.lost_to: list[Event] = []  # symptoms made the cause of a lost node (lost_node_after)
        # causes read from output that stopped (stalled_before_first_result)
        self.read_from_silence: list[Event] = []

    # ------------------------------------------------------------------ entry point
    def run(self, obs: Observations) -> tuple[list[Event], Verdict]:
        events = list(obs.events) + self.scheduler_events()
        events.sort(key=Event.sort_key)
        for i, event in enumerate(events):
            event.index = i
        self.trace.add("extract", "extract", f"{len(events)} events from {len(obs.coverage)} sources")
        events = self.window_filter(events)
        events, mismatched = self.collective_mismatch(events)
        self.trace.add("correlate", "collectives_must_match",
                       f"{len(mismatched)} ranks made a collective call the others did not", mismatched)
        absent = self.ranks_absent_from_timeouts(events)  # before one rank's burst hides the others
        apart = self.ranks_in_different_collectives(events)
        events = self.fold_bursts(events)
        events, promoted = self.disagreements(events)
        for i, event in enumerate(events):
            event.index = i
        self.trace.add("correlate", "must_agree",
                       f"{len(promoted)} hosts chose differently from the job's other hosts", promoted)
        live = [e for e in events if e.in_window and e.base_role != "context"]
        outcomes = self.policy["outcomes"]
        # Hardware or infrastructure trouble that is not a cause by itself: a fault logged before
        # the job started, or a non-fatal event during it (an NVSwitch error, a corrected error).
        self.early_faults = [e for e in events
                             if ((e.base_role == "cause" and not e.in_window)
                                 or (e.base_role == "context" and e.in_window))
                             and e.outcome_in(outcomes) in ("hardware", "infrastructure")]
        live_ids = {id(e) for e in live}
        for event in events:
            event.role = "interesting" if id(event) in live_ids else "context"
        self.hung_on_failures(live)
        self.lost_node_after(live, events)
        self.hung_after_done(live, obs)
        self.stalled_before_first_result(live, obs)
        self.absent_from_timeouts(absent)
        self.timeouts_disagree(apart)
        self.across_hosts(live)
        self.without_gpus(live)
        self.companion_events(live)
        self.aftermath(live)
        self.downstream_causes(live)
        self.teardown_after_scheduler_kill(live)
        self.hang_explains_limit(live)
        self.cause_explains_symptoms(live)
        return events, self.refine(live)

    # ------------------------------------------------------------------ scheduler facts
    def scheduler_events(self) -> list[Event]:
        w = self.workload
        events = []
        spec = self.policy["scheduler_states"].get(w.state)
        if spec:
            # a state of a one-node job is that node's; of a larger one, only a failed node is named
            node = w.failed_node if w.state == "NODE_FAIL" else None
            if node is None and len(w.nodes) == 1:
                node = w.nodes[0]
            text = f"State={w.state} ExitCode={w.exit_code}" + (f" Reason={w.reason}" if w.reason else "")
            events.append(self._state_event(spec, w.state, w.exit_code, node, w.end, "workload", text))
        step = self._first_failed_step()
        if step and step.state != w.state and step.state in _STEP_STATES_THAT_EXPLAIN:
            events.append(self._step_event(step))
        exit_event = self._exit_event()
        if exit_event is not None:
            events.append(exit_event)
        return events

    def _exit_event(self) -> Event | None:
        """A FAILED job's non-zero exit: the job's own failure unless some evidence says otherwise.
        It is the weakest hint there is, so any cause or domain-naming symptom outranks it."""
        w = self.workload
        if w.state != "FAILED":
            return None
        code, _, signal = (w.exit_code or "").partition(":")
        if code.strip() in ("", "0") and signal.strip() in ("", "0"):
            return None
        how = (f"exit code {code.strip()}" if code.strip() not in ("", "0")
               else f"signal {signal.strip()}")
        # The reading ("most likely ...") is added only if this hint ends up the root: beside a
        # real cause it is just the exit code.
        sub, summary, reading = "application", f"The job failed with {how}.", (
            "No log that could be read shows an infrastructure fault: most likely the job's own "
            "code, input or configuration.")
        spec = self.policy.get("exit_signals", {}).get(_exit_signal(code.strip(), signal.strip()))
        if spec:
            sub, summary, reading = spec["sub_domain"], spec["summary"].replace("{how}", how), spec["reading"]
        return Event(
            kind="job_exit", rule="scheduler.exit_code", node=None, time=w.end,
            time_quality="exact", source=SourceRef("workload", 0, f"State=FAILED ExitCode={w.exit_code}"),
            sub_domain=sub, base_role="symptom", priority=5, summary=summary,
            code=f"exit {w.exit_code}", action=self.policy["default_actions"].get(sub),
            fields={"exit_code": w.exit_code, "reading": reading},
        )

    def _step_event(self, step: Step) -> Event:
        """A step killed for memory or by a node failure leaves the job itself only FAILED."""
        on = set(_expand(step.nodes))
        nodes = [n for n in self.workload.nodes if n in on]
        text = f"step {step.id} ({step.name}) on {step.nodes}: {step.state} {step.exit_code}"
        return self._state_event(self.policy["scheduler_states"][step.state], step.state,
                                 step.exit_code or "", nodes[0] if len(nodes) == 1 else None,
                                 step.end or self.workload.end, "sacct steps", text)

    def _state_event(self, spec: dict, state: str, exit_code: str, node: str | None,
                     when: datetime, source: str, text: str) -> Event:
        w = self.workload
        by = re.sub(r"^(?:by|By)\s+", "", (w.reason or "").strip())
        if by.isdigit():
            by = f"uid {by}"
        fields = {"state": state, "exit_code": exit_code,
                  "by": by or "a user or admin", "node": _node_phrase(node)}
        return Event(
            kind="scheduler_state", rule="scheduler.state", node=node, time=when,
            time_quality="exact", source=SourceRef(source, 0, text),
            sub_domain=spec["sub_domain"], base_role="cause", priority=int(spec["priority"]),
            summary=render(spec["summary"], fields), code=state, action=spec.get("action"),
            fields={k: v for k, v in fields.items() if k != "node"},
        )

    def _first_failed_step(self) -> Step | None:
        """The step that failed first (by end time; one that never ended, last); the batch and
        extern steps only carry the job's own fate, so they are left out."""
        failed = [s for s in self.workload.steps
                  if s.id not in ("batch", "extern") and s.state not in _STEP_OK]
        return min(failed, key=lambda s: (s.end is None, s.end or self.workload.end), default=None)

    # ------------------------------------------------------------------ filter stage
    def window_filter(self, events: list[Event]) -> list[Event]:
        start = self.workload.start
        before, after = self.ruleset.evidence_window(self.workload)
        kept, early, dropped = [], [], []
        for event in events:
            if event.time is None:
                kept.append(event)
            elif event.time < before or event.time > after:
                dropped.append(event)
            else:
                if event.time < start:
                    event.in_window = False
                    early.append(event)
                kept.append(event)
        self.trace.add("filter", "window_filter",
                       f"{len(early)} events before the job started kept as context; "
                       f"{len(dropped)} events outside the window dropped", early)
        return kept

    def fold_bursts(self, events: list[Event]) -> list[Event]:
        window = _seconds(self.policy, "bursts", "window_s")
        open_bursts: dict[tuple, Event] = {}
        kept: list[Event] = []
        folded = 0
        for event in events:
            key = (*event.burst_key(), event.in_window)
            head = open_bursts.get(key)
            if head is not None and (event.time is None or head.time is None
                                     or event.time - (head.last_time or head.time) <= window):
                head.count += event.count  # more than one where the extractor already counted
                head.last_time = max((t for t in (head.last_time, event.last_time, event.time) if t),
                                     default=None)
                folded += 1
                continue
            open_bursts[key] = event
            kept.append(event)
        self.trace.add("filter", "fold_bursts", f"{folded} repeated events folded into bursts")
        return kept

    # ------------------------------------------------------------------ correlate stage
    def disagreements(self, events: list[Event]) -> tuple[list[Event], list[Event]]:
        """Hosts of the job that chose differently where they must agree (policy `must_agree`):
        the host that fell back to a default, else the one host in the minority, is the cause.
        Of the settings every host printed, only the first line of each choice is kept, as
        evidence: the rest are routine start-up lines, one per rank. Returns the events kept and
        those made causes."""
        promoted: list[Event] = []
        specs = self.policy.get("must_agree") or []
        for spec in specs:
            fallbacks = set(spec.get("fallbacks", []))
            by_aspect: dict[str, dict[str, list[Event]]] = {}
            for e in events:  # only a host the line names itself: a guessed host proves nothing
                if (e.kind == spec["kind"] and e.in_window and e.node and e.fields.get("value")
                        and "node_from" not in e.fields):
                    by_aspect.setdefault(e.fields.get("aspect", ""), {}).setdefault(e.node, []).append(e)
            for aspect, hosts in sorted(by_aspect.items()):
                choice = {node: _settled(evs, fallbacks) for node, evs in hosts.items()}
                for node in _odd_hosts(choice, fallbacks):
                    event = next(e for e in hosts[node] if e.fields["value"] == choice[node])
                    self._promote(event, spec, aspect, choice)
                    promoted.append(event)
        return _first_of_each_setting(events, {spec["kind"] for spec in specs}), promoted

    def collective_mismatch(self, events: list[Event]) -> tuple[list[Event], list[Event]]:
        """Ranks whose collective calls differ at the same position (policy `collectives_must_match`).
        The calls are routine lines, one per rank and call: all are dropped but the one made a cause.
        Returns the events kept and those made causes."""
        spec = self.policy.get("collectives_must_match")
        if not spec:
            return events, []
        calls: dict[str, list[Event]] = {}
        for e in events:
            if e.kind == spec["kind"] and e.in_window:
                calls.setdefault(_process(e), []).append(e)
        promoted = []
        first = _first_mismatch(calls, spec)
        if first is not None:
            event, mine, others = first
            _make_cause(event, spec, {"mine": mine, "others": others, "process": _process(event)})
            promoted.append(event)
        return [e for e in events if e.kind != spec["kind"] or e in promoted], promoted

    @staticmethod
    def _promote(event: Event, spec: dict[str, Any], aspect: str, choice: dict[str, str]) -> None:
        others: dict[str, list[str]] = {}
        for node, value in sorted(choice.items()):
            if node != event.node:
                others.setdefault(value, []).append(node)
        said = [f"{value} on {nodes[0]}" if len(nodes) == 1 else f"{value} on {len(nodes)} hosts"
                for value, nodes in sorted(others.items())]
        _make_cause(event, spec, {"aspect": aspect, "node": event.node or "", "others": " and ".join(said)})

    def hung_on_failures(self, live: list[Event]) -> None:
        """Transport failures in a job that then ran into its time limit, or that its user then
        cancelled: what it hung on (policy `hung_on`) becomes the cause."""
        spec = self.policy.get("hung_on")
        if not spec or self.workload.state not in spec["states"]:
            return
        kinds, codes = spec["kinds"], spec.get("codes", ())
        changed = [e for e in live
                   if (e.kind in kinds or e.code in codes) and e.base_role in ("symptom", "cause")
                   and e.sub_domain]
        for event in changed:
            event.base_role, event.priority = "cause", max(event.priority, int(spec["priority"]))
            event.summary = f"{event.summary} {spec['notes'][self.workload.state]}"
        self.hung = changed
        self.trace.add("correlate", "hung_on", f"{len(changed)} failures the job hung on until "
                       f"it ended {self.workload.state}", changed)

    def lost_node_after(self, live: list[Event], events: list[Event]) -> None:
        """A node Slurm lost whose own log shows one of its parts failing during the job: the
        strongest such symptom or context there is why (policy `lost_node_after`), and the lost
        node follows."""
        spec = self.policy.get("lost_node_after")
        w = self.workload
        failed = w.failed_node or (w.nodes[0] if len(w.nodes) == 1 else None)
        if not spec or w.state not in spec["states"] or failed is None:
            return
        domains = set(spec["domains"])
        faults = [e for e in events if e.in_window and e.base_role in ("symptom", "context")
                  and e.sub_domain in domains and e.node == failed and e.demoted_by is None]
        if not faults:
            return
        fault = min(faults, key=lambda e: (-e.priority, e.sort_key()))
        if fault not in live:
            live.append(fault)
        fault.role = "interesting"
        fault.base_role, fault.priority = "cause", max(fault.priority, int(spec["priority"]))
        fault.summary = f"{fault.summary} {spec['note']}"
        self.lost_to.append(fault)
        for event in live:
            if event.kind == "scheduler_state" and event.code == w.state and event.demoted_by is None:
                _demote(event, "lost_node_after", fault)
        self.trace.add("correlate", "lost_node_after",
                       f"{failed} logged a failing part before Slurm lost it", [fault])

    def hang_explains_limit(self, live: list[Event]) -> None:
        """The time limit a job hung into, or the cancel that ended its hang, is the hang's
        consequence, whatever the failure's domain, once the failure is known not to be teardown
        of the kill."""
        hung = [e for e in self.hung if e.demoted_by is None]
        if not hung:
            return
        first = min(hung, key=Event.sort_key)
        for event in live:
            if event.sub_domain in ("time_limit", "cancelled") and event.demoted_by is None:
                _demote(event, "hung_on", first)

    def hung_after_done(self, live: list[Event], obs: Observations) -> None:
        """A job whose output ends saying its work was done, and that then ran into its time
        limit long after, hung on its way out (policy `hung_after_done`)."""
        spec = self.policy.get("hung_after_done")
        if not spec or self.workload.state not in spec["states"]:
            return
        last = _last_words(spec, [e for e in live if e.time is not None], obs)
        if last is None or last.time is None:
            return
        gap = (self.workload.end - last.time).total_seconds()
        if gap < float(spec["min_gap_s"]):
            return
        _make_cause(last, spec, {"minutes": str(round(gap / 60))})
        for event in live:  # the limit it ran into is the hang's consequence
            if event.sub_domain == "time_limit" and event.demoted_by is None:
                _demote(event, "hung_after_done", last)
        self.trace.add("correlate", "hung_after_done",
                       f"the job said it was done {round(gap / 60)} minutes before it ended "
                       f"{self.workload.state}", [last])

    def stalled_before_first_result(self, live: list[Event], obs: Observations) -> None:
        """A collective test whose output ends at its results table's title, on one node, and that
        was then stopped at its limit or cancelled: its first collective between the node's GPUs
        stalled (policy `stalled_before_first_result`)."""
        spec = self.policy.get("stalled_before_first_result")
        if (not spec or self.workload.state not in spec["states"]
                or len(self.workload.nodes) > int(spec["max_nodes"])):
            return
        title = _last_words(spec, live, obs)
        if title is None:
            return
        _make_cause(title, spec, {})
        self.read_from_silence.append(title)
        for event in live:  # the limit it ran into, or the cancel, is the stall's consequence
            if event.sub_domain in ("time_limit", "cancelled") and event.demoted_by is None:
                _demote(event, "stalled_before_first_result", title)
        self.trace.add("correlate", "stalled_before_first_result",
                       f"the collective test printed no result before it ended {self.workload.state}",
                       [title])

    def ranks_absent_from_timeouts(self, events: list[Event]) -> tuple[Event, list[int]] | None:
        """The first watchdog timeout in the job's first collectives and the ranks below the highest
        one reporting that printed none (policy `absent_from_timeouts`), in a job whose collectives
        cross no network."""
        spec = self.policy.get("absent_from_timeouts")
        if not spec or len(self.workload.nodes) > int(spec["max_nodes"]):
            return None
        timeouts = [e for e in events if e.in_window and e.kind in spec["kinds"]
                    and e.fields.get("rank", "").isdigit()
                    and e.fields.get("seq", "").isdigit() and int(e.fields["seq"]) <= int(spec["max_seq"])]
        reported = {int(e.fields["rank"]) for e in timeouts}
        highest = max(reported, default=0)
        if len(reported) < int(spec["min_reporting"]) or highest > _MOST_RANKS_ON_A_NODE:
            return None  # a rank number no one node runs is a line the job wrote, not a rank
        missing = sorted(set(range(highest)) - reported)
        if not missing:
            return None
        return min(timeouts, key=Event.sort_key), missing

    def absent_from_timeouts(self, absent: tuple[Event, list[int]] | None) -> None:
        """A rank that printed no timeout had not reached the first collective the others waited
        in: the first timeout then points at the job's own code on it (as a symptom)."""
        if absent is None:
            return
        spec = self.policy["absent_from_timeouts"]
        first, missing = absent
        first.sub_domain = spec["sub_domain"]
        first.fields["missing_ranks"] = ",".join(map(str, missing[:64]))
        more = f" and {len(missing) - 8} more" if len(missing) > 8 else ""
        listed = ", ".join(map(str, missing[:8])) + more
        named = f"Rank {listed}" if len(missing) == 1 else f"Ranks {listed}"
        first.summary = f"{first.summary} {render(spec['note'], {'missing': named})}"
        self.trace.add("correlate", "absent_from_timeouts", f"{named} printed no timeout", [first])

    def ranks_in_different_collectives(self, events: list[Event]) -> tuple[Event, dict[int, int]] | None:
        """The first watchdog timeout and each rank's collective (sequence number), where the ranks
        of one process group timed out in different ones (policy `timeouts_must_agree`)."""
        spec = self.policy.get("timeouts_must_agree")
        if not spec:
            return None
        timeouts = [e for e in events if e.in_window and e.kind in spec["kinds"]
                    and e.fields.get("rank", "").isdigit() and e.fields.get("seq", "").isdigit()]
        if any(e.fields.get("op", "").upper() not in spec["ops"] for e in timeouts):
            return None  # point-to-point calls differ per rank by design
        named = all(e.fields.get("process_group") for e in timeouts)  # otherwise taken as one group
        by_group: dict[str, dict[int, set[int]]] = {}
        for e in timeouts:
            group = e.fields["process_group"] if named else ""
            by_group.setdefault(group, {}).setdefault(int(e.fields["rank"]), set()).add(int(e.fields["seq"]))
        for _, ranks in sorted(by_group.items()):
            if any(len(seqs) > 1 for seqs in ranks.values()):
                return None  # a rank waiting in two collectives: several groups it does not name
            seq_of = {rank: next(iter(seqs)) for rank, seqs in ranks.items()}
            if len(seq_of) >= int(spec["min_reporting"]) and len(set(seq_of.values())) > 1:
                return min(timeouts, key=Event.sort_key), seq_of
        return None

    def timeouts_disagree(self, apart: tuple[Event, dict[int, int]] | None) -> None:
        """Ranks that timed out in different collectives had made different calls before them:
        the first timeout then points at the job's own control flow (as a symptom)."""
        if apart is None:
            return
        spec = self.policy["timeouts_must_agree"]
        first, seq_of = apart
        ranks_at: dict[int, list[int]] = {}
        for rank, seq in sorted(seq_of.items()):
            ranks_at.setdefault(seq, []).append(rank)
        said = "; ".join(f"#{seq} on {_ranks(ranks)}" for seq, ranks in sorted(ranks_at.items()))
        first.sub_domain, first.action = spec["sub_domain"], spec.get("action") or first.action
        first.summary = f"{first.summary} {render(spec['note'], {'collectives': said})}"
        self.trace.add("correlate", "timeouts_must_agree", f"ranks timed out in collectives {said}", [first])

    def across_hosts(self, live: list[Event]) -> None:
        """Symptoms that point somewhere only in a job on several hosts (policy `across_hosts`)
        take that sub_domain, with a note saying what else they may be."""
        hosts = len(self.workload.nodes)
        changed = []
        for spec in self.policy.get("across_hosts") or []:
            if hosts < int(spec["min_nodes"]):
                continue
            for event in live:
                if event.code in spec["codes"] and event.base_role == "symptom" and not event.sub_domain:
                    event.sub_domain = spec["sub_domain"]
                    event.summary = f"{event.summary} {render(spec['note'], {'nodes': str(hosts)})}"
                    event.action = spec["action"]
                    changed.append(event)
        if changed:
            self.trace.add("correlate", "across_hosts",
                           f"{len(changed)} symptoms read as the connection between the job's hosts", changed)

    def without_gpus(self, live: list[Event]) -> None:
        """A job whose allocation held no GPUs and found none asked for none (policy
        `without_gpus`): those events blame its request, not the node."""
        spec = self.policy.get("without_gpus")
        if not spec or self.workload.gpus_per_node != 0:
            return
        changed = [e for e in live if e.code in spec["codes"]]
        for event in changed:
            event.sub_domain, event.outcome = spec["sub_domain"], spec["outcome"]
            event.summary = render(spec["summary"], {**event.fields, "node": event.node})
            event.action = spec["action"]
        if changed:
            self.trace.add("correlate", "without_gpus",
                           f"{len(changed)} events read as a job that asked for no GPUs", changed)

    def companion_events(self, live: list[Event]) -> None:
        changed = []
        for spec in self.policy.get("companions", []):
            within = timedelta(seconds=float(spec["within_s"]))
            roots = [e for e in live if e.kind == spec["root_kind"] and e.base_role == "cause"
                     and e.demoted_by is None]
            for event in live:
                if event.kind not in spec["kinds"] or event.demoted_by is not None:
                    continue
                root = next((r for r in roots if r is not event and r.node in (None, event.node)
                             and r.priority >= event.priority and _close(r, event, within)), None)
                if root is not None:
                    _demote(event, "companion_events", root)
                    changed.append(event)
        self.trace.add("correlate", "companion_events",
                       f"{len(changed)} events are the same fault seen by another subsystem", changed)

    def aftermath(self, live: list[Event]) -> None:
        """A cause that is the aftermath of an earlier fault on the same node (policy `aftermath`),
        demoted below it even when its own priority is higher."""
        changed = []
        in_order = sorted(live, key=Event.sort_key)
        for spec in self.policy.get("aftermath") or []:
            within = timedelta(seconds=float(spec["within_s"]))
            for later in live:
                if later.code not in spec["codes"] or later.base_role != "cause" or later.demoted_by:
                    continue
                root = next((e for e in in_order
                             if e is not later and e.base_role == "cause" and e.demoted_by is None
                             and e.sub_domain in spec["after"] and e.code not in spec["codes"]
                             and e.node is not None and e.node == later.node
                             and e.time is not None and later.time is not None
                             and timedelta(0) <= later.time - e.time <= within), None)
                if root is not None:
                    _demote(later, "aftermath", root)
                    changed.append(later)
        self.trace.add("correlate", "aftermath",
                       f"{len(changed)} causes are the aftermath of an earlier fault on their node", changed)

    def downstream_causes(self, live: list[Event]) -> None:
        """A cause explained by an earlier, stronger root (e.g. a CUDA crash after a GPU fault)."""
        table = self.policy["explained_by"]
        causes = [e for e in live if e.base_role == "cause" and e.demoted_by is None]
        changed = []
        for later in causes:
            links = table.get(later.sub_domain or "", {})
            for root in causes:
                if root is later or root.demoted_by is not None or root.priority < later.priority:
                    continue
                if not _before_or_near(root, later, self.slack):
                    continue
                same_node = root.node is not None and root.node == later.node
                if (same_node and root.sub_domain in links.get("same_node", [])) or \
                        root.sub_domain in links.get("any_node", []):
                    _demote(later, "downstream_causes", root)
                    changed.append(later)
                    break
        apps = sorted((e for e in causes if e.sub_domain == "application" and e.demoted_by is None),
                      key=Event.sort_key)
        for later in apps[1:]:
            _demote(later, "first_failure_explains_rest", apps[0])
        self.trace.add("correlate", "downstream_causes",
                       f"{len(changed)} causes explained by an earlier, stronger root", changed)
        self.trace.add("correlate", "first_failure_explains_rest",
                       f"{max(0, len(apps) - 1)} later application errors explained by the first "
                       "failing rank", apps[1:])

    def teardown_after_scheduler_kill(self, live: list[Event]) -> None:
        if self.workload.state not in _SCHEDULER_KILL_STATES:
            return
        # A cancel for a node failure is that failure's consequence, not a kill the errors before
        # it could be the teardown of.
        kills = [e for e in live if e.kind in ("scheduler_state", "slurm_cancel", "time_limit",
                                               "cancel_request") and e.time is not None
                 and e.fields.get("why") != "NODE FAILURE"]
        if not kills:
            return
        first_kill = min(kills, key=Event.sort_key)
        assert first_kill.time is not None  # kills were chosen with a time
        cutoff = first_kill.time - _seconds(self.policy, "window", "teardown_grace_s")
        changed = []
        for event in live:
            if event.demoted_by or event in kills or event.time is None or event.time < cutoff:
                continue
            if event.sub_domain in _TEARDOWN_DOMAINS or event.base_role == "symptom":
                _demote(event, "teardown_after_scheduler_kill", first_kill)
                changed.append(event)
        self.trace.add("correlate", "teardown_after_scheduler_kill",
                       f"{len(changed)} errors printed while Slurm was killing the job are teardown",
                       changed)

    def cause_explains_symptoms(self, live: list[Event]) -> None:
        roots = [e for e in live if e.base_role == "cause" and e.demoted_by is None]
        changed = []
        for event in live:
            if event.base_role != "symptom" or event.demoted_by is not None:
                continue
            if event.kind == "job_exit":
                # The exit code is the scheduler's summary of any failure, not a symptom a cause
                # explains: it neither strengthens the verdict nor needs explaining.
                if roots:
                    _demote(event, "exit_code_superseded", None)
                continue
            fits = [r for r in roots if _before_or_near(r, event, self.slack)]
            if not fits:
                continue
            best = max(fits, key=lambda r: (r.node == event.node, r.priority,
                                            -(r.time.timestamp() if r.time else 0)))
            _demote(event, "cause_explains_symptoms", best)
            changed.append(event)
        self.trace.add("correlate", "cause_explains_symptoms",
                       f"{len(changed)} downstream symptoms explained by a cause", changed)

    # ------------------------------------------------------------------ refine stage
    def refine(self, live: list[Event]) -> Verdict:
        contenders = sorted((e for e in live if e.base_role == "cause" and e.demoted_by is None),
                            key=lambda e: (-e.priority, e.sort_key()))
        if not contenders:
            return self._symptoms_only(live)
        root = contenders[0]
        margin = int(self.policy["ambiguity"]["margin"])
        floor = int(self.policy["ambiguity"]["min_priority"])
        rivals = [e for e in contenders[1:] if e.sub_domain != root.sub_domain
                  and (e.priority >= max(floor, root.priority - margin)
                       or self._independent(root, e))]
        rivals = _one_per_domain(rivals)
        for event in contenders[1:]:
            if event not in rivals:
                _demote(event, "lower_priority_cause", root)
        if rivals:
            candidates = [root, *rivals]
            for event in candidates:
                event.role = "root"
            self.trace.add("refine", "ambiguous_causes",
                           f"{len(candidates)} independent causes in different domains with "
                           "comparable evidence", candidates)
            return Verdict(None, candidates, "ambiguous", "ambiguous", self.trace)
        root.role = "root"
        self._place(root, live)
        self.trace.add("refine", "pick_root",
                       f"root: {root.code or root.kind} on {root.node or 'job'} "
                       f"(priority {root.priority}); {len(contenders) - 1} weaker causes demoted",
                       [root])
        explained = [e for e in live if e.explained_by == root.index]
        # a symptom read as why a node was lost, or a stall read from output that stopped, is a lead:
        # the loss or the limit it explains does not confirm it
        confirmed = ((explained and root not in self.lost_to and root not in self.read_from_silence)
                     or root.kind == "scheduler_state")
        status = "established" if confirmed else "supported"
        return Verdict(root, [], status, root.sub_domain or "unknown", self.trace)

    def _independent(self, root: Event, other: Event) -> bool:
        """Two strong causes in different domains on different nodes, close in time: independent
        faults, either of which could have ended the job."""
        spec = self.policy["ambiguity"]
        strong = int(spec.get("independent_min_priority", 101))
        within = timedelta(seconds=float(spec.get("independent_within_s", 0)))
        return (root.priority >= strong and other.priority >= strong and root.node is not None
                and other.node is not None and root.node != other.node and _close(root, other, within))

    def _place(self, root: Event, live: list[Event]) -> None:
        """Give a root cause without a node the node its other evidence names (exactly one), so a
        hardware or network verdict says where; a bare non-zero exit takes the first failure's node."""
        if (root.node is not None or root.sub_domain not in self.policy.get("node_scoped_domains", [])
                or root.fields.get("off_node")):
            return
        named = {e.node for e in live if e is not root and e.node and e.sub_domain == root.sub_domain
                 and "node_from" not in e.fields}
        how = f"named by the job's other {root.sub_domain} evidence"
        if not named and root.sub_domain == "network":
            named = {e.fields["peer_node"] for e in live if e.fields.get("peer_node")}
            how = "the peer the failing transfers named"
        if not named and (root.kind == "job_exit"
                          or root.sub_domain in self.policy.get("placed_by_first_failure", [])):
            first = min((e for e in live if e.node and e.fields.get("first_failure") == "yes"),
                        key=Event.sort_key, default=None)
            named = {first.node} if first is not None and first.node else set()
            how = "the first failure the launcher reported"
        if not named and len(self.workload.nodes) == 1:
            named, how = set(self.workload.nodes), "the job's only node"
        if len(named) == 1:
            root.node = named.pop()
            root.fields["node_from"] = how
            spec = self.policy["scheduler_states"].get(root.code or "")
            if root.kind == "scheduler_state" and spec:  # say which node in the sentence
                root.summary = render(spec["summary"], {**root.fields, "node": _node_phrase(root.node)})
            self.trace.add("refine", "root_node_from_evidence", f"root placed on {root.node} ({how})",
                           [root])

    def _symptoms_only(self, live: list[Event]) -> Verdict:
        hinted = sorted((e for e in live if e.base_role == "symptom" and e.sub_domain),
                        key=lambda e: (-e.priority, e.sort_key()))
        blockers = set(self.policy.get("exit_hint_blocked_by", []))
        if any(e.kind in blockers for e in live) or self.early_faults:
            # Ranks waited for a peer that stopped, or a node was faulty before or during the job:
            # the exit code says nothing about why.
            hinted = [e for e in hinted if e.kind != "job_exit"]
        if hinted:
            root = hinted[0]
            if root.kind == "job_exit":
                root.summary = f"{root.summary} {root.fields['reading']}"
            return self._hypothesis(root, live, "symptom_only_hypothesis",
                                    f"no cause found; the strongest symptom points at {root.sub_domain}")
        lead = self._lead()
        if lead is not None:
            return self._hypothesis(lead, live, "unexplained_failure_lead",
                                    f"no cause found; a non-fatal {lead.sub_domain} error on "
                                    f"{lead.node} during the job is the lead")
        for event in live:
            if event.demoted_by is None:
                event.demoted_by = "no_cause_found"
        self.trace.add("refine", "no_cause_found",
                       f"no cause among {len(live)} events; the diagnosis is unknown")
        meanwhile = [e for e in self.early_faults
                     if e.base_role == "context" and e.in_window and e.node in self.workload.nodes]
        trouble = min(meanwhile, key=lambda e: (-e.priority, e.sort_key()), default=None)
        return Verdict(None, [], "unknown", "unknown", self.trace, trouble)

    def _hypothesis(self, root: Event, live: list[Event], step: str, why: str) -> Verdict:
        root.role, root.demoted_by = "root", None
        self._place(root, live)
        for event in live:
            if event is not root and event.demoted_by is None:
                _demote(event, step, root)
        self.trace.add("refine", step, why, [root])
        return Verdict(root, [], "hypothesis", root.sub_domain or "unknown", self.trace)

    def _lead(self) -> Event | None:
        """The strongest non-fatal hardware error logged on one of the job's nodes while it ran
        (policy `unexplained_failure_leads`), for a failure nothing else explains."""
        spec = self.policy.get("unexplained_failure_leads") or {}
        domains = set(spec.get("domains", []))
        floor = int(spec.get("min_priority", 101))
        until = self.workload.end + timedelta(seconds=float(spec.get("after_end_s", 0)))
        leads = [e for e in self.early_faults
                 if e.base_role == "context" and e.sub_domain in domains and e.priority >= floor
                 and e.node in self.workload.nodes and e.time is not None
                 and self.workload.start <= e.time <= until]
        return min(leads, key=lambda e: (-e.priority, e.sort_key()), default=None)


def _make_cause(event: Event, spec: dict[str, Any], values: dict[str, str]) -> None:
    """Make a context event the cause a policy entry describes (sub_domain, priority, outcome, code,
    action, and its summary rendered with the event's fields and `values`)."""
    event.base_role, event.sub_domain, event.priority = "cause", spec["sub_domain"], int(spec["priority"])
    event.outcome, event.code, event.action = spec.get("outcome"), spec["code"], spec.get("action")
    event.summary = render(spec["summary"], {**event.fields, **values})


def _last_words(spec: dict[str, Any], live: list[Event], obs: Observations) -> Event | None:
    """The last event of the spec's kinds that its output file ends with (at most `max_lines_after`
    lines after it), where the job wrote one output file: with several, another (stderr, say) may
    hold later output."""
    written = {f for c in obs.coverage if c.collector == "job_output" for f in c.written}
    if len(written) != 1:
        return None
    uncounted = spec.get("uncounted_kinds") or ()  # lines after it that do not count (Slurm's kill)

    def after(event: Event) -> int:
        skipped = sum(1 for e in live if e.kind in uncounted and e.source.file == event.source.file
                      and e.source.line > event.source.line)
        return int(event.fields.get("lines_after", "-1")) - skipped

    most = int(spec["max_lines_after"])
    last = [e for e in live if e.kind in spec["kinds"] and 0 <= after(e) <= most]
    return max(last, key=Event.sort_key) if last else None


def _process(event: Event) -> str:
    """The process that printed a line: NCCL's `host:pid` prefix, else the file it is in."""
    pid = event.fields.get("pid")
    if pid:
        return f"{event.fields.get('host') or event.node or '?'}:{pid}"
    return event.source.file


def _first_mismatch(calls: dict[str, list[Event]], spec: dict[str, Any]) -> tuple[Event, str, str] | None:
    """The first call (by position) at which the processes' calls differ, as (the call of the
    process in the minority, what it called, what the others called); None where they agree or
    cannot be compared: fewer than two processes, processes on several or differently sized
    communicators, or point-to-point calls (each rank's own peers) among them."""
    if len(calls) < 2:
        return None
    every = [e for evs in calls.values() for e in evs]
    if (any(len({e.fields.get("comm") for e in evs}) != 1 for evs in calls.values())
            or len({e.fields.get("nranks") for e in every}) != 1
            or any(e.fields.get("op") not in spec["ops"] for e in every)):
        return None
    by_position: dict[int, dict[str, Event]] = {}
    for process, evs in calls.items():
        for e in evs:
            by_position.setdefault(int(e.fields["opcount"], 16), {}).setdefault(process, e)
    for position in sorted(by_position):
        made = by_position[position]
        said = {p: tuple(e.fields.get(k, "") for k in spec["fields"]) for p, e in made.items()}
        if len(set(said.values())) < 2:
            continue
        counts = Counter(said.values())
        odd = min(sorted(said), key=lambda p: (counts[said[p]], made[p].sort_key()))
        others = {said[p]: _call(made[p]) for p in sorted(said) if said[p] != said[odd]}
        n_others = sum(counts[c] for c in others)
        return (made[odd], _call(made[odd]),
                f"{' or '.join(sorted(others.values()))} in {n_others} other process{'es' * (n_others > 1)}")
    return None


def _call(event: Event) -> str:
    f = event.fields
    return (f"{f.get('op', '?')} of {f.get('count', '?')} elements of datatype {f.get('datatype', '?')}"
            f" (op {f.get('redop', '?')}, root {f.get('root', '?')})")


def _first_of_each_setting(events: list[Event], kinds: set[str]) -> list[Event]:
    """The events, less every repeat of a setting some host already printed (one per rank)."""
    seen: set[tuple[str, str, str]] = set()
    kept = []
    for e in events:
        if e.kind in kinds and e.base_role == "context":
            setting = (e.kind, e.fields.get("aspect", ""), e.fields.get("value", ""))
            if setting in seen:
                continue
            seen.add(setting)
        kept.append(e)
    return kept


def _settled(events: list[Event], fallbacks: set[str]) -> str:
    """What a host ended up with: a fallback it reported wins (it tried the setting, then fell
    back), else its first choice."""
    values = [e.fields["value"] for e in events]
    return next((v for v in values if v in fallbacks), values[0])


def _odd_hosts(choice: dict[str, str], fallbacks: set[str]) -> list[str]:
    """The hosts that differ from the job's intent: those that fell back while others did not,
    else the one host whose choice no other host shares."""
    if len(set(choice.values())) < 2:
        return []
    fell_back = sorted(n for n, v in choice.items() if v in fallbacks)
    if fell_back:
        return fell_back
    counts = Counter(choice.values())
    lonely = [n for n, v in choice.items() if counts[v] == 1]
    return lonely if len(lonely) == 1 and len(choice) > 2 else []


def _close(a: Event, b: Event, within: timedelta) -> bool:
    if a.time is None or b.time is None:
        return True
    return abs(a.time - b.time) <= within


def _one_per_domain(events: list[Event]) -> list[Event]:
    seen: set[str | None] = set()
    out = []
    for event in events:
        if event.sub_domain not in seen:
            seen.add(event.sub_domain)
            out.append(event)
    return out


def _ranks(ranks: list[int]) -> str:
    """`rank 3`, `ranks 1, 2 and 5`, or the first 8 and how many more."""
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    if len(ranks) > 8:
        return f"ranks {', '.join(map(str, ranks[:8]))} and {len(ranks) - 8} more"
    return f"ranks {', '.join(map(str, ranks[:-1]))} and {ranks[-1]}"
