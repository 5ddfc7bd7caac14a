#!/usr/bin/env python3
"""Compares what gpudoctor read on a real GPU machine with what nvidia-smi
reads on the same machine, field by field.

Inputs (all files written by scripts/device-check.sh; only --snapshot is
required, every other source adds its rows when given):

  --snapshot FILE        `gpudoctor snapshot -o FILE` (gpudoctor.snapshot/v1)
  --smi-xml FILE         `nvidia-smi -q -x`; give it twice (read before and
                         after the snapshot) so a value that moves between
                         reads is judged against both
  --smi-csv FILE         `nvidia-smi --query-gpu=<csv_fields()> --format=csv,nounits`
  --smi-remap-csv FILE   `nvidia-smi --query-remapped-rows=... --format=csv,nounits`
  --smi-nvlink FILE      `nvidia-smi nvlink -s`
  --smi-nvlink-remote F  `nvidia-smi nvlink -R`
  --topo-json FILE       `gpudoctor topo --json`
  --smi-topo FILE        `nvidia-smi topo -m`
  --python FILE          tests/device/python_check.py's JSON (rows merged in)

One row per compared field per GPU: ok, DIFF or skip, with both values.
Rules:
  - Values that move between two reads (temperature, power draw, clocks,
    utilization, fan, P-state, PCIe current generation, clock-event reasons)
    pass when ours lies within the tolerance of any nvidia-smi read (or
    between the lowest and highest read); static values must be equal.
  - nvidia-smi's "N/A" / "[Not Supported]" must meet a value we do not have
    (rc != 0 in the snapshot, or no value at all); a number on one side and
    N/A on the other is a DIFF.
  - An element this nvidia-smi does not print at all is a skip, with a note.

Exit status: 0 no DIFF, 1 at least one DIFF, 2 unusable input.
Python 3 standard library only: it runs under whatever python3 the GPU
machine has.
"""
import argparse
import csv
import io
import json
import re
import sys
import xml.etree.ElementTree as ET

SCHEMA = "gpudoctor.device-compare/v1"

# What nvidia-smi prints where it has no value (XML and CSV forms), lower-case.
NA_WORDS = {
    "", "n/a", "[n/a]", "not supported", "[not supported]", "unknown error",
    "[unknown error]", "insufficient permissions", "[insufficient permissions]",
    "requested functionality has been deprecated", "gpu requires reset",
    "[gpu requires reset]", "not available", "[not available]",
}

# NVML return codes whose meaning the report spells out.
NVML_RC = {-1: "not asked", 0: "SUCCESS", 2: "INVALID_ARGUMENT", 3: "NOT_SUPPORTED",
           4: "NO_PERMISSION", 15: "GPU_IS_LOST", 999: "UNKNOWN"}

# Clock-event ("throttle") reason bits, docs/nvidia-facts.md §4.5
# (transcribed 2026-12), by the suffix of nvidia-smi's XML element
# (clocks_event_reason_<suffix>, before driver 550 clocks_throttle_reason_<suffix>).
REASON_BITS = {
    "gpu_idle": 0x1,
    "applications_clocks_setting": 0x2,
    "sw_power_cap": 0x4,
    "hw_slowdown": 0x8,
    "sync_boost": 0x10,
    "sw_thermal_slowdown": 0x20,
    "hw_thermal_slowdown": 0x40,
    "hw_power_brake_slowdown": 0x80,
    "display_clocks_setting": 0x100,
    "display_clock_setting": 0x100,
}

COMPUTE_MODES = {"default": 0, "exclusive_thread": 1, "prohibited": 2, "exclusive_process": 3}
FABRIC_STATES = {"not supported": 0, "not started": 1, "in progress": 2, "completed": 3}
MIB = 1 << 20


class Field:
    """One compared value: where it is in our snapshot, where in nvidia-smi's
    XML (alternatives, first present wins) and CSV, how to read and judge it."""

    def __init__(self, name, ours, xml=(), csv=(), kind="int", moving=False):
        self.name = name
        self.ours = ours  # path into the snapshot's GPU object, e.g. ("health", "temperature_c")
        self.xml = xml  # paths below <gpu>, "a/b/c"
        self.csv = csv  # --query-gpu columns, any of which may be present
        self.kind = kind
        self.moving = moving


H = "health"
FIELDS = [
    # identity
    Field("name", ("name",), ["product_name"], ["name"], "str"),
    Field("uuid", ("uuid",), ["uuid"], ["uuid"], "str"),
    Field("pci_device_id", ("pci_device_id",), ["pci/pci_device_id"], ["pci.device_id"], "hex"),
    Field("minor_number", ("minor_number",), ["minor_number"], [], "int"),
    Field("memory_total_bytes", ("memory_total_bytes",), ["fb_memory_usage/total"],
          ["memory.total"], "mib"),
    Field("persistence_mode", ("persistence_mode",), ["persistence_mode"],
          ["persistence_mode"], "enabled"),
    Field("compute_mode", ("compute_mode",), ["compute_mode"], ["compute_mode"], "compute_mode"),
    Field("mig_mode_current", ("mig_mode_current",), ["mig_mode/current_mig"],
          ["mig.mode.current"], "enabled"),
    Field("mig_mode_pending", ("mig_mode_pending",), ["mig_mode/pending_mig"],
          ["mig.mode.pending"], "enabled"),
    Field("max_sm_clock_mhz", ("max_sm_clock_mhz",), ["max_clocks/sm_clock"], ["clocks.max.sm"],
          "int"),
    Field("fabric_state", ("fabric_state",), ["fabric/state"], [], "fabric"),
    # temperatures and thresholds
    Field("temperature_c", (H, "temperature_c"), ["temperature/gpu_temp"], ["temperature.gpu"],
          "temp", moving=True),
    Field("memory_temperature_c", (H, "memory_temperature_c"), ["temperature/memory_temp"],
          ["temperature.memory"], "temp", moving=True),
    Field("temp_shutdown_c", (H, "temp_shutdown_c"), ["temperature/gpu_temp_max_threshold"], [],
          "threshold"),
    Field("temp_slowdown_c", (H, "temp_slowdown_c"), ["temperature/gpu_temp_slow_threshold"], [],
          "threshold"),
    Field("temp_gpu_max_c", (H, "temp_gpu_max_c"), ["temperature/gpu_temp_max_gpu_threshold"], [],
          "threshold"),
    Field("temp_mem_max_c", (H, "temp_mem_max_c"), ["temperature/gpu_temp_max_mem_threshold"], [],
          "threshold"),
    # power
    Field("power_usage_mw", (H, "power_usage_mw"),
          ["gpu_power_readings/power_draw", "gpu_power_readings/average_power_draw",
           "gpu_power_readings/instant_power_draw", "power_readings/power_draw"],
          ["power.draw"], "power", moving=True),
    Field("power_limit_mw", (H, "power_limit_mw"),
          ["gpu_power_readings/current_power_limit", "power_readings/enforced_power_limit"],
          ["enforced.power.limit"], "power_limit"),
    Field("power_max_limit_mw", (H, "power_max_limit_mw"),
          ["gpu_power_readings/max_power_limit", "power_readings/max_power_limit"],
          ["power.max_limit"], "power_limit"),
    # clocks and state
    Field("sm_clock_mhz", (H, "sm_clock_mhz"), ["clocks/sm_clock"], ["clocks.sm"], "clock",
          moving=True),
    Field("mem_clock_mhz", (H, "mem_clock_mhz"), ["clocks/mem_clock"], ["clocks.mem"], "clock",
          moving=True),
    Field("max_mem_clock_mhz", (H, "max_mem_clock_mhz"), ["max_clocks/mem_clock"],
          ["clocks.max.mem"], "int"),
    Field("clock_event_reasons", (H, "clock_event_reasons"), [],
          ["clocks_event_reasons.active", "clocks_throttle_reasons.active"], "reasons",
          moving=True),
    Field("pstate", (H, "pstate"), ["performance_state"], ["pstate"], "pstate", moving=True),
    Field("utilization_gpu_pct", (H, "utilization_gpu_pct"), ["utilization/gpu_util"],
          ["utilization.gpu"], "pct", moving=True),
    Field("utilization_memory_pct", (H, "utilization_memory_pct"), ["utilization/memory_util"],
          ["utilization.memory"], "pct", moving=True),
    Field("fan_speed_pct", (H, "fan_speed_pct"), ["fan_speed"], ["fan.speed"], "fan", moving=True),
    # ECC
    Field("ecc_mode_current", (H, "ecc_mode_current"), ["ecc_mode/current_ecc"],
          ["ecc.mode.current"], "enabled"),
    Field("ecc_mode_pending", (H, "ecc_mode_pending"), ["ecc_mode/pending_ecc"],
          ["ecc.mode.pending"], "enabled"),
    Field("ecc_corrected_volatile", (H, "ecc_corrected_volatile"), ["@ecc:volatile:corrected"],
          ["ecc.errors.corrected.volatile.total"], "count"),
    Field("ecc_uncorrected_volatile", (H, "ecc_uncorrected_volatile"),
          ["@ecc:volatile:uncorrected"], ["ecc.errors.uncorrected.volatile.total"], "count"),
    Field("ecc_corrected_aggregate", (H, "ecc_corrected_aggregate"), ["@ecc:aggregate:corrected"],
          ["ecc.errors.corrected.aggregate.total"], "count"),
    Field("ecc_uncorrected_aggregate", (H, "ecc_uncorrected_aggregate"),
          ["@ecc:aggregate:uncorrected"], ["ecc.errors.uncorrected.aggregate.total"], "count"),
    # retired pages (before Ampere) and row remapping (Ampere and later)
    Field("retired_pages_sbe", (H, "retired_pages_sbe"),
          ["retired_pages/multiple_single_bit_retirement/retired_count"],
          ["retired_pages.single_bit_ecc.count", "retired_pages.sbe"], "count"),
    Field("retired_pages_dbe", (H, "retired_pages_dbe"),
          ["retired_pages/double_bit_retirement/retired_count"],
          ["retired_pages.double_bit.count", "retired_pages.dbe"], "count"),
    Field("retired_pages_pending", (H, "retired_pages_pending"),
          ["retired_pages/pending_retirement"], ["retired_pages.pending"], "yesno"),
    Field("remapped_rows_correctable", (H, "remapped_rows_correctable"),
          ["remapped_rows/remapped_row_corr"], ["remapped_rows.correctable"], "count"),
    Field("remapped_rows_uncorrectable", (H, "remapped_rows_uncorrectable"),
          ["remapped_rows/remapped_row_unc"], ["remapped_rows.uncorrectable"], "count"),
    Field("remap_pending", (H, "remap_pending"), ["remapped_rows/remapped_row_pending"],
          ["remapped_rows.pending"], "yesno"),
    Field("remap_failure", (H, "remap_failure"), ["remapped_rows/remapped_row_failure"],
          ["remapped_rows.failure"], "yesno"),
    # PCIe
    Field("pcie_link_gen", (H, "pcie_link_gen"),
          ["pci/pci_gpu_link_info/pcie_gen/current_link_gen"], ["pcie.link.gen.current"], "int",
          moving=True),
    Field("pcie_link_gen_max", (H, "pcie_link_gen_max"),
          ["pci/pci_gpu_link_info/pcie_gen/max_link_gen"], ["pcie.link.gen.max"], "int"),
    Field("pcie_link_width", (H, "pcie_link_width"),
          ["pci/pci_gpu_link_info/link_widths/current_link_width"], ["pcie.link.width.current"],
          "width", moving=True),
    Field("pcie_link_width_max", (H, "pcie_link_width_max"),
          ["pci/pci_gpu_link_info/link_widths/max_link_width"], ["pcie.link.width.max"], "width"),
    Field("pcie_replay_count", (H, "pcie_replay_count"), ["pci/replay_counter"], [], "count"),
]

# Columns of the --query-gpu CSV the device script asks for. The first two
# identify the GPU; clocks_event_reasons.active is clocks_throttle_reasons.active
# before driver 535 (the script retries with that name, and drops fields that
# its nvidia-smi does not know).
CSV_ID_FIELDS = ["index", "pci.bus_id", "driver_version"]


def csv_fields():
    out = list(CSV_ID_FIELDS)
    for f in FIELDS:
        if f.csv and f.csv[0] not in out and not f.csv[0].startswith("remapped_rows."):
            out.append(f.csv[0])
    return out


REMAP_CSV_FIELDS = ["gpu_bus_id", "remapped_rows.correctable", "remapped_rows.uncorrectable",
                    "remapped_rows.pending", "remapped_rows.failure"]


# ----------------------------------------------------------------------------
# small parsers

def norm_bus_id(s):
    """'00000000:18:00.0' / '0000:18:00.0' / '18:00.0' -> '0000:18:00.0'."""
    if s is None:
        return None
    s = s.strip().lower()
    m = re.match(r"^(?:([0-9a-f]+):)?([0-9a-f]{1,2}):([0-9a-f]{1,2})\.([0-7])$", s)
    if not m:
        return s
    dom = int(m.group(1) or "0", 16) & 0xFFFF
    return "%04x:%02x:%02x.%s" % (dom, int(m.group(2), 16), int(m.group(3), 16), m.group(4))


def is_na(text):
    return text is None or text.strip().lower() in NA_WORDS


def number(text):
    """'45 C' -> 45.0, '27.22 W' -> 27.22, '16x' -> 16.0, '-5 C' -> -5.0; None if not a number."""
    if text is None:
        return None
    m = re.match(r"^\s*([-+]?[0-9]+(?:\.[0-9]+)?)", text)
    return float(m.group(1)) if m else None


def strip_ansi(s):
    return re.sub(r"\x1b\[[0-9;]*m", "", s)


def cpu_set(text):
    """'0-3,8,10-11' -> {0,1,2,3,8,10,11}; None for N/A or unparsable."""
    if text is None:
        return None
    text = text.strip()
    if is_na(text):
        return None
    out = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        m = re.match(r"^(\d+)(?:-(\d+))?$", part)
        if not m:
            return None
        lo = int(m.group(1))
        hi = int(m.group(2) or lo)
        out.update(range(lo, hi + 1))
    return out


# ----------------------------------------------------------------------------
# nvidia-smi -q -x

def load_xml(path):
    """Returns {'driver_version', 'cuda_version', 'attached_gpus', 'gpus': [{bus, el}]}."""
    root = ET.parse(path).getroot()
    if root.tag != "nvidia_smi_log":
        raise ValueError("%s: not nvidia-smi -q -x output (root <%s>)" % (path, root.tag))
    gpus = []
    for el in root.findall("gpu"):
        bus = el.get("id") or el.findtext("pci/pci_bus_id")
        gpus.append({"bus": norm_bus_id(bus), "uuid": (el.findtext("uuid") or "").strip(),
                     "el": el})
    return {
        "driver_version": root.findtext("driver_version"),
        "cuda_version": root.findtext("cuda_version"),
        "attached_gpus": root.findtext("attached_gpus"),
        "gpus": gpus,
    }


def ecc_total(el, scope, kind):
    """Total ECC count of a scope ('volatile'/'aggregate') and kind
    ('corrected'/'uncorrected') from <ecc_errors>, in either layout:
      before R525: <volatile><single_bit><total>0</total></single_bit><double_bit>...
      R525 and later: <volatile><sram_correctable>0</sram_correctable>
                      <sram_uncorrectable_parity>, <sram_uncorrectable_secded> (R550+)
                      or <sram_uncorrectable>, <dram_correctable>, <dram_uncorrectable>
    Returns (text, note): a number as text, 'N/A', or None when the element is absent."""
    sc = el.find("ecc_errors/" + scope)
    if sc is None:
        return None, ""
    old = sc.find(("single_bit" if kind == "corrected" else "double_bit") + "/total")
    if old is not None:
        return (old.text or "").strip(), ""
    if kind == "corrected":
        names = ["sram_correctable", "dram_correctable"]
    else:
        names = ["sram_uncorrectable", "sram_uncorrectable_parity", "sram_uncorrectable_secded",
                 "dram_uncorrectable"]
    parts = [(n, (sc.findtext(n) or "").strip()) for n in names if sc.find(n) is not None]
    if not parts:
        return None, ""
    if any(is_na(v) for _, v in parts):
        return "N/A", ""
    total = sum(int(number(v) or 0) for _, v in parts)
    return str(total), "sum of " + "+".join(n for n, _ in parts)


def xml_text(el, path):
    """Text of the first present path; None when no path is present.
    '@ecc:scope:kind' paths are computed by ecc_total."""
    if path.startswith("@ecc:"):
        _, scope, kind = path.split(":")
        return ecc_total(el, scope, kind)
    node = el.find(path)
    if node is None:
        # <remapped_rows>N/A</remapped_rows>: the whole block is not supported.
        head = path.split("/")[0]
        parent = el.find(head)
        if parent is not None and len(parent) == 0 and is_na(parent.text):
            return "N/A", head + " is N/A"
        return None, ""
    return (node.text or "").strip(), ""


def xml_reasons(el):
    """(bitmask, known_mask, element name) from <clocks_event_reasons> or the older
    <clocks_throttle_reasons>; None when neither is there."""
    for block, prefix in (("clocks_event_reasons", "clocks_event_reason_"),
                          ("clocks_throttle_reasons", "clocks_throttle_reason_")):
        node = el.find(block)
        if node is None:
            continue
        mask = known = 0
        for child in node:
            suffix = child.tag[len(prefix):] if child.tag.startswith(prefix) else child.tag
            bit = REASON_BITS.get(suffix)
            if bit is None:
                continue
            text = (child.text or "").strip().lower()
            if text == "active":
                mask |= bit
                known |= bit
            elif text == "not active":
                known |= bit
        return mask, known, block
    return None


# ----------------------------------------------------------------------------
# --query-gpu / --query-remapped-rows CSV

def load_csv(path):
    """{bus id: {column: text}} from `--format=csv[,nounits]` (header kept)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    rows = list(csv.reader(io.StringIO(text), skipinitialspace=True))
    rows = [r for r in rows if r and any(c.strip() for c in r)]
    if not rows:
        return {}
    header = [re.sub(r"\s*\[.*\]$", "", h.strip()) for h in rows[0]]
    bus_col = next((c for c in ("pci.bus_id", "gpu_bus_id") if c in header), None)
    out = {}
    for r in rows[1:]:
        rec = {h: (r[i].strip() if i < len(r) else "") for i, h in enumerate(header)}
        key = norm_bus_id(rec.get(bus_col)) if bus_col else str(len(out))
        out[key] = rec
    return out


# ----------------------------------------------------------------------------
# judging one value

def ours_entry(gpu, path):
    """(value, rc) from the snapshot; (None, None) when the key is missing."""
    node = gpu
    for p in path:
        if not isinstance(node, dict) or p not in node:
            return None, None
        node = node[p]
    if isinstance(node, dict) and "rc" in node:
        return node.get("value"), node.get("rc")
    return node, 0


def smi_to_ours_units(kind, text):
    """nvidia-smi text -> a value in the snapshot's units, or None if unparsable."""
    t = text.strip()
    low = t.lower()
    if kind == "str":
        return t
    if kind == "hex":
        try:
            return int(t, 16)
        except ValueError:
            return None
    if kind == "enabled":
        return {"enabled": 1, "disabled": 0, "on": 1, "off": 0}.get(low)
    if kind == "yesno":
        return {"yes": 1, "no": 0, "1": 1, "0": 0}.get(low)
    if kind == "compute_mode":
        return COMPUTE_MODES.get(low.replace(" ", "_"))
    if kind == "fabric":
        return FABRIC_STATES.get(low)
    if kind == "pstate":
        m = re.match(r"^p(\d+)$", low)
        return int(m.group(1)) if m else None
    if kind == "reasons":
        try:
            return int(t, 16)
        except ValueError:
            return None
    n = number(t)
    if n is None:
        return None
    if kind in ("power", "power_limit"):
        return n * 1000.0  # W -> mW
    if kind == "mib":
        return n * MIB
    return n


def tolerance(kind, smi_value):
    """Allowed |ours - smi| for one read, in the snapshot's units."""
    if kind == "temp":
        return 3.0  # °C: moves between two reads
    if kind == "power":
        return max(0.20 * abs(smi_value), 5000.0)  # ±20 %, at least 5 W
    if kind == "clock":
        return max(0.15 * abs(smi_value), 30.0)  # ±15 %, at least 30 MHz
    if kind == "pct":
        return 15.0  # percentage points
    if kind == "fan":
        return 10.0
    if kind == "power_limit":
        return 10.0  # mW: nvidia-smi prints W with two decimals
    if kind == "mib":
        return MIB  # nvidia-smi prints whole MiB
    return 0.0


def tolerance_text(kind, tol):
    if kind in ("power", "power_limit"):
        return "±%.2f W" % (tol / 1000.0)
    if kind == "mib":
        return "±1 MiB"
    if kind == "temp":
        return "±%g °C" % tol
    if kind == "clock":
        return "±%d MHz" % round(tol)
    if kind in ("pct", "fan"):
        return "±%g points" % tol
    return "±%g" % tol


def fmt_ours(kind, value, rc):
    if rc is None:
        return "(absent)"
    if rc != 0:
        return "rc=%s %s" % (rc, NVML_RC.get(rc, ""))
    if kind == "reasons" and isinstance(value, int):
        return "0x%x" % value
    if kind == "hex" and isinstance(value, int):
        return "0x%08X" % value
    return str(value)


def judge(field, value, rc, smi_texts, source):
    """One row for a value of ours against the nvidia-smi reads (texts, None
    for absent elements). Returns a dict row without the gpu key."""
    kind = field.kind
    row = {"field": field.name, "source": source, "ours": fmt_ours(kind, value, rc)}
    present = [t for t in smi_texts if t is not None]
    if not present:
        row.update(status="skip", smi="(absent)",
                   note="this nvidia-smi does not print it")
        return row
    row["smi"] = " | ".join(dict.fromkeys(present))
    ours_has = rc == 0 and value is not None
    smi_values = [smi_to_ours_units(kind, t) for t in present if not is_na(t)]
    smi_na = [t for t in present if is_na(t)]
    if not ours_has:
        if smi_values and not smi_na:
            row.update(status="DIFF", note="nvidia-smi has a value, ours does not")
        else:
            note = "both unavailable"
            if rc not in (3, -1, None):
                note += " (ours rc=%s, not NOT_SUPPORTED)" % rc
            row.update(status="ok", note=note)
        return row
    if not smi_values:
        # fabric state: NVML reports "not supported" as a state (0) with rc 0.
        if kind == "fabric" and value == 0:
            row.update(status="ok", note="both: not supported")
            return row
        row.update(status="DIFF", note="ours has a value, nvidia-smi says N/A")
        return row
    if any(v is None for v in smi_values):
        row.update(status="DIFF", note="cannot read nvidia-smi's value")
        return row
    if kind == "str":
        ok = str(value).strip() in smi_values
        row.update(status="ok" if ok else "DIFF", note="")
        return row
    if kind == "reasons":
        masks = [v & 0x1FF for v in smi_values]  # the nine bits nvidia-smi names
        ours = int(value) & 0x1FF
        if ours in masks:
            row.update(status="ok", note="bits 0x1ff compared")
        elif any(idle_only(ours, m) for m in masks):
            row.update(status="ok", note=IDLE_NOTE)
        else:
            row.update(status="DIFF", note="bits 0x1ff compared: ours " + reason_names(ours) +
                       ", smi " + reason_names(masks[0]))
        return row
    v = float(value)
    tol = max(tolerance(kind, s) for s in smi_values)
    lo, hi = min(smi_values), max(smi_values)
    ok = (lo - tol) <= v <= (hi + tol) if field.moving else any(abs(v - s) <= tol
                                                               for s in smi_values)
    note = ("tolerance " + tolerance_text(kind, tol)) if tol else ""
    if field.moving and len(smi_values) > 1 and lo != hi:
        note = (note + "; " if note else "") + "nvidia-smi moved %g..%g" % (lo, hi)
    row.update(status="ok" if ok else "DIFF", note=note)
    return row


# gpu_idle (0x1) follows the load from one moment to the next: the H200 record
# read ours 0x1 and nvidia-smi's 0x0 a few hundred ms apart on an idle GPU
# (recorded/h200-vm-580.159.04/device-check/compare.txt). A difference in that
# bit alone is not a disagreement; any other bit still is.
IDLE_NOTE = "differs only in gpu_idle (0x1), which changes between two reads"


def idle_only(ours, theirs):
    return (ours ^ theirs) == REASON_BITS["gpu_idle"]


def reason_names(mask):
    names = [n for n, b in REASON_BITS.items() if mask & b and n != "display_clock_setting"]
    return "+".join(names) or "none"


# ----------------------------------------------------------------------------
# per-GPU comparison

def compare_gpus(snapshot, xmls, csvs, remap):
    rows = []
    nvml = snapshot.get("nvml") or {}
    gpus = nvml.get("gpus") or []
    ours_by_bus = {}
    for g in gpus:
        bus, rc = ours_entry(g, ("pci_bus_id",))
        key = norm_bus_id(bus) if rc == 0 and bus else "index%s" % g.get("index")
        ours_by_bus[key] = g
    first = xmls[0]

    # machine-wide
    def top(field, ours_path, smi_text, kind):
        value, rc = ours_entry(nvml, ours_path)
        f = Field(field, ours_path, kind=kind)
        r = judge(f, value, rc, [smi_text], "xml")
        r["gpu"] = "machine"
        rows.append(r)

    top("driver_version", ("driver_version",), first["driver_version"], "str")
    cuda = first["cuda_version"]
    value, rc = ours_entry(nvml, ("cuda_driver_version",))
    r = {"gpu": "machine", "field": "cuda_driver_version", "source": "xml",
         "ours": fmt_ours("int", value, rc), "smi": cuda if cuda is not None else "(absent)"}
    if cuda is None:
        r.update(status="skip", note="this nvidia-smi does not print it")
    elif rc == 0 and isinstance(value, int):
        want = "%d.%d" % (value // 1000, (value % 1000) // 10)
        r.update(status="ok" if cuda.strip() == want else "DIFF", note="ours as %s" % want)
    else:
        r.update(status="DIFF", note="ours has no CUDA driver version")
    rows.append(r)
    top("device_count", ("device_count",), first["attached_gpus"], "int")

    xml_by_bus = [{g["bus"]: g for g in x["gpus"]} for x in xmls]
    smi_buses = [g["bus"] for g in first["gpus"]]
    for bus in smi_buses + [b for b in ours_by_bus if b not in smi_buses]:
        ours = ours_by_bus.get(bus)
        reads = [m.get(bus) for m in xml_by_bus]
        if ours is None:
            # match by UUID when the bus ids are written differently
            uuid = reads[0]["uuid"] if reads[0] else ""
            ours = next((g for g in gpus if ours_entry(g, ("uuid",))[0] == uuid and uuid), None)
        if ours is None or reads[0] is None:
            rows.append({"gpu": bus, "field": "present", "source": "xml", "status": "DIFF",
                         "ours": "yes" if ours is not None else "no",
                         "smi": "yes" if reads[0] is not None else "no",
                         "note": "the GPU is on one side only"})
            continue
        csv_rec = csvs.get(bus) if csvs else None
        remap_rec = remap.get(bus) if remap else None
        for f in FIELDS:
            value, rc = ours_entry(ours, f.ours)
            if f.kind == "reasons":
                rows.append(dict(judge_reasons(f, value, rc, reads, csv_rec), gpu=bus))
                continue
            texts, notes, source = [], [], "xml"
            for rd in reads:
                if rd is None:
                    continue
                text, note = None, ""
                for p in f.xml:
                    text, note = xml_text(rd["el"], p)
                    if text is not None:
                        break
                texts.append(text)
                if note:
                    notes.append(note)
            rec = remap_rec if f.name.startswith("remap") else csv_rec
            if rec is not None:
                col = next((c for c in f.csv if c in rec), None)
                if col is not None and (all(t is None for t in texts) or
                                        f.kind == "count" and f.name.startswith("ecc_")):
                    # The CSV total is NVML's own total; the XML splits it by memory type.
                    texts = [rec[col]] + ([t for t in texts if t is not None]
                                          if f.moving else [])
                    source = "csv"
                    notes = []
            r = judge(f, value, rc, texts, source)
            if f.kind == "threshold" and r["status"] == "skip":
                el = reads[0]["el"]
                if el.find("temperature/gpu_temp_slow_tlimit_threshold") is not None:
                    r["note"] = ("this nvidia-smi prints thresholds relative to T.Limit "
                                 "(gpu_temp_*_tlimit_threshold), not in °C")
            if notes and r["status"] != "skip":
                r["note"] = "; ".join(x for x in [r.get("note", "")] + sorted(set(notes)) if x)
            r["gpu"] = bus
            rows.append(r)
    return rows


def judge_reasons(f, value, rc, reads, csv_rec):
    """Clock-event reasons: the CSV's hex mask when there is one (exactly
    NVML's), else the XML's Active/Not Active elements, over every read."""
    row = {"field": f.name, "ours": fmt_ours("reasons", value, rc)}
    if csv_rec is not None:
        col = next((c for c in f.csv if c in csv_rec), None)
        if col is not None:
            return dict(judge(f, value, rc, [csv_rec[col]], "csv"), ours=row["ours"])
    decoded = [xml_reasons(rd["el"]) for rd in reads if rd is not None]
    decoded = [d for d in decoded if d is not None]
    row["source"] = "xml"
    if not decoded:
        row.update(status="skip", smi="(absent)", note="this nvidia-smi does not print it")
        return row
    row["smi"] = " | ".join(dict.fromkeys("0x%x (%s)" % (m, reason_names(m))
                                          for m, _, _ in decoded))
    if rc != 0 or value is None:
        any_known = any(k for _, k, _ in decoded)
        row.update(status="DIFF" if any_known else "ok",
                   note="ours has no value" if any_known else "both unavailable")
        return row
    note = "<%s>, bits nvidia-smi names" % decoded[0][2]
    if any((int(value) & k) == m for m, k, _ in decoded):
        row.update(status="ok", note=note)
    elif any(idle_only(int(value) & k, m) for m, k, _ in decoded):
        row.update(status="ok", note=note + "; " + IDLE_NOTE)
    else:
        row.update(status="DIFF", note=note)
    return row


# ----------------------------------------------------------------------------
# NVLink

def parse_nvlink(text):
    """`nvidia-smi nvlink -s` / `-R` -> {gpu index: {'uuid', 'links': {n: text}}}.

    GPU 0: NVIDIA H100 PCIe (UUID: GPU-6968dfc2-d444-d92c-c36b-6abe53445cb9)
             Link 0: 26.562 GB/s
             Link 4: <inactive>
             Link 7: Remote Device 00000000:C2:00.0: Link 9      (with -R)
    """
    out = {}
    cur = None
    for line in text.splitlines():
        m = re.match(r"^GPU (\d+):\s*(.*?)(?:\s*\(UUID:\s*(\S+?)\))?\s*$", line)
        if m:
            cur = {"uuid": m.group(3) or "", "links": {}}
            out[int(m.group(1))] = cur
            continue
        m = re.match(r"^\s+Link (\d+):\s*(.*)$", line)
        if m and cur is not None:
            cur["links"][int(m.group(1))] = m.group(2).strip()
    return out


def link_active(text):
    if "inactive" in text.lower():
        return False
    n = number(text)
    return n is not None and n > 0


def compare_nvlink(snapshot, status_text, remote_text):
    rows = []
    status = parse_nvlink(status_text) if status_text is not None else {}
    remote = parse_nvlink(remote_text) if remote_text is not None else {}
    for g in (snapshot.get("nvml") or {}).get("gpus") or []:
        bus = norm_bus_id(ours_entry(g, ("pci_bus_id",))[0] or "") or "index%s" % g.get("index")
        links, rc = ours_entry(g, ("health", "nvlinks"))
        ours_active = sorted(l["link"] for l in (links or []) if rc == 0 and
                             (l.get("active") or {}).get("rc") == 0 and
                             (l.get("active") or {}).get("value") == 1)
        smi = status.get(g.get("index"))
        row = {"gpu": bus, "field": "nvlink_active", "source": "nvlink -s",
               "ours": ",".join(map(str, ours_active)) or ("none" if rc == 0 else
                                                            fmt_ours("int", None, rc))}
        smi_active = sorted(n for n, t in (smi or {}).get("links", {}).items() if link_active(t))
        row["smi"] = ",".join(map(str, smi_active)) or "none"
        if smi is None and status_text is None:
            row.update(status="skip", note="no nvidia-smi nvlink -s output")
        else:
            row.update(status="ok" if ours_active == smi_active else "DIFF",
                       note="active link numbers")
        rows.append(row)
        rsmi = remote.get(g.get("index"))
        if rsmi is None or rc != 0:
            continue
        compared, differ = 0, []
        for l in links or []:
            n = l["link"]
            if n not in smi_active or n not in rsmi["links"]:
                continue
            m = re.search(r"Remote Device\s+([0-9A-Fa-f:.]+)", rsmi["links"][n])
            theirs = norm_bus_id(m.group(1).rstrip(":")) if m else rsmi["links"][n]
            rid, rrc = ours_entry(l, ("remote_bus_id",))
            mine = norm_bus_id(rid) if rrc == 0 and rid else fmt_ours("str", None, rrc)
            compared += 1
            if mine != theirs:
                differ.append("link %d: ours %s, smi %s" % (n, mine, theirs))
        remotes = sorted({norm_bus_id(ours_entry(l, ("remote_bus_id",))[0] or "")
                          for l in links or [] if l["link"] in smi_active})
        rows.append({"gpu": bus, "field": "nvlink_remote", "source": "nvlink -R",
                     "ours": ",".join(r for r in remotes if r) or "none",
                     "smi": "%d active links" % compared,
                     "status": "DIFF" if differ or not compared else "ok",
                     "note": "; ".join(differ) if differ else
                     ("remote bus id of every active link" if compared else
                      "no active link to compare")})
    return rows


# ----------------------------------------------------------------------------
# topology

def parse_smi_topo(text):
    """`nvidia-smi topo -m` -> {'gpus': [names], 'matrix': {gpu: {gpu: cell}},
    'cpu': {gpu: text}, 'numa': {gpu: text}}. NIC rows and columns are dropped.

    Real shape (tab separated; the header may carry ANSI underline codes, and
    rows carry one more empty cell before "GPU NUMA ID" than the header has):
    \tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
    GPU0\t X \tNV18\tPXB\t0-55,112-167\t0\t\tN/A
    Older copies use runs of spaces instead of tabs.
    """
    lines = [strip_ansi(l.rstrip("\n")) for l in text.splitlines()]
    header = None
    for i, l in enumerate(lines):
        tokens = l.split()
        # The header starts with GPU0 (after the empty label cell); GPU0's own
        # row starts with GPU0 too, but its next cell is X.
        if len(tokens) >= 2 and tokens[0] == "GPU0" and tokens[1] != "X":
            header = i
            break
    if header is None:
        raise ValueError("no header line with GPU0 in nvidia-smi topo -m output")

    def split(l):
        if "\t" in l:
            return [c.strip() for c in l.split("\t")]
        return [c.strip() for c in re.split(r"\s{2,}", l.strip())]

    cols = split(lines[header])
    if cols and cols[0] != "":
        cols = [""] + cols  # the row label column has no header text
    result = {"gpus": [], "matrix": {}, "cpu": {}, "numa": {}}
    gpu_cols = {i: c for i, c in enumerate(cols) if re.match(r"^GPU\d+$", c)}
    cpu_col = cols.index("CPU Affinity") if "CPU Affinity" in cols else None
    numa_col = cols.index("NUMA Affinity") if "NUMA Affinity" in cols else None
    for l in lines[header + 1:]:
        if not l.strip():
            if result["gpus"]:
                break
            continue
        cells = split(l)
        name = cells[0]
        if not re.match(r"^GPU\d+$", name):
            continue
        result["gpus"].append(name)
        result["matrix"][name] = {c: cells[i] if i < len(cells) else ""
                                  for i, c in gpu_cols.items()}
        if cpu_col is not None:
            result["cpu"][name] = cells[cpu_col] if cpu_col < len(cells) else ""
        if numa_col is not None:
            result["numa"][name] = cells[numa_col] if numa_col < len(cells) else ""
    return result


def compare_topo(topo, smi_text, first_xml):
    rows = []
    smi = parse_smi_topo(smi_text)
    ours = {}
    for i, g in enumerate(topo.get("gpus") or []):
        ours["GPU%d" % g.get("nvml_index", g.get("nvidia_smi_index", i))] = (i, g)
    paths = topo.get("paths") or []
    rows.append({"gpu": "topo", "field": "gpu_count", "source": "topo -m",
                 "ours": str(len(ours)), "smi": str(len(smi["gpus"])),
                 "status": "ok" if len(ours) == len(smi["gpus"]) else "DIFF", "note": ""})
    # nvidia-smi's index i is the i-th <gpu> of -q -x: the bus ids must agree.
    if first_xml is not None:
        for name in smi["gpus"]:
            idx = int(name[3:])
            if name not in ours or idx >= len(first_xml["gpus"]):
                continue
            mine = norm_bus_id(ours[name][1].get("bus_id"))
            theirs = first_xml["gpus"][idx]["bus"]
            rows.append({"gpu": "topo", "field": name + " bus_id", "source": "topo -m + xml",
                         "ours": mine, "smi": theirs,
                         "status": "ok" if mine == theirs else "DIFF",
                         "note": "nvidia-smi index %d" % idx})
    for a in smi["gpus"]:
        for b in smi["gpus"]:
            if a > b and a != b:
                continue
            theirs = smi["matrix"][a].get(b, "")
            if a not in ours or b not in ours:
                mine = "(no such GPU)"
            else:
                ia, ib = ours[a][0], ours[b][0]
                try:
                    mine = paths[ia][ib]
                except (IndexError, TypeError):
                    mine = "(no path)"
            rows.append({"gpu": "topo", "field": "path %s-%s" % (a, b), "source": "topo -m",
                         "ours": mine, "smi": theirs,
                         "status": "ok" if mine == theirs else "DIFF",
                         "note": "ours unknown" if mine == "?" else ""})
    for a in smi["gpus"]:
        if a not in ours:
            continue
        g = ours[a][1]
        if a in smi["cpu"]:
            mine, theirs = cpu_set(g.get("cpus")), cpu_set(smi["cpu"][a])
            rows.append({"gpu": "topo", "field": a + " cpu_affinity", "source": "topo -m",
                         "ours": g.get("cpus") or "(none)", "smi": smi["cpu"][a] or "(empty)",
                         "status": "ok" if mine == theirs else "DIFF",
                         "note": "compared as CPU sets"})
        if a in smi["numa"]:
            t = smi["numa"][a]
            theirs = int(t) if re.match(r"^\d+$", t or "") else None
            mine = g.get("numa_node")
            ok, note = mine == theirs, ""
            if mine is None and theirs == 0:
                # sysfs numa_node -1 (no NUMA node: a VM, or a one-node
                # machine whose firmware gives none), which gpudoctor reports
                # as null and nvidia-smi prints as 0 (the H200 VM record).
                ok, note = True, "no NUMA node (VM): sysfs numa_node -1, nvidia-smi prints 0"
            rows.append({"gpu": "topo", "field": a + " numa_affinity", "source": "topo -m",
                         "ours": "null" if mine is None else str(mine), "smi": t or "(empty)",
                         "status": "ok" if ok else "DIFF", "note": note})
    return rows


# ----------------------------------------------------------------------------
# report

def render(rows):
    out = []
    width = max([len(r["field"]) for r in rows] + [10])
    groups = {}
    for r in rows:
        groups.setdefault(r["gpu"], []).append(r)
    for gpu, group in groups.items():
        out.append("== %s ==" % gpu)
        for r in group:
            out.append(render_row(r, width))
    counts = count(rows)
    out.append("compare: %d ok, %d DIFF, %d skip" % (counts["ok"], counts["DIFF"], counts["skip"]))
    return "\n".join(out) + "\n"


def render_row(r, width):
    note = r.get("note") or ""
    return "%-4s  %-*s  ours=%-24s smi=%-24s [%s]%s" % (
        r["status"], width, r["field"], r.get("ours", ""), r.get("smi", ""),
        r.get("source", ""), ("  " + note) if note else "")


def count(rows):
    c = {"ok": 0, "DIFF": 0, "skip": 0}
    for r in rows:
        c[r["status"]] = c.get(r["status"], 0) + 1
    return c


def read_text(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--snapshot")
    ap.add_argument("--smi-xml", action="append", default=[])
    ap.add_argument("--smi-csv")
    ap.add_argument("--smi-remap-csv")
    ap.add_argument("--smi-nvlink")
    ap.add_argument("--smi-nvlink-remote")
    ap.add_argument("--topo-json")
    ap.add_argument("--smi-topo")
    ap.add_argument("--python", action="append", default=[])
    ap.add_argument("--report", help="write the readable report here too")
    ap.add_argument("--summary", help="write the JSON summary here")
    ap.add_argument("--csv-fields", action="store_true",
                    help="print the --query-gpu field list and exit")
    ap.add_argument("--remap-csv-fields", action="store_true",
                    help="print the --query-remapped-rows field list and exit")
    args = ap.parse_args(argv)
    if args.csv_fields:
        print(",".join(csv_fields()))
        return 0
    if args.remap_csv_fields:
        print(",".join(REMAP_CSV_FIELDS))
        return 0
    if not args.snapshot:
        ap.error("--snapshot is required")

    rows, problems = [], []
    try:
        with open(args.snapshot, encoding="utf-8") as f:
            snapshot = json.load(f)
    except (OSError, ValueError) as e:
        print("compare: cannot read the snapshot: %s" % e, file=sys.stderr)
        return 2
    xmls = []
    for p in args.smi_xml:
        try:
            xmls.append(load_xml(p))
        except (OSError, ValueError, ET.ParseError) as e:
            problems.append("nvidia-smi XML %s: %s" % (p, e))

    def optional(path, loader, what):
        if not path:
            return None
        try:
            return loader(path)
        except (OSError, ValueError, csv.Error) as e:
            problems.append("%s %s: %s" % (what, path, e))
            return None

    csvs = optional(args.smi_csv, load_csv, "--query-gpu CSV")
    remap = optional(args.smi_remap_csv, load_csv, "--query-remapped-rows CSV")
    if xmls:
        rows += compare_gpus(snapshot, xmls, csvs, remap)
    nvl = optional(args.smi_nvlink, read_text, "nvlink -s")
    nvr = optional(args.smi_nvlink_remote, read_text, "nvlink -R")
    if nvl is not None:
        rows += compare_nvlink(snapshot, nvl, nvr)
    topo = optional(args.topo_json, lambda p: json.loads(read_text(p)), "topo JSON")
    smi_topo = optional(args.smi_topo, read_text, "topo -m")
    if topo is not None and smi_topo is not None:
        try:
            rows += compare_topo(topo, smi_topo, xmls[0] if xmls else None)
        except ValueError as e:
            problems.append("topo: %s" % e)
    for path in args.python:
        py = optional(path, lambda p: json.loads(read_text(p)), "python check")
        if py is None:
            continue
        label = "python %s" % ((py.get("info") or {}).get("executable") or path)
        for r in py.get("rows", []):
            rows.append(dict({"source": "python", "note": ""}, **r, gpu=label))
    for p in problems:
        rows.append({"gpu": "inputs", "field": "input", "status": "DIFF", "ours": "",
                     "smi": "", "source": "", "note": p})
    if not rows:
        print("compare: nothing to compare (no nvidia-smi input)", file=sys.stderr)
        return 2

    text = render(rows)
    sys.stdout.write(text)
    counts = count(rows)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            f.write(text)
    if args.summary:
        summary = {"schema": SCHEMA, "ok": counts["ok"], "diff": counts["DIFF"],
                   "skip": counts["skip"],
                   "inputs": {k: v for k, v in vars(args).items()
                              if k not in ("report", "summary", "csv_fields",
                                           "remap_csv_fields") and v},
                   "rows": rows}
        with open(args.summary, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)
            f.write("\n")
    return 1 if counts["DIFF"] else 0


if __name__ == "__main__":
    sys.exit(main())
