"""Coverage folding: nodes that all lack the same source read as one row, in the terminal and the page."""

from __future__ import annotations

from slurm_attr.analyze import analyze_bundle
from slurm_attr.output.coverage import fold_coverage
from slurm_attr.output.summary import render_summary
from slurm_attr.report.site import job_body

SYSLOG = "2026-11-20T10:30:00+00:00 gpu-03 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.\n"


def _diagnosis(make_bundle):
    return analyze_bundle(make_bundle({"nodes/gpu-03/syslog": SYSLOG}, nodes="gpu-[01-08]"))


def test_nodes_missing_the_same_source_fold_into_one_hostlist_row(make_bundle):
    rows = fold_coverage(_diagnosis(make_bundle)["coverage"])
    syslog = [r for r in rows if r["collector"] == "node_syslog"]
    # The folded row stands where its first node stood (gpu-01, before gpu-03).
    assert [(r["node"], r["nodes"], r["status"]) for r in syslog] == [
        ("gpu-[01-02,04-08]", 7, "missing"), ("gpu-03", 1, "ok")]
    assert syslog[0]["reason"] == "no system logs for gpu-[01-02,04-08] in the bundle"


def test_few_nodes_stay_one_row_each(make_bundle):
    d = analyze_bundle(make_bundle({}, nodes="gpu-[01-02]"))
    rows = [r for r in fold_coverage(d["coverage"]) if r["collector"] == "node_syslog"]
    assert sorted(r["node"] for r in rows) == ["gpu-01", "gpu-02"]
    assert fold_coverage(d["coverage"]) == [{**r, "nodes": 1 if r["node"] else 0} for r in d["coverage"]]


def test_the_summary_and_the_page_show_the_folded_row(make_bundle):
    d = _diagnosis(make_bundle)
    text = render_summary(d)
    assert "node_syslog/gpu-[01-02,04-08] (7 nodes): missing" in text
    assert "node_syslog/gpu-01:" not in text
    page = job_body(d)
    assert "gpu-[01-02,04-08] (7 nodes)" in page
    assert page.count("cov-missing") == sum(r["status"] == "missing" for r in fold_coverage(d["coverage"]))
