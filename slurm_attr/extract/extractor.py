"""Extraction: raw log lines in, typed events out.

One combined byte-level prefilter (every pattern's literal keywords) runs over whole blocks of a
file; only the rare lines it hits are decoded, scanned once more for which keywords they hold, and
tried against the patterns that name one of those. That keeps the cost per byte close to a single
regex scan, and memory flat whatever the file size.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from slurm_attr.collect.files import (
    MAX_LINE,
    ReadBudget,
    ReadStats,
    count_lines,
    iter_blocks,
    text_of,
)
from slurm_attr.collect.window import STAMP_LINES, until_past, window_start
from slurm_attr.decode import DECODERS, Classification, DecodeContext
from slurm_attr.decode.base import (
    RANK_PREFIX,
    normalize_pci,
    prefix_host,
    process_group,
    render,
    srun_label,
    strip_rank,
)
from slurm_attr.extract.layout import rank_layout
from slurm_attr.extract.timestamps import Clock, Stamp
from slurm_attr.extract.writer import node_named, writer_host
from slurm_attr.model import Coverage, Event, Observations, SourceRef, Workload
from slurm_attr.ruleset import Pattern, Ruleset
from slurm_attr.sanitize import clean, strip_terminal_sequences

_LOOKBACK_BYTES = 64 << 10  # earlier text kept for multi-line messages across block boundaries
# System logs are read from a little before the attempt's window to a little after it: a big
# plain file is entered by bisecting on its timestamps (files.seek_before), and reading stops
# once a block ends past the window. The slack absorbs lines written slightly out of order.
_WINDOW_SLACK = timedelta(minutes=10)
_WINDOWED_ORIGINS = ("node", "controller")
_CARRY_LINES = 50
_HITS_PER_SCAN = 256  # keyword hits one prefilter scan reports before it skips to the next line
_MATCH_WINDOW = 512  # characters either side of a keyword that a regex reads in a long line
_KEYWORD_TRIES = 4  # keyword places tried in one long line
# Past a rule's cap on a node, events of a kind not kept yet are still kept, up to this many.
_NEW_KINDS_PAST_CAP = 1000
_CONTEXT_LINES = 2
# Open MPI (and PRRTE, PMIx) print their errors as help messages between two rules of dashes, the
# node in a field of its own (`  Local host:        node-0-2`), above or below the line a rule
# reads. `Remote host:` is the peer, so it is not taken. MPICH's Hydra frames its report of a dead
# rank in rules of `=` (`=   RANK 0 PID 28219 RUNNING AT gpu-02` / `=   KILLED BY SIGNAL: 7 (Bus
# error)`).
_HELP_RULE = re.compile(r"(?:-{20,}|={20,})\s*")
_HELP_HOST = re.compile(r"\s+(?:Local host|Host|Hostname|Local hostname|Node):\s+([\w.-]{1,200})\s*"
                        r"|=\s+RANK \d+ PID \d+ RUNNING AT ([\w.-]{1,200})\s*")
_HELP_LINES = 24
_HELP_BYTES = 8192  # how far below a hit a help message's closing rule is looked for
# The fields a hit's node is read from, most direct first.
_NODE_FIELDS = ("node", "rnode", "host", "prefix_host", "help_host")


hyperscan: Any
try:  # Hyperscan scans many literals at once at several GB/s; `re` is the portable fallback.
    import hyperscan
except ImportError:  # pragma: no cover - depends on the platform
    hyperscan = None


class _Prefilter:
    """Finds the lines that hold any pattern keyword: the only lines worth decoding."""

    def __init__(self, patterns: list[Pattern]) -> None:
        self.patterns = patterns
        self.words = sorted({k.encode() for p in patterns for k in p.keywords},
                            key=lambda w: (-len(w), w))
        # keyword id -> the patterns (their places in `patterns`) that name it
        index = {w: i for i, w in enumerate(self.words)}
        self.users: list[list[int]] = [[] for _ in self.words]
        for place, pattern in enumerate(patterns):
            for k in dict.fromkeys(pattern.keywords):
                self.users[index[k.encode()]].append(place)
        self.regex: re.Pattern[bytes] | None = None
        self.db: Any = None  # a hyperscan.Database once compiled
        self.line_db: Any = None  # the same keywords, each reported once a scan

    def _compile(self) -> None:
        """Built on first use, and only the scanner in use: an origin without logs costs nothing."""
        if hyperscan is not None and self.words:
            self.db = self._database(0)
            self.line_db = self._database(hyperscan.HS_FLAG_SINGLEMATCH)
        else:
            self.regex = re.compile(b"|".join(re.escape(w) for w in self.words))

    def _database(self, flag: int) -> Any:
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(expressions=[re.escape(w) for w in self.words], ids=list(range(len(self.words))),
                   elements=len(self.words), flags=[flag] * len(self.words))
        return db

    def candidates(self, text: str) -> list[Pattern]:
        """The patterns one of whose keywords the line holds, in their order: one scan of the
        line for every keyword at once, instead of a substring search per keyword per pattern."""
        if self.db is None and self.regex is None:
            self._compile()
        if self.line_db is None:
            return [p for p in self.patterns if any(k in text for k in p.keywords)]
        found: set[int] = set()

        def on_match(word: int, _start: int, _end: int, _flags: int, _ctx: object) -> None:
            found.add(word)

        self.line_db.scan(text.encode("utf-8", "surrogatepass"), match_event_handler=on_match)
        places = sorted({place for word in found for place in self.users[word]})
        return [self.patterns[place] for place in places]

    def hits(self, buf: bytes, offset: int) -> list[int]:
        """Byte offsets (ascending) of keyword matches at or after offset: every one, except that
        past _HITS_PER_SCAN of them the rest of that line is skipped (a line of one keyword
        repeated end to end would otherwise cost a callback a repeat; a line needs only one)."""
        if not self.words:
            return []
        if self.db is None and self.regex is None:
            self._compile()
        if self.db is None:
            assert self.regex is not None
            return [m.start() for m in self.regex.finditer(buf, offset)]
        found: list[int] = []
        batch: list[int] = []

        def on_match(_id: int, _start: int, end: int, _flags: int, _ctx: object) -> bool:
            batch.append(end - 1)
            return len(batch) >= _HITS_PER_SCAN  # true stops the scan

        view, at = memoryview(buf), offset
        while True:
            batch.clear()
            try:
                self.db.scan(view[at:], match_event_handler=on_match)
                stopped = False
            except hyperscan.ScanTerminated:
                stopped = True
            found += sorted(at + e for e in batch)
            line_end = buf.find(b"\n", found[-1]) if stopped else -1
            if line_end < 0:
                return found
            at = line_end + 1


@dataclass
class FileScan:
    """Per-file state while scanning."""

    relpath: str
    origin: str
    node: str | None
    clock: Clock
    coverage: Coverage
    path_nodes: str | None = None
    problems: list[str] = field(default_factory=list)
    budget: ReadBudget = field(default_factory=ReadBudget)  # shared by the attempt's files
    # (line, line of the stamp it took or None, time) of the last hit whose time was sought
    last_timed: tuple[int, int | None, datetime | None] | None = None
    counted: Counter[str] = field(default_factory=Counter)  # lines past a rule's cap, per rule


class Extractor:
    def __init__(self, ruleset: Ruleset, workload: Workload, max_events_per_rule: int = 5000) -> None:
        self.ruleset = ruleset
        self.workload = workload
        self.max_events_per_rule = max(1, max_events_per_rule)
        self.node_names = {n.lower(): n for n in workload.nodes}
        self.kept: Counter[tuple[str | None, str]] = Counter()  # events kept per (node, rule)
        self.new_kinds: Counter[tuple[str | None, str]] = Counter()  # of those, kept past the cap
        # The last kept event of each burst, and of each matched text: what lines past the cap
        # count into.
        self.bursts: dict[tuple, Event] = {}
        self.by_text: dict[tuple, Event] = {}
        self.burst_window = timedelta(seconds=float(ruleset.policy["bursts"]["window_s"]))
        first, last = ruleset.evidence_window(workload)
        self.bands = (first, workload.start, last + timedelta.resolution)
        self.prefilters = {o: _Prefilter(ruleset.for_origin(o))
                           for o in ("node", "app", "controller")}
        self.layout = rank_layout(workload)
        self.generic_depth = max((p.context_before for p in ruleset.patterns if p.generic), default=0)
        self.by_id = {p.id: p for p in ruleset.patterns}
        self.window = (first - _WINDOW_SLACK, last + _WINDOW_SLACK)

    # -------------------------------------------------------------- file level
    def scan(self, path: Path, scan: FileScan, obs: Observations, carried: bytes = b"") -> bytes:
        """Scan one file into obs; returns its last lines, which the next generation of a rotated
        log carries as the context above its first line (logrotate cuts through multi-line
        reports). `carried` is that context from the generation before this one."""
        stats = ReadStats(budget=scan.budget)
        prefilter = self.prefilters[scan.origin]
        windowed = scan.origin in _WINDOWED_ORIGINS
        start = window_start(path, scan.clock, self.window) if windowed else 0
        line_base = count_lines(path, start) if start else 0
        # Context only: hits are sought from `offset` on, so the carried lines are never matched again.
        tail = b"" if start or not carried else carried if carried.endswith(b"\n") else carried + b"\n"
        first_block = True
        last_block = b""
        first_event = len(obs.events)
        blocks = iter_blocks(path, stats, start)
        for block in until_past(blocks, scan.clock, self.window[1]) if windowed else blocks:
            if first_block:
                self._head_stamps(block, scan)
                first_block = False
            if b"\x00" in block:
                scan.problems.append("binary data (NUL bytes) in the file")
            buf = tail + block
            offset = len(tail)
            counted_to, counted_lines = offset, line_base
            line_end = 0
            for pos in prefilter.hits(buf, offset):
                if pos < line_end:
                    continue  # another keyword of a line already seen: no search back for its start
                start = buf.rfind(b"\n", 0, pos) + 1
                end = buf.find(b"\n", pos)
                line_end = end if end >= 0 else len(buf)
                if start < offset:
                    continue
                counted_lines += buf.count(b"\n", counted_to, start)
                counted_to = start
                self._hit(buf, start, line_end, counted_lines + 1, prefilter, scan, obs)
            line_base += block.count(b"\n")
            tail = buf[-_LOOKBACK_BYTES:]
            last_block = block
        self._tail_stamps(last_block, scan)
        self._settle(scan, stats, obs, first_event, line_base)
        return tail

    def _settle(self, scan: FileScan, stats: ReadStats, obs: Observations, first_event: int,
                line_base: int) -> None:
        """What a file's scan adds once it is read: lines after each event, counts and problems."""
        for event in obs.events[first_event:]:
            if self.by_id[event.rule].lines_after:  # is anything printed after this line?
                event.fields["lines_after"] = str(max(0, line_base - event.source.line))
        if scan.origin == "app":
            self._nodes_from_rank_hosts(obs.events[first_event:])
        scan.coverage.lines += line_base
        scan.coverage.bytes += stats.bytes
        if stats.bytes:
            scan.coverage.written.append(scan.relpath)
        if stats.capped:
            scan.coverage.truncated.append(f"{scan.relpath}: {stats.capped}")
        for rule, count in sorted(scan.counted.items()):
            scan.coverage.notes.append(
                f"{scan.relpath}: {count} more lines matching {rule} past the cap of "
                f"{self.max_events_per_rule} events of one rule on one node were only counted")
        for problem in sorted(set(stats.problems + scan.problems)):
            obs.error(scan.coverage.collector, problem, scan.relpath)
            scan.coverage.notes.append(f"{scan.relpath}: {problem}")

    def _head_stamps(self, block: bytes, scan: FileScan) -> None:
        for raw in block[: 1 << 16].split(b"\n")[:STAMP_LINES]:
            stamp = self._stamp(text_of(raw)[0], scan)
            if stamp.when is not None:
                scan.coverage.saw(stamp.when)
                return

    def _tail_stamps(self, block: bytes, scan: FileScan) -> None:
        for raw in reversed(block[-(1 << 16):].split(b"\n")[-STAMP_LINES:]):
            stamp = scan.clock.parse(text_of(raw)[0])
            if stamp.when is not None:
                scan.coverage.saw(stamp.when)
                return

    def _stamp(self, text: str, scan: FileScan) -> Stamp:
        stamp = scan.clock.parse(RANK_PREFIX.sub("", text, count=1))
        if stamp.when is not None and stamp.mono is not None and stamp.quality != "boot_relative":
            scan.clock.learn_boot(stamp.when, stamp.mono)
        return stamp

    # -------------------------------------------------------------- line level
    def _hit(self, buf: bytes, start: int, end: int, line_no: int, prefilter: _Prefilter,
             scan: FileScan, obs: Observations) -> None:
        raw = buf[start:end]
        if len(raw) > MAX_LINE:
            raw = raw[:MAX_LINE]
            scan.problems.append(f"line longer than {MAX_LINE} bytes was cut")
        text, replaced = text_of(raw)
        if replaced:
            scan.problems.append("bytes that are not UTF-8 were replaced")
        text = strip_terminal_sequences(text.rstrip("\r"))
        body, rank = strip_rank(text) if scan.origin == "app" else (text, None)
        found = self._match(body, prefilter.candidates(body))
        if found is None and body != text:
            # A bracketed tag taken for a prefix may be the message itself (Megatron's
            # `[after training is done] datetime: ...`).
            found = self._match(text, prefilter.candidates(text))
        if found is None:
            return
        pattern, fields, matched = found
        if rank is not None:
            fields.setdefault("rank", rank)
        task = srun_label(text) if scan.origin == "app" else None
        if task is not None:
            fields.setdefault("srun_task", task)
        host = prefix_host(text) if scan.origin == "app" else None
        if host:
            fields.setdefault("prefix_host", host)
        group = process_group(text) if scan.origin == "app" else None
        if group:
            fields.setdefault("process_group", group)
        if pattern.off_node:
            node, fields["off_node"] = None, "yes"  # no later step may place it on a node either
        elif scan.origin == "node":
            node = self._writer(text, scan)
            if node is None:
                return  # a shared log's line from a machine outside the job
        else:
            if len(self.workload.nodes) > 1 and not any(fields.get(k) for k in _NODE_FIELDS):
                host = self._help_block_host(buf, start, end)
                if host:
                    fields["help_host"] = host
            node = self._node_for(fields, scan)
        fields["node"] = node or "?"
        seen = (node, pattern.id, matched)
        if (seen in self.by_text and self.kept[(node, pattern.id)] >= self.max_events_per_rule
                and not (pattern.match_job or pattern.match_node or "generic_rule" in fields)):
            # Past the rule's cap, a line that repeats a kept one word for word decodes the same:
            # it only adds to that event's count, where it fits the event's burst.
            when = self._line_time(buf, start, line_no, text, fields, scan)[0]
            if self._fits(self.by_text[seen], when):
                self._count(self.by_text[seen], when, scan)
                return
        depth = pattern.context_before
        if "generic_rule" in fields:  # the exception's traceback lies above the line
            depth = max(depth, self.generic_depth)
        before = self._lines_before(buf, start, depth) if depth else []
        if fields.get("pci"):
            fields["pci"] = normalize_pci(fields["pci"])
        cls = self._classify(pattern, fields, before)
        if cls is None and fields.get("generic_rule"):
            # The specific rule decoded nothing (say a CUDA error missing from the table): the
            # line is still an exception report, so it falls back to the generic rule.
            pattern = self.by_id[fields.pop("generic_rule")]
            cls = self._classify(pattern, fields, before)
        if cls is None:
            return
        named = cls.node.split(".", 1)[0] if cls.node else None
        if named and named not in self.workload.nodes and cls.node in self.workload.nodes:
            named = cls.node
        if not self._belongs(pattern, fields, named or node):
            return
        if named in self.workload.nodes:
            node = named
        elif cls.elsewhere:
            node = None
        when, quality = self._line_time(buf, start, line_no, text, fields, scan)
        fields.pop("node", None)
        self._keep(obs, scan, seen, Event(
            kind=cls.kind or pattern.kind, rule=pattern.id, node=node, time=when,
            time_quality=quality,
            source=SourceRef(scan.relpath, line_no, clean(text)[:4000], clean(matched)[:4000],
                             *self._context(buf, start, end)),
            sub_domain=cls.sub_domain, base_role=cls.role, priority=cls.priority, outcome=cls.outcome,
            summary=clean(cls.summary)[:500], code=cls.code, action=cls.action,
            fields={k: clean(str(v))[:300] for k, v in {**fields, **cls.fields}.items()
                    if v not in (None, "")},
        ))

    def _line_time(self, buf: bytes, start: int, line_no: int, text: str, fields: dict[str, str],
                   scan: FileScan) -> tuple[datetime | None, str]:
        """When a line was written, and how that is known: its own stamp, else the moment it
        names (Slurm's `CANCELLED AT ...`), else the stamp of a line above it (a continuation line,
        a field of `journalctl -o verbose` under its header); a raw dmesg line carries none."""
        stamp = self._stamp(text, scan)
        if stamp.when is None and fields.get("at"):
            stamp = scan.clock.parse(fields["at"])
        when, quality = stamp.when, stamp.quality
        if when is None and stamp.mono is not None:
            quality = "boot_relative_unplaced"
        if when is not None:
            scan.last_timed = (line_no, line_no, when)
        elif stamp.mono is None:
            when, stamped_at = self._carried_time(buf, start, line_no, scan)
            scan.last_timed = (line_no, stamped_at, when)
            quality = "carried" if when else "none"
        return when, quality

    def _keep(self, obs: Observations, scan: FileScan, seen: tuple, event: Event) -> None:
        """Keep the event; past the rule's cap on its node, count it into the last kept event of
        its burst where it fits that burst, else keep it while the rule has room for events of new
        kinds (so the one different line that decides a case is never folded away), else only
        count it in the coverage."""
        per_rule = (event.node, event.rule)
        burst = event.burst_key()
        head = self.bursts.get(burst)
        if self.kept[per_rule] >= self.max_events_per_rule:
            if head is not None and self._fits(head, event.time):
                self._count(head, event.time, scan)
                return
            if self.new_kinds[per_rule] >= _NEW_KINDS_PAST_CAP:
                scan.counted[event.rule] += 1
                return
            self.new_kinds[per_rule] += 1
        self.kept[per_rule] += 1
        self.bursts[burst] = self.by_text[seen] = event
        obs.events.append(event)

    def _fits(self, head: Event, when: datetime | None) -> bool:
        """Whether a line at `when` folds into the burst `head` leads, as the engine would fold
        it: not before it, within the burst window of its last line, and on the same side of
        the job's window (a burst from before the job is context, one during it evidence)."""
        if when is None or head.time is None:
            return when is None and head.time is None
        last = head.last_time or head.time
        return head.time <= when <= last + self.burst_window and self._band(when) == self._band(head.time)

    def _band(self, when: datetime) -> int:
        """Which part of the engine's window a time falls in: dropped before, context before the
        start, evidence, dropped after (policy `window`)."""
        return bisect_right(self.bands, when)

    @staticmethod
    def _count(head: Event, when: datetime | None, scan: FileScan) -> None:
        head.count += 1
        if when is not None and (head.last_time is None or when > head.last_time):
            head.last_time = when
        scan.counted[head.rule] += 1

    def _match(self, body: str, patterns: list[Pattern]
               ) -> tuple[Pattern, dict[str, str], str] | None:
        """The first specific pattern that matches; a generic one only adds its fields. `patterns`
        are those with a keyword in body."""
        specific: tuple[Pattern, dict[str, str], str] | None = None
        generic: tuple[Pattern, dict[str, str], str] | None = None
        for pattern in patterns:
            if (generic if pattern.generic else specific) is not None:
                continue
            m = search_near_keywords(pattern, body)
            if m is None:
                continue
            # A field is cut where a window would end, so what reads it (the classification
            # tables' regexes) sees at most that much, whatever the line held.
            fields = {**pattern.fields, **{k: v[:2 * _MATCH_WINDOW] for k, v in m.groupdict().items()
                                           if v is not None}}
            if pattern.generic:
                generic = (pattern, fields, m.group(0))
            else:
                specific = (pattern, fields, m.group(0))
        if specific is None:
            return generic
        if generic is None:
            return specific
        pattern, fields, matched = specific
        # A group the specific match left empty does not blank the generic's (an exception's message).
        kept = {k: v for k, v in fields.items() if v or not generic[1].get(k)}
        return pattern, {**generic[1], **kept, "generic_rule": generic[0].id}, matched

    def _classify(self, pattern: Pattern, fields: dict[str, str], before: list[str]
                  ) -> Classification | None:
        generic = fields.get("generic_rule")
        if generic:
            # A specific match (e.g. a CUDA error) inside an exception line: keep the traceback.
            ctx = DecodeContext(self.ruleset, self.workload, before)
            DECODERS["python_exception"](fields, ctx)
        if pattern.decoder:
            decoder = DECODERS.get(pattern.decoder)
            if decoder is None:
                return None
            found = decoder(fields, DecodeContext(self.ruleset, self.workload, before))
            # What the rule file says about this pattern wins over the decoder's defaults.
            return replace(found, **pattern.overrides) if found and pattern.overrides else found
        return Classification(
            role=pattern.role, sub_domain=pattern.sub_domain, priority=pattern.priority,
            summary=render(pattern.summary, fields), code=render(pattern.code, fields) or None,
            action=render(pattern.action, fields) or None, outcome=pattern.outcome,
        )

    def _belongs(self, pattern: Pattern, fields: dict[str, str], node: str | None) -> bool:
        if pattern.match_job:
            job = fields.get("job") or fields.get("rjob")
            if job is not None and job != self.workload.job_id:
                return False
            failed = fields.get("node") or fields.get("rnode")
            if failed and failed != "?" and "node" not in pattern.regex.groupindex:
                fields["failed_node"] = failed
        return not pattern.match_node or node in self.workload.nodes

    def _writer(self, text: str, scan: FileScan) -> str | None:
        """The node a system log line is from: the job's node its header names, else the node
        whose log it is (a header may name the machine otherwise than Slurm does); in a log
        several machines share, None for a line no node of the job wrote."""
        host = writer_host(text)
        named = node_named(host, self.node_names) if host else None
        return named or scan.node

    def _help_block_host(self, buf: bytes, start: int, end: int) -> str | None:
        """The `Local host:` (or Hydra's `RUNNING AT`) field of the message the hit lies in: only
        inside a message closed by rules (of dashes, or Hydra's of `=`) on both sides, so a field
        of another message is never taken."""
        if (buf.find(b"\n" + b"-" * 20, end, end + _HELP_BYTES) < 0
                and buf.find(b"\n" + b"=" * 20, end, end + _HELP_BYTES) < 0):
            return None  # the usual line: no rule below it, nothing more to read
        above = _until_rule(reversed(self._lines_before(buf, start, _HELP_LINES)))
        below = _until_rule(text_of(raw)[0].rstrip("\r")
                            for raw in buf[end + 1: end + 1 + _HELP_BYTES].split(b"\n")[:_HELP_LINES])
        if above is None or below is None:
            return None
        return next((m[1] or m[2] for line in (*above, *below) if (m := _HELP_HOST.fullmatch(line))), None)

    def _node_for(self, fields: dict[str, str], scan: FileScan) -> str | None:
        for key in _NODE_FIELDS:
            named = fields.get(key)
            if not named:
                continue
            # The name as written first: a node named by its IP address must not be cut at a dot.
            for candidate in (named, named.split(".", 1)[0]):
                if candidate in self.workload.nodes:
                    return candidate
        if scan.path_nodes:
            return scan.path_nodes
        rank = fields.get("rank")
        if rank is not None and rank.isdigit() and self.layout is not None:
            host = self.layout.host(int(rank))
            if host is not None:
                fields["node_from"] = self.layout.how
                return host
        if len(self.workload.nodes) == 1:  # every process of a one-node job ran there
            fields["node_from"] = "the job's only node"
            return self.workload.nodes[0]
        return None

    def _nodes_from_rank_hosts(self, events: list[Event]) -> None:
        """A rank's events that name no node take the host another line of the same rank named
        (an MPI abort banner, a launcher's `rank N ... on node H`): one rank runs on one host, and
        a named host beats placing the rank by the task layout. Likewise a line `srun
        --label` marked with task N takes the host srun's own `H: task N: ...` line named."""
        guessed = self.layout.how if self.layout else None
        ranks: dict[str, str] = {}
        tasks: dict[str, str] = {}
        for event in events:
            if not event.node or "node_from" in event.fields:
                continue
            if event.fields.get("rank"):
                ranks.setdefault(event.fields["rank"], event.node)
            for listed in _task_ids(event.fields.get("tasks", "")):
                tasks.setdefault(listed, event.node)
        for event in events:
            if event.node is not None and event.fields.get("node_from") != guessed:
                continue
            rank, task = event.fields.get("rank", ""), event.fields.get("srun_task", "")
            if task in tasks:
                host, how = tasks[task], f"srun task {task}'s host, named by srun"
            elif rank in ranks:
                host, how = ranks[rank], f"rank {rank}'s host, named on another line"
            else:
                continue
            if host != event.node:
                event.node = host
                event.fields["node_from"] = how

    def _context(self, buf: bytes, start: int, end: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Two lines either side of a hit, for showing the evidence in context."""
        before = tuple(clean(x)[:300] for x in self._lines_before(buf, start, _CONTEXT_LINES))
        after = buf[end + 1: end + 1 + 4096].split(b"\n")[:_CONTEXT_LINES]
        return before, tuple(clean(text_of(x)[0])[:300] for x in after if x)

    @staticmethod
    def _lines_before(buf: bytes, start: int, count: int) -> list[str]:
        """Up to count whole lines before offset start, within the lookback; found from the end,
        so a dense run of hits costs a few lines each, not a split of the whole lookback."""
        lo = max(0, start - _LOOKBACK_BYTES)
        lines: list[bytes] = []
        end = start - 1  # the newline that ends the line above
        while len(lines) < count and end >= lo:
            newline = buf.rfind(b"\n", lo, end)
            if newline < 0 and lo > 0:
                break  # the line began before the lookback: it is cut, so it is left out
            lines.append(buf[newline + 1:end])
            end = newline
        # Decoders read these lines as the hit's own: colours must not hide their fields either.
        return [strip_terminal_sequences(text_of(x)[0].rstrip("\r")) for x in reversed(lines)]

    def _carried_time(self, buf: bytes, start: int, line_no: int, scan: FileScan
                      ) -> tuple[datetime | None, int | None]:
        """The time of the nearest stamped line at most _CARRY_LINES above, and its line number.
        Only the lines since the previous timed hit are parsed: above them the answer is that
        hit's, which keeps a run of many unstamped hits linear."""
        prev = scan.last_timed if scan.last_timed and scan.last_timed[0] < line_no else None
        depth = _CARRY_LINES if prev is None else min(_CARRY_LINES, line_no - prev[0] - 1)
        lines = self._lines_before(buf, start, depth)
        for back, line in enumerate(reversed(lines), start=1):
            stamp = scan.clock.parse(RANK_PREFIX.sub("", line, count=1))
            if stamp.when is not None:
                return stamp.when, line_no - back
        if len(lines) < depth:  # the lookback ends before the previous hit: its answer may be stale
            return None, None
        if prev is not None and prev[1] is not None and line_no - prev[1] <= _CARRY_LINES:
            return prev[2], prev[1]
        return None, None


def _until_rule(lines: Iterable[str]) -> list[str] | None:
    """The lines up to a rule of dashes; None where no rule closes them."""
    taken: list[str] = []
    for line in lines:
        if _HELP_RULE.fullmatch(line):
            return taken
        taken.append(line)
    return None


def search_near_keywords(pattern: Pattern, text: str) -> re.Match[str] | None:
    """The pattern's match in text; in a long line, only within _MATCH_WINDOW characters either
    side of a few of its keyword places (the first and the last ones). Users write what they
    like: a regex with a leading greedy class costs time quadratic in a run of characters it
    accepts, and a 1 MiB line of them would stall the worker for hours. Messages that matter are
    short, and every match holds a keyword. A regex anchored at the line's start has that one
    start only, so it runs from there (a progress bar's carriage returns may come before the
    message, far from the start)."""
    if len(text) <= 2 * _MATCH_WINDOW:
        return pattern.regex.search(text)
    places = sorted({i for k in pattern.keywords for i in _keyword_places(text, k)})
    places = places if len(places) <= _KEYWORD_TRIES else places[:2] + places[-2:]
    if pattern.source.startswith("^"):
        return pattern.regex.search(text, 0, places[-1] + _MATCH_WINDOW) if places else None
    for at in places:
        m = pattern.regex.search(text, max(0, at - _MATCH_WINDOW), at + _MATCH_WINDOW)
        if m is not None:
            return m
    return None


def _keyword_places(text: str, keyword: str) -> list[int]:
    """Where keyword first and last occurs in text (up to _KEYWORD_TRIES places of each)."""
    places: list[int] = []
    at = text.find(keyword)
    while at >= 0 and len(places) < _KEYWORD_TRIES:
        places.append(at)
        at = text.find(keyword, at + 1)
    at = text.rfind(keyword)
    while at >= 0 and len(places) < 2 * _KEYWORD_TRIES:
        places.append(at)
        at = text.rfind(keyword, 0, at)
    return places


def _task_ids(tasks: str, most: int = 4096) -> list[str]:
    """`0,2-3` -> ["0", "2", "3"] (srun's task list); empty for anything else."""
    out: list[str] = []
    for part in tasks.split(","):
        low, _, high = part.strip().partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            return []
        first, last = int(low), int(high or low)
        if last < first or len(out) + last - first >= most:
            return []
        out += [str(i) for i in range(first, last + 1)]
    return out
