"""The spool the EpilogSlurmctld hook fills: one file per finished job in `new/`, each the job's
environment as NUL-separated `KEY=VALUE` (what `env -0` writes). Entries are deleted only after
the database holds them, so a crash in between re-reads an entry, which the queue ignores."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MAX_ENTRY_BYTES = 1 << 20  # a job environment is a few KiB; anything bigger is not ours


class SpoolError(ValueError):
    pass


@dataclass
class SpoolEntry:
    path: Path
    env: dict[str, str]
    written: float  # st_mtime: when the hook ran, i.e. when the attempt ended

    @property
    def job_id(self) -> str:
        return self.env["SLURM_JOB_ID"]

    @property
    def attempt(self) -> int:
        return int(self.env.get("SLURM_JOB_RESTART_COUNT") or 0)


def parse_env(raw: bytes) -> dict[str, str]:
    """The SLURM_* variables of an entry (the only ones the worker uses)."""
    env = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep and key.startswith(b"SLURM_"):
            env[key.decode("ascii", "replace")] = value.decode("utf-8", "replace")
    job_id = env.get("SLURM_JOB_ID", "")
    if not job_id.isdigit():
        raise SpoolError(f"no numeric SLURM_JOB_ID (got {job_id!r})")
    if not (env.get("SLURM_JOB_RESTART_COUNT") or "0").isdigit():
        raise SpoolError("SLURM_JOB_RESTART_COUNT is not a number")
    return env


def read_entries(spool: Path) -> Iterator[SpoolEntry | tuple[Path, str]]:
    """Complete entries in arrival order; an unusable file comes as (path, reason)."""
    new = spool / "new"
    try:
        names = sorted(os.scandir(new), key=lambda e: (e.stat().st_mtime_ns, e.name))
    except FileNotFoundError:
        return
    for item in names:
        if item.name.startswith(".") or not item.is_file(follow_symlinks=False):
            continue
        path = Path(item.path)
        try:
            with path.open("rb") as fh:
                written = os.fstat(fh.fileno()).st_mtime
                raw = fh.read(MAX_ENTRY_BYTES + 1)
            if len(raw) > MAX_ENTRY_BYTES:
                raise SpoolError("larger than 1 MiB")
            yield SpoolEntry(path, parse_env(raw), written)
        except FileNotFoundError:
            continue  # another worker on this host took it
        except (OSError, SpoolError) as exc:
            yield path, str(exc)


def set_aside(spool: Path, path: Path) -> None:
    """Keep an unusable entry in failed/ for a human instead of deleting it."""
    target = spool / "failed"
    target.mkdir(exist_ok=True)
    with contextlib.suppress(FileNotFoundError):  # another worker on this host moved it
        os.replace(path, target / path.name)
