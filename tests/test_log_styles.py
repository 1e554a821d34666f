"""One Xid line written in every style a node log reaches us in: inside the job it decides the case,
an hour before the job it does not (so the time was read, not merely the text matched)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from conftest import T0

from slurm_attr.analyze import analyze_bundle

XID = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus."


def _styles(when: datetime) -> dict[str, str]:
    iso, epoch = when.isoformat(), int(when.timestamp())
    syslog_day = when.strftime("%b %e %H:%M:%S")
    ctime = when.strftime("%a %b %e %H:%M:%S %Y")
    return {
        "rfc3164": f"{syslog_day} gpu-01 kernel: [12345.678901] {XID}",
        "rfc3164-priority": f"<4>{syslog_day} gpu-01 kernel: {XID}",
        "journal-short-iso": f"{when.strftime('%Y-%m-%dT%H:%M:%S%z')} gpu-01 kernel: {XID}",
        "journal-short-precise": f"{when.strftime('%b %d %H:%M:%S')}.123456 gpu-01 kernel: {XID}",
        "journal-short-full": f"{when.strftime('%a %Y-%m-%d %H:%M:%S')} UTC gpu-01 kernel: {XID}",
        "journal-short-unix": f"{epoch}.123456 gpu-01 kernel: {XID}",
        # `-o verbose`: the time is on the entry's header, the message a field below it
        "journal-verbose": f"{when.strftime('%a %Y-%m-%d %H:%M:%S')}.123456 UTC [s=4b2f;i=1c;b=9e1d;m=5f5e;t=5f5e;"
                           f"x=7a]\n    _HOSTNAME=gpu-01\n    PRIORITY=4\n    MESSAGE={XID}",
        "journal-json-pretty": "\n".join(["{", f'\t"__REALTIME_TIMESTAMP" : "{epoch * 10**6}",',
                                          '\t"_HOSTNAME" : "gpu-01",', f'\t"MESSAGE" : "{XID}"', "}"]),
        "journal-json-lines": json.dumps({"__CURSOR": "s=1;i=2", "__REALTIME_TIMESTAMP": str(epoch * 10**6),
                                          "_HOSTNAME": "gpu-01", "MESSAGE": XID}),
        "rfc5424": f"<4>1 {iso} gpu-01 kernel - - - {XID}",
        "rsyslog-precise": f"{iso} gpu-01 kernel: {XID}",
        "dmesg-T": f"[{ctime}] {XID}",
        "dmesg-x": f"kern  :warn  : [{ctime}] {XID}",
        "dmesg-iso": f"{when.strftime('%Y-%m-%dT%H:%M:%S')},123456+00:00 {XID}",
        "loki-logcli": f'{iso} {{host="gpu-01", job="syslog"}} {XID}',
        "shipper-json": json.dumps({"host": "gpu-01", "@timestamp": iso, "message": XID}),
        "crlf": f"{syslog_day} gpu-01 kernel: {XID}\r",
    }


STYLE_NAMES = sorted(_styles(T0))


def _diagnose(make_bundle, style: str, when: datetime) -> dict:
    bundle = make_bundle({
        "nodes/gpu-01/syslog": _styles(when)[style] + "\n",
        "app/slurm-4242.out": "RuntimeError: NCCL error: unhandled system error\n",
    }, gpus_per_node=8)
    return analyze_bundle(bundle)


@pytest.mark.parametrize("style", STYLE_NAMES)
def test_an_xid_during_the_job_decides_it_in_every_style(make_bundle, style):
    d = _diagnose(make_bundle, style, T0 + timedelta(minutes=10))
    assert d["sub_domain"] == "gpu"
    assert d["root_cause"]["nodes"] == ["gpu-01"]


@pytest.mark.parametrize("style", STYLE_NAMES)
def test_an_xid_an_hour_before_the_job_is_placed_before_it(make_bundle, style):
    d = _diagnose(make_bundle, style, T0 - timedelta(hours=1))
    assert d["sub_domain"] != "gpu"
