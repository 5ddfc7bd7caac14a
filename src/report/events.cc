#include "report/events.h"

#include "catalog/nvrm.h"
#include "catalog/sxid.h"
#include "catalog/xid.h"
#include "checks/kernel_events.h"
#include "checks/util.h"
#include "facts/query.h"
#include "kernlog/scanner.h"
#include "util/bytes.h"
#include "util/time.h"

namespace gd {

namespace {

// PCIe AER severities (Linux drivers/pci/pcie/aer.c).
const char* aer_meaning(const std::string& type) {
  if (type == "uncorrected-fatal")
    return "fatal uncorrected PCIe error: the link is down or unusable";
  if (type == "uncorrected-nonfatal") return "uncorrected PCIe error; the link still works";
  return "corrected PCIe error (link quality: many of them mean a poor riser, slot or retimer)";
}

// An SXid: its block (ctrl_dev_nvswitch.h) and, where the Fabric Manager
// User Guide lists the code, its meaning, class and action (catalog/sxid.h).
// The class the driver printed on the line goes first: it is what happened.
EventMeaning describe_sxid(const KernelEvent& e) {
  EventMeaning m;
  m.fault = "hardware";
  std::string_view block = sxid_block(e.code, e.message);
  const SxidInfo* info = find_sxid(e.code);
  const bool fatal =
      e.type == "fatal" ||
      (info && (info->guide == SxidClass::kFatal || info->guide == SxidClass::kAlwaysFatal));
  std::string printed = e.type == "unstated" ? "NVSwitch" : e.type + " NVSwitch";
  m.meaning = printed + " error" + (block.empty() ? "" : " in the " + std::string(block));
  if (info) {
    m.meaning += ": " + std::string(info->meaning);
    if (info->guide != SxidClass::kUnlisted) {
      m.meaning +=
          std::string(" (the Fabric Manager User Guide: ") + sxid_class_name(info->guide) + ")";
    }
    m.advice = info->advice;
  } else {
    m.advice = fatal ? "stop the jobs on the GPUs behind this NVSwitch and reset the GPUs and "
                       "NVSwitches (nvidia-smi -r with the fabric manager stopped); reboot if "
                       "it persists"
                     : "not in the Fabric Manager User Guide's tables: watch whether fatal "
                       "SXids or Xids follow on this NVSwitch";
  }
  m.action = fatal ? "drain and reset" : "";
  return m;
}

}  // namespace

EventMeaning describe_event(const KernelEvent& e) {
  EventMeaning m;
  if (e.kind == "xid") {
    if (const XidInfo* x = find_xid(e.code)) {
      m.meaning = x->meaning;
      m.fault = xid_fault_name(x->fault);
      m.action = xid_action_name(x->action);
      m.advice = x->advice;
    } else {
      m.meaning = "an Xid this catalog does not know";
      m.advice = "look it up in NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors)";
    }
  } else if (e.kind == "sxid") {
    m = describe_sxid(e);
  } else if (e.kind == "aer") {
    m.meaning = aer_meaning(e.type);
    m.fault = "hardware";
    m.advice = e.type == "corrected" ? "watch the count; reseat the GPU or riser if it keeps rising"
                                     : "drain the node and inspect the slot, riser and GPU";
  } else {
    for (const LogPattern& p : log_patterns()) {
      if (e.kind == p.kind && e.type == p.type) {
        m.meaning = p.meaning;
        break;
      }
    }
  }
  return m;
}

nlohmann::ordered_json event_to_json(const Snapshot& s, const KernelEvent& e) {
  nlohmann::ordered_json j;
  j["kind"] = e.kind;
  j["type"] = e.type;
  if (e.kind == "xid" || e.kind == "sxid") j["code"] = e.code;
  j["gpu"] = e.gpu;
  if (!e.device.empty()) j["device"] = e.device;
  if (e.link >= 0) j["link"] = e.link;
  GpuNaming id = gpu_naming(s, e.gpu);
  if (id.index >= 0) j["gpu_index"] = id.index;
  if (!id.name.empty()) j["gpu_name"] = id.name;
  if (!id.uuid.empty()) j["gpu_uuid"] = id.uuid;
  j["count"] = e.count;
  // ISO 8601 where the log gives a wall time (null where it does not), the
  // log's own stamp beside it.
  auto iso = [](std::optional<int64_t> unix_s) {
    std::string t = unix_s ? iso_time_s(*unix_s) : "";
    return t.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(t);
  };
  j["first"] = iso(e.first_unix_s);
  j["first_raw"] = e.first;
  j["last"] = iso(e.last_unix_s);
  j["last_raw"] = e.last;
  if (e.age_s) j[s.kernel_log.ages_to_log_end ? "before_log_end_s" : "age_s"] = *e.age_s;
  if (e.pid > 0) j["pid"] = e.pid;
  if (!e.process.empty()) j["process"] = e.process;
  j["message"] = e.message;
  EventMeaning m = describe_event(e);
  j["meaning"] = m.meaning;
  j["fault"] = m.fault;
  j["action"] = m.action;
  j["advice"] = m.advice;
  j["line"] = e.line;
  return j;
}

std::string undated_note(const EventsWindow& w) {
  if (!w.since_unix_s || w.undated == 0) return "";
  const bool one = w.undated == 1;
  return "--since does not apply to " + std::to_string(w.undated) +
         (one ? " event line that carries" : " event lines that carry") +
         " no date (dmesg's seconds since boot, or no time at all): " +
         (one ? "it is" : "they are") + " shown";
}

std::string render_events_json(const Snapshot& s, const EventsWindow& w) {
  nlohmann::ordered_json j;
  j["schema"] = "gpudoctor.logs/v1";
  j["source"] = s.kernel_log.source;
  j["unreadable"] = s.kernel_log.unreadable;
  j["bytes"] = s.kernel_log.bytes;
  j["unfolded"] = s.kernel_log.unfolded;
  // Lines of 4 MiB or more passed over (kernlog/scanner.h); only when there were any.
  if (const FieldGap* g = field_gap(s, kKernelLogEventsField)) j["skipped"] = g->reason;
  // Only with --since: its start, and the occurrences it could not place in
  // time (kept in events).
  if (w.since_unix_s) {
    j["since"] = iso_time_s(*w.since_unix_s);
    j["since_undated"] = w.undated;
  }
  j["events"] = nlohmann::ordered_json::array();
  for (const KernelEvent& e : s.kernel_log.events) j["events"].push_back(event_to_json(s, e));
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string render_event_text(const Snapshot& s, const KernelEvent& e) {
  std::string head = e.kind == "xid"    ? "Xid " + std::to_string(e.code)
                     : e.kind == "sxid" ? "SXid " + std::to_string(e.code)
                                        : e.kind + (e.type.empty() ? "" : " " + e.type);
  std::string out = head;
  if (e.kind == "sxid") {
    // An NVSwitch, not a GPU: its name and address, and the port.
    out += "  " + (e.device.empty() ? std::string("NVSwitch") : e.device) + " " + e.gpu;
    if (e.link >= 0) out += " link " + std::to_string(e.link);
  } else if (!e.gpu.empty()) {
    out += "  " + gpu_title(s, e.gpu);
  }
  GpuNaming id = gpu_naming(s, e.gpu);
  if (!id.uuid.empty()) out += " " + id.uuid;
  out += "\n  ";
  out += occurrence_text(e, s.kernel_log.ages_to_log_end);
  if (!e.process.empty() || e.pid > 0) {
    out += ", process " + (e.process.empty() ? std::string("?") : e.process) +
           (e.pid > 0 ? " (pid " + std::to_string(e.pid) + ")" : "");
  }
  out += "\n";
  if (!e.message.empty()) out += "  " + e.message + "\n";
  EventMeaning m = describe_event(e);
  if (!m.meaning.empty()) {
    out += "  means: " + m.meaning;
    if (!m.fault.empty()) out += " [" + m.fault + "]";
    out += "\n";
  }
  if (!m.advice.empty()) out += "  do: " + m.advice + "\n";
  return out;
}

std::string render_events_text(const Snapshot& s, const EventsWindow& w) {
  const KernelLogInfo& k = s.kernel_log;
  std::string out;
  if (!k.unreadable.empty()) out += "note: " + k.unreadable + "\n";
  out += "Kernel log: " + (k.source.empty() ? std::string("(none readable)") : k.source) + ", " +
         format_bytes(k.bytes) + ", " + std::to_string(k.events.size()) + " NVIDIA event(s)\n";
  if (k.unfolded > 0) out += "note: " + unfolded_text(k) + "\n";
  if (const FieldGap* g = field_gap(s, kKernelLogEventsField)) out += "note: " + g->reason + "\n";
  if (std::string n = undated_note(w); !n.empty()) out += "note: " + n + "\n";
  for (const KernelEvent& e : k.events) out += "\n" + render_event_text(s, e);
  return out;
}

}  // namespace gd
