"""Extraction on real files: rotation, gzip, damaged and hostile input, engine correlations."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime, timedelta

from click.testing import CliRunner

from slurm_attr.analyze import analyze_bundle
from slurm_attr.cli import cli
from slurm_attr.collect.files import MAX_LINE, rotation_order

XID79 = "Nov 20 10:30:00 gpu-02 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=python, GPU has fallen off the bus.\n"
NCCL = "gpu-01:11:12 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with status=12 opcode=0 len=0 vendor err 129\n"


def test_rotation_order_is_oldest_first(tmp_path):
    names = ["syslog", "syslog.1", "syslog.2.gz", "syslog.10.gz", "kern.log", "messages-20261118"]
    got = [p.name for p in rotation_order([tmp_path / n for n in names])]
    assert got.index("syslog.10.gz") < got.index("syslog.2.gz") < got.index("syslog.1") \
        < got.index("syslog")


def test_gzip_rotated_logs_are_read(make_bundle):
    bundle = make_bundle({"nodes/gpu-02/syslog.1.gz": gzip.compress(XID79.encode()),
                          "app/out.log": NCCL})
    d = analyze_bundle(bundle)
    assert d["sub_domain"] == "gpu" and d["root_cause"]["nodes"] == ["gpu-02"]
    cov = next(c for c in d["coverage"] if c["node"] == "gpu-02")
    assert cov["status"] == "ok" and cov["files"] == ["nodes/gpu-02/syslog.1.gz"]


def test_truncated_gzip_keeps_what_was_read_and_reports_it(make_bundle):
    data = gzip.compress((XID79 * 2000).encode())
    bundle = make_bundle({"nodes/gpu-02/syslog.1.gz": data[: len(data) // 2]})
    d = analyze_bundle(bundle)
    assert d["sub_domain"] == "gpu"
    assert any("truncated" in e["message"] for e in d["errors"])


def test_non_utf8_and_binary_input_is_reported_not_fatal(make_bundle):
    bundle = make_bundle({"nodes/gpu-02/syslog": b"\xff\xfe\x00junk\n" + XID79.encode()
                          + b"Nov 20 10:31:00 gpu-02 kernel: NVRM: Xid (PCI:0000:18:00): 13, \xe9\xff\n"})
    d = analyze_bundle(bundle)
    messages = " ".join(e["message"] for e in d["errors"])
    assert "NUL" in messages and "UTF-8" in messages
    assert d["sub_domain"] == "gpu"


def test_gigantic_line_is_cut_and_reported(make_bundle):
    huge = "Nov 20 10:30:00 gpu-02 kernel: NVRM: Xid (PCI:0000:18:00): 79, " + "A" * (MAX_LINE * 3) + "\n"
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": huge}))
    assert any("longer than" in e["message"] for e in d["errors"])
    assert all(len(s["source"]["text"]) <= 4000 for s in d["symptoms"])


def test_events_before_the_job_are_context_not_cause(make_bundle):
    early = XID79.replace("10:30:00", "09:40:00")
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": early}))
    assert d["sub_domain"] == "unknown"
    assert [s["role"] for s in d["symptoms"]] == ["context"]


def test_symptoms_alone_give_unknown_with_missing_coverage(make_bundle):
    d = analyze_bundle(make_bundle({"app/out.log": "[rank3]: RuntimeError: NCCL communicator was aborted on rank 3.\n"}))
    assert d["sub_domain"] == "unknown" and d["outcome"] == "unknown"
    assert "node_syslog/gpu-01: no system logs for gpu-01 in the bundle" in d["missing_sources"]


def test_hypothesis_from_a_hinting_symptom(make_bundle):
    d = analyze_bundle(make_bundle({"app/out.log": "gpu-01:1:2 [0] NCCL WARN NET/IB : Got async event : port error\n"}))
    assert d["sub_domain"] == "network" and d["evidence_status"] == "hypothesis"


def test_first_failing_rank_explains_the_others(make_bundle):
    log = ("2026-11-20 10:10:00,000 | start\n"
           "[rank9]: Traceback (most recent call last):\n[rank9]: ValueError: bad shape (3, 4)\n"
           "2026-11-20 10:10:05,000 | later\n"
           "[rank1]: Traceback (most recent call last):\n[rank1]: KeyError: 'x'\n")
    d = analyze_bundle(make_bundle({"app/out.log": log}))
    assert d["root_cause"]["code"] == "ValueError" and d["root_cause"]["nodes"] == ["gpu-02"]
    later = next(s for s in d["symptoms"] if s["code"] == "KeyError")
    assert later["demoted_by"] == "first_failure_explains_rest"


def test_cli_json_is_only_json_and_bad_bundles_fail_with_one_line(make_bundle, tmp_path):
    runner = CliRunner()
    bundle = make_bundle({"nodes/gpu-02/syslog": XID79})
    result = runner.invoke(cli, ["analyze", str(bundle), "--format", "json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["sub_domain"] == "gpu"
    empty = tmp_path / "empty"
    empty.mkdir()
    bad = runner.invoke(cli, ["analyze", str(empty)])
    assert bad.exit_code == 2
    assert bad.stderr.count("\n") == 1 and "workload.json" in bad.stderr


def test_terminal_summary_neutralises_escape_sequences(make_bundle):
    evil = "[rank0]: Traceback (most recent call last):\n[rank0]: ValueError: \x1b]0;pwned\x07\x1b[2J<script>\n"
    result = CliRunner().invoke(cli, ["analyze", str(make_bundle({"app/out.log": evil}))])
    assert result.exit_code == 0
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout


def test_hyperscan_and_re_prefilters_find_the_same_lines():
    from slurm_attr.extract import extractor
    from slurm_attr.ruleset import load

    patterns = load().for_origin("app")
    fast = extractor._Prefilter(patterns)
    text = (NCCL + "plain line\n" + "[rank1]: ValueError: x\n" * 3 + "CUDA out of memory\n").encode()
    saved = extractor.hyperscan
    try:
        extractor.hyperscan = None
        portable = extractor._Prefilter(patterns)
    finally:
        extractor.hyperscan = saved
    line_of = lambda hits: sorted({text.rfind(b"\n", 0, h) + 1 for h in hits})  # noqa: E731
    assert portable.db is None
    assert line_of(fast.hits(text, 0)) == line_of(portable.hits(text, 0))
    assert len(line_of(portable.hits(text, 0))) == 5


def test_specific_match_inside_an_exception_keeps_its_traceback(make_bundle):
    log = ("[rank2]: Traceback (most recent call last):\n"
           '[rank2]:   File "/w/train.py", line 9, in step\n'
           "[rank2]: RuntimeError: CUDA error: an illegal memory access was encountered\n")
    d = analyze_bundle(make_bundle({"app/out.log": log}))
    event = next(s for s in d["symptoms"] if s["kind"] == "cuda_error")
    assert event["fields"]["frame"] == "/w/train.py:9 in step"
    assert event["fields"]["exc"] == "RuntimeError"


def test_output_of_a_one_node_job_is_placed_on_that_node(make_bundle):
    line = "2026-11-20T10:30:00Z RuntimeError: CUDA error: an illegal memory access was encountered\n"
    d = analyze_bundle(make_bundle({"app/out.txt": line}, nodes="gpu-07"))
    assert d["root_cause"]["nodes"] == ["gpu-07"]
    assert "rank ?" not in d["verdict"] and "on a rank" in d["root_cause"]["explanation"]
    two = analyze_bundle(make_bundle({"app/out.txt": line}))  # two nodes: the rank is unknown
    assert two["root_cause"]["nodes"] == []


def test_a_step_killed_for_memory_explains_a_job_that_only_failed(make_bundle):
    steps = [{"id": "batch", "name": "batch", "state": "FAILED", "exit_code": "1:0", "nodes": "gpu-01",
              "start": "2026-11-20T10:00:00+00:00", "end": "2026-11-20T11:00:00+00:00"},
             {"id": "0", "name": "python", "state": "OUT_OF_MEMORY", "exit_code": "0:125", "nodes": "gpu-02",
              "start": "2026-11-20T10:00:01+00:00", "end": "2026-11-20T10:59:58+00:00"},
             {"id": "1", "name": "python", "state": "CANCELLED", "exit_code": "0:15", "nodes": "gpu-[01-02]",
              "start": "2026-11-20T10:00:01+00:00", "end": "2026-11-20T10:59:59+00:00"}]
    d = analyze_bundle(make_bundle({}, steps=steps))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("host_oom", ["gpu-02"])
    plain = analyze_bundle(make_bundle({}, steps=[{**s, "state": "FAILED"} for s in steps]))
    assert plain["sub_domain"] != "host_oom"


def test_big_logs_are_read_only_around_the_window(make_bundle, monkeypatch):
    from slurm_attr.collect import files
    from slurm_attr.extract import extractor

    monkeypatch.setattr(extractor, "_SEEK_MIN_BYTES", 1 << 20)  # as if this 11 MB file were huge
    monkeypatch.setattr(files, "BLOCK", 1 << 18)
    noise = "gpu-01 systemd[1]: Started Session {n} of user alice.\n"
    xid = "gpu-01 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=python, GPU has fallen off the bus.\n"
    lines, t = [], datetime(2026, 11, 19, tzinfo=UTC)
    while t < datetime(2026, 11, 22, tzinfo=UTC):  # three days, one line every 2 s
        text = xid if t in (datetime(2026, 11, 19, 3, tzinfo=UTC), datetime(2026, 11, 20, 10, 30, tzinfo=UTC)) \
            else noise.format(n=int(t.timestamp()))
        lines.append(f"{t.isoformat()} {text}")
        t += timedelta(seconds=2)
    body = "".join(lines)
    bundle = make_bundle({"nodes/gpu-01/syslog": body})  # the job: 10:00-11:00 on Nov 20
    d = analyze_bundle(bundle)
    assert d["root_cause"]["code"] == "XID 79"
    ev = d["symptoms"][d["root_cause"]["event"]]["source"]
    assert body.splitlines()[ev["line"] - 1] == ev["text"]  # line numbers count the skipped part
    cov = next(c for c in d["coverage"] if c["node"] == "gpu-01")
    assert cov["bytes"] < len(body) / 5  # not the two days outside the window
    assert cov["span"]["first"] > "2026-11-20" and cov["span"]["last"] < "2026-11-20T13"
    assert not any((s["time"] or "").startswith("2026-11-19") for s in d["symptoms"])


def test_controller_lines_about_this_job_only(make_bundle):
    log = ("[2026-11-20T10:59:50.100] error: slurmd error running JobId=999 on node(s)=gpu-01: Kill task failed\n"
           "[2026-11-20T11:00:05.100] error: slurmd error running JobId=4242 on node(s)=gpu-02: Kill task failed\n"
           "[2026-11-20T11:00:06.100] error: _job_complete: JobId=4242 epilog error on gpu-02, draining the node\n"
           "[2026-11-20T11:00:07.100] Requeuing JobId=4242\n")
    d = analyze_bundle(make_bundle({"controller/slurmctld.log": log}))
    kinds = {(s["kind"], s["node"]) for s in d["symptoms"]}
    assert {("kill_task_failed", "gpu-02"), ("node_epilog_failed", "gpu-02")} <= kinds
    assert ("kill_task_failed", "gpu-01") not in kinds  # another job's line
    assert any(s["kind"] == "requeue" for s in d["symptoms"])
