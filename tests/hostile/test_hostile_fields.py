"""Class 4 and 5: malformed fields give one clear line and exit status 2, never a traceback; in a
multi-bundle run each bundle stands alone; metrics with impossible numbers cost a note, not the
diagnosis."""

from __future__ import annotations

import json
import sqlite3

import pytest
from hostile_helpers import cli, write_bundle

from slurm_attr.analyze import analyze_bundle

BAD_FIELDS = [
    ({"attempt": "abc"}, "attempt must be a whole number"),
    ({"attempt": -1}, "attempt must be a whole number"),
    ({"gpus_per_node": "eight"}, "gpus_per_node must be a whole number"),
    ({"gpus_per_node": 10**9}, "gpus_per_node must be a whole number"),
    ({"timezone": 5}, "timezone must be an IANA time zone"),
    ({"timezone": ["UTC"]}, "timezone must be a string"),
    ({"timezone": "Mars/Olympus"}, "timezone must be an IANA time zone"),
    ({"timezone": "../../etc/passwd"}, "timezone must be an IANA time zone"),
    ({"state": ""}, "state must be one of"),
    ({"state": ["FAILED"]}, "state must be a string"),
    ({"start": "0001-01-01T00:00:00+00:00"}, "start must be a time between"),
    ({"end": "9999-12-31T23:59:59+00:00"}, "end must be a time between"),
    ({"start": "yesterday"}, "start must be an ISO 8601 time"),
    ({"start": "2026-11-20T10:00:00"}, "start must be an ISO 8601 time with a UTC offset"),
    ({"job_id": "١٢٣"}, "job_id must be a Slurm job id"),  # Arabic-Indic digits
    ({"job_id": "42; rm -rf /"}, "job_id must be a Slurm job id"),
    ({"job_id": None}, "missing 'job_id'"),
    ({"exit_code": "banana"}, "exit_code must be"),
    ({"failed_node": "../x"}, "failed_node must be a hostname"),
    ({"nodes": ["gpu-01"]}, "nodes must be a string"),
    ({"nodes": "gpu-[01-02"}, "nodes: bad node list"),
]


@pytest.mark.parametrize(("fields", "message"), BAD_FIELDS, ids=[m for _, m in BAD_FIELDS])
def test_a_bad_field_is_one_clear_line_and_exit_2(tmp_path, fields, message):
    bundle = write_bundle(tmp_path / "bundle", **{k: (... if v is None else v) for k, v in fields.items()})
    run = cli("analyze", str(bundle))
    assert run.rc == 2
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert message in lines[0], lines
    assert lines[0].startswith(f"slurm-attr: {bundle}: workload.json")


def test_null_optional_fields_mean_absent(tmp_path):
    d = analyze_bundle(write_bundle(tmp_path / "bundle", gpus_per_node=None, timezone=None, reason=None))
    assert d["workload"]["gpus_per_node"] == 8


@pytest.mark.parametrize("content", [b"[" * 100_000 + b"]" * 100_000, b"\xff\xfe{}", b"[1, 2]", b"{"])
def test_unparsable_workload_json_is_a_clear_error(tmp_path, content):
    bundle = write_bundle(tmp_path / "bundle")
    (bundle / "workload.json").write_bytes(content)
    run = cli("analyze", str(bundle))
    assert run.rc == 2 and "Traceback" not in run.stderr
    assert "workload.json" in run.stderr.splitlines()[0]


@pytest.mark.parametrize("sacct", [
    {"jobs": "nope"}, {"jobs": [{"job_id": 4242, "time": {"start": 1e300, "end": "x"}}]},
    {"jobs": [{"job_id": 4242, "steps": [None, 5]}]}, [1, 2, 3],
    {"jobs": [{"job_id": 4242, "state": {"current": 7}, "exit_code": {"return_code": {"number": "x"}}}]},
])
def test_malformed_sacct_json_is_a_clear_error_or_ignored(tmp_path, sacct):
    bundle = write_bundle(tmp_path / "bundle", sacct="sacct.json")
    (bundle / "sacct.json").write_text(json.dumps(sacct))
    run = cli("analyze", str(bundle))
    assert "Traceback" not in run.stderr
    assert run.rc in (0, 2)
    if run.rc == 2:
        assert "sacct.json" in run.stderr.splitlines()[0]


@pytest.mark.parametrize("value", [["1e300", "79"], ["1795170600", "inf"], ["1795170600", "nan"],
                                   ["-1e308", "1"], [None, "1"], "garbage"])
def test_impossible_metrics_cost_a_note_not_the_diagnosis(tmp_path, value):
    doc = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"__name__": "DCGM_FI_DEV_XID_ERRORS", "Hostname": "gpu-01", "gpu": "0"},
         "values": [value, ["1795170600", "79"]]}]}}
    bundle = write_bundle(tmp_path / "bundle", {"metrics/dcgm.json": json.dumps(doc),
                                                "metrics/broken.json": "{not json"})
    d = analyze_bundle(bundle)
    metrics = next(c for c in d["coverage"] if c["collector"] == "metrics")
    assert any("broken.json: unreadable" in n for n in metrics["notes"])
    assert any(e["kind"] == "gpu_xid" for e in d["symptoms"])  # the good sample still counts


def test_one_bad_bundle_does_not_lose_the_good_ones(tmp_path):
    good = write_bundle(tmp_path / "good", {"app/out.log": "ValueError: bad config\n"})
    bad = write_bundle(tmp_path / "bad", attempt="abc")
    missing = tmp_path / "nope"
    db = tmp_path / "attr.db"
    run = cli("analyze", str(good), str(bad), str(missing), "--save", db=db)
    assert run.rc == 2
    assert f"== {good}" in run.stdout and "Outcome:" in run.stdout
    assert "2 of 3 bundles could not be used" in run.stderr
    assert "saved 1 new or changed diagnoses" in run.stderr
    assert sqlite3.connect(db).execute("SELECT count(*) FROM diagnoses").fetchone() == (1,)


def test_saved_counts_rows_not_bundles(tmp_path):
    good = write_bundle(tmp_path / "good", {"app/out.log": "ValueError: bad config\n"})
    db = tmp_path / "attr.db"
    assert "saved 1 new" in cli("analyze", str(good), "--save", db=db).stderr
    assert "saved 0 new or changed diagnoses (1 already stored unchanged)" in cli(
        "analyze", str(good), "--save", db=db).stderr


@pytest.mark.parametrize("since", ["99999999d", "99999999999999999999w", "0001-01-01", "nonsense"])
def test_report_window_out_of_range_is_a_usage_error(tmp_path, since):
    run = cli("report", "--since", since, db=tmp_path / "attr.db")
    assert run.rc == 2 and "Traceback" not in run.stderr
    assert "Invalid value for --since" in run.stderr
