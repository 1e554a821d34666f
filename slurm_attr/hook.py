"""Installing the EpilogSlurmctld hook: the script with its spool baked in, and a writability check.

On Debian's slurm-wlm 22.05.8 an epilog that cannot write its spool only shows up as
"EpilogSlurmctld exit status 2:0" in slurmctld.log; the check here makes that loud at install time.
"""

from __future__ import annotations

import os
import pwd
import re
import shlex
import subprocess
from importlib import resources
from pathlib import Path

SCRIPT_NAME = "slurm-attr-epilog"
_SPOOL_LINE = re.compile(r"^SPOOL=\$\{SLURM_ATTR_SPOOL:-[^}]*\}$", re.M)


class HookError(Exception):
    pass


def script_text(spool: str) -> str:
    """The hook with `spool` as its default spool directory."""
    source = (resources.files("slurm_attr.epilog") / SCRIPT_NAME).read_text()
    if any(c in spool for c in "}'\"$`\\\n") or not spool.startswith("/"):
        raise HookError(f"the spool must be a plain absolute path: {spool!r}")
    return _SPOOL_LINE.sub(lambda _: f"SPOOL=${{SLURM_ATTR_SPOOL:-{spool}}}", source, count=1)


def _conf_value(slurm_conf: Path | None, key: str) -> str | None:
    path = slurm_conf or Path(os.environ.get("SLURM_CONF", "/etc/slurm/slurm.conf"))
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return None
    m = re.search(rf"^\s*{key}\s*=\s*(\S+)", text, re.M | re.I)
    return m.group(1) if m else None


def slurm_user(slurm_conf: Path | None) -> str:
    """SlurmUser from slurm.conf (Slurm's default is root)."""
    return _conf_value(slurm_conf, "SlurmUser") or "root"


def other_epilog(slurm_conf: Path | None, dest: Path) -> str | None:
    """An EpilogSlurmctld already configured that is not this hook (it would be replaced)."""
    current = _conf_value(slurm_conf, "EpilogSlurmctld")
    return current if current and Path(current) != dest else None


def prepare_spool(spool: Path, user: str) -> None:
    """Create spool/{tmp,new} owned by the SlurmUser (when we may), readable by the worker."""
    try:
        entry = pwd.getpwnam(user)
    except KeyError as exc:
        raise HookError(f"SlurmUser {user!r} does not exist on this host") from exc
    for sub in ("", "tmp", "new", "failed"):
        (spool / sub).mkdir(mode=0o750, parents=True, exist_ok=True)
        if os.geteuid() == 0:
            os.chown(spool / sub, entry.pw_uid, entry.pw_gid)


def check_writable(spool: Path, user: str) -> str | None:
    """None when `user` can create and rename a file in the spool, else why not."""
    probe = (f"f=$(mktemp -p {shlex.quote(str(spool / 'tmp'))}) && "
             f"mv \"$f\" {shlex.quote(str(spool / 'new'))}/.probe.$$ && "
             f"rm -f {shlex.quote(str(spool / 'new'))}/.probe.$$")
    current = pwd.getpwuid(os.geteuid()).pw_name
    if current == user:
        cmd = ["sh", "-c", probe]
    elif os.geteuid() == 0:
        cmd = ["runuser", "-u", user, "--", "sh", "-c", probe]
    else:
        return f"cannot check as {user!r} without root; run this as root or as {user!r}"
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if result.returncode != 0:
        return f"{user} cannot write {spool}: {result.stderr.strip() or 'exit ' + str(result.returncode)}"
    return None


def install(spool: Path, dest: Path, user: str) -> None:
    """Write the hook to dest (temporary file then rename) and prepare its spool."""
    text = script_text(str(spool))
    prepare_spool(spool, user)
    problem = check_writable(spool, user)
    if problem:
        raise HookError(problem)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp")
    tmp.write_text(text)
    tmp.chmod(0o755)
    tmp.replace(dest)


def conf_lines(dest: Path) -> str:
    return (f"# slurm.conf (then `scontrol reconfigure`)\nEpilogSlurmctld={dest}\n"
            "# slurmctld logs a failing hook as 'EpilogSlurmctld exit status ...'; this one never fails.\n")
