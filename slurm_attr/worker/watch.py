"""Waking the worker: when a spool entry lands, when a queued job comes due, or at the latest
after the poll interval.

The hook renames each entry into `spool/new/`; inotify reports that rename at once, so the worker
does not sleep through a poll interval before it queues the job. Where inotify is missing (not
Linux, no free inotify instance, the package not installed) or cannot see the writes (a spool on
NFS written by another host), the poll interval alone wakes the worker, as before.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger("slurm_attr.worker")

# How often a wait looks at the stop flag: a signal handler cannot cut a poll() short (Python
# retries it), so SIGTERM is honoured within this.
_SLICE_S = 0.2

try:
    from inotify_simple import INotify, flags
except ImportError:  # not Linux, or installed without it: polling only
    INotify = None  # type: ignore[assignment,misc]

# A finished entry: renamed in (the hook) or written in place and closed (anything else).
_ARRIVED = (flags.MOVED_TO | flags.CLOSE_WRITE) if INotify else 0
# The watched directory went away (a spool wiped and made again): watch the new one.
_GONE = (flags.IGNORED | flags.DELETE_SELF | flags.MOVE_SELF) if INotify else 0


def _open_inotify() -> Any | None:
    if INotify is None:
        return None
    try:
        return INotify()
    except OSError as exc:  # e.g. fs.inotify.max_user_instances reached
        log.warning("inotify unavailable (%s): polling the spool", exc)
        return None


class SpoolWatcher:
    """Sleeps until an entry lands in `spool/new/`, the timeout passes, or `stop()` is true."""

    def __init__(self, spool: Path) -> None:
        self.new = Path(spool) / "new"
        self._inotify = _open_inotify()
        self._wd: int | None = None
        # Armed before the worker's first look at the spool, so nothing lands unseen in between.
        self._arm()

    @property
    def watching(self) -> bool:
        """Whether an arrival wakes the worker now (else only the timeout does)."""
        return self._wd is not None

    def _arm(self) -> bool:
        """Watch `new/` if it exists (the hook makes it with the first entry); True if newly armed."""
        if self._inotify is None or self._wd is not None:
            return False
        try:
            self._wd = self._inotify.add_watch(self.new, _ARRIVED | flags.ONLYDIR)
        except OSError:  # not there yet: retried on every wait
            return False
        return True

    def wait(self, timeout: float, stop: Callable[[], bool] = lambda: False) -> bool:
        """Block up to `timeout` seconds; True as soon as an entry has landed."""
        deadline = time.monotonic() + timeout
        while not stop():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if self._arm():
                return True  # `new/` just appeared: entries may be in it already
            if self._landed(min(left, _SLICE_S)):
                return True
        return False

    def _landed(self, seconds: float) -> bool:
        if self._wd is None or self._inotify is None:
            time.sleep(seconds)
            return False
        landed = False
        for event in self._inotify.read(timeout=math.ceil(seconds * 1000)):
            if event.mask & flags.Q_OVERFLOW:
                landed = True  # events were lost: look at the spool
            elif event.mask & _GONE:
                self._wd, landed = None, True
            elif event.mask & _ARRIVED and event.name and not event.name.startswith("."):
                landed = True  # dot files are skipped by the spool reader too
        return landed

    def close(self) -> None:
        if self._inotify is not None:
            self._inotify.close()
            self._inotify, self._wd = None, None

    def __enter__(self) -> SpoolWatcher:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
