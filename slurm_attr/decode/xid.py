"""NVIDIA Xid decoding: the catalog entry, plus the register words of Xid 74 and Xid 144-150."""

from __future__ import annotations

import re

from slurm_attr.decode.base import Classification, DecodeContext, adjust, classified, normalize_pci

_PCI_BEFORE = re.compile(r"The NVIDIA GPU (?P<pci>[0-9a-fA-F:.]+)")
_CAUSED_BY = re.compile(r"caused by previous Xid (?P<prev>\d+)")
_XID74 = re.compile(r"link (?P<link>\d+)\s*\((?P<words>0x[0-9a-fA-F]+(?:,\s*0x[0-9a-fA-F]+)*)\)")
_NVLINK5 = re.compile(
    r"(?P<unit>[A-Z][A-Z0-9_/]+)\s+(?P<severity>Fatal|Nonfatal|Non-fatal)\s+(?P<xc>XC\d)\s+"
    r"(?P<injected>i\d)\s+Link\s+(?P<link>-?\d+)\s*\((?P<words>0x[0-9a-fA-F]+(?:\s+0x[0-9a-fA-F]+)*)\)"
)
_RECOVERY = re.compile(r"recovery action changed from .*? to (?P<action>0x\w+ \([^)]*\))")
_NEEDS_SERVICE = re.compile(r"Reset|Reboot|Drain", re.I)
_PID = re.compile(r"pid=(?P<pid>'?<?[\w]+>?'?)")
_ENGINE = re.compile(r"ENGINE (?P<engine>[A-Z0-9_]+)")
# MMU faults from these engines come from the driver or firmware, not from the job's kernels.
_DRIVER_ENGINES = ("HOST", "BAR", "PHYSICAL", "GSP", "SEC2", "PMU", "FLA", "IFB", "HSHUB")

# Xid 74 first-register bits (NVIDIA's NVLink error workflow, counting from bit 0 = LSB).
_XID74_REG0 = (
    ((21, 22), "marginal link signal integrity: check the NVLink connection, reseat, run field diags", True),
    ((4, 5), "likely NVLink ECC/parity hardware error", True),
    ((8, 9, 12, 16, 17, 24, 28), "possible NVLink hardware problem: check mechanical connections", True),
    ((1, 20), "sympathetic: the link went down because of another error (follow the other Xid)", False),
    ((27, 29), "NVLink error to report to NVIDIA if it repeats", True),
)
_SI_ACTIONS = ("INVESTIGATE_LINK_SI", "INVESTIGATE_LINK_SI_AND_CABLES")


def decode_xid(fields: dict[str, str], ctx: DecodeContext) -> Classification:
    if not fields.get("pci"):
        for line in reversed(ctx.before):
            m = _PCI_BEFORE.search(line)
            if m:
                fields["pci"] = normalize_pci(m["pci"])
                break
    xid = int(fields.get("xid") or 0)
    entry = ctx.ruleset.xid_catalog.get(xid)
    detail = (fields.get("detail") or "").strip()
    actions = ctx.ruleset.policy.get("xid_actions", {})
    if entry is None:
        return classified(
            ctx, "xid.not_in_catalog", code=f"XID {xid}",
            summary=f"Xid {xid} (not in the catalog) on GPU {fields.get('pci', '?')}: {detail}",
            action=actions.get("CONTACT_SUPPORT"))
    cls = Classification(
        role=entry["role"], sub_domain=entry["sub_domain"], priority=entry["priority"],
        code=f"XID {xid}",
        summary=(f"Xid {xid} {entry['mnemonic'].split(' /')[0]} ({entry['description']}) on GPU "
                 f"{fields.get('pci', '?')}" + (f": {detail}" if detail else "")),
        action=actions.get(entry["immediate"]) or actions.get("CONTACT_SUPPORT"),
        fields={"mnemonic": entry["mnemonic"], "immediate": entry["immediate"],
                "investigatory": entry["investigatory"]},
    )
    caused = _CAUSED_BY.search(detail)
    if caused:
        _caused_by(int(caused["prev"]), cls, ctx)
    elif entry["immediate"] == "RESTART_APP" and not entry["origin"].lstrip().upper().startswith("HW") \
            and adjust(cls, ctx, "xid.restart_app"):
        # The catalog's resolution is to restart the application: a channel the driver tore down,
        # not a GPU that needs service.
        cls.summary += (" [catalog: restart the application; the GPU needs no service unless the Xid "
                        "repeats on it]")
    if xid == 31:
        _decode_xid31(fields, detail, cls, ctx)
    if xid == 74:
        _decode_xid74(detail, cls, ctx)
    elif 144 <= xid <= 150:
        _decode_nvlink5(xid, detail, cls, ctx)
    elif xid == 154:
        m = _RECOVERY.search(detail)
        action = m["action"] if m else detail
        if m:
            cls.fields["recovery_action"] = m["action"]
        if _NEEDS_SERVICE.search(action or ""):
            # The driver says the GPU now needs a reset (or the node a reboot): an earlier fault left
            # it unusable. That earlier Xid, when logged, outranks this line; alone, this is the fault.
            adjust(cls, ctx, "xid154.needs_service")
            cls.summary += " [the GPU needs service before the next job]"
    return cls


def _caused_by(prev: int, cls: Classification, ctx: DecodeContext) -> None:
    """An Xid whose text says a previous Xid caused it (45 cleanup, 154) belongs to that fault."""
    cls.fields["caused_by_xid"] = str(prev)
    earlier = ctx.ruleset.xid_catalog.get(prev)
    if earlier is None or earlier["role"] != "cause":
        adjust(cls, ctx, "xid.after_non_cause")
        return
    adjust(cls, ctx, "xid.blamed_on_earlier", earlier)
    cls.summary += (f" [cleanup after Xid {prev} ({earlier['mnemonic'].split(' /')[0]}): that fault "
                    "is the cause]")
    cls.action = ctx.ruleset.policy.get("xid_actions", {}).get(earlier["immediate"]) or cls.action


def _decode_xid31(fields: dict[str, str], detail: str, cls: Classification, ctx: DecodeContext) -> None:
    """Xid 31 (MMU fault): from the job's own process it is the job's bad address; from no process,
    or from a driver/firmware engine, it is the driver's or the GPU's."""
    pid = fields.get("pid") or ((m := _PID.search(detail)) and m["pid"]) or ""
    engine = ((m := _ENGINE.search(detail)) and m["engine"]) or ""
    if pid:
        cls.fields["fault_pid"] = pid.strip("'")
    if engine:
        cls.fields["engine"] = engine
    if not pid or "unknown" in pid or engine.startswith(_DRIVER_ENGINES):
        adjust(cls, ctx, "xid31.driver_fault")
        cls.summary += " [no job process owns the fault: driver or GPU]"


def _bits(word: int) -> set[int]:
    return {b for b in range(32) if word >> b & 1}


def _decode_xid74(detail: str, cls: Classification, ctx: DecodeContext) -> None:
    m = _XID74.search(detail)
    if not m:
        return
    words = [int(w, 16) for w in re.split(r",\s*", m["words"])]
    cls.fields["link"] = m["link"]
    cls.fields["words"] = " ".join(f"0x{w:x}" for w in words)
    set_bits = _bits(words[0])
    for bits, meaning, is_root in _XID74_REG0:
        if set_bits & set(bits):
            cls.fields["decoded"] = meaning
            if not is_root:
                adjust(cls, ctx, "xid74.sympathetic")
            break
    if "decoded" in cls.fields:
        cls.summary += f" [decoded: {cls.fields['decoded']}]"


def nvlink5_rule(rules: list[dict[str, str]], xid: int, intrinfo: int, status: int
                 ) -> dict[str, str] | None:
    """The NVLink5 catalog row whose intrinfo bit pattern (V1 or V2) and errorStatus match."""
    bits = f"{intrinfo:032b}"
    for row in rules:
        if int(row["xid"]) != xid or int(row["error_status"], 16) != status:
            continue
        for pattern in (row["intrinfo_v1"], row["intrinfo_v2"]):
            if len(pattern) == 32 and all(p in "-" or p == b for p, b in zip(pattern, bits, strict=True)):
                return row
    return None


def _decode_nvlink5(xid: int, detail: str, cls: Classification, ctx: DecodeContext) -> None:
    m = _NVLINK5.search(detail)
    if not m:
        return
    words = [int(w, 16) for w in m["words"].split()]
    intrinfo, status = words[0], (words[1] if len(words) > 1 else 0)
    cls.fields.update(unit=m["unit"], link=m["link"], severity=m["severity"],
                      subcode=f"{(intrinfo >> 20) & 0x3F:06b}", words=m["words"])
    if m["injected"] != "i0":
        cls.fields["injected"] = "yes"
        adjust(cls, ctx, "nvlink5.injected")
    row = nvlink5_rule(ctx.ruleset.nvlink5_catalog, xid, intrinfo, status)
    if row is None:
        cls.fields["decoded"] = "no catalog rule matches these words"
        return
    cls.fields.update(catalog_unit=row["unit"], catalog_immediate=row["immediate"],
                      catalog_investigatory=row["investigatory"], catalog_severity=row["severity"],
                      catalog_hw_sw=row["hw_sw"])
    investigate = row["investigatory"]
    if investigate.startswith(_SI_ACTIONS) or row["unit"] == "NETIR_BER_EVENT":
        meaning = "NVLink signal integrity problem (link, cartridge or cable)"
    elif "PEER_DEVICE" in investigate:
        meaning = "the device at the other end of the link is the source of the fault"
    elif "SW_USER" in investigate or "SW/USER" in investigate:
        meaning = "NVLink fault triggered by software or user configuration"
    elif "SYMPATHETIC" in investigate:
        meaning = "sympathetic NVLink event: follow the Xid that caused it"
        adjust(cls, ctx, "nvlink5.sympathetic")
    elif investigate == "INVESTIGATE_HOST":
        meaning = "local fatal error raised by the host"
    else:
        meaning = f"{row['severity']} {row['unit']} error ({investigate or row['immediate']})"
    if cls.role == "cause":
        # Honour the line's own severity and the catalog's resolution: a non-fatal event, or one
        # whose resolution is to ignore it or to evaluate a later Xid 154, is not a fault by itself.
        if row["immediate"] == "IGNORE":
            adjust(cls, ctx, "nvlink5.ignore")
        elif m["severity"] != "Fatal" or "Non-fatal" in row["severity"] or "154" in row["immediate"]:
            adjust(cls, ctx, "nvlink5.nonfatal")
        else:
            adjust(cls, ctx, "nvlink5.fatal")
    cls.fields["decoded"] = meaning
    cls.summary += f" [decoded: {meaning}]"
