"""Making untrusted text safe where it leaves us: terminals, logs, pages and spreadsheets.

Every string a job could have written (log lines, job and node names, reasons) passes through
`clean` before it reaches a terminal or a page, and through `csv_cell` before a CSV file.
"""

from __future__ import annotations

import re
from typing import Any

# C0 and C1 controls (terminal escapes; CSI is U+009B), DEL, line separators and the bidi
# controls that make text read differently from what it is (U+202E and friends).
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029"
                      "\u202a-\u202e\u2066-\u2069]")


# Colour and cursor sequences (CSI, OSC) that coloured loggers and progress bars write: the text
# between them is the message.
_TERMINAL_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]{0,512}(?:\x07|\x1b\\)?")


def strip_terminal_sequences(text: str) -> str:
    """The text a terminal would show, without the escape sequences that colour or move it."""
    return _TERMINAL_SEQUENCE.sub("", text) if "\x1b" in text else text


def clean(text: str) -> str:
    """Printable text for a terminal, a page or a log: every control character and bidi override
    becomes U+FFFD (a trailing line break is dropped). Used for every string that leaves us."""
    return _CONTROL.sub("\ufffd", text.rstrip("\r\n"))


def clean_lines(text: str) -> str:
    """`clean` for each line of a multi-line text (a rendered summary or table)."""
    return "\n".join(clean(line) for line in text.split("\n"))


# A spreadsheet runs a cell that starts with one of these as a formula (OWASP: CSV injection).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def csv_cell(value: Any) -> Any:
    """A value for a CSV cell: text is cleaned of controls and a would-be formula is prefixed with
    a quote, so a spreadsheet shows it as text; numbers stay numbers."""
    if not isinstance(value, str):
        return value
    text = value.lstrip(" ") if value[:1] == " " else value
    if text.startswith(_FORMULA_START):
        return "'" + clean(value)
    return clean(value)
