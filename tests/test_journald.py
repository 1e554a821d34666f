"""The journald observation source on real journal files: systemd-journal-remote writes them from
journal export format (what `journalctl -o export` and systemd-journal-upload send), and
`journalctl --file` reads them back, in a bundle and in live mode."""

from __future__ import annotations

import io
import json
import os
import shutil
import struct
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from slurm_attr.analyze import analyze_bundle
from slurm_attr.collect.files import ReadLimits
from slurm_attr.config import Settings
from slurm_attr.connectors import UnknownSource, observation_sources
from slurm_attr.connectors.journald import entry_lines, journal_kind, write_text
from slurm_attr.connectors.slurm import collect
from slurm_attr.ruleset import load as load_rules
from slurm_attr.scope.static import load_workload

REMOTE = shutil.which("systemd-journal-remote") or "/lib/systemd/systemd-journal-remote"
needs_journal_tools = pytest.mark.skipif(
    not (os.access(REMOTE, os.X_OK) and shutil.which("journalctl"))
    and not os.environ.get("SLURM_ATTR_REQUIRE_CLUSTER"),
    reason="systemd-journal-remote and journalctl are not installed (the CI script installs them)")

T = int(datetime(2026, 11, 20, 10, 30, tzinfo=UTC).timestamp())
BOOT = "0123456789abcdef0123456789abcdef"


def _entry(seconds: int, host: str, ident: str, message: bytes | str, **fields: str) -> bytes:
    """One entry in journal export format; a non-UTF-8 or multi-line MESSAGE uses the binary form."""
    head = {"__REALTIME_TIMESTAMP": str(seconds * 1_000_000), "__MONOTONIC_TIMESTAMP": str(seconds),
            "_BOOT_ID": BOOT, "_HOSTNAME": host, "SYSLOG_IDENTIFIER": ident, **fields}
    out = b"".join(f"{k}={v}\n".encode() for k, v in head.items())
    data = message.encode() if isinstance(message, str) else message
    if b"\n" in data or not _utf8(data):
        out += b"MESSAGE\n" + struct.pack("<Q", len(data)) + data + b"\n"
    else:
        out += b"MESSAGE=" + data + b"\n"
    return out + b"\n"


def _utf8(data: bytes) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


def _journal(path: Path, entries: list[bytes]) -> Path:
    """A real binary journal file written by systemd-journal-remote."""
    path.parent.mkdir(parents=True, exist_ok=True)
    export = path.with_name(path.name + ".export")
    export.write_bytes(b"".join(entries))
    subprocess.run([REMOTE, f"--output={path}", str(export)], check=True, capture_output=True, timeout=60)
    export.unlink()
    return path


XID = "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, name=python, GPU has fallen off the bus."


def _gpu_fault(host: str) -> list[bytes]:
    return [_entry(T - 3600, host, "slurmd", "launch task StepId=4242.0"),
            _entry(T, host, "kernel", XID, _TRANSPORT="kernel"),
            _entry(T + 1, host, "kernel", "first line\nsecond line with \xff".encode("latin-1")),
            _entry(T + 86400 * 30, host, "kernel", "NVRM: Xid (PCI:0000:3b:00): 48, long after the job")]


def _bundle(tmp_path: Path) -> Path:
    root = tmp_path / "bundle"
    root.mkdir()
    (root / "workload.json").write_text(json.dumps({
        "cluster": "t", "job_id": "4242", "nodes": "gpu-[01-02]", "state": "FAILED", "exit_code": "1:0",
        "start": "2026-11-20T10:00:00+00:00", "end": "2026-11-20T11:00:00+00:00"}))
    return root


@needs_journal_tools
def test_a_binary_journal_in_a_bundle_is_read_with_journalctl(tmp_path):
    bundle = _bundle(tmp_path)
    _journal(bundle / "nodes" / "gpu-01" / "system.journal", _gpu_fault("gpu-01"))
    d = analyze_bundle(bundle)
    assert (d["sub_domain"], d["affected_nodes"]) == ("gpu", ["gpu-01"])
    root = next(s for s in d["symptoms"] if s["id"] == d["root_cause"]["event"])
    ref = root["source"]
    assert d["root_cause"]["code"] == "XID 79" and ref["file"] == "nodes/gpu-01/system.journal"
    assert ref["text"].startswith("2026-11-20T10:30:00.000000+00:00 gpu-01 kernel: NVRM: Xid")
    assert not any(s.get("fields", {}).get("xid") == "48" for s in d["symptoms"])  # outside the window
    cov = next(c for c in d["coverage"] if c["node"] == "gpu-01")
    assert cov["status"] == "ok" and cov["lines"] >= 3


@needs_journal_tools
def test_an_exported_json_journal_in_a_bundle_is_read(tmp_path):
    bundle = _bundle(tmp_path)
    binary = _journal(tmp_path / "src" / "x.journal", _gpu_fault("gpu-02"))
    exported = subprocess.run(["journalctl", f"--file={binary}", "-o", "json", "--no-pager"],
                              check=True, capture_output=True, timeout=60).stdout
    (bundle / "nodes" / "gpu-02").mkdir(parents=True)
    (bundle / "nodes" / "gpu-02" / "journal.json").write_bytes(exported)
    d = analyze_bundle(bundle)
    assert (d["sub_domain"], d["affected_nodes"]) == ("gpu", ["gpu-02"])


@needs_journal_tools
def test_live_mode_reads_the_configured_journal_files(tmp_path):
    bundle = _bundle(tmp_path)
    _journal(tmp_path / "remote" / "remote-gpu-02.journal", _gpu_fault("gpu-02"))
    workload = load_workload(bundle)
    settings = Settings(journal_files=(str(tmp_path / "remote" / "remote-{node}*.journal"),),
                        sources=("journald",), margin_s=600)
    obs = collect(workload, load_rules(None), settings, {}, client=None)  # type: ignore[arg-type]
    xids = [e for e in obs.events if e.kind == "gpu_xid"]
    assert [(e.node, e.fields.get("xid")) for e in xids] == [("gpu-02", "79")]
    assert xids[0].source.file.endswith("remote-gpu-02.journal")
    gpu01 = next(c for c in obs.coverage if c.node == "gpu-01")
    assert gpu01.status == "missing"


def test_entries_become_syslog_lines():
    entry = {"__REALTIME_TIMESTAMP": str(T * 1_000_000), "_HOSTNAME": "gpu-01", "SYSLOG_IDENTIFIER": "nv",
             "_PID": "42", "MESSAGE": list(b"two\nlines \xff")}
    assert list(entry_lines(entry)) == ["2026-11-20T10:30:00.000000+00:00 gpu-01 nv[42]: two",
                                        "2026-11-20T10:30:00.000000+00:00 gpu-01 nv[42]: lines \ufffd"]
    assert list(entry_lines({"MESSAGE": "no time"})) == []


def test_conversion_is_capped_and_survives_garbage():
    lines = [b"not json\n", b"[1]\n"] + [json.dumps({"__REALTIME_TIMESTAMP": str(T * 10**6),
                                                    "MESSAGE": "x" * 100}).encode() + b"\n"] * 100
    out = io.BytesIO()
    problems = write_text(lines, out, ReadLimits(max_file_bytes=1000))
    assert any(p.startswith("truncated:") for p in problems)
    assert any("2 journal lines were not JSON" in p for p in problems) or len(out.getvalue()) <= 1000
    assert len(out.getvalue()) <= 1000


def test_journal_files_are_recognised_by_name():
    assert journal_kind("nodes/a/system.journal") == "binary"
    assert journal_kind("nodes/a/system@0005-1.journal~") == "binary"
    assert journal_kind("nodes/a/journal.json") == "export"
    assert journal_kind("nodes/a/boot.journal.json") == "export"
    assert journal_kind("nodes/a/syslog") is None


def test_unknown_sources_are_a_clear_error():
    with pytest.raises(UnknownSource, match="built-in ones"):
        observation_sources(["no_such_source"])
    assert [s.name for s in observation_sources(["node_logs", "journald"])] == ["node_logs", "journald"]
