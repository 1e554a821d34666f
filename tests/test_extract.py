"""Extraction on real files: rotation, gzip, damaged and hostile input, engine correlations."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner

from slurm_attr.analyze import analyze_bundle
from slurm_attr.cli import cli
from slurm_attr.collect.files import MAX_LINE, rotation_order
from slurm_attr.connectors.bundle import BundleCollector
from slurm_attr.ruleset import load as load_rules
from slurm_attr.scope.static import load_workload

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


def test_a_report_logrotate_cut_in_two_reads_as_one(make_bundle):
    """The hung task's header in the rotated generation, its stack in the live file: the frame
    below still has the header above it, and the carried lines are not matched twice."""
    head = ("Nov 20 10:30:00 gpu-02 kernel: INFO: task nfsd:3782 blocked for more than 120 seconds.\n"
            "Nov 20 10:30:00 gpu-02 kernel: Call Trace:\n")
    frames = "Nov 20 10:30:00 gpu-02 kernel:  [<ffffffffa03745c0>] ? zfsctl_lookup_objset+0x29/0x288 [zfs]\n"
    whole = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": head + frames, "app/out.log": NCCL}))
    cut = analyze_bundle(make_bundle({"nodes/gpu-02/syslog.1.gz": gzip.compress(head.encode()),
                                      "nodes/gpu-02/syslog": frames, "app/out.log": NCCL}))
    for d in (whole, cut):
        assert (d["sub_domain"], d["root_cause"]["code"]) == ("storage", "ZFS hang")
        assert [s["rule"] for s in d["symptoms"]].count("kernel.hung_task") == 1
    # a different log's end is not this one's beginning
    apart = analyze_bundle(make_bundle({"nodes/gpu-02/kern.log": head, "nodes/gpu-02/syslog": frames,
                                        "app/out.log": NCCL}))
    assert apart["root_cause"]["code"] != "ZFS hang"


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
    # The GPU was lost before the job started: the job's exit code is not read as its own failure.
    assert [s["role"] for s in d["symptoms"] if s["kind"] != "job_exit"] == ["context"]


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
    lines = bad.stderr.splitlines()  # the bundle's one-line reason (and the CLI's tally)
    assert "workload.json" in lines[0] and all(x.startswith("slurm-attr: ") for x in lines)


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
    # a line of one keyword repeated end to end (past what one scan reports) between lines with hits
    repeated = "NCCL WARN " * 1000 + "\n"
    text = (NCCL + "plain line\n" + repeated + "[rank1]: ValueError: x\n" * 3 + repeated + "plain line\n"
            + "CUDA out of memory\n").encode()
    saved = extractor.hyperscan
    try:
        extractor.hyperscan = None
        portable = extractor._Prefilter(patterns)
    finally:
        extractor.hyperscan = saved
    line_of = lambda hits: sorted({text.rfind(b"\n", 0, h) + 1 for h in hits})  # noqa: E731
    assert portable.db is None
    assert line_of(fast.hits(text, 0)) == line_of(portable.hits(text, 0))
    assert len(line_of(portable.hits(text, 0))) == 7
    assert len(fast.hits(text, 0)) < 1000  # the repeats past one scan's share are skipped
    # which patterns a line can match: the same from one scan of it as from a search per keyword
    for line in text.decode().splitlines():
        assert fast.candidates(line) == portable.candidates(line)


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

    monkeypatch.setattr(files, "SEEK_MIN_BYTES", 1 << 20)  # as if this 11 MB file were huge
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


# ---------------------------------------------------------------- classes from the real-incident corpus
def _syslog(node, at, text):
    return f"Nov 20 {at} {node} kernel: {text}\n"


def test_gpu_lost_in_a_three_line_driver_message_without_an_xid(make_bundle):
    dmesg = ("[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
             "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
             "               NVRM: fallen off the bus and is not responding to commands.\n"
             "[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).\n")
    d = analyze_bundle(make_bundle({"nodes/gpu-02/dmesg": dmesg}))
    assert d["sub_domain"] == "gpu" and d["root_cause"]["nodes"] == ["gpu-02"]
    assert d["root_cause"]["gpu"]["pci"] == "0000:b3:00.0"


def test_nvml_unknown_error_is_a_lost_gpu_on_the_node_that_printed_it(make_bundle):
    out = "Unable to determine the device handle for GPU0000:03:00.0: Unknown Error\n"
    d = analyze_bundle(make_bundle({"app/gpu-02/nvidia-smi.log": out}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("gpu", ["gpu-02"])


def test_all_prefix_layers_are_stripped_and_the_rank_places_the_line(make_bundle):
    out = ("80: [rank80]: Traceback (most recent call last):\n"
           '80: [rank80]:   File "/w/train.py", line 12, in save\n'
           "80: [rank80]: PermissionError: [Errno 13] Permission denied: '/ckpt/step_100'\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-[01-16]"))
    root = d["symptoms"][d["root_cause"]["event"]]
    assert d["sub_domain"] == "application" and root["fields"]["rank"] == "80"
    assert d["root_cause"]["nodes"] == ["gpu-11"] and root["fields"]["frame"] == "/w/train.py:12 in save"


def test_an_unknown_cuda_error_falls_back_to_the_exception_never_vanishes(make_bundle):
    out = "RuntimeError: CUDA error: operation not supported on global/shared address space\n"
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-01"))
    root = d["symptoms"][d["root_cause"]["event"]]
    assert d["sub_domain"] == "application" and root["rule"] == "python.exception"


def test_cuda_oom_and_library_alloc_failures_are_gpu_oom(make_bundle):
    for line in ("RuntimeError: CUDA out of memory.\n",
                 "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n",
                 "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3\n"):
        d = analyze_bundle(make_bundle({"app/out.log": line}, nodes="gpu-01"))
        assert d["sub_domain"] == "gpu_oom", line
        assert "?" not in d["verdict"]


def test_ecc_error_in_job_output_is_gpu_memory_and_explains_a_later_oom(make_bundle):
    out = ("[rank9]: RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
           "[rank9]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert d["sub_domain"] == "gpu_memory" and d["root_cause"]["nodes"] == ["gpu-02"]
    oom = next(s for s in d["symptoms"] if s["kind"] == "cuda_oom")
    assert oom["role"] == "interesting"


def test_a_bare_nonzero_exit_is_the_application_as_a_hypothesis(make_bundle):
    d = analyze_bundle(make_bundle({"app/out.log": "step 10 loss 2.1\n"}, exit_code="3:0"))
    assert (d["sub_domain"], d["evidence_status"], d["outcome"]) == ("application", "hypothesis",
                                                                     "application")
    assert "exit code 3" in d["verdict"] and "infrastructure" in d["verdict"]


def test_node_failure_named_in_job_output_places_the_root(make_bundle):
    for line in ("srun: error: Node failure on gpu-02\n", "salloc: error: Node failure on gpu-02\n"):
        d = analyze_bundle(make_bundle({"app/out.log": line}, state="NODE_FAIL", exit_code="0:0"))
        assert (d["sub_domain"], d["affected_nodes"]) == ("host", ["gpu-02"]), line


def test_older_slurmstepd_cancel_wording_names_its_node(make_bundle):
    out = "slurmstepd: *** JOB 4242 CANCELLED AT 2026-11-20T10:59:59 DUE TO TIME LIMIT on gpu-02 ***\n"
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    cancel = next(s for s in d["symptoms"] if s["rule"] == "slurmstepd.cancelled")
    assert cancel["node"] == "gpu-02" and d["sub_domain"] == "time_limit"


def test_warning_signal_requeue_is_the_time_limit_unless_the_wrapper_says_otherwise(make_bundle):
    usr = ("submitit WARNING (2026-11-20 10:58:00,001) - Caught signal SIGUSR2 on gpu-01: this job "
           "is preempted.\nslurmstepd: error: *** JOB 4242 ON gpu-01 CANCELLED AT 2026-11-20T10:58:01 "
           "DUE TO JOB REQUEUE ***\n")
    d = analyze_bundle(make_bundle({"app/log.err": usr}, state="REQUEUED", exit_code="0:0"))
    assert d["sub_domain"] == "time_limit"
    for lightning in ("Handling auto-requeue signal: 10\nrequeing job 4242...\n",
                      "[2026-11-20 10:58:00,001][lightning][INFO] - handling SIGUSR1\nrequeing job 4242...\n"):
        d = analyze_bundle(make_bundle({"app/log.err": lightning}, state="REQUEUED", exit_code="0:0"))
        assert d["sub_domain"] == "time_limit", lightning
    early = usr.replace("this job is preempted.\n", "this job is preempted.\nsubmitit INFO - Job has "
                        "not timed out. Ran 61 minutes out of requested 120 minutes.\n")
    d = analyze_bundle(make_bundle({"app/log.err": early}, state="REQUEUED", exit_code="0:0"))
    assert d["sub_domain"] == "preemption"


def test_nic_module_fault_is_the_network_root_and_nccl_errors_its_symptoms(make_bundle):
    nic = _syslog("gpu-02", "10:29:58", "mlx5_core 0000:5e:00.0: Port module event[error]: module 0, "
                  "Cable error, High Temperature")
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": nic, "app/out.log": NCCL * 3}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("network", ["gpu-02"])
    assert all(s["role"] == "interesting" for s in d["symptoms"] if s["kind"] == "nccl_error")


def test_collective_desync_report_is_the_application(make_bundle):
    out = ("[rank0]:[E1120 10:40:00.0 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective "
           "operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
           "Timeout(ms)=600000) ran for 600011 milliseconds before timing out.\n"
           "[rank0]:[E1120 10:40:00.1 ProcessGroupNCCL.cpp:1000] - To our best knowledge, the "
           "lagging/dead/mismatched ranks that caused the desync are:\n"
           "[rank0]:   - [1] finished collective #2, but didn't join collective #3 (count from 1)\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert d["sub_domain"] == "application"
    assert d["symptoms"][d["root_cause"]["event"]]["kind"] == "collective_desync"


def test_two_strong_independent_faults_on_different_nodes_are_ambiguous(make_bundle):
    d = analyze_bundle(make_bundle({
        "nodes/gpu-01/syslog": XID79.replace("gpu-02", "gpu-01"),
        "nodes/gpu-02/syslog": _syslog("gpu-02", "10:34:00", "mlx5_core 0000:5e:00.0: Port module "
                                       "event[error]: module 0, Cable error, Power Budget Exceeded")}))
    assert d["sub_domain"] == "ambiguous"
    assert sorted((c["sub_domain"], c["node"]) for c in d["candidates"]) == [("gpu", "gpu-01"),
                                                                              ("network", "gpu-02")]


def test_hung_task_inside_nfs_code_is_storage_in_a_drivers_code_the_device(make_bundle):
    head = [_syslog("gpu-02", "10:30:00", t) for t in (
        "INFO: task python:4242 blocked for more than 120 seconds.",
        '"echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.',
        "Call Trace:", " __schedule+0x2c4/0x700")]
    nfs = [*head, _syslog("gpu-02", "10:30:00", " nfs_wait_on_request+0x2b/0x40 [nfs]")]
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": "".join(nfs)}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("storage", ["gpu-02"])
    # waiting on block or page I/O: the storage under the task stalled, which one unsaid
    io_wait = [*head, _syslog("gpu-02", "10:30:00", " ? bit_wait+0x50/0x50"),
               _syslog("gpu-02", "10:30:00", " io_schedule+0x16/0x40")]
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": "".join(io_wait)}))
    assert (d["sub_domain"], d["evidence_status"], d["root_cause"]["nodes"]) == \
        ("storage", "hypothesis", ["gpu-02"])
    driver = [*head, _syslog("gpu-02", "10:30:00", " mutex_lock+0x1d/0x30"),
              _syslog("gpu-02", "10:30:00", " os_acquire_mutex+0x2c/0x40 [nvidia]")]
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": "".join(driver)}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("gpu", "GPU driver hang")
    # in no file system's or driver's code: the host
    plain = [*head, _syslog("gpu-02", "10:30:00", " mutex_lock+0x1d/0x30")]
    assert analyze_bundle(make_bundle({"nodes/gpu-02/syslog": "".join(plain)}))["sub_domain"] == "host"
    # the same frame outside a hung-task report is nothing
    alone = _syslog("gpu-02", "10:30:00", " io_schedule+0x16/0x40")
    assert analyze_bundle(make_bundle({"nodes/gpu-02/syslog": alone}))["sub_domain"] != "storage"


def test_enospc_behind_collector_prefixes_is_storage(make_bundle):
    out = ("2026-11-20 10:40:01.977 [177/train/578 (pid 28936)] [09c561ee] OSError: [Errno 28] No "
           "space left on device\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-01"))
    assert d["sub_domain"] == "storage"


def test_verdicts_read_as_sentences(make_bundle):
    cancelled = analyze_bundle(make_bundle({}, state="CANCELLED", exit_code="0:15", reason="by 1057"))
    assert "by by" not in cancelled["verdict"] and "uid 1057" in cancelled["verdict"]
    timeout = analyze_bundle(make_bundle({}, state="TIMEOUT", exit_code="0:0"))
    assert "TIMEOUT: TIMEOUT" not in timeout["verdict"]
    done = analyze_bundle(make_bundle({}, state="COMPLETED", exit_code="0:0"))
    assert "completed successfully" in done["verdict"]
    for d in (cancelled, timeout, done):
        assert "?" not in d["verdict"] and ".." not in d["verdict"]


def test_an_unexplained_failure_names_the_trouble_its_nodes_logged_meanwhile(make_bundle):
    ce = "".join(_syslog("gpu-02", f"10:30:0{i}", "EDAC MC0: 1 CE error on CPU#0Channel#2_DIMM#0 (channel:2 slot:0 "
                         "page:0x0 offset:0x0 grain:8 syndrome:0x0)") for i in range(3))
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": ce}))
    assert d["sub_domain"] == "unknown"
    assert "(3 times): Corrected host memory" in d["verdict"] and "gpu-02" in d["verdict"]
    before = _syslog("gpu-02", "09:30:00", "EDAC MC0: 1 CE error on CPU#0Channel#2_DIMM#0 (channel:2 slot:0)")
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": before}))
    assert "Corrected host memory" not in d["verdict"]  # logged before the job: not while it ran


def test_a_sigkill_exit_without_evidence_points_at_host_memory(make_bundle):
    d = analyze_bundle(make_bundle({"app/out.log": "epoch 3\n"}, nodes="cpu-01", exit_code="137:0"))
    assert (d["sub_domain"], d["evidence_status"]) == ("host_oom", "hypothesis")
    assert d["root_cause"]["nodes"] == ["cpu-01"] and "SIGKILL" in d["verdict"]
    invoked = _syslog("gpu-01", "10:30:00", "python3 invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0")
    d = analyze_bundle(make_bundle({"nodes/gpu-01/syslog": invoked}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("host_oom", ["gpu-01"])


@pytest.mark.parametrize("exit_code", ["0:7", "135:0"])
def test_a_bus_error_exit_without_evidence_points_at_the_nodes_shared_memory(make_bundle, exit_code):
    """On x86 a SIGBUS is a mapped page with nothing behind it (/dev/shm, a truncated file), not arithmetic."""
    d = analyze_bundle(make_bundle({"app/out.log": "epoch 3\n"}, nodes="cpu-01", exit_code=exit_code))
    assert (d["sub_domain"], d["evidence_status"]) == ("host", "hypothesis")
    assert d["root_cause"]["nodes"] == ["cpu-01"] and "SIGBUS" in d["verdict"] and "/dev/shm" in d["verdict"]
    # an exit code the job chose itself is still its own
    assert analyze_bundle(make_bundle({"app/out.log": "epoch 3\n"}, exit_code="7:0"))["sub_domain"] == "application"


def test_only_a_short_number_is_read_as_the_signal_that_ended_a_job():
    from slurm_attr.engine.pipeline import _exit_signal
    assert (_exit_signal("0", "9"), _exit_signal("137", "0"), _exit_signal("7", "0")) == (9, 9, None)
    # sacct's text is not checked as a bundle's is: a malformed field is no signal, not an error
    assert _exit_signal("9" * 5000, "0") is None and _exit_signal("0", "9" * 5000) is None
    assert _exit_signal("\uff11\uff13\uff17", "0") is None  # digits outside ASCII


def test_a_network_root_without_a_host_takes_the_peer_its_transfers_named(make_bundle):
    out = ("...-01:34050:34121 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error\n"
           "...-01:73076:73185 [4] transport/net_ib.cc:1238 NCCL WARN NET/IB : Got completion from peer "
           "gpu-02<37948> with error 12, opcode 2, len 1\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("network", ["gpu-02"])


# ---------------------------------------------------------------- message formats seen in excerpts
def test_nccl_ib_warning_without_its_host_prefix_still_points_at_the_network(make_bundle):
    # Launchers and quoted excerpts drop NCCL's `host:pid:tid [dev]` prefix.
    line = ("NCCL WARN NET/IB : Got completion from peer 10.1.2.3<4444> with error 12, opcode 1, "
            "len 0, vendor err 129 (Recv)\n")
    d = analyze_bundle(make_bundle({"app/out.log": line}))
    assert d["sub_domain"] == "network"


def test_ib_plugin_completion_error_without_nccl_warn_is_read(make_bundle):
    line = "NET/IBP:Got completion from peer 10.9.8.7<5555> with status=12 opcode=1 len=0 vendor err 129 (Send)\n"
    d = analyze_bundle(make_bundle({"app/out.log": line}))
    assert d["sub_domain"] == "network"
    assert any(s["rule"] == "nccl.ib_transport" for s in d["symptoms"])


def test_cuda_failure_in_nccl_nvls_transport_is_the_nodes_nvlink_fabric(make_bundle):
    line = "gpu-02:700:701 [5] transport/nvls.cc:180 NCCL WARN Cuda failure 1 'invalid argument'\n"
    d = analyze_bundle(make_bundle({"app/out.log": line}))
    assert d["sub_domain"] == "nvlink" and d["root_cause"]["nodes"] == ["gpu-02"]


def test_gpu_memory_exhausted_in_nvls_setup_is_not_blamed_on_the_fabric(make_bundle):
    line = "gpu-02:700:701 [5] transport/nvls.cc:180 NCCL WARN Cuda failure 2 'out of memory'\n"
    d = analyze_bundle(make_bundle({"app/out.log": line}))
    assert d["sub_domain"] != "nvlink"


def test_prolog_failure_blames_the_node_it_names(make_bundle):
    out = ("srun: error: Prolog failure on node gpu-02\n"
           "srun: error: Job allocation 4242 has been revoked\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert d["sub_domain"] == "host" and d["root_cause"]["nodes"] == ["gpu-02"]


def test_bus_error_on_shared_memory_is_the_nodes_environment(make_bundle):
    out = ("RuntimeError: DataLoader worker (pid 4711) is killed by signal: Bus error. It is possible "
           "that dataloader's workers are out of shared memory.\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-01"))
    assert d["sub_domain"] == "host" and d["evidence_status"] == "hypothesis"


def test_torchrun_local_rank_tag_does_not_place_the_node(make_bundle):
    # `[default5]:` is the worker's local rank; the global rank 13 is on the fourth 4-GPU node.
    line = ("[default5]:[rank13]:[E1120 10:30:00.000 ProcessGroupNCCL.cpp:1515] [PG 0 Rank 13] Process "
            "group watchdog thread terminated with exception: CUDA error: uncorrectable ECC error "
            "encountered\n")
    d = analyze_bundle(make_bundle({"app/out.log": line}, nodes="gpu-[01-04]", gpus_per_node=4))
    assert d["sub_domain"] == "gpu_memory" and d["root_cause"]["nodes"] == ["gpu-04"]


def test_a_task_killed_by_a_bus_error_points_at_the_nodes_shared_memory(make_bundle):
    out = "srun: error: gpu-02: task 5: Bus error\n"
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-[01-02]"))
    assert d["sub_domain"] == "host" and d["evidence_status"] == "hypothesis"
    assert d["root_cause"]["nodes"] == ["gpu-02"] and "/dev/shm" in d["root_cause"]["explanation"]


def test_cuda_error_text_of_glog_checks_is_classified_like_the_runtimes(make_bundle):
    # C++ frameworks abort on a glog CHECK that carries the CUDA runtime's own error text.
    for line, want in (
            ("F1120 10:30:54.043815 30811 hl_cuda_device.cc:565] Check failed: cudaSuccess == cudaStat "
             "(0 vs. 39) Cuda Error: uncorrectable ECC error encountered\n", "gpu_memory"),
            ("F1120 10:30:00.000000 4711 syncedmem.cpp:56] Check failed: error == cudaSuccess (2 vs. 0)  "
             "out of memory\n", "gpu_oom")):
        d = analyze_bundle(make_bundle({"app/out.log": line}, nodes="gpu-01", exit_code="0:6"))
        assert d["sub_domain"] == want, line


def test_device_oom_in_other_frameworks_spellings_is_gpu_oom(make_bundle):
    for line in ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying "
                 "to allocate 6567780864 bytes.\n",
                 "E1120 10:23:55.103160 3413767 gpu_cudamallocasync_allocator.cc:361] gpu_async_1 "
                 "cuMemAllocAsync failed to allocate 1225195446464 bytes: RESOURCE_EXHAUSTED: : "
                 "CUDA_ERROR_OUT_OF_MEMORY: out of memory\n",
                 "ResourceExhaustedError: OOM when allocating tensor with shape[256,112,112,64] and type "
                 "float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n"):
        d = analyze_bundle(make_bundle({"app/out.log": line}, nodes="gpu-01"))
        assert d["sub_domain"] == "gpu_oom", line
    cpu = ("ResourceExhaustedError: OOM when allocating tensor with shape[100,4096,32] and type float on "
           "/job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu\n")
    d = analyze_bundle(make_bundle({"app/out.log": cpu}, nodes="gpu-01"))
    assert d["sub_domain"] != "gpu_oom"


def test_fatal_aer_on_the_gpus_own_link_is_the_gpu_and_the_port_lines_its_companions(make_bundle):
    dmesg = ("[  +0.000844] nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)\n"
             "[  +0.000004] pcieport 0000:00:03.0: PCIe Bus Error: severity=Uncorrected (Fatal), "
             "type=Transaction Layer, (Requester ID)\n"
             "[  +0.000894] pcieport 0000:00:03.0:    [14] CmpltTO                (First)\n")
    d = analyze_bundle(make_bundle({"nodes/gpu-02/dmesg": dmesg}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("gpu", ["gpu-02"])
    port = next(s for s in d["symptoms"] if s["kind"] == "pcie_error")
    assert port["role"] == "interesting"
    # A fatal error on a port with no GPU named below it stays the host's PCIe path.
    d = analyze_bundle(make_bundle({"nodes/gpu-02/dmesg": dmesg.split("\n", 1)[1]}))
    assert d["sub_domain"] == "host"


def test_a_launchers_host_prefix_places_the_line_on_that_host(make_bundle):
    line = ("[gpu-02:2]:torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB "
            "(GPU 2; 79.35 GiB total capacity)\n")
    d = analyze_bundle(make_bundle({"app/out.log": line}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("gpu_oom", ["gpu-02"])


def test_terminal_colours_do_not_hide_a_line_or_its_host(make_bundle):
    line = "\x1b[31mgpu-02:1234:1290 [3] NCCL WARN NET/IB : Got async event : port error\x1b[0m\n"
    d = analyze_bundle(make_bundle({"app/out.log": line}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("network", ["gpu-02"])
    # the evidence shows the text a terminal would, not escapes turned into replacement marks
    shown = json.dumps(d, ensure_ascii=False)
    assert "gpu-02:1234:1290 [3] NCCL WARN" in shown and "\ufffd[31m" not in shown


@pytest.mark.parametrize("prefix", ["  ", "\t", "(RayTrainWorker pid=48213, ip=10.0.3.7) ", "(pid=48213) ",
                                    "(VllmWorkerProcess pid=48213) ", "trainer-1  | "])
def test_an_indented_or_process_tagged_traceback_is_still_read(make_bundle, prefix):
    # Nextflow indents a task's stderr; Ray, vLLM and Docker Compose tag every line of a worker's
    out = "".join(prefix + line + "\n" for line in (
        "Traceback (most recent call last):", '  File "train.py", line 12, in <module>',
        "pycuda._driver.MemoryError: cuMemAlloc failed: out of memory"))
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert d["sub_domain"] == "gpu_oom"


def test_terminal_colours_do_not_hide_the_lines_a_decoder_reads_above_a_hit(make_bundle):
    # Open MPI names the node two lines above the line that matches; a coloured log must keep it.
    out = ("mpirun was unable to launch the specified application as it could not access\n"
           "or execute an executable:\n\n\x1b[1mExecutable: /scratch/a.out\x1b[0m\n"
           "\x1b[1mNode: gpu-02\x1b[0m\n\nwhile attempting to start process rank 12.\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("storage", ["gpu-02"])



def test_node_side_job_setup_failures_are_the_nodes(make_bundle):
    for out in ("slurmstepd: error: container_p_join: open failed /scratch/4242/.active: No such file or "
                "directory\nslurmstepd: error: container_g_join failed: 4242\n",
                "slurmstepd: error: pyxis:     mkdir: cannot create directory '/run/enroot': Permission "
                "denied\nslurmstepd: error: spank: required plugin spank_pyxis.so: task_init_privileged() "
                "failed with rc=-1\nsrun: error: gpu-02: task 0: Exited with exit code 1\n",
                "enroot-aufs2ovlfs: failed to set capabilities: Operation not permitted\n"
                "[ERROR] No such file or directory: /shared/squash/image.sqsh\n"):
        d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-02"))
        assert d["sub_domain"] == "host" and d["evidence_status"] != "hypothesis", out
    # The image a job names is the job's: a failed import without a node-side error stays with it.
    out = ("slurmstepd: error: pyxis: failed to import docker image\n"
           "srun: error: gpu-02: task 0: Exited with exit code 1\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-02"))
    assert d["sub_domain"] == "application"


def test_an_mpi_rank_killed_by_sigkill_points_at_host_memory(make_bundle):
    for out in ("=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 4711 RUNNING AT gpu-02\n"
                "=   EXIT CODE: 9\n",
                "mpirun noticed that process rank 3 with PID 4711 on node gpu-02 exited on signal 9 "
                "(Killed).\n"):
        d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-02"))
        assert (d["sub_domain"], d["evidence_status"]) == ("host_oom", "hypothesis"), out


def test_mvapich_names_the_signal_and_the_host_of_a_rank_it_lost(make_bundle):
    # mpispawn's child handler: `[host:mpispawn_N][child_handler] MPI process (rank: R, pid: P)
    # terminated with signal S -> abort job`, read as every other launcher's report of that signal
    spawn = "[gpu-02.cluster.edu:mpispawn_1][child_handler] MPI process (rank: 9, pid: 39547) terminated with signal {}"
    expected = {9: "host_oom", 11: "application", 7: "host"}
    for signal, sub_domain in expected.items():
        out = spawn.format(signal) + " -> abort job\n"
        d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-[01-02]"))
        assert (d["sub_domain"], d["root_cause"]["nodes"]) == (sub_domain, ["gpu-02"]), out
    # a rank that exited with a status, not a signal, is the job's own exit
    out = "[gpu-02:mpispawn_1][child_handler] MPI process (rank: 9, pid: 39547) exited with status 9\n"
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-[01-02]"))
    assert d["sub_domain"] != "host_oom"


def test_a_node_that_cannot_set_up_the_job_is_infrastructure_not_broken_hardware(make_bundle):
    out = "srun: error: Prolog failure on node gpu-02\n"
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert (d["sub_domain"], d["outcome"], d["root_cause"]["nodes"]) == ("host", "infrastructure", ["gpu-02"])
    assert "slurmd's log on gpu-02" in d["root_cause"]["action"]  # actions are templates too
    assert d["candidates"] == [] or all(c["outcome"] == "infrastructure" for c in d["candidates"]
                                        if c["event"] == d["root_cause"]["event"])
    reboot = _syslog("gpu-02", "10:30:00", "kernel: [    0.000000] Linux version 6.1.0-18-amd64")
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": reboot}))
    assert (d["sub_domain"], d["outcome"]) == ("host", "hardware")  # the sub_domain's usual outcome


def test_a_driver_or_runtime_error_name_before_its_text_is_read(make_bundle):
    # NVHPC/OpenACC closes a parenthesis after the driver API's name; Kokkos and CMSSW print the
    # runtime API's name (`cudaErrorXxx`) before the text. Both are the CUDA error, not a bare exit.
    for line in ("Accelerator Fatal Error: call to cuMemAlloc returned error 214 "
                 "(CUDA_ERROR_ECC_UNCORRECTABLE): uncorrectable ECC error encountered\n",
                 "cudaEventSynchronize(ev) error( cudaErrorECCUncorrectable): uncorrectable ECC "
                 "error encountered /src/Cuda/Instance.cpp:12\n",
                 "what():  cudaErrorECCUncorrectable: uncorrectable ECC error encountered\n"):
        d = analyze_bundle(make_bundle({"app/out.log": line}, nodes="gpu-01"))
        assert d["sub_domain"] == "gpu_memory", line
        assert d["root_cause"]["nodes"] == ["gpu-01"]


def test_a_gpu_held_by_another_process_is_the_nodes_state_not_its_hardware(make_bundle):
    for line in ("RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable\n",
                 "cudaSetDevice(id) error( cudaErrorDevicesUnavailable): CUDA-capable device(s) "
                 "is/are busy or unavailable /src/Cuda/Instance.cpp:544\n"):
        d = analyze_bundle(make_bundle({"app/out.log": line}, nodes="gpu-01"))
        assert (d["sub_domain"], d["outcome"]) == ("host", "infrastructure"), line


def test_a_node_named_by_its_ip_address_is_not_cut_at_a_dot(make_bundle):
    line = "mpirun noticed that process rank 5 with PID 77 on node 10.1.2.4 exited on signal 9 (Killed).\n"
    d = analyze_bundle(make_bundle({"app/out.log": line}, nodes="10.1.2.[3-4]"))
    assert "10.1.2.4" in d["root_cause"]["nodes"]


def test_a_ranks_host_named_on_another_line_places_its_error(make_bundle):
    out = ("7: cudaMalloc(p) error( cudaErrorECCUncorrectable): uncorrectable ECC error encountered x.cpp:3\n"
           "7: MPICH ERROR [Rank 7] [job id 4242.0] [Fri Nov 20 10:30:00 2026] [gpu-02] - Abort(1) "
           "(rank 7 in comm 0): application called MPI_Abort(comm=0x1, 1) - process 7\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-[01-04]"))
    assert d["sub_domain"] == "gpu_memory" and d["root_cause"]["nodes"] == ["gpu-02"]
    # an older banner with an `[unknown]` field before the host, and a negative abort code
    older = out.replace("[gpu-02] - Abort(1)", "[unknown] [gpu-02] - Abort(-1)")
    d = analyze_bundle(make_bundle({"app/out.log": older}, nodes="gpu-[01-04]"))
    assert d["sub_domain"] == "gpu_memory" and d["root_cause"]["nodes"] == ["gpu-02"]


def test_srun_task_lines_name_the_host_of_labelled_ranks(make_bundle):
    # `srun --label` prefixes a line with its task id; srun's own `H: task N:` line says where task N ran,
    # which beats a guess from a block distribution of ranks.
    out = ("0:  step starting\n"
           "5: slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4242.1. Some of your processes "
           "may have been killed by the cgroup out-of-memory handler.\n"
           "srun: error: gpu-02: task 5: Out Of Memory\n"
           "0: slurmstepd: error: *** STEP 4242.1 ON gpu-01 CANCELLED AT 2026-11-20T10:30:00 ***\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, state="OUT_OF_MEMORY", exit_code="0:125"))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("host_oom", ["gpu-02"])
    # In a step of ten tasks or more srun pads the label to the widest id (` 9: `).
    ecc = " 9: RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
    d = analyze_bundle(make_bundle({"app/out.log": ecc}, gpus_per_node=8))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("gpu_memory", ["gpu-02"])
    # A framework's global rank is not srun's task when srun started one launcher per node.
    out = ("[rank1]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
           "srun: error: gpu-02: task 1: Exited with exit code 1\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, gpus_per_node=8))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("gpu_oom", ["gpu-01"])


def test_a_step_launch_refused_by_the_nodes_prolog_is_the_node(make_bundle):
    out = ("srun: error: Task launch for StepId=4242.0 failed on node gpu-02: Job prolog failed\n"
           "srun: error: Application launch failed: Job prolog failed\n"
           "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert (d["sub_domain"], d["outcome"], d["root_cause"]["nodes"]) == ("host", "infrastructure", ["gpu-02"])


def test_a_gsp_timeout_after_a_fatal_nvlink_error_on_the_node_is_its_aftermath(make_bundle):
    nvlink = ("Nov 20 10:20:00 gpu-02 kernel: NVRM: Xid (PCI:0000:48:00): 74, pid=1, name=python, NVLink: "
              "fatal error detected on link 8(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)\n")
    gsp = ("Nov 20 10:23:00 gpu-02 kernel: NVRM: Xid (PCI:0000:0b:00): 119, pid=2, name=python, Timeout "
           "after 45s of waiting for RPC response from GPU3 GSP! Expected function 76 (GSP_RM_CONTROL).\n")
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": nvlink + gsp}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("nvlink", "XID 74")
    after = next(s for s in d["symptoms"] if s["code"] == "XID 119")
    assert after["demoted_by"] == "aftermath"
    # Alone, or first, the GSP timeout is the GPU's own fault.
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": gsp}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("gpu", "XID 119")
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": gsp.replace("10:23", "10:19") + nvlink}))
    assert all(s["demoted_by"] != "aftermath" for s in d["symptoms"])


def test_the_fabric_refusing_nvls_or_not_ready_is_the_nodes_nvlink_setup(make_bundle):
    for out in ("Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152:\n"
                "CUDA error 401 'the operation cannot be performed in the present state'.\n",
                "gpu-02: Test CUDA failure common.cu:941 'system not yet initialized'\n"):
        d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-02"))
        assert (d["sub_domain"], d["outcome"]) == ("nvlink", "infrastructure"), out


def test_nccls_cuda_failure_text_names_a_memory_fault_and_explains_the_oom_after_it(make_bundle):
    out = ("gpu-02:90512:91033 [4] include/alloc.h:114 NCCL WARN Cuda failure 'uncorrectable ECC error "
           "encountered'\n"
           "[rank12]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, gpus_per_node=8))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("gpu_memory", ["gpu-02"])
    oom = next(s for s in d["symptoms"] if s["kind"] == "cuda_oom")
    assert oom["demoted_by"] == "downstream_causes"


def test_a_cancel_after_a_fault_is_explained_by_the_fault(make_bundle):
    xid63 = ("Nov 20 10:40:00 gpu-02 kernel: NVRM: Xid (PCI:0000:10:1c): 63, pid=1850, Row Remapper: New row "
             "marked for remapping, reset gpu to activate\n")
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": xid63}, state="CANCELLED", exit_code="0:15"))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("gpu_memory", ["gpu-02"])
    cancel = next(s for s in d["symptoms"] if s["kind"] == "scheduler_state")
    assert cancel["demoted_by"] == "downstream_causes"
    d = analyze_bundle(make_bundle({}, state="CANCELLED", exit_code="0:15"))
    assert d["sub_domain"] == "cancelled"


def test_pytorch_taking_the_process_down_over_nccl_is_not_the_jobs_own_failure(make_bundle):
    out = ("[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the "
           "asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.\n"
           "[E ProcessGroupNCCL.cpp:460] To avoid data inconsistency, we are taking the entire process down.\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert d["sub_domain"] != "application"  # the exit code says nothing once a collective failed
    event = next(s for s in d["symptoms"] if s["kind"] == "collective_timeout")
    assert "?" not in event["summary"]


def test_mpi_refusing_a_calls_arguments_is_the_jobs_code(make_bundle):
    for out in ("123: [gpu-02:425392] *** An error occurred in MPI_Gather\n"
                "123: [gpu-02:425392] *** MPI_ERR_TRUNCATE: message truncated\n"
                "  0: slurmstepd: error: *** STEP 4242.0 ON gpu-01 CANCELLED AT 2026-11-20T10:30:00 ***\n",
                "Fatal error in PMPI_Gather: Message truncated, error stack:\n"):
        d = analyze_bundle(make_bundle({"app/out.log": out}))
        assert d["sub_domain"] == "application" and d["evidence_status"] != "hypothesis", out
    # an MPI error that is not about the call's arguments says nothing of the code
    d = analyze_bundle(make_bundle({"app/out.log": "*** MPI_ERR_OTHER: known error not in list\n"}))
    assert d["root_cause"] is None or d["root_cause"]["code"] != "MPI usage error"


def test_transport_and_runtime_io_failures_point_at_the_fabric_and_the_file_system(make_bundle):
    ucx = ("208: [gpu-02:545909:0:545909] ud_ep.c:278 Fatal: UD endpoint 0xaff0a40 to <no debug data>: "
           "unhandled timeout error\n")
    fortran = "forrtl: severe (38): error during write, unit 50, file /scratch/run/PET473.ESMF_LogFile\n"
    wrapped = "[gpu-02:66372:0:66372]       ud_ep.c:280  Fatal: UD endpoint 0x203e6d10 to <no de\nbug data>: unhandled timeout error\n"
    qe = '     Error in routine davcio (10):\n     error writing file "/scratch/u/out/pw.wfc18"\n'
    gromacs = "File input/output error:\nCannot write trajectory frame; maybe you are out of disk space?\n"
    for out, want in ((ucx, "network"), (wrapped, "network"), (fortran, "storage"), (qe, "storage"),
                      (gromacs, "storage")):
        d = analyze_bundle(make_bundle({"app/out.log": out}))
        assert (d["sub_domain"], d["evidence_status"]) == (want, "hypothesis"), out
    # a write failure that names its errno is that errno's, not the bare lead
    d = analyze_bundle(make_bundle({"app/out.log": "cp: error writing '/scratch/a.nc': No space left on device\n"}))
    assert d["root_cause"]["code"] == "ENOSPC"


def test_fabric_transport_errors_of_mpi_libraries_are_the_network_not_a_file(make_bundle):
    ofi = ("MPIDI_OFI_handle_cq_error(1062): OFI poll failed (ofi_events.c:1064:MPIDI_OFI_handle_cq_error:"
           "Input/output error - UNDELIVERABLE)\n")
    psmpi = "359: <PSP:r0000359:ib:ibv_poll_cq(): Infiniband returned the wrong Opcode 5408>\n"
    openib = ("[[10802,1],32][btl_openib_component.c:2893:handle_wc] from gpu-02 to: gpu-01 error polling LP CQ "
              "with status RECEIVER NOT READY RETRY EXCEEDED ERROR status number 13 for wr_id 377\n")
    ucx = "rc_verbs_iface.c:67   send completion with error: local protection error\n"
    for out in (ofi, psmpi, openib, ucx):
        d = analyze_bundle(make_bundle({"app/out.log": out}))
        assert (d["sub_domain"], d["evidence_status"]) == ("network", "hypothesis"), out
    # UCX and libfabric quoting their own status text: an I/O error of the transport, not of a file
    for line in ("[gpu-01:1748254] pml_ucx.c:431  Error: ucp_ep_create(proc=546) failed: Input/output error\n",
                 "libfabric:1234:1699999999::efa:cq:efa_rdm_cq_progress():123<warn> Unexpected error when polling "
                 "CQ: -5 (Input/output error)\n"):
        d = analyze_bundle(make_bundle({"app/out.log": line}))
        assert d["sub_domain"] != "storage", line
    # a message longer than the receive buffer is the program's, whatever the transport
    d = analyze_bundle(make_bundle({"app/out.log": (
        "MPIDI_OFI_handle_cq_error(1059): OFI poll failed "
        "(ofi_events.c:1061:MPIDI_OFI_handle_cq_error:Message too long - OK)\n")}))
    assert d["sub_domain"] not in ("network", "storage")


def test_a_non_fatal_hardware_error_during_the_run_is_the_lead_when_nothing_else_explains(make_bundle):
    sxid = ("2026-11-20T10:34:54.859532+00:00 gpu-01 kernel: nvidia-nvswitch1: SXid (PCI:0000:84:00.0): "
            "12028, Non-fatal, Link 32 egress non-posted PRIV error (First)\n")
    d = analyze_bundle(make_bundle({"nodes/gpu-01/kern.log": sxid}))
    assert (d["sub_domain"], d["evidence_status"]) == ("nvlink", "hypothesis")
    assert d["root_cause"]["nodes"] == ["gpu-01"] and "lead" in d["verdict"]
    # the same error a day before the job is history, not a lead
    d = analyze_bundle(make_bundle({"nodes/gpu-01/kern.log": sxid.replace("11-20T10", "11-19T10")}))
    assert d["sub_domain"] != "nvlink"
    # and a cause in the job's own output wins over it
    d = analyze_bundle(make_bundle({"nodes/gpu-01/kern.log": sxid,
                                    "app/out.log": "torch.OutOfMemoryError: CUDA out of memory. "
                                                   "Tried to allocate 2.00 GiB\n"}))
    assert d["sub_domain"] == "gpu_oom"


def test_any_failed_infiniband_completion_in_nccl_points_at_the_fabric_path(make_bundle):
    line = ("gpu-01:19989:20082 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer "
            "fe80::966d:ae03:8b:df78%ib0<53249> with error 4, opcode 32564, len 32564, vendor err 81 (Send)\n")
    d = analyze_bundle(make_bundle({"app/out.log": line}))
    assert (d["sub_domain"], d["evidence_status"]) == ("network", "hypothesis")
    assert "error 4" in d["verdict"]


def test_a_gpu_the_driver_says_needs_a_reset_is_the_gpu(make_bundle):
    dmesg = ("[Fri Nov 20 10:52:01 2026] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required "
             "[NV_ERR_RESET_REQUIRED] (0x00000062) returned from status @ kernel_channel.c:2874\n")
    d = analyze_bundle(make_bundle({"nodes/gpu-02/dmesg": dmesg,
                                    "app/out.log": "RuntimeError: CUDA error: CUDA-capable device(s) is/are "
                                                   "busy or unavailable\n"}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("gpu", ["gpu-02"])


def test_hosts_that_chose_different_nccl_transports_are_the_cause_of_a_silent_hang(make_bundle):
    internal = "gpu-02:18226:18274 [5] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.\n"
    plugin = "gpu-01:589474:589541 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so\n"
    d = analyze_bundle(make_bundle({"app/out.log": plugin + internal}, state="CANCELLED", exit_code="0:15"))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("network", ["gpu-02"])
    assert "external on gpu-01" in d["verdict"]
    # three hosts, one on sockets while the others use InfiniBand: the odd one out
    nets = "".join(f"gpu-0{n}:1:1 [0] NCCL INFO Using network {'Socket' if n == 3 else 'IB'}\n" for n in (1, 2, 3))
    d = analyze_bundle(make_bundle({"app/out.log": nets}, nodes="gpu-[01-03]"))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("network", ["gpu-03"])


def test_hosts_that_agree_on_their_transport_leave_only_a_line_of_evidence_each(make_bundle):
    lines = "".join(f"gpu-0{n}:{r}:{r} [{r}] NCCL INFO Using network IB\n" for n in (1, 2) for r in range(8))
    d = analyze_bundle(make_bundle({"app/out.log": lines}))
    assert d["sub_domain"] != "network"
    assert sum(s["kind"] == "nccl_transport" for s in d["symptoms"]) == 1
    # a line without its host prefix names no host: it cannot disagree with anyone
    d = analyze_bundle(make_bundle({"app/out.log": "NCCL INFO Using network Socket\n"
                                                   "gpu-01:1:1 [0] NCCL INFO Using network IB\n"}))
    assert d["sub_domain"] != "network"


def test_cuda_contained_errors_kv_cache_shortage_and_failed_checkpoint_writes(make_bundle):
    contained = "CUDA_ERROR_CONTAINED: Invalid access of peer GPU memory over nvlink or a hardware error\n"
    sglang = ("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n"
              "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static\n")
    writer = ("Traceback (most recent call last):\n  File \"serialization.py\", line 965, in save\n"
              "RuntimeError: [enforce fail at inline_container.cc:857] . PytorchStreamWriter failed "
              "writing file data/322: file write failed\n")
    for out, want, status in ((contained, "nvlink", "supported"), (sglang, "gpu_oom", "supported"),
                              (writer, "storage", "hypothesis")):
        d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-01"))
        assert (d["sub_domain"], d["evidence_status"]) == (want, status), out


def test_amd_gpus_speak_their_own_words_for_the_same_faults(make_bundle):
    umc = ("Nov 20 10:30:00 gpu-02 kernel: amdgpu 0000:c1:00.0: amdgpu: 1 uncorrectable hardware errors "
           "detected in umc block\n")
    athub = ("Nov 20 10:30:00 gpu-02 kernel: amdgpu 0000:e3:00.0: amdgpu: uncorrectable hardware "
             "error(ERREVENT_ATHUB_INTERRUPT) detected!\n")
    ring = ("Nov 20 10:30:00 gpu-02 kernel: [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring comp_1.0.0 "
            "timeout, signaled seq=159760, emitted seq=159762\n")
    for log, want in ((umc, "gpu_memory"), (athub, "gpu"), (ring, "gpu")):
        d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": log}))
        assert (d["sub_domain"], d["root_cause"]["nodes"]) == (want, ["gpu-02"]), log
    fault = ("Memory access fault by GPU node-2 (Agent handle: 0x56468ab3bb50) on address 0x7fe55fb03000. "
             "Reason: Page not present or supervisor privilege.\n")
    hip_oom = "RuntimeError: HIP error: out of memory\n"
    for out, want in ((fault, "application"), (hip_oom, "gpu_oom")):
        d = analyze_bundle(make_bundle({"app/out.log": out}))
        assert d["sub_domain"] == want, out
    # the job's page fault is the aftermath of the memory failure the node logged
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": umc, "app/out.log": fault}))
    assert d["sub_domain"] == "gpu_memory"


def test_node_resources_nccl_and_rdma_need_are_the_nodes(make_bundle):
    shm = ("node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied\n"
           "RuntimeError: NCCL error in ProcessGroupNCCL.cpp:290, unhandled system error\n")
    d = analyze_bundle(make_bundle({"app/out.log": shm}, nodes="node08"))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("host", ["node08"])
    mkey = ("[Fri Nov 20 10:32:31 2026] mlx5_core 0000:01:00.0: mlx5_cmd_check:794:(pid 57074): CREATE_MKEY(0x200) "
            "op_mod(0x0) failed, status limits exceeded(0x8), syndrome (0x59c8a4)\n")
    d = analyze_bundle(make_bundle({"nodes/gpu-02/kern.log": mkey}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("network", ["gpu-02"])


def test_a_crash_inside_the_gpu_drivers_library_points_at_that_nodes_driver(make_bundle):
    line = ("Nov 20 10:53:55 gpu-02 kernel: python[3551]: segfault at 1378 ip 00007fff859dbeff sp 00007fff3b60ce60 "
            "error 4 in libcuda.so.418.67[7fff858c5000+dec000]\n")
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": line}))
    assert (d["sub_domain"], d["evidence_status"], d["root_cause"]["nodes"]) == ("gpu", "hypothesis", ["gpu-02"])
    # a crash in the program's own code names no driver
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": line.replace("libcuda.so.418.67", "libfoo.so")}))
    assert d["sub_domain"] != "gpu"


def test_a_go_programs_lower_case_errno_is_the_same_file_system_error(make_bundle):
    out = ("failed to register layer: ApplyLayer exit status 1 stdout:  stderr: write "
           "/opt/rocm/share/miopen/db/gfx906_64.kdb: no space left on device\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("storage", "ENOSPC")


def test_a_lost_ray_node_and_a_node_without_dns_are_infrastructure(make_bundle):
    ray = ("RuntimeError: Job 139393033556432 failed: Task failed because the node it was running on is dead "
           "or unavailable. Node IP: 10.202.0.99, node ID: 4d420fd80d81f4cac8c1d6ed793e\n")
    dns = "enroot import docker://nvcr.io/nvidia/pytorch:24.05-py3\ncurl: (6) Could not resolve host: nvcr.io\n"
    for out, want in ((ray, "host"), (dns, "network")):
        d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-01"))
        assert (d["sub_domain"], d["evidence_status"]) == (want, "hypothesis"), out


def test_a_task_launch_the_nodes_daemons_refused_is_the_node(make_bundle):
    out = "srun: error: Task launch for 36.0 failed on node gpu-02: Job credential expired\n"
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("host", ["gpu-02"])


def test_mpi_ranks_that_cannot_reach_each_other_over_tcp_point_at_the_network(make_bundle):
    out = ("WARNING: Open MPI failed to TCP connect to a peer MPI process.  This\nshould not happen.\n\n"
           "  Local host: gpu-01\n  Message:    connect() to 172.17.0.1:1024 failed\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert (d["sub_domain"], d["evidence_status"]) == ("network", "hypothesis")
    out = "srun: error: Task launch for StepId=34.0 failed on node gpu-02: Socket timed out on send/recv operation\n"
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("host", ["gpu-02"])


def test_newer_nccl_completion_status_and_async_queue_errors_point_at_the_fabric(make_bundle):
    out = ("gpu-02:94639:94647 [0] transport/net_ib.cc:100 NCCL WARN NET/IB : mlx5_0:1 Got async event : local "
           "access violation work queue error\n"
           "gpu-02:94639:94652 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer "
           "192.168.1.2<57888> with status=5 opcode=1 len=0 vendor err 249 (Recv)\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("network", ["gpu-02"])


def test_an_nccl_internal_check_failing_is_the_jobs_nccl_build_not_the_fabric(make_bundle):
    out = ("torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/torch/csrc/distributed/c10d/"
           "ProcessGroupNCCL.cpp:3376, internal error - please report this issue to the NCCL developers, "
           "NCCL version 2.25.1\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert (d["sub_domain"], d["evidence_status"]) == ("application", "hypothesis")
    # a fabric error beside it is the stronger lead
    ib = "gpu-01:1:1 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with error 12, opcode 0, len 0, vendor err 129\n"
    assert analyze_bundle(make_bundle({"app/out.log": ib + out}))["sub_domain"] == "network"


def test_a_rank_without_a_host_is_placed_by_the_steps_task_layout(make_bundle):
    ecc = "[rank300]: RuntimeError: CUDA error: uncorrectable ECC error encountered\n"

    def node_of(**step) -> list[str]:
        steps = [{"id": "batch", "nodes": "cn01", "ntasks": 1},
                 {"id": "0", "nodes": "cn[01-04]", **step}]
        d = analyze_bundle(make_bundle({"app/out.log": ecc}, nodes="cn[01-04]", steps=steps))
        return d["root_cause"]["nodes"]

    assert node_of(ntasks=512) == ["cn03"]  # 128 MPI ranks a node, in blocks: not 8 a GPU
    assert node_of(ntasks=512, distribution="cyclic") == ["cn01"]  # 300 % 4
    # one task a node is a launcher starting its own ranks: one rank a GPU is the guess
    d = analyze_bundle(make_bundle({"app/out.log": "[rank9]: RuntimeError: CUDA error: uncorrectable ECC "
                                                   "error encountered\n"}, nodes="cn[01-04]",
                                   steps=[{"id": "0", "nodes": "cn[01-04]", "ntasks": 4}]))
    assert d["root_cause"]["nodes"] == ["cn02"]


def test_slurms_own_memory_limit_kill_is_host_oom_on_the_stepd_host(make_bundle):
    # Accounting enforcement (OverMemoryKill, older Slurm): no cgroup OOM line, no OUT_OF_MEMORY state;
    # srun then reports the task as Killed and slurmstepd cancels the step.
    out = ("slurmstepd-gpu-02: error: Step 4242.0 exceeded memory limit (52917772 > 20971520), being killed\n"
           "srun: Exceeded job memory limit\n"
           "slurmstepd-gpu-02: error: *** STEP 4242.0 ON gpu-02 CANCELLED AT 2026-11-20T10:30:00 ***\n"
           "srun: error: gpu-02: task 0: Killed\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, exit_code="0:9"))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("host_oom", ["gpu-02"])
    assert "52917772 KiB" in d["verdict"]


@pytest.mark.parametrize("line", [
    "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.",
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
    "latest NVIDIA driver is installed and running.",
])
def test_a_node_whose_nvidia_driver_is_not_loaded_is_the_nodes_driver_install(make_bundle, line):
    d = analyze_bundle(make_bundle({"app/out.log": line + "\n"}, nodes="gpu-01"))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == (
        "host", "NVIDIA driver unreachable", ["gpu-01"])


def test_a_gpu_lost_from_the_bus_outranks_the_driver_it_left_unanswered(make_bundle):
    kern = ("2026-11-20T10:10:00+00:00 gpu-01 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, "
            "GPU has fallen off the bus.\n")
    d = analyze_bundle(make_bundle({"app/out.log": "nvidia-container-cli: initialization error: nvml error: driver "
                                                   "not loaded: unknown.\n", "nodes/gpu-01/kern.log": kern},
                                   nodes="gpu-01"))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("gpu", ["gpu-01"])


def test_a_driver_upgraded_without_a_reboot_is_the_nodes_software(make_bundle):
    d = analyze_bundle(make_bundle({"app/out.log": "Failed to initialize NVML: Driver/library version mismatch\n"},
                                   nodes="gpu-01"))
    assert (d["sub_domain"], d["outcome"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == (
        "host", "infrastructure", "NVIDIA driver version mismatch", ["gpu-01"])
    # the kernel's side, as rsyslog writes the driver's three-line message on one line
    kernel = ("Nov 20 10:30:00 gpu-02 kernel: NVRM: API mismatch: the client has the version 535.54.03, but#012NVRM: "
              "this kernel module has the version 530.30.02.  Please#012NVRM: make sure that this kernel module "
              "and all NVIDIA driver#012NVRM: components have the same version.\n")
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": kernel}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("host", ["gpu-02"])
    assert "libraries (535.54.03) and its loaded kernel module (530.30.02) differ on gpu-02" in d["verdict"]


def test_cuda_not_ready_in_pytorchs_device_count_warning_is_the_fabric_manager(make_bundle):
    out = ("/opt/conda/lib/python3.9/site-packages/torch/cuda/__init__.py:129: UserWarning: CUDA initialization: "
           "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
           "NumCudaDevices() that might have already set an error? Error 802: system not yet initialized "
           "(Triggered internally at /pytorch/c10/cuda/CUDAFunctions.cpp:109.)\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-01"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("nvlink", "CUDA system not ready")


@pytest.mark.parametrize("line", [
    "gpu-02:1234:1300 [3] nccl_net_ofi_rdma.cpp:1012 NCCL WARN NET/OFI Request 0x7f3c2c0a1b40 completed with "
    "error. RC: 5. Error: 4354 (Unresponsive receiver (reachable by EFA device but handshake failed)). "
    "Completed length: 0, Request: { dev: 3, size: 0, state: CREATED, type: SEND }",
    "[rank9]: NET/OFI Unable to insert remote address into address vector for device 1. RC: 0",
])
def test_a_failed_libfabric_transfer_is_the_fabric_not_nccls_internal_check(make_bundle, line):
    out = ("[rank9]: ncclInternalError: Internal check failed.\n[rank9]: Last error:\n" + line + "\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-[01-02]"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("network", "NCCL OFI transfer error")


def test_slurm_failing_to_resolve_its_controller_is_the_nodes_resolver(make_bundle):
    out = ('srun: error: Unable to resolve "mgmt": Unknown host\n'
           "srun: error: Unable to establish control machine address\n"
           "srun: error: Unable to confirm allocation for job 90: No error\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="cn01"))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == ("host", "DNS failure", ["cn01"])


def test_an_unreadable_spank_configuration_is_the_node_not_the_job(make_bundle):
    out = ("srun: error: spank: Failed to open /opt/slurm/etc/plugstack.conf.d/sed6Yj8Ga: Permission denied\n"
           "srun: error: Plug-in initialization failed\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="cn01"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("host", "SPANK config unreadable")


def test_open_mpis_libfabric_transport_aborting_points_at_the_fabric(make_bundle):
    out = ("[cn01:08156] mtl_ofi_endpoint.h:47: *** The Open MPI OFI MTL is aborting the MPI job (via exit(3)).\n"
           "mpirun detected that one or more processes exited with non-zero status, thus causing\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="cn[01-02]"))
    assert (d["sub_domain"], d["evidence_status"]) == ("network", "hypothesis")
    # the job's own error beside it is the cause, the abort its consequence
    bug = "Traceback (most recent call last):\n  File \"osu.py\", line 3, in <module>\nValueError: bad size\n"
    assert analyze_bundle(make_bundle({"app/out.log": bug + out}, nodes="cn[01-02]"))["sub_domain"] == "application"


def test_an_ib_port_flapping_under_nccl_is_the_fabric(make_bundle):
    out = ("gpu-02:311:405 [0] transport/net_ib.cc:199 NCCL WARN NET/IB : mlx5_3:1 Got async error event: port error\n"
           "gpu-02:311:405 [0] transport/net_ib.cc:199 NCCL WARN NET/IB : mlx5_3:1 Got async error event: port active\n"
           "RuntimeError: NCCL communicator was aborted on rank 3.\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-[01-02]"))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == (
        "network", "NCCL IB port error", ["gpu-02"])


def test_too_little_free_gpu_memory_for_a_serving_engine_is_gpu_oom(make_bundle):
    out = ("ValueError: Free memory on device cuda:0 (11.96/184.3 GiB) on startup is less than desired GPU memory "
           "utilization (0.3, 55.29 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n")
    assert analyze_bundle(make_bundle({"app/out.log": out}))["sub_domain"] == "gpu_oom"


def test_a_cuda_check_of_a_compiled_framework_names_the_ecc_fault(make_bundle):
    out = ("Check failed: (e == cudaSuccess || e == cudaErrorCudartUnloading) is false: CUDA: uncorrectable ECC "
           "error encountered\n")
    assert analyze_bundle(make_bundle({"app/out.log": out}))["sub_domain"] == "gpu_memory"


@pytest.mark.parametrize("line", [
    "(raylet) node_manager.cc:3007: 2 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers "
    "crashed due to other reasons at node (ID: abd406d4, IP: 10.0.167.26) over the last time period.",
    "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
    "Memory on the node (IP: 10.0.167.26, ID: abd406d4) where the task (actor ID: 5c3e, name=Actor.__init__, "
    "pid=8249, memory used=41.2GB) was running was 237.92GB / 250.00GB (0.951678), which exceeds the memory usage "
    "threshold of 0.95.",
    # a log cut to its tail keeps only the pointer at the end of the kill's report
    "(ActorModelRayActor pid=8249) Refer to the documentation on how to address the out of memory issue: "
    "https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html. Consider provisioning more memory "
    "on this node or reducing task parallelism by requesting more CPUs per task.",
])
def test_rays_memory_monitor_killing_workers_is_host_oom(make_bundle, line):
    d = analyze_bundle(make_bundle({"app/out.log": line + "\n"}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("host_oom", "Ray OOM kill")


def test_a_peer_on_dockers_default_bridge_is_unreachable_from_other_hosts(make_bundle):
    out = ("[E socket.cpp:922] [c10d] The client socket has timed out after 1800s while trying to connect to "
           "(172.17.0.2, 44737).\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-[01-02]"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("network", "Peer on a container bridge")
    # the cluster's own addresses say nothing of the kind
    other = analyze_bundle(make_bundle({"app/out.log": out.replace("172.17.0.2", "10.0.1.75")}, nodes="gpu-[01-02]"))
    assert (other["root_cause"] or {}).get("code") != "Peer on a container bridge"


@pytest.mark.parametrize("lines", [
    "slurmstepd: error: pyxis:     [ERROR] Command not found: nvidia-container-cli, see "
    "https://github.com/NVIDIA/libnvidia-container\n"
    "slurmstepd: error: pyxis:     [ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1\n",
    "slurmstepd: error: pyxis:     nvidia-container-cli: ldcache error: process /usr/sbin/ldconfig.real failed "
    "with error code: 1\n",
    # enroot's configuration where the site keeps it, and the hook unable to mount a driver file
    "slurmstepd: error: pyxis:     nvidia-container-cli: mount error: file creation failed: /raid/enroot-data/user-9011/"
    "pyxis_59.0/run/nvidia-persistenced/socket: no such device or address\n"
    "slurmstepd: error: pyxis:     [ERROR] /raid/enroot//hooks.d/98-nvidia.sh exited with return code 1\n",
])
def test_a_failing_enroot_hook_of_the_node_is_the_node(make_bundle, lines):
    out = lines + ("slurmstepd: error: pyxis: couldn't start container\n"
                   "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu01"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("host", "Container hook failed")


def test_enospc_from_a_cgroup_file_is_the_nodes_cgroup_setup_not_a_full_disk(make_bundle):
    out = ("slurmstepd: error: common_file_write_uints: write value '39981' to '/sys/fs/cgroup/cpuset/slurm/uid_2/"
           "job_6457/step_batch/cgroup.procs' failed: No space left on device\n"
           "slurmstepd: error: unable to add pids to '/sys/fs/cgroup/cpuset/slurm/uid_2/job_6457/step_batch'\n"
           "slurmstepd: error: job_manager: exiting abnormally: Slurmd could not execve job\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="cn01"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("host", "Job cgroup setup failed")
    assert not any(s["code"] == "ENOSPC" for s in d["symptoms"])


def test_node_health_check_failing_on_the_jobs_node_is_the_node(make_bundle):
    log = ("2026-11-20T10:15:00+00:00 cn01 nhc[4242]: ERROR:  nhc:  Health check failed:  Check "
           "check_fs_mount_rw(/scratch) returned 1\n")
    d = analyze_bundle(make_bundle({"nodes/cn01/syslog": log}, nodes="cn01"))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("host", ["cn01"])


def test_mpichs_ucx_netmod_failing_a_send_is_the_fabric_not_the_disk(make_bundle):
    out = ("MPIDI_UCX_send(95)...: returned failed request in UCX netmod(ucx_send.h 95 MPIDI_UCX_send "
           "Input/output error)\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="cn01"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("network", "UCX transfer failed")


def test_a_failed_libfabric_call_in_a_runtime_check_is_the_fabric(make_bundle):
    out = ("internal error: 0: comm-ofi.c:2809: OFI error: fi_mr_reg(ofi_domain, memTab[i].addr, memTab[i].size, "
           "bufAcc, 0, (prov_key ? 0 : i), 0, &ofiMrTab[i], ((void*)0)): No such file or directory\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="cn01"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("network", "libfabric call failed")


def test_nccl_asked_for_a_network_it_does_not_have_is_the_jobs_setting(make_bundle):
    out = ("nid006365:180142:180163 [0] NCCL INFO NET/Plugin: Could not find: ofi libnccl-net-ofi.so. Using internal "
           "network plugin.\n"
           "nid006365:180142:180163 [0] net.cc:626 NCCL WARN Error: network AWS Libfabric not found.\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="nid006365"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("application", "NCCL network not found")


@pytest.mark.parametrize("line", [
    "Execution of replica 0 failed: Resource exhausted: Out of memory while trying to allocate 64793134928 bytes.",
    "Not Enough GPU memory? RESOURCE_EXHAUSTED: Failed to allocate request for 35.58GiB (38204550232B) on device "
    "ordinal 0",
    "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 2.00GiB.",
    "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 12531662848",
    "RESOURCE_EXHAUSTED: Compilation failure: Aborting compilation early because it's unlikely to have enough "
    "memory. Requires 3.84T, has 90.96G available.",
    "XlaRuntimeError: RESOURCE_EXHAUSTED: Error loading program 'jit_step': Attempting to reserve 29.49G at the "
    "bottom of memory. That was not possible. There are 147.64M free, 0B reserved, and 147.64M reservable.",
])
def test_xlas_older_and_newer_device_oom_wordings_are_gpu_oom(make_bundle, line):
    assert analyze_bundle(make_bundle({"app/out.log": line + "\n"}))["sub_domain"] == "gpu_oom"


def test_a_step_torn_down_after_a_task_aborted_is_not_a_cancel(make_bundle):
    # srun kills the other tasks once one dies and slurmstepd prints a reason-less CANCELLED: in a job
    # that ended FAILED nobody cancelled it, so the abort (exit 134, SIGABRT) is the reading.
    out = ("terminate called without an active exception\n"
           "srun: error: gpu-01: task 39: Aborted (core dumped)\n"
           "srun: launch/slurm: _step_signal: Terminating StepId=4242.0\n"
           "slurmstepd: error: *** STEP 4242.0 ON gpu-01 CANCELLED AT 2026-11-20T10:30:00 ***\n"
           "srun: error: gpu-01: tasks 0-38,40-63: Killed\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, exit_code="134:0"))
    assert d["sub_domain"] == "application" and d["root_cause"]["nodes"] == ["gpu-01"]
    cancel = next(s for s in d["symptoms"] if s["kind"] == "slurm_cancel")
    assert cancel["sub_domain"] is None and cancel["role"] != "root"
    # The same line in a job that ended CANCELLED is the cancel.
    d = analyze_bundle(make_bundle({"app/out.log": out}, state="CANCELLED", exit_code="0:15"))
    assert d["sub_domain"] == "cancelled"


@pytest.mark.parametrize("files", [
    {"app/out.log": "srun: error: Application launch failed: Job credential expired\n"},
    {"app/out.log": "srun: error: Application launch failed: Invalid job credential\n",
     "nodes/gpu-02/slurmd.log":
         "[2026-11-20T10:05:00.753] error: Credential signature check: Credential data mismatch\n"
         "[2026-11-20T10:05:00.753] error: Invalid job credential from 20004@10.1.2.3: Invalid job credential\n"},
])
def test_a_job_credential_the_node_refuses_is_the_nodes_setup(make_bundle, files):
    d = analyze_bundle(make_bundle(files, exit_code="1:0"))
    assert d["sub_domain"] == "host" and d["root_cause"]["code"] in ("Task launch failed", "Job credential refused")
    if "nodes/gpu-02/slurmd.log" in files:
        assert d["root_cause"]["nodes"] == ["gpu-02"]


def test_pdsh_failing_to_reach_a_node_outranks_the_time_limit_it_leads_to(make_bundle):
    out = ("gpu-02: /bin/bash: /usr/bin/sss_ssh_knownhostsproxy: No such file or directory\n"
           "pdsh@gpu-01: gpu-02: ssh exited with exit code 255\n"
           "slurmstepd: error: *** JOB 4242 ON gpu-01 CANCELLED AT 2026-11-20T10:59:59 DUE TO TIME LIMIT ***\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, state="TIMEOUT", exit_code="0:0"))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("host", ["gpu-02"])
    # a remote command that ran and failed is not ssh failing
    out = "pdsh@gpu-01: gpu-02: ssh exited with exit code 1\n"
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert d["sub_domain"] != "host"


def test_a_firewall_dropping_slurms_ports_is_why_the_node_stopped_responding(make_bundle):
    kern = ("Nov 20 10:10:00 gpu-02 kernel: [43351.006693] [UFW BLOCK] IN=eth0 OUT= SRC=10.0.0.1 DST=10.0.0.12 "
            "LEN=60 TOS=0x00 PREC=0x00 TTL=64 ID=1 DF PROTO=TCP SPT=55926 DPT=6818 WINDOW=64240 RES=0x00 SYN URGP=0\n")
    ctld = "[2026-11-20T10:15:00.000] error: Nodes gpu-02 not responding, setting DOWN\n"
    d = analyze_bundle(make_bundle({"nodes/gpu-02/kern.log": kern, "controller/slurmctld.log": ctld},
                                   state="NODE_FAIL", exit_code="0:0"))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("network", ["gpu-02"])
    assert "port 6818 from 10.0.0.1" in d["verdict"]
    down = next(s for s in d["symptoms"] if s["kind"] == "node_not_responding")
    assert down["demoted_by"] == "companion_events"
    # a firewall dropping other traffic is the firewall doing its job
    d = analyze_bundle(make_bundle({"nodes/gpu-02/kern.log": kern.replace("DPT=6818", "DPT=3389"),
                                    "controller/slurmctld.log": ctld}, state="NODE_FAIL", exit_code="0:0"))
    assert d["sub_domain"] == "host"


def test_a_rocm_gpu_hang_is_the_gpu_of_the_node_whose_tasks_aborted_first(make_bundle):
    out = ("HW Exception by GPU node-4 (Agent handle: 0x525020) reason :GPU Hang\n"
           "srun: error: gpu-02: tasks 8-15: Aborted\n"
           "srun: error: gpu-01: tasks 0-7: Killed\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, exit_code="134:0"))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("gpu", ["gpu-02"])
    assert "GPU node-4" in d["verdict"] and "GPU Hang" in d["verdict"]
    # a network error printed without a host is not placed on the first rank to die: it may be the victim
    out = ("NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1234> with error 12, opcode 0, len 0, vendor err 129\n"
           "srun: error: gpu-02: tasks 8-15: Exited with exit code 1\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert d["sub_domain"] == "network" and d["root_cause"]["nodes"] == []


@pytest.mark.parametrize("line", [
    "HIP error out of memory at alltoall_gpu.c:97",
    "HIP error: out of memory",
])
def test_hip_out_of_memory_is_gpu_oom(make_bundle, line):
    d = analyze_bundle(make_bundle({"app/out.log": line + "\n"}))
    assert d["sub_domain"] == "gpu_oom", line


def test_a_hip_error_word_in_prose_is_not_a_gpu_error(make_bundle):
    d = analyze_bundle(make_bundle({"app/out.log": "HIP error checking is enabled for this build\n"}))
    assert all(s["kind"] != "cuda_error" for s in d["symptoms"])


@pytest.mark.parametrize("line", [
    "invalid usage ... Last NCCL warning(error): 'Bootstrap : no socket interface found'",
    "gpu-01:1050:1050 [0] NCCL WARN Bootstrap : no socket interface found",
])
def test_nccl_without_a_socket_interface_is_the_network_setup(make_bundle, line):
    d = analyze_bundle(make_bundle({"app/out.log": line + "\n"}))
    assert d["sub_domain"] == "network" and d["root_cause"]["code"] == "NCCL no socket interface"


@pytest.mark.parametrize("out, reason", [
    ("libfabric:122567:1790384730::cxi:ep_data:cxip_report_send_completion():675<warn> nid006264: TXC "
     "(0xb951:0): Request dest_addr: 432 caddr.nic: 0XEEC3 caddr.pid: 0 error: 0x6454210 (err: 5, CONN_CLOSED)\n",
     "CONN_CLOSED"),
    ("libfabric:242959::cxi:ep_data:cxip_report_send_completion():675<warn>\n"
     "    gpu-02: TXC (0x8f0:4): Request dest_addr: 1 caddr.nic: 0X862 caddr.pid: 0\n"
     "    error: 0x4008886603b0 (err: 107, VNI_NOT_FOUND)\n", "VNI_NOT_FOUND"),
    ("MPIDI_OFI_handle_cq_error(1310): OFI poll failed (ofi_events.c:1312:MPIDI_OFI_handle_cq_error:"
     "Input/output error - Invalid request descriptor)\n", "Invalid request descriptor"),
])
def test_slingshot_transfer_errors_are_the_fabric_and_name_their_reason(make_bundle, out, reason):
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert d["sub_domain"] == "network" and f"({reason})" in d["verdict"]


def _coll(pid: int, op: str, count: int, datatype: int, comm: str = "0x7f00a0", opcount: str = "0") -> str:
    return (f"gpu-01:{pid}:{pid} [{pid % 8}] NCCL INFO {op}: opCount {opcount} sendbuff 0x7f88e4000000 "
            f"recvbuff 0x7f88e4000000 count {count} datatype {datatype} op 0 root 0 comm {comm}{pid} "
            f"[nranks=4] stream 0x55f20d2f5db0\n")


def test_ranks_making_different_collective_calls_are_the_jobs_control_flow(make_bundle):
    files = {f"app/rank{p}.log": _coll(p, "AllReduce", 10, 7) + _coll(p, "Broadcast", 53 if p else 9, 4, opcount="1")
             for p in range(4)}
    d = analyze_bundle(make_bundle(files, state="CANCELLED", exit_code="0:15"))
    assert d["sub_domain"] == "application" and d["root_cause"]["code"] == "collective mismatch"
    assert "call #1: Broadcast of 9 elements" in d["verdict"] and "gpu-01:0" in d["verdict"]
    assert "Broadcast of 53 elements of datatype 4 (op 0, root 0) in 3 other processes" in d["verdict"]
    # routine calls are not kept as events, one per rank and call
    assert sum(s["kind"] == "nccl_collective" for s in d["symptoms"]) == 1


@pytest.mark.parametrize("variant", ["agree", "two_comms", "p2p"])
def test_collective_calls_that_need_not_match_are_not_compared(make_bundle, variant):
    def lines(p: int) -> str:
        if variant == "agree":
            return _coll(p, "AllReduce", 10, 7) + _coll(p, "Broadcast", 53, 4, opcount="1")
        if variant == "two_comms":  # a second communicator's calls keep their own count
            return _coll(p, "AllReduce", 10, 7) + _coll(p, "Broadcast", 53 + p, 4, comm="0x7f00b0")
        return _coll(p, "Send" if p % 2 else "Recv", 10, 7)  # each rank's own peer
    files = {f"app/rank{p}.log": lines(p) for p in range(4)}
    d = analyze_bundle(make_bundle(files, state="CANCELLED", exit_code="0:15"))
    assert d["sub_domain"] == "cancelled", variant


def test_pyxis_failing_to_build_the_container_file_system_is_the_node(make_bundle):
    d = analyze_bundle(make_bundle({"app/out.log": "pyxis: failed to create container filesystem\n"}))
    assert d["sub_domain"] == "host" and d["root_cause"]["code"] == "Container filesystem failed"


@pytest.mark.parametrize("out", [
    "[gpu-02.example.org:mpi_rank_10][MPIDI_CH3I_MRAILI_Cq_poll] src/mpid/ch3/channels/mrail/src/gen2/"
    "ibv_channel_manager.c:586: [] Got completion with error 12, vendor code=0x81, dest rank=17\n",
    " 135: libfabric:47445:1656625588:cxi:core:cxip_ux_onload_cb():2444<warn> RXC (0xe910:7:0): Flow control "
    "triggered due to failure to append LE. Software endpoint mode required.\n",
])
def test_mvapich_and_slingshot_transport_failures_are_the_fabric(make_bundle, out):
    d = analyze_bundle(make_bundle({"app/out.log": out}, exit_code="134:0"))
    assert d["sub_domain"] == "network", out
    if "mpi_rank_10" in out:
        assert d["root_cause"]["nodes"] == ["gpu-02"] and "status 12, to rank 17" in d["verdict"]


def test_a_pmi_exchange_failing_in_mpi_init_points_at_the_launcher_not_the_code(make_bundle):
    out = ("MPICH ERROR [Rank 0] [job id 4242.0] [Thu Aug  3 00:01:58 2023] [gpu-01] - Abort(1616271) (rank 0 in "
           "comm 0): Fatal error in PMPI_Init_thread: Other MPI error, error stack:\n"
           "MPIDI_OFI_mpi_init_hook(805):\n"
           "MPIDU_bc_table_create(204)..:  PMI_Allgather failed: -1\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert d["sub_domain"] == "host" and d["evidence_status"] == "hypothesis"


def test_a_job_that_hung_on_a_failed_transfer_until_its_time_limit_is_the_transfer(make_bundle):
    out = ("206: WARNING: Open MPI failed to TCP connect to a peer MPI process.  This\n"
           "206:   Local host: gpu-02\n"
           "slurmstepd: error: *** JOB 4242 ON gpu-01 CANCELLED AT 2026-11-20T10:59:59 DUE TO TIME LIMIT ***\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, state="TIMEOUT", exit_code="0:0"))
    assert d["sub_domain"] == "network" and "hung until its time limit" in d["verdict"]
    assert any(t["rule"] == "hung_on" and t["events"] for t in d["rule_trace"])
    # without a failed transfer the time limit stands; in a job that failed, the failure is no hang
    d = analyze_bundle(make_bundle({"app/out.log": out.split("\n", 2)[2]}, state="TIMEOUT", exit_code="0:0"))
    assert d["sub_domain"] == "time_limit"
    d = analyze_bundle(make_bundle({"app/out.log": out.rsplit("slurmstepd", 1)[0]}))
    assert "hung until" not in d["verdict"]


def test_a_job_that_hung_with_its_mpi_completion_queue_full_hung_on_its_own_load(make_bundle):
    """Cray MPICH's warning that the provider's completion queue stays full: the job's outstanding
    operations, not the fabric; with the time limit after it, the job hung on that."""
    out = ("PE 191: MPICH WARNING: OFI is failing to make progress on posting a receive. MPICH suspects a hang due "
           "to completion queue exhaustion. Setting environment variable FI_CXI_DEFAULT_CQ_SIZE to a higher number "
           "might circumvent this scenario. OFI retry continuing...\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, state="TIMEOUT", exit_code="0:0"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("application", "MPI completion queue exhausted")
    assert "hung until its time limit" in d["verdict"]
    # a transfer the fabric failed beside it: either could have stopped the job, and the verdict says so
    failed = ("MPIDI_OFI_handle_cq_error(1062): OFI poll failed (ofi_events.c:1064:MPIDI_OFI_handle_cq_error:"
              "Input/output error - UNDELIVERABLE)\n")
    d = analyze_bundle(make_bundle({"app/out.log": failed + out}, state="TIMEOUT", exit_code="0:0"))
    assert d["sub_domain"] == "ambiguous"
    assert {c["sub_domain"] for c in d["candidates"]} >= {"network", "application"}


def test_a_job_its_user_cancelled_after_a_failed_connection_hung_on_the_connection(make_bundle):
    out = "[gpu-02:12018] [0,0,2]-[0,0,0] mca_oob_tcp_peer_complete_connect:\n    connect() failed with errno=113\n"
    d = analyze_bundle(make_bundle({"app/out.log": out}, state="CANCELLED", exit_code="0:2"))
    assert d["sub_domain"] == "network" and "hung until it was cancelled" in d["verdict"]
    assert d["terminal_state"] == "CANCELLED"
    # a cancel with nothing failing before it stays a cancel
    d = analyze_bundle(make_bundle({"app/out.log": "step 10 loss 2.31\n"}, state="CANCELLED", exit_code="0:2"))
    assert d["sub_domain"] == "cancelled"


def test_a_rank_that_died_of_a_floating_point_exception_left_the_job_hanging_until_its_limit(make_bundle):
    out = ("Node: 4 Proc: 92\n"
           "Floating point exception!\n"
           "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
           "slurmstepd: error: *** JOB 4242 ON gpu-01 CANCELLED AT 2026-11-20T10:59:59 DUE TO TIME LIMIT ***\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, state="TIMEOUT", exit_code="0:0"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("application", "Floating point exception")
    assert "hung until its time limit" in d["verdict"]
    limit = next(s for s in d["symptoms"] if s["kind"] == "scheduler_state")
    assert limit["demoted_by"] is not None  # the limit is kept, as the hang's consequence
    # printed while Slurm was killing the job, it is teardown and the limit stands
    stamped = out.replace("Floating point", "[2026-11-20T10:59:50] Floating point")
    d = analyze_bundle(make_bundle({"app/out.log": stamped}, state="TIMEOUT", exit_code="0:0"))
    assert d["sub_domain"] == "time_limit"
    # gfortran's note at a normal exit is no crash
    d = analyze_bundle(make_bundle({"app/out.log": "Note: The following floating-point exceptions are "
                                                   "signalling: IEEE_INVALID_FLAG\n"}))
    assert d["root_cause"] is None or d["root_cause"]["code"] != "Floating point exception"


def test_an_unstamped_line_takes_the_time_of_a_stamped_line_at_most_50_lines_above(make_bundle):
    def warn(peer: int) -> str:
        return f"gpu-01:1234:5678 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.{peer}<1234> " \
               "with error 12, opcode 0, len 0, vendor err 129\n"
    lines = (["2026-11-20T10:05:00Z step started\n"] + [warn(i) for i in range(2, 32)]  # lines 2-31
             + ["filler\n"] * 29 + [warn(61), "2026-11-20T10:20:00Z checkpoint\n", warn(63)])
    bundle = make_bundle({"app/gpu-01/out.log": "".join(lines)})
    obs = BundleCollector(bundle, load_workload(bundle), load_rules(None)).collect()
    when = {e.source.line: (e.time.strftime("%H:%M") if e.time else None, e.time_quality)
            for e in obs.events if e.rule == "nccl.warn"}
    assert all(when[n] == ("10:05", "carried") for n in range(2, 32))
    assert when[61] == (None, "none")  # 60 lines below the last stamp: too far to carry it
    assert when[63] == ("10:20", "carried")


def test_a_failed_task_prolog_in_slurmds_log_is_the_nodes_setup(make_bundle):
    slurmd = ("[2026-11-20T10:00:42.488] [4242.interactive] SCRIPT: run_command:script=/etc/slurm/task_prolog, resp:\n"
              "/usr/sbin/slurmstepd: error while loading shared libraries: libslurmfull.so: cannot open shared object file\n"
              "[2026-11-20T10:00:42.488] [4242.interactive] error: TaskProlog failed status=127\n")
    d = analyze_bundle(make_bundle({"nodes/gpu-02/slurmd.log": slurmd}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("host", ["gpu-02"])
    assert "TaskProlog failed with status 127 on gpu-02" in d["verdict"]
    job_prolog = "[2026-11-20T10:00:01.000] error: [job 4242] prolog failed status=1:0\n"
    d = analyze_bundle(make_bundle({"nodes/gpu-01/slurmd.log": job_prolog}))
    assert "prolog failed with status 1:0 on gpu-01" in d["verdict"]
    # another job's prolog on the same node says nothing about this one
    d = analyze_bundle(make_bundle({"nodes/gpu-02/slurmd.log": slurmd.replace("[4242.", "[4243.")}))
    assert d["sub_domain"] != "host"


def test_open_mpi_failing_to_reach_a_peer_over_tcp_points_at_the_network(make_bundle):
    out = ("[gpu-01][[63694,1],2][btl_tcp_endpoint.c:800:mca_btl_tcp_endpoint_complete_connect] "
           "connect() to 10.1.128.11 failed: No route to host (113)\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert (d["sub_domain"], d["evidence_status"]) == ("network", "hypothesis")
    assert "peer at 10.1.128.11" in d["verdict"] and "(No route to host)" in d["verdict"]
    # Docker's default bridge keeps its own, more precise rule
    d = analyze_bundle(make_bundle({"app/out.log": out.replace("10.1.128.11", "172.17.0.3")}))
    assert d["root_cause"]["code"] == "Peer on a container bridge"


def test_an_open_mpi_daemon_lost_at_launch_points_at_the_network_not_the_code(make_bundle):
    banner = ("An ORTE daemon has unexpectedly failed after launch and before\n"
              "communicating back to mpirun. This could be caused by a number\n")
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": banner}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("network", "MPI daemon lost at launch")
    # the banner cut where it wraps is not enough: only the words that name the failure match
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": "An ORTE daemon has unexpectedly\n"}))
    assert d["sub_domain"] != "network"


def test_dasks_nanny_restarting_a_worker_over_its_memory_budget_is_host_memory(make_bundle):
    out = ("2026-11-20 10:40:57,309 - distributed.nanny.memory - WARNING - Worker tcp://10.0.0.5:37921 "
           "(pid=4242) exceeded 95% memory budget. Restarting...\n")
    d = analyze_bundle(make_bundle({"app/gpu-01/dask-worker.err": out}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("host_oom", "Dask worker memory kill")
    assert "over 95% of its memory limit" in d["verdict"]
    older = "distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting\n"
    assert analyze_bundle(make_bundle({"app/out.log": older}))["sub_domain"] == "host_oom"
    # the worker pausing at its threshold is a warning, not a kill
    paused = ("2026-11-20 10:40:58,390 - distributed.worker.memory - WARNING - Worker is at 90% memory "
              "usage. Pausing worker.  Process memory: 4.52 GiB -- Worker memory limit: 5.00 GiB\n")
    assert analyze_bundle(make_bundle({"app/out.log": paused}))["sub_domain"] != "host_oom"


def _watchdog(rank: int, seq: int = 1, op: str = "BROADCAST", pg: str = "") -> str:
    """A watchdog timeout as PyTorch 2.5 prints it; `pg` is the process group's tag (2.3+)."""
    return (f"[rank{rank}]:[E1120 10:21:12.512786305 ProcessGroupNCCL.cpp:616] {pg}[Rank {rank}] Watchdog caught "
            f"collective operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn=1, NumelOut=1, "
            "Timeout(ms)=1800000) ran for 1800000 milliseconds before timing out.\n")


def test_a_rank_that_printed_no_timeout_on_one_node_had_not_entered_the_collective(make_bundle):
    out = "".join(_watchdog(r) for r in (1, 3, 2))
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-01"))
    assert (d["sub_domain"], d["evidence_status"]) == ("application", "hypothesis")
    assert "Rank 0 never reported a timeout: it had not reached the job's first collective" in d["verdict"]
    # every rank timed out: they all waited, on something no log names
    every = analyze_bundle(make_bundle({"app/out.log": _watchdog(0) + out}, nodes="gpu-01"))
    assert every["sub_domain"] == "unknown"
    # across nodes the one that did not report may have lost its network or its node
    multi = analyze_bundle(make_bundle({"app/out.log": out}))
    assert multi["sub_domain"] == "unknown"
    # a "rank" no node runs is a line the job wrote, not a missing rank
    forged = analyze_bundle(make_bundle({"app/out.log": _watchdog(1) + _watchdog(3_000_000_000)}, nodes="gpu-01"))
    assert forged["sub_domain"] == "unknown"
    # one report alone may be an excerpt, not an absence
    one = analyze_bundle(make_bundle({"app/out.log": _watchdog(3)}, nodes="gpu-01"))
    assert one["sub_domain"] == "unknown"
    # deep into a run, ranks aborting together lose lines: an absence there proves little
    late = analyze_bundle(make_bundle({"app/out.log": out.replace("SeqNum=1,", "SeqNum=469508,")}, nodes="gpu-01"))
    assert late["sub_domain"] == "unknown"


def test_ranks_timed_out_in_different_collectives_made_different_calls(make_bundle):
    out = _watchdog(0, 959) + "".join(_watchdog(r, 963) for r in (1, 2, 3))
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert (d["sub_domain"], d["evidence_status"]) == ("application", "hypothesis")
    assert "different collectives (#959 on rank 0; #963 on ranks 1, 2 and 3)" in d["verdict"]
    assert "TORCH_DISTRIBUTED_DEBUG=DETAIL" in d["root_cause"]["action"]
    # 2.5+ names each line's group: one group, the same reading
    named = "".join(_watchdog(r, s, pg=f"[PG ID 0 PG GUID 0(default_pg) Rank {r}] ") for r, s in
                    ((0, 959), (1, 963), (2, 963)))
    assert analyze_bundle(make_bundle({"app/out.log": named}))["sub_domain"] == "application"


@pytest.mark.parametrize("out", [
    # all ranks in the same collective: they waited on something no line names
    "".join(_watchdog(r, 963) for r in (0, 1, 2)),
    # collectives of different groups are numbered apart
    _watchdog(0, 959, pg="[PG 0 Rank 0] ") + _watchdog(1, 963, pg="[PG 1 Rank 1] "),
    # a rank waiting in two collectives at once: groups the lines do not name
    _watchdog(0, 959) + _watchdog(0, 12) + _watchdog(1, 963),
    # point-to-point calls are numbered per pair of ranks
    _watchdog(0, 959, "SEND") + _watchdog(1, 963, "RECV"),
])
def test_timeouts_that_need_not_match_say_nothing_of_the_code(make_bundle, out):
    assert analyze_bundle(make_bundle({"app/out.log": out}))["sub_domain"] == "unknown"


def test_a_gpu_fault_outranks_timeouts_in_different_collectives(make_bundle):
    out = _watchdog(0, 959) + _watchdog(1, 963)
    xid = ("Nov 20 10:10:00 gpu-02 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the "
           "bus.\n")
    d = analyze_bundle(make_bundle({"app/out.log": out, "nodes/gpu-02/syslog": xid}))
    assert d["sub_domain"] == "gpu"


def test_ncclsystemerror_across_hosts_points_at_their_connection(make_bundle):
    err = ("RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:518, unhandled system "
           "error, NCCL version 2.4.8\n")
    d = analyze_bundle(make_bundle({"app/out.log": err}, nodes="gpu-[01-02]"))
    assert (d["sub_domain"], d["evidence_status"]) == ("network", "hypothesis")
    assert "In a job across 2 nodes" in d["verdict"] and "/dev/shm" in d["verdict"]
    assert "NCCL_SOCKET_IFNAME" in d["root_cause"]["action"]
    # on one node no network is crossed: shared memory or memory locking failed, which no line names
    assert analyze_bundle(make_bundle({"app/out.log": err}, nodes="gpu-01"))["sub_domain"] == "unknown"
    # a cause that explains the failed call still wins across hosts
    for shm in ("gpu-01:4242:4300 [0] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space "
                "left on device\n",
                "gpu-01:4242:4300 [0] misc/shmutils.cc:70 NCCL WARN Error: failed to extend "
                "/dev/shm/nccl-03v824 to 9637892 bytes\n"):
        d = analyze_bundle(make_bundle({"app/out.log": shm + err}, nodes="gpu-[01-02]"))
        assert (d["sub_domain"], d["root_cause"]["code"]) == ("host", "NCCL shared memory")


@pytest.mark.parametrize(("line", "sub_domain", "code", "evidence"), [
    ("gpu-02:4242:4300 [0] misc/ibvwrap.cc:108 NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory",
     "host", "RDMA locked-memory limit", "supported"),
    ("gpu-02:4242:4300 [0] misc/ibvwrap.cc:217 NCCL WARN Call to ibv_create_cq failed with error Cannot allocate memory",
     "host", "RDMA locked-memory limit", "supported"),
    ("gpu-02:4242:4300 [1] register_mr_buffers:647 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 5. "
     "RC: -22, Error: Invalid argument", "application", "GPU memory registration (libfabric)", "hypothesis"),
    ("gpu-02:4242:4300 [0] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Bad address",
     "host", "GPUDirect RDMA registration", "hypothesis"),
])
def test_memory_the_network_adapter_could_not_register_names_the_node_and_whose_setup(
        make_bundle, line, sub_domain, code, evidence):
    d = analyze_bundle(make_bundle({"app/out.log": line + "\n"}))
    assert (d["sub_domain"], d["root_cause"]["code"], d["evidence_status"]) == (sub_domain, code, evidence)
    assert d["root_cause"]["nodes"] == ["gpu-02"]


def test_timeouts_written_after_a_progress_bar_keep_their_ranks(make_bundle):
    # Older PyTorch's bare `[Rank N]` lines, two of them glued to the bar rank 0 was still drawing.
    bar = "\rRunning tokenizer on dataset:   9%|███▊      | 280000/2969526 [29:55<4:48:08, 155.57 examples/s]"
    old = [_watchdog(r).split("]:", 1)[1].replace("[E1120 10:21:12.512786305 ", "[E ") for r in (1, 2, 3)]
    out = bar + old[1] + old[0] + bar + old[2]
    d = analyze_bundle(make_bundle({"app/out.log": out}, nodes="gpu-01"))
    assert d["sub_domain"] == "application"
    assert "Rank 0 never reported a timeout" in d["verdict"]


def test_tensorflows_cuda_initialisation_status_is_decoded(make_bundle):
    out = ("tensorflow.python.framework.errors_impl.InternalError: CUDA runtime implicit initialization "
           "on GPU:0 failed. Status: all CUDA-capable devices are busy or unavailable\n")
    d = analyze_bundle(make_bundle({"app/gpu-01/worker.log": out}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("host", "GPU held by another process")
    assert d["root_cause"]["nodes"] == ["gpu-01"]


@pytest.mark.parametrize(("number", "sub_domain", "code"), [
    ("804", "host", "CUDA driver incompatible"),
    ("214", "gpu_memory", "CUDA ECC uncorrectable"),
    ("2", "gpu_oom", "CUDA error (out of memory)"),
    ("700", "application", "CUDA error (an illegal memory access was encountered)"),
])
def test_a_cuda_driver_result_printed_as_a_number_is_read_as_its_error(make_bundle, number, sub_domain, code):
    out = (f"Cuda driver error {number} in call at file '/sw/lammps/lib/gpu/geryon/nvd_device.h' in line 333.\n"
           "Abort(-1) on node 0 (rank 0 in comm 0):\n")
    d = analyze_bundle(make_bundle({"app/gpu-02/lmp.out": out}))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == (sub_domain, code, ["gpu-02"])
    # a number no table names is still kept, as a symptom
    d = analyze_bundle(make_bundle({"app/gpu-02/lmp.out": out.replace(f"error {number} ", "error 9931 ")}))
    assert "CUDA driver error 9931" in [s["code"] for s in d["symptoms"]]


def test_a_cuda_driver_error_printed_with_its_text_is_classified_by_it(make_bundle):
    out = "RuntimeError: CUDA driver error: uncorrectable ECC error encountered\n"
    d = analyze_bundle(make_bundle({"app/gpu-02/out.log": out}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("gpu_memory", ["gpu-02"])
    # a text no table names is kept as a symptom, never dropped
    d = analyze_bundle(make_bundle({"app/gpu-02/out.log": "[rank3]: CUDA driver error: device not ready\n"}))
    assert "CUDA error (device not ready)" in [s["code"] for s in d["symptoms"]]


def test_a_gpu_the_driver_could_not_probe_is_a_gpu_fault_of_that_node(make_bundle):
    dmesg = ("[    5.100000] NVRM: The NVIDIA GPU 000a:00:00.0 (PCI ID: 10de:2330) installed in this system\n"
             "[    5.100001] NVRM: The NVIDIA probe routine failed for 1 device(s).\n")
    d = analyze_bundle(make_bundle({"nodes/gpu-02/dmesg": dmesg}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("gpu", ["gpu-02"])
    assert "could not initialise 1 GPU(s) on gpu-02" in d["verdict"]
    # the driver probing every device it found is routine
    fine = "[    5.100000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.126.09\n"
    assert analyze_bundle(make_bundle({"nodes/gpu-02/dmesg": fine}))["sub_domain"] != "gpu"


def test_a_cuda_samples_check_is_decoded_as_the_cuda_error_it_names(make_bundle):
    out = "Failed to allocate device vector A (error code system not yet initialized)!\n"
    d = analyze_bundle(make_bundle({"app/gpu-01/validator.log": out}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("nvlink", "CUDA system not ready")
    oom = "Failed to allocate device vector B (error code out of memory)!\n"
    assert analyze_bundle(make_bundle({"app/gpu-01/validator.log": oom}))["sub_domain"] == "gpu_oom"
    # prose that mentions an error code is not a check
    prose = "Failed to parse the config (error code is printed below)\n"
    assert analyze_bundle(make_bundle({"app/gpu-01/validator.log": prose}))["sub_domain"] != "nvlink"


def test_a_rendezvous_connection_that_timed_out_points_at_the_network(make_bundle):
    out = ("Traceback (most recent call last):\n"
           '  File "static_tcp_rendezvous.py", line 61, in next_rendezvous\n'
           "RuntimeError: connect() timed out. Original timeout was 900000 ms.\n")
    d = analyze_bundle(make_bundle({"app/job.err": out}))
    assert (d["sub_domain"], d["evidence_status"]) == ("network", "hypothesis")
    assert "could not reach the rendezvous store" in d["verdict"]
    # a RuntimeError of the job's own about a timeout is its own
    own = out.replace("connect() timed out. Original timeout was 900000 ms.", "data loader timed out")
    assert analyze_bundle(make_bundle({"app/job.err": own}))["sub_domain"] == "application"


def test_a_job_that_said_it_was_done_and_then_ran_into_its_time_limit_hung_at_exit(make_bundle):
    done = ("[2026-11-20 10:17:07] iteration       50/      50 | consumed samples:        25600\n"
            "[after training is done] datetime: 2026-11-20 10:17:08\n")
    kill = "slurmstepd: error: *** STEP 4242.0 ON gpu-01 CANCELLED AT 2026-11-20T11:00:00 DUE TO TIME LIMIT ***\n"
    timeout = {"state": "TIMEOUT", "exit_code": "0:0"}
    d = analyze_bundle(make_bundle({"app/out.log": done + kill}, **timeout))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("application", "Hung after finishing")
    assert "work was done ([after training is done]) 43 minutes before the time limit" in d["verdict"]
    # still printing after the words (an evaluation): it was working, and the limit stands
    evaluating = done + "".join(f"validation loss at step {i}: 2.1\n" for i in range(5)) + kill
    assert analyze_bundle(make_bundle({"app/out.log": evaluating}, **timeout))["sub_domain"] == "time_limit"
    # the limit came a minute after the words: that is no hang
    soon = make_bundle({"app/out.log": done + kill}, end="2026-11-20T10:18:00+00:00", **timeout)
    assert analyze_bundle(soon)["sub_domain"] == "time_limit"
    hf = "2026-11-20 10:17:08 Training completed. Do not forget to share your model on huggingface.co/models =)\n"
    assert analyze_bundle(make_bundle({"app/out.log": hf + kill}, **timeout))["sub_domain"] == "application"
    # an empty stderr file (sbatch -e) holds no later output
    empty_err = make_bundle({"app/out.log": done + kill, "app/err.log": ""}, **timeout)
    assert analyze_bundle(empty_err)["sub_domain"] == "application"
    # stdout said done, but stderr is a second file that may hold the later output
    two = make_bundle({"app/out.log": done + kill, "app/err.log": "Evaluating: 100%|##########| 50/50\n"}, **timeout)
    assert analyze_bundle(two)["sub_domain"] == "time_limit"


_NCCL_TESTS = ("# Using devices\n#  Rank  0 Group  0 Pid  21284 on     gpu-01 device  0 [0x2f] NVIDIA A100\n"
               "#  Rank  1 Group  0 Pid  21284 on     gpu-01 device  1 [0x03] NVIDIA A100\n#\n"
               "#                                                              out-of-place                       "
               "in-place          \n"
               "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
               "   busbw #wrong\n"
               "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)"
               "  (GB/s)       \n")
_ROW = ("           8             2     float     sum      -1    24.51    0.00    0.00      0    23.96    0.00    "
        "0.00      0\n")


def test_a_collective_test_stopped_before_its_first_result_on_one_node_stalled_between_its_gpus(make_bundle):
    timeout = {"state": "TIMEOUT", "exit_code": "0:0", "nodes": "gpu-01"}
    d = analyze_bundle(make_bundle({"app/job.out": _NCCL_TESTS}, **timeout))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("host", "GPU peer-to-peer stalled")
    assert d["evidence_status"] == "supported"  # read from what stopped, not confirmed by the limit
    assert "ACSCtl" in d["root_cause"]["action"] and d["root_cause"]["nodes"] == ["gpu-01"]
    cancelled = analyze_bundle(make_bundle({"app/job.out": _NCCL_TESTS}, **{**timeout, "state": "CANCELLED"}))
    assert cancelled["sub_domain"] == "host"
    # Slurm's own kill line after the headings is no result
    kill = "slurmstepd: error: *** JOB 4242 ON gpu-01 CANCELLED AT 2026-11-20T11:00:00 DUE TO TIME LIMIT ***\n"
    assert analyze_bundle(make_bundle({"app/job.out": _NCCL_TESTS + kill}, **timeout))["sub_domain"] == "host"
    # a first result printed: the collectives ran, and the limit stands
    assert analyze_bundle(make_bundle({"app/job.out": _NCCL_TESTS + _ROW}, **timeout))["sub_domain"] == "time_limit"
    # across nodes the first collective also crossed the network
    multi = make_bundle({"app/job.out": _NCCL_TESTS}, **{**timeout, "nodes": "gpu-[01-02]"})
    assert analyze_bundle(multi)["sub_domain"] == "time_limit"
    # a test that failed by itself ended for its own reason
    failed = make_bundle({"app/job.out": _NCCL_TESTS}, **{**timeout, "state": "FAILED", "exit_code": "1:0"})
    assert analyze_bundle(failed)["sub_domain"] != "host"


def test_a_rendezvous_store_that_only_its_own_process_joined_points_at_the_launch(make_bundle):
    out = ("torch.distributed.DistStoreError: Timed out after 3601 seconds waiting for clients. "
           "1/16 clients joined.\n")
    d = analyze_bundle(make_bundle({"app/job.err": out}))
    assert (d["sub_domain"], d["evidence_status"]) == ("application", "hypothesis")
    assert "the others were never started" in d["verdict"]
    # some joined, others did not: those may not reach the store (the network)
    some = out.replace("1/16", "4/16")
    assert analyze_bundle(make_bundle({"app/job.err": some}))["sub_domain"] == "network"


def test_slurm_commands_that_could_not_reach_the_controller_blame_slurm_not_the_job(make_bundle):
    for line in ("srun: error: Unable to confirm allocation for job 4242: Socket timed out on send/recv operation\n",
                 "slurm_load_ctl_conf error: Socket timed out\n",
                 "slurm_load_partitions: Unable to contact slurm controller (connect failure)\n"):
        d = analyze_bundle(make_bundle({"app/job.err": line}))
        assert (d["sub_domain"], d["root_cause"]["code"]) == ("host", "Slurm controller unreachable"), line
    # the job's own words about a controller are not Slurm's
    own = "robot: unable to contact the motion controller\n"
    assert analyze_bundle(make_bundle({"app/job.err": own}))["sub_domain"] != "host"


def test_a_slurm_client_that_cannot_parse_slurm_conf_is_the_nodes_setup(make_bundle):
    out = ("srun: error: _parse_next_key: Parsing error at unrecognized key: AccountingStoreFlags\n"
           'srun: error: Parse error in file /proc/256146/fd/5 line 17: "AccountingStoreFlags=job_script"\n')
    d = analyze_bundle(make_bundle({"app/gpu-01/job.err": out}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("host", "Slurm configuration unreadable")
    assert "unknown key AccountingStoreFlags" in d["verdict"]
    older = "sinfo: error: Parsing error at unrecognized key: SlurmctldHost\n"
    assert analyze_bundle(make_bundle({"app/gpu-01/job.err": older}))["sub_domain"] == "host"
    slurmd = "[2026-11-20T10:00:01.000] error: Parse error in file /etc/slurm/slurm.conf line 17: \"X=1\"\n"
    assert analyze_bundle(make_bundle({"nodes/gpu-02/slurmd.log": slurmd}))["root_cause"]["nodes"] == ["gpu-02"]


def test_slingshot_without_credentials_for_the_job_is_the_sites_setup(make_bundle):
    d = analyze_bundle(make_bundle({"app/gpu-01/job.err": "err : Function not implemented\ncxip_gen_auth_key failed: -38\n"}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("host", "No Slingshot credentials")
    assert analyze_bundle(make_bundle({"app/job.err": "cxip_gen_auth_key ok\n"}))["sub_domain"] != "host"


def test_hdf5_on_a_file_system_without_locks_is_the_mount_not_the_code(make_bundle):
    out = ("IOError: HDF5 error back trace\n"
           '  File "H5FDsec2.c", line 939, in H5FD_sec2_lock\n'
           "    file locking disabled on this file system (use HDF5_USE_FILE_LOCKING environment variable to "
           "override), errno = 38, error message = 'Function not implemented'\n"
           "End of HDF5 error back trace\n")
    d = analyze_bundle(make_bundle({"app/gpu-01/job.err": out}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("storage", "File locks unsupported")
    # HDF5's other errors are the job's own file handling
    other = out.replace("file locking disabled on this file system", "unable to open file: name doesn't exist")
    assert analyze_bundle(make_bundle({"app/gpu-01/job.err": other}))["sub_domain"] != "storage"


def test_slurm_lines_that_look_like_failures_do_not_outrank_the_jobs_own_error(make_bundle):
    error = "Traceback (most recent call last):\nValueError: bad input shape\n"
    for line in ("slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n",
                 "srun: error: Slurm controller not responding, sleeping and retrying.\n",
                 "Parse error in file config.yaml line 12: expected a mapping\n",
                 "2026-11-20 10:10:00 - distributed.nanny.memory - WARNING - Worker tcp://10.0.0.5:1 (pid=4) "
                 "exceeded 95% memory budget. Restarting...\n"):
        d = analyze_bundle(make_bundle({"app/gpu-01/job.err": line + error}))
        assert d["sub_domain"] == "application", line
    # a TaskProlog failure in a shared node's log that names no job is no job's
    lone = "[2026-11-20T10:00:42.488] error: TaskProlog failed status=127\n"
    assert analyze_bundle(make_bundle({"nodes/gpu-02/slurmd.log": lone}))["sub_domain"] != "host"


@pytest.mark.parametrize("line", [
    "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
    "port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use",
    "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
    "The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).",
    # older PyTorch: the same as a RuntimeError
    "RuntimeError: The server socket has failed to listen on any local network address. The server socket has "
    "failed to bind to [::]:29500 (errno: 98 - Address already in use). The server socket has failed to bind to "
    "0.0.0.0:29500 (errno: 98 - Address already in use).",
])
def test_a_rendezvous_port_another_job_on_the_node_holds_is_the_jobs_launch(make_bundle, line):
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": line + "\n"}))
    assert d["sub_domain"] == "application" and "MASTER_PORT" in d["root_cause"]["action"]


def test_a_rank_that_lost_the_rendezvous_store_points_at_rank_0_or_the_network(make_bundle):
    line = ("torch.distributed.DistBackendError: [2] is setting up NCCL communicator and retrieving ncclUniqueId "
            "from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer\n")
    d = analyze_bundle(make_bundle({"app/out.log": line}))
    assert (d["sub_domain"], d["evidence_status"], d["root_cause"]["code"]) == (
        "network", "hypothesis", "Store connection lost")


def test_xla_naming_the_nccl_call_that_failed_is_read_as_nccls_error(make_bundle):
    line = ("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:297: NCCL "
            "operation ncclCommInitRank(&comm, nranks, id, rank) failed: unhandled system error (run with "
            "NCCL_DEBUG=INFO for details)\n")
    d = analyze_bundle(make_bundle({"app/out.log": line}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("network", "ncclSystemError")


def test_cublas_without_a_handle_is_a_lead_to_gpu_memory(make_bundle):
    line = "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`\n"
    d = analyze_bundle(make_bundle({"app/gpu-02/out.log": line}))
    assert (d["sub_domain"], d["evidence_status"], d["root_cause"]["code"]) == (
        "gpu_oom", "hypothesis", "cuBLAS handle not created")


def test_nvml_missing_is_the_nodes_driver_but_only_a_lead(make_bundle):
    probe = "Failed to initialize NVML: could not load NVML library\n"
    d = analyze_bundle(make_bundle({"app/gpu-02/out.log": probe}))
    assert (d["sub_domain"], d["evidence_status"], d["root_cause"]["nodes"]) == ("host", "hypothesis", ["gpu-02"])
    # a CPU job's monitoring wrapper probes for GPUs too: the job's own error outranks the probe
    out = probe + "Traceback (most recent call last):\nValueError: could not convert string to float: 'x'\n"
    d = analyze_bundle(make_bundle({"app/gpu-02/out.log": out}))
    assert d["sub_domain"] == "application"


def test_an_intel_gpu_level_zero_lost_is_the_gpu_of_that_node(make_bundle):
    line = "RuntimeError: level_zero backend failed with error: 20 (UR_RESULT_ERROR_DEVICE_LOST)\n"
    d = analyze_bundle(make_bundle({"app/gpu-02/rank5.err": line}))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == ("gpu", "Intel GPU lost", ["gpu-02"])


def test_numpys_memory_error_is_host_memory(make_bundle):
    out = ("Traceback (most recent call last):\n  File \"prep.py\", line 3, in <module>\n    a = np.zeros((n, n))\n"
           "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 38.1 GiB for an array with shape "
           "(71500, 71500) and data type float64\n")
    d = analyze_bundle(make_bundle({"app/gpu-02/out.log": out}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("host_oom", "MemoryError")
    assert "Unable to allocate 38.1 GiB" in d["verdict"]


@pytest.mark.parametrize(("line", "code"), [
    ("OSError: [Errno 108] Cannot send after transport endpoint shutdown: '/lustre/proj/shard-0001.tar'", "ESHUTDOWN"),
    ("cp: error reading '/lustre/proj/x': Cannot send after transport endpoint shutdown", "ESHUTDOWN"),
    ("OSError: [Errno 121] Remote I/O error: '/gpfs/proj/ckpt.pt'", "EREMOTEIO"),
])
def test_a_mount_whose_server_failed_the_call_is_the_storage(make_bundle, line, code):
    # ESHUTDOWN's own text holds "send", which on a socket's line would be the network's
    d = analyze_bundle(make_bundle({"app/out.log": line + "\n"}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("storage", code)
