"""Class 3 and 10: decompression bombs and huge inputs are read in bounded memory and time and
recorded as truncated; evidence line numbers stay right after a gigantic line; a file that cannot
be read is "unreadable", not "empty"."""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

from hostile_helpers import measured_analysis, write_bundle

from slurm_attr.analyze import analyze_bundle
from slurm_attr.collect.files import MAX_LINE, ReadBudget, ReadLimits, ReadStats, iter_blocks
from slurm_attr.connectors.bundle import BundleCollector
from slurm_attr.ruleset import load as load_rules
from slurm_attr.scope.static import load_workload

XID = b"Nov 20 10:30:00 gpu-01 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.\n"


def _zeros_gzip(path: Path, gigabytes: int) -> Path:
    """A gzip of N GiB of zeros, made fast as concatenated members of 64 MiB each (~2 MB total
    for 2 GiB): exactly what a job owner could plant as their stdout."""
    path.parent.mkdir(parents=True, exist_ok=True)
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    member = packer.compress(b"\0" * (64 << 20)) + packer.flush()
    with path.open("wb") as fh:
        for _ in range(gigabytes * 16):
            fh.write(member)
    return path


def test_a_2gb_zero_bomb_as_job_output_is_capped_in_bounded_memory_and_time(tmp_path):
    bundle = write_bundle(tmp_path / "bundle", {"nodes/gpu-01/syslog": XID})
    _zeros_gzip(bundle / "app" / "slurm-4242.out.gz", gigabytes=2)
    assert (bundle / "app" / "slurm-4242.out.gz").stat().st_size < 4 << 20
    got = measured_analysis(bundle)
    job_output = next(c for c in got["coverage"] if c["collector"] == "job_output")
    assert job_output["status"] == "truncated"
    assert "decompression bomb" in job_output["reason"]
    assert job_output["bytes"] < 256 << 20  # stopped near the ratio floor, not at 2 GiB
    assert got["rss_mb"] < 300, got
    assert got["seconds"] < 30, got
    assert got["sub_domain"] == "gpu"  # the other evidence still decides


def test_the_absolute_file_cap_truncates_a_plain_file_and_keeps_what_came_before(tmp_path):
    bundle = write_bundle(tmp_path / "bundle", {"nodes/gpu-01/syslog": XID + b"filler line\n" * 200_000})
    root_workload = load_workload(bundle)
    limits = ReadLimits(max_file_bytes=1 << 20)
    obs = BundleCollector(bundle, root_workload, load_rules(None), limits).collect()
    cov = next(c for c in obs.coverage if c.node == "gpu-01")
    assert cov.status == "truncated" and "per file" in (cov.reason or "")
    assert any(e.kind == "gpu_xid" for e in obs.events)  # evidence before the cap is kept


def test_the_attempt_budget_is_shared_by_all_files(tmp_path):
    stats = ReadStats(budget=ReadBudget(ReadLimits(max_attempt_bytes=5 << 20)))
    path = tmp_path / "big.log"
    path.write_bytes(b"x" * 99 + b"\n" * 1 + b"y\n" * (4 << 20))
    list(iter_blocks(path, stats))
    assert stats.capped and "budget" in stats.capped
    again = ReadStats(budget=stats.budget)
    assert list(iter_blocks(path, again)) == [] and again.capped


def test_gzip_is_inflated_in_bounded_steps(tmp_path):
    """A single 1 MiB read of compressed zeros must not inflate a gigabyte into memory at once."""
    path = _zeros_gzip(tmp_path / "z.gz", gigabytes=1)
    stats = ReadStats()
    sizes = [len(block) for block in iter_blocks(path, stats)]
    assert max(sizes) <= 2 * MAX_LINE + 8
    assert stats.capped


def test_line_numbers_stay_right_after_a_gigantic_line(tmp_path):
    giant = b"A" * (3 * MAX_LINE + 12345) + b"\n"
    lines = [b"Nov 20 10:00:00 gpu-01 x: one\n", giant, b"Nov 20 10:00:01 gpu-01 x: three\n", giant, XID]
    bundle = write_bundle(tmp_path / "bundle", {"nodes/gpu-01/syslog": b"".join(lines)})
    d = analyze_bundle(bundle)
    xid = next(s for s in d["symptoms"] if s["kind"] == "gpu_xid")
    assert xid["source"]["line"] == 5
    cov = next(c for c in d["coverage"] if c["node"] == "gpu-01")
    assert cov["lines"] == 5


def test_a_file_that_cannot_be_read_is_unreadable_not_empty(tmp_path):
    bundle = write_bundle(tmp_path / "bundle", {"nodes/gpu-01/syslog": XID})
    workload = load_workload(bundle)
    collector = BundleCollector(bundle, workload, load_rules(None))
    # The log is rotated away between listing and reading (logrotate runs while we work).
    victim = bundle / "nodes" / "gpu-01" / "syslog"
    os.replace(victim, bundle / "nodes" / "gpu-01" / "old")
    victim.write_bytes(XID)  # a new file under the old name: a different inode
    obs = collector.collect()
    cov = next(c for c in obs.coverage if c.node == "gpu-01")
    assert cov.status == "error" and (cov.reason or "").startswith("unreadable")
    assert not any(e.kind == "gpu_xid" for e in obs.events)


def test_truncated_gzip_keeps_what_came_before(tmp_path):
    data = gzip.compress(XID * 2000)
    bundle = write_bundle(tmp_path / "bundle", {"nodes/gpu-01/syslog.1.gz": data[: len(data) // 2]})
    d = analyze_bundle(bundle)
    assert d["sub_domain"] == "gpu"
    assert any("archive ends early" in e["message"] for e in d["errors"])


def _nccl_warns(count: int, first_second: int = 0) -> bytes:
    """A job whose output repeats one NCCL warning, each line stamped a second apart."""
    return b"".join(
        b"2026-11-20T10:%02d:%02d gpu-01:1234:5678 [0] NCCL WARN NET/IB : Got completion from peer "
        b"10.0.0.2<1234> with error 12, opcode 0, len 0, vendor err 129\n" % divmod(first_second + i, 60)
        for i in range(count))


def test_lines_past_a_rules_cap_are_counted_into_kept_events_not_kept(tmp_path):
    bundle = write_bundle(tmp_path / "bundle", {"nodes/gpu-01/syslog": XID,
                                                "app/gpu-01/out.log": _nccl_warns(600)})
    limits = ReadLimits(max_events_per_rule=50)
    obs = BundleCollector(bundle, load_workload(bundle), load_rules(None), limits).collect()
    warns = [e for e in obs.events if e.rule == "nccl.warn"]
    assert len(warns) == 50
    assert sum(e.count for e in warns) == 600  # nothing is lost: the rest are counts
    assert max(e.last_time or e.time for e in warns).strftime("%H:%M:%S") == "10:09:59"
    assert any(e.kind == "gpu_xid" for e in obs.events)  # another rule's cap is its own
    notes = [n for c in obs.coverage for n in c.notes]
    assert any("550 more lines matching nccl.warn past the cap of 50" in n for n in notes), notes


def test_counted_lines_reach_the_diagnosis_as_one_burst(tmp_path):
    bundle = write_bundle(tmp_path / "bundle", {"app/gpu-01/out.log": _nccl_warns(600)})
    capped = analyze_bundle(bundle, limits=ReadLimits(max_events_per_rule=50))
    whole = analyze_bundle(bundle)
    assert capped["verdict"] == whole["verdict"] and capped["sub_domain"] == whole["sub_domain"]

    def warn_lines(d):
        return sum(e["count"] for e in [d["root_cause"] or {}, *d["symptoms"]] if e.get("rule") == "nccl.warn")
    assert warn_lines(capped) == warn_lines(whole) == 600


def test_past_the_cap_a_line_of_a_new_kind_is_still_kept(tmp_path):
    retry = ("2026-11-20T10:05:%02d gpu-01:1234:5678 [0] NCCL WARN Call to connect returned Connection "
             "refused, retrying\n")
    lost = (b"2026-11-20T10:06:00 gpu-01:1234:5678 [0] NCCL WARN NET/IB : Got completion from peer "
            b"10.0.0.2<1234> with error 12, opcode 0, len 0, vendor err 129\n")
    out = "".join(retry % (i % 60) for i in range(60)).encode() + lost
    bundle = write_bundle(tmp_path / "bundle", {"app/gpu-01/out.log": out})
    capped = analyze_bundle(bundle, limits=ReadLimits(max_events_per_rule=5))
    assert capped["verdict"] == analyze_bundle(bundle)["verdict"]
    assert "retry exceeded" in capped["verdict"]


def test_past_the_cap_a_line_during_the_job_is_not_folded_into_one_before_it(tmp_path):
    # The last line before the start and the first after it are seconds apart, within one burst
    # window: only the job's start separates context from evidence.
    early = b"".join(b"Nov 20 09:59:%02d gpu-01 kernel: NVRM: Xid (PCI:0000:18:00): 13, pid=1, Graphics Exception\n"
                     % i for i in range(50, 60))
    during = b"Nov 20 10:00:30 gpu-01 kernel: NVRM: Xid (PCI:0000:18:00): 13, pid=1, Graphics Exception\n"
    bundle = write_bundle(tmp_path / "bundle", {"nodes/gpu-01/syslog": early + during + XID})
    capped = analyze_bundle(bundle, limits=ReadLimits(max_events_per_rule=3))
    assert (capped["sub_domain"], capped["verdict"]) == (analyze_bundle(bundle)["sub_domain"],
                                                         analyze_bundle(bundle)["verdict"])
    times = [e["time"] for e in capped["symptoms"] + [capped["root_cause"] or {}] if e.get("code") == "XID 13"]
    assert any(t and t.startswith("2026-11-20T10:00:30") for t in times), times
