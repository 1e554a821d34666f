"""`slurm-attr rules explain LINE`: what the real extractor makes of one log line, and which
patterns' keywords it hit without their regex matching (the usual mistake when writing a rule)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from slurm_attr.decode.base import strip_rank
from slurm_attr.extract.extractor import Extractor, FileScan, search_near_keywords
from slurm_attr.extract.timestamps import Clock
from slurm_attr.model import Coverage, Event, Observations, Workload
from slurm_attr.ruleset import Ruleset


@dataclass
class Explanation:
    events: list[Event]
    near_misses: list[str]  # pattern ids whose keywords are in the line but whose regex is not
    # the decoders.yaml outcome and adjustment keys the decoders used: what to edit to change them
    outcome_keys: list[str] = field(default_factory=list)


class _Recording(dict[str, Any]):
    """A decoders.yaml table that notes each key a decoder looks up."""

    def __init__(self, table: dict[str, Any], seen: list[str]) -> None:
        super().__init__(table)
        self.seen = seen

    def __getitem__(self, key: str) -> Any:
        self.seen.append(key)
        return super().__getitem__(key)


def explain(ruleset: Ruleset, line: str, origin: str = "node", node: str = "node01",
            job_id: str = "0") -> Explanation:
    """Run the line through extraction as if it came from `origin` (node, app or controller) for a
    job `job_id` on `node` that was running around now."""
    now = datetime.now(UTC)
    workload = Workload(cluster="explain", job_id=job_id, attempt=0, name="", user="", partition="",
                        nodelist=node, nodes=[node], start=now - timedelta(days=180),
                        end=now + timedelta(days=1), state="FAILED", exit_code="1:0")
    used: list[str] = []
    ruleset = replace(ruleset, outcomes=_Recording(ruleset.outcomes, used),
                      adjustments=_Recording(ruleset.adjustments, used))
    extractor = Extractor(ruleset, workload)
    obs = Observations()
    with tempfile.TemporaryDirectory(prefix="slurm-attr-explain-") as tmp:
        path = Path(tmp) / "line.log"
        path.write_text(line.rstrip("\n") + "\n", encoding="utf-8")
        scan = FileScan("line", origin, node if origin == "node" else None, Clock(workload.end, UTC),
                        Coverage("explain", None), path_nodes=node if origin == "app" else None)
        extractor.scan(path, scan, obs)
    matched = {e.rule for e in obs.events} | {e.fields.get("generic_rule") for e in obs.events}
    body = strip_rank(line)[0] if origin == "app" else line  # as the extractor sees it
    near = [p.id for p in ruleset.for_origin(origin)
            if p.id not in matched and any(k in line for k in p.keywords)
            and not search_near_keywords(p, body)]
    return Explanation(obs.events, near, list(dict.fromkeys(used)))
