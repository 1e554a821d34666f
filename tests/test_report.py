"""Reports: formats, windows, escaping of hostile job output, and the site in a real browser."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner
from conftest import ROOT, evil_bundle, sample_dirs

from slurm_attr.cli import cli
from slurm_attr.report.query import parse_when

ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'r.db'}"
    runner = CliRunner()
    result = runner.invoke(cli, ["analyze", *map(str, sample_dirs()), "--save", "--db", url,
                                 "--format", "json"])
    assert result.exit_code == 0, result.output
    return url


@pytest.fixture(scope="module")
def evil_db(tmp_path_factory):
    root = evil_bundle(tmp_path_factory.mktemp("evil") / "bundle")
    url = f"sqlite:///{root / 'r.db'}"
    assert CliRunner().invoke(cli, ["analyze", str(root), "--save", "--db", url]).exit_code == 0
    return url


def test_parse_when():
    now = datetime(2026, 11, 30, tzinfo=UTC)
    assert parse_when("1d", now) == datetime(2026, 11, 29, tzinfo=UTC)
    assert parse_when("12h", now).hour == 12 and parse_when("2w", now).day == 16
    assert parse_when("30m", now).minute == 30
    assert parse_when("2026-11-01", now) == datetime(2026, 11, 1, tzinfo=UTC)
    with pytest.raises(ValueError):
        parse_when("yesterday", now)


def test_formats_and_filters(db):
    runner = CliRunner()
    base = ["report", "--since", "2026-11-01", "--until", "2026-11-30", "--db", db]
    rows = json.loads(runner.invoke(cli, [*base, "--format", "json"]).stdout)["diagnoses"]
    assert len(rows) == len(sample_dirs())
    gpu = json.loads(runner.invoke(cli, [*base, "--format", "json", "--sub-domain", "gpu"]).stdout)
    gpu_samples = [b for b in sample_dirs()
                   if json.loads((b / "expected.json").read_text())["sub_domain"] == "gpu"]
    assert {r["sub_domain"] for r in gpu["diagnoses"]} == {"gpu"}
    assert len(gpu["diagnoses"]) == len(gpu_samples) >= 2
    comma = json.loads(runner.invoke(cli, [*base, "--format", "json", "--sub-domain", "gpu,host"]).stdout)
    repeated = json.loads(runner.invoke(cli, [*base, "--format", "json", "--sub-domain", "gpu",
                                              "--sub-domain", "host"]).stdout)
    assert comma["diagnoses"] == repeated["diagnoses"]
    assert {r["sub_domain"] for r in repeated["diagnoses"]} == {"gpu", "host"}
    node = json.loads(runner.invoke(cli, [*base, "--format", "json", "--node", "gpu-005"]).stdout)
    assert [r["root_code"] for r in node["diagnoses"]] == ["XID 79"]
    table = list(csv.DictReader(io.StringIO(runner.invoke(cli, [*base, "--format", "csv"]).stdout)))
    xid79 = next(r for r in table if r["root_code"] == "XID 79")
    assert xid79["action"].startswith("Drain the node")  # the suggested action travels with the row
    assert len(table) == len(rows) and "gpu_hours" in table[0]
    text = runner.invoke(cli, [*base, "--user", "bob"]).stdout
    assert "XID 79" in text and "1 failed attempts" in text
    assert "Drain the node" in text  # what to do, beside each cause
    narrow = runner.invoke(cli, ["report", "--since", "2026-11-27", "--until", "2026-11-29",
                                 "--db", db, "--format", "json"]).stdout
    assert 0 < len(json.loads(narrow)["diagnoses"]) < len(rows)


def test_hostile_job_output_is_inert_everywhere(evil_db, tmp_path):
    runner = CliRunner()
    base = ["report", "--since", "2026-11-01", "--until", "2026-11-30", "--db", evil_db]
    text = runner.invoke(cli, base).stdout
    assert "\x1b" not in text
    out = tmp_path / "site"
    assert runner.invoke(cli, [*base, "--format", "html", "--out", str(out)]).exit_code == 0
    for page in out.rglob("*.html"):
        html = page.read_text()
        assert "<script>window.pwned" not in html and "<img src=x" not in html
        assert "\x1b" not in html
    job = next((out / "jobs").glob("*.html")).read_text()
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in job


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("chromium is not installed (the CI script installs it)")
    return path


def _browse(url: str, *extra: str) -> subprocess.CompletedProcess:
    cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
           "--v=0", "--allow-file-access-from-files", *extra, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=90, check=False)


def _console(stderr: str) -> list[str]:
    """Console messages the page produced (errors, uncaught exceptions, logs): ours print none."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def test_console_capture_sees_page_errors(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text("<script>undefinedFunction();</script>")
    assert any("Uncaught" in line for line in _console(_browse(bad.as_uri(), "--dump-dom").stderr))


@pytest.mark.browser
def test_site_in_a_real_browser(db, evil_db, tmp_path):
    runner = CliRunner()
    out = tmp_path / "site"
    result = runner.invoke(cli, ["report", "--since", "2026-11-01", "--until", "2026-11-30",
                                 "--db", db, "--format", "html", "--out", str(out)])
    assert result.exit_code == 0
    index = out / "index.html"
    dom = _browse(index.as_uri(), "--dump-dom")
    assert "Failures overview" in dom.stdout
    assert _console(dom.stderr) == []
    # Every link on the overview and the job table resolves to a file.
    for page in (index, out / "jobs.html"):
        for href in re.findall(r'href="([^"#?]+\.(?:html|css))"', page.read_text()):
            assert (page.parent / href).resolve().is_file(), href
    # The filter narrows the table (driven through ?q= so the browser runs the real script).
    jobs = _browse((out / "jobs.html").as_uri() + "?q=bob", "--dump-dom")
    assert _console(jobs.stderr) == []
    body = jobs.stdout.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = re.findall(r"<tr( hidden=\"\")?>", body)
    assert len(rows) == len(sample_dirs()) and sum(1 for r in rows if not r) == 1
    assert f"1 of {len(sample_dirs())} shown" in jobs.stdout
    # The hostile job page runs no script of the job's.
    evil_out = tmp_path / "evil"
    runner.invoke(cli, ["report", "--since", "2026-11-01", "--until", "2026-11-30", "--db",
                        evil_db, "--format", "html", "--out", str(evil_out)])
    page = next((evil_out / "jobs").glob("*.html"))
    evil_dom = _browse(page.as_uri(), "--dump-dom").stdout
    assert "<img src=\"x\"" not in evil_dom and "window.pwned=1</script>" not in evil_dom
    ARTIFACTS.mkdir(exist_ok=True)
    job_page = next((out / "jobs").glob("*880412*.html"))
    for name, target, size in (("overview.png", index, "1400,1800"),
                               ("job.png", job_page, "1400,2200")):
        shot = ARTIFACTS / name
        _browse(target.as_uri(), f"--screenshot={shot}", f"--window-size={size}")
        assert shot.is_file() and shot.stat().st_size > 10_000


def test_job_page_bodies_are_cached_beside_the_site_and_rerendered_when_stale(tmp_path):
    from slurm_attr.analyze import analyze_bundle
    from slurm_attr.report import site
    from slurm_attr.report.query import Filters, load_frame
    from slurm_attr.store.repository import Store

    d = analyze_bundle(sample_dirs()[0])
    window = Filters(parse_when("2026-01-01"), parse_when("2027-01-01"))
    out = tmp_path / "site"
    with Store.open(f"sqlite:///{tmp_path / 'c.db'}") as store:
        store.save_diagnosis(d)
        site.write_site(store, load_frame(store, window), window, out)
        cache = site.BodyCache(out)
        (cached,) = list(cache.dir.iterdir())
        assert d["workload"]["job_id"] in cached.read_text()
        cached.write_text("<p>CACHED</p>")  # a current body is used as it is, not re-rendered
        site.write_site(store, load_frame(store, window), window, out)
        assert "CACHED" in next((out / "jobs").iterdir()).read_text()
        stale = cache.root / "0123456789abcdef"  # a body from an older template version
        stale.mkdir()
        (stale / cached.name).write_text("<p>STALE</p>")
        cached.unlink()
        site.write_site(store, load_frame(store, window), window, out)
        page = next((out / "jobs").iterdir()).read_text()
        assert "STALE" not in page and d["workload"]["job_id"] in page
        assert not stale.exists() and [p.name for p in cache.root.iterdir()] == [cache.version]
        store.save_diagnosis({**d, "verdict": d["verdict"] + " (re-diagnosed)"})  # a new hash
        site.write_site(store, load_frame(store, window), window, out)
        (body,) = list(cache.dir.iterdir())  # the old diagnosis' body went with it
        assert body.name != cached.name and "(re-diagnosed)" in body.read_text()


def test_the_overview_lists_what_the_diagnoses_could_not_see(tmp_path):
    from collections import Counter

    from slurm_attr.analyze import analyze_bundle
    from slurm_attr.report import site
    from slurm_attr.report.query import Filters, load_frame
    from slurm_attr.store.repository import Store

    docs = [analyze_bundle(b) for b in sample_dirs()]
    expected = Counter((c["collector"], c["status"]) for d in docs for c in d["coverage"]
                       if c["status"] != "ok")
    assert expected, "the samples should include sources that could not be read"
    window = Filters(parse_when("2020-01-01"), parse_when("2030-01-01"))
    with Store.open(f"sqlite:///{tmp_path / 'g.db'}") as store:
        store.save_many(docs)
        site.write_site(store, load_frame(store, window), window, tmp_path / "site")
    page = (tmp_path / "site" / "index.html").read_text()
    table = page[page.index('id="gaps"'):].split("</table>")[0]
    for (collector, status), n in sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))[:10]:
        assert f"<td>{collector}</td><td>{status}</td><td class=\"num\">{n}</td>" in table


def test_a_page_cache_someone_else_could_write_is_not_trusted(tmp_path):
    """Cached bodies go into pages as they are: a planted file, a link or a directory others can
    write is ignored, and the body is rendered from the diagnosis."""
    import os

    from slurm_attr.analyze import analyze_bundle
    from slurm_attr.report import site
    from slurm_attr.report.query import Filters, load_frame
    from slurm_attr.store.repository import Store

    d = analyze_bundle(sample_dirs()[0])
    window = Filters(parse_when("2026-01-01"), parse_when("2027-01-01"))
    out = tmp_path / "site"
    with Store.open(f"sqlite:///{tmp_path / 'p.db'}") as store:
        store.save_diagnosis(d)
        site.write_site(store, load_frame(store, window), window, out)
        cache = site.BodyCache(out)
        (body,) = list(cache.dir.iterdir())
        body.unlink()
        (tmp_path / "planted.html").write_text("<script>PLANTED</script>")
        body.symlink_to(tmp_path / "planted.html")  # a link is never followed
        site.write_site(store, load_frame(store, window), window, out)
        assert "PLANTED" not in next((out / "jobs").iterdir()).read_text()
        body.unlink(missing_ok=True)
        body.write_text("<script>PLANTED</script>")
        os.chmod(cache.dir, 0o777)  # a directory anyone could have written to
        site.write_site(store, load_frame(store, window), window, out)
        page = next((out / "jobs").iterdir()).read_text()
        assert "PLANTED" not in page and d["workload"]["job_id"] in page
