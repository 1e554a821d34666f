"""The spool the EpilogSlurmctld hook fills: one file per finished job in `new/`, each the job's
environment as NUL-separated `KEY=VALUE` (what `env -0` writes). Entries are deleted only after
the database holds them, so a crash in between re-reads an entry, which the queue ignores."""

from __future__ import annotations

import contextlib
import os
import re
import stat
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


_DIGITS = re.compile(r"[0-9]{1,20}", re.ASCII)
# What the hook names its entries: <job id>.<restart count>.<pid>.job
_ENTRY_NAME = re.compile(r"(?P<job>[0-9]{1,20})\.[0-9]{1,6}\.[0-9]{1,10}\.job", re.ASCII)
_MAX_NAME = 128  # entry and cluster names are stored in columns of this size
_SAFE_NAME = re.compile(rf"[A-Za-z0-9._-]{{1,{_MAX_NAME}}}", re.ASCII)
_NUMERIC = ("SLURM_JOB_ID", "SLURM_JOB_RESTART_COUNT", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID",
            "SLURM_HET_JOB_ID", "SLURM_JOB_UID")


def parse_env(raw: bytes, name: str | None = None) -> dict[str, str]:
    """The SLURM_* variables of a complete entry (the only ones the worker uses).

    `env -0` ends every variable with a NUL, so an entry that does not end with one was cut
    short; a job id that is not plain ASCII digits, or that disagrees with the entry's name, is
    not the hook's."""
    if not raw.endswith(b"\0"):
        raise SpoolError("incomplete entry (does not end with a NUL): not written by the hook")
    env: dict[str, str] = {}
    for item in raw.split(b"\0"):
        var, sep, value = item.partition(b"=")
        if sep and var.startswith(b"SLURM_"):
            env[var.decode("ascii", "replace")] = value.decode("utf-8", "replace")
    for key in _NUMERIC:
        number = env.get(key)
        if number is not None and not _DIGITS.fullmatch(number):
            raise SpoolError(f"{key} is not a number (got {number[:40]!r})")
    if "SLURM_JOB_ID" not in env:
        raise SpoolError("no SLURM_JOB_ID")
    named = _ENTRY_NAME.fullmatch(name or "")
    if named and named["job"] != env["SLURM_JOB_ID"]:
        raise SpoolError(f"SLURM_JOB_ID {env['SLURM_JOB_ID']} disagrees with the entry name")
    if len(env.get("SLURM_CLUSTER_NAME", "")) > _MAX_NAME:
        raise SpoolError(f"SLURM_CLUSTER_NAME is longer than {_MAX_NAME} characters")
    return env


def read_entries(spool: Path) -> Iterator[SpoolEntry | tuple[Path, str]]:
    """Complete entries in arrival order; an unusable file comes as (path, reason), so that one
    bad entry (a link, a FIFO, garbage) is set aside and never blocks the others."""
    new = spool / "new"
    try:
        with os.scandir(new) as items:
            found = [(item.name, _lstat(item)) for item in items if not item.name.startswith(".")]
    except FileNotFoundError:
        return
    found.sort(key=lambda pair: (pair[1].st_mtime_ns if pair[1] else 0, pair[0]))
    for name, st in found:
        path = new / name
        if st is None:
            continue  # another worker on this host took it
        try:
            yield SpoolEntry(path, *_read_entry(path, name, st))
        except FileNotFoundError:
            continue
        except (OSError, SpoolError) as exc:
            yield path, str(exc)


def _lstat(item: os.DirEntry) -> os.stat_result | None:
    try:
        return item.stat(follow_symlinks=False)
    except FileNotFoundError:
        return None


def _read_entry(path: Path, name: str, st: os.stat_result) -> tuple[dict[str, str], float]:
    if not stat.S_ISREG(st.st_mode):
        raise SpoolError("not a regular file (a link, FIFO or device is never read)")
    if not _SAFE_NAME.fullmatch(name):
        raise SpoolError(f"entry name is not 1-{_MAX_NAME} of [A-Za-z0-9._-] (the hook's names are)")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        written = os.fstat(fh.fileno()).st_mtime
        raw = fh.read(MAX_ENTRY_BYTES + 1)
    if len(raw) > MAX_ENTRY_BYTES:
        raise SpoolError("larger than 1 MiB")
    return parse_env(raw, name), written


def set_aside(spool: Path, path: Path) -> None:
    """Keep an unusable entry in failed/ for a human instead of deleting it."""
    target = spool / "failed"
    target.mkdir(exist_ok=True)
    with contextlib.suppress(FileNotFoundError):  # another worker on this host moved it
        os.replace(path, target / path.name)
