"""Observation source: a job's stdout/stderr files, and deciding whether we may read them.

The worker runs as root or SlurmUser while the file names come from the job's owner, so a file is
read only if (1) its real path lies under an allowed root, with no symlink leading out of it, and
(2) the owner could read it: execute on every directory above it and read on the file, judged from
the mode bits against the owner's uid and groups (ACLs are not consulted, which can only refuse
more, never less).
"""

from __future__ import annotations

import grp
import os
import pwd
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from slurm_attr.collect.collector import SourceFile, Sources
from slurm_attr.connectors import AttemptContext, register_source
from slurm_attr.model import Coverage

_SPEC = re.compile(r"%(\d*)([%AajJNnstux])")


@dataclass
class JobNames:
    """What sbatch's filename patterns can refer to."""

    job_id: str
    user: str
    name: str
    first_node: str
    array_job_id: str | None = None
    array_task_id: str | None = None


def expand_pattern(pattern: str, job: JobNames) -> str:
    """Expand `%j %J %u %x %N %A %a %n %s %t %%` (with optional zero padding, e.g. `%5j`)."""

    def sub(m: re.Match[str]) -> str:
        width, code = m.group(1), m.group(2)
        value = {
            "%": "%", "j": job.job_id, "J": job.job_id, "u": job.user, "x": job.name,
            "N": job.first_node, "A": job.array_job_id or job.job_id,
            "a": job.array_task_id or "4294967294", "n": "0", "s": "batch", "t": "0",
        }[code]
        if width and code not in ("%", "u", "x", "N") and value.isdigit():
            value = value.zfill(int(width))
        return value

    return _SPEC.sub(sub, pattern)


def output_paths(env: dict[str, str], job: JobNames) -> list[Path]:
    """The stdout and stderr files named by the epilog environment (sbatch's defaults otherwise)."""
    work_dir = Path(env.get("SLURM_JOB_WORK_DIR") or "/")
    default = "slurm-%A_%a.out" if job.array_task_id else "slurm-%j.out"
    paths = []
    for key in ("SLURM_JOB_STDOUT", "SLURM_JOB_STDERR"):
        pattern = env.get(key) or (default if key == "SLURM_JOB_STDOUT" else "")
        if not pattern or pattern == "/dev/null":
            continue
        path = Path(expand_pattern(pattern, job))
        path = path if path.is_absolute() else work_dir / path
        if path not in paths:
            paths.append(path)
    return paths


@dataclass
class Owner:
    uid: int
    gids: set[int]

    @classmethod
    def of(cls, user: str, uid: str | None = None) -> Owner:
        entry = pwd.getpwuid(int(uid)) if uid and uid.isdigit() else pwd.getpwnam(user)
        gids = set(os.getgrouplist(entry.pw_name, entry.pw_gid))
        gids |= {g.gr_gid for g in grp.getgrall() if entry.pw_name in g.gr_mem}
        return cls(entry.pw_uid, gids)

    def may(self, st: os.stat_result, want: int) -> bool:
        """`want` is 4 (read) or 1 (execute/search), checked like the kernel does for mode bits."""
        if self.uid == 0:
            return True
        if st.st_uid == self.uid:
            bits = (st.st_mode >> 6) & 7
        elif st.st_gid in self.gids:
            bits = (st.st_mode >> 3) & 7
        else:
            bits = st.st_mode & 7
        return bool(bits & want)


def check(path: Path, owner: Owner, roots: list[Path]) -> SourceFile | str:
    """A readable SourceFile, or the reason it must not be read."""
    try:
        real = path.resolve(strict=True)
    except FileNotFoundError:
        return f"{path}: not found"
    except (OSError, RuntimeError) as exc:
        return f"{path}: cannot resolve ({exc})"
    root = next((r for r in roots if real.is_relative_to(r)), None)
    if root is None:
        return f"{path}: outside the allowed output roots ({', '.join(map(str, roots))})"
    for parent in reversed(real.parents):
        if not owner.may(os.stat(parent), 1):
            return f"{path}: the job owner cannot enter {parent}"
    st = os.stat(real)
    if not stat.S_ISREG(st.st_mode):
        return f"{path}: not a regular file"
    if not owner.may(st, 4):
        return f"{path}: the job owner cannot read it"
    return SourceFile(real, str(path), identity=(st.st_dev, st.st_ino))


def job_output_sources(env: dict[str, str], job: JobNames, roots: tuple[str, ...]
                       ) -> tuple[list[SourceFile], list[Coverage]]:
    """Readable output files, plus a coverage record (missing or refused) for each other one."""
    try:
        owner = Owner.of(job.user, env.get("SLURM_JOB_UID"))
    except (KeyError, ValueError):
        return [], [Coverage("job_output", None, "refused",
                             f"unknown job owner {job.user!r}: not reading its files")]
    allowed = [Path(r).resolve() for r in roots]
    files, refused = [], []
    for path in output_paths(env, job):
        result = check(path, owner, allowed)
        if isinstance(result, str):
            status = "missing" if result.endswith("not found") else "refused"
            refused.append(Coverage("job_output", None, status, result))
        else:
            files.append(result)
    return files, refused


@register_source("job_output")
class JobOutput:
    """Observation source: the job's stdout/stderr named by the hook's environment, read only
    where the job's owner could read it."""

    name = "job_output"

    def gather(self, ctx: AttemptContext, found: Sources) -> None:
        w, env = ctx.workload, ctx.env
        names = JobNames(w.job_id, w.user, w.name, w.nodes[0] if w.nodes else "",
                         env.get("SLURM_ARRAY_JOB_ID"), env.get("SLURM_ARRAY_TASK_ID"))
        files, unread = job_output_sources(env, names, ctx.settings.job_output_roots)
        found.app += files
        found.unread += unread
        found.missing["job_output"] = "the job named no output file"
