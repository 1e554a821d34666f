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

from slurm_attr.model import OUTCOMES, SUB_DOMAINS

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
    # role, sub_domain or priority written in the YAML for a pattern with a decoder: they win
    # over what the decoder says, so an admin's edit always takes effect.
    overrides: dict[str, Any] = field(default_factory=dict)


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
    import importlib  # the package maps slurm_attr.builtin_rules onto the top-level rules/

    return Path(str(importlib.import_module("slurm_attr.builtin_rules").__file__)).parent


def _require(cond: bool, where: str, message: str) -> None:
    if not cond:
        raise RuleError(f"{where}: {message}")


PATTERN_KEYS = {"id", "kind", "origins", "keywords", "regex", "decoder", "role", "sub_domain",
                "priority", "code", "summary", "action", "fields", "context_before", "match_job",
                "match_node"}


def _locate(path: Path, *needles: str) -> str:
    """`file:line` of the first line holding needles[-1] after lines holding the ones before it
    (a section, then a key in it), or the file alone when it is not found."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return path.name
    at = 0
    for needle in needles:
        found = next((i for i in range(at, len(lines)) if needle in lines[i]), None)
        if found is None:
            return f"{path.name}:{at + 1}" if at else path.name
        at = found
    return f"{path.name}:{at + 1}"


def _pattern(raw: dict[str, Any], where: str) -> Pattern:
    _require(isinstance(raw, dict) and "id" in raw, where, "each pattern needs an id")
    where = f"{where} pattern {raw['id']}"
    unknown = sorted(set(raw) - PATTERN_KEYS)
    if unknown:
        raise RuleError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(PATTERN_KEYS))})")
    for key in ("kind", "origins", "keywords", "regex"):
        _require(key in raw, where, f"missing '{key}'")
    _require(isinstance(raw["keywords"], list) and all(isinstance(k, str) for k in raw["keywords"]),
             where, "keywords must be a list of strings")
    _require(isinstance(raw.get("priority", 0), int), where, "priority must be a whole number")
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
        overrides={k: raw[k] for k in ("role", "sub_domain", "priority") if k in raw and raw.get("decoder")},
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
    """The ruleset, validated: a problem is a RuleError naming the file, the line and the key."""
    path = Path(directory or os.environ.get("SLURM_ATTR_RULES") or builtin_dir())
    for name in RULE_FILES:
        _require((path / name).is_file(), str(path), f"missing {name}")
    patterns = _patterns(path / "patterns.yaml")
    classify = _classify_tables(path / "classify.yaml")
    policy = _read_yaml(path / "policy.yaml")
    _check_policy(policy, path / "policy.yaml")
    return Ruleset(
        directory=str(path), version=_version(path), patterns=patterns, classify=classify,
        policy=policy, xid_catalog=_xid_catalog(path / "xid_catalog.csv"),
        nvlink5_catalog=_read_csv(path / "nvlink5_catalog.csv"),
    )


def _patterns(path: Path) -> list[Pattern]:
    from slurm_attr.decode.registry import DECODERS  # the decoders import this module

    raw_patterns = _read_yaml(path).get("patterns")
    if not isinstance(raw_patterns, list):
        raise RuleError(f"{path.name}: needs a 'patterns' list")
    patterns, seen = [], set()
    for raw in raw_patterns:
        where = _locate(path, f"id: {raw.get('id')}") if isinstance(raw, dict) else path.name
        pattern = _pattern(raw, where)
        _require(pattern.id not in seen, where, f"duplicate pattern id {pattern.id!r}")
        _require(pattern.decoder is None or pattern.decoder in DECODERS, where,
                 f"unknown decoder {pattern.decoder!r} (known: {', '.join(sorted(DECODERS))})")
        seen.add(pattern.id)
        patterns.append(pattern)
    return patterns


def _classify_tables(path: Path) -> dict[str, Any]:
    classify = _read_yaml(path)
    for table in ("cuda_errors", "nccl_errors", "python_exceptions"):
        _require(isinstance(classify.get(table), list), path.name, f"needs a '{table}' list")
        for entry in classify[table]:
            where = _locate(path, f"{table}:", str(entry.get("match") or entry.get("msg")
                                                    or entry.get("exc") or ""))
            _require(isinstance(entry, dict), where, f"{table}: entries must be mappings")
            sub = entry.get("sub_domain")
            _require(sub is None or sub in SUB_DOMAINS, where, f"{table}: unknown sub_domain {sub!r}")
            _require(entry.get("role", "cause") in ROLES, where, f"{table}: role must be one of {ROLES}")
            for key in ("match", "msg", "exc"):
                if key in entry:
                    try:
                        entry[f"_{key}"] = re.compile(entry[key])
                    except re.error as exc:
                        raise RuleError(f"{where}: {table}: bad regex in '{key}': {exc}") from exc
    return classify


POLICY_SECTIONS = ("window", "bursts", "ambiguity", "scheduler_states", "explained_by", "outcomes",
                   "default_actions")


def _check_policy(policy: dict[str, Any], path: Path) -> None:
    for section in POLICY_SECTIONS:
        _require(isinstance(policy.get(section), dict), _locate(path, f"{section}:"),
                 f"missing section '{section}' (a mapping)")
    for domain, outcome in policy["outcomes"].items():
        where = _locate(path, "outcomes:", f"{domain}:")
        _require(domain in SUB_DOMAINS, where, f"outcomes: unknown sub_domain {domain!r}")
        _require(outcome in OUTCOMES, where,
                 f"outcomes: {domain}: unknown outcome {outcome!r} (one of {', '.join(OUTCOMES)})")
    missing = [d for d in SUB_DOMAINS if d not in policy["outcomes"]]
    _require(not missing, _locate(path, "outcomes:"), f"outcomes: no outcome for {', '.join(missing)}")
    for state, spec in policy["scheduler_states"].items():
        where = _locate(path, "scheduler_states:", f"{state}:")
        _require(isinstance(spec, dict) and spec.get("sub_domain") in SUB_DOMAINS, where,
                 f"scheduler_states: {state}: needs a known sub_domain")
    for domain, spec in policy["explained_by"].items():
        where = _locate(path, "explained_by:", f"{domain}:")
        named = [d for key in ("same_node", "any_node") for d in (spec or {}).get(key, [])]
        bad = [d for d in [domain, *named] if d not in SUB_DOMAINS]
        if bad:
            raise RuleError(f"{where}: explained_by: unknown sub_domain {bad[0]!r}")


def _xid_catalog(path: Path) -> dict[int, dict[str, Any]]:
    catalog = {}
    for line, row in enumerate(_read_csv(path), start=2):
        where = f"{path.name}:{line}"
        try:
            xid, priority = int(row["xid"]), int(row["priority"])
        except (KeyError, TypeError, ValueError) as exc:
            raise RuleError(f"{where}: xid and priority must be whole numbers") from exc
        _require(row.get("sub_domain") in SUB_DOMAINS, where, f"unknown sub_domain {row.get('sub_domain')!r}")
        _require(row.get("role") in ROLES, where, f"role must be one of {ROLES}")
        catalog[xid] = {**row, "priority": priority}
    return catalog
