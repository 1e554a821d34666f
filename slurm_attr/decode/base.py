"""Shared types for decoders."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from slurm_attr.model import Workload
from slurm_attr.ruleset import Ruleset


@dataclass
class Classification:
    role: str
    sub_domain: str | None
    priority: int
    summary: str
    code: str | None = None
    action: str | None = None
    fields: dict[str, str] = field(default_factory=dict)
    node: str | None = None  # set when the line names the node (e.g. a controller message)
    kind: str | None = None


@dataclass
class DecodeContext:
    ruleset: Ruleset
    workload: Workload
    before: list[str] = field(default_factory=list)  # earlier lines, oldest first


class SafeDict(dict):
    """Template fields: a missing name renders as '?' instead of raising."""

    def __missing__(self, key: str) -> str:
        return "?"


def render(template: str | None, fields: dict[str, Any]) -> str:
    if not template:
        return ""
    if fields.get("rank") is None:  # a line without a rank prefix (one process, or no launcher tag)
        template = template.replace("rank {rank}", "a rank")
    try:
        return template.format_map(SafeDict({k: v for k, v in fields.items() if v is not None}))
    except (ValueError, IndexError, AttributeError):
        return template


def classify_from_table(table: list[dict[str, Any]], fields: dict[str, str], *,
                        text: str = "") -> Classification | None:
    """First entry whose `match` (on text), `exc` and `msg` regexes all match the fields."""
    for entry in table:
        checks = (("_match", text), ("_exc", fields.get("exc", "")), ("_msg", fields.get("msg", "")))
        if all(entry[key].search(value or "") for key, value in checks if key in entry):
            return Classification(
                role=entry.get("role", "symptom"), sub_domain=entry.get("sub_domain"),
                priority=int(entry.get("priority", 10)),
                summary=render(entry.get("summary"), fields),
                code=render(entry.get("code"), fields) or None,
                action=render(entry.get("action"), fields) or None,
            )
    return None


RANK_PREFIX = re.compile(r"^(?:\[rank(?P<a>\d+)\]:|\[default(?P<b>\d+)\]:|(?P<c>\d{1,5}):) ?")


def strip_rank(line: str) -> tuple[str, str | None]:
    """(text without the launcher's rank prefix, the rank) for `[rank3]:`, `[default3]:`, `3: `."""
    m = RANK_PREFIX.match(line)
    if not m:
        return line, None
    return line[m.end():], m["a"] or m["b"] or m["c"]
