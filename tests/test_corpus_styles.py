"""The real-incident corpus (and the sample bundles) written in other log styles reads the same.

Each case's job output is rewritten as other tools and sites write it (indented, tagged by a worker
pool, coloured, CRLF, gzipped) and its node and controller logs in other timestamp styles (RFC 5424,
journald JSON, `dmesg -T`, ISO, FQDN hosts, or all nodes in one syslog server's file). The
sub_domain must not move: a verdict that depends on
how a site writes its logs would be wrong on the sites we never see. Transforms that change what a
line says (a rank prefix on every line would name one rank for all of them) are not used.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import sys
from collections.abc import Callable
from datetime import UTC, datetime, tzinfo
from functools import cache
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from accuracy import cases

from slurm_attr.analyze import analyze_bundle
from slurm_attr.extract.timestamps import Clock, zone_for
from slurm_attr.scope.static import load_workload

# ------------------------------------------------------------------ job output


def _each_line(prefix: bytes, suffix: bytes = b"") -> Callable[[bytes], bytes]:
    return lambda data: b"\n".join(prefix + line + suffix if line else line for line in data.split(b"\n"))


APP_STYLES: dict[str, Callable[[bytes], bytes]] = {
    "indented": _each_line(b"  "),  # Nextflow's `Command error:` block
    "tab-indented": _each_line(b"\t"),
    "ray-worker": _each_line(b"(RayTrainWorker pid=48213, ip=10.0.3.7) "),
    "vllm-worker": _each_line(b"(VllmWorkerProcess pid=48213) "),
    "compose": _each_line(b"trainer-1  | "),
    "kubectl-prefix": _each_line(b"[pod/train-0/trainer] "),
    "colours": _each_line(b"\x1b[1;31m", b"\x1b[0m"),
    "crlf": lambda data: data.replace(b"\n", b"\r\n"),
    "trailing-spaces": _each_line(b"", b"   "),  # Fortran pads its records
}

# ------------------------------------------------------------------ node and controller logs

# (host, program, message) out of the styles the corpus holds: RFC 3164, ISO with a host, dmesg -T.
_RFC3164 = re.compile(r"^(?:<\d{1,3}>)?[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)? (?P<host>\S+) (?P<rest>.*)$")
_ISO = re.compile(r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)? "
                  r"(?P<host>[A-Za-z][\w.-]*) (?P<rest>\S+: .*)$")
_DMESG_T = re.compile(r"^\[(?:[A-Z][a-z]{2} )?[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)? \d{4}\] ?(?P<rest>.*)$")
_PROGRAM = re.compile(r"^(?P<tag>[\w./@-]+)(?:\[\d+\])?: ?(?P<msg>.*)$")
_MONO = re.compile(r"^\[\s*\d+\.\d+\] ?")
_TAG_AS_HOST = re.compile(r"^(?P<tag>[A-Za-z][\w-]*)(?:\[\d+\])?:$")


def _parts(line: str) -> tuple[str | None, str, str] | None:
    m = _DMESG_T.match(line)
    if m:
        return None, "kernel", m["rest"]
    m = _RFC3164.match(line) or _ISO.match(line)
    lost_host = _TAG_AS_HOST.match(m["host"]) if m else None
    if lost_host:  # a copy that lost the host name has the program's tag there (`... kernel: NVRM: ...`)
        return None, lost_host["tag"], m["rest"]
    program = _PROGRAM.match(m["rest"]) if m else None
    return (m["host"], program["tag"], program["msg"]) if m and program else None


Render = Callable[[datetime, str, str, str, tzinfo], str]


def _dmesg_t(when: datetime, host: str, tag: str, msg: str, tz: tzinfo) -> str:
    local = when.astimezone(tz)
    if tag != "kernel":  # dmesg holds only the kernel's lines; the rest stay in syslog form
        return f"{local:%b %e %H:%M:%S} {host} {tag}: {msg}"
    return f"[{local:%a %b %e %H:%M:%S %Y}] {_MONO.sub('', msg)}"


NODE_STYLES: dict[str, Render] = {
    "rfc5424": lambda when, host, tag, msg, tz: f"<4>1 {when.astimezone(UTC).isoformat()} {host} {tag} - - - {msg}",
    "journal-json": lambda when, host, tag, msg, tz: json.dumps({
        "__REALTIME_TIMESTAMP": str(int(when.timestamp() * 10**6)), "_HOSTNAME": host,
        "SYSLOG_IDENTIFIER": tag, "MESSAGE": msg}),
    "iso-offset": lambda when, host, tag, msg, tz: f"{when.isoformat()} {host} {tag}: {msg}",
    "rfc3164-fqdn": lambda when, host, tag, msg, tz:
        f"{when.astimezone(tz):%b %e %H:%M:%S} {host}.cluster.example.org {tag}: {msg}",
    "dmesg-T": _dmesg_t,
}


def _restyle_log(path: Path, render: Render, clock: Clock, tz: tzinfo, host: str) -> int:
    lines, changed = path.read_bytes().decode("utf-8", "surrogateescape").split("\n"), 0
    for i, line in enumerate(lines):
        parts = _parts(line)
        when = clock.parse(line).when if parts else None
        if parts and when is not None:
            lines[i] = render(when, parts[0] or host, parts[1], parts[2], tz)
            changed += 1
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogateescape"))
    return changed


# ------------------------------------------------------------------ the check

SAMPLES = Path(__file__).resolve().parent.parent / "sample_jobs"
CASES = cases() + sorted(p for p in SAMPLES.iterdir() if (p / "workload.json").is_file())


@cache
def _sub_domain(case: Path) -> str:
    return analyze_bundle(case)["sub_domain"]


def _app_files(root: Path) -> list[Path]:
    return [f for f in sorted(root.glob("app/*")) if f.is_file()]


def _log_files(root: Path) -> list[Path]:
    return [f for f in sorted([*root.glob("nodes/*/*"), *root.glob("controller/*")]) if f.is_file()]


def _moved(tmp_path: Path, restyle: Callable[[Path], bool]) -> list[str]:
    """Cases whose sub_domain moves when restyle (True: it changed the copy) rewrites a copy."""
    moved = []
    for case in CASES:
        copy = tmp_path / case.name
        shutil.copytree(case, copy)
        if restyle(copy):
            new = analyze_bundle(copy)["sub_domain"]
            if new != _sub_domain(case):
                moved.append(f"{case.name}: {_sub_domain(case)} -> {new}")
        shutil.rmtree(copy)
    return moved


@pytest.mark.parametrize("style", sorted(APP_STYLES))
def test_the_corpus_reads_the_same_whatever_wraps_the_jobs_output(tmp_path, style):
    def restyle(root: Path) -> bool:
        for f in _app_files(root):
            f.write_bytes(APP_STYLES[style](f.read_bytes()))
        return bool(_app_files(root))
    assert _moved(tmp_path, restyle) == []


def test_the_corpus_reads_the_same_from_gzipped_job_output(tmp_path):
    def restyle(root: Path) -> bool:
        for f in _app_files(root):
            f.with_name(f.name + ".gz").write_bytes(gzip.compress(f.read_bytes()))
            f.unlink()
        return True
    assert _moved(tmp_path, restyle) == []


@pytest.mark.parametrize("style", sorted(NODE_STYLES))
def test_the_corpus_reads_the_same_in_every_node_log_style(tmp_path, style):
    restyled = 0

    def restyle(root: Path) -> bool:
        nonlocal restyled
        workload = load_workload(root)
        tz = zone_for(workload.timezone, workload.start.tzinfo or UTC)
        lines = sum(_restyle_log(f, NODE_STYLES[style], Clock(workload.end, tz), tz, f.parent.name)
                    for f in _log_files(root))
        restyled += bool(lines)
        return bool(lines)
    assert _moved(tmp_path, restyle) == []
    assert restyled >= 30  # the check ran on the cases that hold timestamped node logs


def test_the_corpus_reads_the_same_from_one_syslog_servers_file(tmp_path):
    """Every node's stamped lines moved into one time-ordered `nodes/messages`, as a syslog server
    writes them; lines that name no writer (dmesg) stay in their node's own file."""
    restyled = 0

    def restyle(root: Path) -> bool:
        nonlocal restyled
        workload = load_workload(root)
        tz = zone_for(workload.timezone, workload.start.tzinfo or UTC)
        shared: list[tuple[datetime, int, str]] = []
        for f in [f for f in _log_files(root) if f.parts[-3] == "nodes"]:
            clock, kept = Clock(workload.end, tz), []
            for line in f.read_bytes().decode("utf-8", "surrogateescape").split("\n"):
                parts = _parts(line)
                when = clock.parse(line).when if parts and parts[0] else None
                if parts and parts[0] and when is not None:
                    host, tag, msg = parts
                    shared.append((when, len(shared), f"{when.astimezone(tz):%b %e %H:%M:%S} {host} {tag}: {msg}"))
                else:
                    kept.append(line)
            f.write_bytes("\n".join(kept).encode("utf-8", "surrogateescape"))
        if shared:
            (root / "nodes" / "messages").write_bytes(
                "\n".join(line for _, _, line in sorted(shared)).encode("utf-8", "surrogateescape") + b"\n")
        restyled += bool(shared)
        return bool(shared)
    assert _moved(tmp_path, restyle) == []
    assert restyled >= 20  # the cases whose node logs name their writer


def test_the_corpus_reads_the_same_from_rotated_node_logs(tmp_path):
    """Each node log split where logrotate would have cut it: the older half compressed as `.1.gz`."""
    def restyle(root: Path) -> bool:
        rotated = False
        for f in [f for f in _log_files(root) if f.parts[-3] == "nodes"]:
            lines = f.read_bytes().split(b"\n")
            if len(lines) < 4:
                continue
            half = len(lines) // 2
            f.with_name(f.name + ".1.gz").write_bytes(gzip.compress(b"\n".join(lines[:half]) + b"\n"))
            f.write_bytes(b"\n".join(lines[half:]))
            rotated = True
        return rotated
    assert _moved(tmp_path, restyle) == []
