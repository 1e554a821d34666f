"""Prometheus text exposition: stored diagnoses, the queue, and request latency histograms.

The latency middleware is plain ASGI (no per-request task or body copy) and labels requests by
their route template, never by the raw path, so a scan of random URLs cannot grow the series.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
                   Awaitable[None]]


class Latency:
    """Histograms of request time by (method, route, status class)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.series: dict[tuple[str, str, str], list[float]] = {}

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        key = (method, route, f"{status // 100}xx")
        with self.lock:
            counts = self.series.setdefault(key, [0.0] * (len(BUCKETS) + 2))
            for i, bound in enumerate(BUCKETS):
                if seconds <= bound:
                    counts[i] += 1
            counts[-2] += 1  # +Inf / count
            counts[-1] += seconds  # sum

    def lines(self) -> list[str]:
        name = "slurm_attr_http_request_duration_seconds"
        out = [f"# HELP {name} Time to answer an HTTP request.", f"# TYPE {name} histogram"]
        with self.lock:
            items = sorted((k, list(v)) for k, v in self.series.items())
        for (method, route, status), counts in items:
            labels = f'method="{method}",route="{label(route)}",status="{status}"'
            for bound, n in zip(BUCKETS, counts, strict=False):
                out.append(f'{name}_bucket{{{labels},le="{bound}"}} {n:.0f}')
            out.append(f'{name}_bucket{{{labels},le="+Inf"}} {counts[-2]:.0f}')
            out.append(f"{name}_count{{{labels}}} {counts[-2]:.0f}")
            out.append(f"{name}_sum{{{labels}}} {counts[-1]:.6f}")
        return out


class LatencyMiddleware:
    def __init__(self, app: ASGIApp, latency: Latency) -> None:
        self.app, self.latency = app, latency

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, status = time.perf_counter(), [500]

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            self.latency.observe(scope["method"], template, status[0], time.perf_counter() - started)


def label(value: Any) -> str:
    """A label value in the exposition format: backslash, quote and newline escaped."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def exposition(counts: dict[str, Any], latency: Latency) -> str:
    lines = ["# HELP slurm_attr_diagnoses Current stored diagnoses.",
             "# TYPE slurm_attr_diagnoses gauge"]
    for outcome, sub_domain, cluster, n in sorted(counts["diagnoses"]):
        lines.append(f'slurm_attr_diagnoses{{outcome="{label(outcome)}",sub_domain="{label(sub_domain)}",'
                     f'cluster="{label(cluster)}"}} {n}')
    lines += ["# HELP slurm_attr_queue_jobs Work queue rows by state.",
              "# TYPE slurm_attr_queue_jobs gauge"]
    for state in sorted(set(counts["queue"]) | {"pending", "leased", "done", "skipped", "dead"}):
        lines.append(f'slurm_attr_queue_jobs{{state="{label(state)}"}} {counts["queue"].get(state, 0)}')
    lines += ["# HELP slurm_attr_dead_letters Jobs that ran out of tries.",
              "# TYPE slurm_attr_dead_letters gauge",
              f"slurm_attr_dead_letters {counts['queue'].get('dead', 0)}"]
    return "\n".join(lines + latency.lines()) + "\n"
