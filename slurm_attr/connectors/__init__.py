"""Connectors: where an attempt and its observations come from.

Two kinds, each a module of this package:

- an **execution context** turns identifiers into the attempt to diagnose and the places its
  evidence lives: `bundle` (a static bundle directory) and `slurm` (a live cluster's job);
- an **observation source** adds what it finds for one attempt (files to read, events, coverage)
  to a `Sources`, which the shared collector then reads and extracts. Live sources are chosen by
  the `sources` setting: `node_logs`, `job_output`, `slurmctld`, `sacctmgr_events`, `journald`.

A new source is one module that registers itself with `@register_source("name")`, plus its name
in `sources` (a site's own module is named by its dotted path, e.g. `mysite.ipmi_sel`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from slurm_attr.collect.collector import Sources
    from slurm_attr.config import Settings
    from slurm_attr.model import Workload
    from slurm_attr.scope.slurm import SlurmClient


@dataclass
class AttemptContext:
    """What a source may use to find an attempt's evidence."""

    workload: Workload
    settings: Settings
    env: dict[str, str] = field(default_factory=dict)  # the hook's job environment
    client: SlurmClient | None = None


class ObservationSource(Protocol):
    name: str

    def gather(self, ctx: AttemptContext, found: Sources) -> None:
        """Add this source's files, events and coverage for the attempt to `found`. A source that
        fails records it in the coverage; it never raises."""


_SOURCES: dict[str, Callable[[], ObservationSource]] = {}
BUILTIN_SOURCES = ("node_logs", "job_output", "slurmctld", "sacctmgr_events", "journald")


class UnknownSource(ValueError):
    pass


def register_source(name: str) -> Callable[[type], type]:
    def register(cls: type) -> type:
        setattr(cls, "name", name)  # noqa: B010 - the registry's name wins over the class's
        _SOURCES[name] = cls
        return cls

    return register


def observation_sources(names: Iterable[str]) -> list[ObservationSource]:
    """The configured sources, imported on first use (a built-in name or a dotted module path)."""
    sources = []
    for name in names:
        if name not in _SOURCES:
            module = f"{__name__}.{name}" if name in BUILTIN_SOURCES else name
            try:
                importlib.import_module(module)
            except ImportError as exc:
                raise UnknownSource(f"observation source {name!r} cannot be loaded ({exc}); "
                                    f"built-in ones: {', '.join(BUILTIN_SOURCES)}") from exc
        if name not in _SOURCES:
            raise UnknownSource(f"module {name!r} registers no observation source named {name!r}")
        sources.append(_SOURCES[name]())
    return sources
