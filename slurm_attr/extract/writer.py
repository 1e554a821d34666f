"""The host that wrote a system log line, from the line's own header.

A syslog server's file holds the lines of every machine that logs to it, and an excerpt posted
with a report may mix several nodes; the header names the writer, so a line is the node's it
names, not the file's. Formats: RFC 3164 (`May  1 10:00:00 gpu-01 kernel: ...`), RFC 5424
(`<4>1 2024-05-01T10:00:00Z gpu-01 kernel - - - ...`), ISO and journalctl's short styles
(`2024-05-01T10:00:00+0000 gpu-01 kernel: ...`, `Wed 2024-05-01 10:00:00 UTC gpu-01 ...`,
`1714557600.123456 gpu-01 ...`), and JSON lines (`"_HOSTNAME"`, `"host"`, `"hostname"`).
`dmesg` output names no host.
"""

from __future__ import annotations

import re

_HOST = r"(?P<host>[A-Za-z0-9][\w.-]{0,252})"
# A host is followed by the program's tag (`kernel:`, `slurmd[812]:`), or by RFC 5424's fields.
_TAGGED = r" [\w./@()-]{1,64}(?:\[\d+\])?:(?:\s|$)"
_STAMPS = (
    r"[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d(?:\.\d{1,9})?",  # RFC 3164, short-precise
    r"(?:[A-Z][a-z]{2} )?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d| [A-Z]{2,5})?",
    r"\d{10}(?:\.\d{1,9})?",  # short-unix
)
_HEADERS = (re.compile(r"<\d{1,3}>1 \d{4}-\d\d-\d\dT\S+ " + _HOST + r" \S+ \S+ \S+ "),  # RFC 5424
            *(re.compile(r"(?:<\d{1,3}>)?" + stamp + " " + _HOST + r"(?=" + _TAGGED + ")")
              for stamp in _STAMPS))
_JSON_HOST = re.compile(r'"(?:_HOSTNAME|host|hostname)"\s*:\s*"' + _HOST + '"')


def writer_host(line: str) -> str | None:
    """The host the line's header names as its writer, or None when it names none."""
    if line.startswith("{"):
        m = _JSON_HOST.search(line, 0, 2048)
        return m["host"] if m else None
    for header in _HEADERS:
        m = header.match(line)
        if m:
            return m["host"]
    return None


def node_named(host: str, by_name: dict[str, str]) -> str | None:
    """The job's node a writer host names (by_name: the job's nodes by their lower-case name): as
    written, or its short name, in any case (syslog writes the machine's hostname, which may be
    the FQDN or differ in case from Slurm's name)."""
    for candidate in (host, host.split(".", 1)[0]):
        node = by_name.get(candidate.lower())
        if node is not None:
            return node
    return None
