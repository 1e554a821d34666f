"""Loading the rules directory: extraction patterns, classification tables, policy and XID catalog.

The built-in rules ship inside the package (the top-level `rules/` folder); `--rules DIR` or
`SLURM_ATTR_RULES` points at an admin's copy. A ruleset is validated when it loads, so a broken
rule fails loudly at start-up instead of silently matching nothing.
"""

from __future__ import annotations

import csv
import hashlib
import os
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from slurm_attr.model import SUB_DOMAINS

ROLES = ("cause", "symptom", "context")
ORIGINS = ("node", "app", "controller")
RULE_FILES = ("patterns.yaml", "classify.yaml", "policy.yaml", "xid_catalog.csv",
              "nvlink5_catalog.csv")


class RuleError(ValueError):
    """A rule file is malformed; the message names the file and the rule."""


@dataclass
class Pattern:
    id: str
    kind: str
    origins: tuple[str, ...]
    keywords: tuple[str, ...]
    regex: re.Pattern[str]
    decoder: str | None = None
    role: str = "symptom"
    sub_domain: str | None = None
    priority: int = 10
    code: str | None = None
    summary: str = ""
    action: str | None = None
    fields: dict[str, str] = field(default_factory=dict)
    context_before: int = 0
    match_job: bool = False
    match_node: bool = False
    generic: bool = False


@dataclass
class Ruleset:
    directory: str
    version: str
    patterns: list[Pattern]
    classify: dict[str, list[dict[str, Any]]]
    policy: dict[str, Any]
    xid_catalog: dict[int, dict[str, Any]]
    nvlink5_catalog: list[dict[str, str]]

    def for_origin(self, origin: str) -> list[Pattern]:
        return [p for p in self.patterns if origin in p.origins]


def builtin_dir() -> Path:
    """The rules shipped with the package (a plain directory: the package is installed as files)."""
    from slurm_attr import builtin_rules

    return Path(builtin_rules.__file__).parent


def _require(cond: bool, where: str, message: str) -> None:
    if not cond:
        raise RuleError(f"{where}: {message}")


def _pattern(raw: dict[str, Any], where: str) -> Pattern:
    _require(isinstance(raw, dict) and "id" in raw, where, "each pattern needs an id")
    where = f"{where} pattern {raw['id']}"
    for key in ("kind", "origins", "keywords", "regex"):
        _require(key in raw, where, f"missing '{key}'")
    origins = tuple(raw["origins"])
    _require(all(o in ORIGINS for o in origins), where, f"origins must be among {ORIGINS}")
    _require(bool(raw["keywords"]), where, "needs at least one keyword (the prefilter)")
    role = raw.get("role", "symptom")
    _require(role in ROLES, where, f"role must be one of {ROLES}")
    sub = raw.get("sub_domain")
    _require(sub is None or sub in SUB_DOMAINS, where, f"unknown sub_domain {sub!r}")
    try:
        regex = re.compile(raw["regex"])
    except re.error as exc:
        raise RuleError(f"{where}: bad regex: {exc}") from exc
    return Pattern(
        id=raw["id"], kind=raw["kind"], origins=origins,
        keywords=tuple(str(k) for k in raw["keywords"]), regex=regex,
        decoder=raw.get("decoder"), role=role, sub_domain=sub,
        priority=int(raw.get("priority", 10)), code=raw.get("code"),
        summary=raw.get("summary", ""), action=raw.get("action"),
        fields={k: str(v) for k, v in (raw.get("fields") or {}).items()},
        context_before=int(raw.get("context_before", 0)),
        match_job=bool(raw.get("match_job")), match_node=bool(raw.get("match_node")),
        generic=raw.get("decoder") == "python_exception",
    )


_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        # libyaml's loader when PyYAML has it: ten times faster, and rules load on every start
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_YAML_LOADER)
    except (OSError, yaml.YAMLError) as exc:
        raise RuleError(f"{path.name}: {exc}") from exc
    _require(isinstance(data, dict), path.name, "top level must be a mapping")
    return data


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _version(directory: Path) -> str:
    digest = hashlib.sha256()
    for name in RULE_FILES:
        digest.update(name.encode())
        digest.update((directory / name).read_bytes())
    return digest.hexdigest()[:12]


@cache
def load(directory: str | None = None) -> Ruleset:
    path = Path(directory or os.environ.get("SLURM_ATTR_RULES") or builtin_dir())
    for name in RULE_FILES:
        _require((path / name).is_file(), str(path), f"missing {name}")
    raw_patterns = _read_yaml(path / "patterns.yaml").get("patterns") or []
    patterns = [_pattern(p, "patterns.yaml") for p in raw_patterns]
    ids = [p.id for p in patterns]
    _require(len(ids) == len(set(ids)), "patterns.yaml", "duplicate pattern ids")
    classify = _read_yaml(path / "classify.yaml")
    for table in ("cuda_errors", "nccl_errors", "python_exceptions"):
        _require(isinstance(classify.get(table), list), "classify.yaml", f"needs a '{table}' list")
        for entry in classify[table]:
            for key in ("match", "msg", "exc"):
                if key in entry:
                    entry[f"_{key}"] = re.compile(entry[key])
    catalog = {int(r["xid"]): {**r, "priority": int(r["priority"])}
               for r in _read_csv(path / "xid_catalog.csv")}
    return Ruleset(
        directory=str(path), version=_version(path), patterns=patterns, classify=classify,
        policy=_read_yaml(path / "policy.yaml"), xid_catalog=catalog,
        nvlink5_catalog=_read_csv(path / "nvlink5_catalog.csv"),
    )
