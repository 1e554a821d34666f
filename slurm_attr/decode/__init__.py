"""Decoders turn the fields of one matched line into a classification, using the rule tables.

Each decoder is `decode(fields, ctx) -> Classification | None`; None drops the line (for example an
OOM kill in another job's cgroup). A decoder reads fields and names an outcome key
(`decode/outcomes.py`); role, sub_domain and priority come from the rules (decoders.yaml, the
classify.yaml tables, the Xid catalog and overlay), never from code. Decoders never raise on odd
input: a field that does not parse falls back to the pattern's own defaults.
"""

from slurm_attr.decode.base import Classification, DecodeContext, classify_from_table
from slurm_attr.decode.registry import DECODERS

__all__ = ["DECODERS", "Classification", "DecodeContext", "classify_from_table"]
