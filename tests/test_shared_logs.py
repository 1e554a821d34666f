"""A system log line is the node's its header names: a syslog server's file mixes every machine's
lines, and an excerpt posted with a report may mix several nodes."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from slurm_attr.analyze import analyze_bundle
from slurm_attr.config import Settings
from slurm_attr.connectors.slurm import collect
from slurm_attr.extract.writer import writer_host
from slurm_attr.model import Workload
from slurm_attr.ruleset import load as load_rules


def _xid(host: str, style: str = "rfc3164") -> str:
    msg = "NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=python, GPU has fallen off the bus."
    if style == "json":
        return json.dumps({"__REALTIME_TIMESTAMP": "1795169400000000", "_HOSTNAME": host, "MESSAGE": msg})
    return f"Nov 20 10:30:00 {host} kernel: {msg}"


NCCL = "RuntimeError: NCCL error: unhandled system error\n"


@pytest.mark.parametrize(("line", "host"), [
    ("Nov 20 10:30:00 gpu-01 kernel: x", "gpu-01"),
    ("<4>Nov 20 10:30:00 gpu-01.cluster.example.org kernel: x", "gpu-01.cluster.example.org"),
    ("<4>1 2026-11-20T10:30:00Z gpu-01 kernel - - - x", "gpu-01"),
    ("2026-11-20T10:30:00+0000 gpu-01 kernel: x", "gpu-01"),
    ("Fri 2026-11-20 10:30:00 UTC gpu-01 slurmd[812]: x", "gpu-01"),
    ("1795169400.123456 gpu-01 kernel: x", "gpu-01"),
    ('{"__CURSOR": "s=1", "_HOSTNAME": "gpu-01", "MESSAGE": "x"}', "gpu-01"),
    # dmesg and program logs name no writer
    ("[Fri Nov 20 10:30:00 2026] NVRM: Xid (PCI:0000:18:00): 79", None),
    ("[12345.678901] NVRM: Xid (PCI:0000:18:00): 79", None),
    ("2026-11-20T10:30:00,123456+00:00 NVRM: Xid (PCI:0000:18:00): 79", None),
    ("2026-11-20 10:30:00,123 - ERROR - x", None),
])
def test_the_writer_is_read_from_every_header_style(line, host):
    assert writer_host(line) == host


@pytest.mark.parametrize("style", ["rfc3164", "json"])
def test_a_shared_log_gives_each_line_to_the_node_that_wrote_it(make_bundle, style):
    shared = "\n".join([_xid("login-07", style), _xid("gpu-02", style)]) + "\n"
    d = analyze_bundle(make_bundle({"nodes/messages": shared, "app/out.log": NCCL},
                                   nodes="gpu-[01-02]", gpus_per_node=8))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("gpu", ["gpu-02"])
    # both nodes' coverage names the shared file, so neither reads as unseen
    rows = {c["node"]: c for c in d["coverage"] if c["collector"] == "node_syslog"}
    assert all(rows[n]["status"] == "ok" and "nodes/messages" in rows[n]["files"] for n in ("gpu-01", "gpu-02"))


def test_a_shared_logs_lines_from_machines_outside_the_job_are_not_its_evidence(make_bundle):
    d = analyze_bundle(make_bundle({"nodes/messages": _xid("gpu-17") + "\n", "app/out.log": NCCL},
                                   nodes="gpu-[01-02]", gpus_per_node=8))
    assert d["sub_domain"] != "gpu"


def test_a_line_in_one_nodes_log_naming_another_node_of_the_job_is_that_nodes(make_bundle):
    d = analyze_bundle(make_bundle({"nodes/gpu-01/syslog": _xid("GPU-02.cluster") + "\n", "app/out.log": NCCL},
                                   nodes="gpu-[01-02]", gpus_per_node=8))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("gpu", ["gpu-02"])


def test_a_nodes_own_log_keeps_lines_whose_header_names_it_otherwise(make_bundle):
    # Slurm's NodeName need not be the machine's hostname, which is what syslog writes
    d = analyze_bundle(make_bundle({"nodes/gpu-01/syslog": _xid("r12u07") + "\n", "app/out.log": NCCL},
                                   nodes="gpu-[01-02]", gpus_per_node=8))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("gpu", ["gpu-01"])


def test_live_a_node_log_template_without_a_node_is_read_once_as_a_shared_log(tmp_path):
    (tmp_path / "messages").write_text("\n".join([_xid("gpu-02"), _xid("gpu-17")]) + "\n")
    start = datetime(2026, 11, 20, 10, tzinfo=UTC)
    workload = Workload(cluster="c", job_id="9", attempt=0, name="j", user="root", partition="p",
                        nodelist="gpu-[01-02]", nodes=["gpu-01", "gpu-02"], start=start,
                        end=start.replace(hour=11), state="FAILED", exit_code="1:0")
    settings = Settings(node_logs=(str(tmp_path / "messages"),), sources=("node_logs",), timezone="UTC")
    obs = collect(workload, load_rules(None), settings, {}, client=None)  # type: ignore[arg-type]
    xids = [e for e in obs.events if e.kind == "gpu_xid"]
    assert [e.node for e in xids] == ["gpu-02"]  # once, on its writer; gpu-17 is not the job's
    rows = {c.node: c for c in obs.coverage if c.collector == "node_syslog"}
    assert rows["gpu-01"].status == rows["gpu-02"].status == "ok"
