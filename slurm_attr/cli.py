"""The `slurm-attr` command line."""

from __future__ import annotations

import logging
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from slurm_attr import __version__
from slurm_attr.sanitize import clean, clean_lines

if TYPE_CHECKING:
    from slurm_attr.config import Settings
    from slurm_attr.store.repository import Store
    from slurm_attr.worker.remote import Remote

# Each command imports what it needs when it runs: `--help`, `analyze BUNDLE` and the worker
# should not pay for pandas, SQLAlchemy and Alembic unless they use them.

DB_HELP = "Database URL (default: $SLURM_ATTR_DB, then `db` in the config file, then sqlite:///slurm-attr.db)."


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="slurm-attr")
def cli() -> None:
    """Explain why Slurm jobs failed: one root cause, with its evidence."""


@cli.command()
@click.argument("bundles", nargs=-1, type=click.Path(path_type=Path, file_okay=False))
@click.option("--job", "job_id", help="Diagnose this job of the live cluster (sacct and its logs).")
@click.option("--attempt", type=int, default=None,
              help="With --job: which attempt (0 = first run; default: the last).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--rules", "rules_dir", type=click.Path(exists=True, file_okay=False),
              envvar="SLURM_ATTR_RULES", help="Rules directory (default: the built-in rules).")
@click.option("--save", is_flag=True, help="Store the diagnoses in the database.")
@click.option("--keep-history/--replace", default=None,
              help="With --save: keep an attempt's earlier diagnosis as history, or replace it "
                   "(default: keep_history in the config file, else replace, but never by a "
                   "diagnosis that saw less evidence: that one is kept as history).")
@click.option("--db", envvar="SLURM_ATTR_DB", help=DB_HELP)
def analyze(bundles: tuple[Path, ...], job_id: str | None, attempt: int | None, fmt: str,
            rules_dir: str | None, save: bool, keep_history: bool | None, db: str | None) -> None:
    """Diagnose static job bundles (see README: the bundle layout) or one live job (--job).

    Each bundle stands alone: the usable ones are printed (and saved), the others are named on
    stderr with the reason, and the exit status is 2 when any bundle was unusable."""
    from slurm_attr.analyze import analyze_bundle
    from slurm_attr.output.diagnosis import dumps
    from slurm_attr.output.summary import render_summary
    from slurm_attr.ruleset import RuleError
    from slurm_attr.scope.static import BundleError

    if bool(bundles) == bool(job_id):
        raise click.UsageError("give bundle directories or --job JOBID (not both)")
    settings = _settings()
    diagnoses, failed = [], 0
    if job_id:
        diagnoses.append((f"job {job_id}", _analyze_live(job_id, attempt, rules_dir, db)))
    for bundle in bundles:
        try:
            diagnoses.append((str(bundle), analyze_bundle(bundle, rules_dir, settings.read_limits())))
        except (BundleError, RuleError) as exc:
            _warn(f"{bundle}: {exc}")
            failed += 1
        except Exception as exc:  # a bug must not lose the other bundles' diagnoses
            logging.getLogger("slurm_attr").debug("analysis failed", exc_info=True)
            _warn(f"{bundle}: internal error, please report it: {type(exc).__name__}: {exc}")
            failed += 1
    for label, diagnosis in diagnoses:
        if fmt == "json":
            click.echo(dumps(diagnosis), nl=False)
        else:
            if len(bundles) + bool(job_id) > 1:
                click.echo(clean(f"== {label}"))
            click.echo(clean_lines(render_summary(diagnosis)))
    if save and diagnoses:
        from slurm_attr.store.repository import Store

        with Store.open(db) as store:
            keep = settings.keep_history if keep_history is None else keep_history
            # An explicit --replace also lets a diagnosis that saw less replace a better one.
            stored = store.save_many([d for _, d in diagnoses], keep_history=keep,
                                     force=keep_history is False)
        click.echo(f"saved {stored} new or changed diagnoses ({len(diagnoses) - stored} already "
                   "stored unchanged)", err=True)
    if failed:
        _warn(f"{failed} of {len(bundles)} bundles could not be used")
        sys.exit(2)


def _warn(message: str) -> None:
    click.echo(clean(f"slurm-attr: {message}"), err=True)


def _analyze_live(job_id: str, attempt: int | None, rules_dir: str | None,
                  db: str | None) -> dict:
    from dataclasses import replace

    from slurm_attr.analyze import diagnose_attempt, minimal_env
    from slurm_attr.connectors.slurm import pick_attempt
    from slurm_attr.scope.slurm import SlurmCommands, SlurmError

    settings = _settings()
    settings = replace(settings, rules=rules_dir or settings.rules)
    client = SlurmCommands(settings)
    try:
        attempts = client.sacct([job_id]).get(job_id, [])
        if not attempts:
            raise click.ClickException(f"sacct knows no job {job_id}")
        facts = pick_attempt(attempts, index=attempt)
        if facts is None:
            raise click.ClickException(f"job {job_id} has attempts 0..{len(attempts) - 1}")
        if facts.end is None:
            raise click.ClickException(f"job {job_id} has not ended ({facts.state})")
        cluster = facts.cluster or client.cluster_name()
        # the hook's environment names the real output files; else what slurmctld still knows
        env = _queued_env(db, cluster, job_id, facts.end) or {
            **minimal_env(facts, cluster), **client.job_streams(job_id)}
        return diagnose_attempt(facts, cluster, env, settings, client)
    except SlurmError as exc:
        raise click.ClickException(str(exc)) from exc


def _queued_env(db: str | None, cluster: str, job_id: str, end: datetime) -> dict[str, str] | None:
    """The hook's environment for the attempt that ended at `end`, when the queue has it (it names
    the job's output files); None when there is none or no database to ask."""
    from sqlalchemy.exc import SQLAlchemyError

    from slurm_attr.store import queue
    from slurm_attr.store.repository import Store

    try:
        with Store.open(db) as store:
            return queue.epilog_env(store, cluster, job_id, end)
    except SQLAlchemyError:
        return None


def _settings() -> Settings:
    from slurm_attr import config

    try:
        return config.load()
    except config.ConfigError as exc:
        raise click.ClickException(f"configuration: {exc}") from exc


@cli.command()
@click.option("--since", default="1d", show_default=True, help="1d, 12h, 30m, 2w or an ISO date.")
@click.option("--until", default=None, help="End of the window (default: now).")
@click.option("--cluster")
@click.option("--partition")
@click.option("--user")
@click.option("--node")
@click.option("--sub-domain", "sub_domains", multiple=True,
              help="One or more (a comma list, or the option repeated).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv", "html"]),
              default="text", show_default=True)
@click.option("--out", type=click.Path(path_type=Path, file_okay=False),
              help="Output directory for --format html (default: ./slurm-attr-report).")
@click.option("--max-job-pages", default=5000, show_default=True,
              help="Write a page for at most this many (most recent) attempts.")
@click.option("--db", envvar="SLURM_ATTR_DB", help=DB_HELP)
def report(since: str, until: str | None, cluster: str | None, partition: str | None,
           user: str | None, node: str | None, sub_domains: tuple[str, ...], fmt: str,
           out: Path | None, max_job_pages: int, db: str | None) -> None:
    """Report the failures diagnosed in a time window."""
    from slurm_attr.report import site, tables
    from slurm_attr.report.query import Filters, load_frame
    from slurm_attr.store.repository import Store

    sub_domain = ",".join(sub_domains) or None
    window = Filters(*_window(since, until), cluster, partition, user, node, sub_domain)
    with Store.open(db) as store:
        df = load_frame(store, window)
        if fmt == "html":
            target = out or Path("slurm-attr-report")
            counts = site.write_site(store, df, window, target, max_job_pages=max_job_pages)
            click.echo(f"wrote {target}/index.html ({counts['rows']} attempts, "
                       f"{counts['job_pages']} job pages, {counts['node_pages']} node pages)")
            return
    writers = {"text": tables.render_text, "json": tables.render_json, "csv": tables.render_csv}
    click.echo(writers[fmt](df), nl=False)


def _window(since: str, until: str | None) -> tuple[datetime, datetime]:
    """--since/--until as times; a bad one is a usage error naming the option."""
    from datetime import UTC

    from slurm_attr.report.query import parse_when

    bounds = []
    for hint, value in (("--since", since), ("--until", until)):
        try:
            bounds.append(parse_when(value) if value else datetime.now(UTC))
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint=hint) from exc
    return bounds[0], bounds[1]


@cli.group()
def db() -> None:
    """Database maintenance."""


@db.command("upgrade")
@click.option("--db", "url", envvar="SLURM_ATTR_DB", help=DB_HELP)
def db_upgrade(url: str | None) -> None:
    """Create or migrate the schema to the latest version."""
    from slurm_attr.store.repository import resolve_url, upgrade

    upgrade(resolve_url(url))
    click.echo("database is at the latest schema")


def _remote_options(command: Any) -> Any:
    """--service and its companions, for the commands that drain the queue."""
    for option in reversed((
        click.option("--service", metavar="URL", default=None,
                     help="Send each attempt as a bundle to this attribution service, which diagnoses "
                          "and stores it (the local database then only holds the queue)."),
        click.option("--token-file", type=click.Path(path_type=Path, dir_okay=False), default=None,
                     help="With --service: a file holding a 'submit' token (its first word; chmod 600)."),
        click.option("--upload-max-mb", default=256, show_default=True, type=click.IntRange(1, 1 << 20),
                     help="With --service: the most one bundle may hold (the service's "
                          "api_max_upload_mb)."),
        click.option("--timeout", "timeout_s", default=300.0, show_default=True,
                     type=click.FloatRange(1),
                     help="With --service: seconds to wait for the service's answer to one bundle."))):
        command = option(command)
    return command


@cli.command()
@click.option("--once", is_flag=True, help="Drain what is queued, then exit (for cron or tests).")
@click.option("--poll", default=5.0, show_default=True, help="Seconds between looks at the spool.")
@click.option("--batch", default=20, show_default=True, help="Jobs claimed (and sacct'ed) at once.")
@click.option("--db", envvar="SLURM_ATTR_DB", help=DB_HELP)
@_remote_options
@click.option("-v", "--verbose", is_flag=True)
def worker(once: bool, poll: float, batch: int, db: str | None, service: str | None,
           token_file: Path | None, upload_max_mb: int, timeout_s: float, verbose: bool) -> None:
    """Diagnose the jobs the epilog queues (runs until SIGTERM; see the systemd unit)."""
    logging.basicConfig(level=logging.INFO if verbose or not once else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(message)s")
    settings = _settings()
    remote = _remote(service, token_file, settings, upload_max_mb, timeout_s)
    try:
        with _open_store(db, wait=not once, poll_s=poll) as store:
            from slurm_attr.worker.loop import Worker
            from slurm_attr.worker.remote import Refused

            w = Worker(store, settings, remote=remote)
            w.handle_signals()
            try:
                handled = w.run(poll_s=poll, once=once, batch=batch)
            except Refused as exc:  # every job stays queued; nothing can be sent with this token
                raise click.ClickException(f"stopped: {exc}") from exc
    finally:
        if remote is not None:
            remote.close()
    click.echo(f"handled {handled} jobs", err=True)


def _remote(service: str | None, token_file: Path | None, settings: Settings, max_mb: int,
            timeout_s: float) -> Remote | None:
    """The service client of remote mode, or None; a bad URL or token file stops the command."""
    if service is None:
        if token_file is not None:
            raise click.UsageError("--token-file goes with --service")
        return None
    _check_service_url(service)
    if token_file is None:
        raise click.UsageError("--service needs --token-file (a file holding a 'submit' token)")
    try:
        from slurm_attr.worker.remote import Remote, TokenFileError, read_token

        return Remote(service, read_token(token_file), settings, timeout_s=timeout_s, max_mb=max_mb)
    except TokenFileError as exc:
        raise click.ClickException(str(exc)) from exc
    except ImportError as exc:
        raise click.ClickException(f"--service needs httpx ({exc})") from exc


def _check_service_url(url: str) -> None:
    """The token must not cross a network in clear text nor sit in the URL (it would be logged)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise click.UsageError("--service must be an http:// or https:// URL")
    if parts.username or parts.password:
        raise click.UsageError("--service must not hold credentials; the token goes in --token-file")
    if parts.scheme == "http" and parts.hostname not in ("localhost", "127.0.0.1", "::1"):
        raise click.UsageError("--service over plain http only to this host (a local proxy); "
                               "use https:// so the token is not sent in clear text")


def _open_store(db: str | None, *, wait: bool, poll_s: float) -> Store:
    """Open (and migrate) the store; a long-running worker waits for a database that is down."""
    import time

    from sqlalchemy.exc import OperationalError

    from slurm_attr.store.repository import Store

    while True:
        try:
            return Store.open(db)
        except OperationalError as exc:
            if not wait:
                raise click.ClickException(f"database unavailable: {exc}") from exc
            logging.getLogger("slurm_attr.worker").error(
                "database unavailable, retrying in %.0fs: %s", poll_s, str(exc).splitlines()[0])
            time.sleep(poll_s)


@cli.command("queue")
@click.option("--retry-dead", is_flag=True, help="Give every dead-letter job a fresh set of tries.")
@click.option("--db", envvar="SLURM_ATTR_DB", help=DB_HELP)
def queue_status(retry_dead: bool, db: str | None) -> None:
    """How many queued jobs are in each state, and the dead letters with their last error."""
    from slurm_attr.report.query import load_dead_letters
    from slurm_attr.store import queue
    from slurm_attr.store.repository import Store

    with Store.open(db) as store:
        if retry_dead:
            click.echo(f"{queue.revive_dead(store)} dead-letter jobs queued again")
        for state, n in sorted(queue.counts(store).items()):
            click.echo(f"{state:<8} {n:>8}")
        for row in load_dead_letters(store).itertuples():
            click.echo(f"dead: {row.cluster} {row.job_id} (restart {row.attempt}), {row.tries} tries: "
                       f"{clean(row.last_error or '')[:200]}")


@cli.command()
@click.option("--since", default="7d", show_default=True, help="1d, 12h, 2w or an ISO date.")
@click.option("--until", default=None, help="End of the window (default: now).")
@click.option("--redo", is_flag=True,
              help="Diagnose again attempts that already have a diagnosis (new rules, say).")
@click.option("--replace", is_flag=True,
              help="With --redo: let a new diagnosis replace the old even if it saw less evidence.")
@click.option("--wait", "wait_s", type=float, default=0.0, show_default=True,
              help="Seconds to wait for attempts still queued (retrying, or taken by a running worker).")
@click.option("--db", envvar="SLURM_ATTR_DB", help=DB_HELP)
@_remote_options
def backfill(since: str, until: str | None, redo: bool, replace: bool, wait_s: float,
             db: str | None, service: str | None, token_file: Path | None, upload_max_mb: int,
             timeout_s: float) -> None:
    """Diagnose failed jobs straight from sacct history (clusters that ran without the hook).

    Attempts that already have a diagnosis (here, or at the --service) are left alone unless
    --redo; a re-diagnosis that saw less of the evidence than the stored one is kept as history
    only, unless --replace."""
    from slurm_attr.scope.slurm import SlurmError
    from slurm_attr.worker.remote import Refused

    start, end = _window(since, until)
    settings = _settings()
    remote = _remote(service, token_file, settings, upload_max_mb, timeout_s)
    try:
        summary = _backfill(db, settings, remote, start, end, redo=redo, replace=replace,
                            wait_s=wait_s)
    except (SlurmError, Refused) as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        if remote is not None:
            remote.close()
    click.echo(summary, err=True)


def _backfill(db: str | None, settings: Settings, remote: Remote | None, start: datetime,
              end: datetime, *, redo: bool, replace: bool, wait_s: float) -> str:
    """Queue the window's failed attempts, drain them, wait for the rest; returns the summary."""
    import time

    from slurm_attr.store import queue
    from slurm_attr.store.repository import Store
    from slurm_attr.worker.backfill import enqueue_failed
    from slurm_attr.worker.loop import Worker

    with Store.open(db) as store:
        w = Worker(store, settings, force=replace, remote=remote)
        w.handle_signals()
        plan = enqueue_failed(w, start, end, redo=redo)
        with click.progressbar(length=plan.queued, label=f"diagnosing {plan.queued} attempts",
                               file=sys.stderr) as bar:
            w.drain(progress=bar.update)
        deadline = time.monotonic() + wait_s
        states = queue.states_of(store, plan.keys)
        while _unfinished(states) and time.monotonic() < deadline and not w.stopping:
            time.sleep(min(2.0, max(0.0, deadline - time.monotonic())))
            w.drain()
            states = queue.states_of(store, plan.keys)
    return _backfill_summary(plan.queued, plan.already_diagnosed, states)


def _unfinished(states: dict[str, int]) -> int:
    return sum(n for state, n in states.items() if state in ("pending", "leased"))


def _backfill_summary(queued: int, already: int, states: dict[str, int]) -> str:
    parts = [f"queued {queued} failed attempts"]
    if already:
        parts.append(f"{already} already diagnosed were left alone (--redo diagnoses them again)")
    parts.append(f"{states.get('done', 0)} diagnosed")
    if states.get("skipped"):
        parts.append(f"{states['skipped']} skipped")
    if _unfinished(states):
        parts.append(f"{_unfinished(states)} still queued: a running worker or a retry after "
                     "backoff will finish them (see `slurm-attr queue`, or use --wait)")
    if states.get("dead"):
        parts.append(f"{states['dead']} failed for good (dead letters: `slurm-attr queue`)")
    return "; ".join(parts)


@cli.group()
def rules() -> None:
    """Check and explain the rules (rules/: patterns, tables, policy, catalogs)."""


@rules.command("check")
@click.argument("directory", required=False, type=click.Path(file_okay=False))
def rules_check(directory: str | None) -> None:
    """Validate a rules directory (default: the built-in rules); one located line per problem."""
    from slurm_attr.ruleset import RuleError, load

    try:
        ruleset = load(directory)
    except RuleError as exc:
        raise click.ClickException(clean(str(exc))) from exc
    click.echo(f"{ruleset.directory}: ok, {len(ruleset.patterns)} patterns, "
               f"{len(ruleset.xid_catalog)} Xid codes, version {ruleset.version}")


@rules.command("explain")
@click.argument("line")
@click.option("--origin", type=click.Choice(["node", "app", "controller"]), default="node",
              show_default=True, help="Where the line was logged.")
@click.option("--node", default="node01", show_default=True, help="The node the line belongs to.")
@click.option("--job", "job_id", default="0", show_default=True, help="The job id the line is about.")
@click.option("--rules", "rules_dir", type=click.Path(exists=True, file_okay=False),
              envvar="SLURM_ATTR_RULES", help="Rules directory (default: the built-in rules).")
def rules_explain(line: str, origin: str, node: str, job_id: str, rules_dir: str | None) -> None:
    """Which pattern matches LINE and what it becomes (role, sub_domain, priority, summary)."""
    from slurm_attr.extract.explain import explain
    from slurm_attr.ruleset import RuleError, load

    try:
        found = explain(load(rules_dir), line, origin, node, job_id)
    except RuleError as exc:
        raise click.ClickException(clean(str(exc))) from exc
    if not found.events:
        click.echo("no pattern matches this line")
    for e in found.events:
        click.echo(clean(f"{e.rule}: {e.kind} {e.code or ''} -> {e.base_role}, sub_domain "
                         f"{e.sub_domain or '-'}, priority {e.priority}, node {e.node or '-'}"))
        click.echo(clean(f"  {e.summary}"))
        for key, value in sorted(e.fields.items()):
            click.echo(clean(f"  {key} = {value}"))
    if found.outcome_keys:  # where an admin edits what the line becomes
        click.echo(clean("decoder outcomes (rules/decoders.yaml): " + ", ".join(found.outcome_keys)))
    if found.near_misses:
        click.echo(clean("keywords found but the regex did not match: " + ", ".join(found.near_misses)))


@cli.group()
def epilog() -> None:
    """The EpilogSlurmctld hook that queues every finished job."""


@epilog.command("install")
@click.option("--spool", type=click.Path(path_type=Path), default=None,
              help="Spool directory (default: $SLURM_ATTR_SPOOL, the config file, /var/spool/slurm-attr).")
@click.option("--dest", type=click.Path(path_type=Path, dir_okay=False),
              default=Path("/usr/local/sbin/slurm-attr-epilog"), show_default=True,
              help="Where to write the hook.")
@click.option("--slurm-conf", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="slurm.conf to read SlurmUser from (default: $SLURM_CONF or /etc/slurm/slurm.conf).")
@click.option("--slurm-user", default=None, help="Override SlurmUser (the user the hook runs as).")
@click.option("--print-only", is_flag=True, help="Print the hook and the slurm.conf lines; write nothing.")
def epilog_install(spool: Path | None, dest: Path, slurm_conf: Path | None, slurm_user: str | None,
                   print_only: bool) -> None:
    """Install the hook, prepare its spool and print the slurm.conf lines."""
    from slurm_attr import hook

    spool = (spool or Path(_settings().spool)).absolute()
    user = slurm_user or hook.slurm_user(slurm_conf)
    try:
        if print_only:
            click.echo(hook.script_text(str(spool)), nl=False)
        else:
            hook.install(spool, dest.absolute(), user)
            click.echo(f"wrote {dest} (spool {spool}, writable by {user})", err=True)
    except (hook.HookError, OSError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(hook.conf_lines(dest.absolute()), nl=False, err=print_only)
    existing = hook.other_epilog(slurm_conf, dest.absolute())
    if existing:
        click.echo(f"warning: slurm.conf already runs EpilogSlurmctld={existing}; keep it by calling "
                   f"it from a wrapper that also runs {dest}", err=True)


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (loopback by default; put a TLS proxy in front otherwise).")
@click.option("--port", default=8080, show_default=True, type=click.IntRange(0, 65535))
@click.option("--root-path", default="", help="The prefix a reverse proxy serves this under, e.g. /attr.")
@click.option("--token-file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Bearer tokens, '<token> read|submit' per line (default: api_tokens_file).")
@click.option("--drain/--no-drain", default=False,
              help="Also diagnose queued jobs in-process (POST /v1/attributions/slurm) instead of "
                   "leaving them to a worker.")
@click.option("--ssl-certfile", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Serve HTTPS directly (sites without a proxy).")
@click.option("--ssl-keyfile", type=click.Path(exists=True, dir_okay=False), default=None)
@click.option("--access-log/--no-access-log", default=True, show_default=True)
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Worker processes (the API is CPU-bound Python: one per core).")
@click.option("--db", envvar="SLURM_ATTR_DB", help=DB_HELP)
def serve(host: str, port: int, root_path: str, token_file: Path | None, drain: bool,
          ssl_certfile: str | None, ssl_keyfile: str | None, access_log: bool, workers: int,
          db: str | None) -> None:
    """Serve the REST attribution API (/v1, docs at /docs) and the live dashboard (/)."""
    # Imported here: the other commands must not pay for the web stack at start-up.
    import json
    import os

    try:
        import uvicorn

        from slurm_attr.service.app import SERVE_ENV, create_app
        from slurm_attr.service.auth import TokenFileError, Tokens
    except ImportError as exc:
        raise click.ClickException(f"the service needs its extra: pip install 'slurm-attr[service]' "
                                   f"({exc.name} is missing)") from exc
    settings = _settings()
    source = token_file or (Path(settings.api_tokens_file) if settings.api_tokens_file else None)
    if source is None:
        raise click.ClickException("no token file: give --token-file or set api_tokens_file")
    try:
        tokens = Tokens.load(source)
    except TokenFileError as exc:
        raise click.ClickException(str(exc)) from exc
    common: dict[str, Any] = {"host": host, "port": port, "root_path": root_path,
                              "ssl_certfile": ssl_certfile, "ssl_keyfile": ssl_keyfile,
                              "access_log": access_log, "log_level": "info", "proxy_headers": True,
                              "server_header": False}
    if workers == 1:
        uvicorn.run(create_app(settings, db, tokens, drain=drain), **common)
        return
    # Several processes: uvicorn starts each from an import string, so the arguments travel in
    # the environment (the token file's path, never a token).
    os.environ[SERVE_ENV] = json.dumps({"db": db or settings.db, "tokens": str(source.absolute()),
                                        "drain": drain})
    uvicorn.run("slurm_attr.service.app:from_environment", factory=True, workers=workers, **common)


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
