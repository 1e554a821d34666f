"""Golden tests: every bundled sample job gives the diagnosis a reviewer checked by hand."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import sample_dirs
from golden import document_diff, mismatches

from slurm_attr.analyze import analyze_bundle
from slurm_attr.output.diagnosis import dumps


@pytest.mark.parametrize("bundle", sample_dirs(), ids=lambda p: p.name)
def test_sample_diagnosis_matches_expected(bundle):
    expected = json.loads((bundle / "expected.json").read_text())
    diagnosis = analyze_bundle(bundle)
    assert mismatches(expected, diagnosis) == []
    assert diagnosis["schema"] == "slurm-attr/diagnosis/v1"
    assert diagnosis["errors"] == []


@pytest.mark.parametrize("bundle", sample_dirs(), ids=lambda p: p.name)
def test_sample_diagnosis_is_the_reviewed_document(bundle):
    """The whole explanation is pinned, not only the verdict: a demoted symptom, a dropped
    evidence line or a changed sentence shows as a diff of diagnosis.json."""
    diff = document_diff(bundle / "diagnosis.json", analyze_bundle(bundle))
    assert diff is None, f"the diagnosis is not the reviewed one:\n{diff}"


def test_there_are_enough_samples_covering_every_sub_domain():
    seen = {json.loads((b / "expected.json").read_text())["sub_domain"] for b in sample_dirs()}
    wanted = {"gpu", "gpu_memory", "nvlink", "network", "storage", "host", "application",
              "gpu_oom", "host_oom", "time_limit", "preemption", "cancelled", "ambiguous", "unknown"}
    assert len(sample_dirs()) >= 16
    assert wanted <= seen


def test_samples_are_mostly_noise():
    for bundle in sample_dirs():
        d = analyze_bundle(bundle)
        lines = sum(c["lines"] for c in d["coverage"])
        hits = sum(s["count"] for s in d["symptoms"])
        assert hits / lines <= 0.05 + 1e-9 or lines < 100, bundle.name


def test_worked_example_keeps_nccl_errors_as_interesting_with_their_lines():
    bundle = next(b for b in sample_dirs() if b.name.startswith("xid149"))
    d = analyze_bundle(bundle)
    nccl = [s for s in d["symptoms"] if s["kind"] == "nccl_error"]
    assert len(nccl) == 3
    for s in nccl:
        assert s["role"] == "interesting"
        assert s["demoted_by"] == "cause_explains_symptoms"
        assert s["explained_by"] == d["root_cause"]["event"]
        source = bundle / s["source"]["file"]
        assert source.read_text().splitlines()[s["source"]["line"] - 1] == s["source"]["text"]
    root = d["symptoms"][d["root_cause"]["event"]]
    assert "signal integrity" in root["fields"]["decoded"]


def test_diagnosis_is_byte_identical_whatever_the_file_order(tmp_path):
    bundle = next(b for b in sample_dirs() if b.name.startswith("xid79"))
    first = dumps(analyze_bundle(bundle))
    copy = tmp_path / "copy"
    # Recreate the files in reverse order so directory listing order differs on disk.
    for src in sorted(bundle.rglob("*"), reverse=True):
        dst = copy / src.relative_to(bundle)
        if src.is_dir():
            dst.mkdir(parents=True, exist_ok=True)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
    assert dumps(analyze_bundle(copy)) == first
    assert dumps(analyze_bundle(bundle)) == first


def test_the_document_bytes_are_jsons_canonical_form():
    # dumps() writes with orjson; the contract is json.dumps(sort_keys, indent=2, no ASCII escapes).
    for bundle in sample_dirs():
        d = analyze_bundle(bundle)
        d["verdict"] += " — ünïcode 中文 \U0001f525 \"quoted\" back\\slash \t tab"
        assert dumps(d) == json.dumps(d, sort_keys=True, indent=2, ensure_ascii=False) + "\n", bundle.name
