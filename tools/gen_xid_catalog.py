"""Generate the vendor catalogs in rules/ from NVIDIA's published Xid catalog.

NVIDIA publishes the Xid catalog (and the NVLink5 rules of Xid 144-150) as tables in its Xid
documentation; save the table as CSV or save the page as HTML, then:

    python tools/gen_xid_catalog.py --version 2025-10-29 catalog.html -o rules/xid_catalog.csv
    python tools/gen_xid_catalog.py --kind nvlink5 --version 2025-10-29 nvlink5.csv \\
        -o rules/nvlink5_catalog.csv

Columns are found by their header words (`Code`/`Xid`, `Mnemonic`, `Description`, `... Immediate
...`, `... Investigatory ...`; for NVLink5 also unit, intrinfo V1/V2, errorStatus, severity, HW/SW),
so the published table, an earlier generated file, or the old combined rules CSV all work as input.
Cells are read as text: line breaks and runs of spaces become one space. The output is sorted by
Xid, starts with a header naming the source and its version, and is never edited by hand: the
site's own classification lives in rules/xid_overlay.csv.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import sys
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

SOURCE = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"


def _words(header: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", header.lower()).strip()


# Output column -> test on the input header's words. First output column that claims a header wins.
Matcher = Callable[[str], bool]
XID_COLUMNS: dict[str, Matcher] = {
    "xid": lambda h: h in ("xid", "code", "xid code", "id", "xid id", "error code"),
    "mnemonic": lambda h: "mnemonic" in h,
    "description": lambda h: "description" in h,
    "immediate": lambda h: "immediate" in h,
    "investigatory": lambda h: "investigat" in h,
}
NVLINK5_COLUMNS: dict[str, Matcher] = {
    "xid": lambda h: h in ("xid", "code", "xid code"),
    "unit": lambda h: h in ("unit", "subcode", "sub code", "error unit", "unit name"),
    "intrinfo_v1": lambda h: "v1" in h.split(),
    "intrinfo_v2": lambda h: "v2" in h.split(),
    "error_status": lambda h: h.replace(" ", "") in ("errorstatus", "error_status"),
    "immediate": lambda h: "immediate" in h,
    "investigatory": lambda h: "investigat" in h,
    "severity": lambda h: "severity" in h,
    "hw_sw": lambda h: h.replace(" ", "") == "hwsw",
}
KINDS = {"xid": XID_COLUMNS, "nvlink5": NVLINK5_COLUMNS}


class _TableParser(HTMLParser):
    """Every <table> of a page as rows of cell texts (<br> and block tags break lines)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        elif tag in ("br", "p", "li") and self._cell is not None:
            self._cell.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._row:
                self.tables[-1].append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _clean(cell: str) -> str:
    return " ".join(cell.split())


def read_rows(text: str) -> list[list[list[str]]]:
    """The input's tables (an HTML page may hold several; a CSV file is one)."""
    if re.search(r"<table\b", text, re.I):
        parser = _TableParser()
        parser.feed(text)
        return parser.tables
    lines = [line for line in text.splitlines(keepends=True) if not line.startswith("#")]
    return [[row for row in csv.reader(lines) if row]]


def _mapping(header: list[str], columns: dict[str, Matcher]) -> dict[str, int] | None:
    """Output column -> input index, or None when the header lacks one of the columns."""
    found: dict[str, int] = {}
    for index, name in enumerate(header):
        words = _words(name)
        column = next((c for c, test in columns.items() if c not in found and test(words)), None)
        if column is not None:
            found[column] = index
    return found if len(found) == len(columns) else None


def extract(tables: list[list[list[str]]], kind: str) -> list[dict[str, str]]:
    """The rows of the first table whose header has every column of `kind`, cleaned; rows whose
    Xid is not a number (section titles, notes) are left out."""
    columns = KINDS[kind]
    for table in tables:
        if not table or (mapping := _mapping(table[0], columns)) is None:
            continue
        rows = []
        for cells in table[1:]:
            row = {c: _clean(cells[i]) if i < len(cells) else "" for c, i in mapping.items()}
            if row["xid"].isdigit():
                rows.append(row)
        return rows
    raise ValueError(f"no table has the columns {', '.join(columns)}")


def render(rows: list[dict[str, str]], kind: str, version: str, source: str) -> str:
    columns = list(KINDS[kind])
    if kind == "xid":
        xids = [int(r["xid"]) for r in rows]
        duplicates = sorted({x for x in xids if xids.count(x) > 1})
        if duplicates:
            raise ValueError(f"Xid {duplicates[0]} is listed twice")
    # NVLink5 rules keep the published order within an Xid: the first matching rule wins.
    rows = sorted(rows, key=lambda r: int(r["xid"]))
    out = io.StringIO()
    hint = " (site changes go in xid_overlay.csv)" if kind == "xid" else ""
    out.write(f"# generated: tools/gen_xid_catalog.py --kind {kind}; do not edit, regenerate{hint}\n")
    out.write(f"# source: {source}\n")
    out.write(f"# version: {version}\n")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([row[c] for c in columns])
    return out.getvalue()


def generate(text: str, kind: str, version: str, source: str = SOURCE) -> str:
    return render(extract(read_rows(text), kind), kind, version, source)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input", type=Path, help="the published catalog table, as CSV or HTML")
    parser.add_argument("--kind", choices=sorted(KINDS), default="xid")
    parser.add_argument("--version", required=True,
                        help="the catalog's version, e.g. the date on the published page")
    parser.add_argument("--source", default=SOURCE, help="where the catalog was published")
    parser.add_argument("-o", "--output", type=Path, help="file to write (default: standard output)")
    args = parser.parse_args(argv)
    try:
        text = generate(args.input.read_text(encoding="utf-8"), args.kind, args.version, args.source)
    except (OSError, ValueError) as exc:
        print(f"gen_xid_catalog: {exc}", file=sys.stderr)
        return 1
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
