"""Live mode reads log lines that carry no UTC offset in the cluster's zone (by default this
host's), and each log source may have its own."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from slurm_attr.config import ConfigError, Settings, build, local_zone_name
from slurm_attr.connectors.slurm import collect
from slurm_attr.model import Workload
from slurm_attr.ruleset import load as load_rules
from slurm_attr.scope.static import BundleError

# 04:30 in Chicago (CST, UTC-6) is 10:30 UTC: inside a job that ran 10:00-11:00 UTC.
XID = "Nov 20 04:30:00 gpu-01 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.\n"
CTLD = "[2026-11-20T04:31:00.000] error: Nodes gpu-01 not responding\n"


def _workload() -> Workload:
    start, end = datetime(2026, 11, 20, 10, tzinfo=UTC), datetime(2026, 11, 20, 11, tzinfo=UTC)
    return Workload(cluster="c", job_id="9", attempt=0, name="j", user="root", partition="p",
                    nodelist="gpu-01", nodes=["gpu-01"], start=start, end=end, state="FAILED",
                    exit_code="1:0")


def _collect(tmp_path, **zones):
    (tmp_path / "gpu-01.log").write_text(XID)
    (tmp_path / "slurmctld.log").write_text(CTLD)
    settings = Settings(node_logs=(str(tmp_path / "{node}.log"),),
                        controller_logs=(str(tmp_path / "slurmctld.log"),),
                        sources=("node_logs", "slurmctld"), **zones)
    return collect(_workload(), load_rules(None), settings, {}, client=None)  # type: ignore[arg-type]


def _xid_time(obs) -> datetime:
    return next(e.time for e in obs.events if e.kind == "gpu_xid")


def test_the_cluster_zone_places_naive_lines(tmp_path):
    obs = _collect(tmp_path, timezone="America/Chicago")
    assert _xid_time(obs) == datetime(2026, 11, 20, 10, 30, tzinfo=UTC)


def test_without_it_the_same_line_lands_hours_away(tmp_path):
    obs = _collect(tmp_path, timezone="UTC")
    assert _xid_time(obs) == datetime(2026, 11, 20, 4, 30, tzinfo=UTC)


def test_each_source_may_have_its_own_zone(tmp_path):
    obs = _collect(tmp_path, timezone="UTC", node_log_timezone="America/Chicago")
    assert _xid_time(obs) == datetime(2026, 11, 20, 10, 30, tzinfo=UTC)
    controller = next(c for c in obs.coverage if c.collector == "controller")
    assert controller.first_time == datetime(2026, 11, 20, 4, 31, tzinfo=UTC)  # still UTC


def test_the_default_is_this_hosts_zone(monkeypatch):
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    assert local_zone_name() == "Asia/Tokyo"
    assert Settings().log_zone() == "Asia/Tokyo"
    monkeypatch.setenv("TZ", "Not/AZone")
    assert local_zone_name() != "Not/AZone"


def test_an_unknown_zone_in_the_config_is_an_error():
    with pytest.raises(ConfigError, match="node_log_timezone"):
        build({"collect": {"node_log_timezone": "Mars/Olympus"}}, {})


def test_a_bundle_names_the_zone_of_each_log_origin(make_bundle):
    """log_timezones in workload.json: node logs in Chicago time, the job's output in UTC."""
    from slurm_attr.analyze import analyze_bundle

    xid = "Nov 20 04:30:00 gpu-01 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, GPU has fallen off the bus.\n"
    chicago = analyze_bundle(make_bundle({"nodes/gpu-01/syslog": xid}, timezone="UTC",
                                         log_timezones={"node": "America/Chicago"}))
    when = datetime.fromisoformat(chicago["root_cause"]["time"])
    assert chicago["sub_domain"] == "gpu" and when == datetime(2026, 11, 20, 10, 30, tzinfo=UTC)
    as_utc = analyze_bundle(make_bundle({"nodes/gpu-01/syslog": xid}, timezone="UTC"))
    assert as_utc["sub_domain"] != "gpu"  # read as UTC, 04:30 is hours before the job started
    with pytest.raises(BundleError, match="log_timezones must be an object mapping node"):
        analyze_bundle(make_bundle({}, log_timezones={"node": "Mars/Olympus"}))
