"""The `slurm-attr` command line."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from slurm_attr import __version__
from slurm_attr.analyze import analyze_bundle
from slurm_attr.output.diagnosis import dumps
from slurm_attr.output.summary import render_summary
from slurm_attr.ruleset import RuleError
from slurm_attr.scope.static import BundleError

DB_HELP = "Database URL (default: $SLURM_ATTR_DB or sqlite:///slurm-attr.db)."


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="slurm-attr")
def cli() -> None:
    """Explain why Slurm jobs failed: one root cause, with its evidence."""


@cli.command()
@click.argument("bundles", nargs=-1, required=True,
                type=click.Path(path_type=Path, file_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--rules", "rules_dir", type=click.Path(exists=True, file_okay=False),
              envvar="SLURM_ATTR_RULES", help="Rules directory (default: the built-in rules).")
@click.option("--save", is_flag=True, help="Store the diagnoses in the database.")
@click.option("--db", envvar="SLURM_ATTR_DB", help=DB_HELP)
def analyze(bundles: tuple[Path, ...], fmt: str, rules_dir: str | None, save: bool,
            db: str | None) -> None:
    """Diagnose static job bundles (see README: the bundle layout)."""
    diagnoses = []
    failed = False
    for bundle in bundles:
        try:
            diagnoses.append((bundle, analyze_bundle(bundle, rules_dir)))
        except (BundleError, RuleError) as exc:
            click.echo(f"slurm-attr: {bundle}: {exc}", err=True)
            failed = True
    for bundle, diagnosis in diagnoses:
        if fmt == "json":
            click.echo(dumps(diagnosis), nl=False)
        else:
            if len(diagnoses) > 1:
                click.echo(f"== {bundle}")
            click.echo(render_summary(diagnosis))
    if save and diagnoses:
        from slurm_attr.store.repository import Store

        with Store.open(db) as store:
            for _, diagnosis in diagnoses:
                store.save_diagnosis(diagnosis)
        click.echo(f"saved {len(diagnoses)} diagnoses", err=True)
    if failed:
        sys.exit(2)


@cli.command()
@click.option("--since", default="1d", show_default=True, help="1d, 12h, 30m, 2w or an ISO date.")
@click.option("--until", default=None, help="End of the window (default: now).")
@click.option("--cluster")
@click.option("--partition")
@click.option("--user")
@click.option("--node")
@click.option("--sub-domain")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv", "html"]),
              default="text", show_default=True)
@click.option("--out", type=click.Path(path_type=Path, file_okay=False),
              help="Output directory for --format html (default: ./slurm-attr-report).")
@click.option("--max-job-pages", default=5000, show_default=True,
              help="Write a page for at most this many (most recent) attempts.")
@click.option("--db", envvar="SLURM_ATTR_DB", help=DB_HELP)
def report(since: str, until: str | None, cluster: str | None, partition: str | None,
           user: str | None, node: str | None, sub_domain: str | None, fmt: str,
           out: Path | None, max_job_pages: int, db: str | None) -> None:
    """Report the failures diagnosed in a time window."""
    from datetime import UTC, datetime

    from slurm_attr.report import render
    from slurm_attr.report.query import Filters, load_frame, parse_when
    from slurm_attr.store.repository import Store

    try:
        window = Filters(parse_when(since), parse_when(until) if until else datetime.now(UTC),
                         cluster, partition, user, node, sub_domain)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc
    with Store.open(db) as store:
        df = load_frame(store, window)
        if fmt == "html":
            target = out or Path("slurm-attr-report")
            counts = render.write_site(store, df, window, target, max_job_pages=max_job_pages)
            click.echo(f"wrote {target}/index.html ({counts['rows']} attempts, "
                       f"{counts['job_pages']} job pages, {counts['node_pages']} node pages)")
            return
    writers = {"text": render.render_text, "json": render.render_json, "csv": render.render_csv}
    click.echo(writers[fmt](df), nl=False)


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


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
