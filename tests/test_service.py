"""The attribution service over real HTTP: `slurm-attr serve` in a subprocess on a loopback port,
against SQLite and PostgreSQL. Auth, every endpoint, byte-identity with the CLI, hostile uploads."""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from conftest import ROOT, SAMPLES, _postgres_url, sample_dirs

from slurm_attr.analyze import analyze_bundle
from slurm_attr.store.repository import Store

READ = "read-token-0123456789abcdef"
SUBMIT = "submit-token-0123456789abcdef"
CAP_MB = 4  # the servers below unpack at most this much per upload
CAP_FILES = 200
XID79 = SAMPLES / "xid79-gpu-off-bus"


@dataclass
class Service:
    url: str
    db: str
    tmp: Path  # the server's TMPDIR: uploads are unpacked below it
    verify: bool | ssl.SSLContext = True  # trusts the test certificate

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60, verify=self.verify)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fake_sacct(folder: Path) -> Path:
    """A sacct that replays 22.05.8's recorded --parsable2 output (and has no JSON plugin)."""
    script = folder / "sacct"
    data = ROOT / "tests" / "data" / "sacct-22.05.8-parsable2.txt"
    script.write_text(f'#!/bin/sh\ncase "$*" in *--json*) exit 1;; esac\ncat "{data}"\n')
    script.chmod(0o755)
    return script


def start_service(folder: Path, db: str, *extra: str) -> Iterator[Service]:
    tokens = folder / "tokens"
    tokens.write_text(f"# the service's tokens\n{READ} read\n{SUBMIT} submit\n")
    tokens.chmod(0o600)
    config = folder / "config.toml"
    config.write_text(f'sacct = "{fake_sacct(folder)}"\ncluster = "attrtest"\n'
                      f"[service]\napi_max_upload_mb = {CAP_MB}\napi_max_upload_files = {CAP_FILES}\n")
    tmp = folder / "server-tmp"
    tmp.mkdir()
    port = free_port()
    env = {**os.environ, "SLURM_ATTR_CONFIG": str(config), "TMPDIR": str(tmp)}
    log = (folder / "server.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "slurm_attr.cli", "serve", "--host", "127.0.0.1",
                             "--port", str(port), "--token-file", str(tokens), "--db", db, *extra],
                            env=env, stdout=log, stderr=subprocess.STDOUT)
    tls = "--ssl-certfile" in extra
    verify = ssl.create_default_context(cafile=extra[extra.index("--ssl-certfile") + 1]) if tls else True
    url = f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=2, verify=verify).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((folder / "server.log").read_text())
            time.sleep(0.2)
        yield Service(url, db, tmp, verify)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # a connection held open delays a graceful stop
            proc.kill()
            proc.wait()
        log.close()
    assert token_leaks(folder / "server.log") == []


def token_leaks(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if READ in line or SUBMIT in line]


@pytest.fixture(scope="session")
def sample_diagnoses() -> list[dict]:
    return [analyze_bundle(b) for b in sample_dirs()]


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def service(request, tmp_path_factory, sample_diagnoses) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp(f"svc-{request.param}")
    gen = _postgres_url() if request.param == "postgres" else None
    db = next(gen) if gen else f"sqlite:///{folder / 'attr.db'}"
    with Store.open(db) as store:  # the samples, stored as the worker would store them
        store.save_many(sample_diagnoses)
    yield from start_service(folder, db)
    if gen:
        next(gen, None)


def tar_gz(members: list[tuple[tarfile.TarInfo, bytes | None]], fmt: int = tarfile.GNU_FORMAT) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=fmt) as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def bundle_tar(folder: Path, prefix: str = ".") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(folder, arcname=prefix)
    return buf.getvalue()


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info


WORKLOAD = json.dumps({"cluster": "t", "job_id": "4242", "nodes": "gpu-[01-02]", "user": "u",
                       "partition": "p", "start": "2026-11-20T10:00:00+00:00",
                       "end": "2026-11-20T11:00:00+00:00", "state": "FAILED",
                       "exit_code": "1:0"}).encode()


def cli_json(bundle: Path) -> bytes:
    return subprocess.run([sys.executable, "-m", "slurm_attr.cli", "analyze", str(bundle), "--format",
                           "json"], capture_output=True, check=True).stdout


# ---------------------------------------------------------------------------- auth
def test_every_route_but_healthz_needs_a_token(service):
    anon, wrong = service.client(), service.client("not-a-token-of-this-service")
    assert anon.get("/healthz").json() == {"status": "ok", "database": "ok"}
    for path in ("/v1/diagnoses", "/v1/diagnoses/hopper/881977/0", "/v1/nodes/gpu-005", "/v1/summary",
                 "/metrics", "/v1/openapi.json", "/docs"):
        for client in (anon, wrong):
            r = client.get(path, headers={"Accept": "application/json"})
            assert r.status_code == 401, path
            assert r.headers["www-authenticate"] == "Bearer" and "token" in r.json()["detail"]
    for path, body in (("/v1/attributions", bundle_tar(XID79)), ("/v1/attributions/slurm", b"{}")):
        assert anon.post(path, content=body).status_code == 401


def test_a_read_token_cannot_submit_and_a_cookie_cannot_write(service):
    body = bundle_tar(XID79)
    r = service.client(READ).post("/v1/attributions", content=body,
                                  headers={"Content-Type": "application/gzip"})
    assert r.status_code == 403 and "submit" in r.json()["detail"]
    cookie = httpx.post(f"{service.url}/v1/attributions", content=body, cookies={"slurm_attr_token": SUBMIT},
                        headers={"Content-Type": "application/gzip"})
    assert cookie.status_code == 401
    assert service.client(READ).get("/v1/summary").status_code == 200
    assert service.client(SUBMIT).get("/v1/summary").status_code == 200  # submit implies read


# ---------------------------------------------------------------------------- attributions
def test_posted_bundle_is_byte_identical_to_the_cli(service):
    expected = cli_json(XID79)
    submit = service.client(SUBMIT)
    for body in (bundle_tar(XID79), bundle_tar(XID79, prefix="xid79")):  # flat, or in one folder
        r = submit.post("/v1/attributions", content=body, headers={"Content-Type": "application/gzip"})
        assert r.status_code == 200, r.text
        assert r.content == expected
    saved = submit.post("/v1/attributions?save=true", content=bundle_tar(XID79),
                        headers={"Content-Type": "application/gzip"})
    assert saved.content == expected
    location = saved.headers["location"]
    assert location == "/v1/diagnoses/hopper/881977/0"
    assert service.client(READ).get(location).content == expected


def test_inline_json_bundle_matches_the_same_files_as_a_tar(service, tmp_path):
    folder = tmp_path / "cuda-oom"  # the sample without its rotated .gz logs: inline is text
    shutil.copytree(SAMPLES / "cuda-oom", folder, ignore=shutil.ignore_patterns("*.gz"))
    doc = {"workload": json.loads((folder / "workload.json").read_text()),
           "app": {p.name: p.read_text() for p in (folder / "app").iterdir()},
           "nodes": {n.name: {p.name: p.read_text() for p in n.iterdir()}
                     for n in (folder / "nodes").iterdir()}}
    if (folder / "controller").is_dir():
        doc["controller"] = {p.name: p.read_text() for p in (folder / "controller").iterdir()}
    r = service.client(SUBMIT).post("/v1/attributions", json=doc)
    assert r.status_code == 200, r.text
    assert r.content == cli_json(folder)


HOSTILE = {  # kind: (members after workload.json, what the refusal says)
    "symlink": ([(member("app/out.log", tarfile.SYMTYPE, "/etc/shadow"), None)], "link"),
    "hardlink": ([(member("app/out.log", tarfile.LNKTYPE, "workload.json"), None)], "link"),
    "device": ([(member("nodes/gpu-01/syslog", tarfile.CHRTYPE), None)], "device"),
    "fifo": ([(member("nodes/gpu-01/syslog", tarfile.FIFOTYPE), None)], "FIFO"),
    "absolute": ([(member("/tmp/evil"), b"x")], "absolute"),
    "dotdot": ([(member("app/../../evil"), b"x")], "'..'"),
    "twice": ([(member("app/a.log"), b"x"), (member("app/a.log"), b"y")], "twice"),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_archives_are_refused(service, kind):
    members, why = HOSTILE[kind]
    body = tar_gz([(member("workload.json"), WORKLOAD), *members])
    r = service.client(SUBMIT).post("/v1/attributions", content=body,
                                    headers={"Content-Type": "application/gzip"})
    assert 400 <= r.status_code < 500 and r.headers["content-type"] == "application/json", r.text
    assert why in r.json()["detail"]
    assert list(service.tmp.iterdir()) == []  # the private directory is gone
    assert not Path("/tmp/evil").exists()


def test_bombs_and_caps_stop_while_unpacking(service):
    submit = service.client(SUBMIT)
    gz = {"Content-Type": "application/gzip"}
    big = (CAP_MB + 1) << 20
    cases = {
        # Highly compressible: a few kB on the wire, past the cap once inflated.
        "zeros": tar_gz([(member("workload.json"), WORKLOAD), (member("app/z.log"), b"\0" * big)]),
        "members": tar_gz([(member("workload.json"), WORKLOAD)]
                          + [(member(f"app/{i}.log"), b"") for i in range(CAP_FILES + 5)]),
        # A pax header is read whole by tarfile: the inflated-bytes count must stop it too.
        "pax": tar_gz([(member("workload.json"), WORKLOAD)]), }
    pax = tarfile.TarInfo("app/p.log")
    pax.pax_headers = {"comment": "x" * (2 * big)}
    cases["pax"] = tar_gz([(pax, b"")], fmt=tarfile.PAX_FORMAT)
    for name, body in cases.items():
        assert len(body) < big, name
        r = submit.post("/v1/attributions", content=body, headers=gz)
        assert r.status_code == 413, (name, r.text)
    # A body past the cap is refused as it streams in (or at once, from Content-Length).
    r = submit.post("/v1/attributions", content=os.urandom(big + (2 << 20)), headers=gz)
    assert r.status_code == 413
    assert list(service.tmp.iterdir()) == []


def test_unusable_uploads_get_a_clear_4xx(service):
    submit = service.client(SUBMIT)
    gz = {"Content-Type": "application/gzip"}
    cut = tar_gz([(member("workload.json"), WORKLOAD), (member("app/a.log"), b"y" * 100_000)])
    cases = [("not gzip", b"plain text", gz, 400), ("empty", b"", gz, 400),
             ("cut short", gzip.compress(gzip.decompress(cut)[:5000]), gz, 400),
             ("no workload", tar_gz([(member("app/a.log"), b"x")]), gz, 422),
             ("bad workload", tar_gz([(member("workload.json"), b'{"job_id": 1}')]), gz, 422),
             ("wrong type", b"x", {"Content-Type": "text/plain"}, 415),
             ("bad json", b"{", {"Content-Type": "application/json"}, 400),
             ("json path", json.dumps({"workload": {}, "app": {"../x": "y"}}).encode(),
              {"Content-Type": "application/json"}, 400),
             ("json node", json.dumps({"workload": {}, "nodes": {"../n": {"a": "b"}}}).encode(),
              {"Content-Type": "application/json"}, 400)]
    for name, body, headers, status in cases:
        r = submit.post("/v1/attributions", content=body, headers=headers)
        assert r.status_code == status, (name, r.text)
        assert isinstance(r.json()["detail"], str), name
        assert str(service.tmp) not in r.text
    assert list(service.tmp.iterdir()) == []


def test_live_slurm_job_is_queued_with_a_location(service):
    submit = service.client(SUBMIT)
    r = submit.post("/v1/attributions/slurm", json={"cluster": "attrtest", "job_id": "1"})
    assert r.status_code == 202, r.text
    assert r.headers["location"] == "/v1/diagnoses/attrtest/1/0"
    assert r.json()["status"] in ("queued", "already queued") and r.json()["state"] == "FAILED"
    again = submit.post("/v1/attributions/slurm", json={"cluster": "attrtest", "job_id": "1", "attempt": 0})
    assert again.status_code == 202 and again.json()["status"] == "already queued"
    assert submit.get("/v1/summary").json()["queue"].get("pending") == 1
    assert submit.post("/v1/attributions/slurm", json={"cluster": "attrtest", "job_id": "999"}).status_code == 404
    assert submit.post("/v1/attributions/slurm", json={"cluster": "other", "job_id": "1"}).status_code == 404
    assert submit.post("/v1/attributions/slurm", json={"cluster": "attrtest", "job_id": "1; rm"}).status_code == 422


def test_drain_diagnoses_the_queued_job_in_process(tmp_path):
    """`serve --drain`: the queued job goes through the worker's path and its diagnosis appears
    at the location the 202 gave (no logs here, so it says what it could not see)."""
    db = f"sqlite:///{tmp_path / 'd.db'}"
    for svc in start_service(tmp_path, db, "--drain"):
        r = svc.client(SUBMIT).post("/v1/attributions/slurm", json={"cluster": "attrtest", "job_id": "1"})
        assert r.status_code == 202, r.text
        read, deadline = svc.client(READ), time.monotonic() + 60
        while (doc := read.get(r.headers["location"])).status_code == 404 and time.monotonic() < deadline:
            time.sleep(0.3)
        assert doc.status_code == 200, doc.text
        assert doc.json()["workload"]["job_id"] == "1" and doc.json()["coverage"]
        assert read.get("/v1/summary").json()["queue"] == {"done": 1}


# ---------------------------------------------------------------------------- queries
WINDOW = {"since": "2026-01-01", "until": "2027-01-01"}


def test_list_pages_with_a_cursor_and_filters(service, sample_diagnoses):
    read = service.client(READ)
    seen, cursor = [], None
    while True:
        r = read.get("/v1/diagnoses", params={**WINDOW, "limit": 5, **({"cursor": cursor} if cursor else {})})
        assert r.status_code == 200
        page = r.json()
        seen += page["diagnoses"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(sample_dirs()) == len({(d["cluster"], d["job_id"], d["attempt"]) for d in seen})
    ends = [d["end"] for d in seen]
    assert ends == sorted(ends, reverse=True)
    assert page["query"]["limit"] == 5 and page["query"]["since"].startswith("2026-01-01")

    def count(**params) -> list[dict]:
        return read.get("/v1/diagnoses", params={**WINDOW, **params}).json()["diagnoses"]

    gpu = sum(d["sub_domain"] == "gpu" for d in sample_diagnoses)
    assert {d["sub_domain"] for d in count(sub_domain="gpu")} == {"gpu"} and len(count(sub_domain="gpu")) == gpu
    assert len(count(sub_domain="gpu,host")) == len(count(sub_domain="gpu")) + len(count(sub_domain="host"))
    assert [d["root_code"] for d in count(node="gpu-005")] == ["XID 79"]
    assert {d["user"] for d in count(user="bob")} == {"bob"}
    assert all(d["outcome"] == "hardware" for d in count(outcome="hardware"))
    assert [d["job_id"] for d in count(q="881977")] == ["881977"]
    assert count(q="XID 79")[0]["root_code"] == "XID 79"
    row = count(q="881977")[0]
    doc = read.get(row["url"])
    assert doc.status_code == 200 and doc.json()["workload"]["job_id"] == "881977"
    w = doc.json()["workload"]  # the row's times and hours, whichever database answered
    assert datetime.fromisoformat(row["end"]) == datetime.fromisoformat(w["end"])
    assert row["end"].endswith("+00:00") and row["start"].endswith("+00:00")
    assert row["gpu_hours"] == round(len(w["nodes"]) * w["gpus_per_node"] * w["elapsed_s"] / 3600, 3)
    for bad in ({"since": "yesterday"}, {"cursor": "garbage!"}, {"limit": 0}, {"limit": 5000},
                {"user": ",".join(f"u{i}" for i in range(101))}):
        r = read.get("/v1/diagnoses", params=bad)
        assert 400 <= r.status_code < 500 and r.json()["detail"], bad


def test_document_node_summary_and_metrics(service, sample_diagnoses):
    read = service.client(READ)
    assert read.get("/v1/diagnoses/hopper/881977/0").json()["root_cause"]["code"] == "XID 79"
    missing = read.get("/v1/diagnoses/hopper/881977/7")
    assert missing.status_code == 404 and "881977" in missing.json()["detail"]
    node = read.get("/v1/nodes/gpu-005", params=WINDOW).json()
    assert node["failures"] == 1 and node["causes"][0]["root_code"] == "XID 79"
    assert node["recent"][0]["job_id"] == "881977"
    assert read.get("/v1/nodes/no-such-node", params=WINDOW).json()["failures"] == 0
    summary = read.get("/v1/summary", params=WINDOW).json()
    assert summary["total"] == len(sample_diagnoses)
    assert sum(summary["by_sub_domain"].values()) == len(sample_diagnoses)
    assert summary["by_outcome"]["hardware"] >= 2 and summary["gpu_hours"] > 0
    text = read.get("/metrics").text
    gpu = [line for line in text.splitlines() if line.startswith("slurm_attr_diagnoses{") and 'sub_domain="gpu"' in line]
    assert sum(int(line.rsplit(" ", 1)[1]) for line in gpu) == sum(d["sub_domain"] == "gpu" for d in sample_diagnoses)
    assert 'slurm_attr_queue_jobs{state="dead"} 0' in text and "slurm_attr_dead_letters 0" in text
    assert 'route="/v1/diagnoses/{cluster}/{job_id}/{attempt}",status="2xx",le="+Inf"}' in text


def test_openapi_and_docs(service):
    read = service.client(READ)
    spec = read.get("/v1/openapi.json").json()
    paths = set(spec["paths"])
    assert {"/v1/attributions", "/v1/attributions/slurm", "/v1/diagnoses",
            "/v1/diagnoses/{cluster}/{job_id}/{attempt}", "/v1/nodes/{node}", "/v1/summary",
            "/healthz", "/metrics"} <= paths
    assert "application/gzip" in spec["paths"]["/v1/attributions"]["post"]["requestBody"]["content"]
    docs = read.get("/docs").text
    assert "/v1/attributions" in docs and "<script" not in docs


def test_root_path_behind_a_proxy(tmp_path):
    """Behind a proxy that strips /attr, links and locations carry the prefix."""
    db = f"sqlite:///{tmp_path / 'r.db'}"
    for svc in start_service(tmp_path, db, "--root-path", "/attr"):
        r = svc.client(SUBMIT).post("/v1/attributions?save=true", content=bundle_tar(XID79),
                                    headers={"Content-Type": "application/gzip"})
        assert r.headers["location"] == "/attr/v1/diagnoses/hopper/881977/0"
        row = svc.client(READ).get("/v1/diagnoses", params=WINDOW).json()["diagnoses"][0]
        assert row["url"] == "/attr/v1/diagnoses/hopper/881977/0"


def test_serve_refuses_a_bad_token_file(tmp_path):
    tokens = tmp_path / "tokens"
    for text, mode, why in ((f"{READ} admin\n", 0o600, "expected"), ("short read\n", 0o600, "shorter"),
                            (f"{READ} read\n", 0o644, "chmod 600")):
        tokens.write_text(text)
        tokens.chmod(mode)
        r = subprocess.run([sys.executable, "-m", "slurm_attr.cli", "serve", "--token-file", str(tokens),
                            "--db", f"sqlite:///{tmp_path / 'x.db'}"], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode != 0 and why in r.stderr and READ not in r.stderr


# ---------------------------------------------------------------------------- the unpacker itself
class Counting(io.BytesIO):
    """An upload that counts what the unpacker took from it."""

    taken = 0

    def read(self, n: int = -1) -> bytes:
        data = super().read(n)
        self.taken += len(data)
        return data


def test_unpacking_stops_at_the_cap_while_streaming(tmp_path):
    from slurm_attr.service.archive import ArchiveError, Caps, extract_tar_gz

    body = tar_gz([(member("workload.json"), WORKLOAD), (member("app/z.log"), b"\0" * (64 << 20))])
    upload = Counting(body)
    with pytest.raises(ArchiveError) as err:
        extract_tar_gz(upload, tmp_path, Caps(max_bytes=1 << 20, max_members=10))
    assert err.value.status == 413
    assert upload.taken < len(body) // 4  # it stopped reading, it did not inflate 64 MB first
    assert sum(f.stat().st_size for f in tmp_path.rglob("*") if f.is_file()) <= (1 << 20) + len(WORKLOAD)


def test_a_header_that_lies_about_its_size(tmp_path):
    """Sizes are counted as bytes come, not taken from headers: a member claiming 100 MB with 2 MB
    behind it is a cut archive (400), and one claiming 10 bytes cannot smuggle more in."""
    from slurm_attr.service.archive import ArchiveError, Caps, extract_tar_gz

    claims = tarfile.TarInfo("app/big.log")
    claims.size = 100 << 20
    raw = claims.tobuf(tarfile.GNU_FORMAT) + b"x" * (2 << 20)
    (tmp_path / "a").mkdir()
    with pytest.raises(ArchiveError) as err:
        extract_tar_gz(io.BytesIO(gzip.compress(raw)), tmp_path / "a", Caps(max_bytes=4 << 20))
    assert err.value.status == 400
    (tmp_path / "b").mkdir()
    small = tarfile.TarInfo("app/small.log")
    small.size = 10
    raw = small.tobuf(tarfile.GNU_FORMAT) + b"0123456789" + b"\0" * 502 + b"junk-after-the-member" * 30
    try:
        extract_tar_gz(io.BytesIO(gzip.compress(raw)), tmp_path / "b", Caps())
    except ArchiveError as exc:
        assert exc.status == 400
    assert (tmp_path / "b" / "app" / "small.log").read_bytes() == b"0123456789"


def test_https_without_a_proxy(tmp_path):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key),
                    "-out", str(cert)], check=True, capture_output=True)
    db = f"sqlite:///{tmp_path / 't.db'}"
    for svc in start_service(tmp_path, db, "--ssl-certfile", str(cert), "--ssl-keyfile", str(key)):
        assert svc.url.startswith("https://")
        with svc.client(READ) as client:
            assert client.get("/v1/summary").status_code == 200


# ---------------------------------------------------------------------------- node state
SHOW_NODE = ("NodeName=gpu-01 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 CPUTot=2 CPULoad=0.00 "
             "AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=127.0.0.1 "
             "NodeHostName=gpu-01 Version=22.05.8 OS=Linux 6.1.0 RealMemory=1000 AllocMem=0 FreeMem=N/A "
             "Sockets=2 Boards=1 State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A "
             "MCS_label=N/A Partitions=debug BootTime=2026-11-30T02:50:00 SlurmdStartTime=2026-11-30T02:55:00 "
             "LastBusyTime=2026-11-30T03:15:39 CfgTRES=cpu=2,mem=1000M,billing=2 AllocTRES= CapWatts=n/a "
             "CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s "
             "Reason=NHC: GPU 0 fell off the bus [root@2026-11-30T03:15:37]\n")
EVENTS = {"events": [{"node": "gpu-01", "start": "2026-11-20T10:30:00+00:00", "end": None,
                      "state": "DRAIN", "reason": "NHC: <b>GPU 0</b> fell off the bus | BMC: PSU 2 lost", "user": "root"}]}


def _node_event_bundle() -> bytes:
    workload = json.dumps({**json.loads(WORKLOAD), "cluster": "nodestate"}).encode()
    return tar_gz([(member("workload.json"), workload), (member("events.json"), json.dumps(EVENTS).encode())])


def test_node_state_comes_from_scontrol_cached_else_the_last_recorded(tmp_path):
    from slurm_attr.config import Settings
    from slurm_attr.scope.slurm import SlurmError
    from slurm_attr.service.nodes import NodeStates, parse_show_node

    assert parse_show_node(SHOW_NODE) == {"state": "IDLE+DRAIN",
                                          "reason": "NHC: GPU 0 fell off the bus [root@2026-11-30T03:15:37]"}
    bundle = tmp_path / "b"
    bundle.mkdir()
    with tarfile.open(fileobj=io.BytesIO(_node_event_bundle())) as tar:
        tar.extractall(bundle, filter="data")
    calls: list[list[str]] = []

    def scontrol(argv: list[str], timeout: int) -> str:
        calls.append(argv)
        if failing:
            raise SlurmError("scontrol exited 1: Unable to contact slurm controller")
        return SHOW_NODE

    with Store.open(f"sqlite:///{tmp_path / 'n.db'}") as store:
        store.save_diagnosis(analyze_bundle(bundle))
        failing = False
        states = NodeStates(Settings(), store, runner=scontrol)
        live = states.state("gpu-01")
        assert (live["source"], live["state"]) == ("scontrol", "IDLE+DRAIN")
        assert states.state("gpu-01") == live and len(calls) == 1  # cached
        assert calls[0][-3:] == ["show", "node", "gpu-01"]
        failing = True
        down = NodeStates(Settings(), store, runner=scontrol).state("gpu-01")
        assert (down["source"], down["state"]) == ("recorded", "DRAIN")
        assert down["reason"] == EVENTS["events"][0]["reason"] and "controller" in down["unavailable"]


def test_node_endpoint_and_page_say_the_state_and_which_it_is(service):
    submit, read = service.client(SUBMIT), service.client(READ)
    posted = submit.post("/v1/attributions", params={"save": "true"}, content=_node_event_bundle(),
                         headers={"Content-Type": "application/gzip"})
    assert posted.status_code == 200, posted.text
    assert any(e["kind"] == "node_state_change" for e in posted.json()["symptoms"])
    state = read.get("/v1/nodes/gpu-01", params=WINDOW).json()["state"]
    assert state["source"] in ("scontrol", "recorded")
    if state["source"] == "recorded":  # no controller answers on this host
        assert state["state"] == "DRAIN" and state["unavailable"]
    for bad in ("-rf", "gpu[01-02]", "a b", "<b>"):
        assert read.get(f"/v1/nodes/{bad}").status_code in (400, 404), bad
    page = read.get("/nodes/gpu-01.html", headers={"Accept": "text/html"})
    assert page.status_code == 200 and "State now:" in page.text
    assert "<b>GPU 0</b>" not in page.text
    assert read.get("/nodes/-rf.html", headers={"Accept": "text/html"}).status_code == 404
