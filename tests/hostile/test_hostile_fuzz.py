"""Fuzz targets for every parser that reads untrusted input: each either returns a typed value or
raises its one documented error, never anything else. Brief in CI; set SLURM_ATTR_FUZZ_EXAMPLES
(e.g. 20000) for a long run on demand."""

from __future__ import annotations

import gzip
import json
import os
import unicodedata

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slurm_attr.collect.files import ReadStats, iter_blocks
from slurm_attr.model import Workload
from slurm_attr.sanitize import clean, csv_cell
from slurm_attr.scope.slurm import DELIMITER, FIELDS, parse_parsable
from slurm_attr.scope.static import BundleError, load_workload
from slurm_attr.worker.spool import SpoolError, parse_env

FUZZ = settings(max_examples=int(os.environ.get("SLURM_ATTR_FUZZ_EXAMPLES", "150")), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20)
KEYS = ["cluster", "job_id", "attempt", "name", "user", "partition", "nodes", "start", "end", "state",
        "exit_code", "timezone", "gpus_per_node", "reason", "failed_node", "sacct"]
PLAUSIBLE = {"job_id": st.sampled_from(["42", "42_7", "42+1", "x"]),
             "nodes": st.sampled_from(["gpu-[01-02]", "a,b", "", "../x", "n[1-3]x[1-2]"]),
             "start": st.sampled_from(["2026-11-20T10:00:00+00:00", "2026-11-20", "0001-01-01T00:00:00+00:00"]),
             "end": st.sampled_from(["2026-11-20T11:00:00+00:00", "1970-01-01T00:00:00+00:00"]),
             "state": st.sampled_from(["FAILED", "CANCELLED by 0", "", "nope"]),
             "sacct": st.sampled_from(["sacct.json", "../x", "/etc/passwd", "missing.json"])}


def _fields():
    return st.fixed_dictionaries({}, optional={k: PLAUSIBLE.get(k, JSON) | JSON for k in KEYS})


@FUZZ
@given(doc=_fields(), sacct=JSON)
def test_workload_loader_returns_a_workload_or_a_bundle_error(tmp_path_factory, doc, sacct):
    root = tmp_path_factory.mktemp("fuzz")
    (root / "workload.json").write_text(json.dumps(doc))
    (root / "sacct.json").write_text(json.dumps({"jobs": [sacct]} if not isinstance(sacct, dict) else sacct))
    try:
        workload = load_workload(root)
    except BundleError as exc:
        assert str(exc) and "\n" not in str(exc)
    else:
        assert isinstance(workload, Workload) and workload.end >= workload.start


@FUZZ
@given(raw=st.binary(max_size=400), name=st.text(max_size=30))
def test_spool_parser_returns_slurm_variables_or_a_spool_error(raw, name):
    try:
        env = parse_env(raw, name)
    except SpoolError:
        return
    assert env["SLURM_JOB_ID"].isascii() and env["SLURM_JOB_ID"].isdigit()
    assert all(k.startswith("SLURM_") for k in env)


@FUZZ
@given(rows=st.lists(st.lists(st.text(max_size=20), min_size=len(FIELDS), max_size=len(FIELDS) + 1),
                     max_size=5))
def test_sacct_text_parser_never_raises(rows):
    jobs = parse_parsable("\n".join(DELIMITER.join(r) for r in rows))
    assert all(isinstance(v, list) for v in jobs.values())


@FUZZ
@given(lines=st.lists(st.binary(max_size=300).map(lambda b: b.replace(b"\n", b"")), max_size=30),
       packed=st.booleans(), cut=st.integers(min_value=0, max_value=2000))
def test_reader_yields_every_line_once_or_notes_why_not(tmp_path_factory, lines, packed, cut):
    body = b"".join(line + b"\n" for line in lines)
    path = tmp_path_factory.mktemp("r") / "log"
    data = gzip.compress(body) if packed else body
    truncated = packed and cut < len(data)
    path.write_bytes(data[:cut] if truncated else data)
    stats = ReadStats()
    out = b"".join(iter_blocks(path, stats))
    if truncated or body.startswith(b"\x1f\x8b"):  # a plain file that looks gzipped is read as one
        assert body.startswith(out[: max(0, out.rfind(b"\n"))]) or stats.problems
    else:
        assert out == body


@FUZZ
@given(text=st.text(max_size=200))
def test_sanitised_text_has_no_control_or_format_characters(text):
    for out in (clean(text), str(csv_cell(text))):
        assert not any((unicodedata.category(ch) == "Cc" and ch != "\t") or ch in "\u202a\u202b\u202c\u202d\u202e"
                       "\u2066\u2067\u2068\u2069\u200e\u200f\u061c" for ch in out)
    assert not str(csv_cell(text)).startswith(("=", "+", "-", "@"))
