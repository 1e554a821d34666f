from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from slurm_attr.extract.timestamps import Clock

ANCHOR = datetime(2026, 1, 1, 3, 0, tzinfo=UTC)


@pytest.mark.parametrize(("line", "expected", "quality"), [
    ("Dec 31 23:59:58 gpu-01 kernel: x", datetime(2025, 12, 31, 23, 59, 58, tzinfo=UTC), "inferred_year"),
    ("Jan  1 02:00:00 gpu-01 kernel: x", datetime(2026, 1, 1, 2, 0, tzinfo=UTC), "inferred_year"),
    ("<34>Jan  1 02:00:00 gpu-01 sshd: x", datetime(2026, 1, 1, 2, 0, tzinfo=UTC), "inferred_year"),
    ("2026-01-01T02:00:00.250+02:00 gpu-01 kernel: x",
     datetime(2026, 1, 1, 0, 0, 0, 250000, tzinfo=UTC), "exact"),
    ("<13>1 2026-01-01T02:00:00Z gpu-01 app - - - x", datetime(2026, 1, 1, 2, 0, tzinfo=UTC), "exact"),
    ("[Thu Jan  1 02:00:00 2026] NVRM: x", datetime(2026, 1, 1, 2, 0, tzinfo=UTC), "exact"),
    ("[Jan 01 2026 02:00:00] [ERROR] [tid 1] x", datetime(2026, 1, 1, 2, 0, tzinfo=UTC), "exact"),
    ("[2026-01-01T02:00:00.123] error: Nodes x not responding",
     datetime(2026, 1, 1, 2, 0, 0, 123000, tzinfo=UTC), "exact"),
    ("2026-01-01 02:00:00,500 | INFO | x", datetime(2026, 1, 1, 2, 0, 0, 500000, tzinfo=UTC), "exact"),
    ("2026/01/01 02:00:00 enroot: x", datetime(2026, 1, 1, 2, 0, tzinfo=UTC), "exact"),
    ("kern  :err   : [Thu Jan  1 02:00:00 2026] NVRM: x", datetime(2026, 1, 1, 2, 0, tzinfo=UTC), "exact"),
    ("1767232800.250000 gpu-01 kernel: x", datetime(2026, 1, 1, 2, 0, 0, 250000, tzinfo=UTC), "exact"),
    ('{"__CURSOR": "s=0a;i=1", "__REALTIME_TIMESTAMP": "1767232800250000", "MESSAGE": "x"}',
     datetime(2026, 1, 1, 2, 0, 0, 250000, tzinfo=UTC), "exact"),
    ('{"host": "gpu-01", "@timestamp": "2026-01-01T03:00:00+01:00", "message": "x"}',
     datetime(2026, 1, 1, 2, 0, tzinfo=UTC), "exact"),
    ('{"msg": "x", "ts": 1767232800250}', datetime(2026, 1, 1, 2, 0, 0, 250000, tzinfo=UTC), "exact"),
    ("  1a | 01/01/2026 | 02:00:00 | Memory #0x87 | Uncorrectable ECC | Asserted",
     datetime(2026, 1, 1, 2, 0, tzinfo=UTC), "exact"),
    ("[rank0]:[E0101 02:00:00.123456789 ProcessGroupNCCL.cpp:632] x",
     datetime(2026, 1, 1, 2, 0, 0, 123456, tzinfo=UTC), "inferred_year"),
])
def test_formats(line, expected, quality):
    stamp = Clock(ANCHOR, UTC).parse(line.removeprefix("[rank0]:"))
    assert stamp.when == expected
    assert stamp.quality == quality


def test_numbers_far_from_the_job_are_not_epoch_times():
    clock = Clock(ANCHOR, UTC)
    assert clock.parse("1000000000 samples seen").when is None
    assert clock.parse('{"step": 5, "ts": "4000000000"}').when is None


def test_raw_dmesg_behind_a_level_prefix_is_boot_relative():
    clock = Clock(ANCHOR, UTC)
    clock.learn_boot(ANCHOR, 100.0)
    stamp = clock.parse("kern  :warn  : [  160.500000] NVRM: x")
    assert stamp.when == ANCHOR + timedelta(seconds=60.5)


def test_naive_times_use_the_cluster_zone():
    clock = Clock(ANCHOR, ZoneInfo("America/Chicago"))
    when = clock.parse("Jan  1 02:00:00 gpu-01 kernel: x").when
    assert when.utcoffset() == timedelta(hours=-6)


def test_raw_dmesg_is_placed_by_a_learned_boot_time():
    clock = Clock(ANCHOR, UTC)
    assert clock.parse("[  100.000000] NVRM: x").when is None
    syslog = clock.parse("Jan  1 02:00:00 gpu-01 kernel: [ 3600.000000] x")
    clock.learn_boot(syslog.when, syslog.mono)
    stamp = clock.parse("[ 3660.500000] NVRM: x")
    assert stamp.when == datetime(2026, 1, 1, 2, 1, 0, 500000, tzinfo=UTC)
    assert stamp.quality == "boot_relative"


def test_garbage_has_no_time():
    assert Clock(ANCHOR, UTC).parse("hello 99:99:99 world").when is None
    assert Clock(ANCHOR, UTC).parse("Feb 30 10:00:00 x").when is None
