from __future__ import annotations

import json
import shutil
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from slurm_attr.store.repository import Store

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_jobs"


def sample_dirs() -> list[Path]:
    return sorted(p for p in SAMPLES.iterdir() if (p / "workload.json").is_file())


@pytest.fixture
def make_bundle(tmp_path):
    """A minimal bundle: 2 nodes, one hour, FAILED; files given as {relpath: bytes|str}."""

    def make(files: dict[str, bytes | str], **workload) -> Path:
        root = tmp_path / "bundle"
        if root.exists():
            shutil.rmtree(root)
        root.mkdir()
        doc = {"cluster": "t", "job_id": "4242", "nodes": "gpu-[01-02]",
               "start": "2026-11-20T10:00:00+00:00", "end": "2026-11-20T11:00:00+00:00",
               "state": "FAILED", "exit_code": "1:0", "user": "u", "partition": "p", **workload}
        (root / "workload.json").write_text(json.dumps(doc))
        for rel, content in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content.encode() if isinstance(content, str) else content)
        return root

    return make


T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)

# Markup, script and a terminal escape in every field a job's owner chooses (the page tests).
EVIL = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">\x1b[31mred'


def evil_bundle(root: Path) -> Path:
    """A bundle whose user, job name and exception text are EVIL."""
    (root / "app").mkdir(parents=True)
    (root / "app" / "out.log").write_text(f"[rank0]: Traceback (most recent call last):\n"
                                          f"[rank0]: ValueError: {EVIL}\n")
    (root / "workload.json").write_text(json.dumps({
        "cluster": "c", "job_id": "666", "nodes": "n[1-2]", "user": EVIL, "name": EVIL,
        "partition": "p", "start": "2026-11-20T10:00:00+00:00", "end": "2026-11-20T11:00:00+00:00",
        "state": "FAILED", "exit_code": "1:0"}))
    return root


PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def _postgres_url():
    name = f"slurm_attr_test_{uuid.uuid4().hex[:10]}"
    admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # no server: the CI script starts one, so this only skips locally
        pytest.skip(f"PostgreSQL not reachable: {exc}")
    yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path):
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'attr.db'}"
        with Store.open(url) as s:
            yield s
    else:
        gen = _postgres_url()
        url = next(gen)
        with Store.open(url) as s:
            yield s
        next(gen, None)
