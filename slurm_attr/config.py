"""Settings: command-line flag, then environment, then the config file, then the built-in default.

The config file is TOML, read from `$SLURM_ATTR_CONFIG` or `/etc/slurm-attr/config.toml`.
Every key is optional; see the README's configuration section for the full list.
"""

from __future__ import annotations

import contextlib
import os
import tomllib
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path
from typing import Any

from slurm_attr.collect.files import ReadLimits
from slurm_attr.extract.timestamps import known_zone

DEFAULT_CONFIG = "/etc/slurm-attr/config.toml"


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Settings:
    db: str = "sqlite:///slurm-attr.db"
    spool: str = "/var/spool/slurm-attr"
    rules: str | None = None
    cluster: str | None = None  # default: ClusterName from `scontrol show config`
    # Node log files; {node} is a short node name from the expanded hostlist. Globs are allowed.
    node_logs: tuple[str, ...] = ("/var/log/remote/{node}/syslog*", "/var/log/remote/{node}/kern.log*",
                                  "/var/log/nodes/{node}/*.log*")
    controller_logs: tuple[str, ...] = ("/var/log/slurm/slurmctld.log*",)
    # Binary systemd journals per node ({node} substituted), read with journalctl --file; e.g.
    # "/var/log/journal/remote/remote-{node}*.journal". Empty: the journald source reads nothing.
    journal_files: tuple[str, ...] = ()
    # Observation sources of the live connector (see slurm_attr/connectors); a site's own source
    # module is named by its dotted path.
    sources: tuple[str, ...] = ("node_logs", "job_output", "slurmctld", "sacctmgr_events", "journald")
    # Job stdout/stderr is read only below these directories (and only if the owner could read it).
    job_output_roots: tuple[str, ...] = ("/home", "/scratch", "/work", "/tmp")
    margin_s: int = 600  # read this much log before the start and after the end
    # The zone of log lines that carry no UTC offset (classic syslog, slurmctld without ISO
    # offsets): the cluster's, by default the local zone of the host the worker runs on; each
    # log source may differ (nodes logging in UTC beside a controller in local time, say).
    timezone: str | None = None
    node_log_timezone: str | None = None
    controller_log_timezone: str | None = None
    job_output_timezone: str | None = None
    # Read caps against huge files and decompression bombs (past them a file is "truncated").
    max_file_mb: int = 4096  # taken from one file, after decompression
    max_attempt_mb: int = 16384  # all the files of one attempt together
    max_inflate_ratio: int = 200  # decompressed / compressed size of a .gz
    max_events_per_rule: int = 5000  # per node; past it repeats only add to counts
    settle_s: int = 10  # wait after a job ends before asking sacct (slurmdbd lags the controller)
    lease_s: int = 900
    max_tries: int = 8
    backoff_s: int = 15  # doubled after each failed try, capped at one hour
    skip_completed: bool = True  # drop queued jobs that sacct shows COMPLETED
    # A new diagnosis of an attempt (new rules, more logs) replaces the stored one, or keeps it
    # as history (reports show only the current one).
    keep_history: bool = False
    sacct: str = "sacct"
    sacctmgr: str = "sacctmgr"
    scontrol: str = "scontrol"
    # The attribution service (`slurm-attr serve`): bearer tokens, one "<token> <scope>" a line
    # (scope read or submit), and the caps on one uploaded bundle.
    api_tokens_file: str | None = None
    api_max_upload_mb: int = 256  # unpacked size of one posted bundle
    api_max_upload_files: int = 20000  # members of one posted archive

    def log_zone(self) -> str:
        return self.timezone or local_zone_name()

    def source_zones(self) -> dict[str, str]:
        """Zone names per log origin, each falling back to the cluster's."""
        zone = self.log_zone()
        return {"node": self.node_log_timezone or zone, "controller": self.controller_log_timezone or zone,
                "app": self.job_output_timezone or zone}

    def read_limits(self) -> ReadLimits:
        return ReadLimits(max_file_bytes=self.max_file_mb << 20,
                          max_attempt_bytes=self.max_attempt_mb << 20,
                          max_inflate_ratio=max(1, self.max_inflate_ratio),
                          max_events_per_rule=max(1, self.max_events_per_rule))


def local_zone_name() -> str:
    """This host's IANA zone: $TZ, else what /etc/localtime links to, else /etc/timezone, else UTC."""
    candidates = [os.environ.get("TZ", "").lstrip(":")]
    with contextlib.suppress(OSError):
        candidates.append(os.readlink("/etc/localtime").split("zoneinfo/", 1)[-1])
    with contextlib.suppress(OSError):
        candidates.append(Path("/etc/timezone").read_text().strip())
    return next((z for z in candidates if z and known_zone(z)), "UTC")


_ZONE_KEYS = ("timezone", "node_log_timezone", "controller_log_timezone", "job_output_timezone")


_ENV = {"db": "SLURM_ATTR_DB", "spool": "SLURM_ATTR_SPOOL", "rules": "SLURM_ATTR_RULES",
        "cluster": "SLURM_ATTR_CLUSTER"}


def _coerce(name: str, value: Any, default: Any) -> Any:
    if isinstance(default, tuple):
        if isinstance(value, str):
            return (value,)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{name} must be a list of strings")
        return tuple(value)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{name} must be true or false")
        return value
    if isinstance(default, int):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ConfigError(f"{name} must be a non-negative integer")
        return value
    if not isinstance(value, str):
        raise ConfigError(f"{name} must be a string")
    return value


def read_file(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def build(file_values: dict[str, Any], env: dict[str, str]) -> Settings:
    known = {f.name for f in fields(Settings)}
    values: dict[str, Any] = {}
    # Sections such as [worker] or [collect] only group keys for readability.
    flat = {}
    for key, value in file_values.items():
        if isinstance(value, dict):
            flat.update(value)
        else:
            flat[key] = value
    defaults = Settings()
    for key, value in flat.items():
        if key not in known:  # a typo must not silently fall back to a default
            raise ConfigError(f"unknown setting {key!r}")
        values[key] = _coerce(key, value, getattr(defaults, key))
    for key, var in _ENV.items():
        if env.get(var):
            values[key] = env[var]
    for key in _ZONE_KEYS:
        if values.get(key) is not None and not known_zone(values[key]):
            raise ConfigError(f"{key}: unknown time zone {values[key]!r} (an IANA name, e.g. Europe/Berlin)")
    return Settings(**values)


@cache
def load() -> Settings:
    path = Path(os.environ.get("SLURM_ATTR_CONFIG") or DEFAULT_CONFIG)
    return build(read_file(path), dict(os.environ))
