"""The live dashboard over real HTTP: sign-in, server-side filtering, sorting and paging, the job
and node pages, escaping of hostile job text, and the pages in headless Chromium (screenshots kept
as test artefacts)."""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from conftest import EVIL, evil_bundle, sample_dirs
from test_service import READ, SUBMIT, Service, start_service

from slurm_attr.analyze import analyze_bundle
from slurm_attr.store.repository import Store

WINDOW = "since=2026-01-01&until=2027-01-01"
COPIES = 240  # fabricated attempts besides the samples: three pages of the jobs table


def evil_diagnosis(tmp: Path) -> dict:
    return analyze_bundle(evil_bundle(tmp / "evil"))


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("dashboard")
    samples = [analyze_bundle(b) for b in sample_dirs()]
    copies = []
    for i in range(COPIES):
        d = copy.deepcopy(samples[i % len(samples)])
        d["workload"].update(cluster="fab", job_id=str(500_000 + i))
        copies.append(d)
    db = f"sqlite:///{folder / 'attr.db'}"
    with Store.open(db) as store:
        store.save_many([*samples, *copies, evil_diagnosis(folder)])
    yield from start_service(folder, db)


def get(site: Service, path: str, **kw) -> httpx.Response:
    return site.client(READ).get(path, **kw)


def rows(html: str) -> list[str]:
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return re.findall(r"<tr>.*?</tr>", body, re.S)


def test_pages_need_a_token_and_browsers_are_sent_to_sign_in(site):
    anon = httpx.Client(base_url=site.url)
    browser = anon.get("/jobs.html?q=bob", headers={"Accept": "text/html"})
    assert browser.status_code == 303 and browser.headers["location"] == "/login.html?next=jobs.html%3Fq%3Dbob"
    assert anon.get("/jobs.html").status_code == 401
    assert anon.get("/login.html").status_code == 200  # the sign-in page itself is open
    assert anon.get("/static/style.css").status_code == 200
    assert anon.get("/static/../../etc/passwd").status_code == 404


def test_sign_in_sets_a_read_only_cookie(site):
    anon = httpx.Client(base_url=site.url)
    bad = anon.post("/session", content=f"token=wrong-token-wrong-token&next={quote('jobs.html')}",
                    headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert bad.status_code == 303 and bad.headers["location"].startswith("/login.html?")
    assert "slurm_attr_token" not in bad.headers.get("set-cookie", "")
    for target, expected in (("jobs.html?q=bob", "/jobs.html?q=bob"), ("//evil.example/x", "/index.html"),
                             ("https://evil.example/", "/index.html")):
        r = anon.post("/session", content=f"token={SUBMIT}&next={quote(target, safe='')}",
                      headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert r.status_code == 303 and r.headers["location"] == expected, target
        cookie = r.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Max-Age" in cookie
    signed = httpx.Client(base_url=site.url, cookies={"slurm_attr_token": SUBMIT})
    assert signed.get(f"/jobs.html?{WINDOW}").status_code == 200
    # The cookie never authorises a write, even holding a submit token.
    assert signed.post("/v1/attributions", content=b"x", headers={"Content-Type": "application/gzip"}).status_code == 401


def test_jobs_table_filters_sorts_and_pages_on_the_server(site):
    total = len(sample_dirs()) + COPIES + 1
    first = get(site, f"/jobs.html?{WINDOW}")
    assert first.status_code == 200 and f"({total})" in first.text
    assert f"1–100 of {total}" in first.text and len(rows(first.text)) == 100
    assert 'aria-sort="descending"><a href="jobs.html?' in first.text  # the end column, newest first
    nxt = re.search(r'<a href="([^"]+)" rel="next">', first.text)[1].replace("&amp;", "&")
    second = get(site, "/" + nxt)
    assert "101–200 of" in second.text and set(rows(second.text)).isdisjoint(rows(first.text))
    bob = get(site, f"/jobs.html?{WINDOW}&q=bob").text
    assert len(rows(bob)) == 1 + sum(1 for i in range(COPIES) if i % len(sample_dirs()) == _bob_index())
    by_user = get(site, f"/jobs.html?{WINDOW}&sort=user&dir=asc&cluster=hopper").text
    users = [re.findall(r"<td>(.*?)</td>", r)[2] for r in rows(by_user)]
    assert users == sorted(users) and 'aria-sort="ascending"' in by_user
    gpu = get(site, f"/jobs.html?{WINDOW}&sub_domain=gpu,host&cluster=hopper").text
    assert all("gpu" in r or "host" in r for r in rows(gpu))
    one = get(site, f"/jobs.html?{WINDOW}&q=881977&cluster=hopper").text  # copies quote it in their verdict
    assert len(rows(one)) == 1 and 'href="jobs/hopper-881977-0.html"' in one


def _bob_index() -> int:
    return [json.loads((p / "workload.json").read_text()).get("user") for p in sample_dirs()].index("bob")


def test_job_node_and_overview_pages(site):
    job = get(site, "/jobs/hopper-881977-0.html")
    assert job.status_code == 200 and "XID 79" in job.text and 'href="../nodes/gpu-005.html"' in job.text
    assert 'href="../static/style.css"' in job.text
    assert get(site, "/jobs/hopper-881977-9.html").status_code == 404
    assert get(site, "/jobs/nothing.html").status_code == 404
    node = get(site, f"/nodes/gpu-005.html?{WINDOW}")
    xid79 = [p.name for p in sample_dirs()].index("xid79-gpu-off-bus")
    expected = 1 + sum(1 for i in range(COPIES) if i % len(sample_dirs()) == xid79)  # with its copies
    assert node.status_code == 200 and "XID 79" in node.text
    assert len(rows(node.text.split("Failure history")[1])) == expected
    nodes = get(site, f"/nodes.html?{WINDOW}").text
    assert 'href="nodes/gpu-005.html"' in nodes
    overview = get(site, f"/?{WINDOW}").text
    assert "Failures overview" in overview and 'href="jobs/' in overview


def test_hostile_job_text_is_inert_on_every_page(site):
    for path in (f"/jobs.html?{WINDOW}&cluster=c", "/jobs/c-666-0.html", f"/?{WINDOW}",
                 f"/nodes.html?{WINDOW}", f"/jobs.html?{WINDOW}&q={quote(EVIL)}"):
        html = get(site, path).text
        assert "<script>window.pwned" not in html and "<img src=x" not in html and "\x1b" not in html, path
    page = get(site, "/jobs/c-666-0.html")
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]  # and no inline script runs


# ---------------------------------------------------------------------------- in a browser
def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("chromium is not installed (the CI script installs it)")
    return path


def browse(site: Service, target: str, *extra: str) -> subprocess.CompletedProcess:
    """Open `target` signed in: the sign-in link carries the token in its fragment, the page's
    script posts it and follows the redirect (virtual time lets that finish before the dump)."""
    url = f"{site.url}/login.html?next={quote(target, safe='')}#token={READ}"
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
           "--virtual-time-budget=10000", *extra, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


def console(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


@pytest.mark.browser
def test_dashboard_in_a_real_browser(site, tmp_path_factory):
    overview = browse(site, f"index.html?{WINDOW}", "--dump-dom")
    assert "Failures overview" in overview.stdout and console(overview.stderr) == []
    jobs = browse(site, f"jobs.html?{WINDOW}&q=bob", "--dump-dom")
    assert console(jobs.stderr) == []
    found = rows(jobs.stdout)
    assert 0 < len(found) < 20 and all("bob" in r for r in found)
    link = re.search(r'href="(jobs/[^"]+\.html)"', found[0])[1]
    job = browse(site, link, "--dump-dom")
    assert "Root cause" in job.stdout and console(job.stderr) == []
    evil = browse(site, "jobs/c-666-0.html", "--dump-dom").stdout
    assert "<img src=\"x\"" not in evil and "window.pwned=1</script>" not in evil
    shots = tmp_path_factory.mktemp("artifacts")
    for name, target in (("dashboard-overview.png", f"index.html?{WINDOW}"),
                         ("dashboard-jobs.png", f"jobs.html?{WINDOW}&q=bob"), ("dashboard-job.png", link)):
        browse(site, target, f"--screenshot={shots / name}", "--window-size=1400,1600")
        assert (shots / name).stat().st_size > 10_000, name
    print(f"screenshots in {shots}")


# ---------------------------------------------------------------------------- the shared pages
def test_node_pages_have_state_timeline_and_headers(site):
    node = get(site, f"/nodes/gpu-005.html?{WINDOW}").text
    assert "<thead><tr><th>Sub-domain</th><th>Root cause</th><th>Failures</th></tr></thead>" in node
    timeline = node.split("<h2>Timeline</h2>", 1)[1].split("</section>", 1)[0]
    assert "XID 79" in timeline and "881977" in timeline
    assert "Last recorded state:" in node
    jobs = get(site, f"/jobs.html?{WINDOW}&q=881977&cluster=hopper").text
    assert "<th><a" in jobs and "Root node" in jobs and "Attempt" in jobs and "Name" in jobs
    assert 'href="nodes/gpu-005.html">gpu-005</a>' in rows(jobs)[0]  # the root node, linked


def test_static_site_and_reports(site, tmp_path):
    from click.testing import CliRunner

    from slurm_attr.cli import cli

    runner = CliRunner()
    base = ["report", "--since", "2026-01-01", "--until", "2027-01-01", "--db", site.db]
    out = tmp_path / "site"
    assert runner.invoke(cli, [*base, "--format", "html", "--out", str(out)]).exit_code == 0
    nodes = (out / "nodes.html").read_text()
    assert 'href="nodes/gpu-005.html"' in nodes
    page = (out / "nodes" / "gpu-005.html").read_text()
    assert "<th>Root cause</th><th>Failures</th>" in page and "<h2>Timeline</h2>" in page
    jobs = (out / "jobs.html").read_text()
    assert '<th aria-sort="descending">End (UTC)</th>' in jobs and "<th>Root node</th>" in jobs
    report = json.loads(runner.invoke(cli, [*base, "--format", "json", "--sub-domain", "gpu,host",
                                            "--cluster", "hopper"]).stdout)
    assert report["query"]["sub_domain"] == "gpu,host" and report["count"] == len(report["diagnoses"]) > 0
    assert {r["sub_domain"] for r in report["diagnoses"]} <= {"gpu", "host"}
    assert {"gpu", "host"} <= {r["sub_domain"] for r in report["diagnoses"]}
    xid = next(r for r in report["diagnoses"] if r["job_id"] == "881977")
    assert xid["root_node"] == "gpu-005" and xid["name"] and xid["exit_code"] and xid["evidence_status"]
    csv_head = runner.invoke(cli, [*base, "--format", "csv"]).stdout.splitlines()[0]
    for column in ("attempt", "name", "root_node", "exit_code", "evidence_status"):
        assert f'"{column}"' in csv_head
    text = runner.invoke(cli, [*base, "--cluster", "hopper"]).stdout
    assert "ROOT NODE" in text and "gpu-005" in text


def test_node_hours_when_a_cluster_has_no_gpus(make_bundle, tmp_path):
    from click.testing import CliRunner

    from slurm_attr.cli import cli

    bundle = make_bundle({"app/out.log": "Traceback (most recent call last):\nValueError: x\n"},
                         gpus_per_node=0)
    db = f"sqlite:///{tmp_path / 'cpu.db'}"
    runner = CliRunner()
    assert runner.invoke(cli, ["analyze", str(bundle), "--save", "--db", db]).exit_code == 0
    base = ["report", "--since", "2026-01-01", "--until", "2027-01-01", "--db", db]
    assert "2 node-hours lost (no GPUs recorded)" in runner.invoke(cli, base).stdout
    out = tmp_path / "site"
    runner.invoke(cli, [*base, "--format", "html", "--out", str(out)])
    index = (out / "index.html").read_text()
    assert "node-hours lost" in index and "2.0 n</td>" in (out / "jobs.html").read_text()


def test_chart_slots_every_bucket_and_has_a_y_axis():
    from datetime import UTC, datetime, timedelta

    import pandas as pd

    from slurm_attr.report.site import _chart

    end = datetime(2026, 11, 20, 10, 30, tzinfo=UTC)
    one_hour = pd.DataFrame({"end": pd.to_datetime([end] * 3, utc=True), "sub_domain": ["gpu", "gpu", "host"],
                             "job_id": ["1", "2", "3"]})
    c = _chart(one_hour, (end - timedelta(days=1), end + timedelta(minutes=5)))
    assert c["freq"] == "h" and len(c["bars"]) >= 24  # not one full-width band
    assert sum(1 for b in c["bars"] if b["total"]) == 1 and c["ticks"][-1] == c["max"] >= 3
    apart = pd.DataFrame({"end": pd.to_datetime([end, end + timedelta(days=20)], utc=True),
                          "sub_domain": ["gpu", "host"], "job_id": ["1", "2"]})
    d = _chart(apart, (end - timedelta(days=5), end + timedelta(days=25)))
    assert d["freq"] == "D" and len(d["bars"]) >= 30 and sum(1 for b in d["bars"] if b["total"]) == 2
    labels = [b["label"] for b in d["bars"]]
    assert labels == sorted(labels) and len(set(labels)) == len(labels)  # one slot per day, in order


def test_several_worker_processes(tmp_path):
    db = f"sqlite:///{tmp_path / 'w.db'}"
    for svc in start_service(tmp_path, db, "--workers", "2"):
        saved = svc.client(SUBMIT).post("/v1/attributions?save=true", json={
            "workload": {"cluster": "t", "job_id": "9", "nodes": "n[1-2]", "user": "u", "partition": "p",
                         "start": "2026-11-20T10:00:00+00:00", "end": "2026-11-20T11:00:00+00:00",
                         "state": "FAILED", "exit_code": "1:0"},
            "app": {"out.log": "Traceback (most recent call last):\nValueError: x\n"}})
        assert saved.status_code == 200, saved.text
        for _ in range(6):  # whichever process answers, it sees the same store
            assert get(svc, "/v1/diagnoses/t/9/0").status_code == 200
