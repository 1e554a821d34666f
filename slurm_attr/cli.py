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


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
