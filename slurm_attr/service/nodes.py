"""A node's state as the node page shows it: live from `scontrol show node -o` when the service
runs on a Slurm host, cached for a few seconds (a page view must not become a controller RPC each
time), else the last DOWN/DRAIN a stored diagnosis recorded (from `sacctmgr show event`), saying
which of the two it is."""

from __future__ import annotations

import re
import shutil
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from slurm_attr.collect.confine import valid_hostname
from slurm_attr.config import Settings
from slurm_attr.scope.slurm import SlurmError, run
from slurm_attr.store.models import DiagnosisDocument, EventRow
from slurm_attr.store.repository import Store

TTL_S = 5.0  # how long an answer of scontrol is reused
_TIMEOUT_S = 5  # a controller that does not answer this fast is "unavailable", not a hung page
_STATE = re.compile(r"(?:^|\s)State=(\S+)")
# Reason= is free text (spaces, '='), written last but for a few keys newer Slurm adds after it.
_REASON = re.compile(r"(?:^|\s)Reason=(.*?)(?=\s+(?:Comment|Extra|InstanceId|InstanceType|"
                     r"Reservation|ResumeAfterTime)=|$)")
_MAX_TEXT = 500


def valid_node(name: str) -> bool:
    """A node name as Slurm and this service accept it: a plain hostname (never an option or a
    hostlist expression: it goes on scontrol's command line and into pages)."""
    return valid_hostname(name)


def parse_show_node(text: str) -> dict[str, str | None] | None:
    """State and reason from one line of `scontrol show node -o`; None when it has no State."""
    state = _STATE.search(text)
    if state is None:
        return None
    reason = _REASON.search(text)
    why = reason.group(1).strip() if reason else ""
    return {"state": state.group(1)[:_MAX_TEXT],
            "reason": why[:_MAX_TEXT] if why and why != "(null)" else None}


class NodeStates:
    """Current node states, from scontrol where this host has it, with a short cache."""

    def __init__(self, settings: Settings, store: Store, runner: Callable[..., str] | None = None,
                 ttl_s: float = TTL_S) -> None:
        self.settings, self.store, self.ttl_s = settings, store, ttl_s
        self.run = runner or run
        self.live = runner is not None or shutil.which(settings.scontrol) is not None
        self.lock = threading.Lock()
        self.cache: dict[str, tuple[float, dict[str, Any] | None, str | None]] = {}

    def state(self, node: str) -> dict[str, Any]:
        """`{"source": "scontrol", "state", "reason", "as_of"}` or, when scontrol cannot answer,
        `{"source": "recorded", "state", "reason", "as_of", "unavailable"}` (state None when
        nothing was ever recorded). `node` must have been validated."""
        found, why = self._live(node) if self.live else (None, "scontrol is not installed here")
        if found is not None:
            return found
        return {**self._recorded(node), "unavailable": why}

    def _live(self, node: str) -> tuple[dict[str, Any] | None, str | None]:
        now = time.monotonic()
        with self.lock:
            hit = self.cache.get(node)
        if hit is not None and hit[0] > now:
            return hit[1], hit[2]
        found, why = self._ask(node)
        with self.lock:
            if len(self.cache) > 10_000:  # names come from requests: keep the cache bounded
                self.cache.clear()
            self.cache[node] = (now + self.ttl_s, found, why)
        return found, why

    def _ask(self, node: str) -> tuple[dict[str, Any] | None, str | None]:
        try:
            out = self.run([self.settings.scontrol, "--oneliner", "show", "node", node], _TIMEOUT_S)
        except SlurmError as exc:
            return None, " ".join(str(exc).split())[:_MAX_TEXT]
        parsed = parse_show_node(out.strip().splitlines()[0] if out.strip() else "")
        if parsed is None:
            return None, "scontrol gave no state for this node"
        return {"source": "scontrol", **parsed, "as_of": datetime.now(UTC).isoformat()}, None

    def _recorded(self, node: str) -> dict[str, Any]:
        """The latest DOWN/DRAIN/FAIL a stored diagnosis holds for the node, read from the
        event's structured fields in that diagnosis's document (the event row keeps only the
        display text, and a reason may hold any character)."""
        stmt = (select(EventRow.time, EventRow.position, DiagnosisDocument.document)
                .join(DiagnosisDocument, DiagnosisDocument.diagnosis_id == EventRow.diagnosis_id)
                .where(EventRow.node == node, EventRow.kind == "node_state_change")
                .order_by(EventRow.time.desc()).limit(1))
        with self.store.engine.connect() as conn:
            row = conn.execute(stmt).first()
        if row is None:
            return {"source": "recorded", "state": None, "reason": None, "as_of": None}
        when, position, document = row
        event = next((e for e in document.get("symptoms", []) if e.get("id") == position), None)
        fields = event.get("fields", {}) if event else {}
        return {"source": "recorded", "state": fields.get("state"), "reason": fields.get("reason"),
                "as_of": when.replace(tzinfo=when.tzinfo or UTC).isoformat() if when else None}
