"""Shared types for decoders."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from slurm_attr.model import Workload
from slurm_attr.ruleset import EARLIER, Ruleset


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
    # The host the line names only reported a fault that lies on another of the job's nodes.
    elsewhere: bool = False
    kind: str | None = None
    outcome: str | None = None  # when not the sub_domain's usual one (Pattern.outcome)


@dataclass
class DecodeContext:
    ruleset: Ruleset
    workload: Workload
    before: list[str] = field(default_factory=list)  # earlier lines, oldest first


def classified(ctx: DecodeContext, key: str, summary: str, **details: Any) -> Classification:
    """The classification decoders.yaml gives outcome `key` (role, sub_domain, priority), with the
    decoder's own summary, code, action, fields and node."""
    outcome = ctx.ruleset.outcomes[key]
    return Classification(role=outcome.role, sub_domain=outcome.sub_domain, priority=outcome.priority,
                          outcome=outcome.outcome, summary=summary, **details)


def adjust(cls: Classification, ctx: DecodeContext, key: str,
           earlier: dict[str, Any] | None = None) -> bool:
    """Apply decoders.yaml adjustment `key` to a catalog classification; False when its
    `when_sub_domain` leaves this one alone. `earlier`: the catalog entry of the blamed Xid."""
    rule = ctx.ruleset.adjustments[key]
    if rule.when_sub_domain is not None and cls.sub_domain not in rule.when_sub_domain:
        return False
    if rule.role is not None:
        cls.role = rule.role
    if rule.sets_sub_domain:
        cls.sub_domain = (earlier or {}).get("sub_domain") if rule.sub_domain == EARLIER else rule.sub_domain
    if rule.priority is not None:
        cls.priority = rule.priority
    if rule.priority_at_most is not None:
        cls.priority = min(cls.priority, rule.priority_at_most)
    if rule.priority_from_earlier is not None and earlier is not None:
        at_most, minus, at_least = rule.priority_from_earlier
        cls.priority = max(at_least, min(int(earlier["priority"]), at_most) - minus)
    return True


class SafeDict(dict):
    """Template fields: a missing name renders as nothing (the sentence is written to read without it)."""

    def __missing__(self, key: str) -> str:
        return ""


_OPTIONAL = re.compile(r"\[\[(.*?)\]\]", re.S)
_FIELD = re.compile(r"\{(\w+)\}")
_RANK_PHRASE = re.compile(r"\b([Rr])ank \{rank\}")
_EMPTY_BITS = ((re.compile(r"\(\s*\)"), ""), (re.compile(r"[ \t]{2,}"), " "),
               (re.compile(r" ([.,:;)])(?=\s|$)"), r"\1"), (re.compile(r"\( "), "("))


def _known(value: Any) -> bool:
    return value is not None and str(value) not in ("", "?")


def render(template: str | None, fields: dict[str, Any]) -> str:
    """Fill a summary/code template. A part written `[[ ... {name} ... ]]` is kept only when all its
    fields are known; "rank {rank}" reads "a rank" without a rank; any other unknown field renders
    as nothing, so no sentence ever shows a placeholder."""
    if not template:
        return ""
    known = {k: v for k, v in fields.items() if _known(v)}
    if "rank" not in known:  # a line without a rank prefix (one process, or no launcher tag)
        template = _RANK_PHRASE.sub(lambda m: "A rank" if m[1] == "R" else "a rank", template)
    template = _OPTIONAL.sub(
        lambda m: m[1] if all(n in known for n in _FIELD.findall(m[1])) else "", template)
    try:
        text = template.format_map(SafeDict(known))
    except (ValueError, IndexError, AttributeError):
        return template
    for pattern, repl in _EMPTY_BITS:
        text = pattern.sub(repl, text)
    return text.strip()


def classify_from_table(table: list[dict[str, Any]], fields: dict[str, str], *,
                        text: str = "") -> Classification | None:
    """First entry whose `match` (on text), `exc` and `msg` regexes all match the fields (the
    loader made sure each entry has a role and a priority)."""
    for entry in table:
        checks = (("_match", text), ("_exc", fields.get("exc", "")), ("_msg", fields.get("msg", "")))
        if all(entry[key].search(value or "") for key, value in checks if key in entry):
            return Classification(
                role=entry["role"], sub_domain=entry.get("sub_domain"), priority=int(entry["priority"]),
                summary=render(entry.get("summary"), fields),
                code=render(entry.get("code"), fields) or None,
                action=render(entry.get("action"), fields) or None,
                outcome=entry.get("outcome"),
            )
    return None


RANK_PREFIX = re.compile(r"^(?:\[rank(?P<a>\d+)\]:|\[default(?P<b>\d+)\]:| {0,4}(?P<c>\d{1,5}):(?!\d)) ?")
# The layers launchers and log collectors put in front of a job's own text, outermost first, in any
# order: `srun --label` (`80: `, padded to the widest task id: ` 3: `), torchrun (`[rank80]:`,
# `[default3]:`), Lightning (`[rank: 80]`), mpirun --tag-output (`[1,12]<stdout>:`), pdsh and
# DeepSpeed's launcher (`gpu-02: `), a worker pool's process tag (Ray, vLLM, Docker Compose), a
# collector's timestamp, a progress bar, and bracketed tags
# (`[E ProcessGroupNCCL.cpp:916]`, `[177/train/578 (pid 28936)]`).
_RANK_LAYER = re.compile(
    r"(?:\[rank(?::\s?)?(?P<a>\d+)\]:?|\[default(?P<b>\d+)\]:| {0,4}(?P<c>\d{1,5}):(?!\d)|"
    r"\[\d+,(?P<d>\d+)\]<(?:stdout|stderr)>:|\[Rank (?P<e>\d+)\]:?)[ \t]?")
_STAMP_LAYER = re.compile(
    r"(?:\[?\d{4}-\d{2}-\d{2}[T _]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?:?"
    r"|\[?\d{2}/\d{2}/\d{4},? \d{2}:\d{2}:\d{2}(?:[.,]\d+)?\]?:?"
    r"|\[\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\]:?)(?:\s+|$)")
_TAG_LAYER = re.compile(r"\[[^\[\]]{1,120}\]:?(?:\s+|(?=\[)|$)")
# A tqdm progress bar the next message was written straight after (`Map:  9%|███▊ | 280/2969
# [29:55<4:48:08, 155.57 examples/s][E ProcessGroupNCCL.cpp:475] ...`): bars end without a newline.
_PROGRESS_LAYER = re.compile(
    r"[^\n|]{0,200}?\d{1,3}%\|[^|\n]{0,300}\|[^\[\n]{0,80}\[[^\]\n]{0,80}\]\s*")
# A worker pool's per-process tag: Ray's `(pid=48213)`, `(RayTrainWorker pid=48213, ip=10.0.3.7)`,
# `(raylet, ip=10.0.3.7)`, vLLM's `(VllmWorkerProcess pid=48213)`; and Docker Compose's `trainer-1  | `.
_PROCESS_LAYER = re.compile(
    r"\((?:[A-Za-z_][\w.:-]*,? )?(?:pid|ip)=[\w.:-]+(?:, \w+=[\w.:-]+){0,4}\)\s"
    r"|[a-z0-9][\w.-]*[-_]\d{1,4} +\| ")
_MAX_LAYERS = 8


_SRUN_LABEL = re.compile(r" {0,4}(\d{1,5}):(?!\d)")


def srun_label(line: str) -> str | None:
    """The task id `srun --label` put in front of a line (`2: ...`), the outermost layer; None
    without one. It is srun's task, which is not a framework's rank when srun starts a launcher."""
    m = _SRUN_LABEL.match(line)
    return m[1] if m else None


def strip_rank(line: str) -> tuple[str, str | None]:
    """(the job's own text, the rank) with every launcher and collector prefix layer removed.

    The rank is the launcher's global one (`80: [rank80]:` gives 80; `[1,12]<stdout>:` gives 12;
    `[rank13]:[E...] [Rank 1]` gives 13, the `[Rank 1]` being the rank inside a process group).
    torchrun's `[defaultN]:` is the worker's local rank on its node, so it names no rank."""
    rank, weight = None, 0
    if "\r" in line:  # a terminal shows what follows the last carriage return (progress bars)
        line = line[line.rfind("\r") + 1:] or line
    line = line.lstrip(" \t")  # an indented report (Nextflow's `Command error:` block) is still one
    for _ in range(_MAX_LAYERS):
        m = _RANK_LAYER.match(line)
        if m:
            # torchrun's global rank beats mpirun's, which beats srun's task label; a bare
            # `[Rank N]` may be the rank inside a sub-group, so it only fills a gap.
            for group, w in (("a", 4), ("d", 3), ("c", 2), ("e", 1)):
                if m[group] is not None and w > weight:
                    rank, weight = m[group], w
            line = line[m.end():]
            continue
        m = (_STAMP_LAYER.match(line) or _HOST_LAYER.match(line) or _TAG_LAYER.match(line)
             or _PDSH_LAYER.match(line) or _PROCESS_LAYER.match(line) or _PROGRESS_LAYER.match(line))
        if not m or m.end() == 0:
            break
        line = line[m.end():].lstrip(" \t")
    return line, rank


# A launcher tag that names the host and the task on it (`[gpu187:2]:`, as `srun --label` wrappers and
# accelerate/torchrun log prefixes write it): the line was printed on that host.
# `[host:N]:` (launchers), MVAPICH2's `[host:mpi_rank_N][function]` before its messages (and its
# process manager's, `[host:mpispawn_N][child_handler]`, on the host whose ranks it spawned), and Open
# MPI's `[host:pid] ` before its own (`[node07:31532] *** Process received signal ***`).
_HOST_LAYER = re.compile(
    r"\[(?P<host>[A-Za-z][\w-]*(?:\.[\w-]+)*):(?:mpi_rank_|mpispawn_)?\d{1,6}\](?::|(?=\[)|(?= ))")
# pdsh and DeepSpeed's launcher put `host: ` in front of each line. Host names are lower case and
# hold a digit, which keeps exception names (`ValueError: `) and prose out; a word that is no node
# of the job names no host (the caller checks).
_PDSH_LAYER = re.compile(r"(?P<host>[a-z][a-z0-9_-]*\d[a-z0-9_-]*(?:\.[a-z0-9_-]+)*): ")
# MPICH's Hydra proxy (`[proxy:0:1@gpu-02] ...`) names the host it runs on.
_PROXY_LAYER = re.compile(r"\[proxy:[\d:]+@(?P<host>[\w.-]+)\]")
# UCX's log prefix names host, pid and thread (`[1652739463.054681] [cn0022:4071024:0]   ib_iface.c:1035
# UCX  ERROR ...`).
_UCX_LAYER = re.compile(r"\[(?P<host>[A-Za-z][\w.-]*):\d+:\d+\]\s")
# Cray's ALPS names the node by its number (`[NID 00151] 2014-05-01 20:41:14 Apid 121706: OOM killer
# terminated this process.`); the node's name is `nid` and that number, five digits.
_CRAY_NID_LAYER = re.compile(r"\[NID (?P<nid>\d{5})\] ")


def prefix_host(line: str) -> str | None:
    """The host a launcher's prefix layer names (`[host:N]:`, `[proxy:0:1@host]`, pdsh's `host: `),
    looking through the layers in front."""
    line = line.lstrip(" \t")  # Cray's ALPS indents its lines
    for _ in range(_MAX_LAYERS):
        m = (_HOST_LAYER.match(line) or _PROXY_LAYER.match(line) or _UCX_LAYER.match(line)
             or _PDSH_LAYER.match(line))
        if m:
            return m["host"]
        m = _CRAY_NID_LAYER.match(line)
        if m:
            return f"nid{m['nid']}"
        m = _RANK_LAYER.match(line) or _STAMP_LAYER.match(line) or _TAG_LAYER.match(line)
        if not m or m.end() == 0:
            return None
        line = line[m.end():]
    return None


# PyTorch 2.3+ names the process group in front of its messages (`[PG 0 Rank 3]`, 2.5+ `[PG ID 0 PG
# GUID 0(default_pg) Rank 3]`); ranks number their collectives per group.
_PROCESS_GROUP = re.compile(r"\[PG (?:ID )?(?P<pg>\d{1,6})\b[^\[\]\n]{0,120}\]")


def process_group(line: str) -> str | None:
    """The process group a PyTorch message names (`[PG 1 Rank 0] ...` gives 1); None without one."""
    m = _PROCESS_GROUP.search(line) if "[PG " in line else None
    return m["pg"] if m else None


_PCI = re.compile(r"^(?:(?P<dom>[0-9a-fA-F]{4,8}):)?(?P<bus>[0-9a-fA-F]{2}):(?P<dev>[0-9a-fA-F]{2})"
                  r"(?:\.(?P<fn>[0-7]))?$")


def normalize_pci(pci: str) -> str:
    """One spelling per PCI function: `0000:18:00`, `0000:18:00.0` and `18:00.0` are all
    `0000:18:00.0` (domain padded to 4 digits, lower case, function 0 when not given)."""
    if not pci:
        return pci
    m = _PCI.match(pci.strip().rstrip(".:"))
    if not m:
        return pci
    dom = (m["dom"] or "0000").lower().rjust(4, "0")
    return f"{dom}:{m['bus'].lower()}:{m['dev'].lower()}.{m['fn'] or '0'}"
