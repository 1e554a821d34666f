"""The static execution-context connector: a bundle directory that describes one job attempt.

Layout: `workload.json` (required), `app/` (job output), `nodes/<node>/` (system logs),
`controller/` (slurmctld log excerpts), `metrics/` (Prometheus query_range JSON), `events.json`
(optional: the node state history `sacctmgr show event` gave). See README.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import hostlist

from slurm_attr.collect.confine import Root, valid_hostname
from slurm_attr.extract.timestamps import known_zone
from slurm_attr.model import Step, Workload
from slurm_attr.scope.sacct_json import select_attempt

if TYPE_CHECKING:
    from slurm_attr.scope.slurm import NodeEvent

STATES = {"FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "CANCELLED", "PREEMPTED",
          "BOOT_FAIL", "DEADLINE", "COMPLETED", "REQUEUED"}


MAX_NODES = 65_536  # more nodes than any job has: a hostlist that expands further is refused
MAX_JSON_BYTES = 64 << 20  # workload.json and a saved sacct --json
_MAX_JSON_DEPTH = 64
_JOB_ID = re.compile(r"\d{1,20}(?:_(?:\d{1,10}|\[[0-9,\-%]{1,64}\]))?(?:\+\d{1,6})?", re.ASCII)
_EXIT_CODE = re.compile(r"\d{1,3}:\d{1,3}", re.ASCII)
# A window no real job has: timestamps outside it are typos or hostile, and break time arithmetic.
_EARLIEST, _LATEST = datetime(1970, 1, 2, tzinfo=UTC), datetime(2200, 1, 1, tzinfo=UTC)


class BundleError(Exception):
    """The bundle cannot be used; the message is one line an admin can act on."""


class NodeListError(ValueError):
    """A Slurm hostlist that cannot be expanded into valid node names."""


def _hostlist_size(expr: str) -> int:
    """How many names a hostlist expands to, counted without expanding it."""
    total = 0
    for term in re.split(r",(?![^\[]*\])", expr):
        size = 1
        for group in re.findall(r"\[([^\]]*)\]", term):
            count = 0
            for part in group.split(","):
                lo, _, hi = part.partition("-")
                try:
                    count += abs(int(hi) - int(lo)) + 1 if lo.isdigit() and hi.isdigit() else 1
                except ValueError:  # more digits than int() takes
                    return MAX_NODES + 1
            size *= max(count, 1)
        total += size
    return total


def expand_nodes(expr: str) -> list[str]:
    """Node names of a hostlist. Each becomes a path component and a label, so each must be a
    plain hostname; a list of more than MAX_NODES names is refused before it is expanded."""
    if not expr:
        return []
    if len(expr) > 65_536 or _hostlist_size(expr) > MAX_NODES:
        raise NodeListError(f"node list expands to more than {MAX_NODES} nodes")
    try:
        nodes = hostlist.expand_hostlist(expr)
    except hostlist.BadHostlist as exc:
        raise NodeListError(f"bad node list {expr[:200]!r}: {exc}") from exc
    bad = next((n for n in nodes if not valid_hostname(n)), None)
    if bad is not None:
        raise NodeListError(f"node name {bad[:200]!r} is not a hostname "
                            "(letters, digits, '.', '_', '-')")
    return nodes


class _Fields:
    """Typed access to a JSON object from a file, with one clear error per bad field."""

    def __init__(self, raw: dict[str, Any], where: str) -> None:
        self.raw, self.where = raw, where

    def fail(self, key: str, expected: str) -> BundleError:
        value = repr(self.raw.get(key))
        return BundleError(f"{self.where}: {key} must be {expected} (got {value[:80]})")

    def present(self, key: str) -> bool:
        return self.raw.get(key) is not None

    def text(self, key: str, default: str = "", *, required: bool = False) -> str:
        value = self.raw.get(key)
        if value is None:
            if required:
                raise BundleError(f"{self.where}: missing '{key}'")
            return default
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise self.fail(key, "a string")
        return str(value)

    def optional_text(self, key: str) -> str | None:
        return self.text(key) if self.present(key) else None

    def integer(self, key: str, default: int, lo: int, hi: int) -> int:
        value = self.raw.get(key)
        if value is None:
            return default
        if isinstance(value, str) and value.isascii() and value.isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise self.fail(key, f"a whole number from {lo} to {hi}")
        return value

    def time(self, key: str) -> datetime:
        value = self.raw.get(key)
        if isinstance(value, datetime):
            when = value
        else:
            try:
                when = datetime.fromisoformat(self.text(key, required=True))
            except ValueError as exc:
                raise self.fail(key, "an ISO 8601 time with a UTC offset") from exc
        if when.tzinfo is None:
            raise self.fail(key, "an ISO 8601 time with a UTC offset")
        if not _EARLIEST <= when <= _LATEST:
            raise self.fail(key, f"a time between {_EARLIEST.year} and {_LATEST.year}")
        return when


def parse_json(data: bytes, name: str) -> dict[str, Any]:
    """A JSON object from untrusted bytes: bad encoding, syntax, depth or type is a BundleError."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise BundleError(f"{name} is not valid JSON: {why}") from exc
    if not isinstance(doc, dict):
        raise BundleError(f"{name} must hold a JSON object")
    if _depth(doc) > _MAX_JSON_DEPTH:
        raise BundleError(f"{name} is nested more than {_MAX_JSON_DEPTH} levels deep")
    return doc


def _depth(value: Any) -> int:
    depth, level = 0, [value]
    while level:
        depth += 1
        level = [v for item in level for v in
                 (item.values() if isinstance(item, dict) else item if isinstance(item, list) else ())]
    return depth


def _read_json(root: Root, rel: str) -> dict[str, Any]:
    try:
        data = root.read_bytes(rel, MAX_JSON_BYTES)
    except FileNotFoundError as exc:
        raise BundleError(f"no {rel} in {root.path}") from exc
    except OSError as exc:
        raise BundleError(f"cannot read {rel}: {exc.strerror or exc}") from exc
    return parse_json(data, rel)


def _sacct_facts(root: Root, raw: _Fields, job_id: str, attempt: int) -> dict[str, Any]:
    rel = raw.text("sacct")
    doc = _read_json(root, rel)
    try:
        facts = select_attempt(doc, job_id, attempt)
    except (TypeError, ValueError, AttributeError, KeyError, OverflowError, OSError) as exc:
        raise BundleError(f"{rel}: not sacct --json output ({type(exc).__name__}: {exc})") from exc
    if facts is None:
        raise BundleError(f"{rel}: job {job_id} is not in the sacct output")
    return facts.known()


def open_bundle(bundle: Path) -> Root:
    """The bundle's directory, opened for confined reads; a BundleError if it cannot be."""
    try:
        return Root(bundle)
    except FileNotFoundError as exc:
        raise BundleError(f"{bundle} does not exist") from exc
    except OSError as exc:
        raise BundleError(f"{bundle}: {exc.strerror or exc}") from exc


def load_workload(bundle: Path | Root) -> Workload:
    """The attempt a bundle describes, validated field by field."""
    root = bundle if isinstance(bundle, Root) else open_bundle(bundle)
    raw = _Fields(_read_json(root, "workload.json"), "workload.json")
    job_id = raw.text("job_id", required=True)
    if not _JOB_ID.fullmatch(job_id):
        raise raw.fail("job_id", "a Slurm job id (digits, with an _array or +het suffix)")
    attempt = raw.integer("attempt", 0, 0, 10_000)
    facts = dict(raw.raw)
    if raw.present("sacct"):
        facts.update(_sacct_facts(root, raw, job_id, attempt))
    fields = _Fields(facts, "workload.json" if not raw.present("sacct") else
                     f"workload.json with {raw.text('sacct')}")
    return _workload(raw, fields, job_id)


LOG_ORIGINS = ("node", "controller", "app")


def _log_timezones(raw: _Fields) -> dict[str, str]:
    """`log_timezones`: the zone of each log origin whose lines carry no offset, where it is not
    `timezone` (a site that sets node_log_timezone, say)."""
    zones = raw.raw.get("log_timezones") or {}
    expected = f"an object mapping {', '.join(LOG_ORIGINS)} to IANA time zone names"
    if not isinstance(zones, dict) or not all(
            k in LOG_ORIGINS and isinstance(v, str) and known_zone(v) for k, v in zones.items()):
        raise raw.fail("log_timezones", expected)
    return dict(zones)


def _steps(facts: _Fields) -> list[Step]:
    """Steps from sacct (already typed) or from workload.json (checked like every field)."""
    raw = facts.raw.get("steps") or []
    if not isinstance(raw, list) or not all(isinstance(s, dict | Step) for s in raw):
        raise facts.fail("steps", "a list of step objects")
    steps = []
    for n, item in enumerate(raw):
        if isinstance(item, Step):
            steps.append(item)
            continue
        step = _Fields(item, f"{facts.where}: steps[{n}]")
        steps.append(Step(id=step.text("id", required=True), name=step.text("name"),
                          state=step.text("state").upper(), exit_code=step.optional_text("exit_code"),
                          nodes=step.text("nodes"),
                          start=step.time("start") if step.present("start") else None,
                          end=step.time("end") if step.present("end") else None,
                          ntasks=step.integer("ntasks", 0, 0, 10_000_000) if step.present("ntasks") else None,
                          distribution=step.text("distribution")))
    return steps


def _workload(raw: _Fields, facts: _Fields, job_id: str) -> Workload:
    state = facts.text("state", required=True).upper().split()
    if not state or state[0] not in STATES:
        raise facts.fail("state", f"one of {', '.join(sorted(STATES))}")
    start, end = facts.time("start"), facts.time("end")
    if end < start:
        raise BundleError(f"{facts.where}: end is before start")
    nodelist = facts.text("nodes", required=True)
    try:
        nodes = expand_nodes(nodelist)
    except NodeListError as exc:
        raise BundleError(f"{facts.where}: nodes: {exc}") from exc
    exit_code = facts.text("exit_code", "0:0")
    if not _EXIT_CODE.fullmatch(exit_code):
        raise facts.fail("exit_code", "'status:signal', e.g. 1:0")
    failed_node = facts.optional_text("failed_node")
    if failed_node is not None and not valid_hostname(failed_node):
        raise facts.fail("failed_node", "a hostname")
    timezone = raw.optional_text("timezone")
    if timezone is not None and not known_zone(timezone):
        raise raw.fail("timezone", "an IANA time zone name such as Europe/Berlin")
    log_timezones = _log_timezones(raw)
    steps = _steps(facts)
    return Workload(
        cluster=facts.text("cluster") or "default", job_id=job_id,
        attempt=facts.integer("attempt", 0, 0, 10_000), name=facts.text("name"),
        user=facts.text("user"), partition=facts.text("partition"), nodelist=nodelist, nodes=nodes,
        start=start, end=end, state=state[0], exit_code=exit_code, timezone=timezone,
        log_timezones=log_timezones,
        derived_exit_code=facts.optional_text("derived_exit_code"),
        reason=facts.optional_text("reason"), gpus_per_node=raw.integer("gpus_per_node", 8, 0, 1024),
        steps=list(steps), failed_node=failed_node,
    )


EVENTS = "events.json"
MAX_EVENTS = 100_000  # node state changes in one bundle: far more than any window holds
MAX_EVENT_TEXT = 4096  # a reason, state or user name longer than this is not sacctmgr's
DEFAULT_MARGIN_S = 600  # the collector's default margin_s


@dataclass
class NodeHistory:
    """A bundle's `events.json`: node state changes around the attempt, or why there are none."""

    events: list[NodeEvent] = field(default_factory=list)
    margin_s: int = DEFAULT_MARGIN_S  # changes up to this long after the end count as causes
    error: str | None = None  # the history could not be read where the bundle was made
    source: str = "sacctmgr show event"


def _optional_json(root: Root, name: str) -> _Fields | None:
    """An optional JSON file of the bundle, parsed; None when the bundle has none."""
    try:
        data = root.read_bytes(name, MAX_JSON_BYTES)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BundleError(f"cannot read {name}: {exc.strerror or exc}") from exc
    return _Fields(parse_json(data, name), name)


def load_events(root: Root) -> NodeHistory | None:
    """The bundle's optional `events.json`, validated field by field; None when it has none.

    `{"events": [{"node", "start", "end"?, "state", "reason"?, "user"?}], "margin_s"?,
    "error"?, "source"?}`, times ISO 8601 with an offset."""
    raw = _optional_json(root, EVENTS)
    if raw is None:
        return None
    from slurm_attr.scope.slurm import NodeEvent  # scope.slurm imports this module

    history = NodeHistory(margin_s=raw.integer("margin_s", DEFAULT_MARGIN_S, 0, 86_400),
                          error=_event_text(raw, "error") or None,
                          source=_event_text(raw, "source") or "sacctmgr show event")
    items = raw.raw.get("events") or []
    if not isinstance(items, list) or len(items) > MAX_EVENTS:
        raise raw.fail("events", f"a list of at most {MAX_EVENTS} node state changes")
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise raw.fail("events", "a list of objects")
        e = _Fields(item, f"{EVENTS}: events[{index}]")
        node = e.text("node", required=True)
        if not valid_hostname(node):
            raise e.fail("node", "a hostname")
        history.events.append(NodeEvent(node, e.time("start"), e.time("end") if e.present("end") else None,
                                        _event_text(e, "state", required=True),
                                        _event_text(e, "reason"), _event_text(e, "user")))
    return history


COVERAGE = "coverage.json"
COVERAGE_STATUSES = ("ok", "empty", "missing", "error", "refused", "truncated")
_COLLECTOR = re.compile(r"[a-z][a-z0-9_]{0,63}")
_MAX_COVERAGE = 10_000


@dataclass
class BundleCoverage:
    """A bundle's `coverage.json`: what the sources found where the bundle was made and could not
    pack (a file refused by the owner checks, a source that failed, why a log is missing), so the
    diagnosis of the bundle says what the diagnosis there would have said."""

    missing: dict[str, str] = field(default_factory=dict)  # collector -> reason
    unread: list[tuple[str, str | None, str, str | None]] = field(default_factory=list)
    sources: list[tuple[str, str | None, str, str | None]] = field(default_factory=list)


def load_coverage(root: Root) -> BundleCoverage | None:
    """`{"missing": {collector: reason}, "unread": [entry], "sources": [entry]}`, each entry
    `{"collector", "node"?, "status", "reason"?}`; None when the bundle has none."""
    raw = _optional_json(root, COVERAGE)
    if raw is None:
        return None
    missing = raw.raw.get("missing") or {}
    if not isinstance(missing, dict) or not all(
            isinstance(k, str) and _COLLECTOR.fullmatch(k) and isinstance(v, str)
            and len(v) <= MAX_EVENT_TEXT for k, v in missing.items()):
        raise raw.fail("missing", "an object mapping collector names to reasons")
    return BundleCoverage(dict(missing), _coverage_entries(raw, "unread"),
                          _coverage_entries(raw, "sources"))


def _coverage_entries(raw: _Fields, key: str) -> list[tuple[str, str | None, str, str | None]]:
    items = raw.raw.get(key) or []
    if not isinstance(items, list) or len(items) > _MAX_COVERAGE:
        raise raw.fail(key, f"a list of at most {_MAX_COVERAGE} coverage entries")
    entries = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise raw.fail(key, "a list of objects")
        e = _Fields(item, f"{COVERAGE}: {key}[{index}]")
        collector, node = e.text("collector", required=True), e.optional_text("node")
        if not _COLLECTOR.fullmatch(collector):
            raise e.fail("collector", "a collector name")
        if node is not None and not valid_hostname(node):
            raise e.fail("node", "a hostname")
        status = e.text("status", required=True)
        if status not in COVERAGE_STATUSES:
            raise e.fail("status", f"one of {', '.join(COVERAGE_STATUSES)}")
        entries.append((collector, node, status, _event_text(e, "reason") or None))
    return entries


def _event_text(raw: _Fields, key: str, *, required: bool = False) -> str:
    value = raw.text(key, required=required)
    if len(value) > MAX_EVENT_TEXT:
        raise raw.fail(key, f"text of at most {MAX_EVENT_TEXT} characters")
    return value
