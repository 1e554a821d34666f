"""Timestamps in every style real cluster logs use, placed on one timeline.

Formats:
- RFC 3164 syslog (no year: inferred from the job window), RFC 5424 / ISO 8601 with or without an
  offset, Go's `2024/05/01 12:00:00`, `journalctl -o short-unix` (seconds since the epoch);
- `dmesg -T`, raw `dmesg` seconds since boot (placed by a boot time when one is known), either one
  behind `dmesg -x`'s facility and level;
- the BMC's event log as `ipmitool sel elist` prints it (`   1 | 11/20/2026 | 10:30:00 | ...`);
- glog-style PyTorch prefixes (`E1206 18:44:12.715`), Python logging (`2024-05-01 12:00:00,123`),
  slurmctld (`[2024-05-01T12:00:00.123]`), Fabric Manager (`[Jul 23 2024 07:53:55]`);
- JSON lines: journalctl's `__REALTIME_TIMESTAMP` (also as a field line of `-o json-pretty`, which the
  entry's later fields carry), or the `@timestamp`/`timestamp`/`time`/`ts` field log shippers write, in
  ISO or epoch form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

MONTHS = {m: i for i, m in enumerate(
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1)}

_ISO = re.compile(
    r"(?P<y>\d{4})(?P<sep>[-/])(?P<mo>\d\d)(?P=sep)(?P<d>\d\d)[T ](?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)"
    r"(?:[.,](?P<frac>\d{1,9}))?(?P<tz>Z|[+-]\d\d:?\d\d)?"
)
_RFC3164 = re.compile(
    r"^(?:<\d{1,3}>)?(?P<mon>[A-Z][a-z]{2}) +(?P<d>\d{1,2}) (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)"
    r"(?:\.(?P<frac>\d{1,9}))?\s"
)
_DMESG_T = re.compile(
    r"^\[(?:[A-Z][a-z]{2} )?(?P<mon>[A-Z][a-z]{2}) +(?P<d>\d{1,2}) (?P<h>\d\d):(?P<mi>\d\d):"
    r"(?P<s>\d\d)(?:\.\d+)? (?P<y>\d{4})\]"
)
_FM = re.compile(
    r"^\[(?P<mon>[A-Z][a-z]{2}) (?P<d>\d{1,2}) (?P<y>\d{4}) (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)\]"
)
# `ipmitool sel list/elist`: record id (hex), date, time, in the BMC's clock.
_SEL = re.compile(
    r"^\s*[0-9a-fA-F]{1,4} \| (?P<mo>\d\d)/(?P<d>\d\d)/(?P<y>\d{4}) \| (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)"
)
_GLOG = re.compile(
    r"\[?[IWEF](?P<mo>\d\d)(?P<d>\d\d) (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)(?:\.(?P<frac>\d{1,9}))?"
)
_DMESG_LEVEL = re.compile(
    r"^(?:kern|user|mail|daemon|auth|syslog|lpr|news|uucp|cron|authpriv|ftp|local[0-7]) *:"
    r"(?:emerg|alert|crit|err|warn|notice|info|debug) *: ?"
)
_EPOCH = re.compile(r"^(?P<sec>\d{10})(?:\.(?P<frac>\d{1,9}))?\s")
_JSON_TIME = re.compile(
    r'"(?:__REALTIME_TIMESTAMP|@timestamp|timestamp|time|ts)"\s*:\s*"?(?P<value>[0-9][0-9T:.,+Z -]{8,34})'
)
# An epoch time this far from the job is some other number, not a time.
_EPOCH_SLACK = timedelta(days=800)
# How far into a JSON line its time field may be (journalctl puts a long cursor first).
_JSON_HEAD = 1024
_MONO = re.compile(r"^\[\s*(?P<mono>\d{1,10}\.\d{3,9})\]")
_MONO_INSIDE = re.compile(r"kernel: \[\s*(?P<mono>\d{1,10}\.\d{3,9})\]")
# How far into a line a timestamp may start (after a rank prefix or a syslog priority).
_HEAD = 48


@dataclass(frozen=True)
class Stamp:
    when: datetime | None
    quality: str  # exact | inferred_year | boot_relative | none
    mono: float | None = None  # seconds since boot, when the line carries it


def known_zone(name: str) -> bool:
    """Whether `name` is an IANA zone this host knows (a path or a typo is not)."""
    try:
        ZoneInfo(name)
    except (ValueError, OSError, KeyError):  # ZoneInfoNotFoundError is a KeyError
        return False
    return True


def zone_for(name: str | None, fallback: tzinfo) -> tzinfo:
    if not name:
        return fallback
    try:
        return ZoneInfo(name)
    except (KeyError, ValueError):
        return fallback


def _frac(text: str | None) -> int:
    return int((text or "0")[:6].ljust(6, "0"))


def _offset(text: str | None, default: tzinfo) -> tzinfo:
    if not text:
        return default
    if text == "Z":
        return UTC
    sign = 1 if text[0] == "+" else -1
    digits = text[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4])))


class Clock:
    """Turns the leading timestamp of a line into an aware datetime on the job's timeline."""

    def __init__(self, anchor: datetime, tz: tzinfo) -> None:
        self.anchor = anchor  # a time inside the job window, used to infer missing years
        self.tz = tz
        self.boot_time: datetime | None = None
        self.unplaced = 0  # lines stamped in seconds since boot before any boot time was known

    def _near_year(self, month: int, day: int, build) -> datetime | None:
        best = None
        for year in (self.anchor.year - 1, self.anchor.year, self.anchor.year + 1):
            try:
                cand = build(year)
            except ValueError:
                continue
            if best is None or abs(cand - self.anchor) < abs(best - self.anchor):
                best = cand
        return best

    def parse(self, line: str) -> Stamp:
        if line.startswith(("{", "\t\"", "  \"")):  # a JSON line, or a field of `-o json-pretty`
            return self._json(line[:_JSON_HEAD])
        head = line[: _HEAD + 40]
        level = _DMESG_LEVEL.match(head)
        if level:
            head = line[level.end(): level.end() + _HEAD + 40]
        epoch = _EPOCH.match(head)
        if epoch:
            return self._epoch(epoch["sec"], epoch["frac"])
        mono_m = _MONO.match(head)
        if mono_m:
            mono = float(mono_m.group("mono"))
            if self.boot_time is not None:
                return Stamp(self.boot_time + timedelta(seconds=mono), "boot_relative", mono)
            self.unplaced += 1
            return Stamp(None, "none", mono)
        m = _DMESG_T.match(head) or _FM.match(head) or _SEL.match(head)
        if m:
            return self._calendar(m)
        m = _RFC3164.match(head)
        if m:
            return self._syslog(m, head)
        m = _ISO.search(head, 0, _HEAD + 35)
        if m and m.start() <= _HEAD:
            return self._iso(m)
        m = _GLOG.search(head, 0, _HEAD + 20)
        if m and m.start() <= _HEAD:
            return self._glog(m)
        return Stamp(None, "none")

    def _epoch(self, seconds: str, frac: str | None) -> Stamp:
        when = datetime.fromtimestamp(int(seconds), tz=UTC) + timedelta(microseconds=_frac(frac))
        if abs(when - self.anchor) > _EPOCH_SLACK:
            return Stamp(None, "none")
        return Stamp(when, "exact")

    def _json(self, head: str) -> Stamp:
        m = _JSON_TIME.search(head)
        if not m:
            return Stamp(None, "none")
        value = m["value"].strip()
        if value.isdigit() and 10 <= len(value) <= 19:  # epoch in s, ms, us or ns
            return self._epoch(value[:10], value[10:16] or None)
        epoch = _EPOCH.match(value + " ")
        if epoch:
            return self._epoch(epoch["sec"], epoch["frac"])
        iso = _ISO.match(value)
        return self._iso(iso) if iso else Stamp(None, "none")

    def _calendar(self, m: re.Match) -> Stamp:
        """A full date and time in the log's zone, the month by name (`mon`) or number (`mo`)."""
        try:
            month = MONTHS[m["mon"]] if "mon" in m.re.groupindex else int(m["mo"])
            when = datetime(int(m["y"]), month, int(m["d"]), int(m["h"]), int(m["mi"]),
                            int(m["s"]), tzinfo=self.tz)
        except (KeyError, ValueError):
            return Stamp(None, "none")
        return Stamp(when, "exact")

    def _syslog(self, m: re.Match, head: str) -> Stamp:
        month = MONTHS.get(m["mon"])
        if month is None:
            return Stamp(None, "none")
        parts = (int(m["h"]), int(m["mi"]), int(m["s"]), _frac(m["frac"]))

        def build(year: int) -> datetime:
            return datetime(year, month, int(m["d"]), *parts, tzinfo=self.tz)

        when = self._near_year(month, int(m["d"]), build)
        mono = _MONO_INSIDE.search(head + " ", 0)
        return Stamp(when, "inferred_year", float(mono["mono"]) if mono else None)

    def _iso(self, m: re.Match) -> Stamp:
        try:
            when = datetime(int(m["y"]), int(m["mo"]), int(m["d"]), int(m["h"]), int(m["mi"]),
                            int(m["s"]), _frac(m["frac"]), tzinfo=_offset(m["tz"], self.tz))
        except ValueError:
            return Stamp(None, "none")
        return Stamp(when, "exact")

    def _glog(self, m: re.Match) -> Stamp:
        month, day = int(m["mo"]), int(m["d"])
        if not (1 <= month <= 12):
            return Stamp(None, "none")
        parts = (int(m["h"]), int(m["mi"]), int(m["s"]), _frac(m["frac"]))

        def build(year: int) -> datetime:
            return datetime(year, month, day, *parts, tzinfo=self.tz)

        return Stamp(self._near_year(month, day, build), "inferred_year")

    def learn_boot(self, wall: datetime, mono: float) -> None:
        """Record that `mono` seconds after boot was `wall`; later raw dmesg lines use it."""
        boot = wall - timedelta(seconds=mono)
        # Keep the latest anchor: a reboot inside the log moves the boot time forward.
        if self.boot_time is None or boot > self.boot_time + timedelta(seconds=5):
            self.boot_time = boot
