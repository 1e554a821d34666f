"""Remote mode of the worker (`slurm-attr worker --service URL --token-file F`): each attempt is
sent as a bundle to an attribution service, which diagnoses it and stores it in its own (shared)
store, so many clusters can feed one service.

The bundle is what the in-process worker would read (connectors/export.py). What the service
answers decides the queue row's fate: stored (done), unreachable, timed out or 5xx (the queue's
retry with backoff), any other 4xx (a dead letter with the service's reason: sending the same
bundle again cannot help), 401/403 (`Refused`: the worker stops with a clear error and gives its
claims back untouched). The bearer token is read from a file and never logged.
"""

from __future__ import annotations

import logging
import stat
import tarfile
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from slurm_attr import ruleset as rules
from slurm_attr.config import Settings
from slurm_attr.connectors.export import write_bundle
from slurm_attr.model import AttemptFacts
from slurm_attr.scope.slurm import SlurmClient, workload_from

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("slurm_attr.worker")
MIN_TOKEN_LEN = 16
DEFAULT_TIMEOUT_S = 300.0  # a big bundle on a busy service: the diagnosis itself takes a while
DEFAULT_MAX_MB = 256  # the service's default api_max_upload_mb


class RemoteError(Exception):
    """Base of what the service's answer means for the queue row."""


class Unreachable(RemoteError):
    """The service did not answer, timed out or failed (5xx, 429): retry later with backoff."""


class Rejected(RemoteError):
    """The service refused this bundle (a 4xx other than 401/403): sending it again cannot help."""


class Refused(RemoteError):
    """The service refused the token (401, or 403 for a read-only one): nothing can be sent
    until the token file is fixed, so the worker stops and keeps every job queued."""


class TokenFileError(ValueError):
    """The token file cannot be used; the message names the file, never the token."""


def read_token(path: Path) -> str:
    """The bearer token: the first word of the first line that is not a comment (a line of the
    service's own token file, `<token> submit`, works as it is). The file must not be readable by
    others."""
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TokenFileError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from exc
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise TokenFileError(f"{path}: open to its group or others; chmod 600 it")
    words = next((line.split("#", 1)[0].split() for line in text.splitlines()
                  if line.split("#", 1)[0].strip()), [])
    if not words or len(words[0]) < MIN_TOKEN_LEN:
        raise TokenFileError(f"{path}: no token of at least {MIN_TOKEN_LEN} characters")
    return words[0]


class Remote:
    """The attribution service as the worker uses it."""

    def __init__(self, url: str, token: str, settings: Settings, *,
                 timeout_s: float = DEFAULT_TIMEOUT_S, max_mb: int = DEFAULT_MAX_MB) -> None:
        import httpx  # only remote mode needs an HTTP client

        self.url, self.settings, self.max_bytes = url.rstrip("/"), settings, max_mb << 20
        self.down = False  # the last call found the service unreachable
        self.http = httpx.Client(base_url=self.url, timeout=httpx.Timeout(timeout_s, connect=10.0),
                                 headers={"Authorization": f"Bearer {token}",
                                          "User-Agent": "slurm-attr-worker"})

    def close(self) -> None:
        self.http.close()

    # ------------------------------------------------------------------ calls
    def has_diagnosis(self, cluster: str, job_id: str, attempt: int) -> bool:
        """Whether the service stores a diagnosis of this attempt (earlier attempts of a requeued
        job come along only when it has none)."""
        path = f"/v1/diagnoses/{quote(cluster, safe='')}/{quote(job_id, safe='')}/{attempt}"
        answer = self._call("GET", path)
        if answer.status_code == 404:
            return False
        self._check(answer, f"asking for {cluster} job {job_id}.{attempt}")
        return True

    def submit(self, facts: AttemptFacts, cluster: str, env: dict[str, str],
               client: SlurmClient) -> dict[str, Any]:
        """Build the attempt's bundle, post it with save=true; returns the stored diagnosis."""
        workload = workload_from(facts, cluster)
        ruleset = rules.load(self.settings.rules)
        with tempfile.TemporaryDirectory(prefix="slurm-attr-bundle-") as tmp:
            folder, archive = Path(tmp) / "bundle", Path(tmp) / "bundle.tar.gz"
            folder.mkdir(mode=0o700)
            done = write_bundle(folder, workload, ruleset, self.settings, env, client, self.max_bytes)
            for note in done.notes:
                log.warning("job %s.%s bundle: %s", workload.job_id, workload.attempt, note)
            with tarfile.open(archive, "w:gz", compresslevel=6) as tar:
                tar.add(folder, arcname=".")
            size = archive.stat().st_size
            with archive.open("rb") as body:
                answer = self._call("POST", "/v1/attributions", params={"save": "true"},
                                    content=_chunks(body),
                                    headers={"Content-Type": "application/gzip",
                                             "Content-Length": str(size)})
        what = f"job {workload.job_id}.{workload.attempt} ({done.files} files, {size >> 10} KiB)"
        self._check(answer, f"posting {what}")
        doc = answer.json()
        if doc.get("workload", {}).get("cluster") != workload.cluster:  # never file it elsewhere
            raise Rejected(f"the service stored {what} under cluster "
                           f"{doc.get('workload', {}).get('cluster')!r}, not {workload.cluster!r}")
        return dict(doc)

    def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        import httpx

        try:
            answer = self.http.request(method, path, **kwargs)
        except httpx.TransportError as exc:  # refused, reset, DNS, TLS, timeout
            self.down = True
            raise Unreachable(f"the service at {self.url} did not answer: "
                              f"{type(exc).__name__}: {exc}") from exc
        self.down = _unavailable(answer.status_code)
        return answer

    def _check(self, answer: httpx.Response, doing: str) -> None:
        code = answer.status_code
        if 200 <= code < 300:
            return
        if 300 <= code < 400:  # a proxy's login page or http -> https: not the API answering
            raise Rejected(f"the service answered {code} {doing}, redirecting to "
                           f"{answer.headers.get('Location', '?')[:200]}: give --service that URL")
        why = f"the service answered {code} {answer.reason_phrase} {doing}: {_detail(answer)}"
        if code in (401, 403):
            raise Refused(why + " (check the token in --token-file: it needs the 'submit' scope)")
        if _unavailable(code):
            raise Unreachable(why)
        raise Rejected(why)


def _unavailable(code: int) -> bool:
    """The service is down or overloaded (try later), not refusing this request."""
    return code >= 500 or code in (408, 429)


def _chunks(body: Any, size: int = 1 << 20) -> Any:
    while chunk := body.read(size):
        yield chunk


def _detail(answer: httpx.Response) -> str:
    """The service's one-line reason (`{"detail": ...}`), else the start of the body."""
    try:
        detail = answer.json().get("detail")
    except (ValueError, AttributeError):
        detail = None
    text = detail if isinstance(detail, str) else answer.text
    return " ".join(text.split())[:500] or "(no reason given)"
