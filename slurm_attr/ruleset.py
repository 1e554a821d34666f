"""Loading the rules directory: extraction patterns, classification tables, policy, what the
decoders' outcomes mean, and the vendor catalogs (Xid, NVLink5) with the local Xid overlay.

The built-in rules ship inside the package (the top-level `rules/` folder); `--rules DIR` or
`SLURM_ATTR_RULES` points at an admin's copy. A ruleset is validated when it loads, so a broken
rule fails loudly at start-up instead of silently matching nothing.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache, cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slurm_attr.model import OUTCOMES, SUB_DOMAINS
from slurm_attr.private_cache import PrivateCache

if TYPE_CHECKING:
    from slurm_attr.model import Workload

ROLES = ("cause", "symptom", "context")
ORIGINS = ("node", "app", "controller")
# The vendor catalogs are generated (tools/gen_xid_catalog.py) and carry their source's version;
# every other file is the site's own rules.
VENDOR_FILES = ("xid_catalog.csv", "nvlink5_catalog.csv")
LOCAL_FILES = ("patterns.yaml", "classify.yaml", "policy.yaml", "decoders.yaml", "xid_overlay.csv")
RULE_FILES = (*LOCAL_FILES, *VENDOR_FILES)


class RuleError(ValueError):
    """A rule file is malformed; the message names the file and the rule."""


@dataclass
class Pattern:
    id: str
    kind: str
    origins: tuple[str, ...]
    keywords: tuple[str, ...]
    source: str  # the regex as written
    decoder: str | None = None
    role: str = "symptom"
    sub_domain: str | None = None
    priority: int = 10
    # The outcome when this line is the root cause, where it is not the sub_domain's usual one
    # (a node that cannot set up a job's container is the host, but misconfigured, not broken).
    outcome: str | None = None
    code: str | None = None
    summary: str = ""
    action: str | None = None
    fields: dict[str, str] = field(default_factory=dict)
    context_before: int = 0
    match_job: bool = False
    match_node: bool = False
    lines_after: bool = False  # record how many lines of its file follow the match
    off_node: bool = False  # the line is about a service off the job's nodes: it names none of them
    generic: bool = False
    # role, sub_domain or priority written in the YAML for a pattern with a decoder: they win
    # over what the decoder says, so an admin's edit always takes effect.
    overrides: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """Compiled on first use: a line reaches a pattern only past the keyword prefilter, so
        most are never needed in one analysis. A file's regexes were all compiled when it was
        first loaded (see load), so this does not fail for the bytes it came from."""
        try:
            return re.compile(self.source)
        except re.error as exc:
            raise RuleError(f"patterns.yaml pattern {self.id}: bad regex: {exc}") from exc


@dataclass(frozen=True)
class Outcome:
    """What a decoder outcome key means (decoders.yaml `outcomes`)."""

    role: str
    sub_domain: str | None
    priority: int
    outcome: str | None = None  # see Pattern.outcome


EARLIER = "earlier"  # `sub_domain: earlier` in an adjustment: the blamed earlier Xid's sub_domain


@dataclass(frozen=True)
class Adjustment:
    """A change to an Xid's catalog classification (decoders.yaml `adjustments`); None: unchanged."""

    role: str | None = None
    sub_domain: str | None = None
    sets_sub_domain: bool = False  # sub_domain may be set to null, so None alone cannot say "keep"
    priority: int | None = None
    priority_at_most: int | None = None
    priority_from_earlier: tuple[int, int, int] | None = None  # (at_most, minus, at_least)
    when_sub_domain: tuple[str, ...] | None = None


@dataclass
class Ruleset:
    directory: str
    version: str
    patterns: list[Pattern]
    classify: dict[str, list[dict[str, Any]]]
    policy: dict[str, Any]
    xid_catalog: dict[int, dict[str, Any]]
    nvlink5_catalog: list[dict[str, str]]
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    adjustments: dict[str, Adjustment] = field(default_factory=dict)
    # CUDA driver API result numbers and their texts (classify.yaml `cuda_driver_codes`)
    cuda_driver_codes: dict[int, str] = field(default_factory=dict)
    # The vendor catalogs' versions (their generated headers) and the local Xid overlay's (a hash
    # of xid_overlay.csv); `version` above covers every rules file.
    versions: dict[str, str] = field(default_factory=dict)

    def for_origin(self, origin: str) -> list[Pattern]:
        return [p for p in self.patterns if origin in p.origins]

    def evidence_window(self, workload: Workload) -> tuple[datetime, datetime]:
        """(first, last) moments an event of the attempt counts (policy `window`): before
        `first` it is dropped, from there to the job's start it is context, from the start to
        `last` evidence, and past `last` dropped."""
        window = self.policy["window"]
        return (workload.start - timedelta(seconds=float(window["context_before_s"])),
                workload.end + timedelta(seconds=float(window["margin_after_s"])))


def builtin_dir() -> Path:
    """The rules shipped with the package (a plain directory: the package is installed as files)."""
    import importlib  # the package maps slurm_attr.builtin_rules onto the top-level rules/

    return Path(str(importlib.import_module("slurm_attr.builtin_rules").__file__)).parent


def _require(cond: bool, where: str, message: str) -> None:
    if not cond:
        raise RuleError(f"{where}: {message}")


PATTERN_KEYS = {"id", "kind", "origins", "keywords", "regex", "decoder", "role", "sub_domain",
                "priority", "outcome", "code", "summary", "action", "fields", "context_before",
                "match_job", "match_node", "lines_after", "off_node"}


def _lines_of(path: Path) -> list[str]:
    """A rules file's lines, read once per version of the file: every check names its line, pass
    or fail, and reading the file for each would cost a start-up dearly."""
    st = path.stat()
    return _lines_cached(path, st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=32)
def _lines_cached(path: Path, _mtime_ns: int, _size: int) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").splitlines()


def _locate(path: Path, *needles: str) -> str:
    """`file:line` of the first line holding needles[-1] after lines holding the ones before it
    (a section, then a key in it), or the file alone when it is not found."""
    try:
        lines = _lines_of(path)
    except OSError:
        return path.name
    at = 0
    for needle in needles:
        found = next((i for i in range(at, len(lines)) if needle in lines[i]), None)
        if found is None:
            return f"{path.name}:{at + 1}" if at else path.name
        at = found
    return f"{path.name}:{at + 1}"


def _pattern(raw: dict[str, Any], where: str, compile_now: bool) -> Pattern:
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
    if not raw.get("decoder"):  # what the line becomes is written on the pattern, never defaulted
        for key in ("role", "priority", "summary"):
            _require(key in raw, where, f"missing '{key}' (a pattern without a decoder says what it becomes)")
    role = raw.get("role", "symptom")
    _require(role in ROLES, where, f"role must be one of {ROLES}")
    sub = raw.get("sub_domain")
    _require(sub is None or sub in SUB_DOMAINS, where, f"unknown sub_domain {sub!r}")
    _require(raw.get("outcome") is None or raw["outcome"] in OUTCOMES, where,
             f"outcome must be one of {', '.join(OUTCOMES)}")
    _require(isinstance(raw["regex"], str), where, "regex must be a string")
    pattern = Pattern(
        id=raw["id"], kind=raw["kind"], origins=origins,
        keywords=tuple(str(k) for k in raw["keywords"]), source=raw["regex"],
        decoder=raw.get("decoder"), role=role, sub_domain=sub, outcome=raw.get("outcome"),
        priority=int(raw.get("priority", 10)), code=raw.get("code"),
        summary=raw.get("summary", ""), action=raw.get("action"),
        fields={k: str(v) for k, v in (raw.get("fields") or {}).items()},
        context_before=int(raw.get("context_before", 0)),
        match_job=bool(raw.get("match_job")), match_node=bool(raw.get("match_node")),
        lines_after=bool(raw.get("lines_after")), off_node=bool(raw.get("off_node")),
        generic=raw.get("decoder") == "python_exception",
        overrides={k: raw[k] for k in ("role", "sub_domain", "priority", "outcome")
                   if k in raw and raw.get("decoder")},
    )
    if compile_now:
        try:
            pattern.regex  # noqa: B018 - compiled here to be checked, and kept
        except RuleError as exc:
            raise RuleError(f"{where}: bad regex: {exc.__cause__}") from exc.__cause__
    return pattern


@dataclass
class _Reading:
    """One load of a rules directory: which files came from the parsed cache (their bytes were
    loaded and checked before), and the parses to cache once the whole load has succeeded."""

    checked_before: set[str] = field(default_factory=set)
    to_cache: list[tuple[bytes, Any]] = field(default_factory=list)


def _read_yaml(path: Path, reading: _Reading) -> dict[str, Any]:
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise RuleError(f"{path.name}: {exc}") from exc
    data = _parsed.get(text)
    if data is None:
        data = _parse_yaml(text, path)
        reading.to_cache.append((text, _parsed.encode(data)))  # before any check adds to it
    else:
        reading.checked_before.add(path.name)
    _require(isinstance(data, dict), path.name, "top level must be a mapping")
    return data


def _parse_yaml(text: bytes, path: Path) -> Any:
    import yaml  # only when the parse is not cached: importing PyYAML is a good part of a start

    try:
        return yaml.load(text.decode("utf-8"), Loader=_strict_loader(yaml))
    except yaml.MarkedYAMLError as exc:  # one located line, as every other rules error
        where = f"{path.name}:{exc.problem_mark.line + 1}" if exc.problem_mark else path.name
        raise RuleError(f"{where}: {exc.problem or exc}") from exc
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise RuleError(f"{path.name}: {exc}") from exc


def _strict_loader(yaml: Any) -> Any:
    """libyaml's safe loader (ten times faster) that refuses a key given twice in one mapping: YAML
    keeps the last silently, so a rule edited by hand would lose its first `action` or `regex`."""
    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class StrictLoader(base):  # type: ignore[misc,valid-type]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r}", key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep)

    return StrictLoader


class _ParsedCache:
    """Parsed rules files as JSON in the user's cache directory, named by the hash of the file's
    bytes: an edited file is a new name, so nothing is ever stale. Only what JSON keeps exactly is
    cached (a mapping with keys other than strings is written as pairs); a cache another user
    could have written is not used (private_cache), and any problem just means parsing the YAML."""

    _PAIRS = "\x00pairs"

    def __init__(self) -> None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        self.files = PrivateCache(Path(base), "slurm-attr", "rules-3")  # 3: only files without duplicate keys

    @staticmethod
    def _name(text: bytes) -> str:
        return f"{hashlib.sha256(text).hexdigest()}.json"

    def get(self, text: bytes) -> Any:
        data = self.files.read(self._name(text))
        if data is None:
            return None
        try:
            return self._restore(json.loads(data))
        except (ValueError, TypeError, KeyError):
            return None

    def encode(self, data: Any) -> bytes | None:
        try:
            return json.dumps(self._plain(data)).encode()
        except (TypeError, ValueError):
            return None

    def put(self, text: bytes, encoded: bytes | None) -> None:
        if encoded is not None:
            self.files.write(self._name(text), encoded)

    def _plain(self, value: Any) -> Any:
        if isinstance(value, dict):
            if all(isinstance(k, str) for k in value):
                return {k: self._plain(v) for k, v in value.items()}
            return {self._PAIRS: [[self._plain(k), self._plain(v)] for k, v in value.items()]}
        if isinstance(value, list):
            return [self._plain(v) for v in value]
        if value is None or isinstance(value, str | int | float):
            return value
        raise TypeError(f"not kept exactly by JSON: {type(value).__name__}")

    def _restore(self, value: Any) -> Any:
        if isinstance(value, dict):
            if set(value) == {self._PAIRS}:
                return {self._restore(k): self._restore(v) for k, v in value[self._PAIRS]}
            return {k: self._restore(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._restore(v) for v in value]
        return value


_parsed = _ParsedCache()


@dataclass
class Table:
    """A CSV rules file: its leading `# key: value` comment lines, its columns and its rows, each
    with the line it is on (comment lines may also stand between rows)."""

    meta: dict[str, str]
    columns: list[str]
    header_line: int
    rows: list[tuple[int, dict[str, str]]]


def _read_table(path: Path) -> Table:
    try:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleError(f"{path.name}: {exc}") from exc
    meta: dict[str, str] = {}
    for line in lines:
        if not line.startswith("#"):
            break
        key, _, value = line[1:].partition(":")
        meta.setdefault(key.strip().lower(), value.strip())
    # A comment line becomes a blank one, which the reader skips, so line numbers still count.
    reader = csv.reader("\n" if line.startswith("#") else line for line in lines)
    columns: list[str] = []
    header_line = 1
    rows: list[tuple[int, dict[str, str]]] = []
    try:
        for cells in reader:
            if not cells:
                continue
            if not columns:
                columns, header_line = [c.strip() for c in cells], reader.line_num
                continue
            _require(len(cells) == len(columns), f"{path.name}:{reader.line_num}",
                     f"{len(cells)} cells, but the header names {len(columns)} columns")
            rows.append((reader.line_num, dict(zip(columns, cells, strict=True))))
    except csv.Error as exc:
        raise RuleError(f"{path.name}:{reader.line_num}: {exc}") from exc
    return Table(meta, columns, header_line, rows)


def _digest(directory: Path, names: tuple[str, ...]) -> str:
    digest = hashlib.sha256()
    for name in names:
        digest.update(name.encode())
        digest.update((directory / name).read_bytes())
    return digest.hexdigest()[:12]


def _version(directory: Path) -> str:
    return _digest(directory, RULE_FILES)


@cache
def load(directory: str | None = None) -> Ruleset:
    """The ruleset, validated: a problem is a RuleError naming the file, the line and the key."""
    path = Path(directory or os.environ.get("SLURM_ATTR_RULES") or builtin_dir())
    for name in RULE_FILES:
        _require((path / name).is_file(), str(path), f"missing {name}")
    reading = _Reading()
    patterns = _patterns(path / "patterns.yaml", reading)
    classify, cuda_driver_codes = _classify_tables(path / "classify.yaml", reading)
    policy = _read_yaml(path / "policy.yaml", reading)
    _check_policy(policy, path / "policy.yaml")
    outcomes, adjustments = _decoder_rules(path / "decoders.yaml", reading)
    xid_vendor = _read_vendor(path / "xid_catalog.csv", XID_VENDOR_COLUMNS)
    nvlink5 = _read_vendor(path / "nvlink5_catalog.csv", NVLINK5_COLUMNS)
    xid_catalog = _xid_catalog(xid_vendor, path / "xid_overlay.csv", outcomes["xid.not_in_overlay"])
    for text, encoded in reading.to_cache:  # only now: every check of these bytes passed
        _parsed.put(text, encoded)
    return Ruleset(
        directory=str(path), version=_version(path), patterns=patterns, classify=classify,
        policy=policy, xid_catalog=xid_catalog, nvlink5_catalog=[row for _, row in nvlink5.rows],
        outcomes=outcomes, adjustments=adjustments, cuda_driver_codes=cuda_driver_codes,
        versions={"xid_catalog": xid_vendor.meta["version"],
                  "nvlink5_catalog": nvlink5.meta["version"],
                  "overlay": _digest(path, ("xid_overlay.csv",))},
    )


def _patterns(path: Path, reading: _Reading) -> list[Pattern]:
    from slurm_attr.decode.registry import DECODERS  # the decoders import this module

    raw_patterns = _read_yaml(path, reading).get("patterns")
    compile_now = path.name not in reading.checked_before
    if not isinstance(raw_patterns, list):
        raise RuleError(f"{path.name}: needs a 'patterns' list")
    patterns, seen = [], set()
    for raw in raw_patterns:
        where = _locate(path, f"id: {raw.get('id')}") if isinstance(raw, dict) else path.name
        pattern = _pattern(raw, where, compile_now)
        _require(pattern.id not in seen, where, f"duplicate pattern id {pattern.id!r}")
        _require(pattern.decoder is None or pattern.decoder in DECODERS, where,
                 f"unknown decoder {pattern.decoder!r} (known: {', '.join(sorted(DECODERS))})")
        seen.add(pattern.id)
        patterns.append(pattern)
    return patterns


CLASSIFY_TABLES = ("cuda_errors", "nccl_errors", "python_exceptions", "health_checks")


def _classify_tables(path: Path, reading: _Reading) -> tuple[dict[str, Any], dict[int, str]]:
    """The classification tables, and the CUDA driver API's result numbers with their texts."""
    classify = _read_yaml(path, reading)
    for table in CLASSIFY_TABLES:
        _require(isinstance(classify.get(table), list), path.name, f"needs a '{table}' list")
        for entry in classify[table]:
            where = _locate(path, f"{table}:", str(entry.get("match") or entry.get("msg")
                                                    or entry.get("exc") or ""))
            _require(isinstance(entry, dict), where, f"{table}: entries must be mappings")
            sub = entry.get("sub_domain")
            _require(sub is None or sub in SUB_DOMAINS, where, f"{table}: unknown sub_domain {sub!r}")
            _require(entry.get("role") in ROLES, where, f"{table}: role must be one of {ROLES}")
            _require(entry.get("outcome") is None or entry["outcome"] in OUTCOMES, where,
                     f"{table}: outcome must be one of {', '.join(OUTCOMES)}")
            _require(isinstance(entry.get("priority"), int), where,
                     f"{table}: priority must be a whole number")
            for key in ("match", "msg", "exc"):
                if key in entry:
                    try:
                        entry[f"_{key}"] = re.compile(entry[key])
                    except re.error as exc:
                        raise RuleError(f"{where}: {table}: bad regex in '{key}': {exc}") from exc
    codes = classify.get("cuda_driver_codes")
    numbered = isinstance(codes, dict) and all(isinstance(k, int) and isinstance(v, str)
                                               for k, v in codes.items())
    _require(numbered, _locate(path, "cuda_driver_codes:"),
             "cuda_driver_codes must map result numbers to their texts")
    tables = {table: classify[table] for table in CLASSIFY_TABLES}
    return tables, dict(codes or {})


POLICY_SECTIONS = ("window", "bursts", "metrics", "ambiguity", "scheduler_states", "explained_by",
                   "outcomes", "default_actions")


def _check_exit_signals(policy: dict[str, Any], path: Path) -> None:
    signals = policy.get("exit_signals") or {}
    _require(isinstance(signals, dict), _locate(path, "exit_signals:"), "exit_signals: must be a mapping")
    for number, spec in signals.items():
        where = _locate(path, "exit_signals:", f"{number}:")
        _require(isinstance(number, int) and 1 <= number <= 64, where,
                 f"exit_signals: {number!r} is not a signal number (1-64)")
        _require(isinstance(spec, dict) and spec.get("sub_domain") in SUB_DOMAINS
                 and all(isinstance(spec.get(key), str) for key in ("summary", "reading")), where,
                 f"exit_signals: {number}: needs a known sub_domain, a summary and a reading")


def _check_policy(policy: dict[str, Any], path: Path) -> None:
    for section in POLICY_SECTIONS:
        _require(isinstance(policy.get(section), dict), _locate(path, f"{section}:"),
                 f"missing section '{section}' (a mapping)")
    delta = policy["metrics"].get("dcgm_xid_priority_delta")
    _require(isinstance(delta, int) and not isinstance(delta, bool) and -100 <= delta <= 100,
             _locate(path, "metrics:", "dcgm_xid_priority_delta:"),
             "metrics: dcgm_xid_priority_delta must be a whole number from -100 to 100")
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
    for i, spec in enumerate(policy.get("aftermath") or []):
        where = _locate(path, "aftermath:")
        ok = (isinstance(spec, dict) and set(spec) == {"codes", "after", "within_s"}
              and isinstance(spec["codes"], list) and all(isinstance(c, str) for c in spec["codes"])
              and isinstance(spec["within_s"], (int, float)) and spec["within_s"] > 0
              and isinstance(spec["after"], list))
        _require(ok, where, f"aftermath: entry {i + 1} needs codes (a list of event codes), "
                            "after (a list of sub_domains) and within_s (seconds)")
        bad = [d for d in spec["after"] if d not in SUB_DOMAINS]
        _require(not bad, where, f"aftermath: entry {i + 1}: unknown sub_domain {bad[0]!r}" if bad else "")
    for key in ("node_scoped_domains", "placed_by_first_failure"):
        listed = policy.get(key) or []
        bad = [d for d in listed if d not in SUB_DOMAINS] if isinstance(listed, list) else [listed]
        _require(not bad, _locate(path, f"{key}:"), f"{key}: unknown sub_domain {bad[0]!r}" if bad else "")
    _check_exit_signals(policy, path)
    _check_must_agree(policy, path)
    _check_collectives(policy, path)
    _check_hung_on(policy, path)
    _check_lost_node_after(policy, path)
    _check_absent_from_timeouts(policy, path)
    _check_timeouts_must_agree(policy, path)
    _check_across_hosts(policy, path)
    _check_without_gpus(policy, path)
    _check_hung_after_done(policy, path)
    _check_stalled_before_first_result(policy, path)
    _check_leads(policy, path)


def _check_leads(policy: dict[str, Any], path: Path) -> None:
    spec = policy.get("unexplained_failure_leads")
    if spec is None:
        return
    where = _locate(path, "unexplained_failure_leads:")
    ok = (isinstance(spec, dict) and isinstance(spec.get("domains"), list)
          and isinstance(spec.get("min_priority"), int)
          and isinstance(spec.get("after_end_s", 0), (int, float)))
    _require(ok, where, "unexplained_failure_leads needs domains (a list of sub_domains), min_priority "
                        "(a whole number) and optionally after_end_s (seconds)")
    bad = [d for d in spec["domains"] if d not in SUB_DOMAINS]
    _require(not bad, where, f"unexplained_failure_leads: unknown sub_domain {bad[0]!r}" if bad else "")


def _check_must_agree(policy: dict[str, Any], path: Path) -> None:
    for i, spec in enumerate(policy.get("must_agree") or []):
        where = _locate(path, "must_agree:")
        ok = (isinstance(spec, dict) and {"kind", "sub_domain", "priority", "code", "summary"} <= set(spec)
              and isinstance(spec["kind"], str) and isinstance(spec.get("fallbacks", []), list)
              and _percent(spec["priority"]))
        _require(ok, where, f"must_agree: entry {i + 1} needs kind, sub_domain, priority (0-100), code "
                            "and summary, and fallbacks must be a list")
        _require(spec["sub_domain"] in SUB_DOMAINS, where,
                 f"must_agree: entry {i + 1}: unknown sub_domain {spec['sub_domain']!r}")
        _require(spec.get("outcome", "unknown") in OUTCOMES, where,
                 f"must_agree: entry {i + 1}: outcome must be one of {', '.join(OUTCOMES)}")


def _names(value: Any) -> bool:
    """A non-empty list of names."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


def _percent(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 100


def _check_collectives(policy: dict[str, Any], path: Path) -> None:
    spec = policy.get("collectives_must_match")
    if spec is None:
        return
    where = _locate(path, "collectives_must_match:")
    needed = {"kind", "fields", "ops", "sub_domain", "priority", "code", "summary"}
    ok = (isinstance(spec, dict) and needed <= set(spec) and _names(spec["fields"]) and _names(spec["ops"])
          and _percent(spec["priority"]))
    _require(ok, where, "collectives_must_match needs kind, fields and ops (lists of names), sub_domain, "
                        "priority (0-100), code and summary")
    _require(spec["sub_domain"] in SUB_DOMAINS, where,
             f"collectives_must_match: unknown sub_domain {spec['sub_domain']!r}")


def _check_hung_on(policy: dict[str, Any], path: Path) -> None:
    spec = policy.get("hung_on")
    if spec is None:
        return
    ok = (isinstance(spec, dict) and {"states", "kinds", "priority", "notes"} <= set(spec)
          and _names(spec["states"]) and _names(spec["kinds"]) and _percent(spec["priority"])
          and isinstance(spec["notes"], dict) and set(spec["notes"]) == set(spec["states"])
          and all(isinstance(n, str) for n in spec["notes"].values())
          and ("codes" not in spec or _names(spec["codes"])))
    _require(ok, _locate(path, "hung_on:"),
             "hung_on needs states and kinds (lists of names), priority (0-100) and notes (a sentence for "
             "each state); codes is a list")


def _check_lost_node_after(policy: dict[str, Any], path: Path) -> None:
    spec = policy.get("lost_node_after")
    if spec is None:
        return
    where = _locate(path, "lost_node_after:")
    ok = (isinstance(spec, dict) and {"states", "domains", "priority", "note"} <= set(spec)
          and _names(spec["states"]) and _names(spec["domains"]) and _percent(spec["priority"])
          and isinstance(spec["note"], str))
    _require(ok, where,
             "lost_node_after needs states and domains (lists of names), priority (0-100) and note")
    bad = [d for d in spec["domains"] if d not in SUB_DOMAINS]
    _require(not bad, where, f"lost_node_after: unknown sub_domain {bad[0]!r}" if bad else "")


def _check_absent_from_timeouts(policy: dict[str, Any], path: Path) -> None:
    spec = policy.get("absent_from_timeouts")
    if spec is None:
        return
    counts = ("max_nodes", "max_seq", "min_reporting")
    ok = (isinstance(spec, dict) and {"kinds", *counts, "sub_domain", "note"} <= set(spec)
          and _names(spec["kinds"]) and all(_count(spec[k]) for k in counts)
          and spec["sub_domain"] in SUB_DOMAINS and isinstance(spec["note"], str))
    _require(ok, _locate(path, "absent_from_timeouts:"),
             "absent_from_timeouts needs kinds (a list of names), max_nodes, max_seq and "
             "min_reporting (whole numbers from 1), a known sub_domain and note")


def _check_timeouts_must_agree(policy: dict[str, Any], path: Path) -> None:
    spec = policy.get("timeouts_must_agree")
    if spec is None:
        return
    ok = (isinstance(spec, dict) and {"kinds", "ops", "min_reporting", "sub_domain", "note"} <= set(spec)
          and _names(spec["kinds"]) and _names(spec["ops"]) and _count(spec["min_reporting"])
          and spec["sub_domain"] in SUB_DOMAINS and isinstance(spec["note"], str)
          and isinstance(spec.get("action", ""), str))
    _require(ok, _locate(path, "timeouts_must_agree:"),
             "timeouts_must_agree needs kinds and ops (lists of names), min_reporting (a whole number "
             "from 1), a known sub_domain, note and optionally action (text)")


def _check_across_hosts(policy: dict[str, Any], path: Path) -> None:
    for i, spec in enumerate(policy.get("across_hosts") or []):
        ok = (isinstance(spec, dict) and {"codes", "min_nodes", "sub_domain", "note", "action"} <= set(spec)
              and _names(spec["codes"]) and _count(spec["min_nodes"]) and spec["sub_domain"] in SUB_DOMAINS
              and isinstance(spec["note"], str) and isinstance(spec["action"], str))
        _require(ok, _locate(path, "across_hosts:"),
                 f"across_hosts: entry {i + 1} needs codes (a list of event codes), min_nodes (a whole "
                 "number from 1), a known sub_domain, note and action")


def _check_without_gpus(policy: dict[str, Any], path: Path) -> None:
    spec = policy.get("without_gpus")
    if spec is None:
        return
    ok = (isinstance(spec, dict) and {"codes", "sub_domain", "outcome", "summary", "action"} <= set(spec)
          and _names(spec["codes"]) and spec["sub_domain"] in SUB_DOMAINS and spec["outcome"] in OUTCOMES
          and isinstance(spec["summary"], str) and isinstance(spec["action"], str))
    _require(ok, _locate(path, "without_gpus:"),
             "without_gpus needs codes (a list of event codes), a known sub_domain and outcome, summary "
             "and action")


def _check_hung_after_done(policy: dict[str, Any], path: Path) -> None:
    _check_last_words(policy, path, "hung_after_done", "min_gap_s", "seconds from 1")


def _check_stalled_before_first_result(policy: dict[str, Any], path: Path) -> None:
    _check_last_words(policy, path, "stalled_before_first_result", "max_nodes", "from 1")


def _check_last_words(policy: dict[str, Any], path: Path, name: str, bound: str, bound_is: str) -> None:
    """A policy entry read from the line a job's output ends with: its states and kinds, how many
    lines may follow it, its own bound (a whole number), and the cause it makes."""
    spec = policy.get(name)
    if spec is None:
        return
    keys = {"states", "kinds", "max_lines_after", bound, "priority", "sub_domain", "code", "summary"}
    ok = (isinstance(spec, dict) and keys <= set(spec) and _names(spec["states"]) and _names(spec["kinds"])
          and _count(spec["max_lines_after"], least=0) and _count(spec[bound])
          and _percent(spec["priority"]) and spec["sub_domain"] in SUB_DOMAINS
          and isinstance(spec["summary"], str) and isinstance(spec["code"], str)
          and (spec.get("uncounted_kinds") is None or _names(spec["uncounted_kinds"])))
    _require(ok, _locate(path, f"{name}:"),
             f"{name} needs states and kinds (lists of names), max_lines_after (0 or more), {bound} "
             f"({bound_is}), priority (0-100), a known sub_domain, code and summary")


def _count(value: Any, least: int = 1) -> bool:
    """A whole number (not a boolean) of at least `least`."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


XID_VENDOR_COLUMNS = ("xid", "mnemonic", "description", "immediate", "investigatory")
NVLINK5_COLUMNS = ("xid", "unit", "intrinfo_v1", "intrinfo_v2", "error_status", "immediate",
                   "investigatory", "severity", "hw_sw")
# The overlay classifies vendor Xids and may also override what the vendor says about one.
XID_OVERLAY_COLUMNS = ("xid", "sub_domain", "role", "priority", "origin", "mnemonic", "description",
                       "immediate", "investigatory")


def _read_vendor(path: Path, columns: tuple[str, ...]) -> Table:
    """A generated vendor catalog: exactly its columns, and a header naming the source's version."""
    table = _read_table(path)
    _require(bool(table.meta.get("version")), f"{path.name}:1",
             "missing the '# version: ...' header line (regenerate it with tools/gen_xid_catalog.py)")
    _require(tuple(table.columns) == columns, f"{path.name}:{table.header_line}",
             f"columns must be {', '.join(columns)}")
    for line, row in table.rows:
        try:
            int(row["xid"])
        except ValueError as exc:
            raise RuleError(f"{path.name}:{line}: xid must be a whole number") from exc
    return table


def _xid_catalog(vendor: Table, overlay_path: Path, default: Outcome) -> dict[int, dict[str, Any]]:
    """The vendor's Xid rows with the local overlay on top (an empty overlay cell says nothing);
    what the overlay does not say comes from the `xid.not_in_overlay` outcome."""
    base = {"origin": "", "role": default.role, "sub_domain": default.sub_domain,
            "priority": default.priority}
    catalog = {int(row["xid"]): {**base, **row} for _, row in vendor.rows}
    overlay = _read_table(overlay_path)
    name = overlay_path.name
    _no_unknown(overlay.columns, XID_OVERLAY_COLUMNS, f"{name}:{overlay.header_line}", "column")
    _require("xid" in overlay.columns, f"{name}:{overlay.header_line}", "needs an 'xid' column")
    seen: set[int] = set()
    for line, row in overlay.rows:
        xid = _overlay_row(row, f"{name}:{line}", catalog, seen)
        catalog[xid].update({k: v for k, v in row.items() if k != "xid" and v != ""})
        if row.get("priority"):
            catalog[xid]["priority"] = int(row["priority"])
    return catalog


def _overlay_row(row: dict[str, str], where: str, catalog: dict[int, dict[str, Any]],
                 seen: set[int]) -> int:
    try:
        xid = int(row["xid"])
        int(row.get("priority") or 0)
    except ValueError as exc:
        raise RuleError(f"{where}: xid and priority must be whole numbers") from exc
    _require(xid in catalog, where, f"Xid {xid} is not in the vendor catalog (xid_catalog.csv)")
    _require(xid not in seen, where, f"Xid {xid} is classified twice")
    seen.add(xid)
    sub, role = row.get("sub_domain") or None, row.get("role") or None
    _require(sub is None or sub in SUB_DOMAINS, where, f"unknown sub_domain {sub!r}")
    _require(role is None or role in ROLES, where, f"role must be one of {ROLES}")
    return xid


# ---------------------------------------------------------------- decoders.yaml
DECODER_SECTIONS = ("version", "outcomes", "adjustments")
OUTCOME_FIELDS = ("role", "sub_domain", "priority", "outcome")
ADJUSTMENT_FIELDS = ("role", "sub_domain", "priority", "priority_at_most", "priority_from_earlier",
                     "when_sub_domain")
FROM_EARLIER_FIELDS = ("at_most", "minus", "at_least")


def _decoder_rules(path: Path, reading: _Reading) -> tuple[dict[str, Outcome], dict[str, Adjustment]]:
    """decoders.yaml: every outcome key a decoder names, described, and no other key."""
    from slurm_attr.decode.outcomes import ADJUSTMENT_KEYS, OUTCOME_KEYS  # see _patterns

    data = _read_yaml(path, reading)
    for section in data:
        _no_unknown([section], DECODER_SECTIONS, _locate(path, f"{section}:"), "section")
    raw_outcomes = _keyed_section(data, path, "outcomes", OUTCOME_KEYS)
    raw_adjustments = _keyed_section(data, path, "adjustments", ADJUSTMENT_KEYS)
    outcomes = {key: _outcome(spec, _locate(path, "outcomes:", f"  {key}:"))
                for key, spec in raw_outcomes.items()}
    adjustments = {key: _adjustment(spec, _locate(path, "adjustments:", f"  {key}:"),
                                    ADJUSTMENT_KEYS[key])
                   for key, spec in raw_adjustments.items()}
    return outcomes, adjustments


def _keyed_section(data: dict[str, Any], path: Path, section: str,
                   known: frozenset[str] | dict[str, bool]) -> dict[str, Any]:
    raw = data.get(section)
    if not isinstance(raw, dict):
        raise RuleError(f"{_locate(path, f'{section}:')}: missing section '{section}' (a mapping)")
    for key in raw:
        _require(key in known, _locate(path, f"{section}:", f"  {key}:"),
                 f"{section}: unknown key {key!r}: no decoder names it")
    missing = sorted(set(known) - set(raw))
    _require(not missing, _locate(path, f"{section}:"),
             f"{section}: no entry for {', '.join(missing)} (a decoder names it)")
    return raw


def _outcome(spec: Any, where: str) -> Outcome:
    _require(isinstance(spec, dict), where, "must be a mapping {role, sub_domain, priority}")
    _fields_known(spec, OUTCOME_FIELDS, where)
    for name in ("role", "sub_domain", "priority"):
        _require(name in spec, where, f"missing '{name}'")
    _check_role_domain(spec, where)
    _check_priority(spec["priority"], where, "priority")
    _require(spec.get("outcome") is None or spec["outcome"] in OUTCOMES, where,
             f"outcome must be one of {', '.join(OUTCOMES)}")
    return Outcome(spec["role"], spec["sub_domain"], spec["priority"], spec.get("outcome"))


def _adjustment(spec: Any, where: str, knows_earlier: bool) -> Adjustment:
    _require(isinstance(spec, dict), where, "must be a mapping (an empty one changes nothing)")
    _fields_known(spec, ADJUSTMENT_FIELDS, where)
    earlier = spec.get("sub_domain") == EARLIER or "priority_from_earlier" in spec
    _require(knows_earlier or not earlier, where,
             "this decoder blames no earlier Xid: 'earlier' and priority_from_earlier do not apply")
    _require(not ("priority" in spec and "priority_from_earlier" in spec), where,
             "priority and priority_from_earlier both set the priority: keep one")
    _check_role_domain({k: v for k, v in spec.items() if not (k == "sub_domain" and v == EARLIER)}, where)
    for name in ("priority", "priority_at_most"):
        if name in spec:
            _check_priority(spec[name], where, name)
    when = spec.get("when_sub_domain")
    _require(when is None or (isinstance(when, list) and all(d in SUB_DOMAINS for d in when)), where,
             "when_sub_domain must be a list of known sub_domains")
    return Adjustment(
        role=spec.get("role"), sub_domain=spec.get("sub_domain"), sets_sub_domain="sub_domain" in spec,
        priority=spec.get("priority"), priority_at_most=spec.get("priority_at_most"),
        priority_from_earlier=_from_earlier(spec.get("priority_from_earlier"), where),
        when_sub_domain=tuple(when) if when is not None else None,
    )


def _from_earlier(spec: Any, where: str) -> tuple[int, int, int] | None:
    if spec is None:
        return None
    _require(isinstance(spec, dict) and sorted(spec) == sorted(FROM_EARLIER_FIELDS), where,
             f"priority_from_earlier needs exactly {', '.join(FROM_EARLIER_FIELDS)}")
    for name in FROM_EARLIER_FIELDS:
        _check_priority(spec[name], where, f"priority_from_earlier: {name}")
    return spec["at_most"], spec["minus"], spec["at_least"]


def _fields_known(spec: dict[str, Any], known: tuple[str, ...], where: str) -> None:
    _no_unknown(list(spec), known, where, "key")


def _no_unknown(names: list[str], known: tuple[str, ...], where: str, what: str) -> None:
    unknown = [n for n in names if n not in known]
    if unknown:
        raise RuleError(f"{where}: unknown {what} {unknown[0]!r} (known: {', '.join(known)})")


def _check_role_domain(spec: dict[str, Any], where: str) -> None:
    _require(spec.get("role", "cause") in ROLES, where, f"role must be one of {ROLES}")
    sub = spec.get("sub_domain")
    _require(sub is None or sub in SUB_DOMAINS, where, f"unknown sub_domain {sub!r}")


def _check_priority(value: Any, where: str, name: str) -> None:
    _require(isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 100, where,
             f"{name} must be a whole number from 0 to 100")
